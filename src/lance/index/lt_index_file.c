/*
 * lt_index_file.c — reading index files: a Lance 2.x file (or a legacy file
 * embedding its schema: lance < 0.21's btree pages) described by its own schema (no DataFile lists its columns, so the column of each field is
 * its position among the file's leaf fields in pre-order, as the writer lays
 * them out; 2.0 files give every field a column).
 */
#include "index/lt_index_file.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_file.pb-c.h"

lt_code
lt_index_file_open(lt_store *store, const char *path, lt_index_file **out, lt_error *err)
{
	lt_index_file *xf;
	const lt_schema *s;
	lt_code		rc;

	*out = NULL;
	if (!(xf = lt_calloc(1, sizeof(lt_index_file))))
		return lt_nomem(err);
	rc = lt_file_open(store, path, &xf->f, err);
	/* lance before 0.21 wrote btree page files as legacy files that embed their schema */
	if (rc == LT_OK && xf->f->version == LT_FILE_LEGACY)
		rc = lt_legacy_file_schema(xf->f, err);
	if (rc == LT_OK && !(s = xf->f->file_schema))
		rc = lt_corrupt(err, "%s: the index file has no schema", path);
	if (rc == LT_OK)
	{
		xf->map_ids = lt_calloc((size_t) s->n_all + 1, sizeof(int32_t));
		xf->map_cols = lt_calloc((size_t) s->n_all + 1, sizeof(int32_t));
		if (!xf->map_ids || !xf->map_cols)
			rc = lt_nomem(err);
		for (int i = 0; rc == LT_OK && i < s->n_all; i++)
		{
			const lt_field *fl = s->all[i];

			if (fl->id < 0)
				continue;
			/* 2.0 and legacy files: every field (legacy pages by field id from the first); 2.1+: leaves */
			if (xf->f->version == LT_FILE_V2_0 || xf->f->version == LT_FILE_LEGACY || lt_field_is_leaf(fl))
			{
				xf->map_ids[xf->n_map] = fl->id;
				xf->map_cols[xf->n_map] = xf->n_map;
				xf->n_map++;
			}
		}
		if (rc == LT_OK && xf->f->version != LT_FILE_LEGACY && (uint32_t) xf->n_map != xf->f->num_columns)
			rc = lt_corrupt(err, "%s: the schema has %d column(s), the file %u", path, xf->n_map,
							xf->f->num_columns);
	}
	if (rc != LT_OK)
	{
		lt_index_file_close(xf);
		return rc;
	}
	*out = xf;
	return LT_OK;
}

void
lt_index_file_close(lt_index_file *xf)
{
	if (!xf)
		return;
	lt_file_close(xf->f);
	lt_free(xf->map_ids);
	lt_free(xf->map_cols);
	lt_free(xf);
}

lt_code
lt_index_file_field(lt_index_file *xf, const char *name, int type, const lt_field **out, lt_error *err)
{
	const lt_field *f = lt_schema_find_name(xf->f->file_schema, name);

	*out = NULL;
	if (!f)
		return lt_corrupt(err, "%s: the index file has no column \"%s\"", xf->f->path, name);
	if (type >= 0 && f->type != (lt_type_id) type)
		return lt_corrupt(err, "%s: column \"%s\" is %s, expected %s", xf->f->path, name, lt_type_name(f->type),
						  lt_type_name((lt_type_id) type));
	*out = f;
	return LT_OK;
}

lt_code
lt_index_file_fixed_list(lt_index_file *xf, const char *name, lt_type_id elem, uint32_t size, const lt_field **out,
						 lt_error *err)
{
	const lt_field *f;

	LT_TRY(lt_index_file_field(xf, name, LT_TYPE_FIXED_LIST, &f, err));
	if (f->fixed_size != (int32_t) size || f->n_children != 1 || f->children[0]->type != elem)
		return lt_corrupt(err, "%s: column %s is not fixed_size_list<%s, %u>", xf->f->path, name, lt_type_name(elem),
						  size);
	*out = f;
	return LT_OK;
}

lt_code
lt_index_file_reader(lt_index_file *xf, const lt_field *field, lt_field_reader **out, lt_error *err)
{
	lt_column_map map = {xf->n_map, xf->map_ids, xf->map_cols};
	lt_code		rc = lt_field_reader_open(xf->f, field, &map, out, err);

	if (rc == LT_OK)
		(*out)->num_rows = xf->f->num_rows;
	return rc;
}

lt_code
lt_index_file_read(lt_index_file *xf, const lt_field *field, uint64_t start, uint64_t n, lt_array **out,
				   lt_error *err)
{
	lt_field_reader *r;
	lt_array   *a;
	lt_code		rc;

	*out = NULL;
	if (n > LT_INDEX_MAX_LOOKUP_ROWS)
		return lt_corrupt(err, "%s: %llu rows in column \"%s\" (at most %llu are read at once)", xf->f->path,
						  (unsigned long long) n, field->name, (unsigned long long) LT_INDEX_MAX_LOOKUP_ROWS);
	LT_TRY(lt_index_file_reader(xf, field, &r, err));
	rc = lt_array_new(field, &a, err);
	if (rc == LT_OK)
	{
		rc = lt_field_reader_read(r, start, n, a, err);
		if (rc == LT_OK && a->length != (int64_t) n)
			rc = lt_corrupt(err, "%s: column \"%s\" gave %lld rows, expected %llu", xf->f->path, field->name,
							(long long) a->length, (unsigned long long) n);
		if (rc != LT_OK)
			lt_array_free(a);
	}
	lt_field_reader_free(r);
	if (rc != LT_OK)
	{
		/* page decoders report LT_EINVALID for impossible requests on bad metadata too */
		if (err && err->code != LT_ENOMEM && err->code != LT_EIO && err->code != LT_EACCESS && err->code != LT_ECANCELED)
			err->code = LT_ECORRUPT;
		return err ? err->code : rc;
	}
	*out = a;
	return LT_OK;
}

const uint8_t *
lt_index_file_meta(const lt_index_file *xf, const char *key, size_t *len)
{
	const Lt__Pb__FileDescriptor *fd = xf->f->descriptor;

	if (xf->f->version == LT_FILE_LEGACY)
		return lt_legacy_file_meta(xf->f, key, len);
	if (!fd || !fd->schema)
		return NULL;
	for (size_t i = 0; i < fd->schema->n_metadata; i++)
	{
		const Lt__Pb__Schema__MetadataEntry *e = fd->schema->metadata[i];

		if (e->key && strcmp(e->key, key) == 0)
		{
			*len = e->value.len;
			return e->value.data ? e->value.data : (const uint8_t *) "";
		}
	}
	return NULL;
}

lt_code
lt_index_file_global_buffer(lt_index_file *xf, uint64_t i, uint8_t **out, size_t *len, lt_error *err)
{
	lt_file    *f = xf->f;
	uint64_t	end;
	uint8_t    *buf;

	*out = NULL;
	*len = 0;
	if (i >= f->num_global_buffers)
		return lt_corrupt(err, "%s: global buffer %llu does not exist (the file has %u)", f->path,
						  (unsigned long long) i, f->num_global_buffers);
	if (!lt_add_ok(f->gbo_pos[i], f->gbo_len[i], &end) || end > f->size || f->gbo_len[i] > LT_INDEX_MAX_BUFFER)
		return lt_corrupt(err, "%s: global buffer %llu (%llu bytes at %llu) is outside the file", f->path,
						  (unsigned long long) i, (unsigned long long) f->gbo_len[i],
						  (unsigned long long) f->gbo_pos[i]);
	if (!(buf = lt_malloc(f->gbo_len[i] ? (size_t) f->gbo_len[i] : 1)))
		return lt_nomem(err);
	if (f->gbo_len[i] > 0)
	{
		lt_code		rc = lt_rfile_read(f->rf, f->gbo_pos[i], f->gbo_len[i], buf, err);

		if (rc != LT_OK)
		{
			lt_free(buf);
			return rc;
		}
	}
	*out = buf;
	*len = (size_t) f->gbo_len[i];
	return LT_OK;
}
