/*
 * lt_fastlanes.h — FastLanes bit unpacking, as used by Lance's bitpacking.
 *
 * A block holds 1024 values of an unsigned type of T bits (8/16/32/64)
 * packed at width w (0..T) into 1024*w/T words of T (128*w bytes), in the
 * FastLanes "unified transposed" order.  Shared by the 2.0 and 2.1 readers.
 */
#ifndef LT_FASTLANES_H
#define LT_FASTLANES_H

#include <stddef.h>
#include <stdint.h>

#define LT_FL_BLOCK 1024

/* Bytes of one packed block of width w. */
static inline size_t lt_fl_packed_bytes(unsigned w) { return (size_t) w * (LT_FL_BLOCK / 8); }

/*
 * Unpack one block.  `in` holds lt_fl_packed_bytes(w) bytes (any alignment);
 * `out` receives 1024 values of t_bits/8 bytes each.  w must be <= t_bits and
 * t_bits one of 8, 16, 32, 64 (callers validate untrusted widths first).
 */
void		lt_fl_unpack(unsigned t_bits, unsigned w, const uint8_t *in, void *out);

/*
 * Value i (0..1023) of one block alone, as lt_fl_unpack would put it at out[i]: a point lookup
 * reads one value of a 1024-value block, not the block.  Same arguments as lt_fl_unpack.
 */
uint64_t	lt_fl_unpack_one(unsigned t_bits, unsigned w, const uint8_t *in, unsigned i);

/* Typed forms; `in` must be aligned for the type. */
void		lt_fl_unpack8(const uint8_t *in, unsigned w, uint8_t *out);
void		lt_fl_unpack16(const uint16_t *in, unsigned w, uint16_t *out);
void		lt_fl_unpack32(const uint32_t *in, unsigned w, uint32_t *out);
void		lt_fl_unpack64(const uint64_t *in, unsigned w, uint64_t *out);

/* Pack (for tests and writers): the inverse of lt_fl_unpack. */
void		lt_fl_pack(unsigned t_bits, unsigned w, const void *in, uint8_t *out);

#endif
