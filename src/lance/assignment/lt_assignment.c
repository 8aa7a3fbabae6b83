/*
 * lt_assignment.c — field assignment state: config keys, root and bitmap files (lt_assignment.h).
 *
 * Root file (little endian):  "LTAR" u32 format(1) i32 field_id u32 n_entries,
 *   then per entry  u64 fragment_id u8 kind [PARTIAL: u16 name_len, name],  then u64 FNV-1a of
 *   everything before.  Entries ascend strictly by fragment id and are never NONE.
 * Bitmap file:  "LTAB" u32 format(1) u64 cardinality, the portable roaring serialisation, then
 *   u64 FNV-1a of everything before.
 * Anything else is LT_ECORRUPT naming the file: a state we cannot read is never taken for "none".
 */
#include "assignment/lt_assignment.h"

#include <inttypes.h>
#include <roaring/roaring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "util/lt_random.h"
#include "table/lt_roaring.h"
#include "proto/lt_table.pb-c.h"

#define ROOT_MAGIC		"LTAR"
#define BITMAP_MAGIC	"LTAB"
#define FORMAT_VERSION	1
#define MAX_STATE_FILE	((uint64_t) 1 << 31)
#define MAX_NAME		255

uint64_t
lt_assign_checksum(const uint8_t *p, size_t n)
{
	uint64_t	h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < n; i++)
	{
		h ^= p[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

/* ---- config keys --------------------------------------------------------------------------------- */

bool
lt_assign_config_key(const char *key, int32_t *field_id)
{
	size_t		plen = strlen(LT_ASSIGN_CONFIG_PREFIX);
	char	   *end;
	long		v;

	if (!key || strncmp(key, LT_ASSIGN_CONFIG_PREFIX, plen) != 0 || key[plen] < '0' || key[plen] > '9')
		return false;
	v = strtol(key + plen, &end, 10);
	if (*end != '\0' || v < 0 || v > INT32_MAX)
		return false;
	*field_id = (int32_t) v;
	return true;
}

bool
lt_assign_is_tracked(const lt_dataset *ds, int32_t field_id, const char **root)
{
	const Lt__Pb__Manifest *m = ds->manifest;

	for (size_t i = 0; m && i < m->n_config; i++)
	{
		int32_t		id;

		if (lt_assign_config_key(m->config[i]->key, &id) && id == field_id)
		{
			if (root)
				*root = m->config[i]->value;
			return true;
		}
	}
	return false;
}

bool
lt_assign_any(const lt_dataset *ds)
{
	const Lt__Pb__Manifest *m = ds->manifest;
	int32_t		id;

	for (size_t i = 0; m && i < m->n_config; i++)
		if (lt_assign_config_key(m->config[i]->key, &id))
			return true;
	return false;
}

/* ---- the state in memory ------------------------------------------------------------------------- */

static lt_assign_field *
field_alloc(const lt_dataset *ds, int32_t field_id)
{
	lt_assign_field *f = lt_calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->field_id = field_id;
	f->store = ds->store;
	if (!(f->prefix = lt_strdup(ds->prefix ? ds->prefix : "")))
	{
		lt_free(f);
		return NULL;
	}
	return f;
}

void
lt_assign_free(lt_assign_field *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_entries; i++)
	{
		lt_free(f->entries[i].bitmap_file);
		if (f->entries[i].rows)
			roaring_bitmap_free(f->entries[i].rows);
	}
	lt_free(f->entries);
	lt_free(f->root_file);
	lt_free(f->prefix);
	lt_free(f);
}

lt_code
lt_assign_new(const lt_dataset *ds, int32_t field_id, lt_assign_field **out, lt_error *err)
{
	if (!(*out = field_alloc(ds, field_id)))
		return lt_nomem(err);
	return LT_OK;
}

/* The index of fragment_id's entry, or where it would go. */
static size_t
find_entry(const lt_assign_field *f, uint64_t fragment_id, bool *found)
{
	size_t		lo = 0, hi = f->n_entries;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (f->entries[mid].fragment_id == fragment_id)
		{
			*found = true;
			return mid;
		}
		if (f->entries[mid].fragment_id < fragment_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static char *
state_path(const lt_assign_field *f, const char *name)
{
	return lt_asprintf("%s" LT_ASSIGN_DIR "%s", f->prefix, name);
}

static lt_code
read_state_file(const lt_assign_field *f, const char *name, uint8_t **buf, uint64_t *len, lt_error *err)
{
	char	   *path = state_path(f, name);
	lt_code		rc;

	if (!path)
		return lt_nomem(err);
	rc = lt_store_read_all(f->store, path, MAX_STATE_FILE, buf, len, err);
	if (rc == LT_ENOTFOUND)
		rc = lt_corrupt(err, "field assignment file %s is missing", path);
	lt_free(path);
	return rc;
}

lt_code
lt_assign_load(const lt_dataset *ds, int32_t field_id, lt_assign_field **out, lt_error *err)
{
	const char *root;
	lt_assign_field *f;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	char	   *what;
	lt_code		rc;

	*out = NULL;
	if (!lt_assign_is_tracked(ds, field_id, &root))
		return LT_OK;
	if (!(f = field_alloc(ds, field_id)))
		return lt_nomem(err);
	if (!root || !*root || strchr(root, '/') || strlen(root) > MAX_NAME)
	{
		lt_assign_free(f);
		return lt_corrupt(err, "%s: config entry " LT_ASSIGN_CONFIG_PREFIX "%d names no valid root file",
						  ds->manifest_path, field_id);
	}
	if (!(f->root_file = lt_strdup(root)))
	{
		lt_assign_free(f);
		return lt_nomem(err);
	}
	rc = read_state_file(f, root, &buf, &len, err);
	if (rc == LT_OK)
	{
		what = state_path(f, root);
		rc = what ? lt_assign_root_decode(buf, (size_t) len, what, f, err) : lt_nomem(err);
		lt_free(what);
	}
	lt_free(buf);
	if (rc != LT_OK)
	{
		lt_assign_free(f);
		return rc;
	}
	*out = f;
	return LT_OK;
}

const lt_assign_entry *
lt_assign_entry_of(const lt_assign_field *f, uint64_t fragment_id)
{
	bool		found;
	size_t		i = find_entry(f, fragment_id, &found);

	return found ? &f->entries[i] : NULL;
}

bool
lt_assign_same_entry(const lt_assign_field *a, const lt_assign_field *b, uint64_t fragment_id)
{
	const lt_assign_entry *x = a ? lt_assign_entry_of(a, fragment_id) : NULL;
	const lt_assign_entry *y = b ? lt_assign_entry_of(b, fragment_id) : NULL;

	if (!x || !y)
		return !x && !y;
	if (x->kind != y->kind)
		return false;
	if (x->kind != LT_ASSIGN_PARTIAL)
		return true;
	/* bitmap files are immutable: the same name is the same rows */
	return x->bitmap_file && y->bitmap_file && strcmp(x->bitmap_file, y->bitmap_file) == 0;
}

lt_code
lt_assign_fragment(lt_assign_field *f, uint64_t fragment_id, uint64_t physical_rows, lt_assign_kind *kind,
				   const roaring_bitmap_t **rows, lt_error *err)
{
	bool		found;
	size_t		i = find_entry(f, fragment_id, &found);
	lt_assign_entry *e;

	*kind = LT_ASSIGN_NONE;
	*rows = NULL;
	if (!found)
		return LT_OK;
	e = &f->entries[i];
	*kind = e->kind;
	if (e->kind != LT_ASSIGN_PARTIAL)
		return LT_OK;
	if (!e->rows)
	{
		uint8_t    *buf = NULL;
		uint64_t	len = 0;
		char	   *what;
		lt_code		rc;

		LT_TRY(read_state_file(f, e->bitmap_file, &buf, &len, err));
		what = state_path(f, e->bitmap_file);
		rc = what ? lt_assign_bitmap_decode(buf, (size_t) len, what, physical_rows, &e->rows, err) : lt_nomem(err);
		lt_free(what);
		lt_free(buf);
		LT_TRY(rc);
	}
	else if (roaring_bitmap_get_cardinality(e->rows) > 0 && roaring_bitmap_maximum(e->rows) >= physical_rows)
		return lt_corrupt(err, "field assignment of field %d names row %u of fragment %" PRIu64 ", which has %" PRIu64 " rows",
						  f->field_id, roaring_bitmap_maximum(e->rows), fragment_id, physical_rows);
	*rows = e->rows;
	return LT_OK;
}

lt_code
lt_assign_set(lt_assign_field *f, uint64_t fragment_id, lt_assign_kind kind, roaring_bitmap_t *rows,
			  uint64_t physical_rows, lt_error *err)
{
	bool		found;
	size_t		i = find_entry(f, fragment_id, &found);
	lt_assign_entry *e;

	if (kind == LT_ASSIGN_PARTIAL)
	{
		uint64_t	card = rows ? roaring_bitmap_get_cardinality(rows) : 0;

		if (card > 0 && roaring_bitmap_maximum(rows) >= physical_rows)
		{
			uint32_t	max = roaring_bitmap_maximum(rows);

			roaring_bitmap_free(rows);
			return lt_error_set(err, LT_EINVALID, "assigned row %u is past the %" PRIu64 " rows of fragment %" PRIu64,
								max, physical_rows, fragment_id);
		}
		if (card == 0)
			kind = LT_ASSIGN_NONE;
		else if (card == physical_rows)
			kind = LT_ASSIGN_ALL;
		if (kind != LT_ASSIGN_PARTIAL && rows)
		{
			roaring_bitmap_free(rows);
			rows = NULL;
		}
		if (rows)
			roaring_bitmap_run_optimize(rows);
	}
	else if (rows)
	{
		roaring_bitmap_free(rows);
		rows = NULL;
	}
	if (found)
	{
		e = &f->entries[i];
		lt_free(e->bitmap_file);
		if (e->rows)
			roaring_bitmap_free(e->rows);
		if (kind == LT_ASSIGN_NONE)
		{
			memmove(e, e + 1, (f->n_entries - i - 1) * sizeof(*e));
			f->n_entries--;
			return LT_OK;
		}
	}
	else
	{
		if (kind == LT_ASSIGN_NONE)
			return LT_OK;
		if (f->n_entries == f->cap_entries)
		{
			size_t		cap = f->cap_entries ? f->cap_entries * 2 : 16;
			lt_assign_entry *ne = lt_realloc(f->entries, cap * sizeof(*ne));

			if (!ne)
			{
				if (rows)
					roaring_bitmap_free(rows);
				return lt_nomem(err);
			}
			f->entries = ne;
			f->cap_entries = cap;
		}
		memmove(&f->entries[i + 1], &f->entries[i], (f->n_entries - i) * sizeof(lt_assign_entry));
		f->n_entries++;
		e = &f->entries[i];
	}
	e->fragment_id = fragment_id;
	e->kind = kind;
	e->bitmap_file = NULL;
	e->rows = rows;
	return LT_OK;
}

void
lt_assign_retain(lt_assign_field *f, const uint64_t *keep, size_t n_keep, bool *changed)
{
	size_t		w = 0, k = 0;

	*changed = false;
	for (size_t i = 0; i < f->n_entries; i++)
	{
		lt_assign_entry *e = &f->entries[i];

		while (k < n_keep && keep[k] < e->fragment_id)
			k++;
		if (k < n_keep && keep[k] == e->fragment_id)
			f->entries[w++] = *e;
		else
		{
			lt_free(e->bitmap_file);
			if (e->rows)
				roaring_bitmap_free(e->rows);
			*changed = true;
		}
	}
	f->n_entries = w;
}

/* ---- encodings ----------------------------------------------------------------------------------- */

lt_code
lt_assign_root_encode(const lt_assign_field *f, uint8_t **buf, size_t *len, lt_error *err)
{
	size_t		n = 16 + 8;
	uint8_t    *p,
			   *q;

	for (size_t i = 0; i < f->n_entries; i++)
	{
		n += 9;
		if (f->entries[i].kind == LT_ASSIGN_PARTIAL)
		{
			if (!f->entries[i].bitmap_file)
				return lt_error_set(err, LT_EINVALID, "fragment %" PRIu64 "'s bitmap was not written",
									f->entries[i].fragment_id);
			n += 2 + strlen(f->entries[i].bitmap_file);
		}
	}
	if (!(p = q = lt_malloc(n)))
		return lt_nomem(err);
	memcpy(q, ROOT_MAGIC, 4);
	lt_put32(q + 4, FORMAT_VERSION);
	lt_put32(q + 8, (uint32_t) f->field_id);
	lt_put32(q + 12, (uint32_t) f->n_entries);
	q += 16;
	for (size_t i = 0; i < f->n_entries; i++)
	{
		const lt_assign_entry *e = &f->entries[i];

		lt_put64(q, e->fragment_id);
		q[8] = (uint8_t) e->kind;
		q += 9;
		if (e->kind == LT_ASSIGN_PARTIAL)
		{
			size_t		nl = strlen(e->bitmap_file);

			lt_put16(q, (uint16_t) nl);
			memcpy(q + 2, e->bitmap_file, nl);
			q += 2 + nl;
		}
	}
	lt_put64(q, lt_assign_checksum(p, (size_t) (q - p)));
	*buf = p;
	*len = n;
	return LT_OK;
}

lt_code
lt_assign_root_decode(const uint8_t *buf, size_t len, const char *what, lt_assign_field *f, lt_error *err)
{
	lt_cursor	c = lt_cursor_make(buf, len);
	const uint8_t *magic;
	uint32_t	fmt, fid, n;

	if (len < 24 || lt_assign_checksum(buf, len - 8) != lt_le64(buf + len - 8))
		return lt_corrupt(err, "field assignment root %s is truncated or damaged (checksum)", what);
	c.len = len - 8;
	if (!lt_cursor_take(&c, 4, &magic) || memcmp(magic, ROOT_MAGIC, 4) != 0 || !lt_cursor_u32(&c, &fmt) ||
		!lt_cursor_u32(&c, &fid) || !lt_cursor_u32(&c, &n))
		return lt_corrupt(err, "field assignment root %s has no valid header", what);
	if (fmt != FORMAT_VERSION)
		return lt_error_set(err, LT_EUNSUPPORTED, "field assignment root %s has format %u, which lt_fdw does not know",
							what, fmt);
	if ((int32_t) fid != f->field_id)
		return lt_corrupt(err, "field assignment root %s is of field %d, not of field %d", what, (int32_t) fid,
						  f->field_id);
	if (n > lt_cursor_left(&c) / 9)
		return lt_corrupt(err, "field assignment root %s is truncated (%u entries)", what, n);
	if (!(f->entries = lt_calloc(n ? n : 1, sizeof(lt_assign_entry))))
		return lt_nomem(err);
	f->cap_entries = n ? n : 1;
	for (uint32_t i = 0; i < n; i++)
	{
		lt_assign_entry *e = &f->entries[i];
		const uint8_t *k, *name;
		uint16_t	nl;

		if (!lt_cursor_u64(&c, &e->fragment_id) || !lt_cursor_take(&c, 1, &k))
			return lt_corrupt(err, "field assignment root %s is truncated at entry %u", what, i);
		if (i > 0 && e->fragment_id <= f->entries[i - 1].fragment_id)
			return lt_corrupt(err, "field assignment root %s: fragment ids out of order at entry %u", what, i);
		if (*k != LT_ASSIGN_ALL && *k != LT_ASSIGN_PARTIAL)
			return lt_corrupt(err, "field assignment root %s: entry %u has unknown kind %u", what, i, *k);
		e->kind = (lt_assign_kind) *k;
		f->n_entries = i + 1;
		if (e->kind != LT_ASSIGN_PARTIAL)
			continue;
		if (!lt_cursor_u16(&c, &nl) || nl == 0 || nl > MAX_NAME || !lt_cursor_take(&c, nl, &name) ||
			memchr(name, '/', nl) || memchr(name, '\0', nl))
			return lt_corrupt(err, "field assignment root %s: entry %u has no valid bitmap name", what, i);
		if (!(e->bitmap_file = lt_malloc(nl + 1u)))
			return lt_nomem(err);
		memcpy(e->bitmap_file, name, nl);
		e->bitmap_file[nl] = '\0';
	}
	if (lt_cursor_left(&c) != 0)
		return lt_corrupt(err, "field assignment root %s has %zu bytes after its entries", what, lt_cursor_left(&c));
	return LT_OK;
}

lt_code
lt_assign_bitmap_encode(const roaring_bitmap_t *rows, uint8_t **buf, size_t *len, lt_error *err)
{
	size_t		rb = roaring_bitmap_portable_size_in_bytes(rows);
	size_t		n = 16 + rb + 8;
	uint8_t    *p = lt_malloc(n);

	if (!p)
		return lt_nomem(err);
	memcpy(p, BITMAP_MAGIC, 4);
	lt_put32(p + 4, FORMAT_VERSION);
	lt_put64(p + 8, roaring_bitmap_get_cardinality(rows));
	roaring_bitmap_portable_serialize(rows, (char *) p + 16);
	lt_put64(p + 16 + rb, lt_assign_checksum(p, 16 + rb));
	*buf = p;
	*len = n;
	return LT_OK;
}

lt_code
lt_assign_bitmap_decode(const uint8_t *buf, size_t len, const char *what, uint64_t physical_rows,
						roaring_bitmap_t **rows, lt_error *err)
{
	size_t		consumed = 0;
	roaring_bitmap_t *r = NULL;
	lt_code		rc;

	*rows = NULL;
	if (len < 24 || lt_assign_checksum(buf, len - 8) != lt_le64(buf + len - 8))
		return lt_corrupt(err, "field assignment bitmap %s is truncated or damaged (checksum)", what);
	if (memcmp(buf, BITMAP_MAGIC, 4) != 0)
		return lt_corrupt(err, "field assignment bitmap %s has no valid header", what);
	if (lt_le32(buf + 4) != FORMAT_VERSION)
		return lt_error_set(err, LT_EUNSUPPORTED, "field assignment bitmap %s has format %u, which lt_fdw does not know",
							what, lt_le32(buf + 4));
	rc = lt_roaring_to_croaring(buf + 16, len - 24, &r, &consumed, err);
	if (rc != LT_OK)
		return lt_corrupt(err, "field assignment bitmap %s does not parse: %s", what, err->msg);
	if (consumed != len - 24 || roaring_bitmap_get_cardinality(r) != lt_le64(buf + 8))
	{
		roaring_bitmap_free(r);
		return lt_corrupt(err, "field assignment bitmap %s: its bitmap does not match its header", what);
	}
	if (roaring_bitmap_get_cardinality(r) > 0 && roaring_bitmap_maximum(r) >= physical_rows)
	{
		roaring_bitmap_free(r);
		return lt_corrupt(err, "field assignment bitmap %s names row offsets past the fragment's %" PRIu64 " rows",
						  what, physical_rows);
	}
	*rows = r;
	return LT_OK;
}

/* ---- writing ------------------------------------------------------------------------------------- */

static lt_code
put_new(lt_assign_field *f, const char *suffix, const uint8_t *buf, size_t len, char **name, lt_error *err)
{
	uint8_t		uuid[16];
	char		text[40];
	char	   *path;
	lt_code		rc;

	lt_uuid_v4(uuid, text);
	if (!(*name = lt_asprintf("%d-%s.%s", f->field_id, text, suffix)))
		return lt_nomem(err);
	if (!(path = state_path(f, *name)))
		rc = lt_nomem(err);
	else
		rc = lt_store_put_if_absent(f->store, path, buf, len, err);
	lt_free(path);
	if (rc != LT_OK)
	{
		lt_free(*name);
		*name = NULL;
	}
	return rc;
}

lt_code
lt_assign_write(lt_assign_field *f, char **root_file, lt_error *err)
{
	uint8_t    *buf = NULL;
	size_t		len = 0;
	lt_code		rc = LT_OK;

	*root_file = NULL;
	for (size_t i = 0; rc == LT_OK && i < f->n_entries; i++)
	{
		lt_assign_entry *e = &f->entries[i];

		if (e->kind != LT_ASSIGN_PARTIAL || e->bitmap_file)
			continue;
		if ((rc = lt_assign_bitmap_encode(e->rows, &buf, &len, err)) == LT_OK)
			rc = put_new(f, "bitmap", buf, len, &e->bitmap_file, err);
		lt_free(buf);
		buf = NULL;
	}
	if (rc == LT_OK && (rc = lt_assign_root_encode(f, &buf, &len, err)) == LT_OK)
		rc = put_new(f, "root", buf, len, root_file, err);
	lt_free(buf);
	return rc;
}

/* ---- what lt_cleanup keeps ---------------------------------------------------------------------------- */

static lt_code
push_path(char ***paths, size_t *n, size_t *cap, char *path, lt_error *err)
{
	if (!path)
		return lt_nomem(err);
	if (*n == *cap)
	{
		size_t		nc = *cap ? *cap * 2 : 8;
		char	  **p = lt_realloc(*paths, nc * sizeof(char *));

		if (!p)
		{
			lt_free(path);
			return lt_nomem(err);
		}
		*paths = p;
		*cap = nc;
	}
	(*paths)[(*n)++] = path;
	return LT_OK;
}

lt_code
lt_assign_referenced_files(const lt_dataset *ds, char ***paths, size_t *n, lt_error *err)
{
	const Lt__Pb__Manifest *m = ds->manifest;
	size_t		cap = 0;
	lt_code		rc = LT_OK;

	*paths = NULL;
	*n = 0;
	for (size_t i = 0; rc == LT_OK && m && i < m->n_config; i++)
	{
		int32_t		id;
		lt_assign_field *f = NULL;

		if (!lt_assign_config_key(m->config[i]->key, &id))
			continue;
		rc = push_path(paths, n, &cap, lt_asprintf(LT_ASSIGN_DIR "%s", m->config[i]->value), err);
		if (rc == LT_OK)
			rc = lt_assign_load(ds, id, &f, err);
		for (size_t k = 0; rc == LT_OK && f && k < f->n_entries; k++)
			if (f->entries[k].kind == LT_ASSIGN_PARTIAL && f->entries[k].bitmap_file)
				rc = push_path(paths, n, &cap, lt_asprintf(LT_ASSIGN_DIR "%s", f->entries[k].bitmap_file), err);
		lt_assign_free(f);
	}
	if (rc != LT_OK)
	{
		for (size_t i = 0; i < *n; i++)
			lt_free((*paths)[i]);
		lt_free(*paths);
		*paths = NULL;
		*n = 0;
	}
	return rc;
}
