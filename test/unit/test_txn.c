/*
 * Unit tests of lt_txn (and lt_deletion_write): a Lance-written dataset
 * (test/data/filter_scan: 3 fragments of 1200/1000/800 rows, deletions, ids
 * 0..2999 in column `id`) is loaded into the in-memory store; transactions
 * append fragments (copies of its data files), delete rows, remove
 * fragments, roll back to savepoints, scan their own writes, and race each
 * other.  Every result is read back through lt_dataset_open and the
 * fragment scanner.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/lt_store.h"
#include "lt_alloc.h"
#include "lt_dataset.h"
#include "lt_deletion.h"
#include "lt_scan.h"
#include "lt_table.pb-c.h"
#include "lt_transaction.pb-c.h"
#include "lt_txn.h"
#include "unit.h"

static lt_error err;

#define PREFIX "t/"

/* Copy a directory tree of the test data into the store under prefix. */
static void
load_tree(lt_store *s, const char *rel, const char *prefix)
{
	char		path[1024];
	DIR		   *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%s", unit_data_dir(), rel);
	if (!(d = opendir(path)))
	{
		fprintf(stderr, "cannot open %s\n", path);
		unit_failures++;
		return;
	}
	while ((e = readdir(d)))
	{
		char		sub[1024], dst[1024], full[1200];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name);
		snprintf(dst, sizeof(dst), "%s%s", prefix, e->d_name);
		snprintf(full, sizeof(full), "%s/%s", unit_data_dir(), sub);
		if (stat(full, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
		{
			char		p2[1100];

			snprintf(p2, sizeof(p2), "%s/", dst);
			load_tree(s, sub, p2);
		}
		else
		{
			size_t		len;
			uint8_t    *buf = unit_read_file(sub, &len);

			CHECK_OK(lt_store_mem_put(s, dst, buf, len, &err), err);
			free(buf);
		}
	}
	closedir(d);
}

static lt_store *
fresh_store(void)
{
	lt_store   *s = NULL;

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	load_tree(s, "filter_scan", PREFIX);
	return s;
}

static lt_dataset *
open_latest(lt_store *s)
{
	lt_dataset *ds = NULL;

	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	return ds;
}

/* A copy of fragment `src_frag`'s data file under a fresh name, described as the writer would. */
static void
copy_fragment_file(lt_store *s, lt_dataset *ds, uint64_t src_frag, lt_written_file *wf, const char *name)
{
	const Lt__Pb__DataFragment *f = NULL;
	char		src[512], dst[512];
	uint8_t    *buf;
	uint64_t	len;

	for (size_t i = 0; i < ds->n_fragments; i++)
		if (ds->fragments[i]->id == src_frag)
			f = ds->fragments[i];
	memset(wf, 0, sizeof(*wf));
	if (!f)
	{
		CHECK(f != NULL);
		return;
	}
	snprintf(src, sizeof(src), PREFIX "data/%s", f->files[0]->path);
	snprintf(dst, sizeof(dst), PREFIX "data/%s", name);
	CHECK_OK(lt_store_read_all(s, src, 1 << 30, &buf, &len, &err), err);
	CHECK_OK(lt_store_mem_put(s, dst, buf, len, &err), err);
	lt_free(buf);
	wf->name = (char *) name;
	wf->n_fields = (int) f->files[0]->n_fields;
	wf->field_ids = f->files[0]->fields;
	wf->column_indices = f->files[0]->column_indices;
	wf->major = f->files[0]->file_major_version;
	wf->minor = f->files[0]->file_minor_version;
	wf->size = len;
	wf->num_rows = f->physical_rows;
}

/* Every live `id` value of a dataset, sorted, and their count. */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a, y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

static int64_t *
scan_ids(lt_dataset *ds, uint64_t *n)
{
	int64_t    *ids = NULL;
	size_t		cap = 0;
	const lt_field *idf = ds->schema->fields[0];

	*n = 0;
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		lt_scan_options o = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

		o.n_fields = 1;
		o.fields = &idf;
		if (lt_fragment_scanner_open(ds, ds->fragments[i], &o, &sc, &err) != LT_OK)
		{
			CHECK_OK(LT_EIO, err);
			continue;
		}
		while (lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
		{
			if (*n + (size_t) b->length > cap)
			{
				cap = (*n + b->length) * 2;
				ids = realloc(ids, cap * sizeof(int64_t));
			}
			memcpy(ids + *n, b->columns[0]->values, b->length * sizeof(int64_t));
			*n += b->length;
		}
		lt_fragment_scanner_free(sc);
	}
	qsort(ids, *n, sizeof(int64_t), cmp_i64);
	return ids;
}

/* How many times v occurs in sorted ids. */
static int
occurs(const int64_t *ids, uint64_t n, int64_t v)
{
	int			c = 0;

	for (uint64_t i = 0; i < n; i++)
		c += ids[i] == v;
	return c;
}

static const Lt__Pb__DataFragment *
frag_by_id(lt_dataset *ds, uint64_t id)
{
	for (size_t i = 0; i < ds->n_fragments; i++)
		if (ds->fragments[i]->id == id)
			return ds->fragments[i];
	return NULL;
}

/* ---- tests ----------------------------------------------------------------- */

TEST(append)
{
	lt_store   *s = fresh_store();
	lt_dataset *ds = open_latest(s), *after;
	lt_txn	   *t = NULL;
	lt_written_file wf;
	uint64_t	fid = 0, before_rows = lt_dataset_count_rows(ds), n;
	lt_commit_result res;
	int64_t    *ids;

	CHECK_EQ_INT(ds->version, 5);
	copy_fragment_file(s, ds, 2, &wf, "copy-a.lance");
	CHECK_OK(lt_txn_begin(ds, &t, &err), err);
	CHECK(lt_txn_is_empty(t));
	CHECK_OK(lt_txn_add_fragment(t, 1, &wf, NULL, &fid, &err), err);
	CHECK_EQ_INT(fid, 3);
	CHECK(!lt_txn_is_empty(t));
	CHECK_OK(lt_txn_commit(t, NULL, &res, &err), err);
	CHECK_EQ_INT(res.op, LT_OP_APPEND);
	CHECK_EQ_INT(res.version, 6);
	CHECK_EQ_INT(res.attempts, 1);
	CHECK_EQ_INT(res.rows_added, 800);
	CHECK_EQ_INT(res.fragments_added, 1);
	lt_txn_free(t);

	after = open_latest(s);
	CHECK_EQ_INT(after->version, 6);
	CHECK_EQ_INT(after->n_fragments, 4);
	CHECK_EQ_INT(after->manifest->max_fragment_id, 3);
	CHECK_EQ_INT(lt_dataset_count_rows(after), before_rows + 800);
	CHECK(after->transaction && after->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_APPEND);
	CHECK(after->transaction && after->transaction->read_version == 5);
	CHECK(strcmp(after->manifest->writer_version->library, "lance") == 0);
	CHECK_EQ_INT(after->manifest->reader_feature_flags, ds->manifest->reader_feature_flags);
	/* the transaction file holds the same transaction */
	{
		char		path[512];
		uint8_t    *buf;
		uint64_t	len;
		Lt__Pb__Transaction *tx;

		snprintf(path, sizeof(path), PREFIX "_transactions/%s", after->manifest->transaction_file);
		CHECK_OK(lt_store_read_all(s, path, 1 << 20, &buf, &len, &err), err);
		tx = lt__pb__transaction__unpack(NULL, len, buf);
		CHECK(tx && tx->operation_case == LT__PB__TRANSACTION__OPERATION_APPEND && tx->append->n_fragments == 1);
		CHECK(tx && strncmp(after->manifest->transaction_file, "5-", 2) == 0 &&
			  strstr(after->manifest->transaction_file, tx->uuid) != NULL);
		if (tx)
			lt__pb__transaction__free_unpacked(tx, NULL);
		lt_free(buf);
	}
	ids = scan_ids(after, &n);
	CHECK_EQ_INT(n, before_rows + 800);
	CHECK_EQ_INT(occurs(ids, n, 2999), 2);		/* fragment 2's last row, now twice */
	CHECK_EQ_INT(occurs(ids, n, 2300), 1);		/* deleted in fragment 2, live in the copy */
	free(ids);
	lt_dataset_close(after);
	lt_dataset_close(ds);
	lt_store_close(s);
}

TEST(empty_commit)
{
	lt_store   *s = fresh_store();
	lt_dataset *ds = open_latest(s);
	lt_txn	   *t = NULL;
	lt_commit_result res;
	uint64_t	latest;
	lt_naming	naming;

	CHECK_OK(lt_txn_begin(ds, &t, &err), err);
	CHECK_OK(lt_txn_commit(t, NULL, &res, &err), err);
	CHECK_EQ_INT(res.op, LT_OP_NONE);
	CHECK_EQ_INT(res.version, 0);
	CHECK_OK(lt_dataset_latest_version(s, PREFIX, &latest, &naming, &err), err);
	CHECK_EQ_INT(latest, 5);
	lt_txn_free(t);
	lt_dataset_close(ds);
	lt_store_close(s);
}

TEST(delete_rows)
{
	lt_store   *s = fresh_store();
	lt_dataset *ds = open_latest(s), *after;
	lt_txn	   *t = NULL;
	lt_commit_result res;
	uint64_t	before = lt_dataset_count_rows(ds), n;
	uint32_t	offs[] = {0, 1, 5, 999, 1};	/* a duplicate; ids 1201 and 2199 are already deleted */
	int64_t    *ids;
	lt_commit_options opts = {0, "id IN (1200, 1201, 2199)"};

	CHECK_OK(lt_txn_begin(ds, &t, &err), err);
	CHECK_OK(lt_txn_delete_rows(t, 1, offs, 5, &err), err);
	CHECK_CODE(lt_txn_delete_rows(t, 1, (uint32_t[]) {1000}, 1, &err), LT_EINVALID);
	CHECK_CODE(lt_txn_delete_rows(t, 7, offs, 1, &err), LT_EINVALID);
	CHECK_OK(lt_txn_commit(t, &opts, &res, &err), err);
	CHECK_EQ_INT(res.op, LT_OP_DELETE);
	CHECK_EQ_INT(res.rows_deleted, 2);
	CHECK_EQ_INT(res.fragments_updated, 1);
	lt_txn_free(t);
	after = open_latest(s);
	CHECK_EQ_INT(lt_dataset_count_rows(after), before - 2);
	CHECK(after->transaction && after->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_DELETE &&
		  strcmp(after->transaction->delete_->predicate, opts.predicate) == 0 &&
		  after->transaction->delete_->n_updated_fragments == 1);
	{
		const Lt__Pb__DataFragment *f = frag_by_id(after, 1);

		CHECK(f && f->deletion_file && f->deletion_file->read_version == 5 &&
			  f->deletion_file->file_type == LT__PB__DELETION_FILE__FILE_TYPE__ARROW_ARRAY);
	}
	ids = scan_ids(after, &n);
	CHECK_EQ_INT(n, before - 2);
	CHECK_EQ_INT(occurs(ids, n, 1200), 0);
	CHECK_EQ_INT(occurs(ids, n, 1205), 0);
	CHECK_EQ_INT(occurs(ids, n, 1201), 0);
	CHECK_EQ_INT(occurs(ids, n, 2199), 0);
	CHECK_EQ_INT(occurs(ids, n, 1202), 1);
	free(ids);
	lt_dataset_close(after);
	lt_dataset_close(ds);
	lt_store_close(s);
}

TEST(delete_all_removes_fragment)
{
	lt_store   *s = fresh_store();
	lt_dataset *ds = open_latest(s), *after;
	lt_txn	   *t = NULL;
	lt_commit_result res;
	uint32_t   *all = malloc(800 * sizeof(uint32_t));

	for (uint32_t i = 0; i < 800; i++)
		all[i] = i;
	CHECK_OK(lt_txn_begin(ds, &t, &err), err);
	CHECK_OK(lt_txn_delete_rows(t, 2, all, 800, &err), err);
	CHECK_OK(lt_txn_remove_fragment(t, 0, &err), err);
	CHECK_OK(lt_txn_commit(t, NULL, &res, &err), err);
	CHECK_EQ_INT(res.op, LT_OP_DELETE);
	CHECK_EQ_INT(res.fragments_removed, 2);
	CHECK_EQ_INT(res.fragments_updated, 0);
	lt_txn_free(t);
	after = open_latest(s);
	CHECK_EQ_INT(after->n_fragments, 1);
	CHECK(frag_by_id(after, 1) != NULL);
	CHECK(after->transaction && after->transaction->delete_ && after->transaction->delete_->n_deleted_fragment_ids == 2);
	CHECK_EQ_INT(after->manifest->max_fragment_id, 2);
	free(all);
	lt_dataset_close(after);
	lt_dataset_close(ds);
	lt_store_close(s);
}

TEST(update_and_bitmap_deletions)
{
	lt_store   *s = fresh_store();
	lt_dataset *ds = open_latest(s), *after;
	lt_txn	   *t = NULL;
	lt_commit_result res;
	lt_written_file wf;
	uint64_t	fid, n, before = lt_dataset_count_rows(ds);
	uint32_t   *many = malloc(1100 * sizeof(uint32_t));
	int64_t    *ids;

	/* rows 0..1099 of fragment 0 (some already deleted) and a new fragment: an Update */
	for (uint32_t i = 0; i < 1100; i++)
		many[i] = i;
	copy_fragment_file(s, ds, 2, &wf, "copy-u.lance");
	CHECK_OK(lt_txn_begin(ds, &t, &err), err);
	CHECK_OK(lt_txn_delete_rows(t, 0, many, 1100, &err), err);
	CHECK_OK(lt_txn_add_fragment(t, 1, &wf, NULL, &fid, &err), err);
	CHECK_OK(lt_txn_commit(t, NULL, &res, &err), err);
	CHECK_EQ_INT(res.op, LT_OP_UPDATE);
	CHECK_EQ_INT(res.fragments_added, 1);
	CHECK_EQ_INT(res.fragments_updated, 1);
	lt_txn_free(t);
	after = open_latest(s);
	CHECK(after->transaction && after->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_UPDATE &&
		  after->transaction->update->n_fields_modified == 0 && after->transaction->update->n_new_fragments == 1);
	ids = scan_ids(after, &n);
	CHECK_EQ_INT(n, before - res.rows_deleted + 800);
	CHECK_EQ_INT(occurs(ids, n, 1099), 0);
	CHECK_EQ_INT(occurs(ids, n, 1100), 1);
	free(ids);
	lt_dataset_close(after);
	lt_dataset_close(ds);
	lt_store_close(s);
	free(many);
}

TEST(deletion_file_kinds)
{
	lt_store   *s = NULL;
	uint32_t   *offs = malloc(7000 * sizeof(uint32_t));
	lt_deletion_file df;
	lt_deletion_vector *dv = NULL;

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	for (uint32_t i = 0; i < 7000; i++)
		offs[i] = i * 3 + 1;
	/* 5000: still .arrow; 5001: .bin */
	CHECK_OK(lt_deletion_write(s, "d", 4, 9, offs, 5000, &df, &err), err);
	{
		char	   *rel = lt_deletion_path(4, 9, df.id, df.type), path[256];
		uint8_t    *buf = NULL;
		uint64_t	len;

		snprintf(path, sizeof(path), "d/%s", rel);
		CHECK_OK(lt_store_read_all(s, path, 1 << 20, &buf, &len, &err), err);
		lt_free(buf);
		lt_free(rel);
	}
	CHECK_OK(lt_deletion_write(s, "", 4, 9, offs, 5000, &df, &err), err);
	CHECK_EQ_INT(df.type, LT_DELETION_ARROW);
	CHECK_EQ_INT(df.num_deleted_rows, 5000);
	CHECK_OK(lt_deletion_read(s, 4, &df, 30000, &dv, &err), err);
	CHECK(dv && dv->count == 5000 && memcmp(dv->offsets, offs, 5000 * 4) == 0);
	lt_deletion_free(dv);
	/* the reader above is relative to the store root: write at the root too */
	CHECK_OK(lt_deletion_write(s, "", 4, 9, offs, 5001, &df, &err), err);
	CHECK_EQ_INT(df.type, LT_DELETION_BITMAP);
	CHECK_OK(lt_deletion_read(s, 4, &df, 30000, &dv, &err), err);
	CHECK(dv && dv->count == 5001 && memcmp(dv->offsets, offs, 5001 * 4) == 0);
	lt_deletion_free(dv);
	CHECK_OK(lt_deletion_write(s, "", 4, 9, offs, 1, &df, &err), err);
	CHECK_OK(lt_deletion_read(s, 4, &df, 30000, &dv, &err), err);
	CHECK(dv && dv->count == 1 && dv->offsets[0] == 1);
	lt_deletion_free(dv);
	CHECK_CODE(lt_deletion_write(s, "", 4, 9, (uint32_t[]) {3, 3}, 2, &df, &err), LT_EINVALID);
	CHECK_CODE(lt_deletion_write(s, "", 4, 9, offs, 0, &df, &err), LT_EINVALID);
	free(offs);
	lt_store_close(s);
}

int
main(void)
{
	RUN(append);
	RUN(empty_commit);
	RUN(delete_rows);
	RUN(delete_all_removes_fragment);
	RUN(update_and_bitmap_deletions);
	RUN(deletion_file_kinds);
	return unit_report("txn");
}
