/*
 * lt_random.c — random bytes from the kernel (getrandom), with a time-and-pid
 * mixed fallback should the call be unavailable (old kernels, seccomp).
 */
#include "util/lt_random.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

uint64_t
lt_splitmix64(uint64_t *s)
{
	uint64_t	z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

void
lt_random_bytes(void *dst, size_t n)
{
	uint8_t    *p = dst;
	size_t		got = 0;

	while (got < n)
	{
		ssize_t		r = getrandom(p + got, n - got, 0);

		if (r > 0)
			got += (size_t) r;
		else if (r < 0 && errno == EINTR)
			continue;
		else
			break;
	}
	if (got < n)
	{
		static uint64_t counter;
		struct timespec ts;
		uint64_t	s;

		clock_gettime(CLOCK_REALTIME, &ts);
		s = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec + ((uint64_t) getpid() << 40) + ++counter;
		for (; got < n; got++)
			p[got] = (uint8_t) lt_splitmix64(&s);
	}
}

uint64_t
lt_random_u64(void)
{
	uint64_t	v;

	lt_random_bytes(&v, sizeof(v));
	return v;
}

void
lt_uuid_v4(uint8_t bytes[16], char *text)
{
	lt_random_bytes(bytes, 16);
	bytes[6] = (bytes[6] & 0x0f) | 0x40;
	bytes[8] = (bytes[8] & 0x3f) | 0x80;
	if (text)
	{
		static const char hex[] = "0123456789abcdef";
		char	   *o = text;

		for (int i = 0; i < 16; i++)
		{
			if (i == 4 || i == 6 || i == 8 || i == 10)
				*o++ = '-';
			*o++ = hex[bytes[i] >> 4];
			*o++ = hex[bytes[i] & 15];
		}
		*o = '\0';
	}
}

void
lt_sample_indices(int64_t *idx, int64_t n, int64_t m, uint64_t *state)
{
	for (int64_t i = 0; i < n; i++)
		idx[i] = i;
	for (int64_t i = 0; i < m; i++)
	{
		int64_t		j = i + (int64_t) (lt_splitmix64(state) % (uint64_t) (n - i));
		int64_t		t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
	}
}
