/*
 * lt_txn.c — pending changes of one transaction, its own-writes view, and the
 * commit: deletion files, transaction file, the next manifest created only if
 * absent, and the rebase over concurrent commits (lt_txn.h has the contract).
 *
 * The changes are a journal (add fragment, delete rows, remove fragment), so
 * that a savepoint is a journal length and rolling back truncates it.  What
 * the journal means for each fragment (rows deleted, fragment gone) is worked
 * out when needed ("settled"), against the read version's deletion vectors.
 */
#include "txn/lt_txn.h"
#include "txn/lt_txn_int.h"

#include <inttypes.h>
#include <roaring/roaring.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "txn/lt_action.h"
#include "util/lt_alloc.h"
#include "txn/lt_keys.h"
#include "util/lt_random.h"
#include "table/lt_roaring.h"
#include "table/lt_rowids.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"
#include "proto/lt_transaction.pb-c.h"

#define DEFAULT_MAX_ATTEMPTS 20
/* writer feature flags this library can write with (base paths: no) */
#define KNOWN_WRITER_FLAGS (LT_FLAG_DELETION_FILES | LT_FLAG_STABLE_ROW_IDS | LT_FLAG_USE_V2_FORMAT | \
							LT_FLAG_TABLE_CONFIG | LT_FLAG_DISABLE_TXN_FILE)
#define MAX_TXN_FILE ((uint64_t) 1 << 30)

lt_commit_fault_fn lt_commit_fault_hook;

typedef struct added
{
	Lt__Pb__DataFragment frag;	/* frag.id: the provisional id; files owned */
	uint64_t   *row_ids;		/* ids kept by moved rows, or NULL */
} added;

typedef enum jkind
{
	J_ADD,
	J_DELETE,
	J_REMOVE,
	J_KEYS,						/* lt_txn_assert_unique_keys */
	J_REPLACE					/* lt_txn_replace_all */
} jkind;

typedef struct jentry
{
	jkind		kind;
	uint64_t	frag_id;
	roaring_bitmap_t *rows;		/* J_DELETE */
	lt_key_filter *keys;		/* J_KEYS (owned) */
	bool		keep_indexes;	/* J_REPLACE */
} jentry;

/* Row id -> the version that created it, for rows this transaction deletes (they may move). */
typedef struct id_version
{
	uint64_t	id;
	uint64_t	version;
} id_version;

/* The read version's deletion vector of a fragment, loaded once. */
typedef struct base_dv
{
	uint64_t	id;
	roaring_bitmap_t *rows;
} base_dv;

/* What the journal does to one fragment (settled). */
typedef struct change
{
	uint64_t	id;
	const Lt__Pb__DataFragment *orig;	/* in the read version; NULL for an added fragment */
	added	   *add;
	uint64_t	physical_rows;
	roaring_bitmap_t *ours;		/* rows this transaction deletes that were live at the read version */
	roaring_bitmap_t *all;		/* the read version's deleted rows and ours */
	bool		gone;			/* every row deleted */
	/* the deletion file an earlier attempt wrote, and what it was merged onto */
	bool		written;
	lt_deletion_file df;
	uint64_t	written_frag_id;
	bool		onto_file;
	uint64_t	onto_rv, onto_id;
} change;

/* One own-writes view: a dataset over the read version's and the added fragments. */
typedef struct txn_view
{
	lt_dataset	ds;
	Lt__Pb__DataFragment **frags;
	Lt__Pb__DataFragment *copies;	/* fragments with rows deleted by us, with a synthetic DeletionFile */
	Lt__Pb__DeletionFile *dfs;
	lt_dv_override *dvs;
	uint32_t  **arrays;
	size_t		n_arrays;
	struct txn_view *older;
} txn_view;

struct lt_txn
{
	lt_dataset *read;
	char		name[512];		/* the dataset, for messages */
	uint64_t	first_new_id;	/* provisional id of the first added fragment */
	uint64_t	next_row_id;	/* the read version's */
	added	  **adds;
	size_t		n_adds, cap_adds;
	jentry	   *log;
	size_t		n_log, cap_log;
	size_t		last_mark;		/* the newest savepoint: entries from here on may absorb more rows */
	base_dv    *bases;
	size_t		n_bases, cap_bases;
	change	   *changes;		/* ascending by id */
	size_t		n_changes;
	bool		settled;
	bool		broken;
	/* creation versions of the rows this transaction deletes, by row id (stable row ids) */
	bool		created_loaded;
	id_version *created;
	size_t		n_created;
	/* own-writes views: the newest first; older ones stay readable until lt_txn_free */
	bool		view_valid;
	struct txn_view *views;
	/* fragments dropped by a rollback: a view taken before may still point at them */
	added	  **dropped;
	size_t		n_dropped, cap_dropped;
};

/* ---- small helpers ------------------------------------------------------ */

/* Allocations of one commit attempt, freed together. */
typedef struct arena
{
	void	  **p;
	size_t		n, cap;
	bool		oom;
} arena;

static void *
arena_alloc(arena *a, size_t size)
{
	void	   *p;

	if (a->oom)
		return NULL;
	if (a->n == a->cap)
	{
		size_t		cap = a->cap ? a->cap * 2 : 64;
		void	  **np = lt_realloc(a->p, cap * sizeof(void *));

		if (!np)
		{
			a->oom = true;
			return NULL;
		}
		a->p = np;
		a->cap = cap;
	}
	if (!(p = lt_calloc(1, size ? size : 1)))
	{
		a->oom = true;
		return NULL;
	}
	a->p[a->n++] = p;
	return p;
}

static void
arena_free(arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		lt_free(a->p[i]);
	lt_free(a->p);
	memset(a, 0, sizeof(*a));
}

static bool
grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t		ncap = *cap ? *cap * 2 : 16;

	while (ncap < need)
		ncap *= 2;
	void	   *p = lt_realloc(*arr, ncap * elem);

	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

/* The id the next new fragment of a version gets. */
static uint64_t
next_fragment_id(const lt_dataset *ds)
{
	uint64_t	next = ds->manifest->has_max_fragment_id ? (uint64_t) ds->manifest->max_fragment_id + 1 : 0;

	if (ds->n_fragments > 0 && ds->fragments[ds->n_fragments - 1]->id >= next)
		next = ds->fragments[ds->n_fragments - 1]->id + 1;
	return next;
}

/* A fragment's deletion vector in a version, as a bitmap. */
static lt_code
load_dv(lt_dataset *ds, const Lt__Pb__DataFragment *frag, roaring_bitmap_t **out, lt_error *err)
{
	uint32_t   *offs;
	uint64_t	n;

	LT_TRY(lt_fragment_deleted_offsets(ds, frag, &offs, &n, err));
	*out = roaring_bitmap_of_ptr((size_t) n, offs);
	lt_free(offs);
	return *out ? LT_OK : lt_nomem(err);
}

static void
dataset_name(const lt_dataset *ds, char *buf, size_t len)
{
	size_t		n = strlen(ds->prefix);

	while (n > 0 && ds->prefix[n - 1] == '/')
		n--;
	if (n == 0)
		snprintf(buf, len, "%s", ds->store->root);
	else
		snprintf(buf, len, "%s/%.*s", ds->store->root, (int) n, ds->prefix);
}

static void
fault(lt_commit_point p)
{
	if (lt_commit_fault_hook)
		lt_commit_fault_hook(p);
}

/* ---- row-id and version sequences --------------------------------------- */

static lt_code
pack_msg(const ProtobufCMessage *m, ProtobufCBinaryData *out, arena *a, lt_error *err)
{
	size_t		n = protobuf_c_message_get_packed_size(m);
	uint8_t    *p = a ? arena_alloc(a, n) : lt_malloc(n ? n : 1);

	if (!p)
		return lt_nomem(err);
	protobuf_c_message_pack(m, p);
	out->data = p;
	out->len = n;
	return LT_OK;
}

/* RowIdSequence of ids [start, start + n), or of the given ids. */
static lt_code
encode_row_ids(uint64_t start, uint64_t n, const uint64_t *ids, ProtobufCBinaryData *out, arena *a, lt_error *err)
{
	Lt__Pb__RowIdSequence seq = LT__PB__ROW_ID_SEQUENCE__INIT;
	Lt__Pb__U64Segment seg = LT__PB__U64_SEGMENT__INIT;
	Lt__Pb__U64Segment *segs[1] = {&seg};
	Lt__Pb__U64Segment__Range range = LT__PB__U64_SEGMENT__RANGE__INIT;
	Lt__Pb__EncodedU64Array arr = LT__PB__ENCODED_U64_ARRAY__INIT;
	Lt__Pb__EncodedU64Array__U64Array u64 = LT__PB__ENCODED_U64_ARRAY__U64_ARRAY__INIT;
	Lt__Pb__EncodedU64Array__U32Array u32 = LT__PB__ENCODED_U64_ARRAY__U32_ARRAY__INIT;
	bool		contiguous = true, sorted = true;
	uint64_t	lo = UINT64_MAX, hi = 0;
	uint8_t    *buf = NULL;
	lt_code		rc;

	if (ids)
	{
		for (uint64_t i = 0; i < n; i++)
		{
			if (i > 0 && ids[i] != ids[i - 1] + 1)
				contiguous = false;
			if (i > 0 && ids[i] <= ids[i - 1])
				sorted = false;
			lo = ids[i] < lo ? ids[i] : lo;
			hi = ids[i] > hi ? ids[i] : hi;
		}
		if (n > 0 && contiguous)
			start = ids[0];
	}
	seq.n_segments = n > 0 ? 1 : 0;
	seq.segments = segs;
	if (!ids || contiguous)
	{
		range.has_start = range.has_end = true;
		range.start = start;
		range.end = start + n;
		seg.segment_case = LT__PB__U64_SEGMENT__SEGMENT_RANGE;
		seg.range = &range;
	}
	else
	{
		if (hi - lo <= UINT32_MAX)
		{
			if (!(buf = lt_malloc(n * 4)))
				return lt_nomem(err);
			for (uint64_t i = 0; i < n; i++)
				lt_put32(buf + 4 * i, (uint32_t) (ids[i] - lo));
			u32.has_base_value = u32.has_offsets = true;
			u32.base_value = lo;
			u32.offsets.data = buf;
			u32.offsets.len = n * 4;
			arr.array_case = LT__PB__ENCODED_U64_ARRAY__ARRAY_U32_ARRAY;
			arr.u32_array = &u32;
		}
		else
		{
			if (!(buf = lt_malloc(n * 8)))
				return lt_nomem(err);
			for (uint64_t i = 0; i < n; i++)
				lt_put64(buf + 8 * i, ids[i]);
			u64.has_values = true;
			u64.values.data = buf;
			u64.values.len = n * 8;
			arr.array_case = LT__PB__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY;
			arr.u64_array = &u64;
		}
		seg.segment_case = sorted ? LT__PB__U64_SEGMENT__SEGMENT_SORTED_ARRAY : LT__PB__U64_SEGMENT__SEGMENT_ARRAY;
		if (sorted)
			seg.sorted_array = &arr;
		else
			seg.array = &arr;
	}
	rc = pack_msg(&seq.base, out, a, err);
	lt_free(buf);
	return rc;
}

/* RowDatasetVersionSequence of n rows: versions[i], or all at `version` when versions is NULL. */
static lt_code
encode_versions(uint64_t n, const uint64_t *versions, uint64_t version, ProtobufCBinaryData *out, arena *a,
				lt_error *err)
{
	Lt__Pb__RowDatasetVersionSequence seq = LT__PB__ROW_DATASET_VERSION_SEQUENCE__INIT;
	size_t		n_runs = 0;
	Lt__Pb__RowDatasetVersionRun *run_mem;
	Lt__Pb__RowDatasetVersionRun **runs;
	Lt__Pb__U64Segment *segs;
	Lt__Pb__U64Segment__Range *ranges;
	lt_code		rc;

	for (uint64_t i = 0; i < n; i++)
		n_runs += (i == 0 || (versions && versions[i] != versions[i - 1]));
	run_mem = lt_calloc(n_runs ? n_runs : 1, sizeof(*run_mem));
	runs = lt_calloc(n_runs ? n_runs : 1, sizeof(*runs));
	segs = lt_calloc(n_runs ? n_runs : 1, sizeof(*segs));
	ranges = lt_calloc(n_runs ? n_runs : 1, sizeof(*ranges));
	if (!run_mem || !runs || !segs || !ranges)
		rc = lt_nomem(err);
	else
	{
		size_t		k = 0;

		for (uint64_t i = 0; i < n; i++)
		{
			if (i > 0 && !(versions && versions[i] != versions[i - 1]))
			{
				ranges[k - 1].end = i + 1;
				continue;
			}
			lt__pb__row_dataset_version_run__init(&run_mem[k]);
			lt__pb__u64_segment__init(&segs[k]);
			lt__pb__u64_segment__range__init(&ranges[k]);
			ranges[k].has_start = ranges[k].has_end = true;
			ranges[k].start = i;
			ranges[k].end = i + 1;
			segs[k].segment_case = LT__PB__U64_SEGMENT__SEGMENT_RANGE;
			segs[k].range = &ranges[k];
			run_mem[k].span = &segs[k];
			run_mem[k].has_version = true;
			run_mem[k].version = versions ? versions[i] : version;
			runs[k] = &run_mem[k];
			k++;
		}
		seq.n_runs = k;
		seq.runs = runs;
		rc = pack_msg(&seq.base, out, a, err);
	}
	lt_free(run_mem);
	lt_free(runs);
	lt_free(segs);
	lt_free(ranges);
	return rc;
}

static int
cmp_id_version(const void *a, const void *b)
{
	uint64_t	x = ((const id_version *) a)->id, y = ((const id_version *) b)->id;

	return x < y ? -1 : x > y;
}

static uint64_t
created_at(const id_version *tab, size_t n, uint64_t id, uint64_t dflt)
{
	size_t		lo = 0, hi = n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (tab[mid].id == id)
			return tab[mid].version;
		if (tab[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return dflt;
}

/* ---- begin, changes, savepoints ----------------------------------------- */

static lt_code
check_writable(const lt_dataset *ds, const char *name, lt_error *err)
{
	uint64_t	w = ds->manifest->writer_feature_flags;

	if (w & ~(uint64_t) KNOWN_WRITER_FLAGS)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"version %llu of %s needs writer features 0x%llx unknown to lt_fdw: it cannot be written",
							(unsigned long long) ds->version, name,
							(unsigned long long) (w & ~(uint64_t) KNOWN_WRITER_FLAGS));
	if (ds->manifest->n_base_paths > 0)
		return lt_error_set(err, LT_EUNSUPPORTED, "version %llu of %s uses base paths, which lt_fdw cannot write",
							(unsigned long long) ds->version, name);
	if (strcmp(ds->storage_version, "0.1") == 0)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"%s uses the legacy 0.1 storage format, which lt_fdw cannot write", name);
	return LT_OK;
}

lt_code
lt_txn_begin(lt_dataset *read, lt_txn **out, lt_error *err)
{
	lt_txn	   *t;

	*out = NULL;
	if (!(t = lt_calloc(1, sizeof(lt_txn))))
		return lt_nomem(err);
	t->read = read;
	dataset_name(read, t->name, sizeof(t->name));
	{
		lt_code		rc = check_writable(read, t->name, err);

		if (rc != LT_OK)
		{
			lt_free(t);
			return rc;
		}
	}
	t->first_new_id = next_fragment_id(read);
	t->next_row_id = read->manifest->has_next_row_id ? read->manifest->next_row_id : 0;
	*out = t;
	return LT_OK;
}

static void
invalidate(lt_txn *t)
{
	t->settled = false;
	t->view_valid = false;
}

static lt_code
journal(lt_txn *t, jkind kind, uint64_t frag_id, roaring_bitmap_t *rows, lt_error *err)
{
	if (!grow((void **) &t->log, &t->cap_log, t->n_log + 1, sizeof(jentry)))
	{
		if (rows)
			roaring_bitmap_free(rows);
		return lt_nomem(err);
	}
	t->log[t->n_log].kind = kind;
	t->log[t->n_log].frag_id = frag_id;
	t->log[t->n_log].rows = rows;
	t->log[t->n_log].keys = NULL;
	t->log[t->n_log].keep_indexes = false;
	t->n_log++;
	invalidate(t);
	return LT_OK;
}

static void
added_free(added *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->frag.n_files; i++)
	{
		Lt__Pb__DataFile *d = a->frag.files[i];

		lt_free(d->path);
		lt_free(d->fields);
		lt_free(d->column_indices);
		lt_free(d);
	}
	lt_free(a->frag.files);
	if (a->frag.row_id_sequence_case == LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS)
		lt_free(a->frag.inline_row_ids.data);
	lt_free(a->row_ids);
	lt_free(a);
}

/* The provisional row ids of added fragment k (the view's; the commit assigns its own). */
static lt_code
provisional_row_ids(lt_txn *t, added *a, lt_error *err)
{
	uint64_t	start = t->next_row_id;

	for (size_t k = 0; k < t->n_adds && t->adds[k] != a; k++)
		if (!t->adds[k]->row_ids)
			start += t->adds[k]->frag.physical_rows;
	if (a->frag.row_id_sequence_case == LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS)
		lt_free(a->frag.inline_row_ids.data);
	a->frag.row_id_sequence_case = LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET;
	LT_TRY(encode_row_ids(start, a->frag.physical_rows, a->row_ids, &a->frag.inline_row_ids, NULL, err));
	a->frag.row_id_sequence_case = LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS;
	return LT_OK;
}

lt_code
lt_txn_add_fragment(lt_txn *t, int n_files, const lt_written_file *files, const uint64_t *row_ids,
					uint64_t *fragment_id, lt_error *err)
{
	added	   *a;
	uint64_t	id = t->first_new_id + t->n_adds;
	lt_code		rc = LT_OK;

	if (t->broken)
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	if (n_files < 1)
		return lt_error_set(err, LT_EINVALID, "a new fragment needs at least one data file");
	if (id > UINT32_MAX)
		return lt_error_set(err, LT_EINVALID, "%s has run out of fragment ids", t->name);
	for (int i = 0; i < n_files; i++)
	{
		if (files[i].num_rows != files[0].num_rows)
			return lt_error_set(err, LT_EINVALID, "the data files of a new fragment hold %llu and %llu rows",
								(unsigned long long) files[0].num_rows, (unsigned long long) files[i].num_rows);
		if (!files[i].name || !files[i].name[0] || strchr(files[i].name, '/'))
			return lt_error_set(err, LT_EINVALID, "invalid data file name for a new fragment");
	}
	{
		/* every data file of a version is in the dataset's storage version */
		unsigned	major = 0, minor = 0;

		if (sscanf(t->read->storage_version, "%u.%u", &major, &minor) == 2)
			for (int i = 0; i < n_files; i++)
				if (files[i].major != major || files[i].minor != minor)
					return lt_error_set(err, LT_EINVALID,
										"data file %s is in file version %u.%u, but %s stores %s",
										files[i].name, files[i].major, files[i].minor, t->name,
										t->read->storage_version);
	}
	if (files[0].num_rows == 0 || files[0].num_rows > UINT32_MAX)
		return lt_error_set(err, LT_EINVALID, "a new fragment needs 1 to 2^32-1 rows, not %llu",
							(unsigned long long) files[0].num_rows);
	if (!(a = lt_calloc(1, sizeof(added))))
		return lt_nomem(err);
	lt__pb__data_fragment__init(&a->frag);
	a->frag.has_id = true;
	a->frag.id = id;
	a->frag.has_physical_rows = true;
	a->frag.physical_rows = files[0].num_rows;
	if (!(a->frag.files = lt_calloc((size_t) n_files, sizeof(Lt__Pb__DataFile *))))
		rc = lt_nomem(err);
	for (int i = 0; rc == LT_OK && i < n_files; i++)
	{
		Lt__Pb__DataFile *d = lt_calloc(1, sizeof(Lt__Pb__DataFile));
		const lt_written_file *w = &files[i];
		size_t		nf = (size_t) (w->n_fields > 0 ? w->n_fields : 0);

		if (!d)
		{
			rc = lt_nomem(err);
			break;
		}
		lt__pb__data_file__init(d);
		a->frag.files[a->frag.n_files++] = d;
		d->path = lt_strdup(w->name);
		d->fields = lt_malloc(nf ? nf * sizeof(int32_t) : 1);
		d->column_indices = lt_malloc(nf ? nf * sizeof(int32_t) : 1);
		if (!d->path || !d->fields || !d->column_indices)
		{
			rc = lt_nomem(err);
			break;
		}
		if (nf)
		{
			memcpy(d->fields, w->field_ids, nf * sizeof(int32_t));
			memcpy(d->column_indices, w->column_indices, nf * sizeof(int32_t));
		}
		d->n_fields = d->n_column_indices = nf;
		d->has_file_major_version = d->has_file_minor_version = true;
		d->file_major_version = w->major;
		d->file_minor_version = w->minor;
		d->has_file_size_bytes = w->size > 0;
		d->file_size_bytes = w->size;
	}
	if (rc == LT_OK && row_ids && t->read->stable_row_ids)
	{
		if (!(a->row_ids = lt_malloc(a->frag.physical_rows * sizeof(uint64_t))))
			rc = lt_nomem(err);
		else
			memcpy(a->row_ids, row_ids, a->frag.physical_rows * sizeof(uint64_t));
	}
	if (rc == LT_OK && !grow((void **) &t->adds, &t->cap_adds, t->n_adds + 1, sizeof(added *)))
		rc = lt_nomem(err);
	if (rc == LT_OK)
	{
		t->adds[t->n_adds++] = a;
		if (t->read->stable_row_ids)
			rc = provisional_row_ids(t, a, err);
		if (rc == LT_OK)
			rc = journal(t, J_ADD, id, NULL, err);
		if (rc != LT_OK)
			t->n_adds--;
	}
	if (rc != LT_OK)
	{
		added_free(a);
		return rc;
	}
	*fragment_id = id;
	return LT_OK;
}

/* Physical rows of a fragment the transaction can see (read version or added), or LT_EINVALID. */
static lt_code
fragment_rows(lt_txn *t, uint64_t id, uint64_t *rows, lt_error *err)
{
	const Lt__Pb__DataFragment *f;

	if (id >= t->first_new_id && id - t->first_new_id < t->n_adds)
	{
		*rows = t->adds[id - t->first_new_id]->frag.physical_rows;
		return LT_OK;
	}
	if ((f = lt_dataset_fragment(t->read, id)))
	{
		*rows = f->physical_rows;
		return LT_OK;
	}
	return lt_error_set(err, LT_EINVALID, "fragment %llu does not exist in version %llu of %s",
						(unsigned long long) id, (unsigned long long) t->read->version, t->name);
}

lt_code
lt_txn_delete_rows(lt_txn *t, uint64_t fragment_id, const uint32_t *offsets, uint64_t n, lt_error *err)
{
	uint64_t	rows;
	roaring_bitmap_t *r;

	if (t->broken)
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	LT_TRY(fragment_rows(t, fragment_id, &rows, err));
	if (n == 0)
		return LT_OK;
	for (uint64_t i = 0; i < n; i++)
		if (offsets[i] >= rows)
			return lt_error_set(err, LT_EINVALID, "row %u is past the end of fragment %llu (%llu rows) of %s",
								offsets[i], (unsigned long long) fragment_id, (unsigned long long) rows, t->name);
	/* row-at-a-time deletes of one fragment grow one entry (unless a savepoint lies in between) */
	if (t->n_log > 0 && t->n_log - 1 >= t->last_mark && t->log[t->n_log - 1].kind == J_DELETE &&
		t->log[t->n_log - 1].frag_id == fragment_id)
	{
		roaring_bitmap_add_many(t->log[t->n_log - 1].rows, (size_t) n, offsets);
		invalidate(t);
		return LT_OK;
	}
	if (!(r = roaring_bitmap_of_ptr((size_t) n, offsets)))
		return lt_nomem(err);
	return journal(t, J_DELETE, fragment_id, r, err);
}

lt_code
lt_txn_remove_fragment(lt_txn *t, uint64_t fragment_id, lt_error *err)
{
	uint64_t	rows;

	if (t->broken)
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	LT_TRY(fragment_rows(t, fragment_id, &rows, err));
	return journal(t, J_REMOVE, fragment_id, NULL, err);
}

lt_code
lt_txn_assert_unique_keys(lt_txn *t, lt_key_filter *filter, lt_error *err)
{
	lt_code		rc;

	if (t->broken)
	{
		lt_key_filter_free(filter);
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	}
	if (!filter)
		return lt_error_set(err, LT_EINVALID, "a unique-key assertion on %s needs a key filter", t->name);
	if ((rc = journal(t, J_KEYS, 0, NULL, err)) != LT_OK)
	{
		lt_key_filter_free(filter);
		return rc;
	}
	t->log[t->n_log - 1].keys = filter;
	return LT_OK;
}

lt_code
lt_txn_replace_all(lt_txn *t, bool keep_indexes, lt_error *err)
{
	if (t->broken)
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	LT_TRY(journal(t, J_REPLACE, 0, NULL, err));
	t->log[t->n_log - 1].keep_indexes = keep_indexes;
	return LT_OK;
}

/* The transaction's key claim: the newest assertion still in the journal, or NULL. */
static lt_key_filter *
asserted_keys(const lt_txn *t)
{
	for (size_t i = t->n_log; i > 0; i--)
		if (t->log[i - 1].kind == J_KEYS)
			return t->log[i - 1].keys;
	return NULL;
}

bool
lt_txn_is_empty(const lt_txn *t)
{
	return t->n_log == 0;
}

lt_txn_mark
lt_txn_savepoint(lt_txn *t)
{
	t->last_mark = t->n_log;
	return t->n_log;
}

lt_code
lt_txn_rollback_to(lt_txn *t, lt_txn_mark mark, lt_error *err)
{
	if (mark > t->n_log)
		return lt_error_set(err, LT_EINVALID, "savepoint %llu is not in the transaction on %s",
							(unsigned long long) mark, t->name);
	while (t->n_log > mark)
	{
		jentry	   *j = &t->log[--t->n_log];

		/* an added fragment is kept until lt_txn_free: a view taken before may still scan it */
		if (j->kind == J_ADD)
		{
			if (!grow((void **) &t->dropped, &t->cap_dropped, t->n_dropped + 1, sizeof(added *)))
				return lt_nomem(err);
			t->dropped[t->n_dropped++] = t->adds[--t->n_adds];
		}
		if (j->rows)
			roaring_bitmap_free(j->rows);
		lt_key_filter_free(j->keys);
	}
	if (t->last_mark > mark)
		t->last_mark = mark;
	invalidate(t);
	return LT_OK;
}

/* ---- settling the journal ------------------------------------------------ */

static void
changes_free(lt_txn *t)
{
	for (size_t i = 0; i < t->n_changes; i++)
	{
		if (t->changes[i].ours)
			roaring_bitmap_free(t->changes[i].ours);
		if (t->changes[i].all)
			roaring_bitmap_free(t->changes[i].all);
	}
	lt_free(t->changes);
	t->changes = NULL;
	t->n_changes = 0;
}

static lt_code
base_rows(lt_txn *t, const Lt__Pb__DataFragment *frag, const roaring_bitmap_t **out, lt_error *err)
{
	for (size_t i = 0; i < t->n_bases; i++)
		if (t->bases[i].id == frag->id)
		{
			*out = t->bases[i].rows;
			return LT_OK;
		}
	if (!grow((void **) &t->bases, &t->cap_bases, t->n_bases + 1, sizeof(base_dv)))
		return lt_nomem(err);
	LT_TRY(load_dv(t->read, frag, &t->bases[t->n_bases].rows, err));
	t->bases[t->n_bases].id = frag->id;
	*out = t->bases[t->n_bases++].rows;
	return LT_OK;
}

static int
cmp_change(const void *a, const void *b)
{
	uint64_t	x = ((const change *) a)->id, y = ((const change *) b)->id;

	return x < y ? -1 : x > y;
}

static change *
find_change(lt_txn *t, uint64_t id)
{
	for (size_t i = 0; i < t->n_changes; i++)
		if (t->changes[i].id == id)
			return &t->changes[i];
	return NULL;
}

/* A new change of fragment id (read version's or added), no rows yet. */
static change *
new_change(lt_txn *t, uint64_t id)
{
	change	   *c = &t->changes[t->n_changes++];

	c->id = id;
	if (id >= t->first_new_id && id - t->first_new_id < t->n_adds)
	{
		c->add = t->adds[id - t->first_new_id];
		c->physical_rows = c->add->frag.physical_rows;
	}
	else
	{
		c->orig = lt_dataset_fragment(t->read, id);
		c->physical_rows = c->orig->physical_rows;
	}
	return (c->ours = roaring_bitmap_create()) ? c : NULL;
}

/* The journal position of the newest lt_txn_replace_all (n_log when there is none). */
static size_t
replace_at(const lt_txn *t)
{
	for (size_t i = t->n_log; i > 0; i--)
		if (t->log[i - 1].kind == J_REPLACE)
			return i - 1;
	return t->n_log;
}

static lt_code
settle(lt_txn *t, lt_error *err)
{
	size_t		n = 0,
				r = replace_at(t),
				first = 0;

	if (t->settled)
		return LT_OK;
	changes_free(t);
	for (size_t i = 0; i < t->n_log; i++)
		n += t->log[i].kind == J_DELETE || t->log[i].kind == J_REMOVE;
	if (r < t->n_log)
		n += t->read->n_fragments + t->n_adds;
	if (n == 0)
	{
		t->settled = true;
		return LT_OK;
	}
	if (!(t->changes = lt_calloc(n, sizeof(change))))
		return lt_nomem(err);
	if (r < t->n_log)
	{
		/* a replace: every fragment there was at that point loses every row (what came before is moot) */
		size_t		adds_before = 0;

		for (size_t i = 0; i < r; i++)
			adds_before += t->log[i].kind == J_ADD;
		for (size_t i = 0; i < t->read->n_fragments + adds_before; i++)
		{
			change	   *c = new_change(t, i < t->read->n_fragments ? t->read->fragments[i]->id
										   : t->first_new_id + (i - t->read->n_fragments));

			if (!c)
				return lt_nomem(err);
			roaring_bitmap_add_range(c->ours, 0, c->physical_rows);
		}
		first = r + 1;
	}
	for (size_t i = first; i < t->n_log; i++)
	{
		jentry	   *j = &t->log[i];
		change	   *c;

		if (j->kind != J_DELETE && j->kind != J_REMOVE)
			continue;
		if (!(c = find_change(t, j->frag_id)) && !(c = new_change(t, j->frag_id)))
			return lt_nomem(err);
		if (j->kind == J_DELETE)
			roaring_bitmap_or_inplace(c->ours, j->rows);
		else
			roaring_bitmap_add_range(c->ours, 0, c->physical_rows);
	}
	qsort(t->changes, t->n_changes, sizeof(change), cmp_change);
	for (size_t i = 0; i < t->n_changes; i++)
	{
		change	   *c = &t->changes[i];

		if (c->orig)
		{
			const roaring_bitmap_t *b = NULL;

			LT_TRY(base_rows(t, c->orig, &b, err));
			roaring_bitmap_andnot_inplace(c->ours, b);
			c->all = roaring_bitmap_or(c->ours, b);
		}
		else
			c->all = roaring_bitmap_copy(c->ours);
		if (!c->all)
			return lt_nomem(err);
		c->gone = roaring_bitmap_get_cardinality(c->all) >= c->physical_rows;
	}
	t->settled = true;
	return LT_OK;
}

static change *
change_of(lt_txn *t, uint64_t id)
{
	size_t		lo = 0, hi = t->n_changes;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (t->changes[mid].id == id)
			return &t->changes[mid];
		if (t->changes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- the own-writes view ------------------------------------------------- */

static void
view_free(txn_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n_arrays; i++)
		lt_free(v->arrays[i]);
	lt_free(v->arrays);
	lt_free(v->frags);
	lt_free(v->copies);
	lt_free(v->dfs);
	lt_free(v->dvs);
	lt_free(v);
}

lt_code
lt_txn_view(lt_txn *t, lt_dataset **out, lt_error *err)
{
	lt_dataset *r = t->read;
	size_t		cap = r->n_fragments + t->n_adds;
	size_t		nc;
	size_t		nf = 0, nd = 0;
	txn_view   *v;

	*out = NULL;
	if (t->view_valid)
	{
		*out = &t->views->ds;
		return LT_OK;
	}
	LT_TRY(settle(t, err));
	nc = t->n_changes ? t->n_changes : 1;
	if (!(v = lt_calloc(1, sizeof(txn_view))))
		return lt_nomem(err);
	v->frags = lt_calloc(cap ? cap : 1, sizeof(Lt__Pb__DataFragment *));
	v->copies = lt_calloc(nc, sizeof(Lt__Pb__DataFragment));
	v->dfs = lt_calloc(nc, sizeof(Lt__Pb__DeletionFile));
	v->dvs = lt_calloc(nc, sizeof(lt_dv_override));
	v->arrays = lt_calloc(nc, sizeof(uint32_t *));
	if (!v->frags || !v->copies || !v->dfs || !v->dvs || !v->arrays)
	{
		view_free(v);
		return lt_nomem(err);
	}
	for (size_t i = 0; i < cap; i++)
	{
		const Lt__Pb__DataFragment *f = i < r->n_fragments ? r->fragments[i] : &t->adds[i - r->n_fragments]->frag;
		change	   *c = change_of(t, f->id);

		if (c && c->gone)
			continue;
		if (c)
		{
			uint64_t	card = roaring_bitmap_get_cardinality(c->all);
			uint32_t   *arr = lt_malloc(card ? card * sizeof(uint32_t) : 1);
			Lt__Pb__DataFragment *copy = &v->copies[nd];
			Lt__Pb__DeletionFile *df = &v->dfs[nd];

			if (!arr)
			{
				view_free(v);
				return lt_nomem(err);
			}
			roaring_bitmap_to_uint32_array(c->all, arr);
			v->arrays[v->n_arrays++] = arr;
			*copy = *f;
			lt__pb__deletion_file__init(df);
			df->has_num_deleted_rows = true;
			df->num_deleted_rows = card;
			copy->deletion_file = df;
			v->dvs[nd].fragment_id = f->id;
			v->dvs[nd].offsets = arr;
			v->dvs[nd].n = card;
			nd++;
			f = copy;
		}
		v->frags[nf++] = (Lt__Pb__DataFragment *) f;
	}
	v->ds = *r;
	v->ds.fragments = v->frags;
	v->ds.n_fragments = nf;
	v->ds.dv_overrides = v->dvs;
	v->ds.n_dv_overrides = nd;
	v->older = t->views;
	t->views = v;
	t->view_valid = true;
	*out = &v->ds;
	return LT_OK;
}

/* ---- conflicts with concurrent commits ------------------------------------ */

/* The transaction that made version ds: inline, else _transactions/<file>; NULL if neither parses. */
static Lt__Pb__Transaction *
transaction_of(lt_dataset *ds, bool *owned)
{
	const char *file = ds->manifest->transaction_file;
	char	   *rel, *path;
	uint8_t    *buf;
	uint64_t	len;
	Lt__Pb__Transaction *tx = NULL;
	lt_error	ignore;

	*owned = false;
	if (ds->transaction)
		return ds->transaction;
	if (!file || !file[0] || strchr(file, '/') || strstr(file, ".."))
		return NULL;
	rel = lt_asprintf("_transactions/%s", file);
	path = rel ? lt_dataset_path(ds, rel) : NULL;
	lt_free(rel);
	if (path && lt_store_read_all(ds->store, path, MAX_TXN_FILE, &buf, &len, &ignore) == LT_OK)
	{
		tx = lt__pb__transaction__unpack(lt_protobuf_allocator(), len, buf);
		lt_free(buf);
	}
	lt_free(path);
	*owned = tx != NULL;
	return tx;
}

static bool
same_files(const Lt__Pb__DataFragment *a, const Lt__Pb__DataFragment *b)
{
	if (a->n_files != b->n_files || a->physical_rows != b->physical_rows)
		return false;
	for (size_t i = 0; i < a->n_files; i++)
		if (strcmp(a->files[i]->path ? a->files[i]->path : "", b->files[i]->path ? b->files[i]->path : "") != 0)
			return false;
	return true;
}

/*
 * The composite of what this transaction does, planned against its read version (its
 * footprint decides the conflicts): deletions from the read version's fragments, the added
 * fragments, the key claim, and a replace's predicate.
 */
static lt_code
our_composite(lt_txn *t, const lt_commit_options *opts, lt_composite *out, lt_error *err)
{
	lt_key_filter *keys = asserted_keys(t);
	bool		replaced = replace_at(t) < t->n_log;
	lt_code		rc = LT_OK;

	lt_composite_init(out);
	/* a replace writes everything: the deletions it implies need no listing */
	if (replaced && (rc = lt_composite_begin(out, "truncate", err)) == LT_OK)
		rc = lt_replace_all(out, err);
	for (size_t i = 0; rc == LT_OK && !replaced && i < t->n_changes; i++)
	{
		const change *c = &t->changes[i];
		roaring_bitmap_t *rows;

		if (!c->orig || roaring_bitmap_is_empty(c->ours))
			continue;
		if (out->n_users == 0)
			rc = lt_composite_begin(out, "delete", err);
		if (rc != LT_OK)
			break;
		if (c->gone)
			rc = lt_remove_fragment(out, c->id, err);
		else if (!(rows = roaring_bitmap_copy(c->ours)))
			rc = lt_nomem(err);
		else
			rc = lt_set_deletion_file(out, c->id, rows, err);
	}
	if (rc == LT_OK && t->n_adds)
		rc = lt_composite_begin(out, "insert", err);
	for (size_t k = 0; rc == LT_OK && k < t->n_adds; k++)
	{
		const Lt__Pb__DataFragment *f = &t->adds[k]->frag;
		change	   *c = change_of(t, f->id);

		if (c && c->gone)
			continue;
		rc = lt_add_fragment(out, f->id, f->physical_rows, f->files[0]->path, f->files[0]->fields,
							 f->files[0]->n_fields, false, keys, err);
	}
	if (rc == LT_OK && keys)
		rc = lt_assert_unique_keys(out, keys, err);
	if (rc == LT_OK && opts && opts->check_new_fragment)
		rc = lt_assert_no_matching_inserts(out, err);
	if (rc != LT_OK)
		lt_composite_clear(out);
	return rc;
}

/*
 * Lifting's rows callback for the commit loop: the rows a committed Delete / Update newly
 * deleted from a fragment this transaction deletes from (its deletion vector in that version
 * less seen[i], what the versions before had); other fragments are "unknown" (we do not touch
 * them, so it does not matter).
 */
typedef struct rows_ctx
{
	lt_txn	   *t;
	lt_dataset *version;
	roaring_bitmap_t **seen;
} rows_ctx;

static lt_code
concurrent_rows(void *arg, const Lt__Pb__DataFragment *updated, roaring_bitmap_t **rows, lt_error *err)
{
	rows_ctx   *rc = arg;
	change	   *c = change_of(rc->t, updated->id);
	const Lt__Pb__DataFragment *now;
	roaring_bitmap_t *all;
	size_t		i;

	*rows = NULL;
	if (!c || !c->orig || roaring_bitmap_is_empty(c->ours) || !(now = lt_dataset_fragment(rc->version, updated->id)))
		return LT_OK;
	i = (size_t) (c - rc->t->changes);
	LT_TRY(load_dv(rc->version, now, &all, err));
	if (!(*rows = roaring_bitmap_andnot(all, rc->seen[i])))
	{
		roaring_bitmap_free(all);
		return lt_nomem(err);
	}
	roaring_bitmap_free(rc->seen[i]);
	rc->seen[i] = all;
	return LT_OK;
}

lt_code
lt_txn_check_version(const lt_composite *ours, const lt_footprint *fo, lt_dataset *prev, lt_dataset *next,
					 const char *name, lt_lift_rows_fn rows, void *rows_arg,
					 lt_code (*check_inserts) (void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err),
					 void *check_arg, lt_error *err)
{
	bool		owned;
	Lt__Pb__Transaction *tx = lt_txn_committed(next, &owned);
	lt_lift_source src = {prev, rows, rows_arg};
	lt_composite theirs;
	lt_footprint ft;
	lt_clash	why;
	size_t		cursor = 0;
	bool		inserts_checked = false;
	lt_code		rc;

	memset(&ft, 0, sizeof(ft));
	rc = lt_lift(tx, &src, &theirs, err);
	if (rc == LT_OK)
	{
		rc = lt_footprint_of(&theirs, &ft, err);
		while (rc == LT_OK && lt_next_clash(fo, &ft, &cursor, &why))
		{
			/* rows they inserted against our replace's predicate: test them, once per version */
			if (check_inserts && why.a->kind == LT_CO_PREDICATE && why.b->kind == LT_CO_INSERT)
			{
				if (!inserts_checked)
					rc = check_inserts(check_arg, prev, next, err);
				inserts_checked = true;
				continue;
			}
			{
				char		msg[LT_ERROR_MSG_LEN];

				lt_clash_describe(&why, ours, &theirs, next->version, name, msg, sizeof(msg));
				rc = lt_error_set(err, LT_ECONFLICT, "%s", msg);
			}
		}
		lt_footprint_clear(&ft);
		lt_composite_clear(&theirs);
	}
	if (owned)
		lt__pb__transaction__free_unpacked(tx, lt_protobuf_allocator());
	return rc;
}

/* The caller's check of every fragment version v added over prev (the version before it). */
static lt_code
check_new_fragments(lt_dataset *prev, lt_dataset *v, const lt_commit_options *opts, lt_error *err)
{
	for (size_t i = 0; i < v->n_fragments; i++)
		if (!lt_dataset_fragment(prev, v->fragments[i]->id))
			LT_TRY(opts->check_new_fragment(opts->check_arg, v, v->fragments[i], err));
	return LT_OK;
}

/* ---- index segments kept by a Delete or Update ---------------------------- */

static bool
is_vector_index(const Lt__Pb__IndexMetadata *m)
{
	const char *url = m->index_details && m->index_details->type_url ? m->index_details->type_url : "";
	size_t		n = strlen(url), k = strlen("VectorIndexDetails");

	return n >= k && strcmp(url + n - k, "VectorIndexDetails") == 0;
}

/* Does segment m cover a fragment of frags[0..n) (ascending ids)?  No bitmap: no. */
static lt_code
segment_covers_any(const Lt__Pb__IndexMetadata *m, Lt__Pb__DataFragment *const *frags, size_t n, bool *out,
				   lt_error *err)
{
	uint32_t   *ids = NULL;
	uint64_t	n_ids = 0;

	*out = false;
	if (!m->has_fragment_bitmap)
		return LT_OK;
	LT_TRY(lt_roaring_decode_array(m->fragment_bitmap.data, m->fragment_bitmap.len, UINT32_MAX, &ids, &n_ids,
								   NULL, err));
	for (uint64_t i = 0, j = 0; i < n_ids && j < n && !*out;)
	{
		if (frags[j]->id == ids[i])
			*out = true;
		else if (frags[j]->id < ids[i])
			j++;
		else
			i++;
	}
	lt_free(ids);
	return LT_OK;
}

/*
 * The index section of a version whose fragments are frags (ascending), from the base's: Lance 8's
 * retention rule (lt_txn.h).  *out is sec itself when every segment stays, else a copy in the arena.
 */
static lt_code
retained_indexes(Lt__Pb__IndexSection *sec, Lt__Pb__DataFragment *const *frags, size_t n, arena *a,
				 Lt__Pb__IndexSection **out, lt_error *err)
{
	bool	   *live, *keep;
	Lt__Pb__IndexSection *copy;
	size_t		kept = 0;

	*out = sec;
	if (!sec || sec->n_indices == 0)
		return LT_OK;
	live = arena_alloc(a, sec->n_indices * sizeof(bool));
	keep = arena_alloc(a, sec->n_indices * sizeof(bool));
	if (!live || !keep)
		return lt_nomem(err);
	for (size_t i = 0; i < sec->n_indices; i++)
		LT_TRY(segment_covers_any(sec->indices[i], frags, n, &live[i], err));
	for (size_t i = 0; i < sec->n_indices; i++)
	{
		const Lt__Pb__IndexMetadata *m = sec->indices[i];
		const char *name = m->name ? m->name : "";
		size_t		same = 0, same_live = 0, oldest = i;

		for (size_t j = 0; j < sec->n_indices; j++)
		{
			const Lt__Pb__IndexMetadata *o = sec->indices[j];

			if (strcmp(o->name ? o->name : "", name) != 0)
				continue;
			same++;
			same_live += live[j];
			if (o->dataset_version < sec->indices[oldest]->dataset_version)
				oldest = j;
		}
		if (strcmp(name, "__lance_frag_reuse") == 0 || live[i])
			keep[i] = true;
		else if (same == 1)
			keep[i] = !is_vector_index(m);
		else
			keep[i] = same_live == 0 && oldest == i && !is_vector_index(m);
		kept += keep[i];
	}
	if (kept == sec->n_indices)
		return LT_OK;
	if (!(copy = arena_alloc(a, sizeof(*copy))))
		return lt_nomem(err);
	*copy = *sec;
	copy->n_indices = 0;
	if (!(copy->indices = arena_alloc(a, (kept ? kept : 1) * sizeof(Lt__Pb__IndexMetadata *))))
		return lt_nomem(err);
	for (size_t i = 0; i < sec->n_indices; i++)
		if (keep[i])
			copy->indices[copy->n_indices++] = sec->indices[i];
	*out = copy->n_indices ? copy : NULL;
	return LT_OK;
}

/* ---- one commit attempt --------------------------------------------------- */

/* The creation versions of the rows we delete, from the read version's inline sequences. */
static lt_code
load_created_at(lt_txn *t, lt_error *err)
{
	size_t		cap = 0;

	for (size_t i = 0; i < t->n_changes; i++)
		if (t->changes[i].orig)
			cap += roaring_bitmap_get_cardinality(t->changes[i].ours);
	if (!(t->created = lt_malloc((cap ? cap : 1) * sizeof(id_version))))
		return lt_nomem(err);
	for (size_t i = 0; i < t->n_changes; i++)
	{
		const change *c = &t->changes[i];
		const Lt__Pb__DataFragment *f = c->orig;
		uint64_t   *ids = NULL;
		lt_version_seq *vs = NULL;
		uint64_t	n = roaring_bitmap_get_cardinality(c->ours);
		uint32_t   *offs = NULL;
		lt_code		rc;

		if (!f || f->row_id_sequence_case != LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS ||
			f->created_at_version_sequence_case !=
			LT__PB__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS)
			continue;
		rc = lt_rowids_decode(f->inline_row_ids.data, f->inline_row_ids.len, f->physical_rows, &ids, err);
		if (rc == LT_OK)
			rc = lt_version_seq_parse(f->inline_created_at_versions.data, f->inline_created_at_versions.len,
									  f->physical_rows, &vs, err);
		if (rc == LT_OK && !(offs = lt_malloc(n ? n * sizeof(uint32_t) : 1)))
			rc = lt_nomem(err);
		if (rc == LT_OK)
		{
			roaring_bitmap_to_uint32_array(c->ours, offs);
			for (uint64_t k = 0; k < n; k++)
			{
				t->created[t->n_created].id = ids[offs[k]];
				t->created[t->n_created].version = lt_version_seq_at(vs, offs[k]);
				t->n_created++;
			}
		}
		lt_free(offs);
		lt_free(ids);
		lt_version_seq_free(vs);
		if (rc != LT_OK)
		{
			lt_error_prefix(err, "fragment %llu of %s", (unsigned long long) f->id, t->name);
			return rc;
		}
	}
	qsort(t->created, t->n_created, sizeof(id_version), cmp_id_version);
	t->created_loaded = true;
	return LT_OK;
}

/* A deletion file for change c merged onto its fragment `now` of the base (the base's rows in `base`). */
static lt_code
deletion_file_for(lt_txn *t, change *c, uint64_t frag_id, const Lt__Pb__DataFragment *now,
				  const roaring_bitmap_t *final, uint64_t base_version, arena *a,
				  Lt__Pb__DeletionFile **out, lt_error *err)
{
	const Lt__Pb__DeletionFile *od = now ? now->deletion_file : NULL;
	Lt__Pb__DeletionFile *df;

	/* an earlier attempt's file still holds exactly these rows when it merged onto the same file */
	if (!(c->written && c->written_frag_id == frag_id && c->onto_file == (od != NULL) &&
		  (!od || (c->onto_rv == od->read_version && c->onto_id == od->id))))
	{
		uint64_t	n = roaring_bitmap_get_cardinality(final);
		uint32_t   *arr = lt_malloc(n ? n * sizeof(uint32_t) : 1);
		lt_code		rc;

		if (!arr)
			return lt_nomem(err);
		roaring_bitmap_to_uint32_array(final, arr);
		rc = lt_deletion_write(t->read->store, t->read->prefix, frag_id, base_version, arr, n, &c->df, err);
		lt_free(arr);
		LT_TRY(rc);
		c->written = true;
		c->written_frag_id = frag_id;
		c->onto_file = od != NULL;
		c->onto_rv = od ? od->read_version : 0;
		c->onto_id = od ? od->id : 0;
	}
	if (!(df = arena_alloc(a, sizeof(*df))))
		return lt_nomem(err);
	lt__pb__deletion_file__init(df);
	df->has_file_type = true;
	df->file_type = c->df.type == LT_DELETION_BITMAP ? LT__PB__DELETION_FILE__FILE_TYPE__BITMAP
		: LT__PB__DELETION_FILE__FILE_TYPE__ARROW_ARRAY;
	df->has_read_version = df->has_id = df->has_num_deleted_rows = true;
	df->read_version = c->df.read_version;
	df->id = c->df.id;
	df->num_deleted_rows = c->df.num_deleted_rows;
	*out = df;
	return LT_OK;
}

typedef struct attempt
{
	arena		a;
	Lt__Pb__DataFragment **frags;	/* the new version's */
	size_t		n_frags;
	Lt__Pb__DataFragment **updated;
	size_t		n_updated;
	uint64_t   *removed;
	size_t		n_removed;
	Lt__Pb__DataFragment **fresh;
	size_t		n_fresh;
	uint64_t	rows_added, rows_deleted;
} attempt;

/* The next version's fragments on top of base (version B), deletion files written. */
static lt_code
build_fragments(lt_txn *t, lt_dataset *base, attempt *at, uint64_t *next_row_id, uint32_t *max_id, lt_error *err)
{
	uint64_t	next_id = next_fragment_id(base);
	uint64_t	new_version = base->version + 1;
	size_t		cap = base->n_fragments + t->n_adds;
	arena	   *a = &at->a;

	at->frags = arena_alloc(a, (cap ? cap : 1) * sizeof(Lt__Pb__DataFragment *));
	at->updated = arena_alloc(a, (t->n_changes ? t->n_changes : 1) * sizeof(Lt__Pb__DataFragment *));
	at->removed = arena_alloc(a, (t->n_changes ? t->n_changes : 1) * sizeof(uint64_t));
	at->fresh = arena_alloc(a, (t->n_adds ? t->n_adds : 1) * sizeof(Lt__Pb__DataFragment *));
	if (a->oom)
		return lt_nomem(err);

	/* the base's fragments, with ours deleted from */
	for (size_t i = 0; i < base->n_fragments; i++)
	{
		Lt__Pb__DataFragment *f = base->fragments[i];
		change	   *c = change_of(t, f->id);
		roaring_bitmap_t *now_rows, *final;
		Lt__Pb__DataFragment *copy;
		lt_code		rc;

		if (!c || !c->orig || roaring_bitmap_is_empty(c->ours))
		{
			at->frags[at->n_frags++] = f;
			continue;
		}
		if (!same_files(f, c->orig))
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) rewrote fragment %llu, which this transaction deletes from",
								(unsigned long long) base->version, t->name, (unsigned long long) f->id);
		LT_TRY(load_dv(base, f, &now_rows, err));
		if (roaring_bitmap_intersect(now_rows, c->ours))
		{
			roaring_bitmap_free(now_rows);
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) deleted or updated some of the same rows of fragment %llu",
								(unsigned long long) base->version, t->name, (unsigned long long) f->id);
		}
		final = roaring_bitmap_or(now_rows, c->ours);
		roaring_bitmap_free(now_rows);
		if (!final)
			return lt_nomem(err);
		at->rows_deleted += roaring_bitmap_get_cardinality(c->ours);
		if (roaring_bitmap_get_cardinality(final) >= f->physical_rows)
		{
			roaring_bitmap_free(final);
			at->removed[at->n_removed++] = f->id;
			continue;
		}
		if (!(copy = arena_alloc(a, sizeof(*copy))))
			rc = lt_nomem(err);
		else
		{
			*copy = *f;
			rc = deletion_file_for(t, c, f->id, f, final, base->version, a, &copy->deletion_file, err);
		}
		roaring_bitmap_free(final);
		LT_TRY(rc);
		at->frags[at->n_frags++] = copy;
		at->updated[at->n_updated++] = copy;
	}
	/* fragments of the read version we delete from must still be there */
	for (size_t i = 0; i < t->n_changes; i++)
		if (t->changes[i].orig && !roaring_bitmap_is_empty(t->changes[i].ours) && !lt_dataset_fragment(base, t->changes[i].id))
			return lt_error_set(err, LT_ECONFLICT,
								"concurrent commit (version %llu of %s) removed fragment %llu, which this transaction deletes from",
								(unsigned long long) base->version, t->name, (unsigned long long) t->changes[i].id);

	/* the added fragments: ids after the base's, row ids after its next_row_id */
	for (size_t k = 0; k < t->n_adds; k++)
	{
		added	   *ad = t->adds[k];
		change	   *c = change_of(t, ad->frag.id);
		Lt__Pb__DataFragment *copy;
		uint64_t	rows = ad->frag.physical_rows;

		if (c && c->gone)
			continue;
		if (next_id > UINT32_MAX)
			return lt_error_set(err, LT_EINVALID, "%s has run out of fragment ids", t->name);
		if (!(copy = arena_alloc(a, sizeof(*copy))))
			return lt_nomem(err);
		*copy = ad->frag;
		copy->has_id = true;
		copy->id = next_id++;
		copy->row_id_sequence_case = LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET;
		if (base->stable_row_ids)
		{
			LT_TRY(encode_row_ids(*next_row_id, rows, ad->row_ids, &copy->inline_row_ids, a, err));
			copy->row_id_sequence_case = LT__PB__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS;
			if (!ad->row_ids)
				*next_row_id += rows;
			LT_TRY(encode_versions(rows, NULL, new_version, &copy->inline_last_updated_at_versions, a, err));
			copy->last_updated_at_version_sequence_case =
				LT__PB__DATA_FRAGMENT__LAST_UPDATED_AT_VERSION_SEQUENCE_INLINE_LAST_UPDATED_AT_VERSIONS;
			if (ad->row_ids)
			{
				/* moved rows keep the version that created them */
				uint64_t   *vs = arena_alloc(a, rows * sizeof(uint64_t));

				if (!vs)
					return lt_nomem(err);
				if (!t->created_loaded)
					LT_TRY(load_created_at(t, err));
				for (uint64_t i = 0; i < rows; i++)
					vs[i] = created_at(t->created, t->n_created, ad->row_ids[i], new_version);
				LT_TRY(encode_versions(rows, vs, new_version, &copy->inline_created_at_versions, a, err));
			}
			else
				LT_TRY(encode_versions(rows, NULL, new_version, &copy->inline_created_at_versions, a, err));
			copy->created_at_version_sequence_case =
				LT__PB__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS;
		}
		if (c && !roaring_bitmap_is_empty(c->ours))
		{
			LT_TRY(deletion_file_for(t, c, copy->id, NULL, c->ours, base->version, a, &copy->deletion_file, err));
			rows -= roaring_bitmap_get_cardinality(c->ours);
		}
		at->rows_added += rows;
		at->frags[at->n_frags++] = copy;
		at->fresh[at->n_fresh++] = copy;
	}
	{
		uint64_t	m = base->manifest->has_max_fragment_id ? base->manifest->max_fragment_id : 0;

		if (next_id > 0 && next_id - 1 > m)
			m = next_id - 1;
		*max_id = (uint32_t) m;
	}
	return LT_OK;
}

static lt_code
write_hint(lt_dataset *base, uint64_t version)
{
	char		json[64];
	char	   *path = lt_dataset_path(base, "_versions/latest_version_hint.json");
	lt_error	ignore;

	/* as Lance: where listings are ordered (S3), readers find the latest with one LIST and need no hint */
	if (base->store->list_ordered)
	{
		lt_free(path);
		return LT_OK;
	}
	if (!path)
		return LT_ENOMEM;
	snprintf(json, sizeof(json), "{\"version\":%" PRIu64 "}", version);
	/* a hint: readers check it against the listing, so it need not survive a crash */
	lt_store_put_unsynced(base->store, path, (const uint8_t *) json, strlen(json), &ignore);
	lt_free(path);
	return LT_OK;
}

/*
 * Publish version base->version + 1: the manifest m (the base's with what changed,
 * feature flags set) stamped with its version, time and writer, and the
 * transaction tx (uuid and read version set); indexes is its index section.  The
 * transaction file goes first (unless the dataset disables them), then the manifest
 * is created only if its slot is free: LT_ECONFLICT with *lost_race when another
 * writer took it (our transaction file is removed again; after other failures it
 * is an orphan for lt_cleanup, since the manifest may have landed after all).  Every commit kind goes
 * through here, so the crash tests' fault points cover them all.
 */
lt_code
lt_txn_publish(lt_dataset *base, const Lt__Pb__Manifest *manifest, const Lt__Pb__IndexSection *indexes,
			   Lt__Pb__Transaction *tx, const char *name, bool *lost_race, lt_error *err)
{
	Lt__Pb__Manifest m = *manifest;
	Lt__Pb__PbTimestamp ts = LT__PB__PB_TIMESTAMP__INIT;
	Lt__Pb__WriterVersion wv = LT__PB__WRITER_VERSION__INIT;
	ProtobufCBinaryData packed = {0};
	char		man_name[64];
	char	   *txn_name,
			   *txn_path = NULL,
			   *man_path = NULL,
			   *rel;
	uint8_t    *buf = NULL;
	uint64_t	len = 0;
	struct timespec now;
	lt_code		rc = LT_OK;

	*lost_race = false;
	m.has_version = true;
	m.version = base->version + 1;
	clock_gettime(CLOCK_REALTIME, &now);
	ts.has_seconds = ts.has_nanos = true;
	ts.seconds = now.tv_sec;
	ts.nanos = (int32_t) now.tv_nsec;
	m.timestamp = &ts;
	m.tag = NULL;
	wv.library = "lance";
	wv.version = "8.0.0";
	wv.build_metadata = "lt-fdw";
	m.writer_version = &wv;
	if (!(txn_name = lt_asprintf("%" PRIu64 "-%s.txn", base->version, tx->uuid)))
		return lt_nomem(err);
	m.transaction_file = (m.writer_feature_flags & LT_FLAG_DISABLE_TXN_FILE) ? NULL : txn_name;
	if (m.transaction_file)
	{
		rel = lt_asprintf("_transactions/%s", txn_name);
		txn_path = rel ? lt_dataset_path(base, rel) : NULL;
		lt_free(rel);
		rc = txn_path ? pack_msg(&tx->base, &packed, NULL, err) : lt_nomem(err);
		if (rc == LT_OK)
			/* not fsync'd: the manifest carries the transaction inline (its durable copy) */
			rc = lt_store_put_unsynced(base->store, txn_path, packed.data, packed.len, err);
		if (rc != LT_OK)
			goto out;
	}
	fault(LT_COMMIT_AFTER_TXN_FILE);
	if ((rc = lt_manifest_serialize(&m, indexes, tx, &buf, &len, err)) != LT_OK)
		goto out;
	lt_manifest_name(m.version, base->naming, man_name, sizeof(man_name));
	rel = lt_asprintf("_versions/%s", man_name);
	man_path = rel ? lt_dataset_path(base, rel) : NULL;
	lt_free(rel);
	if (!man_path)
	{
		rc = lt_nomem(err);
		goto out;
	}
	if (lt_commit_fault_hook)
	{
		/* what a crash while writing the manifest leaves: a torn file under a temporary name */
		char	   *tmp = lt_asprintf("%s.tmp-torn", man_path);

		if (tmp)
			lt_store_put(base->store, tmp, buf, len / 2, NULL);
		lt_free(tmp);
		fault(LT_COMMIT_MID_MANIFEST);
	}
	rc = lt_store_put_if_absent(base->store, man_path, buf, len, err);
	if (rc == LT_ECONFLICT)
	{
		*lost_race = true;
		lt_error_set(err, LT_ECONFLICT, "version %llu of %s was committed concurrently",
					 (unsigned long long) m.version, name);
	}
	if (rc != LT_OK)
		goto out;
	fault(LT_COMMIT_AFTER_MANIFEST);
	write_hint(base, m.version);
out:
	if (*lost_race)
		lt_store_remove(base->store, txn_path, NULL);	/* a lost race leaves nothing behind */
	lt_free(packed.data);
	lt_free(buf);
	lt_free(man_path);
	lt_free(txn_path);
	lt_free(txn_name);
	return rc;
}

/* An Overwrite carries the schema's metadata as the manifest holds it. */
static lt_code
overwrite_metadata(const Lt__Pb__Manifest *m, Lt__Pb__Transaction__Overwrite *ow, arena *a, lt_error *err)
{
	Lt__Pb__Transaction__Overwrite__SchemaMetadataEntry *e;

	if (m->n_schema_metadata == 0)
		return LT_OK;
	e = arena_alloc(a, m->n_schema_metadata * sizeof(*e));
	ow->schema_metadata = arena_alloc(a, m->n_schema_metadata * sizeof(*ow->schema_metadata));
	if (!e || !ow->schema_metadata)
		return lt_nomem(err);
	for (size_t i = 0; i < m->n_schema_metadata; i++)
	{
		lt__pb__transaction__overwrite__schema_metadata_entry__init(&e[i]);
		e[i].key = m->schema_metadata[i]->key;
		e[i].has_value = m->schema_metadata[i]->has_value;
		e[i].value = m->schema_metadata[i]->value;
		ow->schema_metadata[i] = &e[i];
	}
	ow->n_schema_metadata = m->n_schema_metadata;
	return LT_OK;
}

/*
 * The index section after a replace that keeps the indexes' definitions: every segment stays,
 * covering no fragment (an empty fragment bitmap), so the new rows are simply unindexed.
 */
static lt_code
emptied_indexes(const Lt__Pb__IndexSection *sec, arena *a, Lt__Pb__IndexSection **out, lt_error *err)
{
	Lt__Pb__IndexSection *copy;
	Lt__Pb__IndexMetadata *metas;
	roaring_bitmap_t *none;
	uint8_t    *bm;
	size_t		len;

	*out = NULL;
	if (!sec || sec->n_indices == 0)
		return LT_OK;
	if (!(none = roaring_bitmap_create()))
		return lt_nomem(err);
	len = roaring_bitmap_portable_size_in_bytes(none);
	copy = arena_alloc(a, sizeof(*copy));
	metas = arena_alloc(a, sec->n_indices * sizeof(*metas));
	bm = arena_alloc(a, len);
	if (copy && metas && bm)
	{
		*copy = *sec;
		copy->indices = arena_alloc(a, sec->n_indices * sizeof(*copy->indices));
	}
	if (!copy || !metas || !bm || !copy->indices)
	{
		roaring_bitmap_free(none);
		return lt_nomem(err);
	}
	roaring_bitmap_portable_serialize(none, (char *) bm);
	roaring_bitmap_free(none);
	for (size_t i = 0; i < sec->n_indices; i++)
	{
		metas[i] = *sec->indices[i];
		metas[i].has_fragment_bitmap = true;
		metas[i].fragment_bitmap.data = bm;
		metas[i].fragment_bitmap.len = len;
		copy->indices[i] = &metas[i];
	}
	*out = copy;
	return LT_OK;
}

/*
 * The legacy operation the attempt's result is written as: the composite of what it
 * materialized (updated and removed fragments, new ones, the key claim) lowered.
 */
static lt_code
lower(const attempt *at, lt_key_filter *keys, bool replaced, lt_txn_op *op, lt_error *err)
{
	lt_composite low;
	lt_code		rc = LT_OK;

	lt_composite_init(&low);
	if (replaced)
		rc = lt_replace_all(&low, err);
	for (size_t i = 0; rc == LT_OK && !replaced && i < at->n_updated; i++)
		rc = lt_set_deletion_file(&low, at->updated[i]->id, NULL, err);
	for (size_t i = 0; rc == LT_OK && !replaced && i < at->n_removed; i++)
		rc = lt_remove_fragment(&low, at->removed[i], err);
	for (size_t i = 0; rc == LT_OK && i < at->n_fresh; i++)
		rc = lt_add_fragment(&low, at->fresh[i]->id, at->fresh[i]->physical_rows, NULL, NULL, 0, false, keys, err);
	/* after a replace the claim is moot: the Overwrite conflicts with every concurrent insert anyway */
	if (rc == LT_OK && keys && at->n_fresh && !replaced)
		rc = lt_assert_unique_keys(&low, keys, err);
	if (rc == LT_OK)
		switch (lt_lower_op(&low))
		{
			case LT_LOWER_APPEND: *op = LT_OP_APPEND; break;
			case LT_LOWER_DELETE: *op = LT_OP_DELETE; break;
			case LT_LOWER_UPDATE: *op = LT_OP_UPDATE; break;
			case LT_LOWER_OVERWRITE: *op = LT_OP_OVERWRITE; break;
			default:
				rc = lt_error_set(err, LT_EINVALID, "a transaction of this kind cannot be written as a Lance operation");
				break;
		}
	lt_composite_clear(&low);
	return rc;
}

/*
 * One attempt on top of base: returns LT_ECONFLICT (err says so) when the manifest's
 * slot was taken, which the caller retries.
 */
static lt_code
try_commit(lt_txn *t, lt_dataset *base, const lt_commit_options *opts, lt_commit_result *res,
		   bool *lost_race, lt_error *err)
{
	attempt		at = {0};
	Lt__Pb__Manifest m;
	Lt__Pb__Transaction tx = LT__PB__TRANSACTION__INIT;
	Lt__Pb__Transaction__Append app = LT__PB__TRANSACTION__APPEND__INIT;
	Lt__Pb__Transaction__Delete del = LT__PB__TRANSACTION__DELETE__INIT;
	Lt__Pb__Transaction__Update upd = LT__PB__TRANSACTION__UPDATE__INIT;
	uint64_t	next_row_id = base->manifest->has_next_row_id ? base->manifest->next_row_id : 0;
	uint32_t	max_id = 0;
	uint8_t		uuid[16];
	char		uuid_text[40];
	bool		any_deletion = false;
	uint64_t	rflags, wflags;
	lt_txn_op	op = LT_OP_NONE;
	Lt__Pb__IndexSection *indexes = base->index_section;
	lt_key_filter *keys = asserted_keys(t);
	lt_key_filter_pb kpb;
	size_t		r = replace_at(t);
	bool		replaced = r < t->n_log;
	Lt__Pb__Transaction__Overwrite ow = LT__PB__TRANSACTION__OVERWRITE__INIT;
	lt_code		rc;

	*lost_race = false;
	LT_TRY(check_writable(base, t->name, err));
	rc = build_fragments(t, base, &at, &next_row_id, &max_id, err);
	if (rc != LT_OK)
		goto out;
	if (at.n_updated == 0 && at.n_removed == 0 && at.n_fresh == 0)
	{
		res->op = LT_OP_NONE;
		goto out;
	}
	if ((rc = lower(&at, keys, replaced, &op, err)) != LT_OK)
		goto out;

	/* the transaction */
	lt_uuid_v4(uuid, uuid_text);
	tx.has_read_version = true;
	tx.read_version = base->version;
	tx.uuid = uuid_text;
	if (op == LT_OP_APPEND)
	{
		app.n_fragments = at.n_fresh;
		app.fragments = at.fresh;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_APPEND;
		tx.append = &app;
	}
	else if (op == LT_OP_DELETE)
	{
		del.n_updated_fragments = at.n_updated;
		del.updated_fragments = at.updated;
		del.n_deleted_fragment_ids = at.n_removed;
		del.deleted_fragment_ids = at.removed;
		del.predicate = (char *) (opts && opts->predicate ? opts->predicate : NULL);
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_DELETE;
		tx.delete_ = &del;
	}
	else if (op == LT_OP_OVERWRITE)
	{
		/* the table's schema stays; its fragments are the ones added after the replace */
		ow.n_fragments = at.n_fresh;
		ow.fragments = at.fresh;
		ow.n_schema = base->manifest->n_fields;
		ow.schema = base->manifest->fields;
		if ((rc = overwrite_metadata(base->manifest, &ow, &at.a, err)) != LT_OK)
			goto out;
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_OVERWRITE;
		tx.overwrite = &ow;
	}
	else
	{
		upd.n_removed_fragment_ids = at.n_removed;
		upd.removed_fragment_ids = at.removed;
		upd.n_updated_fragments = at.n_updated;
		upd.updated_fragments = at.updated;
		upd.n_new_fragments = at.n_fresh;
		upd.new_fragments = at.fresh;
		upd.has_update_mode = true;
		upd.update_mode = LT__PB__TRANSACTION__UPDATE_MODE__REWRITE_ROWS;
		if (keys && at.n_fresh && !replaced)
		{
			/* the inserted keys, as Lance's merge-insert carries them */
			lt_key_filter_to_pb(keys, &kpb);
			upd.inserted_rows = &kpb.msg;
		}
		tx.operation_case = LT__PB__TRANSACTION__OPERATION_UPDATE;
		tx.update = &upd;
	}

	/* the manifest: the base's, with what changed */
	m = *base->manifest;
	m.n_fragments = at.n_frags;
	m.fragments = at.frags;
	for (size_t i = 0; i < at.n_frags; i++)
		any_deletion |= at.frags[i]->deletion_file != NULL;
	rflags = (any_deletion ? LT_FLAG_DELETION_FILES : 0) | (base->stable_row_ids ? LT_FLAG_STABLE_ROW_IDS : 0);
	wflags = rflags | (m.n_config ? LT_FLAG_TABLE_CONFIG : 0) |
		(base->manifest->writer_feature_flags & LT_FLAG_DISABLE_TXN_FILE);
	m.has_reader_feature_flags = m.has_writer_feature_flags = true;
	m.reader_feature_flags = rflags;
	m.writer_feature_flags = wflags;
	m.has_max_fragment_id = true;
	m.max_fragment_id = max_id;
	if (base->stable_row_ids)
	{
		m.has_next_row_id = true;
		m.next_row_id = next_row_id;
	}
	if (op == LT_OP_DELETE || op == LT_OP_UPDATE)
		rc = retained_indexes(base->index_section, at.frags, at.n_frags, &at.a, &indexes, err);
	else if (op == LT_OP_OVERWRITE)
		rc = t->log[r].keep_indexes ? emptied_indexes(base->index_section, &at.a, &indexes, err)
			: (indexes = NULL, LT_OK);
	if (rc != LT_OK)
		goto out;
	fault(LT_COMMIT_AFTER_DELETION_FILES);
	if ((rc = lt_txn_publish(base, &m, indexes, &tx, t->name, lost_race, err)) != LT_OK)
		goto out;
	res->op = op;
	res->version = base->version + 1;
	res->rows_added = at.rows_added;
	res->rows_deleted = at.rows_deleted;
	res->fragments_added = at.n_fresh;
	res->fragments_updated = at.n_updated;
	res->fragments_removed = at.n_removed;
out:
	arena_free(&at.a);
	return rc;
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/*
 * After a lost race, wait a random number of slots (0 .. 2^attempt - 1, at most 63) of
 * 1.1 times the first attempt's duration, as Lance's slot backoff does: racing writers
 * spread out instead of colliding again.
 */
static lt_code
backoff(int attempt, uint64_t first_attempt_us, lt_error *err)
{
	uint64_t	slot = first_attempt_us + first_attempt_us / 10 + 100;
	uint64_t	slots = (uint64_t) 1 << (attempt < 6 ? attempt : 6);
	uint64_t	us = slot * (lt_random_u64() % slots);

	/* the caller's sleep (a backend: on its latch), woken by a cancel */
	return lt_sleep_us(us, err, "waiting to retry a commit");
}

/*
 * The commit loop every commit kind shares: check each version committed since the
 * read version, in order, then try on the newest; after a lost race wait (Lance's
 * slot backoff) and go again, at most max_attempts times.
 */
lt_code
lt_txn_commit_loop(lt_dataset *read, const lt_commit_kind *kind, int max_attempts, lt_commit_result *result,
				   lt_error *err)
{
	lt_dataset *base = read;
	lt_dataset *owned = NULL;	/* base when it is a later version we opened */
	uint64_t	first_us = 0;	/* how long the first attempt took: the backoff's slot */
	lt_code		rc = LT_OK;

	if (max_attempts <= 0)
		max_attempts = DEFAULT_MAX_ATTEMPTS;
	for (int attempt_no = 1; rc == LT_OK; attempt_no++)
	{
		uint64_t	latest;
		lt_naming	naming;
		bool		lost = false;
		uint64_t	started = now_us();

		result->attempts = attempt_no;
		rc = lt_check_interrupt(err, "committing");
		if (rc == LT_OK)
			rc = lt_dataset_latest_version(base->store, base->prefix, &latest, &naming, err);
		for (uint64_t v = base->version + 1; rc == LT_OK && v <= latest; v++)
		{
			lt_version_spec spec = {v, NULL};
			lt_dataset *next;

			rc = lt_check_interrupt(err, "checking the versions committed meanwhile");
			if (rc == LT_OK)
				rc = lt_dataset_open(base->store, base->prefix, &spec, &next, err);
			if (rc == LT_ENOTFOUND)
				rc = lt_error_set(err, LT_ECONFLICT, "version %llu of %s vanished while committing on top of it",
								  (unsigned long long) v, kind->name);
			if (rc != LT_OK)
				break;
			rc = kind->check(kind->arg, base, next, err);
			if (owned)
				lt_dataset_close(owned);
			owned = base = next;
		}
		if (rc == LT_OK)
			rc = kind->attempt(kind->arg, base, result, &lost, err);
		if (attempt_no == 1)
			first_us = now_us() - started;
		if (rc == LT_ECONFLICT && lost)
		{
			if (attempt_no >= max_attempts)
			{
				rc = lt_error_set(err, LT_ECONFLICT,
								  "could not commit to %s: %d concurrent commits won the race for the next version",
								  kind->name, attempt_no);
				break;
			}
			rc = backoff(attempt_no, first_us, err);
			continue;
		}
		break;
	}
	if (owned)
		lt_dataset_close(owned);
	return rc;
}

/* lt_txn_commit's side of the loop */
typedef struct txn_commit
{
	lt_txn	   *t;
	const lt_commit_options *opts;
	roaring_bitmap_t **seen;	/* per change: rows deleted by the read version or by commits since */
	lt_composite ours;
	lt_footprint fo;
} txn_commit;

static lt_code
inserts_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	return check_new_fragments(prev, next, arg, err);
}

/* A version committed since our read version: lift it, compare footprints (lt_action.h). */
static lt_code
txn_check(void *arg, lt_dataset *prev, lt_dataset *next, lt_error *err)
{
	txn_commit *c = arg;
	rows_ctx	rows = {c->t, next, c->seen};

	return lt_txn_check_version(&c->ours, &c->fo, prev, next, c->t->name, concurrent_rows, &rows,
								c->opts && c->opts->check_new_fragment ? inserts_check : NULL,
								(void *) c->opts, err);
}

static lt_code
txn_attempt(void *arg, lt_dataset *base, lt_commit_result *res, bool *lost_race, lt_error *err)
{
	txn_commit *c = arg;

	return try_commit(c->t, base, c->opts, res, lost_race, err);
}

lt_code
lt_txn_commit(lt_txn *t, const lt_commit_options *opts, lt_commit_result *result, lt_error *err)
{
	txn_commit	c = {t, opts, NULL};
	lt_commit_kind kind = {t->name, txn_check, txn_attempt, &c};
	lt_code		rc = LT_OK;

	memset(result, 0, sizeof(*result));
	if (t->broken)
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	if ((rc = settle(t, err)) != LT_OK)
		return rc;
	if (t->n_log == 0)
		return LT_OK;
	fault(LT_COMMIT_START);
	if (!(c.seen = lt_calloc(t->n_changes ? t->n_changes : 1, sizeof(roaring_bitmap_t *))))
		return lt_nomem(err);
	/* the read version's deleted rows of each fragment we delete from */
	for (size_t i = 0; i < t->n_changes && rc == LT_OK; i++)
	{
		if (!(c.seen[i] = roaring_bitmap_andnot(t->changes[i].all, t->changes[i].ours)))
			rc = lt_nomem(err);
	}
	lt_composite_init(&c.ours);
	if (rc == LT_OK && (rc = our_composite(t, opts, &c.ours, err)) == LT_OK)
		rc = lt_footprint_of(&c.ours, &c.fo, err);
	if (rc == LT_OK)
		rc = lt_txn_commit_loop(t->read, &kind, opts ? opts->max_attempts : 0, result, err);
	lt_footprint_clear(&c.fo);
	lt_composite_clear(&c.ours);
	for (size_t i = 0; i < t->n_changes; i++)
		if (c.seen[i])
			roaring_bitmap_free(c.seen[i]);
	lt_free(c.seen);
	t->broken = true;			/* committed, or failed for good: either way done */
	return rc;
}

void
lt_txn_free(lt_txn *t)
{
	if (!t)
		return;
	while (t->views)
	{
		txn_view   *older = t->views->older;

		view_free(t->views);
		t->views = older;
	}
	for (size_t i = 0; i < t->n_dropped; i++)
		added_free(t->dropped[i]);
	lt_free(t->dropped);
	changes_free(t);
	for (size_t i = 0; i < t->n_log; i++)
	{
		if (t->log[i].rows)
			roaring_bitmap_free(t->log[i].rows);
		lt_key_filter_free(t->log[i].keys);
	}
	lt_free(t->log);
	for (size_t i = 0; i < t->n_adds; i++)
		added_free(t->adds[i]);
	lt_free(t->adds);
	for (size_t i = 0; i < t->n_bases; i++)
		roaring_bitmap_free(t->bases[i].rows);
	lt_free(t->bases);
	lt_free(t->created);
	lt_free(t);
}

/* ---- shared with the other commit kinds (lt_txn_int.h) ---------------------- */

lt_code
lt_txn_check_writable(const lt_dataset *ds, const char *name, lt_error *err)
{
	return check_writable(ds, name, err);
}

void
lt_txn_dataset_name(const lt_dataset *ds, char *buf, size_t len)
{
	dataset_name(ds, buf, len);
}

Lt__Pb__Transaction *
lt_txn_committed(lt_dataset *ds, bool *owned)
{
	return transaction_of(ds, owned);
}
