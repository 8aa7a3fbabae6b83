/*
 * lt_index_write.c — building btree, bitmap, label_list and zonemap index
 * segments (lt_index_write.h has the layouts and the memory rule).
 *
 * btree, bitmap and label_list share one pipeline: the live (value, id) pairs
 * of the column (of the list elements for label_list) are gathered into one
 * array, sorted by value (NULL first, then ascending; ties by id), and written
 * out: as pages for a btree, as one RowAddrTreeMap per run of equal values
 * for the bitmap kinds.  Zone maps are computed while streaming.
 *
 * When the pairs outgrow max_memory the sort is external, as PostgreSQL's own:
 * each memory's worth is sorted as above and spilled as a run to a temporary
 * file (lt_spill.h: the host's, BufFile in the FDW), and the writers read the
 * runs merged.  Ties between runs go to the earlier run, so the merged order is
 * the in-memory sort's exactly and the files are the same bytes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* qsort_r */
#endif
#include "index/lt_index_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_sort.h"
#include "util/lt_random.h"
#include "util/lt_spill.h"
#include "table/lt_dataset.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "file/lt_writer.h"

#define DEFAULT_MAX_MEMORY ((uint64_t) 1 << 30)
/* bitmap keys written per batch (the writer pages them itself) */
#define KEYS_PER_WRITE 4096
/* external merge: the memory one run being merged takes (its read buffer and decoded batch) */
#define RUN_READ_BUFFER (32 * 1024)
#define RUN_BATCH_ROWS 256
#define RUN_BATCH_BYTES (16 * 1024)
#define MERGE_RUN_MEMORY (2 * RUN_READ_BUFFER + RUN_BATCH_BYTES)
#define MAX_FAN_IN 512

/* ---- kinds and types ---------------------------------------------------- */

lt_index_kind
lt_index_kind_from_name(const char *name)
{
	static const lt_index_kind kinds[] = {LT_INDEX_BTREE, LT_INDEX_BITMAP, LT_INDEX_LABEL_LIST, LT_INDEX_ZONEMAP};

	for (size_t i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(name, lt_index_kind_name(kinds[i])) == 0)
			return kinds[i];
	return LT_INDEX_UNKNOWN;
}

static bool
is_float_type(lt_type_id t)
{
	return t == LT_TYPE_FLOAT16 || t == LT_TYPE_FLOAT32 || t == LT_TYPE_FLOAT64;
}

/* Key types this writer orders (and the readers compare). */
static bool
orderable(const lt_field *f)
{
	if (f->dictionary)
		return false;
	switch (f->type)
	{
		case LT_TYPE_BOOL:
		case LT_TYPE_INT8: case LT_TYPE_INT16: case LT_TYPE_INT32: case LT_TYPE_INT64:
		case LT_TYPE_UINT8: case LT_TYPE_UINT16: case LT_TYPE_UINT32: case LT_TYPE_UINT64:
		case LT_TYPE_FLOAT16: case LT_TYPE_FLOAT32: case LT_TYPE_FLOAT64:
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_UTF8: case LT_TYPE_LARGE_UTF8: case LT_TYPE_BINARY: case LT_TYPE_LARGE_BINARY:
		case LT_TYPE_FIXED_BINARY:
		case LT_TYPE_DATE32: case LT_TYPE_DATE64:
		case LT_TYPE_TIME32: case LT_TYPE_TIME64:
		case LT_TYPE_TIMESTAMP:
		case LT_TYPE_DURATION:
			return true;
		default:
			return false;
	}
}

const char *
lt_index_kind_unfit(const lt_dataset *ds, lt_index_kind kind, const lt_field *column)
{
	bool		is_list = column->type == LT_TYPE_LIST || column->type == LT_TYPE_LARGE_LIST;

	if (column->parent_id != -1)
		return "only top-level columns can be indexed";
	switch (kind)
	{
		case LT_INDEX_LABEL_LIST:
			if (!is_list)
				return "a label_list index needs a list column";
			if (column->n_children != 1 || !orderable(column->children[0]))
				return "the list's element type cannot be indexed";
			if (is_float_type(column->children[0]->type))
				return "a label_list index over floating-point elements is not built (LanceDB refuses it, and Lance 8 confuses NaN keys of either sign in it)";
			return NULL;
		case LT_INDEX_ZONEMAP:
			if (ds->stable_row_ids)
				return "zone maps of datasets with stable row ids are not supported";
			/* fall through */
		case LT_INDEX_BTREE:
		case LT_INDEX_BITMAP:
			if (is_list)
				return "a list column takes a label_list index";
			if (column->dictionary)
				return "dictionary-encoded columns cannot be indexed yet";
			if (!orderable(column))
				return "the column's type cannot be indexed";
			if (kind == LT_INDEX_BITMAP && is_float_type(column->type))
				return "a bitmap index on a floating-point column is not built (LanceDB refuses it, and Lance 8 confuses NaN keys of either sign in it): use btree or zonemap";
			return NULL;
		default:
			return "unknown index kind";
	}
}

/* ---- values ------------------------------------------------------------- */

/* IEEE total order as an unsigned key: -NaN < -inf < ... < -0 < 0 < ... < inf < NaN. */
static inline uint64_t
total_key(uint64_t bits, int width)
{
	uint64_t	sign = (uint64_t) 1 << (width - 1);
	uint64_t	mask = width == 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << width) - 1);

	return (bits & sign) ? (~bits & mask) : (bits | sign);
}

static int
cmp_bytes(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	if (c)
		return c;
	return la < lb ? -1 : la > lb ? 1 : 0;
}

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y) ? 1 : 0)

/* A value's sort key and its position among the gathered pairs. */
typedef struct keyed
{
	uint64_t	key;
	int64_t		idx;
} keyed;

/* Slot i of a against slot j of b (same type): NULL first, then ascending. */
static int
cmp_slots(const lt_array *a, int64_t i, const lt_array *b, int64_t j)
{
	bool		va = lt_array_is_valid(a, i),
				vb = lt_array_is_valid(b, j);
	const uint8_t *pa,
			   *pb;

	if (!va || !vb)
		return va == vb ? 0 : va ? 1 : -1;
	/* var-width types have no values buffer */
	pa = a->values ? a->values + i * a->field->byte_width : NULL;
	pb = b->values ? b->values + j * b->field->byte_width : NULL;
	switch (a->field->type)
	{
		case LT_TYPE_BOOL:
		case LT_TYPE_UINT8:
			return CMP(*pa, *pb);
		case LT_TYPE_INT8:
			return CMP(*(const int8_t *) pa, *(const int8_t *) pb);
		case LT_TYPE_INT16:
			return CMP(*(const int16_t *) pa, *(const int16_t *) pb);
		case LT_TYPE_UINT16:
			return CMP(*(const uint16_t *) pa, *(const uint16_t *) pb);
		case LT_TYPE_INT32:
		case LT_TYPE_DATE32:
		case LT_TYPE_TIME32:
			return CMP(*(const int32_t *) pa, *(const int32_t *) pb);
		case LT_TYPE_UINT32:
			return CMP(*(const uint32_t *) pa, *(const uint32_t *) pb);
		case LT_TYPE_UINT64:
			return CMP(*(const uint64_t *) pa, *(const uint64_t *) pb);
		case LT_TYPE_FLOAT16:
			return CMP(total_key(*(const uint16_t *) pa, 16), total_key(*(const uint16_t *) pb, 16));
		case LT_TYPE_FLOAT32:
			return CMP(total_key(*(const uint32_t *) pa, 32), total_key(*(const uint32_t *) pb, 32));
		case LT_TYPE_FLOAT64:
			return CMP(total_key(*(const uint64_t *) pa, 64), total_key(*(const uint64_t *) pb, 64));
		case LT_TYPE_DECIMAL128:
			{
				/* little-endian two's complement: the high word signed, the low word unsigned */
				int64_t		ha, hb;
				uint64_t	la, lb;

				memcpy(&la, pa, 8);
				memcpy(&ha, pa + 8, 8);
				memcpy(&lb, pb, 8);
				memcpy(&hb, pb + 8, 8);
				return ha != hb ? CMP(ha, hb) : CMP(la, lb);
			}
		case LT_TYPE_FIXED_BINARY:
			return memcmp(pa, pb, (size_t) a->field->byte_width);
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			return cmp_bytes(a->data + a->offsets[i], (size_t) (a->offsets[i + 1] - a->offsets[i]),
							 b->data + b->offsets[j], (size_t) (b->offsets[j + 1] - b->offsets[j]));
		default:
			/* int64, date64, time64, timestamp, duration */
			return CMP(*(const int64_t *) pa, *(const int64_t *) pb);
	}
}

static bool
is_nan(const lt_array *a, int64_t i)
{
	const uint8_t *p;

	if (!lt_array_is_valid(a, i))
		return false;
	p = a->values + i * a->field->byte_width;
	switch (a->field->type)
	{
		case LT_TYPE_FLOAT16:
			return (*(const uint16_t *) p & 0x7fff) > 0x7c00;
		case LT_TYPE_FLOAT32:
			return (*(const uint32_t *) p & 0x7fffffffu) > 0x7f800000u;
		case LT_TYPE_FLOAT64:
			return (*(const uint64_t *) p & ~((uint64_t) 1 << 63)) > ((uint64_t) 0x7ff << 52);
		default:
			return false;
	}
}

static uint64_t
slot_bytes(const lt_array *a)
{
	uint64_t	n = (uint64_t) a->cap * (uint64_t) (a->field->byte_width > 0 ? a->field->byte_width : 0);

	if (a->offsets)
		n += (uint64_t) a->cap * 8 + (uint64_t) a->data_cap;
	if (a->validity)
		n += (uint64_t) a->cap;
	return n;
}

static lt_code
push_uint(lt_array *a, uint64_t v, lt_error *err)
{
	LT_TRY(lt_array_reserve(a, 1, err));
	if (a->field->byte_width == 4)
		((uint32_t *) a->values)[a->length] = (uint32_t) v;
	else
		((uint64_t *) a->values)[a->length] = v;
	a->length++;
	return LT_OK;
}

static lt_code
push_binary(lt_array *a, const uint8_t *p, size_t len, lt_error *err)
{
	LT_TRY(lt_array_reserve(a, 1, err));
	LT_TRY(lt_array_reserve_data(a, (int64_t) len, err));
	if (len)
		memcpy(a->data + a->data_len, p, len);
	a->data_len += (int64_t) len;
	a->offsets[a->length + 1] = a->data_len;
	a->length++;
	return LT_OK;
}

/* ---- index file fields ---------------------------------------------------- */

/* A column of an index file of the key type (borrowing src's type strings). */
static void
key_field(lt_field *dst, const lt_field *src, const char *name, int32_t id)
{
	*dst = *src;
	dst->name = (char *) name;
	dst->id = id;
	dst->parent_id = -1;
	dst->nullable = true;
	dst->dictionary = false;
	dst->packed = false;
	dst->legacy_encoding = 0;
	dst->n_children = 0;
	dst->children = NULL;
	dst->parent = NULL;
}

/* ---- the build state -------------------------------------------------------- */

/* A spilled run being merged: its next pairs decoded into a batch. */
typedef struct run_reader
{
	lt_spill_file *f;
	int			order;			/* ties go to the lower: the earlier run */
	lt_array   *vals;
	uint64_t	ids[RUN_BATCH_ROWS];
	int64_t		n, pos;
} run_reader;

typedef struct build
{
	lt_dataset *ds;
	const lt_field *column;
	lt_index_kind kind;
	uint64_t	max_memory;
	const lt_index_build_options *opts;
	lt_built_index *out;
	char	   *dir;			/* "<prefix>_indices/<uuid>/" */
	/* gathered pairs */
	lt_field	value_field;	/* the key type, as gathered */
	lt_array   *values;
	uint64_t   *ids;
	int64_t		n_ids, cap_ids;
	lt_rowaddr_set *null_lists;
	int64_t    *perm;
	int64_t		next;			/* in-memory: the next of perm to write */
	/* external merge */
	const lt_spill_ops *spill;
	lt_spill_file **runs;
	int			n_runs, cap_runs;
	run_reader *readers;
	run_reader **heap;
	int			n_readers, n_heap;
	uint64_t	rows_total;		/* live rows of the fragments read (progress) */
	uint64_t	rows_read;		/* of them read so far (a merge's old entries are not rows read) */
	/* a merge that fell back to the data: the merged index's live fragments and the options' */
	const Lt__Pb__DataFragment **own_frags;
	size_t		n_own_frags;
} build;

lt_code
lt_built_index_add_file(lt_built_index *o, const char *name, uint64_t size, lt_error *err)
{
	char	  **f = lt_realloc(o->files, (o->n_files + 1) * sizeof(char *));
	uint64_t   *s;

	if (f)
		o->files = f;
	s = f ? lt_realloc(o->file_sizes, (o->n_files + 1) * sizeof(uint64_t)) : NULL;
	if (!s)
		return lt_nomem(err);
	o->file_sizes = s;
	if (!(o->files[o->n_files] = lt_strdup(name)))
		return lt_nomem(err);
	o->file_sizes[o->n_files++] = size;
	o->bytes += size;
	return LT_OK;
}

lt_code
lt_built_index_open_file(lt_dataset *ds, const char *dir, const char *name, int n_fields, const lt_field *const *fields,
						 lt_file_writer **w, lt_error *err)
{
	char	   *path = lt_asprintf("%s%s", dir, name);
	lt_code		rc;

	if (!path)
		return lt_nomem(err);
	rc = lt_file_writer_open_path(ds->store, path, n_fields, fields, LT_FILE_V2_1, w, err);
	lt_free(path);
	return rc;
}

lt_code
lt_built_index_finish_file(lt_built_index *b, lt_file_writer *w, const char *name, lt_error *err)
{
	lt_written_file wf;
	lt_code		rc = lt_file_writer_finish(w, &wf, err);

	if (rc == LT_OK)
	{
		rc = lt_built_index_add_file(b, name, wf.size, err);
		lt_written_file_clear(&wf);
	}
	return rc;
}

/* The rows the read step covers: the live rows of the fragments read. */
static uint64_t rows_to_read(const build *b);

static void
report(const build *b, lt_index_build_step step)
{
	if (b->opts->progress)
		b->opts->progress(b->opts->progress_arg, step, step == LT_INDEX_BUILD_READ ? b->rows_read : 0,
						  step == LT_INDEX_BUILD_READ ? b->rows_total : 0);
}

static lt_code
check_interrupt(const build *b, lt_error *err)
{
	if (lt_check_interrupt(NULL, "") != LT_OK)
		return lt_error_set(err, LT_EINVALID, "the build of a %s index on column \"%s\" was canceled",
							lt_index_kind_name(b->kind), b->column->name);
	return LT_OK;
}

static lt_code spill_run(build *b, lt_error *err);

/* Past max_memory (with what the sort will take), the pairs so far go to a run. */
static lt_code
check_memory(build *b, lt_error *err)
{
	uint64_t	used = slot_bytes(b->values) + (uint64_t) b->cap_ids * 8;
	int64_t		n = b->values->length;

	/* the sort's permutation and its two key buffers come on top */
	used += (uint64_t) n * (8 + 2 * sizeof(keyed));
	if (used > b->max_memory && n > 0)
		return spill_run(b, err);
	return LT_OK;
}

/* The fragments a build reads: the options' list, else the dataset's. */
static size_t
n_frags(const build *b)
{
	if (b->own_frags)
		return b->n_own_frags;
	return b->opts->fragments ? b->opts->n_fragments : b->ds->n_fragments;
}

static const Lt__Pb__DataFragment *
frag_at(const build *b, size_t i)
{
	if (b->own_frags)
		return b->own_frags[i];
	return b->opts->fragments ? b->opts->fragments[i] : b->ds->fragments[i];
}

/* ---- merging an existing index (Lance's optimize) ------------------------------------ */

static bool
in_options(const build *b, uint64_t id)
{
	for (size_t i = 0; i < b->opts->n_fragments; i++)
		if (b->opts->fragments[i]->id == id)
			return true;
	return false;
}

/*
 * The merged index's keys are of another layout than the column's: read its live fragments from the
 * data, with the options' (the segment then holds what a build over those fragments would).
 */
static lt_code
merge_fallback(build *b, lt_error *err)
{
	const lt_index *m = b->opts->merge;

	b->own_frags = lt_malloc((b->ds->n_fragments ? b->ds->n_fragments : 1) * sizeof(*b->own_frags));
	if (!b->own_frags)
		return lt_nomem(err);
	b->n_own_frags = 0;
	for (size_t i = 0; i < b->ds->n_fragments; i++)
	{
		uint64_t	id = b->ds->fragments[i]->id;

		if ((id <= UINT32_MAX && lt_index_covers(m, (uint32_t) id)) || in_options(b, id))
			b->own_frags[b->n_own_frags++] = b->ds->fragments[i];
	}
	b->rows_total = rows_to_read(b);
	return LT_OK;
}

static lt_code
take_pairs(void *arg, const lt_array *values, int64_t n, const uint64_t *ids, lt_error *err)
{
	build	   *b = arg;

	LT_TRY(lt_array_append_slice(b->values, values, 0, n, err));
	for (int64_t i = 0; i < n; i++)
		if (!lt_push_u64(&b->ids, &b->n_ids, &b->cap_ids, ids[i]))
			return lt_nomem(err);
	b->out->rows += (uint64_t) n;
	return check_memory(b, err);
}

static lt_code
take_key(void *arg, const lt_array *values, int64_t row, const uint64_t *ids, int64_t n, lt_error *err)
{
	build	   *b = arg;

	for (int64_t i = 0; i < n; i++)
	{
		LT_TRY(lt_array_append_slice(b->values, values, row, 1, err));
		if (!lt_push_u64(&b->ids, &b->n_ids, &b->cap_ids, ids[i]))
			return lt_nomem(err);
		if (i % 65536 == 65535)
			LT_TRY(check_memory(b, err));
	}
	b->out->rows += (uint64_t) n;
	return check_memory(b, err);
}

static lt_code
take_null_lists(void *arg, const uint64_t *ids, int64_t n, lt_error *err)
{
	build	   *b = arg;

	for (int64_t i = 0; i < n; i++)
		LT_TRY(lt_rowaddr_set_add(b->null_lists, ids[i], err));
	return LT_OK;
}

/* The (value, id) pairs of the merged index, before the fragments' (gather). */
static lt_code
gather_merged(build *b, lt_error *err)
{
	lt_index_entry_sink sink = {take_pairs, take_key, take_null_lists, NULL, b};
	lt_code		rc;

	if (!b->opts->merge)
		return LT_OK;
	rc = lt_index_read_entries(b->ds, b->opts->merge, &b->value_field, &sink, err);
	if (rc != LT_EUNSUPPORTED)
		return rc;
	/* start again from the data: drop what the merge took */
	for (int i = 0; i < b->n_runs; i++)
		lt_spill_close(b->runs[i]);
	b->n_runs = 0;
	lt_array_clear(b->values);
	b->n_ids = 0;
	b->out->rows = 0;
	b->rows_read = 0;
	if (b->null_lists)
	{
		lt_rowaddr_set_free(b->null_lists);
		if (!(b->null_lists = lt_rowaddr_set_create()))
			return lt_nomem(err);
	}
	return merge_fallback(b, err);
}

static uint64_t
rows_to_read(const build *b)
{
	uint64_t	n = 0;

	for (size_t f = 0; f < n_frags(b); f++)
		n += lt_fragment_live_rows(frag_at(b, f));
	return n;
}

/* Every live (value, id) pair of the column (of its elements for label_list). */
static lt_code
gather(build *b, lt_error *err)
{
	lt_dataset *ds = b->ds;
	bool		label = b->kind == LT_INDEX_LABEL_LIST;
	const lt_field *fields[1] = {b->column};
	lt_code		rc = LT_OK;

	key_field(&b->value_field, label ? b->column->children[0] : b->column, "values", 0);
	LT_TRY(lt_array_new(&b->value_field, &b->values, err));
	if (label && !(b->null_lists = lt_rowaddr_set_create()))
		return lt_nomem(err);
	rc = gather_merged(b, err);
	for (size_t f = 0; rc == LT_OK && f < n_frags(b); f++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;
		lt_batch   *bt;

		so.n_fields = 1;
		so.fields = fields;
		so.want_row_ids = ds->stable_row_ids;
		rc = lt_fragment_scanner_open(ds, frag_at(b, f), &so, &sc, err);
		while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &bt, err)) == LT_OK && bt)
		{
			const lt_array *col = bt->columns[0];
			const uint64_t *ids = bt->row_ids ? bt->row_ids : bt->row_addrs;

			if (!label)
			{
				rc = lt_array_append_slice(b->values, col, 0, bt->length, err);
				for (int64_t r = 0; rc == LT_OK && r < bt->length; r++)
					rc = lt_push_u64(&b->ids, &b->n_ids, &b->cap_ids, ids[r]) ? LT_OK : lt_nomem(err);
			}
			else
			{
				for (int64_t r = 0; rc == LT_OK && r < bt->length; r++)
				{
					int64_t		lo = col->offsets[r],
								hi = col->offsets[r + 1];

					if (!lt_array_is_valid(col, r))
						rc = lt_rowaddr_set_add(b->null_lists, ids[r], err);
					else if (hi > lo)
					{
						rc = lt_array_append_slice(b->values, col->children[0], lo, hi - lo, err);
						for (int64_t k = lo; rc == LT_OK && k < hi; k++)
							rc = lt_push_u64(&b->ids, &b->n_ids, &b->cap_ids, ids[r]) ? LT_OK : lt_nomem(err);
					}
				}
			}
			b->out->rows += (uint64_t) bt->length;
			b->rows_read += (uint64_t) bt->length;
			report(b, LT_INDEX_BUILD_READ);
			if (rc == LT_OK)
				rc = check_memory(b, err);
			if (rc == LT_OK)
				rc = check_interrupt(b, err);
		}
		lt_fragment_scanner_free(sc);
	}
	return rc;
}

static int
cmp_pairs(const void *x, const void *y, void *arg)
{
	const build *b = arg;
	int64_t		i = *(const int64_t *) x,
				j = *(const int64_t *) y;
	int			c = cmp_slots(b->values, i, b->values, j);

	if (c)
		return c;
	return CMP(b->ids[i], b->ids[j]);
}

/* Types whose order is that of a 64-bit unsigned key (radix-sorted). */
static bool
has_order_key(const lt_field *f)
{
	switch (f->type)
	{
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_FIXED_BINARY:
			return false;
		default:
			return f->byte_width > 0 && f->byte_width <= 8;
	}
}

/* An unsigned key ordered as the value: signed types with the sign bit flipped, floats in total order. */
static uint64_t
order_key(const lt_array *a, int64_t i)
{
	const uint8_t *p = a->values + i * a->field->byte_width;
	const uint64_t sign = (uint64_t) 1 << 63;

	switch (a->field->type)
	{
		case LT_TYPE_BOOL:
		case LT_TYPE_UINT8:
			return *p;
		case LT_TYPE_UINT16:
			return *(const uint16_t *) p;
		case LT_TYPE_UINT32:
			return *(const uint32_t *) p;
		case LT_TYPE_UINT64:
			return *(const uint64_t *) p;
		case LT_TYPE_INT8:
			return (uint64_t) (int64_t) *(const int8_t *) p ^ sign;
		case LT_TYPE_INT16:
			return (uint64_t) (int64_t) *(const int16_t *) p ^ sign;
		case LT_TYPE_INT32:
		case LT_TYPE_DATE32:
		case LT_TYPE_TIME32:
			return (uint64_t) (int64_t) *(const int32_t *) p ^ sign;
		case LT_TYPE_FLOAT16:
			return total_key(*(const uint16_t *) p, 16);
		case LT_TYPE_FLOAT32:
			return total_key(*(const uint32_t *) p, 32);
		case LT_TYPE_FLOAT64:
			return total_key(*(const uint64_t *) p, 64);
		default:
			return *(const uint64_t *) p ^ sign;
	}
}

/*
 * NULLs first (in gathered order), then a stable LSD radix sort of the keys: ties keep the
 * gathered order (ascending row address).  Bytes where every key agrees are skipped.
 */
static lt_code
radix_sort(build *b, lt_error *err)
{
	int64_t		n = b->values->length,
				nn = 0,
				m = 0;
	keyed	   *x = lt_malloc((size_t) (n ? n : 1) * sizeof(keyed)),
			   *y = lt_malloc((size_t) (n ? n : 1) * sizeof(keyed));
	uint64_t	lo = UINT64_MAX,
				hi = 0;

	if (!x || !y)
	{
		lt_free(x);
		lt_free(y);
		return lt_nomem(err);
	}
	for (int64_t i = 0; i < n; i++)
	{
		if (!lt_array_is_valid(b->values, i))
			b->perm[nn++] = i;
		else
		{
			x[m].key = order_key(b->values, i);
			x[m].idx = i;
			lo &= x[m].key;
			hi |= x[m].key;
			m++;
		}
	}
	for (int shift = 0; shift < 64; shift += 8)
	{
		int64_t		count[257] = {0};
		keyed	   *t;

		if (((lo ^ hi) >> shift & 0xff) == 0)
			continue;			/* every key has the same byte here */
		if (check_interrupt(b, err) != LT_OK)
		{
			lt_free(x);
			lt_free(y);
			return err ? err->code : LT_ECANCELED;
		}
		for (int64_t i = 0; i < m; i++)
			count[(x[i].key >> shift & 0xff) + 1]++;
		for (int d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (int64_t i = 0; i < m; i++)
			y[count[x[i].key >> shift & 0xff]++] = x[i];
		t = x;
		x = y;
		y = t;
	}
	for (int64_t i = 0; i < m; i++)
		b->perm[nn + i] = x[i].idx;
	lt_free(x);
	lt_free(y);
	return LT_OK;
}

/*
 * The comparison sort of b->perm (values without an order key: text, binary, decimals), in pieces
 * that answer cancel: runs of SORT_RUN sorted with qsort_r, then merged pairwise, the interrupt
 * checked between runs and every SORT_RUN merged elements (a sort of 11M strings took seconds).
 */
#define SORT_RUN ((int64_t) 1 << 16)

static lt_code
merge_sort_pairs(build *b, lt_error *err)
{
	int64_t		n = b->values->length;
	int64_t    *src = b->perm,
			   *dst;

	for (int64_t lo = 0; lo < n; lo += SORT_RUN)
	{
		LT_TRY(check_interrupt(b, err));
		qsort_r(src + lo, (size_t) (n - lo < SORT_RUN ? n - lo : SORT_RUN), sizeof(int64_t), cmp_pairs, b);
	}
	if (n <= SORT_RUN)
		return LT_OK;
	if (!(dst = lt_malloc((size_t) n * sizeof(int64_t))))
		return lt_nomem(err);
	for (int64_t width = SORT_RUN; width < n; width *= 2)
	{
		int64_t		done = 0;
		int64_t    *t;

		for (int64_t lo = 0; lo < n; lo += 2 * width)
		{
			int64_t		mid = lo + width < n ? lo + width : n,
						hi = lo + 2 * width < n ? lo + 2 * width : n,
						i = lo,
						j = mid,
						k = lo;

			while (k < hi)
			{
				if (++done % SORT_RUN == 0)
				{
					lt_code		rc = check_interrupt(b, err);

					if (rc != LT_OK)
					{
						/* perm must stay a permutation for the caller's cleanup: keep the newest copy */
						if (src != b->perm)
							memcpy(b->perm, src, (size_t) n * sizeof(int64_t));
						lt_free(src == b->perm ? dst : src);
						return rc;
					}
				}
				if (j >= hi || (i < mid && cmp_pairs(&src[i], &src[j], b) <= 0))
					dst[k++] = src[i++];
				else
					dst[k++] = src[j++];
			}
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != b->perm)
	{
		memcpy(b->perm, src, (size_t) n * sizeof(int64_t));
		lt_free(src);
	}
	else
		lt_free(dst);
	return LT_OK;
}

static lt_code
sort_pairs(build *b, lt_error *err)
{
	int64_t		n = b->values->length;

	if (!(b->perm = lt_malloc((size_t) (n ? n : 1) * sizeof(int64_t))))
		return lt_nomem(err);
	if (has_order_key(b->values->field))
		return radix_sort(b, err);
	for (int64_t i = 0; i < n; i++)
		b->perm[i] = i;
	return merge_sort_pairs(b, err);
}

/* ---- external merge ------------------------------------------------------------- */

/*
 * A run is a file of records in sorted order: a byte (1: the value is valid), the value's bytes as the
 * array holds them (var-width types: a uint64 length first; null slots keep their bytes, so a merged
 * page is the in-memory page byte for byte), then the uint64 id.
 */
static lt_code
put_record(lt_spill_file *f, const lt_array *a, int64_t i, uint64_t id, lt_error *err)
{
	uint8_t		valid = lt_array_is_valid(a, i);

	LT_TRY(lt_spill_write(f, &valid, 1, err));
	if (lt_type_is_var_width(a->field->type))
	{
		uint64_t	len = (uint64_t) (a->offsets[i + 1] - a->offsets[i]);

		LT_TRY(lt_spill_write(f, &len, 8, err));
		LT_TRY(lt_spill_write(f, a->data + a->offsets[i], (size_t) len, err));
	}
	else
		LT_TRY(lt_spill_write(f, a->values + i * a->field->byte_width, (size_t) a->field->byte_width, err));
	return lt_spill_write(f, &id, 8, err);
}

/* The next record of f appended to a. */
static lt_code
get_record(lt_spill_file *f, lt_array *a, uint64_t *id, lt_error *err)
{
	uint8_t		valid;
	int64_t		n = a->length;

	LT_TRY(lt_spill_read(f, &valid, 1, err));
	LT_TRY(lt_array_reserve(a, 1, err));
	if (lt_type_is_var_width(a->field->type))
	{
		uint64_t	len;

		LT_TRY(lt_spill_read(f, &len, 8, err));
		if (len > ((uint64_t) 1 << 40))
			return lt_error_set(err, LT_EIO, "a temporary file of an index build is damaged");
		LT_TRY(lt_array_reserve_data(a, (int64_t) len, err));
		LT_TRY(lt_spill_read(f, a->data + a->data_len, (size_t) len, err));
		a->data_len += (int64_t) len;
		a->offsets[n + 1] = a->data_len;
	}
	else
		LT_TRY(lt_spill_read(f, a->values + n * a->field->byte_width, (size_t) a->field->byte_width, err));
	if (!valid)
	{
		LT_TRY(lt_array_ensure_validity(a, err));
		a->validity[n] = 0;
		a->null_count++;
	}
	else if (a->validity)
		a->validity[n] = 1;
	a->length++;
	return lt_spill_read(f, id, 8, err);
}

/* The gathered pairs, sorted, as a new run; the in-memory arrays are emptied for the next. */
static lt_code
spill_run(build *b, lt_error *err)
{
	int64_t		n = b->values->length;
	lt_spill_file *f = NULL;
	lt_code		rc;

	if (b->n_runs == b->cap_runs)
	{
		int			cap = b->cap_runs ? b->cap_runs * 2 : 16;
		lt_spill_file **r = lt_realloc(b->runs, (size_t) cap * sizeof(*r));

		if (!r)
			return lt_nomem(err);
		b->runs = r;
		b->cap_runs = cap;
	}
	LT_TRY(sort_pairs(b, err));
	LT_TRY(lt_spill_open(b->spill, RUN_READ_BUFFER, &f, err));
	b->runs[b->n_runs++] = f;
	rc = LT_OK;
	for (int64_t k = 0; rc == LT_OK && k < n; k++)
	{
		rc = put_record(f, b->values, b->perm[k], b->ids[b->perm[k]], err);
		if (rc == LT_OK && k % 65536 == 65535)
			rc = check_interrupt(b, err);
	}
	if (rc == LT_OK)
		rc = lt_spill_rewind(f, err);
	lt_free(b->perm);
	b->perm = NULL;
	lt_array_clear(b->values);
	b->n_ids = 0;
	return rc;
}

/* The next batch of r's run (r->n == 0: the run is done). */
static lt_code
run_refill(run_reader *r, lt_error *err)
{
	bool		end = false;

	lt_array_clear(r->vals);
	r->n = r->pos = 0;
	while (r->n < RUN_BATCH_ROWS && r->vals->data_len < RUN_BATCH_BYTES)
	{
		LT_TRY(lt_spill_at_end(r->f, &end, err));
		if (end)
			break;
		LT_TRY(get_record(r->f, r->vals, &r->ids[r->n], err));
		r->n++;
	}
	return LT_OK;
}

/* x's next pair before y's: the in-memory sort's order, ties to the earlier run. */
static bool
run_before(const run_reader *x, const run_reader *y)
{
	int			c = 0;

	if (has_order_key(x->vals->field))
	{
		bool		vx = lt_array_is_valid(x->vals, x->pos),
					vy = lt_array_is_valid(y->vals, y->pos);

		if (vx != vy)
			return vy;
		if (vx)
			c = CMP(order_key(x->vals, x->pos), order_key(y->vals, y->pos));
	}
	else
	{
		c = cmp_slots(x->vals, x->pos, y->vals, y->pos);
		if (c == 0)
			c = CMP(x->ids[x->pos], y->ids[y->pos]);
	}
	return c ? c < 0 : x->order < y->order;
}

static void
heap_down(build *b, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					m = i;
		run_reader *t;

		if (l < b->n_heap && run_before(b->heap[l], b->heap[m]))
			m = l;
		if (l + 1 < b->n_heap && run_before(b->heap[l + 1], b->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = b->heap[i];
		b->heap[i] = b->heap[m];
		b->heap[m] = t;
		i = m;
	}
}

static void
merge_close(build *b)
{
	for (int i = 0; i < b->n_readers; i++)
	{
		lt_spill_close(b->readers[i].f);
		lt_array_free(b->readers[i].vals);
	}
	lt_free(b->readers);
	lt_free(b->heap);
	b->readers = NULL;
	b->heap = NULL;
	b->n_readers = b->n_heap = 0;
}

/* Merge runs[first, first + n): they move to the merge, which closes them. */
static lt_code
merge_open(build *b, int first, int n, lt_error *err)
{
	b->readers = lt_calloc((size_t) n, sizeof(run_reader));
	b->heap = lt_calloc((size_t) n, sizeof(run_reader *));
	if (!b->readers || !b->heap)
		return lt_nomem(err);
	for (int i = 0; i < n; i++)
	{
		run_reader *r = &b->readers[b->n_readers++];

		r->f = b->runs[first + i];
		r->order = i;
		b->runs[first + i] = NULL;
		LT_TRY(lt_array_new(&b->value_field, &r->vals, err));
		LT_TRY(run_refill(r, err));
		if (r->n > 0)
			b->heap[b->n_heap++] = r;
	}
	for (int i = b->n_heap / 2 - 1; i >= 0; i--)
		heap_down(b, i);
	return LT_OK;
}

/* Up to want merged pairs appended to vals and ids (fewer only at the end). */
static lt_code
merge_next(build *b, int64_t want, lt_array *vals, uint64_t *ids, int64_t *got, lt_error *err)
{
	int64_t		k = 0;

	while (k < want && b->n_heap > 0)
	{
		run_reader *r = b->heap[0];

		LT_TRY(lt_array_append_slice(vals, r->vals, r->pos, 1, err));
		ids[k++] = r->ids[r->pos];
		if (++r->pos == r->n)
		{
			LT_TRY(run_refill(r, err));
			if (r->n == 0)
				b->heap[0] = b->heap[--b->n_heap];
		}
		heap_down(b, 0);
	}
	*got = k;
	return LT_OK;
}

/* Runs merged at once: what max_memory holds, at least two. */
static int
fan_in(const build *b)
{
	uint64_t	n = b->max_memory / MERGE_RUN_MEMORY;

	return n < 2 ? 2 : n > MAX_FAN_IN ? MAX_FAN_IN : (int) n;
}

/* Merge runs fan_in at a time into longer runs until one merge takes them all. */
static lt_code
merge_passes(build *b, lt_error *err)
{
	int			width = fan_in(b);
	lt_field	idf;
	lt_array   *vals = NULL;
	uint64_t   *ids = NULL;
	lt_code		rc = LT_OK;

	if (b->n_runs <= width)
		return LT_OK;
	if (!(ids = lt_malloc(RUN_BATCH_ROWS * sizeof(uint64_t))))
		return lt_nomem(err);
	lt_field_plain(&idf, "ids", 1, LT_TYPE_UINT64, "uint64", 8, false);
	rc = lt_array_new(&b->value_field, &vals, err);
	while (rc == LT_OK && b->n_runs > width)
	{
		int			out = 0;

		for (int g = 0; rc == LT_OK && g < b->n_runs; g += width)
		{
			int			n = b->n_runs - g < width ? b->n_runs - g : width;
			lt_spill_file *f = NULL;
			int64_t		got = 1;

			if (n == 1)
			{
				f = b->runs[g];
				b->runs[g] = NULL;
				b->runs[out++] = f;
				continue;
			}
			rc = merge_open(b, g, n, err);
			if (rc == LT_OK)
				rc = lt_spill_open(b->spill, RUN_READ_BUFFER, &f, err);
			while (rc == LT_OK && got > 0)
			{
				lt_array_clear(vals);
				rc = merge_next(b, RUN_BATCH_ROWS, vals, ids, &got, err);
				for (int64_t k = 0; rc == LT_OK && k < got; k++)
					rc = put_record(f, vals, k, ids[k], err);
				if (rc == LT_OK)
					rc = check_interrupt(b, err);
			}
			if (rc == LT_OK)
				rc = lt_spill_rewind(f, err);
			merge_close(b);
			/* g's runs are closed: the merged one takes the first free slot (out <= g) */
			b->runs[out++] = f;
		}
		/* the slots past out are empty (merged) or closed */
		for (int i = out; i < b->n_runs; i++)
			lt_spill_close(b->runs[i]);
		b->n_runs = out;
	}
	lt_array_free(vals);
	lt_free(ids);
	return rc;
}

/* The next up to want sorted pairs appended to vals and ids (*got < want only at the end). */
static lt_code
next_pairs(build *b, int64_t want, lt_array *vals, uint64_t *ids, int64_t *got, lt_error *err)
{
	int64_t		n;

	if (b->readers)
		return merge_next(b, want, vals, ids, got, err);
	n = b->values->length - b->next < want ? b->values->length - b->next : want;
	LT_TRY(lt_array_append_take(vals, b->values, b->perm + b->next, n, err));
	for (int64_t k = 0; k < n; k++)
		ids[k] = b->ids[b->perm[b->next + k]];
	b->next += n;
	*got = n;
	return LT_OK;
}

/* The gathered pairs ready for next_pairs: sorted in memory, or the last run spilled and the runs merged. */
static lt_code
sort_all(build *b, lt_error *err)
{
	if (b->n_runs == 0)
		return sort_pairs(b, err);
	if (b->values->length > 0)
		LT_TRY(spill_run(b, err));
	/* the merge's memory is the runs' buffers */
	lt_array_free(b->values);
	b->values = NULL;
	lt_free(b->ids);
	b->ids = NULL;
	b->cap_ids = b->n_ids = 0;
	LT_TRY(merge_passes(b, err));
	return merge_open(b, 0, b->n_runs, err);
}

/* ---- btree ---------------------------------------------------------------- */

static lt_code
write_btree(build *b, lt_error *err)
{
	int64_t		n = 0;
	lt_field	vf, idf, mnf, mxf, ncf, pif;
	const lt_field *data_fields[2] = {&vf, &idf};
	const lt_field *lookup_fields[4] = {&mnf, &mxf, &ncf, &pif};
	lt_array   *vals = NULL, *ids = NULL, *mn = NULL, *mx = NULL, *nc = NULL, *pi = NULL;
	lt_file_writer *w = NULL;
	char		bs[32];
	lt_code		rc;

	key_field(&vf, &b->value_field, "values", 0);
	lt_field_plain(&idf, "ids", 1, LT_TYPE_UINT64, "uint64", 8, false);
	key_field(&mnf, &b->value_field, "min", 0);
	key_field(&mxf, &b->value_field, "max", 1);
	lt_field_plain(&ncf, "null_count", 2, LT_TYPE_UINT32, "uint32", 4, false);
	lt_field_plain(&pif, "page_idx", 3, LT_TYPE_UINT32, "uint32", 4, false);
	rc = lt_array_new(&vf, &vals, err);
	if (rc == LT_OK) rc = lt_array_new(&idf, &ids, err);
	if (rc == LT_OK) rc = lt_array_new(&mnf, &mn, err);
	if (rc == LT_OK) rc = lt_array_new(&mxf, &mx, err);
	if (rc == LT_OK) rc = lt_array_new(&ncf, &nc, err);
	if (rc == LT_OK) rc = lt_array_new(&pif, &pi, err);
	if (rc == LT_OK)
		rc = lt_built_index_open_file(b->ds, b->dir, "page_data.lance", 2, data_fields, &w, err);
	for (int64_t page = 0; rc == LT_OK; page++)
	{
		int64_t		len = 0;
		lt_array   *cols[2] = {vals, ids};
		int64_t		nulls = 0;

		lt_array_clear(vals);
		lt_array_clear(ids);
		rc = lt_array_reserve(ids, LT_BTREE_BATCH_SIZE, err);
		if (rc == LT_OK)
			rc = next_pairs(b, LT_BTREE_BATCH_SIZE, vals, (uint64_t *) ids->values, &len, err);
		if (rc != LT_OK || len == 0)
			break;
		for (int64_t k = 0; k < len; k++)
			nulls += !lt_array_is_valid(vals, k);
		ids->length = len;
		n += len;
		rc = lt_file_writer_write(w, cols, len, err);
		if (rc == LT_OK && page % 64 == 63)
			rc = check_interrupt(b, err);
		/* the page's summary: its first and last value (sorted), its nulls */
		if (rc == LT_OK)
			rc = lt_array_append_slice(mn, vals, 0, 1, err);
		if (rc == LT_OK)
			rc = lt_array_append_slice(mx, vals, len - 1, 1, err);
		if (rc == LT_OK)
			rc = push_uint(nc, (uint64_t) nulls, err);
		if (rc == LT_OK)
			rc = push_uint(pi, (uint64_t) page, err);
	}
	if (rc == LT_OK)
		rc = lt_built_index_finish_file(b->out, w, "page_data.lance", err);
	lt_file_writer_free(w);
	w = NULL;
	if (rc == LT_OK)
		rc = lt_built_index_open_file(b->ds, b->dir, "page_lookup.lance", 4, lookup_fields, &w, err);
	snprintf(bs, sizeof(bs), "%d", LT_BTREE_BATCH_SIZE);
	if (rc == LT_OK)
		rc = lt_file_writer_add_metadata_text(w, "batch_size", bs, err);
	if (rc == LT_OK)
		rc = lt_file_writer_add_metadata_text(w, "range_partitioned", "false", err);
	if (rc == LT_OK && mn->length > 0)
	{
		lt_array   *cols[4] = {mn, mx, nc, pi};

		rc = lt_file_writer_write(w, cols, mn->length, err);
	}
	if (rc == LT_OK)
		rc = lt_built_index_finish_file(b->out, w, "page_lookup.lance", err);
	b->out->entries = (uint64_t) n;
	lt_file_writer_free(w);
	lt_array_free(vals);
	lt_array_free(ids);
	lt_array_free(mn);
	lt_array_free(mx);
	lt_array_free(nc);
	lt_array_free(pi);
	return rc;
}

/* ---- bitmap, label_list ------------------------------------------------------ */

/* The key of the current run of equal values (cur, one slot) with its rows, as one more bitmap row. */
static lt_code
put_bitmap(build *b, lt_file_writer *w, lt_array *keys, lt_array *maps, const lt_array *cur, lt_rowaddr_set *set,
		   lt_error *err)
{
	uint8_t    *bytes = NULL;
	size_t		len = 0;
	lt_code		rc = lt_rowaddr_set_serialize(set, &bytes, &len, err);

	if (rc == LT_OK)
		rc = lt_array_append_slice(keys, cur, 0, 1, err);
	if (rc == LT_OK)
		rc = push_binary(maps, bytes, len, err);
	lt_free(bytes);
	if (rc == LT_OK && keys->length >= KEYS_PER_WRITE)
	{
		lt_array   *cols[2] = {keys, maps};

		rc = lt_file_writer_write(w, cols, keys->length, err);
		lt_array_clear(keys);
		lt_array_clear(maps);
		if (rc == LT_OK)
			rc = check_interrupt(b, err);
	}
	return rc;
}

static lt_code
write_bitmaps(build *b, lt_error *err)
{
	bool		label = b->kind == LT_INDEX_LABEL_LIST;
	lt_field	kf, bf;
	const lt_field *fields[2] = {&kf, &bf};
	lt_array   *keys = NULL, *maps = NULL, *batch = NULL, *cur = NULL;
	uint64_t   *ids = lt_malloc(KEYS_PER_WRITE * sizeof(uint64_t));
	lt_rowaddr_set *set = NULL;
	lt_file_writer *w = NULL;
	uint64_t	n_keys = 0;
	int64_t		got = 1;
	lt_code		rc;

	key_field(&kf, &b->value_field, "keys", 0);
	lt_field_plain(&bf, "bitmaps", 1, LT_TYPE_BINARY, "binary", 0, true);
	rc = ids ? lt_array_new(&kf, &keys, err) : lt_nomem(err);
	if (rc == LT_OK)
		rc = lt_array_new(&bf, &maps, err);
	if (rc == LT_OK)
		rc = lt_array_new(&b->value_field, &batch, err);
	if (rc == LT_OK)
		rc = lt_array_new(&b->value_field, &cur, err);
	if (rc == LT_OK)
		rc = lt_built_index_open_file(b->ds, b->dir, "bitmap_page_lookup.lance", 2, fields, &w, err);
	/* one bitmap per run of equal values, runs crossing batches */
	while (rc == LT_OK && got > 0)
	{
		lt_array_clear(batch);
		rc = next_pairs(b, KEYS_PER_WRITE, batch, ids, &got, err);
		for (int64_t k = 0; rc == LT_OK && k < got; k++)
		{
			if (set && cmp_slots(batch, k, cur, 0) != 0)
			{
				rc = put_bitmap(b, w, keys, maps, cur, set, err);
				lt_rowaddr_set_free(set);
				set = NULL;
				n_keys++;
			}
			if (rc == LT_OK && !set)
			{
				lt_array_clear(cur);
				rc = lt_array_append_slice(cur, batch, k, 1, err);
				if (rc == LT_OK && !(set = lt_rowaddr_set_create()))
					rc = lt_nomem(err);
			}
			if (rc == LT_OK)
				rc = lt_rowaddr_set_add(set, ids[k], err);
		}
	}
	if (rc == LT_OK && set)
	{
		rc = put_bitmap(b, w, keys, maps, cur, set, err);
		n_keys++;
	}
	if (rc == LT_OK && keys->length > 0)
	{
		lt_array   *cols[2] = {keys, maps};

		rc = lt_file_writer_write(w, cols, keys->length, err);
	}
	lt_rowaddr_set_free(set);
	lt_array_free(batch);
	lt_array_free(cur);
	lt_free(ids);
	if (rc == LT_OK)
	{
		char		stats[64];

		snprintf(stats, sizeof(stats), "{\"num_bitmaps\":%llu}", (unsigned long long) n_keys);
		rc = lt_file_writer_add_metadata_text(w, "lance:index_stats", stats, err);
	}
	if (rc == LT_OK && label)
	{
		uint8_t    *bytes = NULL;
		size_t		len = 0;
		uint32_t	gb = 0;

		rc = lt_rowaddr_set_serialize(b->null_lists, &bytes, &len, err);
		if (rc == LT_OK)
			rc = lt_file_writer_add_global_buffer(w, bytes, len, &gb, err);
		lt_free(bytes);
		if (rc == LT_OK)
		{
			char		num[16];

			snprintf(num, sizeof(num), "%u", gb);
			rc = lt_file_writer_add_metadata_text(w, "lance:label_list_nulls", num, err);
		}
	}
	if (rc == LT_OK)
		rc = lt_built_index_finish_file(b->out, w, "bitmap_page_lookup.lance", err);
	b->out->entries = n_keys;
	lt_file_writer_free(w);
	lt_array_free(keys);
	lt_array_free(maps);
	return rc;
}

/* ---- zonemap -------------------------------------------------------------------- */

/*
 * A zone's statistics.  Lance's trainer (DataFusion's min and max accumulators) takes min and max in the
 * column's order, for floats Arrow's total order (-NaN < -Inf < ... < -0 < 0 < ... < Inf < NaN); null_count
 * and nan_count count the zone's nulls and NaNs; min and max are NULL only when every value is NULL.  Both
 * Lance 8 and Lance 12 read a NaN min as "this zone holds only NaNs" and prune it for every finite bound,
 * although their filters put a negative NaN below every number: a zone map holding Lance's own -NaN min
 * makes the engine drop the rows `x < 0` returns without it.  So where the total-order min is a NaN (the zone
 * holds a negative NaN, or only NaNs) lt_fdw writes -Infinity, the lowest bound both engines compare
 * correctly; and a zone holding any NaN gets a NaN max (its positive NaN, else the canonical one), which the
 * engines read as "NaN present, upper bound unknown".  Everything else is Lance's value.  The one filter no
 * zone map can answer for them is `x < -Infinity` over negative NaNs (see README, Creating indexes).
 */
typedef struct zones
{
	lt_array   *min, *max, *nulls, *nans, *frag, *start, *len;
	/* the zone being filled */
	lt_array   *zmin, *zmax;	/* one slot each: the smallest / largest value so far (total order) */
	lt_array   *low, *nan;		/* one slot each: -Infinity and a positive NaN of the column's type */
	bool		any;			/* zmin/zmax hold a value */
	uint64_t	rows, n_nulls, n_nans;
	uint64_t	first, last;
} zones;

/* -Infinity and the canonical NaN of a float field, one slot each */
static lt_code
float_consts(const lt_field *f, lt_array **low, lt_array **nan, lt_error *err)
{
	LT_TRY(lt_array_new(f, low, err));
	LT_TRY(lt_array_new(f, nan, err));
	LT_TRY(lt_array_reserve(*low, 1, err));
	LT_TRY(lt_array_reserve(*nan, 1, err));
	switch (f->type)
	{
		case LT_TYPE_FLOAT16:
			((uint16_t *) (*low)->values)[0] = 0xfc00;
			((uint16_t *) (*nan)->values)[0] = 0x7e00;
			break;
		case LT_TYPE_FLOAT32:
			((uint32_t *) (*low)->values)[0] = 0xff800000u;
			((uint32_t *) (*nan)->values)[0] = 0x7fc00000u;
			break;
		default:
			((uint64_t *) (*low)->values)[0] = 0xfff0000000000000ull;
			((uint64_t *) (*nan)->values)[0] = 0x7ff8000000000000ull;
			break;
	}
	(*low)->length = (*nan)->length = 1;
	return LT_OK;
}

static lt_code
zone_flush(zones *z, uint32_t frag, lt_error *err)
{
	lt_code		rc = LT_OK;

	if (z->rows == 0)
		return LT_OK;
	if (z->any)
	{
		bool		neg_nan = is_nan(z->zmin, 0);	/* a negative NaN, or only NaNs */
		bool		pos_nan = is_nan(z->zmax, 0) && !neg_nan;

		rc = lt_array_append_slice(z->min, neg_nan ? z->low : z->zmin, 0, 1, err);
		if (rc == LT_OK)
			rc = lt_array_append_slice(z->max, pos_nan || !z->n_nans ? z->zmax : z->nan, 0, 1, err);
	}
	else
	{
		rc = lt_array_append_nulls(z->min, 1, err);
		if (rc == LT_OK)
			rc = lt_array_append_nulls(z->max, 1, err);
	}
	if (rc == LT_OK) rc = push_uint(z->nulls, z->n_nulls, err);
	if (rc == LT_OK) rc = push_uint(z->nans, z->n_nans, err);
	if (rc == LT_OK) rc = push_uint(z->frag, frag, err);
	if (rc == LT_OK) rc = push_uint(z->start, z->first, err);
	if (rc == LT_OK) rc = push_uint(z->len, z->last - z->first + 1, err);
	lt_array_clear(z->zmin);
	lt_array_clear(z->zmax);
	z->any = false;
	z->rows = z->n_nulls = z->n_nans = 0;
	return rc;
}

static lt_code
zone_add(zones *z, const lt_array *col, int64_t i, uint64_t offset, lt_error *err)
{
	if (z->rows == 0)
		z->first = offset;
	z->last = offset;
	z->rows++;
	if (!lt_array_is_valid(col, i))
	{
		z->n_nulls++;
		return LT_OK;
	}
	z->n_nans += is_nan(col, i);
	if (!z->any)
	{
		z->any = true;
		LT_TRY(lt_array_append_slice(z->zmin, col, i, 1, err));
		return lt_array_append_slice(z->zmax, col, i, 1, err);
	}
	if (cmp_slots(col, i, z->zmin, 0) < 0)
	{
		lt_array_clear(z->zmin);
		LT_TRY(lt_array_append_slice(z->zmin, col, i, 1, err));
	}
	if (cmp_slots(col, i, z->zmax, 0) > 0)
	{
		lt_array_clear(z->zmax);
		LT_TRY(lt_array_append_slice(z->zmax, col, i, 1, err));
	}
	return LT_OK;
}

static lt_code
take_zone(void *arg, const lt_array *const *cols, int64_t row, lt_error *err)
{
	zones	   *z = arg;
	lt_array   *dst[7] = {z->min, z->max, z->nulls, z->nans, z->frag, z->start, z->len};

	for (int c = 0; c < 7; c++)
		LT_TRY(lt_array_append_slice(dst[c], cols[c], row, 1, err));
	return LT_OK;
}

/* The zones of the merged index, before the fragments' (Lance's optimize keeps them and adds the new). */
static lt_code
zones_merged(build *b, zones *z, const lt_field *value_field, lt_error *err)
{
	lt_index_entry_sink sink = {NULL, NULL, NULL, take_zone, z};
	lt_array   *cols[7] = {z->min, z->max, z->nulls, z->nans, z->frag, z->start, z->len};
	lt_code		rc;

	if (!b->opts->merge)
		return LT_OK;
	rc = lt_index_read_entries(b->ds, b->opts->merge, value_field, &sink, err);
	if (rc != LT_EUNSUPPORTED)
		return rc;
	for (int c = 0; c < 7; c++)
		lt_array_clear(cols[c]);
	return merge_fallback(b, err);
}

static lt_code
write_zonemap(build *b, lt_error *err)
{
	lt_dataset *ds = b->ds;
	lt_field	mnf, mxf, nuf, naf, frf, stf, lnf, tmp;
	const lt_field *fields[7] = {&mnf, &mxf, &nuf, &naf, &frf, &stf, &lnf};
	const lt_field *scan_fields[1] = {b->column};
	zones		z = {0};
	lt_file_writer *w = NULL;
	char		rpz[32];
	lt_code		rc;

	key_field(&mnf, b->column, "min", 0);
	key_field(&mxf, b->column, "max", 1);
	lt_field_plain(&nuf, "null_count", 2, LT_TYPE_UINT32, "uint32", 4, false);
	lt_field_plain(&naf, "nan_count", 3, LT_TYPE_UINT32, "uint32", 4, false);
	lt_field_plain(&frf, "fragment_id", 4, LT_TYPE_UINT64, "uint64", 8, false);
	lt_field_plain(&stf, "zone_start", 5, LT_TYPE_UINT64, "uint64", 8, false);
	lt_field_plain(&lnf, "zone_length", 6, LT_TYPE_UINT64, "uint64", 8, false);
	key_field(&tmp, b->column, "value", 0);
	rc = lt_array_new(&mnf, &z.min, err);
	if (rc == LT_OK) rc = lt_array_new(&mxf, &z.max, err);
	if (rc == LT_OK) rc = lt_array_new(&nuf, &z.nulls, err);
	if (rc == LT_OK) rc = lt_array_new(&naf, &z.nans, err);
	if (rc == LT_OK) rc = lt_array_new(&frf, &z.frag, err);
	if (rc == LT_OK) rc = lt_array_new(&stf, &z.start, err);
	if (rc == LT_OK) rc = lt_array_new(&lnf, &z.len, err);
	if (rc == LT_OK) rc = lt_array_new(&tmp, &z.zmin, err);
	if (rc == LT_OK) rc = lt_array_new(&tmp, &z.zmax, err);
	if (rc == LT_OK && is_float_type(tmp.type)) rc = float_consts(&tmp, &z.low, &z.nan, err);
	if (rc == LT_OK)
		rc = zones_merged(b, &z, &tmp, err);
	for (size_t f = 0; rc == LT_OK && f < n_frags(b); f++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;
		lt_batch   *bt;
		uint32_t	frag = (uint32_t) frag_at(b, f)->id;

		so.n_fields = 1;
		so.fields = scan_fields;
		rc = lt_fragment_scanner_open(ds, frag_at(b, f), &so, &sc, err);
		while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &bt, err)) == LT_OK && bt)
		{
			for (int64_t r = 0; rc == LT_OK && r < bt->length; r++)
			{
				rc = zone_add(&z, bt->columns[0], r, bt->row_addrs[r] & 0xffffffffu, err);
				if (rc == LT_OK && z.rows == LT_ZONEMAP_ROWS_PER_ZONE)
					rc = zone_flush(&z, frag, err);
			}
			b->out->rows += (uint64_t) bt->length;
			b->rows_read += (uint64_t) bt->length;
			report(b, LT_INDEX_BUILD_READ);
			if (rc == LT_OK)
				rc = check_interrupt(b, err);
		}
		lt_fragment_scanner_free(sc);
		if (rc == LT_OK)
			rc = zone_flush(&z, frag, err);	/* zones never cross fragments */
	}
	if (rc == LT_OK)
		rc = lt_built_index_open_file(b->ds, b->dir, "zonemap.lance", 7, fields, &w, err);
	snprintf(rpz, sizeof(rpz), "%d", LT_ZONEMAP_ROWS_PER_ZONE);
	if (rc == LT_OK)
		rc = lt_file_writer_add_metadata_text(w, "rows_per_zone", rpz, err);
	if (rc == LT_OK && z.min->length > 0)
	{
		lt_array   *cols[7] = {z.min, z.max, z.nulls, z.nans, z.frag, z.start, z.len};

		rc = lt_file_writer_write(w, cols, z.min->length, err);
	}
	if (rc == LT_OK)
		rc = lt_built_index_finish_file(b->out, w, "zonemap.lance", err);
	b->out->entries = (uint64_t) z.min->length;
	lt_file_writer_free(w);
	lt_array_free(z.min);
	lt_array_free(z.max);
	lt_array_free(z.nulls);
	lt_array_free(z.nans);
	lt_array_free(z.frag);
	lt_array_free(z.start);
	lt_array_free(z.len);
	lt_array_free(z.zmin);
	lt_array_free(z.zmax);
	lt_array_free(z.low);
	lt_array_free(z.nan);
	return rc;
}

/* ---- the build -------------------------------------------------------------------- */

void
lt_built_index_clear(lt_built_index *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_files; i++)
		lt_free(b->files[i]);
	lt_free(b->files);
	lt_free(b->file_sizes);
	lt_free(b->fragments);
	lt_free(b->name);
	lt_free(b->details);
	memset(b, 0, sizeof(*b));
}

void
lt_built_index_remove(lt_dataset *ds, const lt_built_index *b)
{
	for (size_t i = 0; i < b->n_files; i++)
	{
		char	   *rel = lt_asprintf("_indices/%s/%s", b->uuid_text, b->files[i]);
		char	   *path = rel ? lt_dataset_path(ds, rel) : NULL;

		if (path)
			lt_store_remove(ds->store, path, NULL);
		lt_free(rel);
		lt_free(path);
	}
}

lt_code
lt_built_index_begin(lt_dataset *ds, const lt_field *column, const char *name, lt_built_index *out, char **dir,
					 lt_error *err)
{
	char	   *rel;

	*dir = NULL;
	lt_uuid_v4(out->uuid, out->uuid_text);
	out->name = name ? lt_strdup(name) : lt_asprintf("%s_idx", column->name);
	out->field_id = column->id;
	out->dataset_version = ds->version;
	if (!out->name)
		return lt_nomem(err);
	if (ds->n_fragments > 0 && !(out->fragments = lt_malloc(ds->n_fragments * sizeof(uint32_t))))
		return lt_nomem(err);
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		if (ds->fragments[i]->id > UINT32_MAX)
			return lt_error_set(err, LT_EUNSUPPORTED, "fragment id %llu does not fit an index's fragment bitmap",
								(unsigned long long) ds->fragments[i]->id);
		out->fragments[out->n_fragments++] = (uint32_t) ds->fragments[i]->id;
	}
	rel = lt_asprintf("_indices/%s/", out->uuid_text);
	*dir = rel ? lt_dataset_path(ds, rel) : NULL;
	lt_free(rel);
	return *dir ? LT_OK : lt_nomem(err);
}

/*
 * A merged segment covers the fragments of the index it takes over (every segment's fragment bitmap as
 * stored, as Lance's optimize records it) and the fragments read.
 */
static lt_code
merged_coverage(const lt_index_build_options *opts, lt_built_index *out, lt_error *err)
{
	const lt_index *m = opts->merge;
	size_t		n = out->n_fragments,
				k = 0;
	uint32_t   *all;

	for (size_t s = 0; s < m->n_segments; s++)
		n += (size_t) m->segments[s].n_fragments;
	if (!(all = lt_malloc((n ? n : 1) * sizeof(uint32_t))))
		return lt_nomem(err);
	for (size_t i = 0; i < out->n_fragments; i++)
		all[k++] = out->fragments[i];
	for (size_t s = 0; s < m->n_segments; s++)
		for (uint64_t i = 0; i < m->segments[s].n_fragments; i++)
			all[k++] = m->segments[s].fragments[i];
	qsort(all, k, sizeof(uint32_t), lt_cmp_u32);
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (n == 0 || all[n - 1] != all[i])
			all[n++] = all[i];
	lt_free(out->fragments);
	out->fragments = all;
	out->n_fragments = n;
	return LT_OK;
}

lt_code
lt_index_build(lt_dataset *ds, const lt_field *column, const lt_index_build_options *opts,
			   lt_built_index *out, lt_error *err)
{
	build		b = {0};
	const char *why;
	lt_code		rc = LT_OK;

	memset(out, 0, sizeof(*out));
	if ((why = lt_index_kind_unfit(ds, opts->kind, column)))
		return lt_error_set(err, LT_EUNSUPPORTED, "cannot build a %s index on column \"%s\" (%s): %s",
							lt_index_kind_name(opts->kind), column->name, column->logical_type, why);
	if (opts->merge && (opts->merge->kind != opts->kind || !opts->merge->field ||
						opts->merge->field->id != column->id || !opts->fragments))
		return lt_error_set(err, LT_EINVALID, "index \"%s\" cannot be merged into a %s index on column \"%s\"",
							opts->merge->name, lt_index_kind_name(opts->kind), column->name);
	b.ds = ds;
	b.column = column;
	b.kind = opts->kind;
	b.max_memory = opts->max_memory ? opts->max_memory : DEFAULT_MAX_MEMORY;
	b.opts = opts;
	b.spill = opts->spill;
	b.out = out;
	out->kind = opts->kind;
	out->index_version = opts->kind == LT_INDEX_LABEL_LIST ? 1 : 0;
	rc = lt_built_index_begin(ds, column, opts->name, out, &b.dir, err);
	if (rc == LT_OK && opts->fragments)
	{
		/* the segment covers the fragments read, not the dataset's */
		lt_free(out->fragments);
		out->n_fragments = 0;
		if (!(out->fragments = lt_malloc((opts->n_fragments ? opts->n_fragments : 1) * sizeof(uint32_t))))
			rc = lt_nomem(err);
		for (size_t i = 0; rc == LT_OK && i < opts->n_fragments; i++)
			out->fragments[out->n_fragments++] = (uint32_t) opts->fragments[i]->id;
	}
	if (rc == LT_OK && opts->merge)
		rc = merged_coverage(opts, out, err);
	if (rc == LT_OK)
	{
		b.rows_total = rows_to_read(&b);
		report(&b, LT_INDEX_BUILD_READ);
	}
	if (rc == LT_OK && opts->kind == LT_INDEX_ZONEMAP)
		rc = write_zonemap(&b, err);	/* reads and writes zone by zone: one step */
	else if (rc == LT_OK)
	{
		rc = gather(&b, err);
		if (rc == LT_OK)
		{
			report(&b, LT_INDEX_BUILD_SORT);
			rc = sort_all(&b, err);
		}
		if (rc == LT_OK)
		{
			report(&b, LT_INDEX_BUILD_WRITE);
			rc = opts->kind == LT_INDEX_BTREE ? write_btree(&b, err) : write_bitmaps(&b, err);
		}
	}
	merge_close(&b);
	for (int i = 0; i < b.n_runs; i++)
		lt_spill_close(b.runs[i]);
	lt_free(b.runs);
	lt_array_free(b.values);
	lt_free(b.ids);
	lt_free(b.perm);
	lt_rowaddr_set_free(b.null_lists);
	lt_free(b.own_frags);
	lt_free(b.dir);
	if (rc != LT_OK)
	{
		lt_built_index_remove(ds, out);
		lt_built_index_clear(out);
		return lt_error_prefix(err, "building index on column \"%s\"", column->name);
	}
	return LT_OK;
}
