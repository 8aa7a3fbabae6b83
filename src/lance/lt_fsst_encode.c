/*
 * lt_fsst_encode.c — FSST compression (the writer's side of lt_fsst.h).
 *
 * The symbol table is built as the FSST paper describes: a few rounds over
 * a sample, each compressing it with the current table, counting how often
 * every symbol and every pair of adjacent symbols occurs, and keeping the
 * 255 candidates (symbols and concatenated pairs of up to 8 bytes) with the
 * largest gain (count x length).  Bytes without a symbol are escaped (255,
 * then the byte).  The table is exported in the layout the Lance fsst crate
 * reads (lt_fsst_parse).
 */
#include "lt_fsst.h"

#include <stdlib.h>
#include <string.h>

#include "lt_alloc.h"
#include "lt_bytes.h"

#define FSST_MAGIC 0x46535354ULL
#define SAMPLE_BYTES (32 * 1024)
#define ROUNDS 5
#define N_CODES 512				/* 0..255 symbols, 256 + b: escaped byte b */
#define CAND_SLOTS 65536

typedef struct cand
{
	uint64_t	sym;
	uint8_t		len;
	uint64_t	gain;
	bool		used;
} cand;

static int
by_gain(const void *a, const void *b)
{
	const cand *x = a,
			   *y = b;

	if (x->gain != y->gain)
		return x->gain < y->gain ? 1 : -1;
	return x->len != y->len ? (x->len < y->len ? 1 : -1) : (x->sym < y->sym ? -1 : x->sym > y->sym);
}

static uint64_t
sym_hash(uint64_t s, unsigned len)
{
	uint64_t	h = (s ^ ((uint64_t) len << 59)) * 0x9E3779B97F4A7C15ULL;

	return h >> 48;
}

static uint64_t
mask_len(unsigned len)
{
	return len >= 8 ? ~(uint64_t) 0 : (((uint64_t) 1 << (8 * len)) - 1);
}

static const uint64_t len_mask[9] = {
	0, 0xffULL, 0xffffULL, 0xffffffULL, 0xffffffffULL, 0xffffffffffULL, 0xffffffffffffULL,
	0xffffffffffffffULL, ~0ULL
};

static inline unsigned
long_bucket(uint64_t w)
{
	return (unsigned) (((uint32_t) (w & 0xffffff) * 0x9E3779B1u) >> 22) & (LT_FSST_LONG_BUCKETS - 1);
}

/* Build the longest-match index of e->table (see lt_fsst_encoder). */
static void
build_index(lt_fsst_encoder *e)
{
	const lt_fsst_table *t = &e->table;
	uint16_t	count[LT_FSST_LONG_BUCKETS] = {0};
	int			order[256];
	int			n_long = 0;

	for (int b = 0; b < 256; b++)
		e->single[b] = 0;
	for (int c = 0; c < t->n_symbols; c++)
		if (t->lens[c] == 1)
			e->single[t->symbols[c] & 0xff] = (uint16_t) (c | 1 << 8);
	for (int w = 0; w < 65536; w++)
		e->short2[w] = e->single[w & 0xff];
	for (int c = 0; c < t->n_symbols; c++)
		if (t->lens[c] == 2)
			e->short2[t->symbols[c] & 0xffff] = (uint16_t) (c | 2 << 8);

	/* long symbols by bucket, longest first (insertion sort by length: at most 255) */
	for (int c = 0; c < t->n_symbols; c++)
		if (t->lens[c] >= 3)
		{
			int			j = n_long++;

			while (j > 0 && t->lens[order[j - 1]] < t->lens[c])
			{
				order[j] = order[j - 1];
				j--;
			}
			order[j] = c;
		}
	for (int i = 0; i < n_long; i++)
		count[long_bucket(t->symbols[order[i]])]++;
	e->long_start[0] = 0;
	for (int b = 0; b < LT_FSST_LONG_BUCKETS; b++)
		e->long_start[b + 1] = (uint16_t) (e->long_start[b] + count[b]);
	memset(count, 0, sizeof(count));
	for (int i = 0; i < n_long; i++)
	{
		int			c = order[i];
		unsigned	b = long_bucket(t->symbols[c]);
		int			k = e->long_start[b] + count[b]++;

		e->longs[k].sym = t->symbols[c];
		e->longs[k].mask = len_mask[t->lens[c]];
		e->longs[k].len = t->lens[c];
		e->longs[k].match = (uint32_t) (c | t->lens[c] << 8);
	}
}

/*
 * The longest symbol that matches the input whose next bytes are w (n of them left, n >= 1):
 * code | length << 8, or length 0 for none.  The same choice as trying every symbol longest
 * first: at most one symbol of each length can match.
 */
static inline unsigned
longest(const lt_fsst_encoder *e, uint64_t w, size_t n)
{
	if (n >= 3)
	{
		unsigned	b = long_bucket(w);

		for (unsigned k = e->long_start[b], end = e->long_start[b + 1]; k < end; k++)
			if (((w ^ e->longs[k].sym) & e->longs[k].mask) == 0 && e->longs[k].len <= n)
				return e->longs[k].match;
	}
	return n >= 2 ? e->short2[w & 0xffff] : e->single[w & 0xff];
}

/* The next n (< 8) bytes at p as a little-endian word. */
static inline uint64_t
load_tail(const uint8_t *p, size_t n)
{
	uint64_t	w = 0;

	for (size_t k = 0; k < n; k++)
		w |= (uint64_t) p[k] << (8 * k);
	return w;
}

size_t
lt_fsst_encode(const lt_fsst_encoder *e, const uint8_t *in, size_t len, uint8_t *out)
{
	size_t		o = 0;
	size_t		i = 0;

	while (i < len)
	{
		size_t		n = len - i;
		uint64_t	w;
		unsigned	m;

		if (n >= 8)
			memcpy(&w, in + i, 8);
		else
			w = load_tail(in + i, n);
		m = longest(e, w, n);
		if (m >> 8)
		{
			out[o++] = (uint8_t) m;
			i += m >> 8;
		}
		else
		{
			out[o++] = LT_FSST_ESC;
			out[o++] = in[i++];
		}
	}
	return o;
}

/* Growable list of uint32 (pairs seen, candidate slots used). */
typedef struct u32list
{
	uint32_t   *v;
	size_t		n, cap;
} u32list;

static bool
u32_push(u32list *l, uint32_t x)
{
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? l->cap * 2 : 4096;
		uint32_t   *p = lt_realloc(l->v, cap * sizeof(uint32_t));

		if (!p)
			return false;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return true;
}

static bool
add_cand(cand *ht, u32list *used, uint64_t sym, unsigned len, uint64_t gain)
{
	uint64_t	h = sym_hash(sym, len) & (CAND_SLOTS - 1);

	for (;;)
	{
		cand	   *c = &ht[h];

		if (!c->used)
		{
			c->used = true;
			c->sym = sym;
			c->len = (uint8_t) len;
			c->gain = gain;
			return u32_push(used, (uint32_t) h);
		}
		if (c->sym == sym && c->len == len)
		{
			c->gain += gain;
			return true;
		}
		h = (h + 1) & (CAND_SLOTS - 1);
	}
}

/* by_gain order as a "comes later" test for the selection heap (its root is the worst kept). */
static inline bool
worse(const cand *x, const cand *y)
{
	return by_gain(x, y) > 0;
}

static void
sift_down(cand *heap, int n, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					m = i;
		cand		t;

		if (l < n && worse(&heap[l], &heap[m]))
			m = l;
		if (r < n && worse(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

lt_code
lt_fsst_train(const uint8_t *data, const int64_t *offsets, int64_t n, lt_fsst_encoder *e, lt_error *err)
{
	uint32_t   *c1 = lt_calloc(N_CODES, sizeof(uint32_t));
	uint32_t   *c2 = lt_calloc((size_t) N_CODES * N_CODES, sizeof(uint32_t));
	cand	   *ht = lt_calloc(CAND_SLOTS, sizeof(cand));
	cand	   *best = lt_malloc(255 * sizeof(cand));
	u32list		pairs = {0};	/* c2 cells counted this round */
	u32list		used = {0};		/* ht slots filled this round */
	lt_code		rc = LT_OK;
	int64_t		step;

	memset(e, 0, sizeof(*e));
	e->table.enabled = true;
	if (!c1 || !c2 || !ht || !best)
	{
		rc = lt_nomem(err);
		goto out;
	}
	/* a sample of whole strings spread over the input, about SAMPLE_BYTES */
	{
		int64_t		total = n > 0 ? offsets[n] - offsets[0] : 0;

		step = total > SAMPLE_BYTES ? total / SAMPLE_BYTES : 1;
		if (step < 1)
			step = 1;
	}
	for (int round = 0; round < ROUNDS; round++)
	{
		int			nsel = 0;

		/* counts of the previous round: only the cells it touched */
		memset(c1, 0, N_CODES * sizeof(uint32_t));
		for (size_t i = 0; i < pairs.n; i++)
			c2[pairs.v[i]] = 0;
		pairs.n = 0;
		for (size_t i = 0; i < used.n; i++)
			ht[used.v[i]].used = false;
		used.n = 0;

		build_index(e);
		for (int64_t i = 0; i < n; i += step)
		{
			const uint8_t *p = data + offsets[i];
			size_t		len = (size_t) (offsets[i + 1] - offsets[i]);
			int			prev = -1;

			for (size_t j = 0; j < len;)
			{
				size_t		left = len - j;
				uint64_t	w;
				unsigned	m;
				int			code;

				if (left >= 8)
					memcpy(&w, p + j, 8);
				else
					w = load_tail(p + j, left);
				m = longest(e, w, left);
				code = (m >> 8) ? (int) (m & 0xff) : 256 + p[j];
				j += (m >> 8) ? (m >> 8) : 1;
				c1[code]++;
				if (prev >= 0 && c2[prev * N_CODES + code]++ == 0 &&
					!u32_push(&pairs, (uint32_t) (prev * N_CODES + code)))
				{
					rc = lt_nomem(err);
					goto out;
				}
				prev = code;
			}
		}
		/* candidates: each symbol in use, and each pair that fits in 8 bytes */
		for (int a = 0; a < N_CODES; a++)
		{
			if (!c1[a])
				continue;
			/* an escaped byte costs two output bytes: as a symbol it saves one per use */
			if (!add_cand(ht, &used, a >= 256 ? (uint64_t) (a - 256) : e->table.symbols[a],
						  a >= 256 ? 1 : e->table.lens[a], (uint64_t) c1[a] * (a >= 256 ? 2 : e->table.lens[a])))
			{
				rc = lt_nomem(err);
				goto out;
			}
		}
		for (size_t i = 0; i < pairs.n; i++)
		{
			int			a = (int) (pairs.v[i] / N_CODES),
						b = (int) (pairs.v[i] % N_CODES);
			uint64_t	sa = a >= 256 ? (uint64_t) (a - 256) : e->table.symbols[a];
			unsigned	la = a >= 256 ? 1 : e->table.lens[a];
			uint64_t	sb = b >= 256 ? (uint64_t) (b - 256) : e->table.symbols[b];
			unsigned	lb = b >= 256 ? 1 : e->table.lens[b];

			if (la + lb > 8)
				continue;
			if (!add_cand(ht, &used, sa | (sb << (8 * la)), la + lb, (uint64_t) c2[pairs.v[i]] * (la + lb)))
			{
				rc = lt_nomem(err);
				goto out;
			}
		}
		/* keep the 255 best (by_gain order): a heap whose root is the worst kept */
		{
			lt_fsst_table t = {0};

			for (size_t i = 0; i < used.n; i++)
			{
				const cand *c = &ht[used.v[i]];

				if (nsel < 255)
				{
					int			k = nsel++;

					best[k] = *c;
					/* sift up */
					while (k > 0 && worse(&best[k], &best[(k - 1) / 2]))
					{
						cand		tmp = best[k];

						best[k] = best[(k - 1) / 2];
						best[(k - 1) / 2] = tmp;
						k = (k - 1) / 2;
					}
				}
				else if (worse(&best[0], c))
				{
					best[0] = *c;
					sift_down(best, nsel, 0);
				}
			}
			qsort(best, (size_t) nsel, sizeof(cand), by_gain);
			t.enabled = true;
			for (int i = 0; i < nsel; i++)
			{
				t.symbols[i] = best[i].sym & mask_len(best[i].len);
				t.lens[i] = best[i].len;
			}
			t.n_symbols = nsel;
			e->table = t;
		}
	}
	build_index(e);
out:
	lt_free(c1);
	lt_free(c2);
	lt_free(ht);
	lt_free(best);
	lt_free(pairs.v);
	lt_free(used.v);
	return rc;
}

void
lt_fsst_export(const lt_fsst_table *t, uint8_t *out)
{
	uint64_t	info = (FSST_MAGIC << 32) | ((uint64_t) (t->enabled ? 1 : 0) << 24) | (uint64_t) (t->n_symbols & 255);
	size_t		pos = 8;

	memset(out, 0, LT_FSST_TABLE_SIZE);
	lt_put64(out, info);
	for (int i = 0; i < t->n_symbols; i++, pos += 8)
		lt_put64(out + pos, t->symbols[i]);
	for (int i = 0; i < t->n_symbols; i++)
		out[pos++] = t->lens[i];
}
