/*
 * lt_alloc.h — allocator hooks.
 *
 * All library allocations go through these, so the FDW can route them into
 * Postgres memory contexts.  Hooks must return NULL on failure (or not return
 * at all); the library treats NULL as LT_ENOMEM.
 */
#ifndef LT_ALLOC_H
#define LT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lt_allocator
{
	void	   *(*malloc_fn) (size_t size, void *ctx);
	void	   *(*realloc_fn) (void *ptr, size_t size, void *ctx);
	void		(*free_fn) (void *ptr, void *ctx);
	void	   *ctx;
} lt_allocator;

/* Install hooks (NULL restores malloc/realloc/free). Not thread-safe. */
void		lt_set_allocator(const lt_allocator *a);

/*
 * Route allocations to a (NULL: leave them where they go) until lt_alloc_restore(the returned hooks):
 * objects that outlive the call that fills them lazily (a cached file's tables) allocate with their
 * owner's hooks.
 */
lt_allocator lt_alloc_swap(const lt_allocator *a);
void		lt_alloc_restore(const lt_allocator *saved);

void	   *lt_malloc(size_t size);
void	   *lt_calloc(size_t n, size_t size);	/* overflow-checked, zeroed */
void	   *lt_realloc(void *ptr, size_t size);
void		lt_free(void *ptr);
char	   *lt_strdup(const char *s);
char	   *lt_strndup(const char *s, size_t n);
char	   *lt_asprintf(const char *fmt,...) __attribute__((format(printf, 1, 2)));
/* a + b + c in one allocation (a path joined on every read: vsnprintf costs ten times as much) */
char	   *lt_concat3(const char *a, const char *b, const char *c);

/* Append v to the growable array *arr of *n values and *cap slots (doubling, from 4096); false when out of memory. */
bool		lt_push_u64(uint64_t **arr, int64_t *n, int64_t *cap, uint64_t v);

/* Allocator for protobuf-c, so decoded messages use the same hooks. */
struct ProtobufCAllocator;
struct ProtobufCAllocator *lt_protobuf_allocator(void);

#endif
