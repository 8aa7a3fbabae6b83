/*
 * lt_vector_cmd.c — lt-inspect's vector search.
 *
 *   vector-search DIR --column C --query X,Y,... [--k K] [--metric l2|cosine|dot|hamming] [--nprobes N]
 *                 [--refine F] [--ef E] [--hnsw-engine 8|12] [--index NAME | --exact] [--version N]
 *
 * The k nearest live rows to the query, nearest first, one JSON line each: {"_rowid": "...",
 * "_distance": d} (the row address as the row id; the distance as the SQL operator gives it: L2
 * distance, cosine distance, negative dot product).  With --index (or the first IVF index on the
 * column when neither --index nor --exact is given) the search goes through that index: nprobes
 * partitions of each segment (HNSW kinds: ef results kept by each partition's graph search), the
 * fragments no segment covers exactly; --exact scores every row.  --hnsw-engine: walk HNSW graphs, and score
 * float16 PQ codes, as that Lance engine does (default: as the engine that wrote them; lt_hnsw.h
 * lt_hnsw_search_as, lt_ivf.h f16_engine).
 */
#include "lt_vector_cmd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/lt_index.h"
#include "io/lt_store.h"
#include "io/lt_store_s3.h"
#include "table/lt_dataset.h"
#include "util/lt_alloc.h"
#include "vector/lt_knn.h"
#include "vector/lt_vsearch.h"

static int
usage_vs(void)
{
	fprintf(stderr, "usage: lt-inspect vector-search DIR --column C --query X,Y,... [--k K] [--metric l2|cosine|dot|hamming]\n"
			"                   [--nprobes N] [--refine F] [--ef E] [--hnsw-engine 8|12] [--index NAME | --exact] [--version N]\n");
	return 2;
}

static int
fail_vs(const lt_error *err)
{
	fprintf(stderr, "lt-inspect: %s: %s\n", lt_code_name(err->code), err->msg);
	return 1;
}

int
cmd_vector_search(int argc, char **argv)
{
	const char *dir,
			   *column = NULL,
			   *query = NULL,
			   *index_name = NULL,
			   *metric_name = "l2";
	uint64_t	k = 10,
				version = 0;
	uint32_t	nprobes = 0,
				refine = 0,
				ef = 0;
	int			hnsw_engine = 0;
	bool		exact = false;
	lt_vmetric	metric;
	float	   *qv = NULL;
	double	   *qd = NULL;
	uint8_t    *qb = NULL;
	uint32_t	dim = 0;
	lt_store   *store = NULL;
	lt_dataset *ds = NULL;
	lt_index_list *indexes = NULL;
	const lt_index *ix = NULL;
	lt_version_spec spec = {0};
	lt_topk		topk = {0};
	lt_error	err;
	int			status = 1;

	if (argc < 2)
		return usage_vs();
	dir = argv[1];
	for (int i = 2; i < argc; i++)
	{
		if (strcmp(argv[i], "--column") == 0 && i + 1 < argc)
			column = argv[++i];
		else if (strcmp(argv[i], "--query") == 0 && i + 1 < argc)
			query = argv[++i];
		else if (strcmp(argv[i], "--k") == 0 && i + 1 < argc)
			k = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--nprobes") == 0 && i + 1 < argc)
			nprobes = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--refine") == 0 && i + 1 < argc)
			refine = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--ef") == 0 && i + 1 < argc)
			ef = (uint32_t) strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--hnsw-engine") == 0 && i + 1 < argc)
		{
			hnsw_engine = atoi(argv[++i]);
			if (hnsw_engine != 8 && hnsw_engine != 12)
				return usage_vs();
		}
		else if (strcmp(argv[i], "--metric") == 0 && i + 1 < argc)
			metric_name = argv[++i];
		else if (strcmp(argv[i], "--index") == 0 && i + 1 < argc)
			index_name = argv[++i];
		else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc)
			version = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--exact") == 0)
			exact = true;
		else
			return usage_vs();
	}
	if (!column || !query || (exact && index_name))
		return usage_vs();
	if (strcmp(metric_name, "l2") == 0)
		metric = LT_VMETRIC_L2;
	else if (strcmp(metric_name, "cosine") == 0)
		metric = LT_VMETRIC_COSINE;
	else if (strcmp(metric_name, "dot") == 0)
		metric = LT_VMETRIC_NEG_DOT;
	else if (strcmp(metric_name, "hamming") == 0)
		metric = LT_VMETRIC_HAMMING;
	else
		return usage_vs();
	qv = malloc(sizeof(float) * (strlen(query) + 1));
	qd = malloc(sizeof(double) * (strlen(query) + 1));
	for (const char *p = query; qv && qd && *p;)
	{
		char	   *end;

		qd[dim] = strtod(p, &end);
		qv[dim] = (float) qd[dim];
		dim++;
		if (end == p)
			return usage_vs();
		p = *end == ',' ? end + 1 : end;
	}

	spec.version = version;
	if (lt_store_open_location(dir, &store, &err) != LT_OK || lt_dataset_open(store, "", &spec, &ds, &err) != LT_OK)
	{
		status = fail_vs(&err);
		goto done;
	}
	{
		lt_knn_query q = {lt_schema_find_name(ds->schema, column), metric, LT_VKERNEL_F32, qv, dim, false};
		lt_vsearch_stats st = {0};
		lt_vsearch_params vp = {nprobes, refine, NULL, NULL, ef, hnsw_engine};
		lt_code		rc;

		if (!lt_knn_field_ok(q.field))
		{
			fprintf(stderr, "lt-inspect: column %s is not a vector of floats\n", column);
			goto done;
		}
		/* float64 vectors are searched with a float64 query (the SQL operator on double precision[]) */
		if (q.field->children[0]->type == LT_TYPE_FLOAT64)
		{
			q.kernel = LT_VKERNEL_F64;
			q.query = qd;
		}
		/* uint8 (binary) vectors: the query's items are bytes, the metric hamming */
		if (q.field->children[0]->type == LT_TYPE_UINT8)
		{
			if (metric != LT_VMETRIC_HAMMING || (qb = malloc(dim + 1)) == NULL)
			{
				fprintf(stderr, "lt-inspect: column %s of uint8 vectors is searched with --metric hamming\n", column);
				goto done;
			}
			for (uint32_t i = 0; i < dim; i++)
				qb[i] = (uint8_t) qd[i];
			q.kernel = LT_VKERNEL_U8;
			q.query = qb;
		}
		else if (metric == LT_VMETRIC_HAMMING)
		{
			fprintf(stderr, "lt-inspect: --metric hamming searches uint8 vectors\n");
			goto done;
		}
		if (!exact)
		{
			if (lt_dataset_indexes(ds, &indexes, &err) != LT_OK)
			{
				status = fail_vs(&err);
				goto done;
			}
			for (size_t i = 0; i < indexes->n && !ix; i++)
				if (indexes->items[i].field == q.field &&
					(index_name ? strcmp(indexes->items[i].name, index_name) == 0
					 : lt_index_is_vector(&indexes->items[i])))
					ix = &indexes->items[i];
			if (ix == NULL)
			{
				fprintf(stderr, "lt-inspect: no vector index on %s\n", column);
				goto done;
			}
		}
		if (lt_topk_init(&topk, k, &err) != LT_OK)
		{
			status = fail_vs(&err);
			goto done;
		}
		rc = exact ? lt_knn_dataset(ds, &q, NULL, &topk, &st.exact, &err)
			: lt_vector_search(ds, ix, &q, &vp, &topk, &st, &err);
		if (rc != LT_OK)
		{
			status = fail_vs(&err);
			goto done;
		}
		lt_topk_finish(&topk);
		for (size_t i = 0; i < topk.n; i++)
			printf("{\"_rowid\":\"%" PRIu64 "\",\"_distance\":%.9g}\n", topk.items[i].addr, topk.items[i].dist);
		fprintf(stderr, "segments %" PRIu64 " partitions %" PRIu64 " index_rows %" PRIu64 " unindexed_fragments %" PRIu64
				" exact_rows %" PRIu64 "\n", st.segments, st.partitions_probed, st.index_rows_scored,
				st.unindexed_fragments, st.exact.rows_scored);
		status = 0;
	}
done:
	lt_topk_free(&topk);
	if (indexes)
		lt_index_list_free(indexes);
	if (ds)
		lt_dataset_close(ds);
	if (store)
		lt_store_close(store);
	free(qv);
	free(qd);
	free(qb);
	return status;
}
