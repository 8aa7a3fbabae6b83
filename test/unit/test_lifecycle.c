/*
 * Unit tests of a dataset's lifecycle in the format library: a new dataset's schema (field ids depth-first,
 * nullability, legacy encodings) and its Overwrite commit (version 1; refused over an existing dataset unless
 * overwrite; a new version then), and compaction (Lance's plan; the live rows copied in order into new files;
 * the Rewrite commit with a group per planned group; a btree index remapped to the moved rows' addresses
 * under a new uuid; a compaction carrying other changes refused), schema changes (Merge, Project, ids kept, a
 * concurrent one conflicts; a column added with a value in every row through a data file per fragment; a column
 * added tracked for field assignment, the state of a dropped field going with it and a renamed one keeping it),
 * tags (Lance's _refs/tags files) and the Restore commit.  Everything runs on
 * the in-memory store and is read back through lt_dataset_open and the fragment scanner.
 */
#include <stdlib.h>
#include <string.h>

#include "assignment/lt_assignment.h"
#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "table/lt_scan.h"
#include "table/lt_cleanup.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "index/lt_index.h"
#include "index/lt_index_write.h"
#include "table/lt_filter.h"
#include "txn/lt_compact.h"
#include "txn/lt_txn.h"
#include "txn/lt_txn_index.h"
#include "txn/lt_txn_create.h"
#include "txn/lt_txn_restore.h"
#include "txn/lt_txn_schema.h"
#include "unit.h"

static lt_error err;

#define PREFIX "ds/"

static const lt_new_field two_cols[] = {
	{"id", "int64", false, -1},
	{"s", "string", true, -1},
};

/* A file of rows [from, from + n) of the two-column schema (s = NULL for every 5th row). */
static void
write_rows(lt_store *s, const lt_schema *sch, lt_file_version v, int64_t from, int64_t n, lt_written_file *out)
{
	lt_file_writer *w = NULL;
	lt_array   *cols[2] = {NULL, NULL};

	memset(out, 0, sizeof(*out));
	CHECK_OK(lt_file_writer_open(s, PREFIX "data/", 2, (const lt_field *const *) sch->fields, v, &w, &err), err);
	CHECK_OK(lt_array_new(sch->fields[0], &cols[0], &err), err);
	CHECK_OK(lt_array_new(sch->fields[1], &cols[1], &err), err);
	if (!w || !cols[0] || !cols[1])
		return;
	CHECK_OK(lt_array_reserve(cols[0], n, &err), err);
	CHECK_OK(lt_array_reserve(cols[1], n, &err), err);
	CHECK_OK(lt_array_ensure_validity(cols[1], &err), err);
	for (int64_t i = 0; i < n; i++)
	{
		char		buf[32];
		int			len = snprintf(buf, sizeof(buf), "r%lld", (long long) (from + i));
		int64_t		o0 = cols[1]->offsets[i];

		((int64_t *) cols[0]->values)[i] = from + i;
		if ((from + i) % 5 == 0)
		{
			cols[1]->validity[i] = 0;
			cols[1]->null_count++;
			len = 0;
		}
		else
		{
			cols[1]->validity[i] = 1;
			CHECK_OK(lt_array_reserve_data(cols[1], len, &err), err);
			memcpy(cols[1]->data + o0, buf, (size_t) len);
		}
		cols[1]->offsets[i + 1] = o0 + len;
		cols[1]->data_len = o0 + len;
	}
	cols[0]->length = cols[1]->length = n;
	CHECK_OK(lt_file_writer_write(w, cols, n, &err), err);
	CHECK_OK(lt_file_writer_finish(w, out, &err), err);
	lt_file_writer_free(w);
	lt_array_free(cols[0]);
	lt_array_free(cols[1]);
}

/* Every live id of the latest version, in scan order; *n of them. */
static int64_t *
scan_ids(lt_store *s, size_t *n, uint64_t *version, size_t *n_frags)
{
	lt_dataset *ds = NULL;
	int64_t    *ids = NULL;
	size_t		cap = 0;

	*n = 0;
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return NULL;
	*version = ds->version;
	*n_frags = ds->n_fragments;
	for (size_t f = 0; f < ds->n_fragments; f++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

		so.n_fields = 1;
		so.fields = (const lt_field *const *) ds->schema->fields;
		CHECK_OK(lt_fragment_scanner_open(ds, ds->fragments[f], &so, &sc, &err), err);
		while (sc && lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
			for (int64_t i = 0; i < b->length; i++)
			{
				if (*n == cap)
				{
					cap = cap ? cap * 2 : 256;
					ids = realloc(ids, cap * sizeof(int64_t));
				}
				ids[(*n)++] = ((const int64_t *) b->columns[0]->values)[i];
			}
		lt_fragment_scanner_free(sc);
	}
	lt_dataset_close(ds);
	return ids;
}

TEST(new_schema_ids)
{
	/* a struct declared before its children, a list's item after another top-level field */
	static const lt_new_field f[] = {
		{"a", "int32", false, -1},
		{"st", "struct", true, -1},
		{"l", "list", true, -1},
		{"x", "string", true, 1},
		{"item", "double", true, 2},
		{"y", "date32:day", true, 1},
	};
	lt_new_dataset *nd = NULL;
	const lt_schema *s;

	CHECK_OK(lt_new_dataset_init(f, 6, "2.1", &nd, &err), err);
	if (!nd)
		return;
	s = lt_new_dataset_schema(nd);
	CHECK_EQ_INT(s->n_fields, 3);
	CHECK_EQ_INT(s->fields[0]->id, 0);
	CHECK(!s->fields[0]->nullable);
	CHECK_EQ_INT(s->fields[1]->id, 1);
	CHECK_EQ_INT(s->fields[1]->n_children, 2);
	CHECK_EQ_INT(s->fields[1]->children[0]->id, 2);	/* x */
	CHECK_EQ_INT(s->fields[1]->children[1]->id, 3);	/* y */
	CHECK_EQ_INT(s->fields[2]->id, 4);
	CHECK_EQ_INT(s->fields[2]->children[0]->id, 5);	/* item */
	CHECK_EQ_INT(s->fields[2]->children[0]->type, LT_TYPE_FLOAT64);
	CHECK_EQ_INT(lt_new_dataset_file_version(nd), LT_FILE_V2_1);
	lt_new_dataset_free(nd);

	/* bad trees and versions */
	{
		static const lt_new_field dup[] = {{"a", "int32", true, -1}, {"a", "int64", true, -1}};
		static const lt_new_field fwd[] = {{"a", "int32", true, 1}, {"b", "struct", true, -1}};
		static const lt_new_field bad[] = {{"a", "no_such_type", true, -1}};

		CHECK_CODE(lt_new_dataset_init(dup, 2, "2.2", &nd, &err), LT_EINVALID);
		CHECK_CODE(lt_new_dataset_init(fwd, 2, "2.2", &nd, &err), LT_EINVALID);
		CHECK(lt_new_dataset_init(bad, 1, "2.2", &nd, &err) != LT_OK);
		CHECK_CODE(lt_new_dataset_init(two_cols, 2, "0.1", &nd, &err), LT_EINVALID);
		CHECK_CODE(lt_new_dataset_init(two_cols, 0, "2.2", &nd, &err), LT_EINVALID);
	}
}

TEST(create_and_overwrite)
{
	lt_store   *s = NULL;
	lt_new_dataset *nd = NULL;
	lt_written_file wf[2];
	lt_commit_result res;
	lt_dataset *ds = NULL;
	bool		exists = true;

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	CHECK_OK(lt_dataset_exists(s, PREFIX, &exists, &err), err);
	CHECK(!exists);
	CHECK_OK(lt_new_dataset_init(two_cols, 2, "2.2", &nd, &err), err);
	if (!s || !nd)
		return;
	write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_2, 0, 100, &wf[0]);
	write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_2, 100, 50, &wf[1]);
	CHECK_OK(lt_commit_create(s, PREFIX, nd, false, 2, wf, &res, &err), err);
	CHECK_EQ_INT(res.version, 1);
	CHECK_EQ_INT(res.op, LT_OP_OVERWRITE);
	CHECK_EQ_INT(res.rows_added, 150);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (ds)
	{
		CHECK_EQ_INT(ds->version, 1);
		CHECK_EQ_INT(ds->n_fragments, 2);
		CHECK_EQ_INT(ds->fragments[0]->id, 0);
		CHECK_EQ_INT(ds->fragments[1]->id, 1);
		CHECK(strcmp(ds->storage_version, "2.2") == 0);
		CHECK(!ds->schema->fields[0]->nullable);
		CHECK(ds->schema->fields[1]->nullable);
		CHECK(ds->transaction && ds->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_OVERWRITE);
		CHECK_EQ_INT(lt_dataset_count_rows(ds), 150);
		lt_dataset_close(ds);
	}
	/* there now: refused without overwrite, nothing committed */
	CHECK_CODE(lt_commit_create(s, PREFIX, nd, false, 0, NULL, &res, &err), LT_EINVALID);
	/* overwrite: version 2, empty */
	CHECK_OK(lt_commit_create(s, PREFIX, nd, true, 0, NULL, &res, &err), err);
	CHECK_EQ_INT(res.version, 2);
	CHECK_EQ_INT(res.fragments_removed, 2);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (ds)
	{
		CHECK_EQ_INT(ds->n_fragments, 0);
		lt_dataset_close(ds);
	}
	/* a file of another storage version is refused */
	{
		lt_new_dataset *nd20 = NULL;

		CHECK_OK(lt_new_dataset_init(two_cols, 2, "2.0", &nd20, &err), err);
		CHECK_CODE(lt_commit_create(s, PREFIX, nd20, true, 1, wf, &res, &err), LT_EINVALID);
		lt_new_dataset_free(nd20);
	}
	lt_written_file_clear(&wf[0]);
	lt_written_file_clear(&wf[1]);
	lt_new_dataset_free(nd);
	lt_store_close(s);
}

TEST(compaction)
{
	lt_store   *s = NULL;
	lt_new_dataset *nd = NULL;
	lt_written_file wf[6];
	lt_commit_result res;
	lt_dataset *ds = NULL;
	lt_compact_options co = {0};
	lt_compact_plan plan;
	size_t		n_before = 0, n_after = 0, nf = 0;
	uint64_t	v = 0;
	int64_t    *before, *after;

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	CHECK_OK(lt_new_dataset_init(two_cols, 2, "2.1", &nd, &err), err);
	if (!s || !nd)
		return;
	/* fragments of 10, 20, 5000 (big), 7, 3, 1 rows */
	{
		const int64_t sizes[6] = {10, 20, 5000, 7, 3, 1};
		int64_t		from = 0;

		for (int i = 0; i < 6; i++)
		{
			write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_1, from, sizes[i], &wf[i]);
			from += sizes[i];
		}
	}
	CHECK_OK(lt_commit_create(s, PREFIX, nd, false, 6, wf, &res, &err), err);
	/* delete a few rows of the big fragment, then plan */
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return;
	{
		lt_txn	   *t = NULL;
		uint32_t	off[3] = {0, 1, 2};

		CHECK_OK(lt_txn_begin(ds, &t, &err), err);
		CHECK_OK(lt_txn_delete_rows(t, 2, off, 3, &err), err);
		CHECK_OK(lt_txn_commit(t, NULL, &res, &err), err);
		lt_txn_free(t);
		lt_dataset_close(ds);
	}
	before = scan_ids(s, &n_before, &v, &nf);
	CHECK_EQ_INT(n_before, 5038);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	co.target_rows_per_fragment = 1000;
	co.materialize_deletions = true;
	co.materialize_deletions_threshold = 0.1;
	CHECK_OK(lt_compact_plan_make(ds, &co, &plan, &err), err);
	/* {10, 20} and {7, 3, 1}; the big one has 3 of 5000 deleted: below the threshold */
	CHECK_EQ_INT(plan.n_groups, 2);
	if (plan.n_groups == 2)
	{
		CHECK_EQ_INT(plan.groups[0].first, 0);
		CHECK_EQ_INT(plan.groups[0].count, 2);
		CHECK_EQ_INT(plan.groups[1].first, 3);
		CHECK_EQ_INT(plan.groups[1].count, 3);
		CHECK_EQ_INT(plan.groups[1].live_rows, 11);
	}
	/* a btree index on id over every fragment: the compaction remaps it */
	{
		lt_index_build_options bo = {LT_INDEX_BTREE, "id_idx", 0};
		lt_built_index b;
		const lt_built_index *bp[1] = {&b};

		CHECK_OK(lt_index_build(ds, ds->schema->fields[0], &bo, &b, &err), err);
		CHECK_OK(lt_commit_create_index(ds, 1, bp, NULL, &res, &err), err);
		lt_built_index_clear(&b);
		lt_dataset_close(ds);
		CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
		if (!ds)
			return;
	}
	/* a threshold of 0: the big fragment goes too, cut into files of at most 1000 rows */
	lt_compact_plan_clear(&plan);
	co.materialize_deletions_threshold = 0;
	CHECK_OK(lt_compact_plan_make(ds, &co, &plan, &err), err);
	CHECK_EQ_INT(plan.n_groups, 2);
	CHECK_EQ_INT(plan.n_fragments, 6);
	{
		lt_txn	   *t = NULL;
		uint64_t	removed = 0, added = 0;
		uint64_t	old_ids[6];

		CHECK_OK(lt_txn_begin(ds, &t, &err), err);
		for (size_t g = 0; t && g < plan.n_groups; g++)
		{
			lt_compact_file *files = NULL;
			size_t		n = 0;
			uint64_t	id;

			CHECK_OK(lt_compact_copy_group(ds, &plan.groups[g], &co, &files, &n, &err), err);
			for (size_t i = 0; i < n; i++)
			{
				CHECK(files[i].file.num_rows <= 1000);
				CHECK_OK(lt_txn_add_fragment(t, 1, &files[i].file, files[i].row_ids, &id, &err), err);
				added++;
			}
			for (size_t k = 0; k < plan.groups[g].count; k++)
			{
				old_ids[k] = ds->fragments[plan.groups[g].first + k]->id;
				CHECK_OK(lt_txn_remove_fragment(t, old_ids[k], &err), err);
				removed++;
			}
			CHECK_OK(lt_txn_compaction_group(t, old_ids, plan.groups[g].count, n, &err), err);
			lt_compact_files_free(files, n);
		}
		lt_txn_mark_compaction(t, true);
		CHECK_OK(lt_txn_commit(t, NULL, &res, &err), err);
		CHECK_EQ_INT(res.op, LT_OP_REWRITE);
		CHECK_EQ_INT(removed, 6);
		CHECK_EQ_INT(added, 7);	/* 5027 rows in files of at most 1000 (6), then 11 rows (1) */
		lt_txn_free(t);
	}
	lt_compact_plan_clear(&plan);
	after = scan_ids(s, &n_after, &v, &nf);
	CHECK_EQ_INT(n_after, n_before);
	CHECK(n_after == n_before && before && after && memcmp(before, after, n_after * sizeof(int64_t)) == 0);
	CHECK_EQ_INT(nf, 7);
	lt_dataset_close(ds);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (ds)
	{
		const Lt__Pb__Transaction *tx = ds->transaction;

		CHECK(tx && tx->operation_case == LT__PB__TRANSACTION__OPERATION_REWRITE);
		if (tx && tx->operation_case == LT__PB__TRANSACTION__OPERATION_REWRITE)
		{
			/* {10, 20, 5000 - 3} into 6 files, {7, 3, 1} into 1; the index named old -> new */
			CHECK_EQ_INT(tx->rewrite->n_groups, 2);
			if (tx->rewrite->n_groups == 2)
			{
				CHECK_EQ_INT(tx->rewrite->groups[0]->n_old_fragments, 3);
				CHECK_EQ_INT(tx->rewrite->groups[0]->n_new_fragments, 6);
				CHECK_EQ_INT(tx->rewrite->groups[1]->n_old_fragments, 3);
				CHECK_EQ_INT(tx->rewrite->groups[1]->n_new_fragments, 1);
			}
			CHECK_EQ_INT(tx->rewrite->n_rewritten_indices, 1);
			if (tx->rewrite->n_rewritten_indices == 1)
			{
				const Lt__Pb__Transaction__RewrittenIndex *ri = tx->rewrite->rewritten_indices[0];

				CHECK(ri->old_id && ri->new_id && ri->old_id->uuid.len == 16 && ri->new_id->uuid.len == 16 &&
					  memcmp(ri->old_id->uuid.data, ri->new_id->uuid.data, 16) != 0);
				CHECK(ds->index_section && ds->index_section->n_indices == 1 &&
					  ds->index_section->indices[0]->uuid->uuid.len == 16 &&
					  memcmp(ds->index_section->indices[0]->uuid->uuid.data, ri->new_id->uuid.data, 16) == 0);
			}
		}
		/* the index covers the 7 new fragments and finds the moved rows at their new addresses */
		{
			lt_index_list *l = NULL;
			lt_index_reader *r = NULL;
			const lt_field *id = ds->schema->fields[0];
			const int64_t probe[3] = {4000, 31, 5037};
			/*
			 * id 4000: live row 3997 of the first group (ids 30..32 deleted) = its file 3, offset 997 = fragment
			 * 6 + 3; 31 deleted; 5037: the second group's (ids 5030..5040) row 7, in fragment 12
			 */
			const int64_t want[3] = {((int64_t) 9 << 32) | 997, -1, ((int64_t) 12 << 32) | 7};

			CHECK_OK(lt_dataset_indexes(ds, &l, &err), err);
			CHECK(l && l->n == 1 && l->items[0].n_covered == 7 && l->items[0].n_unindexed == 0);
			if (l && l->n == 1)
				CHECK_OK(lt_index_open(ds, &l->items[0], &r, &err), err);
			for (int q = 0; r && q < 3; q++)
			{
				lt_filter  *f = NULL;
				lt_value	v = {.kind = LT_VALUE_INT};
				lt_rowaddr_set *got = NULL;
				bool		exact;

				v.v.i = probe[q];
				CHECK_OK(lt_filter_new(1, &id, &f, &err), err);
				CHECK_OK(lt_filter_set_root(f, lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &err),
														   lt_expr_const(f, &v, &err), &err), &err), err);
				CHECK_OK(lt_index_search(r, f, &got, &exact, NULL, &err), err);
				CHECK_EQ_INT(lt_rowaddr_set_cardinality(got, NULL), want[q] < 0 ? 0 : 1);
				if (want[q] >= 0)
					CHECK(lt_rowaddr_set_contains(got, (uint64_t) want[q]));
				lt_rowaddr_set_free(got);
				lt_filter_free(f);
			}
			lt_index_close(r);
			lt_index_list_free(l);
		}
		for (size_t i = 0; i < ds->n_fragments; i++)
			CHECK(ds->fragments[i]->deletion_file == NULL);
		/*
		 * As Lance plans: the indexed small fragments (27 and 11 rows) are not grouped with two
		 * unindexed ones appended after them (a group never mixes index coverage).
		 */
		{
			lt_txn	   *t = NULL;
			lt_written_file more[2];
			lt_dataset *d2 = NULL;
			uint64_t	id;

			write_rows(s, ds->schema, LT_FILE_V2_1, 70000, 4, &more[0]);
			write_rows(s, ds->schema, LT_FILE_V2_1, 70004, 5, &more[1]);
			CHECK_OK(lt_txn_begin(ds, &t, &err), err);
			CHECK_OK(lt_txn_add_fragment(t, 1, &more[0], NULL, &id, &err), err);
			CHECK_OK(lt_txn_add_fragment(t, 1, &more[1], NULL, &id, &err), err);
			CHECK_OK(lt_txn_commit(t, NULL, &res, &err), err);
			lt_txn_free(t);
			CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &d2, &err), err);
			if (d2)
			{
				CHECK_EQ_INT(d2->n_fragments, 9);
				CHECK_OK(lt_compact_plan_make(d2, &co, &plan, &err), err);
				/* {27, 11} rows (both indexed), then {4, 5} (neither): not one group of four */
				CHECK_EQ_INT(plan.n_groups, 2);
				if (plan.n_groups == 2)
				{
					CHECK_EQ_INT(plan.groups[0].first, 5);
					CHECK_EQ_INT(plan.groups[0].count, 2);
					CHECK_EQ_INT(plan.groups[1].first, 7);
					CHECK_EQ_INT(plan.groups[1].count, 2);
				}
				lt_compact_plan_clear(&plan);
				lt_dataset_close(d2);
			}
			lt_written_file_clear(&more[0]);
			lt_written_file_clear(&more[1]);
		}
		/* a compaction that also adds rows is refused at commit */
		{
			lt_txn	   *t = NULL;
			lt_written_file extra;
			uint64_t	id;

			write_rows(s, ds->schema, LT_FILE_V2_1, 90000, 5, &extra);
			CHECK_OK(lt_txn_begin(ds, &t, &err), err);
			CHECK_OK(lt_txn_add_fragment(t, 1, &extra, NULL, &id, &err), err);
			lt_txn_mark_compaction(t, true);
			CHECK_CODE(lt_txn_commit(t, NULL, &res, &err), LT_EINVALID);
			lt_txn_free(t);
			lt_written_file_clear(&extra);
		}
		lt_dataset_close(ds);
	}
	for (int i = 0; i < 6; i++)
		lt_written_file_clear(&wf[i]);
	free(before);
	free(after);
	lt_new_dataset_free(nd);
	lt_store_close(s);
}

TEST(schema_changes)
{
	lt_store   *s = NULL;
	lt_new_dataset *nd = NULL;
	lt_written_file wf;
	lt_commit_result res;
	lt_dataset *ds = NULL;
	static const lt_new_field add[] = {{"l", "list", true, -1}, {"item", "int32", true, 0}};
	lt_schema_change c = {0};

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	CHECK_OK(lt_new_dataset_init(two_cols, 2, "2.2", &nd, &err), err);
	if (!s || !nd)
		return;
	write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_2, 0, 20, &wf);
	CHECK_OK(lt_commit_create(s, PREFIX, nd, false, 1, &wf, &res, &err), err);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return;
	/* add a list: ids 2 and 3, a Merge, every row NULL */
	c.kind = LT_SCHEMA_ADD;
	c.add = add;
	c.n_add = 2;
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	CHECK_EQ_INT(res.version, 2);
	lt_dataset_close(ds);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return;
	CHECK_EQ_INT(ds->schema->n_fields, 3);
	CHECK_EQ_INT(ds->schema->fields[2]->id, 2);
	CHECK_EQ_INT(ds->schema->fields[2]->children[0]->id, 3);
	CHECK(ds->transaction && ds->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_MERGE);
	CHECK_EQ_INT(ds->n_fragments, 1);
	/* drop s (id 1) and rename id: Projects, ids kept */
	memset(&c, 0, sizeof(c));
	c.kind = LT_SCHEMA_DROP;
	c.name = "s";
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	lt_dataset_close(ds);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return;
	c.kind = LT_SCHEMA_RENAME;
	c.name = "id";
	c.new_name = "key";
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	CHECK_EQ_INT(res.version, 4);
	lt_dataset_close(ds);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return;
	CHECK(ds->transaction && ds->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_PROJECT);
	CHECK_EQ_INT(ds->schema->n_fields, 2);
	CHECK(strcmp(ds->schema->fields[0]->name, "key") == 0);
	CHECK_EQ_INT(ds->schema->fields[0]->id, 0);
	CHECK_EQ_INT(ds->schema->fields[1]->id, 2);
	{
		size_t		n = 0, nf = 0;
		uint64_t	v = 0;
		int64_t    *ids = scan_ids(s, &n, &v, &nf);

		CHECK_EQ_INT(n, 20);
		CHECK(ids && ids[19] == 19);
		free(ids);
	}
	/* refused: the last field, an unknown one, a name taken */
	c.kind = LT_SCHEMA_DROP;
	c.name = "nope";
	CHECK_CODE(lt_schema_change_check(ds, &c, &err), LT_EINVALID);
	c.kind = LT_SCHEMA_RENAME;
	c.name = "key";
	c.new_name = "l";
	CHECK_CODE(lt_schema_change_check(ds, &c, &err), LT_EINVALID);
	/* a concurrent schema change after our read version conflicts; an append does not */
	{
		lt_dataset *old = ds;
		lt_schema_change c2 = {LT_SCHEMA_RENAME, "l", "l2", NULL, 0};
		lt_schema_change c3 = {LT_SCHEMA_RENAME, "key", "k3", NULL, 0};

		CHECK_OK(lt_commit_schema_change(old, &c2, NULL, &res, &err), err);
		CHECK_CODE(lt_commit_schema_change(old, &c3, NULL, &res, &err), LT_ECONFLICT);
		lt_dataset_close(old);
	}
	lt_written_file_clear(&wf);
	lt_new_dataset_free(nd);
	lt_store_close(s);
}

/* A file of n copies of the int32 value of field f (a schema of the new fields alone). */
static void
write_constant(lt_store *s, const lt_schema *fields, int32_t value, int64_t n, lt_written_file *out)
{
	lt_file_writer *w = NULL;
	lt_array   *col = NULL;

	memset(out, 0, sizeof(*out));
	CHECK_OK(lt_file_writer_open(s, PREFIX "data/", 1, (const lt_field *const *) fields->fields, LT_FILE_V2_2, &w, &err),
			 err);
	CHECK_OK(lt_array_new(fields->fields[0], &col, &err), err);
	if (!w || !col)
		return;
	CHECK_OK(lt_array_reserve(col, n, &err), err);
	for (int64_t i = 0; i < n; i++)
		((int32_t *) col->values)[i] = value;
	col->length = n;
	CHECK_OK(lt_file_writer_write(w, &col, n, &err), err);
	CHECK_OK(lt_file_writer_finish(w, out, &err), err);
	lt_file_writer_free(w);
	lt_array_free(col);
}

/* The same of an int64 field. */
static void
write_constant64(lt_store *s, const lt_schema *fields, int64_t value, int64_t n, lt_written_file *out)
{
	lt_file_writer *w = NULL;
	lt_array   *col = NULL;

	memset(out, 0, sizeof(*out));
	CHECK_OK(lt_file_writer_open(s, PREFIX "data/", 1, (const lt_field *const *) fields->fields, LT_FILE_V2_2, &w, &err),
			 err);
	CHECK_OK(lt_array_new(fields->fields[0], &col, &err), err);
	if (!w || !col)
		return;
	CHECK_OK(lt_array_reserve(col, n, &err), err);
	for (int64_t i = 0; i < n; i++)
		((int64_t *) col->values)[i] = value;
	col->length = n;
	CHECK_OK(lt_file_writer_write(w, &col, n, &err), err);
	CHECK_OK(lt_file_writer_finish(w, out, &err), err);
	lt_file_writer_free(w);
	lt_array_free(col);
}

/* Rows of the latest version whose int32 field `name` equals value, and NULLs; *rows every row. */
static void
count_int32(lt_store *s, const char *name, int32_t value, size_t *equal, size_t *nulls, size_t *rows)
{
	lt_dataset *ds = NULL;
	const lt_field *f;

	*equal = *nulls = *rows = 0;
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return;
	f = lt_schema_find_name(ds->schema, name);
	CHECK(f != NULL);
	for (size_t k = 0; f && k < ds->n_fragments; k++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

		so.n_fields = 1;
		so.fields = &f;
		CHECK_OK(lt_fragment_scanner_open(ds, ds->fragments[k], &so, &sc, &err), err);
		while (sc && lt_fragment_scanner_next(sc, &b, &err) == LT_OK && b)
			for (int64_t i = 0; i < b->length; i++)
			{
				const lt_array *a = b->columns[0];

				(*rows)++;
				if (a->validity && !a->validity[i])
					(*nulls)++;
				else if (f->type == LT_TYPE_INT64 ? ((const int64_t *) a->values)[i] == value
						 : ((const int32_t *) a->values)[i] == value)
					(*equal)++;
			}
		lt_fragment_scanner_free(sc);
	}
	lt_dataset_close(ds);
}

static lt_dataset *
reopen(lt_store *s, lt_dataset *ds)
{
	lt_dataset *out = NULL;

	if (ds)
		lt_dataset_close(ds);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &out, &err), err);
	return out;
}

TEST(schema_values_and_assignment)
{
	lt_store   *s = NULL;
	lt_new_dataset *nd = NULL;
	lt_written_file wf[2], vf[2];
	uint64_t	frag_ids[2];
	lt_commit_result res;
	lt_dataset *ds = NULL;
	static const lt_new_field v[] = {{"v", "int32", true, -1}};
	static const lt_new_field u[] = {{"u", "int32", true, -1}};
	static const lt_new_field a[] = {{"a", "int32", true, -1}};
	lt_schema_change c = {0};
	lt_schema  *fields = NULL;
	size_t		eq, nulls, rows;
	int32_t		u_id, a_id;
	lt_assign_field *st = NULL;

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	CHECK_OK(lt_new_dataset_init(two_cols, 2, "2.2", &nd, &err), err);
	if (!s || !nd)
		return;
	write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_2, 0, 20, &wf[0]);
	write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_2, 20, 12, &wf[1]);
	CHECK_OK(lt_commit_create(s, PREFIX, nd, false, 2, wf, &res, &err), err);
	if (!(ds = reopen(s, NULL)))
		return;

	/* a column with the value 7 in every row: the next free id, one file per fragment, a Merge */
	c.kind = LT_SCHEMA_ADD;
	c.add = v;
	c.n_add = 1;
	CHECK_OK(lt_schema_change_new_fields(ds, &c, &fields, &err), err);
	if (!fields)
		return;
	CHECK_EQ_INT(fields->fields[0]->id, 2);
	for (size_t k = 0; k < 2; k++)
	{
		write_constant(s, fields, 7, (int64_t) ds->fragments[k]->physical_rows, &vf[k]);
		frag_ids[k] = ds->fragments[k]->id;
	}
	c.n_files = 2;
	c.files = vf;
	c.file_fragments = frag_ids;
	/* a file that does not match its fragment's rows is refused before anything is committed */
	frag_ids[0] = ds->fragments[1]->id;
	CHECK_CODE(lt_schema_change_check(ds, &c, &err), LT_EINVALID);
	CHECK_CODE(lt_commit_schema_change(ds, &c, NULL, &res, &err), LT_EINVALID);
	frag_ids[0] = ds->fragments[0]->id;
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	CHECK_EQ_INT(res.version, 2);
	if (!(ds = reopen(s, ds)))
		return;
	CHECK(ds->transaction && ds->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_MERGE);
	CHECK_EQ_INT(ds->fragments[0]->n_files, 2);
	CHECK_EQ_INT(ds->fragments[1]->n_files, 2);
	count_int32(s, "v", 7, &eq, &nulls, &rows);
	CHECK_EQ_INT(rows, 32);
	CHECK_EQ_INT(eq, 32);
	CHECK_EQ_INT(nulls, 0);
	{
		size_t		n = 0, nf = 0;
		uint64_t	ver = 0;
		int64_t    *ids = scan_ids(s, &n, &ver, &nf);	/* the old columns read as before */

		CHECK_EQ_INT(n, 32);
		CHECK(ids && ids[31] == 31);
		free(ids);
	}
	lt_schema_free(fields);
	CHECK(!lt_assign_any(ds));

	/* a type change (Lance's alter_columns cast): v int32 -> int64, a new id, the old value files dropped */
	{
		static const lt_new_field v64[] = {{"v", "int64", true, -1}};
		static const lt_new_field vs[] = {{"s", "int32", true, -1}};
		lt_written_file cf[2];

		memset(&c, 0, sizeof(c));
		c.kind = LT_SCHEMA_ALTER_TYPE;
		c.name = "s";
		c.add = vs;
		c.n_add = 1;
		CHECK_CODE(lt_schema_change_check(ds, &c, &err), LT_EINVALID);	/* string -> int: another family */
		c.name = "v";
		c.add = v64;
		CHECK_OK(lt_schema_change_check(ds, &c, &err), err);
		CHECK_CODE(lt_commit_schema_change(ds, &c, NULL, &res, &err), LT_EINVALID);	/* no files */
		CHECK_OK(lt_schema_change_new_fields(ds, &c, &fields, &err), err);
		if (!fields)
			return;
		CHECK_EQ_INT(fields->fields[0]->id, 3);
		for (size_t k = 0; k < 2; k++)
		{
			write_constant64(s, fields, 7, (int64_t) ds->fragments[k]->physical_rows, &cf[k]);
			frag_ids[k] = ds->fragments[k]->id;
		}
		lt_schema_free(fields);
		c.n_files = 2;
		c.files = cf;
		c.file_fragments = frag_ids;
		CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
		if (!(ds = reopen(s, ds)))
			return;
		CHECK(ds->transaction && ds->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_MERGE);
		CHECK_EQ_INT(lt_schema_find_name(ds->schema, "v")->id, 3);
		CHECK(strcmp(lt_schema_find_name(ds->schema, "v")->logical_type, "int64") == 0);
		CHECK_EQ_INT(ds->schema->n_fields, 3);
		CHECK_EQ_INT(ds->fragments[0]->n_files, 2);	/* the int32 file held only the old field: gone */
		CHECK_EQ_INT(ds->fragments[1]->n_files, 2);
		count_int32(s, "v", 7, &eq, &nulls, &rows);	/* int64 now */
		CHECK_EQ_INT(eq, 32);
		for (int k = 0; k < 2; k++)
			lt_written_file_clear(&cf[k]);
		{
			size_t		n = 0, nf = 0;
			uint64_t	ver = 0;
			int64_t    *ids = scan_ids(s, &n, &ver, &nf);

			CHECK_EQ_INT(n, 32);
			free(ids);
		}
	}

	/* tracked from the same commit: unassigned (an empty root), then assigned (every fragment "all") */
	memset(&c, 0, sizeof(c));
	c.kind = LT_SCHEMA_ADD;
	c.add = u;
	c.n_add = 1;
	c.track = LT_SCHEMA_TRACK_UNASSIGNED;
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	if (!(ds = reopen(s, ds)))
		return;
	u_id = lt_schema_find_name(ds->schema, "u")->id;
	CHECK(lt_assign_is_tracked(ds, u_id, NULL));
	CHECK(ds->manifest->writer_feature_flags & LT_FLAG_FIELD_ASSIGNMENT);
	CHECK_OK(lt_assign_load(ds, u_id, &st, &err), err);
	CHECK(st && st->n_entries == 0);
	lt_assign_free(st);
	c.add = a;
	c.track = LT_SCHEMA_TRACK_ASSIGNED;
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	if (!(ds = reopen(s, ds)))
		return;
	a_id = lt_schema_find_name(ds->schema, "a")->id;
	CHECK(lt_assign_is_tracked(ds, u_id, NULL) && lt_assign_is_tracked(ds, a_id, NULL));
	CHECK_OK(lt_assign_load(ds, a_id, &st, &err), err);
	CHECK(st && st->n_entries == 2 && st->entries[0].kind == LT_ASSIGN_ALL && st->entries[1].kind == LT_ASSIGN_ALL);
	lt_assign_free(st);
	{
		char	  **paths = NULL;
		size_t		n = 0;

		CHECK_OK(lt_assign_referenced_files(ds, &paths, &n, &err), err);
		CHECK_EQ_INT(n, 2);		/* two roots, no bitmap */
		for (size_t i = 0; i < n; i++)
		{
			CHECK(strncmp(paths[i], "_assignment/", 12) == 0);
			lt_free(paths[i]);
		}
		lt_free(paths);
	}
	/* only a new column is tracked or given files */
	memset(&c, 0, sizeof(c));
	c.kind = LT_SCHEMA_RENAME;
	c.name = "u";
	c.new_name = "u2";
	c.track = LT_SCHEMA_TRACK_UNASSIGNED;
	CHECK_CODE(lt_schema_change_check(ds, &c, &err), LT_EINVALID);
	/* a rename keeps the state (keyed by id) */
	c.track = LT_SCHEMA_TRACK_NONE;
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	if (!(ds = reopen(s, ds)))
		return;
	CHECK_EQ_INT(lt_schema_find_name(ds->schema, "u2")->id, u_id);
	CHECK(lt_assign_is_tracked(ds, u_id, NULL));
	/* a drop takes the field's state with it; the other field stays tracked, the flag too */
	c.kind = LT_SCHEMA_DROP;
	c.name = "u2";
	c.new_name = NULL;
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	if (!(ds = reopen(s, ds)))
		return;
	CHECK(!lt_assign_is_tracked(ds, u_id, NULL));
	CHECK(lt_assign_is_tracked(ds, a_id, NULL));
	CHECK(ds->manifest->writer_feature_flags & LT_FLAG_FIELD_ASSIGNMENT);
	/* the last one dropped: no state, no flag; the dataset is writable as before */
	c.name = "a";
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	if (!(ds = reopen(s, ds)))
		return;
	CHECK(!lt_assign_any(ds));
	CHECK(!(ds->manifest->writer_feature_flags & LT_FLAG_FIELD_ASSIGNMENT));
	c.kind = LT_SCHEMA_RENAME;	/* a commit checks the writer flags */
	c.name = "v";
	c.new_name = "w";
	CHECK_OK(lt_commit_schema_change(ds, &c, NULL, &res, &err), err);
	count_int32(s, "w", 7, &eq, &nulls, &rows);
	CHECK_EQ_INT(eq, 32);

	lt_dataset_close(ds);
	for (int k = 0; k < 2; k++)
	{
		lt_written_file_clear(&wf[k]);
		lt_written_file_clear(&vf[k]);
	}
	lt_new_dataset_free(nd);
	lt_store_close(s);
}

TEST(tags_and_restore)
{
	lt_store   *s = NULL;
	lt_new_dataset *nd = NULL;
	lt_written_file wf[2];
	lt_commit_result res;
	lt_dataset *ds = NULL;
	char	  **names = NULL;
	uint64_t   *versions = NULL;
	size_t		n = 0, rows = 0, nf = 0;
	uint64_t	v = 0;
	int64_t    *ids;

	CHECK_OK(lt_store_mem_open(&s, &err), err);
	CHECK_OK(lt_new_dataset_init(two_cols, 2, "2.1", &nd, &err), err);
	if (!s || !nd)
		return;
	write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_1, 0, 10, &wf[0]);
	write_rows(s, lt_new_dataset_schema(nd), LT_FILE_V2_1, 100, 3, &wf[1]);
	CHECK_OK(lt_commit_create(s, PREFIX, nd, false, 1, &wf[0], &res, &err), err);
	CHECK_OK(lt_commit_create(s, PREFIX, nd, true, 1, &wf[1], &res, &err), err);	/* version 2: 3 rows */
	/* tags: made only if absent, for a committed version; listed sorted; read as versions */
	CHECK_OK(lt_tag_create(s, PREFIX, "b", 1, &err), err);
	CHECK_OK(lt_tag_create(s, PREFIX, "a", 2, &err), err);
	CHECK_CODE(lt_tag_create(s, PREFIX, "a", 1, &err), LT_ECONFLICT);
	CHECK_CODE(lt_tag_create(s, PREFIX, "c", 9, &err), LT_ENOTFOUND);
	CHECK_CODE(lt_tag_create(s, PREFIX, "../x", 1, &err), LT_EINVALID);
	CHECK_OK(lt_tags(s, PREFIX, &names, &versions, &n, &err), err);
	CHECK_EQ_INT(n, 2);
	if (n == 2)
	{
		CHECK(strcmp(names[0], "a") == 0 && versions[0] == 2);
		CHECK(strcmp(names[1], "b") == 0 && versions[1] == 1);
	}
	lt_tags_free(names, versions, n);
	{
		lt_version_spec spec = {0, "b"};

		CHECK_OK(lt_dataset_open(s, PREFIX, &spec, &ds, &err), err);
		if (ds)
		{
			CHECK_EQ_INT(ds->version, 1);
			lt_dataset_close(ds);
		}
	}
	CHECK_OK(lt_tag_delete(s, PREFIX, "a", &err), err);
	CHECK_CODE(lt_tag_delete(s, PREFIX, "a", &err), LT_ENOTFOUND);
	/* restore version 1: version 3 holds its 10 rows, a Restore */
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (!ds)
		return;
	CHECK_CODE(lt_commit_restore(ds, 2, NULL, &res, &err), LT_EINVALID);
	CHECK_OK(lt_commit_restore(ds, 1, NULL, &res, &err), err);
	CHECK_EQ_INT(res.version, 3);
	/* a second restore from the same read version: something was committed since */
	CHECK_CODE(lt_commit_restore(ds, 1, NULL, &res, &err), LT_ECONFLICT);
	lt_dataset_close(ds);
	ids = scan_ids(s, &rows, &v, &nf);
	CHECK_EQ_INT(v, 3);
	CHECK_EQ_INT(rows, 10);
	free(ids);
	CHECK_OK(lt_dataset_open(s, PREFIX, NULL, &ds, &err), err);
	if (ds)
	{
		CHECK(ds->transaction && ds->transaction->operation_case == LT__PB__TRANSACTION__OPERATION_RESTORE);
		lt_dataset_close(ds);
	}
	lt_written_file_clear(&wf[0]);
	lt_written_file_clear(&wf[1]);
	lt_new_dataset_free(nd);
	lt_store_close(s);
}

/* Lance's auto_cleanup_hook rules: humantime durations, the interval, older_than and retain_versions. */
TEST(auto_cleanup_policy)
{
	Lt__Pb__Manifest m = LT__PB__MANIFEST__INIT;
	Lt__Pb__Manifest__ConfigEntry e[3] = {LT__PB__MANIFEST__CONFIG_ENTRY__INIT, LT__PB__MANIFEST__CONFIG_ENTRY__INIT,
	LT__PB__MANIFEST__CONFIG_ENTRY__INIT};
	Lt__Pb__Manifest__ConfigEntry *ep[3] = {&e[0], &e[1], &e[2]};
	lt_dataset	ds = {0};
	lt_cleanup_policy p;
	lt_error	err;
	int64_t		ms;
	bool		due;
	const int64_t now = 1700000000000;

	CHECK_OK(lt_parse_duration_ms("14days", &ms, &err), err);
	CHECK_EQ_INT(ms, 14LL * 86400 * 1000);
	CHECK_OK(lt_parse_duration_ms("1h 30m", &ms, &err), err);
	CHECK_EQ_INT(ms, 5400 * 1000);
	CHECK_OK(lt_parse_duration_ms("2h37min", &ms, &err), err);
	CHECK_EQ_INT(ms, (2 * 3600 + 37 * 60) * 1000);
	CHECK_OK(lt_parse_duration_ms("0s", &ms, &err), err);
	CHECK_EQ_INT(ms, 0);
	CHECK_OK(lt_parse_duration_ms("1M", &ms, &err), err);
	CHECK_EQ_INT(ms, 2630016LL * 1000);
	CHECK_CODE(lt_parse_duration_ms("", &ms, &err), LT_EINVALID);
	CHECK_CODE(lt_parse_duration_ms("14", &ms, &err), LT_EINVALID);
	CHECK_CODE(lt_parse_duration_ms("1 fortnight", &ms, &err), LT_EINVALID);
	CHECK_CODE(lt_parse_duration_ms("1.5h", &ms, &err), LT_EINVALID);

	ds.manifest = &m;
	m.config = ep;
	/* no interval: never due */
	ds.version = 20;
	CHECK_OK(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), err);
	CHECK(!due);
	e[0].key = "lance.auto_cleanup.interval";
	e[0].value = "20";
	e[1].key = "lance.auto_cleanup.older_than";
	e[1].value = "1h";
	m.n_config = 2;
	ds.version = 39;
	CHECK_OK(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), err);
	CHECK(!due);				/* 39 is no multiple of 20 */
	ds.version = 40;
	CHECK_OK(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), err);
	CHECK(due);
	CHECK_EQ_INT(p.before_ms, now - 3600 * 1000);
	CHECK_EQ_INT(p.retain_versions, 0);
	CHECK(!p.delete_unverified && !p.error_if_tagged_old_versions);
	e[2].key = "lance.auto_cleanup.retain_versions";
	e[2].value = "5";
	m.n_config = 3;
	CHECK_OK(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), err);
	CHECK(due);
	CHECK_EQ_INT(p.retain_versions, 5);
	/* without older_than, the time holds nothing back */
	e[1] = e[2];
	m.n_config = 2;
	CHECK_OK(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), err);
	CHECK(due);
	CHECK_EQ_INT(p.before_ms, INT64_MAX);
	/* what Lance's hook fails on */
	e[1].value = "0";
	CHECK_CODE(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), LT_EINVALID);
	e[1].value = "5";
	e[0].value = "x";
	CHECK_CODE(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), LT_EINVALID);
	e[0].value = "0";
	CHECK_CODE(lt_auto_cleanup_policy(ds.manifest, ds.version, now, &p, &due, &err), LT_EINVALID);
}

int
main(void)
{
	RUN(new_schema_ids);
	RUN(create_and_overwrite);
	RUN(compaction);
	RUN(schema_changes);
	RUN(schema_values_and_assignment);
	RUN(tags_and_restore);
	RUN(auto_cleanup_policy);
	return unit_report("lifecycle");
}
