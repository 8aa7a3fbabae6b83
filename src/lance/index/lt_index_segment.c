/*
 * lt_index_segment.c — what the per-kind segment readers (lt_index_btree.c,
 * lt_index_bitmap.c, lt_index_zonemap.c) and lt_index.c share: opening a
 * segment's files, reading an index column whole, and row-address sets
 * relative to a dataset (its fragments, their physical rows, their deletions).
 */
#include "index/lt_index_int.h"

#include "util/lt_alloc.h"
#include "table/lt_rowids.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

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

/* --- row-address sets relative to a dataset -------------------------------- */

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
		const Lt__Pb__DataFragment *f = frags ? lt_dataset_fragment(ds, frags[i]) : ds->fragments[i];

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
		const Lt__Pb__DataFragment *f = lt_dataset_fragment(ds, ids[i]);

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
		const Lt__Pb__DataFragment *f = lt_dataset_fragment(ds, ids[i]);
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
