/*
 * lt_compress.h — general-purpose buffer compression used inside Lance files.
 */
#ifndef LT_COMPRESS_H
#define LT_COMPRESS_H

#include <stdint.h>

#include "util/lt_status.h"

typedef enum lt_compression
{
	LT_COMP_NONE = 0,
	LT_COMP_LZ4 = 1,			/* lz4 block with a u32 LE uncompressed-size prefix */
	LT_COMP_ZSTD = 2			/* u64 LE uncompressed size + zstd frame, or a bare zstd frame */
} lt_compression;

/* Upper bound on any single decompressed buffer (defends against bombs). */
#define LT_MAX_DECOMPRESSED ((uint64_t) 1 << 30)

/*
 * Decompress one Lance-framed buffer into a fresh lt_malloc'd buffer.
 * `what` names the buffer in error messages.
 */
lt_code		lt_decompress(lt_compression scheme, const uint8_t *src, uint64_t src_len,
						  uint8_t **out, uint64_t *out_len, const char *what, lt_error *err);

/* Decompress a bare zstd frame whose decompressed size is known. */
lt_code		lt_zstd_decompress_exact(const uint8_t *src, uint64_t src_len, uint8_t *dst, uint64_t dst_len,
									 const char *what, lt_error *err);

#endif
