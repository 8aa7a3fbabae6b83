/*
 * xact.c — a Postgres transaction as at most one Lance commit per modified dataset.
 *
 * The first statement that modifies a dataset opens an lt_txn on the version it reads (the read
 * version, resolved by dataset.c's snapshot rules) and keeps it for the rest of the transaction.
 * Statements hand their changes here (finished data files, row addresses to delete); they are
 * applied to the lt_txn lazily — when a later statement scans the dataset (it then reads
 * lt_txn_view: its own writes), or at commit — because a statement must not see its own changes
 * and the scan of an UPDATE or DELETE reads the view while its rows are being changed.
 *
 * Savepoints: each open subtransaction has a record per dataset. While the changes made since the
 * savepoint are still here, unapplied, the record is just their position; when they are applied,
 * the record gets an lt_txn_savepoint mark first. ROLLBACK TO drops the unapplied changes or rolls
 * the lt_txn back to the mark. A dataset first modified inside a subtransaction that rolls back is
 * forgotten entirely.
 *
 * Metadata changes — indexes lt_create_index built (index_build.c), a primary key
 * lt_set_primary_key checked (keys.c) — wait in the same per-dataset state, each with the
 * subtransaction that made it: ROLLBACK TO drops those made since (an index's files with it), as
 * does the abort.  Their Lance commits (UpdateConfig, CreateIndex) cannot carry row changes, so a
 * dataset with both is refused: at the call when the rows changed first, else at commit, before
 * anything is committed.
 *
 * Commit: XACT_EVENT_PRE_COMMIT commits each dataset's primary key, then its indexes, then applies
 * what is left of its row changes and calls lt_txn_commit (an empty one makes no version); an error
 * there aborts the Postgres transaction, LT_ECONFLICT as 40001. PREPARE TRANSACTION with any change
 * to a Lance dataset is refused.
 *
 * Commit lock: the commits of this cluster's sessions to one dataset queue on a heavyweight lock
 * keyed by the dataset's location (commit_lock), taken at PRE_COMMIT for every dataset the
 * transaction commits to (in the order of their keys, so two transactions never wait for each other
 * the wrong way round) and held to the end of the transaction.  Racing on the store instead made 30
 * writers retry for minutes; a lock wait answers cancel and lock_timeout (55P03), and the deadlock
 * detector.  Writers outside the cluster still race, and lose or win as the commit loop says (its
 * backoff sleeps on the latch: lt_store_init).
 *
 * Views: each change applied makes the next scan a new view entry (lt_txn views stay valid until
 * lt_txn_free), so a scan still open — a cursor — goes on reading the state at its start, as a
 * heap cursor reads its snapshot, while later statements apply and read newer changes.
 *
 * Memory: each dataset's state has its own context under TopMemoryContext; a small marker context
 * under TopTransactionContext tells when the transaction's memory goes away (after the executor's),
 * and the states are freed then — or later, when a scan of a view still holds it.
 */
#include "postgres.h"

#include <signal.h>
#include <unistd.h>

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "dataset.h"
#include "maintain.h"
#include "namespace.h"
#include "option.h"
#include "store.h"
#include "xact.h"
#include "util/lt_alloc.h"
#include "txn/lt_txn.h"
#include "txn/lt_keys.h"
#include "file/lt_writer.h"
#include "util/lt_sort.h"

#include <roaring/roaring.h>

typedef struct LtPendingFile
{
	lt_written_file wf;			/* a copy in the state's context */
	uint64	   *row_ids;		/* moved rows' ids, or NULL */
	/* field assignment of the fragment, per tracked field the writer spoke of (lt_xact_assign_last_file) */
	int			n_assigned;
	int32	   *assigned;		/* field ids */
	uint8	   *assigned_kind;	/* lt_assign_kind */
	char	  **assigned_bits;	/* PARTIAL: the portable roaring bitmap of assigned offsets */
	size_t	   *assigned_len;
} LtPendingFile;

typedef struct LtPendingUnassign
{
	uint64		addr;
	int32		field_id;
} LtPendingUnassign;

typedef struct LtSavepoint
{
	SubTransactionId subid;
	bool		in_pending;		/* the changes since the savepoint are all unapplied, from here: */
	int			n_files;
	int64		n_unassign;
	int64		n_addrs;
	int			n_removes;
	lt_txn_mark mark;			/* !in_pending: the lt_txn's mark */
} LtSavepoint;

/*
 * Crash tests (lt_fdw.crash_at_commit_point, superuser only, not for production): the backend
 * kills itself with SIGKILL at that point of its next Lance commit, as a power cut would stop it.
 */
static int	crash_at = -1;
static const struct config_enum_entry crash_points[] = {
	{"", -1, false},
	{"start", LT_COMMIT_START, false},
	{"after_deletion_files", LT_COMMIT_AFTER_DELETION_FILES, false},
	{"after_txn_file", LT_COMMIT_AFTER_TXN_FILE, false},
	{"mid_manifest", LT_COMMIT_MID_MANIFEST, false},
	{"after_manifest", LT_COMMIT_AFTER_MANIFEST, false},
	{NULL, 0, false}
};

static void
crash_hook(lt_commit_point point)
{
	if ((int) point == crash_at)
		kill(getpid(), SIGKILL);
}

/* the commit's steps of the files above (lt_fdw.c installs them at load: lt_xact_set_hooks) */
static LtXactHooks hooks;

/*
 * Tests only (lt_fdw.test_commit_wait_lock, superuser): holding its commit locks, the committing
 * transaction first waits for the advisory lock with this key (shared, to its end), so that a test
 * can hold a commit at that point.  0: off.
 */
static int	test_commit_wait_lock = 0;

/* field4 of the commit locks' tag ('LT'); SQL's advisory locks use 1 and 2 */
#define LT_COMMIT_LOCK_CLASS 0x4c54

/* The commit lock's key of a dataset directory: a hash of its real path (local) or its URI (S3). */
static uint64
commit_lock_key(const char *dir)
{
	char	   *real = lt_is_s3_uri(dir) ? NULL : realpath(dir, NULL);
	const char *name = real ? real : dir;
	uint64		key = hash_bytes_extended((const unsigned char *) name, (int) strlen(name), 0x4c54);

	free(real);
	return key;
}

/*
 * Take the commit lock of each dataset in keys (n of them, sorted here): an exclusive, transaction
 * lock in the advisory space, cluster-wide (database 0), so it shows in pg_locks as an advisory lock
 * with objsubid 19540.  A wait answers cancel, lock_timeout (55P03) and the deadlock detector.
 */
static void
commit_lock(uint64 *keys, int n)
{
	qsort(keys, n, sizeof(uint64), lt_cmp_u64);
	for (int i = 0; i < n; i++)
	{
		LOCKTAG		tag;

		if (i > 0 && keys[i] == keys[i - 1])
			continue;
		SET_LOCKTAG_ADVISORY(tag, InvalidOid, (uint32) (keys[i] >> 32), (uint32) keys[i], LT_COMMIT_LOCK_CLASS);
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
	}
	if (test_commit_wait_lock != 0)
		DirectFunctionCall1(pg_advisory_xact_lock_shared_int8, Int64GetDatum((int64) test_commit_wait_lock));
}

static List *tables = NIL;		/* LtXactTable of this transaction, one per dataset (TopMemoryContext list) */
static List *zombies = NIL;		/* states of ended transactions whose view a scan still pins */
static MemoryContext marker = NULL;

static void
xt_free(LtXactTable *xt)
{
	MemoryContext old = lt_alloc_target(xt->cxt);

	if (xt->txn)
		lt_txn_free(xt->txn);
	xt->txn = NULL;
	lt_alloc_target(old);
	if (xt->base)
		lt_dataset_unpin(xt->base);
	xt->base = NULL;
	MemoryContextDelete(xt->cxt);	/* xt itself lives there */
}

static bool
xt_pinned(const LtXactTable *xt)
{
	ListCell   *lc;

	foreach(lc, xt->views)
		if (((LtDatasetEntry *) lfirst(lc))->pins > 0)
			return true;
	return false;
}

/* Free now, or when the last scan of its view is gone. */
static void
xt_release(LtXactTable *xt)
{
	MemoryContext old;

	if (!xt_pinned(xt))
	{
		xt_free(xt);
		return;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	zombies = lappend(zombies, xt);
	MemoryContextSwitchTo(old);
}

static void
reap_zombies(void)
{
	ListCell   *lc;

	foreach(lc, zombies)
	{
		LtXactTable *xt = lfirst(lc);

		if (!xt_pinned(xt))
		{
			xt_free(xt);
			zombies = foreach_delete_current(zombies, lc);
		}
	}
}

/* The transaction's memory is going away: forget its states. */
static void
marker_reset(void *arg)
{
	List	   *old = tables;
	ListCell   *lc;

	tables = NIL;
	marker = NULL;
	foreach(lc, old)
		xt_release(lfirst(lc));
	list_free(old);
}

static bool
has_meta(const LtXactTable *xt)
{
	return xt->pending_key != NULL || xt->pending_indexes != NIL || xt->pending_op != NULL ||
		xt->pending_tracks != NIL;
}

static LtXactTable *
find_table(const char *dir)
{
	ListCell   *lc;

	foreach(lc, tables)
	{
		LtXactTable *xt = lfirst(lc);

		if (strcmp(xt->dir, dir) == 0)
			return xt;
	}
	return NULL;
}

static void
txn_failed(LtXactTable *xt, const lt_error *err)
{
	lt_report_write(err, psprintf("dataset %s (foreign table \"%s\")", xt->uri, xt->relname));
}

/* A state without changes (not in the list yet). */
static LtXactTable *
xt_new(const char *dir, const char *uri, const char *relname)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "lt_fdw transaction", ALLOCSET_DEFAULT_SIZES);
	LtXactTable *xt = MemoryContextAllocZero(cxt, sizeof(LtXactTable));

	xt->cxt = cxt;
	xt->dir = MemoryContextStrdup(cxt, dir);
	xt->uri = MemoryContextStrdup(cxt, uri);
	xt->relname = MemoryContextStrdup(cxt, relname);
	if (marker == NULL)
	{
		MemoryContextCallback *cb;

		marker = AllocSetContextCreate(TopTransactionContext, "lt_fdw transaction marker", ALLOCSET_SMALL_SIZES);
		cb = MemoryContextAlloc(marker, sizeof(MemoryContextCallback));
		cb->func = marker_reset;
		cb->arg = NULL;
		MemoryContextRegisterResetCallback(marker, cb);
	}
	return xt;
}

static void
xt_register(LtXactTable *xt)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	tables = lappend(tables, xt);
	MemoryContextSwitchTo(old);
}

LtXactTable *
lt_xact_table(Relation rel, const LtTableOptions *opts)
{
	LtXactTable *xt = find_table(opts->dataset_dir);
	LtDatasetEntry *base;
	struct lt_txn *txn;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;

	if (xt && xt->txn)
		return xt;
	reap_zombies();
	base = lt_dataset_acquire(RelationGetRelid(rel), opts, true);
	if (xt == NULL)
	{
		xt = xt_new(opts->dataset_dir, opts->uri, RelationGetRelationName(rel));
		xt_register(xt);
	}
	old = lt_alloc_target(xt->cxt);
	rc = lt_txn_begin(base->ds, &txn, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
	{
		lt_dataset_unpin(base);
		lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", opts->uri, RelationGetRelationName(rel)));
	}
	xt->base = base;
	xt->txn = txn;
	xt->auto_compact = lt_option_auto_compact(RelationGetRelid(rel));
	if (opts->ns_managed_versioning)
	{
		MemoryContext o = MemoryContextSwitchTo(xt->cxt);

		xt->ns_serverid = GetForeignTable(RelationGetRelid(rel))->serverid;
		xt->ns_identifier = pstrdup(opts->identifier);
		MemoryContextSwitchTo(o);
	}
	xt->created_subid = GetCurrentSubTransactionId();
	return xt;
}

/* A metadata change and row changes of one dataset: never one Lance commit. */
static void
refuse_mixed(const char *relname, const char *uri, bool index)
{
	if (index)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot create an index on foreign table \"%s\" and modify it in the same transaction",
						relname),
				 errdetail("A Lance CreateIndex commit cannot carry row changes; dataset %s.", uri),
				 errhint("Commit the INSERT, UPDATE or DELETE first, then call lt_create_index in a transaction of its own.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("lt_fdw: cannot set the primary key of foreign table \"%s\" and modify its rows in the same transaction",
					relname),
			 errdetail("A Lance UpdateConfig commit cannot carry row changes; dataset %s.", uri),
			 errhint("Commit the INSERT, UPDATE or DELETE first, then call lt_set_primary_key in a transaction of its own.")));
}

LtXactTable *
lt_xact_meta_table(const char *relname, const LtTableOptions *opts, bool index)
{
	LtXactTable *xt = find_table(opts->dataset_dir);

	if (opts->ns_managed_versioning)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: foreign table \"%s\": index and key changes of a table whose namespace manages its versions are not supported",
						relname),
				 errdetail("The namespace of %s publishes its versions (CreateTableVersion); lt_fdw commits only row changes through it.",
						   opts->uri)));
	if (xt == NULL)
	{
		xt = xt_new(opts->dataset_dir, opts->uri, relname);
		xt_register(xt);
	}
	else if (xt->txn)
		refuse_mixed(relname, opts->uri, index);
	if (xt->meta_cxt == NULL)
	{
		MemoryContext old;

		xt->meta_cxt = AllocSetContextCreate(xt->cxt, "lt_fdw metadata changes", ALLOCSET_DEFAULT_SIZES);
		old = MemoryContextSwitchTo(xt->meta_cxt);
		xt->s3 = lt_s3_location_copy(opts->s3);
		MemoryContextSwitchTo(old);
	}
	return xt;
}

LtXactTable *
lt_xact_op_table(const char *relname, const LtTableOptions *opts, const char *doing)
{
	LtXactTable *xt = find_table(opts->dataset_dir);

	if (xt && (xt->txn || xt->pending_op))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot %s the dataset of foreign table \"%s\" in a transaction that already changed it",
						doing, relname),
				 errdetail("Each is a Lance commit of its own; dataset %s.", opts->uri),
				 errhint("Commit first, then %s in a transaction of its own.", doing)));
	return lt_xact_meta_table(relname, opts, false);
}

void
lt_xact_mark_compaction(LtXactTable *xt)
{
	xt->compacted_subid = GetCurrentSubTransactionId();
	lt_txn_mark_compaction(xt->txn, true);
}

/* A Lance Rewrite carries the compaction alone. */
static void
refuse_after_compaction(const LtXactTable *xt)
{
	if (xt->compacted_subid != InvalidSubTransactionId)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot modify foreign table \"%s\" in the transaction that compacted it", xt->relname),
				 errdetail("A Lance Rewrite commit carries nothing but the compaction; dataset %s.", xt->uri),
				 errhint("Commit the compaction first.")));
}

void
lt_xact_add_file(LtXactTable *xt, const lt_written_file *wf, const uint64 *row_ids)
{
	refuse_after_compaction(xt);
	MemoryContext old = MemoryContextSwitchTo(xt->cxt);
	LtPendingFile *pf;

	if (xt->n_files == xt->cap_files)
	{
		xt->cap_files = Max(8, xt->cap_files * 2);
		xt->files = xt->files ? repalloc(xt->files, sizeof(LtPendingFile) * xt->cap_files)
			: palloc(sizeof(LtPendingFile) * xt->cap_files);
	}
	pf = &xt->files[xt->n_files];
	memset(pf, 0, sizeof(*pf));
	pf->wf = *wf;
	pf->wf.name = pstrdup(wf->name);
	pf->wf.field_ids = palloc(sizeof(int32) * Max(wf->n_fields, 1));
	pf->wf.column_indices = palloc(sizeof(int32) * Max(wf->n_fields, 1));
	memcpy(pf->wf.field_ids, wf->field_ids, sizeof(int32) * wf->n_fields);
	memcpy(pf->wf.column_indices, wf->column_indices, sizeof(int32) * wf->n_fields);
	if (row_ids)
	{
		pf->row_ids = MemoryContextAllocHuge(xt->cxt, sizeof(uint64) * Max(wf->num_rows, 1));
		memcpy(pf->row_ids, row_ids, sizeof(uint64) * wf->num_rows);
	}
	xt->n_files++;
	MemoryContextSwitchTo(old);
}

void
lt_xact_assign_last_file(LtXactTable *xt, int n, const int32 *field_ids, const uint8 *kinds,
						 const struct roaring_bitmap_s *const *rows)
{
	LtPendingFile *pf;
	MemoryContext old;

	if (n <= 0 || xt->n_files == 0)
		return;
	pf = &xt->files[xt->n_files - 1];
	old = MemoryContextSwitchTo(xt->cxt);
	pf->assigned = palloc(sizeof(int32) * n);
	pf->assigned_kind = palloc(n);
	pf->assigned_bits = palloc0(sizeof(char *) * n);
	pf->assigned_len = palloc0(sizeof(size_t) * n);
	for (int k = 0; k < n; k++)
	{
		pf->assigned[k] = field_ids[k];
		pf->assigned_kind[k] = kinds[k];
		if (kinds[k] == LT_ASSIGN_PARTIAL)
		{
			pf->assigned_len[k] = roaring_bitmap_portable_size_in_bytes(rows[k]);
			pf->assigned_bits[k] = MemoryContextAllocHuge(xt->cxt, Max(pf->assigned_len[k], 1));
			roaring_bitmap_portable_serialize(rows[k], pf->assigned_bits[k]);
		}
	}
	pf->n_assigned = n;
	MemoryContextSwitchTo(old);
}

struct lt_txn *
lt_xact_view_txn(const LtDatasetEntry *e, MemoryContext *cxt)
{
	ListCell   *lc;

	*cxt = NULL;
	if (!lt_xact_is_view(e))
		return NULL;
	foreach(lc, tables)
	{
		LtXactTable *xt = lfirst(lc);

		if (xt->txn && list_member_ptr(xt->views, e))
		{
			*cxt = xt->cxt;
			return xt->txn;
		}
	}
	return NULL;
}

void
lt_xact_unassign(LtXactTable *xt, int32 field_id, uint64 addr)
{
	if (xt->n_unassign == xt->cap_unassign)
	{
		int64		cap = Max(1024, xt->cap_unassign * 2);

		xt->unassign = xt->unassign ? repalloc_huge(xt->unassign, sizeof(LtPendingUnassign) * cap)
			: MemoryContextAllocHuge(xt->cxt, sizeof(LtPendingUnassign) * cap);
		xt->cap_unassign = cap;
	}
	xt->unassign[xt->n_unassign].addr = addr;
	xt->unassign[xt->n_unassign].field_id = field_id;
	xt->n_unassign++;
}

static int
cmp_unassign(const void *a, const void *b)
{
	const LtPendingUnassign *x = a,
			   *y = b;

	if (x->field_id != y->field_id)
		return x->field_id < y->field_id ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : 0;
}

/*
 * The shared walk of the deletes and the unassigns: items[0, n) (each `size` bytes) sorted so that equal keys are
 * adjacent; key gives an item's run key (its fragment, and field) and its row offset; apply gets each run's first
 * item and offsets.
 */
typedef uint64 (*run_key_fn) (const void *items, int64 i, uint32 *offset);
typedef lt_code (*run_apply_fn) (lt_txn *txn, const void *first, const uint32 *offsets, uint64 n, lt_error *err);

static void
apply_by_fragment(LtXactTable *xt, const void *items, size_t size, int64 n, run_key_fn key, run_apply_fn apply)
{
	uint32	   *offsets = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint32) * n);
	int64		i = 0;

	while (i < n)
	{
		int64		first = i;
		uint64		run = key(items, i, &offsets[0]);
		int64		k = 1;
		lt_error	err;
		lt_code		rc;
		MemoryContext old;

		for (i++; i < n && key(items, i, &offsets[k]) == run; i++)
			k++;
		old = lt_alloc_target(xt->cxt);
		rc = apply(xt->txn, (const char *) items + first * size, offsets, (uint64) k, &err);
		lt_alloc_target(old);
		if (rc != LT_OK)
			txn_failed(xt, &err);
	}
	pfree(offsets);
}

/* unassign entries run by field and fragment */
static uint64
unassign_key(const void *items, int64 i, uint32 *offset)
{
	const LtPendingUnassign *u = (const LtPendingUnassign *) items + i;

	*offset = (uint32) u->addr;
	return ((uint64) (uint32) u->field_id << 32) | (u->addr >> 32);
}

static lt_code
unassign_run(lt_txn *txn, const void *first, const uint32 *offsets, uint64 n, lt_error *err)
{
	const LtPendingUnassign *u = first;

	return lt_txn_unassign_rows(txn, u->addr >> 32, u->field_id, offsets, n, err);
}

/* In-place clears of unassign[from, to): sorted, then one call per field and fragment. */
static void
apply_unassign(LtXactTable *xt, int64 from, int64 to)
{
	if (to <= from)
		return;
	qsort(xt->unassign + from, to - from, sizeof(LtPendingUnassign), cmp_unassign);
	apply_by_fragment(xt, xt->unassign + from, sizeof(LtPendingUnassign), to - from, unassign_key, unassign_run);
}

void
lt_xact_delete(LtXactTable *xt, const uint64 *addrs, int64 n)
{
	refuse_after_compaction(xt);
	if (n <= 0)
		return;
	if (xt->n_addrs + n > xt->cap_addrs)
	{
		int64		cap = Max(1024, xt->cap_addrs);

		while (cap < xt->n_addrs + n)
			cap *= 2;
		xt->addrs = xt->addrs ? repalloc_huge(xt->addrs, sizeof(uint64) * cap)
			: MemoryContextAllocHuge(xt->cxt, sizeof(uint64) * cap);
		xt->cap_addrs = cap;
	}
	memcpy(xt->addrs + xt->n_addrs, addrs, sizeof(uint64) * n);
	xt->n_addrs += n;
}

void
lt_xact_remove_fragment(LtXactTable *xt, uint64 fragment_id)
{
	refuse_after_compaction(xt);
	if (xt->n_removes == xt->cap_removes)
	{
		xt->cap_removes = Max(16, xt->cap_removes * 2);
		xt->removes = xt->removes ? repalloc(xt->removes, sizeof(uint64) * xt->cap_removes)
			: MemoryContextAlloc(xt->cxt, sizeof(uint64) * xt->cap_removes);
	}
	xt->removes[xt->n_removes++] = fragment_id;
}

static void apply_pending(LtXactTable *xt);

void
lt_xact_replace_all(LtXactTable *xt, bool keep_indexes)
{
	ListCell   *lc;
	lt_error	err;
	lt_code		rc;
	MemoryContext old;

	refuse_after_compaction(xt);

	/* what the transaction did before goes too: apply it, in order, before the replace */
	apply_pending(xt);
	/* the savepoints still at this position get their marks now: a ROLLBACK TO must undo the replace */
	foreach(lc, xt->savepoints)
	{
		LtSavepoint *sp = lfirst(lc);

		if (sp->in_pending)
		{
			sp->mark = lt_txn_savepoint(xt->txn);
			sp->in_pending = false;
		}
	}
	old = lt_alloc_target(xt->cxt);
	rc = lt_txn_replace_all(xt->txn, keep_indexes, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		txn_failed(xt, &err);
	xt->view_stale = true;
}

/* A replace was made (a DELETE's predicate counts when the transaction also inserted). */
static bool
lt_overwrite_checks_apply(const LtXactTable *xt)
{
	ListCell   *lc;

	foreach(lc, xt->overwrite_checks)
		if (!((LtOverwriteCheck *) lfirst(lc))->delete_only || xt->inserted)
			return true;
	return false;
}

void
lt_xact_add_overwrite_check(LtXactTable *xt, LtOverwriteCheck *check)
{
	MemoryContext old = MemoryContextSwitchTo(xt->cxt);

	check->subid = GetCurrentSubTransactionId();
	xt->overwrite_checks = lappend(xt->overwrite_checks, check);
	MemoryContextSwitchTo(old);
}

/* ---- applying changes to the lt_txn ------------------------------------------------------------- */

static void
apply_files(LtXactTable *xt, int from, int to)
{
	for (int i = from; i < to; i++)
	{
		LtPendingFile *pf = &xt->files[i];
		uint64_t	frag;
		lt_error	err;
		lt_code		rc;
		MemoryContext old = lt_alloc_target(xt->cxt);

		rc = lt_txn_add_fragment(xt->txn, 1, &pf->wf, pf->row_ids, &frag, &err);
		for (int k = 0; rc == LT_OK && k < pf->n_assigned; k++)
		{
			roaring_bitmap_t *rows = NULL;

			if (pf->assigned_kind[k] == LT_ASSIGN_PARTIAL &&
				!(rows = roaring_bitmap_portable_deserialize_safe(pf->assigned_bits[k], pf->assigned_len[k])))
				rc = lt_error_set(&err, LT_ENOMEM, "out of memory");
			else
				rc = lt_txn_set_assignment(xt->txn, frag, pf->assigned[k], (lt_assign_kind) pf->assigned_kind[k],
										   rows, &err);
		}
		lt_alloc_target(old);
		if (rc != LT_OK)
			txn_failed(xt, &err);
	}
}

/* row addresses run by fragment */
static uint64
delete_key(const void *items, int64 i, uint32 *offset)
{
	uint64		addr = ((const uint64 *) items)[i];

	*offset = (uint32) addr;
	return addr >> 32;
}

static lt_code
delete_run(lt_txn *txn, const void *first, const uint32 *offsets, uint64 n, lt_error *err)
{
	return lt_txn_delete_rows(txn, *(const uint64 *) first >> 32, offsets, n, err);
}

/* Deletes of addrs[from, to): sorted, then one call per fragment. */
static void
apply_deletes(LtXactTable *xt, int64 from, int64 to)
{
	if (to <= from)
		return;
	qsort(xt->addrs + from, to - from, sizeof(uint64), lt_cmp_u64);
	apply_by_fragment(xt, xt->addrs + from, sizeof(uint64), to - from, delete_key, delete_run);
}

/* Fragments removed by id (a replace's fully matched fragments): no row is read. */
static void
apply_removes(LtXactTable *xt, int from, int to)
{
	for (int i = from; i < to; i++)
	{
		lt_error	err;
		lt_code		rc;
		MemoryContext old = lt_alloc_target(xt->cxt);

		rc = lt_txn_remove_fragment(xt->txn, xt->removes[i], &err);
		lt_alloc_target(old);
		if (rc != LT_OK)
			txn_failed(xt, &err);
	}
}

static bool
has_unapplied(const LtXactTable *xt)
{
	return xt->n_files > 0 || xt->n_addrs > 0 || xt->n_removes > 0 || xt->n_unassign > 0 || xt->rollback_due;
}

/* Apply every unapplied change (and a due rollback), marking the savepoints on the way. */
static void
apply_pending(LtXactTable *xt)
{
	int			done_files = 0;
	int64		done_addrs = 0;
	int			done_removes = 0;
	int64		done_unassign = 0;
	ListCell   *lc;
	MemoryContext old;

	if (!has_unapplied(xt))
		return;
	xt->view_stale = true;
	if (xt->rollback_due)
	{
		lt_error	err;
		lt_code		rc;

		old = lt_alloc_target(xt->cxt);
		rc = lt_txn_rollback_to(xt->txn, xt->rollback_mark, &err);
		lt_alloc_target(old);
		if (rc != LT_OK)
			txn_failed(xt, &err);
		xt->rollback_due = false;
	}
	foreach(lc, xt->savepoints)
	{
		LtSavepoint *sp = lfirst(lc);

		if (!sp->in_pending)
			continue;
		apply_files(xt, done_files, sp->n_files);
		apply_deletes(xt, done_addrs, sp->n_addrs);
		apply_removes(xt, done_removes, sp->n_removes);
		apply_unassign(xt, done_unassign, sp->n_unassign);
		done_files = sp->n_files;
		done_addrs = sp->n_addrs;
		done_removes = sp->n_removes;
		done_unassign = sp->n_unassign;
		sp->mark = lt_txn_savepoint(xt->txn);
		sp->in_pending = false;
	}
	apply_files(xt, done_files, xt->n_files);
	apply_deletes(xt, done_addrs, xt->n_addrs);
	apply_removes(xt, done_removes, xt->n_removes);
	apply_unassign(xt, done_unassign, xt->n_unassign);
	xt->n_files = 0;
	xt->n_addrs = 0;
	xt->n_removes = 0;
	xt->n_unassign = 0;
}

/* ---- scans of own writes ---------------------------------------------------------------------- */

LtDatasetEntry *
lt_xact_view(const char *dir, bool pin)
{
	LtXactTable *xt = find_table(dir);
	LtDatasetEntry *e;

	if (xt == NULL || xt->txn == NULL)
		return NULL;
	if (has_unapplied(xt))
		apply_pending(xt);		/* open scans keep their own (older) view entries */
	if (lt_txn_is_empty(xt->txn) && xt->view == NULL)
	{
		/* nothing changed yet: the read version itself */
		if (pin)
			xt->base->pins++;
		return xt->base;
	}
	if (xt->view == NULL || xt->view_stale)
	{
		lt_dataset *ds;
		lt_error	err;
		lt_code		rc;
		MemoryContext old;

		e = MemoryContextAllocZero(xt->cxt, sizeof(LtDatasetEntry));
		old = MemoryContextSwitchTo(xt->cxt);
		xt->views = lappend(xt->views, e);
		MemoryContextSwitchTo(old);
		xt->view = e;
		old = lt_alloc_target(xt->cxt);
		rc = lt_txn_view(xt->txn, &ds, &err);
		lt_alloc_target(old);
		if (rc != LT_OK)
			txn_failed(xt, &err);
		e->dir = xt->dir;
		e->version = xt->base->version;
		e->cxt = xt->cxt;
		e->store = xt->base->store;
		e->ds = ds;
		e->live_rows = lt_dataset_count_rows(ds);
		xt->view_stale = false;
	}
	e = xt->view;
	if (pin)
		e->pins++;
	return e;
}

bool
lt_xact_is_view(const LtDatasetEntry *e)
{
	ListCell   *lc;

	foreach(lc, tables)
	{
		LtXactTable *xt = lfirst(lc);

		if (list_member_ptr(xt->views, e))
			return true;
	}
	return false;
}

/* ---- transaction and subtransaction events ---------------------------------------------------- */

/* Drop the metadata changes made in subtransaction from_subid or later (Invalid: every one). */
static void
discard_indexes(LtXactTable *xt, SubTransactionId from_subid)
{
	ListCell   *lc;

	foreach(lc, xt->pending_indexes)
	{
		LtPendingIndex *p = lfirst(lc);

		if (p->subid < from_subid)
			continue;
		xt->pending_indexes = foreach_delete_current(xt->pending_indexes, lc);
		hooks.discard_index(xt, p);
	}
}

/* Drop the lifecycle operation when made in subtransaction from_subid or later (Invalid: in any). */
static void
discard_op(LtXactTable *xt, SubTransactionId from_subid)
{
	LtPendingOp *op = xt->pending_op;

	if (op == NULL || op->subid < from_subid)
		return;
	xt->pending_op = NULL;
	op->discard(xt, op);
}

static void
discard_meta(LtXactTable *xt, SubTransactionId from_subid)
{
	discard_indexes(xt, from_subid);
	discard_op(xt, from_subid);
	if (xt->pending_key && xt->pending_key->subid >= from_subid)
		xt->pending_key = NULL;
	{
		ListCell   *lc;

		foreach(lc, xt->pending_tracks)
			if (((LtPendingTrack *) lfirst(lc))->subid >= from_subid)
				xt->pending_tracks = foreach_delete_current(xt->pending_tracks, lc);
	}
}

/*
 * The row changes of xt go, its metadata changes stay: a new state takes those (their context
 * moves to it) and replaces xt in the list; xt is released.
 */
static LtXactTable *
split_meta(LtXactTable *xt)
{
	LtXactTable *keep = xt_new(xt->dir, xt->uri, xt->relname);

	MemoryContextSetParent(xt->meta_cxt, keep->cxt);
	keep->meta_cxt = xt->meta_cxt;
	keep->s3 = xt->s3;
	keep->pending_indexes = xt->pending_indexes;
	keep->pending_key = xt->pending_key;
	keep->pending_op = xt->pending_op;
	xt->pending_op = NULL;
	keep->pending_tracks = xt->pending_tracks;
	xt->pending_tracks = NIL;
	xt->meta_cxt = NULL;
	xt->s3 = NULL;
	xt->pending_indexes = NIL;
	xt->pending_key = NULL;
	return keep;
}

static bool
has_inserted_keys(const LtXactTable *xt)
{
	return xt->inserted_keys != NULL && xt->inserted_keys->n_added > 0;
}

static void
commit_all(void)
{
	ListCell   *lc;

	/* a dataset with row and metadata changes: refused before anything is committed */
	foreach(lc, tables)
	{
		LtXactTable *xt = lfirst(lc);

		if (xt->txn && xt->pending_op && (has_unapplied(xt) || !lt_txn_is_empty(xt->txn)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: a transaction that %s foreign table \"%s\" cannot also modify its rows",
							xt->pending_op->what, xt->relname),
					 errdetail("Each is a Lance commit of its own; dataset %s.", xt->uri),
					 errhint("Commit one, then do the other in a transaction of its own.")));
		if (xt->txn && (xt->pending_key || xt->pending_indexes != NIL))
			refuse_mixed(xt->relname, xt->uri, xt->pending_key == NULL);
	}
	/* queue behind this cluster's other commits to the same datasets */
	{
		uint64	   *keys = palloc(sizeof(uint64) * (list_length(tables) + 1));
		int			n = 0;

		foreach(lc, tables)
		{
			LtXactTable *xt = lfirst(lc);

			if (xt->pending_key || xt->pending_indexes != NIL || xt->pending_op || xt->pending_tracks != NIL ||
				(xt->txn && (has_unapplied(xt) || !lt_txn_is_empty(xt->txn))))
				keys[n++] = commit_lock_key(xt->dir);
		}
		if (n > 0)
			commit_lock(keys, n);
		pfree(keys);
	}
	foreach(lc, tables)
	{
		LtXactTable *xt = lfirst(lc);
		/* auto-compaction plans on the committed version: kept rather than read back (maintain.c) */
		lt_commit_options co = {.adopt = true, .keep_committed = xt->auto_compact > 0 && !OidIsValid(xt->ns_serverid)};
		LtNamespacePublisher *publisher = NULL;
		lt_commit_result res;
		lt_error	err;
		lt_code		rc;
		MemoryContext old;

		if (xt->pending_key)
			hooks.commit_key(xt);
		if (xt->pending_indexes != NIL)
			hooks.commit_indexes(xt);
		if (xt->pending_op)
		{
			LtPendingOp *op = xt->pending_op;

			op->commit(xt, op);
			xt->pending_op = NULL;	/* committed: its files are referenced now */
		}
		if (xt->pending_tracks != NIL)
			hooks.commit_tracks(xt);
		if (xt->txn == NULL)
			continue;
		apply_pending(xt);
		if (lt_txn_is_empty(xt->txn))
			continue;
		if (lt_overwrite_checks_apply(xt))
		{
			/* a replace: rows concurrent writers appended must not match its predicate */
			co.check_new_fragment = hooks.check_new_fragment;
			co.check_arg = xt;
		}
		if (has_inserted_keys(xt))
		{
			/*
			 * a keyed table: the commit asserts that the keys it wrote are new (an Update carrying
			 * them, as Lance's merge-insert); a concurrent commit that inserted one of them, or rows
			 * without saying which keys, conflicts.  The filter goes to the lt_txn.
			 */
			old = lt_alloc_target(xt->cxt);
			rc = lt_txn_assert_unique_keys(xt->txn, xt->inserted_keys, &err);
			lt_alloc_target(old);
			xt->inserted_keys = NULL;
			if (rc != LT_OK)
				txn_failed(xt, &err);
		}
		if (OidIsValid(xt->ns_serverid))
		{
			/* the namespace publishes the version (CreateTableVersion) */
			publisher = lt_namespace_publisher(xt->ns_serverid, xt->ns_identifier, xt->dir);
			xt->base->ds->store->publish_manifest = lt_namespace_publish;
			xt->base->ds->store->publish_arg = publisher;
		}
		old = lt_alloc_target(xt->cxt);
		lt_commit_fault_hook = crash_at >= 0 ? crash_hook : NULL;
		rc = lt_txn_commit(xt->txn, &co, &res, &err);
		lt_commit_fault_hook = NULL;
		lt_alloc_target(old);
		if (publisher)
		{
			xt->base->ds->store->publish_manifest = NULL;
			xt->base->ds->store->publish_arg = NULL;
			if (rc != LT_OK)
				lt_namespace_publish_report(publisher, xt->relname);
		}
		if (rc == LT_ECONFLICT)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("lt_fdw: could not commit the changes to foreign table \"%s\": a concurrent transaction conflicts",
							xt->relname),
					 errdetail("%s (dataset %s, read version " UINT64_FORMAT ").", err.msg, xt->uri,
							   xt->base->version),
					 errhint("Retry the transaction.")));
		if (rc != LT_OK)
			txn_failed(xt, &err);
		elog(DEBUG1, "lt_fdw: committed version " UINT64_FORMAT " of %s (%d attempts)", res.version, xt->uri,
			 res.attempts);
		xt->committed_version = res.version;
		xt->cleanup = NULL;
		if (res.cleanup.due)
		{
			xt->cleanup = MemoryContextAlloc(xt->cxt, sizeof(lt_auto_cleanup));
			*xt->cleanup = res.cleanup;
		}
		xt->committed_ds = res.committed;
		xt->committed_append = res.adoption;
		/* the next statement's version, taken over by the read version's entry (dataset.c) */
		if (res.adoption)
			lt_dataset_offer_adoption(xt->base, res.adoption);
	}
}

static void
xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			commit_all();
			break;
		case XACT_EVENT_PRE_PREPARE:
			foreach(lc, tables)
			{
				LtXactTable *xt = lfirst(lc);
				const char *what = xt->pending_op ? xt->pending_op->what :
					xt->pending_key ? "sets the primary key of" :
					xt->pending_tracks != NIL ? "starts tracking field assignment of" :
					xt->pending_indexes != NIL ? "has created an index on" :
					xt->txn && (has_unapplied(xt) || !lt_txn_is_empty(xt->txn)) ? "has modified" : NULL;

				if (what)
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("lt_fdw: cannot PREPARE a transaction that %s foreign table \"%s\"", what,
									xt->relname),
							 errdetail("A Lance dataset has no two-phase commit; dataset %s.", xt->uri)));
			}
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			/* the files of indexes not committed go now; the states with the transaction's memory */
			foreach(lc, tables)
			{
				discard_indexes(lfirst(lc), InvalidSubTransactionId);
				discard_op(lfirst(lc), InvalidSubTransactionId);
			}
			break;
		case XACT_EVENT_COMMIT:
			/* committed: Lance's writers clean up now, after the commit and never failing it (maintain.c) */
			foreach(lc, tables)
			{
				LtXactTable *xt = lfirst(lc);

				if (xt->committed_version > 0 && xt->base != NULL && !OidIsValid(xt->ns_serverid))
				{
					struct lt_dataset *kept = xt->committed_ds;

					xt->committed_ds = NULL;	/* closed by the maintenance */
					lt_maintain_after_commit(xt->base->store, xt->uri, xt->relname, xt->committed_version, xt->cleanup,
											 xt->auto_compact, kept, xt->base->ds, xt->committed_append);
				}
			}
			break;
		default:
			/* commit and abort: the states go with the transaction's memory (marker_reset) */
			break;
	}
}

static void
subxact_callback(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	switch (event)
	{
		case SUBXACT_EVENT_START_SUB:
			foreach(lc, tables)
			{
				LtXactTable *xt = lfirst(lc);
				MemoryContext old;
				LtSavepoint *sp;

				if (xt->txn == NULL)
					continue;	/* row changes begun later are forgotten with their subtransaction */
				old = MemoryContextSwitchTo(xt->cxt);
				sp = palloc0(sizeof(LtSavepoint));
				sp->subid = mySubid;
				sp->in_pending = true;
				sp->n_files = xt->n_files;
				sp->n_addrs = xt->n_addrs;
				sp->n_removes = xt->n_removes;
				sp->n_unassign = xt->n_unassign;
				xt->savepoints = lappend(xt->savepoints, sp);
				MemoryContextSwitchTo(old);
			}
			break;
		case SUBXACT_EVENT_COMMIT_SUB:
			foreach(lc, tables)
			{
				LtXactTable *xt = lfirst(lc);
				ListCell   *sc;

				if (xt->created_subid == mySubid)
					xt->created_subid = parentSubid;
				if (xt->pending_key && xt->pending_key->subid >= mySubid)
					xt->pending_key->subid = parentSubid;
				if (xt->pending_op && xt->pending_op->subid >= mySubid)
					xt->pending_op->subid = parentSubid;
				if (xt->compacted_subid >= mySubid)
					xt->compacted_subid = parentSubid;
				foreach(sc, xt->pending_tracks)
				{
					LtPendingTrack *p = lfirst(sc);

					if (p->subid >= mySubid)
						p->subid = parentSubid;
				}
				foreach(sc, xt->pending_indexes)
				{
					LtPendingIndex *p = lfirst(sc);

					if (p->subid >= mySubid)
						p->subid = parentSubid;
				}
				foreach(sc, xt->overwrite_checks)
				{
					LtOverwriteCheck *oc = lfirst(sc);

					if (oc->subid >= mySubid)
						oc->subid = parentSubid;
				}
				foreach(sc, xt->savepoints)
				{
					LtSavepoint *sp = lfirst(sc);

					if (sp->subid >= mySubid)
						xt->savepoints = foreach_delete_current(xt->savepoints, sc);
				}
			}
			break;
		case SUBXACT_EVENT_ABORT_SUB:
			foreach(lc, tables)
			{
				LtXactTable *xt = lfirst(lc);
				ListCell   *sc;

				discard_meta(xt, mySubid);
				if (xt->txn == NULL ? !has_meta(xt) : xt->created_subid >= mySubid)
				{
					/* rows first modified inside the rolled back subtransaction (or nothing left): forget them */
					if (has_meta(xt))
						lfirst(lc) = split_meta(xt);
					else
						tables = foreach_delete_current(tables, lc);
					xt_release(xt);
					continue;
				}
				if (xt->compacted_subid != InvalidSubTransactionId && xt->compacted_subid >= mySubid)
				{
					/* the compaction's changes go with the savepoint (below): so does the mark */
					xt->compacted_subid = InvalidSubTransactionId;
					lt_txn_mark_compaction(xt->txn, false);
				}
				foreach(sc, xt->savepoints)
				{
					LtSavepoint *sp = lfirst(sc);

					if (sp->subid != mySubid)
						continue;
					if (sp->in_pending)
					{
						xt->n_files = sp->n_files;
						xt->n_addrs = sp->n_addrs;
						xt->n_removes = sp->n_removes;
						xt->n_unassign = sp->n_unassign;
					}
					else
					{
						/* everything unapplied came after the mark */
						xt->n_files = 0;
						xt->n_addrs = 0;
						xt->n_removes = 0;
						xt->n_unassign = 0;
						if (!xt->rollback_due || sp->mark < xt->rollback_mark)
							xt->rollback_mark = sp->mark;
						xt->rollback_due = true;
						xt->view_stale = true;
					}
					break;
				}
				foreach(sc, xt->savepoints)
				{
					LtSavepoint *sp = lfirst(sc);

					if (sp->subid >= mySubid)
						xt->savepoints = foreach_delete_current(xt->savepoints, sc);
				}
				/* the replaces of the rolled back subtransaction are gone: so are their checks */
				foreach(sc, xt->overwrite_checks)
				{
					LtOverwriteCheck *oc = lfirst(sc);

					if (oc->subid >= mySubid)
						xt->overwrite_checks = foreach_delete_current(xt->overwrite_checks, sc);
				}
			}
			break;
		default:
			break;
	}
}

void
lt_xact_init(void)
{
	DefineCustomEnumVariable("lt_fdw.crash_at_commit_point",
							 "Crash tests only: the backend kills itself (SIGKILL) at this point of its next Lance commit.",
							 NULL, &crash_at, -1, crash_points, PGC_SUSET,
							 GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("lt_fdw.test_commit_wait_lock",
							"Tests only: before its Lance commits, a transaction waits for the advisory lock with this key.",
							NULL, &test_commit_wait_lock, 0, INT_MIN, INT_MAX, PGC_SUSET,
							GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	RegisterXactCallback(xact_callback, NULL);
	RegisterSubXactCallback(subxact_callback, NULL);
}

void
lt_xact_set_hooks(const LtXactHooks *h)
{
	hooks = *h;
}

void
lt_xact_arm_crash(bool on)
{
	lt_commit_fault_hook = on && crash_at >= 0 ? crash_hook : NULL;
}

lt_code
lt_xact_commit_on_version(LtXactTable *xt, uint64 version, LtVersionCommit commit, void *arg, lt_error *err)
{
	lt_store   *store = NULL;
	lt_dataset *ds = NULL;
	lt_version_spec spec = {0};
	lt_code		rc;

	spec.version = version;
	rc = lt_open_store(xt->s3, xt->dir, &store, err);
	if (rc == LT_OK)
		rc = lt_dataset_open(store, "", &spec, &ds, err);
	if (rc == LT_OK)
	{
		lt_xact_arm_crash(true);
		rc = commit(ds, arg, err);
		lt_xact_arm_crash(false);
	}
	if (ds)
		lt_dataset_close(ds);
	if (store)
		lt_store_close(store);
	return rc;
}
