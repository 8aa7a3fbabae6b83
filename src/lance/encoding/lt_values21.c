/*
 * lt_values21.c — the compressive encodings of Lance 2.1+ pages.
 *
 * Three shapes of decoding share these encodings:
 *   mini-block: one chunk's value buffers (Flat, InlineBitpacking, Rle,
 *               ByteStreamSplit, Variable, Fsst, FixedSizeList, General,
 *               PackedStruct)
 *   block:      one whole buffer (rep/def levels, dictionaries: Flat,
 *               InlineBitpacking, OutOfLineBitpacking, Rle, Variable, General)
 *   per value:  FullZip (in lt_fullzip.c)
 * Every length comes from untrusted bytes and is checked before use.
 */
#include "encoding/lt_enc21.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "encoding/lt_compress.h"
#include "encoding/lt_fastlanes.h"
#include "encoding/lt_fsst.h"
#include "proto/lt_enc21.pb-c.h"

typedef Lt__Enc21__CompressiveEncoding enc_t;

#define ENC_FLAT LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT
#define ENC_VARIABLE LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE
#define ENC_CONSTANT LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_CONSTANT
#define ENC_OOL_BP LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_OUT_OF_LINE_BITPACKING
#define ENC_INLINE_BP LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_INLINE_BITPACKING
#define ENC_FSST LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FSST
#define ENC_DICTIONARY LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_DICTIONARY
#define ENC_RLE LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_RLE
#define ENC_BSS LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_BYTE_STREAM_SPLIT
#define ENC_GENERAL LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL
#define ENC_FSL LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST
#define ENC_PACKED LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_PACKED_STRUCT

/* Encodings nest (General of Fsst of Variable ...); a few levels suffice. */
#define MAX_NESTING 8

static int
enc_case(const enc_t *e)
{
	return e ? (int) e->compression_case : 0;
}

int
lt21_leaf_width(const lt_field *leaf)
{
	if (lt_type_is_var_width(leaf->type) || lt_type_is_nested(leaf->type))
		return 0;
	return leaf->byte_width;
}

/* ---------------------------------------------------------------------- */
/* general compression */

lt_code
lt21_inflate(const lt21_where *w, const Lt__Enc21__BufferCompression *bc, const uint8_t *p,
			 uint64_t len, uint8_t **out, uint64_t *out_len, lt_error *err)
{
	lt_compression scheme;

	*out = NULL;
	*out_len = 0;
	if (!bc || !bc->has_scheme)
		return LT21_CORRUPT(w, err, "general compression without a scheme");
	if (bc->scheme == LT__ENC21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_LZ4)
		scheme = LT_COMP_LZ4;
	else if (bc->scheme == LT__ENC21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_ZSTD)
		scheme = LT_COMP_ZSTD;
	else
		return LT21_UNSUPPORTED(w, err, "unknown compression scheme %d", (int) bc->scheme);
	if (len == 0 && scheme == LT_COMP_ZSTD)
	{
		/* the writer emits nothing for an empty zstd buffer */
		*out = lt_malloc(1);
		return *out ? LT_OK : lt_nomem(err);
	}
	if (lt_decompress(scheme, p, len, out, out_len, "compressed buffer", err) != LT_OK)
		return lt_error_prefix(err, "%s: column %d page %d", w->path, w->column, w->page);
	return LT_OK;
}

/* ---------------------------------------------------------------------- */
/* fixed-width values into a plain byte array */

static lt_code
fixed_flat(const lt21_where *w, uint64_t bits, const uint8_t *p, uint64_t len, uint64_t n,
		   unsigned width, uint8_t *out, lt_error *err)
{
	if (bits == 1 && width == 1)
	{
		/* a bool bitmap, LSB first; slots are one byte each */
		if ((n + 7) / 8 > len)
			return LT21_CORRUPT(w, err, "bitmap of %llu bytes holds fewer than %llu values",
								(unsigned long long) len, (unsigned long long) n);
		for (uint64_t i = 0; i < n; i++)
			out[i] = (p[i >> 3] >> (i & 7)) & 1;
		return LT_OK;
	}
	if (bits != (uint64_t) width * 8)
		return LT21_CORRUPT(w, err, "flat values of %llu bits where %u-byte values are expected",
							(unsigned long long) bits, width);
	if (n * width > len)
		return LT21_CORRUPT(w, err, "flat buffer of %llu bytes holds fewer than %llu values of %u bytes",
							(unsigned long long) len, (unsigned long long) n, width);
	memcpy(out, p, n * width);
	return LT_OK;
}

static bool
valid_word_bits(uint64_t t)
{
	return t == 8 || t == 16 || t == 32 || t == 64;
}

/*
 * Blocks of [T bit_width][1024 values packed at bit_width], the last zero-padded: every value into out, or
 * with one != ALL_VALUES only value `one`, into out + one * width (the other slots left as they are; the
 * block headers before it are walked and checked all the same, and only that value of its block unpacked).
 */
#define ALL_VALUES UINT64_MAX

static lt_code
fixed_inline_bp(const lt21_where *w, uint64_t t_bits, const uint8_t *p, uint64_t len, uint64_t n,
				unsigned width, uint64_t one, uint8_t *out, lt_error *err)
{
	unsigned	tb = (unsigned) (t_bits / 8);
	uint64_t	pos = 0;
	uint64_t	done = 0;

	if (!valid_word_bits(t_bits) || tb != width)
		return LT21_CORRUPT(w, err, "inline bitpacking of %llu-bit words for %u-byte values",
							(unsigned long long) t_bits, width);
	while (done < n)
	{
		uint64_t	bw = 0;
		uint64_t	cnt = n - done < LT_FL_BLOCK ? n - done : LT_FL_BLOCK;
		size_t		pb;

		if (tb > len - pos)
			return LT21_CORRUPT(w, err, "bitpacked buffer of %llu bytes ends in a block header at %llu",
								(unsigned long long) len, (unsigned long long) pos);
		memcpy(&bw, p + pos, tb);
		if (bw > t_bits)
			return LT21_CORRUPT(w, err, "bit width %llu exceeds the %llu-bit word",
								(unsigned long long) bw, (unsigned long long) t_bits);
		pos += tb;
		pb = lt_fl_packed_bytes((unsigned) bw);
		if (pb > len - pos)
			return LT21_CORRUPT(w, err, "bitpacked block at %llu needs %zu bytes, buffer has %llu",
								(unsigned long long) pos, pb, (unsigned long long) (len - pos));
		if (one != ALL_VALUES)
		{
			if (one < done + LT_FL_BLOCK)
			{
				uint64_t	v = lt_fl_unpack_one((unsigned) t_bits, (unsigned) bw, p + pos, (unsigned) (one - done));

				memcpy(out, &v, width);	/* little-endian, as the block unpackers; out is the one slot */
				return LT_OK;
			}
		}
		else if (cnt == LT_FL_BLOCK)
			lt_fl_unpack((unsigned) t_bits, (unsigned) bw, p + pos, out + done * width);
		else
		{
			uint64_t	tmp[LT_FL_BLOCK];

			lt_fl_unpack((unsigned) t_bits, (unsigned) bw, p + pos, tmp);
			memcpy(out + done * width, tmp, cnt * width);
		}
		pos += pb;
		done += cnt;
	}
	return LT_OK;
}

/* Whole blocks at one width, then a tail either packed (padded) or raw. */
static lt_code
fixed_ool_bp(const lt21_where *w, uint64_t t_bits, uint64_t bw, const uint8_t *p, uint64_t len,
			 uint64_t n, unsigned width, uint8_t *out, lt_error *err)
{
	unsigned	tb = (unsigned) (t_bits / 8);
	uint64_t	full = n / LT_FL_BLOCK;
	uint64_t	tail = n % LT_FL_BLOCK;
	size_t		pb;
	uint64_t	need;

	if (!valid_word_bits(t_bits) || tb != width || bw > t_bits)
		return LT21_CORRUPT(w, err, "out-of-line bitpacking of %llu bits in %llu-bit words for %u-byte values",
							(unsigned long long) bw, (unsigned long long) t_bits, width);
	pb = lt_fl_packed_bytes((unsigned) bw);
	need = full * pb;
	if (need > len)
		return LT21_CORRUPT(w, err, "bitpacked buffer of %llu bytes is too short for %llu values",
							(unsigned long long) len, (unsigned long long) n);
	for (uint64_t b = 0; b < full; b++)
		lt_fl_unpack((unsigned) t_bits, (unsigned) bw, p + b * pb, out + b * LT_FL_BLOCK * width);
	if (tail > 0)
	{
		const uint8_t *q = p + need;
		uint64_t	left = len - need;

		if (left == tail * width)
			memcpy(out + full * LT_FL_BLOCK * width, q, tail * width);
		else if (left >= pb)
		{
			uint64_t	tmp[LT_FL_BLOCK];

			lt_fl_unpack((unsigned) t_bits, (unsigned) bw, q, tmp);
			memcpy(out + full * LT_FL_BLOCK * width, tmp, tail * width);
		}
		else
			return LT21_CORRUPT(w, err, "bitpacked tail of %llu values has %llu bytes",
								(unsigned long long) tail, (unsigned long long) left);
	}
	return LT_OK;
}

static lt_code
fixed_rle(const lt21_where *w, uint64_t bits, const uint8_t *vp, uint64_t vlen, const uint8_t *lp,
		  uint64_t llen, uint64_t n, unsigned width, uint8_t *out, lt_error *err)
{
	uint64_t	runs;
	uint64_t	done = 0;

	if (bits != (uint64_t) width * 8)
		return LT21_CORRUPT(w, err, "rle values of %llu bits where %u-byte values are expected",
							(unsigned long long) bits, width);
	if (vlen % width != 0 || vlen / width != llen)
		return LT21_CORRUPT(w, err, "rle buffers disagree: %llu value bytes, %llu run lengths",
							(unsigned long long) vlen, (unsigned long long) llen);
	runs = llen;
	for (uint64_t r = 0; r < runs && done < n; r++)
	{
		uint64_t	l = lp[r];
		const uint8_t *v = vp + r * width;

		if (l == 0)
			return LT21_CORRUPT(w, err, "rle run %llu has length 0", (unsigned long long) r);
		if (l > n - done)
			l = n - done;
		switch (width)
		{
			case 1:
				memset(out + done, v[0], l);
				break;
			case 2:
				{
					uint16_t	x = lt_le16(v);

					for (uint64_t i = 0; i < l; i++)
						memcpy(out + (done + i) * 2, &x, 2);
					break;
				}
			case 4:
				{
					uint32_t	x = lt_le32(v);

					for (uint64_t i = 0; i < l; i++)
						memcpy(out + (done + i) * 4, &x, 4);
					break;
				}
			case 8:
				{
					uint64_t	x = lt_le64(v);

					for (uint64_t i = 0; i < l; i++)
						memcpy(out + (done + i) * 8, &x, 8);
					break;
				}
			default:
				for (uint64_t i = 0; i < l; i++)
					memcpy(out + (done + i) * width, v, width);
				break;
		}
		done += l;
	}
	if (done != n)
		return LT21_CORRUPT(w, err, "rle runs cover %llu values, expected %llu",
							(unsigned long long) done, (unsigned long long) n);
	return LT_OK;
}

static lt_code
fixed_bss(const lt21_where *w, uint64_t bits, const uint8_t *p, uint64_t len, uint64_t n,
		  unsigned width, uint8_t *out, lt_error *err)
{
	if (bits != (uint64_t) width * 8)
		return LT21_CORRUPT(w, err, "byte-stream-split values of %llu bits where %u-byte values are expected",
							(unsigned long long) bits, width);
	if (n * width != len)
		return LT21_CORRUPT(w, err, "byte-stream-split buffer of %llu bytes for %llu values",
							(unsigned long long) len, (unsigned long long) n);
	for (unsigned j = 0; j < width; j++)
	{
		const uint8_t *s = p + (uint64_t) j * n;

		for (uint64_t i = 0; i < n; i++)
			out[i * width + j] = s[i];
	}
	return LT_OK;
}

static lt_code
fixed_constant(const lt21_where *w, const Lt__Enc21__Constant *c, uint64_t n, unsigned width,
			   uint8_t *out, lt_error *err)
{
	if (!c->has_value)
	{
		memset(out, 0, n * width);
		return LT_OK;
	}
	if (c->value.len != width)
		return LT21_CORRUPT(w, err, "constant of %zu bytes for %u-byte values", c->value.len, width);
	for (uint64_t i = 0; i < n; i++)
		memcpy(out + i * width, c->value.data, width);
	return LT_OK;
}

static lt_code
flat_bits(const lt21_where *w, const enc_t *e, uint64_t *bits, lt_error *err)
{
	if (enc_case(e) != ENC_FLAT)
		return LT21_UNSUPPORTED(w, err, "expected flat inner encoding, got case %d", enc_case(e));
	if (e->flat->data)
		return LT21_UNSUPPORTED(w, err, "compressed flat buffers");
	*bits = e->flat->bits_per_value;
	return LT_OK;
}

#define MAX_CHUNK_BUFFERS 16

/*
 * General compression wraps a chunk's first value buffer: inflate it and
 * hand the inner encoding the same buffers with the first one replaced
 * (*buf is the inflated copy for the caller to free).
 */
static lt_code
inflate_first(const lt21_where *w, const enc_t *e, int nbuf, const uint8_t *const *bp, const uint64_t *bl,
			  const uint8_t **nbp, uint64_t *nbl, uint8_t **buf, lt_error *err)
{
	uint64_t	blen;

	if (nbuf < 1 || nbuf > MAX_CHUNK_BUFFERS)
		return LT21_CORRUPT(w, err, "compressed values in %d buffers", nbuf);
	LT_TRY(lt21_inflate(w, e->general->compression, bp[0], bl[0], buf, &blen, err));
	nbp[0] = *buf;
	nbl[0] = blen;
	for (int i = 1; i < nbuf; i++)
	{
		nbp[i] = bp[i];
		nbl[i] = bl[i];
	}
	return LT_OK;
}

static lt_code
mb_fixed(const lt21_where *w, const enc_t *e, int nbuf, const uint8_t *const *bp, const uint64_t *bl,
		 uint64_t n, unsigned width, uint8_t *out, int depth, lt_error *err)
{
	uint64_t	bits;

	if (depth > MAX_NESTING)
		return LT21_CORRUPT(w, err, "value encodings nested too deeply");
	switch (enc_case(e))
	{
		case ENC_FLAT:
			if (nbuf != 1)
				return LT21_CORRUPT(w, err, "flat values in %d buffers", nbuf);
			LT_TRY(flat_bits(w, e, &bits, err));
			return fixed_flat(w, bits, bp[0], bl[0], n, width, out, err);
		case ENC_INLINE_BP:
			if (nbuf != 1)
				return LT21_CORRUPT(w, err, "bitpacked values in %d buffers", nbuf);
			if (e->inline_bitpacking->values)
				return LT21_UNSUPPORTED(w, err, "compressed bitpacked buffers");
			return fixed_inline_bp(w, e->inline_bitpacking->uncompressed_bits_per_value,
								   bp[0], bl[0], n, width, ALL_VALUES, out, err);
		case ENC_RLE:
			{
				uint64_t	lbits;

				if (nbuf != 2)
					return LT21_CORRUPT(w, err, "rle values in %d buffers", nbuf);
				LT_TRY(flat_bits(w, e->rle->values, &bits, err));
				LT_TRY(flat_bits(w, e->rle->run_lengths, &lbits, err));
				if (lbits != 8)
					return LT21_UNSUPPORTED(w, err, "rle run lengths of %llu bits", (unsigned long long) lbits);
				return fixed_rle(w, bits, bp[0], bl[0], bp[1], bl[1], n, width, out, err);
			}
		case ENC_BSS:
			if (nbuf != 1)
				return LT21_CORRUPT(w, err, "byte-stream-split values in %d buffers", nbuf);
			LT_TRY(flat_bits(w, e->byte_stream_split->values, &bits, err));
			return fixed_bss(w, bits, bp[0], bl[0], n, width, out, err);
		case ENC_CONSTANT:
			return fixed_constant(w, e->constant, n, width, out, err);
		case ENC_GENERAL:
			{
				const uint8_t *nbp[MAX_CHUNK_BUFFERS];
				uint64_t	nbl[MAX_CHUNK_BUFFERS];
				uint8_t    *buf;
				lt_code		rc;

				LT_TRY(inflate_first(w, e, nbuf, bp, bl, nbp, nbl, &buf, err));
				rc = mb_fixed(w, e->general->values, nbuf, nbp, nbl, n, width, out, depth + 1, err);
				lt_free(buf);
				return rc;
			}
		case 0:
			return LT21_CORRUPT(w, err, "missing value encoding");
		default:
			return LT21_UNSUPPORTED(w, err, "value encoding %d for fixed-width values", enc_case(e));
	}
}

static lt_code
block_fixed(const lt21_where *w, const enc_t *e, const uint8_t *p, uint64_t len, uint64_t n,
			unsigned width, uint8_t *out, int depth, lt_error *err)
{
	uint64_t	bits;

	if (depth > MAX_NESTING)
		return LT21_CORRUPT(w, err, "block encodings nested too deeply");
	switch (enc_case(e))
	{
		case ENC_FLAT:
			LT_TRY(flat_bits(w, e, &bits, err));
			return fixed_flat(w, bits, p, len, n, width, out, err);
		case ENC_INLINE_BP:
			if (e->inline_bitpacking->values)
				return LT21_UNSUPPORTED(w, err, "compressed bitpacked buffers");
			return fixed_inline_bp(w, e->inline_bitpacking->uncompressed_bits_per_value,
								   p, len, n, width, ALL_VALUES, out, err);
		case ENC_OOL_BP:
			LT_TRY(flat_bits(w, e->out_of_line_bitpacking->values, &bits, err));
			return fixed_ool_bp(w, e->out_of_line_bitpacking->uncompressed_bits_per_value, bits,
								p, len, n, width, out, err);
		case ENC_RLE:
			{
				uint64_t	lbits,
							vsize;

				LT_TRY(flat_bits(w, e->rle->values, &bits, err));
				LT_TRY(flat_bits(w, e->rle->run_lengths, &lbits, err));
				if (lbits != 8)
					return LT21_UNSUPPORTED(w, err, "rle run lengths of %llu bits", (unsigned long long) lbits);
				if (len < 8)
					return LT21_CORRUPT(w, err, "rle block of %llu bytes", (unsigned long long) len);
				vsize = lt_le64(p);
				if (vsize > len - 8)
					return LT21_CORRUPT(w, err, "rle block values of %llu bytes in %llu",
										(unsigned long long) vsize, (unsigned long long) len);
				return fixed_rle(w, bits, p + 8, vsize, p + 8 + vsize, len - 8 - vsize, n, width, out, err);
			}
		case ENC_CONSTANT:
			return fixed_constant(w, e->constant, n, width, out, err);
		case ENC_GENERAL:
			{
				uint8_t    *buf;
				uint64_t	blen;
				lt_code		rc;

				LT_TRY(lt21_inflate(w, e->general->compression, p, len, &buf, &blen, err));
				rc = block_fixed(w, e->general->values, buf, blen, n, width, out, depth + 1, err);
				lt_free(buf);
				return rc;
			}
		case 0:
			return LT21_CORRUPT(w, err, "missing block encoding");
		default:
			return LT21_UNSUPPORTED(w, err, "block encoding %d for fixed-width values", enc_case(e));
	}
}

lt_code
lt21_mb_decode_fixed(const lt21_where *w, const enc_t *enc, int nbuf, const uint8_t *const *bp,
					 const uint64_t *bl, uint64_t n, unsigned width, uint8_t *out, lt_error *err)
{
	return mb_fixed(w, enc, nbuf, bp, bl, n, width, out, 0, err);
}

lt_code
lt21_levels_reserve(lt21_levels *lv, uint64_t n, lt_error *err)
{
	if (n > LT21_MAX_PAGE_ITEMS || lv->n + n > LT21_MAX_PAGE_ITEMS)
		return lt_corrupt(err, "%llu levels are too many", (unsigned long long) (lv->n + n));
	if (lv->n + n > lv->cap || !lv->v)
	{
		uint64_t	cap = lv->cap ? lv->cap : 1024;
		uint16_t   *v;

		while (cap < lv->n + n)
			cap *= 2;
		v = lt_realloc(lv->v, cap * sizeof(uint16_t));
		if (!v)
			return lt_nomem(err);
		lv->v = v;
		lv->cap = cap;
	}
	return LT_OK;
}

lt_code
lt21_decode_levels(const lt21_where *w, const enc_t *enc, const uint8_t *p, uint64_t len,
				   uint64_t n, lt21_levels *lv, const char *what, lt_error *err)
{
	if (lt21_levels_reserve(lv, n, err) != LT_OK)
		return lt_error_prefix(err, "%s: column %d page %d: %s", w->path, w->column, w->page, what);
	if (block_fixed(w, enc, p, len, n, 2, (uint8_t *) (lv->v + lv->n), 0, err) != LT_OK)
		return lt_error_prefix(err, "%s levels", what);
	lv->n += n;
	return LT_OK;
}

/* ---------------------------------------------------------------------- */
/* variable-width values into an lt_array of strings */

/*
 * The strings k of [i0, i1] of append_fsst: the offsets are `ow`-byte (a constant where this is
 * inlined) and checked as they are read (each string lies within [prev, last]); decode: whether
 * they are decoded (else left empty); full: the table decodes with lt_fsst_decode_full, or, noesc,
 * with lt_fsst_decode_noesc (the chunk holds no escape).  Offsets are kept relative to dbase, the
 * array's data.  Returns the output's end, or NULL at a bad offset or code (*bad: the string);
 * *dirty is set when an escaped byte is not plain ASCII.
 */
static inline __attribute__((always_inline)) uint8_t *
fsst_run(const uint8_t *offs, unsigned ow, uint64_t i0, uint64_t i1, uint64_t *prevp, uint64_t last,
		 const uint8_t *data, uint64_t data_len, uint64_t base, const lt_fsst_table *fsst, bool decode,
		 bool full, bool noesc, bool room, uint8_t *dbase, uint8_t *op, int64_t *o, uint64_t *bad, bool *dirty)
{
	uint64_t	prev = *prevp;

	for (uint64_t i = i0; i <= i1; i++)
	{
		uint64_t	cur = ow == 4 ? (uint64_t) lt_le32(offs + i * 4) : lt_le64(offs + i * 8);

		if (cur < prev || cur > last)
		{
			*bad = i;
			*prevp = prev;
			return NULL;
		}
		if (room)
			op = lt_array_room_open(dbase, op);
		if (decode && full && noesc)
			op = lt_fsst_decode_noesc(fsst, data + (prev - base), cur - prev, op);
		else if (decode && full)
		{
			op = lt_fsst_decode_full(fsst, data + (prev - base), cur - prev, data + data_len, op, dirty);
			if (op == NULL)
			{
				*bad = i;
				*prevp = prev;
				return NULL;
			}
		}
		else if (decode)
		{
			int64_t		got = lt_fsst_decode_in(fsst, data + (prev - base), cur - prev, data + data_len, op);

			if (got < 0)
			{
				*bad = i;
				*prevp = prev;
				return NULL;
			}
			op += got;
		}
		o[i] = op - dbase;
		prev = cur;
	}
	*prevp = prev;
	return op;
}

/*
 * The FSST case of append_strings (offsets read from OFF(0) >= base on): the offsets are checked as
 * the strings are decoded, in one pass (each string lies within [first, last], which is checked
 * first), specialised for the offset width, the table and header room (dst->room: each string is
 * decoded after its room, straight into the layout the caller turns into its own strings), with
 * the output position in a local.  Strings outside (lo, hi] (1-based) are left empty: the caller
 * wants only those.
 */
static lt_code
append_fsst(const lt21_where *w, lt_array *dst, const uint8_t *offs, unsigned ow, uint64_t n,
			const uint8_t *data, uint64_t data_len, uint64_t base, const lt_fsst_table *fsst,
			uint64_t lo, uint64_t hi, lt_error *err)
{
	uint64_t	first = ow == 4 ? (uint64_t) lt_le32(offs) : lt_le64(offs);
	uint64_t	last = ow == 4 ? (uint64_t) lt_le32(offs + n * 4) : lt_le64(offs + n * 8);
	uint64_t	prev = first,
				bad = 0;
	bool		full = fsst->enabled && fsst->n_symbols == 255;
	bool		noesc,
				dirty = false;
	uint8_t    *out0,
			   *op;
	int64_t		at;
	int64_t    *o;

	if (last < first || last - base > data_len)
		return LT21_CORRUPT(w, err, "string offsets %llu to %llu do not fit the %llu data bytes",
							(unsigned long long) first, (unsigned long long) last, (unsigned long long) data_len);
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	LT_TRY(lt_array_reserve_data(dst, (int64_t) lt_fsst_max_decoded(last - first) +
								 (dst->room ? (int64_t) (n + 1) * LT_ARRAY_ROOM_MAX + 8 : 0), err));
	o = dst->offsets + dst->length;
	at = dst->data_len;
	out0 = op = dst->data + at;
	lo = lo < n ? lo : n;
	hi = hi < lo ? lo : hi < n ? hi : n;
	/* every decoded string lies in [first, last]: one look for an escape there spares each a check */
	noesc = full && !lt_fsst_has_escape(data + (first - base), last - first);
#define FSST_RUN(OW, ROOM, I0, I1, DECODE, FULL, NOESC) \
	fsst_run(offs, OW, I0, I1, &prev, last, data, data_len, base, fsst, DECODE, FULL, NOESC, ROOM, dst->data, op, o, &bad, &dirty)
#define FSST_RUNS(OW, ROOM) \
	do { \
		op = FSST_RUN(OW, ROOM, 1, lo, false, false, false); \
		if (op && noesc) \
			op = FSST_RUN(OW, ROOM, lo + 1, hi, true, true, true); \
		else if (op && full) \
			op = FSST_RUN(OW, ROOM, lo + 1, hi, true, true, false); \
		else if (op) \
			op = FSST_RUN(OW, ROOM, lo + 1, hi, true, false, false); \
		if (op) \
			op = FSST_RUN(OW, ROOM, hi + 1, n, false, false, false); \
	} while (0)
	if (ow == 4 && dst->room)
		FSST_RUNS(4, true);
	else if (ow == 4)
		FSST_RUNS(4, false);
	else if (dst->room)
		FSST_RUNS(8, true);
	else
		FSST_RUNS(8, false);
#undef FSST_RUN
#undef FSST_RUNS
	if (op == NULL)
	{
		uint64_t	cur = ow == 4 ? (uint64_t) lt_le32(offs + bad * 4) : lt_le64(offs + bad * 8);

		if (cur < prev || cur > last)
			return LT21_CORRUPT(w, err, "string offsets decrease at %llu: %llu after %llu, %llu last",
								(unsigned long long) bad, (unsigned long long) cur, (unsigned long long) prev,
								(unsigned long long) last);
		return LT21_CORRUPT(w, err, "bad FSST code in string %llu", (unsigned long long) (bad - 1));
	}
	/*
	 * No code of a symbol outside plain ASCII in the chunk and no such escaped byte (the strings
	 * outside (lo, hi] are empty): the values appended are plain ASCII
	 */
	if (dst->room && full && !dirty && lt_fsst_ascii_codes(fsst, data + (first - base), last - first))
	{
		if (dst->ascii_end != at)
			dst->ascii_start = at;
		dst->ascii_end = at + (op - out0);
	}
	dst->data_len = at + (op - out0);
	if (dst->validity)
		memset(dst->validity + dst->length, 1, n);
	dst->length += (int64_t) n;
	return LT_OK;
}

/*
 * Append n strings: string i is data[off[i] - base, off[i+1] - base), where
 * the n+1 offsets are `ow`-byte LE integers at `offs`.
 */
static lt_code
append_strings(const lt21_where *w, lt_array *dst, const uint8_t *offs, unsigned ow, uint64_t n,
			   const uint8_t *data, uint64_t data_len, uint64_t base, const lt_fsst_table *fsst,
			   uint64_t lo, uint64_t hi, lt_error *err)
{
	uint64_t	prev,
				first,
				last;
	int64_t    *o;
	int64_t		start;

#define OFF(i) (ow == 4 ? (uint64_t) lt_le32(offs + (uint64_t) (i) * 4) : lt_le64(offs + (uint64_t) (i) * 8))
	if (hi - lo < n && lo < hi && hi <= n)
	{
		/*
		 * A few strings of the chunk (a point lookup): only their offsets are read and checked, the
		 * others are appended empty, as the FSST path below leaves them
		 */
		LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
		o = dst->offsets + dst->length;
		if (dst->room)
			LT_TRY(lt_array_reserve_data(dst, (int64_t) (n + 1) * LT_ARRAY_ROOM_MAX + 8, err));
		for (uint64_t i = 1; i <= lo; i++)
		{
			if (dst->room)
				dst->data_len = lt_array_room_open(dst->data, dst->data + dst->data_len) - dst->data;
			o[i] = dst->data_len;
		}
		prev = OFF(lo);
		if (prev < base)
			return LT21_CORRUPT(w, err, "string offset %llu points before the data at %llu",
								(unsigned long long) prev, (unsigned long long) base);
		for (uint64_t i = lo + 1; i <= hi; i++)
		{
			uint64_t	cur = OFF(i);
			int64_t		got;

			if (cur < prev)
				return LT21_CORRUPT(w, err, "string offsets decrease at %llu: %llu < %llu",
									(unsigned long long) i, (unsigned long long) cur, (unsigned long long) prev);
			if (cur - base > data_len)
				return LT21_CORRUPT(w, err, "string offset %llu is past the %llu data bytes",
									(unsigned long long) cur, (unsigned long long) data_len);
			LT_TRY(lt_array_reserve_data(dst, (int64_t) (fsst ? lt_fsst_max_decoded(cur - prev) : cur - prev) +
										 (dst->room ? LT_ARRAY_ROOM_MAX + 8 : 0), err));
			if (dst->room)
				dst->data_len = lt_array_room_open(dst->data, dst->data + dst->data_len) - dst->data;
			if (fsst)
				got = lt_fsst_decode_in(fsst, data + (prev - base), cur - prev, data + data_len,
										dst->data + dst->data_len);
			else
			{
				memcpy(dst->data + dst->data_len, data + (prev - base), cur - prev);
				got = (int64_t) (cur - prev);
			}
			if (got < 0)
				return LT21_CORRUPT(w, err, "bad FSST code in string %llu", (unsigned long long) (i - 1));
			dst->data_len += got;
			o[i] = dst->data_len;
			prev = cur;
		}
		if (dst->room)
			LT_TRY(lt_array_reserve_data(dst, (int64_t) (n + 1) * LT_ARRAY_ROOM_MAX + 8, err));
		for (uint64_t i = hi + 1; i <= n; i++)
		{
			if (dst->room)
				dst->data_len = lt_array_room_open(dst->data, dst->data + dst->data_len) - dst->data;
			o[i] = dst->data_len;
		}
		if (dst->validity)
			memset(dst->validity + dst->length, 1, n);
		dst->length += (int64_t) n;
		return LT_OK;
	}
	first = prev = OFF(0);
	if (first < base)
		return LT21_CORRUPT(w, err, "string offset %llu points before the data at %llu",
							(unsigned long long) first, (unsigned long long) base);
	if (fsst)
		return append_fsst(w, dst, offs, ow, n, data, data_len, base, fsst, lo, hi, err);
	for (uint64_t i = 1; i <= n; i++)
	{
		uint64_t	cur = OFF(i);

		if (cur < prev)
			return LT21_CORRUPT(w, err, "string offsets decrease at %llu: %llu < %llu",
								(unsigned long long) i, (unsigned long long) cur, (unsigned long long) prev);
		prev = cur;
	}
	last = prev;
	if (last - base > data_len)
		return LT21_CORRUPT(w, err, "string offset %llu is past the %llu data bytes",
							(unsigned long long) last, (unsigned long long) data_len);
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	o = dst->offsets + dst->length;
	start = o[0];
	if (dst->room)
	{
		/* value by value, each after its room */
		uint8_t    *p;

		LT_TRY(lt_array_reserve_data(dst, (int64_t) (last - first) + (int64_t) (n + 1) * LT_ARRAY_ROOM_MAX + 8, err));
		p = dst->data + dst->data_len;
		prev = first;
		for (uint64_t i = 1; i <= n; i++)
		{
			uint64_t	cur = OFF(i);

			p = lt_array_room_open(dst->data, p);
			memcpy(p, data + (prev - base), cur - prev);
			p += cur - prev;
			o[i] = p - dst->data;
			prev = cur;
		}
		dst->data_len = p - dst->data;
	}
	else
	{
		uint64_t	bytes = last - first;

		LT_TRY(lt_array_reserve_data(dst, (int64_t) bytes, err));
		memcpy(dst->data + dst->data_len, data + (first - base), bytes);
		dst->data_len += (int64_t) bytes;
		if (ow == 4)
			for (uint64_t i = 1; i <= n; i++)
				o[i] = start + (int64_t) (lt_le32(offs + i * 4) - first);
		else
			for (uint64_t i = 1; i <= n; i++)
				o[i] = start + (int64_t) (lt_le64(offs + i * 8) - first);
	}
#undef OFF
	if (dst->validity)
		memset(dst->validity + dst->length, 1, n);
	dst->length += (int64_t) n;
	return LT_OK;
}

static lt_code
offset_width(const lt21_where *w, const enc_t *e, unsigned *ow, lt_error *err)
{
	uint64_t	bits;

	if (e->variable->values)
		return LT21_UNSUPPORTED(w, err, "compressed variable-width data buffers");
	LT_TRY(flat_bits(w, e->variable->offsets, &bits, err));
	if (bits != 32 && bits != 64)
		return LT21_CORRUPT(w, err, "string offsets of %llu bits", (unsigned long long) bits);
	*ow = (unsigned) (bits / 8);
	return LT_OK;
}

static lt_code
mb_var(const lt21_where *w, const enc_t *e, int nbuf, const uint8_t *const *bp, const uint64_t *bl,
	   uint64_t n, uint64_t lo, uint64_t hi, lt_array *dst, const lt_fsst_table *fsst, lt_fsst_cache *cache,
	   int depth, lt_error *err)
{
	if (depth > MAX_NESTING)
		return LT21_CORRUPT(w, err, "value encodings nested too deeply");
	switch (enc_case(e))
	{
		case ENC_VARIABLE:
			{
				unsigned	ow = 4;

				LT_TRY(offset_width(w, e, &ow, err));
				if (nbuf != 1)
					return LT21_CORRUPT(w, err, "variable-width values in %d buffers", nbuf);
				if ((n + 1) * ow > bl[0])
					return LT21_CORRUPT(w, err, "chunk of %llu bytes is too short for %llu string offsets",
										(unsigned long long) bl[0], (unsigned long long) n + 1);
				/* offsets count from the start of the chunk buffer */
				return append_strings(w, dst, bp[0], ow, n, bp[0], bl[0], 0, fsst, lo, hi, err);
			}
		case ENC_FSST:
			{
				lt_fsst_table *t;
				const lt_fsst_table *ct;
				lt_code		rc;

				if (fsst)
					return LT21_CORRUPT(w, err, "FSST inside FSST");
				if (cache)
				{
					LT_TRY(lt_fsst_parse_cached(cache, e->fsst->symbol_table.data, e->fsst->symbol_table.len, &ct,
												w->path, err));
					return mb_var(w, e->fsst->values, nbuf, bp, bl, n, lo, hi, dst, ct, NULL, depth + 1, err);
				}
				t = lt_malloc(sizeof(*t));
				if (!t)
					return lt_nomem(err);
				rc = lt_fsst_parse(e->fsst->symbol_table.data, e->fsst->symbol_table.len, t, w->path, err);
				if (rc == LT_OK)
					rc = mb_var(w, e->fsst->values, nbuf, bp, bl, n, lo, hi, dst, t, NULL, depth + 1, err);
				lt_free(t);
				return rc;
			}
		case ENC_GENERAL:
			{
				const uint8_t *nbp[MAX_CHUNK_BUFFERS];
				uint64_t	nbl[MAX_CHUNK_BUFFERS];
				uint8_t    *buf;
				lt_code		rc;

				LT_TRY(inflate_first(w, e, nbuf, bp, bl, nbp, nbl, &buf, err));
				rc = mb_var(w, e->general->values, nbuf, nbp, nbl, n, lo, hi, dst, fsst, cache, depth + 1, err);
				lt_free(buf);
				return rc;
			}
		case 0:
			return LT21_CORRUPT(w, err, "missing value encoding");
		default:
			return LT21_UNSUPPORTED(w, err, "value encoding %d for variable-width values", enc_case(e));
	}
}

/* Block form: [u32|u64 bits_per_offset][u32|u64 bytes_start][n+1 offsets][bytes]. */
static lt_code
block_var(const lt21_where *w, const enc_t *e, const uint8_t *p, uint64_t len, uint64_t n,
		  lt_array *dst, int depth, lt_error *err)
{
	if (depth > MAX_NESTING)
		return LT21_CORRUPT(w, err, "block encodings nested too deeply");
	switch (enc_case(e))
	{
		case ENC_VARIABLE:
			{
				unsigned	ow = 4;
				uint64_t	start;

				if (len < 8)
					return LT21_CORRUPT(w, err, "variable block of %llu bytes", (unsigned long long) len);
				if (lt_le32(p) == 32)
				{
					ow = 4;
					start = lt_le32(p + 4);
				}
				else if (lt_le32(p) == 64 && len >= 16 && lt_le32(p + 4) == 0)
				{
					ow = 8;
					start = lt_le64(p + 8);
				}
				else
					return LT21_CORRUPT(w, err, "variable block with offset width 0x%08x", lt_le32(p));
				if (start > len || start < 2 * ow || n >= len || (n + 1) * ow > start - 2 * ow)
					return LT21_CORRUPT(w, err, "variable block data at %llu, %llu offsets, %llu bytes",
										(unsigned long long) start, (unsigned long long) n + 1,
										(unsigned long long) len);
				return append_strings(w, dst, p + 2 * ow, ow, n, p + start, len - start, 0, NULL, 0, n, err);
			}
		case ENC_GENERAL:
			{
				uint8_t    *buf;
				uint64_t	blen;
				lt_code		rc;

				LT_TRY(lt21_inflate(w, e->general->compression, p, len, &buf, &blen, err));
				rc = block_var(w, e->general->values, buf, blen, n, dst, depth + 1, err);
				lt_free(buf);
				return rc;
			}
		case 0:
			return LT21_CORRUPT(w, err, "missing block encoding");
		default:
			return LT21_UNSUPPORTED(w, err, "block encoding %d for variable-width values", enc_case(e));
	}
}

/* ---------------------------------------------------------------------- */
/* values of the leaf's type */

/* Fixed-width items appended to a (non-FSL) array. */
static lt_code
mb_fixed_into(const lt21_where *w, const enc_t *e, int nbuf, const uint8_t *const *bp,
			  const uint64_t *bl, uint64_t n, lt_array *dst, lt_error *err)
{
	unsigned	width = (unsigned) lt21_leaf_width(dst->field);

	if (width == 0)
		return LT21_UNSUPPORTED(w, err, "values of type %s", lt_type_name(dst->field->type));
	if (n == 0)
		return LT_OK;
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	LT_TRY(mb_fixed(w, e, nbuf, bp, bl, n, width, dst->values + dst->length * width, 0, err));
	if (dst->validity)
		memset(dst->validity + dst->length, 1, n);
	dst->length += (int64_t) n;
	return LT_OK;
}

/*
 * A lone item (hi = lo + 1) of n fixed-width items appended to dst, for the encodings where one
 * value can be found without the rest (flat, inline bitpacking, RLE): one slot is appended, item
 * lo's (not n: a chunk of many thousand RLE values made every point lookup allocate and free a
 * block big enough for glibc to grow and trim the heap).  *done false: another encoding, nothing
 * appended (decode them all).
 */
static lt_code
mb_fixed_one(const lt21_where *w, const enc_t *e, int nbuf, const uint8_t *const *bp, const uint64_t *bl,
			 uint64_t n, uint64_t lo, lt_array *dst, bool *done, lt_error *err)
{
	unsigned	width = (unsigned) lt21_leaf_width(dst->field);
	uint64_t	bits;
	uint8_t    *out;

	*done = false;
	if (width == 0 || lo >= n)
		return LT_OK;
	if (enc_case(e) == ENC_RLE && nbuf == 2)
	{
		uint64_t	lbits,
					at = 0,
					r;

		/* the run that holds slot lo: one pass over the run lengths, no value written but lo's */
		LT_TRY(flat_bits(w, e->rle->values, &bits, err));
		LT_TRY(flat_bits(w, e->rle->run_lengths, &lbits, err));
		if (lbits != 8 || bits != (uint64_t) width * 8 || bl[0] % width != 0 || bl[0] / width != bl[1])
			return LT_OK;		/* the whole decode says what is wrong */
		for (r = 0; r < bl[1]; r++)
		{
			if (bp[1][r] == 0)
				return LT_OK;
			if (lo < at + bp[1][r])
				break;
			at += bp[1][r];
		}
		if (r == bl[1])
			return LT_OK;
		LT_TRY(lt_array_reserve(dst, 1, err));
		memcpy(dst->values + dst->length * width, bp[0] + r * width, width);
		if (dst->validity)
			dst->validity[dst->length] = 1;
		dst->length += 1;
		*done = true;
		return LT_OK;
	}
	if (nbuf != 1)
		return LT_OK;
	if (enc_case(e) == ENC_FLAT)
	{
		LT_TRY(flat_bits(w, e, &bits, err));
		if (bits != (uint64_t) width * 8)
			return LT_OK;		/* bool bitmaps and bad widths: the whole decode says */
		if (n * width > bl[0])
			return LT21_CORRUPT(w, err, "flat buffer of %llu bytes holds fewer than %llu values of %u bytes",
								(unsigned long long) bl[0], (unsigned long long) n, width);
	}
	else if (enc_case(e) != ENC_INLINE_BP || e->inline_bitpacking->values)
		return LT_OK;
	LT_TRY(lt_array_reserve(dst, 1, err));
	out = dst->values + dst->length * width;
	if (enc_case(e) == ENC_FLAT)
		memcpy(out, bp[0] + lo * width, width);
	else
		LT_TRY(fixed_inline_bp(w, e->inline_bitpacking->uncompressed_bits_per_value, bp[0], bl[0], n,
							   width, lo, out, err));
	if (dst->validity)
		dst->validity[dst->length] = 1;
	dst->length += 1;
	*done = true;
	return LT_OK;
}

/* FSL values: [validity bitmap of each layer that has one] then the items. */
static lt_code
mb_fsl(const lt21_where *w, const enc_t *e, int nbuf, const uint8_t *const *bp, const uint64_t *bl,
	   uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	const Lt__Enc21__FixedSizeList *fsl;
	lt_array   *child;
	uint64_t	dim,
				total;
	int64_t		base;
	const uint8_t *bitmap = NULL;

	if (depth > MAX_NESTING)
		return LT21_CORRUPT(w, err, "fixed-size lists nested too deeply");
	if (enc_case(e) != ENC_FSL)
		return LT21_UNSUPPORTED(w, err, "value encoding %d for a fixed-size list", enc_case(e));
	fsl = e->fixed_size_list;
	child = dst->n_children == 1 ? dst->children[0] : NULL;
	dim = fsl->items_per_value;
	if (!child || dim != (uint64_t) dst->field->fixed_size)
		return LT21_CORRUPT(w, err, "fixed-size list of %llu items where the schema says %d",
							(unsigned long long) dim, dst->field->fixed_size);
	if (!lt_mul_ok(n, dim, &total) || total > LT21_MAX_PAGE_ITEMS)
		return LT21_CORRUPT(w, err, "%llu lists of %llu items are too many",
							(unsigned long long) n, (unsigned long long) dim);
	if (fsl->has_validity)
	{
		if (nbuf < 2 || bl[0] < (total + 7) / 8)
			return LT21_CORRUPT(w, err, "fixed-size list validity of %llu bytes for %llu items",
								nbuf < 1 ? 0ULL : (unsigned long long) bl[0], (unsigned long long) total);
		bitmap = bp[0];
		bp++;
		bl++;
		nbuf--;
	}
	base = child->length;
	if (child->field->type == LT_TYPE_FIXED_LIST)
		LT_TRY(mb_fsl(w, fsl->values, nbuf, bp, bl, total, child, depth + 1, err));
	else
		LT_TRY(mb_fixed_into(w, fsl->values, nbuf, bp, bl, total, child, err));
	if (bitmap)
	{
		int			width = lt21_leaf_width(child->field);
		int64_t		nulls = 0;

		LT_TRY(lt_array_ensure_validity(child, err));
		for (uint64_t i = 0; i < total; i++)
		{
			uint8_t		v = (bitmap[i >> 3] >> (i & 7)) & 1;

			child->validity[base + i] = v;
			if (!v)
			{
				nulls++;
				if (width > 0)
					memset(child->values + (base + (int64_t) i) * width, 0, width);
			}
		}
		child->null_count += nulls;
	}
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	if (dst->validity)
		memset(dst->validity + dst->length, 1, n);
	dst->length += (int64_t) n;
	return LT_OK;
}

/*
 * PackedStruct: rows of the children's fixed-width values side by side
 * (bits_per_value[i] each, whole bytes), encoded as one fixed-width value.
 */
static lt_code
mb_packed(const lt21_where *w, const enc_t *e, int nbuf, const uint8_t *const *bp, const uint64_t *bl,
		  uint64_t n, lt_array *dst, lt_error *err)
{
	const Lt__Enc21__PackedStruct *ps;
	uint64_t	off[LT21_MAX_PACKED_FIELDS];
	uint64_t	row = 0;
	const uint8_t *src;
	uint8_t    *tmp = NULL;
	uint64_t	bytes;
	lt_code		rc = LT_OK;

	if (enc_case(e) != ENC_PACKED)
		return LT21_UNSUPPORTED(w, err, "value encoding %d for a struct", enc_case(e));
	ps = e->packed_struct;
	if (ps->n_bits_per_value != (size_t) dst->n_children || dst->n_children > LT21_MAX_PACKED_FIELDS)
		return LT21_CORRUPT(w, err, "packed struct of %zu fields where the schema has %d",
							ps->n_bits_per_value, dst->n_children);
	for (int i = 0; i < dst->n_children; i++)
	{
		const lt_array *c = dst->children[i];
		int			width = c ? lt21_leaf_width(c->field) : 0;

		/* the writer packs whole bytes of plain fixed-width children only */
		if (width == 0 || c->field->type == LT_TYPE_BOOL)
			return LT21_UNSUPPORTED(w, err, "packed struct field \"%s\" of type %s",
									c ? c->field->name : "?", c ? lt_type_name(c->field->type) : "?");
		if (ps->bits_per_value[i] != (uint64_t) width * 8)
			return LT21_CORRUPT(w, err, "packed struct field \"%s\" of %llu bits for type %s",
								c->field->name, (unsigned long long) ps->bits_per_value[i],
								lt_type_name(c->field->type));
		off[i] = row;
		row += (uint64_t) width;
	}
	if (!lt_mul_ok(n, row, &bytes) || bytes > ((uint64_t) 1 << 31))
		return LT21_CORRUPT(w, err, "%llu packed rows of %llu bytes are too many",
							(unsigned long long) n, (unsigned long long) row);
	if (n == 0)
		return LT_OK;
	if (enc_case(ps->values) == ENC_FLAT && !ps->values->flat->data)
	{
		/* plain rows: read them in place */
		if (nbuf != 1)
			return LT21_CORRUPT(w, err, "packed struct values in %d buffers", nbuf);
		if (ps->values->flat->bits_per_value != (uint64_t) row * 8)
			return LT21_CORRUPT(w, err, "packed rows of %llu bits, the fields add up to %llu",
								(unsigned long long) ps->values->flat->bits_per_value,
								(unsigned long long) row * 8);
		if (bytes > bl[0])
			return LT21_CORRUPT(w, err, "packed buffer of %llu bytes holds fewer than %llu rows of %llu bytes",
								(unsigned long long) bl[0], (unsigned long long) n, (unsigned long long) row);
		src = bp[0];
	}
	else
	{
		tmp = lt_malloc(bytes);
		if (!tmp)
			return lt_nomem(err);
		rc = mb_fixed(w, ps->values, nbuf, bp, bl, n, (unsigned) row, tmp, 1, err);
		src = tmp;
	}
	for (int i = 0; rc == LT_OK && i < dst->n_children; i++)
	{
		lt_array   *c = dst->children[i];
		unsigned	width = (unsigned) lt21_leaf_width(c->field);
		uint8_t    *out;

		rc = lt_array_reserve(c, (int64_t) n, err);
		if (rc != LT_OK)
			break;
		out = c->values + c->length * width;
		for (uint64_t r = 0; r < n; r++)
			memcpy(out + r * width, src + r * row + off[i], width);
		if (c->validity)
			memset(c->validity + c->length, 1, n);
		c->length += (int64_t) n;
	}
	lt_free(tmp);
	LT_TRY(rc);
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	if (dst->validity)
		memset(dst->validity + dst->length, 1, n);
	dst->length += (int64_t) n;
	return LT_OK;
}

lt_code
lt21_mb_decode_values(const lt21_where *w, const enc_t *enc, int nbuf, const uint8_t *const *bp,
					  const uint64_t *bl, uint64_t n, lt_array *dst, lt_fsst_cache *fsst_cache, lt_error *err)
{
	return lt21_mb_decode_values_span(w, enc, nbuf, bp, bl, n, 0, n, dst, fsst_cache, err);
}

lt_code
lt21_mb_decode_values_span(const lt21_where *w, const enc_t *enc, int nbuf, const uint8_t *const *bp,
						   const uint64_t *bl, uint64_t n, uint64_t lo, uint64_t hi, lt_array *dst,
						   lt_fsst_cache *fsst_cache, lt_error *err)
{
	lt_type_id	t = dst->field->type;

	if (lt_type_is_var_width(t))
		return mb_var(w, enc, nbuf, bp, bl, n, lo, hi, dst, NULL, fsst_cache, 0, err);
	if (t == LT_TYPE_FIXED_LIST)
		return mb_fsl(w, enc, nbuf, bp, bl, n, dst, 0, err);
	if (t == LT_TYPE_STRUCT)
		return mb_packed(w, enc, nbuf, bp, bl, n, dst, err);
	if (hi == lo + 1 && n > 1)
	{
		bool		done;

		LT_TRY(mb_fixed_one(w, enc, nbuf, bp, bl, n, lo, dst, &done, err));
		if (done)
			return LT_OK;
	}
	return mb_fixed_into(w, enc, nbuf, bp, bl, n, dst, err);
}

lt_code
lt21_block_decode_values(const lt21_where *w, const enc_t *enc, const uint8_t *p, uint64_t len,
						 uint64_t n, lt_array *dst, lt_error *err)
{
	unsigned	width;

	if (lt_type_is_var_width(dst->field->type))
		return block_var(w, enc, p, len, n, dst, 0, err);
	width = (unsigned) lt21_leaf_width(dst->field);
	if (width == 0)
		return LT21_UNSUPPORTED(w, err, "block values of type %s", lt_type_name(dst->field->type));
	if (n == 0)
		return LT_OK;
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	LT_TRY(block_fixed(w, enc, p, len, n, width, dst->values + dst->length * width, 0, err));
	if (dst->validity)
		memset(dst->validity + dst->length, 1, n);
	dst->length += (int64_t) n;
	return LT_OK;
}
