/*
 * lt_manifest_write.c — a manifest file as Lance 8 frames it:
 *   [u32 len | IndexSection]  [u32 len | Transaction]  [u32 len | Manifest]
 *   i64 manifest_pos, u16 0, u16 2, "LANC"
 * (the reader is lt_manifest_parse in lt_dataset.c).
 */
#include "table/lt_dataset.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

#define MAX_SECTION ((uint64_t) UINT32_MAX)

lt_code
lt_manifest_serialize(Lt__Pb__Manifest *m, const Lt__Pb__IndexSection *indexes, const Lt__Pb__Transaction *txn,
					  uint8_t **out, uint64_t *out_len, lt_error *err)
{
	size_t		ilen = indexes ? lt__pb__index_section__get_packed_size(indexes) : 0;
	size_t		tlen = txn ? lt__pb__transaction__get_packed_size(txn) : 0;
	size_t		mlen;
	uint64_t	pos = 0;
	uint64_t	total;
	uint8_t    *buf;

	*out = NULL;
	*out_len = 0;
	/* section positions first: they are part of the manifest message */
	m->has_index_section = indexes != NULL;
	m->index_section = 0;
	if (indexes)
		pos += 4 + ilen;
	m->has_transaction_section = txn != NULL;
	m->transaction_section = pos;
	if (txn)
		pos += 4 + tlen;
	mlen = lt__pb__manifest__get_packed_size(m);
	if (ilen > MAX_SECTION || tlen > MAX_SECTION || mlen > MAX_SECTION)
		return lt_error_set(err, LT_EINVALID, "manifest of version %llu is too large to write",
							(unsigned long long) m->version);
	total = pos + 4 + mlen + 16;
	if (!(buf = lt_malloc(total)))
		return lt_nomem(err);
	pos = 0;
	if (indexes)
	{
		lt_put32(buf, (uint32_t) ilen);
		lt__pb__index_section__pack(indexes, buf + 4);
		pos += 4 + ilen;
	}
	if (txn)
	{
		lt_put32(buf + pos, (uint32_t) tlen);
		lt__pb__transaction__pack(txn, buf + pos + 4);
		pos += 4 + tlen;
	}
	lt_put32(buf + pos, (uint32_t) mlen);
	lt__pb__manifest__pack(m, buf + pos + 4);
	lt_put64(buf + pos + 4 + mlen, pos);
	lt_put16(buf + pos + 4 + mlen + 8, 0);
	lt_put16(buf + pos + 4 + mlen + 10, 2);
	memcpy(buf + pos + 4 + mlen + 12, "LANC", 4);
	*out = buf;
	*out_len = total;
	return LT_OK;
}
