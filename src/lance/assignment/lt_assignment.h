/*
 * lt_assignment.h — field assignment state (is_assigned(field)), the Lance community's Field
 * Assignment proposal as lt_fdw stores it (docs/field-assignment.md has the why).
 *
 * Per tracked field (by its stable field id) and per fragment a version says which physical rows
 * hold an assigned value: none, all, or a partial set (a roaring bitmap of physical offsets).
 * A version's state is:
 *   - a manifest config entry  "lt_fdw.assignment.field.<field id>" = "<root file>"  per tracked
 *     field (Lance engines carry config entries they do not know and otherwise ignore them);
 *   - the root file  _assignment/<root file>: the fragment entries of that field, immutable;
 *   - for each partial entry a bitmap file  _assignment/<bitmap file>, immutable, shared by every
 *     root that keeps the entry (a new version rewrites the root, never a bitmap it did not touch);
 *   - the writer feature flag LT_FLAG_FIELD_ASSIGNMENT, so that a Lance engine (which does not know
 *     the bit) refuses to write the dataset — a write would lose the state — while reading it.
 * A fragment without an entry is unassigned; deleted rows keep their bits (a deletion never rewrites
 * the state; scans skip deleted rows anyway).
 */
#ifndef LT_ASSIGNMENT_H
#define LT_ASSIGNMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/lt_dataset.h"
#include "util/lt_status.h"

struct roaring_bitmap_s;

/*
 * The writer feature flag of a dataset with assignment state.  Lance allocates its flags upward
 * from bit 0 (6 used by Lance 12); the top byte is far from them, so a future Lance is unlikely to
 * give this bit another meaning.  Lance engines refuse to write a dataset whose writer flags they
 * do not know and still read it (reader flags are untouched).
 */
#define LT_FLAG_FIELD_ASSIGNMENT	(UINT64_C(1) << 56)

/* Config key of a tracked field: this prefix and the decimal field id. */
#define LT_ASSIGN_CONFIG_PREFIX		"lt_fdw.assignment.field."
/* Where the root and bitmap files live, relative to the dataset. */
#define LT_ASSIGN_DIR				"_assignment/"
#define LT_ASSIGN_DIR_NAME			"_assignment"	/* the same, as lt_cleanup lists it */

typedef enum lt_assign_kind
{
	LT_ASSIGN_NONE = 0,			/* no row of the fragment is assigned */
	LT_ASSIGN_ALL = 1,			/* every row is */
	LT_ASSIGN_PARTIAL = 2		/* the rows in the bitmap are */
} lt_assign_kind;

typedef struct lt_assign_entry
{
	uint64_t	fragment_id;
	lt_assign_kind kind;
	char	   *bitmap_file;	/* PARTIAL: its file under _assignment/ (NULL: new, not written yet) */
	struct roaring_bitmap_s *rows;	/* PARTIAL: loaded on first use, or given by a writer */
} lt_assign_entry;

/* One tracked field's state at one version. */
typedef struct lt_assign_field
{
	int32_t		field_id;
	char	   *root_file;		/* the root it was read from (NULL: none yet) */
	lt_assign_entry *entries;	/* ascending by fragment id, none of kind NONE */
	size_t		n_entries, cap_entries;
	lt_store   *store;			/* where the bitmaps are read from (borrowed) */
	char	   *prefix;			/* the dataset's prefix */
} lt_assign_field;

/* The field id a config key tracks, or false when the key is not an assignment key. */
bool		lt_assign_config_key(const char *key, int32_t *field_id);

/* Whether ds tracks field_id (its root file name in *root when it does; borrowed from ds). */
bool		lt_assign_is_tracked(const lt_dataset *ds, int32_t field_id, const char **root);

/* Any tracked field at all? */
bool		lt_assign_any(const lt_dataset *ds);

/*
 * The state of field_id at version ds (*out NULL when the field is not tracked).  Reads the root
 * file only; partial bitmaps are read when lt_assign_fragment asks for them.  A root that does not
 * parse, or names another field, is LT_ECORRUPT naming the file.
 */
lt_code		lt_assign_load(const lt_dataset *ds, int32_t field_id, lt_assign_field **out, lt_error *err);
void		lt_assign_free(lt_assign_field *f);

/*
 * What fragment_id's rows are: *kind, and for PARTIAL the bitmap of assigned physical offsets in
 * *rows (owned by f).  physical_rows bounds the offsets (a bitmap with an offset past it is
 * LT_ECORRUPT).
 */
lt_code		lt_assign_fragment(lt_assign_field *f, uint64_t fragment_id, uint64_t physical_rows, lt_assign_kind *kind,
							   const struct roaring_bitmap_s **rows, lt_error *err);

/* fragment_id's entry, or NULL (unassigned). */
const lt_assign_entry *lt_assign_entry_of(const lt_assign_field *f, uint64_t fragment_id);
/* Do two states (NULL: untracked) say the same of fragment_id?  (Entries read from roots; no bitmap is read.) */
bool		lt_assign_same_entry(const lt_assign_field *a, const lt_assign_field *b, uint64_t fragment_id);

/* Set fragment_id's entry (rows: PARTIAL's offsets, ownership taken; normalised: empty -> NONE). */
lt_code		lt_assign_set(lt_assign_field *f, uint64_t fragment_id, lt_assign_kind kind, struct roaring_bitmap_s *rows,
						  uint64_t physical_rows, lt_error *err);
/* Drop the entries of fragments not in keep (ascending ids); true in *changed when any went. */
void		lt_assign_retain(lt_assign_field *f, const uint64_t *keep, size_t n_keep, bool *changed);

/* A new, empty state of field_id for dataset ds (tracked with no assigned row). */
lt_code		lt_assign_new(const lt_dataset *ds, int32_t field_id, lt_assign_field **out, lt_error *err);

/*
 * Write f's new bitmaps and a new root file under _assignment/ of ds (new names, never an existing
 * file); *root_file gets the root's name (lt_free).  Entries read from an older root keep their
 * bitmap files.
 */
lt_code		lt_assign_write(lt_assign_field *f, char **root_file, lt_error *err);

/*
 * The files version ds's assignment state references, relative to the dataset ("_assignment/<root>" and
 * the partial entries' bitmaps): what lt_cleanup keeps (an lt_cleanup_refs_fn).  A root that does not
 * parse is LT_ECORRUPT: its bitmaps cannot be told from orphans, so nothing is removed.
 */
lt_code		lt_assign_referenced_files(const lt_dataset *ds, char ***paths, size_t *n, lt_error *err);

/* The encodings (for the unit and fuzz tests; lt_assign_load / lt_assign_write use them). */
uint64_t	lt_assign_checksum(const uint8_t *p, size_t n);	/* the trailing checksum: FNV-1a 64 of the bytes before */
lt_code		lt_assign_root_encode(const lt_assign_field *f, uint8_t **buf, size_t *len, lt_error *err);
lt_code		lt_assign_root_decode(const uint8_t *buf, size_t len, const char *what, lt_assign_field *f,
								  lt_error *err);
lt_code		lt_assign_bitmap_encode(const struct roaring_bitmap_s *rows, uint8_t **buf, size_t *len, lt_error *err);
lt_code		lt_assign_bitmap_decode(const uint8_t *buf, size_t len, const char *what, uint64_t physical_rows,
									struct roaring_bitmap_s **rows, lt_error *err);

#endif							/* LT_ASSIGNMENT_H */
