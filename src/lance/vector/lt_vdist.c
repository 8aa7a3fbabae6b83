/*
 * lt_vdist.c — vector distances (lt_vdist.h).
 */
#include "vector/lt_vdist.h"

#include <math.h>

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
	}
	return "unknown";
}

static float
sum_lanes_f(const float *acc)
{
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static double
sum_lanes_d(const double *acc)
{
	return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
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

double
lt_vdist_f32(lt_vmetric m, const float *a, const float *b, size_t n)
{
	float		acc[LANES] = {0},
				na[LANES] = {0},
				nb[LANES] = {0};
	size_t		i = 0,
				body = n - n % LANES;

	switch (m)
	{
		case LT_VMETRIC_L2:
			for (; i < body; i += LANES)
				for (int l = 0; l < LANES; l++)
				{
					float		d = a[i + l] - b[i + l];

					acc[l] += d * d;
				}
			for (; i < n; i++)
			{
				float		d = a[i] - b[i];

				acc[i % LANES] += d * d;
			}
			return sqrt((double) sum_lanes_f(acc));
		case LT_VMETRIC_COSINE:
			for (; i < body; i += LANES)
				for (int l = 0; l < LANES; l++)
				{
					acc[l] += a[i + l] * b[i + l];
					na[l] += a[i + l] * a[i + l];
					nb[l] += b[i + l] * b[i + l];
				}
			for (; i < n; i++)
			{
				acc[i % LANES] += a[i] * b[i];
				na[i % LANES] += a[i] * a[i];
				nb[i % LANES] += b[i] * b[i];
			}
			return cosine_of((double) sum_lanes_f(acc), (double) sum_lanes_f(na), (double) sum_lanes_f(nb));
		case LT_VMETRIC_NEG_DOT:
		case LT_VMETRIC_DOT:
			for (; i < body; i += LANES)
				for (int l = 0; l < LANES; l++)
					acc[l] += a[i + l] * b[i + l];
			for (; i < n; i++)
				acc[i % LANES] += a[i] * b[i];
			return m == LT_VMETRIC_DOT ? (double) sum_lanes_f(acc) : -(double) sum_lanes_f(acc);
	}
	return NAN;
}

double
lt_vdist_f64(lt_vmetric m, const double *a, const double *b, size_t n)
{
	double		acc[LANES] = {0},
				na[LANES] = {0},
				nb[LANES] = {0};
	size_t		i = 0,
				body = n - n % LANES;

	switch (m)
	{
		case LT_VMETRIC_L2:
			for (; i < body; i += LANES)
				for (int l = 0; l < LANES; l++)
				{
					double		d = a[i + l] - b[i + l];

					acc[l] += d * d;
				}
			for (; i < n; i++)
			{
				double		d = a[i] - b[i];

				acc[i % LANES] += d * d;
			}
			return sqrt(sum_lanes_d(acc));
		case LT_VMETRIC_COSINE:
			for (; i < body; i += LANES)
				for (int l = 0; l < LANES; l++)
				{
					acc[l] += a[i + l] * b[i + l];
					na[l] += a[i + l] * a[i + l];
					nb[l] += b[i + l] * b[i + l];
				}
			for (; i < n; i++)
			{
				acc[i % LANES] += a[i] * b[i];
				na[i % LANES] += a[i] * a[i];
				nb[i % LANES] += b[i] * b[i];
			}
			return cosine_of(sum_lanes_d(acc), sum_lanes_d(na), sum_lanes_d(nb));
		case LT_VMETRIC_NEG_DOT:
		case LT_VMETRIC_DOT:
			for (; i < body; i += LANES)
				for (int l = 0; l < LANES; l++)
					acc[l] += a[i + l] * b[i + l];
			for (; i < n; i++)
				acc[i % LANES] += a[i] * b[i];
			return m == LT_VMETRIC_DOT ? sum_lanes_d(acc) : -sum_lanes_d(acc);
	}
	return NAN;
}
