/*
 * test_blob.c — blob columns: the markers in a schema, the descriptor a blob column stores, where a descriptor puts
 * a row's bytes (NULL and empty blobs, sidecar names, kinds not read) and the ranged read of them; the writer of
 * legacy blobs in storage 2.1 and 2.0 (its bytes out of line, its descriptors read back) and the forms it refuses; the
 * writer of blob v2 in storage 2.2 (inline, packed and dedicated by the field's thresholds, the sidecars Lance names,
 * a second pack past the pack threshold) and what it refuses (a URI, a threshold that is no size).
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "blob/lt_blob.h"
#include "file/lt_file.h"
#include "file/lt_sidecar.h"
#include "file/lt_writer.h"
#include "io/lt_store.h"
#include "proto/lt_file.pb-c.h"
#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_alloc.h"

static lt_error err;

static Lt__Pb__Field *
pbf(const char *name, int id, int parent, const char *lt, const char *key, const char *value)
{
	Lt__Pb__Field *f = calloc(1, sizeof(Lt__Pb__Field));

	lt__pb__field__init(f);
	f->name = (char *) name;
	f->has_id = f->has_parent_id = f->has_nullable = true;
	f->id = id;
	f->parent_id = parent;
	f->logical_type = (char *) lt;
	f->nullable = true;
	if (key)
	{
		Lt__Pb__Field__MetadataEntry *e = calloc(1, sizeof(*e));

		lt__pb__field__metadata_entry__init(e);
		e->key = (char *) key;
		e->has_value = true;
		e->value.data = (uint8_t *) value;
		e->value.len = strlen(value);
		f->metadata = calloc(1, sizeof(*f->metadata));
		f->metadata[0] = e;
		f->n_metadata = 1;
	}
	return f;
}

/* One more metadata entry on f. */
static void
pbf_meta(Lt__Pb__Field *f, const char *key, const char *value)
{
	Lt__Pb__Field__MetadataEntry *e = calloc(1, sizeof(*e));

	lt__pb__field__metadata_entry__init(e);
	e->key = (char *) key;
	e->has_value = true;
	e->value.data = (uint8_t *) value;
	e->value.len = strlen(value);
	f->metadata = realloc(f->metadata, (f->n_metadata + 1) * sizeof(*f->metadata));
	f->metadata[f->n_metadata++] = e;
}

static void
pbf_free(Lt__Pb__Field *f)
{
	for (size_t i = 0; i < f->n_metadata; i++)
		free(f->metadata[i]);
	free(f->metadata);
	free(f);
}

static lt_schema *
blob_schema(void)
{
	Lt__Pb__Field *fs[] = {
		pbf("id", 0, -1, "int64", NULL, NULL),
		pbf("legacy", 1, -1, "large_binary", "lance-encoding:blob", "true"),
		pbf("v2", 2, -1, "struct", "ARROW:extension:name", "lance.blob.v2"),
		pbf("data", 3, 2, "large_binary", NULL, NULL),
		pbf("uri", 4, 2, "string", NULL, NULL),
		pbf("notblob", 5, -1, "int32", "lance-encoding:blob", "true"),	/* the marker on a non-binary */
	};
	lt_schema  *s = NULL;

	CHECK_OK(lt_schema_from_pb(fs, 6, &s, &err), err);
	for (int i = 0; i < 6; i++)
		pbf_free(fs[i]);
	return s;
}

TEST(schema_markers)
{
	lt_schema  *s = blob_schema();
	const lt_field *l,
			   *v;

	if (!s)
		return;
	l = lt_schema_find_name(s, "legacy");
	v = lt_schema_find_name(s, "v2");
	CHECK(l->blob == LT_BLOB_LEGACY && v->blob == LT_BLOB_V2);
	CHECK(lt_schema_find_name(s, "id")->blob == LT_BLOB_NONE);
	CHECK(lt_schema_find_name(s, "notblob")->blob == LT_BLOB_NONE && !lt_schema_find_name(s, "notblob")->blob_desc);
	CHECK(lt_schema_first_blob(s) == l);
	/* the storage: a packed struct of the same id, {position, size} / {kind, position, size, blob_id, blob_uri} */
	CHECK(lt_field_storage(l) != l && lt_field_storage(l)->id == 1 && lt_field_storage(l)->packed);
	CHECK_EQ_INT(lt_field_storage(l)->n_children, 2);
	CHECK(strcmp(lt_field_storage(l)->children[1]->name, "size") == 0);
	CHECK_EQ_INT(lt_field_storage(v)->n_children, 5);
	CHECK(lt_field_storage(v)->children[0]->type == LT_TYPE_UINT8 &&
		  lt_field_storage(v)->children[4]->type == LT_TYPE_UTF8);
	CHECK(lt_field_storage(lt_schema_find_name(s, "id")) == lt_schema_find_name(s, "id"));
	CHECK(strcmp(lt_blob_form_name(LT_BLOB_V2), "blob v2") == 0);
	lt_schema_free(s);
}

static void
put_u64(lt_array *a, int64_t i, uint64_t v)
{
	memcpy(a->values + i * 8, &v, 8);
}

TEST(legacy_locations)
{
	lt_schema  *s = blob_schema();
	const lt_field *l;
	lt_array   *a = NULL;
	lt_blob_loc loc;
	/* (position, size): a blob, an empty one, 2.0's NULL, 2.1's NULL (def level 1 << 16) */
	uint64_t	desc[][2] = {{64, 100}, {0, 0}, {1, 0}, {65536, 0}};
	bool		is_null;
	uint64_t	size;

	if (!s)
		return;
	l = lt_schema_find_name(s, "legacy");
	CHECK_OK(lt_array_new(l, &a, &err), err);
	CHECK(a->field == lt_field_storage(l) && a->n_children == 2);
	for (int k = 0; k < 2; k++)
	{
		CHECK_OK(lt_array_reserve(a->children[k], 4, &err), err);
		for (int i = 0; i < 4; i++)
			put_u64(a->children[k], i, desc[i][k]);
		a->children[k]->length = 4;
	}
	a->length = 4;
	CHECK_OK(lt_blob_locate(LT_BLOB_LEGACY, a, 0, "data/f.lance", &loc, &err), err);
	CHECK(!loc.is_null && loc.offset == 64 && loc.length == 100 && loc.path && strcmp(loc.path, "data/f.lance") == 0);
	lt_blob_loc_clear(&loc);
	CHECK_OK(lt_blob_locate(LT_BLOB_LEGACY, a, 1, "data/f.lance", &loc, &err), err);
	CHECK(!loc.is_null && loc.length == 0 && loc.path == NULL);
	for (int i = 2; i < 4; i++)
	{
		CHECK_OK(lt_blob_locate(LT_BLOB_LEGACY, a, i, "data/f.lance", &loc, &err), err);
		CHECK(loc.is_null);
		CHECK_OK(lt_blob_size(LT_BLOB_LEGACY, a, i, &is_null, &size, &err), err);
		CHECK(is_null && size == 0);
	}
	CHECK_CODE(lt_blob_locate(LT_BLOB_LEGACY, a, 4, "data/f.lance", &loc, &err), LT_EINVALID);
	CHECK_CODE(lt_blob_locate(LT_BLOB_V2, a, 0, "data/f.lance", &loc, &err), LT_EINVALID);
	lt_array_free(a);
	lt_schema_free(s);
}

TEST(v2_locations_and_reads)
{
	lt_schema  *s = blob_schema();
	const lt_field *v;
	lt_array   *a = NULL;
	lt_blob_loc loc;
	lt_store   *st = NULL;
	uint8_t		file[300],
				got[300];
	/* kind, position, size, blob id */
	uint64_t	desc[][4] = {{0, 10, 20, 0}, {1, 5, 7, 1}, {2, 0, 300, 6}, {3, 0, 9, 0}, {9, 0, 1, 0}};
	int			n = 5;

	if (!s)
		return;
	v = lt_schema_find_name(s, "v2");
	CHECK_OK(lt_array_new(v, &a, &err), err);
	for (int k = 0; k < 4; k++)
		CHECK_OK(lt_array_reserve(a->children[k], n, &err), err);
	for (int i = 0; i < n; i++)
	{
		uint32_t	id = (uint32_t) desc[i][3];

		a->children[0]->values[i] = (uint8_t) desc[i][0];
		put_u64(a->children[1], i, desc[i][1]);
		put_u64(a->children[2], i, desc[i][2]);
		memcpy(a->children[3]->values + i * 4, &id, 4);
	}
	for (int k = 0; k < 4; k++)
		a->children[k]->length = n;
	CHECK_OK(lt_array_append_nulls(a->children[4], n, &err), err);
	a->length = n;

	CHECK_OK(lt_blob_locate(LT_BLOB_V2, a, 0, "data/f.lance", &loc, &err), err);
	CHECK(loc.path && strcmp(loc.path, "data/f.lance") == 0 && loc.offset == 10 && loc.length == 20);
	lt_blob_loc_clear(&loc);
	/* sidecars: data/<stem>/<id in 32 binary digits, least significant first>.blob */
	CHECK_OK(lt_blob_locate(LT_BLOB_V2, a, 1, "data/f.lance", &loc, &err), err);
	CHECK(loc.path && strcmp(loc.path, "data/f/10000000000000000000000000000000.blob") == 0 && loc.offset == 5);
	lt_blob_loc_clear(&loc);
	CHECK_OK(lt_blob_locate(LT_BLOB_V2, a, 2, "data/f.lance", &loc, &err), err);
	CHECK(loc.path && strcmp(loc.path, "data/f/01100000000000000000000000000000.blob") == 0 && loc.length == 300);
	/* the read: the located range, and a file shorter than the descriptor says is corrupt */
	for (int i = 0; i < 300; i++)
		file[i] = (uint8_t) (i * 13 + 1);
	CHECK_OK(lt_store_mem_open(&st, &err), err);
	CHECK_OK(lt_store_mem_put(st, loc.path, file, 300, &err), err);
	CHECK_OK(lt_blob_read(st, loc.path, &loc, got, &err), err);
	CHECK(memcmp(got, file, 300) == 0);
	loc.offset = 1;
	CHECK_CODE(lt_blob_read(st, loc.path, &loc, got, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "runs past") != NULL);
	lt_blob_loc_clear(&loc);
	/* an external blob without its URI is corrupt, never a guess; an unknown kind too */
	CHECK_CODE(lt_blob_locate(LT_BLOB_V2, a, 3, "data/f.lance", &loc, &err), LT_ECORRUPT);
	CHECK(strstr(err.msg, "without a URI") != NULL);
	CHECK_CODE(lt_blob_locate(LT_BLOB_V2, a, 4, "data/f.lance", &loc, &err), LT_ECORRUPT);
	lt_store_close(st);
	lt_array_free(a);
	lt_schema_free(s);
}

/* External blob URIs: read only under the store's root, never another path or host, "..", or a base path */
TEST(external_paths)
{
	struct
	{
		const char *root, *uri;
		uint32_t	base;
		const char *want;		/* NULL: refused */
	}			cases[] = {
		{"/srv/lake", "file:///srv/lake/media/a%20b.bin", 0, "media/a b.bin"},
		{"/srv/lake", "/srv/lake/x.bin", 0, "x.bin"},
		{"/srv/lake/", "file:///srv/lake/x.bin", 0, "x.bin"},
		{"s3://bucket/pre", "s3://bucket/pre/k/v.bin", 0, "k/v.bin"},
		{"/srv/lake", "file:///srv/lakeside/x.bin", 0, NULL},
		{"/srv/lake", "file:///etc/passwd", 0, NULL},
		{"/srv/lake", "file:///srv/lake/../etc/passwd", 0, NULL},
		{"/srv/lake", "file:///srv/lake/a/%2e%2e/b", 0, NULL},
		{"/srv/lake", "file:///srv/lake/a//b", 0, NULL},
		{"/srv/lake", "file:///srv/lake/a%00b", 0, NULL},
		{"/srv/lake", "s3://bucket/x", 0, NULL},
		{"s3://bucket/pre", "s3://other/pre/x", 0, NULL},
		{"s3://bucket/pre", "https://bucket/pre/x", 0, NULL},
		{"/srv/lake", "media/x.bin", 2, NULL},
		{NULL, "file:///srv/lake/x.bin", 0, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		lt_blob_loc loc = {0};
		char	   *got = NULL;
		lt_code		rc;

		loc.external = true;
		loc.base_id = cases[i].base;
		loc.path = (char *) cases[i].uri;
		rc = lt_blob_external_path(cases[i].root, &loc, &got, &err);
		if (cases[i].want)
		{
			CHECK_OK(rc, err);
			CHECK(got && strcmp(got, cases[i].want) == 0);
		}
		else
		{
			CHECK_CODE(rc, LT_EUNSUPPORTED);
			CHECK(got == NULL && strstr(err.msg, cases[i].uri) != NULL);
		}
		lt_free(got);
	}
}

/* Row i of the written blob column: NULL every fifth row, empty every seventh, else up to 200 KB of a pattern. */
static int64_t
written_len(int i)
{
	return i % 5 == 1 ? -1 : i % 7 == 0 ? 0 : i == 3 ? 200000 : (int64_t) (i * 37 % 300) + 1;
}

static void
append_blob(lt_array *a, int i)
{
	int64_t		len = written_len(i),
				o0;

	CHECK_OK(lt_array_reserve(a, 1, &err), err);
	o0 = a->offsets[a->length];
	if (len < 0)
	{
		a->validity[a->length] = 0;
		a->null_count++;
		len = 0;
	}
	else
		a->validity[a->length] = 1;
	CHECK_OK(lt_array_reserve_data(a, len, &err), err);
	for (int64_t k = 0; k < len; k++)
		a->data[o0 + k] = (uint8_t) (i * 31 + k * 7);
	a->data_len = o0 + len;
	a->offsets[a->length + 1] = o0 + len;
	a->length++;
}

/* Legacy blobs written in storage v (2.1 or 2.0) and read back through their descriptors. */
static void
legacy_round_trip(lt_file_version v)
{
	lt_schema  *s = blob_schema();
	const lt_field *fields[2];
	lt_array   *cols[2] = {NULL, NULL};
	lt_store   *st = NULL;
	lt_file_writer *w = NULL;
	lt_written_file wf = {0};
	lt_file    *f = NULL;
	lt_field_reader *r = NULL;
	lt_array   *desc = NULL;
	char		path[128];
	int			n = 40;

	if (!s)
		return;
	fields[0] = lt_schema_find_name(s, "id");
	fields[1] = lt_schema_find_name(s, "legacy");
	CHECK_OK(lt_store_mem_open(&st, &err), err);
	/* the forms not written are refused before anything is: legacy in 2.2 (Lance refuses it), v2 before 2.2 */
	CHECK_CODE(lt_file_writer_open(st, "data/", 2, fields, LT_FILE_V2_2, &w, &err), LT_EUNSUPPORTED);
	CHECK(strstr(err.msg, "legacy") != NULL);
	fields[1] = lt_schema_find_name(s, "v2");
	CHECK_CODE(lt_file_writer_open(st, "data/", 2, fields, v, &w, &err), LT_EUNSUPPORTED);
	fields[1] = lt_schema_find_name(s, "legacy");

	CHECK_OK(lt_file_writer_open(st, "data/", 2, fields, v, &w, &err), err);
	if (!w)
		goto out;
	/* two writes: two pages of descriptors, each after the blobs it describes */
	for (int b = 0; b < 2; b++)
	{
		CHECK_OK(lt_array_new(fields[0], &cols[0], &err), err);
		CHECK_OK(lt_array_new_values(fields[1], &cols[1], &err), err);
		CHECK(cols[1]->field->type == LT_TYPE_LARGE_BINARY);
		CHECK_OK(lt_array_ensure_validity(cols[1], &err), err);
		CHECK_OK(lt_array_reserve(cols[0], n / 2, &err), err);
		for (int i = b * n / 2; i < (b + 1) * n / 2; i++)
		{
			int64_t		id = i;

			memcpy(cols[0]->values + cols[0]->length * 8, &id, 8);
			cols[0]->length++;
			append_blob(cols[1], i);
		}
		CHECK_OK(lt_file_writer_write(w, cols, n / 2, &err), err);
		lt_array_free(cols[0]);
		lt_array_free(cols[1]);
		cols[0] = cols[1] = NULL;
	}
	CHECK_OK(lt_file_writer_finish(w, &wf, &err), err);
	lt_file_writer_free(w);
	snprintf(path, sizeof(path), "data/%s", wf.name ? wf.name : "?");
	CHECK_OK(lt_file_open(st, path, &f, &err), err);
	if (f)
	{
		lt_column_map map = {wf.n_fields, wf.field_ids, wf.column_indices};

		CHECK_OK(lt_field_reader_open(f, fields[1], &map, &r, &err), err);
		CHECK_OK(lt_array_new(fields[1], &desc, &err), err);
		CHECK(desc && desc->n_children == 2);
		if (r && desc)
			CHECK_OK(lt_field_reader_read(r, 0, (uint64_t) n, desc, &err), err);
	}
	for (int i = 0; desc && desc->length == n && i < n; i++)
	{
		lt_blob_loc loc;
		int64_t		len = written_len(i);
		uint64_t	pos,
					size;

		memcpy(&pos, desc->children[0]->values + i * 8, 8);
		memcpy(&size, desc->children[1]->values + i * 8, 8);
		/* Lance's descriptors: NULL is {1, 0} in 2.0, {definition level 1 << 16, 0} in 2.1; an empty blob {0, 0} */
		if (len <= 0)
			CHECK(size == 0 && pos == (len < 0 ? (v == LT_FILE_V2_0 ? 1 : (uint64_t) 1 << 16) : 0));
		CHECK_OK(lt_blob_locate(LT_BLOB_LEGACY, desc, i, path, &loc, &err), err);
		CHECK(loc.is_null == (len < 0));
		CHECK_EQ_INT(loc.length, len < 0 ? 0 : len);
		if (len > 0)
		{
			uint8_t    *got = malloc((size_t) len);
			bool		same = true;

			CHECK(loc.path && strcmp(loc.path, path) == 0);
			CHECK_OK(lt_blob_read(st, loc.path, &loc, got, &err), err);
			for (int64_t k = 0; k < len; k++)
				same = same && got[k] == (uint8_t) (i * 31 + k * 7);
			CHECK(same);
			free(got);
		}
		lt_blob_loc_clear(&loc);
	}
	CHECK(desc && desc->length == n);
	lt_array_free(desc);
	lt_field_reader_free(r);
	if (f)
		lt_file_close(f);
	lt_written_file_clear(&wf);
out:
	lt_store_close(st);
	lt_schema_free(s);
}

TEST(legacy_write_round_trip)
{
	legacy_round_trip(LT_FILE_V2_1);
	legacy_round_trip(LT_FILE_V2_0);
}


/* A blob v2 dataset schema {id, payload} whose payload keeps values of up to 100 bytes inline, up to 1000 packed
 * (in packs of at most pack_threshold bytes), larger ones dedicated. */
static lt_schema *
v2_schema(const char *pack_threshold)
{
	Lt__Pb__Field *fs[] = {
		pbf("id", 0, -1, "int64", NULL, NULL),
		pbf("payload", 1, -1, "struct", "ARROW:extension:name", "lance.blob.v2"),
		pbf("data", 2, 1, "large_binary", NULL, NULL),
		pbf("uri", 3, 1, "string", NULL, NULL),
	};
	lt_schema  *s = NULL;

	pbf_meta(fs[1], "lance-encoding:blob-inline-size-threshold", "100");
	pbf_meta(fs[1], "lance-encoding:blob-dedicated-size-threshold", "1000");
	pbf_meta(fs[1], "lance-encoding:blob-pack-file-size-threshold", pack_threshold);
	CHECK_OK(lt_schema_from_pb(fs, 4, &s, &err), err);
	for (int i = 0; i < 4; i++)
		pbf_free(fs[i]);
	return s;
}

/* the rows: NULL, empty, inline ones, packed ones, a dedicated one, one packed past the pack limit */
static const int64_t v2_sizes[] = {-1, 0, 50, 100, 101, 1000, 1001, 1000, 10};
/* what Lance 12 stores for them (its writer, blob.rs): kind, blob id, position in the sidecar (inline: -) */
static const int v2_kind[] = {-1, 0, 0, 0, 1, 1, 2, 1, 0};
static const int v2_id[] = {0, 0, 0, 0, 1, 1, 2, 3, 0};
static const int64_t v2_pos[] = {0, -1, -1, -1, 0, 101, 0, 0, -1};

static void
v2_rows(const lt_field *id, const lt_field *payload, lt_array **cols, int n)
{
	CHECK_OK(lt_array_new(id, &cols[0], &err), err);
	CHECK_OK(lt_array_new_values(payload, &cols[1], &err), err);
	CHECK(cols[1]->field->type == LT_TYPE_STRUCT && cols[1]->n_children == 2);
	CHECK_OK(lt_array_reserve(cols[0], n, &err), err);
	for (int i = 0; i < n; i++)
	{
		int64_t		v = i;
		lt_array   *st = cols[1],
				   *data = st->children[0];

		memcpy(cols[0]->values + i * 8, &v, 8);
		cols[0]->length++;
		if (v2_sizes[i] < 0)
		{
			CHECK_OK(lt_array_append_nulls(st, 1, &err), err);
			continue;
		}
		CHECK_OK(lt_array_reserve(data, 1, &err), err);
		CHECK_OK(lt_array_reserve_data(data, v2_sizes[i], &err), err);
		for (int64_t k = 0; k < v2_sizes[i]; k++)
			data->data[data->data_len + k] = (uint8_t) (i * 17 + k * 3);
		data->data_len += v2_sizes[i];
		data->offsets[data->length + 1] = data->data_len;
		if (data->validity)
			data->validity[data->length] = 1;
		data->length++;
		CHECK_OK(lt_array_append_nulls(st->children[1], 1, &err), err);
		CHECK_OK(lt_array_reserve(st, 1, &err), err);
		if (st->validity)
			st->validity[st->length] = 1;
		st->length++;
	}
}

TEST(v2_write_round_trip)
{
	lt_schema  *s = v2_schema("2000");
	lt_schema  *bad = v2_schema("lots");
	const lt_field *fields[2];
	lt_array   *cols[2] = {NULL, NULL};
	lt_store   *st = NULL;
	lt_file_writer *w = NULL;
	lt_written_file wf = {0};
	lt_file    *f = NULL;
	lt_field_reader *r = NULL;
	lt_array   *desc = NULL;
	char		path[128];
	int			n = (int) (sizeof(v2_sizes) / sizeof(v2_sizes[0]));
	uint32_t	id;

	if (!s || !bad)
		return;
	CHECK(lt_blob_sidecar_id("01100000000000000000000000000000.blob", &id) && id == 6);
	CHECK(!lt_blob_sidecar_id("0110000000000000000000000000000.blob", &id) &&
		  !lt_blob_sidecar_id("01100000000000000000000000000002.blob", &id));
	fields[0] = lt_schema_find_name(s, "id");
	fields[1] = lt_schema_find_name(s, "payload");
	CHECK(fields[1]->blob_sizes.inline_max == 100 && fields[1]->blob_sizes.dedicated_after == 1000 &&
		  fields[1]->blob_sizes.pack_max == 2000 && !fields[1]->blob_sizes.bad);
	CHECK_OK(lt_store_mem_open(&st, &err), err);
	/* refused: blob v2 outside 2.2, a threshold that is no size */
	CHECK_CODE(lt_file_writer_open(st, "data/", 2, fields, LT_FILE_V2_1, &w, &err), LT_EUNSUPPORTED);
	fields[1] = lt_schema_find_name(bad, "payload");
	CHECK_CODE(lt_file_writer_open(st, "data/", 2, fields, LT_FILE_V2_2, &w, &err), LT_EUNSUPPORTED);
	CHECK(strstr(err.msg, "pack-file-size-threshold") != NULL);
	fields[1] = lt_schema_find_name(s, "payload");

	/* a URI is not written */
	CHECK_OK(lt_file_writer_open(st, "data/", 2, fields, LT_FILE_V2_2, &w, &err), err);
	v2_rows(fields[0], fields[1], cols, 1);
	cols[1]->validity[0] = 1;
	cols[1]->children[1]->validity[0] = 1;
	CHECK_OK(lt_file_writer_write(w, cols, 1, &err), err);
	CHECK_CODE(lt_file_writer_finish(w, &wf, &err), LT_EUNSUPPORTED);
	lt_file_writer_free(w);
	lt_array_free(cols[0]);
	lt_array_free(cols[1]);

	CHECK_OK(lt_file_writer_open(st, "data/", 2, fields, LT_FILE_V2_2, &w, &err), err);
	if (!w)
		goto out;
	v2_rows(fields[0], fields[1], cols, n);
	CHECK_OK(lt_file_writer_write(w, cols, n, &err), err);
	lt_array_free(cols[0]);
	lt_array_free(cols[1]);
	CHECK_OK(lt_file_writer_finish(w, &wf, &err), err);
	lt_file_writer_free(w);
	/* one column of descriptors for the blob field */
	CHECK(wf.n_fields == 2 && wf.field_ids[1] == 1);
	snprintf(path, sizeof(path), "data/%s", wf.name ? wf.name : "?");
	CHECK_OK(lt_file_open(st, path, &f, &err), err);
	if (f)
	{
		lt_column_map map = {wf.n_fields, wf.field_ids, wf.column_indices};

		CHECK_OK(lt_field_reader_open(f, fields[1], &map, &r, &err), err);
		CHECK_OK(lt_array_new(fields[1], &desc, &err), err);
		if (r && desc)
			CHECK_OK(lt_field_reader_read(r, 0, (uint64_t) n, desc, &err), err);
	}
	CHECK(desc && desc->length == n);
	for (int i = 0; desc && desc->length == n && i < n; i++)
	{
		lt_blob_loc loc;
		uint32_t	bid;
		uint64_t	pos;

		CHECK_OK(lt_blob_locate(LT_BLOB_V2, desc, i, path, &loc, &err), err);
		CHECK(loc.is_null == (v2_sizes[i] < 0));
		if (v2_sizes[i] < 0)
			continue;
		memcpy(&bid, desc->children[3]->values + i * 4, 4);
		memcpy(&pos, desc->children[1]->values + i * 8, 8);
		CHECK_EQ_INT(desc->children[0]->values[i], v2_kind[i]);
		CHECK_EQ_INT(bid, v2_id[i]);
		CHECK_EQ_INT(loc.length, v2_sizes[i]);
		if (v2_pos[i] >= 0)
			CHECK_EQ_INT(pos, v2_pos[i]);
		if (v2_kind[i] == 0)
			CHECK(v2_sizes[i] == 0 || (loc.path && strcmp(loc.path, path) == 0 && pos % 64 == 0));
		if (v2_sizes[i] > 0)
		{
			uint8_t    *got = malloc((size_t) v2_sizes[i]);
			bool		same = true;

			CHECK_OK(lt_blob_read(st, loc.path, &loc, got, &err), err);
			for (int64_t k = 0; k < v2_sizes[i]; k++)
				same = same && got[k] == (uint8_t) (i * 17 + k * 3);
			CHECK(same);
			free(got);
		}
		lt_blob_loc_clear(&loc);
	}
	/* the sidecars: pack 1 (101 + 1000 bytes), dedicated 2, pack 3 (the 1000 bytes that would pass pack 1's limit) */
	for (uint32_t k = 1; k <= 3; k++)
	{
		char	   *sp = lt_blob_sidecar_path(path, k);
		lt_rfile   *rf = NULL;

		CHECK_OK(lt_store_open_file(st, sp, &rf, &err), err);
		CHECK_EQ_INT(rf ? rf->size : 0, k == 1 ? 1101 : k == 2 ? 1001 : 1000);
		if (rf)
			lt_rfile_close(rf);
		lt_free(sp);
	}
	lt_array_free(desc);
	lt_field_reader_free(r);
	if (f)
		lt_file_close(f);
	lt_written_file_clear(&wf);
out:
	lt_store_close(st);
	lt_schema_free(s);
	lt_schema_free(bad);
}

int
main(void)
{
	RUN(schema_markers);
	RUN(legacy_write_round_trip);
	RUN(legacy_locations);
	RUN(v2_locations_and_reads);
	RUN(v2_write_round_trip);
	RUN(external_paths);
	return unit_report("blob");
}
