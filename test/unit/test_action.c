/*
 * Unit tests of lt_action: the footprint of every action, the verdict for every pair of
 * actions in both orders (a table), lifting of every legacy operation, lowering, the
 * manifest model's apply, and a property test: for random concurrent composites over one
 * manifest, "no conflict" implies that applying them in either order gives the same
 * manifest — and the verdict never depends on the order.
 */
#include <stdlib.h>
#include <string.h>

#include <roaring/roaring.h>

#include "txn/lt_action.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "unit.h"

static lt_error err;

/* Key filters for the tests: exact sets of small integer keys over one key field. */
static lt_key_filter *K1, *K2, *K3, *KX;	/* K2 overlaps K1; K3 is disjoint from both; KX: another key field */

static lt_key_filter *
keyset(int32_t field, int n, const int64_t *keys)
{
	lt_key_filter *f = NULL;
	lt_key_buf b = {0};

	CHECK_OK(lt_key_filter_new(LT_KEY_FILTER_EXACT, &field, 1, &f, &err), err);
	for (int i = 0; f && i < n; i++)
	{
		lt_key_buf_reset(&b);
		CHECK_OK(lt_key_buf_add_int64(&b, keys[i], false, &err), err);
		CHECK_OK(lt_key_filter_add(f, b.data, b.len, &err), err);
	}
	lt_key_buf_free(&b);
	return f;
}

static void
keys_init(void)
{
	K1 = keyset(1, 2, (int64_t[]) {1, 2});
	K2 = keyset(1, 2, (int64_t[]) {2, 5});
	K3 = keyset(1, 2, (int64_t[]) {7, 8});
	KX = keyset(2, 1, (int64_t[]) {9});
}

static roaring_bitmap_t *
rows_of(const uint32_t *r, size_t n)
{
	return roaring_bitmap_of_ptr(n, r);
}

/* ---- the pair table ----------------------------------------------------------------------- */

enum
{
	P_INS, P_INSK1, P_MOVED, P_DATA01, P_DEL0A, P_DEL0B, P_DEL1, P_RM0, P_RW0, P_REPL, P_IDXI, P_IDXJ,
	P_RMIDXI, P_CFGA, P_CFGB, P_KEYS1, P_KEYS3, P_PRED, P_UNINT, P_FMETA1, P_PKEY, N_P
};

static const char *const P_NAMES[N_P] = {
	"insert", "keyed insert K1", "moved rows", "data file f0.x1", "delete f0{1,2}", "delete f0{3}",
	"delete f1{1}", "remove f0", "rewrite f0", "replace all", "index i(x1; f0,f1)", "index j(x2; f1)",
	"drop index i", "config a", "config b", "assert keys K1", "assert keys K3", "replace predicate",
	"uninterpreted", "field metadata x1", "primary key x1 checked in f0"
};

/* One composite holding the single action of pair-table entry k. */
static void
make_single(int k, lt_composite *c)
{
	static const int32_t f12[] = {1, 2}, f1[] = {1}, f2[] = {2};
	static const uint64_t f01[] = {0, 1}, only1[] = {1}, only0[] = {0};

	lt_composite_init(c);
	CHECK_OK(lt_composite_begin(c, P_NAMES[k], &err), err);
	switch (k)
	{
		case P_INS: CHECK_OK(lt_add_fragment(c, 10, 5, "new.lance", f12, 2, false, NULL, &err), err); break;
		case P_INSK1: CHECK_OK(lt_add_fragment(c, 10, 5, "k.lance", f12, 2, false, K1, &err), err); break;
		case P_MOVED: CHECK_OK(lt_add_fragment(c, 10, 5, "mv.lance", f12, 2, true, NULL, &err), err); break;
		case P_DATA01: CHECK_OK(lt_add_data_file(c, 0, "x1.lance", f1, 1, &err), err); break;
		case P_DEL0A: CHECK_OK(lt_set_deletion_file(c, 0, rows_of((uint32_t[]) {1, 2}, 2), &err), err); break;
		case P_DEL0B: CHECK_OK(lt_set_deletion_file(c, 0, rows_of((uint32_t[]) {3}, 1), &err), err); break;
		case P_DEL1: CHECK_OK(lt_set_deletion_file(c, 1, rows_of((uint32_t[]) {1}, 1), &err), err); break;
		case P_RM0: CHECK_OK(lt_remove_fragment(c, 0, &err), err); break;
		case P_RW0: CHECK_OK(lt_rewrite_fragments(c, only0, 1, &err), err); break;
		case P_REPL: CHECK_OK(lt_replace_all(c, &err), err); break;
		case P_IDXI: CHECK_OK(lt_add_index(c, "i", f1, 1, f01, 2, &err), err); break;
		case P_IDXJ: CHECK_OK(lt_add_index(c, "j", f2, 1, only1, 1, &err), err); break;
		case P_RMIDXI: CHECK_OK(lt_remove_index(c, "i", &err), err); break;
		case P_CFGA: CHECK_OK(lt_update_config(c, "a", "1", &err), err); break;
		case P_CFGB: CHECK_OK(lt_update_config(c, "b", NULL, &err), err); break;
		case P_KEYS1: CHECK_OK(lt_assert_unique_keys(c, K1, &err), err); break;
		case P_KEYS3: CHECK_OK(lt_assert_unique_keys(c, K3, &err), err); break;
		case P_PRED: CHECK_OK(lt_assert_no_matching_inserts(c, &err), err); break;
		case P_UNINT: CHECK_OK(lt_uninterpreted(c, "Merge", &err), err); break;
		case P_FMETA1: CHECK_OK(lt_update_field_metadata(c, f1, 1, &err), err); break;
		case P_PKEY: CHECK_OK(lt_assert_key_checked(c, f1, 1, only0, 1, &err), err); break;
	}
}

/*
 * The verdicts: row k lists, for every entry j, whether k and j conflict ('x') or not ('.').
 * It must be symmetric; the test checks that too, and every cell in both orders.
 */
static const char *const P_TABLE[N_P] = {
	/*           012345678901234567890 */
	/* INS    */ ".........x.....xxxx.x",
	/* INSK1  */ ".........x.....x.xx.x",
	/* MOVED  */ ".........x........x..",
	/* DATA01 */ "...x...xxxx.......x.x",
	/* DEL0A  */ "....x..xxx........x..",
	/* DEL0B  */ ".....x.xxx........x..",
	/* DEL1   */ "......x..x........x..",
	/* RM0    */ "...xxx.xxx........x..",
	/* RW0    */ "...xxx.xxxx.......x.x",
	/* REPL   */ "xxxxxxxxxxxxxxxxxxxxx",
	/* IDXI   */ "...x....xxx.x.....x..",
	/* IDXJ   */ ".........x.x......x..",
	/* RMIDXI */ ".........xx.x.....x..",
	/* CFGA   */ ".........x...x....x..",
	/* CFGB   */ ".........x....x...x..",
	/* KEYS1  */ "xx.......x........xx.",
	/* KEYS3  */ "x........x........xx.",
	/* PRED   */ "xx.......x........x..",
	/* UNINT  */ "xxxxxxxxxxxxxxxxxxxxx",
	/* FMETA1 */ ".........x.....xx.xxx",
	/* PKEY   */ "xx.x....xx........xx.",
};

TEST(pair_table)
{
	lt_composite c[N_P];
	lt_footprint f[N_P];

	for (int k = 0; k < N_P; k++)
	{
		make_single(k, &c[k]);
		CHECK_OK(lt_footprint_of(&c[k], &f[k], &err), err);
	}
	for (int k = 0; k < N_P; k++)
		for (int j = 0; j < N_P; j++)
		{
			bool		kj = lt_conflicts(&f[k], &f[j], NULL), jk = lt_conflicts(&f[j], &f[k], NULL);
			bool		want = P_TABLE[k][j] == 'x';

			CHECK(P_TABLE[k][j] == P_TABLE[j][k]);
			if (kj != want || jk != want)
			{
				unit_failures++;
				fprintf(stderr, "FAIL pair_table: %s vs %s: %d/%d, expected %d\n", P_NAMES[k], P_NAMES[j], kj, jk,
						want);
			}
			unit_checks++;
		}
	for (int k = 0; k < N_P; k++)
	{
		lt_footprint_clear(&f[k]);
		lt_composite_clear(&c[k]);
	}
}

/* Key claims: overlapping and incomparable filters conflict, disjoint ones do not. */
TEST(key_claims)
{
	static const int32_t f1[] = {1};
	lt_key_filter *ins[] = {NULL, K1, K2, K3, KX};
	const char *want = "xxx.x";		/* vs a claim on K1: unknown, same, overlapping, disjoint, incomparable */
	lt_composite claim, insert;
	lt_footprint fc, fi;
	lt_clash why;
	char		msg[512];

	lt_composite_init(&claim);
	CHECK_OK(lt_assert_unique_keys(&claim, K1, &err), err);
	CHECK_OK(lt_add_fragment(&claim, 3, 2, "mine.lance", f1, 1, false, K1, &err), err);
	CHECK_OK(lt_footprint_of(&claim, &fc, &err), err);
	for (int i = 0; i < 5; i++)
	{
		lt_composite_init(&insert);
		insert.op = "Update";
		CHECK_OK(lt_add_fragment(&insert, 3, 2, "theirs.lance", f1, 1, false, ins[i], &err), err);
		CHECK_OK(lt_footprint_of(&insert, &fi, &err), err);
		CHECK_EQ_INT(lt_conflicts(&fc, &fi, &why), want[i] == 'x');
		CHECK_EQ_INT(lt_conflicts(&fi, &fc, NULL), want[i] == 'x');
		if (want[i] == 'x')
		{
			lt_clash_describe(&why, &claim, &insert, 7, "ds", msg, sizeof(msg));
			CHECK(strstr(msg, "version 7 of ds, an Update") != NULL);
			CHECK(strstr(msg, i == 0 ? "without saying which keys" : "may be among") != NULL);
		}
		lt_footprint_clear(&fi);
		lt_composite_clear(&insert);
	}
	/* a claim on every key (a primary key being set) meets any insert, even a keyed one */
	lt_composite_init(&insert);
	CHECK_OK(lt_assert_unique_keys(&insert, NULL, &err), err);
	CHECK_OK(lt_footprint_of(&insert, &fi, &err), err);
	CHECK(lt_conflicts(&fc, &fi, NULL) && lt_conflicts(&fi, &fc, NULL));
	lt_footprint_clear(&fi);
	lt_composite_clear(&insert);
	lt_footprint_clear(&fc);
	lt_composite_clear(&claim);
}

/* The footprint of each action: what it writes and what it depends on. */
static int
count_kind(const lt_coord *c, size_t n, lt_coord_kind k)
{
	int			m = 0;

	for (size_t i = 0; i < n; i++)
		m += c[i].kind == k;
	return m;
}

TEST(footprints)
{
	lt_composite c;
	lt_footprint f;

	/* an index over two fragments and one field: writes the name, depends on both layouts and data */
	make_single(P_IDXI, &c);
	CHECK_OK(lt_footprint_of(&c, &f, &err), err);
	CHECK_EQ_INT(f.n_writes, 1);
	CHECK_EQ_INT(f.writes[0].kind, LT_CO_INDEX);
	CHECK(strcmp(f.writes[0].name, "i") == 0);
	CHECK_EQ_INT(count_kind(f.deps, f.n_deps, LT_CO_LAYOUT), 2);
	CHECK_EQ_INT(count_kind(f.deps, f.n_deps, LT_CO_DATA), 2);
	CHECK_EQ_INT(count_kind(f.deps, f.n_deps, LT_CO_FIELD), 1);
	lt_footprint_clear(&f);
	lt_composite_clear(&c);
	/* a delete: the rows, depending on the layout */
	make_single(P_DEL0A, &c);
	CHECK_OK(lt_footprint_of(&c, &f, &err), err);
	CHECK(f.n_writes == 1 && f.writes[0].kind == LT_CO_ROWS && f.writes[0].rows &&
		  roaring_bitmap_get_cardinality(f.writes[0].rows) == 2);
	CHECK(f.n_deps == 1 && f.deps[0].kind == LT_CO_LAYOUT && f.deps[0].fragment == 0);
	lt_footprint_clear(&f);
	lt_composite_clear(&c);
	/* moved rows insert nothing; inserted rows set the marker */
	make_single(P_MOVED, &c);
	CHECK_OK(lt_footprint_of(&c, &f, &err), err);
	CHECK_EQ_INT(f.n_writes, 0);
	lt_footprint_clear(&f);
	lt_composite_clear(&c);
	make_single(P_INSK1, &c);
	CHECK_OK(lt_footprint_of(&c, &f, &err), err);
	CHECK(f.n_writes == 1 && f.writes[0].kind == LT_CO_INSERT && f.writes[0].keys == K1 &&
		  f.writes[0].fragment == 10);
	lt_footprint_clear(&f);
	lt_composite_clear(&c);
	/* a rewrite writes every old fragment's layout and existence */
	lt_composite_init(&c);
	CHECK_OK(lt_rewrite_fragments(&c, (uint64_t[]) {4, 2, 9}, 3, &err), err);
	CHECK_OK(lt_footprint_of(&c, &f, &err), err);
	CHECK_EQ_INT(count_kind(f.writes, f.n_writes, LT_CO_LAYOUT), 3);
	CHECK_EQ_INT(count_kind(f.writes, f.n_writes, LT_CO_EXISTS), 3);
	/* sorted by kind, then fragment */
	for (size_t i = 1; i < f.n_writes; i++)
		CHECK(f.writes[i - 1].kind < f.writes[i].kind ||
			  (f.writes[i - 1].kind == f.writes[i].kind && f.writes[i - 1].fragment <= f.writes[i].fragment));
	lt_footprint_clear(&f);
	lt_composite_clear(&c);
	/* user actions group the actions */
	lt_composite_init(&c);
	CHECK_OK(lt_composite_begin(&c, "delete", &err), err);
	CHECK_OK(lt_remove_fragment(&c, 1, &err), err);
	CHECK_OK(lt_remove_fragment(&c, 2, &err), err);
	CHECK_OK(lt_composite_begin(&c, "insert", &err), err);
	CHECK_OK(lt_add_fragment(&c, 9, 1, "a.lance", NULL, 0, false, NULL, &err), err);
	CHECK(c.n_users == 2 && c.users[0].n == 2 && c.users[1].first == 2 && c.users[1].n == 1);
	CHECK(strcmp(c.users[1].what, "insert") == 0);
	lt_composite_clear(&c);
}

/* The clash iterator visits every clash once, and the messages name what met. */
TEST(clashes_and_messages)
{
	lt_composite ours, theirs;
	lt_footprint fo, ft;
	lt_clash why;
	size_t		cursor = 0;
	int			n = 0;
	char		msg[512];

	lt_composite_init(&ours);
	lt_composite_init(&theirs);
	theirs.op = "Delete";
	CHECK_OK(lt_set_deletion_file(&ours, 3, rows_of((uint32_t[]) {1, 2, 3}, 3), &err), err);
	CHECK_OK(lt_set_deletion_file(&ours, 5, rows_of((uint32_t[]) {7}, 1), &err), err);
	CHECK_OK(lt_set_deletion_file(&theirs, 3, rows_of((uint32_t[]) {3, 4}, 2), &err), err);
	CHECK_OK(lt_remove_fragment(&theirs, 5, &err), err);
	CHECK_OK(lt_footprint_of(&ours, &fo, &err), err);
	CHECK_OK(lt_footprint_of(&theirs, &ft, &err), err);
	while (lt_next_clash(&fo, &ft, &cursor, &why))
	{
		n++;
		lt_clash_describe(&why, &ours, &theirs, 12, "lake/t", msg, sizeof(msg));
		if (why.b->fragment == 3)
			CHECK(strcmp(msg, "concurrent commit (version 12 of lake/t, a Delete) deleted or updated some of the same rows of fragment 3") == 0);
		else
			CHECK(strcmp(msg, "concurrent commit (version 12 of lake/t, a Delete) deleted every row of fragment 5, which this transaction deletes from") == 0);
	}
	CHECK_EQ_INT(n, 2);
	lt_footprint_clear(&fo);
	lt_footprint_clear(&ft);
	lt_composite_clear(&theirs);
	/* an uninterpreted operation names itself; an unreadable transaction says so */
	CHECK_OK(lt_footprint_of(&ours, &fo, &err), err);
	lt_composite_init(&theirs);
	theirs.op = "Overwrite";
	CHECK_OK(lt_uninterpreted(&theirs, "Overwrite", &err), err);
	CHECK_OK(lt_footprint_of(&theirs, &ft, &err), err);
	CHECK(lt_conflicts(&fo, &ft, &why));
	lt_clash_describe(&why, &ours, &theirs, 4, "d", msg, sizeof(msg));
	CHECK(strcmp(msg, "concurrent commit (version 4 of d, an Overwrite) conflicts with this transaction") == 0);
	lt_footprint_clear(&ft);
	lt_composite_clear(&theirs);
	CHECK_OK(lt_lift(NULL, NULL, &theirs, &err), err);
	CHECK_OK(lt_footprint_of(&theirs, &ft, &err), err);
	CHECK(lt_conflicts(&fo, &ft, &why));
	lt_clash_describe(&why, &ours, &theirs, 4, "d", msg, sizeof(msg));
	CHECK(strstr(msg, "version 4 of d was committed concurrently and its transaction cannot be read") != NULL);
	lt_footprint_clear(&ft);
	lt_composite_clear(&theirs);
	lt_footprint_clear(&fo);
	lt_composite_clear(&ours);
}

/* ---- lifting --------------------------------------------------------------------------------- */

/* A fragment with one data file. */
typedef struct pbfrag
{
	Lt__Pb__DataFragment f;
	Lt__Pb__DataFile df;
	Lt__Pb__DataFile *dfs[1];
	int32_t		fields[2];
	char		path[32];
} pbfrag;

static void
pbfrag_init(pbfrag *p, uint64_t id, uint64_t rows, const char *path)
{
	lt__pb__data_fragment__init(&p->f);
	lt__pb__data_file__init(&p->df);
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->fields[0] = 0;
	p->fields[1] = 1;
	p->df.path = p->path;
	p->df.n_fields = 2;
	p->df.fields = p->fields;
	p->dfs[0] = &p->df;
	p->f.has_id = p->f.has_physical_rows = true;
	p->f.id = id;
	p->f.physical_rows = rows;
	p->f.n_files = 1;
	p->f.files = p->dfs;
}

/* The previous version for lifting: fragments 0..2 (f0.lance, ...). */
static pbfrag prev_frags[3];
static Lt__Pb__DataFragment *prev_ptrs[3];
static lt_dataset prev_ds;

static void
prev_init(void)
{
	char		name[16];

	memset(&prev_ds, 0, sizeof(prev_ds));
	for (int i = 0; i < 3; i++)
	{
		snprintf(name, sizeof(name), "f%d.lance", i);
		pbfrag_init(&prev_frags[i], (uint64_t) i, 100, name);
		prev_ptrs[i] = &prev_frags[i].f;
	}
	prev_ds.fragments = prev_ptrs;
	prev_ds.n_fragments = 3;
}

static lt_code
rows_cb(void *arg, const Lt__Pb__DataFragment *updated, roaring_bitmap_t **rows, lt_error *e)
{
	(void) arg;
	(void) e;
	/* pretend every updated fragment lost rows 10 and 11 */
	*rows = roaring_bitmap_of(2, 10, 11);
	return LT_OK;
}

static int
count_actions(const lt_composite *c, lt_action_kind k)
{
	int			n = 0;

	for (size_t i = 0; i < c->n_actions; i++)
		n += c->actions[i].kind == k;
	return n;
}

TEST(lift_operations)
{
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	lt_lift_source src = {&prev_ds, rows_cb, NULL};
	lt_composite c;
	pbfrag nf, upd, upd2;
	Lt__Pb__DataFragment *nfs[1] = {&nf.f}, *upds[2] = {&upd.f, &upd2.f};
	uint64_t	removed[1] = {2};

	prev_init();
	pbfrag_init(&nf, 7, 5, "new.lance");
	pbfrag_init(&upd, 0, 100, "f0.lance");
	pbfrag_init(&upd2, 1, 100, "f1-rewritten.lance");
	tx.has_read_version = true;
	/* Append: one inserted fragment, fields from its file */
	{
		Lt__Pb__Transaction__Append app = LT__PB__TRANSACTION__APPEND__INIT;

		app.n_fragments = 1;
		app.fragments = nfs;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_APPEND;
		tx.append = &app;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(strcmp(c.op, "Append") == 0);
		CHECK(c.n_actions == 1 && c.actions[0].kind == LT_ACT_ADD_FRAGMENT && !c.actions[0].moved &&
			  c.actions[0].n_fields == 2 && strcmp(c.actions[0].path, "new.lance") == 0);
		CHECK(lt_lower_op(&c) == LT_LOWER_APPEND);
		lt_composite_clear(&c);
	}
	/* Delete: rows from the callback; a changed data file counts as a new layout; removals */
	{
		Lt__Pb__Transaction__Delete del = LT__PB__TRANSACTION__DELETE__INIT;

		del.n_updated_fragments = 2;
		del.updated_fragments = upds;
		del.n_deleted_fragment_ids = 1;
		del.deleted_fragment_ids = removed;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_DELETE;
		tx.delete_ = &del;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK_EQ_INT(count_actions(&c, LT_ACT_SET_DELETION_FILE), 2);
		CHECK_EQ_INT(count_actions(&c, LT_ACT_REMOVE_FRAGMENT), 1);
		CHECK(c.actions[0].rows && roaring_bitmap_contains(c.actions[0].rows, 11) && !c.actions[0].new_layout);
		CHECK(c.actions[1].new_layout);
		CHECK(lt_lower_op(&c) == LT_LOWER_DELETE);
		lt_composite_clear(&c);
		/* without a rows callback or a previous version: unknown rows, unknown layout */
		CHECK_OK(lt_lift(&tx, NULL, &c, &err), err);
		CHECK(c.actions[0].rows == NULL && c.actions[0].new_layout);
		lt_composite_clear(&c);
	}
	/* Update (rows): deletions, modified fields of kept fragments, inserted rows */
	{
		Lt__Pb__Transaction__Update u = LT__PB__TRANSACTION__UPDATE__INIT;
		uint32_t	mod[1] = {1};

		u.n_updated_fragments = 1;
		u.updated_fragments = upds;
		u.n_new_fragments = 1;
		u.new_fragments = nfs;
		u.n_fields_modified = 1;
		u.fields_modified = mod;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_UPDATE;
		tx.update = &u;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(strcmp(c.op, "Update") == 0);
		CHECK_EQ_INT(count_actions(&c, LT_ACT_SET_DELETION_FILE), 1);
		CHECK_EQ_INT(count_actions(&c, LT_ACT_ADD_DATA_FILE), 1);
		CHECK_EQ_INT(count_actions(&c, LT_ACT_ADD_FRAGMENT), 1);
		lt_composite_clear(&c);
		/* columns rewritten in place: fail closed */
		u.has_update_mode = true;
		u.update_mode = LT__PB__TRANSACTION__UPDATE_MODE__REWRITE_COLUMNS;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(c.n_actions == 1 && c.actions[0].kind == LT_ACT_UNINTERPRETED);
		lt_composite_clear(&c);
		/* a keyed insert: the filter goes on its new fragments, with its claim that the keys are new */
		{
			lt_key_filter_pb kpb;

			u.has_update_mode = false;
			lt_key_filter_to_pb(K1, &kpb);
			u.inserted_rows = &kpb.msg;
			CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
			CHECK(c.n_owned_keys == 1 && count_actions(&c, LT_ACT_ASSERT_UNIQUE_KEYS) == 1);
			CHECK(c.actions[c.n_actions - 1].kind == LT_ACT_ADD_FRAGMENT && c.actions[c.n_actions - 1].keys == c.owned_keys[0]);
			CHECK(lt_key_filter_overlap(c.owned_keys[0], K1) == LT_KEYS_OVERLAP &&
				  lt_key_filter_overlap(c.owned_keys[0], K3) == LT_KEYS_DISJOINT);
			lt_composite_clear(&c);
			/* a filter that does not decode: fail closed */
			kpb.bloom.has_bitmap = true;
			kpb.bloom.bitmap.len = 5;
			kpb.bloom.bitmap.data = (uint8_t *) "xxxxx";
			kpb.msg.data_case = LT__PB__TRANSACTION__KEY_EXISTENCE_FILTER__DATA_BLOOM;
			kpb.msg.bloom = &kpb.bloom;
			CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
			CHECK(c.n_actions == 1 && c.actions[0].kind == LT_ACT_UNINTERPRETED && c.n_owned_keys == 0);
			lt_composite_clear(&c);
			u.inserted_rows = NULL;
		}
		/* a field this library does not know (a newer writer's): fail closed */
		{
			uint8_t		buf[256];
			size_t		len;
			Lt__Pb__Transaction__Update *withx;

			u.has_update_mode = false;
			len = protobuf_c_message_pack(&u.base, buf);
			buf[len++] = (9 << 3) | 2;	/* field 9 (a newer Lance's offsets), length-delimited, empty */
			buf[len++] = 0;
			withx = (Lt__Pb__Transaction__Update *) protobuf_c_message_unpack(&lt__pb__transaction__update__descriptor, NULL, len, buf);
			CHECK(withx && withx->base.n_unknown_fields == 1);
			tx.update = withx;
			CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
			CHECK(c.n_actions == 1 && c.actions[0].kind == LT_ACT_UNINTERPRETED);
			lt_composite_clear(&c);
			protobuf_c_message_free_unpacked(&withx->base, NULL);
		}
	}
	/* Rewrite: old fragments (flat and in groups), new ones moved */
	{
		Lt__Pb__Transaction__Rewrite rw = LT__PB__TRANSACTION__REWRITE__INIT;
		Lt__Pb__Transaction__RewriteGroup g = LT__PB__TRANSACTION__REWRITE_GROUP__INIT;
		Lt__Pb__Transaction__RewriteGroup *gs[1] = {&g};
		Lt__Pb__DataFragment *old1[1] = {&upd2.f};

		rw.n_old_fragments = 1;
		rw.old_fragments = upds;
		g.n_old_fragments = 1;
		g.old_fragments = old1;
		g.n_new_fragments = 1;
		g.new_fragments = nfs;
		rw.n_groups = 1;
		rw.groups = gs;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_REWRITE;
		tx.rewrite = &rw;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(c.actions[0].kind == LT_ACT_REWRITE_FRAGMENTS && c.actions[0].n_frags == 2);
		CHECK(c.n_actions == 2 && c.actions[1].kind == LT_ACT_ADD_FRAGMENT && c.actions[1].moved);
		CHECK(lt_lower_op(&c) == LT_LOWER_REWRITE);
		lt_composite_clear(&c);
	}
	/* CreateIndex: covered fragments from the bitmap; removed indexes */
	{
		Lt__Pb__Transaction__CreateIndex ci = LT__PB__TRANSACTION__CREATE_INDEX__INIT;
		Lt__Pb__IndexMetadata im = LT__PB__INDEX_METADATA__INIT, old = LT__PB__INDEX_METADATA__INIT;
		Lt__Pb__IndexMetadata *ims[1] = {&im}, *olds[1] = {&old};
		roaring_bitmap_t *b = roaring_bitmap_of(2, 0, 2);
		uint8_t		bm[64];
		int32_t		fld = 1;

		im.name = old.name = "idx";
		im.n_fields = 1;
		im.fields = &fld;
		im.has_fragment_bitmap = true;
		im.fragment_bitmap.len = roaring_bitmap_portable_serialize(b, (char *) bm);
		im.fragment_bitmap.data = bm;
		roaring_bitmap_free(b);
		ci.n_new_indices = 1;
		ci.new_indices = ims;
		ci.n_removed_indices = 1;
		ci.removed_indices = olds;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_CREATE_INDEX;
		tx.create_index = &ci;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(c.n_actions == 2 && c.actions[0].kind == LT_ACT_REMOVE_INDEX && c.actions[1].kind == LT_ACT_ADD_INDEX);
		CHECK(c.actions[1].n_frags == 2 && c.actions[1].frags[1] == 2 && strcmp(c.actions[1].name, "idx") == 0);
		CHECK(lt_lower_op(&c) == LT_LOWER_CREATE_INDEX);
		lt_composite_clear(&c);
		/* no bitmap: every fragment of the previous version */
		im.has_fragment_bitmap = false;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(c.actions[1].n_frags == 3);
		lt_composite_clear(&c);
		/* a corrupt bitmap: fail closed */
		im.has_fragment_bitmap = true;
		im.fragment_bitmap.len = 3;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(c.n_actions == 1 && c.actions[0].kind == LT_ACT_UNINTERPRETED);
		lt_composite_clear(&c);
	}
	/* UpdateConfig keys; ReserveFragments nothing; Overwrite replaces all */
	{
		Lt__Pb__Transaction__UpdateConfig uc = LT__PB__TRANSACTION__UPDATE_CONFIG__INIT;
		Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry e = LT__PB__TRANSACTION__UPDATE_CONFIG__UPSERT_VALUES_ENTRY__INIT;
		Lt__Pb__Transaction__UpdateConfig__UpsertValuesEntry *es[1] = {&e};
		char	   *dk[1] = {"gone"};
		Lt__Pb__Transaction__ReserveFragments rf = LT__PB__TRANSACTION__RESERVE_FRAGMENTS__INIT;
		Lt__Pb__Transaction__Overwrite ow = LT__PB__TRANSACTION__OVERWRITE__INIT;

		e.key = "k";
		e.value = "v";
		uc.n_upsert_values = 1;
		uc.upsert_values = es;
		uc.n_delete_keys = 1;
		uc.delete_keys = dk;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_UPDATE_CONFIG;
		tx.update_config = &uc;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(c.n_actions == 2 && c.actions[0].kind == LT_ACT_UPDATE_CONFIG && strcmp(c.actions[0].value, "v") == 0 &&
			  c.actions[1].value == NULL && strcmp(c.actions[1].name, "gone") == 0);
		lt_composite_clear(&c);
		/* field metadata: the primary key's mark also claims every key (lt_set_primary_key) */
		{
			Lt__Pb__Transaction__UpdateConfig fm = LT__PB__TRANSACTION__UPDATE_CONFIG__INIT;
			Lt__Pb__Transaction__UpdateConfig__FieldMetadataUpdatesEntry fe = LT__PB__TRANSACTION__UPDATE_CONFIG__FIELD_METADATA_UPDATES_ENTRY__INIT;
			Lt__Pb__Transaction__UpdateConfig__FieldMetadataUpdatesEntry *fes[1] = {&fe};
			Lt__Pb__Transaction__UpdateMap um = LT__PB__TRANSACTION__UPDATE_MAP__INIT;
			Lt__Pb__Transaction__UpdateMapEntry me = LT__PB__TRANSACTION__UPDATE_MAP_ENTRY__INIT;
			Lt__Pb__Transaction__UpdateMapEntry *mes[1] = {&me};
			lt_footprint fp, fi;
			lt_composite ins;

			me.key = LT_PK_POSITION_METADATA_KEY;
			me.value = "1";
			um.n_update_entries = 1;
			um.update_entries = mes;
			fe.has_key = true;
			fe.key = 3;
			fe.value = &um;
			fm.n_field_metadata_updates = 1;
			fm.field_metadata_updates = fes;
			tx.update_config = &fm;
			CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
			CHECK(c.n_actions == 2 && c.actions[0].kind == LT_ACT_UPDATE_FIELD_METADATA && c.actions[0].fields[0] == 3 &&
				  c.actions[1].kind == LT_ACT_ASSERT_UNIQUE_KEYS && c.actions[1].keys == NULL);
			/* ... so a concurrent keyed insert conflicts both ways */
			make_single(P_INSK1, &ins);
			CHECK_OK(lt_footprint_of(&c, &fp, &err), err);
			CHECK_OK(lt_footprint_of(&ins, &fi, &err), err);
			CHECK(lt_conflicts(&fp, &fi, NULL) && lt_conflicts(&fi, &fp, NULL));
			lt_footprint_clear(&fp);
			lt_footprint_clear(&fi);
			lt_composite_clear(&ins);
			lt_composite_clear(&c);
			/* other metadata: only the fields' metadata */
			me.key = "comment";
			CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
			CHECK(c.n_actions == 1 && c.actions[0].kind == LT_ACT_UPDATE_FIELD_METADATA);
			lt_composite_clear(&c);
		}
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_RESERVE_FRAGMENTS;
		tx.reserve_fragments = &rf;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK_EQ_INT(c.n_actions, 0);
		lt_composite_clear(&c);
		ow.n_fragments = 1;
		ow.fragments = nfs;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_OVERWRITE;
		tx.overwrite = &ow;
		CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
		CHECK(c.n_actions == 2 && c.actions[0].kind == LT_ACT_REPLACE_ALL && c.actions[1].kind == LT_ACT_ADD_FRAGMENT);
		CHECK(lt_lower_op(&c) == LT_LOWER_OVERWRITE);
		lt_composite_clear(&c);
	}
	/* everything else fails closed, named */
	{
		static const struct
		{
			Lt__Pb__Transaction__OperationCase op;
			const char *name;
		}			rest[] = {
			{LT__PB__TRANSACTION__OPERATION_MERGE, "Merge"},
			{LT__PB__TRANSACTION__OPERATION_PROJECT, "Project"},
			{LT__PB__TRANSACTION__OPERATION_RESTORE, "Restore"},
			{LT__PB__TRANSACTION__OPERATION_DATA_REPLACEMENT, "DataReplacement"},
			{LT__PB__TRANSACTION__OPERATION_UPDATE_MEM_WAL_STATE, "UpdateMemWalState"},
			{LT__PB__TRANSACTION__OPERATION_CLONE, "Clone"},
			{LT__PB__TRANSACTION__OPERATION_UPDATE_BASES, "UpdateBases"},
			{LT__PB__TRANSACTION__OPERATION__NOT_SET, "unknown operation"},
		};
		Lt__Pb__Transaction__Merge mg = LT__PB__TRANSACTION__MERGE__INIT;

		for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
		{
			tx.operation_case = rest[i].op;
			tx.merge = &mg;
			CHECK_OK(lt_lift(&tx, &src, &c, &err), err);
			CHECK(c.n_actions == 1 && c.actions[0].kind == LT_ACT_UNINTERPRETED && strcmp(c.op, rest[i].name) == 0);
			CHECK(lt_lower_op(&c) == LT_LOWER_INVALID);
			lt_composite_clear(&c);
		}
	}
}

/* Lowering: which legacy operation a composite of ours is written as. */
TEST(lowering)
{
	lt_composite c;

	lt_composite_init(&c);
	CHECK(lt_lower_op(&c) == LT_LOWER_NONE);
	CHECK_OK(lt_remove_fragment(&c, 1, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_DELETE);
	CHECK_OK(lt_add_fragment(&c, 5, 1, "a", NULL, 0, false, NULL, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_UPDATE);
	CHECK_OK(lt_assert_no_matching_inserts(&c, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_UPDATE);
	lt_composite_clear(&c);
	/* inserts alone are an Append; with a key claim an Update (Lance carries the filter there) */
	CHECK_OK(lt_add_fragment(&c, 5, 1, "a", NULL, 0, false, K1, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_APPEND);
	CHECK_OK(lt_assert_unique_keys(&c, K1, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_UPDATE);
	/* an index build cannot ride along with data changes */
	CHECK_OK(lt_add_index(&c, "i", NULL, 0, NULL, 0, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_INVALID);
	lt_composite_clear(&c);
	CHECK_OK(lt_replace_all(&c, &err), err);
	CHECK_OK(lt_add_fragment(&c, 0, 1, "a", NULL, 0, false, NULL, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_OVERWRITE);
	CHECK_OK(lt_remove_fragment(&c, 0, &err), err);
	CHECK(lt_lower_op(&c) == LT_LOWER_INVALID);
	lt_composite_clear(&c);
}

/* ---- the model: apply ------------------------------------------------------------------------ */

/* A base manifest: n fragments f<i> of `rows` rows (every 7th row deleted), index "i0" on field 1 over all. */
static void
base_model(lt_model *m, int n, uint64_t rows)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < n; i++)
	{
		lt_composite c;
		char		path[32];
		static const int32_t f12[] = {1, 2};

		snprintf(path, sizeof(path), "f%d.lance", i);
		lt_composite_init(&c);
		CHECK_OK(lt_add_fragment(&c, 0, rows, path, f12, 2, false, NULL, &err), err);
		CHECK_OK(lt_apply(m, &c, &err), err);
		lt_composite_clear(&c);
		for (uint64_t r = 0; r < rows; r += 7)
			roaring_bitmap_add(m->frags[i].deleted, (uint32_t) r);
	}
	{
		lt_composite c;
		uint64_t	all[16];
		static const int32_t f1[] = {1};

		for (int i = 0; i < n; i++)
			all[i] = (uint64_t) i;
		lt_composite_init(&c);
		CHECK_OK(lt_add_index(&c, "i0", f1, 1, all, (size_t) n, &err), err);
		CHECK_OK(lt_apply(m, &c, &err), err);
		lt_composite_clear(&c);
	}
}

TEST(apply_actions)
{
	lt_model m, copy;
	lt_composite c;
	static const int32_t f1[] = {1};

	base_model(&m, 3, 20);
	CHECK_EQ_INT(m.n_frags, 3);
	CHECK_EQ_INT(m.next_id, 3);
	CHECK(m.n_indexes == 1 && m.indexes[0].n_covered == 3);
	CHECK_OK(lt_model_copy(&m, &copy, &err), err);
	CHECK(lt_model_equal(&m, &copy));
	/* deletes: rows join the deletion vector; deleting deleted rows or a missing fragment conflicts */
	lt_composite_init(&c);
	CHECK_OK(lt_set_deletion_file(&c, 1, rows_of((uint32_t[]) {1, 2}, 2), &err), err);
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK_EQ_INT(roaring_bitmap_get_cardinality(lt_model_find(&m, 1)->deleted), 3 + 2);
	CHECK(!lt_model_equal(&m, &copy));
	CHECK_CODE(lt_apply(&m, &c, &err), LT_ECONFLICT);
	lt_composite_clear(&c);
	lt_composite_init(&c);
	CHECK_OK(lt_remove_fragment(&c, 2, &err), err);
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK(lt_model_find(&m, 2) == NULL);
	CHECK_CODE(lt_apply(&m, &c, &err), LT_ECONFLICT);
	lt_composite_clear(&c);
	/* a delete that leaves no row removes the fragment */
	lt_composite_init(&c);
	{
		roaring_bitmap_t *r = roaring_bitmap_create();

		roaring_bitmap_add_range(r, 0, 20);
		roaring_bitmap_andnot_inplace(r, lt_model_find(&m, 0)->deleted);
		CHECK_OK(lt_set_deletion_file(&c, 0, r, &err), err);
	}
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK(lt_model_find(&m, 0) == NULL && m.n_frags == 1);
	lt_composite_clear(&c);
	/* an append takes the next id; a data file replaces a field's file */
	lt_composite_init(&c);
	CHECK_OK(lt_add_fragment(&c, 99, 4, "n.lance", f1, 1, false, NULL, &err), err);
	CHECK_OK(lt_add_data_file(&c, 1, "x1.lance", f1, 1, &err), err);
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK(lt_model_find(&m, 3) && strcmp(lt_model_find(&m, 3)->path, "n.lance") == 0);
	CHECK(strcmp(lt_model_find(&m, 1)->field_files[0], "x1.lance") == 0);
	lt_composite_clear(&c);
	/* a rewrite moves the index's coverage to the new fragment */
	lt_composite_init(&c);
	CHECK_OK(lt_rewrite_fragments(&c, (uint64_t[]) {1}, 1, &err), err);
	CHECK_OK(lt_add_fragment(&c, 0, 15, "c.lance", f1, 1, true, NULL, &err), err);
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK(lt_model_find(&m, 1) == NULL && lt_model_find(&m, 4));
	{
		bool		has4 = false, has1 = false;

		for (size_t i = 0; i < m.indexes[0].n_covered; i++)
		{
			has4 |= m.indexes[0].covered[i] == 4;
			has1 |= m.indexes[0].covered[i] == 1;
		}
		CHECK(has4 && !has1);
	}
	lt_composite_clear(&c);
	/* index replace by name, removal; config set and removal */
	lt_composite_init(&c);
	CHECK_OK(lt_add_index(&c, "i0", f1, 1, (uint64_t[]) {3}, 1, &err), err);
	CHECK_OK(lt_update_config(&c, "k", "v", &err), err);
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK(m.n_indexes == 1 && m.indexes[0].n_covered == 1 && m.n_config == 1);
	lt_composite_clear(&c);
	lt_composite_init(&c);
	CHECK_OK(lt_remove_index(&c, "i0", &err), err);
	CHECK_OK(lt_update_config(&c, "k", NULL, &err), err);
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK(m.n_indexes == 0 && m.n_config == 0);
	lt_composite_clear(&c);
	/* replace all */
	lt_composite_init(&c);
	CHECK_OK(lt_replace_all(&c, &err), err);
	CHECK_OK(lt_add_fragment(&c, 0, 1, "only.lance", f1, 1, false, NULL, &err), err);
	CHECK_OK(lt_apply(&m, &c, &err), err);
	CHECK(m.n_frags == 1 && m.replaced == 1 && strcmp(m.frags[0].path, "only.lance") == 0);
	lt_composite_clear(&c);
	lt_model_clear(&copy);
	lt_model_clear(&m);
}

/* ---- the property: no conflict => the two orders give one manifest ---------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static int path_seq;

static uint64_t
pick(uint64_t n)
{
	return unit_xorshift(&rng) % n;
}

static lt_key_filter *prop_keys[4];

/* A random user action of ours on base model m. */
static void
random_user_action(const lt_model *m, lt_composite *c)
{
	static const int32_t f12[] = {1, 2}, f1[] = {1}, f2[] = {2};
	static const char *const names[] = {"i0", "i1"};
	static const char *const keys[] = {"a", "b"};
	char		path[32];
	int			k = (int) pick(12);

	snprintf(path, sizeof(path), "p%d.lance", path_seq++);
	switch (k)
	{
		case 0:				/* append */
			CHECK_OK(lt_composite_begin(c, "append", &err), err);
			CHECK_OK(lt_add_fragment(c, 100, 1 + pick(9), path, f12, 2, false, NULL, &err), err);
			break;
		case 1:				/* delete some live rows of a fragment (all of them: the fragment goes) */
		case 2:
			{
				const lt_model_frag *f;
				roaring_bitmap_t *r = roaring_bitmap_create();

				if (m->n_frags == 0)
					break;
				f = &m->frags[pick(m->n_frags)];
				for (uint32_t row = 0; row < f->physical_rows; row++)
					if (!roaring_bitmap_contains(f->deleted, row) && pick(3) == 0)
						roaring_bitmap_add(r, row);
				CHECK_OK(lt_composite_begin(c, "delete", &err), err);
				if (roaring_bitmap_get_cardinality(r) + roaring_bitmap_get_cardinality(f->deleted) >= f->physical_rows)
				{
					roaring_bitmap_free(r);
					CHECK_OK(lt_remove_fragment(c, f->id, &err), err);
				}
				else if (roaring_bitmap_is_empty(r))
					roaring_bitmap_free(r);
				else
					CHECK_OK(lt_set_deletion_file(c, f->id, r, &err), err);
				break;
			}
		case 3:				/* create (or replace) an index over every fragment */
			{
				uint64_t	ids[64];
				size_t		n = 0;

				for (size_t i = 0; i < m->n_frags && n < 64; i++)
					ids[n++] = m->frags[i].id;
				CHECK_OK(lt_composite_begin(c, "create index", &err), err);
				CHECK_OK(lt_add_index(c, names[pick(2)], pick(2) ? f1 : f2, 1, ids, n, &err), err);
				break;
			}
		case 4:
			CHECK_OK(lt_composite_begin(c, "drop index", &err), err);
			CHECK_OK(lt_remove_index(c, names[pick(2)], &err), err);
			break;
		case 5:
			CHECK_OK(lt_composite_begin(c, "set config", &err), err);
			CHECK_OK(lt_update_config(c, keys[pick(2)], pick(2) ? "x" : NULL, &err), err);
			break;
		case 6:				/* compact one or two fragments into one */
			{
				uint64_t	old[2];
				size_t		n = 0;
				uint64_t	live = 0;

				if (m->n_frags == 0)
					break;
				old[n++] = m->frags[pick(m->n_frags)].id;
				if (m->n_frags > 1 && pick(2))
				{
					uint64_t	o = m->frags[pick(m->n_frags)].id;

					if (o != old[0])
						old[n++] = o;
				}
				for (size_t i = 0; i < n; i++)
				{
					const lt_model_frag *f = lt_model_find(m, old[i]);

					live += f->physical_rows - roaring_bitmap_get_cardinality(f->deleted);
				}
				CHECK_OK(lt_composite_begin(c, "compact", &err), err);
				CHECK_OK(lt_rewrite_fragments(c, old, n, &err), err);
				CHECK_OK(lt_add_fragment(c, 100, live, path, f12, 2, true, NULL, &err), err);
				break;
			}
		case 7:				/* a data file for one field of a fragment */
			if (m->n_frags == 0)
				break;
			CHECK_OK(lt_composite_begin(c, "add column data", &err), err);
			CHECK_OK(lt_add_data_file(c, m->frags[pick(m->n_frags)].id, path, pick(2) ? f1 : f2, 1, &err), err);
			break;
		case 8:				/* a keyed insert */
			{
				lt_key_filter *kf = prop_keys[pick(4)];

				CHECK_OK(lt_composite_begin(c, "keyed insert", &err), err);
				CHECK_OK(lt_assert_unique_keys(c, kf, &err), err);
				CHECK_OK(lt_add_fragment(c, 100, 1, path, f12, 2, false, kf, &err), err);
				break;
			}
		case 9:				/* a replace: delete + insert + predicate */
			CHECK_OK(lt_composite_begin(c, "replace where", &err), err);
			CHECK_OK(lt_assert_no_matching_inserts(c, &err), err);
			if (m->n_frags)
				CHECK_OK(lt_remove_fragment(c, m->frags[pick(m->n_frags)].id, &err), err);
			CHECK_OK(lt_add_fragment(c, 100, 2, path, f12, 2, false, NULL, &err), err);
			break;
		case 10:			/* truncate */
			if (pick(4) == 0)
			{
				CHECK_OK(lt_composite_begin(c, "truncate", &err), err);
				CHECK_OK(lt_replace_all(c, &err), err);
			}
			break;
		default:			/* nothing at all (a reserve) */
			CHECK_OK(lt_composite_begin(c, "reserve fragments", &err), err);
			break;
	}
}

/* A random composite: 1 to 3 user actions, each planned against the base (as a transaction does). */
static void
random_composite(const lt_model *m, lt_composite *c)
{
	int			n = 1 + (int) pick(3);

	lt_composite_init(c);
	for (int i = 0; i < n; i++)
		random_user_action(m, c);
}

/* The composite's own actions in one order must apply: drop a pair whose two halves clash inside. */
static bool
applies(const lt_model *m, const lt_composite *c)
{
	lt_model t;
	lt_error e;
	bool		ok;

	if (lt_model_copy(m, &t, &e) != LT_OK)
		return false;
	ok = lt_apply(&t, c, &e) == LT_OK;
	lt_model_clear(&t);
	return ok;
}

TEST(property_commute)
{
	int			tested = 0, commuting = 0, conflicting = 0;

	prop_keys[0] = keyset(1, 1, (int64_t[]) {1});
	prop_keys[1] = keyset(1, 1, (int64_t[]) {2});
	prop_keys[2] = keyset(1, 2, (int64_t[]) {1, 3});
	prop_keys[3] = keyset(1, 1, (int64_t[]) {4});

	for (int round = 0; round < 4000; round++)
	{
		lt_model base, ab, ba;
		lt_composite a, b;
		lt_footprint fa, fb;
		bool		c1, c2;

		base_model(&base, 2 + (int) pick(4), 6 + pick(10));
		random_composite(&base, &a);
		random_composite(&base, &b);
		if (!applies(&base, &a) || !applies(&base, &b))
		{
			lt_composite_clear(&a);
			lt_composite_clear(&b);
			lt_model_clear(&base);
			continue;
		}
		tested++;
		CHECK_OK(lt_footprint_of(&a, &fa, &err), err);
		CHECK_OK(lt_footprint_of(&b, &fb, &err), err);
		c1 = lt_conflicts(&fa, &fb, NULL);
		c2 = lt_conflicts(&fb, &fa, NULL);
		CHECK(c1 == c2);
		if (!c1)
		{
			lt_code		r1, r2;

			commuting++;
			CHECK_OK(lt_model_copy(&base, &ab, &err), err);
			CHECK_OK(lt_model_copy(&base, &ba, &err), err);
			r1 = lt_apply(&ab, &a, &err);
			if (r1 == LT_OK)
				r1 = lt_apply(&ab, &b, &err);
			r2 = lt_apply(&ba, &b, &err);
			if (r2 == LT_OK)
				r2 = lt_apply(&ba, &a, &err);
			CHECK_OK(r1, err);
			CHECK_OK(r2, err);
			if (r1 != LT_OK || r2 != LT_OK || !lt_model_equal(&ab, &ba))
			{
				unit_failures++;
				fprintf(stderr, "FAIL property_commute: round %d: no conflict, but the orders differ:", round);
				for (size_t u = 0; u < a.n_users; u++)
					fprintf(stderr, " a:%s", a.users[u].what);
				for (size_t u = 0; u < b.n_users; u++)
					fprintf(stderr, " b:%s", b.users[u].what);
				fprintf(stderr, "\n");
			}
			unit_checks++;
			lt_model_clear(&ab);
			lt_model_clear(&ba);
		}
		else
			conflicting++;
		lt_footprint_clear(&fa);
		lt_footprint_clear(&fb);
		lt_composite_clear(&a);
		lt_composite_clear(&b);
		lt_model_clear(&base);
	}
	/* the test means something only when both verdicts are common */
	CHECK(tested > 3000);
	CHECK(commuting > tested / 5);
	CHECK(conflicting > tested / 5);
	fprintf(stderr, "     property: %d pairs, %d commute, %d conflict\n", tested, commuting, conflicting);
	for (int i = 0; i < 4; i++)
		lt_key_filter_free(prop_keys[i]);
}

int
main(void)
{
	keys_init();
	RUN(pair_table);
	RUN(key_claims);
	RUN(footprints);
	RUN(clashes_and_messages);
	RUN(lift_operations);
	RUN(lowering);
	RUN(apply_actions);
	RUN(property_commute);
	lt_key_filter_free(K1);
	lt_key_filter_free(K2);
	lt_key_filter_free(K3);
	lt_key_filter_free(KX);
	return unit_report("actions");
}
