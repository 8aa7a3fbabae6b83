/*
 * lt_bufpool.h — I/O buffers recycled from one file (fragment) to the next.
 *
 * A full scan reads each column's pages into one buffer per column; the
 * readers of a fragment are freed when the next fragment begins.  Fresh
 * buffers of tens of MB for every fragment cost page faults (the memory is
 * new to the process each time); a pool keeps them for the next readers.
 * A buffer goes back under a key (the column and the buffer's use), and the
 * next file's reader of that column takes it: pages of a column are of
 * similar sizes from file to file, so the buffers fit without waste.
 * The pool allocates through its own allocator (not the global hooks'
 * current target), so its buffers outlive the memory of any one scanner.
 */
#ifndef LT_BUFPOOL_H
#define LT_BUFPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "util/lt_alloc.h"

typedef struct lt_bufpool lt_bufpool;

/* A pool keeping at most LT_BUFPOOL_MAX idle buffers; NULL without memory. */
#define LT_BUFPOOL_MAX 64
lt_bufpool *lt_bufpool_create(const lt_allocator *a);
/* Free the pool and its idle buffers (buffers handed out must have been put back). */
void		lt_bufpool_destroy(lt_bufpool *pool);

/*
 * Make *buf (of *cap bytes, or NULL and 0) at least n bytes, keeping its
 * first *cap bytes: the idle buffer of this key replaces it when it is big
 * enough, else a new one with room to spare (an eighth more) for the next
 * file's page.  Returns 0, or -1 without memory (*buf and *cap unchanged).
 */
int			lt_bufpool_grow(lt_bufpool *pool, uint64_t key, uint8_t **buf, uint64_t *cap, uint64_t n);
/* Give a buffer back under its key (NULL is ignored). */
void		lt_bufpool_put(lt_bufpool *pool, uint64_t key, uint8_t *buf, uint64_t cap);
/* Bytes held by idle buffers (for tests). */
uint64_t	lt_bufpool_idle_bytes(const lt_bufpool *pool);

#endif
