/*
 * lt_page21.c — decoding one 2.1+ page: layout dispatch and ConstantLayout
 * (all-null pages and 2.2 constants); lt_dict21.c resolves dictionaries.
 */
#include "encoding/lt_enc21.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_enc21.pb-c.h"

void
lt21_page_free(lt21_page *pg)
{
	if (!pg)
		return;
	lt_free(pg->rep_store.v);
	lt_free(pg->def_store.v);
	lt_array_free(pg->values);
	lt_free(pg->dict_idx);
	lt_array_free(pg->dict);
	lt_free(pg->row_store);
	lt_free(pg->chunk_store);
	lt_free(pg->win_mb);
	lt_free(pg->win_fz);
	lt_free(pg->fsst_cache);
	lt_free(pg);
}

/* Empty a page for the next one, keeping its buffers. */
static void
page_reset(lt21_page *pg)
{
	pg->num_rows = pg->num_levels = 0;
	pg->rep = pg->def = NULL;
	pg->rep_store.n = pg->def_store.n = 0;
	pg->row_level = pg->row_item = NULL;
	lt_array_clear(pg->values);
	pg->n_dict_idx = 0;
	lt_array_free(pg->dict);
	pg->dict = NULL;
	pg->lazy_mb = NULL;
	pg->lazy_data = NULL;
	pg->lazy_items = pg->n_chunks = 0;
	pg->scratch_chunk = -1;
	pg->win_head = pg->win_tail = pg->win_open = false;
	pg->fsst_shared = NULL;
}

static lt_code
set_layers(const lt21_where *w, lt21_page *pg, const Lt__Enc21__RepDefLayer *layers, size_t n,
		   lt_error *err)
{
	int			tmp[LT21_MAX_LAYERS];

	if (n == 0 || n > LT21_MAX_LAYERS)
		return LT21_CORRUPT(w, err, "page has %zu rep/def layers", n);
	for (size_t i = 0; i < n; i++)
	{
		if ((int) layers[i] < LT21_ALL_VALID_ITEM || (int) layers[i] > LT21_NULL_AND_EMPTY_LIST)
			return LT21_CORRUPT(w, err, "unknown rep/def layer %d", (int) layers[i]);
		tmp[i] = (int) layers[i];
	}
	if (lt21_layer_is_list(tmp[0]))
		return LT21_CORRUPT(w, err, "innermost rep/def layer is a list");
	lt21_page_set_layers(pg, tmp, (int) n);
	return LT_OK;
}

/* Levels of a constant page into lv; an empty buffer means "none" (*out NULL). */
static lt_code
raw_levels(const lt21_where *w, const Lt__Enc21__CompressiveEncoding *enc, uint64_t n_expected,
		   bool has_n, const uint8_t *p, uint64_t len, lt21_levels *lv, uint16_t **out,
		   const char *what, lt_error *err)
{
	*out = NULL;
	if (len == 0)
		return LT_OK;
	if (enc)
	{
		if (!has_n || n_expected > len * 1024 + 1024)
			return LT21_CORRUPT(w, err, "%s levels without a plausible count", what);
		LT_TRY(lt21_decode_levels(w, enc, p, len, n_expected, lv, what, err));
	}
	else
	{
		if (len % 2 != 0)
			return LT21_CORRUPT(w, err, "%s levels of %llu bytes", what, (unsigned long long) len);
		LT_TRY(lt21_levels_reserve(lv, len / 2, err));
		memcpy(lv->v, p, len);
		lv->n = len / 2;
	}
	*out = lv->v;
	return LT_OK;
}

/* Decode a constant's scalar into a one-slot array of the leaf's type. */
static lt_code
constant_scalar(const lt21_where *w, const lt_field *leaf, const uint8_t *p, uint64_t len, bool inline_value,
				lt_array *one, lt_error *err)
{
	int			width = lt21_leaf_width(leaf);

	if (!inline_value)
	{
		/* u32 buffer count, u32 lengths, then the Arrow buffers of one value */
		lt_cursor	c = lt_cursor_make(p, len);
		uint32_t	nb = 0,
					lens[4];
		const uint8_t *b[4];

		if (!lt_cursor_u32(&c, &nb) || nb < 1 || nb > 4)
			return LT21_CORRUPT(w, err, "constant value buffer with %u buffers", nb);
		for (uint32_t i = 0; i < nb; i++)
			if (!lt_cursor_u32(&c, &lens[i]))
				return LT21_CORRUPT(w, err, "constant value buffer truncated");
		for (uint32_t i = 0; i < nb; i++)
			if (!lt_cursor_take(&c, lens[i], &b[i]))
				return LT21_CORRUPT(w, err, "constant value buffer truncated");
		if (lt_type_is_var_width(leaf->type))
		{
			uint64_t	o0,
						o1;

			if (nb != 2 || (lens[0] != 8 && lens[0] != 16))
				return LT21_CORRUPT(w, err, "constant string with %u buffers", nb);
			o0 = lens[0] == 8 ? lt_le32(b[0]) : lt_le64(b[0]);
			o1 = lens[0] == 8 ? lt_le32(b[0] + 4) : lt_le64(b[0] + 8);
			if (o0 > o1 || o1 > lens[1])
				return LT21_CORRUPT(w, err, "constant string offsets %llu..%llu in %u bytes",
									(unsigned long long) o0, (unsigned long long) o1, lens[1]);
			LT_TRY(lt_array_reserve(one, 1, err));
			LT_TRY(lt_array_reserve_data(one, (int64_t) (o1 - o0), err));
			memcpy(one->data, b[1] + o0, o1 - o0);
			one->data_len = (int64_t) (o1 - o0);
			one->offsets[1] = one->data_len;
			one->length = 1;
			return LT_OK;
		}
		p = b[0];
		len = lens[0];
	}
	if (width == 0)
		return LT21_UNSUPPORTED(w, err, "constant pages of type %s", lt_type_name(leaf->type));
	LT_TRY(lt_array_reserve(one, 1, err));
	if (leaf->type == LT_TYPE_BOOL)
	{
		if (len < 1)
			return LT21_CORRUPT(w, err, "empty constant bool");
		one->values[0] = p[0] & 1;
	}
	else if (len != (uint64_t) width)
		return LT21_CORRUPT(w, err, "constant of %llu bytes for a %d-byte type", (unsigned long long) len, width);
	else
		memcpy(one->values, p, width);
	one->length = 1;
	return LT_OK;
}

static uint64_t
count_visible(const lt21_page *pg)
{
	uint64_t	n = 0;

	if (!pg->def)
		return pg->num_levels;
	for (uint64_t i = 0; i < pg->num_levels; i++)
		n += pg->def[i] <= pg->max_visible;
	return n;
}

static lt_code
constant_decode(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__ConstantLayout *cl,
				const lt21_bufs *bufs, lt21_page *pg, lt_error *err)
{
	bool		has_inline = cl->has_inline_value;
	bool		has_scalar = has_inline || bufs->n == 1 || bufs->n == 3;
	int			lv = 0;			/* index of the rep buffer, def follows */
	uint64_t	nrep = 0,
				ndef = 0,
				nvis;
	lt_array   *one = NULL;
	lt_code		rc;

	if (has_scalar)
	{
		if ((has_inline && bufs->n != 0 && bufs->n != 2) || (!has_inline && bufs->n != 1 && bufs->n != 3))
			return LT21_CORRUPT(w, err, "constant page with %d buffers", bufs->n);
		lv = has_inline ? 0 : 1;
	}
	else if (bufs->n != 0 && bufs->n != 2)
		return LT21_CORRUPT(w, err, "all-null page with %d buffers", bufs->n);

	if (bufs->n >= lv + 2)
	{
		LT_TRY(raw_levels(w, cl->rep_compression, cl->num_rep_values, cl->has_num_rep_values,
						  bufs->p[lv], bufs->len[lv], &pg->rep_store, &pg->rep, "repetition", err));
		LT_TRY(raw_levels(w, cl->def_compression, cl->num_def_values, cl->has_num_def_values,
						  bufs->p[lv + 1], bufs->len[lv + 1], &pg->def_store, &pg->def, "definition", err));
		nrep = pg->rep_store.n;
		ndef = pg->def_store.n;
	}
	if (pg->rep && pg->def && nrep != ndef)
		return LT21_CORRUPT(w, err, "%llu repetition levels but %llu definition levels",
							(unsigned long long) nrep, (unsigned long long) ndef);
	if (pg->rep || pg->def)
		pg->num_levels = pg->rep ? nrep : ndef;
	else
	{
		pg->num_levels = pg->num_rows;
		if (!has_scalar)
		{
			/* a simple all-null page: every row a null item */
			if (pg->n_layers != 1 || pg->layers[0] != LT21_NULLABLE_ITEM)
				return LT21_CORRUPT(w, err, "all-null page without levels has %d layers", pg->n_layers);
			if (pg->num_rows > LT21_MAX_PAGE_ITEMS)
				return LT21_CORRUPT(w, err, "page of %llu rows", (unsigned long long) pg->num_rows);
			LT_TRY(lt21_levels_reserve(&pg->def_store, pg->num_rows, err));
			pg->def = pg->def_store.v;
			pg->def_store.n = pg->num_rows;
			for (uint64_t i = 0; i < pg->num_rows; i++)
				pg->def[i] = 1;
		}
	}
	if (pg->rep && pg->max_rep == 0)
		return LT21_CORRUPT(w, err, "repetition levels without list layers");
	nvis = count_visible(pg);
	if (nvis > LT21_MAX_PAGE_ITEMS)
		return LT21_CORRUPT(w, err, "page of %llu items", (unsigned long long) nvis);
	if (!has_scalar)
		return lt_array_append_nulls(pg->values, (int64_t) nvis, err);

	LT_TRY(lt_array_new(leaf, &one, err));
	rc = has_inline ? constant_scalar(w, leaf, cl->inline_value.data, cl->inline_value.len, true, one, err)
		: constant_scalar(w, leaf, bufs->p[0], bufs->len[0], false, one, err);
	if (rc == LT_OK && lt_type_is_var_width(leaf->type))
	{
		int64_t		l = one->offsets[1];

		rc = lt_array_reserve(pg->values, (int64_t) nvis, err);
		if (rc == LT_OK && l > 0 && (uint64_t) l * nvis > ((uint64_t) 1 << 34))
			rc = LT21_CORRUPT(w, err, "constant string of %lld bytes repeated %llu times",
							  (long long) l, (unsigned long long) nvis);
		if (rc == LT_OK)
			rc = lt_array_reserve_data(pg->values, l * (int64_t) nvis, err);
		for (uint64_t i = 0; rc == LT_OK && i < nvis; i++)
		{
			lt_array   *v = pg->values;

			memcpy(v->data + v->data_len, one->data, l);
			v->data_len += l;
			v->offsets[v->length + 1] = v->data_len;
			v->length++;
		}
	}
	else if (rc == LT_OK)
	{
		int			width = lt21_leaf_width(leaf);
		lt_array   *v = pg->values;

		rc = lt_array_reserve(v, (int64_t) nvis, err);
		for (uint64_t i = 0; rc == LT_OK && i < nvis; i++)
			memcpy(v->values + (v->length + (int64_t) i) * width, one->values, width);
		if (rc == LT_OK)
			v->length += (int64_t) nvis;
	}
	lt_array_free(one);
	return rc;
}

/* String data is never NULL, even when every string is empty (packed struct children too). */
static lt_code
string_data(lt_array *a, lt_error *err)
{
	if (lt_type_is_var_width(a->field->type))
		return lt_array_reserve_data(a, 0, err);
	if (a->field->type == LT_TYPE_STRUCT)
		for (int i = 0; i < a->n_children; i++)
			if (a->children[i])
				LT_TRY(string_data(a->children[i], err));
	return LT_OK;
}

/* A mini-block window: its metadata words and chunks as a page of its own. */
static lt_code
mb_window(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__MiniBlockLayout *mb,
		  const lt21_window *win, const lt21_bufs *bufs, lt21_page *pg, lt_error *err)
{
	unsigned	ws = mb->has_has_large_chunk && mb->has_large_chunk ? 4 : 2;
	const uint8_t *p[3];
	uint64_t	len[3];
	lt21_bufs	b;

	if (bufs->n < 2 || bufs->n > 3 || win->c1 < win->c0 || win->c1 > bufs->len[0] / ws ||
		bufs->len[1] != win->len)
		return lt_error_set(err, LT_EINVALID, "%s: column %d page %d: window buffers do not fit the window",
							w->path, w->column, w->page);
	if (!pg->win_mb && !(pg->win_mb = lt_malloc(sizeof(Lt__Enc21__MiniBlockLayout))))
		return lt_nomem(err);
	*pg->win_mb = *mb;
	pg->win_mb->num_items = win->items;
	pg->win_mb->has_num_items = 1;
	p[0] = bufs->p[0] + win->c0 * ws;
	len[0] = (win->c1 - win->c0) * ws;
	for (int i = 1; i < bufs->n; i++)
	{
		p[i] = bufs->p[i];
		len[i] = bufs->len[i];
	}
	b.n = bufs->n;
	b.p = p;
	b.len = len;
	b.stable = bufs->stable;
	pg->win_head = win->head;
	pg->win_tail = win->tail;
	return lt21_miniblock_decode(w, leaf, pg->win_mb, &b, pg, err);
}

/* A full-zip window: its bytes as a page of its own. */
static lt_code
fz_window(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__FullZipLayout *fz,
		  const lt21_window *win, const lt21_bufs *bufs, lt21_page *pg, lt_error *err)
{
	lt21_bufs	b = *bufs;

	if (bufs->n < 1 || bufs->len[0] != win->len)
		return lt_error_set(err, LT_EINVALID, "%s: column %d page %d: window buffers do not fit the window",
							w->path, w->column, w->page);
	if (!pg->win_fz && !(pg->win_fz = lt_malloc(sizeof(Lt__Enc21__FullZipLayout))))
		return lt_nomem(err);
	*pg->win_fz = *fz;
	pg->win_fz->num_items = (uint32_t) win->levels;
	pg->win_fz->has_num_items = 1;
	pg->win_fz->has_num_visible_items = 0;
	pg->win_open = win->levels == 0;
	b.n = 1;
	return lt21_fullzip_decode(w, leaf, pg->win_fz, &b, pg, err);
}

static lt_code
page_decode(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__PageLayout *layout,
			uint64_t num_rows, const lt21_bufs *bufs, const lt21_window *win, lt21_page **out, lt_error *err)
{
	lt21_page  *pg = *out;
	lt_code		rc = LT_OK;

	if (pg && pg->values->field != leaf)
	{
		lt21_page_free(pg);
		pg = NULL;
	}
	*out = NULL;
	if (!layout || (!lt_field_is_leaf(leaf) && !lt21_is_packed(leaf)) ||
		(leaf->type == LT_TYPE_FIXED_LIST && (leaf->n_children != 1 || !lt_field_is_leaf(leaf->children[0]))))
	{
		lt21_page_free(pg);
		if (!layout)
			return LT21_CORRUPT(w, err, "page without a layout");
		return LT21_UNSUPPORTED(w, err, "leaf column of type %s", lt_type_name(leaf->type));
	}
	if (pg)
		page_reset(pg);
	else
	{
		pg = lt_calloc(1, sizeof(lt21_page));
		if (!pg)
			return lt_nomem(err);
		rc = lt_array_new(leaf, &pg->values, err);
		if (rc == LT_OK)
			rc = string_data(pg->values, err);
	}
	pg->num_rows = num_rows;
	/* a legacy blob page (2.1) wraps the layout of its {position, size} descriptors, which the leaf reads */
	while (rc == LT_OK && layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT)
	{
		if (!layout->blob_layout || !layout->blob_layout->inner_layout || !leaf->packed)
			rc = LT21_CORRUPT(w, err, "a blob page of a column that is not a blob descriptor");
		else
			layout = layout->blob_layout->inner_layout;
	}
	if (rc == LT_OK)
	{
		switch (layout->layout_case)
		{
			case LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT:
				{
					const Lt__Enc21__MiniBlockLayout *mb = layout->mini_block_layout;

					rc = set_layers(w, pg, mb->layers, mb->n_layers, err);
					if (rc == LT_OK && win)
						rc = mb_window(w, leaf, mb, win, bufs, pg, err);
					else if (rc == LT_OK)
						rc = lt21_miniblock_decode(w, leaf, mb, bufs, pg, err);
					break;
				}
			case LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT:
				{
					const Lt__Enc21__FullZipLayout *fz = layout->full_zip_layout;

					rc = set_layers(w, pg, fz->layers, fz->n_layers, err);
					if (rc == LT_OK && win)
						rc = fz_window(w, leaf, fz, win, bufs, pg, err);
					else if (rc == LT_OK)
						rc = lt21_fullzip_decode(w, leaf, fz, bufs, pg, err);
					break;
				}
			case LT__ENC21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT:
				{
					const Lt__Enc21__ConstantLayout *cl = layout->constant_layout;

					if (win)
					{
						rc = LT21_UNSUPPORTED(w, err, "windows of constant pages");
						break;
					}
					rc = set_layers(w, pg, cl->layers, cl->n_layers, err);
					if (rc == LT_OK)
						rc = constant_decode(w, leaf, cl, bufs, pg, err);
					break;
				}
			default:
				rc = LT21_CORRUPT(w, err, "unknown page layout %d", (int) layout->layout_case);
				break;
		}
	}
	if (rc == LT_OK)
		rc = lt21_page_index(w, pg, err);
	if (rc != LT_OK)
	{
		lt21_page_free(pg);
		return rc;
	}
	*out = pg;
	return LT_OK;
}

lt_code
lt21_page_decode(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__PageLayout *layout,
				 uint64_t num_rows, const lt21_bufs *bufs, lt21_page **out, lt_error *err)
{
	return page_decode(w, leaf, layout, num_rows, bufs, NULL, out, err);
}

lt_code
lt21_page_decode_window(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__PageLayout *layout,
						const lt21_window *win, const lt21_bufs *bufs, lt21_page **out, lt_error *err)
{
	if (win->buf < 0 || win->need_index || win->row1 < win->row0)
	{
		lt21_page_free(*out);
		*out = NULL;
		return lt_error_set(err, LT_EINVALID, "%s: column %d page %d: not a planned window",
							w->path, w->column, w->page);
	}
	return page_decode(w, leaf, layout, win->row1 - win->row0, bufs, win, out, err);
}
