/*
 * lt_vcache.h — the immutable parts of vector index segments kept across searches, per process.
 *
 * An index segment (_indices/<uuid>/) never changes once written (a rebuilt or optimized index is a
 * new uuid), so what a search decodes from it — the IVF model, the PQ codebook and partition offsets,
 * a partition's row ids and codes — serves every later search of any dataset version that still has
 * the segment.  Entries are keyed by a string (store root and segment directory) and a number (the
 * part of the segment: LT_VCACHE_MODEL, a partition's rows, or LT_VCACHE_GRAPH of a partition), are opaque byte blocks the caller fills, and
 * count their bytes against one budget; the least recently used unpinned entry goes first.  With a
 * budget of 0 (the default until lt_vcache_configure) nothing is kept.  Not thread-safe, as the library.
 *
 * An entry got or put unpinned is valid until the next put; a pinned one until lt_vcache_unpin.
 */
#ifndef LT_VCACHE_H
#define LT_VCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/lt_alloc.h"

#define LT_VCACHE_MODEL ((int64_t) -1)
/* an IVF_HNSW_* segment's partition p: its graph, row ids and codes (vector/lt_hnsw.c) */
#define LT_VCACHE_GRAPH(p) ((int64_t) -2 - (int64_t) (p))

/*
 * Set the budget (bytes) and the allocator entries live in (NULL: the hooks installed now).  Unpinned
 * entries over a smaller budget are dropped.
 */
void		lt_vcache_configure(const lt_allocator *alloc, size_t budget);

/* The entry (key, part) made the most recently used (pinned when pin), its size in *len; or NULL. */
void	   *lt_vcache_get(const char *key, int64_t part, size_t *len, bool pin);

/*
 * Room for entry (key, part) of len bytes (aligned for any type), which the caller fills before it
 * calls into the cache again; NULL when it is not kept (no budget, larger than the budget, out of
 * memory).  An entry of the same key and part is replaced unless pinned (then NULL).
 */
void	   *lt_vcache_put(const char *key, int64_t part, size_t len, bool pin);

/* Drop a pin taken by get or put (data: what they returned). */
void		lt_vcache_unpin(void *data);

typedef struct lt_vcache_stats
{
	uint64_t	hits, misses, evictions;
	size_t		bytes, budget;
	uint64_t	entries;
} lt_vcache_stats;

void		lt_vcache_stats_get(lt_vcache_stats *out);

#endif
