/*
 * lt_filter_int.h — internals shared by the filter's parts (lt_filter.h has the contract):
 *
 *   lt_filter.c         building the IR (nodes, parameters) and introspection
 *   lt_filter_bind.c    binding: comparisons -> kernel plans (at the first evaluation after a parameter changed)
 *   lt_filter_eval.c    kernels and evaluation over a batch of columns
 *   lt_filter_render.c  a filter or expression as text
 *
 * The node, plan and filter structs, and the column type helpers every part uses.
 */
#ifndef LT_FILTER_INT_H
#define LT_FILTER_INT_H

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

typedef struct bytes_item
{
	const uint8_t *ptr;
	size_t		len;
} bytes_item;

/* ------------------------------------------------------------------ types */

static inline phys
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

static inline domain
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

static inline const char *
kind_name(lt_value_kind k)
{
	static const char *names[] = {"null", "bool", "int", "uint", "float", "decimal", "bytes", "date",
	"timestamp", "time", "duration"};

	return (unsigned) k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

/* Can a value of kind k be compared exactly with column field f? */
static inline bool
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
static inline int64_t
unit_ticks(lt_time_unit u)
{
	static const int64_t t[] = {86400LL, 86400000LL, 86400000000LL, 86400000000000LL};

	return t[u];
}

static inline int64_t
column_ticks(const lt_field *f)
{
	if (f->type == LT_TYPE_DATE32)
		return 1;
	if (f->type == LT_TYPE_DATE64)
		return unit_ticks(LT_UNIT_MS);
	return unit_ticks(f->unit);
}

static inline void
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

static inline lt_int128
pow10_128(int n)
{
	lt_int128	r = 1;

	while (n-- > 0)
		r *= 10;
	return r;
}

/* floor and ceil of a / b for b > 0 */
static inline lt_int128
floor_div(lt_int128 a, lt_int128 b)
{
	lt_int128	q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

static inline lt_int128
ceil_div(lt_int128 a, lt_int128 b)
{
	lt_int128	q = a / b;

	return (a % b != 0 && a > 0) ? q + 1 : q;
}

static inline int
bytes_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	int			c = memcmp(a, b, la < lb ? la : lb);

	if (c == 0 && la != lb)
		c = la < lb ? -1 : 1;
	return c;
}

static inline void
plan_free(plan *p)
{
	lt_free(p->set);
	p->set = NULL;
}

/* Bind every comparison to a kernel plan unless bound since the last parameter change (lt_filter_bind.c). */
lt_code		lt_filter_bind(lt_filter *f, lt_error *err);

#endif
