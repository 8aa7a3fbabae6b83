/*
 * Fuzz target: a concurrent writer's transaction file, as the commit reads it
 * to decide between rebase and conflict (lt_txn.c lt_txn_check_version).  The
 * input is `_transactions/1-fuzz.txn` of version 2 of a small in-memory
 * dataset; a transaction begun at version 1 (deletes in fragment 0, one new
 * fragment) then commits over it.  Any verdict is fine; a crash is not.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_table.pb-c.h"
#include "txn/lt_txn.h"

static void
put_version(lt_store *s, uint64_t version, const char *txn_file)
{
	Lt__Pb__Field field = LT__PB__FIELD__INIT;
	Lt__Pb__Field *fields[1] = {&field};
	Lt__Pb__DataFile df = LT__PB__DATA_FILE__INIT;
	Lt__Pb__DataFile *dfs[1] = {&df};
	int32_t		ids[1] = {0}, cols[1] = {0};
	Lt__Pb__DataFragment f0 = LT__PB__DATA_FRAGMENT__INIT, f1 = LT__PB__DATA_FRAGMENT__INIT;
	Lt__Pb__DataFragment *frags[2] = {&f0, &f1};
	Lt__Pb__DataStorageFormat fmt = LT__PB__DATA_STORAGE_FORMAT__INIT;
	Lt__Pb__Manifest m = LT__PB__MANIFEST__INIT;
	uint8_t    *buf;
	uint64_t	len;
	char		name[64], path[96];
	lt_error	err;

	field.name = "id";
	field.has_id = field.has_parent_id = true;
	field.id = 0;
	field.parent_id = -1;
	field.logical_type = "int64";
	df.path = "x.lance";
	df.n_fields = df.n_column_indices = 1;
	df.fields = ids;
	df.column_indices = cols;
	df.has_file_major_version = df.has_file_minor_version = true;
	df.file_major_version = 2;
	df.file_minor_version = 1;
	f0.has_physical_rows = f1.has_physical_rows = f1.has_id = true;
	f0.physical_rows = 100;
	f1.physical_rows = 50;
	f1.id = 1;
	f0.n_files = f1.n_files = 1;
	f0.files = f1.files = dfs;
	fmt.file_format = "lance";
	fmt.version = "2.1";
	m.n_fields = 1;
	m.fields = fields;
	m.n_fragments = 2;
	m.fragments = frags;
	m.has_version = m.has_max_fragment_id = true;
	m.version = version;
	m.max_fragment_id = 1;
	m.data_format = &fmt;
	m.transaction_file = (char *) txn_file;
	if (lt_manifest_serialize(&m, NULL, NULL, &buf, &len, &err) != LT_OK)
		return;
	lt_manifest_name(version, LT_NAMING_V2, name, sizeof(name));
	snprintf(path, sizeof(path), "_versions/%s", name);
	lt_store_mem_put(s, path, buf, len, &err);
	lt_free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_store   *s;
	lt_dataset *ds = NULL;
	lt_txn	   *t = NULL;
	lt_error	err;
	lt_version_spec v1 = {1, NULL};
	uint32_t	offs[3] = {1, 2, 99};
	int32_t		ids[1] = {0}, cols[1] = {0};
	lt_written_file wf = {"y.lance", 1, ids, cols, 2, 1, 10, 10};
	uint64_t	fid;
	lt_commit_result res;
	lt_commit_options opts = {2, NULL};

	if (lt_store_mem_open(&s, &err) != LT_OK)
		return 0;
	put_version(s, 1, NULL);
	put_version(s, 2, "1-fuzz.txn");
	lt_store_mem_put(s, "_transactions/1-fuzz.txn", data, size, &err);
	if (lt_dataset_open(s, "", &v1, &ds, &err) == LT_OK && lt_txn_begin(ds, &t, &err) == LT_OK &&
		lt_txn_delete_rows(t, 0, offs, 3, &err) == LT_OK && lt_txn_add_fragment(t, 1, &wf, NULL, &fid, &err) == LT_OK)
		lt_txn_commit(t, &opts, &res, &err);
	lt_txn_free(t);
	lt_dataset_close(ds);
	lt_store_close(s);
	return 0;
}
