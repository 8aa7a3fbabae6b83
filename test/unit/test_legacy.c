/*
 * test_legacy.c — the legacy v1 (footer 0.2) data-file reader on files built
 * here byte by byte and served from the in-memory store.
 */
#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "util/lt_bytes.h"
#include "file/lt_file.h"
#include "proto/lt_file.pb-c.h"
#include "types/lt_schema.h"
#include "unit.h"

/* --- building a file ---------------------------------------------------- */

typedef struct wbuf
{
	uint8_t		b[8192];
	size_t		n;
} wbuf;

static uint64_t
put(wbuf *w, const void *p, size_t n)
{
	uint64_t	at = w->n;

	memcpy(w->b + w->n, p, n);
	w->n += n;
	return at;
}

static uint64_t
put_i64s(wbuf *w, const int64_t *v, size_t n)
{
	return put(w, v, n * 8);
}

/* Field ids of the test schema. */
enum
{
	F_A, F_B, F_S, F_T, F_L, F_LI, F_ST, F_X, F_V, F_D, N_FIELDS
};

#define N_BATCHES 2

typedef struct built
{
	wbuf		w;
	int64_t		pt[N_FIELDS][N_BATCHES][2];
	uint64_t	s_pos[N_BATCHES];	/* string position arrays, for corrupting */
	uint64_t	l_pos[N_BATCHES];
	uint64_t	d_pos[N_BATCHES];
	uint64_t	meta_pos;
	uint64_t	pt_pos;
} built;

/*
 * Rows (batch 0 = rows 0..2, batch 1 = rows 3..4):
 *   a int32      1 2 3 | 4 5
 *   b bool       1 0 1 | 1 0
 *   s string?    "x" "" "yz" | "" "w"      (nullable: "" reads as null)
 *   t string     "" "p" "" | "q" ""        (not nullable: "" stays)
 *   l list<i64>  [1,2] [] [3] | [4] [5,6]
 *   st struct{x int16}   7 8 9 | 10 11
 *   v fsl<float,2>       (r, r+0.5)
 *   d dict<string,int8>  red green red | green red
 */
static void
build(built *bf)
{
	wbuf	   *w = &bf->w;
	static const int32_t a[2][3] = {{1, 2, 3}, {4, 5}};
	static const uint8_t b[2] = {0x05, 0x01};
	static const char *s[2][3] = {{"x", "", "yz"}, {"", "w"}};
	static const char *t[2][3] = {{"", "p", ""}, {"q", ""}};
	static const int32_t loff[2][4] = {{0, 2, 2, 3}, {0, 1, 3}};
	static const int64_t li[2][3] = {{1, 2, 3}, {4, 5, 6}};
	static const int16_t x[2][3] = {{7, 8, 9}, {10, 11}};
	static const int8_t d[2][3] = {{0, 1, 0}, {1, 0}};
	int			rows[2] = {3, 2};
	int			bt,
				i;
	int64_t		pos[4];
	uint64_t	dict_pos;
	Lt__Pb__LegacyFileMetadata m = LT__PB__LEGACY_FILE_METADATA__INIT;
	int32_t		offs[3] = {0, 3, 5};
	uint8_t		pb[512];
	uint32_t	len;
	Lt__Pb__Field fd = LT__PB__FIELD__INIT;
	Lt__Pb__LegacyDictionary dd = LT__PB__LEGACY_DICTIONARY__INIT;
	uint8_t		man[600];
	size_t		fl;
	int64_t		foot_pos;

	memset(bf, 0, sizeof(*bf));
	put(w, "HEAD", 4);
	for (bt = 0; bt < N_BATCHES; bt++)
	{
		int			n = rows[bt];
		int64_t		base;

		bf->pt[F_A][bt][0] = (int64_t) put(w, a[bt], n * 4);
		bf->pt[F_A][bt][1] = n;
		bf->pt[F_B][bt][0] = (int64_t) put(w, &b[bt], 1);
		bf->pt[F_B][bt][1] = n;
		/* strings: bytes, then n+1 absolute positions */
		base = (int64_t) w->n;
		pos[0] = base;
		for (i = 0; i < n; i++)
		{
			put(w, s[bt][i], strlen(s[bt][i]));
			pos[i + 1] = (int64_t) w->n;
		}
		bf->s_pos[bt] = put_i64s(w, pos, n + 1);
		bf->pt[F_S][bt][0] = (int64_t) bf->s_pos[bt];
		bf->pt[F_S][bt][1] = n;
		pos[0] = (int64_t) w->n;
		for (i = 0; i < n; i++)
		{
			put(w, t[bt][i], strlen(t[bt][i]));
			pos[i + 1] = (int64_t) w->n;
		}
		bf->pt[F_T][bt][0] = (int64_t) put_i64s(w, pos, n + 1);
		bf->pt[F_T][bt][1] = n;
		/* list: n+1 i32 offsets, then the items */
		bf->l_pos[bt] = put(w, loff[bt], (n + 1) * 4);
		bf->pt[F_L][bt][0] = (int64_t) bf->l_pos[bt];
		bf->pt[F_L][bt][1] = n + 1;
		bf->pt[F_LI][bt][0] = (int64_t) put(w, li[bt], 3 * 8);
		bf->pt[F_LI][bt][1] = 3;
		bf->pt[F_X][bt][0] = (int64_t) put(w, x[bt], n * 2);
		bf->pt[F_X][bt][1] = n;
		{
			float		v[6];

			for (i = 0; i < 2 * n; i++)
				v[i] = (float) (bt * 3 + i / 2) + (i % 2 ? 0.5f : 0.0f);
			bf->pt[F_V][bt][0] = (int64_t) put(w, v, 2 * n * 4);
			bf->pt[F_V][bt][1] = n;
		}
		bf->d_pos[bt] = put(w, d[bt], n);
		bf->pt[F_D][bt][0] = (int64_t) bf->d_pos[bt];
		bf->pt[F_D][bt][1] = n;
	}
	/* the dictionary values: "red", "green" */
	pos[0] = (int64_t) put(w, "red", 3);
	pos[1] = (int64_t) put(w, "green", 5);
	pos[2] = (int64_t) w->n;
	pos[1] = pos[0] + 3;
	dict_pos = put_i64s(w, pos, 3);
	/* page table: ids 0..N_FIELDS-1, batches 0..1 */
	bf->pt_pos = put(w, bf->pt, sizeof(bf->pt));
	/* an embedded manifest whose schema names the dictionary */
	fd.has_id = true;
	fd.id = F_D;
	fd.name = "d";
	fd.logical_type = "dict:string:int8:false";
	dd.has_offset = dd.has_length = true;
	dd.offset = (int64_t) dict_pos;
	dd.length = 2;
	fd.dictionary = &dd;
	fl = lt__pb__field__pack(&fd, man + 2);
	man[0] = 0x0a;
	man[1] = (uint8_t) fl;
	len = (uint32_t) fl + 2;
	m.has_manifest_position = true;
	m.manifest_position = put(w, &len, 4);
	put(w, man, len);
	m.n_batch_offsets = 3;
	m.batch_offsets = offs;
	m.has_page_table_position = true;
	m.page_table_position = bf->pt_pos;
	len = (uint32_t) lt__pb__legacy_file_metadata__pack(&m, pb);
	bf->meta_pos = put(w, &len, 4);
	put(w, pb, len);
	foot_pos = (int64_t) bf->meta_pos;
	put(w, &foot_pos, 8);
	put(w, "\0\0\2\0LANC", 8);
}

static lt_schema *
schema(void)
{
	static const struct
	{
		const char *name;
		int			parent;
		const char *lt;
		bool		nullable;
	}			defs[N_FIELDS] = {
		{"a", -1, "int32", true}, {"b", -1, "bool", true}, {"s", -1, "string", true},
		{"t", -1, "string", false}, {"l", -1, "list", true}, {"item", F_L, "int64", true},
		{"st", -1, "struct", true}, {"x", F_ST, "int16", true}, {"v", -1, "fixed_size_list:float:2", true},
		{"d", -1, "dict:string:int8:false", true}
	};
	Lt__Pb__Field fields[N_FIELDS];
	Lt__Pb__Field *ptrs[N_FIELDS];
	lt_schema  *s = NULL;
	lt_error	err = {0};
	int			i;

	for (i = 0; i < N_FIELDS; i++)
	{
		Lt__Pb__Field f = LT__PB__FIELD__INIT;

		f.has_id = f.has_parent_id = f.has_nullable = true;
		f.id = i;
		f.parent_id = defs[i].parent;
		f.name = (char *) defs[i].name;
		f.logical_type = (char *) defs[i].lt;
		f.nullable = defs[i].nullable;
		fields[i] = f;
		ptrs[i] = &fields[i];
	}
	if (lt_schema_from_pb(ptrs, N_FIELDS, &s, &err) != LT_OK)
		fprintf(stderr, "schema: %s\n", err.msg);
	return s;
}

static const int32_t field_ids[N_FIELDS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
static const lt_column_map the_map = {N_FIELDS, field_ids, NULL};

/* Read rows [start, start+n) of top-level field `name`. */
static lt_code
read_rows(const uint8_t *file, size_t len, const lt_schema *s, const char *name, uint64_t start, uint64_t n,
		  lt_array **out, lt_error *err)
{
	lt_store   *st = NULL;
	lt_file    *f = NULL;
	lt_field_reader *r = NULL;
	const lt_field *fld = lt_schema_find_name(s, name);
	lt_code		rc;

	*out = NULL;
	lt_store_mem_open(&st, err);
	lt_store_mem_put(st, "data/x.lance", file, len, err);
	rc = lt_file_open(st, "data/x.lance", &f, err);
	if (rc == LT_OK)
		rc = lt_field_reader_open(f, fld, &the_map, &r, err);
	if (rc == LT_OK)
		rc = lt_array_new(fld, out, err);
	if (rc == LT_OK)
		rc = lt_field_reader_read(r, start, n, *out, err);
	lt_field_reader_free(r);
	lt_file_close(f);
	lt_store_close(st);
	return rc;
}

#define CHECK_STR(a, i, s) do { int64_t l_ = (a)->offsets[(i) + 1] - (a)->offsets[i]; \
	CHECK(l_ == (int64_t) strlen(s) && memcmp((a)->data + (a)->offsets[i], (s), l_) == 0); } while (0)

/* --- tests -------------------------------------------------------------- */

TEST(plain_values_across_batches)
{
	built		bf;
	lt_schema  *s = schema();
	lt_array   *a = NULL;
	lt_error	err = {0};

	build(&bf);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "a", 1, 4, &a, &err), err);
	CHECK_EQ_INT(a->length, 4);
	CHECK_EQ_INT(((int32_t *) a->values)[0], 2);
	CHECK_EQ_INT(((int32_t *) a->values)[3], 5);
	CHECK(a->validity == NULL);
	lt_array_free(a);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "b", 0, 5, &a, &err), err);
	CHECK(a->values[0] == 1 && a->values[1] == 0 && a->values[2] == 1 && a->values[3] == 1 && a->values[4] == 0);
	lt_array_free(a);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "v", 2, 2, &a, &err), err);
	CHECK_EQ_INT(a->children[0]->length, 4);
	CHECK(((float *) a->children[0]->values)[1] == 2.5f);
	CHECK(((float *) a->children[0]->values)[2] == 3.0f);
	lt_array_free(a);
	lt_schema_free(s);
}

TEST(strings_empty_is_null_when_nullable)
{
	built		bf;
	lt_schema  *s = schema();
	lt_array   *a = NULL;
	lt_error	err = {0};

	build(&bf);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "s", 0, 5, &a, &err), err);
	CHECK_EQ_INT(a->null_count, 2);
	CHECK_STR(a, 0, "x");
	CHECK(!lt_array_is_valid(a, 1) && !lt_array_is_valid(a, 3));
	CHECK_STR(a, 2, "yz");
	CHECK_STR(a, 4, "w");
	lt_array_free(a);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "t", 0, 5, &a, &err), err);
	CHECK_EQ_INT(a->null_count, 0);
	CHECK_STR(a, 0, "");
	CHECK_STR(a, 3, "q");
	lt_array_free(a);
	lt_schema_free(s);
}

TEST(lists_structs_dictionaries)
{
	built		bf;
	lt_schema  *s = schema();
	lt_array   *a = NULL;
	lt_error	err = {0};

	build(&bf);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "l", 1, 4, &a, &err), err);
	CHECK_EQ_INT(a->length, 4);
	/* [], [3], [4], [5,6] */
	CHECK_EQ_INT(a->offsets[1], 0);
	CHECK_EQ_INT(a->offsets[2], 1);
	CHECK_EQ_INT(a->offsets[4], 4);
	CHECK_EQ_INT(((int64_t *) a->children[0]->values)[0], 3);
	CHECK_EQ_INT(((int64_t *) a->children[0]->values)[3], 6);
	lt_array_free(a);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "st", 2, 3, &a, &err), err);
	CHECK_EQ_INT(((int16_t *) a->children[0]->values)[0], 9);
	CHECK_EQ_INT(((int16_t *) a->children[0]->values)[2], 11);
	lt_array_free(a);
	CHECK_OK(read_rows(bf.w.b, bf.w.n, s, "d", 0, 5, &a, &err), err);
	CHECK_STR(a, 0, "red");
	CHECK_STR(a, 1, "green");
	CHECK_STR(a, 3, "green");
	CHECK_STR(a, 4, "red");
	lt_array_free(a);
	lt_schema_free(s);
}

TEST(missing_fields_read_as_null)
{
	built		bf;
	lt_schema  *s = schema();
	lt_store   *st = NULL;
	lt_file    *f = NULL;
	lt_field_reader *r = NULL;
	lt_array   *a = NULL;
	lt_error	err = {0};
	static const int32_t ids[2] = {0, 6};	/* "st" present, its child "x" not */
	lt_column_map map = {2, ids, NULL};

	build(&bf);
	lt_store_mem_open(&st, &err);
	lt_store_mem_put(st, "f", bf.w.b, bf.w.n, &err);
	CHECK_OK(lt_file_open(st, "f", &f, &err), err);
	CHECK_EQ_INT(f->num_rows, 5);
	CHECK_OK(lt_field_reader_open(f, lt_schema_find_name(s, "st"), &map, &r, &err), err);
	lt_array_new(lt_schema_find_name(s, "st"), &a, &err);
	CHECK_OK(lt_field_reader_read(r, 0, 5, a, &err), err);
	CHECK_EQ_INT(a->length, 5);
	CHECK_EQ_INT(a->children[0]->null_count, 5);
	lt_array_free(a);
	lt_field_reader_free(r);
	lt_file_close(f);
	lt_store_close(st);
	lt_schema_free(s);
}

TEST(corrupt_files)
{
	built		bf;
	lt_schema  *s = schema();
	lt_array   *a = NULL;
	lt_error	err = {0};
	int64_t		v;
	int32_t		v32;

	build(&bf);
	/* truncated: no footer */
	CHECK_CODE(read_rows(bf.w.b, bf.w.n - 3, s, "a", 0, 1, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	/* metadata position past the end */
	v = (int64_t) bf.w.n;
	memcpy(bf.w.b + bf.w.n - 16, &v, 8);
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "a", 0, 1, &a, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "x.lance") != NULL);
	lt_array_free(a);
	/* garbage metadata */
	build(&bf);
	memset(bf.w.b + bf.meta_pos + 4, 0xff, 6);
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "a", 0, 1, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	/* string positions going backwards */
	build(&bf);
	v = 1;
	memcpy(bf.w.b + bf.s_pos[0] + 8, &v, 8);
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "s", 0, 3, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	/* string bytes past the end of the file */
	build(&bf);
	v = (int64_t) 1 << 40;
	memcpy(bf.w.b + bf.s_pos[1] + 16, &v, 8);
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "s", 3, 2, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	/* list offsets going backwards */
	build(&bf);
	v32 = 5;
	memcpy(bf.w.b + bf.l_pos[0] + 4, &v32, 4);
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "l", 0, 3, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	/* a page claiming fewer rows than the batch */
	build(&bf);
	v = 1;
	memcpy(bf.w.b + bf.pt_pos + ((F_A * N_BATCHES + 0) * 2 + 1) * 8, &v, 8);
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "a", 0, 3, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	/* a page position outside the file */
	build(&bf);
	v = (int64_t) 1 << 50;
	memcpy(bf.w.b + bf.pt_pos + ((F_X * N_BATCHES + 1) * 2) * 8, &v, 8);
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "st", 3, 2, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	/* a dictionary key past the dictionary */
	build(&bf);
	bf.w.b[bf.d_pos[1]] = 7;
	CHECK_CODE(read_rows(bf.w.b, bf.w.n, s, "d", 0, 5, &a, &err), LT_ECORRUPT);
	lt_array_free(a);
	lt_schema_free(s);
}

int
main(void)
{
	RUN(plain_values_across_batches);
	RUN(strings_empty_is_null_when_nullable);
	RUN(lists_structs_dictionaries);
	RUN(missing_fields_read_as_null);
	RUN(corrupt_files);
	return unit_report("legacy");
}
