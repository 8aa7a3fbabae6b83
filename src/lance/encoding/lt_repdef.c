/*
 * lt_repdef.c — from repetition/definition levels to nested arrays.
 *
 * Layers are listed innermost first; each is an item layer (the leaf, a
 * struct) or a list layer.  Walking inner to outer, a layer takes
 * consecutive definition values: NULLABLE_ITEM and NULLABLE_LIST one for
 * "null", EMPTYABLE_LIST one for "empty", NULL_AND_EMPTY_LIST two (null,
 * then empty).  Def 0 is a valid leaf; def d means "null/empty at the layer
 * owning d", so layers inside it are absent.  Repetition counts list layers
 * from the inside: a level with rep r starts new lists at every list layer
 * whose depth (1 = innermost) is <= r; rep == max_rep starts a row.
 *
 * A level therefore creates a slot at layer k when
 *   rep >= lists(0..k)    (it does not merely continue layer k's parent), and
 *   def <= base(p)        where p is the nearest list layer outside k: a null
 *                         or empty list at p (or anything outside it) has no
 *                         children, while a null struct still has them.
 * The slot is valid if def <= base(k), an empty (valid) list if def is k's
 * empty value, and null otherwise when the layer is nullable.
 *
 * A map is a list layer over its entries struct.  A fixed-size list of
 * structs (2.2+) is an item layer whose levels the writer repeats once per
 * list item, so it and every node outside it take one slot per `dim` levels
 * (the writer puts no lists around it).
 */
#include "encoding/lt_enc21.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"

static int
layer_ndef(int l)
{
	switch (l)
	{
		case LT21_NULLABLE_ITEM:
		case LT21_NULLABLE_LIST:
		case LT21_EMPTYABLE_LIST:
			return 1;
		case LT21_NULL_AND_EMPTY_LIST:
			return 2;
		default:
			return 0;
	}
}

static bool
layer_nullable(int l)
{
	return l == LT21_NULLABLE_ITEM || l == LT21_NULLABLE_LIST || l == LT21_NULL_AND_EMPTY_LIST;
}

void
lt21_page_set_layers(lt21_page *pg, const int *layers, int n)
{
	int			first_list = -1;
	unsigned	vis = 0;

	pg->n_layers = n;
	pg->max_rep = 0;
	for (int i = 0; i < n; i++)
	{
		pg->layers[i] = (uint8_t) layers[i];
		if (lt21_layer_is_list(layers[i]))
		{
			pg->max_rep++;
			if (first_list < 0)
				first_list = i;
		}
		else if (first_list < 0)
			vis += layer_ndef(layers[i]);
	}
	/* without lists every level is an item */
	pg->max_visible = first_list < 0 ? UINT16_MAX : (uint16_t) vis;
}

/* Per-layer constants of the slot rule above. */
typedef struct layer_info
{
	bool		list;
	bool		nullable;
	uint16_t	base;			/* def <= base: valid at this layer */
	uint16_t	empty;			/* def meaning "empty list", or 0 */
	uint16_t	lim;			/* def <= lim: the level has a slot here */
	uint16_t	minrep;			/* rep >= minrep: the level has a slot here */
} layer_info;

static void
layer_plan(const lt21_page *pg, layer_info *li)
{
	unsigned	base = 0;
	int			lists = 0;

	for (int k = 0; k < pg->n_layers; k++)
	{
		int			l = pg->layers[k];

		li[k].list = lt21_layer_is_list(l);
		li[k].nullable = layer_nullable(l);
		li[k].base = (uint16_t) base;
		li[k].empty = 0;
		if (l == LT21_EMPTYABLE_LIST)
			li[k].empty = (uint16_t) (base + 1);
		else if (l == LT21_NULL_AND_EMPTY_LIST)
			li[k].empty = (uint16_t) (base + 2);
		base += layer_ndef(l);
		if (li[k].list)
			lists++;
		li[k].minrep = (uint16_t) lists;
	}
	for (int k = 0; k < pg->n_layers; k++)
	{
		li[k].lim = UINT16_MAX;
		for (int p = k + 1; p < pg->n_layers; p++)
			if (li[p].list)
			{
				li[k].lim = li[p].base;
				break;
			}
	}
}

static unsigned
total_def(const lt21_page *pg)
{
	unsigned	t = 0;

	for (int k = 0; k < pg->n_layers; k++)
		t += layer_ndef(pg->layers[k]);
	return t;
}

/*
 * Null the leaf items [start, start + n) of v whose def[i] != 0, zeroing
 * fixed values and emptying strings.  A packed struct's children are nulled
 * with it, as the children of a null struct are elsewhere.
 */
static lt_code
apply_validity(lt_array *v, int64_t start, int64_t n, const uint16_t *def, lt_error *err)
{
	int			width = lt21_leaf_width(v->field);
	bool		dirty = false;

	if (v->field->type == LT_TYPE_STRUCT)
		for (int c = 0; c < v->n_children; c++)
		{
			lt_array   *ch = v->children[c];

			if (!ch)
				continue;
			if (ch->length < start + n)
				return lt_error_set(err, LT_EINVALID, "packed struct child \"%s\" has %lld slots, its struct %lld",
									ch->field->name, (long long) ch->length, (long long) (start + n));
			LT_TRY(apply_validity(ch, start, n, def, err));
		}

	for (int64_t i = 0; i < n; i++)
	{
		if (def[i] == 0)
			continue;
		if (!v->validity)
			LT_TRY(lt_array_ensure_validity(v, err));
		if (!v->validity[start + i])
			continue;
		v->validity[start + i] = 0;
		v->null_count++;
		if (width > 0)
			memset(v->values + (start + i) * width, 0, width);
		else if (v->offsets && v->offsets[start + i + 1] != v->offsets[start + i])
			dirty = true;
	}
	/* with header room (lt_array.h) the values stay where they are: a null keeps its bytes */
	if (dirty && lt_type_is_var_width(v->field->type) && !v->room)
	{
		int64_t		wpos = v->offsets[start];
		int64_t		s = v->offsets[start];

		for (int64_t i = start; i < start + n; i++)
		{
			int64_t		e = v->offsets[i + 1];	/* read before it is rewritten */

			if (v->validity[i] && e > s)
			{
				memmove(v->data + wpos, v->data + s, e - s);
				wpos += e - s;
			}
			v->offsets[i + 1] = wpos;
			s = e;
		}
		v->data_len = wpos;
	}
	return LT_OK;
}

lt_code
lt21_page_index(const lt21_where *w, lt21_page *pg, lt_error *err)
{
	unsigned	tdef = total_def(pg);
	uint64_t	nvis = 0,
				nitems;
	uint16_t   *item_def = NULL;
	lt_code		rc = LT_OK;

	if (pg->def)
	{
		for (uint64_t i = 0; i < pg->num_levels; i++)
		{
			if (pg->def[i] > tdef)
				return LT21_CORRUPT(w, err, "definition level %u at %llu, the layers allow %u",
									pg->def[i], (unsigned long long) i, tdef);
			nvis += pg->def[i] <= pg->max_visible;
		}
	}
	else
		nvis = pg->num_levels;
	if (pg->rep)
		for (uint64_t i = 0; i < pg->num_levels; i++)
			if (pg->rep[i] > pg->max_rep)
				return LT21_CORRUPT(w, err, "repetition level %u at %llu, the layers allow %d",
									pg->rep[i], (unsigned long long) i, pg->max_rep);
	nitems = pg->lazy_mb ? pg->lazy_items : pg->dict ? pg->n_dict_idx : (uint64_t) pg->values->length;
	if (nitems != nvis)
		return LT21_CORRUPT(w, err, "%llu items but %llu visible levels",
							(unsigned long long) nitems, (unsigned long long) nvis);

	/* rows */
	if (pg->rep)
	{
		uint64_t	rows = 0,
					item = 0,
					first = 0,
					last = pg->num_levels;

		/* a window may start inside a row and end inside the next one: those levels are no rows */
		if (pg->win_head)
			while (first < pg->num_levels && pg->rep[first] != pg->max_rep)
				first++;
		if (pg->win_tail)
			while (last > first && pg->rep[--last] != pg->max_rep)
				;
		if (first < last && pg->rep[first] != pg->max_rep)
			return LT21_CORRUPT(w, err, "page starts inside a row (repetition %u)", pg->rep[first]);
		for (uint64_t i = first; i < last; i++)
			rows += pg->rep[i] == pg->max_rep;
		if (rows != pg->num_rows || (pg->win_tail && (last == pg->num_levels || pg->rep[last] != pg->max_rep)))
			return LT21_CORRUPT(w, err, "levels hold %llu rows, the %s says %llu",
								(unsigned long long) rows, pg->win_head || pg->win_tail ? "repetition index" : "page",
								(unsigned long long) pg->num_rows);
		if (pg->row_cap < 2 * (rows + 1))
		{
			uint64_t   *r = lt_realloc(pg->row_store, 2 * (rows + 1) * sizeof(uint64_t));

			if (!r)
				return lt_nomem(err);
			pg->row_store = r;
			pg->row_cap = 2 * (rows + 1);
		}
		pg->row_level = pg->row_store;
		pg->row_item = pg->row_store + rows + 1;
		rows = 0;
		for (uint64_t i = 0; i < last; i++)
		{
			if (i >= first && pg->rep[i] == pg->max_rep)
			{
				pg->row_level[rows] = i;
				pg->row_item[rows] = item;
				rows++;
			}
			item += !pg->def || pg->def[i] <= pg->max_visible;
		}
		pg->row_level[rows] = last;
		pg->row_item[rows] = item;
	}
	else if (pg->num_levels != pg->num_rows)
		return LT21_CORRUPT(w, err, "%llu levels for %llu rows without repetition",
							(unsigned long long) pg->num_levels, (unsigned long long) pg->num_rows);

	if (pg->lazy_mb)
		return LT_OK;			/* items and their validity come when rows are read */

	/* the def level of each item, for the leaf layer's validity */
	if (pg->def && pg->num_levels != nvis)
	{
		uint64_t	j = 0;

		item_def = lt_malloc((nvis ? nvis : 1) * sizeof(uint16_t));
		if (!item_def)
			return lt_nomem(err);
		for (uint64_t i = 0; i < pg->num_levels; i++)
			if (pg->def[i] <= pg->max_visible)
				item_def[j++] = pg->def[i];
	}
	else if (pg->def)
		item_def = pg->def;
	if (pg->dict)
		rc = lt21_dict_resolve(w, pg, item_def, err);
	if (rc == LT_OK && item_def && layer_nullable(pg->layers[0]))
		rc = apply_validity(pg->values, 0, pg->values->length, item_def, err);
	if (item_def != pg->def)
		lt_free(item_def);
	return rc;
}

/*
 * Levels per slot of nodes[d]: a fixed-size list of structs repeats each of
 * its levels once per item, so it and every node outside it take `dim`
 * levels per slot (0 when that overflows).
 */
static uint64_t
fsl_span(lt_array *const *nodes, int depth, int d)
{
	uint64_t	m = 1;

	for (int j = d; j < depth - 1; j++)
		if (nodes[j]->field->type == LT_TYPE_FIXED_LIST &&
			!lt_mul_ok(m, (uint64_t) nodes[j]->field->fixed_size, &m))
			return 0;
	return m;
}

/* Mark slot `i` of a (reserved) node null or valid. */
static inline lt_code
set_slot(lt_array *a, int64_t i, bool valid, lt_error *err)
{
	if (!valid)
	{
		if (!a->validity)
			LT_TRY(lt_array_ensure_validity(a, err));
		a->validity[i] = 0;
		a->null_count++;
	}
	else if (a->validity)
		a->validity[i] = 1;
	return LT_OK;
}

lt_code
lt21_page_append(const lt21_where *w, lt21_page *pg, lt_array *const *nodes, int depth,
				 int first_owned, uint64_t r0, uint64_t n, lt_error *err)
{
	layer_info	li[LT21_MAX_LAYERS];
	uint64_t	l0,
				l1,
				v0,
				v1;
	int			top;			/* outermost layer this leaf writes */

	if (pg->n_layers != depth)
		return LT21_CORRUPT(w, err, "page has %d rep/def layers, the field is %d deep", pg->n_layers, depth);
	if (r0 > pg->num_rows || n > pg->num_rows - r0)
		return lt_error_set(err, LT_EINVALID, "rows %llu..+%llu outside a page of %llu",
							(unsigned long long) r0, (unsigned long long) n,
							(unsigned long long) pg->num_rows);
	/* the page's layers must match the arrays: lists where the field has lists */
	for (int k = 0; k < depth; k++)
	{
		lt_type_id	t = nodes[depth - 1 - k]->field->type;

		if ((t == LT_TYPE_LIST || t == LT_TYPE_LARGE_LIST || t == LT_TYPE_MAP) != lt21_layer_is_list(pg->layers[k]))
			return LT21_CORRUPT(w, err, "rep/def layer %d (%d) does not fit field \"%s\" of type %s",
								k, pg->layers[k], nodes[depth - 1 - k]->field->name, lt_type_name(t));
	}
	if (pg->row_level)
	{
		l0 = pg->row_level[r0];
		l1 = pg->row_level[r0 + n];
		v0 = pg->row_item[r0];
		v1 = pg->row_item[r0 + n];
	}
	else
	{
		l0 = v0 = r0;
		l1 = v1 = r0 + n;
	}
	if (pg->lazy_mb)
	{
		lt_array   *leaf = nodes[depth - 1];
		int64_t		before = leaf->length;

		LT_TRY(lt21_mb_append_items(w, pg, v0, v1, leaf, err));
		if (leaf->length - before != (int64_t) (v1 - v0))
			return LT21_CORRUPT(w, err, "chunks yielded %lld items for %llu rows",
								(long long) (leaf->length - before), (unsigned long long) (v1 - v0));
		if (pg->def && layer_nullable(pg->layers[0]))
			LT_TRY(apply_validity(leaf, before, (int64_t) (v1 - v0), pg->def + v0, err));
	}
	else
		LT_TRY(lt_array_append_slice(nodes[depth - 1], pg->values, (int64_t) v0, (int64_t) (v1 - v0), err));
	top = depth - 1 - first_owned;
	if (top < 1)
		return LT_OK;

	layer_plan(pg, li);
	for (int k = 1; k <= top; k++)
		LT_TRY(lt_array_reserve(nodes[depth - 1 - k], (int64_t) (l1 - l0), err));

	if (!pg->rep)
	{
		/* no lists: one slot per level (per span of a fixed-size list) at every layer */
		for (int k = 1; k <= top; k++)
		{
			lt_array   *a = nodes[depth - 1 - k];
			uint64_t	m = fsl_span(nodes, depth, depth - 1 - k);

			if (m == 0 || l0 % m != 0 || (l1 - l0) % m != 0)
				return LT21_CORRUPT(w, err, "levels %llu..%llu do not cover whole fixed-size lists of %llu",
									(unsigned long long) l0, (unsigned long long) l1, (unsigned long long) m);
			for (uint64_t i = l0; i < l1; i += m)
			{
				uint16_t	d = pg->def ? pg->def[i] : 0;

				LT_TRY(set_slot(a, a->length, d <= li[k].base || !li[k].nullable, err));
				a->length++;
			}
		}
		return LT_OK;
	}
	if (fsl_span(nodes, depth, 0) != 1)
		return LT21_UNSUPPORTED(w, err, "lists around a fixed-size list of structs");

	for (uint64_t i = l0; i < l1; i++)
	{
		uint16_t	r = pg->rep[i];
		uint16_t	d = pg->def ? pg->def[i] : 0;

		for (int k = top; k >= 0; k--)
		{
			lt_array   *a;

			if (r < li[k].minrep || d > li[k].lim)
				continue;
			/* a slot at layer k: count it as a child of the list outside */
			if (k < top && li[k + 1].list)
				nodes[depth - 2 - k]->offsets[nodes[depth - 2 - k]->length]++;
			if (k == 0)
				continue;		/* leaf items were appended in bulk */
			a = nodes[depth - 1 - k];
			if (li[k].list)
				a->offsets[a->length + 1] = a->offsets[a->length];
			LT_TRY(set_slot(a, a->length,
							d <= li[k].base || (li[k].empty && d == li[k].empty) || !li[k].nullable, err));
			a->length++;
		}
	}
	return LT_OK;
}
