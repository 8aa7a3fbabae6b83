/*
 * lt_index_plan.c — a filter over several columns split into index lookups
 * (lt_index.c answers each one-column part), combined into per-fragment
 * verdicts.  See lt_index_plan.h.
 *
 * An answer is a pair of row-address sets: cand (every row that may match;
 * fragments the index does not cover are whole-fragment entries, i.e.
 * unknown) and sure (rows that certainly match, a subset of cand).  AND
 * intersects both, OR unions both; a part without an index is "unknown"
 * (NULL): it leaves an AND's candidates as they are but proves nothing, and
 * makes an OR unknown.  Set algebra on whole-fragment entries (full & x = x,
 * full | x = full) keeps unknown fragments unknown.
 */
#include "index/lt_index_plan.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "index/lt_index_int.h"
#include "proto/lt_table.pb-c.h"

struct lt_index_planner
{
	lt_dataset *ds;
	lt_index_list *list;
	lt_index_reader **readers;	/* parallel to list->items, opened on first use */
};

typedef struct answer
{
	lt_rowaddr_set *cand;
	lt_rowaddr_set *sure;
} answer;

typedef struct planning
{
	lt_index_planner *p;
	const lt_filter *filter;
	lt_index_plan *plan;
	size_t		cap_used;
	lt_error   *err;
} planning;

const char *
lt_frag_verdict_name(lt_frag_verdict v)
{
	switch (v)
	{
		case LT_FRAG_SCAN:
			return "scan";
		case LT_FRAG_PRUNED:
			return "pruned";
		case LT_FRAG_ALL:
			return "all";
		case LT_FRAG_ROWS:
			return "rows";
		case LT_FRAG_CANDIDATES:
			return "candidates";
	}
	return "?";
}

lt_code
lt_index_planner_open(lt_dataset *ds, lt_index_planner **out, lt_error *err)
{
	lt_index_planner *p;
	lt_code		rc;

	*out = NULL;
	if (!(p = lt_calloc(1, sizeof(*p))))
		return lt_nomem(err);
	p->ds = ds;
	rc = lt_dataset_indexes(ds, &p->list, err);
	if (rc == LT_OK && p->list->n && !(p->readers = lt_calloc(p->list->n, sizeof(lt_index_reader *))))
		rc = lt_nomem(err);
	if (rc != LT_OK)
	{
		lt_index_planner_free(p);
		return rc;
	}
	*out = p;
	return LT_OK;
}

void
lt_index_planner_free(lt_index_planner *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->readers && i < p->list->n; i++)
		lt_index_close(p->readers[i]);
	lt_free(p->readers);
	lt_index_list_free(p->list);
	lt_free(p);
}

const lt_index_list *
lt_index_planner_indexes(const lt_index_planner *p)
{
	return p->list;
}

const lt_index *
lt_index_planner_index_for(const lt_index_planner *p, int32_t field_id)
{
	static const lt_index_kind order[] = {LT_INDEX_BTREE, LT_INDEX_BITMAP, LT_INDEX_ZONEMAP};
	const lt_index *ix;

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		if ((ix = lt_index_list_for_field(p->list, field_id, order[k])) != NULL)
			return ix;
	return NULL;
}

static lt_code
reader_for(lt_index_planner *p, const lt_index *ix, lt_index_reader **out, lt_error *err)
{
	size_t		i = (size_t) (ix - p->list->items);

	if (!p->readers[i])
		LT_TRY(lt_index_open(p->ds, ix, &p->readers[i], err));
	*out = p->readers[i];
	return LT_OK;
}

lt_code
lt_index_planner_rows_per_value(lt_index_planner *p, int32_t field_id, double *rows_per_value, lt_error *err)
{
	const lt_index *ix = lt_index_planner_index_for(p, field_id);
	lt_index_reader *r;
	double		distinct,
				rows;

	*rows_per_value = 0;
	if (!ix || (ix->kind != LT_INDEX_BTREE && ix->kind != LT_INDEX_BITMAP))
		return LT_OK;
	LT_TRY(reader_for(p, ix, &r, err));
	LT_TRY(lt_index_distinct(r, &distinct, &rows, err));
	if (distinct >= 1 && rows >= distinct)
		*rows_per_value = rows / distinct;
	else if (distinct >= 1)
		*rows_per_value = 1;
	return LT_OK;
}

void
lt_index_plan_free(lt_index_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_fragments; i++)
		lt_free(plan->fragments[i].offsets);
	for (size_t i = 0; i < plan->n_used; i++)
	{
		lt_free(plan->used[i].predicate);
		lt_filter_free(plan->used[i].asked);
	}
	lt_free(plan->fragments);
	lt_free(plan->used);
	lt_free(plan);
}

const char *
lt_index_use_predicate(lt_index_use *u)
{
	if (!u->predicate && u->asked)
		u->predicate = lt_filter_render(u->asked);
	return u->predicate ? u->predicate : "?";
}

static void
answer_free(answer *a)
{
	lt_rowaddr_set_free(a->cand);
	lt_rowaddr_set_free(a->sure);
	a->cand = a->sure = NULL;
}

static lt_code
note_use(planning *pl, const lt_index *ix, char *predicate, bool exact, const lt_index_stats *st)
{
	lt_index_plan *plan = pl->plan;
	lt_index_use *u;

	if (plan->n_used == pl->cap_used)
	{
		size_t		cap = pl->cap_used ? pl->cap_used * 2 : 4;
		lt_index_use *grown = lt_realloc(plan->used, cap * sizeof(lt_index_use));

		if (!grown)
		{
			lt_free(predicate);
			return lt_nomem(pl->err);
		}
		plan->used = grown;
		pl->cap_used = cap;
	}
	u = &plan->used[plan->n_used++];
	memset(u, 0, sizeof(*u));
	u->index = ix;
	u->predicate = predicate;
	u->exact = exact;
	if (st)
		u->stats = *st;
	return LT_OK;
}

/* cand = the index's answer plus, whole, the fragments it does not cover */
static lt_code
finish_leaf(planning *pl, const lt_index *ix, answer *a)
{
	for (size_t i = 0; i < ix->n_unindexed; i++)
		LT_TRY(lt_rowaddr_set_add_fragment(a->cand, ix->unindexed[i], pl->err));
	return LT_OK;
}

/* One lookup: kind (AND/OR) of exprs on filter column `column`, negated when neg. */
static lt_code
leaf(planning *pl, int column, lt_expr_kind kind, int n, const lt_expr *const *exprs, bool neg, answer *out)
{
	const lt_field *field = lt_filter_columns(pl->filter)[column];
	const lt_index *ix = lt_index_planner_index_for(pl->p, field->id);
	lt_index_reader *r;
	lt_filter  *f = NULL;
	lt_index_stats st;
	bool		exact;
	lt_code		rc;

	out->cand = out->sure = NULL;
	if (!ix)
		return LT_OK;
	LT_TRY(reader_for(pl->p, ix, &r, pl->err));
	LT_TRY(lt_index_copy_group(pl->filter, kind, n, exprs, neg, ix->field, &f, pl->err));
	rc = lt_index_search(r, f, &out->cand, &exact, &st, pl->err);
	if (rc == LT_EUNSUPPORTED)
	{
		/* an expression this kind cannot answer: no information */
		lt_filter_free(f);
		return LT_OK;
	}
	if (rc == LT_OK)
	{
		if (exact)
			rc = (out->sure = lt_rowaddr_set_copy(out->cand)) ? LT_OK : lt_nomem(pl->err);
		else
			rc = lt_index_search_proven(r, f, &out->sure, pl->err);
	}
	if (rc == LT_OK && (rc = note_use(pl, ix, NULL, exact, &st)) == LT_OK)
	{
		pl->plan->used[pl->plan->n_used - 1].asked = f;	/* rendered when read */
		f = NULL;
	}
	if (rc == LT_OK)
		rc = finish_leaf(pl, ix, out);
	lt_filter_free(f);
	if (rc != LT_OK)
		answer_free(out);
	return rc;
}

static lt_code
label_leaf(planning *pl, const lt_label_pred *lp, answer *out)
{
	const lt_index *ix = lt_index_list_for_field(pl->p->list, lp->field->id, LT_INDEX_LABEL_LIST);
	lt_index_reader *r;
	lt_index_stats st;
	lt_code		rc;
	char	   *text;

	out->cand = out->sure = NULL;
	if (!ix)
		return LT_OK;
	LT_TRY(reader_for(pl->p, ix, &r, pl->err));
	rc = lt_index_search_labels(r, lp->op, lp->n, lp->values, &out->cand, &st, pl->err);
	if (rc == LT_OK && !(out->sure = lt_rowaddr_set_copy(out->cand)))
		rc = lt_nomem(pl->err);
	if (rc == LT_OK)
	{
		text = lt_asprintf("%s %s (%d values)", lp->field->name, lp->op == LT_LABEL_HAS_ALL ? "@>" : "&&", lp->n);
		rc = text ? note_use(pl, ix, text, true, &st) : lt_nomem(pl->err);
	}
	if (rc == LT_OK)
		rc = finish_leaf(pl, ix, out);
	if (rc != LT_OK)
		answer_free(out);
	return rc;
}

/* acc = acc AND/OR b (b is consumed); NULL cand = unknown */
static lt_code
combine(planning *pl, bool is_and, answer *acc, answer *b)
{
	lt_code		rc = LT_OK;

	if (is_and)
	{
		if (!acc->cand)
		{
			*acc = *b;
			b->cand = b->sure = NULL;
			/* acc was unknown: nothing is proven */
			if (acc->sure)
			{
				lt_rowaddr_set_free(acc->sure);
				acc->sure = lt_rowaddr_set_create();
				if (!acc->sure)
					rc = lt_nomem(pl->err);
			}
			return rc;
		}
		if (!b->cand)
		{
			lt_rowaddr_set_free(acc->sure);
			if (!(acc->sure = lt_rowaddr_set_create()))
				rc = lt_nomem(pl->err);
			return rc;
		}
		rc = lt_rowaddr_set_and(acc->cand, b->cand, pl->err);
		if (rc == LT_OK)
			rc = lt_rowaddr_set_and(acc->sure, b->sure, pl->err);
	}
	else
	{
		if (!acc->cand || !b->cand)
		{
			answer_free(acc);
			answer_free(b);
			return LT_OK;
		}
		rc = lt_rowaddr_set_or(acc->cand, b->cand, pl->err);
		if (rc == LT_OK)
			rc = lt_rowaddr_set_or(acc->sure, b->sure, pl->err);
	}
	answer_free(b);
	return rc;
}

/* The one column e reads: its index, -1 for none, -2 for several. */
static int
column_of(const lt_expr *e)
{
	int			c = -1;

	if (lt_expr_get_kind(e) == LT_EXPR_COLUMN)
		return lt_expr_get_column(e);
	for (int i = 0; i < lt_expr_n_args(e); i++)
	{
		int			k = column_of(lt_expr_arg(e, i));

		if (k == -2 || (k >= 0 && c >= 0 && k != c))
			return -2;
		if (k >= 0)
			c = k;
	}
	return c;
}

static lt_code walk(planning *pl, const lt_expr *e, bool neg, answer *out);

/*
 * AND / OR (with neg, the other one by De Morgan): the arguments on one column
 * are looked up together (a range is one btree lookup, not two), the others
 * one by one.
 */
static lt_code
walk_bool(planning *pl, const lt_expr *e, bool neg, answer *out)
{
	lt_expr_kind kind = lt_expr_get_kind(e);
	bool		is_and = (kind == LT_EXPR_AND) != neg;
	int			na = lt_expr_n_args(e);
	const lt_expr **group;
	int		   *cols;
	bool		first = true;
	lt_code		rc = LT_OK;

	out->cand = out->sure = NULL;
	group = lt_malloc((size_t) na * sizeof(*group));
	cols = lt_malloc((size_t) na * sizeof(*cols));
	if (!group || !cols)
		rc = lt_nomem(pl->err);
	for (int i = 0; rc == LT_OK && i < na; i++)
		cols[i] = column_of(lt_expr_arg(e, i));
	for (int i = 0; rc == LT_OK && i < na; i++)
	{
		answer		b = {0};

		if (cols[i] == -3)
			continue;
		if (cols[i] == -1)
			;					/* a constant: no information */
		else if (cols[i] == -2)
			rc = walk(pl, lt_expr_arg(e, i), neg, &b);
		else
		{
			int			n = 0,
						c = cols[i];

			for (int k = i; k < na; k++)
				if (cols[k] == c)
				{
					group[n++] = lt_expr_arg(e, k);
					if (k > i)
						cols[k] = -3;	/* taken */
				}
			rc = leaf(pl, c, kind, n, group, neg, &b);
		}
		if (rc == LT_OK && first)
		{
			*out = b;
			first = false;
			/* OR with an unknown first part is unknown whatever follows */
			if (!is_and && !out->cand)
				break;
		}
		else if (rc == LT_OK)
		{
			rc = combine(pl, is_and, out, &b);
			if (!is_and && !out->cand)
				break;
		}
		else
			answer_free(&b);
	}
	lt_free(group);
	lt_free(cols);
	if (rc != LT_OK)
		answer_free(out);
	return rc;
}

static lt_code
walk(planning *pl, const lt_expr *e, bool neg, answer *out)
{
	int			c = column_of(e);

	out->cand = out->sure = NULL;
	if (c >= 0)
		return leaf(pl, c, LT_EXPR_AND, 1, &e, neg, out);
	if (c == -1)
		return LT_OK;
	switch (lt_expr_get_kind(e))
	{
		case LT_EXPR_NOT:
			return walk(pl, lt_expr_arg(e, 0), !neg, out);
		case LT_EXPR_AND:
		case LT_EXPR_OR:
			return walk_bool(pl, e, neg, out);
		default:
			return LT_OK;		/* no other node reads two columns */
	}
}

/* The verdict of each fragment from the final answer. */
static lt_code
verdicts(planning *pl, answer *a)
{
	lt_dataset *ds = pl->p->ds;
	lt_index_plan *plan = pl->plan;
	lt_code		rc = LT_OK;

	if (a->cand && a->sure)
		LT_TRY(lt_rowaddr_set_and(a->sure, a->cand, pl->err));
	for (size_t i = 0; rc == LT_OK && i < ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = ds->fragments[i];
		lt_frag_plan *fp = &plan->fragments[i];
		uint64_t	live = lt_fragment_live_rows(f);
		uint64_t	proven;

		fp->fragment_id = (uint32_t) f->id;
		fp->verdict = LT_FRAG_SCAN;
		if (!a->cand || f->id > UINT32_MAX || lt_rowaddr_set_is_full(a->cand, fp->fragment_id))
			;
		else if (lt_rowaddr_set_fragment_cardinality(a->cand, fp->fragment_id) == 0)
			fp->verdict = LT_FRAG_PRUNED;
		else
		{
			proven = lt_rowaddr_set_fragment_cardinality(a->sure, fp->fragment_id);
			rc = lt_rowaddr_set_fragment_offsets(a->cand, fp->fragment_id, &fp->offsets, &fp->n_offsets, pl->err);
			if (rc != LT_OK)
				break;
			if (proven == fp->n_offsets)
				fp->verdict = fp->n_offsets >= live ? LT_FRAG_ALL : LT_FRAG_ROWS;
			else
				fp->verdict = fp->n_offsets >= live ? LT_FRAG_SCAN : LT_FRAG_CANDIDATES;
			if (fp->verdict == LT_FRAG_ALL || fp->verdict == LT_FRAG_SCAN)
			{
				lt_free(fp->offsets);
				fp->offsets = NULL;
				fp->n_offsets = fp->verdict == LT_FRAG_ALL ? live : 0;
			}
		}
		switch (fp->verdict)
		{
			case LT_FRAG_SCAN:
				plan->n_scan++;
				break;
			case LT_FRAG_PRUNED:
				plan->n_pruned++;
				break;
			case LT_FRAG_ALL:
				plan->n_all++;
				break;
			case LT_FRAG_ROWS:
				plan->n_rows++;
				break;
			case LT_FRAG_CANDIDATES:
				plan->n_candidates++;
				break;
		}
		plan->rows_selected += fp->n_offsets;
	}
	return rc;
}

lt_code
lt_index_plan_build(lt_index_planner *p, const lt_filter *filter, int n_labels, const lt_label_pred *labels,
					lt_index_plan **out, lt_error *err)
{
	planning	pl = {p, filter, NULL, 0, err};
	answer		acc = {0};
	const lt_expr *root = filter ? lt_filter_root(filter) : NULL;
	bool		first = true;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (!(pl.plan = lt_calloc(1, sizeof(lt_index_plan))))
		return lt_nomem(err);
	pl.plan->n_fragments = p->ds->n_fragments;
	if (p->ds->n_fragments && !(pl.plan->fragments = lt_calloc(p->ds->n_fragments, sizeof(lt_frag_plan))))
		rc = lt_nomem(err);
	if (rc == LT_OK && root && p->list->n)
	{
		rc = walk(&pl, root, false, &acc);
		first = false;
	}
	for (int i = 0; rc == LT_OK && i < n_labels && p->list->n; i++)
	{
		answer		b;

		rc = label_leaf(&pl, &labels[i], &b);
		if (rc == LT_OK && first)
			acc = b;
		else if (rc == LT_OK)
			rc = combine(&pl, true, &acc, &b);
		first = false;
	}
	if (rc == LT_OK)
		rc = verdicts(&pl, &acc);
	answer_free(&acc);
	if (rc != LT_OK)
	{
		lt_index_plan_free(pl.plan);
		return rc;
	}
	*out = pl.plan;
	return LT_OK;
}
