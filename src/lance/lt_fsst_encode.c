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
load(const uint8_t *p, size_t n)
{
	uint64_t	v = 0;

	memcpy(&v, p, n > 8 ? 8 : n);
	return v;
}

static uint64_t
mask_len(unsigned len)
{
	return len >= 8 ? ~(uint64_t) 0 : (((uint64_t) 1 << (8 * len)) - 1);
}

/* Index symbols by first byte, longest first, for greedy longest-match. */
static void
build_index(lt_fsst_encoder *e)
{
	int			order[256];
	int			n = e->table.n_symbols;

	for (int i = 0; i < n; i++)
		order[i] = i;
	/* sort codes by length descending (insertion sort: at most 255) */
	for (int i = 1; i < n; i++)
	{
		int			c = order[i],
					j = i;

		while (j > 0 && e->table.lens[order[j - 1]] < e->table.lens[c])
		{
			order[j] = order[j - 1];
			j--;
		}
		order[j] = c;
	}
	memset(e->first, 0, sizeof(e->first));
	for (int i = 0; i < n; i++)
		e->first[(uint8_t) e->table.symbols[order[i]]]++;
	for (int b = 0, at = 0; b < 256; b++)
	{
		int			cnt = e->first[b];

		e->start[b] = (uint16_t) at;
		at += cnt;
		e->first[b] = 0;
	}
	for (int i = 0; i < n; i++)
	{
		uint8_t		b = (uint8_t) e->table.symbols[order[i]];

		e->by_first[e->start[b] + e->first[b]++] = (uint8_t) order[i];
	}
}

/* The code of the longest symbol at p (n bytes left), or -1. */
static inline int
longest(const lt_fsst_encoder *e, const uint8_t *p, size_t n)
{
	uint64_t	w = load(p, n);
	int			s = e->start[p[0]],
				k = e->first[p[0]];

	for (int i = 0; i < k; i++)
	{
		int			c = e->by_first[s + i];
		unsigned	l = e->table.lens[c];

		if (l <= n && ((w ^ e->table.symbols[c]) & mask_len(l)) == 0)
			return c;
	}
	return -1;
}

size_t
lt_fsst_encode(const lt_fsst_encoder *e, const uint8_t *in, size_t len, uint8_t *out)
{
	size_t		o = 0;

	for (size_t i = 0; i < len;)
	{
		int			c = longest(e, in + i, len - i);

		if (c < 0)
		{
			out[o++] = LT_FSST_ESC;
			out[o++] = in[i++];
		}
		else
		{
			out[o++] = (uint8_t) c;
			i += e->table.lens[c];
		}
	}
	return o;
}

static void
add_cand(cand *ht, uint64_t sym, unsigned len, uint64_t gain)
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
			return;
		}
		if (c->sym == sym && c->len == len)
		{
			c->gain += gain;
			return;
		}
		h = (h + 1) & (CAND_SLOTS - 1);
	}
}

lt_code
lt_fsst_train(const uint8_t *data, const int64_t *offsets, int64_t n, lt_fsst_encoder *e, lt_error *err)
{
	uint32_t   *c1 = lt_calloc(N_CODES, sizeof(uint32_t));
	uint32_t   *c2 = lt_calloc((size_t) N_CODES * N_CODES, sizeof(uint32_t));
	cand	   *ht = lt_calloc(CAND_SLOTS, sizeof(cand));
	lt_code		rc = LT_OK;
	int64_t		step;

	memset(e, 0, sizeof(*e));
	e->table.enabled = true;
	if (!c1 || !c2 || !ht)
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

		memset(c1, 0, N_CODES * sizeof(uint32_t));
		memset(c2, 0, (size_t) N_CODES * N_CODES * sizeof(uint32_t));
		build_index(e);
		for (int64_t i = 0; i < n; i += step)
		{
			const uint8_t *p = data + offsets[i];
			size_t		len = (size_t) (offsets[i + 1] - offsets[i]);
			int			prev = -1;

			for (size_t j = 0; j < len;)
			{
				int			c = longest(e, p + j, len - j);
				int			code = c < 0 ? 256 + p[j] : c;

				j += c < 0 ? 1 : e->table.lens[c];
				c1[code]++;
				if (prev >= 0)
					c2[prev * N_CODES + code]++;
				prev = code;
			}
		}
		/* candidates: each symbol in use, and each pair that fits in 8 bytes */
		memset(ht, 0, CAND_SLOTS * sizeof(cand));
		for (int a = 0; a < N_CODES; a++)
		{
			uint64_t	sa;
			unsigned	la;

			if (!c1[a])
				continue;
			sa = a >= 256 ? (uint64_t) (a - 256) : e->table.symbols[a];
			la = a >= 256 ? 1 : e->table.lens[a];
			/* an escaped byte costs two output bytes: as a symbol it saves one per use */
			add_cand(ht, sa, la, (uint64_t) c1[a] * (a >= 256 ? 2 : la));
			for (int b = 0; b < N_CODES; b++)
			{
				uint32_t	cnt = c2[a * N_CODES + b];
				uint64_t	sb;
				unsigned	lb;

				if (!cnt)
					continue;
				sb = b >= 256 ? (uint64_t) (b - 256) : e->table.symbols[b];
				lb = b >= 256 ? 1 : e->table.lens[b];
				if (la + lb > 8)
					continue;
				add_cand(ht, sa | (sb << (8 * la)), la + lb, (uint64_t) cnt * (la + lb));
			}
		}
		/* keep the 255 best */
		{
			lt_fsst_table t = {0};
			int			k = 0;

			for (int h = 0; h < CAND_SLOTS; h++)
				if (ht[h].used)
					ht[k++] = ht[h];
			qsort(ht, (size_t) k, sizeof(cand), by_gain);
			t.enabled = true;
			for (int i = 0; i < k && nsel < 255; i++)
			{
				t.symbols[nsel] = ht[i].sym & mask_len(ht[i].len);
				t.lens[nsel] = ht[i].len;
				nsel++;
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
