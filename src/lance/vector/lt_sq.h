/*
 * lt_sq.h — the scalar quantizer (SQ, 8 bits) of Lance's IVF_SQ indexes: searched as the engine
 * searches it, and built as the engine builds it (implemented in lt_sq.c; lt_ivf.c and lt_ivf_build.c
 * call in).  Its storage is opened by lt_sq_codes_open (lt_sq_codes.h), as IVF_HNSW_SQ's is.
 *
 * Storage, in auxiliary.idx: column __sq_code fixed_size_list<uint8, dim> (one byte per element, rows
 * grouped by partition, not transposed) and schema metadata storage_metadata =
 * ["{\"dim\":D,\"num_bits\":8,\"bounds\":{\"start\":S,\"end\":E}}"].  An element's code is
 * (x - S) * 255 / (E - S) cast to u8 as Rust does (truncated, saturating, NaN 0; all 0 when S = E).
 * No residual: the vectors themselves (normalized for cosine).
 *
 * Search (the engine's): l2 and cosine code the query (normalized for cosine) the same way and score
 * the integer sum of squared code differences, as a float times (E - S)^2 / 255^2 (float arithmetic);
 * dot scores 1 - the query's dot product with the dequantized codes (S + code * (E - S) / 255), as
 * Lance 12 does (Lance 8 scored 1 - the dot product of the codes themselves, which does not rank by
 * dot product: its answers on a dot IVF_SQ differ from lt_fdw's and Lance 12's).  Converted to
 * lt_vdist's scale as for PQ: l2 the square root, cosine half, dot minus 1.
 *
 * Build: S and E are the least and largest element of a sample of sample_rate * 256 vectors (the
 * engine's sample size).
 */
#ifndef LT_SQ_H
#define LT_SQ_H

#include <stdbool.h>
#include <stdint.h>

#include "file/lt_writer.h"
#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"
#include "vector/lt_ivf.h"

/* Score every row of partition p (its rows: lt_ivf_partition_rows) against q; as lt_ivf_search_partition. */
lt_code		lt_sq_search_partition(lt_ivf *ix, uint32_t p, const lt_ivf_rows *rows, const float *q,
								   bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
								   uint64_t *scored, lt_error *err);

/* ---- building ---- */

typedef struct lt_sq_model
{
	uint32_t	dim;
	double		start;
	double		end;
	uint8_t    *codes;			/* n * dim, row-major */
	lt_fixed_list_field code;	/* __sq_code */
} lt_sq_model;

/* The bounds from a sample (rng: the build's splitmix64 state) and the codes of all n vectors. */
lt_code		lt_sq_train_encode(lt_sq_model *sq, const float *vecs, int64_t n, uint32_t sample_rate, uint64_t *rng,
							   lt_error *err);
/* The __sq_code field of sq (dim set): training does it, a remap too. */
void		lt_sq_model_declare(lt_sq_model *sq);
/* The codes of rows[0..n) into codes (a __sq_code array). */
lt_code		lt_sq_fill(const lt_sq_model *sq, const int64_t *rows, int64_t n, lt_array *codes, lt_error *err);
/* storage_metadata of the auxiliary file. */
lt_code		lt_sq_put_storage(const lt_sq_model *sq, lt_file_writer *w, lt_error *err);
void		lt_sq_model_free(lt_sq_model *sq);

#endif
