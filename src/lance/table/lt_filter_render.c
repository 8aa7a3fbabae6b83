/*
 * lt_filter_render.c — a filter or one of its expressions as text.
 */
#include "table/lt_filter_int.h"

/* ------------------------------------------------------------------ rendering */

typedef struct sbuf
{
	char	   *s;
	size_t		len, cap;
	bool		oom;
} sbuf;

static void
sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap * 2 : 128;
		char	   *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = lt_realloc(b->s, cap);
		if (!p)
		{
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
sb_str(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void
sb_fmt(sbuf *b, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
sb_fmt(sbuf *b, const char *fmt,...)
{
	char		tmp[128];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_put(b, tmp, (size_t) n < sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}

static void
sb_i128(sbuf *b, lt_int128 v, int scale)
{
	char		digits[64];
	int			nd = 0;
	unsigned __int128 u = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;

	do
	{
		digits[nd++] = (char) ('0' + (int) (u % 10));
		u /= 10;
	} while (u > 0 || nd <= scale);
	if (v < 0)
		sb_str(b, "-");
	for (int i = nd - 1; i >= 0; i--)
	{
		sb_put(b, &digits[i], 1);
		if (i == scale && scale > 0)
			sb_str(b, ".");
	}
}

static void
sb_date(sbuf *b, int64_t days)
{
	int64_t		y;
	int			m, d;

	if (days > INT64_MAX / 2 || days < INT64_MIN / 2)
	{
		sb_str(b, days > 0 ? "infinity" : "-infinity");
		return;
	}
	lt_civil_from_days(days, &y, &m, &d);
	sb_fmt(b, "%04lld-%02d-%02d", (long long) y, m, d);
}

static void
sb_clock(sbuf *b, int64_t ticks_of_day, int64_t per_sec, int digits)
{
	int64_t		sec = ticks_of_day / per_sec;
	int64_t		frac = ticks_of_day % per_sec;

	sb_fmt(b, "%02lld:%02lld:%02lld", (long long) (sec / 3600), (long long) (sec / 60 % 60), (long long) (sec % 60));
	if (frac)
	{
		char		tmp[16];
		int			n = snprintf(tmp, sizeof(tmp), "%0*lld", digits, (long long) frac);

		while (n > 0 && tmp[n - 1] == '0')
			n--;
		sb_str(b, ".");
		sb_put(b, tmp, (size_t) n);
	}
}

static void
sb_value(sbuf *b, const lt_value *v)
{
	static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};
	static const int digits[] = {0, 3, 6, 9};
	static const char *unit_names[] = {"s", "ms", "us", "ns"};

	switch (v->kind)
	{
		case LT_VALUE_NULL:
			sb_str(b, "NULL");
			break;
		case LT_VALUE_BOOL:
			sb_str(b, v->v.b ? "true" : "false");
			break;
		case LT_VALUE_INT:
			sb_fmt(b, "%lld", (long long) v->v.i);
			break;
		case LT_VALUE_UINT:
			sb_fmt(b, "%llu", (unsigned long long) v->v.u);
			break;
		case LT_VALUE_FLOAT:
			if (isnan(v->v.f))
				sb_str(b, "'NaN'");
			else if (isinf(v->v.f))
				sb_str(b, v->v.f > 0 ? "'Infinity'" : "'-Infinity'");
			else
			{
				char		tmp[64];

				/* shortest of %.15g / %.17g that reads back */
				snprintf(tmp, sizeof(tmp), "%.15g", v->v.f);
				if (strtod(tmp, NULL) != v->v.f)
					snprintf(tmp, sizeof(tmp), "%.17g", v->v.f);
				sb_str(b, tmp);
			}
			break;
		case LT_VALUE_DECIMAL:
			sb_i128(b, v->v.dec, v->scale);
			break;
		case LT_VALUE_BYTES:
			sb_str(b, "'");
			for (size_t i = 0; i < v->v.bytes.len; i++)
			{
				uint8_t		ch = v->v.bytes.ptr[i];

				if (ch == '\'')
					sb_str(b, "''");
				else if (ch < 0x20 || ch == 0x7f)
					sb_fmt(b, "\\x%02x", ch);
				else
					sb_put(b, (const char *) &ch, 1);
			}
			sb_str(b, "'");
			break;
		case LT_VALUE_DATE:
			sb_date(b, v->v.i);
			break;
		case LT_VALUE_TIMESTAMP:
			{
				int64_t		ps = per_sec[v->unit];
				int64_t		day = ps * 86400;
				int64_t		days = v->v.i / day - (v->v.i % day < 0);
				int64_t		rest = v->v.i - days * day;

				if (v->v.i == INT64_MAX || v->v.i == INT64_MIN)
				{
					sb_str(b, v->v.i > 0 ? "infinity" : "-infinity");
					break;
				}
				sb_str(b, "'");
				sb_date(b, days);
				sb_str(b, " ");
				sb_clock(b, rest, ps, digits[v->unit]);
				sb_str(b, "'");
			}
			break;
		case LT_VALUE_TIME:
			sb_str(b, "'");
			sb_clock(b, v->v.i, per_sec[v->unit], digits[v->unit]);
			sb_str(b, "'");
			break;
		case LT_VALUE_DURATION:
			sb_fmt(b, "'%lld %s'", (long long) v->v.i, unit_names[v->unit]);
			break;
	}
}

static void
sb_name(sbuf *b, const char *name)
{
	bool		plain = name[0] && !(name[0] >= '0' && name[0] <= '9');

	for (const char *p = name; *p && plain; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
	if (plain)
	{
		sb_str(b, name);
		return;
	}
	sb_str(b, "\"");
	for (const char *p = name; *p; p++)
		sb_put(b, *p == '"' ? "\"\"" : p, 1 + (*p == '"'));
	sb_str(b, "\"");
}

static void
render(sbuf *b, const lt_filter *f, const lt_expr *e)
{
	static const char *ops[] = {"=", "<>", "<", "<=", ">", ">="};

	switch (e->kind)
	{
		case N_COLUMN:
			sb_name(b, f->columns[e->col]->name);
			break;
		case N_CONST:
			sb_value(b, &e->val);
			break;
		case N_PARAM:
			sb_fmt(b, "$%d", e->slot);
			break;
		case N_CMP:
			render(b, f, e->args[0]);
			sb_fmt(b, " %s ", ops[e->op]);
			render(b, f, e->args[1]);
			break;
		case N_BETWEEN:
			render(b, f, e->args[0]);
			sb_str(b, " BETWEEN ");
			render(b, f, e->args[1]);
			sb_str(b, " AND ");
			render(b, f, e->args[2]);
			break;
		case N_IN:
			render(b, f, e->args[0]);
			if (e->n_args == 2 && e->args[1]->kind == N_PARAM && e->args[1]->param_array)
			{
				sb_fmt(b, " = ANY ($%d)", e->args[1]->slot);
				break;
			}
			sb_str(b, " IN (");
			for (int i = 1; i < e->n_args; i++)
			{
				if (i > 1)
					sb_str(b, ", ");
				render(b, f, e->args[i]);
			}
			sb_str(b, ")");
			break;
		case N_IS_NULL:
			render(b, f, e->args[0]);
			sb_str(b, e->negated ? " IS NOT NULL" : " IS NULL");
			break;
		case N_AND:
		case N_OR:
			if (e->n_args == 1)
			{
				render(b, f, e->args[0]);
				break;
			}
			sb_str(b, "(");
			for (int i = 0; i < e->n_args; i++)
			{
				if (i > 0)
					sb_str(b, e->kind == N_AND ? " AND " : " OR ");
				render(b, f, e->args[i]);
			}
			sb_str(b, ")");
			break;
		case N_NOT:
			{
				const lt_expr *a = e->args[0];
				bool		paren = !((a->kind == N_AND || a->kind == N_OR) && a->n_args > 1) && a->kind != N_COLUMN;

				sb_str(b, paren ? "NOT (" : "NOT ");
				render(b, f, a);
				if (paren)
					sb_str(b, ")");
			}
			break;
	}
}

char *
lt_expr_render(const lt_filter *f, const lt_expr *e)
{
	sbuf		b = {0};

	if (e)
		render(&b, f, e);
	else
		sb_str(&b, "true");
	if (b.oom)
	{
		lt_free(b.s);
		return NULL;
	}
	if (!b.s)
		sb_str(&b, "");
	return b.s;
}

char *
lt_filter_render(const lt_filter *f)
{
	return lt_expr_render(f, f->root);
}
