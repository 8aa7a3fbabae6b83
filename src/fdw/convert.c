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

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "convert.h"
#include "dataset.h"
#include "blob/lt_blob.h"
#include "table/lt_dataset.h"
#include "util/lt_alloc.h"
#include "proto/lt_table.pb-c.h"
#include "util/lt_value.h"

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
	if (f->blob != LT_BLOB_NONE)
		return BYTEAOID;		/* a blob's bytes, whatever its descriptor's type */
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
	if (lt_type_is_int64_exact(f->type))
		return int_rank(t) > 0 && int_rank(t) >= int_rank(natural);
	return (f->type == LT_TYPE_FLOAT16 || f->type == LT_TYPE_FLOAT32) && t == FLOAT8OID;
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

	if (f->blob != LT_BLOB_NONE)
	{
		if (typid != BYTEAOID)
		{
			*why = psprintf("A %s column maps to bytea (its bytes).", lt_blob_form_name(f->blob));
			return NULL;
		}
		c->kind = LT_CONV_BLOB;
		c->blob_src = palloc0(sizeof(LtBlobSource));
		c->blob_src->cxt = CurrentMemoryContext;
		return c;
	}
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

static double
read_float(const lt_array *a, int64 i)
{
	const uint8 *v = a->values + i * a->field->byte_width;

	if (a->field->type == LT_TYPE_FLOAT16)
	{
		uint16		h;

		memcpy(&h, v, 2);
		return lt_half_to_float(h);
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

/*
 * Where the bytes of a string or binary slot start: after its header room in an array with room
 * (lt_array.h), unless the slot is empty without room.
 */
static inline int64
var_start(const lt_array *a, int64 i)
{
	if (a->room && a->offsets[i + 1] != a->offsets[i])
		return lt_array_room_start(a->offsets[i]);
	return a->offsets[i];
}

/* The bytes of a string or binary slot must lie inside the array's data. */
static inline bool
var_slot_ok(const lt_array *a, int64 i)
{
	return a->offsets[i] >= 0 && a->offsets[i + 1] >= var_start(a, i) && a->offsets[i + 1] <= a->data_len;
}

static void
check_var_slot(const lt_array *a, int64 i)
{
	if (!var_slot_ok(a, i))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("lt_fdw: slot %lld of field \"%s\" has bytes [%lld, %lld) outside its %lld bytes",
						(long long) i, a->field->name, (long long) var_start(a, i), (long long) a->offsets[i + 1],
						(long long) a->data_len)));
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
				int64		v = lt_array_int64(a, i);

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
			{
				char		dec[LT_DECIMAL_BUFLEN];

				lt_decimal_format(a->values + i * f->byte_width, f->byte_width, f->scale, dec);
				return DirectFunctionCall3(numeric_in, CStringGetDatum(dec),
										   ObjectIdGetDatum(InvalidOid), Int32GetDatum(typmod));
			}
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			check_var_slot(a, i);
			return text_from_utf8((const char *) a->data + var_start(a, i), a->offsets[i + 1] - var_start(a, i));
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			check_var_slot(a, i);
			return bytea_from(a->data + var_start(a, i), a->offsets[i + 1] - var_start(a, i));
		case LT_TYPE_FIXED_BINARY:
			return bytea_from(a->values + i * f->byte_width, f->byte_width);
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
			{
				int64		days = lt_array_int64(a, i);

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
				int64		us = to_usec(lt_array_int64(a, i), f->unit, "time");

				if (us < 0 || us > USECS_PER_DAY)
					out_of_range("time");
				return TimeADTGetDatum(us);
			}
		case LT_TYPE_TIMESTAMP:
			{
				int64		us = to_usec(lt_array_int64(a, i), f->unit, "timestamp");
				int64		ts;

				if (pg_sub_s64_overflow(us, (int64) EPOCH_SHIFT_DAYS * USECS_PER_DAY, &ts) ||
					!IS_VALID_TIMESTAMP(ts))
					out_of_range("timestamp");
				return TimestampGetDatum(ts);
			}
		case LT_TYPE_DURATION:
			{
				Interval   *iv = palloc0(sizeof(Interval));
				int64		v = lt_array_int64(a, i);

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
			appendStringInfo(buf, INT64_FORMAT, lt_array_int64(a, i));
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
			{
				char		dec[LT_DECIMAL_BUFLEN];

				lt_decimal_format(a->values + i * f->byte_width, f->byte_width, f->scale, dec);
				appendStringInfoString(buf, dec);
			}
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

void
lt_conv_bind_blob(LtConv *conv, lt_dataset *ds, const Lt__Pb__DataFragment *frag)
{
	LtBlobSource *src;

	if (conv->kind != LT_CONV_BLOB)
		return;
	src = conv->blob_src;
	src->ds = ds;
	if (src->data_file)
		pfree(src->data_file);
	src->data_file = NULL;
	for (size_t j = 0; j < frag->n_files && !src->data_file; j++)
		for (size_t k = 0; k < frag->files[j]->n_fields; k++)
			if (frag->files[j]->fields[k] == conv->field->id)
			{
				src->data_file = MemoryContextStrdup(src->cxt, psprintf("data/%s", frag->files[j]->path));
				break;
			}
}

/* A blob's bytes: located by its descriptor (row i of a), read by range from the file that holds them. */
static Datum
blob_datum(const LtConv *c, const lt_array *a, int64 i, bool *isnull)
{
	const LtBlobSource *src = c->blob_src;
	lt_blob_loc loc;
	lt_error	err;
	lt_code		rc;
	bytea	   *out;
	MemoryContext old;

	if (!src->ds || !src->data_file)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: blob column \"%s\" cannot be read here", c->field->name),
				 errhint("Select the column in a plain scan of the table.")));
	old = lt_alloc_target(CurrentMemoryContext);
	rc = lt_blob_locate(c->field->blob, a, i, src->data_file, &loc, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, psprintf("blob column \"%s\"", c->field->name));
	if (loc.is_null)
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (loc.length > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lt_fdw: a blob of %llu bytes in column \"%s\" is larger than a bytea can hold",
						(unsigned long long) loc.length, c->field->name)));
	out = (bytea *) palloc(VARHDRSZ + loc.length);
	SET_VARSIZE(out, VARHDRSZ + loc.length);
	if (loc.length > 0)
	{
		char	   *path;

		old = lt_alloc_target(CurrentMemoryContext);
		/* an external blob: only under the server's root (lt_blob_external_path), else 0A000 naming the URI */
		if (loc.external)
			rc = lt_blob_external_path(src->ds->store->root, &loc, &path, &err);
		else
			rc = (path = lt_dataset_path(src->ds, loc.path)) ? LT_OK : lt_nomem(&err);
		if (rc == LT_OK)
			rc = lt_blob_read(src->ds->store, path, &loc, (uint8_t *) VARDATA(out), &err);
		lt_alloc_target(old);
		if (rc != LT_OK)
			lt_report(&err, psprintf("blob column \"%s\"", c->field->name));
	}
	return PointerGetDatum(out);
}

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
		case LT_CONV_BLOB:
			return blob_datum(c, a, i, isnull);
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

/* ---- a column of a batch at a time ------------------------------------------------------------ */

/*
 * The common scalar mappings have batch loops: a column of a batch is converted with one type
 * dispatch, in a tight loop per type. They raise no error for a value: they stop at the first slot
 * they cannot convert (out of range, not valid in the database encoding, too long), and the caller
 * converts that slot with lt_conv_datum, which raises the error of the per-value path. Strings are
 * laid out in one block instead of a palloc each; a block of pure ASCII (no high bit, no NUL: valid
 * in every server encoding) is not checked string by string.
 */

/* The slot width a batch loop reads for this field type (0: no batch loop). */
static int
batch_width(lt_type_id t)
{
	switch (t)
	{
		case LT_TYPE_BOOL:
		case LT_TYPE_INT8:
		case LT_TYPE_UINT8:
			return 1;
		case LT_TYPE_INT16:
		case LT_TYPE_UINT16:
			return 2;
		case LT_TYPE_INT32:
		case LT_TYPE_UINT32:
		case LT_TYPE_FLOAT32:
		case LT_TYPE_DATE32:
		case LT_TYPE_TIME32:
			return 4;
		case LT_TYPE_INT64:
		case LT_TYPE_FLOAT64:
		case LT_TYPE_DATE64:
		case LT_TYPE_TIME64:
		case LT_TYPE_TIMESTAMP:
			return 8;
		default:
			return 0;
	}
}

bool
lt_conv_batchable(const LtConv *c)
{
	const lt_field *f = c->field;

	if (c->kind != LT_CONV_SCALAR)
		return false;
	switch (f->type)
	{
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			/* validated, never converted: a UTF8 database (SQL_ASCII checks UTF-8 the same way) */
			return GetDatabaseEncoding() == PG_UTF8 || GetDatabaseEncoding() == PG_SQL_ASCII;
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
		case LT_TYPE_FIXED_BINARY:
			return true;
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_UINT8:
		case LT_TYPE_UINT16:
		case LT_TYPE_UINT32:
			if (c->typid != INT2OID && c->typid != INT4OID && c->typid != INT8OID)
				return false;	/* numeric */
			break;
		default:
			break;
	}
	return batch_width(f->type) > 0 && (f->type == LT_TYPE_BOOL || f->byte_width == batch_width(f->type));
}

/* No byte of s[0, len) is NUL or has its high bit set. */
static bool
ascii_clean(const uint8 *s, int64 len)
{
	const uint64 highs = UINT64CONST(0x8080808080808080);
	const uint64 ones = UINT64CONST(0x0101010101010101);
	uint64		bad = 0;

#ifdef __SSE2__
	{
		/* as signed bytes the clean ones are exactly those > 0: one compare flags NUL and high bytes */
		const __m128i zero = _mm_setzero_si128();
		__m128i		ok = _mm_cmpeq_epi8(zero, zero);

		for (; len >= 64; s += 64, len -= 64)
		{
			ok = _mm_and_si128(ok, _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *) s), zero));
			ok = _mm_and_si128(ok, _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *) (s + 16)), zero));
			ok = _mm_and_si128(ok, _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *) (s + 32)), zero));
			ok = _mm_and_si128(ok, _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *) (s + 48)), zero));
		}
		for (; len >= 16; s += 16, len -= 16)
			ok = _mm_and_si128(ok, _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *) s), zero));
		if (_mm_movemask_epi8(ok) != 0xFFFF)
			return false;
	}
#endif
	for (; len >= 8; s += 8, len -= 8)
	{
		uint64		w;

		memcpy(&w, s, 8);
		bad |= w | ((w - ones) & ~w);
	}
	for (; len > 0; s++, len--)
		bad |= (*s == 0) ? highs : *s;
	return (bad & highs) == 0;
}

/*
 * One value at p as a varlena (*out points to it): a short header up to 126 bytes, else a 4-byte one
 * at 4-byte alignment; the bytes are copied 32 at a time when the source has them. Returns the end.
 */
static inline char *
put_varlena(char *p, const uint8 *src, int64 len, const uint8 *src_end, Datum *out)
{
	char	   *d;

	if (len <= VARATT_SHORT_MAX - VARHDRSZ_SHORT)
	{
		SET_VARSIZE_SHORT(p, VARHDRSZ_SHORT + len);
		d = p + VARHDRSZ_SHORT;
	}
	else
	{
		p = (char *) INTALIGN(p);
		SET_VARSIZE(p, VARHDRSZ + len);
		d = p + VARHDRSZ;
	}
	if (len <= 128 && src + ((len + 31) & ~(int64) 31) <= src_end)
	{
		for (int64 j = 0; j < len; j += 32)
		{
			memcpy(d + j, src + j, 16);
			memcpy(d + j + 16, src + j + 16, 16);
		}
	}
	else
		memcpy(d, src, len);
	*out = PointerGetDatum(p);
	return d + len;
}

/* The value at data[s, s + len) as a varlena in place: its header written into the room before it */
static inline Datum
varlena_in_room(uint8 *data, int64 s, int64 len)
{
	char	   *p;

	if (likely(len <= VARATT_SHORT_MAX - VARHDRSZ_SHORT))
	{
		p = (char *) data + s - VARHDRSZ_SHORT;
		SET_VARSIZE_SHORT(p, VARHDRSZ_SHORT + len);
	}
	else
	{
		p = (char *) data + s - VARHDRSZ;
		SET_VARSIZE(p, VARHDRSZ + len);
	}
	return PointerGetDatum(p);
}

/*
 * Strings (text) or binary values (bytea) of an array with header room (lt_array.h) become varlenas
 * where they are: each header is written into the value's room (a short one up to 126 bytes, else a
 * 4-byte one, which the room's alignment makes 4-byte aligned), and the Datum points into the batch,
 * which lives until the scan moves to the next batch, after the chunk's rows are gone. The room is
 * filled with a byte that passes the ASCII check, so one check covers the chunk's span. An empty
 * value without room (the layout allows it for empty slots) ends the chunk: the per-value path
 * converts it.
 */
static int
batch_varlena_room(const lt_array *a, int64 start, int n, Datum *values, const bool *nulls, int stride, bool text)
{
	const int64 *off = a->offsets;
	uint8	   *data = a->data;		/* the batch is ours: the headers go into its room */
	Size		limit = text ? MaxAllocSize - VARHDRSZ - 1 : MaxAllocSize - VARHDRSZ;
	bool		check;
	int			k;

	if (off[start] < 0 || off[start + n] > a->data_len || off[start + n] < off[start])
	{
		for (k = 0; k < n; k++)
			if (!var_slot_ok(a, start + k))
				break;
		n = k;
		if (n == 0)
			return 0;
	}
	/* values the decoder knew to be plain ASCII (lt_array.ascii_start, ascii_end) are not checked again */
	check = text && (off[start] < a->ascii_start || off[start + n] > a->ascii_end) &&
		!ascii_clean(data + off[start], off[start + n] - off[start]);
	if (!check && a->validity == NULL && (uint64) (off[start + n] - off[start]) <= limit)
	{
		/*
		 * No nulls, nothing to verify, no value too long: the common case in a loop of its own. A
		 * value that starts after its end ends the chunk; so the offsets increase, and every value
		 * lies within the span checked above.
		 */
		int64		end = off[start];

		for (k = 0; k < n; k++)
		{
			int64		s = lt_array_room_start(end);
			int64		len;

			end = off[start + k + 1];
			len = end - s;
			if (unlikely(len < 0))
				return k;
			values[(size_t) k * stride] = varlena_in_room(data, s, len);
		}
		return n;
	}
	for (k = 0; k < n; k++)
	{
		int64		i = start + k;
		int64		s = lt_array_room_start(off[i]);
		int64		len = off[i + 1] - s;

		if (nulls[(size_t) k * stride])
		{
			values[(size_t) k * stride] = (Datum) 0;
			continue;
		}
		if (len < 0 || off[i] < 0 || off[i + 1] > a->data_len || (uint64) len > limit)
			return k;			/* no room, or bad offsets: the per-value path */
		if (check && !pg_verify_mbstr(PG_UTF8, (const char *) data + s, (int) len, true))
			return k;
		values[(size_t) k * stride] = varlena_in_room(data, s, len);
	}
	return n;
}

/*
 * Strings (text) or binary values (bytea) with offsets, into varlenas laid out in one block: short
 * (1-byte) headers up to 126 bytes, as a heap tuple stores them, else 4-byte headers at 4-byte
 * alignment (put_varlena). When the chunk's offsets span a valid range, one pass checks that they
 * increase and copies (32 bytes at a time may write past a value: the next one, or the block's
 * 32 spare bytes, takes them).
 */
static int
batch_varlena(const lt_array *a, int64 start, int n, Datum *values, const bool *nulls, int stride, bool text)
{
	const int64 *off = a->offsets;
	const uint8 *data = a->data;
	const uint8 *data_end;
	Size		limit = text ? MaxAllocSize - VARHDRSZ - 1 : MaxAllocSize - VARHDRSZ;
	int64		span;
	bool		check;
	char	   *p;
	int			k;

	if (n <= 0)
		return 0;
	if (a->room)
		return batch_varlena_room(a, start, n, values, nulls, stride, text);
	span = off[start + n] - off[start];
	if (off[start] < 0 || off[start + n] > a->data_len || span < 0 || (uint64) span > limit)
	{
		/* a slot out of bounds, or a value too long, somewhere: the first one ends the chunk */
		for (k = 0; k < n; k++)
			if (!var_slot_ok(a, start + k) ||
				(!nulls[(size_t) k * stride] && (uint64) (off[start + k + 1] - off[start + k]) > limit))
				break;
		n = k;
		if (n == 0)
			return 0;
		span = off[start + n] - off[start];
	}
	data_end = data + a->data_len;
	check = text && !ascii_clean(data + off[start], span);
	p = MemoryContextAllocHuge(CurrentMemoryContext, (Size) span + (Size) n * (VARHDRSZ + 3) + 32);
	if (!check && a->validity == NULL)
	{
		/* no nulls, nothing to verify: the common case, in a loop of its own */
		for (k = 0; k < n; k++)
		{
			int64		i = start + k;
			int64		len = off[i + 1] - off[i];

			if (len < 0)
				return k;		/* offsets that decrease: the per-value path raises the error */
			p = put_varlena(p, data + off[i], len, data_end, &values[(size_t) k * stride]);
		}
		return n;
	}
	for (k = 0; k < n; k++)
	{
		int64		i = start + k;
		int64		len = off[i + 1] - off[i];
		const uint8 *src = data + off[i];

		if (len < 0)
			return k;
		if (nulls[(size_t) k * stride])
		{
			values[(size_t) k * stride] = (Datum) 0;
			continue;
		}
		if (check && !pg_verify_mbstr(PG_UTF8, (const char *) src, (int) len, true))
			return k;
		p = put_varlena(p, src, len, data_end, &values[(size_t) k * stride]);
	}
	return n;
}

static int
batch_fixed_bytea(const lt_array *a, int64 start, int n, Datum *values, const bool *nulls, int stride)
{
	int64		w = a->field->byte_width;
	Size		each = INTALIGN(VARHDRSZ + w);
	char	   *p;

	if (w < 0 || (Size) w > MaxAllocSize - VARHDRSZ)
		return 0;
	p = MemoryContextAllocHuge(CurrentMemoryContext, Max(each * n, 1));
	for (int k = 0; k < n; k++)
	{
		if (nulls[(size_t) k * stride])
		{
			values[(size_t) k * stride] = (Datum) 0;
			continue;
		}
		SET_VARSIZE(p, VARHDRSZ + w);
		memcpy(VARDATA(p), a->values + (start + k) * w, w);
		values[(size_t) k * stride] = PointerGetDatum(p);
		p += each;
	}
	return n;
}

/* values[k * stride] = EXPR over x, the slot's value as T (null slots hold zero bytes). */
#define BATCH_LOOP(T, EXPR) \
	do { \
		const uint8 *src_ = a->values + start * (int64) sizeof(T); \
		for (k = 0; k < n; k++) \
		{ \
			T			x; \
			memcpy(&x, src_ + (size_t) k * sizeof(T), sizeof(T)); \
			values[(size_t) k * stride] = (EXPR); \
		} \
	} while (0)

/* The same for an integer field, into int2/int4/int8 (the value fits: the type is as wide or wider). */
#define BATCH_INT_LOOP(T) \
	do { \
		if (c->typid == INT8OID) \
			BATCH_LOOP(T, Int64GetDatum((int64) x)); \
		else if (c->typid == INT4OID) \
			BATCH_LOOP(T, Int32GetDatum((int32) x)); \
		else \
			BATCH_LOOP(T, Int16GetDatum((int16) x)); \
	} while (0)

/* A time or timestamp value in unit -> microseconds; false on overflow. */
static inline bool
usec_ok(int64 v, lt_time_unit unit, int64 *us)
{
	switch (unit)
	{
		case LT_UNIT_S:
			return !pg_mul_s64_overflow(v, 1000000, us);
		case LT_UNIT_MS:
			return !pg_mul_s64_overflow(v, 1000, us);
		case LT_UNIT_US:
			*us = v;
			return true;
		case LT_UNIT_NS:
			*us = floor_div(v, 1000);
			return true;
	}
	*us = v;
	return true;
}

int
lt_conv_batch(const LtConv *c, const lt_array *a, int64 start, int n, Datum *values, bool *nulls, int stride,
			  bool nulls_false)
{
	const lt_field *f = c->field;
	int			k;

	if (a == NULL)
	{
		for (k = 0; k < n; k++)
		{
			values[(size_t) k * stride] = (Datum) 0;
			nulls[(size_t) k * stride] = true;
		}
		return n;
	}
	if (a->validity)
		for (k = 0; k < n; k++)
			nulls[(size_t) k * stride] = !a->validity[start + k];
	else if (!nulls_false)
		for (k = 0; k < n; k++)
			nulls[(size_t) k * stride] = false;

	switch (f->type)
	{
		case LT_TYPE_BOOL:
			BATCH_LOOP(uint8, BoolGetDatum(x != 0));
			return n;
		case LT_TYPE_INT8:
			BATCH_INT_LOOP(int8);
			return n;
		case LT_TYPE_UINT8:
			BATCH_INT_LOOP(uint8);
			return n;
		case LT_TYPE_INT16:
			BATCH_INT_LOOP(int16);
			return n;
		case LT_TYPE_UINT16:
			BATCH_INT_LOOP(uint16);
			return n;
		case LT_TYPE_INT32:
			BATCH_INT_LOOP(int32);
			return n;
		case LT_TYPE_UINT32:
			BATCH_INT_LOOP(uint32);
			return n;
		case LT_TYPE_INT64:
			BATCH_INT_LOOP(int64);
			return n;
		case LT_TYPE_FLOAT32:
			if (c->typid == FLOAT4OID)
				BATCH_LOOP(float, Float4GetDatum(x));
			else
				BATCH_LOOP(float, Float8GetDatum((double) x));
			return n;
		case LT_TYPE_FLOAT64:
			BATCH_LOOP(double, Float8GetDatum(x));
			return n;
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
			for (k = 0; k < n; k++)
			{
				int64		days;

				if (nulls[(size_t) k * stride])
				{
					values[(size_t) k * stride] = (Datum) 0;
					continue;
				}
				if (f->type == LT_TYPE_DATE32)
				{
					int32		x;

					memcpy(&x, a->values + (start + k) * 4, 4);
					days = (int64) x - EPOCH_SHIFT_DAYS;
				}
				else
				{
					int64		x;

					memcpy(&x, a->values + (start + k) * 8, 8);
					days = floor_div(x, 86400000) - EPOCH_SHIFT_DAYS;
				}
				if (days < PG_INT32_MIN || days > PG_INT32_MAX || !IS_VALID_DATE((DateADT) days))
					return k;
				values[(size_t) k * stride] = DateADTGetDatum((DateADT) days);
			}
			return n;
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
		case LT_TYPE_TIMESTAMP:
			for (k = 0; k < n; k++)
			{
				int64		v,
							us;

				if (nulls[(size_t) k * stride])
				{
					values[(size_t) k * stride] = (Datum) 0;
					continue;
				}
				if (f->type == LT_TYPE_TIME32)
				{
					int32		x;

					memcpy(&x, a->values + (start + k) * 4, 4);
					v = x;
				}
				else
					memcpy(&v, a->values + (start + k) * 8, 8);
				if (!usec_ok(v, f->unit, &us))
					return k;
				if (f->type == LT_TYPE_TIMESTAMP)
				{
					int64		ts;

					if (pg_sub_s64_overflow(us, (int64) EPOCH_SHIFT_DAYS * USECS_PER_DAY, &ts) ||
						!IS_VALID_TIMESTAMP(ts))
						return k;
					values[(size_t) k * stride] = TimestampGetDatum(ts);
				}
				else
				{
					if (us < 0 || us > USECS_PER_DAY)
						return k;
					values[(size_t) k * stride] = TimeADTGetDatum(us);
				}
			}
			return n;
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			return batch_varlena(a, start, n, values, nulls, stride, true);
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			return batch_varlena(a, start, n, values, nulls, stride, false);
		case LT_TYPE_FIXED_BINARY:
			return batch_fixed_bytea(a, start, n, values, nulls, stride);
		default:
			return 0;			/* not batchable: the caller converts slot by slot */
	}
}
