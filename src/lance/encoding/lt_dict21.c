/*
 * lt_dict21.c — dictionary resolution of 2.1+ pages: dictionary indices
 * become values (gathered item by item, or a whole page at once).  Called by
 * the page decoder (lt_page21.c), mini-block decoding (lt_miniblock.c) and
 * the levels -> arrays step (lt_repdef.c).
 */
#include "encoding/lt_enc21.h"

#include <string.h>

/* Longest string of a dictionary, and room to copy 16 bytes past any of them. */
lt_code
lt21_dict_prepare(lt_array *d, int64_t *maxlen, lt_error *err)
{
	int64_t		m = 0;

	*maxlen = 0;
	if (!lt_type_is_var_width(d->field->type))
		return LT_OK;
	for (int64_t i = 0; i < d->length; i++)
		if (d->offsets[i + 1] - d->offsets[i] > m)
			m = d->offsets[i + 1] - d->offsets[i];
	LT_TRY(lt_array_reserve_data(d, 16, err));
	*maxlen = m;
	return LT_OK;
}

lt_code
lt21_dict_gather(const lt21_where *w, const lt_array *d, int64_t maxlen, const uint32_t *idx,
				 uint64_t n, const uint16_t *def, lt_array *v, lt_error *err)
{
	uint64_t	nd = (uint64_t) d->length;

	if (n == 0)
		return LT_OK;
	LT_TRY(lt_array_reserve(v, (int64_t) n, err));
	if (lt_type_is_var_width(v->field->type))
	{
		int64_t    *o = v->offsets + v->length;
		const int64_t *doff = d->offsets;
		int64_t		pos = v->data_len;
		uint8_t    *out;

		int64_t		need = (int64_t) n * maxlen;

		if (maxlen > 0 && (uint64_t) maxlen > ((uint64_t) 64 << 20) / n)
		{
			/* long strings: count exactly instead of assuming the longest */
			need = 0;
			for (uint64_t i = 0; i < n; i++)
				if (idx[i] < nd)
					need += doff[idx[i] + 1] - doff[idx[i]];
		}
		/* the 16-byte copies below may run past a string: keep room for them */
		LT_TRY(lt_array_reserve_data(v, need + 16, err));
		out = v->data;
		for (uint64_t i = 0; i < n; i++)
		{
			uint32_t	k = idx[i];

			if (k < nd && (!def || def[i] == 0))
			{
				int64_t		l = doff[k + 1] - doff[k];

				if (l <= 16)
					memcpy(out + pos, d->data + doff[k], 16);
				else
					memcpy(out + pos, d->data + doff[k], l);
				pos += l;
			}
			else if (k >= nd && (!def || def[i] == 0))
				return LT21_CORRUPT(w, err, "dictionary index %u at item %llu, the dictionary has %llu items",
									k, (unsigned long long) i, (unsigned long long) nd);
			o[i + 1] = pos;
		}
		v->data_len = pos;
	}
	else
	{
		int			width = lt21_leaf_width(v->field);
		uint8_t    *out = v->values + v->length * width;

		if (width == 0)
			return LT21_UNSUPPORTED(w, err, "dictionary of type %s", lt_type_name(v->field->type));
		for (uint64_t i = 0; i < n; i++)
		{
			uint32_t	k = idx[i];

			if (k < nd && (!def || def[i] == 0))
				memcpy(out + i * width, d->values + (int64_t) k * width, width);
			else if (k >= nd && (!def || def[i] == 0))
				return LT21_CORRUPT(w, err, "dictionary index %u at item %llu, the dictionary has %llu items",
									k, (unsigned long long) i, (unsigned long long) nd);
			else
				memset(out + i * width, 0, width);
		}
	}
	if (v->validity)
		memset(v->validity + v->length, 1, n);
	v->length += (int64_t) n;
	return LT_OK;
}

lt_code
lt21_dict_resolve(const lt21_where *w, lt21_page *pg, const uint16_t *def, lt_error *err)
{
	LT_TRY(lt21_dict_gather(w, pg->dict, pg->dict_maxlen, pg->dict_idx, pg->n_dict_idx, def, pg->values, err));
	pg->n_dict_idx = 0;
	lt_array_free(pg->dict);
	pg->dict = NULL;
	return LT_OK;
}
