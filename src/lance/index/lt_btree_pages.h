/*
 * lt_btree_pages.h — decoded btree pages kept across lookups, per process.
 *
 * A point lookup searches one page of batch_size keys (4,096 by default) of page_data.lance; decoding
 * those keys and checking their order is most of its cost.  Index files are immutable (a rebuilt index
 * is a new directory), so a page decoded once serves every later lookup of any dataset version that
 * still has the index: pages are keyed by the file (store root, path, size) and page number, nothing
 * ever goes stale, and a new version that keeps the index keeps its cached pages.
 *
 * Only what the integer point-lookup path needs is kept: the page's keys widened to int64 (its nulls
 * first, then sorted), or the fact that the page is not laid out that way.  The cache holds at most
 * `budget` bytes (keys plus bookkeeping) and drops the least recently used page first; with a budget
 * of 0 (the default until lt_btree_pages_configure) nothing is kept.  Not thread-safe, as the library.
 */
#ifndef LT_BTREE_PAGES_H
#define LT_BTREE_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/lt_alloc.h"

typedef struct lt_btree_page
{
	int64_t		n;				/* keys in the page */
	int64_t		nulls;			/* the first `nulls` are NULL */
	bool		sorted;			/* false: not nulls-first and ascending (keys is empty) */
	const int64_t *keys;		/* sorted: n - nulls keys, those of slots [nulls, n) */
} lt_btree_page;

/*
 * Set the budget (bytes) and the allocator the pages live in (NULL: the hooks installed now).  Pages
 * over a smaller budget are dropped; 0 drops them all and keeps none.
 */
void		lt_btree_pages_configure(const lt_allocator *alloc, size_t budget);

/* The cached page `page` of file `file_key`, made the most recently used, or NULL.  Valid until the next put. */
const lt_btree_page *lt_btree_pages_get(const char *file_key, uint64_t page);

/*
 * Keep a page (keys: its n - nulls non-null keys when sorted, else ignored).  Returns the cached copy,
 * or NULL when it is not kept (no budget, larger than the budget, out of memory): callers go on with
 * their own decode.
 */
const lt_btree_page *lt_btree_pages_put(const char *file_key, uint64_t page, int64_t n, int64_t nulls, bool sorted,
										const int64_t *keys);

/*
 * The same without the copy: room for n keys (NULL when nothing would be kept), which the caller decodes the
 * page into and then hands to lt_btree_pages_keep (kept, or freed when it cannot be; the keys are those of
 * slots [nulls, n) when sorted) or to lt_btree_pages_discard. It is an allocation of its own in the cache's
 * allocator: an int64 page may be decoded into it as an array's values.
 */
int64_t    *lt_btree_pages_room(int64_t n);
const lt_btree_page *lt_btree_pages_keep(const char *file_key, uint64_t page, int64_t n, int64_t nulls, bool sorted,
										 int64_t *room);
void		lt_btree_pages_discard(int64_t *room);

typedef struct lt_btree_pages_stats
{
	uint64_t	hits, misses, evictions;
	size_t		bytes, budget;
	uint64_t	pages;
} lt_btree_pages_stats;

void		lt_btree_pages_stats_get(lt_btree_pages_stats *out);

#endif
