/*
 * knn.c — ORDER BY col <op> q [LIMIT k] answered inside the scan: exact k-nearest-neighbour search.
 *
 * Planning (ltfdw_knn_add_path, from GetForeignPaths): when the query's first sort key is, ascending
 * with NULLS LAST, one of vector.c's distance operators between a column of this table that holds a
 * Lance vector field and a constant or a parameter (a prepared statement's, or a LATERAL outer
 * row's), and the query has a LIMIT, the scan offers a path with that pathkey: it returns the rows
 * already in that order.  Anything else (DESC, another expression, a cast column, no LIMIT, UPDATE /
 * DELETE) gets no such path: Postgres sorts the scan's rows itself.
 *
 * Execution: the scan's output is the *whole* ordered stream, produced lazily.  A round ranks the
 * live rows passing the pushed filter (index verdicts and the filter exactly as a plain scan applies
 * them: filters come before the limit) with a top-K heap over the decoded vectors (the format
 * library's lt_knn: no per-row allocation, the same float arithmetic as the SQL operator), then
 * fetches the ranked rows by address, a group at a time, and returns them in rank order (distance,
 * then row address; NaN after numbers, NULL vectors last).  K starts at the query's LIMIT (plus
 * OFFSET) when the planner knows it, else 100; when the consumer wants more rows than a round ranked
 * (local quals rejected some, a LIMIT parameter), the next round ranks 4K and goes on after the rows
 * already returned (the order is total, so the first rows are the same).  So the stream is always
 * exactly PostgreSQL's ORDER BY, whatever stops reading it.
 *
 * Through a vector index (ann.c): when the dataset's IVF index answers the query, a round searches
 * it (the fragments it does not cover ranked exactly and merged); the answer is the index's, so a
 * later round's ranking need not extend the earlier one: the rows already returned are taken out
 * of it.  A round through the index that finds fewer rows than asked (a selective prefilter) is
 * ranked exactly instead, and so are the rounds after it: never fewer rows than exist.
 *
 * Under parallel workers (a partial path, offered only when no vector index may answer): each
 * process ranks the units of work it claims from the scan's shared state (fragments, or row ranges
 * of big ones), every round the same units, and returns its rows in order; Gather Merge merges them.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/cost.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "knn.h"
#include "ann.h"
#include "assign.h"
#include "vector.h"
#include "convert.h"
#include "dataset.h"
#include "index.h"
#include "option.h"
#include "quals.h"
#include "proto/lt_table.pb-c.h"
#include "index/lt_index_plan.h"
#include "table/lt_scan.h"
#include "util/lt_alloc.h"
#include "util/lt_sort.h"
#include "vector/lt_knn.h"
#include "vector/lt_vsearch.h"
#include "index/lt_index.h"

/* Rows of a fetch group: fetched by address together, returned in rank order. */
#define LT_KNN_FETCH	64
#define LT_KNN_DEFAULT_K 100

/* the knn list of the plan's fdw_private (knn.h's slots) */
enum
{
	KnnAttnum,
	KnnMetric,
	KnnKernel,
	KnnLimit,
	KnnFilterExprs,
	KnnCommuted
};

/* ---- planning --------------------------------------------------------------------------------- */

/* Which of vector.c's functions implements opno: its metric and precision; false for any other. */
static bool
knn_operator(Oid opno, lt_vmetric *metric, lt_vkernel *kernel)
{
	Oid			fn = get_opcode(opno);
	HeapTuple	tup;
	bool		ok = false;

	if (!OidIsValid(fn))
		return false;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		Datum		bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
		static const struct
		{
			const char *name;
			lt_vmetric	metric;
			lt_vkernel	kernel;
		}			fns[] = {
			{"lt_l2_distance_f4", LT_VMETRIC_L2, LT_VKERNEL_F32},
			{"lt_cosine_distance_f4", LT_VMETRIC_COSINE, LT_VKERNEL_F32},
			{"lt_negative_inner_product_f4", LT_VMETRIC_NEG_DOT, LT_VKERNEL_F32},
			{"lt_l2_distance_f8", LT_VMETRIC_L2, LT_VKERNEL_F64},
			{"lt_cosine_distance_f8", LT_VMETRIC_COSINE, LT_VKERNEL_F64},
			{"lt_negative_inner_product_f8", LT_VMETRIC_NEG_DOT, LT_VKERNEL_F64},
			{"lt_hamming_distance_u8", LT_VMETRIC_HAMMING, LT_VKERNEL_U8},
		};

		if (!isnull && strstr(TextDatumGetCString(bin), "lt_fdw") != NULL)
		{
			char	   *s = TextDatumGetCString(src);

			for (int i = 0; i < lengthof(fns); i++)
				if (strcmp(s, fns[i].name) == 0)
				{
					*metric = fns[i].metric;
					*kernel = fns[i].kernel;
					ok = true;
				}
		}
	}
	ReleaseSysCache(tup);
	return ok;
}

static Expr *
strip(Expr *e)
{
	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	return e;
}

/* A query vector: a constant or a parameter (no column of any relation, nothing volatile). */
static bool
query_expr_ok(Expr *e)
{
	e = strip(e);
	return (IsA(e, Const) || IsA(e, Param)) && !contain_var_clause((Node *) e) &&
		!contain_volatile_functions((Node *) e);
}

/* Whether a vector index of the dataset may answer the search (ann.c): then no parallel exact path. */
static bool
index_may_answer(LtDatasetEntry *e, const lt_field *f, lt_vkernel kernel)
{
	lt_index_list *list = NULL;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;
	bool		found = false;

	if (!lt_vector_index || (kernel == LT_VKERNEL_F64) != (f->children[0]->type == LT_TYPE_FLOAT64))
		return false;
	old = lt_alloc_target(CurrentMemoryContext);
	rc = lt_dataset_indexes(e->ds, &list, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		return true;			/* the scan reports it */
	for (size_t i = 0; i < list->n; i++)
		if (lt_index_is_vector(&list->items[i]) && list->items[i].field == f)
			found = true;
	old = lt_alloc_target(CurrentMemoryContext);
	lt_index_list_free(list);
	lt_alloc_target(old);
	return found;
}

/*
 * The same search under parallel workers, when no vector index answers it: each process ranks the
 * units of work it claims (fragments, or row ranges of big ones) and returns its own rows in order;
 * Gather Merge above merges them, the LIMIT above that stops it.
 */
static void
knn_add_partial_path(PlannerInfo *root, RelOptInfo *baserel, LtPlanState *ps, PathKey *pk, Cost startup,
					 List *fdw_private)
{
	double		width = Max(baserel->reltarget->width, 1);
	double		pages = ceil(Max(ps->tuples, 0) * width / BLCKSZ);
	int			workers;
	double		divisor;
	Path	   *path;

	if (!baserel->consider_parallel)
		return;
	workers = compute_parallel_worker(baserel, pages, -1, max_parallel_workers_per_gather);
	if (workers <= 0)
		return;
	divisor = ltfdw_parallel_divisor(workers);
	startup /= divisor;
	path = (Path *) create_foreignscan_path(root, baserel, NULL, clamp_row_est(baserel->rows / divisor), startup,
											startup + cpu_tuple_cost * baserel->rows / divisor,
											list_make1(pk), NULL, NULL, fdw_private);
	path->parallel_aware = true;
	path->parallel_safe = true;
	path->parallel_workers = workers;
	add_partial_path(baserel, path);
}

void
ltfdw_knn_add_path(PlannerInfo *root, RelOptInfo *baserel, LtPlanState *ps, Cost scan_total)
{
	PathKey    *pk;
	ListCell   *lc;
	LtDatasetEntry *e;

	if (!lt_enable_vector_search || root->parse->commandType != CMD_SELECT || root->query_pathkeys == NIL ||
		root->parse->limitCount == NULL || root->parse->rowMarks != NIL)
		return;
	pk = linitial(root->query_pathkeys);
	if (pk->pk_strategy != BTLessStrategyNumber || pk->pk_nulls_first || pk->pk_eclass->ec_has_volatile ||
		get_opfamily_member(pk->pk_opfamily, FLOAT8OID, FLOAT8OID, BTLessStrategyNumber) != Float8LessOperator)
		return;
	e = lt_dataset_acquire(ps->relid, &ps->opts, false);
	foreach(lc, pk->pk_eclass->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);
		Expr	   *x = strip(em->em_expr);
		OpExpr	   *op;
		Var		   *var;
		Expr	   *q;
		bool		commuted = false;
		lt_vkernel	kernel = LT_VKERNEL_F32;
		lt_vmetric	metric = LT_VMETRIC_L2;
		const lt_field *f;
		double		limit;
		Cost		startup,
					total;
		Path	   *path;
		HeapTuple	atup;
		char	   *attname;

		if (!bms_equal(em->em_relids, baserel->relids) || !IsA(x, OpExpr))
			continue;
		op = (OpExpr *) x;
		if (list_length(op->args) != 2 || !knn_operator(op->opno, &metric, &kernel))
			continue;
		var = (Var *) strip(linitial(op->args));
		q = lsecond(op->args);
		if (!IsA(var, Var))
		{
			var = (Var *) strip(lsecond(op->args));
			q = linitial(op->args);
			commuted = true;
		}
		if (!IsA(var, Var) || var->varno != baserel->relid || var->varlevelsup != 0 || var->varattno <= 0 ||
			!query_expr_ok(q))
			continue;
		if (var->vartype != (kernel == LT_VKERNEL_F64 ? FLOAT8ARRAYOID : kernel == LT_VKERNEL_U8 ? INT2ARRAYOID :
							 FLOAT4ARRAYOID))
			continue;
		atup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(ps->relid), Int16GetDatum(var->varattno));
		if (!HeapTupleIsValid(atup))
			continue;
		attname = pstrdup(NameStr(((Form_pg_attribute) GETSTRUCT(atup))->attname));
		ReleaseSysCache(atup);
		f = lt_schema_find_name(e->ds->schema, lt_column_field_name(ps->relid, var->varattno, attname));
		/* smallint[] is also what int8 / int16 lists map to: hamming takes uint8 lists only */
		if (!lt_knn_kernel_ok(f, kernel))
			continue;

		/* the LIMIT (+ OFFSET) when the planner knows it and the query reads this table alone */
		limit = root->limit_tuples > 0 && bms_membership(root->all_baserels) == BMS_SINGLETON ?
			root->limit_tuples : 0;
		/* every row is scored before the first is returned; then only the rows read are fetched */
		startup = scan_total + cpu_operator_cost * Max(ps->tuples, 0) * ps->remote_sel;
		total = startup + cpu_tuple_cost * baserel->rows;
		path = (Path *) create_foreignscan_path(root, baserel, NULL, baserel->rows, startup, total,
												list_make1(pk), NULL, NULL,
												list_make2(list_make5(makeInteger(var->varattno),
																	  makeInteger((int) metric),
																	  makeInteger((int) kernel),
																	  makeFloat(psprintf("%.0f", Min(limit, 1e9))),
																	  makeInteger(commuted ? 1 : 0)),
														   copyObject(q)));
		add_path(baserel, path);
		if (!index_may_answer(e, f, kernel))
			knn_add_partial_path(root, baserel, ps, pk, startup, ((ForeignPath *) path)->fdw_private);
		return;
	}
}

List *
ltfdw_knn_plan(ForeignPath *best_path, List **fdw_exprs)
{
	List	   *knn;
	List	   *out;

	if (best_path->fdw_private == NIL)
		return NIL;
	knn = linitial(best_path->fdw_private);
	out = list_make5(linitial(knn), lsecond(knn), lthird(knn), lfourth(knn),
					 makeInteger(list_length(*fdw_exprs)));
	out = lappend(out, list_nth(knn, 4));
	*fdw_exprs = lappend(*fdw_exprs, lsecond(best_path->fdw_private));
	return out;
}

/* ---- execution -------------------------------------------------------------------------------- */

struct LtKnnState
{
	AttrNumber	attnum;
	const char *attname;
	lt_vmetric	metric;
	lt_vkernel	kernel;		/* the operator's: F32 real[], F64 double precision[], U8 smallint[] */
	bool		commuted;
	double		limit;
	ExprState  *query_state;
	const lt_field *field;

	MemoryContext cxt;			/* the ranking, the query, the rows returned */
	MemoryContext ann_cxt;		/* the vector index, for the whole scan */
	LtAnnState *ann;			/* the index search (ann.c) */
	bool		exact_only;		/* an index round found fewer rows than asked: rank exactly from now on */
	size_t		ranked_n;		/* rows the last round ranked (before the rows returned are taken out) */
	uint64	   *returned;		/* addresses returned so far, when a round may follow */
	size_t		n_returned;
	size_t		cap_returned;
	/* a parallel scan: the units of work this process claimed, ranked again by every later round */
	bool		claimed;
	int			n_units;
	int			cap_units;
	struct
	{
		size_t		fragment;
		uint64		start;
		uint64		end;
	}		   *units;
	MemoryContext lib_cxt;		/* a fragment's library allocations while ranking or fetching */
	MemoryContext rows_cxt;		/* the fetched group's values */
	bool		ranked;
	bool		null_query;
	void	   *query;
	uint32		dim;
	size_t		want;			/* K of the current round */
	lt_topk		topk;
	size_t		next;			/* the next rank to return */
	/* the fetched group: ranks [group_start, group_start + group_len) */
	size_t		group_start;
	int			group_len;
	int			group_pos;
	Datum	   *values;			/* group_len * natts, in rank order */
	bool	   *nulls;

	/* EXPLAIN ANALYZE */
	uint64		rounds;
	uint64		rows_scored;
	uint64		rows_fetched;
	uint64		fragments_ranked;
	uint64		exact_fallbacks;
};

bool		lt_enable_vector_search = true;

void
ltfdw_knn_init(void)
{
	DefineCustomBoolVariable("lt_fdw.enable_vector_search",
							 "Answers ORDER BY vector <op> query LIMIT k inside lt_fdw scans.",
							 "Off: Postgres sorts the scan's rows itself.",
							 &lt_enable_vector_search, true, PGC_USERSET, 0, NULL, NULL, NULL);
	ltfdw_ann_init();
}

List *
ltfdw_knn_private(ForeignScan *fsplan)
{
	return list_length(fsplan->fdw_private) > LT_SCAN_PRIVATE_KNN ?
		(List *) list_nth(fsplan->fdw_private, LT_SCAN_PRIVATE_KNN) : NIL;
}

List	   *
ltfdw_knn_filter_exprs(ForeignScan *fsplan)
{
	List	   *knn = ltfdw_knn_private(fsplan);

	if (knn == NIL)
		return fsplan->fdw_exprs;
	return list_truncate(list_copy(fsplan->fdw_exprs), intVal(list_nth(knn, KnnFilterExprs)));
}

LtKnnState *
ltfdw_knn_begin(ForeignScanState *node, LtScanState *st)
{
	ForeignScan *fsplan = (ForeignScan *) node->ss.ps.plan;
	List	   *knn = ltfdw_knn_private(fsplan);
	LtKnnState *ks;
	Expr	   *q;
	const char *name;
	Form_pg_attribute att;

	if (knn == NIL)
		return NULL;
	ks = palloc0(sizeof(LtKnnState));
	ks->attnum = intVal(list_nth(knn, KnnAttnum));
	ks->metric = (lt_vmetric) intVal(list_nth(knn, KnnMetric));
	ks->kernel = (lt_vkernel) intVal(list_nth(knn, KnnKernel));
	/* a plan copied to a parallel worker (nodeToString / stringToNode) reads "10" back as an Integer */
	ks->limit = IsA(list_nth(knn, KnnLimit), Integer) ? (double) intVal(list_nth(knn, KnnLimit))
		: floatVal(list_nth(knn, KnnLimit));
	ks->commuted = intVal(list_nth(knn, KnnCommuted)) != 0;
	q = list_nth(fsplan->fdw_exprs, intVal(list_nth(knn, KnnFilterExprs)));
	ks->query_state = ExecInitExpr(q, &node->ss.ps);
	att = TupleDescAttr(RelationGetDescr(st->rel), ks->attnum - 1);
	ks->attname = pstrdup(NameStr(att->attname));
	name = lt_column_field_name(RelationGetRelid(st->rel), ks->attnum, NameStr(att->attname));
	ks->field = lt_schema_find_name(st->entry->ds->schema, name);
	if (!lt_knn_kernel_ok(ks->field, ks->kernel))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" is no longer a vector of floats in dataset %s",
						NameStr(att->attname), RelationGetRelationName(st->rel), st->opts.uri),
				 errhint("Plan the query again.")));
	ks->cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw knn", ALLOCSET_DEFAULT_SIZES);
	ks->lib_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw knn scanner", ALLOCSET_DEFAULT_SIZES);
	ks->rows_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw knn rows", ALLOCSET_DEFAULT_SIZES);
	ks->ann_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw ann", ALLOCSET_DEFAULT_SIZES);
	ks->ann = ltfdw_ann_begin(st, ks->field, ks->metric, ks->kernel, ks->ann_cxt);
	return ks;
}

void
ltfdw_knn_rescan(LtKnnState *ks)
{
	MemoryContextReset(ks->cxt);
	MemoryContextReset(ks->rows_cxt);
	ks->ranked = false;
	ks->topk.items = NULL;
	ks->topk.n = ks->topk.k = 0;
	ks->next = 0;
	ks->group_len = ks->group_pos = 0;
	ks->want = 0;
	ks->exact_only = false;
	ks->returned = NULL;
	ks->n_returned = ks->cap_returned = 0;
	ks->ranked_n = 0;
	ks->claimed = false;
	ks->units = NULL;
	ks->n_units = ks->cap_units = 0;
	ltfdw_ann_rescan(ks->ann);
}

/* The query vector of this (re)scan, checked as the SQL operator checks it; false when it is NULL. */
static bool
load_query(LtKnnState *ks, ExprContext *econtext)
{
	bool		isnull;
	Datum		d;
	ArrayType  *a;
	MemoryContext old;

	d = ExecEvalExprSwitchContext(ks->query_state, econtext, &isnull);
	if (isnull)
		return false;
	old = MemoryContextSwitchTo(ks->cxt);
	a = DatumGetArrayTypePCopy(d);
	if (ks->kernel == LT_VKERNEL_U8)
	{
		/* smallint items as the bytes they stand for, checked as hamming_distance checks them */
		ks->query = ltfdw_vector_u8_items(a, &ks->dim);
		MemoryContextSwitchTo(old);
		return true;
	}
	MemoryContextSwitchTo(old);
	if (ARR_NDIM(a) > 1)
		ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION), errmsg("array must be 1-D")));
	if (ARR_HASNULL(a) && array_contains_nulls(a))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("array must not contain nulls")));
	ks->dim = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
	ks->query = ARR_DATA_PTR(a);
	return true;
}

/* A failed scoring of rows, as the SQL operator would fail on them (or the library's error). */
static void
rank_check(LtKnnState *ks, LtScanState *st, lt_code rc, const lt_knn_stats *stats, const lt_error *err)
{
	if (rc == LT_ECANCELED)
		CHECK_FOR_INTERRUPTS();
	if (rc == LT_EINVALID && stats->bad == LT_KNN_BAD_DIM)
		ks->commuted ? ltfdw_vector_dims_error(ks->dim, (int) stats->bad_dim)
			: ltfdw_vector_dims_error((int) stats->bad_dim, ks->dim);
	if (rc == LT_EINVALID && stats->bad == LT_KNN_BAD_NULL_ITEM)
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("array must not contain nulls")));
	if (rc != LT_OK)
		lt_report(err, psprintf("dataset %s version " UINT64_FORMAT, st->opts.uri, st->entry->version));
}

/*
 * Score the live rows of fragment i (its physical rows [start, end) for a parallel unit; end 0: to its
 * end) passing the pushed filter into ks->topk (exactly).
 */
static void
rank_fragment(LtKnnState *ks, LtScanState *st, size_t i, uint64 start, uint64 end, const lt_knn_query *q,
			  lt_knn_stats *stats)
{
	lt_dataset *ds = st->entry->ds;
	MemoryContext old;
	lt_error	err;

	{
		const lt_frag_plan *fp = ltfdw_index_verdict(st->index, i);
		const uint32_t *offsets = NULL;
		uint64		n_offsets = 0;
		lt_filter  *filter = NULL;
		lt_code		rc;

		if (fp && fp->verdict == LT_FRAG_PRUNED)
			return;
		if (fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_CANDIDATES))
		{
			offsets = fp->offsets;
			n_offsets = fp->n_offsets;
		}
		else if (ks->rounds == 1 && start == 0)
			st->rows_deleted += ds->fragments[i]->physical_rows - lt_fragment_live_rows(ds->fragments[i]);
		/* the is_assigned quals narrow the rows before ranking: a prefilter, as the pushed filter */
		if (!lt_assign_mask_narrow(&st->amask, ds->fragments[i], st->lib_cxt, start, end, &offsets, &n_offsets))
			return;
		old = lt_alloc_target(ks->lib_cxt);
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(ks->lib_cxt);

			/* every row of ROWS and ALL fragments passes the filter: the index proved it */
			if (st->filter && (!fp || fp->verdict == LT_FRAG_SCAN || fp->verdict == LT_FRAG_CANDIDATES))
				filter = ltfdw_filter_for_scan(st->filter);
			rc = lt_knn_fragment_range(ds, ds->fragments[i], q, filter, offsets, n_offsets, start, end, NULL,
									   &ks->topk, stats, &err);
			MemoryContextSwitchTo(oldcxt);
		}
		lt_alloc_target(old);
		MemoryContextReset(ks->lib_cxt);
		rank_check(ks, st, rc, stats, &err);
	}
}

/* Score rows (ascending offsets of fragment i, live and passing the pushed filter) into ks->topk. */
static void
rank_rows(LtKnnState *ks, LtScanState *st, size_t i, const lt_knn_query *q, const uint32 *rows, uint64 n,
		  lt_knn_stats *stats)
{
	lt_dataset *ds = st->entry->ds;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;

	if (n == 0)
		return;
	old = lt_alloc_target(ks->lib_cxt);
	rc = lt_knn_fragment(ds, ds->fragments[i], q, NULL, rows, n, NULL, &ks->topk, stats, &err);
	lt_alloc_target(old);
	MemoryContextReset(ks->lib_cxt);
	rank_check(ks, st, rc, stats, &err);
}

/*
 * One round: the best ks->want rows of the whole table (after the pushed filter) into ks->topk,
 * through the vector index when it answers (the fragments it does not cover ranked exactly), else
 * exactly; then the rows returned by earlier rounds are taken out and the stream goes on at rank 0.
 */
static void
rank(LtKnnState *ks, LtScanState *st)
{
	lt_dataset *ds = st->entry->ds;
	lt_knn_query q = {ks->field, ks->metric, ks->kernel, ks->query, ks->dim,
	ks->null_query};
	lt_knn_stats stats = {0};
	MemoryContext old;
	lt_error	err;
	uint64		bytes = ds->store->bytes_read,
				reqs = ds->store->read_requests;
	bool		by_index;

	MemoryContextReset(ks->rows_cxt);
	old = lt_alloc_target(ks->cxt);
	lt_topk_free(&ks->topk);
	if (lt_topk_init(&ks->topk, ks->want, &err) != LT_OK)
	{
		lt_alloc_target(old);
		lt_report(&err, st->opts.uri);
	}
	lt_alloc_target(old);
	ks->rounds++;
	if (st->pstate)
	{
		/*
		 * A parallel scan (no index answers it: knn_add_partial_path): this process ranks the units it
		 * claims, every round the same ones; Gather Merge merges the processes' ordered streams.
		 */
		if (!ks->claimed)
		{
			size_t		fi;
			uint64		start,
						end;

			while (ltfdw_scan_claim_unit(st, &fi, &start, &end))
			{
				if (ks->n_units == ks->cap_units)
				{
					ks->cap_units = Max(8, ks->cap_units * 2);
					ks->units = ks->units ? repalloc(ks->units, sizeof(*ks->units) * ks->cap_units)
						: MemoryContextAlloc(ks->cxt, sizeof(*ks->units) * ks->cap_units);
				}
				ks->units[ks->n_units].fragment = fi;
				ks->units[ks->n_units].start = start;
				ks->units[ks->n_units].end = end;
				ks->n_units++;
				/* rank as it claims: a slow process leaves the other units to the others */
				rank_fragment(ks, st, fi, start, end, &q, &stats);
			}
			ks->claimed = true;
		}
		else
			for (int u = 0; u < ks->n_units; u++)
				rank_fragment(ks, st, ks->units[u].fragment, ks->units[u].start, ks->units[u].end, &q, &stats);
	}
	by_index = !st->pstate && !ks->exact_only && ltfdw_ann_search(ks->ann, st, &q, &ks->topk);
	for (size_t i = 0; !st->pstate && i < ds->n_fragments; i++)
	{
		uint32		id = (uint32) ds->fragments[i]->id;
		const uint32 *rows;
		uint64		n;
		bool		all;

		if (by_index && ltfdw_ann_covers(ks->ann, id))
			continue;
		/* the index search's prefilter already holds the rows that pass: score just those */
		if (!ks->null_query && ltfdw_ann_mask(ks->ann, id, &rows, &n, &all) && !all)
			rank_rows(ks, st, i, &q, rows, n, &stats);
		else
			rank_fragment(ks, st, i, 0, 0, &q, &stats);
	}
	lt_topk_finish(&ks->topk);
	if (by_index && ks->topk.n < ks->want)
	{
		/* the probed partitions hold fewer rows than asked (a selective filter): never fewer than exist */
		ks->exact_only = true;
		ks->exact_fallbacks++;
		st->bytes_read += ds->store->bytes_read - bytes;
		st->read_requests += ds->store->read_requests - reqs;
		rank(ks, st);
		return;
	}
	ks->ranked_n = ks->topk.n;
	if (ks->n_returned > 0)
	{
		size_t		n = 0;

		qsort(ks->returned, ks->n_returned, sizeof(uint64), lt_cmp_u64);
		for (size_t j = 0; j < ks->topk.n; j++)
			if (!bsearch(&ks->topk.items[j].addr, ks->returned, ks->n_returned, sizeof(uint64), lt_cmp_u64))
				ks->topk.items[n++] = ks->topk.items[j];
		ks->topk.n = n;
	}
	ks->next = 0;
	st->bytes_read += ds->store->bytes_read - bytes;
	st->read_requests += ds->store->read_requests - reqs;
	ks->rows_scored += stats.rows_scored + stats.rows_null;
	ks->fragments_ranked += stats.fragments;
	st->rows_filtered += stats.rows_filtered;
	st->fragments_scanned += stats.fragments;
	ks->ranked = true;
}

/* Fetch ranks [ks->next, ks->next + n) by address into the group's matrix, in rank order. */
static void
fetch_group(LtKnnState *ks, LtScanState *st, int n)
{
	lt_dataset *ds = st->entry->ds;
	int			natts = st->natts;
	uint64	   *by_addr;		/* pairs (address, rank - next), sorted by address */
	uint32	   *offsets;
	int			i = 0;
	MemoryContext old;

	uint64		bytes = ds->store->bytes_read,
				reqs = ds->store->read_requests;

	MemoryContextReset(ks->rows_cxt);
	old = MemoryContextSwitchTo(ks->rows_cxt);
	ks->values = palloc0(sizeof(Datum) * n * Max(natts, 1));
	ks->nulls = palloc(sizeof(bool) * n * Max(natts, 1));
	memset(ks->nulls, true, sizeof(bool) * n * Max(natts, 1));
	by_addr = palloc(sizeof(uint64) * 2 * n);
	offsets = palloc(sizeof(uint32) * n);
	for (int r = 0; r < n; r++)
	{
		by_addr[2 * r] = ks->topk.items[ks->next + r].addr;
		by_addr[2 * r + 1] = r;
	}
	qsort(by_addr, n, 2 * sizeof(uint64), lt_cmp_u64 /* by the pair's address */);
	MemoryContextSwitchTo(old);

	while (i < n)
	{
		uint64		frag_id = by_addr[2 * i] >> 32;
		int			j = i;
		const struct Lt__Pb__DataFragment *frag = lt_dataset_fragment(ds, frag_id);
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;
		lt_error	err;
		lt_code		rc;
		int			at = i;

		while (j < n && (by_addr[2 * j] >> 32) == frag_id)
		{
			offsets[j - i] = (uint32) by_addr[2 * j];
			j++;
		}
		if (frag == NULL)
			elog(ERROR, "lt_fdw: fragment " UINT64_FORMAT " of a ranked row is not in dataset %s", frag_id,
				 st->opts.uri);
		so.n_fields = st->cols.n_proj;
		so.fields = st->cols.proj;
		so.want_row_ids = st->cols.want_row_ids;
		so.offsets = offsets;
		so.n_offsets = j - i;
		old = lt_alloc_target(ks->lib_cxt);
		rc = lt_fragment_scanner_open(ds, frag, &so, &sc, &err);
		for (int c = 0; c < st->cols.n_columns; c++)
			if (st->cols.columns[c].kind == LT_COL_FIELD)
				lt_conv_bind_blob(st->cols.columns[c].conv, ds, frag);
		while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b != NULL)
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(ks->rows_cxt);

			for (int64 r = 0; r < b->length; r++, at++)
			{
				size_t		base;

				/* the scanner returns the offsets asked for, ascending: the same order as by_addr */
				if (at >= j || b->row_addrs[r] != by_addr[2 * at])
					elog(ERROR, "lt_fdw: row address " UINT64_FORMAT " of dataset %s was not read back",
						 at < j ? by_addr[2 * at] : b->row_addrs[r], st->opts.uri);
				base = (size_t) by_addr[2 * at + 1] * natts;
				for (int c = 0; c < st->cols.n_columns; c++)
				{
					const LtScanColumn *col = &st->cols.columns[c];
					size_t		k = base + col->attnum - 1;

					ks->nulls[k] = false;
					switch (col->kind)
					{
						case LT_COL_ROWID:
							ks->values[k] = Int64GetDatum((int64) b->row_ids[r]);
							break;
						case LT_COL_ROWADDR:
							ks->values[k] = Int64GetDatum((int64) b->row_addrs[r]);
							break;
						case LT_COL_ASSIGNED:
							ks->values[k] = BoolGetDatum(lt_assign_reader_get(col->assign, b->row_addrs[r]));
							break;
						case LT_COL_FIELD:
							ks->values[k] = lt_conv_datum(col->conv, b->columns[col->proj], r, &ks->nulls[k]);
							break;
					}
				}
			}
			MemoryContextSwitchTo(oldcxt);
		}
		if (sc)
			lt_fragment_scanner_free(sc);
		lt_alloc_target(old);
		MemoryContextReset(ks->lib_cxt);
		if (rc != LT_OK)
			lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, st->opts.uri, st->entry->version));
		if (at != j)
			elog(ERROR, "lt_fdw: %d ranked rows of fragment " UINT64_FORMAT " of dataset %s were not read back",
				 j - at, frag_id, st->opts.uri);
		i = j;
	}
	st->bytes_read += ds->store->bytes_read - bytes;
	st->read_requests += ds->store->read_requests - reqs;
	ks->rows_fetched += n;
	ks->group_start = ks->next;
	ks->group_len = n;
	ks->group_pos = 0;
}

TupleTableSlot *
ltfdw_knn_iterate(ForeignScanState *node, LtScanState *st)
{
	LtKnnState *ks = st->knn;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	for (;;)
	{
		size_t		at;

		ExecClearTuple(slot);
		if (!ks->ranked)
		{
			/* a NULL query vector: every distance is NULL (the rows come in address order) */
			ks->null_query = !load_query(ks, econtext);
			ks->want = ks->limit >= 1 ? (size_t) ks->limit : LT_KNN_DEFAULT_K;
			rank(ks, st);
		}
		if (ks->group_pos >= ks->group_len)
		{
			if (ks->next >= ks->topk.n)
			{
				/* every row ranked: the end; else rank more and go on with the rows not returned */
				if (ks->ranked_n < ks->want)
					return slot;
				ks->want = ks->want > SIZE_MAX / 8 ? SIZE_MAX / 2 : ks->want * 4;
				rank(ks, st);
				if (ks->next >= ks->topk.n)
					return slot;
			}
			fetch_group(ks, st, (int) Min((size_t) LT_KNN_FETCH, ks->topk.n - ks->next));
		}
		at = (size_t) ks->group_pos++ * st->natts;
		if (ks->n_returned == ks->cap_returned)
		{
			ks->cap_returned = Max(64, ks->cap_returned * 2);
			ks->returned = ks->returned ? repalloc(ks->returned, sizeof(uint64) * ks->cap_returned)
				: MemoryContextAlloc(ks->cxt, sizeof(uint64) * ks->cap_returned);
		}
		ks->returned[ks->n_returned++] = ks->topk.items[ks->next].addr;
		ks->next++;
		slot->tts_values = ks->values + at;
		slot->tts_isnull = ks->nulls + at;
		ExecStoreVirtualTuple(slot);
		if (!st->filter || !ltfdw_filter_needs_local_check(st->filter))
			return slot;
		econtext->ecxt_scantuple = slot;
		if (ltfdw_filter_local_check(st->filter, econtext))
			return slot;
		ResetExprContext(econtext);
		InstrCountFiltered2(node, 1);
	}
}

void
ltfdw_knn_explain(LtKnnState *ks, ExplainState *es)
{
	ltfdw_ann_explain(ks->ann, es, ks->attname, ks->metric, ks->limit);
	if (es->analyze)
	{
		if (ks->exact_fallbacks)
			ExplainPropertyUInteger("Exact Fallbacks", NULL, ks->exact_fallbacks, es);
		ExplainPropertyUInteger("Vector Rounds", NULL, ks->rounds, es);
		ExplainPropertyUInteger("Vectors Scored", NULL, ks->rows_scored, es);
		ExplainPropertyUInteger("Rows Fetched", NULL, ks->rows_fetched, es);
	}
}
