/*
 * overwrite.h — INSERT OVERWRITE … WHERE (overwrite.c): the predicate bound to its table, the delete set
 * over the version the transaction reads, validation of new rows, the commit's check; lt_insert_overwrite().
 */
#ifndef LT_FDW_OVERWRITE_H
#define LT_FDW_OVERWRITE_H

#include "commands/explain.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/primnodes.h"
#include "utils/rel.h"

#include "table/lt_dataset.h"
#include "util/lt_status.h"

#include "option.h"
#include "xact.h"

/* The query text of lt_insert_overwrite / lt_merge_insert: one SELECT or VALUES (42601), trailing ";" cut. */
extern char *lt_check_select_query(char *query, const char *fn);

extern char *lt_overwrite_where;	/* GUC lt_fdw.overwrite_where ('' = INSERT appends) */
extern bool lt_overwrite_validate;	/* GUC lt_fdw.overwrite_validate */
extern void lt_overwrite_init(void);
/* Is lt_fdw.overwrite_where set (UPDATE, DELETE, TRUNCATE, lt_merge_insert refuse to run then)? */
extern bool lt_overwrite_active(void);
/*
 * The predicate an INSERT into rel replaces by, or NULL: ERROR 55000 when lt_fdw.overwrite_where is
 * set but not by this session's current role in the current transaction (overwrite.c states the rule).
 */
extern const char *lt_overwrite_predicate(Relation rel);
/* Is a replace's validation on? (lt_fdw.overwrite_validate = off counts only when set by that rule) */
extern bool lt_overwrite_validating(void);

/* A replace predicate bound to its target table. */
typedef struct LtOverwritePred
{
	char	   *text;			/* as given */
	Expr	   *expr;			/* boolean, Vars of varno 1 over the table's columns, constants folded */
	List	   *attnums;		/* the columns it reads (integers) */
	ExprState  *state;			/* validation of new rows (built on first use) */
	ExprContext *econtext;
} LtOverwritePred;

/* The delete set of a replace over the version it reads. */
typedef struct LtOverwritePlan
{
	uint64		version;
	const char *filter;			/* the part of the predicate the reader evaluates, or NULL */
	bool		local_check;	/* Postgres checks (part of) the predicate on the rows read */
	int64		fragments_total;
	int64		fragments_scanned;
	int64		rows_scanned;
	int64		fragments_removed;	/* every live row matched: removed by id */
	int64		fragments_metadata_only;	/* of those, proved from index metadata without a read */
	int64		fragments_updated;	/* some rows matched: a new deletion vector */
	int64		fragments_pruned;	/* index data proved no row matches */
	int64		fragments_by_index;	/* index data named exactly the matching rows (no read) */
	int64		rows_deleted;
	char	   *indexes;		/* the index lookups made ("name (kind) for predicate", ...), or NULL */
} LtOverwritePlan;

/* What the last replace of this backend did (lt_insert_overwrite's result; modify.c fills it). */
typedef struct LtOverwriteStats
{
	bool		valid;
	Oid			relid;
	bool		hidden;			/* the role may not read the table: the counts of what it deleted are not shown */
	int64		rows_deleted, rows_inserted, fragments_removed, fragments_updated, fragments_added;
} LtOverwriteStats;
extern LtOverwriteStats lt_overwrite_last;

/*
 * The DELETE+INSERT spelling of a replace: at planning, the predicate of a DELETE whose WHERE the
 * scan evaluates entirely (no local quals, no join, no parameter) as the plan's fdw_private; at
 * execution it becomes a check of the transaction, applied at commit when the transaction also
 * inserted into the dataset.
 */
extern List *lt_overwrite_delete_predicate(PlannerInfo *root, Index rtindex, Oid relid);
extern void lt_overwrite_register_delete(struct LtXactTable *xt, Relation rel, List *fdw_private);

/* Parse and bind the predicate against rel (errors before anything is written). */
extern LtOverwritePred *lt_overwrite_bind(Relation rel, const char *text);
/* ... with source naming where the predicate came from in error contexts, construct in "argument of %s must be type boolean" */
extern LtOverwritePred *lt_overwrite_bind_from(Relation rel, const char *text, const char *source,
											   const char *construct);
/* ERROR 42501 unless userid (and the current role) may DELETE from rel and SELECT the predicate's columns. */
extern void lt_overwrite_check_privileges(Relation rel, const LtOverwritePred *pred, Oid userid);
/*
 * The delete set over the version the transaction reads (its own writes included); with xt, the
 * deletes and removals are handed to it, else (EXPLAIN) only counted.
 */
extern void lt_overwrite_plan(Relation rel, const LtTableOptions *opts, LtXactTable *xt, LtOverwritePred *pred,
							  LtOverwritePlan *plan);
/* ERROR 44000 unless the new row in slot (row number rowno of the statement) satisfies p. */
extern void lt_overwrite_validate_row(LtOverwritePred *p, Relation rel, TupleTableSlot *slot, uint64 rowno);
/* Keep the predicate with the transaction for the commit's check of concurrent appends. */
extern void lt_overwrite_register(LtXactTable *xt, Relation rel, LtOverwritePred *pred);
/* lt_txn's lt_new_fragment_check for a transaction with replaces (arg: its LtXactTable). */
struct Lt__Pb__DataFragment;
extern lt_code lt_overwrite_check_fragment(void *arg, lt_dataset *v, const struct Lt__Pb__DataFragment *frag,
										   lt_error *err);
extern void lt_overwrite_explain(const LtOverwritePred *pred, const LtOverwritePlan *plan, bool validate,
								 ExplainState *es);

#endif
