/*
 * Unit tests of index planning (lt_index_plan.c) on test/data/indexed: btree on
 * id and f, bitmap on k, label_list on tags, fragments 0 and 1 indexed,
 * fragment 2 appended after the indexes, rows with id % 9 = 4 deleted.
 *
 * The oracle is the fragment scanner with the same filter over every fragment:
 * a plan must give exactly those rows when its verdicts are followed (PRUNED:
 * none, ALL: every live row, ROWS: the offsets, CANDIDATES: the offsets that
 * pass the filter, SCAN: a filtered scan), ROWS and ALL must need no recheck,
 * and CANDIDATES must hold every matching row.
 */
#include "unit.h"

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "index/lt_index.h"
#include "index/lt_index_int.h"
#include "index/lt_index_plan.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

static lt_error err;

static uint64_t rng = 0x2545f4914f6cdd1dULL;
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

/* Rows of fragment i where f is TRUE (f NULL: every live row), restricted to offs when given. */
static void
scan_into(lt_dataset *ds, size_t i, lt_filter *f, const uint32_t *offs, uint64_t n, lt_rowaddr_set *out)
{
	lt_scan_options o = {0};
	lt_fragment_scanner *sc = NULL;
	lt_batch   *b;
	const lt_field *first = ds->schema->fields[0];

	o.n_fields = f ? lt_filter_n_columns(f) : 1;
	o.fields = f ? lt_filter_columns(f) : &first;
	o.filter = f;
	o.offsets = offs;
	o.n_offsets = n;
	if (offs && n == 0)
		return;
	CHECK_OK(lt_fragment_scanner_open(ds, ds->fragments[i], &o, &sc, &err), err);
	while (sc && lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
		for (int64_t r = 0; r < b->length; r++)
			lt_rowaddr_set_add(out, b->row_addrs[r], &err);
	lt_fragment_scanner_free(sc);
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

/* Follow the plan; check it against the filtered scan. Returns false on a mismatch. */
static bool
check_plan(lt_dataset *ds, lt_filter *f, const lt_index_plan *plan)
{
	lt_rowaddr_set *want = lt_rowaddr_set_create(),
			   *got = lt_rowaddr_set_create();
	bool		ok = true;

	CHECK_EQ_INT(plan->n_fragments, ds->n_fragments);
	CHECK_EQ_INT(plan->n_scan + plan->n_pruned + plan->n_all + plan->n_rows + plan->n_candidates, ds->n_fragments);
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const lt_frag_plan *fp = &plan->fragments[i];
		lt_rowaddr_set *exact_rows = lt_rowaddr_set_create(),
				   *checked = lt_rowaddr_set_create();

		CHECK_EQ_INT(fp->fragment_id, ds->fragments[i]->id);
		scan_into(ds, i, f, NULL, 0, want);
		switch (fp->verdict)
		{
			case LT_FRAG_PRUNED:
				break;
			case LT_FRAG_SCAN:
				scan_into(ds, i, f, NULL, 0, got);
				break;
			case LT_FRAG_ALL:
				CHECK_EQ_INT(fp->n_offsets, lt_fragment_live_rows(ds->fragments[i]));
				/* every live row passes: reading them without the filter = with it */
				scan_into(ds, i, NULL, NULL, 0, exact_rows);
				scan_into(ds, i, f, NULL, 0, checked);
				ok &= set_equal(exact_rows, checked);
				lt_rowaddr_set_or(got, exact_rows, &err);
				break;
			case LT_FRAG_ROWS:
				for (uint64_t k = 0; k < fp->n_offsets; k++)
					lt_rowaddr_set_add(exact_rows, (uint64_t) fp->fragment_id << 32 | fp->offsets[k], &err);
				scan_into(ds, i, f, fp->offsets, fp->n_offsets, checked);
				ok &= set_equal(exact_rows, checked);	/* no recheck needed */
				lt_rowaddr_set_or(got, exact_rows, &err);
				break;
			case LT_FRAG_CANDIDATES:
				CHECK(fp->n_offsets < lt_fragment_live_rows(ds->fragments[i]));
				scan_into(ds, i, f, fp->offsets, fp->n_offsets, got);
				break;
		}
		for (uint64_t k = 1; k < fp->n_offsets && fp->offsets; k++)
			ok &= fp->offsets[k - 1] < fp->offsets[k];
		lt_rowaddr_set_free(exact_rows);
		lt_rowaddr_set_free(checked);
	}
	ok &= set_equal(want, got);
	CHECK(ok);
	lt_rowaddr_set_free(want);
	lt_rowaddr_set_free(got);
	return ok;
}

/* A filter over (id, k, f, tags) of the dataset. */
static lt_filter *
new_filter(lt_dataset *ds)
{
	const lt_field *cols[4];
	lt_filter  *f = NULL;

	for (int i = 0; i < 4; i++)
		cols[i] = lt_schema_find_name(ds->schema, (const char *[]) {"id", "k", "f", "tags"}[i]);
	CHECK_OK(lt_filter_new(4, cols, &f, &err), err);
	return f;
}

static lt_expr *
cmp(lt_filter *f, int col, lt_cmp_op op, lt_value v)
{
	return lt_expr_cmp(f, op, lt_expr_column(f, col, &err), lt_expr_const(f, &v, &err), &err);
}

static lt_expr *
and2(lt_filter *f, lt_expr *a, lt_expr *b)
{
	lt_expr    *args[2] = {a, b};

	return lt_expr_and(f, 2, args, &err);
}

static lt_expr *
or2(lt_filter *f, lt_expr *a, lt_expr *b)
{
	lt_expr    *args[2] = {a, b};

	return lt_expr_or(f, 2, args, &err);
}

static lt_index_plan *
plan_of(lt_index_planner *p, lt_filter *f, lt_expr *root)
{
	lt_index_plan *plan = NULL;

	CHECK_OK(lt_filter_set_root(f, root, &err), err);
	CHECK_OK(lt_index_plan_build(p, f, 0, NULL, &plan, &err), err);
	return plan;
}

TEST(verdicts)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_index_planner *p = NULL;
	lt_index_plan *plan;
	lt_filter  *f;

	if (!ds)
		return;
	CHECK_OK(lt_index_planner_open(ds, &p, &err), err);
	if (!p)
		return;
	CHECK_EQ_INT(lt_index_planner_indexes(p)->n, 4);
	CHECK(lt_index_planner_index_for(p, ds->schema->fields[0]->id) != NULL);
	CHECK(lt_index_planner_index_for(p, lt_schema_find_name(ds->schema, "tags")->id) == NULL);

	/* a point lookup: one row of fragment 0, fragment 1 pruned, fragment 2 (appended) scanned */
	f = new_filter(ds);
	plan = plan_of(p, f, cmp(f, 0, LT_CMP_EQ, vint(5)));
	CHECK(plan && plan->fragments[0].verdict == LT_FRAG_ROWS && plan->fragments[0].n_offsets == 1);
	CHECK(plan && plan->fragments[1].verdict == LT_FRAG_PRUNED);
	CHECK(plan && plan->fragments[2].verdict == LT_FRAG_SCAN);
	CHECK(plan && plan->n_used == 1 && plan->used[0].exact && strcmp(plan->used[0].index->name, "id_idx") == 0);
	CHECK(plan && strstr(lt_index_use_predicate(&plan->used[0]), "id") != NULL);
	CHECK(plan && plan->rows_selected == 1);
	if (plan)
		check_plan(ds, f, plan);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* a deleted id: nothing in the indexed fragments */
	f = new_filter(ds);
	plan = plan_of(p, f, cmp(f, 0, LT_CMP_EQ, vint(13)));
	CHECK(plan && plan->n_pruned == 2 && plan->n_scan == 1);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* every id of the indexed fragments: ALL, with deleted rows not counted */
	f = new_filter(ds);
	plan = plan_of(p, f, cmp(f, 0, LT_CMP_GE, vint(0)));
	CHECK(plan && plan->n_all == 2 && plan->n_scan == 1);
	CHECK(plan && plan->fragments[0].n_offsets == lt_fragment_live_rows(ds->fragments[0]));
	if (plan)
		check_plan(ds, f, plan);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* a range on one column is one lookup */
	f = new_filter(ds);
	plan = plan_of(p, f, and2(f, cmp(f, 0, LT_CMP_GE, vint(100)), cmp(f, 0, LT_CMP_LT, vint(200))));
	CHECK(plan && plan->n_used == 1);
	CHECK(plan && plan->fragments[0].verdict == LT_FRAG_ROWS && plan->n_pruned == 1);
	if (plan)
		check_plan(ds, f, plan);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* AND of two indexes intersects: exact */
	f = new_filter(ds);
	plan = plan_of(p, f, and2(f, cmp(f, 0, LT_CMP_LT, vint(3000)), cmp(f, 1, LT_CMP_EQ, vint(3))));
	CHECK(plan && plan->n_used == 2 && plan->fragments[0].verdict == LT_FRAG_ROWS);
	if (plan)
		check_plan(ds, f, plan);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* AND with a part no index answers: candidates */
	f = new_filter(ds);
	plan = plan_of(p, f, and2(f, cmp(f, 0, LT_CMP_LT, vint(50)),
							  lt_expr_is_null(f, lt_expr_column(f, 3, &err), false, &err)));
	CHECK(plan && plan->fragments[0].verdict == LT_FRAG_CANDIDATES && plan->fragments[1].verdict == LT_FRAG_PRUNED);
	if (plan)
		check_plan(ds, f, plan);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* OR with such a part: nothing to narrow */
	f = new_filter(ds);
	plan = plan_of(p, f, or2(f, cmp(f, 0, LT_CMP_LT, vint(50)),
							 lt_expr_is_null(f, lt_expr_column(f, 3, &err), false, &err)));
	CHECK(plan && plan->n_scan == 3);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* OR of two indexes unions; NOT over both columns is pushed down */
	f = new_filter(ds);
	plan = plan_of(p, f, lt_expr_not(f, or2(f, cmp(f, 0, LT_CMP_GE, vint(20)), cmp(f, 2, LT_CMP_LT, vint(0))),
									  &err));
	CHECK(plan && plan->n_used == 2 && plan->fragments[1].verdict == LT_FRAG_PRUNED);
	if (plan)
		check_plan(ds, f, plan);
	lt_index_plan_free(plan);
	lt_filter_free(f);

	/* planning estimates: id is unique (btree), k has 16 values and nulls (bitmap), tags none (label_list) */
	{
		double		rpv = -1;

		CHECK_OK(lt_index_planner_rows_per_value(p, ds->schema->fields[0]->id, &rpv, &err), err);
		CHECK(rpv >= 1 && rpv < 1.1);
		CHECK_OK(lt_index_planner_rows_per_value(p, lt_schema_find_name(ds->schema, "k")->id, &rpv, &err), err);
		CHECK(rpv > 300 && rpv < 700);
		CHECK_OK(lt_index_planner_rows_per_value(p, lt_schema_find_name(ds->schema, "tags")->id, &rpv, &err), err);
		CHECK(rpv == 0);
	}

	/* no filter: every fragment scanned, no index used */
	CHECK_OK(lt_index_plan_build(p, NULL, 0, NULL, &plan, &err), err);
	CHECK(plan && plan->n_scan == 3 && plan->n_used == 0);
	lt_index_plan_free(plan);

	lt_index_planner_free(p);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* Label predicates AND-ed with the filter. */
TEST(labels)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_index_planner *p = NULL;
	lt_index_plan *plan = NULL;
	lt_label_pred lp;
	lt_value	none[1];

	if (!ds)
		return;
	CHECK_OK(lt_index_planner_open(ds, &p, &err), err);
	if (!p)
		return;
	/* && of no values: no row of an indexed fragment */
	lp.field = lt_schema_find_name(ds->schema, "tags");
	lp.op = LT_LABEL_HAS_ANY;
	lp.n = 0;
	lp.values = none;
	CHECK_OK(lt_index_plan_build(p, NULL, 1, &lp, &plan, &err), err);
	CHECK(plan && plan->n_pruned == 2 && plan->n_scan == 1 && plan->n_used == 1);
	lt_index_plan_free(plan);
	/* @> of no values: rows whose list is not NULL, exactly */
	lp.op = LT_LABEL_HAS_ALL;
	CHECK_OK(lt_index_plan_build(p, NULL, 1, &lp, &plan, &err), err);
	CHECK(plan && plan->fragments[0].verdict == LT_FRAG_ROWS);
	if (plan)
	{
		lt_filter  *f = new_filter(ds);

		CHECK_OK(lt_filter_set_root(f, lt_expr_is_null(f, lt_expr_column(f, 3, &err), true, &err), &err), err);
		check_plan(ds, f, plan);
		lt_filter_free(f);
	}
	lt_index_plan_free(plan);
	lt_index_planner_free(p);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* --- random filters over id, k and f (and tags IS NULL, which no index answers) --------------- */

static lt_expr *
rand_leaf(lt_filter *f, int *next_slot)
{
	int			c = rndn(7);
	lt_value	v;

	if (c == 6)
		return lt_expr_is_null(f, lt_expr_column(f, rndn(2) ? 3 : 2, &err), rndn(2), &err);
	c = c / 2;					/* 0 id, 1 k, 2 f */
	v = c == 0 ? vint(rndn(9800) - 50) : c == 1 ? vint(rndn(18) - 1) : vflt((rndn(2000000) - 1000000) / 25.0);
	switch (rndn(4))
	{
		case 0:
			{
				lt_expr    *items[4];
				int			n = rndn(4);

				for (int i = 0; i < n; i++)
				{
					lt_value	u = c == 0 ? vint(rndn(9800)) : c == 1 ? vint(rndn(16)) : vflt(rndn(100));

					items[i] = lt_expr_const(f, &u, &err);
				}
				return lt_expr_in(f, lt_expr_column(f, c, &err), n, items, &err);
			}
		case 1:
			{
				/* a parameter, set now */
				int			slot = (*next_slot)++;
				lt_expr    *e = lt_expr_cmp(f, (lt_cmp_op) rndn(6), lt_expr_column(f, c, &err),
											lt_expr_param(f, slot, v.kind, &err), &err);

				lt_filter_set_param(f, slot, &v, &err);
				return e;
			}
		default:
			return cmp(f, c, (lt_cmp_op) rndn(6), v);
	}
}

static lt_expr *
rand_expr(lt_filter *f, int depth, int *next_slot)
{
	lt_expr    *args[3];
	int			n;

	if (depth == 0 || rndn(4) == 0)
		return rand_leaf(f, next_slot);
	switch (rndn(4))
	{
		case 0:
			return lt_expr_not(f, rand_expr(f, depth - 1, next_slot), &err);
		case 1:
		case 2:
			n = 2 + rndn(2);
			for (int i = 0; i < n; i++)
				args[i] = rand_expr(f, depth - 1, next_slot);
			return lt_expr_and(f, n, args, &err);
		default:
			args[0] = rand_expr(f, depth - 1, next_slot);
			args[1] = rand_expr(f, depth - 1, next_slot);
			return lt_expr_or(f, 2, args, &err);
	}
}

TEST(random_filters)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_indexed(&store);
	lt_index_planner *p = NULL;
	int			narrowed = 0,
				exact = 0,
				failures = 0;

	if (!ds)
		return;
	CHECK_OK(lt_index_planner_open(ds, &p, &err), err);
	for (int round = 0; p && round < 300 && failures < 5; round++)
	{
		lt_filter  *f = new_filter(ds);
		int			slots = 0;
		lt_expr    *root = rand_expr(f, 3, &slots);
		lt_index_plan *plan = NULL;

		if (!root)
		{
			lt_filter_free(f);
			continue;
		}
		CHECK_OK(lt_filter_set_root(f, root, &err), err);
		CHECK_OK(lt_index_plan_build(p, f, 0, NULL, &plan, &err), err);
		if (plan && !check_plan(ds, f, plan))
		{
			char	   *s = lt_filter_render(f);

			fprintf(stderr, "  plan differs from the scan for %s\n", s ? s : "?");
			lt_free(s);
			failures++;
		}
		if (plan && plan->n_scan < 3)
			narrowed++;
		if (plan && plan->n_rows + plan->n_all + plan->n_pruned == 2)
			exact++;
		lt_index_plan_free(plan);
		lt_filter_free(f);
	}
	/* the test means something: most plans narrow the indexed fragments, many exactly */
	CHECK(narrowed > 100);
	CHECK(exact > 50);
	lt_index_planner_free(p);
	lt_dataset_close(ds);
	lt_store_close(store);
}

int
main(void)
{
	RUN(verdicts);
	RUN(labels);
	RUN(random_filters);
	return unit_report("index planning");
}
