/*
 * Unit tests of lt_filter: every operator on every scalar type against an
 * exact oracle (Postgres semantics: NULL is UNKNOWN, NaN is largest and
 * equal to itself, bytes compare bytewise), cross-type literals, IN lists,
 * three-valued AND/OR/NOT, parameters, rendering, and late materialization
 * through the fragment scanner on a small real dataset (test/data/filter_scan,
 * made by `node test/interop/ref.mjs make` from test/data/filter_scan.spec.json).
 *
 * A predicate P is checked as a string of T/F/N per row: T where P passes, F
 * where NOT P passes, N where neither does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_filter.h"
#include "table/lt_scan.h"
#include "file/lt_file_cache.h"
#include "proto/lt_table.pb-c.h"
#include "unit.h"

static lt_error err;

typedef __int128 i128;

/* ------------------------------------------------------------------ helpers */

static lt_field *
mkfield(const char *name, const char *type)
{
	lt_field   *f = calloc(1, sizeof(lt_field));

	f->name = strdup(name);
	f->id = 0;
	f->parent_id = -1;
	f->nullable = true;
	CHECK_OK(lt_parse_logical_type(type, f, &err), err);
	return f;
}

static void
freefield(lt_field *f)
{
	free(f->name);
	lt_free(f->timezone);
	free(f);
}

/* An array of n fixed-width slots from raw values; valid NULL = all valid, else "1"/"0" per slot. */
static lt_array *
mkfixed(const lt_field *f, int64_t n, const void *values, const char *valid)
{
	lt_array   *a;

	CHECK_OK(lt_array_new(f, &a, &err), err);
	CHECK_OK(lt_array_reserve(a, n, &err), err);
	memcpy(a->values, values, (size_t) (n * f->byte_width));
	if (valid)
	{
		CHECK_OK(lt_array_ensure_validity(a, &err), err);
		for (int64_t i = 0; i < n; i++)
		{
			a->validity[i] = valid[i] == '1';
			a->null_count += valid[i] != '1';
			if (valid[i] != '1')
				memset(a->values + i * f->byte_width, 0, (size_t) f->byte_width);
		}
	}
	a->length = n;
	return a;
}

/* A utf8/binary array; NULL strings are null slots. */
static lt_array *
mkstrings(const lt_field *f, int64_t n, const char *const *s, const size_t *lens)
{
	lt_array   *a;

	CHECK_OK(lt_array_new(f, &a, &err), err);
	CHECK_OK(lt_array_reserve(a, n, &err), err);
	for (int64_t i = 0; i < n; i++)
	{
		size_t		l = s[i] ? (lens ? lens[i] : strlen(s[i])) : 0;

		if (!s[i])
		{
			CHECK_OK(lt_array_ensure_validity(a, &err), err);
			a->validity[i] = 0;
			a->null_count++;
		}
		else if (a->validity)
			a->validity[i] = 1;
		CHECK_OK(lt_array_reserve_data(a, (int64_t) l, &err), err);
		if (l)
			memcpy(a->data + a->data_len, s[i], l);
		a->data_len += (int64_t) l;
		a->offsets[i + 1] = a->data_len;
		a->length = i + 1;
	}
	return a;
}

static lt_value
vint(int64_t i)
{
	lt_value	v = {.kind = LT_VALUE_INT};

	v.v.i = i;
	return v;
}

static lt_value
vuint(uint64_t u)
{
	lt_value	v = {.kind = LT_VALUE_UINT};

	v.v.u = u;
	return v;
}

static lt_value
vfloat(double d)
{
	lt_value	v = {.kind = LT_VALUE_FLOAT};

	v.v.f = d;
	return v;
}

static lt_value
vdec(i128 x, int scale)
{
	lt_value	v = {.kind = LT_VALUE_DECIMAL};

	v.v.dec = x;
	v.scale = scale;
	return v;
}

static lt_value
vbytes(const char *s)
{
	lt_value	v = {.kind = LT_VALUE_BYTES};

	v.v.bytes.ptr = (const uint8_t *) s;
	v.v.bytes.len = strlen(s);
	return v;
}

static lt_value
vtemporal(lt_value_kind k, int64_t i, lt_time_unit u)
{
	lt_value	v = {.kind = k};

	v.v.i = i;
	v.unit = u;
	return v;
}

static lt_value
vbool(bool b)
{
	lt_value	v = {.kind = LT_VALUE_BOOL};

	v.v.b = b;
	return v;
}

static const lt_value vnull = {.kind = LT_VALUE_NULL};

/* T/F/N per row of predicate e over cols. */
static void
tri(lt_filter *f, lt_expr *e, lt_array *const *cols, int64_t n, char *out)
{
	const uint8_t *m;
	lt_expr    *ne = lt_expr_not(f, e, &err);

	memset(out, 'N', (size_t) n);
	out[n] = '\0';
	CHECK_OK(lt_filter_set_root(f, e, &err), err);
	CHECK_OK(lt_filter_eval_mask(f, cols, n, &m, &err), err);
	for (int64_t i = 0; m && i < n; i++)
		if (m[i])
			out[i] = 'T';
	CHECK(ne != NULL);
	CHECK_OK(lt_filter_set_root(f, ne, &err), err);
	CHECK_OK(lt_filter_eval_mask(f, cols, n, &m, &err), err);
	for (int64_t i = 0; m && i < n; i++)
		if (m[i])
		{
			CHECK(out[i] == 'N');	/* never both */
			out[i] = 'F';
		}
}

/* tri() of `column 0 OP v`. */
static void
tri_cmp(lt_filter *f, lt_cmp_op op, const lt_value *v, lt_array *const *cols, int64_t n, char *out)
{
	lt_expr    *e = lt_expr_cmp(f, op, lt_expr_column(f, 0, &err), lt_expr_const(f, v, &err), &err);

	CHECK(e != NULL);
	if (!e)
	{
		fprintf(stderr, "  %s\n", err.msg);
		memset(out, '?', (size_t) n);
		out[n] = '\0';
		return;
	}
	tri(f, e, cols, n, out);
}

#define CHECK_TRI(got, want) do { unit_checks++; if (strcmp((got), (want)) != 0) { unit_failures++; \
	fprintf(stderr, "FAIL %s (%s:%d): got %s, want %s\n", unit_current, __FILE__, __LINE__, (got), (want)); } } while (0)

static bool
op_holds(lt_cmp_op op, int sign)
{
	switch (op)
	{
		case LT_CMP_EQ:
			return sign == 0;
		case LT_CMP_NE:
			return sign != 0;
		case LT_CMP_LT:
			return sign < 0;
		case LT_CMP_LE:
			return sign <= 0;
		case LT_CMP_GT:
			return sign > 0;
		default:
			return sign >= 0;
	}
}

/* Postgres float8 ordering: NaN largest and equal to itself. */
static int
pg_float_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a < b ? -1 : a > b;
}

static int
sign128(i128 a, i128 b)
{
	return a < b ? -1 : a > b;
}

static i128
p10(int n)
{
	i128		r = 1;

	while (n-- > 0)
		r *= 10;
	return r;
}

/* ------------------------------------------------------------------ integer types */

static uint64_t rng = 88172645463325252ULL;

static uint64_t
next_rand(void)
{
	return unit_xorshift(&rng);
}

/*
 * Sign of a / 10^sa - b / 10^sb, exactly: scale the coarser one up; if that
 * overflows, its magnitude (>= 2^127) beats the other side.
 */
static int
cmp_scaled(i128 a, int sa, i128 b, int sb)
{
	i128		x;

	if (sa <= sb)
		return __builtin_mul_overflow(a, p10(sb - sa), &x) ? (a > 0 ? 1 : -1) : sign128(x, b);
	return __builtin_mul_overflow(b, p10(sa - sb), &x) ? (b > 0 ? -1 : 1) : sign128(a, x);
}

/* Exact sign of (column value c) vs literal v; c is a plain integer. */
static int
int_vs(i128 c, const lt_value *v)
{
	switch (v->kind)
	{
		case LT_VALUE_INT:
			return sign128(c, v->v.i);
		case LT_VALUE_UINT:
			return sign128(c, v->v.u);
		case LT_VALUE_DECIMAL:
			return cmp_scaled(c, 0, v->v.dec, v->scale);
		case LT_VALUE_FLOAT:
			return pg_float_cmp((double) c, v->v.f);
		default:
			return 0;
	}
}

TEST(int_types_every_op)
{
	static const char *types[] = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"};
	enum { N = 96 };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
	{
		lt_field   *fld = mkfield("x", types[t]);
		int			w = fld->byte_width;
		bool		sgn = types[t][0] == 'i';
		i128		min = sgn ? -((i128) 1 << (8 * w - 1)) : 0;
		i128		max = sgn ? ((i128) 1 << (8 * w - 1)) - 1 : ((i128) 1 << (8 * w)) - 1;
		i128		vals[N];
		uint8_t		raw[N * 8];
		char		valid[N + 1];
		lt_value	lits[24];
		int			nl = 0;
		lt_array   *a;
		lt_filter  *f;

		for (int i = 0; i < N; i++)
		{
			i128		x;

			if (i < 6)
				x = (i128[]) {min, max, 0, 1, min + 1, max - 1}[i];
			else if (i < 40)
				x = (i128) (next_rand() % 21) - 10;	/* many equal values */
			else
				x = min + (i128) (next_rand() % (uint64_t) ((max - min) > (i128) UINT64_MAX - 1 ? UINT64_MAX : (uint64_t) (max - min + 1)));
			if (x < min)
				x = min;
			if (x > max)
				x = max;
			vals[i] = x;
			valid[i] = i % 7 == 3 ? '0' : '1';
			memcpy(raw + i * w, &x, (size_t) w);	/* little endian */
		}
		valid[N] = '\0';
		a = mkfixed(fld, N, raw, valid);
		lits[nl++] = vint(0);
		lits[nl++] = vint(-1);
		lits[nl++] = vint(5);
		lits[nl++] = vint(INT64_MAX);
		lits[nl++] = vint(INT64_MIN);
		lits[nl++] = vint((int64_t) (max > INT64_MAX ? INT64_MAX : max));
		lits[nl++] = vint((int64_t) (min < INT64_MIN ? INT64_MIN : min));
		lits[nl++] = vint((int64_t) (max > INT64_MAX ? INT64_MAX : max) - 1);
		lits[nl++] = vuint(UINT64_MAX);
		lits[nl++] = vuint(3);
		lits[nl++] = vdec(55, 1);		/* 5.5 */
		lits[nl++] = vdec(-55, 1);
		lits[nl++] = vdec(500, 2);		/* 5.00 */
		lits[nl++] = vdec(-1, 38);
		lits[nl++] = vfloat(2.5);
		lits[nl++] = vfloat(-3.0);
		lits[nl++] = vfloat(NAN);
		lits[nl++] = vfloat(INFINITY);
		lits[nl++] = vfloat(-INFINITY);
		lits[nl++] = vfloat(1e30);
		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
		for (int l = 0; l < nl; l++)
			for (int op = LT_CMP_EQ; op <= LT_CMP_GE; op++)
			{
				char		got[N + 1], want[N + 1];

				for (int i = 0; i < N; i++)
					want[i] = valid[i] == '0' ? 'N' : op_holds(op, int_vs(vals[i], &lits[l])) ? 'T' : 'F';
				want[N] = '\0';
				tri_cmp(f, (lt_cmp_op) op, &lits[l], &a, N, got);
				if (strcmp(got, want) != 0)
					fprintf(stderr, "  type %s literal #%d op %d\n", types[t], l, op);
				CHECK_TRI(got, want);
			}
		/* literal on the left commutes: 5 > x is x < 5 */
		{
			lt_value	five = vint(5);
			char		got[N + 1], want[N + 1];
			lt_expr    *e = lt_expr_cmp(f, LT_CMP_GT, lt_expr_const(f, &five, &err), lt_expr_column(f, 0, &err), &err);

			for (int i = 0; i < N; i++)
				want[i] = valid[i] == '0' ? 'N' : vals[i] < 5 ? 'T' : 'F';
			want[N] = '\0';
			tri(f, e, &a, N, got);
			CHECK_TRI(got, want);
		}
		/* NULL literal: UNKNOWN everywhere */
		{
			char		got[N + 1], want[N + 1];

			memset(want, 'N', N);
			want[N] = '\0';
			tri_cmp(f, LT_CMP_EQ, &vnull, &a, N, got);
			CHECK_TRI(got, want);
		}
		lt_filter_free(f);
		lt_array_free(a);
		freefield(fld);
	}
}

/* ------------------------------------------------------------------ floats */

static uint16_t
f16_bits(double d)
{
	/* the few values used below, exactly */
	if (isnan(d))
		return 0x7e00;
	if (isinf(d))
		return d > 0 ? 0x7c00 : 0xfc00;
	if (d == 0)
		return signbit(d) ? 0x8000 : 0;
	if (d == -1.5)
		return 0xbe00;
	if (d == 2.5)
		return 0x4100;
	if (d == 65504)
		return 0x7bff;
	if (d == ldexp(1, -24))
		return 0x0001;
	return 0x3c00;				/* 1.0 */
}

TEST(float_types_nan_order)
{
	static const char *types[] = {"halffloat", "float", "double"};
	const double vals[] = {NAN, -INFINITY, -1.5, -0.0, 0.0, 2.5, INFINITY, 1.0, 65504, ldexp(1, -24), 0.0, NAN};
	const char *valid = "111111111101";
	enum { N = 12 };
	const double lits[] = {0.0, -0.0, 2.5, 1.0, NAN, INFINITY, -INFINITY, 0.1, ldexp(1, -24), 65504, -1.5};

	for (size_t t = 0; t < 3; t++)
	{
		lt_field   *fld = mkfield("x", types[t]);
		uint8_t		raw[N * 8];
		lt_array   *a;
		lt_filter  *f;

		for (int i = 0; i < N; i++)
		{
			if (t == 0)
			{
				uint16_t	h = f16_bits(vals[i]);

				memcpy(raw + i * 2, &h, 2);
			}
			else if (t == 1)
			{
				float		x = (float) vals[i];

				memcpy(raw + i * 4, &x, 4);
			}
			else
				memcpy(raw + i * 8, &vals[i], 8);
		}
		a = mkfixed(fld, N, raw, valid);
		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
		for (size_t l = 0; l < sizeof(lits) / sizeof(lits[0]); l++)
			for (int op = LT_CMP_EQ; op <= LT_CMP_GE; op++)
			{
				char		got[N + 1], want[N + 1];
				lt_value	v = vfloat(lits[l]);

				for (int i = 0; i < N; i++)
					want[i] = valid[i] == '0' ? 'N' : op_holds(op, pg_float_cmp(vals[i], lits[l])) ? 'T' : 'F';
				want[N] = '\0';
				tri_cmp(f, (lt_cmp_op) op, &v, &a, N, got);
				if (strcmp(got, want) != 0)
					fprintf(stderr, "  type %s literal %g op %d\n", types[t], lits[l], op);
				CHECK_TRI(got, want);
			}
		/* an int literal is compared as a double */
		{
			lt_value	v = vint(1);
			char		got[N + 1];

			tri_cmp(f, LT_CMP_GE, &v, &a, N, got);
			CHECK_TRI(got, "TFFFFTTTTFNT");
		}
		lt_filter_free(f);
		lt_array_free(a);
		freefield(fld);
	}
	/* float32 column, float8 literal: compared in double, as float48 operators do */
	{
		lt_field   *fld = mkfield("x", "float");
		float		v[2] = {0.1f, 0.5f};
		lt_array   *a = mkfixed(fld, 2, v, NULL);
		lt_filter  *f;
		lt_value	lit = vfloat(0.1);
		char		got[3];

		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
		tri_cmp(f, LT_CMP_EQ, &lit, &a, 2, got);
		CHECK_TRI(got, "FF");	/* (double) 0.1f != 0.1 */
		lit = vfloat((double) 0.1f);
		tri_cmp(f, LT_CMP_EQ, &lit, &a, 2, got);
		CHECK_TRI(got, "TF");
		lt_filter_free(f);
		lt_array_free(a);
		freefield(fld);
	}
}

/* ------------------------------------------------------------------ decimals */

TEST(decimal_scales)
{
	lt_field   *fld = mkfield("d", "decimal:128:38:2");
	i128		vals[] = {123, -5, 0, 100000, 0, p10(37) * 9, -p10(37) * 9, 124, 122};
	const char *valid = "111101111";
	enum { N = 9 };
	lt_array   *a = mkfixed(fld, N, vals, valid);
	lt_filter  *f;
	struct
	{
		lt_value	v;
		int			num_scale;	/* literal as num / 10^num_scale */
	}			lits[] = {
		{vdec(123, 2)}, {vdec(12300, 4)}, {vdec(1235, 3)}, {vdec(1225, 3)}, {vint(1000)}, {vint(0)},
		{vdec(-5, 2)}, {vdec(p10(37), 0)}, {vdec(-p10(37), 0)}, {vint(INT64_MAX)}, {vint(INT64_MIN)},
		{vuint(UINT64_MAX)}, {vdec(1, 38)},
	};

	CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
	for (size_t l = 0; l < sizeof(lits) / sizeof(lits[0]); l++)
		for (int op = LT_CMP_EQ; op <= LT_CMP_GE; op++)
		{
			char		got[N + 1], want[N + 1];
			const lt_value *v = &lits[l].v;

			for (int i = 0; i < N; i++)
			{
				i128		lit = v->kind == LT_VALUE_DECIMAL ? v->v.dec : v->kind == LT_VALUE_INT ? v->v.i : (i128) v->v.u;
				int			s = cmp_scaled(vals[i], 2, lit, v->kind == LT_VALUE_DECIMAL ? v->scale : 0);

				want[i] = valid[i] == '0' ? 'N' : op_holds(op, s) ? 'T' : 'F';
			}
			want[N] = '\0';
			tri_cmp(f, (lt_cmp_op) op, v, &a, N, got);
			if (strcmp(got, want) != 0)
				fprintf(stderr, "  literal #%zu op %d\n", l, op);
			CHECK_TRI(got, want);
		}
	/* no exact float comparison with numeric */
	{
		lt_value	v = vfloat(1.0);

		CHECK(lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_const(f, &v, &err), &err) == NULL);
		CHECK_EQ_INT(err.code, LT_EUNSUPPORTED);
	}
	lt_filter_free(f);
	lt_array_free(a);
	freefield(fld);
}

/* ------------------------------------------------------------------ dates and times */

static int64_t
floor_div64(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && a < 0);
}

TEST(temporal_units)
{
	/* date32 against date and timestamp literals */
	{
		lt_field   *fld = mkfield("dt", "date32:day");
		int32_t		v[] = {-1, 0, 19724, 19725, 0};
		lt_array   *a = mkfixed(fld, 5, v, "11110");
		lt_filter  *f;
		char		got[6];
		lt_value	l;

		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
		l = vtemporal(LT_VALUE_DATE, 19724, LT_UNIT_S);
		tri_cmp(f, LT_CMP_EQ, &l, &a, 5, got);
		CHECK_TRI(got, "FFTFN");
		tri_cmp(f, LT_CMP_LT, &l, &a, 5, got);
		CHECK_TRI(got, "TTFFN");
		/* a microsecond after the midnight of day 19724: that date is below it */
		l = vtemporal(LT_VALUE_TIMESTAMP, 19724LL * 86400000000LL + 1, LT_UNIT_US);
		tri_cmp(f, LT_CMP_EQ, &l, &a, 5, got);
		CHECK_TRI(got, "FFFFN");
		tri_cmp(f, LT_CMP_LT, &l, &a, 5, got);
		CHECK_TRI(got, "TTTFN");
		tri_cmp(f, LT_CMP_GE, &l, &a, 5, got);
		CHECK_TRI(got, "FFFTN");
		l = vtemporal(LT_VALUE_TIMESTAMP, 19724LL * 86400, LT_UNIT_S);
		tri_cmp(f, LT_CMP_EQ, &l, &a, 5, got);
		CHECK_TRI(got, "FFTFN");
		/* infinity */
		l = vtemporal(LT_VALUE_DATE, INT64_MAX, LT_UNIT_S);
		tri_cmp(f, LT_CMP_LT, &l, &a, 5, got);
		CHECK_TRI(got, "TTTTN");
		/* an int literal is not a date */
		l = vint(3);
		CHECK(lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_const(f, &l, &err), &err) == NULL);
		lt_filter_free(f);
		lt_array_free(a);
		freefield(fld);
	}
	/* a finer column is floored to the literal's unit; a coarser one compared exactly */
	{
		static const char *types[] = {"timestamp:ns:-", "timestamp:us:UTC", "timestamp:ms:-", "timestamp:s:-",
		"date64:ms", "time64:ns", "time32:ms", "duration:ns", "duration:s"};
		static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};
		enum { N = 40 };

		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		{
			lt_field   *fld = mkfield("ts", types[t]);
			int64_t		v[N];
			int64_t		cps = fld->type == LT_TYPE_DATE64 ? 1000 : per_sec[fld->unit];	/* column ticks per second */
			lt_value_kind kind = fld->type == LT_TYPE_TIME64 || fld->type == LT_TYPE_TIME32 ? LT_VALUE_TIME :
				fld->type == LT_TYPE_DURATION ? LT_VALUE_DURATION : LT_VALUE_TIMESTAMP;
			lt_array   *a;
			lt_filter  *f;

			for (int i = 0; i < N; i++)
				v[i] = (int64_t) (next_rand() % 4000) - 2000 + (i % 3 == 0 ? 0 : (int64_t) (next_rand() % 3) * 1000);
			if (fld->byte_width == 4)
			{
				int32_t		v32[N];

				for (int i = 0; i < N; i++)
					v32[i] = (int32_t) v[i];
				a = mkfixed(fld, N, v32, NULL);
			}
			else
				a = mkfixed(fld, N, v, NULL);
			CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
			for (int lu = LT_UNIT_S; lu <= LT_UNIT_NS; lu++)
				for (int k = 0; k < 6; k++)
				{
					int64_t		lps = per_sec[lu];
					int64_t		L = (int64_t) (next_rand() % 40) - 20;
					lt_value	lit;

					if (k == 0)
						L = v[next_rand() % N] * lps / cps;	/* often equal */
					lit = vtemporal(kind, L, (lt_time_unit) lu);
					if (fld->type == LT_TYPE_DATE64 && k == 5)
					{
						/* a date literal against date64: floor(ms / 86400000) */
						lit = vtemporal(LT_VALUE_DATE, L / 10, LT_UNIT_S);
					}
					for (int op = LT_CMP_EQ; op <= LT_CMP_GE; op++)
					{
						char		got[N + 1], want[N + 1];

						for (int i = 0; i < N; i++)
						{
							int			s;

							if (lit.kind == LT_VALUE_DATE)
								s = sign128(floor_div64(v[i], 86400000), lit.v.i);
							else if (cps > lps)	/* finer column: floor to the literal's unit */
								s = sign128(floor_div64(v[i], cps / lps), L);
							else	/* coarser: exact */
								s = sign128((i128) v[i] * (lps / cps), L);
							want[i] = op_holds(op, s) ? 'T' : 'F';
						}
						want[N] = '\0';
						tri_cmp(f, (lt_cmp_op) op, &lit, &a, N, got);
						if (strcmp(got, want) != 0)
							fprintf(stderr, "  %s literal %lld unit %d op %d\n", types[t], (long long) L, lu, op);
						CHECK_TRI(got, want);
					}
				}
			lt_filter_free(f);
			lt_array_free(a);
			freefield(fld);
		}
	}
}

/* ------------------------------------------------------------------ bytes */

TEST(bytes_order)
{
	static const char *types[] = {"string", "large_string", "binary", "large_binary"};
	const char *s[] = {"", "a", "ab", "b", "\xff", NULL, "a\0b", "abc", "aa"};
	const size_t lens[] = {0, 1, 2, 1, 1, 0, 3, 3, 2};
	enum { N = 9 };
	const char *lits[] = {"ab", "", "a", "\xff\xff", "abc", "zz"};

	for (size_t t = 0; t < 4; t++)
	{
		lt_field   *fld = mkfield("s", types[t]);
		lt_array   *a = mkstrings(fld, N, s, lens);
		lt_filter  *f;

		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
		for (size_t l = 0; l < sizeof(lits) / sizeof(lits[0]); l++)
			for (int op = LT_CMP_EQ; op <= LT_CMP_GE; op++)
			{
				char		got[N + 1], want[N + 1];
				lt_value	v = vbytes(lits[l]);

				for (int i = 0; i < N; i++)
				{
					size_t		ll = strlen(lits[l]);
					int			c = s[i] ? memcmp(s[i], lits[l], lens[i] < ll ? lens[i] : ll) : 0;

					if (c == 0)
						c = lens[i] < ll ? -1 : lens[i] > ll;
					want[i] = !s[i] ? 'N' : op_holds(op, c) ? 'T' : 'F';
				}
				want[N] = '\0';
				tri_cmp(f, (lt_cmp_op) op, &v, &a, N, got);
				CHECK_TRI(got, want);
			}
		lt_filter_free(f);
		lt_array_free(a);
		freefield(fld);
	}
	/* fixed-size binary */
	{
		lt_field   *fld = mkfield("h", "fixed_size_binary:2");
		lt_array   *a = mkfixed(fld, 4, "aaabbaab", "1101");
		lt_filter  *f;
		lt_value	v = vbytes("ab");
		char		got[5];

		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fld, &f, &err), err);
		tri_cmp(f, LT_CMP_EQ, &v, &a, 4, got);
		CHECK_TRI(got, "FTNT");
		tri_cmp(f, LT_CMP_GT, &v, &a, 4, got);
		CHECK_TRI(got, "FFNF");
		tri_cmp(f, LT_CMP_LT, &v, &a, 4, got);
		CHECK_TRI(got, "TFNF");
		v = vint(1);
		CHECK(lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_const(f, &v, &err), &err) == NULL);
		CHECK_EQ_INT(err.code, LT_EUNSUPPORTED);
		lt_filter_free(f);
		lt_array_free(a);
		freefield(fld);
	}
}

/* ------------------------------------------------------------------ bool, AND / OR / NOT */

TEST(three_valued_logic)
{
	lt_field   *fa = mkfield("a", "bool");
	lt_field   *fb = mkfield("b", "bool");
	const lt_field *cols[2] = {fa, fb};
	/* a, b over every pair of T/F/N */
	uint8_t		av[9] = {1, 1, 1, 0, 0, 0, 0, 0, 0};
	uint8_t		bv[9] = {1, 0, 0, 1, 0, 0, 1, 0, 0};
	lt_array   *arrs[2];
	lt_filter  *f;
	char		got[10];
	lt_expr    *a, *b, *args[3];

	arrs[0] = mkfixed(fa, 9, av, "111111000");
	arrs[1] = mkfixed(fb, 9, bv, "110110110");
	CHECK_OK(lt_filter_new(2, cols, &f, &err), err);
	a = lt_expr_column(f, 0, &err);
	b = lt_expr_column(f, 1, &err);
	/* rows: (T,T) (T,F) (T,N) (F,T) (F,F) (F,N) (N,T) (N,F) (N,N) */
	tri(f, a, arrs, 9, got);
	CHECK_TRI(got, "TTTFFFNNN");
	args[0] = a;
	args[1] = b;
	tri(f, lt_expr_and(f, 2, args, &err), arrs, 9, got);
	CHECK_TRI(got, "TFNFFFNFN");
	tri(f, lt_expr_or(f, 2, args, &err), arrs, 9, got);
	CHECK_TRI(got, "TTTTFNTNN");
	tri(f, lt_expr_not(f, lt_expr_and(f, 2, args, &err), &err), arrs, 9, got);
	CHECK_TRI(got, "FTNTTTNTN");
	tri(f, lt_expr_not(f, lt_expr_not(f, b, &err), &err), arrs, 9, got);
	CHECK_TRI(got, "TFNTFNTFN");
	/* a = true, b <> false, comparisons of bools */
	{
		lt_value	tv = vbool(true), fv = vbool(false);

		tri(f, lt_expr_cmp(f, LT_CMP_EQ, a, lt_expr_const(f, &tv, &err), &err), arrs, 9, got);
		CHECK_TRI(got, "TTTFFFNNN");
		tri(f, lt_expr_cmp(f, LT_CMP_GT, b, lt_expr_const(f, &fv, &err), &err), arrs, 9, got);
		CHECK_TRI(got, "TFNTFNTFN");
		tri(f, lt_expr_cmp(f, LT_CMP_LT, b, lt_expr_const(f, &tv, &err), &err), arrs, 9, got);
		CHECK_TRI(got, "FTNFTNFTN");
		/* a constant TRUE / NULL inside AND */
		args[2] = lt_expr_const(f, &tv, &err);
		tri(f, lt_expr_and(f, 3, args, &err), arrs, 9, got);
		CHECK_TRI(got, "TFNFFFNFN");
		args[2] = lt_expr_const(f, &vnull, &err);
		tri(f, lt_expr_and(f, 3, args, &err), arrs, 9, got);
		CHECK_TRI(got, "NFNFFFNFN");
		tri(f, lt_expr_or(f, 3, args, &err), arrs, 9, got);
		CHECK_TRI(got, "TTTTNNTNN");
	}
	/* IS [NOT] NULL */
	tri(f, lt_expr_is_null(f, b, false, &err), arrs, 9, got);
	CHECK_TRI(got, "FFTFFTFFT");
	tri(f, lt_expr_is_null(f, b, true, &err), arrs, 9, got);
	CHECK_TRI(got, "TTFTTFTTF");
	/* a column without validity */
	lt_free(arrs[0]->validity);
	arrs[0]->validity = NULL;
	tri(f, lt_expr_is_null(f, a, false, &err), arrs, 9, got);
	CHECK_TRI(got, "FFFFFFFFF");
	tri(f, lt_expr_is_null(f, a, true, &err), arrs, 9, got);
	CHECK_TRI(got, "TTTTTTTTT");
	/* a non-boolean argument is refused */
	{
		lt_field   *fi = mkfield("i", "int32");
		lt_filter  *g;
		lt_expr    *c;

		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fi, &g, &err), err);
		c = lt_expr_column(g, 0, &err);
		CHECK(lt_expr_not(g, c, &err) == NULL);
		CHECK_CODE(lt_filter_set_root(g, c, &err), LT_EINVALID);
		CHECK(lt_expr_cmp(g, LT_CMP_EQ, c, c, &err) == NULL);
		CHECK_EQ_INT(err.code, LT_EUNSUPPORTED);
		/* a failed child fails its parent, keeping the child's reason */
		lt_error_set(&err, LT_EUNSUPPORTED, "child");
		CHECK(lt_expr_is_null(g, NULL, false, &err) == NULL);
		CHECK(strcmp(err.msg, "child") == 0);
		lt_filter_free(g);
		freefield(fi);
	}
	lt_filter_free(f);
	lt_array_free(arrs[0]);
	lt_array_free(arrs[1]);
	freefield(fa);
	freefield(fb);
}

/* ------------------------------------------------------------------ IN, BETWEEN */

TEST(in_lists)
{
	lt_field   *fi = mkfield("i", "int32");
	lt_field   *fd = mkfield("d", "double");
	lt_field   *fs = mkfield("s", "string");
	lt_field   *ft = mkfield("t", "timestamp:ns:-");
	lt_field   *fc = mkfield("c", "decimal:128:10:2");
	const lt_field *cols[5] = {fi, fd, fs, ft, fc};
	int32_t		iv[6] = {1, 2, 3, 0, 7, -4};
	double		dv[6] = {1.0, NAN, -0.0, 0, 2.5, 7};
	const char *sv[6] = {"a", "b", NULL, "c", "ab", ""};
	int64_t		tv[6] = {999, 1000, 1999, 2000, -1, 5000};
	i128		cv[6] = {100, 150, 0, 0, 700, -400};
	lt_array   *arrs[5];
	lt_filter  *f;
	char		got[7];
	lt_expr    *items[24];
	lt_value	v;

	arrs[0] = mkfixed(fi, 6, iv, "111011");
	arrs[1] = mkfixed(fd, 6, dv, "111011");
	arrs[2] = mkstrings(fs, 6, sv, NULL);
	arrs[3] = mkfixed(ft, 6, tv, "111111");
	arrs[4] = mkfixed(fc, 6, cv, "111011");
	CHECK_OK(lt_filter_new(5, cols, &f, &err), err);
#define ITEM(k, val) (v = (val), items[k] = lt_expr_const(f, &v, &err))
	ITEM(0, vint(1));
	ITEM(1, vint(7));
	ITEM(2, vint(1));
	tri(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 3, items, &err), arrs, 6, got);
	CHECK_TRI(got, "TFFNTF");
	ITEM(3, vnull);
	tri(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 4, items, &err), arrs, 6, got);
	CHECK_TRI(got, "TNNNTN");
	/* NOT IN with a NULL item is never TRUE */
	tri(f, lt_expr_not(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 4, items, &err), &err), arrs, 6, got);
	CHECK_TRI(got, "FNNNFN");
	/* fractional and out-of-range items cannot match an int column */
	ITEM(0, vdec(15, 1));
	ITEM(1, vint(INT64_MAX));
	ITEM(2, vdec(30, 1));
	tri(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 3, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FFTNFF");
	/* long lists take the binary-search path */
	for (int k = 0; k < 20; k++)
		ITEM(k, vint(k * 3 - 4));	/* -4, -1, 2, 5, 8, ... */
	tri(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 20, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FTFNFT");
	/* an empty list is FALSE even for NULL */
	tri(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 0, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FFFFFF");
	/* floats: NaN is a member, -0 = 0, short and long lists */
	ITEM(0, vfloat(NAN));
	ITEM(1, vfloat(0.0));
	ITEM(2, vfloat(7));
	tri(f, lt_expr_in(f, lt_expr_column(f, 1, &err), 3, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FTTNFT");
	for (int k = 3; k < 20; k++)
		ITEM(k, vfloat(100 + k));
	tri(f, lt_expr_in(f, lt_expr_column(f, 1, &err), 20, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FTTNFT");
	ITEM(0, vfloat(1.0));
	tri(f, lt_expr_in(f, lt_expr_column(f, 1, &err), 20, items, &err), arrs, 6, got);
	CHECK_TRI(got, "TFTNFT");
	/* an int column with float items */
	tri(f, lt_expr_in(f, lt_expr_column(f, 0, &err), 3, items, &err), arrs, 6, got);
	CHECK_TRI(got, "TFFNTF");
	/* strings */
	ITEM(0, vbytes("ab"));
	ITEM(1, vbytes(""));
	ITEM(2, vbytes("c"));
	ITEM(3, vbytes("ab"));
	tri(f, lt_expr_in(f, lt_expr_column(f, 2, &err), 4, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FFNTTT");
	for (int k = 4; k < 20; k++)
		ITEM(k, vbytes(k % 2 ? "zz" : "b"));
	tri(f, lt_expr_in(f, lt_expr_column(f, 2, &err), 20, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FTNTTT");
	/* a finer timestamp against microsecond items: floor(ns / 1000) in {1, 5} */
	ITEM(0, vtemporal(LT_VALUE_TIMESTAMP, 1, LT_UNIT_US));
	ITEM(1, vtemporal(LT_VALUE_TIMESTAMP, 5, LT_UNIT_US));
	ITEM(2, vtemporal(LT_VALUE_TIMESTAMP, 2000, LT_UNIT_NS));
	tri(f, lt_expr_in(f, lt_expr_column(f, 3, &err), 2, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FTTFFT");
	tri(f, lt_expr_in(f, lt_expr_column(f, 3, &err), 3, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FTTTFT");
	/* decimals with another scale */
	ITEM(0, vdec(15, 1));
	ITEM(1, vint(7));
	ITEM(2, vdec(-4000, 3));
	ITEM(3, vdec(1001, 3));
	tri(f, lt_expr_in(f, lt_expr_column(f, 4, &err), 4, items, &err), arrs, 6, got);
	CHECK_TRI(got, "FTFNTT");
	/* = ANY($1) */
	{
		lt_expr    *e = lt_expr_in_param(f, lt_expr_column(f, 0, &err), 1, LT_VALUE_INT, &err);
		lt_value	vals[3] = {vint(3), vint(-4), vint(3)};
		const uint8_t *m;

		CHECK(e != NULL);
		CHECK_OK(lt_filter_set_root(f, e, &err), err);
		CHECK_CODE(lt_filter_eval_mask(f, arrs, 6, &m, &err), LT_EINVALID);	/* not set yet */
		CHECK_OK(lt_filter_set_param_array(f, 1, 3, vals, &err), err);
		tri(f, e, arrs, 6, got);
		CHECK_TRI(got, "FFTNFT");
		CHECK_OK(lt_filter_set_param_array(f, 1, 0, vals, &err), err);
		tri(f, e, arrs, 6, got);
		CHECK_TRI(got, "FFFFFF");
		CHECK_OK(lt_filter_set_param(f, 1, &vnull, &err), err);
		tri(f, e, arrs, 6, got);
		CHECK_TRI(got, "NNNNNN");
		v = vint(3);
		CHECK_CODE(lt_filter_set_param(f, 1, &v, &err), LT_EINVALID);
		vals[1] = vfloat(1);
		CHECK_CODE(lt_filter_set_param_array(f, 1, 3, vals, &err), LT_EINVALID);
		CHECK(lt_expr_in_param(f, lt_expr_column(f, 0, &err), 2, LT_VALUE_BYTES, &err) == NULL);
	}
#undef ITEM
	lt_filter_free(f);
	for (int i = 0; i < 5; i++)
		lt_array_free(arrs[i]);
	freefield(fi);
	freefield(fd);
	freefield(fs);
	freefield(ft);
	freefield(fc);
}

TEST(between)
{
	lt_field   *fi = mkfield("i", "int64");
	lt_field   *fs = mkfield("s", "string");
	const lt_field *cols[2] = {fi, fs};
	int64_t		iv[6] = {1, 2, 3, 0, 7, -4};
	const char *sv[6] = {"a", "b", NULL, "c", "ab", ""};
	lt_array   *arrs[2];
	lt_filter  *f;
	char		got[7];
	lt_value	lo, hi;

	arrs[0] = mkfixed(fi, 6, iv, "111011");
	arrs[1] = mkstrings(fs, 6, sv, NULL);
	CHECK_OK(lt_filter_new(2, cols, &f, &err), err);
	lo = vint(1);
	hi = vint(3);
	tri(f, lt_expr_between(f, lt_expr_column(f, 0, &err), lt_expr_const(f, &lo, &err), lt_expr_const(f, &hi, &err), &err),
		arrs, 6, got);
	CHECK_TRI(got, "TTTNFF");
	/* empty range */
	tri(f, lt_expr_between(f, lt_expr_column(f, 0, &err), lt_expr_const(f, &hi, &err), lt_expr_const(f, &lo, &err), &err),
		arrs, 6, got);
	CHECK_TRI(got, "FFFNFF");
	/* a NULL bound: FALSE below the other bound, else UNKNOWN */
	tri(f, lt_expr_between(f, lt_expr_column(f, 0, &err), lt_expr_const(f, &lo, &err), lt_expr_const(f, &vnull, &err), &err),
		arrs, 6, got);
	CHECK_TRI(got, "NNNNNF");
	/* unbounded after clamping: an int64 column, decimal bounds */
	lo = vdec(-1000, 1);
	hi = vdec(25, 1);
	tri(f, lt_expr_between(f, lt_expr_column(f, 0, &err), lt_expr_const(f, &lo, &err), lt_expr_const(f, &hi, &err), &err),
		arrs, 6, got);
	CHECK_TRI(got, "TTFNFT");
	lo = vbytes("a");
	hi = vbytes("b");
	tri(f, lt_expr_between(f, lt_expr_column(f, 1, &err), lt_expr_const(f, &lo, &err), lt_expr_const(f, &hi, &err), &err),
		arrs, 6, got);
	CHECK_TRI(got, "TTNFTF");
	lt_filter_free(f);
	lt_array_free(arrs[0]);
	lt_array_free(arrs[1]);
	freefield(fi);
	freefield(fs);
}

/* ------------------------------------------------------------------ parameters */

TEST(parameters)
{
	lt_field   *fi = mkfield("x", "int32");
	int32_t		iv[5] = {1, 10, 100, 0, -5};
	lt_array   *a = mkfixed(fi, 5, iv, "11101");
	lt_filter  *f;
	lt_expr    *e;
	lt_value	v;
	char		got[6];
	uint32_t	sel[5];
	int64_t		n_sel;

	CHECK_OK(lt_filter_new(1, (const lt_field *const *) &fi, &f, &err), err);
	e = lt_expr_cmp(f, LT_CMP_GT, lt_expr_column(f, 0, &err), lt_expr_param(f, 1, LT_VALUE_INT, &err), &err);
	CHECK(e != NULL);
	CHECK_OK(lt_filter_set_root(f, e, &err), err);
	CHECK_CODE(lt_filter_eval(f, &a, 5, sel, &n_sel, &err), LT_EINVALID);
	v = vint(5);
	CHECK_OK(lt_filter_set_param(f, 1, &v, &err), err);
	CHECK_OK(lt_filter_eval(f, &a, 5, sel, &n_sel, &err), err);
	CHECK_EQ_INT(n_sel, 2);
	CHECK_EQ_INT(sel[0], 1);
	CHECK_EQ_INT(sel[1], 2);
	/* a new value re-binds */
	v = vint(0);
	CHECK_OK(lt_filter_set_param(f, 1, &v, &err), err);
	CHECK_OK(lt_filter_eval(f, &a, 5, sel, &n_sel, &err), err);
	CHECK_EQ_INT(n_sel, 3);
	tri(f, e, &a, 5, got);
	CHECK_TRI(got, "TTTNF");
	CHECK_OK(lt_filter_set_param(f, 1, &vnull, &err), err);
	tri(f, e, &a, 5, got);
	CHECK_TRI(got, "NNNNN");
	/* kind mismatch, unknown slot, redeclaration with another kind */
	v = vfloat(1);
	CHECK_CODE(lt_filter_set_param(f, 1, &v, &err), LT_EINVALID);
	CHECK_CODE(lt_filter_set_param(f, 7, &v, &err), LT_EINVALID);
	CHECK(lt_expr_param(f, 1, LT_VALUE_FLOAT, &err) == NULL);
	/* a parameter of a kind the column cannot take */
	CHECK(lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_param(f, 2, LT_VALUE_BYTES, &err), &err) == NULL);
	CHECK_EQ_INT(err.code, LT_EUNSUPPORTED);
	/* BETWEEN $3 AND $4 */
	e = lt_expr_between(f, lt_expr_column(f, 0, &err), lt_expr_param(f, 3, LT_VALUE_INT, &err),
						lt_expr_param(f, 4, LT_VALUE_DECIMAL, &err), &err);
	v = vint(1);
	CHECK_OK(lt_filter_set_param(f, 3, &v, &err), err);
	v = vdec(1005, 2);
	CHECK_OK(lt_filter_set_param(f, 4, &v, &err), err);
	tri(f, e, &a, 5, got);
	CHECK_TRI(got, "TTFNF");
	/* no root: every row passes */
	CHECK_OK(lt_filter_set_root(f, NULL, &err), err);
	CHECK_OK(lt_filter_eval(f, &a, 5, sel, &n_sel, &err), err);
	CHECK_EQ_INT(n_sel, 5);
	/* a column of the wrong type or length is refused */
	CHECK_CODE(lt_filter_eval(f, &a, 6, sel, &n_sel, &err), LT_EINVALID);
	lt_filter_free(f);
	lt_array_free(a);
	freefield(fi);
}

/* ------------------------------------------------------------------ rendering */

TEST(render)
{
	lt_field   *fd = mkfield("dt", "date32:day");
	lt_field   *fx = mkfield("x", "int32");
	lt_field   *fs = mkfield("Name", "string");
	lt_field   *ft = mkfield("ts", "timestamp:us:-");
	lt_field   *fc = mkfield("c", "decimal:128:10:2");
	lt_field   *ff = mkfield("f", "double");
	const lt_field *cols[6] = {fd, fx, fs, ft, fc, ff};
	lt_filter  *f;
	lt_expr    *args[4];
	lt_value	v;
	char	   *s;

	CHECK_OK(lt_filter_new(6, cols, &f, &err), err);
	v = vtemporal(LT_VALUE_DATE, 19724, LT_UNIT_S);
	args[0] = lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err), lt_expr_const(f, &v, &err), &err);
	v = vint(10);
	args[1] = lt_expr_cmp(f, LT_CMP_GT, lt_expr_column(f, 1, &err), lt_expr_const(f, &v, &err), &err);
	CHECK_OK(lt_filter_set_root(f, lt_expr_and(f, 2, args, &err), &err), err);
	s = lt_filter_render(f);
	CHECK(s && strcmp(s, "(dt = 2024-01-02 AND x > 10)") == 0);
	lt_free(s);

	v = vbytes("it's");
	args[0] = lt_expr_cmp(f, LT_CMP_LE, lt_expr_column(f, 2, &err), lt_expr_const(f, &v, &err), &err);
	v = vtemporal(LT_VALUE_TIMESTAMP, 1704164645123456LL, LT_UNIT_US);
	args[1] = lt_expr_cmp(f, LT_CMP_GE, lt_expr_column(f, 3, &err), lt_expr_const(f, &v, &err), &err);
	{
		lt_expr    *items[3];

		v = vdec(-5, 2);
		items[0] = lt_expr_const(f, &v, &err);
		v = vint(7);
		items[1] = lt_expr_const(f, &v, &err);
		items[2] = lt_expr_param(f, 2, LT_VALUE_DECIMAL, &err);
		args[2] = lt_expr_not(f, lt_expr_in(f, lt_expr_column(f, 4, &err), 3, items, &err), &err);
	}
	v = vfloat(NAN);
	args[3] = lt_expr_or(f, 2, (lt_expr *[]) {
		lt_expr_is_null(f, lt_expr_column(f, 5, &err), false, &err),
			lt_expr_between(f, lt_expr_column(f, 5, &err), lt_expr_param(f, 1, LT_VALUE_FLOAT, &err),
							lt_expr_const(f, &v, &err), &err)}, &err);
	CHECK_OK(lt_filter_set_root(f, lt_expr_and(f, 4, args, &err), &err), err);
	s = lt_filter_render(f);
	CHECK(s && strcmp(s, "(\"Name\" <= 'it''s' AND ts >= '2024-01-02 03:04:05.123456' AND "
					  "NOT (c IN (-0.05, 7, $2)) AND (f IS NULL OR f BETWEEN $1 AND 'NaN'))") == 0);
	if (s)
		printf("  %s\n", s);
	lt_free(s);
	CHECK_OK(lt_filter_set_root(f, NULL, &err), err);
	s = lt_filter_render(f);
	CHECK(s && strcmp(s, "true") == 0);
	lt_free(s);
	lt_filter_free(f);
	freefield(fd);
	freefield(fx);
	freefield(fs);
	freefield(ft);
	freefield(fc);
	freefield(ff);
}

/* ------------------------------------------------------------------ scanner: late materialization */

typedef struct scan_out
{
	int			n_cols;
	lt_array  **cols;			/* every fragment's batches appended */
	uint64_t   *addrs;
	uint64_t	n;
	lt_scan_stats stats;
} scan_out;

/* when set, scan_all's scanners take their files from it */
static lt_file_cache *scan_cache;

static void
scan_all(lt_dataset *ds, const lt_field *const *fields, int n, lt_filter *flt, uint64_t batch_rows,
		 const uint32_t *offsets, uint64_t n_offsets, scan_out *out)
{
	memset(out, 0, sizeof(*out));
	out->n_cols = n;
	out->cols = calloc((size_t) n + 1, sizeof(lt_array *));
	out->addrs = malloc(4096 * sizeof(uint64_t));
	for (int i = 0; i < n; i++)
		CHECK_OK(lt_array_new(fields[i], &out->cols[i], &err), err);
	for (size_t fi = 0; fi < ds->n_fragments; fi++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;
		lt_scan_stats st;

		so.n_fields = n;
		so.fields = fields;
		so.batch_rows = batch_rows;
		so.filter = flt;
		so.want_row_ids = true;
		so.offsets = offsets;
		so.n_offsets = n_offsets;
		so.file_cache = scan_cache;
		CHECK_OK(lt_fragment_scanner_open(ds, ds->fragments[fi], &so, &sc, &err), err);
		if (!sc)
			return;
		for (;;)
		{
			CHECK_OK(lt_fragment_scanner_next(sc, &b, &err), err);
			if (!b)
				break;
			CHECK(b->length > 0 && (uint64_t) b->length <= batch_rows);
			for (int i = 0; i < n; i++)
				CHECK_OK(lt_array_append_slice(out->cols[i], b->columns[i], 0, b->length, &err), err);
			for (int64_t k = 0; k < b->length && out->n < 4096; k++)
			{
				CHECK(b->row_ids[k] == b->row_addrs[k]);
				out->addrs[out->n++] = b->row_addrs[k];
			}
		}
		lt_fragment_scanner_stats(sc, &st);
		out->stats.rows_deleted += st.rows_deleted;
		out->stats.rows_scanned += st.rows_scanned;
		out->stats.rows_filtered += st.rows_filtered;
		out->stats.pages += st.pages;
		lt_fragment_scanner_free(sc);
	}
}

static void
scan_free(scan_out *s)
{
	for (int i = 0; i < s->n_cols; i++)
		lt_array_free(s->cols[i]);
	free(s->cols);
	free(s->addrs);
}

TEST(scanner_late_materialization)
{
	lt_store   *store;
	lt_dataset *ds = NULL;
	lt_version_spec spec = {0};
	char		root[1024];
	const lt_field *all[5];
	scan_out	full;

	snprintf(root, sizeof(root), "%s/filter_scan", unit_data_dir());
	CHECK_OK(lt_store_local_open(root, &store, &err), err);
	CHECK_OK(lt_dataset_open(store, "", &spec, &ds, &err), err);
	if (!ds)
		return;
	CHECK_EQ_INT(ds->schema->n_fields, 5);	/* id, i32, f64, s, dec */
	for (int i = 0; i < 5; i++)
		all[i] = ds->schema->fields[i];
	scan_all(ds, all, 5, NULL, 100, NULL, 0, &full);
	CHECK_EQ_INT(full.n, 2492);
	CHECK_EQ_INT(full.stats.rows_scanned, 2492);
	CHECK_EQ_INT(full.stats.rows_deleted, 3000 - 2492);

	/* predicates of several densities, over filter columns projected or not */
	for (int q = 0; q < 6; q++)
	{
		lt_filter  *flt;
		const lt_field *fcols[2] = {all[1], all[3]};
		lt_expr    *e = NULL;
		lt_value	v;
		int64_t		want = 0;
		uint64_t	batch = q % 2 ? 64 : 1000;

		CHECK_OK(lt_filter_new(2, fcols, &flt, &err), err);
		switch (q)
		{
			case 0:				/* about 1% */
				v = vint(10);
				e = lt_expr_cmp(flt, LT_CMP_LT, lt_expr_column(flt, 0, &err), lt_expr_const(flt, &v, &err), &err);
				break;
			case 1:				/* about half, scattered */
				v = vint(512);
				e = lt_expr_cmp(flt, LT_CMP_GE, lt_expr_column(flt, 0, &err), lt_expr_const(flt, &v, &err), &err);
				break;
			case 2:				/* none */
				v = vint(-1);
				e = lt_expr_cmp(flt, LT_CMP_LT, lt_expr_column(flt, 0, &err), lt_expr_const(flt, &v, &err), &err);
				break;
			case 3:				/* everything but NULL i32 */
				e = lt_expr_is_null(flt, lt_expr_column(flt, 0, &err), true, &err);
				break;
			case 4:				/* strings, OR */
				{
					lt_expr    *args[2];

					v = vbytes("a");
					args[0] = lt_expr_cmp(flt, LT_CMP_EQ, lt_expr_column(flt, 1, &err), lt_expr_const(flt, &v, &err), &err);
					v = vint(1000);
					args[1] = lt_expr_cmp(flt, LT_CMP_GT, lt_expr_column(flt, 0, &err), lt_expr_const(flt, &v, &err), &err);
					e = lt_expr_or(flt, 2, args, &err);
				}
				break;
			default:			/* a parameter */
				e = lt_expr_cmp(flt, LT_CMP_LE, lt_expr_column(flt, 0, &err), lt_expr_param(flt, 1, LT_VALUE_INT, &err), &err);
				v = vint(300);
				CHECK_OK(lt_filter_set_param(flt, 1, &v, &err), err);
				break;
		}
		CHECK_OK(lt_filter_set_root(flt, e, &err), err);
		/* the oracle: the filter over the unfiltered scan */
		{
			lt_array   *fc[2] = {full.cols[1], full.cols[3]};
			uint32_t   *sel = malloc(full.n * sizeof(uint32_t));
			scan_out	res;
			const lt_field *proj[3][5] = {{all[0], all[1], all[2], all[3], all[4]},
			{all[4], all[0], all[2]},	/* no filter column projected */
			{all[3], all[3], all[1]}};	/* repeated filter columns */
			int			nproj[3] = {5, 3, 3};
			int			pidx[3][5] = {{0, 1, 2, 3, 4}, {4, 0, 2}, {3, 3, 1}};

			uint8_t    *passes = calloc(full.n, 1);

			CHECK_OK(lt_filter_eval(flt, fc, (int64_t) full.n, sel, &want, &err), err);
			for (int64_t k = 0; k < want; k++)
				passes[sel[k]] = 1;
			for (int p = 0; p < 3; p++)
			{
				scan_all(ds, proj[p], nproj[p], flt, batch, NULL, 0, &res);
				CHECK_EQ_INT(res.n, want);
				CHECK_EQ_INT(res.stats.rows_scanned, full.n);
				CHECK_EQ_INT(res.stats.rows_filtered, full.n - (uint64_t) want);
				for (uint64_t k = 0; k < res.n && k < (uint64_t) want; k++)
					CHECK(res.addrs[k] == full.addrs[sel[k]]);
				for (int i = 0; i < nproj[p]; i++)
				{
					lt_array   *exp;
					int64_t    *take = malloc((size_t) (want ? want : 1) * sizeof(int64_t));

					for (int64_t k = 0; k < want; k++)
						take[k] = sel[k];
					CHECK_OK(lt_array_new(proj[p][i], &exp, &err), err);
					CHECK_OK(lt_array_append_take(exp, full.cols[pidx[p][i]], take, want, &err), err);
					CHECK(lt_array_equal(exp, res.cols[i]));
					lt_array_free(exp);
					free(take);
				}
				scan_free(&res);
			}
			/* random access (offsets mode) with a filter: every 3rd offset of every fragment */
			{
				uint32_t	offs[400];
				uint64_t	n_off = 0, expect = 0;

				for (uint32_t o = 0; o < 800; o += 3)	/* within every fragment */
					offs[n_off++] = o;
				scan_all(ds, all, 5, flt, batch, offs, n_off, &res);
				for (uint64_t k = 0; k < full.n; k++)
					expect += passes[k] && (full.addrs[k] & 0xffffffff) % 3 == 0 && (full.addrs[k] & 0xffffffff) < 800;
				CHECK_EQ_INT(res.n, expect);
				for (uint64_t k = 0; k < res.n; k++)
					CHECK((res.addrs[k] & 0xffffffff) % 3 == 0);
				scan_free(&res);
			}
			free(sel);
			free(passes);
		}
		if (q == 0)
			CHECK(want > 0 && want < 60);
		if (q == 2)
			CHECK_EQ_INT(want, 0);
		lt_filter_free(flt);
	}
	/* a filter column that is not a top-level field of the dataset */
	{
		lt_field   *alien = mkfield("i32", "int32");
		lt_filter  *flt;
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;

		CHECK_OK(lt_filter_new(1, (const lt_field *const *) &alien, &flt, &err), err);
		so.n_fields = 1;
		so.fields = all;
		so.filter = flt;
		CHECK_CODE(lt_fragment_scanner_open(ds, ds->fragments[0], &so, &sc, &err), LT_EINVALID);
		lt_filter_free(flt);
		freefield(alien);
	}
	scan_free(&full);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* Point lookups through a file cache: the same rows as a scan, files opened once, held ones never evicted. */
TEST(scanner_file_cache)
{
	lt_store   *store;
	lt_dataset *ds = NULL;
	lt_version_spec spec = {0};
	char		root[1024];
	const lt_field *all[5];
	scan_out	full;
	uint64_t	files = 0;

	snprintf(root, sizeof(root), "%s/filter_scan", unit_data_dir());
	CHECK_OK(lt_store_local_open(root, &store, &err), err);
	CHECK_OK(lt_dataset_open(store, "", &spec, &ds, &err), err);
	if (!ds)
		return;
	for (int i = 0; i < 5; i++)
		all[i] = ds->schema->fields[i];
	for (size_t fi = 0; fi < ds->n_fragments; fi++)
		files += ds->fragments[fi]->n_files;
	scan_all(ds, all, 5, NULL, 100, NULL, 0, &full);
	CHECK_OK(lt_file_cache_create(NULL, 8, &scan_cache, &err), err);
	/* one offset at a time, twice over: every row equals the full scan's */
	for (int round = 0; round < 2; round++)
		for (uint64_t k = 0; k < full.n; k += 97)
		{
			uint32_t	off = (uint32_t) (full.addrs[k] & 0xffffffff);
			uint64_t	frag = full.addrs[k] >> 32;
			lt_dataset	one = *ds;
			scan_out	res;

			/* the row's fragment only */
			one.fragments = ds->fragments + lt_dataset_fragment_index(ds, frag);
			one.n_fragments = 1;
			scan_all(&one, all, 5, NULL, 100, &off, 1, &res);
			CHECK_EQ_INT(res.n, 1);
			CHECK(res.n == 1 && res.addrs[0] == full.addrs[k]);
			for (int i = 0; i < 5 && res.n == 1; i++)
			{
				lt_array   *exp;

				CHECK_OK(lt_array_new(all[i], &exp, &err), err);
				CHECK_OK(lt_array_append_slice(exp, full.cols[i], (int64_t) k, 1, &err), err);
				CHECK(lt_array_equal(exp, res.cols[i]));
				lt_array_free(exp);
			}
			scan_free(&res);
		}
	/* every data file opened once, found open after that */
	CHECK_EQ_INT(lt_file_cache_opens(scan_cache), files);
	CHECK(lt_file_cache_hits(scan_cache) > 0);
	lt_file_cache_free(scan_cache);

	/* a cache of one file: a held file is not evicted (the second comes back owned), a released one is */
	{
		lt_file_cache *c;
		lt_file    *a,
				   *b,
				   *a2;
		bool		owned_a,
					owned_b,
					owned_a2;
		char	   *pa = lt_asprintf("data/%s", ds->fragments[0]->files[0]->path);
		char	   *pb = lt_asprintf("data/%s", ds->fragments[ds->n_fragments - 1]->files[0]->path);

		CHECK(ds->n_fragments > 1);
		CHECK_OK(lt_file_cache_create(NULL, 1, &c, &err), err);
		CHECK_OK(lt_file_cache_get(c, store, pa, &a, &owned_a, &err), err);
		CHECK(!owned_a);
		CHECK_OK(lt_file_cache_get(c, store, pb, &b, &owned_b, &err), err);
		CHECK(owned_b);
		lt_file_close(b);
		lt_file_cache_release(c, a);
		CHECK_OK(lt_file_cache_get(c, store, pb, &b, &owned_b, &err), err);
		CHECK(!owned_b);
		lt_file_cache_release(c, b);
		CHECK_OK(lt_file_cache_get(c, store, pa, &a2, &owned_a2, &err), err);
		CHECK(!owned_a2);
		lt_file_cache_release(c, a2);
		CHECK_EQ_INT(lt_file_cache_opens(c), 4);
		CHECK_EQ_INT(lt_file_cache_hits(c), 0);
		lt_file_cache_free(c);
		lt_free(pa);
		lt_free(pb);
	}
	scan_cache = NULL;
	scan_free(&full);
	lt_dataset_close(ds);
	lt_store_close(store);
}

/* A descriptor budget (lt_store.h hooks) of 2, counted as PostgreSQL's external descriptors would be. */
static int	fds_open, fds_max, fds_reserved;

static bool
fd_acquire(void)
{
	if (fds_open >= 2)
		return false;
	fds_max = ++fds_open > fds_max ? fds_open : fds_max;
	return true;
}

static void
fd_reserve(void)
{
	fds_reserved++;
	fds_max = ++fds_open > fds_max ? fds_open : fds_max;
}

static void
fd_release(void)
{
	fds_open--;
}

/* Caches of 512 files under a budget of 2 descriptors: idle cached files of either cache close first. */
TEST(file_cache_fd_budget)
{
	static const lt_fd_hooks hooks = {fd_acquire, fd_reserve, fd_release};
	lt_store   *store;
	lt_dataset *ds = NULL;
	lt_version_spec spec = {0};
	char		root[1024];
	const lt_field *all[5];
	scan_out	full, cached;
	lt_file_cache *other;
	size_t		files = 0;

	snprintf(root, sizeof(root), "%s/filter_scan", unit_data_dir());
	CHECK_OK(lt_store_local_open(root, &store, &err), err);
	CHECK_OK(lt_dataset_open(store, "", &spec, &ds, &err), err);
	if (!ds)
		return;
	for (int i = 0; i < 5; i++)
		all[i] = ds->schema->fields[i];
	for (size_t fi = 0; fi < ds->n_fragments; fi++)
		files += ds->fragments[fi]->n_files;
	CHECK(files > 2);
	scan_all(ds, all, 5, NULL, 100, NULL, 0, &full);
	lt_set_fd_hooks(&hooks);
	CHECK_OK(lt_file_cache_create(NULL, 512, &other, &err), err);
	CHECK_OK(lt_file_cache_create(NULL, 512, &scan_cache, &err), err);
	/* one idle file in the other cache, then every file through scan_cache, twice */
	{
		lt_file    *f;
		bool		owned;
		char	   *p = lt_asprintf("data/%s", ds->fragments[0]->files[0]->path);

		CHECK_OK(lt_file_cache_get(other, store, p, &f, &owned, &err), err);
		CHECK(!owned);
		lt_file_cache_release(other, f);
		lt_free(p);
	}
	CHECK_EQ_INT(fds_open, 1);
	for (int round = 0; round < 2; round++)
	{
		scan_all(ds, all, 5, NULL, 100, NULL, 0, &cached);
		CHECK_EQ_INT(cached.n, full.n);
		for (int i = 0; i < 5 && cached.n == full.n; i++)
			CHECK(lt_array_equal(cached.cols[i], full.cols[i]));
		scan_free(&cached);
	}
	/* a scan holds one fragment's files at a time: within the budget, nothing reserved past it */
	CHECK(fds_max <= 2);
	CHECK_EQ_INT(fds_reserved, 0);
	/* every data file was opened again and again: the caches closed idle files rather than exceed it */
	CHECK(lt_file_cache_opens(scan_cache) > files);
	lt_file_cache_free(scan_cache);
	lt_file_cache_free(other);
	scan_cache = NULL;
	CHECK_EQ_INT(fds_open, 0);
	/* three files held at once: the third is reserved past the budget rather than refused */
	{
		lt_file_cache *c;
		lt_file    *f[3];
		bool		owned[3];
		int			n = 0;

		CHECK_OK(lt_file_cache_create(NULL, 512, &c, &err), err);
		for (size_t fi = 0; fi < ds->n_fragments && n < 3; fi++)
			for (size_t j = 0; j < ds->fragments[fi]->n_files && n < 3; j++, n++)
			{
				char	   *p = lt_asprintf("data/%s", ds->fragments[fi]->files[j]->path);

				CHECK_OK(lt_file_cache_get(c, store, p, &f[n], &owned[n], &err), err);
				lt_free(p);
			}
		CHECK_EQ_INT(fds_open, 3);
		CHECK_EQ_INT(fds_reserved, 1);
		for (int i = 0; i < n; i++)
			lt_file_cache_release(c, f[i]);
		lt_file_cache_free(c);
		CHECK_EQ_INT(fds_open, 0);
	}
	lt_set_fd_hooks(NULL);
	scan_free(&full);
	lt_dataset_close(ds);
	lt_store_close(store);
}

int
main(void)
{
	RUN(int_types_every_op);
	RUN(float_types_nan_order);
	RUN(decimal_scales);
	RUN(temporal_units);
	RUN(bytes_order);
	RUN(three_valued_logic);
	RUN(in_lists);
	RUN(between);
	RUN(parameters);
	RUN(render);
	RUN(scanner_late_materialization);
	RUN(scanner_file_cache);
	RUN(file_cache_fd_budget);
	return unit_report("filter");
}
