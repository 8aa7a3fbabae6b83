/*
 * namespace.h — foreign tables addressed by identifier in a Lance namespace (namespace.c).
 */
#ifndef LT_FDW_NAMESPACE_H
#define LT_FDW_NAMESPACE_H

#include "foreign/foreign.h"

#include "namespace/lt_namespace.h"
#include "option.h"

/* What a server says of its namespace. */
typedef struct LtNamespaceConf
{
	bool		directory;		/* namespace 'directory': the root is a directory namespace */
	lt_ns_dir_opts dir;			/* manifest_enabled, dir_listing_enabled (both default true) */
	char	   *rest_uri;		/* namespace_uri: a REST namespace (NULL: none) */
	bool		allow_http;
} LtNamespaceConf;

/* Where a REST namespace says a table is (DescribeTable). */
typedef struct LtNamespaceTable
{
	char	   *dataset_dir;	/* a local directory or an s3:// URI */
	LtS3Location *s3;			/* its credentials (vended, else the user mapping's); NULL when local */
	int64		expires_ms;		/* when vended credentials expire (Unix ms); 0: they do not */
	bool		managed_versioning; /* commits go through the namespace's CreateTableVersion */
} LtNamespaceTable;

/* Is server a namespace server (directory or REST)? Fills conf (may be NULL). */
extern bool lt_server_namespace(ForeignServer *server, LtNamespaceConf *conf);

/*
 * The tables of namespace ns_id ("" = root) of a server whose root (parsed, local or s3://) is a
 * directory namespace; 3F000 when the namespace does not exist.  s3: the credentials of an s3:// root.
 */
extern lt_ns_table *lt_namespace_list(ForeignServer *server, const char *root, const LtS3Location *s3,
									  const char *ns_id, size_t *n);

/* The tables of namespace ns_id ("" = root) of a REST namespace server: their names (ListTables). */
extern List *lt_namespace_rest_list(ForeignServer *server, const char *ns_id);
/* DescribeTable of a REST namespace server for the current user. */
extern LtNamespaceTable *lt_namespace_rest_describe(ForeignServer *server, const char *identifier);

/*
 * A commit of a table whose REST namespace manages its versions: CreateTableVersion publishes the manifest
 * (the store's publish_manifest, lt_namespace_publish).  Made before the commit (everything that can fail
 * with an ERROR happens here); after a failed commit lt_namespace_publish_report raises what the namespace
 * answered, if it answered.
 */
typedef struct LtNamespacePublisher LtNamespacePublisher;
extern LtNamespacePublisher *lt_namespace_publisher(Oid serverid, const char *identifier, const char *dataset_dir);
extern lt_code lt_namespace_publish(void *arg, uint64_t version, const char *staged_path, const char *final_path,
									lt_error *err);
extern void lt_namespace_publish_report(LtNamespacePublisher *p, const char *relname);

/*
 * At the commit of lt_create_dataset, after the table's first version: its __manifest row (location
 * relative to root), as Lance registers a table; 42P07 / 40001 when the identifier is taken.
 */
extern void lt_namespace_register(const char *root, const LtS3Location *s3, const char *identifier,
								  const char *location, const char *relname);

/* option.c's resolver (installed by _PG_init): opts->identifier to opts->dataset_dir, cached per transaction. */
extern void lt_namespace_resolve(ForeignServer *server, LtTableOptions *opts);

#endif
