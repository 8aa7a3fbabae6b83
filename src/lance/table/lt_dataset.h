/*
 * lt_dataset.h — a Lance dataset at one version: manifest, schema, fragments,
 * indexes; version discovery and tags.
 *
 * A dataset lives in a directory of a store (`prefix`, "" for the store's
 * root).  Versions are found by listing _versions/ (the hint file is never
 * trusted); both manifest naming schemes are understood:
 *   V1  _versions/{version}.manifest
 *   V2  _versions/{UINT64_MAX - version, 20 digits}.manifest
 */
#ifndef LT_DATASET_H
#define LT_DATASET_H

#include <stdbool.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

struct Lt__Pb__Manifest;
struct Lt__Pb__DataFragment;
struct Lt__Pb__IndexSection;
struct Lt__Pb__Transaction;

/* Feature flags this library understands (manifest reader/writer flags). */
#define LT_FLAG_DELETION_FILES		1
#define LT_FLAG_STABLE_ROW_IDS		2
#define LT_FLAG_USE_V2_FORMAT		4	/* deprecated, harmless */
#define LT_FLAG_TABLE_CONFIG		8
#define LT_FLAG_BASE_PATHS			16
#define LT_FLAG_DISABLE_TXN_FILE	32

typedef enum lt_naming
{
	LT_NAMING_V1 = 1,
	LT_NAMING_V2 = 2
} lt_naming;

/*
 * Which version to open: a number, a tag, or (both unset) the latest; of main or of a branch (Lance 12:
 * _refs/branches/<name>.json, its versions under tree/<name>/).  A tag that names a version of a branch opens
 * that branch.
 */
typedef struct lt_version_spec
{
	uint64_t	version;		/* 0 = not given */
	const char *tag;			/* NULL = not given */
	const char *branch;			/* NULL = main */
} lt_version_spec;

/* A fragment's deleted offsets held in memory (ascending): a transaction's own deletes (lt_txn_view). */
typedef struct lt_dv_override
{
	uint64_t	fragment_id;
	const uint32_t *offsets;
	uint64_t	n;
} lt_dv_override;

/* Where a branch's manifest finds files of another base path (BasePath): its id and the store prefix. */
typedef struct lt_base_dir
{
	uint32_t	id;
	char	   *prefix;			/* ends with '/' or is "" */
} lt_base_dir;

typedef struct lt_dataset
{
	lt_store   *store;			/* not owned */
	char	   *prefix;			/* "" or "dir/name.lance/" (ends with '/'); a branch: "<root>tree/<branch>/" */
	char	   *branch;			/* the branch read, NULL for main */
	char	   *root_prefix;	/* a branch: the prefix of the dataset it belongs to; NULL for main */
	lt_base_dir *bases;			/* a branch's base paths, resolved under root_prefix */
	size_t		n_bases;
	uint64_t	version;
	lt_naming	naming;
	char	   *manifest_path;
	uint64_t	manifest_size;
	struct Lt__Pb__Manifest *manifest;
	struct Lt__Pb__IndexSection *index_section;	/* NULL when there are no indexes */
	struct Lt__Pb__Transaction *transaction;	/* the inline transaction, or NULL */
	uint8_t    *manifest_file;	/* the manifest file's bytes, kept for splicing the next one (or NULL) */
	const uint8_t *manifest_msg;	/* its Manifest message */
	uint64_t	manifest_msg_len;
	uint64_t   *frag_starts;	/* where each fragment is encoded in it, when known (NULL: not yet) */
	uint64_t   *frag_lens;
	size_t		pos_cap;		/* room in frag_starts / frag_lens */
	size_t		frag_cap;		/* room in manifest->fragments (at least n_fragments) */
	bool		frags_contiguous;	/* the fragment entries lie back to back in manifest_msg (when known) */
	uint64_t	msg_cap;		/* nonzero: manifest_file is an adopted message, fragments first, with this room */
	uint64_t	live_rows;		/* rows of all fragments less deleted ones, kept by open and advance (not by views) */
	lt_schema  *schema;
	const char *storage_version;	/* "0.1", "2.0", "2.1", ... (inferred when absent) */
	size_t		n_fragments;
	struct Lt__Pb__DataFragment **fragments;	/* borrowed from manifest, sorted by id */
	bool		stable_row_ids;
	/* in-memory deletion vectors, ascending by fragment id, that win over deletion files (NULL normally) */
	const lt_dv_override *dv_overrides;
	size_t		n_dv_overrides;
} lt_dataset;

/* Open a dataset at prefix ("" for the store root) at the requested version. */
lt_code		lt_dataset_open(lt_store *store, const char *prefix, const lt_version_spec *spec,
							lt_dataset **out, lt_error *err);
void		lt_dataset_close(lt_dataset *ds);
/*
 * ds (opened by lt_dataset_open, at version V of main) made a later version of the same dataset, read from its
 * manifest file, without parsing again the fragments encoded there exactly as in V's manifest (those a commit on
 * V kept, which lt_manifest_serialize_from copied as bytes): they move over, only added or changed ones and the
 * small rest of the manifest are parsed.  The cost of reading the next version of a table that grows by small
 * commits then does not grow with its fragment count.  On an error before the switch ds is as it was; an error
 * of the new version's checks leaves ds at the new version, to be closed.
 */
lt_code		lt_dataset_advance(lt_dataset *ds, uint64_t version, lt_error *err);

/*
 * What a commit that only appended fragments to version from_version wrote (lt_commit_options.adopt): the
 * new fragments' entries as the manifest encodes them, the rest of the Manifest message (everything but the
 * fragments) and the two sections.  A dataset still at from_version takes it over with lt_dataset_adopt.
 * One allocation (lt_adoption_size bytes), so that a caller can copy it.
 */
typedef struct lt_adoption
{
	uint64_t	from_version;
	uint64_t	version;
	uint64_t	file_size;		/* the manifest file's size */
	size_t		n_new;			/* fragments appended */
	uint64_t	frags_len;		/* bytes: the new fragments' entries (tag included) ... */
	uint64_t	msg_len;		/* ... the Manifest message without fragments ... */
	uint64_t	isec_len;		/* ... the index section ... */
	uint64_t	tx_len;			/* ... and the transaction section, back to back in bytes */
	bool		has_isec;
	bool		has_tx;
	uint8_t		bytes[];
} lt_adoption;

size_t		lt_adoption_size(const lt_adoption *a);

/*
 * ds (at a->from_version, the version the commit behind a was made on) moves to a->version by what the commit
 * itself wrote: only the new fragments and the small rest are parsed, nothing is read or compared, and the
 * fragment array and entry bytes grow in place (doubling room), so the work does not grow with the fragment
 * count.  Preconditions as lt_dataset_advance's; on an error before the switch ds is as it was.
 */
lt_code		lt_dataset_adopt(lt_dataset *ds, const lt_adoption *a, lt_error *err);
/* The fragments a appended, parsed (*out: n of them, each freed with lt__pb__data_fragment__free_unpacked, then *out). */
lt_code		lt_adoption_fragments(const lt_adoption *a, struct Lt__Pb__DataFragment ***out, size_t *n, lt_error *err);

/* Every committed version, ascending, and the naming scheme in use. */
lt_code		lt_dataset_versions(lt_store *store, const char *prefix, uint64_t **versions, size_t *n,
								lt_naming *naming, lt_error *err);
/*
 * The newest version, without reading every name in _versions/ where that can be avoided: on S3 one small
 * listing (V2 names sort newest first), locally the version hint probed forward; both fall back to the full
 * listing (lt_dataset.c says when).
 */
lt_code		lt_dataset_latest_version(lt_store *store, const char *prefix, uint64_t *version,
									  lt_naming *naming, lt_error *err);
/*
 * lt_dataset_latest_version remembers, per dataset, the answer the version hint gave and the change time of
 * _versions/; the next lookup with _versions/ unchanged answers from it after one stat.  Only change times
 * older than 2 s are trusted (file system clocks are coarse); tests set another margin (ns; < 0: the default),
 * which also forgets what was remembered.
 */
void		lt_dataset_latest_settle(int64_t ns);
/* Resolve a tag (_refs/tags/<tag>.json) of main to its version; a tag of a branch is an error (LT_EUNSUPPORTED). */
lt_code		lt_dataset_tag_version(lt_store *store, const char *prefix, const char *tag, uint64_t *version,
								   lt_error *err);
/* The same for a tag of any branch: *branch is the tag's branch (lt_malloc'd) or NULL for main. */
lt_code		lt_dataset_tag_ref(lt_store *store, const char *prefix, const char *tag, uint64_t *version,
							   char **branch, lt_error *err);
/*
 * The prefix of a branch's versions, "<prefix>tree/<branch>/" (lt_malloc'd), after checking that
 * _refs/branches/<branch>.json exists (LT_ENOTFOUND naming the branch when not).
 */
lt_code		lt_dataset_branch_prefix(lt_store *store, const char *prefix, const char *branch, char **out,
									 lt_error *err);
/* Whether a branch name is one lt_fdw accepts: '/'-separated segments, none empty, "." or "..". */
bool		lt_branch_name_valid(const char *branch);
/*
 * The store path of a file rel ("data/x.lance", "_deletions/...") that the manifest places under base path
 * base_id when has_base (a branch reading files of its parent), else under the dataset's own prefix.
 * NULL on ENOMEM or an unknown base (lt_dataset_open has checked every base the manifest uses).
 */
char	   *lt_dataset_file_path(const lt_dataset *ds, bool has_base, uint32_t base_id, const char *rel);

/*
 * Tags as Lance keeps them: _refs/tags/<tag>.json holding {"branch":null,"version":N,"manifestSize":M}.
 * lt_tag_create makes one only if absent (LT_ECONFLICT when the tag exists) and only for a committed version
 * (LT_ENOTFOUND otherwise); lt_tag_delete removes one (LT_ENOTFOUND when there is none); lt_tags lists them
 * sorted by name (names and versions lt_malloc'd, free with lt_tags_free).
 */
lt_code		lt_tag_create(lt_store *store, const char *prefix, const char *tag, uint64_t version, lt_error *err);
lt_code		lt_tag_delete(lt_store *store, const char *prefix, const char *tag, lt_error *err);
lt_code		lt_tags(lt_store *store, const char *prefix, char ***names, uint64_t **versions, size_t *n, lt_error *err);
void		lt_tags_free(char **names, uint64_t *versions, size_t n);

/* "prefix" + rel, freshly allocated (lt_free). */
char	   *lt_dataset_path(const lt_dataset *ds, const char *rel);
/*
 * About to read fragments ds->fragments[idx[0..n)]: on a remote store, fetch what opening their deletion
 * files and (where data_files[i], or data_files is NULL: the reader reads columns there) data files needs, all
 * at once (lt_store_prefetch), where opening them one by one costs a round trip each.  Does nothing on a local
 * disk; only a cancel fails.
 */
lt_code		lt_dataset_prefetch_fragments(lt_dataset *ds, const size_t *idx, size_t n, const bool *data_files,
										  lt_error *err);
/* Manifest file name of a version under a naming scheme (no directory). */
void		lt_manifest_name(uint64_t version, lt_naming naming, char *buf, size_t buflen);

/* Parse a manifest file's bytes (for tools and fuzzing). `path` names it in errors. */
lt_code		lt_manifest_parse(const uint8_t *buf, uint64_t len, const char *path,
							  struct Lt__Pb__Manifest **manifest, struct Lt__Pb__IndexSection **indexes,
							  struct Lt__Pb__Transaction **txn, lt_error *err);

/*
 * Serialize a manifest file ([index section][transaction][manifest][16-byte trailer]), lt_malloc'd.
 * Sets m's index_section / transaction_section to where the sections land (unset when NULL).
 */
lt_code		lt_manifest_serialize(struct Lt__Pb__Manifest *m, const struct Lt__Pb__IndexSection *indexes,
								  const struct Lt__Pb__Transaction *txn, uint8_t **out, uint64_t *len,
								  lt_error *err);

/*
 * The previous manifest as encoded, for lt_manifest_serialize_from: fragments of the new manifest that are
 * prev's (the same DataFragment pointers, unchanged since they were parsed from msg) are copied as bytes
 * instead of packed again.  The result parses to what lt_manifest_serialize's does (byte for byte when prev was
 * written by lt_fdw; a kept fragment another writer encoded keeps that writer's encoding of it).
 */
typedef struct lt_manifest_prev
{
	const uint8_t *msg;			/* the Manifest message, without the file's framing */
	uint64_t	len;
	struct Lt__Pb__DataFragment *const *fragments;	/* parsed from msg, in its order */
	size_t		n_fragments;
	const uint64_t *starts;		/* where each is encoded in msg (tag included), or NULL: found by walking msg */
	const uint64_t *lens;
	bool		contiguous;		/* with starts: the entries lie back to back */
} lt_manifest_prev;

lt_code		lt_manifest_serialize_from(struct Lt__Pb__Manifest *m, const struct Lt__Pb__IndexSection *indexes,
									   const struct Lt__Pb__Transaction *txn, const lt_manifest_prev *prev,
									   uint8_t **out, uint64_t *len, lt_error *err);
/*
 * lt_manifest_serialize_from as parts of the file (1 or 3, into parts[3]) for lt_store_put_if_absent_parts: the
 * run of prev's leading fragments is pointed at in prev->msg instead of copied (prev must outlive the parts).
 * *buf holds the rest, to be lt_free'd.
 */
lt_code		lt_manifest_serialize_parts(struct Lt__Pb__Manifest *m, const struct Lt__Pb__IndexSection *indexes,
										const struct Lt__Pb__Transaction *txn, const lt_manifest_prev *prev,
										uint8_t **buf, lt_part *parts, int *n_parts, lt_error *err);
/*
 * The Manifest.fragments entries of a Manifest message (where each is encoded, tag included, in order) and the
 * message's other fields copied out (rest), all lt_malloc'd; hint: about how many fragments to expect.  LT_ECORRUPT
 * when the fields do not parse.
 */
lt_code		lt_manifest_split(const uint8_t *msg, uint64_t len, size_t hint, uint64_t **starts, uint64_t **lens, size_t *n,
							  uint8_t **rest, uint64_t *rest_len, lt_error *err);
/* Step over the protobuf field at *pos of p: its number and wire type. False on bytes that do not parse. */
bool		lt_manifest_next_field(const uint8_t *p, uint64_t len, uint64_t *pos, uint64_t *number, int *wire);
#define LT_MANIFEST_FIELD_FRAGMENTS 2	/* Manifest.fragments */
/* ds's manifest as encoded (false when it is not kept: fragments corrected after parsing). */
bool		lt_dataset_manifest_prev(const lt_dataset *ds, lt_manifest_prev *out);

/* Live rows of a fragment: physical rows minus deleted ones (from the manifest). */
uint64_t	lt_fragment_live_rows(const struct Lt__Pb__DataFragment *frag);

/*
 * Bytes of each top-level field (bytes[i] for ds->schema->fields[i]) in the version's data files: the
 * buffers of the columns' pages and the columns' own buffers, from each 2.x file's column metadata
 * (every file is opened). *complete is false when a v1 (legacy) file was left out: it has no such metadata.
 */
lt_code		lt_dataset_column_sizes(const lt_dataset *ds, uint64_t *bytes, bool *complete, lt_error *err);
/* The fragment of ds with that id (ds->fragments is sorted by id), or NULL; its position, or ds->n_fragments. */
const struct Lt__Pb__DataFragment *lt_dataset_fragment(const lt_dataset *ds, uint64_t id);
size_t		lt_dataset_fragment_index(const lt_dataset *ds, uint64_t id);
uint64_t	lt_dataset_count_rows(const lt_dataset *ds);

/* The operation of a transaction as Lance names it ("Append", "Delete", ...); "Unknown" otherwise, NULL for NULL. */
const char *lt_transaction_op_name(const struct Lt__Pb__Transaction *t);

#endif
