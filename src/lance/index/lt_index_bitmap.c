/*
 * lt_index_bitmap.c — Lance's bitmap and label_list indexes.
 *
 * bitmap_page_lookup.lance: keys (the key type, one row per distinct value,
 * in no particular order; the NULL key holds the rows where the value is
 * NULL) and bitmaps: binary, a serialized RowAddrTreeMap per key.
 * label_list: the same over list elements; rows whose list itself is NULL are
 * a RowAddrTreeMap in the global buffer named by schema metadata
 * "lance:label_list_nulls".
 *
 * Keys are read whole at open; a lookup evaluates the filter on them and
 * reads only the bitmaps of the keys that pass.
 */
#include "index/lt_index_int.h"

#include <string.h>

#include "util/lt_alloc.h"

/* Bitmaps of keys closer than this are read in one request. */
#define READ_GAP 16

static lt_code
parse_map(lt_seg_reader *s, const uint8_t *p, size_t len, const char *what, uint64_t row, lt_rowaddr_set **out,
		  lt_error *err)
{
	size_t		used;
	lt_code		rc = lt_rowaddr_set_parse(p, len, out, &used, err);

	if (rc == LT_OK && used != len)
	{
		lt_rowaddr_set_free(*out);
		*out = NULL;
		rc = lt_corrupt(err, "row address map of %zu bytes followed by %zu stray bytes", used, len - used);
	}
	if (rc != LT_OK)
		return lt_error_prefix(err, "%s: %s %llu", lt_index_file_path(s->bm), what, (unsigned long long) row);
	return LT_OK;
}

lt_code
lt_bitmap_open(lt_index_reader *r, lt_seg_reader *s, bool label_list, lt_error *err)
{
	const lt_field *key = r->idx->field;
	const lt_field *kf;

	LT_TRY(lt_seg_open_file(r, s, "bitmap_page_lookup.lance", &s->bm, err));
	LT_TRY(lt_index_file_field(s->bm, "keys", -1, &kf, err));
	LT_TRY(lt_index_file_field(s->bm, "bitmaps", LT_TYPE_BINARY, &s->bitmaps_f, err));
	if (label_list)
	{
		/* the keys are list elements */
		if (key->n_children != 1)
			return lt_corrupt(err, "%s: column \"%s\" is not a list", lt_index_file_path(s->bm), key->name);
		key = key->children[0];
	}
	if (!lt_index_same_type(kf, key))
		return lt_corrupt(err, "%s: index keys are %s, column \"%s\" holds %s", lt_index_file_path(s->bm),
						  lt_type_name(kf->type), r->idx->field->name, lt_type_name(key->type));
	LT_TRY(lt_index_file_read(s->bm, kf, 0, lt_index_file_rows(s->bm), &s->keys, err));
	LT_TRY(lt_index_file_reader(s->bm, s->bitmaps_f, &s->bitmaps_r, err));
	s->bitmaps_r->independent_reads = true;	/* the bitmaps of the matching keys only */

	if (label_list)
	{
		size_t		len;
		const uint8_t *v = lt_index_file_meta(s->bm, "lance:label_list_nulls", &len);
		uint64_t	gb = 0;
		uint8_t    *buf;
		size_t		blen;
		lt_code		rc;

		if (!v)
		{
			/* older label_list files have no null list: no list is NULL */
			if (!(s->null_lists = lt_rowaddr_set_create()))
				return lt_nomem(err);
			return LT_OK;
		}
		if (len == 0 || len > 9)
			return lt_corrupt(err, "%s: bad lance:label_list_nulls metadata", lt_index_file_path(s->bm));
		for (size_t i = 0; i < len; i++)
		{
			if (v[i] < '0' || v[i] > '9')
				return lt_corrupt(err, "%s: bad lance:label_list_nulls metadata", lt_index_file_path(s->bm));
			gb = gb * 10 + (uint64_t) (v[i] - '0');
		}
		if (gb == 0)
			return lt_corrupt(err, "%s: lance:label_list_nulls names the file descriptor",
							  lt_index_file_path(s->bm));
		LT_TRY(lt_index_file_global_buffer(s->bm, gb, &buf, &blen, err));
		rc = parse_map(s, buf, blen, "null lists in global buffer", gb, &s->null_lists, err);
		lt_free(buf);
		LT_TRY(rc);
	}
	return LT_OK;
}

/* OR the bitmaps of key rows rows[0..n) (ascending) into acc. */
static lt_code
union_rows(lt_seg_reader *s, const uint32_t *rows, int64_t n, lt_rowaddr_set *acc, lt_error *err)
{
	lt_array   *a = NULL;
	lt_code		rc = lt_array_new(s->bitmaps_f, &a, err);

	for (int64_t k = 0; rc == LT_OK && k < n;)
	{
		int64_t		j = k;
		uint64_t	start;

		while (j + 1 < n && rows[j + 1] - rows[j] <= READ_GAP && rows[j + 1] - rows[k] < 4096)
			j++;
		start = rows[k];
		lt_array_clear(a);
		rc = lt_field_reader_read(s->bitmaps_r, start, (uint64_t) rows[j] - start + 1, a, err);
		if (rc != LT_OK)
		{
			if (err && err->code == LT_EINVALID)
				err->code = LT_ECORRUPT;
			break;
		}
		if (a->length != (int64_t) (rows[j] - start + 1))
		{
			rc = lt_corrupt(err, "%s: bitmaps [%llu, %u] do not decode", lt_index_file_path(s->bm),
							(unsigned long long) start, rows[j]);
			break;
		}
		for (int64_t m = k; rc == LT_OK && m <= j; m++)
		{
			int64_t		i = rows[m] - (int64_t) start;
			lt_rowaddr_set *one;

			if (!lt_array_is_valid(a, i))
				continue;		/* no bitmap: no rows */
			rc = parse_map(s, a->data + a->offsets[i], (size_t) (a->offsets[i + 1] - a->offsets[i]), "bitmap of key",
						   rows[m], &one, err);
			if (rc == LT_OK)
			{
				rc = lt_rowaddr_set_or(acc, one, err);
				lt_rowaddr_set_free(one);
			}
		}
		k = j + 1;
	}
	lt_array_free(a);
	return rc;
}

/* Keys where keyf is TRUE, their bitmaps OR-ed into acc. */
static lt_code
select_keys(lt_seg_reader *s, lt_filter *keyf, lt_rowaddr_set *acc, lt_index_stats *st, lt_error *err)
{
	int64_t		n = s->keys->length;
	uint32_t   *sel;
	int64_t		nsel = 0;
	lt_array   *cols[1] = {s->keys};
	lt_code		rc;

	if (n == 0)
		return LT_OK;
	if (!(sel = lt_malloc((size_t) n * sizeof(uint32_t))))
		return lt_nomem(err);
	rc = lt_filter_eval(keyf, cols, n, sel, &nsel, err);
	if (st)
	{
		st->pages_total += (uint64_t) n;
		st->keys_matched += (uint64_t) nsel;
		st->pages_read += (uint64_t) nsel;
	}
	if (rc == LT_OK)
		rc = union_rows(s, sel, nsel, acc, err);
	lt_free(sel);
	return rc;
}

lt_code
lt_bitmap_search(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter, lt_rowaddr_set *acc,
				 lt_index_stats *st, lt_error *err)
{
	lt_filter  *keyf;
	lt_code		rc;

	LT_TRY(lt_index_copy_filter(filter, s->keys->field, &keyf, err));
	rc = select_keys(s, keyf, acc, st, err);
	lt_filter_free(keyf);
	return rc;
}

/* Rows whose list holds an element equal to one of values[0..n). */
static lt_code
rows_with_any(lt_seg_reader *s, int n, const lt_value *values, lt_rowaddr_set *acc, lt_index_stats *st,
			  lt_error *err)
{
	const lt_field *kf = s->keys->field;
	lt_filter  *f;
	lt_expr   **items;
	lt_expr    *root;
	lt_code		rc;

	if (n == 0)
		return LT_OK;
	LT_TRY(lt_filter_new(1, &kf, &f, err));
	if (!(items = lt_malloc((size_t) n * sizeof(lt_expr *))))
	{
		lt_filter_free(f);
		return lt_nomem(err);
	}
	for (int i = 0; i < n; i++)
		items[i] = lt_expr_const(f, &values[i], err);
	root = lt_expr_in(f, lt_expr_column(f, 0, err), n, items, err);
	lt_free(items);
	rc = root ? lt_filter_set_root(f, root, err) : (err && err->code != LT_OK ? err->code : LT_EINVALID);
	if (rc == LT_OK)
		rc = select_keys(s, f, acc, st, err);
	lt_filter_free(f);
	return rc;
}

lt_code
lt_bitmap_search_labels(lt_index_reader *r, lt_seg_reader *s, lt_label_op op, int n, const lt_value *values,
						lt_rowaddr_set *acc, lt_index_stats *st, lt_error *err)
{
	lt_rowaddr_set *all = NULL;
	lt_code		rc = LT_OK;

	if (op == LT_LABEL_HAS_ANY)
		return rows_with_any(s, n, values, acc, st, err);

	/* HAS_ALL: the intersection over values, starting from every non-NULL list */
	for (int i = 0; i < n; i++)
		if (values[i].kind == LT_VALUE_NULL)
			return LT_OK;		/* a NULL element is never contained */
	if (n == 0)
	{
		/* @> '{}': every row of the segment whose list is not NULL */
		lt_rowaddr_set *u;

		LT_TRY(lt_rowaddr_set_universe(r->ds, s->seg->fragments, s->seg->n_fragments, &u, err));
		rc = lt_rowaddr_set_andnot(u, s->null_lists, err);
		if (rc == LT_OK)
			rc = lt_rowaddr_set_or(acc, u, err);
		lt_rowaddr_set_free(u);
		return rc;
	}
	for (int i = 0; rc == LT_OK && i < n; i++)
	{
		lt_rowaddr_set *one = lt_rowaddr_set_create();

		if (!one)
			rc = lt_nomem(err);
		if (rc == LT_OK)
			rc = rows_with_any(s, 1, &values[i], one, st, err);
		if (rc == LT_OK && !all)
		{
			all = one;
			one = NULL;
		}
		else if (rc == LT_OK)
			rc = lt_rowaddr_set_and(all, one, err);
		lt_rowaddr_set_free(one);
		if (rc == LT_OK && lt_rowaddr_set_is_empty(all))
			break;
	}
	if (rc == LT_OK)
		rc = lt_rowaddr_set_or(acc, all, err);
	lt_rowaddr_set_free(all);
	return rc;
}

lt_code
lt_bitmap_distinct(lt_seg_reader *s, double *distinct, double *rows)
{
	/* one key per distinct value (the NULL key holds the nulls); the rows are not counted here */
	*distinct += (double) (s->keys->length - s->keys->null_count);
	return LT_OK;
}
