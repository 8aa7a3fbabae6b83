/*
 * explain.h — EXPLAIN of a foreign scan (explain.c).
 */
#ifndef LT_FDW_EXPLAIN_H
#define LT_FDW_EXPLAIN_H

#include "commands/explain.h"
#include "nodes/execnodes.h"

extern void ltExplainForeignScan(ForeignScanState *node, ExplainState *es);

#endif
