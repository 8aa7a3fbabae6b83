/*
 * lt_commit_cmds.c — lt-inspect append / delete / update: one commit through
 * lt_txn, printed as one JSON line.
 *
 *   lt-inspect delete DIR --rowaddrs A,B,...                    a Delete
 *   lt-inspect append DIR --copy-fragment SRC:FRAG [...]        an Append
 *   lt-inspect append DIR --rewrite                              an Append of every live row of DIR,
 *                                                               re-encoded by the file writer (lt_writer.h)
 *   lt-inspect append DIR --jsonl FILE                           an Append of the rows of FILE (JSON lines as
 *                                                               `scan` prints them), written by the file writer
 *   lt-inspect update DIR --rowaddrs A,B,... --copy-fragment SRC:FRAG [...]
 *                                                               an Update (deletes + new fragments)
 *   lt-inspect append DIR --truncate[=keep-indexes] [--copy-fragment SRC:FRAG ...]
 *                                                               an Overwrite (TRUNCATE, then the copies)
 *   common: [--read-version N] [--max-attempts N] [--predicate TEXT] [--row-ids A,B,...]
 *           [--delete-copied OFF,OFF,...]
 *
 * --copy-fragment copies the data files of fragment FRAG of the dataset SRC
 * (same schema) into DIR/data/ under fresh names and adds them as one new
 * fragment: new rows without a file writer.  --read-version starts the
 * transaction at an older version, so the commit has to rebase over (or
 * conflict with) everything committed since.  --row-ids gives the rows of the
 * first copied fragment these stable row ids (rows that moved, as UPDATE does);
 * --delete-copied deletes rows (physical offsets) of the first copied fragment in
 * the same transaction, as INSERT then DELETE in one transaction would.
 */
#include "io/lt_store_s3.h"
#include "lt_commit_cmds.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "table/lt_dataset.h"
#include "util/lt_random.h"
#include "lt_json_read.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "txn/lt_txn.h"

static const char *const OPS[] = {"", "append", "delete", "update", "overwrite"};

bool
lt_is_commit_cmd(const char *cmd)
{
	return strcmp(cmd, "append") == 0 || strcmp(cmd, "delete") == 0 || strcmp(cmd, "update") == 0 ||
		strcmp(cmd, "set-config") == 0;
}

static int
cfail(const lt_error *err)
{
	fprintf(stderr, "lt-inspect: %s: %s\n", lt_code_name(err->code), err->msg);
	return err->code == LT_ECONFLICT ? 3 : 1;
}

/* A Lance-style data file name: 24 binary digits, 26 hex digits, ".lance". */
static void
fresh_name(char buf[64])
{
	uint8_t		u[16];
	char	   *o = buf;

	lt_uuid_v4(u, NULL);
	for (int i = 0; i < 24; i++)
		*o++ = (u[i / 8] >> (7 - i % 8)) & 1 ? '1' : '0';
	for (int i = 3; i < 16; i++)
		o += sprintf(o, "%02x", u[i]);
	strcpy(o, ".lance");
}

/* Copy fragment FRAG of SRC into dst's data/ and add it to t. */
/* "1,5,7" -> n values (malloc'd); NULL on a bad list. */
static uint64_t *
parse_u64s(const char *list, uint64_t *n)
{
	char	   *s = strdup(list);
	uint64_t   *v = malloc((strlen(list) / 2 + 1) * sizeof(uint64_t));

	*n = 0;
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ","))
	{
		char	   *end;

		v[(*n)++] = strtoull(tok, &end, 10);
		if (*end)
		{
			free(v);
			v = NULL;
			break;
		}
	}
	free(s);
	return v;
}

static int
copy_fragment(lt_txn *t, lt_store *dst, const char *spec, const uint64_t *row_ids, uint64_t n_ids,
			  uint64_t *new_id, lt_error *err)
{
	char	   *src_dir = strdup(spec);
	char	   *colon = strrchr(src_dir, ':');
	lt_store   *src = NULL;
	lt_dataset *sds = NULL;
	const Lt__Pb__DataFragment *f = NULL;
	lt_written_file wf[16];
	char		names[16][64];
	int			nf = 0, rc = 1;
	uint64_t	fid;

	if (!colon)
	{
		fprintf(stderr, "lt-inspect: --copy-fragment needs SRC:FRAG\n");
		free(src_dir);
		return 2;
	}
	*colon = '\0';
	if (lt_store_open_location(src_dir, &src, err) != LT_OK || lt_dataset_open(src, "", NULL, &sds, err) != LT_OK)
		goto out_err;
	for (size_t i = 0; i < sds->n_fragments; i++)
		if (sds->fragments[i]->id == strtoull(colon + 1, NULL, 10))
			f = sds->fragments[i];
	if (!f || f->n_files > 16)
	{
		fprintf(stderr, "lt-inspect: %s has no fragment %s\n", src_dir, colon + 1);
		goto out;
	}
	for (size_t j = 0; j < f->n_files; j++, nf++)
	{
		const Lt__Pb__DataFile *d = f->files[j];
		char	   *from = lt_asprintf("data/%s", d->path), *to;
		uint8_t    *buf = NULL;
		uint64_t	len;
		lt_code		c;

		fresh_name(names[nf]);
		to = lt_asprintf("data/%s", names[nf]);
		c = lt_store_read_all(src, from, UINT64_MAX, &buf, &len, err);
		if (c == LT_OK)
			c = lt_store_put_if_absent(dst, to, buf, len, err);
		lt_free(buf);
		lt_free(from);
		lt_free(to);
		if (c != LT_OK)
			goto out_err;
		wf[nf].name = names[nf];
		wf[nf].n_fields = (int) d->n_fields;
		wf[nf].field_ids = d->fields;
		wf[nf].column_indices = d->column_indices;
		wf[nf].major = d->file_major_version;
		wf[nf].minor = d->file_minor_version;
		wf[nf].size = len;
		wf[nf].num_rows = f->physical_rows;
	}
	if (row_ids && n_ids != f->physical_rows)
	{
		fprintf(stderr, "lt-inspect: --row-ids gives %llu ids for %llu rows\n", (unsigned long long) n_ids,
				(unsigned long long) f->physical_rows);
		goto out;
	}
	if (lt_txn_add_fragment(t, nf, wf, row_ids, &fid, err) != LT_OK)
		goto out_err;
	*new_id = fid;
	rc = 0;
	goto out;
out_err:
	rc = cfail(err);
out:
	lt_dataset_close(sds);
	if (src)
		lt_store_close(src);
	free(src_dir);
	return rc;
}

/*
 * Read every live row of the dataset and write it again with the file writer,
 * in the dataset's storage version, as one new fragment.
 */
static int
rewrite_rows(lt_txn *t, lt_dataset *ds, lt_error *err)
{
	lt_file_version v;
	lt_file_writer *w = NULL;
	lt_written_file wf = {0};
	char	   *data_dir = NULL;
	uint64_t	fid;
	lt_code		c;

	if (lt_file_version_for_storage(ds->storage_version, &v, err) != LT_OK)
		return cfail(err);
	data_dir = lt_dataset_path(ds, "data/");
	c = lt_file_writer_open(ds->store, data_dir, ds->schema->n_fields, (const lt_field *const *) ds->schema->fields,
							v, &w, err);
	for (size_t i = 0; c == LT_OK && i < ds->n_fragments; i++)
	{
		lt_scan_options o = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;

		o.n_fields = ds->schema->n_fields;
		o.fields = (const lt_field *const *) ds->schema->fields;
		c = lt_fragment_scanner_open(ds, ds->fragments[i], &o, &sc, err);
		while (c == LT_OK && (c = lt_fragment_scanner_next(sc, &b, err)) == LT_OK && b)
			c = lt_file_writer_write(w, b->columns, b->length, err);
		lt_fragment_scanner_free(sc);
	}
	if (c == LT_OK && lt_file_writer_rows(w) > 0)
		c = lt_file_writer_finish(w, &wf, err);
	if (c == LT_OK && wf.name)
		c = lt_txn_add_fragment(t, 1, &wf, NULL, &fid, err);
	lt_written_file_clear(&wf);
	lt_file_writer_free(w);
	lt_free(data_dir);
	return c == LT_OK ? 0 : cfail(err);
}

/* Rows of a JSON-lines file (the `scan` format) written by the file writer as one new fragment. */
static int
append_jsonl(lt_txn *t, lt_dataset *ds, const char *path, lt_error *err)
{
	const lt_schema *sc = ds->schema;
	lt_file_version v;
	lt_file_writer *w = NULL;
	lt_written_file wf = {0};
	lt_array  **cols = calloc((size_t) sc->n_fields + 1, sizeof(lt_array *));
	char	   *data_dir = lt_dataset_path(ds, "data/");
	FILE	   *in = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		len;
	uint64_t	fid,
				lineno = 0;
	lt_code		c = LT_OK;

	if (!in)
	{
		fprintf(stderr, "lt-inspect: cannot open %s\n", path);
		free(cols);
		lt_free(data_dir);
		return 1;
	}
	if ((c = lt_file_version_for_storage(ds->storage_version, &v, err)) == LT_OK)
		c = lt_file_writer_open(ds->store, data_dir, sc->n_fields, (const lt_field *const *) sc->fields, v, &w, err);
	for (int i = 0; c == LT_OK && i < sc->n_fields; i++)
		c = lt_array_new(sc->fields[i], &cols[i], err);
	while (c == LT_OK && (len = getline(&line, &cap, in)) > 0)
	{
		lineno++;
		if (len == 1 && line[0] == '\n')
			continue;
		if ((c = lt_json_row_append(line, (size_t) len, sc->n_fields, (const lt_field *const *) sc->fields, cols,
									err)) != LT_OK)
		{
			lt_error_prefix(err, "%s line %llu", path, (unsigned long long) lineno);
			break;
		}
		if (cols[0]->length >= LT_DEFAULT_BATCH_ROWS)
		{
			c = lt_file_writer_write(w, cols, cols[0]->length, err);
			for (int i = 0; i < sc->n_fields; i++)
				lt_array_clear(cols[i]);
		}
	}
	if (c == LT_OK && sc->n_fields > 0 && cols[0]->length > 0)
		c = lt_file_writer_write(w, cols, cols[0]->length, err);
	if (c == LT_OK && lt_file_writer_rows(w) > 0)
		c = lt_file_writer_finish(w, &wf, err);
	if (c == LT_OK && wf.name)
		c = lt_txn_add_fragment(t, 1, &wf, NULL, &fid, err);
	lt_written_file_clear(&wf);
	lt_file_writer_free(w);
	for (int i = 0; i < sc->n_fields; i++)
		lt_array_free(cols[i]);
	free(cols);
	free(line);
	fclose(in);
	lt_free(data_dir);
	return c == LT_OK ? 0 : cfail(err);
}

/* Delete the rows at the given addresses (fragment << 32 | offset), fragment by fragment. */
static int
delete_addrs(lt_txn *t, const char *list, lt_error *err)
{
	char	   *s = strdup(list);
	int			rc = 0;

	for (char *tok = strtok(s, ","); tok && rc == 0; tok = strtok(NULL, ","))
	{
		char	   *end;
		uint64_t	a = strtoull(tok, &end, 10);
		uint32_t	off = (uint32_t) a;

		if (*end)
		{
			fprintf(stderr, "lt-inspect: bad row address \"%s\"\n", tok);
			rc = 2;
		}
		else if (lt_txn_delete_rows(t, a >> 32, &off, 1, err) != LT_OK)
			rc = cfail(err);
	}
	free(s);
	return rc;
}

/* lt-inspect set-config DIR KEY [VALUE]: one UpdateConfig commit (no VALUE: the key is removed) */
static int
set_config(int argc, char **argv)
{
	lt_store   *store = NULL;
	lt_dataset *ds = NULL;
	lt_commit_result res;
	lt_error	err;
	int			rc = 0;

	if (argc < 3 || argc > 4)
	{
		fprintf(stderr, "usage: lt-inspect set-config DIR KEY [VALUE]\n");
		return 2;
	}
	if (lt_store_open_location(argv[1], &store, &err) != LT_OK)
		return cfail(&err);
	if (lt_dataset_open(store, "", NULL, &ds, &err) != LT_OK ||
		lt_commit_config(ds, argv[2], argc == 4 ? argv[3] : NULL, NULL, &res, &err) != LT_OK)
		rc = cfail(&err);
	else
		printf("%llu\n", (unsigned long long) res.version);
	if (ds)
		lt_dataset_close(ds);
	lt_store_close(store);
	return rc;
}

int
lt_commit_cmd(int argc, char **argv)
{
	const char *cmd = argv[0], *dir = argv[1];
	const char *rowaddrs = NULL, *row_id_list = NULL, *delete_copied = NULL;
	uint64_t   *row_ids = NULL, n_ids = 0;
	const char *copies[64];
	int			n_copies = 0;
	bool		rewrite = false;
	int			truncate = 0;	/* 1: drop the indexes, 2: keep their definitions */
	const char *jsonl = NULL;
	lt_commit_options opts = {0};
	lt_version_spec spec = {0};
	lt_store   *store = NULL;
	lt_dataset *ds = NULL;
	lt_txn	   *t = NULL;
	lt_commit_result res;
	lt_error	err;
	int			rc = 0;

	if (strcmp(cmd, "set-config") == 0)
		return set_config(argc, argv);
	for (int i = 2; i < argc; i++)
	{
		if (strcmp(argv[i], "--rowaddrs") == 0 && i + 1 < argc)
			rowaddrs = argv[++i];
		else if (strcmp(argv[i], "--copy-fragment") == 0 && i + 1 < argc && n_copies < 64)
			copies[n_copies++] = argv[++i];
		else if (strcmp(argv[i], "--rewrite") == 0 && strcmp(cmd, "append") == 0)
			rewrite = true;
		else if (strncmp(argv[i], "--truncate", 10) == 0 && strcmp(cmd, "append") == 0 &&
				 (argv[i][10] == 0 || strcmp(argv[i] + 10, "=keep-indexes") == 0))
			truncate = argv[i][10] ? 2 : 1;
		else if (strcmp(argv[i], "--jsonl") == 0 && i + 1 < argc && strcmp(cmd, "append") == 0)
			jsonl = argv[++i];
		else if (strcmp(argv[i], "--read-version") == 0 && i + 1 < argc)
			spec.version = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--max-attempts") == 0 && i + 1 < argc)
			opts.max_attempts = atoi(argv[++i]);
		else if (strcmp(argv[i], "--predicate") == 0 && i + 1 < argc)
			opts.predicate = argv[++i];
		else if (strcmp(argv[i], "--row-ids") == 0 && i + 1 < argc)
			row_id_list = argv[++i];
		else if (strcmp(argv[i], "--delete-copied") == 0 && i + 1 < argc)
			delete_copied = argv[++i];
		else
		{
			fprintf(stderr, "lt-inspect %s: unexpected argument \"%s\"\n", cmd, argv[i]);
			return 2;
		}
	}
	if ((strcmp(cmd, "append") != 0) != (rowaddrs != NULL) ||
		(strcmp(cmd, "delete") == 0) != (n_copies == 0 && !rewrite && !jsonl && !truncate))
	{
		fprintf(stderr, "usage: lt-inspect delete DIR --rowaddrs A,B,...\n"
				"       lt-inspect append DIR --copy-fragment SRC:FRAG [...] | --rewrite | --jsonl FILE\n"
				"       lt-inspect append DIR --truncate[=keep-indexes] [--copy-fragment SRC:FRAG [...]]\n"
				"       lt-inspect update DIR --rowaddrs A,B,... --copy-fragment SRC:FRAG [...]\n"
				"       [--read-version N] [--max-attempts N] [--predicate TEXT]\n");
		return 2;
	}
	if (row_id_list && !(row_ids = parse_u64s(row_id_list, &n_ids)))
	{
		fprintf(stderr, "lt-inspect: bad --row-ids list\n");
		return 2;
	}
	if (lt_store_open_location(dir, &store, &err) != LT_OK)
		return cfail(&err);
	if (lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK || lt_txn_begin(ds, &t, &err) != LT_OK)
		rc = cfail(&err);
	if (rc == 0 && truncate && lt_txn_replace_all(t, truncate == 2, &err) != LT_OK)
		rc = cfail(&err);
	if (rc == 0 && rowaddrs)
		rc = delete_addrs(t, rowaddrs, &err);
	for (int i = 0; rc == 0 && i < n_copies; i++)
	{
		uint64_t	fid = 0;

		rc = copy_fragment(t, store, copies[i], i == 0 ? row_ids : NULL, n_ids, &fid, &err);
		if (rc == 0 && i == 0 && delete_copied)
		{
			uint64_t	n, *offs = parse_u64s(delete_copied, &n);

			for (uint64_t k = 0; rc == 0 && offs && k < n; k++)
			{
				uint32_t	o = (uint32_t) offs[k];

				if (lt_txn_delete_rows(t, fid, &o, 1, &err) != LT_OK)
					rc = cfail(&err);
			}
			if (!offs)
				rc = 2;
			free(offs);
		}
	}
	if (rc == 0 && rewrite)
		rc = rewrite_rows(t, ds, &err);
	if (rc == 0 && jsonl)
		rc = append_jsonl(t, ds, jsonl, &err);
	if (rc == 0 && lt_txn_commit(t, &opts, &res, &err) != LT_OK)
		rc = cfail(&err);
	if (rc == 0)
		printf("{\"op\":\"%s\",\"version\":%" PRIu64 ",\"attempts\":%d,\"rows_added\":%" PRIu64
			   ",\"rows_deleted\":%" PRIu64 ",\"fragments_added\":%" PRIu64 ",\"fragments_updated\":%" PRIu64
			   ",\"fragments_removed\":%" PRIu64 "}\n",
			   res.op == LT_OP_NONE ? "none" : OPS[res.op], res.version, res.attempts, res.rows_added,
			   res.rows_deleted, res.fragments_added, res.fragments_updated, res.fragments_removed);
	lt_txn_free(t);
	lt_dataset_close(ds);
	lt_store_close(store);
	free(row_ids);
	return rc;
}
