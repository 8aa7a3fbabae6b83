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

/* Float to IEEE half precision, rounded to nearest even (beyond the half range: infinity). */
static inline uint16_t
lt_float_to_half(float f)
{
	uint32_t	x;
	uint32_t	sign,
				e,
				mant,
				half,
				rem;
	int32_t		he;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	e = (x >> 23) & 0xff;
	mant = x & 0x7fffff;
	if (e == 0xff)
		return (uint16_t) (sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
	he = (int32_t) e - 127 + 15;
	if (he >= 0x1f)
		return (uint16_t) (sign | 0x7c00);
	if (he <= 0)
	{
		/* a half subnormal (or zero): m * 2^-24 */
		int			shift = 14 - he;

		if (shift > 24)
			return (uint16_t) sign;
		mant |= 0x800000;
		half = mant >> shift;
		rem = mant & ((1u << shift) - 1);
		if (rem > (1u << (shift - 1)) || (rem == (1u << (shift - 1)) && (half & 1)))
			half++;
		return (uint16_t) (sign | half);
	}
	half = ((uint32_t) he << 10) | (mant >> 13);
	rem = mant & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
		half++;					/* may carry into the exponent, up to infinity: still right */
	return (uint16_t) (sign | half);
}

/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
int64_t		lt_days_from_civil(int64_t y, int m, int d);
void		lt_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

/* Room for any decimal128/256 text: 77 digits, a sign, a point and a NUL. */
#define LT_DECIMAL_BUFLEN 96

/*
 * The text of a decimal: a little-endian two's-complement integer of `bytes`
 * bytes (16 or 32) with `scale` fraction digits (0..76; others print as 0),
 * e.g. "-0.001".  Returns the length written to buf (LT_DECIMAL_BUFLEN bytes).
 */
size_t		lt_decimal_format(const uint8_t *p, int bytes, int scale, char *buf);

#endif
