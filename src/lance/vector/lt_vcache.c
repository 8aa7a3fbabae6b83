/*
 * lt_vcache.c — vector index segments' immutable parts kept across searches (see lt_vcache.h).
 *
 * A hash table of entries (chained, doubling) threaded on one LRU list, most recent first: the
 * layout of the btree page cache (index/lt_btree_pages.c), with pins, since a search holds its
 * segment's model for as long as the segment is open.
 */
#include "vector/lt_vcache.h"

#include <stddef.h>
#include <string.h>

typedef struct slot
{
	struct slot *chain;			/* next in the bucket */
	struct slot *prev,
			   *next;			/* LRU: prev is more recent */
	uint64_t	hash;
	int64_t		part;
	char	   *key;
	size_t		bytes;			/* what it counts against the budget */
	size_t		len;			/* of data */
	uint32_t	pins;
	_Alignas(16) unsigned char data[];
} slot;

static struct
{
	lt_allocator alloc;
	size_t		budget,
				bytes;
	slot	  **buckets;
	size_t		n_buckets;
	uint64_t	n;
	slot	   *head,
			   *tail;
	uint64_t	hits,
				misses,
				evictions;
} vc;

static uint64_t
hash_of(const char *key, int64_t part)
{
	uint64_t	h = 1469598103934665603ULL;	/* FNV-1a over the key, then the part */

	for (const unsigned char *p = (const unsigned char *) key; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	h ^= (uint64_t) part + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h ^ (h >> 29);
}

static slot *
slot_of(void *data)
{
	return (slot *) ((unsigned char *) data - offsetof(slot, data));
}

static void
lru_unlink(slot *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		vc.head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		vc.tail = s->prev;
	s->prev = s->next = NULL;
}

static void
lru_push_front(slot *s)
{
	s->prev = NULL;
	s->next = vc.head;
	if (vc.head)
		vc.head->prev = s;
	vc.head = s;
	if (!vc.tail)
		vc.tail = s;
}

static void
drop(slot *s)
{
	slot	  **pp = &vc.buckets[s->hash % vc.n_buckets];
	lt_allocator saved;

	while (*pp != s)
		pp = &(*pp)->chain;
	*pp = s->chain;
	lru_unlink(s);
	vc.bytes -= s->bytes;
	vc.n--;
	saved = lt_alloc_swap(&vc.alloc);
	lt_free(s->key);
	lt_free(s);
	lt_alloc_restore(&saved);
}

/* Drop unpinned entries, least recent first, until the bytes fit budget (pinned ones stay). */
static void
shrink_to(size_t budget)
{
	slot	   *s = vc.tail;

	while (s && vc.bytes > budget)
	{
		slot	   *prev = s->prev;

		if (s->pins == 0)
		{
			drop(s);
			vc.evictions++;
		}
		s = prev;
	}
}

void
lt_vcache_configure(const lt_allocator *alloc, size_t budget)
{
	lt_allocator saved;

	shrink_to(budget);
	if (vc.n == 0 && vc.buckets)
	{
		saved = lt_alloc_swap(&vc.alloc);
		lt_free(vc.buckets);
		lt_alloc_restore(&saved);
		vc.buckets = NULL;
		vc.n_buckets = 0;
	}
	if (vc.n == 0)
	{
		saved = lt_alloc_swap(alloc);
		vc.alloc = saved;		/* the hooks `alloc` stands for (or the installed ones) */
		if (alloc)
			vc.alloc = *alloc;
		lt_alloc_restore(&saved);
	}
	vc.budget = budget;
}

static slot *
find(const char *key, int64_t part, uint64_t h)
{
	if (!vc.buckets)
		return NULL;
	for (slot *s = vc.buckets[h % vc.n_buckets]; s; s = s->chain)
		if (s->hash == h && s->part == part && strcmp(s->key, key) == 0)
			return s;
	return NULL;
}

void *
lt_vcache_get(const char *key, int64_t part, size_t *len, bool pin)
{
	slot	   *s;

	if (vc.budget == 0 || vc.n == 0)
		return NULL;
	s = find(key, part, hash_of(key, part));
	if (!s)
	{
		vc.misses++;
		return NULL;
	}
	vc.hits++;
	if (vc.head != s)
	{
		lru_unlink(s);
		lru_push_front(s);
	}
	if (pin)
		s->pins++;
	if (len)
		*len = s->len;
	return s->data;
}

/* Twice the buckets when the table is fuller than one entry per bucket; false when out of memory. */
static bool
grow(void)
{
	size_t		nb = vc.n_buckets ? vc.n_buckets * 2 : 256;
	slot	  **b;

	if (vc.n < vc.n_buckets)
		return true;
	if (!(b = lt_calloc(nb, sizeof(slot *))))
		return vc.buckets != NULL;	/* keep chaining in the old table */
	for (size_t i = 0; i < vc.n_buckets; i++)
		for (slot *s = vc.buckets[i], *nx; s; s = nx)
		{
			nx = s->chain;
			s->chain = b[s->hash % nb];
			b[s->hash % nb] = s;
		}
	lt_free(vc.buckets);
	vc.buckets = b;
	vc.n_buckets = nb;
	return true;
}

void *
lt_vcache_put(const char *key, int64_t part, size_t len, bool pin)
{
	uint64_t	h = hash_of(key, part);
	size_t		klen = strlen(key) + 1;
	size_t		bytes;
	lt_allocator saved;
	slot	   *s;

	if (vc.budget == 0 || len > vc.budget)
		return NULL;
	bytes = sizeof(slot) + len + klen;
	if (bytes > vc.budget)
		return NULL;
	if ((s = find(key, part, h)) != NULL)
	{
		if (s->pins)
			return NULL;
		drop(s);
	}
	shrink_to(vc.budget - bytes);
	if (vc.bytes + bytes > vc.budget)
		return NULL;			/* pinned entries fill it */
	saved = lt_alloc_swap(&vc.alloc);
	s = grow() ? lt_malloc(sizeof(slot) + len) : NULL;
	if (s && !(s->key = lt_malloc(klen)))
	{
		lt_free(s);
		s = NULL;
	}
	lt_alloc_restore(&saved);
	if (!s)
		return NULL;
	memcpy(s->key, key, klen);
	s->hash = h;
	s->part = part;
	s->bytes = bytes;
	s->len = len;
	s->pins = pin ? 1 : 0;
	s->chain = vc.buckets[h % vc.n_buckets];
	vc.buckets[h % vc.n_buckets] = s;
	lru_push_front(s);
	vc.bytes += bytes;
	vc.n++;
	return s->data;
}

void
lt_vcache_unpin(void *data)
{
	slot	   *s = slot_of(data);

	if (s->pins > 0)
		s->pins--;
}

void
lt_vcache_stats_get(lt_vcache_stats *out)
{
	out->hits = vc.hits;
	out->misses = vc.misses;
	out->evictions = vc.evictions;
	out->bytes = vc.bytes;
	out->budget = vc.budget;
	out->entries = vc.n;
}
