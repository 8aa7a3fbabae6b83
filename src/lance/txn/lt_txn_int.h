/*
 * lt_txn_int.h — pieces of the commit layer (lt_txn.c, lt_txn_conflict.c, lt_txn_commit.c)
 * that they and the other commit kinds (lt_txn_index.c: CreateIndex) share.  Internal to src/lance/.
 */
#ifndef LT_TXN_INT_H
#define LT_TXN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "txn/lt_action.h"
#include "table/lt_dataset.h"
#include "util/lt_status.h"

struct Lt__Pb__Transaction;
struct Lt__Pb__Manifest;
struct Lt__Pb__IndexSection;
struct lt_commit_result;

/* Feature flags, base paths and storage version this library can write (else LT_EUNSUPPORTED). */
lt_code		lt_txn_check_writable(const lt_dataset *ds, const char *name, lt_error *err);
/* The dataset's root/prefix, for messages. */
void		lt_txn_dataset_name(const lt_dataset *ds, char *buf, size_t len);
/* The transaction that made version ds (inline or _transactions/), NULL when unreadable; free when *owned. */
struct Lt__Pb__Transaction *lt_txn_committed(lt_dataset *ds, bool *owned);
/*
 * The check of a schema change and of an index drop (lt_txn_index.c): version `next`, committed since the schema was
 * read, must be an Append (when append_ok), a Delete or a CreateIndex; else LT_ECONFLICT naming it.
 */
lt_code		lt_txn_check_schema_read(lt_dataset *next, const char *name, bool append_ok, lt_error *err);
/* d (initialised here) names the written file w, borrowing its name and field lists (lt_txn_create.c). */
struct Lt__Pb__DataFile;
struct lt_written_file;
void		lt_txn_borrow_data_file(struct Lt__Pb__DataFile *d, const struct lt_written_file *w);

/*
 * The conflict check every commit kind uses: lift the transaction that made `next` (prev: the
 * version before it), compare its footprint with ours (fo, the footprint of `ours`), and return
 * LT_ECONFLICT with a message naming next's version when they clash.  rows / rows_arg: lifting's
 * callback for the rows a Delete / Update deleted (NULL: unknown).  check_inserts: when ours has a
 * replace's predicate (AssertNoMatchingInserts) and they inserted rows, called once for the
 * version instead of conflicting outright (LT_OK clears it).
 */
lt_code		lt_txn_check_version(const lt_composite *ours, const lt_footprint *fo, lt_dataset *prev, lt_dataset *next,
								 const char *name, lt_lift_rows_fn rows, void *rows_arg,
								 lt_code (*check_inserts) (void *arg, lt_dataset *prev, lt_dataset *next,
														   lt_error *err),
								 void *check_arg, lt_error *err);

/* One kind of commit, driven by lt_txn_commit_loop. */
typedef struct lt_commit_kind
{
	const char *name;			/* the dataset, for messages */
	/* a version committed since our base, in order (prev: the one before it): LT_ECONFLICT when it conflicts */
	lt_code		(*check) (void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err);
	/* one attempt on base, the newest version: *lost_race when the manifest's slot was taken */
	lt_code		(*attempt) (void *arg, lt_dataset *base, struct lt_commit_result *res, bool *lost_race,
							lt_error *err);
	void	   *arg;
	/* keep the committed version (lt_commit_result.committed) when the base is ours and the commit adopted onto it */
	bool		keep_committed;
} lt_commit_kind;

/* Check, attempt, and after a lost race back off and go again (max_attempts <= 0: the default). */
lt_code		lt_txn_commit_loop(lt_dataset *read, const lt_commit_kind *kind, int max_attempts,
							   struct lt_commit_result *result, lt_error *err);

/*
 * Publish version base->version + 1: manifest (the base's with what changed, feature
 * flags set) stamped with version, time and writer; the transaction file of tx (uuid
 * and read version set), then the manifest only if its slot is free (LT_ECONFLICT and
 * *lost_race otherwise).  Crash-test fault points included.
 */
lt_code		lt_txn_publish(lt_dataset *base, const struct Lt__Pb__Manifest *manifest,
						   const struct Lt__Pb__IndexSection *indexes, struct Lt__Pb__Transaction *tx,
						   const char *name, bool *lost_race, lt_error *err);

/* ---- the transaction's state and its parts, shared by lt_txn.c, lt_txn_conflict.c and lt_txn_commit.c ---- */

#include <roaring/roaring.h>

#include "txn/lt_keys.h"
#include "txn/lt_txn.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

/* The field assignment a writer gave an added fragment for one tracked field (lt_txn_set_assignment). */
typedef struct added_assign
{
	int32_t		field_id;
	int			kind;			/* lt_assign_kind */
	roaring_bitmap_t *rows;		/* PARTIAL: owned */
} added_assign;

typedef struct added
{
	Lt__Pb__DataFragment frag;	/* frag.id: the provisional id; files owned */
	uint64_t   *row_ids;		/* ids kept by moved rows, or NULL */
	added_assign *assign;		/* per tracked field the writer spoke of (others: unassigned) */
	size_t		n_assign;
} added;

typedef enum jkind
{
	J_ADD,
	J_DELETE,
	J_REMOVE,
	J_KEYS,						/* lt_txn_assert_unique_keys */
	J_REPLACE,					/* lt_txn_replace_all */
	J_UNASSIGN					/* lt_txn_unassign_rows: field assignment cleared in place */
} jkind;

typedef struct jentry
{
	jkind		kind;
	uint64_t	frag_id;
	roaring_bitmap_t *rows;		/* J_DELETE */
	lt_key_filter *keys;		/* J_KEYS (owned) */
	bool		keep_indexes;	/* J_REPLACE */
	int32_t		field_id;		/* J_UNASSIGN (rows: the offsets cleared) */
} jentry;

/* Row id -> the version that created it, for rows this transaction deletes (they may move). */
typedef struct id_version
{
	uint64_t	id;
	uint64_t	version;
} id_version;

/* The read version's deletion vector of a fragment, loaded once. */
typedef struct base_dv
{
	uint64_t	id;
	roaring_bitmap_t *rows;
} base_dv;

/* What the journal does to one fragment (settled). */
typedef struct change
{
	uint64_t	id;
	const Lt__Pb__DataFragment *orig;	/* in the read version; NULL for an added fragment */
	added	   *add;
	uint64_t	physical_rows;
	roaring_bitmap_t *ours;		/* rows this transaction deletes that were live at the read version */
	roaring_bitmap_t *all;		/* the read version's deleted rows and ours */
	bool		gone;			/* every row deleted */
	/* the deletion file an earlier attempt wrote, and what it was merged onto */
	bool		written;
	lt_deletion_file df;
	uint64_t	written_frag_id;
	bool		onto_file;
	uint64_t	onto_rv, onto_id;
} change;

/* One own-writes view: a dataset over the read version's and the added fragments. */
typedef struct txn_view
{
	lt_dataset	ds;
	Lt__Pb__DataFragment **frags;
	Lt__Pb__DataFragment *copies;	/* fragments with rows deleted by us, with a synthetic DeletionFile */
	Lt__Pb__DeletionFile *dfs;
	lt_dv_override *dvs;
	uint32_t  **arrays;
	size_t		n_arrays;
	struct txn_view *older;
} txn_view;

struct lt_txn
{
	lt_dataset *read;
	char		name[512];		/* the dataset, for messages */
	uint64_t	first_new_id;	/* provisional id of the first added fragment */
	uint64_t	next_row_id;	/* the read version's */
	added	  **adds;
	size_t		n_adds, cap_adds;
	jentry	   *log;
	size_t		n_log, cap_log;
	size_t		last_mark;		/* the newest savepoint: entries from here on may absorb more rows */
	base_dv    *bases;
	size_t		n_bases, cap_bases;
	change	   *changes;		/* ascending by id */
	size_t		n_changes;
	bool		settled;
	bool		broken;
	bool		compaction;		/* lt_txn_mark_compaction: committed as a Rewrite */
	/* lt_txn_compaction_group: per old fragment its group; per group how many fragments it adds */
	uint64_t   *rw_old;
	uint32_t   *rw_old_group;
	size_t		n_rw_old;
	size_t	   *rw_new;
	size_t		n_rw_groups;
	/* creation versions of the rows this transaction deletes, by row id (stable row ids) */
	bool		created_loaded;
	id_version *created;
	size_t		n_created;
	/* own-writes views: the newest first; older ones stay readable until lt_txn_free */
	bool		view_valid;
	struct txn_view *views;
	/* field assignment states derived for the own-writes view (lt_txn_fragment_assignment), freed at the end */
	roaring_bitmap_t **derived;
	size_t		n_derived, cap_derived;
	/* fragments dropped by a rollback: a view taken before may still point at them */
	added	  **dropped;
	size_t		n_dropped, cap_dropped;
};

/* Allocations of one commit attempt, freed together. */
typedef struct arena
{
	void	  **p;
	size_t		n, cap;
	bool		oom;
} arena;

/*
 * Lifting's rows callback for the commit loop: the rows a committed Delete / Update newly
 * deleted from a fragment this transaction deletes from (its deletion vector in that version
 * less seen[i], what the versions before had); other fragments are "unknown" (we do not touch
 * them, so it does not matter).
 */
typedef struct rows_ctx
{
	lt_txn	   *t;
	lt_dataset *version;
	roaring_bitmap_t **seen;
} rows_ctx;

typedef struct attempt
{
	arena		a;
	Lt__Pb__DataFragment **frags;	/* the new version's */
	size_t		n_frags;
	Lt__Pb__DataFragment **updated;
	size_t		n_updated;
	uint64_t   *removed;
	size_t		n_removed;
	Lt__Pb__DataFragment **fresh;
	size_t		n_fresh;
	added	  **fresh_from;		/* per fresh fragment: the added one it is */
	uint64_t	rows_added, rows_deleted;
} attempt;

void	   *lt_txn_arena_alloc(arena *a, size_t size);
/* n items of size bytes, not zeroed: for an array the caller fills before reading (a table's fragments) */
void	   *lt_txn_arena_array(arena *a, size_t n, size_t size);
void		lt_txn_arena_free(arena *a);
uint64_t	lt_txn_next_fragment_id(const lt_dataset *ds);
lt_code		lt_txn_load_dv(lt_dataset *ds, const Lt__Pb__DataFragment *frag, roaring_bitmap_t **out, lt_error *err);
void		lt_txn_fault(lt_commit_point p);
lt_code		lt_txn_pack_msg(const ProtobufCMessage *m, ProtobufCBinaryData *out, arena *a, lt_error *err);
lt_code		lt_txn_encode_row_ids(uint64_t start, uint64_t n, const uint64_t *ids, ProtobufCBinaryData *out, arena *a, lt_error *err);
lt_code		lt_txn_encode_versions(uint64_t n, const uint64_t *versions, uint64_t version, ProtobufCBinaryData *out, arena *a,
				lt_error *err);
int		lt_txn_cmp_id_version(const void *a, const void *b);
uint64_t	lt_txn_created_at(const id_version *tab, size_t n, uint64_t id, uint64_t dflt);
lt_key_filter *lt_txn_asserted_keys(const lt_txn *t);
size_t		lt_txn_replace_at(const lt_txn *t);
lt_code		lt_txn_settle(lt_txn *t, lt_error *err);
change	   *lt_txn_change_of(lt_txn *t, uint64_t id);
bool		lt_txn_same_files(const Lt__Pb__DataFragment *a, const Lt__Pb__DataFragment *b);
lt_code		lt_txn_our_composite(lt_txn *t, const lt_commit_options *opts, lt_composite *out, lt_error *err);
lt_code		lt_txn_concurrent_rows(void *arg, const Lt__Pb__DataFragment *updated, roaring_bitmap_t **rows, lt_error *err);
lt_code		lt_txn_check_new_fragments(lt_dataset *prev, lt_dataset *v, const lt_commit_options *opts, lt_error *err);
/*
 * The config of the new version when it changes field assignment state (lt_txn_assign.c): the
 * base's entries with the roots of the tracked fields rewritten for the fresh fragments and the
 * fragments gone; *changed false when nothing changed (config untouched).  LT_ECONFLICT when the
 * set of tracked fields is not the read version's (a write planned without a field's tracking).
 */
lt_code		lt_txn_assignment_config(lt_txn *t, lt_dataset *base, const attempt *at, bool overwrite,
									 Lt__Pb__Manifest__ConfigEntry ***config, size_t *n_config, bool *changed,
									 lt_error *err);
void		lt_txn_assignment_config_free(Lt__Pb__Manifest__ConfigEntry **config, size_t n,
										  const Lt__Pb__Manifest *base);
void		lt_txn_free_added_assign(added *a);
void		lt_txn_free_derived(lt_txn *t);
/* Any J_UNASSIGN in the journal? */
bool		lt_txn_has_unassign(const lt_txn *t);
/*
 * A compaction's Rewrite (lt_txn_rewrite.c): its groups, and the index section of the new version
 * from sec (the retained one): segments covering rewritten fragments cover their new ones, with the
 * payloads remapped when they are row addresses (new segments, named in rewritten); the files
 * written are in built until lt_txn_rewrite_done (committed false: removed).
 */
typedef struct lt_rewrite_out
{
	struct Lt__Pb__Transaction__RewriteGroup **groups;
	size_t		n_groups;
	struct Lt__Pb__Transaction__RewrittenIndex **rewritten;
	size_t		n_rewritten;
	Lt__Pb__IndexSection *indexes;
	struct lt_built_index **built;
	size_t		n_built;
} lt_rewrite_out;
lt_code		lt_txn_rewrite_plan(lt_txn *t, lt_dataset *base, attempt *at, Lt__Pb__IndexSection *sec,
								lt_rewrite_out *out, lt_error *err);
void		lt_txn_rewrite_done(lt_dataset *base, lt_rewrite_out *out, bool committed);
lt_code		lt_txn_retained_indexes(Lt__Pb__IndexSection *sec, Lt__Pb__DataFragment *const *frags, size_t n, arena *a,
				 Lt__Pb__IndexSection **out, lt_error *err);

#endif
