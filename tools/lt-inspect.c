/*
 * lt-inspect — look inside a Lance dataset with lt_fdw's own format library.
 *
 *   lt-inspect info  DIR [--version N | --tag T] [--branch B]
 *   lt-inspect scan  DIR [--columns a,b] [--version N | --tag T] [--branch B] [--with-rowid] [--rowaddr]
 *   lt-inspect pages DIR [--version N | --tag T] [--branch B]
 *   lt-inspect take  DIR --rowaddrs A,B,... [--columns a,b] [--version N | --tag T] [--branch B] [--with-rowid]
 *   lt-inspect append | delete | update DIR ...   commit a change (lt_commit_cmds.c)
 *   lt-inspect index DIR [--version N | --tag T] [--branch B]
 *   lt-inspect index-query DIR --where EXPR [--index NAME | --no-index] [--version N | --tag T] [--branch B] [--stats]
 *
 * --stats (scan, take) prints pages decoded and bytes read to stderr as JSON.
 * take reads only the given rows (row addresses fragment_id << 32 | offset)
 * through the random-access path; deleted or absent addresses are skipped.
 * scan prints JSON lines in the reference harness's format, so its output can
 * be diffed with the real Lance engine's.  Errors go to stderr, exit code 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/lt_store_s3.h"
#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "file/lt_file.h"
#include "lt_commit_cmds.h"
#include "lt_index_cmd.h"
#include "lt_vector_cmd.h"
#include "lt_keys_cmd.h"
#include "lt_json.h"
#include "lt_pages.h"
#include "table/lt_scan.h"
#include "blob/lt_blob.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "util/lt_sort.h"

typedef struct options
{
	const char *cmd;
	const char *dir;
	const char *columns;
	const char *tag;
	const char *branch;
	const char *rowaddrs;
	const char *where;			/* index-query */
	const char *index;
	bool		no_index;
	uint64_t	version;
	bool		with_rowid;
	bool		rowaddr;
	bool		stats;
	bool		blobs;			/* scan/take: blob columns as {"len", "fnv"} of their bytes, not descriptors */
} options;

static void
usage(void)
{
	fprintf(stderr,
			"usage: lt-inspect info  DIR [--version N | --tag T] [--branch B]\n"
			"       lt-inspect scan  DIR [--columns a,b] [--version N | --tag T] [--branch B] [--with-rowid] [--rowaddr]\n"
			"       lt-inspect pages DIR [--version N | --tag T] [--branch B]\n"
			"       lt-inspect take  DIR --rowaddrs A,B,... [--columns a,b] [--version N | --tag T] [--branch B] [--with-rowid]\n"
			"       lt-inspect index DIR [--version N | --tag T] [--branch B]      # indexes, coverage (JSON lines)\n"
			"       lt-inspect index-file FILE [--bits]               # one index file: schema, metadata, rows (--bits: floats as their bits)\n"
			"       lt-inspect create-index DIR --column C --kind K [--name N] [--read-version V]   # K: btree ... ivf_hnsw_pq, ivf_rq\n"
			"       lt-inspect index-query DIR --where EXPR [--index NAME | --no-index] [--version N | --tag T] [--branch B]\n"
			"       lt-inspect set-config DIR KEY [VALUE]   # one UpdateConfig commit (no VALUE: remove KEY)\n"
			"       lt-inspect key-filter TXN [--dataset DIR --keys FILE.jsonl]   # a transaction's inserted-keys filter\n"
			"       (scan and take accept --stats: pages decoded and bytes read, on stderr; and --blobs: blob columns as\n"
			"        {\"len\":N,\"fnv\":FNV-1a 64 of the bytes} instead of their descriptors)\n"
			"       lt-inspect append | delete | update DIR ...   (commit a change; see lt_commit_cmds.c)\n");
	exit(2);
}

static int
fail(const lt_error *err)
{
	fprintf(stderr, "lt-inspect: %s: %s\n", lt_code_name(err->code), err->msg);
	return 1;
}

static void
print_str(const char *s)
{
	json_string(stdout, s ? s : "", s ? strlen(s) : 0);
}

static void
print_i32_list(const int32_t *v, size_t n)
{
	putchar('[');
	for (size_t i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", v[i]);
	putchar(']');
}

static const char *
naming_name(lt_naming n)
{
	return n == LT_NAMING_V2 ? "V2" : "V1";
}

/* --- info ----------------------------------------------------------------- */

static int
cmd_info(lt_store *store, lt_dataset *ds)
{
	Lt__Pb__Manifest *m = ds->manifest;
	uint64_t   *versions = NULL;
	size_t		nv = 0;
	lt_naming	naming;
	lt_error	err;

	printf("{\"version\":%" PRIu64 ",\"manifest_naming\":\"%s\",\"storage_version\":", ds->version,
		   naming_name(ds->naming));
	print_str(ds->storage_version);
	printf(",\"reader_feature_flags\":%" PRIu64 ",\"writer_feature_flags\":%" PRIu64,
		   m->reader_feature_flags, m->writer_feature_flags);
	printf(",\"writer\":");
	if (m->writer_version)
	{
		printf("{\"library\":");
		print_str(m->writer_version->library);
		printf(",\"version\":");
		print_str(m->writer_version->version);
		putchar('}');
	}
	else
		printf("null");
	printf(",\"timestamp\":%" PRId64, m->timestamp ? m->timestamp->seconds : 0);
	printf(",\"operation\":");
	if (ds->transaction)
		print_str(lt_transaction_op_name(ds->transaction));
	else
		printf("null");
	printf(",\"max_fragment_id\":");
	if (m->has_max_fragment_id)
		printf("%u", m->max_fragment_id);
	else
		printf("null");
	printf(",\"next_row_id\":%" PRIu64 ",\"rows\":%" PRIu64, m->next_row_id, lt_dataset_count_rows(ds));

	printf(",\"schema\":[");
	for (size_t i = 0; i < m->n_fields; i++)
	{
		const Lt__Pb__Field *f = m->fields[i];

		printf("%s{\"id\":%d,\"parent_id\":%d,\"name\":", i ? "," : "", f->id, f->parent_id);
		print_str(f->name);
		printf(",\"logical_type\":");
		print_str(f->logical_type);
		printf(",\"nullable\":%s", f->nullable ? "true" : "false");
		/* the unenforced primary key, as lt_schema reads it (position 0: none, ordered by field id) */
		{
			const lt_field *sf = lt_schema_find_id(ds->schema, f->id);

			if (sf && sf->primary_key)
				printf(",\"primary_key_position\":%u", sf->pk_position);
		}
		printf("}");
	}
	printf("],\"fragments\":[");
	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *fr = ds->fragments[i];

		printf("%s{\"id\":%" PRIu64 ",\"physical_rows\":%" PRIu64 ",\"live_rows\":%" PRIu64 ",\"files\":[",
			   i ? "," : "", fr->id, fr->physical_rows, lt_fragment_live_rows(fr));
		for (size_t j = 0; j < fr->n_files; j++)
		{
			const Lt__Pb__DataFile *d = fr->files[j];

			printf("%s{\"path\":", j ? "," : "");
			print_str(d->path);
			printf(",\"fields\":");
			print_i32_list(d->fields, d->n_fields);
			printf(",\"column_indices\":");
			print_i32_list(d->column_indices, d->n_column_indices);
			printf(",\"file_version\":\"%u.%u\"}", d->file_major_version, d->file_minor_version);
		}
		printf("],\"deletion_file\":");
		if (fr->deletion_file)
		{
			const Lt__Pb__DeletionFile *df = fr->deletion_file;

			printf("{\"type\":\"%s\",\"read_version\":%" PRIu64 ",\"id\":\"%" PRIu64 "\",\"num_deleted_rows\":%" PRIu64 "}",
				   df->file_type == LT__PB__DELETION_FILE__FILE_TYPE__BITMAP ? "bitmap" : "arrow",
				   df->read_version, df->id, df->num_deleted_rows);
		}
		else
			printf("null");
		printf(",\"row_ids\":%s}", fr->row_id_sequence_case != LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET ? "true" : "false");
	}
	printf("],\"indexes\":[");
	for (size_t i = 0; ds->index_section && i < ds->index_section->n_indices; i++)
	{
		const Lt__Pb__IndexMetadata *ix = ds->index_section->indices[i];

		printf("%s{\"name\":", i ? "," : "");
		print_str(ix->name);
		printf(",\"uuid\":\"");
		if (ix->uuid && ix->uuid->has_uuid)
			for (size_t k = 0; k < ix->uuid->uuid.len; k++)
				printf("%s%02x", (k == 4 || k == 6 || k == 8 || k == 10) ? "-" : "", ix->uuid->uuid.data[k]);
		printf("\",\"fields\":");
		print_i32_list(ix->fields, ix->n_fields);
		printf(",\"type\":");
		print_str(ix->index_details ? ix->index_details->type_url : NULL);
		printf(",\"dataset_version\":%" PRIu64 "}", ix->dataset_version);
	}
	printf("],\"versions\":[");
	if (lt_dataset_versions(store, ds->prefix, &versions, &nv, &naming, &err) == LT_OK)
		for (size_t i = 0; i < nv; i++)
			printf("%s%" PRIu64, i ? "," : "", versions[i]);
	lt_free(versions);
	printf("]}\n");
	return 0;
}

/* --- scan ----------------------------------------------------------------- */

typedef struct out_row
{
	uint64_t	key;
	char	   *line;
} out_row;

static int
cmp_row(const void *a, const void *b)
{
	uint64_t	x = ((const out_row *) a)->key, y = ((const out_row *) b)->key;

	return x < y ? -1 : x > y;
}

/* "1,5,4294967296" -> sorted unique addresses. */
static int
parse_rowaddrs(const char *s, uint64_t **out, size_t *n)
{
	char	   *list = strdup(s);
	size_t		k = 0, cap = 16;
	uint64_t   *v = malloc(cap * sizeof(uint64_t));

	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
	{
		char	   *end;

		if (k == cap)
			v = realloc(v, (cap *= 2) * sizeof(uint64_t));
		v[k++] = strtoull(tok, &end, 10);
		if (*end)
		{
			fprintf(stderr, "lt-inspect: bad row address \"%s\"\n", tok);
			free(list);
			free(v);
			return 1;
		}
	}
	free(list);
	qsort(v, k, sizeof(uint64_t), lt_cmp_u64);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (i == 0 || v[i] != v[i - 1])
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}


/* A blob's bytes as {"len":N,"fnv":"<FNV-1a 64, hex>"}, or null: what test/interop/blob.mjs prints from the engine. */
static lt_code
blob_json(FILE *out, lt_dataset *ds, const Lt__Pb__DataFragment *frag, const lt_field *f, const lt_array *desc,
		  int64_t r, lt_error *err)
{
	const char *file = NULL;
	char	   *data_file,
			   *path;
	lt_blob_loc loc;
	uint8_t    *bytes;
	uint64_t	h = 0xcbf29ce484222325ull;
	lt_code		rc;

	for (size_t j = 0; j < frag->n_files && !file; j++)
		for (size_t k = 0; k < frag->files[j]->n_fields; k++)
			if (frag->files[j]->fields[k] == f->id)
				file = frag->files[j]->path;
	if (!file)
		return lt_corrupt(err, "fragment %llu has no data file for blob field \"%s\"",
						  (unsigned long long) frag->id, f->name);
	data_file = lt_asprintf("data/%s", file);
	rc = lt_blob_locate(f->blob, desc, r, data_file, &loc, err);
	lt_free(data_file);
	if (rc != LT_OK)
		return rc;
	if (loc.is_null)
	{
		fputs("null", out);
		return LT_OK;
	}
	bytes = malloc(loc.length ? loc.length : 1);
	if (loc.external && loc.length)
		rc = lt_blob_external_path(ds->store->root, &loc, &path, err);
	else
		path = loc.path ? lt_dataset_path(ds, loc.path) : NULL;
	if (rc == LT_OK)
		rc = !bytes ? lt_nomem(err) : loc.length && !path ? lt_nomem(err) :
			loc.length ? lt_blob_read(ds->store, path, &loc, bytes, err) : LT_OK;
	for (uint64_t i = 0; rc == LT_OK && i < loc.length; i++)
		h = (h ^ bytes[i]) * 0x100000001b3ull;
	if (rc == LT_OK)
		fprintf(out, "{\"len\":%" PRIu64 ",\"fnv\":\"%016" PRIx64 "\"}", loc.length, h);
	free(bytes);
	lt_free(path);
	lt_blob_loc_clear(&loc);
	return rc;
}

static int
cmd_scan(lt_dataset *ds, const options *o)
{
	const lt_field **fields;
	int			n = 0;
	lt_error	err;
	out_row    *rows = NULL;
	size_t		nrows = 0, cap = 0;
	int			status = 0;
	uint64_t   *addrs = NULL;
	size_t		naddrs = 0;
	uint64_t	pages = 0;

	fields = calloc(ds->schema->n_fields + 1, sizeof(lt_field *));
	if (o->columns)
	{
		char	   *list = strdup(o->columns);

		for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
		{
			const lt_field *f = lt_schema_find_name(ds->schema, tok);

			if (!f)
			{
				fprintf(stderr, "lt-inspect: column \"%s\" does not exist in %s\n", tok, o->dir);
				free(list);
				free(fields);
				return 1;
			}
			if (n < ds->schema->n_fields)
				fields[n++] = f;
		}
		free(list);
	}
	else
		for (int i = 0; i < ds->schema->n_fields; i++)
			fields[n++] = ds->schema->fields[i];

	if (o->rowaddrs && parse_rowaddrs(o->rowaddrs, &addrs, &naddrs) != 0)
	{
		free(fields);
		return 1;
	}
	for (size_t fi = 0; fi < ds->n_fragments && status == 0; fi++)
	{
		lt_scan_options so = {0};
		lt_fragment_scanner *sc;
		lt_batch   *b;
		uint32_t   *offs = NULL;

		so.n_fields = n;
		so.fields = fields;
		so.want_row_ids = true;
		if (addrs)
		{
			/* this fragment's offsets, ascending (addrs is sorted and unique) */
			offs = calloc(naddrs + 1, sizeof(uint32_t));
			for (size_t k = 0; k < naddrs; k++)
				if (addrs[k] >> 32 == ds->fragments[fi]->id && (addrs[k] & 0xffffffffu) < ds->fragments[fi]->physical_rows)
					offs[so.n_offsets++] = (uint32_t) addrs[k];
			so.offsets = offs;
			if (so.n_offsets == 0)
			{
				free(offs);
				continue;
			}
		}
		if (lt_fragment_scanner_open(ds, ds->fragments[fi], &so, &sc, &err) != LT_OK)
		{
			status = fail(&err);
			break;
		}
		for (;;)
		{
			if (lt_fragment_scanner_next(sc, &b, &err) != LT_OK)
			{
				status = fail(&err);
				break;
			}
			if (!b)
				break;
			for (int64_t r = 0; r < b->length; r++)
			{
				char	   *buf = NULL;
				size_t		len = 0;
				FILE	   *mem = open_memstream(&buf, &len);
				bool		first = true;

				putc('{', mem);
				if (o->with_rowid)
				{
					fprintf(mem, "\"_rowid\":\"%" PRIu64 "\"", b->row_ids[r]);
					first = false;
				}
				if (o->rowaddr)
				{
					fprintf(mem, "%s\"_rowaddr\":\"%" PRIu64 "\"", first ? "" : ",", b->row_addrs[r]);
					first = false;
				}
				for (int c = 0; c < n; c++)
				{
					if (!first)
						putc(',', mem);
					first = false;
					json_string(mem, fields[c]->name, strlen(fields[c]->name));
					putc(':', mem);
					if (o->blobs && fields[c]->blob != LT_BLOB_NONE)
					{
						if (blob_json(mem, ds, ds->fragments[fi], fields[c], b->columns[c], r, &err) != LT_OK)
							status = fail(&err);
					}
					else
						json_value(mem, b->columns[c], r);
				}
				putc('}', mem);
				fclose(mem);
				if (nrows == cap)
				{
					cap = cap ? cap * 2 : 1024;
					rows = realloc(rows, cap * sizeof(out_row));
				}
				rows[nrows].key = b->row_ids[r];
				rows[nrows++].line = buf;
			}
		}
		pages += lt_fragment_scanner_pages(sc);
		lt_fragment_scanner_free(sc);
		free(offs);
	}
	if (o->stats)
		fprintf(stderr, "{\"pages_decoded\":%" PRIu64 ",\"bytes_read\":%" PRIu64 ",\"read_requests\":%" PRIu64 "}\n",
				pages, ds->store->bytes_read, ds->store->read_requests);
	free(addrs);
	/* the reference sorts by _rowid: physical order, except with stable row ids */
	if (status == 0)
	{
		if (nrows)
			qsort(rows, nrows, sizeof(out_row), cmp_row);
		for (size_t i = 0; i < nrows; i++)
			puts(rows[i].line);
	}
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].line);
	free(rows);
	free(fields);
	return status;
}

int
main(int argc, char **argv)
{
	options		o = {0};
	lt_store   *store;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_error	err;
	int			rc;

	if (argc < 3)
		usage();
	if (strcmp(argv[1], "create-index") == 0)
		return cmd_create_index(argc - 1, argv + 1);
	if (strcmp(argv[1], "index-file") == 0)
		return cmd_index_file(argv[2], argc > 3 && strcmp(argv[3], "--bits") == 0);
	if (strcmp(argv[1], "key-filter") == 0)
		return cmd_key_filter(argc - 1, argv + 1);
	if (strcmp(argv[1], "vector-search") == 0)
		return cmd_vector_search(argc - 1, argv + 1);
	if (lt_is_commit_cmd(argv[1]))
		return lt_commit_cmd(argc - 1, argv + 1);
	o.cmd = argv[1];
	o.dir = argv[2];
	for (int i = 3; i < argc; i++)
	{
		if (strcmp(argv[i], "--columns") == 0 && i + 1 < argc)
			o.columns = argv[++i];
		else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc)
		{
			char	   *end;

			o.version = strtoull(argv[++i], &end, 10);
			if (*end || o.version == 0)
				o.tag = argv[i];	/* the reference accepts --version TAG too */
		}
		else if (strcmp(argv[i], "--rowaddrs") == 0 && i + 1 < argc)
			o.rowaddrs = argv[++i];
		else if (strcmp(argv[i], "--where") == 0 && i + 1 < argc)
			o.where = argv[++i];
		else if (strcmp(argv[i], "--index") == 0 && i + 1 < argc)
			o.index = argv[++i];
		else if (strcmp(argv[i], "--no-index") == 0)
			o.no_index = true;
		else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc)
			o.tag = argv[++i];
		else if (strcmp(argv[i], "--branch") == 0 && i + 1 < argc)
			o.branch = argv[++i];	/* a Lance 12 branch (tree/<B>/); --version / --tag within it */
		else if (strcmp(argv[i], "--with-rowid") == 0)
			o.with_rowid = true;
		else if (strcmp(argv[i], "--rowaddr") == 0)
			o.rowaddr = true;
		else if (strcmp(argv[i], "--stats") == 0)
			o.stats = true;
		else if (strcmp(argv[i], "--blobs") == 0)
			o.blobs = true;
		else
			usage();
	}
	if (strcmp(o.cmd, "info") != 0 && strcmp(o.cmd, "scan") != 0 && strcmp(o.cmd, "pages") != 0 &&
		strcmp(o.cmd, "take") != 0 && strcmp(o.cmd, "index") != 0 && strcmp(o.cmd, "index-query") != 0)
		usage();
	if ((strcmp(o.cmd, "index-query") == 0) != (o.where != NULL))
		usage();
	if ((strcmp(o.cmd, "take") == 0) != (o.rowaddrs != NULL))
		usage();
	if (lt_store_open_location(o.dir, &store, &err) != LT_OK)
		return fail(&err);
	spec.version = o.tag ? 0 : o.version;
	spec.tag = o.tag;
	spec.branch = o.branch;
	if (lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
	{
		lt_store_close(store);
		return fail(&err);
	}
	if (strcmp(o.cmd, "info") == 0)
		rc = cmd_info(store, ds);
	else if (strcmp(o.cmd, "index") == 0)
		rc = cmd_index(ds);
	else if (strcmp(o.cmd, "index-query") == 0)
		rc = cmd_index_query(ds, o.index, o.where, !o.no_index, o.stats);
	else if (strcmp(o.cmd, "scan") == 0 || strcmp(o.cmd, "take") == 0)
		rc = cmd_scan(ds, &o);
	else
		rc = inspect_pages(ds);
	lt_dataset_close(ds);
	lt_store_close(store);
	return rc;
}
