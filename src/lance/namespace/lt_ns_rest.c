/*
 * lt_ns_rest.c — requests to a Lance REST namespace (lt_namespace.h).  The caller builds and reads the JSON.
 */
#include "namespace/lt_namespace.h"

#include <curl/curl.h>
#include <string.h>
#include <time.h>

#include "util/lt_alloc.h"

#define REST_MAX_BODY	((size_t) 16 << 20)
#define REST_ATTEMPTS	3

typedef struct rest_buf
{
	char	   *data;
	size_t		len,
				cap;
	bool		too_big;
	bool		oom;
} rest_buf;

static size_t
on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	rest_buf   *b = arg;
	size_t		n = size * nmemb;

	if (b->len + n + 1 > REST_MAX_BODY)
	{
		b->too_big = true;
		return 0;
	}
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap : 4096;
		char	   *d;

		while (cap < b->len + n + 1)
			cap *= 2;
		if ((d = lt_realloc(b->data, cap)) == NULL)
		{
			b->oom = true;
			return 0;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* libcurl's progress callback: a pending cancel stops the transfer. */
static int
on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	lt_error	e;

	(void) arg;
	(void) dt;
	(void) dn;
	(void) ut;
	(void) un;
	return lt_check_interrupt(&e, "a namespace request") != LT_OK;
}

char *
lt_ns_rest_route_id(const char *id)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t		n = strlen(id);
	char	   *out;
	char	   *o;

	if (n == 0)
		return lt_strdup("%24");
	if ((out = lt_malloc(3 * n + 1)) == NULL)
		return NULL;
	o = out;
	for (const unsigned char *p = (const unsigned char *) id; *p; p++)
	{
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
			*p == '-' || *p == '_' || *p == '.' || *p == '~')
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

lt_code
lt_ns_rest_call(const lt_ns_rest_conf *conf, const char *method, const char *route, const char *body,
				lt_ns_rest_reply *out, lt_error *err)
{
	static bool curl_ready = false;
	char	   *url;
	bool		https = strncmp(conf->uri, "https://", 8) == 0;
	lt_code		rc = LT_OK;

	memset(out, 0, sizeof(*out));
	if (!https && !(conf->allow_http && strncmp(conf->uri, "http://", 7) == 0))
		return lt_error_set(err, LT_EINVALID, "namespace URI %s: only https:// (or http:// with allow_http)", conf->uri);
	if (!curl_ready)
	{
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return lt_error_set(err, LT_EIO, "libcurl could not be initialised");
		curl_ready = true;
	}
	if ((url = lt_asprintf("%s%s", conf->uri, route)) == NULL)
		return lt_error_set(err, LT_ENOMEM, "out of memory");
	for (int attempt = 1;; attempt++)
	{
		CURL	   *e = curl_easy_init();
		struct curl_slist *hdrs = NULL;
		rest_buf	b = {0};
		CURLcode	cc;
		long		status = 0;

		if (e == NULL)
		{
			rc = lt_error_set(err, LT_ENOMEM, "out of memory");
			break;
		}
		hdrs = curl_slist_append(hdrs, "Accept: application/json");
		if (strcmp(method, "POST") == 0)
			hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		for (int i = 0; i < conf->n_headers; i++)
			hdrs = curl_slist_append(hdrs, conf->headers[i]);
		curl_easy_setopt(e, CURLOPT_URL, url);
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(e, CURLOPT_PROXY, "");
		curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, https ? "https" : "http,https");
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, conf->timeout_ms > 0 ? conf->timeout_ms : 30000L);
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
		curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
		curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
		if (strcmp(method, "POST") == 0)
		{
			curl_easy_setopt(e, CURLOPT_POST, 1L);
			curl_easy_setopt(e, CURLOPT_POSTFIELDS, body ? body : "{}");
		}
		cc = curl_easy_perform(e);
		if (cc == CURLE_OK)
			curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
		curl_slist_free_all(hdrs);
		curl_easy_cleanup(e);
		if (cc == CURLE_ABORTED_BY_CALLBACK && !b.too_big && !b.oom)
		{
			lt_free(b.data);
			rc = lt_error_set(err, LT_ECANCELED, "namespace request %s %s canceled", method, route);
			break;
		}
		if (b.too_big || b.oom)
		{
			lt_free(b.data);
			rc = lt_error_set(err, b.oom ? LT_ENOMEM : LT_EIO, "namespace %s%s: the answer is %s", conf->uri, route,
							  b.oom ? "out of memory" : "over 16 MiB");
			break;
		}
		if (cc == CURLE_OK && status < 500 && status != 429)
		{
			out->status = status;
			out->body = b.data ? b.data : lt_strdup("");
			out->len = b.len;
			break;
		}
		if (attempt >= REST_ATTEMPTS)
		{
			if (cc == CURLE_OK)
			{
				out->status = status;	/* the last answer: the caller reports it */
				out->body = b.data ? b.data : lt_strdup("");
				out->len = b.len;
			}
			else
			{
				lt_free(b.data);
				rc = lt_error_set(err, LT_EIO, "namespace %s%s could not be reached: %s", conf->uri, route,
								  curl_easy_strerror(cc));
			}
			break;
		}
		lt_free(b.data);
		if ((rc = lt_sleep_us((uint64_t) 100000 << (attempt - 1), err, "a namespace request")) != LT_OK)
			break;
	}
	lt_free(url);
	return rc;
}
