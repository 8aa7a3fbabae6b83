/*
 * lt_reader_legacy.c — field readers for legacy v1 data files (storage
 * version 0.1, footer 0.2).
 *
 * Layout: the file ends in i64 metadata_pos, u16 0, u16 2, "LANC".  At
 * metadata_pos is a u32-length-prefixed Metadata message: batch_offsets
 * (cumulative row counts, starting at 0) and page_table_position.  The page
 * table is an i64 array of (position, length) pairs, ordered by field id and
 * then batch, for ids from the data file's first field id upwards.  Pages:
 *   fixed width   plain values at position (bools as an LSB bitmap); a
 *                 fixed-size list stores its items the same way
 *   utf8/binary   `position` holds length+1 i64 absolute file offsets into
 *                 the bytes written before them
 *   list          length = rows+1 offsets (i32, or i64 for large lists),
 *                 starting at 0 in every batch, into the child's items
 *   dictionary    plain keys; the values sit at the dictionary offset named
 *                 by the schema embedded in the file
 *   struct        no page of its own
 * Legacy files carry no validity: what Lance reads back is reproduced here —
 * nothing is null except strings of nullable fields that are empty.
 */
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "file/lt_file.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_table.pb-c.h"

#define MAX_META_BYTES ((uint64_t) 64 << 20)
#define MAX_READ_BYTES ((uint64_t) 1 << 31)
#define MAX_BATCHES (1u << 24)
#define MAX_NEST 64

typedef struct lt_legacy_dict
{
	int32_t		field_id;
	int64_t		offset;
	int64_t		length;
} lt_legacy_dict;

typedef struct lt_legacy
{
	uint32_t	n_batches;
	uint64_t   *batch_first;	/* n_batches + 1 cumulative row counts */
	uint64_t	page_table_pos;
	uint64_t	manifest_pos;	/* 0 when the file embeds no schema */
	bool		dicts_loaded;
	int			n_dicts;
	lt_legacy_dict *dicts;
	Lt__Pb__Manifest *embedded;	/* the embedded manifest, once lt_legacy_file_schema read it */
} lt_legacy;

typedef struct lg_node
{
	const lt_field *field;
	bool		present;		/* the field has pages in this file */
	int64_t    *pages;			/* per batch: position, length */
	lt_array   *dict;			/* dictionary values (dictionary fields) */
	int			key_width;		/* dictionary key bytes */
	bool		key_signed;
	int			n_children;
	struct lg_node *children;
} lg_node;

typedef struct lg_reader
{
	lt_field_reader base;
	lt_legacy  *lg;
	int32_t		min_field_id;
	lg_node		root;
} lg_reader;

static lt_code read_field(lg_reader *r, lg_node *node, uint32_t b, uint64_t s, uint64_t cnt, lt_array *dst,
						  int depth, lt_error *err);

/* --- container ---------------------------------------------------------- */

void
lt_legacy_file_free(lt_file *f)
{
	lt_legacy  *lg = f->legacy;

	if (!lg)
		return;
	lt_free(lg->batch_first);
	lt_free(lg->dicts);
	if (lg->embedded)
		lt__pb__manifest__free_unpacked(lg->embedded, lt_protobuf_allocator());
	lt_free(lg);
	f->legacy = NULL;
}

/* Read a u32-length-prefixed protobuf at pos into a fresh buffer. */
static lt_code
read_prefixed(lt_file *f, uint64_t pos, const char *what, uint8_t **out, uint64_t *out_len, lt_error *err)
{
	uint8_t		lenb[4];
	uint64_t	len,
				end;

	*out = NULL;
	if (!lt_add_ok(pos, 4, &end) || end > f->size)
		return lt_corrupt(err, "%s: %s at offset %llu lies outside the file", f->path, what,
						  (unsigned long long) pos);
	LT_TRY(lt_rfile_read(f->rf, pos, 4, lenb, err));
	len = lt_le32(lenb);
	if (len > MAX_META_BYTES || !lt_add_ok(end, len, &end) || end > f->size)
		return lt_corrupt(err, "%s: %s of %llu bytes at offset %llu runs past the end of the file", f->path,
						  what, (unsigned long long) len, (unsigned long long) pos);
	*out = lt_malloc(len ? len : 1);
	if (!*out)
		return lt_nomem(err);
	if (lt_rfile_read(f->rf, pos + 4, len, *out, err) != LT_OK)
	{
		lt_free(*out);
		*out = NULL;
		return err ? err->code : LT_EIO;
	}
	*out_len = len;
	return LT_OK;
}

lt_code
lt_legacy_file_init(lt_file *f, lt_error *err)
{
	uint8_t		foot[16];
	uint64_t	meta_pos;
	uint8_t    *buf;
	uint64_t	len;
	Lt__Pb__LegacyFileMetadata *m;
	lt_legacy  *lg;
	size_t		i;
	lt_code		rc = LT_OK;

	if (f->size < 16)
		return lt_corrupt(err, "%s: file too short for a legacy footer", f->path);
	LT_TRY(lt_rfile_read(f->rf, f->size - 16, 16, foot, err));
	meta_pos = lt_le64(foot);
	if (meta_pos >= f->size - 16)
		return lt_corrupt(err, "%s: legacy metadata position %lld lies outside the file", f->path,
						  (long long) (int64_t) meta_pos);
	LT_TRY(read_prefixed(f, meta_pos, "legacy metadata", &buf, &len, err));
	m = lt__pb__legacy_file_metadata__unpack(lt_protobuf_allocator(), len, buf);
	lt_free(buf);
	if (!m)
		return lt_corrupt(err, "%s: legacy metadata does not parse", f->path);
	lg = lt_calloc(1, sizeof(lt_legacy));
	if (!lg)
	{
		lt__pb__legacy_file_metadata__free_unpacked(m, lt_protobuf_allocator());
		return lt_nomem(err);
	}
	f->legacy = lg;
	if (m->n_batch_offsets > MAX_BATCHES)
		rc = lt_corrupt(err, "%s: %zu batches", f->path, m->n_batch_offsets);
	else
	{
		lg->n_batches = m->n_batch_offsets ? (uint32_t) m->n_batch_offsets - 1 : 0;
		lg->batch_first = lt_calloc(lg->n_batches + 1, sizeof(uint64_t));
		if (!lg->batch_first)
			rc = lt_nomem(err);
	}
	for (i = 0; rc == LT_OK && i < m->n_batch_offsets; i++)
	{
		int32_t		v = m->batch_offsets[i];

		if (v < 0 || (i == 0 && v != 0) || (i > 0 && (uint64_t) v < lg->batch_first[i - 1]))
			rc = lt_corrupt(err, "%s: legacy batch offsets are not ascending from 0 (%d at %zu)", f->path, v, i);
		else
			lg->batch_first[i] = (uint64_t) v;
	}
	if (rc == LT_OK)
	{
		lg->page_table_pos = m->has_page_table_position ? m->page_table_position : 0;
		lg->manifest_pos = m->has_manifest_position ? m->manifest_position : 0;
		if (lg->page_table_pos >= f->size)
			rc = lt_corrupt(err, "%s: page table position %llu lies outside the file", f->path,
							(unsigned long long) lg->page_table_pos);
		f->num_rows = lg->batch_first[lg->n_batches];
	}
	lt__pb__legacy_file_metadata__free_unpacked(m, lt_protobuf_allocator());
	return rc;					/* lt_file_close frees lg on failure */
}

/* A protobuf varint from the cursor. */
static bool
take_varint(lt_cursor *c, uint64_t *v)
{
	const uint8_t *p;
	int			shift = 0;

	*v = 0;
	for (;;)
	{
		if (shift > 63 || !lt_cursor_take(c, 1, &p))
			return false;
		*v |= (uint64_t) (*p & 0x7f) << shift;
		shift += 7;
		if (!(*p & 0x80))
			return true;
	}
}

/*
 * The dictionaries' locations, from the schema Lance embeds in the file
 * (a Manifest whose field 1 holds the schema's Field messages).
 */
static lt_code
load_dicts(lt_file *f, lt_legacy *lg, lt_error *err)
{
	uint8_t    *buf;
	uint64_t	len;
	lt_cursor	c;
	lt_code		rc = LT_OK;

	if (lg->dicts_loaded)
		return LT_OK;
	lg->dicts_loaded = true;
	if (lg->manifest_pos == 0)
		return LT_OK;
	LT_TRY(read_prefixed(f, lg->manifest_pos, "embedded manifest", &buf, &len, err));
	c = lt_cursor_make(buf, (size_t) len);
	while (rc == LT_OK && lt_cursor_left(&c) > 0)
	{
		uint64_t	key,
					v;
		const uint8_t *p = NULL;
		bool		ok;

		if (!take_varint(&c, &key))
		{
			rc = lt_corrupt(err, "%s: embedded manifest does not parse", f->path);
			break;
		}
		switch (key & 7)
		{
			case 0:
				ok = take_varint(&c, &v);
				break;
			case 1:
				ok = lt_cursor_take(&c, 8, &p);
				break;
			case 5:
				ok = lt_cursor_take(&c, 4, &p);
				break;
			case 2:
				ok = take_varint(&c, &v) && v <= lt_cursor_left(&c) && lt_cursor_take(&c, (size_t) v, &p);
				if (ok && (key >> 3) == 1)
				{
					Lt__Pb__Field *fld = lt__pb__field__unpack(lt_protobuf_allocator(), (size_t) v, p);

					if (!fld)
					{
						rc = lt_corrupt(err, "%s: embedded schema field does not parse", f->path);
						break;
					}
					if (fld->dictionary && fld->has_id)
					{
						lt_legacy_dict *d = lt_realloc(lg->dicts, (lg->n_dicts + 1) * sizeof(lt_legacy_dict));

						if (!d)
							rc = lt_nomem(err);
						else
						{
							lg->dicts = d;
							d[lg->n_dicts].field_id = fld->id;
							d[lg->n_dicts].offset = fld->dictionary->offset;
							d[lg->n_dicts].length = fld->dictionary->length;
							lg->n_dicts++;
						}
					}
					lt__pb__field__free_unpacked(fld, lt_protobuf_allocator());
				}
				break;
			default:
				ok = false;
				break;
		}
		if (rc == LT_OK && !ok)
			rc = lt_corrupt(err, "%s: embedded manifest does not parse", f->path);
	}
	lt_free(buf);
	return rc;
}

/*
 * The schema a legacy file embeds (its Manifest message: fields and schema metadata) as f->file_schema:
 * index files of lance before 0.21 (btree page files) are legacy files described only by it.
 */
lt_code
lt_legacy_file_schema(lt_file *f, lt_error *err)
{
	lt_legacy  *lg = f->legacy;
	uint8_t    *buf;
	uint64_t	len;
	lt_code		rc;

	if (f->version != LT_FILE_LEGACY || !lg)
		return lt_error_set(err, LT_EINVALID, "%s: not a legacy file", f->path);
	if (f->file_schema)
		return LT_OK;
	if (lg->manifest_pos == 0)
		return lt_corrupt(err, "%s: the legacy file embeds no schema", f->path);
	LT_TRY(read_prefixed(f, lg->manifest_pos, "embedded manifest", &buf, &len, err));
	lg->embedded = lt__pb__manifest__unpack(lt_protobuf_allocator(), (size_t) len, buf);
	lt_free(buf);
	if (!lg->embedded)
		return lt_corrupt(err, "%s: embedded manifest does not parse", f->path);
	rc = lt_schema_from_pb(lg->embedded->fields, lg->embedded->n_fields, &f->file_schema, err);
	if (rc != LT_OK)
		lt_error_prefix(err, "%s: embedded schema", f->path);
	return rc;
}

const uint8_t *
lt_legacy_file_meta(const lt_file *f, const char *key, size_t *len)
{
	const lt_legacy *lg = f->legacy;

	for (size_t i = 0; lg && lg->embedded && i < lg->embedded->n_schema_metadata; i++)
	{
		const Lt__Pb__Manifest__SchemaMetadataEntry *e = lg->embedded->schema_metadata[i];

		if (e->key && strcmp(e->key, key) == 0)
		{
			*len = e->value.len;
			return e->value.data;
		}
	}
	return NULL;
}

/* --- plain pages -------------------------------------------------------- */

/* Read [off, off+len) of the file into dst, checking the range. */
static lt_code
file_read(lg_reader *r, uint64_t off, uint64_t len, uint8_t *dst, lt_error *err)
{
	lt_file    *f = r->base.file;
	uint64_t	end;

	if (!lt_add_ok(off, len, &end) || end > f->size || len > MAX_READ_BYTES)
		return lt_corrupt(err, "%s: read of %llu bytes at offset %llu lies outside the file", f->path,
						  (unsigned long long) len, (unsigned long long) off);
	if (len == 0)
		return LT_OK;
	return lt_rfile_read(f->rf, off, len, dst, err);
}

static bool
is_plain(const lt_field *field)
{
	if (field->type == LT_TYPE_FIXED_LIST)
		return field->n_children == 1 && is_plain(field->children[0]);
	return field->byte_width > 0 && field->type != LT_TYPE_STRUCT && !field->dictionary;
}

/* Values [s, s+cnt) of a plain page of page_rows values at pos (recursing into fixed-size lists). */
static lt_code
read_plain(lg_reader *r, const lt_field *field, uint64_t pos, uint64_t page_rows, uint64_t s, uint64_t cnt,
		   lt_array *dst, int depth, lt_error *err)
{
	const char *path = r->base.file->path;
	uint64_t	end;

	if (depth > MAX_NEST)
		return lt_corrupt(err, "%s: field \"%s\" is nested too deeply", path, field->name);
	if (!lt_add_ok(s, cnt, &end) || end > page_rows)
		return lt_corrupt(err, "%s: field \"%s\": rows [%llu, +%llu) requested from a page of %llu", path,
						  field->name, (unsigned long long) s, (unsigned long long) cnt,
						  (unsigned long long) page_rows);
	if (field->type == LT_TYPE_FIXED_LIST)
	{
		uint64_t	dim = (uint64_t) field->fixed_size;
		uint64_t	rows,
					cs,
					cn;
		lt_array   *child;

		if (dim == 0 || field->n_children != 1 || !lt_mul_ok(page_rows, dim, &rows) ||
			!lt_mul_ok(s, dim, &cs) || !lt_mul_ok(cnt, dim, &cn))
			return lt_corrupt(err, "%s: field \"%s\": bad fixed-size list", path, field->name);
		if (!dst->children[0] && lt_array_new(field->children[0], &dst->children[0], err) != LT_OK)
			return err ? err->code : LT_ENOMEM;
		child = dst->children[0];
		LT_TRY(read_plain(r, field->children[0], pos, rows, cs, cn, child, depth + 1, err));
	}
	else if (field->type == LT_TYPE_BOOL)
	{
		uint64_t	lo = s / 8,
					hi = (end + 7) / 8;
		uint8_t    *bits;
		uint64_t	i;
		lt_code		rc;

		if (pos > r->base.file->size || hi > r->base.file->size - pos)
			return lt_corrupt(err, "%s: field \"%s\": bitmap of the page at %llu lies outside the file",
							  path, field->name, (unsigned long long) pos);
		LT_TRY(lt_array_reserve(dst, (int64_t) cnt, err));
		bits = lt_malloc(hi - lo + 1);
		if (!bits)
			return lt_nomem(err);
		rc = file_read(r, pos + lo, hi - lo, bits, err);
		for (i = 0; rc == LT_OK && i < cnt; i++)
			dst->values[dst->length + (int64_t) i] = (bits[(s + i) / 8 - lo] >> ((s + i) & 7)) & 1;
		lt_free(bits);
		LT_TRY(rc);
	}
	else
	{
		uint64_t	w = (uint64_t) field->byte_width;
		uint64_t	off,
					len;

		if (!lt_mul_ok(s, w, &off) || !lt_mul_ok(cnt, w, &len) || !lt_add_ok(pos, off, &off) ||
			!lt_add_ok(off, len, &end) || end > r->base.file->size)
			return lt_corrupt(err, "%s: field \"%s\": values [%llu, +%llu) of the page at %llu lie outside the file",
							  path, field->name, (unsigned long long) s, (unsigned long long) cnt,
							  (unsigned long long) pos);
		LT_TRY(lt_array_reserve(dst, (int64_t) cnt, err));
		if (len > 0)			/* values may still be NULL for an empty read */
			LT_TRY(file_read(r, off, len, dst->values + dst->length * (int64_t) w, err));
	}
	LT_TRY(lt_array_reserve(dst, (int64_t) cnt, err));
	if (dst->validity)
		memset(dst->validity + dst->length, 1, (size_t) cnt);
	dst->length += (int64_t) cnt;
	return LT_OK;
}

/*
 * Strings [s, s+cnt) of a page whose length+1 absolute offsets start at pos.
 * Lance reads an empty string of a nullable field as null.
 */
static lt_code
read_binary(lg_reader *r, const lt_field *field, bool nullable, uint64_t pos, uint64_t page_rows,
			uint64_t s, uint64_t cnt, lt_array *dst, lt_error *err)
{
	lt_file    *f = r->base.file;
	uint64_t	end;
	uint8_t    *raw;
	uint64_t	i,
				first,
				last,
				nulls = 0;
	int64_t		base;
	lt_code		rc;

	if (!lt_add_ok(s, cnt, &end) || end > page_rows)
		return lt_corrupt(err, "%s: field \"%s\": strings [%llu, +%llu) requested from a page of %llu",
						  f->path, field->name, (unsigned long long) s, (unsigned long long) cnt,
						  (unsigned long long) page_rows);
	if (cnt == 0)
		return LT_OK;
	raw = lt_malloc((cnt + 1) * 8);
	if (!raw)
		return lt_nomem(err);
	rc = file_read(r, pos + s * 8, (cnt + 1) * 8, raw, err);
	if (rc != LT_OK)
		goto done;
	first = lt_le64(raw);
	last = first;
	for (i = 1; i <= cnt; i++)
	{
		uint64_t	v = lt_le64(raw + 8 * i);

		if ((int64_t) v < 0 || v < last)
		{
			rc = lt_corrupt(err, "%s: field \"%s\": string positions go backwards (%lld after %lld)", f->path,
							field->name, (long long) (int64_t) v, (long long) last);
			goto done;
		}
		last = v;
		if (nullable && lt_le64(raw + 8 * (i - 1)) == v)
			nulls++;
	}
	if ((int64_t) first < 0 || last > f->size || last - first > MAX_READ_BYTES)
	{
		rc = lt_corrupt(err, "%s: field \"%s\": string bytes [%lld, %llu) lie outside the file", f->path,
						field->name, (long long) (int64_t) first, (unsigned long long) last);
		goto done;
	}
	if ((rc = lt_array_reserve(dst, (int64_t) cnt, err)) != LT_OK ||
		(rc = lt_array_reserve_data(dst, (int64_t) (last - first), err)) != LT_OK)
		goto done;
	if (nulls && (rc = lt_array_ensure_validity(dst, err)) != LT_OK)
		goto done;
	if (last > first && (rc = file_read(r, first, last - first, dst->data + dst->data_len, err)) != LT_OK)
		goto done;
	base = dst->offsets[dst->length];
	for (i = 0; i < cnt; i++)
	{
		uint64_t	a = lt_le64(raw + 8 * i),
					b = lt_le64(raw + 8 * (i + 1));

		dst->offsets[dst->length + 1 + (int64_t) i] = base + (int64_t) (b - first);
		if (dst->validity)
			dst->validity[dst->length + (int64_t) i] = !(nullable && a == b);
	}
	dst->data_len += (int64_t) (last - first);
	dst->null_count += (int64_t) nulls;
	dst->length += (int64_t) cnt;
done:
	lt_free(raw);
	return rc;
}

/* --- dictionaries ------------------------------------------------------- */

/* Key type of "dict:<value>:<key>:<ordered>". */
static bool
dict_key_type(const char *lt, int *width, bool *is_signed)
{
	const char *end = strrchr(lt, ':');
	const char *k;
	size_t		n;
	static const struct
	{
		const char *name;
		int			w;
		bool		s;
	}			keys[] = {
		{"int8", 1, true}, {"int16", 2, true}, {"int32", 4, true}, {"int64", 8, true},
		{"uint8", 1, false}, {"uint16", 2, false}, {"uint32", 4, false}, {"uint64", 8, false}
	};
	size_t		i;

	if (!end || end == lt)
		return false;
	for (k = end - 1; k > lt && *k != ':'; k--)
		;
	if (*k != ':')
		return false;
	k++;
	n = (size_t) (end - k);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].name) == n && strncmp(k, keys[i].name, n) == 0)
		{
			*width = keys[i].w;
			*is_signed = keys[i].s;
			return true;
		}
	return false;
}

static lt_code
load_dict(lg_reader *r, lg_node *node, lt_error *err)
{
	lt_file    *f = r->base.file;
	const lt_field *field = node->field;
	int64_t		off = field->dict_offset,
				len = field->dict_length;
	int			i;
	lt_code		rc;

	if (!dict_key_type(field->logical_type, &node->key_width, &node->key_signed))
		return lt_corrupt(err, "%s: field \"%s\": bad dictionary type \"%s\"", f->path, field->name,
						  field->logical_type);
	LT_TRY(load_dicts(f, r->lg, err));
	for (i = 0; i < r->lg->n_dicts; i++)
		if (r->lg->dicts[i].field_id == field->id)
		{
			off = r->lg->dicts[i].offset;
			len = r->lg->dicts[i].length;
			break;
		}
	if (off < 0 || len < 0 || (uint64_t) len > f->size)
		return lt_corrupt(err, "%s: field \"%s\": dictionary at %lld of %lld values lies outside the file",
						  f->path, field->name, (long long) off, (long long) len);
	LT_TRY(lt_array_new(field, &node->dict, err));
	if (lt_type_is_var_width(field->type))
		rc = read_binary(r, field, true, (uint64_t) off, (uint64_t) len, 0, (uint64_t) len, node->dict, err);
	else if (field->byte_width > 0 && field->type != LT_TYPE_FIXED_LIST && field->type != LT_TYPE_BOOL)
	{
		lt_field	plain = *field;

		plain.dictionary = false;
		rc = read_plain(r, &plain, (uint64_t) off, (uint64_t) len, 0, (uint64_t) len, node->dict, 0, err);
	}
	else
		rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: field \"%s\": dictionaries of %s", f->path, field->name,
						  lt_type_name(field->type));
	return rc;
}

static lt_code
read_dict(lg_reader *r, lg_node *node, uint64_t pos, uint64_t page_rows, uint64_t s, uint64_t cnt,
		  lt_array *dst, lt_error *err)
{
	lt_file    *f = r->base.file;
	const lt_array *d = node->dict;
	uint64_t	w = (uint64_t) node->key_width;
	uint64_t	end,
				i;
	int64_t    *idx;
	uint8_t    *raw;
	lt_code		rc;

	if (!lt_add_ok(s, cnt, &end) || end > page_rows)
		return lt_corrupt(err, "%s: field \"%s\": keys [%llu, +%llu) requested from a page of %llu",
						  f->path, node->field->name, (unsigned long long) s, (unsigned long long) cnt,
						  (unsigned long long) page_rows);
	if (cnt == 0)
		return LT_OK;
	raw = lt_malloc(cnt * w);
	idx = lt_malloc(cnt * sizeof(int64_t));
	if (!raw || !idx)
	{
		lt_free(raw);
		lt_free(idx);
		return lt_nomem(err);
	}
	rc = file_read(r, pos + s * w, cnt * w, raw, err);
	for (i = 0; rc == LT_OK && i < cnt; i++)
	{
		const uint8_t *p = raw + i * w;
		int64_t		k;

		if (w == 1)
			k = node->key_signed ? (int64_t) (int8_t) p[0] : (int64_t) p[0];
		else if (w == 2)
			k = node->key_signed ? (int64_t) (int16_t) lt_le16(p) : (int64_t) lt_le16(p);
		else if (w == 4)
			k = node->key_signed ? (int64_t) (int32_t) lt_le32(p) : (int64_t) lt_le32(p);
		else
			k = (int64_t) lt_le64(p);
		if (k < 0 || k >= d->length)
			rc = lt_corrupt(err, "%s: field \"%s\": dictionary key %lld, but the dictionary has %lld values",
							f->path, node->field->name, (long long) k, (long long) d->length);
		idx[i] = k;
	}
	if (rc == LT_OK)
		rc = lt_array_append_take(dst, d, idx, (int64_t) cnt, err);
	lt_free(raw);
	lt_free(idx);
	return rc;
}

/* --- fields ------------------------------------------------------------- */

static lt_code
read_list(lg_reader *r, lg_node *node, uint32_t b, uint64_t pos, uint64_t page_len, uint64_t s, uint64_t cnt,
		  lt_array *dst, int depth, lt_error *err)
{
	lt_file    *f = r->base.file;
	uint64_t	w = node->field->type == LT_TYPE_LARGE_LIST ? 8 : 4;
	uint64_t	end,
				i;
	uint8_t    *raw;
	int64_t		first,
				prev,
				base;
	lt_array   *items;
	lt_code		rc;

	/* a batch's list page holds rows+1 offsets */
	if (!lt_add_ok(s, cnt, &end) || end >= page_len)
		return lt_corrupt(err, "%s: field \"%s\": lists [%llu, +%llu) requested from a page of %llu offsets",
						  f->path, node->field->name, (unsigned long long) s, (unsigned long long) cnt,
						  (unsigned long long) page_len);
	if (!dst->children[0] && lt_array_new(node->field->children[0], &dst->children[0], err) != LT_OK)
		return err ? err->code : LT_ENOMEM;
	items = dst->children[0];
	raw = lt_malloc((cnt + 1) * w);
	if (!raw)
		return lt_nomem(err);
	rc = file_read(r, pos + s * w, (cnt + 1) * w, raw, err);
	if (rc == LT_OK)
		rc = lt_array_reserve(dst, (int64_t) cnt, err);
	if (rc != LT_OK)
	{
		lt_free(raw);
		return rc;
	}
	first = w == 8 ? (int64_t) lt_le64(raw) : (int32_t) lt_le32(raw);
	prev = first;
	base = dst->offsets[dst->length];
	for (i = 1; i <= cnt && rc == LT_OK; i++)
	{
		int64_t		v = w == 8 ? (int64_t) lt_le64(raw + 8 * i) : (int32_t) lt_le32(raw + 4 * i);

		if (first < 0 || v < prev)
			rc = lt_corrupt(err, "%s: field \"%s\": list offsets go backwards (%lld after %lld)", f->path,
							node->field->name, (long long) v, (long long) prev);
		dst->offsets[dst->length + (int64_t) i] = base + (v - first);
		prev = v;
	}
	lt_free(raw);
	LT_TRY(rc);
	/* every item takes at least a bit of the file */
	if ((uint64_t) (prev - first) / 8 > f->size)
		return lt_corrupt(err, "%s: field \"%s\": lists claim %lld items", f->path, node->field->name,
						  (long long) (prev - first));
	/* items first, so that a failure leaves dst's length unchanged */
	LT_TRY(read_field(r, &node->children[0], b, (uint64_t) first, (uint64_t) (prev - first), items, depth + 1, err));
	if (dst->validity)
		memset(dst->validity + dst->length, 1, (size_t) cnt);
	dst->length += (int64_t) cnt;
	return LT_OK;
}

static lt_code
read_field(lg_reader *r, lg_node *node, uint32_t b, uint64_t s, uint64_t cnt, lt_array *dst, int depth,
		   lt_error *err)
{
	const lt_field *field = node->field;
	uint64_t	pos,
				len;
	int			i;

	if (depth > MAX_NEST)
		return lt_corrupt(err, "%s: field \"%s\" is nested too deeply", r->base.file->path, field->name);
	if (!node->present || field->type == LT_TYPE_NULL)
		return lt_array_append_nulls(dst, (int64_t) cnt, err);
	if (field->type == LT_TYPE_STRUCT)
	{
		for (i = 0; i < node->n_children; i++)
		{
			if (!dst->children[i] && lt_array_new(field->children[i], &dst->children[i], err) != LT_OK)
				return err ? err->code : LT_ENOMEM;
			LT_TRY(read_field(r, &node->children[i], b, s, cnt, dst->children[i], depth + 1, err));
		}
		LT_TRY(lt_array_reserve(dst, (int64_t) cnt, err));
		if (dst->validity)
			memset(dst->validity + dst->length, 1, (size_t) cnt);
		dst->length += (int64_t) cnt;
		return LT_OK;
	}
	if (node->pages[2 * b] < 0 || node->pages[2 * b + 1] < 0)
		return lt_corrupt(err, "%s: field \"%s\" batch %u: page at %lld of length %lld", r->base.file->path,
						  field->name, b, (long long) node->pages[2 * b], (long long) node->pages[2 * b + 1]);
	pos = (uint64_t) node->pages[2 * b];
	len = (uint64_t) node->pages[2 * b + 1];
	if (field->dictionary)
		return read_dict(r, node, pos, len, s, cnt, dst, err);
	if (lt_type_is_var_width(field->type))
		return read_binary(r, field, field->nullable, pos, len, s, cnt, dst, err);
	if (field->type == LT_TYPE_LIST || field->type == LT_TYPE_LARGE_LIST)
		return read_list(r, node, b, pos, len, s, cnt, dst, depth, err);
	if (is_plain(field))
		return read_plain(r, field, pos, len, s, cnt, dst, depth, err);
	return lt_error_set(err, LT_EUNSUPPORTED, "%s: field \"%s\" of type %s in a legacy file", r->base.file->path,
						field->name, lt_type_name(field->type));
}

/* --- opening ------------------------------------------------------------ */

static bool
map_has(const lt_column_map *map, int32_t id)
{
	int			i;

	if (!map)
		return id >= 0;
	for (i = 0; i < map->n; i++)
		if (map->field_ids[i] == id)
			return true;
	return false;
}

static void
node_free(lg_node *node)
{
	int			i;

	for (i = 0; i < node->n_children; i++)
		node_free(&node->children[i]);
	lt_free(node->children);
	lt_free(node->pages);
	lt_array_free(node->dict);
}

/* This field's page-table entries: one (position, length) pair per batch. */
static lt_code
load_pages(lg_reader *r, lg_node *node, lt_error *err)
{
	lt_file    *f = r->base.file;
	uint32_t	nb = r->lg->n_batches;
	uint64_t	row,
				off,
				bytes;
	uint8_t    *raw;
	uint32_t	i;
	lt_code		rc;

	if (node->field->id < r->min_field_id)
		return lt_corrupt(err, "%s: field \"%s\" (id %d) precedes the file's first field id %d", f->path,
						  node->field->name, node->field->id, r->min_field_id);
	row = (uint64_t) (node->field->id - r->min_field_id);
	if (!lt_mul_ok(row, nb, &off) || !lt_mul_ok(off, 16, &off) || !lt_add_ok(off, r->lg->page_table_pos, &off))
		return lt_corrupt(err, "%s: page table offset overflows", f->path);
	bytes = (uint64_t) nb * 16;
	node->pages = lt_calloc(nb ? 2 * (size_t) nb : 1, sizeof(int64_t));
	raw = lt_malloc(bytes ? bytes : 1);
	if (!node->pages || !raw)
	{
		lt_free(raw);
		return lt_nomem(err);
	}
	rc = file_read(r, off, bytes, raw, err);
	for (i = 0; rc == LT_OK && i < 2 * nb; i++)
		node->pages[i] = (int64_t) lt_le64(raw + 8 * i);
	lt_free(raw);
	if (rc != LT_OK)
		lt_error_prefix(err, "page table entry of field \"%s\"", node->field->name);
	return rc;
}

static lt_code
node_init(lg_reader *r, const lt_column_map *map, const lt_field *field, lg_node *node, int depth,
		  lt_error *err)
{
	int			i;

	memset(node, 0, sizeof(*node));
	node->field = field;
	if (depth > MAX_NEST)
		return lt_corrupt(err, "%s: field \"%s\" is nested too deeply", r->base.file->path, field->name);
	node->present = field->id < 0 || map_has(map, field->id);
	if (!node->present)
		return LT_OK;
	if (field->type == LT_TYPE_MAP)
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: field \"%s\": maps in legacy files", r->base.file->path,
							field->name);
	if (field->type == LT_TYPE_STRUCT || field->type == LT_TYPE_LIST || field->type == LT_TYPE_LARGE_LIST)
	{
		node->children = lt_calloc(field->n_children ? field->n_children : 1, sizeof(lg_node));
		if (!node->children)
			return lt_nomem(err);
		node->n_children = field->n_children;
		for (i = 0; i < field->n_children; i++)
			LT_TRY(node_init(r, map, field->children[i], &node->children[i], depth + 1, err));
		if (field->type == LT_TYPE_STRUCT)
			return LT_OK;
		if (field->n_children != 1 || !node->children[0].present)
			return lt_corrupt(err, "%s: list field \"%s\" has no items in the file", r->base.file->path,
							  field->name);
	}
	if (field->id < 0)
		return LT_OK;			/* a fixed-size list's item: read through its parent */
	LT_TRY(load_pages(r, node, err));
	if (field->dictionary)
		LT_TRY(load_dict(r, node, err));
	return LT_OK;
}

static lt_code
lg_read(lt_field_reader *base, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	lg_reader  *r = (lg_reader *) base;
	const uint64_t *bf = r->lg->batch_first;
	uint64_t	row = start,
				end = start + n;

	if (dst->field->type != base->field->type)
		return lt_error_set(err, LT_EINVALID, "field \"%s\": output array has type %s, expected %s",
							base->field->name, lt_type_name(dst->field->type), lt_type_name(base->field->type));
	while (row < end)
	{
		/* the batch holding row */
		uint32_t	lo = 0,
					hi = r->lg->n_batches;
		uint64_t	cnt;

		while (lo < hi)
		{
			uint32_t	mid = lo + (hi - lo) / 2;

			if (bf[mid + 1] <= row)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= r->lg->n_batches)
			return lt_corrupt(err, "%s: row %llu lies beyond the file's batches", base->file->path,
							  (unsigned long long) row);
		cnt = bf[lo + 1] - row;
		if (cnt > end - row)
			cnt = end - row;
		LT_TRY(read_field(r, &r->root, lo, row - bf[lo], cnt, dst, 0, err));
		base->pages_decoded++;
		row += cnt;
	}
	return LT_OK;
}

static void
lg_free(lt_field_reader *base)
{
	lg_reader  *r = (lg_reader *) base;

	node_free(&r->root);
	lt_free(r);
}

static const lt_field_reader_ops lg_ops = {lg_read, lg_free};

lt_code
lt_reader_legacy_open(lt_file *f, const lt_field *field, const lt_column_map *map,
					  lt_field_reader **out, lt_error *err)
{
	lg_reader  *r;
	lt_code		rc;

	*out = NULL;
	if (f->version != LT_FILE_LEGACY || !f->legacy)
		return lt_error_set(err, LT_EINVALID, "%s: not a legacy file", f->path);
	r = lt_calloc(1, sizeof(lg_reader));
	if (!r)
		return lt_nomem(err);
	r->base.ops = &lg_ops;
	r->base.file = f;
	r->base.field = field;
	r->base.num_rows = f->num_rows;
	r->lg = f->legacy;
	/* Lance locates page-table rows from the data file's first field id */
	r->min_field_id = map && map->n > 0 ? map->field_ids[0] : 0;
	rc = node_init(r, map, field, &r->root, 0, err);
	if (rc != LT_OK)
	{
		node_free(&r->root);
		lt_free(r);
		return rc;
	}
	*out = &r->base;
	return LT_OK;
}
