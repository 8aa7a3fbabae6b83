/*
 * lt_txn_create.h — a new dataset (or a new definition of an existing one) committed as one Lance
 * Overwrite, as the Lance engine's create does; implemented in lt_txn_create.c.
 *
 * The caller describes the columns (lt_new_field, pre-order), lt_new_dataset_init gives the
 * schema (field ids assigned depth-first from 0, as Lance does) to write data files with
 * (lt_writer.h), and lt_commit_create commits those files, one fragment each:
 *  - no version yet: version 1, created only if absent (a concurrent create is LT_ECONFLICT);
 *  - a dataset there and overwrite: an Overwrite on top of its newest version (new schema, new
 *    fragments with ids from 0, no indexes), which, as in Lance, wins over concurrent commits;
 *  - a dataset there and not overwrite: LT_EINVALID naming it (the caller checks first; this is
 *    the answer when one appeared since: a concurrent create).
 */
#ifndef LT_TXN_CREATE_H
#define LT_TXN_CREATE_H

#include <stdbool.h>
#include <stddef.h>

#include "io/lt_store.h"
#include "file/lt_writer.h"
#include "txn/lt_txn.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

/* One field of a new schema: parent is the index of its parent in the list (before it), -1 at top level. */
typedef struct lt_new_field
{
	const char *name;
	const char *logical_type;	/* Lance's spelling: "int64", "string", "decimal:128:10:2", "list", "struct", ... */
	bool		nullable;
	int			parent;
} lt_new_field;

typedef struct lt_new_dataset lt_new_dataset;

/* The schema of a new dataset in a storage version ("2.0", "2.1", "2.2"); LT_EINVALID for a bad tree or type. */
lt_code		lt_new_dataset_init(const lt_new_field *fields, int n, const char *storage_version,
								lt_new_dataset **out, lt_error *err);
const lt_schema *lt_new_dataset_schema(const lt_new_dataset *nd);
lt_file_version lt_new_dataset_file_version(const lt_new_dataset *nd);
void		lt_new_dataset_free(lt_new_dataset *nd);

/* Is there a committed version at prefix of store?  (*exists; errors other than "not found" are returned) */
lt_code		lt_dataset_exists(lt_store *store, const char *prefix, bool *exists, lt_error *err);

/*
 * Commit the dataset at prefix of store: its schema, and one fragment per file (files written with
 * the schema's top-level fields, in the new dataset's file version).  result->op is LT_OP_OVERWRITE.
 */
lt_code		lt_commit_create(lt_store *store, const char *prefix, const lt_new_dataset *nd, bool overwrite,
							 size_t n_files, const lt_written_file *files, lt_commit_result *result, lt_error *err);

#endif
