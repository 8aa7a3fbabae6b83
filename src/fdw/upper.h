/*
 * upper.h — aggregate pushdown's planning (upper.c): GetForeignUpperPaths, the plan of an aggregate
 * ForeignScan, and what upper_exec.c reads of it (the fdw_private slots, the aggregates computed here,
 * the value classes of columns).
 */
#ifndef LT_FDW_UPPER_H
#define LT_FDW_UPPER_H

#include "foreign/fdwapi.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

#include "convert.h"

#define LT_UPPER_MARKER "lt_fdw aggregate"

/*
 * fdw_private of an aggregate ForeignScan. The pushed WHERE quals travel here, not in fdw_exprs: setrefs
 * would resolve the base relation's Vars in fdw_exprs against fdw_scan_tlist (the aggregated row).
 */
enum LtUpperPrivateIndex
{
	LtUpperPrivateMarker,		/* String LT_UPPER_MARKER */
	LtUpperPrivateRelid,		/* Integer: OID of the foreign table */
	LtUpperPrivateRemoteExprs,	/* List of the WHERE quals, translated exactly (quals.c) */
	LtUpperPrivateVarno,		/* Integer: varno of the base relation in them */
	LtUpperPrivateVersion		/* String: the version planning classified them against */
};

typedef enum LtAggKind
{
	LT_AGG_COUNT_STAR,
	LT_AGG_COUNT,
	LT_AGG_SUM_INT,				/* sum(int2/int4) -> bigint */
	LT_AGG_SUM_INT8,			/* sum(int8) -> numeric */
	LT_AGG_SUM_FLOAT4,
	LT_AGG_SUM_FLOAT8,
	LT_AGG_SUM_NUMERIC,
	LT_AGG_AVG_INT,				/* avg(int2/int4) -> numeric */
	LT_AGG_AVG_INT8,
	LT_AGG_AVG_FLOAT,			/* avg(float4/float8) -> double */
	LT_AGG_AVG_NUMERIC,
	LT_AGG_MIN,
	LT_AGG_MAX
} LtAggKind;

/* How the values of a column are loaded for aggregation. */
typedef enum LtValClass
{
	LT_VAL_NONE,
	LT_VAL_INT,					/* an integer field read as int2/int4/int8: int64 */
	LT_VAL_FLOAT4,				/* float16/float32 read as real: double (exact) */
	LT_VAL_FLOAT8,				/* any float field read as double precision */
	LT_VAL_DECIMAL,				/* numeric from decimal128, uint64 or an integer: int128 unscaled */
	LT_VAL_DATUM,				/* date/time/timestamp: the scan's conversion, a by-value Datum */
	LT_VAL_BOOL					/* boolean (grouping and count only) */
} LtValClass;

/* The aggregates computed here: function, kind, declared argument type (InvalidOid: any). */
typedef struct LtAggDef
{
	Oid			fn;
	LtAggKind	kind;
	Oid			argtype;
} LtAggDef;
extern const LtAggDef lt_upper_aggs[];
/* The index of fn in lt_upper_aggs, or -1. */
extern int	lt_upper_agg_lookup(Oid fn);
/* The value class of a conversion (see upper.c), the scale and enforced precision of numerics. */
extern LtValClass lt_upper_value_class(const LtConv *conv, int *scale, int *precision);
/* Can `kind` over a value of class vc be computed here? */
extern bool lt_upper_agg_accepts(LtAggKind kind, LtValClass vc);
/* Is the ForeignScan an aggregate scan (its first fdw_private slot the marker), not a base scan? */
extern bool lt_upper_is_agg_plan(ForeignScan *fsplan);

extern void lt_upper_init(void);	/* GUC lt_fdw.enable_aggregate_pushdown */
extern void ltGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
								   RelOptInfo *output_rel, void *extra);
/* The handler's GetForeignPlan: aggregate scans planned here, the others by scan.c. */
extern ForeignScan *lt_upper_GetForeignPlan(PlannerInfo *root, RelOptInfo *foreignrel, Oid foreigntableid,
											ForeignPath *best_path, List *tlist, List *scan_clauses,
											Plan *outer_plan);

#endif
