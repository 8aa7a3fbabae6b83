/*
 * lt_txn.c — pending changes of one transaction and its own-writes view
 * (lt_txn.h has the contract); the commit is in lt_txn_commit.c, the
 * conflict checks against concurrent commits in lt_txn_conflict.c.
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

/* writer feature flags this library can write with (base paths: no) */
#define KNOWN_WRITER_FLAGS (LT_FLAG_DELETION_FILES | LT_FLAG_STABLE_ROW_IDS | LT_FLAG_USE_V2_FORMAT | \
							LT_FLAG_TABLE_CONFIG | LT_FLAG_DISABLE_TXN_FILE | LT_FLAG_FIELD_ASSIGNMENT)

lt_commit_fault_fn lt_commit_fault_hook;

/* ---- small helpers ------------------------------------------------------ */

static void *
arena_take(arena *a, size_t size, bool zeroed)
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
	if (!(p = zeroed ? lt_calloc(1, size ? size : 1) : lt_malloc(size ? size : 1)))
	{
		a->oom = true;
		return NULL;
	}
	a->p[a->n++] = p;
	return p;
}

void *
lt_txn_arena_alloc(arena *a, size_t size)
{
	return arena_take(a, size, true);
}

void *
lt_txn_arena_array(arena *a, size_t n, size_t size)
{
	return n > SIZE_MAX / size ? (a->oom = true, NULL) : arena_take(a, n * size, false);
}

void
lt_txn_arena_free(arena *a)
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
uint64_t
lt_txn_next_fragment_id(const lt_dataset *ds)
{
	uint64_t	next = ds->manifest->has_max_fragment_id ? (uint64_t) ds->manifest->max_fragment_id + 1 : 0;

	if (ds->n_fragments > 0 && ds->fragments[ds->n_fragments - 1]->id >= next)
		next = ds->fragments[ds->n_fragments - 1]->id + 1;
	return next;
}

/* A fragment's deletion vector in a version, as a bitmap. */
lt_code
lt_txn_load_dv(lt_dataset *ds, const Lt__Pb__DataFragment *frag, roaring_bitmap_t **out, lt_error *err)
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

void
lt_txn_fault(lt_commit_point p)
{
	if (lt_commit_fault_hook)
		lt_commit_fault_hook(p);
}

/* ---- row-id and version sequences --------------------------------------- */

lt_code
lt_txn_pack_msg(const ProtobufCMessage *m, ProtobufCBinaryData *out, arena *a, lt_error *err)
{
	size_t		n = protobuf_c_message_get_packed_size(m);
	uint8_t    *p = a ? lt_txn_arena_alloc(a, n) : lt_malloc(n ? n : 1);

	if (!p)
		return lt_nomem(err);
	protobuf_c_message_pack(m, p);
	out->data = p;
	out->len = n;
	return LT_OK;
}

/* RowIdSequence of ids [start, start + n), or of the given ids. */
lt_code
lt_txn_encode_row_ids(uint64_t start, uint64_t n, const uint64_t *ids, ProtobufCBinaryData *out, arena *a, lt_error *err)
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
	rc = lt_txn_pack_msg(&seq.base, out, a, err);
	lt_free(buf);
	return rc;
}

/* RowDatasetVersionSequence of n rows: versions[i], or all at `version` when versions is NULL. */
lt_code
lt_txn_encode_versions(uint64_t n, const uint64_t *versions, uint64_t version, ProtobufCBinaryData *out, arena *a,
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
		rc = lt_txn_pack_msg(&seq.base, out, a, err);
	}
	lt_free(run_mem);
	lt_free(runs);
	lt_free(segs);
	lt_free(ranges);
	return rc;
}

int
lt_txn_cmp_id_version(const void *a, const void *b)
{
	uint64_t	x = ((const id_version *) a)->id, y = ((const id_version *) b)->id;

	return x < y ? -1 : x > y;
}

uint64_t
lt_txn_created_at(const id_version *tab, size_t n, uint64_t id, uint64_t dflt)
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

lt_code
lt_txn_check_writable(const lt_dataset *ds, const char *name, lt_error *err)
{
	uint64_t	w = ds->manifest->writer_feature_flags;

	if (w & ~(uint64_t) KNOWN_WRITER_FLAGS)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"version %llu of %s needs writer features 0x%llx unknown to lt_fdw: it cannot be written",
							(unsigned long long) ds->version, name,
							(unsigned long long) (w & ~(uint64_t) KNOWN_WRITER_FLAGS));
	/* field assignment: the flag and lt_fdw's state come together, or something else wrote one of them */
	if ((w & LT_FLAG_FIELD_ASSIGNMENT) && !lt_assign_any(ds))
		return lt_error_set(err, LT_EUNSUPPORTED,
							"version %llu of %s sets writer feature flag 0x%llx without lt_fdw's field assignment state: another writer gave the bit a meaning lt_fdw does not know, so it cannot be written",
							(unsigned long long) ds->version, name, (unsigned long long) LT_FLAG_FIELD_ASSIGNMENT);
	if (!(w & LT_FLAG_FIELD_ASSIGNMENT) && lt_assign_any(ds))
		return lt_error_set(err, LT_EUNSUPPORTED,
							"version %llu of %s has field assignment state but not its writer feature flag 0x%llx: a writer that does not keep the state wrote it, so lt_fdw does not write on top",
							(unsigned long long) ds->version, name, (unsigned long long) LT_FLAG_FIELD_ASSIGNMENT);
	if (ds->branch)
		return lt_error_set(err, LT_EUNSUPPORTED, "version %llu of %s is on branch \"%s\": lt_fdw writes only to main",
							(unsigned long long) ds->version, name, ds->branch);
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
		lt_code		rc = lt_txn_check_writable(read, t->name, err);

		if (rc != LT_OK)
		{
			lt_free(t);
			return rc;
		}
	}
	t->first_new_id = lt_txn_next_fragment_id(read);
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
	t->log[t->n_log].field_id = 0;
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
	lt_txn_free_added_assign(a);
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
	LT_TRY(lt_txn_encode_row_ids(start, a->frag.physical_rows, a->row_ids, &a->frag.inline_row_ids, NULL, err));
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
lt_txn_unassign_rows(lt_txn *t, uint64_t fragment_id, int32_t field_id, const uint32_t *offsets, uint64_t n,
					 lt_error *err)
{
	uint64_t	rows;
	roaring_bitmap_t *r;

	if (t->broken)
		return lt_error_set(err, LT_EINVALID, "the transaction on %s can no longer be used", t->name);
	if (!lt_assign_is_tracked(t->read, field_id, NULL))
		return lt_error_set(err, LT_EINVALID, "field %d of %s does not track its assignment", field_id, t->name);
	LT_TRY(fragment_rows(t, fragment_id, &rows, err));
	if (n == 0)
		return LT_OK;
	for (uint64_t i = 0; i < n; i++)
		if (offsets[i] >= rows)
			return lt_error_set(err, LT_EINVALID, "row %u is past the end of fragment %llu (%llu rows) of %s",
								offsets[i], (unsigned long long) fragment_id, (unsigned long long) rows, t->name);
	if (!(r = roaring_bitmap_of_ptr((size_t) n, offsets)))
		return lt_nomem(err);
	LT_TRY(journal(t, J_UNASSIGN, fragment_id, r, err));
	t->log[t->n_log - 1].field_id = field_id;
	return LT_OK;
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
lt_key_filter *
lt_txn_asserted_keys(const lt_txn *t)
{
	for (size_t i = t->n_log; i > 0; i--)
		if (t->log[i - 1].kind == J_KEYS)
			return t->log[i - 1].keys;
	return NULL;
}

static void
forget_groups(lt_txn *t)
{
	lt_free(t->rw_old);
	lt_free(t->rw_old_group);
	lt_free(t->rw_new);
	t->rw_old = NULL;
	t->rw_old_group = NULL;
	t->rw_new = NULL;
	t->n_rw_old = t->n_rw_groups = 0;
}

void
lt_txn_mark_compaction(lt_txn *t, bool on)
{
	t->compaction = on;
	if (!on)
		forget_groups(t);
}

lt_code
lt_txn_compaction_group(lt_txn *t, const uint64_t *old_ids, size_t n_old, size_t n_new, lt_error *err)
{
	uint64_t   *o = lt_realloc(t->rw_old, (t->n_rw_old + n_old + 1) * sizeof(uint64_t));
	uint32_t   *og;
	size_t	   *nn;

	if (o)
		t->rw_old = o;
	og = o ? lt_realloc(t->rw_old_group, (t->n_rw_old + n_old + 1) * sizeof(uint32_t)) : NULL;
	if (og)
		t->rw_old_group = og;
	nn = og ? lt_realloc(t->rw_new, (t->n_rw_groups + 1) * sizeof(size_t)) : NULL;
	if (!nn)
		return lt_nomem(err);
	t->rw_new = nn;
	for (size_t i = 0; i < n_old; i++)
	{
		t->rw_old[t->n_rw_old] = old_ids[i];
		t->rw_old_group[t->n_rw_old++] = (uint32_t) t->n_rw_groups;
	}
	t->rw_new[t->n_rw_groups++] = n_new;
	return LT_OK;
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
	LT_TRY(lt_txn_load_dv(t->read, frag, &t->bases[t->n_bases].rows, err));
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
size_t
lt_txn_replace_at(const lt_txn *t)
{
	for (size_t i = t->n_log; i > 0; i--)
		if (t->log[i - 1].kind == J_REPLACE)
			return i - 1;
	return t->n_log;
}

lt_code
lt_txn_settle(lt_txn *t, lt_error *err)
{
	size_t		n = 0,
				r = lt_txn_replace_at(t),
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

change *
lt_txn_change_of(lt_txn *t, uint64_t id)
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
	LT_TRY(lt_txn_settle(t, err));
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
		change	   *c = lt_txn_change_of(t, f->id);

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
	lt_txn_free_derived(t);
	forget_groups(t);
	lt_free(t);
}

/* ---- shared with the other commit kinds (lt_txn_int.h) ---------------------- */

void
lt_txn_dataset_name(const lt_dataset *ds, char *buf, size_t len)
{
	dataset_name(ds, buf, len);
}
