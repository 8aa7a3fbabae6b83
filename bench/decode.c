/*
 * bench/decode — decode throughput of the format library.
 *
 *   decode DIR [--repeat N] [--columns a,b] [--room]
 *
 * For each column: a full scan of that column alone through the library path
 * (dataset -> fragment scanner -> field reader -> page decoders), best of N
 * runs, as values/s and MB/s of decoded output, next to memcpy of the same
 * number of bytes.  Then a scan of every column together.  Lines starting
 * with "RESULT" are for bench/run.sh, which sets them beside the reference.
 * --room: string columns are read with header room (lt_scan_options.room), as
 * the FDW's scans read them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_scan.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Bytes an array holds (values, offsets, data, children), for MB/s. */
static uint64_t
array_bytes(const lt_array *a)
{
	uint64_t	n = 0;

	if (!a)
		return 0;
	if (a->values && a->field->type != LT_TYPE_FIXED_LIST)
		n += (uint64_t) a->length * a->field->byte_width;
	if (a->offsets)
		n += (uint64_t) (a->length + 1) * 8;
	n += (uint64_t) a->data_len;
	for (int i = 0; i < a->n_children; i++)
		n += array_bytes(a->children[i]);
	return n;
}

typedef struct result
{
	double		seconds;
	uint64_t	rows;
	uint64_t	bytes;
} result;

static bool with_room;
static const bool all_room[64] = {[0 ... 63] = true};

static int
scan(lt_dataset *ds, const lt_field **fields, int n, result *res)
{
	lt_error	err;
	double		t0 = now();

	res->rows = res->bytes = 0;
	for (size_t fi = 0; fi < ds->n_fragments; fi++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;

		so.n_fields = n;
		so.fields = fields;
		so.batch_rows = 65536;
		if (with_room && n <= 64)
			so.room = all_room;
		if (lt_fragment_scanner_open(ds, ds->fragments[fi], &so, &sc, &err) != LT_OK)
		{
			fprintf(stderr, "decode: %s\n", err.msg);
			return 1;
		}
		for (;;)
		{
			if (lt_fragment_scanner_next(sc, &b, &err) != LT_OK)
			{
				fprintf(stderr, "decode: %s\n", err.msg);
				lt_fragment_scanner_free(sc);
				return 1;
			}
			if (!b)
				break;
			res->rows += (uint64_t) b->length;
			for (int c = 0; c < n; c++)
				res->bytes += array_bytes(b->columns[c]);
		}
		lt_fragment_scanner_free(sc);
	}
	res->seconds = now() - t0;
	return 0;
}

/* memcpy of `bytes` through buffers too big for the caches, as a memory-speed yardstick. */
static double
memcpy_seconds(uint64_t bytes)
{
	size_t		size = bytes < ((uint64_t) 256 << 20) ? (size_t) bytes : (size_t) 256 << 20;
	char	   *src = malloc(size), *dst = malloc(size);
	double		best;
	volatile char sink;

	memset(src, 1, size);		/* fault the pages in before timing */
	memset(dst, 0, size);
	best = 1e30;
	for (int r = 0; r < 4; r++)	/* the first pass warms the buffers; keep the best */
	{
		double		t0 = now();

		for (uint64_t done = 0; done < bytes; done += size)
			memcpy(dst, src, bytes - done < size ? (size_t) (bytes - done) : size);
		if (r > 0 && now() - t0 < best)
			best = now() - t0;
	}
	sink = dst[size / 2];
	(void) sink;
	free(src);
	free(dst);
	return best;
}

int
main(int argc, char **argv)
{
	lt_store   *store;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_error	err;
	int			repeat = 3;
	const char *only = NULL;
	const lt_field **all;
	int			nall = 0;
	result		best = {0};

	if (argc < 2)
	{
		fprintf(stderr, "usage: decode DIR [--repeat N] [--columns a,b] [--room]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
	{
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (strcmp(argv[i], "--columns") == 0 && i + 1 < argc)
			only = argv[++i];
		else if (strcmp(argv[i], "--room") == 0)
			with_room = true;
	}
	if (lt_store_local_open(argv[1], &store, &err) != LT_OK ||
		lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
	{
		fprintf(stderr, "decode: %s\n", err.msg);
		return 1;
	}
	all = calloc(ds->schema->n_fields, sizeof(lt_field *));
	printf("%-12s %14s %12s %12s %12s %8s\n", "column", "values/s", "MB/s", "memcpy MB/s", "seconds", "vs memcpy");
	for (int i = 0; i < ds->schema->n_fields; i++)
	{
		const lt_field *f = ds->schema->fields[i];
		double		mc;

		if (only && !strstr(only, f->name))
			continue;
		all[nall++] = f;
		best.seconds = 1e30;
		for (int r = 0; r < repeat; r++)
		{
			result		res;

			if (scan(ds, &f, 1, &res) != 0)
				return 1;
			if (res.seconds < best.seconds)
				best = res;
		}
		mc = memcpy_seconds(best.bytes);
		printf("%-12s %14.0f %12.1f %12.1f %12.4f %7.1fx\n", f->name, best.rows / best.seconds,
			   best.bytes / best.seconds / 1e6, best.bytes / mc / 1e6, best.seconds, best.seconds / mc);
		printf("RESULT column %s %.6f %llu %llu\n", f->name, best.seconds, (unsigned long long) best.rows,
			   (unsigned long long) best.bytes);
	}
	best.seconds = 1e30;
	for (int r = 0; r < repeat; r++)
	{
		result		res;

		if (scan(ds, all, nall, &res) != 0)
			return 1;
		if (res.seconds < best.seconds)
			best = res;
	}
	printf("%-12s %14.0f %12.1f %12s %12.4f\n", "(all)", best.rows / best.seconds,
		   best.bytes / best.seconds / 1e6, "", best.seconds);
	printf("RESULT table %.6f %llu %llu\n", best.seconds, (unsigned long long) best.rows,
		   (unsigned long long) best.bytes);
	free(all);
	lt_dataset_close(ds);
	lt_store_close(store);
	return 0;
}
