/*
 * lt_partheap.c — a partition's candidates in the engine's heap order (lt_partheap.h).
 */
#include "vector/lt_partheap.h"

#include <math.h>

#include "util/lt_alloc.h"

/* a <= b by distance, NaN greatest (the engine's OrderedFloat) */
static inline int
cmp_dist(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a > b) - (a < b);
}

lt_code
lt_partheap_init(lt_partheap *h, size_t k, lt_error *err)
{
	h->k = k;
	h->n = 0;
	h->items = NULL;
	if (k > SIZE_MAX / sizeof(lt_partheap_item) / 2)
		return lt_error_set(err, LT_EINVALID, "top-k of %zu rows is too many", k);
	if (k > 0 && (h->items = lt_malloc(k * sizeof(lt_partheap_item))) == NULL)
		return lt_nomem(err);
	return LT_OK;
}

void
lt_partheap_free(lt_partheap *h)
{
	lt_free(h->items);
	h->items = NULL;
	h->n = h->k = 0;
}

/* the item at pos rises while strictly greater than its parent (from start); its final position */
static size_t
sift_up(lt_partheap_item *d, size_t start, size_t pos)
{
	lt_partheap_item x = d[pos];

	while (pos > start)
	{
		size_t		parent = (pos - 1) / 2;

		if (cmp_dist(x.dist, d[parent].dist) <= 0)
			break;
		d[pos] = d[parent];
		pos = parent;
	}
	d[pos] = x;
	return pos;
}

/* the item at the root sinks to the bottom along the greater child (the right one on ties), then rises */
static void
sift_down_to_bottom(lt_partheap_item *d, size_t end)
{
	lt_partheap_item x = d[0];
	size_t		pos = 0,
				child = 1;

	while (end >= 2 && child <= end - 2)
	{
		child += cmp_dist(d[child].dist, d[child + 1].dist) <= 0;
		d[pos] = d[child];
		pos = child;
		child = 2 * pos + 1;
	}
	if (child == end - 1)
	{
		d[pos] = d[child];
		pos = child;
	}
	d[pos] = x;
	sift_up(d, 0, pos);
}

void
lt_partheap_offer(lt_partheap *h, double dist, uint64_t id)
{
	lt_partheap_item it = {dist, id};

	if (h->k == 0)
		return;
	if (h->n < h->k)
	{
		h->items[h->n] = it;
		sift_up(h->items, 0, h->n++);
		return;
	}
	if (cmp_dist(h->items[0].dist, dist) <= 0)
		return;
	/* pop: the last item to the root, sunk; then push the new one at the end */
	h->items[0] = h->items[h->n - 1];
	if (h->n - 1 > 0)
		sift_down_to_bottom(h->items, h->n - 1);
	h->items[h->n - 1] = it;
	sift_up(h->items, 0, h->n - 1);
}
