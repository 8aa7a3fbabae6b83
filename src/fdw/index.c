/*
 * index.c — scalar indexes in scans: the lookup at the start of every (re)scan, the costing that
 * makes Postgres choose index-using paths, EXPLAIN's index lines, and lt_indexes().
 *
 * Scans: when the pushed filter (quals.c) has a part an index answers, the library's index planner
 * (lt_index_plan.h) gives each fragment a verdict with this scan's parameter values: PRUNED
 * fragments are never opened, ROWS and CANDIDATES fragments are read at the selected offsets only
 * (random access: only the pages holding them), ALL and SCAN fragments are read whole (ALL and ROWS
 * without the filter: the index proved it). Parameterized scans look up again at every rescan with
 * the new values; the index readers stay open for the scan's lifetime. An index file that turns
 * out to be corrupt gives a WARNING (XX001, naming the file) and the scan goes on without indexes.
 * GUC lt_fdw.enable_index_scan (default on) turns index use off.
 *
 * Costing: at plan time the manifest says which columns have a usable index and how many rows the
 * indexes do not cover; the selectivity of the quals on indexed columns (Postgres's estimate, from
 * ANALYZE's statistics when there are some) gives the rows read by random access, so that point
 * lookups and join clauses on indexed columns (parameterized paths: a nested loop with one lookup
 * per outer row) cost what they will cost.
 */
#include "postgres.h"

#include <math.h>

#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "dataset.h"
#include "index.h"
#include "option.h"
#include "quals.h"
#include "xact.h"
#include "util/lt_alloc.h"
#include "vector/lt_ivf.h"
#include "index/lt_btree_pages.h"
#include "index/lt_index_plan.h"
#include "proto/lt_table.pb-c.h"

/* the decoded btree page cache's budget per backend */
#define LT_BTREE_PAGE_CACHE_BYTES ((size_t) 16 << 20)

PG_FUNCTION_INFO_V1(lt_indexes);

bool		lt_enable_index_scan = true;

void
lt_index_init(void)
{
	DefineCustomBoolVariable("lt_fdw.enable_index_scan",
							 "Answers pushed-down quals with the dataset's scalar indexes.",
							 "Off scans every fragment with the filter (for comparisons).",
							 &lt_enable_index_scan, true, PGC_USERSET, 0, NULL, NULL, NULL);
	/*
	 * Decoded btree pages, kept across statements and versions (lt_btree_pages.h): a fixed 16 MB per
	 * backend (about 500 pages of 4,096 int64 keys: every page of an 2M-row index), in memory of their own.
	 */
	{
		lt_allocator a;

		lt_allocator_in(AllocSetContextCreate(TopMemoryContext, "lt_fdw btree pages", ALLOCSET_DEFAULT_SIZES), &a);
		lt_btree_pages_configure(&a, LT_BTREE_PAGE_CACHE_BYTES);
	}
}

/* ---- scans ---------------------------------------------------------------------------------- */

struct LtScanIndex
{
	/* what the lookups are for (set by ltfdw_index_due) */
	LtDatasetEntry *entry;
	LtFdwFilter *filter;
	Relation	rel;
	const char *uri;
	uint64	   *bytes_read;		/* the scan's counter: index reads are added to it */
	/* array @> / && quals Postgres checks (local), answered by label_list indexes */
	int			n_labels;
	lt_label_pred *labels;

	MemoryContext cxt;			/* this scan's state (and planner, for an own-writes view) */
	MemoryContext plan_cxt;		/* where the current plan lives (the planner's memory) */
	lt_index_planner *planner;	/* own-writes views only: the cached version's is in its entry */
	lt_index_plan *plan;		/* of the current (re)scan, or NULL: scan everything */
	bool		failed;			/* an index could not be read: no more lookups in this scan */
	bool		due;			/* parameters set since the last lookup: look up before reading */
	/* totals over every lookup of this scan (EXPLAIN ANALYZE) */
	uint64		lookups;
	uint64		rows_selected;
	uint64		pages_read;
	uint64		index_bytes;
};

/* Released with the scan's memory (end or ERROR): free the plan, close an own planner's files. */
static void
index_release(void *arg)
{
	LtScanIndex *ix = arg;
	MemoryContext old = lt_alloc_target(ix->cxt);

	/*
	 * The plan may live in the cached entry's memory: the entry is still pinned here (this context
	 * is a child of the scan's memory, deleted before the scan's own callback unpins the entry)
	 */
	lt_index_plan_free(ix->plan);
	lt_index_planner_free(ix->planner);
	lt_alloc_target(old);
	ix->plan = NULL;
	ix->planner = NULL;
}

static LtScanIndex *
index_state(LtScanIndex **slot)
{
	LtScanIndex *ix = *slot;

	if (ix == NULL)
	{
		MemoryContextCallback *cb;

		ix = palloc0(sizeof(LtScanIndex));
		ix->cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw index", ALLOCSET_DEFAULT_SIZES);
		cb = MemoryContextAlloc(ix->cxt, sizeof(MemoryContextCallback));
		cb->func = index_release;
		cb->arg = ix;
		MemoryContextRegisterResetCallback(ix->cxt, cb);
		*slot = ix;
	}
	return ix;
}

void
ltfdw_index_due(LtScanIndex **slot, LtDatasetEntry *entry, LtFdwFilter *filter, Relation rel, const char *uri,
				uint64 *bytes_read)
{
	LtScanIndex *ix = *slot;
	lt_dataset *ds = entry->ds;

	if (ix && ix->plan)
	{
		MemoryContext oldlib = lt_alloc_target(ix->plan_cxt);

		lt_index_plan_free(ix->plan);
		lt_alloc_target(oldlib);
		ix->plan = NULL;
	}
	if (ix)
		ix->due = false;
	if (!lt_enable_index_scan || ds->index_section == NULL || ds->index_section->n_indices == 0 ||
		(ix && ix->failed) ||
		((filter == NULL || !ltfdw_filter_translates(filter)) && (ix == NULL || ix->n_labels == 0)))
		return;
	ix = index_state(slot);
	ix->entry = entry;
	ix->filter = filter;
	ix->rel = rel;
	ix->uri = uri;
	ix->bytes_read = bytes_read;
	ix->due = true;
}

/*
 * A label predicate of a local qual: column @> ARRAY[...] or column && ARRAY[...] with a constant
 * array of text (list<utf8> columns) or integers (lists of integers), column a list field. Postgres
 * still checks the qual on every row returned; the index only narrows the rows read.
 */
static bool
label_of(Relation rel, Index scanrelid, const lt_schema *schema, Node *n, lt_label_pred *out)
{
	OpExpr	   *op;
	Var		   *var;
	Const	   *c;
	const lt_field *f,
			   *elem;
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Oid			elmtype;
	lt_value   *vals;

	if (!IsA(n, OpExpr))
		return false;
	op = (OpExpr *) n;
	if ((op->opno != OID_ARRAY_CONTAINS_OP && op->opno != OID_ARRAY_OVERLAP_OP) || list_length(op->args) != 2)
		return false;
	var = linitial(op->args);
	c = lsecond(op->args);
	if (IsA(var, RelabelType))
		var = (Var *) ((RelabelType *) var)->arg;
	if (!IsA(var, Var) || !IsA(c, Const) || var->varno != scanrelid || var->varattno <= 0 || c->constisnull)
		return false;
	f = lt_schema_find_name(schema, lt_column_field_name(RelationGetRelid(rel), var->varattno,
														 NameStr(TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attname)));
	if (f == NULL || (f->type != LT_TYPE_LIST && f->type != LT_TYPE_LARGE_LIST) || f->n_children != 1)
		return false;
	elem = f->children[0];
	arr = DatumGetArrayTypeP(c->constvalue);
	elmtype = ARR_ELEMTYPE(arr);
	if (ARR_NDIM(arr) > 1)
		return false;
	if (elmtype == TEXTOID ? (elem->type != LT_TYPE_UTF8 && elem->type != LT_TYPE_LARGE_UTF8)
		: (elmtype != INT2OID && elmtype != INT4OID && elmtype != INT8OID) ||
		(elem->type != LT_TYPE_INT8 && elem->type != LT_TYPE_INT16 && elem->type != LT_TYPE_INT32 &&
		 elem->type != LT_TYPE_INT64))
		return false;
	get_typlenbyvalalign(elmtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elmtype, elmlen, elmbyval, elmalign, &elems, &nulls, &nelems);
	/* 16-byte aligned: lt_value holds an __int128 */
	vals = (lt_value *) TYPEALIGN(16, palloc0(sizeof(lt_value) * Max(nelems, 1) + 16));
	for (int i = 0; i < nelems; i++)
	{
		if (nulls[i])
			vals[i].kind = LT_VALUE_NULL;
		else if (elmtype == TEXTOID)
		{
			text	   *t = DatumGetTextPP(elems[i]);

			vals[i].kind = LT_VALUE_BYTES;
			vals[i].v.bytes.ptr = (const uint8_t *) VARDATA_ANY(t);
			vals[i].v.bytes.len = VARSIZE_ANY_EXHDR(t);
		}
		else
		{
			vals[i].kind = LT_VALUE_INT;
			vals[i].v.i = elmtype == INT2OID ? DatumGetInt16(elems[i]) :
				elmtype == INT4OID ? DatumGetInt32(elems[i]) : DatumGetInt64(elems[i]);
		}
	}
	out->field = f;
	out->op = op->opno == OID_ARRAY_CONTAINS_OP ? LT_LABEL_HAS_ALL : LT_LABEL_HAS_ANY;
	out->n = nelems;
	out->values = vals;
	return true;
}

void
ltfdw_index_labels(LtScanIndex **slot, Relation rel, Index scanrelid, const lt_schema *schema, List *local_quals)
{
	ListCell   *lc;
	LtScanIndex *ix;

	if (!lt_enable_index_scan)
		return;
	foreach(lc, local_quals)
	{
		lt_label_pred lp;

		if (!label_of(rel, scanrelid, schema, lfirst(lc), &lp))
			continue;
		ix = index_state(slot);
		ix->labels = ix->labels ? repalloc(ix->labels, sizeof(lt_label_pred) * (ix->n_labels + 1))
			: palloc(sizeof(lt_label_pred));
		ix->labels[ix->n_labels++] = lp;
	}
}

/*
 * The lookup itself, when the scan first needs it: a nested loop rescans its inner side before the
 * first outer row, so a lookup made at BeginForeignScan would only see unset parameters.
 */
static void
index_ensure(LtScanIndex *ix)
{
	LtDatasetEntry *entry;
	lt_dataset *ds;
	MemoryContext tmp,
				oldcxt,
				oldlib;
	lt_filter  *filter;
	lt_index_planner *planner;
	lt_error	err;
	lt_code		rc = LT_OK;
	uint64		bytes;

	if (ix == NULL || !ix->due)
		return;
	ix->due = false;
	entry = ix->entry;
	ds = entry->ds;
	bytes = ds->store->bytes_read;

	/*
	 * The filter with this scan's parameters, in scratch memory. The planner (its open index files
	 * and what they cached) belongs to the cached dataset version and serves every scan of it; a
	 * transaction's own-writes view gets one of its own per scan. Readers allocate as they look up,
	 * so the plan is made in the planner's memory (and freed explicitly).
	 */
	tmp = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw index lookup", ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(tmp);
	oldlib = lt_alloc_target(tmp);
	filter = ix->filter ? ltfdw_filter_for_scan(ix->filter) : NULL;
	ix->plan_cxt = lt_xact_is_view(entry) ? ix->cxt : entry->cxt;
	lt_alloc_target(ix->plan_cxt);
	if (lt_xact_is_view(entry))
	{
		if ((filter || ix->n_labels) && ix->planner == NULL)
			rc = lt_index_planner_open(ds, &ix->planner, &err);
		planner = ix->planner;
	}
	else
	{
		if ((filter || ix->n_labels) && entry->planner == NULL)
			rc = lt_index_planner_open(ds, &entry->planner, &err);
		planner = entry->planner;
	}
	if ((filter || ix->n_labels) && rc == LT_OK)
		rc = lt_index_plan_build(planner, filter, ix->n_labels, ix->labels, &ix->plan, &err);
	lt_alloc_target(oldlib);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(tmp);

	if (rc == LT_ECORRUPT)
	{
		ix->failed = true;
		ix->plan = NULL;
		ereport(WARNING,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("lt_fdw: an index of foreign table \"%s\" cannot be read; scanning without indexes",
						RelationGetRelationName(ix->rel)),
				 errdetail("Dataset %s version " UINT64_FORMAT ": %s", ix->uri, entry->version, err.msg)));
		return;
	}
	if (rc != LT_OK)
		lt_report(&err, psprintf("the indexes of dataset %s version " UINT64_FORMAT, ix->uri, entry->version));
	if (ix->plan == NULL)
		return;
	/* an index was asked but narrowed nothing (e.g. an OR with a part no index answers) */
	if (ix->plan->n_used == 0 || ix->plan->n_scan == ix->plan->n_fragments)
	{
		oldlib = lt_alloc_target(ix->plan_cxt);
		lt_index_plan_free(ix->plan);
		lt_alloc_target(oldlib);
		ix->plan = NULL;
		return;
	}
	ix->lookups++;
	ix->rows_selected += ix->plan->rows_selected;
	for (size_t i = 0; i < ix->plan->n_used; i++)
		ix->pages_read += ix->plan->used[i].stats.pages_read;
	ix->index_bytes += ds->store->bytes_read - bytes;
	*ix->bytes_read += ds->store->bytes_read - bytes;
}

const lt_frag_plan *
ltfdw_index_verdict(LtScanIndex *ix, size_t i)
{
	index_ensure(ix);
	if (ix == NULL || ix->plan == NULL || i >= ix->plan->n_fragments)
		return NULL;
	return &ix->plan->fragments[i];
}

/* ---- EXPLAIN -------------------------------------------------------------------------------- */

uint64
ltfdw_index_pruned(LtScanIndex *ix)
{
	index_ensure(ix);
	return ix && ix->plan ? ix->plan->n_pruned : 0;
}

void
ltfdw_index_explain(LtScanIndex *ix, ExplainState *es)
{
	lt_index_plan *p;
	StringInfoData s;
	MemoryContext oldlib;

	index_ensure(ix);
	p = ix ? ix->plan : NULL;

	if (p == NULL)
		return;
	initStringInfo(&s);
	/* the predicates are rendered now, in the plan's memory */
	oldlib = lt_alloc_target(ix->plan_cxt);
	for (size_t i = 0; i < p->n_used; i++)
		appendStringInfo(&s, "%s%s (%s) for %s", i ? "; " : "", p->used[i].index->name,
						 lt_index_kind_name(p->used[i].index->kind), lt_index_use_predicate(&p->used[i]));
	lt_alloc_target(oldlib);
	ExplainPropertyText("Lance Index", s.data, es);
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		resetStringInfo(&s);
		appendStringInfo(&s, UINT64_FORMAT " pruned, " UINT64_FORMAT " exact, " UINT64_FORMAT " all rows, "
						 UINT64_FORMAT " candidates, " UINT64_FORMAT " without index",
						 p->n_pruned, p->n_rows, p->n_all, p->n_candidates, p->n_scan);
		ExplainPropertyText("Index Fragments", s.data, es);
	}
	else
	{
		ExplainPropertyUInteger("Index Fragments Pruned", NULL, p->n_pruned, es);
		ExplainPropertyUInteger("Index Fragments Exact", NULL, p->n_rows, es);
		ExplainPropertyUInteger("Index Fragments All Rows", NULL, p->n_all, es);
		ExplainPropertyUInteger("Index Fragments Candidates", NULL, p->n_candidates, es);
		ExplainPropertyUInteger("Index Fragments Without Index", NULL, p->n_scan, es);
	}
	ExplainPropertyUInteger("Rows Selected by Index", NULL, p->rows_selected, es);
	if (es->analyze)
	{
		ExplainPropertyUInteger("Index Lookups", NULL, ix->lookups, es);
		ExplainPropertyUInteger("Index Pages Read", NULL, ix->pages_read, es);
		ExplainPropertyUInteger("Index Bytes Read", NULL, ix->index_bytes, es);
	}
}

/* ---- costing -------------------------------------------------------------------------------- */

void
ltfdw_index_plan_info(LtPlanState *ps, Relation rel, LtDatasetEntry *e)
{
	lt_index_list *l;
	lt_error	err;
	TupleDesc	td = RelationGetDescr(rel);
	MemoryContext tmp,
				old;
	double		live = Max((double) e->live_rows, 1);

	ps->indexed_attrs = NULL;
	ps->label_attrs = NULL;
	ps->index_rows_per_value = NULL;
	ps->unindexed_frac = 1.0;
	if (!lt_enable_index_scan || e->ds->index_section == NULL || e->ds->index_section->n_indices == 0)
		return;
	tmp = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw index info", ALLOCSET_SMALL_SIZES);
	old = lt_alloc_target(tmp);
	if (lt_dataset_indexes(e->ds, &l, &err) != LT_OK)
	{
		/* planning goes on without indexes; the scan reports the damage */
		lt_alloc_target(old);
		MemoryContextDelete(tmp);
		return;
	}
	for (int attnum = 1; attnum <= td->natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(td, attnum - 1);
		const lt_field *f;
		double		unindexed = 0;

		if (att->attisdropped)
			continue;
		f = lt_schema_find_name(e->ds->schema, lt_column_field_name(RelationGetRelid(rel), attnum,
																	 NameStr(att->attname)));
		if (f == NULL)
			continue;
		for (size_t i = 0; i < l->n; i++)
		{
			const lt_index *ix = &l->items[i];

			if (ix->unusable || ix->field != f)
				continue;
			if (ix->kind == LT_INDEX_LABEL_LIST)
			{
				ps->label_attrs = bms_add_member(ps->label_attrs, attnum);
				continue;
			}
			for (size_t k = 0; k < ix->n_unindexed; k++)
				for (size_t j = 0; j < e->ds->n_fragments; j++)
					if (e->ds->fragments[j]->id == ix->unindexed[k])
						unindexed += (double) lt_fragment_live_rows(e->ds->fragments[j]);
			ps->indexed_attrs = bms_add_member(ps->indexed_attrs, attnum);
			ps->unindexed_frac = Min(ps->unindexed_frac, Min(unindexed / live, 1.0));
			break;
		}
	}
	lt_alloc_target(old);
	MemoryContextDelete(tmp);

	/*
	 * Never analyzed: Postgres would guess 0.5% for an equality. The index knows better (distinct
	 * keys, from its lookup tables: read once, kept with the cached version's planner).
	 */
	if (rel->rd_rel->reltuples < 0 && ps->indexed_attrs != NULL && !lt_xact_is_view(e))
	{
		int			attnum = -1;
		bool		ok = true;

		old = lt_alloc_target(e->cxt);
		if (e->planner == NULL)
			ok = lt_index_planner_open(e->ds, &e->planner, &err) == LT_OK;
		while (ok && (attnum = bms_next_member(ps->indexed_attrs, attnum)) >= 0)
		{
			Form_pg_attribute att = TupleDescAttr(td, attnum - 1);
			const lt_field *f = lt_schema_find_name(e->ds->schema,
													lt_column_field_name(RelationGetRelid(rel), attnum,
																		 NameStr(att->attname)));
			double		rpv = 0;

			/* a damaged index gives no estimate here; the scan reports it */
			if (f == NULL || lt_index_planner_rows_per_value(e->planner, f->id, &rpv, &err) != LT_OK || rpv <= 0)
				continue;
			if (ps->index_rows_per_value == NULL)
				ps->index_rows_per_value = palloc0(sizeof(double) * (td->natts + 1));
			ps->index_rows_per_value[attnum] = rpv;
		}
		lt_alloc_target(old);
	}
}

/* An equality (or = ANY of n values) on an indexed column without statistics: the index's estimate. */
static Selectivity
index_clause_sel(PlannerInfo *root, RelOptInfo *baserel, LtPlanState *ps, RestrictInfo *ri, int attnum)
{
	double		rpv = ps->index_rows_per_value ? ps->index_rows_per_value[attnum] : 0;
	Node	   *c = (Node *) ri->clause;

	if (rpv > 0 && ps->tuples > 0)
	{
		if (IsA(c, OpExpr) && list_length(((OpExpr *) c)->args) == 2 &&
			(get_oprrest(((OpExpr *) c)->opno) == F_EQSEL || get_oprjoin(((OpExpr *) c)->opno) == F_EQJOINSEL))
			return Min(1.0, rpv / ps->tuples);
		if (IsA(c, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *) c)->useOr &&
			get_oprrest(((ScalarArrayOpExpr *) c)->opno) == F_EQSEL)
		{
			Node	   *arr = lsecond(((ScalarArrayOpExpr *) c)->args);
			int			n = -1;

			if (IsA(arr, Const) && !((Const *) arr)->constisnull)
			{
				ArrayType  *a = DatumGetArrayTypeP(((Const *) arr)->constvalue);

				n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
			}
			else if (IsA(arr, ArrayExpr))
				n = list_length(((ArrayExpr *) arr)->elements);
			if (n >= 0)
				return Min(1.0, n * rpv / ps->tuples);
		}
	}
	return clause_selectivity(root, (Node *) ri, baserel->relid, JOIN_INNER, NULL);
}

Selectivity
ltfdw_index_selectivity(PlannerInfo *root, RelOptInfo *baserel, List *conds, Selectivity *pg_sel)
{
	LtPlanState *ps = baserel->fdw_private;
	Selectivity sel = 1.0;

	if (pg_sel)
		*pg_sel = 1.0;
	bool		any = false;
	ListCell   *lc;

	if (!lt_enable_index_scan || (ps->indexed_attrs == NULL && ps->label_attrs == NULL))
		return -1;
	/* the pushed quals on indexed columns, and the array @> / && quals Postgres keeps on label_list columns */
	foreach(lc, list_concat_copy(conds, ps->local_conds))
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		Bitmapset  *attrs = NULL;
		int			attnum;
		bool		label;

		pull_varattnos((Node *) ri->clause, baserel->relid, &attrs);
		if (bms_num_members(attrs) != 1)
			continue;
		attnum = bms_singleton_member(attrs) + FirstLowInvalidHeapAttributeNumber;
		label = IsA(ri->clause, OpExpr) && (((OpExpr *) ri->clause)->opno == OID_ARRAY_CONTAINS_OP ||
											((OpExpr *) ri->clause)->opno == OID_ARRAY_OVERLAP_OP);
		if (attnum <= 0 || !bms_is_member(attnum, label ? ps->label_attrs : ps->indexed_attrs))
			continue;
		if (!label && list_member_ptr(ps->local_conds, ri))
			continue;
		sel *= index_clause_sel(root, baserel, ps, ri, attnum);
		if (pg_sel)
			*pg_sel *= clause_selectivity(root, (Node *) ri, baserel->relid, JOIN_INNER, NULL);
		any = true;
	}
	return any ? sel : -1;
}

/* ---- lt_indexes(regclass) ------------------------------------------------------------------- */

static Datum
id_array(const uint32_t *ids, size_t n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (size_t i = 0; i < n; i++)
		d[i] = Int64GetDatum((int64) ids[i]);
	return PointerGetDatum(construct_array(d, (int) n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * The kind lt_indexes shows: a vector index's type as its first segment's index.idx names it, in
 * lower case ("ivf_flat", "ivf_pq", "ivf_hnsw_sq", ...; "vector" when that file cannot be read), else
 * the scalar kind.
 */
static const char *
vector_kind(lt_dataset *ds, const lt_index *ix)
{
	lt_ivf	   *ivf = NULL;
	lt_error	err;
	char	   *dir,
			   *kind;

	if (ix->kind != LT_INDEX_UNKNOWN || ix->type_url == NULL || strstr(ix->type_url, "VectorIndexDetails") == NULL ||
		ix->n_segments == 0)
		return lt_index_kind_name(ix->kind);
	dir = lt_index_segment_dir(ds, &ix->segments[0]);
	if (dir == NULL || lt_ivf_open(ds->store, dir, false, &ivf, &err) != LT_OK)
	{
		lt_free(dir);
		return "vector";
	}
	lt_free(dir);
	kind = pstrdup(ivf->type_name);
	for (char *c = kind; *c; c++)
		*c = pg_tolower((unsigned char) *c);
	lt_ivf_close(ivf);
	return kind;
}

Datum
lt_indexes(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LtTableOptions opts;
	LtDatasetEntry *e;
	lt_index_list *l;
	lt_error	err;
	MemoryContext tmp,
				old;

	InitMaterializedSRF(fcinfo, 0);
	lt_check_lt_table(relid, "lt_indexes");
	lt_check_table_select(relid);
	lt_get_table_options(relid, &opts);
	lt_check_read_privilege(GetUserId(), get_rel_name(relid), opts.uri);
	e = lt_dataset_acquire(relid, &opts, true);
	tmp = AllocSetContextCreate(CurrentMemoryContext, "lt_indexes", ALLOCSET_SMALL_SIZES);
	old = lt_alloc_target(tmp);
	if (lt_dataset_indexes(e->ds, &l, &err) != LT_OK)
	{
		lt_alloc_target(old);
		lt_dataset_unpin(e);
		lt_report(&err, psprintf("the indexes of dataset %s version " UINT64_FORMAT, opts.uri, e->version));
	}
	for (size_t i = 0; i < l->n; i++)
	{
		const lt_index *ix = &l->items[i];
		Datum		values[6];
		bool		nulls[6] = {0};
		uint64		unindexed_rows = 0;
		Datum	   *cols = palloc(sizeof(Datum) * Max(ix->n_fields, 1));

		for (int k = 0; k < ix->n_fields; k++)
		{
			const lt_field *f = lt_schema_find_id(e->ds->schema, ix->field_ids[k]);

			cols[k] = f ? CStringGetTextDatum(f->name) : CStringGetTextDatum(psprintf("field %d", ix->field_ids[k]));
		}
		values[0] = CStringGetTextDatum(ix->name);
		values[1] = PointerGetDatum(construct_array(cols, ix->n_fields, TEXTOID, -1, false, TYPALIGN_INT));
		values[2] = CStringGetTextDatum(vector_kind(e->ds, ix));
		values[3] = id_array(ix->covered, ix->n_covered);
		values[4] = id_array(ix->unindexed, ix->n_unindexed);
		for (size_t k = 0; k < ix->n_unindexed; k++)
		{
			const struct Lt__Pb__DataFragment *f = lt_dataset_fragment(e->ds, ix->unindexed[k]);

			if (f)
				unindexed_rows += lt_fragment_live_rows(f);
		}
		values[5] = Int64GetDatum((int64) unindexed_rows);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	lt_alloc_target(old);
	MemoryContextDelete(tmp);
	lt_dataset_unpin(e);
	return (Datum) 0;
}
