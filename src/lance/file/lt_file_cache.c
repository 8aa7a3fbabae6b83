/*
 * lt_file_cache.c — data files kept open across scans (see lt_file_cache.h).
 */
#include "file/lt_file_cache.h"

#include <string.h>

#include "util/lt_alloc.h"

typedef struct cached_file
{
	lt_store   *store;
	char	   *path;
	lt_file    *file;
	int			held;			/* scanners holding it */
	uint64_t	used;			/* tick of the last get */
} cached_file;

struct lt_file_cache
{
	lt_file_cache *next;		/* every cache of the process, for lt_fd_reclaim */
	lt_allocator alloc;
	int			max_files;
	int			n;
	cached_file *files;
	uint64_t	hits,
				opens;
};

static lt_file_cache *caches;
static uint64_t tick;			/* one clock for every cache: the least recently used file of all goes first */

static void drop(lt_file_cache *c, int i);

/*
 * The descriptor budget is spent (lt_store.h): close the least recently used file no scanner holds, of
 * whichever cache.
 */
static bool
reclaim_one(void)
{
	lt_file_cache *best = NULL;
	int			slot = -1;

	for (lt_file_cache *c = caches; c; c = c->next)
		for (int i = 0; i < c->n; i++)
			if (c->files[i].held == 0 && (!best || c->files[i].used < best->files[slot].used))
			{
				best = c;
				slot = i;
			}
	if (!best)
		return false;
	drop(best, slot);
	return true;
}

lt_code
lt_file_cache_create(const lt_allocator *alloc, int max_files, lt_file_cache **out, lt_error *err)
{
	lt_allocator saved = lt_alloc_swap(alloc);
	lt_file_cache *c = lt_calloc(1, sizeof(*c));

	if (c && max_files > 0)
		c->files = lt_calloc((size_t) max_files, sizeof(cached_file));
	lt_alloc_restore(&saved);
	*out = NULL;
	if (!c || (max_files > 0 && !c->files))
	{
		lt_free(c);
		return lt_nomem(err);
	}
	c->alloc = alloc ? *alloc : saved;
	c->max_files = max_files;
	c->next = caches;
	caches = c;
	lt_set_fd_reclaim(reclaim_one);
	*out = c;
	return LT_OK;
}

static void
drop(lt_file_cache *c, int i)
{
	lt_allocator saved = lt_alloc_swap(&c->alloc);

	lt_file_close(c->files[i].file);
	lt_free(c->files[i].path);
	lt_alloc_restore(&saved);
	c->files[i] = c->files[--c->n];
}

void
lt_file_cache_free(lt_file_cache *c)
{
	if (!c)
		return;
	while (c->n > 0)
		drop(c, c->n - 1);
	for (lt_file_cache **p = &caches; *p; p = &(*p)->next)
		if (*p == c)
		{
			*p = c->next;
			break;
		}
	lt_free(c->files);
	lt_free(c);
}

lt_code
lt_file_cache_get(lt_file_cache *c, lt_store *store, const char *path, lt_file **out, bool *owned, lt_error *err)
{
	lt_allocator saved;
	lt_file    *f = NULL;
	char	   *copy;
	int			slot = -1;
	lt_code		rc;

	*out = NULL;
	*owned = false;
	for (int i = 0; i < c->n; i++)
		if (c->files[i].store == store && strcmp(c->files[i].path, path) == 0)
		{
			c->files[i].held++;
			c->files[i].used = ++tick;
			c->hits++;
			*out = c->files[i].file;
			return LT_OK;
		}
	/* room: a free slot, or the least recently used file no scanner holds */
	if (c->n < c->max_files)
		slot = c->n;
	else
		for (int i = 0; i < c->n; i++)
			if (c->files[i].held == 0 && (slot < 0 || c->files[i].used < c->files[slot].used))
				slot = i;
	if (slot >= 0 && slot < c->n)
	{
		drop(c, slot);
		slot = c->n;
	}
	saved = lt_alloc_swap(slot >= 0 ? &c->alloc : NULL);
	rc = lt_file_open(store, path, &f, err);
	copy = rc == LT_OK && slot >= 0 ? lt_strdup(path) : NULL;
	lt_alloc_restore(&saved);
	LT_TRY(rc);
	/* the open may have closed idle files of this cache (reclaim_one): the first free slot is at n */
	if (slot >= 0)
		slot = c->n;
	c->opens++;
	if (slot < 0 || !copy || f->version < LT_FILE_V2_1)
	{
		/*
		 * Not kept: every slot is held, or an old file version.  The caller closes it, which frees it
		 * wherever it was allocated.
		 */
		lt_free(copy);
		*owned = true;
		*out = f;
		return LT_OK;
	}
	f->owner = &c->alloc;
	c->files[slot] = (cached_file) {store, copy, f, 1, ++tick};
	c->n++;
	*out = f;
	return LT_OK;
}

void
lt_file_cache_release(lt_file_cache *c, lt_file *f)
{
	for (int i = 0; i < c->n; i++)
		if (c->files[i].file == f)
		{
			if (c->files[i].held > 0)
				c->files[i].held--;
			return;
		}
}

uint64_t
lt_file_cache_hits(const lt_file_cache *c)
{
	return c->hits;
}

uint64_t
lt_file_cache_opens(const lt_file_cache *c)
{
	return c->opens;
}
