/*
 * convert_write.h — the type mapping, write side (convert_write.c): Datum -> lt_array, with range checks.
 */
#ifndef LT_FDW_CONVERT_WRITE_H
#define LT_FDW_CONVERT_WRITE_H

#include "access/attnum.h"

#include "types/lt_array.h"
#include "types/lt_schema.h"

typedef struct LtWriteConv LtWriteConv;

/*
 * Build the conversion of values of typid/typmod into `field` (what: the column, for messages);
 * NULL (with *why) if impossible.
 */
extern LtWriteConv *lt_wconv_build(const lt_field *field, const char *what, Oid typid, int32 typmod, char **why);
/*
 * Append one value to `a` (an array of the conversion's field), checking its range; a NULL for a
 * field that is not nullable is ERROR 23502. Library allocations go to lt_alloc_target().
 */
extern void lt_wconv_append(const LtWriteConv *c, lt_array *a, Datum value, bool isnull);
/*
 * Append one row: into arrays[k], value att_of_field[k] of values / isnull (0: a NULL), for the
 * n fields; *converting is the attribute being converted (the caller's error context reads it,
 * 0 after).  True when a field's data grew by `limit` bytes or more since since[k].
 */
extern bool lt_wconv_append_row(LtWriteConv *const *conv, lt_array *const *arrays, const AttrNumber *att_of_field,
								int n, const Datum *values, const bool *isnull, AttrNumber *converting,
								const int64 *since, int64 limit);

#endif

