/*
 * lt_txn_restore.h — Lance's Restore (implemented in lt_txn_restore.c): a new version whose content
 * (schema, fragments, indexes, config) is that of an older one.
 */
#ifndef LT_TXN_RESTORE_H
#define LT_TXN_RESTORE_H

#include "table/lt_dataset.h"
#include "txn/lt_txn.h"
#include "util/lt_status.h"

/*
 * Commit version `version`'s content as the version after `read` (the newest the caller saw). The
 * counters that must never go back (max_fragment_id, next_row_id) keep the newest values. Any commit
 * since `read` conflicts (LT_ECONFLICT): a restore means "what I saw, undone", not what came later.
 * result->op is LT_OP_OVERWRITE.
 */
lt_code		lt_commit_restore(lt_dataset *read, uint64_t version, const lt_commit_options *opts,
							  lt_commit_result *result, lt_error *err);

#endif
