/*
 * lt_filter.h — a small predicate IR evaluated on decoded column vectors.
 *
 * A filter is built over a fixed list of columns (top-level fields of the
 * dataset schema); column references are indexes into that list, and
 * evaluation takes one lt_array per listed column.  The FDW translates
 * Postgres quals into this IR, so its semantics are Postgres's:
 *
 *  - three-valued logic: a comparison with a NULL operand is UNKNOWN, AND /
 *    OR / NOT follow SQL's truth tables, and a row passes only when TRUE;
 *  - floats compare like float8: NaN = NaN, NaN sorts above every number
 *    (and -0 = 0);
 *  - bytes (utf8, binary, fixed-size binary) compare bytewise (memcmp, then
 *    length), i.e. the C collation; the FDW pushes other collations only for
 *    equality;
 *  - cross-type comparisons are exact (int32 column vs int64 literal, decimal
 *    scales, date32 vs date/timestamp literals, time units), with one rule
 *    from the type mapping (DESIGN.md §1): a column whose unit is finer than
 *    the literal's is compared as the FDW shows it, floored to the literal's
 *    unit (a timestamp[ns] column is compared as floor(ns / 1000) with a
 *    microsecond literal);
 *  - an integer column against a float literal is converted to double first
 *    (as Postgres casts int8 to float8).
 *
 * Building: lt_filter_new(), then lt_expr_* constructors (nodes are owned by
 * the filter), then lt_filter_set_root().  A constructor returns NULL and
 * fills err when the operation cannot be evaluated exactly (LT_EUNSUPPORTED,
 * e.g. a float literal against a decimal column) or a child is NULL; the
 * filter itself stays usable, so the FDW keeps that qual local and goes on.
 *
 * Parameters: lt_expr_param() declares slot N of a value kind; the caller
 * sets every slot (lt_filter_set_param / _set_param_array) before each
 * evaluation.  Bytes of literals and parameters are copied.
 *
 * A filter keeps per-node scratch masks, so one filter serves one evaluation
 * at a time.
 */
#ifndef LT_FILTER_H
#define LT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

typedef __int128 lt_int128;

typedef enum lt_value_kind
{
	LT_VALUE_NULL = 0,			/* SQL NULL of any type */
	LT_VALUE_BOOL,				/* b */
	LT_VALUE_INT,				/* i */
	LT_VALUE_UINT,				/* u */
	LT_VALUE_FLOAT,				/* f (a float4 widened to double is exact) */
	LT_VALUE_DECIMAL,			/* dec / 10^scale, scale 0..38 */
	LT_VALUE_BYTES,				/* bytes.ptr[0 .. bytes.len) */
	LT_VALUE_DATE,				/* i: days since 1970-01-01 */
	LT_VALUE_TIMESTAMP,			/* i: `unit`s since 1970-01-01 00:00 (UTC for timestamptz) */
	LT_VALUE_TIME,				/* i: `unit`s since midnight */
	LT_VALUE_DURATION			/* i: `unit`s */
} lt_value_kind;

typedef struct lt_value
{
	lt_value_kind kind;
	lt_time_unit unit;			/* TIMESTAMP, TIME, DURATION */
	int			scale;			/* DECIMAL */
	union
	{
		bool		b;
		int64_t		i;
		uint64_t	u;
		double		f;
		lt_int128	dec;
		struct
		{
			const uint8_t *ptr;
			size_t		len;
		}			bytes;
	}			v;
} lt_value;

typedef enum lt_cmp_op
{
	LT_CMP_EQ, LT_CMP_NE, LT_CMP_LT, LT_CMP_LE, LT_CMP_GT, LT_CMP_GE
} lt_cmp_op;

typedef struct lt_filter lt_filter;
typedef struct lt_expr lt_expr;

/* A filter over columns[0 .. n_columns) (pointers are kept, not copied). */
lt_code		lt_filter_new(int n_columns, const lt_field *const *columns, lt_filter **out, lt_error *err);
void		lt_filter_free(lt_filter *f);
int			lt_filter_n_columns(const lt_filter *f);
const lt_field *const *lt_filter_columns(const lt_filter *f);

/* Leaves. */
lt_expr    *lt_expr_column(lt_filter *f, int column, lt_error *err);
lt_expr    *lt_expr_const(lt_filter *f, const lt_value *v, lt_error *err);
lt_expr    *lt_expr_param(lt_filter *f, int slot, lt_value_kind kind, lt_error *err);

/* Predicates.  One side of a comparison is a column, the other a const/param. */
lt_expr    *lt_expr_cmp(lt_filter *f, lt_cmp_op op, lt_expr *lhs, lt_expr *rhs, lt_error *err);
/* x BETWEEN lo AND hi (lo <= x AND x <= hi); x a column. */
lt_expr    *lt_expr_between(lt_filter *f, lt_expr *x, lt_expr *lo, lt_expr *hi, lt_error *err);
/* x IN (items...) = ANY: items are consts or scalar params. */
lt_expr    *lt_expr_in(lt_filter *f, lt_expr *x, int n_items, lt_expr *const *items, lt_error *err);
/* x = ANY($slot) where the parameter is an array of `kind` values. */
lt_expr    *lt_expr_in_param(lt_filter *f, lt_expr *x, int slot, lt_value_kind kind, lt_error *err);
/*
 * x IS NULL, or x IS NOT NULL when `negated`: the slot's validity, for any
 * type.  Postgres's IS NULL on a composite is also true when every field is
 * null, so the FDW pushes it for struct columns only when they map to jsonb.
 */
lt_expr    *lt_expr_is_null(lt_filter *f, lt_expr *x, bool negated, lt_error *err);
lt_expr    *lt_expr_and(lt_filter *f, int n, lt_expr *const *args, lt_error *err);
lt_expr    *lt_expr_or(lt_filter *f, int n, lt_expr *const *args, lt_error *err);
lt_expr    *lt_expr_not(lt_filter *f, lt_expr *arg, lt_error *err);

/*
 * AND/OR/NOT arguments and the root are predicates, a bool column, or a bool
 * constant.  A filter without a root passes every row.
 */
lt_code		lt_filter_set_root(lt_filter *f, lt_expr *root, lt_error *err);

/* Parameters: value of slot (kind must match its declaration, or be NULL). */
lt_code		lt_filter_set_param(lt_filter *f, int slot, const lt_value *v, lt_error *err);
lt_code		lt_filter_set_param_array(lt_filter *f, int slot, int n, const lt_value *vals, lt_error *err);

/*
 * Evaluate over n rows of columns[i] (one array per filter column, each of
 * length >= n).  sel receives the ascending indexes of rows where the filter
 * is TRUE (room for n), *n_sel their count.
 */
lt_code		lt_filter_eval(lt_filter *f, lt_array *const *columns, int64_t n, uint32_t *sel, int64_t *n_sel,
						   lt_error *err);
/* Same, as a byte mask (1 = TRUE); the mask is valid until the next evaluation. */
lt_code		lt_filter_eval_mask(lt_filter *f, lt_array *const *columns, int64_t n, const uint8_t **mask,
								lt_error *err);

/*
 * A read-only view of a built filter, for consumers that reason about the
 * expression instead of evaluating it (index lookups derive page and zone
 * tests from it).  Kinds follow the constructors above; CMP nodes are
 * normalized to (column OP value).
 */
typedef enum lt_expr_kind
{
	LT_EXPR_COLUMN, LT_EXPR_CONST, LT_EXPR_PARAM, LT_EXPR_CMP, LT_EXPR_BETWEEN, LT_EXPR_IN,
	LT_EXPR_IS_NULL, LT_EXPR_AND, LT_EXPR_OR, LT_EXPR_NOT
} lt_expr_kind;

const lt_expr *lt_filter_root(const lt_filter *f);	/* NULL: no root */
lt_expr_kind lt_expr_get_kind(const lt_expr *e);
int			lt_expr_n_args(const lt_expr *e);
const lt_expr *lt_expr_arg(const lt_expr *e, int i);
lt_cmp_op	lt_expr_get_op(const lt_expr *e);	/* CMP */
bool		lt_expr_is_negated(const lt_expr *e);	/* IS_NULL: true for IS NOT NULL */
int			lt_expr_get_column(const lt_expr *e);	/* COLUMN */
/*
 * The value(s) of a CONST or PARAM node with the parameters as set now: one
 * value, or an array parameter's items (*n = -1 for a NULL array).  The
 * values stay valid until the parameter is set again.
 */
lt_code		lt_expr_get_values(const lt_filter *f, const lt_expr *e, const lt_value **vals, int *n,
							   lt_error *err);

/* The filter as text, e.g. "(dt = 2024-01-02 AND x > 10)"; lt_free() it.  NULL on OOM. */
char	   *lt_filter_render(const lt_filter *f);
char	   *lt_expr_render(const lt_filter *f, const lt_expr *e);

#endif
