/*
 * convert.c — the type mapping between Lance fields and Postgres columns (DESIGN.md §1).
 *
 *   bool -> boolean; int8/int16/uint8 -> smallint; int32/uint16 -> integer; int64/uint32 -> bigint;
 *   uint64 -> numeric(20,0); float16/float32 -> real; float64 -> double precision;
 *   utf8/large_utf8/dictionary<utf8> -> text; binary/large_binary/fixed_size_binary -> bytea;
 *   date32/date64 -> date; time32/time64 -> time; timestamp -> timestamp, with a zone -> timestamptz
 *   (ns floored to µs); decimal128/256(p,s) -> numeric(p,s); duration -> interval;
 *   fixed_size_list/list/large_list<T> -> T[] when T is a scalar; struct -> a composite type with
 *   matching attribute names; jsonb for anything (struct, map, nested lists).
 * A declared type may also be wider than the natural one (an integer into a wider integer or
 * numeric, a float into double precision), or text for any scalar (the natural type's output).
 *
 * lt_conv_build checks a declared column once, when a scan starts, and returns a conversion plan;
 * lt_conv_datum converts one slot. The data is untrusted: strings are validated in the database
 * encoding, dates and times are range-checked, offsets are checked against their children.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/shortest_dec.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "common/int.h"

#include "lt_fdw.h"

#define EPOCH_SHIFT_DAYS	(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE)	/* 10957 */


/* ---- the natural mapping ------------------------------------------------------------------- */

static bool
is_scalar(const lt_field *f)
{
	return !lt_type_is_nested(f->type) && f->type != LT_TYPE_NULL;
}

static int32
numeric_typmod(int precision, int scale)
{
	if (precision < 1 || precision > NUMERIC_MAX_PRECISION || scale < 0 || scale > precision)
		return -1;
	return ((precision << 16) | scale) + VARHDRSZ;
}

Oid
lt_natural_type(const lt_field *f, int32 *typmod)
{
	*typmod = -1;
	switch (f->type)
	{
		case LT_TYPE_BOOL:
			return BOOLOID;
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_UINT8:
			return INT2OID;
		case LT_TYPE_INT32:
		case LT_TYPE_UINT16:
			return INT4OID;
		case LT_TYPE_INT64:
		case LT_TYPE_UINT32:
			return INT8OID;
		case LT_TYPE_UINT64:
			*typmod = numeric_typmod(20, 0);
			return NUMERICOID;
		case LT_TYPE_FLOAT16:
		case LT_TYPE_FLOAT32:
			return FLOAT4OID;
		case LT_TYPE_FLOAT64:
			return FLOAT8OID;
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_DECIMAL256:
			*typmod = numeric_typmod(f->precision, f->scale);
			return NUMERICOID;
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			return TEXTOID;
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
		case LT_TYPE_FIXED_BINARY:
			return BYTEAOID;
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
			return DATEOID;
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
			return TIMEOID;
		case LT_TYPE_TIMESTAMP:
			return f->timezone ? TIMESTAMPTZOID : TIMESTAMPOID;
		case LT_TYPE_DURATION:
			return INTERVALOID;
		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_FIXED_LIST:
			if (f->n_children == 1 && is_scalar(f->children[0]))
			{
				int32		etypmod;
				Oid			elem = lt_natural_type(f->children[0], &etypmod);

				if (OidIsValid(elem))
				{
					*typmod = etypmod;
					return get_array_type(elem);
				}
			}
			return JSONBOID;
		case LT_TYPE_MAP:
			return JSONBOID;
		case LT_TYPE_STRUCT:		/* a composite type: IMPORT creates one */
		case LT_TYPE_NULL:
			return InvalidOid;
	}
	return InvalidOid;
}

char *
lt_type_sql(const lt_field *f)
{
	int32		typmod;
	Oid			t = lt_natural_type(f, &typmod);

	if (!OidIsValid(t))
		return NULL;
	return format_type_with_typemod(t, typmod);
}

/* ---- building a conversion ------------------------------------------------------------------ */

static int
int_rank(Oid t)
{
	switch (t)
	{
		case INT2OID:
			return 1;
		case INT4OID:
			return 2;
		case INT8OID:
			return 3;
		case NUMERICOID:
			return 4;
		default:
			return 0;
	}
}

/* Can a scalar field be read into declared type t directly (natural type or a wider one)? */
static bool
scalar_accepts(const lt_field *f, Oid natural, Oid t)
{
	if (t == natural)
		return true;
	switch (f->type)
	{
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_UINT8:
		case LT_TYPE_UINT16:
		case LT_TYPE_UINT32:
			return int_rank(t) > 0 && int_rank(t) >= int_rank(natural);
		case LT_TYPE_FLOAT16:
		case LT_TYPE_FLOAT32:
			return t == FLOAT8OID;
		default:
			return false;
	}
}

LtConv *
lt_conv_build(const lt_field *f, Oid typid, int32 typmod, char **why)
{
	LtConv	   *c = palloc0(sizeof(LtConv));
	int32		ntypmod;
	Oid			natural = lt_natural_type(f, &ntypmod);
	Oid			elemtype;

	check_stack_depth();
	c->field = f;
	c->typid = typid;
	c->typmod = typmod;
	*why = NULL;

	if (typid == JSONBOID)
	{
		c->kind = LT_CONV_JSONB;
		return c;
	}
	if (is_scalar(f))
	{
		if (OidIsValid(natural) && scalar_accepts(f, natural, typid))
		{
			c->kind = LT_CONV_SCALAR;
			return c;
		}
		if (OidIsValid(natural) && typid == TEXTOID)
		{
			Oid			outfn;
			bool		varlena;

			c->kind = LT_CONV_TEXT;
			c->natural = natural;
			getTypeOutputInfo(natural, &outfn, &varlena);
			fmgr_info(outfn, &c->outfn);
			return c;
		}
		*why = psprintf("Lance type %s maps to %s", f->logical_type,
						OidIsValid(natural) ? format_type_with_typemod(natural, ntypmod) : "no type");
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

				c->elem = lt_conv_build(f->children[0], elemtype, typmod, &ewhy);
				if (c->elem == NULL)
				{
					*why = psprintf("its items cannot be read as %s: %s", format_type_be(elemtype), ewhy);
					return NULL;
				}
				c->kind = LT_CONV_ARRAY;
				get_typlenbyvalalign(elemtype, &c->elmlen, &c->elmbyval, &c->elmalign);
				return c;
			}
			*why = OidIsValid(elemtype) ? psprintf("Lance type %s maps to jsonb (its items are not scalars)", f->logical_type)
				: psprintf("Lance type %s maps to %s or jsonb", f->logical_type,
						   OidIsValid(natural) ? format_type_with_typemod(natural, ntypmod) : "an array");
			return NULL;
		case LT_TYPE_STRUCT:
			if (type_is_rowtype(typid) && typid != RECORDOID)
			{
				TupleDesc	td = lookup_rowtype_tupdesc_copy(typid, typmod);

				c->kind = LT_CONV_COMPOSITE;
				c->tupdesc = BlessTupleDesc(td);
				c->child_index = palloc(sizeof(int) * td->natts);
				c->children = palloc0(sizeof(LtConv *) * td->natts);
				for (int j = 0; j < td->natts; j++)
				{
					Form_pg_attribute att = TupleDescAttr(td, j);
					int			k;
					char	   *cwhy;

					c->child_index[j] = -1;
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
					c->child_index[j] = k;
					c->children[j] = lt_conv_build(f->children[k], att->atttypid, att->atttypmod, &cwhy);
					if (c->children[j] == NULL)
					{
						*why = psprintf("struct field \"%s\" cannot be read as %s: %s", f->children[k]->name,
										format_type_with_typemod(att->atttypid, att->atttypmod), cwhy);
						return NULL;
					}
				}
				return c;
			}
			*why = psprintf("a struct maps to a composite type with the same field names, or to jsonb");
			return NULL;
		case LT_TYPE_MAP:
			*why = psprintf("a map field maps to jsonb");
			return NULL;
		default:
			*why = psprintf("lt_fdw cannot read %s fields", f->logical_type);
			return NULL;
	}
}

/* ---- converting a slot ---------------------------------------------------------------------- */

static void
out_of_range(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("%s out of range", what)));
}

static inline int64
read_i64(const lt_array *a, int64 i)
{
	const uint8 *v = a->values + i * a->field->byte_width;

	switch (a->field->type)
	{
		case LT_TYPE_INT8:
			return *(const int8 *) v;
		case LT_TYPE_UINT8:
			return *v;
		case LT_TYPE_INT16:
			{
				int16		x;

				memcpy(&x, v, 2);
				return x;
			}
		case LT_TYPE_UINT16:
			{
				uint16		x;

				memcpy(&x, v, 2);
				return x;
			}
		case LT_TYPE_INT32:
		case LT_TYPE_DATE32:
		case LT_TYPE_TIME32:
			{
				int32		x;

				memcpy(&x, v, 4);
				return x;
			}
		case LT_TYPE_UINT32:
			{
				uint32		x;

				memcpy(&x, v, 4);
				return x;
			}
		default:
			{
				int64		x;

				memcpy(&x, v, 8);
				return x;
			}
	}
}

static float
half_to_float(uint16 h)
{
	int			e = (h >> 10) & 0x1f;
	int			m = h & 0x3ff;
	double		v;

	if (e == 0)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? get_float8_nan() : get_float8_infinity();
	else
		v = ldexp(m + 1024, e - 25);
	return (float) ((h & 0x8000) ? -v : v);
}

static double
read_float(const lt_array *a, int64 i)
{
	const uint8 *v = a->values + i * a->field->byte_width;

	if (a->field->type == LT_TYPE_FLOAT16)
	{
		uint16		h;

		memcpy(&h, v, 2);
		return half_to_float(h);
	}
	if (a->field->type == LT_TYPE_FLOAT32)
	{
		float		x;

		memcpy(&x, v, 4);
		return x;
	}
	{
		double		x;

		memcpy(&x, v, 8);
		return x;
	}
}

/* floor(a / b) for b > 0 */
static inline int64
floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* A value in `unit` since the Unix epoch -> microseconds since the Unix epoch (floored). */
static int64
to_usec(int64 v, lt_time_unit unit, const char *what)
{
	int64		r;

	switch (unit)
	{
		case LT_UNIT_S:
			if (pg_mul_s64_overflow(v, 1000000, &r))
				out_of_range(what);
			return r;
		case LT_UNIT_MS:
			if (pg_mul_s64_overflow(v, 1000, &r))
				out_of_range(what);
			return r;
		case LT_UNIT_US:
			return v;
		case LT_UNIT_NS:
			return floor_div(v, 1000);
	}
	return v;
}

/* The decimal digits of a little-endian two's-complement integer of `bytes` bytes, with `scale`. */
static char *
decimal_string(const uint8 *p, int bytes, int scale)
{
	uint32		w[8];
	int			nw = bytes / 4;
	bool		neg = (p[bytes - 1] & 0x80) != 0;
	char		digits[100];
	int			k = 0;
	StringInfoData out;

	memcpy(w, p, bytes);
	if (neg)
	{
		uint64		carry = 1;

		for (int i = 0; i < nw; i++)
		{
			uint64		s = (uint64) (~w[i]) + carry;

			w[i] = (uint32) s;
			carry = s >> 32;
		}
	}
	for (;;)
	{
		bool		zero = true;
		uint64		rem = 0;

		for (int i = nw - 1; i >= 0; i--)
		{
			uint64		cur = (rem << 32) | w[i];

			w[i] = (uint32) (cur / 10);
			rem = cur % 10;
			if (w[i])
				zero = false;
		}
		digits[k++] = (char) ('0' + rem);
		if (zero)
			break;
	}
	if (scale < 0 || scale > 80)
		scale = 0;
	while (k < scale + 1)
		digits[k++] = '0';
	initStringInfo(&out);
	if (neg)
		appendStringInfoChar(&out, '-');
	for (int i = k - 1; i >= 0; i--)
	{
		appendStringInfoChar(&out, digits[i]);
		if (i == scale && scale > 0)
			appendStringInfoChar(&out, '.');
	}
	return out.data;
}

/* A text Datum from untrusted UTF-8 bytes (validated, converted to the database encoding). */
static Datum
text_from_utf8(const char *s, int64 len)
{
	char	   *conv;

	if (len > MaxAllocSize - VARHDRSZ - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("string of %lld bytes is too long for text", (long long) len)));
	conv = pg_any_to_server(s, (int) len, PG_UTF8);
	if (conv == s)
		return PointerGetDatum(cstring_to_text_with_len(s, (int) len));
	return PointerGetDatum(cstring_to_text(conv));
}

static Datum
bytea_from(const uint8 *p, int64 len)
{
	bytea	   *b;

	if (len > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("binary value of %lld bytes is too long for bytea", (long long) len)));
	b = palloc(VARHDRSZ + len);
	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), p, len);
	return PointerGetDatum(b);
}

static void
check_offsets(const lt_array *a, int64 i, int64 start, int64 end, const lt_array *child)
{
	if (start < 0 || end < start || child == NULL || end > child->length)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("lt_fdw: list slot %lld of field \"%s\" has items [%lld, %lld) outside its %lld items",
						(long long) i, a->field->name, (long long) start, (long long) end,
						(long long) (child ? child->length : 0))));
}

/* A scalar slot (known valid) as a Datum of type `typid` (the natural type or an accepted wider one). */
static Datum
scalar_datum(const lt_field *f, Oid typid, int32 typmod, const lt_array *a, int64 i)
{
	switch (f->type)
	{
		case LT_TYPE_BOOL:
			return BoolGetDatum(a->values[i] != 0);
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_UINT8:
		case LT_TYPE_UINT16:
		case LT_TYPE_UINT32:
			{
				int64		v = read_i64(a, i);

				switch (typid)
				{
					case INT2OID:
						return Int16GetDatum((int16) v);
					case INT4OID:
						return Int32GetDatum((int32) v);
					case INT8OID:
						return Int64GetDatum(v);
					default:
						return NumericGetDatum(int64_to_numeric(v));
				}
			}
		case LT_TYPE_UINT64:
			{
				uint64		v;
				char		buf[32];

				memcpy(&v, a->values + i * 8, 8);
				if (v <= (uint64) PG_INT64_MAX)
					return NumericGetDatum(int64_to_numeric((int64) v));
				snprintf(buf, sizeof(buf), UINT64_FORMAT, v);
				return DirectFunctionCall3(numeric_in, CStringGetDatum(buf), ObjectIdGetDatum(InvalidOid),
										   Int32GetDatum(-1));
			}
		case LT_TYPE_FLOAT16:
		case LT_TYPE_FLOAT32:
		case LT_TYPE_FLOAT64:
			if (typid == FLOAT4OID)
				return Float4GetDatum((float4) read_float(a, i));
			return Float8GetDatum(read_float(a, i));
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_DECIMAL256:
			return DirectFunctionCall3(numeric_in,
									   CStringGetDatum(decimal_string(a->values + i * f->byte_width,
																	  f->byte_width, f->scale)),
									   ObjectIdGetDatum(InvalidOid), Int32GetDatum(typmod));
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			return text_from_utf8((const char *) a->data + a->offsets[i], a->offsets[i + 1] - a->offsets[i]);
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			return bytea_from(a->data + a->offsets[i], a->offsets[i + 1] - a->offsets[i]);
		case LT_TYPE_FIXED_BINARY:
			return bytea_from(a->values + i * f->byte_width, f->byte_width);
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
			{
				int64		days = read_i64(a, i);

				if (f->type == LT_TYPE_DATE64)
					days = floor_div(days, 86400000);
				days -= EPOCH_SHIFT_DAYS;
				if (days < PG_INT32_MIN || days > PG_INT32_MAX || !IS_VALID_DATE((DateADT) days))
					out_of_range("date");
				return DateADTGetDatum((DateADT) days);
			}
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
			{
				int64		us = to_usec(read_i64(a, i), f->unit, "time");

				if (us < 0 || us > USECS_PER_DAY)
					out_of_range("time");
				return TimeADTGetDatum(us);
			}
		case LT_TYPE_TIMESTAMP:
			{
				int64		us = to_usec(read_i64(a, i), f->unit, "timestamp");
				int64		ts;

				if (pg_sub_s64_overflow(us, (int64) EPOCH_SHIFT_DAYS * USECS_PER_DAY, &ts) ||
					!IS_VALID_TIMESTAMP(ts))
					out_of_range("timestamp");
				return TimestampGetDatum(ts);
			}
		case LT_TYPE_DURATION:
			{
				Interval   *iv = palloc0(sizeof(Interval));
				int64		v = read_i64(a, i);

				iv->time = f->unit == LT_UNIT_NS ? v / 1000 : to_usec(v, f->unit, "interval");
				return IntervalPGetDatum(iv);
			}
		default:
			elog(ERROR, "lt_fdw: no scalar conversion for %s", f->logical_type);
	}
	return (Datum) 0;
}

/* ---- jsonb ---------------------------------------------------------------------------------- */

static void
json_datetime(StringInfo buf, Datum d, Oid typid)
{
	char		tmp[MAXDATELEN + 1];

	appendStringInfoChar(buf, '"');
	appendStringInfoString(buf, JsonEncodeDateTime(tmp, d, typid, NULL));
	appendStringInfoChar(buf, '"');
}

static void
json_text_value(StringInfo buf, const lt_array *a, int64 i);

static void
json_value(StringInfo buf, const lt_array *a, int64 i)
{
	const lt_field *f = a->field;

	check_stack_depth();
	CHECK_FOR_INTERRUPTS();
	if (!lt_array_is_valid(a, i))
	{
		appendStringInfoString(buf, "null");
		return;
	}
	switch (f->type)
	{
		case LT_TYPE_NULL:
			appendStringInfoString(buf, "null");
			break;
		case LT_TYPE_BOOL:
			appendStringInfoString(buf, a->values[i] ? "true" : "false");
			break;
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_UINT8:
		case LT_TYPE_UINT16:
		case LT_TYPE_UINT32:
			appendStringInfo(buf, INT64_FORMAT, read_i64(a, i));
			break;
		case LT_TYPE_UINT64:
			{
				uint64		v;

				memcpy(&v, a->values + i * 8, 8);
				appendStringInfo(buf, UINT64_FORMAT, v);
				break;
			}
		case LT_TYPE_FLOAT16:
		case LT_TYPE_FLOAT32:
		case LT_TYPE_FLOAT64:
			{
				double		v = read_float(a, i);

				if (isnan(v) || isinf(v))
					appendStringInfo(buf, "\"%s\"", isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
				else if (f->type == LT_TYPE_FLOAT64)
					appendStringInfoString(buf, float8out_internal(v));
				else
				{
					char		tmp[FLOAT_SHORTEST_DECIMAL_LEN];

					float_to_shortest_decimal_buf((float) v, tmp);
					appendStringInfoString(buf, tmp);
				}
				break;
			}
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_DECIMAL256:
			appendStringInfoString(buf, decimal_string(a->values + i * f->byte_width, f->byte_width, f->scale));
			break;
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			escape_json(buf, TextDatumGetCString(scalar_datum(f, TEXTOID, -1, a, i)));
			break;
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
		case LT_TYPE_FIXED_BINARY:
			escape_json(buf, DatumGetCString(DirectFunctionCall1(byteaout, scalar_datum(f, BYTEAOID, -1, a, i))));
			break;
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
			json_datetime(buf, scalar_datum(f, DATEOID, -1, a, i), DATEOID);
			break;
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
			json_datetime(buf, scalar_datum(f, TIMEOID, -1, a, i), TIMEOID);
			break;
		case LT_TYPE_TIMESTAMP:
			{
				Oid			t = f->timezone ? TIMESTAMPTZOID : TIMESTAMPOID;

				json_datetime(buf, scalar_datum(f, t, -1, a, i), t);
				break;
			}
		case LT_TYPE_DURATION:
			escape_json(buf, DatumGetCString(DirectFunctionCall1(interval_out,
																 scalar_datum(f, INTERVALOID, -1, a, i))));
			break;
		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_FIXED_LIST:
			{
				int64		start,
							end;

				if (f->type == LT_TYPE_FIXED_LIST)
				{
					start = i * f->fixed_size;
					end = start + f->fixed_size;
				}
				else
				{
					start = a->offsets[i];
					end = a->offsets[i + 1];
				}
				check_offsets(a, i, start, end, a->n_children > 0 ? a->children[0] : NULL);
				appendStringInfoChar(buf, '[');
				for (int64 k = start; k < end; k++)
				{
					if (k > start)
						appendStringInfoString(buf, ", ");
					json_value(buf, a->children[0], k);
				}
				appendStringInfoChar(buf, ']');
				break;
			}
		case LT_TYPE_MAP:
			{
				const lt_array *entries = a->n_children > 0 ? a->children[0] : NULL;
				int64		start = a->offsets[i],
							end = a->offsets[i + 1];

				check_offsets(a, i, start, end, entries);
				if (entries->n_children < 2 || !entries->children[0] || !entries->children[1])
					ereport(ERROR,
							(errcode(ERRCODE_DATA_CORRUPTED),
							 errmsg("lt_fdw: map field \"%s\" has no key and value", f->name)));
				appendStringInfoChar(buf, '{');
				for (int64 k = start; k < end; k++)
				{
					if (k > start)
						appendStringInfoString(buf, ", ");
					json_text_value(buf, entries->children[0], k);
					appendStringInfoString(buf, ": ");
					json_value(buf, entries->children[1], k);
				}
				appendStringInfoChar(buf, '}');
				break;
			}
		case LT_TYPE_STRUCT:
			appendStringInfoChar(buf, '{');
			for (int c = 0; c < f->n_children; c++)
			{
				if (c)
					appendStringInfoString(buf, ", ");
				escape_json(buf, f->children[c]->name);
				appendStringInfoString(buf, ": ");
				if (c < a->n_children && a->children[c])
					json_value(buf, a->children[c], i);
				else
					appendStringInfoString(buf, "null");
			}
			appendStringInfoChar(buf, '}');
			break;
	}
}

/* A map key: always a JSON string. */
static void
json_text_value(StringInfo buf, const lt_array *a, int64 i)
{
	StringInfoData tmp;

	if (a->field->type == LT_TYPE_UTF8 || a->field->type == LT_TYPE_LARGE_UTF8)
	{
		json_value(buf, a, i);
		return;
	}
	initStringInfo(&tmp);
	json_value(&tmp, a, i);
	if (tmp.len > 0 && tmp.data[0] == '"')
		appendStringInfoString(buf, tmp.data);
	else
		escape_json(buf, tmp.data);
}

/* ---- the entry point ------------------------------------------------------------------------ */

Datum
lt_conv_datum(const LtConv *c, const lt_array *a, int64 i, bool *isnull)
{
	if (a == NULL || !lt_array_is_valid(a, i))
	{
		*isnull = true;
		return (Datum) 0;
	}
	*isnull = false;
	switch (c->kind)
	{
		case LT_CONV_SCALAR:
			return scalar_datum(c->field, c->typid, c->typmod, a, i);
		case LT_CONV_TEXT:
			{
				Datum		d = scalar_datum(c->field, c->natural, -1, a, i);

				return PointerGetDatum(cstring_to_text(OutputFunctionCall((FmgrInfo *) &c->outfn, d)));
			}
		case LT_CONV_ARRAY:
			{
				const lt_field *f = c->field;
				const lt_array *child = a->n_children > 0 ? a->children[0] : NULL;
				int64		start,
							end;
				int			n;
				Datum	   *values;
				bool	   *nulls;
				int			dims[1];
				int			lbs[1] = {1};

				if (f->type == LT_TYPE_FIXED_LIST)
				{
					start = i * f->fixed_size;
					end = start + f->fixed_size;
				}
				else
				{
					start = a->offsets[i];
					end = a->offsets[i + 1];
				}
				check_offsets(a, i, start, end, child);
				if (end - start > MaxArraySize)
					ereport(ERROR,
							(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							 errmsg("list of %lld items is too long for an array", (long long) (end - start))));
				n = (int) (end - start);
				values = palloc(sizeof(Datum) * Max(n, 1));
				nulls = palloc(sizeof(bool) * Max(n, 1));
				for (int k = 0; k < n; k++)
					values[k] = lt_conv_datum(c->elem, child, start + k, &nulls[k]);
				dims[0] = n;
				if (n == 0)
					return PointerGetDatum(construct_empty_array(c->elem->typid));
				return PointerGetDatum(construct_md_array(values, nulls, 1, dims, lbs, c->elem->typid,
														  c->elmlen, c->elmbyval, c->elmalign));
			}
		case LT_CONV_COMPOSITE:
			{
				TupleDesc	td = c->tupdesc;
				Datum	   *values = palloc(sizeof(Datum) * td->natts);
				bool	   *nulls = palloc(sizeof(bool) * td->natts);
				HeapTuple	tup;

				check_stack_depth();
				for (int j = 0; j < td->natts; j++)
				{
					int			k = c->child_index[j];

					if (k < 0 || k >= a->n_children || a->children[k] == NULL)
					{
						values[j] = (Datum) 0;
						nulls[j] = true;
						continue;
					}
					values[j] = lt_conv_datum(c->children[j], a->children[k], i, &nulls[j]);
				}
				tup = heap_form_tuple(td, values, nulls);
				return HeapTupleGetDatum(tup);
			}
		case LT_CONV_JSONB:
			{
				StringInfoData buf;

				initStringInfo(&buf);
				json_value(&buf, a, i);
				return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
			}
	}
	return (Datum) 0;
}
