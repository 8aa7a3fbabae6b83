/*
 * lt_store_mem.c — an in-memory object store: named byte buffers.
 *
 * For unit tests and fuzz targets, which feed whole files from memory
 * through exactly the code paths a dataset on disk takes.
 */
#include "io/lt_store.h"

#include <string.h>

#include "util/lt_alloc.h"

typedef struct mem_entry
{
	char	   *path;
	uint8_t    *data;
	uint64_t	len;
} mem_entry;

typedef struct mem_store
{
	lt_store	base;
	mem_entry  *entries;
	size_t		n, cap;
} mem_store;

typedef struct mem_file
{
	lt_rfile	base;
	const uint8_t *data;
} mem_file;

static mem_entry *
find(mem_store *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->entries[i].path, path) == 0)
			return &m->entries[i];
	return NULL;
}

static lt_code
mem_open(lt_store *s, const char *path, lt_rfile **out, lt_error *err)
{
	mem_entry  *e = find((mem_store *) s, path);
	mem_file   *f;

	if (!e)
		return lt_error_set(err, LT_ENOTFOUND, "%s: no such object", path);
	f = lt_calloc(1, sizeof(mem_file));
	if (!f || !(f->base.path = lt_strdup(path)))
	{
		lt_free(f);
		return lt_nomem(err);
	}
	f->base.store = s;
	f->base.size = e->len;
	f->data = e->data;
	*out = &f->base;
	return LT_OK;
}

static lt_code
mem_read(lt_rfile *rf, uint64_t offset, uint64_t length, uint8_t *dst, lt_error *err)
{
	memcpy(dst, ((mem_file *) rf)->data + offset, length);
	return LT_OK;
}

static void
mem_close(lt_rfile *rf)
{
	lt_free(rf->path);
	lt_free(rf);
}

static lt_code
mem_list(lt_store *s, const char *dir, const lt_list_opts *opts, lt_list_cb cb, void *arg, lt_error *err)
{
	mem_store  *m = (mem_store *) s;
	size_t		dl = strlen(dir);
	bool		any = false;
	const char *after = opts ? opts->start_after : NULL;

	for (size_t i = 0; i < m->n; i++)
	{
		const char *p = m->entries[i].path;
		lt_dirent	ent;

		if (strncmp(p, dir, dl) != 0 || p[dl] != '/' || strchr(p + dl + 1, '/'))
			continue;
		any = true;
		if (after && strcmp(p + dl + 1, after) <= 0)
			continue;
		ent.name = p + dl + 1;
		ent.is_dir = false;
		ent.size = m->entries[i].len;
		ent.mtime_ms = 0;
		ent.special = false;
		if (cb(&ent, arg))
			break;
	}
	if (!any)
		return lt_error_set(err, LT_ENOTFOUND, "%s: no such directory", dir);
	return LT_OK;
}

lt_code
lt_store_mem_put(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	mem_store  *m = (mem_store *) s;
	mem_entry  *e = find(m, path);
	uint8_t    *copy = lt_malloc(len ? len : 1);

	if (!copy)
		return lt_nomem(err);
	memcpy(copy, data, len);
	if (!e)
	{
		if (m->n == m->cap)
		{
			size_t		cap = m->cap ? m->cap * 2 : 8;
			mem_entry  *p = lt_realloc(m->entries, cap * sizeof(mem_entry));

			if (!p)
			{
				lt_free(copy);
				return lt_nomem(err);
			}
			m->entries = p;
			m->cap = cap;
		}
		e = &m->entries[m->n];
		if (!(e->path = lt_strdup(path)))
		{
			lt_free(copy);
			return lt_nomem(err);
		}
		m->n++;
	}
	else
		lt_free(e->data);
	e->data = copy;
	e->len = len;
	return LT_OK;
}

static lt_code
mem_put_if_absent(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	if (find((mem_store *) s, path))
		return lt_error_set(err, LT_ECONFLICT, "%s already exists", path);
	return lt_store_mem_put(s, path, data, len, err);
}

static lt_code
mem_remove(lt_store *s, const char *path, lt_error *err)
{
	mem_store  *m = (mem_store *) s;
	mem_entry  *e = find(m, path);

	if (!e)
		return lt_error_set(err, LT_ENOTFOUND, "%s: no such object", path);
	lt_free(e->path);
	lt_free(e->data);
	*e = m->entries[--m->n];
	return LT_OK;
}

static void
mem_destroy(lt_store *s)
{
	mem_store  *m = (mem_store *) s;

	for (size_t i = 0; i < m->n; i++)
	{
		lt_free(m->entries[i].path);
		lt_free(m->entries[i].data);
	}
	lt_free(m->entries);
	lt_free(s->root);
	lt_free(m);
}

/* Streaming writes collect the bytes and add the object at finish. */
typedef struct mem_wfile
{
	lt_wfile	base;
	uint8_t    *buf;
	uint64_t	cap;
} mem_wfile;

static lt_code
mem_create(lt_store *s, const char *path, lt_wfile **out, lt_error *err)
{
	mem_wfile  *f = lt_calloc(1, sizeof(mem_wfile));

	if (!f || !(f->base.path = lt_strdup(path)))
	{
		lt_free(f);
		return lt_nomem(err);
	}
	f->base.store = s;
	*out = &f->base;
	return LT_OK;
}

static lt_code
mem_write(lt_wfile *wf, const uint8_t *data, uint64_t len, lt_error *err)
{
	mem_wfile  *f = (mem_wfile *) wf;
	uint64_t	need = wf->written + len;

	if (need > f->cap)
	{
		uint64_t	cap = f->cap ? f->cap : 4096;
		uint8_t    *p;

		while (cap < need)
			cap *= 2;
		if (!(p = lt_realloc(f->buf, cap)))
			return lt_nomem(err);
		f->buf = p;
		f->cap = cap;
	}
	memcpy(f->buf + wf->written, data, len);
	return LT_OK;
}

static void
mem_abort(lt_wfile *wf)
{
	mem_wfile  *f = (mem_wfile *) wf;

	lt_free(f->buf);
	lt_free(wf->path);
	lt_free(f);
}

static lt_code
mem_finish(lt_wfile *wf, lt_error *err)
{
	lt_code		rc = mem_put_if_absent(wf->store, wf->path, wf->written ? ((mem_wfile *) wf)->buf : (const uint8_t *) "",
									   wf->written, err);

	mem_abort(wf);
	return rc;
}

/* Objects only: a "directory" exists while some object lies under it. */
static lt_code
mem_stat(lt_store *s, const char *path, lt_stat *st, lt_error *err)
{
	mem_store  *m = (mem_store *) s;
	mem_entry  *e = find(m, path);
	size_t		n = strlen(path);

	if (e)
	{
		st->size = e->len;
		return LT_OK;
	}
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->entries[i].path, path, n) == 0 && m->entries[i].path[n] == '/')
		{
			st->is_dir = true;
			return LT_OK;
		}
	return lt_error_set(err, LT_ENOTFOUND, "%s: no such object", path);
}

static const lt_store_ops mem_ops = {
	.open = mem_open, .read = mem_read, .close = mem_close, .list = mem_list, .put = lt_store_mem_put,
	.put_if_absent = mem_put_if_absent, .remove = mem_remove, .destroy = mem_destroy, .create = mem_create,
	.write = mem_write, .finish = mem_finish, .abort = mem_abort, .stat = mem_stat
};

lt_code
lt_store_mem_open(lt_store **out, lt_error *err)
{
	mem_store  *m = lt_calloc(1, sizeof(mem_store));

	*out = NULL;
	if (!m || !(m->base.root = lt_strdup("mem:")))
	{
		lt_free(m);
		return lt_nomem(err);
	}
	m->base.ops = &mem_ops;
	m->base.coalesce_gap = 4096;
	*out = &m->base;
	return LT_OK;
}
