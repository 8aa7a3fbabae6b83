/*
 * lt_index_int.h — shared internals of the index readers (lt_index*.c).
 */
#ifndef LT_INDEX_INT_H
#define LT_INDEX_INT_H

#include "index/lt_index.h"
#include "index/lt_index_file.h"

/*
 * The caller's filter re-built over one field of an index file: parameters
 * become constants (their values as set now), every column reference becomes
 * column 0 = field.  Evaluating it on index keys gives each key's verdict
 * with the filter's own semantics.
 */
lt_code		lt_index_copy_filter(const lt_filter *src, const lt_field *field, lt_filter **out, lt_error *err);
/*
 * The same for part of a filter whose only column is `field`: kind (AND / OR)
 * of exprs[0 .. n) (one expression when n = 1), under NOT when negate.
 */
lt_code		lt_index_copy_group(const lt_filter *src, lt_expr_kind kind, int n, const lt_expr *const *exprs,
								bool negate, const lt_field *field, lt_filter **out, lt_error *err);

/*
 * A filter over summary columns [min, max, null_count] (+ nan_count for
 * zones) that is TRUE for every page / zone that may hold a row where src is
 * TRUE.  Pages (btree) have a NULL min when they start with nulls (nulls sort
 * first) and a NULL max only when every value is NULL; zones may have NULL
 * extrema for other reasons, so zone tests also keep those.
 */
lt_code		lt_index_prune_filter(const lt_filter *src, const lt_field *const *cols, bool zones,
								  lt_filter **out, lt_error *err);

/* Same layout: index values compare with the filter as the column would. */
bool		lt_index_same_type(const lt_field *a, const lt_field *b);

/* One segment's open files. */
typedef struct lt_seg_reader
{
	const lt_index_segment *seg;
	char	   *dir;			/* "<prefix>_indices/<uuid>/" */
	lt_rowaddr_set *frags;		/* the segment's fragments that the dataset still has, whole */

	/* btree */
	lt_index_file *lookup;
	lt_index_file *data;
	lt_array   *page_min, *page_max, *page_nulls, *page_idx;
	uint64_t	batch_size;
	const lt_field *values_f, *ids_f;
	lt_field_reader *values_r, *ids_r;
	/*
	 * Per page of batch_size keys, what search_point_keys found of its layout (0 not looked at yet,
	 * 1 sorted with nulls first, 2 not): the reader is kept across lookups, so a page is checked once.
	 */
	uint8_t    *page_layout;
	char	   *page_key;		/* page_data.lance's key in the decoded-page cache (lt_btree_pages.h) */
	/* lt_btree_distinct's sums over the pages, once per reader (the planner asks at every statement) */
	bool		distinct_known;
	double		distinct_sum, rows_sum;
	/* page_min / page_max ascending and disjoint (binary search for point keys): 0 unknown, 1 yes, 2 no */
	uint8_t		page_order;

	/* bitmap, label_list */
	lt_index_file *bm;
	lt_array   *keys;
	const lt_field *bitmaps_f;
	lt_field_reader *bitmaps_r;
	lt_rowaddr_set *null_lists;	/* label_list: rows whose list is NULL */

	/* stable row ids: the segment's fragments' row-id sequences (payloads hold ids, not addresses) */
	struct lt_id_frag *ids;
	size_t		n_ids;

	/* zonemap */
	lt_index_file *zm;
	lt_array   *z_min, *z_max, *z_nulls, *z_nans, *z_frag, *z_start, *z_len;
} lt_seg_reader;

struct lt_index_reader
{
	lt_dataset *ds;
	const lt_index *idx;
	size_t		n_segs;
	lt_seg_reader *segs;
};

/* Per-kind open (files of one segment) and lookups into *acc (OR-ed). */
lt_code		lt_btree_open(lt_index_reader *r, lt_seg_reader *s, lt_error *err);
lt_code		lt_btree_search(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter,
							lt_rowaddr_set *acc, lt_index_stats *st, lt_error *err);
lt_code		lt_bitmap_open(lt_index_reader *r, lt_seg_reader *s, bool label_list, lt_error *err);
lt_code		lt_bitmap_search(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter,
							 lt_rowaddr_set *acc, lt_index_stats *st, lt_error *err);
lt_code		lt_bitmap_search_labels(lt_index_reader *r, lt_seg_reader *s, lt_label_op op, int n,
									const lt_value *values, lt_rowaddr_set *acc, lt_index_stats *st,
									lt_error *err);
lt_code		lt_zonemap_open(lt_index_reader *r, lt_seg_reader *s, lt_error *err);
lt_code		lt_zonemap_search(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter,
							  lt_rowaddr_set *acc, lt_index_stats *st, lt_error *err);
/* Rows of zones that certainly match: min = max (no nulls, no NaNs) and that value passes. */
lt_code		lt_zonemap_proven(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter,
							  lt_rowaddr_set *acc, lt_index_stats *st, lt_error *err);

/* Planning estimates from what open read (lt_index_distinct): add the segment's distinct values (and rows). */
lt_code		lt_btree_distinct(lt_seg_reader *s, double *distinct, double *rows);
lt_code		lt_bitmap_distinct(lt_seg_reader *s, double *distinct, double *rows);

/* Open "<dir><name>" of a segment; errors name the index. */
lt_code		lt_seg_open_file(lt_index_reader *r, lt_seg_reader *s, const char *name, lt_index_file **out,
							 lt_error *err);

/* Read a uint32/uint64 column whole (or n rows) with type checks. */
lt_code		lt_index_read_column(lt_index_file *xf, const char *name, int type, lt_array **out, lt_error *err);

/* Integer slot i of a UInt32 / UInt64 array (callers checked the type). */
static inline uint64_t
lt_index_uint_at(const lt_array *a, int64_t i)
{
	if (a->field->type == LT_TYPE_UINT32)
		return ((const uint32_t *) a->values)[i];
	return ((const uint64_t *) a->values)[i];
}

#endif
