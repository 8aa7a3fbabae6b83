/*
 * lt_txn_schema.c — schema evolution committed as a Merge (add) or a Project (drop, rename)
 * (lt_txn_schema.h).
 */
#include "txn/lt_txn_schema.h"

#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn_int.h"

/* The top-level field of that name in the manifest's pre-order list, or -1. */
static ssize_t
top_level(const Lt__Pb__Manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n_fields; i++)
		if (m->fields[i]->parent_id == -1 && m->fields[i]->name && strcmp(m->fields[i]->name, name) == 0)
			return (ssize_t) i;
	return -1;
}

/* Is field i of the list (pre-order) the field `root` or one of its descendants? */
static bool
under(const Lt__Pb__Manifest *m, size_t i, int32_t root)
{
	int32_t		id = m->fields[i]->id;

	for (int depth = 0; depth < 64; depth++)
	{
		if (id == root)
			return true;
		{
			int32_t		parent = -1;

			for (size_t k = 0; k < m->n_fields; k++)
				if (m->fields[k]->id == id)
				{
					parent = m->fields[k]->parent_id;
					break;
				}
			if (parent < 0)
				return false;
			id = parent;
		}
	}
	return false;
}

lt_code
lt_schema_change_check(const lt_dataset *ds, const lt_schema_change *c, lt_error *err)
{
	const Lt__Pb__Manifest *m = ds->manifest;
	ssize_t		at;
	size_t		top = 0;

	for (size_t i = 0; i < m->n_fields; i++)
		top += m->fields[i]->parent_id == -1;
	switch (c->kind)
	{
		case LT_SCHEMA_ADD:
			if (c->n_add < 1 || !c->add || c->add[0].parent != -1)
				return lt_error_set(err, LT_EINVALID, "a new column needs a top-level field");
			if (top_level(m, c->add[0].name) >= 0)
				return lt_error_set(err, LT_EINVALID, "the dataset already has a field \"%s\"", c->add[0].name);
			for (int i = 1; i < c->n_add; i++)
				if (c->add[i].parent < 0)
					return lt_error_set(err, LT_EINVALID, "a new column is one top-level field");
			return LT_OK;
		case LT_SCHEMA_DROP:
			if ((at = top_level(m, c->name)) < 0)
				return lt_error_set(err, LT_EINVALID, "the dataset has no field \"%s\"", c->name);
			if (top <= 1)
				return lt_error_set(err, LT_EINVALID, "field \"%s\" is the dataset's last", c->name);
			{
				const lt_field *f = lt_schema_find_name(ds->schema, c->name);

				if (f && f->primary_key)
					return lt_error_set(err, LT_EINVALID, "field \"%s\" is part of the primary key", c->name);
			}
			return LT_OK;
		case LT_SCHEMA_RENAME:
			if (top_level(m, c->name) < 0)
				return lt_error_set(err, LT_EINVALID, "the dataset has no field \"%s\"", c->name);
			if (!c->new_name || !c->new_name[0])
				return lt_error_set(err, LT_EINVALID, "a field needs a name");
			if (top_level(m, c->new_name) >= 0)
				return lt_error_set(err, LT_EINVALID, "the dataset already has a field \"%s\"", c->new_name);
			return LT_OK;
	}
	return lt_error_set(err, LT_EINVALID, "unknown schema change");
}

/* What one attempt commits, made from the read version's schema. */
typedef struct schema_commit
{
	char		name[512];
	const lt_schema_change *c;
	Lt__Pb__Field **fields;		/* the new schema, pre-order */
	size_t		n_fields;
	Lt__Pb__Field *copies;		/* renamed and new fields */
	int32_t    *dropped;		/* ids dropped */
	size_t		n_dropped;
} schema_commit;

static lt_code
new_schema(const lt_dataset *read, schema_commit *sc, lt_error *err)
{
	const Lt__Pb__Manifest *m = read->manifest;
	const lt_schema_change *c = sc->c;
	size_t		cap = m->n_fields + (size_t) (c->n_add > 0 ? c->n_add : 0) + 1;
	int32_t		max_id = -1;

	sc->fields = lt_calloc(cap, sizeof(Lt__Pb__Field *));
	sc->copies = lt_calloc(cap, sizeof(Lt__Pb__Field));
	sc->dropped = lt_calloc(cap, sizeof(int32_t));
	if (!sc->fields || !sc->copies || !sc->dropped)
		return lt_nomem(err);
	for (size_t i = 0; i < m->n_fields; i++)
		if (m->fields[i]->id > max_id)
			max_id = m->fields[i]->id;
	if (c->kind == LT_SCHEMA_DROP)
	{
		int32_t		root = m->fields[top_level(m, c->name)]->id;

		for (size_t i = 0; i < m->n_fields; i++)
		{
			if (under(m, i, root))
				sc->dropped[sc->n_dropped++] = m->fields[i]->id;
			else
				sc->fields[sc->n_fields++] = m->fields[i];
		}
		return LT_OK;
	}
	for (size_t i = 0; i < m->n_fields; i++)
	{
		if (c->kind == LT_SCHEMA_RENAME && m->fields[i]->parent_id == -1 && strcmp(m->fields[i]->name, c->name) == 0)
		{
			sc->copies[i] = *m->fields[i];
			sc->copies[i].name = (char *) c->new_name;
			sc->fields[sc->n_fields++] = &sc->copies[i];
		}
		else
			sc->fields[sc->n_fields++] = m->fields[i];
	}
	if (c->kind == LT_SCHEMA_ADD)
	{
		/* the new fields' ids: the next free ones, depth-first (lt_new_dataset_init's order) */
		lt_new_dataset *nd = NULL;

		LT_TRY(lt_new_dataset_init(c->add, c->n_add, read->storage_version, &nd, err));
		{
			const lt_schema *ns = lt_new_dataset_schema(nd);

			for (int k = 0; k < ns->n_all; k++)
			{
				const lt_field *f = ns->all[k];
				Lt__Pb__Field *pb = &sc->copies[m->n_fields + (size_t) k];

				lt__pb__field__init(pb);
				pb->name = lt_strdup(f->name);
				pb->logical_type = lt_strdup(f->logical_type);
				if (!pb->name || !pb->logical_type)
				{
					lt_new_dataset_free(nd);
					return lt_nomem(err);
				}
				pb->has_id = pb->has_parent_id = pb->has_nullable = true;
				pb->id = max_id + 1 + f->id;
				pb->parent_id = f->parent_id < 0 ? -1 : max_id + 1 + f->parent_id;
				pb->nullable = true;	/* every existing row reads NULL */
				if (f->type != LT_TYPE_STRUCT)
				{
					pb->has_encoding = true;
					pb->encoding = lt_type_is_var_width(f->type) ? LT__PB__LEGACY_ENCODING__ENC_VAR_BINARY
						: LT__PB__LEGACY_ENCODING__ENC_PLAIN;
				}
				sc->fields[sc->n_fields++] = pb;
			}
		}
		lt_new_dataset_free(nd);
	}
	return LT_OK;
}

static void
schema_commit_clear(const lt_dataset *read, schema_commit *sc)
{
	if (sc->copies && sc->c->kind == LT_SCHEMA_ADD)
		for (size_t i = read->manifest->n_fields; i < read->manifest->n_fields + (size_t) sc->c->n_add; i++)
		{
			lt_free(sc->copies[i].name);
			lt_free(sc->copies[i].logical_type);
		}
	lt_free(sc->fields);
	lt_free(sc->copies);
	lt_free(sc->dropped);
}

/* Since our read version only appends, deletes and index builds: their fragments and indexes stay valid. */
static lt_code
schema_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	schema_commit *sc = arg;
	bool		owned = false;
	Lt__Pb__Transaction *tx = lt_txn_committed(next, &owned);
	const char *op = lt_transaction_op_name(tx);
	bool		fine = op && (strcmp(op, "Append") == 0 || strcmp(op, "Delete") == 0 || strcmp(op, "CreateIndex") == 0);
	lt_code		rc = LT_OK;

	if (!fine)
		rc = lt_error_set(err, LT_ECONFLICT, "version %llu of %s (%s) was committed since the schema was read",
						  (unsigned long long) next->version, sc->name, op ? op : "unreadable transaction");
	if (owned && tx)
		lt__pb__transaction__free_unpacked(tx, lt_protobuf_allocator());
	return rc;
}

static bool
touches_dropped(const Lt__Pb__IndexMetadata *ix, const schema_commit *sc)
{
	for (size_t i = 0; i < ix->n_fields; i++)
		for (size_t k = 0; k < sc->n_dropped; k++)
			if (ix->fields[i] == sc->dropped[k])
				return true;
	return false;
}

static lt_code
schema_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	schema_commit *sc = arg;
	Lt__Pb__Manifest m = *base->manifest;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__Merge mg = LT__PB__TRANSACTION__MERGE__INIT;
	Lt__Pb__Transaction__Project pj = LT__PB__TRANSACTION__PROJECT__INIT;
	Lt__Pb__IndexSection sec = LT__PB__INDEX_SECTION__INIT;
	const Lt__Pb__IndexSection *indexes = base->index_section;
	Lt__Pb__IndexMetadata **kept = NULL;
	uint8_t		uuid[16];
	char		uuid_text[40];
	lt_code		rc;

	LT_TRY(lt_txn_check_writable(base, sc->name, err));
	m.n_fields = sc->n_fields;
	m.fields = sc->fields;
	if (sc->n_dropped && indexes)
	{
		/* as Lance: an index on a dropped field goes with it */
		if (!(kept = lt_calloc(indexes->n_indices + 1, sizeof(*kept))))
			return lt_nomem(err);
		for (size_t i = 0; i < indexes->n_indices; i++)
			if (!touches_dropped(indexes->indices[i], sc))
				kept[sec.n_indices++] = indexes->indices[i];
		sec.indices = kept;
		indexes = sec.n_indices ? &sec : NULL;
	}
	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	if (sc->c->kind == LT_SCHEMA_ADD)
	{
		mg.n_fragments = base->manifest->n_fragments;
		mg.fragments = base->manifest->fragments;
		mg.n_schema = sc->n_fields;
		mg.schema = sc->fields;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_MERGE;
		tx.merge = &mg;
	}
	else
	{
		pj.n_schema = sc->n_fields;
		pj.schema = sc->fields;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_PROJECT;
		tx.project = &pj;
	}
	rc = lt_txn_publish(base, &m, indexes, &tx, sc->name, lost_race, err);
	lt_free(kept);
	if (rc == LT_OK)
	{
		res->op = LT_OP_UPDATE_CONFIG;
		res->version = base->version + 1;
	}
	return rc;
}

lt_code
lt_commit_schema_change(lt_dataset *read, const lt_schema_change *c, const lt_commit_options *opts,
						lt_commit_result *result, lt_error *err)
{
	schema_commit sc = {{0}};
	lt_commit_kind kind = {sc.name, schema_check, schema_attempt, &sc};
	lt_code		rc;

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, sc.name, sizeof(sc.name));
	sc.c = c;
	LT_TRY(lt_schema_change_check(read, c, err));
	rc = new_schema(read, &sc, err);
	if (rc == LT_OK)
		rc = lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
	schema_commit_clear(read, &sc);
	return rc;
}

/* ---- dropping an index ---------------------------------------------------------------------------- */

typedef struct drop_commit
{
	schema_commit sc;			/* name and the check */
	const char *index;
} drop_commit;

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
		rc = lt_txn_check_writable(base, dc->sc.name, err);
	for (size_t i = 0; rc == LT_OK && i < n_old; i++)
	{
		if (old->indices[i]->name && strcmp(old->indices[i]->name, dc->index) == 0)
			removed[ci.n_removed_indices++] = old->indices[i];
		else
			kept[sec.n_indices++] = old->indices[i];
	}
	if (rc == LT_OK && ci.n_removed_indices == 0)
		rc = lt_error_set(err, LT_ENOTFOUND, "%s has no index \"%s\"", dc->sc.name, dc->index);
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
		rc = lt_txn_publish(base, base->manifest, sec.n_indices ? &sec : NULL, &tx, dc->sc.name, lost_race, err);
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
	drop_commit dc = {{{0}}};
	lt_commit_kind kind = {dc.sc.name, schema_check, drop_attempt, &dc};

	memset(result, 0, sizeof(*result));
	lt_txn_dataset_name(read, dc.sc.name, sizeof(dc.sc.name));
	dc.index = name;
	return lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
}
