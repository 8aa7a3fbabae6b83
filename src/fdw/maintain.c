/*
 * maintain.c — what Lance's writers do after a commit, after lt_fdw's: auto-cleanup, and opt-in compaction.
 *
 * Lance's writers run auto_cleanup_hook after each commit (lt_cleanup.h: lt_auto_cleanup_policy): when the
 * committed version's config asks for it, the old versions and the files only they referenced go.  A table or
 * server with the auto_compact option also compacts its small fragments after a write (lt_compact.h's plan, as
 * lt_compact does), as a Rewrite commit of its own, followed by that commit's auto-cleanup.  Both run once the
 * Postgres transaction committed (XACT_EVENT_COMMIT, the dataset's commit lock still held), so that a failure
 * there can only leave files behind: an error is a WARNING, a compaction that loses to a concurrent commit a
 * NOTICE, and the transaction stays committed.  Interrupts are held while a transaction commits; the
 * library's interrupt check still sees a cancel (store.c) and stops at a safe point (a cleanup removes old
 * manifests before their files; a compaction stopped before its commit leaves only unreferenced files).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "dataset.h"
#include "maintain.h"
#include "table/lt_cleanup.h"
#include "table/lt_dataset.h"
#include "txn/lt_compact.h"
#include "proto/lt_table.pb-c.h"
#include "txn/lt_txn.h"
#include "assignment/lt_assignment.h"
#include "util/lt_alloc.h"

/*
 * The auto-cleanup after a commit, by the policy the commit decided on the manifest it wrote (nothing read
 * back): library calls only, allocations in the current (library) target.
 */
static lt_code
auto_cleanup(lt_store *store, const lt_auto_cleanup *ac, lt_cleanup_result *res, lt_error *err)
{
	lt_cleanup_policy policy = ac->policy;

	memset(res, 0, sizeof(*res));
	if (ac->rc != LT_OK)
	{
		*err = ac->err;
		return ac->rc;
	}
	/* field assignment state goes by the data files' rules, as lt_cleanup() does it */
	policy.extra_dir = LT_ASSIGN_DIR_NAME;
	policy.extra_refs = lt_assign_referenced_files;
	return lt_cleanup(store, "", &policy, res, err);
}

/*
 * Compaction after a commit (the auto_compact option): Lance's plan (lt_compact.h) on the version just committed;
 * when it rewrites at least min_fragments fragments, the groups are copied and committed as one Rewrite, rebased
 * over later appends.  *res.op stays LT_OP_NONE when nothing was compacted.
 */
static lt_code
auto_compact(lt_store *store, const char *uri, const char *relname, uint64 version, int min_fragments,
			 lt_dataset *committed, const lt_dataset *read, const lt_adoption *appended, lt_commit_result *res,
			 lt_error *err)
{
	lt_version_spec spec = {version, NULL};
	lt_dataset *ds = NULL;
	lt_txn	   *t = NULL;
	lt_compact_options co = {0};
	lt_compact_plan plan = {0};
	lt_code		rc = LT_OK;

	memset(res, 0, sizeof(*res));
	co.target_rows_per_fragment = 1024 * 1024;	/* lt_compact's defaults, which are Lance's */
	co.materialize_deletions = true;
	co.materialize_deletions_threshold = 0.1;
	/*
	 * the version the commit kept (nothing read back); else, after an append, the plan on the read version's
	 * fragments and the appended ones says whether there is anything to compact before the manifest is read
	 */
	if (committed && committed->version == version)
		ds = committed;
	else
	{
		size_t		would = 0;
		lt_error	ignore;

		if (read && appended && appended->version == version &&
			lt_compact_tier_after_append(read, appended, &co, &would, &ignore) == LT_OK &&
			would < (size_t) min_fragments)
			return LT_OK;
		rc = lt_dataset_open(store, "", &spec, &ds, err);
	}
	if (rc == LT_OK)
		rc = lt_compact_plan_make(ds, &co, &plan, err);
	if (rc == LT_OK)
		lt_compact_plan_tier(ds, &plan);	/* a row copied O(log rows) times as a table grows by small commits */
	if (rc == LT_OK && plan.n_fragments >= (size_t) min_fragments)
	{
		/* a rewrite would write blobs inline: refused as lt_compact refuses it (an ERROR: the caller's WARNING) */
		lt_check_blob_writable(relname, uri, ds, "auto-compact");
		rc = lt_txn_begin(ds, &t, err);
		for (size_t g = 0; rc == LT_OK && g < plan.n_groups; g++)
		{
			const lt_compact_group *grp = &plan.groups[g];
			lt_compact_file *files = NULL;
			size_t		n_files = 0;
			uint64_t   *old_ids = lt_malloc(sizeof(uint64_t) * (grp->count + 1));

			if (!old_ids)
				rc = lt_nomem(err);
			if (rc == LT_OK)
				rc = lt_compact_copy_group(ds, grp, &co, &files, &n_files, err);
			for (size_t i = 0; rc == LT_OK && i < n_files; i++)
			{
				uint64_t	id;

				if (files[i].n_assign > 0)	/* lt_compact moves it; this path does not yet */
					rc = lt_error_set(err, LT_EUNSUPPORTED, "auto-compaction does not move field assignment state; run lt_compact");
				else
					rc = lt_txn_add_fragment(t, 1, &files[i].file, files[i].row_ids, &id, err);
			}
			for (size_t k = 0; rc == LT_OK && k < grp->count; k++)
			{
				old_ids[k] = ds->fragments[grp->first + k]->id;
				rc = lt_txn_remove_fragment(t, old_ids[k], err);
			}
			if (rc == LT_OK)
				rc = lt_txn_compaction_group(t, old_ids, grp->count, n_files, err);
			lt_compact_files_free(files, n_files);
			lt_free(old_ids);
		}
		if (rc == LT_OK)
		{
			lt_txn_mark_compaction(t, true);
			rc = lt_txn_commit(t, NULL, res, err);
		}
	}
	if (t)
		lt_txn_free(t);
	lt_compact_plan_clear(&plan);
	if (ds && ds != committed)
		lt_dataset_close(ds);
	return rc;
}

static void
cleanup_after(lt_store *store, const char *uri, const char *relname, uint64 version, const lt_auto_cleanup *ac)
{
	lt_cleanup_result res;
	lt_error	err;
	lt_code		rc = auto_cleanup(store, ac, &res, &err);

	if (rc != LT_OK)
		ereport(WARNING,
				(errmsg("lt_fdw: auto-cleanup of foreign table \"%s\" %s: %s", relname,
						rc == LT_ECANCELED ? "was canceled" : "failed", err.msg),
				 errdetail("Version " UINT64_FORMAT " of dataset %s is committed; old versions stay.", version, uri),
				 errhint("The dataset's config (lance.auto_cleanup.*) asks for the cleanup; lt_cleanup() runs it by hand.")));
	else
		elog(DEBUG1, "lt_fdw: auto-cleanup of %s after version " UINT64_FORMAT ": " UINT64_FORMAT " versions and " UINT64_FORMAT " files removed",
			 uri, version, (uint64) res.old_versions, (uint64) res.files_removed);
}

void
lt_maintain_after_commit(lt_store *store, const char *uri, const char *relname, uint64 version,
						 const lt_auto_cleanup *cleanup,
						 int auto_compact_min, lt_dataset *committed, const lt_dataset *read,
						 const lt_adoption *appended)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "lt_fdw after commit", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MemoryContext oldlib = lt_alloc_target(cxt);

	PG_TRY();
	{
		/* the commit decided on the config it wrote: no manifest is read back for it */
		if (cleanup && cleanup->due)
			cleanup_after(store, uri, relname, version, cleanup);
		if (auto_compact_min > 0)
		{
			lt_commit_result res;
			lt_error	err;
			lt_code		rc = auto_compact(store, uri, relname, version, auto_compact_min, committed, read,
											  appended, &res, &err);

			if (rc == LT_ECONFLICT)
				ereport(NOTICE,
						(errmsg("lt_fdw: auto-compaction of foreign table \"%s\" lost to a concurrent commit: %s",
								relname, err.msg),
						 errdetail("Version " UINT64_FORMAT " of dataset %s is committed; the next write compacts.",
								   version, uri)));
			else if (rc != LT_OK)
				ereport(WARNING,
						(errmsg("lt_fdw: auto-compaction of foreign table \"%s\" %s: %s", relname,
								rc == LT_ECANCELED ? "was canceled" : "failed", err.msg),
						 errdetail("Version " UINT64_FORMAT " of dataset %s is committed; its fragments stay.",
								   version, uri)));
			else if (res.version > 0)
			{
				elog(DEBUG1, "lt_fdw: auto-compaction of %s: version " UINT64_FORMAT ", " UINT64_FORMAT " fragments into " UINT64_FORMAT,
					 uri, res.version, (uint64) res.fragments_removed, (uint64) res.fragments_added);
				if (res.cleanup.due)
					cleanup_after(store, uri, relname, res.version, &res.cleanup);
			}
		}
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
				(errmsg("lt_fdw: maintenance of foreign table \"%s\" after its commit failed: %s", relname, edata->message),
				 errdetail("Version " UINT64_FORMAT " of dataset %s is committed.", version, uri)));
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return;					/* committed (if any) goes with the transaction state's memory */
	}
	PG_END_TRY();
	if (committed)
		lt_dataset_close(committed);
	lt_alloc_target(oldlib);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
