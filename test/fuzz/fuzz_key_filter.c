/*
 * Fuzz target: a transaction's inserted-keys filter (KeyExistenceFilter, lt_keys.h) decoded from untrusted
 * bytes.  Whatever decodes must answer membership and overlap without reading out of bounds, overlap must be
 * symmetric, and a filter must overlap itself unless it holds nothing; re-encoding and decoding again gives
 * the same filter.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "txn/lt_keys.h"

static bool
same(const lt_key_filter *a, const lt_key_filter *b)
{
	if (a->kind != b->kind || a->n_field_ids != b->n_field_ids ||
		memcmp(a->field_ids, b->field_ids, a->n_field_ids * sizeof(int32_t)) != 0)
		return false;
	if (a->kind == LT_KEY_FILTER_EXACT)
		return a->n_hashes == b->n_hashes && memcmp(a->hashes, b->hashes, a->n_hashes * sizeof(uint64_t)) == 0;
	return a->bitmap_len == b->bitmap_len && memcmp(a->bitmap, b->bitmap, a->bitmap_len) == 0 &&
		a->number_of_items == b->number_of_items;
}

static bool
empty(const lt_key_filter *f)
{
	if (f->kind == LT_KEY_FILTER_EXACT)
		return f->n_hashes == 0;
	for (size_t i = 0; i < f->bitmap_len; i++)
		if (f->bitmap[i])
			return false;
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_key_filter *f = NULL,
			   *g = NULL,
			   *mine = NULL;
	lt_error	err;
	uint8_t    *enc = NULL;
	size_t		len = 0;

	if (lt_key_filter_decode(data, size, &f, &err) != LT_OK)
		return 0;
	/* membership of the input's own bytes as keys */
	for (size_t off = 0; off + 8 <= size && off < 256; off += 8)
		(void) lt_key_filter_may_contain(f, data + off, 8);
	if (lt_key_filter_overlap(f, f) != (empty(f) ? LT_KEYS_DISJOINT : LT_KEYS_OVERLAP))
		abort();
	/* against a filter built here over the same key fields */
	if (lt_key_filter_new(LT_KEY_FILTER_BLOOM, f->field_ids, f->n_field_ids, &mine, &err) == LT_OK)
	{
		(void) lt_key_filter_add(mine, data, size < 64 ? size : 64, &err);
		if (lt_key_filter_overlap(f, mine) != lt_key_filter_overlap(mine, f))
			abort();
		lt_key_filter_free(mine);
	}
	if (lt_key_filter_encode(f, &enc, &len, &err) == LT_OK)
	{
		if (lt_key_filter_decode(enc, len, &g, &err) != LT_OK || !same(f, g))
			abort();
		lt_key_filter_free(g);
		lt_free(enc);
	}
	lt_key_filter_free(f);
	return 0;
}
