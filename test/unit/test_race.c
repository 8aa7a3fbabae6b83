/*
 * Many writers at once on one local dataset (a copy of test/data/filter_scan):
 * child processes each make a series of commits — appends of a copied data
 * file and deletes of rows of their own — through real put-if-absent races
 * on the file system.  Afterwards there is exactly one version per commit,
 * every appended fragment is there once, every deleted row is gone, and no
 * other row is lost.
 */
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

#define WRITERS 4
#define ROUNDS 6				/* each round: one append, one delete */

static lt_error err;

/* One writer: ROUNDS appends of fragment 2's file and ROUNDS single-row deletes in fragment 0. */
static int
writer(const char *dir, int w, int *max_attempts)
{
	lt_store   *s;

	if (lt_store_local_open(dir, &s, &err) != LT_OK)
		return 1;
	for (int r = 0; r < ROUNDS; r++)
	{
		for (int kind = 0; kind < 2; kind++)
		{
			lt_dataset *ds;
			lt_txn	   *t;
			lt_commit_result res;
			uint64_t	fid;

			if (lt_dataset_open(s, "", NULL, &ds, &err) != LT_OK || lt_txn_begin(ds, &t, &err) != LT_OK)
				return fprintf(stderr, "writer %d: %s\n", w, err.msg), 1;
			if (kind == 0)
			{
				const Lt__Pb__DataFragment *f = NULL;
				lt_written_file wf = {0};

				for (size_t i = 0; i < ds->n_fragments; i++)
					if (ds->fragments[i]->id == 2)
						f = ds->fragments[i];
				wf.name = f->files[0]->path;	/* the same data file again: a second fragment over it */
				wf.n_fields = (int) f->files[0]->n_fields;
				wf.field_ids = f->files[0]->fields;
				wf.column_indices = f->files[0]->column_indices;
				wf.major = f->files[0]->file_major_version;
				wf.minor = f->files[0]->file_minor_version;
				wf.size = f->files[0]->file_size_bytes;
				wf.num_rows = f->physical_rows;
				if (lt_txn_add_fragment(t, 1, &wf, NULL, &fid, &err) != LT_OK)
					return fprintf(stderr, "writer %d: %s\n", w, err.msg), 1;
			}
			else
			{
				/* offsets 100 + w*ROUNDS + r of fragment 0: ids 100..123, live except id % 13 == 5 */
				uint32_t	off = (uint32_t) (100 + w * ROUNDS + r);

				if (lt_txn_delete_rows(t, 0, &off, 1, &err) != LT_OK)
					return fprintf(stderr, "writer %d: %s\n", w, err.msg), 1;
			}
			/* correctness, not fairness, is under test: a loaded machine may need many attempts */
			if (lt_txn_commit(t, &(lt_commit_options) {100, NULL}, &res, &err) != LT_OK)
				return fprintf(stderr, "writer %d: %s\n", w, err.msg), 1;
			if (res.attempts > *max_attempts)
				*max_attempts = res.attempts;
			lt_txn_free(t);
			lt_dataset_close(ds);
		}
	}
	lt_store_close(s);
	return 0;
}

TEST(writers_race)
{
	char		dir[] = "/tmp/lt-race-XXXXXX";
	char		cmd[2048];
	pid_t		pids[WRITERS];
	int			pipes[WRITERS][2];
	int			max_attempts = 0;
	lt_store   *s;
	lt_dataset *before, *after;
	uint64_t	del_live = 0, base_rows;
	uint32_t   *offs;
	uint64_t	n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/filter_scan/.' '%s'", unit_data_dir(), dir);
	CHECK_EQ_INT(system(cmd), 0);
	CHECK_OK(lt_store_local_open(dir, &s, &err), err);
	CHECK_OK(lt_dataset_open(s, "", NULL, &before, &err), err);
	base_rows = lt_dataset_count_rows(before);
	/* how many of the rows the writers delete are live now */
	CHECK_OK(lt_fragment_deleted_offsets(before, before->fragments[0], &offs, &n, &err), err);
	for (uint32_t o = 100; o < 100 + WRITERS * ROUNDS; o++)
	{
		bool		gone = false;

		for (uint64_t i = 0; i < n; i++)
			gone |= offs[i] == o;
		del_live += !gone;
	}
	lt_free(offs);

	for (int w = 0; w < WRITERS; w++)
	{
		CHECK(pipe(pipes[w]) == 0);
		if ((pids[w] = fork()) == 0)
		{
			int			a = 0;
			int			rc = writer(dir, w, &a);

			if (write(pipes[w][1], &a, sizeof(a)) != sizeof(a))
				rc = 1;
			_exit(rc);
		}
	}
	for (int w = 0; w < WRITERS; w++)
	{
		int			status = -1, a = 0;

		CHECK(waitpid(pids[w], &status, 0) == pids[w]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (read(pipes[w][0], &a, sizeof(a)) == sizeof(a) && a > max_attempts)
			max_attempts = a;
		close(pipes[w][0]);
		close(pipes[w][1]);
	}
	printf("writers_race: %d writers x %d commits, at most %d attempts for one commit\n", WRITERS, 2 * ROUNDS,
		   max_attempts);

	CHECK_OK(lt_dataset_open(s, "", NULL, &after, &err), err);
	/* a delete of a row that was already gone commits nothing */
	CHECK_EQ_INT(after->version, before->version + WRITERS * ROUNDS + del_live);
	CHECK_EQ_INT(after->n_fragments, before->n_fragments + WRITERS * ROUNDS);
	CHECK_EQ_INT(lt_dataset_count_rows(after),
				 base_rows - del_live + (uint64_t) WRITERS * ROUNDS * before->fragments[2]->physical_rows);
	{
		uint64_t	next = after->manifest->max_fragment_id;

		CHECK_EQ_INT(next, before->manifest->max_fragment_id + WRITERS * ROUNDS);
	}
	/* and every fragment scans */
	for (size_t i = 0; i < after->n_fragments; i++)
	{
		lt_scan_options o = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;
		const lt_field *f = after->schema->fields[0];
		uint64_t	rows = 0;

		o.n_fields = 1;
		o.fields = &f;
		CHECK_OK(lt_fragment_scanner_open(after, after->fragments[i], &o, &sc, &err), err);
		while (sc && lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
			rows += b->length;
		lt_fragment_scanner_free(sc);
		CHECK_EQ_INT(rows, lt_fragment_live_rows(after->fragments[i]));
	}
	lt_dataset_close(after);
	lt_dataset_close(before);
	lt_store_close(s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_EQ_INT(system(cmd), 0);
}

int
main(void)
{
	RUN(writers_race);
	return unit_report("race");
}
