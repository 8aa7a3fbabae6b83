/*
 * lt_txn_commit.c — committing a transaction: one attempt writes the deletion
 * files, the row-id and version sequences, the transaction file and the next
 * manifest (only if absent; lt_txn_publish), and the commit loop rebases over
 * concurrent commits and backs off after a lost race.
 */
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

#include <inttypes.h>
#include <roaring/roaring.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "txn/lt_action.h"
#include "util/lt_alloc.h"
#include "util/lt_bytes.h"
#include "txn/lt_keys.h"
#include "util/lt_random.h"
#include "table/lt_cleanup.h"
#include "table/lt_roaring.h"
#include "table/lt_rowids.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

#define DEFAULT_MAX_ATTEMPTS 20

/* ---- one commit attempt --------------------------------------------------- */

/* The creation versions of the rows we delete, from the read version's inline sequences. */
static lt_code
load_created_at(lt_txn *t, lt_error *err)
{
	size_t		cap = 0;

	for (size_t i = 0; i < t->n_changes; i++)
		if (t->changes[i].orig)
			cap += roaring_bitmap_get_cardinality(t->changes[i].ours);
	if (!(t->created = lt_malloc((cap ? cap : 1) * sizeof(id_version))))
		return lt_nomem(err);
	for (size_t i = 0; i < t->n_changes; i++)
	{
		const change *c = &t->changes[i];
		const Lt__Pb__DataFragment *f = c->orig;
		uint64_t   *ids = NULL;
		lt_version_seq *vs = NULL;
		uint64_t	n = roaring_bitmap_get_cardinality(c->ours);
		uint32_t   *offs = NULL;
		lt_code		rc;

		if (!f || f->row_id_sequence_case != LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS ||
			f->created_at_version_sequence_case !=
			LT__PB__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS)
			continue;
		rc = lt_rowids_decode(f->inline_row_ids.data, f->inline_row_ids.len, f->physical_rows, &ids, err);
		if (rc == LT_OK)
			rc = lt_version_seq_parse(f->inline_created_at_versions.data, f->inline_created_at_versions.len,
									  f->physical_rows, &vs, err);
		if (rc == LT_OK && !(offs = lt_malloc(n ? n * sizeof(uint32_t) : 1)))
			rc = lt_nomem(err);
		if (rc == LT_OK)
		{
			roaring_bitmap_to_uint32_array(c->ours, offs);
			for (uint64_t k = 0; k < n; k++)
			{
				t->created[t->n_created].id = ids[offs[k]];
				t->created[t->n_created].version = lt_version_seq_at(vs, offs[k]);
				t->n_created++;
			}
		}
		lt_free(offs);
		lt_free(ids);
		lt_version_seq_free(vs);
		if (rc != LT_OK)
		{
			lt_error_prefix(err, "fragment %llu of %s", (unsigned long long) f->id, t->name);
			return rc;
		}
	}
	qsort(t->created, t->n_created, sizeof(id_version), lt_txn_cmp_id_version);
	t->created_loaded = true;
	return LT_OK;
}

/* A deletion file for change c merged onto its fragment `now` of the base (the base's rows in `base`). */
static lt_code
deletion_file_for(lt_txn *t, change *c, uint64_t frag_id, const Lt__Pb__DataFragment *now,
				  const roaring_bitmap_t *final, uint64_t base_version, arena *a,
				  Lt__Pb__DeletionFile **out, lt_error *err)
{
	const Lt__Pb__DeletionFile *od = now ? now->deletion_file : NULL;
	Lt__Pb__DeletionFile *df;

	/* an earlier attempt's file still holds exactly these rows when it merged onto the same file */
	if (!(c->written && c->written_frag_id == frag_id && c->onto_file == (od != NULL) &&
		  (!od || (c->onto_rv == od->read_version && c->onto_id == od->id))))
	{
		uint64_t	n = roaring_bitmap_get_cardinality(final);
		uint32_t   *arr = lt_malloc(n ? n * sizeof(uint32_t) : 1);
		lt_code		rc;

		if (!arr)
			return lt_nomem(err);
		roaring_bitmap_to_uint32_array(final, arr);
		rc = lt_deletion_write(t->read->store, t->read->prefix, frag_id, base_version, arr, n, &c->df, err);
		lt_free(arr);
		LT_TRY(rc);
		c->written = true;
		c->written_frag_id = frag_id;
		c->onto_file = od != NULL;
		c->onto_rv = od ? od->read_version : 0;
		c->onto_id = od ? od->id : 0;
	}
	if (!(df = lt_txn_arena_alloc(a, sizeof(*df))))
		return lt_nomem(err);
	lt__pb__deletion_file__init(df);
	df->has_file_type = true;
	df->file_type = c->df.type == LT_DELETION_BITMAP ? LT__PB__DELETION_FILE__FILE_TYPE__BITMAP
		: LT__PB__DELETION_FILE__FILE_TYPE__ARROW_ARRAY;
	df->has_read_version = df->has_id = df->has_num_deleted_rows = true;
	df->read_version = c->df.read_version;
	df->id = c->df.id;
	df->num_deleted_rows = c->df.num_deleted_rows;
	*out = df;
	return LT_OK;
}

/* The next version's fragments on top of base (version B), deletion files written. */
static lt_code
build_fragments(lt_txn *t, lt_dataset *base, attempt *at, uint64_t *next_row_id, uint32_t *max_id, lt_error *err)
{
	uint64_t	next_id = lt_txn_next_fragment_id(base);
	uint64_t	new_version = base->version + 1;
	size_t		cap = base->n_fragments + t->n_adds;
	arena	   *a = &at->a;

	/*
	 * an append only (no fragment changed) on a base with room after its fragments: the new ones go there, and
	 * the base's array is the new version's (nothing copied; past n_fragments the base never looks)
	 */
	bool		in_place = t->n_changes == 0 && base->frag_cap >= cap && base->fragments == base->manifest->fragments;

	at->frags = in_place ? base->fragments : lt_txn_arena_array(a, cap ? cap : 1, sizeof(Lt__Pb__DataFragment *));
	at->updated = lt_txn_arena_alloc(a, (t->n_changes ? t->n_changes : 1) * sizeof(Lt__Pb__DataFragment *));
	at->removed = lt_txn_arena_alloc(a, (t->n_changes ? t->n_changes : 1) * sizeof(uint64_t));
	at->fresh = lt_txn_arena_alloc(a, (t->n_adds ? t->n_adds : 1) * sizeof(Lt__Pb__DataFragment *));
	at->fresh_from = lt_txn_arena_alloc(a, (t->n_adds ? t->n_adds : 1) * sizeof(added *));
	if (a->oom)
		return lt_nomem(err);

	/*
	 * the base's fragments as they are, then the ones ours delete from replaced (or taken out): the work
	 * grows with the fragments this transaction touched, not with the table (a pointer copy aside)
	 */
	if (base->n_fragments && !in_place)
		memcpy(at->frags, base->fragments, base->n_fragments * sizeof(*at->frags));
	at->n_frags = base->n_fragments;
	for (size_t k = 0; k < t->n_changes; k++)
	{
		change	   *c = &t->changes[k];
		size_t		i;
		Lt__Pb__DataFragment *f;
		roaring_bitmap_t *now_rows, *final;
		Lt__Pb__DataFragment *copy;
		lt_code		rc;

		if (!c->orig || roaring_bitmap_is_empty(c->ours) ||
			(i = lt_dataset_fragment_index(base, c->id)) >= base->n_fragments)
			continue;			/* a fragment gone from the base: a conflict, below */
		f = base->fragments[i];
		if (!lt_txn_same_files(f, c->orig))
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) rewrote fragment %llu, which this transaction deletes from",
								(unsigned long long) base->version, t->name, (unsigned long long) f->id);
		LT_TRY(lt_txn_load_dv(base, f, &now_rows, err));
		if (roaring_bitmap_intersect(now_rows, c->ours))
		{
			roaring_bitmap_free(now_rows);
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) deleted or updated some of the same rows of fragment %llu",
								(unsigned long long) base->version, t->name, (unsigned long long) f->id);
		}
		final = roaring_bitmap_or(now_rows, c->ours);
		roaring_bitmap_free(now_rows);
		if (!final)
			return lt_nomem(err);
		at->rows_deleted += roaring_bitmap_get_cardinality(c->ours);
		if (roaring_bitmap_get_cardinality(final) >= f->physical_rows)
		{
			roaring_bitmap_free(final);
			at->removed[at->n_removed++] = f->id;
			at->frags[i] = NULL;
			continue;
		}
		if (!(copy = lt_txn_arena_alloc(a, sizeof(*copy))))
			rc = lt_nomem(err);
		else
		{
			*copy = *f;
			rc = deletion_file_for(t, c, f->id, f, final, base->version, a, &copy->deletion_file, err);
		}
		roaring_bitmap_free(final);
		LT_TRY(rc);
		at->frags[i] = copy;
		at->updated[at->n_updated++] = copy;
	}
	if (at->n_removed)
	{
		size_t		n = 0;

		for (size_t i = 0; i < at->n_frags; i++)
			if (at->frags[i])
				at->frags[n++] = at->frags[i];
		at->n_frags = n;
	}
	/* fragments of the read version we delete from must still be there */
	for (size_t i = 0; i < t->n_changes; i++)
		if (t->changes[i].orig && !roaring_bitmap_is_empty(t->changes[i].ours) && !lt_dataset_fragment(base, t->changes[i].id))
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) removed fragment %llu, which this transaction deletes from",
								(unsigned long long) base->version, t->name, (unsigned long long) t->changes[i].id);

	/* the added fragments: ids after the base's, row ids after its next_row_id */
	for (size_t k = 0; k < t->n_adds; k++)
	{
		added	   *ad = t->adds[k];
		change	   *c = lt_txn_change_of(t, ad->frag.id);
		Lt__Pb__DataFragment *copy;
		uint64_t	rows = ad->frag.physical_rows;

		if (c && c->gone)
			continue;
		if (next_id > UINT32_MAX)
			return lt_error_set(err, LT_EINVALID, "%s has run out of fragment ids", t->name);
		if (!(copy = lt_txn_arena_alloc(a, sizeof(*copy))))
			return lt_nomem(err);
		*copy = ad->frag;
		copy->has_id = true;
		copy->id = next_id++;
		copy->row_id_sequence_case = LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET;
		if (base->stable_row_ids)
		{
			LT_TRY(lt_txn_encode_row_ids(*next_row_id, rows, ad->row_ids, &copy->inline_row_ids, a, err));
			copy->row_id_sequence_case = LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS;
			if (!ad->row_ids)
				*next_row_id += rows;
			LT_TRY(lt_txn_encode_versions(rows, NULL, new_version, &copy->inline_last_updated_at_versions, a, err));
			copy->last_updated_at_version_sequence_case =
				LT__PB__DATA_FRAGMENT__LAST_UPDATED_AT_VERSION_SEQUENCE_INLINE_LAST_UPDATED_AT_VERSIONS;
			if (ad->row_ids)
			{
				/* moved rows keep the version that created them */
				uint64_t   *vs = lt_txn_arena_alloc(a, rows * sizeof(uint64_t));

				if (!vs)
					return lt_nomem(err);
				if (!t->created_loaded)
					LT_TRY(load_created_at(t, err));
				for (uint64_t i = 0; i < rows; i++)
					vs[i] = lt_txn_created_at(t->created, t->n_created, ad->row_ids[i], new_version);
				LT_TRY(lt_txn_encode_versions(rows, vs, new_version, &copy->inline_created_at_versions, a, err));
			}
			else
				LT_TRY(lt_txn_encode_versions(rows, NULL, new_version, &copy->inline_created_at_versions, a, err));
			copy->created_at_version_sequence_case =
				LT__PB__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS;
		}
		if (c && !roaring_bitmap_is_empty(c->ours))
		{
			LT_TRY(deletion_file_for(t, c, copy->id, NULL, c->ours, base->version, a, &copy->deletion_file, err));
			rows -= roaring_bitmap_get_cardinality(c->ours);
		}
		at->rows_added += rows;
		at->frags[at->n_frags++] = copy;
		at->fresh_from[at->n_fresh] = ad;
		at->fresh[at->n_fresh++] = copy;
	}
	{
		uint64_t	m = base->manifest->has_max_fragment_id ? base->manifest->max_fragment_id : 0;

		if (next_id > 0 && next_id - 1 > m)
			m = next_id - 1;
		*max_id = (uint32_t) m;
	}
	return LT_OK;
}

static lt_code publish(lt_dataset *base, const Lt__Pb__Manifest *manifest, const Lt__Pb__IndexSection *indexes,
					   Lt__Pb__Transaction *tx, const char *name, bool *lost_race, size_t kept,
					   lt_adoption **adopt, lt_error *err);

static size_t
varint_len(uint64_t v)
{
	size_t		n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

static lt_code
write_hint(lt_dataset *base, uint64_t version)
{
	char		json[64];
	char	   *path = lt_dataset_path(base, "_versions/latest_version_hint.json");
	lt_error	ignore;

	/* as Lance: where listings are ordered (S3), readers find the latest with one LIST and need no hint */
	if (base->store->list_ordered)
	{
		lt_free(path);
		return LT_OK;
	}
	if (!path)
		return LT_ENOMEM;
	snprintf(json, sizeof(json), "{\"version\":%" PRIu64 "}", version);
	/* a hint: readers check it against the listing, so it need not survive a crash */
	lt_store_put_unsynced(base->store, path, (const uint8_t *) json, strlen(json), &ignore);
	lt_free(path);
	return LT_OK;
}

/*
 * A catalog publishes the manifest (lt_store.publish_manifest): written under a staging name first, which
 * is removed again when the catalog does not take it (it may have moved it into place when it does).
 */
static lt_code
publish_staged(lt_dataset *base, uint64_t version, const char *uuid, const char *man_path, const uint8_t *buf,
			   uint64_t len, lt_error *err)
{
	char	   *rel = lt_asprintf("_versions/%" PRIu64 "-%s.staged", version, uuid);
	char	   *staged = rel ? lt_dataset_path(base, rel) : NULL;
	lt_code		rc;

	lt_free(rel);
	if (staged == NULL)
		return lt_nomem(err);
	rc = lt_store_put(base->store, staged, buf, len, err);
	if (rc == LT_OK)
		rc = base->store->publish_manifest(base->store->publish_arg, version, staged, man_path, err);
	if (rc != LT_OK)
		lt_store_remove(base->store, staged, NULL);
	lt_free(staged);
	return rc;
}

/*
 * Publish version base->version + 1: the manifest m (the base's with what changed,
 * feature flags set) stamped with its version, time and writer, and the
 * transaction tx (uuid and read version set); indexes is its index section.  The
 * transaction file goes first (unless the dataset disables them, or an Append), then the manifest
 * is created only if its slot is free: LT_ECONFLICT with *lost_race when another
 * writer took it (our transaction file is removed again; after other failures it
 * is an orphan for lt_cleanup, since the manifest may have landed after all).  Every commit kind goes
 * through here, so the crash tests' lt_txn_fault points cover them all.
 */
/*
 * What a published append wrote, for lt_dataset_adopt: the fragments from kept on (the appended ones) packed as
 * the manifest's entries, the manifest without fragments, the sections as the file holds them (head: the file's
 * first bytes). Packed again rather than cut from the file: the work is that of the new fragments, not of the
 * whole manifest. NULL when out of memory (the commit stands; the next reader advances as usual).
 */
static lt_adoption *
adoption_of(const lt_dataset *base, const Lt__Pb__Manifest *m, size_t kept, const uint8_t *head, uint64_t file_size)
{
	Lt__Pb__Manifest mm = *m;
	size_t		mlen,
				ilen = 0,
				tlen = 0,
				flen = 0;
	uint64_t	pos = 0;
	lt_adoption *a;
	uint8_t    *w;

	mm.n_fragments = 0;
	mm.fragments = NULL;
	mlen = lt__pb__manifest__get_packed_size(&mm);
	if (m->has_index_section)
	{
		ilen = lt_le32(head);
		pos = 4 + ilen;
	}
	if (m->has_transaction_section)
		tlen = lt_le32(head + pos);
	for (size_t i = kept; i < m->n_fragments; i++)
	{
		size_t		sz = lt__pb__data_fragment__get_packed_size(m->fragments[i]);

		flen += 1 + varint_len(sz) + sz;
	}
	if (!(a = lt_malloc(sizeof(lt_adoption) + flen + mlen + ilen + tlen)))
		return NULL;
	a->from_version = base->version;
	a->version = m->version;
	a->file_size = file_size;
	a->n_new = m->n_fragments - kept;
	a->frags_len = flen;
	a->msg_len = mlen;
	a->isec_len = ilen;
	a->tx_len = tlen;
	a->has_isec = m->has_index_section;
	a->has_tx = m->has_transaction_section;
	w = a->bytes;
	for (size_t i = kept; i < m->n_fragments; i++)
	{
		size_t		sz = lt__pb__data_fragment__get_packed_size(m->fragments[i]);

		*w++ = (uint8_t) (LT_MANIFEST_FIELD_FRAGMENTS << 3 | 2);
		for (size_t v = sz; ; v >>= 7)
		{
			*w++ = (uint8_t) (v < 0x80 ? v : (v & 0x7f) | 0x80);
			if (v < 0x80)
				break;
		}
		w += lt__pb__data_fragment__pack(m->fragments[i], w);
	}
	w += lt__pb__manifest__pack(&mm, w);
	if (ilen)
		memcpy(w, head + 4, ilen);
	if (tlen)
		memcpy(w + ilen, head + pos + 4, tlen);
	return a;
}

lt_code
lt_txn_publish(lt_dataset *base, const Lt__Pb__Manifest *manifest, const Lt__Pb__IndexSection *indexes,
			   Lt__Pb__Transaction *tx, const char *name, bool *lost_race, lt_error *err)
{
	return publish(base, manifest, indexes, tx, name, lost_race, 0, NULL, err);
}

/* lt_txn_publish; with adopt, what the fragments from kept on add (adoption_of) */
static lt_code
publish(lt_dataset *base, const Lt__Pb__Manifest *manifest, const Lt__Pb__IndexSection *indexes,
		Lt__Pb__Transaction *tx, const char *name, bool *lost_race, size_t kept, lt_adoption **adopt,
		lt_error *err)
{
	Lt__Pb__Manifest m = *manifest;
	Lt__Pb__PbTimestamp ts = LT__PB__PB_TIMESTAMP__INIT;
	Lt__Pb__WriterVersion wv = LT__PB__WRITER_VERSION__INIT;
	ProtobufCBinaryData packed = {0};
	lt_manifest_prev prev;
	char		man_name[64];
	char	   *txn_name,
			   *txn_path = NULL,
			   *man_path = NULL,
			   *rel;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	lt_part		parts[3];
	int			n_parts = 0;
	struct timespec now;
	lt_code		rc = LT_OK;

	*lost_race = false;
	m.has_version = true;
	m.version = base->version + 1;
	clock_gettime(CLOCK_REALTIME, &now);
	ts.has_seconds = ts.has_nanos = true;
	ts.seconds = now.tv_sec;
	ts.nanos = (int32_t) now.tv_nsec;
	m.timestamp = &ts;
	m.tag = NULL;
	wv.library = LT_WRITER_LIBRARY;
	wv.version = LT_WRITER_VERSION;
	m.writer_version = &wv;
	if (!(txn_name = lt_asprintf("%" PRIu64 "-%s.txn", base->version, tx->uuid)))
		return lt_nomem(err);
	/*
	 * An Append writes no transaction file (one file fewer per small commit: issue 20): the manifest carries the
	 * transaction inline, which is what Lance's readers (read_transaction prefers the inline section; its
	 * conflict resolution reads it so) and lt_fdw's own (transaction_of) use; Lance's flag 32 opts a
	 * dataset's other commits out as well.  Other commits keep the file for the tools that read
	 * _transactions/ (an Update's inserted-keys filter: lt-inspect key-filter).
	 */
	m.transaction_file = (m.writer_feature_flags & LT_FLAG_DISABLE_TXN_FILE) ||
		tx->operation_case == LT__PB__TRANSACTION__OPERATION_APPEND ? NULL : txn_name;
	if (m.transaction_file)
	{
		rel = lt_asprintf("_transactions/%s", txn_name);
		txn_path = rel ? lt_dataset_path(base, rel) : NULL;
		lt_free(rel);
		rc = txn_path ? lt_txn_pack_msg(&tx->base, &packed, NULL, err) : lt_nomem(err);
		if (rc == LT_OK)
			/* not fsync'd: the manifest carries the transaction inline (its durable copy) */
			rc = lt_store_put_unsynced(base->store, txn_path, packed.data, packed.len, err);
		if (rc != LT_OK)
			goto out;
	}
	lt_txn_fault(LT_COMMIT_AFTER_TXN_FILE);
	/*
	 * the fragments kept from the base are copied from its manifest's bytes, not packed again; the leading run
	 * of them not even copied: written from the base's bytes (parts)
	 */
	if ((rc = lt_manifest_serialize_parts(&m, indexes, tx, lt_dataset_manifest_prev(base, &prev) ? &prev : NULL,
										  &buf, parts, &n_parts, err)) != LT_OK)
		goto out;
	for (int i = 0; i < n_parts; i++)
		len += parts[i].len;
	if ((lt_commit_fault_hook || base->store->publish_manifest) && n_parts > 1)
	{
		/* the whole file in one buffer, for a torn copy or a catalog */
		uint8_t    *flat = lt_malloc(len + 1),
				   *w = flat;

		if (!flat)
		{
			rc = lt_nomem(err);
			goto out;
		}
		for (int i = 0; i < n_parts; i++)
		{
			memcpy(w, parts[i].data, parts[i].len);
			w += parts[i].len;
		}
		lt_free(buf);
		buf = flat;
		parts[0] = (lt_part) {buf, len};
		n_parts = 1;
	}
	lt_manifest_name(m.version, base->naming, man_name, sizeof(man_name));
	rel = lt_asprintf("_versions/%s", man_name);
	man_path = rel ? lt_dataset_path(base, rel) : NULL;
	lt_free(rel);
	if (!man_path)
	{
		rc = lt_nomem(err);
		goto out;
	}
	if (lt_commit_fault_hook)
	{
		/* what a crash while writing the manifest leaves: a torn file under a temporary name */
		char	   *tmp = lt_asprintf("%s.tmp-torn", man_path);

		if (tmp)
			lt_store_put(base->store, tmp, buf, len / 2, NULL);
		lt_free(tmp);
		lt_txn_fault(LT_COMMIT_MID_MANIFEST);
	}
	if (base->store->publish_manifest)
		rc = publish_staged(base, m.version, tx->uuid, man_path, buf, len, err);
	else
		rc = lt_store_put_if_absent_parts(base->store, man_path, parts, n_parts, err);
	if (rc == LT_ECONFLICT)
	{
		*lost_race = true;
		lt_error_set(err, LT_ECONFLICT, "version %llu of %s was committed concurrently",
					 (unsigned long long) m.version, name);
	}
	if (rc != LT_OK)
		goto out;
	lt_txn_fault(LT_COMMIT_AFTER_MANIFEST);
	write_hint(base, m.version);
	if (adopt)
		*adopt = adoption_of(base, &m, kept, parts[0].data, len);
out:
	if (*lost_race && txn_path)
		lt_store_remove(base->store, txn_path, NULL);	/* a lost race leaves nothing behind */
	lt_free(packed.data);
	lt_free(buf);
	lt_free(man_path);
	lt_free(txn_path);
	lt_free(txn_name);
	return rc;
}

/* An Overwrite carries the schema's metadata as the manifest holds it. */
static lt_code
overwrite_metadata(const Lt__Pb__Manifest *m, Lt__Pb__Transaction__Overwrite *ow, arena *a, lt_error *err)
{
	Lt__Pb__Transaction__Overwrite__SchemaMetadataEntry *e;

	if (m->n_schema_metadata == 0)
		return LT_OK;
	e = lt_txn_arena_alloc(a, m->n_schema_metadata * sizeof(*e));
	ow->schema_metadata = lt_txn_arena_alloc(a, m->n_schema_metadata * sizeof(*ow->schema_metadata));
	if (!e || !ow->schema_metadata)
		return lt_nomem(err);
	for (size_t i = 0; i < m->n_schema_metadata; i++)
	{
		lt__pb__transaction__overwrite__schema_metadata_entry__init(&e[i]);
		e[i].key = m->schema_metadata[i]->key;
		e[i].has_value = m->schema_metadata[i]->has_value;
		e[i].value = m->schema_metadata[i]->value;
		ow->schema_metadata[i] = &e[i];
	}
	ow->n_schema_metadata = m->n_schema_metadata;
	return LT_OK;
}

/*
 * The index section after a replace that keeps the indexes' definitions: every segment stays,
 * covering no fragment (an empty fragment bitmap), so the new rows are simply unindexed.
 */
static lt_code
emptied_indexes(const Lt__Pb__IndexSection *sec, arena *a, Lt__Pb__IndexSection **out, lt_error *err)
{
	Lt__Pb__IndexSection *copy;
	Lt__Pb__IndexMetadata *metas;
	roaring_bitmap_t *none;
	uint8_t    *bm;
	size_t		len;

	*out = NULL;
	if (!sec || sec->n_indices == 0)
		return LT_OK;
	if (!(none = roaring_bitmap_create()))
		return lt_nomem(err);
	len = roaring_bitmap_portable_size_in_bytes(none);
	copy = lt_txn_arena_alloc(a, sizeof(*copy));
	metas = lt_txn_arena_alloc(a, sec->n_indices * sizeof(*metas));
	bm = lt_txn_arena_alloc(a, len);
	if (copy && metas && bm)
	{
		*copy = *sec;
		copy->indices = lt_txn_arena_alloc(a, sec->n_indices * sizeof(*copy->indices));
	}
	if (!copy || !metas || !bm || !copy->indices)
	{
		roaring_bitmap_free(none);
		return lt_nomem(err);
	}
	roaring_bitmap_portable_serialize(none, (char *) bm);
	roaring_bitmap_free(none);
	for (size_t i = 0; i < sec->n_indices; i++)
	{
		metas[i] = *sec->indices[i];
		metas[i].has_fragment_bitmap = true;
		metas[i].fragment_bitmap.data = bm;
		metas[i].fragment_bitmap.len = len;
		copy->indices[i] = &metas[i];
	}
	*out = copy;
	return LT_OK;
}

/*
 * The legacy operation the attempt's result is written as: the composite of what it
 * materialized (updated and removed fragments, new ones, the key claim) lowered.
 */
static lt_code
lower(const attempt *at, lt_key_filter *keys, bool replaced, bool compaction, lt_txn_op *op, lt_error *err)
{
	lt_composite low;
	lt_code		rc = LT_OK;

	lt_composite_init(&low);
	if (compaction)
	{
		/* only whole fragments removed and the fragments their rows moved into */
		if (at->n_updated || keys || replaced)
			return lt_error_set(err, LT_EINVALID, "a compaction can only remove fragments and add their rows");
		rc = lt_rewrite_fragments(&low, at->removed, at->n_removed, err);
		for (size_t i = 0; rc == LT_OK && i < at->n_fresh; i++)
			rc = lt_add_fragment(&low, at->fresh[i]->id, at->fresh[i]->physical_rows, NULL, NULL, 0, true, NULL, err);
	}
	else
	{
		if (replaced)
			rc = lt_replace_all(&low, err);
		for (size_t i = 0; rc == LT_OK && !replaced && i < at->n_updated; i++)
			rc = lt_set_deletion_file(&low, at->updated[i]->id, NULL, err);
		for (size_t i = 0; rc == LT_OK && !replaced && i < at->n_removed; i++)
			rc = lt_remove_fragment(&low, at->removed[i], err);
		for (size_t i = 0; rc == LT_OK && i < at->n_fresh; i++)
			rc = lt_add_fragment(&low, at->fresh[i]->id, at->fresh[i]->physical_rows, NULL, NULL, 0, false, keys, err);
		/* after a replace the claim is moot: the Overwrite conflicts with every concurrent insert anyway */
		if (rc == LT_OK && keys && at->n_fresh && !replaced)
			rc = lt_assert_unique_keys(&low, keys, err);
	}
	if (rc == LT_OK)
		switch (lt_lower_op(&low))
		{
			case LT_LOWER_APPEND: *op = LT_OP_APPEND; break;
			case LT_LOWER_DELETE: *op = LT_OP_DELETE; break;
			case LT_LOWER_UPDATE: *op = LT_OP_UPDATE; break;
			case LT_LOWER_OVERWRITE: *op = LT_OP_OVERWRITE; break;
			case LT_LOWER_REWRITE: *op = LT_OP_REWRITE; break;
			default:
				rc = lt_error_set(err, LT_EINVALID, "a transaction of this kind cannot be written as a Lance operation");
				break;
		}
	lt_composite_clear(&low);
	return rc;
}

/*
 * Rows whose field assignment this transaction clears in place (lt_txn_unassign_rows) must not have been
 * deleted or moved by a commit since the read version: a moved copy keeps the old state, so the
 * invalidation would be lost.  (Ours: the journal's deletes come with carried state, lt_txn_assign.c.)
 */
static lt_code
check_cleared(lt_txn *t, lt_dataset *base, lt_error *err)
{
	if (base->version == t->read->version)
		return LT_OK;
	for (size_t i = 0; i < t->n_log; i++)
	{
		const jentry *j = &t->log[i];
		const Lt__Pb__DataFragment *then,
				   *now;
		roaring_bitmap_t *a = NULL,
				   *b = NULL;
		bool		clash;

		if (j->kind != J_UNASSIGN || (then = lt_dataset_fragment(t->read, j->frag_id)) == NULL)
			continue;
		if ((now = lt_dataset_fragment(base, j->frag_id)) == NULL)
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) removed fragment %llu, whose field assignment this transaction clears",
								(unsigned long long) base->version, t->name, (unsigned long long) j->frag_id);
		LT_TRY(lt_txn_load_dv(base, now, &a, err));
		if (lt_txn_load_dv(t->read, then, &b, err) != LT_OK)
		{
			roaring_bitmap_free(a);
			return err->code;
		}
		roaring_bitmap_andnot_inplace(a, b);
		clash = roaring_bitmap_intersect(a, j->rows);
		roaring_bitmap_free(a);
		roaring_bitmap_free(b);
		if (clash)
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) deleted or moved rows of fragment %llu whose field assignment this transaction clears",
								(unsigned long long) base->version, t->name, (unsigned long long) j->frag_id);
	}
	return LT_OK;
}

/*
 * One attempt on top of base: returns LT_ECONFLICT (err says so) when the manifest's
 * slot was taken, which the caller retries.
 */
static lt_code
try_commit(lt_txn *t, lt_dataset *base, const lt_commit_options *opts, lt_commit_result *res,
		   bool *lost_race, lt_error *err)
{
	attempt		at = {0};
	Lt__Pb__Manifest m;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__Append app = LT__PB__TRANSACTION__APPEND__INIT;
	Lt__Pb__Transaction__Delete del = LT__PB__TRANSACTION__DELETE__INIT;
	Lt__Pb__Transaction__Update upd = LT__PB__TRANSACTION__UPDATE__INIT;
	uint64_t	next_row_id = base->manifest->has_next_row_id ? base->manifest->next_row_id : 0;
	uint32_t	max_id = 0;
	uint8_t		uuid[16];
	char		uuid_text[40];
	bool		any_deletion = false;
	uint64_t	rflags, wflags;
	lt_txn_op	op = LT_OP_NONE;
	Lt__Pb__IndexSection *indexes = base->index_section;
	lt_key_filter *keys = lt_txn_asserted_keys(t);
	lt_key_filter_pb kpb;
	size_t		r = lt_txn_replace_at(t);
	bool		replaced = r < t->n_log;
	Lt__Pb__Transaction__Overwrite ow = LT__PB__TRANSACTION__OVERWRITE__INIT;
	Lt__Pb__Transaction__Rewrite rw = LT__PB__TRANSACTION__REWRITE__INIT;
	lt_rewrite_out rwo = {0};
	Lt__Pb__Manifest__ConfigEntry **cfg = NULL;
	size_t		n_cfg = 0;
	bool		cfg_changed = false;
	bool		config_only = false;	/* field assignment cleared in place, no row changed */
	bool		tried = false;	/* the manifest's publication was attempted */
	Lt__Pb__Transaction__UpdateConfig uc = LT__PB__TRANSACTION__UPDATE_CONFIG__INIT;
	Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry *ups = NULL;
	Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry **upp = NULL;
	lt_code		rc;

	*lost_race = false;
	LT_TRY(lt_txn_check_writable(base, t->name, err));
	rc = build_fragments(t, base, &at, &next_row_id, &max_id, err);
	if (rc == LT_OK)
		rc = check_cleared(t, base, err);
	if (rc != LT_OK)
		goto out;
	if (at.n_updated == 0 && at.n_removed == 0 && at.n_fresh == 0)
	{
		if (!lt_txn_has_unassign(t))
		{
			res->op = LT_OP_NONE;
			goto out;
		}
		config_only = true;
		op = LT_OP_UPDATE_CONFIG;
	}
	else if ((rc = lower(&at, keys, replaced, t->compaction, &op, err)) != LT_OK)
		goto out;

	/* the transaction */
	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	if (config_only)
	{
		/* an UpdateConfig of the changed roots: made below, once they are written */
	}
	else if (op == LT_OP_APPEND)
	{
		app.n_fragments = at.n_fresh;
		app.fragments = at.fresh;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_APPEND;
		tx.append = &app;
	}
	else if (op == LT_OP_DELETE)
	{
		del.n_updated_fragments = at.n_updated;
		del.updated_fragments = at.updated;
		del.n_deleted_fragment_ids = at.n_removed;
		del.deleted_fragment_ids = at.removed;
		del.predicate = (char *) (opts && opts->predicate ? opts->predicate : NULL);
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_DELETE;
		tx.delete_ = &del;
	}
	else if (op == LT_OP_OVERWRITE)
	{
		/* the table's schema stays; its fragments are the ones added after the replace */
		ow.n_fragments = at.n_fresh;
		ow.fragments = at.fresh;
		ow.n_schema = base->manifest->n_fields;
		ow.schema = base->manifest->fields;
		if ((rc = overwrite_metadata(base->manifest, &ow, &at.a, err)) != LT_OK)
			goto out;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_OVERWRITE;
		tx.overwrite = &ow;
	}
	else if (op == LT_OP_REWRITE)
	{
		Lt__Pb__DataFragment **olds = lt_txn_arena_alloc(&at.a, (at.n_removed + 1) * sizeof(Lt__Pb__DataFragment *));

		if (!olds)
		{
			rc = lt_nomem(err);
			goto out;
		}
		for (size_t i = 0; i < at.n_removed; i++)
		{
			const Lt__Pb__DataFragment *f = lt_dataset_fragment(base, at.removed[i]);

			if (!f)
			{
				rc = lt_error_set(err, LT_ECONFLICT, "fragment %llu of %s was removed concurrently",
								  (unsigned long long) at.removed[i], t->name);
				goto out;
			}
			olds[i] = (Lt__Pb__DataFragment *) f;
		}
		/* the rows moved, none added, none deleted: a compaction carries nothing else */
		{
			uint64_t	old_rows = 0,
						new_rows = 0;
			bool		deletions = false;

			for (size_t i = 0; i < at.n_removed; i++)
				old_rows += lt_fragment_live_rows(olds[i]);
			for (size_t i = 0; i < at.n_fresh; i++)
			{
				new_rows += at.fresh[i]->physical_rows;
				deletions |= at.fresh[i]->deletion_file != NULL;
			}
			if (old_rows != new_rows || deletions)
			{
				rc = lt_error_set(err, LT_EINVALID,
								  "a compaction of %s cannot carry other changes (%llu rows in, %llu out)", t->name,
								  (unsigned long long) old_rows, (unsigned long long) new_rows);
				goto out;
			}
		}
		/* the groups and rewritten_indices: below, with the index section */
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_REWRITE;
		tx.rewrite = &rw;
	}
	else
	{
		upd.n_removed_fragment_ids = at.n_removed;
		upd.removed_fragment_ids = at.removed;
		upd.n_updated_fragments = at.n_updated;
		upd.updated_fragments = at.updated;
		upd.n_new_fragments = at.n_fresh;
		upd.new_fragments = at.fresh;
		upd.has_update_mode = true;
		upd.update_mode = LT__PB__TRANSACTION__UPDATE_MODE__REWRITE_ROWS;
		if (keys && at.n_fresh && !replaced)
		{
			/* the inserted keys, as Lance's merge-insert carries them */
			lt_key_filter_to_pb(keys, &kpb);
			upd.inserted_rows = &kpb.msg;
		}
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_UPDATE;
		tx.update = &upd;
	}

	/* the manifest: the base's, with what changed */
	m = *base->manifest;
	m.n_fragments = at.n_frags;
	m.fragments = at.frags;
	/*
	 * the deletion-files flag: a base that records flags without it has no deletion file (writers set it
	 * when one exists), so only the fragments written here can bring one; else look until the first
	 */
	if (!base->manifest->has_reader_feature_flags ||
		((base->manifest->reader_feature_flags | base->manifest->writer_feature_flags) & LT_FLAG_DELETION_FILES))
		for (size_t i = 0; i < at.n_frags && !any_deletion; i++)
			any_deletion = at.frags[i]->deletion_file != NULL;
	for (size_t i = 0; i < at.n_updated && !any_deletion; i++)
		any_deletion = at.updated[i]->deletion_file != NULL;
	for (size_t i = 0; i < at.n_fresh && !any_deletion; i++)
		any_deletion = at.fresh[i]->deletion_file != NULL;
	/* the tracked fields' roots, for the fragments added and gone (lt_txn_assign.c) */
	if ((rc = lt_txn_assignment_config(t, base, &at, op == LT_OP_OVERWRITE, &cfg, &n_cfg, &cfg_changed,
									   err)) != LT_OK)
		goto out;
	if (cfg_changed)
	{
		m.config = cfg;
		m.n_config = n_cfg;
	}
	if (config_only)
	{
		size_t		n = 0;

		if (!cfg_changed)
		{
			res->op = LT_OP_NONE;	/* the rows cleared were not assigned */
			goto out;
		}
		ups = lt_calloc(n_cfg ? n_cfg : 1, sizeof(*ups));
		upp = lt_calloc(n_cfg ? n_cfg : 1, sizeof(*upp));
		if (!ups || !upp)
		{
			rc = lt_nomem(err);
			goto out;
		}
		for (size_t i = 0; i < n_cfg; i++)
			if (cfg[i] != base->manifest->config[i])
			{
				lt__pb__transaction__update_config__upsert_values_entry__init(&ups[n]);
				ups[n].key = cfg[i]->key;
				ups[n].value = cfg[i]->value;
				upp[n] = &ups[n];
				n++;
			}
		uc.n_upsert_values = n;
		uc.upsert_values = upp;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_UPDATE_CONFIG;
		tx.update_config = &uc;
	}
	rflags = (any_deletion ? LT_FLAG_DELETION_FILES : 0) | (base->stable_row_ids ? LT_FLAG_STABLE_ROW_IDS : 0);
	wflags = rflags | (m.n_config ? LT_FLAG_TABLE_CONFIG : 0) |
		(base->manifest->writer_feature_flags & LT_FLAG_DISABLE_TXN_FILE) |
		(lt_assign_any(base) ? LT_FLAG_FIELD_ASSIGNMENT : 0);
	m.has_reader_feature_flags = m.has_writer_feature_flags = true;
	m.reader_feature_flags = rflags;
	m.writer_feature_flags = wflags;
	m.has_max_fragment_id = true;
	m.max_fragment_id = max_id;
	if (base->stable_row_ids)
	{
		m.has_next_row_id = true;
		m.next_row_id = next_row_id;
	}
	if (op == LT_OP_REWRITE)
	{
		/*
		 * The groups, and the indexes' coverage (and payloads) moved with the rows (lt_txn_rewrite.c);
		 * then Lance's retention over the result.
		 */
		rc = lt_txn_rewrite_plan(t, base, &at, base->index_section, &rwo, err);
		if (rc == LT_OK)
		{
			rw.n_groups = rwo.n_groups;
			rw.groups = rwo.groups;
			rw.n_rewritten_indices = rwo.n_rewritten;
			rw.rewritten_indices = rwo.rewritten;
			rc = lt_txn_retained_indexes(rwo.indexes, at.frags, at.n_frags, &at.a, &indexes, err);
		}
	}
	else if (op == LT_OP_DELETE || op == LT_OP_UPDATE)
		rc = lt_txn_retained_indexes(base->index_section, at.frags, at.n_frags, &at.a, &indexes, err);
	else if (op == LT_OP_OVERWRITE)
		rc = t->log[r].keep_indexes ? emptied_indexes(base->index_section, &at.a, &indexes, err)
			: (indexes = NULL, LT_OK);
	if (rc != LT_OK)
		goto out;
	lt_txn_fault(LT_COMMIT_AFTER_DELETION_FILES);
	/* rewritten index files stay unless the slot was lost (the manifest may have landed otherwise) */
	tried = true;
	/* an append keeps the base's fragments in place: the caller's dataset may take over what it writes */
	if ((rc = publish(base, &m, indexes, &tx, t->name, lost_race, base->n_fragments,
					  opts && opts->adopt && op == LT_OP_APPEND && at.n_updated == 0 && at.n_removed == 0 &&
					  at.n_frags == base->n_fragments + at.n_fresh ? &res->adoption : NULL, err)) != LT_OK)
		goto out;
	res->op = op;
	res->version = base->version + 1;
	res->rows_added = at.rows_added;
	res->rows_deleted = at.rows_deleted;
	res->fragments_added = at.n_fresh;
	res->fragments_updated = at.n_updated;
	res->fragments_removed = at.n_removed;
	{
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		lt_auto_cleanup_decide(&m, res->version, (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000, &res->cleanup);
	}
out:
	lt_txn_rewrite_done(base, &rwo, tried && !*lost_race);
	lt_free(ups);
	lt_free(upp);
	lt_txn_assignment_config_free(cfg, n_cfg, base->manifest);
	lt_txn_arena_free(&at.a);
	return rc;
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/*
 * After a lost race, wait a random number of slots (0 .. 2^attempt - 1, at most 63) of
 * 1.1 times the first attempt's duration, as Lance's slot backoff does: racing writers
 * spread out instead of colliding again.
 */
static lt_code
backoff(int attempt, uint64_t first_attempt_us, lt_error *err)
{
	uint64_t	slot = first_attempt_us + first_attempt_us / 10 + 100;
	uint64_t	slots = (uint64_t) 1 << (attempt < 6 ? attempt : 6);
	uint64_t	us = slot * (lt_random_u64() % slots);

	/* the caller's sleep (a backend: on its latch), woken by a cancel */
	return lt_sleep_us(us, err, "waiting to retry a commit");
}

/*
 * The commit loop every commit kind shares: check each version committed since the
 * read version, in order, then try on the newest; after a lost race wait (Lance's
 * slot backoff) and go again, at most max_attempts times.
 */
lt_code
lt_txn_commit_loop(lt_dataset *read, const lt_commit_kind *kind, int max_attempts, lt_commit_result *result,
				   lt_error *err)
{
	lt_dataset *base = read;
	lt_dataset *owned = NULL;	/* base when it is a later version we opened */
	uint64_t	first_us = 0;	/* how long the first attempt took: the backoff's slot */
	lt_code		rc = LT_OK;

	if (max_attempts <= 0)
		max_attempts = DEFAULT_MAX_ATTEMPTS;
	for (int attempt_no = 1; rc == LT_OK; attempt_no++)
	{
		uint64_t	latest;
		lt_naming	naming;
		bool		lost = false;
		uint64_t	started = now_us();

		result->attempts = attempt_no;
		rc = lt_check_interrupt(err, "committing");
		if (rc == LT_OK)
			rc = lt_dataset_latest_version(base->store, base->prefix, &latest, &naming, err);
		for (uint64_t v = base->version + 1; rc == LT_OK && v <= latest; v++)
		{
			lt_version_spec spec = {v, NULL};
			lt_dataset *next;

			rc = lt_check_interrupt(err, "checking the versions committed meanwhile");
			if (rc == LT_OK)
				rc = lt_dataset_open(base->store, base->prefix, &spec, &next, err);
			if (rc == LT_ENOTFOUND)
				rc = lt_error_set(err, LT_ECONFLICT, "version %llu of %s vanished while committing on top of it",
								  (unsigned long long) v, kind->name);
			if (rc != LT_OK)
				break;
			rc = kind->check(kind->arg, base, next, err);
			if (owned)
				lt_dataset_close(owned);
			owned = base = next;
		}
		if (rc == LT_OK)
			rc = kind->attempt(kind->arg, base, result, &lost, err);
		if (attempt_no == 1)
			first_us = now_us() - started;
		if (rc == LT_ECONFLICT && lost)
		{
			if (attempt_no >= max_attempts)
			{
				rc = lt_error_set(err, LT_ECONFLICT,
								  "could not commit to %s: %d concurrent commits won the race for the next version",
								  kind->name, attempt_no);
				break;
			}
			rc = backoff(attempt_no, first_us, err);
			continue;
		}
		break;
	}
	/*
	 * the committed version for the caller's maintenance (auto-compaction), instead of reading back the manifest
	 * just written: the later version we opened takes over what the append wrote (not a borrowed read version)
	 */
	if (rc == LT_OK && kind->keep_committed && owned && result->adoption)
	{
		lt_error	ignore;

		if (lt_dataset_adopt(owned, result->adoption, &ignore) == LT_OK)
		{
			result->committed = owned;
			owned = NULL;
		}
	}
	if (owned)
		lt_dataset_close(owned);
	return rc;
}

/* lt_txn_commit's side of the loop */
typedef struct txn_commit
{
	lt_txn	   *t;
	const lt_commit_options *opts;
	roaring_bitmap_t **seen;	/* per change: rows deleted by the read version or by commits since */
	lt_composite ours;
	lt_footprint fo;
} txn_commit;

static lt_code
inserts_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	return lt_txn_check_new_fragments(prev, next, arg, err);
}

/* A version committed since our read version: lift it, compare footprints (lt_action.h). */
static lt_code
txn_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	txn_commit *c = arg;
	rows_ctx	rows = {c->t, next, c->seen};

	return lt_txn_check_version(&c->ours, &c->fo, prev, next, c->t->name, lt_txn_concurrent_rows, &rows,
								c->opts && c->opts->check_new_fragment ? inserts_check : NULL,
								(void *) c->opts, err);
}

static lt_code
txn_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	txn_commit *c = arg;

	return try_commit(c->t, base, c->opts, res, lost_race, err);
}

lt_code
lt_txn_commit(lt_txn *t, const lt_commit_options *opts, lt_commit_result *result, lt_error *err)
{
	txn_commit	c = {t, opts, NULL};
	lt_commit_kind kind = {t->name, txn_check, txn_attempt, &c, opts && opts->adopt && opts->keep_committed};
	lt_code		rc = LT_OK;

	memset(result, 0, sizeof(*result));
	if (t->broken)
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	if ((rc = lt_txn_settle(t, err)) != LT_OK)
		return rc;
	if (t->n_log == 0)
		return LT_OK;
	lt_txn_fault(LT_COMMIT_START);
	if (!(c.seen = lt_calloc(t->n_changes ? t->n_changes : 1, sizeof(roaring_bitmap_t *))))
		return lt_nomem(err);
	/* the read version's deleted rows of each fragment we delete from */
	for (size_t i = 0; i < t->n_changes && rc == LT_OK; i++)
	{
		if (!(c.seen[i] = roaring_bitmap_andnot(t->changes[i].all, t->changes[i].ours)))
			rc = lt_nomem(err);
	}
	lt_composite_init(&c.ours);
	if (rc == LT_OK && (rc = lt_txn_our_composite(t, opts, &c.ours, err)) == LT_OK)
		rc = lt_footprint_of(&c.ours, &c.fo, err);
	if (rc == LT_OK)
		rc = lt_txn_commit_loop(t->read, &kind, opts ? opts->max_attempts : 0, result, err);
	lt_footprint_clear(&c.fo);
	lt_composite_clear(&c.ours);
	for (size_t i = 0; i < t->n_changes; i++)
		if (c.seen[i])
			roaring_bitmap_free(c.seen[i]);
	lt_free(c.seen);
	t->broken = true;			/* committed, or failed for good: either way done */
	return rc;
}
