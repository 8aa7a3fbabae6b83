/*
 * ann.c — the vector-index half of ORDER BY col <op> q LIMIT k (knn.c holds the whole stream).
 *
 * At the scan's start the dataset's vector index on the column is opened when it can answer the
 * query exactly as Lance would: an IVF index (every segment) whose distance type is the operator's
 * metric (<-> l2, <=> cosine, <#> dot), a real[] query on float32 vectors, a dataset without
 * stable row ids, and lt_fdw.vector_index on.  A search then probes lt_fdw.nprobes partitions of
 * each segment (IVF_HNSW_*: each probed partition's graph searched keeping lt_fdw.ef results),
 * re-ranks lt_fdw.refine_factor x k candidates on the dataset's vectors when the
 * index scores approximately, and leaves out deleted rows and the rows the pushed filter rejects:
 * the prefilter is a row mask of the covered fragments, built once per (re)scan from the scalar
 * index verdicts and the filter evaluated on its columns (as Lance's prefilter), so that a filtered
 * search ranks only rows that pass.  When the mask holds fewer rows than the probes would score
 * (for PQ, a sixteenth of them: codes are cheap to score, scattered vectors are not), ranking the
 * mask exactly is both cheaper and exact: the search says so and knn.c does that.
 */
#include "postgres.h"

#include <dlfcn.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/stat.h>

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "ann.h"
#include "dataset.h"
#include "index.h"
#include "quals.h"
#include "proto/lt_table.pb-c.h"
#include "index/lt_index.h"
#include "index/lt_index_plan.h"
#include "table/lt_scan.h"
#include "util/lt_alloc.h"
#include "util/lt_sort.h"
#include "vector/lt_vcache.h"
#include "vector/lt_vsearch.h"

bool		lt_vector_index = true;
int			lt_nprobes = 20;
int			lt_refine_factor = 0;
int			lt_ef = 0;
int			lt_vector_index_cache_kb = 65536;
char	   *lt_vector_shared_cache_dir = NULL;
int			lt_vector_shared_cache_kb = 1048576;

static MemoryContext vcache_cxt;

/* lt_fdw.vector_index_cache: the budget of the per-backend cache of vector index segments (lt_vcache.h) */
static void
vcache_assign(int newval, void *extra)
{
	lt_allocator a;

	if (vcache_cxt == NULL)
		vcache_cxt = AllocSetContextCreate(TopMemoryContext, "lt_fdw vector index cache", ALLOCSET_DEFAULT_SIZES);
	lt_allocator_in(vcache_cxt, &a);
	lt_vcache_configure(&a, (size_t) newval * 1024);
}

/*
 * The identity of this build of lt_fdw (its shared library's inode, size and time): cache files that
 * another build laid out are never read (vector/lt_vshare.h).
 */
static uint64
build_identity(void)
{
	Dl_info		info;
	struct stat st;
	uint64		h = 0;

	if (dladdr((void *) build_identity, &info) != 0 && info.dli_fname && stat(info.dli_fname, &st) == 0)
		h = ((uint64) st.st_ino * 0x9e3779b97f4a7c15ULL) ^ ((uint64) st.st_size << 20) ^
			((uint64) st.st_mtim.tv_sec * 1000000007ULL) ^ (uint64) st.st_mtim.tv_nsec;
	return h;
}

/*
 * lt_fdw.vector_shared_cache_dir / _size: the directory of vector index cache files every backend maps.
 * The default lies under pg_stat_tmp, whose contents base backups and pg_rewind leave out.
 */
static void
vshare_apply(void)
{
	static uint64 build;
	const char *dir = lt_vector_shared_cache_dir;

	if (build == 0)
		build = build_identity();
	/* a directory that cannot be made or written leaves each backend its own cache (a failed write is a miss later) */
	if (!lt_vcache_configure_shared(lt_vector_shared_cache_kb > 0 ? dir : NULL, (size_t) lt_vector_shared_cache_kb * 1024,
									build))
		ereport(DEBUG1, (errmsg("lt_fdw: vector index shared cache directory \"%s\" not usable: %m", dir)));
}

static void
vshare_dir_assign(const char *newval, void *extra)
{
	lt_vector_shared_cache_dir = (char *) newval;
	vshare_apply();
}

static void
vshare_size_assign(int newval, void *extra)
{
	lt_vector_shared_cache_kb = newval;
	vshare_apply();
}

void
ltfdw_ann_init(void)
{
	DefineCustomIntVariable("lt_fdw.vector_index_cache",
							"Memory per backend for the vector index segments kept decoded across queries.",
							"IVF models (PQ codebooks, SQ bounds, RaBitQ rotations), the probed partitions' codes, HNSW graphs and their metadata; 0 keeps none.",
							&lt_vector_index_cache_kb, 65536, 0, INT_MAX / 2, PGC_USERSET, GUC_UNIT_KB,
							NULL, vcache_assign, NULL);
	DefineCustomStringVariable("lt_fdw.vector_shared_cache_dir",
							   "Directory of the vector index cache files that every backend maps (relative: to the data directory).",
							   "What one backend decodes from a vector index segment is written there once and mapped by the others; empty: each backend keeps its own only.",
							   &lt_vector_shared_cache_dir, "pg_stat_tmp/lt_fdw_vector_cache", PGC_SUSET, 0,
							   NULL, vshare_dir_assign, NULL);
	DefineCustomIntVariable("lt_fdw.vector_shared_cache_size",
							"Bytes of vector index cache files kept in lt_fdw.vector_shared_cache_dir (the least recently used removed first).",
							"Also what one backend maps of them at most; 0 turns the shared cache off.",
							&lt_vector_shared_cache_kb, 1048576, 0, INT_MAX / 2, PGC_SUSET, GUC_UNIT_KB,
							NULL, vshare_size_assign, NULL);
	DefineCustomBoolVariable("lt_fdw.vector_index",
							 "Answers ORDER BY vector <op> query LIMIT k through the dataset's vector index.",
							 "Off: an exact search of every row.",
							 &lt_vector_index, true, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lt_fdw.nprobes",
							"Partitions of each IVF index segment searched (Lance's nprobes).",
							NULL, &lt_nprobes, 20, 1, 1000000, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lt_fdw.refine_factor",
							"Candidates re-ranked on the dataset's vectors, as a multiple of k (0: none; Lance's refine_factor).",
							NULL, &lt_refine_factor, 0, 0, 10000, PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lt_fdw.ef",
							"Results kept by each partition's HNSW graph search (Lance's ef; 0: the engine's default, 1.5 x k x refine_factor).",
							"At least k x refine_factor when set.",
							&lt_ef, 0, 0, 1000000, PGC_USERSET, 0, NULL, NULL, NULL);
}

/* The passing offsets of one covered fragment. */
typedef struct FragMask
{
	uint32		fragment_id;
	bool		all;			/* every live row */
	uint32	   *offsets;		/* ascending */
	uint64		n;
} FragMask;

static int	mask_cmp(const void *a, const void *b);

struct LtAnnState
{
	MemoryContext cxt;			/* the index list, the opened index */
	MemoryContext mask_cxt;		/* the prefilter of this (re)scan */
	lt_index_list *indexes;
	const lt_index *ix;			/* the vector index on the column (usable or not) */
	lt_vindex  *vx;				/* opened: searches go through it */
	const char *why_exact;		/* why not, when there is an index */

	bool		mask_built;
	bool		mask_all;		/* no prefilter: every live row of the covered fragments */
	FragMask   *masks;			/* by fragment id */
	size_t		n_masks;
	uint64		mask_rows;
	const FragMask *last;

	/* EXPLAIN ANALYZE */
	uint64		searches;
	uint64		exact_small_prefilter;
	lt_vsearch_stats stats;
	/* the index cache's answers to this scan's opens and searches: own memory, shared files, decoded */
	uint64		cache_hits,
				cache_shared,
				cache_misses;
};

/* Count the cache's answers since *before (taken with lt_vcache_stats_get) into as. */
static void
cache_count(LtAnnState *as, const lt_vcache_stats *before)
{
	lt_vcache_stats now;

	lt_vcache_stats_get(&now);
	as->cache_hits += now.hits - before->hits;
	as->cache_shared += now.shared_hits - before->shared_hits;
	as->cache_misses += now.misses - before->misses;
}

/* Released with the scan's memory (end or ERROR): close the index, which unpins its cached segments. */
static void
ann_release(void *arg)
{
	LtAnnState *as = arg;
	MemoryContext old = lt_alloc_target(as->cxt);

	lt_vindex_close(as->vx);
	lt_alloc_target(old);
	as->vx = NULL;
#ifdef __GLIBC__
	{
		static uint64 trimmed;
		lt_vcache_stats cs;

		/*
		 * Entries that gave way to the shared files' pages were freed, but glibc keeps freed heap memory
		 * (its mmap threshold grows): hand it back, or the backend holds the index twice.
		 */
		lt_vcache_stats_get(&cs);
		if (cs.given_way_bytes - trimmed > 8 * 1024 * 1024)
		{
			malloc_trim(0);
			trimmed = cs.given_way_bytes;
		}
	}
#endif
}

LtAnnState *
ltfdw_ann_begin(LtScanState *st, const lt_field *field, lt_vmetric metric, lt_vkernel kernel, MemoryContext cxt)
{
	LtAnnState *as = MemoryContextAllocZero(cxt, sizeof(LtAnnState));
	lt_dataset *ds = st->entry->ds;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;

	as->cxt = cxt;
	as->mask_cxt = AllocSetContextCreate(cxt, "lt_fdw ann prefilter", ALLOCSET_DEFAULT_SIZES);
	old = lt_alloc_target(cxt);
	rc = lt_dataset_indexes(ds, &as->indexes, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, st->opts.uri);
	for (size_t i = 0; i < as->indexes->n; i++)
	{
		const lt_index *ix = &as->indexes->items[i];
		lt_vindex  *vx = NULL;
		lt_vcache_stats cs;

		if (!lt_index_is_vector(ix) || ix->field != field)
			continue;
		if (as->ix == NULL)
			as->ix = ix;
		if (!lt_vector_index)
		{
			as->why_exact = "lt_fdw.vector_index is off";
			break;
		}
		/*
		 * float32 and float16 vectors take a real[] query, float64 ones a double precision[] one,
		 * uint8 (binary) ones a smallint[] one (hamming)
		 */
		if (field->n_children != 1 ||
			(kernel == LT_VKERNEL_U8 ? field->children[0]->type != LT_TYPE_UINT8 :
			 kernel == LT_VKERNEL_F64 ? field->children[0]->type != LT_TYPE_FLOAT64 :
			 field->children[0]->type != LT_TYPE_FLOAT32 && field->children[0]->type != LT_TYPE_FLOAT16))
		{
			as->why_exact = kernel == LT_VKERNEL_F64 ? "a double precision[] query on float16 / float32 vectors" :
				"a real[] query on float64 vectors";
			break;
		}
		lt_vcache_stats_get(&cs);
		old = lt_alloc_target(cxt);
		rc = lt_vindex_open(ds, ix, &vx, &err);
		lt_alloc_target(old);
		cache_count(as, &cs);
		if (rc == LT_EUNSUPPORTED)
		{
			as->why_exact = MemoryContextStrdup(cxt, err.msg);
			continue;
		}
		if (rc != LT_OK)
			lt_report(&err, psprintf("vector index %s of dataset %s", ix->name, st->opts.uri));
		if (lt_vindex_metric(vx) != metric)
		{
			as->why_exact = MemoryContextStrdup(cxt, psprintf("its distance type is %s, the operator's %s",
															  lt_vmetric_name(lt_vindex_metric(vx)),
															  lt_vmetric_name(metric)));
			old = lt_alloc_target(cxt);
			lt_vindex_close(vx);
			lt_alloc_target(old);
			continue;
		}
		as->ix = ix;
		as->vx = vx;
		as->why_exact = NULL;
		{
			MemoryContextCallback *cb = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));

			cb->func = ann_release;
			cb->arg = as;
			MemoryContextRegisterResetCallback(cxt, cb);
		}
		break;
	}
	return as;
}

bool
ltfdw_ann_usable(LtAnnState *as)
{
	return as->vx != NULL;
}

void
ltfdw_ann_rescan(LtAnnState *as)
{
	MemoryContextReset(as->mask_cxt);
	as->mask_built = false;
	as->masks = NULL;
	as->n_masks = 0;
	as->last = NULL;
}

bool
ltfdw_ann_mask(LtAnnState *as, uint32 fragment_id, const uint32 **offsets, uint64 *n, bool *all)
{
	FragMask	key = {fragment_id};
	const FragMask *m;

	if (!as->mask_built || as->masks == NULL ||
		(m = bsearch(&key, as->masks, as->n_masks, sizeof(FragMask), mask_cmp)) == NULL)
		return false;
	*offsets = m->offsets;
	*n = m->n;
	*all = m->all;
	return true;
}

bool
ltfdw_ann_covers(LtAnnState *as, uint32 fragment_id)
{
	return as->vx != NULL && lt_vindex_covers(as->vx, fragment_id);
}

/* The rows of fragment i passing the pushed filter (among offsets when given), into m. */
static void
mask_scan(LtScanState *st, size_t i, const uint32 *offsets, uint64 n_offsets, FragMask *m, MemoryContext cxt)
{
	lt_dataset *ds = st->entry->ds;
	MemoryContext lib = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw ann mask scan", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = lt_alloc_target(lib);
	MemoryContext oldcxt = MemoryContextSwitchTo(lib);
	lt_scan_options so = {0};
	lt_fragment_scanner *sc = NULL;
	lt_batch   *b;
	lt_error	err;
	lt_code		rc;
	uint64		cap = n_offsets ? n_offsets : Max(lt_fragment_live_rows(ds->fragments[i]), 1);

	so.filter = ltfdw_filter_for_scan(st->filter);
	so.offsets = offsets;
	so.n_offsets = n_offsets;
	m->offsets = MemoryContextAlloc(cxt, sizeof(uint32) * cap);
	rc = lt_fragment_scanner_open(ds, ds->fragments[i], &so, &sc, &err);
	while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b != NULL)
	{
		for (int64 r = 0; r < b->length && m->n < cap; r++)
			m->offsets[m->n++] = (uint32) b->row_addrs[r];
		CHECK_FOR_INTERRUPTS();
	}
	if (sc)
		lt_fragment_scanner_free(sc);
	MemoryContextSwitchTo(oldcxt);
	lt_alloc_target(old);
	MemoryContextDelete(lib);
	if (rc != LT_OK)
		lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, st->opts.uri, st->entry->version));
}

static int
mask_cmp(const void *a, const void *b)
{
	uint32		x = ((const FragMask *) a)->fragment_id,
				y = ((const FragMask *) b)->fragment_id;

	return x < y ? -1 : x > y;
}

/*
 * The rows of fragment i that the is_assigned quals keep (and the pushed filter passes) into m: true
 * when those quals narrowed the fragment's rows, false when every row of them passes (the caller goes on).
 */
static bool
assign_masked(LtScanState *st, size_t i, const lt_frag_plan *fp, FragMask *m, MemoryContext cxt)
{
	bool		selected = fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_CANDIDATES);
	const uint32 *offsets = selected ? fp->offsets : NULL;
	uint64		n = selected ? fp->n_offsets : 0;

	if (!lt_assign_mask_narrow(&st->amask, st->entry->ds->fragments[i], st->lib_cxt, 0, 0, &offsets, &n))
		m->n = 0;
	else if (offsets != (selected ? fp->offsets : NULL))
		mask_scan(st, i, offsets, n, m, cxt);
	else
		return false;
	return true;
}

/* The prefilter of this (re)scan over the covered fragments. */
static void
build_mask(LtAnnState *as, LtScanState *st)
{
	lt_dataset *ds = st->entry->ds;
	bool		filtered = st->filter != NULL && ltfdw_filter_pushed(st->filter);

	as->masks = MemoryContextAllocZero(as->mask_cxt, sizeof(FragMask) * Max(ds->n_fragments, 1));
	as->n_masks = 0;
	as->mask_rows = 0;
	as->mask_all = true;
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		uint32		id = (uint32) ds->fragments[i]->id;
		const lt_frag_plan *fp = ltfdw_index_verdict(st->index, i);
		FragMask   *m;

		if (!lt_vindex_covers(as->vx, id))
			continue;
		m = &as->masks[as->n_masks++];
		m->fragment_id = id;
		if (fp && fp->verdict == LT_FRAG_PRUNED)
			m->n = 0;
		else if (st->amask.n > 0 && assign_masked(st, i, fp, m, as->mask_cxt))
			;
		else if (fp && fp->verdict == LT_FRAG_ROWS)
		{
			m->offsets = MemoryContextAlloc(as->mask_cxt, sizeof(uint32) * Max(fp->n_offsets, 1));
			memcpy(m->offsets, fp->offsets, sizeof(uint32) * fp->n_offsets);
			m->n = fp->n_offsets;
		}
		else if (fp && fp->verdict == LT_FRAG_CANDIDATES)
			mask_scan(st, i, fp->offsets, fp->n_offsets, m, as->mask_cxt);
		else if ((fp && fp->verdict == LT_FRAG_ALL) || !filtered)
		{
			m->all = true;
			m->n = lt_fragment_live_rows(ds->fragments[i]);
		}
		else
			mask_scan(st, i, NULL, 0, m, as->mask_cxt);
		as->mask_all &= m->all;
		as->mask_rows += m->n;
	}
	qsort(as->masks, as->n_masks, sizeof(FragMask), mask_cmp);
	as->mask_built = true;
}

static bool
mask_accept(uint64 addr, void *arg)
{
	LtAnnState *as = arg;
	uint32		frag = (uint32) (addr >> 32);

	if (as->last == NULL || as->last->fragment_id != frag)
	{
		FragMask	key = {frag};

		as->last = bsearch(&key, as->masks, as->n_masks, sizeof(FragMask), mask_cmp);
		if (as->last == NULL)
			return false;
	}
	{
		uint32		off = (uint32) addr;

		return as->last->all ||
			bsearch(&off, as->last->offsets, as->last->n, sizeof(uint32), lt_cmp_u32) != NULL;
	}
}

bool
ltfdw_ann_search(LtAnnState *as, LtScanState *st, const lt_knn_query *q, lt_topk *topk)
{
	lt_vsearch_params p = {0};
	uint32		parts;
	double		probed;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;
	lt_vcache_stats cs;

	if (as->vx == NULL || q->null_query || q->dim != lt_vindex_dim(as->vx))
		return false;
	if (!as->mask_built)
		build_mask(as, st);
	parts = lt_vindex_partitions(as->vx);
	probed = (double) lt_vindex_covered_rows(as->vx) * Min((uint32) lt_nprobes, parts) / Max(parts, 1);
	/*
	 * Ranking the mask exactly reads each row's whole vector, scattered over the pages; the index's
	 * flat storage costs as much per row, its PQ codes far less: a mask must be that much smaller.
	 */
	if (!lt_vindex_exact_scores(as->vx))
		probed /= 16;
	if (!as->mask_all && (double) as->mask_rows <= probed)
	{
		as->exact_small_prefilter++;
		return false;
	}
	p.nprobes = (uint32) lt_nprobes;
	p.refine_factor = (uint32) lt_refine_factor;
	p.ef = (uint32) lt_ef;
	if (lt_vindex_is_hnsw(as->vx) && lt_ef > 0 && (double) lt_ef < (double) topk->k * Max(lt_refine_factor, 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: lt_fdw.ef %d is less than the %.0f candidates asked of the %s index %s", lt_ef,
						(double) topk->k * Max(lt_refine_factor, 1), lt_vindex_type(as->vx), as->ix->name),
				 errhint("Set lt_fdw.ef to at least k x lt_fdw.refine_factor, or to 0 for the engine's default.")));
	if (!as->mask_all)
	{
		p.accept = mask_accept;
		p.accept_arg = as;
	}
	as->searches++;
	lt_vcache_stats_get(&cs);
	old = lt_alloc_target(as->cxt);
	rc = lt_vindex_search(as->vx, q, &p, topk, &as->stats, &err);
	lt_alloc_target(old);
	cache_count(as, &cs);
	if (rc == LT_ECANCELED)
		CHECK_FOR_INTERRUPTS();
	if (rc != LT_OK)
		lt_report(&err, psprintf("vector index %s of dataset %s", as->ix->name, st->opts.uri));
	return true;
}

void
ltfdw_ann_explain(LtAnnState *as, ExplainState *es, const char *attname, lt_vmetric metric, double limit)
{
	StringInfoData s;

	initStringInfo(&s);
	if (as->vx)
	{
		appendStringInfo(&s, "%s index %s on %s, metric %s", lt_vindex_type(as->vx), quote_identifier(as->ix->name),
						 quote_identifier(attname), lt_vmetric_name(metric));
		if (limit >= 1)
			appendStringInfo(&s, ", k %.0f", limit);
		appendStringInfo(&s, ", nprobes %d", lt_nprobes);
		if (lt_vindex_is_hnsw(as->vx))
		{
			if (lt_ef > 0)
				appendStringInfo(&s, ", ef %d", lt_ef);
			else
				appendStringInfoString(&s, ", ef default");
		}
		if (lt_refine_factor > 0)
			appendStringInfo(&s, ", refine_factor %d", lt_refine_factor);
	}
	else
	{
		appendStringInfo(&s, "exact kNN on %s, metric %s", quote_identifier(attname), lt_vmetric_name(metric));
		if (limit >= 1)
			appendStringInfo(&s, ", k %.0f", limit);
		if (as->ix)
			appendStringInfo(&s, " (index %s not used: %s)", quote_identifier(as->ix->name),
							 as->why_exact ? as->why_exact : "unknown");
	}
	ExplainPropertyText("Vector Search", s.data, es);
	if (es->analyze && as->vx)
	{
		ExplainPropertyUInteger("Index Searches", NULL, as->searches, es);
		if (as->exact_small_prefilter)
			ExplainPropertyUInteger("Exact (Small Prefilter)", NULL, as->exact_small_prefilter, es);
		if (as->mask_built && !as->mask_all)
			ExplainPropertyUInteger("Prefilter Rows", NULL, as->mask_rows, es);
		ExplainPropertyUInteger("Segments Searched", NULL, as->stats.segments, es);
		ExplainPropertyUInteger("Partitions Probed", NULL, as->stats.partitions_probed, es);
		ExplainPropertyUInteger("Index Rows Scored", NULL, as->stats.index_rows_scored, es);
		if (as->stats.rows_refined)
			ExplainPropertyUInteger("Rows Refined", NULL, as->stats.rows_refined, es);
		if (es->format == EXPLAIN_FORMAT_TEXT)
			ExplainPropertyText("Index Cache", psprintf("%llu hits, %llu from shared cache, %llu decoded",
														 (unsigned long long) as->cache_hits,
														 (unsigned long long) as->cache_shared,
														 (unsigned long long) as->cache_misses), es);
		else
		{
			ExplainPropertyUInteger("Index Cache Hits", NULL, as->cache_hits, es);
			ExplainPropertyUInteger("Index Cache Shared Hits", NULL, as->cache_shared, es);
			ExplainPropertyUInteger("Index Cache Decoded", NULL, as->cache_misses, es);
		}
	}
}
