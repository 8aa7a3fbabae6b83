/*
 * lt_fsst.c — FSST decoding.
 */
#include "encoding/lt_fsst.h"

#include <string.h>

#include "util/lt_bytes.h"

#define FSST_MAGIC 0x46535354u

lt_code
lt_fsst_parse(const uint8_t *buf, size_t len, lt_fsst_table *t, const char *what, lt_error *err)
{
	uint64_t	info;
	size_t		pos;

	memset(t, 0, sizeof(*t));
	if (len != LT_FSST_TABLE_SIZE)
		return lt_corrupt(err, "%s: FSST symbol table is %zu bytes, expected %d", what, len,
						  LT_FSST_TABLE_SIZE);
	info = lt_le64(buf);
	if ((uint32_t) (info >> 32) != FSST_MAGIC)
		return lt_corrupt(err, "%s: FSST symbol table has bad magic 0x%016llx", what,
						  (unsigned long long) info);
	t->enabled = ((info >> 24) & 1) != 0;
	t->n_symbols = (int) (info & 0xff);
	/* 8 + 255 * 9 < 2312, so the symbols and lengths are always in bounds */
	pos = 8;
	for (int i = 0; i < t->n_symbols; i++, pos += 8)
		t->symbols[i] = lt_le64(buf + pos);
	for (int i = 0; i < t->n_symbols; i++, pos++)
	{
		uint8_t		l = buf[pos];

		if (t->enabled && (l < 1 || l > 8))
			return lt_corrupt(err, "%s: FSST symbol %d has length %u", what, i, l);
		t->lens[i] = l;
	}
	for (int i = 0; i < t->n_symbols && t->n_nonascii <= LT_FSST_NONASCII_MAX; i++)
		for (int k = 0; k < t->lens[i]; k++)
		{
			uint8_t		b = (uint8_t) (t->symbols[i] >> (8 * k));

			if (b == 0 || b >= 0x80)
			{
				if (t->n_nonascii < LT_FSST_NONASCII_MAX)
					t->nonascii[t->n_nonascii] = (uint8_t) i;
				t->n_nonascii++;
				break;
			}
		}
	return LT_OK;
}

lt_code
lt_fsst_parse_cached(lt_fsst_cache *cache, const uint8_t *buf, size_t len, const lt_fsst_table **out,
					 const char *what, lt_error *err)
{
	if (!(cache->valid && len == LT_FSST_TABLE_SIZE && memcmp(cache->raw, buf, len) == 0))
	{
		cache->valid = false;
		LT_TRY(lt_fsst_parse(buf, len, &cache->table, what, err));
		memcpy(cache->raw, buf, len);
		cache->valid = true;
	}
	*out = &cache->table;
	return LT_OK;
}

int64_t
lt_fsst_decode_checked(const lt_fsst_table *t, const uint8_t *in, size_t len, uint8_t *out)
{
	const uint8_t *end = in + len;
	uint8_t    *o = out;

	while (in < end)
	{
		uint8_t		c = *in++;

		if (c != LT_FSST_ESC)
		{
			uint8_t		l = t->lens[c];

			if (l == 0)
				return -1;
			/* room for 8 bytes is guaranteed by the 8x output bound */
			memcpy(o, &t->symbols[c], 8);
			o += l;
		}
		else
		{
			if (in == end)
				return -1;
			*o++ = *in++;
		}
	}
	return (int64_t) (o - out);
}
