/*
 * lt_txn_config.c — the commit that sets (or removes) one key of a dataset's config: a Lance UpdateConfig
 * with upsert_values (or delete_keys), as Lance's Dataset::update_config writes it.  As a composite
 * (lt_action.h) it writes that key only; concurrent commits are compared with that footprint.
 */
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

typedef struct config_commit
{
	const char *dsname;
	const char *key;
	const char *value;			/* NULL: remove the key */
	lt_composite ours;
	lt_footprint fo;
} config_commit;

static lt_code
config_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	config_commit *c = arg;

	return lt_txn_check_version(&c->ours, &c->fo, prev, next, c->dsname, NULL, NULL, NULL, NULL, err);
}

static lt_code
config_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	config_commit *c = arg;
	const Lt__Pb__Manifest *bm = base->manifest;
	Lt__Pb__Manifest m = *bm;
	Lt__Pb__Manifest__ConfigEntry **cfg = lt_calloc(bm->n_config + 1, sizeof(Lt__Pb__Manifest__ConfigEntry *));
	Lt__Pb__Manifest__ConfigEntry entry = LT__PB__MANIFEST__CONFIG_ENTRY__INIT;
	Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry up = LT__PB__TRANSACTION__UPDATE_CONFIG__UPSERT_VALUES_ENTRY__INIT;
	Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry *upp = &up;
	char	   *del = (char *) c->key;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__UpdateConfig uc = LT__PB__TRANSACTION__UPDATE_CONFIG__INIT;
	uint8_t		uuid[16];
	char		uuid_text[40];
	size_t		n = 0;
	lt_code		rc;

	*lost_race = false;
	if (!cfg)
		return lt_nomem(err);
	if ((rc = lt_txn_check_writable(base, c->dsname, err)) != LT_OK)
		goto out;
	for (size_t i = 0; i < bm->n_config; i++)
		if (strcmp(bm->config[i]->key, c->key) != 0)
			cfg[n++] = bm->config[i];
	if (c->value)
	{
		entry.key = (char *) c->key;
		entry.value = (char *) c->value;
		cfg[n++] = &entry;
		up.key = (char *) c->key;
		up.value = (char *) c->value;
		uc.n_upsert_values = 1;
		uc.upsert_values = &upp;
	}
	else
	{
		uc.n_delete_keys = 1;
		uc.delete_keys = &del;
	}
	m.n_config = n;
	m.config = cfg;
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
	lt_free(cfg);
	return rc;
}

lt_code
lt_commit_config(lt_dataset *read, const char *key, const char *value, const lt_commit_options *opts,
				 lt_commit_result *result, lt_error *err)
{
	char		dsname[512];
	config_commit c = {dsname, key, value};
	lt_commit_kind kind = {dsname, config_check, config_attempt, &c};
	lt_code		rc;

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, dsname, sizeof(dsname));
	if (!key || !key[0])
		return lt_error_set(err, LT_EINVALID, "a config key of %s must not be empty", dsname);
	lt_composite_init(&c.ours);
	if ((rc = lt_composite_begin(&c.ours, "update config", err)) == LT_OK &&
		(rc = lt_update_config(&c.ours, key, value, err)) == LT_OK &&
		(rc = lt_footprint_of(&c.ours, &c.fo, err)) == LT_OK)
		rc = lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
	lt_footprint_clear(&c.fo);
	lt_composite_clear(&c.ours);
	return rc;
}
