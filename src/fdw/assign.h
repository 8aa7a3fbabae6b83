/*
 * assign.h — field assignment in SQL (issue 17; the state is src/lance/assignment/): lt_track_assignment,
 * the boolean columns that read is_assigned(field) (column option is_assigned), and what writes assign.
 */
#ifndef LT_FDW_ASSIGN_H
#define LT_FDW_ASSIGN_H

#include "postgres.h"

#include "nodes/bitmapset.h"
#include "nodes/nodes.h"
#include "utils/rel.h"

#include "dataset.h"
#include "option.h"
#include "xact.h"
#include "assignment/lt_assignment.h"
#include "table/lt_scan.h"

/* xact.c's PRE_COMMIT hook: the pending lt_track_assignment calls of the dataset, one commit each. */
extern void lt_assign_commit_tracks(LtXactTable *xt);

/* One is_assigned column of a scan: the field's state at the version read (and the own writes). */
typedef struct LtAssignReader LtAssignReader;

/*
 * Bind column attnum (option is_assigned = field) of rel to the version entry reads: ERROR when the
 * column is not boolean, the field is unknown, or the field does not track its assignment there.
 */
extern LtAssignReader *lt_assign_reader_open(Relation rel, const LtTableOptions *opts, LtDatasetEntry *entry,
											 AttrNumber attnum, const char *field);
/* A fragment's state (kind, and for LT_ASSIGN_PARTIAL the assigned offsets, owned by r). */
struct roaring_bitmap_s;
extern void lt_assign_reader_fragment(LtAssignReader *r, uint64 fragment_id, lt_assign_kind *kind,
									  const struct roaring_bitmap_s **rows);
/* The same checks without reading any state (every column of a scan is checked; the field returned). */
extern const lt_field *lt_assign_check_column(Relation rel, const LtTableOptions *opts, const LtDatasetEntry *entry,
											  AttrNumber attnum, const char *field);
/* lt_assign_check_column for every is_assigned column of rel (planning: the errors come before execution). */
extern void lt_assign_check_columns(Relation rel, const LtTableOptions *opts, const LtDatasetEntry *entry);
/* The state of a tracked field at entry's version (and its own writes), by field id; what names it. */
extern LtAssignReader *lt_assign_reader_open_field(LtDatasetEntry *entry, int32 field_id, const char *what);
/* is_assigned(field) of the row at row_addr (fragment << 32 | offset). */
extern bool lt_assign_reader_get(LtAssignReader *r, uint64 row_addr);
/*
 * The planner's share of live rows for which is_assigned(field) of column attnum is true, from the state's
 * counts: whole fragments by their entries, partial ones by their bitmaps (the first LT_ASSIGN_EST_BITMAPS;
 * beyond them half their rows).  Reads the root (and those bitmaps) of the field only.
 */
#define LT_ASSIGN_EST_BITMAPS 64
extern double lt_assign_fraction(Relation rel, const LtTableOptions *opts, LtDatasetEntry *entry, AttrNumber attnum,
								 const char *field);

/*
 * The tracked fields of ds that the columns in cols (attnums offset by FirstLowInvalidHeapAttributeNumber,
 * as insertedCols) write: their ids in *out (palloc'd), their number returned.
 */
extern int	lt_assign_supplied_fields(Relation rel, const lt_dataset *ds, const Bitmapset *cols, int32 **out);

/* The tracked field ids of ds (palloc'd), their number returned. */
extern int	lt_assign_tracked_fields(const lt_dataset *ds, int32 **out);

/* GUC lt_fdw.invalidate_fields (_PG_init). */
extern void lt_assign_init(void);

/* A scan's is_assigned quals (top-level col / NOT col conjuncts): an exact row mask per fragment. */
typedef struct LtAssignMask
{
	int			n;
	LtAssignReader **readers;
	bool	   *want;			/* the column (true) or NOT the column */
} LtAssignMask;

/*
 * Narrow a fragment's selection (so: every row, a range, or offsets) to the rows the mask keeps; false when
 * none is left.  The offsets are allocated in cxt (the caller's per-fragment memory).
 */
extern bool lt_assign_mask_selection(const LtAssignMask *m, const struct Lt__Pb__DataFragment *frag,
									 MemoryContext cxt, lt_scan_options *so);
/*
 * The same for a vector search's prefilter (knn.c, ann.c): the rows among *offsets (NULL: the physical rows
 * [start, end), end 0: to the fragment's end) the mask keeps; *offsets / *n narrowed where a partial state
 * applies, unchanged where every row passes.
 */
extern bool lt_assign_mask_narrow(const LtAssignMask *m, const struct Lt__Pb__DataFragment *frag, MemoryContext cxt,
								  uint64 start, uint64 end, const uint32 **offsets, uint64 *n);
/*
 * The tracked fields lt_fdw.invalidate_fields names for a write (op) of rel: ids in *out, number returned;
 * ERROR for an unknown column or one whose field is not tracked.  0 for DELETE (which never changes the state).
 */
extern int	lt_assign_invalidated_fields(Relation rel, const lt_dataset *ds, CmdType op, int32 **out);

#endif
