/*
 * test_enc21.c — unit tests of the Lance 2.1+ page decoders: FastLanes,
 * FSST, mini-block chunks and value encodings, full-zip, constant pages,
 * rep/def reconstruction, and corrupt inputs.  Pages are built by hand.
 */
#include <lz4.h>
#include <zstd.h>

#include "unit.h"

#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "util/lt_bytes.h"
#include "encoding/lt_enc21.h"
#include "encoding/lt_fastlanes.h"
#include "encoding/lt_fsst.h"
#include "proto/lt_enc21.pb-c.h"

/* ---- fields ---- */

static lt_field f_i32 = {.id = 1, .name = "i32", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
static lt_field f_u64 = {.id = 1, .name = "u64", .type = LT_TYPE_UINT64, .byte_width = 8, .nullable = true};
static lt_field f_i64 = {.id = 2, .name = "item", .type = LT_TYPE_INT64, .byte_width = 8, .nullable = true};
static lt_field f_f64 = {.id = 1, .name = "f64", .type = LT_TYPE_FLOAT64, .byte_width = 8, .nullable = true};
static lt_field f_bool = {.id = 1, .name = "b", .type = LT_TYPE_BOOL, .byte_width = 1, .nullable = true};
static lt_field f_str = {.id = 1, .name = "s", .type = LT_TYPE_UTF8, .nullable = true};
static lt_field f_lstr = {.id = 1, .name = "ls", .type = LT_TYPE_LARGE_UTF8, .nullable = true};

static lt_field f_fsl_item = {.id = -1, .name = "item", .type = LT_TYPE_FLOAT32, .byte_width = 4, .nullable = true};
static lt_field *fsl_children[] = {&f_fsl_item};
static lt_field f_fsl = {.id = 1, .name = "vec", .type = LT_TYPE_FIXED_LIST, .fixed_size = 2,
	.n_children = 1, .children = fsl_children, .nullable = true};

/* list<int64> */
static lt_field *list_children[] = {&f_i64};
static lt_field f_list = {.id = 1, .name = "l", .type = LT_TYPE_LIST, .n_children = 1,
	.children = list_children, .nullable = true};

/* struct<x: int32, y: utf8> */
static lt_field f_sx = {.id = 2, .name = "x", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
static lt_field f_sy = {.id = 3, .name = "y", .type = LT_TYPE_UTF8, .nullable = true};
static lt_field *struct_children[] = {&f_sx, &f_sy};
static lt_field f_struct = {.id = 1, .name = "st", .type = LT_TYPE_STRUCT, .n_children = 2,
	.children = struct_children, .nullable = true};

static const lt21_where W = {"test.lance", 3, 7};

/* ---- encodings ---- */

static Lt__Enc21__Flat flat16 = {PROTOBUF_C_MESSAGE_INIT(&lt__enc21__flat__descriptor), 1, 16, NULL};
static Lt__Enc21__CompressiveEncoding enc_flat16;

static Lt__Enc21__CompressiveEncoding *
mk_flat(uint64_t bits)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__Flat *f = lt_calloc(1, sizeof(*f));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__flat__init(f);
	f->has_bits_per_value = 1;
	f->bits_per_value = bits;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT;
	e->flat = f;
	return e;
}

static Lt__Enc21__CompressiveEncoding *
mk_inline_bp(uint64_t bits)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__InlineBitpacking *b = lt_calloc(1, sizeof(*b));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__inline_bitpacking__init(b);
	b->has_uncompressed_bits_per_value = 1;
	b->uncompressed_bits_per_value = bits;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_INLINE_BITPACKING;
	e->inline_bitpacking = b;
	return e;
}

static Lt__Enc21__CompressiveEncoding *
mk_variable(uint64_t bits)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__Variable *v = lt_calloc(1, sizeof(*v));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__variable__init(v);
	v->offsets = mk_flat(bits);
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE;
	e->variable = v;
	return e;
}

static Lt__Enc21__CompressiveEncoding *
mk_general(int scheme, Lt__Enc21__CompressiveEncoding *inner)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__General *g = lt_calloc(1, sizeof(*g));
	Lt__Enc21__BufferCompression *bc = lt_calloc(1, sizeof(*bc));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__general__init(g);
	lt__enc21__buffer_compression__init(bc);
	bc->has_scheme = 1;
	bc->scheme = scheme;
	g->compression = bc;
	g->values = inner;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL;
	e->general = g;
	return e;
}

/* Encodings built here are freed with the protobuf-c free of their root. */
static void
free_enc(Lt__Enc21__CompressiveEncoding *e)
{
	if (e)
		lt__enc21__compressive_encoding__free_unpacked(e, lt_protobuf_allocator());
}

/* ---- page builders ---- */

typedef struct chunk
{
	int			nlevels;
	const uint16_t *rep;
	const uint16_t *def;
	int			nbuf;
	const uint8_t *buf[4];
	size_t		len[4];
	int			log_values;		/* 0 for the last chunk */
} chunk;

typedef struct mbpage
{
	uint8_t		meta[256];
	size_t		meta_len;
	uint8_t		data[1 << 17];
	size_t		data_len;
} mbpage;

static void
pad8(uint8_t *d, size_t *len)
{
	while (*len % 8)
		d[(*len)++] = 0xFE;
}

static bool g_large;			/* 2.2 has_large_chunk: u32 words and buffer sizes */

static void
add_chunk(mbpage *pg, const chunk *c, bool has_rep, bool has_def)
{
	uint8_t    *d = pg->data;
	size_t		start = pg->data_len,
				n = start;
	uint16_t	word;

	lt_put16(d + n, (uint16_t) c->nlevels);
	n += 2;
	if (has_rep)
	{
		lt_put16(d + n, (uint16_t) (c->nlevels * 2));
		n += 2;
	}
	if (has_def)
	{
		lt_put16(d + n, (uint16_t) (c->nlevels * 2));
		n += 2;
	}
	for (int b = 0; b < c->nbuf; b++)
	{
		if (g_large)
			lt_put32(d + n, (uint32_t) c->len[b]);
		else
			lt_put16(d + n, (uint16_t) c->len[b]);
		n += g_large ? 4 : 2;
	}
	pad8(d, &n);
	if (has_rep)
	{
		memcpy(d + n, c->rep, c->nlevels * 2);
		n += c->nlevels * 2;
		pad8(d, &n);
	}
	if (has_def)
	{
		memcpy(d + n, c->def, c->nlevels * 2);
		n += c->nlevels * 2;
		pad8(d, &n);
	}
	for (int b = 0; b < c->nbuf; b++)
	{
		memcpy(d + n, c->buf[b], c->len[b]);
		n += c->len[b];
		pad8(d, &n);
	}
	pg->data_len = n;
	word = (uint16_t) ((((n - start) / 8 - 1) << 4) | (unsigned) c->log_values);
	if (g_large)
	{
		lt_put32(pg->meta + pg->meta_len, (uint32_t) ((((n - start) / 8 - 1) << 4) | (unsigned) c->log_values));
		pg->meta_len += 4;
	}
	else
	{
		lt_put16(pg->meta + pg->meta_len, word);
		pg->meta_len += 2;
	}
}

static Lt__Enc21__RepDefLayer layers_buf[8];

static Lt__Enc21__PageLayout *
mk_mb_layout(Lt__Enc21__MiniBlockLayout *mb, const int *layers, int nl, Lt__Enc21__CompressiveEncoding *values,
			 uint64_t num_items, bool rep, bool def)
{
	static Lt__Enc21__PageLayout pl;

	lt__enc21__page_layout__init(&pl);
	lt__enc21__mini_block_layout__init(mb);
	for (int i = 0; i < nl; i++)
		layers_buf[i] = layers[i];
	mb->n_layers = nl;
	mb->layers = layers_buf;
	mb->value_compression = values;
	mb->has_num_items = 1;
	mb->num_items = num_items;
	mb->has_num_buffers = 1;
	mb->num_buffers = 1;
	mb->rep_compression = rep ? &enc_flat16 : NULL;
	mb->def_compression = def ? &enc_flat16 : NULL;
	pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
	pl.mini_block_layout = mb;
	return &pl;
}

static lt_array *read_rows(const lt_field *top, lt21_page *pg, uint64_t r0, uint64_t n, lt_error *err);
static int	lazy_checked;

/* ---- random access: windows of a page ---- */

static int	windows_checked;

/* A fresh copy of exactly n bytes, so that the sanitizer sees any read past a window. */
static uint8_t *
dup_bytes(const uint8_t *p, uint64_t n)
{
	uint8_t    *d = lt_malloc(n ? n : 1);

	if (n)
		memcpy(d, p, n);
	return d;
}

/* Plan and decode the window of rows [r0, r1); NULL on failure (err set). */
static lt21_page *
decode_window(const lt_field *leaf, const Lt__Enc21__PageLayout *pl, int nb, const uint8_t *const *bp,
			  const uint64_t *bl, uint64_t rows, uint64_t r0, uint64_t r1, bool stable, lt21_window *win,
			  uint8_t **keep, lt_error *err)
{
	const uint8_t *p[4];
	uint64_t	len[4];
	lt21_bufs	b = {0, p, len, stable};
	lt21_page  *wp = NULL;
	lt_code		rc;

	*keep = NULL;
	if (pl->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT)
	{
		const Lt__Enc21__MiniBlockLayout *mb = pl->mini_block_layout;
		lt21_chunks ck = {0};
		bool		usable = false;
		int			dict_buf,
					index_buf;

		lt21_mb_buffers(mb, nb, &dict_buf, &index_buf);
		rc = lt21_mb_chunks(&W, mb, rows, nb, bl, bp[0], index_buf >= 0 ? bp[index_buf] : NULL, &ck, &usable, err);
		if (rc != LT_OK || !usable)
		{
			lt21_chunks_free(&ck);
			if (rc == LT_OK)
				lt_error_set(err, LT_EUNSUPPORTED, "page cannot be read by chunks");
			return NULL;
		}
		lt21_mb_window(&ck, r0, r1, win);
		/* the window is whole chunks and holds the rows */
		CHECK(win->c0 < win->c1 && win->c1 <= ck.n && win->row0 <= r0 && r1 <= win->row1);
		CHECK(win->off == ck.off[win->c0] && win->len == ck.off[win->c1] - ck.off[win->c0]);
		lt21_chunks_free(&ck);
		*keep = dup_bytes(bp[1] + win->off, win->len);
		p[0] = bp[0];
		len[0] = bl[0];
		p[1] = *keep;
		len[1] = win->len;
		b.n = 2;
		if (dict_buf >= 0)
		{
			p[2] = bp[dict_buf];
			len[2] = bl[dict_buf];
			b.n = 3;
		}
	}
	else
	{
		const Lt__Enc21__FullZipLayout *fz = pl->full_zip_layout;

		if (lt21_fz_window(&W, fz, rows, nb, bl, NULL, r0, r1, win, err) != LT_OK)
			return NULL;
		if (win->need_index)
		{
			uint8_t    *ix;

			CHECK(win->buf == 1 && win->off + win->len <= bl[1]);
			ix = dup_bytes(bp[1] + win->off, win->len);
			rc = lt21_fz_window(&W, fz, rows, nb, bl, ix, r0, r1, win, err);
			lt_free(ix);
			if (rc != LT_OK)
				return NULL;
		}
		if (win->buf != 0)
		{
			lt_error_set(err, LT_EUNSUPPORTED, "page cannot be read by rows");
			return NULL;
		}
		CHECK(win->row0 == r0 && win->row1 == r1 && win->off + win->len <= bl[0]);
		*keep = dup_bytes(bp[0] + win->off, win->len);
		p[0] = *keep;
		len[0] = win->len;
		b.n = 1;
	}
	if (lt21_page_decode_window(&W, leaf, pl, win, &b, &wp, err) != LT_OK)
		return NULL;
	return wp;
}

/*
 * Every window [r0, r1) of a page (sampled on big pages), planned from its
 * chunk metadata / repetition index and decoded from only the bytes the plan
 * names, must read the same rows as the whole page `full`.
 */
static void
check_windows(const lt_field *top, const lt_field *leaf, const Lt__Enc21__PageLayout *pl, int nb,
			  const uint8_t *const *bp, const uint64_t *bl, uint64_t rows, lt21_page *full)
{
	uint64_t	step = rows > 60 ? rows / 23 : 1;
	lt_error	err;

	for (uint64_t r0 = 0; r0 < rows; r0 += step)
		for (uint64_t r1 = r0 + 1; r1 <= rows; r1 += (r1 - r0 < 3 ? 1 : step))
		{
			lt21_window win;
			uint8_t    *keep = NULL;
			lt21_page  *wp = decode_window(leaf, pl, nb, bp, bl, rows, r0, r1, (r0 + r1) % 2, &win, &keep, &err);
			lt_array   *want,
					   *got;

			if (!wp)
			{
				fprintf(stderr, "window %llu..%llu: %s\n", (unsigned long long) r0, (unsigned long long) r1, err.msg);
				CHECK(!"window decode failed");
				lt_free(keep);
				return;
			}
			want = read_rows(top, full, r0, r1 - r0, &err);
			got = read_rows(top, wp, r0 - win.row0, r1 - r0, &err);
			CHECK(want && got && lt_array_equal(want, got));
			lt_array_free(want);
			lt_array_free(got);
			lt21_page_free(wp);
			lt_free(keep);
			windows_checked++;
		}
}

/*
 * The repetition index of a mini-block page with lists, from its chunks and
 * the levels of its whole-page decode: per chunk, rows that end in it and
 * whether its last row goes on (as u64 pairs).
 */
static void
mb_rep_index(const mbpage *p, const lt21_page *full, uint8_t *out)
{
	uint64_t	n = p->meta_len / 2,
				off = 0,
				lvl = 0;
	bool		pre[64] = {false};
	uint64_t	starts[64];

	for (uint64_t c = 0; c < n && c < 63; c++)
	{
		uint16_t	word = lt_le16(p->meta + c * 2);
		uint16_t	nl = lt_le16(p->data + off);

		starts[c] = 0;
		for (uint64_t i = lvl; i < lvl + nl; i++)
			starts[c] += full->rep[i] == full->max_rep;
		pre[c] = nl > 0 && full->rep[lvl] != full->max_rep;
		lvl += nl;
		off += ((uint64_t) (word >> 4) + 1) * 8;
	}
	for (uint64_t c = 0; c < n && c < 63; c++)
	{
		bool		trail = c + 1 < n && pre[c + 1];

		lt_put64(out + c * 16, starts[c] + pre[c] - trail);
		lt_put64(out + c * 16 + 8, trail ? 1 : 0);
	}
}

/*
 * Decode eagerly; when that works on a single-layer page, also decode lazily
 * (chunk by chunk on read) and check that odd-sized reads give the same rows.
 */
static lt_code
decode_mb(const lt_field *leaf, Lt__Enc21__PageLayout *pl, const mbpage *p, const uint8_t *dict,
		  size_t dict_len, uint64_t rows, lt21_page **out, lt_error *err)
{
	const uint8_t *bp[3] = {p->meta, p->data, dict};
	uint64_t	bl[3] = {p->meta_len, p->data_len, dict_len};
	lt21_bufs	b = {dict ? 3 : 2, bp, bl, false};
	lt_code		rc = lt21_page_decode(&W, leaf, pl, rows, &b, out, err);
	lt21_page  *lz = NULL;

	if (rc != LT_OK || (*out)->n_layers != 1)
		return rc;
	check_windows(leaf, leaf, pl, b.n, bp, bl, rows, *out);
	b.stable = true;
	if (lt21_page_decode(&W, leaf, pl, rows, &b, &lz, err) == LT_OK)
	{
		lt_array   *want = read_rows(leaf, *out, 0, rows, err);
		lt_array   *got = NULL;
		lt_array   *nodes[1];
		uint64_t	r = 0,
					step = 1;

		if (lt_array_new(leaf, &got, err) == LT_OK)
		{
			nodes[0] = got;
			while (r < rows)
			{
				uint64_t	n = step < rows - r ? step : rows - r;

				if (lt21_page_append(&W, lz, nodes, 1, 0, r, n, err) != LT_OK)
					break;
				r += n;
				step = step * 3 + 1;
			}
			CHECK(r == rows && want && lt_array_equal(want, got));
			lazy_checked++;
		}
		/* lone rows here and there (point lookups: only that value of a string chunk is decoded) */
		if (want)
		{
			lt_array   *one = NULL,
					   *exp = NULL;

			for (uint64_t k = 0; k < rows; k += 1 + k % 7 + k / 3)
				if (lt_array_new(leaf, &one, err) == LT_OK && lt_array_new(leaf, &exp, err) == LT_OK)
				{
					lt_array   *n1[1] = {one};

					CHECK_OK(lt21_page_append(&W, lz, n1, 1, 0, k, 1, err), *err);
					CHECK_OK(lt_array_append_slice(exp, want, (int64_t) k, 1, err), *err);
					CHECK(lt_array_equal(exp, one));
					lt_array_free(one);
					lt_array_free(exp);
					one = exp = NULL;
				}
		}
		lt_array_free(want);
		lt_array_free(got);
	}
	else
		CHECK(!"lazy decode failed where eager worked");
	lt21_page_free(lz);
	return rc;
}

/*
 * Read rows [r0, r0+n) of a single-leaf page into a fresh array of `top`,
 * down the first children (to a packed struct when the page's layers end there).
 */
static lt_array *
read_rows(const lt_field *top, lt21_page *pg, uint64_t r0, uint64_t n, lt_error *err)
{
	lt_array   *a;
	lt_array   *nodes[8];
	int			depth = 1;

	if (lt_array_new(top, &a, err) != LT_OK)
		return NULL;
	nodes[0] = a;
	while ((nodes[depth - 1]->field->type == LT_TYPE_LIST ||
			(nodes[depth - 1]->field->type == LT_TYPE_STRUCT && depth < pg->n_layers)) && depth < 8)
	{
		nodes[depth] = nodes[depth - 1]->children[0];
		depth++;
	}
	if (lt21_page_append(&W, pg, nodes, depth, 0, r0, n, err) != LT_OK)
	{
		lt_array_free(a);
		return NULL;
	}
	return a;
}

static int32_t
i32_at(const lt_array *a, int64_t i)
{
	int32_t		v;

	memcpy(&v, a->values + i * 4, 4);
	return v;
}

static int64_t
i64_at(const lt_array *a, int64_t i)
{
	int64_t		v;

	memcpy(&v, a->values + i * 8, 8);
	return v;
}

static bool
str_is(const lt_array *a, int64_t i, const char *s)
{
	int64_t		l = a->offsets[i + 1] - a->offsets[i];

	return l == (int64_t) strlen(s) && memcmp(a->data + a->offsets[i], s, l) == 0;
}

/* ---- FastLanes ---- */

TEST(fastlanes_roundtrip)
{
	static uint8_t src[8192],
				packed[8192],
				out[8192];
	unsigned	seed = 1;

	for (unsigned t = 8; t <= 64; t *= 2)
		for (unsigned w = 0; w <= t; w++)
		{
			unsigned	b = t / 8;
			uint64_t	mask = w >= 64 ? ~0ULL : ((1ULL << w) - 1);
			int			bad = 0;

			for (int i = 0; i < 8192; i++)
			{
				seed = seed * 1103515245 + 12345;
				src[i] = (uint8_t) (seed >> 16);
			}
			lt_fl_pack(t, w, src, packed);
			lt_fl_unpack(t, w, packed, out);
			for (unsigned i = 0; i < 1024; i++)
			{
				uint64_t	s = 0,
							o = 0;

				memcpy(&s, src + i * b, b);
				memcpy(&o, out + i * b, b);
				bad += (s & mask) != o;
			}
			CHECK_EQ_INT(bad, 0);
		}
}

/* The lone-value path equals the block decode at every index, word size and bit width (any alignment). */
TEST(fastlanes_one_value)
{
	static uint8_t src[8192],
				packed[8192 + 1],
				out[8192];
	uint64_t	seed = 7;

	for (unsigned t = 8; t <= 64; t *= 2)
		for (unsigned w = 0; w <= t; w++)
		{
			unsigned	b = t / 8;
			int			bad = 0;

			for (int i = 0; i < 8192; i++)
				src[i] = (uint8_t) unit_xorshift(&seed);
			lt_fl_pack(t, w, src, packed);
			lt_fl_unpack(t, w, packed, out);
			for (unsigned i = 0; i < 1024; i++)
			{
				uint64_t	o = 0;

				memcpy(&o, out + i * b, b);
				bad += lt_fl_unpack_one(t, w, packed, i) != o;
			}
			/* unaligned input: the same values */
			memmove(packed + 1, packed, lt_fl_packed_bytes(w));
			for (unsigned i = 0; i < 1024; i += 7)
			{
				uint64_t	o = 0;

				memcpy(&o, out + i * b, b);
				bad += lt_fl_unpack_one(t, w, packed + 1, i) != o;
			}
			CHECK_EQ_INT(bad, 0);
		}
}

TEST(fastlanes_layout)
{
	/* value i = i at width 10 in u16 words: check a known transposition */
	uint16_t	in[1024],
				out[1024];
	uint8_t		packed[1280];

	for (int i = 0; i < 1024; i++)
		in[i] = (uint16_t) i;
	lt_fl_pack(16, 10, in, packed);
	/* lane 0 row 0 is value 0, lane 1 row 0 is value 1: word 1 low bits == 1 */
	CHECK_EQ_INT(lt_le16(packed + 2) & 0x3ff, 1);
	/* row 1 of lane 0 is index fl_order[0]*16 + 128 = 128, at bits 10..19 of word 0 / word 64 */
	CHECK_EQ_INT(((lt_le16(packed) >> 10) | (lt_le16(packed + 128) << 6)) & 0x3ff, 128);
	lt_fl_unpack(16, 10, packed, out);
	CHECK(memcmp(in, out, sizeof(in)) == 0);
}

/* ---- FSST ---- */

static void
fsst_table(uint8_t *t, int n, bool on)
{
	uint64_t	info = ((uint64_t) 0x46535354 << 32) | ((uint64_t) (on ? 1 : 0) << 24) | (uint64_t) n;

	memset(t, 0, LT_FSST_TABLE_SIZE);
	lt_put64(t, info);
}

TEST(fsst)
{
	uint8_t		t[LT_FSST_TABLE_SIZE];
	lt_fsst_table tab;
	lt_error	err;
	uint8_t		out[64];
	const uint8_t in[] = {0, 1, 255, 'x', 0};

	fsst_table(t, 2, true);
	memcpy(t + 8, "hello\0\0\0", 8);
	memcpy(t + 16, " \0\0\0\0\0\0\0", 8);
	t[24] = 5;
	t[25] = 1;
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	CHECK_EQ_INT(lt_fsst_decode(&tab, in, sizeof(in), out), 12);
	CHECK(memcmp(out, "hello xhello", 12) == 0);
	/* empty string */
	CHECK_EQ_INT(lt_fsst_decode(&tab, in, 0, out), 0);
	/* trailing escape, unknown code */
	CHECK_EQ_INT(lt_fsst_decode(&tab, (const uint8_t *) "\xff", 1, out), -1);
	CHECK_EQ_INT(lt_fsst_decode(&tab, (const uint8_t *) "\x07", 1, out), -1);
	/* bad tables */
	CHECK_CODE(lt_fsst_parse(t, sizeof(t) - 1, &tab, "t", &err), LT_ECORRUPT);
	t[25] = 9;
	CHECK_CODE(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), LT_ECORRUPT);
	t[7] = 0;
	CHECK_CODE(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), LT_ECORRUPT);
	/* disabled: a copy */
	fsst_table(t, 0, false);
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	CHECK_EQ_INT(lt_fsst_decode(&tab, (const uint8_t *) "abc", 3, out), 3);
	CHECK(memcmp(out, "abc", 3) == 0);
}

/* The decoder with all 255 symbols (8 codes at a time) against a byte-at-a-time reading of the format. */
static int64_t
fsst_reference(const uint8_t *syms, const uint8_t *lens, const uint8_t *in, size_t len, uint8_t *out)
{
	size_t		o = 0;

	for (size_t i = 0; i < len; i++)
	{
		if (in[i] == 255)
		{
			if (i + 1 == len)
				return -1;
			out[o++] = in[++i];
		}
		else
		{
			memcpy(out + o, syms + in[i] * 8, lens[in[i]]);
			o += lens[in[i]];
		}
	}
	return (int64_t) o;
}

TEST(fsst_full_table)
{
	static uint8_t t[LT_FSST_TABLE_SIZE];
	static uint8_t syms[255 * 8],
				lens[255];
	static lt_fsst_table tab;
	static lt_fsst_cache cache;
	const lt_fsst_table *ct;
	lt_error	err;
	uint8_t		buf[96],
				out[96 * 8],
				ref[96 * 8];
	uint32_t	r = 12345;

	fsst_table(t, 255, true);
	for (int c = 0; c < 255; c++)
	{
		lens[c] = (uint8_t) (c % 8 + 1);
		for (int k = 0; k < 8; k++)
			syms[c * 8 + k] = (uint8_t) (k < lens[c] ? 'A' + (c + k) % 26 : 0);
		memcpy(t + 8 + c * 8, syms + c * 8, 8);
		t[8 + 255 * 8 + c] = lens[c];
	}
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	/* strings of 0..40 codes at every offset of a buffer, read to the string's end or past it */
	for (int round = 0; round < 400; round++)
	{
		size_t		len = (size_t) (round % 41),
					at = (size_t) (round % 7);
		int64_t		want,
					got;

		for (size_t i = 0; i < sizeof(buf); i++)
		{
			r = r * 1103515245u + 12345u;
			/* escapes often (one code in 8), so that they fall at every position of a block */
			buf[i] = (uint8_t) ((r >> 16) % 8 == 0 ? 255 : (r >> 8) % 255);
		}
		want = fsst_reference(syms, lens, buf + at, len, ref);
		got = lt_fsst_decode(&tab, buf + at, len, out);
		CHECK_EQ_INT(got, want);
		if (got == want && want > 0)
			CHECK(memcmp(out, ref, (size_t) want) == 0);
		got = lt_fsst_decode_in(&tab, buf + at, len, buf + sizeof(buf), out);
		CHECK_EQ_INT(got, want);
		if (got == want && want > 0)
			CHECK(memcmp(out, ref, (size_t) want) == 0);
	}
	/* an escape as the string's last byte is corrupt, even when the buffer goes on */
	memset(buf, 1, sizeof(buf));
	for (size_t len = 1; len <= 17; len++)
	{
		buf[len - 1] = 255;
		CHECK_EQ_INT(lt_fsst_decode_in(&tab, buf, len, buf + sizeof(buf), out), -1);
		CHECK_EQ_INT(lt_fsst_decode(&tab, buf, len, out), -1);
		buf[len - 1] = 1;
	}
	/* the cache parses once per distinct table */
	CHECK_OK(lt_fsst_parse_cached(&cache, t, sizeof(t), &ct, "t", &err), err);
	CHECK(ct == &cache.table && ct->n_symbols == 255);
	t[8] ^= 1;
	CHECK_OK(lt_fsst_parse_cached(&cache, t, sizeof(t), &ct, "t", &err), err);
	CHECK_EQ_INT(ct->symbols[0] & 0xff, syms[0] ^ 1);
	t[8 + 255 * 8] = 0;			/* symbol 0 of length 0: corrupt, and the cache forgets */
	CHECK_CODE(lt_fsst_parse_cached(&cache, t, sizeof(t), &ct, "t", &err), LT_ECORRUPT);
	CHECK(!cache.valid);
}

/*
 * The decoders of a full table on strings with no escape or a rare one, so that every path runs:
 * 8 codes at a time, the last 1-7 codes in one jump (8 bytes loadable there) or one at a time (the
 * string ends the buffer), symbols of 1 to 8 bytes, empty strings; lt_fsst_decode_noesc on the
 * escape-free ones; the ASCII flag of tables and the *dirty flag of escaped bytes.
 */
TEST(fsst_decode_paths)
{
	static uint8_t t[LT_FSST_TABLE_SIZE];
	static uint8_t syms[255 * 8],
				lens[255];
	static lt_fsst_table tab;
	lt_error	err;
	uint8_t		buf[80],
				out[80 * 8 + 8],
				ref[80 * 8];
	uint32_t	r = 777;
	int			noesc_runs = 0;

	fsst_table(t, 255, true);
	for (int c = 0; c < 255; c++)
	{
		lens[c] = (uint8_t) ((c * 7) % 8 + 1);
		for (int k = 0; k < 8; k++)
			syms[c * 8 + k] = (uint8_t) (k < lens[c] ? ' ' + (c * 3 + k) % 90 : 0);
		memcpy(t + 8 + c * 8, syms + c * 8, 8);
		t[8 + 255 * 8 + c] = lens[c];
	}
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	CHECK_EQ_INT(tab.n_nonascii, 0);
	for (int round = 0; round < 2000; round++)
	{
		size_t		len = (size_t) (round % 41),
					at = (size_t) (round % 13);
		bool		esc = false,
					dirty = false;
		int64_t		want;
		uint8_t    *o;

		for (size_t i = 0; i < sizeof(buf); i++)
		{
			r = r * 1103515245u + 12345u;
			/* an escape in one string of three, at a random place, with any byte after it */
			buf[i] = (uint8_t) ((r >> 8) % 255);
		}
		if (round % 3 == 0 && len >= 2)
		{
			size_t		e = (size_t) (r >> 20) % (len - 1);

			buf[at + e] = 255;
			buf[at + e + 1] = (uint8_t) (round & 1 ? 0x80 + round % 100 : 'a' + round % 26);
			esc = true;
		}
		CHECK_EQ_INT(lt_fsst_has_escape(buf + at, len), esc);
		want = fsst_reference(syms, lens, buf + at, len, ref);
		CHECK(want >= 0);
		/* 8 bytes loadable past the string, or none */
		memset(out, 0xEE, sizeof(out));
		o = lt_fsst_decode_full(&tab, buf + at, len, buf + sizeof(buf), out, &dirty);
		CHECK(o != NULL && o - out == want && memcmp(out, ref, (size_t) want) == 0);
		CHECK_EQ_INT(dirty, esc && (round & 1));
		dirty = false;
		o = lt_fsst_decode_full(&tab, buf + at, len, buf + at + len, out, &dirty);
		CHECK(o != NULL && o - out == want && memcmp(out, ref, (size_t) want) == 0);
		CHECK_EQ_INT(dirty, esc && (round & 1));
		if (!esc)
		{
			o = lt_fsst_decode_noesc(&tab, buf + at, len, out);
			CHECK(o - out == want && memcmp(out, ref, (size_t) want) == 0);
			noesc_runs++;
		}
	}
	CHECK(noesc_runs > 1000);
	/* a trailing escape after 8 codes and in the jump's reach */
	memset(buf, 1, sizeof(buf));
	buf[11] = 255;
	{
		bool		dirty = false;

		CHECK(lt_fsst_decode_full(&tab, buf, 12, buf + sizeof(buf), out, &dirty) == NULL);
	}
	/*
	 * Codes of symbols outside ASCII: a high byte or a NUL inside a symbol lists it, bytes past its
	 * length do not; strings without those codes are known ASCII, with one not; too many: never
	 */
	t[8 + 5 * 8 + 7] = 0x80;	/* symbol 5 has length (5 * 7) % 8 + 1 = 4: past it */
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	CHECK_EQ_INT(tab.n_nonascii, 0);
	t[8 + 5 * 8 + 3] = 0x80;
	t[8 + 9 * 8 + 0] = 0;
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	CHECK_EQ_INT(tab.n_nonascii, 2);
	CHECK(tab.nonascii[0] == 5 && tab.nonascii[1] == 9);
	CHECK(lt_fsst_ascii_codes(&tab, (const uint8_t *) "\x01\x02\x06\x08", 4));
	CHECK(!lt_fsst_ascii_codes(&tab, (const uint8_t *) "\x01\x02\x06\x05", 4));
	CHECK(!lt_fsst_ascii_codes(&tab, (const uint8_t *) "\x09\x02", 2));
	CHECK(lt_fsst_ascii_codes(&tab, (const uint8_t *) "\x09", 0));
	for (int c = 20; c < 20 + LT_FSST_NONASCII_MAX; c++)
		t[8 + c * 8] = 0xC3;
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	CHECK(tab.n_nonascii > LT_FSST_NONASCII_MAX);
	CHECK(!lt_fsst_ascii_codes(&tab, (const uint8_t *) "\x01", 1));
}

/*
 * The encoder on one kind of text: the trained table compresses and decodes back, every
 * string alone and a batch of them (lt_fsst_encode_all loads past a string's end, never past
 * the batch; with a one-per-bucket table it compresses four runs side by side), with escapes
 * (any byte, 0 and >= 0x80 too), empty and 1-byte strings.  Returns e.one_per_bucket.
 */
static bool
fsst_encoder_on(const char *const *words, int n_words, int max_parts, int64_t n, uint64_t seed, int esc_every)
{
	static lt_fsst_encoder e;
	static lt_fsst_table tab;
	uint8_t		t[LT_FSST_TABLE_SIZE];
	int64_t		total = 0;
	int64_t    *offs = malloc(sizeof(int64_t) * (n + 1));
	int64_t    *ooffs = malloc(sizeof(int64_t) * (n + 1));
	uint8_t    *data = malloc((size_t) n * 8 * (size_t) (max_parts + 1));
	uint8_t    *out,
			   *one,
			   *dec;
	uint64_t	rs = seed;
	lt_error	err;
	size_t		clen;

	offs[0] = 0;
	for (int64_t i = 0; i < n; i++)
	{
		int			parts = (int) (unit_xorshift(&rs) % (uint64_t) (max_parts + 1));	/* 0: the empty string */

		for (int k = 0; k < parts; k++)
		{
			uint64_t	r = unit_xorshift(&rs);

			if (r % (uint64_t) esc_every == 0)
				data[total++] = (uint8_t) (r >> 8);
			else
			{
				const char *w = words[(r >> 8) % (uint64_t) n_words];

				memcpy(data + total, w, strlen(w));
				total += (int64_t) strlen(w);
			}
		}
		offs[i + 1] = total;
	}
	out = malloc((size_t) total * 2 + 16);
	one = malloc((size_t) total * 2 + 16);
	dec = malloc((size_t) total * 8 + 64);
	CHECK_OK(lt_fsst_train(data, offs, n, &e, &err), err);
	CHECK(e.table.n_symbols > 0 && e.table.n_symbols <= 255);
	lt_fsst_export(&e.table, t);
	CHECK_OK(lt_fsst_parse(t, sizeof(t), &tab, "t", &err), err);
	clen = lt_fsst_encode_all(&e, data, offs, n, out, ooffs);
	CHECK_EQ_INT(ooffs[0], 0);
	CHECK_EQ_INT(ooffs[n], (int64_t) clen);
	CHECK(clen < (size_t) total / 2);	/* repetitive text compresses */
	for (int64_t i = 0; i < n; i++)
	{
		size_t		len = (size_t) (offs[i + 1] - offs[i]);
		size_t		l1 = lt_fsst_encode(&e, data + offs[i], len, one);
		int64_t		got = lt_fsst_decode(&tab, out + ooffs[i], (size_t) (ooffs[i + 1] - ooffs[i]), dec);

		/* the same bytes as one string at a time */
		CHECK_EQ_INT((int64_t) l1, ooffs[i + 1] - ooffs[i]);
		if ((int64_t) l1 == ooffs[i + 1] - ooffs[i])
			CHECK(memcmp(one, out + ooffs[i], l1) == 0);
		CHECK_EQ_INT(got, (int64_t) len);
		if (got == (int64_t) len && len > 0)
			CHECK(memcmp(dec, data + offs[i], len) == 0);
		if (unit_failures)
			break;
	}
	/* small batches (one run at a time), one ending in a 1-byte string: nothing is loaded past it */
	for (int64_t m = 1; m <= 20; m++)
	{
		uint8_t    *copy = malloc((size_t) (offs[m] - offs[0]) + 1);
		int64_t		o2[21];

		memcpy(copy, data, (size_t) (offs[m] - offs[0]));
		clen = lt_fsst_encode_all(&e, copy, offs, m, out, o2);
		CHECK_EQ_INT((int64_t) clen, ooffs[m]);
		CHECK(memcmp(out, one, 0) == 0 && memcmp(o2, ooffs, sizeof(int64_t) * (size_t) (m + 1)) == 0);
		free(copy);
	}
	{
		uint8_t    *tail = malloc(3);
		int64_t		toffs[3] = {0, 2, 3};
		int64_t		to[3];

		memcpy(tail, words[0], 3);
		clen = lt_fsst_encode_all(&e, tail, toffs, 2, out, to);
		CHECK_EQ_INT(lt_fsst_decode(&tab, out, clen, dec), 3);
		CHECK(memcmp(dec, words[0], 3) == 0);
		free(tail);
	}
	free(offs);
	free(ooffs);
	free(data);
	free(out);
	free(one);
	free(dec);
	return e.one_per_bucket;
}

/*
 * Training keeps the FSST paper's table (one long symbol per bucket, the fast path) when it
 * compresses the sample as well, as for text of many distinct words, and the unrestricted one
 * otherwise.  Both compress exactly as one string at a time does.
 */
TEST(fsst_encoder)
{
	static char vocab[200][12];
	static const char *words[200];
	static const char *const shared[] = {"acgt", "aacg", "cgta", "gtac", "tacg", "ggca", "catg", "ttga"};
	uint64_t	rs = 77;

	/* many distinct words: few symbols share their first bytes */
	for (int i = 0; i < 200; i++)
	{
		int			len = 4 + (int) (unit_xorshift(&rs) % 7);

		for (int k = 0; k < len; k++)
			vocab[i][k] = (char) ('a' + unit_xorshift(&rs) % 26);
		vocab[i][len] = ' ';
		vocab[i][len + 1] = '\0';
		words[i] = vocab[i];
	}
	CHECK(fsst_encoder_on(words, 200, 3, 3000, 0x9e3779b97f4a7c15ULL, 40));
	/* few words, or a 4-letter alphabet: many good symbols share their first 3 bytes */
	CHECK(!fsst_encoder_on(words, 50, 9, 3000, 0x9e3779b97f4a7c15ULL, 40));
	CHECK(!fsst_encoder_on(shared, 8, 6, 3000, 0x2545f4914f6cdd1dULL, 7));
}

/* ---- mini-block ---- */

static const int L_ITEM[] = {LT21_ALL_VALID_ITEM};
static const int L_NITEM[] = {LT21_NULLABLE_ITEM};

TEST(mb_flat_partial_last_chunk)
{
	static mbpage p;
	static int32_t v[1100];
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 1100; i++)
		v[i] = i * 3 - 500;
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) v}, {1024 * 4}, 10}, false, false);
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) (v + 1024)}, {76 * 4}, 0}, false, false);
	CHECK_OK(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 1100, false, false), &p, NULL, 0, 1100, &pg, &err), err);
	if (pg)
	{
		CHECK_EQ_INT(pg->values->length, 1100);
		a = read_rows(&f_i32, pg, 1000, 100, &err);
		CHECK(a != NULL);
		if (a)
		{
			CHECK_EQ_INT(a->length, 100);
			CHECK_EQ_INT(i32_at(a, 0), 1000 * 3 - 500);
			CHECK_EQ_INT(i32_at(a, 99), 1099 * 3 - 500);
			CHECK(a->validity == NULL);
			lt_array_free(a);
		}
		/* reading past the page is refused */
		CHECK(read_rows(&f_i32, pg, 1050, 51, &err) == NULL);
	}
	lt21_page_free(pg);
	pg = NULL;
	free_enc(e);
}

TEST(mb_nullable_def_levels)
{
	static mbpage p;
	int32_t		v[5] = {10, 0, 30, 40, 0};
	uint16_t	def[5] = {0, 1, 0, 0, 1};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a;

	memset(&p, 0, sizeof(p));
	v[1] = 777;					/* garbage under a null must come out as 0 */
	add_chunk(&p, &(chunk) {5, NULL, def, 1, {(uint8_t *) v}, {20}, 0}, false, true);
	CHECK_OK(decode_mb(&f_i32, mk_mb_layout(&mb, L_NITEM, 1, e, 5, false, true), &p, NULL, 0, 5, &pg, &err), err);
	if (pg && (a = read_rows(&f_i32, pg, 0, 5, &err)) != NULL)
	{
		CHECK_EQ_INT(a->null_count, 2);
		CHECK(a->validity && !a->validity[1] && !a->validity[4] && a->validity[2]);
		CHECK_EQ_INT(i32_at(a, 1), 0);
		CHECK_EQ_INT(i32_at(a, 3), 40);
		lt_array_free(a);
	}
	lt21_page_free(pg);
	pg = NULL;
	free_enc(e);
}

/* Inline bitpacking: 1500 u64 values at widths 64 and 0 in two chunks. */
TEST(mb_inline_bitpacking)
{
	static mbpage p;
	static uint64_t v[2048];
	static uint8_t c0[8 + 8192],
				c1[8];
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_inline_bp(64);
	lt21_page  *pg = NULL;
	lt_error	err;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 1024; i++)
		v[i] = 0x8000000000000000ULL + (uint64_t) i * 0x10001;
	lt_put64(c0, 64);
	lt_fl_pack(64, 64, v, c0 + 8);
	lt_put64(c1, 0);			/* width 0: 476 zeros */
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {c0}, {sizeof(c0)}, 10}, false, false);
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {c1}, {sizeof(c1)}, 0}, false, false);
	CHECK_OK(decode_mb(&f_u64, mk_mb_layout(&mb, L_ITEM, 1, e, 1500, false, false), &p, NULL, 0, 1500, &pg, &err), err);
	if (pg)
	{
		CHECK_EQ_INT(pg->values->length, 1500);
		CHECK(i64_at(pg->values, 5) == (int64_t) (0x8000000000000000ULL + 5 * 0x10001));
		CHECK_EQ_INT(i64_at(pg->values, 1499), 0);
	}
	lt21_page_free(pg);
	pg = NULL;
	/* a bit width above the word size is corrupt */
	lt_put64(c1, 65);
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {c1}, {sizeof(c1)}, 0}, false, false);
	CHECK_CODE(decode_mb(&f_u64, mk_mb_layout(&mb, L_ITEM, 1, e, 10, false, false), &p, NULL, 0, 10, &pg, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "test.lance") && strstr(err.msg, "column 3 page 7"));
	free_enc(e);
}

static size_t
var_chunk(uint8_t *out, const char *const *s, int n, unsigned ow)
{
	size_t		off = (size_t) (n + 1) * ow;

	for (int i = 0; i <= n; i++)
	{
		if (ow == 4)
			lt_put32(out + i * 4, (uint32_t) off);
		else
			lt_put64(out + i * 8, off);
		if (i < n)
		{
			memcpy(out + off, s[i], strlen(s[i]));
			off += strlen(s[i]);
		}
	}
	return off;
}

TEST(mb_variable_strings)
{
	static mbpage p;
	static uint8_t c[256];
	const char *s[] = {"alpha", "", "gamma", "X", ""};
	uint16_t	def[5] = {0, 0, 1, 0, 0};
	Lt__Enc21__MiniBlockLayout mb;
	lt_error	err;

	for (unsigned ow = 4; ow <= 8; ow += 4)
	{
		Lt__Enc21__CompressiveEncoding *e = mk_variable(ow * 8);
		lt21_page  *pg = NULL;
		size_t		n = var_chunk(c, s, 5, ow);
		lt_array   *a;

		memset(&p, 0, sizeof(p));
		add_chunk(&p, &(chunk) {5, NULL, def, 1, {c}, {n}, 0}, false, true);
		CHECK_OK(decode_mb(ow == 4 ? &f_str : &f_lstr, mk_mb_layout(&mb, L_NITEM, 1, e, 5, false, true),
						   &p, NULL, 0, 5, &pg, &err), err);
		if (pg && (a = read_rows(ow == 4 ? &f_str : &f_lstr, pg, 1, 4, &err)) != NULL)
		{
			CHECK(str_is(a, 0, ""));
			CHECK(!a->validity[1] && str_is(a, 1, ""));	/* null emptied */
			CHECK(str_is(a, 2, "X"));
			CHECK(str_is(a, 3, ""));
			CHECK_EQ_INT(a->data_len, 1);
			lt_array_free(a);
		}
		lt21_page_free(pg);
		pg = NULL;
		/* decreasing offsets are corrupt */
		lt_put32(c + ow, 1);
		memset(&p, 0, sizeof(p));
		add_chunk(&p, &(chunk) {5, NULL, def, 1, {c}, {n}, 0}, false, true);
		CHECK_CODE(decode_mb(&f_str, mk_mb_layout(&mb, L_NITEM, 1, e, 5, false, true), &p, NULL, 0, 5, &pg, &err),
				   LT_ECORRUPT);
		free_enc(e);
	}
}

TEST(mb_fsst)
{
	static mbpage p;
	static uint8_t c[64],
				t[LT_FSST_TABLE_SIZE];
	const char *s[] = {"\x00\x01", "", "\xff!\x00"};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__Fsst *f = lt_calloc(1, sizeof(*f));
	lt21_page  *pg = NULL;
	lt_error	err;
	size_t		n;

	/* strlen-based builder: give explicit strings via a tiny table */
	fsst_table(t, 2, true);
	memcpy(t + 8, "abc", 3);
	memcpy(t + 16, "de", 2);
	t[24] = 3;
	t[25] = 2;
	lt__enc21__compressive_encoding__init(e);
	lt__enc21__fsst__init(f);
	f->has_symbol_table = 1;
	f->symbol_table.data = lt_malloc(sizeof(t));
	memcpy(f->symbol_table.data, t, sizeof(t));
	f->symbol_table.len = sizeof(t);
	f->values = mk_variable(32);
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FSST;
	e->fsst = f;
	/* compressed strings: [0,1] -> "abcde", [] -> "", [255 '!' 0] -> "!abc" */
	lt_put32(c, 16);
	lt_put32(c + 4, 18);
	lt_put32(c + 8, 18);
	lt_put32(c + 12, 21);
	memcpy(c + 16, "\x00\x01\xff!\x00", 5);
	n = 21;
	(void) s;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {c}, {n}, 0}, false, false);
	CHECK_OK(decode_mb(&f_str, mk_mb_layout(&mb, L_ITEM, 1, e, 3, false, false), &p, NULL, 0, 3, &pg, &err), err);
	if (pg)
	{
		CHECK(str_is(pg->values, 0, "abcde"));
		CHECK(str_is(pg->values, 1, ""));
		CHECK(str_is(pg->values, 2, "!abc"));
	}
	lt21_page_free(pg);
	pg = NULL;
	/* an unknown code */
	c[16] = 9;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {c}, {n}, 0}, false, false);
	CHECK_CODE(decode_mb(&f_str, mk_mb_layout(&mb, L_ITEM, 1, e, 3, false, false), &p, NULL, 0, 3, &pg, &err), LT_ECORRUPT);
	free_enc(e);
}

static Lt__Enc21__CompressiveEncoding *
mk_rle(uint64_t bits)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__Rle *r = lt_calloc(1, sizeof(*r));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__rle__init(r);
	r->values = mk_flat(bits);
	r->run_lengths = mk_flat(8);
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_RLE;
	e->rle = r;
	return e;
}

TEST(mb_rle)
{
	static mbpage p;
	int32_t		vals[3] = {7, -1, 9};
	uint8_t		lens[3] = {255, 3, 250};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_rle(32);
	lt21_page  *pg = NULL;
	lt_error	err;

	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 2, {(uint8_t *) vals, lens}, {12, 3}, 0}, false, false);
	mk_mb_layout(&mb, L_ITEM, 1, e, 500, false, false);
	mb.num_buffers = 2;
	{
		Lt__Enc21__PageLayout pl = LT__ENC21__PAGE_LAYOUT__INIT;

		pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
		pl.mini_block_layout = &mb;
		CHECK_OK(decode_mb(&f_i32, &pl, &p, NULL, 0, 500, &pg, &err), err);
		if (pg)
		{
			CHECK_EQ_INT(i32_at(pg->values, 254), 7);
			CHECK_EQ_INT(i32_at(pg->values, 255), -1);
			CHECK_EQ_INT(i32_at(pg->values, 258), 9);
			CHECK_EQ_INT(i32_at(pg->values, 499), 9);
		}
		lt21_page_free(pg);
		pg = NULL;
		/* a zero-length run */
		lens[1] = 0;
		memset(&p, 0, sizeof(p));
		add_chunk(&p, &(chunk) {0, NULL, NULL, 2, {(uint8_t *) vals, lens}, {12, 3}, 0}, false, false);
		CHECK_CODE(decode_mb(&f_i32, &pl, &p, NULL, 0, 500, &pg, &err), LT_ECORRUPT);
	}
	free_enc(e);
}

/*
 * Values [lo, lo + 1) of a chunk (a point lookup): an RLE chunk's value comes as one slot, found from the
 * run lengths alone, equal to the whole decode's; a few strings of a variable chunk are the whole
 * decode's, the others empty; damage inside what is read is still an error.
 */
TEST(mb_span_values)
{
	int32_t		vals[3] = {7, -1, 9};
	uint8_t		lens[3] = {255, 3, 250};
	const uint8_t *bp[2] = {(const uint8_t *) vals, lens};
	uint64_t	bl[2] = {12, 3};
	Lt__Enc21__CompressiveEncoding *e = mk_rle(32);
	Lt__Enc21__CompressiveEncoding *v = mk_variable(32);
	lt_array   *all = NULL,
			   *one = NULL;
	lt_error	err;
	int			bad = 0;

	CHECK_OK(lt_array_new(&f_i32, &all, &err), err);
	CHECK_OK(lt21_mb_decode_values(&W, e, 2, bp, bl, 508, all, NULL, &err), err);
	for (uint64_t lo = 0; all && lo < 508; lo++)
	{
		CHECK_OK(lt_array_new(&f_i32, &one, &err), err);
		CHECK_OK(lt21_mb_decode_values_span(&W, e, 2, bp, bl, 508, lo, lo + 1, one, NULL, &err), err);
		bad += one->length != 1 || i32_at(one, 0) != i32_at(all, (int64_t) lo);
		lt_array_free(one);
		one = NULL;
	}
	CHECK_EQ_INT(bad, 0);
	lt_array_free(all);
	/* a zero-length run before the value: the whole decode reports it */
	lens[0] = 0;
	CHECK_OK(lt_array_new(&f_i32, &one, &err), err);
	CHECK_CODE(lt21_mb_decode_values_span(&W, e, 2, bp, bl, 508, 300, 301, one, NULL, &err), LT_ECORRUPT);
	lt_array_free(one);
	one = NULL;
	{
		/* "ab", "", "cde", "f": offsets from the chunk buffer's start, then the bytes */
		uint8_t		chunk[32];
		uint32_t	offs[5] = {20, 22, 22, 25, 26};
		const uint8_t *sp[1] = {chunk};
		uint64_t	sl[1] = {26};

		for (int i = 0; i < 5; i++)
			lt_put32(chunk + i * 4, offs[i]);
		memcpy(chunk + 20, "abcdef", 6);
		CHECK_OK(lt_array_new(&f_str, &one, &err), err);
		CHECK_OK(lt21_mb_decode_values_span(&W, v, 1, sp, sl, 4, 1, 3, one, NULL, &err), err);
		CHECK_EQ_INT(one->length, 4);
		CHECK(str_is(one, 1, ""));
		CHECK(str_is(one, 2, "cde"));
		CHECK(str_is(one, 3, ""));
		lt_array_free(one);
		one = NULL;
		/* an offset of the wanted string past the bytes */
		lt_put32(chunk + 12, 40);
		CHECK_OK(lt_array_new(&f_str, &one, &err), err);
		CHECK_CODE(lt21_mb_decode_values_span(&W, v, 1, sp, sl, 4, 2, 3, one, NULL, &err), LT_ECORRUPT);
		lt_array_free(one);
	}
	free_enc(e);
	free_enc(v);
}

TEST(mb_dictionary)
{
	static mbpage p;
	static uint8_t dict[128];
	uint32_t	idx[6] = {1, 0, 1, 99, 2, 2};
	uint16_t	def[6] = {0, 0, 0, 1, 0, 0};
	const char *words[] = {"red", "green", ""};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	Lt__Enc21__CompressiveEncoding *de = mk_variable(32);
	lt21_page  *pg = NULL;
	lt_error	err;
	size_t		dl;
	lt_array   *a;

	/* block variable: u32 32, u32 bytes_start, 4 offsets from 0, bytes */
	lt_put32(dict, 32);
	lt_put32(dict + 4, 8 + 16);
	lt_put32(dict + 8, 0);
	lt_put32(dict + 12, 3);
	lt_put32(dict + 16, 8);
	lt_put32(dict + 20, 8);
	memcpy(dict + 24, "redgreen", 8);
	dl = 32;
	(void) words;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {6, NULL, def, 1, {(uint8_t *) idx}, {24}, 0}, false, true);
	mk_mb_layout(&mb, L_NITEM, 1, e, 6, false, true);
	mb.dictionary = de;
	mb.has_num_dictionary_items = 1;
	mb.num_dictionary_items = 3;
	{
		Lt__Enc21__PageLayout pl = LT__ENC21__PAGE_LAYOUT__INIT;

		pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
		pl.mini_block_layout = &mb;
		CHECK_OK(decode_mb(&f_str, &pl, &p, dict, dl, 6, &pg, &err), err);
		if (pg && (a = read_rows(&f_str, pg, 0, 6, &err)) != NULL)
		{
			CHECK(str_is(a, 0, "green"));
			CHECK(str_is(a, 1, "red"));
			CHECK(!a->validity[3] && str_is(a, 3, ""));	/* the bad index hides under a null */
			CHECK(str_is(a, 4, ""));
			lt_array_free(a);
		}
		lt21_page_free(pg);
		pg = NULL;
		/* an out-of-range index on a valid item */
		def[3] = 0;
		memset(&p, 0, sizeof(p));
		add_chunk(&p, &(chunk) {6, NULL, def, 1, {(uint8_t *) idx}, {24}, 0}, false, true);
		CHECK_CODE(decode_mb(&f_str, &pl, &p, dict, dl, 6, &pg, &err), LT_ECORRUPT);
	}
	free_enc(e);
	free_enc(de);
}

TEST(mb_fsl_with_validity)
{
	static mbpage p;
	float		v[6] = {1, 2, 3, 4, 5, 6};
	uint8_t		bits[1] = {0x3B};	/* items 2 and 5 null (LSB first: 1,1,0,1,1,1 -> 0b111011) */
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__FixedSizeList *f = lt_calloc(1, sizeof(*f));
	lt21_page  *pg = NULL;
	lt_error	err;

	bits[0] = 0x1B;				/* 0b011011: items 2 and 5 null */
	lt__enc21__compressive_encoding__init(e);
	lt__enc21__fixed_size_list__init(f);
	f->has_items_per_value = 1;
	f->items_per_value = 2;
	f->has_has_validity = 1;
	f->has_validity = 1;
	f->values = mk_flat(32);
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST;
	e->fixed_size_list = f;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 2, {bits, (uint8_t *) v}, {1, 24}, 0}, false, false);
	mk_mb_layout(&mb, L_ITEM, 1, e, 3, false, false);
	mb.num_buffers = 2;
	{
		Lt__Enc21__PageLayout pl = LT__ENC21__PAGE_LAYOUT__INIT;
		lt_array   *a;

		pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
		pl.mini_block_layout = &mb;
		CHECK_OK(decode_mb(&f_fsl, &pl, &p, NULL, 0, 3, &pg, &err), err);
		if (pg && (a = read_rows(&f_fsl, pg, 1, 2, &err)) != NULL)
		{
			lt_array   *c = a->children[0];
			float		x;

			CHECK_EQ_INT(a->length, 2);
			CHECK_EQ_INT(c->length, 4);
			CHECK(c->validity && !c->validity[0] && c->validity[1] && c->validity[2] && !c->validity[3]);
			memcpy(&x, c->values + 4, 4);
			CHECK(x == 4);
			lt_array_free(a);
		}
		lt21_page_free(pg);
		pg = NULL;
	}
	free_enc(e);
}

TEST(mb_general_zstd_lz4)
{
	static mbpage p;
	static int32_t v[1024];
	static uint8_t z[8 + 8192],
				l[4 + 8192];
	Lt__Enc21__MiniBlockLayout mb;
	lt_error	err;
	size_t		zn,
				ln;

	for (int i = 0; i < 1024; i++)
		v[i] = i % 13;
	lt_put64(z, sizeof(v));
	zn = 8 + ZSTD_compress(z + 8, sizeof(z) - 8, v, sizeof(v), 1);
	lt_put32(l, sizeof(v));
	ln = 4 + (size_t) LZ4_compress_default((const char *) v, (char *) l + 4, sizeof(v), sizeof(l) - 4);
	for (int s = 1; s <= 2; s++)
	{
		Lt__Enc21__CompressiveEncoding *e = mk_general(s, mk_flat(32));
		lt21_page  *pg = NULL;

		memset(&p, 0, sizeof(p));
		add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {s == 2 ? z : l}, {s == 2 ? zn : ln}, 0}, false, false);
		CHECK_OK(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 1024, false, false), &p, NULL, 0, 1024, &pg, &err), err);
		if (pg)
			CHECK(memcmp(pg->values->values, v, sizeof(v)) == 0);
		lt21_page_free(pg);
		pg = NULL;
		/* a truncated compressed buffer */
		memset(&p, 0, sizeof(p));
		add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {s == 2 ? z : l}, {(s == 2 ? zn : ln) - 3}, 0}, false, false);
		CHECK_CODE(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 1024, false, false), &p, NULL, 0, 1024, &pg, &err),
				   LT_ECORRUPT);
		free_enc(e);
	}
}

TEST(mb_byte_stream_split_and_bool)
{
	static mbpage p;
	double		d[3] = {1.5, -2.25, 1e300};
	uint8_t		split[24];
	uint8_t		bits[2] = {0x05, 0x01};	/* 1,0,1,0,0,0,0,0,1 */
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__ByteStreamSplit *b = lt_calloc(1, sizeof(*b));
	Lt__Enc21__CompressiveEncoding *fb = mk_flat(1);
	lt21_page  *pg = NULL;
	lt_error	err;

	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 8; j++)
			split[j * 3 + i] = ((uint8_t *) &d[i])[j];
	lt__enc21__compressive_encoding__init(e);
	lt__enc21__byte_stream_split__init(b);
	b->values = mk_flat(64);
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_BYTE_STREAM_SPLIT;
	e->byte_stream_split = b;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {split}, {24}, 0}, false, false);
	CHECK_OK(decode_mb(&f_f64, mk_mb_layout(&mb, L_ITEM, 1, e, 3, false, false), &p, NULL, 0, 3, &pg, &err), err);
	if (pg)
		CHECK(memcmp(pg->values->values, d, 24) == 0);
	lt21_page_free(pg);
	pg = NULL;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {bits}, {2}, 0}, false, false);
	CHECK_OK(decode_mb(&f_bool, mk_mb_layout(&mb, L_ITEM, 1, fb, 9, false, false), &p, NULL, 0, 9, &pg, &err), err);
	if (pg)
	{
		CHECK(pg->values->values[0] == 1 && pg->values->values[1] == 0 && pg->values->values[2] == 1);
		CHECK(pg->values->values[8] == 1 && pg->values->values[7] == 0);
	}
	lt21_page_free(pg);
	pg = NULL;
	/* a bitmap too short for its values */
	CHECK_CODE(decode_mb(&f_bool, mk_mb_layout(&mb, L_ITEM, 1, fb, 17, false, false), &p, NULL, 0, 17, &pg, &err),
			   LT_ECORRUPT);
	free_enc(e);
	free_enc(fb);
}

TEST(mb_zero_rows_and_bad_chunks)
{
	static mbpage p;
	int32_t		v[4] = {1, 2, 3, 4};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a;

	memset(&p, 0, sizeof(p));
	CHECK_OK(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 0, false, false), &p, NULL, 0, 0, &pg, &err), err);
	if (pg && (a = read_rows(&f_i32, pg, 0, 0, &err)) != NULL)
	{
		CHECK_EQ_INT(a->length, 0);
		lt_array_free(a);
	}
	lt21_page_free(pg);
	pg = NULL;
	/* items claimed but no chunks */
	CHECK_CODE(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err), LT_ECORRUPT);
	/* a chunk longer than the data buffer */
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) v}, {16}, 0}, false, false);
	p.data_len -= 8;
	CHECK_CODE(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err), LT_ECORRUPT);
	/* a value buffer size beyond its chunk */
	p.data_len += 8;
	lt_put16(p.data + 2, 400);
	CHECK_CODE(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err), LT_ECORRUPT);
	/* more items than the flat buffer holds */
	lt_put16(p.data + 2, 16);
	CHECK_CODE(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 5, false, false), &p, NULL, 0, 5, &pg, &err), LT_ECORRUPT);
	/* rows that do not match the levels */
	CHECK_CODE(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 5, &pg, &err), LT_ECORRUPT);
	free_enc(e);
}

/* 2.2 large chunks (u32 metadata and sizes), and a page decoded over a used one. */
TEST(mb_large_chunk_and_reuse)
{
	static mbpage p;
	static int32_t v[12000];
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__PageLayout *pl;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_page  *pg = NULL;
	lt_error	err;

	for (int i = 0; i < 12000; i++)
		v[i] = i ^ 0x5555;
	memset(&p, 0, sizeof(p));
	g_large = true;
	/* a first chunk of 8192 values (32 KiB: too big for u16 sizes) */
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) v}, {8192 * 4}, 13}, false, false);
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) (v + 8192)}, {(12000 - 8192) * 4}, 0}, false, false);
	g_large = false;
	pl = mk_mb_layout(&mb, L_ITEM, 1, e, 12000, false, false);
	mb.has_has_large_chunk = mb.has_large_chunk = 1;
	CHECK_OK(decode_mb(&f_i32, pl, &p, NULL, 0, 12000, &pg, &err), err);
	if (pg)
	{
		CHECK_EQ_INT(pg->values->length, 12000);
		CHECK_EQ_INT(i32_at(pg->values, 11999), 11999 ^ 0x5555);
	}
	/* decode a small page into the same page struct */
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) v}, {12}, 0}, false, false);
	CHECK_OK(decode_mb(&f_i32, mk_mb_layout(&mb, L_ITEM, 1, e, 3, false, false), &p, NULL, 0, 3, &pg, &err), err);
	if (pg)
	{
		CHECK_EQ_INT(pg->values->length, 3);
		CHECK_EQ_INT(i32_at(pg->values, 2), 2 ^ 0x5555);
	}
	lt21_page_free(pg);
	free_enc(e);
}

/*
 * The digest's example: list<int64> rows null, [1], [2,3], [3,4,5], [], null
 * with layers [ALL_VALID_ITEM, NULL_AND_EMPTY_LIST].
 */
static const uint16_t EX_REP[9] = {1, 1, 1, 0, 1, 0, 0, 1, 1};
static const uint16_t EX_DEF[9] = {1, 0, 0, 0, 0, 0, 0, 2, 1};
static const int L_LIST[] = {LT21_ALL_VALID_ITEM, LT21_NULL_AND_EMPTY_LIST};

TEST(repdef_list_example)
{
	static mbpage p;
	int64_t		v[6] = {1, 2, 3, 3, 4, 5};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(64);
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a;

	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {9, EX_REP, EX_DEF, 1, {(uint8_t *) v}, {48}, 0}, true, true);
	CHECK_OK(decode_mb(&f_i64, mk_mb_layout(&mb, L_LIST, 2, e, 6, true, true), &p, NULL, 0, 6, &pg, &err), err);
	if (pg && (a = read_rows(&f_list, pg, 0, 6, &err)) != NULL)
	{
		int64_t		off[7] = {0, 0, 1, 3, 6, 6, 6};

		CHECK_EQ_INT(a->length, 6);
		for (int i = 0; i <= 6; i++)
			CHECK_EQ_INT(a->offsets[i], off[i]);
		CHECK(a->validity && !a->validity[0] && a->validity[1] && a->validity[4] && !a->validity[5]);
		CHECK_EQ_INT(a->null_count, 2);
		CHECK_EQ_INT(a->children[0]->length, 6);
		CHECK_EQ_INT(i64_at(a->children[0], 5), 5);
		lt_array_free(a);
	}
	/* a middle slice, appended to an array that already has rows */
	if (pg)
	{
		lt_array   *b = read_rows(&f_list, pg, 2, 2, &err);
		lt_array   *nodes[2];

		CHECK(b != NULL);
		if (b)
		{
			nodes[0] = b;
			nodes[1] = b->children[0];
			CHECK_OK(lt21_page_append(&W, pg, nodes, 2, 0, 4, 2, &err), err);
			CHECK_EQ_INT(b->length, 4);
			CHECK_EQ_INT(b->offsets[2], 5);
			CHECK_EQ_INT(b->offsets[4], 5);
			CHECK(b->validity && b->validity[2] && !b->validity[3]);
			CHECK_EQ_INT(i64_at(b->children[0], 0), 2);
			CHECK_EQ_INT(i64_at(b->children[0], 4), 5);
			lt_array_free(b);
		}
	}
	lt21_page_free(pg);
	pg = NULL;
	free_enc(e);
}

TEST(repdef_corrupt_levels)
{
	static mbpage p;
	int64_t		v[6] = {1, 2, 3, 3, 4, 5};
	uint16_t	rep[9],
				def[9];
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(64);
	lt21_page  *pg = NULL;
	lt_error	err;

	/* a def level above the layers' maximum */
	memcpy(rep, EX_REP, sizeof(rep));
	memcpy(def, EX_DEF, sizeof(def));
	def[7] = 3;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {9, rep, def, 1, {(uint8_t *) v}, {48}, 0}, true, true);
	CHECK_CODE(decode_mb(&f_i64, mk_mb_layout(&mb, L_LIST, 2, e, 6, true, true), &p, NULL, 0, 6, &pg, &err), LT_ECORRUPT);
	/* a page starting inside a row */
	def[7] = 2;
	rep[0] = 0;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {9, rep, def, 1, {(uint8_t *) v}, {48}, 0}, true, true);
	CHECK_CODE(decode_mb(&f_i64, mk_mb_layout(&mb, L_LIST, 2, e, 6, true, true), &p, NULL, 0, 6, &pg, &err), LT_ECORRUPT);
	/* visible levels disagreeing with the item count */
	rep[0] = 1;
	def[1] = 1;
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {9, rep, def, 1, {(uint8_t *) v}, {48}, 0}, true, true);
	CHECK_CODE(decode_mb(&f_i64, mk_mb_layout(&mb, L_LIST, 2, e, 6, true, true), &p, NULL, 0, 6, &pg, &err), LT_ECORRUPT);
	/* list layers without repetition levels */
	CHECK_CODE(decode_mb(&f_i64, mk_mb_layout(&mb, L_LIST, 2, e, 6, false, true), &p, NULL, 0, 6, &pg, &err), LT_ECORRUPT);
	/* an unknown layer */
	{
		int			bad[2] = {LT21_ALL_VALID_ITEM, 9};

		CHECK_CODE(decode_mb(&f_i64, mk_mb_layout(&mb, bad, 2, e, 6, true, true), &p, NULL, 0, 6, &pg, &err), LT_ECORRUPT);
	}
	free_enc(e);
}

/*
 * struct<x: int32, y: utf8> (nullable struct, nullable children), rows:
 * {1, "a"}, null, {null, "c"}: layers [NULLABLE_ITEM, NULLABLE_ITEM], def of
 * x: 0, 2, 1 and of y: 0, 2, 0.  Two leaves merge under one struct.
 */
TEST(repdef_struct_two_leaves)
{
	static mbpage px,
				py;
	int32_t		xv[3] = {1, 0, 0};
	uint16_t	xd[3] = {0, 2, 1},
				yd[3] = {0, 2, 0};
	static uint8_t yc[64];
	const char *ys[] = {"a", "", "c"};
	const int	L2[] = {LT21_NULLABLE_ITEM, LT21_NULLABLE_ITEM};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *ex = mk_flat(32),
			   *ey = mk_variable(32);
	lt21_page  *gx = NULL,
			   *gy = NULL;
	lt_error	err;
	lt_array   *a = NULL;
	size_t		yn = var_chunk(yc, ys, 3, 4);

	memset(&px, 0, sizeof(px));
	memset(&py, 0, sizeof(py));
	add_chunk(&px, &(chunk) {3, NULL, xd, 1, {(uint8_t *) xv}, {12}, 0}, false, true);
	add_chunk(&py, &(chunk) {3, NULL, yd, 1, {yc}, {yn}, 0}, false, true);
	CHECK_OK(decode_mb(&f_sx, mk_mb_layout(&mb, L2, 2, ex, 3, false, true), &px, NULL, 0, 3, &gx, &err), err);
	CHECK_OK(decode_mb(&f_sy, mk_mb_layout(&mb, L2, 2, ey, 3, false, true), &py, NULL, 0, 3, &gy, &err), err);
	CHECK_OK(lt_array_new(&f_struct, &a, &err), err);
	if (gx && gy && a)
	{
		lt_array   *nx[2] = {a, a->children[0]},
				   *ny[2] = {a, a->children[1]};

		CHECK_OK(lt21_page_append(&W, gx, nx, 2, 0, 0, 3, &err), err);
		CHECK_OK(lt21_page_append(&W, gy, ny, 2, 1, 0, 3, &err), err);
		CHECK_EQ_INT(a->length, 3);
		CHECK(a->validity && a->validity[0] && !a->validity[1] && a->validity[2]);
		CHECK_EQ_INT(a->children[0]->length, 3);
		CHECK_EQ_INT(a->children[1]->length, 3);
		CHECK(!a->children[0]->validity[2] && a->children[0]->validity[0]);
		CHECK(str_is(a->children[1], 2, "c"));
		CHECK(!a->children[1]->validity[1]);
	}
	lt_array_free(a);
	lt21_page_free(gx);
	gx = NULL;
	lt21_page_free(gy);
	gy = NULL;
	free_enc(ex);
	free_enc(ey);
}

/*
 * list<struct<x: int32>> with a null struct inside a list and a null list:
 * rows [{1}, null], null, [] -> layers [NULLABLE_ITEM(x), NULLABLE_ITEM(struct),
 * NULL_AND_EMPTY_LIST]: def x=1, struct=2, list null=3, empty=4.
 */
TEST(repdef_list_of_struct)
{
	static lt_field fx = {.id = 3, .name = "x", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
	static lt_field *sc[] = {&fx};
	static lt_field fs = {.id = 2, .name = "item", .type = LT_TYPE_STRUCT, .n_children = 1, .children = sc, .nullable = true};
	static lt_field *lc[] = {&fs};
	static lt_field fl = {.id = 1, .name = "l", .type = LT_TYPE_LIST, .n_children = 1, .children = lc, .nullable = true};
	static mbpage p;
	int32_t		v[2] = {1, 0};
	uint16_t	rep[4] = {1, 0, 1, 1},
				def[4] = {0, 2, 3, 4};
	const int	L3[] = {LT21_NULLABLE_ITEM, LT21_NULLABLE_ITEM, LT21_NULL_AND_EMPTY_LIST};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a;

	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {4, rep, def, 1, {(uint8_t *) v}, {8}, 0}, true, true);
	CHECK_OK(decode_mb(&fx, mk_mb_layout(&mb, L3, 3, e, 2, true, true), &p, NULL, 0, 3, &pg, &err), err);
	if (pg && (a = read_rows(&fl, pg, 0, 3, &err)) != NULL)
	{
		lt_array   *s = a->children[0];

		CHECK_EQ_INT(a->length, 3);
		CHECK_EQ_INT(a->offsets[1], 2);
		CHECK_EQ_INT(a->offsets[3], 2);
		CHECK(a->validity[0] && !a->validity[1] && a->validity[2]);
		CHECK_EQ_INT(s->length, 2);
		CHECK(s->validity && s->validity[0] && !s->validity[1]);
		CHECK_EQ_INT(s->children[0]->length, 2);
		CHECK(s->children[0]->validity && !s->children[0]->validity[1]);
		CHECK_EQ_INT(i32_at(s->children[0], 0), 1);
		lt_array_free(a);
	}
	lt21_page_free(pg);
	pg = NULL;
	free_enc(e);
}

/* ---- constant pages ---- */

static Lt__Enc21__PageLayout *
mk_const(Lt__Enc21__ConstantLayout *cl, const int *layers, int nl)
{
	static Lt__Enc21__PageLayout pl;

	lt__enc21__page_layout__init(&pl);
	lt__enc21__constant_layout__init(cl);
	for (int i = 0; i < nl; i++)
		layers_buf[i] = layers[i];
	cl->n_layers = nl;
	cl->layers = layers_buf;
	pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT;
	pl.constant_layout = cl;
	return &pl;
}

TEST(constant_pages)
{
	Lt__Enc21__ConstantLayout cl;
	lt21_page  *pg = NULL;
	lt_error	err;
	lt21_bufs	none = {0, NULL, NULL};
	lt_array   *a;

	/* simple all-null */
	CHECK_OK(lt21_page_decode(&W, &f_i32, mk_const(&cl, L_NITEM, 1), 10, &none, &pg, &err), err);
	if (pg && (a = read_rows(&f_i32, pg, 2, 5, &err)) != NULL)
	{
		CHECK_EQ_INT(a->length, 5);
		CHECK_EQ_INT(a->null_count, 5);
		lt_array_free(a);
	}
	lt21_page_free(pg);
	pg = NULL;
	/* complex all-null: list rows null, [], null */
	{
		uint16_t	rep[3] = {1, 1, 1},
					def[3] = {1, 2, 1};
		const uint8_t *bp[2] = {(uint8_t *) rep, (uint8_t *) def};
		uint64_t	bl[2] = {6, 6};
		lt21_bufs	b = {2, bp, bl};

		CHECK_OK(lt21_page_decode(&W, &f_i64, mk_const(&cl, L_LIST, 2), 3, &b, &pg, &err), err);
		if (pg && (a = read_rows(&f_list, pg, 0, 3, &err)) != NULL)
		{
			CHECK_EQ_INT(a->length, 3);
			CHECK(!a->validity[0] && a->validity[1] && !a->validity[2]);
			CHECK_EQ_INT(a->offsets[3], 0);
			CHECK_EQ_INT(a->children[0]->length, 0);
			lt_array_free(a);
		}
		lt21_page_free(pg);
		pg = NULL;
		/* odd-length level buffer */
		bl[1] = 5;
		CHECK_CODE(lt21_page_decode(&W, &f_i64, mk_const(&cl, L_LIST, 2), 3, &b, &pg, &err), LT_ECORRUPT);
	}
	/* 2.2 constant: inline value with def levels */
	{
		uint16_t	def[4] = {0, 1, 0, 0};
		const uint8_t *bp[2] = {(uint8_t *) "", (uint8_t *) def};
		uint64_t	bl[2] = {0, 8};
		lt21_bufs	b = {2, bp, bl};
		int32_t		k = 42;

		mk_const(&cl, L_NITEM, 1);
		cl.has_inline_value = 1;
		cl.inline_value.data = (uint8_t *) &k;
		cl.inline_value.len = 4;
		{
			Lt__Enc21__PageLayout pl = LT__ENC21__PAGE_LAYOUT__INIT;

			pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT;
			pl.constant_layout = &cl;
			CHECK_OK(lt21_page_decode(&W, &f_i32, &pl, 4, &b, &pg, &err), err);
			if (pg && (a = read_rows(&f_i32, pg, 0, 4, &err)) != NULL)
			{
				CHECK_EQ_INT(i32_at(a, 0), 42);
				CHECK_EQ_INT(i32_at(a, 3), 42);
				CHECK(!a->validity[1]);
				CHECK_EQ_INT(i32_at(a, 1), 0);
				lt_array_free(a);
			}
			lt21_page_free(pg);
			pg = NULL;
			cl.inline_value.len = 3;
			CHECK_CODE(lt21_page_decode(&W, &f_i32, &pl, 4, &b, &pg, &err), LT_ECORRUPT);
		}
	}
}

/* ---- full-zip ---- */

static Lt__Enc21__PageLayout *
mk_fz(Lt__Enc21__FullZipLayout *fz, const int *layers, int nl, Lt__Enc21__CompressiveEncoding *e,
	  unsigned brep, unsigned bdef, bool fixed, unsigned bits, unsigned items, unsigned visible)
{
	static Lt__Enc21__PageLayout pl;

	lt__enc21__page_layout__init(&pl);
	lt__enc21__full_zip_layout__init(fz);
	for (int i = 0; i < nl; i++)
		layers_buf[i] = layers[i];
	fz->n_layers = nl;
	fz->layers = layers_buf;
	fz->has_bits_rep = fz->has_bits_def = 1;
	fz->bits_rep = brep;
	fz->bits_def = bdef;
	fz->details_case = fixed ? LT__ENC21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE
		: LT__ENC21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET;
	if (fixed)
		fz->bits_per_value = bits;
	else
		fz->bits_per_offset = bits;
	fz->has_num_items = fz->has_num_visible_items = 1;
	fz->num_items = items;
	fz->num_visible_items = visible;
	fz->value_compression = e;
	pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT;
	pl.full_zip_layout = fz;
	return &pl;
}

TEST(fullzip_fixed)
{
	Lt__Enc21__FullZipLayout fz;
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__FixedSizeList *f = lt_calloc(1, sizeof(*f));
	float		v[6] = {1, 2, 3, 4, 5, 6};
	const uint8_t *bp[1] = {(uint8_t *) v};
	uint64_t	bl[1] = {24};
	lt21_bufs	b = {1, bp, bl};
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a;

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__fixed_size_list__init(f);
	f->has_items_per_value = 1;
	f->items_per_value = 2;
	f->values = mk_flat(32);
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST;
	e->fixed_size_list = f;
	/* no levels: the buffer is the vectors */
	CHECK_OK(lt21_page_decode(&W, &f_fsl, mk_fz(&fz, L_ITEM, 1, e, 0, 0, true, 64, 3, 3), 3, &b, &pg, &err), err);
	if (pg && (a = read_rows(&f_fsl, pg, 1, 2, &err)) != NULL)
	{
		CHECK_EQ_INT(a->children[0]->length, 4);
		CHECK(memcmp(a->children[0]->values, v + 2, 16) == 0);
		lt_array_free(a);
	}
	lt21_page_free(pg);
	pg = NULL;
	/* a buffer that is not a whole number of values */
	bl[0] = 20;
	CHECK_CODE(lt21_page_decode(&W, &f_fsl, mk_fz(&fz, L_ITEM, 1, e, 0, 0, true, 64, 3, 3), 3, &b, &pg, &err), LT_ECORRUPT);
	free_enc(e);

	/* nullable int64 with 1-byte control words; nulls keep their value bytes */
	{
		uint8_t		buf[3 * 9];
		int64_t		x[3] = {5, 99, -7};
		Lt__Enc21__CompressiveEncoding *e64 = mk_flat(64);

		for (int i = 0; i < 3; i++)
		{
			buf[i * 9] = i == 1;
			memcpy(buf + i * 9 + 1, &x[i], 8);
		}
		bp[0] = buf;
		bl[0] = sizeof(buf);
		CHECK_OK(lt21_page_decode(&W, &f_i64, mk_fz(&fz, L_NITEM, 1, e64, 0, 1, true, 64, 3, 3), 3, &b, &pg, &err), err);
		if (pg)
		{
			CHECK_EQ_INT(i64_at(pg->values, 2), -7);
			CHECK(!pg->values->validity[1]);
			CHECK_EQ_INT(i64_at(pg->values, 1), 0);
		}
		lt21_page_free(pg);
		pg = NULL;
		bl[0] = sizeof(buf) - 1;
		CHECK_CODE(lt21_page_decode(&W, &f_i64, mk_fz(&fz, L_NITEM, 1, e64, 0, 1, true, 64, 3, 3), 3, &b, &pg, &err),
				   LT_ECORRUPT);
		free_enc(e64);
	}
}

/* list<utf8> in full-zip: rows ["ab", null], null, [] with per-value zstd. */
TEST(fullzip_variable)
{
	static lt_field fi = {.id = 2, .name = "item", .type = LT_TYPE_UTF8, .nullable = true};
	static lt_field *lc[] = {&fi};
	static lt_field fl = {.id = 1, .name = "l", .type = LT_TYPE_LIST, .n_children = 1, .children = lc, .nullable = true};
	const int	LL[] = {LT21_NULLABLE_ITEM, LT21_NULL_AND_EMPTY_LIST};
	Lt__Enc21__FullZipLayout fz;
	uint8_t		buf[128];
	size_t		n = 0;
	lt_error	err;

	for (int mode = 0; mode < 2; mode++)
	{
		Lt__Enc21__CompressiveEncoding *e = mode ? mk_general(2, mk_variable(32)) : mk_variable(32);
		const uint8_t *bp[1] = {buf};
		uint64_t	bl[1];
		lt21_bufs	b = {1, bp, bl};
		lt21_page  *pg = NULL;
		lt_array   *a;
		uint8_t		z[64];
		size_t		zn;

		/* control word: rep (1 bit) << 2 | def (2 bits) */
		n = 0;
		buf[n++] = (1 << 2) | 0;
		if (mode)
		{
			lt_put64(z, 2);
			zn = 8 + ZSTD_compress(z + 8, sizeof(z) - 8, "ab", 2, 1);
			lt_put32(buf + n, (uint32_t) zn);
			memcpy(buf + n + 4, z, zn);
			n += 4 + zn;
		}
		else
		{
			lt_put32(buf + n, 2);
			memcpy(buf + n + 4, "ab", 2);
			n += 6;
		}
		buf[n++] = (0 << 2) | 1;	/* null item: control word only */
		buf[n++] = (1 << 2) | 2;	/* null list */
		buf[n++] = (1 << 2) | 3;	/* empty list */
		bl[0] = n;
		CHECK_OK(lt21_page_decode(&W, &fi, mk_fz(&fz, LL, 2, e, 1, 2, false, 32, 4, 2), 3, &b, &pg, &err), err);
		if (pg && (a = read_rows(&fl, pg, 0, 3, &err)) != NULL)
		{
			lt_array   *c = a->children[0];

			CHECK_EQ_INT(a->offsets[1], 2);
			CHECK_EQ_INT(a->offsets[3], 2);
			CHECK(a->validity && !a->validity[1] && a->validity[2]);
			CHECK(str_is(c, 0, "ab"));
			CHECK(c->validity && !c->validity[1]);
			lt_array_free(a);
		}
		lt21_page_free(pg);
		pg = NULL;
		/* a length running past the buffer */
		buf[1] = 200;
		CHECK_CODE(lt21_page_decode(&W, &fi, mk_fz(&fz, LL, 2, e, 1, 2, false, 32, 4, 2), 3, &b, &pg, &err), LT_ECORRUPT);
		free_enc(e);
	}
}

/* ---- packed structs ---- */

/* struct<a: int32, b: int64, c: int16>, packed: rows of 14 bytes */
static lt_field f_pa = {.id = 2, .name = "a", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
static lt_field f_pb = {.id = 3, .name = "b", .type = LT_TYPE_INT64, .byte_width = 8, .nullable = true};
static lt_field f_pc = {.id = 4, .name = "c", .type = LT_TYPE_INT16, .byte_width = 2, .nullable = true};
static lt_field *packed_children[] = {&f_pa, &f_pb, &f_pc};
static lt_field f_packed = {.id = 1, .name = "p", .type = LT_TYPE_STRUCT, .n_children = 3,
	.children = packed_children, .nullable = true};

static Lt__Enc21__CompressiveEncoding *
mk_packed(const uint64_t *bits, int n, Lt__Enc21__CompressiveEncoding *values)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__PackedStruct *ps = lt_calloc(1, sizeof(*ps));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__packed_struct__init(ps);
	ps->n_bits_per_value = n;
	ps->bits_per_value = lt_calloc(n, sizeof(uint64_t));
	memcpy(ps->bits_per_value, bits, n * sizeof(uint64_t));
	ps->values = values;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_PACKED_STRUCT;
	e->packed_struct = ps;
	return e;
}

static void
packed_row(uint8_t *out, int32_t a, int64_t b, int16_t c)
{
	memcpy(out, &a, 4);
	memcpy(out + 4, &b, 8);
	memcpy(out + 12, &c, 2);
}

/* Rows [r0, r0 + n) of a page whose leaf is the packed struct itself. */
static lt_array *
read_packed(const lt_field *top, lt21_page *pg, uint64_t r0, uint64_t n, lt_error *err)
{
	lt_array   *a;
	lt_array   *nodes[2];
	int			depth = top->type == LT_TYPE_LIST ? 2 : 1;

	if (lt_array_new(top, &a, err) != LT_OK)
		return NULL;
	nodes[0] = a;
	nodes[1] = depth == 2 ? a->children[0] : NULL;
	if (lt21_page_append(&W, pg, nodes, depth, 0, r0, n, err) != LT_OK)
	{
		lt_array_free(a);
		return NULL;
	}
	return a;
}

/* Seven rows in two chunks, row 2 and 5 null: eager, lazy and partial reads agree. */
TEST(mb_packed_struct)
{
	static mbpage p;
	static uint8_t rows[7 * 14];
	static uint8_t z[8 + 256];
	uint16_t	def[7] = {0, 0, 1, 0, 0, 1, 0};
	const uint64_t bits[3] = {32, 64, 16};
	Lt__Enc21__MiniBlockLayout mb;
	lt_error	err;
	size_t		zn;

	for (int i = 0; i < 7; i++)
		packed_row(rows + i * 14, i * 10 - 3, (int64_t) i << 40, (int16_t) (-i));
	lt_put64(z, sizeof(rows));
	zn = 8 + ZSTD_compress(z + 8, sizeof(z) - 8, rows, sizeof(rows), 1);
	for (int mode = 0; mode < 2; mode++)
	{
		/* mode 1: the rows zstd-compressed in one chunk (decoded through a scratch buffer) */
		Lt__Enc21__CompressiveEncoding *e = mk_packed(bits, 3, mode ? mk_general(2, mk_flat(112)) : mk_flat(112));
		lt21_page  *pg = NULL;
		lt_array   *a;

		memset(&p, 0, sizeof(p));
		if (mode == 0)
		{
			add_chunk(&p, &(chunk) {4, NULL, def, 1, {rows}, {4 * 14}, 2}, false, true);
			add_chunk(&p, &(chunk) {3, NULL, def + 4, 1, {rows + 4 * 14}, {3 * 14}, 0}, false, true);
		}
		else
			add_chunk(&p, &(chunk) {7, NULL, def, 1, {z}, {zn}, 0}, false, true);
		CHECK_OK(decode_mb(&f_packed, mk_mb_layout(&mb, L_NITEM, 1, e, 7, false, true), &p, NULL, 0, 7, &pg, &err), err);
		if (pg && (a = read_packed(&f_packed, pg, 1, 6, &err)) != NULL)
		{
			lt_array   *ca = a->children[0],
					   *cb = a->children[1],
					   *cc = a->children[2];

			CHECK_EQ_INT(a->length, 6);
			CHECK_EQ_INT(ca->length, 6);
			CHECK_EQ_INT(cc->length, 6);
			CHECK(a->validity && a->validity[0] && !a->validity[1] && !a->validity[4] && a->validity[5]);
			CHECK_EQ_INT(a->null_count, 2);
			CHECK_EQ_INT(i32_at(ca, 0), 7);
			CHECK_EQ_INT(i64_at(cb, 2), (int64_t) 3 << 40);
			CHECK_EQ_INT(((int16_t *) cc->values)[5], -6);
			/* the fields of a null struct are null and zero */
			CHECK(ca->validity && !ca->validity[1] && !cb->validity[4] && cc->validity[5]);
			CHECK_EQ_INT(i32_at(ca, 1), 0);
			CHECK_EQ_INT(i64_at(cb, 4), 0);
			lt_array_free(a);
		}
		lt21_page_free(pg);
		pg = NULL;
		free_enc(e);
	}
}

TEST(mb_packed_struct_corrupt)
{
	static mbpage p;
	static uint8_t rows[4 * 14];
	Lt__Enc21__MiniBlockLayout mb;
	lt_error	err;
	lt21_page  *pg = NULL;
	const uint64_t good[3] = {32, 64, 16},
				wrong[3] = {32, 32, 16};
	static lt_field fbool = {.id = 5, .name = "flag", .type = LT_TYPE_BOOL, .byte_width = 1, .nullable = true};
	static lt_field *bc[] = {&f_pa, &fbool};
	static lt_field fpb = {.id = 1, .name = "pb", .type = LT_TYPE_STRUCT, .n_children = 2, .children = bc};
	Lt__Enc21__CompressiveEncoding *e;

	memset(rows, 0x11, sizeof(rows));
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {rows}, {sizeof(rows)}, 0}, false, false);
	/* a field width that disagrees with its type */
	e = mk_packed(wrong, 3, mk_flat(80));
	CHECK_CODE(decode_mb(&f_packed, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err),
			   LT_ECORRUPT);
	CHECK(strstr(err.msg, "test.lance: column 3 page 7") != NULL);
	free_enc(e);
	/* fewer fields than the schema */
	e = mk_packed(good, 2, mk_flat(96));
	CHECK_CODE(decode_mb(&f_packed, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err),
			   LT_ECORRUPT);
	free_enc(e);
	/* rows wider than the fields */
	e = mk_packed(good, 3, mk_flat(120));
	CHECK_CODE(decode_mb(&f_packed, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err),
			   LT_ECORRUPT);
	free_enc(e);
	/* more rows than the chunk holds */
	e = mk_packed(good, 3, mk_flat(112));
	CHECK_CODE(decode_mb(&f_packed, mk_mb_layout(&mb, L_ITEM, 1, e, 5, false, false), &p, NULL, 0, 5, &pg, &err),
			   LT_ECORRUPT);
	/* the same page is fine with the right count */
	CHECK_OK(decode_mb(&f_packed, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err), err);
	lt21_page_free(pg);
	pg = NULL;
	free_enc(e);
	/* a packed struct that is not PackedStruct-encoded */
	e = mk_flat(112);
	CHECK_CODE(decode_mb(&f_packed, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err),
			   LT_EUNSUPPORTED);
	free_enc(e);
	/* bools are never packed */
	e = mk_packed((const uint64_t[]) {32, 8}, 2, mk_flat(40));
	CHECK_CODE(decode_mb(&fpb, mk_mb_layout(&mb, L_ITEM, 1, e, 4, false, false), &p, NULL, 0, 4, &pg, &err),
			   LT_EUNSUPPORTED);
	free_enc(e);
}

/*
 * list<packed struct<a, b, c>>: rows [{1..}, null], null, [] -> layers
 * [NULLABLE_ITEM, NULL_AND_EMPTY_LIST]: def item=1, list null=2, empty=3.
 */
TEST(mb_list_of_packed_struct)
{
	static mbpage p;
	static lt_field *lc[] = {&f_packed};
	static lt_field fl = {.id = 9, .name = "lp", .type = LT_TYPE_LIST, .n_children = 1, .children = lc, .nullable = true};
	const int	LL[] = {LT21_NULLABLE_ITEM, LT21_NULL_AND_EMPTY_LIST};
	static uint8_t rows[2 * 14];
	uint16_t	rep[4] = {1, 0, 1, 1},
				def[4] = {0, 1, 2, 3};
	const uint64_t bits[3] = {32, 64, 16};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_packed(bits, 3, mk_flat(112));
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a;

	packed_row(rows, 1, 2, 3);
	packed_row(rows + 14, 99, 99, 99);
	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {4, rep, def, 1, {rows}, {sizeof(rows)}, 0}, true, true);
	CHECK_OK(decode_mb(&f_packed, mk_mb_layout(&mb, LL, 2, e, 2, true, true), &p, NULL, 0, 3, &pg, &err), err);
	if (pg && (a = read_packed(&fl, pg, 0, 3, &err)) != NULL)
	{
		lt_array   *st = a->children[0];

		CHECK_EQ_INT(a->length, 3);
		CHECK_EQ_INT(a->offsets[1], 2);
		CHECK_EQ_INT(a->offsets[3], 2);
		CHECK(a->validity && !a->validity[1] && a->validity[2]);
		CHECK_EQ_INT(st->length, 2);
		CHECK(st->validity && st->validity[0] && !st->validity[1]);
		CHECK_EQ_INT(i32_at(st->children[0], 0), 1);
		CHECK_EQ_INT(i32_at(st->children[0], 1), 0);
		lt_array_free(a);
	}
	lt21_page_free(pg);
	free_enc(e);
}

/* struct<a: int32, s: utf8, t: large_utf8, v: fsl<float32, 2>> as VariablePackedStruct */
static lt_field f_vs = {.id = 3, .name = "s", .type = LT_TYPE_UTF8, .nullable = true};
static lt_field f_vt = {.id = 4, .name = "t", .type = LT_TYPE_LARGE_UTF8, .nullable = true};
static lt_field f_vv_item = {.id = -1, .name = "item", .type = LT_TYPE_FLOAT32, .byte_width = 4, .nullable = true};
static lt_field *vv_children[] = {&f_vv_item};
static lt_field f_vv = {.id = 5, .name = "v", .type = LT_TYPE_FIXED_LIST, .fixed_size = 2,
	.n_children = 1, .children = vv_children, .nullable = true};
static lt_field *vpacked_children[] = {&f_pa, &f_vs, &f_vt, &f_vv};
static lt_field f_vpacked = {.id = 1, .name = "vp", .type = LT_TYPE_STRUCT, .n_children = 4,
	.children = vpacked_children, .nullable = true};

static Lt__Enc21__VariablePackedStruct__FieldEncoding *
mk_vp_field(Lt__Enc21__CompressiveEncoding *value, bool fixed, uint64_t bits)
{
	Lt__Enc21__VariablePackedStruct__FieldEncoding *f = lt_calloc(1, sizeof(*f));

	lt__enc21__variable_packed_struct__field_encoding__init(f);
	f->value = value;
	f->layout_case = fixed ? LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE
		: LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH;
	if (fixed)
		f->bits_per_value = bits;
	else
		f->bits_per_length = bits;
	return f;
}

static Lt__Enc21__CompressiveEncoding *
mk_varpacked(int n, Lt__Enc21__VariablePackedStruct__FieldEncoding **fields)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__VariablePackedStruct *vp = lt_calloc(1, sizeof(*vp));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__variable_packed_struct__init(vp);
	vp->n_fields = n;
	vp->fields = lt_calloc(n, sizeof(*vp->fields));
	memcpy(vp->fields, fields, n * sizeof(*fields));
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT;
	e->variable_packed_struct = vp;
	return e;
}

static Lt__Enc21__CompressiveEncoding *
mk_fsl2(void)
{
	Lt__Enc21__CompressiveEncoding *e = lt_calloc(1, sizeof(*e));
	Lt__Enc21__FixedSizeList *f = lt_calloc(1, sizeof(*f));

	lt__enc21__compressive_encoding__init(e);
	lt__enc21__fixed_size_list__init(f);
	f->has_items_per_value = 1;
	f->items_per_value = 2;
	f->values = mk_flat(32);
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST;
	e->fixed_size_list = f;
	return e;
}

/* One row: a, s (u32 length), t (u64 length, zstd per value), v. */
static size_t
vp_row(uint8_t *out, int32_t a, const char *s, const char *t, float v0, float v1)
{
	size_t		n = 4;					/* the row's u32 length */
	uint8_t		z[128];
	size_t		zn;

	memcpy(out + n, &a, 4);
	n += 4;
	lt_put32(out + n, (uint32_t) strlen(s));
	memcpy(out + n + 4, s, strlen(s));
	n += 4 + strlen(s);
	lt_put64(z, strlen(t));
	zn = 8 + ZSTD_compress(z + 8, sizeof(z) - 8, t, strlen(t), 1);
	lt_put64(out + n, zn);
	memcpy(out + n + 8, z, zn);
	n += 8 + zn;
	memcpy(out + n, &v0, 4);
	memcpy(out + n + 4, &v1, 4);
	n += 8;
	lt_put32(out, (uint32_t) (n - 4));
	return n;
}

/* Rows {7, "ab", "", [1, 2]}, null, {-1, "", "xyz", [3, 4]} with 1-byte control words. */
TEST(fullzip_variable_packed_struct)
{
	Lt__Enc21__FullZipLayout fz;
	static uint8_t buf[512];
	size_t		n = 0,
				r2;
	lt_error	err;
	lt21_page  *pg = NULL;
	lt_array   *a;
	const uint8_t *bp[1] = {buf};
	uint64_t	bl[1];
	lt21_bufs	b = {1, bp, bl};
	Lt__Enc21__VariablePackedStruct__FieldEncoding *fe[4] = {
		mk_vp_field(mk_flat(32), true, 32), mk_vp_field(mk_variable(32), false, 32),
		mk_vp_field(mk_general(2, mk_variable(64)), false, 64), mk_vp_field(mk_fsl2(), true, 64)};
	Lt__Enc21__CompressiveEncoding *e = mk_varpacked(4, fe);

	buf[n++] = 0;
	n += vp_row(buf + n, 7, "ab", "", 1, 2);
	buf[n++] = 1;				/* null: control word only */
	buf[n++] = 0;
	r2 = n;
	n += vp_row(buf + n, -1, "", "xyz", 3, 4);
	bl[0] = n;
	CHECK_OK(lt21_page_decode(&W, &f_vpacked, mk_fz(&fz, L_NITEM, 1, e, 0, 1, false, 32, 3, 3), 3, &b, &pg, &err), err);
	if (pg && (a = read_packed(&f_vpacked, pg, 0, 3, &err)) != NULL)
	{
		lt_array   *v = a->children[3];

		CHECK_EQ_INT(a->length, 3);
		CHECK(a->validity && a->validity[0] && !a->validity[1] && a->validity[2]);
		CHECK_EQ_INT(i32_at(a->children[0], 0), 7);
		CHECK_EQ_INT(i32_at(a->children[0], 2), -1);
		CHECK(str_is(a->children[1], 0, "ab") && str_is(a->children[1], 2, ""));
		CHECK(str_is(a->children[2], 0, "") && str_is(a->children[2], 2, "xyz"));
		CHECK(a->children[1]->validity && !a->children[1]->validity[1] && !a->children[2]->validity[1]);
		CHECK_EQ_INT(v->length, 3);
		CHECK_EQ_INT(v->children[0]->length, 6);
		CHECK(((float *) v->children[0]->values)[5] == 4.0f);
		CHECK(((float *) v->children[0]->values)[1] == 2.0f);
		lt_array_free(a);
	}
	lt21_page_free(pg);
	pg = NULL;

	/* a row length one byte longer than its fields */
	lt_put32(buf + r2, lt_le32(buf + r2) + 1);
	buf[n] = 0;
	bl[0] = n + 1;
	CHECK_CODE(lt21_page_decode(&W, &f_vpacked, mk_fz(&fz, L_NITEM, 1, e, 0, 1, false, 32, 3, 3), 3, &b, &pg, &err),
			   LT_ECORRUPT);
	lt_put32(buf + r2, lt_le32(buf + r2) - 1);
	bl[0] = n;
	/* a string length running past its row */
	lt_put32(buf + r2 + 8, 1000);
	CHECK_CODE(lt21_page_decode(&W, &f_vpacked, mk_fz(&fz, L_NITEM, 1, e, 0, 1, false, 32, 3, 3), 3, &b, &pg, &err),
			   LT_ECORRUPT);
	CHECK(strstr(err.msg, "packed struct row") != NULL);
	lt_put32(buf + r2 + 8, 0);
	CHECK_OK(lt21_page_decode(&W, &f_vpacked, mk_fz(&fz, L_NITEM, 1, e, 0, 1, false, 32, 3, 3), 3, &b, &pg, &err), err);
	lt21_page_free(pg);
	pg = NULL;
	/* a field stored with the wrong layout, and a field missing */
	fe[1]->layout_case = LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE;
	CHECK_CODE(lt21_page_decode(&W, &f_vpacked, mk_fz(&fz, L_NITEM, 1, e, 0, 1, false, 32, 3, 3), 3, &b, &pg, &err),
			   LT_ECORRUPT);
	fe[1]->layout_case = LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT__NOT_SET;
	CHECK_CODE(lt21_page_decode(&W, &f_vpacked, mk_fz(&fz, L_NITEM, 1, e, 0, 1, false, 32, 3, 3), 3, &b, &pg, &err),
			   LT_ECORRUPT);
	fe[1]->layout_case = LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH;
	e->variable_packed_struct->n_fields = 3;
	CHECK_CODE(lt21_page_decode(&W, &f_vpacked, mk_fz(&fz, L_NITEM, 1, e, 0, 1, false, 32, 3, 3), 3, &b, &pg, &err),
			   LT_ECORRUPT);
	e->variable_packed_struct->n_fields = 4;
	free_enc(e);
}

/*
 * fixed_size_list<struct<x: int32>, 2> (2.2+): layers [x, struct, fsl], each
 * list row repeated for both items.  Rows [{1}, null], null -> def levels
 * 0, 2, 3, 3 (x null = 1, struct null = 2, list null = 3).
 */
TEST(repdef_fsl_of_struct)
{
	static mbpage p;
	static lt_field fx = {.id = 3, .name = "x", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
	static lt_field *sc[] = {&fx};
	static lt_field fs = {.id = 2, .name = "item", .type = LT_TYPE_STRUCT, .n_children = 1, .children = sc, .nullable = true};
	static lt_field *lc[] = {&fs};
	static lt_field ff = {.id = 1, .name = "fs", .type = LT_TYPE_FIXED_LIST, .fixed_size = 2, .n_children = 1,
		.children = lc, .nullable = true};
	const int	L3[] = {LT21_NULLABLE_ITEM, LT21_NULLABLE_ITEM, LT21_NULLABLE_ITEM};
	int32_t		xv[4] = {1, 0, 0, 0};
	uint16_t	def[4] = {0, 2, 3, 3};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a = NULL;

	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {4, NULL, def, 1, {(uint8_t *) xv}, {16}, 0}, false, true);
	/* the page counts list items: 4 column rows for 2 table rows */
	CHECK_OK(decode_mb(&fx, mk_mb_layout(&mb, L3, 3, e, 4, false, true), &p, NULL, 0, 4, &pg, &err), err);
	CHECK_OK(lt_array_new(&ff, &a, &err), err);
	if (pg && a)
	{
		lt_array   *st = a->children[0];
		lt_array   *nodes[3] = {a, st, st->children[0]};

		CHECK_OK(lt21_page_append(&W, pg, nodes, 3, 0, 0, 4, &err), err);
		CHECK_EQ_INT(a->length, 2);
		CHECK(a->validity && a->validity[0] && !a->validity[1]);
		CHECK_EQ_INT(st->length, 4);
		CHECK(st->validity && st->validity[0] && !st->validity[1] && !st->validity[2]);
		CHECK_EQ_INT(st->children[0]->length, 4);
		CHECK_EQ_INT(i32_at(st->children[0], 0), 1);
		CHECK(!st->children[0]->validity[1]);
		/* half a list is refused */
		CHECK_CODE(lt21_page_append(&W, pg, nodes, 3, 0, 1, 2, &err), LT_ECORRUPT);
	}
	lt_array_free(a);
	lt21_page_free(pg);
	free_enc(e);
}

/*
 * map<utf8, int32> (2.2+) is a list of its entries struct: the key column
 * has layers [key, entries, map].  Rows [{"a"}, {"b"}], null, {}.
 */
TEST(repdef_map)
{
	static mbpage p;
	static lt_field fk = {.id = 3, .name = "key", .type = LT_TYPE_UTF8};
	static lt_field fv = {.id = 4, .name = "value", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
	static lt_field *ec[] = {&fk, &fv};
	static lt_field fe = {.id = 2, .name = "entries", .type = LT_TYPE_STRUCT, .n_children = 2, .children = ec};
	static lt_field *mc[] = {&fe};
	static lt_field fm = {.id = 1, .name = "m", .type = LT_TYPE_MAP, .n_children = 1, .children = mc, .nullable = true};
	const int	LM[] = {LT21_ALL_VALID_ITEM, LT21_ALL_VALID_ITEM, LT21_NULL_AND_EMPTY_LIST};
	static uint8_t kc[64];
	const char *ks[] = {"a", "b"};
	size_t		kn = var_chunk(kc, ks, 2, 4);
	uint16_t	rep[4] = {1, 0, 1, 1},
				def[4] = {0, 0, 1, 2};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_variable(32);
	lt21_page  *pg = NULL;
	lt_error	err;
	lt_array   *a = NULL;

	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {4, rep, def, 1, {kc}, {kn}, 0}, true, true);
	CHECK_OK(decode_mb(&fk, mk_mb_layout(&mb, LM, 3, e, 2, true, true), &p, NULL, 0, 3, &pg, &err), err);
	CHECK_OK(lt_array_new(&fm, &a, &err), err);
	if (pg && a)
	{
		lt_array   *en = a->children[0];
		lt_array   *nodes[3] = {a, en, en->children[0]};

		CHECK_OK(lt21_page_append(&W, pg, nodes, 3, 0, 0, 3, &err), err);
		CHECK_EQ_INT(a->length, 3);
		CHECK_EQ_INT(a->offsets[1], 2);
		CHECK_EQ_INT(a->offsets[3], 2);
		CHECK(a->validity && !a->validity[1] && a->validity[2]);
		CHECK_EQ_INT(en->length, 2);
		CHECK(str_is(en->children[0], 1, "b"));
	}
	lt_array_free(a);
	lt21_page_free(pg);
	free_enc(e);
}


/* ---- random access: windows ---- */

/* nullable int32 in chunks of 8, 8, 8, 8 and a last partial one of 5; a dictionary page in chunks */
TEST(window_mb_chunks)
{
	static mbpage p;
	int32_t		v[37];
	uint16_t	def[37];
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_page  *pg = NULL;
	lt21_chunks ck = {0};
	lt21_window win;
	lt_error	err;
	bool		usable = false;
	int			before = windows_checked;

	memset(&p, 0, sizeof(p));
	for (int i = 0; i < 37; i++)
	{
		v[i] = i * 7 - 3;
		def[i] = i % 5 == 2;
	}
	for (int c = 0; c < 5; c++)
		add_chunk(&p, &(chunk) {c < 4 ? 8 : 5, NULL, def + c * 8, 1, {(uint8_t *) (v + c * 8)}, {(c < 4 ? 8 : 5) * 4},
				  c < 4 ? 3 : 0}, false, true);
	mk_mb_layout(&mb, L_NITEM, 1, e, 37, false, true);
	{
		Lt__Enc21__PageLayout pl = LT__ENC21__PAGE_LAYOUT__INIT;
		uint64_t	bl[2] = {p.meta_len, p.data_len};

		pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
		pl.mini_block_layout = &mb;
		CHECK_OK(decode_mb(&f_i32, &pl, &p, NULL, 0, 37, &pg, &err), err);	/* checks every window */
		CHECK_EQ_INT(windows_checked - before, 37 * 38 / 2);
		CHECK_OK(lt21_mb_chunks(&W, &mb, 37, 2, bl, p.meta, NULL, &ck, &usable, &err), err);
		CHECK(usable && ck.n == 5 && ck.row[4] == 32 && ck.row[5] == 37);
		/* one row: one chunk */
		lt21_mb_window(&ck, 20, 21, &win);
		CHECK(win.c0 == 2 && win.c1 == 3 && win.row0 == 16 && win.row1 == 24 && win.items == 8);
		CHECK(win.len == ck.off[3] - ck.off[2] && win.len < p.data_len / 4);
		/* the last, partial chunk */
		lt21_mb_window(&ck, 36, 37, &win);
		CHECK(win.c0 == 4 && win.c1 == 5 && win.row0 == 32 && win.row1 == 37 && win.items == 5);
		lt21_mb_window(&ck, 7, 9, &win);
		CHECK(win.c0 == 0 && win.c1 == 2);
		lt21_chunks_free(&ck);
	}
	lt21_page_free(pg);
	pg = NULL;
	free_enc(e);

	/* dictionary indices in chunks of 8, 8 and 4: the dictionary is read whole by every window */
	{
		static uint8_t dict[64];
		uint32_t	idx[20];
		Lt__Enc21__CompressiveEncoding *ie = mk_flat(32);
		Lt__Enc21__CompressiveEncoding *de = mk_variable(32);
		Lt__Enc21__PageLayout pl = LT__ENC21__PAGE_LAYOUT__INIT;

		lt_put32(dict, 32);
		lt_put32(dict + 4, 8 + 16);
		lt_put32(dict + 8, 0);
		lt_put32(dict + 12, 3);
		lt_put32(dict + 16, 8);
		lt_put32(dict + 20, 12);
		memcpy(dict + 24, "redgreenblue", 12);
		for (int i = 0; i < 20; i++)
			idx[i] = (uint32_t) (i * 5 % 3);
		memset(&p, 0, sizeof(p));
		for (int c = 0; c < 3; c++)
			add_chunk(&p, &(chunk) {c < 2 ? 8 : 4, NULL, def + c * 8, 1, {(uint8_t *) (idx + c * 8)},
					  {(c < 2 ? 8 : 4) * 4}, c < 2 ? 3 : 0}, false, true);
		mk_mb_layout(&mb, L_NITEM, 1, ie, 20, false, true);
		mb.dictionary = de;
		mb.has_num_dictionary_items = 1;
		mb.num_dictionary_items = 3;
		pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
		pl.mini_block_layout = &mb;
		before = windows_checked;
		CHECK_OK(decode_mb(&f_str, &pl, &p, dict, 36, 20, &pg, &err), err);
		CHECK_EQ_INT(windows_checked - before, 20 * 21 / 2);
		lt21_page_free(pg);
		pg = NULL;
		free_enc(ie);
		free_enc(de);
	}
}

/* Corrupt chunk metadata is refused before any chunk is read. */
TEST(window_mb_corrupt)
{
	static mbpage p;
	int32_t		v[16] = {0};
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(32);
	lt21_chunks ck = {0};
	lt_error	err;
	bool		usable;
	uint64_t	bl[2];

	memset(&p, 0, sizeof(p));
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) v}, {32}, 3}, false, false);
	add_chunk(&p, &(chunk) {0, NULL, NULL, 1, {(uint8_t *) (v + 8)}, {32}, 0}, false, false);
	mk_mb_layout(&mb, L_ITEM, 1, e, 16, false, false);
	bl[0] = p.meta_len;
	bl[1] = p.data_len;
	CHECK_OK(lt21_mb_chunks(&W, &mb, 16, 2, bl, p.meta, NULL, &ck, &usable, &err), err);
	CHECK(usable);
	/* metadata that is not whole words */
	bl[0] = 3;
	CHECK_CODE(lt21_mb_chunks(&W, &mb, 16, 2, bl, p.meta, NULL, &ck, &usable, &err), LT_ECORRUPT);
	CHECK(!usable && strstr(err.msg, "test.lance: column 3 page 7") != NULL);
	bl[0] = p.meta_len;
	/* chunks running past the data buffer */
	bl[1] = p.data_len - 8;
	CHECK_CODE(lt21_mb_chunks(&W, &mb, 16, 2, bl, p.meta, NULL, &ck, &usable, &err), LT_ECORRUPT);
	bl[1] = p.data_len;
	/* a first chunk of 8 values in a page of 5 items */
	mb.num_items = 5;
	CHECK_CODE(lt21_mb_chunks(&W, &mb, 5, 2, bl, p.meta, NULL, &ck, &usable, &err), LT_ECORRUPT);
	/* a last chunk of more values than a chunk holds */
	mb.num_items = 8 + 70000;
	CHECK_CODE(lt21_mb_chunks(&W, &mb, 8 + 70000, 2, bl, p.meta, NULL, &ck, &usable, &err), LT_ECORRUPT);
	/* items and rows disagree without lists */
	mb.num_items = 16;
	CHECK_CODE(lt21_mb_chunks(&W, &mb, 15, 2, bl, p.meta, NULL, &ck, &usable, &err), LT_ECORRUPT);
	/* a chunk word of huge size */
	lt_put16(p.meta, 0xfff3);
	CHECK_CODE(lt21_mb_chunks(&W, &mb, 16, 2, bl, p.meta, NULL, &ck, &usable, &err), LT_ECORRUPT);
	lt21_chunks_free(&ck);
	free_enc(e);
}

/*
 * list<int64> in chunks of 4 items, rows split across chunks (one spans
 * three): windows located through the repetition index.
 */
TEST(window_mb_list)
{
	static mbpage p;
	/* row lengths; -1 null, -2 empty */
	const int	len[] = {3, -1, 2, 5, 1, -2, 9, 2, 1, 3, -1, 6, -2, 1};
	const int	nrows = (int) (sizeof(len) / sizeof(len[0]));
	uint16_t	rep[64],
				def[64];
	int64_t		v[64];
	int			nl = 0,
				ni = 0;
	Lt__Enc21__MiniBlockLayout mb;
	Lt__Enc21__CompressiveEncoding *e = mk_flat(64);
	Lt__Enc21__PageLayout pl = LT__ENC21__PAGE_LAYOUT__INIT;
	lt21_page  *pg = NULL;
	lt_error	err;
	uint8_t		index[16 * 16];
	int			before = windows_checked;

	for (int r = 0; r < nrows; r++)
	{
		if (len[r] < 0)
		{
			rep[nl] = 1;
			def[nl++] = len[r] == -1 ? 1 : 2;
			continue;
		}
		for (int k = 0; k < len[r]; k++)
		{
			rep[nl] = k == 0;
			def[nl++] = 0;
			v[ni] = ni * 10 + 1;
			ni++;
		}
	}
	memset(&p, 0, sizeof(p));
	{
		int			l = 0,
					item = 0;

		while (l < nl)
		{
			int			l0 = l,
						i0 = item;
			bool		last;

			/* a chunk ends right after its 4th item */
			while (l < nl && item - i0 < 4)
			{
				item += def[l] == 0;
				l++;
			}
			last = l >= nl || ni - item == 0;
			if (last)
			{
				l = nl;
				item = ni;
			}
			add_chunk(&p, &(chunk) {l - l0, rep + l0, def + l0, 1, {(uint8_t *) (v + i0)}, {(size_t) (item - i0) * 8},
					  last ? 0 : 2}, true, true);
		}
	}
	mk_mb_layout(&mb, L_LIST, 2, e, (uint64_t) ni, true, true);
	pl.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
	pl.mini_block_layout = &mb;
	CHECK_OK(decode_mb(&f_i64, &pl, &p, NULL, 0, (uint64_t) nrows, &pg, &err), err);
	if (pg)
	{
		const uint8_t *bp[3] = {p.meta, p.data, index};
		uint64_t	bl[3] = {p.meta_len, p.data_len, p.meta_len / 2 * 16};
		lt21_chunks ck = {0};
		lt21_window win;
		bool		usable = false;

		mb_rep_index(&p, pg, index);
		mb.has_repetition_index_depth = 1;
		mb.repetition_index_depth = 1;
		check_windows(&f_list, &f_i64, &pl, 3, bp, bl, (uint64_t) nrows, pg);
		CHECK_EQ_INT(windows_checked - before, nrows * (nrows + 1) / 2);
		/* the row of 9 items starts in one chunk, fills the next and ends a third; row 3 goes on past its first */
		CHECK_OK(lt21_mb_chunks(&W, &mb, (uint64_t) nrows, 3, bl, p.meta, index, &ck, &usable, &err), err);
		lt21_mb_window(&ck, 6, 7, &win);
		CHECK(usable && win.c1 - win.c0 == 3 && win.head && !win.tail);
		lt21_mb_window(&ck, 3, 4, &win);
		CHECK(win.head && win.tail);
		/* an index that disagrees with the page: one row too many, or the wrong size */
		lt_put64(index, lt_le64(index) + 1);
		CHECK_CODE(lt21_mb_chunks(&W, &mb, (uint64_t) nrows, 3, bl, p.meta, index, &ck, &usable, &err), LT_ECORRUPT);
		lt_put64(index, lt_le64(index) - 1);
		bl[2] -= 8;
		CHECK_CODE(lt21_mb_chunks(&W, &mb, (uint64_t) nrows, 3, bl, p.meta, index, &ck, &usable, &err), LT_ECORRUPT);
		/* an index whose rows do not match the levels: the window decode refuses it */
		bl[2] += 8;
		lt_put64(index + 8, 0);	/* chunk 0 "ends" its last row, chunk 1 still starts inside it */
		lt_put64(index, lt_le64(index) + 1);
		if (lt21_mb_chunks(&W, &mb, (uint64_t) nrows, 3, bl, p.meta, index, &ck, &usable, &err) == LT_OK)
		{
			lt21_page  *wp = NULL;
			uint8_t    *keep;

			CHECK(decode_window(&f_i64, &pl, 3, bp, bl, (uint64_t) nrows, 0, 1, false, &win, &keep, &err) == NULL);
			CHECK(err.code == LT_ECORRUPT);
			lt_free(keep);
			lt21_page_free(wp);
		}
		lt21_chunks_free(&ck);
		mb.has_repetition_index_depth = 0;
		mb.repetition_index_depth = 0;
	}
	lt21_page_free(pg);
	free_enc(e);
}

/* Full-zip windows: fixed strides, vectors without levels, and lists through the repetition index. */
TEST(window_fz)
{
	Lt__Enc21__FullZipLayout fz;
	lt21_page  *pg = NULL;
	lt_error	err;
	int			before = windows_checked;

	/* nullable int64, 1-byte control words: 10 rows of 9 bytes */
	{
		uint8_t		buf[10 * 9];
		const uint8_t *bp[1] = {buf};
		uint64_t	bl[1] = {sizeof(buf)};
		lt21_bufs	b = {1, bp, bl};
		Lt__Enc21__CompressiveEncoding *e64 = mk_flat(64);
		Lt__Enc21__PageLayout *pl;

		for (int i = 0; i < 10; i++)
		{
			int64_t		x = i * 1000 - 3;

			buf[i * 9] = i % 4 == 1;
			memcpy(buf + i * 9 + 1, &x, 8);
		}
		pl = mk_fz(&fz, L_NITEM, 1, e64, 0, 1, true, 64, 10, 10);
		CHECK_OK(lt21_page_decode(&W, &f_i64, pl, 10, &b, &pg, &err), err);
		if (pg)
			check_windows(&f_i64, &f_i64, pl, 1, bp, bl, 10, pg);
		lt21_page_free(pg);
		pg = NULL;
		/* a buffer that is not whole rows */
		bl[0] -= 1;
		{
			lt21_window win;

			CHECK_CODE(lt21_fz_window(&W, &fz, 10, 1, bl, NULL, 2, 3, &win, &err), LT_ECORRUPT);
		}
		free_enc(e64);
	}
	/* lists of strings with a u16 repetition index: ["ab", null], null, [], ["x", "yz", "w"], ["q"] */
	{
		static lt_field fi = {.id = 2, .name = "item", .type = LT_TYPE_UTF8, .nullable = true};
		static lt_field *lc[] = {&fi};
		static lt_field fl = {.id = 1, .name = "l", .type = LT_TYPE_LIST, .n_children = 1, .children = lc,
		.nullable = true};
		const int	LL[] = {LT21_NULLABLE_ITEM, LT21_NULL_AND_EMPTY_LIST};
		const char *items[] = {"ab", NULL, "x", "yz", "w", "q"};
		const int	row_of[] = {0, 0, 3, 3, 3, 4};
		uint8_t		buf[128],
					ix[12];
		const uint8_t *bp[2] = {buf, ix};
		uint64_t	bl[2];
		lt21_bufs	b = {2, bp, bl};
		size_t		n = 0;
		int			it = 0;
		Lt__Enc21__CompressiveEncoding *e = mk_variable(32);
		Lt__Enc21__PageLayout *pl;
		lt21_window win;

		for (int r = 0; r < 5; r++)
		{
			lt_put16(ix + r * 2, (uint16_t) n);
			if (r == 1 || r == 2)
			{
				buf[n++] = (uint8_t) ((1 << 2) | (r == 1 ? 2 : 3));	/* null list, empty list */
				continue;
			}
			for (bool first = true; it < 6 && row_of[it] == r; it++, first = false)
			{
				buf[n++] = (uint8_t) ((first << 2) | (items[it] ? 0 : 1));
				if (items[it])
				{
					lt_put32(buf + n, (uint32_t) strlen(items[it]));
					memcpy(buf + n + 4, items[it], strlen(items[it]));
					n += 4 + strlen(items[it]);
				}
			}
		}
		lt_put16(ix + 10, (uint16_t) n);
		bl[0] = n;
		bl[1] = 12;
		pl = mk_fz(&fz, LL, 2, e, 1, 2, false, 32, 8, 6);
		CHECK_OK(lt21_page_decode(&W, &fi, pl, 5, &b, &pg, &err), err);
		if (pg)
			check_windows(&fl, &fi, pl, 2, bp, bl, 5, pg);
		lt21_page_free(pg);
		pg = NULL;
		/* the index asks for its entries of the rows, then for the rows' bytes */
		CHECK_OK(lt21_fz_window(&W, &fz, 5, 2, bl, NULL, 3, 4, &win, &err), err);
		CHECK(win.need_index && win.buf == 1 && win.off == 6 && win.len == 4);
		CHECK_OK(lt21_fz_window(&W, &fz, 5, 2, bl, ix + 6, 3, 4, &win, &err), err);
		CHECK(win.buf == 0 && win.off == lt_le16(ix + 6) && win.len == (uint64_t) (lt_le16(ix + 8) - lt_le16(ix + 6)));
		/* entries past the buffer, and an index of the wrong size */
		{
			uint8_t		bad[4];

			lt_put16(bad, 2);
			lt_put16(bad + 2, 500);
			CHECK_CODE(lt21_fz_window(&W, &fz, 5, 2, bl, bad, 3, 4, &win, &err), LT_ECORRUPT);
			lt_put16(bad, 9);
			lt_put16(bad + 2, 2);
			CHECK_CODE(lt21_fz_window(&W, &fz, 5, 2, bl, bad, 3, 4, &win, &err), LT_ECORRUPT);
		}
		bl[1] = 11;
		CHECK_CODE(lt21_fz_window(&W, &fz, 5, 2, bl, NULL, 3, 4, &win, &err), LT_ECORRUPT);
		free_enc(e);
	}
	CHECK(windows_checked - before == 10 * 11 / 2 + 5 * 6 / 2);
}

int
main(void)
{
	lt__enc21__compressive_encoding__init(&enc_flat16);
	enc_flat16.compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT;
	enc_flat16.flat = &flat16;
	RUN(fastlanes_roundtrip);
	RUN(fastlanes_one_value);
	RUN(fastlanes_layout);
	RUN(fsst);
	RUN(fsst_full_table);
	RUN(fsst_decode_paths);
	RUN(fsst_encoder);
	RUN(mb_flat_partial_last_chunk);
	RUN(mb_nullable_def_levels);
	RUN(mb_inline_bitpacking);
	RUN(mb_variable_strings);
	RUN(mb_fsst);
	RUN(mb_rle);
	RUN(mb_span_values);
	RUN(mb_dictionary);
	RUN(mb_fsl_with_validity);
	RUN(mb_general_zstd_lz4);
	RUN(mb_byte_stream_split_and_bool);
	RUN(mb_zero_rows_and_bad_chunks);
	RUN(mb_large_chunk_and_reuse);
	RUN(repdef_list_example);
	RUN(repdef_corrupt_levels);
	RUN(repdef_struct_two_leaves);
	RUN(repdef_list_of_struct);
	RUN(constant_pages);
	RUN(fullzip_fixed);
	RUN(fullzip_variable);
	RUN(mb_packed_struct);
	RUN(mb_packed_struct_corrupt);
	RUN(mb_list_of_packed_struct);
	RUN(fullzip_variable_packed_struct);
	RUN(repdef_fsl_of_struct);
	RUN(repdef_map);
	RUN(window_mb_chunks);
	RUN(window_mb_corrupt);
	RUN(window_mb_list);
	RUN(window_fz);
	CHECK(lazy_checked >= 10);
	CHECK(windows_checked >= 1000);
	return unit_report("enc21");
}
