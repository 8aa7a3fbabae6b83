/*
 * lt_rq_build.c — the RaBitQ quantizer of an IVF_RQ build: rotation, codes, factors, storage (lt_rq_build.h).
 */
#include "vector/lt_rq_build.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "vector/lt_rq.h"

#define RQ_ROUNDS 4
/* the engine's error bound constant */
#define RQ_ERROR_EPSILON 1.9f

const char *
lt_rq_unfit(uint32_t dim)
{
	if (dim == 0 || dim % 8 != 0)
		return "IVF_RQ needs a dimension divisible by 8";
	return NULL;
}

static inline float
ratio(float num, float den)
{
	return den == 0.0f ? 0.0f : num / den;
}

lt_code
lt_rq_train_encode(lt_rq_model *rq, const float *vecs, int64_t n, const float *centroids, uint32_t k,
				   const uint32_t *assign, bool dot, uint64_t *rng, lt_error *err)
{
	lt_rq		rot = {0};
	size_t		n_signs;
	float	   *crot = NULL,
			   *res = NULL,
			   *rrot = NULL;
	lt_code		rc = LT_OK;

	rq->code_dim = rq->dim;
	rq->code_bytes = rq->code_dim / 8;
	n_signs = (size_t) RQ_ROUNDS * rq->code_bytes;
	lt_field_fixed_list(&rq->code, "_rabit_codes", 1, rq->code_bytes, true, LT_TYPE_UINT8, "uint8", 1);
	lt_field_plain(&rq->add, "__add_factors", 2, LT_TYPE_FLOAT32, "float", 4, true);
	lt_field_plain(&rq->scale, "__scale_factors", 3, LT_TYPE_FLOAT32, "float", 4, true);
	lt_field_plain(&rq->error, "__error_factors", 4, LT_TYPE_FLOAT32, "float", 4, true);
	rq->signs = lt_malloc(n_signs);
	rq->codes = lt_malloc((size_t) (n ? n : 1) * rq->code_bytes);
	rq->factors = lt_malloc((size_t) (n ? n : 1) * 3 * sizeof(float));
	crot = lt_malloc((size_t) k * rq->code_dim * sizeof(float));
	res = lt_malloc((size_t) rq->code_dim * sizeof(float));
	rrot = lt_malloc((size_t) rq->code_dim * sizeof(float));
	if (!rq->signs || !rq->codes || !rq->factors || !crot || !res || !rrot)
	{
		rc = lt_nomem(err);
		goto done;
	}
	for (size_t i = 0; i < n_signs; i += 8)
	{
		uint64_t	x = lt_splitmix64(rng);

		for (size_t j = i; j < n_signs && j < i + 8; j++, x >>= 8)
			rq->signs[j] = (uint8_t) x;
	}
	rot.dim = rq->dim;
	rot.code_dim = rq->code_dim;
	rot.code_bytes = rq->code_bytes;
	rot.signs = rq->signs;
	for (uint32_t c = 0; c < k; c++)
		lt_rq_rotate(&rot, centroids + (size_t) c * rq->dim, crot + (size_t) c * rq->code_dim);
	for (int64_t i = 0; i < n; i++)
	{
		const float *v = vecs + (size_t) i * rq->dim;
		const float *c = centroids + (size_t) assign[i] * rq->dim;
		const float *cr = crot + (size_t) assign[i] * rq->code_dim;
		uint8_t    *code = rq->codes + (size_t) i * rq->code_bytes;
		float	   *f = rq->factors + (size_t) i * 3;
		float		norm = 0,
					brd = 0,
					bcd = 0,
					rcd = 0,
					corr,
					err_f = 0;

		for (uint32_t d = 0; d < rq->dim; d++)
		{
			res[d] = v[d] - c[d];
			norm += res[d] * res[d];
		}
		lt_rq_rotate(&rot, res, rrot);
		memset(code, 0, rq->code_bytes);
		for (uint32_t d = 0; d < rq->code_dim; d++)
		{
			bool		pos = !signbit(rrot[d]);
			float		fd = pos ? 0.5f : -0.5f;

			if (pos)
				code[d / 8] |= (uint8_t) (1u << (d % 8));
			brd += rrot[d] * fd;
			bcd += cr[d] * fd;
			rcd += rrot[d] * cr[d];
		}
		corr = ratio(norm * bcd, brd);
		if (rq->code_dim > 1 && norm > 0 && brd != 0)
		{
			float		align = norm * ((float) rq->code_dim * 0.25f) / (brd * brd);
			float		ang = sqrtf(fmaxf(align - 1.0f, 0.0f) / ((float) rq->code_dim - 1.0f));

			err_f = sqrtf(norm) * RQ_ERROR_EPSILON * ang;
			if (!dot)
				err_f *= 2.0f;
		}
		if (dot)
		{
			f[0] = (1.0f - rcd) + corr;
			f[1] = ratio(-norm, brd);
		}
		else
		{
			f[0] = norm + 2.0f * corr;
			f[1] = ratio(-2.0f * norm, brd);
		}
		f[2] = err_f;
		if ((i & 0xffff) == 0xffff && (rc = lt_check_interrupt(err, "building an IVF_RQ index")) != LT_OK)
			break;
	}
done:
	lt_free(crot);
	lt_free(res);
	lt_free(rrot);
	return rc;
}

lt_code
lt_rq_fill_partition(const lt_rq_model *rq, const int64_t *rows, int64_t n, lt_array **cols, lt_error *err)
{
	lt_array   *bytes = cols[0]->children[0];
	uint8_t    *plain = lt_malloc((size_t) (n ? n : 1) * rq->code_bytes);

	if (!plain)
		return lt_nomem(err);
	for (int i = 0; i < 4; i++)
		lt_array_clear(cols[i]);
	if (lt_array_reserve(cols[0], n, err) != LT_OK || lt_array_reserve(bytes, n * rq->code_bytes, err) != LT_OK)
	{
		lt_free(plain);
		return err->code;
	}
	for (int i = 1; i < 4; i++)
		if (lt_array_reserve(cols[i], n, err) != LT_OK)
		{
			lt_free(plain);
			return err->code;
		}
	for (int64_t r = 0; r < n; r++)
	{
		memcpy(plain + (size_t) r * rq->code_bytes, rq->codes + (size_t) rows[r] * rq->code_bytes, rq->code_bytes);
		for (int i = 0; i < 3; i++)
			memcpy(cols[1 + i]->values + (size_t) r * 4, &rq->factors[(size_t) rows[r] * 3 + i], 4);
	}
	lt_rq_pack(plain, (uint32_t) n, rq->code_bytes, bytes->values);
	lt_free(plain);
	bytes->length = n * rq->code_bytes;
	for (int i = 0; i < 4; i++)
		cols[i]->length = n;
	return LT_OK;
}

lt_code
lt_rq_put_storage(const lt_rq_model *rq, lt_file_writer *w, lt_error *err)
{
	size_t		n_signs = (size_t) RQ_ROUNDS * rq->code_bytes;
	size_t		cap = 256 + n_signs * 4;
	char	   *meta = lt_malloc(cap);
	size_t		at;
	lt_code		rc;

	if (!meta)
		return lt_nomem(err);
	at = (size_t) snprintf(meta, cap, "[\"{\\\"rotate_mat_position\\\":null,\\\"fast_rotation_signs\\\":[");
	for (size_t i = 0; i < n_signs; i++)
		at += (size_t) snprintf(meta + at, cap - at, "%s%u", i ? "," : "", rq->signs[i]);
	snprintf(meta + at, cap - at, "],\\\"rotation_type\\\":\\\"fast\\\",\\\"code_dim\\\":%u,\\\"num_bits\\\":1,"
			 "\\\"packed\\\":true,\\\"query_estimator\\\":\\\"raw_query\\\"}\"]", rq->code_dim);
	rc = lt_file_writer_add_metadata_text(w, "storage_metadata", meta, err);
	lt_free(meta);
	return rc;
}

void
lt_rq_model_free(lt_rq_model *rq)
{
	lt_free(rq->signs);
	lt_free(rq->codes);
	lt_free(rq->factors);
	rq->signs = NULL;
	rq->codes = NULL;
	rq->factors = NULL;
}
