/*
 * Fuzz target: the Roaring portable-format validator and decoders, and the
 * RowAddrTreeMap parser.  Every input goes through both parsers.  Whatever
 * the validator accepts must decode to the same values through all three
 * decoders and CRoaring's own reader (an oracle here, never used on untrusted
 * bytes in the library); any disagreement aborts.
 */
#include <roaring/roaring.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_roaring.h"

#define MAX_CARD	((uint64_t) 1 << 22)	/* keeps decoded arrays at 16 MiB */
#define BITS		((uint64_t) 1 << 22)

static int
count_cb(uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg)
{
	uint64_t   *total = arg;

	for (size_t i = 1; i < n; i++)
		if (offsets[i] <= offsets[i - 1])
			abort();
	*total += n;
	return 0;
}

static void
one_bitmap(const uint8_t *data, size_t size)
{
	lt_roaring_info info;
	lt_error	err;
	uint32_t   *vals;
	uint64_t	n;
	roaring_bitmap_t *ours,
			   *theirs;
	static uint64_t words[BITS / 64];

	if (lt_roaring_inspect(data, size, &info, &err) != LT_OK)
		return;
	if (info.size > size || info.cardinality > (UINT64_C(1) << 32))
		abort();
	if (info.cardinality > MAX_CARD)
		return;
	if (lt_roaring_decode_array(data, size, MAX_CARD, &vals, &n, NULL, &err) != LT_OK || n != info.cardinality)
		abort();
	for (uint64_t i = 1; i < n; i++)
		if (vals[i] <= vals[i - 1])
			abort();
	if (n > 0 && (vals[0] != info.min || vals[n - 1] != info.max))
		abort();

	/* The bitset must hold exactly the same values. */
	memset(words, 0, sizeof(words));
	if (n == 0 || info.max < BITS)
	{
		uint64_t	pop = 0;

		if (lt_roaring_decode_bits(data, size, BITS, words, NULL, &err) != LT_OK)
			abort();
		for (size_t w = 0; w < BITS / 64; w++)
			pop += (uint64_t) __builtin_popcountll(words[w]);
		if (pop != n)
			abort();
		for (uint64_t i = 0; i < n; i++)
			if (!((words[vals[i] / 64] >> (vals[i] % 64)) & 1))
				abort();
	}
	else if (lt_roaring_decode_bits(data, size, BITS, words, NULL, &err) != LT_ECORRUPT)
		abort();

	if (lt_roaring_to_croaring(data, size, &ours, NULL, &err) != LT_OK)
		abort();
	if (roaring_bitmap_get_cardinality(ours) != n)
		abort();
	/*
	 * CRoaring's reader keeps non-canonical shapes (adjacent runs), which its
	 * roaring_bitmap_equals compares by representation: compare values.
	 */
	theirs = roaring_bitmap_portable_deserialize_safe((const char *) data, info.size);
	if (!theirs || roaring_bitmap_get_cardinality(theirs) != n)
		abort();
	if (n > 0)
	{
		uint32_t   *tv = malloc(n * sizeof(uint32_t));

		roaring_bitmap_to_uint32_array(theirs, tv);
		if (memcmp(tv, vals, n * sizeof(uint32_t)) != 0)
			abort();
		free(tv);
	}
	/* Exercise CRoaring's set operations on the bitmap we built. */
	{
		roaring_bitmap_t *other = roaring_bitmap_of(3, 1, 70000, 0xFFFFFFFFu);
		roaring_bitmap_t *x = roaring_bitmap_and(ours, other);
		roaring_bitmap_t *y = roaring_bitmap_or(ours, other);

		if (roaring_bitmap_get_cardinality(x) + roaring_bitmap_get_cardinality(y) != n + 3)
			abort();
		roaring_bitmap_andnot_inplace(y, other);
		roaring_bitmap_or_inplace(y, x);
		if (roaring_bitmap_get_cardinality(y) != n)
			abort();
		roaring_bitmap_free(other);
		roaring_bitmap_free(x);
		roaring_bitmap_free(y);
	}
	roaring_bitmap_free(theirs);
	roaring_bitmap_free(ours);
	lt_free(vals);
}

static void
one_map(const uint8_t *data, size_t size)
{
	lt_rowaddr_set *s,
			   *t;
	lt_error	err;
	size_t		used;
	uint64_t	card,
				seen = 0;
	uint32_t	nfull;

	if (lt_rowaddr_set_parse(data, size, &s, &used, &err) != LT_OK)
		return;
	if (used > size)
		abort();
	card = lt_rowaddr_set_cardinality(s, &nfull);
	if (card <= MAX_CARD)
	{
		lt_rowaddr_set_iterate(s, count_cb, &seen);
		if (seen != card)
			abort();
	}
	/* Set algebra against itself and a small fixed set. */
	t = lt_rowaddr_set_create();
	if (t)
	{
		lt_rowaddr_set_add(t, 5, &err);
		lt_rowaddr_set_add(t, ((uint64_t) 1 << 32) | 7, &err);
		lt_rowaddr_set_add_fragment(t, 2, &err);
		lt_rowaddr_set_or(t, s, &err);
		lt_rowaddr_set_and(t, s, &err);
		if (lt_rowaddr_set_cardinality(t, NULL) > card)
			abort();
		lt_rowaddr_set_and(s, s, &err);
		lt_rowaddr_set_andnot(t, t, &err);
		if (!lt_rowaddr_set_is_empty(t))
			abort();
		lt_rowaddr_set_free(t);
	}
	lt_rowaddr_set_free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_bitmap(data, size);
	one_map(data, size);
	return 0;
}
