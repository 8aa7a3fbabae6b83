/*
 * lt_vcache.h — the immutable parts of vector index segments kept across searches, per process.
 *
 * An index segment (_indices/<uuid>/) never changes once written (a rebuilt or optimized index is a
 * new uuid), so what a search decodes from it — the IVF model, the PQ codebook and partition offsets,
 * a partition's row ids and codes — serves every later search of any dataset version that still has
 * the segment.  Entries are keyed by a string (store root, segment directory and the manifest's version
 * of the segment: vector/lt_ivf.h) and a number (the part of the segment: LT_VCACHE_MODEL, a
 * partition's rows, LT_VCACHE_HNSW, or LT_VCACHE_GRAPH of a partition), are opaque byte blocks the
 * caller fills, and count their bytes against one budget; the least recently used unpinned entry goes
 * first.  A warm search of a cached segment opens none of its files.  With a budget of 0 (the default until lt_vcache_configure) nothing is kept.  Not thread-safe, as the library.
 *
 * With a shared directory (lt_vcache_configure_shared, vector/lt_vshare.h), an entry the process does
 * not hold is looked for there (mapped, not copied: every process reads the same pages), and an entry
 * put and filled is written there by lt_vcache_publish, so that the other processes of the server do
 * not decode it again.  Only entries without pointers into themselves are published.
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
/* an IVF_HNSW_* segment's graphs' metadata: where each partition's levels are in index.idx */
#define LT_VCACHE_HNSW INT64_MIN

/*
 * Set the budget (bytes) and the allocator entries live in (NULL: the hooks installed now).  Unpinned
 * entries over a smaller budget are dropped.
 */
void		lt_vcache_configure(const lt_allocator *alloc, size_t budget);

/*
 * Share entries through dir (NULL or "": not at all), holding at most max_bytes of files there and at
 * most as much mapped; build: the identity of the code that lays entries out (files of another are
 * not read).  False when dir cannot be used (entries then stay the process's own).
 */
bool		lt_vcache_configure_shared(const char *dir, size_t max_bytes, uint64_t build);

/* The entry (key, part) made the most recently used (pinned when pin), its size in *len; or NULL. */
void	   *lt_vcache_get(const char *key, int64_t part, size_t *len, bool pin);

/*
 * Room for entry (key, part) of len bytes (aligned for any type), which the caller fills before it
 * calls into the cache again; NULL when it is not kept (no budget, larger than the budget, out of
 * memory).  An entry of the same key and part is replaced unless pinned (then NULL).
 */
void	   *lt_vcache_put(const char *key, int64_t part, size_t len, bool pin);

/*
 * Offer the entry just put and filled (data: what put returned) to the other processes: written to
 * the shared directory, when there is one.  The entry must hold no pointer into itself.  An unpinned
 * entry then moves to the file's mapping (the process's copy freed): data is not valid after this; a
 * pinned one moves when its last pin is dropped.
 */
void		lt_vcache_publish(void *data);

/* Drop a pin taken by get or put (data: what they returned). */
void		lt_vcache_unpin(void *data);

typedef struct lt_vcache_stats
{
	uint64_t	hits, misses, evictions;
	size_t		bytes, budget;
	uint64_t	entries;		/* of the process's memory */
	/* the shared directory: entries mapped from it, files that failed their checks, entries written */
	uint64_t	shared_hits,
				shared_rejects,
				shared_writes,
				shared_write_failures;
	size_t		mapped_bytes;
	uint64_t	mapped_entries;
	uint64_t	given_way_bytes;	/* of the process's own entries replaced by their files' mappings */
} lt_vcache_stats;

void		lt_vcache_stats_get(lt_vcache_stats *out);

#endif
