/*
 * test_keys.c — primary keys and Lance's KeyExistenceFilter (lt_keys.h).
 *
 * Hash vectors: SipHash-1-3 values come from CPython 3.11 (sys.hash_info.algorithm == "siphash13";
 * PYTHONHASHSEED=0 zeroes its keys), e.g. hash(struct.pack('<Q', 8) + struct.pack('<q', 5)); XXH64
 * values are the xxHash project's published ones.  The bit-exact comparison with the filters the
 * reference engine writes is test/interop/keys.sh.
 */
#include <math.h>

#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "proto/lt_file.pb-c.h"
#include "txn/lt_keys.h"
#include "unit.h"

static lt_error err;

TEST(siphash13_vectors)
{
	const uint8_t abc[] = "abc";
	const uint8_t hello[] = "hello world";
	const uint8_t long36[] = "0123456789abcdef0123456789abcdefXYZ";

	CHECK(lt_siphash13(0, 0, (const uint8_t *) "a", 1) == 0x407448d2b89b1813ULL);
	CHECK(lt_siphash13(0, 0, abc, 3) == 0xc03bc3a0042630f2ULL);
	CHECK(lt_siphash13(0, 0, hello, 11) == 0xb1b1f2e707e4ac8aULL);
	CHECK(lt_siphash13(0, 0, long36, 35) == 0xcf804991d9c7df32ULL);
	/* Rust's Hash of a Vec<u8>: the length as 8 bytes, then the bytes */
	CHECK(lt_key_hash_exact(NULL, 0) == 0xbd60acb658c79e45ULL);
	CHECK(lt_key_hash_exact((const uint8_t *) "a", 1) == 0xbeb9a6bbf61b58b4ULL);
	CHECK(lt_key_hash_exact(abc, 3) == 0x4aa3e4b34416e6c9ULL);
	CHECK(lt_key_hash_exact(hello, 11) == 0x846d8f5b292efb98ULL);
	CHECK(lt_key_hash_exact(long36, 35) == 0x416d1dd2f475c804ULL);
}

TEST(xxh64_vectors)
{
	CHECK(lt_xxh64(NULL, 0, 0) == 0xEF46DB3751D8E999ULL);
	CHECK(lt_xxh64((const uint8_t *) "a", 1, 0) == 0xD24EC4F1A98C6E5BULL);
	CHECK(lt_xxh64((const uint8_t *) "abc", 3, 0) == 0x44BC2CF5AD770999ULL);
	/* every length up to 100 takes a different tail path; the function must be deterministic and
	 * sensitive to every byte */
	{
		uint8_t		buf[100];

		for (int i = 0; i < 100; i++)
			buf[i] = (uint8_t) (i * 7 + 1);
		for (size_t n = 1; n <= 100; n++)
		{
			uint64_t	h = lt_xxh64(buf, n, 0);

			buf[n - 1] ^= 1;
			CHECK(lt_xxh64(buf, n, 0) != h);
			buf[n - 1] ^= 1;
			CHECK(lt_xxh64(buf, n, 0) == h);
		}
	}
}

TEST(key_bytes)
{
	lt_key_buf	b = {0};
	const uint8_t one[] = {5, 0, 0, 0, 0, 0, 0, 0};
	const uint8_t comp[] = {0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 'h', 0xc3, 0xa9, 'l', 'l', 'o', 0};

	CHECK_OK(lt_key_buf_add_int64(&b, 5, false, &err), err);
	CHECK_EQ_INT(b.len, 8);
	CHECK(memcmp(b.data, one, 8) == 0);
	CHECK(lt_key_hash_exact(b.data, b.len) == 0xd6da9bfd474ded0fULL);
	lt_key_buf_reset(&b);
	/* a composite key: every part followed by a 0 byte, in key order */
	CHECK_OK(lt_key_buf_add_int64(&b, -7, true, &err), err);
	CHECK_OK(lt_key_buf_add_bytes(&b, "h\xc3\xa9llo", 6, true, &err), err);
	CHECK_EQ_INT(b.len, sizeof(comp));
	CHECK(memcmp(b.data, comp, sizeof(comp)) == 0);
	lt_key_buf_reset(&b);
	CHECK_OK(lt_key_buf_add_uint64(&b, UINT64_MAX, false, &err), err);
	CHECK_EQ_INT(b.len, 8);
	CHECK(b.data[0] == 0xff && b.data[7] == 0xff);
	lt_key_buf_free(&b);
}

TEST(bloom_sizing)
{
	/* Lance 8 sizes its filter for 8192 items at 0.00057: 32 KiB (what the reference writes) */
	CHECK_EQ_INT(lt_sbbf_log2_bytes(LT_KEY_BLOOM_ITEMS, LT_KEY_BLOOM_PROBABILITY), 15);
	CHECK_EQ_INT(lt_sbbf_log2_bytes(0, 0.01), 5);		/* clamped to one block */
	CHECK_EQ_INT(lt_sbbf_log2_bytes(1ULL << 40, 0.01), 27);	/* clamped to 128 MiB */
	/* more values or a lower probability never shrink the filter */
	for (int k = 1; k < 20; k++)
		CHECK(lt_sbbf_log2_bytes(1ULL << k, 0.001) <= lt_sbbf_log2_bytes(1ULL << (k + 1), 0.001));
	CHECK(lt_sbbf_log2_bytes(10000, 0.01) <= lt_sbbf_log2_bytes(10000, 0.0001));
}

static lt_key_filter *
filter_of(lt_key_filter_kind kind, int64_t from, int64_t to, int64_t step)
{
	int32_t		ids[] = {0};
	lt_key_filter *f = NULL;
	lt_key_buf	b = {0};

	CHECK_OK(lt_key_filter_new(kind, ids, 1, &f, &err), err);
	for (int64_t v = from; f && v < to; v += step)
	{
		lt_key_buf_reset(&b);
		CHECK_OK(lt_key_buf_add_int64(&b, v, false, &err), err);
		CHECK_OK(lt_key_filter_add(f, b.data, b.len, &err), err);
	}
	lt_key_buf_free(&b);
	return f;
}

static bool
has_int(lt_key_filter *f, int64_t v)
{
	uint8_t		le[8];

	memcpy(le, &v, 8);
	return lt_key_filter_may_contain(f, le, 8);
}

TEST(filter_membership)
{
	lt_key_filter *bloom = filter_of(LT_KEY_FILTER_BLOOM, 0, 20000, 2);
	lt_key_filter *exact = filter_of(LT_KEY_FILTER_EXACT, 0, 20000, 2);
	int			fp_bloom = 0;

	if (!bloom || !exact)
		return;
	CHECK_EQ_INT(bloom->bitmap_len, 32768);
	CHECK_EQ_INT(bloom->num_bits, 262144);
	for (int64_t v = 0; v < 20000; v += 2)
	{
		CHECK(has_int(bloom, v));	/* never a false negative */
		CHECK(has_int(exact, v));
	}
	for (int64_t v = 1; v < 20000; v += 2)
	{
		CHECK(!has_int(exact, v));
		fp_bloom += has_int(bloom, v);
	}
	/* 10000 keys in a filter sized for 8192: a few percent false positives, not all */
	CHECK(fp_bloom > 0 && fp_bloom < 2000);
	lt_key_filter_free(bloom);
	lt_key_filter_free(exact);

	/* a few keys: essentially no false positives */
	bloom = filter_of(LT_KEY_FILTER_BLOOM, 0, 100, 1);
	fp_bloom = 0;
	for (int64_t v = 1000; v < 101000; v++)
		fp_bloom += has_int(bloom, v);
	CHECK(fp_bloom < 10);
	lt_key_filter_free(bloom);
}

TEST(filter_overlap)
{
	lt_key_filter *a = filter_of(LT_KEY_FILTER_BLOOM, 0, 500, 1);
	lt_key_filter *b = filter_of(LT_KEY_FILTER_BLOOM, 500, 1000, 1);
	lt_key_filter *c = filter_of(LT_KEY_FILTER_BLOOM, 499, 501, 1);
	lt_key_filter *ea = filter_of(LT_KEY_FILTER_EXACT, 0, 500, 1);
	lt_key_filter *eb = filter_of(LT_KEY_FILTER_EXACT, 500, 1000, 1);
	lt_key_filter *ec = filter_of(LT_KEY_FILTER_EXACT, 499, 501, 1);
	lt_key_filter *empty = filter_of(LT_KEY_FILTER_BLOOM, 0, 0, 1);
	lt_key_filter *other_key = NULL;
	int32_t		ids2[] = {1};
	uint8_t    *enc = NULL;
	size_t		enc_len = 0;
	lt_key_filter *da = NULL,
			   *db = NULL;

	CHECK_OK(lt_key_filter_new(LT_KEY_FILTER_BLOOM, ids2, 1, &other_key, &err), err);
	if (!a || !b || !c || !ea || !eb || !ec || !empty || !other_key)
		return;
	/* members listed: precise, and symmetric */
	CHECK_EQ_INT(lt_key_filter_overlap(a, b), LT_KEYS_DISJOINT);
	CHECK_EQ_INT(lt_key_filter_overlap(b, a), LT_KEYS_DISJOINT);
	CHECK_EQ_INT(lt_key_filter_overlap(a, c), LT_KEYS_OVERLAP);
	CHECK_EQ_INT(lt_key_filter_overlap(c, b), LT_KEYS_OVERLAP);
	CHECK_EQ_INT(lt_key_filter_overlap(a, empty), LT_KEYS_DISJOINT);
	/* exact sets */
	CHECK_EQ_INT(lt_key_filter_overlap(ea, eb), LT_KEYS_DISJOINT);
	CHECK_EQ_INT(lt_key_filter_overlap(ec, ea), LT_KEYS_OVERLAP);
	CHECK_EQ_INT(lt_key_filter_overlap(eb, ec), LT_KEYS_OVERLAP);
	/* incomparable: different kinds, different key fields */
	CHECK_EQ_INT(lt_key_filter_overlap(a, ea), LT_KEYS_INCOMPARABLE);
	CHECK_EQ_INT(lt_key_filter_overlap(ea, a), LT_KEYS_INCOMPARABLE);
	CHECK_EQ_INT(lt_key_filter_overlap(empty, other_key), LT_KEYS_INCOMPARABLE);

	/* decoded filters know no members: Lance's bit-pattern test; 500 keys each share bits */
	CHECK_OK(lt_key_filter_encode(a, &enc, &enc_len, &err), err);
	CHECK_OK(lt_key_filter_decode(enc, enc_len, &da, &err), err);
	lt_free(enc);
	CHECK_OK(lt_key_filter_encode(b, &enc, &enc_len, &err), err);
	CHECK_OK(lt_key_filter_decode(enc, enc_len, &db, &err), err);
	lt_free(enc);
	if (da && db)
	{
		CHECK(!da->members_complete);
		CHECK_EQ_INT(lt_key_filter_overlap(da, db), LT_KEYS_OVERLAP);
		/* one side listing its keys is enough to be precise */
		CHECK_EQ_INT(lt_key_filter_overlap(a, db), LT_KEYS_DISJOINT);
		CHECK_EQ_INT(lt_key_filter_overlap(db, a), LT_KEYS_DISJOINT);
		CHECK_EQ_INT(lt_key_filter_overlap(c, db), LT_KEYS_OVERLAP);
		/* different sizing parameters */
		db->number_of_items = 4096;
		CHECK_EQ_INT(lt_key_filter_overlap(da, db), LT_KEYS_INCOMPARABLE);
		CHECK_EQ_INT(lt_key_filter_overlap(db, a), LT_KEYS_INCOMPARABLE);
		db->number_of_items = LT_KEY_BLOOM_ITEMS;
		db->probability = 0.001;
		CHECK_EQ_INT(lt_key_filter_overlap(a, db), LT_KEYS_INCOMPARABLE);
	}
	lt_key_filter_free(da);
	lt_key_filter_free(db);
	lt_key_filter_free(a);
	lt_key_filter_free(b);
	lt_key_filter_free(c);
	lt_key_filter_free(ea);
	lt_key_filter_free(eb);
	lt_key_filter_free(ec);
	lt_key_filter_free(empty);
	lt_key_filter_free(other_key);
}

/* Random pairs: overlap is symmetric, and never "disjoint" when a key is in both. */
TEST(overlap_property)
{
	uint64_t	seed = 0x5eed0008;

	for (int round = 0; round < 200; round++)
	{
		lt_key_filter_kind kind = (unit_xorshift(&seed) & 1) ? LT_KEY_FILTER_BLOOM : LT_KEY_FILTER_EXACT;
		int64_t		a0 = (int64_t) (unit_xorshift(&seed) % 2000),
					a1 = a0 + (int64_t) (unit_xorshift(&seed) % 300);
		int64_t		b0 = (int64_t) (unit_xorshift(&seed) % 2000),
					b1 = b0 + (int64_t) (unit_xorshift(&seed) % 300);
		lt_key_filter *a = filter_of(kind, a0, a1, 1),
				   *b = filter_of(kind, b0, b1, 1);
		bool		common = a0 < b1 && b0 < a1;
		lt_key_overlap ab, ba;

		if (!a || !b)
			return;
		ab = lt_key_filter_overlap(a, b);
		ba = lt_key_filter_overlap(b, a);
		CHECK_EQ_INT(ab, ba);
		if (common)
			CHECK_EQ_INT(ab, LT_KEYS_OVERLAP);
		else if (kind == LT_KEY_FILTER_EXACT)
			CHECK_EQ_INT(ab, LT_KEYS_DISJOINT);
		lt_key_filter_free(a);
		lt_key_filter_free(b);
	}
}

TEST(pb_roundtrip)
{
	lt_key_filter *a = filter_of(LT_KEY_FILTER_BLOOM, 10, 20, 1);
	lt_key_filter *e = filter_of(LT_KEY_FILTER_EXACT, 10, 20, 1);
	lt_key_filter *d = NULL;
	uint8_t    *enc = NULL;
	size_t		len = 0;

	if (!a || !e)
		return;
	CHECK_OK(lt_key_filter_encode(a, &enc, &len, &err), err);
	CHECK_OK(lt_key_filter_decode(enc, len, &d, &err), err);
	if (d)
	{
		CHECK_EQ_INT(d->kind, LT_KEY_FILTER_BLOOM);
		CHECK_EQ_INT(d->n_field_ids, 1);
		CHECK_EQ_INT(d->field_ids[0], 0);
		CHECK_EQ_INT(d->bitmap_len, 32768);
		CHECK_EQ_INT(d->num_bits, 262144);
		CHECK_EQ_INT(d->number_of_items, 8192);
		CHECK(d->probability == 0.00057);
		CHECK(memcmp(d->bitmap, a->bitmap, 32768) == 0);
		CHECK(has_int(d, 15) && !has_int(d, 25000));
	}
	lt_key_filter_free(d);
	d = NULL;
	/* garbage, a truncated message, a bitmap that is not whole blocks */
	CHECK_CODE(lt_key_filter_decode(enc, len - 100, &d, &err), LT_ECORRUPT);
	{
		Lt__Pb__Transaction__KeyExistenceFilter msg = LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__INIT;
		Lt__Pb__Transaction__BloomFilter bl = LT__PB__TRANSACTION__BLOOM_FILTER__INIT;
		uint8_t		bits[33] = {0};

		bl.has_bitmap = true;
		bl.bitmap.data = bits;
		bl.bitmap.len = 33;
		msg.data_case = LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__DATA_BLOOM;
		msg.bloom = &bl;
		CHECK_CODE(lt_key_filter_from_pb(&msg, &d, &err), LT_ECORRUPT);
		/* zero parameters are Lance's defaults; no data at all is an empty exact set */
		bl.bitmap.len = 32;
		CHECK_OK(lt_key_filter_from_pb(&msg, &d, &err), err);
		if (d)
			CHECK(d->number_of_items == 8192 && d->probability == 0.00057 && d->num_bits == 256);
		lt_key_filter_free(d);
		msg.data_case = LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__DATA__NOT_SET;
		CHECK_OK(lt_key_filter_from_pb(&msg, &d, &err), err);
		if (d)
			CHECK(d->kind == LT_KEY_FILTER_EXACT && d->n_hashes == 0);
		lt_key_filter_free(d);
		d = NULL;
	}
	lt_free(enc);

	/* exact sets round-trip, sorted and unique */
	CHECK_OK(lt_key_filter_add(e, (const uint8_t *) "\x0a\0\0\0\0\0\0\0", 8, &err), err);	/* a duplicate */
	CHECK_OK(lt_key_filter_encode(e, &enc, &len, &err), err);
	CHECK_OK(lt_key_filter_decode(enc, len, &d, &err), err);
	if (d)
	{
		CHECK_EQ_INT(d->kind, LT_KEY_FILTER_EXACT);
		CHECK_EQ_INT(d->n_hashes, 10);
		CHECK(has_int(d, 10) && has_int(d, 19) && !has_int(d, 20));
		CHECK_EQ_INT(lt_key_filter_overlap(d, e), LT_KEYS_OVERLAP);
	}
	lt_free(enc);
	lt_key_filter_free(d);
	lt_key_filter_free(a);
	lt_key_filter_free(e);
}

static Lt__Pb__Field *
pbf(const char *name, int id, int parent, const char *type)
{
	Lt__Pb__Field *f = calloc(1, sizeof(Lt__Pb__Field));

	lt__pb__field__init(f);
	f->name = (char *) name;
	f->has_id = f->has_parent_id = true;
	f->id = id;
	f->parent_id = parent;
	f->logical_type = (char *) type;
	return f;
}

static void
pbf_meta(Lt__Pb__Field *f, const char *key, const char *value)
{
	Lt__Pb__Field__MetadataEntry *e = calloc(1, sizeof(*e));

	lt__pb__field__metadata_entry__init(e);
	e->key = (char *) key;
	e->has_value = true;
	e->value.data = (uint8_t *) value;
	e->value.len = strlen(value);
	f->metadata = realloc(f->metadata, (f->n_metadata + 1) * sizeof(*f->metadata));
	f->metadata[f->n_metadata++] = e;
}

static void
pbf_free(Lt__Pb__Field *f)
{
	for (size_t i = 0; i < f->n_metadata; i++)
		free(f->metadata[i]);
	free(f->metadata);
	free(f);
}

TEST(schema_primary_key)
{
	Lt__Pb__Field *fs[6];
	lt_schema  *s = NULL;
	const lt_field **key = NULL;
	int			n = -1;

	fs[0] = pbf("a", 0, -1, "string");
	fs[1] = pbf("b", 1, -1, "int32");
	fs[2] = pbf("c", 2, -1, "int64");
	fs[3] = pbf("d", 3, -1, "uint64");
	fs[4] = pbf("e", 4, -1, "int16");
	fs[5] = pbf("f", 5, -1, "binary");
	/* the reference writes both forms: metadata and the proto flag + position */
	pbf_meta(fs[0], LT_PK_POSITION_METADATA_KEY, "2");
	fs[0]->has_unenforced_primary_key = fs[0]->unenforced_primary_key = true;
	fs[0]->has_unenforced_primary_key_position = true;
	fs[0]->unenforced_primary_key_position = 2;
	pbf_meta(fs[1], LT_PK_POSITION_METADATA_KEY, "1");	/* metadata only */
	pbf_meta(fs[2], LT_PK_METADATA_KEY, "TRUE");		/* the legacy flag: unpositioned, after the others */
	fs[3]->has_unenforced_primary_key = fs[3]->unenforced_primary_key = true;	/* proto flag only */
	pbf_meta(fs[4], LT_PK_METADATA_KEY, "false");		/* not a key */
	pbf_meta(fs[5], LT_PK_POSITION_METADATA_KEY, "x");	/* not a number, no flag: not a key */
	CHECK_OK(lt_schema_from_pb(fs, 6, &s, &err), err);
	if (s)
	{
		CHECK_OK(lt_schema_primary_key(s, &key, &n, &err), err);
		CHECK_EQ_INT(n, 4);
		if (n == 4)
		{
			CHECK(strcmp(key[0]->name, "b") == 0);
			CHECK(strcmp(key[1]->name, "a") == 0);
			CHECK(strcmp(key[2]->name, "c") == 0);
			CHECK(strcmp(key[3]->name, "d") == 0);
			CHECK_EQ_INT(lt_key_kind_of(key[0]), LT_KEY_INT64);
			CHECK_EQ_INT(lt_key_kind_of(key[1]), LT_KEY_STRING);
			CHECK_EQ_INT(lt_key_kind_of(key[3]), LT_KEY_UINT64);
		}
		CHECK_EQ_INT(lt_key_kind_of(s->fields[4]), LT_KEY_UNSUPPORTED);
		CHECK_EQ_INT(lt_key_kind_of(s->fields[5]), LT_KEY_BINARY);
		lt_free(key);
		lt_schema_free(s);
	}
	/* no key */
	s = NULL;
	CHECK_OK(lt_schema_from_pb(fs + 4, 2, &s, &err), err);
	if (s)
	{
		CHECK_OK(lt_schema_primary_key(s, &key, &n, &err), err);
		CHECK(n == 0 && key == NULL);
		lt_schema_free(s);
	}
	for (int i = 0; i < 6; i++)
		pbf_free(fs[i]);
}

TEST(key_from_row)
{
	Lt__Pb__Field *fs[2] = {pbf("b", 0, -1, "int32"), pbf("a", 1, -1, "string")};
	lt_schema  *s = NULL;
	lt_array   *cols[2] = {NULL, NULL};
	lt_key_buf	kb = {0};
	bool		is_null = true;
	const uint8_t comp[] = {0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 'x', 'y', 0};

	CHECK_OK(lt_schema_from_pb(fs, 2, &s, &err), err);
	if (!s)
		return;
	CHECK_OK(lt_array_new(s->fields[0], &cols[0], &err), err);
	CHECK_OK(lt_array_new(s->fields[1], &cols[1], &err), err);
	if (cols[0] && cols[1])
	{
		int32_t		v[2] = {-7, 3};

		CHECK_OK(lt_array_reserve(cols[0], 2, &err), err);
		memcpy(cols[0]->values, v, 8);
		cols[0]->length = 2;
		CHECK_OK(lt_array_ensure_validity(cols[0], &err), err);
		cols[0]->validity[1] = 0;
		CHECK_OK(lt_array_reserve(cols[1], 2, &err), err);
		CHECK_OK(lt_array_reserve_data(cols[1], 2, &err), err);
		memcpy(cols[1]->data, "xy", 2);
		cols[1]->offsets[0] = 0;
		cols[1]->offsets[1] = 2;
		cols[1]->offsets[2] = 2;
		cols[1]->data_len = 2;
		cols[1]->length = 2;
		CHECK_OK(lt_key_from_row(&kb, (const lt_field *const *) s->fields, 2, cols, 0, &is_null, &err), err);
		CHECK(!is_null);
		CHECK_EQ_INT(kb.len, sizeof(comp));
		CHECK(memcmp(kb.data, comp, sizeof(comp)) == 0);
		CHECK_OK(lt_key_from_row(&kb, (const lt_field *const *) s->fields, 2, cols, 1, &is_null, &err), err);
		CHECK(is_null);
		/* one column: no separator */
		CHECK_OK(lt_key_from_row(&kb, (const lt_field *const *) s->fields + 1, 1, cols + 1, 0, &is_null, &err), err);
		CHECK(kb.len == 2 && memcmp(kb.data, "xy", 2) == 0);
	}
	lt_array_free(cols[0]);
	lt_array_free(cols[1]);
	lt_key_buf_free(&kb);
	lt_schema_free(s);
	pbf_free(fs[0]);
	pbf_free(fs[1]);
}

int
main(void)
{
	RUN(siphash13_vectors);
	RUN(xxh64_vectors);
	RUN(key_bytes);
	RUN(bloom_sizing);
	RUN(filter_membership);
	RUN(filter_overlap);
	RUN(overlap_property);
	RUN(pb_roundtrip);
	RUN(schema_primary_key);
	RUN(key_from_row);
	return unit_report("keys");
}
