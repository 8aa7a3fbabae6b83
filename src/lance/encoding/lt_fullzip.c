/*
 * lt_fullzip.c — FullZipLayout pages (wide values: vectors, long strings).
 *
 * Buffer 0 zips, for every level, a control word (rep << bits_def | def,
 * 1, 2 or 4 bytes, absent when both widths are 0) with the value:
 *   fixed width:    the value bytes, for every visible level (nulls too)
 *   variable width: a u32/u64 length and the bytes, for valid items only
 *                   (a packed struct's row: see fz_packed)
 * Buffer 1 is a repetition index (row starts) that a full-page decode does
 * not need.  Values may be compressed one by one (FSST, zstd, lz4).
 */
#include "encoding/lt_enc21.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "encoding/lt_fsst.h"
#include "proto/lt_enc21.pb-c.h"

typedef Lt__Enc21__CompressiveEncoding enc_t;

#define MAX_FSL_LAYERS 8

/* The FSL layers of a fixed per-value record: validity bitmaps, then items. */
typedef struct fz_fsl
{
	int			n;
	lt_array   *arr[MAX_FSL_LAYERS + 1];	/* arr[0] = leaf ... arr[n] = items */
	uint64_t	cum[MAX_FSL_LAYERS];	/* items of arr[i + 1] per record */
	bool		validity[MAX_FSL_LAYERS];
	unsigned	item_width;
	uint64_t	record;			/* bytes per record */
} fz_fsl;

static lt_code
fz_fsl_plan(const lt21_where *w, const enc_t *e, lt_array *leaf, uint64_t bpv, fz_fsl *p, lt_error *err)
{
	lt_array   *a = leaf;
	uint64_t	cum = 1,
				bytes = 0;

	memset(p, 0, sizeof(*p));
	p->arr[0] = leaf;
	while (a->field->type == LT_TYPE_FIXED_LIST)
	{
		const Lt__Enc21__FixedSizeList *f;

		if (!e || e->compression_case != LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST ||
			p->n >= MAX_FSL_LAYERS || a->n_children != 1 || !a->children[0])
			return LT21_UNSUPPORTED(w, err, "full-zip encoding %d for a fixed-size list",
									e ? (int) e->compression_case : 0);
		f = e->fixed_size_list;
		if (f->items_per_value != (uint64_t) a->field->fixed_size)
			return LT21_CORRUPT(w, err, "fixed-size list of %llu items where the schema says %d",
								(unsigned long long) f->items_per_value, a->field->fixed_size);
		cum *= f->items_per_value;
		p->cum[p->n] = cum;
		p->validity[p->n] = f->has_validity;
		if (f->has_validity)
			bytes += (cum + 7) / 8;
		a = a->children[0];
		p->arr[++p->n] = a;
		e = f->values;
	}
	if (!e || e->compression_case != LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT)
		return LT21_UNSUPPORTED(w, err, "full-zip fixed encoding %d", e ? (int) e->compression_case : 0);
	p->item_width = (unsigned) lt21_leaf_width(a->field);
	if (p->item_width == 0 ||
		(e->flat->bits_per_value != (uint64_t) p->item_width * 8 &&
		 !(a->field->type == LT_TYPE_BOOL && e->flat->bits_per_value == 8)))
		return LT21_CORRUPT(w, err, "full-zip values of %llu bits for type %s",
							(unsigned long long) e->flat->bits_per_value, lt_type_name(a->field->type));
	p->record = bytes + cum * p->item_width;
	if (p->record * 8 != bpv)
		return LT21_CORRUPT(w, err, "full-zip records of %llu bits, the encoding implies %llu",
							(unsigned long long) bpv, (unsigned long long) p->record * 8);
	return LT_OK;
}

/* Append n consecutive records at v. */
static lt_code
fz_put_fixed(const fz_fsl *p, const uint8_t *v, uint64_t n, lt_error *err)
{
	lt_array   *items = p->arr[p->n];

	if (p->n == 0 || (!p->validity[0] && p->n == 1))
	{
		/* plain values, or an FSL without inner validity: one copy */
		uint64_t	cnt = n * (p->n ? p->cum[0] : 1);

		LT_TRY(lt_array_reserve(items, (int64_t) cnt, err));
		memcpy(items->values + items->length * p->item_width, v, cnt * p->item_width);
		if (items->validity)
			memset(items->validity + items->length, 1, cnt);
		items->length += (int64_t) cnt;
	}
	else
	{
		for (uint64_t r = 0; r < n; r++)
		{
			const uint8_t *q = v + r * p->record;

			for (int l = 0; l < p->n; l++)
			{
				lt_array   *a = p->arr[l + 1];

				if (!p->validity[l])
					continue;
				LT_TRY(lt_array_reserve(a, (int64_t) p->cum[l], err));
				LT_TRY(lt_array_ensure_validity(a, err));
				for (uint64_t i = 0; i < p->cum[l]; i++)
				{
					uint8_t		bit = (q[i >> 3] >> (i & 7)) & 1;

					a->validity[a->length + (int64_t) i] = bit;
					a->null_count += !bit;
				}
				q += (p->cum[l] + 7) / 8;
			}
			/* lengths of inner FSL arrays: advance all but the items */
			for (int l = 1; l < p->n; l++)
			{
				lt_array   *a = p->arr[l];

				LT_TRY(lt_array_reserve(a, (int64_t) p->cum[l - 1], err));
				if (a->validity && !p->validity[l - 1])
					memset(a->validity + a->length, 1, p->cum[l - 1]);
				a->length += (int64_t) p->cum[l - 1];
			}
			LT_TRY(lt_array_reserve(items, (int64_t) p->cum[p->n - 1], err));
			memcpy(items->values + items->length * p->item_width, q, p->cum[p->n - 1] * p->item_width);
			if (items->validity && !p->validity[p->n - 1])
				memset(items->validity + items->length, 1, p->cum[p->n - 1]);
			items->length += (int64_t) p->cum[p->n - 1];
		}
		/* the items' validity was written before their length moved */
	}
	if (p->n > 0)
	{
		lt_array   *leaf = p->arr[0];

		LT_TRY(lt_array_reserve(leaf, (int64_t) n, err));
		if (leaf->validity)
			memset(leaf->validity + leaf->length, 1, n);
		leaf->length += (int64_t) n;
	}
	return LT_OK;
}

/* How one variable-width value is stored. */
typedef struct fz_var
{
	int			kind;			/* 0 plain, 1 fsst, 2 general */
	lt_fsst_table *fsst;
	const Lt__Enc21__BufferCompression *bc;
} fz_var;

static lt_code
fz_put_var(const lt21_where *w, const fz_var *vk, lt_array *dst, const uint8_t *v, uint64_t len,
		   lt_error *err)
{
	int64_t    *o;

	LT_TRY(lt_array_reserve(dst, 1, err));
	o = dst->offsets + dst->length;
	if (vk->kind == 0)
	{
		LT_TRY(lt_array_reserve_data(dst, (int64_t) len, err));
		memcpy(dst->data + dst->data_len, v, len);
		dst->data_len += (int64_t) len;
	}
	else if (vk->kind == 1)
	{
		int64_t		got;

		LT_TRY(lt_array_reserve_data(dst, (int64_t) lt_fsst_max_decoded(len), err));
		got = lt_fsst_decode(vk->fsst, v, len, dst->data + dst->data_len);
		if (got < 0)
			return LT21_CORRUPT(w, err, "bad FSST code in value %lld", (long long) dst->length);
		dst->data_len += got;
	}
	else
	{
		uint8_t    *buf;
		uint64_t	blen;
		lt_code		rc;

		LT_TRY(lt21_inflate(w, vk->bc, v, len, &buf, &blen, err));
		rc = lt_array_reserve_data(dst, (int64_t) blen, err);
		if (rc == LT_OK)
		{
			memcpy(dst->data + dst->data_len, buf, blen);
			dst->data_len += (int64_t) blen;
		}
		lt_free(buf);
		LT_TRY(rc);
	}
	o[1] = dst->data_len;
	if (dst->validity)
		dst->validity[dst->length] = 1;
	dst->length++;
	return LT_OK;
}

static lt_code
fz_var_plan(const lt21_where *w, const enc_t *e, fz_var *vk, lt_error *err)
{
	memset(vk, 0, sizeof(*vk));
	switch (e ? (int) e->compression_case : 0)
	{
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE:
			return LT_OK;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FSST:
			vk->kind = 1;
			vk->fsst = lt_malloc(sizeof(lt_fsst_table));
			if (!vk->fsst)
				return lt_nomem(err);
			return lt_fsst_parse(e->fsst->symbol_table.data, e->fsst->symbol_table.len, vk->fsst, w->path, err);
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL:
			vk->kind = 2;
			vk->bc = e->general->compression;
			return LT_OK;
		default:
			return LT21_UNSUPPORTED(w, err, "full-zip variable encoding %d", e ? (int) e->compression_case : 0);
	}
}

/*
 * VariablePackedStruct: each row is the struct's fields in order, a fixed
 * field as its bytes, a variable one as a u32/u64 length and its (per-value
 * encoded) bytes.
 */
typedef struct fz_field
{
	bool		fixed;
	unsigned	len_bytes;		/* variable: width of the length */
	fz_fsl		fsl;			/* fixed: how the record decodes */
	fz_var		var;			/* variable: how the bytes decode */
} fz_field;

typedef struct fz_packed
{
	int			n;
	fz_field   *f;
	lt_array   *arr;			/* the struct */
	uint8_t    *zero;			/* zero bytes for the widest fixed field */
} fz_packed;

static void
fz_packed_free(fz_packed *pk)
{
	for (int i = 0; pk->f && i < pk->n; i++)
		lt_free(pk->f[i].var.fsst);
	lt_free(pk->f);
	lt_free(pk->zero);
	pk->f = NULL;
	pk->zero = NULL;
}

static lt_code
fz_packed_plan(const lt21_where *w, const enc_t *e, lt_array *st, fz_packed *pk, lt_error *err)
{
	const Lt__Enc21__VariablePackedStruct *vp;
	uint64_t	widest = 0;

	memset(pk, 0, sizeof(*pk));
	if (!e || e->compression_case != LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT)
		return LT21_UNSUPPORTED(w, err, "full-zip encoding %d for a struct", e ? (int) e->compression_case : 0);
	vp = e->variable_packed_struct;
	if (vp->n_fields != (size_t) st->n_children || vp->n_fields == 0)
		return LT21_CORRUPT(w, err, "packed struct of %zu fields where the schema has %d",
							vp->n_fields, st->n_children);
	pk->f = lt_calloc(vp->n_fields, sizeof(fz_field));
	if (!pk->f)
		return lt_nomem(err);
	pk->n = (int) vp->n_fields;
	pk->arr = st;
	for (int i = 0; i < pk->n; i++)
	{
		const Lt__Enc21__VariablePackedStruct__FieldEncoding *fe = vp->fields[i];
		lt_array   *c = st->children[i];
		fz_field   *f = &pk->f[i];

		/* the writer packs whole bytes of primitives, strings and vectors */
		if (!c || !lt_field_is_leaf(c->field) || c->field->type == LT_TYPE_BOOL)
			return LT21_UNSUPPORTED(w, err, "packed struct field \"%s\" of type %s",
									c ? c->field->name : "?", c ? lt_type_name(c->field->type) : "?");
		if (!fe->value)
			return LT21_CORRUPT(w, err, "packed struct field \"%s\" without an encoding", c->field->name);
		if (fe->layout_case == LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE)
		{
			if (lt_type_is_var_width(c->field->type) || fe->bits_per_value == 0 || fe->bits_per_value % 8 != 0)
				return LT21_CORRUPT(w, err, "packed struct field \"%s\" of type %s stored as %llu-bit values",
									c->field->name, lt_type_name(c->field->type),
									(unsigned long long) fe->bits_per_value);
			f->fixed = true;
			LT_TRY(fz_fsl_plan(w, fe->value, c, fe->bits_per_value, &f->fsl, err));
			widest = f->fsl.record > widest ? f->fsl.record : widest;
		}
		else if (fe->layout_case == LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH)
		{
			if (!lt_type_is_var_width(c->field->type) || (fe->bits_per_length != 32 && fe->bits_per_length != 64))
				return LT21_CORRUPT(w, err, "packed struct field \"%s\" of type %s with %llu-bit lengths",
									c->field->name, lt_type_name(c->field->type),
									(unsigned long long) fe->bits_per_length);
			f->len_bytes = (unsigned) (fe->bits_per_length / 8);
			LT_TRY(fz_var_plan(w, fe->value, &f->var, err));
		}
		else
			return LT21_CORRUPT(w, err, "packed struct field \"%s\" without a layout", c->field->name);
	}
	pk->zero = lt_calloc(1, widest + 1);
	return pk->zero ? LT_OK : lt_nomem(err);
}

/*
 * Append one row of len bytes at v.  An empty row (a null struct) gives
 * zero and empty fields, as the writer's reader does.
 */
static lt_code
fz_put_packed(const lt21_where *w, const fz_packed *pk, const uint8_t *v, uint64_t len, lt_error *err)
{
	lt_array   *st = pk->arr;
	uint64_t	pos = 0;

	for (int i = 0; len == 0 && i < pk->n; i++)
	{
		lt_array   *c = st->children[i];

		if (pk->f[i].fixed)
			LT_TRY(fz_put_fixed(&pk->f[i].fsl, pk->zero, 1, err));
		else
		{
			LT_TRY(lt_array_reserve(c, 1, err));
			c->offsets[c->length + 1] = c->offsets[c->length];
			if (c->validity)
				c->validity[c->length] = 1;
			c->length++;
		}
	}
	for (int i = 0; len > 0 && i < pk->n; i++)
	{
		const fz_field *f = &pk->f[i];

		if (f->fixed)
		{
			if (f->fsl.record > len - pos)
				return LT21_CORRUPT(w, err, "packed struct row %lld: field %d of %llu bytes runs past its %llu bytes",
									(long long) st->length, i, (unsigned long long) f->fsl.record,
									(unsigned long long) len);
			LT_TRY(fz_put_fixed(&f->fsl, v + pos, 1, err));
			pos += f->fsl.record;
		}
		else
		{
			uint64_t	vlen;

			if (f->len_bytes > len - pos)
				return LT21_CORRUPT(w, err, "packed struct row %lld: length of field %d runs past its %llu bytes",
									(long long) st->length, i, (unsigned long long) len);
			vlen = f->len_bytes == 4 ? lt_le32(v + pos) : lt_le64(v + pos);
			pos += f->len_bytes;
			if (vlen > len - pos)
				return LT21_CORRUPT(w, err, "packed struct row %lld: field %d of %llu bytes runs past its %llu bytes",
									(long long) st->length, i, (unsigned long long) vlen,
									(unsigned long long) len);
			LT_TRY(fz_put_var(w, &f->var, st->children[i], v + pos, vlen, err));
			pos += vlen;
		}
	}
	if (pos != len)
		return LT21_CORRUPT(w, err, "packed struct row %lld has %llu bytes after its fields",
							(long long) st->length, (unsigned long long) (len - pos));
	LT_TRY(lt_array_reserve(st, 1, err));
	if (st->validity)
		st->validity[st->length] = 1;
	st->length++;
	return LT_OK;
}

lt_code
lt21_fullzip_decode(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__FullZipLayout *fz,
					const lt21_bufs *bufs, lt21_page *pg, lt_error *err)
{
	unsigned	brep = fz->bits_rep,
				bdef = fz->bits_def;
	unsigned	cw;
	bool		fixed;
	const uint8_t *p;
	uint64_t	len,
				pos = 0,
				n_items = fz->num_items,
				n_vis = 0,
				unit;
	uint16_t   *rep = NULL,
			   *def = NULL;
	uint32_t	def_mask;
	fz_fsl		plan;
	fz_var		vk = {0};
	fz_packed	pk = {0};
	bool		packed = lt21_is_packed(leaf);
	lt_code		rc = LT_OK;

	if (bufs->n < 1)
		return LT21_CORRUPT(w, err, "full-zip page without buffers");
	p = bufs->p[0];
	len = bufs->len[0];
	if (brep > 16 || bdef > 16)
		return LT21_CORRUPT(w, err, "control words of %u rep and %u def bits", brep, bdef);
	cw = brep + bdef == 0 ? 0 : brep + bdef <= 8 ? 1 : brep + bdef <= 16 ? 2 : 4;
	def_mask = bdef ? (1u << bdef) - 1 : 0;
	if ((brep > 0) != (pg->max_rep > 0) && n_items > 0)
		return LT21_CORRUPT(w, err, "%u repetition bits but %d list layers", brep, pg->max_rep);
	if (fz->details_case == LT__ENC21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE)
	{
		fixed = true;
		if (fz->bits_per_value % 8 != 0 || fz->bits_per_value == 0)
			return LT21_CORRUPT(w, err, "full-zip values of %u bits", fz->bits_per_value);
		LT_TRY(fz_fsl_plan(w, fz->value_compression, pg->values, fz->bits_per_value, &plan, err));
		unit = fz->bits_per_value / 8;
	}
	else if (fz->details_case == LT__ENC21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET)
	{
		fixed = false;
		if (fz->bits_per_offset != 32 && fz->bits_per_offset != 64)
			return LT21_CORRUPT(w, err, "full-zip lengths of %u bits", fz->bits_per_offset);
		if (!lt_type_is_var_width(leaf->type) && !packed)
			return LT21_CORRUPT(w, err, "variable-width full-zip page for type %s", lt_type_name(leaf->type));
		unit = fz->bits_per_offset / 8;
	}
	else
		return LT21_CORRUPT(w, err, "full-zip layout without value details");
	/* a window (lt21_fz_window) over a repetition index: as many levels as its bytes hold */
	if (pg->win_open)
		n_items = len / (cw ? cw : unit);
	/* every level takes at least a control word or a value / length */
	if (n_items > len / (cw ? cw : unit) || n_items > LT21_MAX_PAGE_ITEMS)
		return LT21_CORRUPT(w, err, "%llu full-zip levels cannot fit in %llu bytes",
							(unsigned long long) n_items, (unsigned long long) len);

	if (!fixed && packed)
		rc = fz_packed_plan(w, fz->value_compression, pg->values, &pk, err);
	else if (!fixed)
		rc = fz_var_plan(w, fz->value_compression, &vk, err);
	if (rc == LT_OK && cw == 0 && fixed)
	{
		/* no levels: the buffer is the values */
		if (n_items * unit != len)
			rc = LT21_CORRUPT(w, err, "%llu values of %llu bytes in a %llu-byte buffer",
							  (unsigned long long) n_items, (unsigned long long) unit, (unsigned long long) len);
		else
			rc = fz_put_fixed(&plan, p, n_items, err);
		n_vis = n_items;
	}
	else if (rc == LT_OK)
	{
		if (brep && (rc = lt21_levels_reserve(&pg->rep_store, n_items, err)) == LT_OK)
			rep = pg->rep_store.v;
		if (bdef && rc == LT_OK && (rc = lt21_levels_reserve(&pg->def_store, n_items, err)) == LT_OK)
			def = pg->def_store.v;
		uint64_t	i;

		for (i = 0; i < n_items && rc == LT_OK && !(pg->win_open && pos == len); i++)
		{
			uint32_t	word = 0;
			uint16_t	d;
			bool		visible;

			if (cw > len - pos)
			{
				rc = LT21_CORRUPT(w, err, "control word %llu at %llu is past the %llu-byte buffer",
								  (unsigned long long) i, (unsigned long long) pos, (unsigned long long) len);
				break;
			}
			memcpy(&word, p + pos, cw);
			pos += cw;
			d = (uint16_t) (word & def_mask);
			if (rep)
				rep[i] = (uint16_t) (word >> bdef);
			if (def)
				def[i] = d;
			visible = d <= pg->max_visible;
			if (!visible)
				continue;
			n_vis++;
			if (fixed)
			{
				if (unit > len - pos)
					rc = LT21_CORRUPT(w, err, "value %llu at %llu is past the %llu-byte buffer",
									  (unsigned long long) i, (unsigned long long) pos, (unsigned long long) len);
				else
					rc = fz_put_fixed(&plan, p + pos, 1, err);
				pos += unit;
			}
			else if (d == 0)
			{
				uint64_t	vlen = unit == 4 ? (pos + 4 <= len ? lt_le32(p + pos) : 0) :
					(pos + 8 <= len ? lt_le64(p + pos) : 0);

				if (unit > len - pos || vlen > len - pos - unit)
				{
					rc = LT21_CORRUPT(w, err, "value %llu at %llu runs past the %llu-byte buffer",
									  (unsigned long long) i, (unsigned long long) pos, (unsigned long long) len);
					break;
				}
				pos += unit;
				rc = packed ? fz_put_packed(w, &pk, p + pos, vlen, err)
					: fz_put_var(w, &vk, pg->values, p + pos, vlen, err);
				pos += vlen;
			}
			else if (packed)
				rc = fz_put_packed(w, &pk, p, 0, err);	/* null: empty fields */
			else
				rc = fz_put_var(w, &vk, pg->values, p, 0, err);	/* null: empty */
		}
		if (pg->win_open)
			n_items = i;
		if (rc == LT_OK && pos != len)
			rc = LT21_CORRUPT(w, err, "full-zip buffer has %llu bytes after its %llu levels",
							  (unsigned long long) (len - pos), (unsigned long long) n_items);
	}
	if (rc == LT_OK && fz->has_num_visible_items && fz->num_visible_items != n_vis)
		rc = LT21_CORRUPT(w, err, "%llu visible values, the page says %u",
						  (unsigned long long) n_vis, fz->num_visible_items);
	lt_free(vk.fsst);
	fz_packed_free(&pk);
	if (rc != LT_OK)
		return rc;
	pg->rep = rep;
	pg->def = def;
	pg->num_levels = n_items;
	return LT_OK;
}

/* ---- random access ---- */

lt_code
lt21_fz_window(const lt21_where *w, const Lt__Enc21__FullZipLayout *fz, uint64_t num_rows, int nbufs,
			   const uint64_t *lens, const uint8_t *index, uint64_t r0, uint64_t r1, lt21_window *win,
			   lt_error *err)
{
	unsigned	bits = fz->bits_rep + fz->bits_def;
	unsigned	cw = bits == 0 ? 0 : bits <= 8 ? 1 : bits <= 16 ? 2 : 4;

	memset(win, 0, sizeof(*win));
	win->buf = -1;
	if (nbufs < 1 || r0 >= r1 || r1 > num_rows || num_rows > LT21_MAX_PAGE_ITEMS || fz->bits_rep > 16 ||
		fz->bits_def > 16)
		return LT_OK;
	win->row0 = r0;
	win->row1 = r1;
	if (nbufs >= 2 && lens[1] > 0)
	{
		/* rows + 1 offsets of 1, 2, 4 or 8 bytes into buffer 0 */
		uint64_t	width = lens[1] / (num_rows + 1);
		uint64_t	start = 0,
					end = 0;

		if (lens[1] % (num_rows + 1) != 0 || (width != 1 && width != 2 && width != 4 && width != 8))
			return LT21_CORRUPT(w, err, "repetition index of %llu bytes for %llu rows",
								(unsigned long long) lens[1], (unsigned long long) num_rows);
		if (!index)
		{
			win->buf = 1;
			win->need_index = true;
			win->off = r0 * width;
			win->len = (r1 - r0 + 1) * width;
			return LT_OK;
		}
		memcpy(&start, index, width);
		memcpy(&end, index + (r1 - r0) * width, width);
		start = lt_le64((const uint8_t *) &start);
		end = lt_le64((const uint8_t *) &end);
		if (start > end || end > lens[0])
			return LT21_CORRUPT(w, err, "repetition index puts rows %llu..%llu at bytes %llu..%llu of %llu",
								(unsigned long long) r0, (unsigned long long) r1,
								(unsigned long long) start, (unsigned long long) end,
								(unsigned long long) lens[0]);
		win->buf = 0;
		win->off = start;
		win->len = end - start;
		win->levels = fz->bits_rep ? 0 : r1 - r0;	/* without lists a row is a level */
		return LT_OK;
	}
	if (fz->details_case == LT__ENC21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE && fz->bits_rep == 0 &&
		fz->bits_per_value % 8 == 0 && fz->bits_per_value > 0)
	{
		/* fixed width without lists: every row is a control word and its value */
		uint64_t	stride = cw + fz->bits_per_value / 8;

		if (num_rows > lens[0] / stride || num_rows * stride != lens[0])
			return LT21_CORRUPT(w, err, "%llu full-zip rows of %llu bytes in a %llu-byte buffer",
								(unsigned long long) num_rows, (unsigned long long) stride,
								(unsigned long long) lens[0]);
		win->buf = 0;
		win->off = r0 * stride;
		win->len = (r1 - r0) * stride;
		win->levels = r1 - r0;
	}
	return LT_OK;
}
