/*
 * assign.c — field assignment in SQL (issue 17; docs/field-assignment.md): lt_track_assignment, the
 * scan side of the boolean columns that read is_assigned(field), and the fields a write supplies.
 *
 * The spelling: a boolean column with the column option is_assigned 'field' reads is_assigned(field)
 * for each row.  It is an ordinary column to PostgreSQL, so it works in every expression (projection,
 * WHERE, aggregates, ORDER BY, nested) and its result never depends on a pushdown; reading it never
 * reads the field's values, and a query that does not name it reads no assignment state.
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "nodes/pg_list.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/varlena.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "assign.h"
#include "store.h"
#include "assignment/lt_assignment.h"
#include "table/lt_scan.h"
#include "txn/lt_txn.h"
#include "proto/lt_table.pb-c.h"

#include <roaring/roaring.h>

PG_FUNCTION_INFO_V1(lt_track_assignment);

/* ---- lt_track_assignment(target, column_name, initial) ------------------------------------------------ */

Datum
lt_track_assignment(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *col,
			   *initial,
			   *relname;
	LtTableOptions opts;
	LtDatasetEntry *e;
	LtXactTable *xt;
	AttrNumber	att;
	const lt_field *f;
	ListCell   *lc;
	LtPendingTrack *p;
	MemoryContext old;
	bool		assigned;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_track_assignment needs a table, a column and an initial state")));
	relid = PG_GETARG_OID(0);
	col = text_to_cstring(PG_GETARG_TEXT_PP(1));
	initial = text_to_cstring(PG_GETARG_TEXT_PP(2));
	lt_check_lt_table(relid, "lt_track_assignment");
	relname = get_rel_name(relid);
	if (strcmp(initial, "assigned") == 0)
		assigned = true;
	else if (strcmp(initial, "unassigned") == 0)
		assigned = false;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: the initial state of a tracked field is 'assigned' or 'unassigned', not '%s'", initial),
				 errdetail("Lance's field assignment is never inferred from NULLs: say which.")));
	lt_check_table_owner(relid);
	lt_get_table_options(relid, &opts);
	if (opts.version || opts.tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: foreign table \"%s\" is read-only", relname),
				 errdetail("It is pinned to a version or tag of dataset %s.", opts.uri)));
	lt_check_read_privilege(GetUserId(), relname, opts.uri);
	lt_check_write_privilege(GetUserId(), relname, opts.uri);
	att = get_attnum(relid, col);
	if (att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("lt_fdw: foreign table \"%s\" has no column \"%s\"", relname, col)));

	xt = lt_xact_meta_table(relname, &opts, false);
	e = lt_dataset_acquire(relid, &opts, true);
	PG_TRY();
	{
		f = lt_schema_find_name(e->ds->schema, lt_column_field_name(relid, att, col));
		if (!f || f->parent_id != -1)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_fdw: version " UINT64_FORMAT " of dataset %s has no top-level field for column \"%s\"",
							e->version, opts.uri, col)));
		if (lt_assign_is_tracked(e->ds, f->id, NULL))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("lt_fdw: field \"%s\" of foreign table \"%s\" already tracks its assignment", f->name,
							relname),
					 errdetail("Dataset %s, version " UINT64_FORMAT ".", opts.uri, e->version)));
		foreach(lc, xt->pending_tracks)
			if (((LtPendingTrack *) lfirst(lc))->field_id == f->id)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_OBJECT),
						 errmsg("lt_fdw: this transaction already starts tracking field \"%s\" of dataset %s", f->name,
								opts.uri)));
		old = MemoryContextSwitchTo(xt->meta_cxt);
		p = palloc0(sizeof(LtPendingTrack));
		p->subid = GetCurrentSubTransactionId();
		p->version = e->version;
		p->field_id = f->id;
		p->assigned = assigned;
		xt->pending_tracks = lappend(xt->pending_tracks, p);
		MemoryContextSwitchTo(old);
	}
	PG_FINALLY();
	{
		lt_dataset_unpin(e);
	}
	PG_END_TRY();
	PG_RETURN_VOID();
}

typedef struct TrackCommit
{
	const LtPendingTrack *p;
	lt_commit_result res;
} TrackCommit;

static lt_code
track_commit(lt_dataset *ds, void *arg, lt_error *err)
{
	TrackCommit *tc = arg;

	return lt_commit_track_assignment(ds, tc->p->field_id, tc->p->assigned, NULL, &tc->res, err);
}

void
lt_assign_commit_tracks(LtXactTable *xt)
{
	ListCell   *lc;

	foreach(lc, xt->pending_tracks)
	{
		LtPendingTrack *p = lfirst(lc);
		TrackCommit tc = {p};
		lt_error	err;
		lt_code		rc;
		MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw assignment commit",
												  ALLOCSET_DEFAULT_SIZES);
		MemoryContext old = lt_alloc_target(cxt);

		rc = lt_xact_commit_on_version(xt, p->version, track_commit, &tc, &err);
		lt_alloc_target(old);
		MemoryContextDelete(cxt);
		if (rc == LT_EINVALID)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("lt_fdw: %s", err.msg),
					 errdetail("Foreign table \"%s\".", xt->relname)));
		if (rc == LT_ECONFLICT)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("lt_fdw: could not start tracking field assignment of foreign table \"%s\": a concurrent transaction conflicts",
							xt->relname),
					 errdetail("%s (dataset %s).", err.msg, xt->uri),
					 errhint("Retry the transaction.")));
		if (rc != LT_OK)
			lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", xt->uri, xt->relname));
	}
	xt->pending_tracks = NIL;
}

/* ---- the scan's is_assigned columns ---------------------------------------------------------------------- */

struct LtAssignReader
{
	lt_assign_field *state;		/* at the version read (library memory in cxt) */
	struct lt_txn *txn;			/* own writes: the transaction whose view is read, or NULL */
	MemoryContext txn_cxt;		/* its memory (the states it derives live as long as it) */
	lt_dataset *ds;
	int32		field_id;
	MemoryContext cxt;
	const char *what;
	/* the fragment of the last row */
	bool		have;
	uint64		fragment;
	lt_assign_kind kind;
	const struct roaring_bitmap_s *rows;
};

const lt_field *
lt_assign_check_column(Relation rel, const LtTableOptions *opts, const LtDatasetEntry *entry, AttrNumber attnum,
					   const char *field)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	const lt_field *f;

	if (att->atttypid != BOOLOID)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" reads is_assigned(%s), which is boolean, not %s",
						NameStr(att->attname), RelationGetRelationName(rel), field,
						format_type_with_typemod(att->atttypid, att->atttypmod))));
	f = lt_schema_find_name(entry->ds->schema, field);
	if (!f)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
				 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" reads is_assigned(%s), but dataset %s has no field \"%s\" at version " UINT64_FORMAT,
						NameStr(att->attname), RelationGetRelationName(rel), field, opts->uri, field, entry->version)));
	if (!lt_assign_is_tracked(entry->ds, f->id, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
				 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" reads is_assigned(%s), but field \"%s\" does not track its assignment at version " UINT64_FORMAT " of dataset %s",
						NameStr(att->attname), RelationGetRelationName(rel), field, field, entry->version, opts->uri),
				 errhint("Start tracking it with lt_track_assignment.")));
	return f;
}

void
lt_assign_check_columns(Relation rel, const LtTableOptions *opts, const LtDatasetEntry *entry)
{
	TupleDesc	td = RelationGetDescr(rel);

	for (int attnum = 1; attnum <= td->natts; attnum++)
	{
		char	   *field;

		if (TupleDescAttr(td, attnum - 1)->attisdropped)
			continue;
		if ((field = lt_column_assigned_field(RelationGetRelid(rel), attnum)) != NULL)
			(void) lt_assign_check_column(rel, opts, entry, attnum, field);
	}
}

static void
reader_release(void *arg)
{
	LtAssignReader *r = arg;
	MemoryContext old;

	if (r->state == NULL)
		return;
	old = lt_alloc_target(r->cxt);
	lt_assign_free(r->state);
	lt_alloc_target(old);
	r->state = NULL;
	r->rows = NULL;
	r->have = false;
}

LtAssignReader *
lt_assign_reader_open_field(LtDatasetEntry *entry, int32 field_id, const char *what)
{
	LtAssignReader *r;

	r = palloc0(sizeof(LtAssignReader));
	r->cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw assignment state", ALLOCSET_SMALL_SIZES);
	r->ds = entry->ds;
	r->txn = lt_xact_view_txn(entry, &r->txn_cxt);
	r->what = psprintf("%s, version " UINT64_FORMAT, what, entry->version);
	r->field_id = field_id;
	{
		/* the state's bitmaps are CRoaring's (malloc): freed with the reader's memory */
		MemoryContextCallback *cb = MemoryContextAlloc(r->cxt, sizeof(MemoryContextCallback));

		cb->func = reader_release;
		cb->arg = r;
		MemoryContextRegisterResetCallback(r->cxt, cb);
	}
	return r;
}

/* The root is read when the first row asks: a column bound but never read costs no I/O. */
static void
reader_load(LtAssignReader *r)
{
	lt_error	err;
	lt_code		rc;
	MemoryContext old = lt_alloc_target(r->cxt);

	rc = lt_assign_load(r->ds, r->field_id, &r->state, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, r->what);
	if (r->state == NULL)
		elog(ERROR, "lt_fdw: field %d does not track its assignment at %s", (int) r->field_id, r->what);
}

LtAssignReader *
lt_assign_reader_open(Relation rel, const LtTableOptions *opts, LtDatasetEntry *entry, AttrNumber attnum,
					  const char *field)
{
	const lt_field *f = lt_assign_check_column(rel, opts, entry, attnum, field);

	return lt_assign_reader_open_field(entry, f->id, psprintf("dataset %s", opts->uri));
}

void
lt_assign_reader_fragment(LtAssignReader *r, uint64 fragment_id, lt_assign_kind *kind,
						  const struct roaring_bitmap_s **rows)
{
	(void) lt_assign_reader_get(r, fragment_id << 32);
	*kind = r->kind;
	*rows = r->rows;
}

bool
lt_assign_reader_get(LtAssignReader *r, uint64 row_addr)
{
	uint64		fragment = row_addr >> 32;
	uint32		offset = (uint32) row_addr;

	if (!r->have || r->fragment != fragment)
	{
		if (r->state == NULL)
			reader_load(r);
		const struct Lt__Pb__DataFragment *frag = lt_dataset_fragment(r->ds, fragment);
		lt_error	err;
		lt_code		rc;
		MemoryContext old;

		if (!frag)
			elog(ERROR, "lt_fdw: row address " UINT64_FORMAT " names no fragment of %s", row_addr, r->what);
		old = lt_alloc_target(r->txn ? r->txn_cxt : r->cxt);
		rc = lt_txn_fragment_assignment(r->txn, r->state, fragment, frag->physical_rows, &r->kind,
										&r->rows, &err);
		lt_alloc_target(old);
		if (rc != LT_OK)
			lt_report(&err, r->what);
		r->have = true;
		r->fragment = fragment;
	}
	switch (r->kind)
	{
		case LT_ASSIGN_ALL:
			return true;
		case LT_ASSIGN_PARTIAL:
			return roaring_bitmap_contains(r->rows, offset);
		default:
			return false;
	}
}

double
lt_assign_fraction(Relation rel, const LtTableOptions *opts, LtDatasetEntry *entry, AttrNumber attnum,
				   const char *field)
{
	LtAssignReader *r = lt_assign_reader_open(rel, opts, entry, attnum, field);
	const lt_dataset *ds = entry->ds;
	double		live = 0,
				assigned = 0;
	int			bitmaps = 0;

	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const struct Lt__Pb__DataFragment *f = ds->fragments[i];
		double		physical = (double) f->physical_rows;
		double		frag_live = physical - (f->deletion_file ? (double) f->deletion_file->num_deleted_rows : 0);
		lt_assign_kind kind;
		const struct roaring_bitmap_s *rows;

		CHECK_FOR_INTERRUPTS();
		live += frag_live;
		if (bitmaps >= LT_ASSIGN_EST_BITMAPS)
		{
			/* the root alone: no more bitmap reads when planning */
			const lt_assign_entry *e;

			if (r->state == NULL)
				reader_load(r);
			e = lt_assign_entry_of(r->state, f->id);
			if (e && e->kind == LT_ASSIGN_ALL)
				assigned += frag_live;
			else if (e && e->kind == LT_ASSIGN_PARTIAL)
				assigned += frag_live / 2;
			continue;
		}
		lt_assign_reader_fragment(r, f->id, &kind, &rows);
		if (kind == LT_ASSIGN_ALL)
			assigned += frag_live;
		else if (kind == LT_ASSIGN_PARTIAL && physical > 0)
		{
			/* deleted rows keep their bits: count the assigned share of the fragment's live rows */
			assigned += frag_live * Min(1.0, (double) roaring_bitmap_get_cardinality(rows) / physical);
			bitmaps++;
		}
	}
	MemoryContextDelete(r->cxt);
	return live > 0 ? Min(1.0, assigned / live) : 0.5;
}

/* ---- writes ---------------------------------------------------------------------------------------------- */

int
lt_assign_supplied_fields(Relation rel, const lt_dataset *ds, const Bitmapset *cols, int32 **out)
{
	TupleDesc	td = RelationGetDescr(rel);
	Oid			relid = RelationGetRelid(rel);
	int			n = 0;

	*out = NULL;
	if (!lt_assign_any(ds))
		return 0;
	*out = palloc(sizeof(int32) * Max(td->natts, 1));
	for (int attnum = 1; attnum <= td->natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(td, attnum - 1);
		const lt_field *f;

		if (att->attisdropped || !bms_is_member(attnum - FirstLowInvalidHeapAttributeNumber, cols))
			continue;
		f = lt_schema_find_name(ds->schema, lt_column_field_name(relid, attnum, NameStr(att->attname)));
		if (f && lt_assign_is_tracked(ds, f->id, NULL))
			(*out)[n++] = f->id;
	}
	return n;
}

int
lt_assign_tracked_fields(const lt_dataset *ds, int32 **out)
{
	const struct Lt__Pb__Manifest *m = ds->manifest;
	int			n = 0;

	*out = palloc(sizeof(int32) * Max(m->n_config, 1));
	for (size_t i = 0; i < m->n_config; i++)
	{
		int32_t		id;

		if (lt_assign_config_key(m->config[i]->key, &id))
			(*out)[n++] = id;
	}
	return n;
}

/* ---- lt_fdw.invalidate_fields ---------------------------------------------------------------------------- */

static char *invalidate_fields = NULL;

void
lt_assign_init(void)
{
	DefineCustomStringVariable("lt_fdw.invalidate_fields",
							   "Tracked fields whose assignment an UPDATE clears for the rows it changes.",
							   "A comma-separated list of columns of the updated foreign table; SET LOCAL it for one statement.",
							   &invalidate_fields, "", PGC_USERSET, 0, NULL, NULL, NULL);
}

int
lt_assign_invalidated_fields(Relation rel, const lt_dataset *ds, CmdType op, int32 **out)
{
	List	   *names = NIL;
	ListCell   *lc;
	char	   *copy;
	int			n = 0;
	Oid			relid = RelationGetRelid(rel);

	*out = NULL;
	if (invalidate_fields == NULL || invalidate_fields[0] == '\0')
		return 0;
	if (op != CMD_UPDATE && op != CMD_INSERT)
		return 0;
	{
		/* as lt_fdw.overwrite_where: a value planted by another role or an earlier transaction clears nothing */
		char	   *why = lt_setting_not_own("lt_fdw.invalidate_fields");

		if (why)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("lt_fdw: lt_fdw.invalidate_fields is set, but not by this transaction: the write to foreign table \"%s\" invalidates nothing",
							RelationGetRelationName(rel)),
					 errdetail("%s", why),
					 errhint("SET LOCAL lt_fdw.invalidate_fields in the transaction of the write, or RESET it.")));
	}
	copy = pstrdup(invalidate_fields);
	if (!SplitIdentifierString(copy, ',', &names))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: lt_fdw.invalidate_fields is not a list of column names: \"%s\"", invalidate_fields)));
	*out = palloc(sizeof(int32) * Max(list_length(names), 1));
	foreach(lc, names)
	{
		char	   *col = lfirst(lc);
		AttrNumber	att = get_attnum(relid, col);
		const lt_field *f;

		if (att == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_fdw: lt_fdw.invalidate_fields names column \"%s\", which foreign table \"%s\" does not have",
							col, RelationGetRelationName(rel))));
		f = lt_column_assigned_field(relid, att) ? NULL
			: lt_schema_find_name(ds->schema, lt_column_field_name(relid, att, col));
		if (!f || !lt_assign_is_tracked(ds, f->id, NULL))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: lt_fdw.invalidate_fields names column \"%s\" of foreign table \"%s\", whose field does not track its assignment",
							col, RelationGetRelationName(rel)),
					 errhint("Start tracking it with lt_track_assignment.")));
		(*out)[n++] = f->id;
	}
	return n;
}

/* ---- is_assigned quals as a row mask (scan.c, knn.c, ann.c) ---- */

bool
lt_assign_mask_selection(const LtAssignMask *m, const struct Lt__Pb__DataFragment *frag, MemoryContext cxt,
						 lt_scan_options *so)
{
	roaring_bitmap_t *keep = NULL;	/* NULL: every row so far */
	uint64		rows = frag->physical_rows;
	bool		any = true;
	lt_assign_kind *kinds = palloc(sizeof(lt_assign_kind) * m->n);
	const roaring_bitmap_t **sets = palloc(sizeof(roaring_bitmap_t *) * m->n);

	/* the states first: reading them may fail, and nothing of ours is allocated by CRoaring yet */
	for (int i = 0; i < m->n; i++)
		lt_assign_reader_fragment(m->readers[i], frag->id, &kinds[i], &sets[i]);
	for (int i = 0; i < m->n && any; i++)
	{
		lt_assign_kind kind = kinds[i];
		const roaring_bitmap_t *assigned = sets[i];
		roaring_bitmap_t *part = NULL;

		if (kind == LT_ASSIGN_ALL)
			any = m->want[i];
		else if (kind == LT_ASSIGN_NONE)
			any = !m->want[i];
		else
		{
			part = m->want[i] ? roaring_bitmap_copy(assigned) : roaring_bitmap_flip(assigned, 0, rows);
			if (part == NULL)
			{
				if (keep)
					roaring_bitmap_free(keep);
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
			}
			if (keep)
			{
				roaring_bitmap_and_inplace(keep, part);
				roaring_bitmap_free(part);
			}
			else
				keep = part;
		}
	}
	if (any && keep)
	{
		/* the selection so far (index offsets, a parallel unit's range, or every row), narrowed to keep */
		roaring_bitmap_t *sel;

		if (so->offsets)
			sel = roaring_bitmap_of_ptr(so->n_offsets, so->offsets);
		else
			sel = roaring_bitmap_from_range(so->range_start, so->range_end ? so->range_end : rows, 1);
		if (sel == NULL)
		{
			roaring_bitmap_free(keep);
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
		roaring_bitmap_and_inplace(sel, keep);
		if (!roaring_bitmap_is_empty(sel))
		{
			uint64		n = roaring_bitmap_get_cardinality(sel);
			uint32	   *offs = MemoryContextAllocHuge(cxt, sizeof(uint32) * n);

			roaring_bitmap_to_uint32_array(sel, offs);
			so->offsets = offs;
			so->n_offsets = n;
		}
		any = !roaring_bitmap_is_empty(sel);
		roaring_bitmap_free(sel);
	}
	if (keep)
		roaring_bitmap_free(keep);
	pfree(kinds);
	pfree(sets);
	return any;
}

bool
lt_assign_mask_narrow(const LtAssignMask *m, const struct Lt__Pb__DataFragment *frag, MemoryContext cxt,
					  uint64 start, uint64 end, const uint32 **offsets, uint64 *n)
{
	lt_scan_options so = {0};

	if (m->n == 0)
		return true;
	so.range_start = start;
	so.range_end = end;
	so.offsets = *offsets;
	so.n_offsets = *offsets ? *n : 0;
	if (!lt_assign_mask_selection(m, frag, cxt, &so))
		return false;
	*offsets = so.offsets;
	*n = so.n_offsets;
	return true;
}
