/*
 * lt_writer21.c — pages of Lance 2.1 / 2.2 data files.
 *
 * A top-level field becomes one column per leaf (primitive, string,
 * fixed-size list of primitives).  For each leaf, rows are shredded into
 * repetition / definition levels (one per level, layers innermost first, as
 * lt_repdef.c reads them) and the visible items, then one page is encoded,
 * choosing as Lance 8 does (rust/lance-encoding, primitive.rs):
 *   no visible item, or every item null   ConstantLayout (levels raw)
 *   strings with few distinct values      MiniBlock over dictionary indices
 *   values narrower than 256 bytes        MiniBlock
 *   wider values                          FullZip
 * Mini-block values: RLE or FastLanes bit-packing for 8..64-bit values when
 * they are smaller than the raw bytes (compression.rs), Flat otherwise;
 * Variable (offsets + bytes) for strings; FixedSizeList for vectors.  Levels
 * are bit-packed per chunk (inline up to 1024 levels, out-of-line above).
 *
 * Size (1.8k lines): one concern, a 2.1+ page from a leaf's rows; its steps
 * (shredding, the layout choice, mini-block and full-zip encoding) all work on
 * the one leaf state, and the value encoders they call live in encoding/.
 */
#include "file/lt_writer_int.h"

#include <lz4.h>
#include <zstd.h>
#include <stdlib.h>

#include "encoding/lt_enc21.h"
#include "proto/lt_enc21.pb-c.h"
#include "encoding/lt_fastlanes.h"
#include "encoding/lt_fsst.h"

#define MAX_DEPTH 32
#define NARROW_BYTES 256			/* MINIBLOCK_MAX_BYTE_LENGTH_PER_VALUE */
#define FIXED_CHUNK_BYTES 8186		/* MAX_MINIBLOCK_BYTES = 8 KiB - 6 */
#define MAX_CHUNK_VALUES 4096
#define VAR_CHUNK_AIM 4096			/* AIM_MINICHUNK_SIZE */
#define RLE_CHUNK_VALUES 2048
#define CHUNK_LIMIT_2_1 (32 * 1024)
#define MB_ALIGN 8
#define MB_FILL 0xFE
#define VAR_PAD 0x48
#define DICT_MIN_VALUES 100
#define DICT_MAX_CARD 100000
#define PAGE_URL "/lance.encodings21.PageLayout"

typedef Lt__Enc21__CompressiveEncoding enc_t;

static enc_t *
enc_new(lt_arena *a)
{
	enc_t	   *e = lt_arena_alloc(a, sizeof(enc_t));

	if (e)
		lt__enc21__compressive_encoding__init(e);
	return e;
}

static enc_t *
enc_flat(lt_arena *a, uint64_t bits)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__Flat *f = lt_arena_alloc(a, sizeof(*f));

	if (!e || !f)
		return NULL;
	lt__enc21__flat__init(f);
	f->has_bits_per_value = true;
	f->bits_per_value = bits;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT;
	e->flat = f;
	return e;
}

static enc_t *
enc_variable(lt_arena *a, uint64_t offset_bits)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__Variable *v = lt_arena_alloc(a, sizeof(*v));
	enc_t	   *off = enc_flat(a, offset_bits);

	if (!e || !v || !off)
		return NULL;
	lt__enc21__variable__init(v);
	v->offsets = off;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE;
	e->variable = v;
	return e;
}

static enc_t *
enc_inline_bp(lt_arena *a, uint64_t bits)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__InlineBitpacking *b = lt_arena_alloc(a, sizeof(*b));

	if (!e || !b)
		return NULL;
	lt__enc21__inline_bitpacking__init(b);
	b->has_uncompressed_bits_per_value = true;
	b->uncompressed_bits_per_value = bits;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_INLINE_BITPACKING;
	e->inline_bitpacking = b;
	return e;
}

static enc_t *
enc_ool_bp(lt_arena *a, uint64_t bits, uint64_t width)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__OutOfLineBitpacking *b = lt_arena_alloc(a, sizeof(*b));
	enc_t	   *v = enc_flat(a, width);

	if (!e || !b || !v)
		return NULL;
	lt__enc21__out_of_line_bitpacking__init(b);
	b->has_uncompressed_bits_per_value = true;
	b->uncompressed_bits_per_value = bits;
	b->values = v;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_OUT_OF_LINE_BITPACKING;
	e->out_of_line_bitpacking = b;
	return e;
}

static enc_t *
enc_rle(lt_arena *a, uint64_t bits)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__Rle *r = lt_arena_alloc(a, sizeof(*r));
	enc_t	   *v = enc_flat(a, bits);
	enc_t	   *l = enc_flat(a, 8);

	if (!e || !r || !v || !l)
		return NULL;
	lt__enc21__rle__init(r);
	r->values = v;
	r->run_lengths = l;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_RLE;
	e->rle = r;
	return e;
}

static enc_t *
enc_fsl(lt_arena *a, uint64_t dim, bool has_validity, enc_t *inner)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__FixedSizeList *f = lt_arena_alloc(a, sizeof(*f));

	if (!e || !f || !inner)
		return NULL;
	lt__enc21__fixed_size_list__init(f);
	f->has_items_per_value = true;
	f->items_per_value = dim;
	f->has_has_validity = true;
	f->has_validity = has_validity;
	f->values = inner;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST;
	e->fixed_size_list = f;
	return e;
}

static enc_t *
enc_fsst(lt_arena *a, const lt_fsst_table *t, enc_t *inner)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__Fsst *f = lt_arena_alloc(a, sizeof(*f));
	uint8_t    *tab = lt_arena_alloc(a, LT_FSST_TABLE_SIZE);

	if (!e || !f || !tab || !inner)
		return NULL;
	lt__enc21__fsst__init(f);
	lt_fsst_export(t, tab);
	f->has_symbol_table = true;
	f->symbol_table.data = tab;
	f->symbol_table.len = LT_FSST_TABLE_SIZE;
	f->values = inner;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FSST;
	e->fsst = f;
	return e;
}

static enc_t *
enc_general(lt_arena *a, int scheme, enc_t *inner)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__General *g = lt_arena_alloc(a, sizeof(*g));
	Lt__Enc21__BufferCompression *bc = lt_arena_alloc(a, sizeof(*bc));

	if (!e || !g || !bc || !inner)
		return NULL;
	lt__enc21__general__init(g);
	lt__enc21__buffer_compression__init(bc);
	bc->has_scheme = true;
	bc->scheme = (Lt__Enc21__CompressionScheme) scheme;
	g->compression = bc;
	g->values = inner;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL;
	e->general = g;
	return e;
}

/* ---------------------------------------------------------------------- */
/* columns */

static bool
is_list_type(lt_type_id t)
{
	return t == LT_TYPE_LIST || t == LT_TYPE_LARGE_LIST || t == LT_TYPE_MAP;
}

int
lt_w21_columns(const lt_field *f, int32_t *ids, int cap)
{
	int			n = 0;

	if (lt_field_is_leaf(f) || f->blob == LT_BLOB_V2)	/* a blob v2 struct is one column of descriptors */
	{
		if (ids && cap > 0)
			ids[0] = f->id;
		return 1;
	}
	for (int i = 0; i < f->n_children; i++)
		n += lt_w21_columns(f->children[i], ids ? ids + n : NULL, cap - n);
	return n;
}

static bool
fixed_primitive(const lt_field *f)
{
	if (f->type == LT_TYPE_FIXED_LIST)
		return f->n_children == 1 && fixed_primitive(f->children[0]);
	return !lt_type_is_var_width(f->type) && !lt_type_is_nested(f->type) && f->type != LT_TYPE_NULL &&
		f->byte_width > 0;
}

lt_code
lt_w21_check(const lt_field *f, lt_file_version v, lt_error *err)
{
	if (f->dictionary)
		return lt_error_set(err, LT_EUNSUPPORTED, "writing dictionary-typed field \"%s\" is not supported", f->name);
	if (f->type == LT_TYPE_NULL)
		return lt_error_set(err, LT_EUNSUPPORTED, "writing field \"%s\" of the null type is not supported", f->name);
	/* legacy blobs are what 2.1 stores (Lance refuses them in 2.2), blob v2 what 2.2 stores */
	if (f->blob == LT_BLOB_V2 && v >= LT_FILE_V2_2 && f->blob_desc && f->type == LT_TYPE_STRUCT &&
		f->n_children == 2 && lt_type_is_var_width(f->children[0]->type) &&
		lt_type_is_var_width(f->children[1]->type))
		return f->blob_sizes.bad ? lt_error_set(err, LT_EUNSUPPORTED, "blob field \"%s\": metadata %s is not a size",
												 f->name, f->blob_sizes.bad) : LT_OK;
	if (f->blob != LT_BLOB_NONE && (f->blob != LT_BLOB_LEGACY || v != LT_FILE_V2_1 ||
									f->type != LT_TYPE_LARGE_BINARY || !f->blob_desc))
		return lt_error_set(err, LT_EUNSUPPORTED, "writing %s column \"%s\" in storage %s is not supported",
							lt_blob_form_name(f->blob), f->name, v == LT_FILE_V2_1 ? "2.1" : "2.2 or later");
	if (f->packed)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"writing packed struct \"%s\" (lance-encoding:packed) is not supported", f->name);
	if (f->type == LT_TYPE_MAP && v < LT_FILE_V2_2)
		return lt_error_set(err, LT_EUNSUPPORTED, "field \"%s\": maps need storage version 2.2 or later", f->name);
	if (f->type == LT_TYPE_FIXED_LIST && !fixed_primitive(f))
		return lt_error_set(err, LT_EUNSUPPORTED,
							"writing field \"%s\": fixed-size lists of nested or variable-width types are not supported",
							f->name);
	if ((f->type == LT_TYPE_STRUCT || f->type == LT_TYPE_MAP || is_list_type(f->type)) && f->n_children == 0)
		return lt_error_set(err, LT_EUNSUPPORTED, "writing field \"%s\": a %s without children", f->name,
							lt_type_name(f->type));
	if (f->type != LT_TYPE_FIXED_LIST)
		for (int i = 0; i < f->n_children; i++)
			LT_TRY(lt_w21_check(f->children[i], v, err));
	return LT_OK;
}

/* ---------------------------------------------------------------------- */
/* shredding rows into levels and visible items */

typedef struct levels
{
	uint16_t   *v;
	uint64_t	n, cap;
} levels;

static lt_code
lv_push(levels *l, uint16_t x, lt_error *err)
{
	if (l->n == l->cap)
	{
		uint64_t	cap = l->cap ? l->cap * 2 : 1024;
		uint16_t   *p = lt_realloc(l->v, cap * sizeof(uint16_t));

		if (!p)
			return lt_nomem(err);
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return LT_OK;
}

typedef struct shred
{
	int			depth;
	const lt_field *path[MAX_DEPTH];
	int			child_idx[MAX_DEPTH];	/* which child of node k leads to node k+1 */
	bool		has_null[MAX_DEPTH],
				has_empty[MAX_DEPTH];
	bool		vis_from[MAX_DEPTH];	/* no list at or below node k */
	uint16_t	null_def[MAX_DEPTH],
				empty_def[MAX_DEPTH],
				rep_of[MAX_DEPTH];
	int			n_layers;
	Lt__Enc21__RepDefLayer layers[MAX_DEPTH];	/* innermost first */
	int			max_rep;
	uint16_t	max_def,
				max_visible;
	levels		rep,
				def;
	uint64_t	n_levels;
	const lt_array *leaf;		/* the leaf's array (rows of its slots) */
	lt_array   *values;			/* visible items */
	bool		values_borrowed;	/* values is the leaf itself (not freed) */
	int64_t		run_start,
				run_len;		/* pending slice of leaf slots (run_start < 0: nulls) */
} shred;

static void
scan(shred *s, int k, const lt_array *a, int64_t i)
{
	if (!lt_array_is_valid(a, i))
	{
		s->has_null[k] = true;
		return;
	}
	if (is_list_type(s->path[k]->type))
	{
		int64_t		b = a->offsets[i],
					e = a->offsets[i + 1];

		if (b == e)
			s->has_empty[k] = true;
		for (int64_t j = b; j < e; j++)
			scan(s, k + 1, a->children[0], j);
	}
	else if (k < s->depth - 1)
		scan(s, k + 1, a->children[s->child_idx[k]], i);
}

static lt_code
flush_run(shred *s, lt_error *err)
{
	lt_code		rc = LT_OK;

	if (s->run_len == 0)
		return LT_OK;
	if (s->run_start < 0)
		rc = lt_array_append_nulls(s->values, s->run_len, err);
	else
		rc = lt_array_append_slice(s->values, s->leaf, s->run_start, s->run_len, err);
	s->run_len = 0;
	return rc;
}

/* Add leaf slot i (or a null placeholder when i < 0) to the visible items. */
static lt_code
push_item(shred *s, int64_t i, lt_error *err)
{
	if (s->run_len > 0 && ((i < 0 && s->run_start < 0) || (i >= 0 && s->run_start >= 0 && s->run_start + s->run_len == i)))
	{
		s->run_len++;
		return LT_OK;
	}
	LT_TRY(flush_run(s, err));
	s->run_start = i < 0 ? -1 : i;
	s->run_len = 1;
	return LT_OK;
}

static lt_code
level(shred *s, uint16_t r, uint16_t d, lt_error *err)
{
	if (s->max_rep > 0)
		LT_TRY(lv_push(&s->rep, r, err));
	if (s->max_def > 0)
		LT_TRY(lv_push(&s->def, d, err));
	s->n_levels++;
	return LT_OK;
}

static lt_code
emit(shred *s, int k, const lt_array *a, int64_t i, uint16_t r, lt_error *err)
{
	const lt_field *f = s->path[k];

	if (!lt_array_is_valid(a, i))
	{
		LT_TRY(level(s, r, s->null_def[k], err));
		return s->vis_from[k] ? push_item(s, -1, err) : LT_OK;
	}
	if (is_list_type(f->type))
	{
		int64_t		b = a->offsets[i],
					e = a->offsets[i + 1];

		if (b == e)
			return level(s, r, s->empty_def[k], err);
		for (int64_t j = b; j < e; j++)
			LT_TRY(emit(s, k + 1, a->children[0], j, j == b ? r : (uint16_t) (s->rep_of[k] - 1), err));
		return LT_OK;
	}
	if (k < s->depth - 1)
		return emit(s, k + 1, a->children[s->child_idx[k]], i, r, err);
	LT_TRY(level(s, r, 0, err));
	return push_item(s, i, err);
}

static void
shred_free(shred *s)
{
	lt_free(s->rep.v);
	lt_free(s->def.v);
	if (!s->values_borrowed)
		lt_array_free(s->values);
}

/* Levels and items of rows [0, top->length) along s->path. */
static lt_code
shred_rows(shred *s, const lt_array *top, lt_error *err)
{
	const lt_array *a = top;
	int64_t		n = top->length;
	uint16_t	next = 1;
	int			lists = 0;
	bool		seen_list = false;

	/*
	 * A top-level column without nulls (the common case): no levels, and the visible items are
	 * the rows themselves, as the general walk below would find them, without copying them.
	 */
	if (s->depth == 1 && !is_list_type(s->path[0]->type) &&
		(top->validity == NULL || n == 0 || memchr(top->validity, 0, (size_t) n) == NULL) &&
		(!lt_type_is_var_width(top->field->type) || n == 0 || top->offsets[0] == 0))
	{
		s->leaf = top;
		s->vis_from[0] = true;
		s->layers[s->n_layers++] = LT__ENC21__REP_DEF_LAYER__REPDEF_ALL_VALID_ITEM;
		s->n_levels = (uint64_t) n;
		s->values = (lt_array *) top;
		s->values_borrowed = true;
		return LT_OK;
	}

	/* the leaf's array */
	for (int k = 0; k < s->depth - 1; k++)
		a = is_list_type(s->path[k]->type) ? a->children[0] : a->children[s->child_idx[k]];
	s->leaf = a;
	for (int64_t i = 0; i < n; i++)
		scan(s, 0, top, i);

	/* layers and def levels, innermost first */
	for (int k = s->depth - 1; k >= 0; k--)
	{
		Lt__Enc21__RepDefLayer l;

		if (is_list_type(s->path[k]->type))
		{
			seen_list = true;
			lists++;
			if (s->has_null[k] && s->has_empty[k])
			{
				l = LT__ENC21__REP_DEF_LAYER__REPDEF_NULL_AND_EMPTY_LIST;
				s->null_def[k] = next++;
				s->empty_def[k] = next++;
			}
			else if (s->has_null[k])
			{
				l = LT__ENC21__REP_DEF_LAYER__REPDEF_NULLABLE_LIST;
				s->null_def[k] = next++;
			}
			else if (s->has_empty[k])
			{
				l = LT__ENC21__REP_DEF_LAYER__REPDEF_EMPTYABLE_LIST;
				s->empty_def[k] = next++;
			}
			else
				l = LT__ENC21__REP_DEF_LAYER__REPDEF_ALL_VALID_LIST;
		}
		else if (s->has_null[k])
		{
			l = LT__ENC21__REP_DEF_LAYER__REPDEF_NULLABLE_ITEM;
			s->null_def[k] = next++;
			if (!seen_list)
				s->max_visible = s->null_def[k];
		}
		else
			l = LT__ENC21__REP_DEF_LAYER__REPDEF_ALL_VALID_ITEM;
		s->vis_from[k] = !seen_list;
		s->layers[s->n_layers++] = l;
	}
	s->max_def = next - 1;
	s->max_rep = lists;
	for (int k = 0, r = lists; k < s->depth; k++)
		if (is_list_type(s->path[k]->type))
			s->rep_of[k] = (uint16_t) r--;
	LT_TRY(lt_array_new(s->path[s->depth - 1], &s->values, err));
	for (int64_t i = 0; i < n; i++)
		LT_TRY(emit(s, 0, top, i, (uint16_t) s->max_rep, err));
	return flush_run(s, err);
}

/* ---------------------------------------------------------------------- */
/* value chunks of a mini-block page */

#define MB_MAX_BUFS 4

typedef struct mb_chunk
{
	uint64_t	n;				/* values */
	uint32_t	size[MB_MAX_BUFS];
} mb_chunk;

typedef struct mb_vals
{
	int			nbuf;
	lt_wbuf		buf[MB_MAX_BUFS];
	mb_chunk   *chunks;
	size_t		n, cap;
	enc_t	   *enc;
} mb_vals;

static void
mb_vals_free(mb_vals *v)
{
	for (int i = 0; i < MB_MAX_BUFS; i++)
		lt_wbuf_free(&v->buf[i]);
	lt_free(v->chunks);
	memset(v, 0, sizeof(*v));
}

static lt_code
mb_add_chunk(mb_vals *v, uint64_t n, const uint64_t *before, lt_error *err)
{
	mb_chunk   *c;

	if (v->n == v->cap)
	{
		size_t		cap = v->cap ? v->cap * 2 : 16;
		mb_chunk   *p = lt_realloc(v->chunks, cap * sizeof(mb_chunk));

		if (!p)
			return lt_nomem(err);
		v->chunks = p;
		v->cap = cap;
	}
	c = &v->chunks[v->n++];
	memset(c, 0, sizeof(*c));
	c->n = n;
	for (int b = 0; b < v->nbuf; b++)
		c->size[b] = (uint32_t) (v->buf[b].len - before[b]);
	return LT_OK;
}

#define MARK(v, m) do { for (int b_ = 0; b_ < MB_MAX_BUFS; b_++) (m)[b_] = (v)->buf[b_].len; } while (0)

static unsigned
bit_len(uint64_t x)
{
	return x ? 64 - (unsigned) __builtin_clzll(x) : 0;
}

/* OR of c values of `width` bytes (1, 2, 4, 8): its bit length is their bit-packed width. */
static uint64_t
or_values(const uint8_t *p, uint64_t c, unsigned width)
{
	uint64_t	mx = 0;

#define OR_LOOP(T) \
	for (uint64_t i = 0; i < c; i++) { T x_; memcpy(&x_, p + i * sizeof(T), sizeof(T)); mx |= x_; }
	switch (width)
	{
		case 1:
			OR_LOOP(uint8_t);
			break;
		case 2:
			OR_LOOP(uint16_t);
			break;
		case 4:
			OR_LOOP(uint32_t);
			break;
		default:
			OR_LOOP(uint64_t);
			break;
	}
#undef OR_LOOP
	return mx;
}

/* Runs of equal adjacent values among n values of `width` bytes (1, 2, 4, 8). */
static uint64_t
count_runs(const uint8_t *p, uint64_t n, unsigned width)
{
	uint64_t	runs = n > 0;

#define RUN_LOOP(T) \
	for (uint64_t i = 1; i < n; i++) { T a_, b_; memcpy(&a_, p + (i - 1) * sizeof(T), sizeof(T)); \
		memcpy(&b_, p + i * sizeof(T), sizeof(T)); runs += a_ != b_; }
	switch (width)
	{
		case 1:
			RUN_LOOP(uint8_t);
			break;
		case 2:
			RUN_LOOP(uint16_t);
			break;
		case 4:
			RUN_LOOP(uint32_t);
			break;
		default:
			RUN_LOOP(uint64_t);
			break;
	}
#undef RUN_LOOP
	return runs;
}

/* Largest power of two of values of `bytes` each below the chunk budget. */
static uint64_t
fixed_chunk_values(uint64_t bytes)
{
	uint64_t	n = MAX_CHUNK_VALUES;

	while (n > 1 && n * bytes >= FIXED_CHUNK_BYTES)
		n /= 2;
	return n;
}

/* Flat fixed-width values (bool: bitmap). */
static lt_code
mb_flat(lt_arena *ar, const uint8_t *vals, uint64_t n, unsigned width, bool bitmap, mb_vals *out, lt_error *err)
{
	uint64_t	per = bitmap ? MAX_CHUNK_VALUES : fixed_chunk_values(width);
	uint64_t	m[MB_MAX_BUFS];

	out->nbuf = 1;
	out->enc = enc_flat(ar, bitmap ? 1 : (uint64_t) width * 8);
	for (uint64_t s = 0; s < n; s += per)
	{
		uint64_t	c = n - s < per ? n - s : per;

		MARK(out, m);
		if (bitmap)
		{
			uint64_t	nb = (c + 7) / 8;

			LT_TRY(lt_wbuf_fill(&out->buf[0], 0, nb, err));
			for (uint64_t i = 0; i < c; i++)
				if (vals[s + i])
					out->buf[0].p[m[0] + i / 8] |= (uint8_t) (1u << (i % 8));
		}
		else
			LT_TRY(lt_wbuf_put(&out->buf[0], vals + s * width, c * width, err));
		LT_TRY(mb_add_chunk(out, c, m, err));
	}
	return LT_OK;
}

/* FastLanes bit-packing, 1024 values per chunk, each chunk with its own width. */
static lt_code
mb_bitpack(lt_arena *ar, const uint8_t *vals, uint64_t n, unsigned width, mb_vals *out, lt_error *err)
{
	unsigned	tb = width * 8;
	uint64_t	m[MB_MAX_BUFS];
	uint64_t	block[LT_FL_BLOCK];
	uint64_t	packed_words[LT_FL_BLOCK];	/* aligned: lt_fl_pack stores whole words */
	uint8_t    *packed = (uint8_t *) packed_words;

	out->nbuf = 1;
	out->enc = enc_inline_bp(ar, tb);
	for (uint64_t s = 0; s < n; s += LT_FL_BLOCK)
	{
		uint64_t	c = n - s < LT_FL_BLOCK ? n - s : LT_FL_BLOCK;
		uint64_t	mx = 0,
					hdr;
		unsigned	w;

		memset(block, 0, sizeof(block));
		memcpy(block, vals + s * width, c * width);
		mx = or_values(vals + s * width, c, width);
		w = bit_len(mx);
		MARK(out, m);
		hdr = w;
		LT_TRY(lt_wbuf_put(&out->buf[0], &hdr, width, err));
		lt_fl_pack(tb, w, block, packed);
		LT_TRY(lt_wbuf_put(&out->buf[0], packed, lt_fl_packed_bytes(w), err));
		LT_TRY(mb_add_chunk(out, c, m, err));
	}
	return LT_OK;
}

/* Runs of equal values (u8 lengths, long runs split), up to 2048 values per chunk. */
static lt_code
mb_rle(lt_arena *ar, const uint8_t *vals, uint64_t n, unsigned width, mb_vals *out, lt_error *err)
{
	uint64_t	m[MB_MAX_BUFS];
	uint64_t	s = 0;

	out->nbuf = 2;
	out->enc = enc_rle(ar, (uint64_t) width * 8);
	while (s < n)
	{
		uint64_t	c = n - s <= RLE_CHUNK_VALUES ? n - s : RLE_CHUNK_VALUES;

		for (;;)
		{
			uint64_t	runs = 0;

			for (uint64_t i = 0; i < c;)
			{
				uint64_t	j = i + 1;

				while (j < c && j - i < 255 && memcmp(vals + (s + j) * width, vals + (s + i) * width, width) == 0)
					j++;
				runs++;
				i = j;
			}
			if (runs * (width + 1) < FIXED_CHUNK_BYTES || c == 1)
				break;
			/* a dense chunk: halve it (non-last chunks stay powers of two) */
			c = c == n - s && (c & (c - 1)) ? ((uint64_t) 1 << (bit_len(c) - 1)) : c / 2;
		}
		MARK(out, m);
		for (uint64_t i = 0; i < c;)
		{
			uint64_t	j = i + 1;
			uint8_t		len;

			while (j < c && j - i < 255 && memcmp(vals + (s + j) * width, vals + (s + i) * width, width) == 0)
				j++;
			len = (uint8_t) (j - i);
			LT_TRY(lt_wbuf_put(&out->buf[0], vals + (s + i) * width, width, err));
			LT_TRY(lt_wbuf_put(&out->buf[1], &len, 1, err));
			i = j;
		}
		LT_TRY(mb_add_chunk(out, c, m, err));
		s += c;
	}
	return LT_OK;
}

/* Lance's choice for fixed-width mini-block values (compression.rs). */
static lt_code
mb_fixed(lt_arena *ar, const uint8_t *vals, uint64_t n, unsigned width, mb_vals *out, lt_error *err)
{
	uint64_t	raw = n * width,
				bp = 0,
				runs = 0;
	bool		bp_ok = false;

	if (width != 1 && width != 2 && width != 4 && width != 8)
		return mb_flat(ar, vals, n, width, false, out, err);
	/* bit-packing estimate: a header word plus 1024 * w / T words per chunk */
	for (uint64_t s = 0; s < n; s += LT_FL_BLOCK)
	{
		uint64_t	c = n - s < LT_FL_BLOCK ? n - s : LT_FL_BLOCK,
					mx = or_values(vals + s * width, c, width);

		bp += (uint64_t) width * (1 + (uint64_t) LT_FL_BLOCK * bit_len(mx) / (width * 8));
	}
	bp_ok = n > 0 && bp < raw;
	runs = count_runs(vals, n, width);
	{
		uint64_t	pairs = runs + n / 255 < n ? runs + n / 255 : n;
		uint64_t	rle = pairs * (width + 1);

		if (rle < raw && !(bp_ok && bp < rle))
			return mb_rle(ar, vals, n, width, out, err);
	}
	if (bp_ok)
		return mb_bitpack(ar, vals, n, width, out, err);
	return mb_flat(ar, vals, n, width, false, out, err);
}

/* Strings: per chunk (n+1) offsets from the chunk buffer's start, then the bytes, padded. */
static lt_code
mb_variable(lt_arena *ar, const lt_array *a, bool wide, mb_vals *out, lt_error *err)
{
	uint64_t	ow = wide ? 8 : 4;
	uint64_t	n = (uint64_t) a->length;
	uint64_t	s = 0;
	uint64_t	m[MB_MAX_BUFS];
	const int64_t *off = a->offsets;

	out->nbuf = 1;
	out->enc = enc_variable(ar, ow * 8);
	if (n == 0)
		return LT_OK;
	while (s < n)
	{
		uint64_t	c;
		uint64_t	left = n - s;
		uint64_t	base;

		/* search_next_offset_idx: double a power of two while it fits the aim */
		if (left <= 1)
			c = left;
		else
		{
			uint64_t	num = 2,
						nn = 4;

			for (;;)
			{
				if (s + nn >= n + 1)
				{
					uint64_t	all = (uint64_t) (off[n] - off[s]) + (n + 1 - s) * ow;

					c = all <= VAR_CHUNK_AIM ? left : num;
					break;
				}
				if ((uint64_t) (off[s + nn] - off[s]) + (nn + 1) * ow > VAR_CHUNK_AIM || nn * 2 > MAX_CHUNK_VALUES)
				{
					c = num;
					break;
				}
				num = nn;
				nn *= 2;
			}
		}
		MARK(out, m);
		base = (c + 1) * ow;
		for (uint64_t i = 0; i <= c; i++)
		{
			uint64_t	o = base + (uint64_t) (off[s + i] - off[s]);

			if (ow == 4)
				LT_TRY(lt_wbuf_u32(&out->buf[0], (uint32_t) o, err));
			else
				LT_TRY(lt_wbuf_u64(&out->buf[0], o, err));
		}
		LT_TRY(lt_wbuf_put(&out->buf[0], a->data + off[s], (uint64_t) (off[s + c] - off[s]), err));
		LT_TRY(lt_wbuf_pad(&out->buf[0], ow, VAR_PAD, err));
		LT_TRY(mb_add_chunk(out, c, m, err));
		s += c;
	}
	return LT_OK;
}

/* Fixed-size lists of primitives: [items' validity bitmap] then the items, flat. */
static lt_code
mb_fsl(lt_arena *ar, const lt_array *a, mb_vals *out, lt_error *err)
{
	const lt_array *items = a->children[0];
	uint64_t	dim = (uint64_t) a->field->fixed_size;
	unsigned	iw = (unsigned) items->field->byte_width;
	bool		bits = items->field->type == LT_TYPE_BOOL;
	bool		validity = items->validity && items->null_count > 0;
	uint64_t	rec = bits ? (dim + 7) / 8 : dim * iw;
	uint64_t	per = fixed_chunk_values(rec + (validity ? (dim + 7) / 8 : 0));
	uint64_t	n = (uint64_t) a->length;
	uint64_t	m[MB_MAX_BUFS];

	if (items->field->type == LT_TYPE_FIXED_LIST)
		return lt_error_set(err, LT_EUNSUPPORTED, "writing nested fixed-size lists is not supported");
	out->nbuf = validity ? 2 : 1;
	out->enc = enc_fsl(ar, dim, validity, enc_flat(ar, bits ? 1 : (uint64_t) iw * 8));
	for (uint64_t s = 0; s < n; s += per)
	{
		uint64_t	c = n - s < per ? n - s : per;
		uint64_t	tot = c * dim,
					first = s * dim;
		lt_wbuf    *vb = &out->buf[validity ? 1 : 0];

		MARK(out, m);
		if (validity)
		{
			LT_TRY(lt_wbuf_fill(&out->buf[0], 0, (tot + 7) / 8, err));
			for (uint64_t i = 0; i < tot; i++)
				if (items->validity[first + i])
					out->buf[0].p[m[0] + i / 8] |= (uint8_t) (1u << (i % 8));
		}
		if (bits)
		{
			uint64_t	at = vb->len;

			LT_TRY(lt_wbuf_fill(vb, 0, (tot + 7) / 8, err));
			for (uint64_t i = 0; i < tot; i++)
				if (items->values[first + i])
					vb->p[at + i / 8] |= (uint8_t) (1u << (i % 8));
		}
		else
			LT_TRY(lt_wbuf_put(vb, items->values + first * iw, tot * iw, err));
		LT_TRY(mb_add_chunk(out, c, m, err));
	}
	return LT_OK;
}

/* ---------------------------------------------------------------------- */
/* levels: block-compressed per chunk */

typedef struct lv_codec
{
	int			kind;			/* 0 flat, 1 inline bit-packing, 2 out-of-line */
	unsigned	width;			/* out-of-line width */
} lv_codec;

static lv_codec
lv_choose(const uint16_t *v, uint64_t n)
{
	lv_codec	c = {0, 0};
	unsigned	mx = 0;

	for (uint64_t s = 0; s < n; s += LT_FL_BLOCK)
	{
		uint16_t	or = 0;

		for (uint64_t i = s; i < n && i < s + LT_FL_BLOCK; i++)
			or |= v[i];
		if (bit_len(or) > mx)
			mx = bit_len(or);
	}
	if (n <= LT_FL_BLOCK)
	{
		/* too small: one block's packed size is no smaller than the raw levels */
		if (2 + lt_fl_packed_bytes(mx) >= n * 2)
			return c;
		c.kind = 1;
		return c;
	}
	c.kind = 2;
	c.width = mx;
	return c;
}

static enc_t *
lv_encoding(lt_arena *ar, lv_codec c)
{
	return c.kind == 0 ? enc_flat(ar, 16) : c.kind == 1 ? enc_inline_bp(ar, 16) : enc_ool_bp(ar, 16, c.width);
}

static lt_code
lv_compress(lv_codec c, const uint16_t *v, uint64_t n, lt_wbuf *out, lt_error *err)
{
	uint16_t	block[LT_FL_BLOCK];
	uint16_t	packed_words[LT_FL_BLOCK];	/* aligned: lt_fl_pack stores whole words */
	uint8_t    *packed = (uint8_t *) packed_words;

	out->len = 0;
	if (c.kind == 0)
		return lt_wbuf_put(out, v, n * 2, err);
	for (uint64_t s = 0; s < n; s += LT_FL_BLOCK)
	{
		uint64_t	k = n - s < LT_FL_BLOCK ? n - s : LT_FL_BLOCK;
		unsigned	w = c.width;

		memset(block, 0, sizeof(block));
		memcpy(block, v + s, k * 2);
		if (c.kind == 1)
		{
			uint16_t	or = 0;

			for (uint64_t i = 0; i < k; i++)
				or |= block[i];
			w = bit_len(or);
			LT_TRY(lt_wbuf_u16(out, (uint16_t) w, err));
		}
		else if (k < LT_FL_BLOCK && k * 2 <= lt_fl_packed_bytes(w))
			return lt_wbuf_put(out, v + s, k * 2, err);	/* a raw tail is smaller */
		lt_fl_pack(16, w, block, packed);
		LT_TRY(lt_wbuf_put(out, packed, lt_fl_packed_bytes(w), err));
	}
	return LT_OK;
}

/* ---------------------------------------------------------------------- */
/* page assembly */

typedef struct page_out
{
	int			nbuf;
	lt_wbuf		buf[4];
	Lt__Enc21__PageLayout layout;
} page_out;

static void
page_out_free(page_out *p)
{
	for (int i = 0; i < 4; i++)
		lt_wbuf_free(&p->buf[i]);
}

static lt_code
emit_page(lt_file_writer *w, int col, page_out *po, uint64_t rows, uint64_t row0, lt_error *err)
{
	size_t		len = lt__enc21__page_layout__get_packed_size(&po->layout);
	uint8_t    *enc = lt_malloc(len ? len : 1);
	const uint8_t *bp[4];
	uint64_t	bl[4];
	lt_code		rc;

	if (!enc)
		return lt_nomem(err);
	lt__enc21__page_layout__pack(&po->layout, enc);
	for (int i = 0; i < po->nbuf; i++)
	{
		bp[i] = po->buf[i].p ? po->buf[i].p : (const uint8_t *) "";
		bl[i] = po->buf[i].len;
	}
	rc = lt_writer_page(w, col, po->nbuf, bp, bl, PAGE_URL, enc, len, rows, row0, err);
	lt_free(enc);
	return rc;
}

static Lt__Enc21__RepDefLayer *
copy_layers(lt_arena *ar, const shred *s)
{
	Lt__Enc21__RepDefLayer *l = lt_arena_alloc(ar, sizeof(Lt__Enc21__RepDefLayer) * (size_t) s->n_layers);

	if (l)
		memcpy(l, s->layers, sizeof(Lt__Enc21__RepDefLayer) * (size_t) s->n_layers);
	return l;
}

/* ConstantLayout: all items null (simple validity: no buffers) or nothing visible. */
static lt_code
page_constant(lt_arena *ar, const shred *s, lt_file_version v, page_out *po, lt_error *err)
{
	Lt__Enc21__ConstantLayout *cl = lt_arena_alloc(ar, sizeof(*cl));

	if (!cl)
		return lt_nomem(err);
	lt__enc21__constant_layout__init(cl);
	cl->n_layers = (size_t) s->n_layers;
	cl->layers = copy_layers(ar, s);
	po->layout.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT;
	po->layout.constant_layout = cl;
	if (s->n_layers == 1 && s->layers[0] == LT__ENC21__REP_DEF_LAYER__REPDEF_NULLABLE_ITEM)
	{
		po->nbuf = 0;
		return LT_OK;
	}
	po->nbuf = 2;
	if (s->max_rep > 0)
		LT_TRY(lt_wbuf_put(&po->buf[0], s->rep.v, s->rep.n * 2, err));
	if (s->max_def > 0)
		LT_TRY(lt_wbuf_put(&po->buf[1], s->def.v, s->def.n * 2, err));
	if (v >= LT_FILE_V2_2)
	{
		/* 2.2 describes the level buffers (here: raw u16, i.e. flat) */
		if (s->max_rep > 0)
		{
			cl->rep_compression = enc_flat(ar, 16);
			cl->has_num_rep_values = true;
			cl->num_rep_values = s->rep.n;
		}
		if (s->max_def > 0)
		{
			cl->def_compression = enc_flat(ar, 16);
			cl->has_num_def_values = true;
			cl->num_def_values = s->def.n;
		}
	}
	return ar->oom ? lt_nomem(err) : LT_OK;
}

/*
 * Serialize value chunks with their slices of the levels.  Returns
 * LT_EUNSUPPORTED (without a message) when a chunk would exceed the
 * format's limits, so that the caller falls back to full-zip.
 */
static lt_code
page_miniblock(lt_arena *ar, const shred *s, mb_vals *mv, enc_t *dict_enc, lt_wbuf *dict_buf, uint64_t dict_items,
			   lt_file_version v, page_out *po, lt_error *err)
{
	Lt__Enc21__MiniBlockLayout *mb = lt_arena_alloc(ar, sizeof(*mb));
	bool		large = v >= LT_FILE_V2_2;
	bool		has_rep = s->max_rep > 0,
				has_def = s->max_def > 0;
	lv_codec	rc_c = {0, 0},
				dc_c = {0, 0};
	lt_wbuf		rep = {0},
				def = {0},
				*meta = &po->buf[0],
				*data = &po->buf[1],
				index = {0};
	uint64_t	lpos = 0;		/* next level */
	uint64_t	voff[MB_MAX_BUFS] = {0};
	lt_code		rc = LT_OK;

	if (!mb)
		return lt_nomem(err);
	lt__enc21__mini_block_layout__init(mb);
	if (has_rep)
		rc_c = lv_choose(s->rep.v, s->rep.n);
	if (has_def)
		dc_c = lv_choose(s->def.v, s->def.n);
	for (size_t c = 0; rc == LT_OK && c < mv->n; c++)
	{
		const mb_chunk *ck = &mv->chunks[c];
		bool		last = c + 1 == mv->n;
		uint64_t	l0 = lpos,
					nl = 0,
					start = data->len,
					bytes;
		uint64_t	word;

		/* the levels up to this chunk's last value (the last chunk takes the rest) */
		if (has_rep || has_def)
		{
			if (last)
				lpos = s->n_levels;
			else if (!has_def || !has_rep)
				lpos += ck->n;
			else
			{
				uint64_t	seen = 0;

				while (seen < ck->n)
					seen += s->def.v[lpos++] <= s->max_visible;
			}
			nl = lpos - l0;
			if (nl > 0xFFFF)
			{
				rc = LT_EUNSUPPORTED;
				break;
			}
			if (has_rep && (rc = lv_compress(rc_c, s->rep.v + l0, nl, &rep, err)) != LT_OK)
				break;
			if (has_def && (rc = lv_compress(dc_c, s->def.v + l0, nl, &def, err)) != LT_OK)
				break;
			if (rep.len > 0xFFFF || def.len > 0xFFFF)
			{
				rc = LT_EUNSUPPORTED;
				break;
			}
		}
		if (has_rep)
		{
			/* repetition index: rows finishing in the chunk, levels after the last row start */
			uint64_t	rows = 0,
						left = 0;
			const uint16_t *r = s->rep.v + l0;

			for (uint64_t i = 1; i < nl; i++)
				rows += r[i] == s->max_rep;
			if (!last)
			{
				left = nl;
				for (uint64_t i = nl; i-- > 0;)
					if (r[i] == s->max_rep)
					{
						left = nl - i;
						break;
					}
			}
			else
				rows++;
			if (c > 0 && nl > 0 && r[0] == s->max_rep)
			{
				uint64_t   *prev = (uint64_t *) (void *) (index.p + index.len - 16);
				uint64_t	pr,
							pl;

				memcpy(&pr, prev, 8);
				memcpy(&pl, (uint8_t *) prev + 8, 8);
				if (pl != 0)
				{
					pr++;
					pl = 0;
					memcpy(prev, &pr, 8);
					memcpy((uint8_t *) prev + 8, &pl, 8);
				}
			}
			if ((rc = lt_wbuf_u64(&index, rows, err)) != LT_OK || (rc = lt_wbuf_u64(&index, left, err)) != LT_OK)
				break;
		}
		/* header */
		rc = lt_wbuf_u16(data, (uint16_t) nl, err);
		if (rc == LT_OK && has_rep)
			rc = lt_wbuf_u16(data, (uint16_t) rep.len, err);
		if (rc == LT_OK && has_def)
			rc = lt_wbuf_u16(data, (uint16_t) def.len, err);
		for (int b = 0; rc == LT_OK && b < mv->nbuf; b++)
		{
			if (large)
				rc = lt_wbuf_u32(data, ck->size[b], err);
			else if (ck->size[b] > 0xFFFF)
				rc = LT_EUNSUPPORTED;
			else
				rc = lt_wbuf_u16(data, (uint16_t) ck->size[b], err);
		}
		if (rc == LT_OK)
			rc = lt_wbuf_pad(data, MB_ALIGN, MB_FILL, err);
		if (rc == LT_OK && has_rep && (rc = lt_wbuf_put(data, rep.p, rep.len, err)) == LT_OK)
			rc = lt_wbuf_pad(data, MB_ALIGN, MB_FILL, err);
		if (rc == LT_OK && has_def && (rc = lt_wbuf_put(data, def.p, def.len, err)) == LT_OK)
			rc = lt_wbuf_pad(data, MB_ALIGN, MB_FILL, err);
		for (int b = 0; rc == LT_OK && b < mv->nbuf; b++)
		{
			rc = lt_wbuf_put(data, mv->buf[b].p + voff[b], ck->size[b], err);
			voff[b] += ck->size[b];
			if (rc == LT_OK)
				rc = lt_wbuf_pad(data, MB_ALIGN, MB_FILL, err);
		}
		if (rc != LT_OK)
			break;
		bytes = data->len - start;
		if (!large && bytes > CHUNK_LIMIT_2_1)
		{
			rc = LT_EUNSUPPORTED;
			break;
		}
		word = ((bytes / MB_ALIGN - 1) << 4) | (last ? 0 : bit_len(ck->n) - 1);
		rc = large ? lt_wbuf_u32(meta, (uint32_t) word, err) : lt_wbuf_u16(meta, (uint16_t) word, err);
	}
	lt_wbuf_free(&rep);
	lt_wbuf_free(&def);
	if (rc != LT_OK)
	{
		lt_wbuf_free(&index);
		return rc;
	}
	po->nbuf = 2;
	if (dict_enc)
	{
		po->buf[2] = *dict_buf;
		memset(dict_buf, 0, sizeof(*dict_buf));
		po->nbuf = 3;
		mb->dictionary = dict_enc;
		mb->has_num_dictionary_items = true;
		mb->num_dictionary_items = dict_items;
	}
	if (has_rep)
	{
		po->buf[po->nbuf++] = index;
		mb->has_repetition_index_depth = true;
		mb->repetition_index_depth = 1;
	}
	else
		lt_wbuf_free(&index);
	if (has_rep)
		mb->rep_compression = lv_encoding(ar, rc_c);
	if (has_def)
		mb->def_compression = lv_encoding(ar, dc_c);
	mb->value_compression = mv->enc;
	mb->n_layers = (size_t) s->n_layers;
	mb->layers = copy_layers(ar, s);
	mb->has_num_buffers = true;
	mb->num_buffers = (uint64_t) mv->nbuf;
	mb->has_num_items = true;
	mb->num_items = (uint64_t) s->values->length;	/* visible items, not levels */
	if (large)
	{
		mb->has_has_large_chunk = true;
		mb->has_large_chunk = true;
	}
	po->layout.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT;
	po->layout.mini_block_layout = mb;
	return ar->oom ? lt_nomem(err) : LT_OK;
}

/* Bytes of one visible item's value when flat (0 for strings). */
static uint64_t
item_bytes(const lt_field *f)
{
	if (f->type == LT_TYPE_FIXED_LIST)
		return (uint64_t) f->fixed_size * item_bytes(f->children[0]);
	return (uint64_t) f->byte_width;
}

static uint64_t
max_string(const lt_array *a)
{
	uint64_t	mx = 0;

	for (int64_t i = 0; i < a->length; i++)
		if ((uint64_t) (a->offsets[i + 1] - a->offsets[i]) > mx)
			mx = (uint64_t) (a->offsets[i + 1] - a->offsets[i]);
	return mx;
}

static bool fsst_wanted(const lt_array *a);
static lt_code fsst_compress(const lt_array *a, lt_fsst_encoder *enc, lt_array *out, lt_error *err);

/* FullZip: per level a control word and the value (fixed), or a length and bytes (strings). */
static lt_code
page_fullzip(lt_arena *ar, const shred *s, lt_file_version v, page_out *po, lt_error *err)
{
	Lt__Enc21__FullZipLayout *fz = lt_arena_alloc(ar, sizeof(*fz));
	const lt_array *a = s->values;
	const lt_field *leaf = a->field;
	bool		var = lt_type_is_var_width(leaf->type);
	bool		wide = leaf->type == LT_TYPE_LARGE_UTF8 || leaf->type == LT_TYPE_LARGE_BINARY;
	unsigned	brep = bit_len((uint64_t) s->max_rep),
				bdef = bit_len(s->max_def);
	unsigned	cw = brep + bdef == 0 ? 0 : brep + bdef <= 8 ? 1 : brep + bdef <= 16 ? 2 : 4;
	uint64_t	rec = var ? 0 : item_bytes(leaf);
	bool		fsl_validity = false;
	/* values over 32 KiB are compressed one by one with zstd (CompressedBufferEncoder) */
	bool		zstd_values = var && max_string(a) > 32 * 1024 && a->data_len >= 32 * 1024;
	uint8_t    *zbuf = NULL;
	lt_array	packed;			/* FSST-compressed strings (per value, one table) */
	lt_fsst_encoder *fe = NULL;
	bool		fsst = var && !zstd_values && fsst_wanted(a);
	lt_wbuf    *out = &po->buf[0];
	uint64_t   *row_start = NULL;
	uint64_t	nrows = 0,
				vi = 0;
	lt_code		rc = LT_OK;

	if (!fz)
		return lt_nomem(err);
	lt__enc21__full_zip_layout__init(fz);
	if (leaf->type == LT_TYPE_FIXED_LIST)
	{
		const lt_array *items = a->children[0];

		if (items->field->type == LT_TYPE_FIXED_LIST || items->field->type == LT_TYPE_BOOL)
			return lt_error_set(err, LT_EUNSUPPORTED, "writing wide fixed-size lists of %s is not supported",
								lt_type_name(items->field->type));
		fsl_validity = items->validity && items->null_count > 0;
		if (fsl_validity)
			rec += ((uint64_t) leaf->fixed_size + 7) / 8;
		fz->value_compression = enc_fsl(ar, (uint64_t) leaf->fixed_size, fsl_validity,
										enc_flat(ar, (uint64_t) items->field->byte_width * 8));
	}
	else if (var && zstd_values)
		fz->value_compression = enc_general(ar, LT__ENC21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_ZSTD,
											enc_variable(ar, wide ? 64 : 32));
	else if (fsst)
	{
		lt_code		frc;

		if (!(fe = lt_malloc(sizeof(*fe))))
			return lt_nomem(err);
		if ((frc = fsst_compress(a, fe, &packed, err)) != LT_OK)
		{
			lt_free(fe);
			return frc;
		}
		fz->value_compression = enc_fsst(ar, &fe->table, enc_variable(ar, wide ? 64 : 32));
		a = &packed;
	}
	else if (var)
		fz->value_compression = enc_variable(ar, wide ? 64 : 32);
	else
		fz->value_compression = enc_flat(ar, rec * 8);
	if (var || s->max_rep > 0)
	{
		row_start = lt_malloc(((uint64_t) s->n_levels + 2) * sizeof(uint64_t));
		if (!row_start)
			return lt_nomem(err);
	}
	for (uint64_t l = 0; rc == LT_OK && l < s->n_levels; l++)
	{
		uint16_t	r = s->max_rep ? s->rep.v[l] : 0;
		uint16_t	d = s->max_def ? s->def.v[l] : 0;
		uint32_t	word = ((uint32_t) r << bdef) | d;

		if (row_start && (s->max_rep == 0 || r == s->max_rep))
			row_start[nrows++] = out->len;
		if (cw)
			rc = lt_wbuf_put(out, &word, cw, err);
		if (rc != LT_OK || d > s->max_visible)
			continue;
		if (var)
		{
			if (d == 0)
			{
				uint64_t	len = (uint64_t) (a->offsets[vi + 1] - a->offsets[vi]);
				const uint8_t *src = a->data + a->offsets[vi];

				if (zstd_values && len > 0)
				{
					/* [u64 uncompressed length][zstd frame] */
					size_t		bound = ZSTD_compressBound(len);
					size_t		got;

					if (!(zbuf = lt_realloc(zbuf, bound + 8)))
					{
						rc = lt_nomem(err);
						break;
					}
					lt_put64(zbuf, len);
					got = ZSTD_compress(zbuf + 8, bound, src, len, 3);
					if (ZSTD_isError(got))
					{
						rc = lt_error_set(err, LT_EIO, "zstd: %s", ZSTD_getErrorName(got));
						break;
					}
					src = zbuf;
					len = got + 8;
				}
				rc = wide ? lt_wbuf_u64(out, len, err) : lt_wbuf_u32(out, (uint32_t) len, err);
				if (rc == LT_OK)
					rc = lt_wbuf_put(out, src, len, err);
			}
		}
		else if (leaf->type == LT_TYPE_FIXED_LIST)
		{
			const lt_array *items = a->children[0];
			uint64_t	dim = (uint64_t) leaf->fixed_size;
			unsigned	iw = (unsigned) items->field->byte_width;

			if (fsl_validity)
			{
				uint64_t	at = out->len;

				rc = lt_wbuf_fill(out, 0, (dim + 7) / 8, err);
				for (uint64_t i = 0; rc == LT_OK && i < dim; i++)
					if (items->validity[vi * dim + i])
						out->p[at + i / 8] |= (uint8_t) (1u << (i % 8));
			}
			if (rc == LT_OK)
				rc = lt_wbuf_put(out, items->values + vi * dim * iw, dim * iw, err);
		}
		else
			rc = lt_wbuf_put(out, a->values + vi * rec, rec, err);
		vi++;
	}
	if (rc == LT_OK && row_start)
	{
		uint64_t	mx = out->len;
		unsigned	bw = mx <= 0xFF ? 1 : mx <= 0xFFFF ? 2 : mx <= 0xFFFFFFFFu ? 4 : 8;

		row_start[nrows] = out->len;
		for (uint64_t i = 0; rc == LT_OK && i <= nrows; i++)
			rc = lt_wbuf_put(&po->buf[1], &row_start[i], bw, err);
		po->nbuf = 2;
	}
	else
		po->nbuf = 1;
	lt_free(row_start);
	lt_free(zbuf);
	if (fe)
	{
		lt_free(packed.offsets);
		lt_free(packed.data);
		lt_free(fe);
	}
	if (rc != LT_OK)
		return rc;
	fz->has_bits_rep = true;
	fz->bits_rep = brep;
	fz->has_bits_def = true;
	fz->bits_def = bdef;
	if (var)
	{
		fz->details_case = LT__ENC21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_OFFSET;
		fz->bits_per_offset = wide ? 64 : 32;
	}
	else
	{
		fz->details_case = LT__ENC21__FULL_ZIP_LAYOUT__DETAILS_BITS_PER_VALUE;
		fz->bits_per_value = (uint32_t) (rec * 8);
	}
	fz->has_num_items = true;
	fz->num_items = (uint32_t) s->n_levels;
	fz->has_num_visible_items = true;
	fz->num_visible_items = (uint32_t) a->length;
	fz->n_layers = (size_t) s->n_layers;
	fz->layers = copy_layers(ar, s);
	po->layout.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT;
	po->layout.full_zip_layout = fz;
	(void) v;
	return ar->oom ? lt_nomem(err) : LT_OK;
}

/* ---------------------------------------------------------------------- */
/* FSST for text (utf8 only, as Lance: pages of >= 32 KiB with strings of >= 5 bytes) */

#define FSST_MIN_BYTES (32 * 1024)
#define FSST_MIN_MAXLEN 5

static bool
fsst_wanted(const lt_array *a)
{
	lt_type_id	t = a->field->type;

	return (t == LT_TYPE_UTF8 || t == LT_TYPE_LARGE_UTF8) && a->data_len >= FSST_MIN_BYTES &&
		max_string(a) >= FSST_MIN_MAXLEN;
}

/*
 * Compress every string of a with a table trained on them: *out is a
 * shallow array of the same field whose offsets / data are the compressed
 * strings (lt_free both).
 */
static lt_code
fsst_compress(const lt_array *a, lt_fsst_encoder *enc, lt_array *out, lt_error *err)
{
	int64_t		n = a->length;
	uint64_t	pos = 0;

	LT_TRY(lt_fsst_train(a->data, a->offsets, n, enc, err));
	memset(out, 0, sizeof(*out));
	out->field = a->field;
	out->length = n;
	out->offsets = lt_malloc(((size_t) n + 1) * sizeof(int64_t));
	out->data = lt_malloc((size_t) a->data_len * 2 + 16);
	if (!out->offsets || !out->data)
	{
		lt_free(out->offsets);
		lt_free(out->data);
		return lt_nomem(err);
	}
	pos = lt_fsst_encode_all(enc, a->data, a->offsets, n, out->data, out->offsets);
	out->data_len = (int64_t) pos;
	return LT_OK;
}

/* ---------------------------------------------------------------------- */
/* dictionary for strings with few distinct values */

typedef struct dict_build
{
	uint32_t   *idx;			/* per visible item */
	uint32_t   *slots;			/* hash table of entry + 1 */
	uint64_t	mask;
	int64_t    *first;			/* item of each entry's first occurrence */
	uint64_t	n_entries;
	uint64_t	bytes;
} dict_build;

static uint64_t
hash_bytes(const uint8_t *p, uint64_t n)
{
	uint64_t	h = 1469598103934665603ULL ^ n;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static void
dict_free(dict_build *d)
{
	lt_free(d->idx);
	lt_free(d->slots);
	lt_free(d->first);
}

/* Build the dictionary; false when it is too large to pay (Lance's budget). */
static bool
dict_try(const lt_array *a, uint64_t max_entries, uint64_t max_bytes, dict_build *d)
{
	uint64_t	n = (uint64_t) a->length;
	uint64_t	cap = 16;

	memset(d, 0, sizeof(*d));
	while (cap < max_entries * 2)
		cap *= 2;
	d->idx = lt_malloc(n * sizeof(uint32_t));
	d->slots = lt_calloc(cap, sizeof(uint32_t));
	d->first = lt_malloc((max_entries + 1) * sizeof(int64_t));
	if (!d->idx || !d->slots || !d->first)
		return false;
	d->mask = cap - 1;
	for (uint64_t i = 0; i < n; i++)
	{
		const uint8_t *p = a->data + a->offsets[i];
		uint64_t	len = (uint64_t) (a->offsets[i + 1] - a->offsets[i]);
		uint64_t	h = hash_bytes(p, len) & d->mask;

		for (;;)
		{
			uint32_t	e = d->slots[h];

			if (e == 0)
			{
				if (d->n_entries >= max_entries)
					return false;
				d->first[d->n_entries] = (int64_t) i;
				d->slots[h] = (uint32_t) ++d->n_entries;
				d->bytes += len;
				d->idx[i] = (uint32_t) (d->n_entries - 1);
				break;
			}
			else
			{
				int64_t		j = d->first[e - 1];
				uint64_t	jl = (uint64_t) (a->offsets[j + 1] - a->offsets[j]);

				if (jl == len && memcmp(a->data + a->offsets[j], p, len) == 0)
				{
					d->idx[i] = e - 1;
					break;
				}
			}
			h = (h + 1) & d->mask;
		}
		if (d->bytes + 4 * (d->n_entries + 1) + 4 * n > max_bytes)
			return false;
	}
	return true;
}

/*
 * The dictionary as a block: [bits_per_offset][data start][n+1 offsets from 0][bytes], the
 * header words and offsets u32 (32-bit offsets) or u64 (large strings and binaries).
 */
static lt_code
dict_block(const lt_array *a, const dict_build *d, bool wide, lt_wbuf *out, lt_error *err)
{
	uint64_t	ow = wide ? 8 : 4;
	uint64_t	off = 0;

#define PUT_OFF(x) (wide ? lt_wbuf_u64(out, (x), err) : lt_wbuf_u32(out, (uint32_t) (x), err))
	LT_TRY(PUT_OFF(ow * 8));
	LT_TRY(PUT_OFF(2 * ow + ow * (d->n_entries + 1)));
	LT_TRY(PUT_OFF(0));
	for (uint64_t e = 0; e < d->n_entries; e++)
	{
		int64_t		j = d->first[e];

		off += (uint64_t) (a->offsets[j + 1] - a->offsets[j]);
		LT_TRY(PUT_OFF(off));
	}
#undef PUT_OFF
	for (uint64_t e = 0; e < d->n_entries; e++)
	{
		int64_t		j = d->first[e];

		LT_TRY(lt_wbuf_put(out, a->data + a->offsets[j], (uint64_t) (a->offsets[j + 1] - a->offsets[j]), err));
	}
	return LT_OK;
}

/* lz4 block with a u32 size prefix (2.2 compresses dictionary values so). */
static lt_code
lz4_wrap(lt_wbuf *b, lt_error *err)
{
	int			bound = LZ4_compressBound((int) b->len);
	lt_wbuf		out = {0};
	int			n;

	if (b->len > 0x7E000000)
		return lt_error_set(err, LT_EUNSUPPORTED, "dictionary of %llu bytes", (unsigned long long) b->len);
	LT_TRY(lt_wbuf_reserve(&out, (uint64_t) bound + 4, err));
	lt_put32(out.p, (uint32_t) b->len);
	n = LZ4_compress_default((const char *) b->p, (char *) out.p + 4, (int) b->len, bound);
	if (n <= 0)
	{
		lt_wbuf_free(&out);
		return lt_error_set(err, LT_EIO, "lz4 compression failed");
	}
	out.len = (uint64_t) n + 4;
	lt_wbuf_free(b);
	*b = out;
	return LT_OK;
}

/* Lance's should_dictionary_encode for variable-width values. */
static bool
dict_wanted(const lt_array *a, uint64_t *max_entries, uint64_t *max_bytes)
{
	uint64_t	n = (uint64_t) a->length;
	uint64_t	data = (uint64_t) a->data_len + 4 * (n + 1);
	uint64_t	card = n / 2 < DICT_MAX_CARD ? n / 2 : DICT_MAX_CARD;
	uint64_t	sample = n < 4096 ? n : 4096;
	uint64_t	uniq = 0;
	dict_build	d;
	double		ratio;

	if (n < DICT_MIN_VALUES || card == 0 || a->data_len == 0)
		return false;
	/* unique ratio of a prefix sample */
	{
		lt_array	pref = *a;

		pref.length = (int64_t) sample;
		if (!dict_try(&pref, sample, UINT64_MAX, &d))
		{
			dict_free(&d);
			return false;
		}
		uniq = d.n_entries;
		dict_free(&d);
	}
	ratio = (double) uniq / (double) sample;
	if (ratio >= 0.98 || (uint64_t) (ratio * (double) n + 0.999999) > card)
		return false;
	*max_entries = card;
	*max_bytes = (uint64_t) ((double) data * 0.8);
	return true;
}

/* ---------------------------------------------------------------------- */
/* one page of one leaf */

static lt_code
encode_leaf(lt_file_writer *w, int col, shred *s, uint64_t rows, uint64_t row0, lt_error *err)
{
	lt_file_version v = lt_writer_version(w);
	const lt_array *vals = s->values;
	const lt_field *leaf = vals->field;
	lt_arena	ar = {0};
	page_out	po;
	mb_vals		mv;
	lt_code		rc = LT_OK;
	bool		var = lt_type_is_var_width(leaf->type);
	bool		done = false;

	memset(&po, 0, sizeof(po));
	memset(&mv, 0, sizeof(mv));
	lt__enc21__page_layout__init(&po.layout);

	if (vals->length == 0 || vals->null_count == vals->length)
	{
		rc = page_constant(&ar, s, v, &po, err);
		done = true;
	}
	if (!done && var)
	{
		uint64_t	max_entries,
					max_bytes;
		dict_build	d;

		if (dict_wanted(vals, &max_entries, &max_bytes))
		{
			if (dict_try(vals, max_entries, max_bytes, &d))
			{
				lt_wbuf		db = {0};
				bool		wide = leaf->type == LT_TYPE_LARGE_UTF8 || leaf->type == LT_TYPE_LARGE_BINARY;
				enc_t	   *denc = enc_variable(&ar, wide ? 64 : 32);

				/* indices are i32, compressed like any fixed-width values */
				rc = mb_fixed(&ar, (const uint8_t *) d.idx, (uint64_t) vals->length, 4, &mv, err);
				if (rc == LT_OK)
					rc = dict_block(vals, &d, wide, &db, err);
				if (rc == LT_OK && v >= LT_FILE_V2_2)
				{
					rc = lz4_wrap(&db, err);
					denc = enc_general(&ar, LT__ENC21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_LZ4, denc);
				}
				if (rc == LT_OK)
				{
					rc = page_miniblock(&ar, s, &mv, denc, &db, d.n_entries, v, &po, err);
					done = rc == LT_OK;
					if (rc == LT_EUNSUPPORTED)
						rc = LT_OK;
				}
				lt_wbuf_free(&db);
				mb_vals_free(&mv);
			}
			dict_free(&d);
		}
	}
	if (rc == LT_OK && !done)
	{
		uint64_t	width = var ? max_string(vals) : item_bytes(leaf);

		if (width < NARROW_BYTES)
		{
			if (var && fsst_wanted(vals))
			{
				lt_fsst_encoder *fe = lt_malloc(sizeof(*fe));
				lt_array	packed;

				rc = fe ? fsst_compress(vals, fe, &packed, err) : lt_nomem(err);
				if (rc == LT_OK)
				{
					rc = mb_variable(&ar, &packed, leaf->type == LT_TYPE_LARGE_UTF8, &mv, err);
					if (rc == LT_OK)
						mv.enc = enc_fsst(&ar, &fe->table, mv.enc);
					lt_free(packed.offsets);
					lt_free(packed.data);
				}
				lt_free(fe);
			}
			else if (var)
				rc = mb_variable(&ar, vals, leaf->type == LT_TYPE_LARGE_UTF8 || leaf->type == LT_TYPE_LARGE_BINARY,
								 &mv, err);
			else if (leaf->type == LT_TYPE_FIXED_LIST)
				rc = mb_fsl(&ar, vals, &mv, err);
			else if (leaf->type == LT_TYPE_BOOL)
				rc = mb_flat(&ar, vals->values, (uint64_t) vals->length, 1, true, &mv, err);
			else
				rc = mb_fixed(&ar, vals->values, (uint64_t) vals->length, (unsigned) leaf->byte_width, &mv, err);
			if (rc == LT_OK)
			{
				rc = page_miniblock(&ar, s, &mv, NULL, NULL, 0, v, &po, err);
				done = rc == LT_OK;
				if (rc == LT_EUNSUPPORTED)
				{
					/* a chunk over the format's limits: start over as full-zip */
					page_out_free(&po);
					memset(&po, 0, sizeof(po));
					lt__enc21__page_layout__init(&po.layout);
					rc = LT_OK;
				}
			}
			mb_vals_free(&mv);
		}
		if (rc == LT_OK && !done)
			rc = page_fullzip(&ar, s, v, &po, err);
	}
	if (rc == LT_OK && ar.oom)
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = emit_page(w, col, &po, rows, row0, err);
	page_out_free(&po);
	mb_vals_free(&mv);
	lt_arena_free(&ar);
	return rc;
}

/*
 * A legacy blob column (storage 2.1), as Lance writes it: each non-empty blob's bytes out of line in the data
 * file, and a page of {position, size} descriptors (a packed struct of two u64, flat, never null) wrapped in a
 * blob layout whose layer says whether the blob is nullable.  A NULL blob smuggles its definition level into
 * the position (level << 16, size 0); an empty one is {0, 0}.
 */
static enc_t *
enc_packed_u64_pair(lt_arena *a, enc_t *inner)
{
	enc_t	   *e = enc_new(a);
	Lt__Enc21__PackedStruct *ps = lt_arena_alloc(a, sizeof(*ps));
	uint64_t   *bits = lt_arena_alloc(a, 2 * sizeof(uint64_t));

	if (!e || !ps || !bits || !inner)
		return NULL;
	lt__enc21__packed_struct__init(ps);
	bits[0] = bits[1] = 64;
	ps->n_bits_per_value = 2;
	ps->bits_per_value = bits;
	ps->values = inner;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_PACKED_STRUCT;
	e->packed_struct = ps;
	return e;
}

static lt_code
encode_blob_legacy(lt_file_writer *w, int col, const lt_field *f, const lt_array *a, uint64_t row0, lt_error *err)
{
	uint64_t	n = (uint64_t) a->length;
	uint8_t    *desc = lt_malloc(n > 0 ? n * 16 : 1);
	bool		nulls = false,
				wrote = false;
	lt_array	items;			/* what the descriptor page counts: one item per row */
	lt_arena	ar = {0};
	page_out	po;
	mb_vals		mv;
	shred		s;
	lt_code		rc = LT_OK;

	if (!desc)
		return lt_nomem(err);
	memset(&po, 0, sizeof(po));
	memset(&mv, 0, sizeof(mv));
	memset(&s, 0, sizeof(s));
	memset(&items, 0, sizeof(items));
	lt__enc21__page_layout__init(&po.layout);
	for (uint64_t i = 0; rc == LT_OK && i < n; i++)
	{
		uint64_t	pos = 0,
					len = 0;

		if (!lt_array_is_valid(a, (int64_t) i))
		{
			nulls = true;
			pos = (uint64_t) 1 << 16;	/* definition level 1 (the only one) */
		}
		else if ((len = (uint64_t) (a->offsets[i + 1] - a->offsets[i])) > 0)
		{
			rc = lt_writer_write_blob(w, a->data + a->offsets[i], len, &pos, err);
			wrote = true;
		}
		memcpy(desc + i * 16, &pos, 8);	/* little-endian, as the whole writer assumes */
		memcpy(desc + i * 16 + 8, &len, 8);
	}
	if (rc == LT_OK && wrote)
		rc = lt_writer_write_padded(w, (const uint8_t *) "", 0, err);	/* pages start aligned */
	if (rc == LT_OK)
		rc = mb_flat(&ar, desc, n, 16, false, &mv, err);
	if (rc == LT_OK)
	{
		mv.enc = enc_packed_u64_pair(&ar, mv.enc);
		s.depth = 1;
		s.path[0] = f->blob_desc;
		s.vis_from[0] = true;
		s.n_layers = 1;
		s.layers[0] = LT__ENC21__REP_DEF_LAYER__REPDEF_ALL_VALID_ITEM;
		s.n_levels = n;
		items.length = (int64_t) n;
		s.values = &items;
		s.values_borrowed = true;
		rc = page_miniblock(&ar, &s, &mv, NULL, NULL, 0, LT_FILE_V2_1, &po, err);
		if (rc == LT_EUNSUPPORTED)
			rc = lt_error_set(err, LT_EUNSUPPORTED, "blob descriptors over the mini-block limits");
	}
	if (rc == LT_OK)
	{
		Lt__Enc21__PageLayout *inner = lt_arena_alloc(&ar, sizeof(*inner));
		Lt__Enc21__BlobLayout *bl = lt_arena_alloc(&ar, sizeof(*bl));
		Lt__Enc21__RepDefLayer *layer = lt_arena_alloc(&ar, sizeof(*layer));

		if (!inner || !bl || !layer || ar.oom)
			rc = lt_nomem(err);
		else
		{
			*inner = po.layout;
			lt__enc21__blob_layout__init(bl);
			*layer = nulls ? LT__ENC21__REP_DEF_LAYER__REPDEF_NULLABLE_ITEM : LT__ENC21__REP_DEF_LAYER__REPDEF_ALL_VALID_ITEM;
			bl->inner_layout = inner;
			bl->n_layers = 1;
			bl->layers = layer;
			lt__enc21__page_layout__init(&po.layout);
			po.layout.layout_case = LT__ENC21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT;
			po.layout.blob_layout = bl;
			rc = emit_page(w, col, &po, n, row0, err);
		}
	}
	page_out_free(&po);
	mb_vals_free(&mv);
	lt_arena_free(&ar);
	lt_free(desc);
	return rc;
}

/*
 * A blob v2 column (storage 2.2), as Lance 12 writes it: each value stored where its size says
 * (lt_writer_place_blob: inline in this file, a packed or a dedicated sidecar), and one page of descriptors
 * {u8 kind, u64 position, u64 size, u32 blob_id, utf8 blob_uri} packed per row (variable packed struct) in a
 * full-zip layout, a NULL blob a null row; a page of NULLs only is a constant layout.  The rows arrive as
 * Lance's writer takes them, a struct {data, uri}; lt_fdw gives bytes only (an external URI is refused).
 */
#define BLOB_V2_ROW 25				/* the descriptor's fixed fields, and the URI's u32 length */

static enc_t *
enc_blob_v2_desc(lt_arena *a)
{
	static const uint64_t bits[4] = {8, 64, 64, 32};
	enc_t	   *e = enc_new(a);
	Lt__Enc21__VariablePackedStruct *vp = lt_arena_alloc(a, sizeof(*vp));
	Lt__Enc21__VariablePackedStruct__FieldEncoding **fp = lt_arena_alloc(a, 5 * sizeof(*fp));

	if (!e || !vp || !fp)
		return NULL;
	lt__enc21__variable_packed_struct__init(vp);
	for (int i = 0; i < 5; i++)
	{
		Lt__Enc21__VariablePackedStruct__FieldEncoding *fe = lt_arena_alloc(a, sizeof(*fe));

		if (!fe)
			return NULL;
		lt__enc21__variable_packed_struct__field_encoding__init(fe);
		if (i < 4)
		{
			fe->value = enc_flat(a, bits[i]);
			fe->layout_case = LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_VALUE;
			fe->bits_per_value = bits[i];
		}
		else
		{
			fe->value = enc_variable(a, 32);
			fe->layout_case = LT__ENC21__VARIABLE_PACKED_STRUCT__FIELD_ENCODING__LAYOUT_BITS_PER_LENGTH;
			fe->bits_per_length = 32;
		}
		fp[i] = fe;
	}
	vp->n_fields = 5;
	vp->fields = fp;
	e->compression_case = LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT;
	e->variable_packed_struct = vp;
	return e;
}

static lt_code
encode_blob_v2(lt_file_writer *w, int col, const lt_field *f, const lt_array *a, uint64_t row0, lt_error *err)
{
	uint64_t	n = (uint64_t) a->length;
	const lt_array *data = a->n_children == 2 ? a->children[0] : NULL;
	const lt_array *uri = a->n_children == 2 ? a->children[1] : NULL;
	lt_field	rowf;			/* the packed descriptor of a row, as the page's values */
	lt_array	rows;
	lt_arena	ar = {0};
	page_out	po;
	shred		s;
	lt_code		rc = LT_OK;

	if (!data || !uri || !data->offsets || !uri->offsets || a->field->type != LT_TYPE_STRUCT)
		return lt_error_set(err, LT_EINVALID, "blob v2 rows are not a struct {data, uri}");
	memset(&rowf, 0, sizeof(rowf));
	rowf.id = f->id;
	rowf.name = f->name;
	rowf.type = LT_TYPE_BINARY;
	rowf.nullable = true;
	memset(&rows, 0, sizeof(rows));
	rows.field = &rowf;
	rc = lt_array_reserve(&rows, a->length, err);
	if (rc == LT_OK)
		rc = lt_array_reserve_data(&rows, (int64_t) (n * BLOB_V2_ROW), err);
	rows.offsets[0] = 0;
	for (uint64_t i = 0; rc == LT_OK && i < n; i++)
	{
		lt_blob_place pl;
		uint8_t    *d = rows.data + rows.data_len;
		bool		valid = lt_array_is_valid(a, (int64_t) i) && lt_array_is_valid(data, (int64_t) i);

		if (lt_array_is_valid(a, (int64_t) i) && lt_array_is_valid(uri, (int64_t) i))
		{
			rc = lt_error_set(err, LT_EUNSUPPORTED, "writing a blob by its URI is not supported");
			break;
		}
		if (valid)
			rc = lt_writer_place_blob(w, &f->blob_sizes, data->data + data->offsets[i],
									  (uint64_t) (data->offsets[i + 1] - data->offsets[i]), &pl, err);
		if (rc != LT_OK)
			break;
		if (!valid)
		{
			rc = lt_array_ensure_validity(&rows, err);
			if (rc != LT_OK)
				break;
			rows.validity[i] = 0;
			rows.null_count++;
		}
		else
		{
			if (rows.validity)
				rows.validity[i] = 1;
			d[0] = pl.kind;
			lt_put64(d + 1, pl.position);
			lt_put64(d + 9, pl.size);
			lt_put32(d + 17, pl.blob_id);
			lt_put32(d + 21, 0);	/* no URI */
			rows.data_len += BLOB_V2_ROW;
		}
		rows.offsets[i + 1] = rows.data_len;
		rows.length++;
	}
	memset(&s, 0, sizeof(s));
	memset(&po, 0, sizeof(po));
	lt__enc21__page_layout__init(&po.layout);
	if (rc == LT_OK)
	{
		s.depth = 1;
		s.path[0] = &rowf;
		rc = shred_rows(&s, &rows, err);
	}
	if (rc == LT_OK && s.values->length == 0)
		rc = page_constant(&ar, &s, LT_FILE_V2_2, &po, err);	/* NULLs only */
	else if (rc == LT_OK)
	{
		rc = page_fullzip(&ar, &s, LT_FILE_V2_2, &po, err);
		if (rc == LT_OK && !(po.layout.full_zip_layout->value_compression = enc_blob_v2_desc(&ar)))
			rc = lt_nomem(err);
	}
	if (rc == LT_OK && ar.oom)
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = emit_page(w, col, &po, n, row0, err);
	page_out_free(&po);
	shred_free(&s);
	lt_arena_free(&ar);
	lt_free(rows.validity);
	lt_free(rows.offsets);
	lt_free(rows.data);
	return rc;
}

typedef struct enc_ctx
{
	lt_file_writer *w;
	const lt_array *top;
	uint64_t	row0;
	int			col;
	shred		s;
} enc_ctx;

static lt_code
walk(enc_ctx *c, const lt_field *f, int depth, lt_error *err)
{
	lt_code		rc;

	if (depth >= MAX_DEPTH)
		return lt_error_set(err, LT_EUNSUPPORTED, "field \"%s\" is nested more than %d levels deep", f->name, MAX_DEPTH);
	c->s.path[depth] = f;
	if (depth == 0 && f->blob != LT_BLOB_NONE)
	{
		rc = f->blob == LT_BLOB_LEGACY ? encode_blob_legacy(c->w, c->col, f, c->top, c->row0, err)
			: encode_blob_v2(c->w, c->col, f, c->top, c->row0, err);
		if (rc != LT_OK)
			return lt_error_prefix(err, "%s: column %d (blob field \"%s\")", lt_writer_path(c->w), c->col, f->name);
		c->col++;
		return LT_OK;
	}
	if (!lt_field_is_leaf(f))
	{
		for (int i = 0; i < f->n_children; i++)
		{
			c->s.child_idx[depth] = i;
			LT_TRY(walk(c, f->children[i], depth + 1, err));
		}
		return LT_OK;
	}
	{
		shred		s;

		memset(&s, 0, sizeof(s));
		s.depth = depth + 1;
		memcpy(s.path, c->s.path, sizeof(s.path));
		memcpy(s.child_idx, c->s.child_idx, sizeof(s.child_idx));
		rc = shred_rows(&s, c->top, err);
		if (rc == LT_OK)
			rc = encode_leaf(c->w, c->col, &s, (uint64_t) c->top->length, c->row0, err);
		shred_free(&s);
		if (rc != LT_OK)
			return lt_error_prefix(err, "%s: column %d (field \"%s\")", lt_writer_path(c->w), c->col, f->name);
		c->col++;
	}
	return LT_OK;
}

lt_code
lt_w21_encode(lt_file_writer *w, const lt_field *f, const lt_array *a, int col, uint64_t row0, lt_error *err)
{
	enc_ctx		c;

	memset(&c, 0, sizeof(c));
	c.w = w;
	c.top = a;
	c.row0 = row0;
	c.col = col;
	return walk(&c, f, 0, err);
}
