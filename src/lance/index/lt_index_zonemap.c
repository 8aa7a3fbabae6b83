/*
 * lt_index_zonemap.c — Lance's zone map index ("at most" answers).
 *
 * zonemap.lance, one row per zone (zones never cross fragments):
 *   min, max (the key type), null_count: uint32, nan_count: uint32,
 *   fragment_id: uint64, zone_start: uint64 (offset of the zone's first row
 *   in its fragment), zone_length: uint64 (offsets spanned: last - first + 1,
 *   deleted rows included);
 *   schema metadata rows_per_zone.
 * The reference's JavaScript binding cannot build zone maps, so this layout
 * comes from the Lance 8 source (rust/lance-index/src/scalar/zonemap.rs), not
 * from files seen here.
 */
#include "index/lt_index_int.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_rowids.h"

lt_code
lt_zonemap_open(lt_index_reader *r, lt_seg_reader *s, lt_error *err)
{
	const lt_field *key = r->idx->field;
	const lt_field *mn,
			   *mx;
	uint64_t	n;

	LT_TRY(lt_seg_open_file(r, s, "zonemap.lance", &s->zm, err));
	LT_TRY(lt_index_file_field(s->zm, "min", -1, &mn, err));
	LT_TRY(lt_index_file_field(s->zm, "max", -1, &mx, err));
	if (!lt_index_same_type(mn, key) || !lt_index_same_type(mx, key))
		return lt_corrupt(err, "%s: zone bounds are %s, column \"%s\" is %s", lt_index_file_path(s->zm),
						  lt_type_name(mn->type), key->name, lt_type_name(key->type));
	n = lt_index_file_rows(s->zm);
	LT_TRY(lt_index_file_read(s->zm, mn, 0, n, &s->z_min, err));
	LT_TRY(lt_index_file_read(s->zm, mx, 0, n, &s->z_max, err));
	LT_TRY(lt_index_read_column(s->zm, "null_count", LT_TYPE_UINT32, &s->z_nulls, err));
	LT_TRY(lt_index_read_column(s->zm, "nan_count", LT_TYPE_UINT32, &s->z_nans, err));
	LT_TRY(lt_index_read_column(s->zm, "fragment_id", LT_TYPE_UINT64, &s->z_frag, err));
	LT_TRY(lt_index_read_column(s->zm, "zone_start", LT_TYPE_UINT64, &s->z_start, err));
	LT_TRY(lt_index_read_column(s->zm, "zone_length", LT_TYPE_UINT64, &s->z_len, err));
	if (s->z_nulls->null_count || s->z_nans->null_count || s->z_frag->null_count || s->z_start->null_count ||
		s->z_len->null_count)
		return lt_corrupt(err, "%s: null zone bounds or counts", lt_index_file_path(s->zm));
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	frag = lt_index_uint_at(s->z_frag, (int64_t) i);
		uint64_t	start = lt_index_uint_at(s->z_start, (int64_t) i);
		uint64_t	len = lt_index_uint_at(s->z_len, (int64_t) i);

		if (frag > UINT32_MAX || start + len > LT_MAX_FRAGMENT_ROWS || start >= LT_MAX_FRAGMENT_ROWS)
			return lt_corrupt(err, "%s: zone %llu (fragment %llu, rows %llu + %llu) is out of range",
							  lt_index_file_path(s->zm), (unsigned long long) i, (unsigned long long) frag,
							  (unsigned long long) start, (unsigned long long) len);
	}
	return LT_OK;
}

lt_code
lt_zonemap_search(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter, lt_rowaddr_set *acc,
				  lt_index_stats *st, lt_error *err)
{
	const lt_field *cols[4] = {s->z_min->field, s->z_max->field, s->z_nulls->field, s->z_nans->field};
	lt_array   *arrs[4] = {s->z_min, s->z_max, s->z_nulls, s->z_nans};
	uint64_t	n = lt_index_file_rows(s->zm);
	lt_filter  *zf;
	uint32_t   *sel = NULL;
	int64_t		nsel = 0;
	lt_code		rc;

	LT_TRY(lt_index_prune_filter(filter, cols, true, &zf, err));
	if (n > 0 && !(sel = lt_malloc((size_t) n * sizeof(uint32_t))))
		rc = lt_nomem(err);
	else
		rc = n > 0 ? lt_filter_eval(zf, arrs, (int64_t) n, sel, &nsel, err) : LT_OK;
	for (int64_t k = 0; rc == LT_OK && k < nsel; k++)
	{
		uint64_t	start = lt_index_uint_at(s->z_start, sel[k]);

		rc = lt_rowaddr_set_add_range(acc, (uint32_t) lt_index_uint_at(s->z_frag, sel[k]), start,
									  start + lt_index_uint_at(s->z_len, sel[k]), err);
	}
	if (st)
	{
		st->pages_total += n;
		st->pages_read += (uint64_t) nsel;
	}
	lt_free(sel);
	lt_filter_free(zf);
	return rc;
}

/* min and max of zone i are one and the same non-null value (bytewise: -0 vs 0 just proves nothing) */
static bool
zone_is_constant(const lt_seg_reader *s, int64_t i)
{
	const lt_array *mn = s->z_min,
			   *mx = s->z_max;

	if (!lt_array_is_valid(mn, i) || !lt_array_is_valid(mx, i))
		return false;
	if (mn->offsets && mx->offsets)
	{
		int64_t		la = mn->offsets[i + 1] - mn->offsets[i],
					lb = mx->offsets[i + 1] - mx->offsets[i];

		return la == lb && memcmp(mn->data + mn->offsets[i], mx->data + mx->offsets[i], (size_t) la) == 0;
	}
	if (mn->offsets || mx->offsets || lt_type_byte_width(mn->field) <= 0)
		return false;
	{
		size_t		w = (size_t) lt_type_byte_width(mn->field);

		return memcmp(mn->values + (size_t) i * w, mx->values + (size_t) i * w, w) == 0;
	}
}

lt_code
lt_zonemap_proven(lt_index_reader *r, lt_seg_reader *s, const lt_filter *filter, lt_rowaddr_set *acc,
				  lt_index_stats *st, lt_error *err)
{
	uint64_t	n = lt_index_file_rows(s->zm);
	lt_filter  *kf;
	lt_array   *cols[1] = {s->z_min};
	const uint8_t *mask = NULL;
	lt_code		rc;

	if (n == 0)
		return LT_OK;
	/* the filter on each zone's min: for a constant zone without nulls or NaNs, every row's verdict */
	LT_TRY(lt_index_copy_filter(filter, s->z_min->field, &kf, err));
	rc = lt_filter_eval_mask(kf, cols, (int64_t) n, &mask, err);
	for (uint64_t i = 0; rc == LT_OK && i < n; i++)
	{
		uint64_t	start = lt_index_uint_at(s->z_start, (int64_t) i);

		if (!mask[i] || lt_index_uint_at(s->z_nulls, (int64_t) i) || lt_index_uint_at(s->z_nans, (int64_t) i) ||
			!zone_is_constant(s, (int64_t) i))
			continue;
		rc = lt_rowaddr_set_add_range(acc, (uint32_t) lt_index_uint_at(s->z_frag, (int64_t) i), start,
									  start + lt_index_uint_at(s->z_len, (int64_t) i), err);
	}
	if (st)
		st->pages_total += n;
	lt_filter_free(kf);
	return rc;
}
