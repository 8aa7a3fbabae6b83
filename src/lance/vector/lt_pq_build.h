/*
 * lt_pq_build.h — the product quantizer of an IVF_PQ index as the Lance engine builds and stores it
 * (the contract; implemented in lt_pq_build.c, driven by lt_ivf_build.c).
 *
 * Training (what the engine does): the vectors (normalized for cosine) minus their partition's
 * centroid for l2 and cosine (residual PQ), the vectors themselves for dot; a sample of
 * sample_rate * 2^bits of them; each of the M sub-vectors (dim / M floats) gets its own codebook of
 * 2^bits codewords from Lloyd's k-means by L2 (max_iters iterations at most, from distinct sample
 * points drawn with the caller's seeded generator; a cell left empty takes over half of a populated
 * one, as the engine's k-means splits it).  A vector's code is, per sub-vector, the index
 * of its nearest codeword by L2 (all metrics: the engine trains and encodes with L2).
 *
 * Storage, in auxiliary.idx: column __pq_code fixed_size_list<uint8, M> (8-bit codes) or M / 2
 * (4-bit: sub-vector 2i in the low nibble of byte i, 2i + 1 in the high one), transposed within
 * each partition (byte 0 of every row of the partition, then byte 1, ...); the codebook as a Tensor
 * [2^bits, dim] float32 (float16 / float64 for such vectors, elem: the engine keeps it in their type) ([M][2^bits][dim / M] in memory) in a global buffer, and schema metadata
 * storage_metadata = ["{\"codebook_position\":N,\"nbits\":B,\"num_sub_vectors\":M,\"dimension\":D,
 * \"codebook_tensor\":[],\"transposed\":true}"].
 */
#ifndef LT_PQ_BUILD_H
#define LT_PQ_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "file/lt_writer.h"
#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

typedef struct lt_pq_model
{
	uint32_t	dim;
	uint32_t	m;				/* sub-vectors */
	uint32_t	bits;			/* 8 or 4 */
	uint32_t	code_bytes;		/* bytes of one vector's code */
	float	   *codebook;		/* m * 2^bits * (dim / m) */
	uint8_t    *codes;			/* n * code_bytes, row-major (transposed when written) */
	lt_type_id	elem;			/* the codebook tensor's type as written: the vectors' (0: float32) */
	/* the __pq_code field (and its element) the auxiliary file declares */
	lt_fixed_list_field code;
} lt_pq_model;

/* Lance's default number of sub-vectors for dim: dim / 16, else dim / 8, else 1. */
uint32_t	lt_pq_default_sub_vectors(uint32_t dim);

/* Why (m, bits) cannot quantize vectors of dim (a static message), or NULL. */
const char *lt_pq_unfit(uint32_t dim, uint32_t m, uint32_t bits);

/*
 * Train the codebook and encode all n vectors (vecs: n * dim floats, already normalized for
 * cosine).  residual: subtract centroids[assign[i]] first.  rng: the build's generator state
 * (splitmix64, advanced).  Fewer vectors than codewords: LT_EINVALID.  Cancel: polled between
 * iterations and batches.
 */
lt_code		lt_pq_train_encode(lt_pq_model *pq, const float *vecs, int64_t n, const float *centroids,
							   const uint32_t *assign, bool residual, uint32_t sample_rate, uint32_t max_iters,
							   uint64_t *rng, lt_error *err);

/* code_bytes and the __pq_code field of pq (dim, m, bits set): training does it, a remap too. */
void		lt_pq_model_declare(lt_pq_model *pq);

/* The codes of rows[0..n) (one whole partition) into codes (a __pq_code array), transposed. */
lt_code		lt_pq_fill_partition(const lt_pq_model *pq, const int64_t *rows, int64_t n, lt_array *codes,
								 lt_error *err);

/* The codebook's global buffer and the storage_metadata (after the Ivf's global buffer). */
lt_code		lt_pq_put_storage(const lt_pq_model *pq, lt_file_writer *w, lt_error *err);

void		lt_pq_model_free(lt_pq_model *pq);

#endif
