/*
 * lt_ivf_build.h — building an IVF_FLAT, IVF_PQ or IVF_SQ vector index as the Lance engine writes it (the
 * contract; implemented in lt_ivf_build.c, the quantizers in lt_pq_build.c and lt_sq.c;
 * txn/lt_txn_index.h commits it as any built index).
 *
 * The build reads every live, non-NULL vector of a fixed_size_list<float32, dim> column, trains
 * k-means centroids on a sample (num_partitions * sample_rate vectors, at most max_iters Lloyd
 * iterations from centroids drawn from the sample, a fixed seed: the same data gives the same
 * index), assigns every vector to its nearest centroid and writes one segment _indices/<uuid>/:
 *
 *   index.idx      0 rows of one column __flat_marker (uint64 not null); metadata
 *                  lance:index = {"type":"IVF_FLAT","distance_type":M}, lance:ivf = "1" (the global
 *                  buffer holding the Ivf model: zero offsets and lengths, the centroids tensor
 *                  [partitions, dim] float32, the k-means loss), lance:flat = one "" per partition
 *   auxiliary.idx  the vectors grouped by partition (row ids ascending inside one): _rowid uint64,
 *                  flat fixed_size_list<float32, dim> (normalized for cosine); metadata
 *                  storage_metadata = ["{\"dim\":D}"], distance_type = M, lance:ivf = "1" (an Ivf
 *                  with the offsets and lengths of the partitions)
 *
 * and the IndexMetadata details the engine records: /lance.index.pb.VectorIndexDetails with the
 * metric, the flat compression and the build's parameters, index_version 1.
 *
 * IVF_PQ (kind LT_IVF_BUILD_PQ) is the same but for: lance:index type "IVF_PQ"; auxiliary.idx holds
 * column __pq_code (the codes of lt_pq_build.h, transposed within each partition) instead of flat,
 * global buffer 2 the codebook and storage_metadata the quantizer's parameters; the details record
 * the pq compression (num_bits, num_sub_vectors) and the PQ training parameters (the same
 * sample_rate and max_iters as the IVF's).  The PQ codebook is trained after the IVF centroids with
 * the same seeded generator, so an IVF_PQ build repeats itself too.
 *
 * IVF_SQ (LT_IVF_BUILD_SQ): type "IVF_SQ", column __sq_code (lt_sq.h: 8-bit codes of each element
 * between the least and largest element of a sample of sample_rate * 256 vectors) and its
 * storage_metadata; the details record the sq compression (num_bits 8) and lance.sq.sample_rate.
 *
 * IVF_HNSW_SQ (LT_IVF_BUILD_HNSW_SQ): the IVF_SQ auxiliary.idx, and an index.idx that holds, instead of the
 * flat marker, one HNSW graph per partition over the partition's rows in their auxiliary order
 * (lt_hnsw_build.h: __vector_id, __neighbors, _distance, level after level, partition after partition),
 * lance:index type "IVF_HNSW_SQ", lance:ivf an Ivf with the centroids and the offsets and lengths of the
 * partitions' graph rows, and lance:hnsw the list of the graphs' metadata; the details add the hnsw
 * parameters (max_connections m, construction_ef, max_level 7) and lance.hnsw.prefetch_distance.  The
 * graphs are built after the SQ codes with the same seeded generator (their levels), so the build repeats
 * itself; memory adds lt_hnsw_bytes_per_node per vector.  IVF_HNSW_PQ (LT_IVF_BUILD_HNSW_PQ) likewise over the
 * IVF_PQ storage (8- or 4-bit codes, transposed; the engine writes its own so and reads 4-bit ones as IVF_PQ's,
 * scoring a node by the float distance table either way), type "IVF_HNSW_PQ", the details the pq
 * compression and the PQ training parameters beside the hnsw ones.
 *
 * float16 and float64 vectors (fixed_size_list<float16 | float64, dim>; every kind but IVF_RQ): as the engine
 * keeps them, the centroids tensor, the flat storage and the PQ codebook are in the column's type (cosine:
 * normalized in that type); k-means, PQ training, the SQ bounds and codes and the graphs work on the vectors as
 * float32 (float16 exactly, float64 rounded), float16 centroids rounded to float16 before the assignment (the PQ
 * codes are those of the float32 codebook).  IVF_RQ over them: LT_EUNSUPPORTED.
 * uint8 vectors (binary, metric hamming, the default for them; IVF_FLAT only): the engine's k-modes, each centroid
 * bit the majority of its members' (more than half set), the first nearest centroid by hamming distance; centroids
 * and flat storage uint8, distance_type "hamming", the details' metric 3.  hamming on float vectors or another
 * metric on uint8 ones: LT_EINVALID; another kind on uint8: LT_EUNSUPPORTED.
 *
 * IVF_RQ (LT_IVF_BUILD_RQ; float32 vectors of a dimension divisible by 8): the IVF_FLAT index.idx with type "IVF_RQ",
 * and an auxiliary.idx of RaBitQ codes and factors (lt_rq_build.h: 1-bit codes, the fast rotation drawn from the
 * seeded generator after the centroids, the raw-query estimator's factors); the details record the rq compression
 * (num_bits 1, the fast rotation), index_version 2.
 *
 * Routing, as the search (lt_ivf.h) does it: L2 for l2 and (on normalized vectors) cosine, the
 * largest dot product for dot.  Memory: every vector is held (rows * (dim * 4 + 16) bytes, and the
 * codes: + num_sub_vectors for PQ, + dim for SQ), bounded
 * by max_memory (LT_ENOMEM before reading further; float16 / float64 vectors add their float32 copy).  Cancel: polled between batches and iterations.
 */
#ifndef LT_IVF_BUILD_H
#define LT_IVF_BUILD_H

#include <stdint.h>

#include "index/lt_index_write.h"
#include "table/lt_dataset.h"
#include "util/lt_status.h"
#include "vector/lt_vdist.h"

/* Lance's defaults */
#define LT_IVF_BUILD_MAX_ITERS		50
#define LT_IVF_BUILD_SAMPLE_RATE	256
#define LT_IVF_BUILD_SEED			42

/* The build's phases, for progress reporting */
typedef enum lt_ivf_build_phase
{
	LT_IVF_PHASE_READ = 1,		/* done: vectors read; total: rows of the version */
	LT_IVF_PHASE_TRAIN,			/* done: k-means iterations; total: max_iters */
	LT_IVF_PHASE_ASSIGN,		/* done / total: vectors */
	LT_IVF_PHASE_WRITE,			/* done / total: vectors */
	LT_IVF_PHASE_GRAPH			/* IVF_HNSW_*: done / total: vectors in the graphs built */
} lt_ivf_build_phase;

typedef void (*lt_ivf_progress_fn) (void *arg, lt_ivf_build_phase phase, uint64_t done, uint64_t total);

typedef enum lt_ivf_build_kind
{
	LT_IVF_BUILD_FLAT = 0,
	LT_IVF_BUILD_PQ,
	LT_IVF_BUILD_SQ,
	LT_IVF_BUILD_HNSW_SQ,
	LT_IVF_BUILD_HNSW_PQ,
	LT_IVF_BUILD_RQ
} lt_ivf_build_kind;

typedef struct lt_ivf_build_options
{
	const char *name;			/* NULL: "<column>_idx" */
	lt_ivf_build_kind kind;
	uint32_t	num_sub_vectors;	/* IVF_PQ; 0: lt_pq_default_sub_vectors (Lance's default) */
	uint32_t	num_bits;		/* IVF_PQ: 8 (0) or 4; IVF_HNSW_PQ: 8 */
	uint32_t	hnsw_m;			/* IVF_HNSW_*: edges per node and level (2 m at level 0); 0: 20 */
	uint32_t	hnsw_ef_construction;	/* IVF_HNSW_*: the build's beam width; 0: 150 */
	uint32_t	num_partitions; /* 0: the square root of the live rows (at least 1) */
	const char *metric;			/* "l2" (NULL; uint8 vectors: "hamming"), "cosine", "dot" or "hamming" */
	uint32_t	sample_rate;	/* 0: LT_IVF_BUILD_SAMPLE_RATE training vectors per partition */
	uint32_t	max_iters;		/* 0: LT_IVF_BUILD_MAX_ITERS */
	uint64_t	seed;			/* 0: LT_IVF_BUILD_SEED */
	uint64_t	max_memory;		/* 0: 1 GiB */
	lt_ivf_progress_fn progress;	/* NULL: none; called at each phase and between batches / iterations */
	void	   *progress_arg;
} lt_ivf_build_options;

/*
 * Why column cannot carry an IVF index of any kind (a static message: not a fixed_size_list of float16, float32,
 * float64 or uint8), or NULL.  What a kind or metric does not fit is lt_ivf_build's error.
 */
const char *lt_ivf_build_unfit(const lt_field *column);

/*
 * Build the segment (out as lt_index_build fills it, kind LT_INDEX_UNKNOWN with type_url and
 * details set).  Bad options: LT_EINVALID; an unfit column: LT_EUNSUPPORTED.  On error the files
 * written so far are removed.
 */
lt_code		lt_ivf_build(lt_dataset *ds, const lt_field *column, const lt_ivf_build_options *opts,
						 lt_built_index *out, lt_error *err);

/*
 * A compaction's remap of an IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_SQ or IVF_HNSW_PQ segment (its files
 * under old_dir, the store path "<prefix>_indices/<uuid>/"): every stored row is kept in its partition
 * with its vector (PQ, SQ: its code), its row id replaced by map's answer (map returns false for a row
 * that is gone: it is dropped), the centroids and the quantizer (PQ codebook, SQ bounds) kept; written
 * as a new segment of column (out as lt_ivf_build fills it, without details: the old segment's stay).
 * IVF_HNSW_*: as the engine's remap (HNSW::remap rebuilds from the remapped storage), each partition's
 * graph is built again over the kept rows, from the values their codes stand for, with the old graphs'
 * m and ef_construction and the build's seed (float16 / float64 vectors too: the values are float32 either
 * way; their centroids and PQ codebook are written back in their type).  LT_EUNSUPPORTED for other
 * storages (IVF_RQ, ...), which the caller leaves as they are.  Memory: every kept vector or code is
 * held (HNSW: also dim floats per kept row and the graph).  On error the files written so far are
 * removed.
 */
typedef bool (*lt_ivf_remap_fn) (void *arg, uint64_t old_id, uint64_t *new_id);
lt_code		lt_ivf_remap(lt_dataset *ds, const lt_field *column, const char *name, const char *old_dir,
						 lt_ivf_remap_fn map, void *arg, lt_built_index *out, lt_error *err);

#endif
