/*
 * test_writer.c — the data-file writer: every type and null pattern written
 * in 2.1 / 2.2 (and 2.0) and read back with the project's own reader; the
 * layouts and compressions chosen; randomized schemas and values (fixed seeds).
 */
#include "unit.h"

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "proto/lt_enc21.pb-c.h"
#include "file/lt_file.h"
#include "proto/lt_file.pb-c.h"
#include "proto/lt_file2.pb-c.h"
#include "proto/lt_common.pb-c.h"
#include "types/lt_schema.h"
#include "file/lt_writer.h"

static lt_error err;

/* ---- schemas from a compact spec: "name:parent:logical_type[:!]" (! = not null) ---- */

static lt_schema *
schema_of(const char *const *spec, int n)
{
	Lt__Pb__Field *fs[64];
	char		buf[64][128];
	lt_schema  *s = NULL;

	for (int i = 0; i < n; i++)
	{
		char	   *name,
				   *par,
				   *lt,
				   *nn;

		snprintf(buf[i], sizeof(buf[i]), "%s", spec[i]);
		name = strtok(buf[i], ";");
		par = strtok(NULL, ";");
		lt = strtok(NULL, ";");
		nn = strtok(NULL, ";");
		fs[i] = calloc(1, sizeof(Lt__Pb__Field));
		lt__pb__field__init(fs[i]);
		fs[i]->name = name;
		fs[i]->has_id = fs[i]->has_parent_id = fs[i]->has_nullable = true;
		fs[i]->id = i;
		fs[i]->parent_id = atoi(par);
		fs[i]->logical_type = lt;
		fs[i]->nullable = !(nn && nn[0] == '!');
	}
	CHECK_OK(lt_schema_from_pb(fs, (size_t) n, &s, &err), err);
	for (int i = 0; i < n; i++)
		free(fs[i]);
	return s;
}

/* ---- random values ---- */

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	return unit_xorshift(&rng_state);
}

static uint64_t
rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

typedef struct gen_opts
{
	int			null_pct;		/* chance of a null slot (nullable fields) */
	int			value_kind;		/* 0 random bits, 1 small, 2 runs, 3 constant, 4 few distinct */
	int			max_str;		/* longest string */
	int			max_list;		/* longest list */
	int			empty_pct;		/* chance of an empty list */
	int			no_struct_nulls;	/* 2.0 files cannot store null structs */
} gen_opts;

static void gen(lt_array *a, int64_t n, const gen_opts *o);

static bool
gen_null(const lt_array *a, const gen_opts *o)
{
	return a->field->nullable && o->null_pct > 0 && (int) rnd_below(100) < o->null_pct;
}

static void
set_null(lt_array *a, int64_t i)
{
	lt_array_ensure_validity(a, &err);
	a->validity[i] = 0;
	a->null_count++;
}

static void
gen(lt_array *a, int64_t n, const gen_opts *o)
{
	const lt_field *f = a->field;
	int64_t		base = a->length;
	static const char *words[] = {"alpha", "beta", "gamma", "", "delta-delta", "e", "zeta zeta zeta", "eta"};

	CHECK_OK(lt_array_reserve(a, n, &err), err);
	if (a->validity)
		memset(a->validity + base, 1, (size_t) n);
	switch (f->type)
	{
		case LT_TYPE_UTF8:
		case LT_TYPE_LARGE_UTF8:
		case LT_TYPE_BINARY:
		case LT_TYPE_LARGE_BINARY:
			for (int64_t i = 0; i < n; i++)
			{
				int64_t		o0 = a->offsets[base + i];
				int64_t		len = 0;
				const char *w = NULL;

				if (gen_null(a, o))
					set_null(a, base + i);
				else if (o->value_kind == 4 || o->value_kind == 3)
				{
					w = words[o->value_kind == 3 ? 0 : rnd_below(8)];
					len = (int64_t) strlen(w);
				}
				else
					len = (int64_t) rnd_below((uint64_t) o->max_str + 1);
				CHECK_OK(lt_array_reserve_data(a, len, &err), err);
				for (int64_t j = 0; j < len; j++)
					a->data[o0 + j] = w ? (uint8_t) w[j] : (uint8_t) ('a' + rnd_below(o->value_kind == 1 ? 4 : 26));
				a->data_len = o0 + len;
				a->offsets[base + i + 1] = o0 + len;
			}
			break;
		case LT_TYPE_LIST:
		case LT_TYPE_LARGE_LIST:
		case LT_TYPE_MAP:
			{
				int64_t		total = a->offsets[base];

				for (int64_t i = 0; i < n; i++)
				{
					int64_t		len = 0;

					if (gen_null(a, o))
						set_null(a, base + i);
					else if ((int) rnd_below(100) >= o->empty_pct)
						len = (int64_t) rnd_below((uint64_t) o->max_list) + 1;
					total += len;
					a->offsets[base + i + 1] = total;
				}
				gen(a->children[0], total - a->offsets[base], o);
				if (f->type == LT_TYPE_MAP)
				{
					/* map keys are not null */
					lt_array   *keys = a->children[0]->children[0];

					if (keys->validity)
						memset(keys->validity, 1, (size_t) keys->length);
					keys->null_count = 0;
					a->children[0]->null_count = 0;
					if (a->children[0]->validity)
						memset(a->children[0]->validity, 1, (size_t) a->children[0]->length);
				}
			}
			break;
		case LT_TYPE_FIXED_LIST:
			for (int64_t i = 0; i < n; i++)
				if (gen_null(a, o))
					set_null(a, base + i);
			gen(a->children[0], n * f->fixed_size, o);
			break;
		case LT_TYPE_STRUCT:
			for (int64_t i = 0; i < n; i++)
				if (!o->no_struct_nulls && gen_null(a, o))
					set_null(a, base + i);
			for (int c = 0; c < a->n_children; c++)
				gen(a->children[c], n, o);
			break;
		default:
			{
				int			w = f->byte_width;
				uint64_t	run = rnd();

				for (int64_t i = 0; i < n; i++)
				{
					uint8_t    *p = a->values + (base + i) * w;
					uint64_t	x;

					if (gen_null(a, o))
					{
						set_null(a, base + i);
						memset(p, 0, (size_t) w);
						continue;
					}
					switch (o->value_kind)
					{
						case 1:
							x = rnd_below(1000);
							break;
						case 2:
							if (rnd_below(50) == 0)
								run = rnd();
							x = run;
							break;
						case 3:
							x = 7;
							break;
						case 4:
							x = rnd_below(5);
							break;
						default:
							x = rnd();
					}
					if (f->type == LT_TYPE_BOOL)
						x &= 1;
					for (int b = 0; b < w; b++)
						p[b] = b < 8 ? (uint8_t) (x >> (8 * b)) : (uint8_t) rnd();
					if (f->type == LT_TYPE_FLOAT16 || f->type == LT_TYPE_FLOAT32 || f->type == LT_TYPE_FLOAT64)
					{
						/* keep floats finite so that they print the same everywhere */
						if (w == 8)
						{
							double		d = (double) (int64_t) (x % 2000000) / 7.0;

							memcpy(p, &d, 8);
						}
						else if (w == 4)
						{
							float		d = (float) (int64_t) (x % 20000) / 3.0f;

							memcpy(p, &d, 4);
						}
						else
							p[1] &= 0x3b;
					}
				}
			}
	}
	a->length = base + n;
}

/* ---- write, read back, compare ---- */

typedef struct rt_result
{
	uint64_t	size;
	char		layouts[256];	/* one letter per page: M mini-block, F full-zip, C constant, 0 2.0 */
	char		values[512];	/* value compressions seen */
} rt_result;

static const char *
enc_name(const Lt__Enc21__CompressiveEncoding *e)
{
	if (!e)
		return "none";
	switch (e->compression_case)
	{
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT: return "flat";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE: return "variable";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_INLINE_BITPACKING: return "bitpack";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_OUT_OF_LINE_BITPACKING: return "oolbitpack";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_RLE: return "rle";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FSST: return "fsst";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST: return "fsl";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL: return "general";
		default: return "other";
	}
}

static void
describe_pages(lt_file *f, rt_result *r)
{
	for (uint32_t c = 0; c < f->num_columns; c++)
	{
		Lt__Pb__ColumnMetadata *cm;

		if (lt_file_column(f, c, &cm, &err) != LT_OK)
			continue;
		for (size_t p = 0; p < cm->n_pages; p++)
		{
			Lt__Pb__PbAny *any;
			Lt__Enc21__PageLayout *pl;
			char		one[2] = "?";

			if (f->version == LT_FILE_V2_0)
			{
				strcat(r->layouts, "0");
				continue;
			}
			any = lt__pb__pb_any__unpack(NULL, cm->pages[p]->encoding->direct->encoding.len,
										 cm->pages[p]->encoding->direct->encoding.data);
			pl = lt__enc21__page_layout__unpack(NULL, any->value.len, any->value.data);
			switch (pl->layout_case)
			{
				case LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT:
					one[0] = pl->mini_block_layout->dictionary ? 'D' : 'M';
					snprintf(r->values + strlen(r->values), sizeof(r->values) - strlen(r->values), "%s%s",
							 r->values[0] ? "," : "", enc_name(pl->mini_block_layout->value_compression));
					break;
				case LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT:
					one[0] = 'F';
					break;
				case LT__ENC21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT:
					one[0] = 'C';
					break;
				default:
					break;
			}
			if (strlen(r->layouts) < sizeof(r->layouts) - 1)
				strcat(r->layouts, one);
			lt__enc21__page_layout__free_unpacked(pl, NULL);
			lt__pb__pb_any__free_unpacked(any, NULL);
		}
	}
}

/* Set by check_room_read: a whole read with room claimed all its values plain ASCII (ascii_start, _end). */
static bool room_all_ascii;

/*
 * What an array with room claims by ascii_start and ascii_end (lt_array.h) is true: within
 * data_len, and every valid value between them is plain ASCII without NUL.
 */
static void
check_ascii_end(const lt_array *got)
{
	CHECK(got->ascii_start >= 0 && got->ascii_start <= got->ascii_end && got->ascii_end <= got->data_len);
	for (int64_t i = 0; i < got->length; i++)
	{
		int64_t		lo = got->offsets[i],
					hi = got->offsets[i + 1];

		if (lo < got->ascii_start)
			continue;
		if (hi > got->ascii_end)
			break;
		if (!lt_array_is_valid(got, i) || hi == lo)
			continue;
		for (int64_t b = lt_array_room_start(lo); b < hi; b++)
			if (got->data[b] == 0 || got->data[b] >= 0x80)
			{
				fprintf(stderr, "  slot %lld byte %lld is 0x%02x, below ascii_end %lld\n", (long long) i,
						(long long) b, got->data[b], (long long) got->ascii_end);
				CHECK(false);
				return;
			}
	}
}

/*
 * A string field read with header room (lt_array.h) in three reads whose boundaries fall inside
 * chunks and pages: the same values as `want`, each after its room of LT_ARRAY_ROOM_FILL bytes,
 * and a true ascii_end; then in one read (room_all_ascii).  Readers without room (2.0 files)
 * refuse such an array.
 */
static void
check_room_read(lt_file *f, const lt_field *fld, const lt_column_map *map, const lt_array *want, int64_t n)
{
	lt_field_reader *r = NULL;
	lt_array   *got = NULL;
	int64_t		cut[4] = {0, n / 3, n / 2 + 1 < n ? n / 2 + 1 : n, n};

	CHECK_OK(lt_field_reader_open(f, fld, map, &r, &err), err);
	CHECK_OK(lt_array_new(fld, &got, &err), err);
	if (!r || !got)
		goto done;
	got->room = LT_ARRAY_ROOM;
	if (!r->room_ok)
	{
		CHECK(f->version == LT_FILE_V2_0);
		if (n > 0)
			CHECK_CODE(lt_field_reader_read(r, 0, 1, got, &err), LT_EINVALID);
		goto done;
	}
	for (int k = 0; k < 3; k++)
		CHECK_OK(lt_field_reader_read(r, (uint64_t) cut[k], (uint64_t) (cut[k + 1] - cut[k]), got, &err), err);
	CHECK_EQ_INT(got->length, n);
	CHECK_EQ_INT(got->room, LT_ARRAY_ROOM);
	CHECK_EQ_INT(got->offsets[got->length], got->data_len);
	for (int64_t i = 0; i < got->length && i < n; i++)
	{
		int64_t		lo = got->offsets[i],
					hi = got->offsets[i + 1];
		int64_t		st = hi == lo ? lo : lt_array_room_start(lo);
		int64_t		wl = want->offsets[i + 1] - want->offsets[i];
		bool		fill_ok = true;

		CHECK_EQ_INT(lt_array_is_valid(got, i), lt_array_is_valid(want, i));
		if (!lt_array_is_valid(want, i))
			continue;
		for (int64_t b = lo; b < st; b++)
			fill_ok &= got->data[b] == LT_ARRAY_ROOM_FILL;
		if (!fill_ok || hi - st != wl || memcmp(got->data + st, want->data + want->offsets[i], (size_t) wl) != 0)
		{
			fprintf(stderr, "  field \"%s\" slot %lld differs when read with header room (version %d)\n",
					fld->name, (long long) i, (int) f->version);
			CHECK(false);
			break;
		}
	}
	check_ascii_end(got);
	lt_array_clear(got);
	CHECK_EQ_INT(got->ascii_end, 0);
	CHECK_EQ_INT(got->ascii_start, 0);
	got->room = LT_ARRAY_ROOM;
	CHECK_OK(lt_field_reader_read(r, 0, (uint64_t) n, got, &err), err);
	check_ascii_end(got);
	room_all_ascii = n > 0 && got->ascii_start == 0 && got->ascii_end == got->data_len;
done:
	lt_array_free(got);
	lt_field_reader_free(r);
}

/* Write the arrays (n rows, in `batches` writes) and check that every field reads back equal. */
static bool
round_trip(const lt_schema *s, lt_array **cols, int64_t n, int batches, lt_file_version v, rt_result *res)
{
	lt_store   *st = NULL;
	lt_file_writer *w = NULL;
	lt_written_file wf = {0};
	lt_file    *f = NULL;
	bool		ok = true;
	int			failures = unit_failures;
	char		path[128];

	memset(res, 0, sizeof(*res));
	CHECK_OK(lt_store_mem_open(&st, &err), err);
	CHECK_OK(lt_file_writer_open(st, "data/", s->n_fields, (const lt_field *const *) s->fields, v, &w, &err), err);
	if (!w)
	{
		lt_store_close(st);
		return false;
	}
	for (int b = 0; b < batches; b++)
	{
		int64_t		r0 = n * b / batches,
					r1 = n * (b + 1) / batches;
		lt_array   *slice[64];

		for (int i = 0; i < s->n_fields; i++)
		{
			CHECK_OK(lt_array_new(s->fields[i], &slice[i], &err), err);
			CHECK_OK(lt_array_append_slice(slice[i], cols[i], r0, r1 - r0, &err), err);
		}
		CHECK_OK(lt_file_writer_write(w, slice, r1 - r0, &err), err);
		for (int i = 0; i < s->n_fields; i++)
			lt_array_free(slice[i]);
	}
	CHECK_EQ_INT(lt_file_writer_rows(w), n);
	CHECK_OK(lt_file_writer_finish(w, &wf, &err), err);
	lt_file_writer_free(w);
	snprintf(path, sizeof(path), "data/%s", wf.name ? wf.name : "?");
	CHECK(wf.name && strlen(wf.name) == 56);
	CHECK_EQ_INT(wf.num_rows, n);
	CHECK_OK(lt_file_open(st, path, &f, &err), err);
	if (f)
	{
		lt_column_map map = {wf.n_fields, wf.field_ids, wf.column_indices};

		res->size = f->size;
		CHECK_EQ_INT(f->size, wf.size);
		CHECK_EQ_INT(f->num_rows, n);
		CHECK_EQ_INT(f->version, v);
		describe_pages(f, res);
		for (int i = 0; i < s->n_fields; i++)
		{
			lt_field_reader *r = NULL;
			lt_array   *got = NULL;

			CHECK_OK(lt_field_reader_open(f, s->fields[i], &map, &r, &err), err);
			CHECK_OK(lt_array_new(s->fields[i], &got, &err), err);
			if (r && got)
			{
				/* read in two halves: page boundaries and windows */
				CHECK_OK(lt_field_reader_read(r, 0, (uint64_t) n / 2, got, &err), err);
				CHECK_OK(lt_field_reader_read(r, (uint64_t) n / 2, (uint64_t) (n - n / 2), got, &err), err);
				if (!lt_array_equal(got, cols[i]))
				{
					fprintf(stderr, "  field \"%s\" (%s) differs after a round trip (version %d, %lld rows)\n",
							s->fields[i]->name, s->fields[i]->logical_type, (int) v, (long long) n);
					CHECK(false);
				}
			}
			lt_array_free(got);
			lt_field_reader_free(r);
			if (lt_type_is_var_width(s->fields[i]->type))
				check_room_read(f, s->fields[i], &map, cols[i], n);
		}
		lt_file_close(f);
	}
	lt_written_file_clear(&wf);
	lt_store_close(st);
	ok = unit_failures == failures;
	return ok;
}

static void
free_cols(const lt_schema *s, lt_array **cols)
{
	for (int i = 0; i < s->n_fields; i++)
		lt_array_free(cols[i]);
}

static lt_array **
make_cols(const lt_schema *s, int64_t n, const gen_opts *o)
{
	static lt_array *cols[64];

	for (int i = 0; i < s->n_fields; i++)
	{
		CHECK_OK(lt_array_new(s->fields[i], &cols[i], &err), err);
		gen(cols[i], n, o);
	}
	return cols;
}

static const lt_file_version V21[] = {LT_FILE_V2_1, LT_FILE_V2_2, LT_FILE_V2_0};

/* Every scalar type, each null pattern, small and multi-chunk sizes. */
TEST(scalar_types)
{
	static const char *types[] = {
		"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "halffloat", "float",
		"double", "decimal:128:38:10", "decimal:256:60:4", "string", "large_string", "binary", "large_binary",
		"fixed_size_binary:16", "date32:day", "date64:ms", "time32:s", "time32:ms", "time64:us", "time64:ns",
		"timestamp:us:-", "timestamp:ns:UTC", "timestamp:ms:America/New_York", "duration:us", "duration:s",
	};
	static const int64_t sizes[] = {1, 7, 1000, 5000};
	static const int nulls[] = {0, 30, 100};
	static const int kinds[] = {0, 1, 2, 3, 4};

	rng_state = 0x1234567;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
	{
		char		spec[128];
		const char *sp[1] = {spec};
		lt_schema  *s;

		snprintf(spec, sizeof(spec), "c;-1;%s", types[t]);
		s = schema_of(sp, 1);
		for (size_t z = 0; s && z < sizeof(sizes) / sizeof(sizes[0]); z++)
			for (size_t nl = 0; nl < 3; nl++)
				for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
					for (int v = 0; v < 3; v++)
					{
						gen_opts	o = {nulls[nl], kinds[k], 40, 4, 10};
						lt_array  **cols = make_cols(s, sizes[z], &o);
						rt_result	r;

						if (!round_trip(s, cols, sizes[z], sizes[z] > 100 ? 3 : 1, V21[v], &r))
							fprintf(stderr, "  type %s, %lld rows, %d%% nulls, kind %d: layouts %s values %s\n",
									types[t], (long long) sizes[z], nulls[nl], kinds[k], r.layouts, r.values);
						free_cols(s, cols);
					}
		lt_schema_free(s);
	}
}

/* The layouts and compressions Lance would pick for typical columns. */
TEST(encoding_choices)
{
	const char *sp[1];
	lt_schema  *s;
	rt_result	r;
	lt_array  **cols;

	rng_state = 42;
	/* small non-negative ints: bit-packed mini-blocks */
	sp[0] = "c;-1;int64";
	s = schema_of(sp, 1);
	cols = make_cols(s, 10000, &(gen_opts) {0, 1, 0, 0, 0});
	round_trip(s, cols, 10000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.layouts, "M") == 0);
	CHECK(strcmp(r.values, "bitpack") == 0);
	CHECK(r.size < 10000 * 2);
	free_cols(s, cols);
	/* long runs: RLE */
	cols = make_cols(s, 10000, &(gen_opts) {0, 2, 0, 0, 0});
	round_trip(s, cols, 10000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.values, "rle") == 0);
	free_cols(s, cols);
	/* random 64-bit values: flat */
	cols = make_cols(s, 3000, &(gen_opts) {0, 0, 0, 0, 0});
	round_trip(s, cols, 3000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.values, "flat") == 0);
	free_cols(s, cols);
	/* all null: a constant page */
	cols = make_cols(s, 3000, &(gen_opts) {100, 0, 0, 0, 0});
	round_trip(s, cols, 3000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.layouts, "C") == 0);
	CHECK(r.size < 1024);
	free_cols(s, cols);
	lt_schema_free(s);

	/* long text: FSST in mini-blocks (narrow) and per value in full-zip (wide) */
	sp[0] = "c;-1;string";
	s = schema_of(sp, 1);
	cols = make_cols(s, 5000, &(gen_opts) {5, 1, 60, 0, 0});
	round_trip(s, cols, 5000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.values, "fsst") == 0);
	CHECK(r.size < 5000 * 30 / 2);
	CHECK(room_all_ascii);		/* letters only: the table is ASCII, decoded values need no check */
	free_cols(s, cols);
	/* a byte outside ASCII in every 97th string (in the table or escaped): never claimed ASCII */
	cols = make_cols(s, 5000, &(gen_opts) {5, 1, 60, 0, 0});
	for (int64_t i = 0; i < 5000; i += 97)
		if (cols[0]->offsets[i + 1] > cols[0]->offsets[i])
			cols[0]->data[cols[0]->offsets[i]] = 0xC3;
	round_trip(s, cols, 5000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.values, "fsst") == 0);
	CHECK(!room_all_ascii);
	free_cols(s, cols);
	cols = make_cols(s, 400, &(gen_opts) {5, 1, 900, 0, 0});
	round_trip(s, cols, 400, 1, LT_FILE_V2_2, &r);
	CHECK(strcmp(r.layouts, "F") == 0);
	CHECK(r.size < 400 * 450 / 2);
	free_cols(s, cols);
	lt_schema_free(s);

	/* low-cardinality strings: dictionary; distinct ones: variable; long ones: full-zip */
	sp[0] = "c;-1;string";
	s = schema_of(sp, 1);
	cols = make_cols(s, 5000, &(gen_opts) {5, 4, 0, 0, 0});
	round_trip(s, cols, 5000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.layouts, "D") == 0);
	free_cols(s, cols);
	cols = make_cols(s, 800, &(gen_opts) {5, 0, 60, 0, 0});	/* under 32 KiB: no FSST */
	round_trip(s, cols, 800, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.layouts, "M") == 0);
	CHECK(strcmp(r.values, "variable") == 0);
	free_cols(s, cols);
	cols = make_cols(s, 200, &(gen_opts) {5, 0, 600, 0, 0});
	round_trip(s, cols, 200, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.layouts, "F") == 0);
	free_cols(s, cols);
	lt_schema_free(s);

	/* vectors: narrow ones in mini-blocks, wide ones full-zip */
	sp[0] = "v;-1;fixed_size_list:float:8";
	s = schema_of(sp, 1);
	cols = make_cols(s, 2000, &(gen_opts) {10, 0, 0, 0, 0});
	round_trip(s, cols, 2000, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.layouts, "M") == 0);
	CHECK(strcmp(r.values, "fsl") == 0);
	free_cols(s, cols);
	lt_schema_free(s);
	sp[0] = "v;-1;fixed_size_list:float:128";
	s = schema_of(sp, 1);
	cols = make_cols(s, 300, &(gen_opts) {10, 0, 0, 0, 0});
	round_trip(s, cols, 300, 1, LT_FILE_V2_1, &r);
	CHECK(strcmp(r.layouts, "F") == 0);
	free_cols(s, cols);
	lt_schema_free(s);
}

/* Strings: empty ones, values over 32 KiB, multi-page columns (over 8 MiB). */
TEST(big_values)
{
	const char *sp[2] = {"s;-1;string", "b;-1;large_binary"};
	lt_schema  *s = schema_of(sp, 2);
	lt_array  **cols;
	rt_result	r;

	rng_state = 99;
	cols = make_cols(s, 400, &(gen_opts) {10, 0, 70000, 0, 0});
	for (int v = 0; v < 3; v++)
	{
		round_trip(s, cols, 400, 4, V21[v], &r);
		if (v == 1)
			CHECK(strchr(r.layouts, 'F') != NULL);
		CHECK(strlen(r.layouts) >= 4);	/* 400 x 35 KiB = 14 MiB: more than one page per column */
	}
	free_cols(s, cols);
	cols = make_cols(s, 1000, &(gen_opts) {0, 0, 0, 0, 0});	/* all empty */
	for (int v = 0; v < 3; v++)
		round_trip(s, cols, 1000, 1, V21[v], &r);
	free_cols(s, cols);
	lt_schema_free(s);
}

/* Nested types: lists, structs, maps, lists of structs, long lists, empty and null lists. */
TEST(nested_types)
{
	static const char *s1[] = {
		"l;-1;list", "item;0;int32",
		"ll;-1;large_list", "item;2;string",
		"st;-1;struct", "a;4;int64", "b;4;string", "c;4;list", "item;7;double",
		"ls;-1;list.struct", "item;9;struct", "x;10;int16", "y;10;fixed_size_list:float:3",
		"nn;-1;list;!", "item;13;int8;!",
		"lll;-1;list", "item;15;list", "item;16;bool",
	};
	static const char *s2[] = {"m;-1;map", "entries;0;struct;!", "key;1;string;!", "value;1;int32"};
	lt_schema  *s = schema_of(s1, (int) (sizeof(s1) / sizeof(s1[0])));
	lt_schema  *sm = schema_of(s2, 4);
	static const int64_t sizes[] = {1, 50, 3000};
	static const int nulls[] = {0, 20, 100};
	static const int empties[] = {0, 30, 100};

	rng_state = 7;
	for (size_t z = 0; z < 3; z++)
		for (size_t nl = 0; nl < 3; nl++)
			for (size_t e = 0; e < 3; e++)
				for (int v = 0; v < 2; v++)
				{
					gen_opts	o = {nulls[nl], (int) ((z + nl + e) % 5), 12, 6, empties[e]};
					lt_array  **cols = make_cols(s, sizes[z], &o);
					rt_result	r;

					if (!round_trip(s, cols, sizes[z], 2, V21[v], &r))
						fprintf(stderr, "  nested: %lld rows, %d%% nulls, %d%% empty: layouts %s\n",
								(long long) sizes[z], nulls[nl], empties[e], r.layouts);
					free_cols(s, cols);
					if (v == 1)
					{
						cols = make_cols(sm, sizes[z], &o);
						if (!round_trip(sm, cols, sizes[z], 1, LT_FILE_V2_2, &r))
							fprintf(stderr, "  map: %lld rows: layouts %s\n", (long long) sizes[z], r.layouts);
						free_cols(sm, cols);
					}
				}
	/* 2.0: one column per field; no null structs there */
	for (size_t z = 0; z < 3; z++)
		for (size_t nl = 0; nl < 3; nl++)
		{
			gen_opts	o = {nulls[nl], (int) ((z + nl) % 5), 12, 6, empties[nl], 1};
			lt_array  **cols = make_cols(s, sizes[z], &o);
			rt_result	r;

			if (!round_trip(s, cols, sizes[z], 2, LT_FILE_V2_0, &r))
				fprintf(stderr, "  nested 2.0: %lld rows, %d%% nulls\n", (long long) sizes[z], nulls[nl]);
			free_cols(s, cols);
		}
	/* long lists: rows of up to 100k items (several chunks and pages per row) */
	{
		static const char *sl[] = {"l;-1;list", "item;0;int32", "s;-1;list", "item;2;string"};
		lt_schema  *ls = schema_of(sl, 4);
		gen_opts	o = {5, 1, 8, 100000, 0};
		lt_array  **cols = make_cols(ls, 5, &o);
		rt_result	r;

		for (int v = 0; v < 3; v++)
			round_trip(ls, cols, 5, 1, V21[v], &r);
		free_cols(ls, cols);
		lt_schema_free(ls);
	}
	lt_schema_free(s);
	lt_schema_free(sm);
}

/* Maps need 2.2; legacy files are refused. */
TEST(refusals)
{
	static const char *s2[] = {"m;-1;map", "entries;0;struct;!", "key;1;string;!", "value;1;int32"};
	lt_schema  *sm = schema_of(s2, 4);
	lt_store   *st = NULL;
	lt_file_writer *w = NULL;
	lt_file_version fv;

	CHECK_OK(lt_store_mem_open(&st, &err), err);
	CHECK_CODE(lt_file_writer_open(st, "data/", 1, (const lt_field *const *) sm->fields, LT_FILE_V2_1, &w, &err),
			   LT_EUNSUPPORTED);
	CHECK(strstr(err.msg, "2.2") != NULL);
	CHECK_CODE(lt_file_writer_open(st, "data/", 1, (const lt_field *const *) sm->fields, LT_FILE_LEGACY, &w, &err),
			   LT_EUNSUPPORTED);
	CHECK(strstr(err.msg, "0.1") != NULL);
	CHECK_CODE(lt_file_writer_open(st, "data/", 1, (const lt_field *const *) sm->fields, LT_FILE_V2_0, &w, &err),
			   LT_EUNSUPPORTED);
	/* a null struct value has no place in a 2.0 file */
	{
		static const char *ss[] = {"st;-1;struct", "x;0;int32"};
		lt_schema  *s = schema_of(ss, 2);
		lt_array  **cols = make_cols(s, 10, &(gen_opts) {100, 0, 0, 0, 0, 0});
		lt_written_file wf = {0};

		CHECK_OK(lt_file_writer_open(st, "data/", 1, (const lt_field *const *) s->fields, LT_FILE_V2_0, &w, &err), err);
		CHECK_OK(lt_file_writer_write(w, cols, 10, &err), err);
		CHECK_CODE(lt_file_writer_finish(w, &wf, &err), LT_EUNSUPPORTED);
		CHECK(strstr(err.msg, "null struct") != NULL);
		lt_file_writer_free(w);
		w = NULL;
		free_cols(s, cols);
		lt_schema_free(s);
	}
	CHECK_CODE(lt_file_version_for_storage("0.1", &fv, &err), LT_EUNSUPPORTED);
	CHECK(strstr(err.msg, "legacy") != NULL);
	CHECK_OK(lt_file_version_for_storage("2.1", &fv, &err), err);
	CHECK_EQ_INT(fv, LT_FILE_V2_1);
	CHECK(w == NULL);
	lt_store_close(st);
	lt_schema_free(sm);
}

/* Random schemas and values (fixed seeds): whatever the writer makes, the reader reads back. */
TEST(randomized)
{
	static const char *leaves[] = {
		"bool", "int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "float", "double", "string",
		"binary", "large_string", "date32:day", "timestamp:us:UTC", "decimal:128:20:3", "fixed_size_binary:4",
		"fixed_size_list:int16:3", "halffloat",
	};
	int			nleaves = (int) (sizeof(leaves) / sizeof(leaves[0]));

	for (uint64_t seed = 1; seed <= 60; seed++)
	{
		char		specs[40][96];
		const char *sp[40];
		int			n = 0;
		int			top = 1 + (int) (seed % 4);
		lt_schema  *s;
		lt_array  **cols;
		rt_result	r;
		gen_opts	o;
		int64_t		rows;

		rng_state = seed * 0x9E3779B97F4A7C15ULL;
		for (int t = 0; t < top && n < 30; t++)
		{
			int			shape = (int) rnd_below(5);
			int			me = n;

			if (shape == 0)
				snprintf(specs[n++], 96, "f%d;-1;%s", me, leaves[rnd_below((uint64_t) nleaves)]);
			else if (shape == 1)
			{
				snprintf(specs[n++], 96, "f%d;-1;list", me);
				snprintf(specs[n++], 96, "item;%d;%s", me, leaves[rnd_below((uint64_t) nleaves)]);
			}
			else if (shape == 2)
			{
				snprintf(specs[n++], 96, "f%d;-1;struct", me);
				for (int c = 0; c < 3; c++)
					snprintf(specs[n++], 96, "c%d;%d;%s", c, me, leaves[rnd_below((uint64_t) nleaves)]);
			}
			else if (shape == 3)
			{
				snprintf(specs[n++], 96, "f%d;-1;list.struct", me);
				snprintf(specs[n++], 96, "item;%d;struct", me);
				snprintf(specs[n++], 96, "a;%d;%s", me + 1, leaves[rnd_below((uint64_t) nleaves)]);
				snprintf(specs[n++], 96, "b;%d;list", me + 1);
				snprintf(specs[n++], 96, "item;%d;%s", me + 3, leaves[rnd_below((uint64_t) nleaves)]);
			}
			else
			{
				snprintf(specs[n++], 96, "f%d;-1;struct", me);
				snprintf(specs[n++], 96, "s;%d;struct", me);
				snprintf(specs[n++], 96, "x;%d;%s", me + 1, leaves[rnd_below((uint64_t) nleaves)]);
				snprintf(specs[n++], 96, "y;%d;%s%s", me, leaves[rnd_below((uint64_t) nleaves)],
						 rnd_below(3) == 0 ? ";!" : "");
			}
		}
		for (int i = 0; i < n; i++)
			sp[i] = specs[i];
		s = schema_of(sp, n);
		if (!s)
			continue;
		o.null_pct = (int) rnd_below(4) * 15;
		o.value_kind = (int) rnd_below(5);
		o.max_str = (int) rnd_below(3) == 0 ? 400 : 20;
		o.max_list = 1 + (int) rnd_below(10);
		o.empty_pct = (int) rnd_below(3) * 20;
		rows = (int64_t) rnd_below(6000) + 1;
		o.no_struct_nulls = seed % 3 == 2;
		cols = make_cols(s, rows, &o);
		if (!round_trip(s, cols, rows, 1 + (int) rnd_below(3), V21[seed % 3], &r))
			fprintf(stderr, "  seed %llu (%lld rows): layouts %s\n", (unsigned long long) seed, (long long) rows,
					r.layouts);
		free_cols(s, cols);
		lt_schema_free(s);
	}
}

/* Streaming writes: invisible until finished, gone when aborted. */
TEST(store_streaming)
{
	lt_store   *st = NULL;
	lt_wfile   *f = NULL;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	char		dir[] = "/tmp/lt_writer_test_XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	CHECK_OK(lt_store_local_open(dir, &st, &err), err);
	CHECK_OK(lt_store_create_file(st, "data/x.bin", &f, &err), err);
	CHECK_OK(lt_wfile_write(f, (const uint8_t *) "hello ", 6, &err), err);
	CHECK_OK(lt_wfile_write(f, (const uint8_t *) "world", 5, &err), err);
	CHECK_CODE(lt_store_read_all(st, "data/x.bin", 100, &buf, &len, &err), LT_ENOTFOUND);
	CHECK_OK(lt_wfile_finish(f, &err), err);
	CHECK_OK(lt_store_read_all(st, "data/x.bin", 100, &buf, &len, &err), err);
	CHECK(len == 11 && buf && memcmp(buf, "hello world", 11) == 0);
	lt_free(buf);
	/* never replaces an existing object */
	CHECK_OK(lt_store_create_file(st, "data/x.bin", &f, &err), err);
	CHECK_OK(lt_wfile_write(f, (const uint8_t *) "other", 5, &err), err);
	CHECK_CODE(lt_wfile_finish(f, &err), LT_ECONFLICT);
	CHECK_OK(lt_store_create_file(st, "data/y.bin", &f, &err), err);
	CHECK_OK(lt_wfile_write(f, (const uint8_t *) "gone", 4, &err), err);
	lt_wfile_abort(f);
	CHECK_CODE(lt_store_read_all(st, "data/y.bin", 100, &buf, &len, &err), LT_ENOTFOUND);
	/* past the writeback threshold (4 MiB), written in pieces of odd sizes */
	{
		size_t		big = (size_t) 11 << 20;
		uint8_t    *b = malloc(big);

		for (size_t i = 0; i < big; i++)
			b[i] = (uint8_t) (i * 2654435761u >> 13);
		CHECK_OK(lt_store_create_file(st, "data/big.bin", &f, &err), err);
		for (size_t off = 0; off < big; off += 1234567)
			CHECK_OK(lt_wfile_write(f, b + off, big - off < 1234567 ? big - off : 1234567, &err), err);
		CHECK_OK(lt_wfile_finish(f, &err), err);
		CHECK_OK(lt_store_read_all(st, "data/big.bin", (uint64_t) 1 << 30, &buf, &len, &err), err);
		CHECK(len == big && buf && memcmp(buf, b, big) == 0);
		lt_free(buf);
		/* small writes gather in the local store's 64 KiB buffer: pieces below, at and above its size,
		 * filling it exactly and crossing it, come back in order */
		{
			static const size_t sizes[] = {1, 17, 4000, 70000, 65536, 61519, 3, 65535, 200000, 2, 131072};
			size_t		off = 0;

			CHECK_OK(lt_store_create_file(st, "data/mixed.bin", &f, &err), err);
			for (int k = 0; off < big; k++)
			{
				size_t		n = sizes[k % (int) (sizeof(sizes) / sizeof(sizes[0]))];

				n = big - off < n ? big - off : n;
				CHECK_OK(lt_wfile_write(f, b + off, n, &err), err);
				off += n;
			}
			CHECK_CODE(lt_store_read_all(st, "data/mixed.bin", 100, &buf, &len, &err), LT_ENOTFOUND);
			CHECK_OK(lt_wfile_finish(f, &err), err);
			CHECK_OK(lt_store_read_all(st, "data/mixed.bin", (uint64_t) 1 << 30, &buf, &len, &err), err);
			CHECK(len == big && buf && memcmp(buf, b, big) == 0);
			lt_free(buf);
		}
		free(b);
	}
	CHECK_OK(lt_store_remove(st, "data/x.bin", &err), err);
	lt_store_close(st);
	{
		char		cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(system(cmd) == 0);
	}
}

/*
 * Rows appended straight into the writer's buffers (lt_file_writer_buffers + _advance, as an
 * INSERT does) make the same file, byte for byte, as the same rows through lt_file_writer_write;
 * big strings cross the page size, so pages are encoded in between.  A wrong row count is refused.
 */
TEST(buffers_advance)
{
	const char *sp[] = {"id;-1;int64", "s;-1;string", "l;-1;list", "item;2;int32"};
	lt_schema  *s = schema_of(sp, 4);
	int64_t		n = 40000;
	lt_array  **cols;
	uint8_t    *bytes[2] = {NULL, NULL};
	uint64_t	lens[2] = {0, 0};
	lt_store   *st = NULL;

	rng_state = 7;
	cols = make_cols(s, n, &(gen_opts) {5, 1, 700, 4, 10, 0});
	CHECK_OK(lt_store_mem_open(&st, &err), err);
	for (int way = 0; way < 2; way++)
	{
		lt_file_writer *w = NULL;
		lt_written_file wf = {0};
		char		path[128];

		CHECK_OK(lt_file_writer_open(st, "data/", s->n_fields, (const lt_field *const *) s->fields, LT_FILE_V2_1, &w,
									 &err), err);
		if (!w)
			break;
		for (int64_t r0 = 0; r0 < n; r0 += 8192)
		{
			int64_t		k = n - r0 < 8192 ? n - r0 : 8192;

			if (way == 0)
			{
				lt_array   *slice[3];

				for (int i = 0; i < 3; i++)
				{
					CHECK_OK(lt_array_new(s->fields[i], &slice[i], &err), err);
					CHECK_OK(lt_array_append_slice(slice[i], cols[i], r0, k, &err), err);
				}
				CHECK_OK(lt_file_writer_write(w, slice, k, &err), err);
				for (int i = 0; i < 3; i++)
					lt_array_free(slice[i]);
			}
			else
			{
				lt_array   *const *buf = lt_file_writer_buffers(w);

				for (int i = 0; i < 3; i++)
					CHECK_OK(lt_array_append_slice(buf[i], cols[i], r0, k, &err), err);
				if (r0 == 0)
				{
					/* one field short of the count: refused, nothing taken */
					CHECK_CODE(lt_file_writer_advance(w, k + 1, &err), LT_EINVALID);
					CHECK_EQ_INT(lt_file_writer_rows(w), 0);
				}
				CHECK_OK(lt_file_writer_advance(w, k, &err), err);
			}
			CHECK_EQ_INT(lt_file_writer_rows(w), r0 + k);
		}
		CHECK_OK(lt_file_writer_finish(w, &wf, &err), err);
		lt_file_writer_free(w);
		snprintf(path, sizeof(path), "data/%s", wf.name ? wf.name : "?");
		CHECK_OK(lt_store_read_all(st, path, (uint64_t) 1 << 30, &bytes[way], &lens[way], &err), err);
		{
			lt_file    *f = NULL;
			struct Lt__Pb__ColumnMetadata *cm = NULL;

			/* more than one page of strings */
			CHECK_OK(lt_file_open(st, path, &f, &err), err);
			if (f)
			{
				CHECK_OK(lt_file_column(f, 1, &cm, &err), err);
				CHECK(cm && cm->n_pages > 1);
				lt_file_close(f);
			}
		}
		lt_written_file_clear(&wf);
	}
	CHECK_EQ_INT(lens[0], lens[1]);
	CHECK(lens[0] == lens[1] && bytes[0] && bytes[1] && memcmp(bytes[0], bytes[1], lens[0]) == 0);
	lt_free(bytes[0]);
	lt_free(bytes[1]);
	lt_store_close(st);
	free_cols(s, cols);
	lt_schema_free(s);
}

/*
 * A sequential read of a big full-zip page of vectors goes through it a slice at a time (the reader
 * does not hold the whole page): the rows read back equal the rows written, whether read whole
 * (whole_pages), in a stream of small reads, in a stream with gaps (rows skipped do not end it),
 * or in reads that start in one slice and end in another.
 */
TEST(vector_stream)
{
	const char *sp[1] = {"v;-1;fixed_size_list:float:128"};
	lt_schema  *s = schema_of(sp, 1);
	const int64_t n = 20000;
	lt_array  **cols;
	lt_store   *st = NULL;
	lt_file_writer *w = NULL;
	lt_written_file wf = {0};
	lt_file    *f = NULL;
	char		path[128];

	rng_state = 16;
	cols = make_cols(s, n, &(gen_opts) {10, 0, 0, 0, 0, 0});
	CHECK_OK(lt_store_mem_open(&st, &err), err);
	CHECK_OK(lt_file_writer_open(st, "data/", 1, (const lt_field *const *) s->fields, LT_FILE_V2_1, &w, &err), err);
	if (w)
	{
		CHECK_OK(lt_file_writer_write(w, cols, n, &err), err);
		CHECK_OK(lt_file_writer_finish(w, &wf, &err), err);
		lt_file_writer_free(w);
	}
	snprintf(path, sizeof(path), "data/%s", wf.name ? wf.name : "?");
	CHECK_OK(lt_file_open(st, path, &f, &err), err);
	if (f)
	{
		lt_column_map map = {wf.n_fields, wf.field_ids, wf.column_indices};
		rt_result	r;
		Lt__Pb__ColumnMetadata *cm = NULL;
		/* chunk, gap: rows read, then rows skipped; 0 gap = back to back */
		static const int64_t ways[][3] = {{700, 0, 1}, {700, 0, 0}, {333, 250, 0}, {5000, 0, 0}, {97, 3, 0}};

		memset(&r, 0, sizeof(r));
		describe_pages(f, &r);
		CHECK(strcmp(r.layouts, "F") == 0);
		CHECK_OK(lt_file_column(f, 0, &cm, &err), err);
		/* big enough to be read in slices (8 slices of 256 KiB at least) */
		CHECK(cm && cm->n_pages >= 1 && cm->pages[0]->buffer_sizes[0] >= ((uint64_t) 2 << 20));
		for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++)
		{
			lt_field_reader *rd = NULL;
			lt_array   *got = NULL,
					   *want = NULL;

			CHECK_OK(lt_field_reader_open(f, s->fields[0], &map, &rd, &err), err);
			CHECK_OK(lt_array_new(s->fields[0], &got, &err), err);
			CHECK_OK(lt_array_new(s->fields[0], &want, &err), err);
			if (rd && got && want)
			{
				rd->whole_pages = ways[k][2] != 0;
				for (int64_t r0 = 0; r0 < n; r0 += ways[k][0] + ways[k][1])
				{
					int64_t		m = n - r0 < ways[k][0] ? n - r0 : ways[k][0];

					CHECK_OK(lt_field_reader_read(rd, (uint64_t) r0, (uint64_t) m, got, &err), err);
					CHECK_OK(lt_array_append_slice(want, cols[0], r0, m, &err), err);
				}
				if (!lt_array_equal(got, want))
				{
					fprintf(stderr, "  vectors read in chunks of %lld (gaps %lld, whole pages %lld) differ\n",
							(long long) ways[k][0], (long long) ways[k][1], (long long) ways[k][2]);
					CHECK(false);
				}
				CHECK_EQ_INT(rd->pages_decoded, 1);
			}
			lt_array_free(got);
			lt_array_free(want);
			lt_field_reader_free(rd);
		}
		lt_file_close(f);
	}
	lt_written_file_clear(&wf);
	lt_store_close(st);
	free_cols(s, cols);
	lt_schema_free(s);
}

int
main(void)
{
	RUN(vector_stream);
	RUN(store_streaming);
	RUN(buffers_advance);
	RUN(refusals);
	RUN(encoding_choices);
	if (!getenv("ONLY") || strstr(getenv("ONLY"), "scalar"))
		RUN(scalar_types);
	RUN(big_values);
	if (!getenv("ONLY") || strstr(getenv("ONLY"), "nested"))
		RUN(nested_types);
	if (!getenv("ONLY") || strstr(getenv("ONLY"), "random"))
		RUN(randomized);
	return unit_report("writer");
}
