/*
 * lt_ivf.c — IVF vector index segments (lt_ivf.h).
 */
#include "vector/lt_ivf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/lt_vector.pb-c.h"
#include "util/lt_alloc.h"
#include "util/lt_value.h"
#include "vector/lt_rq.h"
#include "vector/lt_sq.h"
#include "vector/lt_vcache.h"

/* hot loops vectorised where GCC would not at -O2 (the same float operations, in the same order per value) */
#if defined(__GNUC__) && !defined(__clang__)
#define LT_VECTORIZE __attribute__((optimize("O3")))
#else
#define LT_VECTORIZE
#endif

static inline uint32_t
Max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* A string value of a flat JSON object: "key":"value" (no escapes in these values). */
static char *
json_string(const uint8_t *s, size_t len, const char *key)
{
	char		pat[64];
	size_t		pl;

	pl = (size_t) snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	for (size_t i = 0; i + pl <= len; i++)
		if (memcmp(s + i, pat, pl) == 0)
		{
			size_t		j = i + pl;

			while (j < len && s[j] != '"')
				j++;
			if (j >= len)
				return NULL;
			return lt_strndup((const char *) s + i + pl, j - i - pl);
		}
	return NULL;
}

/*
 * An integer (or true/false as 1/0) value of key in a JSON object, also when the object is itself a
 * JSON string (its quotes escaped): "key":12 or \"key\":12.
 */
static bool
json_number(const uint8_t *s, size_t len, const char *key, long *out)
{
	size_t		kl = strlen(key);

	for (size_t i = 0; i + kl + 2 < len; i++)
	{
		size_t		j;

		if (s[i] != '"' || memcmp(s + i + 1, key, kl) != 0)
			continue;
		j = i + 1 + kl;
		if (j < len && s[j] == '\\')
			j++;
		if (j >= len || s[j] != '"')
			continue;
		j++;
		while (j < len && (s[j] == ' ' || s[j] == ':'))
			j++;
		if (j + 4 <= len && memcmp(s + j, "true", 4) == 0)
			*out = 1;
		else if (j + 5 <= len && memcmp(s + j, "false", 5) == 0)
			*out = 0;
		else
		{
			char		num[24];
			size_t		n = 0;
			char	   *end;

			while (j < len && n + 1 < sizeof(num) && (s[j] == '-' || (s[j] >= '0' && s[j] <= '9')))
				num[n++] = (char) s[j++];
			num[n] = 0;
			*out = strtol(num, &end, 10);
			if (n == 0 || *end != 0)
				return false;
		}
		return true;
	}
	return false;
}

/* The Ivf protobuf in the global buffer that metadata "lance:ivf" names. */
static lt_code
read_ivf(lt_index_file *xf, Lt__Vec__Ivf **out, lt_error *err)
{
	size_t		len;
	const uint8_t *m = lt_index_file_meta(xf, "lance:ivf", &len);
	char		num[32];
	uint64_t	buf;
	uint8_t    *bytes = NULL;
	size_t		n;
	char	   *end;

	if (m == NULL || len == 0 || len >= sizeof(num))
		return lt_corrupt(err, "%s: no lance:ivf metadata", lt_index_file_path(xf));
	memcpy(num, m, len);
	num[len] = 0;
	buf = strtoull(num, &end, 10);
	if (*end != 0)
		return lt_corrupt(err, "%s: lance:ivf is not a buffer number", lt_index_file_path(xf));
	LT_TRY(lt_index_file_global_buffer(xf, buf, &bytes, &n, err));
	*out = lt__vec__ivf__unpack(lt_protobuf_allocator(), n, bytes);
	lt_free(bytes);
	if (*out == NULL)
		return lt_corrupt(err, "%s: the IVF model in global buffer %llu does not parse",
						  lt_index_file_path(xf), (unsigned long long) buf);
	return LT_OK;
}

lt_code
lt_ivf_model_lengths(lt_index_file *xf, uint32_t n, uint64_t *lengths, lt_error *err)
{
	Lt__Vec__Ivf *pb = NULL;

	LT_TRY(read_ivf(xf, &pb, err));
	if (pb->n_lengths != n)
	{
		lt__vec__ivf__free_unpacked(pb, lt_protobuf_allocator());
		return lt_corrupt(err, "%s: %zu partition lengths for %u partitions", lt_index_file_path(xf), pb->n_lengths, n);
	}
	for (uint32_t p = 0; p < n; p++)
		lengths[p] = pb->lengths[p];
	lt__vec__ivf__free_unpacked(pb, lt_protobuf_allocator());
	return LT_OK;
}

/*
 * A float tensor's n values as float32: the engine keeps an index's centroids and codebook in the
 * vectors' own type (float16, float32 or float64); float16 widens exactly, float64 rounds.  Returns
 * the element type (LT_TYPE_FLOAT16 / 32 / 64), 0 when the tensor is of another type or its size is
 * not n values.
 */
static lt_type_id
tensor_floats(const Lt__Vec__Tensor *t, size_t n, float *out)
{
	switch (t->data_type)
	{
		case LT__VEC__TENSOR__DATA_TYPE__FLOAT16:
			if (t->data.len != n * 2)
				return 0;
			for (size_t i = 0; i < n; i++)
			{
				uint16_t	h;

				memcpy(&h, t->data.data + i * 2, 2);
				out[i] = lt_half_to_float(h);
			}
			return LT_TYPE_FLOAT16;
		case LT__VEC__TENSOR__DATA_TYPE__FLOAT32:
			if (t->data.len != n * 4)
				return 0;
			memcpy(out, t->data.data, n * 4);
			return LT_TYPE_FLOAT32;
		case LT__VEC__TENSOR__DATA_TYPE__FLOAT64:
			if (t->data.len != n * 8)
				return 0;
			for (size_t i = 0; i < n; i++)
			{
				double		d;

				memcpy(&d, t->data.data + i * 8, 8);
				out[i] = (float) d;
			}
			return LT_TYPE_FLOAT64;
		default:
			return 0;
	}
}

/* A float64 tensor's n values as stored, in double (a copy in out); false when it is not n float64 values. */
static bool
tensor_doubles(const Lt__Vec__Tensor *t, size_t n, double **out)
{
	if (t->data_type != LT__VEC__TENSOR__DATA_TYPE__FLOAT64 || t->data.len != n * 8)
		return false;
	if ((*out = lt_malloc(sizeof(double) * n)) != NULL)
		memcpy(*out, t->data.data, n * 8);
	return true;
}

static lt_code
load_centroids(lt_ivf *ix, const Lt__Vec__Ivf *pb, const char *path, lt_error *err)
{
	const Lt__Vec__Tensor *t = pb->centroids_tensor;
	size_t		n;

	if (t == NULL || t->n_shape != 2 || (t->data_type != LT__VEC__TENSOR__DATA_TYPE__FLOAT16 &&
										 t->data_type != LT__VEC__TENSOR__DATA_TYPE__FLOAT32 &&
										 t->data_type != LT__VEC__TENSOR__DATA_TYPE__FLOAT64 &&
										 t->data_type != LT__VEC__TENSOR__DATA_TYPE__UINT8))
		return lt_error_set(err, LT_EUNSUPPORTED,
							"%s: IVF centroids are not a float16, float32, float64 or uint8 matrix", path);
	ix->n_partitions = t->shape[0];
	ix->dim = t->shape[1];
	n = (size_t) ix->n_partitions * ix->dim;
	if (ix->n_partitions == 0 || ix->dim == 0 || n > SIZE_MAX / 8)
		return lt_corrupt(err, "%s: IVF centroids tensor of %u x %u", path, ix->n_partitions, ix->dim);
	if (t->data_type == LT__VEC__TENSOR__DATA_TYPE__UINT8)
	{
		/* binary vectors (hamming): the centroids are bytes, as the vectors */
		if (t->data.len != n)
			return lt_corrupt(err, "%s: IVF centroids tensor of %u x %u has %zu bytes", path, ix->n_partitions,
							  ix->dim, t->data.len);
		if ((ix->centroids_u8 = lt_malloc(n)) == NULL)
			return lt_nomem(err);
		memcpy(ix->centroids_u8, t->data.data, n);
		ix->elem = LT_TYPE_UINT8;
		return LT_OK;
	}
	if ((ix->centroids = lt_malloc(sizeof(float) * n)) == NULL)
		return lt_nomem(err);
	if ((ix->elem = tensor_floats(t, n, ix->centroids)) == 0)
		return lt_corrupt(err, "%s: IVF centroids tensor of %u x %u has %zu bytes", path, ix->n_partitions,
						  ix->dim, t->data.len);
	if (ix->elem == LT_TYPE_FLOAT64 && tensor_doubles(t, n, &ix->centroids64) && ix->centroids64 == NULL)
		return lt_nomem(err);
	return LT_OK;
}

/* IVF_PQ storage: the code column, the quantizer's parameters and its codebook. */
static lt_code
open_pq(lt_ivf *ix, const char *path, lt_error *err)
{
	size_t		len;
	const uint8_t *m = lt_index_file_meta(ix->aux, "storage_metadata", &len);
	long		pos,
				bits,
				subs,
				dim,
				transposed = 1;
	uint8_t    *bytes = NULL;
	size_t		n;
	Lt__Vec__Tensor *t;
	size_t		want;

	if (m == NULL || !json_number(m, len, "codebook_position", &pos) || !json_number(m, len, "nbits", &bits) ||
		!json_number(m, len, "num_sub_vectors", &subs) || !json_number(m, len, "dimension", &dim))
		return lt_corrupt(err, "%s: no PQ storage_metadata", path);
	(void) json_number(m, len, "transposed", &transposed);
	if ((bits != 8 && bits != 4) || subs <= 0 || dim != (long) ix->dim || ix->dim % subs != 0 ||
		(bits == 4 && subs % 2 != 0) || pos < 0)
		return lt_corrupt(err, "%s: PQ of %ld sub-vectors, %ld bits, dimension %ld for vectors of %u", path, subs,
						  bits, dim, ix->dim);
	ix->pq_bits = (uint32_t) bits;
	ix->pq_m = (uint32_t) subs;
	ix->pq_bytes = bits == 4 ? (uint32_t) subs / 2 : (uint32_t) subs;
	ix->pq_transposed = transposed != 0;
	LT_TRY(lt_index_file_fixed_list(ix->aux, "__pq_code", LT_TYPE_UINT8, ix->pq_bytes, &ix->pq_field, err));
	LT_TRY(lt_index_file_global_buffer(ix->aux, (uint64_t) pos, &bytes, &n, err));
	t = lt__vec__tensor__unpack(lt_protobuf_allocator(), n, bytes);
	lt_free(bytes);
	want = ((size_t) 1 << bits) * ix->dim;
	ix->pq = true;
	ix->codebook = lt_malloc(sizeof(float) * want);
	ix->codebook_t = lt_malloc(sizeof(float) * want);
	ix->table = lt_malloc(sizeof(float) * ((size_t) 1 << bits) * ix->pq_m);
	ix->residual = lt_malloc(sizeof(float) * ix->dim);
	/* the codebook is in the vectors' type, as the centroids */
	if (t == NULL || (ix->codebook && tensor_floats(t, want, ix->codebook) != ix->elem))
	{
		if (t)
			lt__vec__tensor__free_unpacked(t, lt_protobuf_allocator());
		return lt_corrupt(err, "%s: the PQ codebook in global buffer %ld is not %zu %s values", path, pos, want,
						  lt_type_name(ix->elem));
	}
	if (ix->codebook && ix->codebook_t)
	{
		uint32_t	k = 1u << bits,
					sw = ix->dim / ix->pq_m;

		for (uint32_t sv = 0; sv < ix->pq_m; sv++)
			for (uint32_t w = 0; w < k; w++)
				for (uint32_t i = 0; i < sw; i++)
					ix->codebook_t[((size_t) sv * sw + i) * k + w] = ix->codebook[((size_t) sv * k + w) * sw + i];
	}
	if (ix->elem == LT_TYPE_FLOAT64)
	{
		(void) tensor_doubles(t, want, &ix->codebook64);
		ix->residual64 = lt_malloc(sizeof(double) * ix->dim);
	}
	lt__vec__tensor__free_unpacked(t, lt_protobuf_allocator());
	if (!ix->codebook || !ix->codebook_t || !ix->table || !ix->residual ||
		(ix->elem == LT_TYPE_FLOAT64 && (!ix->codebook64 || !ix->residual64)))
		return lt_nomem(err);
	return LT_OK;
}

/*
 * A segment's model as one cache entry (lt_vcache.h): this header, then the centroids, partition
 * starts and lengths, the PQ codebook and its transpose, the RaBitQ rotation's signs, at the offsets it
 * gives.
 */
typedef struct pq_model
{
	char		type_name[16];
	char		distance_type[16];
	lt_vmetric	metric;
	lt_type_id	elem;			/* the vectors' type: float centroids, or bytes for uint8 */
	uint32_t	dim,
				n_partitions,
				pq_bits,
				pq_m,
				pq_bytes;
	bool		transposed;
	bool		pq;				/* PQ codes (IVF_PQ, IVF_HNSW_PQ) */
	uint32_t	sq_bits;		/* SQ codes (IVF_SQ, IVF_HNSW_SQ): 8, and the bounds */
	double		sq_lo,
				sq_hi;
	uint32_t	rq_code_dim;	/* IVF_RQ */
	size_t		off_signs;
	size_t		off_centroids,
				off_part_start,
				off_part_len,
				off_codebook,
				off_codebook_t,
				off_centroids64,	/* float64 vectors: the centroids in double */
				off_codebook64;	/* float64 PQ: the codebook in double */
} pq_model;

static size_t
align16(size_t n)
{
	return (n + 15) & ~(size_t) 15;
}

/* The bytes of one vector element of type elem as the index files store it. */
static size_t
elem_bytes(lt_type_id elem)
{
	return elem == LT_TYPE_UINT8 ? 1 : elem == LT_TYPE_FLOAT16 ? 2 : elem == LT_TYPE_FLOAT64 ? 8 : 4;
}

/*
 * Keep ix's model (just opened from the files) in the cache, pinned by ix; ix then uses the entry's arrays.
 * The entry carries the element type: centroids as floats (bytes for uint8), flat vectors in partitions as stored.
 */
static void
model_put(lt_ivf *ix)
{
	size_t		cb = ix->pq ? ((size_t) 1 << ix->pq_bits) * ix->dim * sizeof(float) : 0;
	size_t		cw = ix->elem == LT_TYPE_UINT8 ? 1 : sizeof(float);	/* a centroid element */
	size_t		rs = ix->rq ? (size_t) 4 * ix->rq->code_bytes : 0;	/* the RaBitQ signs */
	size_t		c64 = ix->centroids64 ? sizeof(double) * ix->n_partitions * ix->dim : 0;
	size_t		cb64 = ix->codebook64 ? ((size_t) 1 << ix->pq_bits) * ix->dim * sizeof(double) : 0;
	size_t		at = align16(sizeof(pq_model));
	pq_model	h = {0};
	unsigned char *e;

	if (strlen(ix->type_name) >= sizeof(h.type_name) || strlen(ix->distance_type) >= sizeof(h.distance_type))
		return;
	strcpy(h.type_name, ix->type_name);
	strcpy(h.distance_type, ix->distance_type);
	h.metric = ix->metric;
	h.elem = ix->elem;
	h.dim = ix->dim;
	h.n_partitions = ix->n_partitions;
	h.pq_bits = ix->pq_bits;
	h.pq_m = ix->pq_m;
	h.pq_bytes = ix->pq_bytes;
	h.transposed = ix->pq_transposed;
	h.pq = ix->pq;
	h.sq_bits = ix->sq.bits;
	h.sq_lo = ix->sq.lo;
	h.sq_hi = ix->sq.hi;
	h.rq_code_dim = ix->rq ? ix->rq->code_dim : 0;
	h.off_centroids = at;
	at = align16(at + cw * ix->n_partitions * ix->dim);
	h.off_part_start = at;
	at = align16(at + sizeof(uint64_t) * ix->n_partitions);
	h.off_part_len = at;
	at = align16(at + sizeof(uint32_t) * ix->n_partitions);
	h.off_codebook = at;
	at = align16(at + cb);
	h.off_codebook_t = at;
	at = align16(at + cb);
	h.off_centroids64 = at;
	at = align16(at + c64);
	h.off_codebook64 = at;
	at = align16(at + cb64);
	h.off_signs = at;
	at += rs;
	if ((e = lt_vcache_put(ix->cache_key, LT_VCACHE_MODEL, at, true)) == NULL)
		return;
	memcpy(e, &h, sizeof(h));
	memcpy(e + h.off_centroids, ix->elem == LT_TYPE_UINT8 ? (void *) ix->centroids_u8 : (void *) ix->centroids,
		   cw * ix->n_partitions * ix->dim);
	memcpy(e + h.off_part_start, ix->part_start, sizeof(uint64_t) * ix->n_partitions);
	memcpy(e + h.off_part_len, ix->part_len, sizeof(uint32_t) * ix->n_partitions);
	if (cb)
	{
		memcpy(e + h.off_codebook, ix->codebook, cb);
		memcpy(e + h.off_codebook_t, ix->codebook_t, cb);
	}
	if (c64)
		memcpy(e + h.off_centroids64, ix->centroids64, c64);
	if (cb64)
		memcpy(e + h.off_codebook64, ix->codebook64, cb64);
	if (rs)
		memcpy(e + h.off_signs, ix->rq->signs, rs);
	lt_vcache_publish(e);
	lt_free(ix->centroids);
	lt_free(ix->centroids64);
	lt_free(ix->codebook64);
	lt_free(ix->centroids_u8);
	lt_free(ix->part_start);
	lt_free(ix->part_len);
	lt_free(ix->codebook);
	lt_free(ix->codebook_t);
	ix->centroids = ix->elem == LT_TYPE_UINT8 ? NULL : (float *) (e + h.off_centroids);
	ix->centroids_u8 = ix->elem == LT_TYPE_UINT8 ? e + h.off_centroids : NULL;
	ix->part_start = (uint64_t *) (e + h.off_part_start);
	ix->part_len = (uint32_t *) (e + h.off_part_len);
	ix->codebook = cb ? (float *) (e + h.off_codebook) : NULL;
	ix->codebook_t = cb ? (float *) (e + h.off_codebook_t) : NULL;
	ix->centroids64 = c64 ? (double *) (e + h.off_centroids64) : NULL;
	ix->codebook64 = cb64 ? (double *) (e + h.off_codebook64) : NULL;
	ix->cached = e;
}

/* ix from a cached model (pinned): no file is opened; the auxiliary file waits for a partition not cached. */
static lt_code
model_use(lt_ivf *ix, void *entry, lt_error *err)
{
	unsigned char *e = entry;
	pq_model	h;

	memcpy(&h, e, sizeof(h));
	ix->cached = e;
	ix->type_name = lt_strdup(h.type_name);
	ix->distance_type = lt_strdup(h.distance_type);
	ix->metric = h.metric;
	ix->dim = h.dim;
	ix->n_partitions = h.n_partitions;
	ix->pq_bits = h.pq_bits;
	ix->pq_m = h.pq_m;
	ix->pq_bytes = h.pq_bytes;
	ix->pq_transposed = h.transposed;
	ix->elem = h.elem;
	ix->pq = h.pq;
	ix->centroids = h.elem == LT_TYPE_UINT8 ? NULL : (float *) (e + h.off_centroids);
	ix->centroids_u8 = h.elem == LT_TYPE_UINT8 ? e + h.off_centroids : NULL;
	ix->part_start = (uint64_t *) (e + h.off_part_start);
	ix->part_len = (uint32_t *) (e + h.off_part_len);
	ix->codebook = (float *) (e + h.off_codebook);
	ix->codebook_t = (float *) (e + h.off_codebook_t);
	ix->centroids64 = h.elem == LT_TYPE_FLOAT64 ? (double *) (e + h.off_centroids64) : NULL;
	ix->codebook64 = h.elem == LT_TYPE_FLOAT64 && h.pq ? (double *) (e + h.off_codebook64) : NULL;
	if (!ix->type_name || !ix->distance_type)
		return lt_nomem(err);
	if (h.sq_bits)
	{
		/* the quantizer's column is bound when the auxiliary file opens */
		ix->sq.dim = h.dim;
		ix->sq.bits = h.sq_bits;
		ix->sq.lo = h.sq_lo;
		ix->sq.hi = h.sq_hi;
	}
	if (h.rq_code_dim)
		LT_TRY(lt_rq_new(h.dim, h.rq_code_dim, e + h.off_signs, &ix->rq, err));
	if (!h.pq)
	{
		ix->codebook = ix->codebook_t = NULL;
		return LT_OK;
	}
	ix->table = lt_malloc(sizeof(float) * ((size_t) 1 << h.pq_bits) * h.pq_m);
	ix->residual = lt_malloc(sizeof(float) * h.dim);
	if (h.elem == LT_TYPE_FLOAT64 && (ix->residual64 = lt_malloc(sizeof(double) * h.dim)) == NULL)
		return lt_nomem(err);
	if (!ix->table || !ix->residual)
		return lt_nomem(err);
	return LT_OK;
}

lt_code
lt_ivf_open_storage(lt_ivf *ix, lt_error *err)
{
	if (ix->aux)
		return LT_OK;
	if (ix->store == NULL || ix->aux_path == NULL)
		return lt_error_set(err, LT_EINVALID, "the IVF index was opened without its storage");
	LT_TRY(lt_index_file_open(ix->store, ix->aux_path, &ix->aux, err));
	if (lt_index_file_rows(ix->aux) != ix->part_start[ix->n_partitions - 1] + ix->part_len[ix->n_partitions - 1])
		return lt_corrupt(err, "%s: not the file its cached model was read from", ix->aux_path);
	LT_TRY(lt_index_file_field(ix->aux, "_rowid", LT_TYPE_UINT64, &ix->rowid_field, err));
	if (ix->sq.bits)
	{
		lt_sq_codes sq;

		LT_TRY(lt_sq_codes_open(ix->aux, ix->dim, &sq, err));
		if (sq.lo != ix->sq.lo || sq.hi != ix->sq.hi)
			return lt_corrupt(err, "%s: not the file its cached model was read from", ix->aux_path);
		ix->sq.field = sq.field;
		return LT_OK;
	}
	if (ix->rq)
		return lt_rq_bind(ix->rq, ix->aux, err);
	if (!ix->pq)
		return lt_index_file_fixed_list(ix->aux, "flat", ix->elem, ix->dim, &ix->flat_field, err);
	return lt_index_file_fixed_list(ix->aux, "__pq_code", LT_TYPE_UINT8, ix->pq_bytes, &ix->pq_field, err);
}

/*
 * use_cache: the model from the cache when it is there (its key naming version); else the files are
 * read (and the model kept, partitions through the cache, under the key of version 0).
 */
static lt_code
ivf_open(lt_store *store, const char *dir, bool with_storage, bool use_cache, uint64_t version, lt_ivf **out,
		 lt_error *err)
{
	lt_ivf	   *ix = lt_calloc(1, sizeof(lt_ivf));
	lt_index_file *xf = NULL;
	Lt__Vec__Ivf *pb = NULL;
	char	   *path = NULL;
	const uint8_t *m;
	size_t		len;
	lt_code		rc;

	*out = NULL;
	if (ix == NULL)
		return lt_nomem(err);
	if (with_storage)
	{
		void	   *entry;

		ix->store = store;
		if (!(ix->cache_key = lt_asprintf("%s\x1f%s\x1f%llu", store->root ? store->root : "", dir,
										  (unsigned long long) version)) ||
			!(ix->aux_path = lt_asprintf("%sauxiliary.idx", dir)))
		{
			rc = lt_nomem(err);
			goto done;
		}
		if (use_cache && (entry = lt_vcache_get(ix->cache_key, LT_VCACHE_MODEL, NULL, true)) != NULL)
		{
			rc = model_use(ix, entry, err);
			goto done;
		}
	}
	path = lt_asprintf("%sindex.idx", dir);
	if (path == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	if ((rc = lt_index_file_open(store, path, &xf, err)) != LT_OK)
		goto done;
	m = lt_index_file_meta(xf, "lance:index", &len);
	if (m == NULL || (ix->type_name = json_string(m, len, "type")) == NULL ||
		(ix->distance_type = json_string(m, len, "distance_type")) == NULL)
	{
		rc = lt_corrupt(err, "%s: no lance:index type and distance_type", path);
		goto done;
	}
	if (strcmp(ix->distance_type, "l2") == 0)
		ix->metric = LT_VMETRIC_L2;
	else if (strcmp(ix->distance_type, "cosine") == 0)
		ix->metric = LT_VMETRIC_COSINE;
	else if (strcmp(ix->distance_type, "dot") == 0)
		ix->metric = LT_VMETRIC_NEG_DOT;
	else if (strcmp(ix->distance_type, "hamming") == 0)
		ix->metric = LT_VMETRIC_HAMMING;
	else
	{
		rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: distance type \"%s\"", path, ix->distance_type);
		goto done;
	}
	if ((rc = read_ivf(xf, &pb, err)) != LT_OK || (rc = load_centroids(ix, pb, path, err)) != LT_OK)
		goto done;
	lt__vec__ivf__free_unpacked(pb, lt_protobuf_allocator());
	pb = NULL;
	lt_index_file_close(xf);
	xf = NULL;

	if (with_storage)
	{
		uint64_t	at = 0;

		if (strcmp(ix->type_name, "IVF_FLAT") != 0 && strcmp(ix->type_name, "IVF_PQ") != 0 &&
			strcmp(ix->type_name, "IVF_SQ") != 0 && strcmp(ix->type_name, "IVF_RQ") != 0 && !lt_ivf_is_hnsw(ix))
		{
			rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: searching an %s index", path, ix->type_name);
			goto done;
		}
		lt_free(path);
		path = lt_asprintf("%sauxiliary.idx", dir);
		if (path == NULL)
		{
			rc = lt_nomem(err);
			goto done;
		}
		if ((rc = lt_index_file_open(store, path, &ix->aux, err)) != LT_OK ||
			(rc = read_ivf(ix->aux, &pb, err)) != LT_OK)
			goto done;
		if (pb->n_lengths != ix->n_partitions)
		{
			rc = lt_corrupt(err, "%s: %zu partition lengths for %u centroids", path, pb->n_lengths,
							ix->n_partitions);
			goto done;
		}
		ix->part_start = lt_calloc(ix->n_partitions, sizeof(uint64_t));
		ix->part_len = lt_calloc(ix->n_partitions, sizeof(uint32_t));
		if (!ix->part_start || !ix->part_len)
		{
			rc = lt_nomem(err);
			goto done;
		}
		for (uint32_t p = 0; p < ix->n_partitions; p++)
		{
			ix->part_start[p] = at;
			ix->part_len[p] = pb->lengths[p];
			at += pb->lengths[p];
		}
		if (at != lt_index_file_rows(ix->aux))
		{
			rc = lt_corrupt(err, "%s: partitions of %llu rows in a file of %llu", path,
							(unsigned long long) at, (unsigned long long) lt_index_file_rows(ix->aux));
			goto done;
		}
		if ((rc = lt_index_file_field(ix->aux, "_rowid", LT_TYPE_UINT64, &ix->rowid_field, err)) != LT_OK)
			goto done;
		if (ix->elem == LT_TYPE_UINT8 && strcmp(ix->type_name, "IVF_FLAT") != 0)
		{
			/* the engines build only IVF_FLAT over binary vectors */
			rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: %s of uint8 vectors", path, ix->type_name);
			goto done;
		}
		if (strcmp(ix->type_name, "IVF_SQ") == 0 || strcmp(ix->type_name, "IVF_HNSW_SQ") == 0)
		{
			if ((rc = lt_sq_codes_open(ix->aux, ix->dim, &ix->sq, err)) != LT_OK)
				goto done;
		}
		else if (strcmp(ix->type_name, "IVF_PQ") == 0 || strcmp(ix->type_name, "IVF_HNSW_PQ") == 0)
		{
			if ((rc = open_pq(ix, path, err)) != LT_OK)
				goto done;
		}
		else if (strcmp(ix->type_name, "IVF_RQ") == 0)
		{
			if ((rc = lt_rq_open(ix->aux, ix->dim, &ix->rq, err)) != LT_OK)
				goto done;
		}
		else
		{
			if ((rc = lt_index_file_fixed_list(ix->aux, "flat", ix->elem, ix->dim, &ix->flat_field,
												err)) != LT_OK)
				goto done;
		}
		if (ix->n_partitions > 0)
			model_put(ix);
	}
	rc = LT_OK;
done:
	if (pb)
		lt__vec__ivf__free_unpacked(pb, lt_protobuf_allocator());
	if (xf)
		lt_index_file_close(xf);
	lt_free(path);
	if (rc != LT_OK)
		lt_ivf_close(ix);
	else
		*out = ix;
	return rc;
}

lt_code
lt_ivf_open(lt_store *store, const char *dir, bool with_storage, lt_ivf **out, lt_error *err)
{
	/* every file read, every column bound (the index builders' remaps read them), the model kept */
	return ivf_open(store, dir, with_storage, false, 0, out, err);
}

lt_code
lt_ivf_open_cached(lt_store *store, const char *dir, uint64_t version, lt_ivf **out, lt_error *err)
{
	return ivf_open(store, dir, true, true, version, out, err);
}

void
lt_ivf_close(lt_ivf *ix)
{
	if (ix == NULL)
		return;
	if (ix->aux)
		lt_index_file_close(ix->aux);
	lt_free(ix->type_name);
	lt_free(ix->distance_type);
	if (ix->cached)
		lt_vcache_unpin(ix->cached);
	else
	{
		lt_free(ix->centroids_u8);
		lt_free(ix->centroids);
		lt_free(ix->part_start);
		lt_free(ix->part_len);
		lt_free(ix->codebook);
		lt_free(ix->codebook_t);
		lt_free(ix->centroids64);
		lt_free(ix->codebook64);
	}
	lt_free(ix->residual64);
	lt_free(ix->cache_key);
	lt_free(ix->aux_path);
	lt_free(ix->table);
	lt_free(ix->residual);
	lt_rq_free(ix->rq);
	lt_free(ix);
}

bool
lt_ivf_is_hnsw(const lt_ivf *ix)
{
	return strcmp(ix->type_name, "IVF_HNSW_PQ") == 0 || strcmp(ix->type_name, "IVF_HNSW_SQ") == 0;
}

bool
lt_ivf_exact_scores(const lt_ivf *ix)
{
	return strcmp(ix->type_name, "IVF_FLAT") == 0;
}

/*
 * The engine's kernels over float64 slices (its L2 and dot of f64): the values past the last whole
 * chunk of 8 summed first, the whole chunks in 8 lane sums added after them, all in double; then the
 * result rounded to float.
 */
static float
l2_f64_engine(const double *a, const double *b, uint32_t n)
{
	uint32_t	whole = n - n % 8;
	double		s = 0,
				lanes[8] = {0},
				t = 0;

	for (uint32_t i = whole; i < n; i++)
		s += (a[i] - b[i]) * (a[i] - b[i]);
	for (uint32_t i = 0; i < whole; i += 8)
		for (uint32_t j = 0; j < 8; j++)
			lanes[j] += (a[i + j] - b[i + j]) * (a[i + j] - b[i + j]);
	for (uint32_t j = 0; j < 8; j++)
		t += lanes[j];
	return (float) (s + t);
}

static float
dot_f64_engine(const double *a, const double *b, uint32_t n)
{
	uint32_t	whole = n - n % 8;
	double		s = 0,
				lanes[8] = {0},
				t = 0;

	for (uint32_t i = whole; i < n; i++)
		s += a[i] * b[i];
	for (uint32_t i = 0; i < whole; i += 8)
		for (uint32_t j = 0; j < 8; j++)
			lanes[j] += a[i + j] * b[i + j];
	for (uint32_t j = 0; j < 8; j++)
		t += lanes[j];
	return (float) (s + t);
}

/* The float64 query into out, divided by its norm for cosine (in double, as the engine normalizes it). */
static void
query_f64(const lt_ivf *ix, double *out)
{
	double		norm = 0;

	if (ix->metric == LT_VMETRIC_COSINE)
	{
		for (uint32_t i = 0; i < ix->dim; i++)
			norm += ix->query64[i] * ix->query64[i];
		norm = sqrt(norm);
	}
	for (uint32_t i = 0; i < ix->dim; i++)
		out[i] = norm > 0 ? ix->query64[i] / norm : ix->query64[i];
}

/* The engine's distance of the float64 query (normalized for cosine) from centroid p: L2, or 1 - dot. */
static float
route_f64(const lt_ivf *ix, const double *q, uint32_t p)
{
	const double *c = ix->centroids64 + (size_t) p * ix->dim;

	return ix->metric == LT_VMETRIC_NEG_DOT ? 1.0f - dot_f64_engine(q, c, ix->dim) : l2_f64_engine(q, c, ix->dim);
}

uint32_t
lt_ivf_probe(const lt_ivf *ix, const float *q, uint32_t nprobes, uint32_t *parts)
{
	lt_topk		t;
	float	   *qn = NULL;
	const float *qq = q;
	lt_vmetric	route = ix->metric == LT_VMETRIC_NEG_DOT ? LT_VMETRIC_NEG_DOT : LT_VMETRIC_L2;
	uint32_t	n;

	if (nprobes > ix->n_partitions)
		nprobes = ix->n_partitions;
	if (lt_topk_init(&t, nprobes, NULL) != LT_OK)
		return 0;
	if (ix->elem == LT_TYPE_UINT8)
	{
		/* binary vectors: the centroids nearest by hamming distance to the byte query */
		for (uint32_t p = 0; ix->query_u8 && p < ix->n_partitions; p++)
			lt_topk_push(&t, lt_vdist_hamming(ix->centroids_u8 + (size_t) p * ix->dim, ix->query_u8, ix->dim), p);
		lt_topk_finish(&t);
		n = (uint32_t) t.n;
		for (uint32_t i = 0; i < n; i++)
			parts[i] = (uint32_t) t.items[i].addr;
		lt_topk_free(&t);
		return n;
	}
	if (ix->elem == LT_TYPE_FLOAT64 && ix->query64 && ix->centroids64)
	{
		/* float64 vectors: routed in double as the engine routes them (near ties then break alike) */
		double	   *q64 = lt_malloc(sizeof(double) * ix->dim);

		if (q64 != NULL)
		{
			query_f64(ix, q64);
			for (uint32_t p = 0; p < ix->n_partitions; p++)
				lt_topk_push(&t, route_f64(ix, q64, p), p);
			lt_free(q64);
			goto done;
		}
	}
	if (ix->metric == LT_VMETRIC_COSINE && (qn = lt_malloc(sizeof(float) * ix->dim)) != NULL)
	{
		/* cosine routes the normalized query by L2 */
		double		norm = 0;

		for (uint32_t i = 0; i < ix->dim; i++)
			norm += (double) q[i] * q[i];
		norm = sqrt(norm);
		for (uint32_t i = 0; i < ix->dim; i++)
			qn[i] = norm > 0 ? (float) (q[i] / norm) : q[i];
		qq = qn;
	}
	for (uint32_t p = 0; p < ix->n_partitions; p++)
		lt_topk_push(&t, lt_vdist_f32(route, ix->centroids + (size_t) p * ix->dim, qq, ix->dim), p);
done:
	lt_topk_finish(&t);
	n = (uint32_t) t.n;
	for (uint32_t i = 0; i < n; i++)
		parts[i] = (uint32_t) t.items[i].addr;
	lt_topk_free(&t);
	lt_free(qn);
	return n;
}

/*
 * One sub-vector's row of the distance table: every codeword w against sub (sw floats), from the
 * transposed codebook cbt[i][w] so that the inner loop runs over codewords (vectorised); each entry
 * sums its sw terms in order i = 0, 1, ..., as the engine does.
 */
static LT_VECTORIZE void
pq_table_sub(float *restrict out, const float *restrict cbt, const float *restrict sub, uint32_t sw, uint32_t k,
			 bool dot)
{
	uint32_t	w0 = 0;

	/* 16 codewords at a time, their sums held in registers over the sub-vector's dimensions */
	for (; w0 + 16 <= k; w0 += 16)
	{
		float		acc[16] = {0};

		for (uint32_t i = 0; i < sw; i++)
		{
			const float *restrict c = cbt + (size_t) i * k + w0;
			float		x = sub[i];

			if (dot)
				for (uint32_t t = 0; t < 16; t++)
					acc[t] += x * c[t];
			else
				for (uint32_t t = 0; t < 16; t++)
				{
					float		d = x - c[t];

					acc[t] += d * d;
				}
		}
		for (uint32_t t = 0; t < 16; t++)
			out[w0 + t] = dot ? 1.0f - acc[t] : acc[t];
	}
	for (uint32_t w = w0; w < k; w++)
	{
		float		acc = 0;

		for (uint32_t i = 0; i < sw; i++)
		{
			float		c = cbt[(size_t) i * k + w];

			if (dot)
				acc += sub[i] * c;
			else
				acc += (sub[i] - c) * (sub[i] - c);
		}
		out[w] = dot ? 1.0f - acc : acc;
	}
}

/* A float rounded to float16 and back: the engines' arithmetic on float16 arrays rounds every result so. */
static inline float
f16r(float x)
{
	return lt_half_to_float(lt_float_to_half(x));
}

void
lt_ivf_f16_normalize(const float *q, uint32_t dim, int engine, float *out)
{
	float		norm;

	if (engine == 8)
	{
		/*
		 * Lance 8 normalizes the float16 query with its float16 type's arithmetic (the half crate):
		 * each square rounded to float16, their sum taken in float and rounded, its square root
		 * rounded, each item divided by it in float and rounded
		 */
		float		sum = 0;

		for (uint32_t i = 0; i < dim; i++)
		{
			float		x = f16r(q[i]);

			sum += f16r(x * x);
		}
		norm = f16r(sqrtf(f16r(sum)));
	}
	else
	{
		/* Lance 12: the norm of the float16 items in float, each item divided by it and rounded */
		double		sum = 0;

		for (uint32_t i = 0; i < dim; i++)
		{
			float		x = f16r(q[i]);

			sum += (double) x * x;
		}
		norm = (float) sqrt(sum);
	}
	for (uint32_t i = 0; i < dim; i++)
		out[i] = norm > 0 ? f16r(f16r(q[i]) / norm) : f16r(q[i]);
}

/*
 * The query's residual to centroid c for float16 vectors, as the engines compute it on float16 arrays
 * (each result rounded to float16): the query in float16; for cosine normalized as the engine does
 * (lt_ivf_f16_normalize); then minus the centroid, rounded to float16 (dot: the query as is).
 * Computed in float without these roundings, the table's entries differ from the engine's by up to
 * about 1e-4 (l2) and 1e-3 (cosine) relative, which reorders rows whose scores are that close: the
 * candidates that reach the re-ranking then differ.
 */
static void
pq_residual_f16(lt_ivf *ix, const float *c, const float *q)
{
	if (ix->metric == LT_VMETRIC_COSINE)
		lt_ivf_f16_normalize(q, ix->dim, ix->f16_engine, ix->residual);
	else
		for (uint32_t i = 0; i < ix->dim; i++)
			ix->residual[i] = f16r(q[i]);
	if (ix->metric != LT_VMETRIC_NEG_DOT)
		for (uint32_t i = 0; i < ix->dim; i++)
			ix->residual[i] = f16r(ix->residual[i] - c[i]);
}

/*
 * Lance 12's float16 L2 / dot kernel (C built -ffast-math for AVX2, which it runs on x86 without
 * AVX-512 FP16): below 16 items one chain of fused multiply-adds in order; from 16 on, blocks of 16
 * into four 4-lane accumulators (item 4a + j of a block into accumulator a, lane j), those added
 * lane-wise as (a0 + a1) + (a2 + a3), the lanes as (l0 + l2) + (l1 + l3), then the items past the
 * last block chained on.  Products of float16 values are exact in float, so dot's fused and separate
 * multiply-adds agree; L2's differences are not (a separate multiply and add differ in the last bit
 * for about one entry in ten).
 */
static float
f16_kernel_lance12(const float *x, const float *y, uint32_t n, bool dot)
{
	uint32_t	whole = n - n % 16;
	float		acc = 0;

	if (whole > 0)
	{
		float		l[16] = {0},
					v[4];

		for (uint32_t i = 0; i < whole; i += 16)
			for (uint32_t j = 0; j < 16; j++)
			{
				float		d = dot ? x[i + j] : x[i + j] - y[i + j];

				l[j] = fmaf(d, dot ? y[i + j] : d, l[j]);
			}
		for (uint32_t j = 0; j < 4; j++)
			v[j] = (l[j] + l[4 + j]) + (l[8 + j] + l[12 + j]);
		acc = (v[0] + v[2]) + (v[1] + v[3]);
	}
	for (uint32_t i = whole; i < n; i++)
	{
		float		d = dot ? x[i] : x[i] - y[i];

		acc = fmaf(d, dot ? y[i] : d, acc);
	}
	return acc;
}

/*
 * Lance 8's: on x86 with AVX-512 but no AVX-512 FP16 (and without AVX2-only CPUs' C kernel) its Rust
 * loops over chunks of `lanes` items (16 for L2, 32 for dot), multiplying and adding separately: the
 * items past the last whole chunk summed first, in order; each lane summed over the chunks; the lanes
 * added in order; then the two sums.  Below one chunk, one chain in order.
 */
static float
f16_kernel_lance8(const float *x, const float *y, uint32_t n, bool dot)
{
	uint32_t	lanes = dot ? 32 : 16,
				whole = n - n % lanes;
	float		s = 0,
				t = 0,
				l[32] = {0};

	for (uint32_t i = whole; i < n; i++)
	{
		float		d = dot ? x[i] : x[i] - y[i];
		float		p = d * (dot ? y[i] : d);

		s += p;
	}
	for (uint32_t i = 0; i < whole; i += lanes)
		for (uint32_t j = 0; j < lanes; j++)
		{
			float		d = dot ? x[i + j] : x[i + j] - y[i + j];
			float		p = d * (dot ? y[i + j] : d);

			l[j] += p;
		}
	for (uint32_t j = 0; j < lanes; j++)
		t += l[j];
	return s + t;
}

/*
 * The table of float16 vectors from the residual (dot: the query), each entry the engine's float16
 * kernel over the sub-vector and the codeword (f16_engine: whose), dot's as 1 - the product.  With
 * the residual of pq_residual_f16, Lance 12's and Lance 8's PQ code scores to the last bit.
 */
static void
pq_table_f16(lt_ivf *ix)
{
	uint32_t	k = 1u << ix->pq_bits,
				sw = ix->dim / ix->pq_m;
	bool		dot = ix->metric == LT_VMETRIC_NEG_DOT;

	for (uint32_t s = 0; s < ix->pq_m; s++)
	{
		const float *r = ix->residual + (size_t) s * sw;

		for (uint32_t w = 0; w < k; w++)
		{
			const float *cw = ix->codebook + ((size_t) s * k + w) * sw;
			float		d = ix->f16_engine == 8 ? f16_kernel_lance8(r, cw, sw, dot) : f16_kernel_lance12(r, cw, sw, dot);

			ix->table[(size_t) s * k + w] = dot ? 1.0f - d : d;
		}
	}
}

/*
 * The table for float64 vectors, as the engine computes it on f64 arrays: the double query (normalized
 * in double for cosine) minus the centroid in double, each entry the engine's f64 kernel over the
 * sub-vector and the codeword, rounded to float only then.  In float (the rounded residual and
 * codebook), entries differ from the engine's in their last bits, which breaks near-ties of rows at
 * the candidate cut differently.
 */
static void
pq_table_f64(lt_ivf *ix, uint32_t p)
{
	uint32_t	k = 1u << ix->pq_bits,
				sw = ix->dim / ix->pq_m;
	const double *c = ix->centroids64 + (size_t) p * ix->dim;
	bool		dot = ix->metric == LT_VMETRIC_NEG_DOT;

	query_f64(ix, ix->residual64);
	if (!dot)
		for (uint32_t i = 0; i < ix->dim; i++)
			ix->residual64[i] -= c[i];
	for (uint32_t s = 0; s < ix->pq_m; s++)
	{
		const double *r = ix->residual64 + (size_t) s * sw;

		for (uint32_t w = 0; w < k; w++)
		{
			const double *cw = ix->codebook64 + ((size_t) s * k + w) * sw;

			ix->table[(size_t) s * k + w] = dot ? 1.0f - dot_f64_engine(r, cw, sw) : l2_f64_engine(r, cw, sw);
		}
	}
}

/*
 * The distance table of partition p for q: the query (normalized for cosine), minus the partition's
 * centroid for l2 and cosine, against every codeword of every sub-vector.
 */
void
lt_ivf_pq_table(lt_ivf *ix, uint32_t p, const float *q)
{
	uint32_t	k = 1u << ix->pq_bits,
				sw = ix->dim / ix->pq_m;
	const float *c = ix->centroids + (size_t) p * ix->dim;
	double		norm = 0;

	if (ix->elem == LT_TYPE_FLOAT64 && ix->query64 && ix->codebook64 && ix->centroids64 && ix->residual64)
	{
		pq_table_f64(ix, p);
		return;
	}
	if (ix->elem == LT_TYPE_FLOAT16)
	{
		pq_residual_f16(ix, c, q);
		pq_table_f16(ix);
		return;
	}
	if (ix->metric == LT_VMETRIC_COSINE)
	{
		for (uint32_t i = 0; i < ix->dim; i++)
			norm += (double) q[i] * q[i];
		norm = sqrt(norm);
	}
	for (uint32_t i = 0; i < ix->dim; i++)
	{
		float		x = ix->metric == LT_VMETRIC_COSINE && norm > 0 ? (float) (q[i] / norm) : q[i];

		ix->residual[i] = ix->metric == LT_VMETRIC_NEG_DOT ? x : x - c[i];
	}
	for (uint32_t s = 0; s < ix->pq_m; s++)
		pq_table_sub(ix->table + (size_t) s * k, ix->codebook_t + (size_t) s * sw * k, ix->residual + (size_t) s * sw,
					 sw, k, ix->metric == LT_VMETRIC_NEG_DOT);
}

/* The engine's PQ distance of row r (of len rows) from its codes and the table. */
static inline float
pq_raw(const lt_ivf *ix, const uint8_t *codes, uint32_t len, uint32_t r)
{
	uint32_t	k = 1u << ix->pq_bits;
	float		d = 0;

	for (uint32_t j = 0; j < ix->pq_bytes; j++)
	{
		uint8_t		b = ix->pq_transposed ? codes[(size_t) j * len + r] : codes[(size_t) r * ix->pq_bytes + j];

		if (ix->pq_bits == 8)
			d += ix->table[(size_t) j * k + b];
		else if (ix->quantize_4bit)
		{
			/* the engine's fast path adds the two nibbles' entries one after the other ... */
			d += ix->table[(size_t) (2 * j) * k + (b & 0x0F)];
			d += ix->table[(size_t) (2 * j + 1) * k + (b >> 4)];
		}
		else
			/* ... its row-at-a-time path (with a prefilter) a byte's two entries first */
			d += ix->table[(size_t) (2 * j) * k + (b & 0x0F)] + ix->table[(size_t) (2 * j + 1) * k + (b >> 4)];
	}
	return d;
}

/*
 * 8-bit transposed codes: every row's distance, a sub-vector's column of codes at a time (contiguous
 * codes, one 256-entry table row in cache, no per-row call); each row still adds its m entries in
 * order j = 0, 1, ..., as pq_raw does.
 */
static LT_VECTORIZE void
pq_scan8t(const float *restrict table, const uint8_t *restrict codes, uint32_t len, uint32_t m, float *restrict dist)
{
	uint32_t	j = 0;

	for (uint32_t r = 0; r < len; r++)
		dist[r] = 0;
	for (; j + 4 <= m; j += 4)
	{
		const uint8_t *restrict c0 = codes + (size_t) j * len,
				   *restrict c1 = c0 + len,
				   *restrict c2 = c1 + len,
				   *restrict c3 = c2 + len;
		const float *restrict t0 = table + (size_t) j * 256,
				   *restrict t1 = t0 + 256,
				   *restrict t2 = t1 + 256,
				   *restrict t3 = t2 + 256;

		for (uint32_t r = 0; r < len; r++)
		{
			float		d = dist[r];

			d += t0[c0[r]];
			d += t1[c1[r]];
			d += t2[c2[r]];
			d += t3[c3[r]];
			dist[r] = d;
		}
	}
	for (; j < m; j++)
	{
		const uint8_t *restrict c = codes + (size_t) j * len;
		const float *restrict t = table + (size_t) j * 256;

		for (uint32_t r = 0; r < len; r++)
			dist[r] += t[c[r]];
	}
}

/* A float rounded and cast to u8 as Rust's `as u8` does (saturating; NaN is 0). */
static inline uint8_t
sat_u8(float x)
{
	x = roundf(x);
	return !(x > 0) ? 0 : x >= 255 ? 255 : (uint8_t) x;
}

/*
 * The engine's distances of every row of a partition (dist: len floats).  4-bit codes without a
 * prefilter go its fast way: the first max(200, k_hint) rows exactly, then rows in blocks of 16 from a
 * table quantized to u8 between the table's minimum and the largest exact distance, summed with
 * saturation and mapped back as q * range + min; the rows after the last whole block exactly.
 * Lance 8 and 12 both saturate (a wrapping sum would rank far rows nearest: checked against them), and
 * neither quantizes 8-bit codes, even on a CPU with AVX-512 VBMI (newer Lance's FastScan is not in them).
 */
static void
pq_distances(lt_ivf *ix, const uint8_t *codes, uint32_t len, float *dist)
{
	if (ix->pq_bits == 8 && ix->pq_transposed)
	{
		pq_scan8t(ix->table, codes, len, ix->pq_bytes, dist);
		return;
	}
	if (ix->pq_bits == 4 && ix->quantize_4bit && len > 0)
	{
		uint32_t	flat = Max32(200, ix->k_hint);
		uint32_t	rem = len % 16;
		size_t		nt = (size_t) 16 * ix->pq_m;
		float		qmax = -INFINITY,
					qmin = INFINITY,
					factor,
					range;
		uint8_t		qt[512];	/* 16 * pq_m entries (pq_m <= 32 for this path) */

		if (flat > len)
			flat = len;
		for (uint32_t r = 0; r < flat; r++)
		{
			dist[r] = pq_raw(ix, codes, len, r);
			if (dist[r] > qmax)
				qmax = dist[r];
		}
		for (size_t e = 0; e < nt; e++)
			if (ix->table[e] < qmin)
				qmin = ix->table[e];
		if (nt <= sizeof(qt))
		{
			factor = 255.0f / (qmax - qmin);
			range = (qmax - qmin) / 255.0f;
			for (size_t e = 0; e < nt; e++)
				qt[e] = sat_u8((ix->table[e] - qmin) * factor);
			for (uint32_t r = flat; r < len - rem; r++)
			{
				unsigned	sum = 0;

				for (uint32_t j = 0; j < ix->pq_bytes; j++)
				{
					uint8_t		b = ix->pq_transposed ? codes[(size_t) j * len + r] : codes[(size_t) r * ix->pq_bytes + j];

					sum += qt[(2 * j) * 16 + (b & 0x0F)];
					sum += qt[(2 * j + 1) * 16 + (b >> 4)];
				}
				dist[r] = (float) (sum > 255 ? 255 : sum) * range + qmin;
			}
			for (uint32_t r = Max32(len - rem, flat); r < len; r++)
				dist[r] = pq_raw(ix, codes, len, r);
			return;
		}
	}
	for (uint32_t r = 0; r < len; r++)
		dist[r] = pq_raw(ix, codes, len, r);
}

/* An engine's PQ distance in the metric's scale (lt_vdist). */
static inline double
pq_scale(const lt_ivf *ix, float d)
{
	switch (ix->metric)
	{
		case LT_VMETRIC_L2:
			return d > 0 ? sqrt((double) d) : 0;
		case LT_VMETRIC_COSINE:
			/* L2 of normalized vectors: squared, twice the cosine distance */
			return (double) d / 2;
		default:
			/*
			 * the sum of (1 - dot) over the sub-vectors, minus (M - 1), is 1 - dot: the engine takes
			 * that difference in float (rounded where it crosses a power of two), and ranks by it
			 */
			return (double) (d - (float) (ix->pq_m - 1)) - 1;
	}
}

/*
 * A partition's rows as kept in the cache: this header, then uint64_t ids[len], then the codes or
 * vectors (len * the row's bytes, as stored: transposed or packed or not), then for IVF_RQ the factors
 * float add[len], scale[len] (4-aligned).
 */
typedef struct part_rows_hdr
{
	uint64_t	len;
} part_rows_hdr;

void
lt_ivf_rows_free(lt_ivf_rows *rows)
{
	for (int i = 0; i < 4; i++)
		lt_array_free(rows->read[i]);
	memset(rows, 0, sizeof(*rows));
}

lt_code
lt_ivf_partition_rows(lt_ivf *ix, uint32_t p, lt_ivf_rows *rows, lt_error *err)
{
	uint32_t	len = ix->part_len[p];
	size_t		row_bytes = ix->pq ? ix->pq_bytes : ix->sq.bits ? ix->dim : ix->rq ? ix->rq->code_bytes :
		ix->dim * elem_bytes(ix->elem);
	size_t		per_row = ix->pq ? ix->pq_bytes : ix->rq ? ix->rq->code_bytes : ix->dim;	/* child values */
	size_t		cb = (size_t) len * row_bytes,
				at_codes = sizeof(part_rows_hdr) + sizeof(uint64_t) * len,
				at_add = (at_codes + cb + 3) & ~(size_t) 3,
				total = ix->rq ? at_add + sizeof(float) * 2 * len : at_codes + cb;
	const lt_field *fields[4];
	lt_array  **a = rows->read;
	unsigned char *e;

	memset(rows, 0, sizeof(*rows));
	if (ix->cache_key && (e = lt_vcache_get(ix->cache_key, p, NULL, false)) != NULL)
	{
		rows->ids = (const uint64_t *) (e + sizeof(part_rows_hdr));
		rows->codes = e + at_codes;
		if (ix->rq)
		{
			rows->add = (const float *) (e + at_add);
			rows->scale = rows->add + len;
		}
		return LT_OK;
	}
	LT_TRY(lt_ivf_open_storage(ix, err));
	fields[0] = ix->rowid_field;
	fields[1] = ix->pq ? ix->pq_field : ix->sq.bits ? ix->sq.field : ix->rq ? ix->rq->code_field : ix->flat_field;
	fields[2] = ix->rq ? ix->rq->add_field : NULL;
	fields[3] = ix->rq ? ix->rq->scale_field : NULL;
	for (int i = 0; i < 4 && fields[i]; i++)
		LT_TRY(lt_index_file_read(ix->aux, fields[i], ix->part_start[p], len, &a[i], err));
	if (a[0]->length != len || a[1]->length != len || a[1]->children[0] == NULL ||
		a[1]->children[0]->length != (int64_t) (len * per_row) ||
		(ix->rq && (a[2]->length != len || a[3]->length != len)))
		return lt_corrupt(err, "%s: partition %u does not have its %u rows", lt_index_file_path(ix->aux), p, len);
	rows->ids = (const uint64_t *) a[0]->values;
	rows->ids_arr = a[0]->validity ? a[0] : NULL;
	rows->codes = a[1]->children[0]->values;
	if (ix->rq)
	{
		rows->add = (const float *) a[2]->values;
		rows->scale = (const float *) a[3]->values;
	}
	if ((a[0]->validity == NULL || memchr(a[0]->validity, 0, len) == NULL) && ix->cache_key &&
		(e = lt_vcache_put(ix->cache_key, p, total, false)) != NULL)
	{
		((part_rows_hdr *) e)->len = len;
		memcpy(e + sizeof(part_rows_hdr), rows->ids, sizeof(uint64_t) * len);
		memcpy(e + at_codes, rows->codes, cb);
		if (ix->rq)
		{
			memcpy(e + at_add, rows->add, sizeof(float) * len);
			memcpy(e + at_add + sizeof(float) * len, rows->scale, sizeof(float) * len);
		}
		lt_vcache_publish(e);
	}
	return LT_OK;
}

/* IVF_PQ's and IVF_FLAT's: *ids_arr / *codes_arr the arrays read, when not from the cache (the caller frees them). */
static lt_code
partition_rows(lt_ivf *ix, uint32_t p, const uint64_t **ids, const uint8_t **codes, lt_array **ids_arr,
			 lt_array **codes_arr, lt_error *err)
{
	lt_ivf_rows r;
	lt_code		rc = lt_ivf_partition_rows(ix, p, &r, err);

	*ids_arr = r.read[0];
	*codes_arr = r.read[1];
	*ids = r.ids;
	*codes = r.codes;
	if (rc != LT_OK)
	{
		lt_ivf_rows_free(&r);
		*ids_arr = *codes_arr = NULL;
	}
	return rc;
}

static lt_code
search_pq(lt_ivf *ix, uint32_t p, const float *q, bool (*accept) (uint64_t row_id, void *arg), void *arg,
		  lt_topk *topk, uint64_t *scored, lt_error *err)
{
	lt_array   *ids_arr = NULL,
			   *codes_arr = NULL;
	const uint64_t *ids = NULL;
	const uint8_t *codes = NULL;
	uint32_t	len = ix->part_len[p];
	float	   *dist = NULL;
	uint64_t	n_scored = 0;
	lt_code		rc;

	if ((rc = partition_rows(ix, p, &ids, &codes, &ids_arr, &codes_arr, err)) != LT_OK)
		goto done;
	if ((dist = lt_malloc(sizeof(float) * Max32(len, 1))) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	if ((rc = lt_ivf_seq_reserve(ix, len, err)) != LT_OK)
		goto done;
	lt_ivf_pq_table(ix, p, q);
	pq_distances(ix, codes, len, dist);
	for (uint32_t r = 0; r < len; r++)
	{
		uint64_t	id;

		if (ids_arr && !lt_array_is_valid(ids_arr, r))
			continue;
		memcpy(&id, ids + r, 8);
		if (accept && !accept(id, arg))
			continue;
		lt_ivf_offer(ix, topk, pq_scale(ix, dist[r]), id);
		n_scored++;
	}
	if (scored)
		*scored += n_scored;
	rc = LT_OK;
done:
	lt_free(dist);
	lt_array_free(ids_arr);
	lt_array_free(codes_arr);
	return rc;
}

lt_code
lt_ivf_search_partition(lt_ivf *ix, uint32_t p, const float *q, lt_vmetric m,
						bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
						uint64_t *scored, lt_error *err)
{
	lt_array   *ids = NULL,
			   *vecs = NULL;
	const uint64_t *id_vals = NULL;
	const uint8_t *vec_bytes = NULL;
	void	   *v = NULL;
	lt_code		rc;

	if (ix->aux == NULL && !ix->cached)
		return lt_error_set(err, LT_EINVALID, "the IVF index was opened without its storage");
	if (p >= ix->n_partitions)
		return lt_error_set(err, LT_EINVALID, "partition %u of %u", p, ix->n_partitions);
	if (lt_ivf_is_hnsw(ix))
		return lt_error_set(err, LT_EINVALID, "an %s partition is searched through its graph", ix->type_name);
	if (ix->part_len[p] == 0)
		return LT_OK;
	if (ix->pq)
		return search_pq(ix, p, q, accept, arg, topk, scored, err);
	if (ix->sq.bits || ix->rq)
	{
		/* their rows fetched here (the cache), scored there */
		lt_ivf_rows rows;

		if ((rc = lt_ivf_partition_rows(ix, p, &rows, err)) == LT_OK)
			rc = ix->rq ? lt_rq_search_partition(ix, p, &rows, q, accept, arg, topk, scored, err) :
				lt_sq_search_partition(ix, p, &rows, q, accept, arg, topk, scored, err);
		lt_ivf_rows_free(&rows);
		return rc;
	}
	if ((rc = partition_rows(ix, p, &id_vals, &vec_bytes, &ids, &vecs, err)) != LT_OK)
		goto done;
	if ((v = lt_malloc(sizeof(double) * ix->dim)) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	for (uint32_t r = 0; r < ix->part_len[p]; r++)
	{
		uint64_t	id;
		const uint8_t *src;
		double		d;

		if (ids && !lt_array_is_valid(ids, r))
			continue;
		memcpy(&id, id_vals + r, 8);
		if (accept && !accept(id, arg))
			continue;
		/* scored as the SQL operator scores the column: float16 widened to float, float64 in double */
		switch (ix->elem)
		{
			case LT_TYPE_FLOAT16:
				src = vec_bytes + (size_t) r * ix->dim * 2;
				for (uint32_t i = 0; i < ix->dim; i++)
				{
					uint16_t	h;

					memcpy(&h, src + (size_t) i * 2, 2);
					((float *) v)[i] = lt_half_to_float(h);
				}
				d = lt_vdist_f32(m, (const float *) v, q, ix->dim);
				break;
			case LT_TYPE_UINT8:
				d = ix->query_u8 ? lt_vdist_hamming(vec_bytes + (size_t) r * ix->dim, ix->query_u8,
													ix->dim) : NAN;
				break;
			case LT_TYPE_FLOAT64:
				memcpy(v, vec_bytes + (size_t) r * ix->dim * 8, (size_t) ix->dim * 8);
				if (ix->query64)
					d = lt_vdist_f64(m, (const double *) v, ix->query64, ix->dim);
				else
				{
					for (uint32_t i = 0; i < ix->dim; i++)
						((float *) v)[i] = (float) ((double *) v)[i];
					d = lt_vdist_f32(m, (const float *) v, q, ix->dim);
				}
				break;
			default:
				memcpy(v, vec_bytes + (size_t) r * ix->dim * 4, (size_t) ix->dim * 4);
				d = lt_vdist_f32(m, (const float *) v, q, ix->dim);
				break;
		}
		lt_topk_push(topk, d, id);
		if (scored)
			(*scored)++;
	}
	rc = LT_OK;
done:
	lt_free(v);
	lt_array_free(ids);
	lt_array_free(vecs);
	return rc;
}
