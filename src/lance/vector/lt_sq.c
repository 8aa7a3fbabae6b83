/*
 * lt_sq.c — IVF_SQ storage: reading, searching and building (lt_sq.h).
 */
#include "vector/lt_sq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_value.h"
#include "util/lt_random.h"

lt_code
lt_sq_search_partition(lt_ivf *ix, uint32_t p, const lt_ivf_rows *rows, const float *q,
					   bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk, uint64_t *scored,
					   lt_error *err)
{
	uint32_t	len = ix->part_len[p],
				dim = ix->dim;
	uint8_t    *qc = lt_malloc(dim);
	double		range = ix->sq.hi - ix->sq.lo,
				norm = 0;
	float		fr = (float) range;
	float		factor = fr * fr;
	float		s0 = (float) ix->sq.lo,
				step = (float) (range / 255.0);
	lt_code		rc;

	if (qc == NULL)
		return lt_nomem(err);
	if (ix->metric == LT_VMETRIC_COSINE)
	{
		for (uint32_t i = 0; i < dim; i++)
			norm += (double) q[i] * q[i];
		norm = sqrt(norm);
	}
	for (uint32_t i = 0; i < dim; i++)
	{
		float		x = ix->metric == LT_VMETRIC_COSINE && norm > 0 ? (float) (q[i] / norm) : q[i];

		/* the engine normalizes a float16 query in float16: the normalized items rounded to it */
		if (ix->metric == LT_VMETRIC_COSINE && ix->elem == LT_TYPE_FLOAT16)
			x = lt_half_to_float(lt_float_to_half(x));
		qc[i] = lt_sq_code(x, ix->sq.lo, range);
	}
	if ((rc = lt_ivf_seq_reserve(ix, len, err)) != LT_OK)
		goto done;
	for (uint32_t r = 0; r < len; r++)
	{
		const uint8_t *c = rows->codes + (size_t) r * dim;
		uint64_t	id;
		uint32_t	sum = 0;
		float		d;
		double		s;

		if (rows->ids_arr && !lt_array_is_valid(rows->ids_arr, r))
			continue;
		memcpy(&id, rows->ids + r, 8);
		if (accept && !accept(id, arg))
			continue;
		if (ix->metric == LT_VMETRIC_NEG_DOT)
		{
			/* the query against the dequantized codes, as Lance 12 scores dot */
			float		dot = 0;

			for (uint32_t i = 0; i < dim; i++)
				dot += q[i] * (s0 + (float) c[i] * step);
			s = -(double) dot;
		}
		else
		{
			for (uint32_t i = 0; i < dim; i++)
			{
				int			x = (int) c[i] - (int) qc[i];

				sum += (uint32_t) (x * x);
			}
			d = (float) sum * factor / 65025.0f;
			/* l2: the square root of the squared distance; cosine: half the normalized squared L2 */
			s = ix->metric == LT_VMETRIC_L2 ? (d > 0 ? sqrt((double) d) : 0) : (double) d / 2;
		}
		lt_ivf_offer(ix, topk, s, id);
		if (scored)
			(*scored)++;
	}
	rc = LT_OK;
done:
	lt_free(qc);
	return rc;
}

/* ---- building ------------------------------------------------------------------------ */

void
lt_sq_model_declare(lt_sq_model *sq)
{
	lt_field_fixed_list(&sq->code, "__sq_code", 1, sq->dim, true, LT_TYPE_UINT8, "uint8", 1);
}

lt_code
lt_sq_train_encode(lt_sq_model *sq, const float *vecs, int64_t n, uint32_t sample_rate, uint64_t *rng,
				   lt_error *err)
{
	int64_t		want = (int64_t) sample_rate * 256;
	int64_t		m = n < want ? n : want;
	int64_t    *sample = NULL;
	double		lo = INFINITY,
				hi = -INFINITY,
				range;
	lt_code		rc = LT_OK;

	lt_sq_model_declare(sq);
	sq->codes = lt_malloc((size_t) (n ? n : 1) * sq->dim);
	sample = lt_malloc((size_t) (n ? n : 1) * sizeof(int64_t));
	if (!sq->codes || !sample)
	{
		rc = lt_nomem(err);
		goto done;
	}
	lt_sample_indices(sample, n, m, rng);
	for (int64_t i = 0; i < m; i++)
	{
		const float *v = vecs + (size_t) sample[i] * sq->dim;

		for (uint32_t d = 0; d < sq->dim; d++)
		{
			if (v[d] < lo)
				lo = v[d];
			if (v[d] > hi)
				hi = v[d];
		}
	}
	if (m == 0)
		lo = hi = 0;
	sq->start = lo;
	sq->end = hi;
	range = hi - lo;
	for (int64_t i = 0; i < n; i++)
	{
		const float *v = vecs + (size_t) i * sq->dim;

		for (uint32_t d = 0; d < sq->dim; d++)
			sq->codes[(size_t) i * sq->dim + d] = lt_sq_code(v[d], lo, range);
		if ((i & 0xffff) == 0xffff && (rc = lt_check_interrupt(err, "building an IVF_SQ index")) != LT_OK)
			break;
	}
done:
	lt_free(sample);
	return rc;
}

lt_code
lt_sq_fill(const lt_sq_model *sq, const int64_t *rows, int64_t n, lt_array *codes, lt_error *err)
{
	lt_array   *bytes = codes->children[0];

	lt_array_clear(codes);
	LT_TRY(lt_array_reserve(codes, n, err));
	LT_TRY(lt_array_reserve(bytes, n * sq->dim, err));
	for (int64_t r = 0; r < n; r++)
		memcpy(bytes->values + (size_t) r * sq->dim, sq->codes + (size_t) rows[r] * sq->dim, sq->dim);
	bytes->length = n * sq->dim;
	codes->length = n;
	return LT_OK;
}

lt_code
lt_sq_put_storage(const lt_sq_model *sq, lt_file_writer *w, lt_error *err)
{
	char		meta[256];

	snprintf(meta, sizeof(meta), "[\"{\\\"dim\\\":%u,\\\"num_bits\\\":8,\\\"bounds\\\":{\\\"start\\\":%.17g,\\\"end\\\":%.17g}}\"]",
			 sq->dim, sq->start, sq->end);
	return lt_file_writer_add_metadata_text(w, "storage_metadata", meta, err);
}

void
lt_sq_model_free(lt_sq_model *sq)
{
	lt_free(sq->codes);
	sq->codes = NULL;
}
