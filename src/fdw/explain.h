/*
 * explain.h — EXPLAIN of a foreign scan (explain.c).
 */
#ifndef LT_FDW_EXPLAIN_H
#define LT_FDW_EXPLAIN_H

#include "commands/explain.h"
#include "nodes/execnodes.h"

#include "option.h"

extern void ltExplainForeignScan(ForeignScanState *node, ExplainState *es);
/* Where a table is: its namespace identifier (when it has one) and its dataset's URI. */
extern void ltfdw_explain_dataset(const LtTableOptions *opts, ExplainState *es);

#endif
