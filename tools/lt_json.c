/*
 * lt_json.c — value formatting for lt-inspect.
 *
 * Numbers follow JavaScript's Number#toString (the reference harness prints
 * with JSON.stringify): shortest round-trip digits, plain notation for
 * exponents in [-7, 21), else d.ddde+N.
 */
#include "lt_json.h"
#include "util/lt_value.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void
json_string(FILE *out, const char *s, size_t len)
{
	putc('"', out);
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		switch (c)
		{
			case '"': fputs("\\\"", out); break;
			case '\\': fputs("\\\\", out); break;
			case '\b': fputs("\\b", out); break;
			case '\f': fputs("\\f", out); break;
			case '\n': fputs("\\n", out); break;
			case '\r': fputs("\\r", out); break;
			case '\t': fputs("\\t", out); break;
			default:
				if (c < 0x20)
					fprintf(out, "\\u%04x", c);
				else
					putc(c, out);
		}
	}
	putc('"', out);
}

/* Print digits d (k of them) scaled so that the value is 0.d * 10^n, JS style. */
static void
js_format(FILE *out, bool neg, const char *d, int k, int n)
{
	if (neg)
		putc('-', out);
	if (k <= n && n <= 21)
	{
		fwrite(d, 1, k, out);
		for (int i = 0; i < n - k; i++)
			putc('0', out);
	}
	else if (0 < n && n <= 21)
	{
		fwrite(d, 1, n, out);
		putc('.', out);
		fwrite(d + n, 1, k - n, out);
	}
	else if (-6 < n && n <= 0)
	{
		fputs("0.", out);
		for (int i = 0; i < -n; i++)
			putc('0', out);
		fwrite(d, 1, k, out);
	}
	else
	{
		putc(d[0], out);
		if (k > 1)
		{
			putc('.', out);
			fwrite(d + 1, 1, k - 1, out);
		}
		fprintf(out, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
	}
}

/* Shortest decimal digits of v with `max_p` significant digits at most that satisfy ok(). */
static void
print_shortest(FILE *out, double v, bool single)
{
	char		buf[64];
	int			p;

	if (isnan(v))
	{
		fputs("\"NaN\"", out);
		return;
	}
	if (isinf(v))
	{
		fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", out);
		return;
	}
	if (v == 0)
	{
		putc('0', out);
		return;
	}
	for (p = 1; p <= 17; p++)
	{
		double		back;

		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		back = strtod(buf, NULL);
		if (single ? (float) back == (float) v : back == v)
			break;
	}
	{
		/* buf is [-]d[.ddd]e[+-]xx: collect digits and the exponent */
		char		digits[32];
		int			k = 0;
		bool		neg = buf[0] == '-';
		const char *s = buf + (neg ? 1 : 0);
		int			e;

		for (; *s && *s != 'e'; s++)
			if (*s >= '0' && *s <= '9')
				digits[k++] = *s;
		e = atoi(s + 1);
		while (k > 1 && digits[k - 1] == '0')
			k--;
		js_format(out, neg, digits, k, e + 1);
	}
}

void
json_double(FILE *out, double v)
{
	print_shortest(out, v, false);
}

void
json_float(FILE *out, float v)
{
	print_shortest(out, (double) v, true);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
json_base64(FILE *out, const uint8_t *p, size_t n)
{
	size_t		i;

	putc('"', out);
	for (i = 0; i + 2 < n; i += 3)
	{
		uint32_t	v = (uint32_t) p[i] << 16 | (uint32_t) p[i + 1] << 8 | p[i + 2];

		putc(b64[v >> 18], out);
		putc(b64[(v >> 12) & 63], out);
		putc(b64[(v >> 6) & 63], out);
		putc(b64[v & 63], out);
	}
	if (n - i == 1)
	{
		uint32_t	v = (uint32_t) p[i] << 16;

		fprintf(out, "%c%c==", b64[v >> 18], b64[(v >> 12) & 63]);
	}
	else if (n - i == 2)
	{
		uint32_t	v = (uint32_t) p[i] << 16 | (uint32_t) p[i + 1] << 8;

		fprintf(out, "%c%c%c=", b64[v >> 18], b64[(v >> 12) & 63], b64[(v >> 6) & 63]);
	}
	putc('"', out);
}

static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static void
print_date(FILE *out, int64_t days)
{
	int64_t		y;
	int			m, d;

	lt_civil_from_days(days, &y, &m, &d);
	fprintf(out, "\"%04" PRId64 "-%02d-%02d\"", y, m, d);
}

static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};
static const int unit_digits[] = {0, 3, 6, 9};

static void
print_timestamp(FILE *out, int64_t v, lt_time_unit unit, bool tz)
{
	int64_t		ps = per_sec[unit];
	int64_t		sec = floor_div(v, ps);
	int64_t		frac = v - sec * ps;
	int64_t		days = floor_div(sec, 86400);
	int64_t		tod = sec - days * 86400;
	int64_t		y;
	int			m, d;

	lt_civil_from_days(days, &y, &m, &d);
	fprintf(out, "\"%04" PRId64 "-%02d-%02dT%02d:%02d:%02d", y, m, d, (int) (tod / 3600), (int) (tod / 60 % 60),
			(int) (tod % 60));
	if (unit_digits[unit])
		fprintf(out, ".%0*" PRId64, unit_digits[unit], frac);
	fputs(tz ? "Z\"" : "\"", out);
}

/* Time of day: "HH:MM:SS" plus the unit's fraction digits. */
static void
print_time(FILE *out, int64_t v, lt_time_unit unit)
{
	int64_t		ps = per_sec[unit];
	int64_t		sec = floor_div(v, ps);

	fprintf(out, "\"%02d:%02d:%02d", (int) (sec / 3600), (int) (sec / 60 % 60), (int) (sec % 60));
	if (unit_digits[unit])
		fprintf(out, ".%0*" PRId64, unit_digits[unit], v - sec * ps);
	putc('"', out);
}



void
json_value(FILE *out, const lt_array *a, int64_t i)
{
	const lt_field *f = a->field;
	const uint8_t *v = a->values ? a->values + i * f->byte_width : NULL;

	if (!lt_array_is_valid(a, i))
	{
		fputs("null", out);
		return;
	}
	switch (f->type)
	{
		case LT_TYPE_NULL: fputs("null", out); break;
		case LT_TYPE_BOOL: fputs(v[0] ? "true" : "false", out); break;
		case LT_TYPE_INT8: fprintf(out, "%d", (int) *(const int8_t *) v); break;
		case LT_TYPE_INT16: { int16_t x; memcpy(&x, v, 2); fprintf(out, "%d", x); break; }
		case LT_TYPE_INT32: { int32_t x; memcpy(&x, v, 4); fprintf(out, "%d", x); break; }
		case LT_TYPE_INT64: { int64_t x; memcpy(&x, v, 8); fprintf(out, "\"%" PRId64 "\"", x); break; }
		case LT_TYPE_UINT8: fprintf(out, "%u", (unsigned) v[0]); break;
		case LT_TYPE_UINT16: { uint16_t x; memcpy(&x, v, 2); fprintf(out, "%u", x); break; }
		case LT_TYPE_UINT32: { uint32_t x; memcpy(&x, v, 4); fprintf(out, "%u", x); break; }
		case LT_TYPE_UINT64: { uint64_t x; memcpy(&x, v, 8); fprintf(out, "\"%" PRIu64 "\"", x); break; }
		case LT_TYPE_FLOAT16: { uint16_t x; memcpy(&x, v, 2); json_float(out, lt_half_to_float(x)); break; }
		case LT_TYPE_FLOAT32: { float x; memcpy(&x, v, 4); json_float(out, x); break; }
		case LT_TYPE_FLOAT64: { double x; memcpy(&x, v, 8); json_double(out, x); break; }
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_DECIMAL256:
			{
				char		dec[LT_DECIMAL_BUFLEN];

				lt_decimal_format(v, f->byte_width, f->scale, dec);
				fprintf(out, "\"%s\"", dec);
				break;
			}
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			json_string(out, (const char *) a->data + a->offsets[i], (size_t) (a->offsets[i + 1] - a->offsets[i]));
			break;
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			json_base64(out, a->data + a->offsets[i], (size_t) (a->offsets[i + 1] - a->offsets[i]));
			break;
		case LT_TYPE_FIXED_BINARY: json_base64(out, v, (size_t) f->byte_width); break;
		case LT_TYPE_DATE32: { int32_t x; memcpy(&x, v, 4); print_date(out, x); break; }
		case LT_TYPE_DATE64: { int64_t x; memcpy(&x, v, 8); print_date(out, floor_div(x, 86400000)); break; }
		case LT_TYPE_TIME32: { int32_t x; memcpy(&x, v, 4); print_time(out, x, f->unit); break; }
		case LT_TYPE_TIME64: { int64_t x; memcpy(&x, v, 8); print_time(out, x, f->unit); break; }
		case LT_TYPE_DURATION: { int64_t x; memcpy(&x, v, 8); fprintf(out, "\"%" PRId64 "\"", x); break; }
		case LT_TYPE_TIMESTAMP: { int64_t x; memcpy(&x, v, 8); print_timestamp(out, x, f->unit, f->timezone != NULL); break; }
		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_MAP:
			putc('[', out);
			for (int64_t k = a->offsets[i]; k < a->offsets[i + 1]; k++)
			{
				if (k > a->offsets[i])
					putc(',', out);
				json_value(out, a->children[0], k);
			}
			putc(']', out);
			break;
		case LT_TYPE_FIXED_LIST:
			putc('[', out);
			for (int64_t k = 0; k < f->fixed_size; k++)
			{
				if (k)
					putc(',', out);
				json_value(out, a->children[0], i * f->fixed_size + k);
			}
			putc(']', out);
			break;
		case LT_TYPE_STRUCT:
			putc('{', out);
			for (int c = 0; c < a->n_children; c++)
			{
				if (c)
					putc(',', out);
				json_string(out, f->children[c]->name, strlen(f->children[c]->name));
				putc(':', out);
				if (a->children[c])
					json_value(out, a->children[c], i);
				else
					fputs("null", out);
			}
			putc('}', out);
			break;
	}
}
