/*
 * lt_namespace.h — Lance namespaces: tables found by identifier rather than by path.
 *
 * An identifier is a list of names, written here joined by '$' as Lance writes object ids
 * ("ns1$inner$t2"; "" is the root namespace).  The directory namespace (lt_ns_dir.c) is a root
 * directory whose tables are
 *   V1  directories "<name>.lance" of the root (root namespace only), except those holding the
 *       marker ".lance-deregistered";
 *   V2  the rows of the Lance table "__manifest" in the root: object_id (the identifier),
 *       object_type ("namespace" or "table") and location (the table's directory, relative to the
 *       root); child namespaces exist only there.
 * With both enabled (Lance's default) the root namespace is the listing alone and child namespaces
 * are the manifest's, as Lance 12 reads them; with `migration` (Lance's
 * dir_listing_to_manifest_migration_enabled) the root is both merged, a table in both being the
 * manifest's; without the listing the root is the manifest's root rows.  Without the manifest there
 * are no child namespaces (LT_EUNSUPPORTED).
 */
#ifndef LT_NAMESPACE_H
#define LT_NAMESPACE_H

#include <stdbool.h>
#include <stddef.h>

#include "io/lt_store.h"
#include "util/lt_status.h"

#define LT_NS_DELIMITER '$'
#define LT_NS_MANIFEST_DIR "__manifest"

/* Which of the two forms a directory namespace consults (Lance's manifest_enabled / dir_listing_enabled). */
typedef struct lt_ns_dir_opts
{
	bool		manifest;
	bool		dir_listing;
	bool		migration;		/* the root merges the manifest's root tables into the listing */
} lt_ns_dir_opts;

/* One table of a namespace. */
typedef struct lt_ns_table
{
	char	   *name;			/* the last part of its identifier */
	char	   *location;		/* its directory relative to the root, without a trailing '/' */
	bool		in_manifest;	/* listed by __manifest (else by the directory listing) */
} lt_ns_table;

/* Is id a well-formed identifier: parts not empty, no '/' and no ".." part?  ("" is the root.) */
bool		lt_ns_id_valid(const char *id);

/*
 * The tables of namespace ns_id ("" = root) in the directory namespace at root, sorted by name.
 * LT_ENOTFOUND when a child namespace is not in the manifest.
 */
lt_code		lt_ns_dir_list_tables(lt_store *root, const char *ns_id, const lt_ns_dir_opts *opts,
								  lt_ns_table **out, size_t *n_out, lt_error *err);
void		lt_ns_tables_free(lt_ns_table *t, size_t n);

/*
 * The location (relative to the root) of table table_id, by the rules above (for a root table the
 * manifest, when it is read there, before the listing).  LT_ENOTFOUND when the namespace has no such
 * table.
 */
lt_code		lt_ns_dir_describe_table(lt_store *root, const char *table_id, const lt_ns_dir_opts *opts,
									 char **location, lt_error *err);

struct lt_dataset;
struct lt_written_file;

/*
 * Registering a table (the fdw's namespace.c commits it: the txn room is above this one).  Does the
 * opened __manifest manifest (root: for messages) have a row of object_id?
 */
lt_code		lt_ns_manifest_has(struct lt_dataset *manifest, const char *root, const char *object_id, bool *found,
							   lt_error *err);
/*
 * A data file of __manifest (unreferenced until committed) holding one row: object_id, object_type and
 * location; its other columns null (LT_EUNSUPPORTED when one is not nullable).
 */
lt_code		lt_ns_manifest_write_row(lt_store *root, struct lt_dataset *manifest, const char *object_id,
									 const char *object_type, const char *location,
									 struct lt_written_file *out, lt_error *err);

#endif

/* ---- the REST namespace (lt_ns_rest.c): Lance's namespace REST API over libcurl ------------------------- */

typedef struct lt_ns_rest_conf
{
	const char *uri;			/* the service's base URL (http:// only with allow_http), without a trailing '/' */
	bool		allow_http;
	const char *const *headers; /* "Name: value" lines sent with every request (auth); never in messages */
	int			n_headers;
	long		timeout_ms;		/* per attempt; 0 = 30 s */
} lt_ns_rest_conf;

typedef struct lt_ns_rest_reply
{
	long		status;			/* the HTTP status */
	char	   *body;			/* NUL-terminated (lt_malloc'd; may be empty) */
	size_t		len;
} lt_ns_rest_reply;

/*
 * One request: method ("GET" / "POST") to uri + route, with a JSON body for POST.  Connection failures and
 * 5xx / 429 answers are retried (3 attempts, backoff); any answer is returned (LT_OK) for the caller to
 * judge by status; LT_EIO when the service cannot be reached, LT_ECANCELED on an interrupt.  Redirects and
 * proxies are never followed: only uri's host is contacted.
 */
lt_code		lt_ns_rest_call(const lt_ns_rest_conf *conf, const char *method, const char *route, const char *body,
							lt_ns_rest_reply *out, lt_error *err);
/* An identifier as a route segment: its names joined by '$', percent-encoded ("" = the root, "%24"). */
char	   *lt_ns_rest_route_id(const char *id);
