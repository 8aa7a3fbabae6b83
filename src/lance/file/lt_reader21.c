/*
 * lt_reader21.c — the field reader of 2.1 / 2.2 / 2.3 data files.
 *
 * In 2.1+ only leaves own columns (primitives, strings, fixed-size lists of
 * primitives, packed structs); struct, list and map parents are carried as
 * rep/def layers by each leaf below them, and so are fixed-size lists of
 * structs (2.2+), whose leaves hold one column row per list item.  A table
 * field therefore reads as the merge of its leaves, taken in pre-order: the
 * first present leaf under a parent writes the parent's slots (validity, list
 * offsets), later leaves only their own subtrees, and whatever no leaf wrote
 * (leaves missing from this file) is padded with nulls at the end.  Each leaf
 * keeps its current decoded page, so sequential reads decode every page once.
 */
#include "encoding/lt_enc21.h"
#include "encoding/lt_fsst.h"

#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bufpool.h"
#include "util/lt_bytes.h"
#include "file/lt_file.h"
#include "proto/lt_common.pb-c.h"
#include "proto/lt_enc21.pb-c.h"
#include "proto/lt_file2.pb-c.h"

#define PAGE_LAYOUT_URL "/lance.encodings21.PageLayout"

typedef struct leaf21
{
	const lt_field *path[LT21_MAX_LAYERS];	/* path[0] top ... path[depth - 1] leaf */
	int			child_idx[LT21_MAX_LAYERS]; /* index of path[i] among path[i - 1]'s children */
	int			depth;
	int			first_owned;
	uint64_t	mult;			/* column rows per table row: dims of fixed-size lists of structs above */
	int32_t		column;
	int			n_pages;
	uint64_t   *page_start;		/* [n_pages + 1] first row of each page */
	int			cur;			/* page held in pg, or -1 */
	lt21_page  *pg;
	uint8_t    *io;				/* the raw page buffers, reused across pages */
	uint64_t	io_cap;
	Lt__Enc21__PageLayout *layout;	/* of page lay_page; lazy pages point into it and io */
	int			lay_page;		/* page whose layout (and chunk table) is held, or -1 */
	uint64_t	win_lo,
				win_hi;			/* rows of page cur held in pg (a window, or the whole page) */
	/* random access (what a page's chunk table says is kept with the file: lt21_ra) */
	uint8_t    *aux;			/* full-zip index entries */
	uint64_t	aux_cap;
	int			win_page;		/* page that windows have fetched win_bytes of, or -1 */
	uint64_t	win_bytes;
	uint64_t	next;			/* row after the last read */
	uint64_t	stream;			/* rows read back to back up to next */
	int			counted;		/* last page counted in pages_decoded */
	/* a sparse take's windows fetched ahead (reader21_will_read): file ranges ascending, bytes in take */
	struct take_ent *takes;
	int			n_takes,
				takes_cap;
	uint8_t    *take;
	uint64_t	take_cap;
} leaf21;

/* One window fetched ahead: bytes [off, off + len) of the file, at take + pos. */
typedef struct take_ent
{
	uint64_t	off,
				len,
				pos;
} take_ent;

/* A leaf's buffer in the pool: the next file's reader of the column takes it back. */
#define POOL_KEY(lf, aux) ((uint64_t) (uint32_t) (lf)->column * 2 + ((aux) ? 1 : 0))

typedef struct reader21
{
	lt_field_reader base;
	int			n_leaves;
	leaf21	   *leaves;
	uint64_t	window_min;		/* pages smaller than this are read whole */
} reader21;

/*
 * Random access reads the part of a page that holds the requested rows
 * (its chunks, or its rows' bytes) when the page is big enough for that to
 * matter, the read is no part of a sequential stream, it needs at most a
 * quarter of the page, and earlier windows of the page have not fetched a
 * quarter of it yet (many scattered rows of one page: read it whole).
 */
#define WINDOW_MIN_BYTES ((uint64_t) 64 << 10)
#define SEQUENTIAL_ROWS 4096

/*
 * A sequential stream over a big full-zip page of fixed-width records (vectors: a 100,000-row page of
 * 128 float32 is 51 MB) reads it a slice of about this many bytes at a time instead of whole: the
 * slice's buffers stay small enough to be reused (no fresh pages to fault in per page, and the copies
 * stay in cache), and the reader's memory no longer grows with the page.
 */
#define STREAM_SLICE_BYTES ((uint64_t) 256 << 10)

static void
reader21_free(lt_field_reader *r)
{
	reader21   *rd = (reader21 *) r;

	for (int i = 0; i < rd->n_leaves; i++)
	{
		lt_free(rd->leaves[i].page_start);
		lt21_page_free(rd->leaves[i].pg);
		if (rd->base.file->bufpool)
		{
			lt_bufpool_put(rd->base.file->bufpool, POOL_KEY(&rd->leaves[i], false), rd->leaves[i].io,
						   rd->leaves[i].io_cap);
			lt_bufpool_put(rd->base.file->bufpool, POOL_KEY(&rd->leaves[i], true), rd->leaves[i].aux,
						   rd->leaves[i].aux_cap);
		}
		else
		{
			lt_free(rd->leaves[i].io);
			lt_free(rd->leaves[i].aux);
		}
		if (rd->leaves[i].layout)
			lt__enc21__page_layout__free_unpacked(rd->leaves[i].layout, lt_protobuf_allocator());
		lt_free(rd->leaves[i].takes);
		lt_free(rd->leaves[i].take);
	}
	lt_free(rd->leaves);
	lt_free(rd);
}

static lt_code unpack_layout(const lt21_where *wp, const Lt__Pb__ColumnPage *page, Lt__Enc21__PageLayout **out,
							 lt_error *err);

/* Make lf->layout the layout of page p. */
static lt_code
get_layout(reader21 *rd, leaf21 *lf, int p, Lt__Pb__ColumnPage **pagep, lt_error *err)
{
	lt_file    *f = rd->base.file;
	lt21_where	w = {f->path, lf->column, p};
	Lt__Pb__ColumnMetadata *cm;
	Lt__Pb__ColumnPage *page;

	LT_TRY(lt_file_column(f, (uint32_t) lf->column, &cm, err));
	page = cm->pages[p];
	*pagep = page;
	if (lf->lay_page == p && lf->layout)
		return LT_OK;
	lf->cur = -1;				/* the held page may point into the old layout */
	if (lf->layout)
		lt__enc21__page_layout__free_unpacked(lf->layout, lt_protobuf_allocator());
	lf->layout = NULL;
	lf->lay_page = -1;
	LT_TRY(unpack_layout(&w, page, &lf->layout, err));
	lf->lay_page = p;
	return LT_OK;
}

/* Parse the PageLayout of a page (the caller frees it). */
static lt_code
unpack_layout(const lt21_where *wp, const Lt__Pb__ColumnPage *page, Lt__Enc21__PageLayout **out, lt_error *err)
{
	lt21_where	w = *wp;
	Lt__Pb__PbAny *any;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (!page->encoding || page->encoding->location_case != LT__PB__ENCODING_REF__LOCATION_DIRECT ||
		!page->encoding->direct->has_encoding)
		return LT21_UNSUPPORTED(&w, err, "page encoding is not stored inline");
	any = lt__pb__pb_any__unpack(lt_protobuf_allocator(), page->encoding->direct->encoding.len,
								 page->encoding->direct->encoding.data);
	if (!any)
		return LT21_CORRUPT(&w, err, "page encoding does not parse");
	if (!any->type_url || strcmp(any->type_url, PAGE_LAYOUT_URL) != 0)
		rc = LT21_UNSUPPORTED(&w, err, "page encoding \"%s\"", any->type_url ? any->type_url : "");
	if (rc == LT_OK)
	{
		*out = lt__enc21__page_layout__unpack(lt_protobuf_allocator(), any->value.len, any->value.data);
		if (!*out)
			rc = LT21_CORRUPT(&w, err, "page layout does not parse");
	}
	lt__pb__pb_any__free_unpacked(any, lt_protobuf_allocator());
	if (rc == LT_OK && (page->n_buffer_offsets != page->n_buffer_sizes || page->n_buffer_offsets > 64))
		rc = LT21_CORRUPT(&w, err, "page has %zu buffer offsets and %zu sizes",
						  page->n_buffer_offsets, page->n_buffer_sizes);
	if (rc != LT_OK && *out)
	{
		lt__enc21__page_layout__free_unpacked(*out, lt_protobuf_allocator());
		*out = NULL;
	}
	return rc;
}

static void
count_page(reader21 *rd, leaf21 *lf, int p)
{
	if (lf->counted != p)
		rd->base.pages_decoded++;
	lf->counted = p;
}

static lt_code reserve(const lt_file *f, uint64_t key, uint8_t **buf, uint64_t *cap, uint64_t n, lt_error *err);

/* Fetch and decode page p of a leaf whole. */
static lt_code
load_page(reader21 *rd, leaf21 *lf, int p, lt_error *err)
{
	lt_file    *f = rd->base.file;
	lt21_where	w = {f->path, lf->column, p};
	Lt__Pb__ColumnPage *page;
	int			nb;
	uint8_t   **bufs = NULL;
	uint64_t   *lens = NULL;
	lt_range   *ranges = NULL;
	uint8_t   **dsts = NULL;
	int			nr = 0;
	uint64_t	total = 0,
				span_lo = UINT64_MAX,
				span_hi = 0;
	bool		span;
	lt21_bufs	b;
	lt_code		rc = LT_OK;

	lf->cur = -1;
	LT_TRY(get_layout(rd, lf, p, &page, err));
	nb = (int) page->n_buffer_offsets;
	if (rc == LT_OK)
	{
		bufs = lt_calloc(nb + 1, sizeof(uint8_t *));
		lens = lt_calloc(nb + 1, sizeof(uint64_t));
		ranges = lt_calloc(nb + 1, sizeof(lt_range));
		dsts = lt_calloc(nb + 1, sizeof(uint8_t *));
		if (!bufs || !lens || !ranges || !dsts)
			rc = lt_nomem(err);
	}
	/*
	 * One reused allocation holds every buffer.  A page's buffers are
	 * normally adjacent in the file: then one read of their whole span goes
	 * straight into it; otherwise each buffer is read to an 8-aligned slot.
	 */
	for (int i = 0; rc == LT_OK && i < nb; i++)
	{
		uint64_t	off = page->buffer_offsets[i],
					len = page->buffer_sizes[i],
					end;

		if (!lt_add_ok(off, len, &end) || end > f->size || !lt_add_ok(total, (len + 7) & ~(uint64_t) 7, &total))
		{
			rc = LT21_CORRUPT(&w, err, "buffer %d of %llu bytes at %llu runs past the end of the file (%llu)",
							  i, (unsigned long long) len, (unsigned long long) off,
							  (unsigned long long) f->size);
			break;
		}
		if (len > 0)
		{
			span_lo = off < span_lo ? off : span_lo;
			span_hi = end > span_hi ? end : span_hi;
		}
	}
	span = span_hi > span_lo && span_hi - span_lo <= total + 64 * (uint64_t) nb + 4096;
	if (span)
		total = span_hi - span_lo;
	if (rc == LT_OK && total + 8 > lf->io_cap)
		rc = reserve(f, POOL_KEY(lf, false), &lf->io, &lf->io_cap, total, err);
	total = 0;
	for (int i = 0; rc == LT_OK && i < nb; i++)
	{
		uint64_t	len = page->buffer_sizes[i];

		lens[i] = len;
		if (span)
			bufs[i] = len > 0 ? lf->io + (page->buffer_offsets[i] - span_lo) : lf->io;
		else
		{
			bufs[i] = lf->io + total;
			if (len > 0)
			{
				ranges[nr] = (lt_range) {page->buffer_offsets[i], len};
				dsts[nr] = bufs[i];
				nr++;
			}
			total += (len + 7) & ~(uint64_t) 7;
		}
	}
	if (rc == LT_OK && span)
	{
		ranges[0] = (lt_range) {span_lo, span_hi - span_lo};
		dsts[0] = lf->io;
		nr = 1;
	}
	if (rc == LT_OK && nr > 0)
		rc = lt_file_read_ranges(f, nr, ranges, dsts, err);
	if (rc == LT_OK)
	{
		b.n = nb;
		b.p = (const uint8_t *const *) bufs;
		b.len = lens;
		b.stable = true;
		rc = lt21_page_decode(&w, lf->path[lf->depth - 1], lf->layout,
							  lf->page_start[p + 1] - lf->page_start[p], &b, &lf->pg, err);
	}
	if (rc == LT_OK)
	{
		lf->cur = p;
		lf->win_lo = 0;
		lf->win_hi = lf->page_start[p + 1] - lf->page_start[p];
		count_page(rd, lf, p);
	}
	lt_free(bufs);
	lt_free(lens);
	lt_free(ranges);
	lt_free(dsts);
	return rc;
}

/* Make *buf hold n bytes (and 8 more), from the file's buffer pool when it has one (under key). */
static lt_code
reserve(const lt_file *f, uint64_t key, uint8_t **buf, uint64_t *cap, uint64_t n, lt_error *err)
{
	uint8_t    *p;

	if (n + 8 <= *cap)
		return LT_OK;
	if (f->bufpool)
		return lt_bufpool_grow(f->bufpool, key, buf, cap, n + 8) == 0 ? LT_OK : lt_nomem(err);
	p = lt_realloc(*buf, n + 8);
	if (!p)
		return lt_nomem(err);
	*buf = p;
	*cap = n + 8;
	return LT_OK;
}

/* Where bytes [off, off + len) of buffer i of a page are in the file. */
static lt_code
buffer_range(const lt_file *f, const lt21_where *w, const Lt__Pb__ColumnPage *page, int i, uint64_t off,
			 uint64_t len, lt_range *r, lt_error *err)
{
	uint64_t	end;

	if (!lt_add_ok(page->buffer_offsets[i], page->buffer_sizes[i], &end) || end > f->size)
		return LT21_CORRUPT(w, err, "buffer %d of %llu bytes at %llu runs past the end of the file (%llu)",
							i, (unsigned long long) page->buffer_sizes[i],
							(unsigned long long) page->buffer_offsets[i], (unsigned long long) f->size);
	if (off > page->buffer_sizes[i] || len > page->buffer_sizes[i] - off)
		return LT21_CORRUPT(w, err, "bytes %llu..+%llu are outside buffer %d of %llu bytes",
							(unsigned long long) off, (unsigned long long) len, i,
							(unsigned long long) page->buffer_sizes[i]);
	*r = (lt_range) {page->buffer_offsets[i] + off, len};
	return LT_OK;
}

/*
 * What random access learnt about page `page` of column `column` of a file: its layout and, for a
 * mini-block page, its chunk table with the buffers it needs whole (metadata, dictionary, repetition
 * index).  Kept with the file (lt_file.ra21) for as long as it is open, so that a file that a cache
 * keeps open (lt_file_cache.h) answers later point lookups with one read of the row's chunks.
 * Entries are never freed before the file: decoded windows point into them.
 */
typedef struct lt21_ra
{
	int32_t		column;
	int			page;
	Lt__Enc21__PageLayout *layout;
	bool		ck_usable;		/* mini-block with a chunk table random access can use */
	lt21_chunks ck;
	uint8_t    *aux;
	const uint8_t *aux_p[3];	/* metadata, dictionary, repetition index (in aux) */
	/* the page's FSST table once parsed (strings): a later lookup in the page does not parse it again */
	struct lt_fsst_cache *fsst;
	/*
	 * The chunks (bytes [hot_off, hot_off + hot_len) of the page's buffer 1) that the page's first window
	 * read: a later window within them is not read again (a LIMIT reads the same first chunks at every
	 * statement). Set once, never replaced: decoded windows point into it.
	 */
	uint8_t    *hot;
	uint64_t	hot_off,
				hot_len;
} lt21_ra;

/* Chunk bytes kept (lt21_ra.hot): at most this much a window, and this much in all per process. */
#define LT21_HOT_MAX ((uint64_t) 32 << 10)
#define LT21_HOT_BUDGET ((uint64_t) 16 << 20)
static uint64_t hot_total = 0;

/* Entries a file keeps at most; later pages are read whole. */
#define LT21_RA_MAX 4096

void
lt_reader21_file_free(lt_file *f)
{
	lt21_ra   **ra = f->ra21;

	for (int i = 0; i < f->n_ra21; i++)
	{
		lt21_chunks_free(&ra[i]->ck);
		if (ra[i]->layout)
			lt__enc21__page_layout__free_unpacked(ra[i]->layout, lt_protobuf_allocator());
		lt_free(ra[i]->aux);
		lt_free(ra[i]->fsst);
		if (ra[i]->hot)
		{
			hot_total -= ra[i]->hot_len;
			lt_free(ra[i]->hot);
		}
		lt_free(ra[i]);
	}
	lt_free(f->ra21);
	f->ra21 = NULL;
	f->n_ra21 = f->cap_ra21 = 0;
}

/* Read whole buffers `which` (-1 entries skipped) of a page into e->aux; e->aux_p[k] points to each. */
static lt_code
read_aux(lt_file *f, lt21_ra *e, const lt21_where *w, const Lt__Pb__ColumnPage *page, const int *which, int n,
		 lt_error *err)
{
	lt_range	r[3];
	uint8_t    *d[3];
	uint64_t	at[3],
				total = 0;
	int			nr = 0;

	for (int k = 0; k < n; k++)
	{
		at[k] = total;
		if (which[k] < 0)
			continue;
		LT_TRY(buffer_range(f, w, page, which[k], 0, page->buffer_sizes[which[k]], &r[k], err));
		total += (page->buffer_sizes[which[k]] + 7) & ~(uint64_t) 7;
	}
	if (!(e->aux = lt_malloc(total + 8)))
		return lt_nomem(err);
	for (int k = 0; k < n; k++)
	{
		e->aux_p[k] = e->aux + at[k];
		if (which[k] >= 0 && r[k].length > 0)
		{
			r[nr] = r[k];
			d[nr++] = e->aux + at[k];
		}
	}
	return nr > 0 ? lt_file_read_ranges(f, nr, r, d, err) : LT_OK;
}

static lt_code
ra_build(lt_file *f, const lt21_where *w, const Lt__Pb__ColumnPage *page, uint64_t rows, lt21_ra *e, lt_error *err)
{
	int			nb = (int) page->n_buffer_offsets;

	LT_TRY(unpack_layout(w, page, &e->layout, err));
	if (e->layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT && nb >= 1)
	{
		const Lt__Enc21__MiniBlockLayout *mb = e->layout->mini_block_layout;
		int			which[3] = {0, -1, -1};
		uint64_t	lens[64];

		lt21_mb_buffers(mb, nb, &which[1], &which[2]);
		LT_TRY(read_aux(f, e, w, page, which, 3, err));
		for (int i = 0; i < nb; i++)
			lens[i] = page->buffer_sizes[i];
		LT_TRY(lt21_mb_chunks(w, mb, rows, nb, lens, e->aux_p[0], e->aux_p[2], &e->ck, &e->ck_usable, err));
	}
	return LT_OK;
}

/* The random-access entry of page p of a leaf's column (built on first use), or NULL past LT21_RA_MAX. */
static lt_code
ra_get(lt_file *f, const lt21_where *w, const Lt__Pb__ColumnPage *page, uint64_t rows, lt21_ra **out,
	   lt_error *err)
{
	lt21_ra    *e;
	lt_allocator saved;
	lt_code		rc;

	*out = NULL;
	for (int i = f->n_ra21 - 1; i >= 0; i--)
		if (f->ra21[i]->column == w->column && f->ra21[i]->page == w->page)
		{
			*out = f->ra21[i];
			return LT_OK;
		}
	if (f->n_ra21 >= LT21_RA_MAX)
		return LT_OK;
	/* it lives as long as the file: allocated with the file's owner (a cache) */
	saved = lt_alloc_swap(f->owner);
	rc = LT_OK;
	if (f->n_ra21 == f->cap_ra21)
	{
		int			cap = f->cap_ra21 ? f->cap_ra21 * 2 : 8;
		lt21_ra   **p = lt_realloc(f->ra21, (size_t) cap * sizeof(*p));

		if (p)
		{
			f->ra21 = p;
			f->cap_ra21 = cap;
		}
		else
			rc = lt_nomem(err);
	}
	e = rc == LT_OK ? lt_calloc(1, sizeof(*e)) : NULL;
	if (rc == LT_OK && !e)
		rc = lt_nomem(err);
	if (rc == LT_OK)
	{
		e->column = w->column;
		e->page = w->page;
		rc = ra_build(f, w, page, rows, e, err);
		if (rc == LT_OK)
		{
			f->ra21[f->n_ra21++] = e;
			*out = e;
		}
		else
		{
			lt21_chunks_free(&e->ck);
			if (e->layout)
				lt__enc21__page_layout__free_unpacked(e->layout, lt_protobuf_allocator());
			lt_free(e->aux);
			lt_free(e);
		}
	}
	lt_alloc_restore(&saved);
	return rc;
}

/* The bytes of file range r when a sparse take fetched them ahead (reader21_will_read), else NULL. */
static const uint8_t *
taken(const leaf21 *lf, const lt_range *r)
{
	int			lo = 0,
				hi = lf->n_takes;

	/* the last entry starting at or before r */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (lf->takes[mid].off <= r->offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	{
		const take_ent *t = &lf->takes[lo - 1];

		if (r->offset + r->length > t->off + t->len)
			return NULL;
		return lf->take + t->pos + (r->offset - t->off);
	}
}

/*
 * Try to fetch and decode only the part of page p (of `rows` rows) that
 * holds its rows [r0, r1).  *done is false when the page should be read
 * whole instead.
 */
static lt_code
load_window(reader21 *rd, leaf21 *lf, int p, uint64_t r0, uint64_t r1, bool stream, bool *done, lt_error *err)
{
	lt_file    *f = rd->base.file;
	lt21_where	w = {f->path, lf->column, p};
	Lt__Pb__ColumnMetadata *cm;
	Lt__Pb__ColumnPage *page;
	uint64_t	rows = lf->page_start[p + 1] - lf->page_start[p];
	uint64_t	bytes = 0;
	int			nb;
	lt21_ra    *e;
	lt21_window win;
	const uint8_t *bp[3];
	uint64_t	bl[3];
	lt21_bufs	b;
	lt_range	r;
	lt_code		rc;

	*done = false;
	LT_TRY(lt_file_column(f, (uint32_t) lf->column, &cm, err));
	page = cm->pages[p];
	nb = (int) page->n_buffer_offsets;
	/* a page whose offsets and sizes disagree is the whole-page path's to report (page_layout) */
	if (page->n_buffer_sizes != page->n_buffer_offsets)
		return LT_OK;
	for (int i = 0; i < nb; i++)
		bytes += page->buffer_sizes[i] > rd->window_min ? rd->window_min : page->buffer_sizes[i];
	/*
	 * A small page is read whole (one request), unless few of its rows are wanted: decoding a whole
	 * page (an RLE page of a million dates) for one row costs more than the window's chunk.
	 */
	if (!stream && ((bytes < rd->window_min && (r1 - r0) * 64 > rows) || nb < 1))
		return LT_OK;
	if (stream && (nb < 1 || nb > 64 || (nb >= 2 && page->buffer_sizes[1] > 0) ||
				   page->buffer_sizes[0] < 8 * STREAM_SLICE_BYTES))
		return LT_OK;
	LT_TRY(ra_get(f, &w, page, rows, &e, err));
	if (!e)
		return LT_OK;
	if (stream)
	{
		/* fixed-width records only (no repetition index): the slice is rows [r0, r0 + records per slice) */
		uint64_t	per_row = page->buffer_sizes[0] / (rows ? rows : 1);
		uint64_t	n = per_row ? STREAM_SLICE_BYTES / per_row : rows;

		if (e->layout->layout_case != LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT)
			return LT_OK;
		if (r1 - r0 < n)
			r1 = r0 + n < rows ? r0 + n : rows;
	}
	if (lf->win_page != p)
	{
		lf->win_page = p;
		lf->win_bytes = 0;
	}
	/* many rows of one page: once windows have fetched a quarter of its rows' bytes, read it whole */
	if (!stream && lf->win_bytes > page->buffer_sizes[e->layout->layout_case ==
										   LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT && nb > 1] / 4)
		return LT_OK;
	lf->cur = -1;
	if (e->layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT)
	{
		if (!e->ck_usable || e->ck.n == 0)
			return LT_OK;
		lt21_mb_window(&e->ck, r0, r1, &win);
		if ((win.c1 - win.c0) * 4 > e->ck.n)
			return LT_OK;
		LT_TRY(buffer_range(f, &w, page, 1, win.off, win.len, &r, err));
		if (e->hot && win.off >= e->hot_off && win.off + win.len <= e->hot_off + e->hot_len)
			bp[1] = e->hot + (win.off - e->hot_off);
		else
		{
			LT_TRY(reserve(f, POOL_KEY(lf, false), &lf->io, &lf->io_cap, win.len, err));
			if (win.len > 0)
				LT_TRY(lt_file_read_ranges(f, 1, &r, &lf->io, err));
			bp[1] = lf->io;
			if (!e->hot && win.len > 0 && win.len <= LT21_HOT_MAX && hot_total + win.len <= LT21_HOT_BUDGET)
			{
				/* it lives as long as the file, as the entry does (8 bytes of slack, as reserve gives) */
				lt_allocator saved = lt_alloc_swap(f->owner);

				if ((e->hot = lt_malloc(win.len + 8)) != NULL)
				{
					memcpy(e->hot, lf->io, win.len);
					memset(e->hot + win.len, 0, 8);
					e->hot_off = win.off;
					e->hot_len = win.len;
					hot_total += win.len;
				}
				lt_alloc_restore(&saved);
			}
		}
		lf->win_bytes += win.len;
		bp[0] = e->aux_p[0];
		bl[0] = page->buffer_sizes[0];
		bl[1] = win.len;
		b.n = 2;
		if (e->ck.dict_buf >= 0)
		{
			bp[2] = e->aux_p[1];
			bl[2] = page->buffer_sizes[e->ck.dict_buf];
			b.n = 3;
		}
	}
	else if (e->layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT)
	{
		const Lt__Enc21__FullZipLayout *fz = e->layout->full_zip_layout;
		uint64_t	lens[64];

		for (int i = 0; i < nb; i++)
			lens[i] = page->buffer_sizes[i];
		LT_TRY(lt21_fz_window(&w, fz, rows, nb, lens, NULL, r0, r1, &win, err));
		if (win.need_index)
		{
			LT_TRY(buffer_range(f, &w, page, 1, win.off, win.len, &r, err));
			LT_TRY(reserve(f, POOL_KEY(lf, true), &lf->aux, &lf->aux_cap, win.len, err));
			LT_TRY(lt_file_read_ranges(f, 1, &r, &lf->aux, err));
			LT_TRY(lt21_fz_window(&w, fz, rows, nb, lens, lf->aux, r0, r1, &win, err));
		}
		if (win.buf != 0 || (!stream && win.len > lens[0] / 4))
			return LT_OK;
		LT_TRY(buffer_range(f, &w, page, 0, win.off, win.len, &r, err));
		if ((bp[0] = taken(lf, &r)) == NULL)
		{
			LT_TRY(reserve(f, POOL_KEY(lf, false), &lf->io, &lf->io_cap, win.len, err));
			if (win.len > 0)
				LT_TRY(lt_file_read_ranges(f, 1, &r, &lf->io, err));
			bp[0] = lf->io;
		}
		lf->win_bytes += win.len;
		bl[0] = win.len;
		b.n = 1;
	}
	else
		return LT_OK;
	if (win.row0 > r0 || win.row1 <= r0)
		return LT21_CORRUPT(&w, err, "window of rows %llu..%llu misses row %llu",
							(unsigned long long) win.row0, (unsigned long long) win.row1,
							(unsigned long long) r0);
	b.p = bp;
	b.len = bl;
	b.stable = true;
	rc = lt21_page_decode_window(&w, lf->path[lf->depth - 1], e->layout, &win, &b, &lf->pg, err);
	if (rc != LT_OK)
		return rc;
	if (e->layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT &&
		lt_type_is_var_width(lf->path[lf->depth - 1]->type))
	{
		if (!e->fsst)
		{
			/* it lives as long as the file, as the entry does */
			lt_allocator saved = lt_alloc_swap(f->owner);

			if ((e->fsst = lt_malloc(sizeof(*e->fsst))) != NULL)
				e->fsst->valid = false;
			lt_alloc_restore(&saved);
		}
		lf->pg->fsst_shared = e->fsst;
	}
	lf->cur = p;
	lf->win_lo = win.row0;
	lf->win_hi = win.row1;
	count_page(rd, lf, p);
	*done = true;
	return LT_OK;
}

/*
 * Whether the sample of rows being read (row_gap apart) leaves more bytes of page p between two of
 * them than a request of the store costs (a quarter of its coalescing gap: 16 KiB locally): then each
 * row is fetched alone.  One row in 100 of a page of 128-d float32 vectors: 51 KB apart, where reading
 * the page through (51 MB) costs 100 times the bytes of the rows wanted.  At most SPARSE_ROW_BYTES
 * apart: a remote store's gap (S3: 1 MiB) would stream such a page through in slices, a request each,
 * one after the other, where a batch's rows are fetched together (reader21_will_read: merged where
 * closer than its take gap, in parallel).
 */
#define SPARSE_ROW_BYTES ((uint64_t) 16 << 10)

static bool
sparse_sample(reader21 *rd, leaf21 *lf, int p)
{
	lt_file    *f = rd->base.file;
	Lt__Pb__ColumnMetadata *cm;
	lt_error	ignored;
	uint64_t	rows = lf->page_start[p + 1] - lf->page_start[p],
				bytes = 0,
				gap;

	if (rd->base.row_gap <= 1 || rows == 0 || lf->mult != 1)
		return false;
	/* a column whose metadata does not parse is the page path's to report */
	if (lt_file_column(f, (uint32_t) lf->column, &cm, &ignored) != LT_OK || p >= (int) cm->n_pages)
		return false;
	for (size_t i = 0; i < cm->pages[p]->n_buffer_sizes; i++)
		bytes += cm->pages[p]->buffer_sizes[i];
	gap = f->rf->store->coalesce_gap / 4;
	if (gap > SPARSE_ROW_BYTES)
		gap = SPARSE_ROW_BYTES;
	return bytes / rows * rd->base.row_gap >= (gap ? gap : 1);
}

/* Load the part of page p holding its rows [r0, r1), or the whole page. */
static lt_code
load(reader21 *rd, leaf21 *lf, int p, uint64_t r0, uint64_t r1, lt_error *err)
{
	bool		done = false;
	bool		whole = rd->base.whole_pages;
	bool		sequential;

	/* rows far apart in bytes: a window each, never a stream through the page nor the page whole */
	if (rd->base.row_gap > 1 && sparse_sample(rd, lf, p))
		whole = false, sequential = false;
	else
		sequential = whole ||
			(!rd->base.independent_reads && (lf->stream >= SEQUENTIAL_ROWS || r1 - r0 >= SEQUENTIAL_ROWS));
	if (whole && lf->mult == 1)
	{
		Lt__Pb__ColumnPage *page;

		/* a dense sample of a full-zip page: streamed through in slices, as a scan reads it, not whole */
		LT_TRY(get_layout(rd, lf, p, &page, err));
		if (lf->layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT)
			whole = false;
	}
	if (lf->mult == 1 && (!sequential || !whole))
	{
		lt_code		rc = load_window(rd, lf, p, r0, r1, sequential, &done, err);

		/*
		 * A window that its index places wrongly (levels that disagree with
		 * the repetition index) is no reason to fail: the whole page decides.
		 */
		if (rc == LT_ECORRUPT)
			done = false;
		else if (rc != LT_OK)
			return rc;
	}
	return done ? LT_OK : load_page(rd, lf, p, err);
}

/* The page of a leaf holding `row`. */
static int
find_page(const leaf21 *lf, uint64_t row)
{
	int			lo = 0,
				hi = lf->n_pages - 1;

	if (lf->cur >= 0 && row >= lf->page_start[lf->cur] && row < lf->page_start[lf->cur + 1])
		return lf->cur;
	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;

		if (lf->page_start[mid] <= row)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Pad what no leaf wrote: struct children to the struct's length, list items to the last offset. */
static lt_code
pad_missing(const char *path, lt_array *a, lt_error *err)
{
	lt_type_id	t = a->field->type;
	int64_t		want;

	if (t == LT_TYPE_STRUCT)
		want = a->length;
	else if (t == LT_TYPE_LIST || t == LT_TYPE_LARGE_LIST || t == LT_TYPE_MAP)
		want = a->offsets ? a->offsets[a->length] : 0;
	else if (t == LT_TYPE_FIXED_LIST)
		want = a->length * (int64_t) a->field->fixed_size;
	else
		return LT_OK;
	for (int i = 0; i < a->n_children; i++)
	{
		lt_array   *c = a->children[i];

		if (!c)
			continue;
		if (c->length > want)
			return lt_corrupt(err, "%s: field \"%s\": %lld values under %lld slots (its columns disagree)",
							  path, c->field->name, (long long) c->length, (long long) want);
		if (c->length < want)
			LT_TRY(lt_array_append_nulls(c, want - c->length, err));
		LT_TRY(pad_missing(path, c, err));
	}
	return LT_OK;
}

static lt_code
reader21_read(lt_field_reader *r, uint64_t start, uint64_t n, lt_array *dst, lt_error *err)
{
	reader21   *rd = (reader21 *) r;

	for (int i = 0; i < rd->n_leaves; i++)
	{
		leaf21	   *lf = &rd->leaves[i];
		lt_array   *nodes[LT21_MAX_LAYERS];
		uint64_t	row = start * lf->mult,
					end = (start + n) * lf->mult;

		if (lf->column < 0)
			continue;
		nodes[0] = dst;
		for (int d = 1; d < lf->depth; d++)
		{
			lt_array   *parent = nodes[d - 1];

			if (lf->child_idx[d] >= parent->n_children || !parent->children[lf->child_idx[d]])
				return lt_error_set(err, LT_EINVALID, "%s: array for field \"%s\" lacks child %d",
									r->file->path, parent->field->name, lf->child_idx[d]);
			nodes[d] = parent->children[lf->child_idx[d]];
		}
		/* rows skipped since the last read (deleted, filtered out) do not end a stream */
		lf->stream = row >= lf->next && row - lf->next < SEQUENTIAL_ROWS ? lf->stream + (end - row) : end - row;
		lf->next = end;
		while (row < end)
		{
			int			p = find_page(lf, row);
			uint64_t	ps = lf->page_start[p];
			uint64_t	pend = lf->page_start[p + 1];
			uint64_t	stop = end < pend ? end : pend;
			uint64_t	take;
			lt21_where	w = {r->file->path, lf->column, p};

			if (lf->cur != p || row - ps < lf->win_lo || row - ps >= lf->win_hi)
				LT_TRY(load(rd, lf, p, row - ps, stop - ps, err));
			take = (stop < ps + lf->win_hi ? stop : ps + lf->win_hi) - row;
			LT_TRY(lt21_page_append(&w, lf->pg, nodes, lf->depth, lf->first_owned,
									row - ps - lf->win_lo, take, err));
			row += take;
		}
	}
	return pad_missing(r->file->path, dst, err);
}

static int
cmp_take(const void *a, const void *b)
{
	const take_ent *x = a,
			   *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * The window of page p's rows [r0, r1) that load_window will read, when a sparse take fetches it ahead:
 * full-zip pages of fixed-width records (vectors) sampled sparsely.  false: leave it to the read (which
 * reports what is wrong with the page).
 */
static bool
take_window(reader21 *rd, leaf21 *lf, int p, uint64_t r0, uint64_t r1, lt_range *out)
{
	lt_file    *f = rd->base.file;
	lt21_where	w = {f->path, lf->column, p};
	Lt__Pb__ColumnMetadata *cm;
	Lt__Pb__ColumnPage *page;
	uint64_t	rows = lf->page_start[p + 1] - lf->page_start[p];
	uint64_t	lens[64];
	int			nb;
	lt21_window win;
	lt_error	ignored;

	if (!sparse_sample(rd, lf, p) || lt_file_column(f, (uint32_t) lf->column, &cm, &ignored) != LT_OK)
		return false;
	page = cm->pages[p];
	nb = (int) page->n_buffer_offsets;
	if (nb < 1 || nb > 64 || page->n_buffer_sizes != page->n_buffer_offsets)
		return false;
	/* the leaf's layout (no I/O; a mini-block page's chunk table is load_window's to read, if it wants it) */
	if (get_layout(rd, lf, p, &page, &ignored) != LT_OK ||
		lf->layout->layout_case != LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT)
		return false;
	for (int i = 0; i < nb; i++)
		lens[i] = page->buffer_sizes[i];
	/* as load_window decides: no repetition index to read first, a window of buffer 0 of under a quarter */
	if (lt21_fz_window(&w, lf->layout->full_zip_layout, rows, nb, lens, NULL, r0, r1, &win, &ignored) != LT_OK ||
		win.need_index || win.buf != 0 || win.len == 0 || win.len > lens[0] / 4)
		return false;
	return buffer_range(f, &w, page, 0, win.off, win.len, out, &ignored) == LT_OK;
}

/*
 * A batch of a sparse take: the windows its rows need, of every page, fetched in one call (merged where
 * closer than the store's take gap, the merged requests run in parallel by a remote store), where
 * load_window would read them one request each.  One row in 100 of 1M 128-d vectors on S3: 10,000
 * requests become a few per batch.
 */
static lt_code
reader21_will_read(lt_field_reader *r, const lt_row_run *runs, size_t n, lt_error *err)
{
	reader21   *rd = (reader21 *) r;

	for (int i = 0; i < rd->n_leaves; i++)
	{
		leaf21	   *lf = &rd->leaves[i];
		uint64_t	total = 0;
		lt_range   *ranges;
		uint8_t   **dsts;
		lt_code		rc = LT_OK;
		int			nr = 0;

		/* a page decoded from the last batch's bytes points into them */
		if (lf->n_takes > 0)
			lf->cur = -1;
		lf->n_takes = 0;
		if (lf->column < 0 || lf->mult != 1 || rd->base.row_gap <= 1)
			continue;
		for (size_t k = 0; k < n; k++)
		{
			uint64_t	row = runs[k].start,
						end = runs[k].start + runs[k].len;

			/* split at page ends, as reader21_read asks for them */
			while (row < end)
			{
				int			p = find_page(lf, row);
				uint64_t	ps = lf->page_start[p],
							stop = end < lf->page_start[p + 1] ? end : lf->page_start[p + 1];
				lt_range	w;

				if (take_window(rd, lf, p, row - ps, stop - ps, &w))
				{
					if (lf->n_takes == lf->takes_cap)
					{
						int			cap = lf->takes_cap ? lf->takes_cap * 2 : 64;
						take_ent   *t = lt_realloc(lf->takes, (size_t) cap * sizeof(take_ent));

						if (!t)
							return lt_nomem(err);
						lf->takes = t;
						lf->takes_cap = cap;
					}
					lf->takes[lf->n_takes++] = (take_ent) {w.offset, w.length, total};
					total += w.length;
				}
				row = stop;
			}
		}
		if (lf->n_takes == 0)
			continue;
		qsort(lf->takes, lf->n_takes, sizeof(take_ent), cmp_take);
		if (total > lf->take_cap)
		{
			uint8_t    *t = lt_realloc(lf->take, total);

			if (!t)
			{
				lf->n_takes = 0;
				return lt_nomem(err);
			}
			lf->take = t;
			lf->take_cap = total;
		}
		ranges = lt_malloc((size_t) lf->n_takes * sizeof(lt_range));
		dsts = lt_malloc((size_t) lf->n_takes * sizeof(uint8_t *));
		if (!ranges || !dsts)
			rc = lt_nomem(err);
		for (int k = 0; rc == LT_OK && k < lf->n_takes; k++)
		{
			ranges[nr] = (lt_range) {lf->takes[k].off, lf->takes[k].len};
			dsts[nr++] = lf->take + lf->takes[k].pos;
		}
		if (rc == LT_OK)
			rc = lt_file_read_ranges_gap(rd->base.file, nr, ranges, dsts,
										 lt_store_take_gap(rd->base.file->rf->store), err);
		lt_free(ranges);
		lt_free(dsts);
		if (rc != LT_OK)
		{
			lf->n_takes = 0;
			return rc;
		}
	}
	return LT_OK;
}

static const lt_field_reader_ops reader21_ops = {reader21_read, reader21_free, reader21_will_read};

/*
 * Collect the leaves under `f` in pre-order.  A struct that owns a column of
 * its own (a packed struct) is a leaf: its children are stored inside it.
 */
static lt_code
collect_leaves(lt_file *file, const lt_column_map *map, const lt_field *f, leaf21 *cur, int depth,
			   leaf21 **leaves, int *n, int *cap, lt_error *err)
{
	bool		packed,
				fsl_nested;
	uint64_t	mult = cur->mult;

	if (depth >= LT21_MAX_LAYERS)
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: field \"%s\" is nested too deeply", file->path, f->name);
	cur->path[depth] = f;
	if (f->type == LT_TYPE_FIXED_LIST && f->n_children != 1)
		return lt_corrupt(err, "%s: fixed-size list \"%s\" has %d children", file->path, f->name, f->n_children);
	/*
	 * A fixed-size list of structs (2.2+) is no column: its leaves below
	 * carry it as an item layer, each row repeated for every item.
	 */
	fsl_nested = f->type == LT_TYPE_FIXED_LIST && !lt_field_is_leaf(f->children[0]);
	if (fsl_nested && !lt_mul_ok(cur->mult, (uint64_t) f->fixed_size, &cur->mult))
		return lt_corrupt(err, "%s: fixed-size lists under \"%s\" are too large", file->path, f->name);
	packed = lt21_is_packed(f) && map && lt_column_map_find(map, f->id) >= 0;
	if ((lt_field_is_leaf(f) && !fsl_nested) || packed)
	{
		if (*n == *cap)
		{
			int			nc = *cap ? *cap * 2 : 8;
			leaf21	   *nl = lt_realloc(*leaves, nc * sizeof(leaf21));

			if (!nl)
				return lt_nomem(err);
			*leaves = nl;
			*cap = nc;
		}
		(*leaves)[*n] = *cur;
		(*leaves)[*n].depth = depth + 1;
		(*n)++;
		return LT_OK;
	}
	/* a map is a list of its entries struct (2.2+) */
	if ((f->type == LT_TYPE_LIST || f->type == LT_TYPE_LARGE_LIST || f->type == LT_TYPE_MAP) && f->n_children != 1)
		return lt_corrupt(err, "%s: list field \"%s\" has %d children", file->path, f->name, f->n_children);
	for (int i = 0; i < f->n_children; i++)
	{
		cur->child_idx[depth + 1] = i;
		LT_TRY(collect_leaves(file, map, f->children[i], cur, depth + 1, leaves, n, cap, err));
	}
	cur->mult = mult;
	return LT_OK;
}

static lt_code
setup_leaf(lt_file *f, leaf21 *lf, lt_error *err)
{
	Lt__Pb__ColumnMetadata *cm;
	uint64_t	row = 0,
				want;

	lf->cur = -1;
	lf->lay_page = -1;
	lf->counted = -1;
	lf->win_page = -1;
	lf->next = UINT64_MAX;
	if (lf->column >= 0 && (uint32_t) lf->column >= f->num_columns)
		return lt_corrupt(err, "%s: field \"%s\" maps to column %d, the file has %u",
						  f->path, lf->path[lf->depth - 1]->name, lf->column, f->num_columns);
	if (lf->column < 0)
		return LT_OK;
	LT_TRY(lt_file_column(f, (uint32_t) lf->column, &cm, err));
	if (cm->n_pages > (1u << 24))
		return lt_corrupt(err, "%s: column %d has %zu pages", f->path, lf->column, cm->n_pages);
	lf->n_pages = (int) cm->n_pages;
	lf->page_start = lt_malloc((cm->n_pages + 1) * sizeof(uint64_t));
	if (!lf->page_start)
		return lt_nomem(err);
	for (size_t p = 0; p < cm->n_pages; p++)
	{
		lf->page_start[p] = row;
		if (!lt_add_ok(row, cm->pages[p]->length, &row))
			return lt_corrupt(err, "%s: column %d page %zu: row count overflows", f->path, lf->column, p);
	}
	lf->page_start[cm->n_pages] = row;
	/* under fixed-size lists of structs a column counts their items */
	if (!lt_mul_ok(f->num_rows, lf->mult, &want) || row != want)
		return lt_corrupt(err, "%s: column %d has %llu rows in its pages, the file %llu (x %llu)",
						  f->path, lf->column, (unsigned long long) row, (unsigned long long) f->num_rows,
						  (unsigned long long) lf->mult);
	for (int p = 0; lf->mult > 1 && p < lf->n_pages; p++)
		if (lf->page_start[p] % lf->mult != 0)
			return lt_corrupt(err, "%s: column %d page %d starts inside a fixed-size list (row %llu)",
							  f->path, lf->column, p, (unsigned long long) lf->page_start[p]);
	return LT_OK;
}

lt_code
lt_reader21_open(lt_file *f, const lt_field *field, const lt_column_map *map,
				 lt_field_reader **out, lt_error *err)
{
	reader21   *rd;
	leaf21		cur;
	int			cap = 0,
				present = 0;
	lt_code		rc;

	*out = NULL;
	rd = lt_calloc(1, sizeof(reader21));
	if (!rd)
		return lt_nomem(err);
	rd->base.ops = &reader21_ops;
	rd->base.file = f;
	rd->base.field = field;
	rd->base.num_rows = f->num_rows;
	/* a top-level string is one leaf: its chunks decode into dst, other pages append slices */
	rd->base.room_ok = field->type == LT_TYPE_UTF8 || field->type == LT_TYPE_LARGE_UTF8 ||
		field->type == LT_TYPE_BINARY || field->type == LT_TYPE_LARGE_BINARY;
	{
		/* a knob for tests: LT_WINDOW_MIN_BYTES=0 reads every page by windows where it can (read once:
		 * getenv at every open was a tenth of opening a point lookup's readers) */
		static bool env_read = false;
		static uint64_t window_min = WINDOW_MIN_BYTES;

		if (!env_read)
		{
			const char *e = getenv("LT_WINDOW_MIN_BYTES");

			if (e && *e)
				window_min = strtoull(e, NULL, 10);
			env_read = true;
		}
		rd->window_min = window_min;
	}
	memset(&cur, 0, sizeof(cur));
	cur.mult = 1;
	rc = collect_leaves(f, map, field, &cur, 0, &rd->leaves, &rd->n_leaves, &cap, err);
	for (int i = 0; rc == LT_OK && i < rd->n_leaves; i++)
	{
		leaf21	   *lf = &rd->leaves[i];

		lf->column = map ? lt_column_map_find(map, lf->path[lf->depth - 1]->id) : -1;
		rc = setup_leaf(f, lf, err);
		if (rc != LT_OK || lf->column < 0)
			continue;
		/* the first node on its path that no earlier present leaf shares */
		lf->first_owned = lf->depth - 1;
		for (int d = 0; d < lf->depth - 1; d++)
		{
			bool		shared = false;

			for (int j = 0; j < i && !shared; j++)
				shared = rd->leaves[j].column >= 0 && rd->leaves[j].depth > d &&
					rd->leaves[j].path[d] == lf->path[d];
			if (!shared)
			{
				lf->first_owned = d;
				break;
			}
		}
		present++;
	}
	if (rc == LT_OK && present == 0)
	{
		reader21_free(&rd->base);
		return lt_null_reader_open(f, field, out, err);
	}
	if (rc != LT_OK)
	{
		reader21_free(&rd->base);
		return rc;
	}
	*out = &rd->base;
	return LT_OK;
}
