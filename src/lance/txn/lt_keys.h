/*
 * lt_keys.h — primary keys of keyed Lance tables, and Lance's KeyExistenceFilter.
 *
 * A Lance schema marks its (unenforced) primary key on fields: Field.unenforced_primary_key (12) with
 * Field.unenforced_primary_key_position (13), or the field metadata
 * `lance-schema:unenforced-primary-key` = true / `lance-schema:unenforced-primary-key:position` = N.
 * The key's columns are ordered by position (1, 2, ...), unpositioned ones after them by field id.
 *
 * A commit that inserts rows into a keyed table carries the inserted keys in its Update transaction
 * (Update.inserted_rows, a KeyExistenceFilter): the key's field ids and either an exact set of key
 * hashes or a split-block bloom filter.  Lance 8's merge-insert always writes the bloom form, sized
 * for 8192 items at a false-positive probability of 0.00057 (32 KiB), whatever the number of keys;
 * lt_fdw writes the same so that its filters compare with the ones Lance writers produce.  Two
 * commits that inserted the same key conflict; filters that cannot be compared (different key
 * fields, filter kinds or bloom parameters) count as a conflict too.
 *
 * Key values are hashed as Lance does: each column's value becomes bytes (strings and binaries as
 * they are, Int32 / Int64 as 8 little-endian bytes of the signed value, UInt32 / UInt64 as 8 bytes
 * of the unsigned value); a composite key is the concatenation of its parts, each followed by a 0
 * byte.  The bloom filter hashes those bytes with XXH64 (seed 0); the exact set holds Rust's
 * DefaultHasher (SipHash-1-3, zero keys) of the bytes as a Vec<u8> (an 8-byte length, then the
 * bytes).  Lance cannot hash other key types (its merge-insert then records no key): lt_fdw refuses
 * them as key columns (lt_key_kind_of returns LT_KEY_UNSUPPORTED).
 */
#ifndef LT_KEYS_H
#define LT_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types/lt_schema.h"
#include "util/lt_status.h"
#include "proto/lt_transaction.pb-c.h"

#define LT_PK_METADATA_KEY			"lance-schema:unenforced-primary-key"
#define LT_PK_POSITION_METADATA_KEY	"lance-schema:unenforced-primary-key:position"

/* Lance 8's bloom filter parameters for inserted keys (KeyExistenceFilterBuilder). */
#define LT_KEY_BLOOM_ITEMS			8192
#define LT_KEY_BLOOM_PROBABILITY	0.00057

/*
 * The primary key of a schema: its fields in key order (*out is lt_malloc'd, free with lt_free; NULL
 * and *n = 0 when the table has no key).  Only top-level fields can be key columns; a nested field
 * marked as key is LT_EUNSUPPORTED.
 */
lt_code		lt_schema_primary_key(const lt_schema *s, const lt_field ***out, int *n, lt_error *err);

/* How Lance hashes a field's values as a key part. */
typedef enum lt_key_kind
{
	LT_KEY_UNSUPPORTED = 0,
	LT_KEY_STRING,				/* utf8, large_utf8: the UTF-8 bytes */
	LT_KEY_BINARY,				/* binary, large_binary: the bytes */
	LT_KEY_INT64,				/* int32, int64: 8 bytes LE */
	LT_KEY_UINT64				/* uint32, uint64: 8 bytes LE */
} lt_key_kind;

lt_key_kind lt_key_kind_of(const lt_field *f);

/* A key's bytes as Lance builds them (KeyValue::to_bytes), appended part by part. */
typedef struct lt_key_buf
{
	uint8_t    *data;
	size_t		len, cap;
} lt_key_buf;

void		lt_key_buf_reset(lt_key_buf *b);	/* len = 0, keeps the memory */
void		lt_key_buf_free(lt_key_buf *b);
/* composite: the key has more than one column (each part is then followed by a 0 byte) */
lt_code		lt_key_buf_add_int64(lt_key_buf *b, int64_t v, bool composite, lt_error *err);
lt_code		lt_key_buf_add_uint64(lt_key_buf *b, uint64_t v, bool composite, lt_error *err);
lt_code		lt_key_buf_add_bytes(lt_key_buf *b, const void *p, size_t n, bool composite, lt_error *err);

struct lt_array;

/*
 * The key bytes of row i of the key columns: cols[k] holds values of fields[k] (the key's fields in
 * key order).  *is_null is set when a part is null (such a row has no key; the buffer is then
 * unspecified).  A field of an unsupported kind is LT_EUNSUPPORTED.
 */
lt_code		lt_key_from_row(lt_key_buf *b, const lt_field *const *fields, int n, struct lt_array *const *cols,
							int64_t i, bool *is_null, lt_error *err);

/* The two hashes of a key's bytes. */
uint64_t	lt_key_hash_exact(const uint8_t *key, size_t len);	/* SipHash-1-3 of Vec<u8> */
uint64_t	lt_key_hash_bloom(const uint8_t *key, size_t len);	/* XXH64, seed 0 */
uint64_t	lt_siphash13(uint64_t k0, uint64_t k1, const uint8_t *p, size_t n);
uint64_t	lt_xxh64(const uint8_t *p, size_t n, uint64_t seed);

/* log2 of the bytes of a split-block bloom filter for ndv values at probability fpp, as Lance sizes it. */
int			lt_sbbf_log2_bytes(uint64_t ndv, double fpp);

typedef enum lt_key_filter_kind
{
	LT_KEY_FILTER_EXACT = 1,
	LT_KEY_FILTER_BLOOM = 2
} lt_key_filter_kind;

typedef struct lt_key_filter
{
	lt_key_filter_kind kind;
	int			n_field_ids;
	int32_t    *field_ids;		/* the key's fields, in key order */
	uint64_t	n_added;		/* keys added here (not known for decoded filters: 0) */

	/* exact: key hashes (sorted and unique after lt_key_filter_finish) */
	uint64_t   *hashes;
	size_t		n_hashes, cap_hashes;
	bool		hashes_sorted;

	/* bloom */
	uint8_t    *bitmap;			/* 32-byte blocks of eight little-endian 32-bit words */
	size_t		bitmap_len;
	uint32_t	num_bits;
	uint64_t	number_of_items;
	double		probability;

	/*
	 * Bloom filters built here also keep the XXH64 of each key they were given (in memory only), so
	 * that an overlap test can check each of these keys against the other filter instead of only
	 * comparing bit patterns; above LT_KEY_MEMBERS_MAX keys the list is dropped.
	 */
	uint64_t   *members;
	size_t		n_members, cap_members;
	bool		members_complete;
} lt_key_filter;

#define LT_KEY_MEMBERS_MAX ((size_t) 1 << 20)

/* A new empty filter over a key's field ids; bloom filters get Lance's parameters. */
lt_code		lt_key_filter_new(lt_key_filter_kind kind, const int32_t *field_ids, int n_field_ids,
							  lt_key_filter **out, lt_error *err);
void		lt_key_filter_free(lt_key_filter *f);

lt_code		lt_key_filter_add(lt_key_filter *f, const uint8_t *key, size_t len, lt_error *err);
/* false: the key was certainly not added; true: it was (exact) or may have been (bloom) */
bool		lt_key_filter_may_contain(lt_key_filter *f, const uint8_t *key, size_t len);
/* sort and deduplicate an exact set (idempotent; done by the functions that need it) */
void		lt_key_filter_finish(lt_key_filter *f);

typedef enum lt_key_overlap
{
	LT_KEYS_DISJOINT = 0,		/* no key in both */
	LT_KEYS_OVERLAP,			/* a key in both (exact), or possibly (bloom) */
	LT_KEYS_INCOMPARABLE		/* different key fields, filter kinds or bloom parameters */
} lt_key_overlap;

/* Symmetric: overlap(a, b) == overlap(b, a). */
lt_key_overlap lt_key_filter_overlap(lt_key_filter *a, lt_key_filter *b);
const char *lt_key_overlap_name(lt_key_overlap o);

/*
 * The transaction protobuf.  lt_key_filter_to_pb fills *out with messages that borrow f's arrays
 * (valid while f lives and is not changed); lt_key_filter_from_pb copies and checks a decoded
 * message (a bitmap that is not whole 32-byte blocks, or larger than 128 MiB, is LT_ECORRUPT; no
 * data is an empty exact set and zero bloom parameters are Lance's defaults, as Lance reads them).
 */
typedef struct lt_key_filter_pb
{
	Lt__Pb__Transaction__KeyExistenceFilter msg;
	Lt__Pb__Transaction__ExactKeySetFilter exact;
	Lt__Pb__Transaction__BloomFilter bloom;
} lt_key_filter_pb;

void		lt_key_filter_to_pb(lt_key_filter *f, lt_key_filter_pb *out);
lt_code		lt_key_filter_from_pb(const Lt__Pb__Transaction__KeyExistenceFilter *pb, lt_key_filter **out,
								  lt_error *err);

/* The KeyExistenceFilter message as bytes, and back (*out lt_malloc'd). */
lt_code		lt_key_filter_encode(lt_key_filter *f, uint8_t **out, size_t *len, lt_error *err);
lt_code		lt_key_filter_decode(const uint8_t *p, size_t len, lt_key_filter **out, lt_error *err);

/*
 * Commit a primary key on an existing dataset: the fields (top-level, of a kind Lance hashes) in key
 * order, as the next version of read (see lt_txn_pk.c; Lance's updateFieldMetadata form).  The caller
 * has checked that the key holds at read's version.  A dataset that already has a key is LT_EINVALID
 * (Lance never changes a key once set); a concurrent commit that may have written rows or changed
 * the schema is LT_ECONFLICT.  result->op is LT_OP_UPDATE_CONFIG.
 */
struct lt_dataset;
struct lt_commit_options;
struct lt_commit_result;
lt_code		lt_commit_primary_key(struct lt_dataset *read, const int32_t *field_ids, int n,
								  const struct lt_commit_options *opts, struct lt_commit_result *result,
								  lt_error *err);

#endif
