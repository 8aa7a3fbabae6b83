/*
 * lt_txn_index.h — committing built index segments (index/lt_index_write.h
 * builds them) as a CreateIndex transaction; implemented in lt_txn_index.c.
 */
#ifndef LT_TXN_INDEX_H
#define LT_TXN_INDEX_H

#include "index/lt_index_write.h"
#include "table/lt_dataset.h"
#include "txn/lt_txn.h"
#include "util/lt_status.h"

/*
 * Commit built indexes as one Lance CreateIndex transaction on top of `read`
 * (the version they were built from): the transaction file, then the next
 * manifest (only if absent) with the index section of the version it lands
 * on plus the new segments.  An existing index of the same name on the same
 * column is replaced (its segments go to removed_indices, as Lance's replace);
 * on another column it is LT_EINVALID.  Rebase over concurrent commits as their
 * footprints decide (lt_action.h, docs/conflicts.md): Append, Delete, CreateIndex
 * of other names, UpdateConfig keys and ReserveFragments are compatible (new
 * fragments stay unindexed); an Update that rewrote data files of an indexed
 * fragment or modified the indexed field in one, a Rewrite of indexed fragments,
 * an index of the same name created concurrently, Overwrite, Restore and anything
 * that cannot be lifted are LT_ECONFLICT naming the version.  result->op is
 * LT_OP_CREATE_INDEX.
 */
lt_code		lt_commit_create_index(lt_dataset *read, int n, const lt_built_index *const *built,
								   const lt_commit_options *opts, lt_commit_result *result, lt_error *err);

/*
 * Drop every segment of the index `name` (LT_ENOTFOUND when there is none): a CreateIndex commit that
 * only removes, as Lance's drop_index.  Rebased over concurrent Append, Delete and CreateIndex commits;
 * result->op is LT_OP_CREATE_INDEX.
 */
lt_code		lt_commit_drop_index(lt_dataset *read, const char *name, const lt_commit_options *opts,
								 lt_commit_result *result, lt_error *err);

#endif
