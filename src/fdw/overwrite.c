/*
 * overwrite.c — INSERT OVERWRITE … WHERE: a predicate-scoped replace committed as one Lance Update.
 *
 * With lt_fdw.overwrite_where set, an INSERT into an lt_fdw table first deletes the rows of the
 * dataset that match the predicate (evaluated against the transaction's read version, with its own
 * earlier writes), then appends its rows; both go to the transaction (xact.c), whose commit lowers
 * deletes + new fragments to one Update (lt_txn.c).  lt_insert_overwrite() runs such an INSERT.
 *
 *   binding     the predicate text is parsed as one SQL expression and bound against the target
 *               table, as a WHERE clause would be (unknown columns, non-boolean, aggregates and
 *               window functions are the parser's errors); subqueries, volatile functions and the
 *               scan-filled columns _rowid / _rowaddr are refused.
 *   delete set  every fragment is scanned with the predicate pushed into the reader where it
 *               translates (quals.c) and checked by Postgres where it does not; a fragment whose
 *               live rows all match is removed by id (never left empty), a partly matched one
 *               gets its deleted offsets merged into a new deletion vector.
 *   validation  each inserted row must satisfy the predicate (Postgres evaluates it on the new
 *               row), else ERROR 44000; lt_fdw.overwrite_validate = off appends such rows as they are.
 *   concurrency at commit, every fragment a concurrent commit added over the read version is
 *               tested against the predicate (lt_overwrite_check_fragment, called from lt_txn's
 *               rebase); a matching row fails the commit with 40001.
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "rewrite/rewriteManip.h"
#include "utils/ruleutils.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "rewrite/rewriteHandler.h"
#include "utils/builtins.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "convert.h"
#include "dataset.h"
#include "index.h"
#include "option.h"
#include "overwrite.h"
#include "quals.h"
#include "scan.h"
#include "xact.h"
#include "util/lt_alloc.h"
#include "index/lt_index_plan.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

char	   *lt_overwrite_where = NULL;
bool		lt_overwrite_validate = true;
LtOverwriteStats lt_overwrite_last;

void
lt_overwrite_init(void)
{
	DefineCustomStringVariable("lt_fdw.overwrite_where",
							   "Makes an INSERT into an lt_fdw table replace the rows matching this predicate.",
							   "A SQL boolean expression over the target table's columns (normally SET LOCAL); "
							   "the deletes and the new rows are committed as one Lance version.",
							   &lt_overwrite_where, "", PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("lt_fdw.overwrite_validate",
							 "Rejects rows of a replacing INSERT that do not satisfy lt_fdw.overwrite_where.",
							 "Off appends them as they are (they are then not replaced by a re-run).",
							 &lt_overwrite_validate, true, PGC_USERSET, 0, NULL, NULL, NULL);
}

bool
lt_overwrite_active(void)
{
	return lt_overwrite_where != NULL && lt_overwrite_where[0] != '\0';
}

/* ---- who set the settings ------------------------------------------------------------------- */

const char *
lt_overwrite_predicate(Relation rel)
{
	char	   *why;

	if (!lt_overwrite_active())
		return NULL;
	if ((why = lt_setting_not_own("lt_fdw.overwrite_where")) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: lt_fdw.overwrite_where is set, but not by this transaction: the INSERT into foreign table \"%s\" does not replace rows",
						RelationGetRelationName(rel)),
				 errdetail("%s", why),
				 errhint("SET LOCAL lt_fdw.overwrite_where in the transaction of the INSERT, or RESET it.")));
	return lt_overwrite_where;
}

bool
lt_overwrite_validating(void)
{
	/* off only counts when set as lt_fdw.overwrite_where must be: a planted "off" is ignored */
	return lt_overwrite_validate || lt_setting_not_own("lt_fdw.overwrite_validate") != NULL;
}

/*
 * A replace deletes rows: besides INSERT (the executor checks it), DELETE on the table and SELECT
 * on the columns the predicate reads, as DELETE ... WHERE asks them, for userid (the role the
 * statement checks its privileges as) and the current role, when they differ.
 */
void
lt_overwrite_check_privileges(Relation rel, const LtOverwritePred *pred, Oid userid)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			users[2] = {userid, GetUserId()};

	for (int u = 0; u < (users[0] == users[1] ? 1 : 2); u++)
	{
		ListCell   *lc;

		if (pg_class_aclcheck(relid, users[u], ACL_DELETE) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for foreign table %s", RelationGetRelationName(rel)),
					 errdetail("A replace (lt_fdw.overwrite_where, lt_insert_overwrite) deletes rows: role \"%s\" needs DELETE as well as INSERT.",
							   GetUserNameFromId(users[u], false))));
		if (pg_class_aclcheck(relid, users[u], ACL_SELECT) == ACLCHECK_OK)
			continue;
		foreach(lc, pred->attnums)
		{
			AttrNumber	attnum = lfirst_int(lc);

			if (pg_attribute_aclcheck(relid, attnum, users[u], ACL_SELECT) != ACLCHECK_OK)
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("permission denied for foreign table %s", RelationGetRelationName(rel)),
						 errdetail("The replace predicate reads column \"%s\": role \"%s\" needs SELECT on it.",
								   NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname),
								   GetUserNameFromId(users[u], false))));
		}
	}
}

/* ---- binding -------------------------------------------------------------------------------- */

typedef struct BindCtx
{
	const char *text;			/* the predicate */
	const char *relname;
	const char *source;			/* where the predicate came from */
} BindCtx;

/* What the parser sees: the predicate after this prefix. */
#define BIND_PREFIX "SELECT "

/* Parser errors point into the predicate, not into the client's statement nor our own text. */
static void
bind_error_callback(void *arg)
{
	BindCtx    *bc = arg;
	int			pos = geterrposition();

	if (pos > 0)
	{
		errposition(0);
		internalerrposition(Max(pos - (int) strlen(BIND_PREFIX), 1));
		internalerrquery(bc->text);
	}
	errcontext("replace predicate of foreign table \"%s\" (%s)", bc->relname, bc->source);
}

static bool
has_unwanted(Node *node, void *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubLink) || IsA(node, SubPlan) || IsA(node, Param))
		return true;
	return expression_tree_walker(node, has_unwanted, ctx);
}

LtOverwritePred *
lt_overwrite_bind(Relation rel, const char *text)
{
	return lt_overwrite_bind_from(rel, text, "lt_fdw.overwrite_where", "lt_fdw.overwrite_where");
}

LtOverwritePred *
lt_overwrite_bind_from(Relation rel, const char *text, const char *source, const char *construct)
{
	char	   *sql;
	LtOverwritePred *p = palloc0(sizeof(LtOverwritePred));
	const char *relname = RelationGetRelationName(rel);
	BindCtx		bc;
	ErrorContextCallback errcb;
	List	   *raw;
	SelectStmt *sel;
	ResTarget  *rt;
	ParseState *pstate;
	ParseNamespaceItem *nsi;
	Node	   *expr;
	Bitmapset  *attrs = NULL;
	int			k;
	const char *s = text ? text : "";

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (*s == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: the replace predicate for foreign table \"%s\" is empty", relname),
				 errhint("Give a boolean expression over the table's columns, e.g. dt = DATE '2026-08-01'.")));
	p->text = pstrdup(text);
	sql = psprintf(BIND_PREFIX "%s", text);
	bc.text = p->text;
	bc.relname = relname;
	bc.source = source;
	errcb.callback = bind_error_callback;
	errcb.arg = &bc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	sel = list_length(raw) == 1 ? (SelectStmt *) ((RawStmt *) linitial(raw))->stmt : NULL;
	if (sel == NULL || !IsA(sel, SelectStmt) || list_length(sel->targetList) != 1 || sel->fromClause ||
		sel->whereClause || sel->groupClause || sel->havingClause || sel->windowClause || sel->distinctClause ||
		sel->sortClause || sel->limitCount || sel->limitOffset || sel->lockingClause || sel->withClause ||
		sel->intoClause || sel->valuesLists || sel->op != SETOP_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("lt_fdw: the replace predicate for foreign table \"%s\" must be one boolean expression",
						relname),
				 errdetail("The predicate is \"%s\".", text)));
	rt = linitial_node(ResTarget, sel->targetList);
	if (rt->name)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("lt_fdw: the replace predicate for foreign table \"%s\" must be one boolean expression",
						relname),
				 errdetail("The predicate is \"%s\".", text)));

	pstate = make_parsestate(NULL);
	pstate->p_sourcetext = sql;
	nsi = addRangeTableEntryForRelation(pstate, rel, AccessShareLock, NULL, false, false);
	addNSItemToQuery(pstate, nsi, false, true, true);
	expr = transformExpr(pstate, rt->val, EXPR_KIND_WHERE);
	expr = coerce_to_boolean(pstate, expr, construct);
	assign_expr_collations(pstate, expr);
	error_context_stack = errcb.previous;

	if (pstate->p_hasSubLinks || has_unwanted(expr, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: the replace predicate for foreign table \"%s\" cannot contain a subquery",
						relname),
				 errdetail("The predicate is \"%s\".", text)));
	if (contain_volatile_functions(expr))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: the replace predicate for foreign table \"%s\" cannot call volatile functions",
						relname),
				 errdetail("The predicate is \"%s\"; it must give the same answer for a row at every evaluation.",
						   text)));
	pull_varattnos(expr, 1, &attrs);
	k = -1;
	while ((k = bms_next_member(attrs, k)) >= 0)
	{
		AttrNumber	attnum = k + FirstLowInvalidHeapAttributeNumber;
		char	   *field;

		if (attnum <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: the replace predicate for foreign table \"%s\" can only use its columns",
							relname),
					 errdetail("The predicate is \"%s\"; system columns and whole-row references are not columns of the dataset.",
							   text)));
		field = lt_column_field_name(RelationGetRelid(rel), attnum,
									 NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname));
		if (lt_is_row_identity_name(field))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: the replace predicate for foreign table \"%s\" cannot use column \"%s\"",
							relname, NameStr(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attname)),
					 errdetail("It reads %s, which scans fill in and new rows do not have.", field)));
		p->attnums = lappend_int(p->attnums, attnum);
	}
	p->expr = (Expr *) eval_const_expressions(NULL, expr);
	free_parsestate(pstate);
	return p;
}

/* ---- evaluating the predicate on rows --------------------------------------------------------- */

/* The predicate over one dataset version: the pushed filter and the rows' columns for the rest. */
typedef struct PredScan
{
	Relation	rel;
	LtOverwritePred *pred;
	LtColumnBinding cols;
	LtFdwFilter *lf;
	bool		local;			/* rows need Postgres's check too */
	ExprContext *econtext;
	TupleTableSlot *slot;
	MemoryContext lib_cxt;
} PredScan;

static void
predscan_init(PredScan *ps, Relation rel, const LtTableOptions *opts, LtDatasetEntry *entry, LtOverwritePred *pred)
{
	memset(ps, 0, sizeof(*ps));
	ps->rel = rel;
	ps->pred = pred;
	ltfdw_bind_columns(rel, opts, entry, pred->attnums, false, &ps->cols);
	ps->econtext = CreateStandaloneExprContext();
	ps->lf = ltfdw_build_filter(rel, 1, entry->ds->schema, make_ands_implicit(copyObject(pred->expr)), NULL);
	ltfdw_filter_set_params(ps->lf, ps->econtext);
	ps->local = ltfdw_filter_needs_local_check(ps->lf);
	ps->slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
	ps->lib_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw replace scan", ALLOCSET_DEFAULT_SIZES);
}

static void
predscan_end(PredScan *ps)
{
	ExecDropSingleTupleTableSlot(ps->slot);
	FreeExprContext(ps->econtext, true);
	MemoryContextDelete(ps->lib_cxt);
}

/* Does row r of the batch pass Postgres's part of the predicate? */
static bool
row_passes(PredScan *ps, lt_batch *b, int64 r)
{
	TupleTableSlot *slot = ps->slot;
	MemoryContext old = MemoryContextSwitchTo(ps->econtext->ecxt_per_tuple_memory);
	bool		ok;

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int c = 0; c < ps->cols.n_columns; c++)
	{
		const LtScanColumn *col = &ps->cols.columns[c];

		if (col->kind != LT_COL_FIELD || col->proj < 0)
			continue;
		slot->tts_values[col->attnum - 1] = lt_conv_datum(col->conv, b->columns[col->proj], r,
														  &slot->tts_isnull[col->attnum - 1]);
	}
	ExecStoreVirtualTuple(slot);
	ps->econtext->ecxt_scantuple = slot;
	ok = ltfdw_filter_local_check(ps->lf, ps->econtext);
	MemoryContextSwitchTo(old);
	ResetExprContext(ps->econtext);
	return ok;
}

/*
 * The live rows of frag (of ds) where the predicate holds: their addresses in *addrs (palloc'd,
 * ascending) when addrs is not NULL, or stop at the first one (*n = 1).  Returns the count.
 */
static int64
predscan_fragment(PredScan *ps, lt_dataset *ds, const Lt__Pb__DataFragment *frag, const uint32_t *offsets,
				  uint64 n_offsets, uint64 **addrs, const char *what)
{
	lt_scan_options so = {0};
	lt_fragment_scanner *sc = NULL;
	lt_batch   *b;
	lt_error	err;
	lt_code		rc;
	int64		n = 0,
				cap = 0;
	uint64	   *out = NULL;
	MemoryContext old;

	if (addrs)
		*addrs = NULL;
	old = lt_alloc_target(ps->lib_cxt);
	so.filter = ltfdw_filter_for_scan(ps->lf);
	so.offsets = offsets;
	so.n_offsets = n_offsets;
	if (ps->local)
	{
		so.n_fields = ps->cols.n_proj;
		so.fields = ps->cols.proj;
	}
	rc = lt_fragment_scanner_open(ds, frag, &so, &sc, &err);
	while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b != NULL)
	{
		for (int64 r = 0; r < b->length; r++)
		{
			if (ps->local)
			{
				MemoryContext lib = lt_alloc_target(old);
				bool		pass = row_passes(ps, b, r);

				lt_alloc_target(lib);
				if (!pass)
					continue;
			}
			if (!addrs)
			{
				n = 1;
				goto done;
			}
			if (n == cap)
			{
				cap = Max(1024, cap * 2);
				out = out ? repalloc_huge(out, sizeof(uint64) * cap) : MemoryContextAllocHuge(ps->econtext->ecxt_per_query_memory, sizeof(uint64) * cap);
			}
			out[n++] = b->row_addrs[r];
		}
	}
done:
	if (sc)
		lt_fragment_scanner_free(sc);
	lt_alloc_target(old);
	MemoryContextReset(ps->lib_cxt);
	if (rc != LT_OK)
		lt_report(&err, what);
	if (addrs)
		*addrs = out;
	return n;
}

static uint64
live_rows_of(const Lt__Pb__DataFragment *f)
{
	uint64		deleted = f->deletion_file && f->deletion_file->has_num_deleted_rows ?
		f->deletion_file->num_deleted_rows : 0;

	return f->physical_rows > deleted ? f->physical_rows - deleted : 0;
}

/* ---- the delete set ------------------------------------------------------------------------- */

/* An index plan and where it lives (lt_index_plan_done releases it). */
typedef struct IndexPlan
{
	lt_index_plan *plan;		/* NULL: no index narrows anything, scan every fragment */
	lt_index_planner *own;		/* a planner of our own (not a cached version's) */
	MemoryContext cxt;			/* the plan's (and our planner's) library memory */
} IndexPlan;

/*
 * What the dataset's scalar indexes and zone maps say about each fragment (lt_index_plan), for
 * the part of the predicate the reader evaluates.  A cached version (entry, not an own-writes
 * view) keeps its planner with its index readers for later statements, as scans do (index.c);
 * otherwise the planner is our own, in cxt.  An index error is no error here: the fragments are
 * then scanned.
 */
static void
index_plan(PredScan *ps, lt_dataset *ds, LtDatasetEntry *entry, MemoryContext cxt, IndexPlan *ip)
{
	MemoryContext old = lt_alloc_target(cxt);
	lt_filter  *f = ltfdw_filter_for_scan(ps->lf);
	lt_index_planner *planner = NULL;
	lt_error	err;
	lt_code		rc = LT_OK;

	memset(ip, 0, sizeof(*ip));
	ip->cxt = cxt;
	if (!lt_enable_index_scan)
		f = NULL;				/* lt_fdw.enable_index_scan = off: every fragment is scanned */
	if (f && entry && !lt_xact_is_view(entry))
	{
		ip->cxt = entry->cxt;
		lt_alloc_target(entry->cxt);
		if (entry->planner == NULL)
			rc = lt_index_planner_open(ds, &entry->planner, &err);
		planner = entry->planner;
	}
	else if (f)
	{
		rc = lt_index_planner_open(ds, &ip->own, &err);
		planner = ip->own;
	}
	if (f && rc == LT_OK)
		rc = lt_index_plan_build(planner, f, 0, NULL, &ip->plan, &err);
	if (f && rc != LT_OK)
	{
		ip->plan = NULL;
		elog(DEBUG1, "lt_fdw: the replace scans every fragment: %s", err.msg);
	}
	lt_alloc_target(old);
}

static void
index_plan_done(IndexPlan *ip)
{
	MemoryContext old = lt_alloc_target(ip->cxt);

	if (ip->plan)
		lt_index_plan_free(ip->plan);
	if (ip->own)
		lt_index_planner_free(ip->own);
	lt_alloc_target(old);
	memset(ip, 0, sizeof(*ip));
}

void
lt_overwrite_plan(Relation rel, const LtTableOptions *opts, LtXactTable *xt, LtOverwritePred *pred,
				  LtOverwritePlan *plan)
{
	LtDatasetEntry *entry = lt_xact_view(opts->dataset_dir, true);
	const char *what = psprintf("dataset %s (foreign table \"%s\")", opts->uri, RelationGetRelationName(rel));
	PredScan	ps;
	MemoryContext icxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw replace index plan",
											   ALLOCSET_DEFAULT_SIZES);
	IndexPlan	ipl = {0};

	memset(plan, 0, sizeof(*plan));
	if (entry == NULL)
		entry = lt_dataset_acquire(RelationGetRelid(rel), opts, true);
	plan->version = entry->version;
	predscan_init(&ps, rel, opts, entry, pred);
	plan->filter = ltfdw_filter_text(ps.lf);
	plan->local_check = ps.local;
	PG_TRY();
	{
		lt_dataset *ds = entry->ds;
		lt_index_plan *ip;

		index_plan(&ps, ds, entry, icxt, &ipl);
		ip = ipl.plan;

		plan->fragments_total = ds->n_fragments;
		if (ip)
		{
			StringInfoData how;

			MemoryContext oldlib = lt_alloc_target(ipl.cxt);	/* rendered in the plan's memory */

			initStringInfo(&how);
			for (size_t u = 0; u < ip->n_used; u++)
				appendStringInfo(&how, "%s%s (%s) for %s", u ? ", " : "", ip->used[u].index->name,
								 lt_index_kind_name(ip->used[u].index->kind), lt_index_use_predicate(&ip->used[u]));
			lt_alloc_target(oldlib);
			plan->indexes = ip->n_used ? how.data : NULL;
		}
		for (size_t i = 0; i < ds->n_fragments; i++)
		{
			const Lt__Pb__DataFragment *f = ds->fragments[i];
			uint64		live = live_rows_of(f);
			uint64	   *addrs = NULL;
			int64		n;
			lt_frag_plan *fp = ip ? &ip->fragments[i] : NULL;
			lt_frag_verdict v = fp ? fp->verdict : LT_FRAG_SCAN;

			CHECK_FOR_INTERRUPTS();
			if (live == 0)
				continue;
			/* with a local check left, what the index proves is only a candidate set */
			if (ps.local && v == LT_FRAG_ALL)
				v = LT_FRAG_SCAN;
			if (ps.local && v == LT_FRAG_ROWS)
				v = LT_FRAG_CANDIDATES;
			if (v == LT_FRAG_PRUNED)
			{
				plan->fragments_pruned++;
				continue;
			}
			if (v == LT_FRAG_ALL || (v == LT_FRAG_ROWS && fp->n_offsets >= live))
			{
				/* proved fully matched from index data: removed by id, no row read */
				plan->fragments_metadata_only++;
				plan->fragments_removed++;
				plan->rows_deleted += live;
				if (xt)
					lt_xact_remove_fragment(xt, f->id);
				continue;
			}
			if (v == LT_FRAG_ROWS)
			{
				/* exactly these rows: deleted without a read */
				n = (int64) fp->n_offsets;
				addrs = palloc(sizeof(uint64) * Max(n, 1));
				for (int64 k = 0; k < n; k++)
					addrs[k] = ((uint64) f->id << 32) | fp->offsets[k];
				plan->fragments_by_index++;
			}
			else
			{
				bool		cand = v == LT_FRAG_CANDIDATES;

				n = predscan_fragment(&ps, ds, f, cand ? fp->offsets : NULL, cand ? fp->n_offsets : 0, &addrs,
									  what);
				plan->fragments_scanned++;
				plan->rows_scanned += cand ? fp->n_offsets : live;
			}
			if (n == 0)
				continue;
			plan->rows_deleted += n;
			if ((uint64) n >= live)
			{
				plan->fragments_removed++;
				if (xt)
					lt_xact_remove_fragment(xt, f->id);
			}
			else
			{
				plan->fragments_updated++;
				if (xt)
					lt_xact_delete(xt, addrs, n);
			}
			if (addrs)
				pfree(addrs);
		}
	}
	PG_FINALLY();
	{
		index_plan_done(&ipl);
		lt_dataset_unpin(entry);
	}
	PG_END_TRY();
	predscan_end(&ps);
	MemoryContextDelete(icxt);
}

/* ---- validation of the new rows ------------------------------------------------------------- */

/* "(v1, v2, ...)" of the slot's columns, each shortened, for the message. */
static char *
row_text(TupleTableSlot *slot)
{
	TupleDesc	td = slot->tts_tupleDescriptor;
	StringInfoData buf;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '(');
	for (int i = 0; i < td->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(td, i);
		char	   *v;
		Oid			out;
		bool		varlena;

		if (att->attisdropped)
			continue;
		if (!first)
			appendStringInfoString(&buf, ", ");
		first = false;
		if (slot->tts_isnull[i])
		{
			appendStringInfoString(&buf, "null");
			continue;
		}
		getTypeOutputInfo(att->atttypid, &out, &varlena);
		v = OidOutputFunctionCall(out, slot->tts_values[i]);
		if (strlen(v) > 64)
			appendStringInfo(&buf, "%.64s...", v);
		else
			appendStringInfoString(&buf, v);
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

void
lt_overwrite_validate_row(LtOverwritePred *p, Relation rel, TupleTableSlot *slot, uint64 rowno)
{
	ExprContext *ec;

	if (p->state == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(p));

		p->econtext = CreateStandaloneExprContext();
		p->state = ExecInitQual(make_ands_implicit(copyObject(p->expr)), NULL);
		MemoryContextSwitchTo(old);
	}
	ec = p->econtext;
	ec->ecxt_scantuple = slot;
	if (!ExecQual(p->state, ec))
		ereport(ERROR,
				(errcode(ERRCODE_WITH_CHECK_OPTION_VIOLATION),
				 errmsg("lt_fdw: row " UINT64_FORMAT " of the replacing INSERT into foreign table \"%s\" does not satisfy the replace predicate",
						rowno, RelationGetRelationName(rel)),
				 errdetail("Failing row contains %s; the predicate is \"%s\".", row_text(slot), p->text),
				 errhint("Every new row must match the predicate it replaces; SET LOCAL lt_fdw.overwrite_validate = off in the same transaction (validate => false) to append such rows anyway.")));
	ResetExprContext(ec);
}

/* ---- the commit's check of concurrent appends --------------------------------------------------- */

/* Does a live row of frag (of version v) match?  Index data first, then the rows. */
static int64
check_one_fragment(PredScan *ps, lt_dataset *v, const Lt__Pb__DataFragment *frag, MemoryContext cxt,
				   const char *what)
{
	IndexPlan	ipl;
	lt_index_plan *ip;
	lt_frag_plan *fp = NULL;
	int64		n;

	index_plan(ps, v, NULL, cxt, &ipl);
	ip = ipl.plan;

	for (size_t i = 0; ip && i < ip->n_fragments; i++)
		if (ip->fragments[i].fragment_id == frag->id)
			fp = &ip->fragments[i];
	PG_TRY();
	{
		if (fp && fp->verdict == LT_FRAG_PRUNED)
			n = 0;
		else if (fp && !ps->local && (fp->verdict == LT_FRAG_ALL || fp->verdict == LT_FRAG_ROWS) &&
				 fp->n_offsets > 0)
			n = 1;
		else if (fp && fp->verdict == LT_FRAG_CANDIDATES)
			n = predscan_fragment(ps, v, frag, fp->offsets, fp->n_offsets, NULL, what);
		else
			n = predscan_fragment(ps, v, frag, NULL, 0, NULL, what);
	}
	PG_FINALLY();
	{
		index_plan_done(&ipl);
	}
	PG_END_TRY();
	return n;
}

lt_code
lt_overwrite_check_fragment(void *arg, lt_dataset *v, const Lt__Pb__DataFragment *frag, lt_error *err)
{
	LtXactTable *xt = arg;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw replace check", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MemoryContext oldlib = lt_alloc_target(cxt);
	lt_code		rc = LT_OK;
	Oid			save_userid;
	int			save_sec;
	bool		pushed = false;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	/* at COMMIT no statement is running: functions of the predicate (SQL, PL/pgSQL) need a snapshot */
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	PG_TRY();
	{
		ListCell   *lc;

		foreach(lc, xt->overwrite_checks)
		{
			LtOverwriteCheck *oc = lfirst(lc);
			Relation	rel;

			if (oc->delete_only && !xt->inserted)
				continue;
			/* the predicate's functions run as the role that wrote it, whoever commits (a check made
			 * without one runs as the committing role) */
			SetUserIdAndSecContext(OidIsValid(oc->userid) ? oc->userid : save_userid,
								   save_sec | SECURITY_LOCAL_USERID_CHANGE);
			rel = relation_open(oc->relid, AccessShareLock);
			LtTableOptions opts;
			LtDatasetEntry e = {0};
			PredScan	ps;
			LtOverwritePred pred = {0};
			int64		n;

			lt_get_table_options(oc->relid, &opts);
			e.dir = xt->dir;
			e.version = v->version;
			e.ds = v;
			e.store = v->store;
			pred.text = oc->predicate;
			pred.expr = oc->expr;
			pred.attnums = oc->attnums;
			predscan_init(&ps, rel, &opts, &e, &pred);
			n = check_one_fragment(&ps, v, frag, cxt,
								   psprintf("version " UINT64_FORMAT " of dataset %s", v->version, xt->uri));
			predscan_end(&ps);
			relation_close(rel, AccessShareLock);
			if (n > 0)
			{
				rc = lt_error_set(err, LT_ECONFLICT,
								  "concurrent commit (version %llu of %s) added rows matching the replace predicate \"%s\" (fragment %llu): they would survive the replace",
								  (unsigned long long) v->version, xt->uri, oc->predicate,
								  (unsigned long long) frag->id);
				break;
			}
		}
	}
	PG_CATCH();
	{
		ErrorData  *ed;

		MemoryContextSwitchTo(cxt);
		ed = CopyErrorData();
		FlushErrorState();
		rc = lt_error_set(err, LT_EIO, "checking the rows version %llu of %s added against the replace predicate: %s",
						  (unsigned long long) v->version, xt->uri, ed->message);
	}
	PG_END_TRY();
	if (pushed)
		PopActiveSnapshot();
	SetUserIdAndSecContext(save_userid, save_sec);
	lt_alloc_target(oldlib);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return rc;
}

void
lt_overwrite_register(LtXactTable *xt, Relation rel, LtOverwritePred *pred)
{
	MemoryContext old = MemoryContextSwitchTo(xt->cxt);
	LtOverwriteCheck *oc = palloc0(sizeof(LtOverwriteCheck));

	oc->relid = RelationGetRelid(rel);
	oc->userid = GetUserId();
	oc->predicate = pstrdup(pred->text);
	oc->expr = copyObject(pred->expr);
	oc->attnums = list_copy(pred->attnums);
	MemoryContextSwitchTo(old);
	lt_xact_add_overwrite_check(xt, oc);
}

/* ---- the DELETE+INSERT spelling ------------------------------------------------------------- */

static bool
contains_param_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, contains_param_walker, context);
}

List *
lt_overwrite_delete_predicate(PlannerInfo *root, Index rtindex, Oid relid)
{
	RelOptInfo *baserel = find_base_rel(root, rtindex);
	LtPlanState *ps = baserel->fdw_private;
	List	   *clauses = NIL;
	ListCell   *lc;
	Expr	   *expr;
	Bitmapset  *attrs = NULL;
	int			k = -1;
	List	   *attnums = NIL;
	char	   *text;

	/* only when the scan alone decides which rows go: one relation, every qual pushed, nothing bound late */
	if (ps == NULL || ps->local_conds != NIL || bms_num_members(root->all_baserels) != 1 ||
		root->parse->hasSubLinks || baserel->joininfo != NIL)
		return NIL;
	foreach(lc, ps->remote_conds)
		clauses = lappend(clauses, copyObject(((RestrictInfo *) lfirst(lc))->clause));
	expr = clauses == NIL ? (Expr *) makeBoolConst(true, false) : make_ands_explicit(clauses);
	if (contains_param_walker((Node *) expr, NULL) || contain_volatile_functions((Node *) expr))
		return NIL;
	if (rtindex != 1)
		ChangeVarNodes((Node *) expr, rtindex, 1, 0);
	pull_varattnos((Node *) expr, 1, &attrs);
	while ((k = bms_next_member(attrs, k)) >= 0)
	{
		AttrNumber	attnum = k + FirstLowInvalidHeapAttributeNumber;

		if (attnum <= 0)
			return NIL;			/* ctid, a whole row: not a predicate over columns */
		attnums = lappend_int(attnums, attnum);
	}
	text = deparse_expression((Node *) expr, deparse_context_for(get_rel_name(relid), relid), false, false);
	return list_make3(makeString(text), expr, attnums);
}

void
lt_overwrite_register_delete(LtXactTable *xt, Relation rel, List *fdw_private)
{
	MemoryContext old = MemoryContextSwitchTo(xt->cxt);
	LtOverwriteCheck *oc = palloc0(sizeof(LtOverwriteCheck));

	oc->relid = RelationGetRelid(rel);
	oc->predicate = pstrdup(strVal(linitial(fdw_private)));
	oc->expr = copyObject(lsecond(fdw_private));
	oc->attnums = list_copy(lthird(fdw_private));
	oc->delete_only = true;
	oc->userid = GetUserId();	/* the DELETE's role: the commit's check runs as it */
	MemoryContextSwitchTo(old);
	lt_xact_add_overwrite_check(xt, oc);
}

/* ---- EXPLAIN -------------------------------------------------------------------------------- */

void
lt_overwrite_explain(const LtOverwritePred *pred, const LtOverwritePlan *plan, bool validate, ExplainState *es)
{
	StringInfoData how;

	ExplainPropertyText("Replace Predicate", pred->text, es);
	if (plan == NULL)
	{
		/* a role that may not read the table learns nothing about its rows */
		ExplainPropertyText("Delete Set", "not shown: the role may not read the table", es);
		ExplainPropertyBool("Validate", validate, es);
		return;
	}
	initStringInfo(&how);
	if (plan->indexes)
		appendStringInfo(&how, "index %s; ", plan->indexes);
	if (plan->filter)
		appendStringInfo(&how, "scan of %lld fragments with filter %s%s", (long long) plan->fragments_scanned,
						 plan->filter, plan->local_check ? " and a local check" : "");
	else
		appendStringInfo(&how, "scan of %lld fragments checked locally", (long long) plan->fragments_scanned);
	ExplainPropertyText("Delete Set", how.data, es);
	if (plan->indexes || plan->fragments_pruned)
		ExplainPropertyInteger("Fragments Pruned", NULL, plan->fragments_pruned, es);
	if (plan->fragments_by_index)
		ExplainPropertyInteger("Fragments Deleted From By Index", NULL, plan->fragments_by_index, es);
	ExplainPropertyInteger("Read Version", NULL, (int64) plan->version, es);
	ExplainPropertyInteger("Fragments To Remove", NULL, plan->fragments_removed, es);
	ExplainPropertyInteger("Metadata-Only Removals", NULL, plan->fragments_metadata_only, es);
	ExplainPropertyInteger("Fragments To Update", NULL, plan->fragments_updated, es);
	ExplainPropertyInteger("Rows To Delete", NULL, plan->rows_deleted, es);
	ExplainPropertyBool("Validate", validate, es);
}

/* ---- lt_insert_overwrite(target, predicate, query, validate) --------------------------------- */

PG_FUNCTION_INFO_V1(lt_insert_overwrite);

/*
 * The query text of lt_insert_overwrite and lt_merge_insert: exactly one SELECT (or VALUES), 42601
 * otherwise; a trailing semicolon and white space are cut off (the text is spliced into other SQL).
 */
char *
lt_check_select_query(char *query, const char *fn)
{
	size_t		n = strlen(query);
	List	   *raw;
	Node	   *stmt;

	while (n > 0 && (query[n - 1] == ';' || query[n - 1] == ' ' || query[n - 1] == '\t' ||
					 query[n - 1] == '\n' || query[n - 1] == '\r'))
		query[--n] = '\0';
	raw = raw_parser(query, RAW_PARSE_DEFAULT);
	stmt = list_length(raw) == 1 ? ((RawStmt *) linitial(raw))->stmt : NULL;
	if (stmt == NULL || !IsA(stmt, SelectStmt) || ((SelectStmt *) stmt)->intoClause)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s: the query must be one SELECT or VALUES statement", fn),
				 errdetail("The query is \"%s\".", query)));
	return query;
}

Datum
lt_insert_overwrite(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *predicate, *query, *relname;
	bool		validate;
	int			nest;
	int			rc;
	TupleDesc	td;
	Datum		values[5];
	bool		nulls[5] = {0};

	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("lt_insert_overwrite: target must not be NULL")));
	relid = PG_GETARG_OID(0);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_insert_overwrite: the predicate must not be NULL"),
				 errhint("To replace every row, give the predicate true.")));
	if (PG_ARGISNULL(2))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("lt_insert_overwrite: query must not be NULL")));
	predicate = text_to_cstring(PG_GETARG_TEXT_PP(1));
	query = text_to_cstring(PG_GETARG_TEXT_PP(2));
	validate = PG_ARGISNULL(3) ? true : PG_GETARG_BOOL(3);
	if (get_call_result_type(fcinfo, NULL, &td) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "lt_insert_overwrite: return type must be a row type");

	lt_check_lt_table(relid, "lt_insert_overwrite");
	relname = get_rel_name(relid);
	{
		/* an empty predicate is an error here (the GUC's empty value means "no replace") */
		const char *s = predicate;

		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			s++;
		if (*s == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lt_insert_overwrite: the predicate for foreign table \"%s\" is empty", relname),
					 errhint("To replace every row, give the predicate true.")));
	}
	query = lt_check_select_query(query, "lt_insert_overwrite");
	{
		/* the predicate and the privileges first: errors name the argument, not our INSERT */
		Relation	rel = relation_open(relid, AccessShareLock);
		AclResult	acl = pg_class_aclcheck(relid, GetUserId(), ACL_INSERT);
		LtOverwritePred *p;

		if (acl != ACLCHECK_OK)
			aclcheck_error(acl, OBJECT_FOREIGN_TABLE, relname);
		p = lt_overwrite_bind_from(rel, predicate, "argument \"predicate\" of lt_insert_overwrite",
								   "lt_insert_overwrite(predicate)");
		lt_overwrite_check_privileges(rel, p, GetUserId());
		relation_close(rel, AccessShareLock);
	}

	nest = NewGUCNestLevel();
	(void) set_config_option("lt_fdw.overwrite_where", predicate, PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true,
							 0, false);
	(void) set_config_option("lt_fdw.overwrite_validate", validate ? "on" : "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	memset(&lt_overwrite_last, 0, sizeof(lt_overwrite_last));
	if ((rc = SPI_connect()) != SPI_OK_CONNECT)
		elog(ERROR, "lt_insert_overwrite: SPI_connect failed: %s", SPI_result_code_string(rc));
	rc = SPI_execute(psprintf("INSERT INTO %s (%s\n)",
							  quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), relname),
							  query), false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "lt_insert_overwrite: the INSERT into \"%s\" failed: %s", relname, SPI_result_code_string(rc));
	SPI_finish();
	AtEOXact_GUC(true, nest);
	if (!lt_overwrite_last.valid || lt_overwrite_last.relid != relid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_insert_overwrite: the INSERT into \"%s\" did not run as a replace", relname),
				 errdetail("A rule or trigger redirected it.")));

	values[0] = Int64GetDatum(lt_overwrite_last.rows_deleted);
	values[1] = Int64GetDatum(lt_overwrite_last.rows_inserted);
	values[2] = Int64GetDatum(lt_overwrite_last.fragments_removed);
	values[3] = Int64GetDatum(lt_overwrite_last.fragments_updated);
	values[4] = Int64GetDatum(lt_overwrite_last.fragments_added);
	/* a role that may not read the table learns nothing of the rows it had */
	nulls[0] = nulls[2] = nulls[3] = lt_overwrite_last.hidden;
	td = BlessTupleDesc(td);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(td, values, nulls)));
}
