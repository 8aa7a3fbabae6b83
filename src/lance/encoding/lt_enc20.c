/*
 * lt_enc20.c — decoding Lance 2.0 page encodings from in-memory buffers.
 *
 * A 2.0 page is an ArrayEncoding tree over the page's buffers:
 *   Nullable{no_nulls | some_nulls{validity, values} | all_nulls}
 *   Flat{bits, buffer, compression}   bits 1 = LSB bitmap, else bits/8 bytes
 *   Bitpacked{compressed, uncompressed bits, signed}   LSB-first bit stream
 *   Constant{value}, FixedSizeList{dimension, items}
 *   Binary{indices: end offsets, bytes, null_adjustment}
 *   Dictionary{indices, items, num_dictionary_items}   index 0 = null
 *   FixedSizeBinary{bytes, byte_width}, PackedStruct{inner, buffer}
 *   List{offsets, null_offset_adjustment, num_items} (offsets pages only)
 * Every read is bounds-checked against the buffer it comes from.
 */
#include "encoding/lt_enc20.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "encoding/lt_compress.h"
#include "proto/lt_enc20.pb-c.h"
#include "encoding/lt_fastlanes.h"
#include "encoding/lt_fsst.h"

struct lt_enc20_cache_entry
{
	const void *key;
	uint8_t    *buf;
	uint64_t	len;
	lt_array   *arr;
};

/* Largest value width a Flat may claim (fixed_size_binary goes up to 2^30 bytes). */
#define MAX_FLAT_BITS ((uint64_t) 1 << 34)

static lt_code decode(lt_enc20_page *pg, const Lt__Enc20__ArrayEncoding *enc, const lt_field *field,
					  uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err);

/* Encoding trees nest a few levels; a cap stops hostile recursion. */
#define MAX_DEPTH 32

static lt_code pg_error(const lt_enc20_page *pg, lt_error *err, lt_code code, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));

static lt_code
pg_error(const lt_enc20_page *pg, lt_error *err, lt_code code, const char *fmt,...)
{
	char		msg[LT_ERROR_MSG_LEN / 2];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return lt_error_set(err, code, "%s: column %d page %u: %s", pg->path ? pg->path : "?",
						(int) pg->column, pg->page, msg);
}

#define pg_corrupt(pg, err, ...) pg_error((pg), (err), LT_ECORRUPT, __VA_ARGS__)

void
lt_enc20_page_reset(lt_enc20_page *pg)
{
	int			i;

	for (i = 0; i < pg->n_cache; i++)
	{
		lt_free(pg->cache[i].buf);
		lt_array_free(pg->cache[i].arr);
	}
	lt_free(pg->cache);
	pg->cache = NULL;
	pg->n_cache = pg->cap_cache = 0;
}

static lt_enc20_cache_entry *
cache_find(lt_enc20_page *pg, const void *key)
{
	int			i;

	for (i = 0; i < pg->n_cache; i++)
		if (pg->cache[i].key == key)
			return &pg->cache[i];
	return NULL;
}

static lt_enc20_cache_entry *
cache_add(lt_enc20_page *pg, const void *key)
{
	if (pg->n_cache == pg->cap_cache)
	{
		int			cap = pg->cap_cache ? pg->cap_cache * 2 : 4;
		lt_enc20_cache_entry *c = lt_realloc(pg->cache, cap * sizeof(*c));

		if (!c)
			return NULL;
		pg->cache = c;
		pg->cap_cache = cap;
	}
	memset(&pg->cache[pg->n_cache], 0, sizeof(pg->cache[0]));
	pg->cache[pg->n_cache].key = key;
	return &pg->cache[pg->n_cache++];
}

/* --- buffers ------------------------------------------------------------ */

static lt_code
get_buf(lt_enc20_page *pg, const Lt__Enc20__Buffer *b, const uint8_t **p, uint64_t *len, lt_error *err)
{
	uint32_t	idx;
	int			kind;

	if (!b)
		return pg_corrupt(pg, err, "encoding names no buffer");
	idx = b->has_buffer_index ? b->buffer_index : 0;
	kind = b->has_buffer_type ? (int) b->buffer_type : 0;
	if (kind == LT__ENC20__BUFFER__KIND__PAGE)
	{
		if (idx >= pg->n_bufs)
			return pg_corrupt(pg, err, "page buffer %u does not exist (the page has %u)", idx, pg->n_bufs);
		*p = pg->bufs[idx];
		*len = pg->lens[idx];
		return LT_OK;
	}
	if ((kind == LT__ENC20__BUFFER__KIND__COLUMN || kind == LT__ENC20__BUFFER__KIND__FILE) && pg->resolve)
		return pg->resolve(pg->resolve_arg, kind, idx, p, len, err);
	return pg_corrupt(pg, err, "buffer of kind %d index %u cannot be resolved", kind, idx);
}

/* A Flat's bytes, decompressed (and cached) when the Flat says so. */
static lt_code
flat_data(lt_enc20_page *pg, const Lt__Enc20__Flat *flat, const uint8_t **p, uint64_t *len, lt_error *err)
{
	const char *scheme = flat->compression ? flat->compression->scheme : NULL;
	lt_compression c;
	lt_enc20_cache_entry *e;
	const uint8_t *raw;
	uint64_t	raw_len;
	char		what[128];

	LT_TRY(get_buf(pg, flat->buffer, &raw, &raw_len, err));
	if (!scheme || scheme[0] == '\0' || strcmp(scheme, "none") == 0)
	{
		*p = raw;
		*len = raw_len;
		return LT_OK;
	}
	if (strcmp(scheme, "zstd") == 0)
		c = LT_COMP_ZSTD;
	else if (strcmp(scheme, "lz4") == 0)
		c = LT_COMP_LZ4;
	else
		return pg_error(pg, err, LT_EUNSUPPORTED, "compression scheme \"%.40s\"", scheme);
	e = cache_find(pg, flat);
	if (!e)
	{
		uint8_t    *out;
		uint64_t	out_len;

		snprintf(what, sizeof(what), "%s: column %d page %u: flat buffer", pg->path ? pg->path : "?",
				 (int) pg->column, pg->page);
		LT_TRY(lt_decompress(c, raw, raw_len, &out, &out_len, what, err));
		e = cache_add(pg, flat);
		if (!e)
		{
			lt_free(out);
			return lt_nomem(err);
		}
		e->buf = out;
		e->len = out_len;
	}
	*p = e->buf;
	*len = e->len;
	return LT_OK;
}

/* --- fixed-width values ------------------------------------------------- */

/* Read a cb-bit unsigned value at bit offset o; the caller has bounds-checked. */
static inline uint64_t
read_bits(const uint8_t *p, uint64_t o, unsigned cb)
{
	uint64_t	v = 0;
	unsigned	got = 0;
	uint64_t	byte = o >> 3;
	unsigned	sh = (unsigned) (o & 7);

	while (got < cb)
	{
		v |= ((uint64_t) (p[byte] >> sh)) << got;
		got += 8 - sh;
		sh = 0;
		byte++;
	}
	return cb == 64 ? v : v & ((((uint64_t) 1) << cb) - 1);
}

static inline void
put_le(uint8_t *out, uint64_t v, unsigned bytes)
{
	unsigned	i;

	for (i = 0; i < bytes; i++)
		out[i] = (uint8_t) (v >> (8 * i));
}

/* Unpack n values of cb bits starting at value `skip` into outw-byte slots. */
static lt_code
unpack_bits(lt_enc20_page *pg, const uint8_t *p, uint64_t len, uint64_t skip, uint64_t n,
			unsigned cb, bool is_signed, unsigned outw, uint8_t *out, lt_error *err)
{
	uint64_t	end_bit;
	uint64_t	i;

	if (cb == 0 || cb > 64 || cb > outw * 8)
		return pg_corrupt(pg, err, "%u-bit values do not fit %u-byte slots", cb, outw);
	if (!lt_add_ok(skip, n, &end_bit) || !lt_mul_ok(end_bit, cb, &end_bit) ||
		(end_bit + 7) / 8 > len)
		return pg_corrupt(pg, err, "bit-packed buffer of %llu bytes is too short for values [%llu, +%llu) of %u bits",
						  (unsigned long long) len, (unsigned long long) skip, (unsigned long long) n, cb);
	for (i = 0; i < n; i++)
	{
		uint64_t	v = read_bits(p, (skip + i) * cb, cb);

		if (is_signed && cb < 64 && (v >> (cb - 1)) & 1)
			v |= ~((((uint64_t) 1) << cb) - 1);
		put_le(out + i * outw, v, outw);
	}
	return LT_OK;
}

/* Bits per value a fixed-width encoding yields, or 0 when enc is not one. */
static uint64_t
fixed_bits(const Lt__Enc20__ArrayEncoding *enc, int depth)
{
	if (!enc || depth > MAX_DEPTH)
		return 0;
	switch (enc->array_encoding_case)
	{
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT:
			return enc->flat->bits_per_value;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED:
			return enc->bitpacked->uncompressed_bits_per_value;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG:
			return enc->bitpacked_for_non_neg->uncompressed_bits_per_value;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT:
			return enc->constant->has_value ? (uint64_t) enc->constant->value.len * 8 : 0;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE:
			{
				const Lt__Enc20__Nullable *nl = enc->nullable;

				if (nl->nullability_case == LT__ENC20__NULLABLE__NULLABILITY_NO_NULLS)
					return nl->no_nulls ? fixed_bits(nl->no_nulls->values, depth + 1) : 0;
				if (nl->nullability_case == LT__ENC20__NULLABLE__NULLABILITY_SOME_NULLS)
					return nl->some_nulls ? fixed_bits(nl->some_nulls->values, depth + 1) : 0;
				return 0;
			}
		default:
			return 0;
	}
}

/*
 * Decode values [skip, skip+n) of a fixed-width encoding into out, each slot
 * want_bits/8 bytes wide (want_bits 1: one byte 0/1 a slot).  The encoding must
 * yield exactly want_bits per value.
 */
static lt_code
fixed_get(lt_enc20_page *pg, const Lt__Enc20__ArrayEncoding *enc, uint64_t skip, uint64_t n,
		  uint64_t want_bits, uint8_t *out, int depth, lt_error *err)
{
	unsigned	outw = want_bits == 1 ? 1 : (unsigned) (want_bits / 8);
	uint64_t	end;

	if (!enc)
		return pg_corrupt(pg, err, "missing value encoding");
	if (depth > MAX_DEPTH)
		return pg_corrupt(pg, err, "encoding nested too deeply");
	if (!lt_add_ok(skip, n, &end))
		return pg_corrupt(pg, err, "row range overflows");
	switch (enc->array_encoding_case)
	{
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT:
			{
				const Lt__Enc20__Flat *flat = enc->flat;
				uint64_t	bits = flat->bits_per_value;
				const uint8_t *p;
				uint64_t	len;
				uint64_t	i;

				LT_TRY(flat_data(pg, flat, &p, &len, err));
				if (bits == 1 && want_bits == 1)
				{
					if ((end + 7) / 8 > len)
						return pg_corrupt(pg, err, "bitmap of %llu bytes is too short for %llu values",
										  (unsigned long long) len, (unsigned long long) end);
					for (i = 0; i < n; i++)
						out[i] = (p[(skip + i) >> 3] >> ((skip + i) & 7)) & 1;
					return LT_OK;
				}
				if (bits == want_bits && bits % 8 == 0 && bits <= MAX_FLAT_BITS)
				{
					uint64_t	w = bits / 8;
					uint64_t	lo, hi;

					if (!lt_mul_ok(skip, w, &lo) || !lt_mul_ok(end, w, &hi) || hi > len)
						return pg_corrupt(pg, err, "flat buffer of %llu bytes is too short for values [%llu, %llu) of %llu bytes",
										  (unsigned long long) len, (unsigned long long) skip,
										  (unsigned long long) end, (unsigned long long) w);
					if (n)
						memcpy(out, p + lo, (size_t) (hi - lo));
					return LT_OK;
				}
				if (!(bits > 0 && bits < want_bits && (want_bits == 8 || want_bits == 16 ||
													  want_bits == 32 || want_bits == 64)))
					return pg_corrupt(pg, err, "flat values of %llu bits where %llu bits are expected",
									  (unsigned long long) bits, (unsigned long long) want_bits);
				/* odd widths: an unsigned LSB-first bit stream */
				return unpack_bits(pg, p, len, skip, n, (unsigned) bits, false, outw, out, err);
			}
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED:
			{
				const Lt__Enc20__Bitpacked *bp = enc->bitpacked;
				const uint8_t *p;
				uint64_t	len;

				if (bp->uncompressed_bits_per_value != want_bits || want_bits % 8 != 0 || want_bits > 64)
					return pg_corrupt(pg, err, "bitpacked to %llu bits where %llu bits are expected",
									  (unsigned long long) bp->uncompressed_bits_per_value,
									  (unsigned long long) want_bits);
				LT_TRY(get_buf(pg, bp->buffer, &p, &len, err));
				return unpack_bits(pg, p, len, skip, n, (unsigned) bp->compressed_bits_per_value,
								   bp->has_signed_ && bp->signed_, outw, out, err);
			}
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT:
			{
				const Lt__Enc20__Constant *c = enc->constant;
				uint64_t	i;

				if (!c->has_value || (uint64_t) c->value.len * 8 != want_bits || want_bits == 1)
				{
					/* a one-byte constant can also stand for a bool */
					if (want_bits == 1 && c->has_value && c->value.len == 1)
					{
						memset(out, c->value.data[0] ? 1 : 0, (size_t) n);
						return LT_OK;
					}
					return pg_corrupt(pg, err, "constant of %zu bytes where %llu bits are expected",
									  c->has_value ? c->value.len : 0, (unsigned long long) want_bits);
				}
				for (i = 0; i < n; i++)
					memcpy(out + i * outw, c->value.data, outw);
				return LT_OK;
			}
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE:
			{
				const Lt__Enc20__Nullable *nl = enc->nullable;
				uint8_t    *v;
				uint64_t	i;
				lt_code		rc;

				switch (nl->nullability_case)
				{
					case LT__ENC20__NULLABLE__NULLABILITY_NO_NULLS:
						return fixed_get(pg, nl->no_nulls->values, skip, n, want_bits, out, depth + 1, err);
					case LT__ENC20__NULLABLE__NULLABILITY_ALL_NULLS:
						memset(out, 0, (size_t) (n * outw));
						return LT_OK;
					case LT__ENC20__NULLABLE__NULLABILITY_SOME_NULLS:
						LT_TRY(fixed_get(pg, nl->some_nulls->values, skip, n, want_bits, out, depth + 1, err));
						v = lt_malloc(n ? n : 1);
						if (!v)
							return lt_nomem(err);
						rc = fixed_get(pg, nl->some_nulls->validity, skip, n, 1, v, depth + 1, err);
						for (i = 0; rc == LT_OK && i < n; i++)
							if (!v[i])
								memset(out + i * outw, 0, outw);
						lt_free(v);
						return rc;
					default:
						return pg_corrupt(pg, err, "nullable encoding without a case");
				}
			}
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG:
			{
				/* FastLanes blocks of 1024 values; the last block is padded */
				const Lt__Enc20__BitpackedForNonNeg *bp = enc->bitpacked_for_non_neg;
				uint64_t	ub = bp->uncompressed_bits_per_value;
				uint64_t	cb = bp->compressed_bits_per_value;
				const uint8_t *p;
				uint64_t	len,
							blk,
							chunk;
				uint8_t    *tmp;

				if (ub != want_bits || (ub != 8 && ub != 16 && ub != 32 && ub != 64) || cb > ub)
					return pg_corrupt(pg, err, "bitpacked (FastLanes) %llu-bit values of %llu bits where %llu bits are expected",
									  (unsigned long long) cb, (unsigned long long) ub,
									  (unsigned long long) want_bits);
				if (n == 0)
					return LT_OK;
				LT_TRY(get_buf(pg, bp->buffer, &p, &len, err));
				chunk = lt_fl_packed_bytes((unsigned) cb);
				if (((end - 1) / LT_FL_BLOCK + 1) * chunk > len)
					return pg_corrupt(pg, err, "bitpacked buffer of %llu bytes is too short for %llu values of %llu bits",
									  (unsigned long long) len, (unsigned long long) end, (unsigned long long) cb);
				tmp = lt_malloc(LT_FL_BLOCK * outw);
				if (!tmp)
					return lt_nomem(err);
				for (blk = skip / LT_FL_BLOCK; blk <= (end - 1) / LT_FL_BLOCK; blk++)
				{
					uint64_t	b0 = blk * LT_FL_BLOCK;
					uint64_t	lo = skip > b0 ? skip : b0;
					uint64_t	hi = end < b0 + LT_FL_BLOCK ? end : b0 + LT_FL_BLOCK;

					lt_fl_unpack((unsigned) ub, (unsigned) cb, p + blk * chunk, tmp);
					memcpy(out + (lo - skip) * outw, tmp + (lo - b0) * outw, (size_t) ((hi - lo) * outw));
				}
				lt_free(tmp);
				return LT_OK;
			}
		default:
			return pg_corrupt(pg, err, "encoding %d where fixed-width values are expected",
							  (int) enc->array_encoding_case);
	}
}

/* Decode n unsigned integers of any byte width into out (u64). */
static lt_code
uint_get(lt_enc20_page *pg, const Lt__Enc20__ArrayEncoding *enc, uint64_t skip, uint64_t n,
		 uint64_t *out, int depth, lt_error *err)
{
	uint64_t	bits = fixed_bits(enc, depth);
	uint8_t    *tmp;
	uint64_t	i;
	lt_code		rc;

	if (bits == 64)
	{
		LT_TRY(fixed_get(pg, enc, skip, n, 64, (uint8_t *) out, depth, err));
		for (i = 0; i < n; i++)
			out[i] = lt_le64((const uint8_t *) &out[i]);
		return LT_OK;
	}
	if (bits != 8 && bits != 16 && bits != 32)
		return pg_corrupt(pg, err, "integer indices of %llu bits", (unsigned long long) bits);
	tmp = lt_malloc(n * (bits / 8) + 1);
	if (!tmp)
		return lt_nomem(err);
	rc = fixed_get(pg, enc, skip, n, bits, tmp, depth, err);
	for (i = 0; rc == LT_OK && i < n; i++)
		out[i] = bits == 8 ? tmp[i] : bits == 16 ? lt_le16(tmp + 2 * i) : lt_le32(tmp + 4 * i);
	lt_free(tmp);
	return rc;
}

/* Byte range [lo, lo+len) of a bytes encoding (Flat of 8 bits, maybe compressed). */
static lt_code
bytes_range(lt_enc20_page *pg, const Lt__Enc20__ArrayEncoding *enc, uint64_t lo, uint64_t len,
			const uint8_t **out, int depth, lt_error *err)
{
	const uint8_t *p;
	uint64_t	blen;
	uint64_t	hi;

	if (!enc || depth > MAX_DEPTH)
		return pg_corrupt(pg, err, "missing bytes encoding");
	if (enc->array_encoding_case == LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE &&
		enc->nullable->nullability_case == LT__ENC20__NULLABLE__NULLABILITY_NO_NULLS)
		return bytes_range(pg, enc->nullable->no_nulls->values, lo, len, out, depth + 1, err);
	if (enc->array_encoding_case != LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT ||
		enc->flat->bits_per_value != 8)
		return pg_error(pg, err, LT_EUNSUPPORTED, "bytes stored with encoding %d",
						(int) enc->array_encoding_case);
	LT_TRY(flat_data(pg, enc->flat, &p, &blen, err));
	if (!lt_add_ok(lo, len, &hi) || hi > blen)
		return pg_corrupt(pg, err, "bytes [%llu, %llu) lie outside a buffer of %llu bytes",
						  (unsigned long long) lo, (unsigned long long) hi, (unsigned long long) blen);
	*out = p + lo;
	return LT_OK;
}

/* --- output helpers ----------------------------------------------------- */

/* Mark the n newest slots of dst valid (values already written). */
static void
finish_valid(lt_array *dst, uint64_t n)
{
	if (dst->validity)
		memset(dst->validity + dst->length, 1, (size_t) n);
	dst->length += (int64_t) n;
}

/* Clear the slots [first, first+n) whose v[i] is 0; null strings become empty. */
static lt_code
apply_validity(lt_array *dst, int64_t first, const uint8_t *v, uint64_t n, lt_error *err)
{
	lt_type_id	t = dst->field->type;
	int			width = dst->field->byte_width;
	uint64_t	i,
				nulls = 0;

	for (i = 0; i < n; i++)
		nulls += !v[i];
	if (nulls == 0)
		return LT_OK;
	LT_TRY(lt_array_ensure_validity(dst, err));
	for (i = 0; i < n; i++)
	{
		int64_t		s = first + (int64_t) i;

		if (v[i] || !dst->validity[s])
			continue;
		dst->validity[s] = 0;
		dst->null_count++;
		if (width > 0 && t != LT_TYPE_FIXED_LIST)
			memset(dst->values + s * width, 0, (size_t) width);
	}
	if (lt_type_is_var_width(t))
	{
		/* compact the bytes of the slots that became null */
		int64_t		cur = dst->offsets[first];
		int64_t		old_s = cur;

		for (i = 0; i < n; i++)
		{
			int64_t		s = first + (int64_t) i;
			int64_t		e = dst->offsets[s + 1];
			int64_t		len = dst->validity[s] ? e - old_s : 0;

			if (len > 0 && cur != old_s)
				memmove(dst->data + cur, dst->data + old_s, (size_t) len);
			cur += len;
			old_s = e;
			dst->offsets[s + 1] = cur;
		}
		dst->data_len = cur;
	}
	return LT_OK;
}

static lt_array *
child_of(lt_array *dst, int i, lt_error *err)
{
	if (i >= dst->n_children)
		return NULL;
	if (!dst->children[i] &&
		lt_array_new(dst->field->children[i], &dst->children[i], err) != LT_OK)
		return NULL;
	return dst->children[i];
}

/* --- value decoders ----------------------------------------------------- */

static lt_code
decode_fixed(lt_enc20_page *pg, const Lt__Enc20__ArrayEncoding *enc, const lt_field *field,
			 uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	int			width = field->byte_width;
	uint64_t	want = field->type == LT_TYPE_BOOL ? 1 : (uint64_t) width * 8;

	if (width <= 0 || field->type == LT_TYPE_FIXED_LIST || field->type == LT_TYPE_STRUCT)
		return pg_corrupt(pg, err, "fixed-width encoding for field \"%s\" of type %s",
						  field->name, lt_type_name(field->type));
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	LT_TRY(fixed_get(pg, enc, skip, n, want, dst->values + dst->length * width, depth, err));
	finish_valid(dst, n);
	return LT_OK;
}

static lt_code
decode_fsl(lt_enc20_page *pg, const Lt__Enc20__FixedSizeList *fsl, const lt_field *field,
		   uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	uint64_t	dim = fsl->dimension;
	uint64_t	cskip,
				cn;
	lt_array   *child;

	if (field->type != LT_TYPE_FIXED_LIST || field->n_children != 1)
		return pg_corrupt(pg, err, "fixed-size-list encoding for field \"%s\" of type %s",
						  field->name, lt_type_name(field->type));
	if (dim == 0 || dim != (uint64_t) field->fixed_size)
		return pg_corrupt(pg, err, "fixed-size list of dimension %llu for field \"%s\" of dimension %d",
						  (unsigned long long) dim, field->name, field->fixed_size);
	if (!lt_mul_ok(skip, dim, &cskip) || !lt_mul_ok(n, dim, &cn))
		return pg_corrupt(pg, err, "fixed-size list item range overflows");
	child = child_of(dst, 0, err);
	if (!child)
		return err && err->code != LT_OK ? err->code : lt_nomem(err);
	LT_TRY(decode(pg, fsl->items, field->children[0], cskip, cn, child, depth + 1, err));
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	finish_valid(dst, n);
	return LT_OK;
}

/*
 * Normalize n end offsets that follow `first` (the end of the previous slot)
 * with Binary's null adjustment; returns per-slot ends and validity.
 */
static lt_code
decode_binary(lt_enc20_page *pg, const Lt__Enc20__Binary *bin, const lt_field *field,
			  uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	uint64_t	adj = bin->has_null_adjustment ? bin->null_adjustment : 0;
	uint64_t   *raw;
	uint8_t    *valid = NULL;
	uint64_t	i,
				start,
				prev,
				total,
				nulls = 0;
	const uint8_t *bytes = NULL;
	int64_t		base;
	lt_code		rc = LT_OK;

	if (!lt_type_is_var_width(field->type))
		return pg_corrupt(pg, err, "binary encoding for field \"%s\" of type %s",
						  field->name, lt_type_name(field->type));
	if (n == 0)
		return LT_OK;
	raw = lt_malloc((n + 1) * sizeof(uint64_t));
	valid = lt_malloc(n);
	if (!raw || !valid)
	{
		lt_free(raw);
		lt_free(valid);
		return lt_nomem(err);
	}
	/* the first slot of the page starts at 0; others at the previous end */
	if (skip == 0)
	{
		raw[0] = 0;
		rc = uint_get(pg, bin->indices, 0, n, raw + 1, depth + 1, err);
	}
	else
		rc = uint_get(pg, bin->indices, skip - 1, n + 1, raw, depth + 1, err);
	if (rc != LT_OK)
		goto done;
	start = skip == 0 ? 0 : (raw[0] >= adj ? raw[0] - adj : raw[0]);
	prev = start;
	for (i = 0; i < n; i++)
	{
		uint64_t	r = raw[i + 1];
		uint64_t	e = r >= adj ? r - adj : r;

		valid[i] = r < adj;
		nulls += !valid[i];
		if (e < prev)
		{
			rc = pg_corrupt(pg, err, "binary offsets go backwards (%llu after %llu at row %llu, null adjustment %llu)",
							(unsigned long long) e, (unsigned long long) prev,
							(unsigned long long) (skip + i), (unsigned long long) adj);
			goto done;
		}
		raw[i + 1] = e;
		prev = e;
	}
	raw[0] = start;
	total = prev - start;
	if (total > 0)
	{
		rc = bytes_range(pg, bin->bytes, start, total, &bytes, depth + 1, err);
		if (rc != LT_OK)
			goto done;
	}
	if ((rc = lt_array_reserve(dst, (int64_t) n, err)) != LT_OK ||
		(rc = lt_array_reserve_data(dst, (int64_t) total, err)) != LT_OK)
		goto done;
	if (nulls && (rc = lt_array_ensure_validity(dst, err)) != LT_OK)
		goto done;
	base = dst->offsets[dst->length];
	if (nulls == 0)
	{
		if (total)
			memcpy(dst->data + dst->data_len, bytes, (size_t) total);
		for (i = 0; i < n; i++)
			dst->offsets[dst->length + 1 + i] = base + (int64_t) (raw[i + 1] - start);
		dst->data_len += (int64_t) total;
	}
	else
	{
		int64_t		cur = base;

		for (i = 0; i < n; i++)
		{
			uint64_t	len = raw[i + 1] - raw[i];

			/* null slots stay empty whatever the file says */
			if (valid[i] && len)
			{
				memcpy(dst->data + cur, bytes + (raw[i] - start), (size_t) len);
				cur += (int64_t) len;
			}
			dst->offsets[dst->length + 1 + i] = cur;
		}
		dst->data_len = cur;
	}
	if (dst->validity)
		memcpy(dst->validity + dst->length, valid, (size_t) n);
	dst->null_count += (int64_t) nulls;
	dst->length += (int64_t) n;
done:
	lt_free(raw);
	lt_free(valid);
	return rc;
}

static lt_code
decode_fixed_binary(lt_enc20_page *pg, const Lt__Enc20__FixedSizeBinary *fsb, const lt_field *field,
					uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	uint64_t	w = fsb->byte_width;
	uint64_t	lo,
				len,
				i;
	const uint8_t *p = NULL;
	int64_t		base;

	if (!lt_type_is_var_width(field->type))
		return pg_corrupt(pg, err, "fixed-size-binary encoding for field \"%s\" of type %s",
						  field->name, lt_type_name(field->type));
	if (!lt_mul_ok(skip, w, &lo) || !lt_mul_ok(n, w, &len))
		return pg_corrupt(pg, err, "fixed-size binary range overflows");
	if (len)
		LT_TRY(bytes_range(pg, fsb->bytes, lo, len, &p, depth + 1, err));
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	LT_TRY(lt_array_reserve_data(dst, (int64_t) len, err));
	if (len)
		memcpy(dst->data + dst->data_len, p, (size_t) len);
	dst->data_len += (int64_t) len;
	base = dst->offsets[dst->length];
	for (i = 0; i < n; i++)
		dst->offsets[dst->length + 1 + i] = base + (int64_t) ((i + 1) * w);
	finish_valid(dst, n);
	return LT_OK;
}

static lt_code
decode_dictionary(lt_enc20_page *pg, const Lt__Enc20__Dictionary *dict, const lt_field *field,
				  uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	uint64_t	nitems = dict->has_num_dictionary_items ? dict->num_dictionary_items : 0;
	bool		shifted = !field->dictionary;	/* decoded to values: 0 means null */
	bool		var = lt_type_is_var_width(field->type);
	int			width = field->byte_width;
	lt_enc20_cache_entry *e;
	lt_array   *items;
	uint64_t   *idx;
	uint8_t    *valid;
	uint64_t	i,
				nulls = 0,
				total = 0;
	lt_code		rc = LT_OK;

	if (!var && (width <= 0 || field->type == LT_TYPE_FIXED_LIST || field->type == LT_TYPE_STRUCT))
		return pg_corrupt(pg, err, "dictionary encoding for field \"%s\" of type %s",
						  field->name, lt_type_name(field->type));
	e = cache_find(pg, dict);
	if (!e)
	{
		LT_TRY(lt_array_new_shallow(field, &items, err));
		rc = decode(pg, dict->items, field, 0, nitems, items, depth + 1, err);
		if (rc == LT_OK && (uint64_t) items->length != nitems)
			rc = pg_corrupt(pg, err, "dictionary decoded to %lld items, expected %llu",
							(long long) items->length, (unsigned long long) nitems);
		if (rc == LT_OK && !(e = cache_add(pg, dict)))
			rc = lt_nomem(err);
		if (rc != LT_OK)
		{
			lt_array_free(items);
			return rc;
		}
		e->arr = items;
	}
	items = e->arr;
	if (n == 0)
		return LT_OK;
	idx = lt_malloc(n * sizeof(uint64_t));
	valid = lt_malloc(n);
	if (!idx || !valid)
	{
		lt_free(idx);
		lt_free(valid);
		return lt_nomem(err);
	}
	rc = uint_get(pg, dict->indices, skip, n, idx, depth + 1, err);
	for (i = 0; rc == LT_OK && i < n; i++)
	{
		uint64_t	k = idx[i];

		if (shifted)
		{
			if (k == 0)
			{
				valid[i] = 0;
				nulls++;
				continue;
			}
			k--;
		}
		if (k >= nitems)
		{
			rc = pg_corrupt(pg, err, "dictionary index %llu at row %llu, but the dictionary has %llu items",
							(unsigned long long) idx[i], (unsigned long long) (skip + i),
							(unsigned long long) nitems);
			break;
		}
		idx[i] = k;
		valid[i] = lt_array_is_valid(items, (int64_t) k);
		nulls += !valid[i];
		if (var && valid[i])
			total += (uint64_t) (items->offsets[k + 1] - items->offsets[k]);
	}
	if (rc == LT_OK)
		rc = lt_array_reserve(dst, (int64_t) n, err);
	if (rc == LT_OK && var)
		rc = lt_array_reserve_data(dst, (int64_t) total, err);
	if (rc == LT_OK && nulls)
		rc = lt_array_ensure_validity(dst, err);
	if (rc == LT_OK)
	{
		int64_t		cur = var ? dst->offsets[dst->length] : 0;

		for (i = 0; i < n; i++)
		{
			int64_t		s = dst->length + (int64_t) i;

			if (var)
			{
				if (valid[i])
				{
					int64_t		lo = items->offsets[idx[i]];
					int64_t		len = items->offsets[idx[i] + 1] - lo;

					if (len)
						memcpy(dst->data + cur, items->data + lo, (size_t) len);
					cur += len;
				}
				dst->offsets[s + 1] = cur;
			}
			else if (valid[i])
				memcpy(dst->values + s * width, items->values + idx[i] * width, (size_t) width);
			else
				memset(dst->values + s * width, 0, (size_t) width);
		}
		if (var)
			dst->data_len = cur;
		if (dst->validity)
			memcpy(dst->validity + dst->length, valid, (size_t) n);
		dst->null_count += (int64_t) nulls;
		dst->length += (int64_t) n;
	}
	lt_free(idx);
	lt_free(valid);
	return rc;
}

/* PackedStruct: rows of the children's fixed-width values side by side. */
static lt_code
decode_packed_struct(lt_enc20_page *pg, const Lt__Enc20__PackedStruct *ps, const lt_field *field,
					 uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	uint64_t	row = 0,
				off = 0,
				lo,
				hi,
				end;
	const uint8_t *p;
	uint64_t	len;
	int			i;

	if (field->type != LT_TYPE_STRUCT || (size_t) field->n_children != ps->n_inner)
		return pg_corrupt(pg, err, "packed struct of %zu fields for field \"%s\" of type %s with %d children",
						  ps->n_inner, field->name, lt_type_name(field->type), field->n_children);
	for (i = 0; i < field->n_children; i++)
	{
		const lt_field *c = field->children[i];
		uint64_t	bits = fixed_bits(ps->inner[i], depth + 1);

		if (c->byte_width <= 0 || c->type == LT_TYPE_BOOL || c->type == LT_TYPE_FIXED_LIST)
			return pg_error(pg, err, LT_EUNSUPPORTED, "packed struct child \"%s\" of type %s",
							c->name, lt_type_name(c->type));
		if (bits && bits != (uint64_t) c->byte_width * 8)
			return pg_corrupt(pg, err, "packed struct child \"%s\" of %llu bits, expected %d",
							  c->name, (unsigned long long) bits, c->byte_width * 8);
		row += (uint64_t) c->byte_width;
	}
	LT_TRY(get_buf(pg, ps->buffer, &p, &len, err));
	if (!lt_add_ok(skip, n, &end) || !lt_mul_ok(skip, row, &lo) || !lt_mul_ok(end, row, &hi) || hi > len)
		return pg_corrupt(pg, err, "packed struct buffer of %llu bytes is too short for rows [%llu, +%llu)",
						  (unsigned long long) len, (unsigned long long) skip, (unsigned long long) n);
	for (i = 0; i < field->n_children; i++)
	{
		lt_array   *c = child_of(dst, i, err);
		int			w = field->children[i]->byte_width;
		uint64_t	k;

		if (!c)
			return err && err->code != LT_OK ? err->code : lt_nomem(err);
		LT_TRY(lt_array_reserve(c, (int64_t) n, err));
		for (k = 0; k < n; k++)
			memcpy(c->values + (c->length + (int64_t) k) * w, p + lo + k * row + off, (size_t) w);
		finish_valid(c, n);
		off += (uint64_t) w;
	}
	LT_TRY(lt_array_reserve(dst, (int64_t) n, err));
	finish_valid(dst, n);
	return LT_OK;
}

/* FSST: an inner binary encoding of compressed strings plus the symbol table. */
static lt_code
decode_fsst(lt_enc20_page *pg, const Lt__Enc20__Fsst *fsst, const lt_field *field,
			uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	lt_fsst_table *t;
	lt_array   *tmp = NULL;
	char		what[128];
	int64_t		i;
	lt_code		rc;

	if (!lt_type_is_var_width(field->type))
		return pg_corrupt(pg, err, "fsst encoding for field \"%s\" of type %s",
						  field->name, lt_type_name(field->type));
	if (!fsst->has_symbol_table)
		return pg_corrupt(pg, err, "fsst encoding without a symbol table");
	t = lt_malloc(sizeof(lt_fsst_table));
	if (!t)
		return lt_nomem(err);
	snprintf(what, sizeof(what), "%s: column %d page %u: fsst symbol table", pg->path ? pg->path : "?",
			 (int) pg->column, pg->page);
	rc = lt_fsst_parse(fsst->symbol_table.data, fsst->symbol_table.len, t, what, err);
	if (rc == LT_OK)
		rc = lt_array_new_shallow(field, &tmp, err);
	if (rc == LT_OK)
		rc = decode(pg, fsst->binary, field, skip, n, tmp, depth + 1, err);
	if (rc == LT_OK)
		rc = lt_array_reserve(dst, tmp->length, err);
	if (rc == LT_OK && tmp->validity)
		rc = lt_array_ensure_validity(dst, err);
	for (i = 0; rc == LT_OK && i < tmp->length; i++)
	{
		int64_t		lo = tmp->offsets[i];
		int64_t		len = tmp->offsets[i + 1] - lo;
		int64_t		got = 0;

		if (len > 0)
		{
			rc = lt_array_reserve_data(dst, (int64_t) lt_fsst_max_decoded((uint64_t) len), err);
			if (rc != LT_OK)
				break;
			got = lt_fsst_decode(t, tmp->data + lo, (size_t) len, dst->data + dst->data_len);
			if (got < 0)
			{
				rc = pg_corrupt(pg, err, "fsst string at row %llu does not decode",
								(unsigned long long) (skip + (uint64_t) i));
				break;
			}
		}
		dst->data_len += got;
		dst->offsets[dst->length + i + 1] = dst->data_len;
		if (dst->validity)
			dst->validity[dst->length + i] = lt_array_is_valid(tmp, i);
	}
	if (rc == LT_OK)
	{
		dst->null_count += tmp->null_count;
		dst->length += tmp->length;
	}
	lt_array_free(tmp);
	lt_free(t);
	return rc;
}

static lt_code
decode(lt_enc20_page *pg, const Lt__Enc20__ArrayEncoding *enc, const lt_field *field,
	   uint64_t skip, uint64_t n, lt_array *dst, int depth, lt_error *err)
{
	if (!enc)
		return pg_corrupt(pg, err, "missing encoding");
	if (depth > MAX_DEPTH)
		return pg_corrupt(pg, err, "encoding nested too deeply");
	if (field->type == LT_TYPE_NULL)
		return lt_array_append_nulls(dst, (int64_t) n, err);
	switch (enc->array_encoding_case)
	{
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE:
			{
				const Lt__Enc20__Nullable *nl = enc->nullable;
				int64_t		first = dst->length;
				uint8_t    *v;
				lt_code		rc;

				switch (nl->nullability_case)
				{
					case LT__ENC20__NULLABLE__NULLABILITY_NO_NULLS:
						return decode(pg, nl->no_nulls->values, field, skip, n, dst, depth + 1, err);
					case LT__ENC20__NULLABLE__NULLABILITY_ALL_NULLS:
						return lt_array_append_nulls(dst, (int64_t) n, err);
					case LT__ENC20__NULLABLE__NULLABILITY_SOME_NULLS:
						v = lt_malloc(n ? n : 1);
						if (!v)
							return lt_nomem(err);
						rc = fixed_get(pg, nl->some_nulls->validity, skip, n, 1, v, depth + 1, err);
						if (rc == LT_OK)
							rc = decode(pg, nl->some_nulls->values, field, skip, n, dst, depth + 1, err);
						if (rc == LT_OK)
							rc = apply_validity(dst, first, v, n, err);
						lt_free(v);
						return rc;
					default:
						return pg_corrupt(pg, err, "nullable encoding without a case");
				}
			}
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT:
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED:
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG:
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT:
			return decode_fixed(pg, enc, field, skip, n, dst, depth, err);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST:
			return decode_fsl(pg, enc->fixed_size_list, field, skip, n, dst, depth, err);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BINARY:
			return decode_binary(pg, enc->binary, field, skip, n, dst, depth, err);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_BINARY:
			return decode_fixed_binary(pg, enc->fixed_size_binary, field, skip, n, dst, depth, err);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY:
			return decode_dictionary(pg, enc->dictionary, field, skip, n, dst, depth, err);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT:
			return decode_packed_struct(pg, enc->packed_struct, field, skip, n, dst, depth, err);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FSST:
			return decode_fsst(pg, enc->fsst, field, skip, n, dst, depth, err);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST:
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_STRUCT:
			return pg_corrupt(pg, err, "%s encoding where values are expected (field \"%s\")",
							  enc->array_encoding_case == LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST ?
							  "list" : "struct", field->name);
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING__NOT_SET:
			return pg_corrupt(pg, err, "empty array encoding");
		default:
			return pg_error(pg, err, LT_EUNSUPPORTED, "encoding %d is not a 2.0 page encoding",
							(int) enc->array_encoding_case);
	}
}

lt_code
lt_enc20_decode(lt_enc20_page *pg, const Lt__Enc20__ArrayEncoding *enc, const lt_field *field,
				uint64_t skip, uint64_t n, lt_array *dst, lt_error *err)
{
	uint64_t	end;

	if (!lt_add_ok(skip, n, &end) || end > pg->num_rows)
		return pg_corrupt(pg, err, "rows [%llu, %llu) requested from a page of %llu rows",
						  (unsigned long long) skip, (unsigned long long) end,
						  (unsigned long long) pg->num_rows);
	if (dst->field->type != field->type)
		return lt_error_set(err, LT_EINVALID, "field \"%s\": output array has type %s, expected %s",
							field->name, lt_type_name(dst->field->type), lt_type_name(field->type));
	if (n == 0)
		return LT_OK;
	return decode(pg, enc, field, skip, n, dst, 0, err);
}

lt_code
lt_enc20_list_offsets(lt_enc20_page *pg, const Lt__Enc20__List *list, uint64_t skip, uint64_t n,
					  lt_array *dst, uint64_t *item_lo, uint64_t *item_hi, lt_error *err)
{
	uint64_t	adj = list->has_null_offset_adjustment ? list->null_offset_adjustment : 0;
	uint64_t   *raw;
	uint64_t	i,
				prev,
				lo,
				end,
				nulls = 0;
	int64_t		base;
	lt_code		rc;

	*item_lo = *item_hi = 0;
	if (!lt_add_ok(skip, n, &end) || end > pg->num_rows)
		return pg_corrupt(pg, err, "lists [%llu, %llu) requested from a page of %llu rows",
						  (unsigned long long) skip, (unsigned long long) end,
						  (unsigned long long) pg->num_rows);
	if (adj == 0)
		return pg_corrupt(pg, err, "list page with a null offset adjustment of 0");
	if (n == 0)
		return LT_OK;
	raw = lt_malloc((n + 1) * sizeof(uint64_t));
	if (!raw)
		return lt_nomem(err);
	if (skip == 0)
	{
		raw[0] = 0;
		rc = uint_get(pg, list->offsets, 0, n, raw + 1, 0, err);
	}
	else
		rc = uint_get(pg, list->offsets, skip - 1, n + 1, raw, 0, err);
	if (rc != LT_OK)
		goto done;
	lo = raw[0] % adj;
	prev = lo;
	if ((rc = lt_array_reserve(dst, (int64_t) n, err)) != LT_OK)
		goto done;
	for (i = 0; i < n; i++)
		nulls += raw[i + 1] >= adj;
	if (nulls && (rc = lt_array_ensure_validity(dst, err)) != LT_OK)
		goto done;
	base = dst->offsets[dst->length];
	for (i = 0; i < n; i++)
	{
		uint64_t	e = raw[i + 1] % adj;

		if (e < prev || (list->has_num_items && e > list->num_items))
		{
			rc = pg_corrupt(pg, err, "list offsets out of order (%llu after %llu at row %llu, %llu items)",
							(unsigned long long) e, (unsigned long long) prev,
							(unsigned long long) (skip + i), (unsigned long long) list->num_items);
			goto done;
		}
		dst->offsets[dst->length + 1 + (int64_t) i] = base + (int64_t) (e - lo);
		if (dst->validity)
			dst->validity[dst->length + (int64_t) i] = raw[i + 1] < adj;
		prev = e;
	}
	dst->null_count += (int64_t) nulls;
	dst->length += (int64_t) n;
	*item_lo = lo;
	*item_hi = prev;
done:
	lt_free(raw);
	return rc;
}
