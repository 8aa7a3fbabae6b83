/*
 * lt_where.c — the WHERE parser of lt-inspect index-query (see lt_where.h).
 */
#include "lt_where.h"
#include "util/lt_value.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum tok_kind
{
	T_END, T_IDENT, T_INT, T_NUM, T_STR, T_OP, T_LP, T_RP, T_LB, T_RB, T_COMMA
} tok_kind;

typedef struct tok
{
	tok_kind	k;
	char	   *s;				/* identifier, number text, string body (unescaped), operator */
} tok;

typedef struct parser
{
	tok		   *t;
	int			n, i;
	where_parse *w;
	lt_error	err;
	char	  **owned;			/* strings literals point into */
	int			n_owned;
	bool		failed;
} parser;

static void
fail(parser *p, const char *fmt,...)
{
	va_list		ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(p->w->msg, sizeof(p->w->msg), fmt, ap);
	va_end(ap);
}

static int
tokenize(const char *src, parser *p)
{
	int			cap = 16;
	const char *c = src;

	p->t = calloc(cap, sizeof(tok));
	for (;;)
	{
		tok			t = {T_END, NULL};

		while (isspace((unsigned char) *c))
			c++;
		if (p->n + 1 >= cap)
			p->t = realloc(p->t, (cap *= 2) * sizeof(tok));
		if (!*c)
		{
			p->t[p->n++] = t;
			return 0;
		}
		if (isalpha((unsigned char) *c) || *c == '_' || *c == '"')
		{
			const char *s = c;

			if (*c == '"')
			{
				s = ++c;
				while (*c && *c != '"')
					c++;
				t.s = strndup(s, (size_t) (c - s));
				if (*c)
					c++;
			}
			else
			{
				while (isalnum((unsigned char) *c) || *c == '_')
					c++;
				t.s = strndup(s, (size_t) (c - s));
			}
			t.k = T_IDENT;
		}
		else if (isdigit((unsigned char) *c) || (*c == '.' && isdigit((unsigned char) c[1])))
		{
			const char *s = c;
			bool		real = false;

			while (isdigit((unsigned char) *c) || *c == '.' || *c == 'e' || *c == 'E' ||
				   ((*c == '-' || *c == '+') && (c[-1] == 'e' || c[-1] == 'E')))
			{
				real |= !isdigit((unsigned char) *c);
				c++;
			}
			t.k = real ? T_NUM : T_INT;
			t.s = strndup(s, (size_t) (c - s));
		}
		else if (*c == '\'')
		{
			size_t		cap2 = 16,
						len = 0;
			char	   *b = malloc(cap2);

			c++;
			for (;;)
			{
				if (!*c)
				{
					free(b);
					snprintf(p->w->msg, sizeof(p->w->msg), "unterminated string");
					return -1;
				}
				if (*c == '\'' && c[1] == '\'')
					c++;
				else if (*c == '\'')
					break;
				if (len + 2 > cap2)
					b = realloc(b, cap2 *= 2);
				b[len++] = *c++;
			}
			c++;
			b[len] = '\0';
			t.k = T_STR;
			t.s = b;
		}
		else if (strchr("<>=!&@", *c))
		{
			const char *s = c;

			c++;
			if ((*s == '<' && (*c == '=' || *c == '>')) || (*s == '>' && *c == '=') || (*s == '!' && *c == '=') ||
				(*s == '&' && *c == '&') || (*s == '@' && *c == '>'))
				c++;
			t.k = T_OP;
			t.s = strndup(s, (size_t) (c - s));
		}
		else if (*c == '(' || *c == ')' || *c == '[' || *c == ']' || *c == ',' || *c == '-')
		{
			t.k = *c == '(' ? T_LP : *c == ')' ? T_RP : *c == '[' ? T_LB : *c == ']' ? T_RB : *c == ',' ? T_COMMA : T_OP;
			t.s = strndup(c, 1);
			c++;
		}
		else
		{
			snprintf(p->w->msg, sizeof(p->w->msg), "unexpected character '%c'", *c);
			return -1;
		}
		p->t[p->n++] = t;
	}
}

static tok *
peek(parser *p)
{
	return &p->t[p->i];
}

static bool
is_kw(const tok *t, const char *kw)
{
	return t->k == T_IDENT && strcasecmp(t->s, kw) == 0;
}

static bool
accept_kw(parser *p, const char *kw)
{
	if (is_kw(peek(p), kw))
	{
		p->i++;
		return true;
	}
	return false;
}

static bool
accept(parser *p, tok_kind k)
{
	if (peek(p)->k == k)
	{
		p->i++;
		return true;
	}
	return false;
}

static void
expect(parser *p, tok_kind k, const char *what)
{
	if (!accept(p, k))
		fail(p, "expected %s near \"%s\"", what, peek(p)->s ? peek(p)->s : "end");
}

static const char *const KEYWORDS[] = {"and", "or", "not", "between", "in", "is", "null", "true", "false", "date",
"array_has_all", "array_has_any", NULL};

static bool
is_keyword(const char *s)
{
	for (int i = 0; KEYWORDS[i]; i++)
		if (strcasecmp(s, KEYWORDS[i]) == 0)
			return true;
	return false;
}

static bool
is_float_type(lt_type_id t)
{
	return t == LT_TYPE_FLOAT16 || t == LT_TYPE_FLOAT32 || t == LT_TYPE_FLOAT64;
}

/* A literal for a value of field f (the column, or its element for arrays). */
static bool
literal(parser *p, const lt_field *f, lt_value *v)
{
	tok		   *t = peek(p);
	bool		neg = false;

	memset(v, 0, sizeof(*v));
	if (t->k == T_OP && strcmp(t->s, "-") == 0)
	{
		neg = true;
		p->i++;
		t = peek(p);
	}
	if (accept_kw(p, "null"))
	{
		v->kind = LT_VALUE_NULL;
		return true;
	}
	if (is_kw(t, "true") || is_kw(t, "false"))
	{
		v->kind = LT_VALUE_BOOL;
		v->v.b = is_kw(t, "true");
		p->i++;
		return true;
	}
	if (accept_kw(p, "date"))
		t = peek(p);
	if (t->k == T_INT && f->type != LT_TYPE_DECIMAL128)
	{
		v->kind = LT_VALUE_INT;
		v->v.i = strtoll(t->s, NULL, 10);
		if (neg)
			v->v.i = -v->v.i;
		p->i++;
		return true;
	}
	if ((t->k == T_INT || t->k == T_NUM) && f->type == LT_TYPE_DECIMAL128)
	{
		const char *dot = strchr(t->s, '.');
		lt_int128	d = 0;

		v->kind = LT_VALUE_DECIMAL;
		for (const char *c = t->s; *c; c++)
			if (isdigit((unsigned char) *c))
				d = d * 10 + (*c - '0');
		v->scale = dot ? (int) strlen(dot + 1) : 0;
		v->v.dec = neg ? -d : d;
		p->i++;
		return true;
	}
	if (t->k == T_NUM || (t->k == T_STR && is_float_type(f->type)))
	{
		char	   *end;
		double		d = strtod(t->s, &end);

		if (*end)
		{
			fail(p, "bad number '%s'", t->s);
			return false;
		}
		v->kind = LT_VALUE_FLOAT;
		v->v.f = neg ? -d : d;
		p->i++;
		return true;
	}
	if (t->k == T_STR && (f->type == LT_TYPE_DATE32 || f->type == LT_TYPE_DATE64))
	{
		int			y,
					m,
					d;

		if (sscanf(t->s, "%d-%d-%d", &y, &m, &d) != 3)
		{
			fail(p, "bad date '%s'", t->s);
			return false;
		}
		v->kind = LT_VALUE_DATE;
		v->v.i = lt_days_from_civil(y, m, d);
		p->i++;
		return true;
	}
	if (t->k == T_STR)
	{
		v->kind = LT_VALUE_BYTES;
		v->v.bytes.ptr = (const uint8_t *) t->s;
		v->v.bytes.len = strlen(t->s);
		p->i++;
		return true;
	}
	fail(p, "expected a literal near \"%s\"", t->s ? t->s : "end");
	return false;
}

static where_node *
node(where_kind k)
{
	where_node *n = calloc(1, sizeof(where_node));

	n->kind = k;
	return n;
}

static where_node *
scalar(parser *p, lt_expr *e)
{
	where_node *n;

	if (!e)
	{
		fail(p, "%s", p->err.msg);
		return NULL;
	}
	n = node(W_SCALAR);
	n->expr = e;
	return n;
}

static void
check_column(parser *p)
{
	tok		   *t = peek(p);

	if (t->k != T_IDENT || strcmp(t->s, p->w->column->name) != 0)
		fail(p, "expected column \"%s\" near \"%s\" (one column per query)", p->w->column->name,
			 t->s ? t->s : "end");
	else
		p->i++;
}

static where_node *parse_or(parser *p);

static where_node *
parse_array_fn(parser *p, where_kind k)
{
	const lt_field *elem;
	where_node *n = node(k);
	int			cap = 4;

	expect(p, T_LP, "(");
	check_column(p);
	expect(p, T_COMMA, ",");
	expect(p, T_LB, "[");
	elem = p->w->column->n_children == 1 ? p->w->column->children[0] : NULL;
	if (!elem)
		fail(p, "column \"%s\" is not a list", p->w->column->name);
	n->values = calloc(cap, sizeof(lt_value));
	while (!p->failed && peek(p)->k != T_RB)
	{
		if (n->n_values == cap)
			n->values = realloc(n->values, (cap *= 2) * sizeof(lt_value));
		if (!literal(p, elem, &n->values[n->n_values]))
			break;
		n->n_values++;
		if (!accept(p, T_COMMA))
			break;
	}
	expect(p, T_RB, "]");
	expect(p, T_RP, ")");
	p->w->has_arrays = true;
	return n;
}

static where_node *
parse_pred(parser *p)
{
	lt_filter  *f = p->w->filter;
	const lt_field *c = p->w->column;
	lt_expr    *x;
	tok		   *t;
	lt_value	v,
				v2;
	bool		negated;

	if (accept(p, T_LP))
	{
		where_node *n = parse_or(p);

		expect(p, T_RP, ")");
		return n;
	}
	if (accept_kw(p, "array_has_all"))
		return parse_array_fn(p, W_HAS_ALL);
	if (accept_kw(p, "array_has_any"))
		return parse_array_fn(p, W_HAS_ANY);
	check_column(p);
	if (p->failed)
		return NULL;
	x = lt_expr_column(f, 0, &p->err);
	if (accept_kw(p, "is"))
	{
		negated = accept_kw(p, "not");
		if (!accept_kw(p, "null"))
			fail(p, "expected NULL after IS");
		return scalar(p, lt_expr_is_null(f, x, negated, &p->err));
	}
	negated = accept_kw(p, "not");
	if (accept_kw(p, "between"))
	{
		lt_expr    *e;

		if (!literal(p, c, &v) || !accept_kw(p, "and") || !literal(p, c, &v2))
		{
			fail(p, "bad BETWEEN");
			return NULL;
		}
		e = lt_expr_between(f, x, lt_expr_const(f, &v, &p->err), lt_expr_const(f, &v2, &p->err), &p->err);
		return scalar(p, negated && e ? lt_expr_not(f, e, &p->err) : e);
	}
	if (accept_kw(p, "in"))
	{
		lt_expr    *items[256];
		int			n = 0;
		lt_expr    *e;

		expect(p, T_LP, "(");
		while (!p->failed && peek(p)->k != T_RP && n < 256)
		{
			if (!literal(p, c, &v))
				return NULL;
			items[n++] = lt_expr_const(f, &v, &p->err);
			if (!accept(p, T_COMMA))
				break;
		}
		expect(p, T_RP, ")");
		if (p->failed)
			return NULL;
		e = lt_expr_in(f, x, n, items, &p->err);
		return scalar(p, negated && e ? lt_expr_not(f, e, &p->err) : e);
	}
	if (negated)
	{
		fail(p, "expected BETWEEN or IN after NOT");
		return NULL;
	}
	t = peek(p);
	if (t->k == T_OP && strcmp(t->s, "-") != 0)
	{
		lt_cmp_op	op;

		if (strcmp(t->s, "=") == 0)
			op = LT_CMP_EQ;
		else if (strcmp(t->s, "<>") == 0 || strcmp(t->s, "!=") == 0)
			op = LT_CMP_NE;
		else if (strcmp(t->s, "<") == 0)
			op = LT_CMP_LT;
		else if (strcmp(t->s, "<=") == 0)
			op = LT_CMP_LE;
		else if (strcmp(t->s, ">") == 0)
			op = LT_CMP_GT;
		else if (strcmp(t->s, ">=") == 0)
			op = LT_CMP_GE;
		else
		{
			fail(p, "unknown operator \"%s\"", t->s);
			return NULL;
		}
		p->i++;
		if (!literal(p, c, &v))
			return NULL;
		return scalar(p, lt_expr_cmp(f, op, x, lt_expr_const(f, &v, &p->err), &p->err));
	}
	/* a bare (boolean) column */
	return scalar(p, x);
}

static where_node *
parse_not(parser *p)
{
	if (accept_kw(p, "not"))
	{
		where_node *n = node(W_NOT);

		n->a = parse_not(p);
		return n;
	}
	return parse_pred(p);
}

static where_node *
parse_and(parser *p)
{
	where_node *l = parse_not(p);

	while (!p->failed && accept_kw(p, "and"))
	{
		where_node *n = node(W_AND);

		n->a = l;
		n->b = parse_not(p);
		l = n;
	}
	return l;
}

static where_node *
parse_or(parser *p)
{
	where_node *l = parse_and(p);

	while (!p->failed && accept_kw(p, "or"))
	{
		where_node *n = node(W_OR);

		n->a = l;
		n->b = parse_and(p);
		l = n;
	}
	return l;
}

int
where_parse_text(const char *src, const lt_schema *schema, where_parse *w)
{
	parser		p = {0};

	memset(w, 0, sizeof(*w));
	p.w = w;
	if (tokenize(src, &p) != 0)
	{
		for (int i = 0; i < p.n; i++)
			free(p.t[i].s);
		free(p.t);
		return -1;
	}
	/* the column: the first identifier that is not a keyword */
	for (int i = 0; i < p.n && !w->column; i++)
		if (p.t[i].k == T_IDENT && !is_keyword(p.t[i].s))
		{
			w->column = lt_schema_find_name(schema, p.t[i].s);
			if (!w->column)
			{
				snprintf(w->msg, sizeof(w->msg), "no column \"%s\"", p.t[i].s);
				return -1;
			}
		}
	if (!w->column)
	{
		snprintf(w->msg, sizeof(w->msg), "the expression names no column");
		return -1;
	}
	if (lt_filter_new(1, &w->column, &w->filter, &p.err) != LT_OK)
	{
		snprintf(w->msg, sizeof(w->msg), "%s", p.err.msg);
		return -1;
	}
	w->root = parse_or(&p);
	if (!p.failed && peek(&p)->k != T_END)
		fail(&p, "unexpected \"%s\"", peek(&p)->s);
	/* string literals of array predicates point into the tokens: keep them */
	w->strs = calloc((size_t) p.n + 1, sizeof(char *));
	for (int i = 0; i < p.n; i++)
		if (p.t[i].k == T_STR)
			w->strs[w->n_strs++] = p.t[i].s;
		else
			free(p.t[i].s);
	free(p.t);
	return p.failed ? -1 : 0;
}

static void
free_node(where_node *n)
{
	if (!n)
		return;
	free_node(n->a);
	free_node(n->b);
	free(n->values);
	free(n);
}

void
where_free(where_parse *w)
{
	free_node(w->root);
	lt_filter_free(w->filter);
	for (int i = 0; i < w->n_strs; i++)
		free(w->strs[i]);
	free(w->strs);
}

static lt_expr *
to_expr(where_parse *w, where_node *n, lt_error *err)
{
	lt_expr    *args[2];

	if (!n)
		return NULL;
	switch (n->kind)
	{
		case W_SCALAR:
			return n->expr;
		case W_NOT:
			return lt_expr_not(w->filter, to_expr(w, n->a, err), err);
		case W_AND:
		case W_OR:
			args[0] = to_expr(w, n->a, err);
			args[1] = to_expr(w, n->b, err);
			return n->kind == W_AND ? lt_expr_and(w->filter, 2, args, err) : lt_expr_or(w->filter, 2, args, err);
		default:
			return NULL;
	}
}

int
where_scalar_root(where_parse *w)
{
	lt_error	err = {0};
	lt_expr    *root;

	if (w->has_arrays)
	{
		snprintf(w->msg, sizeof(w->msg), "array predicates do not form a scalar filter");
		return -1;
	}
	root = to_expr(w, w->root, &err);
	if (!root || lt_filter_set_root(w->filter, root, &err) != LT_OK)
	{
		snprintf(w->msg, sizeof(w->msg), "%s", err.msg[0] ? err.msg : "bad expression");
		return -1;
	}
	return 0;
}
