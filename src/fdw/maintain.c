/*
 * maintain.c — Lance's auto-cleanup after lt_fdw's commits.
 *
 * Lance's writers run auto_cleanup_hook after each commit (lt_cleanup.h: lt_auto_cleanup_policy): when the
 * committed version's config asks for it, the old versions and the files only they referenced go.  lt_fdw
 * does the same once the Postgres transaction committed (XACT_EVENT_COMMIT), so that a failure there can
 * only leave files behind: it is reported as a WARNING, as Lance logs it, and the transaction stays committed.
 * Interrupts are held while a transaction commits; the library's interrupt check still sees a cancel
 * (store.c) and stops the cleanup at a safe point (old manifests go before their files).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "dataset.h"
#include "maintain.h"
#include "table/lt_cleanup.h"
#include "table/lt_dataset.h"
#include "assignment/lt_assignment.h"
#include "util/lt_alloc.h"

/* The cleanup itself: library calls only, allocations in the current (library) target. */
static lt_code
auto_cleanup(lt_store *store, uint64 version, lt_cleanup_result *res, bool *due, lt_error *err)
{
	lt_version_spec spec = {version, NULL};
	lt_dataset *ds = NULL;
	lt_cleanup_policy policy = {0};
	int64		now_ms = GetCurrentTimestamp() / 1000 + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
	lt_code		rc;

	*due = false;
	rc = lt_dataset_open(store, "", &spec, &ds, err);
	if (rc == LT_OK)
		rc = lt_auto_cleanup_policy(ds, now_ms, &policy, due, err);
	if (ds)
		lt_dataset_close(ds);
	if (rc != LT_OK || !*due)
		return rc;
	/* field assignment state goes by the data files' rules, as lt_cleanup() does it */
	policy.extra_dir = LT_ASSIGN_DIR_NAME;
	policy.extra_refs = lt_assign_referenced_files;
	return lt_cleanup(store, "", &policy, res, err);
}

void
lt_maintain_after_commit(lt_store *store, const char *uri, const char *relname, uint64 version)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "lt_fdw auto-cleanup", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MemoryContext oldlib = lt_alloc_target(cxt);
	lt_cleanup_result res = {0};
	lt_error	err;
	lt_code		rc = LT_OK;
	bool		due = false;

	PG_TRY();
	{
		rc = auto_cleanup(store, version, &res, &due, &err);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		/* out of memory and the like: the transaction is committed, so only a warning */
		lt_alloc_target(oldlib);
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(WARNING,
				(errmsg("lt_fdw: auto-cleanup of foreign table \"%s\" failed: %s", relname, edata->message),
				 errdetail("The transaction committed version " UINT64_FORMAT " of dataset %s; old versions stay.",
						   version, uri)));
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return;
	}
	PG_END_TRY();
	lt_alloc_target(oldlib);
	if (rc != LT_OK)
		ereport(WARNING,
				(errmsg("lt_fdw: auto-cleanup of foreign table \"%s\" %s: %s", relname,
						rc == LT_ECANCELED ? "was canceled" : "failed", err.msg),
				 errdetail("The transaction committed version " UINT64_FORMAT " of dataset %s; old versions stay.",
						   version, uri),
				 errhint("The dataset's config (lance.auto_cleanup.*) asks for the cleanup; lt_cleanup() runs it by hand.")));
	else if (due)
		elog(DEBUG1, "lt_fdw: auto-cleanup of %s after version " UINT64_FORMAT ": " UINT64_FORMAT " versions and " UINT64_FORMAT " files removed",
			 uri, version, (uint64) res.old_versions, (uint64) res.files_removed);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
