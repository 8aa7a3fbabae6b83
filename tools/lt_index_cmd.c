/*
 * lt_index_cmd.c — lt-inspect's index commands.
 *
 *   index DIR              every index: kind, columns, segments, covered and unindexed fragments (JSON lines)
 *   index-query DIR --where EXPR [--index NAME] [--stats]
 *                          the live row addresses where EXPR holds, one per line, ascending: the index's
 *                          answer for the fragments it covers (rechecked with the filter when the index is
 *                          inexact) plus a filtered scan of the fragments it does not cover;
 *                          --no-index scans every fragment with the filter instead (the same answer)
 *   create-index DIR --column C --kind K [--name N] [--read-version V]
 *                          build an index (lt_index_write.h; ivf_flat: lt_ivf_build.h, with
 *                          --num-partitions, --metric, --sample-rate, --max-iters, --seed) and commit it as a CreateIndex
 *   index-file FILE [--bits]  one index file: version, schema, metadata (a JSON line), then its rows (bitmaps
 *                          as row addresses; --bits: float values as their bits) and its global buffers
 */
#include "lt_index_cmd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "index/lt_index.h"
#include "index/lt_index_file.h"
#include "index/lt_index_write.h"
#include "vector/lt_ivf_build.h"
#include "txn/lt_txn_index.h"
#include "io/lt_store_s3.h"
#include <time.h>
#include "proto/lt_file.pb-c.h"
#include "io/lt_store.h"
#include "lt_json.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "lt_where.h"

static int
fail(const lt_error *err)
{
	fprintf(stderr, "lt-inspect: %s: %s\n", lt_code_name(err->code), err->msg);
	return 1;
}

static void
str(const char *s)
{
	json_string(stdout, s ? s : "", s ? strlen(s) : 0);
}

static void
u32_list(const uint32_t *v, uint64_t n)
{
	putchar('[');
	for (uint64_t i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", v[i]);
	putchar(']');
}

int
cmd_index(lt_dataset *ds)
{
	lt_index_list *l;
	lt_error	err;

	if (lt_dataset_indexes(ds, &l, &err) != LT_OK)
		return fail(&err);
	for (size_t i = 0; i < l->n; i++)
	{
		const lt_index *ix = &l->items[i];

		printf("{\"name\":");
		str(ix->name);
		printf(",\"kind\":\"%s\",\"type_url\":", lt_index_kind_name(ix->kind));
		str(ix->type_url);
		printf(",\"fields\":[");
		for (int k = 0; k < ix->n_fields; k++)
			printf("%s%d", k ? "," : "", ix->field_ids[k]);
		printf("],\"columns\":[");
		for (int k = 0; k < ix->n_fields; k++)
		{
			const lt_field *f = lt_schema_find_id(ds->schema, ix->field_ids[k]);

			if (k)
				putchar(',');
			if (f)
				str(f->name);
			else
				printf("null");
		}
		printf("],\"usable\":%s,\"unusable_reason\":", ix->unusable ? "false" : "true");
		if (ix->unusable)
			str(ix->unusable);
		else
			printf("null");
		printf(",\"covered\":");
		u32_list(ix->covered, ix->n_covered);
		printf(",\"unindexed\":");
		u32_list(ix->unindexed, ix->n_unindexed);
		printf(",\"segments\":[");
		for (size_t s = 0; s < ix->n_segments; s++)
		{
			const lt_index_segment *seg = &ix->segments[s];

			printf("%s{\"uuid\":\"%s\",\"index_version\":%d,\"dataset_version\":%" PRIu64 ",\"fragments\":",
				   s ? "," : "", seg->uuid, seg->index_version, seg->dataset_version);
			u32_list(seg->fragments, seg->n_fragments);
			printf(",\"files\":[");
			for (size_t k = 0; k < seg->n_files; k++)
			{
				if (k)
					putchar(',');
				str(seg->files[k]);
			}
			printf("]}");
		}
		printf("]}\n");
	}
	lt_index_list_free(l);
	return 0;
}

/* --- evaluation -------------------------------------------------------------- */

typedef struct query
{
	lt_dataset *ds;
	where_parse w;
	lt_index_reader *ir;		/* NULL: no usable index, scan everything */
	const lt_index *idx;
	lt_rowaddr_set *out;
	lt_index_stats st;
	uint64_t	scanned_fragments;
	uint64_t	rechecked_rows;
	lt_error	err;
} query;

/* label_list tree over the index: NOT is relative to rows whose list is not NULL */
static lt_code
eval_labels(query *q, const where_node *n, lt_rowaddr_set **out)
{
	lt_rowaddr_set *a = NULL,
			   *b = NULL;
	lt_code		rc;
	lt_index_stats st;

	*out = NULL;
	switch (n->kind)
	{
		case W_HAS_ALL:
		case W_HAS_ANY:
			rc = lt_index_search_labels(q->ir, n->kind == W_HAS_ALL ? LT_LABEL_HAS_ALL : LT_LABEL_HAS_ANY,
										n->n_values, n->values, out, &st, &q->err);
			q->st.keys_matched += st.keys_matched;
			q->st.pages_total += st.pages_total;
			q->st.pages_read += st.pages_read;
			return rc;
		case W_AND:
		case W_OR:
			LT_TRY(eval_labels(q, n->a, &a));
			rc = eval_labels(q, n->b, &b);
			if (rc == LT_OK)
				rc = n->kind == W_AND ? lt_rowaddr_set_and(a, b, &q->err) : lt_rowaddr_set_or(a, b, &q->err);
			lt_rowaddr_set_free(b);
			break;
		case W_NOT:
			LT_TRY(eval_labels(q, n->a, &b));
			rc = lt_index_search_labels(q->ir, LT_LABEL_HAS_ALL, 0, NULL, &a, &st, &q->err);
			if (rc == LT_OK)
				rc = lt_rowaddr_set_not(b, a, &q->err);
			lt_rowaddr_set_free(a);
			a = b;
			break;
		default:
			return lt_error_set(&q->err, LT_EUNSUPPORTED, "a label_list query cannot mix in scalar predicates");
	}
	if (rc != LT_OK)
	{
		lt_rowaddr_set_free(a);
		return rc;
	}
	*out = a;
	return LT_OK;
}

/* Per row of a list column: 1 TRUE, 0 FALSE, -1 NULL for tree n (array predicates only). */
static lt_code
eval_lists_rows(query *q, const where_node *n, const lt_array *lists, int8_t *res)
{
	int64_t		rows = lists->length;
	int8_t	   *tmp;

	switch (n->kind)
	{
		case W_HAS_ALL:
		case W_HAS_ANY:
			{
				const lt_array *items = lists->children[0];
				const lt_field *elem = items->field;
				bool		all = n->kind == W_HAS_ALL;

				for (int64_t r = 0; r < rows; r++)
					res[r] = lt_array_is_valid(lists, r) ? (all ? 1 : 0) : -1;
				for (int k = 0; k < n->n_values; k++)
				{
					lt_filter  *f;
					lt_expr    *e;
					const uint8_t *mask = NULL;
					lt_array   *cols[1] = {(lt_array *) items};

					LT_TRY(lt_filter_new(1, &elem, &f, &q->err));
					e = lt_expr_cmp(f, LT_CMP_EQ, lt_expr_column(f, 0, &q->err),
									lt_expr_const(f, &n->values[k], &q->err), &q->err);
					if (!e || lt_filter_set_root(f, e, &q->err) != LT_OK ||
						(items->length > 0 && lt_filter_eval_mask(f, cols, items->length, &mask, &q->err) != LT_OK))
					{
						lt_filter_free(f);
						return q->err.code ? q->err.code : LT_EINVALID;
					}
					for (int64_t r = 0; r < rows; r++)
					{
						bool		hit = false;

						if (res[r] < 0)
							continue;
						for (int64_t i = lists->offsets[r]; i < lists->offsets[r + 1]; i++)
							hit |= mask[i] != 0;
						if (all && !hit)
							res[r] = 0;
						if (!all && hit)
							res[r] = 1;
					}
					lt_filter_free(f);
				}
				return LT_OK;
			}
		case W_NOT:
			LT_TRY(eval_lists_rows(q, n->a, lists, res));
			for (int64_t r = 0; r < rows; r++)
				res[r] = res[r] < 0 ? -1 : !res[r];
			return LT_OK;
		case W_AND:
		case W_OR:
			if (!(tmp = malloc((size_t) rows + 1)))
				return lt_nomem(&q->err);
			if (eval_lists_rows(q, n->a, lists, res) != LT_OK || eval_lists_rows(q, n->b, lists, tmp) != LT_OK)
			{
				free(tmp);
				return q->err.code;
			}
			for (int64_t r = 0; r < rows; r++)
			{
				int			x = res[r],
							y = tmp[r];

				if (n->kind == W_AND)
					res[r] = (x == 0 || y == 0) ? 0 : (x < 0 || y < 0) ? -1 : 1;
				else
					res[r] = (x == 1 || y == 1) ? 1 : (x < 0 || y < 0) ? -1 : 0;
			}
			free(tmp);
			return LT_OK;
		default:
			return lt_error_set(&q->err, LT_EUNSUPPORTED, "a label_list query cannot mix in scalar predicates");
	}
}

/* Scan one fragment (optionally only at offsets) with the query, adding matching addresses. */
static lt_code
scan_fragment(query *q, const Lt__Pb__DataFragment *frag, const uint32_t *offsets, uint64_t n_offsets)
{
	lt_scan_options o = {0};
	lt_fragment_scanner *sc;
	lt_batch   *b;
	lt_code		rc;
	const lt_field *cols[1] = {q->w.column};

	o.n_fields = 1;
	o.fields = cols;
	o.offsets = offsets;
	o.n_offsets = n_offsets;
	if (!q->w.has_arrays)
		o.filter = q->w.filter;
	LT_TRY(lt_fragment_scanner_open(q->ds, frag, &o, &sc, &q->err));
	while ((rc = lt_fragment_scanner_next(sc, &b, &q->err)) == LT_OK && b)
	{
		int8_t	   *res = NULL;

		if (q->w.has_arrays)
		{
			if (!(res = malloc((size_t) b->length + 1)))
			{
				rc = lt_nomem(&q->err);
				break;
			}
			if ((rc = eval_lists_rows(q, q->w.root, b->columns[0], res)) != LT_OK)
			{
				free(res);
				break;
			}
		}
		for (int64_t r = 0; rc == LT_OK && r < b->length; r++)
			if (!res || res[r] == 1)
				rc = lt_rowaddr_set_add(q->out, b->row_addrs[r], &q->err);
		free(res);
		if (rc != LT_OK)
			break;
	}
	lt_fragment_scanner_free(sc);
	return rc;
}

static int
print_addr(uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg)
{
	for (size_t i = 0; i < n; i++)
		printf("%" PRIu64 "\n", ((uint64_t) frag << 32) | offsets[i]);
	return full ? 1 : 0;		/* resolved sets have no whole fragments */
}

int
cmd_index_query(lt_dataset *ds, const char *index_name, const char *where, bool use_index, bool stats)
{
	query		q = {0};
	lt_index_list *l = NULL;
	lt_rowaddr_set *hits = NULL;
	bool		exact = true;
	lt_code		rc = LT_OK;
	int			status = 1;

	q.ds = ds;
	if (where_parse_text(where, ds->schema, &q.w) != 0)
	{
		fprintf(stderr, "lt-inspect: bad --where: %s\n", q.w.msg);
		where_free(&q.w);
		return 2;
	}
	if (!q.w.has_arrays && where_scalar_root(&q.w) != 0)
	{
		fprintf(stderr, "lt-inspect: bad --where: %s\n", q.w.msg);
		where_free(&q.w);
		return 2;
	}
	if ((rc = lt_dataset_indexes(ds, &l, &q.err)) != LT_OK)
		goto done;
	if (!use_index)
		q.idx = NULL;
	else if (index_name)
	{
		q.idx = lt_index_list_find(l, index_name);
		if (!q.idx)
		{
			rc = lt_error_set(&q.err, LT_ENOTFOUND, "no index \"%s\"", index_name);
			goto done;
		}
		if (q.idx->field != q.w.column)
		{
			rc = lt_error_set(&q.err, LT_EINVALID, "index \"%s\" is not on column \"%s\"", index_name,
							  q.w.column->name);
			goto done;
		}
	}
	else
		q.idx = lt_index_list_for_field(l, q.w.column->id,
										q.w.has_arrays ? LT_INDEX_LABEL_LIST : LT_INDEX_UNKNOWN);
	if (q.idx && (rc = lt_index_open(ds, q.idx, &q.ir, &q.err)) != LT_OK)
		goto done;
	if (!(q.out = lt_rowaddr_set_create()))
	{
		rc = lt_nomem(&q.err);
		goto done;
	}

	/* covered fragments: the index */
	if (q.ir)
	{
		if (q.w.has_arrays)
			rc = eval_labels(&q, q.w.root, &hits);
		else
			rc = lt_index_search(q.ir, q.w.filter, &hits, &exact, &q.st, &q.err);
		if (rc != LT_OK)
			goto done;
		if (exact)
			rc = lt_rowaddr_set_or(q.out, hits, &q.err);
		else
		{
			/* "at most": read the candidates and apply the filter */
			for (size_t i = 0; rc == LT_OK && i < ds->n_fragments; i++)
			{
				uint32_t   *offs;
				uint64_t	n;

				if (!lt_index_covers(q.idx, (uint32_t) ds->fragments[i]->id))
					continue;
				rc = lt_rowaddr_set_fragment_offsets(hits, (uint32_t) ds->fragments[i]->id, &offs, &n, &q.err);
				if (rc == LT_OK && n > 0)
					rc = scan_fragment(&q, ds->fragments[i], offs, n);
				q.rechecked_rows += n;
				lt_free(offs);
			}
		}
	}
	/* fragments the index does not cover (or every fragment without an index): a filtered scan */
	for (size_t i = 0; rc == LT_OK && i < ds->n_fragments; i++)
	{
		if (q.idx && q.ir && lt_index_covers(q.idx, (uint32_t) ds->fragments[i]->id))
			continue;
		q.scanned_fragments++;
		rc = scan_fragment(&q, ds->fragments[i], NULL, 0);
	}
	if (rc != LT_OK)
		goto done;
	lt_rowaddr_set_iterate(q.out, print_addr, NULL);
	if (stats)
	{
		fprintf(stderr, "{\"index\":");
		json_string(stderr, q.idx ? q.idx->name : "", q.idx ? strlen(q.idx->name) : 0);
		fprintf(stderr, ",\"kind\":\"%s\",\"exact\":%s,\"rows\":%" PRIu64 ",\"pages_total\":%" PRIu64
				",\"pages_read\":%" PRIu64 ",\"keys_matched\":%" PRIu64 ",\"rows_deleted\":%" PRIu64
				",\"rechecked_rows\":%" PRIu64 ",\"scanned_fragments\":%" PRIu64 ",\"bytes_read\":%" PRIu64 "}\n",
				q.idx ? lt_index_kind_name(q.idx->kind) : "none", exact ? "true" : "false",
				lt_rowaddr_set_cardinality(q.out, NULL), q.st.pages_total, q.st.pages_read, q.st.keys_matched,
				q.st.rows_deleted, q.rechecked_rows, q.scanned_fragments, ds->store->bytes_read);
	}
	status = 0;
done:
	if (rc != LT_OK)
		status = fail(&q.err);
	lt_rowaddr_set_free(hits);
	lt_rowaddr_set_free(q.out);
	lt_index_close(q.ir);
	lt_index_list_free(l);
	where_free(&q.w);
	return status;
}

/* One RowAddrTreeMap as {"frag": [offsets...] or "all"}. */
static int
print_map_entry(uint32_t frag, bool full, const uint32_t *offsets, size_t n, void *arg)
{
	bool	   *first = arg;

	if (!*first && n == 0 && !full)
		return 0;
	if (full)
	{
		printf("%s\"%u\":\"all\"", *first ? "" : ",", frag);
		*first = false;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
	{
		printf("%s%" PRIu64, *first ? "" : ",", ((uint64_t) frag << 32) | offsets[i]);
		*first = false;
	}
	return 0;
}

int
cmd_index_file(const char *path, bool bits)
{
	lt_store   *store;
	lt_index_file *xf;
	lt_error	err;
	const lt_schema *s;
	const Lt__Pb__FileDescriptor *fd;
	int			rc = 0;

	/* the file's directory is the store (a local one, or an s3:// location), its name the path in it */
	{
		const char *slash = strrchr(path, '/');
		char	   *dir = slash ? strndup(path, (size_t) (slash - path)) : strdup(".");
		lt_code		orc = dir ? lt_store_open_location(dir[0] ? dir : "/", &store, &err) : lt_nomem(&err);

		free(dir);
		if (orc != LT_OK)
			return fail(&err);
	}
	if (lt_index_file_open(store, strrchr(path, '/') ? strrchr(path, '/') + 1 : path, &xf, &err) != LT_OK)
	{
		lt_store_close(store);
		return fail(&err);
	}
	s = xf->f->file_schema;
	fd = xf->f->descriptor;
	printf("{\"version\":\"%u.%u\",\"rows\":%" PRIu64 ",\"global_buffers\":%u,\"metadata\":{", xf->f->major,
		   xf->f->minor, lt_index_file_rows(xf), xf->f->num_global_buffers);
	for (size_t i = 0; fd && fd->schema && i < fd->schema->n_metadata; i++)
	{
		printf("%s", i ? "," : "");
		str(fd->schema->metadata[i]->key);
		putchar(':');
		json_string(stdout, (const char *) fd->schema->metadata[i]->value.data, fd->schema->metadata[i]->value.len);
	}
	printf("},\"fields\":[");
	for (int i = 0; i < s->n_all; i++)
	{
		printf("%s{\"id\":%d,\"parent_id\":%d,\"name\":", i ? "," : "", s->all[i]->id, s->all[i]->parent_id);
		str(s->all[i]->name);
		printf(",\"type\":");
		str(s->all[i]->logical_type);
		printf(",\"nullable\":%s}", s->all[i]->nullable ? "true" : "false");
	}
	printf("]}\n");
	/* the rows, column by column read whole; bitmaps decoded to their row addresses */
	{
		lt_array  **cols = calloc((size_t) s->n_fields, sizeof(lt_array *));
		uint64_t	n = lt_index_file_rows(xf);

		for (int c = 0; rc == 0 && c < s->n_fields; c++)
			if (lt_index_file_read(xf, s->fields[c], 0, n, &cols[c], &err) != LT_OK)
				rc = fail(&err);
		for (uint64_t r = 0; rc == 0 && r < n; r++)
		{
			putchar('{');
			for (int c = 0; c < s->n_fields; c++)
			{
				const lt_array *a = cols[c];

				printf("%s", c ? "," : "");
				str(s->fields[c]->name);
				putchar(':');
				if (a->field->type == LT_TYPE_BINARY && strcmp(a->field->name, "bitmaps") == 0 &&
					lt_array_is_valid(a, (int64_t) r))
				{
					lt_rowaddr_set *m;
					size_t		used;
					bool		first = true;

					if (lt_rowaddr_set_parse(a->data + a->offsets[r], (size_t) (a->offsets[r + 1] - a->offsets[r]), &m,
											 &used, &err) != LT_OK)
					{
						rc = fail(&err);
						break;
					}
					putchar('[');
					lt_rowaddr_set_iterate(m, print_map_entry, &first);
					putchar(']');
					lt_rowaddr_set_free(m);
				}
				else if (bits && lt_array_is_valid(a, (int64_t) r) &&
						 (a->field->type == LT_TYPE_FLOAT16 || a->field->type == LT_TYPE_FLOAT32 ||
						  a->field->type == LT_TYPE_FLOAT64))
				{
					/* the value's bits: the sign of a NaN or of a zero shows */
					uint64_t	v = 0;

					memcpy(&v, a->values + (int64_t) r * a->field->byte_width, (size_t) a->field->byte_width);
					printf("\"0x%0*" PRIx64 "\"", 2 * a->field->byte_width, v);
				}
				else
					json_value(stdout, a, (int64_t) r);
			}
			printf("}\n");
		}
		for (int c = 0; c < s->n_fields; c++)
			lt_array_free(cols[c]);
		free(cols);
	}
	for (uint64_t g = 1; rc == 0 && g < xf->f->num_global_buffers; g++)
	{
		uint8_t    *buf;
		size_t		len;
		lt_rowaddr_set *m;
		size_t		used;
		bool		first = true;

		if (lt_index_file_global_buffer(xf, g, &buf, &len, &err) != LT_OK)
		{
			rc = fail(&err);
			break;
		}
		printf("{\"global_buffer\":%" PRIu64 ",\"bytes\":%zu", g, len);
		if (lt_rowaddr_set_parse(buf, len, &m, &used, &err) == LT_OK)
		{
			printf(",\"rowaddr_map\":[");
			lt_rowaddr_set_iterate(m, print_map_entry, &first);
			printf("]");
			lt_rowaddr_set_free(m);
		}
		printf("}\n");
		lt_free(buf);
	}
	lt_index_file_close(xf);
	lt_store_close(store);
	return rc;
}

/*
 * create-index DIR --column C --kind K [--name N] [--read-version V] [--max-memory-mb M]
 * Build the index on version V (default: the latest) and commit it as a CreateIndex; prints one
 * JSON line (exit 3 on a conflict).
 */
int
cmd_create_index(int argc, char **argv)
{
	const char *dir = argv[1], *column = NULL, *kind = NULL, *name = NULL;
	uint64_t	read_version = 0, max_mb = 0;
	lt_ivf_build_options vo = {0};
	bool		ivf;
	lt_store   *store;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_index_build_options bo = {0};
	lt_built_index b;
	const lt_built_index *bp[1] = {&b};
	lt_commit_result res;
	const lt_field *f;
	lt_error	err;
	struct timespec t0, t1, t2;
	int			rc = 0;

	for (int i = 2; i < argc; i++)
	{
		if (strcmp(argv[i], "--column") == 0 && i + 1 < argc)
			column = argv[++i];
		else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc)
			kind = argv[++i];
		else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
			name = argv[++i];
		else if (strcmp(argv[i], "--read-version") == 0 && i + 1 < argc)
			read_version = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--max-memory-mb") == 0 && i + 1 < argc)
			max_mb = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--num-partitions") == 0 && i + 1 < argc)
			vo.num_partitions = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--metric") == 0 && i + 1 < argc)
			vo.metric = argv[++i];
		else if (strcmp(argv[i], "--sample-rate") == 0 && i + 1 < argc)
			vo.sample_rate = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--max-iters") == 0 && i + 1 < argc)
			vo.max_iters = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			vo.seed = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--num-sub-vectors") == 0 && i + 1 < argc)
			vo.num_sub_vectors = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--num-bits") == 0 && i + 1 < argc)
			vo.num_bits = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--m") == 0 && i + 1 < argc)
			vo.hnsw_m = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--ef-construction") == 0 && i + 1 < argc)
			vo.hnsw_ef_construction = (uint32_t) strtoul(argv[++i], NULL, 10);
		else
			column = kind = NULL, i = argc;
	}
	if (!column || !kind)
	{
		fprintf(stderr, "usage: lt-inspect create-index DIR --column C --kind btree|bitmap|label_list|zonemap|ivf_flat|ivf_pq|ivf_sq|ivf_hnsw_sq|ivf_hnsw_pq|ivf_rq [--name N] [--read-version V] [--max-memory-mb M]\n"
				"       ivf_*: [--num-partitions P] [--metric l2|cosine|dot|hamming] [--sample-rate R] [--max-iters I] [--seed S]\n"
				"       vectors: fixed_size_list<float32, N> (ivf_rq: N divisible by 8); float16 / float64 ones: all but\n"
				"       ivf_rq; uint8 ones: ivf_flat with --metric hamming (their default)\n"
				"       ivf_pq: [--num-sub-vectors M] [--num-bits 8|4]; ivf_hnsw_pq: [--num-sub-vectors M] [--num-bits 8|4]\n"
				"       ivf_hnsw_sq, ivf_hnsw_pq: [--m M] [--ef-construction E]\n");
		return 2;
	}
	if (lt_store_open_location(dir, &store, &err) != LT_OK)
		return fail(&err);
	spec.version = read_version;
	if (lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
	{
		lt_store_close(store);
		return fail(&err);
	}
	bo.kind = lt_index_kind_from_name(kind);
	bo.name = name;
	bo.max_memory = max_mb << 20;
	ivf = strcmp(kind, "ivf_flat") == 0 || strcmp(kind, "ivf_pq") == 0 || strcmp(kind, "ivf_sq") == 0 ||
		strcmp(kind, "ivf_hnsw_sq") == 0 || strcmp(kind, "ivf_hnsw_pq") == 0 || strcmp(kind, "ivf_rq") == 0;
	vo.kind = strcmp(kind, "ivf_rq") == 0 ? LT_IVF_BUILD_RQ : strcmp(kind, "ivf_pq") == 0 ? LT_IVF_BUILD_PQ : strcmp(kind, "ivf_sq") == 0 ? LT_IVF_BUILD_SQ :
		strcmp(kind, "ivf_hnsw_sq") == 0 ? LT_IVF_BUILD_HNSW_SQ :
		strcmp(kind, "ivf_hnsw_pq") == 0 ? LT_IVF_BUILD_HNSW_PQ : LT_IVF_BUILD_FLAT;
	vo.name = name;
	vo.max_memory = max_mb << 20;
	if (!(f = lt_schema_find_name(ds->schema, column)))
	{
		fprintf(stderr, "lt-inspect: no column \"%s\"\n", column);
		rc = 1;
	}
	else if (bo.kind == LT_INDEX_UNKNOWN && !ivf)
	{
		fprintf(stderr, "lt-inspect: unknown index kind \"%s\"\n", kind);
		rc = 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rc == 0 && (ivf ? lt_ivf_build(ds, f, &vo, &b, &err) : lt_index_build(ds, f, &bo, &b, &err)) != LT_OK)
		rc = fail(&err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == 0)
	{
		if (lt_commit_create_index(ds, 1, bp, NULL, &res, &err) != LT_OK)
		{
			rc = err.code == LT_ECONFLICT ? 3 : 1;
			fprintf(stderr, "lt-inspect: %s: %s\n", lt_code_name(err.code), err.msg);
			lt_built_index_remove(ds, &b);
		}
		clock_gettime(CLOCK_MONOTONIC, &t2);
		if (rc == 0)
		{
			printf("{\"name\":");
			str(b.name);
			printf(",\"uuid\":\"%s\",\"kind\":\"%s\",\"version\":%" PRIu64 ",\"attempts\":%d,\"rows\":%" PRIu64
				   ",\"entries\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"build_ms\":%.1f,\"commit_ms\":%.1f,\"files\":[",
				   b.uuid_text, ivf ? kind : lt_index_kind_name(b.kind), res.version, res.attempts, b.rows, b.entries, b.bytes,
				   (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
				   (t2.tv_sec - t1.tv_sec) * 1e3 + (t2.tv_nsec - t1.tv_nsec) / 1e6);
			for (size_t i = 0; i < b.n_files; i++)
			{
				printf("%s{\"path\":", i ? "," : "");
				str(b.files[i]);
				printf(",\"size\":%" PRIu64 "}", b.file_sizes[i]);
			}
			printf("]}\n");
		}
		lt_built_index_clear(&b);
	}
	lt_dataset_close(ds);
	lt_store_close(store);
	return rc;
}
