/*
 * lt_deletion_write.c — writing deletion files as Lance does: an Arrow IPC
 * file with one `row_id: uint32 not null` batch up to 5000 offsets, a
 * portable 32-bit roaring bitmap above.
 *
 * The IPC file is built with a small back-to-front flatbuffers builder (the
 * way flatbuffers are meant to be built: children first, every offset points
 * forward).  Bodies are stored uncompressed, which arrow-rs accepts.
 */
#include "table/lt_deletion.h"

#include <roaring/roaring.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "util/lt_random.h"
#include "table/lt_rowids.h"

/* Lance's BITMAP_THRESDHOLD: more deleted rows than this go to a roaring bitmap. */
#define LT_DELETION_ARROW_MAX 5000

/* --- back-to-front flatbuffers builder ------------------------------------- */

/*
 * Bytes live at buf[cap - len, cap).  Objects are named by their distance from
 * the end ("ref"); a uoffset stored at ref p pointing at ref q is p - q.  The
 * finished buffer is a multiple of 8 bytes, so alignment from the end is
 * alignment from the start.
 */
typedef struct fbb
{
	uint8_t    *buf;
	size_t		cap;
	size_t		len;
	bool		oom;
} fbb;

typedef uint32_t fb_ref;

static uint8_t *
fbb_room(fbb *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (!b->buf || b->cap - b->len < n)
	{
		size_t		cap = b->cap ? b->cap * 2 : 256;
		uint8_t    *p;

		while (cap - b->len < n)
			cap *= 2;
		if (!(p = lt_malloc(cap)))
		{
			b->oom = true;
			return NULL;
		}
		if (b->len)
			memcpy(p + cap - b->len, b->buf + b->cap - b->len, b->len);
		lt_free(b->buf);
		b->buf = p;
		b->cap = cap;
	}
	b->len += n;
	return b->buf + b->cap - b->len;
}

/* Pad so that an object of `size` bytes prepended next starts `align`-aligned. */
static void
fbb_prep(fbb *b, size_t align, size_t size)
{
	size_t		pad = (align - ((b->len + size) % align)) % align;
	uint8_t    *p = pad ? fbb_room(b, pad) : NULL;

	if (p)
		memset(p, 0, pad);
}

static fb_ref
fbb_bytes(fbb *b, const void *src, size_t n)
{
	uint8_t    *p = n ? fbb_room(b, n) : NULL;

	if (p)
		memcpy(p, src, n);
	return (fb_ref) b->len;
}

static fb_ref
fbb_u32(fbb *b, uint32_t v)
{
	uint8_t		le[4];

	lt_put32(le, v);
	fbb_prep(b, 4, 4);
	return fbb_bytes(b, le, 4);
}

/* A uoffset to `target`, prepended now. */
static fb_ref
fbb_uoffset(fbb *b, fb_ref target)
{
	fbb_prep(b, 4, 4);
	return fbb_u32(b, (uint32_t) (b->len + 4 - target));
}

static fb_ref
fbb_string(fbb *b, const char *s)
{
	size_t		n = strlen(s);

	fbb_prep(b, 4, n + 1);
	fbb_bytes(b, "", 1);
	fbb_bytes(b, s, n);
	return fbb_u32(b, (uint32_t) n);
}

/* A vector of n structs of esize bytes each (already little-endian), alignment align. */
static fb_ref
fbb_struct_vector(fbb *b, const void *elems, uint32_t n, size_t esize, size_t align)
{
	fbb_prep(b, align < 4 ? 4 : align, n * esize);
	fbb_bytes(b, elems, n * esize);
	return fbb_u32(b, n);
}

/* A vector of n tables. */
static fb_ref
fbb_table_vector(fbb *b, const fb_ref *tables, uint32_t n)
{
	fbb_prep(b, 4, n * 4);
	for (uint32_t i = n; i-- > 0;)
		fbb_uoffset(b, tables[i]);
	return fbb_u32(b, n);
}

/* One table field: a scalar of `size` bytes (1, 2, 4, 8), or a uoffset (size 0, off set), or absent. */
typedef struct fb_fld
{
	uint8_t		size;
	bool		is_off;
	uint64_t	v;				/* scalar value, or the target ref */
} fb_fld;

#define FB_ABSENT		{0, false, 0}
#define FB_SCALAR(n, x)	{(n), false, (uint64_t) (x)}
#define FB_OFF(r)		{4, true, (r)}

static fb_ref
fbb_table(fbb *b, int n, const fb_fld *f)
{
	size_t		at[16];
	size_t		start = b->len;
	fb_ref		table;
	uint8_t		le[8];

	for (int i = n - 1; i >= 0; i--)
	{
		at[i] = 0;
		if (f[i].size == 0)
			continue;
		if (f[i].is_off)
			fbb_uoffset(b, (fb_ref) f[i].v);
		else
		{
			lt_put64(le, f[i].v);	/* little-endian: the low bytes first */
			fbb_prep(b, f[i].size, f[i].size);
			fbb_bytes(b, le, f[i].size);
		}
		at[i] = b->len;			/* the field's ref */
	}
	fbb_prep(b, 4, 4);
	table = fbb_bytes(b, "\0\0\0\0", 4);
	/* vtable: size, table size, field offsets from the table start */
	{
		uint8_t		vt[4 + 2 * 16];
		size_t		vtlen = 4 + 2 * (size_t) n;

		lt_put16(vt, (uint16_t) vtlen);
		lt_put16(vt + 2, (uint16_t) (table - start));
		for (int i = 0; i < n; i++)
			lt_put16(vt + 4 + 2 * i, at[i] ? (uint16_t) (table - at[i]) : 0);
		fbb_prep(b, 2, vtlen);
		fbb_bytes(b, vt, vtlen);
	}
	/* the table's soffset: table position minus vtable position */
	if (!b->oom)
		lt_put32(b->buf + b->cap - table, (uint32_t) (int32_t) (b->len - table));
	return table;
}

/* Finish with the root offset; the result is 8-aligned in size.  Returns the bytes (at b->buf + cap - len). */
static const uint8_t *
fbb_finish(fbb *b, fb_ref root)
{
	fbb_prep(b, 8, 4);
	fbb_uoffset(b, root);
	return b->oom ? NULL : b->buf + b->cap - b->len;
}

/* --- the Arrow IPC file ---------------------------------------------------- */

enum
{
	ARROW_V5 = 4,				/* MetadataVersion */
	HDR_SCHEMA = 1,				/* MessageHeader union */
	HDR_RECORD_BATCH = 3,
	TYPE_INT = 2				/* Type union */
};

/* Schema { fields: [Field { name: "row_id", nullable: false, type: Int { 32, unsigned }, children: [] }] } */
static fb_ref
build_schema(fbb *b)
{
	fb_fld		int_f[] = {FB_SCALAR(4, 32), FB_SCALAR(1, 0)};
	fb_ref		int_t = fbb_table(b, 2, int_f);
	fb_ref		children = fbb_table_vector(b, NULL, 0);
	fb_ref		name = fbb_string(b, "row_id");
	fb_fld		field_f[] = {FB_OFF(name), FB_SCALAR(1, 0), FB_SCALAR(1, TYPE_INT), FB_OFF(int_t), FB_ABSENT,
	FB_OFF(children)};
	fb_ref		field = fbb_table(b, 6, field_f);
	fb_ref		fields = fbb_table_vector(b, &field, 1);
	fb_fld		schema_f[] = {FB_SCALAR(2, 0), FB_OFF(fields)};

	return fbb_table(b, 2, schema_f);
}

static fb_ref
build_message(fbb *b, int header_type, fb_ref header, uint64_t body_len)
{
	fb_fld		msg_f[] = {FB_SCALAR(2, ARROW_V5), FB_SCALAR(1, header_type), FB_OFF(header), FB_SCALAR(8, body_len)};

	return fbb_table(b, 4, msg_f);
}

typedef struct out_buf
{
	uint8_t    *p;
	size_t		len, cap;
	bool		oom;
} out_buf;

static void
out_put(out_buf *o, const void *src, size_t n)
{
	if (o->oom)
		return;
	if (o->cap - o->len < n)
	{
		size_t		cap = o->cap ? o->cap : 1024;
		uint8_t    *p;

		while (cap - o->len < n)
			cap *= 2;
		if (!(p = lt_realloc(o->p, cap)))
		{
			o->oom = true;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	if (src)
		memcpy(o->p + o->len, src, n);
	else
		memset(o->p + o->len, 0, n);
	o->len += n;
}

/* An encapsulated message: continuation, metadata length, flatbuffer (8-aligned). */
static void
out_message(out_buf *o, fbb *b, fb_ref root)
{
	const uint8_t *fb = fbb_finish(b, root);
	uint8_t		hdr[8];

	if (!fb)
	{
		o->oom = true;
		return;
	}
	lt_put32(hdr, 0xFFFFFFFFu);
	lt_put32(hdr + 4, (uint32_t) b->len);
	out_put(o, hdr, 8);
	out_put(o, fb, b->len);
}

static lt_code
arrow_file(const uint32_t *offsets, uint64_t n, uint8_t **out, size_t *out_len, lt_error *err)
{
	out_buf		o = {0};
	fbb			b = {0};
	uint64_t	values_len = n * 4;
	uint64_t	body_len = (values_len + 7) & ~(uint64_t) 7;
	uint64_t	schema_at, batch_at, batch_meta;
	uint8_t		w[24];

	out_put(&o, "ARROW1\0\0", 8);

	schema_at = o.len;
	out_message(&o, &b, build_message(&b, HDR_SCHEMA, build_schema(&b), 0));
	b.len = 0;

	/* RecordBatch { length: n, nodes: [{n, 0}], buffers: [validity {0, 0}, values {0, 4n}] } */
	batch_at = o.len;
	{
		uint8_t		node[16], bufs[32];
		fb_ref		nodes, buffers, rb;

		lt_put64(node, n);
		lt_put64(node + 8, 0);
		memset(bufs, 0, sizeof(bufs));
		lt_put64(bufs + 24, values_len);
		buffers = fbb_struct_vector(&b, bufs, 2, 16, 8);
		nodes = fbb_struct_vector(&b, node, 1, 16, 8);
		{
			fb_fld		rb_f[] = {FB_SCALAR(8, n), FB_OFF(nodes), FB_OFF(buffers)};

			rb = fbb_table(&b, 3, rb_f);
		}
		out_message(&o, &b, build_message(&b, HDR_RECORD_BATCH, rb, body_len));
		batch_meta = o.len - batch_at;
		b.len = 0;
	}
	for (uint64_t i = 0; i < n; i++)
	{
		lt_put32(w, offsets[i]);
		out_put(&o, w, 4);
	}
	out_put(&o, NULL, body_len - values_len);

	/* end of stream, then the footer */
	lt_put32(w, 0xFFFFFFFFu);
	lt_put32(w + 4, 0);
	out_put(&o, w, 8);
	{
		uint64_t	footer_at = o.len;
		uint8_t		block[24];
		fb_ref		schema, batches, dicts, footer;
		const uint8_t *fb;

		lt_put64(block, batch_at);
		lt_put32(block + 8, (uint32_t) batch_meta);
		lt_put32(block + 12, 0);
		lt_put64(block + 16, body_len);
		batches = fbb_struct_vector(&b, block, 1, 24, 8);
		dicts = fbb_struct_vector(&b, NULL, 0, 24, 8);
		schema = build_schema(&b);
		{
			fb_fld		footer_f[] = {FB_SCALAR(2, ARROW_V5), FB_OFF(schema), FB_OFF(dicts), FB_OFF(batches)};

			footer = fbb_table(&b, 4, footer_f);
		}
		fb = fbb_finish(&b, footer);
		if (fb)
			out_put(&o, fb, b.len);
		else
			o.oom = true;
		lt_put32(w, (uint32_t) (o.len - footer_at));
		out_put(&o, w, 4);
		out_put(&o, "ARROW1", 6);
	}
	(void) schema_at;
	lt_free(b.buf);
	if (o.oom)
	{
		lt_free(o.p);
		return lt_nomem(err);
	}
	*out = o.p;
	*out_len = o.len;
	return LT_OK;
}

static lt_code
roaring_file(const uint32_t *offsets, uint64_t n, uint8_t **out, size_t *out_len, lt_error *err)
{
	roaring_bitmap_t *r = roaring_bitmap_of_ptr((size_t) n, offsets);
	size_t		size;
	uint8_t    *buf;

	if (!r)
		return lt_nomem(err);
	roaring_bitmap_run_optimize(r);
	size = roaring_bitmap_portable_size_in_bytes(r);
	if (!(buf = lt_malloc(size ? size : 1)))
	{
		roaring_bitmap_free(r);
		return lt_nomem(err);
	}
	*out_len = roaring_bitmap_portable_serialize(r, (char *) buf);
	roaring_bitmap_free(r);
	*out = buf;
	return LT_OK;
}

lt_code
lt_deletion_write(lt_store *store, const char *prefix, uint64_t fragment_id, uint64_t read_version,
				  const uint32_t *offsets, uint64_t n, lt_deletion_file *df, lt_error *err)
{
	lt_deletion_type type = n <= LT_DELETION_ARROW_MAX ? LT_DELETION_ARROW : LT_DELETION_BITMAP;
	uint8_t    *buf = NULL;
	size_t		len = 0;
	lt_code		rc;

	if (n == 0 || n > LT_MAX_FRAGMENT_ROWS)
		return lt_error_set(err, LT_EINVALID, "a deletion file of fragment %llu needs 1 to 2^32 offsets, not %llu",
							(unsigned long long) fragment_id, (unsigned long long) n);
	for (uint64_t i = 1; i < n; i++)
		if (offsets[i] <= offsets[i - 1])
			return lt_error_set(err, LT_EINVALID, "deleted offsets of fragment %llu must ascend without duplicates",
								(unsigned long long) fragment_id);
	rc = type == LT_DELETION_ARROW ? arrow_file(offsets, n, &buf, &len, err) : roaring_file(offsets, n, &buf, &len, err);
	/* a fresh random id; a collision with an existing file just draws another */
	for (int tries = 0; rc == LT_OK; tries++)
	{
		uint64_t	id = lt_random_u64();
		char	   *rel = lt_deletion_path(fragment_id, read_version, id, type);
		size_t		plen = strlen(prefix);
		char	   *path = rel ? lt_asprintf("%s%s%s", prefix, (plen && prefix[plen - 1] != '/') ? "/" : "", rel) : NULL;

		lt_free(rel);
		if (!path)
		{
			rc = lt_nomem(err);
			break;
		}
		rc = lt_store_put_if_absent(store, path, buf, len, err);
		lt_free(path);
		if (rc == LT_ECONFLICT && tries < 3)
		{
			rc = LT_OK;
			continue;
		}
		if (rc == LT_OK)
		{
			df->type = type;
			df->read_version = read_version;
			df->id = id;
			df->num_deleted_rows = n;
		}
		break;
	}
	lt_free(buf);
	return rc;
}
