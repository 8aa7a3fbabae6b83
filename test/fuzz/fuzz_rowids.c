/*
 * Fuzz target: RowIdSequence and RowDatasetVersionSequence.  The first three
 * bytes give the fragment's physical row count (the parsers require the
 * sequence to cover it exactly); the rest is the protobuf.  Accepted
 * sequences are read back through windowed fills and reverse lookups, which
 * must agree with each other.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/lt_alloc.h"
#include "table/lt_rowids.h"

#define WINDOW 257

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_rowid_seq *s;
	lt_version_seq *v;
	lt_error	err;
	uint64_t	rows;
	uint64_t	ids[WINDOW];

	if (size < 3)
		return 0;
	/* 17 bits: enough for every segment kind, small enough to walk each run. */
	rows = ((uint64_t) data[0] | (uint64_t) data[1] << 8 | (uint64_t) data[2] << 16) & 0x1FFFF;
	data += 3;
	size -= 3;

	if (lt_rowid_seq_parse(data, size, rows, &s, &err) == LT_OK)
	{
		uint64_t	start,
					pos,
					again;
		bool		is_range = lt_rowid_seq_is_range(s, &start);

		if (lt_rowid_seq_len(s) != rows)
			abort();
		/* Walk every row in windows; spot-check lookups on a stride. */
		for (uint64_t at = 0; at < rows; at += WINDOW)
		{
			uint64_t	n = rows - at < WINDOW ? rows - at : WINDOW;

			if (lt_rowid_seq_fill(s, at, n, ids, &err) != LT_OK)
				abort();
			for (uint64_t k = 0; k < n; k += 17)
			{
				if (is_range && ids[k] != start + at + k)
					abort();
				/* Ids may repeat in a corrupt Array segment: find() returns the first. */
				if (!lt_rowid_seq_find(s, ids[k], &pos) || pos > at + k)
					abort();
				if (lt_rowid_seq_fill(s, pos, 1, &again, &err) != LT_OK || again != ids[k])
					abort();
			}
		}
		if (lt_rowid_seq_fill(s, rows, 1, ids, &err) != LT_EINVALID)
			abort();
		lt_rowid_seq_free(s);
	}
	if (lt_version_seq_parse(data, size, rows, &v, &err) == LT_OK)
	{
		for (uint64_t at = 0; at < rows; at += WINDOW)
		{
			uint64_t	n = rows - at < WINDOW ? rows - at : WINDOW;

			if (lt_version_seq_fill(v, at, n, ids, &err) != LT_OK || ids[0] != lt_version_seq_at(v, at))
				abort();
		}
		lt_version_seq_free(v);
	}
	return 0;
}
