/*
 * lt_ns_dir.c — the directory namespace (lt_namespace.h): its __manifest table and its listing.
 */
#include "namespace/lt_namespace.h"

#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_scan.h"
#include "file/lt_writer.h"

bool
lt_ns_id_valid(const char *id)
{
	const char *p = id;

	if (id[0] == '\0')
		return true;
	for (;;)
	{
		const char *end = strchr(p, LT_NS_DELIMITER);
		size_t		len = end ? (size_t) (end - p) : strlen(p);

		if (len == 0 || memchr(p, '/', len) != NULL || memchr(p, '\\', len) != NULL ||
			(len == 2 && p[0] == '.' && p[1] == '.') || (len == 1 && p[0] == '.'))
			return false;
		if (end == NULL)
			return true;
		p = end + 1;
	}
}

/* A location the manifest may name: relative, inside the root. */
static bool
location_ok(const char *loc)
{
	const char *p = loc;

	if (loc[0] == '\0' || loc[0] == '/' || strstr(loc, "://") != NULL || strchr(loc, '\\') != NULL)
		return false;
	while (*p)
	{
		size_t		len = strcspn(p, "/");

		if ((len == 2 && p[0] == '.' && p[1] == '.') || (len == 1 && p[0] == '.'))
			return false;
		p += len;
		if (*p == '/')
			p++;
	}
	return true;
}

/* ---- the __manifest table -------------------------------------------------------------------------- */

typedef int (*manifest_row_cb) (const char *object_id, const char *object_type, const char *location, void *arg,
								lt_error *err);

static char *
utf8_at(const lt_array *a, int64_t i)
{
	if (!lt_array_is_valid(a, i))
		return NULL;
	return lt_strndup((const char *) a->data + a->offsets[i], (size_t) (a->offsets[i + 1] - a->offsets[i]));
}

/* Call cb for every live row of ds, an opened __manifest; cb returns non-zero to stop. */
static lt_code
manifest_scan(lt_dataset *ds, const char *root, manifest_row_cb cb, void *arg, lt_error *err)
{
	const lt_field *fields[3];
	static const char *const names[3] = {"object_id", "object_type", "location"};
	lt_code		rc = LT_OK;
	bool		stop = false;

	for (int i = 0; i < 3; i++)
	{
		fields[i] = lt_schema_find_name(ds->schema, names[i]);
		if (fields[i] == NULL || (fields[i]->type != LT_TYPE_UTF8 && fields[i]->type != LT_TYPE_LARGE_UTF8))
			return lt_error_set(err, LT_ECORRUPT, "namespace manifest %s/" LT_NS_MANIFEST_DIR
								" has no string column \"%s\"", root, names[i]);
	}
	for (size_t f = 0; f < ds->n_fragments && !stop && rc == LT_OK; f++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

		so.n_fields = 3;
		so.fields = fields;
		rc = lt_fragment_scanner_open(ds, ds->fragments[f], &so, &sc, err);
		while (rc == LT_OK && !stop && (rc = lt_fragment_scanner_next(sc, &b, err)) == LT_OK && b != NULL)
		{
			for (int64_t r = 0; r < b->length && !stop && rc == LT_OK; r++)
			{
				char	   *id = utf8_at(b->columns[0], r);
				char	   *type = utf8_at(b->columns[1], r);
				char	   *loc = utf8_at(b->columns[2], r);

				if (id && type)
				{
					int			s = cb(id, type, loc, arg, err);

					if (s < 0)
						rc = err->code;
					stop = s > 0;
				}
				lt_free(id);
				lt_free(type);
				lt_free(loc);
			}
		}
		if (sc)
			lt_fragment_scanner_free(sc);
	}
	if (rc != LT_OK)
		lt_error_prefix(err, "namespace manifest %s/" LT_NS_MANIFEST_DIR, root);
	return rc;
}

/*
 * Call cb for every live row of the latest version of root's __manifest; *present tells whether the
 * table exists (no __manifest: no rows, not an error).  cb returns non-zero to stop, LT_* < 0 never.
 */
static lt_code
manifest_rows(lt_store *root, manifest_row_cb cb, void *arg, bool *present, lt_error *err)
{
	lt_version_spec spec = {0, NULL};
	lt_dataset *ds = NULL;
	lt_code		rc;

	*present = false;
	rc = lt_dataset_open(root, LT_NS_MANIFEST_DIR "/", &spec, &ds, err);
	if (rc == LT_ENOTFOUND)
		return LT_OK;
	if (rc != LT_OK)
		return lt_error_prefix(err, "namespace manifest %s/" LT_NS_MANIFEST_DIR, root->root);
	*present = true;
	rc = manifest_scan(ds, root->root, cb, arg, err);
	lt_dataset_close(ds);
	return rc;
}

typedef struct has_state
{
	const char *id;
	bool		found;
} has_state;

static int
has_row(const char *object_id, const char *object_type, const char *location, void *arg, lt_error *err)
{
	has_state  *st = arg;

	(void) object_type;
	(void) location;
	(void) err;
	st->found = strcmp(object_id, st->id) == 0;
	return st->found ? 1 : 0;
}

lt_code
lt_ns_manifest_has(lt_dataset *manifest, const char *root, const char *object_id, bool *found, lt_error *err)
{
	has_state	st = {object_id, false};

	LT_TRY(manifest_scan(manifest, root, has_row, &st, err));
	*found = st.found;
	return LT_OK;
}

/* Append one string (NULL: a null slot) to a utf8 array. */
static lt_code
append_utf8(lt_array *a, const char *s, lt_error *err)
{
	size_t		len = s ? strlen(s) : 0;

	if (s == NULL)
		return lt_array_append_nulls(a, 1, err);
	LT_TRY(lt_array_reserve(a, 1, err));
	LT_TRY(lt_array_reserve_data(a, (int64_t) len, err));
	memcpy(a->data + a->data_len, s, len);
	a->data_len += (int64_t) len;
	if (a->validity)
		a->validity[a->length] = 1;
	a->offsets[a->length + 1] = a->data_len;
	a->length++;
	return LT_OK;
}

lt_code
lt_ns_manifest_write_row(lt_store *root, lt_dataset *manifest, const char *object_id, const char *object_type,
						 const char *location, lt_written_file *out, lt_error *err)
{
	const lt_schema *s = manifest->schema;
	lt_array  **cols = lt_calloc((size_t) s->n_fields, sizeof(lt_array *));
	lt_file_version fver;
	lt_file_writer *w = NULL;
	lt_code		rc = LT_OK;

	if (cols == NULL)
		return lt_error_set(err, LT_ENOMEM, "out of memory");
	rc = lt_file_version_for_storage(manifest->storage_version, &fver, err);
	for (int i = 0; i < s->n_fields && rc == LT_OK; i++)
	{
		const lt_field *f = s->fields[i];
		const char *v = NULL;
		bool		is_str = f->type == LT_TYPE_UTF8;

		if (strcmp(f->name, "object_id") == 0)
			v = object_id;
		else if (strcmp(f->name, "object_type") == 0)
			v = object_type;
		else if (strcmp(f->name, "location") == 0)
			v = location;
		rc = lt_array_new(f, &cols[i], err);
		if (rc == LT_OK && v != NULL && !is_str)
			rc = lt_error_set(err, LT_EUNSUPPORTED, "column \"%s\" of namespace manifest %s/" LT_NS_MANIFEST_DIR
							  " is not utf8", f->name, root->root);
		else if (rc == LT_OK && v == NULL && !f->nullable)
			rc = lt_error_set(err, LT_EUNSUPPORTED, "column \"%s\" of namespace manifest %s/" LT_NS_MANIFEST_DIR
							  " is not nullable and lt_fdw does not know its value", f->name, root->root);
		else if (rc == LT_OK)
			rc = v ? append_utf8(cols[i], v, err) : lt_array_append_nulls(cols[i], 1, err);
	}
	if (rc == LT_OK)
		rc = lt_file_writer_open(root, LT_NS_MANIFEST_DIR "/data/", s->n_fields, (const lt_field *const *) s->fields,
								 fver, &w, err);
	if (rc == LT_OK)
		rc = lt_file_writer_write(w, cols, 1, err);
	if (rc == LT_OK)
		rc = lt_file_writer_finish(w, out, err);
	if (w)
		lt_file_writer_free(w);
	for (int i = 0; i < s->n_fields; i++)
		if (cols[i])
			lt_array_free(cols[i]);
	lt_free(cols);
	if (rc != LT_OK)
		lt_error_prefix(err, "namespace manifest %s/" LT_NS_MANIFEST_DIR, root->root);
	return rc;
}

/* ---- listing --------------------------------------------------------------------------------------- */

typedef struct table_list
{
	lt_ns_table *v;
	size_t		n,
				cap;
} table_list;

static lt_code
list_add(table_list *l, const char *name, size_t name_len, const char *location, bool in_manifest, lt_error *err)
{
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? l->cap * 2 : 16;
		lt_ns_table *v = lt_realloc(l->v, cap * sizeof(lt_ns_table));

		if (v == NULL)
			return lt_error_set(err, LT_ENOMEM, "out of memory listing a namespace");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].name = lt_strndup(name, name_len);
	l->v[l->n].location = lt_strdup(location);
	l->v[l->n].in_manifest = in_manifest;
	if (l->v[l->n].name == NULL || l->v[l->n].location == NULL)
	{
		lt_free(l->v[l->n].name);
		lt_free(l->v[l->n].location);
		return lt_error_set(err, LT_ENOMEM, "out of memory listing a namespace");
	}
	l->n++;
	return LT_OK;
}

typedef struct list_state
{
	const char *ns_id;			/* "" = root */
	size_t		ns_len;
	bool		ns_found;		/* the namespace itself has a manifest row (or is the root) */
	bool		root_rows;		/* the manifest's root tables count (root namespace) */
	table_list	tables;
	lt_store   *root;
} list_state;

/* The name of object_id when it is directly in namespace ns (else NULL). */
static const char *
child_name(const char *object_id, const char *ns, size_t ns_len)
{
	const char *name;

	if (ns_len == 0)
		name = object_id;
	else if (strncmp(object_id, ns, ns_len) == 0 && object_id[ns_len] == LT_NS_DELIMITER)
		name = object_id + ns_len + 1;
	else
		return NULL;
	return name[0] != '\0' && strchr(name, LT_NS_DELIMITER) == NULL ? name : NULL;
}

static int
list_manifest_row(const char *object_id, const char *object_type, const char *location, void *arg, lt_error *err)
{
	list_state *st = arg;
	const char *name;

	if (strcmp(object_type, "namespace") == 0 && st->ns_len > 0 && strcmp(object_id, st->ns_id) == 0)
		st->ns_found = true;
	if (strcmp(object_type, "table") != 0 || (st->ns_len == 0 && !st->root_rows) ||
		(name = child_name(object_id, st->ns_id, st->ns_len)) == NULL)
		return 0;
	if (location == NULL || !location_ok(location))
		return lt_error_set(err, LT_ECORRUPT, "table \"%s\" has location \"%s\", which is not a directory below the root",
							object_id, location ? location : "(null)"), -1;
	return list_add(&st->tables, name, strlen(name), location, true, err) == LT_OK ? 0 : -1;
}

static int
cmp_table(const void *a, const void *b)
{
	const lt_ns_table *x = a;
	const lt_ns_table *y = b;
	int			c = strcmp(x->name, y->name);

	/* the manifest's entry first, so that the merge keeps it */
	return c ? c : (int) y->in_manifest - (int) x->in_manifest;
}

/* Does dir hold the marker of a deregistered table? */
static lt_code
deregistered(lt_store *root, const char *dir, bool *out, lt_error *err)
{
	char	   *path = lt_asprintf("%s/.lance-deregistered", dir);
	lt_stat		st;
	lt_code		rc;

	if (path == NULL)
		return lt_error_set(err, LT_ENOMEM, "out of memory");
	rc = lt_store_stat(root, path, &st, err);
	lt_free(path);
	*out = rc == LT_OK;
	return rc == LT_ENOTFOUND ? LT_OK : rc;
}

typedef struct dir_state
{
	table_list	dirs;
	bool		oom;
} dir_state;

static int
collect_lance_dir(const lt_dirent *ent, void *arg)
{
	dir_state  *ds = arg;
	size_t		len = strlen(ent->name);
	lt_error	e;

	if (!ent->is_dir || len <= 6 || strcmp(ent->name + len - 6, ".lance") != 0 || ent->name[0] == '.')
		return 0;
	if (list_add(&ds->dirs, ent->name, len - 6, ent->name, false, &e) != LT_OK)
	{
		ds->oom = true;
		return 1;
	}
	return 0;
}

void
lt_ns_tables_free(lt_ns_table *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		lt_free(t[i].name);
		lt_free(t[i].location);
	}
	lt_free(t);
}

lt_code
lt_ns_dir_list_tables(lt_store *root, const char *ns_id, const lt_ns_dir_opts *opts, lt_ns_table **out,
					  size_t *n_out, lt_error *err)
{
	list_state	st = {0};
	bool		present = false;
	lt_code		rc = LT_OK;
	size_t		w;

	*out = NULL;
	*n_out = 0;
	if (!lt_ns_id_valid(ns_id))
		return lt_error_set(err, LT_EINVALID, "\"%s\" is not a namespace identifier", ns_id);
	st.ns_id = ns_id;
	st.ns_len = strlen(ns_id);
	st.ns_found = st.ns_len == 0;
	st.root_rows = !opts->dir_listing || opts->migration;
	st.root = root;
	if (st.ns_len > 0 && !opts->manifest)
		return lt_error_set(err, LT_EUNSUPPORTED, "namespace \"%s\" of %s: child namespaces are kept in "
							LT_NS_MANIFEST_DIR ", which is disabled", ns_id, root->root);
	/* the root under the defaults is the listing alone: no need to read the manifest */
	if (opts->manifest && (st.ns_len > 0 || st.root_rows))
		rc = manifest_rows(root, list_manifest_row, &st, &present, err);
	if (rc == LT_OK && !st.ns_found)
		rc = lt_error_set(err, LT_ENOTFOUND, "namespace \"%s\" does not exist in %s", ns_id, root->root);
	if (rc == LT_OK && opts->dir_listing && st.ns_len == 0)
	{
		dir_state	ds = {0};

		rc = lt_store_list(root, "", collect_lance_dir, &ds, err);
		if (rc == LT_OK && ds.oom)
			rc = lt_error_set(err, LT_ENOMEM, "out of memory listing %s", root->root);
		for (size_t i = 0; i < ds.dirs.n && rc == LT_OK; i++)
		{
			bool		gone = false;

			rc = deregistered(root, ds.dirs.v[i].location, &gone, err);
			if (rc == LT_OK && !gone)
				rc = list_add(&st.tables, ds.dirs.v[i].name, strlen(ds.dirs.v[i].name), ds.dirs.v[i].location,
							  false, err);
		}
		lt_ns_tables_free(ds.dirs.v, ds.dirs.n);
	}
	if (rc != LT_OK)
	{
		lt_ns_tables_free(st.tables.v, st.tables.n);
		return rc;
	}
	/* sorted by name, the manifest's entry of a name first; later duplicates dropped */
	if (st.tables.n > 1)
		qsort(st.tables.v, st.tables.n, sizeof(lt_ns_table), cmp_table);
	w = 0;
	for (size_t i = 0; i < st.tables.n; i++)
	{
		if (w > 0 && strcmp(st.tables.v[w - 1].name, st.tables.v[i].name) == 0)
		{
			lt_free(st.tables.v[i].name);
			lt_free(st.tables.v[i].location);
			continue;
		}
		st.tables.v[w++] = st.tables.v[i];
	}
	*out = st.tables.v;
	*n_out = w;
	return LT_OK;
}

typedef struct describe_state
{
	const char *id;
	char	   *location;
	bool		bad_location;
} describe_state;

static int
describe_row(const char *object_id, const char *object_type, const char *location, void *arg, lt_error *err)
{
	describe_state *st = arg;

	(void) err;
	if (strcmp(object_type, "table") != 0 || strcmp(object_id, st->id) != 0)
		return 0;
	if (location == NULL || !location_ok(location))
	{
		st->bad_location = true;
		return 1;
	}
	st->location = lt_strdup(location);
	return 1;
}

static int
first_entry(const lt_dirent *ent, void *arg)
{
	(void) ent;
	*(bool *) arg = true;
	return 1;
}

lt_code
lt_ns_dir_describe_table(lt_store *root, const char *table_id, const lt_ns_dir_opts *opts, char **location,
						 lt_error *err)
{
	describe_state st = {table_id, NULL, false};
	bool		present = false;
	bool		nested = strchr(table_id, LT_NS_DELIMITER) != NULL;
	lt_code		rc;

	*location = NULL;
	if (table_id[0] == '\0' || !lt_ns_id_valid(table_id))
		return lt_error_set(err, LT_EINVALID, "\"%s\" is not a table identifier", table_id);
	if (nested && !opts->manifest)
		return lt_error_set(err, LT_EUNSUPPORTED, "table \"%s\" of %s: child namespaces are kept in "
							LT_NS_MANIFEST_DIR ", which is disabled", table_id, root->root);
	if (opts->manifest && (nested || !opts->dir_listing || opts->migration))
	{
		LT_TRY(manifest_rows(root, describe_row, &st, &present, err));
		if (st.bad_location)
			return lt_error_set(err, LT_ECORRUPT, "table \"%s\" of namespace manifest %s/" LT_NS_MANIFEST_DIR
								" has a location that is not a directory below the root", table_id, root->root);
		if (st.location)
		{
			*location = st.location;
			return LT_OK;
		}
	}
	if (opts->dir_listing && !nested)
	{
		char	   *dir = lt_asprintf("%s.lance", table_id);
		char	   *versions = dir ? lt_asprintf("%s/_versions", dir) : NULL;
		bool		any = false;
		bool		gone = false;

		if (versions == NULL)
		{
			lt_free(dir);
			return lt_error_set(err, LT_ENOMEM, "out of memory");
		}
		rc = lt_store_list(root, versions, first_entry, &any, err);
		lt_free(versions);
		if (rc == LT_OK && !any)
			rc = LT_ENOTFOUND;
		if (rc == LT_OK)
			rc = deregistered(root, dir, &gone, err);
		if (rc == LT_OK && !gone)
		{
			*location = dir;
			return LT_OK;
		}
		lt_free(dir);
		if (rc != LT_OK && rc != LT_ENOTFOUND)
			return rc;
	}
	return lt_error_set(err, LT_ENOTFOUND, "table \"%s\" does not exist in namespace %s", table_id, root->root);
}
