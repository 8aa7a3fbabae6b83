/*
 * lt_txn_conflict.c — a transaction against the commits that landed since its
 * read version: the transaction that made a version, our own composite of
 * actions, the footprint check every commit kind uses, and the index segments
 * a Delete or Update keeps (docs/conflicts.md has the pair table).
 */
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

#include <inttypes.h>
#include <roaring/roaring.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "txn/lt_action.h"
#include "util/lt_alloc.h"
#include "txn/lt_keys.h"
#include "util/lt_random.h"
#include "table/lt_roaring.h"
#include "table/lt_rowids.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

#define MAX_TXN_FILE ((uint64_t) 1 << 30)

/* ---- conflicts with concurrent commits ------------------------------------ */

/* The transaction that made version ds: inline, else _transactions/<file>; NULL if neither parses. */
static Lt__Pb__Transaction *
transaction_of(lt_dataset *ds, bool *owned)
{
	const char *file = ds->manifest->transaction_file;
	char	   *rel, *path;
	uint8_t    *buf;
	uint64_t	len;
	Lt__Pb__Transaction *tx = NULL;
	lt_error	ignore;

	*owned = false;
	if (ds->transaction)
		return ds->transaction;
	if (!file || !file[0] || strchr(file, '/') || strstr(file, ".."))
		return NULL;
	rel = lt_asprintf("_transactions/%s", file);
	path = rel ? lt_dataset_path(ds, rel) : NULL;
	lt_free(rel);
	if (path && lt_store_read_all(ds->store, path, MAX_TXN_FILE, &buf, &len, &ignore) == LT_OK)
	{
		tx = lt__pb__transaction__unpack(lt_protobuf_allocator(), len, buf);
		lt_free(buf);
	}
	lt_free(path);
	*owned = tx != NULL;
	return tx;
}

bool
lt_txn_same_files(const Lt__Pb__DataFragment *a, const Lt__Pb__DataFragment *b)
{
	if (a->n_files != b->n_files || a->physical_rows != b->physical_rows)
		return false;
	for (size_t i = 0; i < a->n_files; i++)
		if (strcmp(a->files[i]->path ? a->files[i]->path : "", b->files[i]->path ? b->files[i]->path : "") != 0)
			return false;
	return true;
}

/*
 * The composite of what this transaction does, planned against its read version (its
 * footprint decides the conflicts): deletions from the read version's fragments, the added
 * fragments, the key claim, and a replace's predicate.
 */
lt_code
lt_txn_our_composite(lt_txn *t, const lt_commit_options *opts, lt_composite *out, lt_error *err)
{
	lt_key_filter *keys = lt_txn_asserted_keys(t);
	bool		replaced = lt_txn_replace_at(t) < t->n_log;
	lt_code		rc = LT_OK;

	lt_composite_init(out);
	if (t->compaction)
	{
		/* a compaction: the old fragments rewritten into new ones, rows moved with their values */
		uint64_t   *old = lt_malloc((t->n_changes + 1) * sizeof(uint64_t));
		size_t		n = 0;

		if (!old)
			return lt_nomem(err);
		for (size_t i = 0; i < t->n_changes; i++)
			if (t->changes[i].orig && t->changes[i].gone)
				old[n++] = t->changes[i].id;
		rc = lt_composite_begin(out, "compact", err);
		if (rc == LT_OK)
			rc = lt_rewrite_fragments(out, old, n, err);
		lt_free(old);
		for (size_t k = 0; rc == LT_OK && k < t->n_adds; k++)
		{
			const Lt__Pb__DataFragment *f = &t->adds[k]->frag;

			rc = lt_add_fragment(out, f->id, f->physical_rows, f->files[0]->path, f->files[0]->fields,
								 f->files[0]->n_fields, true, NULL, err);
		}
		if (rc != LT_OK)
			lt_composite_clear(out);
		return rc;
	}
	/* a replace writes everything: the deletions it implies need no listing */
	if (replaced && (rc = lt_composite_begin(out, "truncate", err)) == LT_OK)
		rc = lt_replace_all(out, err);
	for (size_t i = 0; rc == LT_OK && !replaced && i < t->n_changes; i++)
	{
		const change *c = &t->changes[i];
		roaring_bitmap_t *rows;

		if (!c->orig || roaring_bitmap_is_empty(c->ours))
			continue;
		if (out->n_users == 0)
			rc = lt_composite_begin(out, "delete", err);
		if (rc != LT_OK)
			break;
		if (c->gone)
			rc = lt_remove_fragment(out, c->id, err);
		else if (!(rows = roaring_bitmap_copy(c->ours)))
			rc = lt_nomem(err);
		else
			rc = lt_set_deletion_file(out, c->id, rows, err);
	}
	if (rc == LT_OK && t->n_adds)
		rc = lt_composite_begin(out, "insert", err);
	for (size_t k = 0; rc == LT_OK && k < t->n_adds; k++)
	{
		const Lt__Pb__DataFragment *f = &t->adds[k]->frag;
		change	   *c = lt_txn_change_of(t, f->id);

		if (c && c->gone)
			continue;
		rc = lt_add_fragment(out, f->id, f->physical_rows, f->files[0]->path, f->files[0]->fields,
							 f->files[0]->n_fields, false, keys, err);
	}
	if (rc == LT_OK && keys)
		rc = lt_assert_unique_keys(out, keys, err);
	if (rc == LT_OK && opts && opts->check_new_fragment)
		rc = lt_assert_no_matching_inserts(out, err);
	if (rc != LT_OK)
		lt_composite_clear(out);
	return rc;
}

lt_code
lt_txn_concurrent_rows(void *arg, const Lt__Pb__DataFragment *updated, roaring_bitmap_t **rows, lt_error *err)
{
	rows_ctx   *rc = arg;
	change	   *c = lt_txn_change_of(rc->t, updated->id);
	const Lt__Pb__DataFragment *now;
	roaring_bitmap_t *all;
	size_t		i;

	*rows = NULL;
	if (!c || !c->orig || roaring_bitmap_is_empty(c->ours) || !(now = lt_dataset_fragment(rc->version, updated->id)))
		return LT_OK;
	i = (size_t) (c - rc->t->changes);
	LT_TRY(lt_txn_load_dv(rc->version, now, &all, err));
	if (!(*rows = roaring_bitmap_andnot(all, rc->seen[i])))
	{
		roaring_bitmap_free(all);
		return lt_nomem(err);
	}
	roaring_bitmap_free(rc->seen[i]);
	rc->seen[i] = all;
	return LT_OK;
}

lt_code
lt_txn_check_version(const lt_composite *ours, const lt_footprint *fo, lt_dataset *prev, lt_dataset *next,
					 const char *name, lt_lift_rows_fn rows, void *rows_arg,
					 lt_code (*check_inserts) (void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err),
					 void *check_arg, lt_error *err)
{
	bool		owned;
	Lt__Pb__Transaction *tx = lt_txn_committed(next, &owned);
	lt_lift_source src = {prev, rows, rows_arg};
	lt_composite theirs;
	lt_footprint ft;
	lt_clash	why;
	size_t		cursor = 0;
	bool		inserts_checked = false;
	lt_code		rc;

	memset(&ft, 0, sizeof(ft));
	rc = lt_lift(tx, &src, &theirs, err);
	if (rc == LT_OK)
	{
		rc = lt_footprint_of(&theirs, &ft, err);
		while (rc == LT_OK && lt_next_clash(fo, &ft, &cursor, &why))
		{
			/* rows they inserted against our replace's predicate: test them, once per version */
			if (check_inserts && why.a->kind == LT_CO_PREDICATE && why.b->kind == LT_CO_INSERT)
			{
				if (!inserts_checked)
					rc = check_inserts(check_arg, prev, next, err);
				inserts_checked = true;
				continue;
			}
			{
				char		msg[LT_ERROR_MSG_LEN];

				lt_clash_describe(&why, ours, &theirs, next->version, name, msg, sizeof(msg));
				rc = lt_error_set(err, LT_ECONFLICT, "%s", msg);
			}
		}
		lt_footprint_clear(&ft);
		lt_composite_clear(&theirs);
	}
	if (owned)
		lt__pb__transaction__free_unpacked(tx, lt_protobuf_allocator());
	return rc;
}

/* The caller's check of every fragment version v added over prev (the version before it). */
lt_code
lt_txn_check_new_fragments(lt_dataset *prev, lt_dataset *v, const lt_commit_options *opts, lt_error *err)
{
	for (size_t i = 0; i < v->n_fragments; i++)
		if (!lt_dataset_fragment(prev, v->fragments[i]->id))
			LT_TRY(opts->check_new_fragment(opts->check_arg, v, v->fragments[i], err));
	return LT_OK;
}

/* ---- index segments kept by a Delete or Update ---------------------------- */

static bool
is_vector_index(const Lt__Pb__IndexMetadata *m)
{
	const char *url = m->index_details && m->index_details->type_url ? m->index_details->type_url : "";
	size_t		n = strlen(url), k = strlen("VectorIndexDetails");

	return n >= k && strcmp(url + n - k, "VectorIndexDetails") == 0;
}

/* Does segment m cover a fragment of frags[0..n) (ascending ids)?  No bitmap: no. */
static lt_code
segment_covers_any(const Lt__Pb__IndexMetadata *m, Lt__Pb__DataFragment *const *frags, size_t n, bool *out,
				   lt_error *err)
{
	uint32_t   *ids = NULL;
	uint64_t	n_ids = 0;

	*out = false;
	if (!m->has_fragment_bitmap)
		return LT_OK;
	LT_TRY(lt_roaring_decode_array(m->fragment_bitmap.data, m->fragment_bitmap.len, UINT32_MAX, &ids, &n_ids,
								   NULL, err));
	for (uint64_t i = 0, j = 0; i < n_ids && j < n && !*out;)
	{
		if (frags[j]->id == ids[i])
			*out = true;
		else if (frags[j]->id < ids[i])
			j++;
		else
			i++;
	}
	lt_free(ids);
	return LT_OK;
}

/*
 * The index section of a version whose fragments are frags (ascending), from the base's: Lance 8's
 * retention rule (lt_txn.h).  *out is sec itself when every segment stays, else a copy in the arena.
 */
lt_code
lt_txn_retained_indexes(Lt__Pb__IndexSection *sec, Lt__Pb__DataFragment *const *frags, size_t n, arena *a,
				 Lt__Pb__IndexSection **out, lt_error *err)
{
	bool	   *live, *keep;
	Lt__Pb__IndexSection *copy;
	size_t		kept = 0;

	*out = sec;
	if (!sec || sec->n_indices == 0)
		return LT_OK;
	live = lt_txn_arena_alloc(a, sec->n_indices * sizeof(bool));
	keep = lt_txn_arena_alloc(a, sec->n_indices * sizeof(bool));
	if (!live || !keep)
		return lt_nomem(err);
	for (size_t i = 0; i < sec->n_indices; i++)
		LT_TRY(segment_covers_any(sec->indices[i], frags, n, &live[i], err));
	for (size_t i = 0; i < sec->n_indices; i++)
	{
		const Lt__Pb__IndexMetadata *m = sec->indices[i];
		const char *name = m->name ? m->name : "";
		size_t		same = 0, same_live = 0, oldest = i;

		for (size_t j = 0; j < sec->n_indices; j++)
		{
			const Lt__Pb__IndexMetadata *o = sec->indices[j];

			if (strcmp(o->name ? o->name : "", name) != 0)
				continue;
			same++;
			same_live += live[j];
			if (o->dataset_version < sec->indices[oldest]->dataset_version)
				oldest = j;
		}
		if (strcmp(name, "__lance_frag_reuse") == 0 || live[i])
			keep[i] = true;
		else if (same == 1)
			keep[i] = !is_vector_index(m);
		else
			keep[i] = same_live == 0 && oldest == i && !is_vector_index(m);
		kept += keep[i];
	}
	if (kept == sec->n_indices)
		return LT_OK;
	if (!(copy = lt_txn_arena_alloc(a, sizeof(*copy))))
		return lt_nomem(err);
	*copy = *sec;
	copy->n_indices = 0;
	if (!(copy->indices = lt_txn_arena_alloc(a, (kept ? kept : 1) * sizeof(Lt__Pb__IndexMetadata *))))
		return lt_nomem(err);
	for (size_t i = 0; i < sec->n_indices; i++)
		if (keep[i])
			copy->indices[copy->n_indices++] = sec->indices[i];
	*out = copy->n_indices ? copy : NULL;
	return LT_OK;
}

/* ---- shared with the other commit kinds (lt_txn_int.h) ---------------------- */

Lt__Pb__Transaction *
lt_txn_committed(lt_dataset *ds, bool *owned)
{
	return transaction_of(ds, owned);
}
