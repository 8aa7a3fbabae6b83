/*
 * lt_file_columns.c — the columns of an open data file as the per-version
 * readers (lt_reader20.c, lt_reader21.c) use them: column metadata unpacked
 * on first use, byte ranges, the DataFile's column map, and the reader of a
 * field absent from the file (nulls).
 */
#include "file/lt_file.h"

#include "util/lt_alloc.h"
#include "proto/lt_file2.pb-c.h"

lt_code
lt_file_column(lt_file *f, uint32_t i, Lt__Pb__ColumnMetadata **out, lt_error *err)
{
	*out = NULL;
	if (f->version == LT_FILE_LEGACY || i >= f->num_columns)
		return lt_corrupt(err, "%s: column %u does not exist (the file has %u)", f->path, i, f->num_columns);
	if (!f->columns[i])
	{
		lt_allocator saved = lt_alloc_swap(f->owner);	/* kept with the file */

		f->columns[i] = lt__pb__column_metadata__unpack(lt_protobuf_allocator(), f->cmo_len[i],
														f->tail + (f->cmo_pos[i] - f->tail_start));
		lt_alloc_restore(&saved);
		if (!f->columns[i])
			return lt_corrupt(err, "%s: metadata of column %u does not parse", f->path, i);
	}
	*out = f->columns[i];
	return LT_OK;
}

lt_code
lt_file_read_ranges(lt_file *f, int n, const lt_range *ranges, uint8_t *const *dsts, lt_error *err)
{
	return lt_rfile_read_ranges(f->rf, n, ranges, dsts, err);
}

lt_code
lt_file_read_ranges_gap(lt_file *f, int n, const lt_range *ranges, uint8_t *const *dsts, uint64_t gap,
						lt_error *err)
{
	return lt_rfile_read_ranges_gap(f->rf, n, ranges, dsts, gap, err);
}

int32_t
lt_column_map_find(const lt_column_map *m, int32_t field_id)
{
	int			i;

	for (i = 0; i < m->n; i++)
		if (m->field_ids[i] == field_id)
			return m->columns ? m->columns[i] : -1;
	return -1;
}

/* --- a field absent from a file reads as nulls -------------------------- */

static lt_code
null_read(lt_field_reader *r, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	return lt_array_append_nulls(dst, (int64_t) n, err);
}

static void
null_free(lt_field_reader *r)
{
	lt_free(r);
}

static const lt_field_reader_ops null_ops = {null_read, null_free};

lt_code
lt_null_reader_open(lt_file *f, const lt_field *field, lt_field_reader **out, lt_error *err)
{
	lt_field_reader *r = lt_calloc(1, sizeof(lt_field_reader));

	if (!r)
		return lt_nomem(err);
	r->ops = &null_ops;
	r->file = f;
	r->field = field;
	r->num_rows = f ? f->num_rows : 0;
	*out = r;
	return LT_OK;
}
