/*
 * lt_json_read.h — parse rows in the JSON form of `lt-inspect scan` (lt_json.h)
 * into lt_arrays, for `lt-inspect append --jsonl`.
 */
#ifndef LT_JSON_READ_H
#define LT_JSON_READ_H

#include <stddef.h>

#include "types/lt_array.h"

/*
 * Append the row in line[0, len) (one JSON object keyed by column name; a
 * missing column is null) to cols[i], arrays of the top-level fields[i].
 * A partially appended row on error leaves the arrays unusable.
 */
lt_code		lt_json_row_append(const char *line, size_t len, int n, const lt_field *const *fields,
							   lt_array *const *cols, lt_error *err);

#endif
