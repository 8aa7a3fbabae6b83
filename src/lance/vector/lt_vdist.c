/*
 * lt_vdist.c — vector distances (lt_vdist.h).
 */
#include "vector/lt_vdist.h"

#include <math.h>
#include <string.h>

#define LANES 8

const char *
lt_vmetric_name(lt_vmetric m)
{
	switch (m)
	{
		case LT_VMETRIC_L2:
			return "l2";
		case LT_VMETRIC_COSINE:
			return "cosine";
		case LT_VMETRIC_NEG_DOT:
			return "negative_dot";
		case LT_VMETRIC_DOT:
			return "dot";
		case LT_VMETRIC_HAMMING:
			return "hamming";
	}
	return "unknown";
}

static double
cosine_of(double dot, double na, double nb)
{
	double		sim = dot / sqrt(na * nb);

	if (isnan(sim))
		return NAN;
	if (sim > 1.0)
		sim = 1.0;
	else if (sim < -1.0)
		sim = -1.0;
	return 1.0 - sim;
}

/*
 * One distance loop per element type: LANES independent accumulators (the compiler vectorises them;
 * the order of the final sum is fixed, so a result does not depend on the build), the tail folded
 * into the same lanes.  The sums are kept in the element type, as pgvector's are.
 */
#define DEFINE_VDIST(NAME, T) \
static inline T \
NAME##_sum(const T *acc) \
{ \
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])); \
} \
\
double \
NAME(lt_vmetric m, const T *a, const T *b, size_t n) \
{ \
	T			acc[LANES] = {0}, \
				na[LANES] = {0}, \
				nb[LANES] = {0}; \
	size_t		i = 0, \
				body = n - n % LANES; \
\
	switch (m) \
	{ \
		case LT_VMETRIC_L2: \
			for (; i < body; i += LANES) \
				for (int l = 0; l < LANES; l++) \
				{ \
					T			d = a[i + l] - b[i + l]; \
\
					acc[l] += d * d; \
				} \
			for (; i < n; i++) \
			{ \
				T			d = a[i] - b[i]; \
\
				acc[i % LANES] += d * d; \
			} \
			return sqrt((double) NAME##_sum(acc)); \
		case LT_VMETRIC_COSINE: \
			for (; i < body; i += LANES) \
				for (int l = 0; l < LANES; l++) \
				{ \
					acc[l] += a[i + l] * b[i + l]; \
					na[l] += a[i + l] * a[i + l]; \
					nb[l] += b[i + l] * b[i + l]; \
				} \
			for (; i < n; i++) \
			{ \
				acc[i % LANES] += a[i] * b[i]; \
				na[i % LANES] += a[i] * a[i]; \
				nb[i % LANES] += b[i] * b[i]; \
			} \
			return cosine_of((double) NAME##_sum(acc), (double) NAME##_sum(na), (double) NAME##_sum(nb)); \
		case LT_VMETRIC_NEG_DOT: \
		case LT_VMETRIC_DOT: \
			for (; i < body; i += LANES) \
				for (int l = 0; l < LANES; l++) \
					acc[l] += a[i + l] * b[i + l]; \
			for (; i < n; i++) \
				acc[i % LANES] += a[i] * b[i]; \
			return m == LT_VMETRIC_DOT ? (double) NAME##_sum(acc) : -(double) NAME##_sum(acc); \
		case LT_VMETRIC_HAMMING: \
			break; \
	} \
	return NAN; \
}

DEFINE_VDIST(lt_vdist_f32, float)
DEFINE_VDIST(lt_vdist_f64, double)

double
lt_vdist_hamming(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint64_t	bits = 0;
	size_t		i = 0;

	/* eight bytes at a time (unaligned loads through memcpy), then the tail */
	for (; i + 8 <= n; i += 8)
	{
		uint64_t	x,
					y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		bits += (uint64_t) __builtin_popcountll(x ^ y);
	}
	for (; i < n; i++)
		bits += (uint64_t) __builtin_popcount((unsigned) (a[i] ^ b[i]));
	return (double) bits;
}
