/*
 * lt_ivf_build.c — IVF_FLAT, IVF_PQ and IVF_SQ index building (lt_ivf_build.h): k-means, partition
 * assignment, the two index files and the IndexMetadata details (the codes: lt_pq_build.c, lt_sq.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* qsort_r */
#endif
#include "vector/lt_ivf_build.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file/lt_writer.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_vector.pb-c.h"
#include "table/lt_scan.h"
#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "util/lt_value.h"
#include "vector/lt_hnsw_build.h"
#include "vector/lt_ivf.h"
#include "vector/lt_pq_build.h"
#include "vector/lt_rq_build.h"
#include "vector/lt_sq.h"

#define DEFAULT_MAX_MEMORY ((uint64_t) 1 << 30)
/* Lloyd iterations stop once the loss improves by less than this fraction */
#define KMEANS_TOLERANCE 1e-4
/* auxiliary rows written per call (the writer pages them itself) */
#define ROWS_PER_WRITE 8192

typedef struct ivf_build
{
	lt_dataset *ds;
	const lt_field *column;
	lt_vmetric	route;			/* assignment metric: L2, or NEG_DOT for dot */
	const char *metric;
	uint32_t	dim;
	uint32_t	k;
	uint32_t	sample_rate;
	uint32_t	max_iters;
	uint64_t	rng;
	uint64_t	max_memory;
	lt_array   *vecs;			/* the gathered vectors (a fixed_size_list array of the column's type) */
	lt_type_id	elem;			/* the column's element type: FLOAT16 / 32 / 64, UINT8 (hamming) */
	uint32_t	elem_size;		/* bytes of one element */
	const float *f32;			/* the vectors as float32 (b->vecs' own values for float32 columns) */
	float	   *f32_own;		/* that copy, for float16 / float64 columns */
	bool		hamming;		/* uint8 vectors, metric hamming: k-modes on bytes (centroids_u8) */
	uint8_t    *centroids_u8;	/* k * dim, hamming */
	uint64_t   *ids;
	int64_t		n;
	float	   *centroids;		/* k * dim */
	double		loss;
	uint32_t   *assign;			/* partition of each gathered vector */
	char	   *dir;
	lt_built_index *out;
	const lt_ivf_build_options *opts;
	uint64_t	total_rows;		/* rows of the version (the read phase's total) */
	const char *type;			/* "IVF_FLAT", "IVF_PQ" or "IVF_SQ" */
	uint32_t	code_bytes;		/* per vector, of the PQ or SQ codes (held besides the vectors) */
	const char *what;			/* "building an IVF_... index", for cancel messages */
	lt_pq_model pq;				/* IVF_PQ */
	lt_sq_model sq;				/* IVF_SQ, IVF_HNSW_SQ */
	lt_rq_model rq;				/* IVF_RQ */
	/* IVF_HNSW_*: the auxiliary order (rows of the partitions, in turn) for the graphs */
	int64_t    *order;
	uint64_t   *part_off;
	uint32_t   *part_len;
	uint32_t	hnsw_m;
	uint32_t	hnsw_ef;
	const float *hnsw_base;		/* a remap's graphs: the codes' values (NULL: vecs) */
} ivf_build;

/* the kinds whose storage holds SQ codes */
static inline bool
sq_codes(const lt_ivf_build_options *o)
{
	return o->kind == LT_IVF_BUILD_SQ || o->kind == LT_IVF_BUILD_HNSW_SQ;
}

static inline bool
hnsw(const lt_ivf_build_options *o)
{
	return o->kind == LT_IVF_BUILD_HNSW_SQ || o->kind == LT_IVF_BUILD_HNSW_PQ;
}

/* the kinds whose storage holds PQ codes */
static inline bool
pq_codes(const lt_ivf_build_options *o)
{
	return o->kind == LT_IVF_BUILD_PQ || o->kind == LT_IVF_BUILD_HNSW_PQ;
}

static const char *
kind_type(lt_ivf_build_kind k)
{
	return k == LT_IVF_BUILD_PQ ? "IVF_PQ" : k == LT_IVF_BUILD_SQ ? "IVF_SQ" :
		k == LT_IVF_BUILD_HNSW_SQ ? "IVF_HNSW_SQ" : k == LT_IVF_BUILD_HNSW_PQ ? "IVF_HNSW_PQ" :
		k == LT_IVF_BUILD_RQ ? "IVF_RQ" : "IVF_FLAT";
}

static void
progress(const ivf_build *b, lt_ivf_build_phase phase, uint64_t done, uint64_t total)
{
	if (b->opts && b->opts->progress)	/* a remap has no options */
		b->opts->progress(b->opts->progress_arg, phase, done, total);
}

const char *
lt_ivf_build_unfit(const lt_field *column)
{
	if (column->type != LT_TYPE_FIXED_LIST || column->n_children != 1 || column->fixed_size <= 0)
		return "an IVF index needs a fixed_size_list column";
	switch (column->children[0]->type)
	{
		case LT_TYPE_FLOAT16:
		case LT_TYPE_FLOAT32:
		case LT_TYPE_FLOAT64:
		case LT_TYPE_UINT8:
			return NULL;
		default:
			return "only fixed_size_list<float16 | float32 | float64, N> vectors (and uint8 ones, metric hamming) are indexed";
	}
}

/*
 * Why the column's element type does not take this kind or metric (a static message), or NULL; *invalid: a
 * metric that does not fit the type (LT_EINVALID) rather than a kind not built for it (LT_EUNSUPPORTED).
 */
static const char *
unsupported(const lt_field *column, lt_ivf_build_kind kind, const char *metric, bool *invalid)
{
	lt_type_id	elem = column->children[0]->type;
	bool		ham = strcmp(metric, "hamming") == 0;

	*invalid = true;
	if (elem == LT_TYPE_UINT8 && !ham)
		return "uint8 vectors are indexed with metric hamming only";
	if (ham && elem != LT_TYPE_UINT8)
		return "metric hamming is for uint8 vectors only";
	*invalid = false;
	if (ham && kind != LT_IVF_BUILD_FLAT)
		return "uint8 vectors (metric hamming) are indexed as IVF_FLAT only";
	return NULL;
}

static inline const float *
vec_at(const ivf_build *b, int64_t i)
{
	return b->f32 + (size_t) i * b->dim;
}

/*
 * The gathered vectors as training wants them: normalized for cosine (in their own type: float16 rounded back
 * to float16, float64 in double), and as float32 in b->f32 (float16 widened exactly, float64 rounded), which
 * k-means, the SQ bounds and the graphs read.  The storage of IVF_FLAT keeps b->vecs, in the column's type,
 * as the engine does.  uint8 (hamming) vectors stay bytes.
 */
static lt_code
prepare_vectors(ivf_build *b, lt_error *err)
{
	void	   *vals = b->vecs->children[0]->values;
	size_t		n = (size_t) b->n * b->dim;
	bool		cosine = strcmp(b->metric, "cosine") == 0;

	if (b->hamming)
		return LT_OK;
	for (int64_t i = 0; cosine && i < b->n; i++)
	{
		size_t		at = (size_t) i * b->dim;
		double		norm = 0;

		for (uint32_t d = 0; d < b->dim; d++)
		{
			double		x = b->elem == LT_TYPE_FLOAT64 ? ((double *) vals)[at + d] :
				b->elem == LT_TYPE_FLOAT16 ? lt_half_to_float(((uint16_t *) vals)[at + d]) : ((float *) vals)[at + d];

			norm += x * x;
		}
		norm = sqrt(norm);
		if (norm <= 0)
			continue;
		for (uint32_t d = 0; d < b->dim; d++)
		{
			if (b->elem == LT_TYPE_FLOAT64)
				((double *) vals)[at + d] /= norm;
			else if (b->elem == LT_TYPE_FLOAT16)
				((uint16_t *) vals)[at + d] =
					lt_float_to_half((float) (lt_half_to_float(((uint16_t *) vals)[at + d]) / norm));
			else
				((float *) vals)[at + d] = (float) (((float *) vals)[at + d] / norm);
		}
	}
	if (b->elem == LT_TYPE_FLOAT32)
	{
		b->f32 = vals;
		return LT_OK;
	}
	if (!(b->f32_own = lt_malloc((n ? n : 1) * sizeof(float))))
		return lt_nomem(err);
	for (size_t i = 0; i < n; i++)
		b->f32_own[i] = b->elem == LT_TYPE_FLOAT64 ? (float) ((double *) vals)[i] : lt_half_to_float(((uint16_t *) vals)[i]);
	b->f32 = b->f32_own;
	return LT_OK;
}

/* Memory held per vector: itself, its float32 copy (float16, float64), its row id and partition, its codes. */
static uint64_t
vector_bytes(const ivf_build *b)
{
	uint64_t	own = (uint64_t) b->dim * b->elem_size;

	if (b->elem == LT_TYPE_FLOAT16 || b->elem == LT_TYPE_FLOAT64)
		own += (uint64_t) b->dim * 4;
	return own + 16 + b->code_bytes;
}

/* Every live, non-NULL vector of the column with its row id (row address without stable row ids). */
static lt_code
gather(ivf_build *b, lt_error *err)
{
	lt_dataset *ds = b->ds;
	const lt_field *fields[1] = {b->column};
	int64_t		cap = 0;
	lt_code		rc = LT_OK;

	LT_TRY(lt_array_new(b->column, &b->vecs, err));
	for (size_t f = 0; f < ds->n_fragments; f++)
		b->total_rows += ds->fragments[f]->physical_rows;
	progress(b, LT_IVF_PHASE_READ, 0, b->total_rows);
	for (size_t f = 0; rc == LT_OK && f < ds->n_fragments; f++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;
		lt_batch   *bt;

		so.n_fields = 1;
		so.fields = fields;
		so.want_row_ids = ds->stable_row_ids;
		if ((rc = lt_fragment_scanner_open(ds, ds->fragments[f], &so, &sc, err)) != LT_OK)
			break;
		while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &bt, err)) == LT_OK && bt)
		{
			const lt_array *col = bt->columns[0];
			const uint64_t *ids = bt->row_ids ? bt->row_ids : bt->row_addrs;

			for (int64_t r = 0; rc == LT_OK && r < bt->length; r++)
			{
				if (!lt_array_is_valid(col, r))
					continue;	/* Lance leaves NULL vectors out of the index */
				rc = lt_array_append_slice(b->vecs, col, r, 1, err);
				if (rc == LT_OK)
					rc = lt_push_u64(&b->ids, &b->n, &cap, ids[r]) ? LT_OK : lt_nomem(err);
			}
			if (rc == LT_OK && (uint64_t) b->n * vector_bytes(b) > b->max_memory)
				rc = lt_error_set(err, LT_ENOMEM,
								  "building an %s index on column \"%s\" needs more than %llu MB of memory (over %lld vectors read so far)",
								  b->type, b->column->name, (unsigned long long) (b->max_memory >> 20), (long long) b->n);
			if (rc == LT_OK)
				rc = lt_check_interrupt(err, b->what);
			progress(b, LT_IVF_PHASE_READ, (uint64_t) b->n, b->total_rows);
		}
		lt_fragment_scanner_free(sc);
	}
	if (rc != LT_OK)
		return rc;
	/* a NULL element makes the vector unusable: as NaN it would poison the centroids */
	if (b->vecs->children[0]->null_count > 0)
		return lt_error_set(err, LT_EUNSUPPORTED, "column \"%s\" has vectors with NULL elements", b->column->name);
	return prepare_vectors(b, err);
}

static uint32_t
nearest(const ivf_build *b, const float *v, double *dist)
{
	uint32_t	best = 0;
	double		bd = DBL_MAX;

	for (uint32_t c = 0; c < b->k; c++)
	{
		double		d = lt_vdist_f32(b->route, b->centroids + (size_t) c * b->dim, v, b->dim);

		if (d < bd)
		{
			bd = d;
			best = c;
		}
	}
	if (dist)
		*dist = bd;
	return best;
}

static inline const uint8_t *
bytes_at(const ivf_build *b, int64_t i)
{
	return b->vecs->children[0]->values + (size_t) i * b->dim;
}

/* hamming: the nearest byte centroid (the first of equals, as the engine's argmin) */
static uint32_t
nearest_u8(const ivf_build *b, const uint8_t *v, double *dist)
{
	uint32_t	best = 0;
	double		bd = DBL_MAX;

	for (uint32_t c = 0; c < b->k; c++)
	{
		double		d = lt_vdist_hamming(b->centroids_u8 + (size_t) c * b->dim, v, b->dim);

		if (d < bd)
		{
			bd = d;
			best = c;
		}
	}
	if (dist)
		*dist = bd;
	return best;
}

/*
 * k-modes (the engine's for uint8 vectors, metric hamming) on a random sample: each centroid bit is set when
 * more than half its members have it set (bits LSB first in each byte); the rest as train().
 */
static lt_code
train_modes(ivf_build *b, lt_error *err)
{
	int64_t		want = (int64_t) b->k * b->sample_rate;
	int64_t		m = b->n < want ? b->n : want;
	size_t		bits = (size_t) b->dim * 8;
	int64_t    *sample = lt_malloc((size_t) b->n * sizeof(int64_t));
	uint32_t   *ones = lt_malloc((size_t) b->k * bits * sizeof(uint32_t));
	uint32_t   *counts = lt_malloc((size_t) b->k * sizeof(uint32_t));
	double		prev = DBL_MAX;
	lt_code		rc = LT_OK;

	b->centroids_u8 = lt_malloc((size_t) b->k * b->dim);
	if (!sample || !ones || !counts || !b->centroids_u8)
	{
		rc = lt_nomem(err);
		goto done;
	}
	lt_sample_indices(sample, b->n, m, &b->rng);
	for (uint32_t c = 0; c < b->k; c++)
		memcpy(b->centroids_u8 + (size_t) c * b->dim, bytes_at(b, sample[c]), b->dim);
	for (uint32_t it = 0; it < b->max_iters; it++)
	{
		double		loss = 0;

		if ((rc = lt_check_interrupt(err, b->what)) != LT_OK)
			goto done;
		progress(b, LT_IVF_PHASE_TRAIN, it, b->max_iters);
		memset(ones, 0, (size_t) b->k * bits * sizeof(uint32_t));
		memset(counts, 0, (size_t) b->k * sizeof(uint32_t));
		for (int64_t i = 0; i < m; i++)
		{
			const uint8_t *v = bytes_at(b, sample[i]);
			double		d;
			uint32_t	c = nearest_u8(b, v, &d);
			uint32_t   *o = ones + (size_t) c * bits;

			loss += d;
			counts[c]++;
			for (uint32_t j = 0; j < b->dim; j++)
				for (int t = 0; t < 8; t++)
					o[j * 8 + t] += (v[j] >> t) & 1;
		}
		for (uint32_t c = 0; c < b->k; c++)
		{
			uint8_t    *cv = b->centroids_u8 + (size_t) c * b->dim;
			const uint32_t *o = ones + (size_t) c * bits;

			if (counts[c] == 0)
			{
				memcpy(cv, bytes_at(b, sample[lt_splitmix64(&b->rng) % (uint64_t) m]), b->dim);
				continue;
			}
			for (uint32_t j = 0; j < b->dim; j++)
			{
				uint8_t		x = 0;

				for (int t = 0; t < 8; t++)
					if (o[j * 8 + t] * 2 > counts[c])
						x |= (uint8_t) (1 << t);
				cv[j] = x;
			}
		}
		if (prev != DBL_MAX && fabs(prev - loss) <= KMEANS_TOLERANCE * fabs(prev))
			break;
		prev = loss;
	}
done:
	lt_free(sample);
	lt_free(ones);
	lt_free(counts);
	return rc;
}

/* Lloyd's k-means on a random sample of the vectors; centroids start at k distinct sample points. */
static lt_code
train(ivf_build *b, lt_error *err)
{
	int64_t		want = (int64_t) b->k * b->sample_rate;
	int64_t		m = b->n < want ? b->n : want;
	int64_t    *sample = lt_malloc((size_t) b->n * sizeof(int64_t));
	double	   *sums = lt_malloc((size_t) b->k * b->dim * sizeof(double));
	uint64_t   *counts = lt_malloc((size_t) b->k * sizeof(uint64_t));
	uint32_t   *owner = lt_malloc((size_t) m * sizeof(uint32_t));
	double		prev = DBL_MAX;
	lt_code		rc = LT_OK;

	b->centroids = lt_malloc((size_t) b->k * b->dim * sizeof(float));
	if (!sample || !sums || !counts || !owner || !b->centroids)
	{
		rc = lt_nomem(err);
		goto done;
	}
	lt_sample_indices(sample, b->n, m, &b->rng);
	for (uint32_t c = 0; c < b->k; c++)
		memcpy(b->centroids + (size_t) c * b->dim, vec_at(b, sample[c]), b->dim * sizeof(float));
	for (uint32_t it = 0; it < b->max_iters; it++)
	{
		double		loss = 0;

		if ((rc = lt_check_interrupt(err, b->what)) != LT_OK)
			goto done;
		progress(b, LT_IVF_PHASE_TRAIN, it, b->max_iters);
		memset(sums, 0, (size_t) b->k * b->dim * sizeof(double));
		memset(counts, 0, (size_t) b->k * sizeof(uint64_t));
		for (int64_t i = 0; i < m; i++)
		{
			const float *v = vec_at(b, sample[i]);
			double		d;
			uint32_t	c = nearest(b, v, &d);

			owner[i] = c;
			loss += d;
			counts[c]++;
			for (uint32_t k = 0; k < b->dim; k++)
				sums[(size_t) c * b->dim + k] += v[k];
		}
		for (uint32_t c = 0; c < b->k; c++)
		{
			float	   *cv = b->centroids + (size_t) c * b->dim;

			if (counts[c] == 0)
			{
				/* an empty partition restarts at a random sample point */
				memcpy(cv, vec_at(b, sample[lt_splitmix64(&b->rng) % (uint64_t) m]), b->dim * sizeof(float));
				continue;
			}
			for (uint32_t k = 0; k < b->dim; k++)
				cv[k] = (float) (sums[(size_t) c * b->dim + k] / (double) counts[c]);
		}
		if (prev != DBL_MAX && fabs(prev - loss) <= KMEANS_TOLERANCE * fabs(prev))
			break;
		prev = loss;
	}
	/* float16 vectors: the centroids are written as float16, and the vectors assigned to those */
	if (b->elem == LT_TYPE_FLOAT16)
		for (size_t i = 0; i < (size_t) b->k * b->dim; i++)
			b->centroids[i] = lt_half_to_float(lt_float_to_half(b->centroids[i]));
done:
	lt_free(sample);
	lt_free(sums);
	lt_free(counts);
	lt_free(owner);
	return rc;
}

/* The partition of every vector, and the loss of that assignment. */
static lt_code
assign(ivf_build *b, lt_error *err)
{
	if (!(b->assign = lt_malloc((size_t) (b->n ? b->n : 1) * sizeof(uint32_t))))
		return lt_nomem(err);
	b->loss = 0;
	for (int64_t i = 0; i < b->n; i++)
	{
		double		d;

		b->assign[i] = b->hamming ? nearest_u8(b, bytes_at(b, i), &d) : nearest(b, vec_at(b, i), &d);
		b->loss += d;
		if ((i & 0xffff) == 0xffff)
		{
			LT_TRY(lt_check_interrupt(err, b->what));
			progress(b, LT_IVF_PHASE_ASSIGN, (uint64_t) i, (uint64_t) b->n);
		}
	}
	progress(b, LT_IVF_PHASE_ASSIGN, (uint64_t) b->n, (uint64_t) b->n);
	return LT_OK;
}

/* ---- files ------------------------------------------------------------------------ */

/*
 * The Ivf message of b's partitions (their offsets and lengths; with the centroids and the k-means loss for
 * index.idx, without for auxiliary.idx), packed into a global buffer of w and named in metadata lance:ivf.
 */
static lt_code
put_ivf(lt_file_writer *w, const ivf_build *b, uint64_t *offsets, uint32_t *lengths, bool centroids,
		lt_error *err)
{
	Lt__Vec__Ivf model = LT__VEC__IVF__INIT;
	Lt__Vec__Tensor t = LT__VEC__TENSOR__INIT;
	uint32_t	shape[2] = {b->k, b->dim};
	const Lt__Vec__Ivf *ivf = &model;
	size_t		len;
	uint8_t    *buf;
	uint32_t	gb = 0;
	char		num[16];
	uint8_t    *conv = NULL;
	lt_code		rc;

	model.n_offsets = b->k;
	model.offsets = offsets;
	model.n_lengths = b->k;
	model.lengths = lengths;
	if (centroids)
	{
		size_t		n = (size_t) b->k * b->dim;

		/* the centroids in the vectors' type, as the engine keeps them */
		t.n_shape = 2;
		t.shape = shape;
		switch (b->elem)
		{
			case LT_TYPE_UINT8:
				t.data_type = LT__VEC__TENSOR__DATA_TYPE__UINT8;
				t.data.data = b->centroids_u8;
				t.data.len = n;
				break;
			case LT_TYPE_FLOAT16:
			case LT_TYPE_FLOAT64:
				if (!(conv = lt_malloc(n * (b->elem == LT_TYPE_FLOAT16 ? 2 : 8))))
					return lt_nomem(err);
				for (size_t i = 0; i < n; i++)
				{
					if (b->elem == LT_TYPE_FLOAT16)
						((uint16_t *) conv)[i] = lt_float_to_half(b->centroids[i]);
					else
						((double *) conv)[i] = b->centroids[i];
				}
				t.data_type = b->elem == LT_TYPE_FLOAT16 ? LT__VEC__TENSOR__DATA_TYPE__FLOAT16 :
					LT__VEC__TENSOR__DATA_TYPE__FLOAT64;
				t.data.data = conv;
				t.data.len = n * (b->elem == LT_TYPE_FLOAT16 ? 2 : 8);
				break;
			default:
				t.data_type = LT__VEC__TENSOR__DATA_TYPE__FLOAT32;
				t.data.data = (uint8_t *) b->centroids;
				t.data.len = n * sizeof(float);
		}
		model.centroids_tensor = &t;
		model.loss = b->loss;
	}
	len = lt__vec__ivf__get_packed_size(ivf);
	if ((buf = lt_malloc(len ? len : 1)) == NULL)
	{
		lt_free(conv);
		return lt_nomem(err);
	}
	lt__vec__ivf__pack(ivf, buf);
	lt_free(conv);
	rc = lt_file_writer_add_global_buffer(w, buf, len, &gb, err);
	lt_free(buf);
	if (rc != LT_OK)
		return rc;
	snprintf(num, sizeof(num), "%u", gb);
	return lt_file_writer_add_metadata_text(w, "lance:ivf", num, err);
}

static int
cmp_rows(const void *x, const void *y, void *arg)
{
	const ivf_build *b = arg;
	int64_t		i = *(const int64_t *) x,
				j = *(const int64_t *) y;

	if (b->assign[i] != b->assign[j])
		return b->assign[i] < b->assign[j] ? -1 : 1;
	return b->ids[i] < b->ids[j] ? -1 : b->ids[i] > b->ids[j];
}

static lt_code
write_auxiliary(ivf_build *b, lt_error *err)
{
	lt_field	rowid;
	lt_fixed_list_field flat;
	bool		rq = b->opts->kind == LT_IVF_BUILD_RQ;
	const lt_field *fields[5] = {&rowid, pq_codes(b->opts) ? &b->pq.code.list :
		sq_codes(b->opts) ? &b->sq.code.list : rq ? &b->rq.code.list : &flat.list, &b->rq.add, &b->rq.scale,
	&b->rq.error};
	lt_file_writer *w = NULL;
	lt_array   *ids = NULL,
			   *vecs = NULL,
			   *factors[3] = {NULL, NULL, NULL};	/* IVF_RQ: add, scale, error */
	int64_t    *order = lt_malloc((size_t) (b->n ? b->n : 1) * sizeof(int64_t));
	uint64_t   *offsets = lt_calloc(b->k, sizeof(uint64_t));
	uint32_t   *lengths = lt_calloc(b->k, sizeof(uint32_t));
	char	   *storage = NULL;
	lt_code		rc = LT_OK;

	if (!order || !offsets || !lengths)
	{
		rc = lt_nomem(err);
		goto done;
	}
	lt_field_plain(&rowid, "_rowid", 0, LT_TYPE_UINT64, "uint64", 8, true);
	lt_field_fixed_list(&flat, "flat", 1, b->dim, false, b->elem,
						b->elem == LT_TYPE_FLOAT16 ? "halffloat" : b->elem == LT_TYPE_FLOAT64 ? "double" :
						b->elem == LT_TYPE_UINT8 ? "uint8" : "float", (int) b->elem_size);

	for (int64_t i = 0; i < b->n; i++)
	{
		order[i] = i;
		lengths[b->assign[i]]++;
	}
	qsort_r(order, (size_t) b->n, sizeof(int64_t), cmp_rows, b);
	for (uint32_t c = 1; c < b->k; c++)
		offsets[c] = offsets[c - 1] + lengths[c - 1];

	if ((rc = lt_array_new(&rowid, &ids, err)) != LT_OK || (rc = lt_array_new(fields[1], &vecs, err)) != LT_OK)
		goto done;
	for (int i = 0; rq && i < 3; i++)
		if ((rc = lt_array_new(fields[2 + i], &factors[i], err)) != LT_OK)
			goto done;
	if ((rc = lt_built_index_open_file(b->ds, b->dir, "auxiliary.idx", rq ? 5 : 2, fields, &w, err)) != LT_OK)
		goto done;
	/* PQ codes are transposed within a partition: one write per partition (SQ codes likewise) */
	for (uint32_t c = 0; rc == LT_OK && fields[1] != &flat.list && c < b->k; c++)
	{
		int64_t		n = lengths[c];
		lt_array   *cols[5] = {ids, vecs, factors[0], factors[1], factors[2]};

		if (n == 0)
			continue;
		lt_array_clear(ids);
		if ((rc = lt_array_reserve(ids, n, err)) != LT_OK)
			break;
		for (int64_t r = 0; r < n; r++)
			((uint64_t *) ids->values)[r] = b->ids[order[offsets[c] + r]];
		ids->length = n;
		rc = sq_codes(b->opts) ? lt_sq_fill(&b->sq, order + offsets[c], n, vecs, err) :
			rq ? lt_rq_fill_partition(&b->rq, order + offsets[c], n, cols + 1, err) :
			lt_pq_fill_partition(&b->pq, order + offsets[c], n, vecs, err);
		if (rc == LT_OK)
			rc = lt_file_writer_write(w, cols, n, err);
		if (rc == LT_OK)
			rc = lt_check_interrupt(err, b->what);
		progress(b, LT_IVF_PHASE_WRITE, offsets[c] + (uint64_t) n, (uint64_t) b->n);
	}
	for (int64_t at = 0; rc == LT_OK && fields[1] == &flat.list && at < b->n; at += ROWS_PER_WRITE)
	{
		int64_t		n = b->n - at < ROWS_PER_WRITE ? b->n - at : ROWS_PER_WRITE;
		lt_array   *cols[2] = {ids, vecs};

		lt_array_clear(ids);
		lt_array_clear(vecs);
		if ((rc = lt_array_reserve(ids, n, err)) != LT_OK)
			break;
		for (int64_t r = 0; r < n; r++)
			((uint64_t *) ids->values)[r] = b->ids[order[at + r]];
		ids->length = n;
		if ((rc = lt_array_append_take(vecs, b->vecs, order + at, n, err)) == LT_OK)
			rc = lt_file_writer_write(w, cols, n, err);
		if (rc == LT_OK)
			rc = lt_check_interrupt(err, b->what);
		progress(b, LT_IVF_PHASE_WRITE, (uint64_t) (at + n), (uint64_t) b->n);
	}
	if (rc != LT_OK)
		goto done;
	if (fields[1] == &flat.list)
	{
		storage = lt_asprintf("[\"{\\\"dim\\\":%u}\"]", b->dim);
		if (!storage)
			rc = lt_nomem(err);
		if (rc == LT_OK)
			rc = lt_file_writer_add_metadata_text(w, "storage_metadata", storage, err);
	}
	if (rc == LT_OK)
		rc = lt_file_writer_add_metadata_text(w, "distance_type", b->metric, err);
	if (rc == LT_OK)
		rc = put_ivf(w, b, offsets, lengths, false, err);
	/* the codebook after the Ivf: global buffer 2, as the engine numbers them */
	if (rc == LT_OK && pq_codes(b->opts))
		rc = lt_pq_put_storage(&b->pq, w, err);
	if (rc == LT_OK && sq_codes(b->opts))
		rc = lt_sq_put_storage(&b->sq, w, err);
	if (rc == LT_OK && rq)
		rc = lt_rq_put_storage(&b->rq, w, err);
	if (rc == LT_OK)
		rc = lt_built_index_finish_file(b->out, w, "auxiliary.idx", err);
	if (rc == LT_OK && hnsw(b->opts))
	{
		/* the graphs' nodes are the partitions' rows in this order */
		b->order = order;
		b->part_off = offsets;
		b->part_len = lengths;
		order = NULL;
		offsets = NULL;
		lengths = NULL;
	}
done:
	lt_file_writer_free(w);
	lt_array_free(ids);
	lt_array_free(vecs);
	for (int i = 0; i < 3; i++)
		lt_array_free(factors[i]);
	lt_free(order);
	lt_free(offsets);
	lt_free(lengths);
	lt_free(storage);
	return rc;
}

static lt_code
write_index(ivf_build *b, lt_error *err)
{
	lt_field	marker;
	const lt_field *fields[1] = {&marker};
	lt_file_writer *w = NULL;
	uint64_t   *zeros64 = lt_calloc(b->k, sizeof(uint64_t));
	uint32_t   *zeros32 = lt_calloc(b->k, sizeof(uint32_t));
	char	   *flat = lt_malloc((size_t) b->k * 3 + 3);
	char	   *index = lt_asprintf("{\"type\":\"%s\",\"distance_type\":\"%s\"}", b->type, b->metric);
	lt_code		rc = LT_OK;

	if (!zeros64 || !zeros32 || !flat || !index)
	{
		rc = lt_nomem(err);
		goto done;
	}
	/* lance:flat: the (empty) metadata of each partition's flat sub-index */
	{
		char	   *p = flat;

		*p++ = '[';
		for (uint32_t c = 0; c < b->k; c++)
		{
			if (c)
				*p++ = ',';
			*p++ = '"';
			*p++ = '"';
		}
		*p++ = ']';
		*p = 0;
	}
	lt_field_plain(&marker, "__flat_marker", 0, LT_TYPE_UINT64, "uint64", 8, false);
	if ((rc = lt_built_index_open_file(b->ds, b->dir, "index.idx", 1, fields, &w, err)) == LT_OK &&
		(rc = lt_file_writer_add_metadata_text(w, "lance:index", index, err)) == LT_OK &&
		(rc = lt_file_writer_add_metadata_text(w, "lance:flat", flat, err)) == LT_OK &&
		(rc = put_ivf(w, b, zeros64, zeros32, true, err)) == LT_OK)
		rc = lt_built_index_finish_file(b->out, w, "index.idx", err);
done:
	lt_file_writer_free(w);
	lt_free(zeros64);
	lt_free(zeros32);
	lt_free(flat);
	lt_free(index);
	return rc;
}

/*
 * IVF_HNSW_*: index.idx holds each partition's graph over its rows in the auxiliary order, partition
 * after partition; the Ivf gives the centroids and the rows of each partition's graph, lance:hnsw the
 * graphs' metadata (a JSON list of JSON strings, one per partition).
 */
static lt_code
write_hnsw_index(ivf_build *b, lt_error *err)
{
	lt_hnsw_fields hf;
	lt_file_writer *w = NULL;
	uint64_t   *offsets = lt_calloc(b->k, sizeof(uint64_t));
	uint32_t   *lengths = lt_calloc(b->k, sizeof(uint32_t));
	char	   *index = lt_asprintf("{\"type\":\"%s\",\"distance_type\":\"%s\"}", b->type, b->metric);
	char	   *meta = NULL;
	size_t		meta_len = 0,
				meta_cap = 0;
	uint64_t	at = 0;
	lt_vmetric	metric = strcmp(b->metric, "dot") == 0 ? LT_VMETRIC_NEG_DOT : LT_VMETRIC_L2;
	lt_code		rc = LT_OK;

	if (!offsets || !lengths || !index)
	{
		rc = lt_nomem(err);
		goto done;
	}
	lt_hnsw_fields_declare(&hf);
	if ((rc = lt_built_index_open_file(b->ds, b->dir, "index.idx", 3, hf.all, &w, err)) != LT_OK)
		goto done;
	progress(b, LT_IVF_PHASE_GRAPH, 0, (uint64_t) b->n);
	for (uint32_t c = 0; rc == LT_OK && c < b->k; c++)
	{
		lt_hnsw_graph *g = NULL;
		uint64_t	rows = 0;
		char	   *one = NULL;
		size_t		need;

		rc = lt_hnsw_graph_build(b->hnsw_base ? b->hnsw_base : b->f32, b->order + b->part_off[c],
								 b->part_len[c], b->dim, metric, b->hnsw_m, b->hnsw_ef, &b->rng, b->what, &g, err);
		if (rc == LT_OK)
			rc = lt_hnsw_graph_write(g, &hf, w, &rows, err);
		if (rc == LT_OK && rows > UINT32_MAX)
			rc = lt_error_set(err, LT_EINVALID, "the graph of partition %u has more than 2^32 rows", c);
		if (rc == LT_OK && !(one = lt_hnsw_graph_meta(g)))
			rc = lt_nomem(err);
		lt_hnsw_graph_free(g);
		if (rc != LT_OK)
			break;
		offsets[c] = at;
		lengths[c] = (uint32_t) rows;
		at += rows;
		/* the element as a JSON string: its quotes escaped */
		need = meta_len + 2 * strlen(one) + 8;
		if (need > meta_cap)
		{
			char	   *m = lt_realloc(meta, need * 2);

			if (!m)
			{
				lt_free(one);
				rc = lt_nomem(err);
				break;
			}
			meta = m;
			meta_cap = need * 2;
		}
		meta[meta_len++] = c == 0 ? '[' : ',';
		meta[meta_len++] = '"';
		for (const char *q = one; *q; q++)
		{
			if (*q == '"' || *q == '\\')
				meta[meta_len++] = '\\';
			meta[meta_len++] = *q;
		}
		meta[meta_len++] = '"';
		meta[meta_len] = 0;
		lt_free(one);
		progress(b, LT_IVF_PHASE_GRAPH, b->part_off[c] + b->part_len[c], (uint64_t) b->n);
		if ((rc = lt_check_interrupt(err, b->what)) != LT_OK)
			break;
	}
	if (rc != LT_OK)
		goto done;
	meta[meta_len++] = ']';
	meta[meta_len] = 0;
	if ((rc = lt_file_writer_add_metadata_text(w, "lance:index", index, err)) == LT_OK &&
		(rc = put_ivf(w, b, offsets, lengths, true, err)) == LT_OK &&
		(rc = lt_file_writer_add_metadata_text(w, "lance:hnsw", meta, err)) == LT_OK)
		rc = lt_built_index_finish_file(b->out, w, "index.idx", err);
done:
	lt_file_writer_free(w);
	lt_free(offsets);
	lt_free(lengths);
	lt_free(index);
	lt_free(meta);
	return rc;
}

/* ---- IndexMetadata details ---------------------------------------------------------- */

static uint8_t *
put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80)
	{
		*p++ = (uint8_t) (v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t) v;
	return p;
}

/* one map<string, string> entry (field 9) of the details */
static uint8_t *
put_param(uint8_t *p, const char *key, const char *value)
{
	size_t		kl = strlen(key),
				vl = strlen(value);

	*p++ = 0x4a;
	p = put_varint(p, 2 + kl + 2 + vl);
	*p++ = 0x0a;
	p = put_varint(p, kl);
	memcpy(p, key, kl);
	p += kl;
	*p++ = 0x12;
	p = put_varint(p, vl);
	memcpy(p, value, vl);
	return p + vl;
}

/*
 * VectorIndexDetails as the engine records an IVF build: metric_type (1: 0 l2, 1 cosine, 2 dot;
 * omitted when 0), the compression (IVF_FLAT: flat, 8, an empty message; IVF_PQ: pq, 4, {num_bits 1,
 * num_sub_vectors 2}) and the build parameters (9; IVF_PQ adds the PQ training's).
 */
static lt_code
make_details(ivf_build *b, lt_error *err)
{
	uint8_t    *buf = lt_malloc(512);
	uint8_t    *p = buf;
	char		iters[16],
				rate[16];
	int			metric = strcmp(b->metric, "cosine") == 0 ? 1 : strcmp(b->metric, "dot") == 0 ? 2 :
		strcmp(b->metric, "hamming") == 0 ? 3 : 0;

	if (!buf)
		return lt_nomem(err);
	snprintf(iters, sizeof(iters), "%u", b->max_iters);
	snprintf(rate, sizeof(rate), "%u", b->sample_rate);
	if (metric)
	{
		*p++ = 0x08;
		p = put_varint(p, (uint64_t) metric);
	}
	if (hnsw(b->opts))
	{
		/* hnsw (3): {max_connections 1, construction_ef 2, max_level 3} */
		uint8_t		h[24],
				   *q = h;

		*q++ = 0x08;
		q = put_varint(q, b->hnsw_m);
		*q++ = 0x10;
		q = put_varint(q, b->hnsw_ef);
		*q++ = 0x18;
		q = put_varint(q, LT_HNSW_BUILD_MAX_LEVEL);
		*p++ = 0x1a;
		p = put_varint(p, (uint64_t) (q - h));
		memcpy(p, h, (size_t) (q - h));
		p += q - h;
	}
	if (pq_codes(b->opts))
	{
		uint8_t		pq[24],
				   *q = pq;

		*q++ = 0x08;
		q = put_varint(q, b->pq.bits);
		*q++ = 0x10;
		q = put_varint(q, b->pq.m);
		*p++ = 0x22;
		p = put_varint(p, (uint64_t) (q - pq));
		memcpy(p, pq, (size_t) (q - pq));
		p += q - pq;
	}
	else if (sq_codes(b->opts))
	{
		/* sq (5): {num_bits 8} */
		*p++ = 0x2a;
		*p++ = 0x02;
		*p++ = 0x08;
		*p++ = 0x08;
	}
	else if (b->opts->kind == LT_IVF_BUILD_RQ)
	{
		/* rq (6): {num_bits 1} (the fast rotation, 0, omitted) */
		*p++ = 0x32;
		*p++ = 0x02;
		*p++ = 0x08;
		*p++ = 0x01;
	}
	else
	{
		*p++ = 0x42;
		*p++ = 0x00;
	}
	if (hnsw(b->opts))
		p = put_param(p, "lance.hnsw.prefetch_distance", "2");
	p = put_param(p, "lance.ivf.max_iters", iters);
	p = put_param(p, "lance.ivf.sample_rate", rate);
	p = put_param(p, "lance.ivf.shuffle_partition_batches", "10240");
	p = put_param(p, "lance.ivf.shuffle_partition_concurrency", "2");
	if (pq_codes(b->opts))
	{
		p = put_param(p, "lance.pq.kmeans_redos", "1");
		p = put_param(p, "lance.pq.max_iters", iters);
		p = put_param(p, "lance.pq.sample_rate", rate);
	}
	if (sq_codes(b->opts))
		p = put_param(p, "lance.sq.sample_rate", rate);
	p = put_param(p, "lance.skip_transpose", "false");
	b->out->details = buf;
	b->out->details_len = (size_t) (p - buf);
	b->out->type_url = "/lance.index.pb.VectorIndexDetails";
	return LT_OK;
}

/* ---- the build ----------------------------------------------------------------------- */

lt_code
lt_ivf_build(lt_dataset *ds, const lt_field *column, const lt_ivf_build_options *opts, lt_built_index *out,
			 lt_error *err)
{
	ivf_build	b = {0};
	const char *why;
	lt_code		rc = LT_OK;

	memset(out, 0, sizeof(*out));
	if ((why = lt_ivf_build_unfit(column)))
		return lt_error_set(err, LT_EUNSUPPORTED, "cannot build an %s index on column \"%s\" (%s): %s",
							kind_type(opts->kind), column->name, column->logical_type, why);
	b.elem = column->children[0]->type;
	b.elem_size = b.elem == LT_TYPE_FLOAT16 ? 2 : b.elem == LT_TYPE_FLOAT64 ? 8 : b.elem == LT_TYPE_UINT8 ? 1 : 4;
	b.metric = opts->metric ? opts->metric : b.elem == LT_TYPE_UINT8 ? "hamming" : "l2";
	if (strcmp(b.metric, "l2") != 0 && strcmp(b.metric, "cosine") != 0 && strcmp(b.metric, "dot") != 0 &&
		strcmp(b.metric, "hamming") != 0)
		return lt_error_set(err, LT_EINVALID, "unknown metric \"%s\" (l2, cosine, dot or hamming)", b.metric);
	{
		bool		invalid;

		if ((why = unsupported(column, opts->kind, b.metric, &invalid)))
			return lt_error_set(err, invalid ? LT_EINVALID : LT_EUNSUPPORTED,
								"cannot build an %s index on column \"%s\" (%s) with metric %s: %s",
								kind_type(opts->kind), column->name, column->logical_type, b.metric, why);
	}
	b.hamming = strcmp(b.metric, "hamming") == 0;
	b.route = strcmp(b.metric, "dot") == 0 ? LT_VMETRIC_NEG_DOT : LT_VMETRIC_L2;
	b.ds = ds;
	b.column = column;
	b.dim = (uint32_t) column->fixed_size;
	b.type = kind_type(opts->kind);
	b.what = opts->kind == LT_IVF_BUILD_RQ ? "building an IVF_RQ index" : opts->kind == LT_IVF_BUILD_PQ ? "building an IVF_PQ index" :
		opts->kind == LT_IVF_BUILD_SQ ? "building an IVF_SQ index" :
		opts->kind == LT_IVF_BUILD_HNSW_SQ ? "building an IVF_HNSW_SQ index" :
		opts->kind == LT_IVF_BUILD_HNSW_PQ ? "building an IVF_HNSW_PQ index" : "building an IVF_FLAT index";
	b.sq.dim = b.dim;
	b.code_bytes = sq_codes(opts) ? b.dim : 0;
	if (hnsw(opts))
	{
		b.hnsw_m = opts->hnsw_m ? opts->hnsw_m : LT_HNSW_BUILD_M;
		b.hnsw_ef = opts->hnsw_ef_construction ? opts->hnsw_ef_construction : LT_HNSW_BUILD_EF_CONSTRUCTION;
		if (b.hnsw_m < 2 || b.hnsw_m > 256)
			return lt_error_set(err, LT_EINVALID, "m of an HNSW graph must be from 2 to 256, not %u", b.hnsw_m);
		if (b.hnsw_ef < 1 || b.hnsw_ef > 100000)
			return lt_error_set(err, LT_EINVALID, "ef_construction of an HNSW graph must be from 1 to 100000, not %u",
								b.hnsw_ef);
	}
	if (pq_codes(opts))
	{
		b.pq.dim = b.dim;
		b.pq.m = opts->num_sub_vectors ? opts->num_sub_vectors : lt_pq_default_sub_vectors(b.dim);
		b.pq.bits = opts->num_bits ? opts->num_bits : 8;
		if ((why = lt_pq_unfit(b.dim, b.pq.m, b.pq.bits)))
			return lt_error_set(err, LT_EINVALID, "%s of %u sub-vectors, %u bits for vectors of %u dimensions: %s",
								b.type, b.pq.m, b.pq.bits, b.dim, why);
		b.code_bytes = b.pq.m;
	}
	if (opts->kind == LT_IVF_BUILD_RQ)
	{
		if ((why = lt_rq_unfit(b.dim)))
			return lt_error_set(err, LT_EINVALID, "IVF_RQ of vectors of %u dimensions on column \"%s\": %s", b.dim,
								column->name, why);
		b.rq.dim = b.dim;
		b.code_bytes = b.dim / 8 + 12;
	}
	if (hnsw(opts))
		b.code_bytes += (uint32_t) lt_hnsw_bytes_per_node(b.hnsw_m);
	b.sample_rate = opts->sample_rate ? opts->sample_rate : LT_IVF_BUILD_SAMPLE_RATE;
	b.max_iters = opts->max_iters ? opts->max_iters : LT_IVF_BUILD_MAX_ITERS;
	b.rng = opts->seed ? opts->seed : LT_IVF_BUILD_SEED;
	b.max_memory = opts->max_memory ? opts->max_memory : DEFAULT_MAX_MEMORY;
	b.out = out;
	b.opts = opts;
	out->kind = LT_INDEX_UNKNOWN;
	out->index_version = opts->kind == LT_IVF_BUILD_RQ ? 2 : 1;	/* the engine's IVF_RQ is version 2 */
	rc = lt_built_index_begin(ds, column, opts->name, out, &b.dir, err);
	if (rc == LT_OK)
		rc = gather(&b, err);
	if (rc == LT_OK)
	{
		uint32_t	k = opts->num_partitions;

		if (k == 0)
			k = b.n > 1 ? (uint32_t) llround(sqrt((double) b.n)) : 1;
		if ((int64_t) k > b.n)
			rc = lt_error_set(err, LT_EINVALID, "%u partitions for %lld vectors: a partition needs at least one",
							  k, (long long) b.n);
		b.k = k;
	}
	if (rc == LT_OK)
		rc = b.hamming ? train_modes(&b, err) : train(&b, err);
	if (rc == LT_OK)
		rc = assign(&b, err);
	/* residual PQ for l2 and cosine (normalized vectors), the vectors themselves for dot: the engine's */
	b.pq.elem = b.elem;
	if (rc == LT_OK && pq_codes(opts))
		rc = lt_pq_train_encode(&b.pq, b.f32, b.n, b.centroids, b.assign,
								strcmp(b.metric, "dot") != 0, b.sample_rate, b.max_iters, &b.rng, err);
	/* SQ: no residual, the (normalized for cosine) vectors themselves */
	if (rc == LT_OK && sq_codes(opts))
		rc = lt_sq_train_encode(&b.sq, b.f32, b.n, b.sample_rate, &b.rng, err);
	/* RaBitQ: residuals to the centroids (normalized vectors for cosine), the dot factors for dot */
	if (rc == LT_OK && opts->kind == LT_IVF_BUILD_RQ)
		rc = lt_rq_train_encode(&b.rq, b.f32, b.n, b.centroids, b.k, b.assign, strcmp(b.metric, "dot") == 0, &b.rng,
								err);
	if (rc == LT_OK)
		rc = write_auxiliary(&b, err);
	if (rc == LT_OK)
		rc = hnsw(opts) ? write_hnsw_index(&b, err) : write_index(&b, err);
	if (rc == LT_OK)
		rc = make_details(&b, err);
	lt_free(b.order);
	lt_free(b.part_off);
	lt_free(b.part_len);
	out->rows = (uint64_t) b.n;
	out->entries = b.k;
	lt_array_free(b.vecs);
	lt_free(b.f32_own);
	lt_free(b.centroids_u8);
	lt_free(b.ids);
	lt_free(b.centroids);
	lt_free(b.assign);
	lt_free(b.dir);
	lt_pq_model_free(&b.pq);
	lt_sq_model_free(&b.sq);
	lt_rq_model_free(&b.rq);
	if (rc != LT_OK)
	{
		lt_built_index_remove(ds, out);
		lt_built_index_clear(out);
		return lt_error_prefix(err, "building index on column \"%s\"", column->name);
	}
	return LT_OK;
}

/* ---- the remap of a compaction ------------------------------------------------------------- */

/*
 * The model of the old segment ix as the writers want it: IVF_FLAT keeps the vectors (gathered in b->vecs),
 * IVF_PQ its codebook (borrowed from ix) and IVF_SQ its bounds; the codes are gathered by the caller.
 * Sets *store to the storage column and *code_bytes to a row's code (0 for IVF_FLAT).
 */
static lt_code
remap_model(ivf_build *b, lt_ivf_build_options *o, lt_ivf *ix, const lt_field **store, uint32_t *code_bytes,
			lt_error *err)
{
	bool		hnsw = lt_ivf_is_hnsw(ix);

	*code_bytes = 0;
	/*
	 * an HNSW segment's graphs are rebuilt over the values the codes stand for (float32 whatever the
	 * vectors' type: SQ bounds and PQ codewords are read as float), so float16 / float64 ones too
	 */
	if (!ix->rowid_field || (hnsw && ix->elem == LT_TYPE_UINT8))
		return lt_error_set(err, LT_EUNSUPPORTED, "remapping an %s index", ix->type_name);
	if (!hnsw && strcmp(ix->type_name, "IVF_FLAT") == 0 && ix->flat_field && !ix->pq_field)
	{
		o->kind = LT_IVF_BUILD_FLAT;
		*store = ix->flat_field;
		return lt_array_new(ix->flat_field, &b->vecs, err);
	}
	if (strcmp(ix->type_name, hnsw ? "IVF_HNSW_PQ" : "IVF_PQ") == 0 && ix->pq_field && ix->codebook)
	{
		o->kind = hnsw ? LT_IVF_BUILD_HNSW_PQ : LT_IVF_BUILD_PQ;
		b->pq.dim = ix->dim;
		b->pq.m = ix->pq_m;
		b->pq.bits = ix->pq_bits;
		lt_pq_model_declare(&b->pq);
		if (b->pq.code_bytes != ix->pq_bytes)
			return lt_corrupt(err, "%s: codes of %u bytes for %u sub-vectors of %u bits",
							  lt_index_file_path(ix->aux), ix->pq_bytes, ix->pq_m, ix->pq_bits);
		b->pq.codebook = ix->codebook;	/* borrowed: the same quantizer */
		*store = ix->pq_field;
		*code_bytes = ix->pq_bytes;
		return LT_OK;
	}
	if (strcmp(ix->type_name, hnsw ? "IVF_HNSW_SQ" : "IVF_SQ") == 0 && ix->sq.field)
	{
		o->kind = hnsw ? LT_IVF_BUILD_HNSW_SQ : LT_IVF_BUILD_SQ;
		b->sq.dim = ix->dim;
		b->sq.start = ix->sq.lo;
		b->sq.end = ix->sq.hi;
		lt_sq_model_declare(&b->sq);
		*store = ix->sq.field;
		*code_bytes = ix->dim;
		return LT_OK;
	}
	return lt_error_set(err, LT_EUNSUPPORTED, "remapping an %s index", ix->type_name);
}

/* The value of "key": in the lance:hnsw metadata s (its escapes included), or dflt. */
static uint32_t
hnsw_param(const uint8_t *s, size_t len, const char *key, uint32_t dflt)
{
	size_t		kl = strlen(key);

	for (size_t i = 0; s && i + kl + 2 < len; i++)
	{
		size_t		j = i + kl;
		uint64_t	v = 0;
		bool		any = false;

		/* "key" then its closing quote (escaped or not), the colon, the number */
		if (s[i] != '"' || memcmp(s + i + 1, key, kl) != 0)
			continue;
		j++;
		if (j < len && s[j] == '\\')
			j++;
		if (j >= len || s[j] != '"' || j + 1 >= len || s[j + 1] != ':')
			continue;
		for (j += 2; j < len && s[j] >= '0' && s[j] <= '9' && v < UINT32_MAX; j++, any = true)
			v = v * 10 + (uint64_t) (s[j] - '0');
		if (any && v > 0 && v <= UINT32_MAX)
			return (uint32_t) v;
	}
	return dflt;
}

/*
 * An HNSW remap's graph parameters (m, ef_construction: the old graphs', in index.idx's lance:hnsw) and
 * the values the kept rows' codes stand for, over which the graphs are built again: the engine rebuilds
 * each partition's graph from the remapped storage (HNSW::remap calls index_vectors on it), since
 * the old graph's nodes are positions in a storage that lost rows.  SQ: lo + code * (hi - lo) / 255;
 * PQ: the codewords the codes name (residuals for l2 and cosine: distances within a partition alike).
 */
static lt_code
remap_hnsw_prepare(ivf_build *b, const lt_ivf_build_options *o, lt_dataset *ds, const char *old_dir,
				   const uint8_t *codes, uint32_t cb, float **values, lt_error *err)
{
	char	   *path = lt_asprintf("%sindex.idx", old_dir);
	lt_index_file *xf = NULL;
	const uint8_t *meta;
	size_t		len = 0;
	float	   *v;
	lt_code		rc;

	*values = NULL;
	if (!path)
		return lt_nomem(err);
	rc = lt_index_file_open(ds->store, path, &xf, err);
	lt_free(path);
	if (rc != LT_OK)
		return rc;
	meta = lt_index_file_meta(xf, "lance:hnsw", &len);
	b->hnsw_m = hnsw_param(meta, len, "m", LT_HNSW_BUILD_M);
	b->hnsw_ef = hnsw_param(meta, len, "ef_construction", LT_HNSW_BUILD_EF_CONSTRUCTION);
	lt_index_file_close(xf);
	if (b->hnsw_m < 2 || b->hnsw_m > 256)
		b->hnsw_m = LT_HNSW_BUILD_M;
	if (b->hnsw_ef > 100000)
		b->hnsw_ef = LT_HNSW_BUILD_EF_CONSTRUCTION;
	if (!(v = lt_malloc((size_t) (b->n ? b->n : 1) * b->dim * sizeof(float))))
		return lt_nomem(err);
	for (int64_t r = 0; r < b->n; r++)
	{
		const uint8_t *c = codes + (size_t) r * cb;
		float	   *out = v + (size_t) r * b->dim;

		if (sq_codes(o))
		{
			double		step = (b->sq.end - b->sq.start) / 255.0;

			for (uint32_t i = 0; i < b->dim; i++)
				out[i] = (float) (b->sq.start + c[i] * step);
		}
		else
		{
			uint32_t	sub = b->dim / b->pq.m,
						kc = 1u << b->pq.bits;

			for (uint32_t s = 0; s < b->pq.m; s++)
			{
				uint32_t	w = b->pq.bits == 8 ? c[s] : (s & 1) ? (uint32_t) (c[s / 2] >> 4) : (uint32_t) (c[s / 2] & 0x0F);

				memcpy(out + (size_t) s * sub, b->pq.codebook + ((size_t) s * kc + w) * sub, sub * sizeof(float));
			}
		}
	}
	b->rng = LT_IVF_BUILD_SEED;
	*values = v;
	return LT_OK;
}

/* Byte j of row r of a partition of len rows read from the storage (PQ codes may be transposed). */
static inline uint8_t
code_byte(const lt_ivf *ix, const uint8_t *codes, uint32_t cb, uint32_t len, int64_t r, uint32_t j)
{
	if (ix->pq_field && ix->pq_transposed)
		return codes[(size_t) j * len + (size_t) r];
	return codes[(size_t) r * cb + j];
}

lt_code
lt_ivf_remap(lt_dataset *ds, const lt_field *column, const char *name, const char *old_dir, lt_ivf_remap_fn map,
			 void *arg, lt_built_index *out, lt_error *err)
{
	ivf_build	b = {0};
	lt_ivf_build_options o = {0};
	lt_ivf	   *ix = NULL;
	const lt_field *store = NULL;
	uint32_t	cb = 0;
	uint8_t    *codes = NULL;	/* IVF_PQ, IVF_SQ: the kept rows' codes, row-major */
	float	   *hnsw_values = NULL; /* IVF_HNSW_*: the values of those codes */
	int64_t		cap = 0,
				cap_assign = 0,
				cap_codes = 0;
	lt_code		rc;

	memset(out, 0, sizeof(*out));
	if ((rc = lt_ivf_open(ds->store, old_dir, true, &ix, err)) != LT_OK)
		return rc;
	if ((rc = remap_model(&b, &o, ix, &store, &cb, err)) != LT_OK)
	{
		lt_array_free(b.vecs);
		lt_ivf_close(ix);
		return rc;
	}
	b.ds = ds;
	b.column = column;
	b.metric = ix->distance_type;
	b.dim = ix->dim;
	b.k = ix->n_partitions;
	b.centroids = ix->centroids;	/* borrowed: the same model */
	b.centroids_u8 = ix->centroids_u8;
	b.elem = ix->elem ? ix->elem : LT_TYPE_FLOAT32;	/* the centroids and the flat vectors keep their type */
	b.pq.elem = b.elem;			/* and the PQ codebook */
	b.elem_size = b.elem == LT_TYPE_FLOAT16 ? 2 : b.elem == LT_TYPE_FLOAT64 ? 8 : b.elem == LT_TYPE_UINT8 ? 1 : 4;
	b.out = out;
	b.opts = &o;
	b.type = ix->type_name;
	b.what = o.kind == LT_IVF_BUILD_PQ ? "remapping an IVF_PQ index" :
		o.kind == LT_IVF_BUILD_SQ ? "remapping an IVF_SQ index" :
		o.kind == LT_IVF_BUILD_HNSW_SQ ? "remapping an IVF_HNSW_SQ index" :
		o.kind == LT_IVF_BUILD_HNSW_PQ ? "remapping an IVF_HNSW_PQ index" : "remapping an IVF_FLAT index";
	out->kind = LT_INDEX_UNKNOWN;
	out->index_version = 1;
	rc = lt_built_index_begin(ds, column, name, out, &b.dir, err);
	for (uint32_t p = 0; rc == LT_OK && p < ix->n_partitions; p++)
	{
		lt_array   *ids = NULL,
				   *vecs = NULL;
		uint32_t	len = ix->part_len[p];

		if (len == 0)
			continue;
		if ((rc = lt_index_file_read(ix->aux, ix->rowid_field, ix->part_start[p], len, &ids, err)) == LT_OK)
			rc = lt_index_file_read(ix->aux, store, ix->part_start[p], len, &vecs, err);
		if (rc == LT_OK && (ids->length != len || vecs->length != len ||
							(cb && (vecs->children[0] == NULL ||
									vecs->children[0]->length != (int64_t) len * cb))))
			rc = lt_corrupt(err, "%s: partition %u does not have its %u rows", lt_index_file_path(ix->aux), p,
							len);
		for (int64_t r = 0; rc == LT_OK && r < ids->length; r++)
		{
			uint64_t	id,
						to;

			if (!lt_array_is_valid(ids, r))
				continue;
			memcpy(&id, ids->values + r * 8, 8);
			if (!map(arg, id, &to))
				continue;
			if (!lt_push_u64(&b.ids, &b.n, &cap, to))
			{
				rc = lt_nomem(err);
				break;
			}
			if (cap > cap_assign)
			{
				uint32_t   *a = lt_realloc(b.assign, (size_t) cap * sizeof(uint32_t));

				if (!a)
				{
					rc = lt_nomem(err);
					break;
				}
				b.assign = a;
				cap_assign = cap;
			}
			b.assign[b.n - 1] = p;
			if (cb == 0)
			{
				rc = lt_array_append_slice(b.vecs, vecs, r, 1, err);
				continue;
			}
			/* the row keeps its code: the quantizer and its partition are the same */
			if (cap > cap_codes)
			{
				uint8_t    *c = lt_realloc(codes, (size_t) cap * cb);

				if (!c)
				{
					rc = lt_nomem(err);
					break;
				}
				codes = c;
				cap_codes = cap;
			}
			for (uint32_t j = 0; j < cb; j++)
				codes[(size_t) (b.n - 1) * cb + j] = code_byte(ix, vecs->children[0]->values, cb, len, r, j);
		}
		lt_array_free(ids);
		lt_array_free(vecs);
		if (rc == LT_OK)
			rc = lt_check_interrupt(err, b.what);
	}
	if (pq_codes(&o))
		b.pq.codes = codes;
	else if (sq_codes(&o))
		b.sq.codes = codes;
	if (rc == LT_OK && hnsw(&o))
		rc = remap_hnsw_prepare(&b, &o, ds, old_dir, codes, cb, &hnsw_values, err);
	b.hnsw_base = hnsw_values;
	if (rc == LT_OK)
		rc = write_auxiliary(&b, err);
	if (rc == LT_OK)
		rc = hnsw(&o) ? write_hnsw_index(&b, err) : write_index(&b, err);
	out->rows = (uint64_t) b.n;
	out->entries = b.k;
	lt_array_free(b.vecs);
	lt_free(b.ids);
	lt_free(b.assign);
	lt_free(b.dir);
	b.pq.codebook = NULL;		/* ix's */
	lt_pq_model_free(&b.pq);
	lt_sq_model_free(&b.sq);
	if (o.kind == LT_IVF_BUILD_FLAT)
		lt_free(codes);
	lt_free(hnsw_values);
	lt_free(b.order);
	lt_free(b.part_off);
	lt_free(b.part_len);
	lt_ivf_close(ix);
	if (rc != LT_OK)
	{
		lt_built_index_remove(ds, out);
		lt_built_index_clear(out);
		return lt_error_prefix(err, "remapping the index on column \"%s\"", column->name);
	}
	return LT_OK;
}
