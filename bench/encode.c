/*
 * bench/encode — the data-file writer alone, on the rows of a dataset.
 *
 *   encode DIR OUTDIR [--repeat N] [--batch ROWS]
 *
 * Reads every row of dataset DIR into memory, then writes them into one data
 * file of DIR's storage version under OUTDIR/data/, handing them to the writer
 * ROWS at a time (default 8192: what an INSERT hands it) — the writer's part of
 * a bulk INSERT without PostgreSQL around it (for callgrind / perf).  Best of N
 * (default 3); the file of the last run stays, its name on the RESULT line:
 * "RESULT encode <seconds> <rows> <bytes> <file> <cpu seconds>" (the CPU time of
 * the process, less disturbed than the wall time by other work on the machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_scan.h"
#include "file/lt_writer.h"

static double
clock_seconds(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what, const lt_error *err)
{
	fprintf(stderr, "encode: %s: %s\n", what, err->msg);
	exit(1);
}

int
main(int argc, char **argv)
{
	lt_store   *store,
			   *out;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_error	err;
	int			repeat = 3;
	int64_t		batch = 8192;
	lt_array  **all;
	lt_array  **slice;
	int			nf;
	int64_t		rows = 0;
	lt_file_version fver;
	double		best = 1e30,
				best_cpu = 1e30;
	lt_written_file wf = {0};

	if (argc < 3)
	{
		fprintf(stderr, "usage: encode DIR OUTDIR [--repeat N] [--batch ROWS]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++)
	{
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
			batch = atoll(argv[++i]);
	}
	if (lt_store_local_open(argv[1], &store, &err) != LT_OK || lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
		die(argv[1], &err);
	if (lt_store_local_open(argv[2], &out, &err) != LT_OK)
		die(argv[2], &err);
	if (lt_file_version_for_storage(ds->storage_version, &fver, &err) != LT_OK)
		die(argv[1], &err);
	nf = ds->schema->n_fields;
	all = calloc(nf, sizeof(lt_array *));
	slice = calloc(nf, sizeof(lt_array *));
	for (int c = 0; c < nf; c++)
		if (lt_array_new(ds->schema->fields[c], &all[c], &err) != LT_OK ||
			lt_array_new(ds->schema->fields[c], &slice[c], &err) != LT_OK)
			die("memory", &err);

	/* every row, in memory */
	for (size_t fi = 0; fi < ds->n_fragments; fi++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;
		lt_code		rc;

		so.n_fields = nf;
		so.fields = (const lt_field **) ds->schema->fields;
		so.batch_rows = 65536;
		if (lt_fragment_scanner_open(ds, ds->fragments[fi], &so, &sc, &err) != LT_OK)
			die(argv[1], &err);
		while ((rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b)
			for (int c = 0; c < nf; c++)
				if (lt_array_append_slice(all[c], b->columns[c], 0, b->length, &err) != LT_OK)
					die("memory", &err);
		if (rc != LT_OK)
			die(argv[1], &err);
		lt_fragment_scanner_free(sc);
	}
	rows = nf > 0 ? all[0]->length : 0;

	for (int r = 0; r < repeat; r++)
	{
		lt_file_writer *w;
		double		t0,
					c0,
					t;

		if (wf.name)
		{
			char	   *p = lt_asprintf("data/%s", wf.name);

			lt_store_remove(out, p, &err);
			lt_free(p);
			lt_written_file_clear(&wf);
		}
		t0 = clock_seconds(CLOCK_MONOTONIC);
		c0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
		if (lt_file_writer_open(out, "data/", nf, (const lt_field *const *) ds->schema->fields, fver, &w, &err) != LT_OK)
			die(argv[2], &err);
		for (int64_t s = 0; s < rows; s += batch)
		{
			int64_t		n = rows - s < batch ? rows - s : batch;

			/* the rows as a builder holds them: a batch of their own (not timed apart: cheap) */
			for (int c = 0; c < nf; c++)
			{
				lt_array_clear(slice[c]);
				if (lt_array_append_slice(slice[c], all[c], s, n, &err) != LT_OK)
					die("memory", &err);
			}
			if (lt_file_writer_write(w, slice, n, &err) != LT_OK)
				die("write", &err);
		}
		if (lt_file_writer_finish(w, &wf, &err) != LT_OK)
			die("finish", &err);
		lt_file_writer_free(w);
		t = clock_seconds(CLOCK_MONOTONIC) - t0;
		if (t < best)
			best = t;
		t = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
		if (t < best_cpu)
			best_cpu = t;
	}
	printf("RESULT encode %.6f %lld %llu %s/data/%s %.6f\n", best, (long long) rows, (unsigned long long) wf.size,
		   argv[2], wf.name, best_cpu);
	lt_written_file_clear(&wf);
	for (int c = 0; c < nf; c++)
	{
		lt_array_free(all[c]);
		lt_array_free(slice[c]);
	}
	free(all);
	free(slice);
	lt_dataset_close(ds);
	lt_store_close(out);
	lt_store_close(store);
	return 0;
}
