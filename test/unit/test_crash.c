/*
 * Crash safety of lt_txn_commit: a child process commits an Update (rows
 * deleted from fragment 0, a new fragment) on a local copy of
 * test/data/filter_scan and is SIGKILLed at one commit point (through
 * lt_commit_fault_hook); the dataset must then open at the old or the new
 * version, never in between, scan completely, and take the next commit.
 *
 *   test_crash                 every point, checked with lt_fdw's reader (a unit test)
 *   test_crash DIR POINT       one child commit in DIR killed at POINT (start, deletions, txn, manifest-torn,
 *                              manifest) or not at all (none); test/interop/txn.sh then asks the reference
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "txn/lt_txn.h"
#include "unit.h"

static lt_error err;

static const struct
{
	const char *name;
	int			point;			/* -1: no crash */
	bool		committed;		/* the new version exists after the crash */
}			points[] = {
	{"none", -1, true},
	{"start", LT_COMMIT_START, false},
	{"deletions", LT_COMMIT_AFTER_DELETION_FILES, false},
	{"txn", LT_COMMIT_AFTER_TXN_FILE, false},
	{"manifest-torn", LT_COMMIT_MID_MANIFEST, false},
	{"manifest", LT_COMMIT_AFTER_MANIFEST, true},
};

static int	kill_at = -1;

static void
die_at(lt_commit_point p)
{
	if ((int) p == kill_at)
		raise(SIGKILL);
}

static int
copy_tree(const char *src, const char *dst)
{
	char		cmd[4096];

	snprintf(cmd, sizeof(cmd), "cp -r '%s/.' '%s'", src, dst);
	return system(cmd);
}

/* The commit under test, in the calling process. */
static int
commit_update(const char *dir)
{
	lt_store   *s;
	lt_dataset *ds;
	lt_txn	   *t;
	lt_commit_result res;
	const Lt__Pb__DataFile *d;
	lt_written_file wf = {0};
	uint8_t    *buf;
	uint64_t	len, fid;
	char		from[512];
	uint32_t	offs[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

	if (lt_store_local_open(dir, &s, &err) != LT_OK || lt_dataset_open(s, "", NULL, &ds, &err) != LT_OK)
		return fprintf(stderr, "%s\n", err.msg), 1;
	d = ds->fragments[ds->n_fragments - 1]->files[0];
	snprintf(from, sizeof(from), "data/%s", d->path);
	if (lt_store_read_all(s, from, UINT64_MAX, &buf, &len, &err) != LT_OK ||
		lt_store_put(s, "data/crash-copy.lance", buf, len, &err) != LT_OK)
		return fprintf(stderr, "%s\n", err.msg), 1;
	lt_free(buf);
	wf.name = "crash-copy.lance";
	wf.n_fields = (int) d->n_fields;
	wf.field_ids = d->fields;
	wf.column_indices = d->column_indices;
	wf.major = d->file_major_version;
	wf.minor = d->file_minor_version;
	wf.size = len;
	wf.num_rows = ds->fragments[ds->n_fragments - 1]->physical_rows;
	if (lt_txn_begin(ds, &t, &err) != LT_OK || lt_txn_delete_rows(t, ds->fragments[0]->id, offs, 10, &err) != LT_OK ||
		lt_txn_add_fragment(t, 1, &wf, NULL, &fid, &err) != LT_OK)
		return fprintf(stderr, "%s\n", err.msg), 1;
	lt_commit_fault_hook = die_at;
	if (lt_txn_commit(t, NULL, &res, &err) != LT_OK)
		return fprintf(stderr, "%s\n", err.msg), 1;
	lt_txn_free(t);
	lt_dataset_close(ds);
	lt_store_close(s);
	return 0;
}

/* Run commit_update in a child killed at point i; true when it died as planned. */
static bool
crash_child(const char *dir, int i)
{
	pid_t		pid = fork();
	int			status;

	if (pid == 0)
	{
		kill_at = points[i].point;
		_exit(commit_update(dir));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	if (points[i].point < 0)
		return WIFEXITED(status) && WEXITSTATUS(status) == 0;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/* Live rows among the first 10 of fragment 0 (what commit_update deletes). */
static int64_t
live_first10(const char *dir)
{
	lt_store   *s;
	lt_dataset *ds;
	uint32_t   *offs = NULL;
	uint64_t	n = 0;
	int64_t		live = 10;

	if (lt_store_local_open(dir, &s, &err) != LT_OK || lt_dataset_open(s, "", NULL, &ds, &err) != LT_OK)
		return -1;
	if (lt_fragment_deleted_offsets(ds, ds->fragments[0], &offs, &n, &err) != LT_OK)
		live = -1;
	for (uint64_t i = 0; i < n && live >= 0; i++)
		live -= offs[i] < 10;
	lt_free(offs);
	lt_dataset_close(ds);
	lt_store_close(s);
	return live;
}

/* Open the latest version and scan every fragment; its live rows, or -1. */
static int64_t
read_all(const char *dir, uint64_t *version)
{
	lt_store   *s;
	lt_dataset *ds;
	int64_t		rows = 0;

	if (lt_store_local_open(dir, &s, &err) != LT_OK)
		return -1;
	if (lt_dataset_open(s, "", NULL, &ds, &err) != LT_OK)
	{
		lt_store_close(s);
		return -1;
	}
	*version = ds->version;
	for (size_t i = 0; i < ds->n_fragments && rows >= 0; i++)
	{
		lt_scan_options o = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;
		const lt_field *f = ds->schema->fields[0];

		o.n_fields = 1;
		o.fields = &f;
		if (lt_fragment_scanner_open(ds, ds->fragments[i], &o, &sc, &err) != LT_OK)
		{
			rows = -1;
			break;
		}
		for (;;)
		{
			if (lt_fragment_scanner_next(sc, &b, &err) != LT_OK)
			{
				rows = -1;
				break;
			}
			if (!b)
				break;
			rows += b->length;
		}
		lt_fragment_scanner_free(sc);
	}
	if (rows >= 0 && (uint64_t) rows != lt_dataset_count_rows(ds))
		rows = -1;
	lt_dataset_close(ds);
	lt_store_close(s);
	return rows;
}

TEST(crash_points)
{
	char		src[1024];
	int64_t		old_rows = -1, new_rows = -1;
	uint64_t	v;

	/* "none" runs first: the new version's row count is the one every committed crash must show */
	snprintf(src, sizeof(src), "%s/filter_scan", unit_data_dir());
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
	{
		char		dir[] = "/tmp/lt-crash-XXXXXX";
		char		rm[128];
		uint64_t	version = 0;
		int64_t		rows;

		unit_current = points[i].name;
		CHECK(mkdtemp(dir) != NULL);
		CHECK_EQ_INT(copy_tree(src, dir), 0);
		old_rows = read_all(dir, &v);
		CHECK(old_rows > 0);
		if (i == 0)
			new_rows = old_rows - live_first10(dir) + 800;	/* the copied fragment's 800 rows are all live */
		CHECK(crash_child(dir, (int) i));
		rows = read_all(dir, &version);
		CHECK_OK(rows < 0 ? err.code : LT_OK, err);
		if (points[i].committed)
		{
			CHECK_EQ_INT(version, v + 1);
			CHECK_EQ_INT(rows, new_rows);
		}
		else
		{
			CHECK_EQ_INT(version, v);
			CHECK_EQ_INT(rows, old_rows);
		}
		/* whatever the crash left, the next commit goes through */
		CHECK_EQ_INT(commit_update(dir), 0);
		rows = read_all(dir, &version);
		CHECK_EQ_INT(version, v + (points[i].committed ? 2 : 1));
		snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
		CHECK_EQ_INT(system(rm), 0);
	}
}

int
main(int argc, char **argv)
{
	if (argc == 3)
	{
		for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
			if (strcmp(argv[2], points[i].name) == 0)
			{
				if (!crash_child(argv[1], (int) i))
					return fprintf(stderr, "test_crash: the child did not end as planned at %s\n", argv[2]), 1;
				return 0;
			}
		fprintf(stderr, "test_crash: unknown point %s\n", argv[2]);
		return 2;
	}
	RUN(crash_points);
	return unit_report("crash");
}
