/*
 * lt_spill.c — buffered temporary files (lt_spill.h), and the library's own: tmpfile(3).
 */
#include "util/lt_spill.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/lt_alloc.h"

struct lt_spill_file
{
	const lt_spill_ops *ops;
	void	   *h;
	uint8_t    *buf;
	size_t		cap,
				pos,			/* reading: next byte of buf */
				len;			/* bytes in buf */
	bool		reading,
				eof;			/* reading: the file has nothing after buf */
	uint64_t	size;
};

/* ---- tmpfile ---------------------------------------------------------------------------------- */

static lt_code
tmp_create(void *arg, void **file, lt_error *err)
{
	FILE	   *f = tmpfile();

	(void) arg;
	if (!f)
		return lt_error_set(err, LT_EIO, "could not create a temporary file: %s", strerror(errno));
	*file = f;
	return LT_OK;
}

static lt_code
tmp_write(void *file, const void *p, size_t n, lt_error *err)
{
	if (fwrite(p, 1, n, file) != n)
		return lt_error_set(err, LT_EIO, "could not write a temporary file: %s", strerror(errno));
	return LT_OK;
}

static lt_code
tmp_rewind(void *file, lt_error *err)
{
	if (fflush(file) != 0 || fseek(file, 0, SEEK_SET) != 0)
		return lt_error_set(err, LT_EIO, "could not rewind a temporary file: %s", strerror(errno));
	return LT_OK;
}

static lt_code
tmp_read(void *file, void *p, size_t n, size_t *got, lt_error *err)
{
	*got = fread(p, 1, n, file);
	if (*got < n && ferror(file))
		return lt_error_set(err, LT_EIO, "could not read a temporary file: %s", strerror(errno));
	return LT_OK;
}

static void
tmp_close(void *file)
{
	fclose(file);
}

static const lt_spill_ops tmp_ops = {NULL, tmp_create, tmp_write, tmp_rewind, tmp_read, tmp_close};

/* ---- buffered ---------------------------------------------------------------------------------- */

lt_code
lt_spill_open(const lt_spill_ops *ops, size_t bufsize, lt_spill_file **out, lt_error *err)
{
	lt_spill_file *f = lt_calloc(1, sizeof(*f));
	lt_code		rc;

	*out = NULL;
	if (!f)
		return lt_nomem(err);
	f->ops = ops ? ops : &tmp_ops;
	f->cap = bufsize < 4096 ? 4096 : bufsize;
	if (!(f->buf = lt_malloc(f->cap)))
	{
		lt_free(f);
		return lt_nomem(err);
	}
	if ((rc = f->ops->create(f->ops->arg, &f->h, err)) != LT_OK)
	{
		lt_free(f->buf);
		lt_free(f);
		return rc;
	}
	*out = f;
	return LT_OK;
}

static lt_code
flush(lt_spill_file *f, lt_error *err)
{
	lt_code		rc = f->len ? f->ops->write(f->h, f->buf, f->len, err) : LT_OK;

	f->len = 0;
	return rc;
}

lt_code
lt_spill_write(lt_spill_file *f, const void *p, size_t n, lt_error *err)
{
	f->size += n;
	if (f->len + n > f->cap)
	{
		LT_TRY(flush(f, err));
		if (n >= f->cap)
			return f->ops->write(f->h, p, n, err);
	}
	memcpy(f->buf + f->len, p, n);
	f->len += n;
	return LT_OK;
}

lt_code
lt_spill_rewind(lt_spill_file *f, lt_error *err)
{
	LT_TRY(flush(f, err));
	/* a file waiting to be read holds no buffer (a merge reads some of many at a time) */
	lt_free(f->buf);
	f->buf = NULL;
	f->reading = true;
	f->pos = f->len = 0;
	f->eof = false;
	return f->ops->rewind(f->h, err);
}

/* Refill buf (what is left moves to its start). */
static lt_code
fill(lt_spill_file *f, lt_error *err)
{
	size_t		got = 0,
				want;

	if (f->pos > 0)
	{
		memmove(f->buf, f->buf + f->pos, f->len - f->pos);
		f->len -= f->pos;
		f->pos = 0;
	}
	if (f->eof || f->len == f->cap)
		return LT_OK;
	if (!f->buf && !(f->buf = lt_malloc(f->cap)))
		return lt_nomem(err);
	want = f->cap - f->len;
	LT_TRY(f->ops->read(f->h, f->buf + f->len, want, &got, err));
	f->len += got;
	f->eof = got < want;
	return LT_OK;
}

lt_code
lt_spill_read(lt_spill_file *f, void *p, size_t n, lt_error *err)
{
	uint8_t    *dst = p;

	while (n > 0)
	{
		size_t		k;

		if (f->pos == f->len)
		{
			LT_TRY(fill(f, err));
			if (f->pos == f->len)
				return lt_error_set(err, LT_EIO, "a temporary file ended early");
		}
		k = f->len - f->pos < n ? f->len - f->pos : n;
		memcpy(dst, f->buf + f->pos, k);
		f->pos += k;
		dst += k;
		n -= k;
	}
	return LT_OK;
}

lt_code
lt_spill_at_end(lt_spill_file *f, bool *end, lt_error *err)
{
	if (f->pos == f->len)
		LT_TRY(fill(f, err));
	*end = f->pos == f->len;
	return LT_OK;
}

uint64_t
lt_spill_size(const lt_spill_file *f)
{
	return f->size;
}

void
lt_spill_close(lt_spill_file *f)
{
	if (!f)
		return;
	f->ops->close(f->h);
	lt_free(f->buf);
	lt_free(f);
}
