/*
 * test_sq_codes.c — src/lance/vector/lt_sq_codes.c: the scalar quantizer's encoding (Rust's truncating,
 * saturating `as u8` of (v - lo) * 255 / (hi - lo) in double; NaN to 0; constant bounds to 0) against
 * values worked out by hand, and its scores (l2 / dot on the codes scaled back by the bounds; Lance
 * 12's dot against the values the codes stand for) against double-precision references.
 */
#include <math.h>

#include "unit.h"

#include "vector/lt_sq_codes.h"

static lt_sq_codes
quantizer(double lo, double hi, uint32_t dim)
{
	lt_sq_codes sq = {0};

	sq.dim = dim;
	sq.bits = 8;
	sq.lo = lo;
	sq.hi = hi;
	return sq;
}

TEST(encode)
{
	lt_sq_codes sq = quantizer(-1.0, 1.0, 8);
	/* 127.5 truncates to 127; 0.999 * 255 / 2 + 127.5 = 254.87 truncates; above hi and below lo saturate */
	float		v[8] = {0.0f, -1.0f, 1.0f, 0.999f, 5.0f, -5.0f, NAN, -0.99999f};
	uint8_t		c[8];

	lt_sq_encode(&sq, v, c);
	CHECK_EQ_INT(c[0], 127);
	CHECK_EQ_INT(c[1], 0);
	CHECK_EQ_INT(c[2], 255);
	CHECK_EQ_INT(c[3], 254);
	CHECK_EQ_INT(c[4], 255);
	CHECK_EQ_INT(c[5], 0);
	CHECK_EQ_INT(c[6], 0);
	CHECK_EQ_INT(c[7], 0);

	/* constant bounds: every code 0 */
	sq = quantizer(3.0, 3.0, 8);
	lt_sq_encode(&sq, v, c);
	for (int i = 0; i < 8; i++)
		CHECK_EQ_INT(c[i], 0);
}

TEST(scores)
{
	lt_sq_codes sq = quantizer(-2.0, 3.0, 4);
	uint8_t		a[4] = {0, 10, 200, 255},
				b[4] = {3, 10, 100, 0};
	double		scale = 25.0 / (255.0 * 255.0);
	double		l2 = (9.0 + 0 + 10000.0 + 65025.0) * scale;
	double		dot = (1.0 - (0 + 100.0 + 20000.0 + 0)) * scale;
	float		q[4] = {0.5f, -1.25f, 2.0f, 0.0f};
	double		ref = 0;
	float		qsum = 0;

	CHECK(fabs(lt_sq_distance(&sq, LT_VMETRIC_L2, a, b) - l2) <= 1e-6 * l2);
	/* cosine scores as l2 (the vectors were normalized before quantizing) */
	CHECK(lt_sq_distance(&sq, LT_VMETRIC_COSINE, a, b) == lt_sq_distance(&sq, LT_VMETRIC_L2, a, b));
	CHECK(fabs(lt_sq_distance(&sq, LT_VMETRIC_NEG_DOT, a, b) - dot) <= 1e-6 * fabs(dot));
	/* symmetric */
	CHECK(lt_sq_distance(&sq, LT_VMETRIC_L2, b, a) == lt_sq_distance(&sq, LT_VMETRIC_L2, a, b));

	/* Lance 12: 1 - sum q_i * (lo + c_i * (hi - lo) / 255) */
	for (int i = 0; i < 4; i++)
	{
		ref += (double) q[i] * (-2.0 + a[i] * 5.0 / 255.0);
		qsum += q[i];
	}
	ref = 1.0 - ref;
	CHECK(fabs(lt_sq_dot_affine(&sq, q, qsum, a) - ref) <= 1e-5 * fmax(1.0, fabs(ref)));
}

int
main(void)
{
	RUN(encode);
	RUN(scores);
	return unit_report("sq codes");
}
