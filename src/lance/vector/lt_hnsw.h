/*
 * lt_hnsw.h — the HNSW graphs of Lance's IVF_HNSW_SQ and IVF_HNSW_PQ index segments, searched as the
 * engine searches them.
 *
 * Such a segment is an IVF index (lt_ivf.h: the centroids, and in auxiliary.idx the rows of each
 * partition with their SQ or PQ codes) whose index.idx also holds one graph per partition:
 *   schema metadata "lance:hnsw" = a JSON list with one JSON string per partition,
 *     {"entry_point": 0, "params": {"max_level", "m", "ef_construction", ...}, "level_offsets": [...]};
 *   the partition's rows (partitions one after the other, each level_offsets[last] rows long): level l is
 *   rows [level_offsets[l], level_offsets[l + 1]), one row per node present at that level:
 *   "__vector_id" (uint32, the node: its row in the partition's storage), "__neighbors" (list<uint32>,
 *   in the order the search visits them) and "_distance" (list<float32>, unused by the search).
 *
 * The search of a partition (the engine's): the query scored against the codes (the SQ query encoded
 * by the quantizer's bounds; the PQ distance table of the query's residual), the entry point node 0,
 * greedy descent through every level from the top to level 0, then a best-first search of level 0
 * keeping ef results, of which the first k are the partition's answer.  With a prefilter (a row
 * rejected by accept) rejected nodes are walked but not returned, and when fewer than a tenth of the
 * partition's nodes pass, those are scored one by one instead.  Candidate and result heaps follow the
 * engine's binary heaps step by step, so rows at equal scores come out in the engine's order.
 */
#ifndef LT_HNSW_H
#define LT_HNSW_H

#include <stdbool.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "util/lt_status.h"
#include "vector/lt_ivf.h"
#include "vector/lt_topk.h"

typedef struct lt_hnsw lt_hnsw;

/*
 * The graphs of the segment in directory dir whose model and storage ix holds (lt_ivf_open with
 * storage of an IVF_HNSW_* segment).  The partitions' graphs are read on first search.  Corrupt
 * metadata: LT_ECORRUPT naming index.idx.  ix must outlive it.
 */
lt_code		lt_hnsw_open(lt_store *store, const char *dir, lt_ivf *ix, lt_hnsw **out, lt_error *err);
void		lt_hnsw_close(lt_hnsw *h);

/*
 * Search partition p for q (dim floats) into topk: the partition's best k rows for ef (>= k), scored
 * in the scale of the index's metric (lt_vdist: l2 the square root of the engine's score, cosine half
 * of it, dot the engine's score minus one), offered under ix->seq's numbers when set.  accept (may be
 * NULL) is the prefilter on row ids; scored counts the rows scored.
 */
lt_code		lt_hnsw_search_partition(lt_hnsw *h, uint32_t p, const float *q, uint32_t k, uint32_t ef,
									 bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
									 uint64_t *scored, lt_error *err);

/*
 * Search h's graphs as engine searches them: 8 (Lance 8: from node 0, greedy through every level, the
 * furthest result as it was before each node), 12 (Lance 12: from the metadata's entry point, greedy down
 * to level 1), or 0: as the engine that wrote them (the default; lt_fdw's own graphs are written as Lance
 * 12 writes).  The two engines read the same files but walk them differently: this says whose answer.
 */
void		lt_hnsw_search_as(lt_hnsw *h, int engine);

/* The engine's default ef for k results: k + k / 2. */
static inline uint32_t
lt_hnsw_default_ef(uint32_t k)
{
	return k + k / 2 < k ? UINT32_MAX : k + k / 2;
}

#endif
