/*
 * lt_filter_eval.c — kernels and evaluation of a bound filter over a batch.
 *
 * Evaluation is node by node over the whole batch.  Every predicate node
 * yields two byte masks: t (TRUE) and f (FALSE); rows in neither are
 * UNKNOWN.  AND is t = t1 & t2, f = f1 | f2; OR the dual; NOT swaps them,
 * so three-valued logic costs one byte operation per row.  f is only
 * computed where a NOT above needs it.
 */
#include "table/lt_filter_int.h"

/* ------------------------------------------------------------------ kernels */

/* m[i] = cmp(v[i]) for the whole batch, ignoring validity. */

#define RANGE_LOOP(T) \
	do { \
		const T    *v_ = (const T *) a->values; \
		T			lo_ = (T) p->lo, hi_ = (T) p->hi; \
		uint8_t		x_ = p->negate; \
		if (lo_ == hi_) \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) ((v_[i] == lo_) ^ x_); \
		else if (p->lo_open) \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) ((v_[i] <= hi_) ^ x_); \
		else if (p->hi_open) \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) ((v_[i] >= lo_) ^ x_); \
		else \
			for (int64_t i = 0; i < n; i++) m[i] = (uint8_t) (((v_[i] >= lo_) & (v_[i] <= hi_)) ^ x_); \
	} while (0)

static void
range_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	switch (ph)
	{
		case P_I8:
			RANGE_LOOP(int8_t);
			break;
		case P_I16:
			RANGE_LOOP(int16_t);
			break;
		case P_I32:
			RANGE_LOOP(int32_t);
			break;
		case P_I64:
			RANGE_LOOP(int64_t);
			break;
		case P_U8:
			RANGE_LOOP(uint8_t);
			break;
		case P_U16:
			RANGE_LOOP(uint16_t);
			break;
		case P_U32:
			RANGE_LOOP(uint32_t);
			break;
		case P_U64:
			RANGE_LOOP(uint64_t);
			break;
		case P_I128:
			/* decimal slots may be only 8-byte aligned (palloc): load with memcpy */
			for (int64_t i = 0; i < n; i++)
			{
				lt_int128	x;

				memcpy(&x, a->values + i * 16, 16);
				m[i] = (uint8_t) (((x >= p->lo) & (x <= p->hi)) ^ p->negate);
			}
			break;
		default:
			break;
	}
}


#define FLOAT_OPS(LOAD) \
	do { \
		double		d_ = p->d; \
		switch (p->fo) \
		{ \
			case F_EQ: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x == d_; } break; \
			case F_NE: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x != d_; } break; \
			case F_LT: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x < d_; } break; \
			case F_LE: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x <= d_; } break; \
			case F_GT_NAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = (x > d_) | (x != x); } break; \
			case F_GE_NAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = (x >= d_) | (x != x); } break; \
			case F_ISNAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x != x; } break; \
			case F_NOTNAN: for (int64_t i = 0; i < n; i++) { double x = LOAD; m[i] = x == x; } break; \
		} \
	} while (0)

static void
float_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	switch (ph)
	{
		case P_F64:
			{
				const double *v = (const double *) a->values;

				FLOAT_OPS(v[i]);
			}
			break;
		case P_F32:
			{
				const float *v = (const float *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_F16:
			{
				const uint16_t *v = (const uint16_t *) a->values;

				FLOAT_OPS((double) lt_half_to_float(v[i]));
			}
			break;
		case P_I8:
			{
				const int8_t *v = (const int8_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_I16:
			{
				const int16_t *v = (const int16_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_I32:
			{
				const int32_t *v = (const int32_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_I64:
			{
				const int64_t *v = (const int64_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U8:
			{
				const uint8_t *v = a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U16:
			{
				const uint16_t *v = (const uint16_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U32:
			{
				const uint32_t *v = (const uint32_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		case P_U64:
			{
				const uint64_t *v = (const uint64_t *) a->values;

				FLOAT_OPS((double) v[i]);
			}
			break;
		default:
			break;
	}
}

static inline void
slot_bytes(const lt_array *a, phys ph, int64_t i, const uint8_t **ptr, size_t *len)
{
	if (ph == P_FIXED)
	{
		*len = (size_t) a->field->byte_width;
		*ptr = a->values + i * (int64_t) *len;
	}
	else
	{
		*ptr = a->data + a->offsets[i];
		*len = (size_t) (a->offsets[i + 1] - a->offsets[i]);
	}
}

static void
bytes_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	const uint8_t *b = p->b;
	size_t		bl = p->blen;

	if (p->op == LT_CMP_EQ || p->op == LT_CMP_NE)
	{
		uint8_t		x = p->op == LT_CMP_NE;

		for (int64_t i = 0; i < n; i++)
		{
			const uint8_t *s;
			size_t		l;

			slot_bytes(a, ph, i, &s, &l);
			m[i] = (uint8_t) ((l == bl && (l == 0 || memcmp(s, b, l) == 0)) ^ x);
		}
		return;
	}
	for (int64_t i = 0; i < n; i++)
	{
		const uint8_t *s;
		size_t		l;
		int			c;

		slot_bytes(a, ph, i, &s, &l);
		c = bytes_cmp(s, l, b, bl);
		switch (p->op)
		{
			case LT_CMP_LT:
				m[i] = c < 0;
				break;
			case LT_CMP_LE:
				m[i] = c <= 0;
				break;
			case LT_CMP_GT:
				m[i] = c > 0;
				break;
			default:
				m[i] = c >= 0;
				break;
		}
	}
}

#define SET_LOOP(T) \
	do { \
		const T    *v_ = (const T *) a->values; \
		const irange *s_ = (const irange *) p->set; \
		int64_t		ns_ = p->n_set; \
		if (ns_ <= SMALL_SET) \
		{ \
			memset(m, 0, (size_t) n); \
			for (int64_t j = 0; j < ns_; j++) \
			{ \
				T			lo_ = (T) s_[j].lo, hi_ = (T) s_[j].hi; \
				if (lo_ == hi_) \
					for (int64_t i = 0; i < n; i++) m[i] |= v_[i] == lo_; \
				else \
					for (int64_t i = 0; i < n; i++) m[i] |= (v_[i] >= lo_) & (v_[i] <= hi_); \
			} \
		} \
		else \
			for (int64_t i = 0; i < n; i++) \
				m[i] = in_ranges(s_, ns_, v_[i]); \
	} while (0)

/* Is x in one of the sorted disjoint ranges? */
static inline uint8_t
in_ranges(const irange *s, int64_t ns, lt_int128 x)
{
	int64_t		lo = 0, hi = ns;

	/* the last range starting at or below x */
	while (lo < hi)
	{
		int64_t		mid = (lo + hi) / 2;

		if (s[mid].lo <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && x <= s[lo - 1].hi;
}

static inline double
load_double(const lt_array *a, phys ph, int64_t i)
{
	switch (ph)
	{
		case P_F64:
			return ((const double *) a->values)[i];
		case P_F32:
			return ((const float *) a->values)[i];
		case P_F16:
			return lt_half_to_float(((const uint16_t *) a->values)[i]);
		case P_I8:
			return ((const int8_t *) a->values)[i];
		case P_I16:
			return ((const int16_t *) a->values)[i];
		case P_I32:
			return ((const int32_t *) a->values)[i];
		case P_I64:
			return (double) ((const int64_t *) a->values)[i];
		case P_U8:
			return a->values[i];
		case P_U16:
			return ((const uint16_t *) a->values)[i];
		case P_U32:
			return ((const uint32_t *) a->values)[i];
		case P_U64:
			return (double) ((const uint64_t *) a->values)[i];
		default:
			return 0;
	}
}

/* m[i] = v[i] in the set; float sets need 2n bytes at m. */
static void
set_kernel(const plan *p, phys ph, const lt_array *a, int64_t n, uint8_t *m)
{
	if (field_domain(a->field) == D_BYTES)
	{
		const bytes_item *s = p->set;

		for (int64_t i = 0; i < n; i++)
		{
			const uint8_t *b;
			size_t		l;
			int64_t		lo = 0, hi = p->n_set;

			slot_bytes(a, ph, i, &b, &l);
			while (lo < hi)
			{
				int64_t		mid = (lo + hi) / 2;

				if (bytes_cmp(s[mid].ptr, s[mid].len, b, l) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			m[i] = lo < p->n_set && bytes_cmp(s[lo].ptr, s[lo].len, b, l) == 0;
		}
		return;
	}
	if (p->fset)
	{
		const double *s = p->set;

		if (p->n_set > SMALL_SET)
		{
			for (int64_t i = 0; i < n; i++)
			{
				double		x = load_double(a, ph, i);
				int64_t		lo = 0, hi = p->n_set;

				if (isnan(x))
				{
					m[i] = p->set_nan;
					continue;
				}
				while (lo < hi)
				{
					int64_t		mid = (lo + hi) / 2;

					if (s[mid] < x)
						lo = mid + 1;
					else
						hi = mid;
				}
				m[i] = lo < p->n_set && s[lo] == x;
			}
			return;
		}
		else
		{
			/* item by item through the float kernel */
			plan		q = *p;
			uint8_t    *tmp = m + n;

			memset(m, 0, (size_t) n);
			q.k = K_FLOAT;
			for (int64_t j = 0; j <= p->n_set; j++)
			{
				if (j == p->n_set && !p->set_nan)
					break;
				q.fo = j < p->n_set ? F_EQ : F_ISNAN;
				q.d = j < p->n_set ? s[j] : 0;
				float_kernel(&q, ph, a, n, tmp);
				for (int64_t i = 0; i < n; i++)
					m[i] |= tmp[i];
			}
		}
		return;
	}
	switch (ph)
	{
		case P_I8:
			SET_LOOP(int8_t);
			break;
		case P_I16:
			SET_LOOP(int16_t);
			break;
		case P_I32:
			SET_LOOP(int32_t);
			break;
		case P_I64:
			SET_LOOP(int64_t);
			break;
		case P_U8:
			SET_LOOP(uint8_t);
			break;
		case P_U16:
			SET_LOOP(uint16_t);
			break;
		case P_U32:
			SET_LOOP(uint32_t);
			break;
		case P_U64:
			SET_LOOP(uint64_t);
			break;
		case P_I128:
			for (int64_t i = 0; i < n; i++)
			{
				lt_int128	x;

				memcpy(&x, a->values + i * 16, 16);
				m[i] = in_ranges(p->set, p->n_set, x);
			}
			break;
		default:
			break;
	}
}

/* ------------------------------------------------------------------ evaluation */

typedef struct eval_ctx
{
	lt_filter  *f;
	lt_array   *const *cols;
	int64_t		n;
} eval_ctx;

/*
 * Turn the raw comparison mask in e->t into t/f masks: apply validity, and
 * fill f when asked.  `unknown_miss`: a miss is UNKNOWN, not FALSE (IN with
 * a NULL item).
 */
static void
finish_masks(const lt_array *a, int64_t n, uint8_t *t, uint8_t *f, bool want_f, bool unknown_miss)
{
	const uint8_t *valid = a->validity;

	if (want_f)
	{
		if (unknown_miss)
			memset(f, 0, (size_t) n);
		else if (valid)
			for (int64_t i = 0; i < n; i++)
				f[i] = valid[i] & (t[i] ^ 1);
		else
			for (int64_t i = 0; i < n; i++)
				f[i] = t[i] ^ 1;
	}
	if (valid)
		for (int64_t i = 0; i < n; i++)
			t[i] &= valid[i];
}

static void
eval_plan(eval_ctx *c, const plan *p, uint8_t *t, uint8_t *f, bool want_f, uint8_t *scratch)
{
	const lt_array *a = c->cols[p->col];
	phys		ph = field_phys(a->field);
	int64_t		n = c->n;

	switch (p->k)
	{
		case K_CONST:
			if (p->cval < 0)
			{
				memset(t, 0, (size_t) n);
				if (want_f)
					memset(f, 0, (size_t) n);
				return;
			}
			memset(t, p->cval, (size_t) n);
			break;
		case K_RANGE:
			range_kernel(p, ph, a, n, t);
			break;
		case K_FLOAT:
			float_kernel(p, ph, a, n, t);
			break;
		case K_BYTES:
			bytes_kernel(p, ph, a, n, t);
			break;
		case K_SET:
			if (p->set_empty)
			{
				/* x = ANY('{}') is FALSE even for a NULL x */
				memset(t, 0, (size_t) n);
				if (want_f)
					memset(f, 1, (size_t) n);
				return;
			}
			if (p->fset)
			{
				/* the float set kernel needs 2n bytes */
				set_kernel(p, ph, a, n, scratch);
				memcpy(t, scratch, (size_t) n);
			}
			else
				set_kernel(p, ph, a, n, t);
			finish_masks(a, n, t, f, want_f, p->set_null);
			return;
	}
	finish_masks(a, n, t, f, want_f, false);
}

/* Evaluate e; *t / *f point at its masks (its own buffers or a child's). */
static void
eval_node(eval_ctx *c, lt_expr *e, bool want_f, const uint8_t **t, const uint8_t **f)
{
	int64_t		n = c->n;

	*t = e->t;
	*f = e->f;
	switch (e->kind)
	{
		case N_COLUMN:
			{
				/* a bool column as a predicate */
				const lt_array *a = c->cols[e->col];

				for (int64_t i = 0; i < n; i++)
					e->t[i] = a->values[i] != 0;
				finish_masks(a, n, e->t, e->f, want_f, false);
			}
			break;
		case N_CONST:
		case N_PARAM:
			{
				const lt_value *v = e->kind == N_CONST ? &e->val : &c->f->params[e->slot].vals[0];
				bool		known = v->kind != LT_VALUE_NULL;

				memset(e->t, known && v->v.b, (size_t) n);
				if (want_f)
					memset(e->f, known && !v->v.b, (size_t) n);
			}
			break;
		case N_CMP:
		case N_IN:
			eval_plan(c, &e->p1, e->t, e->f, want_f, e->f);
			break;
		case N_BETWEEN:
			if (e->fused)
				eval_plan(c, &e->p1, e->t, e->f, want_f, e->f);
			else
			{
				/* lo <= x AND x <= hi, with the second bound's masks in the scratch of p2 */
				uint8_t    *t2 = e->f + n,
						   *f2 = e->f + 2 * n;

				eval_plan(c, &e->p1, e->t, e->f, want_f, NULL);
				eval_plan(c, &e->p2, t2, f2, want_f, NULL);
				for (int64_t i = 0; i < n; i++)
					e->t[i] &= t2[i];
				if (want_f)
					for (int64_t i = 0; i < n; i++)
						e->f[i] |= f2[i];
			}
			break;
		case N_IS_NULL:
			{
				const uint8_t *valid = c->cols[e->args[0]->col]->validity;
				uint8_t    *is_null = e->negated ? e->f : e->t;
				uint8_t    *not_null = e->negated ? e->t : e->f;

				if (!valid)
				{
					memset(is_null, 0, (size_t) n);
					memset(not_null, 1, (size_t) n);
				}
				else
					for (int64_t i = 0; i < n; i++)
					{
						is_null[i] = valid[i] ^ 1;
						not_null[i] = valid[i];
					}
			}
			break;
		case N_AND:
		case N_OR:
			{
				bool		and = e->kind == N_AND;
				const uint8_t *ct, *cf;

				eval_node(c, e->args[0], want_f, &ct, &cf);
				if (e->n_args == 1)
				{
					*t = ct;
					*f = cf;
					break;
				}
				memcpy(e->t, ct, (size_t) n);
				if (want_f)
					memcpy(e->f, cf, (size_t) n);
				for (int k = 1; k < e->n_args; k++)
				{
					eval_node(c, e->args[k], want_f, &ct, &cf);
					if (and)
					{
						for (int64_t i = 0; i < n; i++)
							e->t[i] &= ct[i];
						if (want_f)
							for (int64_t i = 0; i < n; i++)
								e->f[i] |= cf[i];
					}
					else
					{
						for (int64_t i = 0; i < n; i++)
							e->t[i] |= ct[i];
						if (want_f)
							for (int64_t i = 0; i < n; i++)
								e->f[i] &= cf[i];
					}
				}
			}
			break;
		case N_NOT:
			{
				const uint8_t *ct, *cf;

				eval_node(c, e->args[0], true, &ct, &cf);
				*t = cf;
				*f = ct;
			}
			break;
	}
}

/* Scratch: t is n bytes, f is 3n (f, and BETWEEN's / float sets' second masks). */
static lt_code
reserve(lt_filter *f, int64_t n, lt_error *err)
{
	int64_t		cap = f->cap ? f->cap : 1024;

	while (cap < n)
		cap *= 2;
	if (cap != f->cap)
	{
		uint8_t    *all = lt_malloc((size_t) cap);

		if (!all)
			return lt_nomem(err);
		memset(all, 1, (size_t) cap);
		lt_free(f->all_true);
		f->all_true = all;
		f->cap = cap;
	}
	/* nodes added after the last evaluation get their buffers here too */
	for (int i = 0; i < f->n_nodes; i++)
	{
		lt_expr    *e = f->nodes[i];
		uint8_t    *t, *ff;

		if (e->cap == cap)
			continue;
		t = lt_realloc(e->t, (size_t) cap);
		if (!t)
			return lt_nomem(err);
		e->t = t;
		ff = lt_realloc(e->f, (size_t) cap * 3);
		if (!ff)
			return lt_nomem(err);
		e->f = ff;
		e->cap = cap;
	}
	return LT_OK;
}

lt_code
lt_filter_eval_mask(lt_filter *f, lt_array *const *columns, int64_t n, const uint8_t **mask, lt_error *err)
{
	eval_ctx	c = {f, columns, n};
	const uint8_t *t, *ff;

	*mask = NULL;
	if (n < 0 || n > (int64_t) UINT32_MAX)
		return lt_error_set(err, LT_EINVALID, "cannot filter %lld rows at once", (long long) n);
	for (int i = 0; i < f->n_columns; i++)
		if (!columns[i] || columns[i]->length < n || columns[i]->field->type != f->columns[i]->type)
			return lt_error_set(err, LT_EINVALID, "filter column %d (\"%s\") is missing or not %lld rows of %s",
								i, f->columns[i]->name, (long long) n, lt_type_name(f->columns[i]->type));
	LT_TRY(lt_filter_bind(f, err));
	LT_TRY(reserve(f, n ? n : 1, err));
	if (!f->root)
	{
		*mask = f->all_true;
		return LT_OK;
	}
	eval_node(&c, f->root, false, &t, &ff);
	*mask = t;
	return LT_OK;
}

lt_code
lt_filter_eval(lt_filter *f, lt_array *const *columns, int64_t n, uint32_t *sel, int64_t *n_sel, lt_error *err)
{
	const uint8_t *m;
	int64_t		k = 0;

	*n_sel = 0;
	LT_TRY(lt_filter_eval_mask(f, columns, n, &m, err));
	/* branch-free compaction */
	for (int64_t i = 0; i < n; i++)
	{
		sel[k] = (uint32_t) i;
		k += m[i];
	}
	*n_sel = k;
	return LT_OK;
}
