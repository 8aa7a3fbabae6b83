/*
 * lt_compact.c — the plan and the copy of a compaction (lt_compact.h).
 */
#include "txn/lt_compact.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "proto/lt_table.pb-c.h"
#include "table/lt_scan.h"

#define DEFAULT_TARGET_ROWS (1024 * 1024)

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

lt_code
lt_compact_plan_make(const lt_dataset *ds, const lt_compact_options *opts, lt_compact_plan *out, lt_error *err)
{
	size_t		cap = 0;
	lt_compact_group cur = {0};
	bool		open = false;
	uint64_t	target = target_rows(opts);

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i <= ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = i < ds->n_fragments ? ds->fragments[i] : NULL;
		bool		take = f && is_candidate(f, opts);

		if (open && (!take || cur.live_rows >= target))
		{
			/* close the group: one fragment without deletions gains nothing */
			const Lt__Pb__DataFragment *only = ds->fragments[cur.first];

			if (cur.count > 1 || lt_fragment_live_rows(only) < only->physical_rows)
			{
				if (!grow_groups(out, &cap))
				{
					lt_compact_plan_clear(out);
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
	return LT_OK;
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
	return LT_OK;
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
	rc = LT_OK;
	for (size_t k = 0; rc == LT_OK && k < g->count; k++)
	{
		const Lt__Pb__DataFragment *frag = ds->fragments[g->first + k];
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

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
				if (done == 0 && n == b->length)
					rc = lt_file_writer_write(cs.w, b->columns, n, err);
				else
				{
					/* slices of the batch's columns */
					if (!(cols = lt_calloc((size_t) b->n_columns, sizeof(lt_array *))))
						rc = lt_nomem(err);
					for (int c = 0; rc == LT_OK && c < b->n_columns; c++)
						if ((rc = lt_array_new(b->columns[c]->field, &cols[c], err)) == LT_OK)
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
	if (rc != LT_OK)
	{
		lt_compact_files_free(cs.files, cs.n_files);
		return rc;
	}
	*files = cs.files;
	*n_files = cs.n_files;
	return LT_OK;
}
