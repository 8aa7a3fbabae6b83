/*
 * lt_json_read.c — rows in the JSON form `lt-inspect scan` prints, parsed
 * back into lt_arrays of a schema (for `lt-inspect append --jsonl`).
 *
 * The inverse of lt_json.c: 64-bit integers and decimals may be strings,
 * non-finite floats are "NaN" / "Infinity" / "-Infinity", binary is base64,
 * dates "YYYY-MM-DD", times "HH:MM:SS[.fff...]", timestamps
 * "YYYY-MM-DDTHH:MM:SS[.fff...][Z]"; lists and fixed-size lists are arrays,
 * maps arrays of {"key", "value"} objects, structs objects (a missing member
 * is null).  A value out of its type's range is an error, never a wrap.
 */
#include "lt_json_read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_value.h"

typedef struct jp
{
	const char *s;
	size_t		n, i;
	lt_error   *err;
	char	   *tmp;			/* a decoded string */
	size_t		tmp_len, tmp_cap;
} jp;

#define JFAIL(p, ...) lt_error_set((p)->err, LT_EINVALID, __VA_ARGS__)

static void
ws(jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\r' || p->s[p->i] == '\n'))
		p->i++;
}

static bool
take(jp *p, char c)
{
	ws(p);
	if (p->i < p->n && p->s[p->i] == c)
	{
		p->i++;
		return true;
	}
	return false;
}

static bool
word(jp *p, const char *w)
{
	size_t		l = strlen(w);

	ws(p);
	if (p->n - p->i >= l && memcmp(p->s + p->i, w, l) == 0)
	{
		p->i += l;
		return true;
	}
	return false;
}

static lt_code
put_tmp(jp *p, const char *b, size_t l)
{
	if (p->tmp_len + l + 1 > p->tmp_cap)
	{
		size_t		cap = p->tmp_cap ? p->tmp_cap * 2 : 256;
		char	   *q;

		while (cap < p->tmp_len + l + 1)
			cap *= 2;
		if (!(q = lt_realloc(p->tmp, cap)))
			return lt_nomem(p->err);
		p->tmp = q;
		p->tmp_cap = cap;
	}
	memcpy(p->tmp + p->tmp_len, b, l);
	p->tmp_len += l;
	p->tmp[p->tmp_len] = '\0';
	return LT_OK;
}

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A JSON string into p->tmp (UTF-8). */
static lt_code
string(jp *p)
{
	p->tmp_len = 0;
	LT_TRY(put_tmp(p, "", 0));
	if (!take(p, '"'))
		return JFAIL(p, "expected a string at offset %zu", p->i);
	while (p->i < p->n && p->s[p->i] != '"')
	{
		char		c = p->s[p->i++];

		if (c != '\\')
		{
			LT_TRY(put_tmp(p, &c, 1));
			continue;
		}
		if (p->i >= p->n)
			break;
		c = p->s[p->i++];
		switch (c)
		{
			case 'b': LT_TRY(put_tmp(p, "\b", 1)); break;
			case 'f': LT_TRY(put_tmp(p, "\f", 1)); break;
			case 'n': LT_TRY(put_tmp(p, "\n", 1)); break;
			case 'r': LT_TRY(put_tmp(p, "\r", 1)); break;
			case 't': LT_TRY(put_tmp(p, "\t", 1)); break;
			case 'u':
				{
					uint32_t	cp = 0;
					char		u[4];
					int			k = 0;

					for (int j = 0; j < 4; j++)
					{
						int			h = p->i < p->n ? hexval(p->s[p->i++]) : -1;

						if (h < 0)
							return JFAIL(p, "bad \\u escape at offset %zu", p->i);
						cp = cp << 4 | (uint32_t) h;
					}
					if (cp >= 0xD800 && cp < 0xDC00 && p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u')
					{
						uint32_t	lo = 0;

						for (int j = 0; j < 4; j++)
							lo = lo << 4 | (uint32_t) hexval(p->s[p->i + 2 + j]);
						p->i += 6;
						cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					}
					if (cp < 0x80)
						u[k++] = (char) cp;
					else if (cp < 0x800)
					{
						u[k++] = (char) (0xC0 | cp >> 6);
						u[k++] = (char) (0x80 | (cp & 63));
					}
					else if (cp < 0x10000)
					{
						u[k++] = (char) (0xE0 | cp >> 12);
						u[k++] = (char) (0x80 | ((cp >> 6) & 63));
						u[k++] = (char) (0x80 | (cp & 63));
					}
					else
					{
						u[k++] = (char) (0xF0 | cp >> 18);
						u[k++] = (char) (0x80 | ((cp >> 12) & 63));
						u[k++] = (char) (0x80 | ((cp >> 6) & 63));
						u[k++] = (char) (0x80 | (cp & 63));
					}
					LT_TRY(put_tmp(p, u, (size_t) k));
					break;
				}
			default:
				LT_TRY(put_tmp(p, &c, 1));
		}
	}
	if (!take(p, '"'))
		return JFAIL(p, "unterminated string");
	return LT_OK;
}

/* A scalar token (number or string) into p->tmp. */
static lt_code
scalar(jp *p)
{
	size_t		b;

	ws(p);
	if (p->i < p->n && p->s[p->i] == '"')
		return string(p);
	b = p->i;
	while (p->i < p->n && strchr("+-0123456789.eE", p->s[p->i]))
		p->i++;
	if (p->i == b)
		return JFAIL(p, "expected a value at offset %zu", b);
	p->tmp_len = 0;
	return put_tmp(p, p->s + b, p->i - b);
}

static lt_code
parse_int(jp *p, const lt_field *f, int64_t lo, int64_t hi, int64_t *out)
{
	char	   *end;
	long long	v;

	LT_TRY(scalar(p));
	errno = 0;
	v = strtoll(p->tmp, &end, 10);
	if (*end || errno || v < lo || v > hi)
		return JFAIL(p, "column \"%s\": %s is not a valid %s", f->name, p->tmp, lt_type_name(f->type));
	*out = v;
	return LT_OK;
}

static lt_code
parse_uint(jp *p, const lt_field *f, uint64_t hi, uint64_t *out)
{
	char	   *end;
	unsigned long long v;

	LT_TRY(scalar(p));
	errno = 0;
	v = strtoull(p->tmp, &end, 10);
	if (*end || errno || p->tmp[0] == '-' || v > hi)
		return JFAIL(p, "column \"%s\": %s is not a valid %s", f->name, p->tmp, lt_type_name(f->type));
	*out = v;
	return LT_OK;
}

static lt_code
parse_double(jp *p, const lt_field *f, double *out)
{
	char	   *end;

	LT_TRY(scalar(p));
	if (strcmp(p->tmp, "NaN") == 0)
		*out = NAN;
	else if (strcmp(p->tmp, "Infinity") == 0)
		*out = INFINITY;
	else if (strcmp(p->tmp, "-Infinity") == 0)
		*out = -INFINITY;
	else
	{
		*out = strtod(p->tmp, &end);
		if (*end)
			return JFAIL(p, "column \"%s\": %s is not a number", f->name, p->tmp);
	}
	return LT_OK;
}

static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};

/* "HH:MM:SS[.fff]" at s into units; returns the characters used or -1. */
static int
parse_tod(const char *s, lt_time_unit unit, int64_t *out)
{
	int			h,
				mi,
				se,
				n = 0;
	int64_t		frac = 0,
				scale = per_sec[unit];

	if (sscanf(s, "%2d:%2d:%2d%n", &h, &mi, &se, &n) != 3 || n != 8)
		return -1;
	if (s[n] == '.')
	{
		int64_t		digits = 1;

		n++;
		while (s[n] >= '0' && s[n] <= '9')
		{
			if (digits < scale)
			{
				frac = frac * 10 + (s[n] - '0');
				digits *= 10;
			}
			n++;
		}
		while (digits < scale)
		{
			frac *= 10;
			digits *= 10;
		}
	}
	*out = ((int64_t) h * 3600 + mi * 60 + se) * scale + frac;
	return n;
}

static lt_code
parse_date(jp *p, const lt_field *f, int64_t *days)
{
	long long	y;
	int			m,
				d,
				n = 0;

	LT_TRY(scalar(p));
	if (sscanf(p->tmp, "%lld-%2d-%2d%n", &y, &m, &d, &n) != 3 || (p->tmp[n] && p->tmp[n] != 'T'))
		return JFAIL(p, "column \"%s\": %s is not a date", f->name, p->tmp);
	*days = lt_days_from_civil(y, m, d);
	return LT_OK;
}

static lt_code
parse_timestamp(jp *p, const lt_field *f, int64_t *out)
{
	long long	y;
	int			m,
				d,
				n = 0,
				k;
	int64_t		tod;

	LT_TRY(scalar(p));
	if (sscanf(p->tmp, "%lld-%2d-%2d%n", &y, &m, &d, &n) != 3 || p->tmp[n] != 'T' ||
		(k = parse_tod(p->tmp + n + 1, f->unit, &tod)) < 0 ||
		(p->tmp[n + 1 + k] && strcmp(p->tmp + n + 1 + k, "Z") != 0))
		return JFAIL(p, "column \"%s\": %s is not a timestamp", f->name, p->tmp);
	*out = lt_days_from_civil(y, m, d) * 86400 * per_sec[f->unit] + tod;
	return LT_OK;
}

/* A decimal string into a little-endian two's complement integer of `bytes` (16 or 32), scaled. */
static lt_code
parse_decimal(jp *p, const lt_field *f, uint8_t *out)
{
	uint64_t	limb[4] = {0};
	int			nl = f->byte_width / 8;
	const char *s;
	bool		neg = false,
				dot = false;
	int			frac = 0,
				digits = 0;

	LT_TRY(scalar(p));
	s = p->tmp;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	for (;; s++)
	{
		int			dgt;

		if (*s == '.' && !dot)
		{
			dot = true;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		if (dot && frac == f->scale)
			return JFAIL(p, "column \"%s\": %s has more than %d decimals", f->name, p->tmp, f->scale);
		dgt = *s - '0';
		frac += dot;
		digits++;
		for (int i = 0; i < nl; i++)
		{
			unsigned __int128 v = (unsigned __int128) limb[i] * 10 + (unsigned) dgt;

			limb[i] = (uint64_t) v;
			dgt = (int) (v >> 64);
		}
		if (dgt)
			return JFAIL(p, "column \"%s\": %s is out of range", f->name, p->tmp);
	}
	if (*s || digits == 0)
		return JFAIL(p, "column \"%s\": %s is not a decimal", f->name, p->tmp);
	for (; frac < f->scale; frac++)
	{
		uint64_t	carry = 0;

		for (int i = 0; i < nl; i++)
		{
			unsigned __int128 v = (unsigned __int128) limb[i] * 10 + carry;

			limb[i] = (uint64_t) v;
			carry = (uint64_t) (v >> 64);
		}
	}
	if (neg)
	{
		uint64_t	carry = 1;

		for (int i = 0; i < nl; i++)
		{
			uint64_t	v = ~limb[i] + carry;

			carry = carry && v == 0;
			limb[i] = v;
		}
	}
	memcpy(out, limb, (size_t) f->byte_width);
	return LT_OK;
}

static int
b64val(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52 :
		c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Base64 in p->tmp decoded in place; its length. */
static lt_code
unbase64(jp *p, const lt_field *f, size_t *len)
{
	size_t		o = 0;
	uint32_t	acc = 0;
	int			bits = 0;

	for (size_t i = 0; i < p->tmp_len && p->tmp[i] != '='; i++)
	{
		int			v = b64val(p->tmp[i]);

		if (v < 0)
			return JFAIL(p, "column \"%s\": bad base64", f->name);
		acc = acc << 6 | (uint32_t) v;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			p->tmp[o++] = (char) (acc >> bits);
		}
	}
	*len = o;
	return LT_OK;
}

static lt_code value(jp *p, lt_array *a);

/* A valid slot of a nested array: count it (its children were appended). */
static lt_code
valid_slot(lt_array *a)
{
	lt_error	e;

	LT_TRY(lt_array_reserve(a, 1, &e));
	if (a->validity)
		a->validity[a->length] = 1;
	a->length++;
	return LT_OK;
}

static lt_code
value(jp *p, lt_array *a)
{
	const lt_field *f = a->field;
	int			w = f->byte_width;
	uint8_t		buf[32];

	if (word(p, "null"))
	{
		if (!f->nullable && a->field->parent == NULL)
			return JFAIL(p, "column \"%s\" is not nullable", f->name);
		return lt_array_append_nulls(a, 1, p->err);
	}
	switch (f->type)
	{
		case LT_TYPE_STRUCT:
			{
				bool		seen[256] = {0};

				if (f->n_children > 256)
					return JFAIL(p, "struct \"%s\" has too many members", f->name);
				if (!take(p, '{'))
					return JFAIL(p, "column \"%s\": expected an object", f->name);
				if (!take(p, '}'))
				{
					do
					{
						int			c;

						LT_TRY(string(p));
						for (c = 0; c < f->n_children; c++)
							if (strcmp(f->children[c]->name, p->tmp) == 0)
								break;
						if (c == f->n_children || seen[c])
							return JFAIL(p, "struct \"%s\": unknown or repeated member \"%s\"", f->name, p->tmp);
						if (!take(p, ':'))
							return JFAIL(p, "expected ':' at offset %zu", p->i);
						LT_TRY(value(p, a->children[c]));
						seen[c] = true;
					} while (take(p, ','));
					if (!take(p, '}'))
						return JFAIL(p, "expected '}' at offset %zu", p->i);
				}
				for (int c = 0; c < f->n_children; c++)
					if (!seen[c])
						LT_TRY(lt_array_append_nulls(a->children[c], 1, p->err));
				return valid_slot(a);
			}
		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_MAP:
		case LT_TYPE_FIXED_LIST:
			{
				int64_t		k = 0;

				if (!take(p, '['))
					return JFAIL(p, "column \"%s\": expected an array", f->name);
				if (!take(p, ']'))
				{
					do
					{
						LT_TRY(value(p, a->children[0]));
						k++;
					} while (take(p, ','));
					if (!take(p, ']'))
						return JFAIL(p, "expected ']' at offset %zu", p->i);
				}
				if (f->type == LT_TYPE_FIXED_LIST && k != f->fixed_size)
					return JFAIL(p, "column \"%s\": %lld items for a fixed-size list of %d", f->name, (long long) k,
								 f->fixed_size);
				LT_TRY(valid_slot(a));
				if (a->offsets)
					a->offsets[a->length] = a->children[0]->length;
				return LT_OK;
			}
		default:
			break;
	}
	memset(buf, 0, sizeof(buf));
	switch (f->type)
	{
		case LT_TYPE_BOOL:
			if (word(p, "true"))
				buf[0] = 1;
			else if (!word(p, "false"))
				return JFAIL(p, "column \"%s\": expected true or false", f->name);
			break;
		case LT_TYPE_INT8: case LT_TYPE_INT16: case LT_TYPE_INT32: case LT_TYPE_INT64:
		case LT_TYPE_DURATION:
			{
				int64_t		v,
							hi = w == 8 ? INT64_MAX : (int64_t) ((1ULL << (8 * w - 1)) - 1);

				LT_TRY(parse_int(p, f, -hi - 1, hi, &v));
				memcpy(buf, &v, (size_t) w);
				break;
			}
		case LT_TYPE_UINT8: case LT_TYPE_UINT16: case LT_TYPE_UINT32: case LT_TYPE_UINT64:
			{
				uint64_t	v;

				LT_TRY(parse_uint(p, f, w == 8 ? UINT64_MAX : (1ULL << (8 * w)) - 1, &v));
				memcpy(buf, &v, (size_t) w);
				break;
			}
		case LT_TYPE_FLOAT16: case LT_TYPE_FLOAT32: case LT_TYPE_FLOAT64:
			{
				double		d;

				LT_TRY(parse_double(p, f, &d));
				if (w == 8)
					memcpy(buf, &d, 8);
				else if (w == 4)
				{
					float		x = (float) d;

					memcpy(buf, &x, 4);
				}
				else
				{
					uint16_t	h = lt_float_to_half((float) d);

					memcpy(buf, &h, 2);
				}
				break;
			}
		case LT_TYPE_DECIMAL128:
		case LT_TYPE_DECIMAL256:
			LT_TRY(parse_decimal(p, f, buf));
			break;
		case LT_TYPE_DATE32:
		case LT_TYPE_DATE64:
			{
				int64_t		days = 0;

				LT_TRY(parse_date(p, f, &days));
				if (f->type == LT_TYPE_DATE32)
				{
					int32_t		v = (int32_t) days;

					memcpy(buf, &v, 4);
				}
				else
				{
					int64_t		v = days * 86400000;

					memcpy(buf, &v, 8);
				}
				break;
			}
		case LT_TYPE_TIME32:
		case LT_TYPE_TIME64:
			{
				int64_t		v = 0;

				LT_TRY(scalar(p));
				if (parse_tod(p->tmp, f->unit, &v) < 0)
					return JFAIL(p, "column \"%s\": %s is not a time", f->name, p->tmp);
				if (w == 4)
				{
					int32_t		x = (int32_t) v;

					memcpy(buf, &x, 4);
				}
				else
					memcpy(buf, &v, 8);
				break;
			}
		case LT_TYPE_TIMESTAMP:
			{
				int64_t		v = 0;

				LT_TRY(parse_timestamp(p, f, &v));
				memcpy(buf, &v, 8);
				break;
			}
		case LT_TYPE_UTF8: case LT_TYPE_LARGE_UTF8: case LT_TYPE_BINARY: case LT_TYPE_LARGE_BINARY:
		case LT_TYPE_FIXED_BINARY:
			{
				size_t		len = 0;

				LT_TRY(string(p));
				len = p->tmp_len;
				if (f->type != LT_TYPE_UTF8 && f->type != LT_TYPE_LARGE_UTF8)
					LT_TRY(unbase64(p, f, &len));
				if (f->type == LT_TYPE_FIXED_BINARY)
				{
					if (len != (size_t) w || w > (int) sizeof(buf))
					{
						if (len != (size_t) w)
							return JFAIL(p, "column \"%s\": %zu bytes for fixed_size_binary(%d)", f->name, len, w);
						LT_TRY(lt_array_reserve(a, 1, p->err));
						memcpy(a->values + a->length * w, p->tmp, len);
						return valid_slot(a);
					}
					memcpy(buf, p->tmp, len);
					break;
				}
				LT_TRY(lt_array_reserve(a, 1, p->err));
				LT_TRY(lt_array_reserve_data(a, (int64_t) len, p->err));
				memcpy(a->data + a->data_len, p->tmp, len);
				a->data_len += (int64_t) len;
				LT_TRY(valid_slot(a));
				a->offsets[a->length] = a->data_len;
				return LT_OK;
			}
		default:
			return JFAIL(p, "column \"%s\": cannot parse values of type %s", f->name, lt_type_name(f->type));
	}
	LT_TRY(lt_array_reserve(a, 1, p->err));
	memcpy(a->values + a->length * w, buf, (size_t) w);
	return valid_slot(a);
}

lt_code
lt_json_row_append(const char *line, size_t len, int n, const lt_field *const *fields, lt_array *const *cols,
				   lt_error *err)
{
	jp			p = {line, len, 0, err, NULL, 0, 0};
	bool		seen[1024] = {0};
	lt_code		rc = LT_OK;

	if (n > 1024)
		return lt_error_set(err, LT_EINVALID, "too many columns");
	if (!take(&p, '{'))
		rc = JFAIL(&p, "a row must be a JSON object");
	if (rc == LT_OK && !take(&p, '}'))
	{
		do
		{
			int			c;

			if ((rc = string(&p)) != LT_OK)
				break;
			for (c = 0; c < n; c++)
				if (strcmp(fields[c]->name, p.tmp) == 0)
					break;
			if (c == n || seen[c])
			{
				rc = JFAIL(&p, "unknown or repeated column \"%s\"", p.tmp);
				break;
			}
			if (!take(&p, ':'))
			{
				rc = JFAIL(&p, "expected ':' at offset %zu", p.i);
				break;
			}
			if ((rc = value(&p, cols[c])) != LT_OK)
				break;
			seen[c] = true;
		} while (take(&p, ','));
		if (rc == LT_OK && !take(&p, '}'))
			rc = JFAIL(&p, "expected '}' at offset %zu", p.i);
	}
	for (int c = 0; rc == LT_OK && c < n; c++)
		if (!seen[c])
		{
			if (!fields[c]->nullable)
				rc = JFAIL(&p, "column \"%s\" is not nullable and has no value", fields[c]->name);
			else
				rc = lt_array_append_nulls(cols[c], 1, err);
		}
	lt_free(p.tmp);
	return rc;
}
