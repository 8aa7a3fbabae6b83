/*
 * bench/index_lookup — scalar index lookups through the format library.
 *
 *   index_lookup DIR COLUMN [--repeat N] [--range WIDTH]
 *
 * Opens DIR and the first usable index on COLUMN (an integer column) once,
 * then times N lookups `COLUMN = c` (c spread over [0, max]) and, with
 * --range, N lookups `COLUMN BETWEEN c AND c + WIDTH - 1`: per lookup the
 * index search (pages / keys read, deletions applied) and the fetch of the
 * selected rows through the random-access scanner.  Thread CPU time (the dev
 * machines are shared) and bytes read per lookup.  Also the one-time open
 * cost.  Not a test: nothing is asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "index/lt_index.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const lt_error *err)
{
	fprintf(stderr, "index_lookup: %s: %s\n", lt_code_name(err->code), err->msg);
	exit(1);
}

/* Read COLUMN at the selected rows (what a scan would do with the index's answer). */
static uint64_t
fetch(lt_dataset *ds, const lt_field *col, lt_rowaddr_set *rows, lt_error *err)
{
	uint64_t	got = 0;

	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		uint32_t   *offs;
		uint64_t	n;
		lt_scan_options o = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;

		if (lt_rowaddr_set_fragment_offsets(rows, (uint32_t) ds->fragments[i]->id, &offs, &n, err) != LT_OK)
			die(err);
		if (n == 0)
			continue;
		o.n_fields = 1;
		o.fields = &col;
		o.offsets = offs;
		o.n_offsets = n;
		if (lt_fragment_scanner_open(ds, ds->fragments[i], &o, &sc, err) != LT_OK)
			die(err);
		while (lt_fragment_scanner_next(sc, &b, err) == LT_OK && b)
			got += (uint64_t) b->length;
		lt_fragment_scanner_free(sc);
		lt_free(offs);
	}
	return got;
}

static void
run(lt_dataset *ds, lt_index_reader *r, const lt_field *col, int repeat, int64_t width, int64_t max)
{
	double		t_search = 0,
				t_fetch = 0;
	uint64_t	bytes0 = ds->store->bytes_read,
				rows = 0,
				pages = 0;
	lt_error	err;

	for (int i = 0; i < repeat; i++)
	{
		lt_filter  *f;
		lt_value	lo = {.kind = LT_VALUE_INT},
					hi = {.kind = LT_VALUE_INT};
		lt_expr    *e;
		lt_rowaddr_set *s;
		bool		exact;
		lt_index_stats st;
		double		t0,
					t1;

		lo.v.i = (int64_t) ((uint64_t) i * 2654435761u % (uint64_t) (max + 1));
		hi.v.i = lo.v.i + width - 1;
		if (lt_filter_new(1, &col, &f, &err) != LT_OK)
			die(&err);
		e = width == 1
			? lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_const(f, &lo, &err), &err)
			: lt_expr_between(f, lt_expr_column(f, 0, &err), lt_expr_const(f, &lo, &err),
							  lt_expr_const(f, &hi, &err), &err);
		if (!e || lt_filter_set_root(f, e, &err) != LT_OK)
			die(&err);
		t0 = now();
		if (lt_index_search(r, f, &s, &exact, &st, &err) != LT_OK)
			die(&err);
		t1 = now();
		rows += fetch(ds, col, s, &err);
		t_fetch += now() - t1;
		t_search += t1 - t0;
		pages += st.pages_read;
		lt_rowaddr_set_free(s);
		lt_filter_free(f);
	}
	printf("%-26s %6d lookups  search %8.3f ms  fetch %8.3f ms  rows %8.1f  pages/keys %5.1f  bytes read %9.0f\n",
		   width == 1 ? "point (=)" : "range (BETWEEN)", repeat, t_search * 1e3 / repeat, t_fetch * 1e3 / repeat,
		   (double) rows / repeat, (double) pages / repeat, (double) (ds->store->bytes_read - bytes0) / repeat);
}

int
main(int argc, char **argv)
{
	lt_store   *store;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_index_list *l;
	const lt_index *ix;
	lt_index_reader *r;
	const lt_field *col;
	lt_error	err;
	int			repeat = 1000;
	int64_t		width = 0;
	double		t0;
	uint64_t	b0;

	if (argc < 3)
	{
		fprintf(stderr, "usage: index_lookup DIR COLUMN [--repeat N] [--range WIDTH]\n");
		return 2;
	}
	for (int i = 3; i + 1 < argc; i += 2)
	{
		if (strcmp(argv[i], "--repeat") == 0)
			repeat = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--range") == 0)
			width = atoll(argv[i + 1]);
	}
	if (lt_store_local_open(argv[1], &store, &err) != LT_OK || lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
		die(&err);
	if (!(col = lt_schema_find_name(ds->schema, argv[2])))
	{
		fprintf(stderr, "index_lookup: no column %s\n", argv[2]);
		return 1;
	}
	if (lt_dataset_indexes(ds, &l, &err) != LT_OK)
		die(&err);
	if (!(ix = lt_index_list_for_field(l, col->id, LT_INDEX_UNKNOWN)))
	{
		fprintf(stderr, "index_lookup: no usable index on %s\n", argv[2]);
		return 1;
	}
	b0 = store->bytes_read;
	t0 = now();
	if (lt_index_open(ds, ix, &r, &err) != LT_OK)
		die(&err);
	printf("index %s (%s) on %s, %llu rows: open %.3f ms, %llu bytes\n", ix->name, lt_index_kind_name(ix->kind),
		   col->name, (unsigned long long) lt_dataset_count_rows(ds), (now() - t0) * 1e3,
		   (unsigned long long) (store->bytes_read - b0));
	run(ds, r, col, repeat, 1, (int64_t) lt_dataset_count_rows(ds) - 1);
	if (width > 1)
		run(ds, r, col, repeat / 10 ? repeat / 10 : 1, width, (int64_t) lt_dataset_count_rows(ds) - width);
	lt_index_close(r);
	lt_index_list_free(l);
	lt_dataset_close(ds);
	lt_store_close(store);
	return 0;
}
