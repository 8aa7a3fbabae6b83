/*
 * lt_action.h — a commit as a composite of small actions, their footprints, and the
 * conflict rule between two concurrent commits (the contract; lt_action*.c implement it).
 *
 * A composite transaction is a list of actions (add fragment, add data file, set
 * deletion file, remove fragment, rewrite fragments, replace all, add/remove index,
 * update config, assert unique keys, assert no matching inserts), grouped into the
 * user actions that made them ("delete", "append", "create index", ...).  Each action
 * has a footprint: the coordinates it writes and the ones it depends on, over
 *
 *   ROWS(f, R)      liveness of rows R of fragment f (R absent: all of them)
 *   EXISTS(f)       fragment f is there at all
 *   LAYOUT(f)       fragment f's data files and row positions (what its offsets mean)
 *   DATA(f, x)      the values of field x in fragment f (x = -1: every field)
 *   FIELD(x)        field x's definition in the schema
 *   FIELD_META(x)   field x's metadata (where an unenforced primary key is marked)
 *   INDEX(name)     the index of that name
 *   CONFIG(key)     a table config key
 *   INSERT(K)       the row-insertion marker: rows were added, with keys in K (K absent:
 *                   unknown keys, an unqualified insert)
 *   KEYS(K)         a claim that keys K are new (AssertUniqueKeys)
 *   PREDICATE       a claim that no row matching a replace's predicate was added
 *   EVERYTHING      an operation that cannot be interpreted (or replaces the table)
 *
 * Two commits a and b conflict iff one's writes meet the other's writes or
 * dependencies: W(a) ∩ (W(b) ∪ D(b)) or W(b) ∩ (W(a) ∪ D(a)) — symmetric by
 * construction.  Coordinates meet when they name the same kind and fragment, field,
 * name (and rows intersect); EVERYTHING meets anything; INSERT(K) meets KEYS(K') unless
 * K and K' are known disjoint, and INSERT meets PREDICATE (the caller may then clear
 * the clash by testing the inserted fragment against the predicate).  INSERT never
 * meets INSERT: appends commute (new fragments are renumbered on rebase).
 *
 * The rule is chosen so that two commits that do not conflict commute: applying them
 * in either order to the manifest they both read gives the same manifest (up to the
 * ids of new fragments).  lt_model (below) is the manifest the property is stated on.
 *
 * Lowering (our composite to the legacy Operation Lance 8 reads) and lifting (a
 * committed legacy transaction, by lt_fdw or any Lance writer, to a composite) are
 * here too; a legacy operation that cannot be lifted faithfully (Merge, Project,
 * Restore, Overwrite, DataReplacement, an Update rewriting columns in place, a config
 * change this library cannot read, anything unknown) lifts to EVERYTHING: fail closed.
 */
#ifndef LT_ACTION_H
#define LT_ACTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <roaring/roaring.h>

#include "txn/lt_keys.h"
#include "util/lt_status.h"

struct lt_dataset;
struct Lt__Pb__Transaction;
struct Lt__Pb__DataFragment;

typedef enum lt_action_kind
{
	LT_ACT_ADD_FRAGMENT,		/* a new fragment: inserted rows, or rows moved by a rewrite */
	LT_ACT_ADD_DATA_FILE,		/* a data file for some fields of an existing fragment */
	LT_ACT_SET_DELETION_FILE,	/* rows of an existing fragment deleted (the deletion vector grows) */
	LT_ACT_REMOVE_FRAGMENT,		/* every row of an existing fragment deleted: the fragment goes */
	LT_ACT_REWRITE_FRAGMENTS,	/* fragments rewritten into new ones (compaction); rows keep their values */
	LT_ACT_REPLACE_ALL,			/* every fragment and index dropped (Overwrite, TRUNCATE) */
	LT_ACT_ADD_INDEX,			/* an index (segment) of that name, replacing one of the same name */
	LT_ACT_REMOVE_INDEX,
	LT_ACT_UPDATE_CONFIG,		/* a table config key set (value) or removed (value NULL) */
	LT_ACT_UPDATE_FIELD_METADATA,	/* metadata of some fields changed (where a primary key is marked) */
	LT_ACT_ASSERT_UNIQUE_KEYS,	/* precondition: the keys in the filter (NULL: every key) did not exist */
	LT_ACT_ASSERT_NO_MATCHING_INSERTS,	/* precondition: no row matching a replace's predicate was added */
	LT_ACT_UNINTERPRETED		/* a lifted operation this library cannot interpret */
} lt_action_kind;

/*
 * One action.  Pointer members are owned by the composite (copied in by the
 * constructors) except `keys` and `rows` as documented there.
 */
typedef struct lt_action
{
	lt_action_kind kind;
	uint64_t	fragment;		/* the fragment it acts on; ADD_FRAGMENT: the id it gets (provisional) */
	uint64_t	physical_rows;	/* ADD_FRAGMENT */
	char	   *path;			/* ADD_FRAGMENT / ADD_DATA_FILE: the (first) data file, the fragment's identity */
	int32_t    *fields;			/* ADD_FRAGMENT / ADD_DATA_FILE: fields in the file(s); ADD_INDEX: indexed fields;
								 * UPDATE_FIELD_METADATA: the fields; ASSERT_UNIQUE_KEYS: the key fields checked */
	size_t		n_fields;
	roaring_bitmap_t *rows;		/* SET_DELETION_FILE: the rows it deletes (owned); NULL: unknown, all */
	uint64_t   *frags;			/* ADD_INDEX: covered fragments; REWRITE_FRAGMENTS: the old fragments;
								 * ASSERT_UNIQUE_KEYS: the fragments whose keys were checked */
	size_t		n_frags;
	char	   *name;			/* ADD_INDEX / REMOVE_INDEX: index name; UPDATE_CONFIG: key */
	char	   *value;			/* UPDATE_CONFIG: the new value, NULL to remove the key */
	bool		moved;			/* ADD_FRAGMENT: rows moved by a rewrite, not inserted (no INSERT marker) */
	bool		new_layout;		/* SET_DELETION_FILE (lifted): the fragment's data files changed too */
	lt_key_filter *keys;		/* ADD_FRAGMENT: the inserted keys (NULL: unknown); ASSERT_UNIQUE_KEYS: the claim.
								 * Borrowed (a lifted composite owns its own: owns_keys) */
	const char *what;			/* UNINTERPRETED: the operation's name */
} lt_action;

/* A user action: actions [first, first + n) of the composite. */
typedef struct lt_user_action
{
	const char *what;			/* "append", "delete", "update", "replace", "create index", "compact", ... */
	size_t		first, n;
} lt_user_action;

typedef struct lt_composite
{
	lt_action  *actions;
	size_t		n_actions, cap_actions;
	lt_user_action *users;
	size_t		n_users, cap_users;
	const char *op;				/* lifted: the legacy operation's name ("Append", ...); ours: NULL */
	lt_key_filter **owned_keys;	/* filters a lifted composite decoded (freed with it) */
	size_t		n_owned_keys;
} lt_composite;

void		lt_composite_init(lt_composite *c);
void		lt_composite_clear(lt_composite *c);
/* Start a user action: the actions added next belong to it (what: a static string). */
lt_code		lt_composite_begin(lt_composite *c, const char *what, lt_error *err);

/* Constructors (copy their arguments; `rows` and `keys` as in lt_action). */
lt_code		lt_add_fragment(lt_composite *c, uint64_t id, uint64_t physical_rows, const char *path,
							const int32_t *fields, size_t n_fields, bool moved, lt_key_filter *keys,
							lt_error *err);
lt_code		lt_add_data_file(lt_composite *c, uint64_t fragment, const char *path, const int32_t *fields,
							 size_t n_fields, lt_error *err);
/* rows: ownership taken (NULL: unknown rows, all of them) */
lt_code		lt_set_deletion_file(lt_composite *c, uint64_t fragment, roaring_bitmap_t *rows, lt_error *err);
lt_code		lt_remove_fragment(lt_composite *c, uint64_t fragment, lt_error *err);
lt_code		lt_rewrite_fragments(lt_composite *c, const uint64_t *old, size_t n_old, lt_error *err);
lt_code		lt_replace_all(lt_composite *c, lt_error *err);
lt_code		lt_add_index(lt_composite *c, const char *name, const int32_t *fields, size_t n_fields,
						 const uint64_t *covered, size_t n_covered, lt_error *err);
lt_code		lt_remove_index(lt_composite *c, const char *name, lt_error *err);
lt_code		lt_update_config(lt_composite *c, const char *key, const char *value, lt_error *err);
lt_code		lt_update_field_metadata(lt_composite *c, const int32_t *fields, size_t n_fields, lt_error *err);
/* keys NULL: a claim about every key (a primary key being set: no row may be added meanwhile) */
lt_code		lt_assert_unique_keys(lt_composite *c, lt_key_filter *keys, lt_error *err);
/*
 * A primary key being set on `fields` after checking every row of fragments `checked`: a claim
 * about every key (as lt_assert_unique_keys(c, NULL)) that also depends on those fragments'
 * layout and key values (a concurrent rewrite of them voids the check).
 */
lt_code		lt_assert_key_checked(lt_composite *c, const int32_t *fields, size_t n_fields, const uint64_t *checked,
								  size_t n_checked, lt_error *err);
lt_code		lt_assert_no_matching_inserts(lt_composite *c, lt_error *err);
lt_code		lt_uninterpreted(lt_composite *c, const char *what, lt_error *err);

/* ---- footprints ------------------------------------------------------------------------ */

typedef enum lt_coord_kind
{
	LT_CO_ROWS,
	LT_CO_EXISTS,
	LT_CO_LAYOUT,
	LT_CO_DATA,
	LT_CO_FIELD,
	LT_CO_FIELD_META,
	LT_CO_INDEX,
	LT_CO_CONFIG,
	LT_CO_INSERT,
	LT_CO_KEYS,
	LT_CO_PREDICATE,
	LT_CO_EVERYTHING
} lt_coord_kind;

typedef struct lt_coord
{
	lt_coord_kind kind;
	uint64_t	fragment;		/* ROWS, EXISTS, LAYOUT, DATA; INSERT: the new fragment */
	int32_t		field;			/* DATA, FIELD, FIELD_META; -1: every field */
	const roaring_bitmap_t *rows;	/* ROWS: NULL = all rows */
	const char *name;			/* INDEX, CONFIG */
	lt_key_filter *keys;		/* INSERT (NULL: unknown keys), KEYS */
	size_t		action;			/* the action it comes from (index into the composite) */
} lt_coord;

/* A footprint borrows from its composite: keep the composite until the footprint is cleared. */
typedef struct lt_footprint
{
	lt_coord   *writes;
	size_t		n_writes, cap_writes;
	lt_coord   *deps;
	size_t		n_deps, cap_deps;
	const lt_composite *of;
} lt_footprint;

lt_code		lt_footprint_of(const lt_composite *c, lt_footprint *out, lt_error *err);
void		lt_footprint_clear(lt_footprint *f);

/* Where two footprints meet: `a` is the first argument's coordinate, `b` the second's. */
typedef struct lt_clash
{
	const lt_coord *a, *b;
	bool		a_writes;		/* a is a write (else b is, and a a dependency) */
} lt_clash;

/* Do a and b conflict?  (Symmetric; *why, when not NULL, gets the first clash found.) */
bool		lt_conflicts(const lt_footprint *a, const lt_footprint *b, lt_clash *why);

/*
 * Every clash, one at a time: start with *cursor = 0; returns false when there are no more.
 * (lt_conflicts is the first of these.)
 */
bool		lt_next_clash(const lt_footprint *a, const lt_footprint *b, size_t *cursor, lt_clash *why);

/*
 * The clash as a sentence for an error message: "concurrent commit (version V of NAME, a
 * Delete) deleted or updated some of the same rows of fragment 3"; `version` and `name` name
 * the other commit (b), `op` its operation ("Delete"; NULL: b's composite's op).
 */
void		lt_clash_describe(const lt_clash *why, const lt_composite *a, const lt_composite *b,
							  uint64_t version, const char *name, char *buf, size_t len);

/* ---- lifting a committed legacy transaction ------------------------------------------------ */

/*
 * The rows a committed Delete / Update newly deleted from fragment `updated` (its new state),
 * or NULL in *rows for "unknown: all of them" (fine where the caller does not touch that
 * fragment).  *rows is owned by the caller of lt_lift afterwards (the composite).
 */
typedef lt_code (*lt_lift_rows_fn) (void *arg, const struct Lt__Pb__DataFragment *updated,
									roaring_bitmap_t **rows, lt_error *err);

typedef struct lt_lift_source
{
	const struct lt_dataset *prev;	/* the version the transaction was applied to, or NULL (then every
									 * updated fragment counts as rewritten) */
	lt_lift_rows_fn rows;		/* NULL: every deletion is of unknown rows */
	void	   *rows_arg;
} lt_lift_source;

/*
 * The composite of a committed transaction (tx NULL: unreadable, lifts to UNINTERPRETED).
 * out->op is its operation's name.  Strings point into tx: keep it until out is cleared.
 */
lt_code		lt_lift(const struct Lt__Pb__Transaction *tx, const lt_lift_source *src, lt_composite *out,
					lt_error *err);

/* ---- lowering -------------------------------------------------------------------------- */

/* The legacy operation a composite of ours is written as (an lt_txn_op of lt_txn.h). */
typedef enum lt_lowered_op
{
	LT_LOWER_NONE,
	LT_LOWER_APPEND,			/* only inserts */
	LT_LOWER_DELETE,			/* only deletions and removals */
	LT_LOWER_UPDATE,			/* both, or inserts with a key claim (Lance carries the filter on Update) */
	LT_LOWER_OVERWRITE,			/* a REPLACE_ALL */
	LT_LOWER_CREATE_INDEX,		/* only index actions */
	LT_LOWER_REWRITE,			/* a REWRITE_FRAGMENTS */
	LT_LOWER_INVALID			/* a mix no legacy operation carries */
} lt_lowered_op;

lt_lowered_op lt_lower_op(const lt_composite *c);

/* ---- the manifest model: what apply acts on --------------------------------------------- */

typedef struct lt_model_frag
{
	uint64_t	id;
	char	   *path;			/* identity (the first data file) */
	uint64_t	physical_rows;
	roaring_bitmap_t *deleted;
	char	  **field_files;	/* per field slot: the data file holding it (ADD_DATA_FILE), or NULL */
	int32_t    *fields;
	size_t		n_fields;
} lt_model_frag;

typedef struct lt_model_index
{
	char	   *name;
	int32_t		field;
	uint64_t   *covered;		/* fragment ids */
	size_t		n_covered;
} lt_model_index;

typedef struct lt_model
{
	lt_model_frag *frags;		/* ascending ids */
	size_t		n_frags;
	uint64_t	next_id;
	lt_model_index *indexes;
	size_t		n_indexes;
	char	  **config_keys, **config_values;
	size_t		n_config;
	uint64_t	replaced;		/* how many REPLACE_ALL / UNINTERPRETED went by (the model cannot say more) */
} lt_model;

void		lt_model_clear(lt_model *m);
lt_code		lt_model_copy(const lt_model *m, lt_model *out, lt_error *err);
/* A fragment of the model by id, or NULL. */
lt_model_frag *lt_model_find(const lt_model *m, uint64_t id);

/*
 * apply(manifest, actions): the model after the composite, in place.  LT_ECONFLICT when an
 * action's dependency does not hold (a fragment it deletes from is gone, rows it deletes
 * already are) — what a conflicting commit would run into.
 */
lt_code		lt_apply(lt_model *m, const lt_composite *c, lt_error *err);

/* Same manifest?  New fragments are compared by identity (path), not by id. */
bool		lt_model_equal(const lt_model *a, const lt_model *b);

/* The model of an opened dataset version (deletion vectors read). */
lt_code		lt_model_of_dataset(struct lt_dataset *ds, lt_model *out, lt_error *err);

#endif
