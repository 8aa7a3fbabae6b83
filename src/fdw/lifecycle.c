/*
 * lifecycle.c — lt_create_dataset and lt_compact: a dataset created and compacted from SQL, each
 * one Lance commit made at the Postgres transaction's commit.
 *
 * lt_create_dataset(target, storage_version, query, overwrite) takes the columns of a foreign
 * table (the catalog is where Postgres users already declare a table: CREATE FOREIGN TABLE, then
 * this call) and makes the dataset at the table's path: the type mapping in reverse, NOT NULL as
 * a non-nullable field, field names from column_name options.  With a query its rows are written
 * into data files at once (unreferenced until the commit); the commit is one Lance Overwrite,
 * version 1 of a new dataset (only if no one created it meanwhile: else 40001), or on top of an
 * existing dataset when overwrite is true.  ROLLBACK removes the files.  A function rather than a
 * table option that lets the first INSERT create the dataset: a create is a statement one means,
 * not a side effect of a typo in a path, and it needs the storage version and overwrite choices.
 *
 * lt_compact(target, ...) plans as Lance does (lt_compact.h), copies the live rows of each group
 * into new files at once, and hands the transaction's lt_txn the fragments removed and added,
 * marked as a compaction: the commit is one Lance Rewrite, rebased over concurrent appends, 40001
 * when a concurrent commit touched a compacted fragment.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "common/file_perm.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/ruleutils.h"
#include "utils/lsyscache.h"
#include "nodes/value.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
#include "utils/typcache.h"

#include "convert.h"
#include "convert_write.h"
#include "dataset.h"
#include "index_build.h"
#include "lifecycle.h"
#include "modify.h"
#include "namespace.h"
#include "option.h"
#include "progress.h"
#include "store.h"
#include "xact.h"
#include "proto/lt_table.pb-c.h"
#include "assignment/lt_assignment.h"
#include "index/lt_index.h"
#include "table/lt_scan.h"
#include "txn/lt_compact.h"
#include "txn/lt_txn_create.h"
#include "txn/lt_txn_index.h"
#include "txn/lt_txn_restore.h"
#include "txn/lt_txn_schema.h"

PG_FUNCTION_INFO_V1(lt_create_dataset);
PG_FUNCTION_INFO_V1(lt_compact);
PG_FUNCTION_INFO_V1(lt_add_column);
PG_FUNCTION_INFO_V1(lt_drop_column);
PG_FUNCTION_INFO_V1(lt_rename_column);
PG_FUNCTION_INFO_V1(lt_alter_column_type);
PG_FUNCTION_INFO_V1(lt_create_tag);
PG_FUNCTION_INFO_V1(lt_delete_tag);
PG_FUNCTION_INFO_V1(lt_restore);
PG_FUNCTION_INFO_V1(lt_tags_sql);
PG_FUNCTION_INFO_V1(lt_drop_index);
PG_FUNCTION_INFO_V1(lt_optimize_indexes);
PG_FUNCTION_INFO_V1(lt_table_stats);

#define CREATE_BATCH_ROWS 1000
#define CREATE_BATCH_BYTES ((int64) 8 * 1024 * 1024)

/* ---- the type mapping in reverse ------------------------------------------------------------ */

typedef struct FieldList
{
	lt_new_field *f;
	int			n,
				cap;
} FieldList;

static int
add_field(FieldList *l, const char *name, const char *lt, bool nullable, int parent)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 16;
		l->f = l->f ? repalloc(l->f, sizeof(lt_new_field) * l->cap) : palloc(sizeof(lt_new_field) * l->cap);
	}
	l->f[l->n].name = pstrdup(name);
	l->f[l->n].logical_type = pstrdup(lt);
	l->f[l->n].nullable = nullable;
	l->f[l->n].parent = parent;
	return l->n++;
}

/*
 * The Lance field (and its children) for a column of type typid/typmod; the logical types are
 * those IMPORT FOREIGN SCHEMA maps back to the same Postgres type.
 */
static void
field_for_type(FieldList *l, const char *name, Oid typid, int32 typmod, bool nullable, int parent,
			   const char *column, const char *relname)
{
	Oid			elem;
	const char *lt = NULL;

	typid = getBaseTypeAndTypmod(typid, &typmod);
	switch (typid)
	{
		case BOOLOID: lt = "bool"; break;
		case INT2OID: lt = "int16"; break;
		case INT4OID: lt = "int32"; break;
		case INT8OID: lt = "int64"; break;
		case FLOAT4OID: lt = "float"; break;
		case FLOAT8OID: lt = "double"; break;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			lt = "string";
			break;
		case JSONBOID:
		case JSONOID:
			/* jsonb reads Lance structs, maps and nested lists: which one a document is, only the user knows */
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" is %s, which does not say its Lance type",
							column, relname, format_type_be(typid)),
					 errhint("Declare it text to store the JSON text as a Lance string, or a composite type to store a Lance struct.")));
			break;
		case BYTEAOID: lt = "binary"; break;
		case DATEOID: lt = "date32:day"; break;
		case TIMEOID: lt = "time64:us"; break;
		case TIMESTAMPOID: lt = "timestamp:us:-"; break;
		case TIMESTAMPTZOID: lt = "timestamp:us:UTC"; break;
		case NUMERICOID:
			{
				int			p,
							s;

				if (typmod < (int32) VARHDRSZ)
					ereport(ERROR,
							(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
							 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" is numeric without a precision",
									column, relname),
							 errdetail("A Lance decimal has a fixed precision and scale."),
							 errhint("Declare it numeric(p,s) with p at most 76.")));
				p = ((typmod - VARHDRSZ) >> 16) & 0xffff;
				s = (typmod - VARHDRSZ) & 0xffff;
				if (s > p || p > 76)
					ereport(ERROR,
							(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
							 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" is numeric(%d,%d), which no Lance decimal holds",
									column, relname, p, (int16) s),
							 errhint("Use a precision of at most 76 and a scale from 0 to the precision.")));
				lt = psprintf("decimal:%d:%d:%d", p <= 38 ? 128 : 256, p, s);
				break;
			}
		default:
			break;
	}
	if (lt)
	{
		add_field(l, name, lt, nullable, parent);
		return;
	}
	if ((elem = get_element_type(typid)) != InvalidOid)
	{
		int			me = add_field(l, name, "list", nullable, parent);

		field_for_type(l, "item", elem, typmod, true, me, column, relname);
		return;
	}
	if (get_typtype(typid) == TYPTYPE_COMPOSITE)
	{
		TupleDesc	td = lookup_rowtype_tupdesc(typid, typmod);
		int			me = add_field(l, name, "struct", nullable, parent);

		for (int i = 0; i < td->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(td, i);

			if (!a->attisdropped)
				field_for_type(l, NameStr(a->attname), a->atttypid, a->atttypmod, true, me, column, relname);
		}
		ReleaseTupleDesc(td);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" has type %s, which has no Lance type", column,
					relname, format_type_with_typemod(typid, typmod)),
			 errhint("The README's type mapping lists the types a dataset can be created with.")));
}

/* A name a new or renamed field may take: not empty, not a row identity column. */
static void
check_field_name(const char *name)
{
	if (name[0] == '\0' || lt_is_row_identity_name(name))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
				 errmsg("lt_fdw: \"%s\" cannot name a dataset field", name)));
}

/* The operations that write nothing before their commit have nothing to remove. */
static void
discard_nothing(LtXactTable *xt, LtPendingOp *op)
{
}

/* The transaction's operation on the dataset of xt, committed at PRE_COMMIT (xact.c); arg in xt->meta_cxt. */
static void
attach_op(LtXactTable *xt, const char *what, void (*commit) (LtXactTable *, LtPendingOp *),
		  void (*discard) (LtXactTable *, LtPendingOp *), void *arg)
{
	LtPendingOp *op = MemoryContextAllocZero(xt->meta_cxt, sizeof(LtPendingOp));

	op->subid = GetCurrentSubTransactionId();
	op->what = what;
	op->commit = commit;
	op->discard = discard;
	op->arg = arg;
	xt->pending_op = op;
}

/* ---- lt_create_dataset ------------------------------------------------------------------------- */

typedef struct PendingCreate
{
	lt_new_dataset *nd;
	bool		overwrite;
	int			n_files,
				cap_files;
	lt_written_file *files;
	uint64		rows;
	/* a table new to a directory namespace: its __manifest row, added after the first version */
	char	   *ns_root;
	LtS3Location *ns_s3;
	char	   *ns_identifier;
	char	   *ns_location;
} PendingCreate;

static void
create_discard(LtXactTable *xt, LtPendingOp *op)
{
	PendingCreate *pc = op->arg;
	lt_store   *store;
	lt_error	err;
	MemoryContext old = lt_alloc_target(xt->meta_cxt);

	/* best effort: whatever is left is an orphan for lt_cleanup */
	if (lt_open_store(xt->s3, xt->dir, &store, &err) == LT_OK)
	{
		for (int i = 0; i < pc->n_files; i++)
		{
			char	   *path = psprintf("data/%s", pc->files[i].name);

			lt_store_remove(store, path, &err);
		}
		lt_store_close(store);
	}
	lt_alloc_target(old);
}

static void
create_commit(LtXactTable *xt, LtPendingOp *op)
{
	PendingCreate *pc = op->arg;
	lt_store   *store = NULL;
	lt_commit_result res;
	lt_error	err;
	lt_code		rc;
	MemoryContext old = lt_alloc_target(xt->meta_cxt);

	rc = lt_open_store(xt->s3, xt->dir, &store, &err);
	if (rc == LT_OK)
	{
		lt_xact_arm_crash(true);
		rc = lt_commit_create(store, "", pc->nd, pc->overwrite, (size_t) pc->n_files, pc->files, &res, &err);
		lt_xact_arm_crash(false);
	}
	if (store)
		lt_store_close(store);
	lt_alloc_target(old);
	if (rc == LT_ECONFLICT)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lt_fdw: could not create the dataset of foreign table \"%s\": a concurrent transaction conflicts",
						xt->relname),
				 errdetail("%s (dataset %s).", err.msg, xt->uri),
				 errhint("Retry the transaction.")));
	if (rc == LT_EINVALID)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("lt_fdw: the dataset of foreign table \"%s\" was created by another transaction meanwhile",
						xt->relname),
				 errdetail("%s.", err.msg),
				 errhint("Pass overwrite => true to replace it.")));
	if (rc != LT_OK)
		lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", xt->uri, xt->relname));
	elog(DEBUG1, "lt_fdw: created %s at version " UINT64_FORMAT, xt->uri, res.version);
	if (pc->ns_location)
		lt_namespace_register(pc->ns_root, pc->ns_s3, pc->ns_identifier, pc->ns_location, xt->relname);
}

/* The rows of a query written into data files of the new dataset (pc->files). */
typedef struct QueryWriter
{
	lt_store   *store;
	const lt_schema *schema;
	lt_file_version fver;
	LtWriteConv **conv;
	AttrNumber *att_of_field;
	int64	   *since;
	int64		max_rows_per_file;
	lt_file_writer *w;
	lt_array  *const *buffers;
	int64		buffered;
	MemoryContext cxt;			/* the pending state's: the files' descriptions outlive the call */
	const char *what;
} QueryWriter;

static void
qw_finish(QueryWriter *qw, PendingCreate *pc)
{
	lt_error	err;
	lt_code		rc;
	MemoryContext old;

	if (!qw->w)
		return;
	if (pc->n_files == pc->cap_files)
	{
		pc->cap_files = pc->cap_files ? pc->cap_files * 2 : 8;
		pc->files = pc->files ? repalloc(pc->files, sizeof(lt_written_file) * pc->cap_files)
			: MemoryContextAllocZero(qw->cxt, sizeof(lt_written_file) * pc->cap_files);
	}
	old = lt_alloc_target(qw->cxt);
	memset(&pc->files[pc->n_files], 0, sizeof(lt_written_file));
	rc = lt_file_writer_finish(qw->w, &pc->files[pc->n_files], &err);
	if (rc == LT_OK)
		pc->n_files++;
	lt_file_writer_free(qw->w);
	lt_alloc_target(old);
	qw->w = NULL;
	if (rc != LT_OK)
		lt_report_write(&err, qw->what);
}

static void
qw_flush(QueryWriter *qw, PendingCreate *pc)
{
	lt_error	err;
	lt_code		rc;
	MemoryContext old;

	if (qw->buffered == 0)
		return;
	old = lt_alloc_target(qw->cxt);
	rc = lt_file_writer_advance(qw->w, qw->buffered, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report_write(&err, qw->what);
	for (int k = 0; k < qw->schema->n_fields; k++)
		qw->since[k] = qw->buffers[k]->data_len;
	pc->rows += qw->buffered;
	qw->buffered = 0;
	if (lt_file_writer_rows(qw->w) >= (uint64) qw->max_rows_per_file)
		qw_finish(qw, pc);
	lt_progress_done(pc->n_files, (int64) pc->rows);
}

static void
write_query(const char *query, Oid relid, const char *relname, const AttrNumber *col_att, PendingCreate *pc,
			QueryWriter *qw)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	reltd = RelationGetDescr(rel);
	SPIPlanPtr	plan;
	Portal		portal;
	int			n = qw->schema->n_fields;
	MemoryContext callcxt = CurrentMemoryContext;
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext, "lt_create_dataset row", ALLOCSET_DEFAULT_SIZES);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "lt_create_dataset: SPI_connect failed");
	plan = SPI_prepare_cursor(query, 0, NULL, 0);
	if (plan == NULL)
		elog(ERROR, "lt_create_dataset: could not prepare the query: %s", SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: the query of lt_create_dataset must return rows")));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	{
		TupleDesc	qtd = portal->tupDesc;
		MemoryContext old = MemoryContextSwitchTo(callcxt);

		if (qtd->natts != n)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("lt_fdw: the query of lt_create_dataset returns %d columns, foreign table \"%s\" has %d",
							qtd->natts, relname, n),
					 errhint("The query's columns fill the table's columns in order (the scan columns _rowid and _rowaddr left out).")));
		for (int k = 0; k < n; k++)
		{
			Form_pg_attribute qa = TupleDescAttr(qtd, k);
			Form_pg_attribute ta = TupleDescAttr(reltd, col_att[k] - 1);
			char	   *why = NULL;

			qw->conv[k] = lt_wconv_build(qw->schema->fields[k], pstrdup(NameStr(ta->attname)), qa->atttypid,
										 qa->atttypmod, &why);
			if (qw->conv[k] == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("lt_fdw: column %d of the query has type %s, which cannot be written into column \"%s\" (%s)",
								k + 1, format_type_with_typemod(qa->atttypid, qa->atttypmod),
								NameStr(ta->attname), qw->schema->fields[k]->logical_type),
						 errdetail("%s.", why ? why : "no conversion")));
			qw->att_of_field[k] = k + 1;
		}
		MemoryContextSwitchTo(old);
	}
	for (;;)
	{
		SPI_cursor_fetch(portal, true, CREATE_BATCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			Datum	   *values = palloc(sizeof(Datum) * n);
			bool	   *isnull = palloc(sizeof(bool) * n);
			AttrNumber	converting = 0;
			bool		full;
			MemoryContext old,
						oldlib;

			CHECK_FOR_INTERRUPTS();
			if (!qw->w)
			{
				lt_error	err;
				lt_code		rc;

				oldlib = lt_alloc_target(qw->cxt);
				rc = lt_file_writer_open(qw->store, "data/", n, (const lt_field *const *) qw->schema->fields,
										 qw->fver, &qw->w, &err);
				lt_alloc_target(oldlib);
				if (rc != LT_OK)
					lt_report_write(&err, qw->what);
				qw->buffers = lt_file_writer_buffers(qw->w);
				for (int k = 0; k < n; k++)
					qw->since[k] = 0;
			}
			old = MemoryContextSwitchTo(rowcxt);
			heap_deform_tuple(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, values, isnull);
			oldlib = lt_alloc_target(qw->cxt);
			full = lt_wconv_append_row(qw->conv, qw->buffers, qw->att_of_field, n, values, isnull, &converting,
									   qw->since, CREATE_BATCH_BYTES);
			lt_alloc_target(oldlib);
			MemoryContextSwitchTo(old);
			MemoryContextReset(rowcxt);
			qw->buffered++;
			if (full || qw->buffered >= Min(8192, qw->max_rows_per_file - (int64) lt_file_writer_rows(qw->w)))
				qw_flush(qw, pc);
			pfree(values);
			pfree(isnull);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	if (qw->w)
	{
		qw_flush(qw, pc);
		qw_finish(qw, pc);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	table_close(rel, AccessShareLock);
}

Datum
lt_create_dataset(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *relname;
	const char *sv;
	char	   *query = NULL;
	bool		overwrite;
	LtTableOptions opts;
	LtXactTable *xt;
	Relation	rel;
	TupleDesc	td;
	FieldList	fl = {0};
	AttrNumber *col_att;
	int			n_cols = 0;
	PendingCreate *pc;
	lt_store   *store = NULL;
	bool		exists = false;
	lt_error	err;
	lt_code		rc;
	MemoryContext old;
	TupleDesc	rtd;
	Datum		values[4];
	bool		nulls[4] = {0};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_create_dataset needs a foreign table")));
	relid = PG_GETARG_OID(0);
	sv = PG_ARGISNULL(1) ? "2.2" : text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (!PG_ARGISNULL(2))
		query = text_to_cstring(PG_GETARG_TEXT_PP(2));
	overwrite = !PG_ARGISNULL(3) && PG_GETARG_BOOL(3);
	if (get_call_result_type(fcinfo, NULL, &rtd) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "lt_create_dataset must return a record");

	lt_check_lt_table(relid, "lt_create_dataset");
	relname = get_rel_name(relid);
	lt_check_table_owner(relid);	/* as CREATE TABLE AS into it would need: it defines the table's data */
	lt_get_table_options_for_create(relid, &opts);
	if (opts.version || opts.tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: foreign table \"%s\" is pinned to a %s and cannot create its dataset", relname,
						opts.version ? "version" : "tag"),
				 errhint("Create the dataset through a foreign table without \"version\" or \"tag\".")));
	lt_check_write_privilege(GetUserId(), relname, opts.uri);
	if (strcmp(sv, "2.0") != 0 && strcmp(sv, "2.1") != 0 && strcmp(sv, "2.2") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: storage version \"%s\" cannot be written", sv),
				 errhint("The storage versions are 2.0, 2.1 and 2.2 (the default).")));

	/* the columns, in order (the scan's _rowid / _rowaddr are no fields) */
	rel = table_open(relid, AccessShareLock);
	td = RelationGetDescr(rel);
	col_att = palloc(sizeof(AttrNumber) * Max(td->natts, 1));
	for (int i = 0; i < td->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(td, i);
		char	   *fname;

		if (a->attisdropped)
			continue;
		fname = lt_column_field_name(relid, a->attnum, NameStr(a->attname));
		if (lt_is_row_identity_name(fname))
			continue;
		for (int j = 0; j < fl.n; j++)
			if (fl.f[j].parent == -1 && strcmp(fl.f[j].name, fname) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("lt_fdw: two columns of foreign table \"%s\" name field \"%s\"", relname, fname)));
		field_for_type(&fl, fname, a->atttypid, a->atttypmod, !a->attnotnull, -1, NameStr(a->attname), relname);
		col_att[n_cols++] = a->attnum;
	}
	table_close(rel, AccessShareLock);
	if (n_cols == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("lt_fdw: foreign table \"%s\" has no column to make a field of", relname)));

	xt = lt_xact_op_table(relname, &opts, "create");
	old = MemoryContextSwitchTo(xt->meta_cxt);
	pc = palloc0(sizeof(PendingCreate));
	pc->overwrite = overwrite;
	if (opts.ns_register)
	{
		pc->ns_root = pstrdup(opts.root);
		pc->ns_s3 = lt_s3_location_copy(opts.s3);
		pc->ns_identifier = pstrdup(opts.identifier);
		pc->ns_location = pstrdup(opts.ns_register);
	}
	MemoryContextSwitchTo(old);
	{
		MemoryContext oldlib = lt_alloc_target(xt->meta_cxt);

		rc = lt_new_dataset_init(fl.f, fl.n, sv, &pc->nd, &err);
		lt_alloc_target(oldlib);
		if (rc != LT_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("lt_fdw: cannot create a dataset from foreign table \"%s\": %s", relname, err.msg)));
	}

	/* the dataset's directory (local: made now, inside the server's root the table's path names) */
	if (!lt_is_s3_uri(opts.dataset_dir) && pg_mkdir_p(opts.dataset_dir, pg_dir_create_mode) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("lt_fdw: could not create directory \"%s\": %m", opts.dataset_dir)));
	{
		MemoryContext oldlib = lt_alloc_target(CurrentMemoryContext);

		rc = lt_open_store(opts.s3, opts.dataset_dir, &store, &err);
		if (rc == LT_OK)
			rc = lt_dataset_exists(store, "", &exists, &err);
		lt_alloc_target(oldlib);
		if (rc != LT_OK)
			lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, relname));
	}
	if (exists && !overwrite)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("lt_fdw: dataset %s of foreign table \"%s\" already exists", opts.uri, relname),
				 errhint("Pass overwrite => true to replace it (one Overwrite commit; older versions stay readable).")));

	/* the pending state goes in before any file is written: an error from here on removes them */
	attach_op(xt, "creates the dataset of", create_commit, create_discard, pc);

	if (query)
	{
		QueryWriter qw = {0};

		qw.store = store;
		qw.schema = lt_new_dataset_schema(pc->nd);
		qw.fver = lt_new_dataset_file_version(pc->nd);
		qw.conv = palloc0(sizeof(LtWriteConv *) * n_cols);
		qw.att_of_field = palloc0(sizeof(AttrNumber) * n_cols);
		qw.since = palloc0(sizeof(int64) * n_cols);
		qw.max_rows_per_file = lt_option_max_rows_per_file(relid);
		qw.cxt = xt->meta_cxt;
		qw.what = psprintf("dataset %s (foreign table \"%s\")", opts.uri, relname);
		PG_TRY();
		{
			/* the query's rows are not known ahead: rows and files (fragments) so far */
			lt_progress_begin(relid, LT_PROGRESS_CREATE, LT_PROGRESS_WRITING, -1, -1);
			write_query(query, relid, relname, col_att, pc, &qw);
		}
		PG_FINALLY();
		{
			lt_progress_end();
			if (qw.w)
			{
				MemoryContext oldlib = lt_alloc_target(qw.cxt);

				lt_file_writer_free(qw.w);	/* an unfinished file is removed */
				lt_alloc_target(oldlib);
			}
		}
		PG_END_TRY();
	}
	else
	{
		/* every column's type must have a conversion for later INSERTs: say so now, not at the first write */
		const lt_schema *s = lt_new_dataset_schema(pc->nd);

		rel = table_open(relid, AccessShareLock);
		td = RelationGetDescr(rel);
		for (int k = 0; k < n_cols; k++)
		{
			Form_pg_attribute a = TupleDescAttr(td, col_att[k] - 1);
			char	   *why = NULL;

			if (lt_wconv_build(s->fields[k], NameStr(a->attname), a->atttypid, a->atttypmod, &why) == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" cannot be written as %s", NameStr(a->attname),
								relname, s->fields[k]->logical_type),
						 errdetail("%s.", why ? why : "no conversion")));
		}
		table_close(rel, AccessShareLock);
	}
	{
		MemoryContext oldlib = lt_alloc_target(CurrentMemoryContext);

		lt_store_close(store);
		lt_alloc_target(oldlib);
	}

	values[0] = CStringGetTextDatum(opts.uri);
	values[1] = CStringGetTextDatum(sv);
	values[2] = Int64GetDatum((int64) pc->rows);
	values[3] = Int32GetDatum(pc->n_files);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(rtd, values, nulls)));
}

/* ---- lt_compact ------------------------------------------------------------------------------- */

/* lt_stat_progress of a compaction: the fragments the plan rewrites and their live rows */
static void
compact_progress_totals(const lt_dataset *ds, const lt_compact_plan *plan)
{
	int64		frags = 0,
				rows = 0;

	for (size_t g = 0; g < plan->n_groups; g++)
		for (size_t k = 0; k < plan->groups[g].count; k++)
		{
			frags++;
			rows += (int64) lt_fragment_live_rows(ds->fragments[plan->groups[g].first + k]);
		}
	lt_progress_phase(LT_PROGRESS_WRITING, frags, rows);
}

Datum
lt_compact(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *relname;
	LtTableOptions opts;
	lt_compact_options co = {0};
	Relation	rel;
	LtXactTable *xt;
	lt_dataset *ds;
	lt_compact_plan plan;
	uint64		removed = 0,
				added = 0,
				rows = 0;
	lt_error	err;
	lt_code		rc;
	MemoryContext oldlib;
	TupleDesc	rtd;
	Datum		values[3];
	bool		nulls[3] = {0};
	const char *what;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_compact needs a foreign table")));
	relid = PG_GETARG_OID(0);
	co.target_rows_per_fragment = PG_ARGISNULL(1) ? 1024 * 1024 : (uint64) PG_GETARG_INT64(1);
	co.materialize_deletions = PG_ARGISNULL(2) ? true : PG_GETARG_BOOL(2);
	co.materialize_deletions_threshold = PG_ARGISNULL(3) ? 0.1 : PG_GETARG_FLOAT8(3);
	if (PG_GETARG_INT64(1) < 1 || PG_GETARG_INT64(1) > (int64) UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: target_rows_per_fragment must be between 1 and 4294967295")));
	if (co.materialize_deletions_threshold < 0 || co.materialize_deletions_threshold > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: materialize_deletions_threshold must be between 0 and 1")));
	if (get_call_result_type(fcinfo, NULL, &rtd) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "lt_compact must return a record");

	lt_check_lt_table(relid, "lt_compact");
	relname = get_rel_name(relid);
	lt_check_table_owner(relid);	/* as VACUUM */
	lt_get_table_options(relid, &opts);
	what = psprintf("dataset %s (foreign table \"%s\")", opts.uri, relname);
	rel = table_open(relid, AccessShareLock);
	lt_check_writable(rel, &opts);
	lt_check_read_privilege(GetUserId(), relname, opts.uri);
	lt_check_write_privilege(GetUserId(), relname, opts.uri);
	xt = lt_write_xact_table(rel, &opts, "compact");
	if (!lt_txn_is_empty(xt->txn) || xt->n_files || xt->n_addrs || xt->n_removes || xt->pending_op ||
		xt->pending_key || xt->pending_indexes != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot compact foreign table \"%s\" in a transaction that already changed it", relname),
				 errdetail("A Lance Rewrite commit carries nothing but the compaction; dataset %s.", opts.uri),
				 errhint("Commit first, then call lt_compact in a transaction of its own.")));
	ds = xt->base->ds;
	/* groups an earlier lt_compact of this transaction recorded before it failed in a subtransaction */
	lt_txn_mark_compaction(xt->txn, false);
	/* a rewrite copies each blob's bytes into the new files: only the forms lt_fdw writes */
	lt_check_blob_writable(relname, opts.uri, ds, "compact");
	lt_progress_begin(relid, LT_PROGRESS_COMPACT, LT_PROGRESS_PLANNING, -1, -1);
	oldlib = lt_alloc_target(CurrentMemoryContext);
	rc = lt_compact_plan_make(ds, &co, &plan, &err);
	lt_alloc_target(oldlib);
	if (rc != LT_OK)
		lt_report_write(&err, what);
	compact_progress_totals(ds, &plan);
	for (size_t g = 0; g < plan.n_groups; g++)
	{
		lt_compact_file *files = NULL;
		size_t		n_files = 0;

		CHECK_FOR_INTERRUPTS();
		oldlib = lt_alloc_target(CurrentMemoryContext);
		rc = lt_compact_copy_group(ds, &plan.groups[g], &co, &files, &n_files, &err);
		lt_alloc_target(oldlib);
		if (rc != LT_OK)
			lt_report_write(&err, what);
		for (size_t i = 0; i < n_files; i++)
		{
			lt_xact_add_file(xt, &files[i].file, files[i].row_ids);
			/* the rows' field assignment moves with them (a compaction never creates any) */
			if (files[i].n_assign > 0)
				lt_xact_assign_last_file(xt, files[i].n_assign, files[i].assign_field, files[i].assign_kind,
										 (const struct roaring_bitmap_s *const *) files[i].assign_rows);
			rows += files[i].file.num_rows;
		}
		{
			uint64	   *old_ids = palloc(sizeof(uint64) * Max(plan.groups[g].count, 1));

			for (size_t k = 0; k < plan.groups[g].count; k++)
			{
				old_ids[k] = ds->fragments[plan.groups[g].first + k]->id;
				lt_xact_remove_fragment(xt, old_ids[k]);
			}
			/* the group, so that the commit moves each index's coverage group by group (the txn's memory) */
			oldlib = lt_alloc_target(xt->cxt);
			rc = lt_txn_compaction_group(xt->txn, old_ids, plan.groups[g].count, n_files, &err);
			lt_alloc_target(oldlib);
			if (rc != LT_OK)
				lt_report_write(&err, what);
			pfree(old_ids);
		}
		removed += plan.groups[g].count;
		added += n_files;
		lt_progress_done((int64) removed, (int64) rows);
		oldlib = lt_alloc_target(CurrentMemoryContext);
		lt_compact_files_free(files, n_files);
		lt_alloc_target(oldlib);
		elog(DEBUG1, "lt_fdw: compacting %s: group %zu of %zu done", opts.uri, g + 1, plan.n_groups);
	}
	if (plan.n_groups > 0)
		lt_xact_mark_compaction(xt);
	lt_progress_end();
	table_close(rel, AccessShareLock);
	values[0] = Int64GetDatum((int64) removed);
	values[1] = Int64GetDatum((int64) added);
	values[2] = Int64GetDatum((int64) rows);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(rtd, values, nulls)));
}

/* ---- lt_add_column, lt_drop_column, lt_rename_column ----------------------------------------------- */

typedef struct PendingSchema
{
	lt_schema_change c;
	uint64		version;		/* checked on */
	lt_commit_result res;		/* what the commit did */
} PendingSchema;


static lt_code
schema_change_commit(lt_dataset *ds, void *arg, lt_error *err)
{
	PendingSchema *ps = arg;

	return lt_commit_schema_change(ds, &ps->c, NULL, &ps->res, err);
}

static void
schema_commit(LtXactTable *xt, LtPendingOp *op)
{
	PendingSchema *ps = op->arg;
	lt_error	err;
	lt_code		rc;
	MemoryContext old = lt_alloc_target(xt->meta_cxt);

	rc = lt_xact_commit_on_version(xt, ps->version, schema_change_commit, ps, &err);
	lt_alloc_target(old);
	if (rc == LT_ECONFLICT)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lt_fdw: could not change the schema of foreign table \"%s\": a concurrent transaction conflicts",
						xt->relname),
				 errdetail("%s (dataset %s, read version " UINT64_FORMAT ").", err.msg, xt->uri, ps->version),
				 errhint("Retry the transaction.")));
	if (rc != LT_OK)
		lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", xt->uri, xt->relname));
}

/* The checks every schema change makes; the dataset at the version the statement reads (pinned). */
static LtDatasetEntry *
schema_change_begin(Oid relid, const char *fn, LtTableOptions *opts)
{
	char	   *relname;

	lt_check_lt_table(relid, fn);
	relname = get_rel_name(relid);
	lt_check_table_owner(relid);	/* as ALTER TABLE */
	lt_get_table_options(relid, opts);
	if (opts->version || opts->tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: foreign table \"%s\" is pinned to a %s and cannot change its dataset's schema", relname,
						opts->version ? "version" : "tag"),
				 errhint("Change the schema through a foreign table without \"version\" or \"tag\".")));
	lt_check_read_privilege(GetUserId(), relname, opts->uri);
	lt_check_write_privilege(GetUserId(), relname, opts->uri);
	return lt_dataset_acquire(relid, opts, true);
}

/* ROLLBACK of an added column's values: remove the data files written for it (best effort; else orphans). */
static void
schema_discard(LtXactTable *xt, LtPendingOp *op)
{
	PendingSchema *ps = op->arg;
	lt_store   *store;
	lt_error	err;
	MemoryContext old;

	if (ps->c.n_files == 0)
		return;
	old = lt_alloc_target(xt->meta_cxt);
	if (lt_open_store(xt->s3, xt->dir, &store, &err) == LT_OK)
	{
		for (size_t i = 0; i < ps->c.n_files; i++)
			lt_store_remove(store, psprintf("data/%s", ps->c.files[i].name), &err);
		lt_store_close(store);
	}
	lt_alloc_target(old);
}

static PendingSchema *schema_change_queue_impl(Oid relid, const LtTableOptions *opts, LtDatasetEntry *e,
											   PendingSchema *proto, bool check);

/* Check the change on the version read, and queue it for the commit (the state queued, in xt->meta_cxt). */
static PendingSchema *
schema_change_queue(Oid relid, const LtTableOptions *opts, LtDatasetEntry *e, PendingSchema *proto)
{
	return schema_change_queue_impl(relid, opts, e, proto, true);
}

/* The same for a change whose data files are written after it is queued (checked by the caller then). */
static PendingSchema *
schema_change_queue_unchecked(Oid relid, const LtTableOptions *opts, LtDatasetEntry *e, PendingSchema *proto)
{
	return schema_change_queue_impl(relid, opts, e, proto, false);
}

static PendingSchema *
schema_change_queue_impl(Oid relid, const LtTableOptions *opts, LtDatasetEntry *e, PendingSchema *proto, bool check)
{
	char	   *relname = get_rel_name(relid);
	LtXactTable *xt;
	PendingSchema *ps;
	lt_error	err;
	MemoryContext old;

	if (check && lt_schema_change_check(e->ds, &proto->c, &err) != LT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
				 errmsg("lt_fdw: cannot change the schema of foreign table \"%s\": %s", relname, err.msg),
				 errdetail("Dataset %s, version " UINT64_FORMAT ".", opts->uri, e->version)));
	xt = lt_xact_op_table(relname, opts, "change the schema of");
	old = MemoryContextSwitchTo(xt->meta_cxt);
	ps = palloc0(sizeof(PendingSchema));
	ps->version = e->version;
	ps->c.kind = proto->c.kind;
	ps->c.name = proto->c.name ? pstrdup(proto->c.name) : NULL;
	ps->c.new_name = proto->c.new_name ? pstrdup(proto->c.new_name) : NULL;
	ps->c.track = proto->c.track;
	if (proto->c.n_add > 0)
	{
		lt_new_field *f = palloc(sizeof(lt_new_field) * proto->c.n_add);

		for (int i = 0; i < proto->c.n_add; i++)
		{
			f[i] = proto->c.add[i];
			f[i].name = pstrdup(f[i].name);
			f[i].logical_type = pstrdup(f[i].logical_type);
		}
		ps->c.add = f;
		ps->c.n_add = proto->c.n_add;
	}
	MemoryContextSwitchTo(old);
	attach_op(xt, "changes the schema of", schema_commit, schema_discard, ps);
	return ps;
}

/* ALTER FOREIGN TABLE relid <what>: the catalog follows the dataset, in the same transaction. */
static void
alter_table(Oid relid, const char *what)
{
	char	   *sql = psprintf("ALTER FOREIGN TABLE %s %s",
							   quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
														  get_rel_name(relid)),
							   what);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "lt_fdw: SPI_connect failed");
	if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "lt_fdw: %s failed", sql);
	SPI_finish();
}

/* The column of relid named colname (its attnum, 0 if none) and the field it reads. */
static AttrNumber
column_field(Oid relid, const char *colname, char **field)
{
	AttrNumber	attnum = get_attnum(relid, colname);

	*field = attnum != InvalidAttrNumber ? lt_column_field_name(relid, attnum, colname) : pstrdup(colname);
	return attnum;
}

/* The field of the pinned version e named field; an error naming the dataset and the table if it has none */
static const lt_field *
existing_field(Oid relid, const LtTableOptions *opts, const LtDatasetEntry *e, const char *field)
{
	const lt_field *f = lt_schema_find_name(e->ds->schema, field);

	if (!f)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("lt_fdw: dataset %s has no field \"%s\"", opts->uri, field),
				 errdetail("Foreign table \"%s\", version " UINT64_FORMAT ".", get_rel_name(relid), e->version)));
	return f;
}

/* lt_stat_progress of a column written into every fragment: the fragments that have rows, and those rows */
static void
column_progress_totals(const lt_dataset *ds)
{
	int64		frags = 0,
				rows = 0;

	for (size_t i = 0; i < ds->n_fragments; i++)
		if (ds->fragments[i]->physical_rows > 0)
		{
			frags++;
			rows += (int64) ds->fragments[i]->physical_rows;
		}
	lt_progress_phase(LT_PROGRESS_WRITING, frags, rows);
}

/*
 * An added column's value in every row: per fragment of the version read, one data file holding the new
 * field with physical_rows copies of value (deleted rows too: Lance's add_columns writes a value per physical
 * row), written now and unreferenced until the commit adds them to the fragments (ROLLBACK removes them).
 */
static void
write_column_values(const LtTableOptions *opts, const char *relname, LtDatasetEntry *e, PendingSchema *ps,
					const char *colname, Oid typid, int32 typmod, Datum value)
{
	MemoryContext keep = GetMemoryChunkContext(ps);
	MemoryContext work = AllocSetContextCreate(CurrentMemoryContext, "lt_add_column values", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(work);
	MemoryContext oldlib = lt_alloc_target(work);
	const char *what = psprintf("dataset %s (foreign table \"%s\")", opts->uri, relname);
	const lt_dataset *ds = e->ds;
	lt_schema  *fields = NULL;
	lt_store   *store = NULL;
	lt_file_version fver;
	LtWriteConv *conv;
	char	   *why = NULL;
	lt_written_file *files;
	uint64	   *frag_ids;
	size_t		n = 0;
	lt_error	err;
	static const AttrNumber att_of_field[1] = {1};
	bool		isnull = false;
	uint64		rows_written = 0;

	if (lt_file_version_for_storage(ds->storage_version, &fver, &err) != LT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot add column \"%s\" with a value to foreign table \"%s\": lt_fdw does not write storage version %s",
						colname, relname, ds->storage_version),
				 errdetail("%s; dataset %s.", err.msg, opts->uri),
				 errhint("Add the column without a value (every row NULL).")));
	if (lt_schema_change_new_fields(ds, &ps->c, &fields, &err) != LT_OK)
		lt_report_write(&err, what);
	conv = lt_wconv_build(fields->fields[0], colname, typid, typmod, &why);
	if (!conv)
	{
		/* as INSERT writes such a column (varchar, bpchar, domains): the value's text, parsed as the field's type */
		Oid			typoutput;
		bool		varlena;
		char	   *why2 = NULL;

		getTypeOutputInfo(typid, &typoutput, &varlena);
		if ((conv = lt_wconv_build(fields->fields[0], colname, TEXTOID, -1, &why2)) != NULL)
			value = CStringGetTextDatum(OidOutputFunctionCall(typoutput, value));
	}
	if (!conv)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lt_fdw: a value of type %s cannot be written into new column \"%s\" (%s)",
						format_type_with_typemod(typid, typmod), colname, fields->fields[0]->logical_type),
				 errdetail("%s.", why ? why : "no conversion")));
	if (lt_open_store(opts->s3, opts->dataset_dir, &store, &err) != LT_OK)
		lt_report_write(&err, what);
	files = MemoryContextAllocZero(keep, sizeof(lt_written_file) * (ds->n_fragments + 1));
	frag_ids = MemoryContextAllocZero(keep, sizeof(uint64) * (ds->n_fragments + 1));
	/* ps->c names the files as they are finished, so that ROLLBACK (schema_discard) finds each one */
	ps->c.files = files;
	ps->c.file_fragments = frag_ids;
	column_progress_totals(ds);
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		uint64		rows = ds->fragments[i]->physical_rows;
		lt_file_writer *w = NULL;
		lt_array   *const *buffers;
		int64		since[1] = {0};
		uint64		done = 0;
		lt_code		rc;

		if (rows == 0)
			continue;
		if (lt_file_writer_open(store, "data/", 1, (const lt_field *const *) fields->fields, fver, &w, &err) != LT_OK)
			lt_report_write(&err, what);
		buffers = lt_file_writer_buffers(w);
		while (done < rows)
		{
			uint64		batch = Min(rows - done, (uint64) 8192);
			uint64		k;
			AttrNumber	converting = 0;

			CHECK_FOR_INTERRUPTS();
			for (k = 0; k < batch; k++)
				if (lt_wconv_append_row(&conv, buffers, att_of_field, 1, &value, &isnull, &converting, since,
										CREATE_BATCH_BYTES))
				{
					k++;
					break;
				}
			if (lt_file_writer_advance(w, (int64) k, &err) != LT_OK)
				lt_report_write(&err, what);
			since[0] = buffers[0]->data_len;
			done += k;
			rows_written += k;
			lt_progress_done((int64) n, (int64) rows_written);
		}
		lt_alloc_target(keep);
		rc = lt_file_writer_finish(w, &files[n], &err);
		lt_alloc_target(work);
		lt_file_writer_free(w);
		if (rc != LT_OK)
			lt_report_write(&err, what);
		frag_ids[n] = ds->fragments[i]->id;
		ps->c.n_files = ++n;
		lt_progress_done((int64) n, (int64) rows_written);
	}
	lt_store_close(store);
	lt_alloc_target(oldlib);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(work);
}

/* The new column's type must read the new field back (a varchar column cannot: a Lance string is text). */
static void
check_column_readable(LtDatasetEntry *e, const PendingSchema *ps, const char *colname, Oid typid, int32 typmod)
{
	lt_schema  *fields = NULL;
	lt_error	err;
	lt_code		rc;
	char	   *why = NULL;
	MemoryContext oldlib = lt_alloc_target(CurrentMemoryContext);

	rc = lt_schema_change_new_fields(e->ds, &ps->c, &fields, &err);
	lt_alloc_target(oldlib);
	if (rc != LT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_DEFINITION),
				 errmsg("lt_fdw: cannot add column \"%s\": %s", colname, err.msg)));
	if (!lt_conv_build(fields->fields[0], typid, typmod, &why))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lt_fdw: a column of type %s cannot read back Lance field \"%s\" (%s)",
						format_type_with_typemod(typid, typmod), colname, fields->fields[0]->logical_type),
				 errdetail("%s.", why ? why : "no conversion"),
				 errhint("Add it as %s.", lt_type_sql(fields->fields[0]))));
}

/* ALTER FOREIGN TABLE's spelling of a column option value. */
static const char *
assigned_option(const char *field)
{
	return psprintf("OPTIONS (is_assigned %s)", quote_literal_cstr(field));
}

Datum
lt_add_column(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname,
			   *typname,
			   *valtext = NULL,
			   *track = NULL;
	Oid			typid;
	int32		typmod;
	Datum		value = (Datum) 0;
	LtTableOptions opts;
	LtDatasetEntry *e;
	FieldList	fl = {0};
	PendingSchema ps = {{0}};
	char	   *flagcol = NULL;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_add_column needs a table, a column name and a type")));
	relid = PG_GETARG_OID(0);
	colname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	typname = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
		valtext = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (PG_NARGS() > 4 && !PG_ARGISNULL(4))
		track = text_to_cstring(PG_GETARG_TEXT_PP(4));
	check_field_name(colname);
	parseTypeString(typname, &typid, &typmod, false);
	if (track)
	{
		if (strcmp(track, "unassigned") == 0)
			ps.c.track = LT_SCHEMA_TRACK_UNASSIGNED;
		else if (strcmp(track, "assigned") == 0)
			ps.c.track = LT_SCHEMA_TRACK_ASSIGNED;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lt_fdw: track_assignment of a new column is 'unassigned' or 'assigned', not '%s'", track)));
	}
	e = schema_change_begin(relid, "lt_add_column", &opts);
	PG_TRY();
	{
		PendingSchema *queued;

		if (get_attnum(relid, colname) != InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("lt_fdw: foreign table \"%s\" already has a column \"%s\"", get_rel_name(relid), colname)));
		if (ps.c.track != LT_SCHEMA_TRACK_NONE)
		{
			/* the column that reads is_assigned(new field), named as IMPORT FOREIGN SCHEMA names it */
			flagcol = psprintf("%s_is_assigned", colname);
			if (get_attnum(relid, flagcol) != InvalidAttrNumber || strcmp(flagcol, colname) == 0)
				flagcol = NULL;
		}
		field_for_type(&fl, colname, typid, typmod, true, -1, colname, get_rel_name(relid));
		ps.c.kind = LT_SCHEMA_ADD;
		ps.c.add = fl.f;
		ps.c.n_add = fl.n;
		check_column_readable(e, &ps, colname, typid, typmod);
		if (valtext)
		{
			/* the type's own input with the column's typmod: a value that does not fit is its 22xxx error now */
			Oid			typinput,
						typioparam;

			getTypeInputInfo(typid, &typinput, &typioparam);
			value = OidInputFunctionCall(typinput, valtext, typioparam, typmod);
		}
		queued = schema_change_queue(relid, &opts, e, &ps);
		if (valtext)
		{
			lt_progress_begin(relid, LT_PROGRESS_ADD_COLUMN, LT_PROGRESS_WRITING, -1, -1);
			write_column_values(&opts, get_rel_name(relid), e, queued, colname, typid, typmod, value);
		}
	}
	PG_FINALLY();
	{
		if (valtext)
			lt_progress_end();
		lt_dataset_unpin(e);
	}
	PG_END_TRY();
	alter_table(relid, psprintf("ADD COLUMN %s %s", quote_identifier(colname), format_type_with_typemod(typid, typmod)));
	if (flagcol)
		alter_table(relid, psprintf("ADD COLUMN %s boolean %s", quote_identifier(flagcol), assigned_option(colname)));
	PG_RETURN_VOID();
}

/* Each column of relid that reads is_assigned(field): its name (the catalog follows a drop or a rename). */
static List *
assigned_columns(Oid relid, const char *field)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	td = RelationGetDescr(rel);
	List	   *out = NIL;

	for (int a = 1; a <= td->natts; a++)
	{
		char	   *f;

		if (TupleDescAttr(td, a - 1)->attisdropped)
			continue;
		if ((f = lt_column_assigned_field(relid, a)) != NULL && strcmp(f, field) == 0)
			out = lappend(out, pstrdup(NameStr(TupleDescAttr(td, a - 1)->attname)));
	}
	table_close(rel, AccessShareLock);
	return out;
}

Datum
lt_drop_column(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname,
			   *field;
	AttrNumber	attnum;
	LtTableOptions opts;
	LtDatasetEntry *e;
	PendingSchema ps = {{0}};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_drop_column needs a table and a column name")));
	relid = PG_GETARG_OID(0);
	colname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	e = schema_change_begin(relid, "lt_drop_column", &opts);
	attnum = column_field(relid, colname, &field);
	PG_TRY();
	{
		existing_field(relid, &opts, e, field);
		/* a tracked field's assignment state goes with it (lt_commit_schema_change), as do the columns reading it */
		ps.c.kind = LT_SCHEMA_DROP;
		ps.c.name = field;
		schema_change_queue(relid, &opts, e, &ps);
	}
	PG_FINALLY();
	{
		lt_dataset_unpin(e);
	}
	PG_END_TRY();
	if (attnum != InvalidAttrNumber)
		alter_table(relid, psprintf("DROP COLUMN %s", quote_identifier(colname)));
	{
		ListCell   *lc;

		foreach(lc, assigned_columns(relid, field))
			alter_table(relid, psprintf("DROP COLUMN %s", quote_identifier(lfirst(lc))));
	}
	PG_RETURN_VOID();
}

Datum
lt_rename_column(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname,
			   *newname,
			   *field;
	AttrNumber	attnum;
	LtTableOptions opts;
	LtDatasetEntry *e;
	PendingSchema ps = {{0}};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_rename_column needs a table, a column name and a new name")));
	relid = PG_GETARG_OID(0);
	colname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	newname = text_to_cstring(PG_GETARG_TEXT_PP(2));
	check_field_name(newname);
	e = schema_change_begin(relid, "lt_rename_column", &opts);
	attnum = column_field(relid, colname, &field);
	PG_TRY();
	{
		existing_field(relid, &opts, e, field);
		if (lt_schema_find_name(e->ds->schema, newname))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("lt_fdw: dataset %s already has a field \"%s\"", opts.uri, newname)));
		ps.c.kind = LT_SCHEMA_RENAME;
		ps.c.name = field;
		ps.c.new_name = newname;
		schema_change_queue(relid, &opts, e, &ps);
	}
	PG_FINALLY();
	{
		lt_dataset_unpin(e);
	}
	PG_END_TRY();
	if (attnum != InvalidAttrNumber)
	{
		if (strcmp(field, colname) != 0)
			alter_table(relid, psprintf("ALTER COLUMN %s OPTIONS (SET column_name %s)", quote_identifier(colname),
										quote_literal_cstr(newname)));
		else
			alter_table(relid, psprintf("RENAME COLUMN %s TO %s", quote_identifier(colname), quote_identifier(newname)));
	}
	{
		/* the assignment state is keyed by field id and stays; the columns reading it follow the name */
		ListCell   *lc;

		foreach(lc, assigned_columns(relid, field))
			alter_table(relid, psprintf("ALTER COLUMN %s OPTIONS (SET is_assigned %s)", quote_identifier(lfirst(lc)),
										quote_literal_cstr(newname)));
	}
	PG_RETURN_VOID();
}

/*
 * lt_alter_column_type: Lance's alter_columns data-type cast.  The column's values are read per fragment
 * (every physical row: a deleted one gets NULL, or for a non-nullable field a live row's value, since it is
 * never read), cast through the new type's input (a value that does not fit is its 22xxx error, nothing
 * committed), and written into one new data file per fragment holding the new field; the commit (a Merge)
 * gives the field a new id, drops files left with no field and the indexes on the old field.
 */
static void
write_cast_values(const LtTableOptions *opts, const char *relname, LtDatasetEntry *e, PendingSchema *ps,
				  const char *colname, Oid oldtyp, int32 oldmod, Oid newtyp, int32 newmod)
{
	MemoryContext keep = GetMemoryChunkContext(ps);
	MemoryContext work = AllocSetContextCreate(CurrentMemoryContext, "lt_alter_column_type", ALLOCSET_DEFAULT_SIZES);
	MemoryContext rowcxt = AllocSetContextCreate(work, "lt_alter_column_type row", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(work);
	MemoryContext oldlib = lt_alloc_target(work);
	const char *what = psprintf("dataset %s (foreign table \"%s\")", opts->uri, relname);
	lt_dataset *ds = e->ds;
	const lt_field *from = lt_schema_find_name(ds->schema, ps->c.name);
	lt_schema  *fields = NULL;
	lt_store   *store = NULL;
	lt_file_version fver;
	LtConv	   *rconv;
	LtWriteConv *wconv;
	char	   *why = NULL;
	Oid			outfn,
				infn,
				ioparam;
	bool		varlena,
				newbyval;
	int16		newlen;
	lt_written_file *files;
	uint64	   *frag_ids;
	size_t		n = 0;
	lt_error	err;
	static const AttrNumber att_of_field[1] = {1};
	uint64		rows_written = 0;

	if (lt_file_version_for_storage(ds->storage_version, &fver, &err) != LT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot change the type of column \"%s\" of foreign table \"%s\": lt_fdw does not write storage version %s",
						colname, relname, ds->storage_version),
				 errdetail("%s; dataset %s.", err.msg, opts->uri)));
	if (lt_schema_change_new_fields(ds, &ps->c, &fields, &err) != LT_OK)
		lt_report_write(&err, what);
	if (!(rconv = lt_conv_build(from, oldtyp, oldmod, &why)))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" cannot read field \"%s\" (%s)", colname, relname,
						from->name, from->logical_type),
				 errdetail("%s.", why ? why : "no conversion")));
	wconv = lt_wconv_build(fields->fields[0], colname, newtyp, newmod, &why);
	if (!wconv)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lt_fdw: a value of type %s cannot be written into field \"%s\" (%s)",
						format_type_with_typemod(newtyp, newmod), from->name, fields->fields[0]->logical_type),
				 errdetail("%s.", why ? why : "no conversion")));
	getTypeOutputInfo(oldtyp, &outfn, &varlena);
	getTypeInputInfo(newtyp, &infn, &ioparam);
	get_typlenbyval(newtyp, &newlen, &newbyval);
	if (lt_open_store(opts->s3, opts->dataset_dir, &store, &err) != LT_OK)
		lt_report_write(&err, what);
	files = MemoryContextAllocZero(keep, sizeof(lt_written_file) * (ds->n_fragments + 1));
	frag_ids = MemoryContextAllocZero(keep, sizeof(uint64) * (ds->n_fragments + 1));
	ps->c.files = files;
	ps->c.file_fragments = frag_ids;
	column_progress_totals(ds);
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const struct Lt__Pb__DataFragment *frag = ds->fragments[i];
		uint64		rows = frag->physical_rows;
		lt_file_writer *w = NULL;
		lt_array   *const *buffers;
		int64		since[1] = {0};
		uint64		next = 0;		/* the next physical offset to write */
		uint64		pending = 0;	/* deleted rows before the first live one (non-nullable) */
		int64		buffered = 0;
		Datum		last = (Datum) 0;
		bool		have_last = false;
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;
		lt_code		rc;

		if (rows == 0)
			continue;
		so.n_fields = 1;
		so.fields = &from;
		if (lt_fragment_scanner_open(ds, frag, &so, &sc, &err) != LT_OK)
			lt_report(&err, what);
		if (lt_file_writer_open(store, "data/", 1, (const lt_field *const *) fields->fields, fver, &w, &err) != LT_OK)
			lt_report_write(&err, what);
		buffers = lt_file_writer_buffers(w);
		for (;;)
		{
			uint64		upto;
			int64		k = 0;

			CHECK_FOR_INTERRUPTS();
			if (lt_fragment_scanner_next(sc, &b, &err) != LT_OK)
				lt_report(&err, what);
			upto = b ? 0 : rows;	/* at the end: the deleted rows after the last live one */
			for (;;)
			{
				uint64		at = b && k < b->length ? (uint32) b->row_addrs[k] : upto ? upto : UINT64_MAX;
				Datum		v = (Datum) 0;
				bool		isnull = true;
				AttrNumber	converting = 0;
				MemoryContext o2;

				if (!b && next >= rows)
					break;
				if (b && k >= b->length)
					break;
				o2 = MemoryContextSwitchTo(rowcxt);
				/* deleted rows before this one: never read, but a value per physical row is written */
				while (next < at && next < rows)
				{
					if (from->nullable)
						lt_wconv_append_row(&wconv, buffers, att_of_field, 1, &v, &isnull, &converting, since, 0);
					else if (have_last)
						lt_wconv_append_row(&wconv, buffers, att_of_field, 1, &last, &(bool) {false}, &converting,
											since, 0);
					else
					{
						pending++;
						next++;
						continue;
					}
					next++;
					buffered++;
				}
				MemoryContextSwitchTo(o2);
				if (!b || k >= b->length)
					break;
				/* a live row: its value through the new type's input (typmod applied: 22xxx when it does not fit) */
				o2 = MemoryContextSwitchTo(rowcxt);
				v = lt_conv_datum(rconv, b->columns[0], k, &isnull);
				if (!isnull)
					v = OidInputFunctionCall(infn, OidOutputFunctionCall(outfn, v), ioparam, newmod);
				MemoryContextSwitchTo(o2);
				if (!isnull && !have_last)
				{
					/* kept for the deleted rows of this fragment (rowcxt is reset per batch) */
					o2 = MemoryContextSwitchTo(work);
					last = datumCopy(v, newbyval, newlen);
					MemoryContextSwitchTo(o2);
					have_last = true;
				}
				for (; pending > 0; pending--, buffered++)
					lt_wconv_append_row(&wconv, buffers, att_of_field, 1, &last, &(bool) {false}, &converting, since, 0);
				lt_wconv_append_row(&wconv, buffers, att_of_field, 1, &v, &isnull, &converting, since, 0);
				next = at + 1;
				buffered++;
				k++;
			}
			if (buffered > 0)
			{
				if (lt_file_writer_advance(w, buffered, &err) != LT_OK)
					lt_report_write(&err, what);
				since[0] = buffers[0]->data_len;
				rows_written += (uint64) buffered;
				buffered = 0;
				lt_progress_done((int64) n, (int64) rows_written);
			}
			MemoryContextReset(rowcxt);
			if (!b)
				break;
		}
		lt_fragment_scanner_free(sc);
		if (pending > 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("lt_fdw: fragment " UINT64_FORMAT " of %s has no live row to cast", frag->id, what),
					 errhint("Run lt_compact first.")));
		lt_alloc_target(keep);
		rc = lt_file_writer_finish(w, &files[n], &err);
		lt_alloc_target(work);
		lt_file_writer_free(w);
		if (rc != LT_OK)
			lt_report_write(&err, what);
		frag_ids[n] = frag->id;
		ps->c.n_files = ++n;
		lt_progress_done((int64) n, (int64) rows_written);
	}
	lt_store_close(store);
	lt_alloc_target(oldlib);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(work);
}

Datum
lt_alter_column_type(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname,
			   *typname,
			   *field;
	Oid			typid,
				oldtyp;
	int32		typmod,
				oldmod;
	AttrNumber	attnum;
	LtTableOptions opts;
	LtDatasetEntry *e;
	FieldList	fl = {0};
	PendingSchema ps = {{0}};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_alter_column_type needs a table, a column name and a type")));
	relid = PG_GETARG_OID(0);
	colname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	typname = text_to_cstring(PG_GETARG_TEXT_PP(2));
	parseTypeString(typname, &typid, &typmod, false);
	e = schema_change_begin(relid, "lt_alter_column_type", &opts);
	attnum = column_field(relid, colname, &field);
	PG_TRY();
	{
		const lt_field *f;
		PendingSchema *queued;
		lt_error	err;

		if (attnum == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_fdw: foreign table \"%s\" has no column \"%s\"", get_rel_name(relid), colname)));
		f = existing_field(relid, &opts, e, field);
		if (lt_assign_is_tracked(e->ds, f->id, NULL))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: cannot change the type of field \"%s\" of dataset %s: its assignment is tracked", field,
							opts.uri),
					 errdetail("The cast gives the field a new id, which the assignment state is keyed by.")));
		get_atttypetypmodcoll(relid, attnum, &oldtyp, &oldmod, &(Oid) {0});
		field_for_type(&fl, field, typid, typmod, f->nullable, -1, colname, get_rel_name(relid));
		if (fl.n != 1)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: lt_alter_column_type casts to scalar types, not %s", format_type_be(typid))));
		ps.c.kind = LT_SCHEMA_ALTER_TYPE;
		ps.c.name = field;
		ps.c.add = fl.f;
		ps.c.n_add = 1;
		/* the family and field checks before anything is written (the commit checks the files too) */
		{
			lt_schema_change probe = ps.c;
			lt_code		rc;

			probe.kind = LT_SCHEMA_ALTER_TYPE;
			rc = lt_schema_change_check(e->ds, &probe, &err);	/* no files yet: not checked */
			if (rc != LT_OK)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("lt_fdw: cannot change the type of column \"%s\" of foreign table \"%s\": %s", colname,
								get_rel_name(relid), err.msg)));
		}
		check_column_readable(e, &ps, colname, typid, typmod);
		queued = schema_change_queue_unchecked(relid, &opts, e, &ps);
		lt_progress_begin(relid, LT_PROGRESS_ALTER_TYPE, LT_PROGRESS_WRITING, -1, -1);
		write_cast_values(&opts, get_rel_name(relid), e, queued, colname, oldtyp, oldmod, typid, typmod);
		lt_progress_end();
		if (lt_schema_change_check(e->ds, &queued->c, &err) != LT_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("lt_fdw: the cast values of column \"%s\" do not match dataset %s: %s", colname, opts.uri,
							err.msg)));
	}
	PG_FINALLY();
	{
		lt_dataset_unpin(e);
	}
	PG_END_TRY();
	alter_table(relid, psprintf("ALTER COLUMN %s TYPE %s", quote_identifier(colname), format_type_with_typemod(typid, typmod)));
	PG_RETURN_VOID();
}

/* ---- tags and restore --------------------------------------------------------------------------- */

typedef enum VersionOpKind
{
	VOP_CREATE_TAG,
	VOP_DELETE_TAG,
	VOP_RESTORE,
	VOP_DROP_INDEX
} VersionOpKind;

typedef struct PendingVersionOp
{
	VersionOpKind kind;
	char	   *tag;			/* the tag, or the index dropped */
	uint64		version;		/* the tag's or the one restored */
	uint64		read_version;	/* restore: the newest version the call saw */
} PendingVersionOp;

static void
version_op_commit(LtXactTable *xt, LtPendingOp *op)
{
	PendingVersionOp *vo = op->arg;
	lt_store   *store = NULL;
	lt_dataset *ds = NULL;
	lt_commit_result res;
	lt_error	err;
	lt_code		rc;
	MemoryContext old = lt_alloc_target(xt->meta_cxt);

	rc = lt_open_store(xt->s3, xt->dir, &store, &err);
	if (rc == LT_OK)
		switch (vo->kind)
		{
			case VOP_CREATE_TAG:
				rc = lt_tag_create(store, "", vo->tag, vo->version, &err);
				break;
			case VOP_DELETE_TAG:
				rc = lt_tag_delete(store, "", vo->tag, &err);
				break;
			case VOP_RESTORE:
			case VOP_DROP_INDEX:
				{
					lt_version_spec spec = {vo->read_version, NULL};

					rc = lt_dataset_open(store, "", &spec, &ds, &err);
					lt_xact_arm_crash(true);
					if (rc == LT_OK)
						rc = vo->kind == VOP_RESTORE ? lt_commit_restore(ds, vo->version, NULL, &res, &err)
							: lt_commit_drop_index(ds, vo->tag, NULL, &res, &err);
					lt_xact_arm_crash(false);
					break;
				}
		}
	if (ds)
		lt_dataset_close(ds);
	if (store)
		lt_store_close(store);
	lt_alloc_target(old);
	if (rc == LT_ECONFLICT)
		ereport(ERROR,
				(errcode(vo->kind == VOP_CREATE_TAG ? ERRCODE_DUPLICATE_OBJECT : ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lt_fdw: could not %s foreign table \"%s\": %s",
						vo->kind == VOP_RESTORE ? "restore" : vo->kind == VOP_DROP_INDEX ? "drop an index of" : "tag",
						xt->relname, err.msg),
				 errdetail("Dataset %s.", xt->uri)));
	if (rc == LT_ENOTFOUND)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("lt_fdw: %s", err.msg),
				 errdetail("Foreign table \"%s\", dataset %s.", xt->relname, xt->uri)));
	if (rc != LT_OK)
		lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", xt->uri, xt->relname));
}

/* Queue a tag or restore for the commit; returns the version the statement reads. */
static uint64
version_op_queue(Oid relid, const char *fn, PendingVersionOp *proto, const char *doing)
{
	LtTableOptions opts;
	LtDatasetEntry *e;
	LtXactTable *xt;
	PendingVersionOp *vo;
	MemoryContext old;
	uint64		read;

	e = schema_change_begin(relid, fn, &opts);	/* the same checks: owner, not pinned, both privileges */
	read = e->version;
	if (proto->kind == VOP_CREATE_TAG || proto->kind == VOP_DELETE_TAG)
	{
		/* say now what the commit would find (it checks again: a concurrent tag loses there) */
		uint64_t	v;
		lt_error	err;
		lt_code		rc;
		MemoryContext oldlib = lt_alloc_target(CurrentMemoryContext);

		rc = lt_dataset_tag_version(e->store, e->ds->prefix, proto->tag, &v, &err);
		lt_alloc_target(oldlib);
		if (rc == LT_OK && proto->kind == VOP_CREATE_TAG)
		{
			lt_dataset_unpin(e);
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("lt_fdw: tag \"%s\" of foreign table \"%s\" already exists", proto->tag, get_rel_name(relid)),
					 errdetail("It names version " UINT64_FORMAT ".", (uint64) v)));
		}
		if (rc == LT_ENOTFOUND && proto->kind == VOP_DELETE_TAG)
		{
			lt_dataset_unpin(e);
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("lt_fdw: foreign table \"%s\" has no tag \"%s\"", get_rel_name(relid), proto->tag)));
		}
		if (rc != LT_OK && rc != LT_ENOTFOUND)
		{
			lt_dataset_unpin(e);
			lt_report(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, get_rel_name(relid)));
		}
	}
	lt_dataset_unpin(e);
	if (proto->kind == VOP_RESTORE && proto->version >= read)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: version " UINT64_FORMAT " is not older than the latest, " UINT64_FORMAT,
						proto->version, read)));
	if (proto->kind == VOP_CREATE_TAG && proto->version > read)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: version " UINT64_FORMAT " does not exist yet (the latest is " UINT64_FORMAT ")",
						proto->version, read)));
	xt = lt_xact_op_table(get_rel_name(relid), &opts, doing);
	old = MemoryContextSwitchTo(xt->meta_cxt);
	vo = palloc0(sizeof(PendingVersionOp));
	*vo = *proto;
	vo->tag = proto->tag ? pstrdup(proto->tag) : NULL;
	vo->read_version = read;
	if (vo->kind == VOP_CREATE_TAG && vo->version == 0)
		vo->version = read;
	MemoryContextSwitchTo(old);
	attach_op(xt, proto->kind == VOP_RESTORE ? "restores" : proto->kind == VOP_DROP_INDEX ? "drops an index of" : "tags",
			  version_op_commit, discard_nothing, vo);
	return vo->kind == VOP_CREATE_TAG ? vo->version : read;
}

static char *
tag_arg(FunctionCallInfo fcinfo, int i)
{
	char	   *tag = text_to_cstring(PG_GETARG_TEXT_PP(i));

	if (tag[0] == '\0' || strlen(tag) > 255 || strcmp(tag, ".") == 0 || strcmp(tag, "..") == 0 ||
		strpbrk(tag, "/\\") != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("lt_fdw: invalid tag name \"%s\"", tag),
				 errhint("A tag is 1 to 255 bytes without '/' or '\\'.")));
	return tag;
}

Datum
lt_create_tag(PG_FUNCTION_ARGS)
{
	PendingVersionOp vo = {VOP_CREATE_TAG};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_create_tag needs a table and a tag")));
	vo.tag = tag_arg(fcinfo, 1);
	if (!PG_ARGISNULL(2))
	{
		if (PG_GETARG_INT64(2) < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lt_fdw: a version is a positive number")));
		vo.version = (uint64) PG_GETARG_INT64(2);
	}
	PG_RETURN_INT64((int64) version_op_queue(PG_GETARG_OID(0), "lt_create_tag", &vo, "tag"));
}

Datum
lt_delete_tag(PG_FUNCTION_ARGS)
{
	PendingVersionOp vo = {VOP_DELETE_TAG};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_delete_tag needs a table and a tag")));
	vo.tag = tag_arg(fcinfo, 1);
	version_op_queue(PG_GETARG_OID(0), "lt_delete_tag", &vo, "tag");
	PG_RETURN_VOID();
}

Datum
lt_restore(PG_FUNCTION_ARGS)
{
	PendingVersionOp vo = {VOP_RESTORE};
	uint64		read;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_restore needs a table and a version")));
	if (PG_GETARG_INT64(1) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: a version is a positive number")));
	vo.version = (uint64) PG_GETARG_INT64(1);
	read = version_op_queue(PG_GETARG_OID(0), "lt_restore", &vo, "restore");
	PG_RETURN_INT64((int64) read + 1);
}

Datum
lt_tags_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	LtTableOptions opts;
	lt_store   *store = NULL;
	char	  **names = NULL;
	uint64_t   *versions = NULL;
	size_t		n = 0;
	lt_error	err;
	lt_code		rc;
	MemoryContext oldlib;

	lt_check_lt_table(relid, "lt_tags");
	lt_check_table_select(relid);
	lt_get_table_options(relid, &opts);
	lt_check_read_privilege(GetUserId(), get_rel_name(relid), opts.uri);
	InitMaterializedSRF(fcinfo, 0);
	oldlib = lt_alloc_target(CurrentMemoryContext);
	rc = lt_open_store(opts.s3, opts.dataset_dir, &store, &err);
	if (rc == LT_OK)
		rc = lt_tags(store, "", &names, &versions, &n, &err);
	if (store)
		lt_store_close(store);
	lt_alloc_target(oldlib);
	if (rc != LT_OK)
		lt_report(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, get_rel_name(relid)));
	for (size_t i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {0};

		values[0] = CStringGetTextDatum(names[i]);
		values[1] = Int64GetDatum((int64) versions[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

/* ---- index maintenance --------------------------------------------------------------------------- */

Datum
lt_drop_index(PG_FUNCTION_ARGS)
{
	PendingVersionOp vo = {VOP_DROP_INDEX};
	Oid			relid;
	LtTableOptions opts;
	LtDatasetEntry *e;
	lt_index_list *l = NULL;
	bool		found;
	lt_error	err;
	lt_code		rc;
	MemoryContext oldlib;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_drop_index needs a table and an index name")));
	relid = PG_GETARG_OID(0);
	vo.tag = text_to_cstring(PG_GETARG_TEXT_PP(1));
	e = schema_change_begin(relid, "lt_drop_index", &opts);
	oldlib = lt_alloc_target(CurrentMemoryContext);
	rc = lt_dataset_indexes(e->ds, &l, &err);
	lt_alloc_target(oldlib);
	found = rc == LT_OK && lt_index_list_find(l, vo.tag) != NULL;
	lt_dataset_unpin(e);
	if (rc != LT_OK)
		lt_report(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, get_rel_name(relid)));
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("lt_fdw: foreign table \"%s\" has no index \"%s\"", get_rel_name(relid), vo.tag)));
	version_op_queue(relid, "lt_drop_index", &vo, "drop an index of");
	PG_RETURN_VOID();
}

/*
 * Bring the rows appended since an index was built into it, as Lance's optimize_indices does for scalar
 * indexes: each scalar index (or the one named) that leaves fragments unindexed gets one new segment under
 * its name, its old segments' entries (read from their files) merged with the unindexed fragments' rows
 * (lt_create_index with lt_index_build_for_optimize on: index_build.c passes the old index as the build's
 * merge), committed as lt_create_index's replace: one CreateIndex at COMMIT, the old segments removed.
 */
Datum
lt_optimize_indexes(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *only = NULL;
	LtTableOptions opts;
	LtDatasetEntry *e;
	lt_index_list *l = NULL;
	lt_error	err;
	lt_code		rc;
	MemoryContext oldlib;
	List	   *todo = NIL;		/* of (column, kind, name) string triples */
	ListCell   *lc;
	int			n = 0;
	TupleDesc	td;
	Relation	rel;
	char	   *sql;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_optimize_indexes needs a table")));
	relid = PG_GETARG_OID(0);
	if (!PG_ARGISNULL(1))
		only = text_to_cstring(PG_GETARG_TEXT_PP(1));
	e = schema_change_begin(relid, "lt_optimize_indexes", &opts);
	oldlib = lt_alloc_target(CurrentMemoryContext);
	rc = lt_dataset_indexes(e->ds, &l, &err);
	lt_alloc_target(oldlib);
	if (rc != LT_OK)
	{
		lt_dataset_unpin(e);
		lt_report(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, get_rel_name(relid)));
	}
	rel = table_open(relid, AccessShareLock);
	td = RelationGetDescr(rel);
	for (size_t i = 0; i < l->n; i++)
	{
		const lt_index *ix = &l->items[i];
		const char *column = NULL;

		if (only && strcmp(ix->name, only) != 0)
			continue;
		if (ix->n_unindexed == 0 || !ix->field || ix->unusable)
			continue;
		if (ix->kind != LT_INDEX_BTREE && ix->kind != LT_INDEX_BITMAP && ix->kind != LT_INDEX_LABEL_LIST &&
			ix->kind != LT_INDEX_ZONEMAP)
			continue;			/* vector and other kinds: lt_fdw builds none */
		for (int a = 0; a < td->natts && !column; a++)
		{
			Form_pg_attribute att = TupleDescAttr(td, a);

			if (!att->attisdropped &&
				strcmp(lt_column_field_name(relid, att->attnum, NameStr(att->attname)), ix->field->name) == 0)
				column = pstrdup(NameStr(att->attname));
		}
		if (!column)
			continue;			/* no column of this table reads the field */
		todo = lappend(todo, list_make3(makeString((char *) column), makeString(pstrdup(lt_index_kind_name(ix->kind))),
										makeString(pstrdup(ix->name))));
	}
	table_close(rel, AccessShareLock);
	if (only && lt_index_list_find(l, only) == NULL)
	{
		lt_dataset_unpin(e);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("lt_fdw: foreign table \"%s\" has no index \"%s\"", get_rel_name(relid), only)));
	}
	lt_dataset_unpin(e);
	if (todo == NIL)
		PG_RETURN_INT32(0);
	/* lt_create_index of this extension's schema, whatever the search_path says */
	sql = psprintf("SELECT index_name FROM %s.lt_create_index($1, $2, $3, $4)",
				   quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid))));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "lt_fdw: SPI_connect failed");
	lt_index_build_for_optimize(true);
	PG_TRY();
	{
		foreach(lc, todo)
		{
			List	   *t = lfirst(lc);
			Oid			argtypes[4] = {REGCLASSOID, TEXTOID, TEXTOID, TEXTOID};
			Datum		args[4];

			args[0] = ObjectIdGetDatum(relid);
			args[1] = CStringGetTextDatum(strVal(linitial(t)));
			args[2] = CStringGetTextDatum(strVal(lsecond(t)));
			args[3] = CStringGetTextDatum(strVal(lthird(t)));
			if (SPI_execute_with_args(sql, 4, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
				elog(ERROR, "lt_fdw: rebuilding index \"%s\" failed", strVal(lthird(t)));
			n++;
		}
	}
	PG_FINALLY();
	{
		lt_index_build_for_optimize(false);
	}
	PG_END_TRY();
	SPI_finish();
	PG_RETURN_INT32(n);
}

/* ---- lt_table_stats ---------------------------------------------------------------------------- */

/*
 * What a user (or pg_cron) needs to decide when to compact or optimize: the version read, its fragments and
 * how many of them Lance's default compaction plan would rewrite, live and deleted rows, bytes of data files
 * (in all, and per field from the files' column metadata), committed versions, indexes and the rows they do
 * not cover (in all, and per index).
 */
Datum
lt_table_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	LtTableOptions opts;
	LtDatasetEntry *e;
	lt_dataset *ds;
	lt_compact_options co = {0};
	lt_compact_plan plan = {0};
	lt_index_list *l = NULL;
	uint64	   *versions = NULL;
	size_t		n_versions = 0;
	lt_naming	naming;
	uint64		live = 0,
				deleted = 0,
				bytes = 0,
				unindexed_rows = 0;
	int64		n_indexes = 0;
	lt_error	err;
	lt_code		rc;
	MemoryContext oldlib;
	TupleDesc	rtd;
	Datum		values[11];
	bool		nulls[11] = {0};
	uint64	   *field_bytes;
	bool		complete = true;
	StringInfoData cols,
				ixs;

	if (get_call_result_type(fcinfo, NULL, &rtd) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "lt_table_stats must return a record");
	lt_check_lt_table(relid, "lt_table_stats");
	lt_check_table_select(relid);
	lt_get_table_options(relid, &opts);
	lt_check_read_privilege(GetUserId(), get_rel_name(relid), opts.uri);
	e = lt_dataset_acquire(relid, &opts, true);
	ds = e->ds;
	co.materialize_deletions = true;
	co.materialize_deletions_threshold = 0.1;
	oldlib = lt_alloc_target(CurrentMemoryContext);
	rc = lt_compact_plan_make(ds, &co, &plan, &err);
	if (rc == LT_OK)
		rc = lt_dataset_indexes(ds, &l, &err);
	if (rc == LT_OK)
		rc = lt_dataset_versions(e->store, ds->prefix, (uint64_t **) &versions, &n_versions, &naming, &err);
	field_bytes = palloc0(sizeof(uint64) * Max(ds->schema->n_fields, 1));
	if (rc == LT_OK)
		rc = lt_dataset_column_sizes(ds, field_bytes, &complete, &err);
	lt_alloc_target(oldlib);
	if (rc != LT_OK)
	{
		lt_dataset_unpin(e);
		lt_report(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, get_rel_name(relid)));
	}
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = ds->fragments[i];

		live += lt_fragment_live_rows(f);
		deleted += f->physical_rows - lt_fragment_live_rows(f);
		for (size_t k = 0; k < f->n_files; k++)
			bytes += f->files[k]->file_size_bytes;
	}
	initStringInfo(&ixs);
	appendStringInfoChar(&ixs, '{');
	for (size_t i = 0; i < l->n; i++)
	{
		uint64		these = 0;

		n_indexes++;
		for (size_t k = 0; k < l->items[i].n_unindexed; k++)
		{
			const Lt__Pb__DataFragment *f = lt_dataset_fragment(ds, l->items[i].unindexed[k]);

			if (f)
				these += lt_fragment_live_rows(f);
		}
		unindexed_rows += these;
		if (i > 0)
			appendStringInfoString(&ixs, ", ");
		escape_json(&ixs, l->items[i].name);
		appendStringInfo(&ixs, ": " UINT64_FORMAT, these);
	}
	appendStringInfoChar(&ixs, '}');
	/* by field name: the dataset's, which a column_name option may map to another column name */
	initStringInfo(&cols);
	appendStringInfoChar(&cols, '{');
	for (int i = 0; i < ds->schema->n_fields; i++)
	{
		if (i > 0)
			appendStringInfoString(&cols, ", ");
		escape_json(&cols, ds->schema->fields[i]->name);
		appendStringInfo(&cols, ": " UINT64_FORMAT, field_bytes[i]);
	}
	appendStringInfoChar(&cols, '}');
	values[0] = Int64GetDatum((int64) e->version);
	values[1] = Int64GetDatum((int64) ds->n_fragments);
	values[2] = Int64GetDatum((int64) plan.n_fragments);
	values[3] = Int64GetDatum((int64) live);
	values[4] = Int64GetDatum((int64) deleted);
	values[5] = Int64GetDatum((int64) bytes);
	values[6] = Int64GetDatum((int64) n_versions);
	values[7] = Int64GetDatum(n_indexes);
	values[8] = Int64GetDatum((int64) unindexed_rows);
	/* v1 (legacy) files have no column metadata to read sizes from */
	values[9] = DirectFunctionCall1(jsonb_in, CStringGetDatum(cols.data));
	nulls[9] = !complete;
	values[10] = DirectFunctionCall1(jsonb_in, CStringGetDatum(ixs.data));
	lt_dataset_unpin(e);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(rtd, values, nulls)));
}
