/*
 * test_ivf_build.c — src/lance/vector/lt_ivf_build.c on a copy of test/data/vectors (vec: float32 x 4,
 * NULL every 40th row, 266 live rows of which 7 NULL): the segment it writes reads back through
 * lt_ivf.h (IVF_FLAT, the metric, every live non-NULL vector once, in the partition of its nearest
 * centroid); probing every partition ranks as exact kNN does; the same seed gives the same
 * centroids; cosine stores unit vectors; every phase reports progress; bad options, an unfit column and a cancel are errors that
 * leave no file behind.  IVF_PQ (8- and 4-bit) and IVF_SQ builds read back as such, their search through every
 * partition finds most of the exact top 15 (the seed makes the share a fixed number), the same seed gives the same
 * codebook, and PQ parameters that do not fit the vectors are errors that leave no file behind; a compaction's
 * remap keeps centroids, partitions and vectors and moves only the row ids (dropping the rows the map says are gone);
 * for IVF_PQ (8- and 4-bit), IVF_SQ, IVF_HNSW_SQ and IVF_HNSW_PQ it keeps the quantizer and each kept row's partition and
 * code (HNSW: graphs built again over the kept rows, the old m and ef_construction, reaching every kept row);
 * IVF_HNSW_SQ: reads back as such through lt_hnsw.h, its graph search through every partition finds most of the
 * exact top 15 under both engines' walks, the same seed writes the same files, the graph phase reports progress
 * and a cancel in it leaves no file, an m out of range is an error.
 * float16 vectors (v16): IVF_FLAT, IVF_SQ, IVF_HNSW_SQ keep float16 centroids and flat vectors and find the exact
 * neighbours; PQ over them, and hamming over float vectors, are errors.  One search helper (search_hits) serves
 * every kind.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* memmem */
#endif
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "unit.h"

#include "io/lt_store.h"
#include "table/lt_dataset.h"
#include "index/lt_index_file.h"
#include "vector/lt_hnsw.h"
#include "vector/lt_vcache.h"
#include "vector/lt_ivf.h"
#include "vector/lt_ivf_build.h"
#include "vector/lt_knn.h"
#include "vector/lt_topk.h"
#include "vector/lt_vdist.h"

static lt_error err;
static char work[256];

static lt_dataset *
open_copy(lt_store **store)
{
	lt_version_spec spec = {0};
	lt_dataset *ds = NULL;
	char		cmd[1024];

	snprintf(work, sizeof(work), "/tmp/lt-unit-ivfb.XXXXXX");
	CHECK(mkdtemp(work) != NULL);
	snprintf(cmd, sizeof(cmd), "cp -r '%s/vectors/.' '%s/'", unit_data_dir(), work);
	CHECK_EQ_INT(system(cmd), 0);
	CHECK_OK(lt_store_local_open(work, store, &err), err);
	if (*store)
		CHECK_OK(lt_dataset_open(*store, "", &spec, &ds, &err), err);
	return ds;
}

static void
close_copy(lt_dataset *ds, lt_store *store)
{
	char		cmd[512];

	lt_dataset_close(ds);
	lt_store_close(store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	CHECK_EQ_INT(system(cmd), 0);
}

static bool
file_exists(const lt_built_index *b, const char *name)
{
	char		path[512];

	snprintf(path, sizeof(path), "%s/_indices/%s/%s", work, b->uuid_text, name);
	return access(path, F_OK) == 0;
}

static bool
always_interrupted(void)
{
	return true;
}

/* progress reports seen: per phase the count and the last (done, total) */
static struct
{
	int			calls;
	uint64_t	done,
				total;
} seen[6];

static void
record_progress(void *arg, lt_ivf_build_phase phase, uint64_t done, uint64_t total)
{
	(void) arg;
	CHECK(phase >= LT_IVF_PHASE_READ && phase <= LT_IVF_PHASE_GRAPH);
	if (phase < LT_IVF_PHASE_READ || phase > LT_IVF_PHASE_GRAPH)
		return;
	CHECK(done <= total);
	seen[phase].calls++;
	seen[phase].done = done;
	seen[phase].total = total;
}

/* The segment b wrote, with its storage. */
static lt_ivf *
open_built(lt_dataset *ds, const lt_built_index *b)
{
	char		dir[128];
	lt_ivf	   *ivf = NULL;

	snprintf(dir, sizeof(dir), "_indices/%s/", b->uuid_text);
	CHECK_OK(lt_ivf_open(ds->store, dir, true, &ivf, &err), err);
	return ivf;
}

/*
 * Of 8 random queries' exact top 15 (kNN over column vec of dim elements; queries' elements within +-span, the
 * data's range), how
 * many the segment's search through every partition finds: the IVF storage's (lt_ivf_search_partition, which
 * scores every stored row), or the graphs' when h is set (ef 40).  *same_order (when given): whether every answer was the exact one, in order.
 */
static int
search_hits(lt_dataset *ds, const lt_field *vec, uint32_t dim, int span, lt_ivf *ivf, lt_hnsw *h, lt_vmetric m,
			uint64_t *s, bool *same_order)
{
	int			hits = 0;

	if (same_order)
		*same_order = true;
	for (int rep = 0; rep < 8; rep++)
	{
		float		q[4];
		lt_knn_query kq = {vec, m, LT_VKERNEL_F32, q, dim, false};
		lt_topk		a,
					e;
		lt_knn_stats ks = {0};
		uint64_t	scored = 0;

		for (uint32_t i = 0; i < dim; i++)
			q[i] = (float) ((int) (unit_xorshift(s) % (2 * span + 1)) - span);
		CHECK_OK(lt_topk_init(&a, 15, &err), err);
		CHECK_OK(lt_topk_init(&e, 15, &err), err);
		for (uint32_t p = 0; p < ivf->n_partitions; p++)
		{
			if (h)
				CHECK_OK(lt_hnsw_search_partition(h, p, q, 15, 40, NULL, NULL, &a, &scored, &err), err);
			else
				CHECK_OK(lt_ivf_search_partition(ivf, p, q, m, NULL, NULL, &a, &scored, &err), err);
		}
		CHECK_OK(lt_knn_dataset(ds, &kq, NULL, &e, &ks, &err), err);
		lt_topk_finish(&a);
		lt_topk_finish(&e);
		/* the storage scores every row of every partition; a graph walk fewer */
		if (h)
			CHECK(scored > 0);
		else
		{
			uint64_t	rows = 0;

			for (uint32_t p = 0; p < ivf->n_partitions; p++)
				rows += ivf->part_len[p];
			CHECK_EQ_INT(scored, rows);
		}
		for (size_t i = 0; i < a.n; i++)
			for (size_t j = 0; j < e.n; j++)
				if (a.items[i].addr == e.items[j].addr)
					hits++;
		if (same_order && (a.n != 15 || e.n != 15))
			*same_order = false;
		for (size_t i = 0; same_order && i < a.n && i < e.n; i++)
			if (a.items[i].addr != e.items[i].addr)
				*same_order = false;
		lt_topk_free(&a);
		lt_topk_free(&e);
	}
	return hits;
}

/* Flip the last byte of every cache file in dir (an entry's data); how many. */
static int
flip_last_bytes(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	int			n = 0;

	while (d && (de = readdir(d)) != NULL)
	{
		char		path[512];
		unsigned char c;
		struct stat st;
		int			fd;

		if (strstr(de->d_name, ".ltvc") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((fd = open(path, O_RDWR)) < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &c, 1, st.st_size - 1) == 1)
		{
			c ^= 0xff;
			if (pwrite(fd, &c, 1, st.st_size - 1) == 1)
				n++;
		}
		close(fd);
	}
	if (d)
		closedir(d);
	return n;
}

/* One search of every partition of b's segment (opened through the cache as a scan opens it) into t. */
static void
search_all(lt_dataset *ds, const lt_built_index *b, lt_topk *t)
{
	char		dir[128];
	float		q[4] = {100, -200, 300, 0};
	lt_ivf	   *ix = NULL;
	lt_hnsw    *h = NULL;

	snprintf(dir, sizeof(dir), "_indices/%s/", b->uuid_text);
	CHECK_OK(lt_topk_init(t, 15, &err), err);
	CHECK_OK(lt_ivf_open_cached(ds->store, dir, 7, &ix, &err), err);
	if (ix == NULL)
		return;
	if (lt_ivf_is_hnsw(ix))
		CHECK_OK(lt_hnsw_open(ds->store, dir, ix, &h, &err), err);
	for (uint32_t p = 0; p < ix->n_partitions; p++)
	{
		if (h)
			CHECK_OK(lt_hnsw_search_partition(h, p, q, 15, 40, NULL, NULL, t, NULL, &err), err);
		else if (!lt_ivf_is_hnsw(ix))
			CHECK_OK(lt_ivf_search_partition(ix, p, q, ix->metric, NULL, NULL, t, NULL, &err), err);
	}
	lt_topk_finish(t);
	lt_hnsw_close(h);
	lt_ivf_close(ix);
}

/*
 * The shared cache (lt_vshare.h) as two backends use it: the first search decodes and writes every
 * part to the directory; a process with an empty cache of its own (the first's dropped) then maps
 * every part from the files (HNSW graphs moved to where they are mapped) and reads no byte of the
 * index: the same answer.  A damaged file is refused and decoded again.
 */
static void
shared_searches(lt_dataset *ds, const lt_built_index *b)
{
	char		tmpl[] = "/tmp/lt_vshare_ivf.XXXXXX";
	char	   *dir = mkdtemp(tmpl);
	lt_vcache_stats cs0,
				cs;
	lt_topk		t[3];
	uint64_t	bytes0,
				written;

	CHECK(dir != NULL);
	if (dir == NULL)
		return;
	lt_vcache_configure(NULL, 1 << 20);
	CHECK(lt_vcache_configure_shared(dir, 1 << 24, 42));
	lt_vcache_stats_get(&cs0);
	search_all(ds, b, &t[0]);
	lt_vcache_stats_get(&cs);
	written = cs.shared_writes - cs0.shared_writes;
	CHECK(written >= 2);		/* the model and the partitions (or graphs) */
	CHECK_EQ_INT(cs.shared_write_failures - cs0.shared_write_failures, 0);
	CHECK_EQ_INT(cs.shared_hits - cs0.shared_hits, 0);

	/* "another backend": no entry of its own, nothing mapped */
	lt_vcache_configure(NULL, 0);
	lt_vcache_configure_shared(NULL, 0, 0);
	lt_vcache_configure(NULL, 1 << 20);
	CHECK(lt_vcache_configure_shared(dir, 1 << 24, 42));
	lt_vcache_stats_get(&cs0);
	bytes0 = ds->store->bytes_read;
	search_all(ds, b, &t[1]);
	lt_vcache_stats_get(&cs);
	CHECK_EQ_INT(cs.misses - cs0.misses, 0);
	CHECK_EQ_INT(cs.shared_hits - cs0.shared_hits, written);	/* every part written is mapped */
	CHECK_EQ_INT(ds->store->bytes_read - bytes0, 0);
	CHECK_EQ_INT(cs.entries, 0);	/* nothing of its own memory */
	CHECK(cs.mapped_entries > 0);

	/* every file damaged in its last byte: refused, removed, the index decoded (and written) again */
	CHECK(flip_last_bytes(dir) >= 2);
	lt_vcache_configure(NULL, 0);
	lt_vcache_configure_shared(NULL, 0, 0);
	lt_vcache_configure(NULL, 1 << 20);
	CHECK(lt_vcache_configure_shared(dir, 1 << 24, 42));
	lt_vcache_stats_get(&cs0);
	search_all(ds, b, &t[2]);
	lt_vcache_stats_get(&cs);
	CHECK(cs.shared_rejects - cs0.shared_rejects >= 1);
	CHECK_EQ_INT(cs.shared_hits - cs0.shared_hits, 0);
	CHECK(cs.misses - cs0.misses >= 1);
	for (int i = 1; i < 3; i++)
		CHECK_SAME_TOPK(t[i], t[0]);
	for (int i = 0; i < 3; i++)
		lt_topk_free(&t[i]);
	lt_vcache_configure(NULL, 0);
	lt_vcache_configure_shared(NULL, 0, 0);
	{
		char		cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(system(cmd) == 0);
	}
}

/*
 * The segment b wrote searched through the per-process cache (lt_vcache.h) as a search opens it
 * (lt_ivf_open_cached): a second open of the same version reads no byte of its files (the model, the
 * HNSW metadata and every partition are hits) and answers as the first; an open of another version never
 * takes the entries of the first (a miss, the files read again); a budget too small for the partitions
 * evicts them (and still answers the same).
 */
static void
cached_searches(lt_dataset *ds, const lt_built_index *b)
{
	char		dir[128];
	float		q[4] = {100, -200, 300, 0};
	lt_topk		t[4];
	lt_vcache_stats cs0,
				cs;
	uint64_t	bytes0 = 0;
	uint32_t	np = 0;
	bool		hnsw = false;

	snprintf(dir, sizeof(dir), "_indices/%s/", b->uuid_text);
	lt_vcache_configure(NULL, 1 << 20);
	for (int i = 0; i < 4; i++)
	{
		lt_ivf	   *ix = NULL;
		lt_hnsw    *h = NULL;

		if (i == 1)
		{
			lt_vcache_stats_get(&cs0);
			bytes0 = ds->store->bytes_read;
		}
		if (i == 2)
		{
			lt_vcache_stats_get(&cs);
			/* the second open of the same version: every part a hit, not a byte read */
			CHECK_EQ_INT(cs.hits - cs0.hits, 1 + (hnsw ? 1 : 0) + np);
			CHECK_EQ_INT(cs.misses - cs0.misses, 0);
			CHECK_EQ_INT(ds->store->bytes_read - bytes0, 0);
			cs0 = cs;
			bytes0 = ds->store->bytes_read;
		}
		if (i == 3)
		{
			lt_vcache_stats_get(&cs);
			/* another version of the segment: its own entries, the files read again */
			CHECK(cs.misses - cs0.misses >= 1);
			CHECK(ds->store->bytes_read > bytes0);
			lt_vcache_stats_get(&cs0);
			lt_vcache_configure(NULL, 4096);	/* room for a part of them: the least recent ones dropped */
		}
		CHECK_OK(lt_ivf_open_cached(ds->store, dir, i == 2 ? 8 : 7, &ix, &err), err);
		if (ix == NULL)
			break;
		np = ix->n_partitions;
		hnsw = lt_ivf_is_hnsw(ix);
		if (hnsw)
			CHECK_OK(lt_hnsw_open(ds->store, dir, ix, &h, &err), err);
		CHECK_OK(lt_topk_init(&t[i], 15, &err), err);
		for (uint32_t p = 0; p < np; p++)
		{
			if (hnsw && h)
				CHECK_OK(lt_hnsw_search_partition(h, p, q, 15, 40, NULL, NULL, &t[i], NULL, &err), err);
			else if (!hnsw)
				CHECK_OK(lt_ivf_search_partition(ix, p, q, ix->metric, NULL, NULL, &t[i], NULL, &err), err);
		}
		lt_topk_finish(&t[i]);
		lt_hnsw_close(h);
		lt_ivf_close(ix);
	}
	lt_vcache_stats_get(&cs);
	CHECK(cs.evictions > cs0.evictions);
	CHECK(cs.bytes <= 4096);
	for (int i = 1; i < 4; i++)
		CHECK_SAME_TOPK(t[i], t[0]);
	for (int i = 0; i < 4; i++)
		lt_topk_free(&t[i]);
	lt_vcache_configure(NULL, 0);
	shared_searches(ds, b);
}

TEST(build_l2)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	const lt_field *vec;
	lt_ivf_build_options o = {0};
	lt_built_index b,
				b2;
	lt_ivf	   *ivf,
			   *ivf2;
	uint64_t	s = 17;

	if (!ds)
		return;
	vec = lt_schema_find_name(ds->schema, "vec");
	o.num_partitions = 3;
	o.progress = record_progress;
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b, &err), err);
	CHECK_EQ_INT(b.rows, 259);
	/* every phase reported; reading ends at the vectors read of the 300 rows, writing at all 259 */
	for (int ph = LT_IVF_PHASE_READ; ph <= LT_IVF_PHASE_WRITE; ph++)
		CHECK(seen[ph].calls > 0);
	CHECK_EQ_INT(seen[LT_IVF_PHASE_READ].total, 300);
	CHECK_EQ_INT(seen[LT_IVF_PHASE_READ].done, 259);
	CHECK_EQ_INT(seen[LT_IVF_PHASE_TRAIN].total, LT_IVF_BUILD_MAX_ITERS);
	CHECK_EQ_INT(seen[LT_IVF_PHASE_ASSIGN].done, 259);
	CHECK_EQ_INT(seen[LT_IVF_PHASE_WRITE].done, 259);
	CHECK_EQ_INT(seen[LT_IVF_PHASE_WRITE].total, 259);
	o.progress = NULL;
	CHECK_EQ_INT(b.n_files, 2);
	CHECK_EQ_INT(b.index_version, 1);
	CHECK(b.type_url && strcmp(b.type_url, "/lance.index.pb.VectorIndexDetails") == 0);
	CHECK(b.details_len > 0);
	CHECK(strcmp(b.name, "vec_idx") == 0);
	CHECK_EQ_INT(b.n_fragments, 3);
	ivf = open_built(ds, &b);
	if (ivf)
	{
		uint64_t	total = 0;

		CHECK(strcmp(ivf->type_name, "IVF_FLAT") == 0);
		CHECK(strcmp(ivf->distance_type, "l2") == 0);
		CHECK_EQ_INT(ivf->n_partitions, 3);
		CHECK_EQ_INT(ivf->dim, 4);
		for (uint32_t p = 0; p < 3; p++)
		{
			total += ivf->part_len[p];
			CHECK(ivf->part_len[p] > 0);
		}
		CHECK_EQ_INT(total, 259);
		/* probing every partition is exact: the same ranking as kNN over the dataset */
		{
			bool		same;

			CHECK_EQ_INT(search_hits(ds, vec, 4, 1000, ivf, NULL, LT_VMETRIC_L2, &s, &same), 120);
			CHECK(same);
		}
	}
	/* the same data and seed: the same centroids */
	o.name = "again";
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b2, &err), err);
	ivf2 = open_built(ds, &b2);
	if (ivf && ivf2)
		CHECK(memcmp(ivf->centroids, ivf2->centroids, sizeof(float) * 12) == 0);
	lt_ivf_close(ivf);
	lt_ivf_close(ivf2);
	lt_built_index_remove(ds, &b);
	lt_built_index_remove(ds, &b2);
	CHECK(!file_exists(&b, "index.idx") && !file_exists(&b, "auxiliary.idx"));
	lt_built_index_clear(&b);
	lt_built_index_clear(&b2);
	close_copy(ds, store);
}

TEST(build_cosine)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	lt_ivf_build_options o = {0};
	lt_built_index b;
	lt_ivf	   *ivf;

	if (!ds)
		return;
	o.num_partitions = 2;
	o.metric = "cosine";
	CHECK_OK(lt_ivf_build(ds, lt_schema_find_name(ds->schema, "vec"), &o, &b, &err), err);
	ivf = open_built(ds, &b);
	if (ivf)
	{
		float		zero[4] = {0, 0, 0, 0};
		lt_topk		t;

		CHECK(strcmp(ivf->distance_type, "cosine") == 0);
		/* stored vectors are unit vectors: their L2 distance to the origin is 1 */
		CHECK_OK(lt_topk_init(&t, 300, &err), err);
		for (uint32_t p = 0; p < 2; p++)
			CHECK_OK(lt_ivf_search_partition(ivf, p, zero, LT_VMETRIC_L2, NULL, NULL, &t, NULL, &err), err);
		lt_topk_finish(&t);
		CHECK_EQ_INT(t.n, 259);
		for (size_t i = 0; i < t.n; i++)
			CHECK(fabs(t.items[i].dist - 1.0) < 1e-5);
		lt_topk_free(&t);
		lt_ivf_close(ivf);
	}
	lt_built_index_remove(ds, &b);
	lt_built_index_clear(&b);
	close_copy(ds, store);
}

/* A compaction's mapping for the test: even row offsets move to fragment 100 + the old fragment, odd ones are gone. */
static bool
move_even(void *arg, uint64_t old, uint64_t *to)
{
	(void) arg;
	if (old & 1)
		return false;
	*to = ((old >> 32) + 100) << 32 | (uint32_t) old;
	return true;
}

/* The row ids and vectors of every partition of ivf, as (partition, id, 4 floats) in storage order. */
static size_t
partition_rows(lt_ivf *ivf, uint64_t *ids, uint32_t *parts, float *vecs, size_t cap)
{
	size_t		n = 0;

	for (uint32_t p = 0; p < ivf->n_partitions; p++)
	{
		lt_array   *a = NULL,
				   *v = NULL;

		if (ivf->part_len[p] == 0)
			continue;
		CHECK_OK(lt_index_file_read(ivf->aux, ivf->rowid_field, ivf->part_start[p], ivf->part_len[p], &a, &err), err);
		CHECK_OK(lt_index_file_read(ivf->aux, ivf->flat_field, ivf->part_start[p], ivf->part_len[p], &v, &err), err);
		for (int64_t r = 0; a && v && r < a->length && n < cap; r++, n++)
		{
			memcpy(&ids[n], a->values + r * 8, 8);
			parts[n] = p;
			memcpy(&vecs[n * 4], v->children[0]->values + (size_t) r * 16, 16);
		}
		lt_array_free(a);
		lt_array_free(v);
	}
	return n;
}

TEST(remap)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	const lt_field *vec;
	lt_ivf_build_options o = {0};
	lt_built_index b,
				r;
	lt_ivf	   *ivf = NULL,
			   *moved = NULL;
	char		dir[128];
	static uint64_t ids[300],
				ids2[300];
	static uint32_t parts[300],
				parts2[300];
	static float vecs[1200],
				vecs2[1200];
	size_t		n = 0,
				n2 = 0,
				kept = 0,
				matched = 0;

	if (!ds)
		return;
	vec = lt_schema_find_name(ds->schema, "vec");
	o.num_partitions = 3;
	o.metric = "cosine";
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b, &err), err);
	snprintf(dir, sizeof(dir), "_indices/%s/", b.uuid_text);
	CHECK_OK(lt_ivf_remap(ds, vec, "vec_idx", dir, move_even, NULL, &r, &err), err);
	ivf = open_built(ds, &b);
	moved = open_built(ds, &r);
	if (ivf && moved)
	{
		CHECK(strcmp(moved->type_name, "IVF_FLAT") == 0 && strcmp(moved->distance_type, "cosine") == 0);
		CHECK_EQ_INT(moved->n_partitions, 3);
		CHECK(memcmp(ivf->centroids, moved->centroids, sizeof(float) * 12) == 0);
		n = partition_rows(ivf, ids, parts, vecs, 300);
		n2 = partition_rows(moved, ids2, parts2, vecs2, 300);
		for (size_t i = 0; i < n; i++)
			kept += (ids[i] & 1) == 0;
		CHECK_EQ_INT(n2, kept);
		CHECK_EQ_INT(r.rows, kept);
		/* every kept row: its new id, in the same partition, with the same (unit) vector */
		for (size_t i = 0; i < n; i++)
		{
			uint64_t	to;

			if (!move_even(NULL, ids[i], &to))
				continue;
			for (size_t j = 0; j < n2; j++)
				if (ids2[j] == to)
				{
					matched += parts2[j] == parts[i] && memcmp(&vecs2[j * 4], &vecs[i * 4], 16) == 0;
					break;
				}
		}
		CHECK_EQ_INT(matched, kept);
		CHECK(kept > 0 && kept < n);
	}
	lt_ivf_close(ivf);
	lt_ivf_close(moved);
	lt_built_index_clear(&b);
	lt_built_index_clear(&r);
	/* a storage that is not IVF_FLAT: LT_EUNSUPPORTED (here: no index there at all is an error too) */
	CHECK(lt_ivf_remap(ds, vec, "x", "_indices/00000000-0000-0000-0000-000000000000/", move_even, NULL, &r, &err) !=
		  LT_OK);
	close_copy(ds, store);
}

/* The (partition, id, code) of every stored row of an IVF_PQ / IVF_SQ segment, codes row-major (cb bytes each). */
static size_t
partition_codes(lt_ivf *ivf, uint32_t cb, uint64_t *ids, uint32_t *parts, uint8_t *codes, size_t cap)
{
	const lt_field *f = ivf->pq_field ? ivf->pq_field : ivf->sq.field;
	size_t		n = 0;

	for (uint32_t p = 0; f && p < ivf->n_partitions; p++)
	{
		lt_array   *a = NULL,
				   *c = NULL;
		uint32_t	len = ivf->part_len[p];

		if (len == 0)
			continue;
		CHECK_OK(lt_index_file_read(ivf->aux, ivf->rowid_field, ivf->part_start[p], len, &a, &err), err);
		CHECK_OK(lt_index_file_read(ivf->aux, f, ivf->part_start[p], len, &c, &err), err);
		for (int64_t r = 0; a && c && r < a->length && n < cap; r++, n++)
		{
			memcpy(&ids[n], a->values + r * 8, 8);
			parts[n] = p;
			for (uint32_t j = 0; j < cb; j++)
				codes[n * cb + j] = ivf->pq_field && ivf->pq_transposed ?
					c->children[0]->values[(size_t) j * len + r] : c->children[0]->values[(size_t) r * cb + j];
		}
		lt_array_free(a);
		lt_array_free(c);
	}
	return n;
}

/*
 * A remapped IVF_HNSW_* segment's graphs (built again over the kept rows' codes, with the old graphs' m 4 and
 * ef_construction 20): every partition's graph walked with an ef above its size reaches all its n2 kept rows
 * (ids: the remapped ids), and no other row.
 */
static void
check_remapped_graph(lt_dataset *ds, const lt_built_index *r, lt_ivf *moved, const uint64_t *ids, size_t n)
{
	char		dir[128];
	lt_hnsw    *h = NULL;
	lt_topk		a;
	uint64_t	scored = 0;
	float		q[4] = {1, -2, 3, 0.5f};
	size_t		found = 0;

	snprintf(dir, sizeof(dir), "_indices/%s/", r->uuid_text);
	CHECK_OK(lt_hnsw_open(ds->store, dir, moved, &h, &err), err);
	CHECK_OK(lt_topk_init(&a, 300, &err), err);
	for (uint32_t p = 0; h && p < moved->n_partitions; p++)
		CHECK_OK(lt_hnsw_search_partition(h, p, q, 300, 400, NULL, NULL, &a, &scored, &err), err);
	lt_topk_finish(&a);
	for (size_t i = 0; i < a.n; i++)
		for (size_t j = 0; j < n; j++)
			if (a.items[i].addr == ids[j])
			{
				found++;
				break;
			}
	printf("  remap %s: the rebuilt graphs reach %zu of %zu rows (%zu returned)\n", moved->type_name, found, n, a.n);
	CHECK_EQ_INT(a.n, n);
	CHECK_EQ_INT(found, n);
	{
		lt_index_file *xf = NULL;
		char		path[160];
		size_t		len = 0;
		const char *m;

		snprintf(path, sizeof(path), "%sindex.idx", dir);
		CHECK_OK(lt_index_file_open(ds->store, path, &xf, &err), err);
		m = xf ? (const char *) lt_index_file_meta(xf, "lance:hnsw", &len) : NULL;
		CHECK(m && memmem(m, len, "\\\"m\\\":4,", strlen("\\\"m\\\":4,")) &&
			  memmem(m, len, "\\\"ef_construction\\\":20,", strlen("\\\"ef_construction\\\":20,")));
		lt_index_file_close(xf);
	}
	lt_topk_free(&a);
	lt_hnsw_close(h);
}

/*
 * IVF_PQ (8- and 4-bit), IVF_SQ, IVF_HNSW_SQ and IVF_HNSW_PQ remapped: the same centroids and quantizer (codebook, bounds), every kept row
 * with its new id in its old partition with its old code, the dropped rows gone; searching every partition of
 * the remapped segment scores each kept row as the old segment did.
 */
TEST(remap_pq_sq)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	const lt_field *vec;
	static uint64_t ids[300],
				ids2[300];
	static uint32_t parts[300],
				parts2[300];
	static uint8_t codes[300 * 4],
				codes2[300 * 4];

	if (!ds)
		return;
	vec = lt_schema_find_name(ds->schema, "vec");
	for (int v = 0; v < 5; v++)
	{
		static const lt_ivf_build_kind kinds[5] = {LT_IVF_BUILD_PQ, LT_IVF_BUILD_PQ, LT_IVF_BUILD_SQ,
		LT_IVF_BUILD_HNSW_SQ, LT_IVF_BUILD_HNSW_PQ};
		static const char *const types[5] = {"IVF_PQ", "IVF_PQ", "IVF_SQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ"};
		bool		sq = kinds[v] == LT_IVF_BUILD_SQ || kinds[v] == LT_IVF_BUILD_HNSW_SQ;
		lt_ivf_build_options o = {0};
		lt_built_index b,
					r;
		lt_ivf	   *ivf = NULL,
				   *moved = NULL;
		char		dir[128],
					name[16];
		uint32_t	cb = sq ? 4 : v == 1 ? 1 : 2;
		size_t		n,
					n2,
					kept = 0,
					matched = 0;

		o.kind = kinds[v];
		o.hnsw_m = 4;
		o.hnsw_ef_construction = 20;
		o.num_partitions = 3;
		o.num_sub_vectors = 2;
		o.num_bits = v == 1 ? 4 : 8;
		o.metric = v == 2 || v == 4 ? "cosine" : "l2";
		snprintf(name, sizeof(name), "q%d", v);
		o.name = name;
		CHECK_OK(lt_ivf_build(ds, vec, &o, &b, &err), err);
		snprintf(dir, sizeof(dir), "_indices/%s/", b.uuid_text);
		CHECK_OK(lt_ivf_remap(ds, vec, name, dir, move_even, NULL, &r, &err), err);
		ivf = open_built(ds, &b);
		moved = open_built(ds, &r);
		if (ivf && moved)
		{
			CHECK(strcmp(moved->type_name, types[v]) == 0);
			CHECK(strcmp(moved->distance_type, o.metric) == 0);
			CHECK_EQ_INT(moved->n_partitions, 3);
			CHECK(memcmp(ivf->centroids, moved->centroids, sizeof(float) * 12) == 0);
			if (!sq)
			{
				CHECK_EQ_INT(moved->pq_m, 2);
				CHECK_EQ_INT(moved->pq_bits, o.num_bits);
				CHECK_EQ_INT(moved->pq_bytes, cb);
				CHECK(memcmp(ivf->codebook, moved->codebook, sizeof(float) * (1u << o.num_bits) * 4) == 0);
			}
			else
				CHECK(moved->sq.lo == ivf->sq.lo && moved->sq.hi == ivf->sq.hi);
			n = partition_codes(ivf, cb, ids, parts, codes, 300);
			n2 = partition_codes(moved, cb, ids2, parts2, codes2, 300);
			CHECK_EQ_INT(n, 259);
			for (size_t i = 0; i < n; i++)
				kept += (ids[i] & 1) == 0;
			CHECK_EQ_INT(n2, kept);
			CHECK_EQ_INT(r.rows, kept);
			for (size_t i = 0; i < n; i++)
			{
				uint64_t	to;

				if (!move_even(NULL, ids[i], &to))
					continue;
				for (size_t j = 0; j < n2; j++)
					if (ids2[j] == to)
					{
						matched += parts2[j] == parts[i] && memcmp(&codes2[j * cb], &codes[i * cb], cb) == 0;
						break;
					}
			}
			printf("  remap %s: %zu of %zu rows kept, %zu with their partition and code\n", name, kept, n, matched);
			CHECK_EQ_INT(matched, kept);
			CHECK(kept > 0 && kept < n);
			if (lt_ivf_is_hnsw(moved))
				check_remapped_graph(ds, &r, moved, ids2, n2);
		}
		lt_ivf_close(ivf);
		lt_ivf_close(moved);
		lt_built_index_clear(&b);
		lt_built_index_clear(&r);
	}
	close_copy(ds, store);
}

TEST(build_errors)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	lt_ivf_build_options o = {0};
	lt_built_index b;
	const lt_field *vec;

	if (!ds)
		return;
	vec = lt_schema_find_name(ds->schema, "vec");
	o.num_partitions = 1000;	/* more than the 259 vectors */
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_EINVALID);
	CHECK(strstr(err.msg, "1000 partitions") != NULL);
	o.num_partitions = 3;
	o.metric = "hamming";
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_EINVALID);
	o.metric = NULL;
	CHECK_CODE(lt_ivf_build(ds, lt_schema_find_name(ds->schema, "id"), &o, &b, &err), LT_EUNSUPPORTED);
	/* RaBitQ codes need a dimension divisible by 8 (vec has 4, float16 v16 3: its type is no reason); hamming is
	 * for uint8 vectors only */
	o.kind = LT_IVF_BUILD_RQ;
	CHECK_CODE(lt_ivf_build(ds, lt_schema_find_name(ds->schema, "v16"), &o, &b, &err), LT_EINVALID);
	CHECK(strstr(err.msg, "IVF_RQ") != NULL && strstr(err.msg, "\"v16\"") != NULL && strstr(err.msg, "divisible by 8") != NULL);
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_EINVALID);
	CHECK(strstr(err.msg, "divisible by 8") != NULL);
	o.kind = LT_IVF_BUILD_FLAT;
	o.metric = "hamming";
	CHECK_CODE(lt_ivf_build(ds, lt_schema_find_name(ds->schema, "v16"), &o, &b, &err), LT_EINVALID);
	CHECK(strstr(err.msg, "uint8") != NULL);
	o.metric = NULL;
	/* a cancel: an error, and the segment's files are gone */
	lt_set_interrupt_hooks(always_interrupted, NULL);
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_ECANCELED);
	lt_set_interrupt_hooks(NULL, NULL);
	CHECK_EQ_INT(b.n_files, 0);
	/* memory bound */
	o.max_memory = 1024;
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_ENOMEM);
	close_copy(ds, store);
}

TEST(build_pq_sq)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	const lt_field *vec;
	lt_ivf_build_options o = {0};
	lt_built_index b,
				b2;
	lt_ivf	   *ivf,
			   *ivf2;
	uint64_t	s = 29;

	if (!ds)
		return;
	vec = lt_schema_find_name(ds->schema, "vec");
	o.kind = LT_IVF_BUILD_PQ;
	o.num_partitions = 3;
	o.num_sub_vectors = 2;
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b, &err), err);
	ivf = open_built(ds, &b);
	if (ivf)
	{
		int			hits;

		CHECK(strcmp(ivf->type_name, "IVF_PQ") == 0);
		CHECK_EQ_INT(ivf->pq_m, 2);
		CHECK_EQ_INT(ivf->pq_bits, 8);
		CHECK(ivf->pq_transposed);
		CHECK_EQ_INT(ivf->part_len[0] + ivf->part_len[1] + ivf->part_len[2], 259);
		/* 256 codewords per 2-element sub-vector of 259 residuals: nearly exact */
		hits = search_hits(ds, vec, 4, 1000, ivf, NULL, LT_VMETRIC_L2, &s, NULL);
		printf("  pq8 l2: %d of 120 exact neighbours found\n", hits);
		CHECK(hits >= 108);
	}
	/* the same data and seed: the same codebook */
	o.name = "again";
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b2, &err), err);
	ivf2 = open_built(ds, &b2);
	if (ivf && ivf2)
		CHECK(memcmp(ivf->codebook, ivf2->codebook, sizeof(float) * 256 * 4) == 0);
	lt_ivf_close(ivf);
	lt_ivf_close(ivf2);
	lt_built_index_remove(ds, &b);
	lt_built_index_remove(ds, &b2);
	lt_built_index_clear(&b);
	lt_built_index_clear(&b2);

	/* 4-bit codes, dot (no residual) */
	o.name = NULL;
	o.num_bits = 4;
	o.metric = "dot";
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b, &err), err);
	ivf = open_built(ds, &b);
	if (ivf)
	{
		int			hits;

		CHECK(strcmp(ivf->type_name, "IVF_PQ") == 0);
		CHECK_EQ_INT(ivf->pq_bits, 4);
		CHECK_EQ_INT(ivf->pq_bytes, 1);
		hits = search_hits(ds, vec, 4, 1000, ivf, NULL, LT_VMETRIC_NEG_DOT, &s, NULL);
		printf("  pq4 dot: %d of 120 exact neighbours found\n", hits);
		CHECK(hits >= 60);
		lt_ivf_close(ivf);
	}
	lt_built_index_remove(ds, &b);
	lt_built_index_clear(&b);

	/* SQ: 8-bit codes of each element */
	memset(&o, 0, sizeof(o));
	o.kind = LT_IVF_BUILD_SQ;
	o.num_partitions = 3;
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b, &err), err);
	ivf = open_built(ds, &b);
	if (ivf)
	{
		int			hits;

		CHECK(strcmp(ivf->type_name, "IVF_SQ") == 0);
		CHECK(ivf->sq.field != NULL && ivf->sq.lo < ivf->sq.hi);
		hits = search_hits(ds, vec, 4, 1000, ivf, NULL, LT_VMETRIC_L2, &s, NULL);
		printf("  sq l2: %d of 120 exact neighbours found\n", hits);
		CHECK(hits >= 108);
		lt_ivf_close(ivf);
		cached_searches(ds, &b);
	}
	lt_built_index_remove(ds, &b);
	lt_built_index_clear(&b);

	/* PQ parameters that do not fit: errors, no files */
	memset(&o, 0, sizeof(o));
	o.kind = LT_IVF_BUILD_PQ;
	o.num_partitions = 3;
	o.num_sub_vectors = 3;
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_EINVALID);
	CHECK(strstr(err.msg, "must divide") != NULL);
	CHECK_EQ_INT(b.n_files, 0);
	o.num_sub_vectors = 1;
	o.num_bits = 4;
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_EINVALID);
	o.num_bits = 5;
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_EINVALID);
	close_copy(ds, store);
}

/* a cancel once the graph phase has begun */
static bool in_graph;

static void
graph_progress(void *arg, lt_ivf_build_phase phase, uint64_t done, uint64_t total)
{
	record_progress(arg, phase, done, total);
	if (phase == LT_IVF_PHASE_GRAPH && done > 0)
		in_graph = true;
}

static bool
interrupted_in_graph(void)
{
	return in_graph;
}

static char *
slurp(const char *uuid, const char *name, size_t *len)
{
	char		path[512];
	FILE	   *f;
	char	   *buf;

	snprintf(path, sizeof(path), "%s/_indices/%s/%s", work, uuid, name);
	f = fopen(path, "rb");
	CHECK(f != NULL);
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t) ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(*len + 1);
	CHECK(fread(buf, 1, *len, f) == *len);
	fclose(f);
	return buf;
}

TEST(build_hnsw_sq)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	const lt_field *vec;
	lt_ivf_build_options o = {0};
	lt_built_index b,
				b2;
	lt_ivf	   *ivf;
	uint64_t	s = 31;

	if (!ds)
		return;
	vec = lt_schema_find_name(ds->schema, "vec");
	o.kind = LT_IVF_BUILD_HNSW_SQ;
	o.num_partitions = 3;
	o.hnsw_m = 4;
	o.hnsw_ef_construction = 20;
	o.progress = record_progress;
	memset(seen, 0, sizeof(seen));
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b, &err), err);
	CHECK(seen[LT_IVF_PHASE_GRAPH].calls >= 2);
	CHECK_EQ_INT(seen[LT_IVF_PHASE_GRAPH].done, 259);
	ivf = open_built(ds, &b);
	if (ivf)
	{
		char		dir[128];
		lt_hnsw    *h = NULL;

		CHECK(strcmp(ivf->type_name, "IVF_HNSW_SQ") == 0);
		CHECK(lt_ivf_is_hnsw(ivf));
		snprintf(dir, sizeof(dir), "_indices/%s/", b.uuid_text);
		CHECK_OK(lt_hnsw_open(ds->store, dir, ivf, &h, &err), err);
		for (int engine = 12; h && engine >= 8; engine -= 4)
		{
			int			hits;

			lt_hnsw_search_as(h, engine);
			hits = search_hits(ds, vec, 4, 1000, ivf, h, LT_VMETRIC_L2, &s, NULL);
			printf("  hnsw_sq l2 (Lance %d's walk): %d of 120 exact neighbours found\n", engine, hits);
			CHECK(hits >= 108);
		}
		lt_hnsw_close(h);
		/*
		 * through the per-process cache (lt_vcache.h): a graph opened again takes its partitions from there
		 * (one hit each, no file read), and answers exactly as when read from the files
		 */
		{
			float		q[4] = {100, -200, 300, 0};
			lt_topk		t[3];
			lt_vcache_stats cs0,
						cs;

			lt_vcache_stats_get(&cs0);
			for (int i = 0; i < 3; i++)
			{
				uint64_t	scored = 0;

				if (i == 1)
					lt_vcache_configure(NULL, 1 << 20);
				if (i == 2)
					lt_vcache_stats_get(&cs0);
				h = NULL;
				CHECK_OK(lt_hnsw_open(ds->store, dir, ivf, &h, &err), err);
				CHECK_OK(lt_topk_init(&t[i], 15, &err), err);
				for (uint32_t p = 0; h && p < ivf->n_partitions; p++)
					CHECK_OK(lt_hnsw_search_partition(h, p, q, 15, 40, NULL, NULL, &t[i], &scored, &err), err);
				lt_hnsw_close(h);
				lt_topk_finish(&t[i]);
			}
			lt_vcache_stats_get(&cs);
			/* the graphs' metadata and every partition's graph */
			CHECK_EQ_INT(cs.hits - cs0.hits, ivf->n_partitions + 1);
			CHECK_EQ_INT(cs.entries, ivf->n_partitions + 1);
			for (int i = 1; i < 3; i++)
				CHECK_SAME_TOPK(t[i], t[0]);
			for (int i = 0; i < 3; i++)
				lt_topk_free(&t[i]);
			lt_vcache_configure(NULL, 0);
		}
		lt_ivf_close(ivf);
		cached_searches(ds, &b);
	}
	/* the same data and seed: the same files */
	o.name = "again";
	CHECK_OK(lt_ivf_build(ds, vec, &o, &b2, &err), err);
	for (int f = 0; f < 2; f++)
	{
		const char *name = f ? "auxiliary.idx" : "index.idx";
		size_t		l1 = 0,
					l2 = 0;
		char	   *x = slurp(b.uuid_text, name, &l1),
				   *y = slurp(b2.uuid_text, name, &l2);

		CHECK(x && y && l1 == l2 && memcmp(x, y, l1) == 0);
		free(x);
		free(y);
	}
	lt_built_index_remove(ds, &b);
	lt_built_index_remove(ds, &b2);
	lt_built_index_clear(&b);
	lt_built_index_clear(&b2);
	/* a cancel while the graphs are built: an error, no files */
	o.name = NULL;
	o.progress = graph_progress;
	in_graph = false;
	lt_set_interrupt_hooks(interrupted_in_graph, NULL);
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_ECANCELED);
	lt_set_interrupt_hooks(NULL, NULL);
	CHECK(in_graph);
	CHECK_EQ_INT(b.n_files, 0);
	/* m out of range */
	o.progress = NULL;
	o.hnsw_m = 1;
	CHECK_CODE(lt_ivf_build(ds, vec, &o, &b, &err), LT_EINVALID);
	CHECK(strstr(err.msg, "m of an HNSW graph") != NULL);
	close_copy(ds, store);
}

/*
 * float16 vectors (v16: 3 elements, 266 live rows): IVF_FLAT, IVF_SQ and IVF_HNSW_SQ keep the centroids (and the
 * flat vectors) as float16, as the engine does; every partition probed finds the exact neighbours (IVF_FLAT: in
 * order), cosine stores unit vectors (to float16's precision).
 */
TEST(build_f16)
{
	lt_store   *store = NULL;
	lt_dataset *ds = open_copy(&store);
	const lt_field *v16;
	uint64_t	s = 57;
	const lt_ivf_build_kind kinds[] = {LT_IVF_BUILD_FLAT, LT_IVF_BUILD_SQ, LT_IVF_BUILD_HNSW_SQ};

	if (!ds)
		return;
	v16 = lt_schema_find_name(ds->schema, "v16");
	/* IVF_PQ over float16: built (the search reads float16 PQ only exactly: lt_ivf_open refuses it) */
	{
		lt_ivf_build_options o = {0};
		lt_built_index b;

		o.kind = LT_IVF_BUILD_PQ;
		o.num_partitions = 2;
		o.num_sub_vectors = 3;
		CHECK_OK(lt_ivf_build(ds, v16, &o, &b, &err), err);
		CHECK_EQ_INT(b.rows, 266);
		lt_built_index_remove(ds, &b);
		lt_built_index_clear(&b);
	}
	for (int k = 0; k < 3; k++)
		for (int cos = 0; cos < 2; cos++)
		{
			lt_ivf_build_options o = {0};
			lt_built_index b;
			lt_ivf	   *ivf;

			o.kind = kinds[k];
			o.num_partitions = 3;
			o.metric = cos ? "cosine" : "l2";
			o.hnsw_m = 4;
			o.hnsw_ef_construction = 20;
			CHECK_OK(lt_ivf_build(ds, v16, &o, &b, &err), err);
			CHECK_EQ_INT(b.rows, 266);
			ivf = open_built(ds, &b);
			if (ivf)
			{
				CHECK_EQ_INT(ivf->elem, LT_TYPE_FLOAT16);
				CHECK_EQ_INT(ivf->dim, 3);
				if (kinds[k] == LT_IVF_BUILD_FLAT)
				{
					CHECK(ivf->flat_field && ivf->flat_field->children[0]->type == LT_TYPE_FLOAT16);
					if (cos)
					{
						float		zero[3] = {0, 0, 0};
						lt_topk		t;

						CHECK_OK(lt_topk_init(&t, 300, &err), err);
						for (uint32_t p = 0; p < ivf->n_partitions; p++)
							CHECK_OK(lt_ivf_search_partition(ivf, p, zero, LT_VMETRIC_L2, NULL, NULL, &t, NULL, &err), err);
						lt_topk_finish(&t);
						CHECK_EQ_INT(t.n, 266);
						for (size_t i = 0; i < t.n; i++)
							CHECK(fabs(t.items[i].dist - 1.0) < 2e-3);
						lt_topk_free(&t);
					}
					else
					{
						bool		same;

						CHECK_EQ_INT(search_hits(ds, v16, 3, 64, ivf, NULL, LT_VMETRIC_L2, &s, &same), 120);
						CHECK(same);
					}
				}
				else if (kinds[k] == LT_IVF_BUILD_SQ && !cos)
				{
					int			hits = search_hits(ds, v16, 3, 64, ivf, NULL, LT_VMETRIC_L2, &s, NULL);

					printf("  float16 sq l2: %d of 120 exact neighbours found\n", hits);
					CHECK(hits >= 100);
				}
				else if (kinds[k] == LT_IVF_BUILD_HNSW_SQ && !cos)
				{
					char		dir[128];
					lt_hnsw    *h = NULL;

					snprintf(dir, sizeof(dir), "_indices/%s/", b.uuid_text);
					CHECK_OK(lt_hnsw_open(ds->store, dir, ivf, &h, &err), err);
					if (h)
					{
						int			hits = search_hits(ds, v16, 3, 64, ivf, h, LT_VMETRIC_L2, &s, NULL);

						printf("  float16 hnsw_sq l2: %d of 120 exact neighbours found\n", hits);
						CHECK(hits >= 100);
					}
					lt_hnsw_close(h);
				}
				lt_ivf_close(ivf);
			}
			lt_built_index_remove(ds, &b);
			lt_built_index_clear(&b);
		}
	close_copy(ds, store);
}

int
main(void)
{
	RUN(build_l2);
	RUN(build_cosine);
	RUN(remap);
	RUN(remap_pq_sq);
	RUN(build_errors);
	RUN(build_pq_sq);
	RUN(build_hnsw_sq);
	RUN(build_f16);
	return unit_report("ivf_build");
}
