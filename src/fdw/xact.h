/*
 * xact.h — what a Postgres transaction does to each dataset it changes (xact.c): row changes handed to
 * one lt_txn per dataset, savepoints, own-writes views, metadata changes waiting for the commit.
 */
#ifndef LT_FDW_XACT_H
#define LT_FDW_XACT_H

#include "nodes/pg_list.h"
#include "nodes/primnodes.h"
#include "utils/rel.h"

#include "table/lt_dataset.h"
#include "txn/lt_txn.h"

#include "dataset.h"
#include "option.h"
#include "store.h"

struct lt_txn;
struct lt_written_file;

/* An index lt_create_index built, its files written, waiting for the commit (index_build.c). */
typedef struct LtXactTable LtXactTable;

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

/* A field lt_track_assignment starts tracking, waiting for the commit (assign.c). */
typedef struct LtPendingTrack
{
	SubTransactionId subid;
	uint64		version;		/* checked at */
	int32		field_id;
	bool		assigned;		/* the initial state */
} LtPendingTrack;

/*
 * A lifecycle operation (lifecycle.c: a dataset created) prepared by a call and committed at
 * PRE_COMMIT as a Lance commit of its own; discard removes what it wrote when it does not commit.
 */
typedef struct LtPendingOp LtPendingOp;
struct LtPendingOp
{
	SubTransactionId subid;
	const char *what;			/* "creates", for messages: "a transaction that creates foreign table ..." */
	void		(*commit) (LtXactTable *xt, LtPendingOp *op);
	void		(*discard) (LtXactTable *xt, LtPendingOp *op);
	void	   *arg;			/* in the state's meta_cxt */
};

/*
 * What one Postgres transaction does to one dataset: either row changes — an lt_txn on the version
 * it first read, and the changes of the statements not yet handed to it (they are applied when a
 * later statement scans the dataset, at a savepoint boundary that needs it, or at commit) — or
 * metadata changes (indexes built, a primary key set), each its own kind of Lance commit that
 * cannot carry row changes.  Both in one transaction are refused, at the call or at commit.
 */
struct LtXactTable
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
	LtPendingOp *pending_op;	/* lifecycle.c */
	List	   *pending_tracks;	/* of LtPendingTrack, oldest first */
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
	int64		n_unassign,
				cap_unassign;
	struct LtPendingUnassign *unassign;	/* field assignment to clear in place (lt_xact_unassign) */
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
	SubTransactionId compacted_subid;	/* lt_compact's changes were handed over (lifecycle.c), or 0 */
	/* a table whose REST namespace manages its versions: commits go through it (namespace.c) */
	Oid			ns_serverid;	/* InvalidOid: an ordinary commit */
	uint64		committed_version;	/* the row changes' Lance commit made this version (0: none yet) */
	struct lt_auto_cleanup *cleanup;	/* and Lance's auto-cleanup after it, when due (lt_commit_result; in
										 * cxt), or NULL */
	int			auto_compact;	/* the table's auto_compact option: compact after the commit when Lance's
								 * plan rewrites at least this many fragments (0: off) */
	struct lt_dataset *committed_ds;	/* the committed version for the compaction, when the commit kept it
										 * (lt_commit_result.committed; in cxt), or NULL */
	struct lt_adoption *committed_append;	/* what the commit appended, when only that (in cxt), or NULL */
	char	   *ns_identifier;
};

/* A replace's predicate kept by the transaction for the commit's check (overwrite.c makes it). */
typedef struct LtOverwriteCheck
{
	SubTransactionId subid;
	Oid			relid;
	Oid			userid;			/* the role that wrote it: the check runs as that role */
	char	   *predicate;
	Expr	   *expr;
	List	   *attnums;
	bool		delete_only;	/* a DELETE's predicate: checked only when the transaction also inserts */
} LtOverwriteCheck;

extern void lt_xact_init(void);
/* The transaction's state for row changes to the dataset of a foreign table, created on first use. */
extern LtXactTable *lt_xact_table(Relation rel, const LtTableOptions *opts);
/*
 * The state for a metadata change (index: lt_create_index, else lt_set_primary_key) of the dataset
 * of foreign table relname, created on first use; ERROR 0A000 when the transaction has changed its rows.
 */
extern LtXactTable *lt_xact_meta_table(const char *relname, const LtTableOptions *opts, bool index);
/*
 * The state for a lifecycle operation (lifecycle.c) on the dataset of foreign table relname, doing:
 * "create"; ERROR 0A000 when the transaction has changed its rows or already has such an operation.
 */
extern LtXactTable *lt_xact_op_table(const char *relname, const LtTableOptions *opts, const char *doing);
/*
 * The changes handed over so far are a compaction (lifecycle.c): committed as a Lance Rewrite; any
 * later row change of the dataset in the transaction is ERROR 0A000.
 */
extern void lt_xact_mark_compaction(LtXactTable *xt);
/* Hand a finished data file (copied) and, for moved rows, their row ids (num_rows of them, or NULL). */
extern void lt_xact_add_file(LtXactTable *xt, const struct lt_written_file *wf, const uint64 *row_ids);
/*
 * The field assignment of the fragment of the file lt_xact_add_file was last handed: per tracked field
 * (field_ids) its lt_assign_kind and, for a partial one, the assigned offsets (copied); fields not
 * named are unassigned there.
 */
struct roaring_bitmap_s;
extern void lt_xact_assign_last_file(LtXactTable *xt, int n, const int32 *field_ids, const uint8 *kinds,
									 const struct roaring_bitmap_s *const *rows);
/*
 * The lt_txn whose own-writes view entry e is, or NULL (a committed version); *cxt the memory its
 * library allocations must go to (the transaction's, not a statement's).
 */
extern struct lt_txn *lt_xact_view_txn(const LtDatasetEntry *e, MemoryContext *cxt);
/* Clear field_id's assignment of the row at addr in place (an UPDATE of is_assigned columns only). */
extern void lt_xact_unassign(LtXactTable *xt, int32 field_id, uint64 addr);
/* Hand row addresses to delete (any order, duplicates allowed). */
extern void lt_xact_delete(LtXactTable *xt, const uint64 *addrs, int64 n);
/* Remove a fragment of the transaction's view by id (every row), without reading it. */
extern void lt_xact_remove_fragment(LtXactTable *xt, uint64 fragment_id);
/* TRUNCATE (merge.c): everything so far is gone, one Overwrite at commit (keep_indexes: their definitions, covering nothing). */
extern void lt_xact_replace_all(LtXactTable *xt, bool keep_indexes);
/* A replace's predicate to test against concurrently appended fragments at commit (copied into the state's context by the caller). */
extern void lt_xact_add_overwrite_check(LtXactTable *xt, LtOverwriteCheck *check);
/*
 * For scans: the entry of the transaction's own-writes view of the dataset in dir, or NULL when
 * this transaction has not modified it. Pinned when pin (release with lt_dataset_unpin).
 */
extern LtDatasetEntry *lt_xact_view(const char *dir, bool pin);
/* Is the entry a transaction's own-writes view (not a committed version)? */
extern bool lt_xact_is_view(const LtDatasetEntry *e);

/*
 * The commit's steps that belong to higher files (xact.c knows none of them): lt_fdw.c installs them when
 * the module is loaded, as PostgreSQL's RegisterXactCallback takes a callback.
 */
typedef struct LtXactHooks
{
	/* PRE_COMMIT: the pending lt_set_primary_key of the dataset, as one UpdateConfig commit (keys.c) */
	void		(*commit_key) (LtXactTable *xt);
	/* PRE_COMMIT: every index built on the dataset, as one CreateIndex commit (index_build.c) */
	void		(*commit_indexes) (LtXactTable *xt);
	/* PRE_COMMIT: the fields lt_track_assignment starts tracking, one UpdateConfig commit each (assign.c) */
	void		(*commit_tracks) (LtXactTable *xt);
	/* abort and ROLLBACK TO: remove the files of an index not committed, best effort (index_build.c) */
	void		(*discard_index) (LtXactTable *xt, LtPendingIndex *p);
	/* lt_txn's check of fragments appended concurrently, for a transaction with replaces (overwrite.c) */
	lt_new_fragment_check check_new_fragment;
} LtXactHooks;
extern void lt_xact_set_hooks(const LtXactHooks *hooks);

/*
 * lt_fdw.crash_at_commit_point for a commit made outside lt_txn_commit (an index, a schema change, a new
 * dataset, a restore): on arms it as set, off disarms it.
 */
extern void lt_xact_arm_crash(bool on);

/*
 * A metadata commit at PRE_COMMIT (an index, a primary key, a schema change, ...): opens xt's dataset at
 * version through the transaction's store, runs commit on it, closes both; the library allocates in
 * whatever target the caller set.  The error, if any, is in *err for the caller to report.
 */
typedef lt_code (*LtVersionCommit) (lt_dataset *ds, void *arg, lt_error *err);
extern lt_code lt_xact_commit_on_version(LtXactTable *xt, uint64 version, LtVersionCommit commit, void *arg,
										 lt_error *err);

#endif
