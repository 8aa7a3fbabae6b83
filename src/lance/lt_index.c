/*
 * lt_index.c — opening an index's segments and answering lookups: every
 * segment answers for its own fragments, the answers are OR-ed, restricted
 * to fragments the dataset still has, and cleaned of deleted rows.
 */
#include "lt_index_int.h"

#include <string.h>

#include "lt_alloc.h"
#include "lt_rowids.h"
#include "lt_scan.h"
#include "lt_table.pb-c.h"

lt_code
lt_seg_open_file(lt_index_reader *r, lt_seg_reader *s, const char *name, lt_index_file **out, lt_error *err)
{
	char	   *path = lt_asprintf("%s%s", s->dir, name);
	lt_code		rc;

	if (!path)
		return lt_nomem(err);
	rc = lt_index_file_open(r->ds->store, path, out, err);
	lt_free(path);
	if (rc != LT_OK)
	{
		/* a missing index file is a damaged dataset, not a missing table */
		if (err && err->code == LT_ENOTFOUND)
			err->code = LT_ECORRUPT;
		return lt_error_prefix(err, "index \"%s\"", r->idx->name);
	}
	return LT_OK;
}

lt_code
lt_index_read_column(lt_index_file *xf, const char *name, int type, lt_array **out, lt_error *err)
{
	const lt_field *f;

	LT_TRY(lt_index_file_field(xf, name, type, &f, err));
	return lt_index_file_read(xf, f, 0, lt_index_file_rows(xf), out, err);
}

static void
seg_free(lt_seg_reader *s)
{
	lt_free(s->dir);
	lt_rowaddr_set_free(s->frags);
	lt_field_reader_free(s->values_r);
	lt_field_reader_free(s->ids_r);
	lt_field_reader_free(s->bitmaps_r);
	lt_array_free(s->page_min);
	lt_array_free(s->page_max);
	lt_array_free(s->page_nulls);
	lt_array_free(s->page_idx);
	lt_array_free(s->keys);
	lt_rowaddr_set_free(s->null_lists);
	lt_array_free(s->z_min);
	lt_array_free(s->z_max);
	lt_array_free(s->z_nulls);
	lt_array_free(s->z_nans);
	lt_array_free(s->z_frag);
	lt_array_free(s->z_start);
	lt_array_free(s->z_len);
	lt_index_file_close(s->lookup);
	lt_index_file_close(s->data);
	lt_index_file_close(s->bm);
	lt_index_file_close(s->zm);
}

void
lt_index_close(lt_index_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_segs; i++)
		seg_free(&r->segs[i]);
	lt_free(r->segs);
	lt_free(r);
}

const lt_index *
lt_index_reader_index(const lt_index_reader *r)
{
	return r->idx;
}

lt_code
lt_index_open(lt_dataset *ds, const lt_index *idx, lt_index_reader **out, lt_error *err)
{
	lt_index_reader *r;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (idx->unusable)
		return lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\" (%s) cannot be used: %s", idx->name,
							lt_index_kind_name(idx->kind), idx->unusable);
	if (!(r = lt_calloc(1, sizeof(lt_index_reader))))
		return lt_nomem(err);
	r->ds = ds;
	r->idx = idx;
	if (idx->n_segments && !(r->segs = lt_calloc(idx->n_segments, sizeof(lt_seg_reader))))
		rc = lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && i < idx->n_segments; i++)
	{
		lt_seg_reader *s = &r->segs[i];
		char	   *rel;

		r->n_segs = i + 1;
		s->seg = &idx->segments[i];
		if (!(s->frags = lt_rowaddr_set_create()))
		{
			rc = lt_nomem(err);
			break;
		}
		for (uint64_t k = 0; rc == LT_OK && k < s->seg->n_fragments; k++)
			if (lt_index_covers(idx, s->seg->fragments[k]))
				rc = lt_rowaddr_set_add_fragment(s->frags, s->seg->fragments[k], err);
		/* a segment whose fragments are all gone has nothing to say: skip its files */
		if (rc != LT_OK || lt_rowaddr_set_is_empty(s->frags))
			continue;
		rel = lt_asprintf("_indices/%s/", s->seg->uuid);
		s->dir = rel ? lt_dataset_path(ds, rel) : NULL;
		lt_free(rel);
		if (!s->dir)
		{
			rc = lt_nomem(err);
			break;
		}
		switch (idx->kind)
		{
			case LT_INDEX_BTREE:
				rc = lt_btree_open(r, s, err);
				break;
			case LT_INDEX_BITMAP:
				rc = lt_bitmap_open(r, s, false, err);
				break;
			case LT_INDEX_LABEL_LIST:
				rc = lt_bitmap_open(r, s, true, err);
				break;
			case LT_INDEX_ZONEMAP:
				rc = lt_zonemap_open(r, s, err);
				break;
			default:
				rc = lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\": unknown kind", idx->name);
		}
	}
	if (rc != LT_OK)
	{
		lt_index_close(r);
		return rc;
	}
	*out = r;
	return LT_OK;
}

/* Keep s's own fragments (that still exist) of what one segment returned, add it to acc. */
static lt_code
merge_segment(lt_seg_reader *s, lt_rowaddr_set *part, lt_rowaddr_set *acc, lt_error *err)
{
	LT_TRY(lt_rowaddr_set_and(part, s->frags, err));
	return lt_rowaddr_set_or(acc, part, err);
}

/* Resolve whole fragments and drop deleted rows. */
static lt_code
finish(lt_index_reader *r, lt_rowaddr_set *acc, lt_index_stats *st, lt_error *err)
{
	uint64_t	removed = 0;

	LT_TRY(lt_rowaddr_set_resolve(r->ds, acc, err));
	LT_TRY(lt_rowaddr_set_remove_deleted(r->ds, acc, &removed, err));
	if (st)
		st->rows_deleted += removed;
	return LT_OK;
}

static lt_code
check_filter(lt_index_reader *r, lt_filter *filter, lt_error *err)
{
	const lt_field *const *cols = lt_filter_columns(filter);

	if (lt_filter_n_columns(filter) != 1 || !lt_filter_root(filter))
		return lt_error_set(err, LT_EINVALID, "index \"%s\": a lookup takes a filter over one column",
							r->idx->name);
	if (cols[0]->id != r->idx->field->id)
		return lt_error_set(err, LT_EINVALID, "index \"%s\" is on column \"%s\", the filter on \"%s\"",
							r->idx->name, r->idx->field->name, cols[0]->name);
	return LT_OK;
}

lt_code
lt_index_search(lt_index_reader *r, lt_filter *filter, lt_rowaddr_set **out, bool *exact,
				lt_index_stats *stats, lt_error *err)
{
	lt_rowaddr_set *acc;
	lt_code		rc = LT_OK;

	*out = NULL;
	*exact = r->idx->kind != LT_INDEX_ZONEMAP;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	LT_TRY(check_filter(r, filter, err));
	if (r->idx->kind == LT_INDEX_LABEL_LIST)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"index \"%s\" (label_list) answers array containment, not scalar comparisons",
							r->idx->name);
	if (!(acc = lt_rowaddr_set_create()))
		return lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && i < r->n_segs; i++)
	{
		lt_seg_reader *s = &r->segs[i];
		lt_rowaddr_set *part;

		if (!s->dir)
			continue;
		if (!(part = lt_rowaddr_set_create()))
		{
			rc = lt_nomem(err);
			break;
		}
		switch (r->idx->kind)
		{
			case LT_INDEX_BTREE:
				rc = lt_btree_search(r, s, filter, part, stats, err);
				break;
			case LT_INDEX_BITMAP:
				rc = lt_bitmap_search(r, s, filter, part, stats, err);
				break;
			case LT_INDEX_ZONEMAP:
				rc = lt_zonemap_search(r, s, filter, part, stats, err);
				break;
			default:
				rc = lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\": unknown kind", r->idx->name);
		}
		if (rc == LT_OK)
			rc = merge_segment(s, part, acc, err);
		lt_rowaddr_set_free(part);
	}
	if (rc == LT_OK)
		rc = finish(r, acc, stats, err);
	if (rc != LT_OK)
	{
		lt_rowaddr_set_free(acc);
		return rc;
	}
	*out = acc;
	return LT_OK;
}

lt_code
lt_index_search_labels(lt_index_reader *r, lt_label_op op, int n, const lt_value *values,
					   lt_rowaddr_set **out, lt_index_stats *stats, lt_error *err)
{
	lt_rowaddr_set *acc;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (r->idx->kind != LT_INDEX_LABEL_LIST)
		return lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\" (%s) is not a label_list index", r->idx->name,
							lt_index_kind_name(r->idx->kind));
	if (n < 0 || (n > 0 && !values))
		return lt_error_set(err, LT_EINVALID, "label lookup: bad value list");
	if (!(acc = lt_rowaddr_set_create()))
		return lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && i < r->n_segs; i++)
	{
		lt_seg_reader *s = &r->segs[i];
		lt_rowaddr_set *part;

		if (!s->dir)
			continue;
		if (!(part = lt_rowaddr_set_create()))
		{
			rc = lt_nomem(err);
			break;
		}
		rc = lt_bitmap_search_labels(r, s, op, n, values, part, stats, err);
		if (rc == LT_OK)
			rc = merge_segment(s, part, acc, err);
		lt_rowaddr_set_free(part);
	}
	if (rc == LT_OK)
		rc = finish(r, acc, stats, err);
	if (rc != LT_OK)
	{
		lt_rowaddr_set_free(acc);
		return rc;
	}
	*out = acc;
	return LT_OK;
}

lt_code
lt_index_covered_rows(lt_index_reader *r, lt_rowaddr_set **out, lt_error *err)
{
	lt_rowaddr_set *u;
	lt_code		rc;

	*out = NULL;
	LT_TRY(lt_rowaddr_set_universe(r->ds, r->idx->covered, r->idx->n_covered, &u, err));
	rc = lt_rowaddr_set_remove_deleted(r->ds, u, NULL, err);
	if (rc != LT_OK)
	{
		lt_rowaddr_set_free(u);
		return rc;
	}
	*out = u;
	return LT_OK;
}

/* --- row-address sets relative to a dataset -------------------------------- */

static const Lt__Pb__DataFragment *
find_fragment(const lt_dataset *ds, uint32_t id)
{
	size_t		lo = 0,
				hi = ds->n_fragments;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (ds->fragments[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ds->n_fragments && ds->fragments[lo]->id == id ? ds->fragments[lo] : NULL;
}

lt_code
lt_rowaddr_set_universe(lt_dataset *ds, const uint32_t *frags, size_t n, lt_rowaddr_set **out, lt_error *err)
{
	lt_rowaddr_set *u = lt_rowaddr_set_create();
	lt_code		rc = LT_OK;

	*out = NULL;
	if (!u)
		return lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && i < (frags ? n : ds->n_fragments); i++)
	{
		const Lt__Pb__DataFragment *f = frags ? find_fragment(ds, frags[i]) : ds->fragments[i];

		if (!f || f->id > UINT32_MAX)
			continue;
		if (f->physical_rows > LT_MAX_FRAGMENT_ROWS)
			rc = lt_corrupt(err, "%s: fragment %llu has %llu rows", ds->manifest_path,
							(unsigned long long) f->id, (unsigned long long) f->physical_rows);
		else
			rc = lt_rowaddr_set_add_range(u, (uint32_t) f->id, 0, f->physical_rows, err);
	}
	if (rc != LT_OK)
	{
		lt_rowaddr_set_free(u);
		return rc;
	}
	*out = u;
	return LT_OK;
}

lt_code
lt_rowaddr_set_resolve(lt_dataset *ds, lt_rowaddr_set *s, lt_error *err)
{
	uint32_t   *ids;
	size_t		n;
	lt_code		rc = LT_OK;

	LT_TRY(lt_rowaddr_set_fragments(s, &ids, &n, err));
	for (size_t i = 0; rc == LT_OK && i < n; i++)
	{
		const Lt__Pb__DataFragment *f = find_fragment(ds, ids[i]);

		if (!f)
			lt_rowaddr_set_remove_fragment(s, ids[i]);
		else
			rc = lt_rowaddr_set_bound_fragment(s, ids[i], f->physical_rows, err);
	}
	lt_free(ids);
	return rc;
}

lt_code
lt_rowaddr_set_remove_deleted(lt_dataset *ds, lt_rowaddr_set *s, uint64_t *removed, lt_error *err)
{
	uint32_t   *ids;
	size_t		n;
	lt_code		rc = LT_OK;

	if (removed)
		*removed = 0;
	LT_TRY(lt_rowaddr_set_fragments(s, &ids, &n, err));
	for (size_t i = 0; rc == LT_OK && i < n; i++)
	{
		const Lt__Pb__DataFragment *f = find_fragment(ds, ids[i]);
		uint32_t   *del;
		uint64_t	nd,
					gone = 0;

		if (!f || !f->deletion_file)
			continue;
		if (lt_rowaddr_set_is_full(s, ids[i]))
			rc = lt_rowaddr_set_bound_fragment(s, ids[i], f->physical_rows, err);
		if (rc == LT_OK)
			rc = lt_fragment_deleted_offsets(ds, f, &del, &nd, err);
		if (rc == LT_OK)
		{
			rc = lt_rowaddr_set_remove_offsets(s, ids[i], del, nd, &gone, err);
			lt_free(del);
		}
		if (removed)
			*removed += gone;
	}
	lt_free(ids);
	return rc;
}
