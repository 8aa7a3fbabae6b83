/*
 * lt_txn.h — pending changes to one dataset and their commit (the contract; implemented in lt_txn*.c).
 *
 * An lt_txn collects what one Postgres transaction did to one dataset, against
 * the version it read (the read version): new fragments (from lt_writer.h
 * files), rows deleted from existing or new fragments, fragments removed.
 * Nothing it does is visible to other readers until lt_txn_commit: deletion
 * files are written to new, unreferenced paths when they are needed, and the
 * commit itself writes `_transactions/{read_version}-{uuid}.txn` and then
 * creates the next manifest only if absent (lt_store_put_if_absent).
 *
 * Fragments added by the transaction get provisional ids (above the read
 * version's max_fragment_id) so that its own later statements can scan them
 * and address their rows (lt_txn_view); the commit renumbers them when a
 * concurrent writer took those ids first.
 *
 * On a lost race the commit reads the transactions committed since the read
 * version, lifts each to a composite of actions and compares its footprint with
 * this transaction's (lt_action.h; docs/conflicts.md has the pair table):
 * concurrent appends and deletes of other rows rebase (fragment ids re-assigned,
 * deletion vectors merged and rewritten); deletes of the same rows, an Overwrite,
 * a Restore or anything it cannot interpret are LT_ECONFLICT naming the
 * conflicting version (fail closed).
 */
#ifndef LT_TXN_H
#define LT_TXN_H

#include <stdbool.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "table/lt_cleanup.h"
#include "table/lt_dataset.h"
#include "table/lt_deletion.h"
#include "util/lt_status.h"
#include "file/lt_writer.h"
#include "assignment/lt_assignment.h"

/*
 * The writer every manifest names (Manifest.writer_version): this library, at the extension's version
 * (lt_fdw.control's default_version as semver).  Lance reads the field to decide which of its own old
 * releases' bugs to work around: a manifest without one gets its fragments' row counts recomputed, and an
 * index written by a "lance" older than 0.8.15 gets its fragment bitmap recomputed; a library other than
 * "lance" is taken as free of Lance's bugs, and no "lance" version check applies to it (README, "Who wrote
 * it").  Claiming "lance 8.0.0" would be untrue and would one day trigger a workaround meant for Lance 8.
 */
#define LT_WRITER_LIBRARY "lt_fdw"
#define LT_WRITER_VERSION "0.1.0"

typedef struct lt_txn lt_txn;

/* What a commit did (for tests, EXPLAIN and lt_versions). */
typedef enum lt_txn_op
{
	LT_OP_NONE = 0,				/* nothing changed: no commit was made */
	LT_OP_APPEND,
	LT_OP_DELETE,
	LT_OP_UPDATE,
	LT_OP_OVERWRITE,
	LT_OP_CREATE_INDEX,			/* lt_commit_create_index (lt_txn_index.h) */
	LT_OP_UPDATE_CONFIG,		/* lt_commit_primary_key (lt_keys.h): a schema metadata change */
	LT_OP_REWRITE				/* a compaction (lt_txn_mark_compaction) */
} lt_txn_op;

typedef struct lt_commit_result
{
	lt_txn_op	op;
	uint64_t	version;		/* the new version (0 when op is LT_OP_NONE) */
	int			attempts;		/* 1 + the lost races that were rebased */
	uint64_t	rows_added, rows_deleted;
	uint64_t	fragments_added, fragments_updated, fragments_removed;
	lt_auto_cleanup cleanup;	/* Lance's auto-cleanup after this version: due, and its policy (lt_cleanup.h) */
	/* with lt_commit_options.adopt, a commit that only appended: what the read version's dataset takes over
	 * (lt_dataset_adopt; the caller frees it with lt_free), else NULL */
	struct lt_adoption *adoption;
	/*
	 * with lt_commit_options.keep_committed: the committed version as an open dataset (the caller closes it), when
	 * it could be had without reading it back: an append on a later version the commit opened itself (that
	 * dataset takes the adoption over); else NULL
	 */
	lt_dataset *committed;
} lt_commit_result;

/* Start a transaction on `read` (an opened dataset at its read version; borrowed until lt_txn_free). */
lt_code		lt_txn_begin(lt_dataset *read, lt_txn **out, lt_error *err);

/*
 * Add a new fragment made of the given files (all with the same num_rows; normally one).
 * Returns its provisional id in *fragment_id.  The files' names are copied.  On a dataset with
 * stable row ids, row_ids (num_rows of them) keeps the ids of rows that moved (UPDATE); NULL
 * gives the rows fresh ids at commit (from next_row_id).  Ignored without stable row ids.
 */
lt_code		lt_txn_add_fragment(lt_txn *t, int n_files, const lt_written_file *files, const uint64_t *row_ids,
								uint64_t *fragment_id, lt_error *err);

/*
 * Delete physical rows of a fragment, existing or added by this transaction (any order,
 * duplicates and rows already deleted are fine).  A fragment left with no live row is removed
 * at commit.  An unknown fragment id or an offset past the fragment's end is LT_EINVALID.
 */
lt_code		lt_txn_delete_rows(lt_txn *t, uint64_t fragment_id, const uint32_t *offsets, uint64_t n,
							   lt_error *err);
/* Delete every row of a fragment (removed by id, no deletion file). */
lt_code		lt_txn_remove_fragment(lt_txn *t, uint64_t fragment_id, lt_error *err);

/*
 * Assert that the keys in filter (lt_keys.h: the keys of every row this transaction adds) did
 * not exist: the commit is written as an Update carrying the filter (inserted_rows, as Lance's
 * merge-insert does), and fails with LT_ECONFLICT when a concurrent commit inserted rows whose
 * keys may overlap (an overlapping or incomparable filter) or inserted rows without saying which
 * keys (an Append, an Update without a filter).  The filter's ownership is taken (also on
 * failure); a second call replaces the first; a savepoint rollback forgets it.
 */
struct lt_key_filter;
lt_code		lt_txn_assert_unique_keys(lt_txn *t, struct lt_key_filter *filter, lt_error *err);

/*
 * TRUNCATE: every fragment of the read version and every fragment added so far is gone (the
 * own-writes view shows that); fragments added afterwards stay.  The commit is one Lance
 * Overwrite with the read version's schema, config and those fragments; keep_indexes keeps
 * every index segment with an empty fragment bitmap (its definition, covering nothing), else the
 * version has no indexes (as Lance 8's own Overwrite).  Any concurrent commit but a
 * ReserveFragments conflicts with it (docs/conflicts.md).  A savepoint rollback undoes it.
 */
lt_code		lt_txn_replace_all(lt_txn *t, bool keep_indexes, lt_error *err);

/*
 * The transaction is a compaction: it removes fragments (lt_txn_remove_fragment) and adds the
 * fragments their live rows were copied into, in the same order (row_ids: their stable row ids),
 * and nothing else.  The commit is a Lance Rewrite (a RewriteGroup per lt_txn_compaction_group);
 * a concurrent commit that deleted from, updated or removed an old fragment conflicts, appends
 * rebase.  Index segments that covered a group's old fragments cover its new ones (lt_txn_rewrite.c:
 * the same segment with stable row ids; else a remapped one, named in rewritten_indices; vector
 * segments keep their bitmaps and the moved rows become unindexed).  Anything else in the
 * transaction makes the commit LT_EINVALID.
 */
void		lt_txn_mark_compaction(lt_txn *t, bool on);	/* on = false: a savepoint rollback undid it */
/*
 * One group of a compaction: the fragments it rewrites, and how many fragments it adds (the next
 * n_new in the order they are added).  The commit writes one RewriteGroup per group and moves each
 * index segment's coverage group by group (lt_txn_rewrite.c); without groups, all is one group.
 * lt_txn_mark_compaction(t, false) forgets them.
 */
lt_code		lt_txn_compaction_group(lt_txn *t, const uint64_t *old_ids, size_t n_old, size_t n_new, lt_error *err);

/*
 * Field assignment (lt_assignment.h) of a fragment this transaction added, for one tracked field:
 * kind, and for LT_ASSIGN_PARTIAL the assigned physical offsets (rows: ownership taken, also on
 * failure).  A field not given is unassigned in the fragment.  A second call for the same field
 * replaces the first; the state goes with the fragment on a savepoint rollback.  The commit
 * writes the new roots (lt_txn_commit); a rebase merges them onto the concurrent commits' state,
 * and LT_ECONFLICT when the set of tracked fields changed meanwhile.
 */
struct roaring_bitmap_s;
lt_code		lt_txn_set_assignment(lt_txn *t, uint64_t fragment_id, int32_t field_id, lt_assign_kind kind,
								  struct roaring_bitmap_s *rows, lt_error *err);
/*
 * Clear field_id's assignment of rows of a fragment in place (existing or added by this transaction; the
 * rows stay where they are): the state-only invalidation.  Undone by a savepoint rollback; at commit the
 * fragment's entry loses those rows, and a concurrent commit that deleted or moved any of them (or removed
 * the fragment) is LT_ECONFLICT (their moved copies would keep the old state).
 */
lt_code		lt_txn_unassign_rows(lt_txn *t, uint64_t fragment_id, int32_t field_id, const uint32_t *offsets,
								 uint64_t n, lt_error *err);
/*
 * A fragment's assignment as the transaction sees it (t may be NULL: the read version's):
 * for a fragment it added, what lt_txn_set_assignment gave; else read_state's (lt_assign_fragment); less
 * the rows lt_txn_unassign_rows cleared (a derived bitmap owned by t until lt_txn_free).
 */
lt_code		lt_txn_fragment_assignment(lt_txn *t, lt_assign_field *read_state, uint64_t fragment_id,
									   uint64_t physical_rows, lt_assign_kind *kind,
									   const struct roaring_bitmap_s **rows, lt_error *err);

/* Anything to commit?  (false when changes were made; they may still cancel out, and the commit then reports LT_OP_NONE) */
bool		lt_txn_is_empty(const lt_txn *t);

/*
 * Savepoints: a mark of the changes so far; rolling back to it forgets every change made since
 * (fragments added since are dropped; their files stay as orphans for lt_cleanup).
 */
typedef uint64_t lt_txn_mark;
lt_txn_mark lt_txn_savepoint(lt_txn *t);
lt_code		lt_txn_rollback_to(lt_txn *t, lt_txn_mark mark, lt_error *err);

/*
 * The dataset as this transaction sees it: the read version with the pending changes applied
 * (new fragments with their provisional ids, deletion vectors merged), to scan own writes.
 * The view is owned by the transaction and stays valid until lt_txn_free: a change made while
 * it is being scanned (UPDATE, DELETE) does not disturb it; the next call after a change
 * returns a new view.  Its deletion vectors may live in memory only: scan it with the regular
 * scanner.
 */
lt_code		lt_txn_view(lt_txn *t, lt_dataset **out, lt_error *err);

struct Lt__Pb__DataFragment;

/*
 * A check of the fragments concurrent commits added (a replace's predicate: rows a concurrent
 * writer appended that match it would survive the replace).  Called during the rebase, in version
 * order, for every fragment of `version` that the version before it did not have; return LT_OK to
 * accept it, LT_ECONFLICT (err naming the version) to fail the commit, anything else for an error.
 */
typedef lt_code (*lt_new_fragment_check) (void *arg, lt_dataset *version, const struct Lt__Pb__DataFragment *frag,
										  lt_error *err);

typedef struct lt_commit_options
{
	int			max_attempts;	/* 0 = 20, as Lance */
	const char *predicate;		/* Delete / Update: the predicate text recorded in the transaction, or NULL */
	lt_new_fragment_check check_new_fragment;	/* NULL: concurrent appends always rebase */
	void	   *check_arg;
	bool		adopt;			/* return what an append wrote, for lt_dataset_adopt (result->adoption) */
	bool		keep_committed;	/* with adopt: return the committed version, when it costs no read (result->committed) */
} lt_commit_options;

/*
 * Commit: write the deletion files still pending, the transaction file and the manifest of the
 * next version, rebasing over concurrent commits as described above.  An empty transaction
 * commits nothing (result->op = LT_OP_NONE).  After LT_ECONFLICT the transaction is unusable.
 * A Delete or Update keeps the index segments as Lance 8 does: fragment bitmaps unchanged (they
 * name the fragments an index was built over, existing or not); a segment left covering no
 * existing fragment is dropped when another segment of its name still covers one, and a lone one
 * only when it is a vector index (a scalar index keeps its oldest segment).
 */
lt_code		lt_txn_commit(lt_txn *t, const lt_commit_options *opts, lt_commit_result *result, lt_error *err);

void		lt_txn_free(lt_txn *t);

/*
 * Set config key of the dataset to value (NULL: remove it) as one Lance UpdateConfig commit on read, rebased over
 * concurrent commits that do not touch the key (lt_txn_config.c).
 */
lt_code		lt_commit_config(lt_dataset *read, const char *key, const char *value, const lt_commit_options *opts,
							 lt_commit_result *result, lt_error *err);

/*
 * Fault injection for crash tests: the points of a commit, in order.  Production code never
 * sets the hook (it is NULL); a test program sets it to a function that kills the process at
 * the point it wants.  At LT_COMMIT_MID_MANIFEST a torn copy of the manifest has just been
 * written under a temporary name, as a crash inside the store's write would leave it.
 */
typedef enum lt_commit_point
{
	LT_COMMIT_START,				/* data files written, nothing of the commit yet */
	LT_COMMIT_AFTER_DELETION_FILES,
	LT_COMMIT_AFTER_TXN_FILE,
	LT_COMMIT_MID_MANIFEST,
	LT_COMMIT_AFTER_MANIFEST		/* committed; the version hint not yet written */
} lt_commit_point;
typedef void (*lt_commit_fault_fn) (lt_commit_point point);
extern lt_commit_fault_fn lt_commit_fault_hook;

/*
 * Start tracking field_id's assignment (a top-level field), every row of the new version in the
 * initial state (assigned or not): one UpdateConfig commit that adds the field's config entry and
 * root and sets LT_FLAG_FIELD_ASSIGNMENT.  LT_EINVALID when the field already tracks it.
 */
lt_code		lt_commit_track_assignment(lt_dataset *read, int32_t field_id, bool initially_assigned,
									   const lt_commit_options *opts, lt_commit_result *result, lt_error *err);

#endif
