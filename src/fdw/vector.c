/*
 * vector.c — vector distance operators and functions on real[] and double precision[], with
 * pgvector's spelling and meaning (so that queries written for pgvector run unchanged):
 *
 *   a <-> b   l2_distance(a, b)        Euclidean distance
 *   a <=> b   cosine_distance(a, b)    1 - cosine similarity (NaN when a vector is all zeros)
 *   a <#> b   lt_negative_inner_product(a, b) = -inner_product(a, b)
 *   a <~> b   hamming_distance(a, b)   bits that differ, on smallint[] holding bytes (what
 *                                      fixed_size_list<uint8, N> maps to: Lance's binary vectors)
 *
 * The arrays must be one-dimensional (or empty), of the same length, without NULL items: else an
 * error of class 22 (22000 for the dimensions, 22004 for a NULL item), as pgvector raises.  A NULL
 * argument gives NULL (the functions are STRICT).  The arithmetic is the format library's
 * (vector/lt_vdist.c): the kNN of a scan (knn.c) ranks with these same functions, bit for bit.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "vector.h"
#include "vector/lt_vdist.h"

/* The items of a vector argument: checked as pgvector checks them. */
static const void *
vector_items(ArrayType *a, Oid elemtype, int *dim)
{
	if (ARR_ELEMTYPE(a) != elemtype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lt_fdw: vector array has element type %u, expected %u", ARR_ELEMTYPE(a), elemtype)));
	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("array must be 1-D")));
	if (ARR_HASNULL(a) && array_contains_nulls(a))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array must not contain nulls")));
	*dim = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
	return ARR_DATA_PTR(a);
}

void
ltfdw_vector_dims_error(int a, int b)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("different vector dimensions %d and %d", a, b)));
}

static double
distance(FunctionCallInfo fcinfo, lt_vmetric m, bool f8)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	int			na,
				nb;
	const void *x = vector_items(a, f8 ? FLOAT8OID : FLOAT4OID, &na);
	const void *y = vector_items(b, f8 ? FLOAT8OID : FLOAT4OID, &nb);

	if (na != nb)
		ltfdw_vector_dims_error(na, nb);
	return f8 ? lt_vdist_f64(m, x, y, na) : lt_vdist_f32(m, x, y, na);
}

#define LT_VECTOR_FN(sqlname, metric, f8) \
	PG_FUNCTION_INFO_V1(sqlname); \
	Datum sqlname(PG_FUNCTION_ARGS) { PG_RETURN_FLOAT8(distance(fcinfo, metric, f8)); }

LT_VECTOR_FN(lt_l2_distance_f4, LT_VMETRIC_L2, false)
LT_VECTOR_FN(lt_cosine_distance_f4, LT_VMETRIC_COSINE, false)
LT_VECTOR_FN(lt_negative_inner_product_f4, LT_VMETRIC_NEG_DOT, false)
LT_VECTOR_FN(lt_inner_product_f4, LT_VMETRIC_DOT, false)
LT_VECTOR_FN(lt_l2_distance_f8, LT_VMETRIC_L2, true)
LT_VECTOR_FN(lt_cosine_distance_f8, LT_VMETRIC_COSINE, true)
LT_VECTOR_FN(lt_negative_inner_product_f8, LT_VMETRIC_NEG_DOT, true)
LT_VECTOR_FN(lt_inner_product_f8, LT_VMETRIC_DOT, true)

uint8 *
ltfdw_vector_u8_items(ArrayType *a, uint32 *dim)
{
	int			n;
	const int16 *v = vector_items(a, INT2OID, &n);
	uint8	   *out = palloc(Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		if (v[i] < 0 || v[i] > 255)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("binary vector item %d is out of range for uint8", v[i])));
		out[i] = (uint8) v[i];
	}
	*dim = (uint32) n;
	return out;
}

PG_FUNCTION_INFO_V1(lt_hamming_distance_u8);
Datum
lt_hamming_distance_u8(PG_FUNCTION_ARGS)
{
	uint32		na,
				nb;
	uint8	   *x = ltfdw_vector_u8_items(PG_GETARG_ARRAYTYPE_P(0), &na);
	uint8	   *y = ltfdw_vector_u8_items(PG_GETARG_ARRAYTYPE_P(1), &nb);
	double		d;

	if (na != nb)
		ltfdw_vector_dims_error((int) na, (int) nb);
	d = lt_vdist_hamming(x, y, na);
	pfree(x);
	pfree(y);
	PG_RETURN_FLOAT8(d);
}
