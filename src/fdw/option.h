/*
 * option.h — a foreign table's options merged with its server's, the privilege rules, and the check that
 * a table belongs to lt_fdw (option.c).
 */
#ifndef LT_FDW_OPTION_H
#define LT_FDW_OPTION_H

#include "access/attnum.h"
#include "foreign/fdwapi.h"

#include "store.h"

/* The options of one foreign table, merged with its server's. */
typedef struct LtTableOptions
{
	char	   *server_name;
	char	   *root;			/* server root as a local directory (file:// stripped) or an s3:// URI, or NULL */
	char	   *path;			/* table path option as given, or NULL */
	char	   *dataset_dir;	/* the resolved location: a local directory or an s3:// URI */
	char	   *uri;			/* file:// or s3:// URI for messages and EXPLAIN */
	LtS3Location *s3;			/* the S3 endpoint and credentials when dataset_dir is s3://, else NULL */
	uint64		version;		/* 0 = not pinned */
	char	   *tag;			/* NULL = not pinned */
	char	   *branch;			/* a Lance 12 branch to read, NULL = main */
	char	   *identifier;		/* the table's identifier in the server's namespace, or NULL */
	bool		ns_managed_versioning;	/* its namespace manages its versions (commits go through it) */
	bool		ns_create;		/* set by lt_get_table_options_for_create: a table not in the namespace gets a location */
	char	   *ns_register;	/* then: its location relative to the root, to add to __manifest at commit (NULL: none) */
} LtTableOptions;

/* Sets dataset_dir, uri and s3 of opts from opts->identifier through the server's namespace. */
typedef void (*LtNamespaceResolver) (ForeignServer *server, LtTableOptions *opts);
extern void lt_set_namespace_resolver(LtNamespaceResolver resolver);

extern void lt_get_table_options(Oid relid, LtTableOptions *opts);
/* The same for lt_create_dataset: an identifier the namespace does not have yet gets the location Lance gives it. */
extern void lt_get_table_options_for_create(Oid relid, LtTableOptions *opts);
/* lt_fdw does not write to branches: a table with the branch option is refused for `doing` (0A000). */
extern void lt_check_not_branch(const char *relname, const LtTableOptions *opts, const char *doing);
/* "_rowid" or "_rowaddr": the row identity columns a scan fills, never a dataset field. */
extern bool lt_is_row_identity_name(const char *name);
/* The dataset field name of a column: its column_name option, else its attname. */
extern char *lt_column_field_name(Oid relid, AttrNumber attnum, const char *attname);
extern char *lt_column_names(Oid relid, AttrNumber attnum, const char *attname, char **assigned_of);
extern char *lt_column_assigned_field(Oid relid, AttrNumber attnum);
/*
 * NULL when the setting's value in effect was set by this session in the current transaction while the
 * current role was the current role (SET LOCAL, set_config, a function's SET clause); else why not.
 */
extern char *lt_setting_not_own(const char *name);
/* The local-file privilege rule: superuser or pg_read_server_files, for userid. */
extern void lt_check_read_privilege(Oid userid, const char *relname, const char *uri);
/* The write rule: superuser or pg_write_server_files, for userid. */
extern void lt_check_write_privilege(Oid userid, const char *relname, const char *uri);
/* SELECT on the table or any column of it (what SELECT count(*) needs) */
extern bool lt_may_read_table(Oid relid, Oid userid);
/* ERROR 42501 unless the current role may read relid (metadata functions) / owns it (maintenance) */
extern void lt_check_table_select(Oid relid);
extern void lt_check_table_owner(Oid relid);
/* Write options of a foreign table (table option, else server option, else the default). */
extern int	lt_option_batch_size(Oid relid);
extern int64 lt_option_max_rows_per_file(Oid relid);
/* auto_compact (table, else server): the fragments Lance's compaction plan must rewrite to compact after a commit; 0 = off */
extern int	lt_option_auto_compact(Oid relid);
/* "file:///x" or "/x" -> "/x"; errors for s3:// and other schemes. */
extern char *lt_local_path_from_uri(const char *value, const char *option);
/* A local path as lt_local_path_from_uri, or a checked and normalised s3:// URI. */
extern char *lt_location_from_uri(const char *value, const char *option);

/* ERROR (42809) unless relid is a foreign table of lt_fdw; fn names the caller */
extern void lt_check_lt_table(Oid relid, const char *fn);
/*
 * The handler's GetForeignRelSize, by which lt_check_lt_table knows a wrapper of lt_fdw (the routine a
 * handler returns is new at each call): lt_fdw.c installs it when the module is loaded.
 */
extern void lt_set_handler_mark(GetForeignRelSize_function mark);

#endif
