/*
 * lt_file_cache.h — data files kept open across scans.
 *
 * Data files are immutable (a new write is a new path), so a file opened once can serve every later
 * scan of the dataset: its footer, column metadata and the chunk tables random access built
 * (lt_reader21.c) stay with it, and the next point lookup reads only the chunks holding its row.
 * The cache holds at most max_files files; the least recently used one that no scanner holds goes
 * first.  It and its files allocate with the allocator given at creation (the owner's memory),
 * whatever hooks are installed when a scan fills them.  Files before 2.1 are not kept (their readers
 * keep nothing worth it): lt_file_cache_get hands them out owned by the caller.
 */
#ifndef LT_FILE_CACHE_H
#define LT_FILE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "file/lt_file.h"

typedef struct lt_file_cache lt_file_cache;

lt_code		lt_file_cache_create(const lt_allocator *alloc, int max_files, lt_file_cache **out, lt_error *err);
/* Close every file (none may be held) and free the cache. */
void		lt_file_cache_free(lt_file_cache *c);

/*
 * The open file at path (store-relative) of store, opened on first use.  *owned: the caller closes
 * it (lt_file_close); otherwise it gives it back with lt_file_cache_release when done.
 */
lt_code		lt_file_cache_get(lt_file_cache *c, lt_store *store, const char *path, lt_file **out, bool *owned,
							  lt_error *err);
void		lt_file_cache_release(lt_file_cache *c, lt_file *f);

/* Counters: files found open, files opened. */
uint64_t	lt_file_cache_hits(const lt_file_cache *c);
uint64_t	lt_file_cache_opens(const lt_file_cache *c);

#endif
