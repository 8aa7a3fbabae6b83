/*
 * lt_vsearch.c — vector search through an IVF index (lt_vsearch.h).
 */
#include "vector/lt_vsearch.h"

#include <stdlib.h>
#include <string.h>

#include "proto/lt_table.pb-c.h"
#include "table/lt_scan.h"
#include "util/lt_alloc.h"
#include "util/lt_sort.h"
#include "vector/lt_hnsw.h"
#include "vector/lt_ivf.h"

struct lt_vindex
{
	lt_dataset *ds;
	const lt_index *idx;
	size_t		n_segments;
	lt_ivf	  **segments;		/* idx->segments[i], opened */
	lt_hnsw   **graphs;			/* of IVF_HNSW_* segments, else NULL */
	int		   *writers;		/* float16 PQ / RQ segments: the engine that committed each (segment_engine) */
	uint32_t   *parts;			/* scratch: the probed partitions */
	uint32_t	max_partitions;
	/* the deleted offsets of each dataset fragment (parallel to ds->fragments), read on first use */
	bool	   *del_loaded;
	uint32_t  **deleted;
	uint64_t   *n_deleted;
};

typedef struct accept_state
{
	lt_vindex  *vx;
	const lt_index_segment *seg;
	const lt_vsearch_params *p;
	lt_error   *err;
	lt_code		rc;
	uint64_t	rejected;
	/* the last fragment looked at */
	uint64_t	frag_id;
	bool		have_frag;
	bool		frag_live;		/* in the dataset and in the segment */
	size_t		frag_pos;		/* in ds->fragments */
	/* fragments looked at before (a partition's rows alternate between them), by id modulo ACCEPT_MEMO */
	struct
	{
		uint64_t	id;			/* UINT64_MAX: none */
		bool		live;
		bool		clean;		/* live, no deleted rows and no prefilter: every row accepted */
		size_t		pos;
	}			memo[16];
} accept_state;

#define ACCEPT_MEMO 16

static bool
u32_in(const uint32_t *v, uint64_t n, uint32_t x)
{
	uint64_t	lo = 0,
				hi = n;

	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x;
}

/*
 * A row id of the index is a candidate when its fragment is live and covered by the segment, it is
 * not deleted, and the prefilter takes it.
 */
static bool
accept_row(uint64_t id, void *arg)
{
	accept_state *a = arg;
	uint64_t	frag = id >> 32;
	bool		ok;

	if (a->memo[frag % ACCEPT_MEMO].id == frag && a->memo[frag % ACCEPT_MEMO].clean && a->rc == LT_OK)
		return true;			/* the common case, decided once per fragment */
	if (a->rc != LT_OK)
		return false;
	if (!a->have_frag || a->frag_id != frag)
	{
		lt_vindex  *vx = a->vx;
		size_t		slot = frag % ACCEPT_MEMO;

		a->have_frag = true;
		a->frag_id = frag;
		if (a->memo[slot].id == frag)
		{
			a->frag_pos = a->memo[slot].pos;
			a->frag_live = a->memo[slot].live;
		}
		else
		{
			size_t		pos = frag <= UINT32_MAX ? lt_dataset_fragment_index(vx->ds, frag) : vx->ds->n_fragments;

			a->frag_pos = pos;
			a->frag_live = pos < vx->ds->n_fragments &&
				u32_in(a->seg->fragments, a->seg->n_fragments, (uint32_t) frag);
			if (a->frag_live && !vx->del_loaded[pos])
			{
				if ((a->rc = lt_fragment_deleted_offsets(vx->ds, vx->ds->fragments[pos], &vx->deleted[pos],
														 &vx->n_deleted[pos], a->err)) != LT_OK)
					return false;
				vx->del_loaded[pos] = true;
			}
			a->memo[slot].id = frag;
			a->memo[slot].pos = pos;
			a->memo[slot].live = a->frag_live;
			a->memo[slot].clean = a->frag_live && vx->n_deleted[pos] == 0 && a->p->accept == NULL;
		}
	}
	ok = a->frag_live && !u32_in(a->vx->deleted[a->frag_pos], a->vx->n_deleted[a->frag_pos], (uint32_t) id) &&
		(a->p->accept == NULL || a->p->accept(id, a->p->accept_arg));
	if (!ok)
		a->rejected++;
	return ok;
}

/* The engine a manifest names as its writer: a "lance" major version, or 12 for any other writer. */
static int
writer_engine(const Lt__Pb__Manifest *m)
{
	const Lt__Pb__WriterVersion *w = m ? m->writer_version : NULL;

	if (w == NULL || w->library == NULL || strcmp(w->library, "lance") != 0 || w->version == NULL)
		return 12;
	return atoi(w->version) < 12 ? 8 : 12;
}

static bool
lists_segment(const lt_dataset *ds, const char *uuid)
{
	lt_index_list *l = NULL;
	bool		found = false;

	if (lt_dataset_indexes(ds, &l, NULL) != LT_OK)
		return false;
	for (size_t i = 0; !found && i < l->n; i++)
		for (size_t j = 0; !found && j < l->items[i].n_segments; j++)
			found = strcmp(l->items[i].segments[j].uuid, uuid) == 0;
	lt_index_list_free(l);
	return found;
}

/*
 * Whose arithmetic a float16 PQ or RQ segment's search follows (lt_ivf.f16_engine): the engine that committed
 * the segment.  Its files and IndexMetadata do not name their writer (Lance 8 and 12 write them alike);
 * the manifest of the version that added it does (writer_version): version dataset_version + 1 when it
 * is still there and lists the segment, else the manifest read now.  A "lance" before 12: Lance 8's;
 * any other writer (Lance 12, lt_fdw, which builds as Lance 12 does): Lance 12's.
 */
/*
 * The writers found, by segment uuid: a segment's writer never changes, and finding it opens a manifest,
 * which each search's open of the index would otherwise repeat.  Only answers read from the version that
 * added the segment are kept (a later manifest's writer can change).
 */
#define WRITER_MEMO 32
static struct
{
	char		uuid[40];
	int			engine;
}			writer_memo[WRITER_MEMO];
static unsigned writer_memo_next;

static int
segment_engine(lt_dataset *ds, const lt_index_segment *seg)
{
	const Lt__Pb__Manifest *m = ds->manifest;
	lt_dataset *at = NULL;
	bool		adding = ds->branch == NULL && seg->dataset_version + 1 == ds->version;
	int			engine;

	for (unsigned i = 0; i < WRITER_MEMO && seg->uuid[0]; i++)
		if (strcmp(writer_memo[i].uuid, seg->uuid) == 0)
			return writer_memo[i].engine;
	if (ds->branch == NULL && seg->dataset_version + 1 < ds->version)
	{
		lt_version_spec spec = {.version = seg->dataset_version + 1};

		if (lt_dataset_open(ds->store, ds->prefix, &spec, &at, NULL) == LT_OK && lists_segment(at, seg->uuid))
		{
			m = at->manifest;
			adding = true;
		}
	}
	engine = writer_engine(m);
	lt_dataset_close(at);
	if (adding && seg->uuid[0] && strlen(seg->uuid) < sizeof(writer_memo[0].uuid))
	{
		unsigned	i = writer_memo_next++ % WRITER_MEMO;

		strcpy(writer_memo[i].uuid, seg->uuid);
		writer_memo[i].engine = engine;
	}
	return engine;
}

bool
lt_index_is_vector(const lt_index *idx)
{
	return idx->type_url != NULL && strstr(idx->type_url, "VectorIndexDetails") != NULL;
}

lt_code
lt_vindex_open(lt_dataset *ds, const lt_index *idx, lt_vindex **out, lt_error *err)
{
	lt_vindex  *vx;
	lt_code		rc = LT_OK;

	*out = NULL;
	if (ds->stable_row_ids)
		return lt_error_set(err, LT_EUNSUPPORTED, "IVF search of a dataset with stable row ids");
	if (idx->n_segments == 0)
		return lt_error_set(err, LT_EUNSUPPORTED, "index %s has no segments", idx->name);
	if ((vx = lt_calloc(1, sizeof(lt_vindex))) == NULL ||
		(vx->segments = lt_calloc(idx->n_segments, sizeof(lt_ivf *))) == NULL ||
		(vx->graphs = lt_calloc(idx->n_segments, sizeof(lt_hnsw *))) == NULL ||
		(vx->writers = lt_calloc(idx->n_segments, sizeof(int))) == NULL)
	{
		if (vx)
		{
			lt_free(vx->segments);
			lt_free(vx->graphs);
		}
		lt_free(vx);
		return lt_nomem(err);
	}
	vx->ds = ds;
	vx->idx = idx;
	for (size_t s = 0; rc == LT_OK && s < idx->n_segments; s++)
	{
		char	   *dir = lt_index_segment_dir(ds, &idx->segments[s]);

		if (dir == NULL)
		{
			rc = lt_nomem(err);
			break;
		}
		/* the segment's model and graphs from the cache when it holds this record of it */
		rc = lt_ivf_open_cached(ds->store, dir, idx->segments[s].dataset_version, &vx->segments[s], err);
		if (rc == LT_OK)
			vx->n_segments++;
		if (rc == LT_OK && lt_ivf_is_hnsw(vx->segments[s]))
			rc = lt_hnsw_open(ds->store, dir, vx->segments[s], &vx->graphs[s], err);
		/* float16 PQ and RQ: searched with the arithmetic of the engine that wrote them (HNSW: lt_hnsw.c) */
		else if (rc == LT_OK && (vx->segments[s]->pq || vx->segments[s]->rq) && vx->segments[s]->elem == LT_TYPE_FLOAT16)
			vx->writers[s] = segment_engine(ds, &idx->segments[s]);
		lt_free(dir);
		if (rc != LT_OK)
			break;
		if (s > 0 && (vx->segments[s]->dim != vx->segments[0]->dim ||
					  vx->segments[s]->metric != vx->segments[0]->metric ||
					  vx->segments[s]->elem != vx->segments[0]->elem ||
					  strcmp(vx->segments[s]->type_name, vx->segments[0]->type_name) != 0))
			rc = lt_corrupt(err, "_indices/%s/index.idx: a segment of index %s unlike its first",
							idx->segments[s].uuid, idx->name);
		if (vx->segments[s]->n_partitions > vx->max_partitions)
			vx->max_partitions = vx->segments[s]->n_partitions;
	}
	if (rc == LT_OK && ((vx->parts = lt_malloc(sizeof(uint32_t) * vx->max_partitions)) == NULL ||
						(vx->del_loaded = lt_calloc(ds->n_fragments + 1, sizeof(bool))) == NULL ||
						(vx->deleted = lt_calloc(ds->n_fragments + 1, sizeof(uint32_t *))) == NULL ||
						(vx->n_deleted = lt_calloc(ds->n_fragments + 1, sizeof(uint64_t))) == NULL))
		rc = lt_nomem(err);
	if (rc != LT_OK)
	{
		lt_vindex_close(vx);
		return rc;
	}
	*out = vx;
	return LT_OK;
}

void
lt_vindex_close(lt_vindex *vx)
{
	if (vx == NULL)
		return;
	for (size_t s = 0; s < vx->n_segments; s++)
	{
		lt_hnsw_close(vx->graphs[s]);
		lt_ivf_close(vx->segments[s]);
	}
	lt_free(vx->graphs);
	lt_free(vx->writers);
	lt_free(vx->segments);
	lt_free(vx->parts);
	for (size_t i = 0; vx->deleted && i < vx->ds->n_fragments; i++)
		lt_free(vx->deleted[i]);
	lt_free(vx->deleted);
	lt_free(vx->n_deleted);
	lt_free(vx->del_loaded);
	lt_free(vx);
}

const char *
lt_vindex_type(const lt_vindex *vx)
{
	return vx->segments[0]->type_name;
}

lt_vmetric
lt_vindex_metric(const lt_vindex *vx)
{
	return vx->segments[0]->metric;
}

uint32_t
lt_vindex_dim(const lt_vindex *vx)
{
	return vx->segments[0]->dim;
}

uint32_t
lt_vindex_partitions(const lt_vindex *vx)
{
	return vx->segments[0]->n_partitions;
}

bool
lt_vindex_exact_scores(const lt_vindex *vx)
{
	return lt_ivf_exact_scores(vx->segments[0]);
}

bool
lt_vindex_is_hnsw(const lt_vindex *vx)
{
	return vx->graphs[0] != NULL;
}

bool
lt_vindex_covers(const lt_vindex *vx, uint32_t fragment_id)
{
	for (size_t s = 0; s < vx->n_segments; s++)
		if (u32_in(vx->idx->segments[s].fragments, vx->idx->segments[s].n_fragments, fragment_id))
			return true;
	return false;
}

uint64_t
lt_vindex_covered_rows(const lt_vindex *vx)
{
	uint64_t	n = 0;

	for (size_t i = 0; i < vx->ds->n_fragments; i++)
		if (lt_vindex_covers(vx, (uint32_t) vx->ds->fragments[i]->id))
			n += lt_fragment_live_rows(vx->ds->fragments[i]);
	return n;
}

/* Re-score the candidates (row ids, or scan numbers into seq_ids) on the dataset's own vectors into topk. */
static lt_code
refine(lt_vindex *vx, const lt_knn_query *q, lt_topk *cand, const uint64_t *seq_ids, lt_topk *topk,
	   lt_vsearch_stats *stats, lt_error *err)
{
	uint64_t   *addrs;
	uint32_t   *offsets;
	lt_code		rc = LT_OK;
	size_t		i = 0;

	if (cand->n == 0)
		return LT_OK;
	addrs = lt_malloc(sizeof(uint64_t) * cand->n);
	offsets = lt_malloc(sizeof(uint32_t) * cand->n);
	if (!addrs || !offsets)
	{
		lt_free(addrs);
		lt_free(offsets);
		return lt_nomem(err);
	}
	for (size_t j = 0; j < cand->n; j++)
		addrs[j] = seq_ids ? seq_ids[cand->items[j].addr] : cand->items[j].addr;
	qsort(addrs, cand->n, sizeof(uint64_t), lt_cmp_u64);
	while (rc == LT_OK && i < cand->n)
	{
		uint64_t	frag_id = addrs[i] >> 32;
		size_t		j = i;
		const struct Lt__Pb__DataFragment *f = lt_dataset_fragment(vx->ds, frag_id);

		while (j < cand->n && (addrs[j] >> 32) == frag_id)
		{
			offsets[j - i] = (uint32_t) addrs[j];
			j++;
		}
		if (f == NULL)
			rc = lt_error_set(err, LT_EINVALID, "fragment %llu of a candidate is not in the dataset",
							  (unsigned long long) frag_id);
		else
			rc = lt_knn_fragment(vx->ds, f, q, NULL, offsets, j - i, NULL, topk, &stats->exact, err);
		stats->rows_refined += j - i;
		i = j;
	}
	lt_free(addrs);
	lt_free(offsets);
	return rc;
}

lt_code
lt_vindex_search(lt_vindex *vx, const lt_knn_query *q, const lt_vsearch_params *p, lt_topk *topk,
				 lt_vsearch_stats *stats, lt_error *err)
{
	uint32_t	nprobes = p->nprobes ? p->nprobes : LT_IVF_DEFAULT_NPROBES;
	bool		unindexed = false;
	bool		do_refine;
	uint32_t	factor = p->refine_factor ? p->refine_factor : 1;
	lt_topk		cand = {0};
	lt_topk    *into = topk;
	lt_ivf_seq	seq = {0};
	lt_partheap ph = {0};		/* one partition's rows, as the engine's heap keeps them (no graph) */
	bool		graphs = lt_vindex_is_hnsw(vx);
	float	   *qf = NULL;
	const float *query = q->query;
	lt_code		rc = LT_OK;

	if (q->null_query || (q->kernel == LT_VKERNEL_F64) != (vx->segments[0]->elem == LT_TYPE_FLOAT64) ||
		(q->kernel == LT_VKERNEL_U8) != (vx->segments[0]->elem == LT_TYPE_UINT8))
		return lt_error_set(err, LT_EUNSUPPORTED, "an IVF search of %s vectors takes a %s query",
							lt_type_name(vx->segments[0]->elem),
							vx->segments[0]->elem == LT_TYPE_FLOAT64 ? "float64" :
							vx->segments[0]->elem == LT_TYPE_UINT8 ? "uint8" : "float32");
	if (q->dim != lt_vindex_dim(vx))
		return lt_error_set(err, LT_EINVALID, "different vector dimensions %u and %u", lt_vindex_dim(vx), q->dim);
	if (q->metric != lt_vindex_metric(vx))
		return lt_error_set(err, LT_EINVALID, "a %s search through an index of distance type %s",
							lt_vmetric_name(q->metric), vx->segments[0]->distance_type);
	/* a float64 query: rounded to float32 to route and score the codes, kept to score float64 vectors */
	if (q->kernel == LT_VKERNEL_F64)
	{
		if ((qf = lt_malloc(sizeof(float) * q->dim)) == NULL)
			return lt_nomem(err);
		for (uint32_t i = 0; i < q->dim; i++)
			qf[i] = (float) ((const double *) q->query)[i];
		query = qf;
	}
	/*
	 * Approximate scores are re-ranked on the dataset's vectors when asked, and also when some
	 * fragment is not indexed: the engine then merges the index's k best with the exact search of
	 * those fragments by exact distance.
	 */
	for (size_t i = 0; i < vx->ds->n_fragments && !unindexed; i++)
		unindexed = !lt_vindex_covers(vx, (uint32_t) vx->ds->fragments[i]->id);
	do_refine = (p->refine_factor > 0 || unindexed) && !lt_vindex_exact_scores(vx);
	if (!lt_vindex_exact_scores(vx))
	{
		size_t		k = topk->k > SIZE_MAX / factor ? SIZE_MAX : topk->k * factor;

		if ((rc = lt_topk_init(&cand, do_refine ? k : topk->k, err)) != LT_OK)
		{
			lt_free(qf);
			return rc;
		}
		into = &cand;
	}
	if (!graphs && (rc = lt_partheap_init(&ph, into->k, err)) != LT_OK)
	{
		lt_topk_free(&cand);
		lt_free(qf);
		return rc;
	}
	for (size_t s = 0; rc == LT_OK && s < vx->n_segments; s++)
	{
		lt_ivf	   *ivf = vx->segments[s];
		const lt_index_segment *seg = &vx->idx->segments[s];
		bool		deletions = false;

		/* the engine's search has a prefilter when there is a filter or a covered fragment has deletions */
		for (uint64_t f = 0; f < seg->n_fragments && !deletions; f++)
		{
			const struct Lt__Pb__DataFragment *frag = lt_dataset_fragment(vx->ds, seg->fragments[f]);

			deletions = frag != NULL && lt_fragment_live_rows(frag) != frag->physical_rows;
		}
		ivf->quantize_4bit = p->accept == NULL && !deletions && !unindexed;
		ivf->k_hint = into->k > UINT32_MAX ? UINT32_MAX : (uint32_t) into->k;
		/* a graph's rows rank in scan order (seq); a partition's through its engine heap, by row id */
		ivf->seq = into == &cand && graphs ? &seq : NULL;
		ivf->part_heap = graphs ? NULL : &ph;
		ivf->query64 = q->kernel == LT_VKERNEL_F64 ? q->query : NULL;
		ivf->query_u8 = q->kernel == LT_VKERNEL_U8 ? q->query : NULL;
		/* float16 PQ / RQ: the writer's arithmetic, or the engine asked for (as for HNSW walks) */
		ivf->f16_engine = p->hnsw_engine ? p->hnsw_engine : vx->writers[s];
		accept_state acc = {vx, &vx->idx->segments[s], p, err, LT_OK};

		for (size_t m = 0; m < ACCEPT_MEMO; m++)
			acc.memo[m].id = UINT64_MAX;
		uint32_t	n = lt_ivf_probe(ivf, query, nprobes, vx->parts);

		stats->segments++;
		for (uint32_t i = 0; rc == LT_OK && i < n; i++)
		{
			if (vx->graphs[s])
			{
				/* the engine asks each partition's graph for the candidates it wants (k x refine_factor) */
				uint32_t	k = into->k > UINT32_MAX ? UINT32_MAX : (uint32_t) into->k;

				lt_hnsw_search_as(vx->graphs[s], p->hnsw_engine);
				rc = lt_hnsw_search_partition(vx->graphs[s], vx->parts[i], query, k,
											  p->ef ? p->ef : lt_hnsw_default_ef(k), accept_row, &acc, into,
											  &stats->index_rows_scored, err);
			}
			else
			{
				/* the engine ranks every partition's survivors by distance, then row id */
				ph.n = 0;
				rc = lt_ivf_search_partition(ivf, vx->parts[i], query, q->metric, accept_row, &acc, into,
											 &stats->index_rows_scored, err);
				for (size_t j = 0; j < ph.n; j++)
					lt_topk_push(into, ph.items[j].dist, ph.items[j].id);
			}
			if (rc == LT_OK && acc.rc != LT_OK)
				rc = acc.rc;
			if (rc == LT_OK)
				rc = lt_check_interrupt(err, "searching a vector index");
			stats->partitions_probed++;
		}
		stats->index_rows_rejected += acc.rejected;
	}
	for (size_t s = 0; s < vx->n_segments; s++)
	{
		vx->segments[s]->seq = NULL;
		vx->segments[s]->part_heap = NULL;
		vx->segments[s]->query64 = NULL;
		vx->segments[s]->query_u8 = NULL;
	}
	if (rc == LT_OK && into == &cand)
	{
		lt_topk_finish(&cand);
		if (do_refine)
			rc = refine(vx, q, &cand, graphs ? seq.ids : NULL, topk, stats, err);
		else
			for (size_t i = 0; i < cand.n; i++)
				lt_topk_push(topk, cand.items[i].dist, graphs ? seq.ids[cand.items[i].addr] : cand.items[i].addr);
	}
	lt_topk_free(&cand);
	lt_partheap_free(&ph);
	lt_free(seq.ids);
	lt_free(qf);
	return rc;
}

lt_code
lt_vector_search(lt_dataset *ds, const lt_index *ix, const lt_knn_query *q, const lt_vsearch_params *p,
				 lt_topk *topk, lt_vsearch_stats *stats, lt_error *err)
{
	lt_vindex  *vx = NULL;
	lt_code		rc;

	LT_TRY(lt_vindex_open(ds, ix, &vx, err));
	rc = lt_vindex_search(vx, q, p, topk, stats, err);
	/* the fragments no segment covers: exactly */
	for (size_t i = 0; rc == LT_OK && i < ds->n_fragments; i++)
	{
		if (lt_vindex_covers(vx, (uint32_t) ds->fragments[i]->id))
			continue;
		stats->unindexed_fragments++;
		rc = lt_knn_fragment(ds, ds->fragments[i], q, NULL, NULL, 0, NULL, topk, &stats->exact, err);
	}
	lt_vindex_close(vx);
	return rc;
}
