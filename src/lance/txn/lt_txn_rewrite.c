/*
 * lt_txn_rewrite.c — what a compaction's Rewrite commit does with its groups and the indexes
 * (lt_txn_int.h), as Lance's commit_compaction does:
 *
 * - one RewriteGroup per group of the plan (lt_txn_compaction_group);
 * - a segment whose fragment bitmap holds a group's old fragments (Lance's planner, and lt_compact's,
 *   never mixes covered and uncovered fragments in a group) covers that group's new fragments
 *   instead;
 * - stable row ids: the payloads are row ids, which the moved rows keep, so the segment stays
 *   (same uuid) with only its bitmap recalculated;
 * - row addresses: the payloads move, so the segment is replaced by a new one (new uuid, the old
 *   one named in rewritten_indices) holding the moved rows at their new addresses.  btree, bitmap,
 *   label_list and zonemap: lt_fdw builds the segment again over the fragments it now covers — the
 *   same entries Lance's remap of the old files yields (deleted rows gone, moved rows at their new
 *   address).  IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_SQ, IVF_HNSW_PQ: the old files' rows, partitions,
 *   centroids and vectors or codes (the codebook, the bounds), each row address mapped as the data
 *   moved (lt_ivf_remap; HNSW: each partition's graph built again over the kept rows, as the engine's
 *   remap does); IVF_RQ: the rows, codes (packed again) and factors likewise (lt_rq_remap).  Other
 *   kinds keep their bitmap: the rewritten fragments' rows leave their coverage and are scanned until
 *   the index is optimized or rebuilt.
 */
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

#include <roaring/roaring.h>
#include <stdio.h>
#include <string.h>

#include "index/lt_index.h"
#include "index/lt_index_write.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"
#include "table/lt_roaring.h"
#include "util/lt_alloc.h"
#include "vector/lt_ivf_build.h"
#include "vector/lt_rq_remap.h"

/*
 * The groups (lt_txn_compaction_group): per removed fragment and per fresh one (in the order they
 * were added) its group; without recorded groups, all is one.
 */
static lt_code
assign_groups(const lt_txn *t, const attempt *at, int *old_group, int *new_group, int *n_groups, lt_error *err)
{
	size_t		g = 0,
				left;

	if (t->n_rw_groups == 0)
	{
		for (size_t i = 0; i < at->n_removed; i++)
			old_group[i] = 0;
		for (size_t i = 0; i < at->n_fresh; i++)
			new_group[i] = 0;
		*n_groups = 1;
		return LT_OK;
	}
	for (size_t i = 0; i < at->n_removed; i++)
	{
		old_group[i] = -1;
		for (size_t k = 0; k < t->n_rw_old && old_group[i] < 0; k++)
			if (t->rw_old[k] == at->removed[i])
				old_group[i] = (int) t->rw_old_group[k];
		if (old_group[i] < 0)
			return lt_error_set(err, LT_EINVALID, "fragment %llu of %s is removed by no compaction group",
								(unsigned long long) at->removed[i], t->name);
	}
	left = t->rw_new[0];
	for (size_t i = 0; i < at->n_fresh; i++)
	{
		while (left == 0 && g + 1 < t->n_rw_groups)
			left = t->rw_new[++g];
		if (left == 0)
			return lt_error_set(err, LT_EINVALID, "%s adds more fragments than its compaction groups", t->name);
		new_group[i] = (int) g;
		left--;
	}
	*n_groups = (int) t->n_rw_groups;
	return LT_OK;
}

static void
format_uuid(const Lt__Pb__Uuid *u, char out[37])
{
	const uint8_t *b = u && u->uuid.len == 16 ? u->uuid.data : NULL;

	if (!b)
	{
		out[0] = '\0';
		return;
	}
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * The row mapping of the rewrite (for payloads that are row addresses): a row of an old fragment
 * moved to the k-th live row of its group, which is in the group's new fragments in order.
 */
typedef struct row_map
{
	const attempt *at;
	const int  *old_group,
			   *new_group;
	const int  *cov;			/* per group: does the segment being remapped cover it */
	roaring_bitmap_t **dv;		/* per removed fragment: its deleted rows (NULL: none) */
	uint64_t   *live_before;	/* per removed fragment: live rows of its group's earlier old fragments */
	uint64_t   *fresh_start;	/* per fresh fragment: its first row's position in its group */
	bool		ready;
} row_map;

static lt_code
row_map_make(lt_dataset *base, attempt *at, const int *old_group, const int *new_group, int n_groups, row_map *rm,
			 lt_error *err)
{
	uint64_t   *run = lt_calloc((size_t) n_groups + 1, sizeof(uint64_t));

	rm->at = at;
	rm->old_group = old_group;
	rm->new_group = new_group;
	rm->dv = lt_calloc(at->n_removed + 1, sizeof(roaring_bitmap_t *));
	rm->live_before = lt_calloc(at->n_removed + 1, sizeof(uint64_t));
	rm->fresh_start = lt_calloc(at->n_fresh + 1, sizeof(uint64_t));
	if (!run || !rm->dv || !rm->live_before || !rm->fresh_start)
	{
		lt_free(run);
		return lt_nomem(err);
	}
	/* old fragments in ascending id order: the order lt_compact copies a group's rows in */
	for (size_t i = 0; i < at->n_removed; i++)
	{
		const Lt__Pb__DataFragment *f = lt_dataset_fragment(base, at->removed[i]);
		uint64_t	deleted = 0;
		lt_code		rc;

		if (!f)
		{
			lt_free(run);
			return lt_error_set(err, LT_ECONFLICT, "fragment %llu was removed concurrently",
								(unsigned long long) at->removed[i]);
		}
		if (f->deletion_file)
		{
			if ((rc = lt_txn_load_dv(base, f, &rm->dv[i], err)) != LT_OK)
			{
				lt_free(run);
				return rc;
			}
			deleted = roaring_bitmap_get_cardinality(rm->dv[i]);
		}
		rm->live_before[i] = run[old_group[i]];
		run[old_group[i]] += f->physical_rows - deleted;
	}
	memset(run, 0, ((size_t) n_groups + 1) * sizeof(uint64_t));
	for (size_t i = 0; i < at->n_fresh; i++)
	{
		rm->fresh_start[i] = run[new_group[i]];
		run[new_group[i]] += at->fresh[i]->physical_rows;
	}
	lt_free(run);
	rm->ready = true;
	return LT_OK;
}

static void
row_map_free(row_map *rm)
{
	for (size_t i = 0; rm->dv && i < rm->at->n_removed; i++)
		if (rm->dv[i])
			roaring_bitmap_free(rm->dv[i]);
	lt_free(rm->dv);
	lt_free(rm->live_before);
	lt_free(rm->fresh_start);
}

/* lt_ivf_remap_fn: where an old row address went; false when the row is gone (deleted, or never covered) */
static bool
row_map_apply(void *arg, uint64_t old, uint64_t *to)
{
	const row_map *rm = arg;
	const attempt *at = rm->at;
	uint64_t	frag = old >> 32;
	uint32_t	off = (uint32_t) old;
	size_t		lo = 0,
				hi = at->n_removed;
	uint64_t	pos;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (at->removed[mid] < frag)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == at->n_removed || at->removed[lo] != frag)
	{
		*to = old;				/* not rewritten */
		return true;
	}
	if (!rm->cov[rm->old_group[lo]] || (rm->dv[lo] && roaring_bitmap_contains(rm->dv[lo], off)))
		return false;
	pos = rm->live_before[lo] + off - (rm->dv[lo] ? roaring_bitmap_rank(rm->dv[lo], off) : 0);
	for (size_t j = 0; j < at->n_fresh; j++)
		if (rm->new_group[j] == rm->old_group[lo] && pos >= rm->fresh_start[j] &&
			pos < rm->fresh_start[j] + at->fresh[j]->physical_rows)
		{
			*to = (at->fresh[j]->id << 32) | (pos - rm->fresh_start[j]);
			return true;
		}
	return false;
}

static bool
is_vector(const Lt__Pb__IndexMetadata *m)
{
	const char *url = m->index_details && m->index_details->type_url ? m->index_details->type_url : "";
	size_t		n = strlen(url),
				k = strlen("VectorIndexDetails");

	return n >= k && strcmp(url + n - k, "VectorIndexDetails") == 0;
}

static lt_code
keep_built(lt_rewrite_out *out, lt_built_index *b, lt_error *err)
{
	lt_built_index **p = lt_realloc(out->built, (out->n_built + 1) * sizeof(*p));

	if (!p)
		return lt_nomem(err);
	out->built = p;
	out->built[out->n_built++] = b;
	return LT_OK;
}

/* The segment m as it is after the rewrite (a copy in the arena, or m when nothing changes). */
static lt_code
rewrite_segment(lt_txn *t, lt_dataset *base, attempt *at, const lt_index_list *il, Lt__Pb__IndexMetadata *m,
				int n_groups, const int *old_group, const int *new_group, row_map *rm, lt_rewrite_out *out,
				Lt__Pb__IndexMetadata **res, lt_error *err)
{
	uint32_t   *ids = NULL;
	uint64_t	n_ids = 0;
	int		   *cov;			/* per group: covered old fragments, or -1 when some are not */
	bool		any = false;
	roaring_bitmap_t *rb = NULL;
	Lt__Pb__IndexMetadata *copy;
	lt_code		rc = LT_OK;

	*res = m;
	if (!m->has_fragment_bitmap)
		return LT_OK;
	LT_TRY(lt_roaring_decode_array(m->fragment_bitmap.data, m->fragment_bitmap.len, UINT32_MAX, &ids, &n_ids,
								   NULL, err));
	if (!(cov = lt_calloc((size_t) n_groups + 1, sizeof(int))) || !(rb = roaring_bitmap_of_ptr(n_ids, ids)))
	{
		lt_free(ids);
		lt_free(cov);
		return lt_nomem(err);
	}
	lt_free(ids);
	for (size_t i = 0; i < at->n_removed; i++)
		if (roaring_bitmap_contains(rb, (uint32_t) at->removed[i]))
			cov[old_group[i]]++;
	for (size_t i = 0; i < at->n_removed && rc == LT_OK; i++)
	{
		int			g = old_group[i];

		if (cov[g] > 0 && !roaring_bitmap_contains(rb, (uint32_t) at->removed[i]))
			rc = lt_error_set(err, LT_ECONFLICT,
							  "index \"%s\" of %s covers only some of the fragments a compaction group rewrites",
							  m->name ? m->name : "", t->name);
		any |= cov[g] > 0;
	}
	if (rc != LT_OK || !any)
		goto done;
	/* the bitmap: the covered groups' old fragments out, their new ones in */
	for (size_t i = 0; i < at->n_removed; i++)
		if (cov[old_group[i]] > 0)
			roaring_bitmap_remove(rb, (uint32_t) at->removed[i]);
	for (size_t i = 0; i < at->n_fresh; i++)
		if (cov[new_group[i]] > 0)
			roaring_bitmap_add(rb, (uint32_t) at->fresh[i]->id);
	if (!(copy = lt_txn_arena_alloc(&at->a, sizeof(*copy))))
	{
		rc = lt_nomem(err);
		goto done;
	}
	*copy = *m;
	if (!base->stable_row_ids)
	{
		char		uuid[37];
		const lt_index *ix = NULL;
		lt_index_build_options bo = {0};
		lt_built_index *b;
		Lt__Pb__DataFragment **frags = NULL;
		size_t		n = 0;
		Lt__Pb__Uuid *nu;
		Lt__Pb__IndexFile *files, **fptr;
		Lt__Pb__Transaction__RewrittenIndex *ri;
		const lt_index_segment *seg = NULL;

		format_uuid(m->uuid, uuid);
		for (size_t i = 0; i < il->n && !ix; i++)
			for (size_t s = 0; s < il->items[i].n_segments && !ix; s++)
				if (strcmp(il->items[i].segments[s].uuid, uuid) == 0)
				{
					ix = &il->items[i];
					seg = &il->items[i].segments[s];
				}
		if (!ix || !ix->field || (is_vector(m) && seg->has_base) ||
			(!is_vector(m) && (ix->unusable || ix->kind == LT_INDEX_UNKNOWN)))
		{
			/* a kind lt_fdw cannot remap: the rewritten rows leave its coverage */
			goto done;
		}
		if (!(b = lt_calloc(1, sizeof(*b))))
		{
			rc = lt_nomem(err);
			goto done;
		}
		if (is_vector(m))
		{
			/* IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_*, IVF_RQ: the same partitions and vectors or codes, the row addresses moved */
			char	   *dir = lt_index_segment_dir(base, seg);

			rm->cov = cov;
			if (!dir)
				rc = lt_nomem(err);
			else if (!rm->ready)
				rc = row_map_make(base, at, old_group, new_group, n_groups, rm, err);
			if (rc == LT_OK)
				rc = lt_ivf_remap(base, ix->field, m->name, dir, row_map_apply, rm, b, err);
			if (rc == LT_EUNSUPPORTED)
				rc = lt_rq_remap(base, ix->field, m->name, dir, row_map_apply, rm, b, err);
			lt_free(dir);
			if (rc == LT_EUNSUPPORTED)
			{
				/* other storages (IVF_HNSW_FLAT, ...): the rewritten rows leave its coverage */
				lt_free(b);
				rc = LT_OK;
				goto done;
			}
		}
		else
		{
			/* the fragments it covers now, as the new version has them (ascending ids) */
			if (!(frags = lt_txn_arena_alloc(&at->a, (at->n_frags + 1) * sizeof(*frags))))
				rc = lt_nomem(err);
			for (size_t i = 0; rc == LT_OK && i < at->n_frags; i++)
				if (roaring_bitmap_contains(rb, (uint32_t) at->frags[i]->id))
					frags[n++] = at->frags[i];
			bo.kind = ix->kind;
			bo.name = m->name;
			bo.fragments = frags;
			bo.n_fragments = n;
			if (rc == LT_OK)
				rc = lt_index_build(base, ix->field, &bo, b, err);
		}
		if (rc != LT_OK)
		{
			lt_free(b);
			goto done;
		}
		if ((rc = keep_built(out, b, err)) != LT_OK)
		{
			lt_built_index_remove(base, b);
			lt_built_index_clear(b);
			lt_free(b);
			goto done;
		}
		nu = lt_txn_arena_alloc(&at->a, sizeof(*nu));
		files = lt_txn_arena_alloc(&at->a, (b->n_files + 1) * sizeof(*files));
		fptr = lt_txn_arena_alloc(&at->a, (b->n_files + 1) * sizeof(*fptr));
		ri = lt_txn_arena_alloc(&at->a, sizeof(*ri));
		if (!nu || !files || !fptr || !ri)
		{
			rc = lt_nomem(err);
			goto done;
		}
		lt__pb__uuid__init(nu);
		nu->has_uuid = true;
		nu->uuid.data = b->uuid;
		nu->uuid.len = 16;
		for (size_t k = 0; k < b->n_files; k++)
		{
			lt__pb__index_file__init(&files[k]);
			files[k].path = b->files[k];
			files[k].has_size_bytes = true;
			files[k].size_bytes = b->file_sizes[k];
			fptr[k] = &files[k];
		}
		copy->uuid = nu;
		copy->n_files = b->n_files;
		copy->files = fptr;
		/* the transaction names the old segment and its replacement, as Lance's remap does */
		lt__pb__transaction__rewritten_index__init(ri);
		ri->old_id = m->uuid;
		ri->new_id = nu;
		ri->new_index_details = m->index_details;
		ri->has_new_index_version = m->has_index_version;
		ri->new_index_version = (uint32_t) (m->has_index_version ? m->index_version : 0);
		ri->n_new_index_files = b->n_files;
		ri->new_index_files = fptr;
		{
			Lt__Pb__Transaction__RewrittenIndex **p = lt_txn_arena_alloc(&at->a, (out->n_rewritten + 1) * sizeof(*p));

			if (!p)
			{
				rc = lt_nomem(err);
				goto done;
			}
			if (out->n_rewritten)
				memcpy(p, out->rewritten, out->n_rewritten * sizeof(*p));
			p[out->n_rewritten++] = ri;
			out->rewritten = p;
		}
	}
	{
		size_t		len = roaring_bitmap_portable_size_in_bytes(rb);
		uint8_t    *buf = lt_txn_arena_alloc(&at->a, len ? len : 1);

		if (!buf)
		{
			rc = lt_nomem(err);
			goto done;
		}
		roaring_bitmap_portable_serialize(rb, (char *) buf);
		copy->has_fragment_bitmap = true;
		copy->fragment_bitmap.data = buf;
		copy->fragment_bitmap.len = len;
	}
	*res = copy;
done:
	roaring_bitmap_free(rb);
	lt_free(cov);
	return rc;
}

lt_code
lt_txn_rewrite_plan(lt_txn *t, lt_dataset *base, attempt *at, Lt__Pb__IndexSection *sec, lt_rewrite_out *out,
					lt_error *err)
{
	int			n_groups = 0;
	int		   *old_group, *new_group;
	lt_index_list *il = NULL;
	row_map		rm = {0};
	lt_code		rc = LT_OK;

	memset(out, 0, sizeof(*out));
	out->indexes = sec;
	old_group = lt_txn_arena_alloc(&at->a, (at->n_removed + 1) * sizeof(int));
	new_group = lt_txn_arena_alloc(&at->a, (at->n_fresh + 1) * sizeof(int));
	if (!old_group || !new_group)
		return lt_nomem(err);
	LT_TRY(assign_groups(t, at, old_group, new_group, &n_groups, err));
	if (!(out->groups = lt_txn_arena_alloc(&at->a, ((size_t) n_groups + 1) * sizeof(*out->groups))))
		return lt_nomem(err);

	/* the groups: their old fragments as the base has them, their new ones */
	for (int g = 0; g < n_groups; g++)
	{
		Lt__Pb__Transaction__RewriteGroup *rg = lt_txn_arena_alloc(&at->a, sizeof(*rg));

		if (!rg)
			return lt_nomem(err);
		lt__pb__transaction__rewrite_group__init(rg);
		rg->old_fragments = lt_txn_arena_alloc(&at->a, (at->n_removed + 1) * sizeof(Lt__Pb__DataFragment *));
		rg->new_fragments = lt_txn_arena_alloc(&at->a, (at->n_fresh + 1) * sizeof(Lt__Pb__DataFragment *));
		if (!rg->old_fragments || !rg->new_fragments)
			return lt_nomem(err);
		for (size_t i = 0; i < at->n_removed; i++)
			if (old_group[i] == g)
			{
				const Lt__Pb__DataFragment *f = lt_dataset_fragment(base, at->removed[i]);

				if (!f)
					return lt_error_set(err, LT_ECONFLICT, "fragment %llu of %s was removed concurrently",
										(unsigned long long) at->removed[i], t->name);
				rg->old_fragments[rg->n_old_fragments++] = (Lt__Pb__DataFragment *) f;
			}
		for (size_t i = 0; i < at->n_fresh; i++)
			if (new_group[i] == g)
				rg->new_fragments[rg->n_new_fragments++] = at->fresh[i];
		if (rg->n_old_fragments || rg->n_new_fragments)
			out->groups[out->n_groups++] = rg;
	}

	if (!sec || sec->n_indices == 0)
		return LT_OK;
	if (!base->stable_row_ids)
		LT_TRY(lt_dataset_indexes(base, &il, err));
	{
		Lt__Pb__IndexSection *copy = lt_txn_arena_alloc(&at->a, sizeof(*copy));
		Lt__Pb__IndexMetadata **arr = lt_txn_arena_alloc(&at->a, sec->n_indices * sizeof(*arr));

		if (!copy || !arr)
			rc = lt_nomem(err);
		for (size_t i = 0; rc == LT_OK && i < sec->n_indices; i++)
		{
			rc = lt_check_interrupt(err, "remapping indexes");
			if (rc == LT_OK)
				rc = rewrite_segment(t, base, at, il, sec->indices[i], n_groups, old_group, new_group, &rm, out,
									 &arr[i], err);
		}
		if (rc == LT_OK)
		{
			*copy = *sec;
			copy->indices = arr;
			out->indexes = copy;
		}
	}
	lt_index_list_free(il);
	if (rm.ready || rm.dv)
		row_map_free(&rm);
	if (rc != LT_OK)
		lt_txn_rewrite_done(base, out, false);
	return rc;
}

void
lt_txn_rewrite_done(lt_dataset *base, lt_rewrite_out *out, bool committed)
{
	for (size_t i = 0; i < out->n_built; i++)
	{
		if (!committed)
			lt_built_index_remove(base, out->built[i]);
		lt_built_index_clear(out->built[i]);
		lt_free(out->built[i]);
	}
	lt_free(out->built);
	out->built = NULL;
	out->n_built = 0;
}
