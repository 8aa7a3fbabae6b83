/*
 * lt_reader20.c — field readers for Lance 2.0 data files.
 *
 * A 2.0 file has one column per schema field, in pre-order: struct parents
 * (SimpleStruct pages, no buffers), list parents (List pages holding end
 * offsets; the items are the next field's column, whose "rows" are items),
 * and leaves.  Fixed-size lists of primitives are one column.  Each column
 * is a run of pages; a page's encoding is an ArrayEncoding decoded by
 * lt_enc20.c from the page's buffers, which we load whole and keep until the
 * reader moves on to another page of the same column.
 */
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_common.pb-c.h"
#include "encoding/lt_enc20.h"
#include "proto/lt_enc20.pb-c.h"
#include "file/lt_file.h"
#include "proto/lt_file2.pb-c.h"

/* Most bytes one page's buffers may take in memory. */
#define MAX_PAGE_BYTES ((uint64_t) 1 << 31)
/* Deepest field nesting we follow. */
#define MAX_NEST 64

typedef struct r20_extbuf
{
	int			kind;
	uint32_t	index;
	uint8_t    *data;
	uint64_t	len;
} r20_extbuf;

typedef struct r20_col
{
	int32_t		index;			/* file column, -1 when absent */
	Lt__Pb__ColumnMetadata *meta;	/* owned by the lt_file */
	uint32_t	n_pages;
	uint64_t   *first;			/* first row of each page; first[n_pages] = total */
	uint64_t   *items_first;	/* list columns: first item of each page */
	Lt__Enc20__ArrayEncoding **enc;
	/* the loaded page */
	int64_t		loaded;
	uint8_t   **bufs;
	uint64_t   *lens;
	lt_enc20_page pg;
	/* column and file buffers, fetched when an encoding names one */
	int			n_ext;
	r20_extbuf *ext;
	lt_file    *file;
} r20_col;

typedef enum r20_kind
{
	N_NULL,						/* no column: reads as nulls */
	N_LEAF,						/* one column decoded by lt_enc20 (incl. FSL, packed struct) */
	N_STRUCT,					/* children only */
	N_LIST,						/* offsets column + item child */
	N_BINLIST					/* binary stored as list<u8>: offsets + bytes column */
} r20_kind;

typedef struct r20_node
{
	const lt_field *field;
	r20_kind	kind;
	r20_col		col;
	r20_col		bytes;			/* N_BINLIST */
	int			n_children;
	struct r20_node *children;
} r20_node;

typedef struct r20_reader
{
	lt_field_reader base;
	r20_node	root;
} r20_reader;

/* A uint8 item field for binary columns stored as lists of bytes. */
static const lt_field u8_field = {
	.id = -1, .parent_id = -1, .name = "item", .logical_type = "uint8",
	.type = LT_TYPE_UINT8, .nullable = true, .byte_width = 1
};

static lt_code read_node(r20_reader *r, r20_node *node, uint64_t start, uint64_t n, lt_array *dst,
						 lt_error *err);

/* --- columns ------------------------------------------------------------ */

static void
col_unload(r20_col *c)
{
	uint32_t	i;

	if (c->bufs)
		for (i = 0; i < c->pg.n_bufs; i++)
			lt_free(c->bufs[i]);
	lt_free(c->bufs);
	lt_free(c->lens);
	c->bufs = NULL;
	c->lens = NULL;
	lt_enc20_page_reset(&c->pg);
	c->pg.n_bufs = 0;
	c->pg.bufs = NULL;
	c->pg.lens = NULL;
	c->loaded = -1;
}

static void
col_free(r20_col *c)
{
	uint32_t	i;
	int			k;

	col_unload(c);
	if (c->enc)
		for (i = 0; i < c->n_pages; i++)
			if (c->enc[i])
				lt__enc20__array_encoding__free_unpacked(c->enc[i], lt_protobuf_allocator());
	for (k = 0; k < c->n_ext; k++)
		lt_free(c->ext[k].data);
	lt_free(c->ext);
	lt_free(c->enc);
	lt_free(c->first);
	lt_free(c->items_first);
	memset(c, 0, sizeof(*c));
	c->index = -1;
}

/* Fetch a column (kind 1) or file (kind 2) buffer for an encoding that names one. */
static lt_code
col_resolve(void *arg, int kind, uint32_t index, const uint8_t **p, uint64_t *len, lt_error *err)
{
	r20_col    *c = arg;
	lt_file    *f = c->file;
	uint64_t	pos,
				sz,
				end;
	r20_extbuf *e;
	int			k;

	for (k = 0; k < c->n_ext; k++)
		if (c->ext[k].kind == kind && c->ext[k].index == index)
		{
			*p = c->ext[k].data;
			*len = c->ext[k].len;
			return LT_OK;
		}
	if (kind == LT__ENC20__BUFFER__KIND__COLUMN)
	{
		if (index >= c->meta->n_buffer_offsets || index >= c->meta->n_buffer_sizes)
			return lt_corrupt(err, "%s: column %d: column buffer %u does not exist", f->path, c->index, index);
		pos = c->meta->buffer_offsets[index];
		sz = c->meta->buffer_sizes[index];
	}
	else
	{
		if (index >= f->num_global_buffers)
			return lt_corrupt(err, "%s: column %d: global buffer %u does not exist", f->path, c->index, index);
		pos = f->gbo_pos[index];
		sz = f->gbo_len[index];
	}
	if (!lt_add_ok(pos, sz, &end) || end > f->size || sz > MAX_PAGE_BYTES)
		return lt_corrupt(err, "%s: column %d: buffer at %llu of %llu bytes lies outside the file", f->path,
						  c->index, (unsigned long long) pos, (unsigned long long) sz);
	e = lt_realloc(c->ext, (c->n_ext + 1) * sizeof(r20_extbuf));
	if (!e)
		return lt_nomem(err);
	c->ext = e;
	e = &c->ext[c->n_ext];
	e->kind = kind;
	e->index = index;
	e->len = sz;
	e->data = lt_malloc(sz ? sz : 1);
	if (!e->data)
		return lt_nomem(err);
	if (sz)
	{
		lt_range	rg = {pos, sz};
		uint8_t    *d = e->data;
		lt_code		rc = lt_file_read_ranges(f, 1, &rg, &d, err);

		if (rc != LT_OK)
		{
			lt_free(e->data);
			return rc;
		}
	}
	c->n_ext++;
	*p = e->data;
	*len = sz;
	return LT_OK;
}

/* Unpack a page's EncodingRef -> Any -> ArrayEncoding. */
static lt_code
unpack_page_encoding(lt_file *f, int32_t col, uint32_t p, const Lt__Pb__ColumnPage *page,
					 Lt__Enc20__ArrayEncoding **out, lt_error *err)
{
	const Lt__Pb__EncodingRef *ref = page->encoding;
	Lt__Pb__PbAny *any;
	const char *url;
	size_t		ul;

	*out = NULL;
	if (!ref || ref->location_case == LT__PB__ENCODING_REF__LOCATION__NOT_SET ||
		ref->location_case == LT__PB__ENCODING_REF__LOCATION_NONE)
		return lt_corrupt(err, "%s: column %d page %u has no encoding", f->path, col, p);
	if (ref->location_case != LT__PB__ENCODING_REF__LOCATION_DIRECT)
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: column %d page %u: indirect page encodings are not supported",
							f->path, col, p);
	if (!ref->direct || !ref->direct->has_encoding)
		return lt_corrupt(err, "%s: column %d page %u has an empty encoding", f->path, col, p);
	any = lt__pb__pb_any__unpack(lt_protobuf_allocator(), ref->direct->encoding.len, ref->direct->encoding.data);
	if (!any)
		return lt_corrupt(err, "%s: column %d page %u: encoding does not parse", f->path, col, p);
	url = any->type_url ? any->type_url : "";
	ul = strlen(url);
	if (ul < 30 || strcmp(url + ul - 30, "/lance.encodings.ArrayEncoding") != 0)
	{
		lt_code		rc = lt_error_set(err, strstr(url, "encodings21") ? LT_EUNSUPPORTED : LT_ECORRUPT,
									  "%s: column %d page %u: encoding \"%.80s\" is not a 2.0 page encoding",
									  f->path, col, p, url);

		lt__pb__pb_any__free_unpacked(any, lt_protobuf_allocator());
		return rc;
	}
	*out = lt__enc20__array_encoding__unpack(lt_protobuf_allocator(), any->value.len, any->value.data);
	lt__pb__pb_any__free_unpacked(any, lt_protobuf_allocator());
	if (!*out)
		return lt_corrupt(err, "%s: column %d page %u: array encoding does not parse", f->path, col, p);
	return LT_OK;
}

/* Reject column encodings other than plain values (zone maps; blobs but for a blob's descriptor column). */
static lt_code
check_column_encoding(lt_file *f, int32_t col, const Lt__Pb__ColumnMetadata *meta, bool blob_ok, lt_error *err)
{
	const Lt__Pb__EncodingRef *ref = meta->encoding;
	Lt__Pb__PbAny *any;
	Lt__Enc20__ColumnEncoding *ce;
	lt_code		rc = LT_OK;

	if (!ref || ref->location_case != LT__PB__ENCODING_REF__LOCATION_DIRECT || !ref->direct ||
		!ref->direct->has_encoding)
		return LT_OK;
	any = lt__pb__pb_any__unpack(lt_protobuf_allocator(), ref->direct->encoding.len, ref->direct->encoding.data);
	if (!any)
		return lt_corrupt(err, "%s: column %d: column encoding does not parse", f->path, col);
	if (any->type_url && strstr(any->type_url, "ColumnEncoding"))
	{
		ce = lt__enc20__column_encoding__unpack(lt_protobuf_allocator(), any->value.len, any->value.data);
		if (!ce)
			rc = lt_corrupt(err, "%s: column %d: column encoding does not parse", f->path, col);
		else
		{
			if (ce->column_encoding_case == LT__ENC20__COLUMN_ENCODING__COLUMN_ENCODING_ZONE_INDEX ||
				(ce->column_encoding_case == LT__ENC20__COLUMN_ENCODING__COLUMN_ENCODING_BLOB && !blob_ok))
				rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: column %d: %s columns are not supported", f->path,
								  col, ce->column_encoding_case == LT__ENC20__COLUMN_ENCODING__COLUMN_ENCODING_BLOB ?
								  "blob" : "zone-indexed");
			lt__enc20__column_encoding__free_unpacked(ce, lt_protobuf_allocator());
		}
	}
	lt__pb__pb_any__free_unpacked(any, lt_protobuf_allocator());
	return rc;
}

static lt_code
col_init(lt_file *f, r20_col *c, int32_t index, bool blob_ok, lt_error *err)
{
	uint32_t	i;

	memset(c, 0, sizeof(*c));
	c->index = index;
	c->loaded = -1;
	c->file = f;
	if (index < 0)
		return LT_OK;
	LT_TRY(lt_file_column(f, (uint32_t) index, &c->meta, err));
	LT_TRY(check_column_encoding(f, index, c->meta, blob_ok, err));
	if (c->meta->n_pages > LT_ENC20_MAX_PAGE_ROWS)
		return lt_corrupt(err, "%s: column %d has %zu pages", f->path, index, c->meta->n_pages);
	c->n_pages = (uint32_t) c->meta->n_pages;
	c->first = lt_calloc(c->n_pages + 1, sizeof(uint64_t));
	c->enc = lt_calloc(c->n_pages ? c->n_pages : 1, sizeof(Lt__Enc20__ArrayEncoding *));
	if (!c->first || !c->enc)
		return lt_nomem(err);
	for (i = 0; i < c->n_pages; i++)
	{
		const Lt__Pb__ColumnPage *pg = c->meta->pages[i];
		uint64_t	rows = pg->has_length ? pg->length : 0;

		if (rows > LT_ENC20_MAX_PAGE_ROWS || !lt_add_ok(c->first[i], rows, &c->first[i + 1]))
			return lt_corrupt(err, "%s: column %d page %u claims %llu rows", f->path, index, i,
							  (unsigned long long) rows);
		if (pg->n_buffer_offsets != pg->n_buffer_sizes)
			return lt_corrupt(err, "%s: column %d page %u has %zu buffer offsets but %zu sizes", f->path,
							  index, i, pg->n_buffer_offsets, pg->n_buffer_sizes);
		LT_TRY(unpack_page_encoding(f, index, i, pg, &c->enc[i], err));
	}
	return LT_OK;
}

/* Load page p's buffers (all of them; pages are at most a few MiB). */
static lt_code
col_load(r20_reader *r, r20_col *c, uint32_t p, lt_error *err)
{
	lt_file    *f = r->base.file;
	const Lt__Pb__ColumnPage *page;
	uint32_t	nb,
				i;
	uint64_t	total = 0;
	lt_range   *ranges = NULL;
	uint8_t   **dsts = NULL;
	int			nr = 0;
	lt_code		rc = LT_OK;

	if (c->loaded == (int64_t) p)
		return LT_OK;
	col_unload(c);
	page = c->meta->pages[p];
	if (page->n_buffer_offsets > 1024)
		return lt_corrupt(err, "%s: column %d page %u has %zu buffers", f->path, c->index, p,
						  page->n_buffer_offsets);
	nb = (uint32_t) page->n_buffer_offsets;
	c->bufs = lt_calloc(nb ? nb : 1, sizeof(uint8_t *));
	c->lens = lt_calloc(nb ? nb : 1, sizeof(uint64_t));
	ranges = lt_calloc(nb ? nb : 1, sizeof(lt_range));
	dsts = lt_calloc(nb ? nb : 1, sizeof(uint8_t *));
	if (!c->bufs || !c->lens || !ranges || !dsts)
	{
		rc = lt_nomem(err);
		goto done;
	}
	c->pg.n_bufs = nb;
	for (i = 0; i < nb; i++)
	{
		uint64_t	pos = page->buffer_offsets[i];
		uint64_t	sz = page->buffer_sizes[i];
		uint64_t	end;

		if (!lt_add_ok(pos, sz, &end) || end > f->size || !lt_add_ok(total, sz, &total) ||
			total > MAX_PAGE_BYTES)
		{
			rc = lt_corrupt(err, "%s: column %d page %u: buffer %u at %llu of %llu bytes lies outside the file",
							f->path, c->index, p, i, (unsigned long long) pos, (unsigned long long) sz);
			goto done;
		}
		c->lens[i] = sz;
		c->bufs[i] = lt_malloc(sz ? sz : 1);
		if (!c->bufs[i])
		{
			rc = lt_nomem(err);
			goto done;
		}
		if (sz)
		{
			ranges[nr].offset = pos;
			ranges[nr].length = sz;
			dsts[nr++] = c->bufs[i];
		}
	}
	if (nr)
		rc = lt_file_read_ranges(f, nr, ranges, dsts, err);
done:
	lt_free(ranges);
	lt_free(dsts);
	if (rc != LT_OK)
	{
		col_unload(c);
		return rc;
	}
	c->pg.path = f->path;
	c->pg.column = c->index;
	c->pg.page = p;
	c->pg.num_rows = c->first[p + 1] - c->first[p];
	c->pg.bufs = (const uint8_t *const *) c->bufs;
	c->pg.lens = c->lens;
	c->pg.resolve = col_resolve;
	c->pg.resolve_arg = c;
	c->loaded = p;
	r->base.pages_decoded++;
	return LT_OK;
}

/* Page holding row `row` (the first non-empty one at or after it). */
static uint32_t
col_find_page(const r20_col *c, uint64_t row)
{
	uint32_t	lo = 0,
				hi = c->n_pages;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (c->first[mid + 1] <= row)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static lt_code
rows_missing(r20_reader *r, const r20_col *c, const lt_field *field, uint64_t start, uint64_t n, lt_error *err)
{
	return lt_corrupt(err, "%s: column %d (field \"%s\") has %llu rows, but rows [%llu, %llu) are needed",
					  r->base.file->path, c->index, field->name, (unsigned long long) c->first[c->n_pages],
					  (unsigned long long) start, (unsigned long long) (start + n));
}

/* --- reading ------------------------------------------------------------ */

static lt_array *
child_array(lt_array *dst, int i, lt_error *err)
{
	if (i >= dst->n_children)
	{
		lt_error_set(err, LT_EINVALID, "output array for \"%s\" lacks child %d", dst->field->name, i);
		return NULL;
	}
	if (!dst->children[i] && lt_array_new(dst->field->children[i], &dst->children[i], err) != LT_OK)
		return NULL;
	return dst->children[i];
}

static lt_code
read_col(r20_reader *r, r20_col *c, const lt_field *field, uint64_t start, uint64_t n, lt_array *dst,
		 lt_error *err)
{
	uint64_t	end = start + n;
	uint64_t	row = start;

	if (end > c->first[c->n_pages])
		return rows_missing(r, c, field, start, n, err);
	while (row < end)
	{
		uint32_t	p = col_find_page(c, row);
		uint64_t	cnt = c->first[p + 1] - row;

		if (cnt > end - row)
			cnt = end - row;
		LT_TRY(col_load(r, c, p, err));
		LT_TRY(lt_enc20_decode(&c->pg, c->enc[p], field, row - c->first[p], cnt, dst, err));
		row += cnt;
	}
	return LT_OK;
}

/*
 * Lists: each offsets page yields list slots and an item range relative to
 * the page's first item; items of page p start after those of pages < p.
 */
static lt_code
read_list(r20_reader *r, r20_node *node, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	r20_col    *c = &node->col;
	uint64_t	end = start + n;
	uint64_t	row = start;
	lt_array   *items = NULL;
	lt_code		rc = LT_OK;

	if (end > c->first[c->n_pages])
		return rows_missing(r, c, node->field, start, n, err);
	if (node->kind == N_LIST)
	{
		if (!(items = child_array(dst, 0, err)))
			return err ? err->code : LT_ENOMEM;
	}
	else
		LT_TRY(lt_array_new(&u8_field, &items, err));
	while (row < end && rc == LT_OK)
	{
		uint32_t	p = col_find_page(c, row);
		uint64_t	cnt = c->first[p + 1] - row;
		const Lt__Enc20__ArrayEncoding *enc = c->enc[p];
		uint64_t	lo,
					hi,
					ilo,
					before = (uint64_t) items->length;

		if (cnt > end - row)
			cnt = end - row;
		if ((rc = col_load(r, c, p, err)) != LT_OK)
			break;
		if (enc->array_encoding_case != LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST)
		{
			rc = lt_corrupt(err, "%s: column %d page %u of list field \"%s\" is not a list page (encoding %d)",
							r->base.file->path, c->index, p, node->field->name, (int) enc->array_encoding_case);
			break;
		}
		if ((rc = lt_enc20_list_offsets(&c->pg, enc->list, row - c->first[p], cnt, dst, &lo, &hi, err)) != LT_OK)
			break;
		if (hi > lo)
		{
			if (!lt_add_ok(c->items_first[p], lo, &ilo))
			{
				rc = lt_corrupt(err, "%s: column %d: item positions overflow", r->base.file->path, c->index);
				break;
			}
			if (node->kind == N_LIST)
				rc = read_node(r, &node->children[0], ilo, hi - lo, items, err);
			else
				rc = read_col(r, &node->bytes, &u8_field, ilo, hi - lo, items, err);
			if (rc == LT_OK && (uint64_t) items->length - before != hi - lo)
				rc = lt_corrupt(err, "%s: column %d: list items decoded to %llu values, expected %llu",
								r->base.file->path, c->index,
								(unsigned long long) ((uint64_t) items->length - before),
								(unsigned long long) (hi - lo));
		}
		row += cnt;
	}
	if (node->kind == N_BINLIST)
	{
		/* the list offsets already index dst's bytes; append the bytes themselves */
		if (rc == LT_OK)
			rc = lt_array_reserve_data(dst, items->length, err);
		if (rc == LT_OK && items->length)
		{
			memcpy(dst->data + dst->data_len, items->values, (size_t) items->length);
			dst->data_len += items->length;
		}
		lt_array_free(items);
	}
	return rc;
}

static lt_code
read_struct(r20_reader *r, r20_node *node, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	int			i;

	for (i = 0; i < node->n_children; i++)
	{
		lt_array   *c = child_array(dst, i, err);

		if (!c)
			return err ? err->code : LT_ENOMEM;
		LT_TRY(read_node(r, &node->children[i], start, n, c, err));
	}
	/* 2.0 has no struct validity: a null struct reads as a struct of nulls */
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	if (dst->validity)
		memset(dst->validity + dst->length, 1, (size_t) n);
	dst->length += (int64_t) n;
	return LT_OK;
}

static lt_code
read_node(r20_reader *r, r20_node *node, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	switch (node->kind)
	{
		case N_NULL:
			return lt_array_append_nulls(dst, (int64_t) n, err);
		case N_LEAF:
			return read_col(r, &node->col, node->field, start, n, dst, err);
		case N_STRUCT:
			return read_struct(r, node, start, n, dst, err);
		case N_LIST:
		case N_BINLIST:
			return read_list(r, node, start, n, dst, err);
	}
	return lt_error_set(err, LT_EINVALID, "bad reader node");
}

/* --- opening ------------------------------------------------------------ */

/* The column of field in this file: from the data file's map, else pre-order in the file schema. */
static int32_t
column_of(lt_file *f, const lt_column_map *map, const lt_field *field)
{
	int			i,
				k = 0;

	if (field->id < 0)
		return -1;
	if (map)
		return lt_column_map_find(map, field->id);
	if (!f->file_schema)
		return -1;
	for (i = 0; i < f->file_schema->n_all; i++)
	{
		const lt_field *x = f->file_schema->all[i];

		if (x->id < 0)
			continue;
		if (x->id == field->id)
			return k;
		k++;
	}
	return -1;
}

static void
node_free(r20_node *node)
{
	int			i;

	for (i = 0; i < node->n_children; i++)
		node_free(&node->children[i]);
	lt_free(node->children);
	col_free(&node->col);
	col_free(&node->bytes);
}

static lt_code
node_init(lt_file *f, const lt_column_map *map, const lt_field *field, r20_node *node, int depth,
		  lt_error *err)
{
	int32_t		col = column_of(f, map, field);
	int			i;

	memset(node, 0, sizeof(*node));
	node->field = field;
	node->col.index = -1;
	node->bytes.index = -1;
	node->kind = N_NULL;
	if (depth > MAX_NEST)
		return lt_corrupt(err, "%s: field \"%s\" is nested too deeply", f->path, field->name);
	if (col >= 0 && (uint32_t) col >= f->num_columns)
		return lt_corrupt(err, "%s: field \"%s\" maps to column %d, but the file has %u", f->path,
						  field->name, col, f->num_columns);
	if (col < 0)
		return LT_OK;
	/* a blob's descriptors (field->blob on lt_field_storage's struct) sit in a blob-encoded column */
	LT_TRY(col_init(f, &node->col, col, field->blob != LT_BLOB_NONE && field->packed, err));

	switch (field->type)
	{
		case LT_TYPE_STRUCT:
			if (node->col.n_pages > 0 && node->col.enc[0]->array_encoding_case ==
				LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT)
			{
				node->kind = N_LEAF;
				return LT_OK;
			}
			node->kind = N_STRUCT;
			node->children = lt_calloc(field->n_children ? field->n_children : 1, sizeof(r20_node));
			if (!node->children)
				return lt_nomem(err);
			node->n_children = field->n_children;
			for (i = 0; i < field->n_children; i++)
				LT_TRY(node_init(f, map, field->children[i], &node->children[i], depth + 1, err));
			return LT_OK;

		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_MAP:
			node->kind = N_LIST;
			node->children = lt_calloc(1, sizeof(r20_node));
			if (!node->children)
				return lt_nomem(err);
			node->n_children = 1;
			LT_TRY(node_init(f, map, field->children[0], &node->children[0], depth + 1, err));
			break;

		case LT_TYPE_FIXED_LIST:
			if (field->n_children != 1 || lt_type_is_nested(field->children[0]->type) ||
				lt_type_is_var_width(field->children[0]->type))
				return lt_error_set(err, LT_EUNSUPPORTED, "%s: field \"%s\": fixed-size lists of %s are not supported in 2.0 files",
									f->path, field->name,
									field->n_children ? lt_type_name(field->children[0]->type) : "nothing");
			node->kind = N_LEAF;
			return LT_OK;

		default:
			node->kind = N_LEAF;
			/* old 2.0 writers stored strings as list<u8>: offsets here, bytes in the next column */
			if (lt_type_is_var_width(field->type) && node->col.n_pages > 0 &&
				node->col.enc[0]->array_encoding_case == LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST)
			{
				if ((uint32_t) col + 1 >= f->num_columns)
					return lt_corrupt(err, "%s: field \"%s\": list-encoded bytes column %d is missing",
									  f->path, field->name, col + 1);
				node->kind = N_BINLIST;
				LT_TRY(col_init(f, &node->bytes, col + 1, false, err));
				break;
			}
			return LT_OK;
	}

	/* list-shaped columns: where each page's items start */
	node->col.items_first = lt_calloc(node->col.n_pages + 1, sizeof(uint64_t));
	if (!node->col.items_first)
		return lt_nomem(err);
	for (i = 0; (uint32_t) i < node->col.n_pages; i++)
	{
		const Lt__Enc20__ArrayEncoding *enc = node->col.enc[i];
		uint64_t	k = 0;

		if (enc->array_encoding_case == LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST)
			k = enc->list->has_num_items ? enc->list->num_items : 0;
		else if (node->col.first[i + 1] > node->col.first[i])
			return lt_corrupt(err, "%s: column %d page %d of list field \"%s\" is not a list page",
							  f->path, col, i, field->name);
		if (!lt_add_ok(node->col.items_first[i], k, &node->col.items_first[i + 1]))
			return lt_corrupt(err, "%s: column %d: item counts overflow", f->path, col);
	}
	return LT_OK;
}

static lt_code
r20_read(lt_field_reader *base, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	r20_reader *r = (r20_reader *) base;
	lt_code		rc;

	if (dst->field->type != base->field->type)
		return lt_error_set(err, LT_EINVALID, "field \"%s\": output array has type %s, expected %s",
							base->field->name, lt_type_name(dst->field->type), lt_type_name(base->field->type));
	rc = read_node(r, &r->root, start, n, dst, err);
	if (rc != LT_OK && err && !strstr(err->msg, base->field->name))
		lt_error_prefix(err, "field \"%s\"", base->field->name);
	return rc;
}

static void
r20_free(lt_field_reader *base)
{
	r20_reader *r = (r20_reader *) base;

	node_free(&r->root);
	lt_free(r);
}

static const lt_field_reader_ops r20_ops = {r20_read, r20_free};

lt_code
lt_reader20_open(lt_file *f, const lt_field *field, const lt_column_map *map,
				 lt_field_reader **out, lt_error *err)
{
	r20_reader *r;
	lt_code		rc;

	*out = NULL;
	if (f->version != LT_FILE_V2_0)
		return lt_error_set(err, LT_EINVALID, "%s: not a 2.0 file", f->path);
	r = lt_calloc(1, sizeof(r20_reader));
	if (!r)
		return lt_nomem(err);
	r->base.ops = &r20_ops;
	r->base.file = f;
	r->base.field = field;
	r->base.num_rows = f->num_rows;
	rc = node_init(f, map, field, &r->root, 0, err);
	if (rc != LT_OK)
	{
		node_free(&r->root);
		lt_free(r);
		return rc;
	}
	*out = &r->base;
	return LT_OK;
}
