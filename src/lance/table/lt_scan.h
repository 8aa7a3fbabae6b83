/*
 * lt_scan.h — reading a projection of one fragment in batches.
 *
 * The scanner applies the fragment's deletion vector, so batches hold live
 * rows only; each batch carries the rows' addresses (fragment_id << 32 |
 * physical offset) and, on request, their row ids (stable row ids when the
 * dataset has them, else the address).  A selection narrows the scan to a
 * physical row range or to a sorted list of offsets (random access: only
 * the pages holding those rows are read and decoded).
 *
 * With a filter (lt_filter.h) the scanner reads the filter's columns for a
 * batch of live rows, evaluates it, and reads the projected fields only for
 * the rows where it is TRUE (late materialization): batches then hold
 * passing rows only, and pages with no passing row are not decoded for the
 * other fields.
 */
#ifndef LT_SCAN_H
#define LT_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "types/lt_array.h"
#include "table/lt_dataset.h"
#include "table/lt_filter.h"
#include "util/lt_status.h"

struct Lt__Pb__DataFragment;

#define LT_DEFAULT_BATCH_ROWS 8192

typedef struct lt_scan_options
{
	int			n_fields;		/* projected top-level fields of ds->schema */
	const lt_field *const *fields;
	uint64_t	batch_rows;		/* 0 = LT_DEFAULT_BATCH_ROWS */
	uint64_t	first_batch_rows;	/* rows of the first batch only (0 = batch_rows): a
									 * small one lets LIMIT read just the first chunks */
	bool		want_row_ids;
	/* selection: physical rows [range_start, range_end) (range_end 0 = all) ... */
	uint64_t	range_start;
	uint64_t	range_end;
	/* ... or, when offsets != NULL, exactly these physical offsets (ascending) */
	const uint32_t *offsets;
	uint64_t	n_offsets;
	/*
	 * Optional filter; its columns must be top-level fields of ds->schema
	 * (they may be projected too, and are then read once).  Parameters are
	 * set before the scan; the filter serves one scanner at a time.
	 */
	lt_filter  *filter;
	/* Optional: page I/O buffers are taken from and given back to it (lt_bufpool.h) */
	struct lt_bufpool *bufpool;
	/*
	 * Optional: data files are taken from it and stay open after the scan (lt_file_cache.h), so
	 * that later point lookups of the same files read only the rows' chunks.
	 */
	struct lt_file_cache *file_cache;
	/*
	 * Optional, parallel to fields: string fields whose batch arrays get header room before each
	 * value (lt_array.room, for a caller that turns values into its own strings in place) where the
	 * field's reader can (2.1 files) and the array is read, not gathered; each batch array's room
	 * says whether it has it.
	 */
	const bool *room;
} lt_scan_options;

typedef struct lt_batch
{
	int64_t		length;
	int			n_columns;
	lt_array  **columns;		/* parallel to lt_scan_options.fields */
	uint64_t   *row_addrs;
	uint64_t   *row_ids;		/* NULL unless want_row_ids */
} lt_batch;

typedef struct lt_fragment_scanner lt_fragment_scanner;

lt_code		lt_fragment_scanner_open(lt_dataset *ds, const struct Lt__Pb__DataFragment *frag,
									 const lt_scan_options *opts, lt_fragment_scanner **out, lt_error *err);
/* Next batch, or *out = NULL at the end. The batch is valid until the next call. */
lt_code		lt_fragment_scanner_next(lt_fragment_scanner *sc, lt_batch **out, lt_error *err);
void		lt_fragment_scanner_free(lt_fragment_scanner *sc);
/* Pages decoded so far by this scanner's field readers. */
uint64_t	lt_fragment_scanner_pages(const lt_fragment_scanner *sc);

/* Counters for EXPLAIN ANALYZE. */
typedef struct lt_scan_stats
{
	uint64_t	rows_deleted;	/* rows of the selection skipped by the deletion vector */
	uint64_t	rows_scanned;	/* live rows read (filter columns, or everything without a filter) */
	uint64_t	rows_filtered;	/* of those, rows the filter removed */
	uint64_t	pages;			/* as lt_fragment_scanner_pages */
} lt_scan_stats;

void		lt_fragment_scanner_stats(const lt_fragment_scanner *sc, lt_scan_stats *out);

/* The deleted physical offsets of a fragment, ascending (NULL/0 when none). */
lt_code		lt_fragment_deleted_offsets(lt_dataset *ds, const struct Lt__Pb__DataFragment *frag,
										uint32_t **offsets, uint64_t *n, lt_error *err);

#endif
