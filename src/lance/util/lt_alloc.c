#include "util/lt_alloc.h"

#include <protobuf-c/protobuf-c.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *sys_malloc(size_t size, void *ctx) { (void) ctx; return malloc(size ? size : 1); }
static void *sys_realloc(void *p, size_t size, void *ctx) { (void) ctx; return realloc(p, size ? size : 1); }
static void sys_free(void *p, void *ctx) { (void) ctx; free(p); }

static lt_allocator current = {sys_malloc, sys_realloc, sys_free, NULL};

void
lt_set_allocator(const lt_allocator *a)
{
	if (a)
		current = *a;
	else
		current = (lt_allocator) {sys_malloc, sys_realloc, sys_free, NULL};
}

lt_allocator
lt_alloc_swap(const lt_allocator *a)
{
	lt_allocator saved = current;

	if (a)
		current = *a;
	return saved;
}

void
lt_alloc_restore(const lt_allocator *saved)
{
	current = *saved;
}

void *
lt_malloc(size_t size)
{
	return current.malloc_fn(size, current.ctx);
}

void *
lt_calloc(size_t n, size_t size)
{
	void	   *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = current.malloc_fn(n * size, current.ctx);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *
lt_realloc(void *ptr, size_t size)
{
	if (!ptr)
		return current.malloc_fn(size, current.ctx);
	return current.realloc_fn(ptr, size, current.ctx);
}

void
lt_free(void *ptr)
{
	if (ptr)
		current.free_fn(ptr, current.ctx);
}

char *
lt_strndup(const char *s, size_t n)
{
	char	   *d = lt_malloc(n + 1);

	if (d)
	{
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

char *
lt_strdup(const char *s)
{
	return lt_strndup(s, strlen(s));
}

char *
lt_asprintf(const char *fmt,...)
{
	va_list		ap;
	int			n;
	char	   *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = lt_malloc((size_t) n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t) n + 1, fmt, ap);
	va_end(ap);
	return s;
}

char *
lt_concat3(const char *a, const char *b, const char *c)
{
	size_t		na = strlen(a),
				nb = strlen(b),
				nc = strlen(c);
	char	   *s = lt_malloc(na + nb + nc + 1);

	if (!s)
		return NULL;
	memcpy(s, a, na);
	memcpy(s + na, b, nb);
	memcpy(s + na + nb, c, nc + 1);
	return s;
}

static void *pb_alloc(void *ad, size_t size) { (void) ad; return lt_malloc(size); }
static void pb_free(void *ad, void *p) { (void) ad; lt_free(p); }

static ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, NULL};

struct ProtobufCAllocator *
lt_protobuf_allocator(void)
{
	return &pb_allocator;
}

bool
lt_push_u64(uint64_t **arr, int64_t *n, int64_t *cap, uint64_t v)
{
	if (*n == *cap)
	{
		int64_t		c = *cap ? *cap * 2 : 4096;
		uint64_t   *p = lt_realloc(*arr, (size_t) c * sizeof(uint64_t));

		if (!p)
			return false;
		*arr = p;
		*cap = c;
	}
	(*arr)[(*n)++] = v;
	return true;
}
