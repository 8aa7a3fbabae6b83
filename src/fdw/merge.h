/*
 * merge.h — lt_merge_insert() (merge.c): upsert as one commit; TRUNCATE.
 */
#ifndef LT_FDW_MERGE_H
#define LT_FDW_MERGE_H

#include "nodes/parsenodes.h"

extern void ltExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs);
extern void lt_merge_init(void);	/* GUC lt_fdw.merge_insert_fast_path */

#endif
