/*
 * Unit tests of lt_deletion: real .arrow/.bin deletion files written by Lance
 * 8, Arrow IPC files built here field by field (compressed or not, with each
 * schema and batch rule broken in turn), truncations and byte mutations.
 */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "table/lt_deletion.h"
#include "unit.h"

static lt_error err;

/* Deleted offsets as Lance reports them (deletions.info.json, time_travel.info.json). */
static const uint32_t del_1_5[] = {1, 7, 107, 207, 307, 407, 507, 607, 707, 807, 907};
static const uint32_t tt_0_3[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98};
static const uint32_t tt_1_4[] = {5, 12, 19, 26, 33, 40, 41, 47};
static const uint32_t tt_3_6[] = {3, 4};

typedef struct real_file
{
	const char *name;
	lt_deletion_type type;
	uint64_t	frag,
				read_version,
				id;
	uint64_t	physical_rows;
	uint64_t	count;
	const uint32_t *expect;		/* NULL: checked by rule or count only */
} real_file;

static const real_file reals[] = {
	{"0-3-7171621607215864114.bin", LT_DELETION_BITMAP, 0, 3, UINT64_C(7171621607215864114), 12000, 10800, NULL},
	{"1-5-2261180466767682940.arrow", LT_DELETION_ARROW, 1, 5, UINT64_C(2261180466767682940), 1000, 11, del_1_5},
	{"1-3-3129657251502132204.arrow", LT_DELETION_ARROW, 1, 3, UINT64_C(3129657251502132204), 1000, 0, NULL},
	{"0-3-852658255386675302.arrow", LT_DELETION_ARROW, 0, 3, UINT64_C(852658255386675302), 100, 32, tt_0_3},
	{"1-4-15705848969170837008.arrow", LT_DELETION_ARROW, 1, 4, UINT64_C(15705848969170837008), 50, 8, tt_1_4},
	{"3-6-16797077909843431998.arrow", LT_DELETION_ARROW, 3, 6, UINT64_C(16797077909843431998), 5, 2, tt_3_6},
};

static bool
dv_equals(const lt_deletion_vector *dv, const uint32_t *expect, uint64_t n)
{
	return dv->count == n && (n == 0 || memcmp(dv->offsets, expect, n * 4) == 0);
}

TEST(paths)
{
	char	   *p = lt_deletion_path(0, 3, UINT64_C(7171621607215864114), LT_DELETION_BITMAP);

	CHECK(strcmp(p, "_deletions/0-3-7171621607215864114.bin") == 0);
	lt_free(p);
	p = lt_deletion_path(UINT64_MAX, 0, UINT64_MAX, LT_DELETION_ARROW);
	CHECK(strcmp(p, "_deletions/18446744073709551615-0-18446744073709551615.arrow") == 0);
	lt_free(p);
}

TEST(real_files)
{
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
	{
		const real_file *r = &reals[i];
		char		rel[256];
		size_t		len;
		uint8_t    *buf;
		lt_deletion_vector *dv;

		snprintf(rel, sizeof(rel), "deletions/_deletions/%s", r->name);
		buf = unit_read_file(rel, &len);
		CHECK(buf != NULL);
		if (!buf)
			continue;
		CHECK_OK(lt_deletion_parse(buf, len, r->type, r->count, r->physical_rows, r->name, &dv, &err), err);
		if (dv)
		{
			if (r->expect)
				CHECK(dv_equals(dv, r->expect, r->count));
			else if (r->count == 10800)
			{
				bool		rule = dv->count == 10800;

				for (uint64_t k = 0; rule && k < dv->count; k++)
					rule = dv->offsets[k] == k / 9 * 10 + k % 9 + 1;
				CHECK(rule);
			}
			else
			{
				/* The orphaned first delete: a subset of the later one. */
				CHECK_EQ_INT(dv->count, 10);
				for (uint64_t k = 0; k < dv->count; k++)
					CHECK(dv->offsets[k] % 100 == 7);
			}
			for (uint64_t k = 0; k < dv->count; k++)
				CHECK(lt_deletion_contains(dv, dv->offsets[k]));
			lt_deletion_free(dv);
		}

		/* Counts and bounds from the manifest are enforced. */
		if (r->count)
		{
			CHECK_CODE(lt_deletion_parse(buf, len, r->type, r->count + 1, 0, r->name, &dv, &err), LT_ECORRUPT);
			CHECK(strstr(err.msg, r->name) != NULL);
			CHECK_CODE(lt_deletion_parse(buf, len, r->type, 0, r->expect ? r->expect[r->count - 1] : 11999,
										 r->name, &dv, &err), LT_ECORRUPT);
			CHECK(strstr(err.msg, "past") != NULL);
		}
		/* Unknown counts and sizes are fine. */
		CHECK_OK(lt_deletion_parse(buf, len, r->type, 0, 0, r->name, &dv, &err), err);
		lt_deletion_free(dv);
		/* The wrong parser for the bytes. */
		CHECK_CODE(lt_deletion_parse(buf, len, r->type == LT_DELETION_ARROW ? LT_DELETION_BITMAP : LT_DELETION_ARROW,
									 0, 0, r->name, &dv, &err), LT_ECORRUPT);

		/* Every truncation is refused, naming the file. */
		for (size_t k = 0; k < len; k++)
		{
			lt_code		rc = lt_deletion_parse(buf, k, r->type, 0, 0, r->name, &dv, &err);

			CHECK_CODE(rc, LT_ECORRUPT);
			if (rc == LT_OK)
				lt_deletion_free(dv);
		}
		CHECK(strstr(err.msg, r->name) != NULL);
		free(buf);
	}
}

TEST(store_read)
{
	char		root[1024];
	lt_store   *st;
	lt_deletion_vector *dv;
	lt_deletion_file df;

	snprintf(root, sizeof(root), "%s/deletions", unit_data_dir());
	CHECK_OK(lt_store_local_open(root, &st, &err), err);
	if (!st)
		return;
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
	{
		const real_file *r = &reals[i];

		df = (lt_deletion_file) {r->type, r->read_version, r->id, r->count};
		CHECK_OK(lt_deletion_read(st, r->frag, &df, r->physical_rows, &dv, &err), err);
		if (dv && r->expect)
			CHECK(dv_equals(dv, r->expect, r->count));
		lt_deletion_free(dv);
	}
	df = (lt_deletion_file) {LT_DELETION_ARROW, 5, 1, 0};
	CHECK_CODE(lt_deletion_read(st, 1, &df, 0, &dv, &err), LT_ENOTFOUND);
	df = (lt_deletion_file) {7, 5, 1, 0};
	CHECK_CODE(lt_deletion_read(st, 1, &df, 0, &dv, &err), LT_EUNSUPPORTED);
	lt_store_close(st);
}

TEST(rank_and_contains)
{
	uint32_t	offs[] = {3, 9, 10, 400};
	lt_deletion_vector dv = {4, offs};

	CHECK_EQ_INT(lt_deletion_rank(&dv, 0), 0);
	CHECK_EQ_INT(lt_deletion_rank(&dv, 3), 0);
	CHECK_EQ_INT(lt_deletion_rank(&dv, 4), 1);
	CHECK_EQ_INT(lt_deletion_rank(&dv, 10), 2);
	CHECK_EQ_INT(lt_deletion_rank(&dv, 11), 3);
	CHECK_EQ_INT(lt_deletion_rank(&dv, 1000), 4);
	CHECK(lt_deletion_contains(&dv, 9));
	CHECK(!lt_deletion_contains(&dv, 8));
	CHECK(!lt_deletion_contains(&dv, (UINT64_C(1) << 32) + 9));
	CHECK(!lt_deletion_contains(NULL, 9));
	CHECK_EQ_INT(lt_deletion_rank(NULL, 9), 0);

	/* Selection vectors for batches that start before, at and after deletions. */
	{
		uint32_t	sel[16];
		uint32_t	m;

		m = lt_deletion_select(&dv, 2, 10, sel);	/* rows 2..11: 3, 9, 10 deleted */
		CHECK_EQ_INT(m, 7);
		CHECK(sel[0] == 0 && sel[1] == 2 && sel[5] == 6 && sel[6] == 9);
		m = lt_deletion_select(&dv, 10, 3, sel);	/* rows 10..12 */
		CHECK_EQ_INT(m, 2);
		CHECK(sel[0] == 1 && sel[1] == 2);
		m = lt_deletion_select(&dv, 401, 16, sel);
		CHECK_EQ_INT(m, 16);
		CHECK_EQ_INT(lt_deletion_select(NULL, 0, 5, sel), 5);
		CHECK_EQ_INT(lt_deletion_select(&dv, 0, 0, sel), 0);
	}
}

/* --- Arrow IPC files built by hand ---------------------------------------- */

/*
 * A forward-only flatbuffer writer: vtables precede their tables and every
 * reference points forward, which is legal flatbuffers (offsets are relative
 * and unsigned; vtable offsets are signed).
 */
typedef struct fbw
{
	uint8_t		b[8192];
	size_t		n;
} fbw;

static void
pad(fbw *w, size_t a)
{
	while (w->n % a)
		w->b[w->n++] = 0;
}

/* Field spec: size 0 = absent. */
typedef struct ffield
{
	int			size;
	uint64_t	val;			/* scalar value; refs are patched later */
} ffield;

/* Write vtable + table; slots[i] gets the position of field i. */
static size_t
table(fbw *w, int nf, const ffield *f, size_t *slots)
{
	size_t		vt,
				t,
				at;
	uint16_t	tlen = 4;

	pad(w, 4);
	vt = w->n;
	w->n += 4 + 2 * (size_t) nf;
	pad(w, 8);
	t = w->n;
	w->n += 4;
	for (int i = 0; i < nf; i++)
	{
		if (!f[i].size)
		{
			lt_put16(w->b + vt + 4 + 2 * i, 0);
			slots[i] = 0;
			continue;
		}
		pad(w, (size_t) f[i].size);
		at = w->n;
		memcpy(w->b + at, &f[i].val, (size_t) f[i].size);
		w->n += (size_t) f[i].size;
		lt_put16(w->b + vt + 4 + 2 * i, (uint16_t) (at - t));
		slots[i] = at;
	}
	tlen = (uint16_t) (w->n - t);
	lt_put16(w->b + vt, (uint16_t) (4 + 2 * nf));
	lt_put16(w->b + vt + 2, tlen);
	lt_put32(w->b + t, (uint32_t) (t - vt));
	return t;
}

static void
patch(fbw *w, size_t slot, size_t target)
{
	lt_put32(w->b + slot, (uint32_t) (target - slot));
}

typedef struct arrow_opts
{
	const uint32_t *vals;
	uint32_t	n;
	int			compress;		/* 0 none, 1 zstd, 2 "-1" raw buffers, 3 lz4 codec */
	bool		legacy_prefix;	/* pre-0.15 message framing */
	const char *name;
	bool		nullable;
	int			bitwidth;
	bool		is_signed;
	int			nbatches;
	int64_t		null_count;
	int			nbuffers;
	int64_t		node_len_adjust;
	int16_t		version;
	uint8_t		type_type;
} arrow_opts;

static arrow_opts
defaults(const uint32_t *vals, uint32_t n)
{
	return (arrow_opts) {vals, n, 0, false, "row_id", false, 32, false, 1, 0, 2, 0, 4, 2};
}

/* Build the body: validity (empty) + values, compressed or not. */
static size_t
body(const arrow_opts *o, uint8_t *dst, uint64_t *boffs, uint64_t *blens)
{
	size_t		n = 0;

	/* validity: zero-length buffer (allowed when null_count is 0) */
	boffs[0] = 0;
	blens[0] = 0;
	boffs[1] = 0;
	if (o->compress == 0)
	{
		memcpy(dst, o->vals, (size_t) o->n * 4);
		n = (size_t) o->n * 4;
	}
	else if (o->compress == 2 || o->compress == 3)
	{
		lt_put64(dst, UINT64_MAX);
		memcpy(dst + 8, o->vals, (size_t) o->n * 4);
		n = 8 + (size_t) o->n * 4;
	}
	else
	{
		lt_put64(dst, (uint64_t) o->n * 4);
		n = 8 + ZSTD_compress(dst + 8, 4096, o->vals, (size_t) o->n * 4, 3);
	}
	blens[1] = n;
	while (n % 8)
		dst[n++] = 0;
	return n;
}

static size_t body_at;			/* file offset of the last built body */

static size_t
build_arrow(const arrow_opts *o, uint8_t *out)
{
	static fbw	msg,
				foot;
	uint8_t		bodybuf[8192];
	uint64_t	boffs[2],
				blens[2];
	size_t		bodylen = body(o, bodybuf, boffs, blens);
	size_t		s[6],
				s2[6],
				s3[6];
	size_t		pos = 0,
				msgstart,
				metalen,
				t,
				rb,
				vec;

	/* Message { version, header_type, header -> RecordBatch, bodyLength } */
	memset(&msg, 0, sizeof(msg));
	msg.n = 4;
	{
		ffield		mf[] = {{2, (uint64_t) o->version}, {1, 3}, {4, 0}, {8, bodylen}};

		t = table(&msg, 4, mf, s);
		patch(&msg, 0, t);
	}
	{
		/* RecordBatch { length, nodes, buffers, compression } */
		ffield		rf[] = {{8, o->n}, {4, 0}, {4, 0}, {o->compress ? 4 : 0, 0}};

		rb = table(&msg, 4, rf, s2);
		patch(&msg, s[2], rb);
	}
	/* FieldNode and Buffer vectors: u32 count, then 8-byte aligned structs. */
	while ((msg.n + 4) % 8)
		msg.b[msg.n++] = 0;
	vec = msg.n;
	lt_put32(msg.b + vec, 1);
	msg.n += 4;
	patch(&msg, s2[1], vec);
	lt_put64(msg.b + msg.n, (uint64_t) ((int64_t) o->n + o->node_len_adjust));
	lt_put64(msg.b + msg.n + 8, (uint64_t) o->null_count);
	msg.n += 16;
	while ((msg.n + 4) % 8)
		msg.b[msg.n++] = 0;
	vec = msg.n;
	lt_put32(msg.b + vec, (uint32_t) o->nbuffers);
	msg.n += 4;
	patch(&msg, s2[2], vec);
	for (int i = 0; i < o->nbuffers; i++)
	{
		lt_put64(msg.b + msg.n, boffs[i < 2 ? i : 1]);
		lt_put64(msg.b + msg.n + 8, blens[i < 2 ? i : 1]);
		msg.n += 16;
	}
	if (o->compress)
	{
		ffield		cf[] = {{1, o->compress == 3 ? 0 : 1}, {1, 0}};

		t = table(&msg, 2, cf, s3);
		patch(&msg, s2[3], t);
	}
	pad(&msg, 8);

	/* File: magic, message (framed), body, footer, length, magic. */
	memcpy(out, "ARROW1\0\0", 8);
	pos = 8;
	msgstart = pos;
	if (o->legacy_prefix)
	{
		/* Before Arrow 0.15: a bare i32 length, then the flatbuffer. */
		lt_put32(out + pos, (uint32_t) msg.n);
		pos += 4;
	}
	else
	{
		lt_put32(out + pos, 0xFFFFFFFFu);
		lt_put32(out + pos + 4, (uint32_t) msg.n);
		pos += 8;
	}
	memcpy(out + pos, msg.b, msg.n);
	pos += msg.n;
	while ((pos - msgstart) % 8)
		out[pos++] = 0;
	metalen = pos - msgstart;
	body_at = pos;
	memcpy(out + pos, bodybuf, bodylen);
	pos += bodylen;

	/* Footer { version, schema, dictionaries, recordBatches } */
	memset(&foot, 0, sizeof(foot));
	foot.n = 4;
	{
		ffield		ff[] = {{2, (uint64_t) o->version}, {4, 0}, {4, 0}, {4, 0}};
		size_t		sch,
					fld,
					it,
					str;

		t = table(&foot, 4, ff, s);
		patch(&foot, 0, t);
		/* Schema { endianness, fields } */
		{
			ffield		sf[] = {{2, 0}, {4, 0}};

			sch = table(&foot, 2, sf, s2);
			patch(&foot, s[1], sch);
		}
		pad(&foot, 4);
		vec = foot.n;
		lt_put32(foot.b + vec, 1);
		foot.n += 8;
		patch(&foot, s2[1], vec);
		{
			/* Field { name, nullable, type_type, type, dictionary, children } */
			ffield		fl[] = {{4, 0}, {1, o->nullable}, {1, o->type_type}, {4, 0}, {0, 0}, {4, 0}};

			fld = table(&foot, 6, fl, s3);
			patch(&foot, vec + 4, fld);
		}
		pad(&foot, 4);
		str = foot.n;
		lt_put32(foot.b + str, (uint32_t) strlen(o->name));
		memcpy(foot.b + str + 4, o->name, strlen(o->name) + 1);
		foot.n += 4 + strlen(o->name) + 1;
		patch(&foot, s3[0], str);
		{
			ffield		inf[] = {{4, (uint64_t) (uint32_t) o->bitwidth}, {1, o->is_signed}};
			size_t		dummy[2];

			it = table(&foot, 2, inf, dummy);
			patch(&foot, s3[3], it);
		}
		pad(&foot, 4);
		lt_put32(foot.b + foot.n, 0);	/* children: empty vector */
		patch(&foot, s3[5], foot.n);
		foot.n += 4;
		/* dictionaries: empty; recordBatches: Block structs */
		lt_put32(foot.b + foot.n, 0);
		patch(&foot, s[2], foot.n);
		foot.n += 4;
		pad(&foot, 8);
		foot.n += 4;
		lt_put32(foot.b + foot.n, (uint32_t) o->nbatches);
		patch(&foot, s[3], foot.n);
		foot.n += 4;
		for (int i = 0; i < o->nbatches; i++)
		{
			lt_put64(foot.b + foot.n, msgstart);
			lt_put32(foot.b + foot.n + 8, (uint32_t) metalen);
			lt_put32(foot.b + foot.n + 12, 0);
			lt_put64(foot.b + foot.n + 16, bodylen);
			foot.n += 24;
		}
	}
	memcpy(out + pos, foot.b, foot.n);
	pos += foot.n;
	lt_put32(out + pos, (uint32_t) foot.n);
	memcpy(out + pos + 4, "ARROW1", 6);
	return pos + 10;
}

static uint8_t abuf[32768];

TEST(built_arrow_files)
{
	static const uint32_t vals[] = {40, 3, 17, 3, 0, 99};	/* unsorted, one repeat */
	static const uint32_t sorted[] = {0, 3, 17, 40, 99};
	arrow_opts	o;
	size_t		len;
	lt_deletion_vector *dv;

	/* Uncompressed, zstd-compressed, raw "-1" buffers, legacy framing, V4. */
	for (int variant = 0; variant < 5; variant++)
	{
		o = defaults(vals, 6);
		if (variant <= 2)
			o.compress = variant;
		if (variant == 3)
			o.legacy_prefix = true;
		if (variant == 4)
			o.version = 3;
		len = build_arrow(&o, abuf);
		CHECK_OK(lt_deletion_parse(abuf, len, LT_DELETION_ARROW, 5, 100, "built.arrow", &dv, &err), err);
		if (dv)
		{
			CHECK(dv_equals(dv, sorted, 5));
			lt_deletion_free(dv);
		}
		for (size_t k = 0; k < len; k++)
			CHECK_CODE(lt_deletion_parse(abuf, k, LT_DELETION_ARROW, 0, 0, "built.arrow", &dv, &err), LT_ECORRUPT);
	}

	/* Empty batch, plain and with a zero-length compressed values buffer. */
	for (int c = 0; c <= 1; c++)
	{
		o = defaults(vals, 0);
		o.compress = c;
		len = build_arrow(&o, abuf);
		CHECK_OK(lt_deletion_parse(abuf, len, LT_DELETION_ARROW, 0, 10, "built.arrow", &dv, &err), err);
		if (dv)
		{
			CHECK_EQ_INT(dv->count, 0);
			CHECK(!lt_deletion_contains(dv, 0));
			lt_deletion_free(dv);
		}
	}

	/* The count check is against distinct offsets: 6 stored, 5 distinct. */
	o = defaults(vals, 6);
	len = build_arrow(&o, abuf);
	CHECK_CODE(lt_deletion_parse(abuf, len, LT_DELETION_ARROW, 6, 0, "built.arrow", &dv, &err), LT_ECORRUPT);

	/* Each rule broken in turn. */
#define BROKEN(field, value, code, text) do { \
		o = defaults(vals, 6); o.field = value; len = build_arrow(&o, abuf); \
		CHECK_CODE(lt_deletion_parse(abuf, len, LT_DELETION_ARROW, 0, 0, "built.arrow", &dv, &err), code); \
		CHECK(strstr(err.msg, text) != NULL); \
		CHECK(strstr(err.msg, "built.arrow") != NULL); \
	} while (0)

	BROKEN(name, "rowid", LT_ECORRUPT, "row_id");
	BROKEN(nullable, true, LT_ECORRUPT, "nullable");
	BROKEN(bitwidth, 64, LT_ECORRUPT, "uint32");
	BROKEN(is_signed, true, LT_ECORRUPT, "uint32");
	BROKEN(type_type, 5, LT_ECORRUPT, "integer");
	BROKEN(nbatches, 0, LT_ECORRUPT, "one record batch");
	BROKEN(nbatches, 2, LT_ECORRUPT, "one record batch");
	BROKEN(null_count, 1, LT_ECORRUPT, "null");
	BROKEN(nbuffers, 1, LT_ECORRUPT, "two buffers");
	BROKEN(node_len_adjust, 1, LT_ECORRUPT, "field node");
	BROKEN(version, 2, LT_ECORRUPT, "version");
	BROKEN(compress, 3, LT_EUNSUPPORTED, "LZ4");

	/* A forged uncompressed length cannot force a large allocation. */
	o = defaults(vals, 6);
	o.compress = 1;
	len = build_arrow(&o, abuf);
	{
		/* The values buffer's i64 uncompressed length opens the body. */
		uint8_t    *p = abuf + body_at;

		CHECK_EQ_INT(lt_le64(p), 24);
		lt_put64(p, UINT64_C(1) << 30);
		CHECK_CODE(lt_deletion_parse(abuf, len, LT_DELETION_ARROW, 0, 0, "built.arrow", &dv, &err), LT_ECORRUPT);
		CHECK(strstr(err.msg, "uncompressed") != NULL);
		lt_put64(p, 20);	/* zstd output size mismatch */
		CHECK_CODE(lt_deletion_parse(abuf, len, LT_DELETION_ARROW, 0, 0, "built.arrow", &dv, &err), LT_ECORRUPT);
	}
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t
rnd(void)
{
	return unit_xorshift(&rng);
}

/* Random mutations of the real files: any outcome but a crash or a leak. */
TEST(mutations)
{
	int			accepted = 0;

	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
	{
		char		rel[256];
		size_t		len;
		uint8_t    *orig,
				   *buf;

		snprintf(rel, sizeof(rel), "deletions/_deletions/%s", reals[i].name);
		if (!(orig = unit_read_file(rel, &len)))
			continue;
		buf = malloc(len);
		for (int m = 0; m < 3000; m++)
		{
			lt_deletion_vector *dv;
			int			flips = 1 + (int) (rnd() % 4);

			memcpy(buf, orig, len);
			for (int f = 0; f < flips; f++)
				buf[rnd() % len] ^= (uint8_t) (1 + rnd() % 255);
			if (lt_deletion_parse(buf, len, reals[i].type, 0, reals[i].physical_rows, reals[i].name, &dv, &err) == LT_OK)
			{
				accepted++;
				for (uint64_t k = 1; k < dv->count; k++)
					CHECK(dv->offsets[k] > dv->offsets[k - 1]);
				lt_deletion_free(dv);
			}
		}
		free(buf);
		free(orig);
	}
	/* Padding bytes are not checked, so some mutations are harmless. */
	CHECK(accepted > 0);
}

int
main(void)
{
	RUN(paths);
	RUN(real_files);
	RUN(store_read);
	RUN(rank_and_contains);
	RUN(built_arrow_files);
	RUN(mutations);
	return unit_report("deletion");
}
