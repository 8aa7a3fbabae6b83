/*
 * Fuzz target: RowAddrTreeMap parsing and the row-address set algebra.
 *
 * The input is split at its first byte (a split point) into two maps.  Each
 * map that parses must serialize and parse back to an equal set; and/or/
 * andnot/not of the two must obey the set identities (checked by membership
 * of every address of either input).  Any disagreement aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/lt_alloc.h"
#include "table/lt_roaring.h"

#define MAX_VISIT 20000

typedef struct probe
{
	uint64_t	addrs[MAX_VISIT];
	size_t		n;
} probe;

static int
collect(uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg)
{
	probe	   *p = arg;

	if (full && p->n < MAX_VISIT)
		p->addrs[p->n++] = (uint64_t) frag << 32 | 12345;
	for (size_t i = 0; i < n && p->n < MAX_VISIT; i++)
		p->addrs[p->n++] = (uint64_t) frag << 32 | offsets[i];
	return 0;
}

static lt_rowaddr_set *
parse(const uint8_t *d, size_t n)
{
	lt_rowaddr_set *s;
	lt_error	err;
	size_t		used;
	uint8_t    *buf;
	size_t		len;
	lt_rowaddr_set *back;

	if (lt_rowaddr_set_parse(d, n, &s, &used, &err) != LT_OK)
		return NULL;
	if (used > n)
		abort();
	/* serialize and parse back: the same set */
	if (lt_rowaddr_set_serialize(s, &buf, &len, &err) != LT_OK)
		abort();
	if (lt_rowaddr_set_parse(buf, len, &back, &used, &err) != LT_OK || used != len)
		abort();
	{
		static probe p;

		p.n = 0;
		lt_rowaddr_set_iterate(s, collect, &p);
		for (size_t i = 0; i < p.n; i++)
			if (!lt_rowaddr_set_contains(back, p.addrs[i]))
				abort();
		if (lt_rowaddr_set_cardinality(back, NULL) != lt_rowaddr_set_cardinality(s, NULL))
			abort();
	}
	lt_rowaddr_set_free(back);
	lt_free(buf);
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t		cut;
	lt_rowaddr_set *a,
			   *b,
			   *x,
			   *y,
			   *z,
			   *u;
	lt_error	err;
	static probe p;

	if (size < 1)
		return 0;
	cut = 1 + (size - 1) * data[0] / 255;
	a = parse(data + 1, cut - 1);
	b = parse(data + cut, size - cut);
	if (!a || !b)
	{
		lt_rowaddr_set_free(a);
		lt_rowaddr_set_free(b);
		return 0;
	}
	x = lt_rowaddr_set_copy(a);
	y = lt_rowaddr_set_copy(a);
	z = lt_rowaddr_set_copy(a);
	lt_rowaddr_set_or(x, b, &err);
	lt_rowaddr_set_and(y, b, &err);
	lt_rowaddr_set_andnot(z, b, &err);
	/* a universe: the union with whole fragments bounded to 70000 rows */
	u = lt_rowaddr_set_copy(x);
	p.n = 0;
	lt_rowaddr_set_iterate(a, collect, &p);
	lt_rowaddr_set_iterate(b, collect, &p);
	for (size_t i = 0; i < p.n; i++)
	{
		uint64_t	v = p.addrs[i];
		bool		ia = lt_rowaddr_set_contains(a, v),
					ib = lt_rowaddr_set_contains(b, v);

		if (lt_rowaddr_set_contains(x, v) != (ia || ib) || lt_rowaddr_set_contains(y, v) != (ia && ib))
			abort();
		/* andnot with a whole fragment in a keeps everything but b's offsets (Lance's rule) */
		if (lt_rowaddr_set_contains(z, v) != (ia && !ib))
			abort();
	}
	{
		uint32_t   *ids;
		size_t		n;

		if (lt_rowaddr_set_fragments(u, &ids, &n, &err) == LT_OK)
		{
			for (size_t i = 0; i < n; i++)
				lt_rowaddr_set_bound_fragment(u, ids[i], 70000, &err);
			lt_free(ids);
		}
		lt_rowaddr_set_not(z, u, &err);	/* universe minus (a - b) */
		for (size_t i = 0; i < p.n; i++)
		{
			uint64_t	v = p.addrs[i];

			if (lt_rowaddr_set_contains(u, v) &&
				lt_rowaddr_set_contains(z, v) == (lt_rowaddr_set_contains(a, v) && !lt_rowaddr_set_contains(b, v)))
				abort();
		}
	}
	lt_rowaddr_set_free(a);
	lt_rowaddr_set_free(b);
	lt_rowaddr_set_free(x);
	lt_rowaddr_set_free(y);
	lt_rowaddr_set_free(z);
	lt_rowaddr_set_free(u);
	return 0;
}
