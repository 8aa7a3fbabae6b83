/*
 * test_s3_store.c — the S3 backend against the test S3 server (test/s3/server.mjs, which verifies
 * SigV4 signatures).  Run by test/s3/run.sh with LT_S3_PORT set; the bucket "lake" exists.
 *
 * Covers: whole and ranged reads, read_ranges in parallel, listings with paging and "directories",
 * keys that need percent-encoding, conditional create (412 -> LT_ECONFLICT), the probe that refuses
 * a server which ignores the condition, streaming writes (one PUT and multipart), remove, wrong
 * credentials (LT_EACCESS, no secret in the message), retries through the fault mode with nothing
 * lost, a bounded retry time against a dead port, the interrupt check, and configuration errors; the latest
 * version from one listing, opening with one request and prefetching, virtual-hosted addressing, session tokens.
 */
#include <curl/curl.h>
#include <time.h>
#include <unistd.h>

#include "io/lt_store_s3.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "../unit/unit.h"

static int	port;
static char endpoint[128];

/* GET http://127.0.0.1:PORT/__admin/<what> (the test server's control path, unsigned) */
static void
admin(const char *what)
{
	CURL	   *c = curl_easy_init();
	char		url[256];
	FILE	   *sink = fopen("/dev/null", "w");

	snprintf(url, sizeof(url), "%s/__admin/%s", endpoint, what);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
	if (curl_easy_perform(c) != CURLE_OK)
		fprintf(stderr, "admin %s failed\n", what);
	curl_easy_cleanup(c);
	fclose(sink);
}

static char run_id[32];			/* every run writes under a prefix of its own */

static lt_s3_config
config(const char *prefix)
{
	lt_s3_config c = {0};
	static char prefixes[16][128];
	static int	next;
	char	   *p = prefixes[next++ % 16];

	snprintf(p, 128, "%s/%s", run_id, prefix);
	c.bucket = "lake";
	c.prefix = p;
	c.endpoint = endpoint;
	c.region = "us-east-1";
	c.path_style = true;
	c.allow_http = true;
	c.access_key_id = "S3RVER";
	c.secret_access_key = "S3RVER";
	return c;
}

static lt_store *
open_store(const char *prefix)
{
	lt_s3_config c = config(prefix);
	lt_store   *s = NULL;
	lt_error	err;

	if (lt_store_s3_open(&c, &s, &err) != LT_OK)
	{
		fprintf(stderr, "open: %s\n", err.msg);
		exit(1);
	}
	return s;
}

static uint8_t *
pattern(size_t n, unsigned seed)
{
	uint8_t    *b = malloc(n ? n : 1);

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t) ((i * 131 + seed * 7 + (i >> 11)) & 0xff);
	return b;
}

TEST(put_read)
{
	lt_store   *s = open_store("t/put_read");
	lt_error	err;
	size_t		n = 300000;
	uint8_t    *data = pattern(n, 1);
	uint8_t    *back = NULL;
	uint64_t	len = 0;
	lt_rfile   *f = NULL;
	uint8_t		a[100],
				b[5000],
				c[7];

	CHECK_OK(lt_store_put(s, "dir/obj one+two%.bin", data, n, &err), err);
	CHECK_OK(lt_store_read_all(s, "dir/obj one+two%.bin", 1 << 20, &back, &len, &err), err);
	CHECK_EQ_INT(len, n);
	CHECK(back && memcmp(back, data, n) == 0);
	lt_free(back);

	CHECK_OK(lt_store_open_file(s, "dir/obj one+two%.bin", &f, &err), err);
	if (f)
	{
		lt_range	r[3] = {{10, 100}, {250000, 5000}, {n - 7, 7}};
		uint8_t    *d[3] = {a, b, c};

		CHECK_EQ_INT(f->size, n);
		CHECK_OK(lt_rfile_read_ranges(f, 3, r, d, &err), err);
		CHECK(memcmp(a, data + 10, 100) == 0);
		CHECK(memcmp(b, data + 250000, 5000) == 0);
		CHECK(memcmp(c, data + n - 7, 7) == 0);
		CHECK_CODE(lt_rfile_read(f, n - 3, 7, c, &err), LT_ECORRUPT);
		lt_rfile_close(f);
	}
	CHECK_CODE(lt_store_open_file(s, "dir/missing", &f, &err), LT_ENOTFOUND);
	CHECK(strstr(err.msg, "/t/put_read/dir/missing") != NULL);
	free(data);
	lt_store_close(s);
}

/* Many ranges far apart: parallel requests, every byte right. */
TEST(parallel_ranges)
{
	lt_store   *s = open_store("t/ranges");
	lt_error	err;
	size_t		n = 12 << 20;
	uint8_t    *data = pattern(n, 2);
	lt_rfile   *f = NULL;
	lt_range	r[20];
	uint8_t    *d[20];
	lt_s3_stats before,
				after;

	CHECK_OK(lt_store_put(s, "big", data, n, &err), err);
	CHECK_OK(lt_store_open_file(s, "big", &f, &err), err);
	for (int i = 0; i < 20; i++)
	{
		r[i].offset = (uint64_t) i * (n / 20) + 17;
		r[i].length = 1000 + i;
		d[i] = malloc(r[i].length);
	}
	/* the whole file in one range too: split into parts fetched in parallel */
	lt_s3_get_stats(&before);
	if (f)
	{
		uint8_t    *whole = malloc(n);

		CHECK_OK(lt_rfile_read_ranges(f, 20, r, d, &err), err);
		for (int i = 0; i < 20; i++)
			CHECK(memcmp(d[i], data + r[i].offset, r[i].length) == 0);
		CHECK_OK(lt_rfile_read(f, 0, n, whole, &err), err);
		CHECK(memcmp(whole, data, n) == 0);
		free(whole);
		lt_rfile_close(f);
	}
	lt_s3_get_stats(&after);
	/* 20 ranges 600 KiB apart coalesce (gap < 1 MiB) into one read, split in 8 MiB parts */
	CHECK(after.requests - before.requests <= 4);
	for (int i = 0; i < 20; i++)
		free(d[i]);
	free(data);
	lt_store_close(s);
}

typedef struct listing
{
	int			files,
				dirs;
	uint64_t	bytes;
	bool		saw_sub;
} listing;

static int
on_entry(const lt_dirent *e, void *arg)
{
	listing    *l = arg;

	if (e->is_dir)
	{
		l->dirs++;
		if (strcmp(e->name, "sub dir") == 0)
			l->saw_sub = true;
	}
	else
	{
		l->files++;
		l->bytes += e->size;
	}
	return 0;
}

TEST(list_paging)
{
	lt_s3_config c = config("t/list");
	lt_store   *s = NULL;
	lt_error	err;
	char		name[64];
	listing		l = {0};

	c.list_max_keys = 7;
	CHECK_OK(lt_store_s3_open(&c, &s, &err), err);
	for (int i = 0; i < 23; i++)
	{
		snprintf(name, sizeof(name), "d/f%02d&<x>", i);
		CHECK_OK(lt_store_put(s, name, (const uint8_t *) "abc", 3, &err), err);
	}
	CHECK_OK(lt_store_put(s, "d/sub dir/inner", (const uint8_t *) "z", 1, &err), err);
	CHECK_OK(lt_store_list(s, "d", on_entry, &l, &err), err);
	CHECK_EQ_INT(l.files, 23);
	CHECK_EQ_INT(l.bytes, 69);
	CHECK_EQ_INT(l.dirs, 1);
	CHECK(l.saw_sub);
	CHECK_CODE(lt_store_list(s, "nothing-here", on_entry, &l, &err), LT_ENOTFOUND);
	lt_store_close(s);
}

/*
 * The latest version on S3: V2 names sort newest first, so one small listing finds it (start-after skips
 * Lance's ".tmp_*" names, a leftover temp of a later attempt is passed over); V1 names need the whole listing.
 */
TEST(latest_version)
{
	lt_store   *s = open_store("t/latest");
	lt_error	err;
	char		name[64],
				path[128];
	uint64_t	v = 0;
	lt_naming	naming;
	lt_s3_stats before,
				after;

	for (uint64_t i = 1; i <= 3; i++)
	{
		lt_manifest_name(i, LT_NAMING_V2, name, sizeof(name));
		snprintf(path, sizeof(path), "v2/_versions/%s", name);
		CHECK_OK(lt_store_put(s, path, (const uint8_t *) "m", 1, &err), err);
	}
	CHECK_OK(lt_store_put(s, "v2/_versions/.tmp_4.manifest_0000", (const uint8_t *) "t", 1, &err), err);
	CHECK_OK(lt_store_put(s, "v2/_versions/18446744073709551611.manifest.tmp-1-0", (const uint8_t *) "t", 1, &err), err);
	CHECK_OK(lt_store_put(s, "v2/_versions/latest_version_hint.json", (const uint8_t *) "{\"version\":1}", 13, &err), err);
	lt_s3_get_stats(&before);
	CHECK_OK(lt_dataset_latest_version(s, "v2/", &v, &naming, &err), err);
	lt_s3_get_stats(&after);
	CHECK_EQ_INT(v, 3);
	CHECK_EQ_INT(naming, LT_NAMING_V2);
	CHECK_EQ_INT(after.requests - before.requests, 1);		/* one LIST, the hint not read */

	/* V1 names: the first listed ("1.manifest") is not the latest; the whole listing decides */
	for (int i = 1; i <= 12; i++)
	{
		snprintf(path, sizeof(path), "v1/_versions/%d.manifest", i);
		CHECK_OK(lt_store_put(s, path, (const uint8_t *) "m", 1, &err), err);
	}
	CHECK_OK(lt_dataset_latest_version(s, "v1/", &v, &naming, &err), err);
	CHECK_EQ_INT(v, 12);
	CHECK_EQ_INT(naming, LT_NAMING_V1);

	CHECK_CODE(lt_dataset_latest_version(s, "none/", &v, &naming, &err), LT_ENOTFOUND);
	CHECK(strstr(err.msg, "not a Lance dataset") != NULL);
	/* only temp names: no manifest */
	CHECK_OK(lt_store_put(s, "tmp/_versions/.tmp_1.manifest_0000", (const uint8_t *) "t", 1, &err), err);
	CHECK_CODE(lt_dataset_latest_version(s, "tmp/", &v, &naming, &err), LT_ENOTFOUND);
	CHECK(strstr(err.msg, "holds no manifest") != NULL);
	lt_store_close(s);
}

static uint64_t
requests_now(void)
{
	lt_s3_stats st;

	lt_s3_get_stats(&st);
	return st.requests;
}

/*
 * Opening costs one request: a GET of the object's last 64 KiB gives its size and the tail a footer read
 * needs next.  An empty object (416) and a server that ignores the range (200 with the whole object) still
 * open right.  Prefetching several objects runs their opens at once and leaves nothing for the opens.
 */
TEST(open_with_tail)
{
	lt_store   *s = open_store("t/tail");
	lt_error	err;
	size_t		big = 300000;
	uint8_t    *data = pattern(big, 5);
	uint8_t		buf[200];
	lt_rfile   *f = NULL;
	uint64_t	r0;
	const char *paths[] = {"data/p1.lance", "data/p2.lance", "data/p3.lance", "data/missing.lance"};

	CHECK_OK(lt_store_put(s, "big.bin", data, big, &err), err);
	CHECK_OK(lt_store_put(s, "small.bin", data, 1000, &err), err);
	CHECK_OK(lt_store_put(s, "empty.bin", data, 0, &err), err);
	for (int ignore = 0; ignore < 2; ignore++)
	{
		admin(ignore ? "mode?suffix_ranges=0" : "mode?suffix_ranges=1");
		lt_s3_cache_clear();
		r0 = requests_now();
		CHECK_OK(lt_store_open_file(s, "big.bin", &f, &err), err);
		if (f)
		{
			CHECK_EQ_INT(f->size, big);
			/* a server honouring the range: the open and the footer read are one request */
			if (!ignore)
				CHECK_EQ_INT(requests_now() - r0, 1);
			CHECK_OK(lt_rfile_read(f, big - 200, 200, buf, &err), err);
			CHECK(memcmp(buf, data + big - 200, 200) == 0);
			if (!ignore)
				CHECK_EQ_INT(requests_now() - r0, 1);
			CHECK_OK(lt_rfile_read(f, 10, 100, buf, &err), err);
			CHECK(memcmp(buf, data + 10, 100) == 0);
			lt_rfile_close(f);
		}
		r0 = requests_now();
		CHECK_OK(lt_store_open_file(s, "small.bin", &f, &err), err);
		if (f)
		{
			CHECK_EQ_INT(f->size, 1000);
			CHECK_OK(lt_rfile_read(f, 0, 200, buf, &err), err);
			CHECK(memcmp(buf, data, 200) == 0);
			CHECK_EQ_INT(requests_now() - r0, 1);	/* the whole object came with the open */
			lt_rfile_close(f);
		}
		CHECK_OK(lt_store_open_file(s, "empty.bin", &f, &err), err);
		if (f)
		{
			CHECK_EQ_INT(f->size, 0);
			lt_rfile_close(f);
		}
		CHECK_CODE(lt_store_open_file(s, "nothing.bin", &f, &err), LT_ENOTFOUND);
	}
	admin("mode?suffix_ranges=1");

	/* a file read whole (a manifest) of up to 1 MiB is one request, open included */
	{
		uint8_t    *whole = NULL;
		uint64_t	len = 0;

		CHECK_OK(lt_store_put(s, "_versions/big.manifest", data, big, &err), err);
		lt_s3_cache_clear();
		r0 = requests_now();
		CHECK_OK(lt_store_read_all(s, "_versions/big.manifest", big, &whole, &len, &err), err);
		CHECK(len == big && whole && memcmp(whole, data, big) == 0);
		CHECK_EQ_INT(requests_now() - r0, 1);
		lt_free(whole);
	}

	for (int i = 0; i < 3; i++)
		CHECK_OK(lt_store_put(s, paths[i], data + i, 70000, &err), err);
	lt_s3_cache_clear();
	r0 = requests_now();
	CHECK_OK(lt_store_prefetch(s, 4, paths, &err), err);	/* the missing one is left to its open */
	CHECK_EQ_INT(requests_now() - r0, 4);
	r0 = requests_now();
	for (int i = 0; i < 3; i++)
	{
		CHECK_OK(lt_store_open_file(s, paths[i], &f, &err), err);
		if (f)
		{
			CHECK_EQ_INT(f->size, 70000);
			CHECK_OK(lt_rfile_read(f, 70000 - 100, 100, buf, &err), err);
			CHECK(memcmp(buf, data + i + 70000 - 100, 100) == 0);
			lt_rfile_close(f);
		}
	}
	CHECK_EQ_INT(requests_now() - r0, 0);	/* data files are never rewritten: the cache answers */
	CHECK_CODE(lt_store_open_file(s, paths[3], &f, &err), LT_ENOTFOUND);
	free(data);
	lt_store_close(s);
}

/*
 * Virtual-hosted addressing: http://lake.s3.localhost:PORT/key (curl resolves *.localhost to the loopback
 * address; the test server takes the bucket from the Host header, as S3 does).
 */
TEST(virtual_hosted)
{
	lt_s3_config c = config("t/vhost");
	char		vhost_endpoint[128];
	lt_store   *s = NULL;
	lt_error	err;
	uint8_t    *back = NULL;
	uint64_t	len = 0;
	listing		l = {0};

	snprintf(vhost_endpoint, sizeof(vhost_endpoint), "http://s3.localhost:%d", port);
	c.endpoint = vhost_endpoint;
	c.path_style = false;
	CHECK_OK(lt_store_s3_open(&c, &s, &err), err);
	if (!s)
		return;
	CHECK_OK(lt_store_put(s, "d/a b.bin", (const uint8_t *) "hello", 5, &err), err);
	CHECK_OK(lt_store_read_all(s, "d/a b.bin", 100, &back, &len, &err), err);
	CHECK(len == 5 && back && memcmp(back, "hello", 5) == 0);
	lt_free(back);
	CHECK_OK(lt_store_list(s, "d", on_entry, &l, &err), err);
	CHECK_EQ_INT(l.files, 1);
	CHECK_OK(lt_store_put_if_absent(s, "d/once", (const uint8_t *) "1", 1, &err), err);
	CHECK_CODE(lt_store_put_if_absent(s, "d/once", (const uint8_t *) "2", 1, &err), LT_ECONFLICT);
	CHECK_OK(lt_store_remove(s, "d/a b.bin", &err), err);
	CHECK_CODE(lt_store_read_all(s, "d/a b.bin", 100, &back, &len, &err), LT_ENOTFOUND);
	lt_store_close(s);
	/* the signature is checked there too */
	c.secret_access_key = "not-the-secret";
	CHECK_OK(lt_store_s3_open(&c, &s, &err), err);
	lt_s3_cache_clear();
	CHECK_CODE(lt_store_read_all(s, "d/once", 100, &back, &len, &err), LT_EACCESS);
	CHECK(strstr(err.msg, "SignatureDoesNotMatch") != NULL);
	lt_store_close(s);
	/* the same objects through path style */
	s = open_store("t/vhost");
	CHECK_OK(lt_store_read_all(s, "d/once", 100, &back, &len, &err), err);
	CHECK(len == 1 && back && back[0] == '1');
	lt_free(back);
	lt_store_close(s);
}

/*
 * Temporary credentials: the server requires the session token; the right one works, a wrong or missing one
 * is LT_EACCESS with a message that says so and does not show the token.
 */
TEST(session_token)
{
	lt_error	err;
	const char *tokens[] = {"FQoGZXIvYXdzEXAMPLEtoken+/=", "wrong-token", NULL};

	admin("mode?session_token=FQoGZXIvYXdzEXAMPLEtoken%2B%2F%3D");
	for (int i = 0; i < 3; i++)
	{
		lt_s3_config c = config("t/token");
		lt_store   *s = NULL;
		uint8_t    *back = NULL;
		uint64_t	len = 0;

		c.session_token = tokens[i];
		CHECK_OK(lt_store_s3_open(&c, &s, &err), err);
		if (!s)
			continue;
		lt_s3_cache_clear();
		if (i == 0)
		{
			CHECK_OK(lt_store_put(s, "obj", (const uint8_t *) "tok", 3, &err), err);
			CHECK_OK(lt_store_read_all(s, "obj", 100, &back, &len, &err), err);
			CHECK(len == 3 && back && memcmp(back, "tok", 3) == 0);
			lt_free(back);
		}
		else
		{
			CHECK_CODE(lt_store_read_all(s, "obj", 100, &back, &len, &err), LT_EACCESS);
			CHECK(strstr(err.msg, "access denied") != NULL && strstr(err.msg, "credentials") != NULL);
			CHECK(strstr(err.msg, i == 1 ? "InvalidToken" : "InvalidAccessKeyId") != NULL);
			CHECK(strstr(err.msg, "wrong-token") == NULL && strstr(err.msg, "EXAMPLEtoken") == NULL);
			CHECK_CODE(lt_store_put(s, "obj2", (const uint8_t *) "x", 1, &err), LT_EACCESS);
		}
		lt_store_close(s);
	}
	admin("mode?session_token=");
}

TEST(conditional_create)
{
	lt_store   *s = open_store("t/cond");
	lt_error	err;
	uint8_t    *back = NULL;
	uint64_t	len = 0;

	admin("mode?conditional=1");
	lt_s3_cache_clear();
	CHECK_OK(lt_store_put_if_absent(s, "_versions/1.manifest", (const uint8_t *) "first", 5, &err), err);
	CHECK_CODE(lt_store_put_if_absent(s, "_versions/1.manifest", (const uint8_t *) "second", 6, &err), LT_ECONFLICT);
	CHECK_OK(lt_store_read_all(s, "_versions/1.manifest", 100, &back, &len, &err), err);
	CHECK(len == 5 && memcmp(back, "first", 5) == 0);
	lt_free(back);

	/* a server that ignores If-None-Match: the probe refuses to commit there */
	admin("mode?conditional=0");
	lt_s3_cache_clear();
	CHECK_CODE(lt_store_put_if_absent(s, "_versions/2.manifest", (const uint8_t *) "x", 1, &err), LT_EUNSUPPORTED);
	CHECK(strstr(err.msg, "does not honour conditional writes") != NULL);
	CHECK_CODE(lt_store_open_file(s, "_versions/2.manifest", &(lt_rfile *) {NULL}, &err), LT_ENOTFOUND);
	admin("mode?conditional=1");
	lt_s3_cache_clear();
	lt_store_close(s);
}

TEST(streaming_writes)
{
	lt_store   *s = open_store("t/stream");
	lt_error	err;
	size_t		sizes[2] = {100000, (size_t) 19 << 20};

	for (int k = 0; k < 2; k++)
	{
		size_t		n = sizes[k];
		uint8_t    *data = pattern(n, 3 + k);
		lt_wfile   *w = NULL;
		uint8_t    *back = NULL;
		uint64_t	len = 0;
		char		name[32];

		snprintf(name, sizeof(name), "data/f%d.lance", k);
		CHECK_OK(lt_store_create_file(s, name, &w, &err), err);
		for (size_t at = 0; w && at < n; at += 777777)
			CHECK_OK(lt_wfile_write(w, data + at, n - at < 777777 ? n - at : 777777, &err), err);
		if (w)
			CHECK_OK(lt_wfile_finish(w, &err), err);
		CHECK_OK(lt_store_read_all(s, name, 64 << 20, &back, &len, &err), err);
		CHECK_EQ_INT(len, n);
		CHECK(back && memcmp(back, data, n) == 0);
		lt_free(back);
		free(data);
	}
	/* an aborted write leaves nothing */
	{
		lt_wfile   *w = NULL;
		uint8_t    *data = pattern((size_t) 9 << 20, 9);

		CHECK_OK(lt_store_create_file(s, "data/aborted.lance", &w, &err), err);
		CHECK_OK(lt_wfile_write(w, data, (size_t) 9 << 20, &err), err);
		lt_wfile_abort(w);
		CHECK_CODE(lt_store_open_file(s, "data/aborted.lance", &(lt_rfile *) {NULL}, &err), LT_ENOTFOUND);
		free(data);
	}
	CHECK_OK(lt_store_remove(s, "data/f0.lance", &err), err);
	CHECK_CODE(lt_store_open_file(s, "data/f0.lance", &(lt_rfile *) {NULL}, &err), LT_ENOTFOUND);
	lt_store_close(s);
}

TEST(wrong_credentials)
{
	lt_s3_config c = config("t/creds");
	lt_store   *s = NULL;
	lt_error	err;
	uint8_t    *back = NULL;
	uint64_t	len;

	c.secret_access_key = "not-the-secret-XYZZY";
	CHECK_OK(lt_store_s3_open(&c, &s, &err), err);
	CHECK_CODE(lt_store_put(s, "x", (const uint8_t *) "1", 1, &err), LT_EACCESS);
	CHECK(strstr(err.msg, "/t/creds/x") != NULL);
	CHECK(strstr(err.msg, "XYZZY") == NULL);
	CHECK_CODE(lt_store_read_all(s, "x", 10, &back, &len, &err), LT_EACCESS);
	CHECK(strstr(err.msg, "XYZZY") == NULL);
	lt_store_close(s);
}

/* A third of all requests fail (500, 503, dropped before or after taking effect): nothing is lost. */
TEST(faults)
{
	lt_store   *s = open_store("t/faults");
	lt_error	err;
	lt_s3_stats before,
				after;
	int			ok = 0;
	listing		l = {0};

	lt_s3_get_stats(&before);
	admin("mode?faults=0.33");
	for (int i = 0; i < 30; i++)
	{
		char		name[64];
		uint8_t    *data = pattern(5000 + i, (unsigned) i);
		uint8_t    *back = NULL;
		uint64_t	len = 0;
		lt_code		rc;

		snprintf(name, sizeof(name), "_versions/%d.manifest", i + 1);
		rc = lt_store_put_if_absent(s, name, data, 5000 + i, &err);
		if (rc != LT_OK)
			fprintf(stderr, "put_if_absent %d: %s\n", i, err.msg);
		rc = rc == LT_OK ? lt_store_read_all(s, name, 1 << 20, &back, &len, &err) : rc;
		if (rc == LT_OK && len == (uint64_t) (5000 + i) && memcmp(back, data, len) == 0)
			ok++;
		else if (rc != LT_OK)
			fprintf(stderr, "read %d: %s\n", i, err.msg);
		lt_free(back);
		free(data);
	}
	CHECK_OK(lt_store_list(s, "_versions", on_entry, &l, &err), err);
	admin("mode?faults=0");
	lt_s3_get_stats(&after);
	CHECK_EQ_INT(ok, 30);
	CHECK_EQ_INT(l.files, 30);
	CHECK(after.retries - before.retries > 0);
	printf("faults: %llu requests, %llu retries\n", (unsigned long long) (after.requests - before.requests),
		   (unsigned long long) (after.retries - before.retries));
	lt_store_close(s);
}

TEST(bounded_retries)
{
	lt_s3_config c = config("t/dead");
	lt_store   *s = NULL;
	lt_error	err;

	c.endpoint = "http://127.0.0.1:1";	/* nothing listens there */
	c.retry_budget_ms = 800;
	CHECK_OK(lt_store_s3_open(&c, &s, &err), err);
	CHECK_CODE(lt_store_put(s, "x", (const uint8_t *) "1", 1, &err), LT_EIO);
	CHECK(strstr(err.msg, "attempts") != NULL);
	lt_store_close(s);
}

static int	checks_seen;
static bool
cancel_after_two(void)
{
	return ++checks_seen > 2;
}

TEST(interrupt)
{
	lt_store   *s = open_store("t/cancel");
	lt_error	err;

	admin("mode?latency_ms=1500");
	checks_seen = 0;
	lt_set_interrupt_hooks(cancel_after_two, NULL);
	CHECK_CODE(lt_store_put(s, "x", (const uint8_t *) "1", 1, &err), LT_ECANCELED);
	lt_set_interrupt_hooks(NULL, NULL);
	admin("mode?latency_ms=0");
	lt_store_close(s);
}

TEST(configuration)
{
	lt_s3_config c = config("p");
	lt_store   *s = NULL;
	lt_error	err;
	char	   *b = NULL,
			   *p = NULL;

	c.allow_http = false;
	CHECK_CODE(lt_store_s3_open(&c, &s, &err), LT_EINVALID);
	CHECK(strstr(err.msg, "allow_http") != NULL);
	c.allow_http = true;
	c.endpoint = "ftp://x";
	CHECK_CODE(lt_store_s3_open(&c, &s, &err), LT_EINVALID);
	c.endpoint = "http://127.0.0.1:9/path";
	CHECK_CODE(lt_store_s3_open(&c, &s, &err), LT_EINVALID);

	CHECK_OK(lt_s3_parse_uri("s3://my-bucket/a/b/", &b, &p, &err), err);
	CHECK(b && strcmp(b, "my-bucket") == 0);
	CHECK(p && strcmp(p, "a/b") == 0);
	lt_free(b);
	lt_free(p);
	CHECK_OK(lt_s3_parse_uri("s3://my-bucket", &b, &p, &err), err);
	CHECK(p && strcmp(p, "") == 0);
	lt_free(b);
	lt_free(p);
	CHECK_CODE(lt_s3_parse_uri("s3://Bad_Bucket/x", &b, &p, &err), LT_EINVALID);
	CHECK_CODE(lt_s3_parse_uri("s3://bucket/../x", &b, &p, &err), LT_EINVALID);
	CHECK_CODE(lt_s3_parse_uri("/local/path", &b, &p, &err), LT_EINVALID);
}

int
main(void)
{
	const char *p = getenv("LT_S3_PORT");

	if (!p)
	{
		fprintf(stderr, "test_s3_store: LT_S3_PORT is not set (run test/s3/run.sh)\n");
		return 2;
	}
	port = atoi(p);
	snprintf(run_id, sizeof(run_id), "run-%d-%llx", (int) getpid(), (unsigned long long) time(NULL));
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", port);
	RUN(configuration);
	RUN(put_read);
	RUN(parallel_ranges);
	RUN(list_paging);
	RUN(latest_version);
	RUN(open_with_tail);
	RUN(virtual_hosted);
	RUN(session_token);
	RUN(conditional_create);
	RUN(streaming_writes);
	RUN(wrong_credentials);
	RUN(faults);
	RUN(bounded_retries);
	RUN(interrupt);
	lt_s3_cache_clear();
	return unit_report("s3 store");
}
