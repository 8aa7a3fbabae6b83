/*
 * analyze.h — ANALYZE of a foreign table (analyze.c): a uniform sample of live rows; lt_last_analyze().
 */
#ifndef LT_FDW_ANALYZE_H
#define LT_FDW_ANALYZE_H

#include "foreign/fdwapi.h"
#include "utils/rel.h"

extern bool ltAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func,
								  BlockNumber *totalpages);

#endif
