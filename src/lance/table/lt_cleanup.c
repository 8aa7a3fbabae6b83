/*
 * lt_cleanup.c — removal of unreferenced files (lt_cleanup.h has the rules).
 */
#include "table/lt_cleanup.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_deletion.h"
#include "file/lt_sidecar.h"
#include "proto/lt_table.pb-c.h"

/*
 * A set of strings: appended, then sorted once for lookups.  The sorted, unique prefix (n_sorted)
 * is also consulted when adding, and the set compacted when its unsorted tail outgrows it: the
 * same files are named by thousands of manifests, and the set stays the size of the distinct ones.
 */
typedef struct strset
{
	char	  **v;
	size_t		n, cap;
	size_t		n_sorted;		/* v[0 .. n_sorted) is sorted and unique */
	bool		sorted;
} strset;

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static void set_sort(strset *s);

static lt_code
set_add_owned(strset *s, char *x, lt_error *err)
{
	if (!x)
		return lt_nomem(err);
	if (s->n_sorted > 0 && bsearch(&x, s->v, s->n_sorted, sizeof(char *), cmp_str) != NULL)
	{
		lt_free(x);				/* already there */
		return LT_OK;
	}
	if (s->n - s->n_sorted >= (s->n_sorted > 4096 ? s->n_sorted : 4096))
		set_sort(s);
	if (s->n == s->cap)
	{
		size_t		cap = s->cap ? s->cap * 2 : 64;
		char	  **p = lt_realloc(s->v, cap * sizeof(char *));

		if (!p)
		{
			lt_free(x);
			return lt_nomem(err);
		}
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	s->sorted = false;
	return LT_OK;
}

static void
set_sort(strset *s)
{
	size_t		k = 0;

	if (s->sorted)
		return;
	qsort(s->v, s->n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < s->n; i++)
	{
		if (k > 0 && strcmp(s->v[k - 1], s->v[i]) == 0)
			lt_free(s->v[i]);
		else
			s->v[k++] = s->v[i];
	}
	s->n = k;
	s->n_sorted = k;
	s->sorted = true;
}

static bool
set_has(strset *s, const char *x)
{
	set_sort(s);
	return s->n > 0 && bsearch(&x, s->v, s->n, sizeof(char *), cmp_str) != NULL;
}

static void
set_free(strset *s)
{
	for (size_t i = 0; i < s->n; i++)
		lt_free(s->v[i]);
	lt_free(s->v);
	memset(s, 0, sizeof(*s));
}

/*
 * The files manifests reference: data files, deletion files, transaction files, index uuids.  Paths are
 * joined with lt_concat3, not formatted: a cleanup names every file of every manifest it reads.
 */
typedef struct refs
{
	strset		paths;			/* relative to the dataset */
	strset		index_uuids;
} refs;

static void
refs_free(refs *r)
{
	set_free(&r->paths);
	set_free(&r->index_uuids);
}

static lt_code
add_manifest_refs(const lt_dataset *ds, const lt_cleanup_policy *policy, refs *r, lt_error *err)
{
	const Lt__Pb__Manifest *m = ds->manifest;

	if (policy->extra_refs)
	{
		char	  **paths = NULL;
		size_t		n = 0;
		lt_code		rc = policy->extra_refs(ds, &paths, &n, err);

		for (size_t i = 0; i < n; i++)
		{
			if (rc == LT_OK)
				rc = set_add_owned(&r->paths, paths[i], err);
			else
				lt_free(paths[i]);
		}
		lt_free(paths);
		LT_TRY(rc);
	}

	for (size_t i = 0; i < m->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *f = m->fragments[i];

		for (size_t j = 0; j < f->n_files; j++)
			if (f->files[j]->path)
				LT_TRY(set_add_owned(&r->paths, lt_concat3("data/", f->files[j]->path, ""), err));
		if (f->deletion_file)
		{
			const Lt__Pb__DeletionFile *d = f->deletion_file;

			LT_TRY(set_add_owned(&r->paths,
								 lt_deletion_path(f->id, d->read_version, d->id,
												  d->file_type == LT__PB__DELETION_FILE__FILE_TYPE__BITMAP
												  ? LT_DELETION_BITMAP : LT_DELETION_ARROW), err));
		}
	}
	if (m->transaction_file && m->transaction_file[0])
		LT_TRY(set_add_owned(&r->paths, lt_concat3("_transactions/", m->transaction_file, ""), err));
	if (ds->index_section)
		for (size_t i = 0; i < ds->index_section->n_indices; i++)
		{
			const Lt__Pb__IndexMetadata *ix = ds->index_section->indices[i];
			const uint8_t *u;

			if (!ix->uuid || !ix->uuid->has_uuid || ix->uuid->uuid.len != 16)
				continue;
			u = ix->uuid->uuid.data;
			LT_TRY(set_add_owned(&r->index_uuids,
								 lt_asprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
											 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
											 u[11], u[12], u[13], u[14], u[15]), err));
		}
	return LT_OK;
}

static int64_t
manifest_ms(const lt_dataset *ds)
{
	const Lt__Pb__Manifest *m = ds->manifest;

	if (!m->timestamp)
		return 0;
	return m->timestamp->seconds * 1000 + m->timestamp->nanos / 1000000;
}

/* ---- listing the dataset's files ---- */

typedef struct file_ent
{
	char	   *path;			/* relative to the dataset */
	uint64_t	size;
	int64_t		mtime_ms;
} file_ent;

typedef struct file_list
{
	file_ent   *v;
	size_t		n, cap;
	strset		subdirs;		/* directories met (relative), to list next */
	const char *dir;			/* the one being listed (relative) */
	bool		oom;
} file_list;

static int
collect_file(const lt_dirent *ent, void *arg)
{
	file_list  *l = arg;
	char	   *path = lt_concat3(l->dir, "/", ent->name);
	lt_error	ignore;

	if (!path)
	{
		l->oom = true;
		return 1;
	}
	if (ent->is_dir)
	{
		if (set_add_owned(&l->subdirs, path, &ignore) != LT_OK)
		{
			l->oom = true;
			return 1;
		}
		return 0;
	}
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? l->cap * 2 : 256;
		file_ent   *p = lt_realloc(l->v, cap * sizeof(file_ent));

		if (!p)
		{
			lt_free(path);
			l->oom = true;
			return 1;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n].path = path;
	l->v[l->n].size = ent->size;
	l->v[l->n].mtime_ms = ent->mtime_ms;
	l->n++;
	return 0;
}

/* Every file under dir (relative), subdirectories included; a missing dir is empty. */
static lt_code
list_tree(lt_store *store, const char *prefix, const char *dir, file_list *l, lt_error *err)
{
	char	   *full = lt_concat3(prefix, dir, "");
	lt_code		rc;
	size_t		first_sub = l->subdirs.n;

	if (!full)
		return lt_nomem(err);
	l->dir = dir;
	rc = lt_store_list(store, full, collect_file, l, err);
	lt_free(full);
	if (rc == LT_ENOTFOUND)
		rc = LT_OK;
	if (rc == LT_OK && l->oom)
		rc = lt_nomem(err);
	/* the subdirectories found in this one (the list may grow while we go) */
	for (size_t i = first_sub; rc == LT_OK && i < l->subdirs.n; i++)
	{
		char	   *sub = lt_strdup(l->subdirs.v[i]);

		if (!sub)
			return lt_nomem(err);
		rc = list_tree(store, prefix, sub, l, err);
		lt_free(sub);
	}
	return rc;
}

static void
file_list_free(file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		lt_free(l->v[i].path);
	lt_free(l->v);
	set_free(&l->subdirs);
}

/* ---- branches ---- */

static int
count_branch(const lt_dirent *ent, void *arg)
{
	size_t		len = strlen(ent->name);

	/* a directory holds branches named "a/b" */
	if (ent->is_dir || (len > 5 && strcmp(ent->name + len - 5, ".json") == 0))
		(*(size_t *) arg)++;
	return 0;
}

/*
 * Lance 12 branches read their parent's files through base paths: which files a branch still needs is not
 * in main's manifests, so a cleanup of a dataset with branches could remove them.  Refused.
 */
static lt_code
refuse_branches(lt_store *store, const char *prefix, lt_error *err)
{
	char	   *dir = lt_asprintf("%s_refs/branches", prefix);
	size_t		n = 0;
	lt_code		rc;

	if (!dir)
		return lt_nomem(err);
	rc = lt_store_list(store, dir, count_branch, &n, err);
	lt_free(dir);
	if (rc == LT_ENOTFOUND)
		return LT_OK;
	LT_TRY(rc);
	if (n > 0)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"the dataset has %zu branch%s (_refs/branches/), whose files lt_fdw's cleanup cannot tell apart",
							n, n == 1 ? "" : "es");
	return LT_OK;
}

/* ---- the rules ---- */

static bool
starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool
ends_with(const char *s, const char *p)
{
	size_t		ls = strlen(s),
				lp = strlen(p);

	return ls >= lp && strcmp(s + ls - lp, p) == 0;
}

/* Is a listed file to go? maybe_in_progress: it may belong to a write still running. */
static bool
unreferenced(const file_ent *f, bool maybe_in_progress, refs *working, refs *verified, const char *extra_dir)
{
	const char *p = f->path;

	/* temporary files: lt_fdw's "<name>.tmp-<pid>-<n>" (and torn ones), Lance's _versions/.tmp* */
	if (strstr(p, ".tmp-") || starts_with(p, "_versions/.tmp"))
		return !maybe_in_progress;
	if (starts_with(p, "_indices/"))
	{
		const char *u = p + strlen("_indices/");
		const char *slash = strchr(u, '/');
		char		uuid[64];

		if (!slash || (size_t) (slash - u) >= sizeof(uuid))
			return false;
		memcpy(uuid, u, (size_t) (slash - u));
		uuid[slash - u] = '\0';
		if (set_has(&working->index_uuids, uuid))
			return false;
		return !maybe_in_progress || set_has(&verified->index_uuids, uuid);
	}
	if (starts_with(p, "data/") && ends_with(p, ".blob"))
	{
		/* a blob v2 sidecar "data/<stem>/<id>.blob" lives and goes with its data file "data/<stem>.lance" */
		const char *slash = strrchr(p, '/');
		uint32_t	id;
		char		owner[512];

		if (slash == p + 4 || !lt_blob_sidecar_id(slash + 1, &id) || memchr(p + 5, '/', (size_t) (slash - p - 5)) ||
			(size_t) (slash - p) + 7 > sizeof(owner))
			return false;
		snprintf(owner, sizeof(owner), "%.*s.lance", (int) (slash - p), p);
		if (set_has(&working->paths, owner))
			return false;
		return !maybe_in_progress || set_has(&verified->paths, owner);
	}
	if ((starts_with(p, "data/") && ends_with(p, ".lance")) ||
		(starts_with(p, "_deletions/") && (ends_with(p, ".arrow") || ends_with(p, ".bin"))) ||
		(starts_with(p, "_transactions/") && ends_with(p, ".txn")) ||
		(extra_dir && starts_with(p, extra_dir) && p[strlen(extra_dir)] == '/'))
	{
		if (set_has(&working->paths, p))
			return false;
		return !maybe_in_progress || set_has(&verified->paths, p);
	}
	return false;				/* manifests are decided from their versions; anything else stays */
}

static lt_code
add_removed(lt_cleanup_result *r, const char *path, lt_error *err)
{
	char	  **p;

	if (r->n_removed % 64 == 0)
	{
		p = lt_realloc(r->removed, (r->n_removed + 64) * sizeof(char *));
		if (!p)
			return lt_nomem(err);
		r->removed = p;
	}
	r->removed[r->n_removed] = lt_strdup(path);
	if (!r->removed[r->n_removed])
		return lt_nomem(err);
	r->n_removed++;
	return LT_OK;
}

static lt_code
remove_file(lt_store *store, const char *prefix, const char *rel, lt_error *err)
{
	char	   *full = lt_concat3(prefix, rel, "");
	lt_code		rc;

	if (!full)
		return lt_nomem(err);
	rc = lt_store_remove(store, full, err);
	lt_free(full);
	return rc == LT_ENOTFOUND ? LT_OK : rc;	/* gone meanwhile: fine */
}

lt_code
lt_cleanup(lt_store *store, const char *prefix, const lt_cleanup_policy *policy, lt_cleanup_result *result,
		   lt_error *err)
{
	uint64_t   *versions = NULL;
	size_t		n_versions = 0;
	uint64_t   *tags = NULL;
	size_t		n_tags = 0;
	lt_naming	naming;
	refs		working = {0},
				verified = {0};
	strset		old_manifests = {0};
	char	  **tag_names = NULL;	/* sorted, parallel to tags */
	char		held[512] = "";	/* tags that hold old versions */
	file_list	files = {0};
	int64_t		earliest_kept = INT64_MAX;
	int64_t		unverified_before = policy->now_ms - (int64_t) LT_CLEANUP_UNVERIFIED_DAYS * 86400 * 1000;
	uint64_t	old_bytes = 0;
	lt_code		rc;

	memset(result, 0, sizeof(*result));
	rc = refuse_branches(store, prefix, err);
	if (rc == LT_OK)
		rc = lt_dataset_versions(store, prefix, &versions, &n_versions, &naming, err);
	if (rc == LT_OK)
		rc = lt_tags(store, prefix, &tag_names, &tags, &n_tags, err);

	/* every manifest: in the working set, or old */
	for (size_t i = 0; rc == LT_OK && i < n_versions; i++)
	{
		lt_version_spec spec = {versions[i], NULL};
		lt_dataset *ds = NULL;
		bool		tagged = false;
		bool		keep;
		int64_t		ts;

		size_t		tag_at = 0;

		for (size_t k = 0; k < n_tags; k++)
			if (tags[k] == versions[i])
			{
				tagged = true;
				tag_at = k;
			}
		/* a cancel stops it here (nothing removed yet); an unreadable manifest too: its files cannot be
		 * told apart from orphans */
		rc = lt_check_interrupt(err, "reading the manifests for a cleanup");
		if (rc == LT_OK)
			rc = lt_dataset_open(store, prefix, &spec, &ds, err);
		if (rc != LT_OK)
			break;
		ts = manifest_ms(ds);
		keep = i == n_versions - 1 || tagged || ts >= policy->before_ms ||
			(policy->retain_versions > 0 && i + policy->retain_versions >= n_versions);
		if (tagged && i != n_versions - 1 && ts < policy->before_ms &&
			!(policy->retain_versions > 0 && i + policy->retain_versions >= n_versions))
		{
			size_t		l = strlen(held);

			snprintf(held + l, sizeof(held) - l, "%s\"%s\" (version %" PRIu64 ")", l ? ", " : "",
					 tag_names[tag_at], versions[i]);
		}
		rc = add_manifest_refs(ds, policy, keep ? &working : &verified, err);
		if (rc == LT_OK && keep && ts < earliest_kept)
			earliest_kept = ts;
		if (rc == LT_OK && !keep)
		{
			const char *rel = ds->manifest_path + strlen(prefix);

			old_bytes += ds->manifest_size;
			rc = set_add_owned(&old_manifests, lt_strdup(rel), err);
		}
		lt_dataset_close(ds);
	}

	if (rc == LT_OK && held[0] && policy->error_if_tagged_old_versions)
		rc = lt_error_set(err, LT_EINVALID, "tagged versions are older than the cutoff: %s", held);

	/* the other files, older than the earliest commit kept */
	if (rc == LT_OK)
		rc = list_tree(store, prefix, "data", &files, err);
	if (rc == LT_OK)
		rc = list_tree(store, prefix, "_deletions", &files, err);
	if (rc == LT_OK)
		rc = list_tree(store, prefix, "_transactions", &files, err);
	if (rc == LT_OK)
		rc = list_tree(store, prefix, "_indices", &files, err);
	if (rc == LT_OK)
		rc = list_tree(store, prefix, "_versions", &files, err);
	if (rc == LT_OK && policy->extra_dir && policy->extra_refs)
		rc = list_tree(store, prefix, policy->extra_dir, &files, err);

	/* old manifests first: a crash in between leaves orphans, never a manifest without its files */
	set_sort(&old_manifests);
	for (size_t i = 0; rc == LT_OK && i < old_manifests.n; i++)
	{
		/* stopping here is as safe as a crash: the old manifests go first */
		if (i % 64 == 0)
			rc = lt_check_interrupt(err, "removing old manifests");
		if (rc == LT_OK && !policy->dry_run)
			rc = remove_file(store, prefix, old_manifests.v[i], err);
		if (rc == LT_OK)
			rc = add_removed(result, old_manifests.v[i], err);
	}
	result->old_versions = old_manifests.n;
	result->bytes_removed = old_bytes;
	for (size_t i = 0; rc == LT_OK && i < files.n; i++)
	{
		const file_ent *f = &files.v[i];
		bool		maybe_in_progress;

		if (i % 256 == 0 && (rc = lt_check_interrupt(err, "removing unreferenced files")) != LT_OK)
			break;
		if (f->mtime_ms == 0 || f->mtime_ms >= earliest_kept)
			continue;
		maybe_in_progress = !policy->delete_unverified && f->mtime_ms >= unverified_before;
		if (!unreferenced(f, maybe_in_progress, &working, &verified,
						  policy->extra_refs ? policy->extra_dir : NULL))
			continue;
		if (!policy->dry_run)
			rc = remove_file(store, prefix, f->path, err);
		if (rc == LT_OK)
			rc = add_removed(result, f->path, err);
		if (rc == LT_OK)
		{
			result->files_removed++;
			result->bytes_removed += f->size;
		}
	}
	if (rc == LT_OK && result->n_removed > 1)
		qsort(result->removed, result->n_removed, sizeof(char *), cmp_str);

	lt_free(versions);
	lt_tags_free(tag_names, tags, n_tags);
	refs_free(&working);
	refs_free(&verified);
	set_free(&old_manifests);
	file_list_free(&files);
	if (rc != LT_OK)
		lt_cleanup_result_clear(result);
	return rc;
}

void
lt_cleanup_result_clear(lt_cleanup_result *r)
{
	for (size_t i = 0; i < r->n_removed; i++)
		lt_free(r->removed[i]);
	lt_free(r->removed);
	memset(r, 0, sizeof(*r));
}
