/*
 * lt_column_sizes.c — the bytes each top-level field of a dataset version takes in its data files, from
 * the files' own column metadata: the sizes of every page's buffers and of the column's buffers (2.x
 * files). What lt_table_stats shows per column, to decide what to compact, drop or re-encode.
 */
#include "table/lt_dataset.h"

#include <string.h>

#include "file/lt_file.h"
#include "proto/lt_file2.pb-c.h"
#include "proto/lt_table.pb-c.h"
#include "util/lt_alloc.h"

/* The index in s->fields of the top-level field holding field id, or -1 (a field the schema no longer has). */
static int
top_level_index(const lt_schema *s, int32_t id)
{
	const lt_field *f = lt_schema_find_id(s, id);

	while (f && f->parent)
		f = f->parent;
	for (int i = 0; f && i < s->n_fields; i++)
		if (s->fields[i] == f)
			return i;
	return -1;
}

static uint64_t
column_bytes(const Lt__Pb__ColumnMetadata *cm)
{
	uint64_t	n = 0;

	for (size_t p = 0; p < cm->n_pages; p++)
		for (size_t b = 0; b < cm->pages[p]->n_buffer_sizes; b++)
			n += cm->pages[p]->buffer_sizes[b];
	for (size_t b = 0; b < cm->n_buffer_sizes; b++)
		n += cm->buffer_sizes[b];
	return n;
}

static lt_code
file_sizes(const lt_dataset *ds, const Lt__Pb__DataFile *d, uint64_t *bytes, bool *complete, lt_error *err)
{
	char	   *rel = lt_asprintf("data/%s", d->path);
	char	   *path = rel ? lt_dataset_file_path(ds, d->has_base_id, d->base_id, rel) : NULL;
	lt_file    *f = NULL;
	lt_code		rc;

	lt_free(rel);
	rc = path ? lt_file_open(ds->store, path, &f, err) : lt_nomem(err);
	lt_free(path);
	if (rc != LT_OK)
		return rc;
	if (f->version == LT_FILE_LEGACY)
		*complete = false;		/* a v1 file has no column metadata */
	for (uint32_t col = 0; rc == LT_OK && f->version != LT_FILE_LEGACY && col < f->num_columns; col++)
	{
		Lt__Pb__ColumnMetadata *cm;
		int			top = -1;

		/* the field whose column this is (the first listed: a struct's own column, or a leaf's) */
		for (size_t k = 0; k < d->n_fields && top < 0; k++)
		{
			int32_t		ci = d->n_column_indices ? d->column_indices[k] : (int32_t) k;

			if (ci >= 0 && (uint32_t) ci == col)
			{
				top = top_level_index(ds->schema, d->fields[k]);
				if (top < 0)
					break;		/* a dropped field's column: no column of this version */
			}
		}
		if (top < 0)
			continue;
		rc = lt_file_column(f, col, &cm, err);
		if (rc == LT_OK)
			bytes[top] += column_bytes(cm);
	}
	lt_file_close(f);
	return rc;
}

lt_code
lt_dataset_column_sizes(const lt_dataset *ds, uint64_t *bytes, bool *complete, lt_error *err)
{
	memset(bytes, 0, sizeof(uint64_t) * (size_t) ds->schema->n_fields);
	*complete = true;
	for (size_t i = 0; i < ds->n_fragments; i++)
		for (size_t j = 0; j < ds->fragments[i]->n_files; j++)
		{
			LT_TRY(lt_check_interrupt(err, "reading the column sizes of the data files"));
			LT_TRY(file_sizes(ds, ds->fragments[i]->files[j], bytes, complete, err));
		}
	return LT_OK;
}
