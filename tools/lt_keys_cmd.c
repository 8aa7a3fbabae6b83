/*
 * lt_keys_cmd.c — `lt-inspect key-filter`: the inserted-keys filter of a transaction file, and a
 * bit-for-bit comparison with the filter lt_keys.c builds from the same keys.
 *
 *   lt-inspect key-filter TXN [--dataset DIR --keys FILE.jsonl]
 *
 * Prints one JSON object: the Update's KeyExistenceFilter (field ids, kind, sizes, set bits or hash
 * count).  With --dataset and --keys (JSON lines holding the key columns of the inserted rows, in
 * the scan format), it builds a filter over DIR's primary key from those rows and adds
 * "rebuilt_identical": whether the bytes (bitmap or hash set) are the same.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "table/lt_dataset.h"
#include "lt_json_read.h"
#include "txn/lt_keys.h"
#include "lt_keys_cmd.h"
#include "proto/lt_transaction.pb-c.h"
#include "io/lt_store.h"
#include "io/lt_store_s3.h"

static int
kfail(const char *what, lt_error *err)
{
	fprintf(stderr, "lt-inspect key-filter: %s: %s\n", what, err ? err->msg : "");
	return 1;
}

static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf = NULL;
	long		n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
	{
		buf = malloc((size_t) n + 1);
		if (buf && fread(buf, 1, (size_t) n, f) != (size_t) n)
		{
			free(buf);
			buf = NULL;
		}
		else if (buf)
		{
			buf[n] = 0;
			*len = (size_t) n;
		}
	}
	fclose(f);
	return buf;
}

/* A filter over dir's primary key from the rows of keys_path; NULL on error (reported). */
static lt_key_filter *
rebuild(const char *dir, const char *keys_path, lt_key_filter_kind kind)
{
	lt_store   *store = NULL;
	lt_dataset *ds = NULL;
	lt_version_spec spec = {0};
	lt_error	err;
	const lt_field **key = NULL;
	int			n_key = 0;
	lt_array  **cols = NULL;
	int32_t    *ids = NULL;
	lt_key_filter *f = NULL;
	lt_key_buf	kb = {0};
	char	   *text = NULL;
	size_t		len = 0;
	bool		ok = false;

	if (lt_store_open_location(dir, &store, &err) != LT_OK ||
		lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
	{
		kfail(dir, &err);
		goto done;
	}
	if (lt_schema_primary_key(ds->schema, &key, &n_key, &err) != LT_OK)
	{
		kfail(dir, &err);
		goto done;
	}
	if (n_key == 0)
	{
		fprintf(stderr, "lt-inspect key-filter: %s has no primary key\n", dir);
		goto done;
	}
	cols = calloc(n_key, sizeof(*cols));
	ids = calloc(n_key, sizeof(*ids));
	for (int k = 0; k < n_key; k++)
	{
		ids[k] = key[k]->id;
		if (lt_array_new(key[k], &cols[k], &err) != LT_OK)
		{
			kfail("array", &err);
			goto done;
		}
	}
	if (!(text = (char *) slurp(keys_path, &len)))
	{
		fprintf(stderr, "lt-inspect key-filter: cannot read %s\n", keys_path);
		goto done;
	}
	for (char *line = text, *nl; *line; line = nl ? nl + 1 : line + strlen(line))
	{
		nl = strchr(line, '\n');
		if ((nl ? (size_t) (nl - line) : strlen(line)) == 0)
			continue;
		if (lt_json_row_append(line, nl ? (size_t) (nl - line) : strlen(line), n_key, key, cols, &err) != LT_OK)
		{
			kfail(keys_path, &err);
			goto done;
		}
	}
	if (lt_key_filter_new(kind, ids, n_key, &f, &err) != LT_OK)
	{
		kfail("filter", &err);
		goto done;
	}
	for (int64_t i = 0; i < cols[0]->length; i++)
	{
		bool		is_null;

		if (lt_key_from_row(&kb, key, n_key, cols, i, &is_null, &err) != LT_OK ||
			(!is_null && lt_key_filter_add(f, kb.data, kb.len, &err) != LT_OK))
		{
			kfail("key", &err);
			goto done;
		}
	}
	ok = true;
done:
	if (!ok)
	{
		lt_key_filter_free(f);
		f = NULL;
	}
	lt_key_buf_free(&kb);
	free(text);
	for (int k = 0; cols && k < n_key; k++)
		lt_array_free(cols[k]);
	free(cols);
	free(ids);
	lt_free(key);
	if (ds)
		lt_dataset_close(ds);
	if (store)
		lt_store_close(store);
	return f;
}

int
cmd_key_filter(int argc, char **argv)
{
	const char *txn_path = argv[1],
			   *dir = NULL,
			   *keys = NULL;
	uint8_t    *bytes;
	size_t		len = 0;
	Lt__Pb__Transaction *txn;
	lt_key_filter *f = NULL;
	lt_error	err;
	int			rc = 0;

	for (int i = 2; i < argc; i++)
	{
		if (strcmp(argv[i], "--dataset") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc)
			keys = argv[++i];
		else
		{
			fprintf(stderr, "usage: lt-inspect key-filter TXN [--dataset DIR --keys FILE.jsonl]\n");
			return 2;
		}
	}
	if ((dir == NULL) != (keys == NULL))
	{
		fprintf(stderr, "lt-inspect key-filter: --dataset and --keys go together\n");
		return 2;
	}
	if (!(bytes = slurp(txn_path, &len)))
	{
		fprintf(stderr, "lt-inspect key-filter: cannot read %s\n", txn_path);
		return 1;
	}
	txn = lt__pb__transaction__unpack(lt_protobuf_allocator(), len, bytes);
	free(bytes);
	if (!txn)
	{
		fprintf(stderr, "lt-inspect key-filter: %s: not a transaction\n", txn_path);
		return 1;
	}
	if (txn->operation_case != LT__PB__TRANSACTION__OPERATION_UPDATE || !txn->update->inserted_rows)
	{
		printf("{\"filter\":null}\n");
		lt__pb__transaction__free_unpacked(txn, lt_protobuf_allocator());
		return 0;
	}
	if (lt_key_filter_from_pb(txn->update->inserted_rows, &f, &err) != LT_OK)
	{
		lt__pb__transaction__free_unpacked(txn, lt_protobuf_allocator());
		return kfail(txn_path, &err);
	}
	lt__pb__transaction__free_unpacked(txn, lt_protobuf_allocator());

	printf("{\"field_ids\":[");
	for (int k = 0; k < f->n_field_ids; k++)
		printf("%s%d", k ? "," : "", f->field_ids[k]);
	if (f->kind == LT_KEY_FILTER_BLOOM)
	{
		uint64_t	bits = 0;

		for (size_t i = 0; i < f->bitmap_len; i++)
			bits += (uint64_t) __builtin_popcount(f->bitmap[i]);
		printf("],\"kind\":\"bloom\",\"bitmap_bytes\":%zu,\"num_bits\":%u,\"number_of_items\":%" PRIu64
			   ",\"probability\":%.17g,\"bits_set\":%" PRIu64, f->bitmap_len, f->num_bits, f->number_of_items,
			   f->probability, bits);
	}
	else
		printf("],\"kind\":\"exact\",\"hashes\":%zu", f->n_hashes);
	if (keys)
	{
		lt_key_filter *mine = rebuild(dir, keys, f->kind);

		if (!mine)
			rc = 1;
		else
		{
			bool		same;

			lt_key_filter_finish(mine);
			if (f->kind == LT_KEY_FILTER_BLOOM)
				same = mine->bitmap_len == f->bitmap_len && mine->num_bits == f->num_bits &&
					mine->number_of_items == f->number_of_items && mine->probability == f->probability &&
					memcmp(mine->bitmap, f->bitmap, f->bitmap_len) == 0;
			else
				same = mine->n_hashes == f->n_hashes &&
					memcmp(mine->hashes, f->hashes, f->n_hashes * sizeof(uint64_t)) == 0;
			same = same && mine->n_field_ids == f->n_field_ids &&
				memcmp(mine->field_ids, f->field_ids, f->n_field_ids * sizeof(int32_t)) == 0;
			printf(",\"rebuilt_keys\":%" PRIu64 ",\"rebuilt_identical\":%s", mine->n_added, same ? "true" : "false");
			lt_key_filter_free(mine);
		}
	}
	printf("}\n");
	lt_key_filter_free(f);
	return rc;
}
