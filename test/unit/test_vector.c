/*
 * test_vector.c — src/lance/vector: distance kernels (against a plain double-precision reference
 * and known values), the top-k heap (against a full sort, NaN and NULL classes and ties included),
 * and exact kNN over a dataset the Lance engine wrote (test/data/vectors: float32 and float16
 * vectors, NULL vectors, three fragments, deletions) against a brute-force scan of the same rows;
 * the engine's IVF_FLAT index of that dataset read and searched.
 */
#include <math.h>

#include "unit.h"

#include "io/lt_store.h"
#include "proto/lt_table.pb-c.h"
#include "table/lt_dataset.h"
#include "table/lt_scan.h"
#include "util/lt_value.h"
#include "index/lt_index.h"
#include "vector/lt_ivf.h"
#include "vector/lt_knn.h"
#include "vector/lt_vsearch.h"
#include "vector/lt_partheap.h"
#include "vector/lt_topk.h"
#include "vector/lt_vcache.h"
#include "vector/lt_vdist.h"

static lt_error err;

static double
ref_dist(lt_vmetric m, const double *a, const double *b, size_t n)
{
	double		s = 0,
				na = 0,
				nb = 0;

	for (size_t i = 0; i < n; i++)
	{
		s += m == LT_VMETRIC_L2 ? (a[i] - b[i]) * (a[i] - b[i]) : a[i] * b[i];
		na += a[i] * a[i];
		nb += b[i] * b[i];
	}
	switch (m)
	{
		case LT_VMETRIC_L2:
			return sqrt(s);
		case LT_VMETRIC_COSINE:
			return 1 - s / sqrt(na * nb);
		case LT_VMETRIC_NEG_DOT:
			return -s;
		case LT_VMETRIC_DOT:
			return s;
		case LT_VMETRIC_HAMMING:
			break;				/* of bytes: TEST(hamming) */
	}
	return NAN;
}

TEST(known_values)
{
	float		a[3] = {1, 2, 3},
				b[3] = {4, 5, 6},
				z[3] = {0, 0, 0};
	double		a8[3] = {1, 2, 3},
				b8[3] = {4, 5, 6};

	CHECK(lt_vdist_f32(LT_VMETRIC_L2, a, b, 3) == sqrt(27.0));
	CHECK(lt_vdist_f32(LT_VMETRIC_DOT, a, b, 3) == 32.0);
	CHECK(lt_vdist_f32(LT_VMETRIC_NEG_DOT, a, b, 3) == -32.0);
	CHECK(fabs(lt_vdist_f32(LT_VMETRIC_COSINE, a, b, 3) - (1 - 32 / sqrt(14.0 * 77.0))) < 1e-12);
	CHECK(lt_vdist_f32(LT_VMETRIC_COSINE, a, a, 3) == 0.0);
	CHECK(isnan(lt_vdist_f32(LT_VMETRIC_COSINE, a, z, 3)));
	CHECK(lt_vdist_f64(LT_VMETRIC_L2, a8, b8, 3) == sqrt(27.0));
	CHECK(lt_vdist_f64(LT_VMETRIC_DOT, a8, b8, 3) == 32.0);
	CHECK(lt_vdist_f32(LT_VMETRIC_L2, a, b, 0) == 0.0);
	CHECK(strcmp(lt_vmetric_name(LT_VMETRIC_COSINE), "cosine") == 0);
}

/* Hamming distance of bytes: known values, and every length from 0 to 40 (the 8-byte words and the tail) and
 * unaligned starts against a bit-by-bit count */
TEST(hamming)
{
	uint8_t		a[48],
				b[48];
	uint64_t	s = 7;

	CHECK(lt_vdist_hamming((const uint8_t *) "\xff\x00\x01", (const uint8_t *) "\x00\x00\x03", 3) == 9.0);
	CHECK(lt_vdist_hamming(a, a, 0) == 0.0);
	CHECK(strcmp(lt_vmetric_name(LT_VMETRIC_HAMMING), "hamming") == 0);
	for (int i = 0; i < 48; i++)
	{
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		a[i] = (uint8_t) (s >> 56);
		b[i] = (uint8_t) (s >> 40);
	}
	for (size_t off = 0; off < 3; off++)
		for (size_t n = 0; n + off <= 43; n++)
		{
			int			bits = 0;

			for (size_t i = 0; i < n; i++)
				for (int k = 0; k < 8; k++)
					bits += ((a[off + i] ^ b[off + i]) >> k) & 1;
			CHECK(lt_vdist_hamming(a + off, b + off, n) == (double) bits);
		}
}

/* every length from 0 to 40 (the eight lanes and the tail), every metric, against double math */
TEST(kernels_random)
{
	uint64_t	s = 42;

	for (int n = 0; n <= 40; n++)
		for (int rep = 0; rep < 20; rep++)
		{
			float		a[40],
						b[40];
			double		a8[40],
						b8[40];

			for (int i = 0; i < n; i++)
			{
				a[i] = (float) ((int) (unit_xorshift(&s) % 2001) - 1000) / 100.0f;
				b[i] = (float) ((int) (unit_xorshift(&s) % 2001) - 1000) / 100.0f;
				a8[i] = a[i];
				b8[i] = b[i];
			}
			for (int m = LT_VMETRIC_L2; m <= LT_VMETRIC_DOT; m++)
			{
				double		r = ref_dist(m, a8, b8, n);
				double		d4 = lt_vdist_f32(m, a, b, n);
				double		d8 = lt_vdist_f64(m, a8, b8, n);
				double		tol = 1e-4 * (1 + fabs(r)) * (m == LT_VMETRIC_COSINE ? 10 : 1);

				if (n == 0 && m == LT_VMETRIC_COSINE)
				{
					CHECK(isnan(d4) && isnan(d8));
					continue;
				}
				CHECK(fabs(d4 - r) <= tol);
				CHECK(fabs(d8 - r) <= 1e-9 * (1 + fabs(r)));
			}
		}
}

static int
cmp_items(const void *x, const void *y)
{
	const lt_topk_item *a = x,
			   *b = y;

	return lt_topk_less(a, b) ? -1 : lt_topk_less(b, a) ? 1 : 0;
}

TEST(topk_against_sort)
{
	uint64_t	s = 7;
	size_t		ks[] = {0, 1, 2, 5, 17, 100, 500};

	for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
		for (int rep = 0; rep < 10; rep++)
		{
			size_t		n = unit_xorshift(&s) % 300;
			lt_topk_item *all = calloc(n + 1, sizeof(lt_topk_item));
			lt_topk		t;

			CHECK_OK(lt_topk_init(&t, ks[ki], &err), err);
			for (size_t i = 0; i < n; i++)
			{
				uint64_t	r = unit_xorshift(&s);
				/* few distinct distances (ties), some NaN, some NULL vectors, -0 and 0 */
				double		d = (double) (r % 13) - 6.0;

				if (r % 29 == 0)
					d = NAN;
				if (d == 0 && (r & 64))
					d = -0.0;
				all[i].addr = i * 7919 % 1000003;
				all[i].dist = d;
				all[i].cls = isnan(d) ? LT_TOPK_NAN : LT_TOPK_NUMBER;
				if (r % 31 == 0)
				{
					all[i].cls = LT_TOPK_NULL;
					all[i].dist = 0;
					lt_topk_push_null(&t, all[i].addr);
				}
				else
					lt_topk_push(&t, d, all[i].addr);
			}
			lt_topk_finish(&t);
			qsort(all, n, sizeof(lt_topk_item), cmp_items);
			CHECK_EQ_INT(t.n, n < ks[ki] ? n : ks[ki]);
			CHECK_EQ_INT(t.pushed, n);
			for (size_t i = 0; i < t.n; i++)
			{
				CHECK_EQ_INT(t.items[i].addr, all[i].addr);
				CHECK_EQ_INT(t.items[i].cls, all[i].cls);
			}
			lt_topk_free(&t);
			free(all);
		}
}

static lt_dataset *
open_vectors(lt_store **store)
{
	char		root[1024];
	lt_version_spec spec = {0};
	lt_dataset *ds = NULL;

	snprintf(root, sizeof(root), "%s/vectors", unit_data_dir());
	CHECK_OK(lt_store_local_open(root, store, &err), err);
	if (*store)
		CHECK_OK(lt_dataset_open(*store, "", &spec, &ds, &err), err);
	return ds;
}

typedef struct row
{
	uint64_t	addr;
	bool		null;
	double		v[4];
} row;

/* Every live row's vector of field f (dim items, widened to double). */
static size_t
read_all(lt_dataset *ds, const lt_field *f, int dim, row *rows, size_t cap)
{
	size_t		n = 0;

	for (size_t fi = 0; fi < ds->n_fragments; fi++)
	{
		lt_scan_options o = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

		o.n_fields = 1;
		o.fields = &f;
		CHECK_OK(lt_fragment_scanner_open(ds, ds->fragments[fi], &o, &sc, &err), err);
		while (sc && lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
		{
			const lt_array *a = b->columns[0];

			for (int64_t r = 0; r < b->length && n < cap; r++, n++)
			{
				rows[n].addr = b->row_addrs[r];
				rows[n].null = !lt_array_is_valid(a, r);
				for (int i = 0; i < dim; i++)
				{
					const lt_array *it = a->children[0];

					if (it->field->type == LT_TYPE_FLOAT32)
					{
						float		x;

						memcpy(&x, it->values + (r * dim + i) * 4, 4);
						rows[n].v[i] = x;
					}
					else
					{
						uint16_t	h;

						memcpy(&h, it->values + (r * dim + i) * 2, 2);
						rows[n].v[i] = lt_half_to_float(h);
					}
				}
			}
		}
		lt_fragment_scanner_free(sc);
	}
	return n;
}

/* kNN over the dataset equals a brute-force ranking of every live row (same kernel, full sort) */
static int
cmp_double(const void *x, const void *y)
{
	double		a = *(const double *) x,
				b = *(const double *) y;

	return (a > b) - (a < b);
}

static bool
partheap_has(const lt_partheap *h, uint64_t id)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->items[i].id == id)
			return true;
	return false;
}

/* the engine's heap: which rows tied at the top survive follows Rust's BinaryHeap (worked by hand) */
TEST(partheap_engine_order)
{
	lt_partheap h;
	uint64_t	s = 11;

	/* k 2: 5a 5b, then 3c pops a (the root): b and c stay */
	CHECK_OK(lt_partheap_init(&h, 2, &err), err);
	lt_partheap_offer(&h, 5, 1);
	lt_partheap_offer(&h, 5, 2);
	lt_partheap_offer(&h, 3, 3);
	CHECK_EQ_INT(h.n, 2);
	CHECK(!partheap_has(&h, 1) && partheap_has(&h, 2) && partheap_has(&h, 3));
	/* a row at the top's distance does not enter */
	lt_partheap_offer(&h, 5, 4);
	CHECK(!partheap_has(&h, 4));
	lt_partheap_free(&h);

	/* k 3: 5a 5b 5c, then 1d: c moves to the root and sinks to the right; a goes, b c d stay */
	CHECK_OK(lt_partheap_init(&h, 3, &err), err);
	lt_partheap_offer(&h, 5, 1);
	lt_partheap_offer(&h, 5, 2);
	lt_partheap_offer(&h, 5, 3);
	lt_partheap_offer(&h, 1, 4);
	CHECK(!partheap_has(&h, 1) && partheap_has(&h, 2) && partheap_has(&h, 3) && partheap_has(&h, 4));
	lt_partheap_free(&h);

	/* whatever the ties, the kept distances are the k smallest; NaN only when fewer numbers */
	for (int rep = 0; rep < 200; rep++)
	{
		size_t		n = unit_xorshift(&s) % 200,
					k = 1 + unit_xorshift(&s) % 20;
		double	   *all = calloc(n + 1, sizeof(double)),
				   *kept = calloc(k + 1, sizeof(double));

		CHECK_OK(lt_partheap_init(&h, k, &err), err);
		for (size_t i = 0; i < n; i++)
		{
			all[i] = (double) (unit_xorshift(&s) % 9);
			lt_partheap_offer(&h, all[i], i);
		}
		qsort(all, n, sizeof(double), cmp_double);
		CHECK_EQ_INT(h.n, n < k ? n : k);
		for (size_t i = 0; i < h.n; i++)
			kept[i] = h.items[i].dist;
		qsort(kept, h.n, sizeof(double), cmp_double);
		for (size_t i = 0; i < h.n; i++)
			CHECK(kept[i] == all[i]);
		/* a max-heap: no item greater than its parent */
		for (size_t i = 1; i < h.n; i++)
			CHECK(h.items[i].dist <= h.items[(i - 1) / 2].dist);
		lt_partheap_free(&h);
		free(all);
		free(kept);
	}
}

TEST(knn_dataset)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_vectors(&store);
	const char *cols[] = {"vec", "v16"};
	int			dims[] = {4, 3};
	uint64_t	s = 99;

	if (!ds)
		return;
	CHECK_EQ_INT(ds->n_fragments, 3);
	for (int c = 0; c < 2; c++)
	{
		const lt_field *f = lt_schema_find_name(ds->schema, cols[c]);
		row		   *rows = calloc(400, sizeof(row));
		size_t		n;

		CHECK(lt_knn_field_ok(f));
		n = read_all(ds, f, dims[c], rows, 400);
		CHECK_EQ_INT(n, 266);
		for (int rep = 0; rep < 12; rep++)
		{
			lt_vmetric m = (lt_vmetric) (rep % 4);
			lt_vkernel kern = rep % 3 == 0 ? LT_VKERNEL_F64 : LT_VKERNEL_F32;
			float		q4[4];
			double		q8[4];
			size_t		k = 1 + unit_xorshift(&s) % 40;
			lt_knn_query q = {f, m, kern, kern == LT_VKERNEL_F32 ? (void *) q4 : (void *) q8, dims[c]};
			lt_topk		t,
						ref;
			lt_knn_stats st = {0};

			if (rep == 11)
				k = 1000;		/* more than there are rows: every row, NULL vectors last */
			for (int i = 0; i < dims[c]; i++)
				q8[i] = q4[i] = (float) ((int) (unit_xorshift(&s) % 2001) - 1000);
			CHECK_OK(lt_topk_init(&t, k, &err), err);
			CHECK_OK(lt_topk_init(&ref, n, &err), err);
			CHECK_OK(lt_knn_dataset(ds, &q, NULL, &t, &st, &err), err);
			for (size_t r = 0; r < n; r++)
			{
				float		v4[4];

				for (int i = 0; i < dims[c]; i++)
					v4[i] = (float) rows[r].v[i];
				if (rows[r].null)
					lt_topk_push_null(&ref, rows[r].addr);
				else
					lt_topk_push(&ref, kern == LT_VKERNEL_F32 ? lt_vdist_f32(m, v4, q4, dims[c])
								 : lt_vdist_f64(m, rows[r].v, q8, dims[c]), rows[r].addr);
			}
			lt_topk_finish(&t);
			lt_topk_finish(&ref);
			CHECK_EQ_INT(t.n, k < n ? k : n);
			CHECK_EQ_INT(st.rows_scored + st.rows_null, n);
			CHECK_EQ_INT(st.rows_null, c == 0 ? 7 : 0);
			CHECK_EQ_INT(st.fragments, 3);
			for (size_t i = 0; i < t.n; i++)
			{
				CHECK_EQ_INT(t.items[i].addr, ref.items[i].addr);
				CHECK(t.items[i].cls == ref.items[i].cls);
				CHECK(t.items[i].cls != LT_TOPK_NUMBER || t.items[i].dist == ref.items[i].dist);
			}
			if (k >= n)
				CHECK(t.items[n - 1].cls == (c == 0 ? LT_TOPK_NULL : LT_TOPK_NUMBER));
			lt_topk_free(&t);
			lt_topk_free(&ref);
		}
		free(rows);
	}
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* a query of another dimension is refused with the row's dimension */
TEST(knn_bad_dimension)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_vectors(&store);
	float		q[3] = {1, 2, 3};
	lt_topk		t;
	lt_knn_stats st = {0};

	if (!ds)
		return;
	{
		lt_knn_query kq = {lt_schema_find_name(ds->schema, "vec"), LT_VMETRIC_L2, LT_VKERNEL_F32, q, 3};

		CHECK_OK(lt_topk_init(&t, 5, &err), err);
		CHECK_CODE(lt_knn_dataset(ds, &kq, NULL, &t, &st, &err), LT_EINVALID);
		CHECK_EQ_INT(st.bad, LT_KNN_BAD_DIM);
		CHECK_EQ_INT(st.bad_dim, 4);
		CHECK(strstr(err.msg, "different vector dimensions 4 and 3") != NULL);
		lt_topk_free(&t);
		/* not a vector column */
		kq.field = lt_schema_find_name(ds->schema, "id");
		CHECK(!lt_knn_field_ok(kq.field));
		CHECK_OK(lt_topk_init(&t, 5, &err), err);
		CHECK_CODE(lt_knn_dataset(ds, &kq, NULL, &t, &st, &err), LT_EINVALID);
		lt_topk_free(&t);
	}
	lt_dataset_close(ds);
	lt_store_close(store);
}

/*
 * The engine's IVF_FLAT index of test/data/vectors: its model read back, every partition probed gives the
 * exact answer (rows of the index minus deleted ones), one partition scores fewer rows, NULL vectors are not
 * in the index; a segment's files missing or another kind asked to search are clean errors.
 */
static bool
even_offset(uint64_t addr, void *arg)
{
	(void) arg;
	return (addr & 1) == 0;
}

TEST(ivf_flat)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_vectors(&store);
	lt_index_list *l = NULL;
	const lt_index *ix = NULL;
	uint64_t	s = 5;

	if (!ds)
		return;
	CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
	for (size_t i = 0; l && i < l->n; i++)
		if (strcmp(l->items[i].name, "vec_idx") == 0)
			ix = &l->items[i];
	CHECK(ix != NULL);
	if (ix)
	{
		char		dir[128];
		lt_ivf	   *ivf = NULL;
		uint64_t	rows = 0;

		snprintf(dir, sizeof(dir), "_indices/%s/", ix->segments[0].uuid);
		CHECK_OK(lt_ivf_open(ds->store, dir, true, &ivf, &err), err);
		if (ivf)
		{
			uint32_t	parts[3];
			float		q[4] = {100, -200, 300, 0};

			CHECK(strcmp(ivf->type_name, "IVF_FLAT") == 0);
			CHECK(strcmp(ivf->distance_type, "l2") == 0);
			CHECK_EQ_INT(ivf->dim, 4);
			CHECK_EQ_INT(ivf->n_partitions, 3);
			for (uint32_t p = 0; p < 3; p++)
				rows += ivf->part_len[p];
			/* the 300 rows written, without the 7 NULL vectors (the engine does not index them) */
			CHECK_EQ_INT(rows, 293);
			CHECK_EQ_INT(lt_ivf_probe(ivf, q, 10, parts), 3);
			CHECK(parts[0] != parts[1] && parts[1] != parts[2] && parts[0] != parts[2]);
			CHECK_EQ_INT(lt_ivf_probe(ivf, q, 1, parts), 1);
			lt_ivf_close(ivf);
		}
		for (int rep = 0; rep < 10; rep++)
		{
			float		q[4];
			lt_knn_query kq = {ix->field, LT_VMETRIC_L2, LT_VKERNEL_F32, q, 4, false};
			lt_vsearch_params p3 = {3, 0, NULL, NULL},
						p1 = {1, rep % 2 ? 0 : 4, NULL, NULL};
			lt_topk		a,
						b,
						c;
			lt_vsearch_stats st = {0},
						st1 = {0};
			lt_knn_stats ks = {0};

			for (int i = 0; i < 4; i++)
				q[i] = (float) ((int) (unit_xorshift(&s) % 2001) - 1000);
			CHECK_OK(lt_topk_init(&a, 20, &err), err);
			CHECK_OK(lt_topk_init(&b, 20, &err), err);
			CHECK_OK(lt_topk_init(&c, 20, &err), err);
			CHECK_OK(lt_vector_search(ds, ix, &kq, &p3, &a, &st, &err), err);
			CHECK_OK(lt_knn_dataset(ds, &kq, NULL, &b, &ks, &err), err);
			CHECK_OK(lt_vector_search(ds, ix, &kq, &p1, &c, &st1, &err), err);
			lt_topk_finish(&a);
			lt_topk_finish(&b);
			lt_topk_finish(&c);
			CHECK_EQ_INT(st.segments, 1);
			CHECK_EQ_INT(st.partitions_probed, 3);
			CHECK_EQ_INT(st.index_rows_scored, 259);	/* 266 live rows, 7 of them NULL */
			CHECK_EQ_INT(st.unindexed_fragments, 0);
			CHECK(st1.index_rows_scored < st.index_rows_scored);
			CHECK_EQ_INT(a.n, 20);
			for (size_t i = 0; i < a.n && i < b.n; i++)
				CHECK_EQ_INT(a.items[i].addr, b.items[i].addr);
			lt_topk_free(&a);
			lt_topk_free(&b);
			lt_topk_free(&c);
			/* a cosine search through an l2 index is refused (the caller searches exactly) */
			kq.metric = LT_VMETRIC_COSINE;
			CHECK_OK(lt_topk_init(&a, 5, &err), err);
			CHECK_CODE(lt_vector_search(ds, ix, &kq, &p3, &a, &st, &err), LT_EINVALID);
			CHECK(strstr(err.msg, "distance type l2") != NULL);
			lt_topk_free(&a);
		}
		/* a prefilter: only even row offsets; every row returned passes it, and there are as many */
		{
			float		q[4] = {100, -200, 300, 0};
			lt_knn_query kq = {ix->field, LT_VMETRIC_L2, LT_VKERNEL_F32, q, 4, false};
			lt_vsearch_params p = {3, 0, even_offset, NULL};
			lt_vsearch_stats st = {0};
			lt_topk		a;

			CHECK_OK(lt_topk_init(&a, 50, &err), err);
			CHECK_OK(lt_vector_search(ds, ix, &kq, &p, &a, &st, &err), err);
			lt_topk_finish(&a);
			CHECK_EQ_INT(a.n, 50);
			for (size_t i = 0; i < a.n; i++)
				CHECK(a.items[i].cls == LT_TOPK_NULL || (a.items[i].addr & 1) == 0);
			CHECK(st.index_rows_rejected > 0);
			lt_topk_free(&a);
		}
		/* through the segment cache (lt_vcache.h): the same answers, the later searches from the cache */
		{
			float		q[4] = {100, -200, 300, 0};
			lt_knn_query kq = {ix->field, LT_VMETRIC_L2, LT_VKERNEL_F32, q, 4, false};
			lt_vsearch_params p = {2, 0, NULL, NULL};
			lt_vsearch_stats st = {0};
			lt_vcache_stats cs,
						cs0;
			lt_topk		t[3];

			lt_vcache_stats_get(&cs0);	/* the counters are the process's */

			for (int i = 0; i < 3; i++)
			{
				if (i == 1)
					lt_vcache_configure(NULL, 1 << 20);
				CHECK_OK(lt_topk_init(&t[i], 30, &err), err);
				CHECK_OK(lt_vector_search(ds, ix, &kq, &p, &t[i], &st, &err), err);
				lt_topk_finish(&t[i]);
			}
			lt_vcache_stats_get(&cs);
			CHECK_EQ_INT(cs.hits - cs0.hits, 3);	/* the model and the 2 probed partitions */
			CHECK_EQ_INT(cs.entries, 3);
			for (int i = 1; i < 3; i++)
				CHECK_SAME_TOPK(t[i], t[0]);
			for (int i = 0; i < 3; i++)
				lt_topk_free(&t[i]);
			lt_vcache_configure(NULL, 0);
		}
		/* a directory without the files; an index asked for its storage that is not IVF_FLAT is refused */
		{
			lt_ivf	   *none = NULL;

			CHECK(lt_ivf_open(ds->store, "_indices/00000000-0000-0000-0000-000000000000/", true, &none, &err) != LT_OK);
			CHECK(none == NULL);
		}
	}
	if (l)
		lt_index_list_free(l);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* the segment cache: budget, least recently used first, pins outlive eviction, replacement, a budget of 0 */
TEST(vcache)
{
	lt_vcache_stats st,
				st0;
	unsigned char *a,
			   *b,
			   *c,
			   *pinned;
	size_t		len = 0;

	lt_vcache_stats_get(&st0);	/* the counters are the process's */
	CHECK(lt_vcache_put("k", 0, 100, false) == NULL);	/* no budget: nothing kept */
	lt_vcache_configure(NULL, 4096);
	CHECK((a = lt_vcache_put("root\x1f_indices/u/", 0, 1000, false)) != NULL);
	memset(a, 1, 1000);
	CHECK((pinned = lt_vcache_put("root\x1f_indices/u/", LT_VCACHE_MODEL, 1000, true)) != NULL);
	memset(pinned, 2, 1000);
	CHECK(((uintptr_t) pinned % 16) == 0);
	CHECK((b = lt_vcache_put("root\x1f_indices/u/", 1, 1000, false)) != NULL);
	memset(b, 3, 1000);
	CHECK(lt_vcache_get("root\x1f_indices/u/", 0, &len, false) == a && len == 1000 && a[999] == 1);
	CHECK(lt_vcache_get("root\x1f_indices/v/", 0, NULL, false) == NULL);	/* another segment */
	CHECK(lt_vcache_get("root\x1f_indices/u/", 2, NULL, false) == NULL);	/* another partition */
	/* the next entry does not fit: partition 1 (least recently used, unpinned) goes, the pinned model stays */
	CHECK((c = lt_vcache_put("root\x1f_indices/u/", 2, 1500, false)) != NULL);
	memset(c, 4, 1500);
	CHECK(lt_vcache_get("root\x1f_indices/u/", 1, NULL, false) == NULL);
	CHECK(lt_vcache_get("root\x1f_indices/u/", LT_VCACHE_MODEL, NULL, false) == pinned && pinned[0] == 2);
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.evictions - st0.evictions, 1);
	CHECK(st.bytes <= 4096);
	/* a pinned entry is not replaced; larger than the budget is not kept */
	CHECK(lt_vcache_put("root\x1f_indices/u/", LT_VCACHE_MODEL, 10, false) == NULL);
	CHECK(lt_vcache_put("x", 0, 5000, false) == NULL);
	/* pinned entries fill the budget: a put that cannot make room keeps nothing, and drops nothing pinned */
	lt_vcache_configure(NULL, 1200);
	CHECK(lt_vcache_get("root\x1f_indices/u/", LT_VCACHE_MODEL, NULL, false) == pinned);
	CHECK(lt_vcache_put("y", 0, 500, false) == NULL);
	lt_vcache_unpin(pinned);
	CHECK(lt_vcache_put("y", 0, 500, false) != NULL);
	CHECK(lt_vcache_get("root\x1f_indices/u/", LT_VCACHE_MODEL, NULL, false) == NULL);
	lt_vcache_configure(NULL, 0);
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.entries, 0);
	CHECK_EQ_INT(st.bytes, 0);
	CHECK(lt_vcache_get("y", 0, NULL, false) == NULL);
}

int
main(void)
{
	RUN(known_values);
	RUN(hamming);
	RUN(kernels_random);
	RUN(topk_against_sort);
	RUN(partheap_engine_order);
	RUN(knn_dataset);
	RUN(knn_bad_dimension);
	RUN(ivf_flat);
	RUN(vcache);
	return unit_report("vector");
}
