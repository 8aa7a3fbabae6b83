/*
 * lt_store_s3_request.c — the S3 store's request engine (lt_store_s3.c's header says how requests run,
 * retry and are signed), with what every request shares: the process-wide curl state, the metadata
 * cache of objects and the per-bucket results of the conditional-PUT probe.
 */
#include "io/lt_store_s3_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"

/* ---- process-wide state ------------------------------------------------------------------------ */

static CURLM *g_multi;
static CURL *g_idle[16];
static int	g_n_idle;
lt_s3_stats lt_s3_g_stats;
static bool g_trace;			/* LT_S3_TRACE=1: one line per attempt on stderr (no headers, no secrets) */

void
lt_s3_get_stats(lt_s3_stats *out)
{
	*out = lt_s3_g_stats;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

lt_code
lt_s3_curl_setup(lt_error *err)
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

cache_entry *
lt_s3_cache_find(const char *key)
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

void
lt_s3_cache_forget(const char *key)
{
	cache_entry *e = lt_s3_cache_find(key);

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
void
lt_s3_cache_store(const char *key, uint64_t size, const char *etag, uint64_t tail_off, const uint8_t *tail)
{
	cache_entry *e = lt_s3_cache_find(key);

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
bool
lt_s3_immutable_name(const char *key)
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


probe_result *lt_s3_g_probes;

void
lt_s3_cache_clear(void)
{
	while (c_head)
		cache_drop(c_head);
	while (lt_s3_g_probes)
	{
		probe_result *p = lt_s3_g_probes;

		lt_s3_g_probes = p->next;
		free(p->where);
		free(p);
	}
}

/* ---- the store --------------------------------------------------------------------------------- */



/* "s3://bucket/key" of a key, for messages (static buffer: one message at a time) */
const char *
lt_s3_object_uri(s3_store *s, const char *key)
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
char *
lt_s3_uri_encode(const char *src, bool keep_slash)
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
char *
lt_s3_full_key(s3_store *s, const char *path)
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
char *
lt_s3_object_url(s3_store *s, const char *key, const char *query)
{
	char	   *ek = lt_s3_uri_encode(key, true);
	char	   *url;

	if (!ek)
		return NULL;
	url = lt_asprintf("%s%s/%s%s%s", s->origin, s->bucket_path, ek, query ? "?" : "", query ? query : "");
	lt_free(ek);
	return url;
}

/* ---- one request ------------------------------------------------------------------------------- */


void
lt_s3_req_init(s3_req *r, s3_store *s, const char *method, const char *key)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->method = method;
	snprintf(r->what, sizeof(r->what), "s3://%s/%s", s->bucket, key);
}

void
lt_s3_req_free(s3_req *r)
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
	lt_s3_g_stats.bytes_in += n;
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
		lt_s3_g_stats.bytes_out += r->body_len;
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
	lt_s3_g_stats.requests++;
	return LT_OK;
}

/* The text of an XML element (first occurrence of <tag> in [p, end)), entities kept; NULL if absent. */
const char *
lt_s3_xml_find(const char *p, const char *end, const char *tag, const char **vend)
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
char *
lt_s3_xml_text(const char *a, const char *b)
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
void
lt_s3_error_summary(const s3_req *r, char *out, size_t outlen)
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
	code = lt_s3_xml_find((const char *) r->buf, end, "Code", &ce);
	msg = lt_s3_xml_find((const char *) r->buf, end, "Message", &me);
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
	lt_s3_error_summary(r, summary, sizeof(summary));
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
lt_code
lt_s3_run_requests_opt(s3_store *s, s3_req *reqs, int n, bool keep_going, lt_error *err)
{
	lt_code		first = LT_OK;
	int			left = n;
	int			running = 0;
	int64_t		t0 = now_ms();
	lt_error	local;
	lt_error	ignored;

	if (!err)
		err = &ignored;
	LT_TRY(lt_s3_curl_setup(err));
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
					lt_s3_g_stats.retries++;
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
		if (lt_check_interrupt(NULL, "") != LT_OK)
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
lt_code
lt_s3_run_requests(s3_store *s, s3_req *reqs, int n, lt_error *err)
{
	return lt_s3_run_requests_opt(s, reqs, n, false, err);
}

lt_code
lt_s3_run_one(s3_req *r, lt_error *err)
{
	return lt_s3_run_requests(r->s, r, 1, err);
}
