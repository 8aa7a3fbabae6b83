/*
 * lt_vshare.h — lt_vcache's entries as files in a directory that every process of a server maps.
 *
 * One entry (key, part: lt_vcache.h) is one file, written once to a temporary name and renamed
 * (atomic), then mapped read-only and MAP_SHARED by whoever wants it, so the OS page cache holds one
 * copy for every process.  A file carries a header (magic, format, build, key, part, length and a
 * checksum of all of it) that is checked in full before the entry is used: a truncated, damaged or
 * foreign file is a miss, removed so that the next writer puts it back.  The directory's total is kept
 * under a bound by removing the files used least recently (their modification time, refreshed on use);
 * a process that still maps a removed file keeps its pages.  Files are never changed in place.
 *
 * The entries are only as trustworthy as the directory: it must be writable by the server alone.
 */
#ifndef LT_VSHARE_H
#define LT_VSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* bump when an entry's layout changes (vector/lt_ivf.c's pq_model and partition rows, lt_hnsw.c's) */
#define LT_VSHARE_FORMAT 1

/*
 * Use dir (created 0700 when missing; NULL or "": no sharing), keeping at most max_bytes of files in
 * it.  build names the code that lays entries out (e.g. the shared library's identity): files of
 * another build are never read.  False when dir cannot be used (too long, not creatable).
 */
bool		lt_vshare_configure(const char *dir, uint64_t max_bytes, uint64_t build);
bool		lt_vshare_enabled(void);

typedef struct lt_vshare_map
{
	void	   *base;			/* the mapping */
	size_t		map_len;
	const unsigned char *data;	/* the entry, 64-aligned */
	size_t		len;
} lt_vshare_map;

typedef enum lt_vshare_found
{
	LT_VSHARE_MISS,				/* no file (or one of another key) */
	LT_VSHARE_HIT,				/* *out maps the entry */
	LT_VSHARE_BAD				/* a file that failed its checks: removed */
} lt_vshare_found;

lt_vshare_found lt_vshare_open(const char *key, int64_t part, lt_vshare_map *out);
void		lt_vshare_close(lt_vshare_map *m);

/*
 * Write entry (key, part); false when it could not be (no directory, no room, an I/O error).  out (may be
 * NULL): the file written, mapped (base NULL when it could not be).
 */
bool		lt_vshare_write(const char *key, int64_t part, const void *data, size_t len, lt_vshare_map *out);

/* Remove the least recently used files until the directory holds at most max_bytes; what it holds after. */
uint64_t	lt_vshare_evict(uint64_t max_bytes);

/* The checksum of the files (exposed for tests): 64 bits over len bytes, seeded. */
uint64_t	lt_vshare_sum(const void *data, size_t len, uint64_t seed);

#endif
