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
 * Files: this one holds the store's operations (reads, listing, writes, multipart, opening);
 * lt_store_s3_request.c below it the request engine, the process-wide curl state, the metadata
 * cache and the probe results; lt_store_s3_int.h what the two share.
 */
#include "io/lt_store_s3_int.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/lt_alloc.h"
#include "util/lt_random.h"

/* ---- reads ------------------------------------------------------------------------------------- */

static lt_code
head_object(s3_store *s, const char *key, uint64_t *size, char *etag, size_t etag_len, lt_error *err)
{
	s3_req		r;
	lt_code		rc;

	lt_s3_req_init(&r, s, "HEAD", key);
	if (!(r.url = lt_s3_object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = lt_s3_run_one(&r, err);
	if (rc == LT_OK && !r.have_length)
		rc = lt_error_set(err, LT_EIO, "%s: HEAD answered no Content-Length", r.what);
	if (rc == LT_OK)
	{
		*size = r.content_length;
		snprintf(etag, etag_len, "%s", r.etag);
	}
	lt_s3_req_free(&r);
	return rc;
}

/* A HEAD, never answered from the cache: callers ask whether an object exists now (a newer manifest). */
static lt_code
s3_stat(lt_store *st, const char *path, lt_stat *out, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	char	   *key = lt_s3_full_key(s, path);
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
	lt_s3_req_init(r, s, "GET", key);
	r->suffix = read_whole_name(key) ? TAIL_KEEP_MAX : TAIL_PREFETCH;
	if (!(r->url = lt_s3_object_url(s, key, NULL)))
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
	lt_s3_cache_store(ckey, *size, etag, from, r->buf ? r->buf : (const uint8_t *) "");
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
		rc = lt_s3_run_one(&r, err);
	if (rc == LT_OK)
		rc = tail_done(&r, ckey, size, etag, etag_len, err);
	lt_s3_req_free(&r);
	if (rc == LT_EUNSUPPORTED)
	{
		rc = head_object(s, key, size, etag, etag_len, err);
		if (rc == LT_OK)
			lt_s3_cache_store(ckey, *size, etag, *size, NULL);
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
	f->key = lt_s3_full_key(s, path);
	f->base.path = f->key ? lt_strdup(lt_s3_object_uri(s, f->key)) : NULL;
	f->ckey = f->key ? lt_asprintf("%s\n%s", s->identity, f->key) : NULL;
	if (!f->key || !f->base.path || !f->ckey)
	{
		rc = lt_nomem(err);
		goto fail;
	}
	f->base.store = st;
	ce = lt_s3_cache_find(f->ckey);
	if (ce && lt_s3_immutable_name(f->key))
	{
		lt_s3_g_stats.cache_hits++;
		size = ce->size;
		snprintf(f->etag, sizeof(f->etag), "%s", ce->etag);
	}
	else
	{
		/* a manifest or transaction file is asked for again: the cache replaces what changed */
		rc = open_with_tail(s, f->key, f->ckey, &size, f->etag, sizeof(f->etag), err);
		if (rc != LT_OK)
			goto fail;
		ce = lt_s3_cache_find(f->ckey);
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
		char	   *key = lt_s3_full_key(s, paths[i]);
		char	   *ckey = key ? lt_asprintf("%s\n%s", s->identity, key) : NULL;
		bool		dup = false;

		for (int j = 0; j < m && ckey; j++)
			dup |= strcmp(ckeys[j], ckey) == 0;
		if (!ckey || dup || (lt_s3_cache_find(ckey) && lt_s3_immutable_name(key)) || tail_req(&reqs[m], s, key, &ignore) != LT_OK)
		{
			lt_free(ckey);
			lt_free(key);
			continue;
		}
		lt_free(key);
		ckeys[m++] = ckey;
	}
	if (m > 0)
		rc = lt_s3_run_requests_opt(s, reqs, m, true, &ignore);
	for (int i = 0; i < m; i++)
	{
		uint64_t	size;
		char		etag[128];

		if (reqs[i].done && reqs[i].rc == LT_OK)
			(void) tail_done(&reqs[i], ckeys[i], &size, etag, sizeof(etag), &ignore);
		lt_s3_req_free(&reqs[i]);
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

	lt_s3_req_init(r, s, "GET", f->key);
	r->ranged = true;
	r->range_off = off;
	r->range_len = len;
	r->dst = dst;
	if (!(r->url = lt_s3_object_url(s, f->key, NULL)))
		return lt_nomem(err);
	return LT_OK;
}

static bool
from_tail(s3_rfile *f, uint64_t off, uint64_t len, uint8_t *dst)
{
	if (!f->tail || off < f->tail_off || off + len > f->base.size)
		return false;
	memcpy(dst, f->tail + (off - f->tail_off), len);
	lt_s3_g_stats.cache_hits++;
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
		rc = lt_s3_run_one(&r, err);
	lt_s3_req_free(&r);
	if (rc != LT_OK)
	{
		lt_free(buf);
		return rc;
	}
	lt_free(f->tail);
	f->tail = buf;
	f->tail_off = from;
	lt_s3_cache_store(f->ckey, f->base.size, f->etag, from, buf);
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
		rc = lt_s3_run_one(&r, err);
	lt_s3_req_free(&r);
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
		rc = lt_s3_run_requests(s, reqs, nreq, err);
	for (int i = 0; i < nreq; i++)
		lt_s3_req_free(&reqs[i]);
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
	char	   *base = lt_s3_full_key(s, dir);
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
		char	   *ep = lt_s3_uri_encode(lprefix, false);
		char	   *et = token ? lt_s3_uri_encode(token, false) : NULL;
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
			char	   *esa = sa ? lt_s3_uri_encode(sa, false) : NULL;

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
		lt_s3_req_init(&r, s, "GET", lprefix);
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
		rc = lt_s3_run_one(&r, err);
		if (rc == LT_OK)
		{
			size_t		pl = strlen(lprefix);

			p = r.buf ? (const char *) r.buf : "";
			end = p + r.buf_len;
			/* objects */
			for (const char *c = p; !stop && (c = lt_s3_xml_find(c, end, "Contents", &ve)) != NULL; c = ve)
			{
				const char *ke,
						   *se,
						   *me;
				const char *k = lt_s3_xml_find(c, ve, "Key", &ke);
				const char *sz = lt_s3_xml_find(c, ve, "Size", &se);
				const char *mt = lt_s3_xml_find(c, ve, "LastModified", &me);
				char	   *name = k ? lt_s3_xml_text(k, ke) : NULL;

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
			for (const char *c = p; !stop && (c = lt_s3_xml_find(c, end, "CommonPrefixes", &ve)) != NULL; c = ve)
			{
				const char *pe;
				const char *pp = lt_s3_xml_find(c, ve, "Prefix", &pe);
				char	   *name = pp ? lt_s3_xml_text(pp, pe) : NULL;
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
				const char *t = lt_s3_xml_find(p, end, "IsTruncated", &te);

				lt_free(token);
				token = NULL;
				if (t && te - t == 4 && memcmp(t, "true", 4) == 0)
				{
					const char *ne;
					const char *nt = lt_s3_xml_find(p, end, "NextContinuationToken", &ne);

					if (!nt)
						rc = lt_error_set(err, LT_EIO, "%s: a truncated listing has no continuation token", r.what);
					else if (!(token = lt_s3_xml_text(nt, ne)))
						rc = lt_nomem(err);
				}
				else
					stop = true;
			}
		}
		lt_s3_req_free(&r);
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

	lt_s3_req_init(&r, s, "PUT", key);
	r.conditional = conditional;
	r.body = data;
	r.body_len = len;
	if (!(r.url = lt_s3_object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = lt_s3_run_one(&r, err);
	if (ambiguous)
		*ambiguous = r.ambiguous;
	lt_s3_req_free(&r);
	return rc;
}

/* Whole object into a fresh buffer (bounded by MAX_SMALL_BODY). */
static lt_code
get_object(s3_store *s, const char *key, uint8_t **out, size_t *out_len, lt_error *err)
{
	s3_req		r;
	lt_code		rc;

	lt_s3_req_init(&r, s, "GET", key);
	if (!(r.url = lt_s3_object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = lt_s3_run_one(&r, err);
	if (rc == LT_OK)
	{
		*out = r.buf;
		*out_len = r.buf_len;
		r.buf = NULL;
	}
	lt_s3_req_free(&r);
	return rc;
}

static lt_code
delete_object(s3_store *s, const char *key, lt_error *err)
{
	s3_req		r;
	lt_code		rc;

	lt_s3_req_init(&r, s, "DELETE", key);
	if (!(r.url = lt_s3_object_url(s, key, NULL)))
		return lt_nomem(err);
	rc = lt_s3_run_one(&r, err);
	lt_s3_req_free(&r);
	return rc;
}

static void
forget_key(s3_store *s, const char *key)
{
	char	   *ck = lt_asprintf("%s\n%s", s->identity, key);

	if (ck)
		lt_s3_cache_forget(ck);
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
	char	   *key = lt_s3_full_key(s, path);
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

	for (p = lt_s3_g_probes; p; p = p->next)
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
		p->next = lt_s3_g_probes;
		lt_s3_g_probes = p;
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
	char	   *key = lt_s3_full_key(s, path);
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
							  lt_s3_object_uri(s, key));
	}
	lt_free(key);
	return rc;
}

static lt_code
s3_remove(lt_store *st, const char *path, lt_error *err)
{
	s3_store   *s = (s3_store *) st;
	char	   *key = lt_s3_full_key(s, path);
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
	f->key = lt_s3_full_key(s, path);
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

	lt_s3_req_init(&r, s, "POST", f->key);
	if (!(r.url = lt_s3_object_url(s, f->key, "uploads=")))
		return lt_nomem(err);
	rc = lt_s3_run_one(&r, err);
	if (rc == LT_OK)
	{
		v = r.buf ? lt_s3_xml_find((const char *) r.buf, (const char *) r.buf + r.buf_len, "UploadId", &ve) : NULL;
		if (!v)
			rc = lt_error_set(err, LT_EIO, "%s: the multipart upload has no UploadId", r.what);
		else if (!(f->upload_id = lt_s3_xml_text(v, ve)))
			rc = lt_nomem(err);
	}
	lt_s3_req_free(&r);
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
	if (!(eid = lt_s3_uri_encode(f->upload_id, false)))
		return lt_nomem(err);
	query = lt_asprintf("partNumber=%d&uploadId=%s", f->n_parts + 1, eid);
	lt_free(eid);
	lt_s3_req_init(&r, s, "PUT", f->key);
	r.body = f->buf;
	r.body_len = f->buf_len;
	r.url = query ? lt_s3_object_url(s, f->key, query) : NULL;
	lt_free(query);
	if (!r.url)
		return lt_nomem(err);
	rc = lt_s3_run_one(&r, err);
	if (rc == LT_OK && !r.etag[0])
		rc = lt_error_set(err, LT_EIO, "%s: part %d was stored without an ETag", r.what, f->n_parts + 1);
	if (rc == LT_OK && !(f->etags[f->n_parts] = lt_strdup(r.etag)))
		rc = lt_nomem(err);
	if (rc == LT_OK)
	{
		f->n_parts++;
		f->buf_len = 0;
	}
	lt_s3_req_free(&r);
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
	char	   *eid = lt_s3_uri_encode(f->upload_id, false);
	char	   *query = eid ? lt_asprintf("uploadId=%s", eid) : NULL;
	s3_req		r;

	lt_free(eid);
	lt_s3_req_init(&r, s, "DELETE", f->key);
	r.url = query ? lt_s3_object_url(s, f->key, query) : NULL;
	lt_free(query);
	if (r.url)
		(void) lt_s3_run_one(&r, NULL);
	lt_s3_req_free(&r);
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
	eid = lt_s3_uri_encode(f->upload_id, false);
	query = eid ? lt_asprintf("uploadId=%s", eid) : NULL;
	lt_free(eid);
	lt_s3_req_init(&r, s, "POST", f->key);
	r.body = (const uint8_t *) xml;
	r.body_len = at;
	r.url = query ? lt_s3_object_url(s, f->key, query) : NULL;
	lt_free(query);
	if (!r.url)
	{
		lt_free(xml);
		return lt_nomem(err);
	}
	rc = lt_s3_run_one(&r, err);
	/* S3 may answer 200 with an error document */
	if (rc == LT_OK && r.buf && strstr((const char *) r.buf, "<Error>"))
	{
		char		summary[300];

		lt_s3_error_summary(&r, summary, sizeof(summary));
		rc = lt_error_set(err, LT_EIO, "%s: completing the multipart upload failed:%s", r.what, summary);
	}
	lt_s3_req_free(&r);
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
	/*
	 * A sparse take costs the same: a GET's latency (~20 ms on S3) buys about 1 MiB of one connection's
	 * transfer, so rows closer than that are fetched together (in parallel requests of at most PART_SIZE).
	 * LT_S3_TAKE_GAP (bytes) sets another for benchmarks; 0 there is one request per row.
	 */
	s->base.take_gap = s->base.coalesce_gap;
	{
		const char *e = getenv("LT_S3_TAKE_GAP");

		if (e && *e)
			s->base.take_gap = strtoull(e, NULL, 10) ? strtoull(e, NULL, 10) : 1;
	}
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
	if (lt_s3_curl_setup(err) != LT_OK)
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
