/*
 * lt_filter_bind.c — binding a filter: comparisons become kernel plans.
 *
 * Binding (at the first evaluation after a parameter changed) turns every
 * comparison into a kernel plan.  Integer-like columns (ints, bool,
 * decimal128, dates, times, timestamps, durations) compare through an
 * inclusive range [lo, hi] of raw column values, computed exactly in 128-bit
 * arithmetic from the literal and clamped to the column's physical domain,
 * so the inner loop is one or two typed comparisons and cross-type cases
 * (scales, units, widths) cost nothing per row.  Floats get a loop with
 * Postgres's NaN ordering; bytes a memcmp loop.
 */
#include "table/lt_filter_int.h"

/* ------------------------------------------------------------------ binding */

static lt_code
resolve(lt_filter *f, const lt_expr *v, const lt_value **out, lt_error *err)
{
	param	   *p;

	if (v->kind == N_CONST)
	{
		*out = &v->val;
		return LT_OK;
	}
	p = &f->params[v->slot];
	if (!p->set)
		return lt_error_set(err, LT_EINVALID, "parameter $%d has no value", v->slot);
	*out = &p->vals[0];
	return LT_OK;
}

/* Inclusive range of integers q with q OP x, x = num / den (den > 0). */
typedef struct qrange
{
	bool		empty;
	bool		lo_inf, hi_inf;
	lt_int128	lo, hi;
} qrange;

static qrange
range_of(lt_cmp_op op, lt_int128 num, lt_int128 den, int overflow)
{
	qrange		r = {0};
	lt_int128	fl, ce;

	if (overflow)
	{
		/* |x| beyond every column value: x > all when overflow > 0 */
		bool		below = (op == LT_CMP_LT || op == LT_CMP_LE) ? overflow > 0 : (op == LT_CMP_GT || op == LT_CMP_GE) ? overflow < 0 : false;

		r.lo_inf = r.hi_inf = true;
		r.empty = !below;
		return r;
	}
	fl = floor_div(num, den);
	ce = ceil_div(num, den);
	switch (op)
	{
		case LT_CMP_EQ:
		case LT_CMP_NE:
			r.lo = ce, r.hi = fl;
			r.empty = ce > fl;
			break;
		case LT_CMP_LT:
			r.lo_inf = true;
			r.empty = ce == I128_MIN;
			r.hi = r.empty ? 0 : ce - 1;
			break;
		case LT_CMP_LE:
			r.lo_inf = true;
			r.hi = fl;
			break;
		case LT_CMP_GT:
			r.hi_inf = true;
			r.empty = fl == I128_MAX;
			r.lo = r.empty ? 0 : fl + 1;
			break;
		case LT_CMP_GE:
			r.hi_inf = true;
			r.lo = ce;
			break;
	}
	return r;
}

/*
 * Plan `column OP v` for an integer-like column.  The value Postgres sees is
 * q = c * 10^-scale (decimals), q = c (ints, coarser or equal units: the
 * literal is rescaled to the column as a fraction) or q = floor(c / k) (a
 * finer unit, floored as the FDW shows it).
 */
static void
plan_range(plan *p, const lt_field *fld, phys ph, lt_cmp_op op, const lt_value *v)
{
	lt_int128	num = 0, den = 1, k = 1, dmin, dmax, lo, hi;
	int			overflow = 0;
	qrange		r;
	domain		d = field_domain(fld);

	switch (v->kind)
	{
		case LT_VALUE_BOOL:
			num = v->v.b ? 1 : 0;
			break;
		case LT_VALUE_INT:
			num = v->v.i;
			break;
		case LT_VALUE_UINT:
			num = v->v.u;
			break;
		case LT_VALUE_DECIMAL:
			num = v->v.dec;
			den = pow10_128(v->scale);
			break;
		default:
			{
				/* temporal */
				int64_t		tc = column_ticks(fld);
				int64_t		tl = v->kind == LT_VALUE_DATE ? 1 : unit_ticks(v->unit);

				num = v->v.i;
				if (tc < tl)
					den = tl / tc;	/* column coarser: c OP L / ratio */
				else
					k = tc / tl;	/* column finer (or equal): floor(c / k) OP L */
			}
			break;
	}
	if (d == D_DECIMAL)
	{
		/* c / 10^sc OP num / den  <=>  c OP num * 10^sc / den, cancelling powers of ten */
		int			sc = fld->scale;
		int			sl = v->kind == LT_VALUE_DECIMAL ? v->scale : 0;

		lt_int128	orig = num;

		if (sc >= sl)
		{
			/* beyond 2^127 the literal is beyond every column value (38 digits at most) */
			if (__builtin_mul_overflow(orig, pow10_128(sc - sl), &num))
				overflow = orig > 0 ? 1 : -1;
			den = 1;
		}
		else
			den = pow10_128(sl - sc);
	}
	r = range_of(op, num, den, overflow);
	domain_bounds(ph, &dmin, &dmax);
	p->k = K_RANGE;
	p->negate = op == LT_CMP_NE;
	if (r.empty)
	{
		p->k = K_CONST;
		p->cval = p->negate ? 1 : 0;
		return;
	}
	/* q in [lo, hi] with q = floor(c / k)  <=>  c in [lo * k, hi * k + k - 1] (no overflow: |q| < 2^65, k < 2^47) */
	lo = r.lo_inf ? dmin : r.lo * k;
	hi = r.hi_inf ? dmax : r.hi * k + (k - 1);
	if (lo < dmin)
		lo = dmin;
	if (hi > dmax)
		hi = dmax;
	if (lo > hi)
	{
		p->k = K_CONST;
		p->cval = p->negate ? 1 : 0;
		return;
	}
	if (lo == dmin && hi == dmax)
	{
		p->k = K_CONST;
		p->cval = p->negate ? 0 : 1;
		return;
	}
	p->lo = lo;
	p->hi = hi;
	p->lo_open = lo == dmin;
	p->hi_open = hi == dmax;
}

static double
value_double(const lt_value *v)
{
	return v->kind == LT_VALUE_FLOAT ? v->v.f : v->kind == LT_VALUE_INT ? (double) v->v.i : (double) v->v.u;
}

static void
plan_float(plan *p, lt_cmp_op op, double d)
{
	static const fop plain[] = {F_EQ, F_NE, F_LT, F_LE, F_GT_NAN, F_GE_NAN};

	p->k = K_FLOAT;
	p->d = d;
	if (!isnan(d))
	{
		p->fo = plain[op];
		return;
	}
	/* NaN literal: NaN is the largest value and equals itself */
	switch (op)
	{
		case LT_CMP_EQ:
		case LT_CMP_GE:
			p->fo = F_ISNAN;
			break;
		case LT_CMP_NE:
		case LT_CMP_LT:
			p->fo = F_NOTNAN;
			break;
		case LT_CMP_LE:
			p->k = K_CONST;
			p->cval = 1;
			break;
		case LT_CMP_GT:
			p->k = K_CONST;
			p->cval = 0;
			break;
	}
}

static void
plan_compare(plan *p, const lt_field *fld, int col, lt_cmp_op op, const lt_value *v)
{
	phys		ph = field_phys(fld);
	domain		d = field_domain(fld);

	plan_free(p);
	memset(p, 0, sizeof(*p));
	p->col = col;
	p->op = op;
	if (v->kind == LT_VALUE_NULL)
	{
		p->k = K_CONST;
		p->cval = -1;
	}
	else if (d == D_BYTES)
	{
		p->k = K_BYTES;
		p->b = v->v.bytes.ptr;
		p->blen = v->v.bytes.len;
	}
	else if (d == D_FLOAT || v->kind == LT_VALUE_FLOAT)
		plan_float(p, op, value_double(v));
	else
		plan_range(p, fld, ph, op, v);
}

static int
cmp_irange(const void *a, const void *b)
{
	const irange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static int
cmp_bytes_item(const void *a, const void *b)
{
	const bytes_item *x = a, *y = b;

	return bytes_cmp(x->ptr, x->len, y->ptr, y->len);
}

/*
 * Plan x IN (vals) as a sorted set.  For integer-like columns every item
 * becomes the range of raw values equal to it (one value, none for 2.5
 * against an int column, or k values for a finer time unit), merged.
 */
static lt_code
plan_in(plan *p, const lt_field *fld, int col, const lt_value *vals, int n, lt_error *err)
{
	phys		ph = field_phys(fld);
	domain		d = field_domain(fld);
	int64_t		m = 0;

	plan_free(p);
	memset(p, 0, sizeof(*p));
	p->col = col;
	p->k = K_SET;
	if (n < 0)
	{
		/* a NULL array */
		p->k = K_CONST;
		p->cval = -1;
		return LT_OK;
	}
	p->set_empty = n == 0;
	p->fset = d == D_FLOAT;
	for (int i = 0; i < n; i++)
		p->fset |= vals[i].kind == LT_VALUE_FLOAT;
	if (d == D_BYTES)
	{
		bytes_item *s = lt_malloc((size_t) (n ? n : 1) * sizeof(bytes_item));

		if (!s)
			return lt_nomem(err);
		for (int i = 0; i < n; i++)
		{
			if (vals[i].kind == LT_VALUE_NULL)
				p->set_null = true;
			else
				s[m++] = (bytes_item) {vals[i].v.bytes.ptr, vals[i].v.bytes.len};
		}
		qsort(s, (size_t) m, sizeof(bytes_item), cmp_bytes_item);
		p->set = s;
		if (m > 1)
		{
			int64_t		w = 1;

			for (int64_t i = 1; i < m; i++)
				if (cmp_bytes_item(&s[i], &s[w - 1]) != 0)
					s[w++] = s[i];
			m = w;
		}
	}
	else if (p->fset)
	{
		double	   *s = lt_malloc((size_t) (n ? n : 1) * sizeof(double));

		if (!s)
			return lt_nomem(err);
		for (int i = 0; i < n; i++)
		{
			double		x = value_double(&vals[i]);

			if (vals[i].kind == LT_VALUE_NULL)
				p->set_null = true;
			else if (isnan(x))
				p->set_nan = true;
			else
				s[m++] = x == 0 ? 0.0 : x;	/* -0 = 0 */
		}
		qsort(s, (size_t) m, sizeof(double), cmp_double);
		p->set = s;
		if (m > 1)
		{
			int64_t		w = 1;

			for (int64_t i = 1; i < m; i++)
				if (s[i] != s[w - 1])
					s[w++] = s[i];
			m = w;
		}
	}
	else
	{
		irange	   *s = lt_malloc((size_t) (n ? n : 1) * sizeof(irange));

		if (!s)
			return lt_nomem(err);
		for (int i = 0; i < n; i++)
		{
			plan		eq = {0};
			lt_int128	dmin, dmax;

			if (vals[i].kind == LT_VALUE_NULL)
			{
				p->set_null = true;
				continue;
			}
			plan_range(&eq, fld, ph, LT_CMP_EQ, &vals[i]);
			if (eq.k == K_RANGE)
				s[m++] = (irange) {eq.lo, eq.hi};
			else if (eq.cval == 1)
			{
				/* every column value equals it (a bool domain, say) */
				domain_bounds(ph, &dmin, &dmax);
				s[m++] = (irange) {dmin, dmax};
			}
		}
		qsort(s, (size_t) m, sizeof(irange), cmp_irange);
		p->set = s;
		if (m > 1)
		{
			/* merge overlapping or adjacent ranges, so a binary search finds the one candidate */
			int64_t		w = 1;

			for (int64_t i = 1; i < m; i++)
			{
				if (s[i].lo <= s[w - 1].hi || s[i].lo - 1 == s[w - 1].hi)
				{
					if (s[i].hi > s[w - 1].hi)
						s[w - 1].hi = s[i].hi;
				}
				else
					s[w++] = s[i];
			}
			m = w;
		}
	}
	p->n_set = m;
	return LT_OK;
}

static lt_code
bind_node(lt_filter *f, lt_expr *e, lt_error *err)
{
	const lt_value *v = NULL;
	const lt_value *v2 = NULL;

	switch (e->kind)
	{
		case N_CMP:
			LT_TRY(resolve(f, e->args[1], &v, err));
			plan_compare(&e->p1, f->columns[e->args[0]->col], e->args[0]->col, e->op, v);
			break;
		case N_BETWEEN:
			LT_TRY(resolve(f, e->args[1], &v, err));
			LT_TRY(resolve(f, e->args[2], &v2, err));
			plan_compare(&e->p1, f->columns[e->args[0]->col], e->args[0]->col, LT_CMP_GE, v);
			plan_compare(&e->p2, f->columns[e->args[0]->col], e->args[0]->col, LT_CMP_LE, v2);
			e->fused = false;
			if (e->p1.k == K_RANGE && e->p2.k == K_RANGE)
			{
				/* one kernel for both bounds */
				e->p1.hi = e->p2.hi;
				e->p1.hi_open = e->p2.hi_open;
				if (e->p1.lo > e->p1.hi)
				{
					e->p1.k = K_CONST;
					e->p1.cval = 0;
				}
				e->fused = true;
			}
			break;
		case N_IN:
			{
				const lt_field *fld = f->columns[e->args[0]->col];

				if (e->n_args == 2 && e->args[1]->kind == N_PARAM && e->args[1]->param_array)
				{
					param	   *p = &f->params[e->args[1]->slot];

					if (!p->set)
						return lt_error_set(err, LT_EINVALID, "parameter $%d has no value", e->args[1]->slot);
					LT_TRY(plan_in(&e->p1, fld, e->args[0]->col, p->vals, p->n, err));
				}
				else
				{
					int			n = e->n_args - 1;
					lt_value   *vals = lt_malloc((size_t) (n ? n : 1) * sizeof(lt_value));
					lt_code		rc = LT_OK;

					if (!vals)
						return lt_nomem(err);
					for (int i = 0; i < n && rc == LT_OK; i++)
					{
						rc = resolve(f, e->args[1 + i], &v, err);
						if (rc == LT_OK)
							vals[i] = *v;
					}
					if (rc == LT_OK)
						rc = plan_in(&e->p1, fld, e->args[0]->col, vals, n, err);
					lt_free(vals);
					LT_TRY(rc);
				}
			}
			break;
		case N_AND:
		case N_OR:
		case N_NOT:
			for (int i = 0; i < e->n_args; i++)
				LT_TRY(bind_node(f, e->args[i], err));
			break;
		case N_PARAM:
			if (!f->params[e->slot].set)
				return lt_error_set(err, LT_EINVALID, "parameter $%d has no value", e->slot);
			break;
		default:
			break;
	}
	return LT_OK;
}

lt_code
lt_filter_bind(lt_filter *f, lt_error *err)
{
	if (f->bound)
		return LT_OK;
	if (f->root)
		LT_TRY(bind_node(f, f->root, err));
	f->bound = true;
	return LT_OK;
}
