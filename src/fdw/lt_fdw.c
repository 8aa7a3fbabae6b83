/*
 * lt_fdw.c — the foreign data wrapper's entry points: the handler and the option validator.
 *
 * This is the only layer that includes Postgres headers (src/lance/ never does). For now the handler
 * returns an FdwRoutine whose scan callbacks report "not implemented"; the read path, the write path,
 * IMPORT FOREIGN SCHEMA and the real options (server root, table path/version/tag, column_name,
 * S3 settings, user-mapping secrets) are added by later changes. Until then every option is unknown
 * and rejected, so nothing can be configured that would silently be ignored.
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "catalog/pg_attribute.h"
#include "commands/defrem.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(lt_fdw_handler);
PG_FUNCTION_INFO_V1(lt_fdw_validator);

/*
 * The options lt_fdw accepts, with the catalog they may appear in. Empty for now: later changes add
 * root/endpoint/region/... (server), path/version/tag (table), column_name (column) and the
 * aws_* secrets (user mapping), each with its own value checks and privilege checks.
 */
typedef struct LtFdwOption
{
	const char *name;
	Oid			context;		/* ForeignServerRelationId, ForeignTableRelationId, ... */
} LtFdwOption;

static const LtFdwOption lt_fdw_options[] = {
	{NULL, InvalidOid}
};

static const char *
lt_fdw_context_name(Oid context)
{
	switch (context)
	{
		case ForeignDataWrapperRelationId:
			return "foreign-data wrapper";
		case ForeignServerRelationId:
			return "server";
		case UserMappingRelationId:
			return "user mapping";
		case ForeignTableRelationId:
			return "foreign table";
		case AttributeRelationId:
			return "column";
		default:
			return "object";
	}
}

static bool
lt_fdw_is_valid_option(const char *name, Oid context)
{
	for (const LtFdwOption *opt = lt_fdw_options; opt->name != NULL; opt++)
	{
		if (opt->context == context && strcmp(opt->name, name) == 0)
			return true;
	}
	return false;
}

/*
 * lt_fdw_validator(options text[], catalog oid): called for CREATE/ALTER of the wrapper, a server, a
 * user mapping, a foreign table and its columns.
 */
Datum
lt_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	ListCell   *cell;

	foreach(cell, options)
	{
		DefElem    *def = (DefElem *) lfirst(cell);

		if (!lt_fdw_is_valid_option(def->defname, catalog))
		{
			StringInfoData valid;

			initStringInfo(&valid);
			for (const LtFdwOption *opt = lt_fdw_options; opt->name != NULL; opt++)
			{
				if (opt->context == catalog)
					appendStringInfo(&valid, "%s%s", valid.len > 0 ? ", " : "", opt->name);
			}

			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("lt_fdw: invalid option \"%s\" for a %s",
							def->defname, lt_fdw_context_name(catalog)),
					 valid.len > 0
					 ? errhint("Valid options in this context are: %s.", valid.data)
					 : errhint("lt_fdw accepts no options for a %s yet.",
							   lt_fdw_context_name(catalog))));
		}
	}

	PG_RETURN_VOID();
}

/* ---- scan callbacks: the read path is not implemented yet -------------------------------- */

static void
lt_not_implemented(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("lt_fdw: scanning is not implemented yet")));
}

static void
ltGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	lt_not_implemented();
}

static void
ltGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	lt_not_implemented();
}

static ForeignScan *
ltGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
				 ForeignPath *best_path, List *tlist, List *scan_clauses, Plan *outer_plan)
{
	lt_not_implemented();
	return NULL;				/* not reached */
}

static void
ltBeginForeignScan(ForeignScanState *node, int eflags)
{
	lt_not_implemented();
}

static TupleTableSlot *
ltIterateForeignScan(ForeignScanState *node)
{
	lt_not_implemented();
	return NULL;				/* not reached */
}

static void
ltReScanForeignScan(ForeignScanState *node)
{
	lt_not_implemented();
}

static void
ltEndForeignScan(ForeignScanState *node)
{
	/* nothing was started */
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

	PG_RETURN_POINTER(routine);
}
