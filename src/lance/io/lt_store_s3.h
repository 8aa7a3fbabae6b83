/*
 * lt_store_s3.h — the object store on S3 and S3-compatible servers (libcurl).
 *
 * One store is one "directory": a bucket and a key prefix.  Requests are signed with SigV4 by
 * libcurl; every request is retried with exponential backoff and jitter on 5xx, 429 and
 * connection errors (never on another 4xx) within a bounded time, and the caller's interrupt
 * check (lt_set_interrupt_hooks, util/lt_status.h) is polled while waiting, so a query can be cancelled.
 * Connections are reused across requests and stores (one curl multi handle per process).
 *
 * Not thread-safe: the process-wide state (connections, the metadata cache, counters) assumes
 * one thread, as a Postgres backend or a test driver is.
 */
#ifndef LT_STORE_S3_H
#define LT_STORE_S3_H

#include "io/lt_store.h"

typedef struct lt_s3_config
{
	const char *bucket;
	const char *prefix;				/* key prefix of the store's root ("" or NULL: the bucket) */
	const char *endpoint;			/* "https://host[:port]"; NULL: AWS, https://s3.<region>.amazonaws.com */
	const char *region;				/* NULL: us-east-1 */
	bool		path_style;			/* https://host/bucket/key instead of https://bucket.host/key */
	bool		allow_http;			/* accept an http:// endpoint (loopback tests) */
	const char *access_key_id;		/* NULL: unsigned (anonymous) requests */
	const char *secret_access_key;
	const char *session_token;		/* NULL: none */
	int			max_attempts;		/* per request; 0: 8 */
	int			retry_budget_ms;	/* total time of one request's attempts; 0: 30000 */
	int			max_parallel;		/* requests in flight for one read_ranges; 0: 8 */
	int			list_max_keys;		/* page size of listings; 0: the server's (1000 on S3) */
} lt_s3_config;

/* "s3://bucket/key/prefix/" -> bucket, key prefix without surrounding slashes (lt_malloc'd). */
lt_code		lt_s3_parse_uri(const char *uri, char **bucket, char **prefix, lt_error *err);

/* Open a store on cfg (copied; nothing is contacted yet). */
lt_code		lt_store_s3_open(const lt_s3_config *cfg, lt_store **out, lt_error *err);

/* Process-wide counters (benchmarks, tests). */
typedef struct lt_s3_stats
{
	uint64_t	requests;			/* HTTP requests sent, retries included */
	uint64_t	retries;
	uint64_t	bytes_in;			/* response bodies */
	uint64_t	bytes_out;			/* request bodies */
	uint64_t	cache_hits;			/* opens and reads answered by the metadata cache */
} lt_s3_stats;

void		lt_s3_get_stats(lt_s3_stats *out);
/* Drop the metadata cache (tests, benchmarks of a cold cache) and forget conditional-PUT probes. */
void		lt_s3_cache_clear(void);

/*
 * For command-line tools: a local directory, or an s3:// URI configured from the environment
 * (LT_S3_ENDPOINT or AWS_ENDPOINT_URL: path style, http allowed for an http:// endpoint;
 * AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN).
 */
lt_code		lt_store_open_location(const char *location, lt_store **out, lt_error *err);

#endif
