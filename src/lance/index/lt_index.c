/*
 * lt_index.c — opening an index's segments and answering lookups: every
 * segment answers for its own fragments, the answers are OR-ed, restricted
 * to fragments the dataset still has, and cleaned of deleted rows.
 */
#include "index/lt_index_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_rowids.h"
#include "proto/lt_table.pb-c.h"

/* --- stable row ids ---------------------------------------------------------- */

/*
 * With stable row ids the payloads of btree / bitmap / label_list hold row
 * ids (seen in Lance 8 files: a row moved by an update keeps its id and the
 * index holds that id).  Each segment keeps its fragments' row-id sequences;
 * an id none of them holds (a row of a removed fragment) drops out.
 */
typedef struct lt_id_frag
{
	uint32_t	frag;
	lt_rowid_seq *seq;
	bool		range;			/* ids [start, start + rows) at offsets 0.. */
	uint64_t	start,
				rows;
	uint64_t	max_end;		/* ranges: the largest start + rows of this and the ranges before it */
} lt_id_frag;

static int
cmp_id_frag(const void *a, const void *b)
{
	const lt_id_frag *x = a,
			   *y = b;

	/* ranges first, by start; the others after */
	if (x->range != y->range)
		return x->range ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static lt_code
row_id_bytes(lt_dataset *ds, const Lt__Pb__DataFragment *frag, uint8_t **owned, const uint8_t **p, size_t *len,
			 lt_error *err)
{
	const Lt__Pb__ExternalFile *ext;
	char	   *path;
	lt_rfile   *f = NULL;
	lt_code		rc;

	*owned = NULL;
	if (frag->row_id_sequence_case == LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS)
	{
		*p = frag->inline_row_ids.data;
		*len = frag->inline_row_ids.len;
		return LT_OK;
	}
	if (frag->row_id_sequence_case != LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_EXTERNAL_ROW_IDS)
		return lt_corrupt(err, "%s: fragment %llu has no row ids although the dataset uses stable row ids",
						  ds->manifest_path, (unsigned long long) frag->id);
	ext = frag->external_row_ids;
	if (!ext->path)
		return lt_corrupt(err, "%s: fragment %llu: external row ids without a path", ds->manifest_path,
						  (unsigned long long) frag->id);
	if (ext->size > ((uint64_t) 1 << 32))
		return lt_corrupt(err, "%s: row ids of fragment %llu: %llu bytes", ds->manifest_path,
						  (unsigned long long) frag->id, (unsigned long long) ext->size);
	if (!(path = lt_dataset_path(ds, ext->path)))
		return lt_nomem(err);
	rc = lt_store_open_file(ds->store, path, &f, err);
	if (rc == LT_OK && !(*owned = lt_malloc(ext->size ? ext->size : 1)))
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = lt_rfile_read(f, ext->offset, ext->size, *owned, err);
	lt_rfile_close(f);
	lt_free(path);
	*p = *owned;
	*len = (size_t) ext->size;
	return rc;
}


static lt_code
load_id_map(lt_dataset *ds, lt_seg_reader *s, lt_error *err)
{
	uint32_t   *frags;
	size_t		n;
	lt_code		rc = LT_OK;

	LT_TRY(lt_rowaddr_set_fragments(s->frags, &frags, &n, err));
	if (n > 0 && !(s->ids = lt_calloc(n, sizeof(lt_id_frag))))
		rc = lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && i < n; i++)
	{
		const Lt__Pb__DataFragment *f = lt_dataset_fragment(ds, frags[i]);
		lt_id_frag *x = &s->ids[s->n_ids];
		uint8_t    *owned = NULL;
		const uint8_t *p = NULL;
		size_t		len = 0;

		if (!f)
			continue;
		rc = row_id_bytes(ds, f, &owned, &p, &len, err);
		if (rc == LT_OK)
			rc = lt_rowid_seq_parse(p, len, f->physical_rows, &x->seq, err);
		lt_free(owned);
		if (rc != LT_OK)
			break;
		x->frag = frags[i];
		x->rows = f->physical_rows;
		x->range = lt_rowid_seq_is_range(x->seq, &x->start);
		s->n_ids++;
	}
	lt_free(frags);
	if (rc == LT_OK && s->n_ids > 1)
		qsort(s->ids, s->n_ids, sizeof(lt_id_frag), cmp_id_frag);
	for (size_t i = 0; rc == LT_OK && i < s->n_ids && s->ids[i].range; i++)
	{
		uint64_t	end = s->ids[i].start + s->ids[i].rows;

		s->ids[i].max_end = i > 0 && s->ids[i - 1].max_end > end ? s->ids[i - 1].max_end : end;
	}
	return rc;
}

typedef struct id_xlate
{
	lt_seg_reader *s;
	size_t		n_ranges;
	lt_rowaddr_set *out;
	lt_error   *err;
	lt_code		rc;
} id_xlate;

static int
xlate_cb(uint32_t hi, bool full, const uint32_t *lo, size_t n, void *arg)
{
	id_xlate   *x = arg;

	if (full)
	{
		x->rc = lt_error_set(x->err, LT_EUNSUPPORTED, "a whole-fragment entry among stable row ids");
		return 1;
	}
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	id = (uint64_t) hi << 32 | lo[i];
		size_t		a = 0,
					b = x->n_ranges;
		uint64_t	pos;

		/*
		 * Every fragment holding the id: an updated row keeps its id in its old
		 * fragment (masked by a deletion) and in the new one; deletions are
		 * applied later.  Ranges are sorted by start: walk back from the last
		 * start <= id while an earlier range can still reach it.
		 */
		while (a < b)
		{
			size_t		m = a + (b - a) / 2;

			if (x->s->ids[m].start <= id)
				a = m + 1;
			else
				b = m;
		}
		for (size_t k = a; x->rc == LT_OK && k > 0 && x->s->ids[k - 1].max_end > id; k--)
			if (id - x->s->ids[k - 1].start < x->s->ids[k - 1].rows)
				x->rc = lt_rowaddr_set_add(x->out, (uint64_t) x->s->ids[k - 1].frag << 32 |
										   (id - x->s->ids[k - 1].start), x->err);
		for (size_t k = x->n_ranges; x->rc == LT_OK && k < x->s->n_ids; k++)
			if (lt_rowid_seq_find(x->s->ids[k].seq, id, &pos))
				x->rc = lt_rowaddr_set_add(x->out, (uint64_t) x->s->ids[k].frag << 32 | pos, x->err);
		if (x->rc != LT_OK)
			return 1;
	}
	return 0;
}

/* Replace a segment's answer in row ids by the addresses of those rows. */
static lt_code
ids_to_addresses(lt_seg_reader *s, lt_rowaddr_set **part, lt_error *err)
{
	id_xlate	x = {s, 0, lt_rowaddr_set_create(), err, LT_OK};

	if (!x.out)
		return lt_nomem(err);
	while (x.n_ranges < s->n_ids && s->ids[x.n_ranges].range)
		x.n_ranges++;
	lt_rowaddr_set_iterate(*part, xlate_cb, &x);
	if (x.rc != LT_OK)
	{
		lt_rowaddr_set_free(x.out);
		return x.rc;
	}
	lt_rowaddr_set_free(*part);
	*part = x.out;
	return LT_OK;
}

static void
seg_free(lt_seg_reader *s)
{
	for (size_t i = 0; i < s->n_ids; i++)
		lt_rowid_seq_free(s->ids[i].seq);
	lt_free(s->ids);
	lt_free(s->dir);
	lt_rowaddr_set_free(s->frags);
	lt_field_reader_free(s->values_r);
	lt_free(s->page_layout);
	lt_free(s->page_key);
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

/* The files of idx's segments that cover fragments ds still has, fetched at once on a remote store. */
static lt_code
prefetch_segments(lt_dataset *ds, const lt_index *idx, lt_error *err)
{
	static const char *const btree[] = {"page_lookup.lance", "page_data.lance", NULL};
	static const char *const bitmap[] = {"bitmap_page_lookup.lance", NULL};
	static const char *const zonemap[] = {"zonemap.lance", NULL};
	const char *const *names = idx->kind == LT_INDEX_BTREE ? btree
		: idx->kind == LT_INDEX_ZONEMAP ? zonemap : bitmap;
	char	  **paths;
	int			np = 0;
	lt_code		rc;

	if (!ds->store->ops->prefetch || idx->n_segments == 0)
		return LT_OK;
	if (!(paths = lt_calloc(idx->n_segments * 2, sizeof(char *))))
		return LT_OK;			/* best effort */
	for (size_t i = 0; i < idx->n_segments; i++)
	{
		const lt_index_segment *seg = &idx->segments[i];
		bool		live = false;

		for (uint64_t k = 0; k < seg->n_fragments && !live; k++)
			live = lt_index_covers(idx, seg->fragments[k]);
		for (int j = 0; live && names[j]; j++)
		{
			char	   *dir = lt_index_segment_dir(ds, seg);

			if (dir && (paths[np] = lt_asprintf("%s%s", dir, names[j])) != NULL)
				np++;
			lt_free(dir);
		}
	}
	rc = lt_store_prefetch(ds->store, np, (const char *const *) paths, err);
	for (int i = 0; i < np; i++)
		lt_free(paths[i]);
	lt_free(paths);
	return rc;
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
	if (rc == LT_OK)
		rc = prefetch_segments(ds, idx, err);	/* the segments' files, opened one by one below */
	for (size_t i = 0; rc == LT_OK && i < idx->n_segments; i++)
	{
		lt_seg_reader *s = &r->segs[i];

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
		s->dir = lt_index_segment_dir(ds, s->seg);
		if (!s->dir)
		{
			rc = lt_nomem(err);
			break;
		}
		if (ds->stable_row_ids && idx->kind != LT_INDEX_ZONEMAP)
			rc = load_id_map(ds, s, err);
		if (rc != LT_OK)
			break;
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
merge_segment(lt_index_reader *r, lt_seg_reader *s, lt_rowaddr_set **part, lt_rowaddr_set *acc, lt_error *err)
{
	if (r->ds->stable_row_ids && r->idx->kind != LT_INDEX_ZONEMAP)
		LT_TRY(ids_to_addresses(s, part, err));
	LT_TRY(lt_rowaddr_set_and(*part, s->frags, err));
	return lt_rowaddr_set_or(acc, *part, err);
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

/* What one segment is asked: a scalar filter, or a label lookup. */
typedef struct seg_query
{
	lt_filter  *filter;
	bool		proven;			/* zonemap: only the rows proven to match */
	lt_label_op op;
	int			n;
	const lt_value *values;
} seg_query;

static lt_code
search_segment(lt_index_reader *r, lt_seg_reader *s, const seg_query *q, lt_rowaddr_set *part,
			   lt_index_stats *stats, lt_error *err)
{
	switch (r->idx->kind)
	{
		case LT_INDEX_BTREE:
			return lt_btree_search(r, s, q->filter, part, stats, err);
		case LT_INDEX_BITMAP:
			return lt_bitmap_search(r, s, q->filter, part, stats, err);
		case LT_INDEX_ZONEMAP:
			if (q->proven)
				return lt_zonemap_proven(r, s, q->filter, part, stats, err);
			return lt_zonemap_search(r, s, q->filter, part, stats, err);
		case LT_INDEX_LABEL_LIST:
			return lt_bitmap_search_labels(r, s, q->op, q->n, q->values, part, stats, err);
		default:
			return lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\": unknown kind", r->idx->name);
	}
}

/* Ask every segment, merge their answers (each limited to its own fragments) and finish the set. */
static lt_code
search_segments(lt_index_reader *r, const seg_query *q, lt_rowaddr_set **out, lt_index_stats *stats,
				lt_error *err)
{
	lt_rowaddr_set *acc;
	lt_code		rc = LT_OK;

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
		rc = search_segment(r, s, q, part, stats, err);
		if (rc == LT_OK)
			rc = merge_segment(r, s, &part, acc, err);
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
lt_index_search(lt_index_reader *r, lt_filter *filter, lt_rowaddr_set **out, bool *exact,
				lt_index_stats *stats, lt_error *err)
{
	seg_query	q = {.filter = filter};

	*out = NULL;
	*exact = r->idx->kind != LT_INDEX_ZONEMAP;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	LT_TRY(check_filter(r, filter, err));
	if (r->idx->kind == LT_INDEX_LABEL_LIST)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"index \"%s\" (label_list) answers array containment, not scalar comparisons",
							r->idx->name);
	return search_segments(r, &q, out, stats, err);
}

lt_code
lt_index_search_proven(lt_index_reader *r, lt_filter *filter, lt_rowaddr_set **out, lt_error *err)
{
	seg_query	q = {.filter = filter, .proven = true};
	bool		exact;

	if (r->idx->kind != LT_INDEX_ZONEMAP)
		return lt_index_search(r, filter, out, &exact, NULL, err);
	*out = NULL;
	LT_TRY(check_filter(r, filter, err));
	return search_segments(r, &q, out, NULL, err);
}

lt_code
lt_index_search_labels(lt_index_reader *r, lt_label_op op, int n, const lt_value *values,
					   lt_rowaddr_set **out, lt_index_stats *stats, lt_error *err)
{
	seg_query	q = {.op = op, .n = n, .values = values};

	*out = NULL;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (r->idx->kind != LT_INDEX_LABEL_LIST)
		return lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\" (%s) is not a label_list index", r->idx->name,
							lt_index_kind_name(r->idx->kind));
	if (n < 0 || (n > 0 && !values))
		return lt_error_set(err, LT_EINVALID, "label lookup: bad value list");
	return search_segments(r, &q, out, stats, err);
}

lt_code
lt_index_distinct(lt_index_reader *r, double *distinct, double *rows, lt_error *err)
{
	*distinct = *rows = 0;
	if (r->idx->kind != LT_INDEX_BTREE && r->idx->kind != LT_INDEX_BITMAP)
		return lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\" (%s) has no distinct-value estimate", r->idx->name,
							lt_index_kind_name(r->idx->kind));
	for (size_t i = 0; i < r->n_segs; i++)
	{
		if (!r->segs[i].dir)
			continue;
		if (r->idx->kind == LT_INDEX_BTREE)
			LT_TRY(lt_btree_distinct(&r->segs[i], distinct, rows));
		else
			LT_TRY(lt_bitmap_distinct(&r->segs[i], distinct, rows));
	}
	if (r->idx->kind == LT_INDEX_BITMAP)
	{
		for (size_t i = 0; i < r->idx->n_covered; i++)
		{
			const Lt__Pb__DataFragment *f = lt_dataset_fragment(r->ds, r->idx->covered[i]);

			if (f)
				*rows += (double) lt_fragment_live_rows(f);
		}
	}
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
