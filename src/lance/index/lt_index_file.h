/*
 * lt_index_file.h — one index file (a Lance 2.x file with its own schema),
 * read column by column.  Internal to the index readers.
 *
 * Every error names the file; missing columns, wrong types and unreadable
 * pages are LT_ECORRUPT.
 */
#ifndef LT_INDEX_FILE_H
#define LT_INDEX_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "types/lt_array.h"
#include "file/lt_file.h"
#include "util/lt_status.h"

/* Lookup tables (page lookups, bitmap keys, zones) are read whole: bound them. */
#define LT_INDEX_MAX_LOOKUP_ROWS	((uint64_t) 1 << 26)
/* A global buffer (label_list nulls) read whole. */
#define LT_INDEX_MAX_BUFFER			((uint64_t) 1 << 30)

typedef struct lt_index_file
{
	lt_file    *f;
	int			n_map;
	int32_t    *map_ids;		/* file field id -> column index, pre-order */
	int32_t    *map_cols;
} lt_index_file;

lt_code		lt_index_file_open(lt_store *store, const char *path, lt_index_file **out, lt_error *err);
void		lt_index_file_close(lt_index_file *xf);

static inline const char *lt_index_file_path(const lt_index_file *xf) { return xf->f->path; }
static inline uint64_t lt_index_file_rows(const lt_index_file *xf) { return xf->f->num_rows; }

/*
 * The top-level field `name`; LT_ECORRUPT when absent or (type >= 0) not of
 * that type.  type -1 accepts any type.
 */
lt_code		lt_index_file_field(lt_index_file *xf, const char *name, int type, const lt_field **out,
								lt_error *err);
/* The same for a column of fixed_size_list<elem, size> (vectors, PQ / SQ / RaBitQ codes); else LT_ECORRUPT. */
lt_code		lt_index_file_fixed_list(lt_index_file *xf, const char *name, lt_type_id elem, uint32_t size,
									 const lt_field **out, lt_error *err);

/* A reader of a top-level field (free with lt_field_reader_free). */
lt_code		lt_index_file_reader(lt_index_file *xf, const lt_field *field, lt_field_reader **out, lt_error *err);

/* Rows [start, start + n) of a field into a fresh array (at most LT_INDEX_MAX_LOOKUP_ROWS). */
lt_code		lt_index_file_read(lt_index_file *xf, const lt_field *field, uint64_t start, uint64_t n,
							   lt_array **out, lt_error *err);

/* Schema metadata value (not NUL-terminated: *len), or NULL. */
const uint8_t *lt_index_file_meta(const lt_index_file *xf, const char *key, size_t *len);

/* Global buffer i, lt_malloc'd. */
lt_code		lt_index_file_global_buffer(lt_index_file *xf, uint64_t i, uint8_t **out, size_t *len,
										lt_error *err);

#endif
