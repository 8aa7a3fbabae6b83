/*
 * lt_array.c — building, copying and freeing column vectors.
 */
#include "types/lt_array.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"

/* Which buffers a type uses. */
static inline bool
has_offsets(lt_type_id t)
{
	return lt_type_is_var_width(t) || t == LT_TYPE_LIST || t == LT_TYPE_LARGE_LIST || t == LT_TYPE_MAP;
}

static inline bool
is_list_like(lt_type_id t)
{
	return t == LT_TYPE_LIST || t == LT_TYPE_LARGE_LIST || t == LT_TYPE_MAP;
}

static lt_code
new_array(const lt_field *field, bool deep, lt_array **out, lt_error *err)
{
	lt_array   *a = lt_calloc(1, sizeof(lt_array));
	int			i;

	*out = NULL;
	if (!a)
		return lt_nomem(err);
	a->field = field;
	if (field->n_children > 0)
	{
		a->children = lt_calloc(field->n_children, sizeof(lt_array *));
		if (!a->children)
		{
			lt_free(a);
			return lt_nomem(err);
		}
		a->n_children = field->n_children;
		for (i = 0; deep && i < field->n_children; i++)
		{
			lt_code		rc = new_array(field->children[i], true, &a->children[i], err);

			if (rc != LT_OK)
			{
				lt_array_free(a);
				return rc;
			}
		}
	}
	*out = a;
	return LT_OK;
}

lt_code
lt_array_new(const lt_field *field, lt_array **out, lt_error *err)
{
	return new_array(lt_field_storage(field), true, out, err);
}

lt_code
lt_array_new_values(const lt_field *field, lt_array **out, lt_error *err)
{
	return new_array(field, true, out, err);
}

lt_code
lt_array_new_shallow(const lt_field *field, lt_array **out, lt_error *err)
{
	return new_array(lt_field_storage(field), false, out, err);
}

void
lt_array_free(lt_array *a)
{
	int			i;

	if (!a)
		return;
	for (i = 0; i < a->n_children; i++)
		lt_array_free(a->children[i]);
	lt_free(a->children);
	lt_free(a->validity);
	lt_free(a->values);
	lt_free(a->offsets);
	lt_free(a->data);
	lt_free(a);
}

void
lt_array_clear(lt_array *a)
{
	int			i;

	a->length = 0;
	a->null_count = 0;
	a->data_len = 0;
	a->room = 0;
	a->ascii_start = a->ascii_end = 0;
	if (a->offsets)
		a->offsets[0] = 0;
	for (i = 0; i < a->n_children; i++)
		if (a->children[i])
			lt_array_clear(a->children[i]);
}

static lt_code
grow(void **buf, int64_t need_bytes, int64_t *cap_bytes_unused, lt_error *err)
{
	void	   *p = lt_realloc(*buf, (size_t) need_bytes);

	(void) cap_bytes_unused;
	if (!p)
		return lt_nomem(err);
	*buf = p;
	return LT_OK;
}

lt_code
lt_array_reserve(lt_array *a, int64_t extra, lt_error *err)
{
	int64_t		need;
	int64_t		cap;
	int			width = a->field->byte_width;

	if (extra < 0 || __builtin_add_overflow(a->length, extra, &need) || need > ((int64_t) 1 << 40))
		return lt_error_set(err, LT_EINVALID, "array of %lld slots is too large", (long long) a->length + extra);
	if (need <= a->cap && (a->offsets || !has_offsets(a->field->type)))
		return LT_OK;
	cap = a->cap ? a->cap : 16;
	while (cap < need)
		cap *= 2;
	if (width > 0)
		LT_TRY(grow((void **) &a->values, cap * width, NULL, err));
	if (has_offsets(a->field->type))
	{
		bool		fresh = a->offsets == NULL;

		LT_TRY(grow((void **) &a->offsets, (cap + 1) * (int64_t) sizeof(int64_t), NULL, err));
		if (fresh)
			a->offsets[0] = 0;
	}
	if (a->validity)
		LT_TRY(grow((void **) &a->validity, cap, NULL, err));
	a->cap = cap;
	return LT_OK;
}

lt_code
lt_array_reserve_data(lt_array *a, int64_t extra_bytes, lt_error *err)
{
	int64_t		need;
	int64_t		cap;

	if (extra_bytes < 0 || __builtin_add_overflow(a->data_len, extra_bytes, &need) || need > ((int64_t) 1 << 40))
		return lt_error_set(err, LT_EINVALID, "string data of %lld bytes is too large", (long long) a->data_len + extra_bytes);
	if (need <= a->data_cap && a->data)
		return LT_OK;
	cap = a->data_cap ? a->data_cap : 256;
	while (cap < need)
		cap *= 2;
	LT_TRY(grow((void **) &a->data, cap, NULL, err));
	a->data_cap = cap;
	return LT_OK;
}

lt_code
lt_array_ensure_validity(lt_array *a, lt_error *err)
{
	int64_t		cap;

	if (a->validity)
		return LT_OK;
	cap = a->cap > a->length ? a->cap : a->length;
	if (cap == 0)
		cap = 16;
	a->validity = lt_malloc((size_t) cap);
	if (!a->validity)
		return lt_nomem(err);
	memset(a->validity, 1, (size_t) cap);
	if (a->cap < cap)
		return lt_array_reserve(a, cap - a->length, err);
	return LT_OK;
}

/* Child slot range [lo, hi) covered by list-like slots [start, start+len). */
static inline void
child_range(const lt_array *src, int64_t start, int64_t len, int64_t *lo, int64_t *hi)
{
	if (src->field->type == LT_TYPE_FIXED_LIST)
	{
		*lo = start * src->field->fixed_size;
		*hi = (start + len) * src->field->fixed_size;
	}
	else
	{
		*lo = src->offsets[start];
		*hi = src->offsets[start + len];
	}
}

lt_code
lt_array_append_slice(lt_array *dst, const lt_array *src, int64_t start, int64_t len, lt_error *err)
{
	lt_type_id	t = dst->field->type;
	int			width = dst->field->byte_width;
	int64_t		i;

	if (len == 0)
		return LT_OK;
	if (start < 0 || len < 0 || start + len > src->length)
		return lt_error_set(err, LT_EINVALID, "slice [%lld, +%lld) outside an array of %lld",
							(long long) start, (long long) len, (long long) src->length);
	if (src->room)
		return lt_error_set(err, LT_EINVALID, "slice of an array with header room");
	LT_TRY(lt_array_reserve(dst, len, err));

	/* validity */
	if (src->validity)
	{
		int64_t		nulls = 0;

		LT_TRY(lt_array_ensure_validity(dst, err));
		memcpy(dst->validity + dst->length, src->validity + start, (size_t) len);
		for (i = 0; i < len; i++)
			nulls += !src->validity[start + i];
		dst->null_count += nulls;
	}
	else if (dst->validity)
		memset(dst->validity + dst->length, 1, (size_t) len);

	if (width > 0 && t != LT_TYPE_FIXED_LIST)
		memcpy(dst->values + dst->length * width, src->values + start * width, (size_t) (len * width));

	if (lt_type_is_var_width(t))
	{
		int64_t		lo = src->offsets[start];
		int64_t		hi = src->offsets[start + len];
		int64_t		base = dst->offsets[dst->length] - lo;

		if (dst->room)
		{
			/* value by value, each after its room */
			uint8_t    *p;

			LT_TRY(lt_array_reserve_data(dst, hi - lo + (len + 1) * LT_ARRAY_ROOM_MAX + 8, err));
			p = dst->data + dst->data_len;
			for (i = 0; i < len; i++)
			{
				int64_t		vlo = src->offsets[start + i],
							vlen = src->offsets[start + i + 1] - vlo;

				p = lt_array_room_open(dst->data, p);
				if (vlen > 0)
					memcpy(p, src->data + vlo, (size_t) vlen);
				p += vlen;
				dst->offsets[dst->length + i + 1] = p - dst->data;
			}
			dst->data_len = p - dst->data;
		}
		else
		{
			LT_TRY(lt_array_reserve_data(dst, hi - lo, err));
			if (hi > lo)
				memcpy(dst->data + dst->data_len, src->data + lo, (size_t) (hi - lo));
			dst->data_len += hi - lo;
			for (i = 1; i <= len; i++)
				dst->offsets[dst->length + i] = src->offsets[start + i] + base;
		}
	}
	else if (is_list_like(t) || t == LT_TYPE_FIXED_LIST)
	{
		int64_t		lo, hi;

		child_range(src, start, len, &lo, &hi);
		if (is_list_like(t))
		{
			int64_t		base = dst->offsets[dst->length] - lo;

			for (i = 1; i <= len; i++)
				dst->offsets[dst->length + i] = src->offsets[start + i] + base;
		}
		if (dst->children[0] && src->children[0])
			LT_TRY(lt_array_append_slice(dst->children[0], src->children[0], lo, hi - lo, err));
	}
	else if (t == LT_TYPE_STRUCT)
	{
		for (i = 0; i < dst->n_children; i++)
			if (dst->children[i] && src->children[i])
				LT_TRY(lt_array_append_slice(dst->children[i], src->children[i], start, len, err));
	}
	dst->length += len;
	return LT_OK;
}

lt_code
lt_array_append_take(lt_array *dst, const lt_array *src, const int64_t *idx, int64_t n, lt_error *err)
{
	int64_t		i = 0;

	/* copy maximal runs of consecutive indices as slices */
	while (i < n)
	{
		int64_t		j = i + 1;

		while (j < n && idx[j] == idx[j - 1] + 1)
			j++;
		LT_TRY(lt_array_append_slice(dst, src, idx[i], j - i, err));
		i = j;
	}
	return LT_OK;
}

lt_code
lt_array_append_nulls(lt_array *dst, int64_t n, lt_error *err)
{
	lt_type_id	t = dst->field->type;
	int			width = dst->field->byte_width;
	int64_t		i;

	if (n == 0)
		return LT_OK;
	LT_TRY(lt_array_reserve(dst, n, err));
	LT_TRY(lt_array_ensure_validity(dst, err));
	memset(dst->validity + dst->length, 0, (size_t) n);
	dst->null_count += n;
	if (width > 0 && t != LT_TYPE_FIXED_LIST)
		memset(dst->values + dst->length * width, 0, (size_t) (n * width));
	if (has_offsets(t))
		for (i = 1; i <= n; i++)
			dst->offsets[dst->length + i] = dst->offsets[dst->length];
	if (t == LT_TYPE_FIXED_LIST && dst->children[0])
		LT_TRY(lt_array_append_nulls(dst->children[0], n * dst->field->fixed_size, err));
	if (t == LT_TYPE_STRUCT)
		for (i = 0; i < dst->n_children; i++)
			if (dst->children[i])
				LT_TRY(lt_array_append_nulls(dst->children[i], n, err));
	dst->length += n;
	return LT_OK;
}

/* Compare slots [as, as+len) of a with [bs, bs+len) of b, recursively. */
static bool
equal_range(const lt_array *a, int64_t as, const lt_array *b, int64_t bs, int64_t len)
{
	lt_type_id	t = a->field->type;
	int			width = a->field->byte_width;
	int64_t		i;

	if (t != b->field->type || as + len > a->length || bs + len > b->length)
		return false;
	for (i = 0; i < len; i++)
	{
		bool		va = lt_array_is_valid(a, as + i);

		if (va != lt_array_is_valid(b, bs + i))
			return false;
		if (!va)
			continue;
		if (width > 0 && t != LT_TYPE_FIXED_LIST &&
			memcmp(a->values + (as + i) * width, b->values + (bs + i) * width, width) != 0)
			return false;
		if (has_offsets(t))
		{
			int64_t		la = a->offsets[as + i + 1] - a->offsets[as + i];

			if (la != b->offsets[bs + i + 1] - b->offsets[bs + i])
				return false;
			if (lt_type_is_var_width(t) &&
				memcmp(a->data + a->offsets[as + i], b->data + b->offsets[bs + i], (size_t) la) != 0)
				return false;
			if (is_list_like(t) &&
				!equal_range(a->children[0], a->offsets[as + i], b->children[0], b->offsets[bs + i], la))
				return false;
		}
		if (t == LT_TYPE_FIXED_LIST)
		{
			int64_t		n = a->field->fixed_size;

			if (!equal_range(a->children[0], (as + i) * n, b->children[0], (bs + i) * n, n))
				return false;
		}
	}
	if (t == LT_TYPE_STRUCT)
	{
		if (a->n_children != b->n_children)
			return false;
		for (i = 0; i < a->n_children; i++)
		{
			/* struct children are compared slot by slot, nulls included */
			int64_t		k;

			for (k = 0; k < len; k++)
				if (lt_array_is_valid(a, as + k) &&
					!equal_range(a->children[i], as + k, b->children[i], bs + k, 1))
					return false;
		}
	}
	return true;
}

/* A loop per type, so that each one is a plain widening copy the compiler vectorizes. */
#define WIDEN(T, W) \
	do { \
		for (int64_t i = 0; i < n; i++) \
		{ \
			T			x; \
\
			memcpy(&x, a->values + i * (W), (W)); \
			out[i] = x; \
		} \
	} while (0)

void
lt_array_int64s(const lt_array *a, int64_t n, int64_t *out)
{
	switch (a->field->type)
	{
		case LT_TYPE_INT8:
			WIDEN(int8_t, 1);
			break;
		case LT_TYPE_UINT8:
			WIDEN(uint8_t, 1);
			break;
		case LT_TYPE_INT16:
			WIDEN(int16_t, 2);
			break;
		case LT_TYPE_UINT16:
			WIDEN(uint16_t, 2);
			break;
		case LT_TYPE_INT32:
		case LT_TYPE_DATE32:
		case LT_TYPE_TIME32:
			WIDEN(int32_t, 4);
			break;
		case LT_TYPE_UINT32:
			WIDEN(uint32_t, 4);
			break;
		default:
			if (n > 0)
				memcpy(out, a->values, (size_t) n * sizeof(int64_t));
			break;
	}
}

bool
lt_array_equal(const lt_array *a, const lt_array *b)
{
	if (!a || !b)
		return a == b;
	return a->length == b->length && equal_range(a, 0, b, 0, a->length);
}
