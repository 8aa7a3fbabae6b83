/*
 * lt_fdw.h — declarations shared by the files of the Postgres glue (src/fdw/).
 *
 *   lt_fdw.c    the handler (entry point) and module initialisation
 *   option.c    the option table, the validator, option lookup, the local-file privilege rule
 *   dataset.c   library allocations in memory contexts, lt_code -> SQLSTATE, version resolution
 *               (snapshots), the per-backend cache of opened datasets
 *   convert.c   the type mapping: checks of declared columns against fields, lt_array slot -> Datum
 *   quals.c     WHERE quals -> the library's filter IR (classification at plan time, the filter at
 *               execution), parameters
 *   scan.c      planning and executing a foreign scan (serial and parallel)
 *   explain.c   EXPLAIN output
 *   import.c    IMPORT FOREIGN SCHEMA
 *   analyze.c   ANALYZE: a uniform sample of live rows read by random access; lt_last_analyze()
 *   convert_write.c  Datum -> lt_array: the write side of the type mapping, with range checks
 *   modify.c    INSERT / UPDATE / DELETE / COPY FROM: row identity, column builders, data files
 *   xact.c      one lt_txn per modified dataset per transaction: savepoints, own writes, commit
 *   index_build.c  lt_create_index(): build now, CreateIndex commit at PRE_COMMIT
 *   index.c     scalar indexes in scans (lookups per (re)scan), index costing, EXPLAIN lines, lt_indexes()
 *   overwrite.c INSERT OVERWRITE … WHERE: predicate binding, delete set, validation, commit check
 *   merge.c     lt_merge_insert(): upsert (Lance's merge-insert) as one commit; TRUNCATE
 */
#ifndef LT_FDW_H
#define LT_FDW_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "commands/explain.h"
#include "fmgr.h"
#include "access/parallel.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/pg_list.h"
#include "utils/rel.h"

#include "types/lt_array.h"
#include "table/lt_dataset.h"
#include "table/lt_filter.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"
#include "io/lt_store.h"

/* lt_fdw.c: ERROR (42809) unless relid is a foreign table of lt_fdw; fn names the caller */
extern void lt_check_lt_table(Oid relid, const char *fn);

/* ---- option.c ------------------------------------------------------------------------------- */

/* Where an s3:// server's objects are and the credentials of the current user (store.c). */
typedef struct LtS3Location
{
	char	   *endpoint;		/* NULL: AWS */
	char	   *region;
	bool		path_style;
	bool		allow_http;
	char	   *access_key_id;	/* NULL: unsigned requests */
	char	   *secret_access_key;	/* never printed */
	char	   *session_token;
	bool		ambient;		/* the server process's own credentials (superuser / credentials_required off) */
	char	   *identity;		/* endpoint, region and key id: part of cache keys */
} LtS3Location;

/* The options of one foreign table, merged with its server's. */
typedef struct LtTableOptions
{
	char	   *server_name;
	char	   *root;			/* server root as a local directory (file:// stripped) or an s3:// URI, or NULL */
	char	   *path;			/* table path option as given, or NULL */
	char	   *dataset_dir;	/* the resolved location: a local directory or an s3:// URI */
	char	   *uri;			/* file:// or s3:// URI for messages and EXPLAIN */
	LtS3Location *s3;			/* the S3 endpoint and credentials when dataset_dir is s3://, else NULL */
	uint64		version;		/* 0 = not pinned */
	char	   *tag;			/* NULL = not pinned */
} LtTableOptions;

extern void lt_get_table_options(Oid relid, LtTableOptions *opts);
/* The dataset field name of a column: its column_name option, else its attname. */
extern char *lt_column_field_name(Oid relid, AttrNumber attnum, const char *attname);
/* The local-file privilege rule: superuser or pg_read_server_files, for userid. */
extern void lt_check_read_privilege(Oid userid, const char *relname, const char *uri);
/* The write rule: superuser or pg_write_server_files, for userid. */
extern void lt_check_write_privilege(Oid userid, const char *relname, const char *uri);
/* Write options of a foreign table (table option, else server option, else the default). */
extern int	lt_option_batch_size(Oid relid);
extern int64 lt_option_max_rows_per_file(Oid relid);
/* "file:///x" or "/x" -> "/x"; errors for s3:// and other schemes. */
extern char *lt_local_path_from_uri(const char *value, const char *option);
/* A local path as lt_local_path_from_uri, or a checked and normalised s3:// URI. */
extern char *lt_location_from_uri(const char *value, const char *option);

/* ---- store.c -------------------------------------------------------------------------------- */

extern bool lt_is_s3_uri(const char *value);
extern void lt_store_init(void);	/* the S3 backend's interrupt check */
/* The endpoint of an s3:// server and the credentials of userid (ERROR 28000 when required and missing). */
extern LtS3Location *lt_s3_location(ForeignServer *server, Oid userid);
/* A copy in CurrentMemoryContext (NULL for NULL), for state that outlives the statement. */
extern LtS3Location *lt_s3_location_copy(const LtS3Location *s3);
/* Open the store of a location: a local directory, or an s3:// URI through s3 (may be NULL for local). */
extern lt_code lt_open_store(const LtS3Location *s3, const char *dir, lt_store **out, lt_error *err);

/* ---- dataset.c ------------------------------------------------------------------------------ */

/* Route library allocations: returns the previous target. */
extern MemoryContext lt_alloc_target(MemoryContext cxt);
extern void lt_alloc_init(void);
extern void lt_dataset_init(void);	/* GUC lt_fdw.leader_versions (parallel workers) */
/* An allocator for library objects that allocate in cxt whatever the current target (lt_bufpool) */
struct lt_allocator;
extern void lt_allocator_in(MemoryContext cxt, struct lt_allocator *out);

/* ereport(ERROR) for a failed library call; `what` names the dataset/table. */
extern void lt_report(const lt_error *err, const char *what) pg_attribute_noreturn();
/* The same for a failed write ("writing ..." in the context). */
extern void lt_report_write(const lt_error *err, const char *what) pg_attribute_noreturn();

/* An opened dataset at one version, held by the per-backend cache. */
typedef struct LtDatasetEntry
{
	char	   *dir;			/* key: dataset directory ... */
	char	   *identity;		/* ... the credentials it was read with (S3; "" for local) ... */
	uint64		version;		/* ... and version */
	MemoryContext cxt;			/* every library allocation of store + dataset */
	lt_store   *store;
	lt_dataset *ds;
	int			pins;			/* scans using it now; pinned entries are never evicted */
	uint64		last_used;
	uint64		live_rows;
	struct lt_index_planner *planner;	/* index.c: the version's index readers, kept across scans */
} LtDatasetEntry;

/*
 * Resolve the version a statement reads (snapshot rules: pinned by option, per transaction in
 * REPEATABLE READ/SERIALIZABLE, per statement in READ COMMITTED) and return the cached dataset,
 * pinned when `pin` (release with lt_dataset_unpin).
 */
extern LtDatasetEntry *lt_dataset_acquire(Oid relid, const LtTableOptions *opts, bool pin);
extern void lt_dataset_unpin(LtDatasetEntry *entry);
extern LtDatasetEntry *lt_dataset_open_latest(const LtS3Location *s3, const char *dir, const char *what);
/* A parallel worker: the version the leader resolved (pinned; release with lt_dataset_unpin). */
extern LtDatasetEntry *lt_dataset_acquire_version(Oid relid, const LtTableOptions *opts, uint64 version);

/* ---- convert.c ------------------------------------------------------------------------------ */

typedef enum LtConvKind
{
	LT_CONV_SCALAR,				/* the natural mapping of a scalar field */
	LT_CONV_TEXT,				/* any scalar into text, through the natural type's output */
	LT_CONV_ARRAY,				/* list / large_list / fixed_size_list of a scalar -> T[] */
	LT_CONV_COMPOSITE,			/* struct -> composite */
	LT_CONV_JSONB				/* anything -> jsonb */
} LtConvKind;

typedef struct LtConv
{
	LtConvKind	kind;
	const lt_field *field;
	Oid			typid;			/* the declared (target) type */
	int32		typmod;
	Oid			natural;		/* LT_CONV_TEXT: the natural type of the field */
	FmgrInfo	outfn;			/* LT_CONV_TEXT: its output function */
	/* LT_CONV_ARRAY */
	struct LtConv *elem;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	/* LT_CONV_COMPOSITE */
	TupleDesc	tupdesc;
	int		   *child_index;	/* per attribute: struct child index, -1 for a dropped attribute */
	struct LtConv **children;
} LtConv;

/* Build the conversion of `field` into a column of type typid/typmod; NULL (with *why) if impossible. */
extern LtConv *lt_conv_build(const lt_field *field, Oid typid, int32 typmod, char **why);
extern Datum lt_conv_datum(const LtConv *conv, const lt_array *a, int64 i, bool *isnull);
/*
 * Batch conversion (scan.c): lt_conv_batchable tells whether a conversion has a batch loop;
 * lt_conv_batch converts slots [start, start + n) of `a` (NULL: all null) into values[k * stride] /
 * nulls[k * stride], k = 0 .. n-1, in CurrentMemoryContext (the strings or binary values of a call in
 * one block), and returns how many it converted: n, or the index of the first slot it cannot convert
 * (lt_conv_datum raises that slot's error).
 */
extern bool lt_conv_batchable(const LtConv *conv);
extern int	lt_conv_batch(const LtConv *conv, const lt_array *a, int64 start, int n, Datum *values, bool *nulls,
						  int stride);
/* The Postgres type a field maps to by default (InvalidOid when none); *typmod gets its typmod. */
extern Oid	lt_natural_type(const lt_field *field, int32 *typmod);
/* SQL text of the type for IMPORT (composite types need their name); NULL when unsupported. */
extern char *lt_type_sql(const lt_field *field);

/* ---- convert_write.c ------------------------------------------------------------------------ */

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

/* keys.c: the primary key of a keyed table, checked for each written row */
typedef struct LtKeyCheck LtKeyCheck;
struct LtXactTable;
/* NULL when the dataset has no primary key; fields/att_of_field/conv as the modify state's */
extern LtKeyCheck *lt_keys_begin(Relation rel, const char *uri, struct LtXactTable *xt, const lt_dataset *ds, int n_fields,
								 const lt_field *const *fields, const AttrNumber *att_of_field,
								 LtWriteConv *const *conv, bool is_update, bool skip_existing);
/* true: write the row; false: skip it (ON CONFLICT DO NOTHING); ERROR 23505 / 23502 otherwise.
 * old_addr: UPDATE, the address of the row it replaces (UINT64_MAX for an INSERT) */
extern bool lt_keys_check_row(LtKeyCheck *kc, TupleTableSlot *slot, uint64 old_addr);
extern void lt_keys_end(LtKeyCheck *kc);
struct ExplainState;
extern void lt_keys_explain(LtKeyCheck *kc, struct ExplainState *es);	/* EXPLAIN ANALYZE */
/* xact.c's PRE_COMMIT: the pending lt_set_primary_key of the dataset, as one UpdateConfig commit */
extern void lt_keys_commit(struct LtXactTable *xt);


/* ---- xact.c --------------------------------------------------------------------------------- */

struct lt_txn;
struct lt_written_file;

/* An index lt_create_index built, its files written, waiting for the commit (index_build.c). */
typedef struct LtPendingIndex
{
	SubTransactionId subid;		/* the subtransaction that built it */
	uint64		version;		/* built on */
	struct lt_built_index *built;	/* in the state's meta_cxt */
} LtPendingIndex;

/* A primary key lt_set_primary_key checked, waiting for the commit (keys.c). */
typedef struct LtPendingKey
{
	SubTransactionId subid;
	uint64		version;		/* checked at */
	int			n;
	int32	   *field_ids;		/* in key order */
} LtPendingKey;

/*
 * What one Postgres transaction does to one dataset: either row changes — an lt_txn on the version
 * it first read, and the changes of the statements not yet handed to it (they are applied when a
 * later statement scans the dataset, at a savepoint boundary that needs it, or at commit) — or
 * metadata changes (indexes built, a primary key set), each its own kind of Lance commit that
 * cannot carry row changes.  Both in one transaction are refused, at the call or at commit.
 */
typedef struct LtXactTable
{
	char	   *dir;			/* dataset directory (the key) */
	char	   *uri;
	char	   *relname;		/* the foreign table that started it (messages) */
	MemoryContext cxt;			/* the transaction's allocations for this dataset */
	/* metadata changes, allocated in meta_cxt (a child of cxt) */
	MemoryContext meta_cxt;
	LtS3Location *s3;			/* where the metadata commits open the dataset (NULL: local) */
	List	   *pending_indexes;	/* of LtPendingIndex, oldest first */
	LtPendingKey *pending_key;
	/* row changes: none while txn is NULL */
	LtDatasetEntry *base;		/* the read version (cache entry, pinned for the transaction) */
	struct lt_txn *txn;
	SubTransactionId created_subid;	/* of the first row change */
	/* changes not yet in txn */
	int			n_files,
				cap_files;
	struct LtPendingFile *files;
	int64		n_addrs,
				cap_addrs;
	uint64	   *addrs;			/* row addresses to delete */
	int			n_removes,
				cap_removes;
	uint64	   *removes;		/* fragments to remove by id */
	List	   *overwrite_checks;	/* LtOverwriteCheck of the replaces made (overwrite.c) */
	bool		inserted;		/* an INSERT or COPY wrote to the dataset in this transaction */
	List	   *savepoints;		/* of LtSavepoint, oldest first (xact.c) */
	bool		rollback_due;	/* a ROLLBACK TO waits for the view to be released */
	uint64		rollback_mark;
	LtDatasetEntry *view;		/* the newest own-writes view handed to scans, or NULL */
	bool		view_stale;		/* txn changed since the view was taken */
	List	   *views;			/* every view entry handed out (an open cursor keeps reading its own) */
	struct lt_key_filter *inserted_keys;	/* keyed table: every key the transaction wrote (keys.c) */
} LtXactTable;

extern void lt_xact_init(void);
/* The transaction's state for row changes to the dataset of a foreign table, created on first use. */
extern LtXactTable *lt_xact_table(Relation rel, const LtTableOptions *opts);
/*
 * The state for a metadata change (index: lt_create_index, else lt_set_primary_key) of the dataset
 * of foreign table relname, created on first use; ERROR 0A000 when the transaction has changed its rows.
 */
extern LtXactTable *lt_xact_meta_table(const char *relname, const LtTableOptions *opts, bool index);
/* Hand a finished data file (copied) and, for moved rows, their row ids (num_rows of them, or NULL). */
extern void lt_xact_add_file(LtXactTable *xt, const struct lt_written_file *wf, const uint64 *row_ids);
/* Hand row addresses to delete (any order, duplicates allowed). */
extern void lt_xact_delete(LtXactTable *xt, const uint64 *addrs, int64 n);
/* Remove a fragment of the transaction's view by id (every row), without reading it. */
extern void lt_xact_remove_fragment(LtXactTable *xt, uint64 fragment_id);
/* TRUNCATE (merge.c): everything so far is gone, one Overwrite at commit (keep_indexes: their definitions, covering nothing). */
extern void lt_xact_replace_all(LtXactTable *xt, bool keep_indexes);
/* A replace's predicate to test against concurrently appended fragments at commit (copied into the state's context by the caller). */
typedef struct LtOverwriteCheck LtOverwriteCheck;
extern void lt_xact_add_overwrite_check(LtXactTable *xt, LtOverwriteCheck *check);
/*
 * For scans: the entry of the transaction's own-writes view of the dataset in dir, or NULL when
 * this transaction has not modified it. Pinned when pin (release with lt_dataset_unpin).
 */
extern LtDatasetEntry *lt_xact_view(const char *dir, bool pin);
/* Is the entry a transaction's own-writes view (not a committed version)? */
extern bool lt_xact_is_view(const LtDatasetEntry *e);

/* ---- modify.c ------------------------------------------------------------------------------- */

extern void ltAddForeignUpdateTargets(PlannerInfo *root, Index rtindex, RangeTblEntry *target_rte,
									  Relation target_relation);
extern List *ltPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation, int subplan_index);
extern void ltBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo, List *fdw_private,
								 int subplan_index, int eflags);
extern TupleTableSlot *ltExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
										   TupleTableSlot *planSlot);
extern TupleTableSlot **ltExecForeignBatchInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot **slots,
												 TupleTableSlot **planSlots, int *numSlots);
extern int	ltGetForeignModifyBatchSize(ResultRelInfo *rinfo);
extern TupleTableSlot *ltExecForeignUpdate(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
										   TupleTableSlot *planSlot);
extern TupleTableSlot *ltExecForeignDelete(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
										   TupleTableSlot *planSlot);
extern void ltEndForeignModify(EState *estate, ResultRelInfo *rinfo);
extern void ltBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern void ltEndForeignInsert(EState *estate, ResultRelInfo *rinfo);
extern int	ltIsForeignRelUpdatable(Relation rel);
extern void ltExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs);	/* merge.c */
extern void lt_merge_init(void);	/* merge.c: GUC lt_fdw.merge_insert_fast_path */
extern void ltExplainForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo, List *fdw_private,
								   int subplan_index, ExplainState *es);

/*
 * Rows written into a dataset outside a ModifyTable (merge.c): the builders, data files and
 * transaction of an INSERT / UPDATE. moved_from (or NULL): on a dataset with stable row ids the
 * rows moved from old_addr of that version keep their row ids. A keyed table's check (keys.c)
 * sees the rows with check_key: old_addr is the row it replaces, UINT64_MAX for a new row (whose key
 * also goes into the transaction's inserted-keys filter); share_keys (or NULL) is a writer of the
 * same statement whose key set this one shares.
 */
typedef struct LtModifyState LtRowWriter;
extern LtRowWriter *lt_row_writer_begin(Relation rel, Oid userid, LtDatasetEntry *moved_from, LtRowWriter *share_keys);
extern void lt_row_writer_append(LtRowWriter *w, TupleTableSlot *slot, uint64 old_addr, bool check_key);
/* Flush and hand the last file to the transaction: rows and files written in total. */
extern void lt_row_writer_end(LtRowWriter *w, uint64 *rows, uint64 *files);
/* A scan's row identity (ctid, see below) as the row address in the version `entry`. */
extern uint64 lt_row_identity_address(const LtDatasetEntry *entry, ItemPointer tid, const char *uri);
/* ERROR 55000 for a table pinned by `version` / `tag`. */
extern void lt_check_writable(Relation rel, const LtTableOptions *opts);
/* lt_xact_table for a write (doing: "write", "truncate"): ERROR 0A000 for a dataset of the legacy storage format. */
extern LtXactTable *lt_write_xact_table(Relation rel, const LtTableOptions *opts, const char *doing);

/*
 * Row identity of UPDATE / DELETE: AddForeignUpdateTargets asks for ctid, which the scan fills with
 * the row's offset (block number) and 1 + its fragment's index in the version's fragment list
 * (offset number); modify.c maps it back to a row address through the same version.
 */
extern bool lt_scan_wants_row_identity(PlannerInfo *root, RelOptInfo *baserel);

/* ---- overwrite.c ---------------------------------------------------------------------------- */
/* The query text of lt_insert_overwrite / lt_merge_insert: one SELECT or VALUES (42601), trailing ";" cut. */
extern char *lt_check_select_query(char *query, const char *fn);

extern char *lt_overwrite_where;	/* GUC lt_fdw.overwrite_where ('' = INSERT appends) */
extern bool lt_overwrite_validate;	/* GUC lt_fdw.overwrite_validate */
extern void lt_overwrite_init(void);
/* Is lt_fdw.overwrite_where set (an INSERT then replaces)? */
extern bool lt_overwrite_active(void);

/* A replace predicate bound to its target table. */
typedef struct LtOverwritePred
{
	char	   *text;			/* as given */
	Expr	   *expr;			/* boolean, Vars of varno 1 over the table's columns, constants folded */
	List	   *attnums;		/* the columns it reads (integers) */
	ExprState  *state;			/* validation of new rows (built on first use) */
	ExprContext *econtext;
} LtOverwritePred;

/* The delete set of a replace over the version it reads. */
typedef struct LtOverwritePlan
{
	uint64		version;
	const char *filter;			/* the part of the predicate the reader evaluates, or NULL */
	bool		local_check;	/* Postgres checks (part of) the predicate on the rows read */
	int64		fragments_total;
	int64		fragments_scanned;
	int64		rows_scanned;
	int64		fragments_removed;	/* every live row matched: removed by id */
	int64		fragments_metadata_only;	/* of those, proved from index metadata without a read */
	int64		fragments_updated;	/* some rows matched: a new deletion vector */
	int64		fragments_pruned;	/* index data proved no row matches */
	int64		fragments_by_index;	/* index data named exactly the matching rows (no read) */
	int64		rows_deleted;
	char	   *indexes;		/* the index lookups made ("name (kind) for predicate", ...), or NULL */
} LtOverwritePlan;

/* What the last replace of this backend did (lt_insert_overwrite's result; modify.c fills it). */
typedef struct LtOverwriteStats
{
	bool		valid;
	Oid			relid;
	int64		rows_deleted, rows_inserted, fragments_removed, fragments_updated, fragments_added;
} LtOverwriteStats;
extern LtOverwriteStats lt_overwrite_last;

/* A replace's predicate kept by the transaction for the commit's check (xact.c). */
struct LtOverwriteCheck
{
	SubTransactionId subid;
	Oid			relid;
	char	   *predicate;
	Expr	   *expr;
	List	   *attnums;
	bool		delete_only;	/* a DELETE's predicate: checked only when the transaction also inserts */
};

/*
 * The DELETE+INSERT spelling of a replace: at planning, the predicate of a DELETE whose WHERE the
 * scan evaluates entirely (no local quals, no join, no parameter) as the plan's fdw_private; at
 * execution it becomes a check of the transaction, applied at commit when the transaction also
 * inserted into the dataset.
 */
extern List *lt_overwrite_delete_predicate(PlannerInfo *root, Index rtindex, Oid relid);
extern void lt_overwrite_register_delete(struct LtXactTable *xt, Relation rel, List *fdw_private);

/* Parse and bind the predicate against rel (errors before anything is written). */
extern LtOverwritePred *lt_overwrite_bind(Relation rel, const char *text);
/*
 * The delete set over the version the transaction reads (its own writes included); with xt, the
 * deletes and removals are handed to it, else (EXPLAIN) only counted.
 */
extern void lt_overwrite_plan(Relation rel, const LtTableOptions *opts, LtXactTable *xt, LtOverwritePred *pred,
							  LtOverwritePlan *plan);
/* ERROR 44000 unless the new row in slot (row number rowno of the statement) satisfies p. */
extern void lt_overwrite_validate_row(LtOverwritePred *p, Relation rel, TupleTableSlot *slot, uint64 rowno);
/* Keep the predicate with the transaction for the commit's check of concurrent appends. */
extern void lt_overwrite_register(LtXactTable *xt, Relation rel, LtOverwritePred *pred);
/* lt_txn's lt_new_fragment_check for a transaction with replaces (arg: its LtXactTable). */
struct Lt__Pb__DataFragment;
extern lt_code lt_overwrite_check_fragment(void *arg, lt_dataset *v, const struct Lt__Pb__DataFragment *frag,
										   lt_error *err);
extern void lt_overwrite_explain(const LtOverwritePred *pred, const LtOverwritePlan *plan, bool validate,
								 ExplainState *es);

/* ---- quals.c -------------------------------------------------------------------------------- */

/* GUC lt_fdw.enable_filter_pushdown (default on): off keeps every qual local. */
extern bool lt_enable_filter_pushdown;
extern void lt_quals_init(void);

/*
 * What planning learned about a foreign base relation (baserel->fdw_private, set by
 * ltGetForeignRelSize). remote_conds / local_conds partition baserel->baserestrictinfo
 * (RestrictInfos), as postgres_fdw's PgFdwRelationInfo does.
 */
typedef struct LtPlanState
{
	LtTableOptions opts;
	Oid			relid;
	uint64		version;		/* the version planning looked at */
	uint64		live_rows;
	uint64		n_fragments;
	double		tuples;
	List	   *remote_conds;	/* translated exactly into the filter IR */
	List	   *local_conds;	/* checked by Postgres */
	Selectivity remote_sel;		/* clauselist_selectivity of remote_conds */
	/* index.c: attnums of columns with a usable scalar index, rows those indexes do not cover */
	Bitmapset  *indexed_attrs;
	Bitmapset  *label_attrs;	/* list columns with a label_list index (array @> / && quals) */
	double		unindexed_frac;
	double	   *index_rows_per_value;	/* by attnum, before ANALYZE: rows per distinct key (0: unknown) */
} LtPlanState;

/*
 * Split `conds` (RestrictInfos of baserel, a foreign table of lt_fdw whose fdw_private is an
 * LtPlanState) into the ones the filter IR evaluates exactly (*remote) and the rest (*local).
 * The translation is tried against the schema of the version planning saw, exactly as
 * ltfdw_build_filter does it at execution. With lt_fdw.enable_filter_pushdown off everything is
 * local.
 */
extern void ltfdw_classify_conds(PlannerInfo *root, RelOptInfo *baserel, List *conds,
								 List **remote, List **local);
/* Is one clause (a bare expression, not a RestrictInfo) translatable for baserel? */
extern bool ltfdw_is_remote_expr(PlannerInfo *root, RelOptInfo *baserel, Expr *expr);

/* The executor's view of the pushed quals of one scan (quals.c; fields are internal). */
typedef struct LtFdwFilter LtFdwFilter;

/*
 * Prepare the filter of remote_exprs (bare expressions, e.g. the ForeignScan's fdw_exprs, with
 * Vars of scanrelid) over `schema`, the schema of the version the scan reads. `ps` is the plan
 * state the parameters' and local checks' ExprStates belong to. An expression this version's
 * schema cannot take (the schema changed since planning) is checked locally instead.
 */
extern LtFdwFilter *ltfdw_build_filter(Relation rel, Index scanrelid, const lt_schema *schema,
									   List *remote_exprs, PlanState *ps);
/*
 * Evaluate the parameters in econtext: call at the start of every (re)scan. When a value cannot
 * be given to the filter exactly (numeric NaN, more than 38 digits), this scan falls back to
 * checking every remote expression locally. Returns whether the filter is used.
 */
extern bool ltfdw_filter_set_params(LtFdwFilter *lf, ExprContext *econtext);
/*
 * A new lt_filter for one scanner (lt_scan_options.filter), or NULL when nothing is pushed. It is
 * allocated by the library in the current lt_alloc_target(), which must be the scanner's
 * context: the filter allocates scratch while it evaluates, so it lives and dies with the scanner.
 */
extern lt_filter *ltfdw_filter_for_scan(LtFdwFilter *lf);
/* Local checks still due on the row in econtext's scan tuple (untranslated exprs, fallback). */
extern bool ltfdw_filter_local_check(LtFdwFilter *lf, ExprContext *econtext);
/* Whether the filter has parameters (they must be evaluated before it is used) */
extern bool ltfdw_filter_has_params(LtFdwFilter *lf);
/* Whether ltfdw_filter_local_check has anything to check (after ltfdw_filter_set_params) */
extern bool ltfdw_filter_needs_local_check(LtFdwFilter *lf);
/* The pushed filter as text for EXPLAIN, or NULL when nothing is pushed. */
extern const char *ltfdw_filter_text(LtFdwFilter *lf);

/* ---- scan.c / explain.c / import.c / analyze.c ---------------------------------------------------------- */

extern void ltGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern void ltGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern ForeignScan *ltGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
									 ForeignPath *best_path, List *tlist, List *scan_clauses,
									 Plan *outer_plan);
extern void ltBeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *ltIterateForeignScan(ForeignScanState *node);
extern void ltReScanForeignScan(ForeignScanState *node);
extern void ltEndForeignScan(ForeignScanState *node);
extern void ltExplainForeignScan(ForeignScanState *node, ExplainState *es);
extern bool ltIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte);
extern Size ltEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt);
extern void ltInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate);
extern void ltReInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate);
extern void ltInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc, void *coordinate);
extern void ltShutdownForeignScan(ForeignScanState *node);
extern List *ltImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid);

/* ---- upper.c -------------------------------------------------------------------------------- */

extern void lt_upper_init(void);	/* GUC lt_fdw.enable_aggregate_pushdown */
extern void ltGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
								   RelOptInfo *output_rel, void *extra);
/* The handler's scan entry points: aggregate scans are run by upper.c, the others by scan.c. */
extern ForeignScan *lt_upper_GetForeignPlan(PlannerInfo *root, RelOptInfo *foreignrel, Oid foreigntableid,
											ForeignPath *best_path, List *tlist, List *scan_clauses,
											Plan *outer_plan);
extern void lt_upper_BeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *lt_upper_IterateForeignScan(ForeignScanState *node);
extern void lt_upper_ReScanForeignScan(ForeignScanState *node);
extern void lt_upper_EndForeignScan(ForeignScanState *node);
extern void lt_upper_ExplainForeignScan(ForeignScanState *node, ExplainState *es);
extern bool ltAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func,
								  BlockNumber *totalpages);

/* The executor state of a scan, shared by scan.c and explain.c. */
typedef enum LtColumnKind
{
	LT_COL_FIELD,
	LT_COL_ROWID,
	LT_COL_ROWADDR
} LtColumnKind;

typedef struct LtScanColumn
{
	AttrNumber	attnum;
	LtColumnKind kind;
	int			proj;			/* LT_COL_FIELD: index into the projection */
	LtConv	   *conv;
	const char *attname;
	bool		batch;			/* LT_COL_FIELD: converted by lt_conv_batch */
} LtScanColumn;

/* A foreign table's columns bound to the fields of one dataset version: what scans and samples read. */
typedef struct LtColumnBinding
{
	int			n_columns;
	LtScanColumn *columns;
	int			n_proj;			/* the projection handed to the fragment scanner */
	const lt_field **proj;
	bool		want_row_ids;
} LtColumnBinding;

/*
 * Check every column of rel against the dataset version (HV007 / HV004 / 42804 errors naming both) and
 * bind the columns the query reads: those in `retrieved`, or all of them when all_columns.
 */
extern void ltfdw_bind_columns(Relation rel, const LtTableOptions *opts, const LtDatasetEntry *entry,
							   List *retrieved, bool all_columns, LtColumnBinding *out);

typedef struct LtScanState
{
	Relation	rel;
	LtTableOptions opts;
	LtDatasetEntry *entry;
	LtColumnBinding cols;
	/* the same without the columns only pushed quals read (qual_only), for rows an index proved */
	LtColumnBinding lean;
	List	   *qual_only;
	const LtColumnBinding *cur;	/* the binding of the open fragment's scanner */

	/* pushed quals (quals.c) */
	LtFdwFilter *filter;
	/* index lookups of this scan (index.c), NULL until the first one */
	struct LtScanIndex *index;

	/* UPDATE / DELETE: each row's identity goes in the slot's ctid (modify.c) */
	bool		row_identity;
	bool		params_due;		/* the filter's parameters are to be evaluated at the next row */
	size_t		identity_index;	/* the fragment index of the last row */

	/* parallel scans: units of work (a fragment, or a row range of a big one) claimed from DSM */
	struct LtParallelState *pstate;
	int			n_units;
	struct LtScanUnit *units;
	bool		scanning_range;	/* the open scanner reads a row range (parallel unit) */

	/* iteration */
	size_t		next_fragment;
	size_t		prefetched_to;	/* fragments before this one had their files prefetched (remote stores) */
	struct lt_fragment_scanner *scanner;
	struct lt_batch *batch;
	int64		batch_row;		/* the next row of the batch to return */
	MemoryContext lib_cxt;		/* the scanner's library allocations */
	struct lt_bufpool *bufpool;	/* page I/O buffers, kept from one fragment to the next */
	const LtScanColumn *converting;	/* for the error context */
	uint64		converting_addr;

	/*
	 * Rows are converted a chunk of a batch at a time into a row-major matrix of natts Datums (and
	 * nulls) per row; the scan slot's tts_values / tts_isnull point at the row returned. A chunk's
	 * by-reference values live in chunk_cxt (and the columns' blocks) until the next chunk.
	 */
	MemoryContext chunk_cxt;
	int			natts;
	int			chunk_cap;		/* rows of the matrix */
	Datum	   *chunk_values;	/* chunk_cap * natts */
	bool	   *chunk_nulls;
	int64		chunk_start;	/* batch row of the matrix's first row */
	int			chunk_len;
	int			chunk_next;		/* rows of the next chunk (grows from a small first chunk) */
	bool		local_check;	/* the filter has local checks for each row (set per chunk) */
	Datum	   *slot_values;	/* the slot's own arrays, given back at the end */
	bool	   *slot_isnull;

	/* statistics (EXPLAIN) */
	uint64		fragments_scanned;
	uint64		rows_deleted;
	uint64		rows_filtered;	/* removed by the pushed filter */
	uint64		bytes_read;
	uint64		read_requests;
	bool		stats_merged;	/* parallel: this process's share went to (or came from) DSM */
} LtScanState;

/* ---- index.c -------------------------------------------------------------------------------- */

/* GUC lt_fdw.enable_index_scan (default on): off answers no qual with an index. */
extern bool lt_enable_index_scan;
extern void lt_index_init(void);

typedef struct LtScanIndex LtScanIndex;
struct lt_frag_plan;

/*
 * At the start of every (re)scan, after ltfdw_filter_set_params: an index lookup for the pushed
 * filter with this scan's parameters is due (*slot is created on first use, in the current memory
 * context); it runs when the scan (or EXPLAIN) first asks for a verdict, and does nothing when no
 * index answers a part of the filter. Index bytes read are added to *bytes_read.
 */
extern void ltfdw_index_due(LtScanIndex **slot, LtDatasetEntry *entry, LtFdwFilter *filter, Relation rel,
							const char *uri, uint64 *bytes_read);
/*
 * Once per scan, before the first ltfdw_index_due: array @> / && quals among the local quals on
 * list columns (their label_list indexes narrow the rows read; Postgres still checks the quals).
 */
extern void ltfdw_index_labels(LtScanIndex **slot, Relation rel, Index scanrelid, const lt_schema *schema,
							   List *local_quals);
/* The verdict for fragment i of the version (ds->fragments[i]), or NULL: scan it with the filter. */
extern const struct lt_frag_plan *ltfdw_index_verdict(LtScanIndex *ix, size_t i);
extern size_t ltfdw_prefetch_fragments(struct lt_dataset *ds, LtScanIndex *index, size_t fi, int proven_cols,
									   int other_cols, bool filter, MemoryContext cxt, const char *what);
/* Fragments the current lookup pruned (EXPLAIN's "to scan"). */
extern uint64 ltfdw_index_pruned(LtScanIndex *ix);
extern void ltfdw_index_explain(LtScanIndex *ix, ExplainState *es);
/* Planning: which columns have an index (ps->indexed_attrs, ps->unindexed_frac). */
extern void ltfdw_index_plan_info(LtPlanState *ps, Relation rel, LtDatasetEntry *e);
/*
 * Selectivity of the clauses (RestrictInfos) an index answers, or -1 when none does; *pg_sel (may be
 * NULL) gets Postgres's own estimate of the same clauses (they differ for equalities on a column
 * never analyzed: the index's distinct keys then give the estimate).
 */
extern Selectivity ltfdw_index_selectivity(PlannerInfo *root, RelOptInfo *baserel, List *conds,
										   Selectivity *pg_sel);

/* ---- index_build.c ------------------------------------------------------------------------ */

/* xact.c's PRE_COMMIT: every index built on the dataset, as one CreateIndex commit */
extern void lt_index_build_commit(LtXactTable *xt);
/* xact.c's abort: remove the files of an index not committed (best effort) */
extern void lt_index_build_discard(LtXactTable *xt, LtPendingIndex *p);

#endif
