/*
 * bench/filter — filter evaluation and late materialization.
 *
 *   filter [DIR] [--repeat N] [--batch ROWS]
 *
 * First the kernels alone: `x > c` (and a few others) over 10M in-memory
 * int32 / float64 values, as values/s, to a byte mask and to a selection.
 * Then, with DIR (bench/run.sh's table: i32 = row % 100000, f32 uniform in
 * [0, 1000)), full scans of every column without a filter and with filters
 * of several selectivities, as the FDW would run them: the filter columns
 * are read first and the others only for passing rows.  Best of N runs, in
 * thread CPU time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_filter.h"
#include "table/lt_scan.h"

/* CPU time of this thread: the dev machines are shared, wall time swings with their load */
static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const lt_error *err) __attribute__((noreturn));

static void
die(const lt_error *err)
{
	fprintf(stderr, "filter: %s\n", err->msg);
	exit(1);
}

#define N_VALUES 10000000

typedef struct kcase
{
	const char *name;
	lt_cmp_op	op;
	lt_value	lit;
	int			between;		/* x BETWEEN lit AND hi */
	lt_value	hi;
	int			in;				/* x IN (lit, lit+1, ... ) of this many items */
} kcase;

static void
bench_kernel(const char *type, const kcase *k, bool nulls, int repeat)
{
	lt_field	fld = {0};
	lt_array   *a;
	lt_filter  *f;
	lt_error	err;
	const lt_field *cols[1] = {&fld};
	lt_expr    *x, *e;
	uint32_t   *sel = malloc(N_VALUES * sizeof(uint32_t));
	double		best_mask = 1e30, best_sel = 1e30;
	int64_t		n_sel = 0;
	uint64_t	seed = 12345;

	fld.name = "x";
	if (lt_parse_logical_type(type, &fld, &err) != LT_OK || lt_array_new(&fld, &a, &err) != LT_OK ||
		lt_array_reserve(a, N_VALUES, &err) != LT_OK)
		die(&err);
	for (int64_t i = 0; i < N_VALUES; i++)
	{
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (fld.type == LT_TYPE_INT32)
			((int32_t *) a->values)[i] = (int32_t) ((seed >> 33) % 1000000);
		else
			((double *) a->values)[i] = (double) ((seed >> 33) % 1000000) / 1000.0;
	}
	a->length = N_VALUES;
	if (nulls)
	{
		if (lt_array_ensure_validity(a, &err) != LT_OK)
			die(&err);
		for (int64_t i = 0; i < N_VALUES; i += 10)
			a->validity[i] = 0;
	}
	if (lt_filter_new(1, cols, &f, &err) != LT_OK)
		die(&err);
	x = lt_expr_column(f, 0, &err);
	if (k->between)
		e = lt_expr_between(f, x, lt_expr_const(f, &k->lit, &err), lt_expr_const(f, &k->hi, &err), &err);
	else if (k->in)
	{
		lt_expr    *items[64];

		for (int i = 0; i < k->in; i++)
		{
			lt_value	v = k->lit;

			v.v.i += i * 7;
			items[i] = lt_expr_const(f, &v, &err);
		}
		e = lt_expr_in(f, x, k->in, items, &err);
	}
	else
		e = lt_expr_cmp(f, k->op, x, lt_expr_const(f, &k->lit, &err), &err);
	if (!e || lt_filter_set_root(f, e, &err) != LT_OK)
		die(&err);
	for (int r = 0; r < repeat; r++)
	{
		const uint8_t *m;
		double		t0 = now();

		if (lt_filter_eval_mask(f, &a, N_VALUES, &m, &err) != LT_OK)
			die(&err);
		if (now() - t0 < best_mask)
			best_mask = now() - t0;
		t0 = now();
		if (lt_filter_eval(f, &a, N_VALUES, sel, &n_sel, &err) != LT_OK)
			die(&err);
		if (now() - t0 < best_sel)
			best_sel = now() - t0;
	}
	printf("%-8s %-22s %-6s %8.1f%% %14.0f %14.0f\n", type, k->name, nulls ? "10%" : "none",
		   100.0 * n_sel / N_VALUES, N_VALUES / best_mask, N_VALUES / best_sel);
	lt_filter_free(f);
	lt_array_free(a);
	free(sel);
}

typedef struct scan_result
{
	double		seconds;
	uint64_t	rows, scanned, pages;
} scan_result;

static scan_result
scan(lt_dataset *ds, const lt_field **fields, int n, lt_filter *flt, uint64_t batch_rows)
{
	lt_error	err;
	scan_result res = {0};
	double		t0 = now();

	for (size_t fi = 0; fi < ds->n_fragments; fi++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;
		lt_scan_stats st;

		so.n_fields = n;
		so.fields = fields;
		so.batch_rows = batch_rows;
		so.filter = flt;
		if (lt_fragment_scanner_open(ds, ds->fragments[fi], &so, &sc, &err) != LT_OK)
			die(&err);
		for (;;)
		{
			if (lt_fragment_scanner_next(sc, &b, &err) != LT_OK)
				die(&err);
			if (!b)
				break;
			res.rows += (uint64_t) b->length;
		}
		lt_fragment_scanner_stats(sc, &st);
		res.scanned += st.rows_scanned;
		res.pages += st.pages;
		lt_fragment_scanner_free(sc);
	}
	res.seconds = now() - t0;
	return res;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL;
	int			repeat = 3;
	uint64_t	batch_rows = LT_DEFAULT_BATCH_ROWS;
	kcase		cases[6];
	int			nc = 0;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
			batch_rows = strtoull(argv[++i], NULL, 10);
		else
			dir = argv[i];
	}

	printf("== kernels over %d in-memory values (values/s)\n", N_VALUES);
	printf("%-8s %-22s %-6s %9s %14s %14s\n", "type", "predicate", "nulls", "selected", "to mask", "to selection");
	memset(cases, 0, sizeof(cases));
	cases[nc].name = "x > 500000";
	cases[nc].op = LT_CMP_GT;
	cases[nc].lit = (lt_value) {.kind = LT_VALUE_INT, .v.i = 500000};
	nc++;
	cases[nc].name = "x > 990000";
	cases[nc].op = LT_CMP_GT;
	cases[nc].lit = (lt_value) {.kind = LT_VALUE_INT, .v.i = 990000};
	nc++;
	cases[nc].name = "x > 5e5::int8";
	cases[nc].op = LT_CMP_GT;
	cases[nc].lit = (lt_value) {.kind = LT_VALUE_UINT, .v.u = 500000};
	nc++;
	cases[nc].name = "x BETWEEN 1000 AND 9e5";
	cases[nc].between = 1;
	cases[nc].lit = (lt_value) {.kind = LT_VALUE_INT, .v.i = 1000};
	cases[nc].hi = (lt_value) {.kind = LT_VALUE_INT, .v.i = 900000};
	nc++;
	cases[nc].name = "x IN (5 items)";
	cases[nc].in = 5;
	cases[nc].lit = (lt_value) {.kind = LT_VALUE_INT, .v.i = 1000};
	nc++;
	cases[nc].name = "x IN (40 items)";
	cases[nc].in = 40;
	cases[nc].lit = (lt_value) {.kind = LT_VALUE_INT, .v.i = 1000};
	nc++;
	for (int c = 0; c < nc; c++)
		bench_kernel("int32", &cases[c], false, repeat);
	bench_kernel("int32", &cases[0], true, repeat);
	{
		kcase		fk = {.name = "x > 500.0", .op = LT_CMP_GT, .lit = {.kind = LT_VALUE_FLOAT, .v.f = 500.0}};
		kcase		fk2 = {.name = "x < 10.0", .op = LT_CMP_LT, .lit = {.kind = LT_VALUE_FLOAT, .v.f = 10.0}};

		bench_kernel("double", &fk, false, repeat);
		bench_kernel("double", &fk2, false, repeat);
		bench_kernel("double", &fk, true, repeat);
	}

	if (dir)
	{
		lt_store   *store;
		lt_dataset *ds;
		lt_version_spec spec = {0};
		lt_error	err;
		const lt_field *all[16];
		int			nall;
		struct
		{
			const char *name;
			const char *col;
			lt_cmp_op	op;
			lt_value	lit;
		}			fc[] = {
			{"i32 < 1000 (1%, clustered)", "i32", LT_CMP_LT, {.kind = LT_VALUE_INT, .v.i = 1000}},
			{"f32 < 10 (1%, scattered)", "f32", LT_CMP_LT, {.kind = LT_VALUE_FLOAT, .v.f = 10}},
			{"f32 < 500 (50%, scattered)", "f32", LT_CMP_LT, {.kind = LT_VALUE_FLOAT, .v.f = 500}},
			{"i32 >= 0 (100%)", "i32", LT_CMP_GE, {.kind = LT_VALUE_INT, .v.i = 0}},
		};
		scan_result base = {.seconds = 1e30};

		if (lt_store_local_open(dir, &store, &err) != LT_OK || lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
			die(&err);
		nall = ds->schema->n_fields < 16 ? ds->schema->n_fields : 16;
		for (int i = 0; i < nall; i++)
			all[i] = ds->schema->fields[i];
		printf("\n== scans of %s, all %d columns, batches of %llu rows (best of %d)\n", dir, nall,
			   (unsigned long long) batch_rows, repeat);
		printf("%-30s %12s %10s %10s %8s %10s\n", "filter", "rows out", "seconds", "vs none", "pages", "rows/s in");
		for (int r = 0; r < repeat; r++)
		{
			scan_result s = scan(ds, all, nall, NULL, batch_rows);

			if (s.seconds < base.seconds)
				base = s;
		}
		printf("%-30s %12llu %10.4f %10s %8llu %10.0f\n", "(none)", (unsigned long long) base.rows, base.seconds,
			   "1.00", (unsigned long long) base.pages, base.scanned / base.seconds);
		for (size_t q = 0; q < sizeof(fc) / sizeof(fc[0]); q++)
		{
			const lt_field *col = lt_schema_find_name(ds->schema, fc[q].col);
			lt_filter  *f;
			lt_expr    *e;
			scan_result best = {.seconds = 1e30};

			if (!col)
			{
				fprintf(stderr, "filter: no column \"%s\" in %s\n", fc[q].col, dir);
				return 1;
			}
			if (lt_filter_new(1, &col, &f, &err) != LT_OK)
				die(&err);
			e = lt_expr_cmp(f, fc[q].op, lt_expr_column(f, 0, &err), lt_expr_const(f, &fc[q].lit, &err), &err);
			if (!e || lt_filter_set_root(f, e, &err) != LT_OK)
				die(&err);
			for (int r = 0; r < repeat; r++)
			{
				scan_result s = scan(ds, all, nall, f, batch_rows);

				if (s.seconds < best.seconds)
					best = s;
			}
			printf("%-30s %12llu %10.4f %10.2f %8llu %10.0f\n", fc[q].name, (unsigned long long) best.rows,
				   best.seconds, best.seconds / base.seconds, (unsigned long long) best.pages,
				   best.scanned / best.seconds);
			lt_filter_free(f);
		}
		lt_dataset_close(ds);
		lt_store_close(store);
	}
	return 0;
}
