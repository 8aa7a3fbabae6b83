/*
 * lt_fdw.c — the foreign data wrapper's entry point: module initialisation and the handler.
 *
 * This layer is the only one that includes Postgres headers (src/lance/ never does). The rest of
 * the glue is split by concern, as listed in lt_fdw.h.
 */
#include "postgres.h"

#include "fmgr.h"
#include "foreign/fdwapi.h"

#include "lt_fdw.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(lt_fdw_handler);

void
_PG_init(void)
{
	/* every library allocation goes to Postgres memory contexts */
	lt_alloc_init();
	lt_dataset_init();
	lt_quals_init();
	lt_index_init();
	lt_upper_init();
	lt_xact_init();
	lt_overwrite_init();
	lt_merge_init();
	lt_store_init();

	/* what lower layers reach at run time (they know no file above them) */
	lt_set_handler_mark(ltGetForeignRelSize);
	lt_dataset_set_view_hook(lt_xact_view);
	lt_xact_set_hooks(&(LtXactHooks) {
		.commit_key = lt_keys_commit,
		.commit_indexes = lt_index_build_commit,
		.discard_index = lt_index_build_discard,
		.check_new_fragment = lt_overwrite_check_fragment,
	});
}

Datum
lt_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = ltGetForeignRelSize;
	routine->GetForeignPaths = ltGetForeignPaths;
	/* the scan entry points dispatch between base scans (scan.c) and aggregate scans (upper.c) */
	routine->GetForeignPlan = lt_upper_GetForeignPlan;
	routine->BeginForeignScan = lt_upper_BeginForeignScan;
	routine->IterateForeignScan = lt_upper_IterateForeignScan;
	routine->ReScanForeignScan = lt_upper_ReScanForeignScan;
	routine->EndForeignScan = lt_upper_EndForeignScan;
	routine->ExplainForeignScan = lt_upper_ExplainForeignScan;
	routine->GetForeignUpperPaths = ltGetForeignUpperPaths;
	routine->ImportForeignSchema = ltImportForeignSchema;
	routine->IsForeignScanParallelSafe = ltIsForeignScanParallelSafe;
	routine->EstimateDSMForeignScan = ltEstimateDSMForeignScan;
	routine->InitializeDSMForeignScan = ltInitializeDSMForeignScan;
	routine->ReInitializeDSMForeignScan = ltReInitializeDSMForeignScan;
	routine->InitializeWorkerForeignScan = ltInitializeWorkerForeignScan;
	routine->ShutdownForeignScan = ltShutdownForeignScan;
	routine->AnalyzeForeignTable = ltAnalyzeForeignTable;

	/* writes (modify.c, xact.c) */
	routine->AddForeignUpdateTargets = ltAddForeignUpdateTargets;
	routine->PlanForeignModify = ltPlanForeignModify;
	routine->BeginForeignModify = ltBeginForeignModify;
	routine->ExecForeignInsert = ltExecForeignInsert;
	routine->ExecForeignBatchInsert = ltExecForeignBatchInsert;
	routine->GetForeignModifyBatchSize = ltGetForeignModifyBatchSize;
	routine->ExecForeignUpdate = ltExecForeignUpdate;
	routine->ExecForeignDelete = ltExecForeignDelete;
	routine->EndForeignModify = ltEndForeignModify;
	routine->BeginForeignInsert = ltBeginForeignInsert;
	routine->EndForeignInsert = ltEndForeignInsert;
	routine->IsForeignRelUpdatable = ltIsForeignRelUpdatable;
	routine->ExplainForeignModify = ltExplainForeignModify;
	routine->ExecForeignTruncate = ltExecForeignTruncate;	/* merge.c */

	PG_RETURN_POINTER(routine);
}
