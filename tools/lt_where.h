/*
 * lt_where.h — a small SQL WHERE parser for lt-inspect: predicates on one
 * column, in the subset of SQL that both lt-inspect and the reference engine's
 * filter (DataFusion) read the same way:
 *
 *   expr  := expr OR expr | expr AND expr | NOT expr | ( expr ) | pred
 *   pred  := COL op lit | COL [NOT] BETWEEN lit AND lit | COL [NOT] IN (lit, ...)
 *          | COL IS [NOT] NULL | COL
 *          | array_has_all(COL, [lit, ...]) | array_has_any(COL, [lit, ...])
 *   op    := = | <> | != | < | <= | > | >=
 *   lit   := integer | decimal/float | 'string' | TRUE | FALSE | NULL | DATE 'yyyy-mm-dd'
 *
 * Scalar predicates become an lt_filter over the column; array predicates
 * (label_list) stay as nodes of the returned tree.
 */
#ifndef LT_WHERE_H
#define LT_WHERE_H

#include "table/lt_filter.h"
#include "types/lt_schema.h"

typedef enum where_kind
{
	W_AND, W_OR, W_NOT, W_SCALAR, W_HAS_ALL, W_HAS_ANY
} where_kind;

typedef struct where_node where_node;
struct where_node
{
	where_kind	kind;
	where_node *a, *b;			/* AND/OR: a, b; NOT: a */
	lt_expr    *expr;			/* W_SCALAR: a predicate of the filter */
	int			n_values;		/* W_HAS_*: the array literal */
	lt_value   *values;
};

typedef struct where_parse
{
	const lt_field *column;		/* the one column the expression names */
	lt_filter  *filter;			/* over that column (element-typed literals for arrays) */
	where_node *root;
	bool		has_arrays;		/* any W_HAS_* node */
	char	  **strs;			/* string literal bodies the values point into */
	int			n_strs;
	char		msg[1100];
} where_parse;

/* Parse src against schema; 0 on success, else -1 with w->msg set. */
int			where_parse_text(const char *src, const lt_schema *schema, where_parse *w);
void		where_free(where_parse *w);

/* The whole expression as one filter root (fails when it has array predicates). */
int			where_scalar_root(where_parse *w);

#endif
