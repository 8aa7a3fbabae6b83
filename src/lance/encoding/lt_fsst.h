/*
 * lt_fsst.h — FSST string decompression (Lance's fsst crate format).
 *
 * The symbol table is always LT_FSST_TABLE_SIZE bytes: a u64 header
 * ("FSST" << 32 | encoder_switch << 24 | suffix_lim << 16 | terminator << 8 |
 * n_symbols), n_symbols u64 symbols, then n_symbols u8 lengths, then zeros.
 * Shared by the 2.0 and 2.1 readers.
 */
#ifndef LT_FSST_H
#define LT_FSST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/lt_status.h"

#define LT_FSST_TABLE_SIZE 2312
#define LT_FSST_ESC 255
/* The most codes of symbols outside plain ASCII a table may have and still be asked lt_fsst_ascii_codes. */
#define LT_FSST_NONASCII_MAX 4

typedef struct lt_fsst_table
{
	uint64_t	symbols[256];	/* little-endian symbol bytes */
	uint8_t		lens[256];		/* 0 for codes without a symbol */
	int			n_symbols;
	/* the codes whose symbol has a byte that is NUL or not ASCII (n_nonascii > MAX: too many to list) */
	int			n_nonascii;
	uint8_t		nonascii[LT_FSST_NONASCII_MAX];
	bool		enabled;		/* false: strings are stored uncompressed */
} lt_fsst_table;

/*
 * The last table parsed, by the bytes it came from: the chunks of a page
 * repeat the page's table, and a parse costs more than comparing the bytes.
 */
typedef struct lt_fsst_cache
{
	bool		valid;
	uint8_t		raw[LT_FSST_TABLE_SIZE];
	lt_fsst_table table;
} lt_fsst_cache;

/* Parse a symbol table; `what` names it in error messages. */
lt_code		lt_fsst_parse(const uint8_t *buf, size_t len, lt_fsst_table *t, const char *what, lt_error *err);

/* The same through a cache: *out points into the cache. */
lt_code		lt_fsst_parse_cached(lt_fsst_cache *cache, const uint8_t *buf, size_t len,
								 const lt_fsst_table **out, const char *what, lt_error *err);

/* Largest possible decoded size of `len` compressed bytes. */
static inline uint64_t lt_fsst_max_decoded(uint64_t len) { return len * 8; }

/* Decode code c (not an escape) at o: its symbol stored as 8 bytes, o advanced by its length. */
#define LT_FSST_PUT(t, c, o) \
	do { \
		unsigned	c_ = (c); \
		memcpy((o), &(t)->symbols[c_], 8); \
		(o) += (t)->lens[c_]; \
	} while (0)

/* The symbols of the 8 codes at in, appended at o; the end of the output. */
static inline __attribute__((always_inline)) uint8_t *
lt_fsst_put8(const lt_fsst_table *t, const uint8_t *in, uint8_t *o)
{
	LT_FSST_PUT(t, in[0], o);
	LT_FSST_PUT(t, in[1], o);
	LT_FSST_PUT(t, in[2], o);
	LT_FSST_PUT(t, in[3], o);
	LT_FSST_PUT(t, in[4], o);
	LT_FSST_PUT(t, in[5], o);
	LT_FSST_PUT(t, in[6], o);
	LT_FSST_PUT(t, in[7], o);
	return o;
}

/* The symbols of the last k (0..7) codes before end, in one jump: entered at case k, end[-k] .. end[-1] in order. */
static inline __attribute__((always_inline)) uint8_t *
lt_fsst_put_last(const lt_fsst_table *t, const uint8_t *end, size_t k, uint8_t *o)
{
	switch (k)
	{
		case 7: LT_FSST_PUT(t, end[-7], o);	/* FALLTHROUGH */
		case 6: LT_FSST_PUT(t, end[-6], o);	/* FALLTHROUGH */
		case 5: LT_FSST_PUT(t, end[-5], o);	/* FALLTHROUGH */
		case 4: LT_FSST_PUT(t, end[-4], o);	/* FALLTHROUGH */
		case 3: LT_FSST_PUT(t, end[-3], o);	/* FALLTHROUGH */
		case 2: LT_FSST_PUT(t, end[-2], o);	/* FALLTHROUGH */
		case 1: LT_FSST_PUT(t, end[-1], o);	/* FALLTHROUGH */
		default: break;
	}
	return o;
}

/* The bytes of w (8 codes, little-endian) that are escapes (255) have their high bit set, no other. */
static inline uint64_t
lt_fsst_escapes(uint64_t w)
{
	uint64_t	x = ~w;

	return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* The checked decoder: every code is looked up, one at a time (tables with unused codes). */
int64_t		lt_fsst_decode_checked(const lt_fsst_table *t, const uint8_t *in, size_t len, uint8_t *out);

/*
 * The decoder of a table with all 255 symbols (no unknown code): in[0, len) into o (room for
 * lt_fsst_max_decoded(len) bytes: symbols are stored 8 bytes at a time); returns the end of the
 * output, or NULL on a trailing escape.  8 codes at a time while they hold no escape; the last 1-7
 * codes, when 8 bytes can be loaded there (readable_end: bytes before it may be loaded), in one
 * jump into the unrolled steps.  Each code is loaded as a byte (one instruction, where extracting
 * it from a loaded word takes three).  An escape sends the rest of the string one code at a time;
 * an escaped byte that is NUL or not ASCII sets *dirty (the output is then not known to be ASCII).
 */
static inline __attribute__((always_inline)) uint8_t *
lt_fsst_decode_full(const lt_fsst_table *t, const uint8_t *in, size_t len, const uint8_t *readable_end,
					uint8_t *o, bool *dirty)
{
	const uint8_t *end = in + len;

	while (end - in >= 8)
	{
		uint64_t	w;

		memcpy(&w, in, 8);
		if (lt_fsst_escapes(w) != 0)
			goto slow;
		o = lt_fsst_put8(t, in, o);
		in += 8;
	}
	if (in == end)
		return o;
	if (readable_end - in >= 8)
	{
		size_t		k = (size_t) (end - in);	/* 1..7 */
		uint64_t	w;

		memcpy(&w, in, 8);
		if ((lt_fsst_escapes(w) & ((1ull << (8 * k)) - 1)) == 0)
		{
			return lt_fsst_put_last(t, end, k, o);
		}
	}
slow:
	while (in < end)
	{
		unsigned	c = *in++;

		if (c != LT_FSST_ESC)
			LT_FSST_PUT(t, c, o);
		else
		{
			/* an escape: the next byte is a literal */
			if (in == end)
				return NULL;
			if (*in == 0 || *in >= 0x80)
				*dirty = true;
			*o++ = *in++;
		}
	}
	return o;
}

/*
 * lt_fsst_decode_full for input known to hold no escape (lt_fsst_has_escape said so for a span
 * that contains it): no check at all, 8 codes at a time and the last 1-7 in one jump.
 */
static inline __attribute__((always_inline)) uint8_t *
lt_fsst_decode_noesc(const lt_fsst_table *t, const uint8_t *in, size_t len, uint8_t *o)
{
	const uint8_t *end = in + len;

	for (; end - in >= 8; in += 8)
		o = lt_fsst_put8(t, in, o);
	return lt_fsst_put_last(t, end, (size_t) (end - in), o);
}

/* Whether in[0, len) holds an escape code (one memchr for a whole chunk's strings). */
static inline bool
lt_fsst_has_escape(const uint8_t *in, size_t len)
{
	return len > 0 && memchr(in, LT_FSST_ESC, len) != NULL;
}

/*
 * Whether no code of in[0, len) has a symbol with a NUL or non-ASCII byte (Lance's trained tables
 * have one such: a NUL symbol), by one memchr per such code; false for a table with too many of
 * them.  A byte after an escape counts too (conservatively); escaped bytes are the decoder's to
 * judge (lt_fsst_decode_full's *dirty).
 */
static inline bool
lt_fsst_ascii_codes(const lt_fsst_table *t, const uint8_t *in, size_t len)
{
	if (t->n_nonascii > LT_FSST_NONASCII_MAX)
		return false;
	for (int i = 0; i < t->n_nonascii; i++)
		if (len > 0 && memchr(in, t->nonascii[i], len) != NULL)
			return false;
	return true;
}

/*
 * Decode one compressed string in[0, len) into out, which must have room for
 * lt_fsst_max_decoded(len) bytes (the decoder stores 8 bytes at a time).
 * readable_end (>= in + len): bytes up to it may be loaded (the full
 * decoder loads the last codes of a string as a word).  Returns the decoded length, or -1 when the input is
 * corrupt (an unknown code or a trailing escape).  With the table disabled
 * this is a copy.  A table with all 255 symbols has no unknown code: its
 * codes are decoded unchecked (lt_fsst_decode_full); other tables go through
 * the checked decoder.
 */
static inline int64_t
lt_fsst_decode_in(const lt_fsst_table *t, const uint8_t *in, size_t len, const uint8_t *readable_end,
				  uint8_t *out)
{
	uint8_t    *o;
	bool		dirty = false;

	if (!t->enabled)
	{
		memcpy(out, in, len);
		return (int64_t) len;
	}
	if (t->n_symbols != 255)
		return lt_fsst_decode_checked(t, in, len, out);
	o = lt_fsst_decode_full(t, in, len, readable_end, out, &dirty);
	return o ? (int64_t) (o - out) : -1;
}

/* lt_fsst_decode_in reading nothing past the string. */
static inline int64_t
lt_fsst_decode(const lt_fsst_table *t, const uint8_t *in, size_t len, uint8_t *out)
{
	return lt_fsst_decode_in(t, in, len, in + len, out);
}


/* ---- compression (lt_fsst_encode.c) ---- */

/* Buckets of the index of symbols of 3 bytes or more, by a hash of their first 3 bytes. */
#define LT_FSST_LONG_BUCKETS 2048

/*
 * A symbol table with a longest-match index: symbols of 3 to 8 bytes by a hash of their
 * first 3 bytes (longest first in a bucket), and the best symbol of at most 2 bytes for
 * every 2-byte (and 1-byte) input.  When no bucket holds more than one symbol (the FSST
 * paper's table, which training prefers when it compresses as well) a match is two lookups
 * and a compare, without a branch; otherwise the bucket is searched.  Entries of short2[] /
 * single[] / longs[].match are code | length << 8; length 0 = no symbol (escape the byte).
 */
typedef struct lt_fsst_long
{
	uint64_t	sym;			/* little-endian symbol bytes */
	uint64_t	mask;			/* of its length: w & mask == sym when it matches (mask 0, sym 1: never) */
	uint32_t	need;			/* its length: the input bytes it needs */
	uint32_t	match;			/* code | len << 8 */
} lt_fsst_long;

typedef struct lt_fsst_encoder
{
	lt_fsst_table table;
	bool		one_per_bucket;
	/* by the next 2 input bytes (little-endian); [65536 + b]: by the last input byte b */
	uint16_t	short2[65536 + 256];
	uint16_t	long_start[LT_FSST_LONG_BUCKETS + 1];	/* bucket b: longs[long_start[b], long_start[b + 1]) */
	lt_fsst_long longs[255];
	lt_fsst_long slot[LT_FSST_LONG_BUCKETS];	/* one_per_bucket: each bucket's symbol (or never) */
} lt_fsst_encoder;

/*
 * Build a symbol table from (a sample of) strings i of n: data[offsets[i], offsets[i + 1]).
 * Two tables are trained, one with at most one long symbol per bucket of the index, one
 * without that limit; the first is kept unless the other compresses the sample better.
 */
lt_code		lt_fsst_train(const uint8_t *data, const int64_t *offsets, int64_t n, lt_fsst_encoder *e,
						  lt_error *err);
/* Compress one string into out (room for 2 * len bytes); returns the compressed length. */
size_t		lt_fsst_encode(const lt_fsst_encoder *e, const uint8_t *in, size_t len, uint8_t *out);
/*
 * Compress strings i of n, data[offsets[i], offsets[i + 1]), one after the other into out
 * (room for 2 * (offsets[n] - offsets[0]) bytes); out_offsets[0..n] get where each starts and
 * the end (out_offsets[0] = 0).  The same bytes as lt_fsst_encode of each string, faster:
 * bytes are loaded 8 at a time up to data + offsets[n].  Returns the compressed length.
 */
size_t		lt_fsst_encode_all(const lt_fsst_encoder *e, const uint8_t *data, const int64_t *offsets, int64_t n,
							   uint8_t *out, int64_t *out_offsets);
/* The table in the layout lt_fsst_parse reads (LT_FSST_TABLE_SIZE bytes). */
void		lt_fsst_export(const lt_fsst_table *t, uint8_t *out);

#endif
