/*
 * Unit tests of lt_roaring: the portable-format validator and decoders, and
 * the row-address set.  Hand-built inputs pin down each rule; bitmaps
 * serialized by CRoaring itself (a trusted writer) and mutations of them check
 * that whatever the validator accepts decodes exactly as CRoaring reads it.
 */
#include <roaring/roaring.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "table/lt_roaring.h"
#include "unit.h"

static lt_error err;

/* --- a tiny writer for hand-built inputs ---------------------------------- */

typedef struct wbuf
{
	uint8_t		b[300000];
	size_t		n;
} wbuf;

static void w16(wbuf *w, uint16_t v) { lt_put16(w->b + w->n, v); w->n += 2; }
static void w32(wbuf *w, uint32_t v) { lt_put32(w->b + w->n, v); w->n += 4; }

/* Container descriptions for hand-built bitmaps. */
typedef struct hc
{
	uint16_t	key;
	char		kind;			/* 'a' array, 'b' bitmap, 'r' run */
	uint32_t	n;				/* values (a), runs (r) or set bits (b: first n) */
	const uint16_t *vals;		/* a: values; r: start,len-1 pairs */
	int			card_adjust;	/* added to the header cardinality */
} hc;

static uint32_t
hc_card(const hc *c)
{
	if (c->kind == 'r')
	{
		uint32_t	s = 0;

		for (uint32_t j = 0; j < c->n; j++)
			s += (uint32_t) c->vals[2 * j + 1] + 1;
		return s;
	}
	return c->n;
}

/* Serialize; force_offsets: -1 = format default, 0 = none, 1 = always. */
static void
build(wbuf *w, const hc *cs, uint32_t n, bool runcookie, int bad_offset_at)
{
	size_t		offpos = 0;
	bool		offsets;

	w->n = 0;
	if (runcookie)
	{
		uint8_t		flags[8192] = {0};

		w32(w, LT_ROARING_COOKIE_RUN | ((n - 1) << 16));
		for (uint32_t i = 0; i < n; i++)
			if (cs[i].kind == 'r')
				flags[i / 8] |= 1 << (i % 8);
		memcpy(w->b + w->n, flags, (n + 7) / 8);
		w->n += (n + 7) / 8;
		offsets = n >= 4;
	}
	else
	{
		w32(w, LT_ROARING_COOKIE_NORUN);
		w32(w, n);
		offsets = true;
	}
	for (uint32_t i = 0; i < n; i++)
	{
		w16(w, cs[i].key);
		w16(w, (uint16_t) (hc_card(&cs[i]) + cs[i].card_adjust - 1));
	}
	if (offsets)
	{
		offpos = w->n;
		w->n += 4 * (size_t) n;
	}
	for (uint32_t i = 0; i < n; i++)
	{
		if (offsets)
			lt_put32(w->b + offpos + 4 * i, (uint32_t) w->n + (bad_offset_at == (int) i ? 2 : 0));
		if (cs[i].kind == 'a')
			for (uint32_t j = 0; j < cs[i].n; j++)
				w16(w, cs[i].vals[j]);
		else if (cs[i].kind == 'r')
		{
			w16(w, (uint16_t) cs[i].n);
			for (uint32_t j = 0; j < 2 * cs[i].n; j++)
				w16(w, cs[i].vals[j]);
		}
		else
		{
			memset(w->b + w->n, 0, 8192);
			for (uint32_t j = 0; j < cs[i].n; j++)
				w->b[w->n + j / 8] |= 1 << (j % 8);
			w->n += 8192;
		}
	}
}

static bool
decodes_as(const uint8_t *buf, size_t len, const uint32_t *expect, uint64_t n)
{
	uint32_t   *vals;
	uint64_t	got;
	size_t		used;
	bool		ok;

	if (lt_roaring_decode_array(buf, len, UINT64_C(1) << 32, &vals, &got, &used, &err) != LT_OK)
	{
		fprintf(stderr, "decode: %s\n", err.msg);
		return false;
	}
	ok = got == n && used == len && (n == 0 || memcmp(vals, expect, n * 4) == 0);
	lt_free(vals);
	return ok;
}

static bool
rejects_all_prefixes(const uint8_t *buf, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (lt_roaring_validate(buf, k, NULL, &err) != LT_ECORRUPT)
		{
			fprintf(stderr, "prefix of %zu bytes (of %zu) accepted\n", k, len);
			return false;
		}
	return true;
}

static wbuf W;
static void agree_with_croaring(const uint8_t *buf, size_t len);

TEST(hand_built_valid)
{
	static const uint16_t a1[] = {1, 5, 65535};
	static const uint16_t r1[] = {10, 2, 100, 0};	/* 10..12, 100 */
	static const uint16_t a2[] = {7};
	hc			cs[] = {
		{0, 'a', 3, a1, 0},
		{1, 'r', 2, r1, 0},
		{3, 'b', 5000, NULL, 0},
		{16, 'a', 1, a2, 0},
	};
	uint32_t	expect[3 + 4 + 5000 + 1];
	uint64_t	n = 0;
	lt_roaring_info info;
	uint64_t   *bits;

	expect[n++] = 1;
	expect[n++] = 5;
	expect[n++] = 65535;
	expect[n++] = 65536 + 10;
	expect[n++] = 65536 + 11;
	expect[n++] = 65536 + 12;
	expect[n++] = 65536 + 100;
	for (uint32_t j = 0; j < 5000; j++)
		expect[n++] = 3 * 65536 + j;
	expect[n++] = 0x00100007u;

	/* The same content as 12347 with offsets (4 containers), and 12346 without the run. */
	build(&W, cs, 4, true, -1);
	CHECK_OK(lt_roaring_inspect(W.b, W.n, &info, &err), err);
	CHECK_EQ_INT(info.cardinality, n);
	CHECK_EQ_INT(info.containers, 4);
	CHECK_EQ_INT(info.min, 1);
	CHECK_EQ_INT(info.max, 0x00100007u);
	CHECK_EQ_INT(info.size, W.n);
	CHECK(decodes_as(W.b, W.n, expect, n));
	CHECK(rejects_all_prefixes(W.b, W.n));

	/* decode_bits: exact-size bitset, and a value past nbits. */
	bits = calloc((UINT64_C(0x00100008) + 63) / 64, 8);
	CHECK_OK(lt_roaring_decode_bits(W.b, W.n, UINT64_C(0x00100008), bits, NULL, &err), err);
	for (uint64_t i = 0; i < n; i++)
		CHECK((bits[expect[i] / 64] >> (expect[i] % 64)) & 1);
	CHECK_EQ_INT(bits[2], 0);
	CHECK_CODE(lt_roaring_decode_bits(W.b, W.n, UINT64_C(0x00100007), bits, NULL, &err), LT_ECORRUPT);
	free(bits);

	/* 12347 with fewer than 4 containers has no offset table. */
	build(&W, cs, 2, true, -1);
	CHECK(decodes_as(W.b, W.n, expect, 7));
	CHECK(rejects_all_prefixes(W.b, W.n));

	/* max_card bounds the decode. */
	{
		uint32_t   *v;
		uint64_t	got;

		CHECK_CODE(lt_roaring_decode_array(W.b, W.n, 6, &v, &got, NULL, &err), LT_ECORRUPT);
		CHECK_OK(lt_roaring_decode_array(W.b, W.n, 7, &v, &got, NULL, &err), err);
		lt_free(v);
	}

	/* Empty bitmap: 8 bytes. */
	build(&W, cs, 0, false, -1);
	CHECK_EQ_INT(W.n, 8);
	CHECK(decodes_as(W.b, W.n, NULL, 0));

	/* Trailing bytes are the caller's business: consumed says where it ends. */
	{
		size_t		used;

		build(&W, cs, 1, false, -1);
		W.b[W.n] = 0xAA;
		CHECK_OK(lt_roaring_validate(W.b, W.n + 1, &used, &err), err);
		CHECK_EQ_INT(used, W.n);
	}
}

TEST(hand_built_invalid)
{
	static const uint16_t asc[] = {1, 2, 3};
	static const uint16_t dup[] = {1, 2, 2};
	static const uint16_t desc[] = {3, 2};
	static const uint16_t r_overlap[] = {10, 5, 15, 1};	/* 10..15 then 15..16 */
	static const uint16_t r_unsorted[] = {20, 0, 10, 0};
	static const uint16_t r_wrap[] = {65530, 10};
	static const uint16_t r_adjacent[] = {10, 1, 12, 0};	/* 10..11, 12: allowed */
	hc			c;

	c = (hc) {0, 'a', 3, dup, 0};
	build(&W, &c, 1, false, -1);
	CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "ascending") != NULL);
	c = (hc) {0, 'a', 2, desc, 0};
	build(&W, &c, 1, false, -1);
	CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);

	c = (hc) {0, 'r', 2, r_overlap, 0};
	build(&W, &c, 1, true, -1);
	CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "overlap") != NULL);
	c = (hc) {0, 'r', 2, r_unsorted, 0};
	build(&W, &c, 1, true, -1);
	CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
	c = (hc) {0, 'r', 1, r_wrap, 0};
	build(&W, &c, 1, true, -1);
	CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "65535") != NULL);
	c = (hc) {0, 'r', 2, r_adjacent, 0};
	build(&W, &c, 1, true, -1);
	CHECK_OK(lt_roaring_validate(W.b, W.n, NULL, &err), err);
	{
		static const uint32_t adj[] = {10, 11, 12};

		CHECK(decodes_as(W.b, W.n, adj, 3));
		agree_with_croaring(W.b, W.n);
	}

	/* Header cardinality disagreeing with the container. */
	c = (hc) {0, 'r', 2, r_adjacent, 1};
	build(&W, &c, 1, true, -1);
	CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
	c = (hc) {0, 'b', 5000, NULL, 0};
	build(&W, &c, 1, false, -1);
	W.b[W.n - 1] = 0x80;	/* one bit more than the header says */
	CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "bits set") != NULL);

	/* Keys out of order, and a wrong offset. */
	{
		hc			cs[] = {{5, 'a', 3, asc, 0}, {5, 'a', 3, asc, 0}};

		build(&W, cs, 2, false, -1);
		CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
		CHECK(strstr(err.msg, "keys") != NULL);
		cs[1].key = 4;
		build(&W, cs, 2, false, -1);
		CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
		cs[1].key = 6;
		build(&W, cs, 2, false, 1);
		CHECK_CODE(lt_roaring_validate(W.b, W.n, NULL, &err), LT_ECORRUPT);
		CHECK(strstr(err.msg, "offset") != NULL);
		build(&W, cs, 2, false, -1);
		CHECK_OK(lt_roaring_validate(W.b, W.n, NULL, &err), err);
	}

	/* Bad cookie, and more containers than keys exist. */
	{
		uint8_t		b[8];

		lt_put32(b, 12345);
		lt_put32(b + 4, 0);
		CHECK_CODE(lt_roaring_validate(b, 8, NULL, &err), LT_ECORRUPT);
		CHECK(strstr(err.msg, "cookie") != NULL);
		lt_put32(b, LT_ROARING_COOKIE_NORUN);
		lt_put32(b + 4, 65537);
		CHECK_CODE(lt_roaring_validate(b, 8, NULL, &err), LT_ECORRUPT);
		lt_put32(b + 4, 0xFFFFFFFFu);
		CHECK_CODE(lt_roaring_validate(b, 8, NULL, &err), LT_ECORRUPT);
		CHECK_CODE(lt_roaring_validate(b, 0, NULL, &err), LT_ECORRUPT);
		CHECK_CODE(lt_roaring_validate(NULL, 0, NULL, &err), LT_ECORRUPT);
	}
}

TEST(croaring_crasher)
{
	/* Accepted by CRoaring 0.2.66's portable_deserialize_safe; crashes roaring_bitmap_and later. */
	static const uint8_t bad[] = {0x3b, 0x30, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0xfa, 0x00, 0x00};
	roaring_bitmap_t *r = NULL;
	uint32_t   *v = NULL;
	uint64_t	n;

	CHECK_CODE(lt_roaring_validate(bad, sizeof(bad), NULL, &err), LT_ECORRUPT);
	CHECK_CODE(lt_roaring_to_croaring(bad, sizeof(bad), &r, NULL, &err), LT_ECORRUPT);
	CHECK(r == NULL);
	CHECK_CODE(lt_roaring_decode_array(bad, sizeof(bad), 1000000, &v, &n, NULL, &err), LT_ECORRUPT);
	CHECK(v == NULL);
	CHECK(rejects_all_prefixes(bad, sizeof(bad)));
}

/* A deterministic PRNG so failures reproduce. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t
rnd(void)
{
	return unit_xorshift(&rng);
}

static roaring_bitmap_t *
random_bitmap(int shape)
{
	roaring_bitmap_t *r = roaring_bitmap_create();
	int			nc = 1 + (int) (rnd() % 6);

	for (int c = 0; c < nc; c++)
	{
		uint32_t	hi = (uint32_t) (rnd() % 8) << 16;

		switch ((shape + c) % 3)
		{
			case 0:				/* sparse: array container */
				for (int k = (int) (rnd() % 300); k >= 0; k--)
					roaring_bitmap_add(r, hi | (uint32_t) (rnd() & 0xFFFF));
				break;
			case 1:				/* dense: bitmap container */
				for (int k = 0; k < 9000; k++)
					roaring_bitmap_add(r, hi | (uint32_t) (rnd() & 0xFFFF));
				break;
			case 2:				/* ranges: run containers after run_optimize */
				for (int k = (int) (rnd() % 10); k >= 0; k--)
				{
					uint32_t	s = (uint32_t) (rnd() & 0xFFFF);
					uint32_t	l = (uint32_t) (rnd() % 3000);

					if (s + l > 0xFFFF)
						l = 0xFFFF - s;
					roaring_bitmap_add_range_closed(r, hi | s, hi | (s + l));
				}
				break;
		}
	}
	if (shape & 1)
		roaring_bitmap_run_optimize(r);
	return r;
}

/* What CRoaring reads from validated bytes must equal what lt decodes. */
static void
agree_with_croaring(const uint8_t *buf, size_t len)
{
	size_t		used;
	roaring_bitmap_t *theirs,
			   *ours;
	uint32_t   *vals;
	uint64_t	n;

	if (lt_roaring_validate(buf, len, &used, &err) != LT_OK)
		return;
	theirs = roaring_bitmap_portable_deserialize_safe((const char *) buf, used);
	CHECK(theirs != NULL);
	CHECK_OK(lt_roaring_to_croaring(buf, len, &ours, NULL, &err), err);
	CHECK_OK(lt_roaring_decode_array(buf, len, UINT64_C(1) << 32, &vals, &n, NULL, &err), err);
	if (theirs && ours)
	{
		/* Values, not roaring_bitmap_equals: CRoaring keeps adjacent runs apart. */
		CHECK_EQ_INT(roaring_bitmap_get_cardinality(theirs), n);
		CHECK_EQ_INT(roaring_bitmap_get_cardinality(ours), n);
		if (n > 0)
		{
			uint32_t   *tv = malloc(n * 4);

			roaring_bitmap_to_uint32_array(theirs, tv);
			CHECK(memcmp(tv, vals, n * 4) == 0);
			free(tv);
		}
	}
	if (theirs)
		roaring_bitmap_free(theirs);
	if (ours)
		roaring_bitmap_free(ours);
	lt_free(vals);
}

TEST(croaring_roundtrip_and_mutations)
{
	for (int iter = 0; iter < 60; iter++)
	{
		roaring_bitmap_t *r = random_bitmap(iter);
		size_t		sz = roaring_bitmap_portable_size_in_bytes(r);
		uint8_t    *buf = malloc(sz);
		uint32_t	card = (uint32_t) roaring_bitmap_get_cardinality(r);
		uint32_t   *expect = malloc((size_t) card * 4 + 4);
		lt_roaring_info info;

		roaring_bitmap_portable_serialize(r, (char *) buf);
		roaring_bitmap_to_uint32_array(r, expect);
		CHECK_OK(lt_roaring_inspect(buf, sz, &info, &err), err);
		CHECK_EQ_INT(info.size, sz);
		CHECK_EQ_INT(info.cardinality, card);
		CHECK(decodes_as(buf, sz, expect, card));
		if (iter < 12)
			CHECK(rejects_all_prefixes(buf, sz));

		/* Single-byte mutations: rejected, or read identically by both. */
		for (int m = 0; m < 200; m++)
		{
			size_t		at = rnd() % sz;
			uint8_t		old = buf[at];

			buf[at] ^= (uint8_t) (1 + rnd() % 255);
			agree_with_croaring(buf, sz);
			buf[at] = old;
		}
		free(expect);
		free(buf);
		roaring_bitmap_free(r);
	}
}

TEST(real_deletion_bitmap)
{
	size_t		len;
	uint8_t    *buf = unit_read_file("deletions/_deletions/0-3-7171621607215864114.bin", &len);
	lt_roaring_info info;
	uint32_t   *v;
	uint64_t	n;
	bool		rule = true;

	CHECK(buf != NULL);
	if (!buf)
		return;
	CHECK_OK(lt_roaring_inspect(buf, len, &info, &err), err);
	CHECK_EQ_INT(info.size, len);
	CHECK_EQ_INT(info.cardinality, 10800);
	CHECK_OK(lt_roaring_decode_array(buf, len, 12000, &v, &n, NULL, &err), err);
	CHECK_EQ_INT(n, 10800);
	/* Lance reports every offset not divisible by 10 (of 12000) as deleted. */
	for (uint64_t i = 0, k = 0; i < 12000; i++)
		if (i % 10 != 0)
			rule &= k < n && v[k++] == i;
	CHECK(rule);
	lt_free(v);
	CHECK(rejects_all_prefixes(buf, len));
	free(buf);
}

/* --- row-address sets ----------------------------------------------------- */

typedef struct collected
{
	uint64_t	addrs[64];
	int			n;
	uint32_t	full[8];
	int			nfull;
} collected;

static int
collect(uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg)
{
	collected  *c = arg;

	if (full)
		c->full[c->nfull++] = frag;
	for (size_t i = 0; i < n && c->n < 64; i++)
		c->addrs[c->n++] = ((uint64_t) frag << 32) | offsets[i];
	return 0;
}

static lt_rowaddr_set *
set_of(const uint64_t *addrs, int n, const uint32_t *full, int nfull)
{
	lt_rowaddr_set *s = lt_rowaddr_set_create();

	for (int i = 0; i < n; i++)
		lt_rowaddr_set_add(s, addrs[i], &err);
	for (int i = 0; i < nfull; i++)
		lt_rowaddr_set_add_fragment(s, full[i], &err);
	return s;
}

#define A(f, o) (((uint64_t) (f) << 32) | (o))

TEST(rowaddr_set_ops)
{
	static const uint64_t a_addrs[] = {A(0, 1), A(0, 5), A(2, 7), A(3, 0), A(3, 9)};
	static const uint32_t a_full[] = {5};
	static const uint64_t b_addrs[] = {A(0, 5), A(3, 9), A(5, 4), A(9, 1)};
	static const uint32_t b_full[] = {2};
	lt_rowaddr_set *a,
			   *b;
	collected	c;
	uint32_t	nfull;

	a = set_of(a_addrs, 5, a_full, 1);
	CHECK(lt_rowaddr_set_contains(a, A(0, 5)));
	CHECK(!lt_rowaddr_set_contains(a, A(0, 6)));
	CHECK(lt_rowaddr_set_contains(a, A(5, 123456)));	/* whole fragment */
	CHECK(!lt_rowaddr_set_contains(a, A(4, 0)));
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(a, &nfull), 5);
	CHECK_EQ_INT(nfull, 1);
	/* Adding to a whole fragment changes nothing. */
	CHECK_OK(lt_rowaddr_set_add(a, A(5, 1), &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(a, NULL), 5);

	memset(&c, 0, sizeof(c));
	lt_rowaddr_set_iterate(a, collect, &c);
	CHECK_EQ_INT(c.n, 5);
	for (int i = 0; i < 5 && i < c.n; i++)
		CHECK(c.addrs[i] == a_addrs[i]);
	CHECK_EQ_INT(c.nfull, 1);
	CHECK_EQ_INT(c.full[0], 5);

	/* a & b: {0:5, 2:7 (b has all of 2), 3:9, 5:4 (a has all of 5)} */
	b = set_of(b_addrs, 4, b_full, 1);
	CHECK_OK(lt_rowaddr_set_and(a, b, &err), err);
	memset(&c, 0, sizeof(c));
	lt_rowaddr_set_iterate(a, collect, &c);
	CHECK_EQ_INT(c.n, 4);
	CHECK_EQ_INT(c.nfull, 0);
	CHECK(c.addrs[0] == A(0, 5) && c.addrs[1] == A(2, 7) && c.addrs[2] == A(3, 9) && c.addrs[3] == A(5, 4));
	lt_rowaddr_set_free(a);

	/* a | b: fragment 2 becomes whole, 5 stays whole. */
	a = set_of(a_addrs, 5, a_full, 1);
	CHECK_OK(lt_rowaddr_set_or(a, b, &err), err);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(a, &nfull), 5);	/* 0:1,5  3:0,9  9:1 */
	CHECK_EQ_INT(nfull, 2);
	CHECK(lt_rowaddr_set_contains(a, A(2, 99)));
	CHECK(lt_rowaddr_set_contains(a, A(9, 1)));
	lt_rowaddr_set_free(a);

	/* a - b: 0:{1}, 2 gone (b has all of 2), 3:{0}, 5 = everything but 4. */
	a = set_of(a_addrs, 5, a_full, 1);
	CHECK_OK(lt_rowaddr_set_andnot(a, b, &err), err);
	CHECK(lt_rowaddr_set_contains(a, A(0, 1)));
	CHECK(!lt_rowaddr_set_contains(a, A(0, 5)));
	CHECK(!lt_rowaddr_set_contains(a, A(2, 7)));
	CHECK(lt_rowaddr_set_contains(a, A(3, 0)));
	CHECK(!lt_rowaddr_set_contains(a, A(3, 9)));
	CHECK(lt_rowaddr_set_contains(a, A(5, 3)));
	CHECK(!lt_rowaddr_set_contains(a, A(5, 4)));
	CHECK(lt_rowaddr_set_contains(a, A(5, 0xFFFFFFFFu)));
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(a, &nfull), 2 + (UINT64_C(1) << 32) - 1);
	CHECK_EQ_INT(nfull, 0);
	lt_rowaddr_set_free(a);

	/* Ranges, emptiness, and subtracting everything. */
	a = lt_rowaddr_set_create();
	CHECK(lt_rowaddr_set_is_empty(a));
	CHECK_OK(lt_rowaddr_set_add_range(a, 7, 10, 20, &err), err);
	CHECK_CODE(lt_rowaddr_set_add_range(a, 7, 10, (UINT64_C(1) << 32) + 1, &err), LT_EINVALID);
	CHECK_EQ_INT(lt_rowaddr_set_cardinality(a, NULL), 10);
	CHECK(lt_rowaddr_set_contains(a, A(7, 19)) && !lt_rowaddr_set_contains(a, A(7, 20)));
	CHECK_OK(lt_rowaddr_set_andnot(a, a, &err), err);
	CHECK(lt_rowaddr_set_is_empty(a));
	lt_rowaddr_set_free(a);
	lt_rowaddr_set_free(b);
}

TEST(rowaddr_map_parse)
{
	static const uint16_t v1[] = {3, 7};
	static const uint16_t v2[] = {0};
	hc			c1 = {0, 'a', 2, v1, 0};
	hc			c2 = {1, 'a', 1, v2, 0};
	static wbuf bm1,
				bm2;
	wbuf		m;
	lt_rowaddr_set *s;
	size_t		used;
	collected	c;

	build(&bm1, &c1, 1, false, -1);
	build(&bm2, &c2, 1, false, -1);

	/* {1: {3, 7}, 4: whole, 6: {65536}} followed by 3 bytes of other data */
	m.n = 0;
	w32(&m, 3);
	w32(&m, 1);
	w32(&m, (uint32_t) bm1.n);
	memcpy(m.b + m.n, bm1.b, bm1.n);
	m.n += bm1.n;
	w32(&m, 4);
	w32(&m, 0);
	w32(&m, 6);
	w32(&m, (uint32_t) bm2.n);
	memcpy(m.b + m.n, bm2.b, bm2.n);
	m.n += bm2.n;
	memcpy(m.b + m.n, "xyz", 3);

	CHECK_OK(lt_rowaddr_set_parse(m.b, m.n + 3, &s, &used, &err), err);
	CHECK_EQ_INT(used, m.n);
	memset(&c, 0, sizeof(c));
	lt_rowaddr_set_iterate(s, collect, &c);
	CHECK_EQ_INT(c.n, 3);
	CHECK(c.addrs[0] == A(1, 3) && c.addrs[1] == A(1, 7) && c.addrs[2] == A(6, 65536));
	CHECK_EQ_INT(c.nfull, 1);
	CHECK_EQ_INT(c.full[0], 4);
	lt_rowaddr_set_free(s);

	/* Every truncation fails; so do a size too large and unordered fragments. */
	for (size_t k = 0; k < m.n; k++)
		CHECK_CODE(lt_rowaddr_set_parse(m.b, k, &s, NULL, &err), LT_ECORRUPT);
	lt_put32(m.b + 8, (uint32_t) bm1.n + 1);
	CHECK_CODE(lt_rowaddr_set_parse(m.b, m.n, &s, NULL, &err), LT_ECORRUPT);
	lt_put32(m.b + 8, (uint32_t) bm1.n);
	lt_put32(m.b + 4, 5);
	CHECK_CODE(lt_rowaddr_set_parse(m.b, m.n, &s, NULL, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "ascending") != NULL);
	lt_put32(m.b + 4, 1);
	/* A corrupt nested bitmap names the entry. */
	lt_put32(m.b + 12, 12345);
	CHECK_CODE(lt_rowaddr_set_parse(m.b, m.n, &s, NULL, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "entry 0 (fragment 1)") != NULL && strstr(err.msg, "cookie") != NULL);

	/* The empty map. */
	m.n = 0;
	w32(&m, 0);
	CHECK_OK(lt_rowaddr_set_parse(m.b, 4, &s, &used, &err), err);
	CHECK(lt_rowaddr_set_is_empty(s));
	lt_rowaddr_set_free(s);
	/* An entry count the input cannot hold is refused before allocating. */
	lt_put32(m.b, 0xFFFFFFFFu);
	CHECK_CODE(lt_rowaddr_set_parse(m.b, 4, &s, &used, &err), LT_ECORRUPT);
}

int
main(void)
{
	RUN(hand_built_valid);
	RUN(hand_built_invalid);
	RUN(croaring_crasher);
	RUN(croaring_roundtrip_and_mutations);
	RUN(real_deletion_bitmap);
	RUN(rowaddr_set_ops);
	RUN(rowaddr_map_parse);
	return unit_report("roaring");
}
