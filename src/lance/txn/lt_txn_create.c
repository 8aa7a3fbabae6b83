/*
 * lt_txn_create.c — a new dataset committed as one Overwrite (lt_txn_create.h).
 */
#include "txn/lt_txn_create.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "txn/lt_txn_int.h"

struct lt_new_dataset
{
	size_t		n_pb;
	Lt__Pb__Field **pb;			/* pre-order, ids 0.. */
	Lt__Pb__Field *pb_store;
	lt_schema  *schema;
	char		storage_version[8];
	lt_file_version file_version;
};

/* The legacy Field.encoding Lance still writes: plain for fixed-width and lists, var-binary for strings. */
static int
legacy_encoding(const lt_field *f)
{
	if (f->type == LT_TYPE_STRUCT)
		return 0;
	if (lt_type_is_var_width(f->type))
		return LT__PB__LEGACY_ENCODING__ENC_VAR_BINARY;
	return LT__PB__LEGACY_ENCODING__ENC_PLAIN;
}

lt_code
lt_new_dataset_init(const lt_new_field *fields, int n, const char *storage_version, lt_new_dataset **out,
					lt_error *err)
{
	lt_new_dataset *nd;
	int32_t    *order = NULL;
	int			k = 0;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (n <= 0)
		return lt_error_set(err, LT_EINVALID, "a dataset needs at least one column");
	if (!(nd = lt_calloc(1, sizeof(*nd))))
		return lt_nomem(err);
	if (!storage_version || strlen(storage_version) >= sizeof(nd->storage_version) ||
		(strcmp(storage_version, "2.0") != 0 && strcmp(storage_version, "2.1") != 0 &&
		 strcmp(storage_version, "2.2") != 0))
	{
		rc = lt_error_set(err, LT_EINVALID, "storage version \"%s\" cannot be written (2.0, 2.1 or 2.2)",
						  storage_version ? storage_version : "");
		goto fail;
	}
	strcpy(nd->storage_version, storage_version);
	if ((rc = lt_file_version_for_storage(storage_version, &nd->file_version, err)) != LT_OK)
		goto fail;
	nd->pb = lt_calloc((size_t) n, sizeof(Lt__Pb__Field *));
	nd->pb_store = lt_calloc((size_t) n, sizeof(Lt__Pb__Field));
	order = lt_malloc((size_t) n * sizeof(int32_t));
	if (!nd->pb || !nd->pb_store || !order)
	{
		rc = lt_nomem(err);
		goto fail;
	}
	for (int i = 0; i < n; i++)
	{
		if (fields[i].parent >= i || fields[i].parent < -1 || !fields[i].name || !fields[i].name[0] ||
			!fields[i].logical_type)
		{
			rc = lt_error_set(err, LT_EINVALID, "field %d of the new schema is malformed", i);
			goto fail;
		}
		for (int j = 0; j < i; j++)
			if (fields[j].parent == fields[i].parent && strcmp(fields[j].name, fields[i].name) == 0)
			{
				rc = lt_error_set(err, LT_EINVALID, "the new schema names field \"%s\" twice", fields[i].name);
				goto fail;
			}
	}

	/*
	 * Ids depth-first from 0 (Lance's rule): the caller lists children after their parent but not
	 * necessarily right after it, so walk the tree.
	 */
	{
		int		   *stack = lt_malloc((size_t) (n + 1) * sizeof(int));
		int			sp = 0;

		if (!stack)
		{
			rc = lt_nomem(err);
			goto fail;
		}
		for (int i = n - 1; i >= 0; i--)
			if (fields[i].parent == -1)
				stack[sp++] = i;
		while (sp > 0)
		{
			int			i = stack[--sp];

			order[k++] = i;
			for (int j = n - 1; j > i; j--)
				if (fields[j].parent == i)
					stack[sp++] = j;
		}
		lt_free(stack);
	}
	{
		int32_t    *id_of = lt_malloc((size_t) n * sizeof(int32_t));

		if (!id_of)
		{
			rc = lt_nomem(err);
			goto fail;
		}
		for (int p = 0; p < k; p++)
			id_of[order[p]] = p;
		for (int p = 0; p < k; p++)
		{
			const lt_new_field *f = &fields[order[p]];
			Lt__Pb__Field *pb = &nd->pb_store[p];
			lt_field	probe = {0};

			lt__pb__field__init(pb);
			pb->name = lt_strdup(f->name);
			pb->logical_type = lt_strdup(f->logical_type);
			if (!pb->name || !pb->logical_type)
			{
				rc = lt_nomem(err);
				break;
			}
			pb->has_id = pb->has_parent_id = pb->has_nullable = true;
			pb->id = p;
			pb->parent_id = f->parent < 0 ? -1 : id_of[f->parent];
			pb->nullable = f->nullable;
			if ((rc = lt_parse_logical_type(f->logical_type, &probe, err)) != LT_OK)
				break;
			lt_free(probe.timezone);
			if (probe.type != LT_TYPE_STRUCT)
			{
				pb->has_encoding = true;
				pb->encoding = legacy_encoding(&probe);
			}
			nd->pb[p] = pb;
		}
		nd->n_pb = (size_t) k;
		lt_free(id_of);
		if (rc != LT_OK)
			goto fail;
	}
	if ((rc = lt_schema_from_pb(nd->pb, nd->n_pb, &nd->schema, err)) != LT_OK)
		goto fail;
	lt_free(order);
	*out = nd;
	return LT_OK;
fail:
	lt_free(order);
	lt_new_dataset_free(nd);
	return rc;
}

const lt_schema *
lt_new_dataset_schema(const lt_new_dataset *nd)
{
	return nd->schema;
}

lt_file_version
lt_new_dataset_file_version(const lt_new_dataset *nd)
{
	return nd->file_version;
}

void
lt_new_dataset_free(lt_new_dataset *nd)
{
	if (!nd)
		return;
	for (size_t i = 0; nd->pb_store && i < nd->n_pb; i++)
	{
		lt_free(nd->pb_store[i].name);
		lt_free(nd->pb_store[i].logical_type);
	}
	lt_free(nd->pb_store);
	lt_free(nd->pb);
	if (nd->schema)
		lt_schema_free(nd->schema);
	lt_free(nd);
}

lt_code
lt_dataset_exists(lt_store *store, const char *prefix, bool *exists, lt_error *err)
{
	uint64_t	latest = 0;
	lt_naming	naming;
	lt_code		rc = lt_dataset_latest_version(store, prefix, &latest, &naming, err);

	*exists = rc == LT_OK && latest > 0;
	return rc == LT_ENOTFOUND ? LT_OK : rc;
}

void
lt_txn_borrow_data_file(Lt__Pb__DataFile *d, const lt_written_file *w)
{
	lt__pb__data_file__init(d);
	d->path = w->name;
	d->n_fields = d->n_column_indices = (size_t) (w->n_fields > 0 ? w->n_fields : 0);
	d->fields = w->field_ids;
	d->column_indices = w->column_indices;
	d->has_file_major_version = d->has_file_minor_version = true;
	d->file_major_version = w->major;
	d->file_minor_version = w->minor;
	d->has_file_size_bytes = w->size > 0;
	d->file_size_bytes = w->size;
}

/* What one attempt commits. */
typedef struct create_commit
{
	const char *name;
	const lt_new_dataset *nd;
	size_t		n_files;
	const lt_written_file *files;
	Lt__Pb__DataFragment *frags;
	Lt__Pb__DataFragment **frag_ptrs;
	Lt__Pb__DataFile *dfs;
	Lt__Pb__DataFile **df_ptrs;
} create_commit;

static lt_code
build_fragments(create_commit *c, lt_error *err)
{
	size_t		n = c->n_files;

	c->frags = lt_calloc(n + 1, sizeof(Lt__Pb__DataFragment));
	c->frag_ptrs = lt_calloc(n + 1, sizeof(Lt__Pb__DataFragment *));
	c->dfs = lt_calloc(n + 1, sizeof(Lt__Pb__DataFile));
	c->df_ptrs = lt_calloc(n + 1, sizeof(Lt__Pb__DataFile *));
	if (!c->frags || !c->frag_ptrs || !c->dfs || !c->df_ptrs)
		return lt_nomem(err);
	for (size_t i = 0; i < n; i++)
	{
		const lt_written_file *w = &c->files[i];
		Lt__Pb__DataFile *d = &c->dfs[i];
		Lt__Pb__DataFragment *f = &c->frags[i];

		if (w->num_rows == 0 || w->num_rows > UINT32_MAX || !w->name || strchr(w->name, '/'))
			return lt_error_set(err, LT_EINVALID, "data file %llu of the new dataset is not a valid fragment",
								(unsigned long long) i);
		lt_txn_borrow_data_file(d, w);
		c->df_ptrs[i] = d;
		lt__pb__data_fragment__init(f);
		f->has_id = true;
		f->id = i;
		f->n_files = 1;
		f->files = &c->df_ptrs[i];
		f->has_physical_rows = true;
		f->physical_rows = w->num_rows;
		c->frag_ptrs[i] = f;
	}
	return LT_OK;
}

static lt_code
create_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	create_commit *c = arg;
	Lt__Pb__Manifest m = LT__PB__MANIFEST__INIT;
	Lt__Pb__DataStorageFormat fmt = LT__PB__DATA_STORAGE_FORMAT__INIT;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__Overwrite ow = LT__PB__TRANSACTION__OVERWRITE__INIT;
	uint8_t		uuid[16];
	char		uuid_text[40];
	uint64_t	rows = 0;
	lt_code		rc;

	if (base->manifest && (rc = lt_txn_check_writable(base, c->name, err)) != LT_OK)
		return rc;
	m.n_fields = c->nd->n_pb;
	m.fields = c->nd->pb;
	m.n_fragments = c->n_files;
	m.fragments = c->frag_ptrs;
	if (c->n_files > 0)
	{
		m.has_max_fragment_id = true;
		m.max_fragment_id = (uint32_t) (c->n_files - 1);
	}
	fmt.file_format = "lance";
	fmt.version = (char *) c->nd->storage_version;
	m.data_format = &fmt;
	m.has_reader_feature_flags = m.has_writer_feature_flags = true;
	if (base->manifest)
		m.writer_feature_flags = base->manifest->writer_feature_flags & LT_FLAG_DISABLE_TXN_FILE;

	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	ow.n_fragments = c->n_files;
	ow.fragments = c->frag_ptrs;
	ow.n_schema = c->nd->n_pb;
	ow.schema = c->nd->pb;
	tx.operation_case = LT__PB__TRANSACTION__OPERATION_OVERWRITE;
	tx.overwrite = &ow;
	LT_TRY(lt_txn_publish(base, &m, NULL, &tx, c->name, lost_race, err));
	for (size_t i = 0; i < c->n_files; i++)
		rows += c->files[i].num_rows;
	res->op = LT_OP_OVERWRITE;
	res->version = base->version + 1;
	res->rows_added = rows;
	res->fragments_added = c->n_files;
	res->fragments_removed = base->n_fragments;
	return LT_OK;
}

/* As in Lance, an Overwrite does not conflict with what was committed since the version it read. */
static lt_code
create_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	return LT_OK;
}

lt_code
lt_commit_create(lt_store *store, const char *prefix, const lt_new_dataset *nd, bool overwrite, size_t n_files,
				 const lt_written_file *files, lt_commit_result *result, lt_error *err)
{
	create_commit c = {0};
	char		name[512];
	bool		exists = false;
	lt_code		rc;

	memset(result, 0, sizeof(*result));
	snprintf(name, sizeof(name), "%s%s", store->root ? store->root : "", prefix ? prefix : "");
	c.name = name;
	c.nd = nd;
	c.n_files = n_files;
	c.files = files;
	for (size_t i = 0; i < n_files; i++)
		if (files[i].major != 2 || (int) files[i].minor != nd->storage_version[2] - '0')
			return lt_error_set(err, LT_EINVALID, "data file %s is not in storage version %s", files[i].name,
								nd->storage_version);
	if ((rc = build_fragments(&c, err)) != LT_OK)
		goto out;
	if ((rc = lt_dataset_exists(store, prefix, &exists, err)) != LT_OK)
		goto out;
	if (exists && !overwrite)
	{
		rc = lt_error_set(err, LT_EINVALID, "dataset %s already exists", name);
		goto out;
	}
	if (!exists)
	{
		/* version 1, only if no one created it meanwhile */
		lt_dataset	base = {0};
		bool		lost = false;

		base.store = store;
		base.prefix = (char *) (prefix ? prefix : "");
		base.version = 0;
		base.naming = LT_NAMING_V2;
		result->attempts = 1;
		rc = create_attempt(&c, &base, result, &lost, err);
		if (rc == LT_ECONFLICT && lost)
			rc = lt_error_set(err, LT_ECONFLICT, "dataset %s was created concurrently", name);
	}
	else
	{
		lt_dataset *read = NULL;
		lt_version_spec latest = {0};
		lt_commit_kind kind = {name, create_check, create_attempt, &c};

		if ((rc = lt_dataset_open(store, prefix, &latest, &read, err)) == LT_OK)
			rc = lt_txn_commit_loop(read, &kind, 0, result, err);
		if (read)
			lt_dataset_close(read);
	}
out:
	lt_free(c.frags);
	lt_free(c.frag_ptrs);
	lt_free(c.dfs);
	lt_free(c.df_ptrs);
	return rc;
}
