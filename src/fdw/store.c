/*
 * store.c — where a dataset's bytes live: a local directory or an S3 bucket, and with which
 * credentials.
 *
 * A server whose root is s3://bucket/prefix reads and writes through the S3 backend
 * (src/lance/io/lt_store_s3.c) at its `endpoint` (default: AWS in `region`). Credentials come from
 * the user mapping of the current user (or PUBLIC): aws_access_key_id, aws_secret_access_key and
 * aws_session_token. Without them, the ambient credentials of the server process (the AWS_*
 * environment variables; unsigned requests when there are none) are used only by a superuser, or
 * when a superuser set credentials_required 'false' in the user mapping, as postgres_fdw's
 * password_required does for passwords: otherwise a non-superuser could use the server's own
 * identity. Secrets never appear in messages.
 *
 * The library (the S3 backend while it waits, long loops, index builds, kNN scoring) polls
 * lt_fdw_interrupt_pending, so a query cancel or a terminate stops a request within 50 ms; the library then fails with LT_ECANCELED and lt_report raises
 * the interrupt.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "utils/wait_event.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "io/lt_store_s3.h"
#include "util/lt_alloc.h"
#include "store.h"

bool
lt_is_s3_uri(const char *value)
{
	return strncmp(value, "s3://", 5) == 0 || strncmp(value, "s3a://", 6) == 0;
}

/* The library's interrupt check (lt_set_interrupt_hooks): a pending cancel or terminate. */
static bool
lt_fdw_interrupt_pending(void)
{
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

/*
 * The library's sleeps (a commit's backoff after a lost race) wait on the latch, so that a cancel, a
 * terminate or statement_timeout wakes them; the library then fails with LT_ECANCELED.
 */
static void
lt_fdw_sleep(uint64_t us)
{
	long		ms = (long) Min((us + 999) / 1000, (uint64_t) 60 * 60 * 1000);

	if (ms <= 0 || lt_fdw_interrupt_pending())
		return;
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
}

/*
 * The descriptors the library keeps open (data files in the file caches, files a scan reads) count
 * against max_files_per_process as PostgreSQL's own "external" descriptors: past a third of the
 * backend's budget the library closes idle cached files rather than open more (lt_store.h).
 */
static const lt_fd_hooks fd_hooks = {AcquireExternalFD, ReserveExternalFD, ReleaseExternalFD};

void
lt_store_init(void)
{
	lt_set_interrupt_hooks(lt_fdw_interrupt_pending, lt_fdw_sleep);
	lt_set_fd_hooks(&fd_hooks);
}

/* The options of the user mapping of userid (or PUBLIC) on the server; NIL when there is none. */
List *
lt_user_mapping_options(Oid userid, Oid serverid)
{
	HeapTuple	tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(userid), ObjectIdGetDatum(serverid));
	List	   *options = NIL;
	Datum		datum;
	bool		isnull;

	if (!HeapTupleIsValid(tp))
		tp = SearchSysCache2(USERMAPPINGUSERSERVER, ObjectIdGetDatum(InvalidOid), ObjectIdGetDatum(serverid));
	if (!HeapTupleIsValid(tp))
		return NIL;
	datum = SysCacheGetAttr(USERMAPPINGUSERSERVER, tp, Anum_pg_user_mapping_umoptions, &isnull);
	if (!isnull)
		options = untransformRelOptions(datum);
	ReleaseSysCache(tp);
	return options;
}

static char *
env_or_null(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] ? pstrdup(v) : NULL;
}

/* The endpoint, region and addressing of an s3:// server (its options). */
static LtS3Location *
server_endpoint(ForeignServer *server)
{
	LtS3Location *loc = palloc0(sizeof(LtS3Location));
	ListCell   *lc;

	foreach(lc, server->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "endpoint") == 0)
			loc->endpoint = defGetString(def);
		else if (strcmp(def->defname, "region") == 0)
			loc->region = defGetString(def);
		else if (strcmp(def->defname, "path_style") == 0)
			loc->path_style = defGetBoolean(def);
		else if (strcmp(def->defname, "allow_http") == 0)
			loc->allow_http = defGetBoolean(def);
	}
	return loc;
}

/*
 * Part of cache keys, so that what one set of credentials read is never served to another (a wrong
 * secret included). It holds the secret: it is compared, never printed.
 */
static void
set_identity(LtS3Location *loc)
{
	loc->identity = psprintf("%s|%s|%d|%s|%s|%s", loc->endpoint ? loc->endpoint : "", loc->region ? loc->region : "",
							 (int) loc->path_style, loc->access_key_id ? loc->access_key_id : "",
							 loc->secret_access_key ? loc->secret_access_key : "",
							 loc->session_token ? loc->session_token : "");
}

LtS3Location *
lt_s3_location_vended(ForeignServer *server, const char *key, const char *secret, const char *token,
					  const char *region)
{
	LtS3Location *loc = server_endpoint(server);

	loc->access_key_id = pstrdup(key);
	loc->secret_access_key = pstrdup(secret);
	loc->session_token = token ? pstrdup(token) : NULL;
	if (loc->region == NULL && region != NULL)
		loc->region = pstrdup(region);
	set_identity(loc);
	return loc;
}

LtS3Location *
lt_s3_location(ForeignServer *server, Oid userid)
{
	LtS3Location *loc = server_endpoint(server);
	bool		credentials_required = true;
	ListCell   *lc;

	foreach(lc, lt_user_mapping_options(userid, server->serverid))
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "aws_access_key_id") == 0)
			loc->access_key_id = defGetString(def);
		else if (strcmp(def->defname, "aws_secret_access_key") == 0)
			loc->secret_access_key = defGetString(def);
		else if (strcmp(def->defname, "aws_session_token") == 0)
			loc->session_token = defGetString(def);
		else if (strcmp(def->defname, "credentials_required") == 0)
			credentials_required = defGetBoolean(def);
	}
	if (loc->access_key_id == NULL || loc->secret_access_key == NULL)
	{
		if (!superuser_arg(userid) && credentials_required)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION),
					 errmsg("lt_fdw: the user mapping of server \"%s\" for this user gives no S3 credentials",
							server->servername),
					 errdetail("Non-superusers must give aws_access_key_id and aws_secret_access_key in their user mapping."),
					 errhint("A superuser may set credentials_required 'false' in the user mapping to let the server's own credentials be used.")));
		/* the server process's ambient credentials (none: unsigned requests, for public buckets) */
		loc->access_key_id = env_or_null("AWS_ACCESS_KEY_ID");
		loc->secret_access_key = env_or_null("AWS_SECRET_ACCESS_KEY");
		loc->session_token = env_or_null("AWS_SESSION_TOKEN");
		loc->ambient = true;
		if (loc->region == NULL)
			loc->region = env_or_null("AWS_REGION");
	}
	set_identity(loc);
	return loc;
}

LtS3Location *
lt_s3_location_copy(const LtS3Location *s3)
{
	LtS3Location *c;

	if (s3 == NULL)
		return NULL;
	c = palloc(sizeof(LtS3Location));
	*c = *s3;
#define COPY(f) c->f = s3->f ? pstrdup(s3->f) : NULL
	COPY(endpoint);
	COPY(region);
	COPY(access_key_id);
	COPY(secret_access_key);
	COPY(session_token);
	COPY(identity);
#undef COPY
	return c;
}

lt_code
lt_open_store(const LtS3Location *s3, const char *dir, lt_store **out, lt_error *err)
{
	lt_s3_config cfg = {0};
	char	   *bucket = NULL;
	char	   *prefix = NULL;
	lt_code		rc;

	if (!lt_is_s3_uri(dir))
	{
		rc = lt_store_local_open(dir, out, err);
		if (rc == LT_OK)
			(*out)->no_fsync = !enableFsync;	/* the server's fsync setting covers our files too */
		return rc;
	}
	if (s3 == NULL)
		return lt_error_set(err, LT_EINVALID, "%s: an s3:// location needs a server whose root is s3://", dir);
	LT_TRY(lt_s3_parse_uri(dir, &bucket, &prefix, err));
	cfg.bucket = bucket;
	cfg.prefix = prefix;
	cfg.endpoint = s3->endpoint;
	cfg.region = s3->region;
	cfg.path_style = s3->path_style;
	cfg.allow_http = s3->allow_http;
	cfg.access_key_id = s3->access_key_id;
	cfg.secret_access_key = s3->secret_access_key;
	cfg.session_token = s3->session_token;
	rc = lt_store_s3_open(&cfg, out, err);
	lt_free(bucket);
	lt_free(prefix);
	return rc;
}
