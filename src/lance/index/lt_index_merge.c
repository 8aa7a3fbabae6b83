/*
 * lt_index_merge.c — the entries of an existing scalar index, read from its
 * files, for a build that takes them over (Lance's optimize: the old
 * segments' entries and the appended rows' make one new segment).
 *
 * Only entries of fragments the dataset still has are handed on (address
 * payloads; row-id payloads of stable-row-id datasets are handed on whole, as
 * Lance keeps them).  Rows deleted since the index was built stay in it, as
 * in Lance's merged segment: readers drop them with the deletion vectors.
 */
#include "index/lt_index_int.h"
#include "index/lt_index_write.h"

#include <string.h>

#include "util/lt_alloc.h"

/* page_data rows read per step */
#define MERGE_CHUNK_ROWS 65536

static bool
keep_id(const lt_index_reader *r, const lt_seg_reader *s, uint64_t id)
{
	if (r->ds->stable_row_ids)
		return true;
	return lt_rowaddr_set_contains(s->frags, id);
}

/* Every (value, id) of a btree segment, in chunks of aligned values and ids. */
static lt_code
btree_entries(lt_index_reader *r, lt_seg_reader *s, const lt_index_entry_sink *sink, lt_error *err)
{
	uint64_t	rows = lt_index_file_rows(s->data);
	lt_array   *vals = NULL,
			   *ids = NULL,
			   *keep_vals = NULL;
	uint64_t   *keep_ids = NULL;
	lt_code		rc;

	s->values_r->independent_reads = false;	/* read through, not page by page */
	s->ids_r->independent_reads = false;
	rc = lt_array_new(s->values_f, &vals, err);
	if (rc == LT_OK)
		rc = lt_array_new(s->ids_f, &ids, err);
	if (rc == LT_OK)
		rc = lt_array_new(s->values_f, &keep_vals, err);
	if (rc == LT_OK && !(keep_ids = lt_malloc(MERGE_CHUNK_ROWS * sizeof(uint64_t))))
		rc = lt_nomem(err);
	for (uint64_t start = 0; rc == LT_OK && start < rows; start += MERGE_CHUNK_ROWS)
	{
		uint64_t	n = rows - start < MERGE_CHUNK_ROWS ? rows - start : MERGE_CHUNK_ROWS;
		int64_t		kept = 0;

		lt_array_clear(vals);
		lt_array_clear(ids);
		lt_array_clear(keep_vals);
		rc = lt_field_reader_read(s->values_r, start, n, vals, err);
		if (rc == LT_OK)
			rc = lt_field_reader_read(s->ids_r, start, n, ids, err);
		if (rc == LT_OK && (vals->length != (int64_t) n || ids->length != (int64_t) n || ids->null_count))
			rc = lt_corrupt(err, "%s: rows [%llu, %llu) do not decode", lt_index_file_path(s->data),
							(unsigned long long) start, (unsigned long long) (start + n));
		for (int64_t i = 0; rc == LT_OK && i < (int64_t) n; i++)
		{
			uint64_t	id = ((const uint64_t *) ids->values)[i];

			if (!keep_id(r, s, id))
				continue;
			rc = lt_array_append_slice(keep_vals, vals, i, 1, err);
			keep_ids[kept++] = id;
		}
		if (rc == LT_OK && kept > 0)
			rc = sink->pairs(sink->arg, keep_vals, kept, keep_ids, err);
		if (rc == LT_OK)
			rc = lt_check_interrupt(err, "reading an index to merge");
	}
	lt_array_free(vals);
	lt_array_free(ids);
	lt_array_free(keep_vals);
	lt_free(keep_ids);
	return rc;
}

typedef struct ids_acc
{
	const lt_index_reader *r;
	const lt_seg_reader *s;
	uint64_t   *ids;
	int64_t		n, cap;
	bool		full;			/* a whole-fragment entry: not an index's */
} ids_acc;

static int
collect_ids(uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg)
{
	ids_acc    *a = arg;

	if (full)
	{
		a->full = true;
		return 1;
	}
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	id = ((uint64_t) frag << 32) | offsets[i];

		if (!keep_id(a->r, a->s, id))
			continue;
		if (!lt_push_u64(&a->ids, &a->n, &a->cap, id))
			return 2;
	}
	return 0;
}

/* The ids of one serialized RowAddrTreeMap that the merge keeps (in *a, reset first). */
static lt_code
map_ids(lt_seg_reader *s, const uint8_t *p, size_t len, ids_acc *a, lt_error *err)
{
	lt_rowaddr_set *set;
	size_t		used;
	int			stop;

	a->n = 0;
	a->full = false;
	LT_TRY(lt_rowaddr_set_parse(p, len, &set, &used, err));
	stop = lt_rowaddr_set_iterate(set, collect_ids, a);
	lt_rowaddr_set_free(set);
	if (stop == 2)
		return lt_nomem(err);
	if (a->full)
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: a bitmap names a whole fragment", lt_index_file_path(s->bm));
	return LT_OK;
}

/* Every key of a bitmap / label_list segment with its ids; label_list: the rows whose list is NULL. */
static lt_code
bitmap_entries(lt_index_reader *r, lt_seg_reader *s, const lt_index_entry_sink *sink, lt_error *err)
{
	ids_acc		a = {r, s, NULL, 0, 0, false};
	lt_array   *maps = NULL;
	int64_t		n = s->keys->length;
	lt_code		rc;

	s->bitmaps_r->independent_reads = false;
	rc = lt_array_new(s->bitmaps_f, &maps, err);
	for (int64_t start = 0; rc == LT_OK && start < n; start += 1024)
	{
		int64_t		m = n - start < 1024 ? n - start : 1024;

		lt_array_clear(maps);
		rc = lt_field_reader_read(s->bitmaps_r, (uint64_t) start, (uint64_t) m, maps, err);
		if (rc == LT_OK && maps->length != m)
			rc = lt_corrupt(err, "%s: bitmaps [%lld, %lld) do not decode", lt_index_file_path(s->bm),
							(long long) start, (long long) (start + m));
		for (int64_t i = 0; rc == LT_OK && i < m; i++)
		{
			if (!lt_array_is_valid(maps, i))
				continue;		/* no bitmap: no rows */
			rc = map_ids(s, maps->data + maps->offsets[i], (size_t) (maps->offsets[i + 1] - maps->offsets[i]), &a,
						 err);
			if (rc == LT_OK && a.n > 0)
				rc = sink->key(sink->arg, s->keys, start + i, a.ids, a.n, err);
		}
		if (rc == LT_OK)
			rc = lt_check_interrupt(err, "reading an index to merge");
	}
	if (rc == LT_OK && s->null_lists && sink->null_lists)
	{
		uint8_t    *buf = NULL;
		size_t		len = 0;

		/* through the serialized form: the same filter on fragments as the keys' */
		rc = lt_rowaddr_set_serialize(s->null_lists, &buf, &len, err);
		if (rc == LT_OK)
			rc = map_ids(s, buf, len, &a, err);
		lt_free(buf);
		if (rc == LT_OK && a.n > 0)
			rc = sink->null_lists(sink->arg, a.ids, a.n, err);
	}
	lt_array_free(maps);
	lt_free(a.ids);
	return rc;
}

/* Every zone of a zonemap segment over a fragment the dataset still has. */
static lt_code
zonemap_entries(lt_index_reader *r, lt_seg_reader *s, const lt_index_entry_sink *sink, lt_error *err)
{
	lt_array   *cols[7] = {s->z_min, s->z_max, s->z_nulls, s->z_nans, s->z_frag, s->z_start, s->z_len};

	for (int64_t i = 0; i < s->z_min->length; i++)
	{
		uint64_t	frag = lt_index_uint_at(s->z_frag, i);

		if (frag > UINT32_MAX || !lt_rowaddr_set_is_full(s->frags, (uint32_t) frag))
			continue;
		if (s->z_nulls->field->type != LT_TYPE_UINT32 || s->z_nans->field->type != LT_TYPE_UINT32)
			return lt_error_set(err, LT_EUNSUPPORTED, "%s: zone counts are not uint32", lt_index_file_path(s->zm));
		LT_TRY(sink->zone(sink->arg, (const lt_array *const *) cols, i, err));
	}
	(void) r;
	return LT_OK;
}

lt_code
lt_index_read_entries(lt_dataset *ds, const lt_index *idx, const lt_field *value_field,
					  const lt_index_entry_sink *sink, lt_error *err)
{
	lt_index_reader *r;
	lt_code		rc = LT_OK;

	LT_TRY(lt_index_open(ds, idx, &r, err));
	for (size_t i = 0; rc == LT_OK && i < r->n_segs; i++)
	{
		lt_seg_reader *s = &r->segs[i];
		const lt_field *vf;

		if (!s->dir)
			continue;			/* none of its fragments is left */
		vf = idx->kind == LT_INDEX_BTREE ? s->values_f : idx->kind == LT_INDEX_ZONEMAP ? s->z_min->field :
			s->keys->field;
		/* the new segment's values are the column's type: an index of another layout is read again from the data */
		if (vf->type != value_field->type || vf->n_children != value_field->n_children ||
			vf->fixed_size != value_field->fixed_size)
			rc = lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\" holds %s keys, column \"%s\" is %s", idx->name,
							  lt_type_name(vf->type), idx->field->name, lt_type_name(value_field->type));
		else if (idx->kind == LT_INDEX_BTREE)
			rc = btree_entries(r, s, sink, err);
		else if (idx->kind == LT_INDEX_BITMAP || idx->kind == LT_INDEX_LABEL_LIST)
			rc = bitmap_entries(r, s, sink, err);
		else if (idx->kind == LT_INDEX_ZONEMAP)
			rc = zonemap_entries(r, s, sink, err);
		else
			rc = lt_error_set(err, LT_EUNSUPPORTED, "index \"%s\": not a scalar index", idx->name);
	}
	lt_index_close(r);
	return rc;
}
