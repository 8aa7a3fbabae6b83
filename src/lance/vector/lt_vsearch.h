/*
 * lt_vsearch.h — a vector search over a dataset through one of its IVF indexes: every segment
 * probed (nprobes partitions each), the rows of fragments no segment covers scored exactly, deleted
 * rows and rows of fragments the dataset no longer has left out.
 */
#ifndef LT_VSEARCH_H
#define LT_VSEARCH_H

#include "index/lt_index.h"
#include "table/lt_dataset.h"
#include "vector/lt_knn.h"
#include "vector/lt_topk.h"

typedef struct lt_vsearch_stats
{
	uint64_t	segments;
	uint64_t	partitions_probed;
	uint64_t	index_rows_scored;
	uint64_t	unindexed_fragments;
	lt_knn_stats exact;			/* the unindexed fragments' exact search */
} lt_vsearch_stats;

/*
 * The best topk->k rows for q (a float32 query) through index ix (an IVF index on q->field whose
 * distance type is q->metric's), nprobes partitions per segment (0: Lance's default).
 */
lt_code		lt_vector_search(lt_dataset *ds, const lt_index *ix, const lt_knn_query *q, uint32_t nprobes,
							 lt_topk *topk, lt_vsearch_stats *stats, lt_error *err);

#endif
