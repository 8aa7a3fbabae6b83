/*
 * test_rq.c — src/lance/vector/lt_rq.c: the engine's fast rotation of IVF_RQ (sign flips, Walsh-Hadamard
 * rounds scaled by 1/sqrt(2^k); for a code_dim not a power of two the head and tail in turn, a Kac walk per
 * round and a final 1/4) against values worked out by hand, and as a rotation: lengths and dot products kept,
 * for a power-of-two code_dim, one that is not, and vectors zero-padded to a larger code_dim.  lt_rq_pack (a
 * compaction's remap packs a partition's kept codes again) is the inverse of the reader's lt_rq_packed_byte for
 * partitions of whole blocks of 32 rows, a tail, both, and none.  Damaged RQ files
 * are test/interop/vector.sh's (lt-inspect under ASan, and SQL's XX001 naming the file).
 */
#include <math.h>
#include <string.h>

#include "unit.h"

#include "vector/lt_rq.h"

static lt_rq
rotation(uint32_t dim, uint32_t code_dim, uint8_t *signs)
{
	lt_rq		rq;

	memset(&rq, 0, sizeof(rq));
	rq.dim = dim;
	rq.code_dim = code_dim;
	rq.code_bytes = code_dim / 8;
	rq.signs = signs;
	return rq;
}

static double
dot(const float *a, const float *b, uint32_t n)
{
	double		s = 0;

	for (uint32_t i = 0; i < n; i++)
		s += (double) a[i] * b[i];
	return s;
}

TEST(by_hand)
{
	/* code_dim 8, no sign flipped: each round is H8 / sqrt(8), and (H8 / sqrt(8))^2 is the identity */
	uint8_t		none[4] = {0, 0, 0, 0},
				first[4] = {1, 0, 0, 0};
	float		v[8] = {1, 0, 0, 0, 0, 0, 0, 0},
				out[8];
	lt_rq		rq = rotation(8, 8, none);

	lt_rq_rotate(&rq, v, out);
	for (int i = 0; i < 8; i++)
		CHECK(fabsf(out[i] - v[i]) < 1e-6f);
	/* coordinate 0 negated before the first round: the first two rounds give -e0, the last two keep it */
	rq = rotation(8, 8, first);
	lt_rq_rotate(&rq, v, out);
	CHECK(fabsf(out[0] + 1.0f) < 1e-6f);
	for (int i = 1; i < 8; i++)
		CHECK(fabsf(out[i]) < 1e-6f);
}

TEST(is_a_rotation)
{
	/* code_dim 16 (a power of two), 24 (not: head and tail of 16 in turn), and 12 dimensions padded to 16 */
	uint32_t	shapes[3][2] = {{16, 16}, {24, 24}, {12, 16}};

	for (int s = 0; s < 3; s++)
	{
		uint32_t	dim = shapes[s][0],
					cd = shapes[s][1];
		uint8_t		signs[12];
		float		a[24] = {0},
					b[24] = {0},
					ra[24],
					rb[24];
		lt_rq		rq;
		uint64_t	x = 88172645463325252ull;

		for (int i = 0; i < 12; i++)
		{
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			signs[i] = (uint8_t) x;
		}
		for (uint32_t i = 0; i < dim; i++)
		{
			a[i] = (float) sin(1.0 + i) * 3.0f;
			b[i] = (float) cos(2.0 * i) - 0.25f;
		}
		rq = rotation(dim, cd, signs);
		lt_rq_rotate(&rq, a, ra);
		lt_rq_rotate(&rq, b, rb);
		CHECK(fabs(dot(ra, ra, cd) - dot(a, a, dim)) <= 1e-5 * dot(a, a, dim));
		CHECK(fabs(dot(rb, rb, cd) - dot(b, b, dim)) <= 1e-5 * dot(b, b, dim));
		CHECK(fabs(dot(ra, rb, cd) - dot(a, b, dim)) <= 1e-5 * sqrt(dot(a, a, dim) * dot(b, b, dim)));
		/* and not the identity: the signs and transforms moved the vector */
		CHECK(fabs(dot(ra, a, dim) - dot(a, a, dim)) > 1e-3);
	}
}

TEST(pack_unpacks)
{
	static const uint32_t lens[] = {0, 1, 5, 31, 32, 45, 64, 70, 97};
	static uint8_t rows[97 * 3],
				packed[97 * 3];
	uint64_t	s = 7;

	for (size_t t = 0; t < sizeof(lens) / sizeof(lens[0]); t++)
		for (uint32_t cb = 1; cb <= 3; cb++)
		{
			uint32_t	len = lens[t],
						same = 0;

			for (uint32_t i = 0; i < len * cb; i++)
			{
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				rows[i] = (uint8_t) (s >> 56);
			}
			lt_rq_pack(rows, len, cb, packed);
			for (uint32_t r = 0; r < len; r++)
				for (uint32_t j = 0; j < cb; j++)
					same += lt_rq_packed_byte(packed, len, cb, r, j) == rows[(size_t) r * cb + j];
			CHECK_EQ_INT(same, len * cb);
		}
}

int
main(void)
{
	RUN(by_hand);
	RUN(is_a_rotation);
	RUN(pack_unpacks);
	return unit_report("rq rotation");
}
