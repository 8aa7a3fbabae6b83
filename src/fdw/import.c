/*
 * import.c — IMPORT FOREIGN SCHEMA: one foreign table per dataset directory.
 *
 *   IMPORT FOREIGN SCHEMA "." FROM SERVER lake INTO public;             -- datasets in the root
 *   IMPORT FOREIGN SCHEMA "sub/dir" FROM SERVER lake INTO public;       -- ... in a sub-directory
 *   ... OPTIONS (import_row_id 'true')                                  -- adds _rowid bigint
 * A field that tracks its assignment gets a boolean column <field>_is_assigned reading is_assigned(field).
 *
 * A directory is a dataset when it has committed versions (_versions/); the table is named after the
 * directory without its ".lance" suffix, and its columns follow the latest version's schema with
 * DESIGN.md's type mapping. A struct column gets a composite type, created here (Postgres accepts
 * only CREATE FOREIGN TABLE statements back from the wrapper) and named <table>_<column>; an
 * existing type of that name is reused, and its fit is checked when the table is read. A field
 * with no mapping is an error (HV004) naming the dataset and the field.
 *
 * Directory and field names come from the dataset, not from a trusted user: a name that is not
 * valid in the server encoding never reaches the catalog (the table is skipped with a NOTICE),
 * and so is every *.lance directory that is not a dataset and every LIMIT TO name with no dataset.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/acl.h"
#include "utils/syscache.h"

#include "io/lt_store.h"
#include "convert.h"
#include "dataset.h"
#include "import.h"
#include "namespace.h"
#include "option.h"
#include "store.h"
#include "assignment/lt_assignment.h"

typedef struct DirList
{
	List	   *names;
	bool		oom;
} DirList;

/* One table to import: its directory's name (for messages), its table name, where it is, how it is named. */
typedef struct ImportItem
{
	char	   *name;
	char	   *table;
	char	   *ddir;
	char	   *option_sql;		/* "path '...'" or "identifier '...'" */
	LtS3Location *s3;			/* the credentials of its location (a REST namespace's, per table), or NULL */
	bool		claimed;		/* listed as a table (a namespace's entry, or a *.lance directory) */
} ImportItem;

/* Called inside the library: must not ereport, so no palloc that can fail by longjmp. */
static int
collect_dir(const lt_dirent *ent, void *arg)
{
	DirList    *dl = arg;
	size_t		len;
	char	   *copy;

	if (!ent->is_dir || ent->name[0] == '.' || ent->name[0] == '_')
		return 0;
	len = strlen(ent->name);
	copy = palloc_extended(len + 1, MCXT_ALLOC_NO_OOM);
	if (copy == NULL)
	{
		dl->oom = true;
		return 1;
	}
	memcpy(copy, ent->name, len + 1);
	dl->names = lappend(dl->names, copy);	/* small; a failure here is an ordinary OOM ERROR */
	return 0;
}

static int
name_cmp(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

static bool
table_wanted(ImportForeignSchemaStmt *stmt, const char *name)
{
	ListCell   *lc;

	if (stmt->list_type == FDW_IMPORT_SCHEMA_ALL)
		return true;
	foreach(lc, stmt->table_list)
	{
		RangeVar   *rv = lfirst(lc);

		if (strcmp(rv->relname, name) == 0)
			return stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO;
	}
	return stmt->list_type == FDW_IMPORT_SCHEMA_EXCEPT;
}

/* Is name valid text in the server encoding (and so fit for the catalog)? */
static bool
name_ok(const char *name)
{
	return pg_verifymbstr(name, strlen(name), true);
}

/* name, printable whatever its bytes: non-ASCII and control bytes as \xNN (for messages). */
static char *
name_shown(const char *name)
{
	StringInfoData b;

	initStringInfo(&b);
	for (const unsigned char *c = (const unsigned char *) name; *c; c++)
		if (*c < 0x20 || *c >= 0x7f)
			appendStringInfo(&b, "\\x%02x", *c);
		else
			appendStringInfoChar(&b, (char) *c);
	return b.data;
}

/* The first field name (nested ones too) not valid in the server encoding, or NULL. */
static const lt_field *
bad_field_name(const lt_field *const *fields, int n)
{
	for (int i = 0; i < n; i++)
	{
		const lt_field *bad;

		if (!name_ok(fields[i]->name))
			return fields[i];
		if ((bad = bad_field_name((const lt_field *const *) fields[i]->children, fields[i]->n_children)) != NULL)
			return bad;
	}
	return NULL;
}

static char *field_type_sql(ImportForeignSchemaStmt *stmt, const char *table, const char *path,
							const lt_field *f, const char *dataset);

/* CREATE TYPE for a struct (unless a type of that name exists); returns its qualified name. */
static char *
composite_for(ImportForeignSchemaStmt *stmt, const char *table, const char *path, const lt_field *f,
			  const char *dataset)
{
	char	   *typname = psprintf("%s_%s", table, path);
	Oid			nsp = get_namespace_oid(stmt->local_schema, false);
	char	   *qualified = quote_qualified_identifier(stmt->local_schema, typname);
	StringInfoData sql;

	check_stack_depth();
	if (typname[0] && OidIsValid(GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
												 PointerGetDatum(typname), ObjectIdGetDatum(nsp))))
		return qualified;
	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TYPE %s AS (", qualified);
	for (int i = 0; i < f->n_children; i++)
	{
		const lt_field *c = f->children[i];
		char	   *cpath = psprintf("%s_%s", path, c->name);

		appendStringInfo(&sql, "%s%s %s", i ? ", " : "", quote_identifier(c->name),
						 field_type_sql(stmt, table, cpath, c, dataset));
	}
	appendStringInfoChar(&sql, ')');
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "lt_fdw: could not create type %s", qualified);
	return qualified;
}

static char *
field_type_sql(ImportForeignSchemaStmt *stmt, const char *table, const char *path, const lt_field *f,
			   const char *dataset)
{
	char	   *t;

	if (f->type == LT_TYPE_STRUCT && f->blob == LT_BLOB_NONE)	/* a blob v2 struct is its bytes: bytea */
	{
		if (f->n_children == 0)
			return "jsonb";
		return composite_for(stmt, table, path, f, dataset);
	}
	t = lt_type_sql(f);
	if (t == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("lt_fdw: field \"%s\" of dataset %s has type %s, which lt_fdw cannot map to a Postgres type",
						path, dataset, f->logical_type)));
	return t;
}

/* The datasets of a directory (the server's root or a directory below it), one item per sub-directory. */
static List *
directory_items(ImportForeignSchemaStmt *stmt, ForeignServer *server, const char *root, const LtS3Location *s3)
{
	char	   *dir;
	DirList		dl = {NIL, false};
	lt_store   *store = NULL;
	lt_error	err;
	lt_code		rc;
	MemoryContext old;
	List	   *items = NIL;
	ListCell   *lc;

	if (strcmp(stmt->remote_schema, ".") == 0)
		dir = pstrdup(root);
	else
	{
		if (stmt->remote_schema[0] == '/' || strstr(stmt->remote_schema, "..") != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
					 errmsg("lt_fdw: remote schema \"%s\" must be \".\" or a directory below the server's root",
							stmt->remote_schema)));
		dir = psprintf("%s/%s", root, stmt->remote_schema);
	}
	old = lt_alloc_target(CurrentMemoryContext);
	rc = lt_open_store(s3, dir, &store, &err);
	if (rc == LT_OK)
		rc = lt_store_list(store, "", collect_dir, &dl, &err);
	if (store)
		lt_store_close(store);
	lt_alloc_target(old);
	if (rc == LT_ENOTFOUND)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("lt_fdw: remote schema \"%s\" does not exist under the root of server \"%s\"",
						stmt->remote_schema, server->servername)));
	if (rc != LT_OK)
		lt_report(&err, s3 ? psprintf("directory %s", dir) : psprintf("directory file://%s", dir));
	if (dl.oom)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	list_sort(dl.names, name_cmp);
	foreach(lc, dl.names)
	{
		char	   *name = lfirst(lc);
		ImportItem *it = palloc0(sizeof(ImportItem));
		size_t		len = strlen(name);

		it->name = name;
		it->table = pstrdup(name);
		if (len > 6 && strcmp(it->table + len - 6, ".lance") == 0)
		{
			it->table[len - 6] = '\0';
			it->claimed = true;
		}
		it->ddir = psprintf("%s/%s", dir, name);
		/* on S3 the absolute URI: a path relative to the root would need pg_read_server_files */
		it->option_sql = psprintf("path %s",
								  quote_literal_cstr(s3 ? it->ddir : strcmp(stmt->remote_schema, ".") == 0 ? name
													 : psprintf("%s/%s", stmt->remote_schema, name)));
		items = lappend(items, it);
	}
	return items;
}

/* The tables of a namespace of a directory-namespace server, each named by its identifier. */
static List *
namespace_items(ImportForeignSchemaStmt *stmt, ForeignServer *server, const char *root, const LtS3Location *s3)
{
	const char *ns_id = strcmp(stmt->remote_schema, ".") == 0 ? "" : stmt->remote_schema;
	size_t		n = 0;
	lt_ns_table *tables = lt_namespace_list(server, root, s3, ns_id, &n);
	List	   *items = NIL;

	for (size_t i = 0; i < n; i++)
	{
		ImportItem *it = palloc0(sizeof(ImportItem));
		char	   *identifier = ns_id[0] ? psprintf("%s%c%s", ns_id, LT_NS_DELIMITER, tables[i].name)
			: pstrdup(tables[i].name);

		it->name = pstrdup(tables[i].name);
		it->table = pstrdup(tables[i].name);
		it->ddir = strcmp(root, "/") == 0 ? psprintf("/%s", tables[i].location)
			: psprintf("%s/%s", root, tables[i].location);
		it->option_sql = psprintf("identifier %s", quote_literal_cstr(identifier));
		it->claimed = true;
		items = lappend(items, it);
	}
	return items;
}

/* The tables of a namespace of a REST-namespace server: ListTables, then DescribeTable of each. */
static List *
rest_items(ImportForeignSchemaStmt *stmt, ForeignServer *server)
{
	const char *ns_id = strcmp(stmt->remote_schema, ".") == 0 ? "" : stmt->remote_schema;
	List	   *items = NIL;
	ListCell   *lc;

	foreach(lc, lt_namespace_rest_list(server, ns_id))
	{
		char	   *name = lfirst(lc);
		char	   *identifier = ns_id[0] ? psprintf("%s%c%s", ns_id, LT_NS_DELIMITER, name) : pstrdup(name);
		ImportItem *it = palloc0(sizeof(ImportItem));
		LtNamespaceTable *t;

		it->name = name;
		it->table = name;
		it->claimed = true;
		it->option_sql = psprintf("identifier %s", quote_literal_cstr(identifier));
		if (!table_wanted(stmt, name) || !name_ok(name) || !lt_ns_id_valid(identifier))
		{
			items = lappend(items, it);		/* reported (or skipped) by the caller */
			continue;
		}
		t = lt_namespace_rest_describe(server, identifier);
		it->ddir = t->dataset_dir;
		it->s3 = t->s3;
		if (t->s3 == NULL && !(superuser() || has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES)))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("lt_fdw: permission denied to import table \"%s\" of server \"%s\"", identifier,
							server->servername),
					 errdetail("Its namespace places it in the local directory %s; reading local files needs superuser or the privileges of the \"%s\" role.",
							   t->dataset_dir, "pg_read_server_files")));
		items = lappend(items, it);
	}
	return items;
}

List *
ltImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	ForeignServer *server = GetForeignServer(serverOid);
	char	   *root = NULL;
	bool		row_id = false;
	bool		is_namespace;
	LtNamespaceConf conf;
	ListCell   *lc;
	LtS3Location *s3 = NULL;
	MemoryContext old;
	MemoryContext caller;
	List	   *commands = NIL;
	List	   *items = NIL;
	List	   *seen;
	const char *where;

	foreach(lc, server->options)
	{
		DefElem    *def = lfirst(lc);

		if (strcmp(def->defname, "root") == 0)
			root = lt_location_from_uri(defGetString(def), "root");
	}
	foreach(lc, stmt->options)
	{
		DefElem    *def = lfirst(lc);

		if (strcmp(def->defname, "import_row_id") == 0)
			row_id = defGetBoolean(def);
		else
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("lt_fdw: invalid option \"%s\" for IMPORT FOREIGN SCHEMA", def->defname),
					 errhint("Valid options in this context are: import_row_id.")));
	}
	is_namespace = lt_server_namespace(server, &conf);
	if (conf.rest_uri)
		items = rest_items(stmt, server);	/* each table's location and credentials from the namespace */
	else if (root == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("lt_fdw: server \"%s\" has no \"root\" option to import from", server->servername)));
	else if (lt_is_s3_uri(root))
		s3 = lt_s3_location(server, GetUserId());	/* its credentials decide what may be listed */
	else if (!(superuser() || has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("lt_fdw: permission denied to import from server \"%s\"", server->servername),
				 errdetail("Listing local directories needs superuser or the privileges of the \"%s\" role.",
						   "pg_read_server_files")));

	if (!conf.rest_uri)
		items = is_namespace ? namespace_items(stmt, server, root, s3) : directory_items(stmt, server, root, s3);
	where = strcmp(stmt->remote_schema, ".") == 0 ?
		psprintf("the root %sof server \"%s\"", is_namespace ? "namespace " : "", server->servername)
		: psprintf("remote schema \"%s\" of server \"%s\"", stmt->remote_schema, server->servername);

	caller = CurrentMemoryContext;
	seen = NIL;
	SPI_connect();				/* composite types are created through SPI; results stay in caller */
	foreach(lc, items)
	{
		ImportItem *it = lfirst(lc);
		char	   *name = it->name;
		char	   *table = it->table;
		LtS3Location *its3 = it->s3 ? it->s3 : s3;
		char	   *uri;
		LtDatasetEntry *e;
		const lt_schema *schema;
		StringInfoData sql;

		if (!table_wanted(stmt, table))
			continue;			/* (a LIMIT TO name is valid text: it never matches an invalid one) */
		if (!name_ok(name))
		{
			ereport(NOTICE,
					(errmsg("lt_fdw: IMPORT FOREIGN SCHEMA skips %s \"%s\" of %s: its name is not valid %s",
							is_namespace ? "table" : "directory", name_shown(name), where,
							GetDatabaseEncodingName()),
					 is_namespace ? errhint("Create its foreign table by hand with the option identifier.")
					 : errhint("Rename the directory, then import it or create its foreign table by hand.")));
			continue;
		}
		seen = lappend(seen, table);
		if (it->ddir == NULL)
			continue;			/* a REST namespace's name that is no identifier */
		uri = lt_is_s3_uri(it->ddir) ? it->ddir : psprintf("file://%s", it->ddir);
		e = lt_dataset_open_latest(its3, it->ddir, psprintf("dataset %s", uri));
		if (e == NULL)
		{
			/* not a dataset: said for the directories that claim to be one, or were asked for */
			if (it->claimed || stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO)
				ereport(NOTICE,
						(errmsg("lt_fdw: IMPORT FOREIGN SCHEMA skips %s \"%s\" of %s: it is not a Lance dataset",
								is_namespace ? "table" : "directory", name, where),
						 is_namespace ? errdetail("Its location %s has no committed version (_versions/).", uri)
						 : errdetail("It has no committed version (_versions/)."),
						 errhint("A dataset directory holds _versions/ with at least one manifest.")));
			continue;
		}
		e->pins++;				/* keep the schema while the statements are built */
		PG_TRY();
		{
			const lt_field *bad;

			schema = e->ds->schema;
			if ((bad = bad_field_name((const lt_field *const *) schema->fields, schema->n_fields)) != NULL)
			{
				ereport(NOTICE,
						(errmsg("lt_fdw: IMPORT FOREIGN SCHEMA skips dataset \"%s\" of %s: its field name \"%s\" is not valid %s",
								name, where, name_shown(bad->name), GetDatabaseEncodingName()),
						 errhint("Create its foreign table by hand, with the option column_name for the fields it reads.")));
				sql.data = NULL;
				goto skip;
			}
			initStringInfo(&sql);
			appendStringInfo(&sql, "CREATE FOREIGN TABLE %s (",
							 quote_qualified_identifier(stmt->local_schema, table));
			if (row_id)
				appendStringInfoString(&sql, "_rowid bigint");
			for (int i = 0; i < schema->n_fields; i++)
			{
				const lt_field *f = schema->fields[i];

				appendStringInfo(&sql, "%s%s %s", (i || row_id) ? ", " : "", quote_identifier(f->name),
								 field_type_sql(stmt, table, f->name, f, uri));
				if (!f->nullable)
					appendStringInfoString(&sql, " NOT NULL");
			}
			/* a tracked field's is_assigned(field) column (field assignment, assign.c) */
			for (int i = 0; i < schema->n_fields; i++)
			{
				const lt_field *f = schema->fields[i];
				char	   *col;

				if (!lt_assign_is_tracked(e->ds, f->id, NULL))
					continue;
				col = psprintf("%s_is_assigned", f->name);
				if (lt_schema_find_name(schema, col) != NULL || (row_id && strcmp(col, "_rowid") == 0))
				{
					ereport(NOTICE,
							(errmsg("lt_fdw: IMPORT FOREIGN SCHEMA gives table \"%s\" no column \"%s\" for is_assigned(%s): the dataset has a field of that name",
									table, col, f->name),
							 errhint("Add a boolean column with OPTIONS (is_assigned '%s') under another name.", f->name)));
					continue;
				}
				appendStringInfo(&sql, "%s%s boolean OPTIONS (is_assigned %s)", (schema->n_fields || row_id) ? ", " : "",
								 quote_identifier(col), quote_literal_cstr(f->name));
			}
			appendStringInfo(&sql, ") SERVER %s OPTIONS (%s)", quote_identifier(server->servername),
							 it->option_sql);
	skip:
			;
		}
		PG_FINALLY();
		{
			lt_dataset_unpin(e);
		}
		PG_END_TRY();
		if (sql.data == NULL)
			continue;
		old = MemoryContextSwitchTo(caller);
		commands = lappend(commands, pstrdup(sql.data));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	/* LIMIT TO names that named no directory at all (the others were reported above) */
	if (stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO)
		foreach(lc, stmt->table_list)
		{
			RangeVar   *rv = lfirst(lc);
			ListCell   *lc2;
			bool		found = false;

			foreach(lc2, seen)
				found |= strcmp(lfirst(lc2), rv->relname) == 0;
			if (!found)
				ereport(NOTICE,
						(errmsg("lt_fdw: IMPORT FOREIGN SCHEMA imports no table \"%s\": %s has no %s of that name",
								rv->relname, where, is_namespace ? "table" : "dataset"),
						 is_namespace ? errhint("The namespace lists its tables in __manifest and, at its root, as <name>.lance directories.")
						 : errhint("The name of a dataset's table is its directory's name without \".lance\".")));
		}
	return commands;
}
