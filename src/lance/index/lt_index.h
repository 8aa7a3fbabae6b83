/*
 * lt_index.h — scalar indexes of a dataset: metadata, readers and lookups.
 *
 * The manifest's IndexSection lists index segments (IndexMetadata): a uuid,
 * a name shared by every segment of one index, the indexed field ids, the
 * fragments the segment covers (a portable 32-bit roaring bitmap), the kind
 * (index_details.type_url) and the files in _indices/<uuid>/.  Index files
 * are Lance 2.x files, read with lt_file and the field readers.
 *
 * Kinds read here (Lance 8):
 *   btree       page_lookup.lance (min, max, null_count, page_idx per page of
 *               page_data.lance) + page_data.lance (values sorted, nulls
 *               first, and the row ids).  Exact.
 *   bitmap      bitmap_page_lookup.lance: keys and a RowAddrTreeMap each.  Exact.
 *   label_list  the same over list elements, plus a RowAddrTreeMap of rows
 *               whose list is NULL in a global buffer.  Exact.
 *   zonemap     zonemap.lance: min/max/null_count/nan_count per zone of rows
 *               of a fragment.  "At most": a superset to recheck.
 * Other kinds (vector, full text, ...) are listed as LT_INDEX_UNKNOWN and
 * never used.
 *
 * Coverage: a segment answers for its fragments that still exist; fragments of
 * the dataset no segment covers are "unindexed" and must be scanned with the
 * filter (e.g. fragments appended after the index was built).  Index payloads
 * hold row ids, which are row addresses unless the dataset uses stable row
 * ids; then they are translated through the covered fragments' row-id
 * sequences (zone maps of such datasets are refused).
 *
 * Lookups take an lt_filter over exactly one column, the indexed field (the
 * FDW builds it from the quals on that column), and evaluate it with the
 * filter's own semantics (Postgres's: three-valued logic, NaN above every
 * number, bytewise strings) on index keys; page/zone pruning is derived from
 * the same expression.  Results are row-address sets restricted to the covered
 * fragments, with deleted rows removed.
 */
#ifndef LT_INDEX_H
#define LT_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/lt_dataset.h"
#include "table/lt_filter.h"
#include "table/lt_roaring.h"
#include "util/lt_status.h"

typedef enum lt_index_kind
{
	LT_INDEX_UNKNOWN = 0,
	LT_INDEX_BTREE,
	LT_INDEX_BITMAP,
	LT_INDEX_LABEL_LIST,
	LT_INDEX_ZONEMAP
} lt_index_kind;

const char *lt_index_kind_name(lt_index_kind k);	/* "btree", ..., "unknown" */

/* One IndexMetadata entry. */
typedef struct lt_index_segment
{
	char		uuid[37];		/* canonical 8-4-4-4-12 text */
	uint64_t	dataset_version;
	int32_t		index_version;	/* -1 when absent */
	uint32_t   *fragments;		/* fragment_bitmap as stored, ascending */
	uint64_t	n_fragments;
	size_t		n_files;
	char	  **files;			/* names inside _indices/<uuid>/ (may be empty: older writers) */
	bool		has_base;		/* a branch's index, whose files are under base path base_id */
	uint32_t	base_id;
} lt_index_segment;

/* The store path of a segment's directory, "<prefix>_indices/<uuid>/" (lt_malloc'd; NULL on ENOMEM). */
char	   *lt_index_segment_dir(const lt_dataset *ds, const lt_index_segment *seg);

/* Every segment with one name. */
typedef struct lt_index
{
	char	   *name;
	lt_index_kind kind;			/* of the first segment; segments of one kind only */
	const char *type_url;		/* borrowed from the manifest */
	int			n_fields;
	int32_t    *field_ids;
	const lt_field *field;		/* the indexed top-level field; NULL if not (yet) found */
	size_t		n_segments;
	lt_index_segment *segments;
	/* coverage against the dataset's fragments, both ascending */
	uint32_t   *covered;
	size_t		n_covered;
	uint32_t   *unindexed;
	size_t		n_unindexed;
	/* why the index cannot answer queries (NULL when it can), e.g. "unknown index type" */
	const char *unusable;
} lt_index;

typedef struct lt_index_list
{
	size_t		n;
	lt_index   *items;			/* in manifest order of first appearance */
} lt_index_list;

/*
 * The indexes of ds (an empty list when there are none).  A fragment bitmap
 * that does not validate is LT_ECORRUPT naming the manifest and the index.
 */
lt_code		lt_dataset_indexes(const lt_dataset *ds, lt_index_list **out, lt_error *err);
void		lt_index_list_free(lt_index_list *l);
const lt_index *lt_index_list_find(const lt_index_list *l, const char *name);
/* The first usable index on top-level field id (of any kind when kind is UNKNOWN). */
const lt_index *lt_index_list_for_field(const lt_index_list *l, int32_t field_id, lt_index_kind kind);
/* True when fragment id is covered by idx. */
bool		lt_index_covers(const lt_index *idx, uint32_t fragment_id);


/* --- lookups -------------------------------------------------------------- */

typedef struct lt_index_reader lt_index_reader;

/*
 * Open idx's files for lookups (metadata and small lookup tables are read
 * now; data pages on demand).  LT_EUNSUPPORTED when idx->unusable.  Errors in
 * index files are LT_ECORRUPT naming the file.  ds must outlive the reader.
 */
lt_code		lt_index_open(lt_dataset *ds, const lt_index *idx, lt_index_reader **out, lt_error *err);
void		lt_index_close(lt_index_reader *r);
const lt_index *lt_index_reader_index(const lt_index_reader *r);

typedef struct lt_index_stats
{
	uint64_t	pages_total;	/* btree pages / zones / bitmap keys */
	uint64_t	pages_read;		/* of those, read for this lookup */
	uint64_t	keys_matched;	/* bitmap/label_list keys whose bitmaps were used */
	uint64_t	rows_deleted;	/* addresses dropped by deletion vectors */
} lt_index_stats;

/*
 * Rows of the covered fragments where filter is TRUE.  filter has exactly one
 * column, the indexed field (matching type); its parameters are set.  *exact
 * is false for zonemaps: the set holds every candidate row (whole zones) and
 * the filter must still be applied to them.  Deleted rows are removed.
 * Expressions a kind cannot answer are LT_EUNSUPPORTED (the caller scans).
 * stats may be NULL.
 */
lt_code		lt_index_search(lt_index_reader *r, lt_filter *filter, lt_rowaddr_set **out, bool *exact,
							lt_index_stats *stats, lt_error *err);

/*
 * Rows an inexact index proves to match, without reading them: for a zonemap
 * the zones whose min and max are one value (no nulls, no NaNs) that passes
 * the filter; for exact kinds the same as lt_index_search.  Deleted rows are
 * removed.  A subset of lt_index_search's answer.
 */
lt_code		lt_index_search_proven(lt_index_reader *r, lt_filter *filter, lt_rowaddr_set **out, lt_error *err);

/* label_list: rows whose list contains every value (@>) or any value (&&). */
typedef enum lt_label_op
{
	LT_LABEL_HAS_ALL,
	LT_LABEL_HAS_ANY
} lt_label_op;

/*
 * values are of the list's element kind (as filter literals); a NULL value
 * never matches (so HAS_ALL with one is empty).  HAS_ALL of no values selects
 * every row whose list is not NULL, HAS_ANY of none selects nothing (as
 * Postgres's @> '{}' and && '{}').  Deleted rows are removed.
 */
lt_code		lt_index_search_labels(lt_index_reader *r, lt_label_op op, int n, const lt_value *values,
								   lt_rowaddr_set **out, lt_index_stats *stats, lt_error *err);

/*
 * For planning, from what lt_index_open read (no further I/O): an estimate of the distinct non-null
 * values the index holds (btree: per page at most max - min + 1 for integer keys, 1 when min = max;
 * bitmap: its keys; segments added up) and of the rows they are spread over (btree: its non-null
 * keys; bitmap: the covered fragments' rows).  LT_EUNSUPPORTED for other kinds.
 */
lt_code		lt_index_distinct(lt_index_reader *r, double *distinct, double *rows, lt_error *err);

/* The whole covered part of the dataset: every live row of the covered fragments. */
lt_code		lt_index_covered_rows(lt_index_reader *r, lt_rowaddr_set **out, lt_error *err);

/*
 * Helpers on row-address sets relative to a dataset.
 *
 * lt_rowaddr_set_universe: offsets [0, physical_rows) of the listed fragments
 * (all of ds's when frags is NULL).
 * lt_rowaddr_set_resolve: replace "whole fragment" entries by [0, physical_rows)
 * and drop fragments ds does not have.
 * lt_rowaddr_set_remove_deleted: drop rows deletion vectors mark (*removed may be NULL).
 */
lt_code		lt_rowaddr_set_universe(lt_dataset *ds, const uint32_t *frags, size_t n, lt_rowaddr_set **out,
									lt_error *err);
lt_code		lt_rowaddr_set_resolve(lt_dataset *ds, lt_rowaddr_set *s, lt_error *err);
lt_code		lt_rowaddr_set_remove_deleted(lt_dataset *ds, lt_rowaddr_set *s, uint64_t *removed, lt_error *err);

#endif
