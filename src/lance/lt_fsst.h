/*
 * lt_fsst.h — FSST string decompression (Lance's fsst crate format).
 *
 * The symbol table is always LT_FSST_TABLE_SIZE bytes: a u64 header
 * ("FSST" << 32 | encoder_switch << 24 | suffix_lim << 16 | terminator << 8 |
 * n_symbols), n_symbols u64 symbols, then n_symbols u8 lengths, then zeros.
 * Shared by the 2.0 and 2.1 readers.
 */
#ifndef LT_FSST_H
#define LT_FSST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_status.h"

#define LT_FSST_TABLE_SIZE 2312
#define LT_FSST_ESC 255

typedef struct lt_fsst_table
{
	uint64_t	symbols[256];	/* little-endian symbol bytes */
	uint8_t		lens[256];		/* 0 for codes without a symbol */
	int			n_symbols;
	bool		enabled;		/* false: strings are stored uncompressed */
} lt_fsst_table;

/* Parse a symbol table; `what` names it in error messages. */
lt_code		lt_fsst_parse(const uint8_t *buf, size_t len, lt_fsst_table *t, const char *what, lt_error *err);

/* Largest possible decoded size of `len` compressed bytes. */
static inline uint64_t lt_fsst_max_decoded(uint64_t len) { return len * 8; }

/*
 * Decode one compressed string into out, which must have room for
 * lt_fsst_max_decoded(len) bytes (the decoder stores 8 bytes at a time).
 * Returns the decoded length, or -1 when the input is corrupt (an unknown
 * code or a trailing escape).  With the table disabled this is a copy.
 */
int64_t		lt_fsst_decode(const lt_fsst_table *t, const uint8_t *in, size_t len, uint8_t *out);

#endif
