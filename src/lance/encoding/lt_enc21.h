/*
 * lt_enc21.h — internals of the Lance 2.1+ ("structural") page decoder.
 *
 * A page of one leaf column decodes into an lt21_page: its repetition and
 * definition levels (u16, one per level) and its visible items as an
 * lt_array of the leaf's type, whose validity already reflects the leaf
 * layer.  Mini-block pages without lists are instead decoded lazily, chunk
 * by chunk, straight into the caller's arrays as rows are read.  lt_repdef.c
 * turns row ranges of decoded pages into the nested arrays of a table field.
 *
 *   lt_page21.c    layout dispatch, ConstantLayout, page validation
 *   lt_dict21.c    dictionary indices -> values
 *   lt_miniblock.c MiniBlockLayout: chunks, levels, per-chunk value decoding
 *   lt_fullzip.c   FullZipLayout: control words, per-value decoding
 *   lt_values21.c  the compressive encodings shared by both layouts
 *   lt_repdef.c    levels -> validity / offsets of each layer
 *   lt_reader21.c  the lt_field_reader over a file's pages
 */
#ifndef LT_ENC21_H
#define LT_ENC21_H

#include <stdbool.h>
#include <stdint.h>

#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

struct Lt__Enc21__PageLayout;
struct Lt__Enc21__CompressiveEncoding;

/*
 * A packed struct owns one column for itself and its children: its rows are
 * stored whole (PackedStruct in mini-blocks, VariablePackedStruct in
 * full-zip).  Such a struct is a leaf of the page decoder.
 */
static inline bool lt21_is_packed(const lt_field *leaf) { return leaf->type == LT_TYPE_STRUCT && leaf->n_children > 0; }

/* Upper bounds on what untrusted metadata may make us allocate. */
#define LT21_MAX_PAGE_ITEMS ((uint64_t) 1 << 31)
#define LT21_MAX_LAYERS 64
#define LT21_MAX_PACKED_FIELDS 1024

/* Names the place of a failure: "path: column C page P: ...". */
typedef struct lt21_where
{
	const char *path;
	int			column;
	int			page;
} lt21_where;

#define LT21_CORRUPT(w, err, fmt, ...) \
	lt_corrupt((err), "%s: column %d page %d: " fmt, (w)->path, (w)->column, (w)->page, ##__VA_ARGS__)
#define LT21_UNSUPPORTED(w, err, fmt, ...) \
	lt_error_set((err), LT_EUNSUPPORTED, "%s: column %d page %d: " fmt, (w)->path, (w)->column, (w)->page, ##__VA_ARGS__)

/* RepDefLayer values (as in the protobuf enum). */
enum
{
	LT21_ALL_VALID_ITEM = 1,
	LT21_ALL_VALID_LIST = 2,
	LT21_NULLABLE_ITEM = 3,
	LT21_NULLABLE_LIST = 4,
	LT21_EMPTYABLE_LIST = 5,
	LT21_NULL_AND_EMPTY_LIST = 6
};

static inline bool lt21_layer_is_list(int l) { return l == LT21_ALL_VALID_LIST || l == LT21_NULLABLE_LIST || l == LT21_EMPTYABLE_LIST || l == LT21_NULL_AND_EMPTY_LIST; }

/* A growable buffer of u16 levels. */
typedef struct lt21_levels
{
	uint16_t   *v;
	uint64_t	n;
	uint64_t	cap;
} lt21_levels;

/* One decoded page of a leaf column. */
typedef struct lt21_page
{
	uint64_t	num_rows;
	uint64_t	num_levels;		/* entries of rep/def; == num_rows without lists */
	uint16_t   *rep;			/* NULL without list layers */
	uint16_t   *def;			/* NULL when no layer has nulls or empties */
	int			n_layers;
	uint8_t		layers[LT21_MAX_LAYERS];	/* innermost first */
	int			max_rep;		/* number of list layers */
	uint16_t	max_visible;	/* levels with def <= this consume an item */
	lt_array   *values;			/* the visible items, leaf type (lazy pages: one chunk's) */
	/* dictionary pages, until lt21_page_decode resolves them into values */
	uint32_t   *dict_idx;		/* one index per visible item */
	uint64_t	n_dict_idx;
	lt_array   *dict;
	int64_t		dict_maxlen;	/* longest dictionary string */
	uint64_t   *row_level;		/* [num_rows + 1] first level of each row; NULL without rep */
	uint64_t   *row_item;		/* [num_rows + 1] first item of each row; NULL without rep */
	/* storage behind rep, def and the row index, kept across pages */
	lt21_levels rep_store;
	lt21_levels def_store;
	uint64_t   *row_store;
	uint64_t	row_cap;
	uint64_t	idx_cap;		/* of dict_idx */
	/* lazy mini-block pages (no lists, buffers that outlive the page) */
	const struct Lt__Enc21__MiniBlockLayout *lazy_mb;	/* NULL when decoded eagerly */
	const uint8_t *lazy_data;	/* the chunks */
	uint64_t	lazy_items;
	uint64_t	n_chunks;
	uint64_t   *chunk_item;		/* [n_chunks + 1] first item of each chunk */
	uint64_t   *chunk_off;		/* [n_chunks + 1] byte offset of each chunk */
	uint64_t   *chunk_store;
	uint64_t	chunk_cap;
	int64_t		scratch_chunk;	/* chunk held in values, or -1 ... */
	uint64_t	scratch_lo,
				scratch_hi;		/* ... of which items [lo, hi) are decoded (strings: the others are empty) */
	uint64_t	scratch_base;	/* the chunk item in values' slot 0 (lo when a lone value came as one slot) */
	/* a window of a page (lt21_page_decode_window) */
	bool		win_head;		/* levels before the first row start continue an earlier row */
	bool		win_tail;		/* the last row start begins a row that goes on past the window */
	bool		win_open;		/* full-zip: as many levels as the bytes hold */
	struct Lt__Enc21__MiniBlockLayout *win_mb;	/* the window's layout (lazy pages point to it) */
	struct Lt__Enc21__FullZipLayout *win_fz;
	struct lt_fsst_cache *fsst_cache;	/* the FSST table of the last chunk, across chunks and pages */
	/* a window's page: the parsed table kept with the file's page entry (lt_reader21.c), not owned */
	struct lt_fsst_cache *fsst_shared;
} lt21_page;

/* A page's raw bytes: buffer i is bufs[i] of lens[i] bytes. */
typedef struct lt21_bufs
{
	int			n;
	const uint8_t *const *p;
	const uint64_t *len;
	bool		stable;			/* buffers and layout outlive the page: allows lazy decoding */
} lt21_bufs;

/*
 * Random access reads only the part of a page that holds some rows: the
 * chunks of a mini-block page (located through its chunk metadata and, with
 * lists, its repetition index), the byte range of rows of a full-zip page
 * (through its repetition index, or fixed strides).  Such a window decodes
 * as a page of its own rows, win->row0 .. win->row1 of the page.
 */
typedef struct lt21_chunks
{
	uint64_t	n;				/* chunks */
	uint64_t	num_rows;
	unsigned	word;			/* bytes per metadata word */
	int			dict_buf;		/* buffer of the dictionary, or -1 */
	int			index_buf;		/* buffer of the repetition index, or -1 */
	uint64_t   *off;			/* [n + 1] byte offset of each chunk in buffer 1 */
	uint64_t   *item;			/* [n + 1] first item of each chunk */
	uint64_t   *row;			/* [n + 1] first row starting in each chunk (at or after its start) */
	uint8_t    *pre;			/* [n] the chunk starts inside a row (lists only) */
	uint8_t    *trail;			/* [n] the chunk's last row goes on in the next one (lists only) */
	uint64_t	cap;			/* chunks allocated */
} lt21_chunks;

typedef struct lt21_window
{
	int			buf;			/* the buffer to slice next, or -1: read the whole page */
	uint64_t	off,
				len;			/* bytes of that buffer */
	uint64_t	row0,
				row1;			/* page rows the window decodes */
	/* mini-block */
	uint64_t	c0,
				c1;				/* chunks [c0, c1) */
	uint64_t	items;			/* their items */
	bool		head,
				tail;			/* see lt21_page.win_head / win_tail */
	/* full-zip */
	bool		need_index;		/* buf is the repetition index: fetch it and plan again */
	uint64_t	levels;			/* levels of the window, 0 when only its bytes bound them */
} lt21_window;

/* Buffers of a mini-block page: which are the dictionary and the repetition index (-1: none). */
void		lt21_mb_buffers(const struct Lt__Enc21__MiniBlockLayout *mb, int nbufs, int *dict_buf, int *index_buf);

/*
 * Build the chunk table of a mini-block page from its metadata (buffer 0)
 * and, for pages with lists, its repetition index.  lens are the page's
 * buffer sizes.  *usable is false when the page cannot be read by chunks.
 */
lt_code		lt21_mb_chunks(const lt21_where *w, const struct Lt__Enc21__MiniBlockLayout *mb, uint64_t num_rows,
						   int nbufs, const uint64_t *lens, const uint8_t *meta, const uint8_t *index,
						   lt21_chunks *ck, bool *usable, lt_error *err);
void		lt21_chunks_free(lt21_chunks *ck);

/* The chunks holding rows [r0, r1) (r0 < r1 <= num_rows): bytes off/len of buffer 1. */
void		lt21_mb_window(const lt21_chunks *ck, uint64_t r0, uint64_t r1, lt21_window *win);

/*
 * Plan the window of rows [r0, r1) of a full-zip page.  Without `index` a
 * page with a repetition index asks for the index entries it needs
 * (win->need_index, buffer 1); called again with those bytes it gives the
 * rows' bytes of buffer 0.  win->buf = -1 when the page has no way to
 * locate rows (read it whole).
 */
lt_code		lt21_fz_window(const lt21_where *w, const struct Lt__Enc21__FullZipLayout *fz, uint64_t num_rows,
						   int nbufs, const uint64_t *lens, const uint8_t *index, uint64_t r0, uint64_t r1,
						   lt21_window *win, lt_error *err);

/*
 * Decode a window as a page of win->row1 - win->row0 rows.  Mini-block:
 * bufs->p[0] is the whole chunk metadata, p[1] the window's chunk bytes,
 * p[2] the whole dictionary if any.  Full-zip: p[0] the window's bytes.
 */
lt_code		lt21_page_decode_window(const lt21_where *w, const lt_field *leaf,
									const struct Lt__Enc21__PageLayout *layout, const lt21_window *win,
									const lt21_bufs *bufs, lt21_page **out, lt_error *err);

/*
 * Decode one page of leaf column `leaf` (a field whose type has no 2.1
 * column of its own above it: primitive, string, FSL of primitive, packed
 * struct).  When *out holds a page of the same leaf, its buffers are reused
 * (and it is freed on failure); otherwise a new page is made.
 */
lt_code		lt21_page_decode(const lt21_where *w, const lt_field *leaf,
							 const struct Lt__Enc21__PageLayout *layout, uint64_t num_rows,
							 const lt21_bufs *bufs, lt21_page **out, lt_error *err);
void		lt21_page_free(lt21_page *pg);

/* Layout decoders (called by lt21_page_decode; pg has layers set). */
struct Lt__Enc21__MiniBlockLayout;
struct Lt__Enc21__FullZipLayout;
lt_code		lt21_miniblock_decode(const lt21_where *w, const lt_field *leaf,
								  const struct Lt__Enc21__MiniBlockLayout *mb,
								  const lt21_bufs *bufs, lt21_page *pg, lt_error *err);
lt_code		lt21_fullzip_decode(const lt21_where *w, const lt_field *leaf,
								const struct Lt__Enc21__FullZipLayout *fz,
								const lt21_bufs *bufs, lt21_page *pg, lt_error *err);

/* ---- compressive encodings (lt_values21.c) ---- */


/* Make room for n more levels. */
lt_code		lt21_levels_reserve(lt21_levels *lv, uint64_t n, lt_error *err);

/* Block-decode `n` u16 levels from a buffer and append them to lv. */
lt_code		lt21_decode_levels(const lt21_where *w, const struct Lt__Enc21__CompressiveEncoding *enc,
							   const uint8_t *p, uint64_t len, uint64_t n, lt21_levels *lv,
							   const char *what, lt_error *err);

/*
 * Decode `n` values of one mini-block chunk (its value buffers) and append
 * them to `dst`, an array of the leaf's type.  Dictionary indices are not
 * handled here (see lt21_decode_fixed).  fsst_cache (or NULL) keeps the
 * parsed FSST table from one chunk to the next.
 */
lt_code		lt21_mb_decode_values(const lt21_where *w, const struct Lt__Enc21__CompressiveEncoding *enc,
								  int nbuf, const uint8_t *const *bp, const uint64_t *bl,
								  uint64_t n, lt_array *dst, struct lt_fsst_cache *fsst_cache, lt_error *err);
/*
 * The same, wanting only values [lo, hi) of the n: variable-width values outside it may come out
 * empty (a point lookup decompresses one string of a chunk, not all of them), and a lone
 * fixed-width value (hi = lo + 1) of a flat, bitpacked or RLE chunk is appended as one slot, not n
 * (dst grows by 1: the caller tells by the length).
 */
lt_code		lt21_mb_decode_values_span(const lt21_where *w, const struct Lt__Enc21__CompressiveEncoding *enc,
									   int nbuf, const uint8_t *const *bp, const uint64_t *bl, uint64_t n,
									   uint64_t lo, uint64_t hi, lt_array *dst,
									   struct lt_fsst_cache *fsst_cache, lt_error *err);

/*
 * Decode `n` fixed-width values of `width` bytes (1 for bool bitmaps expanded
 * to bytes) from mini-block buffers into out (n * width bytes).
 */
lt_code		lt21_mb_decode_fixed(const lt21_where *w, const struct Lt__Enc21__CompressiveEncoding *enc,
								 int nbuf, const uint8_t *const *bp, const uint64_t *bl,
								 uint64_t n, unsigned width, uint8_t *out, lt_error *err);

/* Block-decode `n` values (e.g. a dictionary) from one buffer into dst (leaf type). */
lt_code		lt21_block_decode_values(const lt21_where *w, const struct Lt__Enc21__CompressiveEncoding *enc,
									 const uint8_t *p, uint64_t len, uint64_t n, lt_array *dst,
									 lt_error *err);

/* Leaf helpers. */
/* Fixed bytes per item of the leaf's values (bool: 1), or 0 for var-width. */
int			lt21_leaf_width(const lt_field *leaf);

struct Lt__Enc21__BufferCompression;
/* Decompress one general-compressed (lz4/zstd) buffer into a fresh lt_malloc'd one. */
lt_code		lt21_inflate(const lt21_where *w, const struct Lt__Enc21__BufferCompression *bc,
						 const uint8_t *p, uint64_t len, uint8_t **out, uint64_t *out_len,
						 lt_error *err);

/* ---- levels -> nested arrays (lt_repdef.c) ---- */

/* Append items [v0, v1) of a lazy mini-block page to dst (without the leaf's validity). */
lt_code		lt21_mb_append_items(const lt21_where *w, lt21_page *pg, uint64_t v0, uint64_t v1,
								 lt_array *dst, lt_error *err);

/*
 * Append dict[idx[i]] for n items to dst; an item whose def[i] != 0 may
 * carry any index and gets a zero/empty slot (def NULL: every item valid).
 */
lt_code		lt21_dict_gather(const lt21_where *w, const lt_array *dict, int64_t maxlen, const uint32_t *idx,
							 uint64_t n, const uint16_t *def, lt_array *dst, lt_error *err);
/* Before gathering: a dictionary's longest string, and copy slack after its data. */
lt_code		lt21_dict_prepare(lt_array *dict, int64_t *maxlen, lt_error *err);

/* Replace a whole page's dictionary indices by values (def as for lt21_dict_gather). */
lt_code		lt21_dict_resolve(const lt21_where *w, lt21_page *pg, const uint16_t *def, lt_error *err);

/*
 * Validate levels against layers, resolve a dictionary, apply the leaf
 * layer's validity to the items and build row_level / row_item.
 */
lt_code		lt21_page_index(const lt21_where *w, lt21_page *pg, lt_error *err);

/* Compute max_rep / max_visible from pg->layers. */
void		lt21_page_set_layers(lt21_page *pg, const int *layers, int n);

/*
 * Append rows [r0, r0 + n) of a decoded page to the arrays along a field
 * path: nodes[0] is the top-level array, nodes[depth - 1] the leaf's array.
 * Only nodes[first_owned .. depth - 1] are written: the others belong to an
 * earlier leaf under the same parent.
 */
lt_code		lt21_page_append(const lt21_where *w, lt21_page *pg, lt_array *const *nodes,
							 int depth, int first_owned, uint64_t r0, uint64_t n, lt_error *err);

#endif
