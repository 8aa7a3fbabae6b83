/*
 * scan.c — planning and executing a scan of a Lance dataset.
 *
 * Planning: the row estimate is the live rows of the manifest (physical rows minus deletions) until
 * ANALYZE has stored reltuples; costs grow with the rows and the projected width. Quals that
 * translate exactly into the reader's filter (quals.c) go to fdw_exprs and leave the local qual
 * list; join clauses that translate give parameterized paths; a partial path lets parallel workers
 * claim units of work (fragments, or 1M-row ranges of big ones) from shared memory. The plan
 * carries the attributes the query references (fdw_private, named slots), and only their fields
 * are read.
 *
 * Execution: the version is resolved when the scan begins (dataset.c's snapshot rules) and the
 * foreign table's columns are checked against that version's schema. Fragments are read one at a
 * time with the library's fragment scanner, in batches. A batch is converted a chunk of rows at a
 * time, column by column (convert.c's batch loops for the common scalar types, the per-value path
 * for the others), into a row-major matrix of Datums; IterateForeignScan points the scan slot's
 * tts_values / tts_isnull at the next row. A chunk's values live until the next chunk is converted,
 * so memory stays flat on any table size. The scanner's own allocations (and its file descriptors)
 * live in lib_cxt, reset per fragment, and are released by a memory-context callback when a scan
 * ends in an ERROR.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/parallel.h"
#include "optimizer/paths.h"
#include "port/atomics.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "convert.h"
#include "dataset.h"
#include "index.h"
#include "option.h"
#include "quals.h"
#include "scan.h"
#include "assign.h"
#include "xact.h"
#include "knn.h"
#include "table/lt_scan.h"
#include "assignment/lt_assignment.h"

#include <roaring/roaring.h>
#include "util/lt_alloc.h"
#include "util/lt_bufpool.h"
#include "proto/lt_table.pb-c.h"
#include "index/lt_index_plan.h"

/* fdw_private of the ForeignScan: a list with these slots. */
enum LtScanPrivateIndex
{
	/* Integer list of the attribute numbers the query references (0 = none is read) */
	LtScanPrivateRetrievedAttrs,
	/* Integer: live rows estimated at plan time (for EXPLAIN only) */
	LtScanPrivateEstimatedRows,
	/* Integer: 1 when the scan gives each row's identity in its ctid (UPDATE, DELETE: modify.c) */
	LtScanPrivateRowIdentity,
	/*
	 * Integer list of the retrieved attributes only the pushed quals read: fragments whose rows an
	 * index proved (no filter to evaluate, no local recheck) are read without them
	 */
	LtScanPrivateQualOnlyAttrs,
	/* List: ORDER BY col <op> q answered by the scan (knn.c; absent for a plain scan) */
	LtScanPrivateKnn
};
StaticAssertDecl(LtScanPrivateKnn == LT_SCAN_PRIVATE_KNN, "knn.h's slot");

/* The role whose privileges a scan of this relation runs with (as postgres_fdw picks it). */
static Oid
scan_userid(PlannerInfo *root, RelOptInfo *baserel)
{
	RangeTblEntry *rte = planner_rt_fetch(baserel->relid, root);

	return OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
}

void
ltGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	LtPlanState *ps = palloc0(sizeof(LtPlanState));
	LtDatasetEntry *e;
	double		assign_factor = 1.0;

	lt_get_table_options(foreigntableid, &ps->opts);
	lt_check_read_privilege(scan_userid(root, baserel), get_rel_name(foreigntableid), ps->opts.uri);
	e = lt_dataset_acquire(foreigntableid, &ps->opts, false);
	ps->relid = foreigntableid;
	ps->version = e->version;
	ps->live_rows = e->live_rows;
	ps->n_fragments = e->ds->n_fragments;
	baserel->fdw_private = ps;

	/* which quals the reader evaluates, which columns have an index */
	ltfdw_classify_conds(root, baserel, baserel->baserestrictinfo, &ps->remote_conds, &ps->local_conds);
	{
		Relation	rel = table_open(foreigntableid, NoLock);

		ltfdw_index_plan_info(ps, rel, e);
		/* an is_assigned column naming an unknown or untracked field: an error when planning */
		lt_assign_check_columns(rel, &ps->opts, e);
		table_close(rel, NoLock);
	}
	ps->remote_sel = clauselist_selectivity(root, ps->remote_conds, baserel->relid, JOIN_INNER, NULL);

	/* after ANALYZE, Postgres's own count; before, the manifest's */
	if (baserel->tuples < 0)
		baserel->tuples = (double) ps->live_rows;
	/* is_assigned quals (col, NOT col): the state's counts replace Postgres's guess (assign.c) */
	{
		ListCell   *lc;
		Relation	rel = NULL;

		foreach(lc, baserel->baserestrictinfo)
		{
			RestrictInfo *ri = lfirst(lc);
			Node	   *n = (Node *) ri->clause;
			bool		want = true;
			Var		   *var;
			char	   *field;
			Selectivity pg_sel,
						sel;

			if (IsA(n, BoolExpr) && ((BoolExpr *) n)->boolop == NOT_EXPR)
			{
				want = false;
				n = linitial(((BoolExpr *) n)->args);
			}
			if (!IsA(n, Var))
				continue;
			var = (Var *) n;
			if (var->varno != baserel->relid || var->varlevelsup != 0 || var->varattno <= 0 ||
				(field = lt_column_assigned_field(foreigntableid, var->varattno)) == NULL)
				continue;
			if (!rel)
				rel = table_open(foreigntableid, NoLock);
			sel = lt_assign_fraction(rel, &ps->opts, e, var->varattno, field);
			if (!want)
				sel = 1.0 - sel;
			pg_sel = clause_selectivity(root, (Node *) ri, 0, JOIN_INNER, NULL);
			if (pg_sel > 0)
				assign_factor *= sel / pg_sel;
		}
		if (rel)
			table_close(rel, NoLock);
	}
	ps->tuples = baserel->tuples;
	baserel->rows = clamp_row_est(baserel->tuples *
								  clauselist_selectivity(root, baserel->baserestrictinfo, 0,
														 JOIN_INNER, NULL) * assign_factor);
	/* before ANALYZE, an index's estimate of its equality quals replaces Postgres's default */
	if (ps->index_rows_per_value)
	{
		Selectivity pg_sel;
		Selectivity sel = ltfdw_index_selectivity(root, baserel, ps->remote_conds, &pg_sel);

		if (sel >= 0 && pg_sel > 0)
		{
			baserel->rows = clamp_row_est(baserel->rows * sel / pg_sel);
			ps->remote_sel = Min(1.0, ps->remote_sel * sel / pg_sel);
		}
	}
}

/*
 * The cost of a scan: opening the manifest and one file per fragment, then the bytes of the
 * projected columns. With a pushed filter, every live row is evaluated (a few operators, on
 * vectors) and only the passing rows are materialized and checked by the local quals.
 * When an index answers quals of selectivity index_sel (>= 0; index.c), the scan costs a lookup,
 * random access to the selected rows of the indexed fragments, and a filtered scan of the rows
 * the indexes do not cover.
 */
static void
scan_cost(PlannerInfo *root, RelOptInfo *baserel, LtPlanState *ps, Selectivity remote_sel,
		  Selectivity index_sel, List *local_conds, double parallel_divisor, Cost *startup, Cost *total)
{
	double		tuples = Max(ps->tuples, 0);
	double		passing = tuples * remote_sel;
	double		width = Max(baserel->reltarget->width, 1);
	double		pages;
	QualCost	qcost;
	Cost		run_cost;

	pages = ceil(tuples * width / BLCKSZ);
	cost_qual_eval(&qcost, local_conds, root);
	run_cost = (cpu_tuple_cost + cpu_operator_cost * list_length(baserel->reltarget->exprs) + qcost.per_tuple) *
		passing;
	if (index_sel >= 0)
	{
		double		unindexed = Min(Max(ps->unindexed_frac, 0), 1);
		double		selected = tuples * (1 - unindexed) * index_sel;
		double		fragments = Min((double) ps->n_fragments, Max(selected, 1)) + ceil(ps->n_fragments * unindexed);

		*startup = 10.0 + 4.0 * random_page_cost;
		run_cost += 2.0 * fragments * seq_page_cost +
			random_page_cost * Min(selected, pages * (1 - unindexed)) +
			seq_page_cost * pages * unindexed +
			0.25 * cpu_operator_cost * (tuples * unindexed + selected);
	}
	else
	{
		*startup = 10.0 + 2.0 * ps->n_fragments * seq_page_cost;
		run_cost += seq_page_cost * pages;
		if (remote_sel < 1.0)
			run_cost += 0.25 * cpu_operator_cost * tuples;	/* vectorized evaluation of the filter */
	}
	*startup += qcost.startup;
	*total = *startup + run_cost / parallel_divisor;
}

/* postgres_fdw's way of walking the equivalence classes one member expression at a time */
typedef struct EcMemberArg
{
	Expr	   *current;
	List	   *already_used;
} EcMemberArg;

static bool
ec_member_matches(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec, EquivalenceMember *em, void *arg)
{
	EcMemberArg *state = arg;

	if (state->current != NULL)
		return equal(em->em_expr, state->current);
	if (list_member(state->already_used, em->em_expr))
		return false;
	state->current = em->em_expr;
	return true;
}

static List *
add_ppi(PlannerInfo *root, RelOptInfo *baserel, RestrictInfo *ri, List *ppi_list)
{
	Relids		required_outer;

	if (!ltfdw_is_remote_expr(root, baserel, ri->clause))
		return ppi_list;
	required_outer = bms_union(ri->clause_relids, baserel->lateral_relids);
	required_outer = bms_del_member(required_outer, baserel->relid);
	if (bms_is_empty(required_outer))
		return ppi_list;
	return list_append_unique_ptr(ppi_list, get_baserel_parampathinfo(root, baserel, required_outer));
}

/*
 * Parameterized paths for join clauses the filter can take with the outer value as a parameter
 * (a parameterized nested loop rescans with the filter reset to each outer row's values).
 */
static void
lt_add_parameterized_paths(PlannerInfo *root, RelOptInfo *baserel, LtPlanState *ps)
{
	List	   *ppi_list = NIL;
	ListCell   *lc;

	if (!lt_enable_filter_pushdown)
		return;
	foreach(lc, baserel->joininfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (join_clause_is_movable_to(ri, baserel))
			ppi_list = add_ppi(root, baserel, ri, ppi_list);
	}
	if (baserel->has_eclass_joins)
	{
		EcMemberArg arg = {0};

		for (;;)
		{
			List	   *clauses;

			arg.current = NULL;
			clauses = generate_implied_equalities_for_column(root, baserel, ec_member_matches, &arg,
															 baserel->lateral_referencers);
			if (arg.current == NULL)
				break;
			foreach(lc, clauses)
				ppi_list = add_ppi(root, baserel, lfirst_node(RestrictInfo, lc), ppi_list);
			arg.already_used = lappend(arg.already_used, arg.current);
		}
	}
	foreach(lc, ppi_list)
	{
		ParamPathInfo *ppi = lfirst(lc);
		Selectivity sel = ps->remote_sel * clauselist_selectivity(root, ppi->ppi_clauses, baserel->relid,
																	JOIN_INNER, NULL);
		List	   *pushed = list_copy(ps->remote_conds);
		ListCell   *lc2;
		Cost		startup,
					total;

		foreach(lc2, ppi->ppi_clauses)
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc2);

			if (ltfdw_is_remote_expr(root, baserel, ri->clause))
				pushed = lappend(pushed, ri);
		}
		Selectivity pg_sel;
		Selectivity index_sel = ltfdw_index_selectivity(root, baserel, pushed, &pg_sel);
		double		rows = ppi->ppi_rows;

		/* before ANALYZE, the index's estimate of an equality join clause (as for the base quals) */
		if (ps->index_rows_per_value && index_sel >= 0 && pg_sel > 0)
		{
			rows = clamp_row_est(rows * index_sel / pg_sel);
			sel = Min(1.0, sel * index_sel / pg_sel);
		}
		scan_cost(root, baserel, ps, sel, index_sel, ps->local_conds, 1.0, &startup, &total);
		add_path(baserel, (Path *)
				 create_foreignscan_path(root, baserel, NULL, rows, startup, total, NIL,
										 ppi->ppi_req_outer, NULL, NIL));
	}
}


/* A partial path: workers (and the leader) claim units of work from shared memory. */
static void
lt_add_partial_path(PlannerInfo *root, RelOptInfo *baserel, LtPlanState *ps)
{
	double		width = Max(baserel->reltarget->width, 1);
	double		pages = ceil(Max(ps->tuples, 0) * width / BLCKSZ);
	int			workers;
	double		divisor;
	Cost		startup,
				total;
	ForeignPath *path;

	if (!baserel->consider_parallel)
		return;
	workers = compute_parallel_worker(baserel, pages, -1, max_parallel_workers_per_gather);
	if (workers <= 0)
		return;
	divisor = ltfdw_parallel_divisor(workers);
	scan_cost(root, baserel, ps, ps->remote_sel, ltfdw_index_selectivity(root, baserel, ps->remote_conds, NULL),
			  ps->local_conds, divisor, &startup, &total);
	path = create_foreignscan_path(root, baserel, NULL, clamp_row_est(baserel->rows / divisor), startup, total,
								   NIL, NULL, NULL, NIL);
	path->path.parallel_aware = true;
	path->path.parallel_safe = true;
	path->path.parallel_workers = workers;
	add_partial_path(baserel, (Path *) path);
}

void
ltGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	LtPlanState *ps = baserel->fdw_private;
	Cost		startup_cost;
	Cost		total_cost;

	scan_cost(root, baserel, ps, ps->remote_sel, ltfdw_index_selectivity(root, baserel, ps->remote_conds, NULL),
			  ps->local_conds, 1.0, &startup_cost, &total_cost);
	add_path(baserel, (Path *)
			 create_foreignscan_path(root, baserel, NULL, baserel->rows, startup_cost,
									 total_cost, NIL, NULL, NULL, NIL));
	lt_add_parameterized_paths(root, baserel, ps);
	lt_add_partial_path(root, baserel, ps);
	ltfdw_knn_add_path(root, baserel, ps, total_cost);
}

/* Does the query read the ctid of baserel (UPDATE / DELETE: the row identity, modify.c)? */
bool
lt_scan_wants_row_identity(PlannerInfo *root, RelOptInfo *baserel)
{
	Bitmapset  *attrs = NULL;

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &attrs);
	return bms_is_member(SelfItemPointerAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs);
}

ForeignScan *
ltGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid, ForeignPath *best_path,
				 List *tlist, List *scan_clauses, Plan *outer_plan)
{
	LtPlanState *ps = baserel->fdw_private;
	Bitmapset  *attrs = NULL;
	Bitmapset  *needed = NULL;
	List	   *retrieved = NIL;
	List	   *qual_only = NIL;
	ListCell   *lc;
	bool		whole_row = false;
	int			natts;
	Relation	rel;

	List	   *remote_exprs = NIL;
	List	   *local_exprs = NIL;

	/* the quals the reader evaluates go to fdw_exprs, the others stay in the plan's qual */
	foreach(lc, scan_clauses)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (ri->pseudoconstant)
			continue;
		if (list_member_ptr(ps->remote_conds, ri))
			remote_exprs = lappend(remote_exprs, ri->clause);
		else if (list_member_ptr(ps->local_conds, ri))
			local_exprs = lappend(local_exprs, ri->clause);
		else if (ltfdw_is_remote_expr(root, baserel, ri->clause))
			remote_exprs = lappend(remote_exprs, ri->clause);	/* a join clause of a parameterized path */
		else
			local_exprs = lappend(local_exprs, ri->clause);
	}

	/* every column a qual reads is retrieved: a scan may have to check its remote quals locally */
	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &attrs);
	pull_varattnos((Node *) remote_exprs, baserel->relid, &attrs);
	pull_varattnos((Node *) local_exprs, baserel->relid, &attrs);
	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &needed);
	pull_varattnos((Node *) local_exprs, baserel->relid, &needed);
	rel = table_open(foreigntableid, NoLock);
	natts = RelationGetDescr(rel)->natts;
	whole_row = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs);
	for (int attnum = 1; attnum <= natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);

		if (att->attisdropped)
			continue;
		if (whole_row || bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber, attrs))
			retrieved = lappend_int(retrieved, attnum);
		if (!whole_row && bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber, attrs) &&
			!bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber, needed))
			qual_only = lappend_int(qual_only, attnum);
	}
	table_close(rel, NoLock);

	{
		List	   *fdw_private = list_make4(retrieved, makeInteger((int) Min(ps->live_rows, INT_MAX)),
											 makeInteger(lt_scan_wants_row_identity(root, baserel) ? 1 : 0),
											 qual_only);
		List	   *knn = ltfdw_knn_plan(best_path, &remote_exprs);

		if (knn != NIL)
			fdw_private = lappend(fdw_private, knn);
		return make_foreignscan(tlist, local_exprs, baserel->relid, remote_exprs, fdw_private, NIL, NIL,
								outer_plan);
	}
}

/* ---- execution ------------------------------------------------------------------------------ */

/* Rows of the first chunk of a scan (a LIMIT converts little), then doubling up to chunk_cap. */
#define LT_CHUNK_FIRST		64
#define LT_CHUNK_MAX		1024
/* Datums of the matrix at most (a wide table gets chunks of fewer rows). */
#define LT_CHUNK_DATUMS		65536

/* Rows of a parallel work unit: big fragments are split into ranges of this many physical rows. */
#define LT_UNIT_ROWS ((uint64) 1024 * 1024)


static void plan_binding_unpin(LtScanState *st);

/* Released with the executor's memory: unpin the dataset (and the plan's kept binding). */
static void
scan_state_release(void *arg)
{
	LtScanState *st = arg;

	if (st->entry)
	{
		lt_dataset_unpin(st->entry);
		st->entry = NULL;
	}
	plan_binding_unpin(st);
	lt_alloc_arena_forget(&st->arena);
}

/* Released with lib_cxt (end of a fragment, end of the scan, or an ERROR): free the scanner. */
static void
scanner_release(void *arg)
{
	LtScanState *st = arg;

	if (st->scanner)
	{
		MemoryContext old = lt_alloc_target(st->lib_cxt);

		lt_fragment_scanner_free(st->scanner);
		lt_alloc_target(old);
		st->scanner = NULL;
		st->batch = NULL;
	}
	/* lib_cxt is being reset: its arena blocks go with it */
	lt_alloc_arena_reset(&st->arena);
}

static void
close_scanner(LtScanState *st)
{
	if (st->scanner)
	{
		lt_scan_stats stats;

		lt_fragment_scanner_stats(st->scanner, &stats);
		st->rows_filtered += stats.rows_filtered;
		if (st->scanning_range)
			st->rows_deleted += stats.rows_deleted;
	}
	scanner_release(st);
	MemoryContextReset(st->lib_cxt);
	lt_alloc_arena_reset(&st->arena);
}

static void
conversion_error_callback(void *arg)
{
	LtScanState *st = arg;

	if (st->converting)
		errcontext("column \"%s\" of foreign table \"%s\", row address " UINT64_FORMAT,
				   st->converting->attname, RelationGetRelationName(st->rel), st->converting_addr);
}

void
ltfdw_bind_columns(Relation rel, const LtTableOptions *opts, const LtDatasetEntry *entry,
				   List *retrieved, bool all_columns, LtColumnBinding *out)
{
	TupleDesc	td = RelationGetDescr(rel);
	const lt_schema *schema = entry->ds->schema;
	Oid			relid = RelationGetRelid(rel);
	int			n = 0;

	memset(out, 0, sizeof(*out));
	out->columns = palloc0(sizeof(LtScanColumn) * Max(td->natts, 1));
	out->proj = palloc0(sizeof(lt_field *) * Max(td->natts, 1));

	/* every column is checked, whether or not this query reads it */
	for (int attnum = 1; attnum <= td->natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(td, attnum - 1);
		char	   *name;
		const lt_field *f;
		LtScanColumn col = {0};
		char	   *why;
		char	   *assigned_of;

		if (att->attisdropped)
			continue;
		name = lt_column_names(relid, attnum, NameStr(att->attname), &assigned_of);
		col.attnum = attnum;
		col.attname = pstrdup(NameStr(att->attname));
		f = lt_schema_find_name(schema, name);
		if (assigned_of != NULL)
		{
			/* its state is read only when a row asks for it (assign.c) */
			col.kind = LT_COL_ASSIGNED;
			if (all_columns || list_member_int(retrieved, attnum))
				col.assign = lt_assign_reader_open(rel, opts, (LtDatasetEntry *) entry, attnum, assigned_of);
			else
				lt_assign_check_column(rel, opts, entry, attnum, assigned_of);
		}
		else if (f == NULL && lt_is_row_identity_name(name))
		{
			if (att->atttypid != INT8OID)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" reads %s, which is bigint, not %s",
								NameStr(att->attname), RelationGetRelationName(rel), name,
								format_type_with_typemod(att->atttypid, att->atttypmod))));
			col.kind = strcmp(name, "_rowid") == 0 ? LT_COL_ROWID : LT_COL_ROWADDR;
		}
		else if (f == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" reads field \"%s\", which dataset %s does not have at version " UINT64_FORMAT,
							NameStr(att->attname), RelationGetRelationName(rel), name, opts->uri,
							entry->version),
					 errhint("Name the dataset field with the column option column_name, or drop the column.")));
		else
		{
			col.kind = LT_COL_FIELD;
			col.conv = lt_conv_build(f, att->atttypid, att->atttypmod, &why);
			if (col.conv == NULL && why[0])
				why[0] = pg_toupper((unsigned char) why[0]);
			if (col.conv == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" has type %s, which cannot hold field \"%s\" (%s) of dataset %s",
								NameStr(att->attname), RelationGetRelationName(rel),
								format_type_with_typemod(att->atttypid, att->atttypmod), name,
								f->logical_type, opts->uri),
						 errdetail("%s.", why)));
			col.proj = -1;
		}
		if (!all_columns && !list_member_int(retrieved, attnum))
			continue;
		if (col.kind == LT_COL_FIELD)
		{
			const lt_field *fld = col.conv->field;

			for (int k = 0; k < out->n_proj; k++)
				if (out->proj[k] == fld)
					col.proj = k;
			if (col.proj < 0)
			{
				col.proj = out->n_proj;
				out->proj[out->n_proj++] = fld;
			}
		}
		else if (col.kind == LT_COL_ROWID)
			out->want_row_ids = true;
		if (col.kind == LT_COL_FIELD)
			col.batch = lt_conv_batchable(col.conv);
		out->columns[n++] = col;
	}
	out->n_columns = n;
	/* strings that only lt_conv_batch converts become varlenas in the batch's header room */
	out->room = palloc0(sizeof(bool) * Max(out->n_proj, 1));
	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < n; c++)
		{
			const LtScanColumn *col = &out->columns[c];

			if (col->kind == LT_COL_FIELD && col->proj >= 0)
				out->room[col->proj] = pass == 0 ? lt_type_is_var_width(col->conv->field->type) :
					out->room[col->proj] && col->batch;
		}
}

static void assign_mask_setup(LtScanState *st, ForeignScan *fsplan);

/*
 * The column bindings of a ForeignScan of a cached plan (a prepared statement's, PL/pgSQL's), and the
 * translation of its pushed filter, kept while the plan lives for its next execution on the same dataset
 * entry (LtDatasetEntry.serial): binding and translating were ~10k of a prepared point lookup's ~170k
 * instructions. A plan that runs is valid, so the table's columns, their
 * types and options are those it was bound with (a change to them invalidates the plan); the version is
 * checked by the serial. Only plain fields, row ids and row addresses: blob conversions are rebound per
 * fragment, is_assigned columns open a reader per scan. Kept in a child of the plan's memory, which goes
 * with the plan (its reset callback unlinks it).
 */
typedef struct PlanBinding
{
	struct PlanBinding *next;
	const ForeignScan *plan;
	uint64		serial;
	MemoryContext cxt;
	LtColumnBinding cols;
	LtColumnBinding lean;
	LtFdwFilterShape *shape;	/* the pushed filter's translation (quals.c) */
	uint64		gen;			/* unique: a scan finds its binding again by (address, gen) */
	int			pins;			/* scans using it now (a nested execution of the plan may read another version) */
} PlanBinding;

static PlanBinding *plan_bindings = NULL;
static uint64 plan_binding_gens = 0;

/* A scan that used a kept binding ends: unpinned, if the plan (and so the binding) is still there. */
static void
plan_binding_unpin(LtScanState *st)
{
	for (PlanBinding *pb = plan_bindings; st->binding_gen != 0 && pb; pb = pb->next)
		if (pb == st->binding && pb->gen == st->binding_gen)
		{
			pb->pins--;
			break;
		}
	st->binding = NULL;
	st->binding_gen = 0;
}

static const LtFdwFilterShape *
plan_binding_use(LtScanState *st, PlanBinding *pb)
{
	st->cols = pb->cols;
	st->lean = pb->lean;
	st->binding = pb;
	st->binding_gen = pb->gen;
	pb->pins++;
	return pb->shape;
}

static void
plan_binding_unlink(void *arg)
{
	for (PlanBinding **p = &plan_bindings; *p; p = &(*p)->next)
		if (*p == arg)
		{
			*p = ((PlanBinding *) arg)->next;
			return;
		}
}

static bool
binding_cacheable(const LtColumnBinding *b)
{
	for (int c = 0; c < b->n_columns; c++)
	{
		const LtScanColumn *col = &b->columns[c];

		if (col->kind == LT_COL_ASSIGNED)
			return false;
		if (col->kind == LT_COL_FIELD && col->conv->kind != LT_CONV_SCALAR && col->conv->kind != LT_CONV_TEXT)
			return false;
	}
	return true;
}

/*
 * Bind the scan's columns (and the lean ones), from the plan's kept bindings when they are of this entry.
 * Returns the kept translation of the pushed filter, or NULL when the scan translates it itself.
 */
static const LtFdwFilterShape *
bind_scan_columns(LtScanState *st, ForeignScan *fsplan)
{
	List	   *retrieved = (List *) list_nth(fsplan->fdw_private, LtScanPrivateRetrievedAttrs);
	MemoryContext plan_cxt = GetMemoryChunkContext(fsplan);
	bool		keep = st->entry->serial != 0 && strcmp(plan_cxt->name, "CachedPlan") == 0;
	PlanBinding *pb;
	MemoryContext cxt,
				old;
	MemoryContextCallback *cb;

	if (keep)
		for (pb = plan_bindings; pb; pb = pb->next)
			if (pb->plan == fsplan && pb->serial == st->entry->serial)
				return plan_binding_use(st, pb);
	/* under the scan's memory until it is bound: an ERROR leaves nothing with the plan */
	cxt = keep ? AllocSetContextCreate(CurrentMemoryContext, "lt_fdw plan binding", ALLOCSET_SMALL_SIZES) :
		CurrentMemoryContext;
	old = MemoryContextSwitchTo(cxt);
	ltfdw_bind_columns(st->rel, &st->opts, st->entry, retrieved, false, &st->cols);
	if (st->qual_only != NIL)
		ltfdw_bind_columns(st->rel, &st->opts, st->entry, list_difference_int(retrieved, st->qual_only), false,
						   &st->lean);
	MemoryContextSwitchTo(old);
	if (!keep || !binding_cacheable(&st->cols))
		return NULL;			/* bound again at every execution: its memory goes with the scan's */
	/* one binding per plan: an older one (another version) goes, unless a scan uses it (then this one is not kept) */
	for (pb = plan_bindings; pb; pb = pb->next)
		if (pb->plan == fsplan)
		{
			if (pb->pins > 0)
				return NULL;
			MemoryContextDelete(pb->cxt);
			break;
		}
	pb = MemoryContextAllocZero(cxt, sizeof(PlanBinding));
	pb->gen = ++plan_binding_gens;
	pb->plan = fsplan;
	pb->serial = st->entry->serial;
	pb->cxt = cxt;
	pb->cols = st->cols;
	pb->lean = st->lean;
	old = MemoryContextSwitchTo(cxt);
	pb->shape = ltfdw_filter_shape(st->rel, fsplan->scan.scanrelid, st->entry->ds->schema,
								   ltfdw_knn_filter_exprs(fsplan));
	MemoryContextSwitchTo(old);
	cb = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));
	cb->func = plan_binding_unlink;
	cb->arg = pb;
	MemoryContextRegisterResetCallback(cxt, cb);
	pb->next = plan_bindings;
	plan_bindings = pb;
	MemoryContextSetParent(cxt, plan_cxt);
	return plan_binding_use(st, pb);
}

/* Open the dataset version, bind the columns and prepare the filter. */
static void
scan_open(ForeignScanState *node, LtScanState *st, bool have_version, uint64 version)
{
	ForeignScan *fsplan = (ForeignScan *) node->ss.ps.plan;
	const LtFdwFilterShape *shape;

	if (have_version)
		st->entry = lt_dataset_acquire_version(RelationGetRelid(st->rel), &st->opts, version);
	else
		st->entry = lt_dataset_acquire(RelationGetRelid(st->rel), &st->opts, true);
	st->qual_only = list_length(fsplan->fdw_private) > LtScanPrivateQualOnlyAttrs ?
		(List *) list_nth(fsplan->fdw_private, LtScanPrivateQualOnlyAttrs) : NIL;
	shape = bind_scan_columns(st, fsplan);
	st->cur = &st->cols;
	st->row_identity = intVal(list_nth(fsplan->fdw_private, LtScanPrivateRowIdentity)) != 0;
	st->filter = shape ? ltfdw_filter_from_shape(shape, st->rel, ltfdw_knn_filter_exprs(fsplan), &node->ss.ps) :
		ltfdw_build_filter(st->rel, fsplan->scan.scanrelid, st->entry->ds->schema, ltfdw_knn_filter_exprs(fsplan),
						   &node->ss.ps);
	ltfdw_index_labels(&st->index, st->rel, fsplan->scan.scanrelid, st->entry->ds->schema,
					   fsplan->scan.plan.qual);
	assign_mask_setup(st, fsplan);
}

/* Evaluate the filter's parameters and look up the indexes with them. */
static void
params_now(LtScanState *st, ForeignScanState *node)
{
	/* the scan's memory, not the per-tuple context Iterate runs in: the index state outlives the row */
	MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(st));

	if (st->filter)
		ltfdw_filter_set_params(st->filter, node->ss.ps.ps_ExprContext);
	ltfdw_index_due(&st->index, st->entry, st->filter, st->rel, st->opts.uri, &st->bytes_read);
	st->params_due = false;
	MemoryContextSwitchTo(old);
}

void
ltBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *fsplan = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	LtScanState *st = palloc0(sizeof(LtScanState));
	MemoryContextCallback *cb;
	RangeTblEntry *rte;
	Oid			userid;

	node->fdw_state = st;
	st->rel = node->ss.ss_currentRelation;
	lt_get_table_options(RelationGetRelid(st->rel), &st->opts);

	/* the privilege rule again: the options may come from a server changed since planning */
	rte = exec_rt_fetch(fsplan->scan.scanrelid, estate);
	userid = OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
	lt_check_read_privilege(userid, RelationGetRelationName(st->rel), st->opts.uri);

	cb = palloc0(sizeof(MemoryContextCallback));
	cb->func = scan_state_release;
	cb->arg = st;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	st->lib_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw scanner", ALLOCSET_DEFAULT_SIZES);
	lt_alloc_arena_init(&st->arena, CurrentMemoryContext, st->lib_cxt);
	{
		/* in the scan's memory, not lib_cxt: the buffers outlive each fragment's scanner */
		lt_allocator a;

		lt_allocator_in(CurrentMemoryContext, &a);
		st->bufpool = lt_bufpool_create(&a);
	}
	st->chunk_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw rows", ALLOCSET_DEFAULT_SIZES);
	st->natts = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts;
	st->slot_values = node->ss.ss_ScanTupleSlot->tts_values;
	st->slot_isnull = node->ss.ss_ScanTupleSlot->tts_isnull;
	st->chunk_next = LT_CHUNK_FIRST;
	/*
	 * The matrix, before any scanner allocates: its memory does not sit above theirs in the heap. Only
	 * the first chunk's rows for now (a point lookup or a LIMIT converts a few rows; zeroing and
	 * freeing the whole matrix was a fifth of a lookup's instructions): matrix_reserve grows it once,
	 * to chunk_cap rows, when a chunk needs more.
	 */
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
	{
		st->chunk_cap = Max(1, Min(LT_CHUNK_MAX, LT_CHUNK_DATUMS / Max(st->natts, 1)));
		st->chunk_alloc = Min(LT_CHUNK_FIRST, st->chunk_cap);
		st->chunk_values = palloc0(sizeof(Datum) * Max(st->natts, 1) * st->chunk_alloc);
		st->chunk_nulls = palloc(sizeof(bool) * Max(st->natts, 1) * st->chunk_alloc);
		/* attributes not read stay NULL */
		memset(st->chunk_nulls, true, sizeof(bool) * Max(st->natts, 1) * st->chunk_alloc);
		st->nulls_false = palloc0(sizeof(bool) * Max(st->natts, 1));
	}

	/* a worker of a parallel scan reads the leader's version (ltInitializeWorkerForeignScan) */
	if (IsParallelWorker() && fsplan->scan.plan.parallel_aware)
		return;
	scan_open(node, st, false, 0);
	st->knn = ltfdw_knn_begin(node, st);
	/*
	 * The filter's parameters are read at the first row, not now: an initplan's output gets its
	 * value only when first read, after ExecInitNode. EXPLAIN without ANALYZE shows the index
	 * lookup too when it needs no parameter.
	 */
	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		st->params_due = true;
	else if (!ltfdw_filter_has_params(st->filter))
		params_now(st, node);
}

/* The units of a parallel scan of this version: one per fragment, big ones split in ranges. */
static void
build_units(LtScanState *st)
{
	lt_dataset *ds = st->entry->ds;
	int			cap = 16;

	st->units = palloc(sizeof(LtScanUnit) * cap);
	st->n_units = 0;
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		uint64		rows = ds->fragments[i]->physical_rows;
		uint64		start = 0;
		const lt_frag_plan *fp = ltfdw_index_verdict(st->index, i);

		/* index verdicts (the same in every process: one version, the same parameters) */
		if (fp && fp->verdict == LT_FRAG_PRUNED)
			continue;
		if (fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_CANDIDATES))
			rows = 0;			/* one unit: the selected offsets */

		do
		{
			if (st->n_units == cap)
			{
				cap *= 2;
				st->units = repalloc(st->units, sizeof(LtScanUnit) * cap);
			}
			st->units[st->n_units].fragment = (uint32) i;
			st->units[st->n_units].start = start;
			st->units[st->n_units].end = rows <= LT_UNIT_ROWS ? 0 : Min(start + LT_UNIT_ROWS, rows);
			st->n_units++;
			start += LT_UNIT_ROWS;
		} while (start < rows);
	}
}

/*
 * On a remote store, open the files of the next LT_PREFETCH_FRAGMENTS fragments to read (from fi on, the
 * index's pruned ones left out) in one round of requests instead of a round trip per fragment.  Their data files
 * only where columns are read: proven_cols columns in fragments whose rows the index proved (ROWS, ALL),
 * other_cols and the filter's in the others (a count of index-selected rows reads no data file).  Returns the
 * fragment after the last one covered.  what names the dataset in an error (only a cancel fails).
 */
#define LT_PREFETCH_FRAGMENTS 16

size_t
ltfdw_prefetch_fragments(lt_dataset *ds, LtScanIndex *index, size_t fi, int proven_cols, int other_cols, bool filter,
						 MemoryContext cxt, const char *what)
{
	size_t		idx[LT_PREFETCH_FRAGMENTS];
	bool		data[LT_PREFETCH_FRAGMENTS];
	size_t		n = 0;
	size_t		i;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;

	if (!ds->store->ops->prefetch)
		return ds->n_fragments;
	for (i = fi; i < ds->n_fragments && n < LT_PREFETCH_FRAGMENTS; i++)
	{
		const lt_frag_plan *fp = index ? ltfdw_index_verdict(index, i) : NULL;
		bool		proven = fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_ALL);

		if (fp && fp->verdict == LT_FRAG_PRUNED)
			continue;
		data[n] = proven ? proven_cols > 0 : (other_cols > 0 || filter);
		idx[n++] = i;
	}
	old = lt_alloc_target(cxt);
	rc = lt_dataset_prefetch_fragments(ds, idx, n, data, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, what);
	return i;
}

/*
 * The is_assigned quals of the scan (column option is_assigned; assign.c): top-level conjuncts that are
 * the column or NOT the column.  They stay in the plan's quals (PostgreSQL rechecks them, so the
 * result never depends on this); here they become an exact row mask per fragment.
 */
static void
assign_mask_setup(LtScanState *st, ForeignScan *fsplan)
{
	ListCell   *lc;

	foreach(lc, fsplan->scan.plan.qual)
	{
		Node	   *n = lfirst(lc);
		bool		want = true;
		Var		   *var;

		if (IsA(n, BoolExpr) && ((BoolExpr *) n)->boolop == NOT_EXPR)
		{
			want = false;
			n = linitial(((BoolExpr *) n)->args);
		}
		if (!IsA(n, Var))
			continue;
		var = (Var *) n;
		if (var->varno != fsplan->scan.scanrelid || var->varlevelsup != 0 || var->varattno <= 0)
			continue;
		for (int c = 0; c < st->cols.n_columns; c++)
		{
			LtScanColumn *col = &st->cols.columns[c];

			if (col->attnum != var->varattno || col->kind != LT_COL_ASSIGNED || col->assign == NULL)
				continue;
			if (st->amask.readers == NULL)
			{
				st->amask.readers = palloc(sizeof(LtAssignReader *) * list_length(fsplan->scan.plan.qual));
				st->amask.want = palloc(sizeof(bool) * list_length(fsplan->scan.plan.qual));
			}
			st->amask.readers[st->amask.n] = col->assign;
			st->amask.want[st->amask.n++] = want;
		}
	}
}



/* Open the scanner of the next fragment; false at the end. */
static bool
next_fragment(LtScanState *st)
{
	lt_dataset *ds = st->entry->ds;
	const struct Lt__Pb__DataFragment *frag;
	const lt_frag_plan *fp;
	size_t		fi;
	lt_scan_options so = {0};
	MemoryContextCallback *cb;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;
	uint64		bytes = ds->store->bytes_read,
				reqs = ds->store->read_requests;

	close_scanner(st);
next:
	if (st->pstate)
	{
		uint64		u = pg_atomic_fetch_add_u64(&st->pstate->next_unit, 1);
		const LtScanUnit *unit;

		if (u >= (uint64) st->n_units)
			return false;
		unit = &st->units[u];
		fi = unit->fragment;
		so.range_start = unit->start;
		so.range_end = unit->end;
	}
	else
	{
		/* fragments the index pruned are never opened */
		while (st->next_fragment < ds->n_fragments &&
			   (fp = ltfdw_index_verdict(st->index, st->next_fragment)) != NULL && fp->verdict == LT_FRAG_PRUNED)
			st->next_fragment++;
		if (st->next_fragment >= ds->n_fragments)
			return false;
		fi = st->next_fragment++;
		if (fi >= st->prefetched_to)
			st->prefetched_to = ltfdw_prefetch_fragments(ds, st->index, fi,
														 st->qual_only != NIL && !ltfdw_filter_needs_local_check(st->filter)
														 ? st->lean.n_proj : st->cols.n_proj,
														 st->cols.n_proj, st->filter != NULL, st->lib_cxt, st->opts.uri);
	}
	frag = ds->fragments[fi];
	fp = ltfdw_index_verdict(st->index, fi);
	if (fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_CANDIDATES))
	{
		/* random access: only the pages holding the selected rows */
		so.offsets = fp->offsets;
		so.n_offsets = fp->n_offsets;
		/* the version's files stay open: the next lookup reads only its rows' chunks */
		if (!lt_xact_is_view(st->entry))
			so.file_cache = lt_dataset_file_cache(st->entry);
	}
	if (st->amask.n > 0 && !lt_assign_mask_selection(&st->amask, frag, st->lib_cxt, &so))
	{
		/* no row of the fragment (or unit) passes the is_assigned quals: not opened */
		st->fragments_masked++;
		memset(&so, 0, sizeof(so));
		goto next;
	}

	/* rows the index proved need no filter and no recheck: the columns only the quals read are not read */
	{
		const LtColumnBinding *b = &st->cols;

		if (st->qual_only != NIL && fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_ALL) &&
			!ltfdw_filter_needs_local_check(st->filter))
			b = &st->lean;
		if (b != st->cur && b == &st->lean && st->chunk_nulls)
		{
			ListCell   *lc;

			/* those attributes must read as NULL again, not as values of an earlier fragment's chunk */
			foreach(lc, st->qual_only)
			{
				for (int r = 0; r < st->chunk_alloc; r++)
					st->chunk_nulls[(size_t) r * st->natts + lfirst_int(lc) - 1] = true;
				st->nulls_false[lfirst_int(lc) - 1] = false;
			}
		}
		st->cur = b;
	}
	so.n_fields = st->cur->n_proj;
	so.fields = st->cur->proj;
	so.room = st->cur->room;
	so.want_row_ids = st->cur->want_row_ids;
	so.bufpool = st->bufpool;
	/*
	 * The scan's first batch is small: a LIMIT then reads only the first chunks of each column, from
	 * files kept open with their chunk tables (the next LIMIT reads just those chunks again).
	 */
	if (!st->pstate && st->next_fragment == 1)
	{
		so.first_batch_rows = 64;
		if (!lt_xact_is_view(st->entry))
			so.file_cache = lt_dataset_file_cache(st->entry);
	}

	/* the callback lives in lib_cxt itself: registered again after every reset */
	cb = MemoryContextAlloc(st->lib_cxt, sizeof(MemoryContextCallback));
	cb->func = scanner_release;
	cb->arg = st;
	MemoryContextRegisterResetCallback(st->lib_cxt, cb);

	old = lt_alloc_target_arena(&st->arena);
	{
		/* the filter lives and dies with the scanner (it allocates scratch as it evaluates) */
		MemoryContext oldcxt = MemoryContextSwitchTo(st->lib_cxt);

		/* every row of ROWS and ALL fragments passes the filter: the index proved it */
		if (!fp || fp->verdict == LT_FRAG_SCAN || fp->verdict == LT_FRAG_CANDIDATES)
			so.filter = ltfdw_filter_for_scan(st->filter);
		MemoryContextSwitchTo(oldcxt);
	}
	rc = lt_fragment_scanner_open(ds, frag, &so, &st->scanner, &err);
	lt_alloc_target(old);
	ltfdw_bind_blob_sources(st->cur, ds, frag);
	st->bytes_read += ds->store->bytes_read - bytes;
	st->read_requests += ds->store->read_requests - reqs;
	if (rc != LT_OK)
	{
		st->scanner = NULL;
		lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, st->opts.uri, st->entry->version));
	}
	st->fragments_scanned++;
	st->scanning_range = so.range_end != 0 || so.offsets != NULL;
	if (!st->scanning_range)
		st->rows_deleted += frag->physical_rows - lt_fragment_live_rows(frag);
	return true;
}

void
ltfdw_bind_blob_sources(const LtColumnBinding *b, lt_dataset *ds, const Lt__Pb__DataFragment *frag)
{
	for (int c = 0; c < b->n_columns; c++)
		if (b->columns[c].kind == LT_COL_FIELD)
			lt_conv_bind_blob(b->columns[c].conv, ds, frag);
}

/* The next batch with at least one row; false at the end of the scan. */
static bool
next_batch(LtScanState *st)
{
	for (;;)
	{
		lt_dataset *ds = st->entry->ds;
		MemoryContext old;
		lt_error	err;
		lt_code		rc;
		uint64		bytes,
					reqs;

		CHECK_FOR_INTERRUPTS();
		if (st->scanner == NULL && !next_fragment(st))
			return false;
		bytes = ds->store->bytes_read;
		reqs = ds->store->read_requests;
		old = lt_alloc_target_arena(&st->arena);
		rc = lt_fragment_scanner_next(st->scanner, &st->batch, &err);
		lt_alloc_target(old);
		st->bytes_read += ds->store->bytes_read - bytes;
		st->read_requests += ds->store->read_requests - reqs;
		if (rc != LT_OK)
		{
			st->batch = NULL;
			lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, st->opts.uri, st->entry->version));
		}
		if (st->batch == NULL)
		{
			close_scanner(st);
			continue;
		}
		if (st->batch->length > 0)
		{
			st->batch_row = 0;
			return true;
		}
	}
}

/* Fewer rows when the strings (or binary values) of a column would take more than this. */
#define LT_CHUNK_COLUMN_BYTES	((int64) 4 * 1024 * 1024)

/* Rows of a chunk from `start`: at most n, fewer when a column's values are big. */
static int
chunk_rows(LtScanState *st, int64 start, int n)
{
	for (int c = 0; c < st->cur->n_columns && n > 1; c++)
	{
		const LtScanColumn *col = &st->cur->columns[c];

		/* a blob's bytes are read as its row is converted: one row at a time, none a LIMIT does not return */
		if (col->kind == LT_COL_FIELD && col->conv->kind == LT_CONV_BLOB)
			return 1;
		const lt_array *a;

		if (col->kind != LT_COL_FIELD || !col->batch || (a = st->batch->columns[col->proj]) == NULL)
			continue;
		if (a->offsets && lt_type_is_var_width(a->field->type))
		{
			while (n > 1 && a->offsets[start + n] - a->offsets[start] > LT_CHUNK_COLUMN_BYTES)
				n /= 2;
		}
		else if (a->field->type == LT_TYPE_FIXED_BINARY && a->field->byte_width > 0)
			n = Max(1, Min(n, (int) (LT_CHUNK_COLUMN_BYTES / a->field->byte_width)));
	}
	return n;
}

/* Room in the matrix for a chunk of n rows: grown to chunk_cap rows at once, new rows all NULL. */
static void
matrix_reserve(LtScanState *st, int n)
{
	Size		w = (Size) Max(st->natts, 1);
	Size		had = (Size) st->chunk_alloc * w;
	Size		cells = (Size) st->chunk_cap * w;

	if (n <= st->chunk_alloc)
		return;
	st->chunk_values = repalloc(st->chunk_values, sizeof(Datum) * cells);
	st->chunk_nulls = repalloc(st->chunk_nulls, sizeof(bool) * cells);
	memset(st->chunk_values + had, 0, sizeof(Datum) * (cells - had));
	memset(st->chunk_nulls + had, true, sizeof(bool) * (cells - had));
	memset(st->nulls_false, false, sizeof(bool) * w);	/* the new rows' flags are NULL */
	st->chunk_alloc = st->chunk_cap;
}

/*
 * Convert row `start` of the batch, column by column with the per-value path, into the matrix's
 * first row: the row where a batch loop stopped, so that its errors are raised in column order.
 */
static void
convert_row(LtScanState *st, int64 start)
{
	Datum	   *values = st->chunk_values;
	bool	   *nulls = st->chunk_nulls;

	st->converting_addr = st->batch->row_addrs[start];
	for (int c = 0; c < st->cur->n_columns; c++)
	{
		const LtScanColumn *col = &st->cur->columns[c];
		int			k = col->attnum - 1;

		st->converting = col;
		st->nulls_false[k] = false;
		nulls[k] = false;
		switch (col->kind)
		{
			case LT_COL_ROWID:
				values[k] = Int64GetDatum((int64) st->batch->row_ids[start]);
				break;
			case LT_COL_ROWADDR:
				values[k] = Int64GetDatum((int64) st->batch->row_addrs[start]);
				break;
			case LT_COL_ASSIGNED:
				values[k] = BoolGetDatum(lt_assign_reader_get(col->assign, st->batch->row_addrs[start]));
				break;
			case LT_COL_FIELD:
				values[k] = lt_conv_datum(col->conv, st->batch->columns[col->proj], start, &nulls[k]);
				break;
		}
	}
}

/*
 * Convert the next chunk of the batch, from batch_row: the batch loops column by column (a loop
 * that stops at a slot it cannot convert ends the chunk there), then the other columns row by row;
 * the result is always at least one row, and every error is the one the row-at-a-time conversion
 * raises first (rows in order, columns in order within a row).
 */
static void
convert_chunk(LtScanState *st)
{
	const lt_batch *b = st->batch;
	int64		start = st->batch_row;
	int			natts = st->natts;
	int			n;
	bool		per_value = false;
	ErrorContextCallback errcb;
	MemoryContext old;
	uint64		bytes,
				reqs;

	n = (int) Min(b->length - start, (int64) Min(st->chunk_next, st->chunk_cap));
	if (st->chunk_next < st->chunk_cap)
		st->chunk_next *= 2;
	n = chunk_rows(st, start, n);
	matrix_reserve(st, n);

	MemoryContextReset(st->chunk_cxt);
	old = MemoryContextSwitchTo(st->chunk_cxt);
	bytes = st->entry->ds->store->bytes_read;	/* blob columns read as they convert */
	reqs = st->entry->ds->store->read_requests;
	errcb.callback = conversion_error_callback;
	errcb.arg = st;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	for (int c = 0; c < st->cur->n_columns && n > 0; c++)
	{
		const LtScanColumn *col = &st->cur->columns[c];
		Datum	   *values = st->chunk_values + (col->attnum - 1);
		bool	   *nulls = st->chunk_nulls + (col->attnum - 1);

		switch (col->kind)
		{
			case LT_COL_ROWID:
				for (int k = 0; k < n; k++)
				{
					values[(size_t) k * natts] = Int64GetDatum((int64) b->row_ids[start + k]);
					nulls[(size_t) k * natts] = false;
				}
				break;
			case LT_COL_ROWADDR:
				for (int k = 0; k < n; k++)
				{
					values[(size_t) k * natts] = Int64GetDatum((int64) b->row_addrs[start + k]);
					nulls[(size_t) k * natts] = false;
				}
				break;
			case LT_COL_ASSIGNED:
				for (int k = 0; k < n; k++)
				{
					values[(size_t) k * natts] = BoolGetDatum(lt_assign_reader_get(col->assign, b->row_addrs[start + k]));
					nulls[(size_t) k * natts] = false;
				}
				break;
			case LT_COL_FIELD:
				if (col->batch)
				{
					const lt_array *a = b->columns[col->proj];
					int			k = col->attnum - 1;

					/*
					 * A column without a validity bitmap writes no null flags when they are all
					 * false already: cleared once for the whole matrix, until something writes one
					 */
					if (a != NULL && a->validity == NULL && !st->nulls_false[k])
					{
						for (int r = 0; r < st->chunk_alloc; r++)
							nulls[(size_t) r * natts] = false;
						st->nulls_false[k] = true;
					}
					else if (a == NULL || a->validity != NULL)
						st->nulls_false[k] = false;
					n = lt_conv_batch(col->conv, a, start, n, values, nulls, natts, st->nulls_false[k]);
				}
				else
				{
					per_value = true;
					st->nulls_false[col->attnum - 1] = false;
				}
				break;
		}
	}
	if (n == 0)
	{
		convert_row(st, start);
		n = 1;
	}
	else if (per_value)
	{
		for (int k = 0; k < n; k++)
		{
			st->converting_addr = b->row_addrs[start + k];
			for (int c = 0; c < st->cur->n_columns; c++)
			{
				const LtScanColumn *col = &st->cur->columns[c];
				size_t		at = (size_t) k * natts + (col->attnum - 1);

				if (col->kind != LT_COL_FIELD || col->batch)
					continue;
				st->converting = col;
				st->chunk_values[at] = lt_conv_datum(col->conv, b->columns[col->proj], start + k,
													 &st->chunk_nulls[at]);
			}
		}
	}
	st->converting = NULL;
	error_context_stack = errcb.previous;
	MemoryContextSwitchTo(old);
	st->bytes_read += st->entry->ds->store->bytes_read - bytes;
	st->read_requests += st->entry->ds->store->read_requests - reqs;
	st->chunk_start = start;
	st->chunk_len = n;
	st->local_check = st->filter && ltfdw_filter_needs_local_check(st->filter);
	st->fast_rows = !st->local_check && !st->row_identity && !st->params_due && !st->knn;
}

/*
 * The scan of a table being updated or deleted from: the row's identity in its ctid (modify.c reads
 * it back): the offset in the block number, 1 + the index of its fragment in this version's
 * fragment list in the offset number.
 */
/* The most fragments the row identity addresses: its 16-bit offset number, 0 excluded. */
#define LT_MAX_IDENTITY_FRAGMENTS ((int) PG_UINT16_MAX)

static void
set_row_identity(LtScanState *st, TupleTableSlot *slot, int64 row)
{
	lt_dataset *ds = st->entry->ds;
	uint64		addr = st->batch->row_addrs[row];
	uint64		frag = addr >> 32;
	size_t		lo = st->identity_index;

	/* a batch holds rows of one fragment: the position found for the last row is usually right */
	if (lo >= ds->n_fragments || ds->fragments[lo]->id != frag)
		lo = lt_dataset_fragment_index(ds, frag);
	st->identity_index = lo;
	/*
	 * The offset number is 16 bits wide; nothing checks it against a heap page's MaxOffsetNumber for a
	 * foreign table's row identity, so every value but 0 is usable.
	 */
	if (lo >= ds->n_fragments || lo + 1 > LT_MAX_IDENTITY_FRAGMENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lt_fdw: cannot update or delete rows of fragment " UINT64_FORMAT " of foreign table \"%s\"",
						frag, RelationGetRelationName(st->rel)),
				 errdetail("UPDATE and DELETE address at most %d fragments; dataset %s has %zu at version " UINT64_FORMAT ".",
						   LT_MAX_IDENTITY_FRAGMENTS, st->opts.uri, ds->n_fragments, st->entry->version),
				 errhint("Compact the dataset with a Lance engine (its optimize / compact_files), or delete through lt_insert_overwrite, which addresses rows by predicate.")));
	ItemPointerSet(&slot->tts_tid, (BlockNumber) (uint32) addr, (OffsetNumber) (lo + 1));
}

/*
 * ExecClearTuple of the scan slot, inline when the slot holds nothing of its own (no tuple, no
 * memory: what tts_heap_clear and tts_virtual_clear then do); otherwise the slot's own clear.
 */
static inline void
clear_scan_slot(TupleTableSlot *slot)
{
	if (likely(!(slot->tts_flags & TTS_FLAG_SHOULDFREE) &&
			   ((slot->tts_ops == &TTSOpsHeapTuple && ((HeapTupleTableSlot *) slot)->tuple == NULL) ||
				slot->tts_ops == &TTSOpsVirtual)))
	{
		if (slot->tts_ops == &TTSOpsHeapTuple)
			((HeapTupleTableSlot *) slot)->off = 0;
		slot->tts_nvalid = 0;
		slot->tts_flags |= TTS_FLAG_EMPTY;
		ItemPointerSetInvalid(&slot->tts_tid);
	}
	else
		ExecClearTuple(slot);
}

static pg_noinline TupleTableSlot *iterate_rows(ForeignScanState *node);

/*
 * Per row: the next row of the converted chunk goes straight into the slot (ExecStoreVirtualTuple
 * inline); a new chunk or batch, parameters, row identities, local checks and kNN take
 * iterate_rows, out of line, so that this frame stays small.
 */
TupleTableSlot *
ltIterateForeignScan(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;

	if (likely(st->fast_rows && st->batch_row < st->chunk_start + st->chunk_len))
	{
		size_t		at = (size_t) (st->batch_row++ - st->chunk_start) * st->natts;

		clear_scan_slot(slot);
		slot->tts_values = st->chunk_values + at;
		slot->tts_isnull = st->chunk_nulls + at;
		slot->tts_flags &= ~TTS_FLAG_EMPTY;
		slot->tts_nvalid = slot->tts_tupleDescriptor->natts;
		return slot;
	}
	return iterate_rows(node);
}

static pg_noinline TupleTableSlot *
iterate_rows(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	if (st->params_due)
		params_now(st, node);
	if (st->knn)
		return ltfdw_knn_iterate(node, st);
	for (;;)
	{
		size_t		at;

		ExecClearTuple(slot);
		if (st->batch == NULL || st->batch_row >= st->batch->length)
		{
			/*
			 * The last row's values are dead now: free them before the scanner moves on, so that
			 * nothing of ours sits above the memory of a fragment's scanner when it is freed
			 */
			MemoryContextReset(st->chunk_cxt);
			st->chunk_start = st->chunk_len = 0;
			if (!next_batch(st))
				return slot;
		}
		if (st->batch_row >= st->chunk_start + st->chunk_len)
			convert_chunk(st);
		at = (size_t) (st->batch_row++ - st->chunk_start) * st->natts;
		slot->tts_values = st->chunk_values + at;
		slot->tts_isnull = st->chunk_nulls + at;
		ExecStoreVirtualTuple(slot);
		if (st->row_identity)
			set_row_identity(st, slot, st->batch_row - 1);

		/* remote quals this scan could not push (a changed schema, an unpushable parameter value) */
		if (!st->local_check)
			return slot;
		econtext->ecxt_scantuple = slot;
		if (ltfdw_filter_local_check(st->filter, econtext))
			return slot;
		ResetExprContext(econtext);
		InstrCountFiltered2(node, 1);
	}
}

void
ltReScanForeignScan(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;

	close_scanner(st);
	st->next_fragment = 0;
	st->prefetched_to = 0;
	st->batch = NULL;
	st->chunk_start = st->chunk_len = 0;
	st->chunk_next = LT_CHUNK_FIRST;
	st->params_due = true;
	if (st->knn)
		ltfdw_knn_rescan(st->knn);
}

/* ---- parallel scans ------------------------------------------------------------------------- */

/* Parallel workers read local datasets through the same options (S3 will need its credentials). */
bool
ltIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	LtTableOptions opts;

	lt_get_table_options(rte->relid, &opts);
	/* workers cannot read this transaction's own (uncommitted) changes */
	return opts.dataset_dir != NULL &&
		!(opts.version == 0 && opts.tag == NULL && lt_xact_view(opts.dataset_dir, false) != NULL);
}

Size
ltEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt)
{
	return sizeof(LtParallelState);
}

void
ltInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	LtScanState *st = node->fdw_state;
	LtParallelState *ps = coordinate;

	/* 0: the leader reads its transaction's own changes, which workers cannot (a plan made before them) */
	ps->version = lt_xact_is_view(st->entry) ? 0 : st->entry->version;
	pg_atomic_init_u64(&ps->next_unit, 0);
	pg_atomic_init_u64(&ps->fragments_scanned, 0);
	pg_atomic_init_u64(&ps->rows_deleted, 0);
	pg_atomic_init_u64(&ps->rows_filtered, 0);
	pg_atomic_init_u64(&ps->bytes_read, 0);
	pg_atomic_init_u64(&ps->read_requests, 0);
	st->pstate = ps;
	/* Gather has evaluated the initplans the workers get: the parameters have their values now */
	if (st->params_due)
		params_now(st, node);
	build_units(st);
}

void
ltReInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	LtScanState *st = node->fdw_state;
	LtParallelState *ps = coordinate;

	pg_atomic_write_u64(&ps->next_unit, 0);
	/* the rescan's new parameters: look up the index again; the workers build the same units */
	if (st->params_due)
		params_now(st, node);
	build_units(st);
}

void
ltInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc, void *coordinate)
{
	LtScanState *st = node->fdw_state;
	LtParallelState *ps = coordinate;

	if (ps->version == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: a parallel scan of foreign table \"%s\" cannot read its transaction's own changes",
						RelationGetRelationName(st->rel)),
				 errhint("Plan the query again (it was planned before the changes), or set max_parallel_workers_per_gather = 0.")));
	scan_open(node, st, true, ps->version);
	st->knn = ltfdw_knn_begin(node, st);
	params_now(st, node);
	st->pstate = ps;
	build_units(st);
}

/*
 * At the end of a parallel scan each worker adds its statistics to shared memory, and the leader
 * (whose shutdown comes after the workers': Gather has seen every worker's end of data, and the
 * segment lives until Gather shuts down) adds their sum to its own, so that EXPLAIN ANALYZE shows
 * the whole scan. A Gather stopped early (LIMIT) may shut down before its workers: then their
 * numbers are partial.
 */
void
ltShutdownForeignScan(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;
	LtParallelState *ps;

	if (!node->ss.ps.plan->parallel_aware || st == NULL || st->pstate == NULL || st->stats_merged)
		return;
	ps = st->pstate;
	st->stats_merged = true;
	if (IsParallelWorker())
	{
		uint64		filtered = st->rows_filtered;

		if (st->scanner)		/* still open: a Gather that stopped early */
		{
			lt_scan_stats stats;

			lt_fragment_scanner_stats(st->scanner, &stats);
			filtered += stats.rows_filtered;
		}
		pg_atomic_fetch_add_u64(&ps->fragments_scanned, st->fragments_scanned);
		pg_atomic_fetch_add_u64(&ps->rows_deleted, st->rows_deleted);
		pg_atomic_fetch_add_u64(&ps->rows_filtered, filtered);
		pg_atomic_fetch_add_u64(&ps->bytes_read, st->bytes_read);
		pg_atomic_fetch_add_u64(&ps->read_requests, st->read_requests);
	}
	else
	{
		st->fragments_scanned += pg_atomic_read_u64(&ps->fragments_scanned);
		st->rows_deleted += pg_atomic_read_u64(&ps->rows_deleted);
		st->rows_filtered += pg_atomic_read_u64(&ps->rows_filtered);
		st->bytes_read += pg_atomic_read_u64(&ps->bytes_read);
		st->read_requests += pg_atomic_read_u64(&ps->read_requests);
	}
}

void
ltEndForeignScan(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;

	if (st == NULL)
		return;
	/* the slot gets its own arrays back (the matrix goes with the executor's memory) */
	if (st->slot_values)
	{
		TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;

		ExecClearTuple(slot);
		slot->tts_values = st->slot_values;
		slot->tts_isnull = st->slot_isnull;
	}
	if (st->lib_cxt)
		close_scanner(st);
	scan_state_release(st);
}
