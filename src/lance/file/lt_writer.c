/*
 * lt_writer.c — the data-file container and the row buffering of the writer.
 *
 * Rows arrive per top-level field and accumulate in an lt_array per field;
 * when a field's buffer passes LT_WRITER_PAGE_BYTES (Lance's 8 MiB per
 * column), its rows are encoded into pages (lt_writer21.c / lt_writer20.c)
 * and streamed to the store (lt_writer_page.c), so memory is bounded by the
 * page buffers.
 * Fields flush independently: their pages cover different row ranges, as in
 * Lance files.  finish() writes, after the pages, the file descriptor
 * (global buffer 0: schema + row count), the column metadata, the two offset
 * tables and the 40-byte footer (see lt_file.c for the reading side).
 */
#include "file/lt_writer_int.h"

#include <stdio.h>

#include "util/lt_bytes.h"
#include "proto/lt_common.pb-c.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_file2.pb-c.h"
#include "util/lt_random.h"

#define LT_WRITER_PAGE_BYTES ((uint64_t) 8 << 20)
#define MAX_FILE_COLUMNS 65536

static const char ANY_COLUMN_ENCODING[] = "/lance.encodings.ColumnEncoding";

void
lt_written_file_clear(lt_written_file *wf)
{
	if (!wf)
		return;
	lt_free(wf->name);
	lt_free(wf->field_ids);
	lt_free(wf->column_indices);
	memset(wf, 0, sizeof(*wf));
}

void
lt_data_file_name(char buf[64])
{
	uint8_t		u[16];
	char	   *p = buf;

	lt_uuid_v4(u, NULL);	/* a version-4 UUID, as Lance's */
	for (int i = 0; i < 3; i++)
		for (int b = 7; b >= 0; b--)
			*p++ = (u[i] >> b) & 1 ? '1' : '0';
	for (int i = 3; i < 16; i++)
		p += sprintf(p, "%02x", u[i]);
	strcpy(p, ".lance");
}

lt_code
lt_file_version_for_storage(const char *sv, lt_file_version *out, lt_error *err)
{
	if (sv && strcmp(sv, "2.0") == 0)
		*out = LT_FILE_V2_0;
	else if (sv && strcmp(sv, "2.1") == 0)
		*out = LT_FILE_V2_1;
	else if (sv && strcmp(sv, "2.2") == 0)
		*out = LT_FILE_V2_2;
	else if (sv && (strcmp(sv, "0.1") == 0 || strcmp(sv, "legacy") == 0))
		return lt_error_set(err, LT_EUNSUPPORTED,
							"writing to datasets of the legacy storage version 0.1 is not supported (only 2.0, 2.1 and 2.2)");
	else
		return lt_error_set(err, LT_EUNSUPPORTED, "cannot write storage version \"%s\" (only 2.0, 2.1 and 2.2)",
							sv ? sv : "(none)");
	return LT_OK;
}

/* ---- opening ---- */

static int
columns_of(lt_file_version v, const lt_field *f, int32_t *ids, int cap)
{
	return v == LT_FILE_V2_0 ? lt_w20_columns(f, ids, cap) : lt_w21_columns(f, ids, cap);
}

static lt_code
writer_open(lt_store *store, const char *data_dir, const char *path, int n_fields, const lt_field *const *fields,
			lt_file_version version, lt_file_writer **out, lt_error *err)
{
	lt_file_writer *w;
	char		name[64];
	lt_code		rc = LT_OK;
	int			ncol = 0;

	*out = NULL;
	if (version == LT_FILE_LEGACY)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"writing legacy (storage version 0.1) data files is not supported (only 2.0, 2.1 and 2.2)");
	if (version != LT_FILE_V2_0 && version != LT_FILE_V2_1 && version != LT_FILE_V2_2)
		return lt_error_set(err, LT_EUNSUPPORTED, "cannot write data files of version %d", (int) version);
	if (n_fields <= 0)
		return lt_error_set(err, LT_EINVALID, "a data file needs at least one field");
	for (int i = 0; i < n_fields; i++)
	{
		rc = version == LT_FILE_V2_0 ? lt_w20_check(fields[i], err) : lt_w21_check(fields[i], version, err);
		if (rc != LT_OK)
			return rc;
		ncol += columns_of(version, fields[i], NULL, 0);
	}
	if (ncol > MAX_FILE_COLUMNS)
		return lt_error_set(err, LT_EUNSUPPORTED, "%d columns in one data file", ncol);
	if (!(w = lt_calloc(1, sizeof(*w))))
		return lt_nomem(err);
	w->store = store;
	w->version = version;
	w->n_fields = n_fields;
	w->n_columns = ncol;
	if (path)
	{
		const char *slash = strrchr(path, '/');

		w->name = lt_strdup(slash ? slash + 1 : path);
		w->path = lt_strdup(path);
	}
	else
	{
		lt_data_file_name(name);
		w->name = lt_strdup(name);
		w->path = lt_asprintf("%s%s%s", data_dir, (data_dir[0] && data_dir[strlen(data_dir) - 1] != '/') ? "/" : "",
							  name);
	}
	w->fields = lt_calloc(n_fields, sizeof(lt_field *));
	w->pending = lt_calloc(n_fields, sizeof(lt_array *));
	w->flushed = lt_calloc(n_fields, sizeof(uint64_t));
	w->first_col = lt_calloc(n_fields, sizeof(int));
	w->col_field = lt_calloc(ncol ? ncol : 1, sizeof(int32_t));
	w->cols = lt_calloc(ncol ? ncol : 1, sizeof(w_column));
	if (!w->name || !w->path || !w->fields || !w->pending || !w->flushed || !w->first_col || !w->col_field || !w->cols)
		rc = lt_nomem(err);
	ncol = 0;
	for (int i = 0; rc == LT_OK && i < n_fields; i++)
	{
		w->fields[i] = fields[i];
		w->first_col[i] = ncol;
		ncol += columns_of(version, fields[i], w->col_field + ncol, w->n_columns - ncol);
		rc = lt_array_new_values(fields[i], &w->pending[i], err);	/* a blob field: its bytes */
	}
	if (rc == LT_OK)
		rc = lt_store_create_file(store, w->path, &w->wf, err);
	if (rc != LT_OK)
	{
		lt_file_writer_free(w);
		return rc;
	}
	*out = w;
	return LT_OK;
}

lt_code
lt_file_writer_open(lt_store *store, const char *data_dir, int n_fields, const lt_field *const *fields,
					lt_file_version version, lt_file_writer **out, lt_error *err)
{
	return writer_open(store, data_dir, NULL, n_fields, fields, version, out, err);
}

lt_code
lt_file_writer_open_path(lt_store *store, const char *path, int n_fields, const lt_field *const *fields,
						 lt_file_version version, lt_file_writer **out, lt_error *err)
{
	return writer_open(store, NULL, path, n_fields, fields, version, out, err);
}

lt_code
lt_file_writer_add_metadata(lt_file_writer *w, const char *key, const uint8_t *value, size_t len, lt_error *err)
{
	char	  **k = lt_realloc(w->meta_keys, (size_t) (w->n_meta + 1) * sizeof(char *));
	uint8_t   **v;
	size_t	   *l;

	if (k)
		w->meta_keys = k;
	v = k ? lt_realloc(w->meta_values, (size_t) (w->n_meta + 1) * sizeof(uint8_t *)) : NULL;
	if (v)
		w->meta_values = v;
	l = v ? lt_realloc(w->meta_lens, (size_t) (w->n_meta + 1) * sizeof(size_t)) : NULL;
	if (!l)
		return lt_nomem(err);
	w->meta_lens = l;
	w->meta_keys[w->n_meta] = lt_strdup(key);
	w->meta_values[w->n_meta] = lt_malloc(len ? len : 1);
	if (!w->meta_keys[w->n_meta] || !w->meta_values[w->n_meta])
	{
		lt_free(w->meta_keys[w->n_meta]);
		lt_free(w->meta_values[w->n_meta]);
		return lt_nomem(err);
	}
	if (len)
		memcpy(w->meta_values[w->n_meta], value, len);
	w->meta_lens[w->n_meta++] = len;
	return LT_OK;
}

lt_code
lt_file_writer_add_metadata_text(lt_file_writer *w, const char *key, const char *value, lt_error *err)
{
	return lt_file_writer_add_metadata(w, key, (const uint8_t *) value, strlen(value), err);
}

lt_code
lt_file_writer_add_global_buffer(lt_file_writer *w, const uint8_t *data, size_t len, uint32_t *index,
								 lt_error *err)
{
	uint8_t   **b = lt_realloc(w->gbufs, (size_t) (w->n_gbufs + 1) * sizeof(uint8_t *));
	size_t	   *l;

	if (b)
		w->gbufs = b;
	l = b ? lt_realloc(w->gbuf_lens, (size_t) (w->n_gbufs + 1) * sizeof(size_t)) : NULL;
	if (!l)
		return lt_nomem(err);
	w->gbuf_lens = l;
	if (!(w->gbufs[w->n_gbufs] = lt_malloc(len ? len : 1)))
		return lt_nomem(err);
	if (len)
		memcpy(w->gbufs[w->n_gbufs], data, len);
	w->gbuf_lens[w->n_gbufs++] = len;
	*index = (uint32_t) w->n_gbufs;	/* buffer 0 is the descriptor */
	return LT_OK;
}

/* ---- rows ---- */

static uint64_t
array_bytes(const lt_array *a)
{
	uint64_t	n;

	if (!a)
		return 0;
	n = (uint64_t) a->length * (uint64_t) (a->field->byte_width > 0 ? a->field->byte_width : 0);
	if (a->offsets)
		n += (uint64_t) a->length * 4 + (uint64_t) a->data_len;
	for (int i = 0; i < a->n_children; i++)
		n += array_bytes(a->children[i]);
	return n;
}

static lt_code
flush_field(lt_file_writer *w, int i, lt_error *err)
{
	lt_array   *a = w->pending[i];
	lt_code		rc;

	if (a->length == 0)
		return LT_OK;
	rc = w->version == LT_FILE_V2_0
		? lt_w20_encode(w, w->fields[i], a, w->first_col[i], w->flushed[i], err)
		: lt_w21_encode(w, w->fields[i], a, w->first_col[i], w->flushed[i], err);
	if (rc != LT_OK)
		return rc;
	w->flushed[i] += (uint64_t) a->length;
	lt_array_clear(a);
	return LT_OK;
}

lt_code
lt_file_writer_write(lt_file_writer *w, lt_array *const *cols, int64_t n, lt_error *err)
{
	if (w->finished)
		return lt_error_set(err, LT_EINVALID, "%s: write after finish", w->path);
	if (n <= 0)
		return LT_OK;
	for (int i = 0; i < w->n_fields; i++)
	{
		if (!cols[i] || cols[i]->length < n)
			return lt_error_set(err, LT_EINVALID, "%s: column \"%s\" has %lld rows, %lld were to be written",
								w->path, w->fields[i]->name, cols[i] ? (long long) cols[i]->length : 0LL,
								(long long) n);
		if (cols[i]->field->type != w->fields[i]->type)
			return lt_error_set(err, LT_EINVALID, "%s: column \"%s\" is %s, the field is %s", w->path,
								w->fields[i]->name, lt_type_name(cols[i]->field->type),
								lt_type_name(w->fields[i]->type));
	}
	for (int i = 0; i < w->n_fields; i++)
	{
		LT_TRY(lt_array_append_slice(w->pending[i], cols[i], 0, n, err));
		if (array_bytes(w->pending[i]) >= LT_WRITER_PAGE_BYTES)
			LT_TRY(flush_field(w, i, err));
	}
	w->rows += (uint64_t) n;
	return LT_OK;
}

lt_array  *const *
lt_file_writer_buffers(lt_file_writer *w)
{
	return w->pending;
}

lt_code
lt_file_writer_advance(lt_file_writer *w, int64_t n, lt_error *err)
{
	if (w->finished)
		return lt_error_set(err, LT_EINVALID, "%s: write after finish", w->path);
	if (n < 0)
		return lt_error_set(err, LT_EINVALID, "%s: %lld rows appended", w->path, (long long) n);
	for (int i = 0; i < w->n_fields; i++)
		if (w->pending[i]->length != (int64_t) (w->rows - w->flushed[i]) + n)
			return lt_error_set(err, LT_EINVALID, "%s: column \"%s\" has %lld rows, %lld were appended", w->path,
								w->fields[i]->name, (long long) (w->pending[i]->length - (int64_t) (w->rows - w->flushed[i])),
								(long long) n);
	w->rows += (uint64_t) n;
	for (int i = 0; i < w->n_fields; i++)
		if (array_bytes(w->pending[i]) >= LT_WRITER_PAGE_BYTES)
			LT_TRY(flush_field(w, i, err));
	return LT_OK;
}

uint64_t
lt_file_writer_rows(const lt_file_writer *w)
{
	return w->rows;
}

uint64_t
lt_file_writer_bytes(const lt_file_writer *w)
{
	uint64_t	n = w->wf ? w->wf->written : 0;

	for (int i = 0; i < w->n_fields; i++)
		n += array_bytes(w->pending[i]);
	return n;
}

/* ---- finishing ---- */

/* The file's schema: every field under the written top-level fields, pre-order. */
static void
count_fields(const lt_field *f, size_t *n)
{
	if (f->blob == LT_BLOB_V2 && f->blob_desc)
	{
		*n += 1 + (size_t) f->blob_desc->n_children;
		return;
	}
	if (f->id >= 0)
		(*n)++;
	for (int i = 0; i < f->n_children; i++)
		count_fields(f->children[i], n);
}

/*
 * A blob v2 field as Lance 12's data files describe it: its descriptor struct (the field's id, metadata
 * lance-encoding:packed and lance-encoding:blob) over the descriptor's fields without ids, in place of the
 * {data, uri} the dataset's schema shows.
 */
static Lt__Pb__Field__MetadataEntry blob_v2_meta[2] = {
	{PROTOBUF_C_MESSAGE_INIT(&lt__pb__field__metadata_entry__descriptor), "lance-encoding:packed", true,
	{4, (uint8_t *) "true"}},
	{PROTOBUF_C_MESSAGE_INIT(&lt__pb__field__metadata_entry__descriptor), "lance-encoding:blob", true,
	{4, (uint8_t *) "true"}}};
static Lt__Pb__Field__MetadataEntry *blob_v2_metap[2] = {&blob_v2_meta[0], &blob_v2_meta[1]};

static void
fill_blob_v2(const lt_field *f, Lt__Pb__Field *pb, Lt__Pb__Field **out, size_t *n)
{
	const lt_field *d = f->blob_desc;
	Lt__Pb__Field *p = &pb[*n];

	lt__pb__field__init(p);
	p->name = f->name;
	p->has_id = true;
	p->id = f->id;
	p->has_parent_id = true;
	p->parent_id = f->parent_id;
	p->logical_type = d->logical_type;
	p->has_nullable = true;
	p->nullable = f->nullable;
	p->n_metadata = 2;
	p->metadata = blob_v2_metap;
	out[(*n)++] = p;
	for (int i = 0; i < d->n_children; i++)
	{
		const lt_field *c = d->children[i];

		p = &pb[*n];
		lt__pb__field__init(p);
		p->name = c->name;
		p->has_id = true;
		p->id = -1;
		p->has_parent_id = true;
		p->parent_id = -1;
		p->logical_type = c->logical_type;
		p->has_encoding = true;
		p->encoding = lt_type_is_var_width(c->type) ? LT__PB__LEGACY_ENCODING__ENC_VAR_BINARY : LT__PB__LEGACY_ENCODING__ENC_PLAIN;
		out[(*n)++] = p;
	}
}

static void
fill_fields(const lt_field *f, Lt__Pb__Field *pb, Lt__Pb__Field **out, size_t *n)
{
	if (f->blob == LT_BLOB_V2 && f->blob_desc)
	{
		fill_blob_v2(f, pb, out, n);
		return;
	}
	if (f->id >= 0)
	{
		Lt__Pb__Field *p = &pb[*n];

		lt__pb__field__init(p);
		p->name = f->name;
		p->has_id = true;
		p->id = f->id;
		p->has_parent_id = true;
		p->parent_id = f->parent_id;
		p->logical_type = f->logical_type;
		p->has_nullable = true;
		p->nullable = f->nullable;
		if (f->legacy_encoding)
		{
			p->has_encoding = true;
			p->encoding = (Lt__Pb__LegacyEncoding) f->legacy_encoding;
		}
		out[*n] = p;
		(*n)++;
	}
	for (int i = 0; i < f->n_children; i++)
		fill_fields(f->children[i], pb, out, n);
}

static lt_code
put_descriptor(lt_file_writer *w, uint64_t *pos, uint64_t *len, lt_error *err)
{
	size_t		n = 0;
	Lt__Pb__Field *pb;
	Lt__Pb__Field **ptrs;
	Lt__Pb__Schema schema = LT__PB__SCHEMA__INIT;
	Lt__Pb__FileDescriptor fd = LT__PB__FILE_DESCRIPTOR__INIT;
	Lt__Pb__Schema__MetadataEntry *meta = NULL;
	Lt__Pb__Schema__MetadataEntry **metap = NULL;
	uint8_t    *buf;
	lt_code		rc;

	for (int i = 0; i < w->n_fields; i++)
		count_fields(w->fields[i], &n);
	pb = lt_calloc(n ? n : 1, sizeof(Lt__Pb__Field));
	ptrs = lt_calloc(n ? n : 1, sizeof(Lt__Pb__Field *));
	if (!pb || !ptrs)
	{
		lt_free(pb);
		lt_free(ptrs);
		return lt_nomem(err);
	}
	n = 0;
	for (int i = 0; i < w->n_fields; i++)
		fill_fields(w->fields[i], pb, ptrs, &n);
	schema.n_fields = n;
	schema.fields = ptrs;
	if (w->n_meta > 0)
	{
		meta = lt_calloc((size_t) w->n_meta, sizeof(Lt__Pb__Schema__MetadataEntry));
		metap = lt_calloc((size_t) w->n_meta, sizeof(Lt__Pb__Schema__MetadataEntry *));
		if (!meta || !metap)
		{
			lt_free(meta);
			lt_free(metap);
			lt_free(pb);
			lt_free(ptrs);
			return lt_nomem(err);
		}
		for (int i = 0; i < w->n_meta; i++)
		{
			lt__pb__schema__metadata_entry__init(&meta[i]);
			meta[i].key = w->meta_keys[i];
			meta[i].has_value = true;
			meta[i].value.data = w->meta_values[i];
			meta[i].value.len = w->meta_lens[i];
			metap[i] = &meta[i];
		}
		schema.n_metadata = (size_t) w->n_meta;
		schema.metadata = metap;
	}
	fd.schema = &schema;
	fd.has_length = true;
	fd.length = w->rows;
	*len = lt__pb__file_descriptor__get_packed_size(&fd);
	*pos = w->wf->written;
	buf = lt_malloc(*len ? *len : 1);
	if (!buf)
		rc = lt_nomem(err);
	else
	{
		lt__pb__file_descriptor__pack(&fd, buf);
		rc = lt_wfile_write(w->wf, buf, *len, err);
	}
	lt_free(buf);
	lt_free(pb);
	lt_free(ptrs);
	lt_free(meta);
	lt_free(metap);
	return rc;
}

static lt_code
put_column(lt_file_writer *w, int col, uint64_t *pos, uint64_t *len, lt_error *err)
{
	w_column   *c = &w->cols[col];
	Lt__Pb__ColumnMetadata cm = LT__PB__COLUMN_METADATA__INIT;
	Lt__Pb__EncodingRef cenc = LT__PB__ENCODING_REF__INIT;
	Lt__Pb__DirectEncoding cdir = LT__PB__DIRECT_ENCODING__INIT;
	Lt__Pb__PbAny any = LT__PB__PB_ANY__INIT;
	static const uint8_t empty_values[2] = {0x0a, 0x00};	/* ColumnEncoding{values: Empty} */
	static const uint8_t blob_values[6] = {0x1a, 0x04, 0x0a, 0x02, 0x0a, 0x00};	/* {blob: {inner: {values}}} */
	uint8_t		anybuf[64];
	Lt__Pb__ColumnPage *pages = lt_calloc(c->n ? c->n : 1, sizeof(Lt__Pb__ColumnPage));
	Lt__Pb__ColumnPage **pp = lt_calloc(c->n ? c->n : 1, sizeof(Lt__Pb__ColumnPage *));
	Lt__Pb__EncodingRef *refs = lt_calloc(c->n ? c->n : 1, sizeof(Lt__Pb__EncodingRef));
	Lt__Pb__DirectEncoding *dirs = lt_calloc(c->n ? c->n : 1, sizeof(Lt__Pb__DirectEncoding));
	uint8_t    *buf = NULL;
	lt_code		rc;

	if (!pages || !pp || !refs || !dirs)
		rc = lt_nomem(err);
	else
	{
		any.type_url = (char *) ANY_COLUMN_ENCODING;
		any.has_value = true;
		any.value.data = (uint8_t *) (c->blob20 ? blob_values : empty_values);
		any.value.len = c->blob20 ? sizeof(blob_values) : sizeof(empty_values);
		cdir.has_encoding = true;
		cdir.encoding.len = lt__pb__pb_any__pack(&any, anybuf);
		cdir.encoding.data = anybuf;
		cenc.location_case = LT__PB__ENCODING_REF__LOCATION_DIRECT;
		cenc.direct = &cdir;
		cm.encoding = &cenc;
		for (size_t i = 0; i < c->n; i++)
		{
			w_page	   *p = &c->pages[i];

			lt__pb__column_page__init(&pages[i]);
			lt__pb__encoding_ref__init(&refs[i]);
			lt__pb__direct_encoding__init(&dirs[i]);
			pages[i].n_buffer_offsets = p->nbuf;
			pages[i].buffer_offsets = p->offs;
			pages[i].n_buffer_sizes = p->nbuf;
			pages[i].buffer_sizes = p->lens;
			pages[i].has_length = true;
			pages[i].length = p->rows;
			pages[i].has_priority = true;
			pages[i].priority = p->priority;
			dirs[i].has_encoding = true;
			dirs[i].encoding.data = p->enc;
			dirs[i].encoding.len = p->enc_len;
			refs[i].location_case = LT__PB__ENCODING_REF__LOCATION_DIRECT;
			refs[i].direct = &dirs[i];
			pages[i].encoding = &refs[i];
			pp[i] = &pages[i];
		}
		cm.n_pages = c->n;
		cm.pages = pp;
		*len = lt__pb__column_metadata__get_packed_size(&cm);
		*pos = w->wf->written;
		if (!(buf = lt_malloc(*len ? *len : 1)))
			rc = lt_nomem(err);
		else
		{
			lt__pb__column_metadata__pack(&cm, buf);
			rc = lt_wfile_write(w->wf, buf, *len, err);
		}
	}
	lt_free(buf);
	lt_free(pages);
	lt_free(pp);
	lt_free(refs);
	lt_free(dirs);
	return rc;
}

static void
file_version_numbers(lt_file_version v, uint16_t *major, uint16_t *minor)
{
	switch (v)
	{
		case LT_FILE_V2_0:
			*major = 0;
			*minor = 3;
			break;
		case LT_FILE_V2_2:
			*major = 2;
			*minor = 2;
			break;
		default:
			*major = 2;
			*minor = 1;
			break;
	}
}

lt_code
lt_file_writer_finish(lt_file_writer *w, lt_written_file *out, lt_error *err)
{
	uint64_t	gpos = 0,
				glen = 0,
				meta_start,
				cmo_start,
				gbo_start;
	uint64_t   *cpos,
			   *clen;
	uint8_t		foot[40];
	uint16_t	major,
				minor;
	lt_wbuf		tab = {0};
	lt_code		rc = LT_OK;
	lt_wfile   *wf;
	uint64_t   *gbpos = NULL;	/* (position, length) of each extra global buffer */

	memset(out, 0, sizeof(*out));
	if (w->finished)
		return lt_error_set(err, LT_EINVALID, "%s: finished twice", w->path);
	for (int i = 0; rc == LT_OK && i < w->n_fields; i++)
		rc = flush_field(w, i, err);
	if (rc == LT_OK)
		rc = lt_writer_pack_close(w, err);	/* every sidecar in place before the file that names them */
	if (rc != LT_OK)
		return rc;
	/* the descriptor starts on a page boundary like the buffers before it */
	LT_TRY(lt_writer_write_padded(w, NULL, 0, err));
	LT_TRY(put_descriptor(w, &gpos, &glen, err));
	if (w->n_gbufs > 0 && !(gbpos = lt_calloc((size_t) w->n_gbufs * 2, sizeof(uint64_t))))
		return lt_nomem(err);
	for (int g = 0; g < w->n_gbufs; g++)
	{
		lt_code		grc = lt_writer_write_padded(w, NULL, 0, err);

		gbpos[2 * g] = w->wf->written;
		gbpos[2 * g + 1] = w->gbuf_lens[g];
		if (grc == LT_OK)
			grc = lt_wfile_write(w->wf, w->gbufs[g], w->gbuf_lens[g], err);
		if (grc != LT_OK)
		{
			lt_free(gbpos);
			return grc;
		}
	}
	meta_start = w->wf->written;
	cpos = lt_calloc(w->n_columns ? w->n_columns : 1, sizeof(uint64_t));
	clen = lt_calloc(w->n_columns ? w->n_columns : 1, sizeof(uint64_t));
	if (!cpos || !clen)
		rc = lt_nomem(err);
	for (int c = 0; rc == LT_OK && c < w->n_columns; c++)
		rc = put_column(w, c, &cpos[c], &clen[c], err);
	cmo_start = w->wf->written;
	for (int c = 0; rc == LT_OK && c < w->n_columns; c++)
	{
		rc = lt_wbuf_u64(&tab, cpos[c], err);
		if (rc == LT_OK)
			rc = lt_wbuf_u64(&tab, clen[c], err);
	}
	gbo_start = cmo_start + tab.len;
	if (rc == LT_OK)
		rc = lt_wbuf_u64(&tab, gpos, err);
	if (rc == LT_OK)
		rc = lt_wbuf_u64(&tab, glen, err);
	for (int g = 0; rc == LT_OK && g < w->n_gbufs; g++)
	{
		rc = lt_wbuf_u64(&tab, gbpos[2 * g], err);
		if (rc == LT_OK)
			rc = lt_wbuf_u64(&tab, gbpos[2 * g + 1], err);
	}
	lt_free(gbpos);
	file_version_numbers(w->version, &major, &minor);
	lt_put64(foot, meta_start);
	lt_put64(foot + 8, cmo_start);
	lt_put64(foot + 16, gbo_start);
	lt_put32(foot + 24, (uint32_t) (1 + w->n_gbufs));
	lt_put32(foot + 28, (uint32_t) w->n_columns);
	lt_put16(foot + 32, major);
	lt_put16(foot + 34, minor);
	memcpy(foot + 36, "LANC", 4);
	if (rc == LT_OK)
		rc = lt_wbuf_put(&tab, foot, sizeof(foot), err);
	if (rc == LT_OK)
		rc = lt_wfile_write(w->wf, tab.p, tab.len, err);
	lt_wbuf_free(&tab);
	lt_free(cpos);
	lt_free(clen);
	if (rc != LT_OK)
		return rc;

	out->size = w->wf->written;
	wf = w->wf;
	w->wf = NULL;
	w->finished = true;
	if ((rc = lt_wfile_finish(wf, err)) != LT_OK)
		return rc;
	out->name = lt_strdup(w->name);
	out->n_fields = w->n_columns;
	out->field_ids = lt_calloc(w->n_columns ? w->n_columns : 1, sizeof(int32_t));
	out->column_indices = lt_calloc(w->n_columns ? w->n_columns : 1, sizeof(int32_t));
	if (!out->name || !out->field_ids || !out->column_indices)
	{
		lt_written_file_clear(out);
		return lt_nomem(err);
	}
	for (int c = 0; c < w->n_columns; c++)
	{
		out->field_ids[c] = w->col_field[c];
		out->column_indices[c] = c;
	}
	out->major = major == 0 ? 2 : major;	/* DataFile records 2.0 as (2, 0) */
	out->minor = major == 0 ? 0 : minor;
	out->num_rows = w->rows;
	return LT_OK;
}

void
lt_file_writer_free(lt_file_writer *w)
{
	if (!w)
		return;
	if (w->wf)
		lt_wfile_abort(w->wf);
	lt_wfile_abort(w->blob_pack);
	for (int i = 0; w->pending && i < w->n_fields; i++)
		lt_array_free(w->pending[i]);
	for (int c = 0; w->cols && c < w->n_columns; c++)
	{
		for (size_t p = 0; p < w->cols[c].n; p++)
		{
			lt_free(w->cols[c].pages[p].offs);
			lt_free(w->cols[c].pages[p].lens);
			lt_free(w->cols[c].pages[p].enc);
		}
		lt_free(w->cols[c].pages);
	}
	lt_free(w->cols);
	for (int i = 0; i < w->n_meta; i++)
	{
		lt_free(w->meta_keys[i]);
		lt_free(w->meta_values[i]);
	}
	lt_free(w->meta_keys);
	lt_free(w->meta_values);
	lt_free(w->meta_lens);
	for (int i = 0; i < w->n_gbufs; i++)
		lt_free(w->gbufs[i]);
	lt_free(w->gbufs);
	lt_free(w->gbuf_lens);
	lt_free(w->col_field);
	lt_free(w->first_col);
	lt_free(w->flushed);
	lt_free(w->pending);
	lt_free(w->fields);
	lt_free(w->name);
	lt_free(w->path);
	lt_free(w);
}
