/*
 * lt_store_s3.c — the object store on S3 (libcurl, SigV4).
 *
 * Requests.  Every request goes through run_requests(): a curl multi loop that keeps up to
 * max_parallel transfers in flight, retries what is retriable (connection errors, 5xx, 429,
 * short bodies) after a jittered exponential backoff until max_attempts or the time budget is
 * spent, and polls the caller's interrupt check between waits.  curl 7.88 signs with
 * CURLOPT_AWS_SIGV4 but neither adds x-amz-content-sha256 nor canonicalises the query, so every
 * request carries `x-amz-content-sha256: UNSIGNED-PAYLOAD` and queries are built sorted and
 * percent-encoded here.  Redirects, proxies from the environment and protocols other than https
 * (http only with allow_http) are off: only the configured endpoint is ever contacted.
 *
 * Reads.  open is a HEAD; the first read that ends near the end of the file (a footer) fetches
 * the last TAIL_PREFETCH bytes, so the footer and the metadata behind it cost one request.
 * read_many runs a coalesced range set in parallel (large ranges split into PART_SIZE pieces).
 * A process-wide cache keeps size, ETag and tail bytes of objects (bounded by CACHE_BYTES):
 * objects Lance never rewrites (data files, deletion files, index files: their names carry a
 * UUID or a random id) are served from it without a request; other objects (manifests,
 * transaction files) are revalidated by the ETag of a HEAD.
 *
 * Writes.  put is a PUT; put_if_absent is a PUT with `If-None-Match: *` (412: LT_ECONFLICT).
 * Before the first conditional create on a bucket the store checks that the server honours the
 * condition (a probe object created twice must fail the second time); after every conditional
 * create it reads the object back and compares it with what it wrote, so a server that
 * overwrote an existing manifest is an error, never a silently lost commit.  A 412 answered to a
 * retry whose earlier attempt may have landed is resolved the same way (the object is ours if it
 * holds our bytes).  Streaming writes buffer PART_SIZE bytes: a file that fits is one PUT at
 * finish (conditional, like put_if_absent without the read-back), a larger one a multipart
 * upload, completed at finish and aborted by lt_wfile_abort.
 *
 * Size (2.3k lines): not yet split by concern.  The sections below (the metadata cache, the
 * request engine, reads, listing, writes, multipart) share the store, request and file structs
 * and some twenty static helpers; the split puts the request engine and the cache in a lower file
 * with an internal header, and reads, listing and multipart above it.
 */
#include "io/lt_store_s3.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"

#define TAIL_PREFETCH	((uint64_t) 64 * 1024)
#define TAIL_KEEP_MAX	((uint64_t) 1 << 20)		/* a read ending at EOF up to this long becomes the tail */
#define PART_SIZE		((uint64_t) 8 << 20)		/* multipart part size and the split size of big reads */
#define CACHE_BYTES		((size_t) 64 << 20)
#define MAX_SMALL_BODY	((size_t) 64 << 20)		/* listings, error documents, read-backs */
#define POLL_MS			50

/* ---- process-wide state ------------------------------------------------------------------------ */

static CURLM *g_multi;
static CURL *g_idle[16];
static int	g_n_idle;
static bool (*g_interrupt) (void);
static lt_s3_stats g_stats;
static bool g_trace;			/* LT_S3_TRACE=1: one line per attempt on stderr (no headers, no secrets) */

void
lt_s3_set_interrupt_check(bool (*check) (void))
{
	g_interrupt = check;
}

void
lt_s3_get_stats(lt_s3_stats *out)
{
	*out = g_stats;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static lt_code
curl_setup(lt_error *err)
{
	if (g_multi)
		return LT_OK;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(g_multi = curl_multi_init()))
		return lt_error_set(err, LT_EIO, "libcurl could not be initialised");
	curl_multi_setopt(g_multi, CURLMOPT_MAX_HOST_CONNECTIONS, 16L);
	g_trace = getenv("LT_S3_TRACE") != NULL && getenv("LT_S3_TRACE")[0] == '1';
	return LT_OK;
}

static CURL *
easy_get(void)
{
	if (g_n_idle > 0)
	{
		CURL	   *e = g_idle[--g_n_idle];

		curl_easy_reset(e);
		return e;
	}
	return curl_easy_init();
}

static void
easy_put(CURL *e)
{
	if (g_n_idle < (int) (sizeof(g_idle) / sizeof(g_idle[0])))
		g_idle[g_n_idle++] = e;
	else
		curl_easy_cleanup(e);
}

/* ---- the metadata cache ------------------------------------------------------------------------ */

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

static cache_entry *c_head,
		   *c_tail;
static size_t c_bytes;

static void
cache_unlink(cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c_tail = e->prev;
	e->prev = e->next = NULL;
}

static void
cache_push_front(cache_entry *e)
{
	e->next = c_head;
	e->prev = NULL;
	if (c_head)
		c_head->prev = e;
	c_head = e;
	if (!c_tail)
		c_tail = e;
}

static void
cache_drop(cache_entry *e)
{
	cache_unlink(e);
	c_bytes -= e->bytes;
	free(e->tail);
	free(e->key);
	free(e);
}

static cache_entry *
cache_find(const char *key)
{
	for (cache_entry *e = c_head; e; e = e->next)
		if (strcmp(e->key, key) == 0)
		{
			cache_unlink(e);
			cache_push_front(e);
			return e;
		}
	return NULL;
}

static void
cache_forget(const char *key)
{
	cache_entry *e = cache_find(key);

	if (e)
		cache_drop(e);
}

static void
cache_trim(void)
{
	while (c_bytes > CACHE_BYTES && c_tail)
		cache_drop(c_tail);
}

/* Remember an object's size and etag (and, when tail != NULL, its bytes from tail_off to the end). */
static void
cache_store(const char *key, uint64_t size, const char *etag, uint64_t tail_off, const uint8_t *tail)
{
	cache_entry *e = cache_find(key);

	if (e && (e->size != size || strcmp(e->etag, etag) != 0))
	{
		cache_drop(e);
		e = NULL;
	}
	if (!e)
	{
		if (!(e = calloc(1, sizeof(cache_entry))) || !(e->key = strdup(key)))
		{
			free(e);
			return;
		}
		e->size = size;
		snprintf(e->etag, sizeof(e->etag), "%s", etag);
		e->tail_off = size;
		e->bytes = sizeof(cache_entry) + strlen(key);
		c_bytes += e->bytes;
		cache_push_front(e);
	}
	if (tail && tail_off < e->tail_off && size - tail_off <= CACHE_BYTES / 8)
	{
		uint8_t    *copy = malloc(size - tail_off);

		if (copy)
		{
			memcpy(copy, tail, size - tail_off);
			free(e->tail);
			e->tail = copy;
			e->tail_off = tail_off;
			c_bytes -= e->bytes;
			e->bytes = sizeof(cache_entry) + strlen(key) + (size - tail_off);
			c_bytes += e->bytes;
		}
	}
	cache_trim();
}

/* Objects Lance never rewrites under the same name: served from the cache without revalidation. */
static bool
immutable_name(const char *key)
{
	const char *base = strrchr(key, '/');
	const char *dot;

	base = base ? base + 1 : key;
	dot = strrchr(base, '.');
	if (strstr(key, "_indices/") != NULL)
		return true;
	if (!dot)
		return false;
	if (strcmp(dot, ".lance") == 0)
		return strstr(key, "data/") != NULL;
	if (strcmp(dot, ".arrow") == 0 || strcmp(dot, ".bin") == 0)
		return strstr(key, "_deletions/") != NULL;
	return false;
}

/* ---- conditional-PUT probes, per endpoint and bucket ------------------------------------------- */

typedef struct probe_result
{
	struct probe_result *next;
	char	   *where;
	bool		honoured;
} probe_result;

static probe_result *g_probes;

void
lt_s3_cache_clear(void)
{
	while (c_head)
		cache_drop(c_head);
	while (g_probes)
	{
		probe_result *p = g_probes;

		g_probes = p->next;
		free(p->where);
		free(p);
	}
}

/* ---- the store --------------------------------------------------------------------------------- */

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

/* "s3://bucket/key" of a key, for messages (static buffer: one message at a time) */
static const char *
object_uri(s3_store *s, const char *key)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "s3://%s/%s", s->bucket, key);
	return buf;
}

static bool
unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		c == '-' || c == '_' || c == '.' || c == '~';
}

/* Percent-encode src, keeping '/' when keep_slash (object keys: each segment encoded). */
static char *
uri_encode(const char *src, bool keep_slash)
{
	size_t		n = strlen(src);
	char	   *out = lt_malloc(n * 3 + 1);
	char	   *o = out;
	static const char hex[] = "0123456789ABCDEF";

	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *) src; *p; p++)
	{
		if (unreserved(*p) || (keep_slash && *p == '/'))
			*o++ = (char) *p;
		else
		{
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

/* The full key of a path relative to the store's root. */
static char *
full_key(s3_store *s, const char *path)
{
	while (*path == '/')
		path++;
	if (!s->prefix[0])
		return lt_strdup(path);
	if (!path[0])
		return lt_strdup(s->prefix);
	return lt_asprintf("%s/%s", s->prefix, path);
}

/* URL of an object key with an optional query (already canonical: sorted, encoded). */
static char *
object_url(s3_store *s, const char *key, const char *query)
{
	char	   *ek = uri_encode(key, true);
	char	   *url;

	if (!ek)
		return NULL;
	url = lt_asprintf("%s%s/%s%s%s", s->origin, s->bucket_path, ek, query ? "?" : "", query ? query : "");
	lt_free(ek);
	return url;
}

/* ---- one request ------------------------------------------------------------------------------- */

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

static void
req_init(s3_req *r, s3_store *s, const char *method, const char *key)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->method = method;
	snprintf(r->what, sizeof(r->what), "s3://%s/%s", s->bucket, key);
}

static void
req_free(s3_req *r)
{
	lt_free(r->url);
	lt_free(r->buf);
	r->url = NULL;
	r->buf = NULL;
	if (r->headers)
		curl_slist_free_all(r->headers);
	r->headers = NULL;
}

static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	s3_req	   *r = arg;
	size_t		n = size * nmemb;

	if (r->status == 0)
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
	g_stats.bytes_in += n;
	if (r->dst && r->status >= 200 && r->status < 300)
	{
		/* 206: the range itself; 200: the whole object, of which the range is kept */
		uint64_t	lo = r->status == 206 ? 0 : r->range_off;
		uint64_t	from = r->raw,
					to = r->raw + n;

		r->raw += n;
		if (r->status == 206 && to > r->range_len)
		{
			r->overflow = true;
			return 0;
		}
		if (to > lo && from < lo + r->range_len)
		{
			uint64_t	a = from > lo ? from : lo;
			uint64_t	b = to < lo + r->range_len ? to : lo + r->range_len;

			memcpy(r->dst + (a - lo), data + (a - from), b - a);
		}
		return n;
	}
	r->raw += n;
	/* a suffix GET answered with more than asked: the server ignored the range (open_with_tail falls back) */
	if (r->buf_len + n > (r->suffix ? 2 * r->suffix : MAX_SMALL_BODY))
	{
		r->overflow = true;
		return 0;
	}
	if (r->buf_len + n + 1 > r->buf_cap)
	{
		size_t		cap = r->buf_cap ? r->buf_cap : 4096;
		uint8_t    *nb;

		while (cap < r->buf_len + n + 1)
			cap *= 2;
		if (!(nb = lt_realloc(r->buf, cap)))
		{
			r->overflow = true;
			return 0;
		}
		r->buf = nb;
		r->buf_cap = cap;
	}
	memcpy(r->buf + r->buf_len, data, n);
	r->buf_len += n;
	r->buf[r->buf_len] = '\0';
	return n;
}

static size_t
on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	s3_req	   *r = arg;
	size_t		n = size * nmemb;

	if (n > 5 && strncasecmp(data, "etag:", 5) == 0)
	{
		const char *v = data + 5;
		size_t		len = n - 5;

		while (len && (*v == ' ' || *v == '\t'))
			v++, len--;
		while (len && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
			len--;
		if (len >= sizeof(r->etag))
			len = sizeof(r->etag) - 1;
		memcpy(r->etag, v, len);
		r->etag[len] = '\0';
	}
	else if (n > 14 && strncasecmp(data, "content-range:", 14) == 0)
	{
		char		line[160];
		unsigned long long a,
					b,
					t;

		snprintf(line, sizeof(line), "%.*s", (int) (n - 14 < sizeof(line) - 1 ? n - 14 : sizeof(line) - 1), data + 14);
		if (sscanf(line, " bytes %llu-%llu/%llu", &a, &b, &t) == 3 && a <= b && b < t)
		{
			r->have_range = true;
			r->range_first = a;
			r->range_last = b;
			r->range_total = t;
		}
	}
	return n;
}

static lt_code
req_start(s3_req *r, lt_error *err)
{
	s3_store   *s = r->s;
	CURL	   *e = easy_get();
	char		range[64];

	if (!e)
		return lt_nomem(err);
	r->easy = e;
	r->status = 0;
	r->raw = 0;
	r->buf_len = 0;
	r->overflow = false;
	r->etag[0] = '\0';
	r->have_range = false;
	r->curl_err[0] = '\0';
	r->attempts++;
	r->started_ms = now_ms();
	if (!r->headers)
	{
		struct curl_slist *h = NULL;

		h = curl_slist_append(h, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
		if (h && s->token_header)
			h = curl_slist_append(h, s->token_header);
		if (h && r->conditional)
			h = curl_slist_append(h, "If-None-Match: *");
		if (h && r->body)
			h = curl_slist_append(h, "Content-Type: application/octet-stream");
		if (!h)
		{
			easy_put(e);
			r->easy = NULL;
			return lt_nomem(err);
		}
		r->headers = h;
	}
	curl_easy_setopt(e, CURLOPT_URL, r->url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, s->https_only ? "https" : "http,https");
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 30L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->curl_err);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	if (s->sigv4)
	{
		curl_easy_setopt(e, CURLOPT_AWS_SIGV4, s->sigv4);
		curl_easy_setopt(e, CURLOPT_USERPWD, s->userpwd);
	}
	if (strcmp(r->method, "HEAD") == 0)
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	else if (strcmp(r->method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body || strcmp(r->method, "PUT") == 0 || strcmp(r->method, "POST") == 0)
	{
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) r->body_len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body ? (const char *) r->body : "");
		g_stats.bytes_out += r->body_len;
	}
	if (r->ranged)
	{
		snprintf(range, sizeof(range), "%llu-%llu", (unsigned long long) r->range_off,
				 (unsigned long long) (r->range_off + r->range_len - 1));
		curl_easy_setopt(e, CURLOPT_RANGE, range);
	}
	else if (r->suffix)
	{
		snprintf(range, sizeof(range), "-%llu", (unsigned long long) r->suffix);
		curl_easy_setopt(e, CURLOPT_RANGE, range);
	}
	if (curl_multi_add_handle(g_multi, e) != CURLM_OK)
	{
		easy_put(e);
		r->easy = NULL;
		return lt_error_set(err, LT_EIO, "%s: %s: libcurl refused the request", r->what, r->method);
	}
	r->running = true;
	g_stats.requests++;
	return LT_OK;
}

/* The text of an XML element (first occurrence of <tag> in [p, end)), entities kept; NULL if absent. */
static const char *
xml_find(const char *p, const char *end, const char *tag, const char **vend)
{
	char		open[64],
				close[64];
	const char *a,
			   *b;
	size_t		ol,
				cl;

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	ol = strlen(open);
	cl = strlen(close);
	for (a = p; a + ol <= end; a++)
		if (memcmp(a, open, ol) == 0)
			break;
	if (a + ol > end)
		return NULL;
	a += ol;
	for (b = a; b + cl <= end; b++)
		if (memcmp(b, close, cl) == 0)
			break;
	if (b + cl > end)
		return NULL;
	*vend = b;
	return a;
}

/* Copy an XML text value, decoding the five named entities and numeric references. */
static char *
xml_text(const char *a, const char *b)
{
	char	   *out = lt_malloc((size_t) (b - a) + 1);
	char	   *o = out;

	if (!out)
		return NULL;
	while (a < b)
	{
		if (*a != '&')
		{
			*o++ = *a++;
			continue;
		}
		{
			const char *semi = memchr(a, ';', (size_t) (b - a));
			size_t		len = semi ? (size_t) (semi - a) : 0;

			if (len == 4 && memcmp(a, "&amp", 4) == 0) *o++ = '&';
			else if (len == 3 && memcmp(a, "&lt", 3) == 0) *o++ = '<';
			else if (len == 3 && memcmp(a, "&gt", 3) == 0) *o++ = '>';
			else if (len == 5 && memcmp(a, "&quot", 5) == 0) *o++ = '"';
			else if (len == 5 && memcmp(a, "&apos", 5) == 0) *o++ = '\'';
			else if (len > 2 && a[1] == '#')
			{
				unsigned long cp = a[2] == 'x' ? strtoul(a + 3, NULL, 16) : strtoul(a + 2, NULL, 10);

				/* UTF-8 encode */
				if (cp < 0x80) *o++ = (char) cp;
				else if (cp < 0x800) { *o++ = (char) (0xC0 | (cp >> 6)); *o++ = (char) (0x80 | (cp & 63)); }
				else if (cp < 0x10000) { *o++ = (char) (0xE0 | (cp >> 12)); *o++ = (char) (0x80 | ((cp >> 6) & 63)); *o++ = (char) (0x80 | (cp & 63)); }
				else { *o++ = (char) (0xF0 | (cp >> 18)); *o++ = (char) (0x80 | ((cp >> 12) & 63)); *o++ = (char) (0x80 | ((cp >> 6) & 63)); *o++ = (char) (0x80 | (cp & 63)); }
			}
			else
			{
				*o++ = *a++;
				continue;
			}
			a = semi + 1;
		}
	}
	*o = '\0';
	return out;
}

/* "Code: Message" of an S3 error document (bounded, for messages), or "" */
static void
error_summary(const s3_req *r, char *out, size_t outlen)
{
	const char *end,
			   *code,
			   *msg,
			   *ce = NULL,
			   *me = NULL;

	out[0] = '\0';
	if (!r->buf || r->buf_len == 0)
		return;
	end = (const char *) r->buf + r->buf_len;
	code = xml_find((const char *) r->buf, end, "Code", &ce);
	msg = xml_find((const char *) r->buf, end, "Message", &me);
	if (code)
		snprintf(out, outlen, " %.*s%s%.*s", (int) (ce - code > 64 ? 64 : ce - code), code,
				 msg ? ": " : "", msg ? (int) (me - msg > 200 ? 200 : me - msg) : 0, msg ? msg : "");
}

static bool
retriable_curl(CURLcode c)
{
	switch (c)
	{
		case CURLE_COULDNT_CONNECT:
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_OPERATION_TIMEDOUT:
		case CURLE_SEND_ERROR:
		case CURLE_RECV_ERROR:
		case CURLE_GOT_NOTHING:
		case CURLE_PARTIAL_FILE:
		case CURLE_HTTP2:
		case CURLE_HTTP2_STREAM:
		case CURLE_SSL_CONNECT_ERROR:
			return true;
		default:
			return false;
	}
}

/* Decide what a finished attempt means: done (rc set) or retry (why set). */
static void
req_finished(s3_req *r, CURLcode cres, lt_error *err)
{
	char		summary[300];
	bool		writes = strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0;

	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &r->status);
	if (g_trace)
	{
		/* the start (ms, within the minute) and the duration show which requests overlapped */
		int64_t		t = now_ms();

		fprintf(stderr, "lt_s3: %s %s", r->method, r->what);
		if (r->ranged)
			fprintf(stderr, " [%llu+%llu]", (unsigned long long) r->range_off, (unsigned long long) r->range_len);
		else if (r->suffix)
			fprintf(stderr, " [last %llu]", (unsigned long long) r->suffix);
		fprintf(stderr, " attempt %d at %05lld ms, %lld ms: curl %d, HTTP %ld\n", r->attempts,
				(long long) (r->started_ms % 60000), (long long) (t - r->started_ms), (int) cres, r->status);
	}
	if (strcmp(r->method, "HEAD") == 0)
	{
		curl_off_t	cl = -1;

		curl_easy_getinfo(r->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
		r->have_length = cl >= 0;
		r->content_length = cl >= 0 ? (uint64_t) cl : 0;
	}
	if (cres != CURLE_OK)
	{
		if (r->overflow && r->suffix)
		{
			r->done = true;
			/* open_with_tail asks with a HEAD instead */
			r->rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: the server ignored the range of a GET", r->what);
			return;
		}
		if (r->overflow)
		{
			r->done = true;
			r->rc = lt_error_set(err, LT_EIO, "%s: %s: the response is larger than expected", r->what, r->method);
			return;
		}
		if (retriable_curl(cres))
		{
			snprintf(r->why, sizeof(r->why), "%.250s", r->curl_err[0] ? r->curl_err : curl_easy_strerror(cres));
			if (writes)
				r->ambiguous = true;
			return;
		}
		r->done = true;
		r->rc = lt_error_set(err, LT_EIO, "%s: %s failed: %s", r->what, r->method,
							 r->curl_err[0] ? r->curl_err : curl_easy_strerror(cres));
		return;
	}
	if (r->status >= 200 && r->status < 300)
	{
		if (r->suffix && r->status == 206 &&
			(!r->have_range || r->range_last + 1 != r->range_total ||
			 r->buf_len != r->range_last - r->range_first + 1))
		{
			snprintf(r->why, sizeof(r->why), "short body or a Content-Range that does not end the object");
			return;
		}
		if (r->dst && r->ranged && r->raw < (r->status == 206 ? r->range_len : r->range_off + r->range_len))
		{
			snprintf(r->why, sizeof(r->why), "short body (%llu of %llu bytes)", (unsigned long long) r->raw,
					 (unsigned long long) r->range_len);
			return;
		}
		r->done = true;
		r->rc = LT_OK;
		return;
	}
	error_summary(r, summary, sizeof(summary));
	if (r->status >= 500 || r->status == 429 || (r->status == 409 && r->conditional))
	{
		/* 409 to a conditional write: another conditional write of the key is in flight */
		snprintf(r->why, sizeof(r->why), "HTTP %ld%.270s", r->status, summary);
		if (writes && r->status >= 500)
			r->ambiguous = true;
		return;
	}
	r->done = true;
	switch (r->status)
	{
		case 404:
			r->rc = lt_error_set(err, LT_ENOTFOUND, "%s: not found (HTTP 404%s)", r->what,
								 summary[0] ? summary : "");
			break;
		case 400:
			/* a session token S3 refuses (malformed, expired): the credentials, not the request */
			if (strncmp(summary, " InvalidToken", 13) != 0 && strncmp(summary, " ExpiredToken", 13) != 0 &&
				strncmp(summary, " TokenRefreshRequired", 21) != 0)
			{
				r->rc = lt_error_set(err, LT_EIO, "%s: %s failed: HTTP %ld%s", r->what, r->method, r->status, summary);
				break;
			}
			/* FALLTHROUGH */
		case 401:
		case 403:
			r->rc = lt_error_set(err, LT_EACCESS, "%s: %s: access denied (HTTP %ld%s); check the credentials of the user mapping",
								 r->what, r->method, r->status, summary[0] ? summary : "");
			break;
		case 412:
			r->rc = lt_error_set(err, LT_ECONFLICT, "%s already exists", r->what);
			break;
		case 416:
			if (r->suffix)
			{
				/* an empty object: no last bytes to give; a HEAD tells */
				r->rc = lt_error_set(err, LT_EUNSUPPORTED, "%s: no range of it can be read", r->what);
				break;
			}
			r->rc = lt_error_set(err, LT_ECORRUPT, "%s: range not satisfiable (the object is shorter than expected)",
								 r->what);
			break;
		default:
			r->rc = lt_error_set(err, LT_EIO, "%s: %s failed: HTTP %ld%s", r->what, r->method, r->status, summary);
			break;
	}
}

/* Backoff before attempt n+1: exponential from 100 ms, capped at 3 s, with equal jitter. */
static int64_t
backoff_ms(int attempts)
{
	int64_t		b = 100;

	for (int i = 1; i < attempts && b < 3000; i++)
		b *= 2;
	if (b > 3000)
		b = 3000;
	return b / 2 + (int64_t) (lt_random_u64() % (uint64_t) (b / 2 + 1));
}

static void
req_detach(s3_req *r)
{
	if (r->easy)
	{
		curl_multi_remove_handle(g_multi, r->easy);
		easy_put(r->easy);
		r->easy = NULL;
	}
	r->running = false;
}

/*
 * Run n requests (urls and bodies set), at most the store's max_parallel at a time, with
 * retries. Returns the first failure (err describes it); keep_going: every request runs to its
 * end regardless (each one's rc is set), else the first failure stops the rest.
 */
static lt_code
run_requests_opt(s3_store *s, s3_req *reqs, int n, bool keep_going, lt_error *err)
{
	lt_code		first = LT_OK;
	int			left = n;
	int			running = 0;
	int64_t		t0 = now_ms();
	lt_error	local;
	lt_error	ignored;

	if (!err)
		err = &ignored;
	LT_TRY(curl_setup(err));
	for (int i = 0; i < n; i++)
	{
		reqs[i].first_ms = t0;
		reqs[i].next_ms = t0;
	}
	while (left > 0)
	{
		int64_t		now = now_ms();
		int64_t		wake = now + POLL_MS;
		int			still;
		CURLMsg    *m;
		int			q;

		/* start what is due */
		for (int i = 0; i < n && running < s->max_parallel; i++)
		{
			s3_req	   *r = &reqs[i];

			if (r->done || r->running)
				continue;
			if (r->next_ms > now)
			{
				if (r->next_ms < wake)
					wake = r->next_ms;
				continue;
			}
			if (req_start(r, &local) != LT_OK)
			{
				r->done = true;
				r->rc = local.code;
				if (first == LT_OK)
				{
					first = r->rc;
					*err = local;
				}
				left--;
				continue;
			}
			running++;
		}
		if (first != LT_OK && !keep_going)
			break;
		curl_multi_perform(g_multi, &still);
		while ((m = curl_multi_info_read(g_multi, &q)) != NULL)
		{
			s3_req	   *r = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **) &r);
			req_finished(r, m->data.result, &local);
			req_detach(r);
			running--;
			if (!r->done)
			{
				int64_t		t = now_ms();
				int64_t		delay = backoff_ms(r->attempts);

				if (r->attempts >= s->max_attempts || t + delay - r->first_ms > s->budget_ms)
				{
					r->done = true;
					r->rc = lt_error_set(&local, LT_EIO, "%s: %s failed after %d attempts in %lld ms: %s",
										 r->what, r->method, r->attempts, (long long) (t - r->first_ms), r->why);
				}
				else
				{
					g_stats.retries++;
					r->next_ms = t + delay;
					continue;
				}
			}
			left--;
			if (r->rc != LT_OK && first == LT_OK)
			{
				first = r->rc;
				*err = local;
			}
		}
		if (first != LT_OK && !keep_going)
			break;
		if (left == 0)
			break;
		if (g_interrupt && g_interrupt())
		{
			first = lt_error_set(err, LT_ECANCELED, "%s: %s canceled", reqs[0].what, reqs[0].method);
			break;
		}
		{
			int64_t		t = now_ms();
			int			timeout = (int) (wake > t ? wake - t : 0);

			if (timeout > POLL_MS)
				timeout = POLL_MS;
			if (running > 0)
				curl_multi_poll(g_multi, NULL, 0, timeout, NULL);
			else if (timeout > 0)
			{
				struct timespec ts = {timeout / 1000, (long) (timeout % 1000) * 1000000L};

				nanosleep(&ts, NULL);
			}
		}
	}
	/* stop whatever still runs (an error or a cancel ended the loop early) */
	for (int i = 0; i < n; i++)
		if (reqs[i].running)
			req_detach(&reqs[i]);
	return first;
}

/*
 * Run n requests (urls and bodies set), at most the store's max_parallel at a time, with retries.
 * Returns the first failure (err describes it); the others still running are stopped.
 */
static lt_code
run_requests(s3_store *s, s3_req *reqs, int n, lt_error *err)
{
	return run_requests_opt(s, reqs, n, false, err);
}

static lt_code
run_one(s3_req *r, lt_error *err)
{
	return run_requests(r->s, r, 1, err);
}

/* ---- reads ------------------------------------------------------------------------------------- */

static lt_code
head_object(s3_store *s, const char *key, uint64_t *size, char *etag, size_t etag_len, lt_error *err)
{
	s3_req		r;
	lt_code		rc;

	req_init(&r, s, "HEAD", key);
	if (!(r.url = object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = run_one(&r, err);
	if (rc == LT_OK && !r.have_length)
		rc = lt_error_set(err, LT_EIO, "%s: HEAD answered no Content-Length", r.what);
	if (rc == LT_OK)
	{
		*size = r.content_length;
		snprintf(etag, etag_len, "%s", r.etag);
	}
	req_free(&r);
	return rc;
}

/* A HEAD, never answered from the cache: callers ask whether an object exists now (a newer manifest). */
static lt_code
s3_stat(lt_store *st, const char *path, lt_stat *out, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	char	   *key = full_key(s, path);
	char		etag[128];
	lt_code		rc;

	if (!key)
		return lt_nomem(err);
	rc = head_object(s, key, &out->size, etag, sizeof(etag), err);
	lt_free(key);
	return rc;
}

/* Files read whole (a manifest, a transaction): the first request asks for up to 1 MiB of them. */
static bool
read_whole_name(const char *key)
{
	size_t		n = strlen(key);

	return (n > 9 && strcmp(key + n - 9, ".manifest") == 0) || (n > 4 && strcmp(key + n - 4, ".txn") == 0);
}

/*
 * A GET of key's last TAIL_PREFETCH bytes (not started; TAIL_KEEP_MAX for files read whole): one request
 * answers its size, etag and tail.
 */
static lt_code
tail_req(s3_req *r, s3_store *s, const char *key, lt_error *err)
{
	req_init(r, s, "GET", key);
	r->suffix = read_whole_name(key) ? TAIL_KEEP_MAX : TAIL_PREFETCH;
	if (!(r->url = object_url(s, key, NULL)))
		return lt_nomem(err);
	return LT_OK;
}

/* What a finished tail_req learnt, into the cache under ckey; LT_EUNSUPPORTED: ask with a HEAD. */
static lt_code
tail_done(s3_req *r, const char *ckey, uint64_t *size, char *etag, size_t etag_len, lt_error *err)
{
	uint64_t	from;

	if (r->status == 206 && r->have_range)
	{
		*size = r->range_total;
		from = r->range_first;
	}
	else if (r->status == 200)
	{
		*size = r->buf_len;	/* the whole object */
		from = 0;
	}
	else
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: GET answered HTTP %ld without a range", r->what, r->status);
	snprintf(etag, etag_len, "%s", r->etag);
	cache_store(ckey, *size, etag, from, r->buf ? r->buf : (const uint8_t *) "");
	return LT_OK;
}

/*
 * Size and etag of key, with one request: the GET of its tail (which the cache keeps for the footer
 * read that follows every open), or a HEAD when the server cannot give a tail (an empty object, a
 * server ignoring ranges).
 */
static lt_code
open_with_tail(s3_store *s, const char *key, const char *ckey, uint64_t *size, char *etag, size_t etag_len,
			   lt_error *err)
{
	s3_req		r;
	lt_code		rc = tail_req(&r, s, key, err);

	if (rc == LT_OK)
		rc = run_one(&r, err);
	if (rc == LT_OK)
		rc = tail_done(&r, ckey, size, etag, etag_len, err);
	req_free(&r);
	if (rc == LT_EUNSUPPORTED)
	{
		rc = head_object(s, key, size, etag, etag_len, err);
		if (rc == LT_OK)
			cache_store(ckey, *size, etag, *size, NULL);
	}
	return rc;
}

static lt_code
s3_open(lt_store *st, const char *path, lt_rfile **out, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	s3_rfile   *f = lt_calloc(1, sizeof(s3_rfile));
	cache_entry *ce;
	uint64_t	size = 0;
	lt_code		rc;

	if (!f)
		return lt_nomem(err);
	f->key = full_key(s, path);
	f->base.path = f->key ? lt_strdup(object_uri(s, f->key)) : NULL;
	f->ckey = f->key ? lt_asprintf("%s\n%s", s->identity, f->key) : NULL;
	if (!f->key || !f->base.path || !f->ckey)
	{
		rc = lt_nomem(err);
		goto fail;
	}
	f->base.store = st;
	ce = cache_find(f->ckey);
	if (ce && immutable_name(f->key))
	{
		g_stats.cache_hits++;
		size = ce->size;
		snprintf(f->etag, sizeof(f->etag), "%s", ce->etag);
	}
	else
	{
		/* a manifest or transaction file is asked for again: the cache replaces what changed */
		rc = open_with_tail(s, f->key, f->ckey, &size, f->etag, sizeof(f->etag), err);
		if (rc != LT_OK)
			goto fail;
		ce = cache_find(f->ckey);
	}
	f->base.size = size;
	f->tail_off = size;
	if (ce && ce->tail && ce->tail_off < size && ce->size == size)
	{
		if (!(f->tail = lt_malloc(size - ce->tail_off)))
		{
			rc = lt_nomem(err);
			goto fail;
		}
		memcpy(f->tail, ce->tail, size - ce->tail_off);
		f->tail_off = ce->tail_off;
	}
	*out = &f->base;
	return LT_OK;
fail:
	lt_free(f->key);
	lt_free(f->ckey);
	lt_free(f->base.path);
	lt_free(f);
	return rc;
}

/*
 * Open the objects at paths ahead of their readers, all at once: the tails of those not cached yet
 * (or not trusted from it) go into the cache, so that the opens that follow cost no request.  Best
 * effort: a failure is left for the real open to report; only a cancel stops it.
 */
static lt_code
s3_prefetch(lt_store *st, int n, const char *const *paths, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	s3_req	   *reqs = lt_calloc(n > 0 ? n : 1, sizeof(s3_req));
	char	  **ckeys = lt_calloc(n > 0 ? n : 1, sizeof(char *));
	int			m = 0;
	lt_error	ignore;
	lt_code		rc = LT_OK;

	if (!reqs || !ckeys)
	{
		lt_free(reqs);
		lt_free(ckeys);
		return LT_OK;
	}
	for (int i = 0; i < n; i++)
	{
		char	   *key = full_key(s, paths[i]);
		char	   *ckey = key ? lt_asprintf("%s\n%s", s->identity, key) : NULL;
		bool		dup = false;

		for (int j = 0; j < m && ckey; j++)
			dup |= strcmp(ckeys[j], ckey) == 0;
		if (!ckey || dup || (cache_find(ckey) && immutable_name(key)) || tail_req(&reqs[m], s, key, &ignore) != LT_OK)
		{
			lt_free(ckey);
			lt_free(key);
			continue;
		}
		lt_free(key);
		ckeys[m++] = ckey;
	}
	if (m > 0)
		rc = run_requests_opt(s, reqs, m, true, &ignore);
	for (int i = 0; i < m; i++)
	{
		uint64_t	size;
		char		etag[128];

		if (reqs[i].done && reqs[i].rc == LT_OK)
			(void) tail_done(&reqs[i], ckeys[i], &size, etag, sizeof(etag), &ignore);
		req_free(&reqs[i]);
		lt_free(ckeys[i]);
	}
	lt_free(reqs);
	lt_free(ckeys);
	if (rc == LT_ECANCELED)
		return lt_error_set(err, LT_ECANCELED, "%s", ignore.msg);
	return LT_OK;
}

/* A ranged GET request for [off, off+len) into dst (not started). */
static lt_code
ranged_req(s3_rfile *f, s3_req *r, uint64_t off, uint64_t len, uint8_t *dst, lt_error *err)
{
	s3_store   *s = (s3_store *) f->base.store;

	req_init(r, s, "GET", f->key);
	r->ranged = true;
	r->range_off = off;
	r->range_len = len;
	r->dst = dst;
	if (!(r->url = object_url(s, f->key, NULL)))
		return lt_nomem(err);
	return LT_OK;
}

static bool
from_tail(s3_rfile *f, uint64_t off, uint64_t len, uint8_t *dst)
{
	if (!f->tail || off < f->tail_off || off + len > f->base.size)
		return false;
	memcpy(dst, f->tail + (off - f->tail_off), len);
	g_stats.cache_hits++;
	return true;
}

/* Fetch [from, size) as the file's tail (kept in the handle and the cache). */
static lt_code
fetch_tail(s3_rfile *f, uint64_t from, lt_error *err)
{
	uint64_t	len = f->base.size - from;
	uint8_t    *buf = lt_malloc(len ? len : 1);
	s3_req		r;
	lt_code		rc;

	if (!buf)
		return lt_nomem(err);
	rc = ranged_req(f, &r, from, len, buf, err);
	if (rc == LT_OK)
		rc = run_one(&r, err);
	req_free(&r);
	if (rc != LT_OK)
	{
		lt_free(buf);
		return rc;
	}
	lt_free(f->tail);
	f->tail = buf;
	f->tail_off = from;
	cache_store(f->ckey, f->base.size, f->etag, from, buf);
	return LT_OK;
}

static lt_code
s3_read(lt_rfile *rf, uint64_t offset, uint64_t length, uint8_t *dst, lt_error *err)
{
	s3_rfile   *f = (s3_rfile *) rf;
	uint64_t	size = rf->size;
	s3_req		r;
	lt_code		rc;

	if (from_tail(f, offset, length, dst))
		return LT_OK;
	/* a read that ends at (or near) the end: a footer and the metadata before it */
	if (offset + length + 4096 >= size && size - offset <= TAIL_KEEP_MAX)
	{
		uint64_t	from = size > TAIL_PREFETCH ? size - TAIL_PREFETCH : 0;

		if (offset < from)
			from = offset;
		LT_TRY(fetch_tail(f, from, err));
		if (from_tail(f, offset, length, dst))
			return LT_OK;
	}
	rc = ranged_req(f, &r, offset, length, dst, err);
	if (rc == LT_OK)
		rc = run_one(&r, err);
	req_free(&r);
	return rc;
}

static lt_code
s3_read_many(lt_rfile *rf, int n, const lt_range *ranges, uint8_t *const *dsts, lt_error *err)
{
	s3_rfile   *f = (s3_rfile *) rf;
	s3_store   *s = (s3_store *) rf->store;
	int			nreq = 0;
	s3_req	   *reqs;
	lt_code		rc = LT_OK;

	for (int i = 0; i < n; i++)
		nreq += (int) ((ranges[i].length + PART_SIZE - 1) / PART_SIZE);
	reqs = lt_calloc(nreq ? nreq : 1, sizeof(s3_req));
	if (!reqs)
		return lt_nomem(err);
	nreq = 0;
	for (int i = 0; i < n && rc == LT_OK; i++)
	{
		if (from_tail(f, ranges[i].offset, ranges[i].length, dsts[i]))
			continue;
		for (uint64_t at = 0; at < ranges[i].length && rc == LT_OK; at += PART_SIZE)
		{
			uint64_t	len = ranges[i].length - at < PART_SIZE ? ranges[i].length - at : PART_SIZE;

			rc = ranged_req(f, &reqs[nreq++], ranges[i].offset + at, len, dsts[i] + at, err);
		}
	}
	if (rc == LT_OK && nreq > 0)
		rc = run_requests(s, reqs, nreq, err);
	for (int i = 0; i < nreq; i++)
		req_free(&reqs[i]);
	lt_free(reqs);
	return rc;
}

static void
s3_close(lt_rfile *rf)
{
	s3_rfile   *f = (s3_rfile *) rf;

	lt_free(f->tail);
	lt_free(f->key);
	lt_free(f->ckey);
	lt_free(rf->path);
	lt_free(f);
}

/* ---- listing ----------------------------------------------------------------------------------- */

/* "2026-12-01T10:19:10.000Z" -> ms since the epoch; 0 when it does not parse (unknown: treated as new) */
static int64_t
parse_iso8601_ms(const char *a, const char *b)
{
	char		buf[40];
	struct tm	tm = {0};
	int			ms = 0;
	size_t		n = (size_t) (b - a);

	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, a, n);
	buf[n] = '\0';
	if (sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			   &tm.tm_sec, &ms) < 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t) timegm(&tm) * 1000 + ms;
}

static int
cmp_query(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static lt_code
s3_list(lt_store *st, const char *dir, const lt_list_opts *opts, lt_list_cb cb, void *arg, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	char	   *base = full_key(s, dir);
	char	   *lprefix;
	char	   *token = NULL;
	lt_code		rc = LT_OK;
	bool		any = false;
	bool		stop = false;

	if (!base)
		return lt_nomem(err);
	lprefix = base[0] ? lt_asprintf("%s/", base) : lt_strdup("");
	lt_free(base);
	if (!lprefix)
		return lt_nomem(err);
	while (rc == LT_OK && !stop)
	{
		char	   *params[6];
		int			np = 0;
		char	   *ep = uri_encode(lprefix, false);
		char	   *et = token ? uri_encode(token, false) : NULL;
		int			max_keys = opts && opts->page_size > 0 ? opts->page_size : s->list_max_keys;
		char	   *query;
		s3_req		r;
		const char *p,
				   *end,
				   *ve;

		if (!ep || (token && !et))
		{
			lt_free(ep);
			lt_free(et);
			rc = lt_nomem(err);
			break;
		}
		params[np++] = lt_strdup("list-type=2");
		params[np++] = lt_strdup("delimiter=%2F");
		params[np++] = lt_asprintf("prefix=%s", ep);
		if (et)
			params[np++] = lt_asprintf("continuation-token=%s", et);
		else if (opts && opts->start_after)
		{
			/* the first page only: a continuation token already lies past it */
			char	   *sa = lt_asprintf("%s%s", lprefix, opts->start_after);
			char	   *esa = sa ? uri_encode(sa, false) : NULL;

			params[np++] = esa ? lt_asprintf("start-after=%s", esa) : NULL;
			lt_free(sa);
			lt_free(esa);
		}
		if (max_keys)
			params[np++] = lt_asprintf("max-keys=%d", max_keys);
		lt_free(ep);
		lt_free(et);
		query = NULL;
		for (int i = 0; i < np; i++)
			if (!params[i])
				query = (char *) "";
		if (!query)
		{
			/* the canonical query: parameters sorted by name (curl 7.88 signs the query as given) */
			size_t		qlen = 0;

			qsort(params, np, sizeof(char *), cmp_query);
			for (int i = 0; i < np; i++)
				qlen += strlen(params[i]) + 1;
			if ((query = lt_malloc(qlen)) != NULL)
			{
				query[0] = '\0';
				for (int i = 0; i < np; i++)
				{
					if (i > 0)
						strcat(query, "&");
					strcat(query, params[i]);
				}
			}
		}
		else
			query = NULL;
		for (int i = 0; i < np; i++)
			lt_free(params[i]);
		req_init(&r, s, "GET", lprefix);
		snprintf(r.what, sizeof(r.what), "s3://%s/%s", s->bucket, lprefix);
		/* the bucket's URL: "/bucket" in path style (no trailing slash: that is another canonical URI) */
		r.url = query ? lt_asprintf("%s%s?%s", s->origin, s->bucket_path[0] ? s->bucket_path : "/", query) : NULL;
		lt_free(query);
		if (!r.url)
		{
			rc = lt_nomem(err);
			break;
		}
		if (strcmp(r.what + strlen(r.what) - 1, "/") != 0)
			strncat(r.what, "/", sizeof(r.what) - strlen(r.what) - 1);
		rc = run_one(&r, err);
		if (rc == LT_OK)
		{
			size_t		pl = strlen(lprefix);

			p = r.buf ? (const char *) r.buf : "";
			end = p + r.buf_len;
			/* objects */
			for (const char *c = p; !stop && (c = xml_find(c, end, "Contents", &ve)) != NULL; c = ve)
			{
				const char *ke,
						   *se,
						   *me;
				const char *k = xml_find(c, ve, "Key", &ke);
				const char *sz = xml_find(c, ve, "Size", &se);
				const char *mt = xml_find(c, ve, "LastModified", &me);
				char	   *name = k ? xml_text(k, ke) : NULL;

				if (!name)
				{
					rc = k ? lt_nomem(err) : lt_error_set(err, LT_EIO, "%s: a listing entry has no key", r.what);
					stop = true;
					break;
				}
				if (strncmp(name, lprefix, pl) == 0 && name[pl] && !strchr(name + pl, '/'))
				{
					lt_dirent	ent = {name + pl, false, sz ? strtoull(sz, NULL, 10) : 0, mt ? parse_iso8601_ms(mt, me) : 0};

					any = true;
					if (cb(&ent, arg))
						stop = true;
				}
				lt_free(name);
			}
			/* "directories" */
			for (const char *c = p; !stop && (c = xml_find(c, end, "CommonPrefixes", &ve)) != NULL; c = ve)
			{
				const char *pe;
				const char *pp = xml_find(c, ve, "Prefix", &pe);
				char	   *name = pp ? xml_text(pp, pe) : NULL;
				size_t		nl;

				if (!name)
					continue;
				nl = strlen(name);
				if (nl > pl && strncmp(name, lprefix, pl) == 0 && name[nl - 1] == '/')
				{
					lt_dirent	ent = {name + pl, true, 0};

					name[nl - 1] = '\0';
					any = true;
					if (cb(&ent, arg))
						stop = true;
				}
				lt_free(name);
			}
			if (rc == LT_OK && !stop)
			{
				const char *te;
				const char *t = xml_find(p, end, "IsTruncated", &te);

				lt_free(token);
				token = NULL;
				if (t && te - t == 4 && memcmp(t, "true", 4) == 0)
				{
					const char *ne;
					const char *nt = xml_find(p, end, "NextContinuationToken", &ne);

					if (!nt)
						rc = lt_error_set(err, LT_EIO, "%s: a truncated listing has no continuation token", r.what);
					else if (!(token = xml_text(nt, ne)))
						rc = lt_nomem(err);
				}
				else
					stop = true;
			}
		}
		req_free(&r);
	}
	lt_free(token);
	if (rc == LT_OK && !any)
		rc = lt_error_set(err, LT_ENOTFOUND, "s3://%s/%s: no objects under this prefix", s->bucket, lprefix);
	lt_free(lprefix);
	return rc;
}

/* ---- writes ------------------------------------------------------------------------------------ */

static lt_code
put_object(s3_store *s, const char *key, const uint8_t *data, uint64_t len, bool conditional, bool *ambiguous,
		   lt_error *err);
static lt_code
get_object(s3_store *s, const char *key, uint8_t **out, size_t *out_len, lt_error *err);

static lt_code
put_object(s3_store *s, const char *key, const uint8_t *data, uint64_t len, bool conditional, bool *ambiguous,
		   lt_error *err)
{
	s3_req		r;
	lt_code		rc;

	req_init(&r, s, "PUT", key);
	r.conditional = conditional;
	r.body = data;
	r.body_len = len;
	if (!(r.url = object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = run_one(&r, err);
	if (ambiguous)
		*ambiguous = r.ambiguous;
	req_free(&r);
	return rc;
}

/* Whole object into a fresh buffer (bounded by MAX_SMALL_BODY). */
static lt_code
get_object(s3_store *s, const char *key, uint8_t **out, size_t *out_len, lt_error *err)
{
	s3_req		r;
	lt_code		rc;

	req_init(&r, s, "GET", key);
	if (!(r.url = object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = run_one(&r, err);
	if (rc == LT_OK)
	{
		*out = r.buf;
		*out_len = r.buf_len;
		r.buf = NULL;
	}
	req_free(&r);
	return rc;
}

static lt_code
delete_object(s3_store *s, const char *key, lt_error *err)
{
	s3_req		r;
	lt_code		rc;

	req_init(&r, s, "DELETE", key);
	if (!(r.url = object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = run_one(&r, err);
	req_free(&r);
	return rc;
}

static void
forget_key(s3_store *s, const char *key)
{
	char	   *ck = lt_asprintf("%s\n%s", s->identity, key);

	if (ck)
		cache_forget(ck);
	lt_free(ck);
}

/* Does the object hold exactly data? (read back) */
static lt_code
holds(s3_store *s, const char *key, const uint8_t *data, uint64_t len, bool *same, lt_error *err)
{
	uint8_t    *buf = NULL;
	size_t		blen = 0;
	lt_code		rc = get_object(s, key, &buf, &blen, err);

	if (rc == LT_OK)
		*same = blen == len && (len == 0 || memcmp(buf, data, len) == 0);
	lt_free(buf);
	return rc;
}

/*
 * PUT with If-None-Match: *.  A 412 is checked against the object's bytes: the request may have
 * been sent twice (our retry after a lost response, or libcurl's own retry on a reused connection
 * that died), the first copy creating the object; it is ours if it holds our bytes.
 */
static lt_code
conditional_put(s3_store *s, const char *key, const uint8_t *data, uint64_t len, lt_error *err)
{
	lt_code		rc = put_object(s, key, data, len, true, NULL, err);
	bool		same = false;
	lt_error	e2;

	if (rc == LT_ECONFLICT && holds(s, key, data, len, &same, &e2) == LT_OK && same)
		rc = LT_OK;
	return rc;
}

static lt_code
s3_put(lt_store *st, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	char	   *key = full_key(s, path);
	lt_code		rc;

	if (!key)
		return lt_nomem(err);
	forget_key(s, key);
	rc = put_object(s, key, data, len, false, NULL, err);
	lt_free(key);
	return rc;
}

/* Check once per endpoint and bucket that a conditional create of an existing key fails. */
static lt_code
probe_conditional(s3_store *s, lt_error *err)
{
	char		uuid[37];
	char	   *key;
	lt_code		rc;
	bool		honoured = false;
	probe_result *p;

	for (p = g_probes; p; p = p->next)
		if (strcmp(p->where, s->probe_where) == 0)
			break;
	if (!p)
	{
		/*
		 * Two tries before concluding that the condition is ignored: a store that ignores it does so
		 * every time, while one lost answer or a slow server must not stop every commit of a backend.
		 */
		rc = LT_OK;
		for (int attempt = 0; attempt < 2 && !honoured && rc == LT_OK; attempt++)
		{
			uint8_t		b[16];

			lt_uuid_v4(b, uuid);
			key = s->prefix[0] ? lt_asprintf("%s/_lt_probe/%s", s->prefix, uuid) : lt_asprintf("_lt_probe/%s", uuid);
			if (!key)
				return lt_nomem(err);
			rc = conditional_put(s, key, (const uint8_t *) "1", 1, err);
			if (rc == LT_OK)
			{
				rc = put_object(s, key, (const uint8_t *) "2", 1, true, NULL, err);
				if (rc == LT_ECONFLICT)
					honoured = true;
				if (rc == LT_ECONFLICT || rc == LT_OK)
					rc = LT_OK;
				(void) delete_object(s, key, NULL);
			}
			lt_free(key);
		}
		if (rc != LT_OK)
			return lt_error_prefix(err, "checking that the store honours conditional writes");
		if (!(p = calloc(1, sizeof(probe_result))) || !(p->where = strdup(s->probe_where)))
		{
			free(p);
			return lt_nomem(err);
		}
		p->honoured = honoured;
		p->next = g_probes;
		g_probes = p;
	}
	if (!p->honoured)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"s3://%s: the store does not honour conditional writes (If-None-Match: *): an existing object was overwritten; committing there could silently lose commits",
							s->bucket);
	return LT_OK;
}

static lt_code
s3_put_if_absent(lt_store *st, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	char	   *key = full_key(s, path);
	bool		same = false;
	lt_code		rc;

	if (!key)
		return lt_nomem(err);
	rc = probe_conditional(s, err);
	if (rc == LT_OK)
	{
		forget_key(s, key);
		rc = conditional_put(s, key, data, len, err);
	}
	/* read back: a store that ignored the condition may have replaced our object (or we another's) */
	if (rc == LT_OK)
	{
		rc = holds(s, key, data, len, &same, err);
		if (rc == LT_OK && !same)
			rc = lt_error_set(err, LT_EIO,
							  "%s was overwritten right after it was created: the store does not honour conditional writes, a commit may have been lost",
							  object_uri(s, key));
	}
	lt_free(key);
	return rc;
}

static lt_code
s3_remove(lt_store *st, const char *path, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	char	   *key = full_key(s, path);
	lt_code		rc;

	if (!key)
		return lt_nomem(err);
	forget_key(s, key);
	rc = delete_object(s, key, err);
	lt_free(key);
	return rc;
}

/* ---- streaming writes -------------------------------------------------------------------------- */

typedef struct s3_wfile
{
	lt_wfile	base;
	char	   *key;
	uint8_t    *buf;				/* PART_SIZE bytes */
	uint64_t	buf_len;
	char	   *upload_id;			/* multipart upload, once the first part is full */
	int			n_parts;
	char	  **etags;
	int			cap_parts;
} s3_wfile;

static void
wfile_free(s3_wfile *f)
{
	for (int i = 0; i < f->n_parts; i++)
		lt_free(f->etags[i]);
	lt_free(f->etags);
	lt_free(f->upload_id);
	lt_free(f->buf);
	lt_free(f->key);
	lt_free(f->base.path);
	lt_free(f);
}

static lt_code
s3_create(lt_store *st, const char *path, lt_wfile **out, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	s3_wfile   *f = lt_calloc(1, sizeof(s3_wfile));

	if (!f)
		return lt_nomem(err);
	f->base.store = st;
	f->base.path = lt_strdup(path);
	f->key = full_key(s, path);
	f->buf = lt_malloc(PART_SIZE);
	if (!f->base.path || !f->key || !f->buf)
	{
		wfile_free(f);
		return lt_nomem(err);
	}
	*out = &f->base;
	return LT_OK;
}

static lt_code
start_upload(s3_wfile *f, lt_error *err)
{
	s3_store   *s = (s3_store *) f->base.store;
	s3_req		r;
	lt_code		rc;
	const char *ve;
	const char *v;

	req_init(&r, s, "POST", f->key);
	if (!(r.url = object_url(s, f->key, "uploads=")))
		return lt_nomem(err);
	rc = run_one(&r, err);
	if (rc == LT_OK)
	{
		v = r.buf ? xml_find((const char *) r.buf, (const char *) r.buf + r.buf_len, "UploadId", &ve) : NULL;
		if (!v)
			rc = lt_error_set(err, LT_EIO, "%s: the multipart upload has no UploadId", r.what);
		else if (!(f->upload_id = xml_text(v, ve)))
			rc = lt_nomem(err);
	}
	req_free(&r);
	return rc;
}

static lt_code
upload_part(s3_wfile *f, lt_error *err)
{
	s3_store   *s = (s3_store *) f->base.store;
	s3_req		r;
	lt_code		rc;
	char	   *eid;
	char	   *query;

	if (!f->upload_id)
		LT_TRY(start_upload(f, err));
	if (f->n_parts == f->cap_parts)
	{
		int			cap = f->cap_parts ? f->cap_parts * 2 : 16;
		char	  **n = lt_realloc(f->etags, (size_t) cap * sizeof(char *));

		if (!n)
			return lt_nomem(err);
		f->etags = n;
		f->cap_parts = cap;
	}
	if (!(eid = uri_encode(f->upload_id, false)))
		return lt_nomem(err);
	query = lt_asprintf("partNumber=%d&uploadId=%s", f->n_parts + 1, eid);
	lt_free(eid);
	req_init(&r, s, "PUT", f->key);
	r.body = f->buf;
	r.body_len = f->buf_len;
	r.url = query ? object_url(s, f->key, query) : NULL;
	lt_free(query);
	if (!r.url)
		return lt_nomem(err);
	rc = run_one(&r, err);
	if (rc == LT_OK && !r.etag[0])
		rc = lt_error_set(err, LT_EIO, "%s: part %d was stored without an ETag", r.what, f->n_parts + 1);
	if (rc == LT_OK && !(f->etags[f->n_parts] = lt_strdup(r.etag)))
		rc = lt_nomem(err);
	if (rc == LT_OK)
	{
		f->n_parts++;
		f->buf_len = 0;
	}
	req_free(&r);
	return rc;
}

static lt_code
s3_write(lt_wfile *wf, const uint8_t *data, uint64_t len, lt_error *err)
{
	s3_wfile   *f = (s3_wfile *) wf;

	while (len > 0)
	{
		uint64_t	n = PART_SIZE - f->buf_len < len ? PART_SIZE - f->buf_len : len;

		memcpy(f->buf + f->buf_len, data, n);
		f->buf_len += n;
		data += n;
		len -= n;
		if (f->buf_len == PART_SIZE && len > 0)
			LT_TRY(upload_part(f, err));
	}
	return LT_OK;
}

static void
abort_upload(s3_wfile *f)
{
	s3_store   *s = (s3_store *) f->base.store;
	char	   *eid = uri_encode(f->upload_id, false);
	char	   *query = eid ? lt_asprintf("uploadId=%s", eid) : NULL;
	s3_req		r;

	lt_free(eid);
	req_init(&r, s, "DELETE", f->key);
	r.url = query ? object_url(s, f->key, query) : NULL;
	lt_free(query);
	if (r.url)
		(void) run_one(&r, NULL);
	req_free(&r);
}

static lt_code
complete_upload(s3_wfile *f, lt_error *err)
{
	s3_store   *s = (s3_store *) f->base.store;
	size_t		cap = 128 + (size_t) f->n_parts * 200;
	char	   *xml = lt_malloc(cap);
	size_t		at = 0;
	char	   *eid;
	char	   *query;
	s3_req		r;
	lt_code		rc;

	if (!xml)
		return lt_nomem(err);
	at += (size_t) snprintf(xml + at, cap - at, "<CompleteMultipartUpload>");
	for (int i = 0; i < f->n_parts; i++)
		at += (size_t) snprintf(xml + at, cap - at, "<Part><PartNumber>%d</PartNumber><ETag>%.128s</ETag></Part>",
								i + 1, f->etags[i]);
	at += (size_t) snprintf(xml + at, cap - at, "</CompleteMultipartUpload>");
	eid = uri_encode(f->upload_id, false);
	query = eid ? lt_asprintf("uploadId=%s", eid) : NULL;
	lt_free(eid);
	req_init(&r, s, "POST", f->key);
	r.body = (const uint8_t *) xml;
	r.body_len = at;
	r.url = query ? object_url(s, f->key, query) : NULL;
	lt_free(query);
	if (!r.url)
	{
		lt_free(xml);
		return lt_nomem(err);
	}
	rc = run_one(&r, err);
	/* S3 may answer 200 with an error document */
	if (rc == LT_OK && r.buf && strstr((const char *) r.buf, "<Error>"))
	{
		char		summary[300];

		error_summary(&r, summary, sizeof(summary));
		rc = lt_error_set(err, LT_EIO, "%s: completing the multipart upload failed:%s", r.what, summary);
	}
	req_free(&r);
	lt_free(xml);
	return rc;
}

static lt_code
s3_finish(lt_wfile *wf, lt_error *err)
{
	s3_wfile   *f = (s3_wfile *) wf;
	s3_store   *s = (s3_store *) wf->store;
	lt_code		rc;

	forget_key(s, f->key);
	if (!f->upload_id && f->n_parts == 0)
		rc = conditional_put(s, f->key, f->buf, f->buf_len, err);
	else
	{
		rc = f->buf_len > 0 ? upload_part(f, err) : LT_OK;
		if (rc == LT_OK)
			rc = complete_upload(f, err);
		if (rc != LT_OK)
			abort_upload(f);
	}
	wfile_free(f);
	return rc;
}

static void
s3_abort(lt_wfile *wf)
{
	s3_wfile   *f = (s3_wfile *) wf;

	if (f->upload_id)
		abort_upload(f);
	wfile_free(f);
}

static void
s3_destroy(lt_store *st)
{
	s3_store   *s = (s3_store *) st;

	lt_free(s->bucket);
	lt_free(s->prefix);
	lt_free(s->origin);
	lt_free(s->bucket_path);
	lt_free(s->sigv4);
	if (s->userpwd)
		memset(s->userpwd, 0, strlen(s->userpwd));
	lt_free(s->userpwd);
	if (s->token_header)
		memset(s->token_header, 0, strlen(s->token_header));
	lt_free(s->token_header);
	if (s->identity)
		memset(s->identity, 0, strlen(s->identity));
	lt_free(s->identity);
	lt_free(s->probe_where);
	lt_free(s->base.root);
	lt_free(s);
}

static const lt_store_ops s3_ops = {
	.open = s3_open,
	.read = s3_read,
	.close = s3_close,
	.list = s3_list,
	.stat = s3_stat,
	.prefetch = s3_prefetch,
	.put = s3_put,				/* durable once answered: no put_unsynced */
	.put_if_absent = s3_put_if_absent,
	.remove = s3_remove,
	.destroy = s3_destroy,
	.create = s3_create,
	.write = s3_write,
	.finish = s3_finish,
	.abort = s3_abort,
	.read_many = s3_read_many
};

/* ---- opening ----------------------------------------------------------------------------------- */

lt_code
lt_s3_parse_uri(const char *uri, char **bucket, char **prefix, lt_error *err)
{
	const char *p;
	const char *slash;
	size_t		n;

	*bucket = *prefix = NULL;
	if (strncmp(uri, "s3://", 5) == 0)
		p = uri + 5;
	else if (strncmp(uri, "s3a://", 6) == 0)
		p = uri + 6;
	else
		return lt_error_set(err, LT_EINVALID, "%s: not an s3:// URI", uri);
	slash = strchr(p, '/');
	n = slash ? (size_t) (slash - p) : strlen(p);
	if (n < 3 || n > 63)
		return lt_error_set(err, LT_EINVALID, "%s: the bucket name must be 3 to 63 characters", uri);
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '-' || p[i] == '.'))
			return lt_error_set(err, LT_EINVALID, "%s: a bucket name has only lowercase letters, digits, '-' and '.'",
								uri);
	if (!(*bucket = lt_malloc(n + 1)))
		return lt_nomem(err);
	memcpy(*bucket, p, n);
	(*bucket)[n] = '\0';
	p += n;
	while (*p == '/')
		p++;
	if (!(*prefix = lt_strdup(p)))
	{
		lt_free(*bucket);
		*bucket = NULL;
		return lt_nomem(err);
	}
	n = strlen(*prefix);
	while (n > 0 && (*prefix)[n - 1] == '/')
		(*prefix)[--n] = '\0';
	if (strstr(*prefix, "//") || strcmp(*prefix, "..") == 0 || strncmp(*prefix, "../", 3) == 0 ||
		strstr(*prefix, "/../") || (n >= 3 && strcmp(*prefix + n - 3, "/..") == 0))
	{
		lt_free(*bucket);
		lt_free(*prefix);
		*bucket = *prefix = NULL;
		return lt_error_set(err, LT_EINVALID, "%s: empty or \"..\" segments in the key prefix", uri);
	}
	return LT_OK;
}

lt_code
lt_store_s3_open(const lt_s3_config *cfg, lt_store **out, lt_error *err)
{
	s3_store   *s;
	const char *region = cfg->region && cfg->region[0] ? cfg->region : "us-east-1";
	const char *scheme_end;
	char	   *hostport = NULL;
	bool		http;

	*out = NULL;
	if (!cfg->bucket || !cfg->bucket[0])
		return lt_error_set(err, LT_EINVALID, "S3 store: no bucket");
	for (const char *c = region; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
			return lt_error_set(err, LT_EINVALID, "S3 store: invalid region \"%s\"", region);
	if (cfg->endpoint && cfg->endpoint[0])
	{
		size_t		n;

		scheme_end = strstr(cfg->endpoint, "://");
		if (!scheme_end || (strncmp(cfg->endpoint, "https://", 8) != 0 && strncmp(cfg->endpoint, "http://", 7) != 0))
			return lt_error_set(err, LT_EINVALID, "S3 endpoint \"%s\" is not an http:// or https:// URL", cfg->endpoint);
		http = cfg->endpoint[4] == ':';
		if (http && !cfg->allow_http)
			return lt_error_set(err, LT_EINVALID, "S3 endpoint \"%s\" is plain http, which needs allow_http 'true'",
								cfg->endpoint);
		hostport = lt_strdup(scheme_end + 3);
		if (!hostport)
			return lt_nomem(err);
		n = strlen(hostport);
		while (n > 0 && hostport[n - 1] == '/')
			hostport[--n] = '\0';
		if (n == 0 || strpbrk(hostport, "/?#@ "))
		{
			lt_free(hostport);
			return lt_error_set(err, LT_EINVALID, "S3 endpoint \"%s\" must be scheme://host[:port] with no path",
								cfg->endpoint);
		}
	}
	else
	{
		http = false;
		hostport = lt_asprintf("s3.%s.amazonaws.com", region);
		if (!hostport)
			return lt_nomem(err);
	}
	s = lt_calloc(1, sizeof(s3_store));
	if (!s)
	{
		lt_free(hostport);
		return lt_nomem(err);
	}
	s->base.ops = &s3_ops;
	s->base.coalesce_gap = 1024 * 1024;	/* one request costs more than reading 1 MiB more */
	s->base.list_ordered = true;		/* ListObjectsV2 returns keys in UTF-8 binary order */
	s->bucket = lt_strdup(cfg->bucket);
	s->prefix = lt_strdup(cfg->prefix ? cfg->prefix : "");
	s->https_only = !http;
	if (cfg->path_style)
	{
		s->origin = lt_asprintf("%s://%s", http ? "http" : "https", hostport);
		s->bucket_path = lt_asprintf("/%s", cfg->bucket);
	}
	else
	{
		s->origin = lt_asprintf("%s://%s.%s", http ? "http" : "https", cfg->bucket, hostport);
		s->bucket_path = lt_strdup("");
	}
	if (cfg->access_key_id && cfg->access_key_id[0])
	{
		s->sigv4 = lt_asprintf("aws:amz:%s:s3", region);
		s->userpwd = lt_asprintf("%s:%s", cfg->access_key_id, cfg->secret_access_key ? cfg->secret_access_key : "");
		if (cfg->session_token && cfg->session_token[0])
			s->token_header = lt_asprintf("x-amz-security-token: %s", cfg->session_token);
	}
	s->identity = lt_asprintf("%s%s\n%s\n%s\n%s", s->origin ? s->origin : "", s->bucket_path ? s->bucket_path : "",
							  cfg->access_key_id ? cfg->access_key_id : "",
							  cfg->secret_access_key ? cfg->secret_access_key : "",
							  cfg->session_token ? cfg->session_token : "");
	s->probe_where = lt_asprintf("%s%s", s->origin ? s->origin : "", s->bucket_path ? s->bucket_path : "");
	s->base.root = s->prefix && s->prefix[0] ? lt_asprintf("s3://%s/%s", cfg->bucket, s->prefix)
		: lt_asprintf("s3://%s", cfg->bucket);
	s->max_attempts = cfg->max_attempts > 0 ? cfg->max_attempts : 8;
	s->budget_ms = cfg->retry_budget_ms > 0 ? cfg->retry_budget_ms : 30000;
	s->max_parallel = cfg->max_parallel > 0 ? cfg->max_parallel : 8;
	s->list_max_keys = cfg->list_max_keys > 0 ? cfg->list_max_keys : 0;
	lt_free(hostport);
	if (!s->bucket || !s->prefix || !s->origin || !s->bucket_path || !s->identity || !s->probe_where || !s->base.root ||
		(cfg->access_key_id && cfg->access_key_id[0] && (!s->sigv4 || !s->userpwd)) ||
		(cfg->session_token && cfg->session_token[0] && !s->token_header))
	{
		s3_destroy(&s->base);
		return lt_nomem(err);
	}
	if (curl_setup(err) != LT_OK)
	{
		s3_destroy(&s->base);
		return err ? err->code : LT_EIO;
	}
	*out = &s->base;
	return LT_OK;
}

/* ---- command-line tools ------------------------------------------------------------------------ */

lt_code
lt_store_open_location(const char *location, lt_store **out, lt_error *err)
{
	lt_s3_config cfg = {0};
	char	   *bucket = NULL;
	char	   *prefix = NULL;
	const char *ps = getenv("LT_S3_PATH_STYLE");
	lt_code		rc;

	if (strncmp(location, "s3://", 5) != 0 && strncmp(location, "s3a://", 6) != 0)
		return lt_store_local_open(location, out, err);
	LT_TRY(lt_s3_parse_uri(location, &bucket, &prefix, err));
	cfg.bucket = bucket;
	cfg.prefix = prefix;
	cfg.endpoint = getenv("LT_S3_ENDPOINT") ? getenv("LT_S3_ENDPOINT") : getenv("AWS_ENDPOINT_URL");
	cfg.region = getenv("AWS_REGION");
	cfg.path_style = cfg.endpoint != NULL && !(ps && strcmp(ps, "0") == 0);
	cfg.allow_http = cfg.endpoint != NULL && strncmp(cfg.endpoint, "http://", 7) == 0;
	cfg.access_key_id = getenv("AWS_ACCESS_KEY_ID");
	cfg.secret_access_key = getenv("AWS_SECRET_ACCESS_KEY");
	cfg.session_token = getenv("AWS_SESSION_TOKEN");
	rc = lt_store_s3_open(&cfg, out, err);
	lt_free(bucket);
	lt_free(prefix);
	return rc;
}
