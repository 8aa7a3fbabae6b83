/*
 * lt_sq_codes.c — the scalar quantizer's storage and scores (lt_sq_codes.h).
 */
#include "vector/lt_sq_codes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The number after the first "key": in a JSON text that may itself be a JSON string (its quotes
 * escaped as \").
 */
static bool
json_double(const uint8_t *s, size_t len, const char *key, double *out)
{
	size_t		kl = strlen(key);

	for (size_t i = 0; i + kl + 2 < len; i++)
	{
		size_t		j;
		char		num[64];
		size_t		n = 0;
		char	   *end;

		if (s[i] != '"' || memcmp(s + i + 1, key, kl) != 0)
			continue;
		j = i + 1 + kl;
		if (j < len && s[j] == '\\')
			j++;
		if (j >= len || s[j] != '"')
			continue;
		j++;
		while (j < len && (s[j] == ' ' || s[j] == ':'))
			j++;
		while (j < len && n + 1 < sizeof(num) &&
			   (s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || (s[j] >= '0' && s[j] <= '9')))
			num[n++] = (char) s[j++];
		num[n] = 0;
		if (n == 0)
			return false;
		*out = strtod(num, &end);
		return *end == 0 && isfinite(*out);
	}
	return false;
}

lt_code
lt_sq_codes_open(lt_index_file *aux, uint32_t dim, lt_sq_codes *sq, lt_error *err)
{
	size_t		len;
	const uint8_t *m = lt_index_file_meta(aux, "storage_metadata", &len);
	const char *path = lt_index_file_path(aux);
	double		d,
				bits;

	memset(sq, 0, sizeof(*sq));
	if (m == NULL || !json_double(m, len, "dim", &d) || !json_double(m, len, "num_bits", &bits) ||
		!json_double(m, len, "start", &sq->lo) || !json_double(m, len, "end", &sq->hi))
		return lt_corrupt(err, "%s: no SQ storage_metadata (dim, num_bits, bounds)", path);
	if (d != (double) dim || bits != 8 || !(sq->lo <= sq->hi))
		return lt_corrupt(err, "%s: SQ of %g bits, dimension %g, bounds [%g, %g] for vectors of %u", path, bits, d,
						  sq->lo, sq->hi, dim);
	sq->dim = dim;
	sq->bits = 8;
	return lt_index_file_fixed_list(aux, "__sq_code", LT_TYPE_UINT8, dim, &sq->field, err);
}

void
lt_sq_encode(const lt_sq_codes *sq, const float *v, uint8_t *out)
{
	double		range = sq->hi - sq->lo;

	for (uint32_t i = 0; i < sq->dim; i++)
		out[i] = lt_sq_code(v[i], sq->lo, range);
}

/*
 * The code scores are integer sums, exact in any order: vectorised where GCC would not at -O2 (the
 * IVF_HNSW_SQ search spends most of its time here).
 */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
float
lt_sq_code_score(const lt_sq_codes *sq, lt_vmetric m, const uint8_t *a, const uint8_t *b)
{
	uint32_t	sum = 0;

	if (m == LT_VMETRIC_NEG_DOT || m == LT_VMETRIC_DOT)
	{
		for (uint32_t i = 0; i < sq->dim; i++)
			sum += (uint32_t) a[i] * b[i];
		return 1.0f - (float) sum;
	}
	for (uint32_t i = 0; i < sq->dim; i++)
	{
		int			x = (int) a[i] - (int) b[i];

		sum += (uint32_t) (x * x);
	}
	return (float) sum;
}

float
lt_sq_scale(const lt_sq_codes *sq, bool lance12)
{
	if (lance12)
	{
		float		step = (float) ((sq->hi - sq->lo) / 255.0);

		return step * step;
	}
	else
	{
		float		range = (float) (sq->hi - sq->lo);

		return (range * range) / (255.0f * 255.0f);
	}
}

float
lt_sq_distance(const lt_sq_codes *sq, lt_vmetric m, const uint8_t *a, const uint8_t *b)
{
	return lt_sq_code_score(sq, m, a, b) * lt_sq_scale(sq, false);
}

float
lt_sq_dot_affine(const lt_sq_codes *sq, const float *q, float qsum, const uint8_t *c)
{
	float		step = (float) ((sq->hi - sq->lo) / 255.0),
				s = 0;

	for (uint32_t i = 0; i < sq->dim; i++)
		s += q[i] * (float) c[i];
	return 1.0f - ((float) sq->lo * qsum + step * s);
}
