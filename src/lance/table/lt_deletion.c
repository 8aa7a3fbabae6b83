/*
 * lt_deletion.c — deletion files (.arrow Arrow IPC, .bin Roaring) to sorted
 * deletion vectors.
 *
 * The Arrow side is a deliberately narrow IPC *file* reader: one schema with
 * one uint32 field, one record batch, optional per-buffer ZSTD.  It has its own
 * bounded flatbuffers accessors: every table, vtable, vector and string is
 * checked against the buffer before it is touched.
 */
#include "table/lt_deletion.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "encoding/lt_compress.h"
#include "table/lt_roaring.h"
#include "util/lt_sort.h"

/* --- bounded flatbuffers -------------------------------------------------- */

/*
 * A flatbuffer inside the file: p[0] is file offset `base`, so messages can
 * name absolute offsets.
 */
typedef struct fb_buf
{
	const uint8_t *p;
	size_t		len;
	size_t		base;
	const char *path;
	lt_error   *err;
} fb_buf;

typedef struct fb_table
{
	const fb_buf *b;
	size_t		pos;			/* table start, relative to b->p */
	size_t		vt;				/* vtable start */
	uint16_t	vtlen;
	uint16_t	tlen;
} fb_table;

static lt_code
fb_bad(const fb_buf *b, size_t at, const char *what)
{
	return lt_corrupt(b->err, "deletion file %s: arrow: %s at offset %zu", b->path, what, b->base + at);
}

static lt_code
fb_table_at(const fb_buf *b, size_t pos, fb_table *t)
{
	int32_t		soff;
	int64_t		vt;

	if (pos > b->len || b->len - pos < 4)
		return fb_bad(b, pos, "table out of bounds");
	soff = (int32_t) lt_le32(b->p + pos);
	vt = (int64_t) pos - soff;
	if (vt < 0 || (uint64_t) vt > b->len - 4)
		return fb_bad(b, pos, "vtable out of bounds");
	t->b = b;
	t->pos = pos;
	t->vt = (size_t) vt;
	t->vtlen = lt_le16(b->p + t->vt);
	t->tlen = lt_le16(b->p + t->vt + 2);
	if (t->vtlen < 4 || (t->vtlen & 1) || t->vtlen > b->len - t->vt)
		return fb_bad(b, t->vt, "bad vtable size");
	if (t->tlen < 4 || t->tlen > b->len - pos)
		return fb_bad(b, pos, "bad table size");
	return LT_OK;
}

/* Position of field id (size bytes) in the table, or 0 when absent. */
static lt_code
fb_field(const fb_table *t, int id, size_t size, size_t *at)
{
	size_t		slot = 4 + 2 * (size_t) id;
	uint16_t	off;

	*at = 0;
	if (slot + 2 > t->vtlen)
		return LT_OK;
	off = lt_le16(t->b->p + t->vt + slot);
	if (off == 0)
		return LT_OK;
	if (off < 4 || (size_t) off + size > t->tlen)
		return fb_bad(t->b, t->pos, "field outside its table");
	*at = t->pos + off;
	return LT_OK;
}

static lt_code
fb_u8(const fb_table *t, int id, uint8_t dflt, uint8_t *v)
{
	size_t		at;

	LT_TRY(fb_field(t, id, 1, &at));
	*v = at ? t->b->p[at] : dflt;
	return LT_OK;
}

static lt_code
fb_i16(const fb_table *t, int id, int16_t dflt, int16_t *v)
{
	size_t		at;

	LT_TRY(fb_field(t, id, 2, &at));
	*v = at ? (int16_t) lt_le16(t->b->p + at) : dflt;
	return LT_OK;
}

static lt_code
fb_i32(const fb_table *t, int id, int32_t dflt, int32_t *v)
{
	size_t		at;

	LT_TRY(fb_field(t, id, 4, &at));
	*v = at ? (int32_t) lt_le32(t->b->p + at) : dflt;
	return LT_OK;
}

static lt_code
fb_i64(const fb_table *t, int id, int64_t dflt, int64_t *v)
{
	size_t		at;

	LT_TRY(fb_field(t, id, 8, &at));
	*v = at ? (int64_t) lt_le64(t->b->p + at) : dflt;
	return LT_OK;
}

/* Follow a u32 forward offset stored at `at`. */
static lt_code
fb_deref(const fb_buf *b, size_t at, size_t *target)
{
	uint32_t	rel = lt_le32(b->p + at);

	*target = 0;
	if (rel > b->len - at)
		return fb_bad(b, at, "offset out of bounds");
	*target = at + rel;
	return LT_OK;
}

/* A sub-table field; *present false when absent. */
static lt_code
fb_subtable(const fb_table *t, int id, fb_table *sub, bool *present)
{
	size_t		at,
				target;

	*present = false;
	LT_TRY(fb_field(t, id, 4, &at));
	if (!at)
		return LT_OK;
	LT_TRY(fb_deref(t->b, at, &target));
	LT_TRY(fb_table_at(t->b, target, sub));
	*present = true;
	return LT_OK;
}

/* A vector field of elem-byte elements: *start is its first element. */
static lt_code
fb_vector(const fb_table *t, int id, size_t elem, size_t *start, uint32_t *count)
{
	size_t		at,
				target;
	const fb_buf *b = t->b;

	*start = 0;
	*count = 0;
	LT_TRY(fb_field(t, id, 4, &at));
	if (!at)
		return LT_OK;
	LT_TRY(fb_deref(b, at, &target));
	if (b->len - target < 4)
		return fb_bad(b, target, "vector length out of bounds");
	*count = lt_le32(b->p + target);
	if ((uint64_t) *count * elem > b->len - target - 4)
		return fb_bad(b, target, "vector out of bounds");
	*start = target + 4;
	return LT_OK;
}

/* Element i of a vector of tables. */
static lt_code
fb_vector_table(const fb_buf *b, size_t start, uint32_t i, fb_table *t)
{
	size_t		target;

	LT_TRY(fb_deref(b, start + 4 * (size_t) i, &target));
	return fb_table_at(b, target, t);
}

static lt_code
fb_string(const fb_table *t, int id, const uint8_t **s, uint32_t *slen)
{
	size_t		start;

	LT_TRY(fb_vector(t, id, 1, &start, slen));
	*s = start ? t->b->p + start : NULL;
	return LT_OK;
}

/* --- the Arrow IPC file --------------------------------------------------- */

#define ARROW_MAGIC			"ARROW1"
#define ARROW_HDR_RECORDBATCH 3
#define ARROW_TYPE_INT		2
#define ARROW_CODEC_LZ4_FRAME 0
#define ARROW_CODEC_ZSTD	1
#define ARROW_V4			3
#define ARROW_V5			4

static lt_code
arrow_bad(const char *path, lt_error *err, size_t at, const char *what)
{
	return lt_corrupt(err, "deletion file %s: arrow: %s at offset %zu", path, what, at);
}

/* Require the footer schema to be exactly `row_id: uint32 not null`. */
static lt_code
arrow_check_schema(const fb_table *schema)
{
	const fb_buf *b = schema->b;
	int16_t		endian;
	size_t		fstart;
	uint32_t	nfields;
	fb_table	field,
				type;
	const uint8_t *name;
	uint32_t	nlen;
	uint8_t		nullable,
				type_type,
				is_signed;
	int32_t		width;
	bool		present;
	size_t		cstart;
	uint32_t	nchildren;

	LT_TRY(fb_i16(schema, 0, 0, &endian));
	if (endian != 0)
		return lt_error_set(b->err, LT_EUNSUPPORTED, "deletion file %s: arrow: big-endian data is not supported",
							b->path);
	LT_TRY(fb_vector(schema, 1, 4, &fstart, &nfields));
	if (nfields != 1)
		return fb_bad(b, schema->pos, "schema must have exactly one field");
	LT_TRY(fb_vector_table(b, fstart, 0, &field));
	LT_TRY(fb_string(&field, 0, &name, &nlen));
	if (!name || nlen != 6 || memcmp(name, "row_id", 6) != 0)
		return fb_bad(b, field.pos, "field is not named row_id");
	LT_TRY(fb_u8(&field, 1, 0, &nullable));
	if (nullable)
		return fb_bad(b, field.pos, "row_id is nullable");
	LT_TRY(fb_u8(&field, 2, 0, &type_type));
	LT_TRY(fb_subtable(&field, 3, &type, &present));
	if (type_type != ARROW_TYPE_INT || !present)
		return fb_bad(b, field.pos, "row_id is not an integer");
	LT_TRY(fb_i32(&type, 0, 0, &width));
	LT_TRY(fb_u8(&type, 1, 0, &is_signed));
	if (width != 32 || is_signed)
		return fb_bad(b, type.pos, "row_id is not uint32");
	LT_TRY(fb_field(&field, 4, 4, &cstart));
	if (cstart)
		return fb_bad(b, field.pos, "row_id is dictionary-encoded");
	LT_TRY(fb_vector(&field, 5, 4, &cstart, &nchildren));
	if (nchildren != 0)
		return fb_bad(b, field.pos, "row_id has children");
	return LT_OK;
}

/*
 * One body buffer, decompressed if needed.  *owned is set when the bytes were
 * allocated (the caller frees it); otherwise *data points into the file.
 */
static lt_code
arrow_buffer(const uint8_t *file, size_t body, uint64_t body_len, const fb_buf *mb, size_t bufvec,
			 uint32_t i, bool compressed, uint64_t max_ulen, const char *path, lt_error *err,
			 const uint8_t **data, uint64_t *dlen, uint8_t **owned)
{
	size_t		at = bufvec + 16 * (size_t) i;
	uint64_t	off = lt_le64(mb->p + at);
	uint64_t	len = lt_le64(mb->p + at + 8);
	uint64_t	end;
	const uint8_t *src;
	int64_t		ulen;

	*owned = NULL;
	*data = NULL;
	*dlen = 0;
	if (!lt_add_ok(off, len, &end) || end > body_len)
		return fb_bad(mb, at, "buffer outside the message body");
	src = file + body + off;
	if (!compressed || len == 0)
	{
		*data = src;
		*dlen = len;
		return LT_OK;
	}
	if (len < 8)
		return arrow_bad(path, err, body + off, "compressed buffer shorter than its length prefix");
	ulen = (int64_t) lt_le64(src);
	if (ulen == 0)
	{
		/* Empty: no frame needed. */
		*data = src;
		*dlen = 0;
		return LT_OK;
	}
	if (ulen == -1)
	{
		/* Stored raw: compressing did not help. */
		*data = src + 8;
		*dlen = len - 8;
		return LT_OK;
	}
	/* The caller's bound keeps a forged length from forcing a huge allocation. */
	if (ulen < 0 || (uint64_t) ulen > max_ulen || (uint64_t) ulen > LT_MAX_DECOMPRESSED)
		return arrow_bad(path, err, body + off, "bad uncompressed buffer length");
	*owned = lt_malloc((size_t) ulen);
	if (!*owned)
		return lt_nomem(err);
	if (lt_zstd_decompress_exact(src + 8, len - 8, *owned, (uint64_t) ulen, "arrow buffer", err) != LT_OK)
	{
		lt_free(*owned);
		*owned = NULL;
		return lt_error_prefix(err, "deletion file %s: offset %zu", path, (size_t) (body + off));
	}
	*data = *owned;
	*dlen = (uint64_t) ulen;
	return LT_OK;
}

lt_code
lt_deletion_arrow_values(const uint8_t *buf, size_t len, const char *path, uint64_t max_values,
						 uint32_t **values, uint64_t *n, lt_error *err)
{
	fb_buf		fb;
	fb_table	footer,
				schema,
				msg,
				batch,
				comp;
	int16_t		version;
	int32_t		footer_len;
	size_t		footer_at,
				vstart,
				mstart;
	uint32_t	vcount;
	bool		present,
				compressed = false;
	uint64_t	boff,
				blen,
				end;
	int32_t		meta_len;
	uint32_t	mlen;
	size_t		prefix;
	uint8_t		htype;
	int64_t		rows,
				mbody;
	fb_buf		mb;
	size_t		body;
	const uint8_t *vals;
	uint64_t	vlen;
	uint8_t    *owned;
	uint32_t   *out;

	*values = NULL;
	*n = 0;

	/* "ARROW1" + 2 pad bytes, ..., footer, i32 footer length, "ARROW1". */
	if (len < 8 + 4 + 6 || memcmp(buf, ARROW_MAGIC, 6) != 0)
		return arrow_bad(path, err, 0, "missing ARROW1 magic");
	if (memcmp(buf + len - 6, ARROW_MAGIC, 6) != 0)
		return arrow_bad(path, err, len - 6, "missing trailing ARROW1 magic");
	footer_len = (int32_t) lt_le32(buf + len - 10);
	if (footer_len <= 0 || (size_t) footer_len > len - 10 - 8)
		return arrow_bad(path, err, len - 10, "bad footer length");
	footer_at = len - 10 - (size_t) footer_len;

	fb = (fb_buf) {buf + footer_at, (size_t) footer_len, footer_at, path, err};
	if (fb.len < 4)
		return fb_bad(&fb, 0, "footer too short");
	{
		size_t		root;

		LT_TRY(fb_deref(&fb, 0, &root));
		LT_TRY(fb_table_at(&fb, root, &footer));
	}
	LT_TRY(fb_i16(&footer, 0, 0, &version));
	if (version != ARROW_V4 && version != ARROW_V5)
		return fb_bad(&fb, footer.pos, "unsupported metadata version");
	LT_TRY(fb_subtable(&footer, 1, &schema, &present));
	if (!present)
		return fb_bad(&fb, footer.pos, "footer has no schema");
	LT_TRY(arrow_check_schema(&schema));
	LT_TRY(fb_vector(&footer, 2, 24, &vstart, &vcount));
	if (vcount != 0)
		return fb_bad(&fb, footer.pos, "unexpected dictionary batches");
	LT_TRY(fb_vector(&footer, 3, 24, &vstart, &vcount));
	if (vcount != 1)
		return fb_bad(&fb, footer.pos, "expected exactly one record batch");

	/* Block { i64 offset; i32 metaDataLength; pad; i64 bodyLength } */
	boff = lt_le64(fb.p + vstart);
	meta_len = (int32_t) lt_le32(fb.p + vstart + 8);
	blen = lt_le64(fb.p + vstart + 16);
	if (meta_len < 8 || boff < 8 || boff > footer_at ||
		!lt_add_ok(boff, (uint64_t) meta_len, &end) || !lt_add_ok(end, blen, &end) || end > footer_at)
		return fb_bad(&fb, vstart, "record batch block out of bounds");

	/* Encapsulated message: 0xFFFFFFFF, i32 length (or a bare length, pre-0.15). */
	if (lt_le32(buf + boff) == 0xFFFFFFFFu)
	{
		mlen = lt_le32(buf + boff + 4);
		prefix = 8;
	}
	else
	{
		mlen = lt_le32(buf + boff);
		prefix = 4;
	}
	if (mlen < 4 || mlen > (uint32_t) meta_len - prefix)
		return arrow_bad(path, err, boff, "bad message length");
	mb = (fb_buf) {buf + boff + prefix, mlen, (size_t) boff + prefix, path, err};
	{
		size_t		root;

		LT_TRY(fb_deref(&mb, 0, &root));
		LT_TRY(fb_table_at(&mb, root, &msg));
	}
	LT_TRY(fb_i16(&msg, 0, 0, &version));
	if (version != ARROW_V4 && version != ARROW_V5)
		return fb_bad(&mb, msg.pos, "unsupported message version");
	LT_TRY(fb_u8(&msg, 1, 0, &htype));
	LT_TRY(fb_subtable(&msg, 2, &batch, &present));
	if (htype != ARROW_HDR_RECORDBATCH || !present)
		return fb_bad(&mb, msg.pos, "message is not a record batch");
	LT_TRY(fb_i64(&msg, 3, 0, &mbody));
	if (mbody < 0 || (uint64_t) mbody != blen)
		return fb_bad(&mb, msg.pos, "message body length differs from the footer's");
	body = (size_t) boff + (size_t) meta_len;

	LT_TRY(fb_i64(&batch, 0, 0, &rows));
	if (rows < 0 || (uint64_t) rows > max_values)
		return fb_bad(&mb, batch.pos, "record batch row count out of range");

	/* FieldNode { i64 length; i64 null_count } */
	LT_TRY(fb_vector(&batch, 1, 16, &mstart, &vcount));
	if (vcount != 1)
		return fb_bad(&mb, batch.pos, "expected one field node");
	if ((int64_t) lt_le64(mb.p + mstart) != rows)
		return fb_bad(&mb, mstart, "field node length differs from the batch's");
	if (lt_le64(mb.p + mstart + 8) != 0)
		return fb_bad(&mb, mstart, "null row ids are not allowed");

	LT_TRY(fb_subtable(&batch, 3, &comp, &present));
	if (present)
	{
		uint8_t		codec,
					method;

		LT_TRY(fb_u8(&comp, 0, ARROW_CODEC_LZ4_FRAME, &codec));
		LT_TRY(fb_u8(&comp, 1, 0, &method));
		if (method != 0)
			return fb_bad(&mb, comp.pos, "unknown body compression method");
		if (codec == ARROW_CODEC_LZ4_FRAME)
			return lt_error_set(err, LT_EUNSUPPORTED, "deletion file %s: arrow: LZ4_FRAME body compression is not supported",
								path);
		if (codec != ARROW_CODEC_ZSTD)
			return fb_bad(&mb, comp.pos, "unknown body compression codec");
		compressed = true;
	}

	/* Buffer { i64 offset; i64 length }: validity, then the values. */
	LT_TRY(fb_vector(&batch, 2, 16, &mstart, &vcount));
	if (vcount != 2)
		return fb_bad(&mb, batch.pos, "expected two buffers");
	/* The validity bitmap is ignored (null_count is 0) but must lie in the body. */
	if (!lt_add_ok(lt_le64(mb.p + mstart), lt_le64(mb.p + mstart + 8), &end) || end > blen)
		return fb_bad(&mb, mstart, "buffer outside the message body");
	/* Writers may pad a buffer to 64 bytes; nothing legitimate is larger. */
	LT_TRY(arrow_buffer(buf, body, blen, &mb, mstart, 1, compressed, 4 * (uint64_t) rows + 64, path, err,
						&vals, &vlen, &owned));
	if (vlen / 4 < (uint64_t) rows)
	{
		lt_free(owned);
		return fb_bad(&mb, mstart + 16, "values buffer shorter than the row count");
	}
	out = lt_malloc(rows ? (size_t) rows * sizeof(uint32_t) : 1);
	if (!out)
	{
		lt_free(owned);
		return lt_nomem(err);
	}
	for (int64_t r = 0; r < rows; r++)
		out[r] = lt_le32(vals + 4 * r);
	lt_free(owned);
	*values = out;
	*n = (uint64_t) rows;
	return LT_OK;
}

/* --- deletion vectors ----------------------------------------------------- */

char *
lt_deletion_path(uint64_t fragment_id, uint64_t read_version, uint64_t id, lt_deletion_type type)
{
	return lt_asprintf("_deletions/%" PRIu64 "-%" PRIu64 "-%" PRIu64 ".%s", fragment_id, read_version, id,
					   type == LT_DELETION_BITMAP ? "bin" : "arrow");
}

lt_code
lt_deletion_parse(const uint8_t *buf, size_t len, lt_deletion_type type, uint64_t num_deleted_rows,
				  uint64_t physical_rows, const char *path, lt_deletion_vector **out, lt_error *err)
{
	uint64_t	cap;
	uint32_t   *vals = NULL;
	uint64_t	n = 0;
	lt_deletion_vector *dv;

	*out = NULL;
	if (!path)
		path = "(memory)";
	/* Bound the decoded size by what the manifest says the fragment holds. */
	if (physical_rows)
		cap = physical_rows;
	else if (num_deleted_rows)
		cap = num_deleted_rows;
	else
		cap = LT_DELETION_MAX_UNBOUNDED;
	if (cap > (UINT64_C(1) << 32))
		cap = UINT64_C(1) << 32;

	if (type == LT_DELETION_BITMAP)
	{
		size_t		used;

		if (lt_roaring_decode_array(buf, len, cap, &vals, &n, &used, err) != LT_OK)
			return lt_error_prefix(err, "deletion file %s", path);
		if (used != len)
		{
			lt_free(vals);
			return lt_corrupt(err, "deletion file %s: %zu bytes of trailing data at offset %zu", path,
							  len - used, used);
		}
	}
	else if (type == LT_DELETION_ARROW)
	{
		uint64_t	w = 0;

		LT_TRY(lt_deletion_arrow_values(buf, len, path, cap, &vals, &n, err));
		/* Lance loads these into a set: order and repeats carry no meaning. */
		qsort(vals, n, sizeof(uint32_t), lt_cmp_u32);
		for (uint64_t i = 0; i < n; i++)
			if (w == 0 || vals[i] != vals[w - 1])
				vals[w++] = vals[i];
		n = w;
	}
	else
		return lt_error_set(err, LT_EUNSUPPORTED, "deletion file %s: unknown deletion file type %d", path,
							(int) type);

	if (physical_rows && n > 0 && vals[n - 1] >= physical_rows)
	{
		lt_code		rc = lt_corrupt(err, "deletion file %s: deleted offset %u is past the fragment's %llu rows",
									path, vals[n - 1], (unsigned long long) physical_rows);

		lt_free(vals);
		return rc;
	}
	if (num_deleted_rows && n != num_deleted_rows)
	{
		lt_free(vals);
		return lt_corrupt(err, "deletion file %s: holds %llu deleted rows, the manifest says %llu", path,
						  (unsigned long long) n, (unsigned long long) num_deleted_rows);
	}
	if (!(dv = lt_malloc(sizeof(*dv))))
	{
		lt_free(vals);
		return lt_nomem(err);
	}
	if (n == 0)
	{
		lt_free(vals);
		vals = NULL;
	}
	dv->count = n;
	dv->offsets = vals;
	*out = dv;
	return LT_OK;
}

lt_code
lt_deletion_read(lt_store *store, uint64_t fragment_id, const lt_deletion_file *df,
				 uint64_t physical_rows, lt_deletion_vector **out, lt_error *err)
{
	char	   *path;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	lt_code		rc;

	*out = NULL;
	if (df->type != LT_DELETION_ARROW && df->type != LT_DELETION_BITMAP)
		return lt_error_set(err, LT_EUNSUPPORTED, "fragment %llu: unknown deletion file type %d",
							(unsigned long long) fragment_id, (int) df->type);
	if (!(path = lt_deletion_path(fragment_id, df->read_version, df->id, df->type)))
		return lt_nomem(err);
	rc = lt_store_read_all(store, path, LT_DELETION_MAX_FILE, &buf, &len, err);
	if (rc == LT_OK)
		rc = lt_deletion_parse(buf, (size_t) len, df->type, df->num_deleted_rows, physical_rows, path, out, err);
	lt_free(buf);
	lt_free(path);
	return rc;
}

uint64_t
lt_deletion_rank(const lt_deletion_vector *dv, uint64_t offset)
{
	uint64_t	lo = 0,
				hi = dv ? dv->count : 0;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (dv->offsets[mid] < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool
lt_deletion_contains(const lt_deletion_vector *dv, uint64_t offset)
{
	uint64_t	i;

	if (!dv || offset > UINT32_MAX)
		return false;
	i = lt_deletion_rank(dv, offset);
	return i < dv->count && dv->offsets[i] == offset;
}

uint32_t
lt_deletion_select(const lt_deletion_vector *dv, uint64_t start, uint32_t n, uint32_t *sel)
{
	uint64_t	k = lt_deletion_rank(dv, start);
	uint64_t	count = dv ? dv->count : 0;
	uint32_t	m = 0;

	for (uint32_t i = 0; i < n; i++)
	{
		/* Offsets ascend, so one cursor walks them alongside the rows. */
		if (k < count && dv->offsets[k] == start + i)
			k++;
		else
			sel[m++] = i;
	}
	return m;
}

void
lt_deletion_free(lt_deletion_vector *dv)
{
	if (!dv)
		return;
	lt_free(dv->offsets);
	lt_free(dv);
}
