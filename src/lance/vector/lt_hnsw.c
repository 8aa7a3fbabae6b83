/*
 * lt_hnsw.c — HNSW graphs of IVF_HNSW_* segments (lt_hnsw.h).
 */
#include "vector/lt_hnsw.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/lt_index_file.h"
#include "util/lt_alloc.h"
#include "util/lt_value.h"
#include "vector/lt_vcache.h"

/*
 * One partition's graph and storage, read on first search.  When the per-process cache (lt_vcache.h)
 * keeps it, every array lives in one cache entry (this struct at its start, pointing into it), pinned
 * while the graph is open: later statements take the partition from there instead of the files.
 */
typedef struct hnsw_part
{
	bool		loaded;
	void	   *cached;			/* the pinned entry the arrays live in, or NULL: they are this part's own */
	bool		own_levels;		/* cached, and off and nbr (not what they point to) are this part's own */
	uint32_t	n;				/* nodes (rows of the partition's storage) */
	uint32_t	levels;
	uint64_t   *count;			/* per level: rows (nodes) the level_offsets give it */
	uint32_t  **off;			/* per level: n + 1 offsets into nbr */
	uint32_t  **nbr;			/* per level: the neighbours of every node, node after node */
	uint64_t   *row_ids;		/* n */
	bool	   *row_valid;		/* n: _rowid not null */
	uint8_t    *codes;			/* SQ: n x dim; PQ: as stored (transposed or not) */
} hnsw_part;

struct lt_hnsw
{
	lt_ivf	   *ix;
	lt_store   *store;
	char	   *path;			/* index.idx */
	uint64_t	rows;			/* its rows (the graphs') */
	lt_index_file *xf;			/* index.idx, opened when a partition is not cached (metadata from the cache) */
	const lt_field *id_field;
	const lt_field *nbr_field;
	uint64_t   *graph_start;	/* per partition: its first row in index.idx */
	uint64_t   *graph_len;		/* per partition: its rows (the model's lengths) */
	uint64_t  **level_offsets;	/* per partition: levels + 1 offsets within its rows */
	uint32_t   *entry_point;	/* per partition */
	/*
	 * Graphs whose level_offsets count every row (written by Lance 12; Lance 8 left the entry node out
	 * of the upper levels' counts): searched as that engine searches, from the metadata's entry point
	 * and greedily down to level 1 only; older ones from node 0 and greedily down to level 0.
	 */
	bool		modern;
	bool		file_modern;	/* modern as written (lt_hnsw_search_as 0) */
	uint32_t   *n_offsets;
	hnsw_part  *parts;
};

/* A node scored: the engine's OrderedNode (ordered by the score's total order only). */
typedef struct hnode
{
	float		d;
	uint32_t	id;
} hnode;

/* f32::total_cmp */
static inline int
fcmp(float a, float b)
{
	int32_t		x,
				y;

	memcpy(&x, &a, 4);
	memcpy(&y, &b, 4);
	x ^= (int32_t) (((uint32_t) (x >> 31)) >> 1);
	y ^= (int32_t) (((uint32_t) (y >> 31)) >> 1);
	return (x > y) - (x < y);
}

/*
 * A binary heap moving its elements exactly as Rust's std BinaryHeap does (push, pop, peek,
 * into_sorted_vec), so that elements of equal scores leave it in the engine's order.  min: ordered by
 * Reverse (the smallest on top).
 */
typedef struct heap
{
	hnode	   *v;
	size_t		n;
	size_t		cap;
	bool		min;
} heap;

/* a <= b in the heap's order */
static inline bool
h_le(const heap *h, hnode a, hnode b)
{
	return h->min ? fcmp(b.d, a.d) <= 0 : fcmp(a.d, b.d) <= 0;
}

static void
h_sift_up(heap *h, size_t start, size_t pos)
{
	hnode		e = h->v[pos];

	while (pos > start)
	{
		size_t		parent = (pos - 1) / 2;

		if (h_le(h, e, h->v[parent]))
			break;
		h->v[pos] = h->v[parent];
		pos = parent;
	}
	h->v[pos] = e;
}

static bool
h_push(heap *h, hnode x)
{
	if (h->n == h->cap)
	{
		size_t		cap = h->cap ? 2 * h->cap : 64;
		hnode	   *v = lt_realloc(h->v, sizeof(hnode) * cap);

		if (v == NULL)
			return false;
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n++] = x;
	h_sift_up(h, 0, h->n - 1);
	return true;
}

static hnode
h_pop(heap *h)
{
	hnode		item = h->v[--h->n];

	if (h->n > 0)
	{
		/* sift_down_to_bottom(0), then sift_up */
		hnode		top = h->v[0];
		hnode		e = item;
		size_t		end = h->n,
					pos = 0,
					child = 1;

		item = top;
		while (end >= 2 && child <= end - 2)
		{
			child += h_le(h, h->v[child], h->v[child + 1]) ? 1 : 0;
			h->v[pos] = h->v[child];
			pos = child;
			child = 2 * pos + 1;
		}
		if (child == end - 1)
		{
			h->v[pos] = h->v[child];
			pos = child;
		}
		h->v[pos] = e;
		h_sift_up(h, 0, pos);
	}
	return item;
}

/* into_sorted_vec: h->v ascending in the heap's order (the heap is gone). */
static void
h_sort(heap *h)
{
	size_t		end = h->n;

	while (end > 1)
	{
		hnode		t,
					e;
		size_t		pos = 0,
					child = 1;

		end--;
		t = h->v[0];
		h->v[0] = h->v[end];
		h->v[end] = t;
		/* sift_down_range(0, end) */
		e = h->v[0];
		while (end >= 2 && child <= end - 2)
		{
			child += h_le(h, h->v[child], h->v[child + 1]) ? 1 : 0;
			if (h_le(h, h->v[child], e))	/* element >= child */
				goto placed;
			h->v[pos] = h->v[child];
			pos = child;
			child = 2 * pos + 1;
		}
		if (child == end - 1 && !h_le(h, h->v[child], e))	/* element < child */
		{
			h->v[pos] = h->v[child];
			pos = child;
		}
placed:
		h->v[pos] = e;
	}
}

/* The query's scorer over one partition's codes. */
typedef struct scorer
{
	lt_ivf	   *ix;
	const hnsw_part *part;
	uint8_t    *qcode;			/* SQ */
	const float *q;				/* SQ dot, Lance 12: the float query and its sum */
	float		qsum;
	float		scale;			/* SQ: the engine's factor of a code score */
	uint64_t	scored;
} scorer;

static inline float
score(scorer *s, uint32_t node)
{
	const lt_ivf *ix = s->ix;
	const hnsw_part *pt = s->part;

	s->scored++;
	if (ix->sq.bits && s->q)
		return lt_sq_dot_affine(&ix->sq, s->q, s->qsum, pt->codes + (size_t) node * ix->dim);
	if (ix->sq.bits)
		return lt_sq_code_score(&ix->sq, ix->metric, pt->codes + (size_t) node * ix->dim, s->qcode) * s->scale;
	else
	{
		uint32_t	kc = 1u << ix->pq_bits;
		float		d = 0;

		for (uint32_t j = 0; j < ix->pq_bytes; j++)
		{
			uint8_t		b = ix->pq_transposed ? pt->codes[(size_t) j * pt->n + node] :
				pt->codes[(size_t) node * ix->pq_bytes + j];

			if (ix->pq_bits == 8)
				d += ix->table[(size_t) j * kc + b];
			else
				d += ix->table[(size_t) (2 * j) * kc + (b & 0x0F)] + ix->table[(size_t) (2 * j + 1) * kc + (b >> 4)];
		}
		/* the engine's dot table holds 1 - dot per sub-vector */
		return ix->metric == LT_VMETRIC_NEG_DOT ? d - ((float) ix->pq_m - 1.0f) : d;
	}
}

/* The engine's score in the scale of the metric (lt_vdist). */
static inline double
to_metric(lt_vmetric m, float d)
{
	switch (m)
	{
		case LT_VMETRIC_L2:
			return d > 0 ? sqrt((double) d) : 0;
		case LT_VMETRIC_COSINE:
			/* the squared L2 of normalized vectors: twice the cosine distance */
			return (double) d / 2;
		default:
			/* 1 - dot */
			return (double) d - 1;
	}
}

/*
 * The "level_offsets" arrays of the metadata, in order: one per partition.  The list's elements are
 * JSON strings, so the keys come with escaped quotes.
 */
static lt_code
parse_levels(lt_hnsw *h, const uint8_t *m, size_t len, const char *path, lt_error *err)
{
	const char *key = "level_offsets";
	size_t		kl = strlen(key);
	uint32_t	np = h->ix->n_partitions,
				found = 0;

	for (size_t i = 0; i + kl < len; i++)
	{
		size_t		j,
					cnt = 0;
		uint64_t   *offs;

		if (memcmp(m + i, key, kl) != 0)
			continue;
		if (found == np)
			return lt_corrupt(err, "%s: lance:hnsw holds more graphs than the %u partitions", path, np);
		j = i + kl;
		while (j < len && (m[j] == '\\' || m[j] == '"' || m[j] == ' ' || m[j] == ':'))
			j++;
		if (j >= len || m[j] != '[')
			return lt_corrupt(err, "%s: lance:hnsw level_offsets is not a list", path);
		for (size_t t = j; t < len && m[t] != ']'; t++)
			cnt += m[t] == ',';
		if ((offs = lt_malloc(sizeof(uint64_t) * (cnt + 1))) == NULL)
			return lt_nomem(err);
		h->level_offsets[found] = offs;
		h->n_offsets[found] = 0;
		j++;
		while (j < len && m[j] != ']')
		{
			uint64_t	v = 0;
			size_t		digits = 0;

			while (j < len && m[j] == ' ')
				j++;
			while (j < len && m[j] >= '0' && m[j] <= '9' && digits < 19)
			{
				v = v * 10 + (uint64_t) (m[j++] - '0');
				digits++;
			}
			if (digits == 0 || h->n_offsets[found] > cnt ||
				(h->n_offsets[found] > 0 && v < offs[h->n_offsets[found] - 1]))
				return lt_corrupt(err, "%s: lance:hnsw level_offsets of graph %u are not ascending numbers", path,
								  found);
			offs[h->n_offsets[found]++] = v;
			while (j < len && (m[j] == ' ' || m[j] == ','))
				j++;
		}
		if (j >= len || h->n_offsets[found] == 0 || offs[0] != 0)
			return lt_corrupt(err, "%s: lance:hnsw level_offsets of graph %u do not parse", path, found);
		found++;
		i = j;
	}
	if (found != np)
		return lt_corrupt(err, "%s: lance:hnsw holds %u graphs for %u partitions", path, found, np);
	/* the entry points, in the same order */
	found = 0;
	key = "entry_point";
	kl = strlen(key);
	for (size_t i = 0; i + kl < len && found < np; i++)
	{
		size_t		j;
		uint64_t	v = 0;
		size_t		digits = 0;

		if (memcmp(m + i, key, kl) != 0)
			continue;
		j = i + kl;
		while (j < len && (m[j] == '\\' || m[j] == '"' || m[j] == ' ' || m[j] == ':'))
			j++;
		while (j < len && m[j] >= '0' && m[j] <= '9' && digits < 10)
		{
			v = v * 10 + (uint64_t) (m[j++] - '0');
			digits++;
		}
		if (digits == 0 || v > UINT32_MAX)
			return lt_corrupt(err, "%s: lance:hnsw entry_point of graph %u is not a node number", path, found);
		h->entry_point[found++] = (uint32_t) v;
		i = j;
	}
	if (found != np)
		return lt_corrupt(err, "%s: lance:hnsw holds %u entry points for %u partitions", path, found, np);
	return LT_OK;
}

/*
 * The graphs' metadata as one cache entry: this header, then graph_start, graph_len (uint64_t each),
 * entry_point, n_offsets (uint32_t each) per partition, then every partition's level offsets in turn.
 */
typedef struct hnsw_meta
{
	uint32_t	n_partitions;
	bool		modern;
	uint64_t	rows;
	uint64_t	n_levels;		/* level offsets of all partitions */
} hnsw_meta;

static size_t
meta_bytes(uint32_t np, uint64_t n_levels)
{
	return sizeof(hnsw_meta) + (sizeof(uint64_t) * 2 + sizeof(uint32_t) * 2) * (size_t) np +
		sizeof(uint64_t) * (size_t) n_levels;
}

/* Keep h's metadata (just parsed and checked) in the cache. */
static void
meta_put(lt_hnsw *h)
{
	uint32_t	np = h->ix->n_partitions;
	hnsw_meta	m = {np, h->file_modern, h->rows, 0};
	unsigned char *e,
			   *at;

	if (h->ix->cache_key == NULL)
		return;
	for (uint32_t p = 0; p < np; p++)
		m.n_levels += h->n_offsets[p];
	if ((e = lt_vcache_put(h->ix->cache_key, LT_VCACHE_HNSW, meta_bytes(np, m.n_levels), false)) == NULL)
		return;
	memcpy(e, &m, sizeof(m));
	at = e + sizeof(m);
	memcpy(at, h->graph_start, sizeof(uint64_t) * np);
	at += sizeof(uint64_t) * np;
	memcpy(at, h->graph_len, sizeof(uint64_t) * np);
	at += sizeof(uint64_t) * np;
	memcpy(at, h->entry_point, sizeof(uint32_t) * np);
	at += sizeof(uint32_t) * np;
	memcpy(at, h->n_offsets, sizeof(uint32_t) * np);
	at += sizeof(uint32_t) * np;
	for (uint32_t p = 0; p < np; p++)
	{
		memcpy(at, h->level_offsets[p], sizeof(uint64_t) * h->n_offsets[p]);
		at += sizeof(uint64_t) * h->n_offsets[p];
	}
	lt_vcache_publish(e);
}

/* h's metadata from the cache (copied: h's arrays stay its own); false when not there or out of memory. */
static bool
meta_get(lt_hnsw *h)
{
	uint32_t	np = h->ix->n_partitions;
	unsigned char *e,
			   *at;
	size_t		len;
	hnsw_meta	m;

	if (h->ix->cache_key == NULL || (e = lt_vcache_get(h->ix->cache_key, LT_VCACHE_HNSW, &len, false)) == NULL)
		return false;
	memcpy(&m, e, sizeof(m));
	if (m.n_partitions != np || len != meta_bytes(np, m.n_levels) ||
		(h->graph_len = lt_calloc(np, sizeof(uint64_t))) == NULL)
		return false;
	at = e + sizeof(m);
	memcpy(h->graph_start, at, sizeof(uint64_t) * np);
	at += sizeof(uint64_t) * np;
	memcpy(h->graph_len, at, sizeof(uint64_t) * np);
	at += sizeof(uint64_t) * np;
	memcpy(h->entry_point, at, sizeof(uint32_t) * np);
	at += sizeof(uint32_t) * np;
	memcpy(h->n_offsets, at, sizeof(uint32_t) * np);
	at += sizeof(uint32_t) * np;
	for (uint32_t p = 0; p < np; p++)
	{
		if ((h->level_offsets[p] = lt_malloc(sizeof(uint64_t) * (h->n_offsets[p] ? h->n_offsets[p] : 1))) == NULL)
			return false;
		memcpy(h->level_offsets[p], at, sizeof(uint64_t) * h->n_offsets[p]);
		at += sizeof(uint64_t) * h->n_offsets[p];
	}
	h->modern = h->file_modern = m.modern;
	h->rows = m.rows;
	return true;
}

/* index.idx and its graph columns, on first need (the metadata from the cache: the file it was read from). */
static lt_code
open_file(lt_hnsw *h, lt_error *err)
{
	if (h->xf)
		return LT_OK;
	LT_TRY(lt_index_file_open(h->store, h->path, &h->xf, err));
	if (lt_index_file_rows(h->xf) != h->rows)
		return lt_corrupt(err, "%s: graphs of %llu rows in a file of %llu: not the file its cached metadata was "
						  "read from", h->path, (unsigned long long) h->rows,
						  (unsigned long long) lt_index_file_rows(h->xf));
	LT_TRY(lt_index_file_field(h->xf, "__vector_id", LT_TYPE_UINT32, &h->id_field, err));
	LT_TRY(lt_index_file_field(h->xf, "__neighbors", LT_TYPE_LIST, &h->nbr_field, err));
	if (h->nbr_field->n_children != 1 || h->nbr_field->children[0]->type != LT_TYPE_UINT32)
		return lt_corrupt(err, "%s: column __neighbors is not list<uint32>", h->path);
	return LT_OK;
}

lt_code
lt_hnsw_open(lt_store *store, const char *dir, lt_ivf *ix, lt_hnsw **out, lt_error *err)
{
	lt_hnsw    *h = lt_calloc(1, sizeof(lt_hnsw));
	char	   *path = NULL;
	const uint8_t *m;
	size_t		len;
	uint64_t	at = 0;
	lt_code		rc;

	*out = NULL;
	if (h == NULL)
		return lt_nomem(err);
	h->ix = ix;
	h->store = store;
	if ((path = h->path = lt_asprintf("%sindex.idx", dir)) == NULL ||
		(h->graph_start = lt_calloc(ix->n_partitions, sizeof(uint64_t))) == NULL ||
		(h->level_offsets = lt_calloc(ix->n_partitions, sizeof(uint64_t *))) == NULL ||
		(h->n_offsets = lt_calloc(ix->n_partitions, sizeof(uint32_t))) == NULL ||
		(h->entry_point = lt_calloc(ix->n_partitions, sizeof(uint32_t))) == NULL ||
		(h->parts = lt_calloc(ix->n_partitions, sizeof(hnsw_part))) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	/* the graphs' metadata from the cache: no file opened until a partition is not cached */
	if (meta_get(h))
	{
		*out = h;
		return LT_OK;
	}
	for (uint32_t p = 0; p < ix->n_partitions; p++)
	{
		lt_free(h->level_offsets[p]);
		h->level_offsets[p] = NULL;
	}
	lt_free(h->graph_len);
	h->graph_len = NULL;
	if ((rc = lt_index_file_open(store, path, &h->xf, err)) != LT_OK)
		goto done;
	if ((m = lt_index_file_meta(h->xf, "lance:hnsw", &len)) == NULL)
	{
		rc = lt_corrupt(err, "%s: no lance:hnsw metadata", path);
		goto done;
	}
	if ((rc = parse_levels(h, m, len, path, err)) != LT_OK)
		goto done;
	/*
	 * A partition's rows are what the model says (the engine reads them so); its levels are sliced by
	 * level_offsets as they are written, even where they undercount a level (the engine writes node 0
	 * at every level but counts it at level 0 only): rows past the last offset are never read.
	 */
	if ((h->graph_len = lt_calloc(ix->n_partitions, sizeof(uint64_t))) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	if ((rc = lt_ivf_model_lengths(h->xf, ix->n_partitions, h->graph_len, err)) != LT_OK)
		goto done;
	h->modern = true;
	for (uint32_t p = 0; p < ix->n_partitions; p++)
	{
		const uint64_t *lo = h->level_offsets[p];
		uint32_t	no = h->n_offsets[p];

		if (lo[no - 1] != h->graph_len[p])
			h->modern = false;
		if (h->graph_len[p] > 0 && no >= 2 && h->entry_point[p] >= lo[1])
		{
			rc = lt_corrupt(err, "%s: the entry point %u of partition %u is not one of its %llu nodes", path,
							h->entry_point[p], p, (unsigned long long) lo[1]);
			goto done;
		}
		h->graph_start[p] = at;
		at += h->graph_len[p];
		if (lo[no - 1] > h->graph_len[p] || (h->graph_len[p] > 0 && (no < 2 || lo[1] != ix->part_len[p])))
		{
			rc = lt_corrupt(err, "%s: the graph of partition %u (%llu rows, level 0 of %llu nodes) for %u stored rows",
							path, p, (unsigned long long) h->graph_len[p],
							(unsigned long long) (no < 2 ? 0 : lo[1]), ix->part_len[p]);
			goto done;
		}
	}
	h->file_modern = h->modern;
	h->rows = at;
	if (at != lt_index_file_rows(h->xf))
	{
		rc = lt_corrupt(err, "%s: graphs of %llu rows in a file of %llu", path, (unsigned long long) at,
						(unsigned long long) lt_index_file_rows(h->xf));
		goto done;
	}
	if ((rc = lt_index_file_field(h->xf, "__vector_id", LT_TYPE_UINT32, &h->id_field, err)) != LT_OK ||
		(rc = lt_index_file_field(h->xf, "__neighbors", LT_TYPE_LIST, &h->nbr_field, err)) != LT_OK)
		goto done;
	if (h->nbr_field->n_children != 1 || h->nbr_field->children[0]->type != LT_TYPE_UINT32)
	{
		rc = lt_corrupt(err, "%s: column __neighbors is not list<uint32>", path);
		goto done;
	}
	meta_put(h);
	rc = LT_OK;
done:
	if (rc != LT_OK)
		lt_hnsw_close(h);
	else
		*out = h;
	return rc;
}

void
lt_hnsw_search_as(lt_hnsw *h, int engine)
{
	h->modern = engine == 8 ? false : engine == 12 ? true : h->file_modern;
}

static void
part_free(hnsw_part *pt)
{
	if (pt->cached)
	{
		lt_vcache_unpin(pt->cached);
		if (pt->own_levels)
		{
			lt_free(pt->off);
			lt_free(pt->nbr);
		}
		memset(pt, 0, sizeof(*pt));
		return;
	}
	for (uint32_t l = 0; l < pt->levels; l++)
	{
		if (pt->off)
			lt_free(pt->off[l]);
		if (pt->nbr)
			lt_free(pt->nbr[l]);
	}
	lt_free(pt->off);
	lt_free(pt->nbr);
	lt_free(pt->count);
	lt_free(pt->row_ids);
	lt_free(pt->row_valid);
	lt_free(pt->codes);
	memset(pt, 0, sizeof(*pt));
}

void
lt_hnsw_close(lt_hnsw *h)
{
	if (h == NULL)
		return;
	for (uint32_t p = 0; h->parts && p < h->ix->n_partitions; p++)
		part_free(&h->parts[p]);
	for (uint32_t p = 0; h->level_offsets && p < h->ix->n_partitions; p++)
		lt_free(h->level_offsets[p]);
	if (h->xf)
		lt_index_file_close(h->xf);
	lt_free(h->level_offsets);
	lt_free(h->n_offsets);
	lt_free(h->entry_point);
	lt_free(h->graph_start);
	lt_free(h->graph_len);
	lt_free(h->parts);
	lt_free(h->path);
	lt_free(h);
}

/* One level of partition p's graph (rows [lo, hi) of index.idx) into pt's adjacency of that level. */
static lt_code
load_level(lt_hnsw *h, uint32_t p, hnsw_part *pt, uint32_t l, uint64_t lo, uint64_t hi, lt_error *err)
{
	const char *path = lt_index_file_path(h->xf);
	lt_array   *ids = NULL,
			   *nb = NULL;
	uint64_t	rows = hi - lo;
	const lt_array *vals;
	int64_t    *row_of = NULL;
	lt_code		rc = LT_OK;

	if ((pt->off[l] = lt_calloc((size_t) pt->n + 1, sizeof(uint32_t))) == NULL)
		return lt_nomem(err);
	if (rows == 0)
		return LT_OK;
	if ((rc = lt_index_file_read(h->xf, h->id_field, lo, rows, &ids, err)) != LT_OK ||
		(rc = lt_index_file_read(h->xf, h->nbr_field, lo, rows, &nb, err)) != LT_OK)
		goto done;
	vals = nb->n_children == 1 ? nb->children[0] : NULL;
	if (ids->length != (int64_t) rows || nb->length != (int64_t) rows || vals == NULL || nb->offsets == NULL ||
		nb->offsets[0] < 0 || nb->offsets[rows] > vals->length)
	{
		rc = lt_corrupt(err, "%s: level %u of the graph of partition %u does not have its %llu rows", path, l, p,
						(unsigned long long) rows);
		goto done;
	}
	/* the row of each node at this level (a node twice: the later row, as the engine's load keeps) */
	if ((row_of = lt_malloc(sizeof(int64_t) * pt->n)) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	for (uint32_t i = 0; i < pt->n; i++)
		row_of[i] = -1;
	for (uint64_t r = 0; r < rows; r++)
	{
		uint32_t	node;

		memcpy(&node, ids->values + r * 4, 4);
		if (!lt_array_is_valid(ids, (int64_t) r) || node >= pt->n || nb->offsets[r + 1] < nb->offsets[r])
		{
			rc = lt_corrupt(err, "%s: level %u of the graph of partition %u: row %llu names node %u of %u", path, l,
							p, (unsigned long long) (lo + r), node, pt->n);
			goto done;
		}
		row_of[node] = (int64_t) r;
	}
	for (uint32_t i = 0; i < pt->n; i++)
	{
		int64_t		cnt = row_of[i] < 0 ? 0 : nb->offsets[row_of[i] + 1] - nb->offsets[row_of[i]];

		if ((uint64_t) pt->off[l][i] + (uint64_t) cnt > UINT32_MAX)
		{
			rc = lt_corrupt(err, "%s: level %u of the graph of partition %u has too many edges", path, l, p);
			goto done;
		}
		pt->off[l][i + 1] = pt->off[l][i] + (uint32_t) cnt;
	}
	if ((pt->nbr[l] = lt_malloc(sizeof(uint32_t) * ((size_t) pt->off[l][pt->n] + 1))) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	for (uint32_t i = 0; i < pt->n; i++)
	{
		int64_t		a,
					b;

		if (row_of[i] < 0)
			continue;
		a = nb->offsets[row_of[i]];
		b = nb->offsets[row_of[i] + 1];
		for (int64_t t = a; t < b; t++)
		{
			uint32_t	x;

			memcpy(&x, vals->values + t * 4, 4);
			if (x >= pt->n)
			{
				rc = lt_corrupt(err, "%s: level %u of the graph of partition %u: node %u has neighbour %u of %u", path,
								l, p, i, x, pt->n);
				goto done;
			}
			pt->nbr[l][pt->off[l][i] + (t - a)] = x;
		}
	}
done:
	lt_free(row_of);
	lt_array_free(ids);
	lt_array_free(nb);
	return rc;
}

static size_t
align16(size_t n)
{
	return (n + 15) & ~(size_t) 15;
}

/* Where p (an address in an entry made at from) is in the entry now at e, when bytes from there fit its len; else NULL. */
static unsigned char *
moved(unsigned char *e, size_t len, uintptr_t from, const void *p, size_t bytes)
{
	uintptr_t	at = (uintptr_t) p - from;

	return at <= len && bytes <= len - at ? e + at : NULL;
}

/*
 * pt from entry e (len bytes, pinned): its header's pointers are where the entry was when it was
 * made (c.cached), in this process or another that mapped the same shared file elsewhere
 * (lt_vcache_publish); moved to e, off and nbr copied into arrays of pt's own.  False when a pointer
 * falls outside the entry or out of memory (pt untouched).
 */
static bool
part_relocate(hnsw_part *pt, unsigned char *e, size_t len)
{
	hnsw_part	c;
	uint32_t  **off,
			  **nbr;
	const unsigned char *const *eo,
			   *const *en;
	uintptr_t	from;

	if (len < sizeof(c))
		return false;
	memcpy(&c, e, sizeof(c));
	from = (uintptr_t) c.cached;
#define LT_AT(p, bytes) moved(e, len, from, (p), (bytes))
	if (c.levels == 0 || !LT_AT(c.count, sizeof(uint64_t) * c.levels) ||
		!(eo = (const unsigned char *const *) LT_AT(c.off, sizeof(void *) * c.levels)) ||
		!(en = (const unsigned char *const *) LT_AT(c.nbr, sizeof(void *) * c.levels)) ||
		!LT_AT(c.row_ids, sizeof(uint64_t) * c.n) || !LT_AT(c.row_valid, sizeof(bool) * c.n) ||
		!LT_AT(c.codes, 0))
		return false;
	if ((off = lt_malloc(sizeof(uint32_t *) * c.levels)) == NULL ||
		(nbr = lt_malloc(sizeof(uint32_t *) * c.levels)) == NULL)
	{
		lt_free(off);
		return false;
	}
	for (uint32_t l = 0; l < c.levels; l++)
	{
		off[l] = (uint32_t *) LT_AT(eo[l], sizeof(uint32_t) * ((size_t) c.n + 1));
		nbr[l] = en[l] ? (uint32_t *) LT_AT(en[l], 0) : NULL;
		if (!off[l] || (en[l] && !nbr[l]) ||
			(nbr[l] && (size_t) (e + len - (unsigned char *) nbr[l]) / sizeof(uint32_t) < (size_t) off[l][c.n]))
		{
			lt_free(off);
			lt_free(nbr);
			return false;
		}
	}
	*pt = c;
	pt->cached = e;
	pt->own_levels = true;
	pt->count = (uint64_t *) LT_AT(c.count, 0);
	pt->row_ids = (uint64_t *) LT_AT(c.row_ids, 0);
	pt->row_valid = (bool *) LT_AT(c.row_valid, 0);
	pt->codes = (uint8_t *) LT_AT(c.codes, 0);
	pt->off = off;
	pt->nbr = nbr;
#undef LT_AT
	return true;
}

/* Move partition pt (just read, width bytes of codes a row) into one pinned cache entry; kept as it is if none. */
static void
part_put(lt_hnsw *h, uint32_t p, hnsw_part *pt, size_t width)
{
	size_t		at = align16(sizeof(hnsw_part)),
				len;
	size_t		o_count,
				o_off,
				o_nbr,
				o_ids,
				o_valid,
				o_codes;
	unsigned char *e;
	hnsw_part	c;

	if (h->ix->cache_key == NULL || pt->n == 0)
		return;
	o_count = at;
	at = align16(at + sizeof(uint64_t) * pt->levels);
	o_off = at;
	at = align16(at + sizeof(uint32_t *) * pt->levels);
	o_nbr = at;
	at = align16(at + sizeof(uint32_t *) * pt->levels);
	len = at;
	for (uint32_t l = 0; l < pt->levels; l++)
		len = align16(len + sizeof(uint32_t) * ((size_t) pt->n + 1)) +
			align16(sizeof(uint32_t) * ((size_t) pt->off[l][pt->n] + 1));
	o_ids = len;
	o_valid = align16(o_ids + sizeof(uint64_t) * pt->n);
	o_codes = align16(o_valid + sizeof(bool) * pt->n);
	len = o_codes + (size_t) pt->n * width;
	if ((e = lt_vcache_put(h->ix->cache_key, LT_VCACHE_GRAPH(p), len, true)) == NULL)
		return;
	c = *pt;
	c.cached = e;
	c.count = (uint64_t *) (e + o_count);
	c.off = (uint32_t **) (e + o_off);
	c.nbr = (uint32_t **) (e + o_nbr);
	memcpy(c.count, pt->count, sizeof(uint64_t) * pt->levels);
	for (uint32_t l = 0; l < pt->levels; l++)
	{
		size_t		no = sizeof(uint32_t) * ((size_t) pt->n + 1),
					nn = sizeof(uint32_t) * ((size_t) pt->off[l][pt->n] + 1);

		c.off[l] = (uint32_t *) (e + at);
		memcpy(c.off[l], pt->off[l], no);
		at = align16(at + no);
		/* a level of no rows has no neighbour array (load_level): none in the entry either */
		c.nbr[l] = pt->nbr[l] ? (uint32_t *) (e + at) : NULL;
		if (pt->nbr[l])
			memcpy(c.nbr[l], pt->nbr[l], nn);
		at = align16(at + nn);
	}
	c.row_ids = (uint64_t *) (e + o_ids);
	c.row_valid = (bool *) (e + o_valid);
	c.codes = e + o_codes;
	memcpy(c.row_ids, pt->row_ids, sizeof(uint64_t) * pt->n);
	memcpy(c.row_valid, pt->row_valid, sizeof(bool) * pt->n);
	memcpy(c.codes, pt->codes, (size_t) pt->n * width);
	memcpy(e, &c, sizeof(c));
	lt_vcache_publish(e);		/* the pointers in it are moved by whoever maps it (part_relocate) */
	part_free(pt);
	if (!part_relocate(pt, e, len))
		*pt = c;				/* the entry's own arrays: valid in this process */
}

/* Partition p from the cache (pinned until the graph closes); false when it is not there. */
static bool
part_get(lt_hnsw *h, uint32_t p, hnsw_part *pt)
{
	unsigned char *e;

	size_t		len;

	if (h->ix->cache_key == NULL || (e = lt_vcache_get(h->ix->cache_key, LT_VCACHE_GRAPH(p), &len, true)) == NULL)
		return false;
	if (!part_relocate(pt, e, len))
	{
		lt_vcache_unpin(e);
		return false;
	}
	return true;
}

/* Partition p's graph and its storage rows (ids, codes). */
static lt_code
load_part(lt_hnsw *h, uint32_t p, lt_error *err)
{
	hnsw_part  *pt = &h->parts[p];
	lt_ivf	   *ix = h->ix;
	const uint64_t *lo = h->level_offsets[p];
	lt_array   *ids = NULL,
			   *codes = NULL;
	const lt_field *cf;
	size_t		width = ix->sq.bits ? ix->dim : ix->pq_bytes;
	lt_code		rc = LT_OK;

	part_free(pt);
	pt->n = ix->part_len[p];
	if (h->graph_len[p] == 0 || lo[h->n_offsets[p] - 1] == 0)
	{
		pt->loaded = true;		/* an empty graph answers nothing */
		pt->n = 0;
		return LT_OK;
	}
	pt->levels = h->n_offsets[p] - 1;
	/* the files, when the metadata came from the cache */
	LT_TRY(open_file(h, err));
	LT_TRY(lt_ivf_open_storage(ix, err));
	cf = ix->sq.bits ? ix->sq.field : ix->pq_field;
	if ((pt->off = lt_calloc(pt->levels, sizeof(uint32_t *))) == NULL ||
		(pt->nbr = lt_calloc(pt->levels, sizeof(uint32_t *))) == NULL ||
		(pt->count = lt_calloc(pt->levels, sizeof(uint64_t))) == NULL)
		return lt_nomem(err);
	for (uint32_t l = 0; l < pt->levels; l++)
		pt->count[l] = lo[l + 1] - lo[l];
	for (uint32_t l = 0; rc == LT_OK && l < pt->levels; l++)
		rc = load_level(h, p, pt, l, h->graph_start[p] + lo[l], h->graph_start[p] + lo[l + 1], err);
	if (rc != LT_OK)
		goto done;
	if ((rc = lt_index_file_read(ix->aux, ix->rowid_field, ix->part_start[p], pt->n, &ids, err)) != LT_OK ||
		(rc = lt_index_file_read(ix->aux, cf, ix->part_start[p], pt->n, &codes, err)) != LT_OK)
		goto done;
	if (ids->length != (int64_t) pt->n || codes->length != (int64_t) pt->n || codes->children[0] == NULL ||
		codes->children[0]->length != (int64_t) (pt->n * width))
	{
		rc = lt_corrupt(err, "%s: partition %u does not have its %u rows", lt_index_file_path(ix->aux), p, pt->n);
		goto done;
	}
	if ((pt->row_ids = lt_malloc(sizeof(uint64_t) * pt->n)) == NULL ||
		(pt->row_valid = lt_malloc(sizeof(bool) * pt->n)) == NULL ||
		(pt->codes = lt_malloc(pt->n * width)) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	memcpy(pt->row_ids, ids->values, sizeof(uint64_t) * pt->n);
	for (uint32_t i = 0; i < pt->n; i++)
		pt->row_valid[i] = lt_array_is_valid(ids, i);
	memcpy(pt->codes, codes->children[0]->values, pt->n * width);
	pt->loaded = true;
	part_put(h, p, pt, width);
done:
	lt_array_free(ids);
	lt_array_free(codes);
	if (rc != LT_OK)
		part_free(pt);
	return rc;
}

static inline bool
bit(const uint64_t *bits, uint32_t i)
{
	return (bits[i >> 6] >> (i & 63)) & 1;
}

static inline void
set_bit(uint64_t *bits, uint32_t i)
{
	bits[i >> 6] |= (uint64_t) 1 << (i & 63);
}

/* The engine's flat search of the nodes the prefilter passes: the k best, ascending. */
static bool
flat_search(scorer *s, const uint64_t *pass, uint32_t k, heap *res)
{
	for (uint32_t i = 0; i < s->part->n; i++)
	{
		float		d;

		if (!bit(pass, i))
			continue;
		d = score(s, i);
		if (fcmp(d, -FLT_MAX) <= 0 || fcmp(d, FLT_MAX) > 0)
			continue;
		if (res->n < k)
		{
			if (!h_push(res, (hnode) {d, i}))
				return false;
		}
		else if (k > 0 && fcmp(d, res->v[0].d) < 0)
		{
			(void) h_pop(res);
			(void) h_push(res, (hnode) {d, i});
		}
	}
	h_sort(res);
	return true;
}

/*
 * The engine's graph search: greedy descent from the entry point through the upper levels (modern: the
 * top non-empty level down to level 1; else every level down to 0), then best-first on level 0 with ef.
 */
static bool
graph_search(scorer *s, bool modern, uint32_t entry, const uint64_t *pass, uint32_t ef, uint64_t *visited,
			 uint32_t *scratch, heap *res)
{
	const hnsw_part *pt = s->part;
	hnode		ep = {score(s, entry), entry};
	heap		cand = {NULL, 0, 0, true};
	bool		ok = true;
	uint32_t	top = pt->levels,
				bottom = modern ? 1 : 0;

	if (modern)
		while (top > 0 && pt->count[top - 1] == 0)
			top--;
	for (uint32_t l = top; l-- > bottom;)
	{
		for (;;)
		{
			int64_t		next = -1;

			for (uint32_t t = pt->off[l][ep.id]; t < pt->off[l][ep.id + 1]; t++)
			{
				float		d = score(s, pt->nbr[l][t]);

				if (d < ep.d)
				{
					ep.d = d;
					next = pt->nbr[l][t];
				}
			}
			if (next < 0)
				break;
			ep.id = (uint32_t) next;
		}
	}
	set_bit(visited, ep.id);
	ok = h_push(&cand, ep);
	if (ok && (pass == NULL || bit(pass, ep.id)) && fcmp(ep.d, -FLT_MAX) >= 0 && fcmp(ep.d, FLT_MAX) < 0)
		ok = h_push(res, ep);
	while (ok && cand.n > 0)
	{
		hnode		cur = h_pop(&cand);
		float		furthest = res->n ? res->v[0].d : INFINITY;
		uint32_t	nu = 0;

		if (fcmp(cur.d, furthest) > 0 && res->n == ef)
			break;
		/* the neighbours not visited yet, taken before any is visited */
		for (uint32_t t = pt->off[0][cur.id]; t < pt->off[0][cur.id + 1]; t++)
			if (!bit(visited, pt->nbr[0][t]))
				scratch[nu++] = pt->nbr[0][t];
		for (uint32_t t = 0; ok && t < nu; t++)
		{
			uint32_t	nbr = scratch[t];
			float		d;

			set_bit(visited, nbr);
			d = score(s, nbr);
			/* Lance 12 compares with the furthest result as it is now, Lance 8 as it was before the node */
			if (modern)
				furthest = res->n ? res->v[0].d : INFINITY;
			if (fcmp(d, furthest) <= 0 || res->n < ef)
			{
				if ((pass == NULL || bit(pass, nbr)) && fcmp(d, -FLT_MAX) >= 0 && fcmp(d, FLT_MAX) < 0)
				{
					if (res->n < ef)
						ok = h_push(res, (hnode) {d, nbr});
					else if (res->n == ef && fcmp(d, res->v[0].d) < 0)
					{
						(void) h_pop(res);
						ok = h_push(res, (hnode) {d, nbr});
					}
				}
				if (ok)
					ok = h_push(&cand, (hnode) {d, nbr});
			}
		}
	}
	lt_free(cand.v);
	if (ok)
		h_sort(res);
	return ok;
}

lt_code
lt_hnsw_search_partition(lt_hnsw *h, uint32_t p, const float *q, uint32_t k, uint32_t ef,
						 bool (*accept) (uint64_t row_id, void *arg), void *arg, lt_topk *topk,
						 uint64_t *scored, lt_error *err)
{
	lt_ivf	   *ix = h->ix;
	hnsw_part  *pt;
	scorer		s = {ix, NULL, NULL, NULL, 0, 0, 0};
	uint64_t   *pass = NULL,
			   *visited = NULL;
	uint32_t   *scratch = NULL;
	uint32_t	remained = 0,
				n_out;
	heap		res = {NULL, 0, 0, false};
	float	   *qn = NULL;
	lt_code		rc = LT_OK;

	if (p >= ix->n_partitions)
		return lt_error_set(err, LT_EINVALID, "partition %u of %u", p, ix->n_partitions);
	if (ef < k)
		return lt_error_set(err, LT_EINVALID, "ef %u is less than k %u (the engine's rule)", ef, k);
	if (!h->parts[p].loaded && !part_get(h, p, &h->parts[p]))
		LT_TRY(load_part(h, p, err));
	pt = &h->parts[p];
	s.part = pt;
	if (pt->n == 0 || k == 0)
		return LT_OK;
	if ((pass = lt_calloc(((size_t) pt->n + 63) / 64, 8)) == NULL ||
		(visited = lt_calloc(((size_t) pt->n + 63) / 64, 8)) == NULL ||
		(scratch = lt_malloc(sizeof(uint32_t) * pt->n)) == NULL)
	{
		rc = lt_nomem(err);
		goto done;
	}
	/* the prefilter as the engine's bitset over the partition's nodes */
	for (uint32_t i = 0; i < pt->n; i++)
		if (pt->row_valid[i] && (accept == NULL || accept(pt->row_ids[i], arg)))
		{
			set_bit(pass, i);
			remained++;
		}
	if (ix->sq.bits)
	{
		const float *qq = q;

		if ((s.qcode = lt_malloc(ix->dim)) == NULL || (qn = lt_malloc(sizeof(float) * ix->dim)) == NULL)
		{
			rc = lt_nomem(err);
			goto done;
		}
		if (ix->metric == LT_VMETRIC_COSINE)
		{
			/* cosine: the normalized query, scored as L2 */
			double		norm = 0;

			for (uint32_t i = 0; i < ix->dim; i++)
				norm += (double) q[i] * q[i];
			norm = sqrt(norm);
			for (uint32_t i = 0; i < ix->dim; i++)
				qn[i] = norm > 0 ? (float) (q[i] / norm) : q[i];
			/* a float16 query: normalized in float16 as the engine walking the graphs does */
			if (ix->elem == LT_TYPE_FLOAT16)
				lt_ivf_f16_normalize(q, ix->dim, h->modern ? 12 : 8, qn);
			qq = qn;
		}
		lt_sq_encode(&ix->sq, qq, s.qcode);
		s.scale = lt_sq_scale(&ix->sq, h->modern);
		if (h->modern && ix->metric == LT_VMETRIC_NEG_DOT)
		{
			s.q = q;
			for (uint32_t i = 0; i < ix->dim; i++)
				s.qsum += q[i];
		}
	}
	else
	{
		/* float16 codes: the table in the arithmetic of the engine walking the graphs */
		ix->f16_engine = h->modern ? 12 : 8;
		lt_ivf_pq_table(ix, p, q);
	}
	if (remained < (uint32_t) ((uint64_t) pt->n * 10 / 100))
	{
		if (!flat_search(&s, pass, k, &res))
			rc = lt_nomem(err);
	}
	else if (!graph_search(&s, h->modern, h->modern ? h->entry_point[p] : 0, remained == pt->n ? NULL : pass, ef,
						   visited, scratch, &res))
		rc = lt_nomem(err);
	if (rc != LT_OK)
		goto done;
	/* the first k, each row once */
	n_out = res.n < k ? (uint32_t) res.n : k;
	if ((rc = lt_ivf_seq_reserve(ix, n_out, err)) != LT_OK)
		goto done;
	for (uint32_t i = 0; i < n_out; i++)
	{
		uint64_t	id = pt->row_ids[res.v[i].id];
		bool		dup = false;
		double		d = to_metric(ix->metric, res.v[i].d);

		for (uint32_t j = 0; j < i && !dup; j++)
			dup = pt->row_ids[res.v[j].id] == id;
		if (dup)
			continue;
		lt_ivf_offer(ix, topk, d, id);
	}
done:
	if (scored)
		*scored += s.scored;
	lt_free(res.v);
	lt_free(pass);
	lt_free(visited);
	lt_free(scratch);
	lt_free(s.qcode);
	lt_free(qn);
	return rc;
}
