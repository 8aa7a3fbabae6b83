/*
 * lt_store.c — backend-independent parts of the object-store interface:
 * dispatch, range coalescing, whole-file reads.
 */
#include "io/lt_store.h"

#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"

void
lt_store_close(lt_store *s)
{
	if (s)
		s->ops->destroy(s);
}

/* ---- descriptor budget (lt_store.h) ---------------------------------------------------------- */

static lt_fd_hooks fd_hooks;
static bool (*fd_reclaim) (void);

void
lt_set_fd_hooks(const lt_fd_hooks *hooks)
{
	if (hooks)
		fd_hooks = *hooks;
	else
		memset(&fd_hooks, 0, sizeof(fd_hooks));
}

void
lt_set_fd_reclaim(bool (*reclaim) (void))
{
	fd_reclaim = reclaim;
}

void
lt_fd_acquire(void)
{
	if (!fd_hooks.acquire)
		return;
	while (!fd_hooks.acquire())
		if (!fd_reclaim || !fd_reclaim())
		{
			fd_hooks.reserve();
			return;
		}
}

bool
lt_fd_reclaim(void)
{
	return fd_reclaim && fd_reclaim();
}

void
lt_fd_release(void)
{
	if (fd_hooks.release)
		fd_hooks.release();
}

lt_code
lt_store_open_file(lt_store *s, const char *path, lt_rfile **out, lt_error *err)
{
	*out = NULL;
	return s->ops->open(s, path, out, err);
}

void
lt_rfile_close(lt_rfile *f)
{
	if (f)
		f->store->ops->close(f);
}

lt_code
lt_rfile_read(lt_rfile *f, uint64_t offset, uint64_t length, uint8_t *dst, lt_error *err)
{
	uint64_t	end;

	if (!lt_add_ok(offset, length, &end) || end > f->size)
		return lt_corrupt(err, "%s: read of %llu bytes at offset %llu runs past the end of the file (%llu bytes)",
						  f->path, (unsigned long long) length, (unsigned long long) offset,
						  (unsigned long long) f->size);
	if (length == 0)
		return LT_OK;
	f->store->read_requests++;
	f->store->bytes_read += length;
	return f->store->ops->read(f, offset, length, dst, err);
}

typedef struct range_ref
{
	uint64_t	offset;
	uint64_t	length;
	int			index;
} range_ref;

static int
cmp_range(const void *a, const void *b)
{
	const range_ref *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->index - y->index;
}

lt_code
lt_rfile_read_ranges(lt_rfile *f, int n, const lt_range *ranges, uint8_t *const *dsts, lt_error *err)
{
	return lt_rfile_read_ranges_gap(f, n, ranges, dsts, f->store->coalesce_gap, err);
}

uint64_t
lt_store_take_gap(const lt_store *s)
{
	return s->take_gap ? s->take_gap : s->coalesce_gap / 4;
}

lt_code
lt_rfile_read_ranges_gap(lt_rfile *f, int n, const lt_range *ranges, uint8_t *const *dsts, uint64_t gap,
						 lt_error *err)
{
	range_ref  *refs;
	lt_range   *groups;
	uint8_t   **gdst;
	int		   *gfirst;
	uint8_t    *scratch = NULL;
	uint64_t	scratch_len = 0;
	lt_code		rc = LT_OK;
	int			i, j, ng = 0;

	if (n <= 0)
		return LT_OK;
	if (n == 1)
		return lt_rfile_read(f, ranges[0].offset, ranges[0].length, dsts[0], err);
	refs = lt_calloc(n, sizeof(range_ref));
	groups = lt_calloc(n, sizeof(lt_range));
	gdst = lt_calloc(n, sizeof(uint8_t *));
	gfirst = lt_calloc(n + 1, sizeof(int));
	if (!refs || !groups || !gdst || !gfirst)
	{
		rc = lt_nomem(err);
		goto done;
	}
	for (i = 0; i < n; i++)
	{
		uint64_t	end;

		if (!lt_add_ok(ranges[i].offset, ranges[i].length, &end) || end > f->size)
		{
			rc = lt_corrupt(err, "%s: range of %llu bytes at offset %llu runs past the end of the file (%llu bytes)",
							f->path, (unsigned long long) ranges[i].length,
							(unsigned long long) ranges[i].offset, (unsigned long long) f->size);
			goto done;
		}
		refs[i] = (range_ref) {ranges[i].offset, ranges[i].length, i};
	}
	qsort(refs, n, sizeof(range_ref), cmp_range);

	/* group ranges whose gaps are below the coalescing threshold into one read */
	for (i = 0; i < n; i = j)
	{
		uint64_t	lo = refs[i].offset;
		uint64_t	hi = refs[i].offset + refs[i].length;

		for (j = i + 1; j < n; j++)
		{
			uint64_t	e = refs[j].offset + refs[j].length;

			if (refs[j].offset > hi + gap)
				break;
			if (e > hi)
				hi = e;
		}
		if (hi == lo)
			continue;			/* only empty ranges */
		groups[ng] = (lt_range) {lo, hi - lo};
		gfirst[ng] = i;
		if (j > i + 1)
			scratch_len += hi - lo;
		ng++;
		gfirst[ng] = j;
	}
	if (scratch_len > 0 && !(scratch = lt_malloc(scratch_len)))
	{
		rc = lt_nomem(err);
		goto done;
	}
	/* a group of one range reads into its destination, a merged group into its share of scratch */
	{
		uint64_t	at = 0;

		for (int g = 0; g < ng; g++)
		{
			if (gfirst[g + 1] == gfirst[g] + 1)
				gdst[g] = dsts[refs[gfirst[g]].index];
			else
			{
				gdst[g] = scratch + at;
				at += groups[g].length;
			}
			f->store->read_requests++;
			f->store->bytes_read += groups[g].length;
		}
	}
	if (f->store->ops->read_many && ng > 1)
		rc = f->store->ops->read_many(f, ng, groups, gdst, err);
	else
		for (int g = 0; g < ng && rc == LT_OK; g++)
			rc = f->store->ops->read(f, groups[g].offset, groups[g].length, gdst[g], err);
	for (int g = 0; g < ng && rc == LT_OK; g++)
	{
		if (gfirst[g + 1] == gfirst[g] + 1)
			continue;
		for (int k = gfirst[g]; k < gfirst[g + 1]; k++)
			if (refs[k].length)
				memcpy(dsts[refs[k].index], gdst[g] + (refs[k].offset - groups[g].offset), refs[k].length);
	}
done:
	lt_free(scratch);
	lt_free(gfirst);
	lt_free(gdst);
	lt_free(groups);
	lt_free(refs);
	return rc;
}

lt_code
lt_store_read_all(lt_store *s, const char *path, uint64_t max_len, uint8_t **out, uint64_t *out_len, lt_error *err)
{
	lt_rfile   *f;
	uint8_t    *buf;
	lt_code		rc;

	*out = NULL;
	*out_len = 0;
	LT_TRY(lt_store_open_file(s, path, &f, err));
	if (f->size > max_len)
	{
		rc = lt_corrupt(err, "%s: file of %llu bytes is larger than the %llu allowed", path,
						(unsigned long long) f->size, (unsigned long long) max_len);
		lt_rfile_close(f);
		return rc;
	}
	buf = lt_malloc(f->size ? f->size : 1);
	if (!buf)
	{
		lt_rfile_close(f);
		return lt_nomem(err);
	}
	rc = lt_rfile_read(f, 0, f->size, buf, err);
	if (rc == LT_OK)
	{
		*out = buf;
		*out_len = f->size;
	}
	else
		lt_free(buf);
	lt_rfile_close(f);
	return rc;
}

lt_code
lt_store_list(lt_store *s, const char *dir, lt_list_cb cb, void *arg, lt_error *err)
{
	return s->ops->list(s, dir, NULL, cb, arg, err);
}

lt_code
lt_store_list_opts(lt_store *s, const char *dir, const lt_list_opts *opts, lt_list_cb cb, void *arg, lt_error *err)
{
	return s->ops->list(s, dir, opts, cb, arg, err);
}

lt_code
lt_store_prefetch(lt_store *s, int n, const char *const *paths, lt_error *err)
{
	if (!s->ops->prefetch || n <= 0)
		return LT_OK;
	return s->ops->prefetch(s, n, paths, err);
}

lt_code
lt_store_stat(lt_store *s, const char *path, lt_stat *st, lt_error *err)
{
	lt_rfile   *f;

	memset(st, 0, sizeof(*st));
	if (s->ops->stat)
		return s->ops->stat(s, path, st, err);
	LT_TRY(lt_store_open_file(s, path, &f, err));
	st->size = f->size;
	lt_rfile_close(f);
	return LT_OK;
}

lt_code
lt_store_put(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	return s->ops->put(s, path, data, len, err);
}

lt_code
lt_store_put_if_absent(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	return s->ops->put_if_absent(s, path, data, len, err);
}

lt_code
lt_store_put_if_absent_parts(lt_store *s, const char *path, const lt_part *parts, int n, lt_error *err)
{
	uint64_t	len = 0;
	uint8_t    *buf,
			   *w;
	lt_code		rc;

	if (s->ops->put_if_absent_parts)
		return s->ops->put_if_absent_parts(s, path, parts, n, err);
	for (int i = 0; i < n; i++)
		len += parts[i].len;
	if (!(buf = w = lt_malloc(len + 1)))
		return lt_nomem(err);
	for (int i = 0; i < n; i++)
	{
		if (parts[i].len)
			memcpy(w, parts[i].data, parts[i].len);
		w += parts[i].len;
	}
	rc = s->ops->put_if_absent(s, path, buf, len, err);
	lt_free(buf);
	return rc;
}

lt_code
lt_store_put_unsynced(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	return s->ops->put_unsynced ? s->ops->put_unsynced(s, path, data, len, err) : s->ops->put(s, path, data, len, err);
}

lt_code
lt_store_remove(lt_store *s, const char *path, lt_error *err)
{
	return s->ops->remove(s, path, err);
}

lt_code
lt_store_create_file(lt_store *s, const char *path, lt_wfile **out, lt_error *err)
{
	*out = NULL;
	if (!s->ops->create)
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: this store cannot write files", s->root ? s->root : "store");
	return s->ops->create(s, path, out, err);
}

lt_code
lt_wfile_write(lt_wfile *f, const uint8_t *data, uint64_t len, lt_error *err)
{
	lt_code		rc;

	if (len == 0)
		return LT_OK;
	rc = f->store->ops->write(f, data, len, err);
	if (rc == LT_OK)
		f->written += len;
	return rc;
}

lt_code
lt_wfile_finish(lt_wfile *f, lt_error *err)
{
	return f->store->ops->finish(f, err);
}

void
lt_wfile_abort(lt_wfile *f)
{
	if (f)
		f->store->ops->abort(f);
}
