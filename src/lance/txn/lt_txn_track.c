/*
 * lt_txn_track.c — the commit that starts tracking a field's assignment (lt_txn.h,
 * lt_commit_track_assignment): an UpdateConfig that adds the field's config entry and a root with
 * every fragment of the version it commits on in the initial state.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "assignment/lt_assignment.h"
#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

typedef struct track_commit
{
	const char *dsname;
	int32_t		field_id;
	bool		assigned;
} track_commit;

/* The state is made on the version it commits on: whatever came meanwhile is covered. */
static lt_code
track_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	(void) arg;
	(void) prev;
	(void) next;
	(void) err;
	return LT_OK;
}

static lt_code
track_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	track_commit *c = arg;
	const Lt__Pb__Manifest *bm = base->manifest;
	Lt__Pb__Manifest m = *bm;
	Lt__Pb__Manifest__ConfigEntry **cfg = NULL;
	Lt__Pb__Manifest__ConfigEntry entry = LT__PB__MANIFEST__CONFIG_ENTRY__INIT;
	Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry up = LT__PB__TRANSACTION__UPDATE_CONFIG__UPSERT_VALUES_ENTRY__INIT;
	Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry *ups[1] = {&up};
	Lt__Pb__Transaction__UpdateConfig uc = LT__PB__TRANSACTION__UPDATE_CONFIG__INIT;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	lt_assign_field *f = NULL;
	char		key[64];
	char	   *root = NULL;
	uint8_t		uuid[16];
	char		uuid_text[40];
	lt_code		rc;

	*lost_race = false;
	LT_TRY(lt_txn_check_writable(base, c->dsname, err));
	if (!lt_schema_find_id(base->schema, c->field_id))
		return lt_error_set(err, LT_ECONFLICT, "field %d of %s is gone at version %llu", c->field_id, c->dsname,
							(unsigned long long) base->version);
	if (lt_assign_is_tracked(base, c->field_id, NULL))
		return lt_error_set(err, LT_EINVALID, "field %d of %s already tracks its assignment (version %llu)",
							c->field_id, c->dsname, (unsigned long long) base->version);
	LT_TRY(lt_assign_new(base, c->field_id, &f, err));
	rc = LT_OK;
	for (size_t i = 0; c->assigned && rc == LT_OK && i < base->n_fragments; i++)
		rc = lt_assign_set(f, base->fragments[i]->id, LT_ASSIGN_ALL, NULL, base->fragments[i]->physical_rows, err);
	if (rc == LT_OK)
		rc = lt_assign_write(f, &root, err);
	lt_assign_free(f);
	if (rc != LT_OK)
		return rc;
	if (!(cfg = lt_calloc(bm->n_config + 1, sizeof(*cfg))))
	{
		lt_free(root);
		return lt_nomem(err);
	}
	if (bm->n_config)
		memcpy(cfg, bm->config, bm->n_config * sizeof(*cfg));
	snprintf(key, sizeof(key), LT_ASSIGN_CONFIG_PREFIX "%d", c->field_id);
	entry.key = key;
	entry.value = root;
	cfg[bm->n_config] = &entry;
	m.config = cfg;
	m.n_config = bm->n_config + 1;
	m.has_writer_feature_flags = true;
	m.writer_feature_flags = (bm->has_writer_feature_flags ? bm->writer_feature_flags : 0) |
		LT_FLAG_TABLE_CONFIG | LT_FLAG_FIELD_ASSIGNMENT;
	up.key = key;
	up.value = root;
	uc.n_upsert_values = 1;
	uc.upsert_values = ups;
	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	tx.operation_case = LT__PB__TRANSACTION__OPERATION_UPDATE_CONFIG;
	tx.update_config = &uc;
	rc = lt_txn_publish(base, &m, base->index_section, &tx, c->dsname, lost_race, err);
	if (rc == LT_OK)
	{
		res->op = LT_OP_UPDATE_CONFIG;
		res->version = base->version + 1;
	}
	lt_free(cfg);
	lt_free(root);
	return rc;
}

lt_code
lt_commit_track_assignment(lt_dataset *read, int32_t field_id, bool initially_assigned, const lt_commit_options *opts,
						   lt_commit_result *result, lt_error *err)
{
	char		dsname[512];
	track_commit c = {dsname, field_id, initially_assigned};
	lt_commit_kind kind = {dsname, track_check, track_attempt, &c};
	const lt_field *f;

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, dsname, sizeof(dsname));
	if (!(f = lt_schema_find_id(read->schema, field_id)) || f->parent_id != -1)
		return lt_error_set(err, LT_EINVALID, "field %d of %s is not a top-level field", field_id, dsname);
	if (lt_assign_is_tracked(read, field_id, NULL))
		return lt_error_set(err, LT_EINVALID, "field \"%s\" of %s already tracks its assignment", f->name, dsname);
	return lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
}
