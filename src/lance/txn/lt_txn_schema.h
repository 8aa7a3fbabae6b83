/*
 * lt_txn_schema.h — schema evolution as Lance commits it (implemented in lt_txn_schema.c): a column
 * added as all NULL (a Merge whose fragments are unchanged: no file holds the new field, so every row
 * reads NULL, as Lance's AllNulls column), dropped or renamed (a Project: the new schema, data files
 * untouched).  Field ids stay: the remaining fields keep theirs, new ones take the next free ids.  And an
 * index dropped (a CreateIndex that only removes).
 */
#ifndef LT_TXN_SCHEMA_H
#define LT_TXN_SCHEMA_H

#include "table/lt_dataset.h"
#include "txn/lt_txn.h"
#include "txn/lt_txn_create.h"
#include "util/lt_status.h"

typedef enum lt_schema_change_kind
{
	LT_SCHEMA_ADD,				/* add: the fields (pre-order, parents by index; the first at top level), nullable */
	LT_SCHEMA_DROP,				/* name: a top-level field, its children with it; indexes on them dropped */
	LT_SCHEMA_RENAME			/* name -> new_name, a top-level field */
} lt_schema_change_kind;

typedef struct lt_schema_change
{
	lt_schema_change_kind kind;
	const char *name;
	const char *new_name;
	const lt_new_field *add;
	int			n_add;
} lt_schema_change;

/* Whether the change applies to version ds (LT_EINVALID naming the problem, else LT_OK). */
lt_code		lt_schema_change_check(const lt_dataset *ds, const lt_schema_change *c, lt_error *err);

/*
 * Commit the change on top of `read` (the version it was checked on): rebased over concurrent Append,
 * Delete and CreateIndex commits; anything else committed meanwhile (another schema change, Update,
 * Rewrite, Overwrite, Restore, ...) is LT_ECONFLICT naming the version.  result->op is LT_OP_UPDATE_CONFIG.
 */
lt_code		lt_commit_schema_change(lt_dataset *read, const lt_schema_change *c, const lt_commit_options *opts,
									lt_commit_result *result, lt_error *err);

/*
 * Drop every segment of the index `name` (LT_ENOTFOUND when there is none): a CreateIndex commit that
 * only removes, as Lance's drop_index.  Rebased as a schema change is; result->op is LT_OP_CREATE_INDEX.
 */
lt_code		lt_commit_drop_index(lt_dataset *read, const char *name, const lt_commit_options *opts,
								 lt_commit_result *result, lt_error *err);

#endif
