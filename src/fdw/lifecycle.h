/*
 * lifecycle.h — a dataset's life from SQL (lifecycle.c): lt_create_dataset (a new dataset from a
 * foreign table's definition, optionally filled by a query) and lt_compact (small fragments
 * rewritten into big ones), lt_add_column / lt_drop_column / lt_rename_column (schema evolution, the
 * foreign table altered with it), tags and lt_restore, index drop and optimize, each one Lance commit (or tag file) at the
 * transaction's commit.
 */
#ifndef LT_FDW_LIFECYCLE_H
#define LT_FDW_LIFECYCLE_H

#include "fmgr.h"

extern Datum lt_create_dataset(PG_FUNCTION_ARGS);
extern Datum lt_compact(PG_FUNCTION_ARGS);
extern Datum lt_add_column(PG_FUNCTION_ARGS);
extern Datum lt_drop_column(PG_FUNCTION_ARGS);
extern Datum lt_rename_column(PG_FUNCTION_ARGS);
extern Datum lt_create_tag(PG_FUNCTION_ARGS);
extern Datum lt_delete_tag(PG_FUNCTION_ARGS);
extern Datum lt_restore(PG_FUNCTION_ARGS);
extern Datum lt_tags_sql(PG_FUNCTION_ARGS);
extern Datum lt_drop_index(PG_FUNCTION_ARGS);
extern Datum lt_optimize_indexes(PG_FUNCTION_ARGS);
extern Datum lt_table_stats(PG_FUNCTION_ARGS);

#endif
