/*
 * lt_txn_schema.c — schema evolution committed as a Merge (add) or a Project (drop, rename)
 * (lt_txn_schema.h).
 */
#include "txn/lt_txn_schema.h"

#include <stdio.h>
#include <string.h>

#include "assignment/lt_assignment.h"
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

/* The family of types Lance's alter_columns casts within (0: none). */
static int
cast_family(lt_type_id t)
{
	switch (t)
	{
		case LT_TYPE_INT8: case LT_TYPE_INT16: case LT_TYPE_INT32: case LT_TYPE_INT64:
		case LT_TYPE_UINT8: case LT_TYPE_UINT16: case LT_TYPE_UINT32: case LT_TYPE_UINT64:
			return 1;
		case LT_TYPE_FLOAT16: case LT_TYPE_FLOAT32: case LT_TYPE_FLOAT64:
			return 2;
		case LT_TYPE_DATE32: case LT_TYPE_DATE64: case LT_TYPE_TIME32: case LT_TYPE_TIME64:
		case LT_TYPE_TIMESTAMP: case LT_TYPE_DURATION:
			return 3;
		case LT_TYPE_BOOL:
			return 4;
		case LT_TYPE_UTF8: case LT_TYPE_LARGE_UTF8:
			return 5;
		case LT_TYPE_BINARY: case LT_TYPE_LARGE_BINARY:
			return 6;
		case LT_TYPE_DECIMAL128: case LT_TYPE_DECIMAL256:
			return 7;
		default:
			return 0;
	}
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
			if (c->n_files && (!c->files || !c->file_fragments))
				return lt_error_set(err, LT_EINVALID, "the new column's data files are not described");
			for (size_t i = 0; i < c->n_files; i++)
			{
				const Lt__Pb__DataFragment *f = lt_dataset_fragment(ds, c->file_fragments[i]);

				if (!f)
					return lt_error_set(err, LT_EINVALID, "fragment %llu of data file %s is not in version %llu",
										(unsigned long long) c->file_fragments[i], c->files[i].name,
										(unsigned long long) ds->version);
				if (c->files[i].num_rows != f->physical_rows)
					return lt_error_set(err, LT_EINVALID,
										"data file %s has %llu rows, fragment %llu has %llu",
										c->files[i].name, (unsigned long long) c->files[i].num_rows,
										(unsigned long long) f->id, (unsigned long long) f->physical_rows);
			}
			return LT_OK;
		case LT_SCHEMA_DROP:
			if (c->track != LT_SCHEMA_TRACK_NONE || c->n_files)
				return lt_error_set(err, LT_EINVALID, "only a new column can be tracked or given data files");
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
		case LT_SCHEMA_ALTER_TYPE:
			{
				const lt_field *f = lt_schema_find_name(ds->schema, c->name ? c->name : "");
				lt_field	to = {0};
				lt_code		rc;

				if (!f)
					return lt_error_set(err, LT_EINVALID, "the dataset has no field \"%s\"", c->name);
				if (c->n_add != 1 || !c->add || c->track != LT_SCHEMA_TRACK_NONE)
					return lt_error_set(err, LT_EINVALID, "a type change names one new type");
				if (f->n_children > 0 || f->blob != LT_BLOB_NONE || f->dictionary)
					return lt_error_set(err, LT_EINVALID, "field \"%s\" is not a plain scalar field", c->name);
				if (f->primary_key)
					return lt_error_set(err, LT_EINVALID, "field \"%s\" is part of the primary key", c->name);
				if (lt_assign_is_tracked(ds, f->id, NULL))
					return lt_error_set(err, LT_EINVALID, "field \"%s\" tracks its assignment", c->name);
				if ((rc = lt_parse_logical_type(c->add[0].logical_type, &to, err)) != LT_OK)
					return rc;
				lt_free(to.timezone);
				if (!cast_family(f->type) || cast_family(f->type) != cast_family(to.type))
					return lt_error_set(err, LT_EINVALID, "field \"%s\" cannot be cast from %s to %s (Lance casts within integers, floats, decimals, temporal types, strings, binaries)",
										c->name, f->logical_type, c->add[0].logical_type);
				if (strcmp(f->logical_type, c->add[0].logical_type) == 0)
					return lt_error_set(err, LT_EINVALID, "field \"%s\" is %s already", c->name, f->logical_type);
				/* the files: once written (lt_commit_schema_change requires them) */
				for (size_t i = 0; c->files && i < ds->n_fragments; i++)
				{
					bool		found = ds->fragments[i]->physical_rows == 0;

					for (size_t k = 0; k < c->n_files && !found; k++)
						found = c->file_fragments[k] == ds->fragments[i]->id;
					if (!found)
						return lt_error_set(err, LT_EINVALID, "fragment %llu has no data file of the cast values",
											(unsigned long long) ds->fragments[i]->id);
				}
				for (size_t i = 0; i < c->n_files; i++)
				{
					const Lt__Pb__DataFragment *fr = lt_dataset_fragment(ds, c->file_fragments[i]);

					if (!fr || c->files[i].num_rows != fr->physical_rows)
						return lt_error_set(err, LT_EINVALID, "data file %s does not match fragment %llu",
											c->files[i].name, (unsigned long long) c->file_fragments[i]);
				}
				return LT_OK;
			}
		case LT_SCHEMA_RENAME:
			if (c->track != LT_SCHEMA_TRACK_NONE || c->n_files)
				return lt_error_set(err, LT_EINVALID, "only a new column can be tracked or given data files");
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
	Lt__Pb__Field *altered;		/* ALTER_TYPE: the field's new definition (in copies) */
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
	if (c->kind == LT_SCHEMA_ALTER_TYPE)
	{
		/* as Lance: the cast field takes the next free id where the old one was; the old id is dropped */
		ssize_t		at = top_level(m, c->name);

		if (at < 0)
			return lt_error_set(err, LT_EINVALID, "the dataset has no field \"%s\"", c->name);
		for (size_t i = 0; i < m->n_fields; i++)
		{
			if ((ssize_t) i != at)
			{
				sc->fields[sc->n_fields++] = m->fields[i];
				continue;
			}
			sc->altered = &sc->copies[i];
			*sc->altered = *m->fields[i];
			sc->altered->logical_type = (char *) c->add[0].logical_type;
			sc->altered->id = max_id + 1;
			{
				lt_field	probe = {0};

				LT_TRY(lt_parse_logical_type(c->add[0].logical_type, &probe, err));
				lt_free(probe.timezone);
				sc->altered->has_encoding = true;
				sc->altered->encoding = lt_type_is_var_width(probe.type) ? LT__PB__LEGACY_ENCODING__ENC_VAR_BINARY
					: LT__PB__LEGACY_ENCODING__ENC_PLAIN;
			}
			sc->dropped[sc->n_dropped++] = m->fields[i]->id;
			sc->fields[sc->n_fields++] = sc->altered;
		}
		return LT_OK;
	}
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

lt_code
lt_schema_change_new_fields(const lt_dataset *read, const lt_schema_change *c, lt_schema **out, lt_error *err)
{
	schema_commit sc = {{0}};
	lt_code		rc;

	*out = NULL;
	if (c->kind != LT_SCHEMA_ADD && c->kind != LT_SCHEMA_ALTER_TYPE)
		return lt_error_set(err, LT_EINVALID, "only an added or altered column has new fields");
	sc.c = c;
	rc = new_schema(read, &sc, err);
	if (rc == LT_OK && c->kind == LT_SCHEMA_ALTER_TYPE)
		rc = lt_schema_from_pb(&sc.altered, 1, out, err);
	else if (rc == LT_OK)
		rc = lt_schema_from_pb(sc.fields + read->manifest->n_fields, sc.n_fields - read->manifest->n_fields, out, err);
	schema_commit_clear(read, &sc);
	return rc;
}

/*
 * Since our read version only appends, deletes and index builds: their fragments and indexes stay valid.
 * A column added with data files cannot take an append: the new fragment would have no value.
 */
static lt_code
schema_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	schema_commit *sc = arg;

	return lt_txn_check_schema_read(next, sc->name, !sc->c || sc->c->n_files == 0, err);
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

/*
 * ADD with data files: base's fragments, each with its file of the new fields appended (base may carry
 * deletions made since the read version; physical rows do not change).  *frags and *store lt_free.
 */
static lt_code
fragments_with_files(const schema_commit *sc, const lt_dataset *base, Lt__Pb__DataFragment ***frags,
					 void **store, lt_error *err)
{
	const lt_schema_change *c = sc->c;
	size_t		n = base->manifest->n_fragments;
	Lt__Pb__DataFragment **out = lt_calloc(n + 1, sizeof(*out));
	Lt__Pb__DataFragment *copies = lt_calloc(n + 1, sizeof(*copies));
	Lt__Pb__DataFile *dfs = lt_calloc(c->n_files + 1, sizeof(*dfs));
	Lt__Pb__DataFile **file_ptrs = NULL;
	size_t		total = 0;
	void	  **owned;

	*frags = NULL;
	*store = NULL;
	for (size_t i = 0; i < n; i++)
		total += base->manifest->fragments[i]->n_files + 1;
	file_ptrs = lt_calloc(total + 1, sizeof(*file_ptrs));
	owned = lt_calloc(4, sizeof(void *));
	if (!out || !copies || !dfs || !file_ptrs || !owned)
	{
		lt_free(out);
		lt_free(copies);
		lt_free(dfs);
		lt_free(file_ptrs);
		lt_free(owned);
		return lt_nomem(err);
	}
	owned[0] = copies;
	owned[1] = dfs;
	owned[2] = file_ptrs;
	*store = owned;
	*frags = out;
	total = 0;
	for (size_t i = 0; i < n; i++)
	{
		const Lt__Pb__DataFragment *f = base->manifest->fragments[i];
		const lt_written_file *w = NULL;
		Lt__Pb__DataFile *d = NULL;

		for (size_t k = 0; k < c->n_files && !w; k++)
			if (c->file_fragments[k] == f->id)
			{
				w = &c->files[k];
				d = &dfs[k];
			}
		out[i] = (Lt__Pb__DataFragment *) f;
		if (!w)
		{
			if (f->physical_rows == 0)
				continue;		/* nothing to hold a value */
			return lt_error_set(err, LT_ECONFLICT,
								"fragment %llu of %s was added since the column's values were written",
								(unsigned long long) f->id, sc->name);
		}
		lt_txn_borrow_data_file(d, w);
		copies[i] = *f;
		copies[i].files = &file_ptrs[total];
		copies[i].n_files = 0;
		for (size_t j = 0; j < f->n_files; j++)
		{
			/* as Lance: a file holding only fields no longer in the schema (an altered one) goes */
			bool		live = false;

			for (size_t a = 0; a < f->files[j]->n_fields && !live; a++)
				for (size_t b = 0; b < sc->n_fields && !live; b++)
					live = f->files[j]->fields[a] == sc->fields[b]->id;
			if (live || f->files[j]->n_fields == 0)
			{
				file_ptrs[total++] = f->files[j];
				copies[i].n_files++;
			}
		}
		file_ptrs[total++] = d;
		copies[i].n_files++;
		out[i] = &copies[i];
	}
	return LT_OK;
}

static void
fragments_with_files_free(Lt__Pb__DataFragment **frags, void *store)
{
	void	  **owned = store;

	lt_free(frags);
	if (!owned)
		return;
	for (int i = 0; i < 3; i++)
		lt_free(owned[i]);
	lt_free(owned);
}

/*
 * The config of the new version when the change touches field assignment: an added field tracked
 * (its new root written now) or dropped fields' entries removed.  *cfg NULL when the config stays;
 * else *cfg (lt_free) and *root (lt_free) hold what the manifest points at, *flags the writer flags.
 */
static lt_code
assignment_config(const schema_commit *sc, lt_dataset *base, Lt__Pb__Manifest__ConfigEntry ***cfg, size_t *n_cfg,
				  Lt__Pb__Manifest__ConfigEntry *entry, char *key, size_t keylen, char **root, uint64_t *flags,
				  lt_error *err)
{
	const Lt__Pb__Manifest *bm = base->manifest;
	bool		tracked_left = false;

	*cfg = NULL;
	*root = NULL;
	*n_cfg = 0;
	*flags = bm->has_writer_feature_flags ? bm->writer_feature_flags : 0;
	if (sc->c->kind == LT_SCHEMA_ADD && sc->c->track != LT_SCHEMA_TRACK_NONE)
	{
		lt_assign_field *f = NULL;
		int32_t		id = sc->fields[bm->n_fields]->id;	/* the new top-level field */
		lt_code		rc;

		LT_TRY(lt_assign_new(base, id, &f, err));
		rc = LT_OK;
		for (size_t i = 0; sc->c->track == LT_SCHEMA_TRACK_ASSIGNED && rc == LT_OK && i < base->n_fragments; i++)
			rc = lt_assign_set(f, base->fragments[i]->id, LT_ASSIGN_ALL, NULL, base->fragments[i]->physical_rows, err);
		if (rc == LT_OK)
			rc = lt_assign_write(f, root, err);
		lt_assign_free(f);
		if (rc != LT_OK)
			return rc;
		if (!(*cfg = lt_calloc(bm->n_config + 1, sizeof(**cfg))))
			return lt_nomem(err);
		if (bm->n_config)
			memcpy(*cfg, bm->config, bm->n_config * sizeof(**cfg));
		snprintf(key, keylen, LT_ASSIGN_CONFIG_PREFIX "%d", id);
		entry->key = key;
		entry->value = *root;
		(*cfg)[bm->n_config] = entry;
		*n_cfg = bm->n_config + 1;
		*flags |= LT_FLAG_TABLE_CONFIG | LT_FLAG_FIELD_ASSIGNMENT;
		return LT_OK;
	}
	if (sc->n_dropped == 0 || !lt_assign_any(base))
		return LT_OK;
	if (!(*cfg = lt_calloc(bm->n_config + 1, sizeof(**cfg))))
		return lt_nomem(err);
	for (size_t i = 0; i < bm->n_config; i++)
	{
		int32_t		id;
		bool		drop = false;

		if (lt_assign_config_key(bm->config[i]->key, &id))
		{
			for (size_t k = 0; k < sc->n_dropped && !drop; k++)
				drop = sc->dropped[k] == id;
			tracked_left |= !drop;
		}
		if (!drop)
			(*cfg)[(*n_cfg)++] = bm->config[i];
	}
	/* with no tracked field left, Lance engines may write the dataset again */
	if (!tracked_left)
		*flags &= ~LT_FLAG_FIELD_ASSIGNMENT;
	return LT_OK;
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
	Lt__Pb__DataFragment **frags = NULL;
	void	   *frag_store = NULL;
	Lt__Pb__Manifest__ConfigEntry **cfg = NULL;
	Lt__Pb__Manifest__ConfigEntry entry = LT__PB__MANIFEST__CONFIG_ENTRY__INIT;
	size_t		n_cfg = 0;
	char		key[64];
	char	   *root = NULL;
	uint64_t	flags = 0;
	uint8_t		uuid[16];
	char		uuid_text[40];
	lt_code		rc;

	*lost_race = false;
	LT_TRY(lt_txn_check_writable(base, sc->name, err));
	m.n_fields = sc->n_fields;
	m.fields = sc->fields;
	if (sc->c->n_files)
	{
		if ((rc = fragments_with_files(sc, base, &frags, &frag_store, err)) != LT_OK)
		{
			fragments_with_files_free(frags, frag_store);
			return rc;
		}
		m.fragments = frags;
	}
	if ((rc = assignment_config(sc, base, &cfg, &n_cfg, &entry, key, sizeof(key), &root, &flags, err)) != LT_OK)
	{
		fragments_with_files_free(frags, frag_store);
		lt_free(cfg);
		lt_free(root);
		return rc;
	}
	if (cfg)
	{
		m.config = cfg;
		m.n_config = n_cfg;
		m.has_writer_feature_flags = true;
		m.writer_feature_flags = flags;
	}
	if (sc->n_dropped && indexes)
	{
		/* as Lance: an index on a dropped field goes with it */
		if (!(kept = lt_calloc(indexes->n_indices + 1, sizeof(*kept))))
		{
			fragments_with_files_free(frags, frag_store);
			lt_free(cfg);
			lt_free(root);
			return lt_nomem(err);
		}
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
	if (sc->c->kind == LT_SCHEMA_ADD || sc->c->kind == LT_SCHEMA_ALTER_TYPE)
	{
		mg.n_fragments = m.n_fragments;
		mg.fragments = m.fragments;
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
	fragments_with_files_free(frags, frag_store);
	lt_free(cfg);
	lt_free(root);
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
	if (c->kind == LT_SCHEMA_ALTER_TYPE && !c->files)
		return lt_error_set(err, LT_EINVALID, "a type change needs the data files of the cast values");
	LT_TRY(lt_schema_change_check(read, c, err));
	rc = new_schema(read, &sc, err);
	if (rc == LT_OK)
		rc = lt_txn_commit_loop(read, &kind, opts ? opts->max_attempts : 0, result, err);
	schema_commit_clear(read, &sc);
	return rc;
}
