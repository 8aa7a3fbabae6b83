/*
 * modify.h — INSERT / UPDATE / DELETE / COPY FROM (modify.c): the handler's modify entry points, row
 * identity, and the row writer merge.c uses outside a ModifyTable.
 */
#ifndef LT_FDW_MODIFY_H
#define LT_FDW_MODIFY_H

#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "storage/itemptr.h"
#include "utils/rel.h"

#include "dataset.h"
#include "option.h"
#include "xact.h"

extern void ltAddForeignUpdateTargets(PlannerInfo *root, Index rtindex, RangeTblEntry *target_rte,
									  Relation target_relation);
extern List *ltPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation, int subplan_index);
extern void ltBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo, List *fdw_private,
								 int subplan_index, int eflags);
extern TupleTableSlot *ltExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
										   TupleTableSlot *planSlot);
extern TupleTableSlot **ltExecForeignBatchInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot **slots,
												 TupleTableSlot **planSlots, int *numSlots);
extern int	ltGetForeignModifyBatchSize(ResultRelInfo *rinfo);
extern TupleTableSlot *ltExecForeignUpdate(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
										   TupleTableSlot *planSlot);
extern TupleTableSlot *ltExecForeignDelete(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
										   TupleTableSlot *planSlot);
extern void ltEndForeignModify(EState *estate, ResultRelInfo *rinfo);
extern void ltBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern void ltEndForeignInsert(EState *estate, ResultRelInfo *rinfo);
extern int	ltIsForeignRelUpdatable(Relation rel);
extern void ltExplainForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo, List *fdw_private,
								   int subplan_index, ExplainState *es);

/*
 * Rows written into a dataset outside a ModifyTable (merge.c): the builders, data files and
 * transaction of an INSERT / UPDATE. moved_from (or NULL: new rows): the rows replace the rows at
 * old_addr of that version — with stable row ids they keep their row ids, and the tracked fields
 * not supplied keep the old row's assignment (NULL: such fields are unassigned). A keyed table's check (keys.c)
 * sees the rows with check_key: old_addr is the row it replaces, UINT64_MAX for a new row (whose key
 * also goes into the transaction's inserted-keys filter); share_keys (or NULL) is a writer of the
 * same statement whose key set this one shares; supplied (attnums offset by
 * FirstLowInvalidHeapAttributeNumber) the columns every row gives: the tracked fields they write are
 * assigned in every row written (field assignment, assign.c).
 */
typedef struct LtModifyState LtRowWriter;
extern LtRowWriter *lt_row_writer_begin(Relation rel, Oid userid, LtDatasetEntry *moved_from, LtRowWriter *share_keys,
										 const Bitmapset *supplied);
extern void lt_row_writer_append(LtRowWriter *w, TupleTableSlot *slot, uint64 old_addr, bool check_key);
/* Flush and hand the last file to the transaction: rows and files written in total. */
extern void lt_row_writer_end(LtRowWriter *w, uint64 *rows, uint64 *files);
/* A scan's row identity (ctid, see scan.h) as the row address in the version `entry`. */
extern uint64 lt_row_identity_address(const LtDatasetEntry *entry, ItemPointer tid, const char *uri);
/* ERROR 55000 for a table pinned by `version` / `tag`. */
extern void lt_check_writable(Relation rel, const LtTableOptions *opts);
/* lt_xact_table for a write (doing: "write", "truncate"): ERROR 0A000 for a dataset of the legacy storage format. */
extern LtXactTable *lt_write_xact_table(Relation rel, const LtTableOptions *opts, const char *doing);

#endif
