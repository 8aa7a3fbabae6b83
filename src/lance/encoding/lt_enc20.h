/*
 * lt_enc20.h — page decoder for Lance 2.0 data files (ArrayEncoding trees).
 *
 * Works on bytes already in memory: the reader (lt_reader20.c) loads a page's
 * buffers and hands them here with the page's encoding.  Decoding appends
 * rows [skip, skip + n) of the page to an lt_array of the target field.
 * Kept separate from the I/O so unit tests and fuzzers can drive it directly.
 */
#ifndef LT_ENC20_H
#define LT_ENC20_H

#include <stdint.h>

#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

struct Lt__Enc20__ArrayEncoding;
struct Lt__Enc20__List;

/* Resolves a column (kind 1) or file (kind 2) buffer; page buffers are in the page. */
typedef lt_code (*lt_enc20_resolve_fn) (void *arg, int kind, uint32_t index,
										const uint8_t **p, uint64_t *len, lt_error *err);

typedef struct lt_enc20_cache_entry lt_enc20_cache_entry;

/* One page in memory. */
typedef struct lt_enc20_page
{
	const char *path;			/* for messages */
	int32_t		column;
	uint32_t	page;
	uint64_t	num_rows;		/* rows ("items" for list item columns) in the page */
	uint32_t	n_bufs;
	const uint8_t *const *bufs;
	const uint64_t *lens;
	lt_enc20_resolve_fn resolve;	/* may be NULL */
	void	   *resolve_arg;
	/* decompressed buffers and decoded dictionaries, keyed by encoding node */
	int			n_cache;
	int			cap_cache;
	lt_enc20_cache_entry *cache;
} lt_enc20_page;

/* Append rows [skip, skip+n) of the page, decoded with enc, to dst (an array of field's type). */
lt_code		lt_enc20_decode(lt_enc20_page *pg, const struct Lt__Enc20__ArrayEncoding *enc,
							const lt_field *field, uint64_t skip, uint64_t n, lt_array *dst, lt_error *err);

/*
 * List offsets page: append list slots [skip, skip+n) to dst (a list array;
 * offsets and validity only, not items) and return the item range they cover,
 * relative to the first item of this page.
 */
lt_code		lt_enc20_list_offsets(lt_enc20_page *pg, const struct Lt__Enc20__List *list,
								  uint64_t skip, uint64_t n, lt_array *dst,
								  uint64_t *item_lo, uint64_t *item_hi, lt_error *err);

/* Drop cached decompressed buffers and dictionaries (before reusing pg for another page). */
void		lt_enc20_page_reset(lt_enc20_page *pg);

/* Most rows or buffer bytes one page may claim (defends against bombs). */
#define LT_ENC20_MAX_PAGE_ROWS ((uint64_t) 1 << 32)

#endif
