/*
 * lt_fastlanes.c — FastLanes unpacking.
 *
 * Value i of a block sits in lane l = i % LANES of "row" r, where the 1024
 * outputs are laid out as out[order[r/8]*16 + (r%8)*128 + l].  Row r of all
 * lanes starts at bit r*w of the lane's word stream, and word j of lane l is
 * in[j*LANES + l].  The inner loop runs over lanes with one shift amount, so
 * compilers vectorize it even at -O2.
 */
#include "lt_fastlanes.h"

#include <string.h>

static const unsigned fl_order[8] = {0, 4, 2, 6, 1, 5, 3, 7};

static inline unsigned
fl_row_base(unsigned r)
{
	return fl_order[r / 8] * 16 + (r % 8) * 128;
}

#define FL_DEFINE_UNPACK(T, BITS) \
void \
lt_fl_unpack##BITS(const T *restrict in, unsigned w, T *restrict out) \
{ \
	enum { LANES = 1024 / BITS }; \
	if (w == 0) \
	{ \
		memset(out, 0, 1024 * sizeof(T)); \
		return; \
	} \
	if (w >= BITS) \
	{ \
		for (unsigned r = 0; r < BITS; r++) \
		{ \
			const T *a = in + (size_t) LANES * r; \
			T		   *o = out + fl_row_base(r); \
			for (unsigned l = 0; l < LANES; l++) \
				o[l] = a[l]; \
		} \
		return; \
	} \
	const T		mask = (T) (((T) 1 << w) - 1); \
	for (unsigned r = 0; r < BITS; r++) \
	{ \
		unsigned	p = r * w; \
		unsigned	sh = p % BITS; \
		const T    *a = in + (size_t) LANES * (p / BITS); \
		T		   *o = out + fl_row_base(r); \
		if (sh + w <= BITS) \
		{ \
			for (unsigned l = 0; l < LANES; l++) \
				o[l] = (T) ((T) (a[l] >> sh) & mask); \
		} \
		else \
		{ \
			const T    *b = a + LANES; \
			unsigned	sh2 = BITS - sh; \
			for (unsigned l = 0; l < LANES; l++) \
				o[l] = (T) ((T) ((T) (a[l] >> sh) | (T) (b[l] << sh2)) & mask); \
		} \
	} \
}

FL_DEFINE_UNPACK(uint8_t, 8)
FL_DEFINE_UNPACK(uint16_t, 16)
FL_DEFINE_UNPACK(uint32_t, 32)
FL_DEFINE_UNPACK(uint64_t, 64)

void
lt_fl_unpack(unsigned t_bits, unsigned w, const uint8_t *in, void *out)
{
	/* Page buffers are malloc'd and chunks 8-aligned, so the copy is rare. */
	union
	{
		uint64_t	u64[1024];
		uint32_t	u32[1024];
		uint16_t	u16[1024];
		uint8_t		u8[8192];
	}			tmp;
	unsigned	bytes = t_bits / 8;

	if (w > t_bits)
		w = t_bits;
	if (((uintptr_t) in % bytes) != 0)
	{
		memcpy(tmp.u8, in, lt_fl_packed_bytes(w));
		in = tmp.u8;
	}
	switch (t_bits)
	{
		case 8:
			lt_fl_unpack8(in, w, out);
			break;
		case 16:
			lt_fl_unpack16((const uint16_t *) (const void *) in, w, out);
			break;
		case 32:
			lt_fl_unpack32((const uint32_t *) (const void *) in, w, out);
			break;
		default:
			lt_fl_unpack64((const uint64_t *) (const void *) in, w, out);
			break;
	}
}

static uint64_t
fl_get(const void *in, unsigned bytes, unsigned i)
{
	switch (bytes)
	{
		case 1:
			return ((const uint8_t *) in)[i];
		case 2:
			return ((const uint16_t *) in)[i];
		case 4:
			return ((const uint32_t *) in)[i];
		default:
			return ((const uint64_t *) in)[i];
	}
}

void
lt_fl_pack(unsigned t_bits, unsigned w, const void *in, uint8_t *out)
{
	unsigned	lanes = 1024 / t_bits;
	unsigned	bytes = t_bits / 8;
	uint64_t	mask = w >= 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << w) - 1);

	memset(out, 0, lt_fl_packed_bytes(w));
	if (w == 0)
		return;
	for (unsigned l = 0; l < lanes; l++)
	{
		for (unsigned r = 0; r < t_bits; r++)
		{
			uint64_t	v = fl_get(in, bytes, fl_row_base(r) + l) & mask;
			unsigned	p = r * w;
			unsigned	sh = p % t_bits;
			size_t		word = (size_t) lanes * (p / t_bits) + l;

			uint64_t	lo = v << sh;
			uint8_t    *pw = out + word * bytes;

			/* words are little-endian: OR the bytes in place */
			for (unsigned k = 0; k < bytes; k++)
				pw[k] |= (uint8_t) (lo >> (8 * k));
			if (sh + w > t_bits)
			{
				uint64_t	hi = v >> (t_bits - sh);
				uint8_t    *pw2 = out + (word + lanes) * bytes;

				for (unsigned k = 0; k < bytes; k++)
					pw2[k] |= (uint8_t) (hi >> (8 * k));
			}
		}
	}
}
