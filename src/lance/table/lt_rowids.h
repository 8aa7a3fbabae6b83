/*
 * lt_rowids.h — stable row-id sequences and row version sequences.
 *
 * With stable row ids (manifest feature flag 2) every fragment carries a
 * RowIdSequence: the u64 row id of each physical row, as a list of U64Segment
 * (Range, RangeWithHoles, RangeWithBitmap, SortedArray, Array).  The
 * created_at / last_updated_at columns come from RowDatasetVersionSequence:
 * runs of rows sharing one dataset version.
 *
 * Facts the decoder relies on (checked against Lance 8 data):
 *  - Range is [start, end).
 *  - RangeWithHoles.holes holds absolute ids (not offsets from start), sorted.
 *  - RangeWithBitmap has end-start bits, least significant bit of each byte
 *    first; a set bit means the id is present.
 *  - EncodedU64Array values are base + offset (u16/u32 LE) or raw u64 LE.
 *
 * The parsers validate everything (ordering, overflow, lengths) and require the
 * sequence to cover exactly physical_rows rows.  Nothing is materialised
 * until asked: a fragment of 1M rows in one Range costs a few bytes.
 */
#ifndef LT_ROWIDS_H
#define LT_ROWIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/lt_status.h"

/* Row offsets are 32-bit (the low half of a row address). */
#define LT_MAX_FRAGMENT_ROWS	(UINT64_C(1) << 32)

typedef struct lt_rowid_seq lt_rowid_seq;

/* Parse a fragment's inline_row_ids (or an external row-id file's bytes). */
lt_code		lt_rowid_seq_parse(const uint8_t *buf, size_t len, uint64_t physical_rows,
							   lt_rowid_seq **out, lt_error *err);
void		lt_rowid_seq_free(lt_rowid_seq *s);

uint64_t	lt_rowid_seq_len(const lt_rowid_seq *s);

/* True when row i has id start + i for every row (one plain Range). */
bool		lt_rowid_seq_is_range(const lt_rowid_seq *s, uint64_t *start);

/* Ids of rows [pos, pos + n) into dst.  LT_EINVALID past the end. */
lt_code		lt_rowid_seq_fill(const lt_rowid_seq *s, uint64_t pos, uint64_t n, uint64_t *dst,
							  lt_error *err);

/* The physical offset holding row id `id`, if this fragment has it. */
bool		lt_rowid_seq_find(const lt_rowid_seq *s, uint64_t id, uint64_t *pos);

/* Convenience: every id of the fragment, lt_malloc'd (physical_rows entries). */
lt_code		lt_rowids_decode(const uint8_t *buf, size_t len, uint64_t physical_rows,
							 uint64_t **ids, lt_error *err);


typedef struct lt_version_seq lt_version_seq;

/* Parse inline_created_at_versions / inline_last_updated_at_versions. */
lt_code		lt_version_seq_parse(const uint8_t *buf, size_t len, uint64_t physical_rows,
								 lt_version_seq **out, lt_error *err);
void		lt_version_seq_free(lt_version_seq *s);

/* Version of row pos (pos < physical_rows). */
uint64_t	lt_version_seq_at(const lt_version_seq *s, uint64_t pos);

/* Versions of rows [pos, pos + n).  LT_EINVALID past the end. */
lt_code		lt_version_seq_fill(const lt_version_seq *s, uint64_t pos, uint64_t n, uint64_t *dst,
								lt_error *err);

#endif
