/*
 * lt_filter.c — building the filter IR: columns, constants, parameters,
 * comparisons, IN lists, NULL tests and AND / OR / NOT nodes, checked against
 * the columns' types as they are built; parameter values; introspection of
 * the tree.  Binding is in lt_filter_bind.c, evaluation in lt_filter_eval.c,
 * rendering in lt_filter_render.c (lt_filter_int.h lists the parts).
 */
#include "table/lt_filter_int.h"

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
