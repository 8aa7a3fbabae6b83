/*
 * maintain.h — what a Lance writer does after its commit succeeded: auto-cleanup by the dataset's own
 * lance.auto_cleanup.* config, and (opt-in: the auto_compact option) compaction of small fragments (maintain.c).
 */
#ifndef LT_FDW_MAINTAIN_H
#define LT_FDW_MAINTAIN_H

#include "io/lt_store.h"

/*
 * Run after the Postgres transaction that made Lance version `version` of the dataset in store committed
 * (XACT_EVENT_COMMIT): auto-cleanup when the commit found it due (cleanup: its policy, decided on the manifest
 * the commit wrote; NULL when not due); with auto_compact > 0 a compaction (its own Rewrite commit, then its
 * auto-cleanup) when Lance's plan rewrites at least that many fragments.  An error or a cancel is a WARNING,
 * a lost race a NOTICE, never an error of the committed transaction.  committed: that version as the commit
 * kept it (lt_commit_result.committed), or NULL (then read when needed); closed here in either case.  read and
 * appended: the version the commit was made on and what it appended (lt_commit_result.adoption), or NULL: a
 * compaction that would rewrite too few fragments is then known without reading the committed version.
 */
struct lt_dataset;
struct lt_adoption;
struct lt_auto_cleanup;
extern void lt_maintain_after_commit(lt_store *store, const char *uri, const char *relname, uint64 version,
									 const struct lt_auto_cleanup *cleanup, int auto_compact, struct lt_dataset *committed,
									 const struct lt_dataset *read, const struct lt_adoption *appended);

#endif
