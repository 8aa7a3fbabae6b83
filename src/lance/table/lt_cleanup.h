/*
 * lt_cleanup.h — removing the files of old versions and of abandoned writes, by Lance's rules.
 *
 * The working set is the latest version, every tagged version and every version committed at or
 * after the cutoff; the other manifests are old and are removed.  A file under data/, _deletions/,
 * _transactions/ or _indices/<uuid>/ that no manifest of the working set references is removed
 * when it is "verified" (an old manifest referenced it, so it is no write in progress) or when it
 * cannot be in progress: older than 7 days, or delete_unverified.  Files modified at or after the
 * earliest retained commit are never candidates (a write that started after it may still be going on).  A blob
 * v2 sidecar (data/<stem>/<id>.blob) goes by the rule of its data file data/<stem>.lance, as Lance 12's cleanup
 * removes it with that file.  A tagged version older than the cutoff is kept, or (Lance's default) refused.  The same goes for temporary files (lt_fdw's "*.tmp-*", Lance's "_versions/.tmp*").
 * This is what the Lance library's cleanup_old_versions does (rust/lance/src/dataset/cleanup.rs).
 */
#ifndef LT_CLEANUP_H
#define LT_CLEANUP_H

#include <stdbool.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "table/lt_dataset.h"
#include "util/lt_status.h"

#define LT_CLEANUP_UNVERIFIED_DAYS 7

/*
 * Files a manifest references that Lance itself does not know (lt_fdw's field assignment state under
 * _assignment/, which lives in a room above this one): the paths ds references, relative to the dataset
 * (*paths and each lt_free'd by the cleanup).
 */
typedef lt_code (*lt_cleanup_refs_fn) (const lt_dataset *ds, char ***paths, size_t *n, lt_error *err);

typedef struct lt_cleanup_policy
{
	int64_t		before_ms;		/* versions committed before this (ms since the epoch) are old */
	int64_t		now_ms;			/* for the age of unverified files */
	uint64_t	retain_versions;	/* > 0: the newest this many versions are kept as well (Lance's
									 * retain_n_versions: a version goes only when both rules let it) */
	bool		delete_unverified;	/* remove unreferenced files of any age (no write may be running) */
	bool		dry_run;		/* only report what would go */
	bool		error_if_tagged_old_versions;	/* LT_EINVALID, nothing removed, when a tag holds an old
												 * version (Lance's default); else the tag keeps it */
	/* the files under extra_dir ("_assignment") go by the same rules as data files, referenced as
	 * extra_refs says; without extra_refs they all stay */
	const char *extra_dir;
	lt_cleanup_refs_fn extra_refs;
} lt_cleanup_policy;

typedef struct lt_cleanup_result
{
	uint64_t	old_versions;	/* manifests removed */
	uint64_t	files_removed;	/* other files removed */
	uint64_t	bytes_removed;	/* of both */
	char	  **removed;		/* paths relative to the dataset, sorted (lt_free each and the array) */
	size_t		n_removed;
} lt_cleanup_result;

lt_code		lt_cleanup(lt_store *store, const char *prefix, const lt_cleanup_policy *policy,
					   lt_cleanup_result *result, lt_error *err);
void		lt_cleanup_result_clear(lt_cleanup_result *r);

/*
 * Lance's auto-cleanup (auto_cleanup_hook in rust/lance/src/dataset/cleanup.rs), which its writers run after
 * each commit they make, outside the commit: due when the committed version's config sets
 * lance.auto_cleanup.interval and the version is a multiple of it.  The cleanup then removes the versions
 * committed before now - lance.auto_cleanup.older_than (a humantime duration: "14days", "1h 30m"; without
 * it, every version's time qualifies) that are not among the newest lance.auto_cleanup.retain_versions;
 * unverified files stay, and a tag keeps its version without error.  *due false: nothing to do (policy
 * untouched).  A value that does not parse is LT_EINVALID, as Lance's hook fails.  Lance 8's
 * delete_rate_limit (a throttle) and referenced_branch (branches, which lt_cleanup refuses) are not read.
 * m is the manifest of the committed version `version` (a commit decides with the one it just wrote:
 * lt_commit_result.cleanup, nothing read back).
 */
lt_code		lt_auto_cleanup_policy(const struct Lt__Pb__Manifest *m, uint64_t version, int64_t now_ms,
								   lt_cleanup_policy *policy, bool *due, lt_error *err);
/*
 * Whether Lance's auto-cleanup is due after committing `version` with manifest m, read from m's config
 * without building a dataset: lance.auto_cleanup.interval set and version a multiple of it, or a value
 * that does not parse (lt_auto_cleanup_policy then reports it).  A commit records it (lt_commit_result).
 */
bool		lt_auto_cleanup_due(const struct Lt__Pb__Manifest *m, uint64_t version);
/*
 * What Lance's auto-cleanup asks for after a commit, decided by the commit on the manifest it wrote (so that the
 * cleanup reads nothing back): due as lt_auto_cleanup_due says; then rc is LT_OK with the policy
 * (lt_auto_cleanup_policy at now_ms, the commit's time), or the config's error (err).
 */
typedef struct lt_auto_cleanup
{
	bool		due;
	lt_code		rc;
	lt_cleanup_policy policy;
	lt_error	err;
} lt_auto_cleanup;

void		lt_auto_cleanup_decide(const struct Lt__Pb__Manifest *m, uint64_t version, int64_t now_ms,
								   lt_auto_cleanup *out);
/* A humantime duration ("14days", "2h 37min", "0s") in milliseconds (saturating); LT_EINVALID if malformed. */
lt_code		lt_parse_duration_ms(const char *text, int64_t *ms, lt_error *err);

#endif
