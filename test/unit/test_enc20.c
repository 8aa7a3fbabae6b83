/*
 * test_enc20.c — the 2.0 page decoder (lt_enc20) on hand-built pages.
 */
#include <zstd.h>

#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "util/lt_bytes.h"
#include "encoding/lt_enc20.h"
#include "proto/lt_enc20.pb-c.h"
#include "encoding/lt_fastlanes.h"
#include "encoding/lt_fsst.h"
#include "unit.h"

/* --- an arena for test-built encodings ---------------------------------- */

static void *arena[4096];
static int	n_arena;

static void *
A(size_t n)
{
	void	   *p = calloc(1, n);

	arena[n_arena++] = p;
	return p;
}

static void
arena_free(void)
{
	while (n_arena > 0)
		free(arena[--n_arena]);
}

#define NEW(T, INIT) ({ T *p_ = A(sizeof(T)); T v_ = INIT; *p_ = v_; p_; })

static Lt__Enc20__ArrayEncoding *
enc(void)
{
	return NEW(Lt__Enc20__ArrayEncoding, LT__ENC20__ARRAY_ENCODING__INIT);
}

static Lt__Enc20__Buffer *
buf(uint32_t idx)
{
	Lt__Enc20__Buffer *b = NEW(Lt__Enc20__Buffer, LT__ENC20__BUFFER__INIT);

	b->has_buffer_index = true;
	b->buffer_index = idx;
	return b;
}

static Lt__Enc20__ArrayEncoding *
flat(uint64_t bits, uint32_t idx)
{
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Flat *f = NEW(Lt__Enc20__Flat, LT__ENC20__FLAT__INIT);

	f->has_bits_per_value = true;
	f->bits_per_value = bits;
	f->buffer = buf(idx);
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT;
	e->flat = f;
	return e;
}

static Lt__Enc20__ArrayEncoding *
no_nulls(Lt__Enc20__ArrayEncoding *values)
{
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Nullable *n = NEW(Lt__Enc20__Nullable, LT__ENC20__NULLABLE__INIT);
	Lt__Enc20__Nullable__NoNull *nn = NEW(Lt__Enc20__Nullable__NoNull, LT__ENC20__NULLABLE__NO_NULL__INIT);

	nn->values = values;
	n->nullability_case = LT__ENC20__NULLABLE__NULLABILITY_NO_NULLS;
	n->no_nulls = nn;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE;
	e->nullable = n;
	return e;
}

static Lt__Enc20__ArrayEncoding *
some_nulls(Lt__Enc20__ArrayEncoding *validity, Lt__Enc20__ArrayEncoding *values)
{
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Nullable *n = NEW(Lt__Enc20__Nullable, LT__ENC20__NULLABLE__INIT);
	Lt__Enc20__Nullable__SomeNull *sn = NEW(Lt__Enc20__Nullable__SomeNull, LT__ENC20__NULLABLE__SOME_NULL__INIT);

	sn->validity = validity;
	sn->values = values;
	n->nullability_case = LT__ENC20__NULLABLE__NULLABILITY_SOME_NULLS;
	n->some_nulls = sn;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE;
	e->nullable = n;
	return e;
}

static Lt__Enc20__ArrayEncoding *
all_nulls(void)
{
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Nullable *n = NEW(Lt__Enc20__Nullable, LT__ENC20__NULLABLE__INIT);

	n->nullability_case = LT__ENC20__NULLABLE__NULLABILITY_ALL_NULLS;
	n->all_nulls = NEW(Lt__Enc20__Nullable__AllNull, LT__ENC20__NULLABLE__ALL_NULL__INIT);
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE;
	e->nullable = n;
	return e;
}

static Lt__Enc20__ArrayEncoding *
binary(Lt__Enc20__ArrayEncoding *indices, Lt__Enc20__ArrayEncoding *bytes, uint64_t adj)
{
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Binary *b = NEW(Lt__Enc20__Binary, LT__ENC20__BINARY__INIT);

	b->indices = indices;
	b->bytes = bytes;
	b->has_null_adjustment = true;
	b->null_adjustment = adj;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BINARY;
	e->binary = b;
	return e;
}

static Lt__Enc20__ArrayEncoding *
dictionary(Lt__Enc20__ArrayEncoding *indices, Lt__Enc20__ArrayEncoding *items, uint32_t n)
{
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Dictionary *d = NEW(Lt__Enc20__Dictionary, LT__ENC20__DICTIONARY__INIT);

	d->indices = indices;
	d->items = items;
	d->has_num_dictionary_items = true;
	d->num_dictionary_items = n;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY;
	e->dictionary = d;
	return e;
}

static Lt__Enc20__ArrayEncoding *
fsl(uint32_t dim, Lt__Enc20__ArrayEncoding *items)
{
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__FixedSizeList *f = NEW(Lt__Enc20__FixedSizeList, LT__ENC20__FIXED_SIZE_LIST__INIT);

	f->has_dimension = true;
	f->dimension = dim;
	f->items = items;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST;
	e->fixed_size_list = f;
	return e;
}

static Lt__Enc20__List *
list(Lt__Enc20__ArrayEncoding *offsets, uint64_t adj, uint64_t num_items)
{
	Lt__Enc20__List *l = NEW(Lt__Enc20__List, LT__ENC20__LIST__INIT);

	l->offsets = offsets;
	l->has_null_offset_adjustment = true;
	l->null_offset_adjustment = adj;
	l->has_num_items = true;
	l->num_items = num_items;
	return l;
}

/* --- fields, pages ------------------------------------------------------ */

static lt_field *
field(const char *lt)
{
	lt_field   *f = lt_calloc(1, sizeof(lt_field));
	lt_error	err = {0};

	f->name = lt_strdup("f");
	f->logical_type = lt_strdup(lt);
	f->nullable = true;
	if (lt_parse_logical_type(lt, f, &err) != LT_OK)
		fprintf(stderr, "bad test type %s: %s\n", lt, err.msg);
	return f;
}

static void
field_free(lt_field *f)
{
	int			i;

	for (i = 0; i < f->n_children; i++)
		field_free(f->children[i]);
	lt_free(f->children);
	lt_free(f->name);
	lt_free(f->logical_type);
	lt_free(f->timezone);
	lt_free(f);
}

static lt_enc20_page
page(int n, const uint8_t *const *bufs, const uint64_t *lens, uint64_t rows)
{
	lt_enc20_page pg;

	memset(&pg, 0, sizeof(pg));
	pg.path = "test.lance";
	pg.n_bufs = (uint32_t) n;
	pg.bufs = bufs;
	pg.lens = lens;
	pg.num_rows = rows;
	return pg;
}

static const char *
str_at(const lt_array *a, int64_t i, int64_t *len)
{
	*len = a->offsets[i + 1] - a->offsets[i];
	return (const char *) a->data + a->offsets[i];
}

#define CHECK_STR(a, i, s) do { int64_t l_; const char *p_ = str_at((a), (i), &l_); \
	CHECK(l_ == (int64_t) strlen(s) && memcmp(p_, (s), l_) == 0); } while (0)

/* --- tests -------------------------------------------------------------- */

TEST(flat_int32_some_nulls)
{
	int32_t		vals[6] = {10, 11, 12, 13, 14, 15};
	uint8_t		valid[1] = {0x2d};		/* 101101: rows 1 and 4 null */
	const uint8_t *bufs[2] = {valid, (const uint8_t *) vals};
	uint64_t	lens[2] = {1, sizeof(vals)};
	lt_enc20_page pg = page(2, bufs, lens, 6);
	lt_field   *f = field("int32");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = some_nulls(flat(1, 0), flat(32, 1));

	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 0, 4, a, &err), err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 4, 2, a, &err), err);
	CHECK_EQ_INT(a->length, 6);
	CHECK_EQ_INT(a->null_count, 2);
	CHECK(a->validity && !a->validity[1] && !a->validity[4] && a->validity[5]);
	CHECK_EQ_INT(((int32_t *) a->values)[0], 10);
	CHECK_EQ_INT(((int32_t *) a->values)[1], 0);	/* null slots read as zero */
	CHECK_EQ_INT(((int32_t *) a->values)[5], 15);
	/* past the page, and a buffer too short */
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 5, 2, a, &err), LT_ECORRUPT);
	lens[1] = 20;
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 6, a, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "test.lance") != NULL);
	/* a buffer index the page does not have */
	CHECK_CODE(lt_enc20_decode(&pg, flat(32, 7), f, 0, 1, a, &err), LT_ECORRUPT);
	/* a width that does not match the field */
	lens[1] = sizeof(vals);
	CHECK_CODE(lt_enc20_decode(&pg, flat(64, 1), f, 0, 1, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	lt_enc20_page_reset(&pg);
	arena_free();
}

TEST(bool_bitmap_offsets)
{
	uint8_t		bits[2] = {0xa5, 0x03};	/* 1010 0101, 0000 0011 */
	const uint8_t *bufs[1] = {bits};
	uint64_t	lens[1] = {2};
	lt_enc20_page pg = page(1, bufs, lens, 10);
	lt_field   *f = field("bool");
	lt_array   *a;
	lt_error	err = {0};
	int			i;
	const int	want[7] = {0, 0, 1, 0, 1, 1, 1};

	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, no_nulls(flat(1, 0)), f, 3, 7, a, &err), err);
	CHECK_EQ_INT(a->length, 7);
	for (i = 0; i < 7; i++)
		CHECK_EQ_INT(a->values[i], want[i]);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(all_null_and_empty)
{
	lt_enc20_page pg = page(0, NULL, NULL, 100);
	lt_field   *f = field("double");
	lt_field   *s = field("string");
	lt_array   *a,
			   *b;
	lt_error	err = {0};

	lt_array_new(f, &a, &err);
	lt_array_new(s, &b, &err);
	CHECK_OK(lt_enc20_decode(&pg, all_nulls(), f, 10, 90, a, &err), err);
	CHECK_EQ_INT(a->length, 90);
	CHECK_EQ_INT(a->null_count, 90);
	CHECK_OK(lt_enc20_decode(&pg, all_nulls(), s, 0, 3, b, &err), err);
	CHECK_EQ_INT(b->null_count, 3);
	CHECK_EQ_INT(b->offsets[3], 0);
	/* zero rows of anything decode to nothing */
	CHECK_OK(lt_enc20_decode(&pg, flat(64, 3), f, 0, 0, a, &err), err);
	CHECK_EQ_INT(a->length, 90);
	CHECK_CODE(lt_enc20_decode(&pg, enc(), f, 0, 1, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	lt_array_free(b);
	field_free(f);
	field_free(s);
	arena_free();
}

TEST(binary_null_adjustment)
{
	/* ["x", null, "z", "w"]: end offsets [1, 5, 2, 3], adjustment 4 */
	uint64_t	idx[4] = {1, 5, 2, 3};
	const char *bytes = "xzw";
	const uint8_t *bufs[2] = {(const uint8_t *) idx, (const uint8_t *) bytes};
	uint64_t	lens[2] = {sizeof(idx), 3};
	lt_enc20_page pg = page(2, bufs, lens, 4);
	lt_field   *f = field("string");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = binary(no_nulls(flat(64, 0)), flat(8, 1), 4);

	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 0, 4, a, &err), err);
	CHECK_EQ_INT(a->length, 4);
	CHECK_EQ_INT(a->null_count, 1);
	CHECK_STR(a, 0, "x");
	CHECK(!a->validity[1]);
	CHECK_STR(a, 1, "");
	CHECK_STR(a, 2, "z");
	CHECK_STR(a, 3, "w");
	/* starting right after the null slot: the previous end is 5 - 4 */
	CHECK_OK(lt_enc20_decode(&pg, e, f, 2, 2, a, &err), err);
	CHECK_STR(a, 4, "z");
	CHECK_STR(a, 5, "w");
	/* starting at the null slot */
	CHECK_OK(lt_enc20_decode(&pg, e, f, 1, 1, a, &err), err);
	CHECK(!a->validity[6]);
	CHECK_EQ_INT(a->null_count, 2);
	/* offsets that go backwards are corrupt */
	idx[2] = 0;
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 4, a, &err), LT_ECORRUPT);
	idx[2] = 2;
	/* bytes past the buffer */
	lens[1] = 2;
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 4, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(binary_under_nullable)
{
	/* a Nullable around Binary: the null slot's bytes are dropped */
	uint64_t	idx[3] = {2, 4, 6};
	const char *bytes = "aabbcc";
	uint8_t		valid[1] = {0x5};
	const uint8_t *bufs[3] = {valid, (const uint8_t *) idx, (const uint8_t *) bytes};
	uint64_t	lens[3] = {1, sizeof(idx), 6};
	lt_enc20_page pg = page(3, bufs, lens, 3);
	lt_field   *f = field("large_binary");
	lt_array   *a;
	lt_error	err = {0};

	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, some_nulls(flat(1, 0), binary(no_nulls(flat(64, 1)), flat(8, 2), 100)),
							 f, 0, 3, a, &err), err);
	CHECK_EQ_INT(a->null_count, 1);
	CHECK_STR(a, 0, "aa");
	CHECK_STR(a, 1, "");
	CHECK_STR(a, 2, "cc");
	CHECK_EQ_INT(a->data_len, 4);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(dictionary_strings)
{
	uint8_t		keys[5] = {0, 1, 2, 1, 2};
	uint64_t	ends[2] = {1, 3};
	const char *bytes = "abc";
	const uint8_t *bufs[3] = {keys, (const uint8_t *) ends, (const uint8_t *) bytes};
	uint64_t	lens[3] = {5, sizeof(ends), 3};
	lt_enc20_page pg = page(3, bufs, lens, 5);
	lt_field   *f = field("string");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = dictionary(no_nulls(flat(8, 0)),
											 binary(no_nulls(flat(64, 1)), flat(8, 2), 4), 2);

	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 0, 3, a, &err), err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 3, 2, a, &err), err);	/* the cached dictionary */
	CHECK_EQ_INT(a->length, 5);
	CHECK_EQ_INT(a->null_count, 1);
	CHECK(!a->validity[0]);
	CHECK_STR(a, 1, "a");
	CHECK_STR(a, 2, "bc");
	CHECK_STR(a, 3, "a");
	CHECK_STR(a, 4, "bc");
	lt_enc20_page_reset(&pg);
	keys[3] = 3;				/* past the dictionary */
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 5, a, &err), LT_ECORRUPT);
	lt_enc20_page_reset(&pg);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(fixed_size_list_items_nullable)
{
	int16_t		items[6] = {1, 2, 3, 4, 5, 6};
	uint8_t		ivalid[1] = {0x3b};		/* item 2 null */
	uint8_t		lvalid[1] = {0x5};		/* list 1 null */
	const uint8_t *bufs[3] = {lvalid, ivalid, (const uint8_t *) items};
	uint64_t	lens[3] = {1, 1, sizeof(items)};
	lt_enc20_page pg = page(3, bufs, lens, 3);
	lt_field   *f = field("fixed_size_list:int16:2");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = some_nulls(flat(1, 0), fsl(2, some_nulls(flat(1, 1), flat(16, 2))));

	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 1, 2, a, &err), err);
	CHECK_EQ_INT(a->length, 2);
	CHECK_EQ_INT(a->null_count, 1);
	CHECK(!a->validity[0] && a->validity[1]);
	CHECK_EQ_INT(a->children[0]->length, 4);
	CHECK_EQ_INT(a->children[0]->null_count, 1);
	CHECK(!a->children[0]->validity[0]);
	CHECK_EQ_INT(((int16_t *) a->children[0]->values)[3], 6);
	/* a dimension that disagrees with the schema */
	CHECK_CODE(lt_enc20_decode(&pg, fsl(3, flat(16, 2)), f, 0, 1, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(list_offsets)
{
	/* [[1,2], null, [], [3]]: end offsets [2, 6, 2, 3], adjustment 4 */
	uint64_t	offs[4] = {2, 6, 2, 3};
	const uint8_t *bufs[1] = {(const uint8_t *) offs};
	uint64_t	lens[1] = {sizeof(offs)};
	lt_enc20_page pg = page(1, bufs, lens, 4);
	lt_field   *f = field("list");
	lt_field   *item = field("int64");
	lt_array   *a;
	lt_error	err = {0};
	uint64_t	lo,
				hi;

	f->children = lt_calloc(1, sizeof(lt_field *));
	f->children[0] = item;
	f->n_children = 1;
	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_list_offsets(&pg, list(no_nulls(flat(64, 0)), 4, 3), 0, 4, a, &lo, &hi, &err), err);
	CHECK_EQ_INT(lo, 0);
	CHECK_EQ_INT(hi, 3);
	CHECK_EQ_INT(a->offsets[1], 2);
	CHECK_EQ_INT(a->offsets[2], 2);
	CHECK_EQ_INT(a->offsets[3], 2);
	CHECK_EQ_INT(a->offsets[4], 3);
	CHECK(!a->validity[1] && a->validity[2]);
	/* from the null list on: items [2, 3) */
	CHECK_OK(lt_enc20_list_offsets(&pg, list(no_nulls(flat(64, 0)), 4, 3), 1, 3, a, &lo, &hi, &err), err);
	CHECK_EQ_INT(lo, 2);
	CHECK_EQ_INT(hi, 3);
	CHECK_EQ_INT(a->length, 7);
	CHECK_EQ_INT(a->offsets[7] - a->offsets[4], 1);
	/* a zero adjustment, more items than the page has, out-of-order ends */
	CHECK_CODE(lt_enc20_list_offsets(&pg, list(no_nulls(flat(64, 0)), 0, 3), 0, 4, a, &lo, &hi, &err), LT_ECORRUPT);
	CHECK_CODE(lt_enc20_list_offsets(&pg, list(no_nulls(flat(64, 0)), 4, 2), 0, 4, a, &lo, &hi, &err), LT_ECORRUPT);
	offs[0] = 3;
	CHECK_CODE(lt_enc20_list_offsets(&pg, list(no_nulls(flat(64, 0)), 4, 3), 0, 4, a, &lo, &hi, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(bitpacked_signed)
{
	/* 3-bit signed values -1, 3, -4, 0, 2 packed LSB first */
	int			vals[5] = {-1, 3, -4, 0, 2};
	uint8_t		packed[2] = {0};
	const uint8_t *bufs[1] = {packed};
	uint64_t	lens[1] = {2};
	lt_enc20_page pg = page(1, bufs, lens, 5);
	lt_field   *f = field("int32");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Bitpacked *bp = NEW(Lt__Enc20__Bitpacked, LT__ENC20__BITPACKED__INIT);
	int			i;

	for (i = 0; i < 5; i++)
	{
		unsigned	v = (unsigned) vals[i] & 7;
		unsigned	o = (unsigned) i * 3;

		packed[o / 8] |= (uint8_t) (v << (o % 8));
		if (o % 8 > 5)
			packed[o / 8 + 1] |= (uint8_t) (v >> (8 - o % 8));
	}
	bp->has_compressed_bits_per_value = bp->has_uncompressed_bits_per_value = true;
	bp->compressed_bits_per_value = 3;
	bp->uncompressed_bits_per_value = 32;
	bp->buffer = buf(0);
	bp->has_signed_ = bp->signed_ = true;
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED;
	e->bitpacked = bp;
	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 0, 5, a, &err), err);
	for (i = 0; i < 5; i++)
		CHECK_EQ_INT(((int32_t *) a->values)[i], vals[i]);
	lens[0] = 1;
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 5, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(bitpacked_fastlanes)
{
	/* 1100 u32 values of 11 bits in two FastLanes blocks */
	uint32_t   *vals = calloc(2048, 4);
	uint8_t    *packed = calloc(2, lt_fl_packed_bytes(11));
	const uint8_t *bufs[1] = {packed};
	uint64_t	lens[1] = {2 * lt_fl_packed_bytes(11)};
	lt_enc20_page pg = page(1, bufs, lens, 1100);
	lt_field   *f = field("uint32");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__BitpackedForNonNeg *bp = NEW(Lt__Enc20__BitpackedForNonNeg, LT__ENC20__BITPACKED_FOR_NON_NEG__INIT);
	int			i,
				bad = 0;

	for (i = 0; i < 1100; i++)
		vals[i] = (uint32_t) (i * 7) & 0x7ff;
	lt_fl_pack(32, 11, vals, packed);
	lt_fl_pack(32, 11, vals + 1024, packed + lt_fl_packed_bytes(11));
	bp->has_compressed_bits_per_value = bp->has_uncompressed_bits_per_value = true;
	bp->compressed_bits_per_value = 11;
	bp->uncompressed_bits_per_value = 32;
	bp->buffer = buf(0);
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG;
	e->bitpacked_for_non_neg = bp;
	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 1000, 100, a, &err), err);
	for (i = 0; i < 100; i++)
		bad += ((uint32_t *) a->values)[i] != vals[1000 + i];
	CHECK_EQ_INT(bad, 0);
	lens[0] = lt_fl_packed_bytes(11) + 10;	/* second block cut short */
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 1000, 100, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	free(vals);
	free(packed);
	arena_free();
}

TEST(flat_zstd)
{
	int64_t		vals[300];
	uint8_t		comp[4096];
	size_t		clen;
	const uint8_t *bufs[1] = {comp};
	uint64_t	lens[1];
	lt_enc20_page pg;
	lt_field   *f = field("int64");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = flat(64, 0);
	Lt__Enc20__Compression *c = NEW(Lt__Enc20__Compression, LT__ENC20__COMPRESSION__INIT);
	int			i;

	for (i = 0; i < 300; i++)
		vals[i] = (int64_t) i * i;
	clen = ZSTD_compress(comp, sizeof(comp), vals, sizeof(vals), 3);
	CHECK(!ZSTD_isError(clen));
	lens[0] = clen;
	pg = page(1, bufs, lens, 300);
	c->scheme = "zstd";
	e->flat->compression = c;
	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 250, 50, a, &err), err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 0, 1, a, &err), err);
	CHECK_EQ_INT(((int64_t *) a->values)[0], 250 * 250);
	CHECK_EQ_INT(((int64_t *) a->values)[50], 0);
	lt_enc20_page_reset(&pg);
	lens[0] = clen - 4;			/* a truncated frame */
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 1, a, &err), LT_ECORRUPT);
	lens[0] = clen;
	lt_enc20_page_reset(&pg);
	c->scheme = "brotli";
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 1, a, &err), LT_EUNSUPPORTED);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(constant_fixed_binary_packed_struct)
{
	uint8_t		fsb[6] = {'a', 'b', 'c', 'd', 'e', 'f'};
	uint8_t		rows[3 * 12];
	const uint8_t *bufs[2] = {fsb, rows};
	uint64_t	lens[2] = {6, sizeof(rows)};
	lt_enc20_page pg = page(2, bufs, lens, 3);
	lt_field   *i16 = field("int16");
	lt_field   *bin = field("binary");
	lt_field   *st = field("struct");
	lt_array   *a,
			   *b,
			   *s;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *ce = enc(),
			   *fe = enc(),
			   *pe = enc();
	Lt__Enc20__Constant *c = NEW(Lt__Enc20__Constant, LT__ENC20__CONSTANT__INIT);
	Lt__Enc20__FixedSizeBinary *fb = NEW(Lt__Enc20__FixedSizeBinary, LT__ENC20__FIXED_SIZE_BINARY__INIT);
	Lt__Enc20__PackedStruct *ps = NEW(Lt__Enc20__PackedStruct, LT__ENC20__PACKED_STRUCT__INIT);
	Lt__Enc20__ArrayEncoding *inner[2];
	uint8_t		cv[2] = {0x34, 0x12};
	int			i;

	c->has_value = true;
	c->value.data = cv;
	c->value.len = 2;
	ce->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT;
	ce->constant = c;
	lt_array_new(i16, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, ce, i16, 0, 3, a, &err), err);
	CHECK_EQ_INT(((int16_t *) a->values)[2], 0x1234);

	fb->bytes = flat(8, 0);
	fb->has_byte_width = true;
	fb->byte_width = 2;
	fe->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_BINARY;
	fe->fixed_size_binary = fb;
	lt_array_new(bin, &b, &err);
	CHECK_OK(lt_enc20_decode(&pg, fe, bin, 1, 2, b, &err), err);
	CHECK_STR(b, 0, "cd");
	CHECK_STR(b, 1, "ef");

	/* struct {x: int32, y: int64} packed row by row */
	st->children = lt_calloc(2, sizeof(lt_field *));
	st->children[0] = field("int32");
	st->children[1] = field("int64");
	st->n_children = 2;
	for (i = 0; i < 3; i++)
	{
		lt_put32(rows + 12 * i, (uint32_t) (100 + i));
		lt_put64(rows + 12 * i + 4, (uint64_t) (1000 + i));
	}
	inner[0] = flat(32, 0);
	inner[1] = flat(64, 0);
	ps->n_inner = 2;
	ps->inner = inner;
	ps->buffer = buf(1);
	pe->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT;
	pe->packed_struct = ps;
	lt_array_new(st, &s, &err);
	CHECK_OK(lt_enc20_decode(&pg, pe, st, 1, 2, s, &err), err);
	CHECK_EQ_INT(s->length, 2);
	CHECK_EQ_INT(((int32_t *) s->children[0]->values)[1], 102);
	CHECK_EQ_INT(((int64_t *) s->children[1]->values)[0], 1001);
	lens[1] = 30;
	CHECK_CODE(lt_enc20_decode(&pg, pe, st, 0, 3, s, &err), LT_ECORRUPT);
	lt_array_free(a);
	lt_array_free(b);
	lt_array_free(s);
	field_free(i16);
	field_free(bin);
	field_free(st);
	arena_free();
}

TEST(fsst_strings)
{
	/* one symbol "hello" (code 0); "hello!" = [0, ESC, '!'], "hi" = [ESC,'h',ESC,'i'] */
	uint8_t		table[LT_FSST_TABLE_SIZE] = {0};
	uint8_t		comp[7] = {0, LT_FSST_ESC, '!', LT_FSST_ESC, 'h', LT_FSST_ESC, 'i'};
	uint64_t	ends[2] = {3, 7};
	const uint8_t *bufs[2] = {(const uint8_t *) ends, comp};
	uint64_t	lens[2] = {sizeof(ends), sizeof(comp)};
	lt_enc20_page pg = page(2, bufs, lens, 2);
	lt_field   *f = field("string");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = enc();
	Lt__Enc20__Fsst *fs = NEW(Lt__Enc20__Fsst, LT__ENC20__FSST__INIT);

	lt_put64(table, ((uint64_t) 0x46535354u << 32) | ((uint64_t) 1 << 24) | 1);
	memcpy(table + 8, "hello\0\0\0", 8);
	table[16] = 5;
	fs->binary = binary(no_nulls(flat(64, 0)), flat(8, 1), 100);
	fs->has_symbol_table = true;
	fs->symbol_table.data = table;
	fs->symbol_table.len = sizeof(table);
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FSST;
	e->fsst = fs;
	lt_array_new(f, &a, &err);
	CHECK_OK(lt_enc20_decode(&pg, e, f, 0, 2, a, &err), err);
	CHECK_STR(a, 0, "hello!");
	CHECK_STR(a, 1, "hi");
	comp[6] = LT_FSST_ESC;		/* a trailing escape */
	ends[1] = 6;
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 1, 1, a, &err), LT_ECORRUPT);
	fs->symbol_table.len = 100;
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 1, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

TEST(hostile_nesting)
{
	lt_enc20_page pg = page(0, NULL, NULL, 1);
	lt_field   *f = field("int32");
	lt_array   *a;
	lt_error	err = {0};
	Lt__Enc20__ArrayEncoding *e = flat(32, 0);
	int			i;

	for (i = 0; i < 100; i++)
		e = no_nulls(e);
	lt_array_new(f, &a, &err);
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 1, a, &err), LT_ECORRUPT);
	/* list and struct encodings are not values */
	e = enc();
	e->array_encoding_case = LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_STRUCT;
	CHECK_CODE(lt_enc20_decode(&pg, e, f, 0, 1, a, &err), LT_ECORRUPT);
	lt_array_free(a);
	field_free(f);
	arena_free();
}

int
main(void)
{
	RUN(flat_int32_some_nulls);
	RUN(bool_bitmap_offsets);
	RUN(all_null_and_empty);
	RUN(binary_null_adjustment);
	RUN(binary_under_nullable);
	RUN(dictionary_strings);
	RUN(fixed_size_list_items_nullable);
	RUN(list_offsets);
	RUN(bitpacked_signed);
	RUN(bitpacked_fastlanes);
	RUN(flat_zstd);
	RUN(constant_fixed_binary_packed_struct);
	RUN(fsst_strings);
	RUN(hostile_nesting);
	return unit_report("enc20");
}
