/*
 * lt_knn.h — exact k-nearest-neighbour search over the decoded vectors of a dataset.
 *
 * A vector column is a top-level fixed_size_list or list of float16, float32 or float64 (or of uint8,
 * a binary vector scored by the hamming metric with the U8 kernel).  Each live
 * row of a fragment (narrowed by a filter and/or a list of offsets, exactly as a scan is) is scored
 * against the query with lt_vdist (the kernel precision is the caller's: the SQL operator's type),
 * straight from the decoded batch (no per-row allocation), and offered to a top-k heap.  Rows whose
 * vector is NULL are offered as the NULL class (they sort last).
 */
#ifndef LT_KNN_H
#define LT_KNN_H

#include <stdbool.h>
#include <stdint.h>

#include "table/lt_dataset.h"
#include "table/lt_filter.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"
#include "vector/lt_topk.h"
#include "vector/lt_vdist.h"

struct Lt__Pb__DataFragment;
struct lt_bufpool;

typedef enum lt_vkernel
{
	LT_VKERNEL_F32 = 0,			/* the query is float[dim]; items are widened to float */
	LT_VKERNEL_F64,				/* the query is double[dim]; items are widened to double */
	LT_VKERNEL_U8				/* the query is uint8_t[dim], the items uint8 (hamming) */
} lt_vkernel;

/* Why a row could not be scored (the caller raises the SQL function's own error). */
typedef enum lt_knn_bad
{
	LT_KNN_OK = 0,
	LT_KNN_BAD_DIM,				/* a row's vector has bad_dim items, the query dim */
	LT_KNN_BAD_NULL_ITEM		/* a row's vector has a NULL item */
} lt_knn_bad;

typedef struct lt_knn_query
{
	const lt_field *field;
	lt_vmetric	metric;
	lt_vkernel	kernel;
	const void *query;
	uint32_t	dim;
	bool		null_query;		/* the query is NULL: every row is offered as the NULL class */
} lt_knn_query;

typedef struct lt_knn_stats
{
	uint64_t	rows_scored;
	uint64_t	rows_null;
	uint64_t	rows_filtered;	/* rows the filter removed */
	uint64_t	fragments;
	/* set with LT_EINVALID */
	lt_knn_bad	bad;
	uint64_t	bad_addr;
	int64_t		bad_dim;
} lt_knn_stats;

/* Whether the field is a vector column this module scores (of floats, or of uint8). */
bool		lt_knn_field_ok(const lt_field *f);
/* Whether the field's items fit the kernel: uint8 for LT_VKERNEL_U8, floats for the others. */
bool		lt_knn_kernel_ok(const lt_field *f, lt_vkernel kernel);

/*
 * Score the live rows of frag passing filter (NULL: all) among offsets (NULL: all) into topk.
 * Between batches the library's interrupt check (lt_check_interrupt) may stop it with LT_ECANCELED.
 */
lt_code		lt_knn_fragment(lt_dataset *ds, const struct Lt__Pb__DataFragment *frag, const lt_knn_query *q,
							lt_filter *filter, const uint32_t *offsets, uint64_t n_offsets,
							struct lt_bufpool *pool, lt_topk *topk, lt_knn_stats *stats, lt_error *err);

/* The same over the physical rows [range_start, range_end) of frag only (range_end 0: to its end). */
lt_code		lt_knn_fragment_range(lt_dataset *ds, const struct Lt__Pb__DataFragment *frag, const lt_knn_query *q,
								  lt_filter *filter, const uint32_t *offsets, uint64_t n_offsets,
								  uint64_t range_start, uint64_t range_end, struct lt_bufpool *pool,
								  lt_topk *topk, lt_knn_stats *stats, lt_error *err);

/* Score every live row of the dataset's fragments (a convenience for tools and tests). */
lt_code		lt_knn_dataset(lt_dataset *ds, const lt_knn_query *q, lt_filter *filter, lt_topk *topk,
						   lt_knn_stats *stats, lt_error *err);

#endif
