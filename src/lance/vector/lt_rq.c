/*
 * lt_rq.c — IVF_RQ (RaBitQ) storage: reading and scoring (lt_rq.h).
 */
#include "vector/lt_rq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_value.h"
#include "vector/lt_ivf.h"

#define RQ_ROUNDS 4
#define RQ_BATCH 32

/*
 * Where row i (< 16) of a block of 32 has its nibbles: the inverse of the engine's packing order PERM0
 * = {0, 8, 1, 9, ..., 7, 15} (checked against Lance 12's scores row by row)
 */
static const uint8_t perm0_inverse[16] = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};

/*
 * The storage metadata without its JSON-string escapes (it is a JSON list holding the object as a
 * string), NUL-terminated, so that plain patterns find its keys.
 */
static char *
unescaped_meta(const uint8_t *m, size_t len)
{
	char	   *s = lt_malloc(len + 1);
	size_t		n = 0;

	if (s == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++)
		if (m[i] != '\\' && m[i] != 0)
			s[n++] = (char) m[i];
	s[n] = 0;
	return s;
}

/* Where "key": starts its value in s, or NULL. */
static const char *
meta_value(const char *s, const char *key)
{
	char		pat[64];
	const char *at;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	at = strstr(s, pat);
	return at ? at + strlen(pat) : NULL;
}

static bool
meta_long(const char *s, const char *key, long *out)
{
	const char *v = meta_value(s, key);
	char	   *end;

	if (v == NULL)
		return false;
	*out = strtol(v, &end, 10);
	return end != v;
}

static bool
meta_is(const char *s, const char *key, const char *value)
{
	const char *v = meta_value(s, key);

	return v != NULL && strncmp(v, value, strlen(value)) == 0;
}

lt_code
lt_rq_open(lt_index_file *aux, uint32_t dim, lt_rq **out, lt_error *err)
{
	size_t		len;
	const uint8_t *m = lt_index_file_meta(aux, "storage_metadata", &len);
	const char *path = lt_index_file_path(aux);
	char	   *s = NULL;
	const char *v;
	lt_rq	   *rq = NULL;
	long		code_dim,
				bits;
	size_t		n_signs,
				i = 0;
	lt_code		rc;

	*out = NULL;
	if (m == NULL)
		return lt_corrupt(err, "%s: no RaBitQ storage_metadata", path);
	if ((s = unescaped_meta(m, len)) == NULL)
		return lt_nomem(err);
	if (!meta_long(s, "num_bits", &bits) || !meta_long(s, "code_dim", &code_dim) ||
		(!meta_is(s, "packed", "true") && !meta_is(s, "packed", "false")))
	{
		rc = lt_corrupt(err, "%s: no RaBitQ storage_metadata (code_dim, num_bits, packed)", path);
		goto done;
	}
	if (bits != 1 || !meta_is(s, "rotation_type", "\"fast\"") || !meta_is(s, "query_estimator", "\"raw_query\"") ||
		!meta_is(s, "packed", "true"))
	{
		rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: RaBitQ storage of %ld bits (%s rotation, %s estimator%s): only "
						  "Lance 12's 1-bit codes, fast rotation, raw-query estimator are read", path, bits,
						  meta_is(s, "rotation_type", "\"fast\"") ? "fast" : "a matrix",
						  meta_is(s, "query_estimator", "\"raw_query\"") ? "raw-query" : "residual-query",
						  meta_is(s, "packed", "true") ? "" : ", unpacked");
		goto done;
	}
	if (code_dim < (long) dim || code_dim % 8 != 0 || code_dim > (1L << 20))
	{
		rc = lt_corrupt(err, "%s: RaBitQ code_dim %ld for vectors of %u", path, code_dim, dim);
		goto done;
	}
	if ((rc = lt_rq_new(dim, (uint32_t) code_dim, NULL, &rq, err)) != LT_OK)
		goto done;
	n_signs = (size_t) RQ_ROUNDS * rq->code_bytes;
	/* the signs: a JSON list of bytes */
	v = meta_value(s, "fast_rotation_signs");
	if (v == NULL || *v != '[')
	{
		rc = lt_corrupt(err, "%s: RaBitQ storage_metadata without fast_rotation_signs", path);
		goto done;
	}
	v++;
	while (*v != ']')
	{
		char	   *end;
		long		b = strtol(v, &end, 10);

		if (end == v || b < 0 || b > 255 || i >= n_signs)
			break;
		rq->signs[i++] = (uint8_t) b;
		v = end;
		if (*v == ',')
			v++;
	}
	if (*v != ']' || i != n_signs)
	{
		rc = lt_corrupt(err, "%s: RaBitQ fast_rotation_signs are not %zu bytes for code_dim %u", path, n_signs,
						rq->code_dim);
		goto done;
	}
	rc = lt_rq_bind(rq, aux, err);
done:
	lt_free(s);
	if (rc != LT_OK)
		lt_rq_free(rq);
	else
		*out = rq;
	return rc;
}

lt_code
lt_rq_new(uint32_t dim, uint32_t code_dim, const uint8_t *signs, lt_rq **out, lt_error *err)
{
	lt_rq	   *rq;

	*out = NULL;
	if ((rq = lt_calloc(1, sizeof(lt_rq))) == NULL)
		return lt_nomem(err);
	rq->dim = dim;
	rq->code_dim = code_dim;
	rq->code_bytes = code_dim / 8;
	rq->signs = lt_malloc((size_t) RQ_ROUNDS * rq->code_bytes);
	rq->rotated = lt_malloc(sizeof(float) * rq->code_dim);
	rq->table = lt_malloc(sizeof(float) * rq->code_dim * 4);
	rq->qtable = lt_malloc((size_t) rq->code_dim * 4);
	rq->code = lt_malloc(rq->code_bytes);
	if (!rq->signs || !rq->rotated || !rq->table || !rq->qtable || !rq->code)
	{
		lt_rq_free(rq);
		return lt_nomem(err);
	}
	if (signs)
		memcpy(rq->signs, signs, (size_t) RQ_ROUNDS * rq->code_bytes);
	*out = rq;
	return LT_OK;
}

lt_code
lt_rq_bind(lt_rq *rq, lt_index_file *aux, lt_error *err)
{
	LT_TRY(lt_index_file_fixed_list(aux, "_rabit_codes", LT_TYPE_UINT8, rq->code_bytes, &rq->code_field, err));
	LT_TRY(lt_index_file_field(aux, "__add_factors", LT_TYPE_FLOAT32, &rq->add_field, err));
	return lt_index_file_field(aux, "__scale_factors", LT_TYPE_FLOAT32, &rq->scale_field, err);
}

void
lt_rq_free(lt_rq *rq)
{
	if (rq == NULL)
		return;
	lt_free(rq->signs);
	lt_free(rq->rotated);
	lt_free(rq->table);
	lt_free(rq->qtable);
	lt_free(rq->code);
	lt_free(rq);
}

/* In-place Walsh-Hadamard transform of n (a power of two) floats, butterflies in the engine's order. */
static void
fwht(float *x, uint32_t n)
{
	for (uint32_t half = 1; half < n; half *= 2)
		for (uint32_t i = 0; i < n; i += 2 * half)
			for (uint32_t j = i; j < i + half; j++)
			{
				float		a = x[j],
							b = x[j + half];

				x[j] = a + b;
				x[j + half] = a - b;
			}
}

static void
flip_signs(float *x, uint32_t n, const uint8_t *signs)
{
	for (uint32_t i = 0; i < n; i++)
		if ((signs[i / 8] >> (i % 8)) & 1)
			x[i] = -x[i];
}

static void
rescale(float *x, uint32_t n, float f)
{
	for (uint32_t i = 0; i < n; i++)
		x[i] *= f;
}

void
lt_rq_rotate(const lt_rq *rq, const float *v, float *out)
{
	uint32_t	n = rq->code_dim,
				per_round = rq->code_bytes,
				trunc = 1;
	float		scale;

	memset(out, 0, sizeof(float) * n);
	memcpy(out, v, sizeof(float) * rq->dim);
	while (trunc * 2 <= n)
		trunc *= 2;
	scale = 1.0f / sqrtf((float) trunc);
	if (trunc == n)
	{
		for (uint32_t r = 0; r < RQ_ROUNDS; r++)
		{
			flip_signs(out, n, rq->signs + (size_t) r * per_round);
			fwht(out, n);
			rescale(out, n, scale);
		}
		return;
	}
	/* not a power of two: the head and the tail in turn, each round ending in a Kac walk */
	for (uint32_t r = 0; r < RQ_ROUNDS; r++)
	{
		float	   *part = r % 2 == 0 ? out : out + (n - trunc);
		uint32_t	half = n / 2;

		flip_signs(out, n, rq->signs + (size_t) r * per_round);
		fwht(part, trunc);
		rescale(part, trunc, scale);
		for (uint32_t i = 0; i < half; i++)
		{
			float		a = out[i],
						b = out[i + half];

			out[i] = a + b;
			out[i + half] = a - b;
		}
	}
	rescale(out, n, 0.25f);
}

/* A float rounded to float16 and back (the engines' arithmetic on float16 arrays). */
static inline float
f16r(float x)
{
	return lt_half_to_float(lt_float_to_half(x));
}

/* A float rounded and cast to u8 as Rust's `as u8` does (saturating; NaN is 0). */
static inline uint8_t
sat_u8(float x)
{
	x = roundf(x);
	return !(x > 0) ? 0 : x >= 255 ? 255 : (uint8_t) x;
}

/* Byte j of row r's code among len rows of a partition's packed codes. */
static inline uint8_t
packed_byte(const uint8_t *codes, uint32_t len, uint32_t code_bytes, uint32_t r, uint32_t j)
{
	uint32_t	whole = len - len % RQ_BATCH;

	if (r < whole)
	{
		const uint8_t *blk = codes + (size_t) (r / RQ_BATCH) * RQ_BATCH * code_bytes + (size_t) j * RQ_BATCH;
		uint32_t	in = r % RQ_BATCH;

		if (in < 16)
		{
			uint32_t	idx = perm0_inverse[in];

			return (uint8_t) ((blk[idx] & 0x0F) | (blk[idx + 16] << 4));
		}
		else
		{
			uint32_t	idx = perm0_inverse[in - 16];

			return (uint8_t) ((blk[idx] >> 4) | (blk[idx + 16] & 0xF0));
		}
	}
	return codes[(size_t) whole * code_bytes + (size_t) j * (len - whole) + (r - whole)];
}

uint8_t
lt_rq_packed_byte(const uint8_t *codes, uint32_t len, uint32_t code_bytes, uint32_t r, uint32_t j)
{
	return packed_byte(codes, len, code_bytes, r, j);
}

void
lt_rq_pack(const uint8_t *rows, uint32_t len, uint32_t code_bytes, uint8_t *out)
{
	uint32_t	whole = len - len % RQ_BATCH;

	memset(out, 0, (size_t) len * code_bytes);
	for (uint32_t r = 0; r < whole; r++)
		for (uint32_t j = 0; j < code_bytes; j++)
		{
			uint8_t    *blk = out + (size_t) (r / RQ_BATCH) * RQ_BATCH * code_bytes + (size_t) j * RQ_BATCH;
			uint8_t		c = rows[(size_t) r * code_bytes + j];
			uint32_t	in = r % RQ_BATCH;

			/* packed_byte's inverse: rows 0-15 of a block in the low nibbles, 16-31 in the high ones */
			if (in < 16)
			{
				uint32_t	idx = perm0_inverse[in];

				blk[idx] |= c & 0x0F;
				blk[idx + 16] |= c >> 4;
			}
			else
			{
				uint32_t	idx = perm0_inverse[in - 16];

				blk[idx] |= (uint8_t) (c << 4);
				blk[idx + 16] |= c & 0xF0;
			}
		}
	for (uint32_t r = whole; r < len; r++)
		for (uint32_t j = 0; j < code_bytes; j++)
			out[(size_t) whole * code_bytes + (size_t) j * (len - whole) + (r - whole)] = rows[(size_t) r * code_bytes + j];
}

/* The query's distance to centroid c as the engine's IVF routing computes it, and its query factor. */
static float
query_factor(const lt_ivf *ix, const float *q, const float *c)
{
	float		d = 0;

	if (ix->metric == LT_VMETRIC_NEG_DOT)
	{
		for (uint32_t i = 0; i < ix->dim; i++)
			d += q[i] * c[i];
		return (1.0f - d) - 1.0f;
	}
	for (uint32_t i = 0; i < ix->dim; i++)
		d += (q[i] - c[i]) * (q[i] - c[i]);
	return d;
}

/* An estimate in the metric's scale (lt_vdist), keeping the order of negative estimates. */
static inline double
rq_scale(const lt_ivf *ix, float d)
{
	switch (ix->metric)
	{
		case LT_VMETRIC_L2:
			return d >= 0 ? sqrt((double) d) : -sqrt(-(double) d);
		case LT_VMETRIC_COSINE:
			/* the engine's estimate is the cosine distance's already */
			return (double) d;
		default:
			return (double) d - 1;
	}
}

lt_code
lt_rq_search_partition(lt_ivf *ix, uint32_t p, const lt_ivf_rows *rows, const float *q,
					   bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk, uint64_t *scored,
					   lt_error *err)
{
	lt_rq	   *rq = ix->rq;
	uint32_t	len = ix->part_len[p],
				cb = rq->code_bytes,
				whole = len - len % RQ_BATCH,
				ntab = rq->code_dim / 4;
	float	   *qn = NULL;
	const float *qq = q;
	float		sum_q = 0,
				qmin = INFINITY,
				qmax = -INFINITY,
				range,
				sum_min,
				qf;
	lt_code		rc;

	if (ix->metric == LT_VMETRIC_COSINE || ix->elem == LT_TYPE_FLOAT16)
	{
		/*
		 * cosine: the normalized query, scored as l2.  float16 vectors: the query in float16, as the
		 * engine casts it to the column's type, and normalized on float16 arrays (each quotient rounded
		 * to float16, as Lance 12's IVF_PQ path does: lt_ivf.c); in float the estimates differ from
		 * Lance 12's by about 1e-3 relative, with Lance 12's norm from Lance 8's by up to 0.5%.
		 */
		bool		f16 = ix->elem == LT_TYPE_FLOAT16;
		double		norm = 0;

		if ((qn = lt_malloc(sizeof(float) * ix->dim)) == NULL)
		{
			rc = lt_nomem(err);
			goto done;
		}
		for (uint32_t i = 0; i < ix->dim; i++)
		{
			qn[i] = f16 ? f16r(q[i]) : q[i];
			norm += (double) qn[i] * qn[i];
		}
		/* Lance 8 takes the norm of a float16 query on float16 values: its sum of squares and root rounded */
		norm = f16 && ix->f16_engine == 8 ? f16r(sqrtf(f16r((float) norm))) : sqrt(norm);
		if (ix->metric == LT_VMETRIC_COSINE && norm > 0)
			for (uint32_t i = 0; i < ix->dim; i++)
				qn[i] = f16 ? f16r(qn[i] / (float) norm) : (float) (qn[i] / norm);
		qq = qn;
	}
	if ((rc = lt_ivf_seq_reserve(ix, len, err)) != LT_OK)
		goto done;

	/* the rotated query, its table of partial sums per 4 coordinates, and the table quantized */
	lt_rq_rotate(rq, qq, rq->rotated);
	for (uint32_t i = 0; i < rq->code_dim; i++)
		sum_q += rq->rotated[i];
	for (uint32_t s = 0; s < ntab; s++)
	{
		float	   *t = rq->table + (size_t) s * 16;
		const float *sub = rq->rotated + (size_t) s * 4;

		t[0] = 0;
		for (uint32_t j = 1; j < 16; j++)
		{
			uint32_t	low = j & (~j + 1);

			t[j] = t[j - low] + sub[__builtin_ctz(j)];
		}
	}
	for (size_t e = 0; e < (size_t) ntab * 16; e++)
	{
		if (rq->table[e] < qmin)
			qmin = rq->table[e];
		if (rq->table[e] > qmax)
			qmax = rq->table[e];
	}
	if (qmax > qmin)
	{
		float		factor = 255.0f / (qmax - qmin);

		for (size_t e = 0; e < (size_t) ntab * 16; e++)
			rq->qtable[e] = sat_u8((rq->table[e] - qmin) * factor);
	}
	else
		memset(rq->qtable, 0, (size_t) ntab * 16);
	range = (qmax - qmin) / 255.0f;
	sum_min = (float) ntab * qmin;
	qf = query_factor(ix, qq, ix->centroids + (size_t) p * ix->dim);

	for (uint32_t r = 0; r < len; r++)
	{
		uint64_t	id;
		float		bin = 0,
					add,
					scale,
					est;

		if (rows->ids_arr && !lt_array_is_valid(rows->ids_arr, r))
			continue;
		memcpy(&id, rows->ids + r, 8);
		if (accept && !accept(id, arg))
			continue;
		if (r < whole)
		{
			uint32_t	sum = 0;

			for (uint32_t j = 0; j < cb; j++)
			{
				uint8_t		b = packed_byte(rows->codes, len, cb, r, j);

				sum += rq->qtable[(2 * j) * 16 + (b & 0x0F)] + rq->qtable[(2 * j + 1) * 16 + (b >> 4)];
			}
			bin = (float) sum * range + sum_min;
		}
		else
			for (uint32_t j = 0; j < cb; j++)
			{
				uint8_t		b = packed_byte(rows->codes, len, cb, r, j);

				bin += rq->table[(2 * j) * 16 + (b & 0x0F)] + rq->table[(2 * j + 1) * 16 + (b >> 4)];
			}
		memcpy(&add, rows->add + r, 4);
		memcpy(&scale, rows->scale + r, 4);
		est = (bin + -0.5f * sum_q) * scale + add + qf;
		lt_ivf_offer(ix, topk, rq_scale(ix, est), id);
		if (scored)
			(*scored)++;
	}
	rc = LT_OK;
done:
	lt_free(qn);
	return rc;
}
