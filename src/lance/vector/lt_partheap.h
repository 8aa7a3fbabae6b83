/*
 * lt_partheap.h — one IVF partition's candidates kept as the Lance engine keeps them.
 *
 * The engine scans a partition's rows in storage order into a binary max-heap of k nodes ordered by
 * distance alone (Rust's BinaryHeap): a row enters while the heap has room, else only when it is
 * strictly nearer than the heap's top, which is popped first.  Which of rows at equal distances
 * survive then depends on the heap's shape; this heap moves its items exactly as Rust's does (push
 * sifts up while strictly greater than the parent; pop swaps the last item to the root, sinks the
 * hole to the bottom along the greater child, the right one on ties, then sifts up), so the same
 * rows survive.  The partitions' survivors are then ranked by distance and row id (the engine's sort
 * over all partitions) in an lt_topk.
 */
#ifndef LT_PARTHEAP_H
#define LT_PARTHEAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/lt_status.h"

typedef struct lt_partheap_item
{
	double		dist;			/* NaN ranks after every number, as the engine's OrderedFloat */
	uint64_t	id;
} lt_partheap_item;

typedef struct lt_partheap
{
	size_t		k;
	size_t		n;
	lt_partheap_item *items;
} lt_partheap;

lt_code		lt_partheap_init(lt_partheap *h, size_t k, lt_error *err);
void		lt_partheap_free(lt_partheap *h);

/* Offer a row (the engine's: enter while room, else replace the top when strictly nearer). */
void		lt_partheap_offer(lt_partheap *h, double dist, uint64_t id);

#endif
