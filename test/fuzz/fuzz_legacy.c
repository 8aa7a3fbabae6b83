/*
 * Fuzz target: legacy v1 (footer 0.2) data files through the container and
 * the legacy field readers, with a fixed table schema covering every legacy
 * page kind (plain, bool, fixed-size list, strings, lists, structs,
 * dictionaries).  Field ids 0..N-1 are all mapped to the file.
 */
#include <stddef.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "file/lt_file.h"
#include "proto/lt_file.pb-c.h"
#include "types/lt_schema.h"

#define MAX_ROWS 20000

static const struct
{
	const char *name;
	int			parent;
	const char *lt;
	int			nullable;
}			defs[] = {
	{"a", -1, "int32", 1}, {"b", -1, "bool", 1}, {"s", -1, "string", 1}, {"t", -1, "large_binary", 0},
	{"l", -1, "list", 1}, {"item", 4, "int64", 1}, {"st", -1, "struct", 1}, {"x", 6, "int16", 1},
	{"v", -1, "fixed_size_list:float:2", 1}, {"d", -1, "dict:string:int8:false", 1},
	{"ll", -1, "large_list", 1}, {"item", 10, "string", 1}, {"dec", -1, "decimal:128:10:2", 1}
};
#define N_DEFS ((int) (sizeof(defs) / sizeof(defs[0])))

static lt_schema *schema;
static int32_t ids[N_DEFS];

static void
init(void)
{
	Lt__Pb__Field f[N_DEFS];
	Lt__Pb__Field *p[N_DEFS];
	lt_error	err;

	for (int i = 0; i < N_DEFS; i++)
	{
		Lt__Pb__Field x = LT__PB__FIELD__INIT;

		x.has_id = x.has_parent_id = x.has_nullable = true;
		x.id = i;
		x.parent_id = defs[i].parent;
		x.name = (char *) defs[i].name;
		x.logical_type = (char *) defs[i].lt;
		x.nullable = defs[i].nullable;
		f[i] = x;
		p[i] = &f[i];
		ids[i] = i;
	}
	if (lt_schema_from_pb(p, N_DEFS, &schema, &err) != LT_OK)
		schema = NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_store   *store;
	lt_file    *f;
	lt_error	err;
	lt_column_map map = {N_DEFS, ids, NULL};

	if (!schema)
		init();
	if (!schema || lt_store_mem_open(&store, &err) != LT_OK)
		return 0;
	if (lt_store_mem_put(store, "f.lance", data, size, &err) != LT_OK ||
		lt_file_open(store, "f.lance", &f, &err) != LT_OK)
	{
		lt_store_close(store);
		return 0;
	}
	for (int i = 0; f->version == LT_FILE_LEGACY && i < schema->n_fields; i++)
	{
		lt_field_reader *r;
		lt_array   *a;
		uint64_t	rows = f->num_rows < MAX_ROWS ? f->num_rows : MAX_ROWS;

		if (lt_field_reader_open(f, schema->fields[i], &map, &r, &err) != LT_OK)
			continue;
		if (lt_array_new(schema->fields[i], &a, &err) == LT_OK)
		{
			for (uint64_t start = 0; start < rows; start += 700)
			{
				uint64_t	k = rows - start < 700 ? rows - start : 700;

				if (lt_field_reader_read(r, start, k, a, &err) != LT_OK)
					break;
				lt_array_clear(a);
			}
			lt_array_free(a);
		}
		lt_field_reader_free(r);
	}
	lt_file_close(f);
	lt_store_close(store);
	return 0;
}
