/*
 * scan.c — planning and executing a scan of a Lance dataset.
 *
 * Planning: the row estimate is the live rows of the manifest (physical rows minus deletions) until
 * ANALYZE has stored reltuples; costs grow with the rows and the projected width. Every qual stays
 * local for now. The plan carries the attributes the query references (fdw_private, named slots),
 * and only their fields are read.
 *
 * Execution: the version is resolved when the scan begins (dataset.c's snapshot rules) and the
 * foreign table's columns are checked against that version's schema. Fragments are read one at a
 * time with the library's fragment scanner, in batches; each row's Datums live in a per-row
 * context that is reset for the next row, so memory stays flat on any table size. The scanner's
 * own allocations (and its file descriptors) live in lib_cxt and are released by a memory-context
 * callback when a scan ends in an ERROR.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
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

#include "lt_fdw.h"
#include "lt_scan.h"
#include "lt_alloc.h"
#include "lt_table.pb-c.h"

/* fdw_private of the ForeignScan: a list with these slots. */
enum LtScanPrivateIndex
{
	/* Integer list of the attribute numbers the query references (0 = none is read) */
	LtScanPrivateRetrievedAttrs,
	/* Integer: live rows estimated at plan time (for EXPLAIN only) */
	LtScanPrivateEstimatedRows
};

/* What planning learned about a relation (baserel->fdw_private). */
typedef struct LtPlanState
{
	LtTableOptions opts;
	uint64		live_rows;
	uint64		n_fragments;
	double		tuples;
} LtPlanState;

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

	lt_get_table_options(foreigntableid, &ps->opts);
	lt_check_read_privilege(scan_userid(root, baserel), get_rel_name(foreigntableid), ps->opts.uri);
	e = lt_dataset_acquire(foreigntableid, &ps->opts, false);
	ps->live_rows = e->live_rows;
	ps->n_fragments = e->ds->n_fragments;

	/* after ANALYZE, Postgres's own count; before, the manifest's */
	if (baserel->tuples < 0)
		baserel->tuples = (double) ps->live_rows;
	ps->tuples = baserel->tuples;
	baserel->rows = clamp_row_est(baserel->tuples *
								  clauselist_selectivity(root, baserel->baserestrictinfo, 0,
														 JOIN_INNER, NULL));
	baserel->fdw_private = ps;
}

void
ltGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	LtPlanState *ps = baserel->fdw_private;
	Cost		startup_cost;
	Cost		run_cost;
	double		tuples = Max(ps->tuples, 0);
	double		width = Max(baserel->reltarget->width, 1);
	double		pages;
	QualCost	qcost;

	/* opening the manifest, then one file open per fragment */
	startup_cost = 10.0 + 2.0 * ps->n_fragments * seq_page_cost;
	/* the bytes of the projected columns, decoded per value */
	pages = ceil(tuples * width / BLCKSZ);
	cost_qual_eval(&qcost, baserel->baserestrictinfo, root);
	run_cost = seq_page_cost * pages +
		(cpu_tuple_cost + cpu_operator_cost * list_length(baserel->reltarget->exprs) + qcost.per_tuple) * tuples;
	startup_cost += qcost.startup;

	add_path(baserel, (Path *)
			 create_foreignscan_path(root, baserel, NULL, baserel->rows, startup_cost,
									 startup_cost + run_cost, NIL, NULL, NULL, NIL));
}

ForeignScan *
ltGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid, ForeignPath *best_path,
				 List *tlist, List *scan_clauses, Plan *outer_plan)
{
	LtPlanState *ps = baserel->fdw_private;
	Bitmapset  *attrs = NULL;
	List	   *retrieved = NIL;
	ListCell   *lc;
	bool		whole_row = false;
	int			natts;
	Relation	rel;

	/* every qual is checked locally for now */
	scan_clauses = extract_actual_clauses(scan_clauses, false);

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &attrs);
	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		pull_varattnos((Node *) ri->clause, baserel->relid, &attrs);
	}
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
	}
	table_close(rel, NoLock);

	return make_foreignscan(tlist, scan_clauses, baserel->relid, NIL,
							list_make2(retrieved, makeInteger((int) Min(ps->live_rows, INT_MAX))),
							NIL, NIL, outer_plan);
}

/* ---- execution ------------------------------------------------------------------------------ */

/* Released with the executor's memory: unpin the dataset. */
static void
scan_state_release(void *arg)
{
	LtScanState *st = arg;

	if (st->entry)
	{
		lt_dataset_unpin(st->entry);
		st->entry = NULL;
	}
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
}

static void
close_scanner(LtScanState *st)
{
	scanner_release(st);
	MemoryContextReset(st->lib_cxt);
}

static void
conversion_error_callback(void *arg)
{
	LtScanState *st = arg;

	if (st->converting)
		errcontext("column \"%s\" of foreign table \"%s\", row address " UINT64_FORMAT,
				   st->converting->attname, RelationGetRelationName(st->rel), st->converting_addr);
}

/* Map the table's columns to dataset fields and check their types. */
static void
bind_columns(LtScanState *st, List *retrieved)
{
	TupleDesc	td = RelationGetDescr(st->rel);
	const lt_schema *schema = st->entry->ds->schema;
	Oid			relid = RelationGetRelid(st->rel);
	int			n = 0;

	st->columns = palloc0(sizeof(LtScanColumn) * Max(td->natts, 1));
	st->proj = palloc0(sizeof(lt_field *) * Max(td->natts, 1));

	/* every column is checked, whether or not this query reads it */
	for (int attnum = 1; attnum <= td->natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(td, attnum - 1);
		char	   *name;
		const lt_field *f;
		LtScanColumn col = {0};
		char	   *why;

		if (att->attisdropped)
			continue;
		name = lt_column_field_name(relid, attnum, NameStr(att->attname));
		col.attnum = attnum;
		col.attname = pstrdup(NameStr(att->attname));
		f = lt_schema_find_name(schema, name);
		if (f == NULL && (strcmp(name, "_rowid") == 0 || strcmp(name, "_rowaddr") == 0))
		{
			if (att->atttypid != INT8OID)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" reads %s, which is bigint, not %s",
								NameStr(att->attname), RelationGetRelationName(st->rel), name,
								format_type_with_typemod(att->atttypid, att->atttypmod))));
			col.kind = strcmp(name, "_rowid") == 0 ? LT_COL_ROWID : LT_COL_ROWADDR;
		}
		else if (f == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" reads field \"%s\", which dataset %s does not have at version " UINT64_FORMAT,
							NameStr(att->attname), RelationGetRelationName(st->rel), name, st->opts.uri,
							st->entry->version),
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
								NameStr(att->attname), RelationGetRelationName(st->rel),
								format_type_with_typemod(att->atttypid, att->atttypmod), name,
								f->logical_type, st->opts.uri),
						 errdetail("%s.", why)));
			col.proj = -1;
		}
		if (!list_member_int(retrieved, attnum))
			continue;
		if (col.kind == LT_COL_FIELD)
		{
			const lt_field *fld = col.conv->field;

			for (int k = 0; k < st->n_proj; k++)
				if (st->proj[k] == fld)
					col.proj = k;
			if (col.proj < 0)
			{
				col.proj = st->n_proj;
				st->proj[st->n_proj++] = fld;
			}
		}
		else if (col.kind == LT_COL_ROWID)
			st->want_row_ids = true;
		st->columns[n++] = col;
	}
	st->n_columns = n;
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

	st->entry = lt_dataset_acquire(RelationGetRelid(st->rel), &st->opts, true);
	cb = palloc0(sizeof(MemoryContextCallback));
	cb->func = scan_state_release;
	cb->arg = st;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);

	bind_columns(st, (List *) list_nth(fsplan->fdw_private, LtScanPrivateRetrievedAttrs));

	st->lib_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw scanner", ALLOCSET_DEFAULT_SIZES);
	st->row_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw row", ALLOCSET_DEFAULT_SIZES);
}

/* Open the scanner of the next fragment; false at the end. */
static bool
next_fragment(LtScanState *st)
{
	lt_dataset *ds = st->entry->ds;
	const struct Lt__Pb__DataFragment *frag;
	lt_scan_options so = {0};
	MemoryContextCallback *cb;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;
	uint64		bytes = ds->store->bytes_read,
				reqs = ds->store->read_requests;

	close_scanner(st);
	if (st->next_fragment >= ds->n_fragments)
		return false;
	frag = ds->fragments[st->next_fragment++];

	so.n_fields = st->n_proj;
	so.fields = st->proj;
	so.want_row_ids = st->want_row_ids;

	/* the callback lives in lib_cxt itself: registered again after every reset */
	cb = MemoryContextAlloc(st->lib_cxt, sizeof(MemoryContextCallback));
	cb->func = scanner_release;
	cb->arg = st;
	MemoryContextRegisterResetCallback(st->lib_cxt, cb);

	old = lt_alloc_target(st->lib_cxt);
	rc = lt_fragment_scanner_open(ds, frag, &so, &st->scanner, &err);
	lt_alloc_target(old);
	st->bytes_read += ds->store->bytes_read - bytes;
	st->read_requests += ds->store->read_requests - reqs;
	if (rc != LT_OK)
	{
		st->scanner = NULL;
		lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, st->opts.uri, st->entry->version));
	}
	st->fragments_scanned++;
	st->rows_deleted += frag->physical_rows - lt_fragment_live_rows(frag);
	return true;
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
		old = lt_alloc_target(st->lib_cxt);
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

TupleTableSlot *
ltIterateForeignScan(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ErrorContextCallback errcb;
	MemoryContext old;
	int64		r;

	ExecClearTuple(slot);
	MemoryContextReset(st->row_cxt);
	if (st->batch == NULL || st->batch_row >= st->batch->length)
	{
		if (!next_batch(st))
			return slot;
	}
	r = st->batch_row++;

	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	errcb.callback = conversion_error_callback;
	errcb.arg = st;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	old = MemoryContextSwitchTo(st->row_cxt);
	st->converting_addr = st->batch->row_addrs[r];
	for (int c = 0; c < st->n_columns; c++)
	{
		const LtScanColumn *col = &st->columns[c];
		int			k = col->attnum - 1;

		st->converting = col;
		switch (col->kind)
		{
			case LT_COL_ROWID:
				slot->tts_values[k] = Int64GetDatum((int64) st->batch->row_ids[r]);
				slot->tts_isnull[k] = false;
				break;
			case LT_COL_ROWADDR:
				slot->tts_values[k] = Int64GetDatum((int64) st->batch->row_addrs[r]);
				slot->tts_isnull[k] = false;
				break;
			case LT_COL_FIELD:
				slot->tts_values[k] = lt_conv_datum(col->conv, st->batch->columns[col->proj], r,
													&slot->tts_isnull[k]);
				break;
		}
	}
	st->converting = NULL;
	MemoryContextSwitchTo(old);
	error_context_stack = errcb.previous;
	return ExecStoreVirtualTuple(slot);
}

void
ltReScanForeignScan(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;

	close_scanner(st);
	st->next_fragment = 0;
}

void
ltEndForeignScan(ForeignScanState *node)
{
	LtScanState *st = node->fdw_state;

	if (st == NULL)
		return;
	if (st->lib_cxt)
		close_scanner(st);
	scan_state_release(st);
}
