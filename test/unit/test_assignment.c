/*
 * Unit tests of field assignment state (src/lance/assignment/, txn/lt_txn_assign.c): the root and
 * bitmap encodings (round trip, every corruption caught), the in-memory entry operations, and the
 * commits on a Lance-written dataset (test/data/filter_scan: fragments 0..2 of 1200/1000/800 rows)
 * in the in-memory store: tracking with an initial state, writes that assign the fragments they add,
 * deletions that leave the state alone, untouched roots reused, rebases merging concurrent state,
 * a concurrent change of the tracked fields conflicting, the writer feature flag.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <roaring/roaring.h>

#include "assignment/lt_assignment.h"
#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "proto/lt_table.pb-c.h"
#include "txn/lt_txn.h"
#include "unit.h"
#include "unit_store.h"

static lt_error err;

#define PREFIX "t/"

static lt_dataset *
open_latest(lt_store *s)
{
	lt_dataset *ds = NULL;

	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	return ds;
}

/* A copy of fragment 0's data file under a fresh name, described as the writer would. */
static void
copy_file(lt_store *s, lt_dataset *ds, lt_written_file *wf, const char *name)
{
	const Lt__Pb__DataFragment *f = ds->fragments[0];
	char		src[512], dst[512];
	uint8_t    *buf;
	uint64_t	len;

	snprintf(src, sizeof(src), PREFIX "data/%s", f->files[0]->path);
	snprintf(dst, sizeof(dst), PREFIX "data/%s", name);
	CHECK_OK(lt_store_read_all(s, src, 1 << 30, &buf, &len, &err), err);
	CHECK_OK(lt_store_mem_put(s, dst, buf, len, &err), err);
	lt_free(buf);
	memset(wf, 0, sizeof(*wf));
	wf->name = (char *) name;
	wf->n_fields = (int) f->files[0]->n_fields;
	wf->field_ids = f->files[0]->fields;
	wf->column_indices = f->files[0]->column_indices;
	wf->major = f->files[0]->file_major_version;
	wf->minor = f->files[0]->file_minor_version;
	wf->size = len;
	wf->num_rows = f->physical_rows;
}

static roaring_bitmap_t *
range_bitmap(uint32_t from, uint32_t to, uint32_t step)
{
	roaring_bitmap_t *r = roaring_bitmap_create();

	for (uint32_t i = from; i < to; i += step)
		roaring_bitmap_add(r, i);
	return r;
}

/* The kind of field_id in fragment_id at ds, and the assigned count. */
static lt_assign_kind
kind_at(lt_dataset *ds, int32_t field_id, uint64_t fragment_id, uint64_t *count)
{
	lt_assign_field *f = NULL;
	lt_assign_kind k = LT_ASSIGN_NONE;
	const roaring_bitmap_t *rows = NULL;
	uint64_t	phys = 0;

	for (size_t i = 0; i < ds->n_fragments; i++)
		if (ds->fragments[i]->id == fragment_id)
			phys = ds->fragments[i]->physical_rows;
	CHECK_OK(lt_assign_load(ds, field_id, &f, &err), err);
	CHECK(f != NULL);
	if (!f)
		return LT_ASSIGN_NONE;
	CHECK_OK(lt_assign_fragment(f, fragment_id, phys, &k, &rows, &err), err);
	if (count)
		*count = k == LT_ASSIGN_ALL ? phys : rows ? roaring_bitmap_get_cardinality(rows) : 0;
	lt_assign_free(f);
	return k;
}

TEST(encodings_round_trip_and_catch_damage)
{
	lt_dataset	fake = {0};
	lt_assign_field *f = NULL, *g = NULL;
	uint8_t    *buf = NULL;
	size_t		len = 0;
	roaring_bitmap_t *rows = range_bitmap(3, 900, 7), *back = NULL;
	int			caught = 0;

	fake.prefix = "";
	CHECK_OK(lt_assign_new(&fake, 5, &f, &err), err);
	CHECK_OK(lt_assign_set(f, 9, LT_ASSIGN_ALL, NULL, 100, &err), err);
	CHECK_OK(lt_assign_set(f, 2, LT_ASSIGN_PARTIAL, roaring_bitmap_copy(rows), 1000, &err), err);
	CHECK_OK(lt_assign_set(f, 4, LT_ASSIGN_NONE, NULL, 10, &err), err);
	/* normalised: an empty partial is none, a full one all */
	CHECK_OK(lt_assign_set(f, 6, LT_ASSIGN_PARTIAL, roaring_bitmap_create(), 10, &err), err);
	CHECK_OK(lt_assign_set(f, 7, LT_ASSIGN_PARTIAL, range_bitmap(0, 10, 1), 10, &err), err);
	CHECK_EQ_INT(f->n_entries, 3);
	CHECK_EQ_INT(f->entries[0].fragment_id, 2);
	CHECK_EQ_INT(f->entries[1].fragment_id, 7);
	CHECK_EQ_INT(f->entries[1].kind, LT_ASSIGN_ALL);
	/* offsets past the fragment are refused */
	CHECK_CODE(lt_assign_set(f, 8, LT_ASSIGN_PARTIAL, range_bitmap(5, 20, 1), 10, &err), LT_EINVALID);
	f->entries[0].bitmap_file = lt_strdup("5-x.bitmap");
	CHECK_OK(lt_assign_root_encode(f, &buf, &len, &err), err);
	CHECK_OK(lt_assign_new(&fake, 5, &g, &err), err);
	CHECK_OK(lt_assign_root_decode(buf, len, "r", g, &err), err);
	CHECK_EQ_INT(g->n_entries, 3);
	CHECK(strcmp(g->entries[0].bitmap_file, "5-x.bitmap") == 0);
	CHECK_EQ_INT(g->entries[2].fragment_id, 9);
	lt_assign_free(g);
	/* every single-bit flip and every truncation is caught */
	for (size_t i = 0; i < len; i++)
	{
		buf[i] ^= 0x10;
		g = NULL;
		CHECK_OK(lt_assign_new(&fake, 5, &g, &err), err);
		caught += lt_assign_root_decode(buf, len, "r", g, &err) == LT_ECORRUPT;
		lt_assign_free(g);
		buf[i] ^= 0x10;
		CHECK_OK(lt_assign_new(&fake, 5, &g, &err), err);
		caught += lt_assign_root_decode(buf, i, "r", g, &err) == LT_ECORRUPT;
		lt_assign_free(g);
	}
	CHECK_EQ_INT(caught, 2 * len);
	/* a root of another field is corrupt for this one */
	CHECK_OK(lt_assign_new(&fake, 6, &g, &err), err);
	CHECK_CODE(lt_assign_root_decode(buf, len, "r", g, &err), LT_ECORRUPT);
	lt_assign_free(g);
	lt_free(buf);
	lt_assign_free(f);

	CHECK_OK(lt_assign_bitmap_encode(rows, &buf, &len, &err), err);
	CHECK_OK(lt_assign_bitmap_decode(buf, len, "b", 1000, &back, &err), err);
	CHECK(back && roaring_bitmap_equals(back, rows));
	if (back)
		roaring_bitmap_free(back);
	CHECK_CODE(lt_assign_bitmap_decode(buf, len, "b", 800, &back, &err), LT_ECORRUPT);
	caught = 0;
	for (size_t i = 0; i < len; i++)
	{
		buf[i] ^= 0x01;
		caught += lt_assign_bitmap_decode(buf, len, "b", 1000, &back, &err) == LT_ECORRUPT;
		buf[i] ^= 0x01;
	}
	CHECK_EQ_INT(caught, len);
	lt_free(buf);
	roaring_bitmap_free(rows);
}

TEST(retain_and_config_keys)
{
	lt_dataset	fake = {0};
	lt_assign_field *f = NULL;
	uint64_t	keep[] = {1, 3, 4};
	bool		changed;
	int32_t		id = -1;

	fake.prefix = "";
	CHECK_OK(lt_assign_new(&fake, 1, &f, &err), err);
	for (uint64_t i = 0; i < 5; i++)
		CHECK_OK(lt_assign_set(f, i, LT_ASSIGN_ALL, NULL, 10, &err), err);
	lt_assign_retain(f, keep, 3, &changed);
	CHECK(changed);
	CHECK_EQ_INT(f->n_entries, 3);
	CHECK_EQ_INT(f->entries[1].fragment_id, 3);
	lt_assign_retain(f, keep, 3, &changed);
	CHECK(!changed);
	lt_assign_free(f);
	CHECK(lt_assign_config_key(LT_ASSIGN_CONFIG_PREFIX "12", &id) && id == 12);
	CHECK(!lt_assign_config_key(LT_ASSIGN_CONFIG_PREFIX "12x", &id));
	CHECK(!lt_assign_config_key(LT_ASSIGN_CONFIG_PREFIX "-1", &id));
	CHECK(!lt_assign_config_key("lance.auto_cleanup.interval", &id));
}

TEST(commits_track_assign_rebase)
{
	lt_store   *s = NULL;
	lt_dataset *v1, *v2, *v3, *v4, *v5;
	lt_commit_result res;
	lt_txn	   *a = NULL, *b = NULL;
	lt_written_file wf;
	uint64_t	fa = 0, fb = 0, n = 0;
	const char *root2 = NULL, *root3 = NULL;
	uint32_t	del[] = {0, 1, 2};

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	unit_load_tree(s, "filter_scan", PREFIX);
	v1 = open_latest(s);
	CHECK(!lt_assign_any(v1));
	/* tracking field 0, every row assigned */
	CHECK_OK(lt_commit_track_assignment(v1, 0, true, NULL, &res, &err), err);
	CHECK_CODE(lt_commit_track_assignment(v1, 99, true, NULL, &res, &err), LT_EINVALID);
	v2 = open_latest(s);
	CHECK(v2->manifest->writer_feature_flags & LT_FLAG_FIELD_ASSIGNMENT);
	CHECK(!(v2->manifest->reader_feature_flags & LT_FLAG_FIELD_ASSIGNMENT));
	CHECK(lt_assign_is_tracked(v2, 0, &root2));
	CHECK(!lt_assign_is_tracked(v2, 1, NULL));
	CHECK_EQ_INT(kind_at(v2, 0, 0, NULL), LT_ASSIGN_ALL);
	CHECK_EQ_INT(kind_at(v2, 0, 2, NULL), LT_ASSIGN_ALL);
	/* tracking it again is an error */
	CHECK_CODE(lt_commit_track_assignment(v2, 0, false, NULL, &res, &err), LT_EINVALID);

	/* two writers from v2: a assigns 1 row in 3 of its new fragment, b none; a also deletes rows */
	CHECK_OK(lt_txn_begin(v2, &a, &err), err);
	CHECK_OK(lt_txn_begin(v2, &b, &err), err);
	copy_file(s, v2, &wf, "a.lance");
	CHECK_OK(lt_txn_add_fragment(a, 1, &wf, NULL, &fa, &err), err);
	CHECK_OK(lt_txn_set_assignment(a, fa, 0, LT_ASSIGN_PARTIAL, range_bitmap(0, 1200, 3), &err), err);
	CHECK_CODE(lt_txn_set_assignment(a, 0, 0, LT_ASSIGN_ALL, NULL, &err), LT_EINVALID);
	CHECK_OK(lt_txn_delete_rows(a, 1, del, 3, &err), err);
	copy_file(s, v2, &wf, "b.lance");
	CHECK_OK(lt_txn_add_fragment(b, 1, &wf, NULL, &fb, &err), err);
	CHECK_OK(lt_txn_set_assignment(b, fb, 0, LT_ASSIGN_ALL, NULL, &err), err);
	CHECK_OK(lt_txn_commit(a, NULL, &res, &err), err);
	v3 = open_latest(s);
	CHECK(lt_assign_is_tracked(v3, 0, &root3));
	CHECK(root2 && root3 && strcmp(root2, root3) != 0);
	CHECK_EQ_INT(kind_at(v3, 0, fa, &n), LT_ASSIGN_PARTIAL);
	CHECK_EQ_INT(n, 400);
	/* the deletion left fragment 1's entry alone */
	CHECK_EQ_INT(kind_at(v3, 0, 1, NULL), LT_ASSIGN_ALL);
	/* b rebases over a: a's fragment keeps its state, b's lands under its final id */
	CHECK_OK(lt_txn_commit(b, NULL, &res, &err), err);
	CHECK(res.attempts >= 1);
	v4 = open_latest(s);
	CHECK_EQ_INT(v4->n_fragments, 5);
	CHECK_EQ_INT(kind_at(v4, 0, v4->fragments[3]->id, &n), LT_ASSIGN_PARTIAL);
	CHECK_EQ_INT(n, 400);
	CHECK_EQ_INT(kind_at(v4, 0, v4->fragments[4]->id, NULL), LT_ASSIGN_ALL);
	CHECK(v4->manifest->writer_feature_flags & LT_FLAG_FIELD_ASSIGNMENT);
	lt_txn_free(a);
	lt_txn_free(b);

	/* a write planned before field 1 was tracked conflicts with that tracking */
	CHECK_OK(lt_txn_begin(v4, &a, &err), err);
	copy_file(s, v4, &wf, "c.lance");
	CHECK_OK(lt_txn_add_fragment(a, 1, &wf, NULL, &fa, &err), err);
	CHECK_OK(lt_commit_track_assignment(v4, 1, false, NULL, &res, &err), err);
	v5 = open_latest(s);
	CHECK_EQ_INT(kind_at(v5, 1, 0, NULL), LT_ASSIGN_NONE);
	CHECK_CODE(lt_txn_commit(a, NULL, &res, &err), LT_ECONFLICT);
	lt_txn_free(a);

	/* the flag without the state, or the state without the flag: not written (fail closed) */
	{
		uint64_t	w = v5->manifest->writer_feature_flags;
		lt_txn	   *t = NULL;

		v5->manifest->writer_feature_flags = w & ~LT_FLAG_FIELD_ASSIGNMENT;
		CHECK_CODE(lt_txn_begin(v5, &t, &err), LT_EUNSUPPORTED);
		lt_txn_free(t);
		t = NULL;
		v1->manifest->writer_feature_flags |= LT_FLAG_FIELD_ASSIGNMENT;
		CHECK_CODE(lt_txn_begin(v1, &t, &err), LT_EUNSUPPORTED);
		lt_txn_free(t);
		v1->manifest->writer_feature_flags &= ~LT_FLAG_FIELD_ASSIGNMENT;
		v5->manifest->writer_feature_flags = w;
	}

	/* a damaged root is corrupt, not "unassigned" */
	{
		const char *root = NULL;
		char		path[512];
		uint8_t    *buf;
		uint64_t	len;
		lt_assign_field *f = NULL;

		CHECK(lt_assign_is_tracked(v5, 0, &root));
		snprintf(path, sizeof(path), PREFIX LT_ASSIGN_DIR "%s", root);
		CHECK_OK(lt_store_read_all(s, path, 1 << 20, &buf, &len, &err), err);
		buf[len / 2] ^= 0xff;
		CHECK_OK(lt_store_mem_put(s, path, buf, len, &err), err);
		CHECK_CODE(lt_assign_load(v5, 0, &f, &err), LT_ECORRUPT);
		CHECK(strstr(err.msg, root) != NULL);
		lt_free(buf);
	}
	lt_dataset_close(v5);
	lt_dataset_close(v4);
	lt_dataset_close(v3);
	lt_dataset_close(v2);
	lt_dataset_close(v1);
	lt_store_close(s);
}

/* Clearing in place: a config-only commit, seen by the own-writes view, conflicting with moves of the rows. */
TEST(clear_in_place)
{
	lt_store   *s = NULL;
	lt_dataset *v1, *v2, *v3, *v4;
	lt_commit_result res;
	lt_txn	   *a = NULL, *b = NULL, *c = NULL;
	lt_written_file wf;
	uint64_t	fb = 0, n = 0;
	uint32_t	ten[10], five[] = {5}, more[] = {20, 21}, some[10];
	lt_assign_kind kind;
	const roaring_bitmap_t *rows = NULL;
	lt_assign_field *st = NULL;

	for (uint32_t i = 0; i < 10; i++)
	{
		ten[i] = i;
		some[i] = 100 + i;		/* not all deleted in the fixture (row 5 of fragment 0 is) */
	}
	CHECK_OK(lt_store_mem_open(&s, &err), err);
	unit_load_tree(s, "filter_scan", PREFIX);
	v1 = open_latest(s);
	CHECK_OK(lt_commit_track_assignment(v1, 0, true, NULL, &res, &err), err);
	v2 = open_latest(s);
	/* b will move row 5 of fragment 0 (an UPDATE), c clears rows 20 and 21 of fragment 0 */
	CHECK_OK(lt_txn_begin(v2, &b, &err), err);
	CHECK_OK(lt_txn_begin(v2, &c, &err), err);
	CHECK_OK(lt_txn_delete_rows(b, 0, some, 10, &err), err);
	copy_file(s, v2, &wf, "moved.lance");
	CHECK_OK(lt_txn_add_fragment(b, 1, &wf, NULL, &fb, &err), err);
	CHECK_OK(lt_txn_set_assignment(b, fb, 0, LT_ASSIGN_ALL, NULL, &err), err);
	CHECK_OK(lt_txn_unassign_rows(c, 0, 0, more, 2, &err), err);
	CHECK_CODE(lt_txn_unassign_rows(c, 0, 7, more, 2, &err), LT_EINVALID);	/* not tracked */

	/* a clears rows 0..9 of fragment 0 in place: its view says so before the commit */
	CHECK_OK(lt_txn_begin(v2, &a, &err), err);
	CHECK_OK(lt_txn_unassign_rows(a, 0, 0, ten, 10, &err), err);
	CHECK_OK(lt_assign_load(v2, 0, &st, &err), err);
	CHECK_OK(lt_txn_fragment_assignment(a, st, 0, 1200, &kind, &rows, &err), err);
	CHECK_EQ_INT(kind, LT_ASSIGN_PARTIAL);
	CHECK(rows && roaring_bitmap_get_cardinality(rows) == 1190 && !roaring_bitmap_contains(rows, 3));
	lt_assign_free(st);
	CHECK_OK(lt_txn_commit(a, NULL, &res, &err), err);
	CHECK_EQ_INT(res.op, LT_OP_UPDATE_CONFIG);
	v3 = open_latest(s);
	CHECK_EQ_INT(v3->n_fragments, v2->n_fragments);
	CHECK_EQ_INT(kind_at(v3, 0, 0, &n), LT_ASSIGN_PARTIAL);
	CHECK_EQ_INT(n, 1190);
	CHECK_EQ_INT(kind_at(v3, 0, 1, NULL), LT_ASSIGN_ALL);
	/* b moves a row of a fragment whose state a changed: its copy would undo the clear */
	CHECK_CODE(lt_txn_commit(b, NULL, &res, &err), LT_ECONFLICT);
	/* c's clear of other rows merges */
	CHECK_OK(lt_txn_commit(c, NULL, &res, &err), err);
	v4 = open_latest(s);
	CHECK_EQ_INT(kind_at(v4, 0, 0, &n), LT_ASSIGN_PARTIAL);
	CHECK_EQ_INT(n, 1188);
	lt_txn_free(a);
	lt_txn_free(b);
	lt_txn_free(c);

	/* a clear of rows a concurrent commit deleted conflicts */
	CHECK_OK(lt_txn_begin(v4, &a, &err), err);
	CHECK_OK(lt_txn_begin(v4, &b, &err), err);
	CHECK_OK(lt_txn_delete_rows(b, 1, some, 10, &err), err);
	CHECK_OK(lt_txn_commit(b, NULL, &res, &err), err);
	CHECK_OK(lt_txn_unassign_rows(a, 1, 0, some, 10, &err), err);
	CHECK_CODE(lt_txn_commit(a, NULL, &res, &err), LT_ECONFLICT);
	/* a savepoint rollback forgets a clear: nothing to commit */
	lt_txn_free(a);
	lt_txn_free(b);
	{
		lt_dataset *v5 = open_latest(s);
		lt_txn_mark mk;

		CHECK_OK(lt_txn_begin(v5, &a, &err), err);
		mk = lt_txn_savepoint(a);
		CHECK_OK(lt_txn_unassign_rows(a, 2, 0, five, 1, &err), err);
		CHECK_OK(lt_txn_rollback_to(a, mk, &err), err);
		CHECK_OK(lt_txn_commit(a, NULL, &res, &err), err);
		CHECK_EQ_INT(res.op, LT_OP_NONE);
		lt_txn_free(a);
		/* a clear kept, a later one rolled back, own view read in between */
		CHECK_OK(lt_txn_begin(v5, &a, &err), err);
		CHECK_OK(lt_txn_unassign_rows(a, 2, 0, ten, 10, &err), err);
		{
			lt_dataset *view = NULL;

			CHECK_OK(lt_txn_view(a, &view, &err), err);
		}
		mk = lt_txn_savepoint(a);
		CHECK_OK(lt_txn_unassign_rows(a, 2, 0, some, 10, &err), err);
		CHECK_OK(lt_txn_rollback_to(a, mk, &err), err);
		CHECK_OK(lt_txn_commit(a, NULL, &res, &err), err);
		CHECK_EQ_INT(res.op, LT_OP_UPDATE_CONFIG);
		lt_txn_free(a);
		lt_dataset_close(v5);
	}
	lt_dataset_close(v4);
	lt_dataset_close(v3);
	lt_dataset_close(v2);
	lt_dataset_close(v1);
	lt_store_close(s);
}

int
main(void)
{
	RUN(encodings_round_trip_and_catch_damage);
	RUN(retain_and_config_keys);
	RUN(commits_track_assign_rebase);
	RUN(clear_in_place);
	return unit_report("field assignment");
}
