/*
 * progress.c — the progress of long lt_fdw work, in PostgreSQL's progress reporting (pgstat_progress_*).
 *
 * PostgreSQL's command types are a fixed list an extension cannot extend, so lt_fdw's rewrites
 * (lt_compact, lt_create_dataset from a query, lt_add_column with a value, lt_alter_column_type) report
 * as the nearest one, COPY FROM: rows are written into a table from a source. COPY's own counters are
 * kept true (command FROM, type CALLBACK, tuples_processed = rows written), so pg_stat_progress_copy
 * shows the rows so far; lt_fdw's own counters sit in slots COPY does not use and the extension's view
 * lt_stat_progress decodes them (operation, phase, fragments and rows done of total), picking lt_fdw's
 * rows by a marker in the last slot. Index builds report in pg_stat_progress_create_index (index_build.c).
 */
#include "postgres.h"

#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/backend_progress.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#include "progress.h"

/* lt_fdw's slots of the COPY progress row (param11..param16 and param20 of pg_stat_get_progress_info) */
#define LT_PROGRESS_OPERATION		10
#define LT_PROGRESS_PHASE			11
#define LT_PROGRESS_FRAGMENTS_TOTAL 12
#define LT_PROGRESS_FRAGMENTS_DONE	13
#define LT_PROGRESS_ROWS_TOTAL		14
#define LT_PROGRESS_ROWS_DONE		15
#define LT_PROGRESS_MARKER			19
#define LT_PROGRESS_MARKER_VALUE	0x4c54	/* 'LT' (19540): the row is lt_fdw's, not a COPY's */

static int	test_progress_wait_lock = 0;

void
lt_progress_begin(Oid relid, LtProgressOp op, LtProgressPhase phase, int64 fragments_total, int64 rows_total)
{
	const int	index[] = {PROGRESS_COPY_COMMAND, PROGRESS_COPY_TYPE, LT_PROGRESS_MARKER, LT_PROGRESS_OPERATION,
		LT_PROGRESS_PHASE, LT_PROGRESS_FRAGMENTS_TOTAL, LT_PROGRESS_ROWS_TOTAL};
	const int64 value[] = {PROGRESS_COPY_COMMAND_FROM, PROGRESS_COPY_TYPE_CALLBACK, LT_PROGRESS_MARKER_VALUE, op,
		phase, fragments_total, rows_total};

	pgstat_progress_start_command(PROGRESS_COMMAND_COPY, relid);
	pgstat_progress_update_multi_param(lengthof(index), index, value);
}

void
lt_progress_phase(LtProgressPhase phase, int64 fragments_total, int64 rows_total)
{
	const int	index[] = {LT_PROGRESS_PHASE, LT_PROGRESS_FRAGMENTS_TOTAL, LT_PROGRESS_ROWS_TOTAL};
	const int64 value[] = {phase, fragments_total, rows_total};

	pgstat_progress_update_multi_param(lengthof(index), index, value);
}

void
lt_progress_done(int64 fragments_done, int64 rows_done)
{
	const int	index[] = {LT_PROGRESS_FRAGMENTS_DONE, LT_PROGRESS_ROWS_DONE, PROGRESS_COPY_TUPLES_PROCESSED};
	const int64 value[] = {fragments_done, rows_done, rows_done};

	pgstat_progress_update_multi_param(lengthof(index), index, value);
	lt_progress_test_pause();
}

void
lt_progress_end(void)
{
	pgstat_progress_end_command();
}

void
lt_progress_test_pause(void)
{
	static LocalTransactionId held_in = InvalidLocalTransactionId;

	if (test_progress_wait_lock == 0 || held_in == MyProc->lxid)
		return;
	while (!DatumGetBool(DirectFunctionCall1(pg_try_advisory_xact_lock_shared_int8,
											 Int64GetDatum((int64) test_progress_wait_lock))))
	{
		if (InterruptPending)
			return;				/* the work's own interrupt check ends it */
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	held_in = MyProc->lxid;
}

void
lt_progress_init(void)
{
	DefineCustomIntVariable("lt_fdw.test_progress_wait_lock",
							"Tests only: long work waits for the advisory lock with this key after its first reported step.",
							NULL, &test_progress_wait_lock, 0, INT_MIN, INT_MAX, PGC_SUSET,
							GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
}
