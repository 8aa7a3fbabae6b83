/*
 * lt_fastlanes.c — FastLanes unpacking (and packing, for the writer).
 *
 * Value i of a block sits in lane l = i % LANES of "row" r, where the 1024
 * outputs are laid out as out[order[r/8]*16 + (r%8)*128 + l].  Row r of all
 * lanes starts at bit r*w of the lane's word stream, and word j of lane l is
 * in[j*LANES + l].  The inner loop runs over lanes with one shift amount, so
 * compilers vectorize it even at -O2.
 */
#include "encoding/lt_fastlanes.h"

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

/*
 * One value: output index i = fl_order[r / 8] * 16 + (r % 8) * 128 + l with lane l < LANES, so
 * r % 8 = i / 128, and the rest (i % 128) splits into l and fl_order[r / 8] * 16 (fl_order is its
 * own inverse).  Then the value is bits [r * w, r * w + w) of lane l's word stream.
 */
static inline uint64_t
fl_word(const uint8_t *in, unsigned bytes, size_t k)
{
	uint64_t	v = 0;

	memcpy(&v, in + k * bytes, bytes);	/* little-endian hosts, as the block unpackers */
	return v;
}

uint64_t
lt_fl_unpack_one(unsigned t_bits, unsigned w, const uint8_t *in, unsigned i)
{
	unsigned	lanes = 1024 / t_bits;
	unsigned	bytes = t_bits / 8;
	unsigned	rem = i % 128;
	unsigned	l = rem % lanes;
	unsigned	r = fl_order[(rem / lanes) * lanes / 16] * 8 + i / 128;
	unsigned	p,
				sh;
	uint64_t	v,
				mask;

	if (w > t_bits)
		w = t_bits;
	if (w == 0)
		return 0;
	p = r * w;
	sh = p % t_bits;
	v = fl_word(in, bytes, (size_t) lanes * (p / t_bits) + l) >> sh;
	if (sh + w > t_bits)
		v |= fl_word(in, bytes, (size_t) lanes * (p / t_bits + 1) + l) << (t_bits - sh);
	mask = w >= 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << w) - 1);
	return v & mask;
}

/*
 * Packing, the inverse: row r of every lane goes to bit r*w of the lane's word stream; a lane's
 * word is complete (stored once) when its bits are full, the rest of the value starts the next.
 * The inner loops run over lanes, as the unpacking's.
 */
#define FL_DEFINE_PACK(T, BITS) \
static void \
fl_pack##BITS(const T *restrict in, unsigned w, T *restrict out) \
{ \
	enum { LANES = 1024 / BITS }; \
	const T		mask = w >= BITS ? (T) ~(T) 0 : (T) (((T) 1 << w) - 1); \
	T			acc[LANES] = {0}; \
	unsigned	sh = 0; \
	T		   *o = out; \
	for (unsigned r = 0; r < BITS; r++) \
	{ \
		const T    *a = in + fl_row_base(r); \
		if (sh + w <= BITS) \
		{ \
			for (unsigned l = 0; l < LANES; l++) \
				acc[l] |= (T) ((T) (a[l] & mask) << sh); \
			sh += w; \
			if (sh == BITS) \
			{ \
				for (unsigned l = 0; l < LANES; l++) \
				{ \
					o[l] = acc[l]; \
					acc[l] = 0; \
				} \
				o += LANES; \
				sh = 0; \
			} \
		} \
		else \
		{ \
			unsigned	sh2 = BITS - sh; \
			for (unsigned l = 0; l < LANES; l++) \
			{ \
				T			v = (T) (a[l] & mask); \
				o[l] = (T) (acc[l] | (T) (v << sh)); \
				acc[l] = (T) (v >> sh2); \
			} \
			o += LANES; \
			sh = sh + w - BITS; \
		} \
	} \
}

FL_DEFINE_PACK(uint8_t, 8)
FL_DEFINE_PACK(uint16_t, 16)
FL_DEFINE_PACK(uint32_t, 32)
FL_DEFINE_PACK(uint64_t, 64)

void
lt_fl_pack(unsigned t_bits, unsigned w, const void *in, uint8_t *out)
{
	union
	{
		uint64_t	u64[1024];
		uint8_t		u8[8192];
	}			tin,
				tout;
	unsigned	bytes = t_bits / 8;
	const void *src = in;
	void	   *dst = out;

	if (w > t_bits)
		w = t_bits;
	if (w == 0)
	{
		memset(out, 0, lt_fl_packed_bytes(0));
		return;
	}
	/* the writers' buffers are aligned; others go through copies */
	if ((uintptr_t) in % bytes != 0)
	{
		memcpy(tin.u8, in, 1024 * (size_t) bytes);
		src = tin.u8;
	}
	if ((uintptr_t) out % bytes != 0)
		dst = tout.u8;
	switch (t_bits)
	{
		case 8:
			fl_pack8(src, w, dst);
			break;
		case 16:
			fl_pack16(src, w, dst);
			break;
		case 32:
			fl_pack32(src, w, dst);
			break;
		default:
			fl_pack64(src, w, dst);
			break;
	}
	if (dst != (void *) out)
		memcpy(out, dst, lt_fl_packed_bytes(w));
}
