/*
 * unit.h — a minimal test harness for the format library's unit tests.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_EQ_INT(a, b); CHECK_OK(lt_call(..., &err), err); }
 *   int main(void) { RUN(name); ...; return unit_report("decoders"); }
 */
#ifndef LT_UNIT_H
#define LT_UNIT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_status.h"

static int unit_checks, unit_failures, unit_tests;
static const char *unit_current;

#define TEST(name) static void test_##name(void)
#define RUN(name) do { unit_current = #name; unit_tests++; test_##name(); } while (0)

#define CHECK(cond) do { unit_checks++; if (!(cond)) { unit_failures++; \
	fprintf(stderr, "FAIL %s (%s:%d): %s\n", unit_current, __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ_INT(a, b) do { long long a_ = (long long) (a), b_ = (long long) (b); unit_checks++; \
	if (a_ != b_) { unit_failures++; fprintf(stderr, "FAIL %s (%s:%d): %s == %lld, expected %lld\n", \
	unit_current, __FILE__, __LINE__, #a, a_, b_); } } while (0)
/* two finished lt_topk (or alike) hold the same items: addresses and distances, in order */
#define CHECK_SAME_TOPK(a, b) do { CHECK_EQ_INT((a).n, (b).n); \
	for (size_t j_ = 0; j_ < (a).n && j_ < (b).n; j_++) \
		CHECK((a).items[j_].addr == (b).items[j_].addr && (a).items[j_].dist == (b).items[j_].dist); } while (0)
#define CHECK_OK(call, err) do { lt_code c_ = (call); unit_checks++; if (c_ != LT_OK) { unit_failures++; \
	fprintf(stderr, "FAIL %s (%s:%d): %s -> %s: %s\n", unit_current, __FILE__, __LINE__, #call, \
	lt_code_name(c_), (err).msg); } } while (0)
#define CHECK_CODE(call, code) do { lt_code c_ = (call); unit_checks++; if (c_ != (code)) { unit_failures++; \
	fprintf(stderr, "FAIL %s (%s:%d): %s -> %s, expected %s\n", unit_current, __FILE__, __LINE__, #call, \
	lt_code_name(c_), lt_code_name(code)); } } while (0)

/* A deterministic pseudo-random source (xorshift64) over the caller's state, which must not be 0. */
static inline uint64_t
unit_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#ifndef LT_TEST_DATA
#define LT_TEST_DATA "test/data"
#endif

/* Where committed test data lives ($LT_TEST_DATA overrides). */
static inline const char *
unit_data_dir(void)
{
	const char *d = getenv("LT_TEST_DATA");

	return d ? d : LT_TEST_DATA;
}

/* A whole file under the test data directory, malloc'd; NULL (with a message) if unreadable. */
static inline uint8_t *
unit_read_file(const char *rel, size_t *len)
{
	char		path[1024];
	FILE	   *f;
	uint8_t    *buf;
	long		n;

	snprintf(path, sizeof(path), "%s/%s", unit_data_dir(), rel);
	if (!(f = fopen(path, "rb")))
	{
		fprintf(stderr, "cannot open %s\n", path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t) n : 1);
	if (n < 0 || fread(buf, 1, (size_t) n, f) != (size_t) n)
		n = 0;
	fclose(f);
	*len = (size_t) n;
	return buf;
}

static inline int
unit_report(const char *suite)
{
	printf("%s: %d tests, %d checks, %d failed\n", suite, unit_tests, unit_checks, unit_failures);
	return unit_failures ? 1 : 0;
}

#endif
