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
}

Datum
lt_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = ltGetForeignRelSize;
	routine->GetForeignPaths = ltGetForeignPaths;
	routine->GetForeignPlan = ltGetForeignPlan;
	routine->BeginForeignScan = ltBeginForeignScan;
	routine->IterateForeignScan = ltIterateForeignScan;
	routine->ReScanForeignScan = ltReScanForeignScan;
	routine->EndForeignScan = ltEndForeignScan;
	routine->ExplainForeignScan = ltExplainForeignScan;
	routine->ImportForeignSchema = ltImportForeignSchema;

	PG_RETURN_POINTER(routine);
}
