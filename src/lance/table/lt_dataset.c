/*
 * lt_dataset.c — manifests, versions and tags.
 *
 * Manifest file layout:
 *   [u32 len | IndexSection]  [u32 len | Transaction]  [u32 len | Manifest]
 *   i64 manifest_pos, u16 0, u16 2, "LANC"
 * The index and transaction sections are optional; the manifest records their
 * positions (0 is a valid position).
 */
#include "table/lt_dataset.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "table/lt_deletion.h"
#include "file/lt_file.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "util/lt_sort.h"

#define MAX_MANIFEST_BYTES ((uint64_t) 1 << 30)
#define KNOWN_READER_FLAGS (LT_FLAG_DELETION_FILES | LT_FLAG_STABLE_ROW_IDS | LT_FLAG_USE_V2_FORMAT)

void
lt_manifest_name(uint64_t version, lt_naming naming, char *buf, size_t buflen)
{
	if (naming == LT_NAMING_V2)
		snprintf(buf, buflen, "%020" PRIu64 ".manifest", UINT64_MAX - version);
	else
		snprintf(buf, buflen, "%" PRIu64 ".manifest", version);
}


/* prefix + rel, with a '/' between when prefix lacks one. */
static char *
prefixed(const char *prefix, const char *rel)
{
	size_t		n = strlen(prefix);

	return lt_concat3(prefix, (n && prefix[n - 1] != '/') ? "/" : "", rel);
}

/* "root" or "root/prefix" without a trailing '/', for messages. */
static void
dataset_name(const lt_store *store, const char *prefix, char *buf, size_t len)
{
	size_t		n = strlen(prefix);

	while (n > 0 && prefix[n - 1] == '/')
		n--;
	if (n == 0)
		snprintf(buf, len, "%s", store->root);
	else
		snprintf(buf, len, "%s/%.*s", store->root, (int) n, prefix);
}

char *
lt_dataset_path(const lt_dataset *ds, const char *rel)
{
	return prefixed(ds->prefix, rel);
}

lt_code
lt_dataset_prefetch_fragments(lt_dataset *ds, const size_t *idx, size_t n, const bool *data_files, lt_error *err)
{
	char	  **paths;
	int			np = 0;
	size_t		cap = 0;
	lt_code		rc;

	if (!ds->store->ops->prefetch || n == 0)
		return LT_OK;
	for (size_t i = 0; i < n; i++)
		if (idx[i] < ds->n_fragments)
			cap += ds->fragments[idx[i]]->n_files + 1;
	if (!(paths = lt_calloc(cap ? cap : 1, sizeof(char *))))
		return LT_OK;			/* best effort */
	for (size_t i = 0; i < n; i++)
	{
		const Lt__Pb__DataFragment *f;

		if (idx[i] >= ds->n_fragments)
			continue;
		f = ds->fragments[idx[i]];
		for (size_t j = 0; (!data_files || data_files[i]) && j < f->n_files; j++)
		{
			char	   *rel = lt_asprintf("data/%s", f->files[j]->path);

			if (rel && (paths[np] = lt_dataset_file_path(ds, f->files[j]->has_base_id, f->files[j]->base_id, rel)) != NULL)
				np++;
			lt_free(rel);
		}
		if (f->deletion_file)
		{
			const Lt__Pb__DeletionFile *df = f->deletion_file;
			char	   *rel = lt_deletion_path(f->id, df->read_version, df->id,
											   df->file_type == LT__PB__DELETION_FILE__FILE_TYPE__BITMAP
											   ? LT_DELETION_BITMAP : LT_DELETION_ARROW);

			if (rel && (paths[np] = lt_dataset_file_path(ds, df->has_base_id, df->base_id, rel)) != NULL)
				np++;
			lt_free(rel);
		}
	}
	rc = lt_store_prefetch(ds->store, np, (const char *const *) paths, err);
	for (int i = 0; i < np; i++)
		lt_free(paths[i]);
	lt_free(paths);
	return rc;
}

/* Parse "<digits>.manifest"; false for anything else (temp files, detached). */
static bool
parse_manifest_name(const char *name, uint64_t *number, lt_naming *naming)
{
	size_t		len = strlen(name);
	size_t		digits = len - strlen(".manifest");
	uint64_t	v = 0;
	size_t		i;

	if (len <= strlen(".manifest") || strcmp(name + digits, ".manifest") != 0)
		return false;
	for (i = 0; i < digits; i++)
	{
		if (!isdigit((unsigned char) name[i]))
			return false;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t) (name[i] - '0'), &v))
			return false;
	}
	if (digits == 20)
	{
		*naming = LT_NAMING_V2;
		*number = UINT64_MAX - v;
	}
	else
	{
		*naming = LT_NAMING_V1;
		*number = v;
	}
	return true;
}

typedef struct version_list
{
	uint64_t   *v;
	size_t		n, cap;
	bool		max_only;		/* keep only the newest (max, when n > 0): no array, no sort */
	uint64_t	max;
	bool		seen_v1, seen_v2;
	bool		oom;
	/* the newest manifest name that is not a file (a directory, a FIFO ...), if any */
	bool		bad;
	uint64_t	bad_version;
	bool		bad_is_dir;
	char		bad_name[64];
} version_list;

static int
collect_version(const lt_dirent *ent, void *arg)
{
	version_list *l = arg;
	uint64_t	v;
	lt_naming	naming;

	if (!parse_manifest_name(ent->name, &v, &naming))
		return 0;
	if (ent->is_dir || ent->special)
	{
		/* not a manifest, but in a manifest's place: an error if it is the newest (lt_dataset_versions) */
		if (!l->bad || v > l->bad_version)
		{
			l->bad = true;
			l->bad_version = v;
			l->bad_is_dir = ent->is_dir;
			snprintf(l->bad_name, sizeof(l->bad_name), "%s", ent->name);
		}
		return 0;
	}
	if (naming == LT_NAMING_V2)
		l->seen_v2 = true;
	else
		l->seen_v1 = true;
	if (l->max_only)
	{
		if (l->n == 0 || v > l->max)
			l->max = v;
		l->n = 1;
		return 0;
	}
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? l->cap * 2 : 64;
		uint64_t   *p = lt_realloc(l->v, cap * sizeof(uint64_t));

		if (!p)
		{
			l->oom = true;
			return 1;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = v;
	return 0;
}

/* The listing of _versions/ into l (every version, or with l->max_only the newest), checked as below. */
static lt_code
list_versions(lt_store *store, const char *prefix, version_list *l, lt_naming *naming, lt_error *err)
{
	char	   *dir = prefixed(prefix, "_versions");
	char		name[1024];
	lt_code		rc;

	name[0] = '\0';
	if (!dir)
		return lt_nomem(err);
	rc = lt_store_list_opts(store, dir, &(lt_list_opts) {.names_only = true}, collect_version, l, err);
	/* the dataset's name only for a message (most lookups need none) */
	if (rc == LT_ENOTFOUND || (rc == LT_OK && ((l->seen_v1 && l->seen_v2) || l->bad || l->n == 0)))
		dataset_name(store, prefix, name, sizeof(name));
	if (rc == LT_ENOTFOUND)
		rc = lt_error_set(err, LT_ENOTFOUND, "%s is not a Lance dataset (it has no _versions directory)", name);
	lt_free(dir);
	if (rc == LT_OK && l->oom)
		rc = lt_nomem(err);
	if (rc == LT_OK && l->seen_v1 && l->seen_v2)
		rc = lt_corrupt(err, "%s/_versions mixes V1 and V2 manifest names", name);
	if (rc == LT_OK && l->n > 0 && !l->max_only)
	{
		qsort(l->v, l->n, sizeof(uint64_t), lt_cmp_u64);
		l->max = l->v[l->n - 1];
	}
	/*
	 * Something that is not a file where the newest manifest should be: reading the version below it
	 * would hide the damage (and every commit would then lose the race for that name), so say what it is.
	 */
	if (rc == LT_OK && l->bad && (l->n == 0 || l->bad_version > l->max))
		rc = lt_corrupt(err, "%s/_versions/%s, the newest version's manifest, is %s, not a file", name,
						l->bad_name, l->bad_is_dir ? "a directory" : "a FIFO, socket or device");
	if (rc == LT_OK && l->n == 0)
		rc = lt_error_set(err, LT_ENOTFOUND, "%s/_versions holds no manifest", name);
	*naming = l->seen_v2 ? LT_NAMING_V2 : LT_NAMING_V1;
	return rc;
}

lt_code
lt_dataset_versions(lt_store *store, const char *prefix, uint64_t **versions, size_t *n,
					lt_naming *naming, lt_error *err)
{
	version_list l = {0};
	lt_code		rc;

	*versions = NULL;
	*n = 0;
	rc = list_versions(store, prefix, &l, naming, err);
	if (rc != LT_OK)
	{
		lt_free(l.v);
		return rc;
	}
	*versions = l.v;
	*n = l.n;
	return LT_OK;
}

/* The number after the "version" member of a small JSON object ({"version":6,...}); false when there is none. */
static bool
json_version_member(const char *text, uint64_t *version)
{
	const char *p = strstr(text, "\"version\"");
	char	   *end;
	unsigned long long v;

	if (!p)
		return false;
	p += strlen("\"version\"");
	while (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (!isdigit((unsigned char) *p))
		return false;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || v == 0 || !(*end == ',' || *end == '}' || isspace((unsigned char) *end)))
		return false;
	*version = v;
	return true;
}

/* Whether the manifest of version v exists under naming; errors count as "cannot tell" (false, *ok false). */
static bool
manifest_exists(lt_store *store, const char *prefix, uint64_t v, lt_naming naming, bool *ok)
{
	char		name[64];
	char	   *path;
	lt_stat		st;
	lt_error	ignore;
	lt_code		rc;

	lt_manifest_name(v, naming, name, sizeof(name));
	path = lt_asprintf("%s_versions/%s", prefix, name);
	if (!path)
	{
		*ok = false;
		return false;
	}
	rc = lt_store_stat(store, path, &st, &ignore);
	lt_free(path);
	/* a directory or a FIFO under a manifest's name: cannot tell here; the listing reports it */
	*ok = (rc == LT_OK && !st.is_dir && !st.special) || rc == LT_ENOTFOUND;
	return rc == LT_OK && !st.is_dir && !st.special;
}

/*
 * The latest version from _versions/latest_version_hint.json, as Lance reads it on stores whose listings are
 * unordered: the hinted version must exist (V2 name, else V1), then N+1, N+2, ... are probed until one is
 * missing.  That relies on versions above the hint being contiguous, which a cleanup can break (a tagged old
 * version kept, the ones after it removed, the hint stale); so the answer stands only if no name in
 * _versions/ changed after the hint was put in place, where the store can tell.  False: list instead (no
 * hint, a hint past the end, a changed directory, far too many probes, any error).
 */
static bool
latest_from_hint(lt_store *store, const char *prefix, int64_t dir_ns, uint64_t *version, lt_naming *naming,
				 lt_code *rc, lt_error *err)
{
	char	   *hint_path = lt_asprintf("%s_versions/latest_version_hint.json", prefix);
	char	   *dir_path = lt_asprintf("%s_versions", prefix);
	lt_stat		hst,
				dst;
	lt_error	ignore;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	uint64_t	v = 0;
	lt_naming	nm = LT_NAMING_V2;
	bool		ok = false;
	bool		found = false;
	char		text[256];

	if (!hint_path || !dir_path)
		goto done;
	if (lt_store_stat(store, hint_path, &hst, &ignore) != LT_OK)
		goto done;
	if (hst.is_dir || hst.special)
	{
		/* planted, never written by a Lance engine: an error, and never opened (a FIFO would block) */
		char		name[1024];

		dataset_name(store, prefix, name, sizeof(name));
		*rc = lt_corrupt(err, "%s/_versions/latest_version_hint.json, the version hint, is %s, not a file", name,
						 hst.is_dir ? "a directory" : "a FIFO, socket or device");
		goto done;
	}
	/*
	 * _versions/ (dir_ns: its change time, read before) already changed after the hint was put in place: the
	 * check after the probes would refuse the answer, so neither read the hint nor probe (concurrent writers)
	 */
	if (dir_ns && hst.change_ns && dir_ns > hst.change_ns)
		goto done;
	if (lt_store_read_all(store, hint_path, sizeof(text) - 1, &buf, &len, &ignore) != LT_OK)
		goto done;
	memcpy(text, buf, len);
	text[len] = '\0';
	if (!json_version_member(text, &v))
		goto done;
	if (!manifest_exists(store, prefix, v, nm, &ok))
	{
		nm = LT_NAMING_V1;
		if (!ok || !manifest_exists(store, prefix, v, nm, &ok))
			goto done;			/* the hint points past the end (or cannot be checked) */
	}
	for (int probes = 0;; probes++)
	{
		if (probes >= 1000 || v == UINT64_MAX - 1)
			goto done;			/* one listing costs less than this many probes */
		if (!manifest_exists(store, prefix, v + 1, nm, &ok))
		{
			/* the next version under the other naming: a mixed directory, which the listing reports */
			if (!ok || manifest_exists(store, prefix, v + 1, nm == LT_NAMING_V2 ? LT_NAMING_V1 : LT_NAMING_V2, &ok) ||
				!ok)
				goto done;
			break;
		}
		v++;
	}
	/* last: the directory's change time, so that a removal during the probes is seen too */
	if (lt_store_stat(store, dir_path, &dst, &ignore) != LT_OK)
		goto done;
	if (hst.change_ns && dst.change_ns && dst.change_ns > hst.change_ns)
		goto done;
	*version = v;
	*naming = nm;
	found = true;
done:
	lt_free(buf);
	lt_free(hint_path);
	lt_free(dir_path);
	return found;
}

typedef struct first_manifest
{
	bool		found;
	uint64_t	version;
	lt_naming	naming;
} first_manifest;

static int
note_first_manifest(const lt_dirent *ent, void *arg)
{
	first_manifest *f = arg;

	if (!parse_manifest_name(ent->name, &f->version, &f->naming))
		return 0;
	/* a "directory" under the newest manifest's name: not found here, the full listing reports it */
	f->found = !ent->is_dir && !ent->special;
	return 1;
}

/*
 * The latest version, without reading every name in _versions/ where that can be avoided:
 *  - a store whose listings are ordered (S3): V2 names sort newest first, so the first manifest listed is the
 *    latest (one small request; start after "/" skips temp names such as Lance's ".tmp_*");
 *  - other stores (local): the version hint, probed forward (latest_from_hint);
 *  - otherwise (V1 names on S3, no usable hint): every name, the highest wins.
 */
/*
 * The latest version found through the hint, remembered per dataset (store root and prefix) with the change
 * time of _versions/ read before the probes: while _versions/ keeps that change time no manifest came or went,
 * so a statement that resolves the latest version again needs one stat instead of the hint and the probes.
 * File system clocks are coarse (a change in the same tick keeps the time), so only a change time older than
 * LATEST_SETTLE_NS at the lookup is remembered: any later change then shows as a later time.
 */
#define LATEST_MEMO_SLOTS 16
#define LATEST_SETTLE_NS ((int64_t) 2000000000)

typedef struct latest_memo
{
	char		key[480];		/* root, '\x1f', prefix; "" = free */
	int64_t		dir_change_ns;
	uint64_t	version;
	lt_naming	naming;
	uint64_t	used;
} latest_memo;

static latest_memo memo[LATEST_MEMO_SLOTS];
static uint64_t memo_clock;
static int64_t settle_ns = LATEST_SETTLE_NS;

void
lt_dataset_latest_settle(int64_t ns)
{
	settle_ns = ns < 0 ? LATEST_SETTLE_NS : ns;
	memset(memo, 0, sizeof(memo));
}

static bool
memo_key(const lt_store *store, const char *prefix, char *key, size_t len)
{
	int			n = snprintf(key, len, "%s\x1f%s", store->root ? store->root : "", prefix);

	return n > 0 && (size_t) n < len;
}

static latest_memo *
memo_find(const char *key)
{
	for (int i = 0; i < LATEST_MEMO_SLOTS; i++)
		if (memo[i].key[0] && strcmp(memo[i].key, key) == 0)
			return &memo[i];
	return NULL;
}

static void
memo_put(const char *key, int64_t dir_change_ns, uint64_t version, lt_naming naming)
{
	latest_memo *m = memo_find(key);
	struct timespec now;

	if (!m)
	{
		m = &memo[0];
		for (int i = 1; i < LATEST_MEMO_SLOTS; i++)
			if (memo[i].used < m->used)
				m = &memo[i];
	}
	m->key[0] = '\0';
	if (clock_gettime(CLOCK_REALTIME, &now) != 0 ||
		(int64_t) now.tv_sec * 1000000000 + now.tv_nsec - dir_change_ns < settle_ns)
		return;					/* changed too recently to tell a next change by its time */
	strcpy(m->key, key);
	m->dir_change_ns = dir_change_ns;
	m->version = version;
	m->naming = naming;
	m->used = ++memo_clock;
}

lt_code
lt_dataset_latest_version(lt_store *store, const char *prefix, uint64_t *version, lt_naming *naming,
						  lt_error *err)
{
	if (store->list_ordered)
	{
		first_manifest f = {0};
		char	   *dir = prefixed(prefix, "_versions");
		lt_list_opts opts = {.start_after = "/", .page_size = 8, .names_only = true};
		lt_code		rc;

		if (!dir)
			return lt_nomem(err);
		rc = lt_store_list_opts(store, dir, &opts, note_first_manifest, &f, err);
		lt_free(dir);
		if (rc != LT_OK && rc != LT_ENOTFOUND)
			return rc;
		if (rc == LT_OK && f.found && f.naming == LT_NAMING_V2)
		{
			*version = f.version;
			*naming = f.naming;
			return LT_OK;
		}
	}
	else
	{
		lt_code		rc = LT_OK;
		char		key[sizeof(memo[0].key)];
		char	   *dir = NULL;
		lt_stat		dst;
		lt_error	ignore;
		int64_t		dir_ns = 0;
		bool		keyed = memo_key(store, prefix, key, sizeof(key));

		/* _versions/ unchanged since a settled lookup: the same answer */
		if (keyed && (dir = prefixed(prefix, "_versions")) != NULL &&
			lt_store_stat(store, dir, &dst, &ignore) == LT_OK && dst.is_dir && dst.change_ns)
		{
			latest_memo *m = memo_find(key);

			dir_ns = dst.change_ns;
			if (m && m->dir_change_ns == dir_ns)
			{
				lt_free(dir);
				m->used = ++memo_clock;
				*version = m->version;
				*naming = m->naming;
				return LT_OK;
			}
		}
		lt_free(dir);
		if (latest_from_hint(store, prefix, dir_ns, version, naming, &rc, err))
		{
			if (dir_ns)
				memo_put(key, dir_ns, *version, *naming);
			return LT_OK;
		}
		if (rc != LT_OK)
			return rc;
	}
	/* Lance's own rule on a local disk (current_manifest_local): the newest name listed, nothing kept or sorted */
	{
		version_list l = {.max_only = true};

		LT_TRY(list_versions(store, prefix, &l, naming, err));
		*version = l.max;
	}
	return LT_OK;
}

/* A tag name may not leave _refs/tags/. */
static bool
valid_tag_name(const char *tag)
{
	if (!tag[0] || strlen(tag) > 255 || strcmp(tag, ".") == 0 || strcmp(tag, "..") == 0)
		return false;
	for (const char *p = tag; *p; p++)
		if (*p == '/' || *p == '\\' || (unsigned char) *p < 0x20)
			return false;
	return true;
}

static char *
tag_path(const char *prefix, const char *tag)
{
	char	   *rel = lt_asprintf("_refs/tags/%s.json", tag);
	char	   *path = rel ? prefixed(prefix, rel) : NULL;

	lt_free(rel);
	return path;
}

lt_code
lt_tag_create(lt_store *store, const char *prefix, const char *tag, uint64_t version, lt_error *err)
{
	lt_version_spec spec = {version, NULL};
	lt_dataset *ds = NULL;
	char	   *path,
			   *json;
	lt_code		rc;

	if (!valid_tag_name(tag))
		return lt_error_set(err, LT_EINVALID, "invalid tag name \"%s\"", tag);
	LT_TRY(lt_dataset_open(store, prefix, &spec, &ds, err));
	json = lt_asprintf("{\"branch\":null,\"version\":%llu,\"manifestSize\":%llu}", (unsigned long long) version,
					   (unsigned long long) ds->manifest_size);
	lt_dataset_close(ds);
	path = tag_path(prefix, tag);
	if (!json || !path)
		rc = lt_nomem(err);
	else
	{
		rc = lt_store_put_if_absent(store, path, (const uint8_t *) json, strlen(json), err);
		if (rc == LT_ECONFLICT)
			rc = lt_error_set(err, LT_ECONFLICT, "tag \"%s\" already exists", tag);
	}
	lt_free(json);
	lt_free(path);
	return rc;
}

lt_code
lt_tag_delete(lt_store *store, const char *prefix, const char *tag, lt_error *err)
{
	uint64_t	v;
	char	   *path;
	lt_code		rc;

	LT_TRY(lt_dataset_tag_version(store, prefix, tag, &v, err));
	if (!(path = tag_path(prefix, tag)))
		return lt_nomem(err);
	rc = lt_store_remove(store, path, err);
	lt_free(path);
	return rc;
}

typedef struct tag_names
{
	char	  **names;
	size_t		n,
				cap;
	bool		oom;
} tag_names;

static int
collect_tag(const lt_dirent *ent, void *arg)
{
	tag_names  *t = arg;
	size_t		len = strlen(ent->name);

	if (ent->is_dir || ent->special || len <= 5 || strcmp(ent->name + len - 5, ".json") != 0)
		return 0;
	if (t->n == t->cap)
	{
		size_t		nc = t->cap ? t->cap * 2 : 16;
		char	  **nn = lt_realloc(t->names, nc * sizeof(char *));

		if (!nn)
		{
			t->oom = true;
			return 1;
		}
		t->names = nn;
		t->cap = nc;
	}
	if (!(t->names[t->n] = lt_strndup(ent->name, len - 5)))
	{
		t->oom = true;
		return 1;
	}
	t->n++;
	return 0;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

lt_code
lt_tags(lt_store *store, const char *prefix, char ***names, uint64_t **versions, size_t *n, lt_error *err)
{
	tag_names	t = {0};
	char	   *dir = prefixed(prefix, "_refs/tags");
	lt_code		rc;

	*names = NULL;
	*versions = NULL;
	*n = 0;
	if (!dir)
		return lt_nomem(err);
	rc = lt_store_list(store, dir, collect_tag, &t, err);
	lt_free(dir);
	if (rc == LT_ENOTFOUND)
		rc = LT_OK;
	if (rc == LT_OK && t.oom)
		rc = lt_nomem(err);
	if (rc == LT_OK && t.n)
	{
		qsort(t.names, t.n, sizeof(char *), cmp_names);
		if (!(*versions = lt_calloc(t.n, sizeof(uint64_t))))
			rc = lt_nomem(err);
		for (size_t i = 0; rc == LT_OK && i < t.n; i++)
			rc = lt_dataset_tag_version(store, prefix, t.names[i], &(*versions)[i], err);
	}
	if (rc != LT_OK)
	{
		lt_tags_free(t.names, *versions, t.n);
		*versions = NULL;
		return rc;
	}
	*names = t.names;
	*n = t.n;
	return LT_OK;
}

void
lt_tags_free(char **names, uint64_t *versions, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		lt_free(names[i]);
	lt_free(names);
	lt_free(versions);
}

/*
 * The "branch" member of a tag file: false when it is not a string or null the way Lance writes them; *out is
 * the name (lt_malloc'd) or NULL for null or an absent member (main).
 */
static bool
json_branch_member(const char *text, char **out)
{
	const char *p = strstr(text, "\"branch\"");
	const char *end;

	*out = NULL;
	if (!p)
		return true;
	p += strlen("\"branch\"");
	while (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (strncmp(p, "null", 4) == 0)
		return true;
	if (*p != '"')
		return false;
	end = strchr(++p, '"');
	/* names with escapes are not names lt_fdw accepts (lt_branch_name_valid) */
	if (!end || memchr(p, '\\', (size_t) (end - p)))
		return false;
	*out = lt_strndup(p, (size_t) (end - p));
	return *out != NULL;
}

lt_code
lt_dataset_tag_version(lt_store *store, const char *prefix, const char *tag, uint64_t *version, lt_error *err)
{
	char	   *branch = NULL;
	lt_code		rc = lt_dataset_tag_ref(store, prefix, tag, version, &branch, err);

	if (rc == LT_OK && branch)
		rc = lt_error_set(err, LT_EUNSUPPORTED, "tag \"%s\" names version %llu of branch \"%s\", not of main",
						  tag, (unsigned long long) *version, branch);
	lt_free(branch);
	return rc;
}

bool
lt_branch_name_valid(const char *branch)
{
	const char *seg = branch;

	if (!branch[0] || strlen(branch) > 255)
		return false;
	for (const char *p = branch;; p++)
	{
		if (*p == '/' || *p == '\0')
		{
			size_t		n = (size_t) (p - seg);

			if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
				return false;
			if (*p == '\0')
				return true;
			seg = p + 1;
		}
		else if (*p == '\\' || (unsigned char) *p < 0x20)
			return false;
	}
}

lt_code
lt_dataset_branch_prefix(lt_store *store, const char *prefix, const char *branch, char **out, lt_error *err)
{
	char	   *rel;
	char	   *path;
	lt_stat		st;
	lt_code		rc;

	*out = NULL;
	if (!lt_branch_name_valid(branch))
		return lt_error_set(err, LT_EINVALID, "invalid branch name \"%s\"", branch);
	rel = lt_asprintf("_refs/branches/%s.json", branch);
	path = rel ? prefixed(prefix, rel) : NULL;
	lt_free(rel);
	if (!path)
		return lt_nomem(err);
	rc = lt_store_stat(store, path, &st, err);
	lt_free(path);
	if (rc == LT_OK && (st.is_dir || st.special))
		rc = LT_ENOTFOUND;		/* "a" when only branches "a/..." exist */
	if (rc == LT_ENOTFOUND)
	{
		char		name[1024];

		dataset_name(store, prefix, name, sizeof(name));
		return lt_error_set(err, LT_ENOTFOUND, "branch \"%s\" does not exist in %s", branch, name);
	}
	LT_TRY(rc);
	rel = lt_asprintf("tree/%s/", branch);
	*out = rel ? prefixed(prefix, rel) : NULL;
	lt_free(rel);
	return *out ? LT_OK : lt_nomem(err);
}

lt_code
lt_dataset_tag_ref(lt_store *store, const char *prefix, const char *tag, uint64_t *version, char **branch,
				   lt_error *err)
{
	char	   *rel;
	char	   *path;
	uint8_t    *buf;
	uint64_t	len;
	lt_code		rc;
	char	   *text;

	*branch = NULL;
	if (!valid_tag_name(tag))
		return lt_error_set(err, LT_EINVALID, "invalid tag name \"%s\"", tag);
	rel = lt_asprintf("_refs/tags/%s.json", tag);
	path = rel ? prefixed(prefix, rel) : NULL;
	lt_free(rel);
	if (!path)
		return lt_nomem(err);
	rc = lt_store_read_all(store, path, 1 << 20, &buf, &len, err);
	if (rc == LT_ENOTFOUND)
	{
		char		name[1024];

		dataset_name(store, prefix, name, sizeof(name));
		rc = lt_error_set(err, LT_ENOTFOUND, "tag \"%s\" does not exist in %s", tag, name);
	}
	if (rc != LT_OK)
	{
		lt_free(path);
		return rc;
	}
	text = lt_strndup((const char *) buf, len);
	lt_free(buf);
	if (!text)
	{
		lt_free(path);
		return lt_nomem(err);
	}
	/* {"branch":null,"version":6,"manifestSize":1234}: the "version" and "branch" members */
	*branch = NULL;
	rc = json_version_member(text, version) ? LT_OK : lt_corrupt(err, "%s: no version number in the tag file", path);
	if (rc == LT_OK && !json_branch_member(text, branch))
		rc = lt_corrupt(err, "%s: the tag's branch is not a name lt_fdw reads", path);
	if (rc == LT_OK && *branch && !lt_branch_name_valid(*branch))
	{
		rc = lt_corrupt(err, "%s: invalid branch name \"%s\"", path, *branch);
		lt_free(*branch);
		*branch = NULL;
	}
	lt_free(text);
	lt_free(path);
	return rc;
}

/* Read the length-prefixed protobuf section at pos; returns its bytes. */
static lt_code
section_at(const uint8_t *buf, uint64_t limit, uint64_t pos, const char *path, const char *what,
		   const uint8_t **data, uint64_t *len, lt_error *err)
{
	uint64_t	end;

	if (pos > limit || limit - pos < 4)
		return lt_corrupt(err, "%s: %s at offset %llu lies outside the file", path, what,
						  (unsigned long long) pos);
	*len = lt_le32(buf + pos);
	if (!lt_add_ok(pos + 4, *len, &end) || end > limit)
		return lt_corrupt(err, "%s: %s at offset %llu claims %llu bytes, past the end", path, what,
						  (unsigned long long) pos, (unsigned long long) *len);
	*data = buf + pos + 4;
	return LT_OK;
}

lt_code
lt_manifest_parse(const uint8_t *buf, uint64_t len, const char *path, Lt__Pb__Manifest **manifest,
				  Lt__Pb__IndexSection **indexes, Lt__Pb__Transaction **txn, lt_error *err)
{
	uint64_t	pos;
	uint64_t	limit;
	const uint8_t *data;
	uint64_t	dlen;
	Lt__Pb__Manifest *m;

	*manifest = NULL;
	if (indexes)
		*indexes = NULL;
	if (txn)
		*txn = NULL;
	if (len < 16 || memcmp(buf + len - 4, "LANC", 4) != 0)
		return lt_corrupt(err, "%s: not a Lance manifest (no magic at the end)", path);
	/*
	 * The footer's version (u16 major, u16 minor before the magic) is 0.2 since lance 1.0 and 0.1 before, with
	 * the same framing: both are read (Lance checks only the magic; a version no Lance wrote is refused here).
	 */
	if (lt_le16(buf + len - 8) != 0 || (lt_le16(buf + len - 6) != 2 && lt_le16(buf + len - 6) != 1))
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: unsupported manifest version %u.%u", path,
							lt_le16(buf + len - 8), lt_le16(buf + len - 6));
	limit = len - 16;
	pos = lt_le64(buf + limit);
	LT_TRY(section_at(buf, limit, pos, path, "manifest", &data, &dlen, err));
	if (pos + 4 + dlen != limit)
		return lt_corrupt(err, "%s: manifest at offset %llu is %llu bytes, but %llu bytes precede the footer",
						  path, (unsigned long long) pos, (unsigned long long) dlen,
						  (unsigned long long) (limit - pos - 4));
	m = lt__pb__manifest__unpack(lt_protobuf_allocator(), dlen, data);
	if (!m)
		return lt_corrupt(err, "%s: the manifest protobuf does not parse", path);
	if (indexes && m->has_index_section)
	{
		lt_code		rc = section_at(buf, pos, m->index_section, path, "index section", &data, &dlen, err);

		if (rc == LT_OK && !(*indexes = lt__pb__index_section__unpack(lt_protobuf_allocator(), dlen, data)))
			rc = lt_corrupt(err, "%s: the index section does not parse", path);
		if (rc != LT_OK)
		{
			lt__pb__manifest__free_unpacked(m, lt_protobuf_allocator());
			return rc;
		}
	}
	if (txn && m->has_transaction_section)
	{
		/* the inline transaction is informative; a broken one is not fatal to reads */
		if (section_at(buf, pos, m->transaction_section, path, "transaction", &data, &dlen, NULL) == LT_OK)
			*txn = lt__pb__transaction__unpack(lt_protobuf_allocator(), dlen, data);
	}
	*manifest = m;
	return LT_OK;
}

bool
lt_dataset_manifest_prev(const lt_dataset *ds, lt_manifest_prev *out)
{
	if (!ds->manifest_msg)
		return false;
	out->msg = ds->manifest_msg;
	out->len = ds->manifest_msg_len;
	out->fragments = ds->manifest->fragments;
	out->n_fragments = ds->manifest->n_fragments;
	out->starts = ds->frag_starts;
	out->lens = ds->frag_lens;
	out->contiguous = ds->frag_starts && ds->frags_contiguous;
	return true;
}

uint64_t
lt_fragment_live_rows(const Lt__Pb__DataFragment *frag)
{
	uint64_t	deleted = frag->deletion_file ? frag->deletion_file->num_deleted_rows : 0;

	return frag->physical_rows > deleted ? frag->physical_rows - deleted : 0;
}

size_t
lt_dataset_fragment_index(const lt_dataset *ds, uint64_t id)
{
	size_t		lo = 0, hi = ds->n_fragments;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (ds->fragments[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ds->n_fragments && ds->fragments[lo]->id == id ? lo : ds->n_fragments;
}

const Lt__Pb__DataFragment *
lt_dataset_fragment(const lt_dataset *ds, uint64_t id)
{
	size_t		i = lt_dataset_fragment_index(ds, id);

	return i < ds->n_fragments ? ds->fragments[i] : NULL;
}

uint64_t
lt_dataset_count_rows(const lt_dataset *ds)
{
	uint64_t	n = 0;
	size_t		i;

	for (i = 0; i < ds->n_fragments; i++)
		n += lt_fragment_live_rows(ds->fragments[i]);
	return n;
}

/* The storage version when the manifest does not say: look at the first data file. */
static const char *
infer_storage_version(const Lt__Pb__Manifest *m)
{
	size_t		i;

	for (i = 0; i < m->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = m->fragments[i];

		if (f->n_files > 0)
		{
			const Lt__Pb__DataFile *d = f->files[0];

			if (d->file_major_version == 2 && d->file_minor_version == 1)
				return "2.1";
			if (d->file_major_version == 2 && d->file_minor_version == 2)
				return "2.2";
			if (d->file_major_version == 2)
				return "2.0";
			return "0.1";
		}
	}
	return "2.0";
}

/* The base path of that id, when the manifest declares it and resolve_bases placed it. */
static const lt_base_dir *
find_base(const lt_dataset *ds, uint32_t id)
{
	for (size_t i = 0; i < ds->n_bases; i++)
		if (ds->bases[i].id == id)
			return &ds->bases[i];
	return NULL;
}

/*
 * A branch's manifest names its parent's files through base paths: each one the root of a dataset, recorded
 * as the absolute path or URI through which the writer opened it (which may be gone, or another machine's).
 * lt_fdw trusts none of them: a base path resolves to the dataset the branch belongs to, or, when its path
 * ends in "/tree/<name>" and the dataset has a branch of that name, to that branch (a branch forked from a
 * branch).  A dataset that is not a
 * branch (a shallow clone) or a base path that is not a dataset root stays unreadable.
 */
static lt_code
resolve_bases(lt_dataset *ds, lt_error *err)
{
	const Lt__Pb__Manifest *m = ds->manifest;

	if (!ds->root_prefix || m->n_base_paths == 0)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"%s: version %llu uses base paths (shallow clones), which lt_fdw cannot read",
							ds->manifest_path, (unsigned long long) ds->version);
	if (!(ds->bases = lt_calloc(m->n_base_paths, sizeof(lt_base_dir))))
		return lt_nomem(err);
	for (size_t i = 0; i < m->n_base_paths; i++)
	{
		const Lt__Pb__BasePath *b = m->base_paths[i];
		const char *tree = b->path ? strstr(b->path, "/tree/") : NULL;
		char	   *rel;

		if (!b->is_dataset_root || !b->path)
			return lt_error_set(err, LT_EUNSUPPORTED,
								"%s: base path %u is not the root of a dataset, which lt_fdw cannot read",
								ds->manifest_path, b->id);
		/* the last "/tree/" names a branch when the dataset has one of that name; else it is the root's path */
		for (const char *t = tree; t; t = strstr(t + 1, "/tree/"))
			tree = t;
		rel = NULL;
		if (tree && lt_branch_name_valid(tree + strlen("/tree/")))
		{
			lt_code		rc = lt_dataset_branch_prefix(ds->store, ds->root_prefix, tree + strlen("/tree/"), &rel, err);

			if (rc != LT_OK && rc != LT_ENOTFOUND)
				return rc;
		}
		if (!rel && !(rel = lt_strdup(ds->root_prefix)))
			return lt_nomem(err);
		ds->bases[ds->n_bases].id = b->id;
		ds->bases[ds->n_bases++].prefix = rel;
	}
	return LT_OK;
}

char *
lt_dataset_file_path(const lt_dataset *ds, bool has_base, uint32_t base_id, const char *rel)
{
	const lt_base_dir *b;

	if (!has_base)
		return prefixed(ds->prefix, rel);
	b = find_base(ds, base_id);
	return b ? prefixed(b->prefix, rel) : NULL;
}

/* The manifest's checks; fragments before from were checked when they were read, as were those checked[i - from]. */
static lt_code
validate(lt_dataset *ds, size_t from, const bool *checked, lt_error *err)
{
	Lt__Pb__Manifest *m = ds->manifest;
	uint64_t	rflags = m->reader_feature_flags;
	size_t		i;

	if (rflags & LT_FLAG_BASE_PATHS)
		LT_TRY(resolve_bases(ds, err));
	if (rflags & ~(uint64_t) (KNOWN_READER_FLAGS | LT_FLAG_BASE_PATHS))
		return lt_error_set(err, LT_EUNSUPPORTED,
							"%s: version %llu needs reader features 0x%llx unknown to lt_fdw", ds->manifest_path,
							(unsigned long long) ds->version,
							(unsigned long long) (rflags & ~(uint64_t) (KNOWN_READER_FLAGS | LT_FLAG_BASE_PATHS)));
	ds->stable_row_ids = (rflags & LT_FLAG_STABLE_ROW_IDS) != 0;
	for (i = from; i < m->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = m->fragments[i];

		if (f->id > UINT32_MAX)
			return lt_corrupt(err, "%s: fragment id %llu does not fit 32 bits", ds->manifest_path,
							  (unsigned long long) f->id);
		if (i > 0 && f->id <= m->fragments[i - 1]->id)
			return lt_corrupt(err, "%s: fragment ids are not ascending (%llu after %llu)", ds->manifest_path,
							  (unsigned long long) f->id, (unsigned long long) m->fragments[i - 1]->id);
		if (checked && checked[i - from])
			continue;			/* checked when it was parsed (lt_dataset_advance) */
		if (f->physical_rows > UINT32_MAX)
			return lt_corrupt(err, "%s: fragment %llu has %llu rows", ds->manifest_path,
							  (unsigned long long) f->id, (unsigned long long) f->physical_rows);
		for (size_t j = 0; j < f->n_files; j++)
		{
			const Lt__Pb__DataFile *d = f->files[j];

			if (!d->path || !d->path[0] || strstr(d->path, "..") || d->path[0] == '/')
				return lt_corrupt(err, "%s: fragment %llu names an invalid data file path", ds->manifest_path,
								  (unsigned long long) f->id);
			if (d->n_column_indices && d->n_column_indices != d->n_fields)
				return lt_corrupt(err, "%s: data file %s lists %zu fields but %zu column indices",
								  ds->manifest_path, d->path, d->n_fields, d->n_column_indices);
			if (d->has_base_id && !find_base(ds, d->base_id))
				return lt_error_set(err, LT_EUNSUPPORTED, "%s: data file %s lives under another base path",
									ds->manifest_path, d->path);
		}
		if (f->deletion_file && f->deletion_file->has_base_id && !find_base(ds, f->deletion_file->base_id))
			return lt_error_set(err, LT_EUNSUPPORTED, "%s: the deletion file of fragment %llu lives under another base path",
								ds->manifest_path, (unsigned long long) f->id);
		if (f->deletion_file && f->deletion_file->num_deleted_rows > f->physical_rows)
			return lt_corrupt(err, "%s: fragment %llu deletes %llu of %llu rows", ds->manifest_path,
							  (unsigned long long) f->id, (unsigned long long) f->deletion_file->num_deleted_rows,
							  (unsigned long long) f->physical_rows);
	}
	return LT_OK;
}

/*
 * Row counts Lance does not trust, taken from the files as Lance takes them: a deletion file without
 * num_deleted_rows (counted from the file), a fragment without physical_rows (lance before 0.8 did not record it), and every fragment of a manifest without a writer
 * (lance before 0.8.x, whose migration could record the live instead of the physical row count: the Lance
 * repository's v0.8.0/migrated_from_v0.7.5).  The count is the first data file's.
 */
/* A deletion file without num_deleted_rows (lance < 0.8): its rows counted from the file. */
static lt_code
recount_deleted(lt_dataset *ds, Lt__Pb__DataFragment *f, lt_error *err)
{
	const Lt__Pb__DeletionFile *d = f->deletion_file;
	lt_deletion_type type = d->file_type == LT__PB__DELETION_FILE__FILE_TYPE__BITMAP ? LT_DELETION_BITMAP
		: LT_DELETION_ARROW;
	char	   *rel = lt_deletion_path(f->id, d->read_version, d->id, type);
	char	   *path = rel ? lt_dataset_file_path(ds, d->has_base_id, d->base_id, rel) : NULL;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	lt_deletion_vector *dv = NULL;
	lt_code		rc;

	lt_free(rel);
	if (!path)
		return lt_nomem(err);
	rc = lt_store_read_all(ds->store, path, LT_DELETION_MAX_FILE, &buf, &len, err);
	if (rc == LT_OK)
		rc = lt_deletion_parse(buf, (size_t) len, type, 0, 0, path, &dv, err);
	if (rc == LT_OK)
	{
		f->deletion_file->num_deleted_rows = dv->count;
		ds->manifest_msg = NULL;	/* the bytes no longer say what the fragment does */
	}
	lt_deletion_free(dv);
	lt_free(buf);
	lt_free(path);
	return rc;
}

/* from: the fragments before it were counted when they were read (ignored when the counts are not trusted) */
static lt_code
recount_rows(lt_dataset *ds, size_t from, lt_error *err)
{
	const Lt__Pb__Manifest *m = ds->manifest;
	bool		trusted = m->writer_version != NULL;

	for (size_t i = trusted ? from : 0; i < m->n_fragments; i++)
	{
		Lt__Pb__DataFragment *f = m->fragments[i];
		char	   *rel,
				   *path;
		lt_file    *file = NULL;
		lt_code		rc;

		if (f->deletion_file && f->deletion_file->num_deleted_rows == 0 && f->n_files > 0)
			LT_TRY(recount_deleted(ds, f, err));
		if ((trusted && f->physical_rows > 0) || f->n_files == 0)
			continue;
		rel = lt_asprintf("data/%s", f->files[0]->path);
		path = rel ? lt_dataset_file_path(ds, f->files[0]->has_base_id, f->files[0]->base_id, rel) : NULL;
		lt_free(rel);
		if (!path)
			return lt_nomem(err);
		rc = lt_file_open(ds->store, path, &file, err);
		lt_free(path);
		LT_TRY(rc);
		f->physical_rows = file->num_rows;
		ds->manifest_msg = NULL;
		lt_file_close(file);
		if (f->physical_rows > UINT32_MAX)
			return lt_corrupt(err, "%s: fragment %llu has %llu rows", ds->manifest_path,
							  (unsigned long long) f->id, (unsigned long long) f->physical_rows);
		if (f->deletion_file && f->deletion_file->num_deleted_rows > f->physical_rows)
			return lt_corrupt(err, "%s: fragment %llu deletes %llu of %llu rows", ds->manifest_path,
							  (unsigned long long) f->id, (unsigned long long) f->deletion_file->num_deleted_rows,
							  (unsigned long long) f->physical_rows);
	}
	return LT_OK;
}

lt_code
lt_dataset_open(lt_store *store, const char *prefix, const lt_version_spec *spec, lt_dataset **out,
				lt_error *err)
{
	lt_dataset *ds;
	uint64_t	version = spec ? spec->version : 0;
	lt_naming	naming = LT_NAMING_V2;
	char		name[64];
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	lt_code		rc;
	size_t		plen = strlen(prefix);
	char	   *branch = NULL;

	*out = NULL;
	if (spec && spec->tag)
	{
		LT_TRY(lt_dataset_tag_ref(store, prefix, spec->tag, &version, &branch, err));
		/* a tag names a version of one line (as Lance, that line without a branch asked for) */
		if (spec->branch && (!branch || strcmp(branch, spec->branch) != 0))
		{
			rc = lt_error_set(err, LT_ENOTFOUND, "tag \"%s\" names version %llu of %s%s%s, not of %s%s%s",
							  spec->tag, (unsigned long long) version, branch ? "branch \"" : "main",
							  branch ? branch : "", branch ? "\"" : "", spec->branch ? "branch \"" : "main",
							  spec->branch ? spec->branch : "", spec->branch ? "\"" : "");
			lt_free(branch);
			return rc;
		}
	}
	else if (spec && spec->branch && !(branch = lt_strdup(spec->branch)))
		return lt_nomem(err);

	ds = lt_calloc(1, sizeof(lt_dataset));
	if (!ds)
	{
		lt_free(branch);
		return lt_nomem(err);
	}
	ds->store = store;
	ds->branch = branch;
	ds->prefix = (plen == 0 || prefix[plen - 1] == '/') ? lt_strdup(prefix) : lt_asprintf("%s/", prefix);
	if (!ds->prefix)
	{
		lt_dataset_close(ds);
		return lt_nomem(err);
	}
	if (branch)
	{
		/* a branch: its own _versions/ under tree/<branch>/; its parent's files through base paths */
		ds->root_prefix = ds->prefix;
		ds->prefix = NULL;
		if ((rc = lt_dataset_branch_prefix(store, ds->root_prefix, branch, &ds->prefix, err)) != LT_OK)
		{
			lt_dataset_close(ds);
			return rc;
		}
	}
	if (version == 0)
		rc = lt_dataset_latest_version(store, ds->prefix, &version, &naming, err);
	else
	{
		/* try V2 naming first, then V1 */
		lt_naming	tries[2] = {LT_NAMING_V2, LT_NAMING_V1};

		rc = LT_ENOTFOUND;
		for (int i = 0; i < 2 && rc == LT_ENOTFOUND; i++)
		{
			char	   *path;

			naming = tries[i];
			lt_manifest_name(version, naming, name, sizeof(name));
			path = lt_asprintf("%s_versions/%s", ds->prefix, name);
			if (!path)
			{
				rc = lt_nomem(err);
				break;
			}
			rc = lt_store_read_all(store, path, MAX_MANIFEST_BYTES, &buf, &len, err);
			if (rc == LT_OK)
				ds->manifest_path = path;
			else
				lt_free(path);
		}
		if (rc == LT_ENOTFOUND)
		{
			char		name[1024];

			dataset_name(store, ds->prefix, name, sizeof(name));
			rc = lt_error_set(err, LT_ENOTFOUND, "version %llu of dataset %s does not exist",
							  (unsigned long long) version, name);
		}
	}
	if (rc == LT_OK && !buf)
	{
		lt_manifest_name(version, naming, name, sizeof(name));
		ds->manifest_path = lt_asprintf("%s_versions/%s", ds->prefix, name);
		rc = ds->manifest_path ? lt_store_read_all(store, ds->manifest_path, MAX_MANIFEST_BYTES, &buf, &len, err)
			: lt_nomem(err);
	}
	ds->version = version;
	ds->naming = naming;
	ds->manifest_size = len;
	if (rc == LT_OK)
		rc = lt_manifest_parse(buf, len, ds->manifest_path, &ds->manifest, &ds->index_section,
							   &ds->transaction, err);
	if (rc == LT_OK)
	{
		/* kept: a commit on this version copies the fragments it keeps from these bytes (lt_manifest_write.c) */
		uint64_t	pos = lt_le64(buf + len - 16);

		ds->manifest_file = buf;
		ds->manifest_msg = buf + pos + 4;
		ds->manifest_msg_len = lt_le32(buf + pos);
	}
	else
		lt_free(buf);
	if (rc == LT_OK && ds->manifest->has_version && ds->manifest->version != version)
		rc = lt_corrupt(err, "%s: the manifest says version %llu", ds->manifest_path,
						(unsigned long long) ds->manifest->version);
	if (rc == LT_OK)
		rc = validate(ds, 0, NULL, err);
	if (rc == LT_OK)
		rc = recount_rows(ds, 0, err);
	if (rc == LT_OK)
	{
		rc = lt_schema_from_pb(ds->manifest->fields, ds->manifest->n_fields, &ds->schema, err);
		if (rc != LT_OK)
			lt_error_prefix(err, "%s: schema", ds->manifest_path);
	}
	if (rc != LT_OK)
	{
		lt_dataset_close(ds);
		return rc;
	}
	ds->n_fragments = ds->manifest->n_fragments;
	ds->fragments = ds->manifest->fragments;
	ds->frag_cap = ds->n_fragments;
	ds->live_rows = lt_dataset_count_rows(ds);
	if (ds->manifest->data_format && ds->manifest->data_format->version && ds->manifest->data_format->version[0])
		ds->storage_version = ds->manifest->data_format->version;
	else
		ds->storage_version = infer_storage_version(ds->manifest);
	*out = ds;
	return LT_OK;
}

/* The payload of a length-delimited field encoded at e (tag included, elen bytes): false when it is not one. */
static bool
entry_payload(const uint8_t *e, uint64_t elen, const uint8_t **payload, uint64_t *plen)
{
	uint64_t	pos = 0;

	for (int field = 0; field < 2; field++)
	{
		uint64_t	v = 0;
		int			shift = 0;

		for (;;)
		{
			if (pos >= elen || shift > 63)
				return false;
			v |= (uint64_t) (e[pos] & 0x7f) << shift;
			shift += 7;
			if (!(e[pos++] & 0x80))
				break;
		}
		if (field == 1 && v != elen - pos)
			return false;
	}
	*payload = e + pos;
	*plen = elen - pos;
	return true;
}

/* How many of the old fragments from..n (encoded back to back from starts[from]) end at or before limit. */
static size_t
fragments_within(const uint64_t *starts, const uint64_t *lens, size_t from, size_t n, uint64_t limit)
{
	size_t		lo = from,
				hi = n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (starts[mid] + lens[mid] <= limit)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - from;
}

/* A fragment entry of the new manifest after the prefix it shares with the held one. */
typedef struct advance_entry
{
	uint64_t	start;			/* where it is encoded (tag included) */
	uint64_t	len;
	Lt__Pb__DataFragment *frag;
	int64_t		from;			/* the held manifest's slot it moved over from, or -1: parsed */
} advance_entry;

/* What walking the new manifest message found. */
typedef struct advance_walk
{
	size_t		k;				/* the held manifest's first k fragments lie at the same place in the new bytes */
	advance_entry *tail;		/* the new manifest's fragments after those */
	size_t		n_tail;
	size_t		cap;
	uint8_t    *rest;			/* the new manifest's other fields, for parsing */
	uint64_t	rest_len;
} advance_walk;

static bool
walk_push(advance_walk *w, uint64_t start, uint64_t len, Lt__Pb__DataFragment *frag, int64_t from)
{
	if (w->n_tail == w->cap)
	{
		size_t		cap = w->cap ? w->cap * 2 : 16;
		advance_entry *t = lt_realloc(w->tail, cap * sizeof(advance_entry));

		if (!t)
			return false;
		w->tail = t;
		w->cap = cap;
	}
	w->tail[w->n_tail].start = start;
	w->tail[w->n_tail].len = len;
	w->tail[w->n_tail].frag = frag;
	w->tail[w->n_tail++].from = from;
	return true;
}

/*
 * Walk the new manifest message (data) against the held one (ds, whose fragment entries lie at frag_starts):
 * the bytes both begin with are compared at once, and so is each run of held fragments that follows a changed
 * or added one (found again at a shifted place); only the fields between are stepped over one by one, and a
 * fragment among them is parsed unless it is encoded exactly as the held one of its place.  The bulk
 * comparisons need the held fragment entries back to back (ds->frags_contiguous); a fragment moves over only
 * on exact byte equality either way.
 */
static lt_code
walk_new_manifest(lt_dataset *ds, const uint8_t *data, uint64_t dlen, const char *path, advance_walk *w,
				  lt_error *err)
{
	const Lt__Pb__Manifest *om = ds->manifest;
	const uint8_t *old = ds->manifest_msg;
	const uint64_t *os = ds->frag_starts,
			   *ol = ds->frag_lens;
	size_t		on = om->n_fragments,
				j = 0;
	bool		bulk = ds->frags_contiguous && on > 0;
	uint64_t	q = 0,
				oend = on ? os[on - 1] + ol[on - 1] : 0;

	if (!(w->rest = lt_malloc(dlen + 1)))
		return lt_nomem(err);
	if (bulk)
	{
		uint64_t	shared = lt_common_prefix(data, old, dlen < ds->manifest_msg_len ? dlen : ds->manifest_msg_len);

		if (shared >= os[0])
		{
			/* the fields before the first fragment, and every held fragment wholly inside the shared bytes */
			w->k = j = fragments_within(os, ol, 0, on, shared);
			memcpy(w->rest, data, os[0]);
			w->rest_len = os[0];
			q = j ? os[j - 1] + ol[j - 1] : os[0];
		}
	}
	while (q < dlen)
	{
		uint64_t	start = q,
					number,
					plen;
		int			wire;
		const uint8_t *payload;
		Lt__Pb__DataFragment *f;

		if (bulk && j < on)
		{
			/* the held fragments from j on, found again here (shifted by what changed before them) */
			uint64_t	span = oend - os[j];
			uint64_t	same = lt_common_prefix(data + q, old + os[j], span < dlen - q ? span : dlen - q);
			size_t		run = fragments_within(os, ol, j, on, os[j] + same);

			if (run > 0)
			{
				uint64_t	base = os[j];

				for (size_t t = 0; t < run; t++, j++)
					if (!walk_push(w, q + os[j] - base, ol[j], om->fragments[j], (int64_t) j))
						return lt_nomem(err);
				q += os[j - 1] + ol[j - 1] - base;
				continue;
			}
		}
		if (!lt_manifest_next_field(data, dlen, &q, &number, &wire))
			return lt_corrupt(err, "%s: the manifest's fields do not parse at offset %llu", path,
							  (unsigned long long) start);
		if (number != LT_MANIFEST_FIELD_FRAGMENTS || wire != 2)
		{
			memcpy(w->rest + w->rest_len, data + start, q - start);
			w->rest_len += q - start;
			continue;
		}
		if (j < on && ol[j] == q - start && memcmp(old + os[j], data + start, ol[j]) == 0)
		{
			if (!walk_push(w, start, q - start, om->fragments[j], (int64_t) j))
				return lt_nomem(err);
			j++;
			continue;
		}
		/* added or changed since: its own bytes parsed */
		if (!entry_payload(data + start, q - start, &payload, &plen) ||
			!(f = lt__pb__data_fragment__unpack(lt_protobuf_allocator(), plen, payload)))
			return lt_corrupt(err, "%s: fragment %zu does not parse", path, w->k + w->n_tail);
		if (!walk_push(w, start, q - start, f, -1))
		{
			lt__pb__data_fragment__free_unpacked(f, lt_protobuf_allocator());
			return lt_nomem(err);
		}
		while (j < on && om->fragments[j]->id < f->id)
			j++;				/* gone */
		if (j < on && om->fragments[j]->id == f->id)
			j++;				/* changed */
	}
	return LT_OK;
}

/* Where the held manifest's fragment entries are encoded (once: an advanced dataset keeps them). */
static lt_code
find_held_fragments(lt_dataset *ds, lt_error *err)
{
	uint64_t   *os,
			   *ol;
	size_t		on;
	uint8_t    *orest;
	uint64_t	orest_len;

	LT_TRY(lt_manifest_split(ds->manifest_msg, ds->manifest_msg_len, ds->manifest->n_fragments, &os, &ol, &on,
							 &orest, &orest_len, err));
	lt_free(orest);
	if (on != ds->manifest->n_fragments)
	{
		lt_free(os);
		lt_free(ol);
		return lt_error_set(err, LT_EINVALID, "%s: the kept bytes do not match the manifest", ds->manifest_path);
	}
	ds->frag_starts = os;
	ds->frag_lens = ol;
	ds->pos_cap = on;
	ds->frags_contiguous = true;
	for (size_t i = 1; i < on; i++)
		if (os[i] != os[i - 1] + ol[i - 1])
			ds->frags_contiguous = false;
	return LT_OK;
}

/* Room for nn fragments' row positions (frag_starts, frag_lens), doubled when grown. */
static lt_code
positions_reserve(lt_dataset *ds, size_t nn, lt_error *err)
{
	uint64_t   *s2,
			   *l2;

	if (nn <= ds->pos_cap)
		return LT_OK;
	if ((s2 = lt_realloc(ds->frag_starts, 2 * nn * sizeof(uint64_t))) == NULL)
		return lt_nomem(err);
	ds->frag_starts = s2;
	if ((l2 = lt_realloc(ds->frag_lens, 2 * nn * sizeof(uint64_t))) == NULL)
		return lt_nomem(err);
	ds->frag_lens = l2;
	ds->pos_cap = 2 * nn;
	return LT_OK;
}

lt_code
lt_dataset_advance(lt_dataset *ds, uint64_t version, lt_error *err)
{
	ProtobufCAllocator *pa = lt_protobuf_allocator();
	Lt__Pb__Manifest *om = ds->manifest,
			   *nm = NULL;
	Lt__Pb__IndexSection *isec = NULL;
	Lt__Pb__Transaction *tx = NULL;
	Lt__Pb__DataFragment **grown = NULL;
	advance_walk w = {0};
	bool	   *taken = NULL,
			   *kept = NULL;
	lt_schema  *schema = NULL;
	char		name[64];
	char	   *path;
	uint8_t    *buf = NULL;
	uint64_t	len = 0,
				limit = 0,
				pos = 0,
				dlen = 0,
				gone_rows = 0;
	const uint8_t *data = NULL;
	size_t		on = om->n_fragments,
				nn = 0,
				cap;
	bool		contiguous;
	lt_code		rc;

	if (!ds->manifest_msg || ds->root_prefix || ds->dv_overrides || version <= ds->version)
		return lt_error_set(err, LT_EINVALID, "%s: version %llu cannot be read on top of this one",
							ds->manifest_path, (unsigned long long) version);
	lt_manifest_name(version, ds->naming, name, sizeof(name));
	if (!(path = lt_asprintf("%s_versions/%s", ds->prefix, name)))
		return lt_nomem(err);
	rc = lt_store_read_all(ds->store, path, MAX_MANIFEST_BYTES, &buf, &len, err);
	/* the framing, as lt_manifest_parse checks it */
	if (rc == LT_OK && (len < 16 || memcmp(buf + len - 4, "LANC", 4) != 0 || lt_le16(buf + len - 8) != 0 ||
						(lt_le16(buf + len - 6) != 2 && lt_le16(buf + len - 6) != 1)))
		rc = lt_corrupt(err, "%s: not a Lance manifest lt_fdw reads", path);
	if (rc == LT_OK)
	{
		limit = len - 16;
		pos = lt_le64(buf + limit);
		rc = section_at(buf, limit, pos, path, "manifest", &data, &dlen, err);
		if (rc == LT_OK && pos + 4 + dlen != limit)
			rc = lt_corrupt(err, "%s: manifest at offset %llu does not end at the footer", path,
							(unsigned long long) pos);
	}
	if (rc == LT_OK && !ds->frag_starts)
		rc = find_held_fragments(ds, err);
	if (rc == LT_OK)
		rc = walk_new_manifest(ds, data, dlen, path, &w, err);
	nn = w.k + w.n_tail;
	/* everything but the fragments: the schema, config and the rest, small */
	if (rc == LT_OK && !(nm = lt__pb__manifest__unpack(pa, w.rest_len, w.rest)))
		rc = lt_corrupt(err, "%s: the manifest protobuf does not parse", path);
	if (rc == LT_OK && nm->has_version && nm->version != version)
		rc = lt_corrupt(err, "%s: the manifest says version %llu", path, (unsigned long long) nm->version);
	if (rc == LT_OK && nm->has_index_section)
	{
		rc = section_at(buf, pos, nm->index_section, path, "index section", &data, &dlen, err);
		if (rc == LT_OK && !(isec = lt__pb__index_section__unpack(pa, dlen, data)))
			rc = lt_corrupt(err, "%s: the index section does not parse", path);
	}
	if (rc == LT_OK && nm->has_transaction_section &&
		section_at(buf, pos, nm->transaction_section, path, "transaction", &data, &dlen, NULL) == LT_OK)
		tx = lt__pb__transaction__unpack(pa, dlen, data);
	if (rc == LT_OK)
	{
		rc = lt_schema_from_pb(nm->fields, nm->n_fields, &schema, err);
		if (rc != LT_OK)
			lt_error_prefix(err, "%s: schema", path);
	}
	/* room for the new version's arrays, taken before anything of ds changes */
	cap = ds->frag_cap > on ? ds->frag_cap : on;
	if (rc == LT_OK && nn > cap && !(grown = pa->alloc(pa->allocator_data, 2 * nn * sizeof(*grown))))
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = positions_reserve(ds, nn, err);
	if (rc == LT_OK && (!(taken = lt_malloc(w.n_tail + 1)) || !(kept = lt_calloc(on - w.k + 1, 1))))
		rc = lt_nomem(err);
	lt_free(w.rest);
	if (rc != LT_OK)
	{
		/* the parsed fragments go away; the held ones never left: ds is as it was */
		for (size_t t = 0; t < w.n_tail; t++)
			if (w.tail[t].from < 0)
				lt__pb__data_fragment__free_unpacked(w.tail[t].frag, pa);
		lt_free(w.tail);
		lt_free(taken);
		lt_free(kept);
		if (grown)
			pa->free(pa->allocator_data, grown);
		if (nm)
			lt__pb__manifest__free_unpacked(nm, pa);
		if (isec)
			lt__pb__index_section__free_unpacked(isec, pa);
		if (tx)
			lt__pb__transaction__free_unpacked(tx, pa);
		lt_schema_free(schema);
		lt_free(buf);
		lt_free(path);
		return rc;
	}
	/* the held fragments after the shared prefix: those not carried over freed, all their rows counted out */
	for (size_t t = 0; t < w.n_tail; t++)
	{
		taken[t] = w.tail[t].from >= 0;
		if (taken[t])
			kept[w.tail[t].from - w.k] = true;
	}
	for (size_t j = w.k; j < on; j++)
	{
		gone_rows += lt_fragment_live_rows(om->fragments[j]);
		if (!kept[j - w.k])
			lt__pb__data_fragment__free_unpacked(om->fragments[j], pa);
	}
	lt_free(kept);
	/* the fragment array: the held one, its first k kept in place, unless it has no room */
	if (grown)
	{
		if (w.k)
			memcpy(grown, om->fragments, w.k * sizeof(*grown));
		ds->frag_cap = 2 * nn;
		nm->fragments = grown;	/* the held array goes with om */
	}
	else
	{
		ds->frag_cap = cap;
		nm->fragments = om->fragments;
		om->fragments = NULL;
	}
	contiguous = w.k == 0 || ds->frags_contiguous;
	for (size_t t = 0; t < w.n_tail; t++)
	{
		size_t		i = w.k + t;

		nm->fragments[i] = w.tail[t].frag;
		ds->frag_starts[i] = w.tail[t].start;
		ds->frag_lens[i] = w.tail[t].len;
		if (i > 0 && ds->frag_starts[i] != ds->frag_starts[i - 1] + ds->frag_lens[i - 1])
			contiguous = false;
	}
	lt_free(w.tail);
	nm->n_fragments = nn;
	om->n_fragments = 0;
	lt__pb__manifest__free_unpacked(om, pa);
	if (ds->index_section)
		lt__pb__index_section__free_unpacked(ds->index_section, pa);
	if (ds->transaction)
		lt__pb__transaction__free_unpacked(ds->transaction, pa);
	lt_schema_free(ds->schema);
	lt_free(ds->manifest_file);
	lt_free(ds->manifest_path);
	ds->manifest = nm;
	ds->index_section = isec;
	ds->transaction = tx;
	ds->schema = schema;
	ds->version = version;
	ds->manifest_path = path;
	ds->manifest_size = len;
	ds->manifest_file = buf;
	ds->manifest_msg = buf + pos + 4;
	ds->manifest_msg_len = lt_le32(buf + pos);
	ds->msg_cap = 0;
	ds->frags_contiguous = contiguous;
	ds->n_fragments = nn;
	ds->fragments = nm->fragments;
	/* the kept prefix was checked when it was read; the rest is checked and counted now */
	rc = validate(ds, w.k, taken, err);
	lt_free(taken);
	if (rc == LT_OK)
		rc = recount_rows(ds, nm->writer_version ? w.k : 0, err);
	if (nm->writer_version)
	{
		ds->live_rows -= gone_rows;
		for (size_t i = w.k; i < nn; i++)
			ds->live_rows += lt_fragment_live_rows(ds->fragments[i]);
	}
	else
		ds->live_rows = lt_dataset_count_rows(ds);
	if (nm->data_format && nm->data_format->version && nm->data_format->version[0])
		ds->storage_version = nm->data_format->version;
	else
		ds->storage_version = infer_storage_version(nm);
	return rc;
}

/*
 * The fragments an adoption appends, each parsed from its own manifest entry, into f[0 .. *k) (their entries'
 * offsets into starts, when given); false when an entry does not parse or there are more than a->n_new.
 */
static bool
parse_new_fragments(const lt_adoption *a, Lt__Pb__DataFragment **f, uint64_t *starts, size_t *k)
{
	ProtobufCAllocator *pa = lt_protobuf_allocator();
	uint64_t	q = 0;

	*k = 0;
	while (q < a->frags_len)
	{
		uint64_t	start = q,
					number,
					plen;
		int			wire;
		const uint8_t *payload;

		if (!lt_manifest_next_field(a->bytes, a->frags_len, &q, &number, &wire) ||
			number != LT_MANIFEST_FIELD_FRAGMENTS || wire != 2 || *k == a->n_new ||
			!entry_payload(a->bytes + start, q - start, &payload, &plen) ||
			!(f[*k] = lt__pb__data_fragment__unpack(pa, plen, payload)))
			return false;
		if (starts)
			starts[*k] = start;
		(*k)++;
	}
	return true;
}

lt_code
lt_adoption_fragments(const lt_adoption *a, Lt__Pb__DataFragment ***out, size_t *n, lt_error *err)
{
	ProtobufCAllocator *pa = lt_protobuf_allocator();
	Lt__Pb__DataFragment **f = lt_calloc(a->n_new + 1, sizeof(*f));
	size_t		k;

	*out = NULL;
	*n = 0;
	if (!f)
		return lt_nomem(err);
	if (!parse_new_fragments(a, f, NULL, &k))
	{
		while (k > 0)
			lt__pb__data_fragment__free_unpacked(f[--k], pa);
		lt_free(f);
		return lt_corrupt(err, "version %llu: a fragment written does not parse", (unsigned long long) a->version);
	}
	*out = f;
	*n = k;
	return LT_OK;
}

size_t
lt_adoption_size(const lt_adoption *a)
{
	return sizeof(lt_adoption) + a->frags_len + a->msg_len + a->isec_len + a->tx_len;
}

lt_code
lt_dataset_adopt(lt_dataset *ds, const lt_adoption *a, lt_error *err)
{
	ProtobufCAllocator *pa = lt_protobuf_allocator();
	Lt__Pb__Manifest *om = ds->manifest,
			   *nm = NULL;
	Lt__Pb__IndexSection *isec = NULL;
	Lt__Pb__Transaction *tx = NULL;
	Lt__Pb__DataFragment **fresh = NULL,
			  **grown = NULL;
	uint64_t   *fstart = NULL;
	lt_schema  *schema = NULL;
	uint8_t    *mbuf = NULL;
	const uint8_t *msg = a->bytes + a->frags_len;
	char		name[64];
	char	   *path = NULL;
	size_t		n = om->n_fragments,
				nn = n + a->n_new,
				k = 0;
	uint64_t	f0,
				fl,
				need;
	lt_code		rc = LT_OK;

	if (!ds->manifest_msg || ds->root_prefix || ds->dv_overrides || a->from_version != ds->version ||
		a->version <= ds->version)
		return lt_error_set(err, LT_EINVALID, "%s: version %llu cannot be taken over on top of this one",
							ds->manifest_path, (unsigned long long) a->version);
	if (!ds->frag_starts)
		LT_TRY(find_held_fragments(ds, err));
	if (n > 0 && !ds->frags_contiguous)
		return lt_error_set(err, LT_EINVALID, "%s: the fragments are not encoded back to back", ds->manifest_path);
	f0 = n ? ds->frag_starts[0] : 0;
	fl = n ? ds->frag_starts[n - 1] + ds->frag_lens[n - 1] - f0 : 0;
	need = fl + a->frags_len + a->msg_len;
	lt_manifest_name(a->version, ds->naming, name, sizeof(name));
	if (!(path = lt_asprintf("%s_versions/%s", ds->prefix, name)) ||
		!(fresh = lt_calloc(a->n_new + 1, sizeof(*fresh))) || !(fstart = lt_malloc((a->n_new + 1) * sizeof(uint64_t))))
		rc = lt_nomem(err);
	if (rc == LT_OK && !parse_new_fragments(a, fresh, fstart, &k))
		rc = lt_corrupt(err, "%s: a fragment written does not parse", path);
	if (rc == LT_OK && k != a->n_new)
		rc = lt_corrupt(err, "%s: %zu of %zu fragments written", path, k, a->n_new);
	if (rc == LT_OK && (!(nm = lt__pb__manifest__unpack(pa, a->msg_len, msg)) || nm->n_fragments != 0))
		rc = lt_corrupt(err, "%s: the manifest written does not parse", path);
	if (rc == LT_OK && nm->has_version && nm->version != a->version)
		rc = lt_corrupt(err, "%s: the manifest says version %llu", path, (unsigned long long) nm->version);
	if (rc == LT_OK && a->has_isec && !(isec = lt__pb__index_section__unpack(pa, a->isec_len, msg + a->msg_len)))
		rc = lt_corrupt(err, "%s: the index section does not parse", path);
	if (rc == LT_OK && a->has_tx)
		tx = lt__pb__transaction__unpack(pa, a->tx_len, msg + a->msg_len + a->isec_len);
	if (rc == LT_OK && (rc = lt_schema_from_pb(nm->fields, nm->n_fields, &schema, err)) != LT_OK)
		lt_error_prefix(err, "%s: schema", path);
	/* room, taken before anything of ds changes: the entry bytes (fragments first), the arrays */
	if (rc == LT_OK && !(ds->msg_cap && f0 == 0 && need <= ds->msg_cap) && !(mbuf = lt_malloc(2 * need + 64)))
		rc = lt_nomem(err);
	if (rc == LT_OK && nn > (ds->frag_cap > n ? ds->frag_cap : n) &&
		!(grown = pa->alloc(pa->allocator_data, 2 * nn * sizeof(*grown))))
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = positions_reserve(ds, nn, err);
	if (rc != LT_OK)
	{
		for (size_t t = 0; t < k; t++)
			lt__pb__data_fragment__free_unpacked(fresh[t], pa);
		if (grown)
			pa->free(pa->allocator_data, grown);
		if (nm)
			lt__pb__manifest__free_unpacked(nm, pa);
		if (isec)
			lt__pb__index_section__free_unpacked(isec, pa);
		if (tx)
			lt__pb__transaction__free_unpacked(tx, pa);
		lt_schema_free(schema);
		lt_free(mbuf);
		lt_free(fresh);
		lt_free(fstart);
		lt_free(path);
		return rc;
	}
	/* the held fragment entries at the start of an owned buffer (once per doubling), the written ones after */
	if (mbuf)
	{
		if (fl)
			memcpy(mbuf, ds->manifest_msg + f0, fl);
		for (size_t i = 0; f0 && i < n; i++)
			ds->frag_starts[i] -= f0;
		lt_free(ds->manifest_file);
		ds->manifest_file = mbuf;
		ds->msg_cap = 2 * need + 64;
	}
	memcpy(ds->manifest_file + fl, a->bytes, a->frags_len + a->msg_len);
	if (grown)
	{
		if (n)
			memcpy(grown, om->fragments, n * sizeof(*grown));
		ds->frag_cap = 2 * nn;
		nm->fragments = grown;	/* the held array goes with om */
	}
	else
	{
		ds->frag_cap = ds->frag_cap > n ? ds->frag_cap : n;
		nm->fragments = om->fragments;
		om->fragments = NULL;
	}
	for (size_t t = 0; t < a->n_new; t++)
	{
		nm->fragments[n + t] = fresh[t];
		ds->frag_starts[n + t] = fl + fstart[t];
		ds->frag_lens[n + t] = (t + 1 < a->n_new ? fstart[t + 1] : a->frags_len) - fstart[t];
	}
	lt_free(fresh);
	lt_free(fstart);
	nm->n_fragments = nn;
	om->n_fragments = 0;
	lt__pb__manifest__free_unpacked(om, pa);
	if (ds->index_section)
		lt__pb__index_section__free_unpacked(ds->index_section, pa);
	if (ds->transaction)
		lt__pb__transaction__free_unpacked(ds->transaction, pa);
	lt_schema_free(ds->schema);
	lt_free(ds->manifest_path);
	ds->manifest = nm;
	ds->index_section = isec;
	ds->transaction = tx;
	ds->schema = schema;
	ds->version = a->version;
	ds->manifest_path = path;
	ds->manifest_size = a->file_size;
	ds->manifest_msg = ds->manifest_file;
	ds->manifest_msg_len = need;
	ds->frags_contiguous = true;
	ds->n_fragments = nn;
	ds->fragments = nm->fragments;
	/* the held fragments were checked and counted when they were read; the new ones now */
	rc = validate(ds, n, NULL, err);
	if (rc == LT_OK)
		rc = recount_rows(ds, n, err);
	if (nm->writer_version)
		for (size_t i = n; i < nn; i++)
			ds->live_rows += lt_fragment_live_rows(ds->fragments[i]);
	else
		ds->live_rows = lt_dataset_count_rows(ds);
	if (nm->data_format && nm->data_format->version && nm->data_format->version[0])
		ds->storage_version = nm->data_format->version;
	else
		ds->storage_version = infer_storage_version(nm);
	return rc;
}

void
lt_dataset_close(lt_dataset *ds)
{
	if (!ds)
		return;
	if (ds->manifest)
		lt__pb__manifest__free_unpacked(ds->manifest, lt_protobuf_allocator());
	if (ds->index_section)
		lt__pb__index_section__free_unpacked(ds->index_section, lt_protobuf_allocator());
	if (ds->transaction)
		lt__pb__transaction__free_unpacked(ds->transaction, lt_protobuf_allocator());
	lt_schema_free(ds->schema);
	lt_free(ds->manifest_file);
	lt_free(ds->frag_starts);
	lt_free(ds->frag_lens);
	lt_free(ds->manifest_path);
	lt_free(ds->prefix);
	lt_free(ds->root_prefix);
	lt_free(ds->branch);
	for (size_t i = 0; i < ds->n_bases; i++)
		lt_free(ds->bases[i].prefix);
	lt_free(ds->bases);
	lt_free(ds);
}

const char *
lt_transaction_op_name(const Lt__Pb__Transaction *t)
{
	if (!t)
		return NULL;
	switch (t->operation_case)
	{
		case LT__PB__TRANSACTION__OPERATION_APPEND: return "Append";
		case LT__PB__TRANSACTION__OPERATION_DELETE: return "Delete";
		case LT__PB__TRANSACTION__OPERATION_OVERWRITE: return "Overwrite";
		case LT__PB__TRANSACTION__OPERATION_CREATE_INDEX: return "CreateIndex";
		case LT__PB__TRANSACTION__OPERATION_REWRITE: return "Rewrite";
		case LT__PB__TRANSACTION__OPERATION_MERGE: return "Merge";
		case LT__PB__TRANSACTION__OPERATION_RESTORE: return "Restore";
		case LT__PB__TRANSACTION__OPERATION_RESERVE_FRAGMENTS: return "ReserveFragments";
		case LT__PB__TRANSACTION__OPERATION_UPDATE: return "Update";
		case LT__PB__TRANSACTION__OPERATION_PROJECT: return "Project";
		case LT__PB__TRANSACTION__OPERATION_UPDATE_CONFIG: return "UpdateConfig";
		case LT__PB__TRANSACTION__OPERATION_DATA_REPLACEMENT: return "DataReplacement";
		case LT__PB__TRANSACTION__OPERATION_UPDATE_MEM_WAL_STATE: return "UpdateMemWalState";
		case LT__PB__TRANSACTION__OPERATION_CLONE: return "Clone";
		case LT__PB__TRANSACTION__OPERATION_UPDATE_BASES: return "UpdateBases";
		default: return "Unknown";
	}
}
