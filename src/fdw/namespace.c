/*
 * namespace.c — foreign tables addressed by identifier in a Lance namespace.
 *
 *   CREATE SERVER lake FOREIGN DATA WRAPPER lt_fdw OPTIONS (root '/srv/lake', namespace 'directory');
 *   IMPORT FOREIGN SCHEMA "sales$eu" FROM SERVER lake INTO public;      -- a child namespace
 *   CREATE FOREIGN TABLE orders (...) SERVER lake OPTIONS (identifier 'sales$eu$orders');
 *
 * A server with namespace 'directory' reads its root as a Lance directory namespace (the library's
 * namespace/ room: the __manifest table, the "<name>.lance" listing, and Lance's compatibility mode
 * merging them; manifest_enabled / dir_listing_enabled choose, as Lance's properties of those names
 * do).  A table's identifier is resolved to its directory when the table is opened; the answer is
 * kept until the transaction ends (a rename in the namespace is seen by the next transaction).
 * Reading the namespace of a local root needs what reading its files needs (pg_read_server_files).
 */
#include "postgres.h"

#include "commands/defrem.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "util/lt_alloc.h"
#include "file/lt_writer.h"
#include "table/lt_dataset.h"
#include "txn/lt_keys.h"
#include "txn/lt_txn.h"
#include "dataset.h"
#include "namespace.h"
#include "option.h"
#include "store.h"

bool
lt_server_namespace(ForeignServer *server, LtNamespaceConf *conf)
{
	LtNamespaceConf c = {false, {true, true, false}, NULL, false};
	ListCell   *lc;

	foreach(lc, server->options)
	{
		DefElem    *def = lfirst(lc);

		if (strcmp(def->defname, "namespace") == 0)
			c.directory = strcmp(defGetString(def), "directory") == 0;
		else if (strcmp(def->defname, "manifest_enabled") == 0)
			c.dir.manifest = defGetBoolean(def);
		else if (strcmp(def->defname, "dir_listing_enabled") == 0)
			c.dir.dir_listing = defGetBoolean(def);
		else if (strcmp(def->defname, "dir_listing_to_manifest_migration_enabled") == 0)
			c.dir.migration = defGetBoolean(def);
		else if (strcmp(def->defname, "namespace_uri") == 0)
		{
			char	   *u = pstrdup(defGetString(def));
			size_t		len = strlen(u);

			while (len > 0 && u[len - 1] == '/')
				u[--len] = '\0';
			c.rest_uri = u;
		}
		else if (strcmp(def->defname, "allow_http") == 0)
			c.allow_http = defGetBoolean(def);
	}
	if (conf)
		*conf = c;
	return c.directory || c.rest_uri != NULL;
}

static char *
root_uri(const char *root)
{
	return lt_is_s3_uri(root) ? pstrdup(root) : psprintf("file://%s", root);
}

static char *
below_root(const char *root, const char *rel)
{
	return strcmp(root, "/") == 0 ? psprintf("/%s", rel) : psprintf("%s/%s", root, rel);
}

lt_ns_table *
lt_namespace_list(ForeignServer *server, const char *root, const LtS3Location *s3, const char *ns_id, size_t *n)
{
	LtNamespaceConf conf;
	lt_store   *store = NULL;
	lt_ns_table *tables = NULL;
	lt_error	err;
	lt_code		rc;
	MemoryContext old;

	(void) lt_server_namespace(server, &conf);
	if (!lt_ns_id_valid(ns_id))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("lt_fdw: remote schema \"%s\" is not a namespace identifier", ns_id),
				 errhint("Name the root namespace \".\" and a child namespace by its names joined by \"$\", as in \"sales$eu\".")));
	old = lt_alloc_target(CurrentMemoryContext);
	rc = lt_open_store(s3, root, &store, &err);
	if (rc == LT_OK)
		rc = lt_ns_dir_list_tables(store, ns_id, &conf.dir, &tables, n, &err);
	if (store)
		lt_store_close(store);
	lt_alloc_target(old);
	if (rc == LT_ENOTFOUND)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("lt_fdw: namespace \"%s\" does not exist in the directory namespace of server \"%s\"",
						ns_id, server->servername),
				 errdetail("%s", err.msg)));
	if (rc != LT_OK)
		lt_report(&err, psprintf("namespace %s", root_uri(root)));
	return tables;
}

/* ---- the REST namespace ------------------------------------------------------------------------------- */

/* Vended credentials are renewed this long before they expire (as Lance refreshes its storage options). */
#define LT_NS_REFRESH_MS ((int64) 60000)

static int64
now_unix_ms(void)
{
	return GetCurrentTimestamp() / 1000 + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
}

/* The service's URL and the current user's authentication headers (user-mapping options only). */
static void
rest_conf(ForeignServer *server, const LtNamespaceConf *c, lt_ns_rest_conf *rc)
{
	const char **headers = palloc0(sizeof(char *) * 2);
	int			n = 0;
	ListCell   *lc;

	foreach(lc, lt_user_mapping_options(GetUserId(), server->serverid))
	{
		DefElem    *def = lfirst(lc);

		if (strcmp(def->defname, "namespace_api_key") == 0)
			headers[n++] = psprintf("x-api-key: %s", defGetString(def));
		else if (strcmp(def->defname, "namespace_bearer_token") == 0)
			headers[n++] = psprintf("Authorization: Bearer %s", defGetString(def));
	}
	memset(rc, 0, sizeof(*rc));
	rc->uri = c->rest_uri;
	rc->allow_http = c->allow_http;
	rc->headers = headers;
	rc->n_headers = n;
}

/* The service's own words for an error answer: its "error" (else the start of the body), bounded, printable. */
static char *
rest_error_text(const char *body)
{
	const char *p = strstr(body, "\"error\"");
	StringInfoData b;
	int			n = 0;

	if (p && (p = strchr(p + 7, '"')) != NULL)
		p++;
	else
		p = body;
	initStringInfo(&b);
	for (; *p && *p != '"' && n < 300; p++, n++)
		appendStringInfoChar(&b, (*p >= 0x20 && *p < 0x7f) ? *p : '?');
	return b.data;
}

static void
rest_report(ForeignServer *server, const char *what, long status, const char *body, bool is_namespace)
{
	int			sqlstate;

	switch (status)
	{
		case 400:
		case 422:
			sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case 401:
			sqlstate = ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
			break;
		case 403:
			sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			break;
		case 404:
			sqlstate = is_namespace ? ERRCODE_FDW_SCHEMA_NOT_FOUND : ERRCODE_FDW_TABLE_NOT_FOUND;
			break;
		case 409:
			sqlstate = ERRCODE_T_R_SERIALIZATION_FAILURE;
			break;
		case 503:
			sqlstate = ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION;
			break;
		default:
			sqlstate = ERRCODE_FDW_ERROR;
			break;
	}
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("lt_fdw: the namespace of server \"%s\" answered %ld to %s", server->servername, status, what),
			 errdetail("The namespace says: %s", rest_error_text(body))));
}

static void
json_error_context(void *arg)
{
	errcontext("reading the namespace's answer to %s", (const char *) arg);
}

static Jsonb *rest_json_opt(ForeignServer *server, const LtNamespaceConf *c, const char *method, const char *route,
							const char *body, const char *what, bool is_namespace, bool missing_ok);

/* One request; an error answer is an ERROR (rest_report); the answer's JSON object. */
static Jsonb *
rest_json(ForeignServer *server, const LtNamespaceConf *c, const char *method, const char *route, const char *body,
		  const char *what, bool is_namespace)
{
	return rest_json_opt(server, c, method, route, body, what, is_namespace, false);
}

/* The same; with missing_ok a 404 answer is NULL. */
static Jsonb *
rest_json_opt(ForeignServer *server, const LtNamespaceConf *c, const char *method, const char *route,
			  const char *body, const char *what, bool is_namespace, bool missing_ok)
{
	lt_ns_rest_conf rc;
	lt_ns_rest_reply reply;
	lt_error	err;
	lt_code		code;
	MemoryContext old;
	ErrorContextCallback cb;
	Jsonb	   *jb;

	rest_conf(server, c, &rc);
	old = lt_alloc_target(CurrentMemoryContext);
	code = lt_ns_rest_call(&rc, method, route, body, &reply, &err);
	lt_alloc_target(old);
	if (code == LT_EIO)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("lt_fdw: the namespace of server \"%s\" could not be reached for %s", server->servername, what),
				 errdetail("%s", err.msg)));
	if (code != LT_OK)
		lt_report(&err, what);
	if (missing_ok && reply.status == 404 && strstr(reply.body, "\"code\":4") != NULL)
		return NULL;
	if (reply.status < 200 || reply.status >= 300)
		rest_report(server, what, reply.status, reply.body, is_namespace);
	cb.callback = json_error_context;
	cb.arg = (void *) what;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(reply.body[0] ? reply.body : "{}")));
	error_context_stack = cb.previous;
	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("lt_fdw: the namespace of server \"%s\" answered %s with no JSON object", server->servername, what)));
	return jb;
}

static JsonbValue *
json_get(JsonbContainer *c, const char *key)
{
	return getKeyJsonValueFromContainer(c, key, strlen(key), NULL);
}

static char *
json_string(JsonbContainer *c, const char *key)
{
	JsonbValue *v = json_get(c, key);

	return v && v->type == jbvString ? pnstrdup(v->val.string.val, v->val.string.len) : NULL;
}

/* A JSON string literal of s. */
static char *
json_quote(const char *s)
{
	StringInfoData b;

	initStringInfo(&b);
	escape_json(&b, s);
	return b.data;
}

/* ["a","b","t"] of "a$b$t". */
static char *
json_id(const char *identifier)
{
	StringInfoData b;
	const char *p = identifier;

	initStringInfo(&b);
	appendStringInfoChar(&b, '[');
	while (*p)
	{
		const char *end = strchr(p, LT_NS_DELIMITER);
		char	   *part = end ? pnstrdup(p, end - p) : pstrdup(p);

		appendStringInfo(&b, "%s%s", b.len > 1 ? ", " : "", json_quote(part));
		if (end == NULL)
			break;
		p = end + 1;
	}
	appendStringInfoChar(&b, ']');
	return b.data;
}

List *
lt_namespace_rest_list(ForeignServer *server, const char *ns_id)
{
	LtNamespaceConf c;
	List	   *names = NIL;
	char	   *token = NULL;
	char	   *what = psprintf("ListTables of namespace \"%s\"", ns_id[0] ? ns_id : ".");

	(void) lt_server_namespace(server, &c);
	if (!lt_ns_id_valid(ns_id))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
				 errmsg("lt_fdw: remote schema \"%s\" is not a namespace identifier", ns_id)));
	for (int page = 0; page < 10000; page++)
	{
		char	   *route = psprintf("/v1/namespace/%s/table/list?limit=1000%s%s", lt_ns_rest_route_id(ns_id),
									 token ? "&page_token=" : "", token ? lt_ns_rest_route_id(token) : "");
		Jsonb	   *jb = rest_json(server, &c, "GET", route, NULL, what, true);
		JsonbValue *tables = json_get(&jb->root, "tables");
		char	   *next = json_string(&jb->root, "page_token");

		if (tables && tables->type == jbvBinary)
		{
			JsonbIterator *it = JsonbIteratorInit(tables->val.binary.data);
			JsonbValue	v;
			JsonbIteratorToken t;

			while ((t = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
				if (t == WJB_ELEM && v.type == jbvString)
					names = lappend(names, pnstrdup(v.val.string.val, v.val.string.len));
		}
		if (next == NULL || next[0] == '\0' || (token && strcmp(next, token) == 0))
			break;
		token = next;
	}
	return names;
}

/* A location a namespace gives: a local directory or a checked s3:// URI. */
static char *
rest_location(ForeignServer *server, const char *identifier, const char *location)
{
	if (lt_is_s3_uri(location))
		return lt_location_from_uri(location, "location");
	if (location[0] == '/' || strncmp(location, "file:///", 8) == 0)
		return lt_local_path_from_uri(location, "location");
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("lt_fdw: the namespace of server \"%s\" places table \"%s\" at \"%s\", a kind of location lt_fdw does not read",
					server->servername, identifier, location),
			 errhint("lt_fdw reads local directories and s3:// locations.")));
	pg_unreachable();
}

static LtNamespaceTable *
rest_describe_once(ForeignServer *server, const LtNamespaceConf *c, const char *identifier, bool missing_ok)
{
	char	   *what = psprintf("DescribeTable of \"%s\"", identifier);
	char	   *body = psprintf("{\"id\": %s, \"vend_credentials\": true}", json_id(identifier));
	Jsonb	   *jb = rest_json_opt(server, c, "POST", psprintf("/v1/table/%s/describe", lt_ns_rest_route_id(identifier)),
								   body, what, false, missing_ok);
	LtNamespaceTable *t;
	char	   *location;

	if (jb == NULL)
		return NULL;
	t = palloc0(sizeof(LtNamespaceTable));
	location = json_string(&jb->root, "location");
	JsonbValue *managed = json_get(&jb->root, "managed_versioning");
	JsonbValue *so = json_get(&jb->root, "storage_options");
	char	   *key = NULL,
			   *secret = NULL,
			   *token = NULL,
			   *region = NULL;

	if (location == NULL || location[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("lt_fdw: the namespace of server \"%s\" gave no location for table \"%s\"",
						server->servername, identifier)));
	t->dataset_dir = rest_location(server, identifier, location);
	t->managed_versioning = managed && managed->type == jbvBool && managed->val.boolean;
	if (so && so->type == jbvBinary)
	{
		JsonbContainer *sc = so->val.binary.data;
		char	   *expires = json_string(sc, "expires_at_millis");

		key = json_string(sc, "aws_access_key_id");
		secret = json_string(sc, "aws_secret_access_key");
		token = json_string(sc, "aws_session_token");
		region = json_string(sc, "aws_region");
		if (region == NULL)
			region = json_string(sc, "region");
		if (expires)
		{
			char	   *end;

			errno = 0;
			t->expires_ms = strtoll(expires, &end, 10);
			if (errno != 0 || *end != '\0' || t->expires_ms <= 0)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_ERROR),
						 errmsg("lt_fdw: the namespace of server \"%s\" gave table \"%s\" an invalid expires_at_millis",
								server->servername, identifier)));
		}
	}
	if (lt_is_s3_uri(t->dataset_dir))
	{
		if (key && secret)
			t->s3 = lt_s3_location_vended(server, key, secret, token, region);
		else
		{
			t->s3 = lt_s3_location(server, GetUserId());	/* none vended: the user mapping's */
			t->expires_ms = 0;
		}
	}
	return t;
}

static LtNamespaceTable *
rest_describe(ForeignServer *server, const char *identifier, bool missing_ok)
{
	LtNamespaceConf c;
	LtNamespaceTable *t;

	(void) lt_server_namespace(server, &c);
	t = rest_describe_once(server, &c, identifier, missing_ok);
	if (t == NULL)
		return NULL;
	if (t->expires_ms != 0 && t->expires_ms <= now_unix_ms())
	{
		/* credentials that expired on the way: ask once more, then give up */
		t = rest_describe_once(server, &c, identifier, false);
		if (t->expires_ms != 0 && t->expires_ms <= now_unix_ms())
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("lt_fdw: the namespace of server \"%s\" vended credentials for table \"%s\" that have expired",
							server->servername, identifier),
					 errdetail("They expired at %lld ms since the epoch.", (long long) t->expires_ms)));
	}
	return t;
}

LtNamespaceTable *
lt_namespace_rest_describe(ForeignServer *server, const char *identifier)
{
	return rest_describe(server, identifier, false);
}

/* ---- tables declared by lt_create_dataset, deregistered when the transaction aborts ---------------------- */

typedef struct DeclaredTable
{
	char	   *servername;
	lt_ns_rest_conf conf;		/* copied when declared: no catalog access at abort */
	char	   *identifier;
} DeclaredTable;

static MemoryContext declared_cxt = NULL;
static List *declared = NIL;

static void
declared_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (declared == NIL)
		return;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		/* best effort, nothing here may raise an ERROR: a declaration left behind is a reserved name only */
		foreach(lc, declared)
		{
			DeclaredTable *d = lfirst(lc);
			lt_ns_rest_reply reply;
			lt_error	err;
			MemoryContext old = lt_alloc_target(declared_cxt);

			if (lt_ns_rest_call(&d->conf, "POST", psprintf("/v1/table/%s/deregister", lt_ns_rest_route_id(d->identifier)),
								psprintf("{\"id\": %s}", json_id(d->identifier)), &reply, &err) == LT_OK &&
				(reply.status < 200 || reply.status >= 300))
				elog(WARNING, "lt_fdw: the namespace of server \"%s\" answered %ld to DeregisterTable of \"%s\"",
					 d->servername, reply.status, d->identifier);
			lt_alloc_target(old);
		}
	}
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_COMMIT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PREPARE)
	{
		MemoryContextReset(declared_cxt);
		declared = NIL;
	}
}

/*
 * DeclareTable (the spec's way to create a table: the service reserves the name and gives its location),
 * then DescribeTable.  Made when lt_create_dataset runs, before anything is written; an abort deregisters it.
 */
static LtNamespaceTable *
rest_declare(ForeignServer *server, const LtNamespaceConf *c, const char *identifier)
{
	char	   *what = psprintf("DeclareTable of \"%s\"", identifier);
	char	   *body = psprintf("{\"id\": %s, \"vend_credentials\": true}", json_id(identifier));
	MemoryContext old;
	DeclaredTable *d;

	if (declared_cxt == NULL)
	{
		declared_cxt = AllocSetContextCreate(TopMemoryContext, "lt_fdw declared tables", ALLOCSET_SMALL_SIZES);
		RegisterXactCallback(declared_xact_callback, NULL);
	}
	(void) rest_json(server, c, "POST", psprintf("/v1/table/%s/declare", lt_ns_rest_route_id(identifier)), body,
					 what, false);
	old = MemoryContextSwitchTo(declared_cxt);
	d = palloc0(sizeof(DeclaredTable));
	d->servername = pstrdup(server->servername);
	rest_conf(server, c, &d->conf);
	d->conf.uri = pstrdup(d->conf.uri);
	d->identifier = pstrdup(identifier);
	declared = lappend(declared, d);
	MemoryContextSwitchTo(old);
	return rest_describe(server, identifier, false);
}

/* ---- commits through a namespace that manages versions ------------------------------------------------- */

struct LtNamespacePublisher
{
	ForeignServer *server;
	lt_ns_rest_conf conf;
	char	   *identifier;
	char	   *route;			/* /v1/table/{id}/version/create */
	char	   *id_json;
	char	   *location;		/* the dataset's URI prefix of staged paths ("file:///dir" or "s3://b/p") */
	long		status;			/* the namespace's refusal (0: none) */
	char	   *answer;			/* its words (lt_malloc'd) */
};

LtNamespacePublisher *
lt_namespace_publisher(Oid serverid, const char *identifier, const char *dataset_dir)
{
	LtNamespacePublisher *p = palloc0(sizeof(LtNamespacePublisher));
	LtNamespaceConf c;

	p->server = GetForeignServer(serverid);
	(void) lt_server_namespace(p->server, &c);
	rest_conf(p->server, &c, &p->conf);
	p->identifier = pstrdup(identifier);
	p->route = psprintf("/v1/table/%s/version/create", lt_ns_rest_route_id(identifier));
	p->id_json = json_id(identifier);
	p->location = root_uri(dataset_dir);
	return p;
}

/* The store's publish_manifest: inside the library, so nothing here may raise an ERROR. */
lt_code
lt_namespace_publish(void *arg, uint64_t version, const char *staged_path, const char *final_path, lt_error *err)
{
	LtNamespacePublisher *p = arg;
	const char *rel = strstr(staged_path, "_versions/");
	char	   *body;
	lt_ns_rest_reply reply;
	lt_code		rc;

	(void) final_path;
	body = lt_asprintf("{\"id\": %s, \"version\": %llu, \"manifest_path\": \"%s/%s\", \"naming_scheme\": \"V2\"}",
					   p->id_json, (unsigned long long) version, p->location, rel ? rel : staged_path);
	if (body == NULL)
		return lt_error_set(err, LT_ENOMEM, "out of memory");
	rc = lt_ns_rest_call(&p->conf, "POST", p->route, body, &reply, err);
	lt_free(body);
	if (rc != LT_OK)
		return rc;
	if (reply.status >= 200 && reply.status < 300)
	{
		lt_free(reply.body);
		return LT_OK;
	}
	p->status = reply.status;
	p->answer = reply.body;
	/* the version exists: a concurrent commit took it (TableVersionAlreadyExists), so rebase and retry */
	if (reply.status == 409 && strstr(reply.body, "\"code\":12") != NULL)
	{
		p->status = 0;
		return lt_error_set(err, LT_ECONFLICT, "version %llu of table \"%s\" exists in its namespace",
							(unsigned long long) version, p->identifier);
	}
	return lt_error_set(err, LT_EIO, "the namespace refused version %llu of table \"%s\" (%ld)",
						(unsigned long long) version, p->identifier, reply.status);
}

void
lt_namespace_publish_report(LtNamespacePublisher *p, const char *relname)
{
	if (p == NULL || p->status == 0)
		return;
	rest_report(p->server, psprintf("CreateTableVersion of \"%s\" (committing foreign table \"%s\")",
									p->identifier, relname),
				p->status, p->answer ? p->answer : "", false);
}

/* ---- resolution, kept for the transaction ----------------------------------------------------------- */

typedef struct ResolvedTable
{
	Oid			serverid;
	Oid			userid;
	char	   *root;
	char	   *identifier;
	char	   *dataset_dir;
	LtS3Location *s3;			/* REST: the table's credentials */
	int64		expires_ms;		/* REST: when they expire (0: never) */
	bool		managed_versioning;
} ResolvedTable;

static MemoryContext resolved_cxt = NULL;
static List *resolved = NIL;
static LocalTransactionId resolved_lxid = InvalidLocalTransactionId;

static ResolvedTable *
resolved_find(Oid serverid, Oid userid, const char *root, const char *identifier)
{
	ListCell   *lc;

	if (resolved_cxt == NULL)
		resolved_cxt = AllocSetContextCreate(TopMemoryContext, "lt_fdw namespace", ALLOCSET_SMALL_SIZES);
	if (resolved_lxid != MyProc->lxid)
	{
		MemoryContextReset(resolved_cxt);
		resolved = NIL;
		resolved_lxid = MyProc->lxid;
	}
	foreach(lc, resolved)
	{
		ResolvedTable *r = lfirst(lc);

		if (r->serverid == serverid && r->userid == userid && strcmp(r->root, root) == 0 &&
			strcmp(r->identifier, identifier) == 0)
		{
			/* vended credentials are renewed before they expire */
			if (r->expires_ms != 0 && now_unix_ms() + LT_NS_REFRESH_MS >= r->expires_ms)
			{
				resolved = foreach_delete_current(resolved, lc);
				return NULL;
			}
			return r;
		}
	}
	return NULL;
}

static ResolvedTable *
resolved_add(Oid serverid, Oid userid, const char *root, const char *identifier, const char *dataset_dir)
{
	MemoryContext old = MemoryContextSwitchTo(resolved_cxt);
	ResolvedTable *r = palloc0(sizeof(ResolvedTable));

	r->serverid = serverid;
	r->userid = userid;
	r->root = pstrdup(root);
	r->identifier = pstrdup(identifier);
	r->dataset_dir = pstrdup(dataset_dir);
	resolved = lappend(resolved, r);
	MemoryContextSwitchTo(old);
	return r;
}

/* A table of a REST namespace: DescribeTable, kept for the transaction while its credentials last. */
static void
resolve_rest(ForeignServer *server, const LtNamespaceConf *c, LtTableOptions *opts)
{
	Oid			userid = GetUserId();
	ResolvedTable *r = resolved_find(server->serverid, userid, c->rest_uri, opts->identifier);

	if (r == NULL)
	{
		LtNamespaceTable *t = rest_describe(server, opts->identifier, opts->ns_create);
		MemoryContext old;

		if (t == NULL)
			t = rest_declare(server, c, opts->identifier);

		r = resolved_add(server->serverid, userid, c->rest_uri, opts->identifier, t->dataset_dir);
		old = MemoryContextSwitchTo(resolved_cxt);
		r->s3 = lt_s3_location_copy(t->s3);
		MemoryContextSwitchTo(old);
		r->expires_ms = t->expires_ms;
		r->managed_versioning = t->managed_versioning;
	}
	opts->dataset_dir = pstrdup(r->dataset_dir);
	opts->s3 = lt_s3_location_copy(r->s3);
	opts->ns_managed_versioning = r->managed_versioning;
	opts->uri = root_uri(opts->dataset_dir);
}

/*
 * Where Lance 12's directory namespace puts a new table (lt_create_dataset): a root table under the
 * listing is "<name>.lance" (the listing is its registration); any other table "<8 hex>_<identifier>"
 * (random hex, as Lance spreads its tables), registered by a __manifest row at commit (opts->ns_register).
 * Runs with the library's allocator; the namespace must exist, and __manifest too when it is needed.
 */
static lt_code
new_location(ForeignServer *server, lt_store *store, const LtNamespaceConf *conf, LtTableOptions *opts,
			 char **location, lt_error *err)
{
	const char *id = opts->identifier;
	const char *last = strrchr(id, LT_NS_DELIMITER);
	uint32		hash;

	if (last == NULL && conf->dir.dir_listing)
	{
		*location = lt_asprintf("%s.lance", id);
		return *location ? LT_OK : lt_error_set(err, LT_ENOMEM, "out of memory");
	}
	/* the namespace must exist (and with it __manifest): listing it says so */
	{
		char	   *ns = last ? pnstrdup(id, last - id) : pstrdup("");
		lt_ns_dir_opts manifest_only = conf->dir;
		lt_ns_table *tables = NULL;
		size_t		n = 0;
		lt_code		rc;
		lt_version_spec spec = {0, NULL};
		lt_dataset *ds = NULL;

		manifest_only.dir_listing = false;
		rc = lt_ns_dir_list_tables(store, ns, &manifest_only, &tables, &n, err);
		if (rc == LT_ENOTFOUND)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
					 errmsg("lt_fdw: namespace \"%s\" of table \"%s\" does not exist in the directory namespace of server \"%s\"",
							ns, id, server->servername),
					 errhint("Create the namespace with Lance first (lt_fdw does not create namespaces).")));
		if (rc != LT_OK)
			return rc;
		lt_ns_tables_free(tables, n);
		rc = lt_dataset_open(store, LT_NS_MANIFEST_DIR "/", &spec, &ds, err);
		if (rc == LT_ENOTFOUND)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: table \"%s\" would be registered in " LT_NS_MANIFEST_DIR
							" of server \"%s\", which does not exist", id, server->servername),
					 errhint("lt_fdw does not create a namespace's " LT_NS_MANIFEST_DIR "; let Lance create it (a namespace or a table).")));
		if (rc != LT_OK)
			return rc;
		lt_dataset_close(ds);
	}
	if (!pg_strong_random(&hash, sizeof(hash)))
		return lt_error_set(err, LT_EIO, "could not generate random bytes");
	*location = lt_asprintf("%08x_%s", (unsigned) hash, id);
	if (*location == NULL)
		return lt_error_set(err, LT_ENOMEM, "out of memory");
	opts->ns_register = pstrdup(*location);
	return LT_OK;
}

/*
 * The __manifest row of a table lt_create_dataset made (after its first version committed, as Lance
 * registers after writing: a crash between leaves an unregistered directory, never a registered table
 * without a version).  An insert of the key object_id, as Lance's merge-insert: a row of the identifier
 * already there is 42P07, one a concurrent commit added is 40001.
 */
void
lt_namespace_register(const char *root, const LtS3Location *s3, const char *identifier, const char *location,
					  const char *relname)
{
	lt_store   *store = NULL;
	lt_dataset *ds = NULL;
	lt_txn	   *txn = NULL;
	lt_key_filter *filter = NULL;
	lt_key_buf	kb = {0};
	lt_written_file wf = {0};
	lt_version_spec spec = {0, NULL};
	lt_commit_options co = {0};
	lt_commit_result res;
	const lt_field **key = NULL;
	int			n_key = 0;
	bool		found = false;
	bool		wrote = false;
	uint64_t	fid;
	lt_error	err;
	lt_code		rc;
	MemoryContext old = lt_alloc_target(CurrentMemoryContext);

	rc = lt_open_store(s3, root, &store, &err);
	if (rc == LT_OK)
		rc = lt_dataset_open(store, LT_NS_MANIFEST_DIR "/", &spec, &ds, &err);
	if (rc == LT_OK)
		rc = lt_ns_manifest_has(ds, root, identifier, &found, &err);
	if (rc == LT_OK && !found)
		rc = lt_ns_manifest_write_row(store, ds, identifier, "table", location, &wf, &err);
	wrote = rc == LT_OK && !found;
	if (wrote)
		rc = lt_txn_begin(ds, &txn, &err);
	if (wrote && rc == LT_OK)
		rc = lt_txn_add_fragment(txn, 1, &wf, NULL, &fid, &err);
	if (wrote && rc == LT_OK)
		rc = lt_schema_primary_key(ds->schema, &key, &n_key, &err);
	if (wrote && rc == LT_OK && n_key > 0)
	{
		int32_t    *ids = palloc(sizeof(int32_t) * n_key);

		for (int i = 0; i < n_key; i++)
			ids[i] = key[i]->id;
		/* the key is object_id alone (Lance's __manifest); anything else: a plain append */
		if (n_key == 1 && strcmp(key[0]->name, "object_id") == 0)
		{
			rc = lt_key_filter_new(LT_KEY_FILTER_BLOOM, ids, n_key, &filter, &err);
			if (rc == LT_OK)
				rc = lt_key_buf_add_bytes(&kb, identifier, strlen(identifier), false, &err);
			if (rc == LT_OK)
				rc = lt_key_filter_add(filter, kb.data, kb.len, &err);
			if (rc == LT_OK)
			{
				rc = lt_txn_assert_unique_keys(txn, filter, &err);
				filter = NULL;
			}
		}
	}
	if (wrote && rc == LT_OK)
		rc = lt_txn_commit(txn, &co, &res, &err);
	if (filter)
		lt_key_filter_free(filter);
	lt_key_buf_free(&kb);
	lt_free(key);
	if (txn)
		lt_txn_free(txn);
	if (ds)
		lt_dataset_close(ds);
	if (store)
		lt_store_close(store);
	lt_alloc_target(old);
	if (found)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("lt_fdw: table \"%s\" is already registered in the namespace (foreign table \"%s\")",
						identifier, relname),
				 errdetail("Another writer registered it since lt_create_dataset; the dataset made at \"%s\" is left unregistered for lt_cleanup.",
						   location)));
	if (rc == LT_ECONFLICT)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lt_fdw: could not register table \"%s\" in the namespace: a concurrent registration conflicts",
						identifier),
				 errdetail("%s; the dataset made at \"%s\" is left unregistered.", err.msg, location),
				 errhint("Retry the transaction.")));
	if (rc != LT_OK)
		lt_report_write(&err, psprintf("namespace manifest %s (registering table \"%s\")", root_uri(root), identifier));
}

void
lt_namespace_resolve(ForeignServer *server, LtTableOptions *opts)
{
	LtNamespaceConf conf;
	ResolvedTable *r;
	Oid			userid = GetUserId();

	if (lt_server_namespace(server, &conf) && conf.rest_uri)
	{
		resolve_rest(server, &conf, opts);
		return;
	}
	if (!conf.directory || opts->root == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("lt_fdw: foreign table with identifier \"%s\" is on server \"%s\", which is not a namespace",
						opts->identifier, server->servername),
				 errhint("Give the server the options root and namespace 'directory' (or namespace_uri), or name the dataset by path.")));
	opts->s3 = lt_is_s3_uri(opts->root) ? lt_s3_location(server, userid) : NULL;
	if (opts->s3 == NULL)
		lt_check_read_privilege(userid, opts->identifier, root_uri(opts->root));
	r = resolved_find(server->serverid, userid, opts->root, opts->identifier);
	if (r)
		opts->dataset_dir = pstrdup(r->dataset_dir);
	else
	{
		lt_store   *store = NULL;
		char	   *location = NULL;
		lt_error	err;
		lt_code		rc;
		MemoryContext old = lt_alloc_target(CurrentMemoryContext);

		rc = lt_open_store(opts->s3, opts->root, &store, &err);
		if (rc == LT_OK)
			rc = lt_ns_dir_describe_table(store, opts->identifier, &conf.dir, &location, &err);
		if (rc == LT_ENOTFOUND && opts->ns_create)
			rc = new_location(server, store, &conf, opts, &location, &err);
		if (store)
			lt_store_close(store);
		lt_alloc_target(old);
		if (rc == LT_ENOTFOUND)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_TABLE_NOT_FOUND),
					 errmsg("lt_fdw: table \"%s\" does not exist in the namespace of server \"%s\"",
							opts->identifier, server->servername),
					 errdetail("%s", err.msg)));
		if (rc != LT_OK)
			lt_report(&err, psprintf("namespace %s", root_uri(opts->root)));
		opts->dataset_dir = below_root(opts->root, location);
		resolved_add(server->serverid, userid, opts->root, opts->identifier, opts->dataset_dir);
	}
	opts->uri = root_uri(opts->dataset_dir);
}
