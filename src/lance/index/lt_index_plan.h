/*
 * lt_index_plan.h — which rows of each fragment a filter can match, from the
 * dataset's scalar indexes, before any data page is read.
 *
 * Input: a filter over any columns of the dataset (the pushed-down quals:
 * AND / OR / NOT of comparisons, BETWEEN, IN, IS [NOT] NULL) and optional
 * label predicates (array @> / && on label_list columns) AND-ed with it.
 * The filter is split where it can be answered:
 *   - a part over one column with a usable index (btree, bitmap, then zonemap)
 *     is one lookup; the conjuncts (or disjuncts) of an AND (OR) on one column
 *     are looked up together;
 *   - AND intersects, OR unions (an OR only helps where both sides are answered),
 *     NOT is pushed down to the one-column parts (De Morgan holds in SQL's
 *     three-valued logic), which the index evaluates with the filter's semantics;
 *   - a part no index answers narrows nothing (and makes its AND inexact).
 * Each answer is a candidate set (every row that may match) and a proven set
 * (rows that certainly match); fragments an index does not cover (appended
 * after it was built) stay whole candidates.
 *
 * Output, per fragment of the dataset (same order as ds->fragments):
 *   PRUNED      no live row matches
 *   ALL         every live row matches, proved from index data alone (exact
 *               sets holding every live row, constant zones whose value passes)
 *   ROWS        exactly the listed offsets match
 *   CANDIDATES  matches are among the listed offsets: apply the filter to them
 *   SCAN        no index narrows this fragment: scan it with the filter
 * Offsets are physical, ascending, live (deletion vectors already applied),
 * ready for lt_scan_options.offsets.
 *
 * Without a usable index for any part of the filter every fragment is SCAN and
 * n_used is 0.  Errors of index files are LT_ECORRUPT naming the file (the
 * caller may fall back to scanning).
 */
#ifndef LT_INDEX_PLAN_H
#define LT_INDEX_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "table/lt_dataset.h"
#include "table/lt_filter.h"
#include "index/lt_index.h"
#include "util/lt_status.h"

typedef enum lt_frag_verdict
{
	LT_FRAG_SCAN = 0,
	LT_FRAG_PRUNED,
	LT_FRAG_ALL,
	LT_FRAG_ROWS,
	LT_FRAG_CANDIDATES
} lt_frag_verdict;

const char *lt_frag_verdict_name(lt_frag_verdict v);	/* "scan", "pruned", "all", "rows", "candidates" */

typedef struct lt_frag_plan
{
	uint32_t	fragment_id;
	lt_frag_verdict verdict;
	uint32_t   *offsets;		/* ROWS, CANDIDATES: ascending physical offsets; else NULL */
	uint64_t	n_offsets;		/* ROWS, CANDIDATES: their count; ALL: the live rows */
} lt_frag_plan;

/* One lookup the plan made. */
typedef struct lt_index_use
{
	const lt_index *index;		/* borrowed from the planner's index list */
	char	   *predicate;		/* what it was asked, e.g. "(id = 7)" (label lookups: "tags @> [..]"); read it
								 * through lt_index_use_predicate: rendered from `asked` when first read */
	lt_filter  *asked;			/* the filter it was asked (owned), or NULL */
	bool		exact;			/* false: a zonemap (candidates) */
	lt_index_stats stats;
} lt_index_use;

/*
 * The text of what a lookup was asked, rendered on first use (only EXPLAIN and messages read it: rendering it
 * for every lookup was 1% of a point lookup), in memory freed with the plan; "?" when out of memory.
 */
const char *lt_index_use_predicate(lt_index_use *u);

typedef struct lt_index_plan
{
	size_t		n_fragments;
	lt_frag_plan *fragments;	/* parallel to ds->fragments */
	size_t		n_used;
	lt_index_use *used;
	/* fragments by verdict */
	uint64_t	n_scan,
				n_pruned,
				n_all,
				n_rows,
				n_candidates;
	uint64_t	rows_selected;	/* offsets of ROWS + CANDIDATES, live rows of ALL */
} lt_index_plan;

/* A label predicate: rows whose list `field` contains all (or any) of values. */
typedef struct lt_label_pred
{
	const lt_field *field;		/* a top-level list field of ds->schema */
	lt_label_op op;
	int			n;
	const lt_value *values;
} lt_label_pred;

/*
 * The indexes of one dataset version with their readers, opened on first use
 * and kept for later plans (a parameterized scan plans once per outer row).
 * ds must outlive it.
 */
typedef struct lt_index_planner lt_index_planner;

lt_code		lt_index_planner_open(lt_dataset *ds, lt_index_planner **out, lt_error *err);
void		lt_index_planner_free(lt_index_planner *p);
const lt_index_list *lt_index_planner_indexes(const lt_index_planner *p);
/* The index a one-column lookup on top-level field id would use (btree, bitmap, zonemap), or NULL. */
const lt_index *lt_index_planner_index_for(const lt_index_planner *p, int32_t field_id);

/*
 * Rows per distinct value of top-level field id, estimated from its index (lt_index_distinct; opens
 * the index's reader if needed): for planning equality lookups without statistics.  0 when no
 * btree or bitmap index gives an estimate.
 */
lt_code		lt_index_planner_rows_per_value(lt_index_planner *p, int32_t field_id, double *rows_per_value,
											lt_error *err);

/*
 * Plan filter (may be NULL: no scalar predicate; parameters set) AND the
 * label predicates.  The filter is only read.  Free with lt_index_plan_free.
 */
lt_code		lt_index_plan_build(lt_index_planner *p, const lt_filter *filter, int n_labels,
								const lt_label_pred *labels, lt_index_plan **out, lt_error *err);
void		lt_index_plan_free(lt_index_plan *plan);

#endif
