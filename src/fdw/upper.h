/*
 * upper.h — aggregate pushdown (upper.c): GetForeignUpperPaths, and the handler's scan entry points,
 * which run aggregate scans here and hand the others to scan.c.
 */
#ifndef LT_FDW_UPPER_H
#define LT_FDW_UPPER_H

#include "commands/explain.h"
#include "foreign/fdwapi.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"

extern void lt_upper_init(void);	/* GUC lt_fdw.enable_aggregate_pushdown */
extern void ltGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
								   RelOptInfo *output_rel, void *extra);
/* The handler's scan entry points: aggregate scans are run by upper.c, the others by scan.c. */
extern ForeignScan *lt_upper_GetForeignPlan(PlannerInfo *root, RelOptInfo *foreignrel, Oid foreigntableid,
											ForeignPath *best_path, List *tlist, List *scan_clauses,
											Plan *outer_plan);
extern void lt_upper_BeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *lt_upper_IterateForeignScan(ForeignScanState *node);
extern void lt_upper_ReScanForeignScan(ForeignScanState *node);
extern void lt_upper_EndForeignScan(ForeignScanState *node);
extern void lt_upper_ExplainForeignScan(ForeignScanState *node, ExplainState *es);

#endif
