/*
 * lt_pq_build.c — product quantizer training, encoding and storage for IVF_PQ builds (lt_pq_build.h).
 */
#include "vector/lt_pq_build.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proto/lt_vector.pb-c.h"
#include "util/lt_alloc.h"
#include "util/lt_value.h"
#include "util/lt_random.h"

/* Lloyd iterations stop once the loss improves by less than this fraction (as the IVF's) */
#define KMEANS_TOLERANCE 1e-4

uint32_t
lt_pq_default_sub_vectors(uint32_t dim)
{
	if (dim % 16 == 0)
		return dim / 16;
	if (dim % 8 == 0)
		return dim / 8;
	return 1;
}

const char *
lt_pq_unfit(uint32_t dim, uint32_t m, uint32_t bits)
{
	if (bits != 8 && bits != 4)
		return "num_bits must be 8 or 4";
	if (m == 0 || dim % m != 0)
		return "num_sub_vectors must divide the dimension of the vectors";
	if (bits == 4 && m % 2 != 0)
		return "4-bit codes need an even num_sub_vectors";
	return NULL;
}

/* bt (sw * k): the codebook of one sub-vector transposed, element j of every codeword together */
static void
transpose_book(const float *book, uint32_t k, uint32_t sw, float *bt)
{
	for (uint32_t c = 0; c < k; c++)
		for (uint32_t j = 0; j < sw; j++)
			bt[(size_t) j * k + c] = book[(size_t) c * sw + j];
}

/*
 * The nearest of k codewords (bt: transposed) to x by L2, and its squared distance.  The distances
 * of all k codewords grow one element at a time (a loop over the codewords the compiler vectorises
 * without reordering any sum); acc: k floats of scratch.
 */
static inline uint32_t
nearest_code(const float *bt, uint32_t k, uint32_t sw, const float *x, float *acc, float *dist)
{
	uint32_t	best = 0;
	float		bd = FLT_MAX;

	for (uint32_t c = 0; c < k; c++)
		acc[c] = 0;
	for (uint32_t j = 0; j < sw; j++)
	{
		const float *row = bt + (size_t) j * k;
		float		xj = x[j];

		for (uint32_t c = 0; c < k; c++)
			acc[c] += (xj - row[c]) * (xj - row[c]);
	}
	for (uint32_t c = 0; c < k; c++)
		if (acc[c] < bd)
		{
			bd = acc[c];
			best = c;
		}
	if (dist)
		*dist = bd;
	return best;
}

/*
 * Each empty cell takes over half of a populated one (as the engine's k-means, after Faiss): cell j is
 * picked with probability (count_j - 1) / (m - k), scanning from cell 0 round and round, and the two
 * centroids are j's nudged apart by 1/1024 of each element, one up where the other goes down.  With
 * few training vectors per codeword (PQ's 256 codewords per sub-vector) many cells go empty; a restart
 * at a random point lands mostly inside a crowded cell and empties again, where a split refines it.
 */
static void
split_empty(float *book, uint64_t *counts, uint32_t k, uint32_t sw, int64_t m, uint64_t *rng)
{
	const float eps = 1.0f / 1024.0f;

	for (uint32_t c = 0; c < k; c++)
	{
		uint32_t	j = 0;
		float	   *ci = book + (size_t) c * sw,
				   *cj;

		if (counts[c] != 0)
			continue;
		for (uint64_t tries = 0;; tries++)
		{
			double		p = ((double) counts[j] - 1.0) / (double) (m - (int64_t) k);
			double		u = (double) (lt_splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0);

			/* (m > k here, or no cell is empty; the bound only guards against a cell count gone wrong) */
			if (counts[j] > 1 && (u < p || tries > 64ull * k))
				break;
			j = (j + 1) % k;
		}
		counts[c] = counts[j] / 2;
		counts[j] -= counts[c];
		cj = book + (size_t) j * sw;
		for (uint32_t d = 0; d < sw; d++)
		{
			float		up = d % 2 == 0 ? 1.0f + eps : 1.0f - eps,
						down = d % 2 == 0 ? 1.0f - eps : 1.0f + eps;

			ci[d] = cj[d] * up;
			cj[d] *= down;
		}
	}
}

/* Lloyd's k-means by L2 over the m rows of data (m * sw floats) into book (k * sw). */
static lt_code
kmeans(const float *data, int64_t m, uint32_t sw, uint32_t k, uint32_t max_iters, uint64_t *rng, float *book,
	   lt_error *err)
{
	double	   *sums = lt_malloc((size_t) k * sw * sizeof(double));
	uint64_t   *counts = lt_malloc((size_t) k * sizeof(uint64_t));
	float	   *bt = lt_malloc((size_t) k * sw * sizeof(float));
	float	   *acc = lt_malloc((size_t) k * sizeof(float));
	double		prev = DBL_MAX;
	lt_code		rc = LT_OK;

	if (!sums || !counts || !bt || !acc)
	{
		rc = lt_nomem(err);
		goto done;
	}
	/* the sample is in random order already: its first k rows are k random distinct points */
	for (uint32_t c = 0; c < k; c++)
		memcpy(book + (size_t) c * sw, data + (size_t) c * sw, sw * sizeof(float));
	for (uint32_t it = 0; it < max_iters; it++)
	{
		double		loss = 0;

		if ((rc = lt_check_interrupt(err, "building an IVF_PQ index")) != LT_OK)
			goto done;
		memset(sums, 0, (size_t) k * sw * sizeof(double));
		memset(counts, 0, (size_t) k * sizeof(uint64_t));
		transpose_book(book, k, sw, bt);
		for (int64_t i = 0; i < m; i++)
		{
			const float *x = data + (size_t) i * sw;
			float		d;
			uint32_t	c = nearest_code(bt, k, sw, x, acc, &d);

			loss += d;
			counts[c]++;
			for (uint32_t j = 0; j < sw; j++)
				sums[(size_t) c * sw + j] += x[j];
		}
		for (uint32_t c = 0; c < k; c++)
		{
			float	   *cv = book + (size_t) c * sw;

			if (counts[c] == 0)
				continue;
			for (uint32_t j = 0; j < sw; j++)
				cv[j] = (float) (sums[(size_t) c * sw + j] / (double) counts[c]);
		}
		split_empty(book, counts, k, sw, m, rng);
		if (prev != DBL_MAX && fabs(prev - loss) <= KMEANS_TOLERANCE * fabs(prev))
			break;
		prev = loss;
	}
done:
	lt_free(sums);
	lt_free(counts);
	lt_free(bt);
	lt_free(acc);
	return rc;
}

/* Vector i as PQ sees it: itself, or minus its partition's centroid. */
static inline void
pq_input(const float *vecs, int64_t i, uint32_t dim, const float *centroids, const uint32_t *assign,
		 bool residual, float *out)
{
	const float *v = vecs + (size_t) i * dim;

	if (residual)
	{
		const float *c = centroids + (size_t) assign[i] * dim;

		for (uint32_t d = 0; d < dim; d++)
			out[d] = v[d] - c[d];
	}
	else
		memcpy(out, v, dim * sizeof(float));
}

void
lt_pq_model_declare(lt_pq_model *pq)
{
	pq->code_bytes = pq->bits == 4 ? pq->m / 2 : pq->m;
	lt_field_fixed_list(&pq->code, "__pq_code", 1, pq->code_bytes, true, LT_TYPE_UINT8, "uint8", 1);
}

lt_code
lt_pq_train_encode(lt_pq_model *pq, const float *vecs, int64_t n, const float *centroids, const uint32_t *assign,
				   bool residual, uint32_t sample_rate, uint32_t max_iters, uint64_t *rng, lt_error *err)
{
	uint32_t	k = 1u << pq->bits,
				sw = pq->dim / pq->m;
	int64_t		want = (int64_t) sample_rate * k;
	int64_t		m = n < want ? n : want;
	int64_t    *sample = NULL;
	float	   *sub = NULL,
			   *x = NULL,
			   *bt = NULL,
			   *acc = NULL;
	lt_code		rc = LT_OK;

	if (n < (int64_t) k)
		return lt_error_set(err, LT_EINVALID,
							"%lld vectors are too few to train PQ codes of %u bits: it needs at least %u",
							(long long) n, pq->bits, k);
	lt_pq_model_declare(pq);
	pq->codebook = lt_malloc((size_t) k * pq->dim * sizeof(float));
	pq->codes = lt_calloc((size_t) n * pq->code_bytes, 1);
	sample = lt_malloc((size_t) n * sizeof(int64_t));
	sub = lt_malloc((size_t) m * sw * sizeof(float));
	x = lt_malloc((size_t) pq->dim * sizeof(float));
	bt = lt_malloc((size_t) k * pq->dim * sizeof(float));
	acc = lt_malloc((size_t) k * sizeof(float));
	if (!pq->codebook || !pq->codes || !sample || !sub || !x || !bt || !acc)
	{
		rc = lt_nomem(err);
		goto done;
	}
	lt_sample_indices(sample, n, m, rng);
	for (uint32_t s = 0; rc == LT_OK && s < pq->m; s++)
	{
		for (int64_t i = 0; i < m; i++)
		{
			pq_input(vecs, sample[i], pq->dim, centroids, assign, residual, x);
			memcpy(sub + (size_t) i * sw, x + (size_t) s * sw, sw * sizeof(float));
		}
		rc = kmeans(sub, m, sw, k, max_iters, rng, pq->codebook + (size_t) s * k * sw, err);
	}
	for (uint32_t s = 0; rc == LT_OK && s < pq->m; s++)
		transpose_book(pq->codebook + (size_t) s * k * sw, k, sw, bt + (size_t) s * k * sw);
	for (int64_t i = 0; rc == LT_OK && i < n; i++)
	{
		uint8_t    *code = pq->codes + (size_t) i * pq->code_bytes;

		pq_input(vecs, i, pq->dim, centroids, assign, residual, x);
		for (uint32_t s = 0; s < pq->m; s++)
		{
			uint32_t	c = nearest_code(bt + (size_t) s * k * sw, k, sw, x + (size_t) s * sw, acc, NULL);

			if (pq->bits == 8)
				code[s] = (uint8_t) c;
			else
				code[s / 2] |= (uint8_t) (s % 2 ? c << 4 : c);
		}
		if ((i & 0x3fff) == 0x3fff)
			rc = lt_check_interrupt(err, "building an IVF_PQ index");
	}
done:
	lt_free(sample);
	lt_free(sub);
	lt_free(x);
	lt_free(bt);
	lt_free(acc);
	return rc;
}

lt_code
lt_pq_fill_partition(const lt_pq_model *pq, const int64_t *rows, int64_t n, lt_array *codes, lt_error *err)
{
	lt_array   *bytes = codes->children[0];
	uint32_t	cb = pq->code_bytes;

	lt_array_clear(codes);
	LT_TRY(lt_array_reserve(codes, n, err));
	LT_TRY(lt_array_reserve(bytes, n * cb, err));
	/* transposed: byte j of every row, then byte j + 1 */
	for (uint32_t j = 0; j < cb; j++)
		for (int64_t r = 0; r < n; r++)
			bytes->values[(size_t) j * n + r] = pq->codes[(size_t) rows[r] * cb + j];
	bytes->length = n * cb;
	codes->length = n;
	return LT_OK;
}

lt_code
lt_pq_put_storage(const lt_pq_model *pq, lt_file_writer *w, lt_error *err)
{
	uint32_t	shape[2] = {1u << pq->bits, pq->dim};
	Lt__Vec__Tensor t = LT__VEC__TENSOR__INIT;
	size_t		len;
	uint8_t    *buf;
	uint32_t	gb = 0;
	char		meta[256];
	lt_code		rc;

	size_t		n = (size_t) shape[0] * pq->dim;
	uint8_t    *conv = NULL;

	t.data_type = LT__VEC__TENSOR__DATA_TYPE__FLOAT32;
	t.n_shape = 2;
	t.shape = shape;
	t.data.data = (uint8_t *) pq->codebook;
	t.data.len = n * sizeof(float);
	if (pq->elem == LT_TYPE_FLOAT16 || pq->elem == LT_TYPE_FLOAT64)
	{
		/* float16 / float64 vectors: the codebook in their type, as the engine writes it */
		if (!(conv = lt_malloc(n * (pq->elem == LT_TYPE_FLOAT16 ? 2 : 8))))
			return lt_nomem(err);
		for (size_t i = 0; i < n; i++)
		{
			if (pq->elem == LT_TYPE_FLOAT16)
				((uint16_t *) conv)[i] = lt_float_to_half(pq->codebook[i]);
			else
				((double *) conv)[i] = pq->codebook[i];
		}
		t.data_type = pq->elem == LT_TYPE_FLOAT16 ? LT__VEC__TENSOR__DATA_TYPE__FLOAT16 :
			LT__VEC__TENSOR__DATA_TYPE__FLOAT64;
		t.data.data = conv;
		t.data.len = n * (pq->elem == LT_TYPE_FLOAT16 ? 2 : 8);
	}
	len = lt__vec__tensor__get_packed_size(&t);
	if (!(buf = lt_malloc(len)))
	{
		lt_free(conv);
		return lt_nomem(err);
	}
	lt__vec__tensor__pack(&t, buf);
	lt_free(conv);
	rc = lt_file_writer_add_global_buffer(w, buf, len, &gb, err);
	lt_free(buf);
	if (rc != LT_OK)
		return rc;
	snprintf(meta, sizeof(meta),
			 "[\"{\\\"codebook_position\\\":%u,\\\"nbits\\\":%u,\\\"num_sub_vectors\\\":%u,\\\"dimension\\\":%u,"
			 "\\\"codebook_tensor\\\":[],\\\"transposed\\\":true}\"]", gb, pq->bits, pq->m, pq->dim);
	return lt_file_writer_add_metadata_text(w, "storage_metadata", meta, err);
}

void
lt_pq_model_free(lt_pq_model *pq)
{
	lt_free(pq->codebook);
	lt_free(pq->codes);
	pq->codebook = NULL;
	pq->codes = NULL;
}
