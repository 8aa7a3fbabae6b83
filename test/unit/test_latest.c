/*
 * test_latest.c — finding a dataset's latest version (lt_dataset_latest_version) on a local directory: the
 * version hint probed forward without listing _versions/, and the listing (names only, no stat per entry) whenever
 * the hint cannot be trusted: missing, past the end, unparsable, a gap above it, or a mixed directory.  A
 * wrapper around the local store counts the listings, so a test can tell which way the answer came.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "unit.h"

static lt_error err;
static char root[256];

/* the local store's ops, with list counted */
static lt_store_ops counting_ops;
static const lt_store_ops *local_ops;
static int	lists;

static lt_code
counting_list(lt_store *s, const char *dir, const lt_list_opts *opts, lt_list_cb cb, void *arg, lt_error *e)
{
	lists++;
	return local_ops->list(s, dir, opts, cb, arg, e);
}

static int	stats;

static lt_code
counting_stat(lt_store *s, const char *path, lt_stat *st, lt_error *e)
{
	stats++;
	return local_ops->stat(s, path, st, e);
}

static lt_store *
open_local(void)
{
	lt_store   *s = NULL;

	if (lt_store_local_open(root, &s, &err) != LT_OK)
	{
		fprintf(stderr, "open %s: %s\n", root, err.msg);
		exit(1);
	}
	local_ops = s->ops;
	counting_ops = *s->ops;
	counting_ops.list = counting_list;
	counting_ops.stat = counting_stat;
	s->ops = &counting_ops;
	return s;
}

static void
put_file(const char *rel, const char *text)
{
	char		path[512];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f)
	{
		fprintf(stderr, "create %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void
put_manifest(uint64_t v, lt_naming naming)
{
	char		name[64],
				rel[128];

	lt_manifest_name(v, naming, name, sizeof(name));
	snprintf(rel, sizeof(rel), "ds/_versions/%s", name);
	put_file(rel, "not parsed by the latest-version lookup");
}

static void
drop_manifest(uint64_t v, lt_naming naming)
{
	char		name[64],
				path[512];

	lt_manifest_name(v, naming, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/ds/_versions/%s", root, name);
	unlink(path);
}

/* a hint written as writers do: a temp file renamed into place */
static void
put_hint(const char *text)
{
	char		tmp[512],
				path[512];

	put_file("ds/_versions/hint.tmp", text);
	snprintf(tmp, sizeof(tmp), "%s/ds/_versions/hint.tmp", root);
	snprintf(path, sizeof(path), "%s/ds/_versions/latest_version_hint.json", root);
	if (rename(tmp, path) != 0)
		fprintf(stderr, "rename: %s\n", strerror(errno));
}

static void
drop_hint(void)
{
	char		path[512];

	snprintf(path, sizeof(path), "%s/ds/_versions/latest_version_hint.json", root);
	unlink(path);
}

static int64_t
ctime_ns(const char *rel)
{
	char		path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (stat(path, &st) != 0)
		return 0;
	return (int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

/*
 * File system clocks are coarse (a few ms): a change right after the hint can carry the hint's own time.  Wait
 * until _versions/ shows a later change time than the hint, nudging it with a temp file (as a writer would
 * create one), so the removal the test made counts as after the hint.
 */
static void
dir_changes_after_hint(void)
{
	for (int i = 0; i < 500 && ctime_ns("ds/_versions") <= ctime_ns("ds/_versions/latest_version_hint.json"); i++)
	{
		struct timespec ts = {0, 2 * 1000 * 1000};
		char		path[512];

		nanosleep(&ts, NULL);
		put_file("ds/_versions/.tmp_nudge", "");
		snprintf(path, sizeof(path), "%s/ds/_versions/.tmp_nudge", root);
		unlink(path);
	}
	CHECK(ctime_ns("ds/_versions") > ctime_ns("ds/_versions/latest_version_hint.json"));
}

static void
reset_dataset(void)
{
	char		cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/ds' && mkdir -p '%s/ds/_versions'", root, root);
	if (system(cmd) != 0)
		fprintf(stderr, "%s failed\n", cmd);
}

/* latest(s): the latest version, the naming, and whether a listing was needed */
static lt_code
latest(lt_store *s, uint64_t *v, lt_naming *naming, bool *listed)
{
	lt_code		rc;

	lists = 0;
	*v = 0;
	rc = lt_dataset_latest_version(s, "ds/", v, naming, &err);
	*listed = lists > 0;
	return rc;
}

#define CHECK_LATEST(s, want, want_naming, want_listed) do { \
	uint64_t v_; lt_naming n_; bool l_; \
	CHECK_OK(latest((s), &v_, &n_, &l_), err); \
	CHECK_EQ_INT(v_, (want)); CHECK_EQ_INT(n_, (want_naming)); CHECK_EQ_INT(l_, (want_listed)); } while (0)

TEST(hint_exact_and_stale)
{
	lt_store   *s = open_local();

	reset_dataset();
	for (uint64_t v = 1; v <= 5; v++)
		put_manifest(v, LT_NAMING_V2);
	put_hint("{\"version\":5}");
	CHECK_LATEST(s, 5, LT_NAMING_V2, false);
	/* a stale hint: probed forward to the end, still no listing */
	put_hint("{\"version\":2}");
	CHECK_LATEST(s, 5, LT_NAMING_V2, false);
	/*
	 * a commit after the hint by a writer that writes none: the probe would find it, but _versions/ changed
	 * after the hint, so the listing answers (the same for names added by temp files)
	 */
	put_manifest(6, LT_NAMING_V2);
	CHECK_LATEST(s, 6, LT_NAMING_V2, true);
	put_file("ds/_versions/18446744073709551608.manifest.tmp-1-0", "x");
	put_file("ds/_versions/.tmp_8.manifest_0000", "x");
	put_file("ds/_versions/d9223372036854775809.manifest", "x");
	CHECK_LATEST(s, 6, LT_NAMING_V2, true);
	/* a hint put in place after that, with whitespace and other members as a JSON writer may put them */
	put_hint(" { \"other\": 1, \"version\" : 6 }\n");
	CHECK_LATEST(s, 6, LT_NAMING_V2, false);
	put_hint("{\"version\":4}");
	CHECK_LATEST(s, 6, LT_NAMING_V2, false);
	drop_hint();
	CHECK_LATEST(s, 6, LT_NAMING_V2, true);
	lt_store_close(s);
}

TEST(hint_unusable)
{
	lt_store   *s = open_local();
	const char *bad[] = {"{\"version\":9}", "{\"version\":", "", "garbage", "{\"version\":0}", "{\"version\":-3}",
		"{\"version\":99999999999999999999999}", "{\"v\":5}"};

	reset_dataset();
	for (uint64_t v = 1; v <= 5; v++)
		put_manifest(v, LT_NAMING_V2);
	/* no hint, a hint past the end, or one that does not parse: the listing answers */
	CHECK_LATEST(s, 5, LT_NAMING_V2, true);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		put_hint(bad[i]);
		CHECK_LATEST(s, 5, LT_NAMING_V2, true);
	}
	/* a hint too big to be one */
	{
		char		big[1024];

		memset(big, ' ', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		memcpy(big + 500, "{\"version\":5}", 13);
		put_hint(big);
		CHECK_LATEST(s, 5, LT_NAMING_V2, true);
	}
	/*
	 * the hinted (newest) version's manifest is a directory: an error naming it (issue 15), never a silent
	 * read of version 5, which every commit would then fail to follow
	 */
	put_hint("{\"version\":7}");
	{
		char		name[64],
					path[512];
		uint64_t	v;
		lt_naming	n;
		bool		l;

		lt_manifest_name(7, LT_NAMING_V2, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/ds/_versions/%s", root, name);
		mkdir(path, 0755);
		CHECK_EQ_INT(latest(s, &v, &n, &l), LT_ECORRUPT);
		CHECK(strstr(err.msg, name) != NULL && strstr(err.msg, "is a directory") != NULL);
		/* a FIFO there: the same, without blocking */
		rmdir(path);
		CHECK(mkfifo(path, 0644) == 0);
		CHECK_EQ_INT(latest(s, &v, &n, &l), LT_ECORRUPT);
		CHECK(strstr(err.msg, name) != NULL && strstr(err.msg, "FIFO") != NULL);
		unlink(path);
		/* a FIFO as the version hint: an error naming it */
		snprintf(path, sizeof(path), "%s/ds/_versions/latest_version_hint.json", root);
		unlink(path);
		CHECK(mkfifo(path, 0644) == 0);
		CHECK_EQ_INT(latest(s, &v, &n, &l), LT_ECORRUPT);
		CHECK(strstr(err.msg, "latest_version_hint.json") != NULL && strstr(err.msg, "FIFO") != NULL);
		unlink(path);
	}
	lt_store_close(s);
}

TEST(v1_names)
{
	lt_store   *s = open_local();

	reset_dataset();
	for (uint64_t v = 1; v <= 12; v++)
		put_manifest(v, LT_NAMING_V1);
	put_hint("{\"version\":12}");
	CHECK_LATEST(s, 12, LT_NAMING_V1, false);
	put_hint("{\"version\":9}");
	CHECK_LATEST(s, 12, LT_NAMING_V1, false);
	drop_hint();
	CHECK_LATEST(s, 12, LT_NAMING_V1, true);	/* numeric, not lexical: 12 > 9 */
	lt_store_close(s);
}

TEST(gap_above_the_hint)
{
	lt_store   *s = open_local();

	/*
	 * 2 is tagged and the hint (stale) names it; a cleanup that ignores tags (Lance's
	 * error_if_tagged_old_versions=false) removed 3 and 4: probing from 2 would stop at the missing 3
	 */
	reset_dataset();
	for (uint64_t v = 1; v <= 5; v++)
		put_manifest(v, LT_NAMING_V2);
	put_hint("{\"version\":2}");
	drop_manifest(3, LT_NAMING_V2);
	drop_manifest(4, LT_NAMING_V2);
	dir_changes_after_hint();
	CHECK_LATEST(s, 5, LT_NAMING_V2, true);
	/* once a writer puts a fresh hint, the probe answers again */
	put_hint("{\"version\":5}");
	CHECK_LATEST(s, 5, LT_NAMING_V2, false);
	/* the removal of an old version after the hint: listed, and still right */
	drop_manifest(1, LT_NAMING_V2);
	dir_changes_after_hint();
	CHECK_LATEST(s, 5, LT_NAMING_V2, true);
	lt_store_close(s);
}

TEST(mixed_names)
{
	lt_store   *s = open_local();
	uint64_t	v;
	lt_naming	n;
	bool		listed;

	reset_dataset();
	for (uint64_t i = 1; i <= 3; i++)
		put_manifest(i, LT_NAMING_V2);
	put_hint("{\"version\":3}");
	put_manifest(4, LT_NAMING_V1);	/* the next version under the other naming */
	CHECK_CODE(latest(s, &v, &n, &listed), LT_ECORRUPT);
	CHECK(listed);
	CHECK(strstr(err.msg, "mixes") != NULL);
	lt_store_close(s);
}

TEST(no_dataset)
{
	lt_store   *s = open_local();
	uint64_t	v;
	lt_naming	n;
	bool		listed;

	reset_dataset();
	CHECK_CODE(latest(s, &v, &n, &listed), LT_ENOTFOUND);	/* _versions/ without a manifest */
	put_hint("{\"version\":1}");
	CHECK_CODE(latest(s, &v, &n, &listed), LT_ENOTFOUND);
	CHECK(strstr(err.msg, "holds no manifest") != NULL);
	CHECK_CODE(lt_dataset_latest_version(s, "nothing/", &v, &n, &err), LT_ENOTFOUND);
	CHECK(strstr(err.msg, "not a Lance dataset") != NULL);
	lt_store_close(s);
}

/*
 * After a change to _versions/, wait until its change time differs from c0 (file system clocks are coarse:
 * a change in the same tick keeps the time), touching the directory again every 2 ms, for at most a second.
 */
static void
wait_versions_changed(int64_t c0)
{
	char		path[512];

	snprintf(path, sizeof(path), "%s/ds/_versions/.tmp_nudge", root);
	for (int i = 0; i < 500 && ctime_ns("ds/_versions") == c0; i++)
	{
		struct timespec ts = {0, 2 * 1000 * 1000};

		nanosleep(&ts, NULL);
		put_file("ds/_versions/.tmp_nudge", "");
		unlink(path);
	}
}

/*
 * The answer remembered while _versions/ keeps its change time: one stat, no probes; a new manifest (its
 * change time later) is seen at once.  Only settled change times are trusted: by default (2 s) a dataset
 * changed just now is looked up in full each time.
 */
TEST(remembered_while_unchanged)
{
	lt_store   *s = open_local();
	int64_t		c0;

	reset_dataset();
	for (uint64_t v = 1; v <= 3; v++)
		put_manifest(v, LT_NAMING_V2);
	put_hint("{\"version\":3}");
	lt_dataset_latest_settle(0);
	CHECK_LATEST(s, 3, LT_NAMING_V2, false);
	stats = 0;
	CHECK_LATEST(s, 3, LT_NAMING_V2, false);
	CHECK_EQ_INT(stats, 1);
	/* a commit: _versions/ shows a later change time (waited for, file system clocks being coarse) */
	c0 = ctime_ns("ds/_versions");
	put_manifest(4, LT_NAMING_V2);
	wait_versions_changed(c0);
	CHECK_LATEST(s, 4, LT_NAMING_V2, true);
	put_hint("{\"version\":4}");
	CHECK_LATEST(s, 4, LT_NAMING_V2, false);
	stats = 0;
	CHECK_LATEST(s, 4, LT_NAMING_V2, false);
	CHECK_EQ_INT(stats, 1);
	/* a removal is a change too */
	c0 = ctime_ns("ds/_versions");
	drop_manifest(4, LT_NAMING_V2);
	wait_versions_changed(c0);
	CHECK_LATEST(s, 3, LT_NAMING_V2, true);
	/* the default margin: a dataset changed just now is not remembered */
	lt_dataset_latest_settle(-1);
	put_hint("{\"version\":3}");
	CHECK_LATEST(s, 3, LT_NAMING_V2, false);
	stats = 0;
	CHECK_LATEST(s, 3, LT_NAMING_V2, false);
	CHECK(stats > 1);
	lt_store_close(s);
}

int
main(void)
{
	char		cmd[300];

	snprintf(root, sizeof(root), "%s/lt-unit-latest.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
	{
		perror("mkdtemp");
		return 1;
	}
	RUN(hint_exact_and_stale);
	RUN(hint_unusable);
	RUN(v1_names);
	RUN(gap_above_the_hint);
	RUN(mixed_names);
	RUN(no_dataset);
	RUN(remembered_while_unchanged);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", root);
	return unit_report("latest version");
}
