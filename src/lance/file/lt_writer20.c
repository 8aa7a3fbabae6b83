/*
 * lt_writer20.c — pages of Lance 2.0 data files (footer 0.3).
 *
 * 2.0 files have one column per field in pre-order, parents included, and
 * describe each page with an ArrayEncoding tree (previous/encoder.rs):
 *   fixed width   Nullable{no_nulls | some_nulls{validity bitmap} | all_nulls} of Flat
 *                 (bool: a 1-bit Flat bitmap; no bit-packing in 2.0)
 *   strings       Binary{end offsets (u64), bytes, null_adjustment}; Dictionary of them
 *                 (index 0 = null) for pages of >= 100 rows with < 100 distinct values
 *   fixed lists   Nullable of FixedSizeList{dimension, items}
 *   lists, maps   List{end offsets (u64), null_offset_adjustment, num_items}; items in
 *                 the next column(s)
 *   structs       SimpleStruct (no buffers); children in the next columns.  2.0 cannot
 *                 store a null struct: such a value is refused.
 *   legacy blobs  each non-empty blob's bytes out of line in the file, then a PackedStruct of
 *                 {u64 position, u64 size} per row (NULL: {1, 0}, empty: {0, 0}) in a column whose
 *                 column encoding says Blob (lt_writer.c's put_column), as Lance 8 writes them
 */
#include "file/lt_writer_int.h"

#include "proto/lt_enc20.pb-c.h"

#define PAGE_URL20 "/lance.encodings.ArrayEncoding"
#define DICT_MIN_ROWS 100
#define DICT_MAX_CARD 100

typedef Lt__Enc20__ArrayEncoding ae_t;

typedef struct w20_page
{
	lt_arena	ar;
	int			nbuf;
	lt_wbuf		buf[8];
} w20_page;

static bool
is_list(lt_type_id t)
{
	return t == LT_TYPE_LIST || t == LT_TYPE_LARGE_LIST || t == LT_TYPE_MAP;
}

int
lt_w20_columns(const lt_field *f, int32_t *ids, int cap)
{
	int			n = 1;

	if (ids && cap > 0)
		ids[0] = f->id;
	if (f->type == LT_TYPE_FIXED_LIST)
		return 1;
	for (int i = 0; i < f->n_children; i++)
		n += lt_w20_columns(f->children[i], ids ? ids + n : NULL, cap - n);
	return n;
}

lt_code
lt_w20_check(const lt_field *f, lt_error *err)
{
	if (f->dictionary)
		return lt_error_set(err, LT_EUNSUPPORTED, "writing dictionary-typed field \"%s\" is not supported", f->name);
	if (f->type == LT_TYPE_NULL)
		return lt_error_set(err, LT_EUNSUPPORTED, "writing field \"%s\" of the null type is not supported", f->name);
	if (f->blob != LT_BLOB_NONE && (f->blob != LT_BLOB_LEGACY || f->type != LT_TYPE_LARGE_BINARY || !f->blob_desc))
		return lt_error_set(err, LT_EUNSUPPORTED, "writing %s column \"%s\" in storage 2.0 is not supported",
							lt_blob_form_name(f->blob), f->name);
	if (f->packed)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"writing packed struct \"%s\" (lance-encoding:packed) is not supported", f->name);
	if (f->type == LT_TYPE_MAP)
		return lt_error_set(err, LT_EUNSUPPORTED, "field \"%s\": maps need storage version 2.2 or later", f->name);
	if (f->type == LT_TYPE_FIXED_LIST)
	{
		const lt_field *c = f->n_children == 1 ? f->children[0] : NULL;

		if (!c || lt_type_is_nested(c->type) || lt_type_is_var_width(c->type) || c->byte_width <= 0)
			return lt_error_set(err, LT_EUNSUPPORTED,
								"field \"%s\": fixed-size lists of %s cannot be written to 2.0 files", f->name,
								c ? lt_type_name(c->type) : "nothing");
		return LT_OK;
	}
	if ((f->type == LT_TYPE_STRUCT || is_list(f->type)) && f->n_children == 0)
		return lt_error_set(err, LT_EUNSUPPORTED, "writing field \"%s\": a %s without children", f->name,
							lt_type_name(f->type));
	for (int i = 0; i < f->n_children; i++)
		LT_TRY(lt_w20_check(f->children[i], err));
	return LT_OK;
}

/* ---- encoding nodes ---- */

static ae_t *
ae_new(lt_arena *ar)
{
	ae_t	   *e = lt_arena_alloc(ar, sizeof(ae_t));

	if (e)
		lt__enc20__array_encoding__init(e);
	return e;
}

static Lt__Enc20__Buffer *
page_buffer(lt_arena *ar, int index)
{
	Lt__Enc20__Buffer *b = lt_arena_alloc(ar, sizeof(*b));

	if (b)
	{
		lt__enc20__buffer__init(b);
		b->has_buffer_index = true;
		b->buffer_index = (uint32_t) index;
		b->has_buffer_type = true;
		b->buffer_type = LT__ENC20__BUFFER__KIND__PAGE;
	}
	return b;
}

static ae_t *
ae_flat(lt_arena *ar, uint64_t bits, int buffer)
{
	ae_t	   *e = ae_new(ar);
	Lt__Enc20__Flat *f = lt_arena_alloc(ar, sizeof(*f));

	if (!e || !f)
		return NULL;
	lt__enc20__flat__init(f);
	f->has_bits_per_value = true;
	f->bits_per_value = bits;
	f->buffer = page_buffer(ar, buffer);
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT;
	e->flat = f;
	return e;
}

/* Nullable wrapper: validity (a Flat bitmap in buffer vbuf) when some slots are null. */
static ae_t *
ae_nullable(lt_arena *ar, int64_t nulls, int64_t n, int vbuf, ae_t *values)
{
	ae_t	   *e = ae_new(ar);
	Lt__Enc20__Nullable *nl = lt_arena_alloc(ar, sizeof(*nl));

	if (!e || !nl)
		return NULL;
	lt__enc20__nullable__init(nl);
	if (nulls == 0)
	{
		Lt__Enc20__Nullable__NoNull *nn = lt_arena_alloc(ar, sizeof(*nn));

		if (!nn)
			return NULL;
		lt__enc20__nullable__no_null__init(nn);
		nn->values = values;
		nl->nullability_case = LT__ENC20__NULLABLE__NULLABILITY_NO_NULLS;
		nl->no_nulls = nn;
	}
	else if (nulls == n)
	{
		Lt__Enc20__Nullable__AllNull *an = lt_arena_alloc(ar, sizeof(*an));

		if (!an)
			return NULL;
		lt__enc20__nullable__all_null__init(an);
		nl->nullability_case = LT__ENC20__NULLABLE__NULLABILITY_ALL_NULLS;
		nl->all_nulls = an;
	}
	else
	{
		Lt__Enc20__Nullable__SomeNull *sn = lt_arena_alloc(ar, sizeof(*sn));

		if (!sn)
			return NULL;
		lt__enc20__nullable__some_null__init(sn);
		sn->validity = ae_flat(ar, 1, vbuf);
		sn->values = values;
		nl->nullability_case = LT__ENC20__NULLABLE__NULLABILITY_SOME_NULLS;
		nl->some_nulls = sn;
	}
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE;
	e->nullable = nl;
	return e;
}

static int64_t
count_nulls(const lt_array *a, int64_t s, int64_t n)
{
	int64_t		k = 0;

	if (!a->validity)
		return 0;
	for (int64_t i = s; i < s + n; i++)
		k += !a->validity[i];
	return k;
}

static lt_code
put_bitmap(lt_wbuf *b, const uint8_t *bytes, int64_t n, lt_error *err)
{
	uint64_t	at = b->len;

	LT_TRY(lt_wbuf_fill(b, 0, (uint64_t) (n + 7) / 8, err));
	for (int64_t i = 0; i < n; i++)
		if (bytes[i])
			b->p[at + (uint64_t) i / 8] |= (uint8_t) (1u << (i % 8));
	return LT_OK;
}

static lt_code
put_validity(lt_wbuf *b, const lt_array *a, int64_t s, int64_t n, lt_error *err)
{
	uint64_t	at = b->len;

	LT_TRY(lt_wbuf_fill(b, 0, (uint64_t) (n + 7) / 8, err));
	for (int64_t i = 0; i < n; i++)
		if (lt_array_is_valid(a, s + i))
			b->p[at + (uint64_t) i / 8] |= (uint8_t) (1u << (i % 8));
	return LT_OK;
}

static int
new_buf(w20_page *pg)
{
	return pg->nbuf++;
}

/* Fixed-width slots [s, s+n) of a (not FSL). */
static ae_t *
enc_fixed(w20_page *pg, const lt_array *a, int64_t s, int64_t n, lt_error *err, lt_code *rc)
{
	int64_t		nulls = count_nulls(a, s, n);
	int			vb = -1,
				db;
	int			w = a->field->byte_width;
	bool		bits = a->field->type == LT_TYPE_BOOL;

	if (nulls > 0 && nulls < n)
	{
		vb = new_buf(pg);
		if ((*rc = put_validity(&pg->buf[vb], a, s, n, err)) != LT_OK)
			return NULL;
	}
	if (nulls == n)
		return ae_nullable(&pg->ar, nulls, n, vb, NULL);
	db = new_buf(pg);
	*rc = bits ? put_bitmap(&pg->buf[db], a->values + s, n, err)
		: lt_wbuf_put(&pg->buf[db], a->values + s * w, (uint64_t) (n * w), err);
	if (*rc != LT_OK)
		return NULL;
	return ae_nullable(&pg->ar, nulls, n, vb, ae_flat(&pg->ar, bits ? 1 : (uint64_t) w * 8, db));
}

/* Binary: end offsets (a null slot stores its end + null_adjustment) and the bytes. */
static ae_t *
enc_binary_bufs(w20_page *pg, const lt_array *a, const int64_t *idx, int64_t s, int64_t n, lt_error *err,
				lt_code *rc)
{
	ae_t	   *e = ae_new(&pg->ar);
	Lt__Enc20__Binary *b = lt_arena_alloc(&pg->ar, sizeof(*b));
	int			ob = new_buf(pg),
				bb = new_buf(pg);
	uint64_t	total = 0,
				end = 0;

	if (!e || !b)
	{
		*rc = lt_nomem(err);
		return NULL;
	}
	for (int64_t i = 0; i < n; i++)
	{
		int64_t		k = idx ? idx[i] : s + i;

		if (lt_array_is_valid(a, k))
			total += (uint64_t) (a->offsets[k + 1] - a->offsets[k]);
	}
	for (int64_t i = 0; i < n && *rc == LT_OK; i++)
	{
		int64_t		k = idx ? idx[i] : s + i;

		if (lt_array_is_valid(a, k))
		{
			uint64_t	len = (uint64_t) (a->offsets[k + 1] - a->offsets[k]);

			*rc = lt_wbuf_put(&pg->buf[bb], a->data + a->offsets[k], len, err);
			end += len;
			if (*rc == LT_OK)
				*rc = lt_wbuf_u64(&pg->buf[ob], end, err);
		}
		else
			*rc = lt_wbuf_u64(&pg->buf[ob], end + total + 1, err);
	}
	if (*rc != LT_OK)
		return NULL;
	lt__enc20__binary__init(b);
	b->indices = ae_nullable(&pg->ar, 0, n, -1, ae_flat(&pg->ar, 64, ob));
	b->bytes = ae_flat(&pg->ar, 8, bb);
	b->has_null_adjustment = true;
	b->null_adjustment = total + 1;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BINARY;
	e->binary = b;
	return e;
}

/* Strings of slots [s, s+n): a dictionary when few distinct values repeat, else Binary. */
static ae_t *
enc_strings(w20_page *pg, const lt_array *a, int64_t s, int64_t n, lt_error *err, lt_code *rc)
{
	int64_t		first[DICT_MAX_CARD];
	int			nd = 0;
	uint8_t    *codes = NULL;
	/* the engine's 2.0 dictionary decoder takes 32-bit offsets only: no dictionary for large types */
	bool		dict = n >= DICT_MIN_ROWS && (a->field->type == LT_TYPE_UTF8 || a->field->type == LT_TYPE_BINARY);

	if (dict && !(codes = lt_malloc((size_t) n)))
	{
		*rc = lt_nomem(err);
		return NULL;
	}
	for (int64_t i = 0; dict && i < n; i++)
	{
		int64_t		k = s + i;
		int64_t		len = a->offsets[k + 1] - a->offsets[k];
		int			d;

		if (!lt_array_is_valid(a, k))
		{
			codes[i] = 0;
			continue;
		}
		for (d = 0; d < nd; d++)
		{
			int64_t		j = first[d];

			if (a->offsets[j + 1] - a->offsets[j] == len &&
				memcmp(a->data + a->offsets[j], a->data + a->offsets[k], (size_t) len) == 0)
				break;
		}
		if (d == nd)
		{
			if (nd == DICT_MAX_CARD - 1)
			{
				dict = false;
				break;
			}
			first[nd++] = k;
		}
		codes[i] = (uint8_t) (d + 1);
	}
	if (dict && nd > 0)
	{
		ae_t	   *e = ae_new(&pg->ar);
		Lt__Enc20__Dictionary *dc = lt_arena_alloc(&pg->ar, sizeof(*dc));
		int			ib = new_buf(pg);

		if (!e || !dc || (*rc = lt_wbuf_put(&pg->buf[ib], codes, (uint64_t) n, err)) != LT_OK)
		{
			lt_free(codes);
			if (*rc == LT_OK)
				*rc = lt_nomem(err);
			return NULL;
		}
		lt_free(codes);
		lt__enc20__dictionary__init(dc);
		dc->indices = ae_nullable(&pg->ar, 0, n, -1, ae_flat(&pg->ar, 8, ib));
		dc->items = enc_binary_bufs(pg, a, first, 0, nd, err, rc);
		dc->has_num_dictionary_items = true;
		dc->num_dictionary_items = (uint32_t) nd;
		e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY;
		e->dictionary = dc;
		return *rc == LT_OK ? e : NULL;
	}
	lt_free(codes);
	return enc_binary_bufs(pg, a, NULL, s, n, err, rc);
}

static ae_t *
enc_fsl(w20_page *pg, const lt_array *a, int64_t s, int64_t n, lt_error *err, lt_code *rc)
{
	int64_t		nulls = count_nulls(a, s, n);
	int64_t		dim = a->field->fixed_size;
	int			vb = -1;
	ae_t	   *e = ae_new(&pg->ar);
	Lt__Enc20__FixedSizeList *fl = lt_arena_alloc(&pg->ar, sizeof(*fl));

	if (!e || !fl)
	{
		*rc = lt_nomem(err);
		return NULL;
	}
	if (nulls > 0)
	{
		vb = new_buf(pg);
		if ((*rc = put_validity(&pg->buf[vb], a, s, n, err)) != LT_OK)
			return NULL;
	}
	lt__enc20__fixed_size_list__init(fl);
	fl->has_dimension = true;
	fl->dimension = (uint32_t) dim;
	fl->items = enc_fixed(pg, a->children[0], s * dim, n * dim, err, rc);
	if (*rc != LT_OK)
		return NULL;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST;
	e->fixed_size_list = fl;
	/* an all-null list still keeps its items (so that readers find them) */
	return ae_nullable(&pg->ar, nulls == n ? n - 1 : nulls, n, vb, e);
}

/* A legacy blob column's slots [s, s+n): the bytes out of line now, the descriptors as the page. */
static ae_t *
enc_blob20(lt_file_writer *w, w20_page *pg, const lt_array *a, int64_t s, int64_t n, lt_error *err, lt_code *rc)
{
	int			b = new_buf(pg);
	bool		wrote = false;
	ae_t	   *e = ae_new(&pg->ar);
	Lt__Enc20__PackedStruct *ps = lt_arena_alloc(&pg->ar, sizeof(*ps));
	ae_t	  **inner = lt_arena_alloc(&pg->ar, 2 * sizeof(ae_t *));

	for (int64_t i = s; *rc == LT_OK && i < s + n; i++)
	{
		uint64_t	pos = 0,
					len = 0;

		if (!lt_array_is_valid(a, i))
			pos = 1;			/* Lance 2.0's NULL blob */
		else if ((len = (uint64_t) (a->offsets[i + 1] - a->offsets[i])) > 0)
		{
			*rc = lt_writer_write_blob(w, a->data + a->offsets[i], len, &pos, err);
			wrote = true;
		}
		if (*rc == LT_OK)
			*rc = lt_wbuf_u64(&pg->buf[b], pos, err);
		if (*rc == LT_OK)
			*rc = lt_wbuf_u64(&pg->buf[b], len, err);
	}
	if (*rc == LT_OK && wrote)
		*rc = lt_writer_write_padded(w, (const uint8_t *) "", 0, err);	/* the page starts aligned */
	if (*rc != LT_OK || !e || !ps || !inner)
		return NULL;
	lt__enc20__packed_struct__init(ps);
	for (int k = 0; k < 2; k++)
		inner[k] = ae_nullable(&pg->ar, 0, n, -1, ae_flat(&pg->ar, 64, b));
	ps->n_inner = 2;
	ps->inner = inner;
	ps->buffer = page_buffer(&pg->ar, b);
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT;
	e->packed_struct = ps;
	return e;
}

static lt_code
emit20(lt_file_writer *w, int col, w20_page *pg, ae_t *e, uint64_t rows, lt_error *err)
{
	size_t		len = lt__enc20__array_encoding__get_packed_size(e);
	uint8_t    *enc = lt_malloc(len ? len : 1);
	const uint8_t *bp[8];
	uint64_t	bl[8];
	lt_code		rc;

	if (!enc)
		return lt_nomem(err);
	lt__enc20__array_encoding__pack(e, enc);
	for (int i = 0; i < pg->nbuf; i++)
	{
		bp[i] = pg->buf[i].p ? pg->buf[i].p : (const uint8_t *) "";
		bl[i] = pg->buf[i].len;
	}
	rc = lt_writer_page(w, col, pg->nbuf, bp, bl, PAGE_URL20, enc, len, rows, lt_writer_column_rows(w, col), err);
	lt_free(enc);
	return rc;
}

static void
page_free(w20_page *pg)
{
	for (int i = 0; i < 8; i++)
		lt_wbuf_free(&pg->buf[i]);
	lt_arena_free(&pg->ar);
}

/* Slots [s, s+n) of a (an array of field f) as pages from column *col, children after it. */
static lt_code
encode_node(lt_file_writer *w, const lt_field *f, const lt_array *a, int64_t s, int64_t n, int *col, lt_error *err)
{
	w20_page	pg;
	ae_t	   *e = NULL;
	lt_code		rc = LT_OK;
	int			me = (*col)++;

	memset(&pg, 0, sizeof(pg));
	if (n == 0)
	{
		/* no slots (the items of empty lists): no page, only the columns below are counted */
		if (f->type == LT_TYPE_STRUCT)
			for (int i = 0; i < f->n_children; i++)
				LT_TRY(encode_node(w, f->children[i], a->children[i], 0, 0, col, err));
		else if (is_list(f->type))
			LT_TRY(encode_node(w, f->children[0], a->children[0], 0, 0, col, err));
		return LT_OK;
	}
	if (f->type == LT_TYPE_STRUCT)
	{
		Lt__Enc20__SimpleStruct *ss = lt_arena_alloc(&pg.ar, sizeof(*ss));

		if (count_nulls(a, s, n) > 0)
			rc = lt_error_set(err, LT_EUNSUPPORTED,
							  "field \"%s\": a null struct value cannot be stored in a 2.0 data file", f->name);
		else if (!(e = ae_new(&pg.ar)) || !ss)
			rc = lt_nomem(err);
		else
		{
			lt__enc20__simple_struct__init(ss);
			e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_STRUCT;
			e->struct_ = ss;
		}
	}
	else if (is_list(f->type))
	{
		Lt__Enc20__List *l = lt_arena_alloc(&pg.ar, sizeof(*l));
		int			ob = new_buf(&pg);
		int64_t		base = a->offsets[s],
					items = a->offsets[s + n] - base;

		if (!(e = ae_new(&pg.ar)) || !l)
			rc = lt_nomem(err);
		for (int64_t i = 0; rc == LT_OK && i < n; i++)
		{
			uint64_t	end = (uint64_t) (a->offsets[s + i + 1] - base);

			rc = lt_wbuf_u64(&pg.buf[ob], lt_array_is_valid(a, s + i) ? end : end + (uint64_t) items + 1, err);
		}
		if (rc == LT_OK)
		{
			lt__enc20__list__init(l);
			l->offsets = ae_nullable(&pg.ar, 0, n, -1, ae_flat(&pg.ar, 64, ob));
			l->has_null_offset_adjustment = true;
			l->null_offset_adjustment = (uint64_t) items + 1;
			l->has_num_items = true;
			l->num_items = (uint64_t) items;
			e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST;
			e->list = l;
		}
	}
	else if (f->blob == LT_BLOB_LEGACY)
	{
		e = enc_blob20(w, &pg, a, s, n, err, &rc);
		lt_writer_mark_blob_column(w, me);
	}
	else if (f->type == LT_TYPE_FIXED_LIST)
		e = enc_fsl(&pg, a, s, n, err, &rc);
	else if (lt_type_is_var_width(f->type))
		e = enc_strings(&pg, a, s, n, err, &rc);
	else
		e = enc_fixed(&pg, a, s, n, err, &rc);
	if (rc == LT_OK && (!e || pg.ar.oom))
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = emit20(w, me, &pg, e, (uint64_t) n, err);
	page_free(&pg);
	if (rc != LT_OK)
		return rc;
	if (f->type == LT_TYPE_STRUCT)
	{
		for (int i = 0; i < f->n_children; i++)
			LT_TRY(encode_node(w, f->children[i], a->children[i], s, n, col, err));
	}
	else if (is_list(f->type))
		LT_TRY(encode_node(w, f->children[0], a->children[0], a->offsets[s], a->offsets[s + n] - a->offsets[s], col,
						   err));
	return LT_OK;
}

lt_code
lt_w20_encode(lt_file_writer *w, const lt_field *f, const lt_array *a, int col, uint64_t row0, lt_error *err)
{
	int			c = col;
	lt_code		rc = encode_node(w, f, a, 0, a->length, &c, err);

	(void) row0;
	if (rc != LT_OK)
		return lt_error_prefix(err, "%s: field \"%s\"", lt_writer_path(w), f->name);
	return LT_OK;
}
