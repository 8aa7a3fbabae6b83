/*
 * Fuzz target: the IVF vector index reader (src/lance/vector/lt_ivf.c, lt_vsearch.c).
 *
 * The dataset test/data/vectors (an IVF_FLAT index the Lance engine built; see test/unit/test_vector.c)
 * is loaded into an in-memory store once.  The first input byte picks the file the rest replaces:
 * even = the segment's index.idx (type, distance type, IVF model, centroids), odd = its auxiliary.idx
 * (partition lengths, row ids, stored vectors); then the index is searched with 1 and 3 probes.
 * Errors are fine; crashes, leaks and sanitizer reports are not.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "index/lt_index.h"
#include "io/lt_store.h"
#include "table/lt_dataset.h"
#include "vector/lt_vsearch.h"

#define DATA_DIR "test/data/vectors"

typedef struct file
{
	char	   *path;
	uint8_t    *data;
	size_t		len;
} file;

static file files[64];
static int	n_files;
static const char *targets[2];

static void
load(const char *root, const char *rel)
{
	char		path[2048];
	DIR		   *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)) && n_files < 64)
	{
		char		r2[1024];
		struct stat st;
		FILE	   *f;
		file	   *x;

		if (e->d_name[0] == '.')
			continue;
		snprintf(r2, sizeof(r2), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", root, r2);
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
		{
			load(root, r2);
			continue;
		}
		if (!(f = fopen(path, "rb")))
			continue;
		x = &files[n_files++];
		x->len = (size_t) st.st_size;
		x->data = malloc(x->len ? x->len : 1);
		if (fread(x->data, 1, x->len, f) != x->len)
			x->len = 0;
		fclose(f);
		x->path = strdup(r2);
		if (strstr(r2, "_indices/") && strstr(r2, "/index.idx"))
			targets[0] = x->path;
		else if (strstr(r2, "_indices/") && strstr(r2, "/auxiliary.idx"))
			targets[1] = x->path;
	}
	closedir(d);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *root = getenv("LT_IVF_FUZZ_DATA") ? getenv("LT_IVF_FUZZ_DATA") : DATA_DIR;

	load(root, "");
	if (!targets[0] || !targets[1])
	{
		fprintf(stderr, "fuzz_ivf: no IVF index under %s (run from the repository root)\n", root);
		exit(1);
	}
	return 0;
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
	target = targets[data[0] % 2];
	if (lt_store_mem_open(&mem, &err) != LT_OK)
		return 0;
	for (int i = 0; i < n_files; i++)
		if (strcmp(files[i].path, target) == 0)
			lt_store_mem_put(mem, target, data + 1, size - 1, &err);
		else
			lt_store_mem_put(mem, files[i].path, files[i].data, files[i].len, &err);
	if (lt_dataset_open(mem, "", &spec, &ds, &err) == LT_OK)
	{
		if (lt_dataset_indexes(ds, &l, &err) == LT_OK)
		{
			for (size_t k = 0; k < l->n; k++)
			{
				const lt_index *ix = &l->items[k];
				float		q[4] = {10, -20, 30, 40};
				lt_knn_query kq = {ix->field, LT_VMETRIC_L2, LT_VKERNEL_F32, q, 4, false};

				if (!ix->field || !lt_knn_field_ok(ix->field))
					continue;
				for (uint32_t np = 1; np <= 3; np += 2)
				{
					lt_topk		t;
					lt_vsearch_stats st = {0};

					if (lt_topk_init(&t, 7, &err) != LT_OK)
						continue;
					(void) lt_vector_search(ds, ix, &kq, np, &t, &st, &err);
					lt_topk_free(&t);
				}
			}
			lt_index_list_free(l);
		}
		lt_dataset_close(ds);
	}
	lt_store_close(mem);
	return 0;
}
