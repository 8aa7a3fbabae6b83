/*
 * upper_exec.h — aggregate pushdown's execution (upper_exec.c): the handler's scan entry points, which
 * run aggregate scans there and hand the others to scan.c.
 */
#ifndef LT_FDW_UPPER_EXEC_H
#define LT_FDW_UPPER_EXEC_H

#include "commands/explain.h"
#include "nodes/execnodes.h"

extern void lt_upper_BeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *lt_upper_IterateForeignScan(ForeignScanState *node);
extern void lt_upper_ReScanForeignScan(ForeignScanState *node);
extern void lt_upper_EndForeignScan(ForeignScanState *node);
extern void lt_upper_ExplainForeignScan(ForeignScanState *node, ExplainState *es);

#endif
