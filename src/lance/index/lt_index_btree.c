/*
 * lt_index_btree.c — Lance's btree index.
 *
 * page_lookup.lance: one row per page of page_data.lance, sorted by min:
 *   min, max (the key type), null_count: uint32, page_idx: uint32;
 *   schema metadata batch_size (rows per page, default 4096).
 * page_data.lance: values (the key type, sorted, nulls first), ids: uint64
 *   (row ids = row addresses).  Page p is rows [p * batch_size, ...).
 * A page's min is its first value (NULL when it starts with nulls), its max the
 * last (NULL only when every value is NULL; NaN sorts last).
 *
 * A lookup evaluates the page test (lt_index_prune_filter) on the lookup
 * columns, reads the values of the candidate pages only, evaluates the filter
 * on them (= / IN of integers: a binary search per value) and reads the ids of
 * the matching span.
 */
#include "index/lt_index_int.h"

#include <stdlib.h>
#include <string.h>

#include "index/lt_btree_pages.h"
#include "util/lt_alloc.h"
#include "util/lt_sort.h"

#define DEFAULT_BATCH_SIZE 4096
#define MAX_BATCH_SIZE ((uint64_t) 1 << 24)

static lt_code
parse_batch_size(lt_index_file *xf, uint64_t *out, lt_error *err)
{
	size_t		len;
	const uint8_t *v = lt_index_file_meta(xf, "batch_size", &len);
	uint64_t	n = 0;

	*out = DEFAULT_BATCH_SIZE;
	if (!v)
		return LT_OK;
	if (len == 0 || len > 12)
		return lt_corrupt(err, "%s: bad batch_size metadata", lt_index_file_path(xf));
	for (size_t i = 0; i < len; i++)
	{
		if (v[i] < '0' || v[i] > '9')
			return lt_corrupt(err, "%s: bad batch_size metadata", lt_index_file_path(xf));
		n = n * 10 + (uint64_t) (v[i] - '0');
	}
	if (n == 0 || n > MAX_BATCH_SIZE)
		return lt_corrupt(err, "%s: batch_size %llu", lt_index_file_path(xf), (unsigned long long) n);
	*out = n;
	return LT_OK;
}

lt_code
lt_btree_open(lt_index_reader *r, lt_seg_reader *s, lt_error *err)
{
	const lt_field *key = r->idx->field;
	const lt_field *mn,
			   *mx;
	uint64_t	pages,
				rows;
	size_t		len;
	const uint8_t *rp;

	LT_TRY(lt_seg_open_file(r, s, "page_lookup.lance", &s->lookup, err));
	LT_TRY(lt_seg_open_file(r, s, "page_data.lance", &s->data, err));
	rp = lt_index_file_meta(s->lookup, "range_partitioned", &len);
	if (rp && !(len == 5 && memcmp(rp, "false", 5) == 0))
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: range-partitioned btree indexes are not supported",
							lt_index_file_path(s->lookup));
	LT_TRY(parse_batch_size(s->lookup, &s->batch_size, err));
	LT_TRY(lt_index_file_field(s->lookup, "min", -1, &mn, err));
	LT_TRY(lt_index_file_field(s->lookup, "max", -1, &mx, err));
	LT_TRY(lt_index_file_field(s->data, "values", -1, &s->values_f, err));
	/* lance before 0.21 named the column "row_ids" */
	if (lt_index_file_field(s->data, "ids", LT_TYPE_UINT64, &s->ids_f, NULL) != LT_OK)
		LT_TRY(lt_index_file_field(s->data, "row_ids", LT_TYPE_UINT64, &s->ids_f, err));
	if (!lt_index_same_type(mn, key) || !lt_index_same_type(mx, key) || !lt_index_same_type(s->values_f, key))
		return lt_corrupt(err, "%s: index keys are %s, column \"%s\" is %s", lt_index_file_path(s->data),
						  lt_type_name(s->values_f->type), key->name, lt_type_name(key->type));
	LT_TRY(lt_index_file_read(s->lookup, mn, 0, lt_index_file_rows(s->lookup), &s->page_min, err));
	LT_TRY(lt_index_file_read(s->lookup, mx, 0, lt_index_file_rows(s->lookup), &s->page_max, err));
	LT_TRY(lt_index_read_column(s->lookup, "null_count", LT_TYPE_UINT32, &s->page_nulls, err));
	LT_TRY(lt_index_read_column(s->lookup, "page_idx", LT_TYPE_UINT32, &s->page_idx, err));
	pages = lt_index_file_rows(s->lookup);
	rows = lt_index_file_rows(s->data);
	/* every page must fall inside page_data */
	for (uint64_t i = 0; i < pages; i++)
	{
		uint64_t	p = lt_index_uint_at(s->page_idx, (int64_t) i);

		if (p * s->batch_size >= rows)
			return lt_corrupt(err, "%s: page %llu starts at row %llu, page_data.lance has %llu rows",
							  lt_index_file_path(s->lookup), (unsigned long long) p,
							  (unsigned long long) (p * s->batch_size), (unsigned long long) rows);
	}
	if (s->page_nulls->null_count || s->page_idx->null_count)
		return lt_corrupt(err, "%s: null page counts", lt_index_file_path(s->lookup));
	LT_TRY(lt_index_file_reader(s->data, s->values_f, &s->values_r, err));
	LT_TRY(lt_index_file_reader(s->data, s->ids_f, &s->ids_r, err));
	/* lookups read a few pages each: only those pages' chunks, not the file's big pages */
	s->values_r->independent_reads = true;
	s->ids_r->independent_reads = true;
	/* the file's identity for the page cache: where it is (store and path) and its size */
	if (!(s->page_key = lt_asprintf("%s\x1f%s\x1f%llu", r->ds->store->root ? r->ds->store->root : "",
									lt_index_file_path(s->data), (unsigned long long) s->data->f->size)))
		return lt_nomem(err);
	return LT_OK;
}

/*
 * Point lookups: a key filter that is "= v" or "IN (v, ...)" of integer constants on an integer (or
 * date32) key.  Then each value is binary-searched in the page's sorted keys instead of testing all
 * of them (a page holds thousands, an IN list hits one or two per page).  The wanted values come
 * back sorted and unique (lt_malloc'd), or NULL when the filter is of another shape.
 */
typedef struct point_keys
{
	int64_t    *v;
	int			n;
} point_keys;

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

static lt_code
get_point_keys(const lt_filter *keyf, const lt_field *f, point_keys *pk, lt_error *err)
{
	const lt_expr *root = lt_filter_root(keyf);
	lt_value_kind want;
	int			first,
				last;

	pk->v = NULL;
	pk->n = 0;
	switch (f->type)
	{
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
			want = LT_VALUE_INT;
			break;
		case LT_TYPE_DATE32:
			want = LT_VALUE_DATE;
			break;
		default:
			return LT_OK;
	}
	if (lt_expr_get_kind(root) == LT_EXPR_CMP && lt_expr_get_op(root) == LT_CMP_EQ)
		first = last = 1;
	else if (lt_expr_get_kind(root) == LT_EXPR_IN)
	{
		first = 1;
		last = lt_expr_n_args(root) - 1;
	}
	else
		return LT_OK;
	if (!(pk->v = lt_malloc(sizeof(int64_t) * (size_t) (last - first + 1 > 0 ? last - first + 1 : 1))))
		return lt_nomem(err);
	for (int i = first; i <= last; i++)
	{
		const lt_expr *e = lt_expr_arg(root, i);
		const lt_value *v;
		int			nv;

		if (lt_expr_get_kind(e) != LT_EXPR_CONST || lt_expr_get_values(keyf, e, &v, &nv, err) != LT_OK ||
			nv != 1 || (v->kind != want && v->kind != LT_VALUE_NULL))
		{
			lt_free(pk->v);
			pk->v = NULL;
			pk->n = 0;
			return LT_OK;		/* another shape: the generic path */
		}
		if (v->kind == want)	/* NULL items match nothing */
			pk->v[pk->n++] = v->v.i;
	}
	qsort(pk->v, (size_t) pk->n, sizeof(int64_t), cmp_i64);
	if (pk->n > 1)
	{
		int			k = 1;

		for (int i = 1; i < pk->n; i++)
			if (pk->v[i] != pk->v[k - 1])
				pk->v[k++] = pk->v[i];
		pk->n = k;
	}
	return LT_OK;
}

/* The positions (slots + base) of pk's values among n ascending keys, appended to sel. */
static void
search_sorted(const point_keys *pk, const int64_t *keys, int64_t n, int64_t base, uint32_t *sel, int64_t *nsel)
{
	for (int k = 0; k < pk->n; k++)
	{
		int64_t		lo = 0,
					hi = n;

		while (lo < hi)
		{
			int64_t		mid = lo + (hi - lo) / 2;

			if (keys[mid] < pk->v[k])
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && keys[lo] == pk->v[k]; lo++)
			sel[(*nsel)++] = (uint32_t) (lo + base);
	}
}

/*
 * Whether the page's keys are laid out sorted with nulls first; then keys[0 .. n - nulls) holds the
 * non-null keys widened to int64 (keys has room for n).
 */
static bool
page_sorted(const lt_array *vals, bool known, int64_t *keys)
{
	int64_t		n = vals->length,
				nulls = vals->null_count;

	/* keys may be the values themselves (an int64 page decoded into the cache's room): nothing to widen */

	if (nulls > 0 && !known)
	{
		if (!vals->validity)
			return false;
		for (int64_t i = 0; i < n; i++)
			if ((vals->validity[i] != 0) != (i >= nulls))
				return false;
	}
	if ((const void *) keys != (const void *) vals->values)
		lt_array_int64s(vals, n, keys);
	if (nulls > 0)
		memmove(keys, keys + nulls, (size_t) (n - nulls) * sizeof(int64_t));
	for (int64_t i = 1; !known && i < n - nulls; i++)
		if (keys[i - 1] > keys[i])
			return false;
	return true;
}

/*
 * The positions of pk's values among the page's keys (sorted, nulls first), ascending; false when
 * the page is not laid out that way (then the filter decides, key by key).
 */
static bool
search_point_keys(const point_keys *pk, lt_array *vals, uint8_t *layout, uint32_t *sel, int64_t *nsel,
				  const char *cache_key, uint64_t page_no, int64_t *decoded)
{
	int64_t		n = vals->length,
				nulls = vals->null_count;
	int64_t    *keys;
	bool		sorted;

	int64_t    *room = NULL;
	const lt_btree_page *kept = NULL;

	*nsel = 0;
	/* *layout: what an earlier lookup of this reader found of this page (0: not known yet, 1: sorted) */
	if (*layout == 2)
		return false;
	if (decoded && (const void *) vals->values == (const void *) decoded && nulls == 0)
	{
		/* the values were decoded into the cache's room: searched there, then kept without a copy */
		sorted = page_sorted(vals, *layout == 1, decoded);
		*layout = sorted ? 1 : 2;
		if (!sorted)
		{
			/* the filter reads the values: they stay the array's; the page is remembered as unsorted */
			lt_btree_pages_put(cache_key, page_no, n, nulls, false, NULL);
			return false;
		}
		search_sorted(pk, decoded, n, 0, sel, nsel);
		vals->values = NULL;	/* the room is the cache's (or freed) now */
		vals->cap = 0;
		vals->length = 0;
		lt_btree_pages_keep(cache_key, page_no, n, 0, true, decoded);
		return true;
	}
	/* kept for the next lookup of this page (whichever version of the dataset it reads): decoded in place */
	if (cache_key)
		room = lt_btree_pages_room(n > 0 ? n : 1);
	if (!(keys = room) && !(keys = lt_malloc((size_t) (n > 0 ? n : 1) * sizeof(int64_t))))
		return false;			/* the filter decides */
	sorted = page_sorted(vals, *layout == 1, keys);
	*layout = sorted ? 1 : 2;
	if (room)
		kept = lt_btree_pages_keep(cache_key, page_no, n, nulls, sorted, room);
	if (sorted)
		search_sorted(pk, kept ? kept->keys : keys, n - nulls, nulls, sel, nsel);
	if (!room)
		lt_free(keys);
	return sorted;
}

/* Add the ids of page_data rows start + sel[0 .. nsel) (ascending) to acc, reading the span they cover. */
static lt_code
add_ids(lt_seg_reader *s, uint64_t start, const uint32_t *sel, int64_t nsel, lt_rowaddr_set *acc, lt_error *err)
{
	lt_array   *ids = NULL;
	uint64_t	lo = sel[0],
				span = (uint64_t) sel[nsel - 1] - lo + 1;
	lt_code		rc;

	rc = lt_array_new(s->ids_f, &ids, err);
	if (rc == LT_OK)
		rc = lt_field_reader_read(s->ids_r, start + lo, span, ids, err);
	if (rc == LT_OK && (ids->length != (int64_t) span || ids->null_count))
		rc = lt_corrupt(err, "%s: row ids [%llu, %llu) do not decode", lt_index_file_path(s->data),
						(unsigned long long) (start + lo), (unsigned long long) (start + lo + span));
	for (int64_t k = 0; rc == LT_OK && k < nsel; k++)
		rc = lt_rowaddr_set_add(acc, ((const uint64_t *) ids->values)[sel[k] - lo], err);
	lt_array_free(ids);
	return rc;
}

/* Read page_data rows [start, start + n), evaluate the key filter, add the matching ids. */
static lt_code
scan_rows(lt_seg_reader *s, lt_filter *keyf, const point_keys *pk, uint64_t start, uint64_t n,
		  lt_rowaddr_set *acc, lt_error *err)
{
	lt_array   *vals = NULL;
	uint32_t   *sel = NULL;
	int64_t		nsel = 0;
	bool		searched = false;
	lt_code		rc = LT_OK;
	lt_array   *cols[1];
	uint64_t	page_no = start / s->batch_size;
	bool		whole_page = start % s->batch_size == 0 &&
		(n == s->batch_size || start + n == lt_index_file_rows(s->data));
	const lt_btree_page *cached = NULL;
	int64_t    *decoded = NULL;	/* the page cache's room the values are decoded into */

	if (!(sel = lt_malloc((size_t) n * sizeof(uint32_t))))
		return lt_nomem(err);
	/* one whole page, as a point lookup reads: decoded before (any version, any reader of the file)? */
	if (pk->v && whole_page)
		cached = lt_btree_pages_get(s->page_key, page_no);
	if (cached && cached->n == (int64_t) n && cached->sorted)
	{
		search_sorted(pk, cached->keys, cached->n - cached->nulls, cached->nulls, sel, &nsel);
		searched = true;
	}
	else
	{
		rc = lt_array_new(s->values_f, &vals, err);
		/*
		 * The int64 keys of a whole page a point lookup keeps are decoded into the page cache's room (copying
		 * them in was a ninth of a cold lookup); other pages get room for every row at once (grown chunk by
		 * chunk, the keys were copied by each doubling).
		 */
		if (rc == LT_OK && pk->v && whole_page && s->values_f->type == LT_TYPE_INT64 && !cached &&
			!(s->page_layout && s->page_layout[page_no] == 2) && (decoded = lt_btree_pages_room((int64_t) n)))
		{
			vals->values = (uint8_t *) decoded;
			vals->cap = (int64_t) n;
		}
		else if (rc == LT_OK)
			rc = lt_array_reserve(vals, (int64_t) n, err);
		if (rc == LT_OK)
			rc = lt_field_reader_read(s->values_r, start, n, vals, err);
		if (rc == LT_OK && vals->length != (int64_t) n)
			rc = lt_corrupt(err, "%s: rows [%llu, %llu) do not decode", lt_index_file_path(s->data),
							(unsigned long long) start, (unsigned long long) (start + n));
	}
	if (rc == LT_OK && !searched && pk->v && !(cached && !cached->sorted))
	{
		uint8_t		unknown = 0,
				   *layout = &unknown;
		uint64_t	pages = (lt_index_file_rows(s->data) + s->batch_size - 1) / s->batch_size;

		/* a whole page's layout is remembered (and its keys kept in the page cache) */
		if (whole_page)
		{
			if (!s->page_layout)
				s->page_layout = lt_calloc(pages ? pages : 1, 1);
			if (s->page_layout)
				layout = &s->page_layout[page_no];
		}
		searched = search_point_keys(pk, vals, layout, sel, &nsel, whole_page ? s->page_key : NULL, page_no, decoded);
	}
	if (rc == LT_OK && !searched)
	{
		cols[0] = vals;
		nsel = 0;
		rc = lt_filter_eval(keyf, cols, (int64_t) n, sel, &nsel, err);
	}
	/* the ids of the matching span only (a point lookup decodes one chunk of them, not the page) */
	if (rc == LT_OK && nsel > 0)
		rc = add_ids(s, start, sel, nsel, acc, err);
	if (rc != LT_OK && err && err->code == LT_EINVALID)
		err->code = LT_ECORRUPT;	/* decoders say EINVALID for impossible page metadata */
	lt_free(sel);
	lt_array_free(vals);
	return rc;
}

/*
 * Whether the lookup rows' [page_min, page_max] ascend without overlap (each page's max at most the next
 * one's min, every bound valid): then the pages that may hold a key are one run found by binary search,
 * not by evaluating the filter over every page (which grows with the table). Checked once per reader.
 */
static bool
pages_ordered(lt_seg_reader *s, int64_t pages)
{
	if (s->page_order == 0)
	{
		bool		ok = s->page_min->length >= pages && s->page_max->length >= pages;

		switch (s->page_min->field->type)
		{
			case LT_TYPE_INT8:
			case LT_TYPE_INT16:
			case LT_TYPE_INT32:
			case LT_TYPE_INT64:
			case LT_TYPE_DATE32:
				break;
			default:
				ok = false;
		}
		ok = ok && s->page_max->field->type == s->page_min->field->type;
		for (int64_t i = 0; ok && i < pages; i++)
			ok = lt_array_is_valid(s->page_min, i) && lt_array_is_valid(s->page_max, i) &&
				lt_array_int64(s->page_min, i) <= lt_array_int64(s->page_max, i) &&
				(i == 0 || lt_array_int64(s->page_max, i - 1) <= lt_array_int64(s->page_min, i));
		s->page_order = ok ? 1 : 2;
	}
	return s->page_order == 1;
}

/* The lookup rows whose [min, max] holds one of pk's (ascending) keys, ascending, into sel. */
static void
select_pages(const lt_seg_reader *s, const point_keys *pk, int64_t pages, uint32_t *sel, int64_t *nsel)
{
	int64_t		from = 0;

	*nsel = 0;
	for (int k = 0; k < pk->n; k++)
	{
		int64_t		lo = from,
					hi = pages;

		/* the first page whose max reaches the key (maxima ascend) */
		while (lo < hi)
		{
			int64_t		mid = lo + (hi - lo) / 2;

			if (lt_array_int64(s->page_max, mid) < pk->v[k])
				lo = mid + 1;
			else
				hi = mid;
		}
		/* a page an earlier key selected is not selected again */
		if (*nsel > 0 && lo <= (int64_t) sel[*nsel - 1])
			lo = (int64_t) sel[*nsel - 1] + 1;
		for (; lo < pages && lt_array_int64(s->page_min, lo) <= pk->v[k]; lo++)
			sel[(*nsel)++] = (uint32_t) lo;
		from = *nsel > 0 ? (int64_t) sel[*nsel - 1] : from;
	}
}

lt_code
lt_btree_search(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter, lt_rowaddr_set *acc,
				lt_index_stats *st, lt_error *err)
{
	const lt_field *cols[3] = {s->page_min->field, s->page_max->field, s->page_nulls->field};
	lt_array   *arrs[3] = {s->page_min, s->page_max, s->page_nulls};
	lt_filter  *pagef = NULL,
			   *keyf = NULL;
	uint64_t	pages = lt_index_file_rows(s->lookup);
	uint64_t	rows = lt_index_file_rows(s->data);
	uint32_t   *sel = NULL;
	uint64_t   *cand = NULL;
	int64_t		nsel = 0;
	point_keys	pk = {NULL, 0};
	lt_code		rc;

	rc = lt_index_copy_filter(filter, s->values_f, &keyf, err);
	if (rc == LT_OK)
		rc = get_point_keys(keyf, s->values_f, &pk, err);
	if (rc == LT_OK && pages > 0)
	{
		sel = lt_malloc((size_t) pages * sizeof(uint32_t));
		cand = lt_malloc((size_t) pages * sizeof(uint64_t));
		if (!sel || !cand)
			rc = lt_nomem(err);
		if (rc == LT_OK && pk.v && pages_ordered(s, (int64_t) pages))
			select_pages(s, &pk, (int64_t) pages, sel, &nsel);
		else if (rc == LT_OK && (rc = lt_index_prune_filter(filter, cols, false, &pagef, err)) == LT_OK)
			rc = lt_filter_eval(pagef, arrs, (int64_t) pages, sel, &nsel, err);
	}
	for (int64_t k = 0; rc == LT_OK && k < nsel; k++)
		cand[k] = lt_index_uint_at(s->page_idx, sel[k]);
	if (rc == LT_OK && nsel > 1)
		qsort(cand, (size_t) nsel, sizeof(uint64_t), lt_cmp_u64);
	if (st)
	{
		st->pages_total += pages;
		st->pages_read += (uint64_t) nsel;
	}
	/* read runs of adjacent candidate pages together */
	for (int64_t k = 0; rc == LT_OK && k < nsel;)
	{
		int64_t		j = k;
		uint64_t	start,
					end;

		while (j + 1 < nsel && cand[j + 1] == cand[j] + 1 && (uint64_t) (j + 1 - k) * s->batch_size < 65536)
			j++;
		start = cand[k] * s->batch_size;
		end = (cand[j] + 1) * s->batch_size;
		if (end > rows)
			end = rows;
		rc = scan_rows(s, keyf, &pk, start, end - start, acc, err);
		k = j + 1;
		/* a duplicate page index would be read twice: harmless, the set dedups */
	}
	lt_free(sel);
	lt_free(cand);
	lt_free(pk.v);
	lt_filter_free(pagef);
	lt_filter_free(keyf);
	return rc;
}

/* Slot i of a and b (same type, both valid) holds the same bytes. */
static bool
same_slot(const lt_array *a, const lt_array *b, int64_t i)
{
	if (a->offsets && b->offsets)
		return a->offsets[i + 1] - a->offsets[i] == b->offsets[i + 1] - b->offsets[i] &&
			memcmp(a->data + a->offsets[i], b->data + b->offsets[i], (size_t) (a->offsets[i + 1] - a->offsets[i])) == 0;
	if (a->offsets || b->offsets || lt_type_byte_width(a->field) <= 0)
		return false;
	return memcmp(a->values + (size_t) i * (size_t) lt_type_byte_width(a->field),
				  b->values + (size_t) i * (size_t) lt_type_byte_width(a->field),
				  (size_t) lt_type_byte_width(a->field)) == 0;
}

lt_code
lt_btree_distinct(lt_seg_reader *s, double *distinct, double *rows)
{
	uint64_t	pages = lt_index_file_rows(s->lookup);
	uint64_t	total = lt_index_file_rows(s->data);
	bool		ints = false;

	if (s->distinct_known)
	{
		*distinct += s->distinct_sum;
		*rows += s->rows_sum;
		return LT_OK;
	}
	switch (s->page_min->field->type)
	{
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_DATE32:
			ints = true;
			break;
		default:
			break;
	}
	for (uint64_t i = 0; i < pages; i++)
	{
		uint64_t	p = lt_index_uint_at(s->page_idx, (int64_t) i);
		uint64_t	n = total - p * s->batch_size < s->batch_size ? total - p * s->batch_size : s->batch_size;
		uint64_t	nulls = lt_index_uint_at(s->page_nulls, (int64_t) i);
		double		live = nulls < n ? (double) (n - nulls) : 0;
		double		d = live;

		if (live > 0 && lt_array_is_valid(s->page_min, (int64_t) i) && lt_array_is_valid(s->page_max, (int64_t) i))
		{
			if (ints)
			{
				double		span = (double) lt_array_int64(s->page_max, (int64_t) i) - (double) lt_array_int64(s->page_min, (int64_t) i) + 1;

				d = span < live ? span : live;
			}
			else if (same_slot(s->page_min, s->page_max, (int64_t) i))
				d = 1;
		}
		s->distinct_sum += d;
		s->rows_sum += live;
	}
	s->distinct_known = true;
	*distinct += s->distinct_sum;
	*rows += s->rows_sum;
	return LT_OK;
}
