/*
 * Fuzz target: the IVF vector index reader (src/lance/vector/lt_ivf.c, lt_vsearch.c).
 *
 * The dataset test/data/vectors (an IVF_FLAT index the Lance engine built; see test/unit/test_vector.c)
 * is loaded into an in-memory store once.  The first input byte picks the file the rest replaces:
 * even = the segment's index.idx (type, distance type, IVF model, centroids), odd = its auxiliary.idx
 * (partition lengths, row ids, stored vectors); then the index is searched with 1 and 3 probes.
 * Errors are fine; crashes, leaks and sanitizer reports are not.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/lt_index.h"
#include "io/lt_store.h"
#include "fuzz_dataset.h"
#include "table/lt_dataset.h"
#include "vector/lt_vsearch.h"

#define DATA_DIR "test/data/vectors"

static const char *targets[2];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *root = getenv("LT_IVF_FUZZ_DATA") ? getenv("LT_IVF_FUZZ_DATA") : DATA_DIR;

	fz_load(root, "");
	for (int i = 0; i < fz_n_files; i++)
	{
		const char *p = fz_files[i].path;

		if (strstr(p, "_indices/") && strstr(p, "/index.idx"))
			targets[0] = p;
		else if (strstr(p, "_indices/") && strstr(p, "/auxiliary.idx"))
			targets[1] = p;
	}
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
	if (fz_store_with(target, data + 1, size - 1, &mem, &err) != LT_OK)
		return 0;
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
					lt_vsearch_params vp = {np, np, NULL, NULL};

					if (lt_topk_init(&t, 7, &err) != LT_OK)
						continue;
					(void) lt_vector_search(ds, ix, &kq, &vp, &t, &st, &err);
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
