/*
 * lt_ivf.h — Lance's IVF vector indexes (V3 files), read and searched in C.
 *
 * A segment of an IVF index is a directory _indices/<uuid>/ with two Lance files:
 *   index.idx      schema metadata "lance:index" = {"type": "IVF_FLAT" | "IVF_PQ" | ..., "distance_type":
 *                  "l2" | "cosine" | "dot"} and "lance:ivf" = the global buffer holding the IVF model (an
 *                  Ivf protobuf: the centroids tensor [partitions, dim], in the vectors' type:
 *                  float32, float16 or float64, as is a PQ codebook);
 *   auxiliary.idx  the storage: rows grouped by partition, "lance:ivf" = the global buffer of an Ivf whose
 *                  lengths are the rows of each partition, in order; columns _rowid (uint64, the row id:
 *                  the row address without stable row ids) and, for IVF_FLAT, "flat"
 *                  (fixed_size_list<float32 | float16 | float64, dim>, the column's item type,
 *                  normalized when the metric is cosine).
 *
 *                For IVF_PQ the storage is column "__pq_code" (fixed_size_list<uint8, M> for 8-bit codes,
 *                M / 2 for 4-bit: sub-vector 2i in the low nibble of byte i, 2i + 1 in the high one),
 *                stored transposed within each partition (byte j of every row of the partition, then
 *                byte j + 1, ...), and schema metadata "storage_metadata" = a JSON list holding one JSON
 *                object {"codebook_position": global buffer of the codebook Tensor, "nbits", "num_sub_vectors",
 *                "dimension", "transposed"}; the codebook is [M][2^nbits][dim / M] floats.
 *                For IVF_SQ, column "__sq_code" and the bounds of the scalar quantizer (vector/lt_sq.h);
 *                for IVF_RQ, the RaBitQ codes and factors (vector/lt_rq.h).
 *
 * Search (as the engine routes): the query's nprobes nearest centroids (by L2 on the normalized
 * query for cosine, by L2 for l2, by the dot product for dot, by hamming for binary vectors:
 * IVF_FLAT over fixed_size_list<uint8, N>, uint8 centroids), then every row of those partitions
 * scored: IVF_FLAT exactly; IVF_PQ by the engine's distance table over the query's residual to the
 * partition's centroid (l2, and cosine on the normalized query: the squared L2 of each sub-vector to
 * each codeword; dot, no residual: 1 - the sub-vector's dot product), summed over the row's codes.
 * IVF_HNSW_PQ and IVF_HNSW_SQ keep the same model and storage (SQ: lt_sq_codes.h) plus a graph per
 * partition in index.idx, searched by lt_hnsw.h, not by lt_ivf_search_partition.
 * Other kinds are recognised (type name, metric) for listing, and refused (LT_EUNSUPPORTED) for search.
 */
#ifndef LT_IVF_H
#define LT_IVF_H

#include <stdbool.h>
#include <stdint.h>

#include "index/lt_index_file.h"
#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "util/lt_status.h"
#include "vector/lt_partheap.h"
#include "vector/lt_sq_codes.h"
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
	lt_type_id	elem;			/* the vectors' type: LT_TYPE_FLOAT16 / 32 / 64 (the centroids') */
	float	   *centroids;		/* n_partitions * dim, widened (float16) or rounded (float64) */
	uint8_t    *centroids_u8;	/* instead, for uint8 (binary, hamming) vectors */
	uint64_t   *part_start;		/* first auxiliary row of each partition */
	uint32_t   *part_len;
	lt_index_file *aux;			/* NULL unless the storage is read */
	const lt_field *rowid_field;
	const lt_field *flat_field;	/* IVF_FLAT */
	/* IVF_PQ */
	const lt_field *pq_field;
	uint32_t	pq_bits;		/* 8 or 4 */
	uint32_t	pq_m;			/* sub-vectors */
	uint32_t	pq_bytes;		/* bytes of a row's code */
	bool		pq_transposed;
	float	   *codebook;		/* pq_m * 2^pq_bits * (dim / pq_m) */
	float	   *codebook_t;		/* the same per sub-vector as [dim / pq_m][2^pq_bits]: the table loop runs over codewords */
	float	   *table;			/* scratch: pq_m * 2^pq_bits distances */
	float	   *residual;		/* scratch: dim */
	/*
	 * float64 vectors: the centroids (and a PQ codebook) also as stored, in double: the engine routes,
	 * takes the residual and builds the PQ table in double, rounding only each distance to float
	 */
	double	   *centroids64;
	double	   *codebook64;		/* pq_m * 2^pq_bits * (dim / pq_m), as codebook */
	double	   *residual64;		/* scratch: dim */
	/* IVF_SQ (searched in lt_sq.c) and IVF_HNSW_SQ: the scalar quantizer (sq.field set) */
	lt_sq_codes sq;
	/* IVF_RQ: the RaBitQ storage (searched in lt_rq.c) */
	struct lt_rq *rq;
	/*
	 * Set by the caller before a search: 4-bit codes scored as the engine scores a partition when its
	 * search has no prefilter (no filter, no deleted rows): the first max(200, k_hint) rows exactly,
	 * the others through its 8-bit quantized distance table (quantize_4bit false: all exactly, as the
	 * engine does with a prefilter).
	 */
	bool		quantize_4bit;
	uint32_t	k_hint;
	/*
	 * Set by the caller before a search of float64 vectors: the query in double; IVF_FLAT then scores
	 * in double as the SQL operator on double precision[] does, and it routes and makes the PQ table
	 * in double (centroids64, codebook64) as the engine does.
	 */
	const double *query64;
	/* the same for uint8 vectors (hamming): the byte query, which routes and scores */
	const uint8_t *query_u8;
	/*
	 * Set by the caller before a search of float16 vectors: whose arithmetic the query follows, 8 (Lance
	 * 8's) or else Lance 12's: the PQ table (lt_ivf_pq_table) and IVF_RQ's norm of a cosine query (Lance 8
	 * rounds its sum of squares and root to float16).  The index files do not say; the caller takes the
	 * engine that committed the index (lt_vsearch.c).
	 */
	int			f16_engine;
	/*
	 * When set (approximate kinds): rows are offered to the top-k under their scan sequence number,
	 * not their row id, so that rows at equal distances rank in scan order (the engine's heap keeps
	 * the first seen); seq->ids maps the number back to the row id.
	 */
	struct lt_ivf_seq *seq;
	/* When set (IVF kinds without a graph): a partition's rows go to this heap as the engine's (lt_partheap.h). */
	struct lt_partheap *part_heap;
	/*
	 * Every kind through the per-process cache (lt_vcache.h): the model (centroids, partition offsets,
	 * the PQ codebook, the SQ bounds, the RaBitQ rotation) points into a pinned cache entry; partitions'
	 * row ids and codes, vectors or RaBitQ factors are kept there, and the auxiliary file is opened only
	 * when a partition is not cached (aux_path in store; lt_ivf_open_storage).  IVF_HNSW_* keep their
	 * graphs' metadata and their partitions' graphs and codes there (lt_hnsw.c).
	 */
	void	   *cached;			/* the pinned model entry, or NULL: the arrays are ix's own */
	char	   *cache_key;		/* store root and segment directory, or NULL: not cached */
	lt_store   *store;
	char	   *aux_path;
	bool		pq;				/* the storage is PQ codes (IVF_PQ, IVF_HNSW_PQ) */
} lt_ivf;

/*
 * A float16 query q normalized (cosine) as engine (8 or 12) normalizes it, into out (dim floats, each a
 * float16 value): Lance 8 in float16 arithmetic, Lance 12 by a norm taken in float.
 */
void		lt_ivf_f16_normalize(const float *q, uint32_t dim, int engine, float *out);

typedef struct lt_ivf_seq
{
	uint64_t   *ids;
	uint64_t	n;
	uint64_t	cap;
} lt_ivf_seq;

/*
 * Open the segment in directory dir ("_indices/<uuid>/" relative to the store).  with_storage: also
 * the auxiliary file (IVF_FLAT, IVF_PQ, IVF_SQ, IVF_RQ; LT_EUNSUPPORTED for other kinds).  Corrupt files: LT_ECORRUPT
 * naming the file.
 */
lt_code		lt_ivf_open(lt_store *store, const char *dir, bool with_storage, lt_ivf **out, lt_error *err);
/*
 * The same with storage, for searching: the model from the cache when it holds the segment's as of
 * version (the manifest's record of the segment; an entry of another version is never used), no file
 * opened then; the files are opened on first need (lt_ivf_open_storage).
 */
lt_code		lt_ivf_open_cached(lt_store *store, const char *dir, uint64_t version, lt_ivf **out, lt_error *err);
/* The auxiliary file and its columns of a segment whose model came from the cache (no-op when open). */
lt_code		lt_ivf_open_storage(lt_ivf *ix, lt_error *err);

/*
 * Partition p's rows from the cache, or read from the auxiliary file (and kept when its row ids have no
 * NULL): row ids, the codes or vectors as stored, and for IVF_RQ its factors.
 */
typedef struct lt_ivf_rows
{
	const uint64_t *ids;
	const lt_array *ids_arr;	/* read from the file: whose validity tells NULL row ids; NULL: none */
	const uint8_t *codes;
	const float *add,
			   *scale;			/* IVF_RQ */
	lt_array   *read[4];		/* the arrays read (not from the cache) */
} lt_ivf_rows;
lt_code		lt_ivf_partition_rows(lt_ivf *ix, uint32_t p, lt_ivf_rows *rows, lt_error *err);
void		lt_ivf_rows_free(lt_ivf_rows *rows);
/*
 * Room in ix->seq (when set) for the ids of n more rows offered to the top-k; LT_ENOMEM.  Inline, as
 * lt_ivf_offer: the storages' scorers (lt_sq.c, lt_rq.c, lt_hnsw.c) sit below lt_ivf.c, which calls them.
 */
static inline lt_code
lt_ivf_seq_reserve(lt_ivf *ix, uint64_t n, lt_error *err)
{
	uint64_t	cap;
	uint64_t   *ids;

	if (ix->seq == NULL || ix->seq->n + n <= ix->seq->cap)
		return LT_OK;
	cap = 1024 + 2 * (ix->seq->n + n);
	if ((ids = lt_realloc(ix->seq->ids, sizeof(uint64_t) * cap)) == NULL)
		return lt_nomem(err);
	ix->seq->ids = ids;
	ix->seq->cap = cap;
	return LT_OK;
}
/*
 * Offer row id at distance d: to the partition's engine heap when ix->part_heap is set, else to topk, under
 * its scan sequence number when ix->seq is set (room reserved).
 */
static inline void
lt_ivf_offer(lt_ivf *ix, lt_topk *topk, double d, uint64_t id)
{
	if (ix->part_heap)
		lt_partheap_offer(ix->part_heap, d, id);
	else if (ix->seq)
	{
		ix->seq->ids[ix->seq->n] = id;
		lt_topk_push(topk, d, ix->seq->n++);
	}
	else
		lt_topk_push(topk, d, id);
}
void		lt_ivf_close(lt_ivf *ix);

/* Whether the storage's scores are exact distances (IVF_FLAT), not approximations of them. */
bool		lt_ivf_exact_scores(const lt_ivf *ix);

/*
 * The rows of each of the n partitions in the IVF model of index file xf (its "lance:ivf" global
 * buffer): an HNSW segment's graph rows in index.idx.  LT_ECORRUPT naming the file.
 */
lt_code		lt_ivf_model_lengths(lt_index_file *xf, uint32_t n, uint64_t *lengths, lt_error *err);

/* Whether the kind is searched through HNSW graphs (lt_hnsw.h): IVF_HNSW_PQ, IVF_HNSW_SQ. */
bool		lt_ivf_is_hnsw(const lt_ivf *ix);

/*
 * IVF_PQ storage: the distance table of partition p for q into ix->table (the query normalized for
 * cosine, its residual to the centroid for l2 and cosine; the engine's 1 - dot for dot).
 */
void		lt_ivf_pq_table(lt_ivf *ix, uint32_t p, const float *q);

/* The nprobes partitions nearest to q (dim floats), nearest first, into parts; returns how many. */
uint32_t	lt_ivf_probe(const lt_ivf *ix, const float *q, uint32_t nprobes, uint32_t *parts);

/*
 * Score every row of partition p against q with metric m into topk; accept (may be NULL) returns
 * false for a row id to leave out (deleted rows, rows of removed fragments, the prefilter).  The
 * scores are in m's scale (lt_vdist): IVF_PQ's approximate distances converted (l2: the square root;
 * cosine: half the normalized squared L2; dot: the negative dot product).
 */
lt_code		lt_ivf_search_partition(lt_ivf *ix, uint32_t p, const float *q, lt_vmetric m,
									bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
									uint64_t *scored, lt_error *err);

#endif
