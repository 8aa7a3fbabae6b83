/*
 * modify.c — INSERT, UPDATE, DELETE and COPY FROM into a Lance dataset.
 *
 * Rows are converted column by column straight into the buffers of a data file writer
 * (convert_write.c, lt_writer.h: one lt_array per top-level field of the dataset), which encodes
 * pages as they fill, a batch at a time, so memory stays bounded; a file (one fragment) is
 * finished every max_rows_per_file rows and handed to the transaction (xact.c), which commits
 * everything at COMMIT as one Lance version.
 *
 * Row identity: AddForeignUpdateTargets asks the scan for ctid, which the scan of a table being
 * updated fills with the row's offset and its fragment's index in the version it reads (scan.c);
 * the modify state holds that same version and maps it back to a row address. DELETE hands the
 * addresses to the transaction; UPDATE deletes the old rows and writes the new versions into new
 * fragments, as Lance's Update does (rows move); on a dataset with stable row ids the moved rows
 * keep their ids, read from that version by address when their file is finished.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/appendinfo.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "assign.h"
#include "convert_write.h"
#include "dataset.h"
#include "explain.h"
#include "keys.h"
#include "modify.h"
#include "option.h"
#include "overwrite.h"
#include "xact.h"
#include "util/lt_alloc.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "file/lt_writer.h"
#include "util/lt_sort.h"

#include <roaring/roaring.h>

/* Rows converted before the file writer takes them (and encodes the pages that filled) ... */
#define LT_WRITE_BATCH_ROWS		8192
/* ... or fewer, when a column's values reach this many bytes. */
#define LT_WRITE_BATCH_BYTES	((int64) 8 * 1024 * 1024)

#define JUNK_ROW		"ctid"

typedef struct LtModifyState
{
	Relation	rel;
	LtTableOptions opts;
	CmdType		op;
	LtXactTable *xt;
	lt_file_version fver;

	/* per top-level field of the dataset: the attribute written into it (0: none) */
	int			n_fields;
	const lt_field *const *fields;
	AttrNumber *att_of_field;
	LtWriteConv **conv;
	lt_array  *const *builders;	/* the open writer's buffers: rows are converted into them */
	int64		buffered;		/* rows in them the writer has not been told of */
	int64	   *batch_from;		/* per field: its data_len when the writer last took rows */
	int64		max_rows_per_file;
	lt_file_writer *writer;
	MemoryContext writer_cxt;	/* the writer's library allocations (its buffers too) */
	MemoryContext row_cxt;		/* per-row scratch */
	AttrNumber	converting;		/* the column being converted (error context), 0: none */

	/* UPDATE of a stable-row-id dataset: the old addresses of the rows in the open file */
	bool		keep_row_ids;
	uint64	   *moved;
	int64		n_moved,
				cap_moved;

	/* UPDATE, DELETE: the version the scan reads (its fragment list decodes the row identity) */
	LtDatasetEntry *entry;
	AttrNumber	row_attno;
	AttrNumber	wholerow_attno;

	uint64		rows_written;
	uint64		rows_deleted;
	uint64		rows_updated_in_place;	/* state-only UPDATE rows */
	uint64		files_written;

	/* a keyed table: its primary key, checked for every row written (keys.c) */
	LtKeyCheck *keys;
	bool		on_conflict_nothing;	/* INSERT ... ON CONFLICT DO NOTHING */
	bool		keys_shared;	/* keys belong to another writer (lt_row_writer_begin) */
	uint64		rows_skipped;
	TupleTableSlot **batch_out;		/* the inserted rows of a batch with skipped ones */
	int			batch_cap;

	/* a replacing INSERT (lt_fdw.overwrite_where): its predicate and delete set (overwrite.c) */
	LtOverwritePred *ow;
	LtOverwritePlan ow_plan;
	bool		ow_validate;
	bool		ow_hidden;		/* the role may not read the table: its counts are not shown */
	uint64		rows_seen;

	/* the columns scans fill (_rowid, _rowaddr, is_assigned columns): read-only */
	int			n_readonly;
	AttrNumber *readonly;

	/* field assignment (assign.c): per tracked field of the read version, what a written row says */
	int			n_track;
	int32	   *track_ids;
	uint8	   *track_mode;		/* TRACK_* */
	LtAssignReader **track_old;	/* TRACK_CARRY: the old row's state */
	uint64	  **track_bits;		/* TRACK_CARRY: the rows of the open file that are assigned */
	int64		track_cap;		/* words of each */
	int64		file_rows;		/* rows appended to the open file */
	/* the table's is_assigned columns and their field's index in track_ids (for RETURNING) */
	int			n_acols;
	AttrNumber *acol_att;
	int		   *acol_track;
	/* UPDATE ... SET <is_assigned column> = false: per such column its field (0: not in the SET list) */
	int32	   *acol_cleared;
	bool		state_only;		/* only is_assigned columns are SET: the rows stay, their state is cleared */
} LtModifyState;

#define TRACK_UNASSIGNED	0	/* not supplied by an INSERT, or invalidated */
#define TRACK_ASSIGN		1	/* supplied: every row written assigns it */
#define TRACK_CARRY			2	/* an UPDATE not writing it: the old row's state moves with the row */

static uint64 *moved_row_ids(LtModifyState *ms);

/* ---- planning ---------------------------------------------------------------------------------- */

/* lt_fdw.overwrite_where makes an INSERT a replace; any other command would ignore it: refuse. */
static void
check_overwrite_command(Relation rel, CmdType op)
{
	if (op != CMD_INSERT && lt_overwrite_active())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: lt_fdw.overwrite_where is set, but %s of foreign table \"%s\" cannot replace rows",
						op == CMD_UPDATE ? "UPDATE" : "DELETE", RelationGetRelationName(rel)),
				 errdetail("Only an INSERT replaces the rows matching the predicate \"%s\".", lt_overwrite_where),
				 errhint("RESET lt_fdw.overwrite_where first.")));
}

/* A table pinned to a version or tag is read-only; lt_fdw does not write to branches. */
void
lt_check_writable(Relation rel, const LtTableOptions *opts)
{
	lt_check_not_branch(RelationGetRelationName(rel), opts, "write");
	if (opts->version || opts->tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: foreign table \"%s\" is read-only", RelationGetRelationName(rel)),
				 opts->version ?
				 errdetail("It is pinned to version " UINT64_FORMAT " of dataset %s by its option \"version\".",
						   opts->version, opts->uri) :
				 errdetail("It is pinned to tag \"%s\" of dataset %s by its option \"tag\".", opts->tag, opts->uri),
				 errhint("Write through a foreign table of the dataset without \"version\" or \"tag\".")));
}

/*
 * The transaction's state for a write of rel's dataset (doing: "write", "truncate"), once the version the
 * statement reads has a storage format lt_fdw writes: 2.x (a dataset of the legacy format is read-only).
 */
LtXactTable *
lt_write_xact_table(Relation rel, const LtTableOptions *opts, const char *doing)
{
	const lt_dataset *ds = NULL;
	MemoryContext cxt = CurrentMemoryContext;

	PG_TRY();
	{
		ds = lt_dataset_acquire(RelationGetRelid(rel), opts, false)->ds;
	}
	PG_CATCH();
	{
		ErrorData  *ed;

		MemoryContextSwitchTo(cxt);
		ed = CopyErrorData();
		if (ed->sqlerrcode != ERRCODE_UNDEFINED_FILE || opts->version || opts->tag)
			PG_RE_THROW();
		FlushErrorState();
		/* a path where no dataset is yet: say that creating one is not lt_fdw's job (yet) */
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("lt_fdw: cannot %s foreign table \"%s\": there is no Lance dataset at %s",
						doing, RelationGetRelationName(rel), opts->uri),
				 errdetail("%s", ed->message),
				 errhint("Creating a dataset from SQL is not supported yet: create it with a Lance engine (for example LanceDB's createTable or pylance's write_dataset), then write to it through this table.")));
	}
	PG_END_TRY();

	if (ds->storage_version == NULL || strcmp(ds->storage_version, "0.1") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot %s foreign table \"%s\": its dataset uses the legacy storage format 0.1",
						doing, RelationGetRelationName(rel)),
				 errdetail("Dataset %s is read-only: lt_fdw writes storage versions 2.0, 2.1 and 2.2.", opts->uri),
				 errhint("Migrate the dataset to a 2.x storage version with the Lance library.")));
	return lt_xact_table(rel, opts);
}

void
ltAddForeignUpdateTargets(PlannerInfo *root, Index rtindex, RangeTblEntry *target_rte, Relation target_relation)
{
	CmdType		op = root->parse->commandType;
	LtTableOptions opts;

	lt_get_table_options(RelationGetRelid(target_relation), &opts);
	lt_check_writable(target_relation, &opts);

	add_row_identity_var(root, makeVar(rtindex, SelfItemPointerAttributeNumber, TIDOID, -1, InvalidOid, 0),
						 rtindex, JUNK_ROW);
	/* DELETE ... RETURNING: the old row comes from a whole-row junk column */
	if (op == CMD_DELETE && root->parse->returningList != NIL)
		add_row_identity_var(root, makeWholeRowVar(target_rte, rtindex, 0, false), rtindex, "wholerow");
}

List *
ltPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation, int subplan_index)
{
	RangeTblEntry *rte = planner_rt_fetch(resultRelation, root);
	LtTableOptions opts;
	Relation	rel;

	lt_get_table_options(rte->relid, &opts);
	rel = table_open(rte->relid, NoLock);
	lt_check_writable(rel, &opts);
	check_overwrite_command(rel, root->parse->commandType);
	table_close(rel, NoLock);
	/* DELETE: its predicate, when the scan evaluates all of it (the DELETE+INSERT spelling of a replace) */
	if (root->parse->commandType == CMD_DELETE)
		return lt_overwrite_delete_predicate(root, resultRelation, rte->relid);
	/* DO NOTHING skips rows whose primary key exists (keys.c); DO UPDATE has no arbiter on a foreign table */
	if (plan->onConflictAction != ONCONFLICT_NONE && plan->onConflictAction != ONCONFLICT_NOTHING)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: INSERT with ON CONFLICT DO UPDATE is not supported for foreign table \"%s\"",
						get_rel_name(rte->relid)),
				 errhint("Use ON CONFLICT DO NOTHING, or lt_merge_insert().")));
	return NIL;
}

/* Writable unless pinned (information_schema; planning raises the clearer error first). */
int
ltIsForeignRelUpdatable(Relation rel)
{
	ListCell   *lc;

	/* only the table's own options, and no error: information_schema asks about every table */
	foreach(lc, GetForeignTable(RelationGetRelid(rel))->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "version") == 0 || strcmp(def->defname, "tag") == 0)
			return 0;
	}
	return (1 << CMD_INSERT) | (1 << CMD_UPDATE) | (1 << CMD_DELETE);
}

/* ---- execution: setup and teardown -------------------------------------------------------------- */

static void
writer_release(void *arg)
{
	LtModifyState *ms = arg;


	if (ms->writer)
	{
		MemoryContext old = lt_alloc_target(ms->writer_cxt);

		lt_file_writer_free(ms->writer);	/* removes the unfinished file */
		lt_alloc_target(old);
		ms->writer = NULL;
		ms->builders = NULL;
	}
}

static void
entry_release(void *arg)
{
	LtModifyState *ms = arg;

	if (ms->entry)
	{
		lt_dataset_unpin(ms->entry);
		ms->entry = NULL;
	}
}

static const char *
what(LtModifyState *ms)
{
	return psprintf("dataset %s (foreign table \"%s\")", ms->opts.uri, RelationGetRelationName(ms->rel));
}

/* Bind the table's columns to the fields of the dataset and make a converter per field. */
static void
setup_builders(LtModifyState *ms)
{
	const lt_dataset *ds = ms->xt->base->ds;
	const lt_schema *schema = ds->schema;
	TupleDesc	td = RelationGetDescr(ms->rel);
	Oid			relid = RelationGetRelid(ms->rel);

	ms->n_fields = schema->n_fields;
	ms->fields = (const lt_field *const *) schema->fields;
	ms->att_of_field = palloc0(sizeof(AttrNumber) * Max(schema->n_fields, 1));
	ms->conv = palloc0(sizeof(LtWriteConv *) * Max(schema->n_fields, 1));
	ms->batch_from = palloc0(sizeof(int64) * Max(schema->n_fields, 1));

	for (int attnum = 1; attnum <= td->natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(td, attnum - 1);
		char	   *name;
		const lt_field *f = NULL;
		int			k;
		char	   *why;

		if (att->attisdropped)
			continue;
		if (lt_column_assigned_field(relid, attnum) != NULL)
		{
			/* is_assigned(field): the writes decide it, never a value */
			if (ms->readonly == NULL)
				ms->readonly = palloc(sizeof(AttrNumber) * td->natts);
			ms->readonly[ms->n_readonly++] = attnum;
			if (ms->acol_att == NULL)
				ms->acol_att = palloc(sizeof(AttrNumber) * td->natts);
			ms->acol_att[ms->n_acols++] = attnum;
			continue;
		}
		name = lt_column_field_name(relid, attnum, NameStr(att->attname));
		for (k = 0; k < schema->n_fields; k++)
			if (strcmp(schema->fields[k]->name, name) == 0)
			{
				f = schema->fields[k];
				break;
			}
		if (f == NULL && lt_is_row_identity_name(name))
		{
			/* filled by scans: a write must not give them a value (check_readonly) */
			if (ms->readonly == NULL)
				ms->readonly = palloc(sizeof(AttrNumber) * td->natts);
			ms->readonly[ms->n_readonly++] = attnum;
			continue;
		}
		if (f == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" writes field \"%s\", which dataset %s does not have at version " UINT64_FORMAT,
							NameStr(att->attname), RelationGetRelationName(ms->rel), name, ms->opts.uri,
							ms->xt->base->version)));
		if (ms->att_of_field[k] != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("lt_fdw: columns \"%s\" and \"%s\" of foreign table \"%s\" both write field \"%s\"",
							NameStr(TupleDescAttr(td, ms->att_of_field[k] - 1)->attname), NameStr(att->attname),
							RelationGetRelationName(ms->rel), name)));
		ms->conv[k] = lt_wconv_build(f, pstrdup(NameStr(att->attname)), att->atttypid, att->atttypmod, &why);
		if (ms->conv[k] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" has type %s, which cannot be written into field \"%s\" (%s) of dataset %s",
							NameStr(att->attname), RelationGetRelationName(ms->rel),
							format_type_with_typemod(att->atttypid, att->atttypmod), name, f->logical_type,
							ms->opts.uri),
					 errdetail("%s.", why)));
		ms->att_of_field[k] = attnum;
	}
	for (int k = 0; k < schema->n_fields; k++)
		if (ms->att_of_field[k] == 0 && !schema->fields[k]->nullable)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("lt_fdw: field \"%s\" of dataset %s is not nullable, and foreign table \"%s\" has no column for it",
							schema->fields[k]->name, ms->opts.uri, RelationGetRelationName(ms->rel)),
					 errhint("Add a column for it to the foreign table.")));
}

/* Does a column of the table write field_id? */
static bool
has_column(LtModifyState *ms, int32 field_id)
{
	for (int k = 0; k < ms->n_fields; k++)
		if (ms->fields[k]->id == field_id)
			return ms->att_of_field[k] != 0;
	return false;
}

/*
 * What the rows this write produces say about each tracked field: supplied (the INSERT's or COPY's
 * column list, the UPDATE's SET list) assigns, lt_fdw.invalidate_fields clears, and an UPDATE carries
 * the old row's state for the others.  supplied NULL: a writer without a column list (refused).
 */
static void
setup_assignment(LtModifyState *ms, const Bitmapset *supplied)
{
	const lt_dataset *ds = ms->xt->base->ds;
	int32	   *given = NULL,
			   *invalid = NULL;
	int			n_given,
				n_invalid;

	n_invalid = lt_assign_invalidated_fields(ms->rel, ds, ms->op, &invalid);
	if (!lt_assign_any(ds))
		return;
	if (supplied == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: this write cannot say which fields of foreign table \"%s\" it assigns", RelationGetRelationName(ms->rel)),
				 errdetail("Dataset %s tracks field assignment.", ms->opts.uri),
				 errhint("Use INSERT, COPY or UPDATE with a column list.")));
	n_given = lt_assign_supplied_fields(ms->rel, ds, supplied, &given);
	if (ms->op == CMD_UPDATE && ms->n_acols > 0)
	{
		/* SET x_is_assigned = false clears x: with data columns in the SET list as an invalidation */
		bool		data_set = false;
		int32	   *more = palloc(sizeof(int32) * (n_invalid + ms->n_acols));

		memcpy(more, invalid, sizeof(int32) * n_invalid);
		invalid = more;
		ms->acol_cleared = palloc0(sizeof(int32) * ms->n_acols);
		for (int c = 0; c < ms->n_acols; c++)
			if (bms_is_member(ms->acol_att[c] - FirstLowInvalidHeapAttributeNumber, supplied))
			{
				const lt_field *f = lt_schema_find_name(ds->schema,
														lt_column_assigned_field(RelationGetRelid(ms->rel),
																				 ms->acol_att[c]));

				ms->acol_cleared[c] = f->id;
				invalid[n_invalid++] = f->id;
			}
		for (int a = bms_next_member(supplied, -1); a >= 0; a = bms_next_member(supplied, a))
		{
			bool		is_acol = false;

			for (int c = 0; c < ms->n_acols; c++)
				is_acol |= a == ms->acol_att[c] - FirstLowInvalidHeapAttributeNumber;
			data_set |= !is_acol;
		}
		for (int c = 0; c < ms->n_acols; c++)
			ms->state_only |= !data_set && ms->acol_cleared[c] != 0;
	}
	ms->n_track = lt_assign_tracked_fields(ds, &ms->track_ids);
	ms->track_mode = palloc0(Max(ms->n_track, 1));
	ms->track_old = palloc0(sizeof(LtAssignReader *) * Max(ms->n_track, 1));
	ms->track_bits = palloc0(sizeof(uint64 *) * Max(ms->n_track, 1));
	for (int k = 0; k < ms->n_track; k++)
	{
		bool		is_given = false,
					is_invalid = false;

		for (int i = 0; i < n_given; i++)
			is_given |= given[i] == ms->track_ids[k];
		for (int i = 0; i < n_invalid; i++)
			is_invalid |= invalid[i] == ms->track_ids[k];
		if (is_given && is_invalid)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lt_fdw: field \"%s\" of foreign table \"%s\" is both written and invalidated",
							lt_schema_find_id(ds->schema, ms->track_ids[k])->name, RelationGetRelationName(ms->rel)),
					 errdetail("The %s writes it, which assigns it, and invalidates it (lt_fdw.invalidate_fields, or SET of its is_assigned column to false).",
							   ms->op == CMD_UPDATE ? "UPDATE" : "INSERT")));
		if (is_given)
			ms->track_mode[k] = TRACK_ASSIGN;
		else if (is_invalid || ms->op != CMD_UPDATE || !has_column(ms, ms->track_ids[k]))
			ms->track_mode[k] = TRACK_UNASSIGNED;	/* a field without a column is rewritten as NULL */
		else
			ms->track_mode[k] = TRACK_CARRY;
	}
	ms->acol_track = palloc(sizeof(int) * Max(ms->n_acols, 1));
	for (int c = 0; c < ms->n_acols; c++)
	{
		const lt_field *f = lt_schema_find_name(ds->schema,
												lt_column_assigned_field(RelationGetRelid(ms->rel), ms->acol_att[c]));

		ms->acol_track[c] = -1;
		for (int k = 0; f && k < ms->n_track; k++)
			if (ms->track_ids[k] == f->id)
				ms->acol_track[c] = k;
	}
}

/*
 * RETURNING an is_assigned column: the state the row just written has (supplied: true; invalidated or
 * left out: false; an UPDATE's other fields: the old row's).  The slot gets a copy of the row with them.
 */
static TupleTableSlot *
returning_assigned(LtModifyState *ms, TupleTableSlot *slot, uint64 old_addr)
{
	TupleDesc	td = slot->tts_tupleDescriptor;
	Datum	   *values;
	bool	   *nulls;

	if (ms->n_acols == 0 || ms->acol_track == NULL)
		return slot;
	slot_getallattrs(slot);
	values = palloc(sizeof(Datum) * td->natts);
	nulls = palloc(sizeof(bool) * td->natts);
	memcpy(values, slot->tts_values, sizeof(Datum) * td->natts);
	memcpy(nulls, slot->tts_isnull, sizeof(bool) * td->natts);
	for (int c = 0; c < ms->n_acols; c++)
	{
		int			k = ms->acol_track[c];
		bool		assigned = false;

		if (k >= 0 && ms->track_mode[k] == TRACK_ASSIGN)
			assigned = true;
		else if (k >= 0 && ms->track_mode[k] == TRACK_CARRY && ms->track_old[k])
			assigned = lt_assign_reader_get(ms->track_old[k], old_addr);
		values[ms->acol_att[c] - 1] = BoolGetDatum(assigned);
		nulls[ms->acol_att[c] - 1] = false;
	}
	ExecForceStoreHeapTuple(heap_form_tuple(td, values, nulls), slot, true);
	pfree(values);
	pfree(nulls);
	return slot;
}

/* The old row's state of the fields an UPDATE carries: read from the version its scan reads. */
static void
open_carried(LtModifyState *ms)
{
	for (int k = 0; k < ms->n_track; k++)
		if (ms->track_mode[k] == TRACK_CARRY)
			ms->track_old[k] = lt_assign_reader_open_field(ms->entry, ms->track_ids[k], what(ms));
}

static LtModifyState *
modify_begin(Relation rel, CmdType op, Plan *subplan, Oid userid, bool on_conflict_nothing, const Bitmapset *supplied)
{
	LtModifyState *ms = palloc0(sizeof(LtModifyState));
	const lt_dataset *ds;
	const char *ow_text;
	MemoryContextCallback *cb;
	lt_error	err;

	ms->rel = rel;
	ms->op = op;
	lt_get_table_options(RelationGetRelid(rel), &ms->opts);
	lt_check_writable(rel, &ms->opts);
	check_overwrite_command(rel, op);
	lt_check_write_privilege(userid, RelationGetRelationName(rel), ms->opts.uri);
	if (op == CMD_INSERT && (ow_text = lt_overwrite_predicate(rel)) != NULL)
	{
		ms->ow = lt_overwrite_bind(rel, ow_text);
		lt_overwrite_check_privileges(rel, ms->ow, userid);
		ms->ow_validate = lt_overwrite_validating();
		ms->ow_hidden = !lt_may_read_table(RelationGetRelid(rel), userid) ||
			!lt_may_read_table(RelationGetRelid(rel), GetUserId());
	}

	ms->xt = lt_write_xact_table(rel, &ms->opts, "write");
	if (op == CMD_INSERT)
		ms->xt->inserted = true;	/* a DELETE's predicate in this transaction becomes a replace's */
	ds = ms->xt->base->ds;
	if (op != CMD_DELETE)		/* a DELETE writes deletion files only: the blobs stay where they are */
		lt_check_blob_writable(RelationGetRelationName(rel), ms->opts.uri, ds,
							   op == CMD_INSERT ? "insert into" : "update");
	if (lt_file_version_for_storage(ds->storage_version, &ms->fver, &err) != LT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot write foreign table \"%s\": %s", RelationGetRelationName(rel), err.msg),
				 errdetail("Dataset %s has storage version %s.", ms->opts.uri, ds->storage_version)));

	ms->writer_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw file writer", ALLOCSET_DEFAULT_SIZES);
	ms->row_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw row", ALLOCSET_SMALL_SIZES);
	cb = MemoryContextAlloc(ms->writer_cxt, sizeof(MemoryContextCallback));
	cb->func = writer_release;
	cb->arg = ms;
	MemoryContextRegisterResetCallback(ms->writer_cxt, cb);
	ms->max_rows_per_file = lt_option_max_rows_per_file(RelationGetRelid(rel));

	if (op == CMD_INSERT || op == CMD_UPDATE)
	{
		setup_builders(ms);
		ms->on_conflict_nothing = on_conflict_nothing;
		ms->keys = lt_keys_begin(rel, ms->opts.uri, ms->xt, ds, ms->n_fields, ms->fields, ms->att_of_field, ms->conv,
								 op == CMD_UPDATE, on_conflict_nothing);
		setup_assignment(ms, supplied);
	}
	if (ms->ow)
	{
		/* the delete set, against the read version with this transaction's earlier writes */
		lt_overwrite_plan(rel, &ms->opts, ms->xt, ms->ow, &ms->ow_plan);
		lt_overwrite_register(ms->xt, rel, ms->ow);
	}
	if ((op == CMD_UPDATE || op == CMD_DELETE) && subplan)
	{
		ms->row_attno = ExecFindJunkAttributeInTlist(subplan->targetlist, JUNK_ROW);
		if (!AttributeNumberIsValid(ms->row_attno))
			elog(ERROR, "lt_fdw: the row identity junk column is missing");
		ms->wholerow_attno = ExecFindJunkAttributeInTlist(subplan->targetlist, "wholerow");
		/* the version the scan reads: resolved in this statement already (the scan began first) */
		ms->entry = lt_dataset_acquire(RelationGetRelid(rel), &ms->opts, true);
		cb = palloc0(sizeof(MemoryContextCallback));
		cb->func = entry_release;
		cb->arg = ms;
		MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
		ms->keep_row_ids = op == CMD_UPDATE && ms->entry->ds->stable_row_ids;
		if (op == CMD_UPDATE)
			open_carried(ms);
	}
	return ms;
}

static Oid
modify_userid(EState *estate, ResultRelInfo *rinfo)
{
	RangeTblEntry *rte = exec_rt_fetch(rinfo->ri_RangeTableIndex, estate);

	return OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
}

/* _rowid / _rowaddr are the scan's: an UPDATE may not assign them. */
static void
check_readonly_update(LtModifyState *ms, ResultRelInfo *rinfo, EState *estate)
{
	Bitmapset  *cols = ExecGetUpdatedCols(rinfo, estate);

	for (int i = 0; i < ms->n_readonly; i++)
		if (bms_is_member(ms->readonly[i] - FirstLowInvalidHeapAttributeNumber, cols) &&
			lt_column_assigned_field(RelationGetRelid(ms->rel), ms->readonly[i]) == NULL)	/* may be SET false */
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" is read-only",
							NameStr(TupleDescAttr(RelationGetDescr(ms->rel), ms->readonly[i] - 1)->attname),
							RelationGetRelationName(ms->rel)),
					 errdetail("Scans fill it with the Lance row id or row address; a write cannot set it."),
					 errhint("Leave it out of the SET list.")));
}

/* ... nor may an INSERT or COPY give them a value (NULL is no value). */
static inline void
check_readonly_insert(LtModifyState *ms, TupleTableSlot *slot)
{
	for (int i = 0; i < ms->n_readonly; i++)
	{
		AttrNumber	a = ms->readonly[i];

		slot_getsomeattrs(slot, a);
		if (!slot->tts_isnull[a - 1])
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" is read-only",
							NameStr(TupleDescAttr(RelationGetDescr(ms->rel), a - 1)->attname),
							RelationGetRelationName(ms->rel)),
					 errdetail("Scans fill it with the Lance row id or row address; new rows get theirs when the transaction commits."),
					 errhint("Leave it out of the INSERT's column list, or give NULL.")));
	}
}

void
ltBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo, List *fdw_private, int subplan_index,
					 int eflags)
{
	LtModifyState *ms;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	ms = modify_begin(rinfo->ri_RelationDesc, mtstate->operation, outerPlanState(mtstate)->plan,
					  modify_userid(mtstate->ps.state, rinfo),
					  ((ModifyTable *) mtstate->ps.plan)->onConflictAction == ONCONFLICT_NOTHING,
					  /* what the statement's column lists supply, not what Postgres filled in */
					  mtstate->operation == CMD_UPDATE ? ExecGetUpdatedCols(rinfo, mtstate->ps.state)
					  : ExecGetInsertedCols(rinfo, mtstate->ps.state));
	if (mtstate->operation == CMD_UPDATE)
		check_readonly_update(ms, rinfo, mtstate->ps.state);
	rinfo->ri_FdwState = ms;
	if (mtstate->operation == CMD_DELETE && fdw_private != NIL)
		lt_overwrite_register_delete(ms->xt, rinfo->ri_RelationDesc, fdw_private);
}

void
ltBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	EState	   *estate = mtstate->ps.state;
	Oid			userid = GetUserId();

	if (rinfo->ri_RangeTableIndex > 0)
		userid = modify_userid(estate, rinfo);
	rinfo->ri_FdwState = modify_begin(rinfo->ri_RelationDesc, CMD_INSERT, NULL, userid,
									  mtstate && mtstate->ps.plan &&
									  ((ModifyTable *) mtstate->ps.plan)->onConflictAction == ONCONFLICT_NOTHING,
									  /* COPY's column list, or the routed INSERT's */
									  ExecGetInsertedCols(rinfo, estate));
}

/* ---- rows into files ---------------------------------------------------------------------------- */

/* The open file's field assignment to the transaction (with its file), then a clean slate. */
static void
hand_assignment(LtModifyState *ms, uint64 rows)
{
	uint8	   *kinds = palloc(ms->n_track);
	roaring_bitmap_t **bits = palloc0(sizeof(roaring_bitmap_t *) * ms->n_track);

	if (ms->file_rows != (int64) rows)
		elog(ERROR, "lt_fdw: %lld rows assigned for a file of " UINT64_FORMAT " rows", (long long) ms->file_rows,
			 (uint64) rows);
	for (int k = 0; k < ms->n_track; k++)
	{
		kinds[k] = ms->track_mode[k] == TRACK_ASSIGN ? LT_ASSIGN_ALL : LT_ASSIGN_NONE;
		if (ms->track_mode[k] == TRACK_CARRY)
		{
			/* malloc'd by CRoaring: built, copied by the transaction, freed here */
			bits[k] = roaring_bitmap_create();
			for (int64 w = 0; w < (ms->file_rows + 63) / 64; w++)
				for (uint64 word = ms->track_bits[k][w]; word; word &= word - 1)
					roaring_bitmap_add(bits[k], (uint32) (w * 64 + __builtin_ctzll(word)));
			kinds[k] = LT_ASSIGN_PARTIAL;
		}
	}
	PG_TRY();
	{
		lt_xact_assign_last_file(ms->xt, ms->n_track, ms->track_ids, kinds,
								 (const struct roaring_bitmap_s *const *) bits);
	}
	PG_FINALLY();
	{
		for (int k = 0; k < ms->n_track; k++)
			if (bits[k])
				roaring_bitmap_free(bits[k]);
	}
	PG_END_TRY();
	for (int k = 0; k < ms->n_track; k++)
		if (ms->track_bits[k])
			memset(ms->track_bits[k], 0, sizeof(uint64) * ms->track_cap);
	ms->file_rows = 0;
}

/* The tracked fields' state of the row just appended (the file_rows-th of the open file). */
static void
note_assignment(LtModifyState *ms, uint64 old_addr)
{
	int64		r = ms->file_rows++;

	if (r / 64 >= ms->track_cap)
	{
		int64		cap = Max(1024, ms->track_cap * 2);

		for (int k = 0; k < ms->n_track; k++)
			if (ms->track_mode[k] == TRACK_CARRY)
			{
				ms->track_bits[k] = ms->track_bits[k]
					? repalloc_huge(ms->track_bits[k], sizeof(uint64) * cap)
					: MemoryContextAllocHuge(GetMemoryChunkContext(ms), sizeof(uint64) * cap);
				memset(ms->track_bits[k] + ms->track_cap, 0, sizeof(uint64) * (cap - ms->track_cap));
			}
		ms->track_cap = cap;
	}
	for (int k = 0; k < ms->n_track; k++)
	{
		if (ms->track_mode[k] != TRACK_CARRY)
			continue;
		if (ms->track_old[k] == NULL)
			elog(ERROR, "lt_fdw: no old row state to carry field %d's assignment from", (int) ms->track_ids[k]);
		if (lt_assign_reader_get(ms->track_old[k], old_addr))
			ms->track_bits[k][r / 64] |= UINT64_C(1) << (r % 64);
	}
}

static void
finish_file(LtModifyState *ms)
{
	lt_written_file wf;
	lt_error	err;
	lt_code		rc;
	MemoryContext old;

	if (ms->writer == NULL)
		return;
	memset(&wf, 0, sizeof(wf));
	old = lt_alloc_target(ms->writer_cxt);
	rc = lt_file_writer_finish(ms->writer, &wf, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report_write(&err, what(ms));
	if (ms->keep_row_ids && ms->n_moved != (int64) wf.num_rows)
		elog(ERROR, "lt_fdw: %lld moved rows for a file of " UINT64_FORMAT " rows", (long long) ms->n_moved,
			 (uint64) wf.num_rows);
	lt_xact_add_file(ms->xt, &wf, ms->keep_row_ids ? moved_row_ids(ms) : NULL);
	if (ms->n_track > 0)
		hand_assignment(ms, wf.num_rows);
	old = lt_alloc_target(ms->writer_cxt);
	lt_written_file_clear(&wf);
	lt_file_writer_free(ms->writer);
	lt_alloc_target(old);
	ms->writer = NULL;
	ms->builders = NULL;
	ms->n_moved = 0;
	ms->files_written++;
	MemoryContextReset(ms->writer_cxt);
	{
		/* the callback went with the reset: register it again for the next file */
		MemoryContextCallback *cb = MemoryContextAlloc(ms->writer_cxt, sizeof(MemoryContextCallback));

		cb->func = writer_release;
		cb->arg = ms;
		MemoryContextRegisterResetCallback(ms->writer_cxt, cb);
	}
}

/* A new file: rows are converted straight into its writer's buffers. */
static void
open_writer(LtModifyState *ms)
{
	lt_error	err;
	lt_code		rc;
	MemoryContext old = lt_alloc_target(ms->writer_cxt);

	rc = lt_file_writer_open(ms->xt->base->store, "data/", ms->n_fields, ms->fields, ms->fver, &ms->writer, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report_write(&err, what(ms));
	ms->builders = lt_file_writer_buffers(ms->writer);
	for (int k = 0; k < ms->n_fields; k++)
		ms->batch_from[k] = 0;
}

/* The writer takes the rows converted since the last time (and encodes the pages that filled). */
static void
flush_builders(LtModifyState *ms)
{
	lt_error	err;
	lt_code		rc;
	MemoryContext old;

	if (ms->buffered == 0)
		return;
	old = lt_alloc_target(ms->writer_cxt);
	rc = lt_file_writer_advance(ms->writer, ms->buffered, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report_write(&err, what(ms));
	for (int k = 0; k < ms->n_fields; k++)
		ms->batch_from[k] = ms->builders[k]->data_len;
	ms->rows_written += ms->buffered;
	ms->buffered = 0;
	if (lt_file_writer_rows(ms->writer) >= (uint64) ms->max_rows_per_file)
		finish_file(ms);
}

static void
convert_error_callback(void *arg)
{
	LtModifyState *ms = arg;

	if (ms->converting)
		errcontext("column \"%s\" of foreign table \"%s\"",
				   NameStr(TupleDescAttr(RelationGetDescr(ms->rel), ms->converting - 1)->attname),
				   RelationGetRelationName(ms->rel));
}

/* Convert one row into the builders; `old_addr` is kept for moved rows of a stable-row-id dataset. */
static void
append_row(LtModifyState *ms, TupleTableSlot *slot, uint64 old_addr)
{
	ErrorContextCallback errcb;
	MemoryContext oldcxt;
	MemoryContext oldlib;
	int64		room;
	bool		full = false;

	slot_getallattrs(slot);
	if (ms->writer == NULL)
		open_writer(ms);
	oldcxt = MemoryContextSwitchTo(ms->row_cxt);
	oldlib = lt_alloc_target(ms->writer_cxt);
	errcb.callback = convert_error_callback;
	errcb.arg = ms;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	full = lt_wconv_append_row(ms->conv, ms->builders, ms->att_of_field, ms->n_fields, slot->tts_values,
							   slot->tts_isnull, &ms->converting, ms->batch_from, LT_WRITE_BATCH_BYTES);
	error_context_stack = errcb.previous;
	lt_alloc_target(oldlib);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(ms->row_cxt);

	if (ms->n_track > 0)
		note_assignment(ms, old_addr);
	if (ms->keep_row_ids)
	{
		if (ms->n_moved == ms->cap_moved)
		{
			ms->cap_moved = Max(1024, ms->cap_moved * 2);
			ms->moved = ms->moved ? repalloc_huge(ms->moved, sizeof(uint64) * ms->cap_moved)
				: MemoryContextAllocHuge(GetMemoryChunkContext(ms), sizeof(uint64) * ms->cap_moved);
		}
		ms->moved[ms->n_moved++] = old_addr;
	}
	ms->buffered++;
	room = ms->max_rows_per_file - (ms->writer ? (int64) lt_file_writer_rows(ms->writer) : 0);
	if (full || ms->buffered >= Min(LT_WRITE_BATCH_ROWS, room))
		flush_builders(ms);
}

/* A new row of a replace must match its predicate (unless validation is off). */
static inline void
validate_row(LtModifyState *ms, TupleTableSlot *slot)
{
	ms->rows_seen++;
	check_readonly_insert(ms, slot);
	if (ms->ow && ms->ow_validate)
	{
		slot_getallattrs(slot);
		lt_overwrite_validate_row(ms->ow, ms->rel, slot, ms->rows_seen);
	}
}

/* A keyed table's check of a new row: false when ON CONFLICT DO NOTHING skips it. */
static inline bool
key_ok(LtModifyState *ms, TupleTableSlot *slot, uint64 old_addr)
{
	if (ms->keys == NULL || lt_keys_check_row(ms->keys, slot, old_addr))
		return true;
	ms->rows_skipped++;
	return false;
}

TupleTableSlot *
ltExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	LtModifyState *ms = rinfo->ri_FdwState;

	validate_row(ms, slot);
	if (!key_ok(ms, slot, UINT64_MAX))
		return NULL;			/* not inserted: not counted, no RETURNING row */
	append_row(ms, slot, 0);
	if (rinfo->ri_projectReturning && ms->n_track > 0)
		slot = returning_assigned(ms, slot, 0);
	return slot;
}

TupleTableSlot **
ltExecForeignBatchInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot **slots, TupleTableSlot **planSlots,
						 int *numSlots)
{
	LtModifyState *ms = rinfo->ri_FdwState;

	int			kept = 0;
	TupleTableSlot **out = slots;

	for (int i = 0; i < *numSlots; i++)
	{
		validate_row(ms, slots[i]);
		if (!key_ok(ms, slots[i], UINT64_MAX))
		{
			/* skipped (DO NOTHING): the inserted ones go back in an array of our own (the
			 * executor keeps reusing the one it passed) */
			if (out == slots)
			{
				if (ms->batch_cap < *numSlots)
				{
					ms->batch_out = MemoryContextAlloc(GetMemoryChunkContext(ms), sizeof(TupleTableSlot *) * *numSlots);
					ms->batch_cap = *numSlots;
				}
				out = ms->batch_out;
				memcpy(out, slots, sizeof(TupleTableSlot *) * kept);
			}
			continue;
		}
		append_row(ms, slots[i], 0);
		out[kept++] = slots[i];
	}
	*numSlots = kept;
	return out;
}

int
ltGetForeignModifyBatchSize(ResultRelInfo *rinfo)
{
	/* RETURNING and row triggers need the rows one at a time, as postgres_fdw does */
	if (rinfo->ri_projectReturning != NULL ||
		(rinfo->ri_TrigDesc && (rinfo->ri_TrigDesc->trig_insert_before_row ||
								rinfo->ri_TrigDesc->trig_insert_after_row)))
		return 1;
	return lt_option_batch_size(RelationGetRelid(rinfo->ri_RelationDesc));
}

/* ---- deletes and updates -------------------------------------------------------------------------- */

/* The row address of the row the scan gave in planSlot (its ctid: scan.c's encoding). */
static uint64
row_address(LtModifyState *ms, TupleTableSlot *planSlot)
{
	bool		isnull;
	Datum		d = ExecGetJunkAttribute(planSlot, ms->row_attno, &isnull);

	if (isnull)
		elog(ERROR, "lt_fdw: the row identity of an updated or deleted row is NULL");
	return lt_row_identity_address(ms->entry, (ItemPointer) DatumGetPointer(d), ms->opts.uri);
}

/*
 * The row ids of the moved rows of the open file (stable row ids), read from the version the scan
 * read by their old addresses: one random-access scan per fragment, of no field.
 */
static uint64 *
moved_row_ids(LtModifyState *ms)
{
	lt_dataset *ds = ms->entry->ds;
	int64		n = ms->n_moved;
	uint64	   *sorted = palloc(sizeof(uint64) * Max(n, 1));
	uint64	   *ids_sorted = palloc(sizeof(uint64) * Max(n, 1));
	uint64	   *ids = palloc(sizeof(uint64) * Max(n, 1));
	uint32	   *offsets = palloc(sizeof(uint32) * Max(n, 1));
	int64		i = 0;
	MemoryContext lib = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw row ids", ALLOCSET_DEFAULT_SIZES);

	memcpy(sorted, ms->moved, sizeof(uint64) * n);
	qsort(sorted, n, sizeof(uint64), lt_cmp_u64);
	while (i < n)
	{
		uint64		frag_id = sorted[i] >> 32;
		int64		first = i,
					k = 0,
					got = 0;
		const struct Lt__Pb__DataFragment *frag = lt_dataset_fragment(ds, frag_id);
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;
		lt_error	err;
		lt_code		rc;
		MemoryContext old;

		for (; i < n && (sorted[i] >> 32) == frag_id; i++)
			if (k == 0 || offsets[k - 1] != (uint32) sorted[i])
				offsets[k++] = (uint32) sorted[i];
		if (frag == NULL)
			elog(ERROR, "lt_fdw: fragment " UINT64_FORMAT " of an updated row is not in version " UINT64_FORMAT,
				 frag_id, ms->entry->version);
		so.want_row_ids = true;
		so.offsets = offsets;
		so.n_offsets = (uint64) k;
		old = lt_alloc_target(lib);
		rc = lt_fragment_scanner_open(ds, frag, &so, &sc, &err);
		while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b != NULL)
			for (int64 r = 0; r < b->length && got < k; r++)
				ids_sorted[first + got++] = b->row_ids[r];
		if (sc)
			lt_fragment_scanner_free(sc);
		lt_alloc_target(old);
		if (rc != LT_OK)
			lt_report(&err, what(ms));
		if (got != k)
			elog(ERROR, "lt_fdw: %lld of %lld updated rows of fragment " UINT64_FORMAT " are not live",
				 (long long) (k - got), (long long) k, frag_id);
		/* spread the ids of the unique offsets over the sorted addresses (duplicates share one) */
		for (int64 j = i - 1, u = k - 1; j >= first; j--)
		{
			while (u > 0 && offsets[u] != (uint32) sorted[j])
				u--;
			ids_sorted[j] = ids_sorted[first + u];
		}
		MemoryContextReset(lib);
	}
	/* back to file order */
	for (int64 r = 0; r < n; r++)
	{
		uint64	   *hit = bsearch(&ms->moved[r], sorted, n, sizeof(uint64), lt_cmp_u64);

		ids[r] = ids_sorted[hit - sorted];
	}
	MemoryContextDelete(lib);
	pfree(sorted);
	pfree(ids_sorted);
	pfree(offsets);
	return ids;
}

TupleTableSlot *
ltExecForeignDelete(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	LtModifyState *ms = rinfo->ri_FdwState;
	uint64		addr = row_address(ms, planSlot);

	lt_xact_delete(ms->xt, &addr, 1);
	ms->rows_deleted++;
	if (AttributeNumberIsValid(ms->wholerow_attno) && rinfo->ri_projectReturning)
	{
		bool		isnull;
		Datum		d = ExecGetJunkAttribute(planSlot, ms->wholerow_attno, &isnull);

		if (!isnull)
		{
			HeapTupleHeader th = DatumGetHeapTupleHeader(d);
			HeapTupleData tup;

			tup.t_len = HeapTupleHeaderGetDatumLength(th);
			ItemPointerSetInvalid(&tup.t_self);
			tup.t_tableOid = RelationGetRelid(ms->rel);
			tup.t_data = th;
			/* a copy: the slot keeps the tuple it is given */
			ExecForceStoreHeapTuple(heap_copytuple(&tup), slot, true);
		}
	}
	return slot;
}

/*
 * An UPDATE setting is_assigned columns: each must be set to false (assigning is writing the field).
 * When they are all the SET list has, the rows' state is cleared in place (false returned: the row is
 * not rewritten); otherwise setup_assignment made them invalidations of the rows written.
 */
static bool
cleared_row(LtModifyState *ms, TupleTableSlot *slot, uint64 addr)
{
	slot_getallattrs(slot);
	for (int c = 0; c < ms->n_acols; c++)
	{
		AttrNumber	a = ms->acol_att[c];

		if (ms->acol_cleared[c] == 0)
			continue;
		if (slot->tts_isnull[a - 1] || DatumGetBool(slot->tts_values[a - 1]))
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" can only be set to false",
							NameStr(TupleDescAttr(RelationGetDescr(ms->rel), a - 1)->attname),
							RelationGetRelationName(ms->rel)),
					 errdetail("Setting it to false clears is_assigned(%s); a field is assigned by writing it.",
							   lt_column_assigned_field(RelationGetRelid(ms->rel), a))));
		if (ms->state_only)
			lt_xact_unassign(ms->xt, ms->acol_cleared[c], addr);
	}
	if (ms->state_only)
		ms->rows_updated_in_place++;
	return !ms->state_only;
}

TupleTableSlot *
ltExecForeignUpdate(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	LtModifyState *ms = rinfo->ri_FdwState;
	uint64		addr = row_address(ms, planSlot);

	if (ms->acol_cleared && !cleared_row(ms, slot, addr))
		return slot;			/* state only: the row stays where it is */
	key_ok(ms, slot, addr);		/* an UPDATE has no ON CONFLICT: a duplicate is an error */
	append_row(ms, slot, addr);
	lt_xact_delete(ms->xt, &addr, 1);
	ms->rows_deleted++;
	if (rinfo->ri_projectReturning && ms->n_track > 0)
		slot = returning_assigned(ms, slot, addr);
	return slot;
}

/* ---- the end ---------------------------------------------------------------------------------------- */

void
ltEndForeignModify(EState *estate, ResultRelInfo *rinfo)
{
	LtModifyState *ms = rinfo->ri_FdwState;

	if (ms == NULL)
		return;
	flush_builders(ms);
	finish_file(ms);
	lt_keys_end(ms->keys);
	ms->keys = NULL;
	elog(DEBUG1, "lt_fdw: foreign table \"%s\": " UINT64_FORMAT " rows written in " UINT64_FORMAT " files, " UINT64_FORMAT " rows deleted (committed with the transaction)",
		 RelationGetRelationName(ms->rel), ms->rows_written, ms->files_written,
		 ms->ow ? (ms->ow_hidden ? 0 : (uint64) ms->ow_plan.rows_deleted) : ms->rows_deleted);
	if (ms->ow)
	{
		lt_overwrite_last.valid = true;
		lt_overwrite_last.relid = RelationGetRelid(ms->rel);
		lt_overwrite_last.hidden = ms->ow_hidden;
		lt_overwrite_last.rows_deleted = ms->ow_plan.rows_deleted;
		lt_overwrite_last.rows_inserted = (int64) ms->rows_written;
		lt_overwrite_last.fragments_removed = ms->ow_plan.fragments_removed;
		lt_overwrite_last.fragments_updated = ms->ow_plan.fragments_updated;
		lt_overwrite_last.fragments_added = (int64) ms->files_written;
	}
	rinfo->ri_FdwState = NULL;
}

void
ltEndForeignInsert(EState *estate, ResultRelInfo *rinfo)
{
	ltEndForeignModify(estate, rinfo);
}

void
ltExplainForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo, List *fdw_private, int subplan_index,
					   ExplainState *es)
{
	LtTableOptions opts;
	Oid			relid = RelationGetRelid(rinfo->ri_RelationDesc);

	if (es->verbose)
	{
		lt_get_table_options(relid, &opts);
		ltfdw_explain_dataset(&opts, es);
		if (mtstate->operation == CMD_INSERT || mtstate->operation == CMD_UPDATE)
			ExplainPropertyInteger("Max Rows Per File", NULL, lt_option_max_rows_per_file(relid), es);
	}
	if (mtstate->operation == CMD_INSERT && rinfo->ri_BatchSize > 1)
		ExplainPropertyInteger("Batch Size", NULL, rinfo->ri_BatchSize, es);
	if (es->analyze && rinfo->ri_FdwState)
		lt_keys_explain(((LtModifyState *) rinfo->ri_FdwState)->keys, es);
	if (mtstate->operation == CMD_INSERT && rinfo->ri_FdwState && ((LtModifyState *) rinfo->ri_FdwState)->ow)
	{
		LtModifyState *ms = rinfo->ri_FdwState;

		lt_overwrite_explain(ms->ow, ms->ow_hidden ? NULL : &ms->ow_plan, ms->ow_validate, es);
	}
	else if (mtstate->operation == CMD_INSERT && lt_overwrite_active())
	{
		/* plain EXPLAIN: the delete set as the INSERT would find it now, with the INSERT's checks */
		Relation	rel = rinfo->ri_RelationDesc;
		LtOverwritePred *pred = lt_overwrite_bind(rel, lt_overwrite_predicate(rel));
		Oid			userid = modify_userid(mtstate->ps.state, rinfo);
		LtOverwritePlan plan;

		lt_overwrite_check_privileges(rel, pred, userid);
		if (lt_may_read_table(relid, userid) && lt_may_read_table(relid, GetUserId()))
		{
			lt_get_table_options(relid, &opts);
			lt_overwrite_plan(rel, &opts, NULL, pred, &plan);
			lt_overwrite_explain(pred, &plan, lt_overwrite_validating(), es);
		}
		else
			lt_overwrite_explain(pred, NULL, lt_overwrite_validating(), es);
	}
}

/* ---- rows written outside a ModifyTable (merge.c) ---------------------------------------------------- */

LtRowWriter *
lt_row_writer_begin(Relation rel, Oid userid, LtDatasetEntry *moved_from, LtRowWriter *share_keys,
					const Bitmapset *supplied)
{
	LtModifyState *ms;

	/* a replace would bind lt_fdw.overwrite_where to these rows: the caller refuses that first */
	Assert(!lt_overwrite_active());
	/* an UPDATE's writer: a keyed table's check lets a replaced row keep its key (keys.c) */
	ms = modify_begin(rel, CMD_UPDATE, NULL, userid, false, supplied);
	if (share_keys)
	{
		lt_keys_end(ms->keys);
		ms->keys = share_keys->keys;
		ms->keys_shared = true;
	}
	if (moved_from)
	{
		MemoryContextCallback *cb = palloc0(sizeof(MemoryContextCallback));

		/* rows replacing rows of moved_from: tracked fields not supplied carry the old row's state */
		ms->entry = moved_from;
		moved_from->pins++;
		cb->func = entry_release;
		cb->arg = ms;
		MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
		ms->keep_row_ids = moved_from->ds->stable_row_ids;
		open_carried(ms);
	}
	else
	{
		/* new rows: a tracked field they do not supply stays unassigned */
		for (int k = 0; k < ms->n_track; k++)
			if (ms->track_mode[k] == TRACK_CARRY)
				ms->track_mode[k] = TRACK_UNASSIGNED;
	}
	return ms;
}

void
lt_row_writer_append(LtRowWriter *w, TupleTableSlot *slot, uint64 old_addr, bool check_key)
{
	/* a keyed table: 23505 for a key that exists (old_addr UINT64_MAX: a new row), the key filter */
	if (w->keys && check_key)
		(void) lt_keys_check_row(w->keys, slot, old_addr);
	append_row(w, slot, old_addr == UINT64_MAX ? 0 : old_addr);
}

void
lt_row_writer_end(LtRowWriter *w, uint64 *rows, uint64 *files)
{
	flush_builders(w);
	finish_file(w);
	if (!w->keys_shared)
		lt_keys_end(w->keys);
	w->keys = NULL;
	*rows = w->rows_written;
	*files = w->files_written;
}

uint64
lt_row_identity_address(const LtDatasetEntry *entry, ItemPointer tid, const char *uri)
{
	OffsetNumber idx = ItemPointerGetOffsetNumberNoCheck(tid);
	const lt_dataset *ds = entry->ds;

	if (idx < 1 || idx > ds->n_fragments)
		elog(ERROR, "lt_fdw: row identity (%u,%u) names no fragment of version " UINT64_FORMAT " of %s",
			 ItemPointerGetBlockNumberNoCheck(tid), idx, entry->version, uri);
	return (ds->fragments[idx - 1]->id << 32) | ItemPointerGetBlockNumberNoCheck(tid);
}
