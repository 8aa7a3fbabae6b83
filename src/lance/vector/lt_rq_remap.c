/*
 * lt_rq_remap.c — IVF_RQ segments remapped by a compaction (lt_rq_remap.h).
 */
#include "vector/lt_rq_remap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file/lt_writer.h"
#include "proto/lt_vector.pb-c.h"
#include "util/lt_alloc.h"
#include "vector/lt_ivf.h"
#include "vector/lt_rq.h"

/* The old storage's Ivf (its "lance:ivf" global buffer), unpacked; NULL when it does not parse. */
static Lt__Vec__Ivf *
old_ivf(lt_index_file *aux, lt_error *err)
{
	size_t		len,
				n = 0;
	const uint8_t *m = lt_index_file_meta(aux, "lance:ivf", &len);
	char		num[32];
	uint8_t    *bytes = NULL;
	Lt__Vec__Ivf *pb;

	if (m == NULL || len == 0 || len >= sizeof(num))
	{
		lt_corrupt(err, "%s: no lance:ivf metadata", lt_index_file_path(aux));
		return NULL;
	}
	memcpy(num, m, len);
	num[len] = 0;
	if (lt_index_file_global_buffer(aux, strtoull(num, NULL, 10), &bytes, &n, err) != LT_OK)
		return NULL;
	pb = lt__vec__ivf__unpack(lt_protobuf_allocator(), n, bytes);
	lt_free(bytes);
	if (pb == NULL)
		lt_corrupt(err, "%s: the IVF model does not parse", lt_index_file_path(aux));
	return pb;
}

/* Schema metadata key of the old file, copied as it is (absent: nothing). */
static lt_code
copy_meta(lt_index_file *aux, lt_file_writer *w, const char *key, lt_error *err)
{
	size_t		len;
	const uint8_t *v = lt_index_file_meta(aux, key, &len);

	return v ? lt_file_writer_add_metadata(w, key, v, len, err) : LT_OK;
}

/* One partition's kept rows: every column taken, the row ids mapped, the codes packed again. */
static lt_code
remap_partition(lt_ivf *ix, const lt_schema *fs, lt_file_writer *w, uint32_t p, lt_ivf_remap_fn map, void *arg,
				uint32_t *kept, lt_error *err)
{
	uint32_t	len = ix->part_len[p],
				cb = ix->rq->code_bytes,
				n = 0;
	int			nf = fs->n_fields;
	lt_array  **in = lt_calloc((size_t) nf, sizeof(lt_array *)),
			  **out = lt_calloc((size_t) nf, sizeof(lt_array *));
	int64_t    *take = lt_malloc(sizeof(int64_t) * (len ? len : 1));
	uint64_t   *ids = lt_malloc(sizeof(uint64_t) * (len ? len : 1));
	uint8_t    *rows = lt_malloc((size_t) (len ? len : 1) * cb);
	const lt_array *old_ids = NULL,
			   *old_codes = NULL;
	lt_code		rc = LT_OK;

	*kept = 0;
	if (!in || !out || !take || !ids || !rows)
	{
		rc = lt_nomem(err);
		goto done;
	}
	for (int c = 0; rc == LT_OK && c < nf; c++)
	{
		rc = lt_index_file_read(ix->aux, fs->fields[c], ix->part_start[p], len, &in[c], err);
		if (rc == LT_OK && in[c]->length != len)
			rc = lt_corrupt(err, "%s: partition %u does not have its %u rows", lt_index_file_path(ix->aux), p, len);
		if (rc == LT_OK && fs->fields[c] == ix->rowid_field)
			old_ids = in[c];
		if (rc == LT_OK && fs->fields[c] == ix->rq->code_field)
			old_codes = in[c];
	}
	if (rc == LT_OK && (!old_ids || !old_codes || !old_codes->children[0] ||
						old_codes->children[0]->length != (int64_t) len * cb))
		rc = lt_corrupt(err, "%s: partition %u has no row ids or codes", lt_index_file_path(ix->aux), p);
	for (uint32_t r = 0; rc == LT_OK && r < len; r++)
	{
		uint64_t	id,
					to;

		if (!lt_array_is_valid(old_ids, r))
			continue;
		memcpy(&id, old_ids->values + (size_t) r * 8, 8);
		if (!map(arg, id, &to))
			continue;
		take[n] = r;
		ids[n] = to;
		for (uint32_t j = 0; j < cb; j++)
			rows[(size_t) n * cb + j] = lt_rq_packed_byte(old_codes->children[0]->values, len, cb, r, j);
		n++;
	}
	for (int c = 0; rc == LT_OK && c < nf; c++)
	{
		if ((rc = lt_array_new(fs->fields[c], &out[c], err)) != LT_OK ||
			(rc = lt_array_append_take(out[c], in[c], take, n, err)) != LT_OK)
			break;
		if (in[c] == old_ids)
			memcpy(out[c]->values, ids, (size_t) n * 8);
		else if (in[c] == old_codes)
			lt_rq_pack(rows, n, cb, out[c]->children[0]->values);
	}
	if (rc == LT_OK && n > 0)
		rc = lt_file_writer_write(w, out, n, err);
	*kept = n;
done:
	for (int c = 0; c < nf; c++)
	{
		if (in)
			lt_array_free(in[c]);
		if (out)
			lt_array_free(out[c]);
	}
	lt_free(in);
	lt_free(out);
	lt_free(take);
	lt_free(ids);
	lt_free(rows);
	return rc;
}

lt_code
lt_rq_remap(lt_dataset *ds, const lt_field *column, const char *name, const char *old_dir, lt_ivf_remap_fn map,
			void *arg, lt_built_index *out, lt_error *err)
{
	lt_ivf	   *ix = NULL;
	const lt_schema *fs;
	lt_file_writer *w = NULL;
	Lt__Vec__Ivf *pb = NULL;
	char	   *dir = NULL,
			   *path = NULL,
				num[32];
	uint8_t    *bytes = NULL;
	uint64_t	nbytes = 0,
				at = 0;
	uint32_t	gb = 0;
	lt_code		rc;

	memset(out, 0, sizeof(*out));
	if ((rc = lt_ivf_open(ds->store, old_dir, true, &ix, err)) != LT_OK)
		return rc;
	if (strcmp(ix->type_name, "IVF_RQ") != 0 || !ix->rq || !ix->rowid_field || !(fs = ix->aux->f->file_schema))
	{
		rc = lt_error_set(err, LT_EUNSUPPORTED, "remapping an %s index", ix->type_name);
		lt_ivf_close(ix);
		return rc;
	}
	out->kind = LT_INDEX_UNKNOWN;
	out->index_version = 1;
	if ((rc = lt_built_index_begin(ds, column, name, out, &dir, err)) != LT_OK)
		goto done;
	if (!(pb = old_ivf(ix->aux, err)))
	{
		rc = err->code ? err->code : LT_ECORRUPT;
		goto done;
	}
	if (pb->n_lengths != ix->n_partitions || pb->n_offsets != ix->n_partitions)
	{
		rc = lt_corrupt(err, "%s: %zu partition lengths for %u partitions", lt_index_file_path(ix->aux),
						pb->n_lengths, ix->n_partitions);
		goto done;
	}
	rc = lt_built_index_open_file(ds, dir, "auxiliary.idx", fs->n_fields, (const lt_field *const *) fs->fields, &w,
								  err);
	for (uint32_t p = 0; rc == LT_OK && p < ix->n_partitions; p++)
	{
		uint32_t	kept = 0;

		if ((rc = remap_partition(ix, fs, w, p, map, arg, &kept, err)) != LT_OK)
			break;
		pb->offsets[p] = at;
		pb->lengths[p] = kept;
		at += kept;
		rc = lt_check_interrupt(err, "remapping an IVF_RQ index");
	}
	/* the metadata as the engine writes it: distance_type, the Ivf (global buffer 1), storage_metadata */
	if (rc == LT_OK)
		rc = copy_meta(ix->aux, w, "distance_type", err);
	if (rc == LT_OK)
	{
		size_t		len = lt__vec__ivf__get_packed_size(pb);
		uint8_t    *buf = lt_malloc(len ? len : 1);

		if (!buf)
			rc = lt_nomem(err);
		else
		{
			lt__vec__ivf__pack(pb, buf);
			rc = lt_file_writer_add_global_buffer(w, buf, len, &gb, err);
			lt_free(buf);
		}
		snprintf(num, sizeof(num), "%u", gb);
		if (rc == LT_OK)
			rc = lt_file_writer_add_metadata_text(w, "lance:ivf", num, err);
	}
	if (rc == LT_OK)
		rc = copy_meta(ix->aux, w, "storage_metadata", err);
	if (rc == LT_OK)
		rc = lt_built_index_finish_file(out, w, "auxiliary.idx", err);
	/* index.idx: the centroids and a flat sub-index per partition, which hold no rows: the same file */
	if (rc == LT_OK && !(path = lt_asprintf("%sindex.idx", old_dir)))
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = lt_store_read_all(ds->store, path, UINT64_MAX, &bytes, &nbytes, err);
	lt_free(path);
	path = NULL;
	if (rc == LT_OK && !(path = lt_asprintf("%sindex.idx", dir)))
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = lt_store_put(ds->store, path, bytes, nbytes, err);
	if (rc == LT_OK)
		rc = lt_built_index_add_file(out, "index.idx", nbytes, err);
	out->rows = at;
	out->entries = ix->n_partitions;
done:
	lt_file_writer_free(w);
	if (pb)
		lt__vec__ivf__free_unpacked(pb, lt_protobuf_allocator());
	lt_free(bytes);
	lt_free(path);
	lt_free(dir);
	lt_ivf_close(ix);
	if (rc != LT_OK)
	{
		lt_built_index_remove(ds, out);
		lt_built_index_clear(out);
		return rc == LT_EUNSUPPORTED ? rc : lt_error_prefix(err, "remapping the index on column \"%s\"", column->name);
	}
	return LT_OK;
}
