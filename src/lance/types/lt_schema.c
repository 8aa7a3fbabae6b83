/*
 * lt_schema.c — logical type strings and the schema tree.
 */
#include "types/lt_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "proto/lt_file.pb-c.h"

typedef struct named_type
{
	const char *name;
	lt_type_id	type;
	int			width;
} named_type;

static const named_type simple_types[] = {
	{"null", LT_TYPE_NULL, 0},
	{"bool", LT_TYPE_BOOL, 1},
	{"int8", LT_TYPE_INT8, 1}, {"int16", LT_TYPE_INT16, 2},
	{"int32", LT_TYPE_INT32, 4}, {"int64", LT_TYPE_INT64, 8},
	{"uint8", LT_TYPE_UINT8, 1}, {"uint16", LT_TYPE_UINT16, 2},
	{"uint32", LT_TYPE_UINT32, 4}, {"uint64", LT_TYPE_UINT64, 8},
	{"halffloat", LT_TYPE_FLOAT16, 2}, {"float", LT_TYPE_FLOAT32, 4},
	{"double", LT_TYPE_FLOAT64, 8},
	{"string", LT_TYPE_UTF8, 0}, {"large_string", LT_TYPE_LARGE_UTF8, 0},
	{"binary", LT_TYPE_BINARY, 0}, {"large_binary", LT_TYPE_LARGE_BINARY, 0},
	{"json", LT_TYPE_LARGE_BINARY, 0},
	{"date32:day", LT_TYPE_DATE32, 4}, {"date64:ms", LT_TYPE_DATE64, 8},
	{"struct", LT_TYPE_STRUCT, 0},
	{"list", LT_TYPE_LIST, 0}, {"large_list", LT_TYPE_LARGE_LIST, 0},
	{"list.struct", LT_TYPE_LIST, 0}, {"large_list.struct", LT_TYPE_LARGE_LIST, 0},
	{"map", LT_TYPE_MAP, 0},
};

static bool
parse_unit(const char *s, size_t n, lt_time_unit *unit)
{
	if (n == 1 && s[0] == 's')
		*unit = LT_UNIT_S;
	else if (n == 2 && memcmp(s, "ms", 2) == 0)
		*unit = LT_UNIT_MS;
	else if (n == 2 && memcmp(s, "us", 2) == 0)
		*unit = LT_UNIT_US;
	else if (n == 2 && memcmp(s, "ns", 2) == 0)
		*unit = LT_UNIT_NS;
	else
		return false;
	return true;
}

static bool
parse_int(const char *s, long lo, long hi, int *out)
{
	char	   *end;
	long		v;

	if (!*s)
		return false;
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi)
		return false;
	*out = (int) v;
	return true;
}

/* Parse "p:s" (possibly followed by nothing else). */
static bool
parse_decimal(const char *s, lt_field *f)
{
	const char *colon = strchr(s, ':');
	char		buf[32];

	if (!colon || (size_t) (colon - s) >= sizeof(buf))
		return false;
	memcpy(buf, s, colon - s);
	buf[colon - s] = '\0';
	return parse_int(buf, 1, 76, &f->precision) && parse_int(colon + 1, -76, 76, &f->scale);
}

int
lt_type_byte_width(const lt_field *f)
{
	return f->byte_width;
}

bool
lt_type_is_var_width(lt_type_id t)
{
	return t == LT_TYPE_UTF8 || t == LT_TYPE_LARGE_UTF8 || t == LT_TYPE_BINARY || t == LT_TYPE_LARGE_BINARY;
}

bool
lt_type_is_nested(lt_type_id t)
{
	return t == LT_TYPE_LIST || t == LT_TYPE_LARGE_LIST || t == LT_TYPE_FIXED_LIST ||
		t == LT_TYPE_STRUCT || t == LT_TYPE_MAP;
}

void
lt_field_plain(lt_field *f, const char *name, int32_t id, lt_type_id type, const char *logical, int width,
			   bool nullable)
{
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->parent_id = -1;
	f->name = (char *) name;
	f->logical_type = (char *) logical;
	f->type = type;
	f->byte_width = width;
	f->nullable = nullable;
}

void
lt_field_fixed_list(lt_fixed_list_field *f, const char *name, int32_t id, uint32_t size, bool nullable,
					lt_type_id item_type, const char *item_logical, int item_width)
{
	snprintf(f->logical, sizeof(f->logical), "fixed_size_list:%s:%u", item_logical, size);
	lt_field_plain(&f->list, name, id, LT_TYPE_FIXED_LIST, f->logical, 0, nullable);
	f->list.fixed_size = (int32_t) size;
	f->list.n_children = 1;
	f->item_ptr = &f->item;
	f->list.children = &f->item_ptr;
	lt_field_plain(&f->item, "item", -1, item_type, item_logical, item_width, true);
	f->item.parent_id = id;
	f->item.parent = &f->list;
}

bool
lt_field_is_leaf(const lt_field *f)
{
	return !(f->type == LT_TYPE_STRUCT || f->type == LT_TYPE_MAP ||
			 f->type == LT_TYPE_LIST || f->type == LT_TYPE_LARGE_LIST);
}

const char *
lt_type_name(lt_type_id t)
{
	static const char *names[] = {
		"null", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
		"float16", "float32", "float64", "decimal128", "decimal256", "utf8", "large_utf8",
		"binary", "large_binary", "fixed_size_binary", "date32", "date64", "time32", "time64",
		"timestamp", "duration", "list", "large_list", "fixed_size_list", "struct", "map"
	};

	if ((size_t) t < sizeof(names) / sizeof(names[0]))
		return names[t];
	return "unknown";
}

static void field_free(lt_field *f);

/* The element type of "fixed_size_list:<inner>:<n>" becomes a synthetic child. */
static lt_code
parse_fixed_list(const char *lt, lt_field *f, lt_error *err)
{
	const char *inner = lt + strlen("fixed_size_list:");
	const char *last = strrchr(inner, ':');
	lt_field   *item;
	char	   *inner_type;
	lt_code		rc;

	if (!last || last == inner || !parse_int(last + 1, 1, 1 << 24, &f->fixed_size))
		return lt_corrupt(err, "bad fixed_size_list type \"%s\"", lt);
	f->type = LT_TYPE_FIXED_LIST;
	if (last - inner == 6 && memcmp(inner, "struct", 6) == 0)
		return LT_OK;			/* FSL<struct>: the child comes from the schema */
	if (f->n_children > 0)
		return lt_corrupt(err, "fixed_size_list type \"%s\" parsed twice", lt);
	inner_type = lt_strndup(inner, last - inner);
	item = lt_calloc(1, sizeof(lt_field));
	f->children = lt_calloc(1, sizeof(lt_field *));
	if (item)
		item->name = lt_strdup("item");
	if (!inner_type || !item || !f->children || !item->name)
	{
		lt_free(inner_type);
		if (item)
			lt_free(item->name);
		lt_free(item);
		lt_free(f->children);
		f->children = NULL;
		return lt_nomem(err);
	}
	item->id = -1;
	item->parent_id = f->id;
	item->nullable = true;
	item->parent = f;
	item->logical_type = inner_type;
	f->children[0] = item;
	f->n_children = 1;
	if (strcmp(inner_type, "lance.bfloat16") == 0)
	{
		item->type = LT_TYPE_FLOAT16;	/* two bytes a value; shown as raw halves */
		item->byte_width = 2;
		return LT_OK;
	}
	rc = lt_parse_logical_type(inner_type, item, err);
	if (rc != LT_OK)
	{
		field_free(item);
		lt_free(f->children);
		f->children = NULL;
		f->n_children = 0;
	}
	return rc;
}

lt_code
lt_parse_logical_type(const char *lt, lt_field *f, lt_error *err)
{
	size_t		i;

	f->byte_width = 0;
	for (i = 0; i < sizeof(simple_types) / sizeof(simple_types[0]); i++)
	{
		if (strcmp(lt, simple_types[i].name) == 0)
		{
			f->type = simple_types[i].type;
			f->byte_width = simple_types[i].width;
			return LT_OK;
		}
	}
	if (strncmp(lt, "decimal:128:", 12) == 0 && parse_decimal(lt + 12, f))
	{
		f->type = LT_TYPE_DECIMAL128;
		f->byte_width = 16;
		return LT_OK;
	}
	if (strncmp(lt, "decimal:256:", 12) == 0 && parse_decimal(lt + 12, f))
	{
		f->type = LT_TYPE_DECIMAL256;
		f->byte_width = 32;
		return LT_OK;
	}
	if (strncmp(lt, "time32:", 7) == 0 && parse_unit(lt + 7, strlen(lt + 7), &f->unit))
	{
		f->type = LT_TYPE_TIME32;
		f->byte_width = 4;
		return LT_OK;
	}
	if (strncmp(lt, "time64:", 7) == 0 && parse_unit(lt + 7, strlen(lt + 7), &f->unit))
	{
		f->type = LT_TYPE_TIME64;
		f->byte_width = 8;
		return LT_OK;
	}
	if (strncmp(lt, "duration:", 9) == 0 && parse_unit(lt + 9, strlen(lt + 9), &f->unit))
	{
		f->type = LT_TYPE_DURATION;
		f->byte_width = 8;
		return LT_OK;
	}
	if (strncmp(lt, "timestamp:", 10) == 0)
	{
		const char *u = lt + 10;
		const char *colon = strchr(u, ':');

		if (!colon || !parse_unit(u, colon - u, &f->unit))
			return lt_error_set(err, LT_EUNSUPPORTED, "unknown logical type \"%s\"", lt);
		f->type = LT_TYPE_TIMESTAMP;
		f->byte_width = 8;
		lt_free(f->timezone);
		f->timezone = NULL;
		if (strcmp(colon + 1, "-") != 0)
		{
			f->timezone = lt_strdup(colon + 1);
			if (!f->timezone)
				return lt_nomem(err);
		}
		return LT_OK;
	}
	if (strncmp(lt, "fixed_size_binary:", 18) == 0)
	{
		if (!parse_int(lt + 18, 0, 1 << 30, &f->fixed_size))
			return lt_corrupt(err, "bad fixed_size_binary type \"%s\"", lt);
		f->type = LT_TYPE_FIXED_BINARY;
		f->byte_width = f->fixed_size;
		return LT_OK;
	}
	if (strncmp(lt, "fixed_size_list:", 16) == 0)
		return parse_fixed_list(lt, f, err);
	if (strncmp(lt, "dict:", 5) == 0)
	{
		/* "dict:<value>:<key>:<ordered>": values decode to the value type */
		const char *v = lt + 5;
		const char *colon = strchr(v, ':');
		char	   *value_type;
		lt_code		rc;

		if (!colon)
			return lt_corrupt(err, "bad dictionary type \"%s\"", lt);
		value_type = lt_strndup(v, colon - v);
		if (!value_type)
			return lt_nomem(err);
		rc = lt_parse_logical_type(value_type, f, err);
		lt_free(value_type);
		f->dictionary = true;
		return rc;
	}
	return lt_error_set(err, LT_EUNSUPPORTED, "unknown logical type \"%s\"", lt);
}

static void
field_free(lt_field *f)
{
	if (!f)
		return;
	/* synthetic FSL items (id -1) belong to their list; schema fields to the schema */
	for (int i = 0; i < f->n_children; i++)
		if (f->children[i]->id == -1)
			field_free(f->children[i]);
	field_free(f->blob_desc);
	lt_free(f->name);
	lt_free(f->logical_type);
	lt_free(f->timezone);
	lt_free(f->children);
	lt_free(f);
}

void
lt_schema_free(lt_schema *s)
{
	int			i;

	if (!s)
		return;
	for (i = 0; i < s->n_all; i++)
		field_free(s->all[i]);
	lt_free(s->all);
	lt_free(s->fields);
	lt_free(s);
}

static lt_code
add_child(lt_field *parent, lt_field *child, lt_error *err)
{
	lt_field  **c = lt_realloc(parent->children, sizeof(lt_field *) * (parent->n_children + 1));

	if (!c)
		return lt_nomem(err);
	parent->children = c;
	parent->children[parent->n_children++] = child;
	child->parent = parent;
	return LT_OK;
}

/* A metadata value of the field as a NUL-terminated copy in buf (false when absent or too long). */
static bool
field_metadata(const Lt__Pb__Field *p, const char *key, char *buf, size_t size)
{
	for (size_t m = 0; m < p->n_metadata; m++)
		if (p->metadata[m]->key && strcmp(p->metadata[m]->key, key) == 0 && p->metadata[m]->has_value &&
			p->metadata[m]->value.len < size)
		{
			memcpy(buf, p->metadata[m]->value.data, p->metadata[m]->value.len);
			buf[p->metadata[m]->value.len] = '\0';
			return true;
		}
	return false;
}

/*
 * The unenforced primary key marker as Lance 8 reads it: the Field proto's flag and position, or
 * the metadata (a numeric position, else a truthy legacy flag: position 0).
 */
static bool
field_pk_position(const Lt__Pb__Field *p, uint32_t *position)
{
	char		v[32];
	bool		flagged = p->has_unenforced_primary_key && p->unenforced_primary_key;

	*position = 0;
	if (flagged && p->has_unenforced_primary_key_position && p->unenforced_primary_key_position > 0)
	{
		*position = p->unenforced_primary_key_position;
		return true;
	}
	if (field_metadata(p, "lance-schema:unenforced-primary-key:position", v, sizeof(v)) && v[0] &&
		strspn(v, "0123456789") == strlen(v) && strlen(v) <= 9)
	{
		*position = (uint32_t) strtoul(v, NULL, 10);
		return true;
	}
	if (field_metadata(p, "lance-schema:unenforced-primary-key", v, sizeof(v)) &&
		(strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0))
		flagged = true;
	return flagged;
}

/* Lance's two blob markers: the legacy encoding flag, and blob v2's Arrow extension name. */
static lt_blob_form
field_blob_form(const Lt__Pb__Field *p)
{
	char		v[32];

	if (field_metadata(p, "ARROW:extension:name", v, sizeof(v)) && strcmp(v, "lance.blob.v2") == 0)
		return LT_BLOB_V2;
	if (p->extension_name && strcmp(p->extension_name, "lance.blob.v2") == 0)
		return LT_BLOB_V2;
	if (field_metadata(p, "lance-encoding:blob", v, sizeof(v)) &&
		(strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0))
		return LT_BLOB_LEGACY;
	return LT_BLOB_NONE;
}

/* A blob v2 size threshold from the field's metadata: absent keeps *v; not a size (or 0 where 0 is no size) is bad. */
static void
blob_size_meta(const Lt__Pb__Field *p, const char *key, bool zero_ok, uint64_t *v, const char **bad)
{
	char		buf[24];
	bool		present = false;

	for (size_t m = 0; m < p->n_metadata; m++)
		present |= p->metadata[m]->key && strcmp(p->metadata[m]->key, key) == 0;
	if (!present)
		return;
	if (!field_metadata(p, key, buf, sizeof(buf)) || !buf[0] || strspn(buf, "0123456789") != strlen(buf) ||
		strlen(buf) > 19 || (!zero_ok && strtoull(buf, NULL, 10) == 0))
	{
		*bad = key;
		return;
	}
	*v = strtoull(buf, NULL, 10);
}

/* Where Lance 12 writes a blob v2 field's values (lt_blob_thresholds): its defaults, or the field's own. */
static void
blob_thresholds(const Lt__Pb__Field *p, lt_blob_thresholds *t)
{
	t->inline_max = LT_BLOB_INLINE_MAX_DEFAULT;
	t->dedicated_after = LT_BLOB_DEDICATED_MIN_DEFAULT;
	t->pack_max = LT_BLOB_PACK_MAX_DEFAULT;
	t->bad = NULL;
	blob_size_meta(p, "lance-encoding:blob-inline-size-threshold", true, &t->inline_max, &t->bad);
	blob_size_meta(p, "lance-encoding:blob-dedicated-size-threshold", false, &t->dedicated_after, &t->bad);
	blob_size_meta(p, "lance-encoding:blob-pack-file-size-threshold", false, &t->pack_max, &t->bad);
}

/* A synthetic field (id -1) of a primitive logical type, child of parent. */
static lt_code
synth_child(lt_field *parent, const char *name, const char *logical_type, lt_error *err)
{
	lt_field   *c = lt_calloc(1, sizeof(lt_field));
	lt_code		rc;

	if (!c)
		return lt_nomem(err);
	c->id = -1;
	c->parent_id = parent->id;
	c->name = lt_strdup(name);
	c->logical_type = lt_strdup(logical_type);
	if (!c->name || !c->logical_type)
	{
		field_free(c);
		return lt_nomem(err);
	}
	if ((rc = lt_parse_logical_type(logical_type, c, err)) != LT_OK || (rc = add_child(parent, c, err)) != LT_OK)
	{
		field_free(c);
		return rc;
	}
	return LT_OK;
}

/*
 * The descriptor a blob column stores in place of its bytes, as Lance writes it: a packed struct of
 * u64 position and size (legacy: into the same data file; position 1 size 0 marks a NULL in 2.0), or in blob
 * v2 {u8 kind, u64 position, u64 size, u32 blob_id, utf8 blob_uri} (kind: inline / packed sidecar /
 * dedicated sidecar / external URI).  A blob field of another type is left alone (read as it is stored).
 */
static lt_code
blob_descriptor(lt_field *f, lt_error *err)
{
	static const char *const legacy[][2] = {{"position", "uint64"}, {"size", "uint64"}};
	static const char *const v2[][2] = {{"kind", "uint8"}, {"position", "uint64"}, {"size", "uint64"},
	{"blob_id", "uint32"}, {"blob_uri", "string"}};
	const char *const (*kids)[2];
	int			n;
	lt_field   *d;
	lt_code		rc = LT_OK;

	if (f->blob == LT_BLOB_LEGACY && (f->type == LT_TYPE_LARGE_BINARY || f->type == LT_TYPE_BINARY))
		kids = legacy, n = 2;
	else if (f->blob == LT_BLOB_V2 && f->type == LT_TYPE_STRUCT)
		kids = v2, n = 5;
	else
	{
		f->blob = LT_BLOB_NONE;
		return LT_OK;
	}
	if (!(d = lt_calloc(1, sizeof(lt_field))))
		return lt_nomem(err);
	d->id = f->id;
	d->parent_id = f->parent_id;
	d->nullable = f->nullable;
	d->packed = true;
	d->blob = f->blob;			/* the descriptor of a blob field (and no blob_desc of its own) */
	d->type = LT_TYPE_STRUCT;
	d->name = lt_strdup(f->name);
	d->logical_type = lt_strdup("struct");
	if (!d->name || !d->logical_type)
		rc = lt_nomem(err);
	for (int i = 0; rc == LT_OK && i < n; i++)
		rc = synth_child(d, kids[i][0], kids[i][1], err);
	if (rc != LT_OK)
	{
		field_free(d);			/* with its synthetic children */
		return rc;
	}
	f->blob_desc = d;
	return LT_OK;
}

const lt_field *
lt_schema_first_blob(const lt_schema *s)
{
	for (int i = 0; s && i < s->n_fields; i++)
		if (s->fields[i]->blob != LT_BLOB_NONE)
			return s->fields[i];
	return NULL;
}

const char *
lt_blob_form_name(lt_blob_form form)
{
	switch (form)
	{
		case LT_BLOB_LEGACY:
			return "legacy blob";
		case LT_BLOB_V2:
			return "blob v2";
		default:
			return "not a blob";
	}
}

lt_code
lt_schema_from_pb(Lt__Pb__Field *const *pb, size_t n, lt_schema **out, lt_error *err)
{
	lt_schema  *s;
	size_t		i;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (n > 1000000)
		return lt_corrupt(err, "schema has %zu fields", n);
	s = lt_calloc(1, sizeof(lt_schema));
	if (!s)
		return lt_nomem(err);
	s->all = lt_calloc(n + 1, sizeof(lt_field *));
	s->fields = lt_calloc(n + 1, sizeof(lt_field *));
	if (!s->all || !s->fields)
	{
		lt_schema_free(s);
		return lt_nomem(err);
	}
	for (i = 0; i < n && rc == LT_OK; i++)
	{
		const Lt__Pb__Field *p = pb[i];
		lt_field   *f = lt_calloc(1, sizeof(lt_field));
		int			j;

		if (!f)
		{
			rc = lt_nomem(err);
			break;
		}
		s->all[s->n_all++] = f;
		f->id = p->has_id ? p->id : 0;
		f->parent_id = p->has_parent_id ? p->parent_id : 0;
		f->nullable = p->has_nullable && p->nullable;
		f->name = lt_strdup(p->name ? p->name : "");
		f->logical_type = lt_strdup(p->logical_type ? p->logical_type : "");
		f->legacy_encoding = p->has_encoding ? (int) p->encoding : 0;
		for (size_t m = 0; m < p->n_metadata; m++)
			if (p->metadata[m]->key && strcmp(p->metadata[m]->key, "lance-encoding:packed") == 0 &&
				p->metadata[m]->has_value && p->metadata[m]->value.len == 4 &&
				memcmp(p->metadata[m]->value.data, "true", 4) == 0)
				f->packed = true;
		f->primary_key = field_pk_position(p, &f->pk_position);
		f->blob = field_blob_form(p);
		if (f->blob == LT_BLOB_V2)
			blob_thresholds(p, &f->blob_sizes);
		if (p->dictionary)
		{
			f->dict_offset = p->dictionary->offset;
			f->dict_length = p->dictionary->length;
		}
		if (!f->name || !f->logical_type)
		{
			rc = lt_nomem(err);
			break;
		}
		if (f->id < 0)
		{
			rc = lt_corrupt(err, "field \"%s\" has negative id %d", f->name, f->id);
			break;
		}
		rc = lt_parse_logical_type(f->logical_type, f, err);
		if (rc != LT_OK)
		{
			lt_error_prefix(err, "field \"%s\" (id %d)", f->name, f->id);
			break;
		}
		if (f->parent_id < 0)
		{
			s->fields[s->n_fields++] = f;
			continue;
		}
		/* the parent precedes its children (pre-order); search backwards */
		for (j = s->n_all - 2; j >= 0; j--)
			if (s->all[j]->id == f->parent_id && s->all[j] != f)
				break;
		if (j < 0)
		{
			rc = lt_corrupt(err, "field \"%s\" (id %d) names missing parent %d", f->name, f->id, f->parent_id);
			break;
		}
		if (!lt_type_is_nested(s->all[j]->type))
		{
			rc = lt_corrupt(err, "field \"%s\" (id %d) has a non-nested parent", f->name, f->id);
			break;
		}
		rc = add_child(s->all[j], f, err);
	}
	/* every list needs its item, every fixed list exactly one child */
	for (i = 0; rc == LT_OK && i < (size_t) s->n_all; i++)
	{
		lt_field   *f = s->all[i];

		if ((f->type == LT_TYPE_LIST || f->type == LT_TYPE_LARGE_LIST || f->type == LT_TYPE_FIXED_LIST)
			&& f->n_children != 1)
			rc = lt_corrupt(err, "list field \"%s\" (id %d) has %d children", f->name, f->id, f->n_children);
		else if (f->type == LT_TYPE_MAP && f->n_children != 1)
			rc = lt_corrupt(err, "map field \"%s\" (id %d) has %d children", f->name, f->id, f->n_children);
	}
	/* blob columns are top-level fields (Lance ignores the marker elsewhere) */
	for (i = 0; rc == LT_OK && i < (size_t) s->n_all; i++)
	{
		if (s->all[i]->parent_id >= 0)
			s->all[i]->blob = LT_BLOB_NONE;
		else if (s->all[i]->blob != LT_BLOB_NONE)
			rc = blob_descriptor(s->all[i], err);
	}
	if (rc != LT_OK)
	{
		lt_schema_free(s);
		return rc;
	}
	*out = s;
	return LT_OK;
}

const lt_field *
lt_schema_find_id(const lt_schema *s, int32_t id)
{
	int			i;

	for (i = 0; i < s->n_all; i++)
		if (s->all[i]->id == id)
			return s->all[i];
	return NULL;
}

const lt_field *
lt_schema_find_name(const lt_schema *s, const char *name)
{
	int			i;

	for (i = 0; i < s->n_fields; i++)
		if (strcmp(s->fields[i]->name, name) == 0)
			return s->fields[i];
	return NULL;
}
