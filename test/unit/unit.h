/*
 * unit.h — a minimal test harness for the format library's unit tests.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_EQ_INT(a, b); CHECK_OK(lt_call(..., &err), err); }
 *   int main(void) { RUN(name); ...; return unit_report("decoders"); }
 */
#ifndef LT_UNIT_H
#define LT_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_status.h"

static int unit_checks, unit_failures, unit_tests;
static const char *unit_current;

#define TEST(name) static void test_##name(void)
#define RUN(name) do { unit_current = #name; unit_tests++; test_##name(); } while (0)

#define CHECK(cond) do { unit_checks++; if (!(cond)) { unit_failures++; \
	fprintf(stderr, "FAIL %s (%s:%d): %s\n", unit_current, __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ_INT(a, b) do { long long a_ = (long long) (a), b_ = (long long) (b); unit_checks++; \
	if (a_ != b_) { unit_failures++; fprintf(stderr, "FAIL %s (%s:%d): %s == %lld, expected %lld\n", \
	unit_current, __FILE__, __LINE__, #a, a_, b_); } } while (0)
#define CHECK_OK(call, err) do { lt_code c_ = (call); unit_checks++; if (c_ != LT_OK) { unit_failures++; \
	fprintf(stderr, "FAIL %s (%s:%d): %s -> %s: %s\n", unit_current, __FILE__, __LINE__, #call, \
	lt_code_name(c_), (err).msg); } } while (0)
#define CHECK_CODE(call, code) do { lt_code c_ = (call); unit_checks++; if (c_ != (code)) { unit_failures++; \
	fprintf(stderr, "FAIL %s (%s:%d): %s -> %s, expected %s\n", unit_current, __FILE__, __LINE__, #call, \
	lt_code_name(c_), lt_code_name(code)); } } while (0)

static inline int
unit_report(const char *suite)
{
	printf("%s: %d tests, %d checks, %d failed\n", suite, unit_tests, unit_checks, unit_failures);
	return unit_failures ? 1 : 0;
}

#endif
