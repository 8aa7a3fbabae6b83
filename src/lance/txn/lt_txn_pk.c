/*
 * lt_txn_pk.c — the commit that marks a primary key on an existing dataset (lt_keys.h).
 *
 * Written as Lance 8 writes it for updateFieldMetadata: a Transaction.update_config whose
 * field_metadata_updates set `lance-schema:unenforced-primary-key:position` = N on each key field,
 * and a manifest whose key fields carry that metadata entry and Field.unenforced_primary_key /
 * unenforced_primary_key_position.  The caller has checked, at the read version, that the key
 * holds (no duplicate, no NULL).  As a composite (lt_action.h) the commit writes the key fields'
 * metadata and claims every key unique, depending on the layout and key values of the fragments
 * it checked; concurrent commits are compared with that footprint like any other commit's
 * (docs/conflicts.md, "set primary key").
 */
#include <stdio.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "txn/lt_keys.h"
#include "util/lt_random.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

typedef struct pk_commit
{
	const char *dsname;
	int			n;
	const int32_t *field_ids;
	lt_composite ours;
	lt_footprint fo;
} pk_commit;

/* The key fields' metadata, and the claim on every key of the fragments read's rows. */
static lt_code
pk_composite(const lt_dataset *read, int n, const int32_t *field_ids, lt_composite *c, lt_error *err)
{
	uint64_t   *checked = lt_malloc((read->n_fragments ? read->n_fragments : 1) * sizeof(uint64_t));
	lt_code		rc;

	if (!checked)
		return lt_nomem(err);
	for (size_t i = 0; i < read->n_fragments; i++)
		checked[i] = read->fragments[i]->id;
	rc = lt_composite_begin(c, "set primary key", err);
	if (rc == LT_OK)
		rc = lt_update_field_metadata(c, field_ids, (size_t) n, err);
	if (rc == LT_OK)
		rc = lt_assert_key_checked(c, field_ids, (size_t) n, checked, read->n_fragments, err);
	lt_free(checked);
	return rc;
}

/* A version committed since the read version: lift it, compare footprints (lt_action.h). */
static lt_code
pk_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	pk_commit  *c = arg;

	return lt_txn_check_version(&c->ours, &c->fo, prev, next, c->dsname, NULL, NULL, NULL, NULL, err);
}

static lt_code
pk_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	pk_commit  *c = arg;
	const Lt__Pb__Manifest *bm = base->manifest;
	Lt__Pb__Manifest m = *bm;
	Lt__Pb__Field **fields = lt_calloc(bm->n_fields + 1, sizeof(Lt__Pb__Field *));
	Lt__Pb__Field *copies = lt_calloc(c->n + 1, sizeof(Lt__Pb__Field));
	void	  **mds = lt_calloc(c->n + 1, sizeof(void *));	/* the metadata arrays made here */
	Lt__Pb__Field__MetadataEntry *mentries = lt_calloc(c->n + 1, sizeof(Lt__Pb__Field__MetadataEntry));
	Lt__Pb__Transaction__UpdateMapEntry *uentries = lt_calloc(c->n + 1, sizeof(Lt__Pb__Transaction__UpdateMapEntry));
	Lt__Pb__Transaction__UpdateMapEntry **uentry_ptrs = lt_calloc(c->n + 1, sizeof(void *));
	Lt__Pb__Transaction__UpdateMap *umaps = lt_calloc(c->n + 1, sizeof(Lt__Pb__Transaction__UpdateMap));
	Lt__Pb__Transaction__UpdateConfig__FieldMetadataUpdatesEntry *fentries =
		lt_calloc(c->n + 1, sizeof(Lt__Pb__Transaction__UpdateConfig__FieldMetadataUpdatesEntry));
	Lt__Pb__Transaction__UpdateConfig__FieldMetadataUpdatesEntry **fentry_ptrs = lt_calloc(c->n + 1, sizeof(void *));
	char		(*positions)[12] = lt_calloc(c->n + 1, 12);
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__UpdateConfig uc = LT__PB__TRANSACTION__UPDATE_CONFIG__INIT;
	uint8_t		uuid[16];
	char		uuid_text[40];
	lt_code		rc = LT_OK;

	*lost_race = false;
	if (!fields || !copies || !mds || !mentries || !uentries || !uentry_ptrs || !umaps || !fentries ||
		!fentry_ptrs || !positions)
	{
		rc = lt_nomem(err);
		goto out;
	}
	if ((rc = lt_txn_check_writable(base, c->dsname, err)) != LT_OK)
		goto out;
	memcpy(fields, bm->fields, bm->n_fields * sizeof(Lt__Pb__Field *));
	for (int k = 0; k < c->n; k++)
	{
		size_t		i;
		Lt__Pb__Field *f;

		for (i = 0; i < bm->n_fields; i++)
			if ((bm->fields[i]->has_id ? bm->fields[i]->id : 0) == c->field_ids[k])	/* 0 may be left out */
				break;
		if (i == bm->n_fields)
		{
			rc = lt_error_set(err, LT_ECONFLICT, "field %d of %s is gone at version %llu", c->field_ids[k], c->dsname,
							  (unsigned long long) base->version);
			goto out;
		}
		snprintf(positions[k], 12, "%d", k + 1);
		f = &copies[k];
		*f = *bm->fields[i];
		f->has_unenforced_primary_key = f->unenforced_primary_key = true;
		f->has_unenforced_primary_key_position = true;
		f->unenforced_primary_key_position = (uint32_t) (k + 1);
		/* the existing metadata, plus the position entry */
		f->metadata = lt_calloc(f->n_metadata + 2, sizeof(Lt__Pb__Field__MetadataEntry *));
		if (!f->metadata)
		{
			rc = lt_nomem(err);
			goto out;
		}
		if (f->n_metadata)
			memcpy(f->metadata, bm->fields[i]->metadata, f->n_metadata * sizeof(Lt__Pb__Field__MetadataEntry *));
		lt__pb__field__metadata_entry__init(&mentries[k]);
		mentries[k].key = (char *) LT_PK_POSITION_METADATA_KEY;
		mentries[k].has_value = true;
		mentries[k].value.data = (uint8_t *) positions[k];
		mentries[k].value.len = strlen(positions[k]);
		f->metadata[f->n_metadata++] = &mentries[k];
		mds[k] = f->metadata;
		fields[i] = f;

		lt__pb__transaction__update_map_entry__init(&uentries[k]);
		uentries[k].key = (char *) LT_PK_POSITION_METADATA_KEY;
		uentries[k].value = positions[k];
		uentry_ptrs[k] = &uentries[k];
		lt__pb__transaction__update_map__init(&umaps[k]);
		umaps[k].n_update_entries = 1;
		umaps[k].update_entries = &uentry_ptrs[k];
		lt__pb__transaction__update_config__field_metadata_updates_entry__init(&fentries[k]);
		fentries[k].has_key = true;
		fentries[k].key = (uint32_t) c->field_ids[k];
		fentries[k].value = &umaps[k];
		fentry_ptrs[k] = &fentries[k];
	}
	m.fields = fields;
	uc.n_field_metadata_updates = (size_t) c->n;
	uc.field_metadata_updates = fentry_ptrs;

	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	tx.operation_case = LT__PB__TRANSACTION__OPERATION_UPDATE_CONFIG;
	tx.update_config = &uc;
	if ((rc = lt_txn_publish(base, &m, base->index_section, &tx, c->dsname, lost_race, err)) != LT_OK)
		goto out;
	res->op = LT_OP_UPDATE_CONFIG;
	res->version = base->version + 1;
out:
	for (int k = 0; mds && k < c->n; k++)
		lt_free(mds[k]);
	lt_free(fields);
	lt_free(copies);
	lt_free(mds);
	lt_free(mentries);
	lt_free(uentries);
	lt_free(uentry_ptrs);
	lt_free(umaps);
	lt_free(fentries);
	lt_free(fentry_ptrs);
	lt_free(positions);
	return rc;
}

lt_code
lt_commit_primary_key(lt_dataset *read, const int32_t *field_ids, int n, const lt_commit_options *opts,
					  lt_commit_result *result, lt_error *err)
{
	char		dsname[512];
	pk_commit	c = {dsname, n, field_ids};
	lt_commit_kind kind = {dsname, pk_check, pk_attempt, &c};
	const lt_field **key = NULL;
	int			n_key = 0;
	lt_code		rc;

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, dsname, sizeof(dsname));
	if (n <= 0 || n > 64)
		return lt_error_set(err, LT_EINVALID, "a primary key has 1 to 64 columns, not %d", n);
	LT_TRY(lt_schema_primary_key(read->schema, &key, &n_key, err));
	lt_free(key);
	if (n_key > 0)
		return lt_error_set(err, LT_EINVALID, "%s already has a primary key (Lance does not change a primary key once set)",
							dsname);
	for (int k = 0; k < n; k++)
	{
		const lt_field *f = lt_schema_find_id(read->schema, field_ids[k]);

		if (!f || f->parent_id != -1)
			return lt_error_set(err, LT_EINVALID, "field %d of %s is not a top-level field", field_ids[k], dsname);
		if (lt_key_kind_of(f) == LT_KEY_UNSUPPORTED)
			return lt_error_set(err, LT_EUNSUPPORTED,
								"field \"%s\" of %s has type %s: Lance hashes keys of types int32, int64, uint32, uint64, string and binary only",
								f->name, dsname, f->logical_type);
		for (int j = 0; j < k; j++)
			if (field_ids[j] == field_ids[k])
				return lt_error_set(err, LT_EINVALID, "field \"%s\" is named twice in the primary key", f->name);
	}
	lt_composite_init(&c.ours);
	if ((rc = pk_composite(read, n, field_ids, &c.ours, err)) == LT_OK &&
		(rc = lt_footprint_of(&c.ours, &c.fo, err)) == LT_OK)
		rc = lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
	lt_footprint_clear(&c.fo);
	lt_composite_clear(&c.ours);
	return rc;
}
