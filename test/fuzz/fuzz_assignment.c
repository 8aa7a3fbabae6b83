/*
 * Fuzz target: the field assignment root and bitmap decoders (src/lance/assignment/).  The first byte
 * picks the decoder; the rest is a file without its trailing checksum, which the harness appends (a
 * random mutation would almost never get the checksum right, and the checksum is not what is tested).
 * Whatever decodes must encode back: a root to the same bytes, a bitmap to one that decodes equal.
 */
#include <roaring/roaring.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "assignment/lt_assignment.h"
#include "util/lt_alloc.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t    *buf,
			   *again = NULL;
	size_t		len,
				again_len = 0;
	uint64_t	h;
	lt_error	err;
	lt_dataset	fake = {0};

	if (size < 1 || size > (1 << 20))
		return 0;
	len = size - 1 + 8;
	if (!(buf = malloc(len)))
		return 0;
	memcpy(buf, data + 1, size - 1);
	h = lt_assign_checksum(buf, size - 1);
	memcpy(buf + size - 1, &h, 8);
	fake.prefix = "";
	if (data[0] & 1)
	{
		roaring_bitmap_t *rows = NULL,
				   *back = NULL;

		if (lt_assign_bitmap_decode(buf, len, "fuzz", UINT64_C(1) << 32, &rows, &err) == LT_OK)
		{
			if (lt_assign_bitmap_encode(rows, &again, &again_len, &err) != LT_OK ||
				lt_assign_bitmap_decode(again, again_len, "again", UINT64_C(1) << 32, &back, &err) != LT_OK ||
				!roaring_bitmap_equals(rows, back))
				abort();
			roaring_bitmap_free(back);
			roaring_bitmap_free(rows);
		}
	}
	else
	{
		lt_assign_field *f = NULL;
		int32_t		id = size >= 13 ? (int32_t) (data[9] | data[10] << 8 | data[11] << 16 | (uint32_t) data[12] << 24) : 0;

		if (lt_assign_new(&fake, id, &f, &err) == LT_OK)
		{
			if (lt_assign_root_decode(buf, len, "fuzz", f, &err) == LT_OK)
			{
				if (lt_assign_root_encode(f, &again, &again_len, &err) != LT_OK || again_len != len ||
					memcmp(again, buf, len) != 0)
					abort();
			}
			lt_assign_free(f);
		}
	}
	lt_free(again);
	free(buf);
	return 0;
}
