/*
 * lt_txn_index.c — the CreateIndex commit: built index segments become
 * IndexMetadata entries of the next version's index section, recorded in a
 * CreateIndex transaction (lt_txn_index.h has the contract and the
 * conflict rules).
 *
 * Conflicts with concurrent commits are decided by footprints (lt_action.h): the build is one
 * AddIndex per segment, which writes the index's name and depends on the indexed column's
 * definition and on the layout and column data of every fragment it covers.
 *
 * IndexMetadata as Lance 8 writes it: uuid, fields, name, dataset_version
 * (the version the index was built from), fragment_bitmap (portable 32-bit
 * roaring of the fragment ids), index_details (an Any with the kind's
 * type_url and an empty message), index_version (present even when 0),
 * created_at (milliseconds since the epoch) and the files with their sizes.
 */
#include "txn/lt_txn_index.h"

#include <inttypes.h>
#include <roaring/roaring.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn_int.h"

static const char *
type_url(lt_index_kind k)
{
	switch (k)
	{
		case LT_INDEX_BTREE: return "/lance.table.BTreeIndexDetails";
		case LT_INDEX_BITMAP: return "/lance.table.BitmapIndexDetails";
		case LT_INDEX_LABEL_LIST: return "/lance.table.LabelListIndexDetails";
		default: return "/lance.table.ZoneMapIndexDetails";
	}
}

/* The protobuf form of the new segments (pointers into mem, freed by the caller). */
typedef struct new_meta
{
	int			n;
	Lt__Pb__IndexMetadata *meta;
	Lt__Pb__IndexMetadata **ptrs;
	Lt__Pb__Uuid *uuids;
	Lt__Pb__PbAny *details;
	Lt__Pb__IndexFile **files;	/* per segment: n_files entries */
	Lt__Pb__IndexFile ***file_ptrs;
	uint8_t   **bitmaps;
} new_meta;

static void
new_meta_free(new_meta *nm)
{
	for (int i = 0; i < nm->n; i++)
	{
		if (nm->files)
			lt_free(nm->files[i]);
		if (nm->file_ptrs)
			lt_free(nm->file_ptrs[i]);
		if (nm->bitmaps)
			lt_free(nm->bitmaps[i]);
	}
	lt_free(nm->meta);
	lt_free(nm->ptrs);
	lt_free(nm->uuids);
	lt_free(nm->details);
	lt_free(nm->files);
	lt_free(nm->file_ptrs);
	lt_free(nm->bitmaps);
}

static lt_code
make_meta(int n, const lt_built_index *const *built, new_meta *nm, lt_error *err)
{
	struct timespec now;
	uint64_t	ms;

	clock_gettime(CLOCK_REALTIME, &now);
	ms = (uint64_t) now.tv_sec * 1000 + (uint64_t) now.tv_nsec / 1000000;
	nm->n = n;
	nm->meta = lt_calloc((size_t) n, sizeof(Lt__Pb__IndexMetadata));
	nm->ptrs = lt_calloc((size_t) n, sizeof(Lt__Pb__IndexMetadata *));
	nm->uuids = lt_calloc((size_t) n, sizeof(Lt__Pb__Uuid));
	nm->details = lt_calloc((size_t) n, sizeof(Lt__Pb__PbAny));
	nm->files = lt_calloc((size_t) n, sizeof(Lt__Pb__IndexFile *));
	nm->file_ptrs = lt_calloc((size_t) n, sizeof(Lt__Pb__IndexFile **));
	nm->bitmaps = lt_calloc((size_t) n, sizeof(uint8_t *));
	if (!nm->meta || !nm->ptrs || !nm->uuids || !nm->details || !nm->files || !nm->file_ptrs || !nm->bitmaps)
		return lt_nomem(err);
	for (int i = 0; i < n; i++)
	{
		const lt_built_index *b = built[i];
		Lt__Pb__IndexMetadata *m = &nm->meta[i];
		roaring_bitmap_t *rb = roaring_bitmap_of_ptr(b->n_fragments, b->fragments);
		size_t		len;

		if (!rb)
			return lt_nomem(err);
		len = roaring_bitmap_portable_size_in_bytes(rb);
		if (!(nm->bitmaps[i] = lt_malloc(len)))
		{
			roaring_bitmap_free(rb);
			return lt_nomem(err);
		}
		roaring_bitmap_portable_serialize(rb, (char *) nm->bitmaps[i]);
		roaring_bitmap_free(rb);

		lt__pb__index_metadata__init(m);
		lt__pb__uuid__init(&nm->uuids[i]);
		nm->uuids[i].has_uuid = true;
		nm->uuids[i].uuid.data = (uint8_t *) b->uuid;
		nm->uuids[i].uuid.len = 16;
		m->uuid = &nm->uuids[i];
		m->n_fields = 1;
		m->fields = (int32_t *) &b->field_id;
		m->name = b->name;
		m->has_dataset_version = true;
		m->dataset_version = b->dataset_version;
		m->has_fragment_bitmap = true;
		m->fragment_bitmap.data = nm->bitmaps[i];
		m->fragment_bitmap.len = len;
		lt__pb__pb_any__init(&nm->details[i]);
		nm->details[i].type_url = (char *) (b->type_url ? b->type_url : type_url(b->kind));
		if (b->details_len)
		{
			nm->details[i].has_value = true;
			nm->details[i].value.data = b->details;
			nm->details[i].value.len = b->details_len;
		}
		m->index_details = &nm->details[i];
		m->has_index_version = true;
		m->index_version = b->index_version;
		m->has_created_at = true;
		m->created_at = ms;
		nm->files[i] = lt_calloc(b->n_files ? b->n_files : 1, sizeof(Lt__Pb__IndexFile));
		nm->file_ptrs[i] = lt_calloc(b->n_files ? b->n_files : 1, sizeof(Lt__Pb__IndexFile *));
		if (!nm->files[i] || !nm->file_ptrs[i])
			return lt_nomem(err);
		for (size_t k = 0; k < b->n_files; k++)
		{
			lt__pb__index_file__init(&nm->files[i][k]);
			nm->files[i][k].path = b->files[k];
			nm->files[i][k].has_size_bytes = true;
			nm->files[i][k].size_bytes = b->file_sizes[k];
			nm->file_ptrs[i][k] = &nm->files[i][k];
		}
		m->n_files = b->n_files;
		m->files = nm->file_ptrs[i];
		nm->ptrs[i] = m;
	}
	return LT_OK;
}

/*
 * The composite of the index build: one AddIndex per segment (its name, its column, the
 * fragments it covers); its footprint decides the conflicts with concurrent commits.
 */
static lt_code
index_composite(int n, const lt_built_index *const *built, lt_composite *out, lt_error *err)
{
	lt_code		rc;

	lt_composite_init(out);
	rc = lt_composite_begin(out, "create index", err);
	for (int i = 0; rc == LT_OK && i < n; i++)
	{
		const lt_built_index *b = built[i];
		uint64_t   *covered = lt_malloc(b->n_fragments ? b->n_fragments * sizeof(uint64_t) : 1);

		if (!covered)
		{
			rc = lt_nomem(err);
			break;
		}
		for (size_t k = 0; k < b->n_fragments; k++)
			covered[k] = b->fragments[k];
		rc = lt_add_index(out, b->name, &b->field_id, 1, covered, b->n_fragments, err);
		lt_free(covered);
	}
	if (rc != LT_OK)
		lt_composite_clear(out);
	return rc;
}

/* One attempt on top of base (the newest version, already checked). */
static lt_code
try_commit(const char *dsname, lt_dataset *base, int n, const lt_built_index *const *built, new_meta *nm,
		   lt_commit_result *res, bool *lost_race, lt_error *err)
{
	const Lt__Pb__IndexSection *old = base->index_section;
	size_t		n_old = old ? old->n_indices : 0;
	Lt__Pb__IndexMetadata **kept = lt_calloc(n_old + (size_t) n + 1, sizeof(Lt__Pb__IndexMetadata *));
	Lt__Pb__IndexMetadata **removed = lt_calloc(n_old + 1, sizeof(Lt__Pb__IndexMetadata *));
	size_t		n_kept = 0,
				n_removed = 0;
	Lt__Pb__IndexSection sec = LT__PB__INDEX_SECTION__INIT;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__CreateIndex ci = LT__PB__TRANSACTION__CREATE_INDEX__INIT;
	uint8_t		uuid[16];
	char		uuid_text[40];
	lt_code		rc = LT_OK;

	*lost_race = false;
	if (!kept || !removed)
	{
		rc = lt_nomem(err);
		goto out;
	}
	if ((rc = lt_txn_check_writable(base, dsname, err)) != LT_OK)
		goto out;
	/* an index of the same name: replaced when on the same column (as Lance's replace) */
	for (size_t i = 0; i < n_old; i++)
	{
		Lt__Pb__IndexMetadata *e = old->indices[i];
		bool		hit = false;

		for (int k = 0; k < n; k++)
		{
			if (!e->name || strcmp(e->name, built[k]->name) != 0)
				continue;
			if (e->n_fields != 1 || e->fields[0] != built[k]->field_id)
			{
				rc = lt_error_set(err, LT_EINVALID, "%s already has an index named \"%s\" on another column",
								  dsname, e->name);
				goto out;
			}
			hit = true;
		}
		if (hit)
			removed[n_removed++] = e;
		else
			kept[n_kept++] = e;
	}
	for (int k = 0; k < n; k++)
		kept[n_kept++] = nm->ptrs[k];
	sec.n_indices = n_kept;
	sec.indices = kept;

	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	ci.n_new_indices = (size_t) n;
	ci.new_indices = nm->ptrs;
	ci.n_removed_indices = n_removed;
	ci.removed_indices = removed;
	tx.operation_case = LT__PB__TRANSACTION__OPERATION_CREATE_INDEX;
	tx.create_index = &ci;
	if ((rc = lt_txn_publish(base, base->manifest, &sec, &tx, dsname, lost_race, err)) != LT_OK)
		goto out;
	res->op = LT_OP_CREATE_INDEX;
	res->version = base->version + 1;
out:
	lt_free(kept);
	lt_free(removed);
	return rc;
}

/* lt_commit_create_index's side of the commit loop */
typedef struct index_commit
{
	const char *dsname;
	int			n;
	const lt_built_index *const *built;
	new_meta   *nm;
	lt_composite ours;
	lt_footprint fo;
} index_commit;

/* A version committed since the build's: lift it, compare footprints (lt_action.h). */
static lt_code
index_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	index_commit *c = arg;

	return lt_txn_check_version(&c->ours, &c->fo, prev, next, c->dsname, NULL, NULL, NULL, NULL, err);
}

static lt_code
index_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	index_commit *c = arg;

	return try_commit(c->dsname, base, c->n, c->built, c->nm, res, lost_race, err);
}

lt_code
lt_commit_create_index(lt_dataset *read, int n, const lt_built_index *const *built, const lt_commit_options *opts,
					   lt_commit_result *result, lt_error *err)
{
	char		dsname[512];
	new_meta	nm = {0};
	index_commit c = {dsname, n, built, &nm};
	lt_commit_kind kind = {dsname, index_check, index_attempt, &c};
	lt_code		rc;

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, dsname, sizeof(dsname));
	if (n <= 0)
		return LT_OK;
	for (int i = 0; i < n; i++)
		if (built[i]->dataset_version != read->version)
			return lt_error_set(err, LT_EINVALID, "index \"%s\" was built from version %llu, not %llu", built[i]->name,
								(unsigned long long) built[i]->dataset_version, (unsigned long long) read->version);
	rc = make_meta(n, built, &nm, err);
	lt_composite_init(&c.ours);
	if (rc == LT_OK && (rc = index_composite(n, built, &c.ours, err)) == LT_OK)
		rc = lt_footprint_of(&c.ours, &c.fo, err);
	if (rc == LT_OK)
		rc = lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
	lt_footprint_clear(&c.fo);
	lt_composite_clear(&c.ours);
	new_meta_free(&nm);
	return rc;
}

/* ---- dropping an index ---------------------------------------------------------------------------- */

typedef struct drop_commit
{
	char		name[512];
	const char *index;
} drop_commit;

lt_code
lt_txn_check_schema_read(lt_dataset *next, const char *name, bool append_ok, lt_error *err)
{
	bool		owned = false;
	Lt__Pb__Transaction *tx = lt_txn_committed(next, &owned);
	const char *op = lt_transaction_op_name(tx);
	bool		fine = op && ((append_ok && strcmp(op, "Append") == 0) || strcmp(op, "Delete") == 0 ||
							  strcmp(op, "CreateIndex") == 0);
	lt_code		rc = LT_OK;

	if (!fine)
		rc = lt_error_set(err, LT_ECONFLICT, "version %llu of %s (%s) was committed since the schema was read",
						  (unsigned long long) next->version, name, op ? op : "unreadable transaction");
	if (owned && tx)
		lt__pb__transaction__free_unpacked(tx, lt_protobuf_allocator());
	return rc;
}

/* A version committed since ours was read: an index drop takes what a schema change without data files takes. */
static lt_code
drop_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	drop_commit *dc = arg;

	return lt_txn_check_schema_read(next, dc->name, true, err);
}

static lt_code
drop_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	drop_commit *dc = arg;
	const Lt__Pb__IndexSection *old = base->index_section;
	size_t		n_old = old ? old->n_indices : 0;
	Lt__Pb__IndexMetadata **kept = lt_calloc(n_old + 1, sizeof(*kept));
	Lt__Pb__IndexMetadata **removed = lt_calloc(n_old + 1, sizeof(*removed));
	Lt__Pb__IndexSection sec = LT__PB__INDEX_SECTION__INIT;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__CreateIndex ci = LT__PB__TRANSACTION__CREATE_INDEX__INIT;
	uint8_t		uuid[16];
	char		uuid_text[40];
	lt_code		rc = LT_OK;

	if (!kept || !removed)
		rc = lt_nomem(err);
	if (rc == LT_OK)
		rc = lt_txn_check_writable(base, dc->name, err);
	for (size_t i = 0; rc == LT_OK && i < n_old; i++)
	{
		if (old->indices[i]->name && strcmp(old->indices[i]->name, dc->index) == 0)
			removed[ci.n_removed_indices++] = old->indices[i];
		else
			kept[sec.n_indices++] = old->indices[i];
	}
	if (rc == LT_OK && ci.n_removed_indices == 0)
		rc = lt_error_set(err, LT_ENOTFOUND, "%s has no index \"%s\"", dc->name, dc->index);
	if (rc == LT_OK)
	{
		sec.indices = kept;
		ci.removed_indices = removed;
		lt_uuid_v4(uuid, uuid_text);
		tx.has_read_version = true;
		tx.read_version = base->version;
		tx.uuid = uuid_text;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_CREATE_INDEX;
		tx.create_index = &ci;
		rc = lt_txn_publish(base, base->manifest, sec.n_indices ? &sec : NULL, &tx, dc->name, lost_race, err);
	}
	if (rc == LT_OK)
	{
		res->op = LT_OP_CREATE_INDEX;
		res->version = base->version + 1;
	}
	lt_free(kept);
	lt_free(removed);
	return rc;
}

lt_code
lt_commit_drop_index(lt_dataset *read, const char *name, const lt_commit_options *opts, lt_commit_result *result,
					 lt_error *err)
{
	drop_commit dc = {{0}};
	lt_commit_kind kind = {dc.name, drop_check, drop_attempt, &dc};

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, dc.name, sizeof(dc.name));
	dc.index = name;
	return lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
}
