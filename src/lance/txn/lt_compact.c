/*
 * lt_compact.c — the plan and the copy of a compaction (lt_compact.h).
 */
#include "txn/lt_compact.h"

#include <string.h>

#include <roaring/roaring.h>

#include "assignment/lt_assignment.h"
#include "blob/lt_blob.h"
#include "util/lt_alloc.h"
#include "proto/lt_table.pb-c.h"
#include "table/lt_roaring.h"
#include "table/lt_scan.h"

#define DEFAULT_TARGET_ROWS (1024 * 1024)

/* Blob bytes read for one slice of a batch: more rows wait for the next slice (a larger blob goes alone). */
#define BLOB_SLICE_BYTES ((uint64_t) 64 << 20)

static uint64_t
target_rows(const lt_compact_options *opts)
{
	return opts && opts->target_rows_per_fragment ? opts->target_rows_per_fragment : DEFAULT_TARGET_ROWS;
}

static bool
is_candidate(const Lt__Pb__DataFragment *f, const lt_compact_options *opts)
{
	uint64_t	physical = f->physical_rows;
	uint64_t	deleted = physical - lt_fragment_live_rows(f);

	if (physical < target_rows(opts))
		return true;
	return opts->materialize_deletions && physical > 0 &&
		(double) deleted / (double) physical > opts->materialize_deletions_threshold;
}

static bool
grow_groups(lt_compact_plan *p, size_t *cap)
{
	if (p->n_groups < *cap)
		return true;
	{
		size_t		nc = *cap ? *cap * 2 : 16;
		lt_compact_group *g = lt_realloc(p->groups, nc * sizeof(*g));

		if (!g)
			return false;
		p->groups = g;
		*cap = nc;
	}
	return true;
}

/* The fragment bitmaps of ds's index segments (NULL: a segment without one, which covers nothing here). */
static lt_code
segment_bitmaps(const lt_dataset *ds, roaring_bitmap_t ***out, size_t *n, lt_error *err)
{
	const Lt__Pb__IndexSection *sec = ds->index_section;

	*out = NULL;
	*n = 0;
	if (!sec || sec->n_indices == 0)
		return LT_OK;
	if (!(*out = lt_calloc(sec->n_indices, sizeof(roaring_bitmap_t *))))
		return lt_nomem(err);
	*n = sec->n_indices;
	for (size_t i = 0; i < sec->n_indices; i++)
	{
		const Lt__Pb__IndexMetadata *m = sec->indices[i];
		uint32_t   *ids = NULL;
		uint64_t	n_ids = 0;

		if (!m->has_fragment_bitmap)
			continue;
		LT_TRY(lt_roaring_decode_array(m->fragment_bitmap.data, m->fragment_bitmap.len, UINT32_MAX, &ids, &n_ids,
									   NULL, err));
		(*out)[i] = roaring_bitmap_of_ptr(n_ids, ids);
		lt_free(ids);
		if (!(*out)[i])
			return lt_nomem(err);
	}
	return LT_OK;
}

static void
segment_bitmaps_free(roaring_bitmap_t **b, size_t n)
{
	for (size_t i = 0; b && i < n; i++)
		if (b[i])
			roaring_bitmap_free(b[i]);
	lt_free(b);
}

/* Do the same index segments cover fragments a and b? */
static bool
same_coverage(roaring_bitmap_t *const *b, size_t n, uint64_t a_id, uint64_t b_id)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] && roaring_bitmap_contains(b[i], (uint32_t) a_id) != roaring_bitmap_contains(b[i], (uint32_t) b_id))
			return false;
	return true;
}

lt_code
lt_compact_plan_make(const lt_dataset *ds, const lt_compact_options *opts, lt_compact_plan *out, lt_error *err)
{
	size_t		cap = 0;
	lt_compact_group cur = {0};
	bool		open = false;
	uint64_t	target = target_rows(opts);
	roaring_bitmap_t **cover = NULL;
	size_t		n_cover = 0;
	lt_code		rc;

	memset(out, 0, sizeof(*out));
	if ((rc = segment_bitmaps(ds, &cover, &n_cover, err)) != LT_OK)
	{
		segment_bitmaps_free(cover, n_cover);
		return rc;
	}
	for (size_t i = 0; i <= ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = i < ds->n_fragments ? ds->fragments[i] : NULL;
		bool		take = f && is_candidate(f, opts);

		/*
		 * As Lance's planner: a group never mixes fragments that different index segments cover, so
		 * that each index covers all or none of a group's rows (and then of its new fragments).
		 */
		if (open && (!take || cur.live_rows >= target ||
					 !same_coverage(cover, n_cover, ds->fragments[cur.first]->id, f->id)))
		{
			/* close the group: one fragment without deletions gains nothing */
			const Lt__Pb__DataFragment *only = ds->fragments[cur.first];

			if (cur.count > 1 || lt_fragment_live_rows(only) < only->physical_rows)
			{
				if (!grow_groups(out, &cap))
				{
					lt_compact_plan_clear(out);
					segment_bitmaps_free(cover, n_cover);
					return lt_nomem(err);
				}
				out->groups[out->n_groups++] = cur;
				out->n_fragments += cur.count;
			}
			open = false;
		}
		if (!take)
			continue;
		if (!open)
		{
			cur.first = i;
			cur.count = 0;
			cur.live_rows = 0;
			open = true;
		}
		cur.count++;
		cur.live_rows += lt_fragment_live_rows(f);
	}
	segment_bitmaps_free(cover, n_cover);
	return LT_OK;
}

void
lt_compact_plan_tier(const lt_dataset *ds, lt_compact_plan *plan)
{
	size_t		n = 0;

	plan->n_fragments = 0;
	for (size_t g = 0; g < plan->n_groups; g++)
	{
		lt_compact_group grp = plan->groups[g];
		uint64_t	rest = grp.live_rows;

		while (grp.count > 1)
		{
			const Lt__Pb__DataFragment *f = ds->fragments[grp.first];
			uint64_t	rows = lt_fragment_live_rows(f);

			if (f->deletion_file || rows < rest - rows)
				break;
			grp.first++;
			grp.count--;
			grp.live_rows -= rows;
			rest -= rows;
		}
		/* one fragment left: worth copying only for its deleted rows */
		if (grp.count == 1 && !ds->fragments[grp.first]->deletion_file)
			continue;
		plan->groups[n++] = grp;
		plan->n_fragments += grp.count;
	}
	plan->n_groups = n;
}

lt_code
lt_compact_tier_after_append(const lt_dataset *read, const lt_adoption *a, const lt_compact_options *opts,
							 size_t *n_fragments, lt_error *err)
{
	Lt__Pb__DataFragment **fresh = NULL,
			  **all = NULL;
	size_t		n_fresh = 0;
	lt_dataset	after;
	lt_compact_plan plan = {0};
	lt_code		rc;

	*n_fragments = 0;
	if (a->from_version != read->version)
		return lt_error_set(err, LT_EINVALID, "version %llu was not appended to version %llu",
							(unsigned long long) a->version, (unsigned long long) read->version);
	LT_TRY(lt_adoption_fragments(a, &fresh, &n_fresh, err));
	if (n_fresh && read->n_fragments && fresh[0]->id <= read->fragments[read->n_fragments - 1]->id)
		rc = lt_error_set(err, LT_EINVALID, "version %llu appended fragments out of id order",
						  (unsigned long long) a->version);
	else if (!(all = lt_malloc((read->n_fragments + n_fresh + 1) * sizeof(*all))))
		rc = lt_nomem(err);
	else
	{
		/* the appended fragments' ids are above every id of read: the order by id holds */
		if (read->n_fragments)
			memcpy(all, read->fragments, read->n_fragments * sizeof(*all));
		if (n_fresh)
			memcpy(all + read->n_fragments, fresh, n_fresh * sizeof(*all));
		after = *read;			/* the plan reads the fragments and the index section, which an append keeps */
		after.fragments = all;
		after.n_fragments = read->n_fragments + n_fresh;
		rc = lt_compact_plan_make(&after, opts, &plan, err);
		if (rc == LT_OK)
		{
			lt_compact_plan_tier(&after, &plan);
			*n_fragments = plan.n_fragments;
		}
		lt_compact_plan_clear(&plan);
	}
	lt_free(all);
	for (size_t i = 0; i < n_fresh; i++)
		lt__pb__data_fragment__free_unpacked(fresh[i], lt_protobuf_allocator());
	lt_free(fresh);
	return rc;
}

void
lt_compact_plan_clear(lt_compact_plan *plan)
{
	lt_free(plan->groups);
	memset(plan, 0, sizeof(*plan));
}

void
lt_compact_files_free(lt_compact_file *files, size_t n)
{
	for (size_t i = 0; files && i < n; i++)
	{
		lt_written_file_clear(&files[i].file);
		lt_free(files[i].row_ids);
		for (int k = 0; k < files[i].n_assign; k++)
			if (files[i].assign_rows && files[i].assign_rows[k])
				roaring_bitmap_free(files[i].assign_rows[k]);
		lt_free(files[i].assign_field);
		lt_free(files[i].assign_kind);
		lt_free(files[i].assign_rows);
	}
	lt_free(files);
}

/* The output of one group while it is copied. */
typedef struct copy_state
{
	lt_dataset *ds;
	lt_file_version fver;
	char	   *data_dir;
	lt_file_writer *w;
	lt_compact_file *files;
	size_t		n_files, cap_files;
	uint64_t   *ids;			/* row ids of the open file */
	uint64_t	n_ids, cap_ids;
	/* field assignment: the tracked fields, their state at the read version, the open file's rows */
	int			n_track;
	int32_t    *track_ids;
	lt_assign_field **track;
	roaring_bitmap_t **assigned;	/* per tracked field: the open file's assigned rows */
	/* the source fragment's state per tracked field, while it is copied */
	lt_assign_kind *src_kind;
	const roaring_bitmap_t **src_rows;
	/* blob columns: the source fragment's file holding each (NULL: not a blob column), relative to the dataset */
	bool		any_blob;
	char	  **blob_file;
} copy_state;

static lt_code
finish_file(copy_state *cs, lt_error *err)
{
	lt_compact_file *f;

	if (!cs->w)
		return LT_OK;
	if (cs->n_files == cs->cap_files)
	{
		size_t		nc = cs->cap_files ? cs->cap_files * 2 : 4;
		lt_compact_file *nf = lt_realloc(cs->files, nc * sizeof(*nf));

		if (!nf)
			return lt_nomem(err);
		cs->files = nf;
		cs->cap_files = nc;
	}
	f = &cs->files[cs->n_files];
	memset(f, 0, sizeof(*f));
	LT_TRY(lt_file_writer_finish(cs->w, &f->file, err));
	lt_file_writer_free(cs->w);
	cs->w = NULL;
	f->row_ids = cs->ids;
	cs->ids = NULL;
	cs->n_ids = cs->cap_ids = 0;
	cs->n_files++;
	if (cs->n_track > 0)
	{
		f->assign_field = lt_malloc((size_t) cs->n_track * sizeof(int32_t));
		f->assign_kind = lt_malloc((size_t) cs->n_track);
		f->assign_rows = lt_calloc((size_t) cs->n_track, sizeof(roaring_bitmap_t *));
		if (!f->assign_field || !f->assign_kind || !f->assign_rows)
			return lt_nomem(err);
		f->n_assign = cs->n_track;
		for (int k = 0; k < cs->n_track; k++)
		{
			uint64_t	n = roaring_bitmap_get_cardinality(cs->assigned[k]);

			f->assign_field[k] = cs->track_ids[k];
			f->assign_kind[k] = n == 0 ? LT_ASSIGN_NONE : n >= f->file.num_rows ? LT_ASSIGN_ALL : LT_ASSIGN_PARTIAL;
			if (f->assign_kind[k] == LT_ASSIGN_PARTIAL)
			{
				f->assign_rows[k] = cs->assigned[k];
				if (!(cs->assigned[k] = roaring_bitmap_create()))
					return lt_nomem(err);
			}
			else
				roaring_bitmap_clear(cs->assigned[k]);
		}
	}
	return LT_OK;
}

/* Load the tracked fields' state at the read version (none tracked: nothing to do). */
static lt_code
track_open(copy_state *cs, lt_error *err)
{
	const lt_schema *s = cs->ds->schema;

	if (!lt_assign_any(cs->ds))
		return LT_OK;
	cs->track_ids = lt_calloc((size_t) s->n_fields + 1, sizeof(int32_t));
	cs->track = lt_calloc((size_t) s->n_fields + 1, sizeof(lt_assign_field *));
	cs->assigned = lt_calloc((size_t) s->n_fields + 1, sizeof(roaring_bitmap_t *));
	cs->src_kind = lt_calloc((size_t) s->n_fields + 1, sizeof(lt_assign_kind));
	cs->src_rows = lt_calloc((size_t) s->n_fields + 1, sizeof(roaring_bitmap_t *));
	if (!cs->track_ids || !cs->track || !cs->assigned || !cs->src_kind || !cs->src_rows)
		return lt_nomem(err);
	for (int i = 0; i < s->n_fields; i++)
	{
		const lt_field *f = s->fields[i];

		if (f->parent_id != -1 || !lt_assign_is_tracked(cs->ds, f->id, NULL))
			continue;
		cs->track_ids[cs->n_track] = f->id;
		LT_TRY(lt_assign_load(cs->ds, f->id, &cs->track[cs->n_track], err));
		if (!(cs->assigned[cs->n_track] = roaring_bitmap_create()))
			return lt_nomem(err);
		cs->n_track++;
	}
	return LT_OK;
}

static void
track_close(copy_state *cs)
{
	for (int k = 0; k < cs->n_track; k++)
	{
		lt_assign_free(cs->track[k]);
		if (cs->assigned[k])
			roaring_bitmap_free(cs->assigned[k]);
	}
	lt_free(cs->track_ids);
	lt_free(cs->track);
	lt_free(cs->assigned);
	lt_free(cs->src_kind);
	lt_free(cs->src_rows);
}

/* The source rows [from, from + n) of batch b become the open file's rows [at, at + n): their assignment moves. */
static void
track_rows(copy_state *cs, const lt_batch *b, int64_t from, int64_t n, uint64_t at)
{
	for (int k = 0; k < cs->n_track; k++)
	{
		if (cs->src_kind[k] == LT_ASSIGN_NONE)
			continue;
		if (cs->src_kind[k] == LT_ASSIGN_ALL)
		{
			roaring_bitmap_add_range(cs->assigned[k], at, at + (uint64_t) n);
			continue;
		}
		for (int64_t r = 0; r < n; r++)
			if (roaring_bitmap_contains(cs->src_rows[k], (uint32_t) b->row_addrs[from + r]))
				roaring_bitmap_add(cs->assigned[k], (uint32_t) (at + (uint64_t) r));
	}
}

static lt_code
keep_ids(copy_state *cs, const uint64_t *ids, int64_t n, lt_error *err)
{
	if (!cs->ds->stable_row_ids)
		return LT_OK;
	if (cs->n_ids + (uint64_t) n > cs->cap_ids)
	{
		uint64_t	nc = cs->cap_ids ? cs->cap_ids * 2 : 8192;
		uint64_t   *ni;

		while (nc < cs->n_ids + (uint64_t) n)
			nc *= 2;
		if (!(ni = lt_realloc(cs->ids, nc * sizeof(uint64_t))))
			return lt_nomem(err);
		cs->ids = ni;
		cs->cap_ids = nc;
	}
	memcpy(cs->ids + cs->n_ids, ids, (size_t) n * sizeof(uint64_t));
	cs->n_ids += (uint64_t) n;
	return LT_OK;
}

/* ---- blob columns: the writer takes their bytes, the scan gives their descriptors ---------------------- */

/*
 * As Lance's compaction: a blob's bytes are read where its descriptor says and written anew with the
 * new file (legacy: into it; blob v2: inline or into its own packed / dedicated sidecars, by size),
 * so that nothing of the new fragment points into the old files, which lt_cleanup may remove.
 */
static lt_code
blob_files_of(copy_state *cs, const Lt__Pb__DataFragment *frag, lt_error *err)
{
	const lt_schema *s = cs->ds->schema;

	for (int c = 0; c < s->n_fields; c++)
	{
		const lt_field *f = s->fields[c];
		const char *file = NULL;

		lt_free(cs->blob_file[c]);
		cs->blob_file[c] = NULL;
		if (f->blob == LT_BLOB_NONE)
			continue;
		for (size_t j = 0; j < frag->n_files && !file; j++)
			for (size_t k = 0; k < frag->files[j]->n_fields; k++)
				if (frag->files[j]->fields[k] == f->id)
					file = frag->files[j]->path;
		if (!file)
			return lt_corrupt(err, "fragment %llu has no data file for blob field \"%s\"",
							  (unsigned long long) frag->id, f->name);
		if (!(cs->blob_file[c] = lt_asprintf("data/%s", file)))
			return lt_nomem(err);
	}
	return LT_OK;
}

/* How many of the n rows from `from` on to copy at once: their blobs' bytes within BLOB_SLICE_BYTES. */
static lt_code
blob_slice_rows(const copy_state *cs, const lt_batch *b, int64_t from, int64_t *n, lt_error *err)
{
	const lt_schema *s = cs->ds->schema;
	uint64_t	bytes = 0;

	for (int64_t r = 0; r < *n; r++)
	{
		uint64_t	row = 0;

		for (int c = 0; c < s->n_fields; c++)
		{
			bool		is_null;
			uint64_t	size;

			if (!cs->blob_file[c])
				continue;
			LT_TRY(lt_blob_size(s->fields[c]->blob, b->columns[c], from + r, &is_null, &size, err));
			row += size;
		}
		if (r > 0 && bytes + row > BLOB_SLICE_BYTES)
		{
			*n = r;
			break;
		}
		bytes += row;
	}
	return LT_OK;
}

/* One more slot of a binary array, of len bytes: *dst is where they go. */
static lt_code
binary_slot(lt_array *a, uint64_t len, uint8_t **dst, lt_error *err)
{
	LT_TRY(lt_array_reserve(a, 1, err));
	LT_TRY(lt_array_reserve_data(a, (int64_t) len, err));
	if (a->validity)
		a->validity[a->length] = 1;
	*dst = a->data + a->data_len;
	a->data_len += (int64_t) len;
	a->offsets[a->length + 1] = a->data_len;
	a->length++;
	return LT_OK;
}

/*
 * Rows [from, from + n) of the descriptors `desc` of blob field f (kept in data_file) as the writer
 * takes them, appended to dst (lt_array_new_values): legacy the bytes, blob v2 a struct {data, uri}
 * with the bytes as data.  A blob stored by external URI is refused (lt_fdw writes none).
 */
static lt_code
blob_values(lt_dataset *ds, const lt_field *f, const lt_array *desc, int64_t from, int64_t n, const char *data_file,
			lt_array *dst, lt_error *err)
{
	lt_code		rc = LT_OK;

	for (int64_t r = 0; rc == LT_OK && r < n; r++)
	{
		lt_blob_loc loc;
		lt_array   *bin = f->blob == LT_BLOB_V2 ? (dst->n_children == 2 ? dst->children[0] : NULL) : dst;
		uint8_t    *p;
		char	   *path;

		if ((rc = lt_check_interrupt(err, "compacting blobs")) != LT_OK)
			break;
		if (!bin)
			return lt_error_set(err, LT_EINVALID, "blob v2 field \"%s\" is not a struct {data, uri}", f->name);
		if ((rc = lt_blob_locate(f->blob, desc, from + r, data_file, &loc, err)) != LT_OK)
			break;
		if (loc.is_null)
			rc = lt_array_append_nulls(dst, 1, err);
		else if (loc.external)
			rc = lt_error_set(err, LT_EUNSUPPORTED,
							  "blob field \"%s\": a blob stored by external URI (%s) is not compacted by lt_fdw",
							  f->name, loc.path ? loc.path : "?");
		else if (f->blob == LT_BLOB_V2)
		{
			/* the struct's slot, its data, and no URI */
			if ((rc = lt_array_reserve(dst, 1, err)) == LT_OK)
			{
				if (dst->validity)
					dst->validity[dst->length] = 1;
				dst->length++;
				rc = lt_array_append_nulls(dst->children[1], 1, err);
			}
		}
		if (rc == LT_OK && !loc.is_null && (rc = binary_slot(bin, loc.length, &p, err)) == LT_OK && loc.length)
		{
			if (!(path = lt_dataset_path(ds, loc.path)))
				rc = lt_nomem(err);
			else
				rc = lt_blob_read(ds->store, path, &loc, p, err);
			lt_free(path);
		}
		lt_blob_loc_clear(&loc);
	}
	return rc == LT_OK ? LT_OK : lt_error_prefix(err, "%s: blob field \"%s\"", data_file, f->name);
}

lt_code
lt_compact_copy_group(lt_dataset *ds, const lt_compact_group *g, const lt_compact_options *opts,
					  lt_compact_file **files, size_t *n_files, lt_error *err)
{
	copy_state	cs = {ds};
	const lt_schema *s = ds->schema;
	uint64_t	target = target_rows(opts);
	lt_code		rc;

	*files = NULL;
	*n_files = 0;
	LT_TRY(lt_file_version_for_storage(ds->storage_version, &cs.fver, err));
	if (!(cs.data_dir = lt_dataset_path(ds, "data/")))
		return lt_nomem(err);
	rc = track_open(&cs, err);
	cs.any_blob = lt_schema_first_blob(s) != NULL;
	if (rc == LT_OK && cs.any_blob && !(cs.blob_file = lt_calloc((size_t) s->n_fields + 1, sizeof(char *))))
		rc = lt_nomem(err);
	for (size_t k = 0; rc == LT_OK && k < g->count; k++)
	{
		const Lt__Pb__DataFragment *frag = ds->fragments[g->first + k];
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

		for (int t = 0; rc == LT_OK && t < cs.n_track; t++)
			rc = lt_assign_fragment(cs.track[t], frag->id, frag->physical_rows, &cs.src_kind[t], &cs.src_rows[t], err);
		if (rc == LT_OK && cs.any_blob)
			rc = blob_files_of(&cs, frag, err);
		if (rc != LT_OK)
			break;

		so.n_fields = s->n_fields;
		so.fields = (const lt_field *const *) s->fields;
		so.want_row_ids = ds->stable_row_ids;
		if ((rc = lt_fragment_scanner_open(ds, frag, &so, &sc, err)) != LT_OK)
			break;
		while ((rc = lt_fragment_scanner_next(sc, &b, err)) == LT_OK && b)
		{
			int64_t		done = 0;

			/* a batch may straddle two output files: slice it at the target */
			while (rc == LT_OK && done < b->length)
			{
				int64_t		room,
							n;
				lt_array  **cols;

				if ((rc = lt_check_interrupt(err, "compacting")) != LT_OK)
					break;
				if (!cs.w && (rc = lt_file_writer_open(ds->store, cs.data_dir, s->n_fields,
													   (const lt_field *const *) s->fields, cs.fver, &cs.w,
													   err)) != LT_OK)
					break;
				room = (int64_t) (target - lt_file_writer_rows(cs.w));
				n = b->length - done < room ? b->length - done : room;
				if (cs.any_blob && (rc = blob_slice_rows(&cs, b, done, &n, err)) != LT_OK)
					break;
				track_rows(&cs, b, done, n, lt_file_writer_rows(cs.w));
				if (!cs.any_blob && done == 0 && n == b->length)
					rc = lt_file_writer_write(cs.w, b->columns, n, err);
				else
				{
					/* slices of the batch's columns; a blob column's bytes in place of its descriptors */
					if (!(cols = lt_calloc((size_t) b->n_columns, sizeof(lt_array *))))
						rc = lt_nomem(err);
					for (int c = 0; rc == LT_OK && c < b->n_columns; c++)
						if (cs.blob_file && cs.blob_file[c])
						{
							if ((rc = lt_array_new_values(s->fields[c], &cols[c], err)) == LT_OK)
								rc = blob_values(ds, s->fields[c], b->columns[c], done, n, cs.blob_file[c], cols[c],
												 err);
						}
						else if ((rc = lt_array_new(b->columns[c]->field, &cols[c], err)) == LT_OK)
							rc = lt_array_append_slice(cols[c], b->columns[c], done, n, err);
					if (rc == LT_OK)
						rc = lt_file_writer_write(cs.w, cols, n, err);
					for (int c = 0; cols && c < b->n_columns; c++)
						if (cols[c])
							lt_array_free(cols[c]);
					lt_free(cols);
				}
				if (rc == LT_OK && b->row_ids)
					rc = keep_ids(&cs, b->row_ids + done, n, err);
				done += n;
				if (rc == LT_OK && (lt_file_writer_rows(cs.w) >= target ||
									(opts->max_bytes_per_file && lt_file_writer_bytes(cs.w) >= opts->max_bytes_per_file)))
					rc = finish_file(&cs, err);
			}
			if (rc != LT_OK)
				break;
		}
		lt_fragment_scanner_free(sc);
	}
	if (rc == LT_OK && cs.w && lt_file_writer_rows(cs.w) > 0)
		rc = finish_file(&cs, err);
	if (cs.w)
		lt_file_writer_free(cs.w);	/* an unfinished (empty or failed) file is removed */
	lt_free(cs.ids);
	lt_free(cs.data_dir);
	for (int c = 0; cs.blob_file && c < s->n_fields; c++)
		lt_free(cs.blob_file[c]);
	lt_free(cs.blob_file);
	track_close(&cs);
	if (rc != LT_OK)
	{
		lt_compact_files_free(cs.files, cs.n_files);
		return rc;
	}
	*files = cs.files;
	*n_files = cs.n_files;
	return LT_OK;
}
