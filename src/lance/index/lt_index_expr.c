/*
 * lt_index_expr.c — turning the caller's filter into filters over index data:
 * a copy over an index file's key field (exact verdicts per key), and page /
 * zone tests over [min, max, null_count(, nan_count)] (candidates).
 *
 * Page tests push NOT down (De Morgan, complemented comparisons), which is
 * exact under three-valued logic: NOT (x op v) is TRUE exactly when x and v
 * are not NULL and x op' v is TRUE, and the filter's order (NaN above every
 * number) is total.  A leaf becomes a test on a page's extrema:
 *   x = v    max >= v AND (min IS NULL OR min <= v)
 *   x < v    max IS NOT NULL AND (min IS NULL OR min < v)   (<= alike)
 *   x > v    max > v                                         (>= alike)
 *   x <> v   min IS NULL OR min <> v OR max <> v
 *   IS NULL  null_count > 0;  IS NOT NULL  max IS NOT NULL
 * (min is NULL when a page starts with nulls, so it is then no lower bound.)
 * Zones keep a zone whose min or max is NULL, and, for floats, a zone with
 * NaNs when NaN satisfies the leaf (their extrema may leave NaN out); a float
 * page or zone whose min is NaN (a negative NaN first in Lance's order) is
 * always kept (see zone_wrap).
 */
#include "index/lt_index_int.h"

#include <math.h>
#include <string.h>

#include "util/lt_alloc.h"

enum
{
	C_MIN = 0, C_MAX = 1, C_NULLS = 2, C_NANS = 3
};

typedef struct xl
{
	const lt_filter *src;
	lt_filter  *dst;
	bool		zones;
	bool		is_float;
	lt_error   *err;
} xl;

static lt_expr *
vconst(xl *x, const lt_value *v)
{
	return lt_expr_const(x->dst, v, x->err);
}

static lt_expr *
bconst(xl *x, int b)			/* 1 TRUE, 0 FALSE, -1 NULL */
{
	lt_value	v = {0};

	if (b < 0)
		v.kind = LT_VALUE_NULL;
	else
	{
		v.kind = LT_VALUE_BOOL;
		v.v.b = b;
	}
	return vconst(x, &v);
}

static lt_expr *
col(xl *x, int c)
{
	return lt_expr_column(x->dst, c, x->err);
}

static lt_expr *
cmpv(xl *x, int c, lt_cmp_op op, const lt_value *v)
{
	return lt_expr_cmp(x->dst, op, col(x, c), vconst(x, v), x->err);
}

static lt_expr *
isnull(xl *x, int c, bool negated)
{
	return lt_expr_is_null(x->dst, col(x, c), negated, x->err);
}

static lt_expr *
and2(xl *x, lt_expr *a, lt_expr *b)
{
	lt_expr    *args[2] = {a, b};

	return lt_expr_and(x->dst, 2, args, x->err);
}

static lt_expr *
or2(xl *x, lt_expr *a, lt_expr *b)
{
	lt_expr    *args[2] = {a, b};

	return lt_expr_or(x->dst, 2, args, x->err);
}

/* A single value of a CONST / scalar PARAM node. */
static lt_code
one_value(xl *x, const lt_expr *e, const lt_value **v)
{
	int			n;

	LT_TRY(lt_expr_get_values(x->src, e, v, &n, x->err));
	if (n != 1)
		return lt_error_set(x->err, LT_EINVALID, "expected one value");
	return LT_OK;
}

/* ---------------------------------------------------------------- copy */

static lt_expr *
copy(xl *x, const lt_expr *e)
{
	const lt_value *v,
			   *v2;
	int			n;

	switch (lt_expr_get_kind(e))
	{
		case LT_EXPR_COLUMN:
			return col(x, 0);
		case LT_EXPR_CONST:
		case LT_EXPR_PARAM:
			if (one_value(x, e, &v) != LT_OK)
				return NULL;
			return vconst(x, v);
		case LT_EXPR_CMP:
			if (one_value(x, lt_expr_arg(e, 1), &v) != LT_OK)
				return NULL;
			return cmpv(x, 0, lt_expr_get_op(e), v);
		case LT_EXPR_BETWEEN:
			if (one_value(x, lt_expr_arg(e, 1), &v) != LT_OK || one_value(x, lt_expr_arg(e, 2), &v2) != LT_OK)
				return NULL;
			return lt_expr_between(x->dst, col(x, 0), vconst(x, v), vconst(x, v2), x->err);
		case LT_EXPR_IN:
			{
				int			total = 0;
				lt_expr   **items;
				lt_expr    *res;

				for (int i = 1; i < lt_expr_n_args(e); i++)
				{
					if (lt_expr_get_values(x->src, lt_expr_arg(e, i), &v, &n, x->err) != LT_OK)
						return NULL;
					if (n < 0)
						return bconst(x, -1);	/* = ANY (NULL array): UNKNOWN everywhere */
					total += n;
				}
				items = lt_malloc((size_t) (total ? total : 1) * sizeof(lt_expr *));
				if (!items)
					return lt_nomem(x->err), NULL;
				total = 0;
				for (int i = 1; i < lt_expr_n_args(e); i++)
				{
					lt_expr_get_values(x->src, lt_expr_arg(e, i), &v, &n, x->err);
					for (int k = 0; k < n; k++)
						items[total++] = vconst(x, &v[k]);
				}
				res = lt_expr_in(x->dst, col(x, 0), total, items, x->err);
				lt_free(items);
				return res;
			}
		case LT_EXPR_IS_NULL:
			return lt_expr_is_null(x->dst, col(x, 0), lt_expr_is_negated(e), x->err);
		case LT_EXPR_AND:
		case LT_EXPR_OR:
			{
				int			na = lt_expr_n_args(e);
				lt_expr   **args = lt_malloc((size_t) na * sizeof(lt_expr *));
				lt_expr    *res = NULL;
				bool		ok = args != NULL;

				if (!args)
					return lt_nomem(x->err), NULL;
				for (int i = 0; ok && i < na; i++)
					ok = (args[i] = copy(x, lt_expr_arg(e, i))) != NULL;
				if (ok)
					res = lt_expr_get_kind(e) == LT_EXPR_AND ? lt_expr_and(x->dst, na, args, x->err)
						: lt_expr_or(x->dst, na, args, x->err);
				lt_free(args);
				return res;
			}
		case LT_EXPR_NOT:
			return lt_expr_not(x->dst, copy(x, lt_expr_arg(e, 0)), x->err);
	}
	return lt_error_set(x->err, LT_EINVALID, "unknown filter node"), NULL;
}

static lt_code
check_single_column(const lt_filter *src, lt_error *err)
{
	if (lt_filter_n_columns(src) != 1)
		return lt_error_set(err, LT_EINVALID, "an index lookup takes a filter over exactly one column (got %d)",
							lt_filter_n_columns(src));
	if (!lt_filter_root(src))
		return lt_error_set(err, LT_EINVALID, "an index lookup needs a filter expression");
	return LT_OK;
}

lt_code
lt_index_copy_filter(const lt_filter *src, const lt_field *field, lt_filter **out, lt_error *err)
{
	const lt_expr *root;

	*out = NULL;
	LT_TRY(check_single_column(src, err));
	root = lt_filter_root(src);
	return lt_index_copy_group(src, LT_EXPR_AND, 1, &root, false, field, out, err);
}

lt_code
lt_index_copy_group(const lt_filter *src, lt_expr_kind kind, int n, const lt_expr *const *exprs, bool negate,
					const lt_field *field, lt_filter **out, lt_error *err)
{
	xl			x = {src, NULL, false, false, err};
	lt_expr   **args;
	lt_expr    *root = NULL;
	bool		ok = true;
	lt_code		rc;

	*out = NULL;
	if (n < 1 || (n > 1 && kind != LT_EXPR_AND && kind != LT_EXPR_OR))
		return lt_error_set(err, LT_EINVALID, "an index filter group needs AND or OR of at least one expression");
	if (!(args = lt_malloc((size_t) n * sizeof(lt_expr *))))
		return lt_nomem(err);
	rc = lt_filter_new(1, &field, &x.dst, err);
	for (int i = 0; rc == LT_OK && ok && i < n; i++)
		ok = (args[i] = copy(&x, exprs[i])) != NULL;
	if (rc == LT_OK && ok)
		root = n == 1 ? args[0] : kind == LT_EXPR_AND ? lt_expr_and(x.dst, n, args, err)
			: lt_expr_or(x.dst, n, args, err);
	if (root && negate)
		root = lt_expr_not(x.dst, root, err);
	lt_free(args);
	if (rc == LT_OK)
		rc = root ? lt_filter_set_root(x.dst, root, err) : (err && err->code != LT_OK ? err->code : LT_EINVALID);
	if (rc != LT_OK)
	{
		lt_filter_free(x.dst);
		return rc;
	}
	*out = x.dst;
	return LT_OK;
}

/* ---------------------------------------------------------------- page / zone tests */

static bool
value_is_nan(const lt_value *v)
{
	return v->kind == LT_VALUE_FLOAT && isnan(v->v.f);
}

/* Is NaN op v TRUE (Postgres order: NaN equals NaN and is above everything else)? */
static bool
nan_satisfies(lt_cmp_op op, const lt_value *v)
{
	if (v->kind == LT_VALUE_NULL)
		return false;
	if (value_is_nan(v))
		return op == LT_CMP_EQ || op == LT_CMP_LE || op == LT_CMP_GE;
	return op == LT_CMP_GT || op == LT_CMP_GE || op == LT_CMP_NE;
}

/*
 * Floats: Lance orders its extrema as Arrow's total order does (-NaN < -Inf < ... < -0 < 0 < ... < Inf < NaN),
 * so a page or zone whose min is NaN starts with a negative NaN or holds only NaNs: it has no known lower
 * bound and holds a NaN, which the filter's order puts above every number.  Such a page is always kept (a
 * NaN max is already above every v), and so is a float page whose min is NULL (its nulls may be followed by
 * negative NaNs).  Zones also keep a zone whose min or max is NULL, and a zone with
 * NaNs when NaN satisfies the leaf (a finite max can sit beside negative NaNs).
 */
static lt_expr *
zone_wrap(xl *x, lt_expr *test, bool nan_passes)
{
	lt_value	nan = {.kind = LT_VALUE_FLOAT};

	if (!test)
		return test;
	nan.v.f = NAN;
	if (x->is_float)			/* (a btree page starting with nulls may hold negative NaNs next) */
		test = or2(x, test, or2(x, isnull(x, C_MIN, false), cmpv(x, C_MIN, LT_CMP_EQ, &nan)));
	if (!x->zones || !test)
		return test;
	test = or2(x, or2(x, isnull(x, C_MIN, false), isnull(x, C_MAX, false)), test);
	if (nan_passes && x->is_float)
	{
		lt_value	zero = {.kind = LT_VALUE_INT};

		test = or2(x, test, cmpv(x, C_NANS, LT_CMP_GT, &zero));
	}
	return test;
}

/* min IS NULL OR min op v: min is no lower bound for pages that start with nulls */
static lt_expr *
low_ok(xl *x, lt_cmp_op op, const lt_value *v)
{
	return or2(x, isnull(x, C_MIN, false), cmpv(x, C_MIN, op, v));
}

/* May a page / zone hold a value w with (w op v) TRUE? */
static lt_expr *
leaf(xl *x, lt_cmp_op op, const lt_value *v)
{
	lt_expr    *t = NULL;

	switch (op)
	{
		case LT_CMP_EQ:
			t = and2(x, cmpv(x, C_MAX, LT_CMP_GE, v), low_ok(x, LT_CMP_LE, v));
			break;
		case LT_CMP_NE:
			t = or2(x, or2(x, isnull(x, C_MIN, false), cmpv(x, C_MIN, LT_CMP_NE, v)),
					cmpv(x, C_MAX, LT_CMP_NE, v));
			break;
		case LT_CMP_LT:
		case LT_CMP_LE:
			t = and2(x, isnull(x, C_MAX, true), low_ok(x, op, v));
			break;
		case LT_CMP_GT:
		case LT_CMP_GE:
			t = cmpv(x, C_MAX, op, v);
			break;
	}
	return zone_wrap(x, t, nan_satisfies(op, v));
}

static lt_cmp_op
complement(lt_cmp_op op)
{
	static const lt_cmp_op c[] = {LT_CMP_NE, LT_CMP_EQ, LT_CMP_GE, LT_CMP_GT, LT_CMP_LE, LT_CMP_LT};

	return c[op];
}

static lt_expr *derive(xl *x, const lt_expr *e, bool neg);

static lt_expr *
derive_bool(xl *x, const lt_expr *e, bool neg)
{
	int			na = lt_expr_n_args(e);
	bool		is_and = (lt_expr_get_kind(e) == LT_EXPR_AND) != neg;
	lt_expr   **args = lt_malloc((size_t) na * sizeof(lt_expr *));
	lt_expr    *res = NULL;
	bool		ok = args != NULL;

	if (!args)
		return lt_nomem(x->err), NULL;
	for (int i = 0; ok && i < na; i++)
		ok = (args[i] = derive(x, lt_expr_arg(e, i), neg)) != NULL;
	if (ok)
		res = is_and ? lt_expr_and(x->dst, na, args, x->err) : lt_expr_or(x->dst, na, args, x->err);
	lt_free(args);
	return res;
}

static lt_expr *
derive_in(xl *x, const lt_expr *e, bool neg)
{
	lt_expr    *acc = NULL;
	bool		any_null = false;
	int			total = 0;

	for (int i = 1; i < lt_expr_n_args(e); i++)
	{
		const lt_value *v;
		int			n;

		if (lt_expr_get_values(x->src, lt_expr_arg(e, i), &v, &n, x->err) != LT_OK)
			return NULL;
		if (n < 0)
			return bconst(x, -1);
		for (int k = 0; k < n; k++)
		{
			lt_expr    *t;

			total++;
			if (v[k].kind == LT_VALUE_NULL)
			{
				any_null = true;
				continue;
			}
			t = leaf(x, neg ? LT_CMP_NE : LT_CMP_EQ, &v[k]);
			if (!t)
				return NULL;
			acc = !acc ? t : neg ? and2(x, acc, t) : or2(x, acc, t);
			if (!acc)
				return NULL;
		}
	}
	if (total == 0)
		return bconst(x, neg);	/* x IN () is FALSE for every row, NOT IN () TRUE */
	if (neg && any_null)
		return bconst(x, 0);	/* x NOT IN (.., NULL) is never TRUE */
	return acc ? acc : bconst(x, -1);	/* only NULL items: never TRUE */
}

static lt_expr *
derive(xl *x, const lt_expr *e, bool neg)
{
	const lt_value *v,
			   *v2;

	switch (lt_expr_get_kind(e))
	{
		case LT_EXPR_AND:
		case LT_EXPR_OR:
			return derive_bool(x, e, neg);
		case LT_EXPR_NOT:
			return derive(x, lt_expr_arg(e, 0), !neg);
		case LT_EXPR_CONST:
		case LT_EXPR_PARAM:
			{
				lt_expr    *c;

				if (one_value(x, e, &v) != LT_OK)
					return NULL;
				c = vconst(x, v);
				return neg ? lt_expr_not(x->dst, c, x->err) : c;
			}
		case LT_EXPR_COLUMN:
			{
				/* a bool column as a predicate: x = true (or, negated, x = false) */
				lt_value	b = {.kind = LT_VALUE_BOOL};

				b.v.b = !neg;
				return leaf(x, LT_CMP_EQ, &b);
			}
		case LT_EXPR_CMP:
			if (one_value(x, lt_expr_arg(e, 1), &v) != LT_OK)
				return NULL;
			return leaf(x, neg ? complement(lt_expr_get_op(e)) : lt_expr_get_op(e), v);
		case LT_EXPR_BETWEEN:
			if (one_value(x, lt_expr_arg(e, 1), &v) != LT_OK || one_value(x, lt_expr_arg(e, 2), &v2) != LT_OK)
				return NULL;
			if (neg)			/* x < lo OR x > hi */
				return or2(x, leaf(x, LT_CMP_LT, v), leaf(x, LT_CMP_GT, v2));
			/* lo <= x AND x <= hi: some value reaches lo and the page starts at or below hi */
			return zone_wrap(x, and2(x, cmpv(x, C_MAX, LT_CMP_GE, v), low_ok(x, LT_CMP_LE, v2)),
							 nan_satisfies(LT_CMP_LE, v2) && nan_satisfies(LT_CMP_GE, v));
		case LT_EXPR_IN:
			return derive_in(x, e, neg);
		case LT_EXPR_IS_NULL:
			{
				bool		want_null = lt_expr_is_negated(e) == neg;
				lt_value	zero = {.kind = LT_VALUE_INT};

				if (want_null)
					return cmpv(x, C_NULLS, LT_CMP_GT, &zero);
				/* zones: null_count < zone length is not expressible here; keep every zone */
				return x->zones ? bconst(x, 1) : isnull(x, C_MAX, true);
			}
	}
	return lt_error_set(x->err, LT_EINVALID, "unknown filter node"), NULL;
}

lt_code
lt_index_prune_filter(const lt_filter *src, const lt_field *const *cols, bool zones, lt_filter **out,
					  lt_error *err)
{
	xl			x = {src, NULL, zones, false, err};
	lt_expr    *root;
	lt_code		rc;
	lt_type_id	t = cols[C_MIN]->type;

	*out = NULL;
	LT_TRY(check_single_column(src, err));
	x.is_float = t == LT_TYPE_FLOAT16 || t == LT_TYPE_FLOAT32 || t == LT_TYPE_FLOAT64;
	LT_TRY(lt_filter_new(zones ? 4 : 3, cols, &x.dst, err));
	root = derive(&x, lt_filter_root(src), false);
	rc = root ? lt_filter_set_root(x.dst, root, err) : (err && err->code != LT_OK ? err->code : LT_EINVALID);
	if (rc != LT_OK)
	{
		lt_filter_free(x.dst);
		return rc;
	}
	*out = x.dst;
	return LT_OK;
}

bool
lt_index_same_type(const lt_field *a, const lt_field *b)
{
	bool		va = lt_type_is_var_width(a->type) && a->type != LT_TYPE_FIXED_BINARY;
	bool		vb = lt_type_is_var_width(b->type) && b->type != LT_TYPE_FIXED_BINARY;

	/* utf8 / large_utf8 / binary all decode to offsets + bytes and compare bytewise */
	if (va || vb)
		return va && vb;
	return a->type == b->type && lt_type_byte_width(a) == lt_type_byte_width(b) && a->unit == b->unit &&
		a->scale == b->scale && a->precision == b->precision && a->fixed_size == b->fixed_size;
}
