/*
 * lt_value.h — conversions of single physical values shared by every
 * consumer of decoded arrays (the filter, the FDW, lt-inspect).
 */
#ifndef LT_VALUE_H
#define LT_VALUE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* IEEE half precision to float (exact: every half is a float). */
static inline float
lt_half_to_float(uint16_t h)
{
	uint32_t	sign = (uint32_t) (h & 0x8000) << 16;
	uint32_t	e = (h >> 10) & 0x1f;
	uint32_t	mant = h & 0x3ff;
	uint32_t	bits;
	float		out;

	if (e == 0x1f)
		bits = sign | 0x7f800000 | (mant << 13);
	else if (e != 0)
		bits = sign | ((e + 112) << 23) | (mant << 13);
	else
	{
		/* zero or subnormal: exact as a float */
		out = (float) mant / 16777216.0f;
		return sign ? -out : out;
	}
	memcpy(&out, &bits, 4);
	return out;
}

/* Room for any decimal128/256 text: 77 digits, a sign, a point and a NUL. */
#define LT_DECIMAL_BUFLEN 96

/*
 * The text of a decimal: a little-endian two's-complement integer of `bytes`
 * bytes (16 or 32) with `scale` fraction digits (0..76; others print as 0),
 * e.g. "-0.001".  Returns the length written to buf (LT_DECIMAL_BUFLEN bytes).
 */
size_t		lt_decimal_format(const uint8_t *p, int bytes, int scale, char *buf);

#endif
