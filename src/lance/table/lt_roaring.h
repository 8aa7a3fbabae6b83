/*
 * lt_roaring.h — Roaring bitmaps from untrusted bytes, and row-address sets.
 *
 * Lance stores 32-bit Roaring bitmaps in the "portable" serialization (deletion
 * .bin files, index fragment_bitmap, bitmap-index payloads).  CRoaring 0.2.66
 * accepts malformed portable input that later crashes it, so this module parses
 * and validates the format itself; CRoaring only ever sees bitmaps built through
 * its in-memory API from values that were already checked.
 *
 * Portable format (all little-endian):
 *   cookie 12346: u32 cookie, u32 n, n x (u16 key, u16 card-1), n x u32 offset
 *   cookie 12347: u32 (12347 | (n-1) << 16), ceil(n/8) bytes run flags,
 *                 n x (u16 key, u16 card-1), n x u32 offset only when n >= 4
 * then n containers: run (u16 nruns, nruns x (u16 start, u16 len-1)),
 * array (card x u16, card <= 4096) or bitmap (1024 x u64, card > 4096).
 *
 * Validation is strict: keys strictly increasing, offsets equal to where each
 * container really starts, array values strictly increasing, bitmap popcount
 * and run lengths equal to the declared cardinality, runs in range and
 * non-overlapping.  Every conforming writer (CRoaring, roaring-rs, Java)
 * satisfies all of these.  Adjacent runs and stray run-flag bits past the
 * last container are accepted, as the reference readers accept them.
 */
#ifndef LT_ROARING_H
#define LT_ROARING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/lt_status.h"

#define LT_ROARING_COOKIE_NORUN	12346
#define LT_ROARING_COOKIE_RUN	12347

typedef struct lt_roaring_info
{
	size_t		size;			/* bytes the bitmap occupies from buf */
	uint64_t	cardinality;	/* number of values (up to 2^32) */
	uint32_t	containers;
	uint32_t	min;			/* smallest/largest value; 0 when empty */
	uint32_t	max;
} lt_roaring_info;

/*
 * Validate one portable bitmap at the start of buf (it may be followed by other
 * data: *consumed tells where it ends).  Errors say "roaring: ... at offset N",
 * N relative to buf; callers prefix the file name with lt_error_prefix().
 */
lt_code		lt_roaring_validate(const uint8_t *buf, size_t len, size_t *consumed, lt_error *err);

/* Same, also returning cardinality, container count and min/max. */
lt_code		lt_roaring_inspect(const uint8_t *buf, size_t len, lt_roaring_info *info, lt_error *err);

/*
 * Validate and decode to a sorted, duplicate-free uint32 array (lt_malloc'd;
 * NULL with *n = 0 when empty).  More than max_card values is LT_ECORRUPT,
 * which bounds the allocation (a 1 MB bitmap can hold 2^32 values).
 */
lt_code		lt_roaring_decode_array(const uint8_t *buf, size_t len, uint64_t max_card,
									uint32_t **out, uint64_t *n, size_t *consumed, lt_error *err);

/*
 * Validate and OR the values into a dense bitset: words has (nbits + 63) / 64
 * uint64 words, value v sets bit (v % 64) of words[v / 64].  A value >= nbits
 * is LT_ECORRUPT.  The caller zeroes (or pre-fills) words.
 */
lt_code		lt_roaring_decode_bits(const uint8_t *buf, size_t len, uint64_t nbits,
								   uint64_t *words, size_t *consumed, lt_error *err);

/*
 * Validate and build a CRoaring bitmap (allocated by CRoaring with malloc: free
 * with roaring_bitmap_free()).  The bitmap is assembled with add/add_range, so
 * CRoaring's own deserializer never runs on untrusted bytes.
 */
struct roaring_bitmap_s;
lt_code		lt_roaring_to_croaring(const uint8_t *buf, size_t len, struct roaring_bitmap_s **out,
								   size_t *consumed, lt_error *err);


/*
 * lt_rowaddr_set — a set of 64-bit row addresses (fragment id << 32 | offset),
 * kept as fragment id -> 32-bit CRoaring bitmap, with Lance's "whole fragment"
 * entries (RowAddrTreeMap's Full: every offset of that fragment, count unknown
 * here).  Set algebra follows Lance: full | x = full, full & x = x,
 * full - partial = all 32-bit offsets minus partial, x - full = nothing.
 *
 * CRoaring allocates with malloc and does not report failure on add; the set's
 * own bookkeeping uses lt_malloc.  Not thread-safe.
 */
typedef struct lt_rowaddr_set lt_rowaddr_set;

lt_rowaddr_set *lt_rowaddr_set_create(void);	/* NULL when out of memory */
void		lt_rowaddr_set_free(lt_rowaddr_set *s);

lt_code		lt_rowaddr_set_add(lt_rowaddr_set *s, uint64_t addr, lt_error *err);
/* Add offsets [lo, hi) of one fragment. */
lt_code		lt_rowaddr_set_add_range(lt_rowaddr_set *s, uint32_t frag, uint64_t lo, uint64_t hi, lt_error *err);
/* Select a whole fragment. */
lt_code		lt_rowaddr_set_add_fragment(lt_rowaddr_set *s, uint32_t frag, lt_error *err);
bool		lt_rowaddr_set_contains(const lt_rowaddr_set *s, uint64_t addr);
bool		lt_rowaddr_set_is_empty(const lt_rowaddr_set *s);

/* In place: dst = dst | src, dst & src, dst - src. */
lt_code		lt_rowaddr_set_or(lt_rowaddr_set *dst, const lt_rowaddr_set *src, lt_error *err);
lt_code		lt_rowaddr_set_and(lt_rowaddr_set *dst, const lt_rowaddr_set *src, lt_error *err);
lt_code		lt_rowaddr_set_andnot(lt_rowaddr_set *dst, const lt_rowaddr_set *src, lt_error *err);

/*
 * Number of addresses in partial fragments; *full_fragments (may be NULL) gets
 * the number of whole-fragment entries, whose sizes this set does not know.
 */
uint64_t	lt_rowaddr_set_cardinality(const lt_rowaddr_set *s, uint32_t *full_fragments);

/*
 * Visit fragments in ascending id.  For a partial fragment cb is called one or
 * more times with ascending chunks of offsets (full = false); for a whole
 * fragment once with n = 0 and full = true.  A non-zero return from cb stops
 * the walk and is returned.
 */
typedef int (*lt_rowaddr_cb) (uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg);
int			lt_rowaddr_set_iterate(const lt_rowaddr_set *s, lt_rowaddr_cb cb, void *arg);

/* A deep copy (NULL when out of memory). */
lt_rowaddr_set *lt_rowaddr_set_copy(const lt_rowaddr_set *s);

/*
 * In place: s = universe - s ("NOT" relative to a universe, e.g. every
 * physical row of the covered fragments); fragments outside the universe are
 * dropped.
 */
lt_code		lt_rowaddr_set_not(lt_rowaddr_set *s, const lt_rowaddr_set *universe, lt_error *err);

/* Fragments present in s, ascending (lt_malloc'd; NULL with *n = 0 when empty). */
lt_code		lt_rowaddr_set_fragments(const lt_rowaddr_set *s, uint32_t **ids, size_t *n, lt_error *err);
/* Whether frag is a whole-fragment entry. */
bool		lt_rowaddr_set_is_full(const lt_rowaddr_set *s, uint32_t frag);
/* Offsets selected in frag (0 for absent or whole fragments). */
uint64_t	lt_rowaddr_set_fragment_cardinality(const lt_rowaddr_set *s, uint32_t frag);
/*
 * The offsets of one partial fragment, ascending, lt_malloc'd (what
 * lt_scan_options.offsets takes); NULL with *n = 0 when absent.  A whole
 * fragment is LT_EINVALID (resolve it against the dataset first).
 */
lt_code		lt_rowaddr_set_fragment_offsets(const lt_rowaddr_set *s, uint32_t frag, uint32_t **offsets,
											uint64_t *n, lt_error *err);
/* Remove ascending offsets of frag (a deletion vector); *removed (may be NULL) counts them. */
lt_code		lt_rowaddr_set_remove_offsets(lt_rowaddr_set *s, uint32_t frag, const uint32_t *offsets,
										  uint64_t n, uint64_t *removed, lt_error *err);
/* Drop one fragment. */
void		lt_rowaddr_set_remove_fragment(lt_rowaddr_set *s, uint32_t frag);
/* Limit frag to offsets [0, rows): a whole-fragment entry becomes exactly that range. */
lt_code		lt_rowaddr_set_bound_fragment(lt_rowaddr_set *s, uint32_t frag, uint64_t rows, lt_error *err);

/*
 * Parse Lance's RowAddrTreeMap serialization:
 *   u32 n; n x (u32 fragment id, u32 size, size bytes of portable roaring)
 * size 0 selects the whole fragment.  Fragment ids must be strictly ascending
 * and every entry's bitmap must fill exactly its size; *consumed gets the
 * total length (the map is often followed by other data).
 */
lt_code		lt_rowaddr_set_parse(const uint8_t *buf, size_t len, lt_rowaddr_set **out,
								 size_t *consumed, lt_error *err);

/*
 * The same serialization (roaring in the portable format, whole fragments as
 * size 0), lt_malloc'd.  For tests and index writers.
 */
lt_code		lt_rowaddr_set_serialize(const lt_rowaddr_set *s, uint8_t **out, size_t *len, lt_error *err);

#endif
