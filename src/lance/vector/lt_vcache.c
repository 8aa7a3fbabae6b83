/*
 * lt_vcache.c — vector index segments' immutable parts kept across searches (see lt_vcache.h).
 *
 * A hash table of entries (chained, doubling) threaded on one LRU list, most recent first: the
 * layout of the btree page cache (index/lt_btree_pages.c), with pins, since a search holds its
 * segment's model for as long as the segment is open.  An entry is either the process's own memory
 * or a file of the shared directory mapped (lt_vshare.h); the two count against their own budgets.
 */
#include "vector/lt_vcache.h"

#include <stddef.h>
#include <string.h>

#include "vector/lt_vshare.h"

typedef struct slot
{
	struct slot *chain;			/* next in the bucket */
	struct slot *mchain;		/* mapped: next in its bucket by data address */
	struct slot *prev,
			   *next;			/* LRU: prev is more recent */
	uint64_t	hash;
	int64_t		part;
	char	   *key;
	size_t		bytes;			/* what it counts against the budget */
	size_t		len;			/* of data */
	uint32_t	pins;
	bool		mapped;			/* data is in map, a shared file */
	bool		published;		/* written to the shared directory */
	lt_vshare_map map;
	unsigned char *data;
	_Alignas(16) unsigned char own[];	/* the data of an entry of the process's memory */
} slot;

#define N_MBUCKETS 1024			/* mapped entries by data address: unpin finds their slot */

static struct
{
	lt_allocator alloc;
	size_t		budget,
				bytes;
	size_t		map_budget,
				map_bytes;
	slot	  **buckets;
	size_t		n_buckets;
	uint64_t	n,
				n_mapped;
	slot	   *head,
			   *tail;
	slot	   *mbuckets[N_MBUCKETS];
	uint64_t	hits,
				misses,
				evictions;
	uint64_t	shared_hits,
				shared_rejects,
				shared_writes,
				shared_write_failures;
	uint64_t	given_way_bytes;
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

static size_t
mbucket_of(const void *data)
{
	return (size_t) ((((uintptr_t) data >> 6) * 0x9e3779b97f4a7c15ULL) >> 54) % N_MBUCKETS;
}

/* The slot of an entry's data: a mapped one through its address, else the data follows the slot. */
static slot *
slot_of(void *data)
{
	for (slot *s = vc.mbuckets[mbucket_of(data)]; s; s = s->mchain)
		if (s->data == data)
			return s;
	return (slot *) ((unsigned char *) data - offsetof(slot, own));
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
	if (s->mapped)
	{
		for (pp = &vc.mbuckets[mbucket_of(s->data)]; *pp != s; pp = &(*pp)->mchain)
			;
		*pp = s->mchain;
		lt_vshare_close(&s->map);
		vc.map_bytes -= s->bytes;
		vc.n_mapped--;
	}
	else
		vc.bytes -= s->bytes;
	vc.n--;
	saved = lt_alloc_swap(&vc.alloc);
	lt_free(s->key);
	lt_free(s);
	lt_alloc_restore(&saved);
}

/* Drop unpinned entries of one kind, least recent first, until that kind's bytes fit budget. */
static void
shrink_to(bool mapped, size_t budget)
{
	slot	   *s = vc.tail;

	while (s && (mapped ? vc.map_bytes : vc.bytes) > budget)
	{
		slot	   *prev = s->prev;

		if (s->pins == 0 && s->mapped == mapped)
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

	shrink_to(false, budget);
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

bool
lt_vcache_configure_shared(const char *dir, size_t max_bytes, uint64_t build)
{
	bool		ok = lt_vshare_configure(dir, max_bytes, build);

	/* what is mapped stays valid (a removed file keeps its pages); only the bound changes */
	vc.map_budget = lt_vshare_enabled() ? max_bytes : 0;
	shrink_to(true, vc.map_budget);
	return ok;
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

/* A new slot of own bytes (or a mapped one: own 0) in the table and at the LRU's front; NULL when out of memory. */
static slot *
insert(const char *key, int64_t part, uint64_t h, size_t own)
{
	size_t		klen = strlen(key) + 1;
	lt_allocator saved = lt_alloc_swap(&vc.alloc);
	slot	   *s = grow() ? lt_malloc(sizeof(slot) + own) : NULL;

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
	s->pins = 0;
	s->mapped = s->published = false;
	memset(&s->map, 0, sizeof(s->map));
	s->data = s->own;
	s->mchain = NULL;
	s->chain = vc.buckets[h % vc.n_buckets];
	vc.buckets[h % vc.n_buckets] = s;
	lru_push_front(s);
	vc.n++;
	return s;
}

/* Entry (key, part) as the mapping m, taken over (closed when it cannot be kept: no room, out of memory). */
static slot *
adopt(const char *key, int64_t part, uint64_t h, lt_vshare_map *m)
{
	slot	   *s;

	/* no eviction here: an unpinned entry got before stays valid until the next put (lt_vcache.h) */
	if (vc.map_bytes + m->len > vc.map_budget || (s = insert(key, part, h, 0)) == NULL)
	{
		lt_vshare_close(m);
		return NULL;
	}
	s->mapped = s->published = true;
	s->map = *m;
	s->data = (unsigned char *) m->data;
	s->len = s->bytes = m->len;
	s->mchain = vc.mbuckets[mbucket_of(s->data)];
	vc.mbuckets[mbucket_of(s->data)] = s;
	vc.map_bytes += s->bytes;
	vc.n_mapped++;
	return s;
}

/* Entry (key, part) from the shared directory, mapped; NULL when not there (or no room for it). */
static slot *
map_in(const char *key, int64_t part, uint64_t h)
{
	lt_vshare_map m;
	lt_vshare_found f = lt_vshare_open(key, part, &m);
	slot	   *s;

	if (f == LT_VSHARE_BAD)
		vc.shared_rejects++;
	if (f != LT_VSHARE_HIT || (s = adopt(key, part, h, &m)) == NULL)
		return NULL;
	vc.shared_hits++;
	return s;
}

void *
lt_vcache_get(const char *key, int64_t part, size_t *len, bool pin)
{
	uint64_t	h;
	slot	   *s;

	if (vc.budget == 0 && !lt_vshare_enabled())
		return NULL;
	h = hash_of(key, part);
	if ((s = find(key, part, h)) != NULL)
	{
		vc.hits++;
		if (vc.head != s)
		{
			lru_unlink(s);
			lru_push_front(s);
		}
	}
	else if (!lt_vshare_enabled() || (s = map_in(key, part, h)) == NULL)
	{
		vc.misses++;
		return NULL;
	}
	if (pin)
		s->pins++;
	if (len)
		*len = s->len;
	return s->data;
}

void *
lt_vcache_put(const char *key, int64_t part, size_t len, bool pin)
{
	uint64_t	h = hash_of(key, part);
	size_t		bytes;
	slot	   *s;

	if (vc.budget == 0 || len > vc.budget)
		return NULL;
	bytes = sizeof(slot) + len + strlen(key) + 1;
	if (bytes > vc.budget)
		return NULL;
	if ((s = find(key, part, h)) != NULL)
	{
		if (s->pins)
			return NULL;
		drop(s);
	}
	shrink_to(false, vc.budget - bytes);
	shrink_to(true, vc.map_budget - vc.map_budget / 8);	/* room for the next mappings */
	if (vc.bytes + bytes > vc.budget)
		return NULL;			/* pinned entries fill it */
	if ((s = insert(key, part, h, len)) == NULL)
		return NULL;
	s->bytes = bytes;
	s->len = len;
	s->pins = pin ? 1 : 0;
	vc.bytes += bytes;
	return s->data;
}

static void
give_way(slot *s, lt_vshare_map *m)
{
	uint64_t	h = s->hash;
	int64_t		part = s->part;
	char	   *key = s->key;
	lt_allocator saved;

	s->key = NULL;
	vc.given_way_bytes += s->bytes;
	drop(s);
	adopt(key, part, h, m);
	saved = lt_alloc_swap(&vc.alloc);
	lt_free(key);
	lt_alloc_restore(&saved);
}

void
lt_vcache_publish(void *data)
{
	slot	   *s = slot_of(data);

	if (s->mapped || s->published || !lt_vshare_enabled())
		return;
	lt_vshare_map m;

	s->published = true;		/* once: a failed write is not retried for this entry */
	if (!lt_vshare_write(s->key, s->part, s->data, s->len, s->pins == 0 ? &m : NULL))
	{
		vc.shared_write_failures++;
		return;
	}
	vc.shared_writes++;
	/* nobody holds it: the process's copy gives way to the file's pages, held once for all */
	if (s->pins == 0 && m.base)
		give_way(s, &m);
}

/* s (the process's own, published, unpinned) replaced by m, the file written from it. */
void
lt_vcache_unpin(void *data)
{
	slot	   *s = slot_of(data);
	lt_vshare_map m;

	if (s->pins > 0)
		s->pins--;
	/* the last holder of an entry it published is gone: its copy gives way to the file's pages */
	if (s->pins == 0 && s->published && !s->mapped && lt_vshare_enabled() &&
		lt_vshare_open(s->key, s->part, &m) == LT_VSHARE_HIT)
		give_way(s, &m);
}

void
lt_vcache_stats_get(lt_vcache_stats *out)
{
	out->hits = vc.hits;
	out->misses = vc.misses;
	out->evictions = vc.evictions;
	out->bytes = vc.bytes;
	out->budget = vc.budget;
	out->entries = vc.n - vc.n_mapped;
	out->shared_hits = vc.shared_hits;
	out->shared_rejects = vc.shared_rejects;
	out->shared_writes = vc.shared_writes;
	out->shared_write_failures = vc.shared_write_failures;
	out->mapped_bytes = vc.map_bytes;
	out->mapped_entries = vc.n_mapped;
	out->given_way_bytes = vc.given_way_bytes;
}
