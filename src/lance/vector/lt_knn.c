/*
 * lt_knn.c — exact kNN over decoded vectors (lt_knn.h).
 */
#include "vector/lt_knn.h"

#include <string.h>

#include "proto/lt_table.pb-c.h"
#include "table/lt_scan.h"
#include "util/lt_alloc.h"
#include "util/lt_value.h"

bool
lt_knn_field_ok(const lt_field *f)
{
	const lt_field *c;

	if (f == NULL || (f->type != LT_TYPE_FIXED_LIST && f->type != LT_TYPE_LIST && f->type != LT_TYPE_LARGE_LIST))
		return false;
	if (f->n_children != 1 || (c = f->children[0]) == NULL)
		return false;
	return c->type == LT_TYPE_FLOAT16 || c->type == LT_TYPE_FLOAT32 || c->type == LT_TYPE_FLOAT64 ||
		c->type == LT_TYPE_UINT8;
}

bool
lt_knn_kernel_ok(const lt_field *f, lt_vkernel kernel)
{
	if (!lt_knn_field_ok(f))
		return false;
	return (kernel == LT_VKERNEL_U8) == (f->children[0]->type == LT_TYPE_UINT8);
}

/* Items [start, start + n) of a float array widened into out (of the kernel's type). */
static void
widen(const lt_array *items, int64_t start, uint32_t n, lt_vkernel kernel, void *out)
{
	const uint8_t *v = items->values;

	switch (items->field->type)
	{
		case LT_TYPE_FLOAT16:
			for (uint32_t i = 0; i < n; i++)
			{
				uint16_t	h;
				float		f;

				memcpy(&h, v + (start + i) * 2, 2);
				f = lt_half_to_float(h);
				if (kernel == LT_VKERNEL_F32)
					((float *) out)[i] = f;
				else
					((double *) out)[i] = f;
			}
			break;
		case LT_TYPE_FLOAT32:
			if (kernel == LT_VKERNEL_F32)
				memcpy(out, v + start * 4, (size_t) n * 4);
			else
				for (uint32_t i = 0; i < n; i++)
				{
					float		f;

					memcpy(&f, v + (start + i) * 4, 4);
					((double *) out)[i] = f;
				}
			break;
		default:
			if (kernel == LT_VKERNEL_F64)
				memcpy(out, v + start * 8, (size_t) n * 8);
			else
				for (uint32_t i = 0; i < n; i++)
				{
					double		d;

					memcpy(&d, v + (start + i) * 8, 8);
					((float *) out)[i] = (float) d;
				}
			break;
	}
}

/* The items of one row, scored directly when they are already of the kernel's type and aligned. */
static double
score(const lt_knn_query *q, const lt_array *items, int64_t start, void *scratch)
{
	int			w = items->field->type == LT_TYPE_FLOAT16 ? 2 : items->field->type == LT_TYPE_FLOAT32 ? 4 : 8;
	const uint8_t *p;

	if (q->kernel == LT_VKERNEL_U8)
		return lt_vdist_hamming(items->values + start, q->query, q->dim);
	p = items->values + start * w;

	if (q->kernel == LT_VKERNEL_F32)
	{
		if (w == 4 && ((uintptr_t) p % _Alignof(float)) == 0)
			return lt_vdist_f32(q->metric, (const float *) p, q->query, q->dim);
		widen(items, start, q->dim, q->kernel, scratch);
		return lt_vdist_f32(q->metric, scratch, q->query, q->dim);
	}
	if (w == 8 && ((uintptr_t) p % _Alignof(double)) == 0)
		return lt_vdist_f64(q->metric, (const double *) p, q->query, q->dim);
	widen(items, start, q->dim, q->kernel, scratch);
	return lt_vdist_f64(q->metric, scratch, q->query, q->dim);
}

static lt_code
bad_row(lt_knn_stats *stats, lt_knn_bad why, uint64_t addr, int64_t dim, const lt_knn_query *q, lt_error *err)
{
	stats->bad = why;
	stats->bad_addr = addr;
	stats->bad_dim = dim;
	if (why == LT_KNN_BAD_DIM)
		return lt_error_set(err, LT_EINVALID, "different vector dimensions %lld and %u",
							(long long) dim, q->dim);
	return lt_error_set(err, LT_EINVALID, "the vector of row address %llu has a NULL item",
						(unsigned long long) addr);
}

/* Score one batch's vector column. */
static lt_code
score_batch(const lt_knn_query *q, const lt_array *a, const uint64_t *addrs, void *scratch, lt_topk *topk,
			lt_knn_stats *stats, lt_error *err)
{
	const lt_array *items = a->children[0];

	for (int64_t r = 0; r < a->length; r++)
	{
		int64_t		start,
					len;

		if (q->null_query || !lt_array_is_valid(a, r))
		{
			lt_topk_push_null(topk, addrs[r]);
			stats->rows_null++;
			continue;
		}
		if (a->field->type == LT_TYPE_FIXED_LIST)
		{
			len = a->field->fixed_size;
			start = r * len;
		}
		else
		{
			start = a->offsets[r];
			len = a->offsets[r + 1] - start;
		}
		if (len != (int64_t) q->dim)
			return bad_row(stats, LT_KNN_BAD_DIM, addrs[r], len, q, err);
		if (items->validity)
			for (int64_t i = 0; i < len; i++)
				if (!items->validity[start + i])
					return bad_row(stats, LT_KNN_BAD_NULL_ITEM, addrs[r], len, q, err);
		lt_topk_push(topk, score(q, items, start, scratch), addrs[r]);
		stats->rows_scored++;
	}
	return LT_OK;
}

/*
 * Rows of a batch: about KNN_BATCH_BYTES of vectors.  The decoded batch is scored and dropped at
 * once; small batches keep it (and the reader's slice under it) in cache and in memory the
 * allocator reuses, instead of fresh megabytes that the kernel must fault in batch after batch.
 */
#define KNN_BATCH_BYTES ((uint64_t) 256 << 10)

static uint64_t
knn_batch_rows(const lt_knn_query *q)
{
	uint64_t	row = (uint64_t) (q->dim ? q->dim : 1) * 4;
	uint64_t	n = KNN_BATCH_BYTES / row;

	return n < 64 ? 64 : n > LT_DEFAULT_BATCH_ROWS ? LT_DEFAULT_BATCH_ROWS : n;
}

lt_code
lt_knn_fragment(lt_dataset *ds, const struct Lt__Pb__DataFragment *frag, const lt_knn_query *q,
				lt_filter *filter, const uint32_t *offsets, uint64_t n_offsets,
				struct lt_bufpool *pool, lt_topk *topk, lt_knn_stats *stats, lt_error *err)
{
	return lt_knn_fragment_range(ds, frag, q, filter, offsets, n_offsets, 0, 0, pool, topk, stats, err);
}

lt_code
lt_knn_fragment_range(lt_dataset *ds, const struct Lt__Pb__DataFragment *frag, const lt_knn_query *q,
					  lt_filter *filter, const uint32_t *offsets, uint64_t n_offsets, uint64_t range_start,
					  uint64_t range_end, struct lt_bufpool *pool, lt_topk *topk, lt_knn_stats *stats,
					  lt_error *err)
{
	lt_scan_options so = {0};
	const lt_field *fields[1] = {q->field};
	lt_fragment_scanner *sc = NULL;
	void	   *scratch;
	lt_code		rc;

	if (!lt_knn_kernel_ok(q->field, q->kernel))
		return lt_error_set(err, LT_EINVALID, "field \"%s\" is not a vector of %s", q->field->name,
							q->kernel == LT_VKERNEL_U8 ? "uint8" : "floats");
	if ((scratch = lt_malloc((size_t) (q->dim ? q->dim : 1) * 8)) == NULL)
		return lt_nomem(err);
	so.n_fields = 1;
	so.fields = fields;
	so.filter = filter;
	so.offsets = offsets;
	so.n_offsets = n_offsets;
	so.range_start = range_start;
	so.range_end = range_end;
	so.bufpool = pool;
	so.batch_rows = knn_batch_rows(q);
	rc = lt_fragment_scanner_open(ds, frag, &so, &sc, err);
	while (rc == LT_OK)
	{
		lt_batch   *b;

		if ((rc = lt_check_interrupt(err, "scoring vectors")) != LT_OK)
			break;
		if ((rc = lt_fragment_scanner_next(sc, &b, err)) != LT_OK || b == NULL)
			break;
		rc = score_batch(q, b->columns[0], b->row_addrs, scratch, topk, stats, err);
	}
	if (sc)
	{
		lt_scan_stats ss;

		lt_fragment_scanner_stats(sc, &ss);
		stats->rows_filtered += ss.rows_filtered;
		lt_fragment_scanner_free(sc);
	}
	stats->fragments++;
	lt_free(scratch);
	return rc;
}

lt_code
lt_knn_dataset(lt_dataset *ds, const lt_knn_query *q, lt_filter *filter, lt_topk *topk, lt_knn_stats *stats,
			   lt_error *err)
{
	for (size_t i = 0; i < ds->n_fragments; i++)
		LT_TRY(lt_knn_fragment(ds, ds->fragments[i], q, filter, NULL, 0, NULL, topk, stats, err));
	return LT_OK;
}
