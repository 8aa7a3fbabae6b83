/*
 * lt_index_meta.c — the manifest's IndexSection as a list of named indexes
 * with their segments and fragment coverage.
 */
#include "index/lt_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "proto/lt_table.pb-c.h"
#include "util/lt_sort.h"

/* Fragment ids are 32-bit; a fragment bitmap cannot list more than the manifest could hold. */
#define MAX_BITMAP_FRAGMENTS ((uint64_t) 1 << 24)

typedef struct kind_entry
{
	const char *type_url;
	lt_index_kind kind;
	int32_t		max_version;	/* highest index_version this reader knows */
} kind_entry;

/*
 * The details' message name (the type_url's last '.'-separated part, as Lance's registry matches it: so
 * "/lance.table.BTreeIndexDetails", "type.googleapis.com/lance.table.BTreeIndexDetails" and lance 0.36's
 * "/lance.index.pb.BTreeIndexDetails" are all a btree); versions from Lance 8.
 */
static const kind_entry KINDS[] = {
	{"BTreeIndexDetails", LT_INDEX_BTREE, 0},
	{"BitmapIndexDetails", LT_INDEX_BITMAP, 0},
	{"LabelListIndexDetails", LT_INDEX_LABEL_LIST, 1},
	{"ZoneMapIndexDetails", LT_INDEX_ZONEMAP, 0},
};

const char *
lt_index_kind_name(lt_index_kind k)
{
	switch (k)
	{
		case LT_INDEX_BTREE: return "btree";
		case LT_INDEX_BITMAP: return "bitmap";
		case LT_INDEX_LABEL_LIST: return "label_list";
		case LT_INDEX_ZONEMAP: return "zonemap";
		default: return "unknown";
	}
}

static const kind_entry *
find_kind(const char *type_url)
{
	const char *u = type_url ? type_url : "";
	const char *dot = strrchr(u, '.');
	const char *name = dot ? dot + 1 : u;

	for (size_t i = 0; i < sizeof(KINDS) / sizeof(KINDS[0]); i++)
		if (strcmp(name, KINDS[i].type_url) == 0)
			return &KINDS[i];
	return NULL;
}

static void format_uuid(const ProtobufCBinaryData *b, char out[37]);

static bool
segment_has_file(const lt_dataset *ds, const char *uuid, const char *name)
{
	char	   *rel = lt_asprintf("_indices/%s/%s", uuid, name);
	char	   *path = rel ? lt_dataset_path(ds, rel) : NULL;
	lt_stat		st;
	bool		found;

	found = path && lt_store_stat(ds->store, path, &st, NULL) == LT_OK && !st.is_dir;
	lt_free(rel);
	lt_free(path);
	return found;
}

/*
 * An index without index_details (lance before 0.19.2) is told by its files, as Lance tells it: on a list
 * column a label_list, else a bitmap when bitmap_page_lookup.lance is there, else a btree when page_lookup.lance
 * is (Lance assumes a btree without checking; a vector index of that age has neither file, and stays unknown).
 */
static const kind_entry *
infer_kind(const lt_dataset *ds, const Lt__Pb__IndexMetadata *m)
{
	const lt_field *f = m->n_fields == 1 ? lt_schema_find_id(ds->schema, m->fields[0]) : NULL;
	char		uuid[37];

	if (!f || !m->uuid || !m->uuid->has_uuid || m->uuid->uuid.len != 16)
		return NULL;
	format_uuid(&m->uuid->uuid, uuid);
	if (segment_has_file(ds, uuid, "bitmap_page_lookup.lance"))
		return &KINDS[f->type == LT_TYPE_LIST || f->type == LT_TYPE_LARGE_LIST ? 2 : 1];
	if (segment_has_file(ds, uuid, "page_lookup.lance"))
		return &KINDS[0];
	return NULL;
}

static void
free_index(lt_index *ix)
{
	for (size_t s = 0; s < ix->n_segments; s++)
	{
		lt_index_segment *seg = &ix->segments[s];

		lt_free(seg->fragments);
		for (size_t k = 0; k < seg->n_files; k++)
			lt_free(seg->files[k]);
		lt_free(seg->files);
	}
	lt_free(ix->segments);
	lt_free(ix->name);
	lt_free(ix->field_ids);
	lt_free(ix->covered);
	lt_free(ix->unindexed);
}

void
lt_index_list_free(lt_index_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free_index(&l->items[i]);
	lt_free(l->items);
	lt_free(l);
}

static void
format_uuid(const ProtobufCBinaryData *b, char out[37])
{
	static const char hex[] = "0123456789abcdef";
	char	   *p = out;

	for (size_t i = 0; i < 16; i++)
	{
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[b->data[i] >> 4];
		*p++ = hex[b->data[i] & 15];
	}
	*p = '\0';
}

static bool
same_fields(const lt_index *ix, const Lt__Pb__IndexMetadata *m)
{
	if ((size_t) ix->n_fields != m->n_fields)
		return false;
	for (size_t i = 0; i < m->n_fields; i++)
		if (ix->field_ids[i] != m->fields[i])
			return false;
	return true;
}

/* Add segment m to ix (created when new). */
static lt_code
add_segment(const lt_dataset *ds, lt_index *ix, bool fresh, const Lt__Pb__IndexMetadata *m, size_t pos,
			lt_error *err)
{
	const char *url = m->index_details ? m->index_details->type_url : NULL;
	const kind_entry *ke = url && url[0] ? find_kind(url) : infer_kind(ds, m);
	lt_index_segment *seg;
	lt_index_segment *ns;

	if (!m->uuid || !m->uuid->has_uuid || m->uuid->uuid.len != 16)
		return lt_corrupt(err, "%s: index %zu (\"%s\") has no 16-byte uuid", ds->manifest_path, pos, ix->name);
	if (fresh)
	{
		ix->kind = ke ? ke->kind : LT_INDEX_UNKNOWN;
		ix->type_url = m->index_details && m->index_details->type_url ? m->index_details->type_url : "";
		ix->n_fields = (int) m->n_fields;
		if (m->n_fields > 0)
		{
			if (!(ix->field_ids = lt_malloc(m->n_fields * sizeof(int32_t))))
				return lt_nomem(err);
			memcpy(ix->field_ids, m->fields, m->n_fields * sizeof(int32_t));
		}
		if (!ke)
			ix->unusable = "unknown index type";
	}
	else if ((ke ? ke->kind : LT_INDEX_UNKNOWN) != ix->kind || !same_fields(ix, m))
		ix->unusable = "segments of different kinds or fields share the name";

	if (!(ns = lt_realloc(ix->segments, (ix->n_segments + 1) * sizeof(lt_index_segment))))
		return lt_nomem(err);
	ix->segments = ns;
	seg = &ix->segments[ix->n_segments++];
	memset(seg, 0, sizeof(*seg));
	format_uuid(&m->uuid->uuid, seg->uuid);
	seg->dataset_version = m->dataset_version;
	seg->index_version = m->has_index_version ? m->index_version : -1;
	if (ke && seg->index_version > ke->max_version)
		ix->unusable = "unknown index version";

	if (m->has_fragment_bitmap)
	{
		lt_code		rc = lt_roaring_decode_array(m->fragment_bitmap.data, m->fragment_bitmap.len,
												 MAX_BITMAP_FRAGMENTS, &seg->fragments, &seg->n_fragments,
												 NULL, err);

		if (rc != LT_OK)
			return lt_error_prefix(err, "%s: fragment bitmap of index \"%s\" (%s)", ds->manifest_path, ix->name,
								   seg->uuid);
	}
	else
		ix->unusable = "an index segment without a fragment bitmap";

	if (m->n_files > 0)
	{
		if (!(seg->files = lt_calloc(m->n_files, sizeof(char *))))
			return lt_nomem(err);
		for (size_t k = 0; k < m->n_files; k++)
		{
			const char *p = m->files[k]->path ? m->files[k]->path : "";

			/* names only: a path must stay inside the segment's directory */
			if (!*p || strchr(p, '/') || strcmp(p, "..") == 0 || strcmp(p, ".") == 0)
				return lt_corrupt(err, "%s: index \"%s\" (%s) lists file \"%s\"", ds->manifest_path, ix->name,
								  seg->uuid, p);
			if (!(seg->files[k] = lt_strdup(p)))
				return lt_nomem(err);
			seg->n_files = k + 1;
		}
	}
	if (m->has_base_id && ds->n_bases > 0)
	{
		/* a branch's index: its files are where the base path (a parent's root) is */
		seg->has_base = true;
		seg->base_id = m->base_id;
		if (!lt_dataset_file_path(ds, true, m->base_id, ""))
			ix->unusable = "index files in a base path the manifest does not declare";
	}
	else if (m->has_base_id && m->base_id != 0)
		ix->unusable = "index files in another base path";
	return LT_OK;
}

char *
lt_index_segment_dir(const lt_dataset *ds, const lt_index_segment *seg)
{
	char	   *rel = lt_asprintf("_indices/%s/", seg->uuid);
	char	   *dir = rel ? lt_dataset_file_path(ds, seg->has_base, seg->base_id, rel) : NULL;

	lt_free(rel);
	return dir;
}

/* covered = union of segment bitmaps ∩ dataset fragments; unindexed = the rest of the dataset. */
static lt_code
compute_coverage(const lt_dataset *ds, lt_index *ix, lt_error *err)
{
	uint64_t	total = 0;
	uint32_t   *all;
	size_t		n = 0;

	for (size_t s = 0; s < ix->n_segments; s++)
		total += ix->segments[s].n_fragments;
	if (ds->n_fragments > 0)
	{
		ix->covered = lt_malloc(ds->n_fragments * sizeof(uint32_t));
		ix->unindexed = lt_malloc(ds->n_fragments * sizeof(uint32_t));
		if (!ix->covered || !ix->unindexed)
			return lt_nomem(err);
	}
	all = lt_malloc((total ? total : 1) * sizeof(uint32_t));
	if (!all)
		return lt_nomem(err);
	for (size_t s = 0; s < ix->n_segments; s++)
	{
		if (ix->segments[s].n_fragments)	/* a segment covering nothing (after a TRUNCATE) has no array */
			memcpy(all + n, ix->segments[s].fragments, ix->segments[s].n_fragments * sizeof(uint32_t));
		n += ix->segments[s].n_fragments;
	}
	qsort(all, n, sizeof(uint32_t), lt_cmp_u32);
	for (size_t i = 1; i < n; i++)
		if (all[i] == all[i - 1])
		{
			/* two segments answering for one fragment would count its rows twice */
			ix->unusable = "index segments overlap";
			break;
		}
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		uint64_t	id = ds->fragments[i]->id;
		bool		hit = id <= UINT32_MAX && bsearch(&(uint32_t) {(uint32_t) id}, all, n, sizeof(uint32_t),
												  lt_cmp_u32) != NULL;

		if (hit)
			ix->covered[ix->n_covered++] = (uint32_t) id;
		else
			ix->unindexed[ix->n_unindexed++] = (uint32_t) id;
	}
	lt_free(all);
	return LT_OK;
}

lt_code
lt_dataset_indexes(const lt_dataset *ds, lt_index_list **out, lt_error *err)
{
	const Lt__Pb__IndexSection *sec = ds->index_section;
	lt_index_list *l;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (!(l = lt_calloc(1, sizeof(lt_index_list))))
		return lt_nomem(err);
	if (sec && sec->n_indices > 0 && !(l->items = lt_calloc(sec->n_indices, sizeof(lt_index))))
		rc = lt_nomem(err);
	for (size_t i = 0; rc == LT_OK && sec && i < sec->n_indices; i++)
	{
		const Lt__Pb__IndexMetadata *m = sec->indices[i];
		const char *name = m->name ? m->name : "";
		lt_index   *ix = NULL;
		bool		fresh = false;

		for (size_t k = 0; k < l->n; k++)
			if (strcmp(l->items[k].name, name) == 0)
				ix = &l->items[k];
		if (!ix)
		{
			ix = &l->items[l->n++];
			fresh = true;
			if (!(ix->name = lt_strdup(name)))
			{
				rc = lt_nomem(err);
				break;
			}
		}
		rc = add_segment(ds, ix, fresh, m, i, err);
	}
	for (size_t k = 0; rc == LT_OK && k < l->n; k++)
	{
		lt_index   *ix = &l->items[k];

		rc = compute_coverage(ds, ix, err);
		if (ix->n_fields == 1)
		{
			const lt_field *f = lt_schema_find_id(ds->schema, ix->field_ids[0]);

			/* scalar indexes here are on top-level columns */
			ix->field = f && f->parent_id == -1 ? f : NULL;
		}
		if (!ix->unusable && !ix->field)
			ix->unusable = ix->n_fields == 1 ? "the indexed field is not a top-level column"
				: "an index over several fields";
		/* zone maps of stable-row-id datasets: zone bounds vs ids unverified */
		if (!ix->unusable && ds->stable_row_ids && ix->kind == LT_INDEX_ZONEMAP)
			ix->unusable = "zone maps of datasets with stable row ids";
		if (!ix->unusable && ix->field)
		{
			bool		is_list = ix->field->type == LT_TYPE_LIST || ix->field->type == LT_TYPE_LARGE_LIST;

			if ((ix->kind == LT_INDEX_LABEL_LIST) != is_list)
				ix->unusable = "the index kind does not fit the column type";
		}
	}
	if (rc != LT_OK)
	{
		lt_index_list_free(l);
		return rc;
	}
	*out = l;
	return LT_OK;
}

const lt_index *
lt_index_list_find(const lt_index_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}

const lt_index *
lt_index_list_for_field(const lt_index_list *l, int32_t field_id, lt_index_kind kind)
{
	for (size_t i = 0; i < l->n; i++)
	{
		const lt_index *ix = &l->items[i];

		if (!ix->unusable && ix->field && ix->field->id == field_id && (kind == LT_INDEX_UNKNOWN || ix->kind == kind))
			return ix;
	}
	return NULL;
}

bool
lt_index_covers(const lt_index *idx, uint32_t fragment_id)
{
	return idx->n_covered > 0 &&
		bsearch(&fragment_id, idx->covered, idx->n_covered, sizeof(uint32_t), lt_cmp_u32) != NULL;
}
