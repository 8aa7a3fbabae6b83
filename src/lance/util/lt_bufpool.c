/*
 * lt_bufpool.c — I/O buffers recycled from one file (fragment) to the next.
 */
#include "util/lt_bufpool.h"

#include <string.h>

struct lt_bufpool
{
	lt_allocator a;
	int			n;
	uint64_t	key[LT_BUFPOOL_MAX];
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

/* Take slot i out of the pool. */
static void
take(lt_bufpool *pool, int i)
{
	pool->n--;
	pool->key[i] = pool->key[pool->n];
	pool->buf[i] = pool->buf[pool->n];
	pool->cap[i] = pool->cap[pool->n];
}

void
lt_bufpool_put(lt_bufpool *pool, uint64_t key, uint8_t *buf, uint64_t cap)
{
	if (!buf)
		return;
	if (pool->n == LT_BUFPOOL_MAX)
	{
		pool->a.free_fn(buf, pool->a.ctx);
		return;
	}
	pool->key[pool->n] = key;
	pool->buf[pool->n] = buf;
	pool->cap[pool->n++] = cap;
}

int
lt_bufpool_grow(lt_bufpool *pool, uint64_t key, uint8_t **buf, uint64_t *cap, uint64_t n)
{
	uint8_t    *nb = NULL;
	uint64_t	ncap = 0;

	if (n <= *cap && *buf)
		return 0;
	for (int i = 0; i < pool->n; i++)
		if (pool->key[i] == key)
		{
			/* this column's buffer from the last file: it fits, or it goes */
			if (pool->cap[i] >= n)
			{
				nb = pool->buf[i];
				ncap = pool->cap[i];
			}
			else
				pool->a.free_fn(pool->buf[i], pool->a.ctx);
			take(pool, i);
			break;
		}
	if (!nb)
	{
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
		pool->a.free_fn(*buf, pool->a.ctx);
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
