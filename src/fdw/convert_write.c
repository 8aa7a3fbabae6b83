/*
 * convert_write.c — Postgres values into Lance column builders (lt_arrays): the inverse of convert.c.
 *
 * lt_wconv_build checks once, when a write starts, that a declared column can be written into its
 * field (the same pairs of types the read mapping accepts: the natural type, a wider integer or
 * float, text for any scalar, T[] for lists of scalars, a composite for a struct, jsonb for
 * anything), and lt_wconv_append appends one value. Every value is checked: an integer outside the
 * field's range, a float beyond float16/float32, a decimal with more digits than its precision, a
 * date or timestamp the field's unit cannot hold, a NULL for a field that is not nullable — each is
 * an ERROR naming the column and the value, never a wrap or a silent truncation of the range.
 *
 * Precision below the field's unit is floored, as reads floor ns to µs: a time with microseconds
 * written into time32[s] keeps its whole seconds.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/datetime.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "convert.h"
#include "convert_write.h"
#include "dataset.h"
#include "util/lt_value.h"

#define EPOCH_SHIFT_DAYS	(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE)	/* 10957 */

/* Scalars appended without the general dispatch: a fixed-width value that needs no range check. */
typedef enum LtFastKind
{
	LT_FAST_NONE = 0,
	LT_FAST_INT64,				/* bigint -> int64 */
	LT_FAST_INT32,				/* integer -> int32 */
	LT_FAST_INT16,				/* smallint -> int16 */
	LT_FAST_FLOAT64,			/* double precision -> float64 */
	LT_FAST_FLOAT32,			/* real -> float32 */
	LT_FAST_DATE32,				/* date -> date32 (finite dates; the others take the general path) */
	LT_FAST_BOOL,
	LT_FAST_TEXT				/* text, varchar -> utf8 in a UTF8 database (values not toasted) */
} LtFastKind;

struct LtWriteConv
{
	LtConvKind	kind;
	LtFastKind	fast;
	const lt_field *field;
	const char *what;			/* the column (and path inside it) for messages */
	Oid			typid;			/* declared type of the value */
	int32		typmod;
	Oid			natural;		/* the field's natural type (LT_CONV_TEXT, jsonb scalars) */
	Oid			infn_oid;		/* its input function */
	Oid			ioparam;
	int32		ntypmod;
	/* LT_CONV_ARRAY */
	struct LtWriteConv *elem;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	/* LT_CONV_COMPOSITE: per struct child, the attribute index (-1: none, written as NULL) */
	TupleDesc	tupdesc;
	int		   *att_of_child;
	/* children: struct fields (composite, jsonb), list items (jsonb), map key and value (jsonb) */
	int			n_children;
	struct LtWriteConv **children;
};

/* ---- building ------------------------------------------------------------------------------ */

static bool
is_scalar(const lt_field *f)
{
	return !lt_type_is_nested(f->type) && f->type != LT_TYPE_NULL;
}

static bool
is_int_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == NUMERICOID;
}

/* Can a value of type t be written into scalar field f directly? */
static bool
scalar_writable(const lt_field *f, Oid natural, Oid t)
{
	if (t == natural)
		return true;
	if (lt_type_is_int64_exact(f->type) || f->type == LT_TYPE_UINT64)
		return is_int_type(t);
	return (f->type == LT_TYPE_FLOAT16 || f->type == LT_TYPE_FLOAT32) && t == FLOAT8OID;
}

static void
set_natural(LtWriteConv *c)
{
	int32		tm;

	c->natural = lt_natural_type(c->field, &tm);
	c->ntypmod = tm;
	if (OidIsValid(c->natural) && is_scalar(c->field))
		getTypeInputInfo(c->natural, &c->infn_oid, &c->ioparam);
}

/* jsonb: the conversion of a field's descendants (their values come out of the JSON) */
static LtWriteConv *
build_json(const lt_field *f, const char *what, char **why)
{
	LtWriteConv *c = palloc0(sizeof(LtWriteConv));

	check_stack_depth();
	c->kind = LT_CONV_JSONB;
	c->field = f;
	c->what = what;
	c->typid = JSONBOID;
	c->typmod = -1;
	set_natural(c);
	if (f->type == LT_TYPE_NULL || (is_scalar(f) && !OidIsValid(c->natural)))
	{
		*why = psprintf("lt_fdw cannot write %s fields", f->logical_type);
		return NULL;
	}
	c->n_children = f->n_children;
	c->children = palloc0(sizeof(LtWriteConv *) * Max(f->n_children, 1));
	for (int k = 0; k < f->n_children; k++)
	{
		const lt_field *ch = f->children[k];
		char	   *cwhat = f->type == LT_TYPE_STRUCT ? psprintf("%s.%s", what, ch->name) : psprintf("%s[]", what);

		c->children[k] = build_json(ch, cwhat, why);
		if (c->children[k] == NULL)
			return NULL;
	}
	if (f->type == LT_TYPE_MAP && (f->n_children != 1 || f->children[0]->n_children != 2))
	{
		*why = psprintf("map field \"%s\" has no key and value", f->name);
		return NULL;
	}
	return c;
}

static LtWriteConv *build_conv(const lt_field *f, const char *what, Oid typid, int32 typmod, char **why);

LtWriteConv *
lt_wconv_build(const lt_field *f, const char *what, Oid typid, int32 typmod, char **why)
{
	LtWriteConv *c = build_conv(f, what, typid, typmod, why);

	if (c && c->kind == LT_CONV_SCALAR)
	{
		lt_type_id	t = f->type;

		if (typid == INT8OID && t == LT_TYPE_INT64)
			c->fast = LT_FAST_INT64;
		else if (typid == INT4OID && t == LT_TYPE_INT32)
			c->fast = LT_FAST_INT32;
		else if (typid == INT2OID && t == LT_TYPE_INT16)
			c->fast = LT_FAST_INT16;
		else if (typid == FLOAT8OID && t == LT_TYPE_FLOAT64)
			c->fast = LT_FAST_FLOAT64;
		else if (typid == FLOAT4OID && t == LT_TYPE_FLOAT32)
			c->fast = LT_FAST_FLOAT32;
		else if (typid == DATEOID && t == LT_TYPE_DATE32)
			c->fast = LT_FAST_DATE32;
		else if (typid == BOOLOID && t == LT_TYPE_BOOL)
			c->fast = LT_FAST_BOOL;
		else if ((typid == TEXTOID || typid == VARCHAROID) && (t == LT_TYPE_UTF8 || t == LT_TYPE_LARGE_UTF8) &&
				 GetDatabaseEncoding() == PG_UTF8)
			c->fast = LT_FAST_TEXT;
	}
	return c;
}

static LtWriteConv *
build_conv(const lt_field *f, const char *what, Oid typid, int32 typmod, char **why)
{
	LtWriteConv *c;
	Oid			elemtype;

	check_stack_depth();
	*why = NULL;
	if (typid == JSONBOID && f->blob != LT_BLOB_V2)
		return build_json(f, what, why);

	c = palloc0(sizeof(LtWriteConv));
	c->field = f;
	c->what = what;
	c->typid = typid;
	c->typmod = typmod;
	if (f->blob == LT_BLOB_V2)
	{
		/* a blob v2 struct {data, uri} is written from its bytes (the writer places them by size) */
		if (typid != BYTEAOID)
		{
			*why = psprintf("A %s column is written from bytea (its bytes).", lt_blob_form_name(f->blob));
			return NULL;
		}
		c->kind = LT_CONV_BLOB;
		return c;
	}
	set_natural(c);

	if (is_scalar(f))
	{
		if (!OidIsValid(c->natural))
		{
			*why = psprintf("lt_fdw cannot write %s fields", f->logical_type);
			return NULL;
		}
		if ((f->type == LT_TYPE_DECIMAL128 || f->type == LT_TYPE_DECIMAL256) &&
			(f->scale < 0 || f->precision < 1 || f->scale > f->precision || f->precision > 76))
		{
			*why = psprintf("decimals of precision %d and scale %d are not supported", f->precision, f->scale);
			return NULL;
		}
		if (scalar_writable(f, c->natural, typid))
		{
			c->kind = LT_CONV_SCALAR;
			return c;
		}
		if (typid == TEXTOID)
		{
			c->kind = LT_CONV_TEXT;
			return c;
		}
		*why = psprintf("Lance type %s is written from %s", f->logical_type,
						format_type_with_typemod(c->natural, c->ntypmod));
		return NULL;
	}
	switch (f->type)
	{
		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_FIXED_LIST:
			elemtype = get_element_type(typid);
			if (OidIsValid(elemtype) && f->n_children == 1 && is_scalar(f->children[0]))
			{
				char	   *ewhy;

				c->elem = lt_wconv_build(f->children[0], psprintf("%s[]", what), elemtype, typmod, &ewhy);
				if (c->elem == NULL)
				{
					*why = psprintf("its items cannot be written from %s: %s", format_type_be(elemtype), ewhy);
					return NULL;
				}
				c->kind = LT_CONV_ARRAY;
				get_typlenbyvalalign(elemtype, &c->elmlen, &c->elmbyval, &c->elmalign);
				return c;
			}
			*why = psprintf("Lance type %s is written from an array of its item type, or from jsonb", f->logical_type);
			return NULL;
		case LT_TYPE_STRUCT:
			if (type_is_rowtype(typid) && typid != RECORDOID)
			{
				TupleDesc	td = lookup_rowtype_tupdesc_copy(typid, typmod);

				c->kind = LT_CONV_COMPOSITE;
				c->tupdesc = td;
				c->n_children = f->n_children;
				c->att_of_child = palloc(sizeof(int) * Max(f->n_children, 1));
				c->children = palloc0(sizeof(LtWriteConv *) * Max(f->n_children, 1));
				for (int j = 0; j < td->natts; j++)
				{
					Form_pg_attribute att = TupleDescAttr(td, j);
					int			k;

					if (att->attisdropped)
						continue;
					for (k = 0; k < f->n_children; k++)
						if (strcmp(f->children[k]->name, NameStr(att->attname)) == 0)
							break;
					if (k == f->n_children)
					{
						*why = psprintf("the struct has no field \"%s\" (attribute of type %s)",
										NameStr(att->attname), format_type_be(typid));
						return NULL;
					}
				}
				for (int k = 0; k < f->n_children; k++)
				{
					const lt_field *ch = f->children[k];
					char	   *cwhy;

					c->att_of_child[k] = -1;
					for (int j = 0; j < td->natts; j++)
					{
						Form_pg_attribute att = TupleDescAttr(td, j);

						if (!att->attisdropped && strcmp(ch->name, NameStr(att->attname)) == 0)
						{
							c->att_of_child[k] = j;
							c->children[k] = lt_wconv_build(ch, psprintf("%s.%s", what, ch->name), att->atttypid,
															att->atttypmod, &cwhy);
							if (c->children[k] == NULL)
							{
								*why = psprintf("struct field \"%s\" cannot be written from %s: %s", ch->name,
												format_type_with_typemod(att->atttypid, att->atttypmod), cwhy);
								return NULL;
							}
						}
					}
					if (c->att_of_child[k] < 0 && !ch->nullable)
					{
						*why = psprintf("struct field \"%s\" is not nullable and type %s has no attribute for it",
										ch->name, format_type_be(typid));
						return NULL;
					}
				}
				return c;
			}
			*why = psprintf("a struct is written from a composite type with the same field names, or from jsonb");
			return NULL;
		case LT_TYPE_MAP:
			*why = psprintf("a map field is written from jsonb");
			return NULL;
		default:
			*why = psprintf("lt_fdw cannot write %s fields", f->logical_type);
			return NULL;
	}
}

/* ---- appending slots ------------------------------------------------------------------------ */

static void
lib_failed(const lt_error *err, const LtWriteConv *c)
{
	lt_report(err, psprintf("column builder of %s", c->what));
}

static void
reserve(const LtWriteConv *c, lt_array *a, int64 n)
{
	lt_error	err;

	if (lt_array_reserve(a, n, &err) != LT_OK)
		lib_failed(&err, c);
}

static void
reserve_data(const LtWriteConv *c, lt_array *a, int64 n)
{
	lt_error	err;

	if (lt_array_reserve_data(a, n, &err) != LT_OK)
		lib_failed(&err, c);
}

static void
append_null(const LtWriteConv *c, lt_array *a)
{
	lt_error	err;

	if (!c->field->nullable)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("lt_fdw: null value in column \"%s\" violates the not-null constraint of Lance field \"%s\"",
						c->what, c->field->name)));
	if (lt_array_append_nulls(a, 1, &err) != LT_OK)
		lib_failed(&err, c);
}

/* Room for one valid slot at a->length; the caller fills it and then calls slot_done. */
static inline void
slot_begin(const LtWriteConv *c, lt_array *a)
{
	/* offsets exist once a var-width array holds a slot: only an empty one may lack them */
	if (a->length >= a->cap || (a->length == 0 && a->offsets == NULL && (lt_type_is_var_width(a->field->type) ||
													   a->field->type == LT_TYPE_LIST ||
													   a->field->type == LT_TYPE_LARGE_LIST ||
													   a->field->type == LT_TYPE_MAP)))
		reserve(c, a, 1);
	if (a->validity)
		a->validity[a->length] = 1;
}

static inline void
slot_done(lt_array *a)
{
	a->length++;
}

static void
out_of_range(const LtWriteConv *c, const char *value)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("lt_fdw: value %s is out of range for column \"%s\"", value, c->what),
			 errdetail("Lance field \"%s\" is %s.", c->field->name, c->field->logical_type)));
}

static void
datetime_out_of_range(const LtWriteConv *c, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("lt_fdw: %s is out of range for column \"%s\"", what, c->what),
			 errdetail("Lance field \"%s\" is %s.", c->field->name, c->field->logical_type)));
}

static char *
datum_text(Datum d, Oid typid)
{
	Oid			outfn;
	bool		varlena;

	getTypeOutputInfo(typid, &outfn, &varlena);
	return OidOutputFunctionCall(outfn, d);
}

/* An integral numeric as int64 (*neg false/true) or, above INT64_MAX, as uint64; false if not integral/finite. */
static bool
numeric_integer(Datum d, bool *neg, uint64 *mag)
{
	Numeric		n = DatumGetNumeric(d);
	char	   *s;
	char	   *p;
	uint64		v = 0;

	if (numeric_is_nan(n) || numeric_is_inf(n))
		return false;
	s = DatumGetCString(DirectFunctionCall1(numeric_out, d));
	p = s;
	*neg = false;
	if (*p == '-')
	{
		*neg = true;
		p++;
	}
	for (; *p >= '0' && *p <= '9'; p++)
	{
		if (v > (PG_UINT64_MAX - (uint64) (*p - '0')) / 10)
			return false;		/* beyond 64 bits: out of every integer field's range */
		v = v * 10 + (uint64) (*p - '0');
	}
	if (*p == '.')
		for (p++; *p == '0'; p++)
			;
	if (*p != '\0')
		return false;
	*mag = v;
	if (v == 0)
		*neg = false;
	return true;
}

static void
put_int(const LtWriteConv *c, lt_array *a, Datum d, Oid typid)
{
	const lt_field *f = c->field;
	int64		v = 0;
	bool		neg = false;
	uint64		mag = 0;
	bool		big = false;	/* a numeric: neg/mag hold it */
	int64		lo,
				hi;
	uint8	   *dst;

	switch (typid)
	{
		case INT2OID:
			v = DatumGetInt16(d);
			break;
		case INT4OID:
			v = DatumGetInt32(d);
			break;
		case INT8OID:
			v = DatumGetInt64(d);
			break;
		default:
			if (!numeric_integer(d, &neg, &mag))
			{
				Numeric		n = DatumGetNumeric(d);

				if (numeric_is_nan(n) || numeric_is_inf(n) ||
					strchr(datum_text(d, NUMERICOID), '.') == NULL)
					out_of_range(c, datum_text(d, NUMERICOID));
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						 errmsg("lt_fdw: value %s for column \"%s\" is not an integer", datum_text(d, NUMERICOID),
								c->what),
						 errdetail("Lance field \"%s\" is %s.", f->name, f->logical_type)));
			}
			big = true;
			break;
	}
	if (f->type == LT_TYPE_UINT64)
	{
		uint64		u;

		if (big ? neg : v < 0)
			out_of_range(c, big ? datum_text(d, typid) : psprintf(INT64_FORMAT, v));
		u = big ? mag : (uint64) v;
		slot_begin(c, a);
		memcpy(a->values + a->length * 8, &u, 8);
		slot_done(a);
		return;
	}
	if (big)
	{
		if (neg ? mag > (uint64) PG_INT64_MAX + 1 : mag > (uint64) PG_INT64_MAX)
			out_of_range(c, datum_text(d, typid));
		v = neg ? (int64) (0 - mag) : (int64) mag;
	}
	switch (f->type)
	{
		case LT_TYPE_INT8:
			lo = PG_INT8_MIN, hi = PG_INT8_MAX;
			break;
		case LT_TYPE_INT16:
			lo = PG_INT16_MIN, hi = PG_INT16_MAX;
			break;
		case LT_TYPE_INT32:
			lo = PG_INT32_MIN, hi = PG_INT32_MAX;
			break;
		case LT_TYPE_UINT8:
			lo = 0, hi = PG_UINT8_MAX;
			break;
		case LT_TYPE_UINT16:
			lo = 0, hi = PG_UINT16_MAX;
			break;
		case LT_TYPE_UINT32:
			lo = 0, hi = PG_UINT32_MAX;
			break;
		default:
			lo = PG_INT64_MIN, hi = PG_INT64_MAX;
			break;
	}
	if (v < lo || v > hi)
		out_of_range(c, psprintf(INT64_FORMAT, v));
	slot_begin(c, a);
	dst = a->values + a->length * f->byte_width;
	switch (f->byte_width)
	{
		case 1:
			*dst = (uint8) (int8) v;
			break;
		case 2:
			{
				int16		x = (int16) v;

				memcpy(dst, &x, 2);
				break;
			}
		case 4:
			{
				int32		x = (int32) v;

				memcpy(dst, &x, 4);
				break;
			}
		default:
			memcpy(dst, &v, 8);
			break;
	}
	slot_done(a);
}

static void
put_float(const LtWriteConv *c, lt_array *a, Datum d, Oid typid)
{
	const lt_field *f = c->field;
	double		v = typid == FLOAT4OID ? (double) DatumGetFloat4(d) : DatumGetFloat8(d);
	uint8	   *dst;

	if (f->type == LT_TYPE_FLOAT16 && isfinite(v) && fabs(v) >= 65520.0)	/* rounds to infinity */
		out_of_range(c, float8out_internal(v));
	if (f->type == LT_TYPE_FLOAT32 && isfinite(v) && (fabs(v) > FLT_MAX || (v != 0 && fabs(v) < FLT_TRUE_MIN / 2)))
		out_of_range(c, float8out_internal(v));
	slot_begin(c, a);
	dst = a->values + a->length * f->byte_width;
	if (f->type == LT_TYPE_FLOAT16)
	{
		uint16		h = lt_float_to_half((float) v);

		memcpy(dst, &h, 2);
	}
	else if (f->type == LT_TYPE_FLOAT32)
	{
		float		x = (float) v;

		memcpy(dst, &x, 4);
	}
	else
		memcpy(dst, &v, 8);
	slot_done(a);
}

/*
 * A numeric into decimal128/256(p, s): rounded to scale s as numeric(p, s) rounds (an error when
 * more than p digits remain), then exactly as a little-endian two's-complement integer.
 */
static void
put_decimal(const LtWriteConv *c, lt_array *a, Datum d)
{
	const lt_field *f = c->field;
	int			width = f->byte_width;
	Numeric		n = DatumGetNumeric(d);
	Datum		r;
	char	   *s;
	const char *p;
	bool		neg = false;
	uint32		words[8] = {0};
	int			nwords = width / 4;
	uint8	   *dst;

	if (numeric_is_nan(n) || numeric_is_inf(n))
		out_of_range(c, datum_text(d, NUMERICOID));
	r = DirectFunctionCall2(numeric, d, Int32GetDatum(((f->precision << 16) | f->scale) + VARHDRSZ));
	s = DatumGetCString(DirectFunctionCall1(numeric_out, r));
	p = s;
	if (*p == '-')
	{
		neg = true;
		p++;
	}
	for (; *p; p++)
	{
		uint64		carry;

		if (*p == '.')
			continue;
		carry = (uint64) (*p - '0');
		for (int k = 0; k < nwords; k++)
		{
			uint64		x = (uint64) words[k] * 10 + carry;

			words[k] = (uint32) x;
			carry = x >> 32;
		}
	}
	if (neg)
	{
		/* two's complement: invert and add one */
		uint64		carry = 1;

		for (int k = 0; k < nwords; k++)
		{
			uint64		x = (uint64) (uint32) ~words[k] + carry;

			words[k] = (uint32) x;
			carry = x >> 32;
		}
	}
	slot_begin(c, a);
	dst = a->values + a->length * width;
	for (int k = 0; k < nwords; k++)
		memcpy(dst + 4 * k, &words[k], 4);	/* little-endian host (x86-64, arm64) */
	slot_done(a);
}

static inline void
put_bytes(const LtWriteConv *c, lt_array *a, const char *p, int64 len)
{
	slot_begin(c, a);
	if (a->data_len + len > a->data_cap || a->data == NULL)
		reserve_data(c, a, len);
	if (len > 0)
		memcpy(a->data + a->data_len, p, len);
	a->data_len += len;
	a->offsets[a->length + 1] = a->data_len;
	slot_done(a);
}

static void
put_text(const LtWriteConv *c, lt_array *a, Datum d)
{
	text	   *t = DatumGetTextPP(d);
	const char *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);
	int			enc = GetDatabaseEncoding();

	if (enc == PG_UTF8)
		put_bytes(c, a, s, len);
	else if (enc == PG_SQL_ASCII)
	{
		/* SQL_ASCII stores any bytes: Lance strings are UTF-8 */
		if (!pg_verify_mbstr(PG_UTF8, s, len, true))
			ereport(ERROR,
					(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
					 errmsg("lt_fdw: value for column \"%s\" is not valid UTF-8", c->what)));
		put_bytes(c, a, s, len);
	}
	else
	{
		char	   *u = pg_server_to_any(s, len, PG_UTF8);

		put_bytes(c, a, u, u == s ? len : (int64) strlen(u));
	}
}

static void
put_fixed_binary(const LtWriteConv *c, lt_array *a, Datum d)
{
	bytea	   *b = DatumGetByteaPP(d);
	int			len = VARSIZE_ANY_EXHDR(b);

	if (len != c->field->byte_width)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("lt_fdw: value of %d bytes for column \"%s\" does not fit Lance field \"%s\" (%s)",
						len, c->what, c->field->name, c->field->logical_type),
				 errdetail("A fixed_size_binary(%d) value has exactly %d bytes.", c->field->byte_width,
						   c->field->byte_width)));
	slot_begin(c, a);
	memcpy(a->values + a->length * len, VARDATA_ANY(b), len);
	slot_done(a);
}

static inline int64
floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* Microseconds -> the field's unit (floored); false on overflow. */
static bool
from_usec(int64 us, lt_time_unit unit, int64 *out)
{
	switch (unit)
	{
		case LT_UNIT_S:
			*out = floor_div(us, USECS_PER_SEC);
			return true;
		case LT_UNIT_MS:
			*out = floor_div(us, 1000);
			return true;
		case LT_UNIT_US:
			*out = us;
			return true;
		case LT_UNIT_NS:
			return !pg_mul_s64_overflow(us, 1000, out);
	}
	return false;
}

static void
put_i64_slot(const LtWriteConv *c, lt_array *a, int64 v)
{
	slot_begin(c, a);
	if (c->field->byte_width == 4)
	{
		int32		x = (int32) v;

		memcpy(a->values + a->length * 4, &x, 4);
	}
	else
		memcpy(a->values + a->length * 8, &v, 8);
	slot_done(a);
}

static void
put_datetime(const LtWriteConv *c, lt_array *a, Datum d)
{
	const lt_field *f = c->field;
	int64		v;

	switch (f->type)
	{
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
			{
				DateADT		days = DatumGetDateADT(d);

				if (DATE_NOT_FINITE(days))
					datetime_out_of_range(c, psprintf("date %s", datum_text(d, DATEOID)));
				v = (int64) days + EPOCH_SHIFT_DAYS;
				if (f->type == LT_TYPE_DATE64)
					v *= 86400000;
				put_i64_slot(c, a, v);
				return;
			}
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
			if (!from_usec(DatumGetTimeADT(d), f->unit, &v) || (f->byte_width == 4 && (v < PG_INT32_MIN || v > PG_INT32_MAX)))
				datetime_out_of_range(c, psprintf("time %s", datum_text(d, TIMEOID)));
			put_i64_slot(c, a, v);
			return;
		case LT_TYPE_TIMESTAMP:
			{
				Timestamp	ts = DatumGetTimestamp(d);
				int64		unix_us;

				if (TIMESTAMP_NOT_FINITE(ts) ||
					pg_add_s64_overflow(ts, (int64) EPOCH_SHIFT_DAYS * USECS_PER_DAY, &unix_us) ||
					!from_usec(unix_us, f->unit, &v))
					datetime_out_of_range(c, psprintf("timestamp %s", datum_text(d, c->natural)));
				put_i64_slot(c, a, v);
				return;
			}
		case LT_TYPE_DURATION:
			{
				Interval   *iv = DatumGetIntervalP(d);
				int64		us;

				if (iv->month != 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("lt_fdw: interval %s for column \"%s\" has months, which a Lance duration cannot hold",
									datum_text(d, INTERVALOID), c->what),
							 errdetail("A duration is a fixed length of time: use days, hours and smaller units.")));
				if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &us) ||
					pg_add_s64_overflow(us, iv->time, &us) ||
					!from_usec(us, f->unit, &v))
					datetime_out_of_range(c, psprintf("interval %s", datum_text(d, INTERVALOID)));
				put_i64_slot(c, a, v);
				return;
			}
		default:
			elog(ERROR, "lt_fdw: not a date or time field");
	}
}

/* A scalar value of type typid (the natural type or an accepted wider one) into scalar field c->field. */
static void
put_scalar(const LtWriteConv *c, lt_array *a, Datum d, Oid typid)
{
	const lt_field *f = c->field;

	switch (f->type)
	{
		case LT_TYPE_BOOL:
			slot_begin(c, a);
			a->values[a->length] = DatumGetBool(d) ? 1 : 0;
			slot_done(a);
			return;
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_UINT8:
		case LT_TYPE_UINT16:
		case LT_TYPE_UINT32:
		case LT_TYPE_UINT64:
			put_int(c, a, d, typid);
			return;
		case LT_TYPE_FLOAT16:
		case LT_TYPE_FLOAT32:
		case LT_TYPE_FLOAT64:
			put_float(c, a, d, typid);
			return;
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_DECIMAL256:
			put_decimal(c, a, d);
			return;
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			put_text(c, a, d);
			return;
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			{
				bytea	   *b = DatumGetByteaPP(d);

				put_bytes(c, a, VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
				return;
			}
		case LT_TYPE_FIXED_BINARY:
			put_fixed_binary(c, a, d);
			return;
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
		case LT_TYPE_TIMESTAMP:
		case LT_TYPE_DURATION:
			put_datetime(c, a, d);
			return;
		default:
			elog(ERROR, "lt_fdw: no scalar write conversion for %s", f->logical_type);
	}
}

/* A value given as text, through the natural type's input function. */
static void
put_from_text(const LtWriteConv *c, lt_array *a, const char *s)
{
	Datum		d = OidInputFunctionCall(c->infn_oid, (char *) s, c->ioparam, c->ntypmod);

	put_scalar(c, a, d, c->natural);
}

/* ---- arrays and composites ------------------------------------------------------------------ */

static void
list_items_check(const LtWriteConv *c, int n)
{
	if (c->field->type == LT_TYPE_FIXED_LIST && n != c->field->fixed_size)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("lt_fdw: array of %d items for column \"%s\" does not fit Lance field \"%s\" (%s)",
						n, c->what, c->field->name, c->field->logical_type),
				 errdetail("A fixed_size_list of %d holds exactly %d items.", c->field->fixed_size,
						   c->field->fixed_size)));
}

/* Close a list slot whose items were appended to children[0]. */
static void
list_done(const LtWriteConv *c, lt_array *a)
{
	slot_begin(c, a);
	if (c->field->type != LT_TYPE_FIXED_LIST)
		a->offsets[a->length + 1] = a->children[0]->length;
	slot_done(a);
}

static void
put_array(const LtWriteConv *c, lt_array *a, Datum d)
{
	ArrayType  *arr = DatumGetArrayTypeP(d);
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("lt_fdw: a %d-dimensional array cannot be written into column \"%s\"", ARR_NDIM(arr), c->what),
				 errdetail("Lance field \"%s\" (%s) is a list of scalars: write a one-dimensional array, or declare the column jsonb.",
						   c->field->name, c->field->logical_type)));
	deconstruct_array(arr, ARR_ELEMTYPE(arr), c->elmlen, c->elmbyval, c->elmalign, &elems, &nulls, &n);
	list_items_check(c, n);
	reserve(c->elem, a->children[0], n);
	for (int k = 0; k < n; k++)
		lt_wconv_append(c->elem, a->children[0], elems[k], nulls[k]);
	list_done(c, a);
}

static void
put_composite(const LtWriteConv *c, lt_array *a, Datum d)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(d);
	HeapTupleData tup;
	TupleDesc	td = c->tupdesc;
	Datum	   *values = palloc(sizeof(Datum) * Max(td->natts, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(td->natts, 1));

	check_stack_depth();
	tup.t_len = HeapTupleHeaderGetDatumLength(th);
	ItemPointerSetInvalid(&tup.t_self);
	tup.t_tableOid = InvalidOid;
	tup.t_data = th;
	heap_deform_tuple(&tup, td, values, nulls);
	for (int k = 0; k < c->n_children; k++)
	{
		int			j = c->att_of_child[k];
		lt_array   *child = a->children[k];

		if (j < 0)
		{
			lt_error	err;

			if (lt_array_append_nulls(child, 1, &err) != LT_OK)
				lib_failed(&err, c);
		}
		else
			lt_wconv_append(c->children[k], child, values[j], nulls[j]);
	}
	slot_begin(c, a);
	slot_done(a);
	pfree(values);
	pfree(nulls);
}

/* ---- jsonb ---------------------------------------------------------------------------------- */

static const char *
json_kind(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "string";
		case jbvNumeric:
			return "number";
		case jbvBool:
			return "boolean";
		case jbvBinary:
			return JsonContainerIsArray(v->val.binary.data) ? "array" : "object";
		default:
			return "value";
	}
}

static void
json_mismatch(const LtWriteConv *c, const JsonbValue *v, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("lt_fdw: cannot write a JSON %s into \"%s\"", json_kind(v), c->what),
			 errdetail("Lance field \"%s\" (%s) takes %s.", c->field->name, c->field->logical_type, expected)));
}

static void append_json(const LtWriteConv *c, lt_array *a, const JsonbValue *v);

static void
append_json_scalar(const LtWriteConv *c, lt_array *a, const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvString:
			put_from_text(c, a, pnstrdup(v->val.string.val, v->val.string.len));
			return;
		case jbvNumeric:
			switch (c->field->type)
			{
				case LT_TYPE_FLOAT16:
				case LT_TYPE_FLOAT32:
				case LT_TYPE_FLOAT64:
					put_scalar(c, a, DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric)), FLOAT8OID);
					return;
				case LT_TYPE_INT8:
				case LT_TYPE_INT16:
				case LT_TYPE_INT32:
				case LT_TYPE_INT64:
				case LT_TYPE_UINT8:
				case LT_TYPE_UINT16:
				case LT_TYPE_UINT32:
				case LT_TYPE_UINT64:
				case LT_TYPE_DECIMAL128:
				case LT_TYPE_DECIMAL256:
					put_scalar(c, a, NumericGetDatum(v->val.numeric), NUMERICOID);
					return;
				default:
					put_from_text(c, a, DatumGetCString(DirectFunctionCall1(numeric_out,
																			NumericGetDatum(v->val.numeric))));
					return;
			}
		case jbvBool:
			put_from_text(c, a, v->val.boolean ? "true" : "false");
			return;
		default:
			json_mismatch(c, v, "a JSON scalar");
	}
}

static void
append_json(const LtWriteConv *c, lt_array *a, const JsonbValue *v)
{
	const lt_field *f = c->field;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (v->type == jbvNull)
	{
		append_null(c, a);
		return;
	}
	if (is_scalar(f))
	{
		append_json_scalar(c, a, v);
		return;
	}
	if (v->type != jbvBinary)
		json_mismatch(c, v, f->type == LT_TYPE_STRUCT || f->type == LT_TYPE_MAP ? "an object" : "an array");
	switch (f->type)
	{
		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_FIXED_LIST:
			{
				JsonbContainer *jc = v->val.binary.data;
				int			n;

				if (!JsonContainerIsArray(jc))
					json_mismatch(c, v, "an array");
				n = JsonContainerSize(jc);
				list_items_check(c, n);
				for (int k = 0; k < n; k++)
				{
					JsonbValue *item = getIthJsonbValueFromContainer(jc, k);

					append_json(c->children[0], a->children[0], item);
				}
				list_done(c, a);
				return;
			}
		case LT_TYPE_STRUCT:
			{
				JsonbContainer *jc = v->val.binary.data;

				if (!JsonContainerIsObject(jc))
					json_mismatch(c, v, "an object");
				for (int k = 0; k < c->n_children; k++)
				{
					const lt_field *ch = f->children[k];
					JsonbValue	key;
					JsonbValue *item;

					key.type = jbvString;
					key.val.string.val = ch->name;
					key.val.string.len = strlen(ch->name);
					item = findJsonbValueFromContainer(jc, JB_FOBJECT, &key);
					if (item == NULL)
					{
						JsonbValue	null;

						null.type = jbvNull;
						append_json(c->children[k], a->children[k], &null);
					}
					else
						append_json(c->children[k], a->children[k], item);
				}
				slot_begin(c, a);
				slot_done(a);
				return;
			}
		case LT_TYPE_MAP:
			{
				JsonbContainer *jc = v->val.binary.data;
				const LtWriteConv *ec = c->children[0];
				lt_array   *entries = a->children[0];
				JsonbIterator *it;
				JsonbValue	jv;
				JsonbIteratorToken tok;

				if (!JsonContainerIsObject(jc))
					json_mismatch(c, v, "an object");
				it = JsonbIteratorInit(jc);
				while ((tok = JsonbIteratorNext(&it, &jv, true)) != WJB_DONE)
				{
					if (tok == WJB_KEY)
					{
						/* map keys are JSON strings: parsed as the key field's type */
						append_json_scalar(ec->children[0], entries->children[0], &jv);
						tok = JsonbIteratorNext(&it, &jv, true);
						Assert(tok == WJB_VALUE);
						append_json(ec->children[1], entries->children[1], &jv);
						slot_begin(ec, entries);
						slot_done(entries);
					}
				}
				list_done(c, a);
				return;
			}
		default:
			json_mismatch(c, v, "nothing lt_fdw can write");
	}
}

/* ---- the entry point ------------------------------------------------------------------------ */

/* The fast kinds: true when the value went in. */
static pg_attribute_always_inline bool
put_fast(const LtWriteConv *c, lt_array *a, Datum d)
{
	uint8	   *dst;

	if (c->fast == LT_FAST_DATE32 && DATE_NOT_FINITE(DatumGetDateADT(d)))
		return false;			/* the general path reports it */
	if (c->fast == LT_FAST_TEXT)
	{
		if (VARATT_IS_COMPRESSED(DatumGetPointer(d)) || VARATT_IS_EXTERNAL(DatumGetPointer(d)))
			return false;		/* the general path detoasts it */
		/* put_text's UTF8 case, without its detoasting call */
		put_bytes(c, a, VARDATA_ANY(DatumGetPointer(d)), VARSIZE_ANY_EXHDR(DatumGetPointer(d)));
		return true;
	}
	if (unlikely(a->length >= a->cap))
		reserve(c, a, 1);
	switch (c->fast)
	{
		case LT_FAST_INT64:
			{
				int64		v = DatumGetInt64(d);

				memcpy(a->values + a->length * 8, &v, 8);
				break;
			}
		case LT_FAST_INT32:
			{
				int32		v = DatumGetInt32(d);

				memcpy(a->values + a->length * 4, &v, 4);
				break;
			}
		case LT_FAST_INT16:
			{
				int16		v = DatumGetInt16(d);

				memcpy(a->values + a->length * 2, &v, 2);
				break;
			}
		case LT_FAST_FLOAT64:
			{
				double		v = DatumGetFloat8(d);

				memcpy(a->values + a->length * 8, &v, 8);
				break;
			}
		case LT_FAST_FLOAT32:
			{
				float		v = DatumGetFloat4(d);

				memcpy(a->values + a->length * 4, &v, 4);
				break;
			}
		case LT_FAST_DATE32:
			{
				int32		v = (int32) DatumGetDateADT(d) + EPOCH_SHIFT_DAYS;

				memcpy(a->values + a->length * 4, &v, 4);
				break;
			}
		case LT_FAST_BOOL:
			dst = a->values + a->length;
			*dst = DatumGetBool(d) ? 1 : 0;
			break;
		default:
			return false;
	}
	if (a->validity)
		a->validity[a->length] = 1;
	a->length++;
	return true;
}

/* NULLs and the values the fast kinds do not take. */
static void
append_general(const LtWriteConv *c, lt_array *a, Datum value, bool isnull)
{
	if (isnull)
	{
		append_null(c, a);
		return;
	}
	switch (c->kind)
	{
		case LT_CONV_SCALAR:
			put_scalar(c, a, value, c->typid);
			return;
		case LT_CONV_TEXT:
			put_from_text(c, a, TextDatumGetCString(value));
			return;
		case LT_CONV_ARRAY:
			put_array(c, a, value);
			return;
		case LT_CONV_COMPOSITE:
			put_composite(c, a, value);
			return;
		case LT_CONV_JSONB:
			{
				Jsonb	   *jb = DatumGetJsonbP(value);
				JsonbValue	root;

				if (JB_ROOT_IS_SCALAR(jb))
					(void) JsonbExtractScalar(&jb->root, &root);
				else
				{
					root.type = jbvBinary;
					root.val.binary.data = &jb->root;
					root.val.binary.len = VARSIZE(jb) - VARHDRSZ;
				}
				append_json(c, a, &root);
				return;
			}
		case LT_CONV_BLOB:
			{
				/*
				 * The writer's array of a blob column holds the bytes, which it stores out of line: the
				 * array itself (legacy), or the data of a blob v2 struct {data, uri} (no URI).
				 */
				bytea	   *b = DatumGetByteaPP(value);

				if (a->field->type == LT_TYPE_STRUCT && a->field->blob == LT_BLOB_V2 && a->n_children == 2)
				{
					lt_error	err;

					put_bytes(c, a->children[0], VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
					if (lt_array_append_nulls(a->children[1], 1, &err) != LT_OK)
						lib_failed(&err, c);
					slot_begin(c, a);
					slot_done(a);
					return;
				}
				if (a->field->type != LT_TYPE_LARGE_BINARY && a->field->type != LT_TYPE_BINARY)
					elog(ERROR, "lt_fdw: blob column \"%s\" written through its descriptor", c->what);
				put_bytes(c, a, VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
				return;
			}
	}
}

/* One value: the fast kinds inline, the others through the general path. */
static pg_attribute_always_inline void
append_value(const LtWriteConv *c, lt_array *a, Datum value, bool isnull)
{
	if (isnull || c->fast == LT_FAST_NONE || !put_fast(c, a, value))
		append_general(c, a, value, isnull);
}

void
lt_wconv_append(const LtWriteConv *c, lt_array *a, Datum value, bool isnull)
{
	append_value(c, a, value, isnull);
}

bool
lt_wconv_append_row(LtWriteConv *const *conv, lt_array *const *arrays, const AttrNumber *att_of_field, int n,
					const Datum *values, const bool *isnull, AttrNumber *converting, const int64 *since, int64 limit)
{
	bool		full = false;

	for (int k = 0; k < n; k++)
	{
		AttrNumber	att = att_of_field[k];
		lt_array   *a = arrays[k];

		if (att == 0)
		{
			lt_error	err;

			/* a field the table has no column for */
			if (lt_array_append_nulls(a, 1, &err) != LT_OK)
				lt_report(&err, psprintf("column builder of field \"%s\"", a->field->name));
			continue;
		}
		*converting = att;
		append_value(conv[k], a, values[att - 1], isnull[att - 1]);
		full |= a->data_len - since[k] >= limit;
	}
	*converting = 0;
	return full;
}
