/*
 * lt_txn_schema.h — schema evolution as Lance commits it (implemented in lt_txn_schema.c): a column
 * added as all NULL (a Merge whose fragments are unchanged: no file holds the new field, so every row
 * reads NULL, as Lance's AllNulls column) or with a value in every row (a Merge whose fragments each get
 * one more data file holding the new fields, as Lance's add_columns writes them), optionally tracked for
 * field assignment in the same commit; dropped or renamed (a Project: the new schema, data files
 * untouched; a dropped field's assignment state goes with it, a renamed one keeps it: it is keyed by id).  Field ids stay: the remaining fields keep theirs, new ones take the next free ids.  And an
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
	LT_SCHEMA_RENAME,			/* name -> new_name, a top-level field */
	LT_SCHEMA_ALTER_TYPE		/* name: a top-level scalar field to the type of add[0] (n_add 1) in the same
								 * family (integers, floats, decimals, temporal, strings, binaries, bool), as
								 * Lance's alter_columns casts: the field gets a new id (the next free one),
								 * every fragment a new data file of the cast values (files, required),
								 * files left with no field of the schema are dropped, indexes on the old
								 * field too; a Merge */
} lt_schema_change_kind;

/* ADD: whether the new field's assignment is tracked from the same commit, and its initial state. */
typedef enum lt_schema_track
{
	LT_SCHEMA_TRACK_NONE = 0,
	LT_SCHEMA_TRACK_UNASSIGNED,	/* every existing row unassigned (an empty root) */
	LT_SCHEMA_TRACK_ASSIGNED	/* every existing row assigned (its value or NULL) */
} lt_schema_track;

typedef struct lt_schema_change
{
	lt_schema_change_kind kind;
	const char *name;
	const char *new_name;
	const lt_new_field *add;
	int			n_add;
	/*
	 * ADD with a value: per fragment of the read version, a data file under data/ holding the new fields
	 * (written with lt_schema_change_new_fields' field ids, physical_rows rows).  Empty fragments need none.
	 * A fragment appended since the read version has no file: such a commit is LT_ECONFLICT.
	 */
	size_t		n_files;
	const lt_written_file *files;
	const uint64_t *file_fragments;	/* the fragment id of each file */
	lt_schema_track track;
} lt_schema_change;

/* Whether the change applies to version ds (LT_EINVALID naming the problem, else LT_OK). */
lt_code		lt_schema_change_check(const lt_dataset *ds, const lt_schema_change *c, lt_error *err);

/*
 * ADD (ALTER_TYPE): the new fields (the altered field) with the ids the commit gives them on top of `read`, to
 * write their data files with.  lt_schema_free it.
 */
lt_code		lt_schema_change_new_fields(const lt_dataset *read, const lt_schema_change *c, lt_schema **out,
										lt_error *err);

/*
 * Commit the change on top of `read` (the version it was checked on): rebased over concurrent Append,
 * Delete and CreateIndex commits; anything else committed meanwhile (another schema change, Update,
 * Rewrite, Overwrite, Restore, ...) is LT_ECONFLICT naming the version (an ADD with data files also
 * conflicts with a concurrent Append: the appended fragment would have no value).  result->op is LT_OP_UPDATE_CONFIG.
 */
lt_code		lt_commit_schema_change(lt_dataset *read, const lt_schema_change *c, const lt_commit_options *opts,
									lt_commit_result *result, lt_error *err);

#endif
