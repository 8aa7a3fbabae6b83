/*
 * lt_topk.c — bounded max-heap of the k best (distance, address) pairs (lt_topk.h).
 */
#include "vector/lt_topk.h"

#include <stdlib.h>

#include "util/lt_alloc.h"

lt_code
lt_topk_init(lt_topk *t, size_t k, lt_error *err)
{
	t->k = k;
	t->n = 0;
	t->pushed = 0;
	t->items = NULL;
	if (k > SIZE_MAX / sizeof(lt_topk_item) / 2)
		return lt_error_set(err, LT_EINVALID, "top-k of %zu rows is too many", k);
	if (k > 0 && (t->items = lt_malloc(k * sizeof(lt_topk_item))) == NULL)
		return lt_nomem(err);
	return LT_OK;
}

void
lt_topk_free(lt_topk *t)
{
	lt_free(t->items);
	t->items = NULL;
	t->n = t->k = 0;
}

void
lt_topk_reset(lt_topk *t)
{
	t->n = 0;
	t->pushed = 0;
}

static void
sift_down(lt_topk_item *h, size_t n, size_t i)
{
	lt_topk_item x = h[i];

	for (;;)
	{
		size_t		c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && lt_topk_less(&h[c], &h[c + 1]))
			c++;
		if (!lt_topk_less(&x, &h[c]))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

void
lt_topk_push_item(lt_topk *t, const lt_topk_item *it)
{
	lt_topk_item *h = t->items;

	if (t->k == 0)
		return;
	if (t->n < t->k)
	{
		/* sift up */
		size_t		i = t->n++;

		while (i > 0)
		{
			size_t		p = (i - 1) / 2;

			if (!lt_topk_less(&h[p], it))
				break;
			h[i] = h[p];
			i = p;
		}
		h[i] = *it;
		return;
	}
	if (!lt_topk_less(it, &h[0]))
		return;
	h[0] = *it;
	sift_down(h, t->n, 0);
}

void
lt_topk_finish(lt_topk *t)
{
	/* heap sort: the max moves to the end each round */
	for (size_t n = t->n; n > 1; n--)
	{
		lt_topk_item x = t->items[0];

		t->items[0] = t->items[n - 1];
		t->items[n - 1] = x;
		sift_down(t->items, n - 1, 0);
	}
}
