/*
 * upper_exec.c — aggregate pushdown's execution: the ForeignScan upper.c planned, over decoded column
 * vectors (what is pushed, and how it is planned: upper.c).
 *
 * Length (~1,500 lines): one concern, the aggregate scan; its parts (accumulators, loading, grouping,
 * folding, the scan and its EXPLAIN) share LtUpperState, which a further split would have to export.
 *
 * Everything else is computed here over decoded column vectors: the fragments are read in order with the
 * library's fragment scanner, projecting only the aggregated (and grouping) fields, with deletion vectors
 * applied; each batch is loaded into a native vector (int64, double, int128) and folded into per-group
 * accumulators in row order, which is the order of a sequential scan. The semantics are Postgres's own:
 *   count -> bigint; sum(int2/int4) -> bigint; sum(int8) -> numeric (an int128 sum, as numeric_poly_sum);
 *   sum(float4) -> real and sum(float8) -> double, running sums with float4_pl/float8_pl (overflow errors);
 *   avg(int*) -> numeric (sum / count with numeric_div); avg(float*) -> double via the Youngs-Cramer state
 *   of float8_accum (so its overflow errors too); sum/avg(numeric) exact (int128, spilling into numeric);
 *   min/max with float8_gt/float8_lt (NaN above everything) and the transition functions' tie rule;
 *   NULLs ignored; sum/avg/min/max of no rows NULL, count 0.
 * Values whose conversion can fail in a scan (dates and times out of range, a decimal beyond the declared
 * precision) are converted with the scan's own conversion, so the same ERROR is raised.
 *
 * Execution dispatch: the handler's Begin/Iterate/ReScan/End/Explain entry points are the lt_upper_* ones
 * at the end of this file; they call scan.c's functions for base-relation scans and this file's for aggregate scans (marked by
 * the first fdw_private slot).
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/typcache.h"

#include "convert.h"
#include "dataset.h"
#include "explain.h"
#include "index.h"
#include "option.h"
#include "quals.h"
#include "scan.h"
#include "upper.h"
#include "upper_exec.h"
#include "index/lt_index_plan.h"
#include "util/lt_value.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

/* ---- execution: accumulators -------------------------------------------------------------------- */

typedef struct LtAcc
{
	int64		n;				/* non-null inputs */
	int128		isum;			/* sum(int8), numeric sums (unscaled) */
	int64		ival;			/* sum(int2/int4); min/max of ints and Datums */
	double		dval;			/* sum(float8), min/max float8, Sx */
	float4		fval;			/* sum(float4), min/max float4 */
	double		sxx;			/* float8_accum's Sxx */
	Numeric		spill;			/* numeric sums beyond int128 */
} LtAcc;

typedef struct LtAggSpec
{
	LtAggKind	kind;
	Oid			fn;
	Oid			argtype;		/* declared type of the argument */
	int			col;			/* index into the projection; -1 for count(*) */
	LtValClass	vc;
	const LtConv *conv;
	int			scale;			/* LT_VAL_DECIMAL */
	int			precision;		/* LT_VAL_DECIMAL: enforced precision (0 = none) */
	const char *attname;
} LtAggSpec;

typedef enum LtKeyKind
{
	LT_KEY_INT,
	LT_KEY_TEXT,
	LT_KEY_DATUM				/* by-value Datum from the scan's conversion (floats canonicalized) */
} LtKeyKind;

typedef struct LtGroup
{
	uint64		hash;
	int64		ikey;
	const char *skey;
	int64		slen;
	Datum		key;			/* the first row's value, as the scan converts it */
	bool		keynull;
} LtGroup;

/* An output column: the group key or an aggregate. */
typedef struct LtOutput
{
	bool		is_key;
	int			agg;
} LtOutput;

typedef struct LtUpperState
{
	Relation	rel;
	LtTableOptions opts;
	LtDatasetEntry *entry;
	LtColumnBinding binding;	/* the table's columns, checked like a scan's */
	int			n_out;
	LtOutput   *out;
	int			n_aggs;
	LtAggSpec  *aggs;
	int			n_proj;
	const lt_field **proj;
	const char **proj_names;
	bool		metadata;		/* count(*) only, answered from the manifest */

	/* pushed WHERE quals (quals.c) */
	LtFdwFilter *filter;
	LtScanIndex *index;			/* index lookups for the filter (index.c) */
	bool		local_check;	/* some of them must be checked here, row by row (slow path) */
	int			n_qcols;		/* the columns they read: attnum, projection index or row id/address */
	AttrNumber *qcol_attnum;
	int		   *qcol_proj;		/* -1: _rowid, -2: _rowaddr */
	LtConv	  **qcol_conv;
	bool		want_row_ids;
	TupleTableSlot *qslot;		/* a row of the foreign table, for the local checks */
	bool	   *pass;			/* per row of the batch, when local_check */
	uint8	  **masks;			/* per projected column: validity AND pass */

	/* grouping */
	bool		grouped;
	int			key_col;
	LtKeyKind	key_kind;
	const LtConv *key_conv;
	LtValClass	key_vc;
	const char *key_attname;
	int64		n_groups;
	int64		cap_groups;
	LtGroup    *groups;
	LtAcc	   *accs;			/* n_groups * n_aggs */
	int64		null_group;
	uint32	   *slots;			/* hash table: group index + 1, 0 = empty */
	uint64		n_slots;

	/* scratch vectors for one batch */
	int64		scratch_len;
	int64	   *vi;
	double	   *vd;
	int128	   *vn;
	int32	   *gidx;

	bool		done;
	int64		next_out;

	MemoryContext agg_cxt;		/* groups, accumulators, results */
	MemoryContext lib_cxt;		/* the scanner */
	struct lt_fragment_scanner *scanner;

	/* statistics (EXPLAIN ANALYZE) */
	uint64		fragments_scanned;
	uint64		rows_deleted;
	uint64		rows_filtered;
	uint64		rows_aggregated;
	uint64		bytes_read;
	uint64		read_requests;
} LtUpperState;

static void
overflow_bigint(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("bigint out of range")));
}

/* int128 (unscaled, with scale) -> numeric, as numeric_in would read its decimal text */
static Numeric
int128_numeric(int128 v, int scale)
{
	char		buf[64];
	char		digits[48];
	int			k = 0;
	int			p = 0;
	bool		neg = v < 0;
	uint128		u = neg ? -(uint128) v : (uint128) v;

	do
	{
		digits[k++] = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u != 0);
	while (k < scale + 1)
		digits[k++] = '0';
	if (neg)
		buf[p++] = '-';
	for (int i = k - 1; i >= 0; i--)
	{
		buf[p++] = digits[i];
		if (i == scale && scale > 0)
			buf[p++] = '.';
	}
	buf[p] = '\0';
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(buf), ObjectIdGetDatum(InvalidOid),
											   Int32GetDatum(-1)));
}

static Numeric
acc_numeric_sum(const LtAcc *acc, int scale)
{
	Numeric		s = int128_numeric(acc->isum, scale);

	if (acc->spill)
		s = DatumGetNumeric(DirectFunctionCall2(numeric_add, NumericGetDatum(acc->spill), NumericGetDatum(s)));
	return s;
}

/* ---- execution: loading batches ----------------------------------------------------------------- */


static void
load_float(const lt_array *a, int64 n, double *out)
{
	const uint8 *v = a->values;

	switch (a->field->type)
	{
		case LT_TYPE_FLOAT16:
			for (int64 i = 0; i < n; i++)
			{
				uint16		h;

				memcpy(&h, v + i * 2, 2);
				out[i] = lt_half_to_float(h);
			}
			break;
		case LT_TYPE_FLOAT32:
			for (int64 i = 0; i < n; i++)
			{
				float		x;

				memcpy(&x, v + i * 4, 4);
				out[i] = x;
			}
			break;
		default:
			memcpy(out, v, n * sizeof(double));
			break;
	}
}

/* Unscaled numeric values; a value beyond the declared precision goes through the scan's conversion (ERROR). */
static void
load_decimal(const LtAggSpec *ag, const lt_array *a, int64 n, int128 *out, int64 *tmp)
{
	const lt_field *f = a->field;

	if (f->type == LT_TYPE_DECIMAL128)
	{
		for (int64 i = 0; i < n; i++)
		{
			uint64		lo,
						hi;

			memcpy(&lo, a->values + i * 16, 8);
			memcpy(&hi, a->values + i * 16 + 8, 8);
			out[i] = (int128) (((uint128) hi << 64) | lo);
		}
		if (ag->precision > 0)
		{
			int128		limit = 1;

			for (int p = 0; p < ag->precision; p++)
				limit *= 10;
			for (int64 i = 0; i < n; i++)
			{
				bool		isnull;

				if (lt_array_is_valid(a, i) && (out[i] >= limit || out[i] <= -limit))
					(void) lt_conv_datum(ag->conv, a, i, &isnull);	/* raises the scan's error */
			}
		}
	}
	else if (f->type == LT_TYPE_UINT64)
	{
		for (int64 i = 0; i < n; i++)
		{
			uint64		x;

			memcpy(&x, a->values + i * 8, 8);
			out[i] = (int128) x;
		}
	}
	else
	{
		lt_array_int64s(a, n, tmp);
		for (int64 i = 0; i < n; i++)
			out[i] = tmp[i];
	}
}

/* By-value Datums through the scan's conversion (range checks and their errors included). */
static void
load_datum(const LtConv *conv, const lt_array *a, int64 n, int64 *out)
{
	for (int64 i = 0; i < n; i++)
	{
		bool		isnull;

		out[i] = lt_array_is_valid(a, i) ? (int64) lt_conv_datum(conv, a, i, &isnull) : 0;
	}
}

/* ---- execution: grouping ------------------------------------------------------------------------ */

static inline uint64
mix64(uint64 x)
{
	x ^= x >> 33;
	x *= UINT64CONST(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64CONST(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/*
 * The groups must fit in hash_mem, as Postgres's own hash aggregation's do before it spills: planning
 * pushes a GROUP BY down only when its groups fit, but statistics can be stale.  Then stop rather than
 * grow without bound.
 */
static void
check_group_memory(LtUpperState *st)
{
	Size		used = MemoryContextMemAllocated(st->agg_cxt, true);
	Size		limit = get_hash_memory_limit();

	if (used > limit)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("lt_fdw: the GROUP BY pushed down to foreign table \"%s\" needs more memory than hash_mem allows (%zu kB): over " INT64_FORMAT " groups",
						RelationGetRelationName(st->rel), limit / 1024, st->n_groups),
				 errdetail("Planning estimated fewer groups than the dataset has."),
				 errhint("ANALYZE the foreign table, so that planning leaves a GROUP BY this big to PostgreSQL's own aggregation (which spills to disk), or SET lt_fdw.enable_aggregate_pushdown = off.")));
}

static void
grow_groups(LtUpperState *st)
{
	if (st->n_groups < st->cap_groups)
		return;
	if (st->groups != NULL)
		check_group_memory(st);
	st->cap_groups = st->cap_groups ? st->cap_groups * 2 : 64;
	if (st->groups == NULL)
	{
		st->groups = MemoryContextAllocHuge(st->agg_cxt, sizeof(LtGroup) * st->cap_groups);
		st->accs = MemoryContextAllocHuge(st->agg_cxt, sizeof(LtAcc) * st->cap_groups * Max(st->n_aggs, 1));
	}
	else
	{
		st->groups = repalloc_huge(st->groups, sizeof(LtGroup) * st->cap_groups);
		st->accs = repalloc_huge(st->accs, sizeof(LtAcc) * st->cap_groups * Max(st->n_aggs, 1));
	}
}

static int64
new_group(LtUpperState *st)
{
	int64		g;

	grow_groups(st);
	g = st->n_groups++;
	memset(&st->groups[g], 0, sizeof(LtGroup));
	memset(&st->accs[g * st->n_aggs], 0, sizeof(LtAcc) * st->n_aggs);
	return g;
}

static void
rehash(LtUpperState *st)
{
	uint64		n = st->n_slots ? st->n_slots * 2 : 1024;
	uint32	   *slots = MemoryContextAllocHuge(st->agg_cxt, sizeof(uint32) * n);

	memset(slots, 0, sizeof(uint32) * n);
	for (int64 g = 0; g < st->n_groups; g++)
	{
		uint64		h;

		if (g == st->null_group)
			continue;
		h = st->groups[g].hash & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = (uint32) (g + 1);
	}
	if (st->slots)
		pfree(st->slots);
	st->slots = slots;
	st->n_slots = n;
}

/* The group of row r of the key column a; ikey is the canonical value for int/Datum keys. */
static int64
find_group(LtUpperState *st, const lt_array *a, int64 r, int64 ikey)
{
	uint64		h;
	const char *s = NULL;
	int64		len = 0;
	int64		g;
	MemoryContext old;

	if (!lt_array_is_valid(a, r))
	{
		if (st->null_group < 0)
		{
			st->null_group = new_group(st);
			st->groups[st->null_group].keynull = true;
		}
		return st->null_group;
	}
	if (st->key_kind == LT_KEY_TEXT)
	{
		s = (const char *) a->data + a->offsets[r];
		len = a->offsets[r + 1] - a->offsets[r];
		h = hash_bytes_extended((const unsigned char *) s, (int) len, 0);
	}
	else
		h = mix64((uint64) ikey);
	if ((uint64) (st->n_groups + 1) * 2 > st->n_slots)
		rehash(st);
	for (uint64 i = h & (st->n_slots - 1);; i = (i + 1) & (st->n_slots - 1))
	{
		uint32		gi = st->slots[i];
		LtGroup    *grp;

		if (gi == 0)
		{
			if (st->n_groups >= (int64) PG_UINT32_MAX - 1)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("lt_fdw: too many groups")));
			g = new_group(st);
			grp = &st->groups[g];
			grp->hash = h;
			grp->ikey = ikey;
			old = MemoryContextSwitchTo(st->agg_cxt);
			if (st->key_kind == LT_KEY_TEXT)
			{
				char	   *copy = palloc(len + 1);

				memcpy(copy, s, len);
				copy[len] = '\0';
				grp->skey = copy;
				grp->slen = len;
			}
			if (st->key_kind == LT_KEY_INT)
			{
				switch (st->key_conv->typid)
				{
					case INT2OID:
						grp->key = Int16GetDatum((int16) ikey);
						break;
					case INT4OID:
						grp->key = Int32GetDatum((int32) ikey);
						break;
					default:
						grp->key = Int64GetDatum(ikey);
						break;
				}
			}
			else
			{
				bool		isnull;

				grp->key = lt_conv_datum(st->key_conv, a, r, &isnull);
			}
			MemoryContextSwitchTo(old);
			st->slots[i] = (uint32) (g + 1);
			return g;
		}
		grp = &st->groups[gi - 1];
		if (grp->hash != h)
			continue;
		if (st->key_kind == LT_KEY_TEXT ? (grp->slen == len && memcmp(grp->skey, s, len) == 0)
			: grp->ikey == ikey)
			return gi - 1;
	}
}

static void
assign_groups(LtUpperState *st, const lt_array *a, int64 n, const bool *pass)
{
	switch (st->key_kind)
	{
		case LT_KEY_INT:
			lt_array_int64s(a, n, st->vi);
			for (int64 r = 0; r < n; r++)
				st->gidx[r] = (pass && !pass[r]) ? 0 : (int32) find_group(st, a, r, st->vi[r]);
			break;
		case LT_KEY_TEXT:
			for (int64 r = 0; r < n; r++)
				st->gidx[r] = (pass && !pass[r]) ? 0 : (int32) find_group(st, a, r, 0);
			break;
		case LT_KEY_DATUM:
			for (int64 r = 0; r < n; r++)
			{
				int64		ikey = 0;

				if (pass && !pass[r])
				{
					st->gidx[r] = 0;
					continue;
				}
				if (lt_array_is_valid(a, r))
				{
					bool		isnull;
					Datum		d = lt_conv_datum(st->key_conv, a, r, &isnull);

					/* float equality: -0 = 0 and NaN = NaN */
					if (st->key_vc == LT_VAL_FLOAT4 || st->key_vc == LT_VAL_FLOAT8)
					{
						double		x = st->key_vc == LT_VAL_FLOAT4 ? DatumGetFloat4(d) : DatumGetFloat8(d);

						if (x == 0)
							x = 0;
						else if (isnan(x))
							x = get_float8_nan();
						memcpy(&ikey, &x, 8);
					}
					else
						ikey = (int64) d;
				}
				st->gidx[r] = (int32) find_group(st, a, r, ikey);
			}
			break;
	}
}

/* ---- execution: folding a batch ----------------------------------------------------------------- */

#define ACC(r) (gidx ? &accs[(int64) gidx[r] * stride] : accs)

static inline void
accum_float8(LtAcc *acc, float8 newval)
{
	float8		N = (float8) acc->n;
	float8		Nold = N;
	float8		Sx = acc->dval;
	float8		Sxx = acc->sxx;
	float8		tmp;

	/* float8_accum (Youngs-Cramer), step for step */
	N += 1.0;
	Sx += newval;
	if (Nold > 0.0)
	{
		tmp = newval * N - Sx;
		Sxx += tmp * tmp / (N * Nold);
		if (isinf(Sx) || isinf(Sxx))
		{
			if (!isinf(acc->dval) && !isinf(newval))
				float_overflow_error();
			Sxx = get_float8_nan();
		}
	}
	else
	{
		if (isnan(newval) || isinf(newval))
			Sxx = get_float8_nan();
	}
	acc->n++;
	acc->dval = Sx;
	acc->sxx = Sxx;
}

static void
fold_batch(LtUpperState *st, int k, const lt_batch *b)
{
	const LtAggSpec *ag = &st->aggs[k];
	int64		n = b->length;
	const int32 *gidx = st->grouped ? st->gidx : NULL;
	LtAcc	   *accs = st->accs + k;
	int64		stride = st->n_aggs;
	const lt_array *a;
	const uint8 *valid;

	if (ag->kind == LT_AGG_COUNT_STAR)
	{
		const bool *pass = st->local_check ? st->pass : NULL;

		if (gidx == NULL && pass == NULL)
			accs->n += n;
		else
			for (int64 r = 0; r < n; r++)
				if (!pass || pass[r])
					ACC(r)->n++;
		return;
	}
	a = b->columns[ag->col];
	valid = a->validity;

	if (ag->kind == LT_AGG_COUNT)
	{
		/* loading checks what the scan's conversion would refuse */
		if (ag->vc == LT_VAL_DATUM)
			load_datum(ag->conv, a, n, st->vi);
		else if (ag->vc == LT_VAL_DECIMAL && ag->precision > 0)
			load_decimal(ag, a, n, st->vn, st->vi);
		if (valid == NULL && gidx == NULL)
			accs->n += n;
		else
			for (int64 r = 0; r < n; r++)
				if (!valid || valid[r])
					ACC(r)->n++;
		return;
	}

	switch (ag->vc)
	{
		case LT_VAL_INT:
			lt_array_int64s(a, n, st->vi);
			break;
		case LT_VAL_FLOAT4:
		case LT_VAL_FLOAT8:
			load_float(a, n, st->vd);
			break;
		case LT_VAL_DECIMAL:
			load_decimal(ag, a, n, st->vn, st->vi);
			break;
		case LT_VAL_DATUM:
			load_datum(ag->conv, a, n, st->vi);
			break;
		default:
			elog(ERROR, "lt_fdw: no loader for aggregate %d", (int) ag->kind);
	}

	switch (ag->kind)
	{
		case LT_AGG_SUM_INT:
		case LT_AGG_AVG_INT:
			if (gidx == NULL)
			{
				int64		s = accs->ival;
				int64		c = 0;

				if (valid == NULL)
				{
					for (int64 r = 0; r < n; r++)
						if (unlikely(__builtin_add_overflow(s, st->vi[r], &s)))
							overflow_bigint();
					c = n;
				}
				else
					for (int64 r = 0; r < n; r++)
						if (valid[r])
						{
							if (unlikely(__builtin_add_overflow(s, st->vi[r], &s)))
								overflow_bigint();
							c++;
						}
				accs->ival = s;
				accs->n += c;
			}
			else
				for (int64 r = 0; r < n; r++)
					if (!valid || valid[r])
					{
						LtAcc	   *acc = ACC(r);

						if (unlikely(__builtin_add_overflow(acc->ival, st->vi[r], &acc->ival)))
							overflow_bigint();
						acc->n++;
					}
			break;
		case LT_AGG_SUM_INT8:
		case LT_AGG_AVG_INT8:
			for (int64 r = 0; r < n; r++)
				if (!valid || valid[r])
				{
					LtAcc	   *acc = ACC(r);

					acc->isum += st->vi[r];
					acc->n++;
				}
			break;
		case LT_AGG_SUM_NUMERIC:
		case LT_AGG_AVG_NUMERIC:
			for (int64 r = 0; r < n; r++)
				if (!valid || valid[r])
				{
					LtAcc	   *acc = ACC(r);
					int128		s;

					if (unlikely(__builtin_add_overflow(acc->isum, st->vn[r], &s)))
					{
						/* beyond int128: move the partial sum into a numeric */
						MemoryContext old = MemoryContextSwitchTo(st->agg_cxt);

						acc->spill = acc_numeric_sum(acc, ag->scale);
						MemoryContextSwitchTo(old);
						s = st->vn[r];
					}
					acc->isum = s;
					acc->n++;
				}
			break;
		case LT_AGG_SUM_FLOAT4:
			for (int64 r = 0; r < n; r++)
				if (!valid || valid[r])
				{
					LtAcc	   *acc = ACC(r);
					float4		v = (float4) st->vd[r];

					acc->fval = acc->n ? float4_pl(acc->fval, v) : v;
					acc->n++;
				}
			break;
		case LT_AGG_SUM_FLOAT8:
			if (gidx == NULL)
			{
				float8		s = accs->dval;
				int64		c = accs->n;

				for (int64 r = 0; r < n; r++)
					if (!valid || valid[r])
					{
						s = c ? float8_pl(s, st->vd[r]) : st->vd[r];
						c++;
					}
				accs->dval = s;
				accs->n = c;
			}
			else
				for (int64 r = 0; r < n; r++)
					if (!valid || valid[r])
					{
						LtAcc	   *acc = ACC(r);

						acc->dval = acc->n ? float8_pl(acc->dval, st->vd[r]) : st->vd[r];
						acc->n++;
					}
			break;
		case LT_AGG_AVG_FLOAT:
			for (int64 r = 0; r < n; r++)
				if (!valid || valid[r])
					accum_float8(ACC(r), st->vd[r]);
			break;
		case LT_AGG_MIN:
		case LT_AGG_MAX:
			{
				bool		max = ag->kind == LT_AGG_MAX;

				for (int64 r = 0; r < n; r++)
				{
					LtAcc	   *acc;

					if (valid && !valid[r])
						continue;
					acc = ACC(r);
					switch (ag->vc)
					{
						case LT_VAL_INT:
						case LT_VAL_DATUM:
							{
								int64		v = st->vi[r];

								if (ag->vc == LT_VAL_DATUM && ag->argtype == DATEOID)
									v = DatumGetDateADT((Datum) v);
								if (acc->n == 0 || (max ? v > acc->ival : v < acc->ival))
									acc->ival = v;
								break;
							}
						case LT_VAL_FLOAT4:
							{
								float4		v = (float4) st->vd[r];

								/* float4larger/smaller: the new value unless the state wins strictly */
								if (acc->n == 0 || !(max ? float4_gt(acc->fval, v) : float4_lt(acc->fval, v)))
									acc->fval = v;
								break;
							}
						case LT_VAL_FLOAT8:
							{
								float8		v = st->vd[r];

								if (acc->n == 0 || !(max ? float8_gt(acc->dval, v) : float8_lt(acc->dval, v)))
									acc->dval = v;
								break;
							}
						case LT_VAL_DECIMAL:
							{
								int128		v = st->vn[r];

								if (acc->n == 0 || (max ? v > acc->isum : v < acc->isum))
									acc->isum = v;
								break;
							}
						default:
							break;
					}
					acc->n++;
				}
				break;
			}
		default:
			break;
	}
}

/* The final value of aggregate k of a group. */
static Datum
agg_final(LtUpperState *st, int k, const LtAcc *acc, bool *isnull)
{
	const LtAggSpec *ag = &st->aggs[k];

	*isnull = false;
	if (ag->kind == LT_AGG_COUNT_STAR || ag->kind == LT_AGG_COUNT)
		return Int64GetDatum(acc->n);
	if (acc->n == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (ag->kind)
	{
		case LT_AGG_SUM_INT:
			return Int64GetDatum(acc->ival);
		case LT_AGG_SUM_INT8:
			return NumericGetDatum(int128_numeric(acc->isum, 0));
		case LT_AGG_SUM_NUMERIC:
			return NumericGetDatum(acc_numeric_sum(acc, ag->scale));
		case LT_AGG_SUM_FLOAT4:
			return Float4GetDatum(acc->fval);
		case LT_AGG_SUM_FLOAT8:
			return Float8GetDatum(acc->dval);
		case LT_AGG_AVG_INT:
			return DirectFunctionCall2(numeric_div, NumericGetDatum(int64_to_numeric(acc->ival)),
									   NumericGetDatum(int64_to_numeric(acc->n)));
		case LT_AGG_AVG_INT8:
			return DirectFunctionCall2(numeric_div, NumericGetDatum(int128_numeric(acc->isum, 0)),
									   NumericGetDatum(int64_to_numeric(acc->n)));
		case LT_AGG_AVG_NUMERIC:
			return DirectFunctionCall2(numeric_div, NumericGetDatum(acc_numeric_sum(acc, ag->scale)),
									   NumericGetDatum(int64_to_numeric(acc->n)));
		case LT_AGG_AVG_FLOAT:
			return Float8GetDatum(acc->dval / (float8) acc->n);
		case LT_AGG_MIN:
		case LT_AGG_MAX:
			switch (ag->vc)
			{
				case LT_VAL_INT:
					if (ag->argtype == INT2OID)
						return Int16GetDatum((int16) acc->ival);
					if (ag->argtype == INT4OID)
						return Int32GetDatum((int32) acc->ival);
					return Int64GetDatum(acc->ival);
				case LT_VAL_DATUM:
					if (ag->argtype == DATEOID)
						return DateADTGetDatum((DateADT) acc->ival);
					return Int64GetDatum(acc->ival);
				case LT_VAL_FLOAT4:
					return Float4GetDatum(acc->fval);
				case LT_VAL_FLOAT8:
					return Float8GetDatum(acc->dval);
				case LT_VAL_DECIMAL:
					return NumericGetDatum(int128_numeric(acc->isum, ag->scale));
				default:
					break;
			}
			break;
		default:
			break;
	}
	elog(ERROR, "lt_fdw: unexpected aggregate %d", (int) ag->kind);
	return (Datum) 0;
}

/* ---- execution: the scan ------------------------------------------------------------------------ */

static void
upper_state_release(void *arg)
{
	LtUpperState *st = arg;

	if (st->entry)
	{
		lt_dataset_unpin(st->entry);
		st->entry = NULL;
	}
}

static void
upper_scanner_release(void *arg)
{
	LtUpperState *st = arg;

	if (st->scanner)
	{
		MemoryContext old = lt_alloc_target(st->lib_cxt);

		lt_fragment_scanner_free(st->scanner);
		lt_alloc_target(old);
		st->scanner = NULL;
	}
}

static void
upper_close_scanner(LtUpperState *st)
{
	upper_scanner_release(st);
	MemoryContextReset(st->lib_cxt);
}

static int
proj_index(LtUpperState *st, const lt_field *f, const char *attname)
{
	for (int k = 0; k < st->n_proj; k++)
		if (st->proj[k] == f)
			return k;
	st->proj[st->n_proj] = f;
	st->proj_names[st->n_proj] = attname;
	return st->n_proj++;
}

/* The conversion of attribute attnum (NULL for _rowid/_rowaddr), after the scan's checks of every column. */
static LtConv *
bind_column(LtUpperState *st, AttrNumber attnum)
{
	if (st->binding.columns == NULL)
		ltfdw_bind_columns(st->rel, &st->opts, st->entry, NIL, true, &st->binding);
	for (int c = 0; c < st->binding.n_columns; c++)
		if (st->binding.columns[c].attnum == attnum)
			return st->binding.columns[c].kind == LT_COL_FIELD ? st->binding.columns[c].conv : NULL;
	return NULL;
}

static void
unsupported_now(LtUpperState *st, const char *attname)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" cannot be aggregated by lt_fdw at version " UINT64_FORMAT,
					attname, RelationGetRelationName(st->rel), st->entry->version),
			 errdetail("The dataset's schema changed since the statement was planned."),
			 errhint("Plan the statement again, or SET lt_fdw.enable_aggregate_pushdown = off.")));
}

static void
upper_begin(ForeignScanState *node, int eflags)
{
	ForeignScan *fsplan = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	LtUpperState *st = palloc0(sizeof(LtUpperState));
	Oid			relid = (Oid) intVal(lsecond(fsplan->fdw_private));
	MemoryContextCallback *cb;
	RangeTblEntry *rte = NULL;
	int			rti = -1;
	Oid			userid;
	TupleDesc	td;
	ListCell   *lc;
	int			i;
	List	   *remote_exprs;

	node->fdw_state = st;
	while ((rti = bms_next_member(fsplan->fs_relids, rti)) >= 0)
	{
		rte = exec_rt_fetch(rti, estate);
		if (rte->rtekind == RTE_RELATION && rte->relid == relid)
			break;
	}
	if (rti < 0)
		elog(ERROR, "lt_fdw: the aggregated foreign table is not in the range table");
	st->rel = ExecGetRangeTableRelation(estate, rti);
	lt_get_table_options(relid, &st->opts);
	userid = OidIsValid(rte->checkAsUser) ? rte->checkAsUser : GetUserId();
	lt_check_read_privilege(userid, RelationGetRelationName(st->rel), st->opts.uri);

	st->entry = lt_dataset_acquire(relid, &st->opts, true);
	cb = palloc0(sizeof(MemoryContextCallback));
	cb->func = upper_state_release;
	cb->arg = st;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);

	/* every column is checked against this version, as a scan does */
	td = RelationGetDescr(st->rel);
	for (int attnum = 1; attnum <= td->natts; attnum++)
		if (!TupleDescAttr(td, attnum - 1)->attisdropped)
			(void) bind_column(st, attnum);

	st->n_out = list_length(fsplan->fdw_scan_tlist);
	st->out = palloc0(sizeof(LtOutput) * Max(st->n_out, 1));
	st->aggs = palloc0(sizeof(LtAggSpec) * Max(st->n_out, 1));
	st->proj = palloc0(sizeof(lt_field *) * Max(st->n_out, 1));
	st->proj_names = palloc0(sizeof(char *) * Max(st->n_out, 1));
	st->null_group = -1;
	st->metadata = true;
	i = 0;
	foreach(lc, fsplan->fdw_scan_tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		LtOutput   *o = &st->out[i++];

		if (IsA(tle->expr, Var))
		{
			Var		   *var = (Var *) tle->expr;
			LtConv	   *conv = bind_column(st, var->varattno);
			int			scale,
						precision;
			const char *attname = get_attname(relid, var->varattno, false);

			o->is_key = true;
			st->grouped = true;
			st->metadata = false;
			if (conv == NULL || conv->kind != LT_CONV_SCALAR)
				unsupported_now(st, attname);
			st->key_conv = conv;
			st->key_attname = attname;
			st->key_col = proj_index(st, conv->field, attname);
			st->key_vc = lt_upper_value_class(conv, &scale, &precision);
			if (conv->typid == TEXTOID && (conv->field->type == LT_TYPE_UTF8 || conv->field->type == LT_TYPE_LARGE_UTF8))
				st->key_kind = LT_KEY_TEXT;
			else if (st->key_vc == LT_VAL_INT)
				st->key_kind = LT_KEY_INT;
			else if (st->key_vc == LT_VAL_FLOAT4 || st->key_vc == LT_VAL_FLOAT8 || st->key_vc == LT_VAL_DATUM ||
					 st->key_vc == LT_VAL_BOOL)
				st->key_kind = LT_KEY_DATUM;
			else
				unsupported_now(st, attname);
		}
		else
		{
			Aggref	   *agg = castNode(Aggref, tle->expr);
			LtAggSpec  *ag = &st->aggs[st->n_aggs];
			int			k = lt_upper_agg_lookup(agg->aggfnoid);

			if (k < 0)
				elog(ERROR, "lt_fdw: aggregate %u cannot be pushed", agg->aggfnoid);
			o->agg = st->n_aggs++;
			ag->kind = lt_upper_aggs[k].kind;
			ag->fn = agg->aggfnoid;
			ag->argtype = lt_upper_aggs[k].argtype;
			ag->col = -1;
			if (ag->kind != LT_AGG_COUNT_STAR)
			{
				Var		   *var = castNode(Var, linitial_node(TargetEntry, agg->args)->expr);
				LtConv	   *conv = bind_column(st, var->varattno);
				const char *attname = get_attname(relid, var->varattno, false);

				/* count(col) of a field that cannot hold nulls (in this version) is count(*) */
				if (!(ag->kind == LT_AGG_COUNT && conv != NULL && !conv->field->nullable))
					st->metadata = false;
				ag->attname = attname;
				if (conv == NULL)
					unsupported_now(st, attname);
				ag->conv = conv;
				ag->vc = lt_upper_value_class(conv, &ag->scale, &ag->precision);
				if (!lt_upper_agg_accepts(ag->kind, ag->vc))
					unsupported_now(st, attname);
				ag->col = proj_index(st, conv->field, attname);
			}
		}
	}

	/* the pushed WHERE quals */
	remote_exprs = (List *) list_nth(fsplan->fdw_private, LtUpperPrivateRemoteExprs);
	if (remote_exprs != NIL)
	{
		Index		varno = (Index) intVal(list_nth(fsplan->fdw_private, LtUpperPrivateVarno));
		uint64		planned = strtou64(strVal(list_nth(fsplan->fdw_private, LtUpperPrivateVersion)),
											 NULL, 10);
		Bitmapset  *attrs = NULL;
		int			attr = -1;

		st->metadata = false;
		st->filter = ltfdw_build_filter(st->rel, varno, st->entry->ds->schema, remote_exprs, &node->ss.ps);
		/* another version may not take every qual: then they are checked here, row by row */
		st->local_check = st->entry->version != planned;
		pull_varattnos((Node *) remote_exprs, varno, &attrs);
		st->qcol_attnum = palloc0(sizeof(AttrNumber) * Max(bms_num_members(attrs), 1));
		st->qcol_proj = palloc0(sizeof(int) * Max(bms_num_members(attrs), 1));
		st->qcol_conv = palloc0(sizeof(LtConv *) * Max(bms_num_members(attrs), 1));
		st->proj = repalloc(st->proj, sizeof(lt_field *) * (st->n_out + bms_num_members(attrs) + 1));
		st->proj_names = repalloc(st->proj_names, sizeof(char *) * (st->n_out + bms_num_members(attrs) + 1));
		while ((attr = bms_next_member(attrs, attr)) >= 0)
		{
			AttrNumber	attnum = attr + FirstLowInvalidHeapAttributeNumber;
			LtConv	   *conv;
			int			q = st->n_qcols++;

			if (attnum <= 0)
				elog(ERROR, "lt_fdw: a pushed qual reads a system column");
			conv = bind_column(st, attnum);
			st->qcol_attnum[q] = attnum;
			st->qcol_conv[q] = conv;
			if (conv == NULL)
			{
				/* _rowid or _rowaddr */
				Form_pg_attribute att = TupleDescAttr(RelationGetDescr(st->rel), attnum - 1);
				char	   *name = lt_column_field_name(relid, attnum, NameStr(att->attname));

				st->qcol_proj[q] = strcmp(name, "_rowid") == 0 ? -1 : -2;
				if (st->qcol_proj[q] == -1)
					st->want_row_ids = true;
			}
			else
				st->qcol_proj[q] = -3;	/* projected only when checked here (below) */
		}
		st->qslot = ExecInitExtraTupleSlot(estate, RelationGetDescr(st->rel), &TTSOpsVirtual);
		st->masks = palloc0(sizeof(uint8 *) * (st->n_out + bms_num_members(attrs) + 1));
	}

	st->agg_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw aggregates", ALLOCSET_DEFAULT_SIZES);
	st->lib_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw scanner", ALLOCSET_DEFAULT_SIZES);
}

static void
ensure_scratch(LtUpperState *st, int64 n)
{
	if (n <= st->scratch_len)
		return;
	if (st->vi)
	{
		pfree(st->vi);
		pfree(st->vd);
		pfree(st->vn);
		pfree(st->gidx);
	}
	st->scratch_len = Max(n, LT_DEFAULT_BATCH_ROWS);
	st->vi = MemoryContextAllocHuge(st->agg_cxt, sizeof(int64) * st->scratch_len);
	st->vd = MemoryContextAllocHuge(st->agg_cxt, sizeof(double) * st->scratch_len);
	st->vn = MemoryContextAllocHuge(st->agg_cxt, sizeof(int128) * st->scratch_len);
	st->gidx = MemoryContextAllocHuge(st->agg_cxt, sizeof(int32) * st->scratch_len);
}

/* The rows of batch b that pass the quals checked here (st->pass), and the masks that hide the others. */
static void
check_rows(ForeignScanState *node, LtUpperState *st, lt_batch *b)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *slot = st->qslot;
	int64		n = b->length;

	for (int64 r = 0; r < n; r++)
	{
		MemoryContext old;

		ExecClearTuple(slot);
		memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
		ResetExprContext(econtext);
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		for (int q = 0; q < st->n_qcols; q++)
		{
			int			k = st->qcol_attnum[q] - 1;

			if (st->qcol_proj[q] == -1)
				slot->tts_values[k] = Int64GetDatum((int64) b->row_ids[r]);
			else if (st->qcol_proj[q] == -2)
				slot->tts_values[k] = Int64GetDatum((int64) b->row_addrs[r]);
			else
			{
				slot->tts_values[k] = lt_conv_datum(st->qcol_conv[q], b->columns[st->qcol_proj[q]], r,
													&slot->tts_isnull[k]);
				continue;
			}
			slot->tts_isnull[k] = false;
		}
		MemoryContextSwitchTo(old);
		ExecStoreVirtualTuple(slot);
		econtext->ecxt_scantuple = slot;
		st->pass[r] = ltfdw_filter_local_check(st->filter, econtext);
		if (!st->pass[r])
			st->rows_filtered++;
	}
	ResetExprContext(econtext);
	for (int k = 0; k < st->n_proj; k++)
	{
		lt_array   *a = b->columns[k];

		for (int64 r = 0; r < n; r++)
			st->masks[k][r] = st->pass[r] && lt_array_is_valid(a, r);
	}
}

/* Read every fragment and fold its batches. */
static void
upper_compute(ForeignScanState *node, LtUpperState *st)
{
	lt_dataset *ds = st->entry->ds;

	if (!st->grouped)
		(void) new_group(st);

	if (st->metadata)
	{
		/* count(*) from the manifest: no data file is opened */
		for (int k = 0; k < st->n_aggs; k++)
			st->accs[k].n = (int64) st->entry->live_rows;
		st->rows_aggregated = st->entry->live_rows;
		return;
	}

	if (st->filter)
	{
		/* a parameter value the filter cannot take exactly: every qual is checked here */
		if (!ltfdw_filter_set_params(st->filter, node->ss.ps.ps_ExprContext))
			st->local_check = true;
		if (st->local_check)
		{
			for (int q = 0; q < st->n_qcols; q++)
				if (st->qcol_proj[q] == -3)
					st->qcol_proj[q] = proj_index(st, st->qcol_conv[q]->field, NULL);
			st->pass = MemoryContextAlloc(st->agg_cxt, sizeof(bool) * LT_DEFAULT_BATCH_ROWS);
			for (int k = 0; k < st->n_proj; k++)
				st->masks[k] = MemoryContextAlloc(st->agg_cxt, LT_DEFAULT_BATCH_ROWS);
		}
	}

	if (st->filter && !st->local_check)
		ltfdw_index_due(&st->index, st->entry, st->filter, st->rel, st->opts.uri, &st->bytes_read);
	for (size_t fi = 0, prefetched_to = 0; fi < ds->n_fragments; fi++)
	{
		const struct Lt__Pb__DataFragment *frag = ds->fragments[fi];
		const lt_frag_plan *fp = st->index ? ltfdw_index_verdict(st->index, fi) : NULL;
		lt_scan_options so = {0};
		MemoryContextCallback *cb;
		MemoryContext old;
		lt_error	err;
		lt_code		rc;

		/* index verdicts as in a scan (scan.c): pruned fragments are not opened, selected rows read alone */
		if (fp && fp->verdict == LT_FRAG_PRUNED)
			continue;
		if (fi >= prefetched_to)
			prefetched_to = ltfdw_prefetch_fragments(ds, st->index, fi, st->n_proj, st->n_proj, st->filter != NULL,
													 st->lib_cxt, st->opts.uri);
		if (fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_CANDIDATES))
		{
			so.offsets = fp->offsets;
			so.n_offsets = fp->n_offsets;
		}
		so.n_fields = st->n_proj;
		so.fields = st->proj;
		so.want_row_ids = st->local_check && st->want_row_ids;
		so.batch_rows = LT_DEFAULT_BATCH_ROWS;
		cb = MemoryContextAlloc(st->lib_cxt, sizeof(MemoryContextCallback));
		cb->func = upper_scanner_release;
		cb->arg = st;
		MemoryContextRegisterResetCallback(st->lib_cxt, cb);

		for (bool first = true;; first = false)
		{
			lt_batch   *b = NULL;
			uint64		bytes = ds->store->bytes_read,
						reqs = ds->store->read_requests;

			CHECK_FOR_INTERRUPTS();
			old = lt_alloc_target(st->lib_cxt);
			if (first && st->filter && !(fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_ALL)))
			{
				/* the filter lives and dies with the scanner */
				MemoryContext oldcxt = MemoryContextSwitchTo(st->lib_cxt);

				so.filter = ltfdw_filter_for_scan(st->filter);
				MemoryContextSwitchTo(oldcxt);
			}
			if (first)
				rc = lt_fragment_scanner_open(ds, frag, &so, &st->scanner, &err);
			else
				rc = lt_fragment_scanner_next(st->scanner, &b, &err);
			lt_alloc_target(old);
			st->bytes_read += ds->store->bytes_read - bytes;
			st->read_requests += ds->store->read_requests - reqs;
			if (rc != LT_OK)
			{
				if (first)
					st->scanner = NULL;
				lt_report(&err, psprintf("dataset %s version " UINT64_FORMAT, st->opts.uri, st->entry->version));
			}
			if (first)
			{
				st->fragments_scanned++;
				if (!so.offsets)	/* selected offsets are live rows */
					st->rows_deleted += frag->physical_rows - lt_fragment_live_rows(frag);
				continue;
			}
			if (b == NULL)
				break;
			if (b->length == 0)
				continue;
			if (b->length > LT_DEFAULT_BATCH_ROWS && st->local_check)
				elog(ERROR, "lt_fdw: a batch of %lld rows is larger than asked for", (long long) b->length);
			ensure_scratch(st, b->length);
			if (st->local_check)
			{
				uint8	   *saved[FUNC_MAX_ARGS];

				/* the rows that fail a qual are hidden as NULLs from every aggregate but count(*) */
				check_rows(node, st, b);
				for (int k = 0; k < st->n_proj && k < FUNC_MAX_ARGS; k++)
				{
					saved[k] = b->columns[k]->validity;
					b->columns[k]->validity = st->masks[k];
				}
				if (st->grouped)
					assign_groups(st, b->columns[st->key_col], b->length, st->pass);
				for (int k = 0; k < st->n_aggs; k++)
					fold_batch(st, k, b);
				for (int k = 0; k < st->n_proj && k < FUNC_MAX_ARGS; k++)
					b->columns[k]->validity = saved[k];
				for (int64 r = 0; r < b->length; r++)
					st->rows_aggregated += st->pass[r];
				continue;
			}
			if (st->grouped)
				assign_groups(st, b->columns[st->key_col], b->length, NULL);
			for (int k = 0; k < st->n_aggs; k++)
				fold_batch(st, k, b);
			st->rows_aggregated += b->length;
		}
		if (st->scanner)
		{
			lt_scan_stats stats;

			lt_fragment_scanner_stats(st->scanner, &stats);
			st->rows_filtered += stats.rows_filtered;
		}
		upper_close_scanner(st);
	}
}

static TupleTableSlot *
upper_iterate(ForeignScanState *node)
{
	LtUpperState *st = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	MemoryContext old;
	int64		g;

	ExecClearTuple(slot);
	if (!st->done)
	{
		old = MemoryContextSwitchTo(st->agg_cxt);
		upper_compute(node, st);
		MemoryContextSwitchTo(old);
		st->done = true;
		st->next_out = 0;
	}
	if (st->next_out >= st->n_groups)
		return slot;
	g = st->next_out++;
	old = MemoryContextSwitchTo(node->ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	for (int c = 0; c < st->n_out; c++)
	{
		const LtOutput *o = &st->out[c];

		if (o->is_key)
		{
			slot->tts_values[c] = st->groups[g].key;
			slot->tts_isnull[c] = st->groups[g].keynull;
		}
		else
			slot->tts_values[c] = agg_final(st, o->agg, &st->accs[g * st->n_aggs + o->agg],
											&slot->tts_isnull[c]);
	}
	MemoryContextSwitchTo(old);
	return ExecStoreVirtualTuple(slot);
}

static void
upper_rescan(ForeignScanState *node)
{
	LtUpperState *st = node->fdw_state;

	/* without parameters nothing the aggregates depend on changes: replay the result */
	st->next_out = 0;
	if (st->filter && node->ss.ps.chgParam != NULL)
	{
		/* recompute with the new parameter values */
		MemoryContextReset(st->agg_cxt);
		st->groups = NULL;
		st->accs = NULL;
		st->slots = NULL;
		st->n_slots = 0;
		st->n_groups = 0;
		st->cap_groups = 0;
		st->null_group = -1;
		st->scratch_len = 0;
		st->vi = NULL;
		st->vd = NULL;
		st->vn = NULL;
		st->gidx = NULL;
		st->done = false;
	}
}

static void
upper_end(ForeignScanState *node)
{
	LtUpperState *st = node->fdw_state;

	if (st == NULL)
		return;
	if (st->lib_cxt)
		upper_close_scanner(st);
	upper_state_release(st);
}

static const char *
agg_name(const LtAggSpec *ag)
{
	switch (ag->kind)
	{
		case LT_AGG_COUNT_STAR:
		case LT_AGG_COUNT:
			return "count";
		case LT_AGG_SUM_INT:
		case LT_AGG_SUM_INT8:
		case LT_AGG_SUM_FLOAT4:
		case LT_AGG_SUM_FLOAT8:
		case LT_AGG_SUM_NUMERIC:
			return "sum";
		case LT_AGG_AVG_INT:
		case LT_AGG_AVG_INT8:
		case LT_AGG_AVG_FLOAT:
		case LT_AGG_AVG_NUMERIC:
			return "avg";
		case LT_AGG_MIN:
			return "min";
		case LT_AGG_MAX:
			return "max";
	}
	return "?";
}

static void
upper_explain(ForeignScanState *node, ExplainState *es)
{
	LtUpperState *st = node->fdw_state;
	lt_dataset *ds;
	StringInfoData buf;

	if (st == NULL || st->entry == NULL)
		return;
	ds = st->entry->ds;
	initStringInfo(&buf);
	for (int k = 0; k < st->n_aggs; k++)
	{
		const LtAggSpec *ag = &st->aggs[k];

		if (k > 0)
			appendStringInfoString(&buf, ", ");
		if (ag->kind == LT_AGG_COUNT_STAR)
			appendStringInfoString(&buf, "count(*)");
		else
			appendStringInfo(&buf, "%s(%s)", agg_name(ag), quote_identifier(ag->attname));
	}
	if (st->grouped)
		appendStringInfo(&buf, "%sGROUP BY %s", st->n_aggs ? " " : "", quote_identifier(st->key_attname));
	if (st->metadata)
		appendStringInfoString(&buf, " from metadata");
	ExplainPropertyText("Lance Aggregate", buf.data, es);
	ltfdw_explain_dataset(&st->opts, es);
	ExplainPropertyUInteger("Lance Version", NULL, st->entry->version, es);
	if (st->opts.tag)
		ExplainPropertyText("Lance Tag", st->opts.tag, es);
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		resetStringInfo(&buf);
		appendStringInfo(&buf, "%zu total, " UINT64_FORMAT " to scan", ds->n_fragments,
						 st->metadata ? 0 : (uint64) ds->n_fragments - ltfdw_index_pruned(st->index));
		ExplainPropertyText("Fragments", buf.data, es);
	}
	else
	{
		ExplainPropertyUInteger("Fragments Total", NULL, ds->n_fragments, es);
		ExplainPropertyUInteger("Fragments To Scan", NULL,
								st->metadata ? 0 : (uint64) ds->n_fragments - ltfdw_index_pruned(st->index), es);
	}
	if (st->filter && ltfdw_filter_text(st->filter))
		ExplainPropertyText("Lance Filter", ltfdw_filter_text(st->filter), es);
	ltfdw_index_explain(st->index, es);
	if (es->analyze)
	{
		ExplainPropertyUInteger("Fragments Scanned", NULL, st->fragments_scanned, es);
		ExplainPropertyUInteger("Rows Aggregated", NULL, st->rows_aggregated, es);
		ExplainPropertyUInteger("Rows Removed by Deletion Vectors", NULL, st->rows_deleted, es);
		if (st->filter)
			ExplainPropertyUInteger("Rows Removed by Lance Filter", NULL, st->rows_filtered, es);
		ExplainPropertyUInteger("Bytes Read", NULL, st->bytes_read, es);
		ExplainPropertyUInteger("Read Requests", NULL, st->read_requests, es);
	}
}

/* ---- the handler's entry points: base scans go to scan.c, aggregate scans stay here ------------- */

void
lt_upper_BeginForeignScan(ForeignScanState *node, int eflags)
{
	if (lt_upper_is_agg_plan((ForeignScan *) node->ss.ps.plan))
		upper_begin(node, eflags);
	else
		ltBeginForeignScan(node, eflags);
}

TupleTableSlot *
lt_upper_IterateForeignScan(ForeignScanState *node)
{
	if (lt_upper_is_agg_plan((ForeignScan *) node->ss.ps.plan))
		return upper_iterate(node);
	return ltIterateForeignScan(node);
}

void
lt_upper_ReScanForeignScan(ForeignScanState *node)
{
	if (lt_upper_is_agg_plan((ForeignScan *) node->ss.ps.plan))
		upper_rescan(node);
	else
		ltReScanForeignScan(node);
}

void
lt_upper_EndForeignScan(ForeignScanState *node)
{
	if (lt_upper_is_agg_plan((ForeignScan *) node->ss.ps.plan))
		upper_end(node);
	else
		ltEndForeignScan(node);
}

void
lt_upper_ExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	if (lt_upper_is_agg_plan((ForeignScan *) node->ss.ps.plan))
		upper_explain(node, es);
	else
		ltExplainForeignScan(node, es);
}
