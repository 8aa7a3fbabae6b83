/*
 * lt_roaring.c — a validating parser for the 32-bit Roaring portable format,
 * and the row-address set built on CRoaring's in-memory API.
 */
#include "table/lt_roaring.h"

#include <roaring/roaring.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"

#define RB_ARRAY_MAX	4096		/* containers above this cardinality are bitmaps */
#define RB_BITMAP_BYTES 8192
#define RB_MAX_CONTAINERS 65536

typedef enum rb_kind
{
	RB_ARRAY,
	RB_BITMAP,
	RB_RUN
} rb_kind;

/*
 * Called once per container after the whole bitmap validated.  data points
 * into the input: count u16 values (array), 8192 bytes (bitmap) or count
 * (start, len-1) u16 pairs (run).
 */
typedef void (*rb_visit_fn) (void *arg, uint16_t key, rb_kind kind, const uint8_t *data, uint32_t count);

/*
 * Walk the bitmap at buf.  With visit == NULL this validates and fills info;
 * callers that visit have validated first, so the walk cannot fail half-way
 * after the visitor has seen some containers.
 */
static lt_code
rb_walk(const uint8_t *buf, size_t len, lt_roaring_info *info, rb_visit_fn visit, void *arg,
		lt_error *err)
{
	lt_cursor	c = lt_cursor_make(buf, len);
	uint32_t	cookie;
	uint32_t	n;
	const uint8_t *runflags = NULL;
	const uint8_t *keycards;
	const uint8_t *offsets = NULL;
	uint64_t	total = 0;
	uint32_t	min = 0,
				max = 0;

	if (!lt_cursor_u32(&c, &cookie))
		return lt_corrupt(err, "roaring: truncated cookie at offset 0 (%zu bytes)", len);
	if ((cookie & 0xFFFF) == LT_ROARING_COOKIE_RUN)
	{
		n = (cookie >> 16) + 1;
		if (!lt_cursor_take(&c, ((size_t) n + 7) / 8, &runflags))
			return lt_corrupt(err, "roaring: truncated run flags for %u containers at offset %zu",
							  n, c.pos);
	}
	else if (cookie == LT_ROARING_COOKIE_NORUN)
	{
		if (!lt_cursor_u32(&c, &n))
			return lt_corrupt(err, "roaring: truncated container count at offset %zu", c.pos);
		if (n > RB_MAX_CONTAINERS)
			return lt_corrupt(err, "roaring: %u containers (at most %d) at offset 4", n,
							  RB_MAX_CONTAINERS);
	}
	else
		return lt_corrupt(err, "roaring: bad cookie 0x%08x at offset 0", cookie);

	if (!lt_cursor_take(&c, (size_t) n * 4, &keycards))
		return lt_corrupt(err, "roaring: truncated key/cardinality table (%u containers) at offset %zu",
						  n, c.pos);
	/* The run format omits the offset table for small bitmaps. */
	if (!runflags || n >= 4)
	{
		if (!lt_cursor_take(&c, (size_t) n * 4, &offsets))
			return lt_corrupt(err, "roaring: truncated offset table (%u containers) at offset %zu",
							  n, c.pos);
	}

	for (uint32_t i = 0; i < n; i++)
	{
		uint16_t	key = lt_le16(keycards + 4 * (size_t) i);
		uint32_t	card = (uint32_t) lt_le16(keycards + 4 * (size_t) i + 2) + 1;
		bool		is_run = runflags && (runflags[i / 8] >> (i % 8)) & 1;
		size_t		start = c.pos;
		const uint8_t *data;
		uint32_t	count;
		rb_kind		kind;
		uint32_t	cmin,
					cmax;

		if (i > 0 && key <= lt_le16(keycards + 4 * (size_t) (i - 1)))
			return lt_corrupt(err, "roaring: container keys not ascending (%u after %u) at offset %zu",
							  key, lt_le16(keycards + 4 * (size_t) (i - 1)),
							  (size_t) (keycards - buf) + 4 * (size_t) i);
		if (offsets && lt_le32(offsets + 4 * (size_t) i) != start)
			return lt_corrupt(err, "roaring: container %u offset %u, but it starts at offset %zu",
							  i, lt_le32(offsets + 4 * (size_t) i), start);

		if (is_run)
		{
			uint16_t	nruns;
			uint64_t	sum = 0;
			uint32_t	prev_end = 0;

			if (!lt_cursor_u16(&c, &nruns))
				return lt_corrupt(err, "roaring: truncated run count of container %u at offset %zu",
								  i, start);
			if (!lt_cursor_take(&c, (size_t) nruns * 4, &data))
				return lt_corrupt(err, "roaring: truncated run container %u (%u runs) at offset %zu",
								  i, nruns, start);
			for (uint32_t j = 0; j < nruns; j++)
			{
				uint32_t	rs = lt_le16(data + 4 * (size_t) j);
				uint32_t	re = rs + lt_le16(data + 4 * (size_t) j + 2);

				if (re > 0xFFFF)
					return lt_corrupt(err, "roaring: run %u of container %u passes 65535 at offset %zu",
									  j, i, start + 2 + 4 * (size_t) j);
				if (j > 0 && rs <= prev_end)
					return lt_corrupt(err, "roaring: runs overlap or are unsorted in container %u at offset %zu",
									  i, start + 2 + 4 * (size_t) j);
				sum += re - rs + 1;
				prev_end = re;
			}
			if (sum != card)
				return lt_corrupt(err, "roaring: run container %u holds %llu values, header says %u, at offset %zu",
								  i, (unsigned long long) sum, card, start);
			kind = RB_RUN;
			count = nruns;
			cmin = lt_le16(data);
			cmax = prev_end;
		}
		else if (card <= RB_ARRAY_MAX)
		{
			if (!lt_cursor_take(&c, (size_t) card * 2, &data))
				return lt_corrupt(err, "roaring: truncated array container %u (%u values) at offset %zu",
								  i, card, start);
			for (uint32_t j = 1; j < card; j++)
			{
				if (lt_le16(data + 2 * (size_t) j) <= lt_le16(data + 2 * (size_t) (j - 1)))
					return lt_corrupt(err, "roaring: array container %u not strictly ascending at offset %zu",
									  i, start + 2 * (size_t) j);
			}
			kind = RB_ARRAY;
			count = card;
			cmin = lt_le16(data);
			cmax = lt_le16(data + 2 * (size_t) (card - 1));
		}
		else
		{
			uint32_t	pop = 0;
			int			first = -1,
						last = -1;

			if (!lt_cursor_take(&c, RB_BITMAP_BYTES, &data))
				return lt_corrupt(err, "roaring: truncated bitmap container %u at offset %zu", i, start);
			for (int w = 0; w < RB_BITMAP_BYTES / 8; w++)
			{
				uint64_t	word = lt_le64(data + 8 * w);

				if (word)
				{
					if (first < 0)
						first = w * 64 + __builtin_ctzll(word);
					last = w * 64 + 63 - __builtin_clzll(word);
				}
				pop += (uint32_t) __builtin_popcountll(word);
			}
			if (pop != card)
				return lt_corrupt(err, "roaring: bitmap container %u has %u bits set, header says %u, at offset %zu",
								  i, pop, card, start);
			kind = RB_BITMAP;
			count = RB_BITMAP_BYTES / 8;
			cmin = (uint32_t) first;
			cmax = (uint32_t) last;
		}

		if (i == 0)
			min = ((uint32_t) key << 16) | cmin;
		max = ((uint32_t) key << 16) | cmax;
		total += card;
		if (visit)
			visit(arg, key, kind, data, count);
	}

	if (info)
	{
		info->size = c.pos;
		info->cardinality = total;
		info->containers = n;
		info->min = min;
		info->max = max;
	}
	return LT_OK;
}

lt_code
lt_roaring_inspect(const uint8_t *buf, size_t len, lt_roaring_info *info, lt_error *err)
{
	memset(info, 0, sizeof(*info));
	return rb_walk(buf, len, info, NULL, NULL, err);
}

lt_code
lt_roaring_validate(const uint8_t *buf, size_t len, size_t *consumed, lt_error *err)
{
	lt_roaring_info info;

	LT_TRY(lt_roaring_inspect(buf, len, &info, err));
	if (consumed)
		*consumed = info.size;
	return LT_OK;
}

/* --- decode to a sorted array --------------------------------------------- */

typedef struct rb_array_sink
{
	uint32_t   *out;
	uint64_t	n;
} rb_array_sink;

static void
visit_array(void *arg, uint16_t key, rb_kind kind, const uint8_t *data, uint32_t count)
{
	rb_array_sink *s = arg;
	uint32_t	hi = (uint32_t) key << 16;

	switch (kind)
	{
		case RB_ARRAY:
			for (uint32_t j = 0; j < count; j++)
				s->out[s->n++] = hi | lt_le16(data + 2 * (size_t) j);
			break;
		case RB_BITMAP:
			for (uint32_t w = 0; w < count; w++)
			{
				uint64_t	word = lt_le64(data + 8 * (size_t) w);

				while (word)
				{
					s->out[s->n++] = hi | (w * 64 + (uint32_t) __builtin_ctzll(word));
					word &= word - 1;
				}
			}
			break;
		case RB_RUN:
			for (uint32_t j = 0; j < count; j++)
			{
				uint32_t	rs = lt_le16(data + 4 * (size_t) j);
				uint32_t	re = rs + lt_le16(data + 4 * (size_t) j + 2);

				for (uint32_t v = rs; v <= re; v++)
					s->out[s->n++] = hi | v;
			}
			break;
	}
}

lt_code
lt_roaring_decode_array(const uint8_t *buf, size_t len, uint64_t max_card,
						uint32_t **out, uint64_t *n, size_t *consumed, lt_error *err)
{
	lt_roaring_info info;
	rb_array_sink sink = {NULL, 0};

	*out = NULL;
	*n = 0;
	LT_TRY(lt_roaring_inspect(buf, len, &info, err));
	if (info.cardinality > max_card)
		return lt_corrupt(err, "roaring: %llu values, more than the %llu allowed here",
						  (unsigned long long) info.cardinality, (unsigned long long) max_card);
	if (info.cardinality > 0)
	{
		if (info.cardinality > SIZE_MAX / sizeof(uint32_t))
			return lt_nomem(err);
		sink.out = lt_malloc((size_t) info.cardinality * sizeof(uint32_t));
		if (!sink.out)
			return lt_nomem(err);
		rb_walk(buf, len, NULL, visit_array, &sink, NULL);
	}
	*out = sink.out;
	*n = sink.n;
	if (consumed)
		*consumed = info.size;
	return LT_OK;
}

/* --- decode into a dense bitset ------------------------------------------- */

typedef struct rb_bits_sink
{
	uint64_t   *words;
	uint64_t	nwords;
} rb_bits_sink;

/* Set bits [lo, hi] (inclusive) of the bitset; the caller checked hi. */
static void
bits_set_range(uint64_t *words, uint64_t lo, uint64_t hi)
{
	uint64_t	wlo = lo / 64,
				whi = hi / 64;
	uint64_t	mlo = ~UINT64_C(0) << (lo % 64);
	uint64_t	mhi = ~UINT64_C(0) >> (63 - hi % 64);

	if (wlo == whi)
	{
		words[wlo] |= mlo & mhi;
		return;
	}
	words[wlo] |= mlo;
	for (uint64_t w = wlo + 1; w < whi; w++)
		words[w] = ~UINT64_C(0);
	words[whi] |= mhi;
}

static void
visit_bits(void *arg, uint16_t key, rb_kind kind, const uint8_t *data, uint32_t count)
{
	rb_bits_sink *s = arg;
	uint64_t	base = (uint64_t) key << 16;

	switch (kind)
	{
		case RB_ARRAY:
			for (uint32_t j = 0; j < count; j++)
			{
				uint64_t	v = base | lt_le16(data + 2 * (size_t) j);

				s->words[v / 64] |= UINT64_C(1) << (v % 64);
			}
			break;
		case RB_BITMAP:
			/* Words past the bitset's end are zero: the caller checked max. */
			for (uint32_t w = 0; w < count && base / 64 + w < s->nwords; w++)
				s->words[base / 64 + w] |= lt_le64(data + 8 * (size_t) w);
			break;
		case RB_RUN:
			for (uint32_t j = 0; j < count; j++)
			{
				uint64_t	rs = lt_le16(data + 4 * (size_t) j);
				uint64_t	re = rs + lt_le16(data + 4 * (size_t) j + 2);

				bits_set_range(s->words, base | rs, base | re);
			}
			break;
	}
}

lt_code
lt_roaring_decode_bits(const uint8_t *buf, size_t len, uint64_t nbits,
					   uint64_t *words, size_t *consumed, lt_error *err)
{
	lt_roaring_info info;
	rb_bits_sink sink;

	LT_TRY(lt_roaring_inspect(buf, len, &info, err));
	if (info.cardinality > 0 && (uint64_t) info.max >= nbits)
		return lt_corrupt(err, "roaring: value %u is past the end (%llu)", info.max,
						  (unsigned long long) nbits);
	sink.words = words;
	sink.nwords = (nbits + 63) / 64;
	if (info.cardinality > 0)
		rb_walk(buf, len, NULL, visit_bits, &sink, NULL);
	if (consumed)
		*consumed = info.size;
	return LT_OK;
}

/* --- build a CRoaring bitmap ---------------------------------------------- */

#define RB_CHUNK 1024

static void
visit_croaring(void *arg, uint16_t key, rb_kind kind, const uint8_t *data, uint32_t count)
{
	roaring_bitmap_t *r = arg;
	uint32_t	hi = (uint32_t) key << 16;
	uint32_t	chunk[RB_CHUNK];
	size_t		k = 0;

	switch (kind)
	{
		case RB_ARRAY:
			for (uint32_t j = 0; j < count; j++)
			{
				chunk[k++] = hi | lt_le16(data + 2 * (size_t) j);
				if (k == RB_CHUNK)
				{
					roaring_bitmap_add_many(r, k, chunk);
					k = 0;
				}
			}
			break;
		case RB_BITMAP:
			for (uint32_t w = 0; w < count; w++)
			{
				uint64_t	word = lt_le64(data + 8 * (size_t) w);

				while (word)
				{
					chunk[k++] = hi | (w * 64 + (uint32_t) __builtin_ctzll(word));
					word &= word - 1;
					if (k == RB_CHUNK)
					{
						roaring_bitmap_add_many(r, k, chunk);
						k = 0;
					}
				}
			}
			break;
		case RB_RUN:
			for (uint32_t j = 0; j < count; j++)
			{
				uint32_t	rs = lt_le16(data + 4 * (size_t) j);
				uint32_t	re = rs + lt_le16(data + 4 * (size_t) j + 2);

				roaring_bitmap_add_range_closed(r, hi | rs, hi | re);
			}
			break;
	}
	if (k > 0)
		roaring_bitmap_add_many(r, k, chunk);
}

lt_code
lt_roaring_to_croaring(const uint8_t *buf, size_t len, struct roaring_bitmap_s **out,
					   size_t *consumed, lt_error *err)
{
	lt_roaring_info info;
	roaring_bitmap_t *r;

	*out = NULL;
	LT_TRY(lt_roaring_inspect(buf, len, &info, err));
	r = roaring_bitmap_create();
	if (!r)
		return lt_nomem(err);
	rb_walk(buf, len, NULL, visit_croaring, r, NULL);
	*out = r;
	if (consumed)
		*consumed = info.size;
	return LT_OK;
}

/* --- row-address sets ----------------------------------------------------- */

typedef struct rs_entry
{
	uint32_t	frag;
	bool		full;			/* whole fragment; bm is NULL */
	roaring_bitmap_t *bm;
} rs_entry;

struct lt_rowaddr_set
{
	rs_entry   *e;				/* ascending by frag */
	size_t		n;
	size_t		cap;
};

lt_rowaddr_set *
lt_rowaddr_set_create(void)
{
	return lt_calloc(1, sizeof(lt_rowaddr_set));
}

void
lt_rowaddr_set_free(lt_rowaddr_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].bm)
			roaring_bitmap_free(s->e[i].bm);
	lt_free(s->e);
	lt_free(s);
}

/* Index of frag, or where it would go; *found says which. */
static size_t
rs_find(const lt_rowaddr_set *s, uint32_t frag, bool *found)
{
	size_t		lo = 0,
				hi = s->n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (s->e[mid].frag < frag)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->n && s->e[lo].frag == frag;
	return lo;
}

/* Insert an empty entry for frag at position i (from rs_find). */
static lt_code
rs_insert(lt_rowaddr_set *s, size_t i, uint32_t frag, bool full, lt_error *err)
{
	roaring_bitmap_t *bm = NULL;

	if (s->n == s->cap)
	{
		size_t		ncap = s->cap ? s->cap * 2 : 8;
		rs_entry   *ne;

		if (ncap > SIZE_MAX / sizeof(rs_entry))
			return lt_nomem(err);
		ne = lt_realloc(s->e, ncap * sizeof(rs_entry));
		if (!ne)
			return lt_nomem(err);
		s->e = ne;
		s->cap = ncap;
	}
	if (!full && !(bm = roaring_bitmap_create()))
		return lt_nomem(err);
	memmove(&s->e[i + 1], &s->e[i], (s->n - i) * sizeof(rs_entry));
	s->e[i].frag = frag;
	s->e[i].full = full;
	s->e[i].bm = bm;
	s->n++;
	return LT_OK;
}

/* The bitmap for frag, creating a partial entry; NULL when frag is full. */
static lt_code
rs_partial(lt_rowaddr_set *s, uint32_t frag, roaring_bitmap_t **bm, lt_error *err)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);

	if (!found)
		LT_TRY(rs_insert(s, i, frag, false, err));
	*bm = s->e[i].bm;
	return LT_OK;
}

lt_code
lt_rowaddr_set_add(lt_rowaddr_set *s, uint64_t addr, lt_error *err)
{
	roaring_bitmap_t *bm;

	LT_TRY(rs_partial(s, (uint32_t) (addr >> 32), &bm, err));
	if (bm)
		roaring_bitmap_add(bm, (uint32_t) addr);
	return LT_OK;
}

lt_code
lt_rowaddr_set_add_range(lt_rowaddr_set *s, uint32_t frag, uint64_t lo, uint64_t hi, lt_error *err)
{
	roaring_bitmap_t *bm;

	if (hi > (UINT64_C(1) << 32) || lo > hi)
		return lt_error_set(err, LT_EINVALID, "row offset range [%llu, %llu) is not within 32 bits",
							(unsigned long long) lo, (unsigned long long) hi);
	if (lo == hi)
		return LT_OK;
	LT_TRY(rs_partial(s, frag, &bm, err));
	if (bm)
		roaring_bitmap_add_range_closed(bm, (uint32_t) lo, (uint32_t) (hi - 1));
	return LT_OK;
}

lt_code
lt_rowaddr_set_add_fragment(lt_rowaddr_set *s, uint32_t frag, lt_error *err)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);

	if (!found)
		return rs_insert(s, i, frag, true, err);
	if (s->e[i].bm)
		roaring_bitmap_free(s->e[i].bm);
	s->e[i].bm = NULL;
	s->e[i].full = true;
	return LT_OK;
}

bool
lt_rowaddr_set_contains(const lt_rowaddr_set *s, uint64_t addr)
{
	bool		found;
	size_t		i = rs_find(s, (uint32_t) (addr >> 32), &found);

	if (!found)
		return false;
	return s->e[i].full || roaring_bitmap_contains(s->e[i].bm, (uint32_t) addr);
}

bool
lt_rowaddr_set_is_empty(const lt_rowaddr_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].full || !roaring_bitmap_is_empty(s->e[i].bm))
			return false;
	return true;
}

/* Drop entries whose bitmap became empty. */
static void
rs_compact(lt_rowaddr_set *s)
{
	size_t		w = 0;

	for (size_t i = 0; i < s->n; i++)
	{
		if (!s->e[i].full && (!s->e[i].bm || roaring_bitmap_is_empty(s->e[i].bm)))
		{
			if (s->e[i].bm)
				roaring_bitmap_free(s->e[i].bm);
			continue;
		}
		s->e[w++] = s->e[i];
	}
	s->n = w;
}

lt_code
lt_rowaddr_set_or(lt_rowaddr_set *dst, const lt_rowaddr_set *src, lt_error *err)
{
	if (dst == src)
		return LT_OK;
	for (size_t j = 0; j < src->n; j++)
	{
		const rs_entry *se = &src->e[j];
		bool		found;
		size_t		i = rs_find(dst, se->frag, &found);

		if (!found)
		{
			LT_TRY(rs_insert(dst, i, se->frag, true, err));
			if (!se->full)
			{
				/* Insert as full (no bitmap) first, so a failed copy leaves nothing behind. */
				roaring_bitmap_t *copy = roaring_bitmap_copy(se->bm);

				if (!copy)
				{
					memmove(&dst->e[i], &dst->e[i + 1], (dst->n - i - 1) * sizeof(rs_entry));
					dst->n--;
					return lt_nomem(err);
				}
				dst->e[i].full = false;
				dst->e[i].bm = copy;
			}
		}
		else if (dst->e[i].full)
			continue;
		else if (se->full)
			LT_TRY(lt_rowaddr_set_add_fragment(dst, se->frag, err));
		else
			roaring_bitmap_or_inplace(dst->e[i].bm, se->bm);
	}
	return LT_OK;
}

lt_code
lt_rowaddr_set_and(lt_rowaddr_set *dst, const lt_rowaddr_set *src, lt_error *err)
{
	lt_code		rc = LT_OK;

	if (dst == src)
		return LT_OK;
	for (size_t i = 0; i < dst->n; i++)
	{
		rs_entry   *de = &dst->e[i];
		bool		found;
		size_t		j = rs_find(src, de->frag, &found);
		const rs_entry *se = found ? &src->e[j] : NULL;

		if (!se)
		{
			if (de->bm)
				roaring_bitmap_free(de->bm);
			de->bm = NULL;
			de->full = false;	/* compacted away below */
		}
		else if (se->full)
			continue;
		else if (de->full)
		{
			roaring_bitmap_t *copy = roaring_bitmap_copy(se->bm);

			if (!copy)
			{
				rc = lt_nomem(err);
				break;
			}
			de->full = false;
			de->bm = copy;
		}
		else
			roaring_bitmap_and_inplace(de->bm, se->bm);
	}
	rs_compact(dst);
	return rc;
}

lt_code
lt_rowaddr_set_andnot(lt_rowaddr_set *dst, const lt_rowaddr_set *src, lt_error *err)
{
	lt_code		rc = LT_OK;

	/* CRoaring asserts its operands differ; x - x is simply empty. */
	if (dst == src)
	{
		for (size_t i = 0; i < dst->n; i++)
			if (dst->e[i].bm)
				roaring_bitmap_free(dst->e[i].bm);
		dst->n = 0;
		return LT_OK;
	}
	for (size_t i = 0; i < dst->n; i++)
	{
		rs_entry   *de = &dst->e[i];
		bool		found;
		size_t		j = rs_find(src, de->frag, &found);
		const rs_entry *se = found ? &src->e[j] : NULL;

		if (!se)
			continue;
		if (se->full)
		{
			if (de->bm)
				roaring_bitmap_free(de->bm);
			de->bm = NULL;
			de->full = false;
		}
		else if (de->full)
		{
			/* Lance's rule: every 32-bit offset except the subtracted ones. */
			roaring_bitmap_t *all = roaring_bitmap_from_range(0, UINT64_C(1) << 32, 1);

			if (!all)
			{
				rc = lt_nomem(err);
				break;
			}
			roaring_bitmap_andnot_inplace(all, se->bm);
			de->full = false;
			de->bm = all;
		}
		else
			roaring_bitmap_andnot_inplace(de->bm, se->bm);
	}
	rs_compact(dst);
	return rc;
}

uint64_t
lt_rowaddr_set_cardinality(const lt_rowaddr_set *s, uint32_t *full_fragments)
{
	uint64_t	total = 0;
	uint32_t	nfull = 0;

	for (size_t i = 0; i < s->n; i++)
	{
		if (s->e[i].full)
			nfull++;
		else
			total += roaring_bitmap_get_cardinality(s->e[i].bm);
	}
	if (full_fragments)
		*full_fragments = nfull;
	return total;
}

int
lt_rowaddr_set_iterate(const lt_rowaddr_set *s, lt_rowaddr_cb cb, void *arg)
{
	uint32_t	chunk[RB_CHUNK];

	for (size_t i = 0; i < s->n; i++)
	{
		const rs_entry *e = &s->e[i];
		roaring_uint32_iterator_t it;
		int			rc;

		if (e->full)
		{
			if ((rc = cb(e->frag, true, NULL, 0, arg)) != 0)
				return rc;
			continue;
		}
		roaring_init_iterator(e->bm, &it);
		for (;;)
		{
			uint32_t	got = roaring_read_uint32_iterator(&it, chunk, RB_CHUNK);

			if (got == 0)
				break;
			if ((rc = cb(e->frag, false, chunk, got, arg)) != 0)
				return rc;
		}
	}
	return 0;
}

lt_code
lt_rowaddr_set_parse(const uint8_t *buf, size_t len, lt_rowaddr_set **out, size_t *consumed,
					 lt_error *err)
{
	lt_cursor	c = lt_cursor_make(buf, len);
	uint32_t	n;
	lt_rowaddr_set *s;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (!lt_cursor_u32(&c, &n))
		return lt_corrupt(err, "row address map: truncated entry count at offset 0");
	/* Each entry takes at least 8 bytes: refuse counts the input cannot hold. */
	if (n > lt_cursor_left(&c) / 8)
		return lt_corrupt(err, "row address map: %u entries cannot fit in %zu bytes", n, len);
	if (!(s = lt_rowaddr_set_create()))
		return lt_nomem(err);

	for (uint32_t i = 0; i < n && rc == LT_OK; i++)
	{
		size_t		at = c.pos;
		uint32_t	frag,
					size;
		const uint8_t *bytes;
		roaring_bitmap_t *bm;
		size_t		used;

		if (!lt_cursor_u32(&c, &frag) || !lt_cursor_u32(&c, &size))
		{
			rc = lt_corrupt(err, "row address map: truncated entry %u at offset %zu", i, at);
			break;
		}
		if (s->n > 0 && frag <= s->e[s->n - 1].frag)
		{
			rc = lt_corrupt(err, "row address map: fragment ids not ascending (%u after %u) at offset %zu",
							frag, s->e[s->n - 1].frag, at);
			break;
		}
		if (size == 0)
		{
			rc = rs_insert(s, s->n, frag, true, err);
			continue;
		}
		if (!lt_cursor_take(&c, size, &bytes))
		{
			rc = lt_corrupt(err, "row address map: entry %u (fragment %u) needs %u bytes at offset %zu, %zu left",
							i, frag, size, at + 8, lt_cursor_left(&c));
			break;
		}
		if ((rc = lt_roaring_to_croaring(bytes, size, &bm, &used, err)) != LT_OK)
		{
			lt_error_prefix(err, "row address map: entry %u (fragment %u) at offset %zu", i, frag, at + 8);
			break;
		}
		if (used != size)
		{
			roaring_bitmap_free(bm);
			rc = lt_corrupt(err, "row address map: entry %u (fragment %u) bitmap is %zu bytes, size says %u, at offset %zu",
							i, frag, used, size, at + 8);
			break;
		}
		if ((rc = rs_insert(s, s->n, frag, true, err)) != LT_OK)
		{
			roaring_bitmap_free(bm);
			break;
		}
		s->e[s->n - 1].full = false;
		s->e[s->n - 1].bm = bm;
	}
	if (rc != LT_OK)
	{
		lt_rowaddr_set_free(s);
		return rc;
	}
	/* Lance keeps empty partial entries; they select nothing, so drop them. */
	rs_compact(s);
	*out = s;
	if (consumed)
		*consumed = c.pos;
	return LT_OK;
}

/* --- more set operations -------------------------------------------------- */

lt_rowaddr_set *
lt_rowaddr_set_copy(const lt_rowaddr_set *s)
{
	lt_rowaddr_set *c = lt_rowaddr_set_create();

	if (!c)
		return NULL;
	if (s->n > 0)
	{
		c->e = lt_malloc(s->n * sizeof(rs_entry));
		if (!c->e)
		{
			lt_free(c);
			return NULL;
		}
		c->cap = s->n;
	}
	for (size_t i = 0; i < s->n; i++)
	{
		c->e[i] = s->e[i];
		if (s->e[i].bm && !(c->e[i].bm = roaring_bitmap_copy(s->e[i].bm)))
		{
			c->n = i;
			lt_rowaddr_set_free(c);
			return NULL;
		}
		c->n = i + 1;
	}
	return c;
}

lt_code
lt_rowaddr_set_not(lt_rowaddr_set *s, const lt_rowaddr_set *universe, lt_error *err)
{
	lt_rowaddr_set *u = lt_rowaddr_set_copy(universe);
	lt_rowaddr_set tmp;
	lt_code		rc;

	if (!u)
		return lt_nomem(err);
	rc = lt_rowaddr_set_andnot(u, s, err);
	if (rc != LT_OK)
	{
		lt_rowaddr_set_free(u);
		return rc;
	}
	/* swap contents: s takes u's entries, u (with s's old ones) is freed */
	tmp = *s;
	*s = *u;
	*u = tmp;
	lt_rowaddr_set_free(u);
	return LT_OK;
}

lt_code
lt_rowaddr_set_fragments(const lt_rowaddr_set *s, uint32_t **ids, size_t *n, lt_error *err)
{
	*ids = NULL;
	*n = 0;
	if (s->n == 0)
		return LT_OK;
	if (!(*ids = lt_malloc(s->n * sizeof(uint32_t))))
		return lt_nomem(err);
	for (size_t i = 0; i < s->n; i++)
		(*ids)[i] = s->e[i].frag;
	*n = s->n;
	return LT_OK;
}

bool
lt_rowaddr_set_is_full(const lt_rowaddr_set *s, uint32_t frag)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);

	return found && s->e[i].full;
}

uint64_t
lt_rowaddr_set_fragment_cardinality(const lt_rowaddr_set *s, uint32_t frag)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);

	return found && s->e[i].bm ? roaring_bitmap_get_cardinality(s->e[i].bm) : 0;
}

lt_code
lt_rowaddr_set_fragment_offsets(const lt_rowaddr_set *s, uint32_t frag, uint32_t **offsets, uint64_t *n,
								lt_error *err)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);
	uint64_t	card;

	*offsets = NULL;
	*n = 0;
	if (!found)
		return LT_OK;
	if (s->e[i].full)
		return lt_error_set(err, LT_EINVALID, "row address set: fragment %u is selected whole", frag);
	card = roaring_bitmap_get_cardinality(s->e[i].bm);
	if (card == 0)
		return LT_OK;
	if (card > SIZE_MAX / sizeof(uint32_t) || !(*offsets = lt_malloc((size_t) card * sizeof(uint32_t))))
		return lt_nomem(err);
	roaring_bitmap_to_uint32_array(s->e[i].bm, *offsets);
	*n = card;
	return LT_OK;
}

lt_code
lt_rowaddr_set_remove_offsets(lt_rowaddr_set *s, uint32_t frag, const uint32_t *offsets, uint64_t n,
							  uint64_t *removed, lt_error *err)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);
	uint64_t	before;

	if (removed)
		*removed = 0;
	if (!found || n == 0)
		return LT_OK;
	if (s->e[i].full)
		return lt_error_set(err, LT_EINVALID, "row address set: fragment %u is selected whole", frag);
	before = roaring_bitmap_get_cardinality(s->e[i].bm);
	for (uint64_t k = 0; k < n; k++)
		roaring_bitmap_remove(s->e[i].bm, offsets[k]);
	if (removed)
		*removed = before - roaring_bitmap_get_cardinality(s->e[i].bm);
	rs_compact(s);
	return LT_OK;
}

void
lt_rowaddr_set_remove_fragment(lt_rowaddr_set *s, uint32_t frag)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);

	if (!found)
		return;
	if (s->e[i].bm)
		roaring_bitmap_free(s->e[i].bm);
	memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(rs_entry));
	s->n--;
}

lt_code
lt_rowaddr_set_bound_fragment(lt_rowaddr_set *s, uint32_t frag, uint64_t rows, lt_error *err)
{
	bool		found;
	size_t		i = rs_find(s, frag, &found);
	roaring_bitmap_t *bm;

	if (!found)
		return LT_OK;
	if (rows > (UINT64_C(1) << 32))
		return lt_error_set(err, LT_EINVALID, "fragment %u: %llu rows do not fit 32-bit offsets", frag,
							(unsigned long long) rows);
	if (rows == 0)
	{
		lt_rowaddr_set_remove_fragment(s, frag);
		return LT_OK;
	}
	if (!s->e[i].full)
	{
		/* offsets past the fragment's end select nothing */
		if (rows < (UINT64_C(1) << 32))
			roaring_bitmap_remove_range_closed(s->e[i].bm, (uint32_t) rows, UINT32_MAX);
		rs_compact(s);
		return LT_OK;
	}
	if (!(bm = roaring_bitmap_from_range(0, rows, 1)))
		return lt_nomem(err);
	s->e[i].full = false;
	s->e[i].bm = bm;
	return LT_OK;
}

lt_code
lt_rowaddr_set_serialize(const lt_rowaddr_set *s, uint8_t **out, size_t *len, lt_error *err)
{
	size_t		total = 4;
	uint8_t    *buf,
			   *p;

	*out = NULL;
	*len = 0;
	uint32_t	count = 0;

	/* an empty partial entry would read back as "whole fragment": leave it out */
	for (size_t i = 0; i < s->n; i++)
	{
		if (!s->e[i].full && roaring_bitmap_is_empty(s->e[i].bm))
			continue;
		total += 8;
		count++;
		if (!s->e[i].full)
		{
			roaring_bitmap_run_optimize(s->e[i].bm);
			total += roaring_bitmap_portable_size_in_bytes(s->e[i].bm);
		}
	}
	if (!(buf = lt_malloc(total)))
		return lt_nomem(err);
	p = buf;
	lt_put32(p, count);
	p += 4;
	for (size_t i = 0; i < s->n; i++)
	{
		size_t		sz = s->e[i].full ? 0 : roaring_bitmap_portable_size_in_bytes(s->e[i].bm);

		if (!s->e[i].full && roaring_bitmap_is_empty(s->e[i].bm))
			continue;

		lt_put32(p, s->e[i].frag);
		lt_put32(p + 4, (uint32_t) sz);
		p += 8;
		if (sz)
			p += roaring_bitmap_portable_serialize(s->e[i].bm, (char *) p);
	}
	*out = buf;
	*len = (size_t) (p - buf);
	return LT_OK;
}
