/*
 * lt_topk.h — the k smallest (distance, row address) pairs of a stream, in a bounded max-heap.
 *
 * Order: the class first (a number, then NaN, then a NULL vector: PostgreSQL's ORDER BY of a float8
 * ascending, NULLS LAST), then the distance, then the row address, so the ranking is total and the
 * same on every run.  Pushing costs one comparison with the worst kept item when it does not enter.
 */
#ifndef LT_TOPK_H
#define LT_TOPK_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/lt_status.h"

typedef enum lt_topk_class
{
	LT_TOPK_NUMBER = 0,
	LT_TOPK_NAN = 1,
	LT_TOPK_NULL = 2
} lt_topk_class;

typedef struct lt_topk_item
{
	double		dist;
	uint64_t	addr;
	uint32_t	cls;			/* lt_topk_class */
} lt_topk_item;

typedef struct lt_topk
{
	size_t		k;
	size_t		n;
	lt_topk_item *items;		/* a max-heap while pushing; ascending after lt_topk_finish */
	uint64_t	pushed;			/* items offered, kept or not */
} lt_topk;

lt_code		lt_topk_init(lt_topk *t, size_t k, lt_error *err);
void		lt_topk_free(lt_topk *t);
void		lt_topk_reset(lt_topk *t);

static inline bool
lt_topk_less(const lt_topk_item *a, const lt_topk_item *b)
{
	if (a->cls != b->cls)
		return a->cls < b->cls;
	if (a->cls == LT_TOPK_NUMBER && a->dist != b->dist)
		return a->dist < b->dist;
	return a->addr < b->addr;
}

void		lt_topk_push_item(lt_topk *t, const lt_topk_item *it);

/* Offer a distance (NaN is its own class). */
static inline void
lt_topk_push(lt_topk *t, double dist, uint64_t addr)
{
	lt_topk_item it = {dist, addr, isnan(dist) ? LT_TOPK_NAN : LT_TOPK_NUMBER};

	t->pushed++;
	if (t->n == t->k && (t->k == 0 || !lt_topk_less(&it, &t->items[0])))
		return;
	lt_topk_push_item(t, &it);
}

/* Offer a row whose vector is NULL. */
static inline void
lt_topk_push_null(lt_topk *t, uint64_t addr)
{
	lt_topk_item it = {0, addr, LT_TOPK_NULL};

	t->pushed++;
	if (t->n == t->k && (t->k == 0 || !lt_topk_less(&it, &t->items[0])))
		return;
	lt_topk_push_item(t, &it);
}

/* Sort the kept items ascending (the heap is gone: push no more before lt_topk_reset). */
void		lt_topk_finish(lt_topk *t);

#endif
