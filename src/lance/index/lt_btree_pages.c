/*
 * lt_btree_pages.c — decoded btree pages kept across lookups (see lt_btree_pages.h).
 *
 * A hash table of pages (chained, doubling) threaded on one LRU list, most recent first.
 */
#include "index/lt_btree_pages.h"

#include <stddef.h>
#include <string.h>

typedef struct slot
{
	struct slot *chain;			/* next in the bucket */
	struct slot *prev,
			   *next;			/* LRU: prev is more recent */
	uint64_t	hash;
	uint64_t	page_no;
	char	   *file_key;
	size_t		bytes;			/* what it counts against the budget */
	lt_btree_page page;
	int64_t    *room;			/* the keys, when kept from lt_btree_pages_room (an allocation of its own) */
	int64_t		keys[];			/* the keys, when copied in by lt_btree_pages_put */
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
} pc;

static uint64_t
hash_of(const char *file_key, uint64_t page_no)
{
	uint64_t	h = 1469598103934665603ULL;	/* FNV-1a over the key, then the page */

	for (const unsigned char *p = (const unsigned char *) file_key; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	h ^= page_no + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h ^ (h >> 29);
}

static void
lru_unlink(slot *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		pc.head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		pc.tail = s->prev;
	s->prev = s->next = NULL;
}

static void
lru_push_front(slot *s)
{
	s->prev = NULL;
	s->next = pc.head;
	if (pc.head)
		pc.head->prev = s;
	pc.head = s;
	if (!pc.tail)
		pc.tail = s;
}

static void
drop(slot *s)
{
	slot	  **pp = &pc.buckets[s->hash % pc.n_buckets];
	lt_allocator saved;

	while (*pp != s)
		pp = &(*pp)->chain;
	*pp = s->chain;
	lru_unlink(s);
	pc.bytes -= s->bytes;
	pc.n--;
	saved = lt_alloc_swap(&pc.alloc);
	lt_free(s->file_key);
	lt_free(s->room);
	lt_free(s);
	lt_alloc_restore(&saved);
}

static void
shrink_to(size_t budget)
{
	while (pc.tail && pc.bytes > budget)
	{
		drop(pc.tail);
		pc.evictions++;
	}
}

void
lt_btree_pages_configure(const lt_allocator *alloc, size_t budget)
{
	lt_allocator saved;

	shrink_to(budget);
	if (pc.n == 0 && pc.buckets)
	{
		saved = lt_alloc_swap(&pc.alloc);
		lt_free(pc.buckets);
		lt_alloc_restore(&saved);
		pc.buckets = NULL;
		pc.n_buckets = 0;
	}
	if (pc.n == 0)
	{
		saved = lt_alloc_swap(alloc);
		pc.alloc = saved;		/* the hooks `alloc` stands for (or the installed ones) */
		if (alloc)
			pc.alloc = *alloc;
		lt_alloc_restore(&saved);
	}
	pc.budget = budget;
}

static slot *
find(const char *file_key, uint64_t page_no, uint64_t h)
{
	if (!pc.buckets)
		return NULL;
	for (slot *s = pc.buckets[h % pc.n_buckets]; s; s = s->chain)
		if (s->hash == h && s->page_no == page_no && strcmp(s->file_key, file_key) == 0)
			return s;
	return NULL;
}

const lt_btree_page *
lt_btree_pages_get(const char *file_key, uint64_t page_no)
{
	slot	   *s;

	if (pc.budget == 0)
		return NULL;
	s = find(file_key, page_no, hash_of(file_key, page_no));
	if (!s)
	{
		pc.misses++;
		return NULL;
	}
	pc.hits++;
	if (pc.head != s)
	{
		lru_unlink(s);
		lru_push_front(s);
	}
	return &s->page;
}

/* Twice the buckets when the table is fuller than one page per bucket; false when out of memory. */
static bool
grow(void)
{
	size_t		nb = pc.n_buckets ? pc.n_buckets * 2 : 256;
	slot	  **b;

	if (pc.n < pc.n_buckets)
		return true;
	if (!(b = lt_calloc(nb, sizeof(slot *))))
		return pc.buckets != NULL;	/* keep chaining in the old table */
	for (size_t i = 0; i < pc.n_buckets; i++)
		for (slot *s = pc.buckets[i], *nx; s; s = nx)
		{
			nx = s->chain;
			s->chain = b[s->hash % nb];
			b[s->hash % nb] = s;
		}
	lt_free(pc.buckets);
	pc.buckets = b;
	pc.n_buckets = nb;
	return true;
}


void
lt_btree_pages_discard(int64_t *room)
{
	lt_allocator saved;

	if (!room)
		return;
	saved = lt_alloc_swap(&pc.alloc);
	lt_free(room);
	lt_alloc_restore(&saved);
}

/*
 * Enters s (allocated in the cache's allocator, its keys filled) as page page_no of file_key, counting bytes
 * against the budget; the page cached before under that name goes. NULL (s freed) when out of memory.
 */
static const lt_btree_page *
insert(slot *s, const char *file_key, uint64_t page_no, size_t bytes, int64_t n, int64_t nulls, bool sorted)
{
	uint64_t	h = hash_of(file_key, page_no);
	size_t		klen = strlen(file_key) + 1;
	lt_allocator saved;
	slot	   *old;
	bool		ok;

	if ((old = find(file_key, page_no, h)) != NULL)
		drop(old);				/* the same page again: the new decode wins */
	shrink_to(pc.budget - bytes);
	saved = lt_alloc_swap(&pc.alloc);
	ok = grow() && (s->file_key = lt_malloc(klen)) != NULL;
	lt_alloc_restore(&saved);
	if (!ok)
	{
		saved = lt_alloc_swap(&pc.alloc);
		lt_free(s->room);
		lt_free(s);
		lt_alloc_restore(&saved);
		return NULL;
	}
	memcpy(s->file_key, file_key, klen);
	s->hash = h;
	s->page_no = page_no;
	s->bytes = bytes;
	s->page.n = n;
	s->page.nulls = nulls;
	s->page.sorted = sorted;
	s->page.keys = s->room ? s->room : s->keys;
	s->chain = pc.buckets[h % pc.n_buckets];
	pc.buckets[h % pc.n_buckets] = s;
	lru_push_front(s);
	pc.bytes += bytes;
	pc.n++;
	return &s->page;
}

const lt_btree_page *
lt_btree_pages_put(const char *file_key, uint64_t page_no, int64_t n, int64_t nulls, bool sorted,
				   const int64_t *keys)
{
	size_t		nkeys = sorted && n > nulls ? (size_t) (n - nulls) : 0;
	size_t		bytes = sizeof(slot) + nkeys * sizeof(int64_t) + strlen(file_key) + 1;
	lt_allocator saved;
	slot	   *s;

	if (pc.budget == 0 || bytes > pc.budget)
		return NULL;
	saved = lt_alloc_swap(&pc.alloc);
	s = lt_malloc(sizeof(slot) + nkeys * sizeof(int64_t));
	lt_alloc_restore(&saved);
	if (!s)
		return NULL;
	s->room = NULL;
	if (nkeys)
		memcpy(s->keys, keys, nkeys * sizeof(int64_t));
	return insert(s, file_key, page_no, bytes, n, nulls, sorted);
}

int64_t *
lt_btree_pages_room(int64_t n)
{
	size_t		nkeys = n > 0 ? (size_t) n : 1;
	lt_allocator saved;
	int64_t    *room;

	if (pc.budget == 0 || sizeof(slot) + nkeys * sizeof(int64_t) > pc.budget)
		return NULL;
	saved = lt_alloc_swap(&pc.alloc);
	room = lt_malloc(nkeys * sizeof(int64_t));
	lt_alloc_restore(&saved);
	return room;
}

const lt_btree_page *
lt_btree_pages_keep(const char *file_key, uint64_t page_no, int64_t n, int64_t nulls, bool sorted, int64_t *room)
{
	/* the room as allocated (lt_btree_pages_room(n)) counts */
	size_t		bytes = sizeof(slot) + (size_t) (n > 0 ? n : 1) * sizeof(int64_t) + strlen(file_key) + 1;
	lt_allocator saved;
	slot	   *s;

	if (!sorted)
	{
		/* no keys to keep: a small entry, not the room */
		lt_btree_pages_discard(room);
		return lt_btree_pages_put(file_key, page_no, n, nulls, false, NULL);
	}
	if (pc.budget == 0 || bytes > pc.budget)
	{
		lt_btree_pages_discard(room);
		return NULL;
	}
	saved = lt_alloc_swap(&pc.alloc);
	s = lt_malloc(sizeof(slot));
	lt_alloc_restore(&saved);
	if (!s)
	{
		lt_btree_pages_discard(room);
		return NULL;
	}
	s->room = room;
	return insert(s, file_key, page_no, bytes, n, nulls, sorted);
}

void
lt_btree_pages_stats_get(lt_btree_pages_stats *out)
{
	out->hits = pc.hits;
	out->misses = pc.misses;
	out->evictions = pc.evictions;
	out->bytes = pc.bytes;
	out->budget = pc.budget;
	out->pages = pc.n;
}
