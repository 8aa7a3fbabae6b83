/*
 * lt_schema.h — Lance schemas: fields with ids, parsed logical types.
 *
 * The manifest stores the schema flattened in pre-order; lt_schema rebuilds
 * the tree.  Fixed-size lists of a primitive have no child in Lance's schema;
 * we give them a synthetic child (id -1, name "item") so that every nested
 * type is handled the same way.
 */
#ifndef LT_SCHEMA_H
#define LT_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "util/lt_status.h"

typedef enum lt_type_id
{
	LT_TYPE_NULL = 0,
	LT_TYPE_BOOL,
	LT_TYPE_INT8, LT_TYPE_INT16, LT_TYPE_INT32, LT_TYPE_INT64,
	LT_TYPE_UINT8, LT_TYPE_UINT16, LT_TYPE_UINT32, LT_TYPE_UINT64,
	LT_TYPE_FLOAT16, LT_TYPE_FLOAT32, LT_TYPE_FLOAT64,
	LT_TYPE_DECIMAL128, LT_TYPE_DECIMAL256,
	LT_TYPE_UTF8, LT_TYPE_LARGE_UTF8, LT_TYPE_BINARY, LT_TYPE_LARGE_BINARY,
	LT_TYPE_FIXED_BINARY,
	LT_TYPE_DATE32, LT_TYPE_DATE64,
	LT_TYPE_TIME32, LT_TYPE_TIME64,
	LT_TYPE_TIMESTAMP,
	LT_TYPE_DURATION,
	LT_TYPE_LIST, LT_TYPE_LARGE_LIST, LT_TYPE_FIXED_LIST,
	LT_TYPE_STRUCT,
	LT_TYPE_MAP
} lt_type_id;

typedef enum lt_time_unit
{
	LT_UNIT_S = 0, LT_UNIT_MS, LT_UNIT_US, LT_UNIT_NS
} lt_time_unit;

typedef struct lt_field lt_field;

/* How a field stores blobs (Lance keeps large binaries out of line): none, or one of Lance's two forms. */
typedef enum lt_blob_form
{
	LT_BLOB_NONE = 0,
	LT_BLOB_LEGACY,				/* storage 2.0/2.1: metadata lance-encoding:blob, a {position, size} descriptor */
	LT_BLOB_V2					/* storage 2.2+: extension lance.blob.v2, a packed descriptor with a kind */
} lt_blob_form;

/* blob v2 descriptor kinds: where the bytes are */
#define LT_BLOB_KIND_INLINE		0	/* in the data file */
#define LT_BLOB_KIND_PACKED		1	/* in a sidecar shared by several blobs */
#define LT_BLOB_KIND_DEDICATED	2	/* in a sidecar of its own */
#define LT_BLOB_KIND_EXTERNAL	3	/* behind a URI */

/*
 * Where Lance 12 puts a blob v2 value by its size (bytes): inline up to the inline threshold, packed up to
 * the dedicated threshold, else dedicated; a packed sidecar takes blobs until the next would pass the pack
 * threshold.  The field's metadata overrides each (lance-encoding:blob-*-size-threshold).
 */
#define LT_BLOB_INLINE_MAX_DEFAULT		((uint64_t) 64 << 10)
#define LT_BLOB_DEDICATED_MIN_DEFAULT	((uint64_t) 4 << 20)
#define LT_BLOB_PACK_MAX_DEFAULT		((uint64_t) 1 << 30)

typedef struct lt_blob_thresholds
{
	uint64_t	inline_max;		/* a value of at most this many bytes stays inline */
	uint64_t	dedicated_after;	/* ... of more than this many bytes gets a sidecar of its own */
	uint64_t	pack_max;		/* a packed sidecar grows to at most this (unless one blob is larger) */
	const char *bad;			/* the metadata key whose value is not a size (writes refuse), or NULL */
} lt_blob_thresholds;

struct lt_field
{
	int32_t		id;				/* Lance field id; -1 for a synthetic FSL item */
	int32_t		parent_id;		/* -1 at top level */
	char	   *name;
	char	   *logical_type;	/* as stored, e.g. "timestamp:us:UTC" */
	lt_type_id	type;
	bool		nullable;
	bool		dictionary;		/* "dict:..." — values decode to `type` */
	bool		packed;			/* metadata lance-encoding:packed = true (a struct stored whole) */
	bool		primary_key;	/* part of the unenforced primary key (lt_keys.h) */
	lt_blob_form blob;			/* a blob column (top-level large_binary, or the v2 struct) */
	lt_field   *blob_desc;		/* a blob column's storage: the packed descriptor struct its column holds
								 * (same id; legacy {position, size}, v2 {kind, position, size, blob_id,
								 * blob_uri}); arrays and readers of the field use it (lt_field_storage) */
	lt_blob_thresholds blob_sizes;	/* a blob v2 field: where its writes put values by size */
	uint32_t	pk_position;	/* its position in the key, 1..; 0 = none (ordered by field id) */
	int			byte_width;		/* fixed-width slot size; 0 for variable/nested */
	int			precision, scale;	/* decimals */
	lt_time_unit unit;			/* time32/64, timestamp, duration */
	char	   *timezone;		/* timestamp; NULL when none ("-") */
	int32_t		fixed_size;		/* FSL dimension, fixed-binary width */
	int			n_children;
	lt_field  **children;
	lt_field   *parent;
	int			legacy_encoding;	/* Field.encoding (v0.1 files need it) */
	int64_t		dict_offset, dict_length;	/* legacy dictionary location */
};

typedef struct lt_schema
{
	int			n_fields;		/* top-level fields */
	lt_field  **fields;
	int			n_all;			/* every schema field, pre-order (synthetic items are not listed) */
	lt_field  **all;
} lt_schema;

struct Lt__Pb__Field;

/* Build a schema from a pre-order list of protobuf fields. */
lt_code		lt_schema_from_pb(struct Lt__Pb__Field *const *pb, size_t n, lt_schema **out, lt_error *err);
void		lt_schema_free(lt_schema *s);

const lt_field *lt_schema_find_id(const lt_schema *s, int32_t id);
const lt_field *lt_schema_find_name(const lt_schema *s, const char *name);	/* top level */

/* Parse a logical type string into f's type fields. */
lt_code		lt_parse_logical_type(const char *lt, lt_field *f, lt_error *err);

/* The field as stored: a blob field's descriptor, else the field itself. */
static inline const lt_field *
lt_field_storage(const lt_field *f)
{
	return f->blob_desc ? f->blob_desc : f;
}

/* The first top-level blob field, or NULL; lt_blob_form_name: "legacy blob" / "blob v2". */
const lt_field *lt_schema_first_blob(const lt_schema *s);
const char *lt_blob_form_name(lt_blob_form form);

/* Bytes per slot of a fixed-width type, 0 otherwise (bool counts as 1). */
int			lt_type_byte_width(const lt_field *f);
bool		lt_type_is_var_width(lt_type_id t);	/* utf8/binary and large forms */
bool		lt_type_is_nested(lt_type_id t);	/* list/fsl/struct/map */
const char *lt_type_name(lt_type_id t);

/*
 * A top-level field of no children for the columns a writer makes itself (index files): name and logical are
 * borrowed, width is the type's bytes per slot (0 when not fixed).
 */
void		lt_field_plain(lt_field *f, const char *name, int32_t id, lt_type_id type, const char *logical, int width,
						   bool nullable);

/*
 * A top-level fixed_size_list<item, size> field a writer makes itself (index files: IVF vectors, PQ and SQ codes),
 * its element the list's synthetic child (id -1) as in a dataset schema.  It points into itself: set it up in place
 * with lt_field_fixed_list and never copy it.
 */
typedef struct lt_fixed_list_field
{
	lt_field	list;
	lt_field	item;
	lt_field   *item_ptr;
	char		logical[64];	/* "fixed_size_list:<item logical>:<size>" */
} lt_fixed_list_field;

void		lt_field_fixed_list(lt_fixed_list_field *f, const char *name, int32_t id, uint32_t size, bool nullable,
								lt_type_id item_type, const char *item_logical, int item_width);

/* True when the field (or a descendant) is a leaf that owns a column in 2.1. */
bool		lt_field_is_leaf(const lt_field *f);

#endif
