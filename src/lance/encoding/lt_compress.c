#include "encoding/lt_compress.h"

#include <lz4.h>
#include <zstd.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"

lt_code
lt_zstd_decompress_exact(const uint8_t *src, uint64_t src_len, uint8_t *dst, uint64_t dst_len,
						 const char *what, lt_error *err)
{
	size_t		n = ZSTD_decompress(dst, dst_len, src, src_len);

	if (ZSTD_isError(n))
		return lt_corrupt(err, "%s: zstd: %s", what, ZSTD_getErrorName(n));
	if (n != dst_len)
		return lt_corrupt(err, "%s: zstd produced %zu bytes, expected %llu", what, n,
						  (unsigned long long) dst_len);
	return LT_OK;
}

/*
 * Whether src_len bytes of zstd blocks can hold n bytes: a block takes at
 * least 4 bytes (an RLE block) and yields at most 128 KiB.  Refuses absurd
 * sizes before they are allocated.
 */
static bool
zstd_can_hold(uint64_t src_len, uint64_t n)
{
	return n <= (src_len / 4 + 1) * ((uint64_t) 128 << 10);
}

static lt_code
zstd_frame(const uint8_t *src, uint64_t src_len, uint8_t **out, uint64_t *out_len,
		   const char *what, lt_error *err)
{
	unsigned long long n = ZSTD_getFrameContentSize(src, src_len);

	if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n > LT_MAX_DECOMPRESSED ||
		!zstd_can_hold(src_len, n))
		return lt_corrupt(err, "%s: bad zstd frame header", what);
	*out = lt_malloc(n ? n : 1);
	if (!*out)
		return lt_nomem(err);
	if (lt_zstd_decompress_exact(src, src_len, *out, n, what, err) != LT_OK)
	{
		lt_free(*out);
		*out = NULL;
		return err ? err->code : LT_ECORRUPT;
	}
	*out_len = n;
	return LT_OK;
}

lt_code
lt_decompress(lt_compression scheme, const uint8_t *src, uint64_t src_len,
			  uint8_t **out, uint64_t *out_len, const char *what, lt_error *err)
{
	*out = NULL;
	*out_len = 0;
	if (scheme == LT_COMP_ZSTD)
	{
		uint64_t	n;
		unsigned long long fcs;

		/* A bare frame (older writers) starts with the zstd magic. */
		if (src_len >= 4 && lt_le32(src) == 0xFD2FB528u)
			return zstd_frame(src, src_len, out, out_len, what, err);
		if (src_len < 8)
			return lt_corrupt(err, "%s: zstd buffer of %llu bytes is too short", what,
							  (unsigned long long) src_len);
		n = lt_le64(src);
		if (n > LT_MAX_DECOMPRESSED)
			return lt_corrupt(err, "%s: zstd size %llu is too large", what, (unsigned long long) n);
		/* check the frame header before allocating what the prefix claims */
		fcs = ZSTD_getFrameContentSize(src + 8, src_len - 8);
		if (fcs == ZSTD_CONTENTSIZE_ERROR || (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != n) ||
			!zstd_can_hold(src_len - 8, n))
			return lt_corrupt(err, "%s: zstd frame does not hold the %llu bytes its prefix claims", what,
							  (unsigned long long) n);
		*out = lt_malloc(n ? n : 1);
		if (!*out)
			return lt_nomem(err);
		if (lt_zstd_decompress_exact(src + 8, src_len - 8, *out, n, what, err) != LT_OK)
		{
			lt_free(*out);
			*out = NULL;
			return err ? err->code : LT_ECORRUPT;
		}
		*out_len = n;
		return LT_OK;
	}
	if (scheme == LT_COMP_LZ4)
	{
		uint32_t	n;
		int			got;

		if (src_len < 4)
			return lt_corrupt(err, "%s: lz4 buffer too short", what);
		n = lt_le32(src);
		if (n > LT_MAX_DECOMPRESSED || src_len - 4 > INT32_MAX)
			return lt_corrupt(err, "%s: lz4 size %u is too large", what, n);
		/* an lz4 block expands at most 255-fold: refuse before allocating */
		if ((uint64_t) n > (src_len - 4) * 256 + 64)
			return lt_corrupt(err, "%s: lz4 block of %llu bytes cannot hold %u", what,
							  (unsigned long long) (src_len - 4), n);
		*out = lt_malloc(n ? n : 1);
		if (!*out)
			return lt_nomem(err);
		got = LZ4_decompress_safe((const char *) src + 4, (char *) *out, (int) (src_len - 4), (int) n);
		if (got < 0 || (uint32_t) got != n)
		{
			lt_free(*out);
			*out = NULL;
			return lt_corrupt(err, "%s: lz4 block does not decode to %u bytes", what, n);
		}
		*out_len = n;
		return LT_OK;
	}
	return lt_error_set(err, LT_EUNSUPPORTED, "%s: unknown compression scheme %d", what, (int) scheme);
}
