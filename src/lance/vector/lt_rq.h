/*
 * lt_rq.h — the RaBitQ storage of Lance's IVF_RQ indexes (Lance 12's 1-bit codes), read and scored
 * as the engine scores it (implemented in lt_rq.c; lt_ivf.c opens it and calls in).
 *
 * Storage, in auxiliary.idx beside _rowid: column _rabit_codes (fixed_size_list<uint8, code_dim / 8>:
 * bit i of a row's code, LSB first, is whether coordinate i of its rotated residual to the partition's
 * centroid is >= +0), float32 columns __add_factors, __scale_factors (and __error_factors, which only
 * multi-bit codes use), and schema metadata storage_metadata = ["{\"code_dim\":D, \"num_bits\":1,
 * \"rotation_type\":\"fast\", \"fast_rotation_signs\":[...], \"packed\":true,
 * \"query_estimator\":\"raw_query\"}"].  Packed: within each partition, every whole block of 32 rows
 * holds, per code byte, 32 bytes whose nibbles are the block's rows in the order of the engine's SIMD
 * lookup (PERM0); the rows after the last whole block follow transposed (byte j of every such row,
 * then byte j + 1).
 *
 * Rotation ("fast"): the vector, zero-padded to code_dim, goes through 4 rounds of sign flips (the
 * round's bit i set: coordinate i negated) and a Walsh-Hadamard transform scaled by 1/sqrt(2^k)
 * (code_dim a power of two; otherwise the head and the tail 2^k coordinates in turn, each round ending
 * in a Kac walk, and the result scaled by 1/4), all in float as the engine computes it.
 *
 * Score (the engine's raw-query estimator): the query (not its residual) is rotated; its 4-coordinate
 * segments give a table of 16 partial sums each; a row's binary score is the sum of the table entries
 * its code's nibbles select; the estimate is
 *     (binary - sum(rotated query) / 2) * scale + add + query_factor
 * with query_factor the query's distance to the partition's centroid (l2: squared; dot: 1 - q.c,
 * minus 1).  Rows in whole blocks of 32 are scored as the engine's SIMD path scores them: the table
 * quantized to u8 between its least and largest entry, the integer sum mapped back as sum * (max -
 * min) / 255 + (code_dim / 4) * min; the rows after the last block from the float table.  The
 * estimate is a squared L2 distance (l2; cosine on the normalized query) or 1 - q.v (dot), and is
 * converted to lt_vdist's scale: l2 the signed square root (an estimate may be negative), cosine as
 * it is (the engine reports it as the cosine distance), dot minus 1.
 */
#ifndef LT_RQ_H
#define LT_RQ_H

#include <stdbool.h>
#include <stdint.h>

#include "index/lt_index_file.h"
#include "util/lt_status.h"
#include "vector/lt_topk.h"

typedef struct lt_rq
{
	uint32_t	dim;			/* the vectors' dimension */
	uint32_t	code_dim;		/* rotated dimension (>= dim, a multiple of 8) */
	uint32_t	code_bytes;		/* code_dim / 8 */
	uint8_t    *signs;			/* 4 rounds of ceil(code_dim / 8) bytes */
	const lt_field *code_field;	/* _rabit_codes */
	const lt_field *add_field;	/* __add_factors */
	const lt_field *scale_field;	/* __scale_factors */
	/* scratch of one partition's query */
	float	   *rotated;		/* code_dim */
	float	   *table;			/* code_dim * 4: 16 entries per 4 coordinates */
	uint8_t    *qtable;			/* the table quantized to u8 */
	uint8_t    *code;			/* one row's code */
} lt_rq;

/*
 * The RaBitQ storage of aux for vectors of dim.  LT_EUNSUPPORTED for forms not read here (multi-bit
 * codes, a dense rotation matrix, the residual-query estimator of earlier engines); LT_ECORRUPT naming
 * the file when the metadata or the columns do not hold together.
 */
lt_code		lt_rq_open(lt_index_file *aux, uint32_t dim, lt_rq **out, lt_error *err);
void		lt_rq_free(lt_rq *rq);

/* The fast rotation of v (dim floats) into out (code_dim floats), as the engine rotates. */
void		lt_rq_rotate(const lt_rq *rq, const float *v, float *out);

/* Byte j of row r's code among the len rows of a partition's packed codes (code_bytes a row). */
uint8_t		lt_rq_packed_byte(const uint8_t *codes, uint32_t len, uint32_t code_bytes, uint32_t r, uint32_t j);

/* The len row-major codes of a partition (rows) packed as the engine packs them into out (len * code_bytes). */
void		lt_rq_pack(const uint8_t *rows, uint32_t len, uint32_t code_bytes, uint8_t *out);

struct lt_ivf;

/*
 * Score every row of partition p (IVF_RQ storage open in ix->rq) against q; as
 * lt_ivf_search_partition (scores in lt_vdist's scale of the index's metric).
 */
lt_code		lt_rq_search_partition(struct lt_ivf *ix, uint32_t p, const float *q,
								   bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
								   uint64_t *scored, lt_error *err);

#endif
