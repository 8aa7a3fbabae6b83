/*
 * Unit tests of lt_rowids: every U64Segment kind and EncodedU64Array width
 * built with protobuf-c, each validation rule broken, windowed fills and
 * reverse lookups against a full decode, and the inline sequences of a real
 * stable-row-id dataset written by Lance 8.
 */
#include <protobuf-c/protobuf-c.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "table/lt_rowids.h"
#include "proto/lt_table.pb-c.h"
#include "unit.h"

static lt_error err;

/* --- building sequences --------------------------------------------------- */

/* Storage for one segment's sub-messages (protobuf-c wants pointers). */
typedef struct segbuf
{
	Lt__Pb__U64Segment seg;
	Lt__Pb__U64Segment__Range range;
	Lt__Pb__U64Segment__RangeWithHoles holes;
	Lt__Pb__U64Segment__RangeWithBitmap bitmap;
	Lt__Pb__EncodedU64Array arr;
	Lt__Pb__EncodedU64Array__U16Array a16;
	Lt__Pb__EncodedU64Array__U32Array a32;
	Lt__Pb__EncodedU64Array__U64Array a64;
	uint8_t		bytes[8 * 4096];
} segbuf;

static segbuf SB[8];
static int nsb;

/* An EncodedU64Array of the given width; base ignored for width 8. */
static Lt__Pb__EncodedU64Array *
enc(segbuf *b, int width, uint64_t base, const uint64_t *v, size_t n)
{
	lt__pb__encoded_u64_array__init(&b->arr);
	for (size_t i = 0; i < n; i++)
	{
		if (width == 2)
			lt_put16(b->bytes + 2 * i, (uint16_t) (v[i] - base));
		else if (width == 4)
			lt_put32(b->bytes + 4 * i, (uint32_t) (v[i] - base));
		else
			lt_put64(b->bytes + 8 * i, v[i]);
	}
	if (width == 2)
	{
		lt__pb__encoded_u64_array__u16_array__init(&b->a16);
		b->a16.has_base_value = true;
		b->a16.base_value = base;
		b->a16.has_offsets = true;
		b->a16.offsets = (ProtobufCBinaryData) {2 * n, b->bytes};
		b->arr.array_case = LT__PB__ENCODED_U64_ARRAY__ARRAY_U16_ARRAY;
		b->arr.u16_array = &b->a16;
	}
	else if (width == 4)
	{
		lt__pb__encoded_u64_array__u32_array__init(&b->a32);
		b->a32.has_base_value = true;
		b->a32.base_value = base;
		b->a32.has_offsets = true;
		b->a32.offsets = (ProtobufCBinaryData) {4 * n, b->bytes};
		b->arr.array_case = LT__PB__ENCODED_U64_ARRAY__ARRAY_U32_ARRAY;
		b->arr.u32_array = &b->a32;
	}
	else
	{
		lt__pb__encoded_u64_array__u64_array__init(&b->a64);
		b->a64.has_values = true;
		b->a64.values = (ProtobufCBinaryData) {8 * n, b->bytes};
		b->arr.array_case = LT__PB__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY;
		b->arr.u64_array = &b->a64;
	}
	return &b->arr;
}

static Lt__Pb__U64Segment *
seg_range(uint64_t start, uint64_t end)
{
	segbuf	   *b = &SB[nsb++];

	lt__pb__u64_segment__init(&b->seg);
	lt__pb__u64_segment__range__init(&b->range);
	b->range.has_start = start != 0;	/* proto3 writers omit zeros */
	b->range.start = start;
	b->range.has_end = true;
	b->range.end = end;
	b->seg.segment_case = LT__PB__U64_SEGMENT__SEGMENT_RANGE;
	b->seg.range = &b->range;
	return &b->seg;
}

static Lt__Pb__U64Segment *
seg_holes(uint64_t start, uint64_t end, int width, uint64_t base, const uint64_t *h, size_t n)
{
	segbuf	   *b = &SB[nsb++];

	lt__pb__u64_segment__init(&b->seg);
	lt__pb__u64_segment__range_with_holes__init(&b->holes);
	b->holes.has_start = b->holes.has_end = true;
	b->holes.start = start;
	b->holes.end = end;
	b->holes.holes = enc(b, width, base, h, n);
	b->seg.segment_case = LT__PB__U64_SEGMENT__SEGMENT_RANGE_WITH_HOLES;
	b->seg.range_with_holes = &b->holes;
	return &b->seg;
}

/* present[i] for i in [0, end-start): LSB-first bits. */
static Lt__Pb__U64Segment *
seg_bitmap(uint64_t start, uint64_t end, const bool *present, int extra_bytes)
{
	segbuf	   *b = &SB[nsb++];
	uint64_t	nbits = end - start;
	size_t		nbytes = (size_t) ((nbits + 7) / 8) + (size_t) extra_bytes;

	memset(b->bytes, 0, nbytes);
	for (uint64_t i = 0; i < nbits; i++)
		if (present[i])
			b->bytes[i / 8] |= 1 << (i % 8);
	lt__pb__u64_segment__init(&b->seg);
	lt__pb__u64_segment__range_with_bitmap__init(&b->bitmap);
	b->bitmap.has_start = b->bitmap.has_end = b->bitmap.has_bitmap = true;
	b->bitmap.start = start;
	b->bitmap.end = end;
	b->bitmap.bitmap = (ProtobufCBinaryData) {nbytes, b->bytes};
	b->seg.segment_case = LT__PB__U64_SEGMENT__SEGMENT_RANGE_WITH_BITMAP;
	b->seg.range_with_bitmap = &b->bitmap;
	return &b->seg;
}

static Lt__Pb__U64Segment *
seg_array(bool sorted, int width, uint64_t base, const uint64_t *v, size_t n)
{
	segbuf	   *b = &SB[nsb++];

	lt__pb__u64_segment__init(&b->seg);
	if (sorted)
	{
		b->seg.segment_case = LT__PB__U64_SEGMENT__SEGMENT_SORTED_ARRAY;
		b->seg.sorted_array = enc(b, width, base, v, n);
	}
	else
	{
		b->seg.segment_case = LT__PB__U64_SEGMENT__SEGMENT_ARRAY;
		b->seg.array = enc(b, width, base, v, n);
	}
	return &b->seg;
}

static uint8_t packed[1 << 17];

/* Pack a RowIdSequence of the given segments; resets the segment pool. */
static size_t
pack_seq(Lt__Pb__U64Segment **segs, size_t n)
{
	Lt__Pb__RowIdSequence seq;
	size_t		len;

	lt__pb__row_id_sequence__init(&seq);
	seq.n_segments = n;
	seq.segments = segs;
	len = lt__pb__row_id_sequence__get_packed_size(&seq);
	CHECK(len <= sizeof(packed));
	lt__pb__row_id_sequence__pack(&seq, packed);
	nsb = 0;
	return len;
}

/* Decode, then check fills of every window shape and find() for each id. */
static void
check_seq(size_t len, const uint64_t *expect, uint64_t n)
{
	lt_rowid_seq *s;
	uint64_t   *all;
	uint64_t   *win;
	uint64_t	pos;

	CHECK_OK(lt_rowids_decode(packed, len, n, &all, &err), err);
	if (!all)
		return;
	CHECK(n == 0 || memcmp(all, expect, n * 8) == 0);
	lt_free(all);

	CHECK_OK(lt_rowid_seq_parse(packed, len, n, &s, &err), err);
	if (!s)
		return;
	CHECK_EQ_INT(lt_rowid_seq_len(s), n);
	win = malloc((n + 1) * 8);
	if (n <= 40)
	{
		/* Small: every window. */
		for (uint64_t a = 0; a <= n; a++)
			for (uint64_t b = a; b <= n; b++)
			{
				CHECK_OK(lt_rowid_seq_fill(s, a, b - a, win, &err), err);
				CHECK(b == a || memcmp(win, expect + a, (b - a) * 8) == 0);
			}
	}
	else
	{
		/* Large: windows in batch-sized steps plus pseudo-random ones. */
		uint64_t	r = 12345;

		for (int k = 0; k < 3000; k++)
		{
			uint64_t	a,
						w;

			r = r * 6364136223846793005ull + 1442695040888963407ull;
			a = k < 100 ? (uint64_t) k * (n / 100) : (r >> 33) % n;
			w = k < 100 ? n / 100 + 1 : (r >> 13) % 700;
			if (w > n - a)
				w = n - a;
			CHECK_OK(lt_rowid_seq_fill(s, a, w, win, &err), err);
			CHECK(w == 0 || memcmp(win, expect + a, w * 8) == 0);
		}
	}
	CHECK_CODE(lt_rowid_seq_fill(s, n, 1, win, &err), LT_EINVALID);
	CHECK_CODE(lt_rowid_seq_fill(s, 1, UINT64_MAX, win, &err), LT_EINVALID);
	for (uint64_t i = 0; i < n; i++)
	{
		CHECK(lt_rowid_seq_find(s, expect[i], &pos));
		CHECK_EQ_INT(pos, i);
	}
	free(win);
	lt_rowid_seq_free(s);
}

static bool
not_found(size_t len, uint64_t n, uint64_t id)
{
	lt_rowid_seq *s;
	uint64_t	pos;
	bool		r;

	if (lt_rowid_seq_parse(packed, len, n, &s, &err) != LT_OK)
		return false;
	r = !lt_rowid_seq_find(s, id, &pos);
	lt_rowid_seq_free(s);
	return r;
}

TEST(segment_kinds)
{
	Lt__Pb__U64Segment *segs[8];
	uint64_t	expect[4096];
	uint64_t	n = 0;
	size_t		len;
	uint64_t	start;

	/* Range, including one starting at 0 with start omitted. */
	segs[0] = seg_range(0, 10);
	segs[1] = seg_range(1000, 1003);
	for (uint64_t i = 0; i < 10; i++)
		expect[n++] = i;
	for (uint64_t i = 1000; i < 1003; i++)
		expect[n++] = i;
	len = pack_seq(segs, 2);
	check_seq(len, expect, n);
	CHECK(not_found(len, n, 10));
	CHECK(not_found(len, n, 1003));

	/* A single Range is an identity mapping; an empty segment does not spoil it. */
	segs[0] = seg_range(500, 600);
	segs[1] = seg_range(7, 7);
	len = pack_seq(segs, 2);
	{
		lt_rowid_seq *s;

		CHECK_OK(lt_rowid_seq_parse(packed, len, 100, &s, &err), err);
		if (s)
		{
			CHECK(lt_rowid_seq_is_range(s, &start));
			CHECK_EQ_INT(start, 500);
			lt_rowid_seq_free(s);
		}
	}

	/* RangeWithHoles with each array width; holes are absolute ids. */
	for (int width = 2; width <= 8; width *= 2)
	{
		static const uint64_t holes[] = {100, 101, 105, 119};

		n = 0;
		segs[0] = seg_holes(100, 120, width, 100, holes, 4);
		for (uint64_t v = 100; v < 120; v++)
			if (v != 100 && v != 101 && v != 105 && v != 119)
				expect[n++] = v;
		len = pack_seq(segs, 1);
		check_seq(len, expect, n);
		CHECK(not_found(len, n, 105));
		CHECK(not_found(len, n, 99));
	}

	/* RangeWithBitmap: LSB-first, and a range not a multiple of 8. */
	{
		bool		present[43];

		n = 0;
		for (int i = 0; i < 43; i++)
		{
			present[i] = (i % 3 == 0) || i == 42;
			if (present[i])
				expect[n++] = 7 + (uint64_t) i;
		}
		segs[0] = seg_bitmap(7, 50, present, 0);
		len = pack_seq(segs, 1);
		check_seq(len, expect, n);
		CHECK(not_found(len, n, 8));
		CHECK(not_found(len, n, 50));
	}

	/* SortedArray and Array at every width, after a Range. */
	for (int width = 2; width <= 8; width *= 2)
	{
		static const uint64_t sorted[] = {70000, 70002, 70003, 75000};
		static const uint64_t unsorted[] = {9000000000ull, 70001, 3, 70001 + 65535};

		n = 0;
		segs[0] = seg_range(0, 3);
		segs[1] = seg_array(true, width, 70000, sorted, 4);
		segs[2] = seg_array(false, width, width == 2 ? 70001 : 3, width == 2 ? unsorted + 1 : unsorted + 2,
							width == 2 ? 1 : 2);
		for (uint64_t i = 0; i < 3; i++)
			expect[n++] = i;
		for (int i = 0; i < 4; i++)
			expect[n++] = sorted[i];
		if (width == 2)
			expect[n++] = 70001;
		else
		{
			expect[n++] = 3;
			expect[n++] = 70001 + 65535;
		}
		len = pack_seq(segs, 3);
		check_seq(len, expect, n);
	}

	/* Raw u64 values, including the top of the range. */
	{
		static const uint64_t big[] = {UINT64_MAX, 0, UINT64_MAX - 1};

		segs[0] = seg_array(false, 8, 0, big, 3);
		len = pack_seq(segs, 1);
		check_seq(len, big, 3);
	}

	/* No segments: an empty fragment. */
	len = pack_seq(segs, 0);
	check_seq(len, NULL, 0);
	{
		lt_rowid_seq *s;

		CHECK_OK(lt_rowid_seq_parse(packed, len, 0, &s, &err), err);
		if (s)
		{
			CHECK(lt_rowid_seq_is_range(s, &start));
			lt_rowid_seq_free(s);
		}
	}
}

TEST(large_windows)
{
	Lt__Pb__U64Segment *segs[4];
	static bool present[20000];
	static uint64_t holes[3000];
	static uint64_t expect[60000];
	uint64_t	n = 0;
	size_t		len;

	for (int i = 0; i < 20000; i++)
		present[i] = (i * 7919) % 11 < 6;
	for (int i = 0; i < 3000; i++)
		holes[i] = 50000 + 3 * (uint64_t) i;
	segs[0] = seg_bitmap(1, 20001, present, 0);
	segs[1] = seg_holes(50000, 60000, 4, 50000, holes, 3000);
	segs[2] = seg_range(1 << 20, (1 << 20) + 5000);
	for (int i = 0; i < 20000; i++)
		if (present[i])
			expect[n++] = 1 + (uint64_t) i;
	for (uint64_t v = 50000; v < 60000; v++)
		if (v >= 59000 || (v - 50000) % 3 != 0)
			expect[n++] = v;
	for (uint64_t v = 1 << 20; v < (1 << 20) + 5000; v++)
		expect[n++] = v;
	len = pack_seq(segs, 3);
	check_seq(len, expect, n);
}

static lt_code
parse_code(size_t len, uint64_t rows)
{
	lt_rowid_seq *s = NULL;
	lt_code		rc = lt_rowid_seq_parse(packed, len, rows, &s, &err);

	lt_rowid_seq_free(s);
	return rc;
}

TEST(invalid_sequences)
{
	Lt__Pb__U64Segment *segs[4];
	size_t		len;

	/* The total must match the fragment. */
	segs[0] = seg_range(0, 10);
	len = pack_seq(segs, 1);
	CHECK_CODE(parse_code(len, 9), LT_ECORRUPT);
	CHECK(strstr(err.msg, "more ids") != NULL);
	CHECK_CODE(parse_code(len, 11), LT_ECORRUPT);
	CHECK(strstr(err.msg, "10 ids") != NULL);
	CHECK_CODE(parse_code(len, (UINT64_C(1) << 32) + 1), LT_ECORRUPT);
	CHECK_OK(parse_code(len, 10), err);

	/* A huge range against a small fragment is caught without allocating. */
	segs[0] = seg_range(0, UINT64_MAX);
	segs[1] = seg_range(0, UINT64_MAX);
	len = pack_seq(segs, 2);
	CHECK_CODE(parse_code(len, 10), LT_ECORRUPT);

	segs[0] = seg_range(10, 5);
	len = pack_seq(segs, 1);
	CHECK_CODE(parse_code(len, 0), LT_ECORRUPT);
	CHECK(strstr(err.msg, "backwards") != NULL);

	/* Holes: unsorted, repeated, outside the range, odd byte count. */
	{
		static const uint64_t h1[] = {5, 3};
		static const uint64_t h2[] = {3, 3};
		static const uint64_t h3[] = {3, 10};
		static const uint64_t h4[] = {3};

		segs[0] = seg_holes(0, 10, 2, 0, h1, 2);
		CHECK_CODE(parse_code(pack_seq(segs, 1), 8), LT_ECORRUPT);
		CHECK(strstr(err.msg, "ascending") != NULL);
		segs[0] = seg_holes(0, 10, 4, 0, h2, 2);
		CHECK_CODE(parse_code(pack_seq(segs, 1), 8), LT_ECORRUPT);
		segs[0] = seg_holes(0, 10, 8, 0, h3, 2);
		CHECK_CODE(parse_code(pack_seq(segs, 1), 8), LT_ECORRUPT);
		CHECK(strstr(err.msg, "outside") != NULL);
		segs[0] = seg_holes(0, 10, 2, 0, h4, 1);
		SB[0].a16.offsets.len = 3;
		CHECK_CODE(parse_code(pack_seq(segs, 1), 9), LT_ECORRUPT);
		CHECK(strstr(err.msg, "multiple") != NULL);
		/* Missing holes array. */
		segs[0] = seg_holes(0, 10, 2, 0, h4, 1);
		SB[0].holes.holes = NULL;
		CHECK_CODE(parse_code(pack_seq(segs, 1), 10), LT_ECORRUPT);
		CHECK(strstr(err.msg, "missing") != NULL);
	}

	/* Bitmap: wrong byte count, bits past the range. */
	{
		bool		present[10] = {true, true, true};

		segs[0] = seg_bitmap(0, 10, present, 1);
		CHECK_CODE(parse_code(pack_seq(segs, 1), 3), LT_ECORRUPT);
		CHECK(strstr(err.msg, "bitmap of") != NULL);
		segs[0] = seg_bitmap(0, 10, present, 0);
		SB[0].bytes[1] |= 0x80;
		CHECK_CODE(parse_code(pack_seq(segs, 1), 4), LT_ECORRUPT);
		CHECK(strstr(err.msg, "past its range") != NULL);
		segs[0] = seg_bitmap(0, 10, present, 0);
		SB[0].bitmap.bitmap.len = 0;
		CHECK_CODE(parse_code(pack_seq(segs, 1), 3), LT_ECORRUPT);
	}

	/* Sorted arrays must ascend; bases must not overflow; arrays need an encoding. */
	{
		static const uint64_t v[] = {5, 4};
		static const uint64_t one[] = {UINT64_MAX};

		segs[0] = seg_array(true, 2, 0, v, 2);
		CHECK_CODE(parse_code(pack_seq(segs, 1), 2), LT_ECORRUPT);
		segs[0] = seg_array(false, 2, 0, v, 2);
		CHECK_OK(parse_code(pack_seq(segs, 1), 2), err);
		segs[0] = seg_array(false, 4, UINT64_MAX - 3, one, 1);
		SB[0].a32.base_value = UINT64_MAX - 2;	/* + 3 overflows */
		CHECK_CODE(parse_code(pack_seq(segs, 1), 1), LT_ECORRUPT);
		CHECK(strstr(err.msg, "overflows") != NULL);
		segs[0] = seg_array(false, 8, 0, v, 2);
		SB[0].arr.array_case = LT__PB__ENCODED_U64_ARRAY__ARRAY__NOT_SET;
		CHECK_CODE(parse_code(pack_seq(segs, 1), 2), LT_ECORRUPT);
		segs[0] = seg_range(0, 1);
		SB[0].seg.segment_case = LT__PB__U64_SEGMENT__SEGMENT__NOT_SET;
		CHECK_CODE(parse_code(pack_seq(segs, 1), 0), LT_ECORRUPT);
		CHECK(strstr(err.msg, "no kind") != NULL);
	}

	/* Bytes that are not a protobuf. */
	{
		static const uint8_t junk[] = {0x0a, 0x7f, 0x01};
		lt_rowid_seq *s;

		CHECK_CODE(lt_rowid_seq_parse(junk, sizeof(junk), 0, &s, &err), LT_ECORRUPT);
		CHECK(s == NULL);
	}
}

/* --- version sequences ---------------------------------------------------- */

static size_t
pack_versions(Lt__Pb__U64Segment **spans, const uint64_t *versions, size_t n)
{
	Lt__Pb__RowDatasetVersionSequence vs;
	Lt__Pb__RowDatasetVersionRun runs[8],
			   *rp[8];
	size_t		len;

	lt__pb__row_dataset_version_sequence__init(&vs);
	for (size_t i = 0; i < n; i++)
	{
		lt__pb__row_dataset_version_run__init(&runs[i]);
		runs[i].span = spans[i];
		runs[i].has_version = true;
		runs[i].version = versions[i];
		rp[i] = &runs[i];
	}
	vs.n_runs = n;
	vs.runs = rp;
	len = lt__pb__row_dataset_version_sequence__get_packed_size(&vs);
	lt__pb__row_dataset_version_sequence__pack(&vs, packed);
	nsb = 0;
	return len;
}

TEST(version_sequences)
{
	Lt__Pb__U64Segment *spans[4];
	static const uint64_t versions[] = {3, 9, 4};
	lt_version_seq *s;
	uint64_t	out[30];
	size_t		len;

	spans[0] = seg_range(0, 10);
	spans[1] = seg_range(10, 10);	/* empty runs are skipped */
	spans[2] = seg_range(10, 25);
	len = pack_versions(spans, versions, 3);
	CHECK_OK(lt_version_seq_parse(packed, len, 25, &s, &err), err);
	if (s)
	{
		CHECK_EQ_INT(lt_version_seq_at(s, 0), 3);
		CHECK_EQ_INT(lt_version_seq_at(s, 9), 3);
		CHECK_EQ_INT(lt_version_seq_at(s, 10), 4);
		CHECK_EQ_INT(lt_version_seq_at(s, 24), 4);
		CHECK_OK(lt_version_seq_fill(s, 5, 10, out, &err), err);
		for (int i = 0; i < 10; i++)
			CHECK_EQ_INT(out[i], i < 5 ? 3 : 4);
		CHECK_CODE(lt_version_seq_fill(s, 20, 6, out, &err), LT_EINVALID);
		lt_version_seq_free(s);
	}
	spans[0] = seg_range(0, 10);
	spans[1] = seg_range(10, 25);
	len = pack_versions(spans, versions, 2);
	CHECK_CODE(lt_version_seq_parse(packed, len, 24, &s, &err), LT_ECORRUPT);
	spans[0] = seg_range(0, 10);
	spans[1] = seg_range(10, 25);
	len = pack_versions(spans, versions, 2);
	CHECK_CODE(lt_version_seq_parse(packed, len, 26, &s, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "covers 25") != NULL);
	spans[0] = NULL;
	len = pack_versions(spans, versions, 1);
	CHECK_CODE(lt_version_seq_parse(packed, len, 0, &s, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "no span") != NULL);
}

/* --- the stable_row_ids fixture ------------------------------------------- */

TEST(real_manifest)
{
	size_t		len;
	uint8_t    *buf = unit_read_file("stable_row_ids/v4.manifest", &len);
	uint64_t	pos;
	uint32_t	mlen;
	Lt__Pb__Manifest *m;

	CHECK(buf != NULL);
	if (!buf)
		return;
	/* Trailer: u64 manifest position, u16 0, u16 2, "LANC"; there a u32 length + protobuf. */
	CHECK(len >= 16 && memcmp(buf + len - 4, "LANC", 4) == 0);
	pos = lt_le64(buf + len - 16);
	CHECK(pos + 4 <= len);
	mlen = lt_le32(buf + pos);
	m = lt__pb__manifest__unpack(NULL, mlen, buf + pos + 4);
	CHECK(m != NULL);
	if (!m)
	{
		free(buf);
		return;
	}
	CHECK_EQ_INT(m->n_fragments, 3);
	for (size_t f = 0; f < m->n_fragments; f++)
	{
		Lt__Pb__DataFragment *fr = m->fragments[f];
		uint64_t   *ids;
		uint64_t	rows = fr->physical_rows;
		lt_version_seq *cv,
				   *uv;
		lt_rowid_seq *s;
		uint64_t	start;

		CHECK_EQ_INT(fr->row_id_sequence_case, LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS);
		CHECK_OK(lt_rowids_decode(fr->inline_row_ids.data, fr->inline_row_ids.len, rows, &ids, &err), err);
		CHECK_OK(lt_rowid_seq_parse(fr->inline_row_ids.data, fr->inline_row_ids.len, rows, &s, &err), err);
		CHECK_OK(lt_version_seq_parse(fr->inline_created_at_versions.data, fr->inline_created_at_versions.len,
									  rows, &cv, &err), err);
		CHECK_OK(lt_version_seq_parse(fr->inline_last_updated_at_versions.data,
									  fr->inline_last_updated_at_versions.len, rows, &uv, &err), err);
		if (!ids || !s || !cv || !uv)
			continue;
		/*
		 * Fragments 0 and 1 were appended (ids 0-99, 100-199); fragment 2
		 * holds the 20 rows updated at version 4, which kept their ids
		 * 5, 15, ..., 195 (the RangeWithBitmap encoding).
		 */
		if (fr->id < 2)
		{
			CHECK_EQ_INT(rows, 100);
			CHECK(lt_rowid_seq_is_range(s, &start));
			CHECK_EQ_INT(start, fr->id * 100);
			for (uint64_t i = 0; i < rows; i++)
			{
				CHECK_EQ_INT(ids[i], fr->id * 100 + i);
				CHECK_EQ_INT(lt_version_seq_at(cv, i), fr->id + 1);
				CHECK_EQ_INT(lt_version_seq_at(uv, i), fr->id + 1);
			}
		}
		else
		{
			CHECK_EQ_INT(rows, 20);
			CHECK(!lt_rowid_seq_is_range(s, &start));
			for (uint64_t i = 0; i < rows; i++)
			{
				CHECK_EQ_INT(ids[i], 5 + 10 * i);
				CHECK_EQ_INT(lt_version_seq_at(cv, i), i < 10 ? 1 : 2);
				CHECK_EQ_INT(lt_version_seq_at(uv, i), 4);
				CHECK(lt_rowid_seq_find(s, 5 + 10 * i, &pos) && pos == i);
			}
			CHECK(!lt_rowid_seq_find(s, 6, &pos));
			/* Truncations and the wrong row count are refused. */
			for (size_t k = 0; k < fr->inline_row_ids.len; k++)
			{
				lt_rowid_seq *t;

				if (lt_rowid_seq_parse(fr->inline_row_ids.data, k, rows, &t, &err) == LT_OK)
				{
					CHECK(false);
					lt_rowid_seq_free(t);
				}
			}
			{
				uint64_t   *none;

				CHECK_CODE(lt_rowids_decode(fr->inline_row_ids.data, fr->inline_row_ids.len, 19, &none, &err),
						   LT_ECORRUPT);
				CHECK(none == NULL);
			}
		}
		lt_free(ids);
		lt_rowid_seq_free(s);
		lt_version_seq_free(cv);
		lt_version_seq_free(uv);
	}
	lt__pb__manifest__free_unpacked(m, NULL);
	free(buf);
}

int
main(void)
{
	RUN(segment_kinds);
	RUN(large_windows);
	RUN(invalid_sequences);
	RUN(version_sequences);
	RUN(real_manifest);
	return unit_report("rowids");
}
