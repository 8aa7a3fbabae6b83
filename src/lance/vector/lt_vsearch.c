/*
 * lt_vsearch.c — vector search through an IVF index (lt_vsearch.h).
 */
#include "vector/lt_vsearch.h"

#include <stdlib.h>
#include <string.h>

#include "proto/lt_table.pb-c.h"
#include "table/lt_scan.h"
#include "util/lt_alloc.h"
#include "vector/lt_ivf.h"

typedef struct accept_state
{
	lt_dataset *ds;
	const lt_index_segment *seg;
	lt_error   *err;
	lt_code		rc;
	/* the deleted offsets of the last fragment looked at */
	uint64_t	frag_id;
	bool		have_frag;
	bool		frag_live;		/* in the dataset and in the segment */
	uint32_t   *deleted;
	uint64_t	n_deleted;
} accept_state;

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

/* A row id of the index is returned when its fragment is live, covered by the segment, and it is not deleted. */
static bool
accept_row(uint64_t id, void *arg)
{
	accept_state *a = arg;
	uint64_t	frag = id >> 32;

	if (a->rc != LT_OK)
		return false;
	if (!a->have_frag || a->frag_id != frag)
	{
		const struct Lt__Pb__DataFragment *f = frag <= UINT32_MAX ? lt_dataset_fragment(a->ds, frag) : NULL;

		lt_free(a->deleted);
		a->deleted = NULL;
		a->n_deleted = 0;
		a->have_frag = true;
		a->frag_id = frag;
		a->frag_live = f != NULL && u32_in(a->seg->fragments, a->seg->n_fragments, (uint32_t) frag);
		if (a->frag_live && (a->rc = lt_fragment_deleted_offsets(a->ds, f, &a->deleted, &a->n_deleted, a->err)) != LT_OK)
			return false;
	}
	return a->frag_live && !u32_in(a->deleted, a->n_deleted, (uint32_t) id);
}

lt_code
lt_vector_search(lt_dataset *ds, const lt_index *ix, const lt_knn_query *q, uint32_t nprobes, lt_topk *topk,
				 lt_vsearch_stats *stats, lt_error *err)
{
	uint32_t   *parts = NULL;
	lt_code		rc = LT_OK;

	if (q->kernel != LT_VKERNEL_F32)
		return lt_error_set(err, LT_EUNSUPPORTED, "an IVF search takes a float32 query");
	if (ds->stable_row_ids)
		return lt_error_set(err, LT_EUNSUPPORTED, "IVF search of a dataset with stable row ids");
	if (nprobes == 0)
		nprobes = LT_IVF_DEFAULT_NPROBES;
	for (size_t s = 0; rc == LT_OK && s < ix->n_segments; s++)
	{
		const lt_index_segment *seg = &ix->segments[s];
		char	   *dir = lt_index_segment_dir(ds, seg);
		lt_ivf	   *ivf = NULL;
		accept_state acc = {ds, seg, err, LT_OK};
		uint32_t	n;

		if (dir == NULL)
			return lt_nomem(err);
		rc = lt_ivf_open(ds->store, dir, true, &ivf, err);
		lt_free(dir);
		if (rc != LT_OK)
			break;
		if (ivf->dim != q->dim)
		{
			rc = lt_error_set(err, LT_EINVALID, "different vector dimensions %u and %u", ivf->dim, q->dim);
			lt_ivf_close(ivf);
			break;
		}
		lt_free(parts);
		if ((parts = lt_malloc(sizeof(uint32_t) * ivf->n_partitions)) == NULL)
		{
			lt_ivf_close(ivf);
			return lt_nomem(err);
		}
		n = lt_ivf_probe(ivf, q->query, nprobes, parts);
		stats->segments++;
		for (uint32_t i = 0; rc == LT_OK && i < n; i++)
		{
			rc = lt_ivf_search_partition(ivf, parts[i], q->query, q->metric, accept_row, &acc, topk,
										 &stats->index_rows_scored, err);
			if (rc == LT_OK && acc.rc != LT_OK)
				rc = acc.rc;
			stats->partitions_probed++;
		}
		lt_free(acc.deleted);
		lt_ivf_close(ivf);
	}
	lt_free(parts);
	/* the fragments no segment covers: exactly */
	for (size_t i = 0; rc == LT_OK && i < ds->n_fragments; i++)
	{
		uint32_t	id = (uint32_t) ds->fragments[i]->id;
		bool		covered = false;

		for (size_t s = 0; s < ix->n_segments && !covered; s++)
			covered = u32_in(ix->segments[s].fragments, ix->segments[s].n_fragments, id);
		if (covered)
			continue;
		stats->unindexed_fragments++;
		rc = lt_knn_fragment(ds, ds->fragments[i], q, NULL, NULL, 0, NULL, topk, &stats->exact, err);
	}
	return rc;
}
