/*
 * scan.h — planning and executing a foreign scan, serial and parallel (scan.c): the handler's scan entry
 * points, the columns of a table bound to a dataset version, the executor state explain.c reads.
 */
#ifndef LT_FDW_SCAN_H
#define LT_FDW_SCAN_H

#include "access/parallel.h"
#include "port/atomics.h"
#include "foreign/fdwapi.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/rel.h"

#include "table/lt_dataset.h"
#include "types/lt_schema.h"

#include "assign.h"
#include "convert.h"
#include "dataset.h"
#include "index.h"
#include "option.h"
#include "quals.h"

extern void ltGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern void ltGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern ForeignScan *ltGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
									 ForeignPath *best_path, List *tlist, List *scan_clauses,
									 Plan *outer_plan);
extern void ltBeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *ltIterateForeignScan(ForeignScanState *node);
extern void ltReScanForeignScan(ForeignScanState *node);
extern void ltEndForeignScan(ForeignScanState *node);
extern bool ltIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte);
extern Size ltEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt);
extern void ltInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate);
extern void ltReInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt, void *coordinate);
extern void ltInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc, void *coordinate);
extern void ltShutdownForeignScan(ForeignScanState *node);

/*
 * Row identity of UPDATE / DELETE: AddForeignUpdateTargets asks for ctid, which the scan fills with
 * the row's offset (block number) and 1 + its fragment's index in the version's fragment list
 * (offset number); modify.c maps it back to a row address through the same version.
 */
extern bool lt_scan_wants_row_identity(PlannerInfo *root, RelOptInfo *baserel);

/* The executor state of a scan, shared by scan.c and explain.c. */
typedef enum LtColumnKind
{
	LT_COL_FIELD,
	LT_COL_ROWID,
	LT_COL_ROWADDR,
	LT_COL_ASSIGNED				/* is_assigned(field): column option is_assigned (assign.c) */
} LtColumnKind;

typedef struct LtScanColumn
{
	AttrNumber	attnum;
	LtColumnKind kind;
	int			proj;			/* LT_COL_FIELD: index into the projection */
	LtConv	   *conv;
	const char *attname;
	bool		batch;			/* LT_COL_FIELD: converted by lt_conv_batch */
	struct LtAssignReader *assign;	/* LT_COL_ASSIGNED: the field's state (when the query reads it) */
} LtScanColumn;

/* A foreign table's columns bound to the fields of one dataset version: what scans and samples read. */
typedef struct LtColumnBinding
{
	int			n_columns;
	LtScanColumn *columns;
	int			n_proj;			/* the projection handed to the fragment scanner */
	const lt_field **proj;
	bool	   *room;			/* per projected field: read with header room (lt_scan_options.room) */
	bool		want_row_ids;
} LtColumnBinding;

/*
 * Check every column of rel against the dataset version (HV007 / HV004 / 42804 errors naming both) and
 * bind the columns the query reads: those in `retrieved`, or all of them when all_columns.
 */
extern void ltfdw_bind_columns(Relation rel, const LtTableOptions *opts, const LtDatasetEntry *entry,
							   List *retrieved, bool all_columns, LtColumnBinding *out);

/* Point the binding's blob columns at the data files of the fragment about to be read (convert.h). */
struct Lt__Pb__DataFragment;
extern void ltfdw_bind_blob_sources(const LtColumnBinding *b, lt_dataset *ds, const struct Lt__Pb__DataFragment *frag);

typedef struct LtKnnState LtKnnState;

/* A unit of work: physical rows [start, end) of one fragment (end 0 = the whole fragment). */
typedef struct LtScanUnit
{
	uint32		fragment;
	uint64		start;
	uint64		end;
} LtScanUnit;

/* Shared by the leader and the workers of a parallel scan (DSM). */
typedef struct LtParallelState
{
	uint64		version;		/* the version the leader resolved: every process reads it */
	pg_atomic_uint64 next_unit;
	/* the workers' statistics, added as each one shuts down, for the leader's EXPLAIN ANALYZE */
	pg_atomic_uint64 fragments_scanned;
	pg_atomic_uint64 rows_deleted;
	pg_atomic_uint64 rows_filtered;
	pg_atomic_uint64 bytes_read;
	pg_atomic_uint64 read_requests;
} LtParallelState;

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
	LtAllocArena arena;			/* their small ones (dataset.h), reset with lib_cxt */
	struct PlanBinding *binding;	/* the cached plan's kept binding this scan uses (scan.c), and its gen */
	uint64		binding_gen;
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
	int			chunk_cap;		/* rows of the matrix at most */
	int			chunk_alloc;	/* rows allocated (matrix_reserve grows them to chunk_cap) */
	Datum	   *chunk_values;	/* chunk_cap * natts */
	bool	   *chunk_nulls;
	bool	   *nulls_false;	/* per attribute: its chunk_nulls are false in every row of the matrix */
	int64		chunk_start;	/* batch row of the matrix's first row */
	int			chunk_len;
	int			chunk_next;		/* rows of the next chunk (grows from a small first chunk) */
	bool		local_check;	/* the filter has local checks for each row (set per chunk) */
	bool		fast_rows;		/* the chunk's rows need nothing but the slot (ltIterateForeignScan) */
	Datum	   *slot_values;	/* the slot's own arrays, given back at the end */
	bool	   *slot_isnull;

	/* statistics (EXPLAIN) */
	uint64		fragments_scanned;
	uint64		rows_deleted;
	uint64		rows_filtered;	/* removed by the pushed filter */
	uint64		bytes_read;
	uint64		read_requests;
	bool		stats_merged;	/* parallel: this process's share went to (or came from) DSM */

	/* is_assigned quals as an exact row mask per fragment (assign.c) */
	LtAssignMask amask;
	uint64		fragments_masked;	/* fragments (or units) no row of which passes: not opened */

	/* ORDER BY col <op> q LIMIT k answered by the scan (knn.c), NULL for a plain scan */
	LtKnnState *knn;
} LtScanState;


/*
 * A parallel scan's next unit of work, claimed from shared memory (every process claims each unit
 * once): the fragment index and its physical rows [start, end) (end 0: to its end); false when all
 * are taken.
 */

/* The share of a parallel scan's rows each process returns (PostgreSQL's own rule: the leader takes less). */
static inline double
ltfdw_parallel_divisor(int workers)
{
	double		d = workers;

	if (parallel_leader_participation && workers < 4)
		d += 1.0 - 0.3 * workers;
	return Max(d, 1.0);
}

/* The next unit of a parallel scan this process claims (knn.c ranks by them too); false when none is left. */
static inline bool
ltfdw_scan_claim_unit(LtScanState *st, size_t *fragment, uint64 *start, uint64 *end)
{
	uint64		u = pg_atomic_fetch_add_u64(&st->pstate->next_unit, 1);

	if (u >= (uint64) st->n_units)
		return false;
	*fragment = st->units[u].fragment;
	*start = st->units[u].start;
	*end = st->units[u].end;
	return true;
}

extern size_t ltfdw_prefetch_fragments(struct lt_dataset *ds, LtScanIndex *index, size_t fi, int proven_cols,
									   int other_cols, bool filter, MemoryContext cxt, const char *what);

#endif
