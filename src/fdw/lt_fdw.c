/*
 * lt_fdw.c — the foreign data wrapper's entry point: module initialisation and the handler.
 *
 * This layer is the only one that includes Postgres headers (src/lance/ never does). The glue is a
 * stack of files split by concern, each with its header (a header belongs to its .c file's layer); a
 * file includes and calls only its own layer and the layers below (test/layering.sh, FDW_LAYERS):
 *
 *   lt_fdw.c       the handler and _PG_init, which installs what lower layers reach at run time
 *   merge.c        lt_merge_insert(): upsert (Lance's merge-insert) as one commit; TRUNCATE
 *   lifecycle.c    lt_create_dataset(): a dataset from SQL (Overwrite at PRE_COMMIT); lt_compact(): Rewrite
 *   modify.c       INSERT / UPDATE / DELETE / COPY FROM: row identity, column builders, data files
 *   upper_exec.c   aggregate scans over column vectors; the handler's scan entry points (dispatch)
 *   overwrite.c    INSERT OVERWRITE … WHERE: predicate binding, delete set, validation, commit check
 *   upper.c        aggregate pushdown's planning: what can be pushed, paths, costs, the plan
 *   scan.c         planning and executing a foreign scan (serial and parallel)
 *   explain.c      EXPLAIN output
 *   analyze.c      ANALYZE: a uniform sample of live rows read by random access; lt_last_analyze()
 *   import.c       IMPORT FOREIGN SCHEMA
 *   admin.c        lt_versions(), lt_fragments(), lt_cleanup()
 *   index.c        scalar indexes in scans (lookups per (re)scan), index costing, EXPLAIN lines, lt_indexes()
 *   index_build.c  lt_create_index(): build now, CreateIndex commit at PRE_COMMIT
 *   keys.c         keyed tables: the primary key checked per written row; lt_set_primary_key()
 *   convert.c      the type mapping: checks of declared columns against fields, lt_array slot -> Datum
 *   convert_write.c  Datum -> lt_array: the write side of the type mapping, with range checks
 *   quals.c        WHERE quals -> the library's filter IR (classification at plan time, the filter at
 *                  execution), parameters
 *   xact.c         one lt_txn per modified dataset per transaction: savepoints, own writes, commit
 *   namespace.c    tables addressed by identifier in a Lance namespace (option.c's resolver)
 *   dataset.c      library allocations in memory contexts, lt_code -> SQLSTATE, version resolution
 *                  (snapshots), the per-backend cache of opened datasets
 *   option.c       the option table, the validator, option lookup, the privilege rules, lt_check_lt_table
 *   store.c        where a dataset's bytes live: a local directory or S3, and with which credentials
 *
 * Where a lower layer must reach a higher one at run time it takes a callback, installed below: the
 * dataset cache asks the transaction for its own-writes view, the transaction's commit calls the key and
 * index commits and the replaces' check, and lt_check_lt_table knows the handler by its GetForeignRelSize.
 */
#include "postgres.h"

#include "fmgr.h"
#include "foreign/fdwapi.h"
#include "utils/guc.h"

#include "analyze.h"
#include "assign.h"
#include "dataset.h"
#include "import.h"
#include "index.h"
#include "index_build.h"
#include "keys.h"
#include "merge.h"
#include "modify.h"
#include "namespace.h"
#include "option.h"
#include "overwrite.h"
#include "quals.h"
#include "scan.h"
#include "store.h"
#include "upper.h"
#include "upper_exec.h"
#include "progress.h"
#include "xact.h"
#include "knn.h"

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
	lt_progress_init();
	lt_assign_init();
	lt_overwrite_init();
	lt_merge_init();
	lt_store_init();

	/* what lower layers reach at run time (they know no file above them) */
	lt_set_handler_mark(ltGetForeignRelSize);
	lt_set_namespace_resolver(lt_namespace_resolve);
	lt_dataset_set_view_hook(lt_xact_view);
	lt_xact_set_hooks(&(LtXactHooks) {
		.commit_key = lt_keys_commit,
		.commit_indexes = lt_index_build_commit,
		.commit_tracks = lt_assign_commit_tracks,
		.discard_index = lt_index_build_discard,
		.check_new_fragment = lt_overwrite_check_fragment,
	});
	ltfdw_knn_init();
	/* last: every lt_fdw.* setting is defined above; a misspelled one is now an error */
	MarkGUCPrefixReserved("lt_fdw");
}

Datum
lt_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = ltGetForeignRelSize;
	routine->GetForeignPaths = ltGetForeignPaths;
	/* the scan entry points dispatch between base scans (scan.c) and aggregate scans (upper_exec.c) */
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
