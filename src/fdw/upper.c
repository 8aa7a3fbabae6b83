/*
 * upper.c — aggregate pushdown's planning: GetForeignUpperPaths for UPPERREL_GROUP_AGG.
 *
 * What is pushed. A query that aggregates one foreign table, with
 *   count(*), count(col), sum, avg, min, max over columns mapped to int2/int4/int8, float4/float8 and numeric
 *   (from decimal128, uint64 or an integer field), and min/max over date, time, timestamp and timestamptz,
 *   optionally GROUP BY one column (an integer, text with a deterministic collation, float, date/time, bool),
 *   optionally HAVING (evaluated by Postgres on the aggregated rows, as the ForeignScan's qual),
 * and no WHERE quals (until src/fdw/quals.c can hand over an exact filter) becomes a ForeignScan over the
 * upper relation that returns the aggregated rows: fdw_scan_tlist holds the group key (a Var) and the
 * Aggrefs, as in postgres_fdw's aggregate pushdown; expressions over them are computed by Postgres on top.
 * Anything else (DISTINCT/ORDER BY/FILTER inside an aggregate, other aggregates, expressions as arguments,
 * grouping sets, more than one grouping column, a GROUP BY whose hash table would not fit in hash_mem) stays
 * with Postgres. The GUC lt_fdw.enable_aggregate_pushdown (default on) turns it all off.
 *
 * count(*) alone (no WHERE, no GROUP BY) is answered from the manifest of the version the statement reads
 * (so is count(col) of a field the schema declares non-nullable):
 * the sum of the fragments' live rows (physical rows minus deletions). No data file is opened.
 *
 * Execution (the aggregate scan, over decoded column vectors) is upper_exec.c's; this file is the
 * planning: which aggregates and grouping keys can be pushed, the path, its costs and the plan.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/selfuncs.h"
#include "utils/typcache.h"

#include "convert.h"
#include "dataset.h"
#include "option.h"
#include "quals.h"
#include "scan.h"
#include "upper.h"

static bool enable_aggregate_pushdown = true;

/* ---- what can be pushed ----------------------------------------------------------------------- */

/* The aggregates computed here (lt_upper_agg_lookup finds one by function). */
const LtAggDef lt_upper_aggs[] =
{
	{F_COUNT_, LT_AGG_COUNT_STAR, InvalidOid},
	{F_COUNT_ANY, LT_AGG_COUNT, InvalidOid},
	{F_SUM_INT2, LT_AGG_SUM_INT, INT2OID},
	{F_SUM_INT4, LT_AGG_SUM_INT, INT4OID},
	{F_SUM_INT8, LT_AGG_SUM_INT8, INT8OID},
	{F_SUM_FLOAT4, LT_AGG_SUM_FLOAT4, FLOAT4OID},
	{F_SUM_FLOAT8, LT_AGG_SUM_FLOAT8, FLOAT8OID},
	{F_SUM_NUMERIC, LT_AGG_SUM_NUMERIC, NUMERICOID},
	{F_AVG_INT2, LT_AGG_AVG_INT, INT2OID},
	{F_AVG_INT4, LT_AGG_AVG_INT, INT4OID},
	{F_AVG_INT8, LT_AGG_AVG_INT8, INT8OID},
	{F_AVG_FLOAT4, LT_AGG_AVG_FLOAT, FLOAT4OID},
	{F_AVG_FLOAT8, LT_AGG_AVG_FLOAT, FLOAT8OID},
	{F_AVG_NUMERIC, LT_AGG_AVG_NUMERIC, NUMERICOID},
	{F_MIN_INT2, LT_AGG_MIN, INT2OID},
	{F_MIN_INT4, LT_AGG_MIN, INT4OID},
	{F_MIN_INT8, LT_AGG_MIN, INT8OID},
	{F_MIN_FLOAT4, LT_AGG_MIN, FLOAT4OID},
	{F_MIN_FLOAT8, LT_AGG_MIN, FLOAT8OID},
	{F_MIN_NUMERIC, LT_AGG_MIN, NUMERICOID},
	{F_MIN_DATE, LT_AGG_MIN, DATEOID},
	{F_MIN_TIME, LT_AGG_MIN, TIMEOID},
	{F_MIN_TIMESTAMP, LT_AGG_MIN, TIMESTAMPOID},
	{F_MIN_TIMESTAMPTZ, LT_AGG_MIN, TIMESTAMPTZOID},
	{F_MAX_INT2, LT_AGG_MAX, INT2OID},
	{F_MAX_INT4, LT_AGG_MAX, INT4OID},
	{F_MAX_INT8, LT_AGG_MAX, INT8OID},
	{F_MAX_FLOAT4, LT_AGG_MAX, FLOAT4OID},
	{F_MAX_FLOAT8, LT_AGG_MAX, FLOAT8OID},
	{F_MAX_NUMERIC, LT_AGG_MAX, NUMERICOID},
	{F_MAX_DATE, LT_AGG_MAX, DATEOID},
	{F_MAX_TIME, LT_AGG_MAX, TIMEOID},
	{F_MAX_TIMESTAMP, LT_AGG_MAX, TIMESTAMPOID},
	{F_MAX_TIMESTAMPTZ, LT_AGG_MAX, TIMESTAMPTZOID},
};

static bool
is_float_field(const lt_field *f)
{
	return f->type == LT_TYPE_FLOAT16 || f->type == LT_TYPE_FLOAT32 || f->type == LT_TYPE_FLOAT64;
}

/*
 * The value class of a conversion, and for numerics the scale of the unscaled integers and the precision
 * the declared typmod enforces (0 = none).
 */
LtValClass
lt_upper_value_class(const LtConv *conv, int *scale, int *precision)
{
	const lt_field *f = conv->field;

	*scale = 0;
	*precision = 0;
	if (conv->kind != LT_CONV_SCALAR)
		return LT_VAL_NONE;
	switch (conv->typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return lt_type_is_int64_exact(f->type) ? LT_VAL_INT : LT_VAL_NONE;
		case FLOAT4OID:
			return (f->type == LT_TYPE_FLOAT16 || f->type == LT_TYPE_FLOAT32) ? LT_VAL_FLOAT4 : LT_VAL_NONE;
		case FLOAT8OID:
			return is_float_field(f) ? LT_VAL_FLOAT8 : LT_VAL_NONE;
		case NUMERICOID:
			{
				int32		tm = conv->typmod;
				int			tprec = tm >= VARHDRSZ ? ((tm - VARHDRSZ) >> 16) & 0xffff : -1;
				int			tscale = tm >= VARHDRSZ ? (tm - VARHDRSZ) & 0xffff : -1;

				if (lt_type_is_int64_exact(f->type) || f->type == LT_TYPE_UINT64)
				{
					/* the scan reads these without applying a typmod: push only when none could matter */
					if (tm < VARHDRSZ || (tscale == 0 && tprec >= 20))
						return LT_VAL_DECIMAL;
					return LT_VAL_NONE;
				}
				if (f->type == LT_TYPE_DECIMAL128 && f->scale >= 0 && f->scale <= 38)
				{
					*scale = f->scale;
					if (tm < VARHDRSZ)
						return LT_VAL_DECIMAL;
					if (tscale != f->scale)
						return LT_VAL_NONE;
					if (tprec < 38)
						*precision = tprec;
					return LT_VAL_DECIMAL;
				}
				return LT_VAL_NONE;
			}
		case DATEOID:
			return (f->type == LT_TYPE_DATE32 || f->type == LT_TYPE_DATE64) ? LT_VAL_DATUM : LT_VAL_NONE;
		case TIMEOID:
			return (f->type == LT_TYPE_TIME32 || f->type == LT_TYPE_TIME64) ? LT_VAL_DATUM : LT_VAL_NONE;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return f->type == LT_TYPE_TIMESTAMP ? LT_VAL_DATUM : LT_VAL_NONE;
		case BOOLOID:
			return f->type == LT_TYPE_BOOL ? LT_VAL_BOOL : LT_VAL_NONE;
		default:
			return LT_VAL_NONE;
	}
}

/* Can `kind` over a value of class vc (declared type argtype) be computed here? */
bool
lt_upper_agg_accepts(LtAggKind kind, LtValClass vc)
{
	switch (kind)
	{
		case LT_AGG_COUNT_STAR:
			return true;
		case LT_AGG_COUNT:
			return vc != LT_VAL_NONE;
		case LT_AGG_SUM_INT:
		case LT_AGG_SUM_INT8:
		case LT_AGG_AVG_INT:
		case LT_AGG_AVG_INT8:
			return vc == LT_VAL_INT;
		case LT_AGG_SUM_FLOAT4:
			return vc == LT_VAL_FLOAT4;
		case LT_AGG_SUM_FLOAT8:
			return vc == LT_VAL_FLOAT8;
		case LT_AGG_AVG_FLOAT:
			return vc == LT_VAL_FLOAT4 || vc == LT_VAL_FLOAT8;
		case LT_AGG_SUM_NUMERIC:
		case LT_AGG_AVG_NUMERIC:
			return vc == LT_VAL_DECIMAL;
		case LT_AGG_MIN:
		case LT_AGG_MAX:
			return vc == LT_VAL_INT || vc == LT_VAL_FLOAT4 || vc == LT_VAL_FLOAT8 || vc == LT_VAL_DECIMAL ||
				vc == LT_VAL_DATUM;
	}
	return false;
}

int
lt_upper_agg_lookup(Oid fn)
{
	for (int i = 0; i < lengthof(lt_upper_aggs); i++)
		if (lt_upper_aggs[i].fn == fn)
			return i;
	return -1;
}

/* ---- planning ----------------------------------------------------------------------------------- */

/* What planning learned about a grouped relation (grouped_rel->fdw_private). */
typedef struct LtUpperPlan
{
	List	   *tlist;			/* fdw_scan_tlist */
	List	   *having;			/* HAVING quals (Exprs), evaluated locally */
	Oid			relid;			/* the foreign table */
	List	   *remote_exprs;	/* WHERE quals, all translated into the filter IR (quals.c) */
	Index		varno;			/* of the base relation's Vars in remote_exprs */
	uint64		version;		/* the version planning classified the quals against */
} LtUpperPlan;

/* Context of the planning checks: the base relation and its dataset. */
typedef struct LtUpperCheck
{
	PlannerInfo *root;
	RelOptInfo *input_rel;
	Oid			relid;
	LtDatasetEntry *entry;
	int			n_aggs;
	int			n_columns;		/* distinct columns read */
	Bitmapset  *columns;
	double		width;			/* of the columns read */
	bool		count_star_only;
} LtUpperCheck;

/* The conversion of a column of the base relation, or NULL when it cannot be read here. */
static LtConv *
column_conv(LtUpperCheck *chk, Var *var)
{
	char	   *attname;
	const lt_field *f;
	char	   *why;
	Oid			typid;
	int32		typmod;
	Oid			collid;

	if (var->varno != chk->input_rel->relid || var->varlevelsup != 0 || var->varattno <= 0)
		return NULL;
	attname = get_attname(chk->relid, var->varattno, true);
	if (attname == NULL)
		return NULL;
	f = lt_schema_find_name(chk->entry->ds->schema, lt_column_field_name(chk->relid, var->varattno, attname));
	if (f == NULL)
		return NULL;
	get_atttypetypmodcoll(chk->relid, var->varattno, &typid, &typmod, &collid);
	if (typid != var->vartype)
		return NULL;
	return lt_conv_build(f, typid, typmod, &why);
}

static void
note_column(LtUpperCheck *chk, Var *var)
{
	if (!bms_is_member(var->varattno, chk->columns))
	{
		chk->columns = bms_add_member(chk->columns, var->varattno);
		chk->n_columns++;
		chk->width += get_typavgwidth(var->vartype, var->vartypmod);
	}
}

static bool
aggref_ok(LtUpperCheck *chk, Aggref *agg)
{
	int			k;
	bool		was_count_only;
	TargetEntry *tle;
	LtConv	   *conv;
	int			scale,
				precision;

	if (agg->aggsplit != AGGSPLIT_SIMPLE || agg->aggorder != NIL || agg->aggdistinct != NIL ||
		agg->aggfilter != NULL || agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		agg->aggdirectargs != NIL || agg->aggvariadic)
		return false;
	k = lt_upper_agg_lookup(agg->aggfnoid);
	if (k < 0)
		return false;
	chk->n_aggs++;
	if (lt_upper_aggs[k].kind == LT_AGG_COUNT_STAR)
		return agg->aggstar && agg->args == NIL;
	was_count_only = chk->count_star_only;
	chk->count_star_only = false;
	if (agg->aggstar || list_length(agg->args) != 1)
		return false;
	tle = linitial_node(TargetEntry, agg->args);
	if (!IsA(tle->expr, Var))
		return false;
	conv = column_conv(chk, (Var *) tle->expr);
	if (conv == NULL)
		return false;
	/* count(col) of a field that cannot hold nulls counts the rows: the manifest answers it too */
	if (lt_upper_aggs[k].kind == LT_AGG_COUNT && !conv->field->nullable)
		chk->count_star_only = was_count_only;
	if (OidIsValid(lt_upper_aggs[k].argtype) && lt_upper_aggs[k].argtype != conv->typid)
		return false;
	if (!lt_upper_agg_accepts(lt_upper_aggs[k].kind, lt_upper_value_class(conv, &scale, &precision)))
		return false;
	note_column(chk, (Var *) tle->expr);
	return true;
}

/* Can the grouping key (a Var with its SortGroupClause) be hashed here with Postgres's equality? */
static bool
group_key_ok(LtUpperCheck *chk, Var *var, SortGroupClause *sgc)
{
	LtConv	   *conv = column_conv(chk, var);
	TypeCacheEntry *tce;
	int			scale,
				precision;
	LtValClass	vc;

	if (conv == NULL || conv->kind != LT_CONV_SCALAR)
		return false;
	tce = lookup_type_cache(var->vartype, TYPECACHE_EQ_OPR);
	if (!OidIsValid(sgc->eqop) || sgc->eqop != tce->eq_opr)
		return false;
	if (var->vartype == TEXTOID)
	{
		if ((conv->field->type != LT_TYPE_UTF8 && conv->field->type != LT_TYPE_LARGE_UTF8) ||
			!OidIsValid(var->varcollid) || !get_collation_isdeterministic(var->varcollid))
			return false;
	}
	else
	{
		vc = lt_upper_value_class(conv, &scale, &precision);
		if (vc != LT_VAL_INT && vc != LT_VAL_FLOAT4 && vc != LT_VAL_FLOAT8 && vc != LT_VAL_DATUM &&
			vc != LT_VAL_BOOL)
			return false;
	}
	note_column(chk, var);
	return true;
}

static void
add_grouping_path(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *grouped_rel,
				  GroupPathExtraData *extra)
{
	Query	   *parse = root->parse;
	PathTarget *target = grouped_rel->reltarget;
	RangeTblEntry *rte = planner_rt_fetch(input_rel->relid, root);
	LtUpperCheck chk = {0};
	LtPlanState *ips;
	List	   *remote_exprs = NIL;
	LtTableOptions opts;
	LtUpperPlan *up;
	List	   *tlist = NIL;
	List	   *others = NIL;
	List	   *having = NIL;
	Var		   *key = NULL;
	ListCell   *lc;
	int			i;
	double		tuples,
				num_groups,
				rows;
	Cost		startup_cost,
				total_cost;
	QualCost	having_cost;
	Bitmapset  *qual_attrs = NULL;
	ForeignPath *path;

	if (parse->groupingSets || parse->hasTargetSRFs || list_length(parse->groupClause) > 1)
		return;
	if (extra->patype != PARTITIONWISE_AGGREGATE_NONE)
		return;
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_FOREIGN_TABLE)
		return;
	if (!bms_is_empty(input_rel->lateral_relids))
		return;
	/* WHERE quals: pushed only when quals.c translates every one of them exactly */
	ips = input_rel->fdw_private;
	if (ips->local_conds != NIL)
		return;
	foreach(lc, input_rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (ri->pseudoconstant || !list_member_ptr(ips->remote_conds, ri))
			return;
		remote_exprs = lappend(remote_exprs, ri->clause);
	}

	chk.root = root;
	chk.input_rel = input_rel;
	chk.relid = rte->relid;
	chk.count_star_only = true;
	lt_get_table_options(rte->relid, &opts);
	chk.entry = lt_dataset_acquire(rte->relid, &opts, false);

	i = 0;
	foreach(lc, target->exprs)
	{
		Expr	   *expr = (Expr *) lfirst(lc);
		Index		sgref = get_pathtarget_sortgroupref(target, i);
		SortGroupClause *sgc;

		i++;
		sgc = sgref ? get_sortgroupref_clause_noerr(sgref, parse->groupClause) : NULL;
		if (sgc)
		{
			if (!IsA(expr, Var) || (key && !equal(key, expr)))
				return;
			if (key == NULL && !group_key_ok(&chk, (Var *) expr, sgc))
				return;
			key = (Var *) expr;
			tlist = add_to_flat_tlist(tlist, list_make1(expr));
		}
		else if (IsA(expr, Aggref))
		{
			if (!aggref_ok(&chk, (Aggref *) expr))
				return;
			tlist = add_to_flat_tlist(tlist, list_make1(expr));
		}
		else
			others = lappend(others, expr);
	}
	if (parse->groupClause != NIL && key == NULL)
		return;

	/* HAVING: evaluated by Postgres on the aggregated rows, over aggregates computed here */
	if (extra->havingQual)
	{
		foreach(lc, (List *) extra->havingQual)
		{
			having = lappend(having, lfirst(lc));
			others = lappend(others, lfirst(lc));
		}
	}

	/* expressions over the key and the aggregates: their pieces are computed here, the rest on top */
	foreach(lc, others)
	{
		List	   *pieces = pull_var_clause((Node *) lfirst(lc),
											 PVC_INCLUDE_AGGREGATES | PVC_INCLUDE_PLACEHOLDERS);
		ListCell   *lc2;

		foreach(lc2, pieces)
		{
			Node	   *p = lfirst(lc2);

			if (IsA(p, Aggref))
			{
				if (!aggref_ok(&chk, (Aggref *) p))
					return;
			}
			else if (!IsA(p, Var) || key == NULL || !equal(p, key))
				return;
		}
		tlist = add_to_flat_tlist(tlist, pieces);
	}
	if (tlist == NIL)
		return;
	apply_pathtarget_labeling_to_tlist(tlist, target);

	/* estimates and costs */
	tuples = Max(chk.entry->live_rows, 0);
	if (key)
	{
		EstimationInfo estinfo = {0};
		double		fit_groups;

		num_groups = estimate_num_groups(root, list_make1(key), Max(input_rel->rows, 1), NULL, &estinfo);
		/*
		 * pushed when its groups fit in memory; big GROUP BYs are left to Postgres (execution spills too,
		 * upper_exec.c, for estimates that were wrong).  An estimate made without statistics (a default)
		 * proves nothing: then every input row may be a group.
		 */
		fit_groups = (estinfo.flags & SELFLAG_USED_DEFAULT) ? Max(num_groups, Max(input_rel->rows, (double) tuples))
			: num_groups;
		if (fit_groups * (64.0 + 80.0 * chk.n_aggs + (key->vartype == TEXTOID ? 32.0 : 0.0)) >
			(double) get_hash_memory_limit())
			return;
	}
	else
		num_groups = 1;
	rows = num_groups;
	cost_qual_eval(&having_cost, having, root);
	if (having)
		rows = clamp_row_est(num_groups * clauselist_selectivity(root, having, 0, JOIN_INNER, NULL));

	if (chk.count_star_only && key == NULL && remote_exprs == NIL)
	{
		/* the manifest is already open: no data is read */
		startup_cost = 1.0;
	}
	else
	{
		double		passing = clamp_row_est(input_rel->rows);	/* every WHERE qual is in the filter */
		double		qual_width = 0;
		double		pages;
		int			attno = -1;

		/* the filter's columns are read for every row: their widths */
		pull_varattnos((Node *) remote_exprs, input_rel->relid, &qual_attrs);
		while ((attno = bms_next_member(qual_attrs, attno)) >= 0)
		{
			AttrNumber	a = attno + FirstLowInvalidHeapAttributeNumber;
			Oid			typid;
			int32		typmod;
			Oid			collid;
			int32		w;

			if (a <= 0)
				continue;
			w = get_attavgwidth(rte->relid, a);
			if (w <= 0)
			{
				get_atttypetypmodcoll(rte->relid, a, &typid, &typmod, &collid);
				w = get_typavgwidth(typid, typmod);
			}
			qual_width += w;
		}
		if (remote_exprs == NIL)
			passing = tuples;

		/*
		 * Open the fragments, decode the filter's columns for every row and the aggregated (and grouping)
		 * columns for the rows that pass, evaluate the filter on vectors (as scan.c prices it) and fold the
		 * passing rows' values in vectors. Only the aggregated columns are read, no tuple is formed and no
		 * row reaches Postgres: there is no per-row tuple cost, which is what a (parallel) scan below a
		 * (partial) aggregate pays for every passing row. Priced clearly below the local plans' reads
		 * (add_path's fuzz would otherwise prefer a local sorted GroupAggregate on a tiny table).
		 */
		pages = ceil((tuples * qual_width + passing * Max(chk.width, 1)) / BLCKSZ);
		startup_cost = 0.8 * (10.0 + 2.0 * chk.entry->ds->n_fragments * seq_page_cost + seq_page_cost * pages) +
			passing * cpu_operator_cost * 0.25 * (chk.n_aggs + chk.n_columns + (key ? 4 : 0));
		if (remote_exprs != NIL)
			startup_cost += 0.25 * cpu_operator_cost * tuples;	/* the vectorized filter */
	}
	startup_cost += having_cost.startup;
	total_cost = startup_cost + num_groups * (cpu_tuple_cost + having_cost.per_tuple);

	up = palloc0(sizeof(LtUpperPlan));
	up->tlist = tlist;
	up->having = having;
	up->relid = rte->relid;
	up->remote_exprs = remote_exprs;
	up->varno = input_rel->relid;
	up->version = ips->version;
	grouped_rel->fdw_private = up;

	path = create_foreign_upper_path(root, grouped_rel, target, rows, startup_cost, total_cost,
									 NIL, NULL, NIL);
	add_path(grouped_rel, (Path *) path);
}

void
ltGetForeignUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
					   RelOptInfo *output_rel, void *extra)
{
	if (stage != UPPERREL_GROUP_AGG || !enable_aggregate_pushdown)
		return;
	if (input_rel->reloptkind != RELOPT_BASEREL || input_rel->fdw_private == NULL ||
		output_rel->fdw_private != NULL)
		return;
	add_grouping_path(root, input_rel, output_rel, (GroupPathExtraData *) extra);
}

bool
lt_upper_is_agg_plan(ForeignScan *fsplan)
{
	return fsplan->scan.scanrelid == 0 && fsplan->fdw_private != NIL &&
		IsA(linitial(fsplan->fdw_private), String) &&
		strcmp(strVal(linitial(fsplan->fdw_private)), LT_UPPER_MARKER) == 0;
}

ForeignScan *
lt_upper_GetForeignPlan(PlannerInfo *root, RelOptInfo *foreignrel, Oid foreigntableid,
						ForeignPath *best_path, List *tlist, List *scan_clauses, Plan *outer_plan)
{
	LtUpperPlan *up;

	if (!IS_UPPER_REL(foreignrel))
		return ltGetForeignPlan(root, foreignrel, foreigntableid, best_path, tlist, scan_clauses,
								outer_plan);
	up = foreignrel->fdw_private;
	return make_foreignscan(tlist, up->having, 0, NIL,
							list_make5(makeString(pstrdup(LT_UPPER_MARKER)), makeInteger((int) up->relid),
									   up->remote_exprs, makeInteger((int) up->varno),
									   makeString(psprintf(UINT64_FORMAT, up->version))),
							up->tlist, NIL, outer_plan);
}

void
lt_upper_init(void)
{
	DefineCustomBoolVariable("lt_fdw.enable_aggregate_pushdown",
							 "Computes aggregates over Lance foreign tables inside lt_fdw.",
							 "count(*) without quals is answered from the manifest; count, sum, avg, min and max "
							 "(optionally GROUP BY one column) are computed over decoded column vectors.",
							 &enable_aggregate_pushdown,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}
