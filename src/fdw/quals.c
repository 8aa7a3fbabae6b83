/*
 * quals.c — WHERE quals into the library's filter IR (lt_filter.h).
 *
 * Modelled on postgres_fdw's classifyConditions / foreign_expr_walker: at plan time every
 * baserestrictinfo clause is translated against the schema of the version planning looked at; a
 * clause whose translation succeeds is "remote" (it goes into the plan's fdw_exprs and leaves the
 * local qual list), the rest stay "local". At execution the same translation runs again over the
 * schema of the version the scan reads; an expression that no longer translates (the schema
 * changed in between) is checked locally, so results never depend on where a qual ran.
 *
 * What translates (all else stays local):
 *   - column OP value, value OP column, with OP one of = <> < <= > >= : a built-in operator (OID of
 *     the initial catalog) that a built-in btree opfamily interprets, column a Var of the relation
 *     (under RelabelType, or an exact widening cast int -> float8/numeric, float4 -> float8), value
 *     a Const or a Param; BETWEEN arrives as two such comparisons;
 *   - column = ANY (array Const, ARRAY[consts/params], array Param), column <> ALL (same);
 *   - IS [NOT] NULL (not on composites), IS [NOT] TRUE/FALSE/UNKNOWN on booleans;
 *   - AND / OR / NOT of translatable clauses; a boolean column as a predicate.
 * Types, per the column's declared type (which must read its field directly, LT_CONV_SCALAR):
 *   smallint/integer/bigint (any widths), real/double precision, numeric (decimal fields whose
 *   declared typmod is theirs or none; integer fields; values of at most 38 digits, never NaN or
 *   infinity), text (UTF8 databases; equality under deterministic collations, ordering only under
 *   C/POSIX), bytea, boolean, date (against date or timestamp), timestamp (against timestamp or
 *   date, the date as its midnight), timestamptz (against timestamptz only: the others depend on
 *   TimeZone), time. Infinite dates/timestamps become INT64_MIN/INT64_MAX of their unit.
 *
 * Parameters (PARAM_EXTERN of prepared statements, PARAM_EXEC of nested loops and subplans) are
 * filter parameter slots, evaluated at every (re)scan. A value the filter cannot take exactly
 * (numeric NaN, too many digits, a NULL array) makes that scan check every remote expression
 * locally instead.
 *
 * The library's filter allocates scratch memory while it evaluates, so a filter is built for each
 * fragment scanner in the scanner's memory context (ltfdw_filter_for_scan), from the translated
 * expressions and the current parameter values; building one costs a few microseconds.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/transam.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/pg_locale.h"
#include "utils/timestamp.h"

#include "convert.h"
#include "dataset.h"
#include "option.h"
#include "quals.h"
#include "util/lt_alloc.h"

#define EPOCH_SHIFT_DAYS	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE))	/* 10957 */
#define EPOCH_SHIFT_USECS	(EPOCH_SHIFT_DAYS * USECS_PER_DAY)	/* 946684800000000 */

bool		lt_enable_filter_pushdown = true;

void
lt_quals_init(void)
{
	DefineCustomBoolVariable("lt_fdw.enable_filter_pushdown",
							 "Evaluates translatable WHERE quals in the Lance reader.",
							 "Off keeps every qual with Postgres (for comparisons).",
							 &lt_enable_filter_pushdown, true, PGC_USERSET, 0, NULL, NULL, NULL);
}

/* How a value of the Postgres side becomes an lt_value. */
typedef enum ValueConv
{
	VC_NONE = 0,
	VC_BOOL,
	VC_INT,
	VC_FLOAT,
	VC_NUMERIC,
	VC_BYTES,
	VC_DATE,
	VC_DATE_AS_TS,				/* a date against a timestamp column: its midnight */
	VC_TIMESTAMP,
	VC_TIME
} ValueConv;

static lt_value_kind
vc_kind(ValueConv vc)
{
	switch (vc)
	{
		case VC_BOOL:
			return LT_VALUE_BOOL;
		case VC_INT:
			return LT_VALUE_INT;
		case VC_FLOAT:
			return LT_VALUE_FLOAT;
		case VC_NUMERIC:
			return LT_VALUE_DECIMAL;
		case VC_BYTES:
			return LT_VALUE_BYTES;
		case VC_DATE:
			return LT_VALUE_DATE;
		case VC_DATE_AS_TS:
		case VC_TIMESTAMP:
			return LT_VALUE_TIMESTAMP;
		case VC_TIME:
			return LT_VALUE_TIME;
		case VC_NONE:
			break;
	}
	return LT_VALUE_NULL;
}

/* A numeric as decimal128: false for NaN, infinities, more than 38 digits or scale. */
static bool
numeric_value(Numeric n, lt_value *out)
{
	char	   *s,
			   *p,
			   *dot;
	bool		neg = false;
	int			scale = 0,
				digits = 0;
	lt_int128	v = 0;
	int			flen;

	if (numeric_is_nan(n) || numeric_is_inf(n))
		return false;
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(n)));
	p = s;
	if (*p == '-')
	{
		neg = true;
		p++;
	}
	dot = strchr(p, '.');
	if (dot)
	{
		/* trailing zeros of the fraction do not change the value */
		flen = strlen(dot + 1);
		while (flen > 0 && dot[flen] == '0')
			dot[flen--] = '\0';
		if (flen == 0)
			*dot = '\0';
		else
			scale = flen;
	}
	for (; *p; p++)
	{
		if (*p == '.')
			continue;
		if (*p < '0' || *p > '9')
			return false;
		if (digits == 0 && *p == '0')
			continue;
		if (++digits > 38)
			return false;
		v = v * 10 + (*p - '0');
	}
	if (scale > 38)
		return false;
	pfree(s);
	out->kind = LT_VALUE_DECIMAL;
	out->scale = scale;
	out->v.dec = neg ? -v : v;
	return true;
}

/* A non-null Datum of type typid as an lt_value (bytes point into the Datum); false if not exact. */
static bool
datum_value(Datum d, Oid typid, ValueConv vc, lt_value *out)
{
	memset(out, 0, sizeof(lt_value));
	out->kind = vc_kind(vc);
	switch (vc)
	{
		case VC_BOOL:
			out->v.b = DatumGetBool(d);
			return true;
		case VC_INT:
			out->v.i = typid == INT2OID ? DatumGetInt16(d) : typid == INT4OID ? DatumGetInt32(d) : DatumGetInt64(d);
			return true;
		case VC_FLOAT:
			out->v.f = typid == FLOAT4OID ? (double) DatumGetFloat4(d) : DatumGetFloat8(d);
			return true;
		case VC_NUMERIC:
			return numeric_value(DatumGetNumeric(d), out);
		case VC_BYTES:
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(d);

				out->v.bytes.ptr = (const uint8_t *) VARDATA_ANY(v);
				out->v.bytes.len = VARSIZE_ANY_EXHDR(v);
				return true;
			}
		case VC_DATE:
		case VC_DATE_AS_TS:
			{
				DateADT		v = DatumGetDateADT(d);

				if (DATE_IS_NOBEGIN(v))
					out->v.i = PG_INT64_MIN;
				else if (DATE_IS_NOEND(v))
					out->v.i = PG_INT64_MAX;
				else if (vc == VC_DATE)
					out->v.i = (int64) v + EPOCH_SHIFT_DAYS;
				else
					out->v.i = ((int64) v + EPOCH_SHIFT_DAYS) * USECS_PER_DAY;
				out->unit = LT_UNIT_US;
				return true;
			}
		case VC_TIMESTAMP:
			{
				Timestamp	v = DatumGetTimestamp(d);

				if (TIMESTAMP_IS_NOBEGIN(v))
					out->v.i = PG_INT64_MIN;
				else if (TIMESTAMP_IS_NOEND(v))
					out->v.i = PG_INT64_MAX;
				else
					out->v.i = v + EPOCH_SHIFT_USECS;
				out->unit = LT_UNIT_US;
				return true;
			}
		case VC_TIME:
			out->v.i = DatumGetTimeADT(d);
			out->unit = LT_UNIT_US;
			return true;
		case VC_NONE:
			break;
	}
	return false;
}

/* ---- the relation's columns ----------------------------------------------------------------- */

typedef struct QualColumn
{
	bool		resolved;
	const lt_field *field;		/* NULL when the column reads no field (or cannot be read) */
	LtConvKind	kind;
	Oid			typid;
	int32		typmod;
} QualColumn;

typedef struct QualRel
{
	Oid			relid;
	Index		varno;
	TupleDesc	tupdesc;
	const lt_schema *schema;
	QualColumn *cols;			/* by attnum - 1 */
} QualRel;

static void
qualrel_init(QualRel *qr, Oid relid, Index varno, TupleDesc td, const lt_schema *schema)
{
	qr->relid = relid;
	qr->varno = varno;
	qr->tupdesc = td;
	qr->schema = schema;
	qr->cols = palloc0(sizeof(QualColumn) * Max(td->natts, 1));
}

static QualColumn *
qual_column(QualRel *qr, AttrNumber attnum)
{
	QualColumn *c;
	Form_pg_attribute att;

	if (attnum < 1 || attnum > qr->tupdesc->natts)
		return NULL;
	c = &qr->cols[attnum - 1];
	if (!c->resolved)
	{
		c->resolved = true;
		att = TupleDescAttr(qr->tupdesc, attnum - 1);
		if (!att->attisdropped)
		{
			char	   *name = lt_column_field_name(qr->relid, attnum, NameStr(att->attname));
			const lt_field *f = lt_schema_find_name(qr->schema, name);
			char	   *why;
			/* a blob column holds descriptors, not its bytes: PostgreSQL evaluates quals over it */
			LtConv	   *conv = f && f->blob == LT_BLOB_NONE ? lt_conv_build(f, att->atttypid, att->atttypmod, &why) : NULL;

			if (conv)
			{
				c->field = f;
				c->kind = conv->kind;
				c->typid = att->atttypid;
				c->typmod = att->atttypmod;
			}
		}
	}
	return c->field ? c : NULL;
}

/* ---- translation ---------------------------------------------------------------------------- */

typedef struct LtFilterParam
{
	Node	   *expr;			/* the Param node (identity key) */
	int			slot;
	ValueConv	vc;
	Oid			typid;			/* the value's type (the element type for arrays) */
	bool		is_array;
	ExprState  *state;
	/* the values of the current scan */
	bool		isnull;
	int			n;
	lt_value   *vals;
} LtFilterParam;

typedef struct TransCtx
{
	QualRel    *qr;
	lt_filter  *f;
	int			n_fcols;
	const lt_field **fcols;
	List	   *params;			/* LtFilterParam *, found by their Param node */
	lt_error	err;
} TransCtx;

/* Start a filter whose columns are the fields the Vars of exprs read. */
static bool
trans_begin(TransCtx *c, QualRel *qr, List *exprs, List *params)
{
	Bitmapset  *attrs = NULL;
	int			k = -1;

	memset(c, 0, sizeof(TransCtx));
	c->qr = qr;
	c->params = params;
	pull_varattnos((Node *) exprs, qr->varno, &attrs);
	c->fcols = palloc0(sizeof(lt_field *) * Max(bms_num_members(attrs), 1));
	while ((k = bms_next_member(attrs, k)) >= 0)
	{
		QualColumn *col = qual_column(qr, k + FirstLowInvalidHeapAttributeNumber);
		int			j;

		if (col == NULL)
			continue;
		for (j = 0; j < c->n_fcols; j++)
			if (c->fcols[j] == col->field)
				break;
		if (j == c->n_fcols)
			c->fcols[c->n_fcols++] = col->field;
	}
	return lt_filter_new(c->n_fcols, c->fcols, &c->f, &c->err) == LT_OK;
}

static Node *
strip_relabel(Node *n)
{
	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return n;
}

/* The filter column of a Var of the relation (under RelabelType), or NULL. */
static QualColumn *
match_var(TransCtx *c, Node *n, lt_expr **col)
{
	Var		   *v;
	QualColumn *qc;

	n = strip_relabel(n);
	if (n == NULL || !IsA(n, Var))
		return NULL;
	v = (Var *) n;
	if (v->varno != c->qr->varno || v->varlevelsup != 0)
		return NULL;
	qc = qual_column(c->qr, v->varattno);
	if (qc == NULL)
		return NULL;
	for (int j = 0; j < c->n_fcols; j++)
		if (c->fcols[j] == qc->field)
		{
			*col = lt_expr_column(c->f, j, &c->err);
			return *col ? qc : NULL;
		}
	return NULL;
}

/* A column operand: a Var, or an exact widening cast of one; *cast tells which. */
static QualColumn *
match_column(TransCtx *c, Node *n, lt_expr **col, bool *cast)
{
	n = strip_relabel(n);
	*cast = false;
	if (n && IsA(n, FuncExpr))
	{
		FuncExpr   *fe = (FuncExpr *) n;

		switch (fe->funcid)
		{
			case F_FLOAT8_INT2:
			case F_FLOAT8_INT4:
			case F_FLOAT8_INT8:
			case F_FLOAT8_FLOAT4:
			case F_NUMERIC_INT2:
			case F_NUMERIC_INT4:
			case F_NUMERIC_INT8:
				if (list_length(fe->args) != 1)
					return NULL;
				*cast = true;
				return match_var(c, linitial(fe->args), col);
			default:
				return NULL;
		}
	}
	return match_var(c, n, col);
}

static bool
is_text_type(Oid t)
{
	return t == TEXTOID || t == VARCHAROID;
}

static bool
is_int_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

/*
 * How a value of type vtype compares with column qc seen as type optype (qc's declared type, or
 * the cast's result). VC_NONE when the pair is not translated.
 */
static ValueConv
pair_conv(QualColumn *qc, Oid optype, bool cast, Oid vtype)
{
	if (qc->kind != LT_CONV_SCALAR)
		return VC_NONE;
	if (!cast && optype != qc->typid && !(is_text_type(optype) && qc->typid == TEXTOID))
		return VC_NONE;
	switch (optype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return is_int_type(vtype) ? VC_INT : VC_NONE;
		case FLOAT4OID:
		case FLOAT8OID:
			return vtype == FLOAT4OID || vtype == FLOAT8OID ? VC_FLOAT : VC_NONE;
		case NUMERICOID:
			if (vtype != NUMERICOID)
				return VC_NONE;
			/* a decimal read into another precision/scale is rounded by numeric_in: keep local */
			if (!cast && (qc->field->type == LT_TYPE_DECIMAL128 || qc->field->type == LT_TYPE_DECIMAL256))
			{
				int32		nat;

				(void) lt_natural_type(qc->field, &nat);
				if (qc->typmod >= 0 && qc->typmod != nat)
					return VC_NONE;
			}
			return VC_NUMERIC;
		case TEXTOID:
		case VARCHAROID:
			if (GetDatabaseEncoding() != PG_UTF8)
				return VC_NONE;
			return is_text_type(vtype) ? VC_BYTES : VC_NONE;
		case BYTEAOID:
			return vtype == BYTEAOID ? VC_BYTES : VC_NONE;
		case BOOLOID:
			return vtype == BOOLOID ? VC_BOOL : VC_NONE;
		case DATEOID:
			return vtype == DATEOID ? VC_DATE : vtype == TIMESTAMPOID ? VC_TIMESTAMP : VC_NONE;
		case TIMESTAMPOID:
			return vtype == TIMESTAMPOID ? VC_TIMESTAMP : vtype == DATEOID ? VC_DATE_AS_TS : VC_NONE;
		case TIMESTAMPTZOID:
			return vtype == TIMESTAMPTZOID ? VC_TIMESTAMP : VC_NONE;
		case TIMEOID:
			return vtype == TIMEOID ? VC_TIME : VC_NONE;
		default:
			return VC_NONE;
	}
}

/* A built-in comparison operator of a built-in btree opfamily: its lt_cmp_op. */
static bool
builtin_cmp(Oid opno, lt_cmp_op *op)
{
	List	   *l;
	ListCell   *lc;

	if (opno >= FirstGenbkiObjectId)
		return false;
	l = get_op_btree_interpretation(opno);
	foreach(lc, l)
	{
		OpBtreeInterpretation *bi = lfirst(lc);

		if (bi->opfamily_id >= FirstGenbkiObjectId)
			continue;
		switch (bi->strategy)
		{
			case BTLessStrategyNumber:
				*op = LT_CMP_LT;
				return true;
			case BTLessEqualStrategyNumber:
				*op = LT_CMP_LE;
				return true;
			case BTEqualStrategyNumber:
				*op = LT_CMP_EQ;
				return true;
			case BTGreaterEqualStrategyNumber:
				*op = LT_CMP_GE;
				return true;
			case BTGreaterStrategyNumber:
				*op = LT_CMP_GT;
				return true;
			case ROWCOMPARE_NE:
				*op = LT_CMP_NE;
				return true;
		}
	}
	return false;
}

static bool
collation_ok(Oid optype, lt_cmp_op op, Oid collid)
{
	if (!is_text_type(optype))
		return true;
	if (!OidIsValid(collid))
		return false;
	if (op == LT_CMP_EQ || op == LT_CMP_NE)
		return get_collation_isdeterministic(collid);
	return lc_collate_is_c(collid);
}

static LtFilterParam *
find_param(TransCtx *c, Node *p, ValueConv vc, Oid typid, bool is_array)
{
	ListCell   *lc;
	LtFilterParam *fp;

	foreach(lc, c->params)
	{
		fp = lfirst(lc);
		if (fp->expr == p)
			return fp;
	}
	fp = palloc0(sizeof(LtFilterParam));
	fp->expr = p;
	fp->slot = list_length(c->params);
	fp->vc = vc;
	fp->typid = typid;
	fp->is_array = is_array;
	c->params = lappend(c->params, fp);
	return fp;
}

/* A Const or Param operand (under RelabelType) as a leaf; vtype receives its type. */
static Node *
match_value(TransCtx *c, Node *n, Oid *vtype)
{
	n = strip_relabel(n);
	if (n == NULL || (IsA(n, Var) && ((Var *) n)->varno == c->qr->varno))
		return NULL;
	if (IsA(n, Const))
		*vtype = ((Const *) n)->consttype;
	else if (IsA(n, Var) && ((Var *) n)->varlevelsup == 0)
	{
		/* planning a join clause: a Var of another relation becomes a nestloop Param */
		*vtype = ((Var *) n)->vartype;
	}
	else if (IsA(n, Param) && (((Param *) n)->paramkind == PARAM_EXTERN ||
							   ((Param *) n)->paramkind == PARAM_EXEC))
		*vtype = ((Param *) n)->paramtype;
	else
		return NULL;
	return n;
}

static lt_expr *
value_leaf(TransCtx *c, Node *n, Oid vtype, ValueConv vc)
{
	lt_value	v;

	if (IsA(n, Const))
	{
		Const	   *k = (Const *) n;

		if (k->constisnull)
		{
			memset(&v, 0, sizeof(v));
			v.kind = LT_VALUE_NULL;
		}
		else if (!datum_value(k->constvalue, vtype, vc, &v))
			return NULL;
		return lt_expr_const(c->f, &v, &c->err);
	}
	return lt_expr_param(c->f, find_param(c, n, vc, vtype, false)->slot, vc_kind(vc), &c->err);
}

static lt_expr *tr(TransCtx *c, Node *n);

static lt_expr *
tr_opexpr(TransCtx *c, OpExpr *oe)
{
	Node	   *l,
			   *r;
	lt_expr    *col = NULL;
	QualColumn *qc;
	bool		cast;
	bool		swapped = false;
	Node	   *val;
	Oid			vtype = InvalidOid;
	Oid			optype;
	lt_cmp_op	op;
	ValueConv	vc;
	lt_expr    *leaf;

	if (list_length(oe->args) != 2 || !builtin_cmp(oe->opno, &op))
		return NULL;
	l = linitial(oe->args);
	r = lsecond(oe->args);
	val = match_value(c, r, &vtype);
	if (val == NULL)
	{
		val = match_value(c, l, &vtype);
		swapped = true;
		l = r;
	}
	if (val == NULL)
		return NULL;
	optype = exprType(l);
	qc = match_column(c, l, &col, &cast);
	if (qc == NULL)
		return NULL;
	vc = pair_conv(qc, optype, cast, vtype);
	if (vc == VC_NONE || !collation_ok(optype, op, oe->inputcollid))
		return NULL;
	if (swapped)
		op = op == LT_CMP_LT ? LT_CMP_GT : op == LT_CMP_GT ? LT_CMP_LT :
			op == LT_CMP_LE ? LT_CMP_GE : op == LT_CMP_GE ? LT_CMP_LE : op;
	leaf = value_leaf(c, val, vtype, vc);
	if (leaf == NULL)
		return NULL;
	return lt_expr_cmp(c->f, op, col, leaf, &c->err);
}

static lt_expr *
tr_saop(TransCtx *c, ScalarArrayOpExpr *sa)
{
	lt_cmp_op	op;
	lt_expr    *col = NULL;
	QualColumn *qc;
	bool		cast;
	Node	   *arr;
	Oid			optype,
				elemtype;
	ValueConv	vc;
	lt_expr    *in = NULL;

	if (list_length(sa->args) != 2 || !builtin_cmp(sa->opno, &op))
		return NULL;
	if (!((sa->useOr && op == LT_CMP_EQ) || (!sa->useOr && op == LT_CMP_NE)))
		return NULL;
	optype = exprType(linitial(sa->args));
	qc = match_column(c, linitial(sa->args), &col, &cast);
	if (qc == NULL)
		return NULL;
	arr = strip_relabel(lsecond(sa->args));
	elemtype = get_element_type(exprType(arr));
	if (!OidIsValid(elemtype))
		return NULL;
	vc = pair_conv(qc, optype, cast, elemtype);
	if (vc == VC_NONE || !collation_ok(optype, op, sa->inputcollid))
		return NULL;
	if (IsA(arr, Const))
	{
		Const	   *k = (Const *) arr;
		Datum	   *elems;
		bool	   *nulls;
		int			n;
		int16		elmlen;
		bool		elmbyval;
		char		elmalign;
		lt_expr   **items;

		if (k->constisnull)
			return NULL;		/* the planner folds these; nothing to gain */
		get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
		deconstruct_array(DatumGetArrayTypeP(k->constvalue), elemtype, elmlen, elmbyval, elmalign,
						  &elems, &nulls, &n);
		items = palloc(sizeof(lt_expr *) * Max(n, 1));
		for (int i = 0; i < n; i++)
		{
			lt_value	v;

			if (nulls[i])
			{
				memset(&v, 0, sizeof(v));
				v.kind = LT_VALUE_NULL;
			}
			else if (!datum_value(elems[i], elemtype, vc, &v))
				return NULL;
			items[i] = lt_expr_const(c->f, &v, &c->err);
			if (items[i] == NULL)
				return NULL;
		}
		in = lt_expr_in(c->f, col, n, items, &c->err);
	}
	else if (IsA(arr, ArrayExpr) && !((ArrayExpr *) arr)->multidims)
	{
		ArrayExpr  *ae = (ArrayExpr *) arr;
		int			n = list_length(ae->elements);
		lt_expr   **items = palloc(sizeof(lt_expr *) * Max(n, 1));
		int			i = 0;
		ListCell   *lc;

		foreach(lc, ae->elements)
		{
			Oid			t = InvalidOid;
			Node	   *v = match_value(c, lfirst(lc), &t);

			if (v == NULL || t != elemtype || !(items[i++] = value_leaf(c, v, t, vc)))
				return NULL;
		}
		in = lt_expr_in(c->f, col, n, items, &c->err);
	}
	else if (IsA(arr, Param) && (((Param *) arr)->paramkind == PARAM_EXTERN ||
								 ((Param *) arr)->paramkind == PARAM_EXEC))
	{
		LtFilterParam *fp = find_param(c, arr, vc, elemtype, true);

		in = lt_expr_in_param(c->f, col, fp->slot, vc_kind(vc), &c->err);
	}
	if (in == NULL)
		return NULL;
	return sa->useOr ? in : lt_expr_not(c->f, in, &c->err);
}

/* A boolean column as a predicate. */
static lt_expr *
bool_column(TransCtx *c, Node *n)
{
	lt_expr    *col = NULL;
	QualColumn *qc = match_var(c, n, &col);

	if (qc == NULL || qc->kind != LT_CONV_SCALAR || qc->typid != BOOLOID || qc->field->type != LT_TYPE_BOOL)
		return NULL;
	return col;
}

static lt_expr *
tr(TransCtx *c, Node *n)
{
	if (n == NULL)
		return NULL;
	check_stack_depth();
	switch (nodeTag(n))
	{
		case T_BoolExpr:
			{
				BoolExpr   *be = (BoolExpr *) n;
				int			na = list_length(be->args);
				lt_expr   **args = palloc(sizeof(lt_expr *) * Max(na, 1));
				int			i = 0;
				ListCell   *lc;

				foreach(lc, be->args)
				{
					if (!(args[i++] = tr(c, lfirst(lc))))
						return NULL;
				}
				switch (be->boolop)
				{
					case AND_EXPR:
						return lt_expr_and(c->f, na, args, &c->err);
					case OR_EXPR:
						return lt_expr_or(c->f, na, args, &c->err);
					case NOT_EXPR:
						return na == 1 ? lt_expr_not(c->f, args[0], &c->err) : NULL;
				}
				return NULL;
			}
		case T_Var:
		case T_RelabelType:
			return bool_column(c, n);
		case T_OpExpr:
			return tr_opexpr(c, (OpExpr *) n);
		case T_ScalarArrayOpExpr:
			return tr_saop(c, (ScalarArrayOpExpr *) n);
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) n;
				lt_expr    *col = NULL;
				QualColumn *qc;

				if (nt->argisrow)
					return NULL;
				qc = match_var(c, (Node *) nt->arg, &col);
				if (qc == NULL || qc->kind == LT_CONV_COMPOSITE)
					return NULL;
				return lt_expr_is_null(c->f, col, nt->nulltesttype == IS_NOT_NULL, &c->err);
			}
		case T_BooleanTest:
			{
				BooleanTest *bt = (BooleanTest *) n;
				lt_expr    *col = bool_column(c, (Node *) bt->arg);
				lt_expr    *args[2];
				lt_expr    *e;

				if (col == NULL)
					return NULL;
				switch (bt->booltesttype)
				{
					case IS_UNKNOWN:
					case IS_NOT_UNKNOWN:
						return lt_expr_is_null(c->f, col, bt->booltesttype == IS_NOT_UNKNOWN, &c->err);
					case IS_TRUE:
					case IS_NOT_TRUE:
					case IS_FALSE:
					case IS_NOT_FALSE:
						/* x IS TRUE = x AND x IS NOT NULL (never unknown) */
						args[0] = (bt->booltesttype == IS_TRUE || bt->booltesttype == IS_NOT_TRUE) ? col
							: lt_expr_not(c->f, col, &c->err);
						args[1] = lt_expr_is_null(c->f, col, true, &c->err);
						if (!args[0] || !args[1])
							return NULL;
						e = lt_expr_and(c->f, 2, args, &c->err);
						if (e && (bt->booltesttype == IS_NOT_TRUE || bt->booltesttype == IS_NOT_FALSE))
							e = lt_expr_not(c->f, e, &c->err);
						return e;
				}
				return NULL;
			}
		default:
			return NULL;
	}
}

/* ---- planning ------------------------------------------------------------------------------- */

/* Does `clause` translate for qr's schema? (In a scratch context: nothing is kept.) */
static bool
clause_is_remote(QualRel *qr, Expr *clause)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw quals", ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	MemoryContext oldlib = lt_alloc_target(tmp);
	TransCtx	c;
	bool		ok = false;

	if (trans_begin(&c, qr, list_make1(clause), NIL))
		ok = tr(&c, (Node *) clause) != NULL;
	lt_alloc_target(oldlib);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return ok;
}

static void
plan_qualrel(PlannerInfo *root, RelOptInfo *baserel, QualRel *qr, Relation *rel)
{
	LtPlanState *ps = baserel->fdw_private;
	RangeTblEntry *rte = planner_rt_fetch(baserel->relid, root);
	LtDatasetEntry *e = lt_dataset_acquire(rte->relid, &ps->opts, false);

	*rel = table_open(rte->relid, NoLock);
	qualrel_init(qr, rte->relid, baserel->relid, RelationGetDescr(*rel), e->ds->schema);
}

void
ltfdw_classify_conds(PlannerInfo *root, RelOptInfo *baserel, List *conds, List **remote, List **local)
{
	QualRel		qr;
	Relation	rel = NULL;
	ListCell   *lc;

	*remote = NIL;
	*local = NIL;
	if (!lt_enable_filter_pushdown)
	{
		*local = list_copy(conds);
		return;
	}
	foreach(lc, conds)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (rel == NULL)
			plan_qualrel(root, baserel, &qr, &rel);
		if (clause_is_remote(&qr, ri->clause))
			*remote = lappend(*remote, ri);
		else
			*local = lappend(*local, ri);
	}
	if (rel)
		table_close(rel, NoLock);
}

bool
ltfdw_is_remote_expr(PlannerInfo *root, RelOptInfo *baserel, Expr *expr)
{
	QualRel		qr;
	Relation	rel;
	bool		ok;

	if (!lt_enable_filter_pushdown)
		return false;
	plan_qualrel(root, baserel, &qr, &rel);
	ok = clause_is_remote(&qr, expr);
	table_close(rel, NoLock);
	return ok;
}

/* ---- execution ------------------------------------------------------------------------------ */

struct LtFdwFilter
{
	QualRel		qr;
	List	   *exprs;			/* the remote expressions that translate for this schema */
	List	   *params;			/* LtFilterParam * */
	ExprState  *untranslated;	/* the others: checked locally */
	ExprState  *recheck;		/* every remote expression, when the filter cannot be used */
	bool		use_filter;
	lt_filter  *built;			/* the translated expressions without parameter values, or NULL when none */
	MemoryContext built_cxt;	/* where its text is rendered */
	char	   *rendered;		/* its text, made when first asked (EXPLAIN, messages) */
	MemoryContext cxt;			/* the filter's long-lived state */
	MemoryContext param_cxt;	/* parameter values of the current scan */
};

/* What a filter's translation learns from the expressions and a schema alone (ltfdw_filter_shape). */
struct LtFdwFilterShape
{
	QualRel		qr;				/* its columns all resolved: those the expressions read */
	List	   *exprs;			/* the remote expressions that translate for this schema */
	List	   *untranslated;	/* the others */
	List	   *params;			/* LtFilterParam *, without ExprStates */
	lt_filter  *built;			/* the translated expressions without parameter values, or NULL when none */
};

LtFdwFilterShape *
ltfdw_filter_shape(Relation rel, Index scanrelid, const lt_schema *schema, List *remote_exprs)
{
	LtFdwFilterShape *sh = palloc0(sizeof(LtFdwFilterShape));
	List	   *roots = NIL;
	ListCell   *lc;
	TransCtx	c;
	MemoryContext tmp,
				oldlib;

	qualrel_init(&sh->qr, RelationGetRelid(rel), scanrelid, RelationGetDescr(rel), schema);
	if (remote_exprs == NIL)
		return sh;

	/* translate each expression once, in a scratch context, to learn which ones this schema takes */
	tmp = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw filter build", ALLOCSET_SMALL_SIZES);
	oldlib = lt_alloc_target(tmp);
	if (!trans_begin(&c, &sh->qr, remote_exprs, NIL))
		lt_report(&c.err, RelationGetRelationName(rel));
	foreach(lc, remote_exprs)
	{
		lt_expr    *e = tr(&c, lfirst(lc));

		if (e)
		{
			sh->exprs = lappend(sh->exprs, lfirst(lc));
			roots = lappend(roots, e);
		}
		else
			sh->untranslated = lappend(sh->untranslated, lfirst(lc));
	}
	if (roots != NIL)
	{
		lt_expr   **args = palloc(sizeof(lt_expr *) * list_length(roots));
		lt_expr    *root;
		int			i = 0;

		foreach(lc, roots)
			args[i++] = lfirst(lc);
		root = i == 1 ? args[0] : lt_expr_and(c.f, i, args, &c.err);
		if (root == NULL || lt_filter_set_root(c.f, root, &c.err) != LT_OK)
			lt_report(&c.err, RelationGetRelationName(rel));
		/* kept for its text, which only EXPLAIN and messages read (rendering it was 1% of a point lookup) */
		sh->built = c.f;
	}
	lt_alloc_target(oldlib);
	sh->params = c.params;
	if (sh->built == NULL)
		MemoryContextDelete(tmp);
	return sh;
}

LtFdwFilter *
ltfdw_filter_from_shape(const LtFdwFilterShape *sh, Relation rel, List *remote_exprs, PlanState *ps)
{
	LtFdwFilter *lf = palloc0(sizeof(LtFdwFilter));
	ListCell   *lc;

	lf->cxt = CurrentMemoryContext;
	lf->param_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw filter params", ALLOCSET_SMALL_SIZES);
	lf->use_filter = true;
	lf->qr = sh->qr;
	lf->qr.tupdesc = RelationGetDescr(rel);	/* the relation as opened now (with the columns the shape read) */
	lf->exprs = sh->exprs;
	lf->built = sh->built;
	lf->built_cxt = lf->cxt;	/* its text is rendered in this filter's memory: the shape may be shared */
	if (remote_exprs == NIL)
		return lf;

	/* the parameters, with ExprStates of the plan */
	foreach(lc, sh->params)
	{
		LtFilterParam *fp = lfirst(lc);
		LtFilterParam *keep = palloc0(sizeof(LtFilterParam));

		*keep = *fp;
		keep->state = ExecInitExpr((Expr *) fp->expr, ps);
		lf->params = lappend(lf->params, keep);
	}
	if (sh->untranslated != NIL)
		lf->untranslated = ExecInitQual(sh->untranslated, ps);
	lf->recheck = ExecInitQual(remote_exprs, ps);
	return lf;
}

LtFdwFilter *
ltfdw_build_filter(Relation rel, Index scanrelid, const lt_schema *schema, List *remote_exprs, PlanState *ps)
{
	return ltfdw_filter_from_shape(ltfdw_filter_shape(rel, scanrelid, schema, remote_exprs), rel, remote_exprs, ps);
}

/* n zeroed lt_values, 16-byte aligned (lt_value holds an __int128: palloc aligns to 8 only) */
static lt_value *
alloc_values(int n)
{
	char	   *raw = palloc0(sizeof(lt_value) * Max(n, 1) + 16);

	return (lt_value *) TYPEALIGN(16, raw);
}

bool
ltfdw_filter_set_params(LtFdwFilter *lf, ExprContext *econtext)
{
	MemoryContext old;
	ListCell   *lc;

	lf->use_filter = true;
	if (lf->params == NIL)
		return true;
	MemoryContextReset(lf->param_cxt);
	old = MemoryContextSwitchTo(lf->param_cxt);
	foreach(lc, lf->params)
	{
		LtFilterParam *fp = lfirst(lc);
		Datum		d = ExecEvalExpr(fp->state, econtext, &fp->isnull);

		fp->n = 0;
		fp->vals = NULL;
		if (fp->isnull)
		{
			/* a NULL scalar is a NULL value; a NULL array: check locally */
			if (fp->is_array)
				lf->use_filter = false;
			continue;
		}
		if (fp->is_array)
		{
			Datum	   *elems;
			bool	   *nulls;
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;

			get_typlenbyvalalign(fp->typid, &elmlen, &elmbyval, &elmalign);
			deconstruct_array(DatumGetArrayTypePCopy(d), fp->typid, elmlen, elmbyval, elmalign,
							  &elems, &nulls, &fp->n);
			fp->vals = alloc_values(fp->n);
			for (int i = 0; i < fp->n; i++)
			{
				if (nulls[i])
					fp->vals[i].kind = LT_VALUE_NULL;
				else if (!datum_value(elems[i], fp->typid, fp->vc, &fp->vals[i]))
					lf->use_filter = false;
			}
		}
		else
		{
			fp->n = 1;
			fp->vals = alloc_values(1);
			/* copy by-reference values out of the per-tuple memory the expression used */
			if (fp->vc == VC_BYTES)
				d = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
			if (!datum_value(d, fp->typid, fp->vc, &fp->vals[0]))
				lf->use_filter = false;
		}
	}
	MemoryContextSwitchTo(old);
	return lf->use_filter;
}

bool
ltfdw_filter_pushed(LtFdwFilter *lf)
{
	return lf->exprs != NIL && lf->use_filter;
}

lt_filter *
ltfdw_filter_for_scan(LtFdwFilter *lf)
{
	TransCtx	c;
	lt_expr   **args;
	lt_expr    *root;
	ListCell   *lc;
	int			i = 0;

	if (lf->exprs == NIL || !lf->use_filter)
		return NULL;
	if (!trans_begin(&c, &lf->qr, lf->exprs, lf->params))
		lt_report(&c.err, get_rel_name(lf->qr.relid));
	args = palloc(sizeof(lt_expr *) * list_length(lf->exprs));
	foreach(lc, lf->exprs)
	{
		if (!(args[i++] = tr(&c, lfirst(lc))))
			lt_report(&c.err, get_rel_name(lf->qr.relid));
	}
	root = i == 1 ? args[0] : lt_expr_and(c.f, i, args, &c.err);
	if (root == NULL || lt_filter_set_root(c.f, root, &c.err) != LT_OK)
		lt_report(&c.err, get_rel_name(lf->qr.relid));
	Assert(list_length(c.params) == list_length(lf->params));
	foreach(lc, lf->params)
	{
		LtFilterParam *fp = lfirst(lc);
		lt_code		rc;

		if (fp->is_array)
			rc = lt_filter_set_param_array(c.f, fp->slot, fp->n, fp->vals, &c.err);
		else if (fp->isnull)
		{
			lt_value	nv = {0};

			nv.kind = LT_VALUE_NULL;
			rc = lt_filter_set_param(c.f, fp->slot, &nv, &c.err);
		}
		else
			rc = lt_filter_set_param(c.f, fp->slot, &fp->vals[0], &c.err);
		if (rc != LT_OK)
			lt_report(&c.err, get_rel_name(lf->qr.relid));
	}
	pfree(args);
	return c.f;
}

bool
ltfdw_filter_local_check(LtFdwFilter *lf, ExprContext *econtext)
{
	if (!lf->use_filter)
		return ExecQual(lf->recheck, econtext);
	if (lf->untranslated)
		return ExecQual(lf->untranslated, econtext);
	return true;
}

bool
ltfdw_filter_has_params(LtFdwFilter *lf)
{
	return lf->params != NIL;
}

bool
ltfdw_filter_needs_local_check(LtFdwFilter *lf)
{
	return !lf->use_filter || lf->untranslated != NULL;
}

const char *
ltfdw_filter_text(LtFdwFilter *lf)
{
	if (lf->rendered == NULL && lf->built != NULL)
	{
		MemoryContext oldlib = lt_alloc_target(lf->built_cxt);
		char	   *s = lt_filter_render(lf->built);

		lf->rendered = MemoryContextStrdup(lf->cxt, s ? s : "?");
		lt_alloc_target(oldlib);
	}
	return lf->rendered;
}

bool
ltfdw_filter_translates(LtFdwFilter *lf)
{
	return lf->built != NULL;
}
