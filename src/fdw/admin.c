/*
 * admin.c — the dataset administration functions: lt_versions, lt_fragments, lt_cleanup (and
 * lt_cleanup_files, the same with one row per file removed).
 *
 * lt_versions and lt_fragments read manifests only (no data file is opened); lt_cleanup removes
 * the files of old versions and of abandoned writes by the Lance library's own rules
 * (lt_cleanup.h), so that the library keeps opening the dataset and agrees on what is gone.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "dataset.h"
#include "option.h"
#include "xact.h"
#include "util/lt_alloc.h"
#include "assignment/lt_assignment.h"
#include "table/lt_cleanup.h"
#include "table/lt_deletion.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

PG_FUNCTION_INFO_V1(lt_versions);
PG_FUNCTION_INFO_V1(lt_fragments);
PG_FUNCTION_INFO_V1(lt_cleanup_sql);
PG_FUNCTION_INFO_V1(lt_cleanup_files);

/* Seconds from the Unix epoch to PostgreSQL's (2000-01-01). */
#define PG_EPOCH_SECS ((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY)

static char *
what_of(Oid relid, const LtTableOptions *opts)
{
	return psprintf("dataset %s (foreign table \"%s\")", opts->uri, get_rel_name(relid));
}

/* The foreign table's options, after checking it is an lt_fdw table the user may read. */
static void
admin_table(Oid relid, LtTableOptions *opts, bool write, const char *fn)
{
	char	   *relname;

	lt_check_lt_table(relid, fn);
	/* as PostgreSQL's own: reading metadata needs SELECT, maintenance the table's owner (VACUUM) */
	if (write)
		lt_check_table_owner(relid);
	else
		lt_check_table_select(relid);
	relname = get_rel_name(relid);
	lt_get_table_options(relid, opts);
	if (write)
		lt_check_write_privilege(GetUserId(), relname, opts->uri);
	else
		lt_check_read_privilege(GetUserId(), relname, opts->uri);
}

static TimestampTz
manifest_time(const Lt__Pb__Manifest *m, bool *isnull)
{
	*isnull = m->timestamp == NULL;
	if (!m->timestamp)
		return 0;
	return (TimestampTz) ((m->timestamp->seconds - PG_EPOCH_SECS) * USECS_PER_SEC + m->timestamp->nanos / 1000);
}

/* The operation of a version: the manifest's inline transaction, else its transaction file. */
static const char *
version_operation(const lt_dataset *ds)
{
	const char *tf = ds->manifest->transaction_file;
	char	   *rel;
	char	   *path;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	lt_error	err;
	const char *op = NULL;

	if (ds->transaction)
		return lt_transaction_op_name(ds->transaction);
	if (tf == NULL || tf[0] == '\0' || strchr(tf, '/'))
		return NULL;
	rel = lt_asprintf("_transactions/%s", tf);
	path = rel ? lt_dataset_path(ds, rel) : NULL;
	lt_free(rel);
	if (path && lt_store_read_all(ds->store, path, 64 << 20, &buf, &len, &err) == LT_OK)
	{
		Lt__Pb__Transaction *t = lt__pb__transaction__unpack(NULL, (size_t) len, buf);

		if (t)
		{
			op = pstrdup(lt_transaction_op_name(t));
			lt__pb__transaction__free_unpacked(t, NULL);
		}
	}
	lt_free(buf);
	lt_free(path);
	return op;					/* NULL: the transaction file is gone (cleaned up) or unreadable */
}

/* ---- lt_versions(regclass) ------------------------------------------------------------------ */

Datum
lt_versions(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LtTableOptions opts;
	LtDatasetEntry *e;
	MemoryContext lib = AllocSetContextCreate(CurrentMemoryContext, "lt_versions", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	uint64_t   *versions = NULL;
	size_t		n = 0;
	lt_naming	naming;
	lt_error	err;
	lt_code		rc;
	char	   *what;

	admin_table(relid, &opts, false, "lt_versions");
	what = what_of(relid, &opts);
	InitMaterializedSRF(fcinfo, 0);
	e = lt_dataset_acquire(relid, &opts, false);
	old = lt_alloc_target(lib);
	rc = lt_dataset_versions(e->store, e->ds->prefix, &versions, &n, &naming, &err);	/* a branch: its own line */
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, what);
	for (size_t i = 0; i < n; i++)
	{
		lt_version_spec spec = {versions[i], NULL, opts.branch};
		lt_dataset *ds = NULL;
		Datum		values[6];
		bool		nulls[6] = {false};
		const char *op;

		CHECK_FOR_INTERRUPTS();	/* thousands of manifests: a cancel must not wait for them all */
		old = lt_alloc_target(lib);
		rc = lt_dataset_open(e->store, "", &spec, &ds, &err);
		lt_alloc_target(old);
		if (rc == LT_ENOTFOUND)
			continue;			/* removed meanwhile (a concurrent cleanup) */
		if (rc != LT_OK)
			lt_report(&err, what);
		values[0] = Int64GetDatum((int64) ds->version);
		values[1] = TimestampTzGetDatum(manifest_time(ds->manifest, &nulls[1]));
		old = lt_alloc_target(lib);
		op = version_operation(ds);
		lt_alloc_target(old);
		if (op)
			values[2] = CStringGetTextDatum(op);
		else
			nulls[2] = true;
		values[3] = Int64GetDatum((int64) lt_dataset_count_rows(ds));
		/* where the table is: its identifier in the server's namespace (if any) and the location */
		if (opts.identifier)
			values[4] = CStringGetTextDatum(opts.identifier);
		else
			nulls[4] = true;
		values[5] = CStringGetTextDatum(opts.uri);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		old = lt_alloc_target(lib);
		lt_dataset_close(ds);
		lt_alloc_target(old);
	}
	MemoryContextDelete(lib);
	return (Datum) 0;
}

/* ---- lt_fragments(regclass) ----------------------------------------------------------------- */

Datum
lt_fragments(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LtTableOptions opts;
	const lt_dataset *ds;

	admin_table(relid, &opts, false, "lt_fragments");
	InitMaterializedSRF(fcinfo, 0);
	ds = lt_dataset_acquire(relid, &opts, false)->ds;
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = ds->fragments[i];
		Datum		values[5];
		bool		nulls[5] = {false};
		Datum	   *files = palloc(sizeof(Datum) * Max(f->n_files, 1));
		uint64		deleted = f->deletion_file ? f->deletion_file->num_deleted_rows : 0;

		for (size_t k = 0; k < ds->n_dv_overrides; k++)
			if (ds->dv_overrides[k].fragment_id == f->id)
				deleted = ds->dv_overrides[k].n;	/* this transaction's deletes, not written yet */
		for (size_t j = 0; j < f->n_files; j++)
			files[j] = CStringGetTextDatum(psprintf("data/%s", f->files[j]->path ? f->files[j]->path : ""));
		values[0] = Int64GetDatum((int64) f->id);
		values[1] = Int64GetDatum((int64) f->physical_rows);
		values[2] = Int64GetDatum((int64) deleted);
		values[3] = PointerGetDatum(construct_array(files, (int) f->n_files, TEXTOID, -1, false, TYPALIGN_INT));
		if (f->deletion_file)
		{
			const Lt__Pb__DeletionFile *d = f->deletion_file;
			MemoryContext old = lt_alloc_target(CurrentMemoryContext);
			char	   *p = lt_deletion_path(f->id, d->read_version, d->id,
											 d->file_type == LT__PB__DELETION_FILE__FILE_TYPE__BITMAP
											 ? LT_DELETION_BITMAP : LT_DELETION_ARROW);

			lt_alloc_target(old);
			values[4] = CStringGetTextDatum(p ? p : "");
		}
		else
			nulls[4] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* ---- lt_cleanup(regclass, interval, boolean, boolean) ------------------------------------- */

/*
 * The cleanup of lt_cleanup and lt_cleanup_files (fn): the table's checks, the policy from the
 * arguments, the library's run; *res in lib (the caller deletes it).
 */
static void
run_cleanup(FunctionCallInfo fcinfo, const char *fn, MemoryContext lib, lt_cleanup_result *res)
{
	Oid			relid = PG_GETARG_OID(0);
	Interval   *older_than = PG_GETARG_INTERVAL_P(1);
	bool		delete_unverified = PG_GETARG_BOOL(2);
	bool		dry_run = PG_GETARG_BOOL(3);
	LtTableOptions opts;
	LtDatasetEntry *e;
	lt_cleanup_policy policy = {0};
	MemoryContext old;
	lt_error	err;
	lt_code		rc;
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz cutoff;
	char	   *what;

	admin_table(relid, &opts, true, fn);
	what = what_of(relid, &opts);
	if (older_than->month < 0 || older_than->day < 0 || older_than->time < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: older_than must not be negative")));
	if (lt_xact_view(opts.dataset_dir, false) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: cannot clean up foreign table \"%s\" in a transaction that writes its dataset",
						get_rel_name(relid)),
				 errdetail("Dataset %s has changes of this transaction not committed yet.", opts.uri),
				 errhint("Commit the transaction first.")));
	cutoff = DatumGetTimestampTz(DirectFunctionCall2(timestamptz_mi_interval, TimestampTzGetDatum(now),
													 PointerGetDatum(older_than)));
	policy.before_ms = (cutoff / 1000) + PG_EPOCH_SECS * 1000;
	policy.now_ms = (now / 1000) + PG_EPOCH_SECS * 1000;
	policy.delete_unverified = delete_unverified;
	policy.dry_run = dry_run;
	policy.error_if_tagged_old_versions = true;	/* as the Lance library's cleanup */
	/* field assignment state: roots and bitmaps go when no kept version names them, as data files do */
	policy.extra_dir = LT_ASSIGN_DIR_NAME;
	policy.extra_refs = lt_assign_referenced_files;

	e = lt_dataset_acquire(relid, &opts, false);
	old = lt_alloc_target(lib);
	rc = lt_cleanup(e->store, "", &policy, res, &err);
	lt_alloc_target(old);
	if (rc == LT_EINVALID)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: cannot clean up foreign table \"%s\": %s", get_rel_name(relid), err.msg),
				 errdetail("Nothing was removed from dataset %s.", opts.uri),
				 errhint("Delete the tags, or pass an older_than that keeps the tagged versions.")));
	if (rc != LT_OK)
		lt_report_write(&err, what);
}

Datum
lt_cleanup_sql(PG_FUNCTION_ARGS)
{
	TupleDesc	td;
	Datum		values[4];
	bool		nulls[4] = {false};
	Datum	   *removed;
	lt_cleanup_result res;
	MemoryContext lib;

	if (get_call_result_type(fcinfo, NULL, &td) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "lt_fdw: lt_cleanup must return a record");
	lib = AllocSetContextCreate(CurrentMemoryContext, "lt_cleanup", ALLOCSET_DEFAULT_SIZES);
	run_cleanup(fcinfo, "lt_cleanup", lib, &res);

	removed = palloc(sizeof(Datum) * Max(res.n_removed, 1));
	for (size_t i = 0; i < res.n_removed; i++)
		removed[i] = CStringGetTextDatum(res.removed[i]);
	values[0] = Int64GetDatum((int64) res.old_versions);
	/* every file removed, the old manifests too: the count of the list beside it */
	values[1] = Int64GetDatum((int64) (res.old_versions + res.files_removed));
	values[2] = Int64GetDatum((int64) res.bytes_removed);
	values[3] = PointerGetDatum(construct_array(removed, (int) res.n_removed, TEXTOID, -1, false, TYPALIGN_INT));
	MemoryContextDelete(lib);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(td), values, nulls)));
}

/* ---- lt_cleanup_files(regclass, interval, boolean, boolean): the same, one row per file ---------- */

Datum
lt_cleanup_files(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	lt_cleanup_result res;
	MemoryContext lib;

	InitMaterializedSRF(fcinfo, 0);
	lib = AllocSetContextCreate(CurrentMemoryContext, "lt_cleanup", ALLOCSET_DEFAULT_SIZES);
	run_cleanup(fcinfo, "lt_cleanup_files", lib, &res);
	for (size_t i = 0; i < res.n_removed; i++)
	{
		const char *p = res.removed[i];
		Datum		values[2];
		bool		nulls[2] = {false};

		values[0] = CStringGetTextDatum(p);
		values[1] = CStringGetTextDatum(strncmp(p, "_versions/", 10) == 0 ? "manifest" :
										strncmp(p, "data/", 5) == 0 ? "data" :
										strncmp(p, "_deletions/", 11) == 0 ? "deletion" :
										strncmp(p, "_transactions/", 14) == 0 ? "transaction" :
										strncmp(p, "_indices/", 9) == 0 ? "index" :
										strncmp(p, LT_ASSIGN_DIR, strlen(LT_ASSIGN_DIR)) == 0 ? "assignment" : "other");
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextDelete(lib);
	return (Datum) 0;
}
