/*
 * upper_exec.c — aggregate pushdown's execution: the ForeignScan upper.c planned, over decoded column
 * vectors (what is pushed, and how it is planned: upper.c).
 *
 * Length (~2,200 lines): one concern, the aggregate scan; its parts (accumulators, loading, grouping,
 * spilling, folding, the scan and its EXPLAIN) share LtUpperState, which a further split would have to
 * export.
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
 * Groups live within hash_mem: past it, rows of new groups are spilled to temporary files and aggregated
 * partition by partition afterwards, as PostgreSQL's hash aggregation does (the spilling section below).
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
#include "utils/logtape.h"
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
#include "xact.h"
#include "index/lt_index_plan.h"
#include "util/lt_value.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

/* ---- execution: accumulators -------------------------------------------------------------------- */

struct LtUpperState;
static void ensure_scratch(struct LtUpperState *st, int64 n);

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

/*
 * Spilling, as PostgreSQL's hash aggregation does: once the groups fill their memory, rows of groups not
 * in memory are written to logical tapes, one per partition of the key hash (the next bits of it at each
 * level), in scan order; each partition is then aggregated alone, recursively.  A row is one record:
 *   uint32 length, uint64 hash, uint8 key is null, the key (text: int64 length + bytes; int: int64;
 *   Datum keys: the canonical int64 and the first row's Datum), then per aggregate but count(*):
 *   uint8 valid and, for sum/avg/min/max, its loaded value (8 bytes, 16 for numerics).
 */
typedef struct LtSpillOut
{
	int			shift;			/* hash bits used by the levels above */
	int			bits;			/* this level's: 1 << bits partitions */
	LogicalTape **tapes;
	int64	   *rows;
} LtSpillOut;

typedef struct LtSpillBatch
{
	LogicalTape *tape;
	int			used_bits;
	int			depth;
	int64		rows;
} LtSpillBatch;

/* One aggregate input of a spilled row (loaded as the fold reads it). */
typedef struct LtStageVal
{
	int128		v;				/* int64, double bits, or int128 */
	bool		valid;
} LtStageVal;

/* Groups always allowed in memory, whatever hash_mem says, so that every pass makes progress. */
#define LT_MIN_GROUPS 64

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
	MemoryContext group_cxt;	/* groups, accumulators, keys: reset between spilled partitions */
	Size		group_limit;	/* group_cxt's bytes beyond which new groups are spilled */
	bool		groups_full;

	/* spilling (grouped only) */
	MemoryContext spill_cxt;	/* tapes and their buffers */
	LogicalTapeSet *tapeset;
	int			spill_bits;		/* partitions per level: 1 << spill_bits */
	LtSpillOut *spill_out;		/* where the current pass spills to */
	int			cur_used_bits;	/* hash bits the current pass's input has used */
	int			cur_depth;
	List	   *batches;		/* LtSpillBatch, processed last in first out */
	int64		n_spill;		/* rows of this batch spilled */
	int64	   *spill_row;
	uint64	   *spill_hash;
	int64	   *spill_ikey;
	Datum	   *spill_key;
	LtStageVal *stage;			/* scratch_len x n_aggs, once something spills */
	uint8	   *eff_valid;
	bool	   *eff_pass;
	StringInfoData rec;
	char	   *chunk;			/* records read back */
	Size		chunk_cap;
	int64	   *chunk_off;

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
	uint64		spill_batches;	/* partitions aggregated from tapes */
	uint64		spill_partitions;	/* partitions written */
	uint64		rows_spilled;	/* rows written (a row spilled twice counts twice) */
	int			spill_depth;
	uint64		spill_disk_peak;	/* blocks of the tape set */
	Size		group_mem_peak;
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
 * Whether one more group fits in hash_mem (st->group_limit), its arrays' growth included.  Once they
 * are full no group is created until the pass ends: rows of the groups in memory keep folding there,
 * the others are spilled (as PostgreSQL's hash aggregation does).  LT_MIN_GROUPS always fit.
 */
static bool
room_for_group(LtUpperState *st)
{
	Size		need;

	if (st->groups_full)
		return false;
	if (!st->grouped || st->n_groups < LT_MIN_GROUPS)
		return true;
	need = MemoryContextMemAllocated(st->group_cxt, true);
	if (st->n_groups == st->cap_groups)
		need += (sizeof(LtGroup) + sizeof(LtAcc) * Max(st->n_aggs, 1)) * st->cap_groups * 2;
	if ((uint64) (st->n_groups + 1) * 2 > st->n_slots)
		need += sizeof(uint32) * st->n_slots * 2;
	if (need > st->group_limit)
		st->groups_full = true;
	return !st->groups_full;
}

static void
grow_groups(LtUpperState *st)
{
	if (st->n_groups < st->cap_groups)
		return;
	st->cap_groups = st->cap_groups ? st->cap_groups * 2 : 64;
	if (st->groups == NULL)
	{
		st->groups = MemoryContextAllocHuge(st->group_cxt, sizeof(LtGroup) * st->cap_groups);
		st->accs = MemoryContextAllocHuge(st->group_cxt, sizeof(LtAcc) * st->cap_groups * Max(st->n_aggs, 1));
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
	uint32	   *slots = MemoryContextAllocHuge(st->group_cxt, sizeof(uint32) * n);

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

/* The Datum of an integer key, of the column's declared type. */
static Datum
int_key_datum(const LtUpperState *st, int64 ikey)
{
	switch (st->key_conv->typid)
	{
		case INT2OID:
			return Int16GetDatum((int16) ikey);
		case INT4OID:
			return Int32GetDatum((int32) ikey);
		default:
			return Int64GetDatum(ikey);
	}
}

/*
 * The group of a key (hash h; ikey the canonical value of int/Datum keys, s/len a text key's bytes), or
 * -1 when it is not in memory and no group can be created (the row is spilled).  *created: the caller
 * sets the new group's key Datum (in group_cxt).
 */
static int64
lookup_group(LtUpperState *st, uint64 h, bool keynull, int64 ikey, const char *s, int64 len, bool *created)
{
	uint64		i;
	int64		g;
	LtGroup    *grp;

	*created = false;
	if (keynull)
	{
		if (st->null_group < 0)
		{
			if (!room_for_group(st))
				return -1;
			st->null_group = new_group(st);
			st->groups[st->null_group].keynull = true;
			st->groups[st->null_group].hash = h;
			*created = true;
		}
		return st->null_group;
	}
	if (st->n_slots == 0)
		rehash(st);
	for (i = h & (st->n_slots - 1);; i = (i + 1) & (st->n_slots - 1))
	{
		uint32		gi = st->slots[i];

		if (gi == 0)
			break;
		grp = &st->groups[gi - 1];
		if (grp->hash != h)
			continue;
		if (st->key_kind == LT_KEY_TEXT ? (grp->slen == len && memcmp(grp->skey, s, len) == 0)
			: grp->ikey == ikey)
			return gi - 1;
	}
	if (!room_for_group(st))
		return -1;
	if (st->n_groups >= (int64) PG_UINT32_MAX - 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lt_fdw: too many groups")));
	if ((uint64) (st->n_groups + 1) * 2 > st->n_slots)
	{
		rehash(st);
		for (i = h & (st->n_slots - 1); st->slots[i]; i = (i + 1) & (st->n_slots - 1))
			;
	}
	g = new_group(st);
	grp = &st->groups[g];
	grp->hash = h;
	grp->ikey = ikey;
	if (st->key_kind == LT_KEY_TEXT)
	{
		char	   *copy = MemoryContextAlloc(st->group_cxt, len + 1);

		memcpy(copy, s, len);
		copy[len] = '\0';
		grp->skey = copy;
		grp->slen = len;
	}
	st->slots[i] = (uint32) (g + 1);
	*created = true;
	return g;
}

/* The hash of a non-null key. */
static inline uint64
key_hash(const LtUpperState *st, int64 ikey, const char *s, int64 len)
{
	if (st->key_kind == LT_KEY_TEXT)
		return hash_bytes_extended((const unsigned char *) s, (int) len, 0);
	return mix64((uint64) ikey);
}

/* The group of row r of the key column a (dkey: its Datum for Datum keys), or -1: the row is spilled. */
static int32
group_of_row(LtUpperState *st, const lt_array *a, int64 r, int64 ikey, Datum dkey)
{
	bool		keynull = !lt_array_is_valid(a, r);
	const char *s = NULL;
	int64		len = 0;
	uint64		h = 0;
	bool		created;
	int64		g;

	if (!keynull && st->key_kind == LT_KEY_TEXT)
	{
		s = (const char *) a->data + a->offsets[r];
		len = a->offsets[r + 1] - a->offsets[r];
	}
	if (!keynull)
		h = key_hash(st, ikey, s, len);
	g = lookup_group(st, h, keynull, ikey, s, len, &created);
	if (g < 0)
	{
		int64		k = st->n_spill++;

		st->spill_row[k] = r;
		st->spill_hash[k] = h;
		st->spill_ikey[k] = ikey;
		st->spill_key[k] = dkey;
		return -1;
	}
	if (created && !keynull)
	{
		if (st->key_kind == LT_KEY_INT)
			st->groups[g].key = int_key_datum(st, ikey);
		else if (st->key_kind == LT_KEY_DATUM)
			st->groups[g].key = dkey;
		else
		{
			MemoryContext old = MemoryContextSwitchTo(st->group_cxt);
			bool		isnull;

			st->groups[g].key = lt_conv_datum(st->key_conv, a, r, &isnull);
			MemoryContextSwitchTo(old);
		}
	}
	return (int32) g;
}

static void
assign_groups(LtUpperState *st, const lt_array *a, int64 n, const bool *pass)
{
	st->n_spill = 0;
	switch (st->key_kind)
	{
		case LT_KEY_INT:
			lt_array_int64s(a, n, st->vi);
			for (int64 r = 0; r < n; r++)
				st->gidx[r] = (pass && !pass[r]) ? 0 : group_of_row(st, a, r, st->vi[r], 0);
			break;
		case LT_KEY_TEXT:
			for (int64 r = 0; r < n; r++)
				st->gidx[r] = (pass && !pass[r]) ? 0 : group_of_row(st, a, r, 0, 0);
			break;
		case LT_KEY_DATUM:
			for (int64 r = 0; r < n; r++)
			{
				int64		ikey = 0;
				Datum		d = 0;

				if (pass && !pass[r])
				{
					st->gidx[r] = 0;
					continue;
				}
				if (lt_array_is_valid(a, r))
				{
					bool		isnull;

					d = lt_conv_datum(st->key_conv, a, r, &isnull);
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
				st->gidx[r] = group_of_row(st, a, r, ikey, d);
			}
			break;
	}
}

/* ---- execution: spilling ------------------------------------------------------------------------ */

/* The size of aggregate k's value in a spilled record: -1 none at all (count(*)), 0 a valid byte only. */
static int
stage_size(const LtAggSpec *ag)
{
	if (ag->kind == LT_AGG_COUNT_STAR)
		return -1;
	if (ag->kind == LT_AGG_COUNT)
		return 0;
	return ag->vc == LT_VAL_DECIMAL ? 16 : 8;
}

/* Partitions per level and the groups' share of hash_mem, as PostgreSQL's hash aggregation chooses. */
static void
spill_set_limits(LtUpperState *st)
{
	Size		hash_mem = get_hash_memory_limit();
	Size		parts = (hash_mem > BLCKSZ ? (hash_mem - BLCKSZ) / BLCKSZ : 0);
	Size		partition_mem;

	parts = Min(parts, 32);
	parts = Max(parts, 4);
	st->spill_bits = 0;
	while (((Size) 2 << st->spill_bits) <= parts)
		st->spill_bits++;
	partition_mem = BLCKSZ * (((Size) 1 << st->spill_bits) + 1);
	st->group_limit = hash_mem > 4 * partition_mem ? hash_mem - partition_mem : hash_mem / 4 * 3;
}

/* The partitions the current pass spills to, made at its first spilled row. */
static LtSpillOut *
spill_out(LtUpperState *st)
{
	LtSpillOut *so;
	int			bits = Min(st->spill_bits, 64 - st->cur_used_bits);
	MemoryContext old;

	if (st->spill_out)
		return st->spill_out;
	/* the key hash's 64 bits are used up: more than LT_MIN_GROUPS keys share one hash */
	if (bits == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("lt_fdw: the GROUP BY pushed down to foreign table \"%s\" cannot be partitioned to fit hash_mem (%zu kB)",
						RelationGetRelationName(st->rel), get_hash_memory_limit() / 1024),
				 errdetail("Too many keys share one hash value."),
				 errhint("SET lt_fdw.enable_aggregate_pushdown = off.")));
	old = MemoryContextSwitchTo(st->spill_cxt);
	if (st->tapeset == NULL)
		st->tapeset = LogicalTapeSetCreate(false, NULL, -1);
	so = palloc0(sizeof(LtSpillOut));
	so->shift = st->cur_used_bits;
	so->bits = bits;
	so->tapes = palloc0(sizeof(LogicalTape *) << bits);
	so->rows = palloc0(sizeof(int64) << bits);
	MemoryContextSwitchTo(old);
	st->spill_out = so;
	return so;
}

static void
spill_write(LtUpperState *st, uint64 h, const char *rec, Size len)
{
	LtSpillOut *so = spill_out(st);
	int			p = so->bits == 0 ? 0 : (int) ((h << so->shift) >> (64 - so->bits));
	MemoryContext old = MemoryContextSwitchTo(st->spill_cxt);

	if (so->tapes[p] == NULL)
	{
		so->tapes[p] = LogicalTapeCreate(st->tapeset);
		st->spill_partitions++;
	}
	LogicalTapeWrite(so->tapes[p], (void *) rec, len);
	MemoryContextSwitchTo(old);
	so->rows[p]++;
	st->rows_spilled++;
}

static void
ensure_stage(LtUpperState *st)
{
	if (st->stage == NULL)
		st->stage = MemoryContextAllocHuge(st->agg_cxt, sizeof(LtStageVal) * st->scratch_len * Max(st->n_aggs, 1));
}

/* Aggregate k's loaded values (and validity) of the batch's spilled rows, into the stage. */
static void
spill_stage(LtUpperState *st, int k, const uint8 *valid)
{
	const LtAggSpec *ag = &st->aggs[k];

	for (int64 i = 0; i < st->n_spill; i++)
	{
		int64		r = st->spill_row[i];
		LtStageVal *sv = &st->stage[i * st->n_aggs + k];

		sv->valid = !valid || valid[r];
		sv->v = 0;
		if (stage_size(ag) <= 0 || !sv->valid)
			continue;
		switch (ag->vc)
		{
			case LT_VAL_FLOAT4:
			case LT_VAL_FLOAT8:
				{
					int64		bits;

					memcpy(&bits, &st->vd[r], 8);
					sv->v = bits;
					break;
				}
			case LT_VAL_DECIMAL:
				sv->v = st->vn[r];
				break;
			default:
				sv->v = st->vi[r];
				break;
		}
	}
}

/* The records of the batch's spilled rows (key column a), to their partitions. */
static void
spill_batch_rows(LtUpperState *st, const lt_array *a)
{
	StringInfo	rec = &st->rec;

	for (int64 i = 0; i < st->n_spill; i++)
	{
		int64		r = st->spill_row[i];
		uint8		keynull = !lt_array_is_valid(a, r);
		uint32		len;

		resetStringInfo(rec);
		appendBinaryStringInfo(rec, (char *) &len, sizeof(len));
		appendBinaryStringInfo(rec, (char *) &st->spill_hash[i], sizeof(uint64));
		appendBinaryStringInfo(rec, (char *) &keynull, 1);
		if (!keynull)
		{
			if (st->key_kind == LT_KEY_TEXT)
			{
				int64		slen = a->offsets[r + 1] - a->offsets[r];

				appendBinaryStringInfo(rec, (char *) &slen, sizeof(int64));
				appendBinaryStringInfo(rec, (const char *) a->data + a->offsets[r], (int) slen);
			}
			else
			{
				appendBinaryStringInfo(rec, (char *) &st->spill_ikey[i], sizeof(int64));
				if (st->key_kind == LT_KEY_DATUM)
					appendBinaryStringInfo(rec, (char *) &st->spill_key[i], sizeof(Datum));
			}
		}
		for (int k = 0; k < st->n_aggs; k++)
		{
			int			size = stage_size(&st->aggs[k]);
			const LtStageVal *sv = &st->stage[i * st->n_aggs + k];
			uint8		valid = sv->valid;

			if (size < 0)
				continue;
			appendBinaryStringInfo(rec, (char *) &valid, 1);
			if (size > 0 && valid)
				appendBinaryStringInfo(rec, (char *) &sv->v, size);
		}
		len = (uint32) rec->len;
		memcpy(rec->data, &len, sizeof(len));
		spill_write(st, st->spill_hash[i], rec->data, rec->len);
	}
}

/* The end of a pass: its partitions become batches (rewound: their write buffers are freed). */
static void
spill_finish(LtUpperState *st)
{
	LtSpillOut *so = st->spill_out;
	MemoryContext old;

	if (so == NULL)
		return;
	old = MemoryContextSwitchTo(st->spill_cxt);
	for (int p = 0; p < (1 << so->bits); p++)
	{
		LtSpillBatch *b;

		if (so->tapes[p] == NULL)
			continue;
		LogicalTapeRewindForRead(so->tapes[p], BLCKSZ);
		b = palloc0(sizeof(LtSpillBatch));
		b->tape = so->tapes[p];
		b->used_bits = so->shift + so->bits;
		b->depth = st->cur_depth + 1;
		b->rows = so->rows[p];
		st->batches = lappend(st->batches, b);
	}
	st->spill_disk_peak = Max(st->spill_disk_peak, (uint64) LogicalTapeSetBlocks(st->tapeset));
	pfree(so->tapes);
	pfree(so->rows);
	pfree(so);
	st->spill_out = NULL;
	MemoryContextSwitchTo(old);
}

/* Tapes and batches gone (the end, a rescan); an error leaves them to the resource owner. */
static void
spill_release(LtUpperState *st)
{
	if (st->tapeset)
		LogicalTapeSetClose(st->tapeset);
	st->tapeset = NULL;
	st->spill_out = NULL;
	st->batches = NIL;
	MemoryContextReset(st->spill_cxt);
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

/* Aggregate k's column of batch b into the scratch vectors (what the fold reads); its validity. */
static const uint8 *
load_agg(LtUpperState *st, int k, const lt_batch *b)
{
	const LtAggSpec *ag = &st->aggs[k];
	int64		n = b->length;
	const lt_array *a;

	if (ag->kind == LT_AGG_COUNT_STAR)
		return NULL;
	a = b->columns[ag->col];
	if (ag->kind == LT_AGG_COUNT)
	{
		/* loading checks what the scan's conversion would refuse */
		if (ag->vc == LT_VAL_DATUM)
			load_datum(ag->conv, a, n, st->vi);
		else if (ag->vc == LT_VAL_DECIMAL && ag->precision > 0)
			load_decimal(ag, a, n, st->vn, st->vi);
		return a->validity;
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
	return a->validity;
}

/*
 * Fold n loaded values of aggregate k (st->vi / vd / vn) into their groups (st->gidx when grouped), in
 * row order; valid: the rows with a value (NULL: all), pass: the rows count(*) counts (NULL: all).
 */
static void
fold_values(LtUpperState *st, int k, int64 n, const uint8 *valid, const bool *pass)
{
	const LtAggSpec *ag = &st->aggs[k];
	const int32 *gidx = st->grouped ? st->gidx : NULL;
	LtAcc	   *accs = st->accs + k;
	int64		stride = st->n_aggs;

	if (ag->kind == LT_AGG_COUNT_STAR || ag->kind == LT_AGG_COUNT)
	{
		/* count(*) counts the rows that pass, count(col) the rows with a value */
		const uint8 *counted = ag->kind == LT_AGG_COUNT ? valid : (const uint8 *) pass;

		if (counted == NULL && gidx == NULL)
			accs->n += n;
		else
			for (int64 r = 0; r < n; r++)
				if (!counted || counted[r])
					ACC(r)->n++;
		return;
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
						MemoryContext old = MemoryContextSwitchTo(st->group_cxt);

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

/*
 * Fold aggregate k of batch b.  The rows assign_groups spilled (gidx -1) are staged for their records
 * instead: their values are loaded (and checked) here, with everybody else's.
 */
static void
fold_batch(LtUpperState *st, int k, const lt_batch *b)
{
	const uint8 *valid = load_agg(st, k, b);
	const bool *pass = st->local_check ? st->pass : NULL;
	int64		n = b->length;

	if (st->n_spill > 0)
	{
		ensure_stage(st);
		spill_stage(st, k, valid);
		for (int64 r = 0; r < n; r++)
		{
			st->eff_pass[r] = (!pass || pass[r]) && st->gidx[r] >= 0;
			st->eff_valid[r] = (!valid || valid[r]) && st->gidx[r] >= 0;
		}
		valid = st->eff_valid;
		pass = st->eff_pass;
	}
	fold_values(st, k, n, valid, pass);
}

/* ---- execution: aggregating a spilled partition ------------------------------------------------- */

#define LT_SPILL_CHUNK_BYTES (1024 * 1024)

static void
reset_groups(LtUpperState *st)
{
	st->group_mem_peak = Max(st->group_mem_peak, MemoryContextMemAllocated(st->group_cxt, true));
	MemoryContextReset(st->group_cxt);
	st->groups = NULL;
	st->accs = NULL;
	st->slots = NULL;
	st->n_slots = 0;
	st->n_groups = 0;
	st->cap_groups = 0;
	st->null_group = -1;
	st->groups_full = false;
}

static void
damaged_spill(void)
{
	elog(ERROR, "lt_fdw: a spilled aggregate record could not be read back");
}

/* The next record of tape into st->chunk at off (its length first); false at the tape's end. */
static bool
spill_read(LtUpperState *st, LogicalTape *tape, Size off)
{
	uint32		len;
	size_t		got = LogicalTapeRead(tape, &len, sizeof(len));

	if (got == 0)
		return false;
	if (got != sizeof(len) || len < sizeof(len) + sizeof(uint64) + 1)
		damaged_spill();
	if (off + len > st->chunk_cap)
	{
		Size		cap = Max(st->chunk_cap * 2, off + len);

		st->chunk = st->chunk ? repalloc_huge(st->chunk, cap) : MemoryContextAllocHuge(st->agg_cxt, cap);
		st->chunk_cap = cap;
	}
	memcpy(st->chunk + off, &len, sizeof(len));
	if (LogicalTapeRead(tape, st->chunk + off + sizeof(len), len - sizeof(len)) != len - sizeof(len))
		damaged_spill();
	return true;
}

/* Read n bytes of a record at *p (ending at end) into dst. */
static inline void
rec_take(const char **p, const char *end, void *dst, Size n)
{
	if (*p + n > end)
		damaged_spill();
	memcpy(dst, *p, n);
	*p += n;
}

/* Group record i of the chunk (stage its values), or spill it again (gidx -1). */
static void
replay_record(LtUpperState *st, int64 i)
{
	const char *rec = st->chunk + st->chunk_off[i];
	uint32		len;
	const char *p = rec + sizeof(len);
	const char *end;
	uint64		h;
	uint8		keynull;
	int64		ikey = 0;
	Datum		dkey = 0;
	const char *s = NULL;
	int64		slen = 0;
	bool		created;
	int64		g;

	memcpy(&len, rec, sizeof(len));
	end = rec + len;
	rec_take(&p, end, &h, sizeof(h));
	rec_take(&p, end, &keynull, 1);
	if (!keynull)
	{
		if (st->key_kind == LT_KEY_TEXT)
		{
			rec_take(&p, end, &slen, sizeof(slen));
			if (slen < 0 || p + slen > end)
				damaged_spill();
			s = p;
			p += slen;
		}
		else
		{
			rec_take(&p, end, &ikey, sizeof(ikey));
			if (st->key_kind == LT_KEY_DATUM)
				rec_take(&p, end, &dkey, sizeof(dkey));
		}
	}
	for (int k = 0; k < st->n_aggs; k++)
	{
		int			size = stage_size(&st->aggs[k]);
		LtStageVal *sv = &st->stage[i * st->n_aggs + k];
		uint8		valid;

		sv->v = 0;
		sv->valid = false;
		if (size < 0)
			continue;
		rec_take(&p, end, &valid, 1);
		sv->valid = valid;
		if (size > 0 && valid)
			rec_take(&p, end, &sv->v, size);
	}

	g = lookup_group(st, h, keynull, ikey, s, slen, &created);
	st->gidx[i] = (int32) g;
	if (g < 0)
	{
		spill_write(st, h, rec, len);
		return;
	}
	if (created && !keynull)
	{
		if (st->key_kind == LT_KEY_INT)
			st->groups[g].key = int_key_datum(st, ikey);
		else if (st->key_kind == LT_KEY_DATUM)
			st->groups[g].key = dkey;
		else
		{
			/* the text Datum as the scan converts it: one slot of the key's field type */
			lt_array	one = {0};
			int64		offs[2] = {0, slen};
			MemoryContext old = MemoryContextSwitchTo(st->group_cxt);
			bool		isnull;

			one.field = st->key_conv->field;
			one.length = 1;
			one.offsets = offs;
			one.data = (uint8 *) s;
			one.data_len = slen;
			st->groups[g].key = lt_conv_datum(st->key_conv, &one, 0, &isnull);
			MemoryContextSwitchTo(old);
		}
	}
}

/*
 * Aggregate one spilled partition alone, as the scan did its rows: its groups replace the previous
 * ones; rows of groups that do not fit are spilled again, into partitions by the next hash bits.
 */
static void
aggregate_batch(LtUpperState *st, LtSpillBatch *batch)
{
	bool		more = true;

	reset_groups(st);
	st->cur_used_bits = batch->used_bits;
	st->cur_depth = batch->depth;
	st->spill_depth = Max(st->spill_depth, batch->depth);
	st->spill_batches++;
	ensure_scratch(st, LT_DEFAULT_BATCH_ROWS);
	ensure_stage(st);
	while (more)
	{
		int64		n = 0;
		Size		off = 0;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(st->spill_cxt);
		while (n < st->scratch_len && off < LT_SPILL_CHUNK_BYTES)
		{
			uint32		len;

			if (!spill_read(st, batch->tape, off))
			{
				more = false;
				break;
			}
			memcpy(&len, st->chunk + off, sizeof(len));
			st->chunk_off[n++] = off;
			off += len;
		}
		for (int64 i = 0; i < n; i++)
			replay_record(st, i);
		MemoryContextSwitchTo(old);
		for (int k = 0; k < st->n_aggs; k++)
		{
			const LtAggSpec *ag = &st->aggs[k];

			for (int64 i = 0; i < n; i++)
			{
				const LtStageVal *sv = &st->stage[i * st->n_aggs + k];

				st->eff_pass[i] = st->gidx[i] >= 0;
				st->eff_valid[i] = sv->valid && st->gidx[i] >= 0;
				if (stage_size(ag) <= 0)
					continue;
				if (ag->vc == LT_VAL_FLOAT4 || ag->vc == LT_VAL_FLOAT8)
				{
					int64		bits = (int64) sv->v;

					memcpy(&st->vd[i], &bits, 8);
				}
				else if (ag->vc == LT_VAL_DECIMAL)
					st->vn[i] = sv->v;
				else
					st->vi[i] = (int64) sv->v;
			}
			fold_values(st, k, n, st->eff_valid, st->eff_pass);
		}
	}
	{
		MemoryContext old = MemoryContextSwitchTo(st->spill_cxt);

		LogicalTapeClose(batch->tape);
		pfree(batch);
		MemoryContextSwitchTo(old);
	}
	st->group_mem_peak = Max(st->group_mem_peak, MemoryContextMemAllocated(st->group_cxt, true));
	spill_finish(st);
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
	st->group_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw aggregate groups", ALLOCSET_DEFAULT_SIZES);
	st->spill_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw aggregate spill", ALLOCSET_DEFAULT_SIZES);
	st->lib_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw scanner", ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&st->rec);
	spill_set_limits(st);
}

static void
ensure_scratch(struct LtUpperState *st, int64 n)
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
	if (st->grouped)
	{
		/* what spilling a batch's rows, or reading a partition's back, needs */
		if (st->spill_row)
		{
			pfree(st->spill_row);
			pfree(st->spill_hash);
			pfree(st->spill_ikey);
			pfree(st->spill_key);
			if (st->stage)
				pfree(st->stage);
			pfree(st->eff_valid);
			pfree(st->eff_pass);
			pfree(st->chunk_off);
		}
		st->spill_row = MemoryContextAllocHuge(st->agg_cxt, sizeof(int64) * st->scratch_len);
		st->spill_hash = MemoryContextAllocHuge(st->agg_cxt, sizeof(uint64) * st->scratch_len);
		st->spill_ikey = MemoryContextAllocHuge(st->agg_cxt, sizeof(int64) * st->scratch_len);
		st->spill_key = MemoryContextAllocHuge(st->agg_cxt, sizeof(Datum) * st->scratch_len);
		st->stage = NULL;		/* at the first spilled row: ensure_stage */
		st->eff_valid = MemoryContextAllocHuge(st->agg_cxt, st->scratch_len);
		st->eff_pass = MemoryContextAllocHuge(st->agg_cxt, sizeof(bool) * st->scratch_len);
		st->chunk_off = MemoryContextAllocHuge(st->agg_cxt, sizeof(int64) * st->scratch_len);
	}
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
			/*
			 * the version's files stay open, as in a scan: an indexed aggregate does not open the
			 * data file and read and parse its footer and column metadata again every statement
			 */
			if (!lt_xact_is_view(st->entry))
				so.file_cache = lt_dataset_file_cache(st->entry);
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
				if (st->n_spill > 0)
					spill_batch_rows(st, b->columns[st->key_col]);
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
			if (st->n_spill > 0)
				spill_batch_rows(st, b->columns[st->key_col]);
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
	/* the scan's spilled rows: partitions aggregated once the groups in memory are out */
	st->group_mem_peak = Max(st->group_mem_peak, MemoryContextMemAllocated(st->group_cxt, true));
	spill_finish(st);
}

/* not inlined: its frame would be set up for every row of a base scan in lt_upper_IterateForeignScan */
static pg_noinline TupleTableSlot *
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
	while (st->next_out >= st->n_groups)
	{
		LtSpillBatch *batch;

		if (st->batches == NIL)
			return slot;
		/* the next spilled partition (the last made first, as PostgreSQL does: few tapes at once) */
		batch = llast(st->batches);
		st->batches = list_delete_last(st->batches);
		old = MemoryContextSwitchTo(st->agg_cxt);
		aggregate_batch(st, batch);
		MemoryContextSwitchTo(old);
		st->next_out = 0;
	}
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

	/* without parameters nothing the aggregates depend on changes: replay the result (unless spilled) */
	st->next_out = 0;
	if ((st->filter && node->ss.ps.chgParam != NULL) || st->rows_spilled > 0)
	{
		/* recompute with the new parameter values */
		spill_release(st);
		reset_groups(st);
		MemoryContextReset(st->agg_cxt);
		st->scratch_len = 0;
		st->vi = NULL;
		st->vd = NULL;
		st->vn = NULL;
		st->gidx = NULL;
		st->spill_row = NULL;
		st->stage = NULL;
		st->chunk = NULL;
		st->chunk_cap = 0;
		st->pass = NULL;
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
	if (st->spill_cxt)
		spill_release(st);
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
		if (st->rows_spilled > 0)
		{
			/* as PostgreSQL's HashAggregate says it spilled */
			ExplainPropertyUInteger("Batches", NULL, st->spill_batches + 1, es);
			ExplainPropertyUInteger("Partitions Spilled", NULL, st->spill_partitions, es);
			ExplainPropertyUInteger("Rows Spilled", NULL, st->rows_spilled, es);
			ExplainPropertyUInteger("Spill Depth", NULL, (uint64) st->spill_depth, es);
			ExplainPropertyUInteger("Group Memory Usage", "kB", (st->group_mem_peak + 1023) / 1024, es);
			ExplainPropertyUInteger("Disk Usage", "kB", st->spill_disk_peak * (BLCKSZ / 1024), es);
		}
	}
}

/* ---- the handler's entry points: base scans go to scan.c, aggregate scans stay here ------------- */

void
lt_upper_BeginForeignScan(ForeignScanState *node, int eflags)
{
	if (lt_upper_is_agg_plan((ForeignScan *) node->ss.ps.plan))
		upper_begin(node, eflags);
	else
	{
		FdwRoutine *direct = palloc(sizeof(FdwRoutine));

		/*
		 * ForeignNext calls node->fdwroutine->IterateForeignScan for every row: this node's own copy
		 * of the routine calls the base scan's directly, not through lt_upper_IterateForeignScan
		 */
		*direct = *node->fdwroutine;
		direct->IterateForeignScan = ltIterateForeignScan;
		node->fdwroutine = direct;
		ltBeginForeignScan(node, eflags);
	}
	/* a plan with Gather: its workers read the versions this leader chose (after every scan began) */
	if (node->ss.ps.state->es_plannedstmt->parallelModeNeeded)
		lt_dataset_publish_pins();
}

TupleTableSlot *
lt_upper_IterateForeignScan(ForeignScanState *node)
{
	/* per row: a base-relation scan (scanrelid != 0) is never an aggregate plan, and is the common case */
	if (((ForeignScan *) node->ss.ps.plan)->scan.scanrelid != 0)
		return ltIterateForeignScan(node);
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
