/*
 * lt_bufpool.c — I/O buffers recycled from one file (fragment) to the next.
 */
#include "lt_bufpool.h"

#include <string.h>

struct lt_bufpool
{
	lt_allocator a;
	int			n;
	uint8_t    *buf[LT_BUFPOOL_MAX];
	uint64_t	cap[LT_BUFPOOL_MAX];
};

lt_bufpool *
lt_bufpool_create(const lt_allocator *a)
{
	lt_bufpool *pool = a->malloc_fn(sizeof(lt_bufpool), a->ctx);

	if (!pool)
		return NULL;
	memset(pool, 0, sizeof(*pool));
	pool->a = *a;
	return pool;
}

void
lt_bufpool_destroy(lt_bufpool *pool)
{
	lt_allocator a;

	if (!pool)
		return;
	a = pool->a;
	for (int i = 0; i < pool->n; i++)
		a.free_fn(pool->buf[i], a.ctx);
	a.free_fn(pool, a.ctx);
}

void
lt_bufpool_put(lt_bufpool *pool, uint8_t *buf, uint64_t cap)
{
	int			small = 0;

	if (!buf)
		return;
	if (pool->n < LT_BUFPOOL_MAX)
	{
		pool->buf[pool->n] = buf;
		pool->cap[pool->n++] = cap;
		return;
	}
	/* full: the smallest of the idle ones and this one goes */
	for (int i = 1; i < pool->n; i++)
		if (pool->cap[i] < pool->cap[small])
			small = i;
	if (pool->cap[small] < cap)
	{
		pool->a.free_fn(pool->buf[small], pool->a.ctx);
		pool->buf[small] = buf;
		pool->cap[small] = cap;
	}
	else
		pool->a.free_fn(buf, pool->a.ctx);
}

int
lt_bufpool_grow(lt_bufpool *pool, uint8_t **buf, uint64_t *cap, uint64_t n)
{
	int			best = -1;
	uint8_t    *nb;
	uint64_t	ncap;

	if (n <= *cap && *buf)
		return 0;
	for (int i = 0; i < pool->n; i++)
		if (pool->cap[i] >= n && (best < 0 || pool->cap[i] < pool->cap[best]))
			best = i;
	if (best >= 0)
	{
		nb = pool->buf[best];
		ncap = pool->cap[best];
		pool->buf[best] = pool->buf[--pool->n];
		pool->cap[best] = pool->cap[pool->n];
	}
	else
	{
		/*
		 * The idle buffer just too small was most likely this column's in the last file: it goes,
		 * and the new one has room to spare for the next file's (a little bigger) page.
		 */
		int			near = -1;

		for (int i = 0; i < pool->n; i++)
			if (near < 0 || pool->cap[i] > pool->cap[near])
				near = i;
		if (near >= 0)
		{
			pool->a.free_fn(pool->buf[near], pool->a.ctx);
			pool->buf[near] = pool->buf[--pool->n];
			pool->cap[near] = pool->cap[pool->n];
		}
		ncap = n + n / 8;
		if (ncap > SIZE_MAX || !(nb = pool->a.malloc_fn((size_t) ncap, pool->a.ctx)))
		{
			ncap = n;
			if (n > SIZE_MAX || !(nb = pool->a.malloc_fn((size_t) n, pool->a.ctx)))
				return -1;
		}
	}
	if (*buf)
	{
		memcpy(nb, *buf, (size_t) *cap);
		lt_bufpool_put(pool, *buf, *cap);
	}
	*buf = nb;
	*cap = ncap;
	return 0;
}

uint64_t
lt_bufpool_idle_bytes(const lt_bufpool *pool)
{
	uint64_t	total = 0;

	for (int i = 0; i < pool->n; i++)
		total += pool->cap[i];
	return total;
}
