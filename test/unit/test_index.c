/*
 * Unit tests of scalar index reading (lt_index*.c) and the row-address set
 * operations it relies on.
 *
 * Real data: test/data/indexed, made by `node test/interop/ref.mjs make` from
 * test/data/indexed.spec.json — btree (id, 3 pages; f, floats with NaN,
 * infinities and -0), bitmap (k) and label_list (tags) indexes over fragments
 * 0 and 1, then fragment 2 appended (unindexed) and a delete.  The oracle for
 * every lookup is the fragment scanner with the same filter (lt_filter's own
 * semantics), restricted to the covered fragments.
 */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>

#include "unit.h"

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "table/lt_dataset.h"
#include "index/lt_index.h"
#include "index/lt_btree_pages.h"
#include "index/lt_index_int.h"
#include "index/lt_index_write.h"
#include "txn/lt_txn_index.h"
#include "table/lt_scan.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_table.pb-c.h"
#include "file/lt_writer.h"

static lt_error err;

static lt_value
vint(int64_t i)
{
	lt_value	v = {.kind = LT_VALUE_INT};

	v.v.i = i;
	return v;
}

static lt_value
vflt(double d)
{
	lt_value	v = {.kind = LT_VALUE_FLOAT};

	v.v.f = d;
	return v;
}

static lt_value
vbytes(const char *s)
{
	lt_value	v = {.kind = LT_VALUE_BYTES};

	v.v.bytes.ptr = (const uint8_t *) s;
	v.v.bytes.len = strlen(s);
	return v;
}

static lt_value
vnull(void)
{
	lt_value	v = {.kind = LT_VALUE_NULL};

	return v;
}

/* Deterministic pseudo-random numbers (xorshift). */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t
rnd(void)
{
	return unit_xorshift(&rng);
}
static int
rndn(int n)
{
	return (int) (rnd() % (uint64_t) n);
}

/* --- dataset helpers ---------------------------------------------------------- */

static lt_dataset *
open_indexed(lt_store **store)
{
	char		root[1024];
	lt_version_spec spec = {0};
	lt_dataset *ds = NULL;

	snprintf(root, sizeof(root), "%s/indexed", unit_data_dir());
	CHECK_OK(lt_store_local_open(root, store, &err), err);
	if (*store)
		CHECK_OK(lt_dataset_open(*store, "", &spec, &ds, &err), err);
	return ds;
}

/* Addresses where the filter is TRUE in the listed fragments (all when frags is NULL), by scanning. */
static lt_rowaddr_set *
scan_filter(lt_dataset *ds, lt_filter *f, const uint32_t *frags, size_t nfrags)
{
	lt_rowaddr_set *s = lt_rowaddr_set_create();

	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *fr = ds->fragments[i];
		lt_scan_options o = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;
		bool		want = frags == NULL;

		for (size_t k = 0; frags && k < nfrags; k++)
			want |= frags[k] == fr->id;
		if (!want)
			continue;
		o.n_fields = 1;
		o.fields = lt_filter_columns(f);
		o.filter = f;
		CHECK_OK(lt_fragment_scanner_open(ds, fr, &o, &sc, &err), err);
		if (!sc)
			continue;
		while (lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
			for (int64_t r = 0; r < b->length; r++)
				lt_rowaddr_set_add(s, b->row_addrs[r], &err);
		lt_fragment_scanner_free(sc);
	}
	return s;
}

static bool
set_equal(const lt_rowaddr_set *a, const lt_rowaddr_set *b)
{
	lt_rowaddr_set *x = lt_rowaddr_set_copy(a),
			   *y = lt_rowaddr_set_copy(b);
	bool		eq;

	lt_rowaddr_set_andnot(x, b, &err);
	lt_rowaddr_set_andnot(y, a, &err);
	eq = lt_rowaddr_set_is_empty(x) && lt_rowaddr_set_is_empty(y);
	lt_rowaddr_set_free(x);
	lt_rowaddr_set_free(y);
	return eq;
}

/* --- random filters over one column --------------------------------------------- */

typedef struct gen
{
	lt_filter  *f;
	lt_type_id	t;
	int			next_slot;
} gen;

static lt_value
rand_value(gen *g)
{
	static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e21, 5e-324, 0.30000000000000004};

	if (rndn(25) == 0)
		return vnull();
	switch (g->t)
	{
		case LT_TYPE_INT64:
			return vint(rndn(10100) - 50);
		case LT_TYPE_INT32:
			return rndn(4) ? vint(rndn(18) - 1) : vflt(rndn(40) / 2.0 - 1);
		default:
			if (rndn(3) == 0)
				return vflt(specials[rndn(8)]);
			if (rndn(4) == 0)
				return vint(rndn(80000) - 40000);
			return vflt((rndn(2000000) - 1000000) / 25.0);
	}
}

static lt_expr *
rand_leaf(gen *g)
{
	lt_filter  *f = g->f;
	lt_expr    *x = lt_expr_column(f, 0, &err);
	lt_value	v = rand_value(g),
				w;

	switch (rndn(7))
	{
		case 0:
		case 1:
			return lt_expr_cmp(f, (lt_cmp_op) rndn(6), x, lt_expr_const(f, &v, &err), &err);
		case 2:
			{
				/* a scalar parameter */
				int			slot = g->next_slot++;
				lt_value_kind k = g->t == LT_TYPE_FLOAT64 ? LT_VALUE_FLOAT : LT_VALUE_INT;
				lt_expr    *p = lt_expr_param(f, slot, k, &err);

				if (v.kind != LT_VALUE_NULL && v.kind != k)
					v = k == LT_VALUE_INT ? vint((int64_t) (v.kind == LT_VALUE_FLOAT && fabs(v.v.f) < 9e18 ? v.v.f : 3))
						: vflt((double) v.v.i);
				lt_filter_set_param(f, slot, &v, &err);
				return lt_expr_cmp(f, (lt_cmp_op) rndn(6), x, p, &err);
			}
		case 3:
			w = rand_value(g);
			return lt_expr_between(f, x, lt_expr_const(f, &v, &err), lt_expr_const(f, &w, &err), &err);
		case 4:
			{
				lt_expr    *items[6];
				int			n = rndn(6);

				for (int i = 0; i < n; i++)
				{
					lt_value	u = rand_value(g);

					items[i] = lt_expr_const(f, &u, &err);
				}
				return lt_expr_in(f, x, n, items, &err);
			}
		case 5:
			{
				/* = ANY($array) */
				int			slot = g->next_slot++;
				lt_value_kind k = g->t == LT_TYPE_FLOAT64 ? LT_VALUE_FLOAT : LT_VALUE_INT;
				lt_value	vals[4];
				int			n = rndn(4);
				lt_expr    *e = lt_expr_in_param(f, x, slot, k, &err);

				for (int i = 0; i < n; i++)
					vals[i] = k == LT_VALUE_INT ? vint(g->t == LT_TYPE_INT64 ? rndn(10000) : rndn(17))
						: vflt(rndn(3) ? (rndn(2000) - 1000) / 4.0 : NAN);
				if (rndn(10) == 0)
					lt_filter_set_param(f, slot, &(lt_value) {.kind = LT_VALUE_NULL}, &err);
				else
					lt_filter_set_param_array(f, slot, n, vals, &err);
				return e;
			}
		default:
			return lt_expr_is_null(f, x, rndn(2), &err);
	}
}

static lt_expr *
rand_expr(gen *g, int depth)
{
	lt_expr    *args[3];

	if (depth == 0 || rndn(3) == 0)
		return rand_leaf(g);
	switch (rndn(3))
	{
		case 0:
			return lt_expr_not(g->f, rand_expr(g, depth - 1), &err);
		case 1:
			args[0] = rand_expr(g, depth - 1);
			args[1] = rand_expr(g, depth - 1);
			args[2] = rand_expr(g, depth - 1);
			return lt_expr_and(g->f, 2 + rndn(2), args, &err);
		default:
			args[0] = rand_expr(g, depth - 1);
			args[1] = rand_expr(g, depth - 1);
			return lt_expr_or(g->f, 2, args, &err);
	}
}

/* --- tests ---------------------------------------------------------------------- */

TEST(metadata)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_index_list *l = NULL;
	const lt_index *ix;

	if (!ds)
		return;
	CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
	CHECK_EQ_INT(l->n, 4);
	ix = lt_index_list_find(l, "id_idx");
	CHECK(ix && ix->kind == LT_INDEX_BTREE && !ix->unusable && ix->field == ds->schema->fields[0]);
	if (ix)
	{
		CHECK_EQ_INT(ix->n_segments, 1);
		CHECK_EQ_INT(ix->segments[0].n_fragments, 2);
		CHECK_EQ_INT(ix->segments[0].index_version, 0);
		CHECK_EQ_INT(strlen(ix->segments[0].uuid), 36);
		CHECK_EQ_INT(ix->n_covered, 2);
		CHECK_EQ_INT(ix->n_unindexed, 1);
		CHECK_EQ_INT(ix->unindexed[0], 2);
		CHECK(lt_index_covers(ix, 0) && lt_index_covers(ix, 1) && !lt_index_covers(ix, 2));
	}
	ix = lt_index_list_find(l, "k_idx");
	CHECK(ix && ix->kind == LT_INDEX_BITMAP && !ix->unusable);
	ix = lt_index_list_find(l, "tags_idx");
	CHECK(ix && ix->kind == LT_INDEX_LABEL_LIST && !ix->unusable);
	if (ix)
		CHECK_EQ_INT(ix->segments[0].index_version, 1);
	CHECK(lt_index_list_for_field(l, ds->schema->fields[2]->id, LT_INDEX_BTREE) == lt_index_list_find(l, "f_idx"));
	CHECK(lt_index_list_for_field(l, ds->schema->fields[2]->id, LT_INDEX_BITMAP) == NULL);
	CHECK(lt_index_list_find(l, "nope") == NULL);
	CHECK_EQ_INT(strcmp(lt_index_kind_name(LT_INDEX_ZONEMAP), "zonemap"), 0);
	lt_index_list_free(l);

	/* an unknown kind or version is listed but unusable; a bad fragment bitmap is corrupt */
	{
		Lt__Pb__IndexMetadata *m = ds->index_section->indices[0];
		char	   *url = m->index_details->type_url;
		uint8_t		saved = m->fragment_bitmap.data[0];
		lt_index_reader *r;

		m->index_details->type_url = "/lance.table.VectorIndexDetails";
		CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
		ix = lt_index_list_find(l, m->name);
		CHECK(ix && ix->kind == LT_INDEX_UNKNOWN && ix->unusable);
		CHECK_CODE(lt_index_open(ds, ix, &r, &err), LT_EUNSUPPORTED);
		lt_index_list_free(l);
		m->index_details->type_url = url;

		m->index_version = 7;
		CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
		ix = lt_index_list_find(l, m->name);
		CHECK(ix && ix->unusable && strstr(ix->unusable, "version"));
		lt_index_list_free(l);
		m->index_version = 0;

		m->fragment_bitmap.data[0] ^= 0x55;
		CHECK_CODE(lt_dataset_indexes(ds, &l, &err), LT_ECORRUPT);
		CHECK(strstr(err.msg, "fragment bitmap") && strstr(err.msg, "manifest"));
		m->fragment_bitmap.data[0] = saved;
	}
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* Random filters on one indexed column: the index answers what a filtered scan of the covered fragments finds. */
static void
random_lookups_in(lt_dataset *ds, const char *index_name, int rounds, bool exact_index, int *nonempty)
{
	lt_index_list *l = NULL;
	const lt_index *ix;
	lt_index_reader *r = NULL;

	CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
	ix = lt_index_list_find(l, index_name);
	CHECK(ix != NULL);
	if (ix)
		CHECK_OK(lt_index_open(ds, ix, &r, &err), err);
	for (int q = 0; r && q < rounds; q++)
	{
		gen			g = {NULL, ix->field->type, 0};
		lt_expr    *root;
		lt_rowaddr_set *got = NULL,
				   *want;
		bool		exact = false;
		lt_index_stats st;

		CHECK_OK(lt_filter_new(1, &ix->field, &g.f, &err), err);
		root = rand_expr(&g, 3);
		CHECK(root != NULL);
		if (!root)
		{
			fprintf(stderr, "  %s\n", err.msg);
			lt_filter_free(g.f);
			continue;
		}
		CHECK_OK(lt_filter_set_root(g.f, root, &err), err);
		CHECK_OK(lt_index_search(r, g.f, &got, &exact, &st, &err), err);
		want = scan_filter(ds, g.f, ix->covered, ix->n_covered);
		CHECK(exact == exact_index);
		if (got && !exact)
		{
			/* "at most": every matching row is a candidate */
			lt_rowaddr_set *missed = lt_rowaddr_set_copy(want);

			CHECK_OK(lt_rowaddr_set_andnot(missed, got, &err), err);
			CHECK(missed && lt_rowaddr_set_is_empty(missed));
			lt_rowaddr_set_free(missed);
		}
		else if (got && !set_equal(got, want))
		{
			char	   *txt = lt_filter_render(g.f);

			CHECK(!"index lookup differs from the filtered scan");
			fprintf(stderr, "  %s: %s: index %llu rows, scan %llu rows\n", index_name, txt,
					(unsigned long long) lt_rowaddr_set_cardinality(got, NULL),
					(unsigned long long) lt_rowaddr_set_cardinality(want, NULL));
			lt_free(txt);
		}
		if (want && !lt_rowaddr_set_is_empty(want))
			(*nonempty)++;
		CHECK(st.pages_read <= st.pages_total);
		lt_rowaddr_set_free(got);
		lt_rowaddr_set_free(want);
		lt_filter_free(g.f);
	}
	lt_index_close(r);
	lt_index_list_free(l);
}

static void
random_lookups(const char *index_name, int rounds, int *nonempty)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);

	if (!ds)
		return;
	random_lookups_in(ds, index_name, rounds, true, nonempty);
	lt_dataset_close(ds);
	lt_store_close(store);
}

TEST(btree_random)
{
	int			nonempty = 0;

	random_lookups("id_idx", 300, &nonempty);
	CHECK(nonempty > 100);		/* the oracle is not vacuous */
	nonempty = 0;
	random_lookups("f_idx", 300, &nonempty);
	CHECK(nonempty > 100);
}

TEST(bitmap_random)
{
	int			nonempty = 0;

	random_lookups("k_idx", 300, &nonempty);
	CHECK(nonempty > 100);
}

/* A point lookup reads one btree page; a deleted row is never returned. */
TEST(btree_pruning_and_deletions)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_index_list *l = NULL;
	lt_index_reader *r = NULL;
	const lt_field *id;
	lt_filter  *f;
	lt_value	v;
	lt_rowaddr_set *got = NULL;
	bool		exact;
	lt_index_stats st;
	uint32_t   *offs = NULL;
	uint64_t	n = 0;

	if (!ds)
		return;
	id = ds->schema->fields[0];
	CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
	CHECK_OK(lt_index_open(ds, lt_index_list_find(l, "id_idx"), &r, &err), err);
	if (!r)
		return;
	CHECK_OK(lt_filter_new(1, &id, &f, &err), err);
	v = vint(6000);				/* fragment 1 (4500 rows each), page 1 of 3 */
	CHECK_OK(lt_filter_set_root(f, lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_const(f, &v, &err),
											   &err), &err), err);
	CHECK_OK(lt_index_search(r, f, &got, &exact, &st, &err), err);
	CHECK_EQ_INT(st.pages_total, 3);
	CHECK_EQ_INT(st.pages_read, 1);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(got, NULL), 1);
	CHECK(lt_rowaddr_set_contains(got, ((uint64_t) 1 << 32) | 1500));
	CHECK_OK(lt_rowaddr_set_fragment_offsets(got, 1, &offs, &n, &err), err);
	CHECK(n == 1 && offs && offs[0] == 1500);
	lt_free(offs);
	lt_rowaddr_set_free(got);
	lt_filter_free(f);

	/* id % 9 = 4 was deleted after the index was built: id 13 is gone, id 14 is there */
	CHECK_OK(lt_filter_new(1, &id, &f, &err), err);
	{
		lt_value	items[2] = {vint(13), vint(14)};
		lt_expr    *e[2] = {lt_expr_const(f, &items[0], &err), lt_expr_const(f, &items[1], &err)};

		CHECK_OK(lt_filter_set_root(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 2, e, &err), &err), err);
	}
	CHECK_OK(lt_index_search(r, f, &got, &exact, &st, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(got, NULL), 1);
	CHECK(lt_rowaddr_set_contains(got, 14));
	CHECK_EQ_INT(st.rows_deleted, 1);
	lt_rowaddr_set_free(got);
	lt_filter_free(f);

	/* the appended fragment is not in the index's answer (the caller scans it) */
	CHECK_OK(lt_filter_new(1, &id, &f, &err), err);
	v = vint(9000);
	CHECK_OK(lt_filter_set_root(f, lt_expr_cmp(f, LT_CMP_GE, lt_expr_column(f, 0, &err), lt_expr_const(f, &v, &err),
											   &err), &err), err);
	CHECK_OK(lt_index_search(r, f, &got, &exact, &st, &err), err);
	CHECK(got && lt_rowaddr_set_is_empty(got));
	lt_rowaddr_set_free(got);

	/* a filter over another column, or over two columns, is refused */
	{
		const lt_field *two[2] = {ds->schema->fields[1], id};
		lt_filter  *g;

		CHECK_OK(lt_filter_new(1, &two[0], &g, &err), err);
		CHECK_OK(lt_filter_set_root(g, lt_expr_is_null(g, lt_expr_column(g, 0, &err), false, &err), &err), err);
		CHECK_CODE(lt_index_search(r, g, &got, &exact, &st, &err), LT_EINVALID);
		lt_filter_free(g);
		CHECK_OK(lt_filter_new(2, two, &g, &err), err);
		CHECK_OK(lt_filter_set_root(g, lt_expr_is_null(g, lt_expr_column(g, 1, &err), false, &err), &err), err);
		CHECK_CODE(lt_index_search(r, g, &got, &exact, &st, &err), LT_EINVALID);
		lt_filter_free(g);
	}
	/* label lookups on a btree are refused */
	CHECK_CODE(lt_index_search_labels(r, LT_LABEL_HAS_ANY, 0, NULL, &got, &st, &err), LT_EUNSUPPORTED);
	lt_filter_free(f);
	lt_index_close(r);
	lt_index_list_free(l);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* Visit every row of the list column in the covered fragments: cb(list array, row, address, arg). */
typedef void (*row_cb) (const lt_array *lists, int64_t row, uint64_t addr, void *arg);

static void
each_list_row(lt_dataset *ds, const lt_index *ix, row_cb cb, void *arg)
{
	const lt_field *tags = ix->field;

	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		lt_scan_options o = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;

		if (!lt_index_covers(ix, (uint32_t) ds->fragments[i]->id))
			continue;
		o.n_fields = 1;
		o.fields = &tags;
		CHECK_OK(lt_fragment_scanner_open(ds, ds->fragments[i], &o, &sc, &err), err);
		while (sc && lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
			for (int64_t row = 0; row < b->length; row++)
				cb(b->columns[0], row, b->row_addrs[row], arg);
		lt_fragment_scanner_free(sc);
	}
}

typedef struct vocab
{
	char		w[64][16];
	int			n;
} vocab;

static void
vocab_cb(const lt_array *a, int64_t row, uint64_t addr, void *arg)
{
	vocab	   *v = arg;
	const lt_array *it = a->children[0];

	if (!lt_array_is_valid(a, row))
		return;
	for (int64_t e = a->offsets[row]; e < a->offsets[row + 1] && v->n < 64; e++)
	{
		int64_t		len = it->offsets[e + 1] - it->offsets[e];
		bool		seen = false;

		if (!lt_array_is_valid(it, e) || len >= 16)
			continue;
		for (int k = 0; k < v->n; k++)
			seen |= strlen(v->w[k]) == (size_t) len && !memcmp(v->w[k], it->data + it->offsets[e], (size_t) len);
		if (!seen)
		{
			memcpy(v->w[v->n], it->data + it->offsets[e], (size_t) len);
			v->w[v->n++][len] = '\0';
		}
	}
}

typedef struct label_q
{
	lt_label_op op;
	int			n;
	const lt_value *vals;
	lt_rowaddr_set *want;
} label_q;

/* Postgres's @> / && on one row: a NULL list matches nothing, a NULL value is never contained */
static void
label_cb(const lt_array *a, int64_t row, uint64_t addr, void *arg)
{
	label_q    *q = arg;
	const lt_array *it = a->children[0];
	bool		all = true,
				any = false;

	if (!lt_array_is_valid(a, row))
		return;
	for (int k = 0; k < q->n; k++)
	{
		bool		hit = false;

		for (int64_t e = a->offsets[row]; q->vals[k].kind == LT_VALUE_BYTES && e < a->offsets[row + 1]; e++)
			hit |= lt_array_is_valid(it, e) &&
				(size_t) (it->offsets[e + 1] - it->offsets[e]) == q->vals[k].v.bytes.len &&
				!memcmp(it->data + it->offsets[e], q->vals[k].v.bytes.ptr, q->vals[k].v.bytes.len);
		all &= hit;
		any |= hit;
	}
	if (q->op == LT_LABEL_HAS_ALL ? all : any)
		lt_rowaddr_set_add(q->want, addr, &err);
}

/* label_list lookups against the list column scanned by hand. */
TEST(label_list)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_index_list *l = NULL;
	lt_index_reader *r = NULL;
	const lt_index *ix;
	vocab		voc = {.n = 0};
	int			nonempty = 0;

	if (!ds)
		return;
	CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
	ix = lt_index_list_find(l, "tags_idx");
	CHECK_OK(lt_index_open(ds, ix, &r, &err), err);
	if (!r)
		return;
	/* scalar filters are not a label_list's business */
	{
		lt_filter  *f;
		lt_rowaddr_set *got;
		bool		exact;

		CHECK_OK(lt_filter_new(1, &ix->field, &f, &err), err);
		CHECK_OK(lt_filter_set_root(f, lt_expr_is_null(f, lt_expr_column(f, 0, &err), false, &err), &err), err);
		CHECK_CODE(lt_index_search(r, f, &got, &exact, NULL, &err), LT_EUNSUPPORTED);
		lt_filter_free(f);
	}
	each_list_row(ds, ix, vocab_cb, &voc);
	CHECK(voc.n >= 5);
	for (int round = 0; voc.n > 0 && round < 150; round++)
	{
		lt_value	vals[3];
		label_q		q = {rndn(2) ? LT_LABEL_HAS_ALL : LT_LABEL_HAS_ANY, rndn(4), vals, lt_rowaddr_set_create()};
		lt_rowaddr_set *got = NULL;

		/* vocabulary words, a word that is not there, rarely NULL */
		for (int k = 0; k < q.n; k++)
			vals[k] = rndn(12) == 0 ? vnull() : rndn(8) == 0 ? vbytes("qqqqq") : vbytes(voc.w[rndn(voc.n)]);
		each_list_row(ds, ix, label_cb, &q);
		CHECK_OK(lt_index_search_labels(r, q.op, q.n, vals, &got, NULL, &err), err);
		if (got && !set_equal(got, q.want))
		{
			CHECK(!"label lookup differs from the scan");
			fprintf(stderr, "  %s of %d values: index %llu, scan %llu\n", q.op == LT_LABEL_HAS_ALL ? "all" : "any",
					q.n, (unsigned long long) lt_rowaddr_set_cardinality(got, NULL),
					(unsigned long long) lt_rowaddr_set_cardinality(q.want, NULL));
		}
		if (got && !lt_rowaddr_set_is_empty(got))
			nonempty++;
		lt_rowaddr_set_free(got);
		lt_rowaddr_set_free(q.want);
	}
	CHECK(nonempty > 30);
	lt_index_close(r);
	lt_index_list_free(l);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/*
 * Page and zone tests never drop a page holding a matching value: random pages
 * (sorted like a btree's, or unsorted zones) with nulls, NaN, -0, and random
 * expressions; each page's summary is computed the way Lance writes it.
 */
TEST(prune_property)
{
	const lt_field *fld;
	lt_schema  *schema;
	lt_field	ff = {0},
				fnull = {0},
				fnan = {0};
	int			kept = 0,
				dropped = 0;

	/* fields: a float64 key, uint32 counts */
	(void) schema;
	(void) fld;
	ff.name = "x";
	ff.type = LT_TYPE_FLOAT64;
	ff.byte_width = 8;
	ff.nullable = true;
	fnull.name = "null_count";
	fnull.type = LT_TYPE_UINT32;
	fnull.byte_width = 4;
	fnan = fnull;
	fnan.name = "nan_count";

	for (int round = 0; round < 400; round++)
	{
		bool		zones = round % 2;
		int			npages = 12,
					per = 1 + rndn(6);
		int64_t		total = npages * per;
		lt_array   *vals,
				   *mn,
				   *mx,
				   *nc,
				   *nn;
		lt_filter  *src,
				   *pf = NULL;
		gen			g = {NULL, LT_TYPE_FLOAT64, 0};
		lt_expr    *root;
		double	   *v;
		uint8_t    *valid;
		const lt_field *cols[4] = {&ff, &ff, &fnull, &fnan};
		lt_array   *arrs[4];
		const uint8_t *pmask = NULL,
				   *vmask = NULL;

		lt_array_new(&ff, &vals, &err);
		lt_array_new(&ff, &mn, &err);
		lt_array_new(&ff, &mx, &err);
		lt_array_new(&fnull, &nc, &err);
		lt_array_new(&fnan, &nn, &err);
		v = calloc((size_t) total, sizeof(double));
		valid = calloc((size_t) total, 1);
		for (int64_t i = 0; i < total; i++)
		{
			static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0};

			valid[i] = rndn(6) != 0;
			v[i] = rndn(4) == 0 ? sp[rndn(5)] : (rndn(400) - 200) / 4.0;
		}
		if (!zones)
		{
			/* btree: one sorted run, nulls first, NaN last (Postgres's order; -0 and 0 in either order) */
			for (int64_t i = 1; i < total; i++)
				for (int64_t j = i; j > 0; j--)
				{
					bool		a_null = !valid[j - 1],
								b_null = !valid[j];
					double		a = v[j - 1],
								b = v[j];
					bool		gt = !a_null && (b_null || (isnan(a) && !isnan(b)) || (!isnan(a) && !isnan(b) && a > b));

					if (!gt)
						break;
					v[j - 1] = b;
					v[j] = a;
					valid[j - 1] = !b_null;
					valid[j] = !a_null;
				}
		}
		lt_array_reserve(vals, total, &err);
		lt_array_ensure_validity(vals, &err);
		memcpy(vals->values, v, (size_t) total * 8);
		memcpy(vals->validity, valid, (size_t) total);
		vals->length = total;
		for (int64_t i = 0; i < total; i++)
			vals->null_count += !valid[i];
		lt_array_reserve(mn, npages, &err);
		lt_array_reserve(mx, npages, &err);
		lt_array_ensure_validity(mn, &err);
		lt_array_ensure_validity(mx, &err);
		lt_array_reserve(nc, npages, &err);
		lt_array_reserve(nn, npages, &err);
		for (int p = 0; p < npages; p++)
		{
			uint32_t	nulls = 0,
						nans = 0;
			bool		have = false;
			double		lo = 0,
						hi = 0;

			for (int k = 0; k < per; k++)
			{
				int64_t		i = (int64_t) p * per + k;

				if (!valid[i])
				{
					nulls++;
					continue;
				}
				if (zones && isnan(v[i]))
				{
					nans++;		/* zone extrema leave NaN out (at worst) */
					continue;
				}
				if (!have || (isnan(lo) ? false : (isnan(v[i]) ? false : v[i] < lo)))
					lo = !have ? v[i] : v[i] < lo ? v[i] : lo;
				if (!have || isnan(v[i]) || (!isnan(hi) && v[i] > hi))
					hi = v[i];
				have = true;
			}
			if (!zones)
			{
				/* btree pages: first and last value of the sorted run */
				int64_t		a = (int64_t) p * per,
							b = a + per - 1;

				((double *) mn->values)[p] = v[a];
				mn->validity[p] = valid[a];
				((double *) mx->values)[p] = v[b];
				mx->validity[p] = valid[b];
			}
			else
			{
				((double *) mn->values)[p] = lo;
				((double *) mx->values)[p] = hi;
				mn->validity[p] = mx->validity[p] = have;
			}
			mn->null_count += !mn->validity[p];
			mx->null_count += !mx->validity[p];
			((uint32_t *) nc->values)[p] = nulls;
			((uint32_t *) nn->values)[p] = nans;
		}
		mn->length = mx->length = nc->length = nn->length = npages;

		CHECK_OK(lt_filter_new(1, cols, &src, &err), err);
		g.f = src;
		root = rand_expr(&g, 3);
		CHECK_OK(lt_filter_set_root(src, root, &err), err);
		CHECK_OK(lt_index_prune_filter(src, cols, zones, &pf, &err), err);
		arrs[0] = mn;
		arrs[1] = mx;
		arrs[2] = nc;
		arrs[3] = nn;
		if (pf)
		{
			uint8_t    *pm = malloc((size_t) npages);
			lt_array   *va[1] = {vals};

			CHECK_OK(lt_filter_eval_mask(pf, arrs, npages, &pmask, &err), err);
			memcpy(pm, pmask, (size_t) npages);
			CHECK_OK(lt_filter_eval_mask(src, va, total, &vmask, &err), err);
			for (int p = 0; p < npages; p++)
			{
				bool		any = false;

				for (int k = 0; k < per; k++)
					any |= vmask[p * per + k] != 0;
				if (any && !pm[p])
				{
					char	   *txt = lt_filter_render(src);

					CHECK(!"a page with a matching value was pruned");
					fprintf(stderr, "  %s page %d: %s\n", zones ? "zone" : "btree", p, txt);
					lt_free(txt);
				}
				kept += pm[p] != 0;
				dropped += !pm[p];
			}
			free(pm);
		}
		lt_filter_free(pf);
		lt_filter_free(src);
		free(v);
		free(valid);
		lt_array_free(vals);
		lt_array_free(mn);
		lt_array_free(mx);
		lt_array_free(nc);
		lt_array_free(nn);
	}
	CHECK(dropped > 500);		/* pruning does prune */
	CHECK(kept > 500);
}

/*
 * Zone lookups end to end from decoded zone columns (the reference's JavaScript
 * binding cannot write zonemap files, so the file layer is not exercised here):
 * candidate zones become row ranges of their fragments, deleted rows drop out,
 * fragments the dataset no longer has are ignored.
 */
static lt_array *
u_array(const lt_field *f, int n, const uint64_t *v)
{
	lt_array   *a;

	lt_array_new(f, &a, &err);
	lt_array_reserve(a, n, &err);
	for (int i = 0; i < n; i++)
	{
		if (f->type == LT_TYPE_UINT32)
			((uint32_t *) a->values)[i] = (uint32_t) v[i];
		else
			((uint64_t *) a->values)[i] = v[i];
	}
	a->length = n;
	return a;
}

TEST(zonemap_search)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_field	f32 = {.name = "c", .type = LT_TYPE_UINT32, .byte_width = 4};
	lt_field	f64 = {.name = "c", .type = LT_TYPE_UINT64, .byte_width = 8};
	lt_index	ix = {0};
	lt_index_segment seg = {0};
	uint32_t	seg_frags[3] = {0, 1, 5};	/* 5 does not exist */
	uint32_t	covered[2] = {0, 1};
	lt_index_reader r = {0};
	lt_seg_reader s = {0};
	lt_file		zf = {0};
	lt_index_file zx = {0};
	/* zones of fragment 0 (rows 0..4499) and 1, on id */
	const int	nz = 5;
	int64_t		mins[5] = {0, 2000, 4500, 7000, 20000};
	int64_t		maxs[5] = {1999, 4499, 6999, 8999, 20001};
	uint64_t	nulls[5] = {0, 0, 0, 0, 0},
				nans[5] = {0},
				frag[5] = {0, 0, 1, 1, 5},
				start[5] = {0, 2000, 0, 2500, 0},
				len[5] = {2000, 2500, 2500, 2000, 2};
	lt_filter  *f;
	lt_value	v;
	lt_rowaddr_set *got = NULL;
	bool		exact = true;
	lt_index_stats st;

	if (!ds)
		return;
	ix.name = "zones";
	ix.kind = LT_INDEX_ZONEMAP;
	ix.field = ds->schema->fields[0];
	ix.n_segments = 1;
	ix.segments = &seg;
	ix.covered = covered;
	ix.n_covered = 2;
	seg.fragments = seg_frags;
	seg.n_fragments = 3;
	zf.num_rows = nz;
	zx.f = &zf;
	r.ds = ds;
	r.idx = &ix;
	r.n_segs = 1;
	r.segs = &s;
	s.seg = &seg;
	s.dir = "unused/";
	s.zm = &zx;
	s.frags = lt_rowaddr_set_create();
	lt_rowaddr_set_add_fragment(s.frags, 0, &err);
	lt_rowaddr_set_add_fragment(s.frags, 1, &err);
	lt_array_new(ix.field, &s.z_min, &err);
	lt_array_new(ix.field, &s.z_max, &err);
	lt_array_reserve(s.z_min, nz, &err);
	lt_array_reserve(s.z_max, nz, &err);
	memcpy(s.z_min->values, mins, sizeof(mins));
	memcpy(s.z_max->values, maxs, sizeof(maxs));
	s.z_min->length = s.z_max->length = nz;
	s.z_nulls = u_array(&f32, nz, nulls);
	s.z_nans = u_array(&f32, nz, nans);
	s.z_frag = u_array(&f64, nz, frag);
	s.z_start = u_array(&f64, nz, start);
	s.z_len = u_array(&f32, nz, len);

	CHECK_OK(lt_filter_new(1, &ix.field, &f, &err), err);
	v = vint(6000);				/* fragment 1, offset 1500: the third zone */
	CHECK_OK(lt_filter_set_root(f, lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_const(f, &v, &err),
											   &err), &err), err);
	CHECK_OK(lt_index_search(&r, f, &got, &exact, &st, &err), err);
	CHECK(!exact);
	CHECK_EQ_INT(st.pages_total, nz);
	CHECK_EQ_INT(st.pages_read, 1);
	CHECK(got && lt_rowaddr_set_contains(got, ((uint64_t) 1 << 32) | 1500));
	/* the zone [0, 2500) of fragment 1, minus its deleted rows (id % 9 = 4: ids 4504, 4513, ...) */
	CHECK(got && !lt_rowaddr_set_contains(got, ((uint64_t) 1 << 32) | 4));
	CHECK(got && lt_rowaddr_set_contains(got, ((uint64_t) 1 << 32) | 5));
	CHECK(got && !lt_rowaddr_set_contains(got, ((uint64_t) 1 << 32) | 2500));
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(got, NULL) + st.rows_deleted, 2500);
	lt_rowaddr_set_free(got);
	lt_filter_free(f);

	/* a value only the zone of the vanished fragment 5 could hold: nothing */
	CHECK_OK(lt_filter_new(1, &ix.field, &f, &err), err);
	v = vint(20000);
	CHECK_OK(lt_filter_set_root(f, lt_expr_cmp(f, LT_CMP_GE, lt_expr_column(f, 0, &err), lt_expr_const(f, &v, &err),
											   &err), &err), err);
	CHECK_OK(lt_index_search(&r, f, &got, &exact, &st, &err), err);
	CHECK_EQ_INT(st.pages_read, 1);
	CHECK(got && lt_rowaddr_set_is_empty(got));
	lt_rowaddr_set_free(got);
	lt_filter_free(f);

	/*
	 * Proven rows: a zone whose min = max = 0 (no nulls) proves every live row for id <= 5, none
	 * for id = 1, and nothing once it has a null or a NaN
	 */
	((int64_t *) s.z_max->values)[0] = 0;
	for (int round = 0; round < 4; round++)
	{
		lt_rowaddr_set *all = NULL;

		CHECK_OK(lt_filter_new(1, &ix.field, &f, &err), err);
		v = vint(round == 1 ? 1 : 5);
		CHECK_OK(lt_filter_set_root(f, lt_expr_cmp(f, round == 1 ? LT_CMP_EQ : LT_CMP_LE, lt_expr_column(f, 0, &err),
												   lt_expr_const(f, &v, &err), &err), &err), err);
		if (round == 2)
			((uint32_t *) s.z_nulls->values)[0] = 1;
		if (round == 3)
		{
			((uint32_t *) s.z_nulls->values)[0] = 0;
			((uint32_t *) s.z_nans->values)[0] = 1;
		}
		CHECK_OK(lt_index_search_proven(&r, f, &got, &err), err);
		CHECK_OK(lt_index_search(&r, f, &all, &exact, NULL, &err), err);
		if (round == 0)
		{
			/* rows [0, 2000) of fragment 0 without the deleted ones (id % 9 = 4) */
			CHECK(got && lt_rowaddr_set_contains(got, 0) && lt_rowaddr_set_contains(got, 1999));
			CHECK(got && !lt_rowaddr_set_contains(got, 4) && !lt_rowaddr_set_contains(got, 2000));
			CHECK_EQ_INT(got ? lt_rowaddr_set_cardinality(got, NULL) : 0, 2000 - 222);
		}
		else
			CHECK(got && lt_rowaddr_set_is_empty(got));
		/* proven rows are candidates too */
		if (got && all)
		{
			lt_rowaddr_set_andnot(got, all, &err);
			CHECK(lt_rowaddr_set_is_empty(got));
		}
		lt_rowaddr_set_free(got);
		lt_rowaddr_set_free(all);
		lt_filter_free(f);
	}

	lt_rowaddr_set_free(s.frags);
	lt_array_free(s.z_min);
	lt_array_free(s.z_max);
	lt_array_free(s.z_nulls);
	lt_array_free(s.z_nans);
	lt_array_free(s.z_frag);
	lt_array_free(s.z_start);
	lt_array_free(s.z_len);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* --- corrupt index files, through an in-memory copy of the dataset ------------------------------- */

static void
load_dir(lt_store *mem, const char *root, const char *rel)
{
	char		path[2048];
	DIR		   *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)))
	{
		char		r2[1024];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(r2, sizeof(r2), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", root, r2);
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			load_dir(mem, root, r2);
		else
		{
			char		full[1100];
			size_t		len;
			uint8_t    *buf;

			snprintf(full, sizeof(full), "indexed/%s", r2);
			buf = unit_read_file(full, &len);
			if (buf)
				lt_store_mem_put(mem, r2, buf, len, &err);
			free(buf);
		}
	}
	closedir(d);
}

/* Replace file rel of the store by a damaged copy. */
static void
damage(lt_store *mem, const char *rel, size_t at, const uint8_t *bytes, size_t n, size_t truncate_to)
{
	char		full[1100];
	size_t		len;
	uint8_t    *buf;

	snprintf(full, sizeof(full), "indexed/%s", rel);
	buf = unit_read_file(full, &len);
	if (!buf)
		return;
	if (n > 0 && at + n <= len)
		memcpy(buf + at, bytes, n);
	if (truncate_to && truncate_to < len)
		len = truncate_to;
	lt_store_mem_put(mem, rel, buf, len, &err);
	free(buf);
}

TEST(corrupt_files)
{
	char		root[1024];
	lt_store   *mem = NULL;
	lt_dataset *ds = NULL;
	lt_version_spec spec = {0};
	lt_index_list *l = NULL;
	const lt_index *k_idx,
			   *id_idx;
	char		kpath[256],
				idpath[256],
				lpath[256];
	lt_index_reader *r = NULL;

	snprintf(root, sizeof(root), "%s/indexed", unit_data_dir());
	CHECK_OK(lt_store_mem_open(&mem, &err), err);
	load_dir(mem, root, "");
	CHECK_OK(lt_dataset_open(mem, "", &spec, &ds, &err), err);
	if (!ds)
		return;
	CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
	k_idx = lt_index_list_find(l, "k_idx");
	id_idx = lt_index_list_find(l, "id_idx");
	if (!k_idx || !id_idx)
		return;
	snprintf(kpath, sizeof(kpath), "_indices/%s/bitmap_page_lookup.lance", k_idx->segments[0].uuid);
	snprintf(lpath, sizeof(lpath), "_indices/%s/page_lookup.lance", id_idx->segments[0].uuid);
	snprintf(idpath, sizeof(idpath), "_indices/%s/page_data.lance", id_idx->segments[0].uuid);

	/* sanity: the in-memory copy works */
	CHECK_OK(lt_index_open(ds, k_idx, &r, &err), err);
	lt_index_close(r);

	/* truncated files: ECORRUPT naming the file */
	damage(mem, kpath, 0, NULL, 0, 100);
	CHECK_CODE(lt_index_open(ds, k_idx, &r, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "bitmap_page_lookup.lance") && strstr(err.msg, "k_idx"));
	damage(mem, lpath, 0, NULL, 0, 30);
	CHECK_CODE(lt_index_open(ds, id_idx, &r, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "page_lookup.lance") != NULL);
	damage(mem, lpath, 0, NULL, 0, 0);

	/* a missing file is corruption too, not "not found" */
	CHECK_OK(lt_store_remove(mem, idpath, &err), err);
	CHECK_CODE(lt_index_open(ds, id_idx, &r, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "page_data.lance") != NULL);
	damage(mem, idpath, 0, NULL, 0, 0);

	/*
	 * A damaged RowAddrTreeMap inside a bitmap: find the first map of the file (u32 count 1..3,
	 * then fragment 0 or 1) and break its roaring cookie.
	 */
	{
		char		full[1100];
		size_t		len;
		uint8_t    *buf;
		size_t		at = 0;

		snprintf(full, sizeof(full), "indexed/%s", kpath);
		buf = unit_read_file(full, &len);
		for (size_t i = 0; buf && i + 20 < len && !at; i++)
			if (lt_le32(buf + i) >= 1 && lt_le32(buf + i) <= 2 && lt_le32(buf + i + 4) <= 1 &&
				((lt_le32(buf + i + 12) & 0xFFFF) == LT_ROARING_COOKIE_NORUN ||
				 (lt_le32(buf + i + 12) & 0xFFFF) == LT_ROARING_COOKIE_RUN))
				at = i + 12;
		free(buf);
		CHECK(at > 0);
		if (at)
		{
			const uint8_t bad[4] = {0xde, 0xad, 0xbe, 0xef};
			const lt_field *k = ds->schema->fields[1];
			lt_filter  *f;
			lt_rowaddr_set *got = NULL;
			bool		exact;
			lt_code		rc = LT_OK;

			damage(mem, kpath, at, bad, 4, 0);
			CHECK_OK(lt_index_open(ds, k_idx, &r, &err), err);
			CHECK_OK(lt_filter_new(1, &k, &f, &err), err);
			{
				/* every key, the NULL one too */
				lt_expr    *both[2] = {lt_expr_is_null(f, lt_expr_column(f, 0, &err), true, &err),
				lt_expr_is_null(f, lt_expr_column(f, 0, &err), false, &err)};

				CHECK_OK(lt_filter_set_root(f, lt_expr_or(f, 2, both, &err), &err), err);
			}
			if (r)
				rc = lt_index_search(r, f, &got, &exact, NULL, &err);
			CHECK_EQ_INT(rc, LT_ECORRUPT);
			CHECK(strstr(err.msg, "bitmap_page_lookup.lance") && strstr(err.msg, "roaring"));
			lt_rowaddr_set_free(got);
			lt_filter_free(f);
			lt_index_close(r);
		}
	}
	lt_index_list_free(l);
	lt_dataset_close(ds);
	lt_store_close(mem);
}

/*
 * A zonemap.lance written with lt_fdw's own file writer in the layout of the
 * Lance source (the reference's JavaScript binding cannot build zone maps),
 * read through lt_index_open / lt_index_search in a copy of the dataset.
 */
TEST(zonemap_file)
{
	char		root[1024];
	lt_store   *mem = NULL;
	lt_dataset *ds = NULL;
	lt_version_spec spec = {0};
	static const char *names[7] = {"min", "max", "null_count", "nan_count", "fragment_id", "zone_start", "zone_length"};
	static const char *types[7] = {"int64", "int64", "uint32", "uint32", "uint64", "uint64", "uint64"};
	Lt__Pb__Field pbf[7],
			   *pbp[7];
	lt_schema  *zs = NULL;
	lt_file_writer *w = NULL;
	lt_written_file wf = {0};
	lt_array   *cols[7];
	const int	nz = 4;
	int64_t		mins[4] = {0, 2000, 4500, 7000},
				maxs[4] = {1999, 4499, 6999, 8999};
	uint64_t	u[5][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 1, 1}, {0, 2000, 0, 2500}, {2000, 2500, 2500, 2000}};
	lt_index	ix = {0};
	lt_index_segment seg = {0};
	uint32_t	frags[2] = {0, 1};
	lt_index_reader *r = NULL;
	char		src[1200],
				dst[200];
	uint8_t    *bytes = NULL;
	uint64_t	blen = 0;

	snprintf(root, sizeof(root), "%s/indexed", unit_data_dir());
	CHECK_OK(lt_store_mem_open(&mem, &err), err);
	load_dir(mem, root, "");
	CHECK_OK(lt_dataset_open(mem, "", &spec, &ds, &err), err);
	if (!ds)
		return;
	for (int i = 0; i < 7; i++)
	{
		lt__pb__field__init(&pbf[i]);
		pbf[i].name = (char *) names[i];
		pbf[i].has_id = pbf[i].has_parent_id = pbf[i].has_nullable = true;
		pbf[i].id = i;
		pbf[i].parent_id = -1;
		pbf[i].logical_type = (char *) types[i];
		pbf[i].nullable = i < 2;
		pbp[i] = &pbf[i];
	}
	CHECK_OK(lt_schema_from_pb(pbp, 7, &zs, &err), err);
	if (!zs)
		return;
	for (int i = 0; i < 7; i++)
	{
		CHECK_OK(lt_array_new(zs->fields[i], &cols[i], &err), err);
		lt_array_reserve(cols[i], nz, &err);
		for (int z = 0; z < nz; z++)
		{
			if (i < 2)
				((int64_t *) cols[i]->values)[z] = i == 0 ? mins[z] : maxs[z];
			else if (zs->fields[i]->type == LT_TYPE_UINT32)
				((uint32_t *) cols[i]->values)[z] = (uint32_t) u[i - 2][z];
			else
				((uint64_t *) cols[i]->values)[z] = u[i - 2][z];
		}
		cols[i]->length = nz;
	}
	CHECK_OK(lt_file_writer_open(mem, "zm/", 7, (const lt_field *const *) zs->fields, LT_FILE_V2_1, &w, &err), err);
	if (w)
	{
		CHECK_OK(lt_file_writer_write(w, cols, nz, &err), err);
		CHECK_OK(lt_file_writer_finish(w, &wf, &err), err);
	}
	lt_file_writer_free(w);
	for (int i = 0; i < 7; i++)
		lt_array_free(cols[i]);
	/* move it where a zone map segment keeps it */
	snprintf(src, sizeof(src), "zm/%s", wf.name ? wf.name : "");
	snprintf(seg.uuid, sizeof(seg.uuid), "00000000-0000-4000-8000-00000000abcd");
	snprintf(dst, sizeof(dst), "_indices/%s/zonemap.lance", seg.uuid);
	CHECK_OK(lt_store_read_all(mem, src, (uint64_t) 1 << 30, &bytes, &blen, &err), err);
	if (bytes)
		CHECK_OK(lt_store_mem_put(mem, dst, bytes, blen, &err), err);

	ix.name = "zones";
	ix.kind = LT_INDEX_ZONEMAP;
	ix.field = ds->schema->fields[0];
	ix.n_segments = 1;
	ix.segments = &seg;
	ix.covered = frags;
	ix.n_covered = 2;
	seg.fragments = frags;
	seg.n_fragments = 2;
	CHECK_OK(lt_index_open(ds, &ix, &r, &err), err);
	if (r)
	{
		lt_filter  *f;
		lt_value	v = vint(6000);
		lt_rowaddr_set *got = NULL;
		bool		exact = true;
		lt_index_stats st;

		CHECK_OK(lt_filter_new(1, &ix.field, &f, &err), err);
		CHECK_OK(lt_filter_set_root(f, lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err),
												   lt_expr_const(f, &v, &err), &err), &err), err);
		CHECK_OK(lt_index_search(r, f, &got, &exact, &st, &err), err);
		CHECK(!exact);
		CHECK_EQ_INT(st.pages_total, 4);
		CHECK_EQ_INT(st.pages_read, 1);
		CHECK(got && lt_rowaddr_set_contains(got, ((uint64_t) 1 << 32) | 1500));
		CHECK(got && !lt_rowaddr_set_contains(got, ((uint64_t) 1 << 32) | 2500));
		CHECK_EQ_INT(got ? lt_rowaddr_set_cardinality(got, NULL) + st.rows_deleted : 0, 2500);
		lt_rowaddr_set_free(got);
		lt_filter_free(f);
		lt_index_close(r);
	}
	/* a damaged zone map is corrupt, naming the file */
	if (bytes && blen > 40)
	{
		lt_store_mem_put(mem, dst, bytes, blen / 2, &err);
		CHECK_CODE(lt_index_open(ds, &ix, &r, &err), LT_ECORRUPT);
		CHECK(strstr(err.msg, "zonemap.lance") != NULL);
	}
	lt_free(bytes);
	lt_written_file_clear(&wf);
	lt_schema_free(zs);
	lt_dataset_close(ds);
	lt_store_close(mem);
}

/* --- row-address sets ---------------------------------------------------------- */

static int
collect_cb(uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg)
{
	uint64_t   *count = arg;

	*count += full ? 1000000 : n;
	return 0;
}

TEST(rowaddr_set_more)
{
	lt_rowaddr_set *a = lt_rowaddr_set_create(),
			   *u = lt_rowaddr_set_create(),
			   *c,
			   *back = NULL;
	uint8_t    *buf = NULL;
	size_t		len = 0,
				used = 0;
	uint32_t   *offs = NULL;
	uint64_t	n = 0,
				removed = 0,
				cnt = 0;
	uint32_t	dels[3] = {2, 5, 9};
	uint32_t   *ids;
	size_t		nids;

	/* universe: fragment 1 rows [0, 10), fragment 4 rows [0, 3) */
	CHECK_OK(lt_rowaddr_set_add_range(u, 1, 0, 10, &err), err);
	CHECK_OK(lt_rowaddr_set_add_range(u, 4, 0, 3, &err), err);
	CHECK_OK(lt_rowaddr_set_add(a, ((uint64_t) 1 << 32) | 3, &err), err);
	CHECK_OK(lt_rowaddr_set_add(a, ((uint64_t) 1 << 32) | 5, &err), err);
	CHECK_OK(lt_rowaddr_set_add(a, ((uint64_t) 7 << 32) | 1, &err), err);	/* outside the universe */
	c = lt_rowaddr_set_copy(a);
	CHECK(c && set_equal(a, c));
	CHECK_OK(lt_rowaddr_set_not(c, u, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(c, NULL), 10 - 2 + 3);
	CHECK(!lt_rowaddr_set_contains(c, ((uint64_t) 1 << 32) | 3));
	CHECK(lt_rowaddr_set_contains(c, ((uint64_t) 4 << 32) | 2));
	CHECK(!lt_rowaddr_set_contains(c, ((uint64_t) 7 << 32) | 1));
	/* NOT NOT x = x within the universe */
	CHECK_OK(lt_rowaddr_set_not(c, u, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(c, NULL), 2);

	CHECK_OK(lt_rowaddr_set_fragment_offsets(c, 1, &offs, &n, &err), err);
	CHECK(n == 2 && offs[0] == 3 && offs[1] == 5);
	lt_free(offs);
	CHECK_OK(lt_rowaddr_set_fragment_offsets(c, 9, &offs, &n, &err), err);
	CHECK(n == 0 && offs == NULL);

	/* deletion vectors and whole fragments */
	CHECK_OK(lt_rowaddr_set_remove_offsets(c, 1, dels, 3, &removed, &err), err);
	CHECK_EQ_INT(removed, 1);
	CHECK_EQ_INT(lt_rowaddr_set_fragment_cardinality(c, 1), 1);
	CHECK_OK(lt_rowaddr_set_add_fragment(c, 2, &err), err);
	CHECK(lt_rowaddr_set_is_full(c, 2));
	CHECK_CODE(lt_rowaddr_set_fragment_offsets(c, 2, &offs, &n, &err), LT_EINVALID);
	CHECK_CODE(lt_rowaddr_set_remove_offsets(c, 2, dels, 3, &removed, &err), LT_EINVALID);

	/* serialization round trip, whole fragments included */
	CHECK_OK(lt_rowaddr_set_serialize(c, &buf, &len, &err), err);
	CHECK_OK(lt_rowaddr_set_parse(buf, len, &back, &used, &err), err);
	CHECK_EQ_INT(used, len);
	CHECK(back && set_equal(back, c) && lt_rowaddr_set_is_full(back, 2));
	lt_rowaddr_set_free(back);
	lt_free(buf);

	CHECK_OK(lt_rowaddr_set_bound_fragment(c, 2, 4, &err), err);
	CHECK(!lt_rowaddr_set_is_full(c, 2));
	CHECK_EQ_INT(lt_rowaddr_set_fragment_cardinality(c, 2), 4);
	CHECK_OK(lt_rowaddr_set_bound_fragment(c, 1, 4, &err), err);	/* offset 3 stays, past-the-end offsets go */
	CHECK_EQ_INT(lt_rowaddr_set_fragment_cardinality(c, 1), 1);
	CHECK_OK(lt_rowaddr_set_bound_fragment(c, 1, 3, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_fragment_cardinality(c, 1), 0);
	CHECK_OK(lt_rowaddr_set_fragments(c, &ids, &nids, &err), err);
	CHECK(nids == 1 && ids[0] == 2);
	lt_free(ids);
	lt_rowaddr_set_iterate(c, collect_cb, &cnt);
	CHECK_EQ_INT(cnt, 4);
	lt_rowaddr_set_remove_fragment(c, 2);
	CHECK(lt_rowaddr_set_is_empty(c));

	/* an empty set serializes to a zero count */
	CHECK_OK(lt_rowaddr_set_serialize(c, &buf, &len, &err), err);
	CHECK(len == 4 && lt_le32(buf) == 0);
	lt_free(buf);
	lt_rowaddr_set_free(a);
	lt_rowaddr_set_free(u);
	lt_rowaddr_set_free(c);
}

/* Row-address sets against a dataset: universe, resolve, deletions. */
TEST(rowaddr_set_dataset)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_rowaddr_set *u = NULL,
			   *s = lt_rowaddr_set_create();
	uint64_t	removed = 0;

	if (!ds)
		return;
	CHECK_OK(lt_rowaddr_set_universe(ds, NULL, 0, &u, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(u, NULL), 9700);
	CHECK_OK(lt_rowaddr_set_remove_deleted(ds, u, &removed, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(u, NULL), lt_dataset_count_rows(ds));
	CHECK_EQ_INT(removed, 9700 - lt_dataset_count_rows(ds));
	CHECK_OK(lt_rowaddr_set_add_fragment(s, 1, &err), err);
	CHECK_OK(lt_rowaddr_set_add_fragment(s, 77, &err), err);	/* no such fragment */
	CHECK_OK(lt_rowaddr_set_resolve(ds, s, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(s, NULL), 4500);
	CHECK(!lt_rowaddr_set_contains(s, (uint64_t) 77 << 32));
	lt_rowaddr_set_free(u);
	lt_rowaddr_set_free(s);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* --- indexes built by lt_index_build (lt_index_write.h), committed, then read ----------------------- */

static lt_dataset *
latest(lt_store *mem)
{
	lt_version_spec spec = {0};
	lt_dataset *ds = NULL;

	CHECK_OK(lt_dataset_open(mem, "", &spec, &ds, &err), err);
	return ds;
}

/* Build kind on column into a fresh name and commit it on the latest version. */
static lt_code
build_commit(lt_store *mem, const char *column, lt_index_kind kind, const char *name, uint64_t max_memory)
{
	lt_dataset *ds = latest(mem);
	lt_index_build_options bo = {kind, name, max_memory};
	lt_built_index b;
	const lt_built_index *bp[1] = {&b};
	lt_commit_result res;
	lt_code		rc;

	if (!ds)
		return LT_EINVALID;
	rc = lt_index_build(ds, lt_schema_find_name(ds->schema, column), &bo, &b, &err);
	if (rc == LT_OK)
	{
		CHECK_EQ_INT(b.n_fragments, ds->n_fragments);
		CHECK_EQ_INT(b.rows, lt_dataset_count_rows(ds));
		rc = lt_commit_create_index(ds, 1, bp, NULL, &res, &err);
		if (rc == LT_OK)
		{
			CHECK_EQ_INT(res.op, LT_OP_CREATE_INDEX);
			CHECK_EQ_INT(res.version, ds->version + 1);
		}
		else
			lt_built_index_remove(ds, &b);
		lt_built_index_clear(&b);
	}
	lt_dataset_close(ds);
	return rc;
}

static bool
always_true(void)
{
	return true;
}

TEST(built_indexes)
{
	char		root[1024];
	lt_store   *mem = NULL;
	lt_dataset *ds;
	static const struct { const char *col; lt_index_kind kind; const char *name; bool exact; } ix[] = {
		{"id", LT_INDEX_BTREE, "id_w", true},
		{"f", LT_INDEX_BTREE, "f_w", true},
		{"k", LT_INDEX_BITMAP, "k_w", true},
		{"id", LT_INDEX_ZONEMAP, "id_z", false},
		{"f", LT_INDEX_ZONEMAP, "f_z", false},
		{"tags", LT_INDEX_LABEL_LIST, "tags_w", true},
	};

	snprintf(root, sizeof(root), "%s/indexed", unit_data_dir());
	CHECK_OK(lt_store_mem_open(&mem, &err), err);
	load_dir(mem, root, "");
	for (size_t i = 0; i < sizeof(ix) / sizeof(ix[0]); i++)
		CHECK_OK(build_commit(mem, ix[i].col, ix[i].kind, ix[i].name, 0), err);
	/* a bitmap over floats is refused (lt_index_write.c: Lance 8 confuses NaN keys of either sign in one) */
	CHECK_CODE(build_commit(mem, "f", LT_INDEX_BITMAP, "fb_w", 0), LT_EUNSUPPORTED);
	CHECK(strstr(err.msg, "floating-point") != NULL);
	if (!(ds = latest(mem)))
		return;
	/* the scalar kinds answer random filters as a filtered scan of the fragments they cover */
	for (size_t i = 0; i + 1 < sizeof(ix) / sizeof(ix[0]); i++)
	{
		int			nonempty = 0;

		random_lookups_in(ds, ix[i].name, 150, ix[i].exact, &nonempty);
		CHECK(nonempty > 30);
	}
	/* label_list: the reference's index on the same column gives the same rows */
	{
		lt_index_list *l = NULL;
		lt_index_reader *a = NULL, *b = NULL;
		lt_value	v[2] = {{.kind = LT_VALUE_BYTES, .v.bytes = {(const uint8_t *) "lance", 5}},
							{.kind = LT_VALUE_BYTES, .v.bytes = {(const uint8_t *) "page ", 5}}};

		CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
		CHECK_OK(lt_index_open(ds, lt_index_list_find(l, "tags_w"), &a, &err), err);
		CHECK_OK(lt_index_open(ds, lt_index_list_find(l, "tags_idx"), &b, &err), err);
		for (int op = 0; a && b && op < 2; op++)
			for (int n = 0; n <= 2; n++)
			{
				lt_rowaddr_set *x = NULL, *y = NULL;

				CHECK_OK(lt_index_search_labels(a, (lt_label_op) op, n, v, &x, NULL, &err), err);
				CHECK_OK(lt_index_search_labels(b, (lt_label_op) op, n, v, &y, NULL, &err), err);
				/* ours covers the appended fragment too: compare on the reference's fragments */
				if (x && y)
				{
					lt_rowaddr_set_remove_fragment(x, 2);
					CHECK(set_equal(x, y));
				}
				lt_rowaddr_set_free(x);
				lt_rowaddr_set_free(y);
			}
		lt_index_close(a);
		lt_index_close(b);
		lt_index_list_free(l);
	}
	lt_dataset_close(ds);

	/* a canceled build stops between batches */
	if ((ds = latest(mem)))
	{
		lt_index_build_options bo = {LT_INDEX_BTREE, "cancel", 0};
		lt_built_index b;

		lt_set_interrupt_hooks(always_true, NULL);
		CHECK_CODE(lt_index_build(ds, lt_schema_find_name(ds->schema, "id"), &bo, &b, &err), LT_EINVALID);
		lt_set_interrupt_hooks(NULL, NULL);
		CHECK(strstr(err.msg, "canceled") != NULL);
		CHECK(b.n_files == 0 && b.name == NULL);
		lt_dataset_close(ds);
	}
	/* kinds that do not fit, names */
	CHECK_CODE(build_commit(mem, "id", LT_INDEX_LABEL_LIST, NULL, 0), LT_EUNSUPPORTED);
	CHECK_CODE(build_commit(mem, "tags", LT_INDEX_ZONEMAP, NULL, 0), LT_EUNSUPPORTED);
	CHECK_CODE(build_commit(mem, "k", LT_INDEX_BITMAP, "id_w", 0), LT_EINVALID);
	CHECK(strstr(err.msg, "another column") != NULL);
	/* replace: the same name on the same column, another kind */
	CHECK_OK(build_commit(mem, "k", LT_INDEX_BTREE, "k_w", 0), err);
	if ((ds = latest(mem)))
	{
		lt_index_list *l = NULL;
		const lt_index *k;

		CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
		k = l ? lt_index_list_find(l, "k_w") : NULL;
		CHECK(k && k->kind == LT_INDEX_BTREE && k->n_segments == 1 && !k->unusable);
		lt_index_list_free(l);
		lt_dataset_close(ds);
	}
	/* two builds of one name on one version: the second commit conflicts with the first */
	if ((ds = latest(mem)))
	{
		lt_index_build_options bo = {LT_INDEX_BITMAP, "twice", 0};
		lt_built_index b1, b2;
		const lt_built_index *p1[1] = {&b1}, *p2[1] = {&b2};
		lt_commit_result res;

		CHECK_OK(lt_index_build(ds, lt_schema_find_name(ds->schema, "k"), &bo, &b1, &err), err);
		CHECK_OK(lt_index_build(ds, lt_schema_find_name(ds->schema, "k"), &bo, &b2, &err), err);
		CHECK_OK(lt_commit_create_index(ds, 1, p1, NULL, &res, &err), err);
		CHECK_CODE(lt_commit_create_index(ds, 1, p2, NULL, &res, &err), LT_ECONFLICT);
		CHECK(strstr(err.msg, "twice") != NULL);
		lt_built_index_clear(&b1);
		lt_built_index_clear(&b2);
		lt_dataset_close(ds);
	}
	lt_store_close(mem);
}

/* --- external merge: builds past max_memory spill sorted runs and write the same bytes ------------- */

/* Spill files in memory, counted: how many were made, how many are still open. */
typedef struct mem_spill
{
	uint8_t    *p;
	size_t		len, cap, pos;
} mem_spill;

static int	spill_created, spill_open;

static lt_code
ms_create(void *arg, void **file, lt_error *e)
{
	(void) arg;
	if (!(*file = calloc(1, sizeof(mem_spill))))
		return lt_nomem(e);
	spill_created++;
	spill_open++;
	return LT_OK;
}

static lt_code
ms_write(void *file, const void *p, size_t n, lt_error *e)
{
	mem_spill  *m = file;

	if (m->len + n > m->cap)
	{
		size_t		cap = (m->len + n) * 2;
		uint8_t    *q = realloc(m->p, cap);

		if (!q)
			return lt_nomem(e);
		m->p = q;
		m->cap = cap;
	}
	memcpy(m->p + m->len, p, n);
	m->len += n;
	return LT_OK;
}

static lt_code
ms_rewind(void *file, lt_error *e)
{
	(void) e;
	((mem_spill *) file)->pos = 0;
	return LT_OK;
}

static lt_code
ms_read(void *file, void *p, size_t n, size_t *got, lt_error *e)
{
	mem_spill  *m = file;

	(void) e;
	*got = m->len - m->pos < n ? m->len - m->pos : n;
	memcpy(p, m->p + m->pos, *got);
	m->pos += *got;
	return LT_OK;
}

static void
ms_close(void *file)
{
	free(((mem_spill *) file)->p);
	free(file);
	spill_open--;
}

static const lt_spill_ops mem_spill_ops = {NULL, ms_create, ms_write, ms_rewind, ms_read, ms_close};

/* Whether the files of two builds of one index hold the same bytes. */
static bool
same_files(lt_store *mem, const lt_built_index *a, const lt_built_index *b)
{
	bool		same = a->n_files == b->n_files && a->n_files > 0;

	for (size_t i = 0; same && i < a->n_files; i++)
	{
		char		pa[128], pb[128];
		uint8_t    *da = NULL, *db = NULL;
		uint64_t	la = 0, lb = 0;

		snprintf(pa, sizeof(pa), "_indices/%s/%s", a->uuid_text, a->files[i]);
		snprintf(pb, sizeof(pb), "_indices/%s/%s", b->uuid_text, b->files[i]);
		CHECK_OK(lt_store_read_all(mem, pa, (uint64_t) 1 << 30, &da, &la, &err), err);
		CHECK_OK(lt_store_read_all(mem, pb, (uint64_t) 1 << 30, &db, &lb, &err), err);
		same = strcmp(a->files[i], b->files[i]) == 0 && da && db && la == lb && memcmp(da, db, (size_t) la) == 0;
		lt_free(da);
		lt_free(db);
	}
	return same;
}

TEST(spilled_builds)
{
	char		root[1024];
	lt_store   *mem = NULL;
	lt_dataset *ds;
	static const struct { const char *col; lt_index_kind kind; } ix[] = {
		{"id", LT_INDEX_BTREE}, {"f", LT_INDEX_BTREE}, {"k", LT_INDEX_BTREE},
		{"k", LT_INDEX_BITMAP}, {"tags", LT_INDEX_LABEL_LIST},
	};
	/* 4 kB: every batch is a run, merged two at a time in passes; 200 kB: a few runs, one merge */
	static const uint64_t budgets[] = {4096, 200 * 1024};

	snprintf(root, sizeof(root), "%s/indexed", unit_data_dir());
	CHECK_OK(lt_store_mem_open(&mem, &err), err);
	load_dir(mem, root, "");
	if (!(ds = latest(mem)))
		return;
	for (size_t i = 0; i < sizeof(ix) / sizeof(ix[0]); i++)
	{
		const lt_field *col = lt_schema_find_name(ds->schema, ix[i].col);
		lt_index_build_options bo = {ix[i].kind, "whole", 0, &mem_spill_ops};
		lt_built_index whole;

		spill_created = 0;
		CHECK_OK(lt_index_build(ds, col, &bo, &whole, &err), err);
		CHECK_EQ_INT(spill_created, 0);
		for (size_t m = 0; m < sizeof(budgets) / sizeof(budgets[0]); m++)
		{
			lt_built_index part;

			bo.name = "spilled";
			bo.max_memory = budgets[m];
			spill_created = 0;
			CHECK_OK(lt_index_build(ds, col, &bo, &part, &err), err);
			CHECK(spill_created >= 3);
			CHECK_EQ_INT(spill_open, 0);
			CHECK_EQ_INT(part.rows, whole.rows);
			CHECK_EQ_INT(part.entries, whole.entries);
			CHECK(same_files(mem, &whole, &part));
			lt_built_index_remove(ds, &part);
			lt_built_index_clear(&part);
		}
		lt_built_index_remove(ds, &whole);
		lt_built_index_clear(&whole);
	}
	/* the library's own temporary files (tmpfile) give the same bytes */
	{
		const lt_field *col = lt_schema_find_name(ds->schema, "tags");
		lt_index_build_options bo = {LT_INDEX_LABEL_LIST, "whole", 0, NULL};
		lt_built_index whole, part;

		CHECK_OK(lt_index_build(ds, col, &bo, &whole, &err), err);
		bo.max_memory = 4096;
		CHECK_OK(lt_index_build(ds, col, &bo, &part, &err), err);
		CHECK(same_files(mem, &whole, &part));
		lt_built_index_remove(ds, &whole);
		lt_built_index_remove(ds, &part);
		lt_built_index_clear(&whole);
		lt_built_index_clear(&part);
	}
	/* a canceled spilling build closes its runs */
	{
		lt_index_build_options bo = {LT_INDEX_BTREE, "cancel", 4096, &mem_spill_ops};
		lt_built_index b;

		lt_set_interrupt_hooks(always_true, NULL);
		CHECK_CODE(lt_index_build(ds, lt_schema_find_name(ds->schema, "id"), &bo, &b, &err), LT_EINVALID);
		lt_set_interrupt_hooks(NULL, NULL);
		CHECK_EQ_INT(spill_open, 0);
	}
	lt_dataset_close(ds);
	lt_store_close(mem);
}

/*
 * The decoded btree page cache (lt_btree_pages.h): its bound and LRU order, lookups through it equal
 * the scan, and a new version's new index files are pages of their own (never another file's).
 */
TEST(btree_page_cache)
{
	int64_t		keys[100];
	lt_btree_pages_stats st0,
				st;
	size_t		one;
	const lt_btree_page *pg;
	int			nonempty = 0;
	char		root[1024];
	lt_store   *mem = NULL;

	for (int i = 0; i < 100; i++)
		keys[i] = i * 3;
	/* no budget: nothing kept */
	lt_btree_pages_configure(NULL, 0);
	CHECK(lt_btree_pages_put("f", 0, 100, 0, true, keys) == NULL);
	CHECK(lt_btree_pages_get("f", 0) == NULL);

	/* the size of one page of 100 keys, then a budget of three */
	lt_btree_pages_configure(NULL, 1 << 20);
	CHECK(lt_btree_pages_put("a", 0, 100, 0, true, keys) != NULL);
	lt_btree_pages_stats_get(&st);
	one = st.bytes;
	CHECK(one >= 100 * sizeof(int64_t));
	lt_btree_pages_configure(NULL, 3 * one);
	CHECK(lt_btree_pages_put("a", 1, 100, 0, true, keys) != NULL);
	CHECK(lt_btree_pages_put("b", 0, 100, 0, true, keys) != NULL);	/* same page number, another file */
	pg = lt_btree_pages_get("a", 0);	/* now the most recent: a/1 is the least */
	CHECK(pg && pg->n == 100 && pg->sorted && pg->keys[99] == 297);
	lt_btree_pages_stats_get(&st0);
	CHECK(lt_btree_pages_put("c", 7, 100, 10, true, keys) != NULL);
	lt_btree_pages_stats_get(&st);
	CHECK(st.bytes <= st.budget);
	CHECK_EQ_INT(st.pages, 3);
	CHECK_EQ_INT(st.evictions, st0.evictions + 1);
	CHECK(lt_btree_pages_get("a", 1) == NULL);
	CHECK(lt_btree_pages_get("a", 0) != NULL);
	CHECK(lt_btree_pages_get("b", 0) != NULL);
	pg = lt_btree_pages_get("c", 7);
	CHECK(pg && pg->nulls == 10 && pg->keys[0] == 0 && pg->keys[89] == 267);
	/* an unsorted page is remembered as such, without keys; a page over the budget is not kept */
	pg = lt_btree_pages_put("d", 0, 5000, 0, false, NULL);
	CHECK(pg && !pg->sorted);
	CHECK(lt_btree_pages_put("e", 0, 100000, 0, true, keys) == NULL || !"fits");
	lt_btree_pages_stats_get(&st);
	CHECK(st.bytes <= st.budget);
	/* a smaller budget drops pages at once */
	lt_btree_pages_configure(NULL, one);
	lt_btree_pages_stats_get(&st);
	CHECK(st.bytes <= one && st.pages <= 1);

	/* decoded in place: room, then kept (replacing the same page), discarded, or refused over the budget */
	lt_btree_pages_configure(NULL, 4 * one);
	{
		int64_t    *room = lt_btree_pages_room(100);

		CHECK(room != NULL);
		for (int i = 0; room && i < 100; i++)
			room[i] = i * 5;
		pg = room ? lt_btree_pages_keep("r", 3, 100, 0, true, room) : NULL;
		CHECK(pg && pg->sorted && pg->n == 100 && pg->keys[99] == 495);
		pg = lt_btree_pages_get("r", 3);
		CHECK(pg && pg->keys[1] == 5);
		room = lt_btree_pages_room(100);
		CHECK(room != NULL);
		pg = room ? lt_btree_pages_keep("r", 3, 100, 0, false, room) : NULL;	/* the new decode wins */
		CHECK(pg && !pg->sorted);
		room = lt_btree_pages_room(100);
		lt_btree_pages_discard(room);
		lt_btree_pages_stats_get(&st);
		CHECK(st.bytes <= st.budget);
		CHECK(lt_btree_pages_room(100000) == NULL);	/* larger than the budget */
		lt_btree_pages_configure(NULL, 0);
		CHECK(lt_btree_pages_room(10) == NULL);	/* no budget */
	}
	lt_btree_pages_configure(NULL, one);

	/* lookups through the cache (one page fits, then all) agree with the scan, twice over */
	for (int round = 0; round < 2; round++)
	{
		lt_btree_pages_configure(NULL, round == 0 ? 40000 : 8 << 20);
		lt_btree_pages_stats_get(&st0);
		for (int rep = 0; rep < 2; rep++)
		{
			random_lookups("id_idx", 150, &nonempty);
			random_lookups("f_idx", 150, &nonempty);
		}
		lt_btree_pages_stats_get(&st);
		CHECK(st.bytes <= st.budget);
		CHECK(st.hits > st0.hits);	/* the second pass found pages */
		if (round == 0)
			CHECK(st.evictions > st0.evictions);
	}
	CHECK(nonempty > 200);

	/* a new version with a new btree on the same column: its files are new keys, its answers right */
	snprintf(root, sizeof(root), "%s/indexed", unit_data_dir());
	CHECK_OK(lt_store_mem_open(&mem, &err), err);
	load_dir(mem, root, "");
	{
		lt_dataset *ds = latest(mem);

		nonempty = 0;
		if (ds)
			random_lookups_in(ds, "id_idx", 100, true, &nonempty);
		lt_btree_pages_stats_get(&st0);
		CHECK_OK(build_commit(mem, "id", LT_INDEX_BTREE, "id_new", 0), err);
		lt_dataset_close(ds);
		ds = latest(mem);
		if (ds)
		{
			random_lookups_in(ds, "id_new", 100, true, &nonempty);
			lt_btree_pages_stats_get(&st);
			CHECK(st.misses > st0.misses);	/* the new index's pages were decoded, not found */
			random_lookups_in(ds, "id_idx", 100, true, &nonempty);
		}
		CHECK(nonempty > 100);
		lt_dataset_close(ds);
	}
	lt_store_close(mem);
	lt_btree_pages_configure(NULL, 0);
}

/* --- Lance's optimize: a segment merged from an index's entries and the unindexed fragments' rows ------ */

static uint64_t read_total;

static void
count_read(void *arg, lt_index_build_step step, uint64_t done, uint64_t total)
{
	(void) arg;
	(void) done;
	if (step == LT_INDEX_BUILD_READ)
		read_total = total;
}

/* Merge the index `name` (on col, of kind) with ds's fragments it does not cover, commit, check. */
static void
merge_commit(lt_store *mem, const char *col, lt_index_kind kind, const char *name, uint64_t max_memory,
			 lt_built_index *merged)
{
	lt_dataset *ds = latest(mem);
	lt_index_list *l = NULL;
	const lt_index *ix;
	Lt__Pb__DataFragment *frags[8];
	lt_index_build_options bo = {kind, name, max_memory, &mem_spill_ops};
	const lt_built_index *bp[1] = {merged};
	lt_commit_result res;
	uint64_t	want_read = 0;

	if (!ds)
		return;
	CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
	ix = l ? lt_index_list_find(l, name) : NULL;
	CHECK(ix && ix->n_unindexed > 0 && ix->n_unindexed <= 8);
	if (!ix || ix->n_unindexed == 0 || ix->n_unindexed > 8)
	{
		lt_index_list_free(l);
		lt_dataset_close(ds);
		return;
	}
	for (size_t i = 0; i < ix->n_unindexed; i++)
	{
		frags[i] = (Lt__Pb__DataFragment *) lt_dataset_fragment(ds, ix->unindexed[i]);
		want_read += lt_fragment_live_rows(frags[i]);
	}
	bo.fragments = frags;
	bo.n_fragments = ix->n_unindexed;
	bo.merge = ix;
	bo.progress = count_read;
	read_total = 0;
	CHECK_OK(lt_index_build(ds, lt_schema_find_name(ds->schema, col), &bo, merged, &err), err);
	/* only the unindexed fragments are read from the data; the segment covers every fragment */
	CHECK_EQ_INT(read_total, want_read);
	CHECK_EQ_INT(merged->n_fragments, ds->n_fragments);
	CHECK_OK(lt_commit_create_index(ds, 1, bp, NULL, &res, &err), err);
	lt_index_list_free(l);
	lt_dataset_close(ds);
	/* one segment under the name, covering everything */
	if ((ds = latest(mem)))
	{
		CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
		ix = l ? lt_index_list_find(l, name) : NULL;
		CHECK(ix && ix->n_segments == 1 && ix->n_unindexed == 0 && strcmp(ix->segments[0].uuid, merged->uuid_text) == 0);
		lt_index_list_free(l);
		lt_dataset_close(ds);
	}
}

TEST(merged_builds)
{
	char		root[1024];
	lt_store   *mem = NULL;
	lt_dataset *ds;
	static const struct { const char *col; lt_index_kind kind; bool exact; } ix[] = {
		{"id", LT_INDEX_BTREE, true}, {"f", LT_INDEX_BTREE, true}, {"k", LT_INDEX_BITMAP, true},
		{"tags", LT_INDEX_LABEL_LIST, true}, {"id", LT_INDEX_ZONEMAP, false}, {"f", LT_INDEX_ZONEMAP, false},
	};
	static const uint64_t budgets[] = {0, 4096};

	snprintf(root, sizeof(root), "%s/indexed", unit_data_dir());
	CHECK_OK(lt_store_mem_open(&mem, &err), err);
	load_dir(mem, root, "");
	for (size_t i = 0; i < sizeof(ix) / sizeof(ix[0]); i++)
		for (size_t m = 0; m < sizeof(budgets) / sizeof(budgets[0]); m++)
		{
			char		name[32];
			lt_built_index whole, part, merged;
			const lt_built_index *bp[1] = {&part};
			lt_index_build_options bo = {ix[i].kind, name, 0};
			lt_commit_result res;
			const lt_field *col;

			snprintf(name, sizeof(name), "m%zu_%zu", i, m);
			if (!(ds = latest(mem)))
				return;
			col = lt_schema_find_name(ds->schema, ix[i].col);
			/* the whole column, and a segment over all fragments but the last, committed */
			CHECK_OK(lt_index_build(ds, col, &bo, &whole, &err), err);
			bo.fragments = ds->fragments;
			bo.n_fragments = ds->n_fragments - 1;
			CHECK_OK(lt_index_build(ds, col, &bo, &part, &err), err);
			CHECK_OK(lt_commit_create_index(ds, 1, bp, NULL, &res, &err), err);
			lt_dataset_close(ds);
			/* merged with the last fragment: the same bytes as the whole column's build */
			spill_created = 0;
			merge_commit(mem, ix[i].col, ix[i].kind, name, budgets[m], &merged);
			/* past the budget the merged entries and the new rows each spill a run */
			CHECK(budgets[m] == 0 || ix[i].kind == LT_INDEX_ZONEMAP || spill_created >= 2);
			CHECK_EQ_INT(spill_open, 0);
			/* a merged label_list counts the elements taken over, a zone map the rows read */
			if (ix[i].kind != LT_INDEX_LABEL_LIST && ix[i].kind != LT_INDEX_ZONEMAP)
				CHECK_EQ_INT(merged.rows, whole.rows);
			CHECK_EQ_INT(merged.entries, whole.entries);
			CHECK(same_files(mem, &whole, &merged));
			if (ix[i].kind != LT_INDEX_LABEL_LIST && (ds = latest(mem)))
			{
				int			nonempty = 0;

				lt_built_index_remove(ds, &whole);
				random_lookups_in(ds, name, 60, ix[i].exact, &nonempty);
				CHECK(nonempty > 10);
				lt_dataset_close(ds);
			}
			lt_built_index_clear(&whole);
			lt_built_index_clear(&part);
			lt_built_index_clear(&merged);
		}
	/*
	 * the engine's indexes (built before a delete, fragment 2 appended after): merged, their entries of
	 * deleted rows kept as Lance keeps them, the answers still a filtered scan's
	 */
	{
		static const struct { const char *col; lt_index_kind kind; const char *name; } eng[] = {
			{"id", LT_INDEX_BTREE, "id_idx"}, {"k", LT_INDEX_BITMAP, "k_idx"}, {"f", LT_INDEX_BTREE, "f_idx"},
			{"tags", LT_INDEX_LABEL_LIST, "tags_idx"},
		};

		for (size_t i = 0; i < sizeof(eng) / sizeof(eng[0]); i++)
		{
			lt_built_index merged;

			merge_commit(mem, eng[i].col, eng[i].kind, eng[i].name, 0, &merged);
			if (eng[i].kind != LT_INDEX_LABEL_LIST && (ds = latest(mem)))
			{
				int			nonempty = 0;

				random_lookups_in(ds, eng[i].name, 100, true, &nonempty);
				CHECK(nonempty > 20);
				lt_dataset_close(ds);
			}
			lt_built_index_clear(&merged);
		}
	}
	/* an index of two segments (disjoint fragments, as another writer's CreateIndex may leave): merged into one */
	if ((ds = latest(mem)) && ds->n_fragments == 3)
	{
		static const lt_index_kind kinds[] = {LT_INDEX_BTREE, LT_INDEX_BITMAP, LT_INDEX_ZONEMAP};

		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		{
			const lt_field *col = lt_schema_find_name(ds->schema, kinds[i] == LT_INDEX_BITMAP ? "k" : "id");
			lt_index_build_options bo = {kinds[i], "two", 0};
			lt_built_index whole, b0, b1, merged;
			lt_index_segment segs[2] = {{0}};
			uint32_t	covered[2] = {(uint32_t) ds->fragments[0]->id, (uint32_t) ds->fragments[1]->id};
			uint32_t	unindexed[1] = {(uint32_t) ds->fragments[2]->id};
			lt_index	two = {0};

			CHECK_OK(lt_index_build(ds, col, &bo, &whole, &err), err);
			bo.n_fragments = 1;
			bo.fragments = &ds->fragments[0];
			CHECK_OK(lt_index_build(ds, col, &bo, &b0, &err), err);
			bo.fragments = &ds->fragments[1];
			CHECK_OK(lt_index_build(ds, col, &bo, &b1, &err), err);
			memcpy(segs[0].uuid, b0.uuid_text, 37);
			memcpy(segs[1].uuid, b1.uuid_text, 37);
			segs[0].fragments = b0.fragments;
			segs[0].n_fragments = b0.n_fragments;
			segs[1].fragments = b1.fragments;
			segs[1].n_fragments = b1.n_fragments;
			two.name = "two";
			two.kind = kinds[i];
			two.field = col;
			two.n_segments = 2;
			two.segments = segs;
			two.covered = covered;
			two.n_covered = 2;
			two.unindexed = unindexed;
			two.n_unindexed = 1;
			bo.fragments = &ds->fragments[2];
			bo.merge = &two;
			CHECK_OK(lt_index_build(ds, col, &bo, &merged, &err), err);
			CHECK_EQ_INT(merged.n_fragments, 3);
			CHECK(same_files(mem, &whole, &merged));
			lt_built_index_remove(ds, &whole);
			lt_built_index_remove(ds, &b0);
			lt_built_index_remove(ds, &b1);
			lt_built_index_remove(ds, &merged);
			lt_built_index_clear(&whole);
			lt_built_index_clear(&b0);
			lt_built_index_clear(&b1);
			lt_built_index_clear(&merged);
		}
		lt_dataset_close(ds);
	}
	else if (ds)
		lt_dataset_close(ds);
	/* a merge of another kind, or without the fragments to add, is refused */
	if ((ds = latest(mem)))
	{
		lt_index_list *l = NULL;
		lt_index_build_options bo = {LT_INDEX_BITMAP, "x", 0};
		lt_built_index b;

		CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
		bo.merge = l ? lt_index_list_find(l, "id_idx") : NULL;
		CHECK_CODE(lt_index_build(ds, lt_schema_find_name(ds->schema, "id"), &bo, &b, &err), LT_EINVALID);
		bo.kind = LT_INDEX_BTREE;
		CHECK_CODE(lt_index_build(ds, lt_schema_find_name(ds->schema, "id"), &bo, &b, &err), LT_EINVALID);
		lt_index_list_free(l);
		lt_dataset_close(ds);
	}
	lt_store_close(mem);
}

int
main(void)
{
	RUN(metadata);
	RUN(btree_random);
	RUN(bitmap_random);
	RUN(btree_pruning_and_deletions);
	RUN(label_list);
	RUN(prune_property);
	RUN(zonemap_search);
	RUN(zonemap_file);
	RUN(corrupt_files);
	RUN(rowaddr_set_more);
	RUN(rowaddr_set_dataset);
	RUN(built_indexes);
	RUN(spilled_builds);
	RUN(merged_builds);
	RUN(btree_page_cache);
	return unit_report("index");
}
