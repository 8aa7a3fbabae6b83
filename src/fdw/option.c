/*
 * option.c — lt_fdw's options: the table of valid options, the validator, option lookup for a
 * foreign table, and the privilege rule for local paths.
 *
 *   server        root          local directory, file:// URI, or s3://bucket/prefix (store.c)
 *                 endpoint, region, path_style, allow_http   where an s3:// root is (store.c)
 *   user mapping  aws_access_key_id, aws_secret_access_key, aws_session_token   S3 credentials,
 *                               accepted in user mappings only and never printed
 *                 credentials_required   default true; only a superuser may set it false (store.c)
 *   server        namespace     'directory': root is a Lance directory namespace (namespace.c)
 *                 manifest_enabled, dir_listing_enabled, dir_listing_to_manifest_migration_enabled
 *                               which of its forms are read, with Lance's defaults (true, true, false)
 *                 namespace_uri the URL of a Lance REST namespace (http:// only with allow_http)
 *   user mapping  namespace_api_key, namespace_bearer_token   the REST namespace's authentication
 *                               (x-api-key / Authorization: Bearer), in user mappings only, never printed
 *   foreign table path          dataset directory, relative to root or absolute
 *                 identifier    the table's identifier in the server's namespace ("ns$table"),
 *                               resolved to its location through the namespace (not with path)
 *                 version       positive integer: read that version (read-only)
 *                 tag           Lance tag: read the version it names (read-only)
 *   column        column_name   the dataset field the column reads (default: the column's name)
 *                 is_assigned   a boolean column that reads is_assigned(field) of this tracked field
 *   server, table batch_size    rows per ExecForeignBatchInsert call (default 1: Postgres's own
 *                               INSERT path; rows are buffered into column builders either way)
 *                 max_rows_per_file  a new data file (and fragment) every this many rows (1048576)
 *                 auto_compact  off (default), or N: after a committed write, compact when Lance's plan
 *                               would rewrite at least N small fragments (maintain.c)
 *
 * Writes (INSERT, UPDATE, DELETE, COPY FROM) need superuser or the privileges of
 * pg_write_server_files, checked when a write starts (lt_check_write_privilege).
 *
 * Local paths need superuser or the privileges of pg_read_server_files (s3:// locations do not: the
 * credentials of the user mapping decide what can be read there). The validator checks the
 * role that sets root/path; lt_check_read_privilege is called again when a table is opened, because
 * a table's effective location also depends on its server's options.
 */
#include "postgres.h"

#include <limits.h>

#include "access/reloptions.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc_tables.h"
#include "utils/lsyscache.h"
#include "utils/varlena.h"

#include "io/lt_store_s3.h"
#include "namespace/lt_namespace.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "option.h"
#include "store.h"

typedef struct LtFdwOption
{
	const char *name;
	Oid			context;		/* ForeignServerRelationId, ForeignTableRelationId, ... */
} LtFdwOption;

static const LtFdwOption lt_fdw_options[] = {
	{"root", ForeignServerRelationId},
	{"path", ForeignTableRelationId},
	{"version", ForeignTableRelationId},
	{"tag", ForeignTableRelationId},
	{"branch", ForeignTableRelationId},
	{"column_name", AttributeRelationId},
	{"is_assigned", AttributeRelationId},
	{"namespace", ForeignServerRelationId},
	{"manifest_enabled", ForeignServerRelationId},
	{"dir_listing_enabled", ForeignServerRelationId},
	{"dir_listing_to_manifest_migration_enabled", ForeignServerRelationId},
	{"namespace_uri", ForeignServerRelationId},
	{"identifier", ForeignTableRelationId},
	{"batch_size", ForeignServerRelationId},
	{"batch_size", ForeignTableRelationId},
	{"max_rows_per_file", ForeignServerRelationId},
	{"max_rows_per_file", ForeignTableRelationId},
	{"auto_compact", ForeignServerRelationId},
	{"auto_compact", ForeignTableRelationId},
	{"endpoint", ForeignServerRelationId},
	{"region", ForeignServerRelationId},
	{"path_style", ForeignServerRelationId},
	{"allow_http", ForeignServerRelationId},
	{"aws_access_key_id", UserMappingRelationId},
	{"aws_secret_access_key", UserMappingRelationId},
	{"aws_session_token", UserMappingRelationId},
	{"credentials_required", UserMappingRelationId},
	{"namespace_api_key", UserMappingRelationId},
	{"namespace_bearer_token", UserMappingRelationId},
	{NULL, InvalidOid}
};

PG_FUNCTION_INFO_V1(lt_fdw_validator);

static const char *
context_name(Oid context)
{
	switch (context)
	{
		case ForeignDataWrapperRelationId:
			return "foreign-data wrapper";
		case ForeignServerRelationId:
			return "server";
		case UserMappingRelationId:
			return "user mapping";
		case ForeignTableRelationId:
			return "foreign table";
		case AttributeRelationId:
			return "column";
		default:
			return "object";
	}
}

static bool
is_valid_option(const char *name, Oid context)
{
	for (const LtFdwOption *opt = lt_fdw_options; opt->name != NULL; opt++)
		if (opt->context == context && strcmp(opt->name, name) == 0)
			return true;
	return false;
}

/* The valid option of this context closest to name, when it is close enough to be a typo. */
static const char *
closest_option(const char *name, Oid context)
{
	const char *best = NULL;
	int			best_d = INT_MAX;
	int			len = strlen(name);

	for (const LtFdwOption *opt = lt_fdw_options; opt->name != NULL; opt++)
	{
		int			olen;
		int			d;

		if (opt->context != context)
			continue;
		olen = strlen(opt->name);
		d = varstr_levenshtein_less_equal(name, len, opt->name, olen, 1, 1, 1, 4, true);
		/* at most 4 edits, and at most half of the longer name */
		if (d <= 4 && d * 2 <= Max(len, olen) && d < best_d)
		{
			best = opt->name;
			best_d = d;
		}
	}
	return best;
}

static void
report_invalid_option(const char *name, Oid catalog)
{
	const char *closest = closest_option(name, catalog);
	const LtFdwOption *elsewhere = NULL;
	StringInfoData valid;

	initStringInfo(&valid);
	for (const LtFdwOption *opt = lt_fdw_options; opt->name != NULL; opt++)
	{
		if (opt->context == catalog)
			appendStringInfo(&valid, "%s%s", valid.len > 0 ? ", " : "", opt->name);
		else if (strcmp(opt->name, name) == 0)
			elsewhere = opt;
	}

	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
			 errmsg("lt_fdw: invalid option \"%s\" for a %s", name, context_name(catalog)),
			 closest ? errhint("Perhaps you meant the option \"%s\".", closest) :
			 elsewhere ? errhint("Option \"%s\" belongs to a %s.", name, context_name(elsewhere->context)) :
			 valid.len > 0 ? errhint("Valid options in this context are: %s.", valid.data) :
			 errhint("lt_fdw accepts no options for a %s.", context_name(catalog))));
}

static bool
has_read_privilege(Oid userid)
{
	return superuser_arg(userid) || has_privs_of_role(userid, ROLE_PG_READ_SERVER_FILES);
}

void
lt_check_read_privilege(Oid userid, const char *relname, const char *uri)
{
	if (lt_is_s3_uri(uri))
		return;					/* object storage: the user mapping's credentials decide */
	if (!has_read_privilege(userid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("lt_fdw: permission denied to read foreign table \"%s\"", relname),
				 errdetail("Reading %s needs superuser or the privileges of the \"%s\" role.",
						   uri, "pg_read_server_files")));
}

void
lt_check_write_privilege(Oid userid, const char *relname, const char *uri)
{
	if (lt_is_s3_uri(uri))
		return;					/* object storage: the user mapping's credentials decide */
	if (!superuser_arg(userid) && !has_privs_of_role(userid, ROLE_PG_WRITE_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("lt_fdw: permission denied to write foreign table \"%s\"", relname),
				 errdetail("Writing %s needs superuser or the privileges of the \"%s\" role.",
						   uri, "pg_write_server_files")));
}

static int64 parse_positive(const char *name, const char *value, int64 max);

/* An integer option from min to max. */
static int64
parse_positive_min(const char *name, const char *value, int64 min, int64 max)
{
	int64		v = parse_positive(name, value, max);

	if (v < min)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("Option \"%s\" is \"off\" or an integer from " INT64_FORMAT " to " INT64_FORMAT ".", name, min, max)));
	return v;
}

/* A positive integer option (batch_size, max_rows_per_file) up to max. */
static int64
parse_positive(const char *name, const char *value, int64 max)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = (value[0] >= '0' && value[0] <= '9') ? strtoll(value, &end, 10) : 0;
	if (v <= 0 || v > max || errno != 0 || *end != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("Option \"%s\" is an integer from 1 to " INT64_FORMAT ".", name, max)));
	return (int64) v;
}

/* auto_compact: "off" (0), or the fragments (2 to 1000000) a compaction after a commit must at least rewrite */
static int
parse_auto_compact(const char *value)
{
	if (pg_strcasecmp(value, "off") == 0)
		return 0;
	return (int) parse_positive_min("auto_compact", value, 2, 1000000);
}

#define LT_MAX_BATCH_SIZE		((int64) 65535)		/* Postgres's own bound on a batch */
#define LT_MAX_ROWS_PER_FILE	((int64) 1 << 31)
#define LT_DEFAULT_ROWS_PER_FILE	((int64) 1048576)

/* The table's option `name`, else its server's, else dflt. */
static int64
write_option(Oid relid, const char *name, int64 max, int64 dflt)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);
	ListCell   *lc;

	foreach(lc, table->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, name) == 0)
			return parse_positive(name, defGetString(def), max);
	}
	foreach(lc, server->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, name) == 0)
			return parse_positive(name, defGetString(def), max);
	}
	return dflt;
}

int
lt_option_batch_size(Oid relid)
{
	return (int) write_option(relid, "batch_size", LT_MAX_BATCH_SIZE, 1);
}

int
lt_option_auto_compact(Oid relid)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);
	ListCell   *lc;

	foreach(lc, table->options)
		if (strcmp(((DefElem *) lfirst(lc))->defname, "auto_compact") == 0)
			return parse_auto_compact(defGetString((DefElem *) lfirst(lc)));
	foreach(lc, server->options)
		if (strcmp(((DefElem *) lfirst(lc))->defname, "auto_compact") == 0)
			return parse_auto_compact(defGetString((DefElem *) lfirst(lc)));
	return 0;
}

int64
lt_option_max_rows_per_file(Oid relid)
{
	return write_option(relid, "max_rows_per_file", LT_MAX_ROWS_PER_FILE, LT_DEFAULT_ROWS_PER_FILE);
}

/* An s3:// location from an option value, checked, "s3a://" spelled "s3://", without trailing slashes. */
static char *
s3_location_from_uri(const char *value, const char *option)
{
	char	   *bucket = NULL;
	char	   *prefix = NULL;
	lt_error	err;
	char	   *out;

	if (lt_s3_parse_uri(value, &bucket, &prefix, &err) != LT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: invalid value for option \"%s\": %s", option, err.msg),
				 errhint("An S3 location is s3://bucket or s3://bucket/key/prefix.")));
	out = prefix[0] ? psprintf("s3://%s/%s", bucket, prefix) : psprintf("s3://%s", bucket);
	lt_free(bucket);
	lt_free(prefix);
	return out;
}

/*
 * A location from an option value: a local path ("/dir" or "file:///dir", returned as "/dir") or
 * an s3:// URI (returned checked and normalised); any other scheme is an error.
 */
char *
lt_location_from_uri(const char *value, const char *option)
{
	if (lt_is_s3_uri(value))
		return s3_location_from_uri(value, option);
	return lt_local_path_from_uri(value, option);
}

/* A local path from an option value: "/dir" or "file:///dir"; any other scheme is an error. */
char *
lt_local_path_from_uri(const char *value, const char *option)
{
	const char *p = value;
	char	   *out;
	int			len;

	if (lt_is_s3_uri(value))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: option \"%s\" names an S3 location where a local path is expected: \"%s\"",
						option, value)));
	if (strncmp(value, "file://", 7) == 0)
	{
		p = value + 7;
		if (*p != '/')
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("lt_fdw: invalid value for option \"%s\": \"%s\"", option, value),
					 errdetail("A file:// URI names no host: file:///absolute/path.")));
	}
	else if (strstr(value, "://") != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: invalid value for option \"%s\": \"%s\"", option, value),
				 errdetail("Supported locations are local paths, file:// URIs and s3:// URIs.")));
	out = pstrdup(p);
	/* drop trailing slashes, keeping "/" */
	len = strlen(out);
	while (len > 1 && out[len - 1] == '/')
		out[--len] = '\0';
	return out;
}

static bool
is_absolute_location(const char *value)
{
	return value[0] == '/' || strstr(value, "://") != NULL;
}

/* version: a positive integer; returns it. */
static uint64
parse_version(const char *value)
{
	char	   *end;
	unsigned long long v;

	errno = 0;
	if (value[0] < '0' || value[0] > '9')
		v = 0;
	else
		v = strtoull(value, &end, 10);
	if (v == 0 || errno != 0 || *end != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: invalid value for option \"version\": \"%s\"", value),
				 errhint("A version is a positive integer, as in version '3'.")));
	return (uint64) v;
}

static void
check_tag(const char *value)
{
	if (value[0] == '\0' || value[0] == '.' || strchr(value, '/') != NULL || strchr(value, '\\') != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: invalid value for option \"tag\": \"%s\"", value),
				 errdetail("A tag name is not empty, does not start with \".\" and contains no \"/\".")));
}

/*
 * lt_fdw_validator(options text[], catalog oid): called for CREATE/ALTER of the wrapper, a server, a
 * user mapping, a foreign table and its columns, with the complete option list after the change.
 */
Datum
lt_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	DefElem    *version = NULL;
	DefElem    *tag = NULL;
	DefElem    *path = NULL;
	DefElem    *identifier = NULL;
	DefElem    *root = NULL;
	DefElem    *namespace_uri = NULL;
	DefElem    *namespace_kind = NULL;
	bool		http_namespace = false;
	bool		http_endpoint = false;
	bool		allow_http = false;
	ListCell   *cell;

	foreach(cell, options)
	{
		DefElem    *def = (DefElem *) lfirst(cell);
		char	   *value;

		if (!is_valid_option(def->defname, catalog))
			report_invalid_option(def->defname, catalog);
		value = defGetString(def);

		if (strcmp(def->defname, "root") == 0)
		{
			root = def;
			if (value[0] == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"root\" must not be empty")));
			if (lt_is_s3_uri(value))
			{
				(void) s3_location_from_uri(value, "root");
				continue;		/* no local privilege: credentials decide */
			}
			(void) lt_local_path_from_uri(value, "root");
			if (!is_absolute_location(value))
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"root\" must be an absolute path or a file:// URI: \"%s\"",
								value)));
			if (!has_read_privilege(GetUserId()))
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("lt_fdw: only superuser or a role with privileges of the pg_read_server_files role may specify the root option of a server")));
		}
		else if (strcmp(def->defname, "path") == 0)
		{
			path = def;
			if (value[0] == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"path\" must not be empty")));
			if (lt_is_s3_uri(value))
			{
				(void) s3_location_from_uri(value, "path");
				continue;		/* no local privilege: credentials decide */
			}
			if (is_absolute_location(value))
				(void) lt_local_path_from_uri(value, "path");
			if (!has_read_privilege(GetUserId()))
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("lt_fdw: only superuser or a role with privileges of the pg_read_server_files role may specify the path option of a foreign table")));
		}
		else if (strcmp(def->defname, "version") == 0)
		{
			(void) parse_version(value);
			version = def;
		}
		else if (strcmp(def->defname, "tag") == 0)
		{
			check_tag(value);
			tag = def;
		}
		else if (strcmp(def->defname, "branch") == 0)
		{
			if (!lt_branch_name_valid(value))
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: invalid branch name \"%s\"", value),
						 errdetail("A branch name is one or more '/'-separated segments, none empty, \".\" or \"..\", without backslashes or control characters.")));
		}
		else if (strcmp(def->defname, "batch_size") == 0)
			(void) parse_positive(def->defname, value, LT_MAX_BATCH_SIZE);
		else if (strcmp(def->defname, "max_rows_per_file") == 0)
			(void) parse_positive(def->defname, value, LT_MAX_ROWS_PER_FILE);
		else if (strcmp(def->defname, "auto_compact") == 0)
			(void) parse_auto_compact(value);
		else if (strcmp(def->defname, "endpoint") == 0)
		{
			if (strncmp(value, "https://", 8) != 0 && strncmp(value, "http://", 7) != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"endpoint\" must be an https:// (or, with allow_http, http://) URL: \"%s\"",
								value)));
			if (strncmp(value, "http://", 7) == 0)
				http_endpoint = true;
		}
		else if (strcmp(def->defname, "allow_http") == 0)
			allow_http = defGetBoolean(def);
		else if (strcmp(def->defname, "path_style") == 0)
			(void) defGetBoolean(def);
		else if (strcmp(def->defname, "region") == 0)
		{
			if (value[0] == '\0' || strspn(value, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(value))
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: invalid value for option \"region\": \"%s\"", value),
						 errhint("A region is a name like us-east-1.")));
		}
		else if (strcmp(def->defname, "aws_access_key_id") == 0 ||
				 strcmp(def->defname, "aws_secret_access_key") == 0 ||
				 strcmp(def->defname, "aws_session_token") == 0)
		{
			/* never echo the value: it may be a secret */
			if (value[0] == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"%s\" must not be empty", def->defname)));
		}
		else if (strcmp(def->defname, "credentials_required") == 0)
		{
			/* as postgres_fdw's password_required: only a superuser may let a mapping use the server's identity */
			if (!defGetBoolean(def) && !superuser())
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("lt_fdw: only a superuser may set credentials_required 'false'"),
						 errdetail("Without credentials of its own, a user mapping would read and write with the server's ambient credentials.")));
		}
		else if (strcmp(def->defname, "namespace_uri") == 0)
		{
			namespace_uri = def;
			if (strncmp(value, "https://", 8) != 0 && strncmp(value, "http://", 7) != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"namespace_uri\" must be an https:// (or, with allow_http, http://) URL: \"%s\"",
								value)));
			if (strncmp(value, "http://", 7) == 0)
				http_namespace = true;
		}
		else if (strcmp(def->defname, "namespace_api_key") == 0 ||
				 strcmp(def->defname, "namespace_bearer_token") == 0)
		{
			/* never echo the value: a secret; no line breaks (it becomes an HTTP header) */
			if (value[0] == '\0' || strpbrk(value, "\r\n") != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"%s\" must not be empty or hold a line break", def->defname)));
		}
		else if (strcmp(def->defname, "namespace") == 0)
		{
			namespace_kind = def;
			if (strcmp(value, "directory") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: invalid value for option \"namespace\": \"%s\"", value),
						 errhint("The only namespace kind given by this option is 'directory' (its root is the server's root).")));
		}
		else if (strcmp(def->defname, "manifest_enabled") == 0 ||
				 strcmp(def->defname, "dir_listing_enabled") == 0 ||
				 strcmp(def->defname, "dir_listing_to_manifest_migration_enabled") == 0)
			(void) defGetBoolean(def);
		else if (strcmp(def->defname, "identifier") == 0)
		{
			identifier = def;
			/* the location it resolves to is checked when the table is opened (the server's root decides) */
			if (value[0] == '\0' || !lt_ns_id_valid(value))
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: invalid value for option \"identifier\": \"%s\"", value),
						 errhint("A table identifier is its namespace's names and its own name joined by \"$\", as in 'sales$orders'; no part is empty, \".\" or \"..\", or holds \"/\".")));
		}
		else if (strcmp(def->defname, "column_name") == 0 || strcmp(def->defname, "is_assigned") == 0)
		{
			if (value[0] == '\0')
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
						 errmsg("lt_fdw: option \"%s\" must not be empty", def->defname)));
		}
	}
	if (namespace_uri && (root || namespace_kind))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("lt_fdw: option \"namespace_uri\" does not go with \"%s\"", root ? "root" : "namespace"),
				 errhint("A REST namespace gives every table's location: the server has no root of its own.")));
	if (http_namespace && !allow_http)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: an http:// namespace_uri needs allow_http 'true'"),
				 errhint("Plain http sends requests and their credentials unencrypted: use https, or allow_http 'true' for a loopback test server.")));
	if (http_endpoint && !allow_http)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
				 errmsg("lt_fdw: an http:// endpoint needs allow_http 'true'"),
				 errhint("Plain http sends requests unencrypted: use https, or allow_http 'true' for a loopback test server.")));
	if (path && identifier)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("lt_fdw: options \"path\" and \"identifier\" are mutually exclusive"),
				 errhint("A foreign table names its dataset by path or by its identifier in the server's namespace, not by both.")));
	if (version && tag)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("lt_fdw: options \"version\" and \"tag\" are mutually exclusive"),
				 errhint("A foreign table is pinned by a version number or by a tag, not by both.")));

	PG_RETURN_VOID();
}

/* How a table's identifier becomes its location (namespace.c, installed by _PG_init). */
static LtNamespaceResolver namespace_resolver = NULL;

void
lt_set_namespace_resolver(LtNamespaceResolver resolver)
{
	namespace_resolver = resolver;
}

static void get_table_options(Oid relid, LtTableOptions *opts, bool for_create);

/* Merge server and table options of a foreign table; resolve the dataset directory. */
void
lt_get_table_options(Oid relid, LtTableOptions *opts)
{
	get_table_options(relid, opts, false);
}

void
lt_get_table_options_for_create(Oid relid, LtTableOptions *opts)
{
	get_table_options(relid, opts, true);
}

static void
get_table_options(Oid relid, LtTableOptions *opts, bool for_create)
{
	ForeignTable *table = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(table->serverid);
	ListCell   *lc;
	const char *relname = get_rel_name(relid);

	memset(opts, 0, sizeof(*opts));
	opts->ns_create = for_create;
	opts->server_name = pstrdup(server->servername);
	foreach(lc, server->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "root") == 0)
			opts->root = lt_location_from_uri(defGetString(def), "root");
	}
	foreach(lc, table->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "path") == 0)
			opts->path = defGetString(def);
		else if (strcmp(def->defname, "version") == 0)
			opts->version = parse_version(defGetString(def));
		else if (strcmp(def->defname, "tag") == 0)
			opts->tag = defGetString(def);
		else if (strcmp(def->defname, "branch") == 0)
			opts->branch = defGetString(def);
		else if (strcmp(def->defname, "identifier") == 0)
			opts->identifier = defGetString(def);
	}
	if (opts->version && opts->tag)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("lt_fdw: options \"version\" and \"tag\" of foreign table \"%s\" are mutually exclusive",
						relname)));
	if (opts->identifier)
	{
		/* resolved through the server's namespace (namespace.c): sets dataset_dir, uri and s3 */
		Assert(namespace_resolver != NULL);
		if (opts->path)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("lt_fdw: options \"path\" and \"identifier\" of foreign table \"%s\" are mutually exclusive",
							relname)));
		namespace_resolver(server, opts);
		return;
	}
	if (opts->path == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("lt_fdw: foreign table \"%s\" has no \"path\" option", relname),
				 errhint("Name the dataset directory: OPTIONS (path 'name.lance'), relative to the server's root.")));
	if (lt_is_s3_uri(opts->path))
	{
		/* an absolute s3:// path: only through a server whose root is on S3 (its endpoint, its credentials) */
		if (opts->root == NULL || !lt_is_s3_uri(opts->root))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_ATTRIBUTE_VALUE),
					 errmsg("lt_fdw: foreign table \"%s\" has an s3:// path but the root of server \"%s\" is not on S3",
							relname, server->servername),
					 errhint("Give the server root 's3://bucket/prefix' (and its endpoint), then paths relative to it.")));
		opts->dataset_dir = lt_location_from_uri(opts->path, "path");
	}
	else if (is_absolute_location(opts->path))
		opts->dataset_dir = lt_local_path_from_uri(opts->path, "path");
	else if (opts->root == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("lt_fdw: foreign table \"%s\" has a relative path but server \"%s\" has no \"root\" option",
						relname, server->servername)));
	else
	{
		char	   *rel = lt_local_path_from_uri(opts->path, "path");

		opts->dataset_dir = strcmp(opts->root, "/") == 0 ? psprintf("/%s", rel)
			: psprintf("%s/%s", opts->root, rel);
	}
	if (lt_is_s3_uri(opts->dataset_dir))
	{
		opts->uri = opts->dataset_dir;
		opts->s3 = lt_s3_location(server, GetUserId());
	}
	else
		opts->uri = psprintf("file://%s", opts->dataset_dir);
}

/*
 * The dataset field a column reads (column option column_name, else its own name; an is_assigned column reads
 * no field: a name no field has keeps every field lookup away), and in *assigned_of (when not NULL) the field
 * whose assignment it reads, or NULL: one read of the column's options for both.
 */
char *
lt_column_names(Oid relid, AttrNumber attnum, const char *attname, char **assigned_of)
{
	List	   *options = GetForeignColumnOptions(relid, attnum);
	ListCell   *lc;
	char	   *name = NULL;

	if (assigned_of)
		*assigned_of = NULL;
	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "is_assigned") == 0)
		{
			if (assigned_of)
				*assigned_of = defGetString(def);
			if (name == NULL)
				name = psprintf("\x01is_assigned(%s)", defGetString(def));
		}
		else if (strcmp(def->defname, "column_name") == 0 && name == NULL)
			name = defGetString(def);
	}
	return name ? name : pstrdup(attname);
}

char *
lt_column_field_name(Oid relid, AttrNumber attnum, const char *attname)
{
	return lt_column_names(relid, attnum, attname, NULL);
}

/* The dataset field whose assignment the column reads (column option is_assigned), or NULL. */
char *
lt_column_assigned_field(Oid relid, AttrNumber attnum)
{
	char	   *assigned_of;

	(void) lt_column_names(relid, attnum, "", &assigned_of);
	return assigned_of;
}

/* ---- settings a statement may only obey when its own transaction set them ----------------------- */

static struct config_generic *
find_setting(const char *name)
{
	struct config_generic **vars = get_guc_variables();
	int			n = GetNumConfigOptions();

	for (int i = 0; i < n; i++)
		if (strcmp(vars[i]->name, name) == 0)
			return vars[i];
	return NULL;
}

/*
 * The rule for the settings that decide what a write deletes or clears (a replace's predicate,
 * lt_fdw.invalidate_fields): the value in effect counts only
 * when this session set it (source "session": SET, SET LOCAL, set_config(), a function's SET
 * clause) in the current transaction (the setting has a saved prior value, which PostgreSQL keeps
 * until the transaction ends), while the role now current was the current role.  A value from
 * ALTER DATABASE / ALTER ROLE ... SET, the configuration file, the connection's options, an earlier
 * transaction, or a SECURITY DEFINER function of another role does not.  NULL when it counts, else
 * why not.
 */
char *
lt_setting_not_own(const char *name)
{
	struct config_generic *g = find_setting(name);

	if (g == NULL)
		return psprintf("%s is not defined.", name);
	if (g->source != PGC_S_SESSION)
		return psprintf("The value in effect comes from the %s settings (ALTER DATABASE / ALTER ROLE ... SET, the configuration file or the connection's options), not from this transaction.",
						GucSource_Names[g->source]);
	if (g->stack == NULL)
		return pstrdup("It was set by an earlier transaction of this session.");
	if (g->srole != GetUserId())
		return psprintf("It was set while role \"%s\" was the current role, but the statement runs as role \"%s\".",
						GetUserNameFromId(g->srole, true) ? GetUserNameFromId(g->srole, true) : "?",
						GetUserNameFromId(GetUserId(), false));
	return NULL;
}

/* ---- foreign tables of lt_fdw ----------------------------------------------------------------------- */

/* The handler's GetForeignRelSize (lt_fdw.c installs it at load): a routine that has it is lt_fdw's. */
static GetForeignRelSize_function handler_mark = NULL;

void
lt_set_handler_mark(GetForeignRelSize_function mark)
{
	handler_mark = mark;
}

/* ERROR (42809) unless relid is a foreign table whose wrapper's handler is ours; fn names the caller. */
void
lt_check_lt_table(Oid relid, const char *fn)
{
	char	   *relname = get_rel_name(relid);
	ForeignServer *server;
	ForeignDataWrapper *fdw;

	Assert(handler_mark != NULL);
	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("%s: relation %u does not exist", fn, relid)));
	if (get_rel_relkind(relid) != RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s: \"%s\" is not a foreign table", fn, relname)));
	server = GetForeignServer(GetForeignTable(relid)->serverid);
	fdw = GetForeignDataWrapper(server->fdwid);
	if (!OidIsValid(fdw->fdwhandler) || GetFdwRoutine(fdw->fdwhandler)->GetForeignRelSize != handler_mark)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s: foreign table \"%s\" does not belong to lt_fdw", fn, relname),
				 errdetail("Its server \"%s\" uses the foreign-data wrapper \"%s\".", server->servername,
						   fdw->fdwname)));
}

/*
 * May userid read rel as SELECT count(*) FROM rel would let it: SELECT on the table or on any of
 * its columns.
 */
bool
lt_may_read_table(Oid relid, Oid userid)
{
	return pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck_all(relid, userid, ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
}

/* The metadata functions (lt_versions, lt_fragments, lt_indexes, ...): what SELECT lets one see. */
void
lt_check_table_select(Oid relid)
{
	if (!lt_may_read_table(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_FOREIGN_TABLE, get_rel_name(relid));
}

/* The maintenance functions (lt_cleanup, lt_create_index, ...): the owner, as VACUUM / CREATE INDEX / ALTER. */
void
lt_check_table_owner(Oid relid)
{
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_FOREIGN_TABLE, get_rel_name(relid));
}

void
lt_check_not_branch(const char *relname, const LtTableOptions *opts, const char *doing)
{
	if (opts->branch)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot %s foreign table \"%s\": it reads branch \"%s\", and lt_fdw does not write to branches",
						doing, relname, opts->branch),
				 errdetail("Writing a branch of dataset %s is not supported.", opts->uri),
				 errhint("Write through a foreign table of the dataset without \"branch\", or with the Lance engine.")));
}

bool
lt_is_row_identity_name(const char *name)
{
	return strcmp(name, "_rowid") == 0 || strcmp(name, "_rowaddr") == 0;
}
