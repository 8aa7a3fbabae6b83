/*
 * quals.h — WHERE quals -> the library's filter IR (quals.c): classification at plan time, the filter
 * and its parameters at execution; the planning state of a foreign base relation.
 */
#ifndef LT_FDW_QUALS_H
#define LT_FDW_QUALS_H

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "utils/rel.h"

#include "table/lt_filter.h"
#include "types/lt_schema.h"

#include "option.h"

/* GUC lt_fdw.enable_filter_pushdown (default on): off keeps every qual local. */
extern bool lt_enable_filter_pushdown;
extern void lt_quals_init(void);

/*
 * What planning learned about a foreign base relation (baserel->fdw_private, set by
 * ltGetForeignRelSize). remote_conds / local_conds partition baserel->baserestrictinfo
 * (RestrictInfos), as postgres_fdw's PgFdwRelationInfo does.
 */
typedef struct LtPlanState
{
	LtTableOptions opts;
	Oid			relid;
	uint64		version;		/* the version planning looked at */
	uint64		live_rows;
	uint64		n_fragments;
	double		tuples;
	List	   *remote_conds;	/* translated exactly into the filter IR */
	List	   *local_conds;	/* checked by Postgres */
	Selectivity remote_sel;		/* clauselist_selectivity of remote_conds */
	/* index.c: attnums of columns with a usable scalar index, rows those indexes do not cover */
	Bitmapset  *indexed_attrs;
	Bitmapset  *label_attrs;	/* list columns with a label_list index (array @> / && quals) */
	double		unindexed_frac;
	double	   *index_rows_per_value;	/* by attnum, before ANALYZE: rows per distinct key (0: unknown) */
} LtPlanState;

/*
 * Split `conds` (RestrictInfos of baserel, a foreign table of lt_fdw whose fdw_private is an
 * LtPlanState) into the ones the filter IR evaluates exactly (*remote) and the rest (*local).
 * The translation is tried against the schema of the version planning saw, exactly as
 * ltfdw_build_filter does it at execution. With lt_fdw.enable_filter_pushdown off everything is
 * local.
 */
extern void ltfdw_classify_conds(PlannerInfo *root, RelOptInfo *baserel, List *conds,
								 List **remote, List **local);
/* Is one clause (a bare expression, not a RestrictInfo) translatable for baserel? */
extern bool ltfdw_is_remote_expr(PlannerInfo *root, RelOptInfo *baserel, Expr *expr);

/* The executor's view of the pushed quals of one scan (quals.c; fields are internal). */
typedef struct LtFdwFilter LtFdwFilter;

/*
 * Prepare the filter of remote_exprs (bare expressions, e.g. the ForeignScan's fdw_exprs, with
 * Vars of scanrelid) over `schema`, the schema of the version the scan reads. `ps` is the plan
 * state the parameters' and local checks' ExprStates belong to. An expression this version's
 * schema cannot take (the schema changed since planning) is checked locally instead.
 */
extern LtFdwFilter *ltfdw_build_filter(Relation rel, Index scanrelid, const lt_schema *schema,
									   List *remote_exprs, PlanState *ps);
/*
 * The same in two parts: what the translation learns from the expressions and the schema alone (which ones
 * translate, their columns and parameters; in the current memory context), and a filter of it with the
 * ExprStates of ps. A cached plan keeps the shape with its column bindings for the same dataset version
 * (scan.c), so that each execution only adds its ExprStates; remote_exprs and rel are those of the shape.
 */
typedef struct LtFdwFilterShape LtFdwFilterShape;
extern LtFdwFilterShape *ltfdw_filter_shape(Relation rel, Index scanrelid, const lt_schema *schema,
											List *remote_exprs);
extern LtFdwFilter *ltfdw_filter_from_shape(const LtFdwFilterShape *shape, Relation rel, List *remote_exprs,
											PlanState *ps);
/*
 * Evaluate the parameters in econtext: call at the start of every (re)scan. When a value cannot
 * be given to the filter exactly (numeric NaN, more than 38 digits), this scan falls back to
 * checking every remote expression locally. Returns whether the filter is used.
 */
extern bool ltfdw_filter_set_params(LtFdwFilter *lf, ExprContext *econtext);
/*
 * A new lt_filter for one scanner (lt_scan_options.filter), or NULL when nothing is pushed. It is
 * allocated by the library in the current lt_alloc_target(), which must be the scanner's
 * context: the filter allocates scratch while it evaluates, so it lives and dies with the scanner.
 */
extern lt_filter *ltfdw_filter_for_scan(LtFdwFilter *lf);
/* Whether ltfdw_filter_for_scan gives a filter (something is pushed and used) */
extern bool ltfdw_filter_pushed(LtFdwFilter *lf);
/* Local checks still due on the row in econtext's scan tuple (untranslated exprs, fallback). */
extern bool ltfdw_filter_local_check(LtFdwFilter *lf, ExprContext *econtext);
/* Whether the filter has parameters (they must be evaluated before it is used) */
extern bool ltfdw_filter_has_params(LtFdwFilter *lf);
/* Whether ltfdw_filter_local_check has anything to check (after ltfdw_filter_set_params) */
extern bool ltfdw_filter_needs_local_check(LtFdwFilter *lf);
/* The pushed filter as text for EXPLAIN, or NULL when nothing is pushed. */
extern const char *ltfdw_filter_text(LtFdwFilter *lf);
/* Whether any expression is pushed (ltfdw_filter_text would not be NULL), without rendering it. */
extern bool ltfdw_filter_translates(LtFdwFilter *lf);

#endif
