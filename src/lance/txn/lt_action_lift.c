/*
 * lt_action_lift.c — a committed legacy transaction as a composite of actions
 * (lifting), and the legacy operation a composite of ours is written as
 * (lowering); lt_action.h has the contract.
 *
 * Lifting is exact where the legacy operation says exactly what it did (Append,
 * Delete, Update rewriting rows, CreateIndex, Rewrite, ReserveFragments, the config
 * keys of UpdateConfig) and fails closed everywhere else: the operation becomes one
 * UNINTERPRETED action, whose footprint is EVERYTHING.  An operation message with
 * fields this library does not know (a newer Lance's additions) is uninterpreted
 * too: what it says may matter.
 */
#include "txn/lt_action.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_roaring.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

/* Does the operation carry fields this library does not know? */
static bool
has_unknown(const ProtobufCMessage *m)
{
	return m && m->n_unknown_fields > 0;
}

/* Same data files (and rows) as before: the fragment only got a new deletion file. */
static bool
same_files(const Lt__Pb__DataFragment *a, const Lt__Pb__DataFragment *b)
{
	if (a->n_files != b->n_files || a->physical_rows != b->physical_rows)
		return false;
	for (size_t i = 0; i < a->n_files; i++)
	{
		const Lt__Pb__DataFile *x = a->files[i], *y = b->files[i];

		if (strcmp(x->path ? x->path : "", y->path ? y->path : "") != 0 || x->n_fields != y->n_fields ||
			(x->n_fields && memcmp(x->fields, y->fields, x->n_fields * sizeof(int32_t)) != 0))
			return false;
	}
	return true;
}

/* New fragments as ADD_FRAGMENT actions (fields: every field id their files hold; keys: what they inserted). */
static lt_code
add_fragments(lt_composite *c, Lt__Pb__DataFragment *const *frags, size_t n, bool moved, lt_key_filter *keys,
			  lt_error *err)
{
	for (size_t i = 0; i < n; i++)
	{
		const Lt__Pb__DataFragment *f = frags[i];
		size_t		nf = 0;
		int32_t    *fields;
		lt_code		rc;

		for (size_t k = 0; k < f->n_files; k++)
			nf += f->files[k]->n_fields;
		if (!(fields = lt_malloc(nf ? nf * sizeof(int32_t) : 1)))
			return lt_nomem(err);
		nf = 0;
		for (size_t k = 0; k < f->n_files; k++)
			for (size_t j = 0; j < f->files[k]->n_fields; j++)
				if (f->files[k]->fields[j] >= 0)
					fields[nf++] = f->files[k]->fields[j];
		rc = lt_add_fragment(c, f->id, f->physical_rows, f->n_files ? f->files[0]->path : "", fields, nf, moved,
							 keys, err);
		lt_free(fields);
		LT_TRY(rc);
	}
	return LT_OK;
}

/* Updated fragments (deletion files, maybe new data files) and removed ones. */
static lt_code
deletions(lt_composite *c, Lt__Pb__DataFragment *const *upd, size_t n_upd, const uint64_t *removed,
		  size_t n_removed, const lt_lift_source *src, lt_error *err)
{
	for (size_t i = 0; i < n_upd; i++)
	{
		const Lt__Pb__DataFragment *was = src && src->prev ? lt_dataset_fragment(src->prev, upd[i]->id) : NULL;
		roaring_bitmap_t *rows = NULL;

		if (src && src->rows)
			LT_TRY(src->rows(src->rows_arg, upd[i], &rows, err));
		LT_TRY(lt_set_deletion_file(c, upd[i]->id, rows, err));
		c->actions[c->n_actions - 1].new_layout = !was || !same_files(was, upd[i]);
	}
	for (size_t i = 0; i < n_removed; i++)
		LT_TRY(lt_remove_fragment(c, removed[i], err));
	return LT_OK;
}

static lt_code
lift_create_index(const Lt__Pb__Transaction__CreateIndex *ci, const lt_lift_source *src, lt_composite *c,
				  bool *uninterpretable, lt_error *err)
{
	for (size_t i = 0; i < ci->n_removed_indices; i++)
		LT_TRY(lt_remove_index(c, ci->removed_indices[i]->name, err));
	for (size_t i = 0; i < ci->n_new_indices; i++)
	{
		const Lt__Pb__IndexMetadata *m = ci->new_indices[i];
		uint32_t   *ids = NULL;
		uint64_t	n = 0;
		uint64_t   *covered;
		lt_code		rc;
		lt_error	ignore;

		if (m->has_fragment_bitmap)
		{
			if (lt_roaring_decode_array(m->fragment_bitmap.data, m->fragment_bitmap.len, UINT32_MAX, &ids, &n,
										NULL, &ignore) != LT_OK)
			{
				*uninterpretable = true;
				return LT_OK;
			}
		}
		else if (src && src->prev)
		{
			/* no bitmap: it may cover every fragment there was */
			n = src->prev->n_fragments;
			if (!(ids = lt_malloc(n ? n * sizeof(uint32_t) : 1)))
				return lt_nomem(err);
			for (uint64_t k = 0; k < n; k++)
				ids[k] = (uint32_t) src->prev->fragments[k]->id;
		}
		else
		{
			*uninterpretable = true;
			return LT_OK;
		}
		if (!(covered = lt_malloc(n ? n * sizeof(uint64_t) : 1)))
		{
			lt_free(ids);
			return lt_nomem(err);
		}
		for (uint64_t k = 0; k < n; k++)
			covered[k] = ids[k];
		lt_free(ids);
		rc = lt_add_index(c, m->name, m->fields, m->n_fields, covered, n, err);
		lt_free(covered);
		LT_TRY(rc);
	}
	return LT_OK;
}

static lt_code
lift_rewrite(const Lt__Pb__Transaction__Rewrite *rw, lt_composite *c, lt_error *err)
{
	size_t		n = rw->n_old_fragments, k = 0;
	uint64_t   *old;
	lt_code		rc;

	for (size_t g = 0; g < rw->n_groups; g++)
		n += rw->groups[g]->n_old_fragments;
	if (!(old = lt_malloc(n ? n * sizeof(uint64_t) : 1)))
		return lt_nomem(err);
	for (size_t i = 0; i < rw->n_old_fragments; i++)
		old[k++] = rw->old_fragments[i]->id;
	for (size_t g = 0; g < rw->n_groups; g++)
		for (size_t i = 0; i < rw->groups[g]->n_old_fragments; i++)
			old[k++] = rw->groups[g]->old_fragments[i]->id;
	rc = lt_rewrite_fragments(c, old, n, err);
	lt_free(old);
	LT_TRY(rc);
	LT_TRY(add_fragments(c, rw->new_fragments, rw->n_new_fragments, true, NULL, err));
	for (size_t g = 0; g < rw->n_groups; g++)
		LT_TRY(add_fragments(c, rw->groups[g]->new_fragments, rw->groups[g]->n_new_fragments, true, NULL, err));
	return LT_OK;
}

/* A committed Update's inserted_rows, owned by the composite (a filter that does not decode: fail closed). */
static lt_code
lift_keys(const Lt__Pb__Transaction__KeyExistenceFilter *pb, lt_composite *c, lt_key_filter **out,
		  bool *uninterpretable, lt_error *err)
{
	lt_key_filter **owned;
	lt_error	ignore;

	*out = NULL;
	if (has_unknown(&pb->base) || lt_key_filter_from_pb(pb, out, &ignore) != LT_OK)
	{
		*uninterpretable = true;
		return LT_OK;
	}
	if (!(owned = lt_realloc(c->owned_keys, (c->n_owned_keys + 1) * sizeof(lt_key_filter *))))
	{
		lt_key_filter_free(*out);
		*out = NULL;
		return lt_nomem(err);
	}
	c->owned_keys = owned;
	c->owned_keys[c->n_owned_keys++] = *out;
	return LT_OK;
}

/*
 * Field metadata updates: the fields' metadata changed; when that is the primary key's mark, the
 * commit also claimed that no key was duplicated (lt_set_primary_key checked the rows it read),
 * which any concurrent insert voids.
 */
static lt_code
lift_field_metadata(const Lt__Pb__Transaction__UpdateConfig *uc, lt_composite *c, lt_error *err)
{
	int32_t    *fields = lt_malloc(uc->n_field_metadata_updates * sizeof(int32_t));
	bool		key = false;
	lt_code		rc;

	if (!fields)
		return lt_nomem(err);
	for (size_t i = 0; i < uc->n_field_metadata_updates; i++)
	{
		const Lt__Pb__Transaction__UpdateMap *m = uc->field_metadata_updates[i]->value;

		fields[i] = (int32_t) uc->field_metadata_updates[i]->key;
		key |= !m || m->has_replace;
		for (size_t k = 0; m && k < m->n_update_entries; k++)
			key |= !m->update_entries[k]->key ||
				strncmp(m->update_entries[k]->key, LT_PK_METADATA_KEY, strlen(LT_PK_METADATA_KEY)) == 0;
	}
	rc = lt_update_field_metadata(c, fields, uc->n_field_metadata_updates, err);
	lt_free(fields);
	if (rc == LT_OK && key)
		rc = lt_assert_unique_keys(c, NULL, err);
	return rc;
}


lt_code
lt_lift(const Lt__Pb__Transaction *tx, const lt_lift_source *src, lt_composite *out, lt_error *err)
{
	const char *name;
	bool		uninterpretable = false;
	lt_code		rc = LT_OK;

	lt_composite_init(out);
	if (!tx)
	{
		out->op = "unreadable";
		return lt_uninterpreted(out, "unreadable", err);
	}
	name = lt_transaction_op_name(tx);
	out->op = name && strcmp(name, "Unknown") != 0 ? name : "unknown operation";
	switch (tx->operation_case)
	{
		case LT__PB__TRANSACTION__OPERATION_APPEND:
			if ((uninterpretable = has_unknown(&tx->append->base)))
				break;
			rc = lt_composite_begin(out, "append", err);
			if (rc == LT_OK)
				rc = add_fragments(out, tx->append->fragments, tx->append->n_fragments, false, NULL, err);
			break;
		case LT__PB__TRANSACTION__OPERATION_DELETE:
			if ((uninterpretable = has_unknown(&tx->delete_->base)))
				break;
			rc = lt_composite_begin(out, "delete", err);
			if (rc == LT_OK)
				rc = deletions(out, tx->delete_->updated_fragments, tx->delete_->n_updated_fragments,
							   tx->delete_->deleted_fragment_ids, tx->delete_->n_deleted_fragment_ids, src, err);
			break;
		case LT__PB__TRANSACTION__OPERATION_UPDATE:
			{
				const Lt__Pb__Transaction__Update *u = tx->update;
				lt_key_filter *keys = NULL;

				/* columns rewritten in place, or fields this library does not know (a key filter, offsets) */
				if ((uninterpretable = has_unknown(&u->base) ||
					 (u->has_update_mode && u->update_mode != LT__PB__TRANSACTION__UPDATE_MODE__REWRITE_ROWS)))
					break;
				rc = lt_composite_begin(out, "update", err);
				if (rc == LT_OK)
					rc = deletions(out, u->updated_fragments, u->n_updated_fragments, u->removed_fragment_ids,
								   u->n_removed_fragment_ids, src, err);
				/* the modified fields of the fragments it kept count as rewritten there */
				for (size_t i = 0; rc == LT_OK && u->n_fields_modified && i < u->n_updated_fragments; i++)
					rc = lt_add_data_file(out, u->updated_fragments[i]->id, NULL, (const int32_t *) u->fields_modified,
										  u->n_fields_modified, err);
				/* a keyed insert: its rows' keys, and its claim that they are new */
				if (rc == LT_OK && u->inserted_rows)
					rc = lift_keys(u->inserted_rows, out, &keys, &uninterpretable, err);
				if (rc == LT_OK && keys)
					rc = lt_assert_unique_keys(out, keys, err);
				if (rc == LT_OK)
					rc = add_fragments(out, u->new_fragments, u->n_new_fragments, false, keys, err);
				break;
			}
		case LT__PB__TRANSACTION__OPERATION_OVERWRITE:
			rc = lt_composite_begin(out, "overwrite", err);
			if (rc == LT_OK)
				rc = lt_replace_all(out, err);
			if (rc == LT_OK)
				rc = add_fragments(out, tx->overwrite->fragments, tx->overwrite->n_fragments, false, NULL, err);
			break;
		case LT__PB__TRANSACTION__OPERATION_CREATE_INDEX:
			if ((uninterpretable = has_unknown(&tx->create_index->base)))
				break;
			rc = lt_composite_begin(out, "create index", err);
			if (rc == LT_OK)
				rc = lift_create_index(tx->create_index, src, out, &uninterpretable, err);
			break;
		case LT__PB__TRANSACTION__OPERATION_REWRITE:
			/* unknown fields: a fragment-reuse index, deferred remapping — still only moves rows */
			rc = lt_composite_begin(out, "compact", err);
			if (rc == LT_OK)
				rc = lift_rewrite(tx->rewrite, out, err);
			break;
		case LT__PB__TRANSACTION__OPERATION_RESERVE_FRAGMENTS:
			/* ids reserved: the rebase takes new ids after them */
			rc = lt_composite_begin(out, "reserve fragments", err);
			break;
		case LT__PB__TRANSACTION__OPERATION_UPDATE_CONFIG:
			{
				const Lt__Pb__Transaction__UpdateConfig *uc = tx->update_config;

				/* schema, field or table metadata (fields unknown here) is more than config keys */
				if ((uninterpretable = has_unknown(&uc->base)))
					break;
				rc = lt_composite_begin(out, "update config", err);
				for (size_t i = 0; rc == LT_OK && i < uc->n_upsert_values; i++)
					rc = lt_update_config(out, uc->upsert_values[i]->key, uc->upsert_values[i]->value
										  ? uc->upsert_values[i]->value : "", err);
				for (size_t i = 0; rc == LT_OK && i < uc->n_delete_keys; i++)
					rc = lt_update_config(out, uc->delete_keys[i], NULL, err);
				if (rc == LT_OK && uc->n_field_metadata_updates)
					rc = lift_field_metadata(uc, out, err);
				break;
			}
		default:
			/* Merge, Project, Restore, DataReplacement, UpdateMemWalState, Clone, UpdateBases, unknown */
			uninterpretable = true;
			break;
	}
	if (rc == LT_OK && uninterpretable)
	{
		const char *op = out->op;

		lt_composite_clear(out);
		out->op = op;
		rc = lt_uninterpreted(out, op, err);
	}
	if (rc != LT_OK)
	{
		lt_composite_clear(out);
		return rc;
	}
	return LT_OK;
}

/* ---- lowering ---------------------------------------------------------------------------- */

lt_lowered_op
lt_lower_op(const lt_composite *c)
{
	bool		ins = false, del = false, keys = false, idx = false, replace = false, rewrite = false,
				other = false;

	for (size_t i = 0; i < c->n_actions; i++)
		switch (c->actions[i].kind)
		{
			case LT_ACT_ADD_FRAGMENT:
				if (c->actions[i].moved)
					rewrite = true;
				else
					ins = true;
				break;
			case LT_ACT_SET_DELETION_FILE:
			case LT_ACT_REMOVE_FRAGMENT:
				del = true;
				break;
			case LT_ACT_ASSERT_UNIQUE_KEYS:
				keys = true;
				break;
			case LT_ACT_ASSERT_NO_MATCHING_INSERTS:
				break;			/* a precondition: nothing on disk */
			case LT_ACT_ADD_INDEX:
			case LT_ACT_REMOVE_INDEX:
				idx = true;
				break;
			case LT_ACT_REPLACE_ALL:
				replace = true;
				break;
			case LT_ACT_REWRITE_FRAGMENTS:
				rewrite = true;
				break;
			default:
				other = true;
				break;
		}
	if (other)
		return LT_LOWER_INVALID;
	if (replace)
		return del || idx || rewrite || keys ? LT_LOWER_INVALID : LT_LOWER_OVERWRITE;
	if (rewrite)
		return ins || del || idx || keys ? LT_LOWER_INVALID : LT_LOWER_REWRITE;
	if (idx)
		return ins || del || keys ? LT_LOWER_INVALID : LT_LOWER_CREATE_INDEX;
	if (keys || (ins && del))
		return LT_LOWER_UPDATE;
	if (del)
		return LT_LOWER_DELETE;
	return ins ? LT_LOWER_APPEND : LT_LOWER_NONE;
}
