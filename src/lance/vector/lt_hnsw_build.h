/*
 * lt_hnsw_build.h — the HNSW graph of one IVF partition, built and written as Lance 12 writes the graphs of
 * an IVF_HNSW_* index (the layout lt_hnsw.h reads; implemented in lt_hnsw_build.c, driven by lt_ivf_build.c).
 *
 * The graph (Malkov & Yashunin, as Lance builds it): every node gets a level drawn from the build's seeded
 * generator, floor(-ln(u) / ln(m)) capped at max_level - 1, except node 0, which gets the highest level drawn
 * and is the entry point (so that Lance 8, which always enters at node 0, and Lance 12, which enters at the
 * metadata's entry point, walk the upper levels alike).  Nodes are inserted one after the other, in order:
 * greedy descent from the entry point to the node's level, then per level a beam search of ef_construction
 * candidates, of which the neighbour-selection heuristic keeps at most m (2 m at level 0; dot: filled up to
 * that with the nearest ones it passed over, as Lance 12 does, 1 - dot being no metric); each chosen
 * neighbour gains the node and, when that overfills its list (and the node is nearer than its furthest
 * neighbour), is pruned back the same way.  Distances are
 * those the search ranks by, on the float vectors: squared L2 (l2, and cosine on normalized vectors) or
 * 1 - dot.  Serial and seeded: the same vectors give the same graph.
 *
 * Written (lt_hnsw_graph_write) as rows of index.idx, level after level (a level: one row per node present
 * there, nodes ascending): __vector_id uint32, __neighbors list<uint32> (the heuristic's order), _distance
 * list<float32>; and described by one element of the "lance:hnsw" list (lt_hnsw_graph_meta):
 * {"entry_point":0,"params":{"max_level":L,"m":M,"ef_construction":E,"prefetch_distance":2},
 *  "level_offsets":[0, rows of level 0, ... every level counted, L + 1 offsets]}.
 */
#ifndef LT_HNSW_BUILD_H
#define LT_HNSW_BUILD_H

#include <stdint.h>

#include "file/lt_writer.h"
#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"
#include "vector/lt_vdist.h"

/* Lance's defaults (HnswBuildParams) */
#define LT_HNSW_BUILD_M					20
#define LT_HNSW_BUILD_EF_CONSTRUCTION	150
#define LT_HNSW_BUILD_MAX_LEVEL			7

typedef struct lt_hnsw_graph lt_hnsw_graph;

/* The columns of index.idx, declared in place (they point into themselves: never copy). */
typedef struct lt_hnsw_fields
{
	lt_field	id;
	lt_field	nbr;
	lt_field	nbr_item;
	lt_field   *nbr_child;
	lt_field	dist;
	lt_field	dist_item;
	lt_field   *dist_child;
	const lt_field *all[3];
} lt_hnsw_fields;

void		lt_hnsw_fields_declare(lt_hnsw_fields *f);

/* Bytes a graph of n nodes needs at most per node, for a build's memory bound. */
uint64_t	lt_hnsw_bytes_per_node(uint32_t m);

/*
 * The graph of n vectors of dim floats, vector i at base + rows[i] * dim (l2 and cosine: L2 routing on
 * normalized vectors; dot: NEG_DOT).  rng: the build's generator state (advanced).  Cancel: polled
 * every few hundred insertions (what names the build in the message).
 */
lt_code		lt_hnsw_graph_build(const float *base, const int64_t *rows, uint32_t n, uint32_t dim, lt_vmetric metric,
								uint32_t m, uint32_t ef_construction, uint64_t *rng, const char *what,
								lt_hnsw_graph **out, lt_error *err);

/* Append the graph's rows to w (fields as lt_hnsw_fields_declare); *rows: how many. */
lt_code		lt_hnsw_graph_write(const lt_hnsw_graph *g, const lt_hnsw_fields *f, lt_file_writer *w, uint64_t *rows,
								lt_error *err);

/* The graph's element of "lance:hnsw" (a JSON object, not yet quoted as the list's string); lt_free it. */
char	   *lt_hnsw_graph_meta(const lt_hnsw_graph *g);

void		lt_hnsw_graph_free(lt_hnsw_graph *g);

#endif
