/*
 * lt_rq_build.h — the RaBitQ quantizer of an IVF_RQ index built as Lance 8 and 12 build theirs (1-bit codes, the
 * fast rotation, the raw-query estimator; implemented in lt_rq_build.c, driven by lt_ivf_build.c; the layout
 * lt_rq.h reads).
 *
 * The rotation: 4 rounds of code_dim sign bits (code_dim = dim, a multiple of 8) drawn from the build's seeded
 * generator (the engine draws them unseeded; they are stored, so any draw reads back).  Each vector v of
 * partition c: its residual r = v - c (float32; normalized vectors for cosine), rotated as lt_rq_rotate does, and
 * the centroid rotated the same way; bit i of the code is whether r_rot[i] >= +0; with f_i = +-0.5 by that bit,
 * norm = |v - c|^2 (the IVF distance; dot: |r|^2), brd = sum r_rot[i] f_i, bcd = sum c_rot[i] f_i,
 * corr = norm * bcd / brd (0 when brd is 0):
 *   l2, cosine:  add = norm + 2 corr,                scale = -2 norm / brd
 *   dot:         add = 1 - sum r_rot[i] c_rot[i] + corr,  scale = -norm / brd
 *   error = sqrt(norm) * 1.9 * sqrt(max(0, norm * code_dim / 4 / brd^2 - 1) / (code_dim - 1)), twice that for
 *           l2 (0 when code_dim <= 1, norm <= 0 or brd = 0)
 * (float32 arithmetic; the engine's factors, which lt_rq.h's estimate reads: the engine's search over these codes
 * is lt_fdw's).  Storage, in auxiliary.idx: _rowid, _rabit_codes fixed_size_list<uint8, code_dim / 8> packed per
 * partition (lt_rq_pack), __add_factors, __scale_factors, __error_factors float32, and storage_metadata.
 */
#ifndef LT_RQ_BUILD_H
#define LT_RQ_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "file/lt_writer.h"
#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

typedef struct lt_rq_model
{
	uint32_t	dim;
	uint32_t	code_dim;
	uint32_t	code_bytes;
	uint8_t    *signs;			/* 4 * code_bytes */
	uint8_t    *codes;			/* n * code_bytes, row-major (packed when written) */
	float	   *factors;		/* n * 3: add, scale, error */
	/* the columns the auxiliary file declares after _rowid */
	lt_fixed_list_field code;
	lt_field	add;
	lt_field	scale;
	lt_field	error;
} lt_rq_model;

/* Why vectors of dim cannot be RaBitQ-coded (a static message), or NULL. */
const char *lt_rq_unfit(uint32_t dim);

/*
 * Draw the rotation (rng: the build's splitmix64 state, advanced) and code all n vectors (vecs: n * dim floats,
 * normalized for cosine) against centroids[assign[i]]; dot: the dot factors.  Cancel: polled between batches.
 */
lt_code		lt_rq_train_encode(lt_rq_model *rq, const float *vecs, int64_t n, const float *centroids, uint32_t k,
							   const uint32_t *assign, bool dot, uint64_t *rng, lt_error *err);

/* The columns of rows[0..n) (one partition, in storage order) into cols[0..4): codes (packed), add, scale, error. */
lt_code		lt_rq_fill_partition(const lt_rq_model *rq, const int64_t *rows, int64_t n, lt_array **cols, lt_error *err);

/* storage_metadata of the auxiliary file. */
lt_code		lt_rq_put_storage(const lt_rq_model *rq, lt_file_writer *w, lt_error *err);

void		lt_rq_model_free(lt_rq_model *rq);

#endif
