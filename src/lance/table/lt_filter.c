/*
 * lt_filter.c — building, binding and evaluating filters.
 *
 * Evaluation is node by node over the whole batch.  Every predicate node
 * yields two byte masks: t (TRUE) and f (FALSE); rows in neither are
 * UNKNOWN.  AND is t = t1 & t2, f = f1 | f2; OR the dual; NOT swaps them,
 * so three-valued logic costs one byte operation per row.  f is only
 * computed where a NOT above needs it.
 *
 * Binding (at the first evaluation after a parameter changed) turns every
 * comparison into a kernel plan.  Integer-like columns (ints, bool,
 * decimal128, dates, times, timestamps, durations) compare through an
 * inclusive range [lo, hi] of raw column values, computed exactly in 128-bit
 * arithmetic from the literal and clamped to the column's physical domain,
 * so the inner loop is one or two typed comparisons and cross-type cases
 * (scales, units, widths) cost nothing per row.  Floats get a loop with
 * Postgres's NaN ordering; bytes a memcmp loop.
 */
#include "table/lt_filter.h"
#include "util/lt_value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"

#define I128_MAX ((lt_int128) (((unsigned __int128) 1 << 127) - 1))
#define I128_MIN (-I128_MAX - 1)

/* IN lists up to this size are tested item by item (vectorized), longer ones by binary search */
#define SMALL_SET 8

typedef enum node_kind
{
	N_COLUMN, N_CONST, N_PARAM, N_CMP, N_BETWEEN, N_IN, N_IS_NULL, N_AND, N_OR, N_NOT
} node_kind;

/* Physical layout of a column's values. */
typedef enum phys
{
	P_NONE, P_I8, P_I16, P_I32, P_I64, P_U8, P_U16, P_U32, P_U64, P_I128,
	P_F16, P_F32, P_F64, P_VAR, P_FIXED
} phys;

/* What a column's values mean, for type checks and literal conversion. */
typedef enum domain
{
	D_NONE, D_BOOL, D_INT, D_FLOAT, D_DECIMAL, D_DATETIME, D_TIME, D_DURATION, D_BYTES
} domain;

typedef enum kern
{
	K_CONST,					/* the same answer for every valid row */
	K_RANGE,					/* lo <= v <= hi, xor negate */
	K_FLOAT,					/* (double) v `fop` d */
	K_BYTES,					/* memcmp order */
	K_SET						/* v in a sorted set */
} kern;

/* Float ops after folding in a NaN literal and Postgres's NaN ordering. */
typedef enum fop
{
	F_EQ, F_NE, F_LT, F_LE, F_GT_NAN, F_GE_NAN, F_ISNAN, F_NOTNAN
} fop;

typedef struct irange
{
	lt_int128	lo, hi;
} irange;

typedef struct plan
{
	kern		k;
	int			col;
	int8_t		cval;			/* K_CONST: 1 TRUE, 0 FALSE, -1 UNKNOWN (for valid rows; -1 for all) */
	bool		negate;
	bool		lo_open, hi_open;	/* bound equals the domain's end: skip that test */
	lt_int128	lo, hi;
	fop			fo;
	double		d;
	lt_cmp_op	op;
	const uint8_t *b;
	size_t		blen;
	/* K_SET: sorted items: disjoint irange (ints), double (fset) or bytes_item */
	int64_t		n_set;
	void	   *set;
	bool		fset;			/* a float set */
	bool		set_nan;		/* float sets: NaN is a member */
	bool		set_null;		/* a NULL item: misses are UNKNOWN */
	bool		set_empty;		/* no items at all: FALSE even for NULL rows */
} plan;

struct lt_expr
{
	node_kind	kind;
	int			col;			/* N_COLUMN */
	lt_value	val;			/* N_CONST (bytes owned by the node) */
	int			slot;			/* N_PARAM */
	lt_value_kind pkind;
	bool		param_array;
	lt_cmp_op	op;				/* N_CMP, normalized to column OP value */
	bool		negated;		/* N_IS_NULL: IS NOT NULL */
	int			n_args;
	lt_expr   **args;			/* CMP: col, value; BETWEEN: col, lo, hi; IN: col, items... */
	plan		p1, p2;			/* bound plans; BETWEEN: p1 lower, p2 upper bound */
	bool		fused;			/* BETWEEN folded into p1 */
	uint8_t    *t, *f;			/* scratch masks: t cap bytes, f 3 * cap */
	int64_t		cap;
	uint8_t    *owned;			/* const bytes */
};

typedef struct param
{
	bool		declared, array, set;
	lt_value_kind kind;
	int			n;
	lt_value   *vals;
	uint8_t    *bytes;			/* copies of the values' bytes */
} param;

struct lt_filter
{
	int			n_columns;
	const lt_field **columns;
	lt_expr   **nodes;			/* every node, for freeing */
	int			n_nodes, nodes_cap;
	lt_expr    *root;
	param	   *params;
	int			n_params;
	bool		bound;
	int64_t		cap;			/* rows the scratch masks hold */
	uint8_t    *all_true;		/* mask of a root-less filter */
};

/* ------------------------------------------------------------------ types */

static phys
field_phys(const lt_field *f)
{
	switch (f->type)
	{
		case LT_TYPE_BOOL:
		case LT_TYPE_UINT8:
			return P_U8;
		case LT_TYPE_INT8:
			return P_I8;
		case LT_TYPE_INT16:
			return P_I16;
		case LT_TYPE_INT32:
		case LT_TYPE_DATE32:
		case LT_TYPE_TIME32:
			return P_I32;
		case LT_TYPE_INT64:
		case LT_TYPE_DATE64:
		case LT_TYPE_TIME64:
		case LT_TYPE_TIMESTAMP:
		case LT_TYPE_DURATION:
			return P_I64;
		case LT_TYPE_UINT16:
			return P_U16;
		case LT_TYPE_UINT32:
			return P_U32;
		case LT_TYPE_UINT64:
			return P_U64;
		case LT_TYPE_DECIMAL128:
			return P_I128;
		case LT_TYPE_FLOAT16:
			return P_F16;
		case LT_TYPE_FLOAT32:
			return P_F32;
		case LT_TYPE_FLOAT64:
			return P_F64;
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			return P_VAR;
		case LT_TYPE_FIXED_BINARY:
			return P_FIXED;
		default:
			return P_NONE;
	}
}

static domain
field_domain(const lt_field *f)
{
	switch (f->type)
	{
		case LT_TYPE_BOOL:
			return D_BOOL;
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_UINT8:
		case LT_TYPE_UINT16:
		case LT_TYPE_UINT32:
		case LT_TYPE_UINT64:
			return D_INT;
		case LT_TYPE_FLOAT16:
		case LT_TYPE_FLOAT32:
		case LT_TYPE_FLOAT64:
			return D_FLOAT;
		case LT_TYPE_DECIMAL128:
			return D_DECIMAL;
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
		case LT_TYPE_TIMESTAMP:
			return D_DATETIME;
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
			return D_TIME;
		case LT_TYPE_DURATION:
			return D_DURATION;
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
		case LT_TYPE_FIXED_BINARY:
			return D_BYTES;
		default:
			return D_NONE;
	}
}

static const char *
kind_name(lt_value_kind k)
{
	static const char *names[] = {"null", "bool", "int", "uint", "float", "decimal", "bytes", "date",
	"timestamp", "time", "duration"};

	return (unsigned) k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

/* Can a value of kind k be compared exactly with column field f? */
static bool
compatible(const lt_field *f, lt_value_kind k)
{
	if (k == LT_VALUE_NULL)
		return field_domain(f) != D_NONE;
	switch (field_domain(f))
	{
		case D_BOOL:
			return k == LT_VALUE_BOOL;
		case D_INT:
			return k == LT_VALUE_INT || k == LT_VALUE_UINT || k == LT_VALUE_DECIMAL || k == LT_VALUE_FLOAT;
		case D_FLOAT:
			return k == LT_VALUE_FLOAT || k == LT_VALUE_INT || k == LT_VALUE_UINT;
		case D_DECIMAL:
			return k == LT_VALUE_INT || k == LT_VALUE_UINT || k == LT_VALUE_DECIMAL;
		case D_DATETIME:
			return k == LT_VALUE_DATE || k == LT_VALUE_TIMESTAMP;
		case D_TIME:
			return k == LT_VALUE_TIME;
		case D_DURATION:
			return k == LT_VALUE_DURATION;
		case D_BYTES:
			return k == LT_VALUE_BYTES;
		case D_NONE:
			break;
	}
	return false;
}

/* Ticks per day of a temporal column or value: a common base for unit ratios. */
static int64_t
unit_ticks(lt_time_unit u)
{
	static const int64_t t[] = {86400LL, 86400000LL, 86400000000LL, 86400000000000LL};

	return t[u];
}

static int64_t
column_ticks(const lt_field *f)
{
	if (f->type == LT_TYPE_DATE32)
		return 1;
	if (f->type == LT_TYPE_DATE64)
		return unit_ticks(LT_UNIT_MS);
	return unit_ticks(f->unit);
}

static void
domain_bounds(phys p, lt_int128 *min, lt_int128 *max)
{
	switch (p)
	{
		case P_I8:
			*min = INT8_MIN, *max = INT8_MAX;
			break;
		case P_I16:
			*min = INT16_MIN, *max = INT16_MAX;
			break;
		case P_I32:
			*min = INT32_MIN, *max = INT32_MAX;
			break;
		case P_I64:
			*min = INT64_MIN, *max = INT64_MAX;
			break;
		case P_U8:
			*min = 0, *max = UINT8_MAX;
			break;
		case P_U16:
			*min = 0, *max = UINT16_MAX;
			break;
		case P_U32:
			*min = 0, *max = UINT32_MAX;
			break;
		case P_U64:
			*min = 0, *max = UINT64_MAX;
			break;
		default:
			*min = I128_MIN, *max = I128_MAX;
			break;
	}
}

static lt_int128
pow10_128(int n)
{
	lt_int128	r = 1;

	while (n-- > 0)
		r *= 10;
	return r;
}

/* floor and ceil of a / b for b > 0 */
static lt_int128
floor_div(lt_int128 a, lt_int128 b)
{
	lt_int128	q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

static lt_int128
ceil_div(lt_int128 a, lt_int128 b)
{
	lt_int128	q = a / b;

	return (a % b != 0 && a > 0) ? q + 1 : q;
}

/* ------------------------------------------------------------------ building */

lt_code
lt_filter_new(int n_columns, const lt_field *const *columns, lt_filter **out, lt_error *err)
{
	lt_filter  *f = lt_calloc(1, sizeof(lt_filter));

	*out = NULL;
	if (!f)
		return lt_nomem(err);
	if (n_columns < 0)
	{
		lt_free(f);
		return lt_error_set(err, LT_EINVALID, "a filter needs a column list");
	}
	f->columns = lt_calloc(n_columns ? n_columns : 1, sizeof(lt_field *));
	if (!f->columns)
	{
		lt_free(f);
		return lt_nomem(err);
	}
	for (int i = 0; i < n_columns; i++)
		f->columns[i] = columns[i];
	f->n_columns = n_columns;
	*out = f;
	return LT_OK;
}

static void
plan_free(plan *p)
{
	lt_free(p->set);
	p->set = NULL;
}

void
lt_filter_free(lt_filter *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n_nodes; i++)
	{
		lt_expr    *e = f->nodes[i];

		plan_free(&e->p1);
		plan_free(&e->p2);
		lt_free(e->args);
		lt_free(e->t);
		lt_free(e->f);
		lt_free(e->owned);
		lt_free(e);
	}
	for (int i = 0; i < f->n_params; i++)
	{
		lt_free(f->params[i].vals);
		lt_free(f->params[i].bytes);
	}
	lt_free(f->params);
	lt_free(f->nodes);
	lt_free(f->columns);
	lt_free(f->all_true);
	lt_free(f);
}

int
lt_filter_n_columns(const lt_filter *f)
{
	return f->n_columns;
}

const lt_field *const *
lt_filter_columns(const lt_filter *f)
{
	return f->columns;
}

static lt_expr *
new_node(lt_filter *f, node_kind kind, int n_args, lt_error *err)
{
	lt_expr    *e;

	if (f->n_nodes == f->nodes_cap)
	{
		int			cap = f->nodes_cap ? f->nodes_cap * 2 : 16;
		lt_expr   **n = lt_realloc(f->nodes, (size_t) cap * sizeof(lt_expr *));

		if (!n)
			return lt_nomem(err), NULL;
		f->nodes = n;
		f->nodes_cap = cap;
	}
	e = lt_calloc(1, sizeof(lt_expr));
	if (!e || (n_args > 0 && !(e->args = lt_calloc(n_args, sizeof(lt_expr *)))))
	{
		lt_free(e);
		return lt_nomem(err), NULL;
	}
	e->kind = kind;
	e->n_args = n_args;
	f->nodes[f->n_nodes++] = e;
	f->bound = false;
	return e;
}

lt_expr *
lt_expr_column(lt_filter *f, int column, lt_error *err)
{
	lt_expr    *e;

	if (column < 0 || column >= f->n_columns)
		return lt_error_set(err, LT_EINVALID, "filter column %d out of range", column), NULL;
	e = new_node(f, N_COLUMN, 0, err);
	if (e)
		e->col = column;
	return e;
}

lt_expr *
lt_expr_const(lt_filter *f, const lt_value *v, lt_error *err)
{
	lt_expr    *e;

	if (v->kind > LT_VALUE_DURATION || (v->kind == LT_VALUE_DECIMAL && (v->scale < 0 || v->scale > 38)) ||
		(v->kind >= LT_VALUE_TIMESTAMP && (unsigned) v->unit > LT_UNIT_NS))
		return lt_error_set(err, LT_EINVALID, "bad filter literal (%s)", kind_name(v->kind)), NULL;
	e = new_node(f, N_CONST, 0, err);
	if (!e)
		return NULL;
	e->val = *v;
	if (v->kind == LT_VALUE_BYTES)
	{
		e->owned = lt_malloc(v->v.bytes.len ? v->v.bytes.len : 1);
		if (!e->owned)
			return lt_nomem(err), NULL;
		if (v->v.bytes.len)
			memcpy(e->owned, v->v.bytes.ptr, v->v.bytes.len);
		e->val.v.bytes.ptr = e->owned;
	}
	return e;
}

static param *
get_param(lt_filter *f, int slot, lt_error *err)
{
	if (slot < 0 || slot > 65535)
		return lt_error_set(err, LT_EINVALID, "parameter slot %d out of range", slot), NULL;
	if (slot >= f->n_params)
	{
		param	   *p = lt_realloc(f->params, (size_t) (slot + 1) * sizeof(param));

		if (!p)
			return lt_nomem(err), NULL;
		memset(p + f->n_params, 0, (size_t) (slot + 1 - f->n_params) * sizeof(param));
		f->params = p;
		f->n_params = slot + 1;
	}
	return &f->params[slot];
}

static lt_expr *
declare_param(lt_filter *f, int slot, lt_value_kind kind, bool array, lt_error *err)
{
	param	   *p = get_param(f, slot, err);
	lt_expr    *e;

	if (!p)
		return NULL;
	if (kind == LT_VALUE_NULL || kind > LT_VALUE_DURATION)
		return lt_error_set(err, LT_EINVALID, "parameter $%d needs a value kind", slot), NULL;
	if (p->declared && (p->kind != kind || p->array != array))
		return lt_error_set(err, LT_EINVALID, "parameter $%d declared twice with different types", slot), NULL;
	e = new_node(f, N_PARAM, 0, err);
	if (!e)
		return NULL;
	p->declared = true;
	p->kind = kind;
	p->array = array;
	e->slot = slot;
	e->pkind = kind;
	e->param_array = array;
	return e;
}

lt_expr *
lt_expr_param(lt_filter *f, int slot, lt_value_kind kind, lt_error *err)
{
	return declare_param(f, slot, kind, false, err);
}

static bool
is_value(const lt_expr *e)
{
	return e && (e->kind == N_CONST || (e->kind == N_PARAM && !e->param_array));
}

static lt_value_kind
value_kind(const lt_expr *e)
{
	return e->kind == N_CONST ? e->val.kind : e->pkind;
}

/* Check that column x can be compared with value v. */
static bool
check_operand(lt_filter *f, const lt_expr *x, const lt_expr *v, lt_error *err)
{
	const lt_field *fld;

	if (!x || !v)
	{
		/* a child failed and already said why */
		if (err && err->code == LT_OK)
			lt_error_set(err, LT_EINVALID, "missing filter operand");
		return false;
	}
	if (x->kind != N_COLUMN || !is_value(v))
		return lt_error_set(err, LT_EUNSUPPORTED, "filters compare a column with a constant or parameter"), false;
	fld = f->columns[x->col];
	if (!compatible(fld, value_kind(v)))
		return lt_error_set(err, LT_EUNSUPPORTED, "cannot compare column \"%s\" (%s) with a %s value exactly",
							fld->name, lt_type_name(fld->type), kind_name(value_kind(v))), false;
	return true;
}

lt_expr *
lt_expr_cmp(lt_filter *f, lt_cmp_op op, lt_expr *lhs, lt_expr *rhs, lt_error *err)
{
	lt_expr    *e;

	if ((unsigned) op > LT_CMP_GE)
		return lt_error_set(err, LT_EINVALID, "bad comparison operator %d", (int) op), NULL;
	if (lhs && rhs && lhs->kind != N_COLUMN && rhs->kind == N_COLUMN)
	{
		/* value OP column: commute */
		static const lt_cmp_op commuted[] = {LT_CMP_EQ, LT_CMP_NE, LT_CMP_GT, LT_CMP_GE, LT_CMP_LT, LT_CMP_LE};
		lt_expr    *tmp = lhs;

		lhs = rhs;
		rhs = tmp;
		op = commuted[op];
	}
	if (!check_operand(f, lhs, rhs, err))
		return NULL;
	e = new_node(f, N_CMP, 2, err);
	if (!e)
		return NULL;
	e->op = op;
	e->args[0] = lhs;
	e->args[1] = rhs;
	return e;
}

lt_expr *
lt_expr_between(lt_filter *f, lt_expr *x, lt_expr *lo, lt_expr *hi, lt_error *err)
{
	lt_expr    *e;

	if (!check_operand(f, x, lo, err) || !check_operand(f, x, hi, err))
		return NULL;
	e = new_node(f, N_BETWEEN, 3, err);
	if (!e)
		return NULL;
	e->args[0] = x;
	e->args[1] = lo;
	e->args[2] = hi;
	return e;
}

lt_expr *
lt_expr_in(lt_filter *f, lt_expr *x, int n_items, lt_expr *const *items, lt_error *err)
{
	lt_expr    *e;

	if (n_items < 0)
		return lt_error_set(err, LT_EINVALID, "negative IN list length"), NULL;
	if (!x)
		return check_operand(f, x, x, err), NULL;
	if (x->kind != N_COLUMN)
		return lt_error_set(err, LT_EUNSUPPORTED, "filters compare a column with a constant or parameter"), NULL;
	for (int i = 0; i < n_items; i++)
		if (!check_operand(f, x, items[i], err))
			return NULL;
	if (field_domain(f->columns[x->col]) == D_NONE)
		return lt_error_set(err, LT_EUNSUPPORTED, "cannot compare column \"%s\" (%s)",
							f->columns[x->col]->name, lt_type_name(f->columns[x->col]->type)), NULL;
	e = new_node(f, N_IN, 1 + n_items, err);
	if (!e)
		return NULL;
	e->args[0] = x;
	for (int i = 0; i < n_items; i++)
		e->args[1 + i] = items[i];
	return e;
}

lt_expr *
lt_expr_in_param(lt_filter *f, lt_expr *x, int slot, lt_value_kind kind, lt_error *err)
{
	lt_expr    *p;
	lt_expr    *e;

	if (!x)
		return check_operand(f, x, x, err), NULL;
	if (x->kind != N_COLUMN)
		return lt_error_set(err, LT_EUNSUPPORTED, "filters compare a column with a constant or parameter"), NULL;
	if (!compatible(f->columns[x->col], kind) || kind == LT_VALUE_NULL)
		return lt_error_set(err, LT_EUNSUPPORTED, "cannot compare column \"%s\" (%s) with %s values exactly",
							f->columns[x->col]->name, lt_type_name(f->columns[x->col]->type),
							kind_name(kind)), NULL;
	p = declare_param(f, slot, kind, true, err);
	if (!p)
		return NULL;
	e = new_node(f, N_IN, 2, err);
	if (!e)
		return NULL;
	e->args[0] = x;
	e->args[1] = p;
	return e;
}

lt_expr *
lt_expr_is_null(lt_filter *f, lt_expr *x, bool negated, lt_error *err)
{
	lt_expr    *e;

	if (!x)
		return check_operand(f, x, x, err), NULL;
	if (x->kind != N_COLUMN)
		return lt_error_set(err, LT_EUNSUPPORTED, "IS NULL applies to a column"), NULL;
	e = new_node(f, N_IS_NULL, 1, err);
	if (!e)
		return NULL;
	e->args[0] = x;
	e->negated = negated;
	return e;
}

/* May e stand where a boolean is expected? */
static bool
is_predicate(const lt_filter *f, const lt_expr *e)
{
	switch (e->kind)
	{
		case N_COLUMN:
			return f->columns[e->col]->type == LT_TYPE_BOOL;
		case N_CONST:
			return e->val.kind == LT_VALUE_BOOL || e->val.kind == LT_VALUE_NULL;
		case N_PARAM:
			return e->pkind == LT_VALUE_BOOL && !e->param_array;
		default:
			return true;
	}
}

static lt_expr *
bool_node(lt_filter *f, node_kind kind, int n, lt_expr *const *args, lt_error *err)
{
	lt_expr    *e;

	if (n < 1)
		return lt_error_set(err, LT_EINVALID, "AND/OR needs an argument"), NULL;
	for (int i = 0; i < n; i++)
	{
		if (!args[i])
			return check_operand(f, NULL, NULL, err), NULL;
		if (!is_predicate(f, args[i]))
			return lt_error_set(err, LT_EINVALID, "a filter argument is not boolean"), NULL;
	}
	e = new_node(f, kind, n, err);
	if (!e)
		return NULL;
	memcpy(e->args, args, (size_t) n * sizeof(lt_expr *));
	return e;
}

lt_expr *
lt_expr_and(lt_filter *f, int n, lt_expr *const *args, lt_error *err)
{
	return bool_node(f, N_AND, n, args, err);
}

lt_expr *
lt_expr_or(lt_filter *f, int n, lt_expr *const *args, lt_error *err)
{
	return bool_node(f, N_OR, n, args, err);
}

lt_expr *
lt_expr_not(lt_filter *f, lt_expr *arg, lt_error *err)
{
	return bool_node(f, N_NOT, 1, &arg, err);
}

lt_code
lt_filter_set_root(lt_filter *f, lt_expr *root, lt_error *err)
{
	if (root && !is_predicate(f, root))
		return lt_error_set(err, LT_EINVALID, "the filter's root is not boolean");
	f->root = root;
	f->bound = false;
	return LT_OK;
}

lt_code
lt_filter_set_param_array(lt_filter *f, int slot, int n, const lt_value *vals, lt_error *err)
{
	param	   *p;
	size_t		bytes = 0;
	lt_value   *nv;
	uint8_t    *nb = NULL;

	if (slot < 0 || slot >= f->n_params || !f->params[slot].declared)
		return lt_error_set(err, LT_EINVALID, "parameter $%d is not used by the filter", slot);
	p = &f->params[slot];
	if (n < 0 || (!p->array && n != 1))
		return lt_error_set(err, LT_EINVALID, "parameter $%d takes one value", slot);
	for (int i = 0; i < n; i++)
	{
		if (vals[i].kind != LT_VALUE_NULL && vals[i].kind != p->kind)
			return lt_error_set(err, LT_EINVALID, "parameter $%d is %s, not %s", slot, kind_name(p->kind),
								kind_name(vals[i].kind));
		if ((vals[i].kind == LT_VALUE_DECIMAL && (vals[i].scale < 0 || vals[i].scale > 38)) ||
			(vals[i].kind >= LT_VALUE_TIMESTAMP && (unsigned) vals[i].unit > LT_UNIT_NS))
			return lt_error_set(err, LT_EINVALID, "bad value for parameter $%d", slot);
		if (vals[i].kind == LT_VALUE_BYTES)
			bytes += vals[i].v.bytes.len;
	}
	nv = lt_malloc((size_t) (n ? n : 1) * sizeof(lt_value));
	if (!nv || (bytes && !(nb = lt_malloc(bytes))))
	{
		lt_free(nv);
		return lt_nomem(err);
	}
	bytes = 0;
	for (int i = 0; i < n; i++)
	{
		nv[i] = vals[i];
		if (vals[i].kind == LT_VALUE_BYTES)
		{
			if (vals[i].v.bytes.len)
				memcpy(nb + bytes, vals[i].v.bytes.ptr, vals[i].v.bytes.len);
			nv[i].v.bytes.ptr = nb + bytes;
			bytes += vals[i].v.bytes.len;
		}
	}
	lt_free(p->vals);
	lt_free(p->bytes);
	p->vals = nv;
	p->bytes = nb;
	p->n = n;
	p->set = true;
	f->bound = false;
	return LT_OK;
}

lt_code
lt_filter_set_param(lt_filter *f, int slot, const lt_value *v, lt_error *err)
{
	if (slot >= 0 && slot < f->n_params && f->params[slot].array && v->kind != LT_VALUE_NULL)
		return lt_error_set(err, LT_EINVALID, "parameter $%d is an array", slot);
	/* a NULL array parameter is one NULL value with the array flag: every row UNKNOWN */
	if (slot >= 0 && slot < f->n_params && f->params[slot].array)
	{
		lt_code		rc = lt_filter_set_param_array(f, slot, 0, NULL, err);

		if (rc == LT_OK)
			f->params[slot].n = -1;
		return rc;
	}
	return lt_filter_set_param_array(f, slot, 1, v, err);
}

/* ------------------------------------------------------------------ introspection */

/* node_kind and lt_expr_kind list the same kinds in the same order */
_Static_assert((int) N_NOT == (int) LT_EXPR_NOT && (int) N_CMP == (int) LT_EXPR_CMP, "expr kinds");

const lt_expr *
lt_filter_root(const lt_filter *f)
{
	return f->root;
}

lt_expr_kind
lt_expr_get_kind(const lt_expr *e)
{
	return (lt_expr_kind) e->kind;
}

int
lt_expr_n_args(const lt_expr *e)
{
	return e->n_args;
}

const lt_expr *
lt_expr_arg(const lt_expr *e, int i)
{
	return i >= 0 && i < e->n_args ? e->args[i] : NULL;
}

lt_cmp_op
lt_expr_get_op(const lt_expr *e)
{
	return e->op;
}

bool
lt_expr_is_negated(const lt_expr *e)
{
	return e->negated;
}

int
lt_expr_get_column(const lt_expr *e)
{
	return e->col;
}

lt_code
lt_expr_get_values(const lt_filter *f, const lt_expr *e, const lt_value **vals, int *n, lt_error *err)
{
	const param *p;

	if (e->kind == N_CONST)
	{
		*vals = &e->val;
		*n = 1;
		return LT_OK;
	}
	if (e->kind != N_PARAM)
		return lt_error_set(err, LT_EINVALID, "not a constant or parameter");
	p = &f->params[e->slot];
	if (!p->set)
		return lt_error_set(err, LT_EINVALID, "parameter $%d has no value", e->slot);
	*vals = p->vals;
	*n = p->n;
	return LT_OK;
}

/* ------------------------------------------------------------------ binding */

static lt_code
resolve(lt_filter *f, const lt_expr *v, const lt_value **out, lt_error *err)
{
	param	   *p;

	if (v->kind == N_CONST)
	{
		*out = &v->val;
		return LT_OK;
	}
	p = &f->params[v->slot];
	if (!p->set)
		return lt_error_set(err, LT_EINVALID, "parameter $%d has no value", v->slot);
	*out = &p->vals[0];
	return LT_OK;
}

/* Inclusive range of integers q with q OP x, x = num / den (den > 0). */
typedef struct qrange
{
	bool		empty;
	bool		lo_inf, hi_inf;
	lt_int128	lo, hi;
} qrange;

static qrange
range_of(lt_cmp_op op, lt_int128 num, lt_int128 den, int overflow)
{
	qrange		r = {0};
	lt_int128	fl, ce;

	if (overflow)
	{
		/* |x| beyond every column value: x > all when overflow > 0 */
		bool		below = (op == LT_CMP_LT || op == LT_CMP_LE) ? overflow > 0 : (op == LT_CMP_GT || op == LT_CMP_GE) ? overflow < 0 : false;

		r.lo_inf = r.hi_inf = true;
		r.empty = !below;
		return r;
	}
	fl = floor_div(num, den);
	ce = ceil_div(num, den);
	switch (op)
	{
		case LT_CMP_EQ:
		case LT_CMP_NE:
			r.lo = ce, r.hi = fl;
			r.empty = ce > fl;
			break;
		case LT_CMP_LT:
			r.lo_inf = true;
			r.empty = ce == I128_MIN;
			r.hi = r.empty ? 0 : ce - 1;
			break;
		case LT_CMP_LE:
			r.lo_inf = true;
			r.hi = fl;
			break;
		case LT_CMP_GT:
			r.hi_inf = true;
			r.empty = fl == I128_MAX;
			r.lo = r.empty ? 0 : fl + 1;
			break;
		case LT_CMP_GE:
			r.hi_inf = true;
			r.lo = ce;
			break;
	}
	return r;
}

/*
 * Plan `column OP v` for an integer-like column.  The value Postgres sees is
 * q = c * 10^-scale (decimals), q = c (ints, coarser or equal units: the
 * literal is rescaled to the column as a fraction) or q = floor(c / k) (a
 * finer unit, floored as the FDW shows it).
 */
static void
plan_range(plan *p, const lt_field *fld, phys ph, lt_cmp_op op, const lt_value *v)
{
	lt_int128	num = 0, den = 1, k = 1, dmin, dmax, lo, hi;
	int			overflow = 0;
	qrange		r;
	domain		d = field_domain(fld);

	switch (v->kind)
	{
		case LT_VALUE_BOOL:
			num = v->v.b ? 1 : 0;
			break;
		case LT_VALUE_INT:
			num = v->v.i;
			break;
		case LT_VALUE_UINT:
			num = v->v.u;
			break;
		case LT_VALUE_DECIMAL:
			num = v->v.dec;
			den = pow10_128(v->scale);
			break;
		default:
			{
				/* temporal */
				int64_t		tc = column_ticks(fld);
				int64_t		tl = v->kind == LT_VALUE_DATE ? 1 : unit_ticks(v->unit);

				num = v->v.i;
				if (tc < tl)
					den = tl / tc;	/* column coarser: c OP L / ratio */
				else
					k = tc / tl;	/* column finer (or equal): floor(c / k) OP L */
			}
			break;
	}
	if (d == D_DECIMAL)
	{
		/* c / 10^sc OP num / den  <=>  c OP num * 10^sc / den, cancelling powers of ten */
		int			sc = fld->scale;
		int			sl = v->kind == LT_VALUE_DECIMAL ? v->scale : 0;

		lt_int128	orig = num;

		if (sc >= sl)
		{
			/* beyond 2^127 the literal is beyond every column value (38 digits at most) */
			if (__builtin_mul_overflow(orig, pow10_128(sc - sl), &num))
				overflow = orig > 0 ? 1 : -1;
			den = 1;
		}
		else
			den = pow10_128(sl - sc);
	}
	r = range_of(op, num, den, overflow);
	domain_bounds(ph, &dmin, &dmax);
	p->k = K_RANGE;
	p->negate = op == LT_CMP_NE;
	if (r.empty)
	{
		p->k = K_CONST;
		p->cval = p->negate ? 1 : 0;
		return;
	}
	/* q in [lo, hi] with q = floor(c / k)  <=>  c in [lo * k, hi * k + k - 1] (no overflow: |q| < 2^65, k < 2^47) */
	lo = r.lo_inf ? dmin : r.lo * k;
	hi = r.hi_inf ? dmax : r.hi * k + (k - 1);
	if (lo < dmin)
		lo = dmin;
	if (hi > dmax)
		hi = dmax;
	if (lo > hi)
	{
		p->k = K_CONST;
		p->cval = p->negate ? 1 : 0;
		return;
	}
	if (lo == dmin && hi == dmax)
	{
		p->k = K_CONST;
		p->cval = p->negate ? 0 : 1;
		return;
	}
	p->lo = lo;
	p->hi = hi;
	p->lo_open = lo == dmin;
	p->hi_open = hi == dmax;
}

static double
value_double(const lt_value *v)
{
	return v->kind == LT_VALUE_FLOAT ? v->v.f : v->kind == LT_VALUE_INT ? (double) v->v.i : (double) v->v.u;
}

static void
plan_float(plan *p, lt_cmp_op op, double d)
{
	static const fop plain[] = {F_EQ, F_NE, F_LT, F_LE, F_GT_NAN, F_GE_NAN};

	p->k = K_FLOAT;
	p->d = d;
	if (!isnan(d))
	{
		p->fo = plain[op];
		return;
	}
	/* NaN literal: NaN is the largest value and equals itself */
	switch (op)
	{
		case LT_CMP_EQ:
		case LT_CMP_GE:
			p->fo = F_ISNAN;
			break;
		case LT_CMP_NE:
		case LT_CMP_LT:
			p->fo = F_NOTNAN;
			break;
		case LT_CMP_LE:
			p->k = K_CONST;
			p->cval = 1;
			break;
		case LT_CMP_GT:
			p->k = K_CONST;
			p->cval = 0;
			break;
	}
}

static void
plan_compare(plan *p, const lt_field *fld, int col, lt_cmp_op op, const lt_value *v)
{
	phys		ph = field_phys(fld);
	domain		d = field_domain(fld);

	plan_free(p);
	memset(p, 0, sizeof(*p));
	p->col = col;
	p->op = op;
	if (v->kind == LT_VALUE_NULL)
	{
		p->k = K_CONST;
		p->cval = -1;
	}
	else if (d == D_BYTES)
	{
		p->k = K_BYTES;
		p->b = v->v.bytes.ptr;
		p->blen = v->v.bytes.len;
	}
	else if (d == D_FLOAT || v->kind == LT_VALUE_FLOAT)
		plan_float(p, op, value_double(v));
	else
		plan_range(p, fld, ph, op, v);
}

static int
cmp_irange(const void *a, const void *b)
{
	const irange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

typedef struct bytes_item
{
	const uint8_t *ptr;
	size_t		len;
} bytes_item;

static int
bytes_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	if (c == 0 && la != lb)
		c = la < lb ? -1 : 1;
	return c;
}

static int
cmp_bytes_item(const void *a, const void *b)
{
	const bytes_item *x = a, *y = b;

	return bytes_cmp(x->ptr, x->len, y->ptr, y->len);
}

/*
 * Plan x IN (vals) as a sorted set.  For integer-like columns every item
 * becomes the range of raw values equal to it (one value, none for 2.5
 * against an int column, or k values for a finer time unit), merged.
 */
static lt_code
plan_in(plan *p, const lt_field *fld, int col, const lt_value *vals, int n, lt_error *err)
{
	phys		ph = field_phys(fld);
	domain		d = field_domain(fld);
	int64_t		m = 0;

	plan_free(p);
	memset(p, 0, sizeof(*p));
	p->col = col;
	p->k = K_SET;
	if (n < 0)
	{
		/* a NULL array */
		p->k = K_CONST;
		p->cval = -1;
		return LT_OK;
	}
	p->set_empty = n == 0;
	p->fset = d == D_FLOAT;
	for (int i = 0; i < n; i++)
		p->fset |= vals[i].kind == LT_VALUE_FLOAT;
	if (d == D_BYTES)
	{
		bytes_item *s = lt_malloc((size_t) (n ? n : 1) * sizeof(bytes_item));

		if (!s)
			return lt_nomem(err);
		for (int i = 0; i < n; i++)
		{
			if (vals[i].kind == LT_VALUE_NULL)
				p->set_null = true;
			else
				s[m++] = (bytes_item) {vals[i].v.bytes.ptr, vals[i].v.bytes.len};
		}
		qsort(s, (size_t) m, sizeof(bytes_item), cmp_bytes_item);
		p->set = s;
		if (m > 1)
		{
			int64_t		w = 1;

			for (int64_t i = 1; i < m; i++)
				if (cmp_bytes_item(&s[i], &s[w - 1]) != 0)
					s[w++] = s[i];
			m = w;
		}
	}
	else if (p->fset)
	{
		double	   *s = lt_malloc((size_t) (n ? n : 1) * sizeof(double));

		if (!s)
			return lt_nomem(err);
		for (int i = 0; i < n; i++)
		{
			double		x = value_double(&vals[i]);

			if (vals[i].kind == LT_VALUE_NULL)
				p->set_null = true;
			else if (isnan(x))
				p->set_nan = true;
			else
				s[m++] = x == 0 ? 0.0 : x;	/* -0 = 0 */
		}
		qsort(s, (size_t) m, sizeof(double), cmp_double);
		p->set = s;
		if (m > 1)
		{
			int64_t		w = 1;

			for (int64_t i = 1; i < m; i++)
				if (s[i] != s[w - 1])
					s[w++] = s[i];
			m = w;
		}
	}
	else
	{
		irange	   *s = lt_malloc((size_t) (n ? n : 1) * sizeof(irange));

		if (!s)
			return lt_nomem(err);
		for (int i = 0; i < n; i++)
		{
			plan		eq = {0};
			lt_int128	dmin, dmax;

			if (vals[i].kind == LT_VALUE_NULL)
			{
				p->set_null = true;
				continue;
			}
			plan_range(&eq, fld, ph, LT_CMP_EQ, &vals[i]);
			if (eq.k == K_RANGE)
				s[m++] = (irange) {eq.lo, eq.hi};
			else if (eq.cval == 1)
			{
				/* every column value equals it (a bool domain, say) */
				domain_bounds(ph, &dmin, &dmax);
				s[m++] = (irange) {dmin, dmax};
			}
		}
		qsort(s, (size_t) m, sizeof(irange), cmp_irange);
		p->set = s;
		if (m > 1)
		{
			/* merge overlapping or adjacent ranges, so a binary search finds the one candidate */
			int64_t		w = 1;

			for (int64_t i = 1; i < m; i++)
			{
				if (s[i].lo <= s[w - 1].hi || s[i].lo - 1 == s[w - 1].hi)
				{
					if (s[i].hi > s[w - 1].hi)
						s[w - 1].hi = s[i].hi;
				}
				else
					s[w++] = s[i];
			}
			m = w;
		}
	}
	p->n_set = m;
	return LT_OK;
}

static lt_code
bind_node(lt_filter *f, lt_expr *e, lt_error *err)
{
	const lt_value *v = NULL;
	const lt_value *v2 = NULL;

	switch (e->kind)
	{
		case N_CMP:
			LT_TRY(resolve(f, e->args[1], &v, err));
			plan_compare(&e->p1, f->columns[e->args[0]->col], e->args[0]->col, e->op, v);
			break;
		case N_BETWEEN:
			LT_TRY(resolve(f, e->args[1], &v, err));
			LT_TRY(resolve(f, e->args[2], &v2, err));
			plan_compare(&e->p1, f->columns[e->args[0]->col], e->args[0]->col, LT_CMP_GE, v);
			plan_compare(&e->p2, f->columns[e->args[0]->col], e->args[0]->col, LT_CMP_LE, v2);
			e->fused = false;
			if (e->p1.k == K_RANGE && e->p2.k == K_RANGE)
			{
				/* one kernel for both bounds */
				e->p1.hi = e->p2.hi;
				e->p1.hi_open = e->p2.hi_open;
				if (e->p1.lo > e->p1.hi)
				{
					e->p1.k = K_CONST;
					e->p1.cval = 0;
				}
				e->fused = true;
			}
			break;
		case N_IN:
			{
				const lt_field *fld = f->columns[e->args[0]->col];

				if (e->n_args == 2 && e->args[1]->kind == N_PARAM && e->args[1]->param_array)
				{
					param	   *p = &f->params[e->args[1]->slot];

					if (!p->set)
						return lt_error_set(err, LT_EINVALID, "parameter $%d has no value", e->args[1]->slot);
					LT_TRY(plan_in(&e->p1, fld, e->args[0]->col, p->vals, p->n, err));
				}
				else
				{
					int			n = e->n_args - 1;
					lt_value   *vals = lt_malloc((size_t) (n ? n : 1) * sizeof(lt_value));
					lt_code		rc = LT_OK;

					if (!vals)
						return lt_nomem(err);
					for (int i = 0; i < n && rc == LT_OK; i++)
					{
						rc = resolve(f, e->args[1 + i], &v, err);
						if (rc == LT_OK)
							vals[i] = *v;
					}
					if (rc == LT_OK)
						rc = plan_in(&e->p1, fld, e->args[0]->col, vals, n, err);
					lt_free(vals);
					LT_TRY(rc);
				}
			}
			break;
		case N_AND:
		case N_OR:
		case N_NOT:
			for (int i = 0; i < e->n_args; i++)
				LT_TRY(bind_node(f, e->args[i], err));
			break;
		case N_PARAM:
			if (!f->params[e->slot].set)
				return lt_error_set(err, LT_EINVALID, "parameter $%d has no value", e->slot);
			break;
		default:
			break;
	}
	return LT_OK;
}

static lt_code
bind(lt_filter *f, lt_error *err)
{
	if (f->bound)
		return LT_OK;
	if (f->root)
		LT_TRY(bind_node(f, f->root, err));
	f->bound = true;
	return LT_OK;
}

/* ------------------------------------------------------------------ kernels */

/* m[i] = cmp(v[i]) for the whole batch, ignoring validity. */

#define RANGE_LOOP(T) \
	do { \
		const T    *v_ = (const T *) a->values; \
		T			lo_ = (T) p->lo, hi_ = (T) p->hi; \
		uint8_t		x_ = p->negate; \
		if (lo_ == hi_) \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) ((v_[i] == lo_) ^ x_); \
		else if (p->lo_open) \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) ((v_[i] <= hi_) ^ x_); \
		else if (p->hi_open) \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) ((v_[i] >= lo_) ^ x_); \
		else \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) (((v_[i] >= lo_) & (v_[i] <= hi_)) ^ x_); \
	} while (0)

static void
range_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	switch (ph)
	{
		case P_I8:
			RANGE_LOOP(int8_t);
			break;
		case P_I16:
			RANGE_LOOP(int16_t);
			break;
		case P_I32:
			RANGE_LOOP(int32_t);
			break;
		case P_I64:
			RANGE_LOOP(int64_t);
			break;
		case P_U8:
			RANGE_LOOP(uint8_t);
			break;
		case P_U16:
			RANGE_LOOP(uint16_t);
			break;
		case P_U32:
			RANGE_LOOP(uint32_t);
			break;
		case P_U64:
			RANGE_LOOP(uint64_t);
			break;
		case P_I128:
			/* decimal slots may be only 8-byte aligned (palloc): load with memcpy */
			for (int64_t i = 0; i < n; i++)
			{
				lt_int128	x;

				memcpy(&x, a->values + i * 16, 16);
				m[i] = (uint8_t) (((x >= p->lo) & (x <= p->hi)) ^ p->negate);
			}
			break;
		default:
			break;
	}
}


#define FLOAT_OPS(LOAD) \
	do { \
		double		d_ = p->d; \
		switch (p->fo) \
		{ \
			case F_EQ: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x == d_; } break; \
			case F_NE: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x != d_; } break; \
			case F_LT: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x < d_; } break; \
			case F_LE: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x <= d_; } break; \
			case F_GT_NAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = (x > d_) | (x != x); } break; \
			case F_GE_NAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = (x >= d_) | (x != x); } break; \
			case F_ISNAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x != x; } break; \
			case F_NOTNAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x == x; } break; \
		} \
	} while (0)

static void
float_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	switch (ph)
	{
		case P_F64:
			{
				const double *v = (const double *) a->values;

				FLOAT_OPS(v[i]);
			}
			break;
		case P_F32:
			{
				const float *v = (const float *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_F16:
			{
				const uint16_t *v = (const uint16_t *) a->values;

				FLOAT_OPS((double) lt_half_to_float(v[i]));
			}
			break;
		case P_I8:
			{
				const int8_t *v = (const int8_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_I16:
			{
				const int16_t *v = (const int16_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_I32:
			{
				const int32_t *v = (const int32_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_I64:
			{
				const int64_t *v = (const int64_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U8:
			{
				const uint8_t *v = a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U16:
			{
				const uint16_t *v = (const uint16_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U32:
			{
				const uint32_t *v = (const uint32_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U64:
			{
				const uint64_t *v = (const uint64_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		default:
			break;
	}
}

static inline void
slot_bytes(const lt_array *a, phys ph, int64_t i, const uint8_t **ptr, size_t *len)
{
	if (ph == P_FIXED)
	{
		*len = (size_t) a->field->byte_width;
		*ptr = a->values + i * (int64_t) *len;
	}
	else
	{
		*ptr = a->data + a->offsets[i];
		*len = (size_t) (a->offsets[i + 1] - a->offsets[i]);
	}
}

static void
bytes_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	const uint8_t *b = p->b;
	size_t		bl = p->blen;

	if (p->op == LT_CMP_EQ || p->op == LT_CMP_NE)
	{
		uint8_t		x = p->op == LT_CMP_NE;

		for (int64_t i = 0; i < n; i++)
		{
			const uint8_t *s;
			size_t		l;

			slot_bytes(a, ph, i, &s, &l);
			m[i] = (uint8_t) ((l == bl && (l == 0 || memcmp(s, b, l) == 0)) ^ x);
		}
		return;
	}
	for (int64_t i = 0; i < n; i++)
	{
		const uint8_t *s;
		size_t		l;
		int			c;

		slot_bytes(a, ph, i, &s, &l);
		c = bytes_cmp(s, l, b, bl);
		switch (p->op)
		{
			case LT_CMP_LT:
				m[i] = c < 0;
				break;
			case LT_CMP_LE:
				m[i] = c <= 0;
				break;
			case LT_CMP_GT:
				m[i] = c > 0;
				break;
			default:
				m[i] = c >= 0;
				break;
		}
	}
}

#define SET_LOOP(T) \
	do { \
		const T    *v_ = (const T *) a->values; \
		const irange *s_ = (const irange *) p->set; \
		int64_t		ns_ = p->n_set; \
		if (ns_ <= SMALL_SET) \
		{ \
			memset(m, 0, (size_t) n); \
			for (int64_t j = 0; j < ns_; j++) \
			{ \
				T			lo_ = (T) s_[j].lo, hi_ = (T) s_[j].hi; \
				if (lo_ == hi_) \
					for (int64_t i = 0; i < n; i++) m[i] |= v_[i] == lo_; \
				else \
					for (int64_t i = 0; i < n; i++) m[i] |= (v_[i] >= lo_) & (v_[i] <= hi_); \
			} \
		} \
		else \
			for (int64_t i = 0; i < n; i++) \
				m[i] = in_ranges(s_, ns_, v_[i]); \
	} while (0)

/* Is x in one of the sorted disjoint ranges? */
static inline uint8_t
in_ranges(const irange *s, int64_t ns, lt_int128 x)
{
	int64_t		lo = 0, hi = ns;

	/* the last range starting at or below x */
	while (lo < hi)
	{
		int64_t		mid = (lo + hi) / 2;

		if (s[mid].lo <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && x <= s[lo - 1].hi;
}

static inline double
load_double(const lt_array *a, phys ph, int64_t i)
{
	switch (ph)
	{
		case P_F64:
			return ((const double *) a->values)[i];
		case P_F32:
			return ((const float *) a->values)[i];
		case P_F16:
			return lt_half_to_float(((const uint16_t *) a->values)[i]);
		case P_I8:
			return ((const int8_t *) a->values)[i];
		case P_I16:
			return ((const int16_t *) a->values)[i];
		case P_I32:
			return ((const int32_t *) a->values)[i];
		case P_I64:
			return (double) ((const int64_t *) a->values)[i];
		case P_U8:
			return a->values[i];
		case P_U16:
			return ((const uint16_t *) a->values)[i];
		case P_U32:
			return ((const uint32_t *) a->values)[i];
		case P_U64:
			return (double) ((const uint64_t *) a->values)[i];
		default:
			return 0;
	}
}

/* m[i] = v[i] in the set; float sets need 2n bytes at m. */
static void
set_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	if (field_domain(a->field) == D_BYTES)
	{
		const bytes_item *s = p->set;

		for (int64_t i = 0; i < n; i++)
		{
			const uint8_t *b;
			size_t		l;
			int64_t		lo = 0, hi = p->n_set;

			slot_bytes(a, ph, i, &b, &l);
			while (lo < hi)
			{
				int64_t		mid = (lo + hi) / 2;

				if (bytes_cmp(s[mid].ptr, s[mid].len, b, l) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			m[i] = lo < p->n_set && bytes_cmp(s[lo].ptr, s[lo].len, b, l) == 0;
		}
		return;
	}
	if (p->fset)
	{
		const double *s = p->set;

		if (p->n_set > SMALL_SET)
		{
			for (int64_t i = 0; i < n; i++)
			{
				double		x = load_double(a, ph, i);
				int64_t		lo = 0, hi = p->n_set;

				if (isnan(x))
				{
					m[i] = p->set_nan;
					continue;
				}
				while (lo < hi)
				{
					int64_t		mid = (lo + hi) / 2;

					if (s[mid] < x)
						lo = mid + 1;
					else
						hi = mid;
				}
				m[i] = lo < p->n_set && s[lo] == x;
			}
			return;
		}
		else
		{
			/* item by item through the float kernel */
			plan		q = *p;
			uint8_t    *tmp = m + n;

			memset(m, 0, (size_t) n);
			q.k = K_FLOAT;
			for (int64_t j = 0; j <= p->n_set; j++)
			{
				if (j == p->n_set && !p->set_nan)
					break;
				q.fo = j < p->n_set ? F_EQ : F_ISNAN;
				q.d = j < p->n_set ? s[j] : 0;
				float_kernel(&q, ph, a, n, tmp);
				for (int64_t i = 0; i < n; i++)
					m[i] |= tmp[i];
			}
		}
		return;
	}
	switch (ph)
	{
		case P_I8:
			SET_LOOP(int8_t);
			break;
		case P_I16:
			SET_LOOP(int16_t);
			break;
		case P_I32:
			SET_LOOP(int32_t);
			break;
		case P_I64:
			SET_LOOP(int64_t);
			break;
		case P_U8:
			SET_LOOP(uint8_t);
			break;
		case P_U16:
			SET_LOOP(uint16_t);
			break;
		case P_U32:
			SET_LOOP(uint32_t);
			break;
		case P_U64:
			SET_LOOP(uint64_t);
			break;
		case P_I128:
			for (int64_t i = 0; i < n; i++)
			{
				lt_int128	x;

				memcpy(&x, a->values + i * 16, 16);
				m[i] = in_ranges(p->set, p->n_set, x);
			}
			break;
		default:
			break;
	}
}

/* ------------------------------------------------------------------ evaluation */

typedef struct eval_ctx
{
	lt_filter  *f;
	lt_array   *const *cols;
	int64_t		n;
} eval_ctx;

/*
 * Turn the raw comparison mask in e->t into t/f masks: apply validity, and
 * fill f when asked.  `unknown_miss`: a miss is UNKNOWN, not FALSE (IN with
 * a NULL item).
 */
static void
finish_masks(const lt_array *a, int64_t n, uint8_t *t, uint8_t *f, bool want_f, bool unknown_miss)
{
	const uint8_t *valid = a->validity;

	if (want_f)
	{
		if (unknown_miss)
			memset(f, 0, (size_t) n);
		else if (valid)
			for (int64_t i = 0; i < n; i++)
				f[i] = valid[i] & (t[i] ^ 1);
		else
			for (int64_t i = 0; i < n; i++)
				f[i] = t[i] ^ 1;
	}
	if (valid)
		for (int64_t i = 0; i < n; i++)
			t[i] &= valid[i];
}

static void
eval_plan(eval_ctx *c, const plan *p, uint8_t *t, uint8_t *f, bool want_f, uint8_t *scratch)
{
	const lt_array *a = c->cols[p->col];
	phys		ph = field_phys(a->field);
	int64_t		n = c->n;

	switch (p->k)
	{
		case K_CONST:
			if (p->cval < 0)
			{
				memset(t, 0, (size_t) n);
				if (want_f)
					memset(f, 0, (size_t) n);
				return;
			}
			memset(t, p->cval, (size_t) n);
			break;
		case K_RANGE:
			range_kernel(p, ph, a, n, t);
			break;
		case K_FLOAT:
			float_kernel(p, ph, a, n, t);
			break;
		case K_BYTES:
			bytes_kernel(p, ph, a, n, t);
			break;
		case K_SET:
			if (p->set_empty)
			{
				/* x = ANY('{}') is FALSE even for a NULL x */
				memset(t, 0, (size_t) n);
				if (want_f)
					memset(f, 1, (size_t) n);
				return;
			}
			if (p->fset)
			{
				/* the float set kernel needs 2n bytes */
				set_kernel(p, ph, a, n, scratch);
				memcpy(t, scratch, (size_t) n);
			}
			else
				set_kernel(p, ph, a, n, t);
			finish_masks(a, n, t, f, want_f, p->set_null);
			return;
	}
	finish_masks(a, n, t, f, want_f, false);
}

/* Evaluate e; *t / *f point at its masks (its own buffers or a child's). */
static void
eval_node(eval_ctx *c, lt_expr *e, bool want_f, const uint8_t **t, const uint8_t **f)
{
	int64_t		n = c->n;

	*t = e->t;
	*f = e->f;
	switch (e->kind)
	{
		case N_COLUMN:
			{
				/* a bool column as a predicate */
				const lt_array *a = c->cols[e->col];

				for (int64_t i = 0; i < n; i++)
					e->t[i] = a->values[i] != 0;
				finish_masks(a, n, e->t, e->f, want_f, false);
			}
			break;
		case N_CONST:
		case N_PARAM:
			{
				const lt_value *v = e->kind == N_CONST ? &e->val : &c->f->params[e->slot].vals[0];
				bool		known = v->kind != LT_VALUE_NULL;

				memset(e->t, known && v->v.b, (size_t) n);
				if (want_f)
					memset(e->f, known && !v->v.b, (size_t) n);
			}
			break;
		case N_CMP:
		case N_IN:
			eval_plan(c, &e->p1, e->t, e->f, want_f, e->f);
			break;
		case N_BETWEEN:
			if (e->fused)
				eval_plan(c, &e->p1, e->t, e->f, want_f, e->f);
			else
			{
				/* lo <= x AND x <= hi, with the second bound's masks in the scratch of p2 */
				uint8_t    *t2 = e->f + n,
						   *f2 = e->f + 2 * n;

				eval_plan(c, &e->p1, e->t, e->f, want_f, NULL);
				eval_plan(c, &e->p2, t2, f2, want_f, NULL);
				for (int64_t i = 0; i < n; i++)
					e->t[i] &= t2[i];
				if (want_f)
					for (int64_t i = 0; i < n; i++)
						e->f[i] |= f2[i];
			}
			break;
		case N_IS_NULL:
			{
				const uint8_t *valid = c->cols[e->args[0]->col]->validity;
				uint8_t    *is_null = e->negated ? e->f : e->t;
				uint8_t    *not_null = e->negated ? e->t : e->f;

				if (!valid)
				{
					memset(is_null, 0, (size_t) n);
					memset(not_null, 1, (size_t) n);
				}
				else
					for (int64_t i = 0; i < n; i++)
					{
						is_null[i] = valid[i] ^ 1;
						not_null[i] = valid[i];
					}
			}
			break;
		case N_AND:
		case N_OR:
			{
				bool		and = e->kind == N_AND;
				const uint8_t *ct, *cf;

				eval_node(c, e->args[0], want_f, &ct, &cf);
				if (e->n_args == 1)
				{
					*t = ct;
					*f = cf;
					break;
				}
				memcpy(e->t, ct, (size_t) n);
				if (want_f)
					memcpy(e->f, cf, (size_t) n);
				for (int k = 1; k < e->n_args; k++)
				{
					eval_node(c, e->args[k], want_f, &ct, &cf);
					if (and)
					{
						for (int64_t i = 0; i < n; i++)
							e->t[i] &= ct[i];
						if (want_f)
							for (int64_t i = 0; i < n; i++)
								e->f[i] |= cf[i];
					}
					else
					{
						for (int64_t i = 0; i < n; i++)
							e->t[i] |= ct[i];
						if (want_f)
							for (int64_t i = 0; i < n; i++)
								e->f[i] &= cf[i];
					}
				}
			}
			break;
		case N_NOT:
			{
				const uint8_t *ct, *cf;

				eval_node(c, e->args[0], true, &ct, &cf);
				*t = cf;
				*f = ct;
			}
			break;
	}
}

/* Scratch: t is n bytes, f is 3n (f, and BETWEEN's / float sets' second masks). */
static lt_code
reserve(lt_filter *f, int64_t n, lt_error *err)
{
	int64_t		cap = f->cap ? f->cap : 1024;

	while (cap < n)
		cap *= 2;
	if (cap != f->cap)
	{
		uint8_t    *all = lt_malloc((size_t) cap);

		if (!all)
			return lt_nomem(err);
		memset(all, 1, (size_t) cap);
		lt_free(f->all_true);
		f->all_true = all;
		f->cap = cap;
	}
	/* nodes added after the last evaluation get their buffers here too */
	for (int i = 0; i < f->n_nodes; i++)
	{
		lt_expr    *e = f->nodes[i];
		uint8_t    *t, *ff;

		if (e->cap == cap)
			continue;
		t = lt_realloc(e->t, (size_t) cap);
		if (!t)
			return lt_nomem(err);
		e->t = t;
		ff = lt_realloc(e->f, (size_t) cap * 3);
		if (!ff)
			return lt_nomem(err);
		e->f = ff;
		e->cap = cap;
	}
	return LT_OK;
}

lt_code
lt_filter_eval_mask(lt_filter *f, lt_array *const *columns, int64_t n, const uint8_t **mask, lt_error *err)
{
	eval_ctx	c = {f, columns, n};
	const uint8_t *t, *ff;

	*mask = NULL;
	if (n < 0 || n > (int64_t) UINT32_MAX)
		return lt_error_set(err, LT_EINVALID, "cannot filter %lld rows at once", (long long) n);
	for (int i = 0; i < f->n_columns; i++)
		if (!columns[i] || columns[i]->length < n || columns[i]->field->type != f->columns[i]->type)
			return lt_error_set(err, LT_EINVALID, "filter column %d (\"%s\") is missing or not %lld rows of %s",
								i, f->columns[i]->name, (long long) n, lt_type_name(f->columns[i]->type));
	LT_TRY(bind(f, err));
	LT_TRY(reserve(f, n ? n : 1, err));
	if (!f->root)
	{
		*mask = f->all_true;
		return LT_OK;
	}
	eval_node(&c, f->root, false, &t, &ff);
	*mask = t;
	return LT_OK;
}

lt_code
lt_filter_eval(lt_filter *f, lt_array *const *columns, int64_t n, uint32_t *sel, int64_t *n_sel, lt_error *err)
{
	const uint8_t *m;
	int64_t		k = 0;

	*n_sel = 0;
	LT_TRY(lt_filter_eval_mask(f, columns, n, &m, err));
	/* branch-free compaction */
	for (int64_t i = 0; i < n; i++)
	{
		sel[k] = (uint32_t) i;
		k += m[i];
	}
	*n_sel = k;
	return LT_OK;
}

/* ------------------------------------------------------------------ rendering */

typedef struct sbuf
{
	char	   *s;
	size_t		len, cap;
	bool		oom;
} sbuf;

static void
sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap * 2 : 128;
		char	   *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = lt_realloc(b->s, cap);
		if (!p)
		{
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
sb_str(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void
sb_fmt(sbuf *b, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
sb_fmt(sbuf *b, const char *fmt,...)
{
	char		tmp[128];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t) n < sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}

static void
sb_i128(sbuf *b, lt_int128 v, int scale)
{
	char		digits[64];
	int			nd = 0;
	unsigned __int128 u = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;

	do
	{
		digits[nd++] = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u > 0 || nd <= scale);
	if (v < 0)
		sb_str(b, "-");
	for (int i = nd - 1; i >= 0; i--)
	{
		sb_put(b, &digits[i], 1);
		if (i == scale && scale > 0)
			sb_str(b, ".");
	}
}

static void
sb_date(sbuf *b, int64_t days)
{
	int64_t		y;
	int			m, d;

	if (days > INT64_MAX / 2 || days < INT64_MIN / 2)
	{
		sb_str(b, days > 0 ? "infinity" : "-infinity");
		return;
	}
	lt_civil_from_days(days, &y, &m, &d);
	sb_fmt(b, "%04lld-%02d-%02d", (long long) y, m, d);
}

static void
sb_clock(sbuf *b, int64_t ticks_of_day, int64_t per_sec, int digits)
{
	int64_t		sec = ticks_of_day / per_sec;
	int64_t		frac = ticks_of_day % per_sec;

	sb_fmt(b, "%02lld:%02lld:%02lld", (long long) (sec / 3600), (long long) (sec / 60 % 60), (long long) (sec % 60));
	if (frac)
	{
		char		tmp[16];
		int			n = snprintf(tmp, sizeof(tmp), "%0*lld", digits, (long long) frac);

		while (n > 0 && tmp[n - 1] == '0')
			n--;
		sb_str(b, ".");
		sb_put(b, tmp, (size_t) n);
	}
}

static void
sb_value(sbuf *b, const lt_value *v)
{
	static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};
	static const int digits[] = {0, 3, 6, 9};
	static const char *unit_names[] = {"s", "ms", "us", "ns"};

	switch (v->kind)
	{
		case LT_VALUE_NULL:
			sb_str(b, "NULL");
			break;
		case LT_VALUE_BOOL:
			sb_str(b, v->v.b ? "true" : "false");
			break;
		case LT_VALUE_INT:
			sb_fmt(b, "%lld", (long long) v->v.i);
			break;
		case LT_VALUE_UINT:
			sb_fmt(b, "%llu", (unsigned long long) v->v.u);
			break;
		case LT_VALUE_FLOAT:
			if (isnan(v->v.f))
				sb_str(b, "'NaN'");
			else if (isinf(v->v.f))
				sb_str(b, v->v.f > 0 ? "'Infinity'" : "'-Infinity'");
			else
			{
				char		tmp[64];

				/* shortest of %.15g / %.17g that reads back */
				snprintf(tmp, sizeof(tmp), "%.15g", v->v.f);
				if (strtod(tmp, NULL) != v->v.f)
					snprintf(tmp, sizeof(tmp), "%.17g", v->v.f);
				sb_str(b, tmp);
			}
			break;
		case LT_VALUE_DECIMAL:
			sb_i128(b, v->v.dec, v->scale);
			break;
		case LT_VALUE_BYTES:
			sb_str(b, "'");
			for (size_t i = 0; i < v->v.bytes.len; i++)
			{
				uint8_t		ch = v->v.bytes.ptr[i];

				if (ch == '\'')
					sb_str(b, "''");
				else if (ch < 0x20 || ch == 0x7f)
					sb_fmt(b, "\\x%02x", ch);
				else
					sb_put(b, (const char *) &ch, 1);
			}
			sb_str(b, "'");
			break;
		case LT_VALUE_DATE:
			sb_date(b, v->v.i);
			break;
		case LT_VALUE_TIMESTAMP:
			{
				int64_t		ps = per_sec[v->unit];
				int64_t		day = ps * 86400;
				int64_t		days = v->v.i / day - (v->v.i % day < 0);
				int64_t		rest = v->v.i - days * day;

				if (v->v.i == INT64_MAX || v->v.i == INT64_MIN)
				{
					sb_str(b, v->v.i > 0 ? "infinity" : "-infinity");
					break;
				}
				sb_str(b, "'");
				sb_date(b, days);
				sb_str(b, " ");
				sb_clock(b, rest, ps, digits[v->unit]);
				sb_str(b, "'");
			}
			break;
		case LT_VALUE_TIME:
			sb_str(b, "'");
			sb_clock(b, v->v.i, per_sec[v->unit], digits[v->unit]);
			sb_str(b, "'");
			break;
		case LT_VALUE_DURATION:
			sb_fmt(b, "'%lld %s'", (long long) v->v.i, unit_names[v->unit]);
			break;
	}
}

static void
sb_name(sbuf *b, const char *name)
{
	bool		plain = name[0] && !(name[0] >= '0' && name[0] <= '9');

	for (const char *p = name; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
	if (plain)
	{
		sb_str(b, name);
		return;
	}
	sb_str(b, "\"");
	for (const char *p = name; *p; p++)
		sb_put(b, *p == '"' ? "\"\"" : p, 1 + (*p == '"'));
	sb_str(b, "\"");
}

static void
render(sbuf *b, const lt_filter *f, const lt_expr *e)
{
	static const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};

	switch (e->kind)
	{
		case N_COLUMN:
			sb_name(b, f->columns[e->col]->name);
			break;
		case N_CONST:
			sb_value(b, &e->val);
			break;
		case N_PARAM:
			sb_fmt(b, "$%d", e->slot);
			break;
		case N_CMP:
			render(b, f, e->args[0]);
			sb_fmt(b, " %s ", ops[e->op]);
			render(b, f, e->args[1]);
			break;
		case N_BETWEEN:
			render(b, f, e->args[0]);
			sb_str(b, " BETWEEN ");
			render(b, f, e->args[1]);
			sb_str(b, " AND ");
			render(b, f, e->args[2]);
			break;
		case N_IN:
			render(b, f, e->args[0]);
			if (e->n_args == 2 && e->args[1]->kind == N_PARAM && e->args[1]->param_array)
			{
				sb_fmt(b, " = ANY ($%d)", e->args[1]->slot);
				break;
			}
			sb_str(b, " IN (");
			for (int i = 1; i < e->n_args; i++)
			{
				if (i > 1)
					sb_str(b, ", ");
				render(b, f, e->args[i]);
			}
			sb_str(b, ")");
			break;
		case N_IS_NULL:
			render(b, f, e->args[0]);
			sb_str(b, e->negated ? " IS NOT NULL" : " IS NULL");
			break;
		case N_AND:
		case N_OR:
			if (e->n_args == 1)
			{
				render(b, f, e->args[0]);
				break;
			}
			sb_str(b, "(");
			for (int i = 0; i < e->n_args; i++)
			{
				if (i > 0)
					sb_str(b, e->kind == N_AND ? " AND " : " OR ");
				render(b, f, e->args[i]);
			}
			sb_str(b, ")");
			break;
		case N_NOT:
			{
				const lt_expr *a = e->args[0];
				bool		paren = !((a->kind == N_AND || a->kind == N_OR) && a->n_args > 1) && a->kind != N_COLUMN;

				sb_str(b, paren ? "NOT (" : "NOT ");
				render(b, f, a);
				if (paren)
					sb_str(b, ")");
			}
			break;
	}
}

char *
lt_expr_render(const lt_filter *f, const lt_expr *e)
{
	sbuf		b = {0};

	if (e)
		render(&b, f, e);
	else
		sb_str(&b, "true");
	if (b.oom)
	{
		lt_free(b.s);
		return NULL;
	}
	if (!b.s)
		sb_str(&b, "");
	return b.s;
}

char *
lt_filter_render(const lt_filter *f)
{
	return lt_expr_render(f, f->root);
}
