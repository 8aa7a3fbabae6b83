/*
 * progress.h — long lt_fdw work reported the PostgreSQL way (progress.c): lt_compact, lt_create_dataset
 * from a query, lt_add_column with a value and lt_alter_column_type in the view lt_stat_progress, index
 * builds in pg_stat_progress_create_index.
 */
#ifndef LT_FDW_PROGRESS_H
#define LT_FDW_PROGRESS_H

#include "postgres.h"

/* What runs (lt_stat_progress.operation) */
typedef enum LtProgressOp
{
	LT_PROGRESS_COMPACT = 1,
	LT_PROGRESS_CREATE = 2,
	LT_PROGRESS_ADD_COLUMN = 3,
	LT_PROGRESS_ALTER_TYPE = 4
} LtProgressOp;

/* Its phase (lt_stat_progress.phase) */
typedef enum LtProgressPhase
{
	LT_PROGRESS_PLANNING = 1,
	LT_PROGRESS_WRITING = 2
} LtProgressPhase;

/* Start reporting op on relid; totals unknown are -1. */
extern void lt_progress_begin(Oid relid, LtProgressOp op, LtProgressPhase phase, int64 fragments_total,
							  int64 rows_total);
extern void lt_progress_phase(LtProgressPhase phase, int64 fragments_total, int64 rows_total);
/* Fragments (or data files) and rows done so far; then the test pause (below). */
extern void lt_progress_done(int64 fragments_done, int64 rows_done);
extern void lt_progress_end(void);

/*
 * Tests only (lt_fdw.test_progress_wait_lock): after the first step of long work is reported, wait
 * until the advisory lock with this key can be taken (shared, to the transaction's end), so that a
 * second session sees the progress of work that is held mid-way. Never raises an error (it is called
 * from inside the library's loops too): an interrupt ends the wait, and the work's own check answers it.
 */
extern void lt_progress_test_pause(void);
extern void lt_progress_init(void);

#endif
