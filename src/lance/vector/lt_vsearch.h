/*
 * lt_vsearch.h — a vector search over a dataset through one of its IVF indexes: every segment
 * probed (nprobes partitions each), deleted rows, rows of fragments the dataset no longer has and
 * rows the caller's prefilter rejects left out, the candidates optionally re-ranked on the
 * dataset's own vectors (refine_factor), and the fragments no segment covers scored exactly.
 *
 * Distances come out in the query metric's scale (lt_vdist: L2 distance, cosine distance, negative
 * dot product) so that index candidates and exactly scored rows merge in one ranking.
 */
#ifndef LT_VSEARCH_H
#define LT_VSEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "index/lt_index.h"
#include "table/lt_dataset.h"
#include "vector/lt_knn.h"
#include "vector/lt_topk.h"

typedef struct lt_vsearch_stats
{
	uint64_t	segments;
	uint64_t	partitions_probed;
	uint64_t	index_rows_scored;	/* candidates scored in the index (after the prefilter) */
	uint64_t	index_rows_rejected;	/* index rows the prefilter or a deletion left out */
	uint64_t	rows_refined;	/* candidates re-scored on the dataset's vectors */
	uint64_t	unindexed_fragments;
	lt_knn_stats exact;			/* the unindexed fragments' (and the refine's) exact scoring */
} lt_vsearch_stats;

typedef struct lt_vsearch_params
{
	uint32_t	nprobes;		/* partitions per segment; 0: Lance's default */
	uint32_t	refine_factor;	/* 0: none; else k * refine_factor candidates re-ranked exactly (an
								 * approximate index's k candidates are re-ranked anyway when the
								 * dataset has unindexed fragments, as the engine does) */
	/* the prefilter: false for a row address to leave out (NULL: every live row) */
	bool		(*accept) (uint64_t addr, void *arg);
	void	   *accept_arg;
	uint32_t	ef;				/* HNSW kinds: results kept by each partition's graph search (Lance's ef);
								 * 0: the engine's default, 1.5 x the candidates asked of it */
	int			hnsw_engine;	/* whose search: HNSW kinds' walk of the graphs (lt_hnsw_search_as) and
								 * float16 vectors' arithmetic (lt_ivf.f16_engine): 0 the writer's, 8
								 * Lance 8's, 12 Lance 12's */
} lt_vsearch_params;

/* An IVF index opened for searching: every segment's model and storage (and HNSW graphs). */
typedef struct lt_vindex lt_vindex;

/* Whether idx is a vector index (by its details' type). */
bool		lt_index_is_vector(const lt_index *idx);

/*
 * Open every segment of idx (a vector index).  LT_EUNSUPPORTED for a kind not searched here or a
 * dataset with stable row ids; LT_ECORRUPT naming the file.  ds and idx must outlive it.
 */
lt_code		lt_vindex_open(lt_dataset *ds, const lt_index *idx, lt_vindex **out, lt_error *err);
void		lt_vindex_close(lt_vindex *vx);

const char *lt_vindex_type(const lt_vindex *vx);	/* "IVF_FLAT", ... */
lt_vmetric	lt_vindex_metric(const lt_vindex *vx);	/* of its distance type (dot: NEG_DOT) */
uint32_t	lt_vindex_dim(const lt_vindex *vx);
uint32_t	lt_vindex_partitions(const lt_vindex *vx);	/* of the first segment */
bool		lt_vindex_exact_scores(const lt_vindex *vx);	/* the storage holds the vectors (IVF_FLAT) */
bool		lt_vindex_is_hnsw(const lt_vindex *vx);	/* searched through HNSW graphs (ef applies) */
/* live rows in the fragments the segments cover (what a full probe scores without a prefilter) */
uint64_t	lt_vindex_covered_rows(const lt_vindex *vx);

/*
 * The best topk->k rows for q (a float32 query of vx's dimension, q->metric the index's) among the
 * rows of the covered live fragments, through the index.  Unindexed fragments are the caller's
 * (lt_vindex_covers says which).
 */
lt_code		lt_vindex_search(lt_vindex *vx, const lt_knn_query *q, const lt_vsearch_params *p, lt_topk *topk,
							 lt_vsearch_stats *stats, lt_error *err);
/* Whether some segment covers fragment id. */
bool		lt_vindex_covers(const lt_vindex *vx, uint32_t fragment_id);

/*
 * The whole search (a convenience for tools and tests): index segments, then unindexed fragments
 * scored exactly (the prefilter applies to the index's rows only).
 */
lt_code		lt_vector_search(lt_dataset *ds, const lt_index *ix, const lt_knn_query *q,
							 const lt_vsearch_params *p, lt_topk *topk, lt_vsearch_stats *stats, lt_error *err);

#endif
