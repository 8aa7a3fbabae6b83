/*
 * dataset.h — library allocations in memory contexts, library errors as ereport, and the per-backend
 * cache of opened datasets with the snapshot rules that pick the version a statement reads (dataset.c).
 */
#ifndef LT_FDW_DATASET_H
#define LT_FDW_DATASET_H

#include "io/lt_store.h"
#include "table/lt_dataset.h"
#include "util/lt_status.h"

#include "option.h"
#include "store.h"

/* Route library allocations: returns the previous target. */
extern MemoryContext lt_alloc_target(MemoryContext cxt);

/*
 * A bump arena for a context whose library allocations all go at once (a scanner's, reset after each
 * fragment): small allocations are carved from blocks and their frees cost nothing, instead of a palloc
 * and a pfree each (a point lookup makes ~140). Bounded: big requests, and all once the arena holds
 * LT_ARENA_BUDGET, are palloc'd in cxt as usual. lt_alloc_target_arena routes allocations to it until the
 * next lt_alloc_target; lt_alloc_arena_reset goes with every reset of cxt (its blocks go with it, but the
 * first, which lives in home); lt_alloc_arena_forget before the arena's memory goes (an ERROR may
 * leave it routed).
 */
typedef struct LtAllocArena
{
	MemoryContext home;			/* the first block: kept across resets of cxt */
	MemoryContext cxt;			/* blocks after the first, and what the arena does not take */
	char	   *first;			/* the first block, in home */
	char	   *cur;
	char	   *end;
	Size		used;
} LtAllocArena;
extern MemoryContext lt_alloc_target_arena(LtAllocArena *arena);
extern void lt_alloc_arena_init(LtAllocArena *arena, MemoryContext home, MemoryContext cxt);
extern void lt_alloc_arena_reset(LtAllocArena *arena);
extern void lt_alloc_arena_forget(LtAllocArena *arena);
extern void lt_alloc_init(void);
extern void lt_dataset_init(void);	/* GUC lt_fdw.leader_versions (parallel workers) */
/* An allocator for library objects that allocate in cxt whatever the current target (lt_bufpool) */
struct lt_allocator;
extern void lt_allocator_in(MemoryContext cxt, struct lt_allocator *out);

/* ereport(ERROR) for a failed library call; `what` names the dataset/table. */
extern void lt_report(const lt_error *err, const char *what) pg_attribute_noreturn();
/* The same for a failed write ("writing ..." in the context). */
extern void lt_report_write(const lt_error *err, const char *what) pg_attribute_noreturn();

/*
 * A statement that writes data files (doing: "insert into", "update", "truncate", ...) refuses a dataset with a
 * blob column of a form lt_fdw does not write, before anything is written (issue 21): SQLSTATE 0A000.
 */
struct lt_dataset;
extern void lt_check_blob_writable(const char *relname, const char *uri, const struct lt_dataset *ds,
								   const char *doing);

/* An opened dataset at one version, held by the per-backend cache. */
typedef struct LtDatasetEntry
{
	char	   *dir;			/* key: dataset directory ... */
	char	   *identity;		/* ... the credentials it was read with (S3; "" for local) ... */
	uint64		version;		/* ... and version ... */
	char	   *branch;			/* ... of this branch ("" for main) */
	MemoryContext cxt;			/* every library allocation of store + dataset */
	lt_store   *store;
	lt_dataset *ds;
	int			pins;			/* scans using it now; pinned entries are never evicted */
	uint64		last_used;
	LocalTransactionId last_lxid;	/* the transaction that last looked it up (lt_dataset_advance not in it) */
	uint64		live_rows;
	struct lt_index_planner *planner;	/* index.c: the version's index readers, kept across scans */
	struct lt_file_cache *files;	/* data files kept open for point lookups (lt_dataset_file_cache) */
	struct lt_adoption *adopt;	/* what this backend's append on this version wrote (lt_dataset_offer_adoption) */
	/*
	 * Unique per backend for this entry at this version (a new one when it is advanced; 0 for a transaction's
	 * own-writes view): what a scan keeps across executions of a plan is keyed by it (scan.c).
	 */
	uint64		serial;
} LtDatasetEntry;

/*
 * Resolve the version a statement reads (snapshot rules: pinned by option, per transaction in
 * REPEATABLE READ/SERIALIZABLE, per statement in READ COMMITTED) and return the cached dataset,
 * pinned when `pin` (release with lt_dataset_unpin).
 */
extern LtDatasetEntry *lt_dataset_acquire(Oid relid, const LtTableOptions *opts, bool pin);
extern void lt_dataset_unpin(LtDatasetEntry *entry);
/*
 * Publish the versions this statement (READ COMMITTED) or transaction chose, for the parallel workers a
 * plan may start (they read the leader's choices from a GUC the parallel context copies): each scan of a
 * plan that may start workers calls it when it begins, before any worker starts; later choices of the
 * epoch are then published as they are made.
 */
extern void lt_dataset_publish_pins(void);
/*
 * A commit of this backend on entry's version appended only and wrote version a->version: kept (copied into
 * the entry's memory) so that the statement that reads that version takes it over (lt_dataset_adopt) instead
 * of reading and comparing the manifest it wrote.
 */
extern void lt_dataset_offer_adoption(LtDatasetEntry *entry, const struct lt_adoption *a);
/*
 * The entry's data files kept open across scans (created on first use, in the entry's memory): point
 * lookups through it read only the chunks holding their rows. Data files are immutable, so what it
 * holds is never stale; it goes with the entry.
 */
extern struct lt_file_cache *lt_dataset_file_cache(LtDatasetEntry *entry);
extern LtDatasetEntry *lt_dataset_open_latest(const LtS3Location *s3, const char *dir, const char *what);
/* A parallel worker: the version the leader resolved (pinned; release with lt_dataset_unpin). */
extern LtDatasetEntry *lt_dataset_acquire_version(Oid relid, const LtTableOptions *opts, uint64 version);

/*
 * The transaction's own-writes view of the dataset in dir (pinned when pin), or NULL when the transaction
 * has not modified it: lt_dataset_acquire reads it first for a table not pinned to a version. xact.c's
 * lt_xact_view, installed by lt_fdw.c when the module is loaded (this layer is below the transaction's).
 */
typedef LtDatasetEntry *(*LtDatasetViewHook) (const char *dir, bool pin);
extern void lt_dataset_set_view_hook(LtDatasetViewHook hook);

#endif
