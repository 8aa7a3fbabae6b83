/*
 * Fuzz target: index files and index metadata inside a real dataset.
 *
 * The dataset test/data/indexed (btree, bitmap and label_list indexes; see
 * test/unit/test_index.c) is loaded into an in-memory store once.  The first
 * input byte picks what the rest replaces:
 *   0  the btree's page_lookup.lance      1  the btree's page_data.lance
 *   2  the bitmap's bitmap_page_lookup    3  the label_list's bitmap_page_lookup
 *   4  the latest manifest (IndexSection, fragment bitmaps)
 * then the dataset is opened, its indexes listed, and every usable index is
 * opened and queried (scalar filters, label lookups).  Errors are fine; crashes,
 * leaks and sanitizer reports are not.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/lt_store.h"
#include "fuzz_dataset.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "index/lt_index.h"

#define DATA_DIR "test/data/indexed"

static bool verbose;			/* LT_FUZZ_VERBOSE=1: say where each input stops */
static const char *targets[5];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *root = getenv("LT_INDEX_FUZZ_DATA") ? getenv("LT_INDEX_FUZZ_DATA") : DATA_DIR;
	lt_store   *mem;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_index_list *l;
	lt_error	err;

	verbose = getenv("LT_FUZZ_VERBOSE") != NULL;
	fz_load(root, "");
	if (fz_n_files == 0)
	{
		fprintf(stderr, "fuzz_index: no dataset at %s (run from the repository root)\n", root);
		exit(1);
	}
	/* find the target files from the dataset's own metadata */
	fz_store_with(NULL, NULL, 0, &mem, &err);
	if (lt_dataset_open(mem, "", &spec, &ds, &err) != LT_OK || lt_dataset_indexes(ds, &l, &err) != LT_OK)
	{
		fprintf(stderr, "fuzz_index: %s\n", err.msg);
		exit(1);
	}
	for (int i = 0; i < fz_n_files; i++)
	{
		const char *p = fz_files[i].path;

		for (size_t k = 0; k < l->n; k++)
		{
			const lt_index *ix = &l->items[k];

			if (!strstr(p, ix->segments[0].uuid))
				continue;
			if (ix->kind == LT_INDEX_BTREE && strcmp(ix->name, "id_idx") == 0)
				targets[strstr(p, "page_lookup") ? 0 : 1] = p;
			else if (ix->kind == LT_INDEX_BITMAP)
				targets[2] = p;
			else if (ix->kind == LT_INDEX_LABEL_LIST)
				targets[3] = p;
		}
		if (strcmp(p + strlen(p) - 9, ".manifest") == 0 && strcmp(p + strlen("_versions/"), ds->manifest_path + strlen("_versions/")) == 0)
			targets[4] = p;
	}
	lt_index_list_free(l);
	lt_dataset_close(ds);
	lt_store_close(mem);
	for (int t = 0; t < 5; t++)
		if (!targets[t])
		{
			fprintf(stderr, "fuzz_index: target %d not found in %s\n", t, root);
			exit(1);
		}
	return 0;
}

static void
query(lt_dataset *ds, const lt_index *ix)
{
	lt_index_reader *r;
	lt_error	err;
	lt_filter  *f;
	lt_rowaddr_set *s;
	bool		exact;

	if (lt_index_open(ds, ix, &r, &err) != LT_OK)
	{
		if (verbose)
			fprintf(stderr, "open %s: %s\n", ix->name, err.msg);
		return;
	}
	if (ix->kind == LT_INDEX_LABEL_LIST)
	{
		lt_value	v[2] = {{.kind = LT_VALUE_BYTES}, {.kind = LT_VALUE_BYTES}};

		v[0].v.bytes.ptr = (const uint8_t *) "lance";
		v[0].v.bytes.len = 5;
		v[1].v.bytes.ptr = (const uint8_t *) "page ";
		v[1].v.bytes.len = 5;
		for (int op = 0; op < 2; op++)
			for (int n = 0; n <= 2; n++)
				if (lt_index_search_labels(r, (lt_label_op) op, n, v, &s, NULL, &err) == LT_OK)
					lt_rowaddr_set_free(s);
	}
	else if (lt_filter_new(1, &ix->field, &f, &err) == LT_OK)
	{
		lt_value	lo = {.kind = LT_VALUE_INT},
					hi = {.kind = LT_VALUE_INT};
		lt_expr    *args[2];

		lo.v.i = 3;
		hi.v.i = 6100;
		args[0] = lt_expr_between(f, lt_expr_column(f, 0, &err), lt_expr_const(f, &lo, &err),
								  lt_expr_const(f, &hi, &err), &err);
		args[1] = lt_expr_is_null(f, lt_expr_column(f, 0, &err), false, &err);
		if (args[0] && args[1] && lt_filter_set_root(f, lt_expr_or(f, 2, args, &err), &err) == LT_OK &&
			lt_index_search(r, f, &s, &exact, NULL, &err) == LT_OK)
		{
			if (verbose)
				fprintf(stderr, "%s: %llu rows\n", ix->name, (unsigned long long) lt_rowaddr_set_cardinality(s, NULL));
			lt_rowaddr_set_free(s);
		}
		else if (verbose)
			fprintf(stderr, "search %s: %s\n", ix->name, err.msg);
		lt_filter_free(f);
	}
	lt_index_close(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_store   *mem;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_index_list *l;
	lt_error	err;
	const char *target;

	if (size < 1)
		return 0;
	target = targets[data[0] % 5];
	if (fz_store_with(target, data + 1, size - 1, &mem, &err) != LT_OK)
		return 0;
	if (lt_dataset_open(mem, "", &spec, &ds, &err) == LT_OK)
	{
		if (lt_dataset_indexes(ds, &l, &err) == LT_OK)
		{
			for (size_t k = 0; k < l->n; k++)
				if (!l->items[k].unusable)
					query(ds, &l->items[k]);
			lt_index_list_free(l);
		}
		lt_dataset_close(ds);
	}
	else if (verbose)
		fprintf(stderr, "dataset: %s\n", err.msg);
	lt_store_close(mem);
	return 0;
}
