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
 *
 * Two tables are trained: the paper's, which keeps at most one symbol of 3
 * bytes or more per bucket of a hash of the first 3 bytes (a match is then a
 * lookup and a compare, and four runs of strings are compressed side by side),
 * and one without that limit, which compresses better when many good symbols
 * share their first bytes (few words, small alphabets).  The one that
 * compresses the sample better is kept (the paper's on a tie).
 */
#include "encoding/lt_fsst.h"

#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"

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

static inline unsigned
long_bucket(uint64_t w)
{
	return ((uint32_t) (w & 0xffffff) * 0x9E3779B1u) >> (32 - 11);
}

_Static_assert(LT_FSST_LONG_BUCKETS == 1 << 11, "long_bucket() makes 11 bits");

/* Build the longest-match index of e->table (see lt_fsst_encoder). */
static void
build_index(lt_fsst_encoder *e)
{
	const lt_fsst_table *t = &e->table;
	uint16_t	count[LT_FSST_LONG_BUCKETS] = {0};
	int			order[256];
	int			n_long = 0;

	uint16_t   *single = e->short2 + 65536;

	for (int b = 0; b < 256; b++)
		single[b] = 0;
	for (int c = 0; c < t->n_symbols; c++)
		if (t->lens[c] == 1)
			single[t->symbols[c] & 0xff] = (uint16_t) (c | 1 << 8);
	for (int w = 0; w < 65536; w++)
		e->short2[w] = single[w & 0xff];
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
	e->one_per_bucket = true;
	for (int i = 0; i < n_long; i++)
		if (++count[long_bucket(t->symbols[order[i]])] > 1)
			e->one_per_bucket = false;
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
		e->longs[k].mask = mask_len(t->lens[c]);
		e->longs[k].need = t->lens[c];
		e->longs[k].match = (uint32_t) (c | t->lens[c] << 8);
	}
	for (int b = 0; b < LT_FSST_LONG_BUCKETS; b++)
	{
		lt_fsst_long *l = &e->slot[b];

		if (e->one_per_bucket && e->long_start[b + 1] > e->long_start[b])
			*l = e->longs[e->long_start[b]];
		else
		{
			l->sym = 1;			/* w & 0 is never 1 */
			l->mask = 0;
			l->need = UINT32_MAX;
			l->match = 0;
		}
	}
}

static inline bool
long_hit(const lt_fsst_long *l, uint64_t w, size_t n)
{
	return ((w & l->mask) == l->sym) & (l->need <= n);
}

/*
 * The longest symbol that matches the input whose next bytes are w (n of them left, n >= 1;
 * bytes of w past n are ignored): code | length << 8, or length 0 for none.  The same choice
 * as trying every symbol longest first: at most one symbol of each length can match.
 */
static inline unsigned
longest_in(const lt_fsst_encoder *e, uint64_t w, size_t n, bool one_per_bucket)
{
	unsigned	b = long_bucket(w);
	unsigned	shorter = e->short2[n >= 2 ? (unsigned) (w & 0xffff) : 65536 + (unsigned) (w & 0xff)];

	if (one_per_bucket)
	{
		/* all ones when the bucket's symbol matches: selects without a branch */
		unsigned	hit = -(unsigned) long_hit(&e->slot[b], w, n);

		return (e->slot[b].match & hit) | (shorter & ~hit);
	}
	for (unsigned k = e->long_start[b], end = e->long_start[b + 1]; k < end; k++)
		if (long_hit(&e->longs[k], w, n))
			return e->longs[k].match;
	return shorter;
}

static inline unsigned
longest(const lt_fsst_encoder *e, uint64_t w, size_t n)
{
	return e->one_per_bucket ? longest_in(e, w, n, true) : longest_in(e, w, n, false);
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

/* The next bytes at p as a little-endian word, where only `left` (>= 1) may be loaded. */
static inline uint64_t
load_word(const uint8_t *p, size_t left)
{
	uint64_t	w;

	if (left >= 8)
		memcpy(&w, p, 8);
	else
		w = load_tail(p, left);
	return w;
}

/* Compress in[0, len) into out; bytes up to lim (>= in + len) may be loaded. */
static inline uint8_t *
encode_one(const lt_fsst_encoder *e, const uint8_t *in, size_t len, const uint8_t *lim, uint8_t *out,
		   bool one_per_bucket)
{
	const uint8_t *end = in + len;

	while (in < end)
	{
		uint64_t	w;
		unsigned	m,
					n,
					esc;

		w = load_word(in, (size_t) (lim - in));
		m = longest_in(e, w, (size_t) (end - in), one_per_bucket);
		n = m >> 8;
		esc = n == 0;
		/* a symbol's code, or an escape (m is 0 then) and the byte: both are stored, 1 or 2 kept */
		out[0] = (uint8_t) (m | -esc);
		out[1] = (uint8_t) w;
		out += 1 + esc;
		in += n + esc;
	}
	return out;
}

size_t
lt_fsst_encode(const lt_fsst_encoder *e, const uint8_t *in, size_t len, uint8_t *out)
{
	uint8_t    *o = e->one_per_bucket ? encode_one(e, in, len, in + len, out, true)
		: encode_one(e, in, len, in + len, out, false);

	return (size_t) (o - out);
}

static inline size_t
encode_all(const lt_fsst_encoder *e, const uint8_t *data, const int64_t *offsets, int64_t n, uint8_t *out,
		   int64_t *out_offsets, bool one_per_bucket)
{
	const uint8_t *lim = data + (n > 0 ? offsets[n] : 0);
	uint8_t    *o = out;

	out_offsets[0] = 0;
	for (int64_t i = 0; i < n; i++)
	{
		o = encode_one(e, data + offsets[i], (size_t) (offsets[i + 1] - offsets[i]), lim, o, one_per_bucket);
		out_offsets[i + 1] = (int64_t) (o - out);
	}
	return (size_t) (o - out);
}

/*
 * A code of the fast path depends on the one before it (where the next symbol starts), and
 * the lookups take longer than the work: four runs of strings are compressed side by side
 * so that their chains overlap, each into its own stretch of out (room for twice its
 * input), then closed up.  The strings of run j are [first[j], first[j + 1]).
 */
#define RUNS 4

typedef struct enc_run
{
	const uint8_t *in,
			   *end;			/* the current string's rest */
	uint8_t    *o,
			   *base;			/* output position, start of the run's stretch */
	int64_t		s,
				last;			/* the current string, the run's end */
} enc_run;

/* Past a string's end: record it, go on to the next one with bytes (false: the run is done). */
static inline bool
run_next(enc_run *r, const uint8_t *data, const int64_t *offsets, int64_t *out_offsets)
{
	while (r->in >= r->end)
	{
		out_offsets[r->s + 1] = (int64_t) (r->o - r->base);
		if (++r->s >= r->last)
			return false;
		r->in = data + offsets[r->s];
		r->end = data + offsets[r->s + 1];
	}
	return true;
}

/* One code of a run whose state is in (not address-taken) locals: they stay in registers. */
#define RUN_STEP(e, lim, in, end, o, one_per_bucket) \
	do { \
		uint64_t	w_; \
		unsigned	m_, \
					n_, \
					esc_; \
		w_ = load_word((in), (size_t) ((lim) - (in))); \
		m_ = longest_in((e), w_, (size_t) ((end) - (in)), (one_per_bucket)); \
		n_ = m_ >> 8; \
		esc_ = n_ == 0; \
		(o)[0] = (uint8_t) (m_ | -esc_); \
		(o)[1] = (uint8_t) w_; \
		(o) += 1 + esc_; \
		(in) += n_ + esc_; \
	} while (0)

static inline size_t
encode_runs(const lt_fsst_encoder *e, const uint8_t *data, const int64_t *offsets, int64_t n, uint8_t *out,
			int64_t *out_offsets, bool one_per_bucket)
{
	const uint8_t *lim = data + offsets[n];
	enc_run		r[RUNS];
	bool		live[RUNS];
	int64_t		first[RUNS + 1];
	size_t		pos;

	for (int j = 0; j <= RUNS; j++)
		first[j] = n * j / RUNS;
	for (int j = 0; j < RUNS; j++)
	{
		r[j].s = first[j];
		r[j].last = first[j + 1];
		r[j].base = r[j].o = out + 2 * (offsets[first[j]] - offsets[0]);
		live[j] = r[j].s < r[j].last;
		if (live[j])
		{
			r[j].in = data + offsets[r[j].s];
			r[j].end = data + offsets[r[j].s + 1];
			live[j] = run_next(&r[j], data, offsets, out_offsets);	/* past empty strings */
		}
	}
	out_offsets[0] = 0;
	if (live[0] & live[1] & live[2] & live[3])
	{
		const uint8_t *in0 = r[0].in, *in1 = r[1].in, *in2 = r[2].in, *in3 = r[3].in;
		const uint8_t *end0 = r[0].end, *end1 = r[1].end, *end2 = r[2].end, *end3 = r[3].end;
		uint8_t    *o0 = r[0].o, *o1 = r[1].o, *o2 = r[2].o, *o3 = r[3].o;
		bool		all = true;

		/* a string's end: the state goes through r[j] and back (rare: the locals stay in registers) */
#define RUN_END(j) \
		if (__builtin_expect(in##j >= end##j, 0)) \
		{ \
			r[j].in = in##j; \
			r[j].o = o##j; \
			live[j] = run_next(&r[j], data, offsets, out_offsets); \
			all &= live[j]; \
			in##j = r[j].in; \
			end##j = r[j].end; \
		}
		while (all)
		{
			RUN_STEP(e, lim, in0, end0, o0, one_per_bucket);
			RUN_STEP(e, lim, in1, end1, o1, one_per_bucket);
			RUN_STEP(e, lim, in2, end2, o2, one_per_bucket);
			RUN_STEP(e, lim, in3, end3, o3, one_per_bucket);
			RUN_END(0);
			RUN_END(1);
			RUN_END(2);
			RUN_END(3);
		}
#undef RUN_END
		r[0].in = in0, r[1].in = in1, r[2].in = in2, r[3].in = in3;
		r[0].o = o0, r[1].o = o1, r[2].o = o2, r[3].o = o3;
	}
	for (int j = 0; j < RUNS; j++)
		while (live[j])
		{
			RUN_STEP(e, lim, r[j].in, r[j].end, r[j].o, one_per_bucket);
			if (r[j].in >= r[j].end)
				live[j] = run_next(&r[j], data, offsets, out_offsets);
		}
	/* close up: run j's output moves to the end of run j - 1's; its offsets were relative */
	pos = 0;
	for (int j = 0; j < RUNS; j++)
	{
		size_t		len = (size_t) (r[j].o - r[j].base);

		if (first[j] == first[j + 1])
			continue;
		if (out + pos != r[j].base)
			memmove(out + pos, r[j].base, len);
		for (int64_t i = first[j] + 1; i <= first[j + 1]; i++)
			out_offsets[i] += (int64_t) pos;
		pos += len;
	}
	return pos;
}

size_t
lt_fsst_encode_all(const lt_fsst_encoder *e, const uint8_t *data, const int64_t *offsets, int64_t n,
				   uint8_t *out, int64_t *out_offsets)
{
	/* (the search of the other tables mispredicts too often for runs to gain) */
	if (e->one_per_bucket && n >= 4 * RUNS)
		return encode_runs(e, data, offsets, n, out, out_offsets, true);
	return e->one_per_bucket ? encode_all(e, data, offsets, n, out, out_offsets, true)
		: encode_all(e, data, offsets, n, out, out_offsets, false);
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

/* Buffers of a training, shared by its two runs. */
typedef struct trainer
{
	uint32_t   *c1;				/* count per code */
	uint32_t   *c2;				/* count per pair of codes */
	cand	   *ht;				/* candidates by symbol */
	cand	   *best;			/* the selection heap */
	int32_t    *bucket_best;	/* per bucket of the index: the best long candidate (index in used) */
	u32list		pairs;			/* c2 cells counted this round */
	u32list		used;			/* ht slots filled this round */
} trainer;

/*
 * The rounds of training into e, over the strings i = 0, step, 2 step, ... of n.  With
 * one_per_bucket, a candidate of 3 bytes or more is kept only if it is the best of its bucket
 * of the longest-match index (as the FSST paper's lossy perfect hash does).
 */
static lt_code
train_rounds(trainer *tr, const uint8_t *data, const int64_t *offsets, int64_t n, int64_t step,
			 bool one_per_bucket, lt_fsst_encoder *e, lt_error *err)
{
	uint32_t   *c1 = tr->c1,
			   *c2 = tr->c2;
	cand	   *ht = tr->ht,
			   *best = tr->best;

	memset(e, 0, sizeof(*e));
	e->table.enabled = true;
	for (int round = 0; round < ROUNDS; round++)
	{
		int			nsel = 0;

		/* counts of the previous round: only the cells it touched */
		memset(c1, 0, N_CODES * sizeof(uint32_t));
		for (size_t i = 0; i < tr->pairs.n; i++)
			c2[tr->pairs.v[i]] = 0;
		tr->pairs.n = 0;
		for (size_t i = 0; i < tr->used.n; i++)
			ht[tr->used.v[i]].used = false;
		tr->used.n = 0;

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

				w = load_word(p + j, left);
				m = longest(e, w, left);
				code = (m >> 8) ? (int) (m & 0xff) : 256 + p[j];
				j += (m >> 8) ? (m >> 8) : 1;
				c1[code]++;
				if (prev >= 0 && c2[prev * N_CODES + code]++ == 0 &&
					!u32_push(&tr->pairs, (uint32_t) (prev * N_CODES + code)))
					return lt_nomem(err);
				prev = code;
			}
		}
		/* candidates: each symbol in use, and each pair that fits in 8 bytes */
		for (int a = 0; a < N_CODES; a++)
		{
			if (!c1[a])
				continue;
			/* an escaped byte costs two output bytes: as a symbol it saves one per use */
			if (!add_cand(ht, &tr->used, a >= 256 ? (uint64_t) (a - 256) : e->table.symbols[a],
						  a >= 256 ? 1 : e->table.lens[a], (uint64_t) c1[a] * (a >= 256 ? 2 : e->table.lens[a])))
				return lt_nomem(err);
		}
		for (size_t i = 0; i < tr->pairs.n; i++)
		{
			int			a = (int) (tr->pairs.v[i] / N_CODES),
						b = (int) (tr->pairs.v[i] % N_CODES);
			uint64_t	sa = a >= 256 ? (uint64_t) (a - 256) : e->table.symbols[a];
			unsigned	la = a >= 256 ? 1 : e->table.lens[a];
			uint64_t	sb = b >= 256 ? (uint64_t) (b - 256) : e->table.symbols[b];
			unsigned	lb = b >= 256 ? 1 : e->table.lens[b];

			if (la + lb > 8)
				continue;
			if (!add_cand(ht, &tr->used, sa | (sb << (8 * la)), la + lb, (uint64_t) c2[tr->pairs.v[i]] * (la + lb)))
				return lt_nomem(err);
		}
		if (one_per_bucket)
		{
			for (int k = 0; k < LT_FSST_LONG_BUCKETS; k++)
				tr->bucket_best[k] = -1;
			for (size_t i = 0; i < tr->used.n; i++)
			{
				const cand *c = &ht[tr->used.v[i]];

				if (c->len >= 3)
				{
					int32_t    *b = &tr->bucket_best[long_bucket(c->sym)];

					if (*b < 0 || worse(&ht[tr->used.v[*b]], c))
						*b = (int32_t) i;
				}
			}
		}
		/* keep the 255 best (by_gain order): a heap whose root is the worst kept */
		{
			lt_fsst_table t = {0};

			for (size_t i = 0; i < tr->used.n; i++)
			{
				const cand *c = &ht[tr->used.v[i]];

				if (one_per_bucket && c->len >= 3 && tr->bucket_best[long_bucket(c->sym)] != (int32_t) i)
					continue;
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
	return LT_OK;
}

/* Bytes the sampled strings compress to with e. */
static uint64_t
sample_size(const lt_fsst_encoder *e, const uint8_t *data, const int64_t *offsets, int64_t n, int64_t step)
{
	uint64_t	size = 0;

	for (int64_t i = 0; i < n; i += step)
	{
		const uint8_t *p = data + offsets[i];
		size_t		len = (size_t) (offsets[i + 1] - offsets[i]);

		for (size_t j = 0; j < len;)
		{
			size_t		left = len - j;
			uint64_t	w;
			unsigned	m;

			w = load_word(p + j, left);
			m = longest(e, w, left);
			j += (m >> 8) ? (m >> 8) : 1;
			size += (m >> 8) ? 1 : 2;
		}
	}
	return size;
}

lt_code
lt_fsst_train(const uint8_t *data, const int64_t *offsets, int64_t n, lt_fsst_encoder *e, lt_error *err)
{
	trainer		tr = {0};
	lt_fsst_encoder *other = lt_malloc(sizeof(lt_fsst_encoder));
	lt_code		rc;
	int64_t		step;

	tr.c1 = lt_calloc(N_CODES, sizeof(uint32_t));
	tr.c2 = lt_calloc((size_t) N_CODES * N_CODES, sizeof(uint32_t));
	tr.ht = lt_calloc(CAND_SLOTS, sizeof(cand));
	tr.best = lt_malloc(255 * sizeof(cand));
	tr.bucket_best = lt_malloc(LT_FSST_LONG_BUCKETS * sizeof(int32_t));
	if (!other || !tr.c1 || !tr.c2 || !tr.ht || !tr.best || !tr.bucket_best)
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
	/*
	 * The FSST paper's table encodes fastest; without its limit, inputs with few distinct
	 * 3-byte prefixes (a small alphabet, many strings sharing a long prefix) compress better.
	 */
	rc = train_rounds(&tr, data, offsets, n, step, true, e, err);
	if (rc == LT_OK)
		rc = train_rounds(&tr, data, offsets, n, step, false, other, err);
	if (rc == LT_OK && sample_size(other, data, offsets, n, step) < sample_size(e, data, offsets, n, step))
		memcpy(e, other, sizeof(*e));
out:
	lt_free(other);
	lt_free(tr.c1);
	lt_free(tr.c2);
	lt_free(tr.ht);
	lt_free(tr.best);
	lt_free(tr.bucket_best);
	lt_free(tr.pairs.v);
	lt_free(tr.used.v);
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
