/*
 * lt_value.c — value conversions shared by the library's consumers.
 */
#include "util/lt_value.h"

#include <stdbool.h>

size_t
lt_decimal_format(const uint8_t *p, int bytes, int scale, char *buf)
{
	uint32_t	w[8];
	int			nw = bytes / 4;
	bool		neg;
	char		digits[80];
	int			k = 0;
	size_t		len = 0;

	if (nw < 1 || nw > 8)
	{
		buf[0] = '\0';
		return 0;
	}
	if (scale < 0 || scale > 76)
		scale = 0;
	neg = (p[bytes - 1] & 0x80) != 0;
	memcpy(w, p, (size_t) nw * 4);
	if (neg)
	{
		/* magnitude of a negative value: invert and add one */
		uint64_t	carry = 1;

		for (int i = 0; i < nw; i++)
		{
			uint64_t	s = (uint64_t) (~w[i]) + carry;

			w[i] = (uint32_t) s;
			carry = s >> 32;
		}
	}
	/* repeated division by 10 over 32-bit words, most significant first */
	for (;;)
	{
		bool		zero = true;
		uint64_t	rem = 0;

		for (int i = nw - 1; i >= 0; i--)
		{
			uint64_t	cur = (rem << 32) | w[i];

			w[i] = (uint32_t) (cur / 10);
			rem = cur % 10;
			if (w[i])
				zero = false;
		}
		digits[k++] = (char) ('0' + rem);
		if (zero)
			break;
	}
	while (k < scale + 1)
		digits[k++] = '0';
	if (neg)
		buf[len++] = '-';
	for (int i = k - 1; i >= 0; i--)
	{
		buf[len++] = digits[i];
		if (i == scale && scale > 0)
			buf[len++] = '.';
	}
	buf[len] = '\0';
	return len;
}

int64_t
lt_days_from_civil(int64_t y, int m, int d)
{
	int64_t		era,
				yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void
lt_civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
	int64_t		z = days + 719468;
	int64_t		era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t		doe = z - era * 146097;
	int64_t		yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t		doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t		mp = (5 * doy + 2) / 153;

	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}
