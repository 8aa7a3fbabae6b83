/*
 * Fuzz target: whole data files of any version, through the container and
 * every field reader (all page decoders), reading every row in batches.
 */
#include <stddef.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "file/lt_file.h"

#define MAX_ROWS 50000

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_store   *store;
	lt_file    *f;
	lt_error	err;
	int32_t    *ids, *cols;
	int			n = 0;
	const lt_schema *s;

	if (lt_store_mem_open(&store, &err) != LT_OK)
		return 0;
	if (lt_store_mem_put(store, "f.lance", data, size, &err) != LT_OK ||
		lt_file_open(store, "f.lance", &f, &err) != LT_OK)
	{
		lt_store_close(store);
		return 0;
	}
	s = f->file_schema;
	if (!s)
	{
		lt_file_close(f);
		lt_store_close(store);
		return 0;
	}
	/* columns in pre-order: every field in 2.0, leaves only in 2.1+ */
	ids = lt_calloc(s->n_all + 1, sizeof(int32_t));
	cols = lt_calloc(s->n_all + 1, sizeof(int32_t));
	for (int i = 0; ids && cols && i < s->n_all; i++)
	{
		const lt_field *fl = s->all[i];

		if (fl->id < 0)
			continue;
		if (f->version == LT_FILE_V2_0 || lt_field_is_leaf(fl))
		{
			ids[n] = fl->id;
			cols[n] = n;
			n++;
		}
	}
	for (int i = 0; ids && cols && i < s->n_fields; i++)
	{
		lt_column_map map = {n, ids, cols};
		lt_field_reader *r;
		lt_array   *a;
		uint64_t	rows = f->num_rows < MAX_ROWS ? f->num_rows : MAX_ROWS;

		if (lt_field_reader_open(f, s->fields[i], &map, &r, &err) != LT_OK)
			continue;
		r->num_rows = f->num_rows;
		if (lt_array_new(s->fields[i], &a, &err) == LT_OK)
		{
			for (uint64_t start = 0; start < rows; start += 1000)
			{
				uint64_t	k = rows - start < 1000 ? rows - start : 1000;

				if (lt_field_reader_read(r, start, k, a, &err) != LT_OK)
					break;
				lt_array_clear(a);
			}
			lt_array_free(a);
		}
		lt_field_reader_free(r);
	}
	lt_free(ids);
	lt_free(cols);
	lt_file_close(f);
	lt_store_close(store);
	return 0;
}
