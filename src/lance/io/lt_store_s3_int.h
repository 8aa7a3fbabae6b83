/*
 * lt_store_s3_int.h — what the S3 store's files share (lt_store_s3.c: the store's operations;
 * lt_store_s3_request.c below it: the process-wide curl state, the metadata cache, the
 * conditional-PUT probes and the request engine).
 */
#ifndef LT_STORE_S3_INT_H
#define LT_STORE_S3_INT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/lt_store_s3.h"

#define TAIL_PREFETCH	((uint64_t) 64 * 1024)
#define TAIL_KEEP_MAX	((uint64_t) 1 << 20)		/* a read ending at EOF up to this long becomes the tail */
#define PART_SIZE		((uint64_t) 8 << 20)		/* multipart part size and the split size of big reads */
#define CACHE_BYTES		((size_t) 64 << 20)
#define MAX_SMALL_BODY	((size_t) 64 << 20)		/* listings, error documents, read-backs */
#define POLL_MS			50

typedef struct s3_store
{
	lt_store	base;
	char	   *bucket;
	char	   *prefix;				/* "" or "a/b" (no surrounding slashes) */
	char	   *origin;				/* scheme://host[:port] requests go to */
	char	   *bucket_path;		/* "/bucket" (path style) or "" */
	bool		https_only;
	char	   *sigv4;				/* "aws:amz:REGION:s3", NULL when unsigned */
	char	   *userpwd;			/* "id:secret": handed to curl only, never printed */
	char	   *token_header;		/* "x-amz-security-token: ..." or NULL */
	char	   *identity;			/* cache key prefix: origin, bucket and credentials (compared, never printed) */
	char	   *probe_where;		/* origin and bucket */
	int			max_attempts;
	int			budget_ms;
	int			max_parallel;
	int			list_max_keys;
} s3_store;

typedef struct s3_rfile
{
	lt_rfile	base;
	char	   *key;				/* the object key */
	char	   *ckey;				/* the cache key */
	char		etag[128];
	uint64_t	tail_off;			/* tail covers [tail_off, size) when tail != NULL */
	uint8_t    *tail;
} s3_rfile;

typedef struct s3_req
{
	s3_store   *s;
	const char *method;			/* GET HEAD PUT POST DELETE */
	char	   *url;
	char		what[1024];		/* "s3://bucket/key" for messages */
	bool		conditional;	/* If-None-Match: * */
	const uint8_t *body;
	size_t		body_len;
	bool		ranged;
	uint64_t	range_off,
				range_len;
	uint64_t	suffix;			/* GET of the last `suffix` bytes (Range: bytes=-N) into buf */
	uint8_t    *dst;			/* 2xx body of a ranged GET goes here (range_len bytes) */
	/* response */
	long		status;
	uint64_t	raw;			/* body bytes received in this attempt */
	uint8_t    *buf;			/* other bodies (errors, listings), up to MAX_SMALL_BODY */
	size_t		buf_len,
				buf_cap;
	bool		overflow;
	char		etag[128];
	uint64_t	content_length;
	bool		have_length;
	bool		have_range;		/* Content-Range: bytes range_first-range_last/range_total */
	uint64_t	range_first,
				range_last,
				range_total;
	/* scheduling */
	int			attempts;
	int64_t		first_ms;
	int64_t		next_ms;
	int64_t		started_ms;		/* of this attempt (the trace) */
	bool		running;
	bool		done;
	bool		ambiguous;		/* an earlier attempt may have taken effect */
	CURL	   *easy;
	struct curl_slist *headers;
	char		curl_err[CURL_ERROR_SIZE];
	lt_code		rc;
	char		why[300];		/* the last retriable failure */
} s3_req;

typedef struct cache_entry
{
	struct cache_entry *prev,
			   *next;				/* LRU list, most recent first */
	char	   *key;				/* identity "\n" object key */
	uint64_t	size;
	char		etag[128];
	uint64_t	tail_off;			/* tail bytes cover [tail_off, size) */
	uint8_t    *tail;				/* malloc'd; NULL when no tail is known */
	size_t		bytes;				/* accounted size */
} cache_entry;

typedef struct probe_result
{
	struct probe_result *next;
	char	   *where;
	bool		honoured;
} probe_result;

extern lt_s3_stats lt_s3_g_stats;
extern probe_result *lt_s3_g_probes;

lt_code		lt_s3_curl_setup(lt_error *err);
cache_entry *lt_s3_cache_find(const char *key);
void		lt_s3_cache_forget(const char *key);
void		lt_s3_cache_store(const char *key, uint64_t size, const char *etag, uint64_t tail_off, const uint8_t *tail);
bool		lt_s3_immutable_name(const char *key);
const char *lt_s3_object_uri(s3_store *s, const char *key);
char *		lt_s3_uri_encode(const char *src, bool keep_slash);
char *		lt_s3_full_key(s3_store *s, const char *path);
char *		lt_s3_object_url(s3_store *s, const char *key, const char *query);
void		lt_s3_req_init(s3_req *r, s3_store *s, const char *method, const char *key);
void		lt_s3_req_free(s3_req *r);
const char *lt_s3_xml_find(const char *p, const char *end, const char *tag, const char **vend);
char *		lt_s3_xml_text(const char *a, const char *b);
void		lt_s3_error_summary(const s3_req *r, char *out, size_t outlen);
lt_code		lt_s3_run_requests_opt(s3_store *s, s3_req *reqs, int n, bool keep_going, lt_error *err);
lt_code		lt_s3_run_requests(s3_store *s, s3_req *reqs, int n, lt_error *err);
lt_code		lt_s3_run_one(s3_req *r, lt_error *err);

#endif
