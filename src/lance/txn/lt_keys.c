/*
 * lt_keys.c — primary keys of keyed tables and Lance's KeyExistenceFilter (see lt_keys.h).
 *
 * The hashes and the split-block bloom filter follow their published definitions (SipHash-1-3,
 * XXH64, the Parquet SBBF with its eight salts) and Lance 8's use of them; the interop test
 * (test/interop/keys.sh) checks the filters bit for bit against those the reference engine writes.
 */
#include "txn/lt_keys.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "util/lt_bytes.h"

/* ------------------------------------------------------------------ the key of a schema */

static int
pk_order(const void *pa, const void *pb)
{
	const lt_field *a = *(const lt_field *const *) pa;
	const lt_field *b = *(const lt_field *const *) pb;

	/* positioned fields first, by position; then the others by field id (Lance's order) */
	if ((a->pk_position > 0) != (b->pk_position > 0))
		return a->pk_position > 0 ? -1 : 1;
	if (a->pk_position != b->pk_position)
		return a->pk_position < b->pk_position ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

lt_code
lt_schema_primary_key(const lt_schema *s, const lt_field ***out, int *n, lt_error *err)
{
	const lt_field **keys;
	int			k = 0;

	*out = NULL;
	*n = 0;
	for (int i = 0; i < s->n_all; i++)
		if (s->all[i]->primary_key)
		{
			if (s->all[i]->parent_id != -1)
				return lt_error_set(err, LT_EUNSUPPORTED,
									"primary key field \"%s\" (id %d) is nested: only top-level columns can be key columns",
									s->all[i]->name, s->all[i]->id);
			k++;
		}
	if (k == 0)
		return LT_OK;
	keys = lt_calloc(k, sizeof(*keys));
	if (!keys)
		return lt_nomem(err);
	k = 0;
	for (int i = 0; i < s->n_all; i++)
		if (s->all[i]->primary_key)
			keys[k++] = s->all[i];
	qsort(keys, k, sizeof(*keys), pk_order);
	*out = keys;
	*n = k;
	return LT_OK;
}

lt_key_kind
lt_key_kind_of(const lt_field *f)
{
	if (f->dictionary)
		return LT_KEY_UNSUPPORTED;	/* Lance's key extraction does not look through dictionaries */
	switch (f->type)
	{
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
			return LT_KEY_STRING;
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			return LT_KEY_BINARY;
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
			return LT_KEY_INT64;
		case LT_TYPE_UINT32:
		case LT_TYPE_UINT64:
			return LT_KEY_UINT64;
		default:
			return LT_KEY_UNSUPPORTED;
	}
}

/* ------------------------------------------------------------------ key bytes */

void
lt_key_buf_reset(lt_key_buf *b)
{
	b->len = 0;
}

void
lt_key_buf_free(lt_key_buf *b)
{
	lt_free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

static lt_code
key_buf_reserve(lt_key_buf *b, size_t more, lt_error *err)
{
	size_t		cap;
	uint8_t    *p;

	if (more > SIZE_MAX / 2 - b->len)
		return lt_error_set(err, LT_EINVALID, "key value too large");
	if (b->len + more <= b->cap)
		return LT_OK;
	cap = b->cap ? b->cap : 64;
	while (cap < b->len + more)
		cap *= 2;
	p = lt_realloc(b->data, cap);
	if (!p)
		return lt_nomem(err);
	b->data = p;
	b->cap = cap;
	return LT_OK;
}

lt_code
lt_key_buf_add_bytes(lt_key_buf *b, const void *p, size_t n, bool composite, lt_error *err)
{
	LT_TRY(key_buf_reserve(b, n + 1, err));
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	if (composite)
		b->data[b->len++] = 0;
	return LT_OK;
}

lt_code
lt_key_buf_add_int64(lt_key_buf *b, int64_t v, bool composite, lt_error *err)
{
	uint8_t		le[8];

	lt_put64(le, (uint64_t) v);
	return lt_key_buf_add_bytes(b, le, 8, composite, err);
}

lt_code
lt_key_buf_add_uint64(lt_key_buf *b, uint64_t v, bool composite, lt_error *err)
{
	uint8_t		le[8];

	lt_put64(le, v);
	return lt_key_buf_add_bytes(b, le, 8, composite, err);
}

lt_code
lt_key_from_row(lt_key_buf *b, const lt_field *const *fields, int n, lt_array *const *cols, int64_t i,
				bool *is_null, lt_error *err)
{
	bool		composite = n > 1;

	lt_key_buf_reset(b);
	*is_null = false;
	for (int k = 0; k < n; k++)
	{
		const lt_array *a = cols[k];
		const lt_field *f = fields[k];

		if (i < 0 || i >= a->length)
			return lt_error_set(err, LT_EINVALID, "key row %lld out of range", (long long) i);
		if (!lt_array_is_valid(a, i))
		{
			*is_null = true;
			return LT_OK;
		}
		switch (lt_key_kind_of(f))
		{
			case LT_KEY_STRING:
			case LT_KEY_BINARY:
				LT_TRY(lt_key_buf_add_bytes(b, a->data + a->offsets[i], (size_t) (a->offsets[i + 1] - a->offsets[i]),
											composite, err));
				break;
			case LT_KEY_INT64:
				LT_TRY(lt_key_buf_add_int64(b, f->type == LT_TYPE_INT32 ? (int64_t) (int32_t) lt_le32(a->values + 4 * i)
											: (int64_t) lt_le64(a->values + 8 * i), composite, err));
				break;
			case LT_KEY_UINT64:
				LT_TRY(lt_key_buf_add_uint64(b, f->type == LT_TYPE_UINT32 ? (uint64_t) lt_le32(a->values + 4 * i)
											 : lt_le64(a->values + 8 * i), composite, err));
				break;
			case LT_KEY_UNSUPPORTED:
				return lt_error_set(err, LT_EUNSUPPORTED, "key column \"%s\" has type %s, which Lance cannot hash as a key",
									f->name, f->logical_type);
		}
	}
	return LT_OK;
}

/* ------------------------------------------------------------------ hashes */

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

#define SIPROUND(v0, v1, v2, v3) do { \
	v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32); \
	v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32); } while (0)

/* SipHash-1-3 over the concatenation of two byte strings (one compression round, three final). */
static uint64_t
siphash13_2(uint64_t k0, uint64_t k1, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	uint64_t	v0 = k0 ^ 0x736f6d6570736575ULL;
	uint64_t	v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t	v2 = k0 ^ 0x6c7967656e657261ULL;
	uint64_t	v3 = k1 ^ 0x7465646279746573ULL;
	size_t		total = na + nb;
	uint8_t		block[8];
	size_t		fill = 0;
	uint64_t	m;

	for (size_t part = 0; part < 2; part++)
	{
		const uint8_t *p = part == 0 ? a : b;
		size_t		n = part == 0 ? na : nb;

		for (size_t i = 0; i < n; i++)
		{
			block[fill++] = p[i];
			if (fill == 8)
			{
				m = lt_le64(block);
				v3 ^= m;
				SIPROUND(v0, v1, v2, v3);
				v0 ^= m;
				fill = 0;
			}
		}
	}
	m = (uint64_t) (total & 0xff) << 56;
	for (size_t i = 0; i < fill; i++)
		m |= (uint64_t) block[i] << (8 * i);
	v3 ^= m;
	SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t
lt_siphash13(uint64_t k0, uint64_t k1, const uint8_t *p, size_t n)
{
	return siphash13_2(k0, k1, p, n, NULL, 0);
}

uint64_t
lt_key_hash_exact(const uint8_t *key, size_t len)
{
	uint8_t		prefix[8];

	/* Rust's Hash for a byte slice writes its length as a usize, then the bytes */
	lt_put64(prefix, (uint64_t) len);
	return siphash13_2(0, 0, prefix, 8, key, len);
}

#define XXP1 0x9E3779B185EBCA87ULL
#define XXP2 0xC2B2AE3D27D4EB4FULL
#define XXP3 0x165667B19E3779F9ULL
#define XXP4 0x85EBCA77C2B2AE63ULL
#define XXP5 0x27D4EB2F165667C5ULL

static inline uint64_t
xx_round(uint64_t acc, uint64_t input)
{
	acc += input * XXP2;
	acc = rotl64(acc, 31);
	return acc * XXP1;
}

static inline uint64_t
xx_merge(uint64_t acc, uint64_t v)
{
	acc ^= xx_round(0, v);
	return acc * XXP1 + XXP4;
}

uint64_t
lt_xxh64(const uint8_t *p, size_t n, uint64_t seed)
{
	static const uint8_t none[1];
	const uint8_t *end;
	uint64_t	h;

	if (!p)
		p = none;				/* n is 0: no byte is read */
	end = p + n;

	if (n >= 32)
	{
		uint64_t	v1 = seed + XXP1 + XXP2,
					v2 = seed + XXP2,
					v3 = seed,
					v4 = seed - XXP1;

		while ((size_t) (end - p) >= 32)
		{
			v1 = xx_round(v1, lt_le64(p));
			v2 = xx_round(v2, lt_le64(p + 8));
			v3 = xx_round(v3, lt_le64(p + 16));
			v4 = xx_round(v4, lt_le64(p + 24));
			p += 32;
		}
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
		h = xx_merge(h, v1);
		h = xx_merge(h, v2);
		h = xx_merge(h, v3);
		h = xx_merge(h, v4);
	}
	else
		h = seed + XXP5;
	h += (uint64_t) n;
	while ((size_t) (end - p) >= 8)
	{
		h ^= xx_round(0, lt_le64(p));
		h = rotl64(h, 27) * XXP1 + XXP4;
		p += 8;
	}
	if ((size_t) (end - p) >= 4)
	{
		h ^= (uint64_t) lt_le32(p) * XXP1;
		h = rotl64(h, 23) * XXP2 + XXP3;
		p += 4;
	}
	while (p < end)
	{
		h ^= (uint64_t) (*p++) * XXP5;
		h = rotl64(h, 11) * XXP1;
	}
	h ^= h >> 33;
	h *= XXP2;
	h ^= h >> 29;
	h *= XXP3;
	h ^= h >> 32;
	return h;
}

uint64_t
lt_key_hash_bloom(const uint8_t *key, size_t len)
{
	return lt_xxh64(key, len, 0);
}

/* ------------------------------------------------------------------ split-block bloom filter */

static const uint32_t sbbf_salt[8] = {
	0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
	0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U
};

#define SBBF_LOG2_MIN 5			/* one 32-byte block */
#define SBBF_LOG2_MAX 27		/* 128 MiB */

/* Putze et al.'s false-positive probability of a split-block filter (eq. 3), as Lance computes it. */
static double
sbbf_fpp(uint64_t ndv, int log2_bytes)
{
	const double word_bits = 32.0,
				bucket_words = 8.0;
	double		bits = ldexp(1.0, log2_bytes) * 8.0;
	double		n = (double) ndv;
	double		lam, loglam, result = 0.0;

	if (ndv == 0)
		return 0.0;
	if (n / bits > 2.0)
		return 1.0;
	lam = bucket_words * word_bits / (bits / n);
	loglam = log(lam);
	for (int i = 749; i >= 0; i--)
	{
		double		logp = i * loglam - lam - lgamma((double) (i + 1));
		double		logfinner = bucket_words * log(1.0 - pow(1.0 - 1.0 / word_bits, i));

		result += exp(logp + logfinner);
	}
	return result < 1.0 ? result : 1.0;
}

int
lt_sbbf_log2_bytes(uint64_t ndv, double fpp)
{
	int			low = 0,
				high = 64;

	while (high > low + 1)
	{
		int			mid = (low + high) / 2;

		if (sbbf_fpp(ndv, mid) <= fpp)
			high = mid;
		else
			low = mid;
	}
	return high < SBBF_LOG2_MIN ? SBBF_LOG2_MIN : high > SBBF_LOG2_MAX ? SBBF_LOG2_MAX : high;
}

static inline size_t
sbbf_block(size_t n_blocks, uint64_t hash)
{
	return (size_t) (((hash >> 32) * (uint64_t) n_blocks) >> 32);
}

static void
sbbf_insert(uint8_t *bitmap, size_t len, uint64_t hash)
{
	uint8_t    *block = bitmap + 32 * sbbf_block(len / 32, hash);

	for (int i = 0; i < 8; i++)
	{
		uint32_t	bit = ((uint32_t) hash * sbbf_salt[i]) >> 27;

		lt_put32(block + 4 * i, lt_le32(block + 4 * i) | (1U << bit));
	}
}

static bool
sbbf_check(const uint8_t *bitmap, size_t len, uint64_t hash)
{
	const uint8_t *block = bitmap + 32 * sbbf_block(len / 32, hash);

	for (int i = 0; i < 8; i++)
	{
		uint32_t	bit = ((uint32_t) hash * sbbf_salt[i]) >> 27;

		if (!(lt_le32(block + 4 * i) & (1U << bit)))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ filters */

lt_code
lt_key_filter_new(lt_key_filter_kind kind, const int32_t *field_ids, int n_field_ids, lt_key_filter **out,
				  lt_error *err)
{
	lt_key_filter *f;

	*out = NULL;
	if ((kind != LT_KEY_FILTER_EXACT && kind != LT_KEY_FILTER_BLOOM) || n_field_ids < 0 || n_field_ids > 1000)
		return lt_error_set(err, LT_EINVALID, "bad key filter (kind %d, %d key fields)", (int) kind, n_field_ids);
	f = lt_calloc(1, sizeof(*f));
	if (!f)
		return lt_nomem(err);
	f->kind = kind;
	f->n_field_ids = n_field_ids;
	f->field_ids = lt_calloc(n_field_ids + 1, sizeof(int32_t));
	if (!f->field_ids)
	{
		lt_key_filter_free(f);
		return lt_nomem(err);
	}
	if (n_field_ids)
		memcpy(f->field_ids, field_ids, n_field_ids * sizeof(int32_t));
	f->hashes_sorted = true;
	if (kind == LT_KEY_FILTER_BLOOM)
	{
		f->number_of_items = LT_KEY_BLOOM_ITEMS;
		f->probability = LT_KEY_BLOOM_PROBABILITY;
		f->bitmap_len = (size_t) 1 << lt_sbbf_log2_bytes(f->number_of_items, f->probability);
		f->num_bits = (uint32_t) (f->bitmap_len * 8);
		f->bitmap = lt_calloc(1, f->bitmap_len);
		f->members_complete = true;
		if (!f->bitmap)
		{
			lt_key_filter_free(f);
			return lt_nomem(err);
		}
	}
	*out = f;
	return LT_OK;
}

void
lt_key_filter_free(lt_key_filter *f)
{
	if (!f)
		return;
	lt_free(f->field_ids);
	lt_free(f->hashes);
	lt_free(f->bitmap);
	lt_free(f->members);
	lt_free(f);
}

/* Append v to a growable u64 array; false when out of memory. */
static bool
u64_push(uint64_t **arr, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap)
	{
		size_t		c = *cap ? *cap * 2 : 256;
		uint64_t   *p = lt_realloc(*arr, c * sizeof(uint64_t));

		if (!p)
			return false;
		*arr = p;
		*cap = c;
	}
	(*arr)[(*n)++] = v;
	return true;
}

lt_code
lt_key_filter_add(lt_key_filter *f, const uint8_t *key, size_t len, lt_error *err)
{
	if (f->kind == LT_KEY_FILTER_EXACT)
	{
		if (!u64_push(&f->hashes, &f->n_hashes, &f->cap_hashes, lt_key_hash_exact(key, len)))
			return lt_nomem(err);
		f->hashes_sorted = false;
	}
	else
	{
		uint64_t	h = lt_key_hash_bloom(key, len);

		sbbf_insert(f->bitmap, f->bitmap_len, h);
		if (f->members_complete)
		{
			if (f->n_members >= LT_KEY_MEMBERS_MAX)
			{
				/* too many to list: overlap tests fall back to the bit patterns */
				lt_free(f->members);
				f->members = NULL;
				f->n_members = f->cap_members = 0;
				f->members_complete = false;
			}
			else if (!u64_push(&f->members, &f->n_members, &f->cap_members, h))
				return lt_nomem(err);
		}
	}
	f->n_added++;
	return LT_OK;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

void
lt_key_filter_finish(lt_key_filter *f)
{
	size_t		w = 0;

	if (f->kind != LT_KEY_FILTER_EXACT || f->hashes_sorted)
		return;
	qsort(f->hashes, f->n_hashes, sizeof(uint64_t), u64_cmp);
	for (size_t i = 0; i < f->n_hashes; i++)
		if (w == 0 || f->hashes[w - 1] != f->hashes[i])
			f->hashes[w++] = f->hashes[i];
	f->n_hashes = w;
	f->hashes_sorted = true;
}

static bool
exact_contains(lt_key_filter *f, uint64_t h)
{
	lt_key_filter_finish(f);
	return bsearch(&h, f->hashes, f->n_hashes, sizeof(uint64_t), u64_cmp) != NULL;
}

bool
lt_key_filter_may_contain(lt_key_filter *f, const uint8_t *key, size_t len)
{
	if (f->kind == LT_KEY_FILTER_EXACT)
		return exact_contains(f, lt_key_hash_exact(key, len));
	return sbbf_check(f->bitmap, f->bitmap_len, lt_key_hash_bloom(key, len));
}

/* Does any listed member of a hit the bloom filter b? */
static bool
members_hit(const lt_key_filter *a, const lt_key_filter *b)
{
	for (size_t i = 0; i < a->n_members; i++)
		if (sbbf_check(b->bitmap, b->bitmap_len, a->members[i]))
			return true;
	return false;
}

lt_key_overlap
lt_key_filter_overlap(lt_key_filter *a, lt_key_filter *b)
{
	if (a->n_field_ids != b->n_field_ids ||
		memcmp(a->field_ids, b->field_ids, a->n_field_ids * sizeof(int32_t)) != 0 ||
		a->kind != b->kind)
		return LT_KEYS_INCOMPARABLE;
	if (a->kind == LT_KEY_FILTER_EXACT)
	{
		size_t		i = 0,
					j = 0;

		lt_key_filter_finish(a);
		lt_key_filter_finish(b);
		while (i < a->n_hashes && j < b->n_hashes)
		{
			if (a->hashes[i] == b->hashes[j])
				return LT_KEYS_OVERLAP;
			if (a->hashes[i] < b->hashes[j])
				i++;
			else
				j++;
		}
		return LT_KEYS_DISJOINT;
	}
	/* bloom: Lance compares the parameters the filters were sized for, and needs equal sizes */
	if (a->number_of_items != b->number_of_items || fabs(a->probability - b->probability) > DBL_EPSILON ||
		a->bitmap_len != b->bitmap_len)
		return LT_KEYS_INCOMPARABLE;

	/*
	 * A key in both sets has all its bits set in both filters, so checking the keys one side
	 * listed against the other side's filter never misses an overlap, and is far more precise than
	 * Lance's test (any bit set in both).  When both list their keys, both checks must hit.
	 */
	if (a->members_complete || b->members_complete)
	{
		bool		hit = true;

		if (a->members_complete)
			hit = members_hit(a, b);
		if (hit && b->members_complete)
			hit = members_hit(b, a);
		return hit ? LT_KEYS_OVERLAP : LT_KEYS_DISJOINT;
	}
	for (size_t i = 0; i < a->bitmap_len; i++)
		if (a->bitmap[i] & b->bitmap[i])
			return LT_KEYS_OVERLAP;
	return LT_KEYS_DISJOINT;
}

const char *
lt_key_overlap_name(lt_key_overlap o)
{
	switch (o)
	{
		case LT_KEYS_DISJOINT:
			return "disjoint";
		case LT_KEYS_OVERLAP:
			return "overlap";
		case LT_KEYS_INCOMPARABLE:
			return "incomparable";
	}
	return "?";
}

/* ------------------------------------------------------------------ protobuf */

void
lt_key_filter_to_pb(lt_key_filter *f, lt_key_filter_pb *out)
{
	lt__pb__transaction__key_existence_filter__init(&out->msg);
	lt__pb__transaction__exact_key_set_filter__init(&out->exact);
	lt__pb__transaction__bloom_filter__init(&out->bloom);
	out->msg.n_field_ids = f->n_field_ids;
	out->msg.field_ids = f->field_ids;
	if (f->kind == LT_KEY_FILTER_EXACT)
	{
		lt_key_filter_finish(f);
		out->exact.n_key_hashes = f->n_hashes;
		out->exact.key_hashes = f->hashes;
		out->msg.data_case = LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__DATA_EXACT;
		out->msg.exact = &out->exact;
	}
	else
	{
		out->bloom.has_bitmap = true;
		out->bloom.bitmap.data = f->bitmap;
		out->bloom.bitmap.len = f->bitmap_len;
		out->bloom.has_num_bits = true;
		out->bloom.num_bits = f->num_bits;
		out->bloom.has_number_of_items = true;
		out->bloom.number_of_items = f->number_of_items;
		out->bloom.has_probability = true;
		out->bloom.probability = f->probability;
		out->msg.data_case = LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__DATA_BLOOM;
		out->msg.bloom = &out->bloom;
	}
}

lt_code
lt_key_filter_from_pb(const Lt__Pb__Transaction__KeyExistenceFilter *pb, lt_key_filter **out, lt_error *err)
{
	lt_key_filter *f;
	bool		bloom = pb->data_case == LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__DATA_BLOOM && pb->bloom;

	*out = NULL;
	if (pb->n_field_ids > 1000)
		return lt_corrupt(err, "key filter names %zu key fields", pb->n_field_ids);
	if (bloom)
	{
		size_t		len = pb->bloom->has_bitmap ? pb->bloom->bitmap.len : 0;

		if (len == 0 || len % 32 != 0 || len > ((size_t) 1 << SBBF_LOG2_MAX))
			return lt_corrupt(err, "key filter: bloom bitmap of %zu bytes (whole 32-byte blocks, at most 128 MiB)", len);
	}
	LT_TRY(lt_key_filter_new(bloom ? LT_KEY_FILTER_BLOOM : LT_KEY_FILTER_EXACT, pb->field_ids, (int) pb->n_field_ids,
							 &f, err));
	if (bloom)
	{
		const Lt__Pb__Transaction__BloomFilter *b = pb->bloom;

		lt_free(f->bitmap);
		f->bitmap = lt_malloc(b->bitmap.len);
		if (!f->bitmap)
		{
			lt_key_filter_free(f);
			return lt_nomem(err);
		}
		memcpy(f->bitmap, b->bitmap.data, b->bitmap.len);
		f->bitmap_len = b->bitmap.len;
		f->num_bits = b->has_num_bits ? b->num_bits : (uint32_t) (b->bitmap.len * 8);
		/* zero (absent) parameters are the defaults, as Lance reads older filters */
		f->number_of_items = b->has_number_of_items && b->number_of_items ? b->number_of_items : LT_KEY_BLOOM_ITEMS;
		f->probability = b->has_probability && b->probability != 0.0 ? b->probability : LT_KEY_BLOOM_PROBABILITY;
		f->members_complete = false;	/* the keys behind a decoded filter are unknown */
	}
	else if (pb->data_case == LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__DATA_EXACT && pb->exact &&
			 pb->exact->n_key_hashes)
	{
		f->hashes = lt_malloc(pb->exact->n_key_hashes * sizeof(uint64_t));
		if (!f->hashes)
		{
			lt_key_filter_free(f);
			return lt_nomem(err);
		}
		memcpy(f->hashes, pb->exact->key_hashes, pb->exact->n_key_hashes * sizeof(uint64_t));
		f->n_hashes = f->cap_hashes = pb->exact->n_key_hashes;
		f->hashes_sorted = false;
		lt_key_filter_finish(f);
	}
	*out = f;
	return LT_OK;
}

lt_code
lt_key_filter_encode(lt_key_filter *f, uint8_t **out, size_t *len, lt_error *err)
{
	lt_key_filter_pb pb;
	size_t		n;

	lt_key_filter_to_pb(f, &pb);
	n = protobuf_c_message_get_packed_size(&pb.msg.base);
	*out = lt_malloc(n ? n : 1);
	if (!*out)
		return lt_nomem(err);
	*len = protobuf_c_message_pack(&pb.msg.base, *out);
	return LT_OK;
}

lt_code
lt_key_filter_decode(const uint8_t *p, size_t len, lt_key_filter **out, lt_error *err)
{
	Lt__Pb__Transaction__KeyExistenceFilter *pb;
	lt_code		rc;

	*out = NULL;
	pb = (Lt__Pb__Transaction__KeyExistenceFilter *)
		protobuf_c_message_unpack(&lt__pb__transaction__key_existence_filter__descriptor, lt_protobuf_allocator(), len, p);
	if (!pb)
		return lt_corrupt(err, "key filter: %zu bytes that do not parse as a KeyExistenceFilter", len);
	rc = lt_key_filter_from_pb(pb, out, err);
	protobuf_c_message_free_unpacked(&pb->base, lt_protobuf_allocator());
	return rc;
}
