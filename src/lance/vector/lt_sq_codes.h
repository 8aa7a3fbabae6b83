/*
 * lt_sq_codes.h — Lance's scalar quantizer (SQ) storage, shared by the IVF_SQ and IVF_HNSW_SQ readers.
 *
 * The storage file (auxiliary.idx) holds column "__sq_code" (fixed_size_list<uint8, dim>) beside "_rowid",
 * and schema metadata "storage_metadata" = a JSON list of one JSON string {"dim", "num_bits": 8,
 * "bounds": {"start": lo, "end": hi}}: every value v was stored as the byte (v - lo) * 255 / (hi - lo),
 * computed in double and cast as Rust's `as u8` does (truncated, saturating; all 0 when lo == hi).
 *
 * The engine scores a query against a row on the codes: the query is encoded the same way, then
 *   l2, cosine   sum (a_i - b_i)^2 over the bytes (integers), as float
 *   dot          1 - sum a_i * b_i over the bytes, as float
 * and the result is scaled back as d times (hi - lo)^2 / 255^2 in float (the dot value keeps the scale:
 * it orders the rows, it is not a dot product of the vectors).  The factor's float rounding differs by
 * engine (checked against their distances bit for bit): Lance 8 squares the float range and divides by
 * 255^2, Lance 12 squares the float step (hi - lo) / 255.  Lance 12 scores dot against the values the
 * codes stand for instead (lance#7481): 1 - sum q_i * (lo + c_i * (hi - lo) / 255) for the float query.
 */
#ifndef LT_SQ_CODES_H
#define LT_SQ_CODES_H

#include <stdbool.h>
#include <stdint.h>

#include "index/lt_index_file.h"
#include "util/lt_status.h"
#include "vector/lt_vdist.h"

typedef struct lt_sq_codes
{
	uint32_t	dim;
	uint32_t	bits;			/* 8 */
	double		lo,
				hi;				/* the bounds */
	const lt_field *field;		/* "__sq_code" of the storage file */
} lt_sq_codes;

/* The quantizer of storage file aux for vectors of dim; LT_ECORRUPT naming the file when it does not hold. */
lt_code		lt_sq_codes_open(lt_index_file *aux, uint32_t dim, lt_sq_codes *sq, lt_error *err);

/*
 * x as the engine codes it: (x - lo) * 255 / range cast as Rust's `as u8` (truncation toward zero, saturating, NaN
 * to 0); 0 when range is 0.
 */
static inline uint8_t
lt_sq_code(double x, double lo, double range)
{
	double		v;

	if (range == 0)
		return 0;
	v = (x - lo) * 255.0 / range;
	return !(v > 0) ? 0 : v >= 255 ? 255 : (uint8_t) v;
}

/* v (dim floats) as the engine encodes it, into out (dim bytes). */
void		lt_sq_encode(const lt_sq_codes *sq, const float *v, uint8_t *out);

/*
 * The engine's score of codes a against b for the index's metric m (COSINE and L2 score alike; NEG_DOT:
 * the dot form), scaled back by the bounds.
 */
float		lt_sq_distance(const lt_sq_codes *sq, lt_vmetric m, const uint8_t *a, const uint8_t *b);

/* The same, unscaled (the integer sum, or 1 - the integer dot product, as float). */
float		lt_sq_code_score(const lt_sq_codes *sq, lt_vmetric m, const uint8_t *a, const uint8_t *b);

/* The factor that scales a code score back: Lance 8's (lt_sq_distance's), or with lance12 Lance 12's. */
float		lt_sq_scale(const lt_sq_codes *sq, bool lance12);

/* Lance 12's dot score of code c for float query q (dim floats) whose sum is qsum. */
float		lt_sq_dot_affine(const lt_sq_codes *sq, const float *q, float qsum, const uint8_t *c);

#endif
