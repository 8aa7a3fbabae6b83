/*
 * index.h — scalar indexes in scans (index.c): lookups per (re)scan, verdicts per fragment, index costing,
 * EXPLAIN lines; lt_indexes().
 */
#ifndef LT_FDW_INDEX_H
#define LT_FDW_INDEX_H

#include "commands/explain.h"
#include "nodes/pathnodes.h"
#include "utils/rel.h"

#include "table/lt_dataset.h"
#include "types/lt_schema.h"

#include "dataset.h"
#include "quals.h"

/* GUC lt_fdw.enable_index_scan (default on): off answers no qual with an index. */
extern bool lt_enable_index_scan;
extern void lt_index_init(void);

typedef struct LtScanIndex LtScanIndex;
struct lt_frag_plan;

/*
 * At the start of every (re)scan, after ltfdw_filter_set_params: an index lookup for the pushed
 * filter with this scan's parameters is due (*slot is created on first use, in the current memory
 * context); it runs when the scan (or EXPLAIN) first asks for a verdict, and does nothing when no
 * index answers a part of the filter. Index bytes read are added to *bytes_read.
 */
extern void ltfdw_index_due(LtScanIndex **slot, LtDatasetEntry *entry, LtFdwFilter *filter, Relation rel,
							const char *uri, uint64 *bytes_read);
/*
 * Once per scan, before the first ltfdw_index_due: array @> / && quals among the local quals on
 * list columns (their label_list indexes narrow the rows read; Postgres still checks the quals).
 */
extern void ltfdw_index_labels(LtScanIndex **slot, Relation rel, Index scanrelid, const lt_schema *schema,
							   List *local_quals);
/* The verdict for fragment i of the version (ds->fragments[i]), or NULL: scan it with the filter. */
extern const struct lt_frag_plan *ltfdw_index_verdict(LtScanIndex *ix, size_t i);
/* Fragments the current lookup pruned (EXPLAIN's "to scan"). */
extern uint64 ltfdw_index_pruned(LtScanIndex *ix);
extern void ltfdw_index_explain(LtScanIndex *ix, ExplainState *es);
/* Planning: which columns have an index (ps->indexed_attrs, ps->unindexed_frac). */
extern void ltfdw_index_plan_info(LtPlanState *ps, Relation rel, LtDatasetEntry *e);
/*
 * Selectivity of the clauses (RestrictInfos) an index answers, or -1 when none does; *pg_sel (may be
 * NULL) gets Postgres's own estimate of the same clauses (they differ for equalities on a column
 * never analyzed: the index's distinct keys then give the estimate).
 */
extern Selectivity ltfdw_index_selectivity(PlannerInfo *root, RelOptInfo *baserel, List *conds,
										   Selectivity *pg_sel);

#endif
