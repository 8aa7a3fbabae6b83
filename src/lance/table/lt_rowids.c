/*
 * lt_rowids.c — RowIdSequence and RowDatasetVersionSequence decoding.
 *
 * Segments are validated once at parse time and then read in place: the
 * unpacked protobuf stays alive and owns the bytes the segments point into.
 */
#include "table/lt_rowids.h"

#include <protobuf-c/protobuf-c.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_table.pb-c.h"

typedef enum seg_kind
{
	SEG_RANGE,
	SEG_HOLES,
	SEG_BITMAP,
	SEG_SORTED,
	SEG_ARRAY
} seg_kind;

/* An EncodedU64Array: base + u16/u32 offsets, or raw u64 (width 8, base 0). */
typedef struct u64arr
{
	uint8_t		width;
	uint64_t	base;
	const uint8_t *data;
	uint64_t	n;
} u64arr;

typedef struct seg
{
	seg_kind	kind;
	uint64_t	start;			/* [start, end) for the range kinds */
	uint64_t	end;
	u64arr		arr;			/* holes, sorted or unsorted values */
	const uint8_t *bits;		/* RangeWithBitmap: end - start bits, LSB first */
	uint64_t	len;			/* ids in this segment */
	uint64_t	first;			/* sequence position of its first id */
} seg;

struct lt_rowid_seq
{
	Lt__Pb__RowIdSequence *pb;
	seg		   *segs;
	size_t		nseg;
	uint64_t	len;
};

static inline uint64_t
arr_get(const u64arr *a, uint64_t i)
{
	switch (a->width)
	{
		case 2:
			return a->base + lt_le16(a->data + 2 * i);
		case 4:
			return a->base + lt_le32(a->data + 4 * i);
		default:
			return lt_le64(a->data + 8 * i);
	}
}

/* First index in a sorted array whose value is >= v. */
static uint64_t
arr_lower_bound(const u64arr *a, uint64_t v)
{
	uint64_t	lo = 0,
				hi = a->n;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (arr_get(a, mid) < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static lt_code
arr_parse(const Lt__Pb__EncodedU64Array *pb, u64arr *a, const char *what, size_t si, lt_error *err)
{
	const ProtobufCBinaryData *bytes;
	uint64_t	maxoff = 0;

	memset(a, 0, sizeof(*a));
	if (!pb)
		return lt_corrupt(err, "segment %zu: %s array is missing", si, what);
	switch (pb->array_case)
	{
		case LT__PB__ENCODED_U64_ARRAY__ARRAY_U16_ARRAY:
			a->width = 2;
			a->base = pb->u16_array->has_base_value ? pb->u16_array->base_value : 0;
			bytes = &pb->u16_array->offsets;
			break;
		case LT__PB__ENCODED_U64_ARRAY__ARRAY_U32_ARRAY:
			a->width = 4;
			a->base = pb->u32_array->has_base_value ? pb->u32_array->base_value : 0;
			bytes = &pb->u32_array->offsets;
			break;
		case LT__PB__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY:
			a->width = 8;
			bytes = &pb->u64_array->values;
			break;
		default:
			return lt_corrupt(err, "segment %zu: %s array has no encoding", si, what);
	}
	if (bytes->len % a->width)
		return lt_corrupt(err, "segment %zu: %s array of %zu bytes is not a multiple of %u", si, what,
						  bytes->len, a->width);
	a->data = bytes->data;
	a->n = bytes->len / a->width;
	if (a->width < 8)
	{
		for (uint64_t i = 0; i < a->n; i++)
		{
			uint64_t	off = arr_get(&(u64arr) {a->width, 0, a->data, a->n}, i);

			if (off > maxoff)
				maxoff = off;
		}
		if (a->n > 0 && a->base > UINT64_MAX - maxoff)
			return lt_corrupt(err, "segment %zu: %s array base %llu + offset %llu overflows", si, what,
							  (unsigned long long) a->base, (unsigned long long) maxoff);
	}
	return LT_OK;
}

static lt_code
arr_check_ascending(const u64arr *a, const char *what, size_t si, lt_error *err)
{
	for (uint64_t i = 1; i < a->n; i++)
		if (arr_get(a, i) <= arr_get(a, i - 1))
			return lt_corrupt(err, "segment %zu: %s values not strictly ascending at index %llu", si, what,
							  (unsigned long long) i);
	return LT_OK;
}

static uint64_t
popcount_bytes(const uint8_t *p, uint64_t n)
{
	uint64_t	c = 0,
				i = 0;

	for (; i + 8 <= n; i += 8)
		c += (uint64_t) __builtin_popcountll(lt_le64(p + i));
	for (; i < n; i++)
		c += (uint64_t) __builtin_popcount(p[i]);
	return c;
}

/* Set bits among the first nbits bits. */
static uint64_t
popcount_bits(const uint8_t *p, uint64_t nbits)
{
	uint64_t	c = popcount_bytes(p, nbits / 8);

	if (nbits % 8)
		c += (uint64_t) __builtin_popcount(p[nbits / 8] & ((1u << (nbits % 8)) - 1));
	return c;
}

static inline bool
bit_get(const uint8_t *p, uint64_t i)
{
	return (p[i / 8] >> (i % 8)) & 1;
}

static lt_code
seg_parse(const Lt__Pb__U64Segment *pb, seg *s, size_t si, lt_error *err)
{
	memset(s, 0, sizeof(*s));
	switch (pb->segment_case)
	{
		case LT__PB__U64_SEGMENT__SEGMENT_RANGE:
			s->kind = SEG_RANGE;
			s->start = pb->range->has_start ? pb->range->start : 0;
			s->end = pb->range->has_end ? pb->range->end : 0;
			break;
		case LT__PB__U64_SEGMENT__SEGMENT_RANGE_WITH_HOLES:
			s->kind = SEG_HOLES;
			s->start = pb->range_with_holes->has_start ? pb->range_with_holes->start : 0;
			s->end = pb->range_with_holes->has_end ? pb->range_with_holes->end : 0;
			break;
		case LT__PB__U64_SEGMENT__SEGMENT_RANGE_WITH_BITMAP:
			s->kind = SEG_BITMAP;
			s->start = pb->range_with_bitmap->has_start ? pb->range_with_bitmap->start : 0;
			s->end = pb->range_with_bitmap->has_end ? pb->range_with_bitmap->end : 0;
			break;
		case LT__PB__U64_SEGMENT__SEGMENT_SORTED_ARRAY:
			s->kind = SEG_SORTED;
			LT_TRY(arr_parse(pb->sorted_array, &s->arr, "sorted", si, err));
			LT_TRY(arr_check_ascending(&s->arr, "sorted", si, err));
			s->len = s->arr.n;
			return LT_OK;
		case LT__PB__U64_SEGMENT__SEGMENT_ARRAY:
			s->kind = SEG_ARRAY;
			LT_TRY(arr_parse(pb->array, &s->arr, "value", si, err));
			s->len = s->arr.n;
			return LT_OK;
		default:
			return lt_corrupt(err, "segment %zu has no kind", si);
	}

	if (s->start > s->end)
		return lt_corrupt(err, "segment %zu: range [%llu, %llu) runs backwards", si,
						  (unsigned long long) s->start, (unsigned long long) s->end);
	s->len = s->end - s->start;
	if (s->kind == SEG_HOLES)
	{
		LT_TRY(arr_parse(pb->range_with_holes->holes, &s->arr, "holes", si, err));
		LT_TRY(arr_check_ascending(&s->arr, "holes", si, err));
		if (s->arr.n > 0 && (arr_get(&s->arr, 0) < s->start || arr_get(&s->arr, s->arr.n - 1) >= s->end))
			return lt_corrupt(err, "segment %zu: hole outside the range [%llu, %llu)", si,
							  (unsigned long long) s->start, (unsigned long long) s->end);
		/* Strictly ascending and inside the range, so n <= len. */
		s->len -= s->arr.n;
	}
	else if (s->kind == SEG_BITMAP)
	{
		const ProtobufCBinaryData *b = &pb->range_with_bitmap->bitmap;
		uint64_t	nbits = s->end - s->start;
		uint64_t	nbytes = nbits / 8 + (nbits % 8 != 0);

		if (b->len != nbytes)
			return lt_corrupt(err, "segment %zu: bitmap of %zu bytes for %llu ids (needs %llu)", si,
							  b->len, (unsigned long long) nbits, (unsigned long long) nbytes);
		if (nbits % 8 && (b->data[nbytes - 1] >> (nbits % 8)) != 0)
			return lt_corrupt(err, "segment %zu: bitmap has bits set past its range", si);
		s->bits = b->data;
		s->len = popcount_bytes(b->data, nbytes);
	}
	return LT_OK;
}

/* Ids of local rows [i, i + n) of one segment; the caller checked the bounds. */
static void
seg_fill(const seg *s, uint64_t i, uint64_t n, uint64_t *dst)
{
	switch (s->kind)
	{
		case SEG_RANGE:
			for (uint64_t k = 0; k < n; k++)
				dst[k] = s->start + i + k;
			break;
		case SEG_HOLES:
			{
				/*
				 * The i-th id is start + i + h, h = holes below it: the first h
				 * with holes[h] - h > start + i (non-decreasing in h).
				 */
				uint64_t	lo = 0,
							hi = s->arr.n,
							v;

				while (lo < hi)
				{
					uint64_t	mid = lo + (hi - lo) / 2;

					if (arr_get(&s->arr, mid) - mid > s->start + i)
						hi = mid;
					else
						lo = mid + 1;
				}
				v = s->start + i + lo;
				for (uint64_t k = 0; k < n; k++)
				{
					dst[k] = v++;
					while (lo < s->arr.n && arr_get(&s->arr, lo) < v)
						lo++;
					while (lo < s->arr.n && arr_get(&s->arr, lo) == v)
					{
						v++;
						lo++;
					}
				}
			}
			break;
		case SEG_BITMAP:
			{
				uint64_t	b = 0,
							seen = 0;

				/* Skip whole bytes, then bits, to the i-th set bit. */
				while (seen + (uint64_t) __builtin_popcount(s->bits[b / 8]) <= i)
				{
					seen += (uint64_t) __builtin_popcount(s->bits[b / 8]);
					b += 8;
				}
				for (uint64_t k = 0; k < n; b++)
				{
					if (!bit_get(s->bits, b))
						continue;
					if (seen++ >= i)
						dst[k++] = s->start + b;
				}
			}
			break;
		case SEG_SORTED:
		case SEG_ARRAY:
			for (uint64_t k = 0; k < n; k++)
				dst[k] = arr_get(&s->arr, i + k);
			break;
	}
}

/* Local position of id in one segment. */
static bool
seg_find(const seg *s, uint64_t id, uint64_t *pos)
{
	uint64_t	h;

	switch (s->kind)
	{
		case SEG_RANGE:
			if (id < s->start || id >= s->end)
				return false;
			*pos = id - s->start;
			return true;
		case SEG_HOLES:
			if (id < s->start || id >= s->end)
				return false;
			h = arr_lower_bound(&s->arr, id);
			if (h < s->arr.n && arr_get(&s->arr, h) == id)
				return false;
			*pos = id - s->start - h;
			return true;
		case SEG_BITMAP:
			if (id < s->start || id >= s->end || !bit_get(s->bits, id - s->start))
				return false;
			*pos = popcount_bits(s->bits, id - s->start);
			return true;
		case SEG_SORTED:
			h = arr_lower_bound(&s->arr, id);
			if (h == s->arr.n || arr_get(&s->arr, h) != id)
				return false;
			*pos = h;
			return true;
		case SEG_ARRAY:
			for (h = 0; h < s->arr.n; h++)
				if (arr_get(&s->arr, h) == id)
				{
					*pos = h;
					return true;
				}
			return false;
	}
	return false;
}

static lt_code
check_rows(uint64_t physical_rows, const char *what, lt_error *err)
{
	if (physical_rows > LT_MAX_FRAGMENT_ROWS)
		return lt_corrupt(err, "%s: fragment of %llu rows exceeds 2^32", what,
						  (unsigned long long) physical_rows);
	return LT_OK;
}

lt_code
lt_rowid_seq_parse(const uint8_t *buf, size_t len, uint64_t physical_rows, lt_rowid_seq **out,
				   lt_error *err)
{
	lt_rowid_seq *s;
	lt_code		rc = LT_OK;

	*out = NULL;
	LT_TRY(check_rows(physical_rows, "row id sequence", err));
	if (!(s = lt_calloc(1, sizeof(*s))))
		return lt_nomem(err);
	s->pb = lt__pb__row_id_sequence__unpack(lt_protobuf_allocator(), len, buf);
	if (!s->pb)
	{
		lt_free(s);
		return lt_corrupt(err, "row id sequence: %zu bytes do not parse as RowIdSequence", len);
	}
	if (s->pb->n_segments > 0 &&
		!(s->segs = lt_calloc(s->pb->n_segments, sizeof(seg))))
		rc = lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && i < s->pb->n_segments; i++)
	{
		seg		   *g = &s->segs[i];

		if ((rc = seg_parse(s->pb->segments[i], g, i, err)) != LT_OK)
		{
			lt_error_prefix(err, "row id sequence");
			break;
		}
		g->first = s->len;
		if (!lt_add_ok(s->len, g->len, &s->len) || s->len > physical_rows)
			rc = lt_corrupt(err, "row id sequence: more ids than the fragment's %llu rows (segment %zu)",
							(unsigned long long) physical_rows, i);
		s->nseg = i + 1;
	}
	if (rc == LT_OK && s->len != physical_rows)
		rc = lt_corrupt(err, "row id sequence: %llu ids for a fragment of %llu rows",
						(unsigned long long) s->len, (unsigned long long) physical_rows);
	if (rc != LT_OK)
	{
		lt_rowid_seq_free(s);
		return rc;
	}
	*out = s;
	return LT_OK;
}

void
lt_rowid_seq_free(lt_rowid_seq *s)
{
	if (!s)
		return;
	if (s->pb)
		lt__pb__row_id_sequence__free_unpacked(s->pb, lt_protobuf_allocator());
	lt_free(s->segs);
	lt_free(s);
}

uint64_t
lt_rowid_seq_len(const lt_rowid_seq *s)
{
	return s->len;
}

bool
lt_rowid_seq_is_range(const lt_rowid_seq *s, uint64_t *start)
{
	const seg  *g = NULL;

	/* Empty segments do not break contiguity; Lance writes Range(0..0) for none. */
	for (size_t i = 0; i < s->nseg; i++)
	{
		if (s->segs[i].len == 0)
			continue;
		if (g || s->segs[i].kind != SEG_RANGE)
			return false;
		g = &s->segs[i];
	}
	*start = g ? g->start : 0;
	return true;
}

/* The segment holding position pos (pos < s->len). */
static size_t
seq_segment(const lt_rowid_seq *s, uint64_t pos)
{
	size_t		lo = 0,
				hi = s->nseg;

	/* The last segment starting at or before pos; it cannot be empty. */
	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (s->segs[mid].first <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

lt_code
lt_rowid_seq_fill(const lt_rowid_seq *s, uint64_t pos, uint64_t n, uint64_t *dst, lt_error *err)
{
	uint64_t	end;
	size_t		i;

	if (!lt_add_ok(pos, n, &end) || end > s->len)
		return lt_error_set(err, LT_EINVALID, "row ids [%llu, +%llu) past the sequence's %llu",
							(unsigned long long) pos, (unsigned long long) n, (unsigned long long) s->len);
	if (n == 0)
		return LT_OK;
	i = seq_segment(s, pos);
	while (n > 0)
	{
		const seg  *g = &s->segs[i++];
		uint64_t	local = pos - g->first;
		uint64_t	take;

		if (g->len == 0)
			continue;
		take = g->len - local < n ? g->len - local : n;
		seg_fill(g, local, take, dst);
		dst += take;
		pos += take;
		n -= take;
	}
	return LT_OK;
}

bool
lt_rowid_seq_find(const lt_rowid_seq *s, uint64_t id, uint64_t *pos)
{
	for (size_t i = 0; i < s->nseg; i++)
	{
		uint64_t	local;

		if (seg_find(&s->segs[i], id, &local))
		{
			*pos = s->segs[i].first + local;
			return true;
		}
	}
	return false;
}

lt_code
lt_rowids_decode(const uint8_t *buf, size_t len, uint64_t physical_rows, uint64_t **ids, lt_error *err)
{
	lt_rowid_seq *s;
	uint64_t   *out;
	lt_code		rc;

	*ids = NULL;
	LT_TRY(lt_rowid_seq_parse(buf, len, physical_rows, &s, err));
	if (physical_rows > SIZE_MAX / sizeof(uint64_t) ||
		!(out = lt_malloc(physical_rows ? (size_t) physical_rows * sizeof(uint64_t) : 1)))
	{
		lt_rowid_seq_free(s);
		return lt_nomem(err);
	}
	rc = lt_rowid_seq_fill(s, 0, physical_rows, out, err);
	lt_rowid_seq_free(s);
	if (rc != LT_OK)
	{
		lt_free(out);
		return rc;
	}
	*ids = out;
	return LT_OK;
}

/* --- version sequences ---------------------------------------------------- */

typedef struct vrun
{
	uint64_t	first;
	uint64_t	len;
	uint64_t	version;
} vrun;

struct lt_version_seq
{
	vrun	   *runs;			/* non-empty runs only */
	size_t		n;
	uint64_t	len;
};

lt_code
lt_version_seq_parse(const uint8_t *buf, size_t len, uint64_t physical_rows, lt_version_seq **out,
					 lt_error *err)
{
	Lt__Pb__RowDatasetVersionSequence *pb;
	lt_version_seq *s;
	lt_code		rc = LT_OK;

	*out = NULL;
	LT_TRY(check_rows(physical_rows, "version sequence", err));
	pb = lt__pb__row_dataset_version_sequence__unpack(lt_protobuf_allocator(), len, buf);
	if (!pb)
		return lt_corrupt(err, "version sequence: %zu bytes do not parse as RowDatasetVersionSequence", len);
	if (!(s = lt_calloc(1, sizeof(*s))) ||
		(pb->n_runs > 0 && !(s->runs = lt_calloc(pb->n_runs, sizeof(vrun)))))
		rc = lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && i < pb->n_runs; i++)
	{
		const Lt__Pb__RowDatasetVersionRun *r = pb->runs[i];
		seg			g;

		if (!r->span)
		{
			rc = lt_corrupt(err, "version sequence: run %zu has no span", i);
			break;
		}
		/* The span only counts rows; its values are positions and unused. */
		if ((rc = seg_parse(r->span, &g, i, err)) != LT_OK)
		{
			lt_error_prefix(err, "version sequence: run %zu", i);
			break;
		}
		if (g.len == 0)
			continue;
		s->runs[s->n].first = s->len;
		s->runs[s->n].len = g.len;
		s->runs[s->n].version = r->has_version ? r->version : 0;
		s->n++;
		if (!lt_add_ok(s->len, g.len, &s->len) || s->len > physical_rows)
			rc = lt_corrupt(err, "version sequence: more rows than the fragment's %llu (run %zu)",
							(unsigned long long) physical_rows, i);
	}
	if (rc == LT_OK && s->len != physical_rows)
		rc = lt_corrupt(err, "version sequence: covers %llu rows of a fragment of %llu",
						(unsigned long long) s->len, (unsigned long long) physical_rows);
	lt__pb__row_dataset_version_sequence__free_unpacked(pb, lt_protobuf_allocator());
	if (rc != LT_OK)
	{
		lt_version_seq_free(s);
		return rc;
	}
	*out = s;
	return LT_OK;
}

void
lt_version_seq_free(lt_version_seq *s)
{
	if (!s)
		return;
	lt_free(s->runs);
	lt_free(s);
}

static size_t
vrun_find(const lt_version_seq *s, uint64_t pos)
{
	size_t		lo = 0,
				hi = s->n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (s->runs[mid].first <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

uint64_t
lt_version_seq_at(const lt_version_seq *s, uint64_t pos)
{
	if (pos >= s->len)
		return 0;
	return s->runs[vrun_find(s, pos)].version;
}

lt_code
lt_version_seq_fill(const lt_version_seq *s, uint64_t pos, uint64_t n, uint64_t *dst, lt_error *err)
{
	uint64_t	end;
	size_t		i;

	if (!lt_add_ok(pos, n, &end) || end > s->len)
		return lt_error_set(err, LT_EINVALID, "versions [%llu, +%llu) past the sequence's %llu",
							(unsigned long long) pos, (unsigned long long) n, (unsigned long long) s->len);
	if (n == 0)
		return LT_OK;
	i = vrun_find(s, pos);
	while (n > 0)
	{
		const vrun *r = &s->runs[i++];
		uint64_t	take = r->first + r->len - pos;

		if (take > n)
			take = n;
		for (uint64_t k = 0; k < take; k++)
			*dst++ = r->version;
		pos += take;
		n -= take;
	}
	return LT_OK;
}
