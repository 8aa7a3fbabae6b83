/*
 * analyze.c — ANALYZE of a foreign table by random access.
 *
 * The sample is uniform over the live rows of the version ANALYZE reads (the snapshot rules of
 * dataset.c): the manifest gives every fragment's live-row count, so the total is known without
 * reading data; targrows distinct ranks are drawn among the live rows (Floyd's algorithm), each
 * rank is mapped to its fragment and, through the fragment's deletion vector, to its physical
 * offset; then every fragment holding sampled rows is read with the library's random-access path
 * (lt_fragment_scanner with `offsets`), which reads only the pages (legacy files: the values) that
 * hold those rows. Fragments without a sampled row are never opened. The rows come back in
 * physical order as HeapTuples; totalrows is the exact live-row count of the manifest, and
 * totaldeadrows the rows deletion vectors remove.
 *
 * What the last ANALYZE of this backend read is kept for lt_last_analyze() (and printed by
 * ANALYZE VERBOSE).
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "analyze.h"
#include "assign.h"
#include "convert.h"
#include "dataset.h"
#include "option.h"
#include "scan.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "util/lt_sort.h"

PG_FUNCTION_INFO_V1(lt_last_analyze);

/* What the last ANALYZE of an lt_fdw table in this backend did (lt_last_analyze()). */
typedef struct LtAnalyzeInfo
{
	Oid			relid;
	uint64		version;
	uint64		live_rows;
	uint64		deleted_rows;
	int			sample_rows;
	int			fragments;
	int			fragments_read;
	uint64		bytes_read;
	uint64		read_requests;
} LtAnalyzeInfo;

static LtAnalyzeInfo last_analyze;

/* The state of one sampling pass. */
typedef struct LtSampler
{
	Relation	rel;
	LtTableOptions opts;
	LtDatasetEntry *entry;
	LtColumnBinding cols;
	lt_fragment_scanner *scanner;
	MemoryContext lib_cxt;
	const LtScanColumn *converting;	/* for the error context */
	uint64		converting_addr;
} LtSampler;

/* ---- the handler's entry point -------------------------------------------------------------- */

static int	lt_acquire_sample_rows(Relation relation, int elevel, HeapTuple *rows, int targrows,
								   double *totalrows, double *totaldeadrows);

bool
ltAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func, BlockNumber *totalpages)
{
	LtTableOptions opts;
	LtDatasetEntry *e;
	TupleDesc	td = RelationGetDescr(relation);
	double		width = 0;
	double		pages;

	lt_get_table_options(RelationGetRelid(relation), &opts);
	lt_check_read_privilege(GetUserId(), RelationGetRelationName(relation), opts.uri);
	e = lt_dataset_acquire(RelationGetRelid(relation), &opts, false);

	/* relpages: the live rows at the declared columns' average width, in blocks */
	for (int i = 0; i < td->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(td, i);

		if (!att->attisdropped)
			width += get_typavgwidth(att->atttypid, att->atttypmod);
	}
	pages = ceil((double) e->live_rows * Max(width, 1) / BLCKSZ);
	*totalpages = (BlockNumber) Min(Max(pages, 1), (double) MaxBlockNumber);
	*func = lt_acquire_sample_rows;
	return true;
}

/* ---- columns -------------------------------------------------------------------------------- */


/* ---- sampling ------------------------------------------------------------------------------- */

/*
 * k distinct ranks drawn uniformly from [0, n), ascending (Floyd's algorithm: k draws, no pass
 * over n). k >= n gives every rank.
 */
static uint64 *
sample_ranks(uint64 n, int k, int *n_out)
{
	uint64	   *out;
	HASHCTL		ctl;
	HTAB	   *seen;
	int			m = 0;

	if ((uint64) k >= n)
	{
		out = palloc(sizeof(uint64) * Max(n, 1));
		for (uint64 i = 0; i < n; i++)
			out[i] = i;
		*n_out = (int) n;
		return out;
	}
	out = palloc(sizeof(uint64) * k);
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(uint64);
	ctl.hcxt = CurrentMemoryContext;
	seen = hash_create("lt_fdw analyze sample", k, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (uint64 j = n - k; j < n; j++)
	{
		uint64		t = pg_prng_uint64_range(&pg_global_prng_state, 0, j);
		bool		found;

		hash_search(seen, &t, HASH_ENTER, &found);
		if (found)
		{
			t = j;				/* j is not in the set yet: every member so far is < j */
			hash_search(seen, &t, HASH_ENTER, &found);
		}
		out[m++] = t;
	}
	hash_destroy(seen);
	qsort(out, m, sizeof(uint64), lt_cmp_u64);
	*n_out = m;
	return out;
}

/* Released with lib_cxt (end of a fragment, or an ERROR): free the scanner and its files. */
static void
sampler_scanner_release(void *arg)
{
	LtSampler  *s = arg;

	if (s->scanner)
	{
		MemoryContext old = lt_alloc_target(s->lib_cxt);

		lt_fragment_scanner_free(s->scanner);
		lt_alloc_target(old);
		s->scanner = NULL;
	}
}

static void
sampler_error_callback(void *arg)
{
	LtSampler  *s = arg;

	if (s->converting)
		errcontext("column \"%s\" of foreign table \"%s\", row address " UINT64_FORMAT " (ANALYZE)",
				   s->converting->attname, RelationGetRelationName(s->rel), s->converting_addr);
}

/*
 * Read the rows at `offsets` (ascending physical offsets of live rows) of one fragment and append
 * them to rows[] as tuples allocated in tuple_cxt.
 */
static int
sample_fragment(LtSampler *s, const Lt__Pb__DataFragment *frag, const uint32 *offsets, uint64 n,
				HeapTuple *rows, int at, int targrows, MemoryContext tuple_cxt, MemoryContext row_cxt)
{
	lt_dataset *ds = s->entry->ds;
	TupleDesc	td = RelationGetDescr(s->rel);
	Datum	   *values = palloc(sizeof(Datum) * Max(td->natts, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(td->natts, 1));
	lt_scan_options so = {0};
	MemoryContextCallback *cb;
	ErrorContextCallback errcb;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;

	so.n_fields = s->cols.n_proj;
	so.fields = s->cols.proj;
	so.want_row_ids = s->cols.want_row_ids;
	so.offsets = offsets;
	so.n_offsets = n;

	MemoryContextReset(s->lib_cxt);
	cb = MemoryContextAlloc(s->lib_cxt, sizeof(MemoryContextCallback));
	cb->func = sampler_scanner_release;
	cb->arg = s;
	MemoryContextRegisterResetCallback(s->lib_cxt, cb);

	old = lt_alloc_target(s->lib_cxt);
	rc = lt_fragment_scanner_open(ds, frag, &so, &s->scanner, &err);
	lt_alloc_target(old);
	ltfdw_bind_blob_sources(&s->cols, ds, frag);
	if (rc != LT_OK)
	{
		s->scanner = NULL;
		lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, s->opts.uri, s->entry->version));
	}

	errcb.callback = sampler_error_callback;
	errcb.arg = s;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	for (;;)
	{
		lt_batch   *batch;

		CHECK_FOR_INTERRUPTS();
		old = lt_alloc_target(s->lib_cxt);
		rc = lt_fragment_scanner_next(s->scanner, &batch, &err);
		lt_alloc_target(old);
		if (rc != LT_OK)
			lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, s->opts.uri, s->entry->version));
		if (batch == NULL)
			break;
		for (int64 r = 0; r < batch->length && at < targrows; r++)
		{
			MemoryContextReset(row_cxt);
			old = MemoryContextSwitchTo(row_cxt);
			memset(nulls, true, sizeof(bool) * td->natts);
			s->converting_addr = batch->row_addrs[r];
			for (int c = 0; c < s->cols.n_columns; c++)
			{
				const LtScanColumn *col = &s->cols.columns[c];
				int			k = col->attnum - 1;

				s->converting = col;
				switch (col->kind)
				{
					case LT_COL_ROWID:
						values[k] = Int64GetDatum((int64) batch->row_ids[r]);
						nulls[k] = false;
						break;
					case LT_COL_ROWADDR:
						values[k] = Int64GetDatum((int64) batch->row_addrs[r]);
						nulls[k] = false;
						break;
					case LT_COL_ASSIGNED:
						values[k] = BoolGetDatum(lt_assign_reader_get(col->assign, batch->row_addrs[r]));
						nulls[k] = false;
						break;
					case LT_COL_FIELD:
						values[k] = lt_conv_datum(col->conv, batch->columns[col->proj], r, &nulls[k]);
						break;
				}
			}
			s->converting = NULL;
			MemoryContextSwitchTo(tuple_cxt);
			rows[at++] = heap_form_tuple(td, values, nulls);
			MemoryContextSwitchTo(old);
		}
	}
	error_context_stack = errcb.previous;
	MemoryContextReset(s->lib_cxt);		/* frees the scanner */
	pfree(values);
	pfree(nulls);
	return at;
}

static int
lt_acquire_sample_rows(Relation relation, int elevel, HeapTuple *rows, int targrows,
					   double *totalrows, double *totaldeadrows)
{
	MemoryContext tuple_cxt = CurrentMemoryContext;
	MemoryContext work_cxt;
	MemoryContext row_cxt;
	MemoryContext old;
	LtSampler	s = {0};
	LtAnalyzeInfo info = {0};
	lt_dataset *ds;
	uint64	   *ranks;
	int			n_ranks;
	int			next = 0;
	int			n_rows = 0;
	uint64		base = 0;
	uint64		bytes0,
				reqs0;

	work_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw analyze", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(work_cxt);
	s.rel = relation;
	lt_get_table_options(RelationGetRelid(relation), &s.opts);
	/* ANALYZE runs as the table's owner: the privilege rule again, for that role */
	lt_check_read_privilege(GetUserId(), RelationGetRelationName(relation), s.opts.uri);
	s.entry = lt_dataset_acquire(RelationGetRelid(relation), &s.opts, true);
	ds = s.entry->ds;
	s.lib_cxt = AllocSetContextCreate(work_cxt, "lt_fdw analyze scanner", ALLOCSET_DEFAULT_SIZES);
	row_cxt = AllocSetContextCreate(work_cxt, "lt_fdw analyze row", ALLOCSET_DEFAULT_SIZES);
	bytes0 = ds->store->bytes_read;
	reqs0 = ds->store->read_requests;

	PG_TRY();
	{
		ltfdw_bind_columns(s.rel, &s.opts, s.entry, NIL, true, &s.cols);

		info.relid = RelationGetRelid(relation);
		info.version = s.entry->version;
		info.fragments = (int) Min(ds->n_fragments, INT_MAX);
		for (size_t i = 0; i < ds->n_fragments; i++)
		{
			uint64		live = lt_fragment_live_rows(ds->fragments[i]);

			info.live_rows += live;
			info.deleted_rows += ds->fragments[i]->physical_rows - live;
		}
		ranks = sample_ranks(info.live_rows, targrows, &n_ranks);

		for (size_t i = 0; i < ds->n_fragments && next < n_ranks; i++)
		{
			const Lt__Pb__DataFragment *frag = ds->fragments[i];
			uint64		live = lt_fragment_live_rows(frag);
			uint64		end = base + live;
			int			first = next;
			uint32	   *offsets;
			uint32_t   *deleted = NULL;
			uint64_t	n_deleted = 0;
			uint64		d = 0;

			while (next < n_ranks && ranks[next] < end)
				next++;
			if (next > first)
			{
				/* live rank -> physical offset: skip the deleted offsets before it */
				if (live < frag->physical_rows)
				{
					MemoryContext lold;
					lt_error	err;
					lt_code		rc;

					MemoryContextReset(s.lib_cxt);
					lold = lt_alloc_target(s.lib_cxt);
					rc = lt_fragment_deleted_offsets(ds, frag, &deleted, &n_deleted, &err);
					lt_alloc_target(lold);
					if (rc != LT_OK)
						lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, s.opts.uri,
												 s.entry->version));
				}
				offsets = palloc(sizeof(uint32) * (next - first));
				for (int k = first; k < next; k++)
				{
					uint64		r = ranks[k] - base;

					while (d < n_deleted && deleted[d] <= r + d)
						d++;
					if (r + d >= frag->physical_rows || r + d > PG_UINT32_MAX)
						ereport(ERROR,
								(errcode(ERRCODE_DATA_CORRUPTED),
								 errmsg("lt_fdw: fragment " UINT64_FORMAT " of dataset %s has fewer live rows than its manifest says",
										frag->id, s.opts.uri)));
					offsets[k - first] = (uint32) (r + d);
				}
				n_rows = sample_fragment(&s, frag, offsets, next - first, rows, n_rows, targrows,
										 tuple_cxt, row_cxt);
				info.fragments_read++;
				pfree(offsets);
			}
			base = end;
		}
	}
	PG_FINALLY();
	{
		MemoryContextReset(s.lib_cxt);	/* frees an open scanner */
		lt_dataset_unpin(s.entry);
	}
	PG_END_TRY();

	info.sample_rows = n_rows;
	info.bytes_read = ds->store->bytes_read - bytes0;
	info.read_requests = ds->store->read_requests - reqs0;
	last_analyze = info;

	*totalrows = (double) info.live_rows;
	*totaldeadrows = (double) info.deleted_rows;
	ereport(elevel,
			(errmsg("\"%s\": sampled %d of " UINT64_FORMAT " live rows (" UINT64_FORMAT " deleted) from %d of %d fragments of version " UINT64_FORMAT ", reading " UINT64_FORMAT " bytes",
					RelationGetRelationName(relation), n_rows, info.live_rows, info.deleted_rows,
					info.fragments_read, info.fragments, info.version, info.bytes_read)));
	MemoryContextSwitchTo(old);
	MemoryContextDelete(work_cxt);
	return n_rows;
}

/* ---- lt_last_analyze() ---------------------------------------------------------------------- */

Datum
lt_last_analyze(PG_FUNCTION_ARGS)
{
	TupleDesc	td;
	Datum		values[9];
	bool		nulls[9] = {0};

	if (get_call_result_type(fcinfo, NULL, &td) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (!OidIsValid(last_analyze.relid))
		PG_RETURN_NULL();
	/* the counts of a table are for those who may read it (the session may have changed role since) */
	if (get_rel_name(last_analyze.relid) != NULL)
		lt_check_table_select(last_analyze.relid);
	values[0] = ObjectIdGetDatum(last_analyze.relid);
	values[1] = Int64GetDatum((int64) last_analyze.version);
	values[2] = Int64GetDatum((int64) last_analyze.live_rows);
	values[3] = Int64GetDatum((int64) last_analyze.deleted_rows);
	values[4] = Int32GetDatum(last_analyze.sample_rows);
	values[5] = Int32GetDatum(last_analyze.fragments);
	values[6] = Int32GetDatum(last_analyze.fragments_read);
	values[7] = Int64GetDatum((int64) last_analyze.bytes_read);
	values[8] = Int64GetDatum((int64) last_analyze.read_requests);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(td), values, nulls)));
}
