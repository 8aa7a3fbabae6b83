/*
 * convert.h — the type mapping, read side (convert.c): checks of declared columns against fields,
 * lt_array slot -> Datum, one at a time or a batch.
 */
#ifndef LT_FDW_CONVERT_H
#define LT_FDW_CONVERT_H

#include "access/tupdesc.h"
#include "fmgr.h"

#include "types/lt_array.h"
#include "types/lt_schema.h"

typedef enum LtConvKind
{
	LT_CONV_SCALAR,				/* the natural mapping of a scalar field */
	LT_CONV_TEXT,				/* any scalar into text, through the natural type's output */
	LT_CONV_ARRAY,				/* list / large_list / fixed_size_list of a scalar -> T[] */
	LT_CONV_COMPOSITE,			/* struct -> composite */
	LT_CONV_JSONB,				/* anything -> jsonb */
	LT_CONV_BLOB				/* a blob column -> bytea: the descriptor's bytes, read when converted */
} LtConvKind;

/*
 * Where a blob column's bytes are read from: the scan sets it for each fragment it opens
 * (ltfdw_bind_blob_sources, scan.c) to the data file that holds the field.
 */
struct lt_dataset;
typedef struct LtBlobSource
{
	struct lt_dataset *ds;
	char	   *data_file;		/* "data/<file>.lance", relative to the dataset; NULL: none bound */
	MemoryContext cxt;			/* where data_file lives */
} LtBlobSource;

typedef struct LtConv
{
	LtConvKind	kind;
	const lt_field *field;
	Oid			typid;			/* the declared (target) type */
	int32		typmod;
	Oid			natural;		/* LT_CONV_TEXT: the natural type of the field */
	FmgrInfo	outfn;			/* LT_CONV_TEXT: its output function */
	/* LT_CONV_ARRAY */
	struct LtConv *elem;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	/* LT_CONV_COMPOSITE */
	TupleDesc	tupdesc;
	int		   *child_index;	/* per attribute: struct child index, -1 for a dropped attribute */
	struct LtConv **children;
	/* LT_CONV_BLOB */
	LtBlobSource *blob_src;
} LtConv;

/* Point a blob column's conversion (others: nothing) at the data file of frag that holds its field. */
struct Lt__Pb__DataFragment;
extern void lt_conv_bind_blob(LtConv *conv, struct lt_dataset *ds, const struct Lt__Pb__DataFragment *frag);

/* Build the conversion of `field` into a column of type typid/typmod; NULL (with *why) if impossible. */
extern LtConv *lt_conv_build(const lt_field *field, Oid typid, int32 typmod, char **why);
extern Datum lt_conv_datum(const LtConv *conv, const lt_array *a, int64 i, bool *isnull);
/*
 * Batch conversion (scan.c): lt_conv_batchable tells whether a conversion has a batch loop;
 * lt_conv_batch converts slots [start, start + n) of `a` (NULL: all null) into values[k * stride] /
 * nulls[k * stride], k = 0 .. n-1, in CurrentMemoryContext (the strings or binary values of a call in
 * one block), and returns how many it converted: n, or the index of the first slot it cannot convert
 * (lt_conv_datum raises that slot's error). nulls_false: the caller has set those nulls to false
 * already, and `a` has no validity bitmap (nothing is written to nulls then).
 */
extern bool lt_conv_batchable(const LtConv *conv);
extern int	lt_conv_batch(const LtConv *conv, const lt_array *a, int64 start, int n, Datum *values, bool *nulls,
						  int stride, bool nulls_false);
/* The Postgres type a field maps to by default (InvalidOid when none); *typmod gets its typmod. */
extern Oid	lt_natural_type(const lt_field *field, int32 *typmod);
/* SQL text of the type for IMPORT (composite types need their name); NULL when unsupported. */
extern char *lt_type_sql(const lt_field *field);

#endif
