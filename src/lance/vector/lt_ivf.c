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

static lt_code
load_centroids(lt_ivf *ix, const Lt__Vec__Ivf *pb, const char *path, lt_error *err)
{
	const Lt__Vec__Tensor *t = pb->centroids_tensor;

	if (t == NULL || t->n_shape != 2 || t->data_type != LT__VEC__TENSOR__DATA_TYPE__FLOAT32)
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: IVF centroids are not a float32 matrix", path);
	ix->n_partitions = t->shape[0];
	ix->dim = t->shape[1];
	if (ix->n_partitions == 0 || ix->dim == 0 ||
		t->data.len != (size_t) ix->n_partitions * ix->dim * sizeof(float))
		return lt_corrupt(err, "%s: IVF centroids tensor of %u x %u has %zu bytes", path, ix->n_partitions,
						  ix->dim, t->data.len);
	if ((ix->centroids = lt_malloc(t->data.len)) == NULL)
		return lt_nomem(err);
	memcpy(ix->centroids, t->data.data, t->data.len);
	return LT_OK;
}

lt_code
lt_ivf_open(lt_store *store, const char *dir, bool with_storage, lt_ivf **out, lt_error *err)
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

		if (strcmp(ix->type_name, "IVF_FLAT") != 0)
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
		if ((rc = lt_index_file_field(ix->aux, "_rowid", LT_TYPE_UINT64, &ix->rowid_field, err)) != LT_OK ||
			(rc = lt_index_file_field(ix->aux, "flat", LT_TYPE_FIXED_LIST, &ix->flat_field, err)) != LT_OK)
			goto done;
		if (ix->flat_field->fixed_size != (int32_t) ix->dim || ix->flat_field->n_children != 1 ||
			ix->flat_field->children[0]->type != LT_TYPE_FLOAT32)
		{
			rc = lt_corrupt(err, "%s: column flat is not fixed_size_list<float32, %u>", path, ix->dim);
			goto done;
		}
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

void
lt_ivf_close(lt_ivf *ix)
{
	if (ix == NULL)
		return;
	if (ix->aux)
		lt_index_file_close(ix->aux);
	lt_free(ix->type_name);
	lt_free(ix->distance_type);
	lt_free(ix->centroids);
	lt_free(ix->part_start);
	lt_free(ix->part_len);
	lt_free(ix);
}

bool
lt_ivf_exact_scores(const lt_ivf *ix)
{
	return strcmp(ix->type_name, "IVF_FLAT") == 0;
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
	lt_topk_finish(&t);
	n = (uint32_t) t.n;
	for (uint32_t i = 0; i < n; i++)
		parts[i] = (uint32_t) t.items[i].addr;
	lt_topk_free(&t);
	lt_free(qn);
	return n;
}

lt_code
lt_ivf_search_partition(lt_ivf *ix, uint32_t p, const float *q, lt_vmetric m,
						bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
						uint64_t *scored, lt_error *err)
{
	lt_array   *ids = NULL,
			   *vecs = NULL;
	float	   *v = NULL;
	lt_code		rc;

	if (ix->aux == NULL)
		return lt_error_set(err, LT_EINVALID, "the IVF index was opened without its storage");
	if (p >= ix->n_partitions)
		return lt_error_set(err, LT_EINVALID, "partition %u of %u", p, ix->n_partitions);
	if (ix->part_len[p] == 0)
		return LT_OK;
	if ((rc = lt_index_file_read(ix->aux, ix->rowid_field, ix->part_start[p], ix->part_len[p], &ids, err)) != LT_OK ||
		(rc = lt_index_file_read(ix->aux, ix->flat_field, ix->part_start[p], ix->part_len[p], &vecs, err)) != LT_OK)
		goto done;
	if (ids->length != ix->part_len[p] || vecs->length != ix->part_len[p] || vecs->children[0] == NULL ||
		vecs->children[0]->length != (int64_t) ix->part_len[p] * ix->dim)
	{
		rc = lt_corrupt(err, "%s: partition %u does not have its %u rows", lt_index_file_path(ix->aux), p,
						ix->part_len[p]);
		goto done;
	}
	if ((v = lt_malloc(sizeof(float) * ix->dim)) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	for (int64_t r = 0; r < ids->length; r++)
	{
		uint64_t	id;

		if (!lt_array_is_valid(ids, r))
			continue;
		memcpy(&id, ids->values + r * 8, 8);
		if (accept && !accept(id, arg))
			continue;
		memcpy(v, vecs->children[0]->values + (size_t) r * ix->dim * 4, (size_t) ix->dim * 4);
		lt_topk_push(topk, lt_vdist_f32(m, v, q, ix->dim), id);
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
