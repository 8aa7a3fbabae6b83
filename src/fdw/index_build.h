/*
 * index_build.h — lt_create_index() (index_build.c): an index built now, its CreateIndex commit at
 * PRE_COMMIT (xact.c calls these through its hooks).
 */
#ifndef LT_FDW_INDEX_BUILD_H
#define LT_FDW_INDEX_BUILD_H

#include "xact.h"

/* xact.c's PRE_COMMIT: every index built on the dataset, as one CreateIndex commit */
extern void lt_index_build_commit(LtXactTable *xt);
/* xact.c's abort: remove the files of an index not committed (best effort) */
extern void lt_index_build_discard(LtXactTable *xt, LtPendingIndex *p);
/* lt_optimize_indexes' builds: each merges the index of its name (Lance's optimize); progress says REINDEX while on */
extern void lt_index_build_for_optimize(bool on);

#endif
