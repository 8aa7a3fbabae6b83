/*
 * lt_txn_restore.c — Lance's Restore commit (lt_txn_restore.h).
 */
#include "txn/lt_txn_restore.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn_int.h"

typedef struct restore_commit
{
	char		name[512];
	lt_dataset *old;
} restore_commit;

static lt_code
restore_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	restore_commit *rc = arg;

	return lt_error_set(err, LT_ECONFLICT, "version %llu of %s was committed after the version the restore read",
						(unsigned long long) next->version, rc->name);
}

static lt_code
restore_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	restore_commit *rc = arg;
	Lt__Pb__Manifest m = *rc->old->manifest;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__Restore rs = LT__PB__TRANSACTION__RESTORE__INIT;
	const Lt__Pb__Manifest *b = base->manifest;
	uint8_t		uuid[16];
	char		uuid_text[40];

	LT_TRY(lt_txn_check_writable(base, rc->name, err));
	LT_TRY(lt_txn_check_writable(rc->old, rc->name, err));
	/* ids handed out since stay used: fragment ids and row ids never come back */
	if (b->has_max_fragment_id && (!m.has_max_fragment_id || b->max_fragment_id > m.max_fragment_id))
	{
		m.has_max_fragment_id = true;
		m.max_fragment_id = b->max_fragment_id;
	}
	if (b->has_next_row_id && b->next_row_id > m.next_row_id)
	{
		m.has_next_row_id = true;
		m.next_row_id = b->next_row_id;
	}
	m.index_section = 0;
	m.has_index_section = false;
	m.transaction_section = 0;
	m.has_transaction_section = false;
	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	rs.has_version = true;
	rs.version = rc->old->version;
	tx.operation_case = LT__PB__TRANSACTION__OPERATION_RESTORE;
	tx.restore = &rs;
	LT_TRY(lt_txn_publish(base, &m, rc->old->index_section, &tx, rc->name, lost_race, err));
	res->op = LT_OP_OVERWRITE;
	res->version = base->version + 1;
	return LT_OK;
}

lt_code
lt_commit_restore(lt_dataset *read, uint64_t version, const lt_commit_options *opts, lt_commit_result *result,
				  lt_error *err)
{
	restore_commit rc = {{0}};
	lt_version_spec spec = {version, NULL};
	lt_commit_kind kind = {rc.name, restore_check, restore_attempt, &rc};
	lt_code		code;

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, rc.name, sizeof(rc.name));
	if (version == 0 || version >= read->version)
		return lt_error_set(err, LT_EINVALID, "version %llu of %s is not an older version (the latest is %llu)",
							(unsigned long long) version, rc.name, (unsigned long long) read->version);
	LT_TRY(lt_dataset_open(read->store, read->prefix, &spec, &rc.old, err));
	code = lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
	lt_dataset_close(rc.old);
	return code;
}
