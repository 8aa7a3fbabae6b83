/*
 * lt_manifest_write.c — a manifest file as Lance 8 frames it:
 *   [u32 len | IndexSection]  [u32 len | Transaction]  [u32 len | Manifest]
 *   i64 manifest_pos, u16 0, u16 2, "LANC"
 * (the reader is lt_manifest_parse in lt_dataset.c).  A commit writes the next manifest from the previous
 * one's bytes: fragments it keeps are copied as encoded (splicing), only new or changed ones are packed, so the
 * cost of a one-row commit does not grow with the table's fragment count.
 */
#include "table/lt_dataset.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

#define MAX_SECTION ((uint64_t) UINT32_MAX)

/* ---- splicing: the previous manifest's unchanged fragments copied as encoded bytes ------------------------- */

#define FIELD_FRAGMENTS 2		/* Manifest.fragments */
#define WIRE_LEN 2

static bool
read_varint(const uint8_t *p, uint64_t len, uint64_t *pos, uint64_t *v)
{
	uint64_t	r = 0;

	for (int shift = 0; shift < 64 && *pos < len; shift += 7)
	{
		uint8_t		b = p[(*pos)++];

		r |= (uint64_t) (b & 0x7f) << shift;
		if (!(b & 0x80))
		{
			*v = r;
			return true;
		}
	}
	return false;
}

/* Step over the field at *pos: its number and where it ends. False on bytes that do not parse. */
static bool
next_field(const uint8_t *p, uint64_t len, uint64_t *pos, uint64_t *number, int *wire)
{
	uint64_t	key,
				n;

	if (!read_varint(p, len, pos, &key))
		return false;
	*number = key >> 3;
	*wire = (int) (key & 7);
	switch (*wire)
	{
		case 0:
			return read_varint(p, len, pos, &n);
		case 1:
			n = 8;
			break;
		case 5:
			n = 4;
			break;
		case WIRE_LEN:
			if (!read_varint(p, len, pos, &n))
				return false;
			break;
		default:
			return false;		/* groups: not in Lance's messages */
	}
	if (n > len - *pos)
		return false;
	*pos += n;
	return true;
}

bool
lt_manifest_next_field(const uint8_t *p, uint64_t len, uint64_t *pos, uint64_t *number, int *wire)
{
	return next_field(p, len, pos, number, wire);
}

static size_t
varint_size(uint64_t v)
{
	size_t		n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *
put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80)
	{
		*p++ = (uint8_t) (v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t) v;
	return p;
}

/*
 * Where each of prev's fragments is encoded in prev->msg: starts[i] .. starts[i] + lens[i], tag included.
 * False (splice nothing) when the bytes do not hold exactly prev->n_fragments fragments entries.
 */
static bool
fragment_ranges(const lt_manifest_prev *prev, uint64_t *starts, uint64_t *lens)
{
	uint64_t	pos = 0;
	size_t		k = 0;

	while (pos < prev->len)
	{
		uint64_t	start = pos,
					number;
		int			wire;

		if (!next_field(prev->msg, prev->len, &pos, &number, &wire))
			return false;
		if (number != FIELD_FRAGMENTS)
			continue;
		if (wire != WIRE_LEN || k == prev->n_fragments)
			return false;
		starts[k] = start;
		lens[k++] = pos - start;
	}
	return k == prev->n_fragments;
}

/* Where fields numbered above Manifest.fragments begin in a manifest packed without fragments. */
static uint64_t
after_fragments_at(const uint8_t *p, uint64_t len)
{
	uint64_t	pos = 0;

	while (pos < len)
	{
		uint64_t	start = pos,
					number;
		int			wire;

		if (!next_field(p, len, &pos, &number, &wire) || number > FIELD_FRAGMENTS)
			return start;
	}
	return len;
}

lt_code
lt_manifest_split(const uint8_t *msg, uint64_t len, size_t hint, uint64_t **starts, uint64_t **lens, size_t *n,
				  uint8_t **rest, uint64_t *rest_len, lt_error *err)
{
	uint64_t	pos = 0;
	size_t		cap = 0;
	uint8_t    *r = lt_malloc(len + 1);

	*starts = *lens = NULL;
	*n = 0;
	*rest = NULL;
	*rest_len = 0;
	if (!r)
		return lt_nomem(err);
	while (pos < len)
	{
		uint64_t	start = pos,
					number;
		int			wire;

		if (!next_field(msg, len, &pos, &number, &wire))
		{
			lt_free(r);
			lt_free(*starts);
			lt_free(*lens);
			*starts = *lens = NULL;
			*n = 0;
			return lt_corrupt(err, "the manifest's fields do not parse at offset %llu", (unsigned long long) start);
		}
		if (number != FIELD_FRAGMENTS || wire != WIRE_LEN)
		{
			memcpy(r + *rest_len, msg + start, pos - start);
			*rest_len += pos - start;
			continue;
		}
		if (*n == cap)
		{
			uint64_t   *s2,
					   *l2;

			cap = cap ? cap * 2 : hint + 16;
			s2 = lt_realloc(*starts, cap * sizeof(uint64_t));
			if (s2)
				*starts = s2;
			l2 = lt_realloc(*lens, cap * sizeof(uint64_t));
			if (l2)
				*lens = l2;
			if (!s2 || !l2)
			{
				lt_free(r);
				lt_free(*starts);
				lt_free(*lens);
				*starts = *lens = NULL;
				*n = 0;
				return lt_nomem(err);
			}
		}
		(*starts)[*n] = start;
		(*lens)[(*n)++] = pos - start;
	}
	*rest = r;
	return LT_OK;
}

/*
 * The Manifest message of m, its fragments spliced: a fragment that is prev's (the same pointer, found by a
 * merge walk over both ascending id lists) is copied as prev encoded it, every other one packed.  Fields are
 * written in field-number order as protobuf-c packs them (fields, fragments, the rest), so the result is the
 * bytes lt__pb__manifest__pack writes for the same manifest.
 */
static lt_code
pack_spliced(Lt__Pb__Manifest *m, const lt_manifest_prev *prev, uint64_t head, uint64_t tail, lt_part *hole,
			 uint64_t *hole_at, uint8_t **out, uint64_t *out_len, lt_error *err)
{
	uint64_t   *starts = NULL,
			   *lens = NULL;
	int64_t    *from = NULL;		/* per fragment of m: prev's index, or -1 to pack */
	size_t	   *sizes = NULL;
	size_t		n = m->n_fragments;
	Lt__Pb__DataFragment **frags = m->fragments;
	uint8_t    *rest = NULL,
			   *buf = NULL,
			   *w;
	size_t		rest_len;
	uint64_t	split,
				total;
	size_t		j = 0,
				shared = 0;		/* the leading fragments of m that are prev's at the same places */
	bool		borrowed = false;	/* starts and lens are prev's */
	lt_code		rc = LT_OK;

	*out = NULL;
	*out_len = 0;
	starts = lt_malloc((prev->starts ? 0 : prev->n_fragments) * sizeof(uint64_t) + 8);
	lens = lt_malloc((prev->starts ? 0 : prev->n_fragments) * sizeof(uint64_t) + 8);
	from = lt_malloc((n + 1) * sizeof(int64_t));
	sizes = lt_malloc((n + 1) * sizeof(size_t));
	if (!starts || !lens || !from || !sizes)
	{
		rc = lt_nomem(err);
		goto out;
	}
	if (prev->starts && prev->lens)
	{
		/* known where prev's fragments are encoded */
		lt_free(starts);
		lt_free(lens);
		starts = (uint64_t *) prev->starts;
		lens = (uint64_t *) prev->lens;
		borrowed = true;
	}
	else if (!fragment_ranges(prev, starts, lens))
		prev = NULL;			/* not bytes we can cut: pack every fragment */
	/* everything but the fragments, packed as usual */
	m->n_fragments = 0;
	m->fragments = NULL;
	rest_len = lt__pb__manifest__get_packed_size(m);
	if ((rest = lt_malloc(rest_len + 1)))
		lt__pb__manifest__pack(m, rest);
	m->n_fragments = n;
	m->fragments = frags;
	if (!rest)
	{
		rc = lt_nomem(err);
		goto out;
	}
	split = after_fragments_at(rest, rest_len);
	total = rest_len;
	/* the leading fragments that are prev's at the same places: one comparison of the pointer arrays */
	if (prev)
	{
		size_t		both = n < prev->n_fragments ? n : prev->n_fragments;

		/* the same array (an append in place, lt_txn_commit.c): all of prev's are there */
		shared = frags == prev->fragments ? both :
			(size_t) (lt_common_prefix((const uint8_t *) frags, (const uint8_t *) prev->fragments,
									   both * sizeof(*frags)) / sizeof(*frags));
		if (shared > 0 && prev->contiguous)
			total += starts[shared - 1] + lens[shared - 1] - starts[0];
		else
			for (size_t i = 0; i < shared; i++)
			{
				from[i] = (int64_t) i;
				total += lens[i];
			}
		j = shared;
	}
	for (size_t i = shared; i < n; i++)
	{
		const Lt__Pb__DataFragment *f = frags[i];

		from[i] = -1;
		if (prev)
		{
			while (j < prev->n_fragments && prev->fragments[j]->id < f->id)
				j++;
			if (j < prev->n_fragments && prev->fragments[j] == f)
			{
				from[i] = (int64_t) j;
				total += lens[j];
				continue;
			}
		}
		sizes[i] = lt__pb__data_fragment__get_packed_size(f);
		total += 1 + varint_size(sizes[i]) + sizes[i];
	}
	if (total > MAX_SECTION)
	{
		rc = lt_error_set(err, LT_EINVALID, "manifest of version %llu is too large to write",
						  (unsigned long long) m->version);
		goto out;
	}
	if (!(buf = lt_malloc(head + total + tail)))
	{
		rc = lt_nomem(err);
		goto out;
	}
	w = buf + head;
	memcpy(w, rest, split);
	w += split;
	if (shared > 0 && prev->contiguous)
	{
		/* prev's leading fragments, encoded back to back: one copy, or none (a hole the caller fills) */
		uint64_t	run = starts[shared - 1] + lens[shared - 1] - starts[0];

		if (hole)
		{
			hole->data = prev->msg + starts[0];
			hole->len = run;
			*hole_at = (uint64_t) (w - buf);
		}
		else
			memcpy(w, prev->msg + starts[0], run);
		w += run;
	}
	for (size_t i = shared && prev->contiguous ? shared : 0; i < n;)
	{
		if (from[i] >= 0)
		{
			/* a run of fragments prev encoded back to back: one copy */
			size_t		k = (size_t) from[i];
			uint64_t	start = starts[k],
						end = starts[k] + lens[k];

			while (++i < n && from[i] == (int64_t) ++k && starts[k] == end)
				end += lens[k];
			memcpy(w, prev->msg + start, end - start);
			w += end - start;
			continue;
		}
		*w++ = (uint8_t) (FIELD_FRAGMENTS << 3 | WIRE_LEN);
		w = put_varint(w, sizes[i]);
		w += lt__pb__data_fragment__pack(frags[i], w);
		i++;
	}
	memcpy(w, rest + split, rest_len - split);
	w += rest_len - split;
	*out = buf;
	*out_len = (uint64_t) (w - buf) - head;
	buf = NULL;
out:
	lt_free(buf);
	lt_free(rest);
	lt_free(sizes);
	lt_free(from);
	if (!borrowed)
	{
		lt_free(lens);
		lt_free(starts);
	}
	return rc;
}

static lt_code serialize(Lt__Pb__Manifest *m, const Lt__Pb__IndexSection *indexes, const Lt__Pb__Transaction *txn,
						 const lt_manifest_prev *prev, lt_part *hole, uint64_t *hole_at, uint8_t **out,
						 uint64_t *out_len, lt_error *err);

lt_code
lt_manifest_serialize(Lt__Pb__Manifest *m, const Lt__Pb__IndexSection *indexes, const Lt__Pb__Transaction *txn,
					  uint8_t **out, uint64_t *out_len, lt_error *err)
{
	return lt_manifest_serialize_from(m, indexes, txn, NULL, out, out_len, err);
}

lt_code
lt_manifest_serialize_from(Lt__Pb__Manifest *m, const Lt__Pb__IndexSection *indexes,
						   const Lt__Pb__Transaction *txn, const lt_manifest_prev *prev, uint8_t **out,
						   uint64_t *out_len, lt_error *err)
{
	return serialize(m, indexes, txn, prev, NULL, NULL, out, out_len, err);
}

lt_code
lt_manifest_serialize_parts(Lt__Pb__Manifest *m, const Lt__Pb__IndexSection *indexes,
							const Lt__Pb__Transaction *txn, const lt_manifest_prev *prev, uint8_t **buf,
							lt_part *parts, int *n_parts, lt_error *err)
{
	lt_part		hole = {NULL, 0};
	uint64_t	hole_at = 0,
				len = 0;

	*n_parts = 0;
	LT_TRY(serialize(m, indexes, txn, prev, &hole, &hole_at, buf, &len, err));
	if (hole.len == 0)
	{
		parts[(*n_parts)++] = (lt_part) {*buf, len};
		return LT_OK;
	}
	parts[(*n_parts)++] = (lt_part) {*buf, hole_at};
	parts[(*n_parts)++] = hole;
	parts[(*n_parts)++] = (lt_part) {*buf + hole_at + hole.len, len - hole_at - hole.len};
	return LT_OK;
}

/* The manifest file in buf (*out_len bytes); with hole, the bytes at *hole_at are left for the caller's hole. */
static lt_code
serialize(Lt__Pb__Manifest *m, const Lt__Pb__IndexSection *indexes, const Lt__Pb__Transaction *txn,
		  const lt_manifest_prev *prev, lt_part *hole, uint64_t *hole_at, uint8_t **out, uint64_t *out_len,
		  lt_error *err)
{
	size_t		ilen = indexes ? lt__pb__index_section__get_packed_size(indexes) : 0;
	size_t		tlen = txn ? lt__pb__transaction__get_packed_size(txn) : 0;
	uint64_t	mlen = 0;
	uint8_t    *msg = NULL;
	uint64_t	pos = 0;
	uint64_t	total;
	uint8_t    *buf;

	*out = NULL;
	*out_len = 0;
	/* section positions first: they are part of the manifest message */
	m->has_index_section = indexes != NULL;
	m->index_section = 0;
	if (indexes)
		pos += 4 + ilen;
	m->has_transaction_section = txn != NULL;
	m->transaction_section = pos;
	if (txn)
		pos += 4 + tlen;
	if (ilen > MAX_SECTION || tlen > MAX_SECTION)
		return lt_error_set(err, LT_EINVALID, "manifest of version %llu is too large to write",
							(unsigned long long) m->version);
	if (prev)
	{
		/* the message is written in place, after the sections, by the splice */
		LT_TRY(pack_spliced(m, prev, pos + 4, 16, hole, hole_at, &msg, &mlen, err));
		buf = msg;
	}
	else
	{
		mlen = lt__pb__manifest__get_packed_size(m);
		if (mlen > MAX_SECTION)
			return lt_error_set(err, LT_EINVALID, "manifest of version %llu is too large to write",
								(unsigned long long) m->version);
		if (!(buf = lt_malloc(pos + 4 + mlen + 16)))
			return lt_nomem(err);
	}
	total = pos + 4 + mlen + 16;
	pos = 0;
	if (indexes)
	{
		lt_put32(buf, (uint32_t) ilen);
		lt__pb__index_section__pack(indexes, buf + 4);
		pos += 4 + ilen;
	}
	if (txn)
	{
		lt_put32(buf + pos, (uint32_t) tlen);
		lt__pb__transaction__pack(txn, buf + pos + 4);
		pos += 4 + tlen;
	}
	lt_put32(buf + pos, (uint32_t) mlen);
	if (!msg)
		lt__pb__manifest__pack(m, buf + pos + 4);
	lt_put64(buf + pos + 4 + mlen, pos);
	lt_put16(buf + pos + 4 + mlen + 8, 0);
	lt_put16(buf + pos + 4 + mlen + 10, 2);
	memcpy(buf + pos + 4 + mlen + 12, "LANC", 4);
	*out = buf;
	*out_len = total;
	return LT_OK;
}
