/*
 * lt_ivf.h — Lance's IVF vector indexes (V3 files), read and searched in C.
 *
 * A segment of an IVF index is a directory _indices/<uuid>/ with two Lance files:
 *   index.idx      schema metadata "lance:index" = {"type": "IVF_FLAT" | "IVF_PQ" | ..., "distance_type":
 *                  "l2" | "cosine" | "dot"} and "lance:ivf" = the global buffer holding the IVF model (an
 *                  Ivf protobuf: the centroids tensor [partitions, dim], float32);
 *   auxiliary.idx  the storage: rows grouped by partition, "lance:ivf" = the global buffer of an Ivf whose
 *                  lengths are the rows of each partition, in order; columns _rowid (uint64, the row id:
 *                  the row address without stable row ids) and, for IVF_FLAT, "flat"
 *                  (fixed_size_list<float32, dim>, normalized when the metric is cosine).
 *
 * Search (as the engine routes): the query's nprobes nearest centroids (by L2 on the normalized
 * query for cosine, by L2 for l2, by the dot product for dot), then every row of those partitions
 * scored exactly.  This module reads IVF_FLAT storage; the other kinds are recognised (type name,
 * metric) for listing, and refused (LT_EUNSUPPORTED) for search.
 */
#ifndef LT_IVF_H
#define LT_IVF_H

#include <stdbool.h>
#include <stdint.h>

#include "index/lt_index_file.h"
#include "io/lt_store.h"
#include "util/lt_status.h"
#include "vector/lt_topk.h"
#include "vector/lt_vdist.h"

/* Lance's default minimum number of partitions probed (lancedb's nprobes) */
#define LT_IVF_DEFAULT_NPROBES 20

typedef struct lt_ivf
{
	char	   *type_name;		/* "IVF_FLAT", "IVF_PQ", ... as the file says */
	char	   *distance_type;	/* "l2", "cosine", "dot" */
	lt_vmetric	metric;			/* of distance_type (dot: NEG_DOT) */
	uint32_t	dim;
	uint32_t	n_partitions;
	float	   *centroids;		/* n_partitions * dim */
	uint64_t   *part_start;		/* first auxiliary row of each partition */
	uint32_t   *part_len;
	lt_index_file *aux;			/* NULL unless the storage is read (IVF_FLAT) */
	const lt_field *rowid_field;
	const lt_field *flat_field;
} lt_ivf;

/*
 * Open the segment in directory dir ("_indices/<uuid>/" relative to the store).  with_storage: also
 * the auxiliary file (IVF_FLAT only; LT_EUNSUPPORTED for other kinds).  Corrupt files: LT_ECORRUPT
 * naming the file.
 */
lt_code		lt_ivf_open(lt_store *store, const char *dir, bool with_storage, lt_ivf **out, lt_error *err);
void		lt_ivf_close(lt_ivf *ix);

/* Whether the storage's scores are exact distances (IVF_FLAT), not approximations of them. */
bool		lt_ivf_exact_scores(const lt_ivf *ix);

/* The nprobes partitions nearest to q (dim floats), nearest first, into parts; returns how many. */
uint32_t	lt_ivf_probe(const lt_ivf *ix, const float *q, uint32_t nprobes, uint32_t *parts);

/*
 * Score every row of partition p against q with metric m into topk; accept (may be NULL) returns
 * false for a row id to leave out (deleted rows, rows of removed fragments, the prefilter).
 */
lt_code		lt_ivf_search_partition(lt_ivf *ix, uint32_t p, const float *q, lt_vmetric m,
									bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
									uint64_t *scored, lt_error *err);

#endif
