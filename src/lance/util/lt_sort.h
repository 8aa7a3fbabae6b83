/*
 * lt_sort.h — qsort/bsearch comparators of unsigned integers, shared by the library, the glue and the tools.
 */
#ifndef LT_SORT_H
#define LT_SORT_H

#include <stdint.h>

static inline int
lt_cmp_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *) a,
				y = *(const uint32_t *) b;

	return x < y ? -1 : x > y;
}

static inline int
lt_cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

#endif
