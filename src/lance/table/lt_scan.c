/*
 * lt_scan.c — fragment scanner: projection, deletions, row ids, batching.
 *
 * A batch is assembled as runs of consecutive live physical rows; each
 * projected field reader appends run after run, so deleted rows are never
 * copied and random access reads only the runs asked for.  With a filter,
 * the filter's columns are read for those runs, and the projected fields
 * only for the runs of rows that pass.
 */
#include "table/lt_scan.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_deletion.h"
#include "file/lt_file.h"
#include "file/lt_file_cache.h"
#include "table/lt_rowids.h"
#include "proto/lt_table.pb-c.h"

/* Offsets this dense (one per this many rows, or more) read whole pages. */
#define LT_DENSE_OFFSETS 256

typedef lt_row_run run;

struct lt_fragment_scanner
{
	lt_dataset *ds;
	const Lt__Pb__DataFragment *frag;
	lt_scan_options opts;
	uint64_t	physical_rows;
	uint64_t	n_batches;		/* batches planned so far */

	/* open data files, by index in frag->files (NULL until needed) */
	lt_file   **files;
	bool	   *cached;			/* files[j] is held from opts.file_cache (released, not closed) */
	lt_field_reader **readers;	/* one per projected field */

	uint32_t   *deleted;		/* ascending */
	uint64_t	n_deleted;
	uint64_t	del_pos;		/* first deleted offset >= pos */
	uint64_t   *row_ids;		/* stable row ids by physical offset, or NULL */

	uint64_t	pos;			/* range mode: next physical row */
	uint64_t	end;
	uint64_t	off_pos;		/* offsets mode: next index into opts.offsets */

	run		   *runs;
	size_t		n_runs, runs_cap;
	lt_batch	batch;
	uint64_t	batch_cap;

	/* filter: readers and arrays of its columns, the passing rows and their runs */
	int			n_fcols;
	lt_field_reader **freaders;
	lt_array  **fcols;
	int		   *alias;			/* per projected field: the filter column it is, or -1 */
	lt_array  **dense;			/* per projected field: whole-batch scratch for dense selections */
	uint32_t   *sel;
	int64_t    *take;
	run		   *pruns;
	size_t		n_pruns, pruns_cap;
	lt_scan_stats stats;
};

/* Collect the ids of field and its descendants. */
static bool
subtree_has_id(const lt_field *f, const int32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == f->id && f->id >= 0)
			return true;
	for (int c = 0; c < f->n_children; c++)
		if (subtree_has_id(f->children[c], ids, n))
			return true;
	return false;
}

static lt_code
open_reader(lt_fragment_scanner *sc, const lt_field *field, lt_field_reader **out, lt_error *err)
{
	const Lt__Pb__DataFragment *frag = sc->frag;
	lt_column_map map;
	int64_t		j;

	/*
	 * The first data file holding the field supplies it, as Lance picks it.  Lance never lists a field in two
	 * data files of a fragment (a replaced column's old file gets -2 in its place), except in datasets damaged
	 * by lance < 0.11's add_columns / drop_columns (field ids reused: the Lance repository's
	 * v0.10.5/corrupt_schema), whose rows Lance reads from the first file: so does this.
	 */
	for (j = 0; j < (int64_t) frag->n_files; j++)
		if (subtree_has_id(field, frag->files[j]->fields, frag->files[j]->n_fields))
			break;
	if (j == (int64_t) frag->n_files)
	{
		LT_TRY(lt_null_reader_open(NULL, field, out, err));
		(*out)->num_rows = sc->physical_rows;
		return LT_OK;
	}
	if (!sc->files[j])
	{
		const Lt__Pb__DataFile *d = frag->files[j];
		char	   *rel = lt_concat3("data/", d->path, "");
		char	   *path = rel ? lt_dataset_file_path(sc->ds, d->has_base_id, d->base_id, rel) : NULL;
		lt_code		rc;

		lt_free(rel);
		if (!path)
			return lt_nomem(err);
		if (sc->opts.file_cache)
		{
			bool		owned;

			rc = lt_file_cache_get(sc->opts.file_cache, sc->ds->store, path, &sc->files[j], &owned, err);
			sc->cached[j] = rc == LT_OK && !owned;
		}
		else
			rc = lt_file_open(sc->ds->store, path, &sc->files[j], err);
		lt_free(path);
		LT_TRY(rc);
		/* a shared file takes no scan's buffer pool: its readers' buffers would go back to another's */
		if (!sc->cached[j])
			sc->files[j]->bufpool = sc->opts.bufpool;
		if (sc->files[j]->num_rows != sc->physical_rows && sc->files[j]->version != LT_FILE_LEGACY)
			return lt_corrupt(err, "%s: file has %llu rows but fragment %llu has %llu", sc->files[j]->path,
							  (unsigned long long) sc->files[j]->num_rows, (unsigned long long) frag->id,
							  (unsigned long long) sc->physical_rows);
	}
	map.n = (int) frag->files[j]->n_fields;
	map.field_ids = frag->files[j]->fields;
	map.columns = frag->files[j]->n_column_indices ? frag->files[j]->column_indices : NULL;
	LT_TRY(lt_field_reader_open(sc->files[j], field, &map, out, err));
	(*out)->num_rows = sc->physical_rows;
	/*
	 * Offsets at least one in LT_DENSE_OFFSETS of the rows touch nearly every chunk of a page
	 * (chunks hold hundreds of rows or more): windows would fetch parts of each page, then all of it.
	 */
	(*out)->whole_pages = sc->opts.offsets && sc->opts.n_offsets * LT_DENSE_OFFSETS >= sc->physical_rows;
	if (sc->opts.offsets)
		(*out)->row_gap = sc->physical_rows / (sc->opts.n_offsets ? sc->opts.n_offsets : 1);
	return LT_OK;
}

lt_code
lt_fragment_deleted_offsets(lt_dataset *ds, const Lt__Pb__DataFragment *frag, uint32_t **offsets,
							uint64_t *n, lt_error *err)
{
	const Lt__Pb__DeletionFile *df = frag->deletion_file;
	lt_deletion_type type;
	char	   *rel;
	char	   *path;
	uint8_t    *buf;
	uint64_t	len;
	lt_deletion_vector *dv;
	lt_code		rc;

	*offsets = NULL;
	*n = 0;
	for (size_t lo = 0, hi = ds->n_dv_overrides; lo < hi;)
	{
		size_t		mid = lo + (hi - lo) / 2;
		const lt_dv_override *o = &ds->dv_overrides[mid];

		if (o->fragment_id == frag->id)
		{
			if (o->n == 0)
				return LT_OK;
			if (!(*offsets = lt_malloc(o->n * sizeof(uint32_t))))
				return lt_nomem(err);
			memcpy(*offsets, o->offsets, o->n * sizeof(uint32_t));
			*n = o->n;
			return LT_OK;
		}
		if (o->fragment_id < frag->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!df)
		return LT_OK;
	type = df->file_type == LT__PB__DELETION_FILE__FILE_TYPE__BITMAP ? LT_DELETION_BITMAP : LT_DELETION_ARROW;
	rel = lt_deletion_path(frag->id, df->read_version, df->id, type);
	path = rel ? lt_dataset_file_path(ds, df->has_base_id, df->base_id, rel) : NULL;
	lt_free(rel);
	if (!path)
		return lt_nomem(err);
	rc = lt_store_read_all(ds->store, path, LT_DELETION_MAX_FILE, &buf, &len, err);
	if (rc == LT_OK)
	{
		rc = lt_deletion_parse(buf, len, type, df->num_deleted_rows, frag->physical_rows, path, &dv, err);
		lt_free(buf);
	}
	lt_free(path);
	LT_TRY(rc);
	/* keep the offsets, drop the wrapper */
	*offsets = dv->offsets;
	*n = dv->count;
	dv->offsets = NULL;
	dv->count = 0;
	lt_deletion_free(dv);
	return LT_OK;
}

/* Stable row ids of every physical row, from the inline or external sequence. */
static lt_code
load_row_ids(lt_dataset *ds, const Lt__Pb__DataFragment *frag, uint64_t **ids, lt_error *err)
{
	lt_code		rc;

	*ids = NULL;
	if (frag->row_id_sequence_case == LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS)
		rc = lt_rowids_decode(frag->inline_row_ids.data, frag->inline_row_ids.len, frag->physical_rows, ids, err);
	else if (frag->row_id_sequence_case == LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_EXTERNAL_ROW_IDS)
	{
		const Lt__Pb__ExternalFile *ext = frag->external_row_ids;
		char	   *path = ext->path ? lt_dataset_path(ds, ext->path) : NULL;
		lt_rfile   *f = NULL;
		uint8_t    *buf = NULL;

		if (!path)
			return ext->path ? lt_nomem(err) : lt_corrupt(err, "fragment %llu: external row ids without a path",
														   (unsigned long long) frag->id);
		rc = lt_store_open_file(ds->store, path, &f, err);
		if (rc == LT_OK && ext->size > ((uint64_t) 1 << 32))
			rc = lt_corrupt(err, "%s: row-id sequence of %llu bytes", path, (unsigned long long) ext->size);
		if (rc == LT_OK && !(buf = lt_malloc(ext->size ? ext->size : 1)))
			rc = lt_nomem(err);
		if (rc == LT_OK)
			rc = lt_rfile_read(f, ext->offset, ext->size, buf, err);
		if (rc == LT_OK)
			rc = lt_rowids_decode(buf, ext->size, frag->physical_rows, ids, err);
		lt_free(buf);
		lt_rfile_close(f);
		lt_free(path);
	}
	else
		return lt_corrupt(err, "fragment %llu has no row ids although the dataset uses stable row ids",
						  (unsigned long long) frag->id);
	if (rc != LT_OK)
		lt_error_prefix(err, "row ids of fragment %llu", (unsigned long long) frag->id);
	return rc;
}

/* Readers and arrays for the filter's columns; which projected fields they are. */
static lt_code
open_filter(lt_fragment_scanner *sc, lt_error *err)
{
	lt_filter  *flt = sc->opts.filter;
	const lt_field *const *cols = lt_filter_columns(flt);
	int			n = lt_filter_n_columns(flt);
	int			np = sc->opts.n_fields;

	sc->n_fcols = n;
	sc->freaders = lt_calloc(n ? n : 1, sizeof(lt_field_reader *));
	sc->fcols = lt_calloc(n ? n : 1, sizeof(lt_array *));
	sc->alias = lt_calloc(np ? np : 1, sizeof(int));
	sc->dense = lt_calloc(np ? np : 1, sizeof(lt_array *));
	if (!sc->freaders || !sc->fcols || !sc->alias || !sc->dense)
		return lt_nomem(err);
	for (int j = 0; j < n; j++)
	{
		bool		top = false;

		for (int k = 0; k < sc->ds->schema->n_fields && !top; k++)
			top = sc->ds->schema->fields[k] == cols[j];
		if (!top)
			return lt_error_set(err, LT_EINVALID, "filter column \"%s\" is not a top-level field of the dataset",
								cols[j]->name);
		LT_TRY(open_reader(sc, cols[j], &sc->freaders[j], err));
		LT_TRY(lt_array_new(cols[j], &sc->fcols[j], err));
	}
	for (int i = 0; i < np; i++)
	{
		sc->alias[i] = -1;
		for (int j = 0; j < n && sc->alias[i] < 0; j++)
			if (sc->opts.fields[i] == cols[j])
				sc->alias[i] = j;
	}
	return LT_OK;
}

lt_code
lt_fragment_scanner_open(lt_dataset *ds, const Lt__Pb__DataFragment *frag, const lt_scan_options *opts,
						 lt_fragment_scanner **out, lt_error *err)
{
	lt_fragment_scanner *sc = lt_calloc(1, sizeof(lt_fragment_scanner));
	lt_code		rc = LT_OK;
	int			i;

	*out = NULL;
	if (!sc)
		return lt_nomem(err);
	sc->ds = ds;
	sc->frag = frag;
	sc->opts = *opts;
	if (sc->opts.batch_rows == 0)
		sc->opts.batch_rows = LT_DEFAULT_BATCH_ROWS;
	sc->physical_rows = frag->physical_rows;
	sc->files = lt_calloc(frag->n_files ? frag->n_files : 1, sizeof(lt_file *));
	sc->cached = lt_calloc(frag->n_files ? frag->n_files : 1, sizeof(bool));
	sc->readers = lt_calloc(opts->n_fields ? opts->n_fields : 1, sizeof(lt_field_reader *));
	sc->batch.columns = lt_calloc(opts->n_fields ? opts->n_fields : 1, sizeof(lt_array *));
	if (!sc->files || !sc->cached || !sc->readers || !sc->batch.columns)
		rc = lt_nomem(err);
	sc->batch.n_columns = opts->n_fields;

	sc->pos = opts->range_start;
	sc->end = opts->range_end ? opts->range_end : sc->physical_rows;
	if (rc == LT_OK && (sc->end > sc->physical_rows || sc->pos > sc->end))
		rc = lt_error_set(err, LT_EINVALID, "rows [%llu, %llu) outside fragment %llu of %llu rows",
						  (unsigned long long) sc->pos, (unsigned long long) sc->end,
						  (unsigned long long) frag->id, (unsigned long long) sc->physical_rows);
	for (uint64_t k = 0; rc == LT_OK && opts->offsets && k < opts->n_offsets; k++)
		if (opts->offsets[k] >= sc->physical_rows || (k > 0 && opts->offsets[k] <= opts->offsets[k - 1]))
			rc = lt_error_set(err, LT_EINVALID, "row offsets must ascend within fragment %llu",
							  (unsigned long long) frag->id);

	if (rc == LT_OK)
		rc = lt_fragment_deleted_offsets(ds, frag, &sc->deleted, &sc->n_deleted, err);
	if (rc == LT_OK && opts->want_row_ids && ds->stable_row_ids)
		rc = load_row_ids(ds, frag, &sc->row_ids, err);
	if (rc == LT_OK && opts->filter)
		rc = open_filter(sc, err);
	for (i = 0; rc == LT_OK && i < opts->n_fields; i++)
	{
		/* a projected filter column is read once, by its filter reader */
		if (!sc->alias || sc->alias[i] < 0)
			rc = open_reader(sc, opts->fields[i], &sc->readers[i], err);
		if (rc == LT_OK)
			rc = lt_array_new(opts->fields[i], &sc->batch.columns[i], err);
	}
	if (rc != LT_OK)
	{
		lt_fragment_scanner_free(sc);
		return rc;
	}
	*out = sc;
	return LT_OK;
}

static inline lt_code
push_run_to(run **runs, size_t *n, size_t *cap, uint64_t start, uint64_t len, lt_error *err)
{
	if (*n > 0 && (*runs)[*n - 1].start + (*runs)[*n - 1].len == start)
	{
		(*runs)[*n - 1].len += len;
		return LT_OK;
	}
	if (*n == *cap)
	{
		size_t		c = *cap ? *cap * 2 : 16;
		run		   *r = lt_realloc(*runs, c * sizeof(run));

		if (!r)
			return lt_nomem(err);
		*runs = r;
		*cap = c;
	}
	(*runs)[(*n)++] = (run) {start, len};
	return LT_OK;
}

static lt_code
push_run(lt_fragment_scanner *sc, uint64_t start, uint64_t len, lt_error *err)
{
	return push_run_to(&sc->runs, &sc->n_runs, &sc->runs_cap, start, len, err);
}

static bool
is_deleted(lt_fragment_scanner *sc, uint64_t off)
{
	/* offsets are visited in ascending order, so a cursor suffices */
	while (sc->del_pos < sc->n_deleted && sc->deleted[sc->del_pos] < off)
		sc->del_pos++;
	return sc->del_pos < sc->n_deleted && sc->deleted[sc->del_pos] == off;
}

/* Plan the next batch as runs of live rows; returns the number of rows. */
static lt_code
plan_batch(lt_fragment_scanner *sc, uint64_t *rows, lt_error *err)
{
	uint64_t	want;
	uint64_t	got = 0;

	/* a small first batch lets a LIMIT read only the first chunks of each page */
	want = sc->n_batches++ == 0 && sc->opts.first_batch_rows ? sc->opts.first_batch_rows : sc->opts.batch_rows;

	sc->n_runs = 0;
	if (sc->opts.offsets)
	{
		while (got < want && sc->off_pos < sc->opts.n_offsets)
		{
			uint64_t	off = sc->opts.offsets[sc->off_pos++];

			if (!is_deleted(sc, off))
			{
				LT_TRY(push_run(sc, off, 1, err));
				got++;
			}
			else
				sc->stats.rows_deleted++;
		}
	}
	else
	{
		while (got < want && sc->pos < sc->end)
		{
			uint64_t	stop;

			/* skip deleted rows at pos */
			if (is_deleted(sc, sc->pos))
			{
				sc->pos++;
				sc->stats.rows_deleted++;
				continue;
			}
			/* live rows extend to the next deletion, the end, or the batch size */
			stop = sc->del_pos < sc->n_deleted ? sc->deleted[sc->del_pos] : sc->end;
			if (stop > sc->end)
				stop = sc->end;
			if (stop - sc->pos > want - got)
				stop = sc->pos + (want - got);
			LT_TRY(push_run(sc, sc->pos, stop - sc->pos, err));
			got += stop - sc->pos;
			sc->pos = stop;
		}
	}
	*rows = got;
	sc->stats.rows_scanned += got;
	return LT_OK;
}

/* Room for `rows` addresses (and row ids, and filter selections) in the batch. */
static lt_code
reserve_batch(lt_fragment_scanner *sc, uint64_t rows, lt_error *err)
{
	if (rows <= sc->batch_cap)
		return LT_OK;
	{
		uint64_t   *a = lt_realloc(sc->batch.row_addrs, rows * sizeof(uint64_t));

		if (!a)
			return lt_nomem(err);
		sc->batch.row_addrs = a;
	}
	if (sc->opts.want_row_ids)
	{
		uint64_t   *b = lt_realloc(sc->batch.row_ids, rows * sizeof(uint64_t));

		if (!b)
			return lt_nomem(err);
		sc->batch.row_ids = b;
	}
	if (sc->opts.filter)
	{
		uint32_t   *s = lt_realloc(sc->sel, rows * sizeof(uint32_t));
		int64_t    *t;

		if (!s)
			return lt_nomem(err);
		sc->sel = s;
		t = lt_realloc(sc->take, rows * sizeof(int64_t));
		if (!t)
			return lt_nomem(err);
		sc->take = t;
	}
	sc->batch_cap = rows;
	return LT_OK;
}

/* Addresses and row ids of the planned runs. */
static void
fill_addrs(lt_fragment_scanner *sc)
{
	/* locals: the stores into the batch could alias the scanner's fields for the compiler */
	uint64_t	hi = sc->frag->id << 32;
	uint64_t   *addrs = sc->batch.row_addrs;
	uint64_t	k = 0;

	for (size_t r = 0; r < sc->n_runs; r++)
	{
		uint64_t	o = sc->runs[r].start,
					end = o + sc->runs[r].len;

		for (; o < end; o++, k++)
			addrs[k] = hi | o;
	}
	if (sc->opts.want_row_ids)
	{
		uint64_t   *ids = sc->batch.row_ids;
		const uint64_t *row_ids = sc->row_ids;

		for (uint64_t i = 0; i < k; i++)
			ids[i] = row_ids ? row_ids[addrs[i] & 0xffffffffu] : addrs[i];
	}
}

/*
 * Read `runs` of one field into a (cleared first); they must add up to `rows`.  room: the
 * caller asked for header room (lt_scan_options.room), which a gets where its reader can.
 */
static lt_code
read_runs(lt_fragment_scanner *sc, lt_field_reader *rd, const lt_field *field, const run *runs, size_t n_runs,
		  uint64_t rows, lt_array *a, bool room, lt_error *err)
{
	lt_array_clear(a);
	if (room && rd->room_ok)
		a->room = LT_ARRAY_ROOM;
	/* a sparse take: the reader fetches the batch's rows together, not a request each */
	if (rd->row_gap > 1)
		LT_TRY(lt_field_reader_will_read(rd, runs, n_runs, err));
	for (size_t r = 0; r < n_runs; r++)
	{
		lt_code		rc = lt_field_reader_read(rd, runs[r].start, runs[r].len, a, err);

		if (rc != LT_OK)
			return lt_error_prefix(err, "field \"%s\" of fragment %llu", field->name,
								   (unsigned long long) sc->frag->id);
	}
	if ((uint64_t) a->length != rows)
		return lt_corrupt(err, "field \"%s\" of fragment %llu yielded %lld rows instead of %llu",
						  field->name, (unsigned long long) sc->frag->id,
						  (long long) a->length, (unsigned long long) rows);
	return LT_OK;
}

/* Whether the caller asked for header room in field i's arrays. */
#define ROOM(sc, i) ((sc)->opts.room != NULL && (sc)->opts.room[i])

#define GATHER(T) \
	do { \
		const T    *s_ = (const T *) src->values; \
		T		   *d_ = (T *) dst->values + dst->length; \
		for (int64_t k = 0; k < n; k++) d_[k] = s_[idx[k]]; \
	} while (0)

/*
 * Append src[idx[0]], src[idx[1]], ... to dst.  Flat columns get a typed
 * gather (lt_array_append_take copies run by run, slow for scattered rows);
 * nested ones go through lt_array_append_take.
 */
static lt_code
gather(lt_array *dst, const lt_array *src, const uint32_t *idx, const int64_t *take, int64_t n, lt_error *err)
{
	lt_type_id	t = src->field->type;
	int			w = src->field->byte_width;

	if (lt_type_is_nested(t) || (w == 0 && !lt_type_is_var_width(t)))
		return lt_array_append_take(dst, src, take, n, err);
	LT_TRY(lt_array_reserve(dst, n, err));
	if (src->validity)
	{
		int64_t		nulls = 0;

		LT_TRY(lt_array_ensure_validity(dst, err));
		for (int64_t k = 0; k < n; k++)
		{
			uint8_t		v = src->validity[idx[k]];

			dst->validity[dst->length + k] = v;
			nulls += !v;
		}
		dst->null_count += nulls;
	}
	else if (dst->validity)
		memset(dst->validity + dst->length, 1, (size_t) n);
	if (w > 0)
	{
		switch (w)
		{
			case 1:
				GATHER(uint8_t);
				break;
			case 2:
				GATHER(uint16_t);
				break;
			case 4:
				GATHER(uint32_t);
				break;
			case 8:
				GATHER(uint64_t);
				break;
			default:
				for (int64_t k = 0; k < n; k++)
					memcpy(dst->values + (dst->length + k) * w, src->values + (int64_t) idx[k] * w, (size_t) w);
				break;
		}
	}
	else
	{
		int64_t		bytes = 0;

		for (int64_t k = 0; k < n; k++)
			bytes += src->offsets[idx[k] + 1] - src->offsets[idx[k]];
		LT_TRY(lt_array_reserve_data(dst, bytes, err));
		for (int64_t k = 0; k < n; k++)
		{
			int64_t		lo = src->offsets[idx[k]];
			int64_t		len = src->offsets[idx[k] + 1] - lo;

			if (len > 0)
				memcpy(dst->data + dst->data_len, src->data + lo, (size_t) len);
			dst->data_len += len;
			dst->offsets[dst->length + k + 1] = dst->data_len;
		}
	}
	dst->length += n;
	return LT_OK;
}

/*
 * Passing rows in more runs than rows / DENSE_RUNS_DIVISOR (8 runs in a
 * batch of 8192) are read whole and gathered: readers decode a page at a
 * time anyway, and measured on bench/filter's table, per-run reads cost more
 * than copying the rows in between already from 8-16 runs a batch.
 */
#ifndef DENSE_RUNS_DIVISOR
#define DENSE_RUNS_DIVISOR 1024
#endif

/* The next batch of a filtered scan: filter columns, evaluation, then the rest for passing rows. */
static lt_code
next_filtered(lt_fragment_scanner *sc, lt_batch **out, lt_error *err)
{
	lt_filter  *flt = sc->opts.filter;
	uint64_t	rows;
	int64_t		n_sel;
	bool		all;
	bool		dense = false;

	for (;;)
	{
		LT_TRY(plan_batch(sc, &rows, err));
		if (rows == 0)
			return LT_OK;
		LT_TRY(reserve_batch(sc, rows, err));
		for (int j = 0; j < sc->n_fcols; j++)
			LT_TRY(read_runs(sc, sc->freaders[j], lt_filter_columns(flt)[j], sc->runs, sc->n_runs, rows,
							 sc->fcols[j], false, err));
		LT_TRY(lt_filter_eval(flt, sc->fcols, (int64_t) rows, sc->sel, &n_sel, err));
		sc->stats.rows_filtered += rows - (uint64_t) n_sel;
		if (n_sel > 0)
			break;
	}
	fill_addrs(sc);
	all = (uint64_t) n_sel == rows;
	if (!all)
	{
		uint64_t	n_runs = 1;

		/* compact addresses and row ids to the passing rows */
		for (int64_t k = 0; k < n_sel; k++)
		{
			uint32_t	i = sc->sel[k];

			sc->batch.row_addrs[k] = sc->batch.row_addrs[i];
			if (sc->opts.want_row_ids)
				sc->batch.row_ids[k] = sc->batch.row_ids[i];
			sc->take[k] = i;
			n_runs += k > 0 && i != sc->sel[k - 1] + 1;
		}
		dense = n_runs > rows / DENSE_RUNS_DIVISOR;
		/* runs of passing physical offsets, for the sparse path */
		sc->n_pruns = 0;
		for (int64_t k = 0; !dense && k < n_sel; k++)
			LT_TRY(push_run_to(&sc->pruns, &sc->n_pruns, &sc->pruns_cap, sc->batch.row_addrs[k] & 0xffffffffu, 1,
							   err));
	}
	for (int i = 0; i < sc->opts.n_fields; i++)
	{
		lt_array   *a = sc->batch.columns[i];
		const lt_field *field = sc->opts.fields[i];

		if (sc->alias[i] >= 0)
		{
			/* already read for the filter: keep the passing rows */
			lt_array_clear(a);
			if (all)
				LT_TRY(lt_array_append_slice(a, sc->fcols[sc->alias[i]], 0, (int64_t) rows, err));
			else
				LT_TRY(gather(a, sc->fcols[sc->alias[i]], sc->sel, sc->take, n_sel, err));
		}
		else if (all)
			LT_TRY(read_runs(sc, sc->readers[i], field, sc->runs, sc->n_runs, rows, a, ROOM(sc, i), err));
		else if (dense)
		{
			if (!sc->dense[i])
				LT_TRY(lt_array_new(field, &sc->dense[i], err));
			LT_TRY(read_runs(sc, sc->readers[i], field, sc->runs, sc->n_runs, rows, sc->dense[i], false, err));
			lt_array_clear(a);
			LT_TRY(gather(a, sc->dense[i], sc->sel, sc->take, n_sel, err));
		}
		else
			LT_TRY(read_runs(sc, sc->readers[i], field, sc->pruns, sc->n_pruns, (uint64_t) n_sel, a, ROOM(sc, i),
							 err));
	}
	sc->batch.length = n_sel;
	*out = &sc->batch;
	return LT_OK;
}

lt_code
lt_fragment_scanner_next(lt_fragment_scanner *sc, lt_batch **out, lt_error *err)
{
	uint64_t	rows;
	int			i;

	*out = NULL;
	if (sc->opts.filter)
		return next_filtered(sc, out, err);
	LT_TRY(plan_batch(sc, &rows, err));
	if (rows == 0)
		return LT_OK;
	LT_TRY(reserve_batch(sc, rows, err));
	fill_addrs(sc);
	for (i = 0; i < sc->opts.n_fields; i++)
		LT_TRY(read_runs(sc, sc->readers[i], sc->opts.fields[i], sc->runs, sc->n_runs, rows,
						 sc->batch.columns[i], ROOM(sc, i), err));
	sc->batch.length = (int64_t) rows;
	*out = &sc->batch;
	return LT_OK;
}

uint64_t
lt_fragment_scanner_pages(const lt_fragment_scanner *sc)
{
	uint64_t	n = 0;

	for (int i = 0; i < sc->opts.n_fields; i++)
		if (sc->readers[i])
			n += sc->readers[i]->pages_decoded;
	for (int j = 0; j < sc->n_fcols; j++)
		if (sc->freaders[j])
			n += sc->freaders[j]->pages_decoded;
	return n;
}

void
lt_fragment_scanner_stats(const lt_fragment_scanner *sc, lt_scan_stats *out)
{
	*out = sc->stats;
	out->pages = lt_fragment_scanner_pages(sc);
}

void
lt_fragment_scanner_free(lt_fragment_scanner *sc)
{
	if (!sc)
		return;
	for (int i = 0; i < sc->opts.n_fields; i++)
	{
		if (sc->readers)
			lt_field_reader_free(sc->readers[i]);
		if (sc->batch.columns)
			lt_array_free(sc->batch.columns[i]);
		if (sc->dense)
			lt_array_free(sc->dense[i]);
	}
	for (int j = 0; j < sc->n_fcols; j++)
	{
		if (sc->freaders)
			lt_field_reader_free(sc->freaders[j]);
		if (sc->fcols)
			lt_array_free(sc->fcols[j]);
	}
	lt_free(sc->freaders);
	lt_free(sc->fcols);
	lt_free(sc->alias);
	lt_free(sc->dense);
	lt_free(sc->sel);
	lt_free(sc->take);
	lt_free(sc->pruns);
	for (size_t j = 0; sc->files && j < sc->frag->n_files; j++)
	{
		if (sc->cached && sc->cached[j])
			lt_file_cache_release(sc->opts.file_cache, sc->files[j]);
		else
			lt_file_close(sc->files[j]);
	}
	lt_free(sc->files);
	lt_free(sc->cached);
	lt_free(sc->readers);
	lt_free(sc->batch.columns);
	lt_free(sc->batch.row_addrs);
	lt_free(sc->batch.row_ids);
	lt_free(sc->deleted);
	lt_free(sc->row_ids);
	lt_free(sc->runs);
	lt_free(sc);
}
