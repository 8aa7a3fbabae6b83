/*
 * test_value.c — unit tests of lt_value.h's single-value conversions: half precision both ways.
 */
#include <math.h>

#include "util/lt_value.h"
#include "unit.h"

/* every half that is not a NaN survives half -> float -> half */
TEST(half_round_trip)
{
	int			bad = 0;

	for (uint32_t h = 0; h <= 0xffff; h++)
	{
		float		f = lt_half_to_float((uint16_t) h);

		if (isnan(f))
		{
			if (!isnan(lt_half_to_float(lt_float_to_half(f))))
				bad++;
			continue;
		}
		if (lt_float_to_half(f) != h)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
}

/* nearest, ties to even; overflow to infinity; underflow through the subnormals to zero */
TEST(half_rounding)
{
	CHECK_EQ_INT(lt_float_to_half(1.0f), 0x3c00);
	CHECK_EQ_INT(lt_float_to_half(-2.0f), 0xc000);
	CHECK_EQ_INT(lt_float_to_half(65504.0f), 0x7bff);
	CHECK_EQ_INT(lt_float_to_half(65519.0f), 0x7bff);	/* below the halfway point to 65536 */
	CHECK_EQ_INT(lt_float_to_half(65520.0f), 0x7c00);	/* the tie rounds to even: infinity */
	CHECK_EQ_INT(lt_float_to_half(1e10f), 0x7c00);
	CHECK_EQ_INT(lt_float_to_half(-INFINITY), 0xfc00);
	CHECK_EQ_INT(lt_float_to_half(2049.0f), 0x6800);		/* 2048: tie to the even mantissa */
	CHECK_EQ_INT(lt_float_to_half(2051.0f), 0x6802);		/* 2052: tie to the even mantissa */
	CHECK_EQ_INT(lt_float_to_half(2050.5f), 0x6801);		/* 2050: nearest */
	CHECK_EQ_INT(lt_float_to_half(5.9604645e-8f), 0x0001);	/* the smallest subnormal */
	CHECK_EQ_INT(lt_float_to_half(2.9802322e-8f), 0x0000);	/* half of it: a tie, to even zero */
	CHECK_EQ_INT(lt_float_to_half(4.5e-8f), 0x0001);
	CHECK_EQ_INT(lt_float_to_half(6.1035156e-5f), 0x0400);	/* the smallest normal */
	CHECK_EQ_INT(lt_float_to_half(6.0975552e-5f), 0x03ff);	/* the largest subnormal */
	CHECK_EQ_INT(lt_float_to_half(-0.0f), 0x8000);
	CHECK_EQ_INT(lt_float_to_half(1e-30f), 0x0000);
	CHECK(isnan(lt_half_to_float(lt_float_to_half(NAN))));
	CHECK_EQ_INT(lt_half_to_float(lt_float_to_half(0.1f)) == 0.0999755859375f, 1);
}

int
main(void)
{
	RUN(half_round_trip);
	RUN(half_rounding);
	return unit_report("value");
}
