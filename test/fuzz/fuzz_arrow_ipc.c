/*
 * Fuzz target: `.arrow` deletion files (Arrow IPC file + flatbuffers + ZSTD
 * body buffers) through lt_deletion_parse, and the same bytes as a `.bin`
 * deletion file.  Accepted vectors must be sorted, unique and in bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/lt_alloc.h"
#include "table/lt_deletion.h"

#define ROWS ((uint64_t) 1 << 20)

static void
check(const lt_deletion_vector *dv)
{
	uint32_t	sel[64];

	/* A batch over the first deletions must skip exactly those rows. */
	if (dv->count > 0)
	{
		uint64_t	start = dv->offsets[0] > 10 ? dv->offsets[0] - 10 : 0;
		uint32_t	m = lt_deletion_select(dv, start, 64, sel);

		if (m + lt_deletion_rank(dv, start + 64) - lt_deletion_rank(dv, start) != 64)
			abort();
		for (uint32_t i = 0; i < m; i++)
			if (lt_deletion_contains(dv, start + sel[i]) || (i > 0 && sel[i] <= sel[i - 1]))
				abort();
	}
	for (uint64_t i = 0; i < dv->count; i++)
	{
		if (dv->offsets[i] >= ROWS || (i > 0 && dv->offsets[i] <= dv->offsets[i - 1]))
			abort();
		if (!lt_deletion_contains(dv, dv->offsets[i]) || lt_deletion_rank(dv, dv->offsets[i]) != i)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_deletion_vector *dv;
	lt_error	err;
	uint32_t   *vals;
	uint64_t	n;

	if (lt_deletion_parse(data, size, LT_DELETION_ARROW, 0, ROWS, "fuzz.arrow", &dv, &err) == LT_OK)
	{
		check(dv);
		lt_deletion_free(dv);
	}
	if (lt_deletion_arrow_values(data, size, "fuzz.arrow", ROWS, &vals, &n, &err) == LT_OK)
	{
		if (n > ROWS)
			abort();
		lt_free(vals);
	}
	if (lt_deletion_parse(data, size, LT_DELETION_BITMAP, 0, ROWS, "fuzz.bin", &dv, &err) == LT_OK)
	{
		check(dv);
		lt_deletion_free(dv);
	}
	return 0;
}
