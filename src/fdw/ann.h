/*
 * ann.h — ORDER BY col <op> q LIMIT k through the dataset's Lance vector index (ann.c), for knn.c.
 */
#ifndef LT_FDW_ANN_H
#define LT_FDW_ANN_H

#include "commands/explain.h"

#include "scan.h"
#include "vector/lt_knn.h"
#include "vector/lt_topk.h"

/* GUCs lt_fdw.vector_index (on), lt_fdw.nprobes (20), lt_fdw.refine_factor (0: none), lt_fdw.ef (0: the engine's) */
extern bool lt_vector_index;
extern int	lt_nprobes;
extern int	lt_refine_factor;
extern int	lt_ef;
extern void ltfdw_ann_init(void);

typedef struct LtAnnState LtAnnState;

/*
 * At the scan's start: the vector index that can answer the search of field with metric (kernel: the
 * query's type, lt_knn.h), opened in cxt, or an exact search (ltfdw_ann_usable false) with the
 * reason EXPLAIN gives.  Never NULL.
 */
extern LtAnnState *ltfdw_ann_begin(LtScanState *st, const lt_field *field, lt_vmetric metric, lt_vkernel kernel,
								   MemoryContext cxt);
extern bool ltfdw_ann_usable(LtAnnState *as);
/* A new (re)scan: the prefilter is built again with its parameters. */
extern void ltfdw_ann_rescan(LtAnnState *as);

/*
 * Search the index's rows (the covered live fragments passing the pushed filter) for q into topk.
 * False when this query is better answered exactly (the prefilter leaves fewer rows than the index
 * would score, the query's dimension is not the index's): nothing was ranked.
 */
extern bool ltfdw_ann_search(LtAnnState *as, LtScanState *st, const lt_knn_query *q, lt_topk *topk);
/*
 * The prefilter's rows of covered fragment id when this (re)scan built one: false when there is none
 * (no search yet, or the fragment is not covered); *all when every live row passes.
 */
extern bool ltfdw_ann_mask(LtAnnState *as, uint32 fragment_id, const uint32 **offsets, uint64 *n, bool *all);
/* Whether the index covers fragment id (the others are the caller's to search exactly). */
extern bool ltfdw_ann_covers(LtAnnState *as, uint32 fragment_id);

extern void ltfdw_ann_explain(LtAnnState *as, ExplainState *es, const char *attname, lt_vmetric metric,
							  double limit);

#endif
