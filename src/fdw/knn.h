/*
 * knn.h — exact kNN inside the scan (knn.c): ORDER BY col <op> q LIMIT k.
 */
#ifndef LT_FDW_KNN_H
#define LT_FDW_KNN_H

#include "commands/explain.h"
#include "nodes/pathnodes.h"

#include "scan.h"

/* the slot of the ForeignScan's fdw_private holding the kNN list (scan.c's LtScanPrivateKnn) */
#define LT_SCAN_PRIVATE_KNN 4

/* GUC lt_fdw.enable_vector_search (default on) */
extern bool lt_enable_vector_search;
extern void ltfdw_knn_init(void);

/* GetForeignPaths: a path returning the rows in the order of the query's first sort key, when it can */
extern void ltfdw_knn_add_path(PlannerInfo *root, RelOptInfo *baserel, LtPlanState *ps, Cost scan_total);
/* GetForeignPlan: the kNN list for fdw_private (NIL for other paths); appends the query to *fdw_exprs */
extern List *ltfdw_knn_plan(ForeignPath *best_path, List **fdw_exprs);

/* the plan's kNN list (NIL: a plain scan) and the fdw_exprs that are the pushed filter's */
extern List *ltfdw_knn_private(ForeignScan *fsplan);
extern List *ltfdw_knn_filter_exprs(ForeignScan *fsplan);

/* execution: NULL for a plain scan */
extern LtKnnState *ltfdw_knn_begin(ForeignScanState *node, LtScanState *st);
extern TupleTableSlot *ltfdw_knn_iterate(ForeignScanState *node, LtScanState *st);
extern void ltfdw_knn_rescan(LtKnnState *ks);
extern void ltfdw_knn_explain(LtKnnState *ks, ExplainState *es);

#endif
