/*
 * lt_miniblock.c — MiniBlockLayout pages.
 *
 * Page buffers: [0] chunk metadata (a u16 word per chunk, u32 with
 * has_large_chunk), [1] the chunks back to back, [2] the dictionary when
 * there is one, then the repetition index (unused: we decode whole pages).
 *
 * word = ((chunk_bytes / 8 - 1) << 4) | log2(values in chunk); the last
 * chunk holds whatever is left of num_items (the page's visible items).  A
 * chunk is
 *
 *   u16 num_levels, [u16 rep_bytes], [u16 def_bytes],
 *   num_buffers x u16 (u32 with has_large_chunk) value buffer sizes,
 *   pad to 8, rep, pad, def, pad, each value buffer padded to 8.
 *
 * Chunks may split a row; pages with lists are decoded whole, levels
 * concatenated, so that needs no special handling.  Pages without lists
 * whose buffers outlive the page are decoded lazily instead: levels and the
 * dictionary up front, items chunk by chunk straight into the reader's
 * output when rows are read (lt21_mb_append_items).
 */
#include "encoding/lt_enc21.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "proto/lt_enc21.pb-c.h"
#include "encoding/lt_fsst.h"

#define MAX_CHUNK_VALUES ((uint64_t) 1 << 16)
#define MAX_DICT_ITEMS ((uint64_t) 1 << 22)
#define MAX_VALUE_BUFFERS 16

/* One chunk's parts. */
typedef struct mb_chunk
{
	uint16_t	nlevels;
	uint16_t	rep_bytes,
				def_bytes;
	const uint8_t *rep_p,
			   *def_p;
	const uint8_t *bp[MAX_VALUE_BUFFERS];
	uint64_t	bl[MAX_VALUE_BUFFERS];
} mb_chunk;

/* The page's FSST table cache, made on first use (NULL without memory: tables are parsed per chunk). */
static lt_fsst_cache *
fsst_cache(lt21_page *pg)
{
	if (pg->fsst_shared)
		return pg->fsst_shared;
	if (!pg->fsst_cache && (pg->fsst_cache = lt_malloc(sizeof(lt_fsst_cache))) != NULL)
		pg->fsst_cache->valid = false;
	return pg->fsst_cache;
}

static lt_code
parse_chunk(const lt21_where *w, const Lt__Enc21__MiniBlockLayout *mb, const uint8_t *p, uint64_t bytes,
			uint64_t c, mb_chunk *ck, lt_error *err)
{
	bool		large = mb->has_has_large_chunk && mb->has_large_chunk;
	bool		has_rep = mb->rep_compression != NULL;
	bool		has_def = mb->def_compression != NULL;
	uint64_t	nbuf = mb->num_buffers;
	lt_cursor	cur = lt_cursor_make(p, bytes);

	ck->rep_bytes = ck->def_bytes = 0;
	ck->rep_p = ck->def_p = NULL;
	if (!lt_cursor_u16(&cur, &ck->nlevels) ||
		(has_rep && !lt_cursor_u16(&cur, &ck->rep_bytes)) ||
		(has_def && !lt_cursor_u16(&cur, &ck->def_bytes)))
		return LT21_CORRUPT(w, err, "chunk %llu header truncated", (unsigned long long) c);
	for (uint64_t b = 0; b < nbuf; b++)
	{
		uint32_t	sz = 0;
		uint16_t	sz16 = 0;

		if (large ? !lt_cursor_u32(&cur, &sz) : !lt_cursor_u16(&cur, &sz16))
			return LT21_CORRUPT(w, err, "chunk %llu header truncated", (unsigned long long) c);
		ck->bl[b] = large ? sz : sz16;
	}
	if (!lt_cursor_align(&cur, 8) ||
		(has_rep && (!lt_cursor_take(&cur, ck->rep_bytes, &ck->rep_p) || !lt_cursor_align(&cur, 8))) ||
		(has_def && (!lt_cursor_take(&cur, ck->def_bytes, &ck->def_p) || !lt_cursor_align(&cur, 8))))
		return LT21_CORRUPT(w, err, "chunk %llu: level buffers run past its %llu bytes",
							(unsigned long long) c, (unsigned long long) bytes);
	for (uint64_t b = 0; b < nbuf; b++)
	{
		if (!lt_cursor_take(&cur, ck->bl[b], &ck->bp[b]))
			return LT21_CORRUPT(w, err, "chunk %llu: value buffer %llu of %llu bytes runs past its %llu bytes",
								(unsigned long long) c, (unsigned long long) b,
								(unsigned long long) ck->bl[b], (unsigned long long) bytes);
		/* the padding after the last buffer may be missing */
		if (b + 1 < nbuf && !lt_cursor_align(&cur, 8))
			return LT21_CORRUPT(w, err, "chunk %llu: value buffer %llu padding is missing",
								(unsigned long long) c, (unsigned long long) b);
	}
	return LT_OK;
}

static lt_code
grow_idx(lt21_page *pg, uint64_t need, lt_error *err)
{
	uint32_t   *p;
	uint64_t	c = pg->idx_cap ? pg->idx_cap : 4096;

	if (need <= pg->idx_cap && pg->dict_idx)
		return LT_OK;
	while (c < need)
		c *= 2;
	p = lt_realloc(pg->dict_idx, c * sizeof(uint32_t));
	if (!p)
		return lt_nomem(err);
	pg->dict_idx = p;
	pg->idx_cap = c;
	return LT_OK;
}

static lt_code
grow_chunks(lt21_page *pg, uint64_t n, lt_error *err)
{
	uint64_t   *p;

	if (n + 1 <= pg->chunk_cap && pg->chunk_store)
		return LT_OK;
	p = lt_realloc(pg->chunk_store, 2 * (n + 1) * sizeof(uint64_t));
	if (!p)
		return lt_nomem(err);
	pg->chunk_store = p;
	pg->chunk_cap = n + 1;
	return LT_OK;
}

lt_code
lt21_miniblock_decode(const lt21_where *w, const lt_field *leaf, const Lt__Enc21__MiniBlockLayout *mb,
					  const lt21_bufs *bufs, lt21_page *pg, lt_error *err)
{
	const uint8_t *meta,
			   *data;
	uint64_t	meta_len,
				data_len;
	bool		large = mb->has_has_large_chunk && mb->has_large_chunk;
	unsigned	ws = large ? 4 : 2;
	bool		has_rep = mb->rep_compression != NULL;
	bool		has_def = mb->def_compression != NULL;
	bool		has_dict = mb->dictionary != NULL;
	bool		lazy = bufs->stable && !has_rep;
	uint64_t	num_items = mb->num_items;
	uint64_t	nbuf = mb->num_buffers;
	uint64_t	nchunks,
				off = 0,
				counted = 0;
	lt21_levels *rep = &pg->rep_store,
			   *def = &pg->def_store;
	lt_code		rc = LT_OK;

	if (bufs->n < 2 + (has_dict ? 1 : 0))
		return LT21_CORRUPT(w, err, "mini-block page has %d buffers", bufs->n);
	if (!mb->value_compression)
		return LT21_CORRUPT(w, err, "mini-block page without a value encoding");
	if (nbuf < 1 || nbuf > MAX_VALUE_BUFFERS)
		return LT21_CORRUPT(w, err, "mini-block chunks with %llu value buffers", (unsigned long long) nbuf);
	if (num_items > LT21_MAX_PAGE_ITEMS)
		return LT21_CORRUPT(w, err, "mini-block page of %llu items", (unsigned long long) num_items);
	if (has_rep != (pg->max_rep > 0))
		return LT21_CORRUPT(w, err, "repetition levels %s but %d list layers",
							has_rep ? "present" : "absent", pg->max_rep);
	meta = bufs->p[0];
	meta_len = bufs->len[0];
	data = bufs->p[1];
	data_len = bufs->len[1];
	if (meta_len % ws != 0)
		return LT21_CORRUPT(w, err, "chunk metadata of %llu bytes is not a multiple of %u",
							(unsigned long long) meta_len, ws);
	nchunks = meta_len / ws;
	if (nchunks == 0 && num_items > 0)
		return LT21_CORRUPT(w, err, "%llu items but no chunks", (unsigned long long) num_items);
	if (lazy)
	{
		LT_TRY(grow_chunks(pg, nchunks, err));
		pg->chunk_item = pg->chunk_store;
		pg->chunk_off = pg->chunk_store + nchunks + 1;
	}
	else if (!has_dict && num_items > 0)
	{
		/* room for the page at once, within what the data could plausibly hold */
		uint64_t	guess = data_len < num_items / 8 ? data_len * 8 + 4096 : num_items;

		LT_TRY(lt_array_reserve(pg->values, (int64_t) guess, err));
	}

	for (uint64_t c = 0; c < nchunks && rc == LT_OK; c++)
	{
		uint32_t	word = large ? lt_le32(meta + c * 4) : lt_le16(meta + c * 2);
		uint64_t	bytes = ((uint64_t) (word >> 4) + 1) * 8;
		uint64_t	count;
		mb_chunk	ck;

		if (c + 1 < nchunks)
			count = (uint64_t) 1 << (word & 0xF);
		else if (counted > num_items)
		{
			rc = LT21_CORRUPT(w, err, "chunks hold more than the page's %llu items",
							  (unsigned long long) num_items);
			break;
		}
		else
			count = num_items - counted;
		if (count > MAX_CHUNK_VALUES)
		{
			rc = LT21_CORRUPT(w, err, "chunk %llu claims %llu values",
							  (unsigned long long) c, (unsigned long long) count);
			break;
		}
		if (off > data_len || bytes > data_len - off)
		{
			rc = LT21_CORRUPT(w, err, "chunk %llu of %llu bytes at %llu runs past the %llu-byte data buffer",
							  (unsigned long long) c, (unsigned long long) bytes,
							  (unsigned long long) off, (unsigned long long) data_len);
			break;
		}
		rc = parse_chunk(w, mb, data + off, bytes, c, &ck, err);
		if (rc == LT_OK && has_rep)
			rc = lt21_decode_levels(w, mb->rep_compression, ck.rep_p, ck.rep_bytes, ck.nlevels, rep,
									"repetition", err);
		if (rc == LT_OK && has_def)
			rc = lt21_decode_levels(w, mb->def_compression, ck.def_p, ck.def_bytes, ck.nlevels, def,
									"definition", err);
		if (rc == LT_OK && !has_rep && ck.nlevels != count && (has_def || ck.nlevels != 0))
			rc = LT21_CORRUPT(w, err, "chunk %llu has %u levels for %llu values",
							  (unsigned long long) c, ck.nlevels, (unsigned long long) count);
		if (rc != LT_OK)
			break;

		if (lazy)
		{
			pg->chunk_item[c] = counted;
			pg->chunk_off[c] = off;
		}
		else if (has_dict)
		{
			rc = grow_idx(pg, pg->n_dict_idx + count, err);
			if (rc == LT_OK)
				rc = lt21_mb_decode_fixed(w, mb->value_compression, (int) nbuf, ck.bp, ck.bl, count, 4,
										  (uint8_t *) (pg->dict_idx + pg->n_dict_idx), err);
			if (rc == LT_OK)
				pg->n_dict_idx += count;
		}
		else
			rc = lt21_mb_decode_values(w, mb->value_compression, (int) nbuf, ck.bp, ck.bl, count,
									   pg->values, fsst_cache(pg), err);
		if (rc != LT_OK)
			lt_error_prefix(err, "chunk %llu", (unsigned long long) c);
		counted += count;
		off += bytes;
	}

	if (rc == LT_OK && counted != num_items)
		rc = LT21_CORRUPT(w, err, "chunks hold %llu items, the page says %llu",
						  (unsigned long long) counted, (unsigned long long) num_items);
	if (rc == LT_OK && has_rep && has_def && rep->n != def->n)
		rc = LT21_CORRUPT(w, err, "%llu repetition levels but %llu definition levels",
						  (unsigned long long) rep->n, (unsigned long long) def->n);
	if (rc == LT_OK && has_dict)
	{
		uint64_t	nd = mb->num_dictionary_items;

		if (nd > MAX_DICT_ITEMS || nd > (bufs->len[2] + 1) * 1024)
			rc = LT21_CORRUPT(w, err, "dictionary of %llu items in %llu bytes",
							  (unsigned long long) nd, (unsigned long long) bufs->len[2]);
		if (rc == LT_OK)
			rc = lt_array_new(leaf, &pg->dict, err);
		if (rc == LT_OK)
			rc = lt21_block_decode_values(w, mb->dictionary, bufs->p[2], bufs->len[2], nd, pg->dict, err);
		if (rc == LT_OK)
			rc = lt21_dict_prepare(pg->dict, &pg->dict_maxlen, err);
		if (rc != LT_OK)
			lt_error_prefix(err, "dictionary");
	}
	if (rc != LT_OK)
		return rc;
	if (lazy)
	{
		pg->chunk_item[nchunks] = counted;
		pg->chunk_off[nchunks] = off;
		pg->n_chunks = nchunks;
		pg->lazy_mb = mb;
		pg->lazy_data = data;
		pg->lazy_items = num_items;
		pg->scratch_chunk = -1;
	}
	pg->rep = has_rep ? rep->v : NULL;
	pg->def = has_def ? def->v : NULL;
	pg->num_levels = has_rep ? rep->n : has_def ? def->n : num_items;
	return LT_OK;
}

/*
 * Decode chunk c's items, appending them to dst (a plain array, not a dictionary's); only items
 * [lo, hi) of the chunk need to be right (strings outside come out empty).
 */
static lt_code
lazy_chunk(const lt21_where *w, lt21_page *pg, uint64_t c, uint64_t lo, uint64_t hi, lt_array *dst,
		   lt_error *err)
{
	const Lt__Enc21__MiniBlockLayout *mb = pg->lazy_mb;
	uint64_t	count = pg->chunk_item[c + 1] - pg->chunk_item[c];
	mb_chunk	ck;
	lt_code		rc;

	rc = parse_chunk(w, mb, pg->lazy_data + pg->chunk_off[c], pg->chunk_off[c + 1] - pg->chunk_off[c], c, &ck, err);
	if (rc == LT_OK && pg->dict)
	{
		rc = grow_idx(pg, count, err);
		if (rc == LT_OK)
			rc = lt21_mb_decode_fixed(w, mb->value_compression, (int) mb->num_buffers, ck.bp, ck.bl, count, 4,
									  (uint8_t *) pg->dict_idx, err);
		if (rc == LT_OK)
			rc = lt21_dict_gather(w, pg->dict, pg->dict_maxlen, pg->dict_idx, count,
								  pg->def ? pg->def + pg->chunk_item[c] : NULL, dst, err);
	}
	else if (rc == LT_OK)
		rc = lt21_mb_decode_values_span(w, mb->value_compression, (int) mb->num_buffers, ck.bp, ck.bl, count,
										lo, hi, dst, fsst_cache(pg), err);
	if (rc != LT_OK)
		lt_error_prefix(err, "chunk %llu", (unsigned long long) c);
	return rc;
}

lt_code
lt21_mb_append_items(const lt21_where *w, lt21_page *pg, uint64_t v0, uint64_t v1, lt_array *dst,
					 lt_error *err)
{
	uint64_t	lo = 0,
				hi = pg->n_chunks;

	if (v0 >= v1)
		return LT_OK;
	/* the chunk holding v0 */
	while (hi - lo > 1)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (pg->chunk_item[mid] <= v0)
			lo = mid;
		else
			hi = mid;
	}
	for (uint64_t c = lo; c < pg->n_chunks && v0 < v1; c++)
	{
		uint64_t	cs = pg->chunk_item[c],
					ce = pg->chunk_item[c + 1];
		uint64_t	b = v1 < ce ? v1 : ce;

		if (cs == ce)
			continue;
		if (v0 == cs && b == ce && !(dst->room && pg->dict))
			LT_TRY(lazy_chunk(w, pg, c, 0, ce - cs, dst, err));
		else
		{
			/*
			 * Part of a chunk: decode it into the scratch array, where later parts of the same chunk
			 * are found (a whole dictionary chunk too, for an array with header room: the
			 * dictionary's gather does not leave it).  A lone item (a point lookup) is all that is decoded of a chunk where it can
			 * be, and only the wanted strings of a string chunk (a LIMIT's first rows: not the whole
			 * chunk; a scan's next batch then decodes the rest); other fixed-width runs decode the
			 * chunk whole, as a scan goes on through it.
			 */
			if (pg->scratch_chunk != (int64_t) c || v0 - cs < pg->scratch_lo || b - cs > pg->scratch_hi)
			{
				bool		exact = b - v0 == 1 || (!pg->dict && lt_type_is_var_width(pg->values->field->type));
				uint64_t	lo = exact ? v0 - cs : 0,
							hi = exact ? b - cs : ce - cs;

				pg->scratch_chunk = -1;
				lt_array_clear(pg->values);
				LT_TRY(lazy_chunk(w, pg, c, lo, hi, pg->values, err));
				pg->scratch_chunk = (int64_t) c;
				pg->scratch_lo = lo;
				pg->scratch_hi = hi;
				/* a lone fixed-width value may come as one slot (lt21_mb_decode_values_span) */
				pg->scratch_base = pg->values->length == 1 && ce - cs > 1 ? lo : 0;
			}
			LT_TRY(lt_array_append_slice(dst, pg->values, (int64_t) (v0 - cs - pg->scratch_base), (int64_t) (b - v0),
										 err));
		}
		v0 = b;
	}
	return LT_OK;
}

/* ---- random access: the chunk table ---- */

void
lt21_mb_buffers(const Lt__Enc21__MiniBlockLayout *mb, int nbufs, int *dict_buf, int *index_buf)
{
	int			next = 2;

	*dict_buf = *index_buf = -1;
	if (mb->dictionary)
		*dict_buf = next++;
	if (mb->has_repetition_index_depth && mb->repetition_index_depth > 0 && next < nbufs)
		*index_buf = next;
	if (*dict_buf >= nbufs)
		*dict_buf = -1;
}

void
lt21_chunks_free(lt21_chunks *ck)
{
	lt_free(ck->off);
	memset(ck, 0, sizeof(*ck));
}

lt_code
lt21_mb_chunks(const lt21_where *w, const Lt__Enc21__MiniBlockLayout *mb, uint64_t num_rows, int nbufs,
			   const uint64_t *lens, const uint8_t *meta, const uint8_t *index, lt21_chunks *ck,
			   bool *usable, lt_error *err)
{
	bool		large = mb->has_has_large_chunk && mb->has_large_chunk;
	unsigned	ws = large ? 4 : 2;
	bool		has_rep = mb->rep_compression != NULL;
	uint64_t	num_items = mb->num_items;
	uint64_t	n,
				off = 0,
				counted = 0,
				rows = 0;
	bool		pre = false;

	*usable = false;
	ck->n = 0;
	if (nbufs < 2 || !mb->value_compression)
		return LT_OK;			/* the page decoder tells what is wrong */
	lt21_mb_buffers(mb, nbufs, &ck->dict_buf, &ck->index_buf);
	if ((mb->dictionary && ck->dict_buf < 0) || (has_rep && ck->index_buf < 0))
		return LT_OK;
	if (has_rep && mb->repetition_index_depth != 1)
		return LT_OK;			/* deeper indexes: read the page whole */
	if (num_items > LT21_MAX_PAGE_ITEMS)
		return LT21_CORRUPT(w, err, "mini-block page of %llu items", (unsigned long long) num_items);
	if (lens[0] % ws != 0)
		return LT21_CORRUPT(w, err, "chunk metadata of %llu bytes is not a multiple of %u",
							(unsigned long long) lens[0], ws);
	n = lens[0] / ws;
	if (n == 0)
		return num_items > 0 ? LT21_CORRUPT(w, err, "%llu items but no chunks", (unsigned long long) num_items)
			: LT_OK;
	if (n > LT21_MAX_PAGE_ITEMS)
		return LT21_CORRUPT(w, err, "mini-block page of %llu chunks", (unsigned long long) n);
	if (!has_rep && num_items != num_rows)
		return LT21_CORRUPT(w, err, "mini-block page of %llu items for %llu rows without repetition",
							(unsigned long long) num_items, (unsigned long long) num_rows);
	if (has_rep && lens[ck->index_buf] != n * 16)
		return LT21_CORRUPT(w, err, "repetition index of %llu bytes for %llu chunks",
							(unsigned long long) lens[ck->index_buf], (unsigned long long) n);
	if (n + 1 > ck->cap)
	{
		uint64_t   *p = lt_realloc(ck->off, (n + 1) * (3 * sizeof(uint64_t) + 2));

		if (!p)
			return lt_nomem(err);
		ck->off = p;
		ck->cap = n + 1;
	}
	ck->item = ck->off + ck->cap;
	ck->row = ck->item + ck->cap;
	ck->pre = (uint8_t *) (ck->row + ck->cap);
	ck->trail = ck->pre + ck->cap;
	ck->word = ws;
	ck->num_rows = num_rows;
	for (uint64_t c = 0; c < n; c++)
	{
		uint32_t	word = large ? lt_le32(meta + c * 4) : lt_le16(meta + c * 2);
		uint64_t	bytes = ((uint64_t) (word >> 4) + 1) * 8;
		uint64_t	count;

		if (c + 1 < n)
			count = (uint64_t) 1 << (word & 0xF);
		else
			count = num_items - counted;
		if (count > MAX_CHUNK_VALUES || counted > num_items || count > num_items - counted)
			return LT21_CORRUPT(w, err, "chunk %llu claims %llu values (%llu of the page's %llu before it)",
								(unsigned long long) c, (unsigned long long) count,
								(unsigned long long) counted, (unsigned long long) num_items);
		if (bytes > lens[1] - off)
			return LT21_CORRUPT(w, err, "chunk %llu of %llu bytes at %llu runs past the %llu-byte data buffer",
								(unsigned long long) c, (unsigned long long) bytes,
								(unsigned long long) off, (unsigned long long) lens[1]);
		ck->off[c] = off;
		ck->item[c] = counted;
		ck->row[c] = has_rep ? rows : counted;
		if (has_rep)
		{
			uint64_t	ends = lt_le64(index + c * 16),
						partial = lt_le64(index + c * 16 + 8);
			bool		trail = partial > 0;
			uint64_t	starts;

			/* a row that starts before the chunk must end in it or go on past it */
			if (ends > num_rows || (pre && ends == 0 && !trail) || (trail && c + 1 == n) ||
				ends + trail < (uint64_t) pre)
				return LT21_CORRUPT(w, err, "repetition index of chunk %llu: %llu rows end, %llu items left",
									(unsigned long long) c, (unsigned long long) ends,
									(unsigned long long) partial);
			starts = ends + trail - pre;
			if (starts > num_rows - rows)
				return LT21_CORRUPT(w, err, "repetition index holds more than the page's %llu rows",
									(unsigned long long) num_rows);
			ck->pre[c] = pre;
			ck->trail[c] = trail;
			rows += starts;
			pre = trail;
		}
		else
			ck->pre[c] = ck->trail[c] = 0;
		counted += count;
		off += bytes;
	}
	if (counted != num_items)
		return LT21_CORRUPT(w, err, "chunks hold %llu items, the page says %llu",
							(unsigned long long) counted, (unsigned long long) num_items);
	if (has_rep && rows != num_rows)
		return LT21_CORRUPT(w, err, "repetition index holds %llu rows, the page says %llu",
							(unsigned long long) rows, (unsigned long long) num_rows);
	ck->off[n] = off;
	ck->item[n] = counted;
	ck->row[n] = has_rep ? rows : counted;
	ck->n = n;
	*usable = true;
	return LT_OK;
}

/* The chunk in which row r starts (r < num_rows): the last with row[c] <= r. */
static uint64_t
chunk_of_row(const lt21_chunks *ck, uint64_t r)
{
	uint64_t	lo = 0,
				hi = ck->n - 1;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo + 1) / 2;

		if (ck->row[mid] <= r)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void
lt21_mb_window(const lt21_chunks *ck, uint64_t r0, uint64_t r1, lt21_window *win)
{
	uint64_t	c0 = chunk_of_row(ck, r0),
				c = chunk_of_row(ck, r1 - 1);

	/* the last row goes on through chunks without row starts of their own */
	if (r1 == ck->row[c + 1] && ck->trail[c])
	{
		c++;
		while (c + 1 < ck->n && ck->trail[c] && ck->row[c + 1] == ck->row[c])
			c++;
	}
	memset(win, 0, sizeof(*win));
	win->buf = 1;
	win->c0 = c0;
	win->c1 = c + 1;
	win->off = ck->off[c0];
	win->len = ck->off[c + 1] - ck->off[c0];
	win->items = ck->item[c + 1] - ck->item[c0];
	win->head = ck->pre[c0];
	win->tail = ck->trail[c];
	win->row0 = ck->row[c0];
	win->row1 = ck->row[c + 1] - (ck->trail[c] ? 1 : 0);
}
