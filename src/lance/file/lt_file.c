/*
 * lt_file.c — the data-file container: footer, offset tables, descriptor;
 * and the dispatch to per-version field readers (lt_file_columns.c holds
 * what those readers call back: column metadata, column maps, ranges).
 *
 * 2.x layout (all little endian), from the end of the file:
 *   40-byte footer: u64 column_meta_start, u64 cmo_table_start,
 *                   u64 gbo_table_start, u32 num_global_buffers,
 *                   u32 num_columns, u16 major, u16 minor, "LANC"
 *   CMO table: num_columns x (u64 pos, u64 len)   column metadata protobufs
 *   GBO table: num_global_buffers x (u64 pos, u64 len); buffer 0 = descriptor
 * Legacy v1 files end in i64 metadata_pos, u16 0, u16 2, "LANC".
 */
#include "file/lt_file.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_file2.pb-c.h"

#define FOOTER_LEN 40
#define MAX_TAIL ((uint64_t) 1 << 30)
#define MAX_COLUMNS (1u << 24)

static lt_code
read_footer(lt_file *f, lt_error *err)
{
	uint8_t		foot[FOOTER_LEN];
	uint64_t	n = f->size < FOOTER_LEN ? f->size : FOOTER_LEN;

	if (f->size < 16)
		return lt_corrupt(err, "%s: file of %llu bytes is too short to be a Lance file", f->path,
						  (unsigned long long) f->size);
	LT_TRY(lt_rfile_read(f->rf, f->size - n, n, foot + (FOOTER_LEN - n), err));
	if (memcmp(foot + FOOTER_LEN - 4, "LANC", 4) != 0)
		return lt_corrupt(err, "%s: no Lance magic at the end of the file", f->path);
	f->major = lt_le16(foot + FOOTER_LEN - 8);
	f->minor = lt_le16(foot + FOOTER_LEN - 6);
	/* legacy files: footer 0.2, and 0.1 from lance before 0.9 (the same layout; Lance reads both alike) */
	if (f->major == 0 && (f->minor == 2 || f->minor == 1))
	{
		f->version = LT_FILE_LEGACY;
		return LT_OK;
	}
	if (f->major == 0 && f->minor == 3)
		f->version = LT_FILE_V2_0;
	else if (f->major == 2 && f->minor == 0)
		f->version = LT_FILE_V2_0;
	else if (f->major == 2 && f->minor == 1)
		f->version = LT_FILE_V2_1;
	else if (f->major == 2 && f->minor == 2)
		f->version = LT_FILE_V2_2;
	else if (f->major == 2 && f->minor == 3)
		f->version = LT_FILE_V2_3;
	else
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: unsupported Lance file version %u.%u", f->path,
							f->major, f->minor);
	if (f->size < FOOTER_LEN)
		return lt_corrupt(err, "%s: file too short for a 2.x footer", f->path);
	f->column_meta_start = lt_le64(foot);
	f->cmo_table_start = lt_le64(foot + 8);
	f->gbo_table_start = lt_le64(foot + 16);
	f->num_global_buffers = lt_le32(foot + 24);
	f->num_columns = lt_le32(foot + 28);
	return LT_OK;
}

/* Read an offset table of n (pos, len) pairs at `at`, checking each lies in [lo, hi). */
static lt_code
read_table(lt_file *f, uint64_t at, uint32_t n, uint64_t lo, uint64_t hi, const char *what,
		   uint64_t **pos, uint64_t **len, lt_error *err)
{
	uint64_t	bytes = (uint64_t) n * 16;
	uint8_t    *buf;
	uint64_t	end;
	uint32_t	i;
	lt_code		rc = LT_OK;

	if (!lt_add_ok(at, bytes, &end) || end > f->size - FOOTER_LEN)
		return lt_corrupt(err, "%s: %s table at offset %llu with %u entries runs past the footer", f->path,
						  what, (unsigned long long) at, n);
	buf = lt_malloc(bytes ? bytes : 1);
	*pos = lt_calloc(n ? n : 1, sizeof(uint64_t));
	*len = lt_calloc(n ? n : 1, sizeof(uint64_t));
	if (!buf || !*pos || !*len)
	{
		lt_free(buf);
		return lt_nomem(err);
	}
	rc = lt_rfile_read(f->rf, at, bytes, buf, err);
	for (i = 0; rc == LT_OK && i < n; i++)
	{
		uint64_t	p = lt_le64(buf + i * 16);
		uint64_t	l = lt_le64(buf + i * 16 + 8);

		if (p < lo || !lt_add_ok(p, l, &end) || end > hi)
			rc = lt_corrupt(err, "%s: %s %u at offset %llu (%llu bytes) lies outside [%llu, %llu)", f->path,
							what, i, (unsigned long long) p, (unsigned long long) l,
							(unsigned long long) lo, (unsigned long long) hi);
		(*pos)[i] = p;
		(*len)[i] = l;
	}
	lt_free(buf);
	return rc;
}

static lt_code
open_v2(lt_file *f, lt_error *err)
{
	uint64_t	meta_end = f->size - FOOTER_LEN;
	Lt__Pb__FileDescriptor *fd;

	if (f->num_columns > MAX_COLUMNS)
		return lt_corrupt(err, "%s: %u columns", f->path, f->num_columns);
	if (f->num_global_buffers == 0)
		return lt_corrupt(err, "%s: no global buffers (the file descriptor is missing)", f->path);
	if (f->num_global_buffers > MAX_COLUMNS)
		return lt_corrupt(err, "%s: %u global buffers", f->path, f->num_global_buffers);
	if (f->column_meta_start > f->cmo_table_start || f->cmo_table_start > meta_end ||
		f->gbo_table_start > meta_end)
		return lt_corrupt(err, "%s: footer offsets out of order (column metadata %llu, tables %llu/%llu, size %llu)",
						  f->path, (unsigned long long) f->column_meta_start,
						  (unsigned long long) f->cmo_table_start, (unsigned long long) f->gbo_table_start,
						  (unsigned long long) f->size);
	LT_TRY(read_table(f, f->gbo_table_start, f->num_global_buffers, 0, meta_end, "global buffer",
					  &f->gbo_pos, &f->gbo_len, err));
	LT_TRY(read_table(f, f->cmo_table_start, f->num_columns, f->column_meta_start, f->cmo_table_start,
					  "column metadata", &f->cmo_pos, &f->cmo_len, err));

	/* one read for the descriptor and all column metadata */
	f->tail_start = f->gbo_pos[0] < f->column_meta_start ? f->gbo_pos[0] : f->column_meta_start;
	if (f->size - f->tail_start > MAX_TAIL)
		return lt_corrupt(err, "%s: metadata of %llu bytes is too large", f->path,
						  (unsigned long long) (f->size - f->tail_start));
	f->tail = lt_malloc(f->size - f->tail_start);
	if (!f->tail)
		return lt_nomem(err);
	LT_TRY(lt_rfile_read(f->rf, f->tail_start, f->size - f->tail_start, f->tail, err));

	fd = lt__pb__file_descriptor__unpack(lt_protobuf_allocator(), f->gbo_len[0],
										 f->tail + (f->gbo_pos[0] - f->tail_start));
	if (!fd)
		return lt_corrupt(err, "%s: the file descriptor (global buffer 0) does not parse", f->path);
	f->descriptor = fd;
	f->num_rows = fd->has_length ? fd->length : 0;
	if (fd->schema && fd->schema->n_fields > 0)
	{
		/*
		 * Fields without an id (-1) are left out: Lance writes a blob v2 column's descriptor fields so, at
		 * the top level, and reads that column by the manifest's schema, as lt_field_storage does.
		 */
		Lt__Pb__Field **kept = lt_calloc(fd->schema->n_fields, sizeof(Lt__Pb__Field *));
		size_t		n = 0;
		lt_code		rc;

		if (!kept)
			return lt_nomem(err);
		for (size_t i = 0; i < fd->schema->n_fields; i++)
			if (!(fd->schema->fields[i]->has_id && fd->schema->fields[i]->id == -1))
				kept[n++] = fd->schema->fields[i];
		rc = n > 0 ? lt_schema_from_pb(kept, n, &f->file_schema, err) : LT_OK;
		lt_free(kept);
		if (rc != LT_OK)
			return lt_error_prefix(err, "%s: file schema", f->path);
	}
	f->columns = lt_calloc(f->num_columns ? f->num_columns : 1, sizeof(Lt__Pb__ColumnMetadata *));
	if (!f->columns)
		return lt_nomem(err);
	return LT_OK;
}

lt_code
lt_file_open(lt_store *store, const char *path, lt_file **out, lt_error *err)
{
	lt_file    *f = lt_calloc(1, sizeof(lt_file));
	lt_code		rc;

	*out = NULL;
	if (!f)
		return lt_nomem(err);
	f->path = lt_strdup(path);
	if (!f->path)
	{
		lt_free(f);
		return lt_nomem(err);
	}
	rc = lt_store_open_file(store, path, &f->rf, err);
	if (rc == LT_OK)
	{
		f->size = f->rf->size;
		rc = read_footer(f, err);
	}
	if (rc == LT_OK)
		rc = f->version == LT_FILE_LEGACY ? lt_legacy_file_init(f, err) : open_v2(f, err);
	if (rc != LT_OK)
	{
		lt_file_close(f);
		return rc;
	}
	*out = f;
	return LT_OK;
}

void
lt_file_close(lt_file *f)
{
	uint32_t	i;

	if (!f)
		return;
	if (f->legacy)
		lt_legacy_file_free(f);
	lt_reader21_file_free(f);
	if (f->columns)
		for (i = 0; i < f->num_columns; i++)
			if (f->columns[i])
				lt__pb__column_metadata__free_unpacked(f->columns[i], lt_protobuf_allocator());
	if (f->descriptor)
		lt__pb__file_descriptor__free_unpacked(f->descriptor, lt_protobuf_allocator());
	lt_schema_free(f->file_schema);
	lt_free(f->columns);
	lt_free(f->tail);
	lt_free(f->gbo_pos);
	lt_free(f->gbo_len);
	lt_free(f->cmo_pos);
	lt_free(f->cmo_len);
	lt_rfile_close(f->rf);
	lt_free(f->path);
	lt_free(f);
}

/* --- dispatch ------------------------------------------------------------ */

lt_code
lt_field_reader_open(lt_file *f, const lt_field *field, const lt_column_map *map,
					 lt_field_reader **out, lt_error *err)
{
	*out = NULL;
	field = lt_field_storage(field);	/* a blob column holds its descriptors */
	switch (f->version)
	{
		case LT_FILE_LEGACY:
			return lt_reader_legacy_open(f, field, map, out, err);
		case LT_FILE_V2_0:
			return lt_reader20_open(f, field, map, out, err);
		case LT_FILE_V2_1:
		case LT_FILE_V2_2:
		case LT_FILE_V2_3:
			return lt_reader21_open(f, field, map, out, err);
	}
	return lt_error_set(err, LT_EUNSUPPORTED, "%s: unknown file version", f->path);
}

lt_code
lt_field_reader_read(lt_field_reader *r, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	uint64_t	end;

	if (!lt_add_ok(start, n, &end) || end > r->num_rows)
		return lt_error_set(err, LT_EINVALID, "%s: rows [%llu, %llu) requested from field \"%s\" of %llu rows",
							r->file ? r->file->path : "?", (unsigned long long) start,
							(unsigned long long) end, r->field->name, (unsigned long long) r->num_rows);
	if (dst->room && !r->room_ok)
		return lt_error_set(err, LT_EINVALID, "%s: field \"%s\" is not read with header room",
							r->file ? r->file->path : "?", r->field->name);
	if (n == 0)
		return LT_OK;
	return r->ops->read(r, start, n, dst, err);
}

lt_code
lt_field_reader_will_read(lt_field_reader *r, const lt_row_run *runs, size_t n, lt_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (runs[i].start > r->num_rows || runs[i].len > r->num_rows - runs[i].start)
			return lt_error_set(err, LT_EINVALID, "%s: rows [%llu, +%llu) announced for field \"%s\" of %llu rows",
								r->file ? r->file->path : "?", (unsigned long long) runs[i].start,
								(unsigned long long) runs[i].len, r->field->name, (unsigned long long) r->num_rows);
	return r->ops->will_read && n > 0 ? r->ops->will_read(r, runs, n, err) : LT_OK;
}

void
lt_field_reader_free(lt_field_reader *r)
{
	if (r)
		r->ops->free(r);
}
