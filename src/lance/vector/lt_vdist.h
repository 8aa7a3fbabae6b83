/*
 * lt_vdist.h — vector distances with pgvector's meaning.
 *
 *   L2       sqrt(sum (a_i - b_i)^2)                         (<->, l2_distance)
 *   COSINE   1 - a.b / sqrt(|a|^2 |b|^2), the cosine clamped to [-1, 1]; NaN when a norm is 0
 *                                                             (<=>, cosine_distance)
 *   NEG_DOT  -(a.b)                                           (<#>)
 *   DOT      a.b                                              (inner_product)
 *   HAMMING  the bits that differ: sum popcount(a_i xor b_i) over bytes (<~>, hamming_distance;
 *            Lance's hamming metric of binary vectors, fixed_size_list<uint8, N>)
 *
 * The float32 kernels accumulate in float (as pgvector and Lance do) in eight lanes combined in a
 * fixed order, so the compiler may vectorise the loop and every caller gets the same bits: the SQL
 * functions and the exact kNN of a scan use these same functions, so a scan's ranking is exactly
 * the ORDER BY of the SQL expression.  The float64 kernels accumulate in double.
 */
#ifndef LT_VDIST_H
#define LT_VDIST_H

#include <stddef.h>
#include <stdint.h>

typedef enum lt_vmetric
{
	LT_VMETRIC_L2 = 0,
	LT_VMETRIC_COSINE,
	LT_VMETRIC_NEG_DOT,
	LT_VMETRIC_DOT,
	LT_VMETRIC_HAMMING
} lt_vmetric;

/* "l2", "cosine", "negative_dot", "dot", "hamming" */
const char *lt_vmetric_name(lt_vmetric m);

double		lt_vdist_f32(lt_vmetric m, const float *a, const float *b, size_t n);
double		lt_vdist_f64(lt_vmetric m, const double *a, const double *b, size_t n);
/* LT_VMETRIC_HAMMING of n bytes (the other metrics are of float vectors) */
double		lt_vdist_hamming(const uint8_t *a, const uint8_t *b, size_t n);

#endif
