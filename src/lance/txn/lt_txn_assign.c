/*
 * lt_txn_assign.c — field assignment in transactions (lt_assignment.h has the state, lt_txn.h the
 * contract): the state writers give the fragments they add, its view for the transaction's own
 * statements, and the new roots a commit writes (lt_txn_track.c: the commit that starts tracking).
 *
 * A write never changes the entry of a fragment it did not add: rows that change move to new
 * fragments (as Lance's Update moves them), so assigning, carrying over and invalidating are all
 * said by the new fragments' entries, and a deletion leaves the state alone.  That makes a rebase
 * over concurrent commits a merge: their fresh fragments and ours have different ids, and the
 * entries of fragments gone are dropped.  What does not merge: the set of tracked fields changed
 * since the read version (our rows were written without that field's tracking) -> LT_ECONFLICT.
 */
#include <inttypes.h>
#include <roaring/roaring.h>
#include <stdio.h>
#include <string.h>

#include "assignment/lt_assignment.h"
#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

void
lt_txn_free_added_assign(added *a)
{
	for (size_t i = 0; i < a->n_assign; i++)
		if (a->assign[i].rows)
			roaring_bitmap_free(a->assign[i].rows);
	lt_free(a->assign);
	a->assign = NULL;
	a->n_assign = 0;
}

static added *
added_by_id(lt_txn *t, uint64_t fragment_id)
{
	if (fragment_id < t->first_new_id || fragment_id - t->first_new_id >= t->n_adds)
		return NULL;
	return t->adds[fragment_id - t->first_new_id];
}

bool
lt_txn_has_unassign(const lt_txn *t)
{
	for (size_t i = 0; i < t->n_log; i++)
		if (t->log[i].kind == J_UNASSIGN)
			return true;
	return false;
}

void
lt_txn_free_derived(lt_txn *t)
{
	for (size_t i = 0; i < t->n_derived; i++)
		roaring_bitmap_free(t->derived[i]);
	lt_free(t->derived);
	t->derived = NULL;
	t->n_derived = t->cap_derived = 0;
}

/*
 * The state (kind, rows) of fragment_id's field less the rows the journal clears in place: a new
 * bitmap in *out (NULL when nothing is cleared: the state stands), *kind updated.
 */
static lt_code
less_cleared(const lt_txn *t, uint64_t fragment_id, int32_t field_id, uint64_t physical_rows, lt_assign_kind *kind,
			 const roaring_bitmap_t *rows, roaring_bitmap_t **out, lt_error *err)
{
	roaring_bitmap_t *r = NULL;

	*out = NULL;
	for (size_t i = 0; i < t->n_log; i++)
	{
		const jentry *j = &t->log[i];

		if (j->kind != J_UNASSIGN || j->frag_id != fragment_id || j->field_id != field_id)
			continue;
		if (r == NULL)
		{
			if (*kind == LT_ASSIGN_NONE)
				return LT_OK;	/* nothing to clear */
			r = *kind == LT_ASSIGN_ALL ? roaring_bitmap_from_range(0, physical_rows, 1) : roaring_bitmap_copy(rows);
			if (r == NULL)
				return lt_nomem(err);
		}
		roaring_bitmap_andnot_inplace(r, j->rows);
	}
	if (r == NULL)
		return LT_OK;
	*kind = roaring_bitmap_is_empty(r) ? LT_ASSIGN_NONE : LT_ASSIGN_PARTIAL;
	*out = r;
	return LT_OK;
}

lt_code
lt_txn_set_assignment(lt_txn *t, uint64_t fragment_id, int32_t field_id, lt_assign_kind kind,
					  struct roaring_bitmap_s *rows, lt_error *err)
{
	added	   *a = added_by_id(t, fragment_id);
	added_assign *slot = NULL;

	if (!a)
	{
		if (rows)
			roaring_bitmap_free(rows);
		return lt_error_set(err, LT_EINVALID, "fragment %" PRIu64 " was not added by this transaction on %s",
							fragment_id, t->name);
	}
	if (kind == LT_ASSIGN_PARTIAL && rows && roaring_bitmap_get_cardinality(rows) > 0 &&
		roaring_bitmap_maximum(rows) >= a->frag.physical_rows)
	{
		roaring_bitmap_free(rows);
		return lt_error_set(err, LT_EINVALID, "assigned rows past the end of fragment %" PRIu64, fragment_id);
	}
	for (size_t i = 0; i < a->n_assign; i++)
		if (a->assign[i].field_id == field_id)
			slot = &a->assign[i];
	if (!slot)
	{
		added_assign *na = lt_realloc(a->assign, (a->n_assign + 1) * sizeof(added_assign));

		if (!na)
		{
			if (rows)
				roaring_bitmap_free(rows);
			return lt_nomem(err);
		}
		a->assign = na;
		slot = &a->assign[a->n_assign++];
		memset(slot, 0, sizeof(*slot));
		slot->field_id = field_id;
	}
	if (slot->rows)
		roaring_bitmap_free(slot->rows);
	slot->kind = kind;
	slot->rows = kind == LT_ASSIGN_PARTIAL ? rows : NULL;
	if (kind != LT_ASSIGN_PARTIAL && rows)
		roaring_bitmap_free(rows);
	return LT_OK;
}

lt_code
lt_txn_fragment_assignment(lt_txn *t, lt_assign_field *read_state, uint64_t fragment_id, uint64_t physical_rows,
						   lt_assign_kind *kind, const struct roaring_bitmap_s **rows, lt_error *err)
{
	added	   *a = t ? added_by_id(t, fragment_id) : NULL;
	roaring_bitmap_t *derived = NULL;

	*kind = LT_ASSIGN_NONE;
	*rows = NULL;
	if (a)
	{
		physical_rows = a->frag.physical_rows;
		for (size_t i = 0; i < a->n_assign; i++)
			if (a->assign[i].field_id == read_state->field_id)
			{
				*kind = (lt_assign_kind) a->assign[i].kind;
				*rows = a->assign[i].rows;
			}
	}
	else
		LT_TRY(lt_assign_fragment(read_state, fragment_id, physical_rows, kind, rows, err));
	if (t == NULL)
		return LT_OK;
	LT_TRY(less_cleared(t, fragment_id, read_state->field_id, physical_rows, kind, *rows, &derived, err));
	if (derived)
	{
		/* kept until lt_txn_free: a scan may hold it while later statements change the journal */
		if (t->n_derived == t->cap_derived)
		{
			size_t		cap = t->cap_derived ? t->cap_derived * 2 : 16;
			roaring_bitmap_t **nd = lt_realloc(t->derived, cap * sizeof(*nd));

			if (!nd)
			{
				roaring_bitmap_free(derived);
				return lt_nomem(err);
			}
			t->derived = nd;
			t->cap_derived = cap;
		}
		t->derived[t->n_derived++] = derived;
		*rows = *kind == LT_ASSIGN_PARTIAL ? derived : NULL;
	}
	return LT_OK;
}

/* The tracked field ids of ds, ascending (lt_free). */
static lt_code
tracked_ids(const lt_dataset *ds, int32_t **ids, size_t *n, lt_error *err)
{
	const Lt__Pb__Manifest *m = ds->manifest;

	*n = 0;
	if (!(*ids = lt_malloc((m->n_config ? m->n_config : 1) * sizeof(int32_t))))
		return lt_nomem(err);
	for (size_t i = 0; i < m->n_config; i++)
	{
		int32_t		id;
		size_t		j;

		if (!lt_assign_config_key(m->config[i]->key, &id))
			continue;
		for (j = *n; j > 0 && (*ids)[j - 1] > id; j--)
			(*ids)[j] = (*ids)[j - 1];
		(*ids)[j] = id;
		(*n)++;
	}
	return LT_OK;
}

/* One tracked field's new root for the attempt; *root NULL when it did not change. */
static lt_code
field_root(lt_txn *t, lt_dataset *base, const attempt *at, const uint64_t *keep, int32_t field_id, bool overwrite,
		   char **root, lt_error *err)
{
	lt_assign_field *f = NULL;
	bool		changed = false;
	lt_code		rc;

	*root = NULL;
	rc = overwrite ? lt_assign_new(base, field_id, &f, err) : lt_assign_load(base, field_id, &f, err);
	if (rc != LT_OK)
		return rc;
	if (!f)
		return lt_error_set(err, LT_ECONFLICT, "field %d of version %llu is no longer tracked", field_id,
							(unsigned long long) base->version);
	if (overwrite)
		changed = true;
	else
		lt_assign_retain(f, keep, at->n_frags, &changed);
	for (size_t k = 0; rc == LT_OK && k < at->n_fresh; k++)
	{
		const added *ad = at->fresh_from[k];

		for (size_t i = 0; rc == LT_OK && i < ad->n_assign; i++)
		{
			const added_assign *aa = &ad->assign[i];
			lt_assign_kind kind = (lt_assign_kind) aa->kind;
			roaring_bitmap_t *copy = NULL;

			if (aa->field_id != field_id || aa->kind == LT_ASSIGN_NONE)
				continue;
			/* the rows cleared in place since (keyed by the provisional id) */
			rc = less_cleared(t, ad->frag.id, field_id, ad->frag.physical_rows, &kind, aa->rows, &copy, err);
			if (rc == LT_OK && copy == NULL && kind == LT_ASSIGN_PARTIAL && !(copy = roaring_bitmap_copy(aa->rows)))
				rc = lt_nomem(err);
			if (rc == LT_OK)
				rc = lt_assign_set(f, at->fresh[k]->id, kind, copy, at->fresh[k]->physical_rows, err);
			changed = true;
		}
	}
	/* the read version's fragments whose rows were cleared in place (gone ones: lt_txn_commit checked) */
	for (size_t i = 0; rc == LT_OK && i < at->n_frags; i++)
	{
		const Lt__Pb__DataFragment *fr = at->frags[i];
		lt_assign_kind kind;
		const roaring_bitmap_t *rows = NULL;
		roaring_bitmap_t *left = NULL;

		if (overwrite || lt_dataset_fragment(t->read, fr->id) == NULL)
			continue;			/* added by a commit (ours: above), not the read version's */
		rc = lt_assign_fragment(f, fr->id, fr->physical_rows, &kind, &rows, err);
		if (rc == LT_OK)
			rc = less_cleared(t, fr->id, field_id, fr->physical_rows, &kind, rows, &left, err);
		if (rc == LT_OK && left)
		{
			rc = lt_assign_set(f, fr->id, kind, left, fr->physical_rows, err);
			changed = true;
		}
	}
	if (rc == LT_OK && changed)
		rc = lt_assign_write(f, root, err);
	lt_assign_free(f);
	return rc;
}

lt_code
lt_txn_assignment_config(lt_txn *t, lt_dataset *base, const attempt *at, bool overwrite,
						 Lt__Pb__Manifest__ConfigEntry ***config, size_t *n_config, bool *changed, lt_error *err)
{
	const Lt__Pb__Manifest *bm = base->manifest;
	int32_t    *ours = NULL, *theirs = NULL;
	size_t		n_ours = 0, n_theirs = 0;
	uint64_t   *keep = NULL;
	Lt__Pb__Manifest__ConfigEntry **cfg = NULL;
	lt_code		rc;

	*changed = false;
	rc = tracked_ids(t->read, &ours, &n_ours, err);
	if (rc == LT_OK)
		rc = tracked_ids(base, &theirs, &n_theirs, err);
	if (rc != LT_OK)
		goto out;
	if (at->n_fresh > 0 && (n_ours != n_theirs || memcmp(ours, theirs, n_ours * sizeof(int32_t)) != 0))
	{
		rc = lt_error_set(err, LT_ECONFLICT,
						  "concurrent commit (version %llu of %s) changed which fields track their assignment",
						  (unsigned long long) base->version, t->name);
		goto out;
	}
	if (n_theirs == 0)
		goto out;
	if (at->n_fresh > 0 && base->version != t->read->version)
	{
		/*
		 * Rows we moved carry the state we read: a concurrent commit that changed the state of a
		 * fragment we delete from (cleared rows in place) would be undone by our copies.
		 */
		for (size_t k = 0; rc == LT_OK && k < n_theirs; k++)
		{
			lt_assign_field *then = NULL,
					   *now = NULL;

			rc = lt_assign_load(t->read, theirs[k], &then, err);
			if (rc == LT_OK)
				rc = lt_assign_load(base, theirs[k], &now, err);
			for (size_t i = 0; rc == LT_OK && i < t->n_changes; i++)
			{
				const change *c = &t->changes[i];

				if (c->orig && !roaring_bitmap_is_empty(c->ours) && !lt_assign_same_entry(then, now, c->id))
					rc = lt_error_set(err, LT_ECONFLICT,
									  "concurrent commit (version %llu of %s) changed the field assignment of fragment %llu, whose rows this transaction moves",
									  (unsigned long long) base->version, t->name, (unsigned long long) c->id);
			}
			lt_assign_free(then);
			lt_assign_free(now);
		}
		if (rc != LT_OK)
			goto out;
	}
	keep = lt_malloc((at->n_frags ? at->n_frags : 1) * sizeof(uint64_t));
	cfg = lt_calloc(bm->n_config ? bm->n_config : 1, sizeof(*cfg));
	if (!keep || !cfg)
	{
		rc = lt_nomem(err);
		goto out;
	}
	for (size_t i = 0; i < at->n_frags; i++)
		keep[i] = at->frags[i]->id;
	for (size_t i = 0; rc == LT_OK && i < bm->n_config; i++)
	{
		int32_t		id;
		char	   *root = NULL;
		Lt__Pb__Manifest__ConfigEntry *e;

		cfg[i] = bm->config[i];
		if (!lt_assign_config_key(bm->config[i]->key, &id))
			continue;
		if ((rc = field_root(t, base, at, keep, id, overwrite, &root, err)) != LT_OK || !root)
			continue;
		e = lt_malloc(sizeof(*e));
		if (e)
		{
			lt__pb__manifest__config_entry__init(e);
			e->key = bm->config[i]->key;
			e->value = root;	/* owned: lt_txn_assignment_config_free */
		}
		else
		{
			lt_free(root);
			rc = lt_nomem(err);
		}
		if (e)
		{
			cfg[i] = e;
			*changed = true;
		}
	}
	if (rc == LT_OK && *changed)
	{
		*config = cfg;
		*n_config = bm->n_config;
		cfg = NULL;
	}
out:
	if (cfg)
		lt_txn_assignment_config_free(cfg, bm->n_config, bm);
	lt_free(keep);
	lt_free(ours);
	lt_free(theirs);
	return rc;
}

void
lt_txn_assignment_config_free(Lt__Pb__Manifest__ConfigEntry **config, size_t n, const Lt__Pb__Manifest *base)
{
	if (!config)
		return;
	for (size_t i = 0; i < n; i++)
		if (config[i] && (i >= base->n_config || config[i] != base->config[i]))
		{
			lt_free(config[i]->value);
			lt_free(config[i]);
		}
	lt_free(config);
}

