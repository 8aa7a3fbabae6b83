/*
 * lt_json.h — JSON output of Lance values, in the reference harness's format
 * (64-bit integers and decimals as strings, float32 in its shortest float32
 * form, non-finite floats as strings, binary as base64, ISO dates/times).
 */
#ifndef LT_JSON_H
#define LT_JSON_H

#include <stdio.h>

#include "types/lt_array.h"

void		json_string(FILE *out, const char *s, size_t len);
void		json_double(FILE *out, double v);
void		json_float(FILE *out, float v);
/* Slot i of array a. */
void		json_value(FILE *out, const lt_array *a, int64_t i);

#endif
