/*
 * keys.c — the primary key of a keyed Lance table, enforced for lt_fdw's own writes.
 *
 * A dataset whose schema marks an unenforced primary key (lt_keys.h) is a keyed table.  Every row an
 * INSERT, COPY or UPDATE writes into it is checked before it goes to the file writer:
 *   - a NULL in a key column is 23502;
 *   - a key that a live row of the version the statement reads already has (that version includes
 *     this transaction's earlier writes), or that an earlier row of the same statement has, is 23505
 *     (INSERT ... ON CONFLICT DO NOTHING skips the row instead).  An UPDATE may keep a row's key; a key
 *     it frees (by changing it) can be taken by a later row of the statement, as Postgres checks a
 *     unique constraint row by row.
 * The existing keys come from one scan of the key columns of that version per statement, into a hash
 * set whose memory is bounded by work_mem (above it: 53200, with a hint to raise work_mem).
 *
 * Every key accepted also goes into the transaction's inserted-keys filter (LtXactTable.inserted_keys,
 * Lance's bloom filter): at commit it tells concurrent writers which keys this transaction inserted,
 * and a concurrent commit that inserted one of them makes ours fail (xact.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/explain.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "convert_write.h"
#include "dataset.h"
#include "index.h"
#include "keys.h"
#include "option.h"
#include "store.h"
#include "xact.h"
#include "util/lt_alloc.h"
#include "txn/lt_keys.h"
#include "table/lt_filter.h"
#include "index/lt_index_plan.h"
#include "table/lt_scan.h"
#include "txn/lt_txn.h"

#define NO_ADDR		UINT64_MAX	/* an entry for a row this statement wrote */

typedef struct KeyEntry
{
	uint64		hash;			/* XXH64 of the key bytes; 0 = empty slot */
	uint64		addr;			/* the row holding it, or NO_ADDR */
	uint32		off;			/* the key bytes in the arena */
	uint32		len;
	bool		freed;			/* its row was updated to another key by this statement */
} KeyEntry;

struct LtKeyCheck
{
	Relation	rel;
	const char *relname;
	const char *uri;
	LtXactTable *xt;
	bool		skip_existing;	/* ON CONFLICT DO NOTHING */
	bool		is_update;

	int			n_key;
	const lt_field **key;		/* the key's fields, in key order */
	AttrNumber *att;			/* the attribute writing each */
	const LtWriteConv **conv;
	lt_array  **scratch;		/* one converted value per key part */
	lt_key_buf	kb;
	MemoryContext lib_cxt;		/* library allocations: scratch arrays, key buffer */

	/* the existing keys (loaded at the first row) and the statement's own */
	bool		loaded;
	KeyEntry   *slots;
	uint64		n_slots,		/* a power of two */
				n_used;
	char	   *arena;
	uint64		arena_len,
				arena_cap;
	/* UPDATE: row address -> entry index + 1 (open addressing, 0 = empty) */
	uint64	   *addr_keys;
	uint32	   *addr_vals;
	uint64		n_addr_slots;
	Size		bytes,
				limit;
	uint64		table_rows;		/* live rows of the version read */

	/*
	 * INSERT into a table whose one-column key has a btree or bitmap index: the fragments the index
	 * covers are asked per key (one lookup each) instead of being read into the set; only the
	 * fragments it does not cover are scanned.
	 */
	LtDatasetEntry *view;		/* the version read, pinned while the index is used */
	lt_index_planner *planner;
	const lt_index *index;
	lt_filter  *eq;				/* key = $0 */
	bool	   *covered;		/* per fragment of view->ds */
	MemoryContext index_cxt;
	uint64		index_lookups,
				index_hits,
				fragments_scanned,
				skipped;		/* rows ON CONFLICT DO NOTHING skipped */
	uint64		rows_scanned;
};

static inline uint64
mix64(uint64 x)
{
	x ^= x >> 33;
	x *= UINT64CONST(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

static void
account(LtKeyCheck *kc, Size more)
{
	kc->bytes += more;
	if (kc->bytes > kc->limit)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("lt_fdw: checking the primary key of foreign table \"%s\" needs more than work_mem (%d kB)",
						kc->relname, work_mem),
				 errdetail("The check holds the key of every row of dataset %s (" UINT64_FORMAT " rows) and of the statement in memory, about %zu bytes per key.",
						   kc->uri, kc->table_rows,
						   (size_t) (sizeof(KeyEntry) * 2 + (kc->is_update ? 24 : 0) +
									 (kc->n_used ? kc->arena_len / kc->n_used : 8))),
				 errhint("Raise work_mem for this statement (SET LOCAL work_mem = ...).")));
}

/* Grow the key table to hold at least `need` entries at a load below 1/2. */
static void
grow_slots(LtKeyCheck *kc, uint64 need)
{
	uint64		n = kc->n_slots ? kc->n_slots : 1024;
	KeyEntry   *old = kc->slots;
	uint64		n_old = kc->n_slots;

	while (n < need * 2)
		n *= 2;
	if (n == kc->n_slots)
		return;
	account(kc, (n - n_old) * sizeof(KeyEntry));
	kc->slots = MemoryContextAllocHuge(GetMemoryChunkContext(kc), n * sizeof(KeyEntry));
	memset(kc->slots, 0, n * sizeof(KeyEntry));
	kc->n_slots = n;
	for (uint64 i = 0; i < n_old; i++)
		if (old[i].hash)
		{
			uint64		j = mix64(old[i].hash) & (n - 1);

			while (kc->slots[j].hash)
				j = (j + 1) & (n - 1);
			kc->slots[j] = old[i];
		}
	if (old)
		pfree(old);
	/* entry indexes moved: the address map is rebuilt */
	if (kc->addr_keys)
	{
		memset(kc->addr_keys, 0, kc->n_addr_slots * sizeof(uint64));
		memset(kc->addr_vals, 0, kc->n_addr_slots * sizeof(uint32));
		for (uint64 i = 0; i < kc->n_slots; i++)
			if (kc->slots[i].hash && kc->slots[i].addr != NO_ADDR)
			{
				uint64		j = mix64(kc->slots[i].addr) & (kc->n_addr_slots - 1);

				while (kc->addr_vals[j])
					j = (j + 1) & (kc->n_addr_slots - 1);
				kc->addr_keys[j] = kc->slots[i].addr;
				kc->addr_vals[j] = (uint32) (i + 1);
			}
	}
}

static KeyEntry *
lookup(LtKeyCheck *kc, const uint8 *key, size_t len, uint64 hash)
{
	uint64		j;

	if (kc->n_slots == 0)
		return NULL;
	for (j = mix64(hash) & (kc->n_slots - 1); kc->slots[j].hash; j = (j + 1) & (kc->n_slots - 1))
	{
		KeyEntry   *e = &kc->slots[j];

		if (e->hash == hash && e->len == len && memcmp(kc->arena + e->off, key, len) == 0)
			return e;
	}
	return NULL;
}

static void
addr_map_put(LtKeyCheck *kc, uint64 addr, uint64 index)
{
	uint64		j = mix64(addr) & (kc->n_addr_slots - 1);

	while (kc->addr_vals[j] && kc->addr_keys[j] != addr)
		j = (j + 1) & (kc->n_addr_slots - 1);
	kc->addr_keys[j] = addr;
	kc->addr_vals[j] = (uint32) (index + 1);
}

static KeyEntry *
addr_map_get(LtKeyCheck *kc, uint64 addr)
{
	uint64		j;

	if (!kc->addr_keys)
		return NULL;
	for (j = mix64(addr) & (kc->n_addr_slots - 1); kc->addr_vals[j]; j = (j + 1) & (kc->n_addr_slots - 1))
		if (kc->addr_keys[j] == addr)
			return &kc->slots[kc->addr_vals[j] - 1];
	return NULL;
}

/* Add a key (not present) held by row addr; returns its entry. */
static KeyEntry *
insert(LtKeyCheck *kc, const uint8 *key, size_t len, uint64 hash, uint64 addr)
{
	uint64		j;

	if (hash == 0)
		hash = 1;				/* 0 marks an empty slot */
	if ((kc->n_used + 1) * 2 > kc->n_slots)
		grow_slots(kc, kc->n_used + 1);
	if (kc->arena_len + len > kc->arena_cap)
	{
		uint64		cap = Max(kc->arena_cap * 2, Max(len, 65536));

		if (cap > PG_UINT32_MAX)
			account(kc, (Size) MaxAllocHugeSize);	/* keys beyond 4 GB: over any work_mem */
		account(kc, cap - kc->arena_cap);
		kc->arena = kc->arena ? repalloc_huge(kc->arena, cap) : MemoryContextAllocHuge(GetMemoryChunkContext(kc), cap);
		kc->arena_cap = cap;
	}
	if (len)
		memcpy(kc->arena + kc->arena_len, key, len);
	for (j = mix64(hash) & (kc->n_slots - 1); kc->slots[j].hash; j = (j + 1) & (kc->n_slots - 1))
		;
	kc->slots[j].hash = hash;
	kc->slots[j].addr = addr;
	kc->slots[j].off = (uint32) kc->arena_len;
	kc->slots[j].len = (uint32) len;
	kc->slots[j].freed = false;
	kc->arena_len += len;
	kc->n_used++;
	if (kc->addr_keys && addr != NO_ADDR)
		addr_map_put(kc, addr, j);
	return &kc->slots[j];
}

static inline uint64
key_hash(const uint8 *key, size_t len)
{
	uint64		h = lt_key_hash_bloom(key, len);

	return h ? h : 1;
}

/*
 * Use the key's btree or bitmap index, if it has one that answers equality exactly: marks the
 * fragments it covers and returns the live rows of the others (the ones still to scan).  Keeps the
 * view pinned for the lookups.  Without a usable index: returns every live row, nothing changed.
 */
static uint64
open_key_index(LtKeyCheck *kc, LtDatasetEntry *view)
{
	lt_dataset *ds = view->ds;
	uint64		uncovered = 0;
	lt_error	err;
	lt_code		rc;
	MemoryContext old;
	lt_expr    *col,
			   *par,
			   *cmp;
	lt_value_kind kind = lt_key_kind_of(kc->key[0]) == LT_KEY_INT64 ? LT_VALUE_INT :
		lt_key_kind_of(kc->key[0]) == LT_KEY_UINT64 ? LT_VALUE_UINT : LT_VALUE_BYTES;

	kc->index_cxt = AllocSetContextCreate(GetMemoryChunkContext(kc), "lt_fdw key index", ALLOCSET_DEFAULT_SIZES);
	old = lt_alloc_target(kc->index_cxt);
	rc = lt_index_planner_open(ds, &kc->planner, &err);
	if (rc == LT_OK)
		kc->index = lt_index_planner_index_for(kc->planner, kc->key[0]->id);
	if (rc != LT_OK || kc->index == NULL ||
		(kc->index->kind != LT_INDEX_BTREE && kc->index->kind != LT_INDEX_BITMAP))
	{
		/* no exact index on the key (or unreadable index metadata): scan everything */
		if (kc->planner)
			lt_index_planner_free(kc->planner);
		kc->planner = NULL;
		kc->index = NULL;
		lt_alloc_target(old);
		MemoryContextDelete(kc->index_cxt);
		kc->index_cxt = NULL;
		return lt_dataset_count_rows(ds);
	}
	rc = lt_filter_new(1, kc->key, &kc->eq, &err);
	if (rc == LT_OK && (col = lt_expr_column(kc->eq, 0, &err)) && (par = lt_expr_param(kc->eq, 0, kind, &err)) &&
		(cmp = lt_expr_cmp(kc->eq, LT_CMP_EQ, col, par, &err)))
		rc = lt_filter_set_root(kc->eq, cmp, &err);
	else if (rc == LT_OK)
		rc = err.code;
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, kc->uri);
	kc->covered = MemoryContextAllocZero(kc->index_cxt, sizeof(bool) * Max(ds->n_fragments, 1));
	for (size_t f = 0; f < ds->n_fragments; f++)
	{
		uint32		id = (uint32) ds->fragments[f]->id;
		const lt_index *ix = kc->index;

		for (size_t c = 0; c < ix->n_covered; c++)
			if (ix->covered[c] == id)
				kc->covered[f] = true;
		if (!kc->covered[f])
		{
			uint32	   *del = NULL;
			uint64		n_del = 0;

			old = lt_alloc_target(kc->index_cxt);
			if (lt_fragment_deleted_offsets(ds, ds->fragments[f], &del, &n_del, &err) != LT_OK)
			{
				lt_alloc_target(old);
				lt_report(&err, kc->uri);
			}
			lt_alloc_target(old);
			uncovered += ds->fragments[f]->physical_rows - n_del;
		}
	}
	view->pins++;
	kc->view = view;
	return uncovered;
}

/* Does a live row of the fragments the index covers hold the key?  (the set holds the others) */
static bool
index_has_key(LtKeyCheck *kc, const uint8 *key, size_t len)
{
	lt_value	v = {0};
	lt_index_plan *plan = NULL;
	lt_error	err;
	lt_code		rc;
	bool		found = false;
	MemoryContext old;

	switch (lt_key_kind_of(kc->key[0]))
	{
		case LT_KEY_INT64:
			v.kind = LT_VALUE_INT;
			memcpy(&v.v.i, key, 8);
			break;
		case LT_KEY_UINT64:
			v.kind = LT_VALUE_UINT;
			memcpy(&v.v.u, key, 8);
			break;
		default:
			v.kind = LT_VALUE_BYTES;
			v.v.bytes.ptr = key;
			v.v.bytes.len = len;
	}
	kc->index_lookups++;
	old = lt_alloc_target(kc->index_cxt);
	rc = lt_filter_set_param(kc->eq, 0, &v, &err);
	if (rc == LT_OK)
		rc = lt_index_plan_build(kc->planner, kc->eq, 0, NULL, &plan, &err);
	for (size_t f = 0; rc == LT_OK && f < plan->n_fragments && !found; f++)
		if (kc->covered[f] && (plan->fragments[f].verdict == LT_FRAG_ROWS || plan->fragments[f].verdict == LT_FRAG_ALL ||
							   plan->fragments[f].verdict == LT_FRAG_CANDIDATES) && plan->fragments[f].n_offsets > 0)
			found = true;
	if (plan)
		lt_index_plan_free(plan);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, kc->uri);
	kc->index_hits += found;
	return found;
}

/* The keys of every live row of the version the statement reads (with the transaction's writes). */
static void
load_existing(LtKeyCheck *kc)
{
	LtDatasetEntry *view = lt_xact_view(kc->xt->dir, true);
	lt_dataset *ds = view->ds;
	uint64		rows = lt_dataset_count_rows(ds);
	MemoryContext scan_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw key scan", ALLOCSET_DEFAULT_SIZES);
	lt_key_buf	kb = {0};
	const char *what = psprintf("dataset %s (foreign table \"%s\")", kc->uri, RelationGetRelationName(kc->rel));

	kc->loaded = true;
	kc->table_rows = rows;
	if (kc->n_key == 1 && !kc->is_update && lt_enable_index_scan)
		rows = open_key_index(kc, view);
	grow_slots(kc, rows + 16);
	if (kc->is_update)
	{
		uint64		n = 1024;

		while (n < (rows + 16) * 2)
			n *= 2;
		account(kc, n * (sizeof(uint64) + sizeof(uint32)));
		kc->n_addr_slots = n;
		kc->addr_keys = MemoryContextAllocHuge(GetMemoryChunkContext(kc), n * sizeof(uint64));
		kc->addr_vals = MemoryContextAllocHuge(GetMemoryChunkContext(kc), n * sizeof(uint32));
		memset(kc->addr_keys, 0, n * sizeof(uint64));
		memset(kc->addr_vals, 0, n * sizeof(uint32));
	}
	PG_TRY();
	{
		for (size_t f = 0; f < ds->n_fragments; f++)
		{
			lt_scan_options so = {0};
			lt_fragment_scanner *sc = NULL;
			lt_batch   *b;
			lt_error	err;
			lt_code		rc;
			MemoryContext old;

			CHECK_FOR_INTERRUPTS();
			if (kc->covered && kc->covered[f])
				continue;		/* asked per key through the index */
			kc->fragments_scanned++;
			so.n_fields = kc->n_key;
			so.fields = kc->key;
			old = lt_alloc_target(scan_cxt);
			rc = lt_fragment_scanner_open(ds, ds->fragments[f], &so, &sc, &err);
			while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b != NULL)
			{
				for (int64 r = 0; r < b->length; r++)
				{
					bool		is_null;

					MemoryContext t = lt_alloc_target(kc->lib_cxt);	/* kb outlives the scan's resets */

					rc = lt_key_from_row(&kb, kc->key, kc->n_key, b->columns, r, &is_null, &err);
					lt_alloc_target(t);
					if (rc != LT_OK)
						break;
					if (!is_null)
					{
						uint64		h = key_hash(kb.data, kb.len);
						KeyEntry   *e = lookup(kc, kb.data, kb.len, h);

						/* a Lance writer may have stored a key twice: the first row holds it */
						if (e == NULL)
							insert(kc, kb.data, kb.len, h, b->row_addrs[r]);
					}
					kc->rows_scanned++;
				}
				if (rc != LT_OK)
					break;
			}
			if (sc)
				lt_fragment_scanner_free(sc);
			lt_alloc_target(old);
			if (rc != LT_OK)
				lt_report(&err, what);
			MemoryContextReset(scan_cxt);
		}
	}
	PG_FINALLY();
	{
		lt_key_buf_free(&kb);
		lt_dataset_unpin(view);
		MemoryContextDelete(scan_cxt);
	}
	PG_END_TRY();
	elog(DEBUG1, "lt_fdw: primary key check of \"%s\": " UINT64_FORMAT " keys read from " UINT64_FORMAT " rows",
		 RelationGetRelationName(kc->rel), kc->n_used, kc->rows_scanned);
}

LtKeyCheck *
lt_keys_begin(Relation rel, const char *uri, LtXactTable *xt, const lt_dataset *ds, int n_fields,
			  const lt_field *const *fields, const AttrNumber *att_of_field, LtWriteConv *const *conv,
			  bool is_update, bool skip_existing)
{
	const lt_field **key = NULL;
	int			n_key = 0;
	lt_error	err;
	LtKeyCheck *kc;
	MemoryContext old;

	if (lt_schema_primary_key(ds->schema, &key, &n_key, &err) != LT_OK)
		lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", uri, RelationGetRelationName(rel)));
	if (n_key == 0)
		return NULL;
	kc = palloc0(sizeof(LtKeyCheck));
	kc->rel = rel;
	kc->relname = RelationGetRelationName(rel);
	kc->uri = uri;
	kc->xt = xt;
	kc->is_update = is_update;
	kc->skip_existing = skip_existing;
	kc->limit = (Size) work_mem * 1024;
	kc->n_key = n_key;
	kc->key = palloc(sizeof(lt_field *) * n_key);
	kc->att = palloc0(sizeof(AttrNumber) * n_key);
	kc->conv = palloc0(sizeof(LtWriteConv *) * n_key);
	kc->scratch = palloc0(sizeof(lt_array *) * n_key);
	kc->lib_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw key check", ALLOCSET_SMALL_SIZES);
	for (int i = 0; i < n_key; i++)
	{
		kc->key[i] = key[i];
		if (lt_key_kind_of(key[i]) == LT_KEY_UNSUPPORTED)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: cannot write foreign table \"%s\": its primary key column \"%s\" has type %s",
							RelationGetRelationName(rel), key[i]->name, key[i]->logical_type),
					 errdetail("Lance hashes keys of types int32, int64, uint32, uint64, string and binary only (dataset %s).",
							   uri)));
		for (int k = 0; k < n_fields; k++)
			if (fields[k] == key[i])
			{
				kc->att[i] = att_of_field[k];
				kc->conv[i] = conv[k];
			}
		if (kc->att[i] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("lt_fdw: foreign table \"%s\" has no column for primary key field \"%s\" of dataset %s",
							RelationGetRelationName(rel), key[i]->name, uri),
					 errhint("Add a column for it to the foreign table.")));
	}
	old = lt_alloc_target(kc->lib_cxt);
	for (int i = 0; i < n_key; i++)
		if (lt_array_new(key[i], &kc->scratch[i], &err) != LT_OK)
		{
			lt_alloc_target(old);
			lt_report_write(&err, uri);
		}
	if (xt->inserted_keys == NULL)
	{
		int32_t    *ids = palloc(sizeof(int32_t) * n_key);
		MemoryContext lo;

		for (int i = 0; i < n_key; i++)
			ids[i] = key[i]->id;
		lo = lt_alloc_target(xt->cxt);
		if (lt_key_filter_new(LT_KEY_FILTER_BLOOM, ids, n_key, &xt->inserted_keys, &err) != LT_OK)
		{
			lt_alloc_target(old);
			lt_report_write(&err, uri);
		}
		lt_alloc_target(lo);
	}
	lt_alloc_target(old);
	lt_free(key);
	return kc;
}

/* "(a, b)=(1, x)" for messages, from the row's values. */
static char *
key_text(LtKeyCheck *kc, TupleTableSlot *slot)
{
	StringInfoData names,
				vals;
	TupleDesc	td = RelationGetDescr(kc->rel);

	initStringInfo(&names);
	initStringInfo(&vals);
	for (int i = 0; i < kc->n_key; i++)
	{
		Form_pg_attribute a = TupleDescAttr(td, kc->att[i] - 1);
		Oid			out;
		bool		varlena;

		appendStringInfo(&names, "%s%s", i ? ", " : "", quote_identifier(NameStr(a->attname)));
		getTypeOutputInfo(a->atttypid, &out, &varlena);
		appendStringInfo(&vals, "%s%s", i ? ", " : "",
						 OidOutputFunctionCall(out, slot->tts_values[kc->att[i] - 1]));
	}
	return psprintf("(%s)=(%s)", names.data, vals.data);
}

bool
lt_keys_check_row(LtKeyCheck *kc, TupleTableSlot *slot, uint64 old_addr)
{
	MemoryContext old;
	KeyEntry   *e;
	uint64		h;
	bool		is_null;
	lt_error	err;

	slot_getallattrs(slot);
	for (int i = 0; i < kc->n_key; i++)
		if (slot->tts_isnull[kc->att[i] - 1])
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("null value in column \"%s\" of foreign table \"%s\" violates its primary key",
							NameStr(TupleDescAttr(RelationGetDescr(kc->rel), kc->att[i] - 1)->attname),
							RelationGetRelationName(kc->rel)),
					 errdetail("Field \"%s\" is part of the primary key of dataset %s.", kc->key[i]->name, kc->uri),
					 errtable(kc->rel)));
	/* the key as the file will hold it: the column converters, then Lance's key bytes */
	old = lt_alloc_target(kc->lib_cxt);
	for (int i = 0; i < kc->n_key; i++)
	{
		lt_array_clear(kc->scratch[i]);
		lt_wconv_append(kc->conv[i], kc->scratch[i], slot->tts_values[kc->att[i] - 1], false);
	}
	if (lt_key_from_row(&kc->kb, kc->key, kc->n_key, kc->scratch, 0, &is_null, &err) != LT_OK)
	{
		lt_alloc_target(old);
		lt_report_write(&err, kc->uri);
	}
	lt_alloc_target(old);

	if (!kc->loaded)
		load_existing(kc);
	h = key_hash(kc->kb.data, kc->kb.len);
	e = lookup(kc, kc->kb.data, kc->kb.len, h);
	if (kc->is_update && old_addr != NO_ADDR)
	{
		KeyEntry   *mine = addr_map_get(kc, old_addr);

		if (e != NULL && e == mine)
		{
			/* the row keeps its key; it moves to a new fragment */
			e->addr = NO_ADDR;
			goto accepted;
		}
		if (e != NULL && !e->freed)
			goto duplicate;
		/* the key changes: the old one is free for later rows of the statement */
		if (mine)
			mine->freed = true;
		if (e)
		{
			e->freed = false;
			e->addr = NO_ADDR;
		}
		else
			insert(kc, kc->kb.data, kc->kb.len, h, NO_ADDR);
		goto accepted;
	}
	if (e != NULL && !e->freed)
		goto duplicate;
	if (e == NULL && kc->planner && index_has_key(kc, kc->kb.data, kc->kb.len))
	{
		/* remembered: a repeat in this statement is found in the set */
		insert(kc, kc->kb.data, kc->kb.len, h, NO_ADDR);
		goto duplicate;
	}
	if (e)
	{
		e->freed = false;
		e->addr = NO_ADDR;
	}
	else
		insert(kc, kc->kb.data, kc->kb.len, h, NO_ADDR);

accepted:
	old = lt_alloc_target(kc->xt->cxt);
	if (lt_key_filter_add(kc->xt->inserted_keys, kc->kb.data, kc->kb.len, &err) != LT_OK)
	{
		lt_alloc_target(old);
		lt_report_write(&err, kc->uri);
	}
	lt_alloc_target(old);
	return true;

duplicate:
	if (kc->skip_existing)
	{
		kc->skipped++;
		return false;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates the primary key of foreign table \"%s\"",
					RelationGetRelationName(kc->rel)),
			 errdetail("Key %s already exists.", key_text(kc, slot)),
			 errtable(kc->rel)));
	return false;				/* not reached */
}

void
lt_keys_end(LtKeyCheck *kc)
{
	MemoryContext old;

	if (kc == NULL)
		return;
	if (kc->index_cxt)
	{
		old = lt_alloc_target(kc->index_cxt);
		if (kc->eq)
			lt_filter_free(kc->eq);
		lt_index_planner_free(kc->planner);
		lt_alloc_target(old);
		MemoryContextDelete(kc->index_cxt);
		lt_dataset_unpin(kc->view);
	}
	old = lt_alloc_target(kc->lib_cxt);
	lt_key_buf_free(&kc->kb);
	for (int i = 0; i < kc->n_key; i++)
		lt_array_free(kc->scratch[i]);
	lt_alloc_target(old);
	MemoryContextDelete(kc->lib_cxt);
	if (kc->slots)
		pfree(kc->slots);
	if (kc->arena)
		pfree(kc->arena);
	if (kc->addr_keys)
	{
		pfree(kc->addr_keys);
		pfree(kc->addr_vals);
	}
	pfree(kc);
}

/* ---- lt_set_primary_key() ---------------------------------------------------------------------- */

typedef struct KeyCommit
{
	const LtPendingKey *p;
	lt_commit_result res;
} KeyCommit;

static lt_code
key_commit(lt_dataset *ds, void *arg, lt_error *err)
{
	KeyCommit  *kc = arg;

	return lt_commit_primary_key(ds, kc->p->field_ids, kc->p->n, NULL, &kc->res, err);
}

void
lt_keys_commit(LtXactTable *xt)
{
	LtPendingKey *p = xt->pending_key;
	KeyCommit	kc = {p};
	lt_commit_result res;
	lt_error	err;
	lt_code		rc;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw primary key commit",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;

	old = lt_alloc_target(cxt);
	rc = lt_xact_commit_on_version(xt, p->version, key_commit, &kc, &err);
	res = kc.res;
	lt_alloc_target(old);
	MemoryContextDelete(cxt);
	if (rc == LT_ECONFLICT)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lt_fdw: could not commit the primary key of foreign table \"%s\": a concurrent transaction conflicts",
						xt->relname),
				 errdetail("%s (dataset %s, checked at version " UINT64_FORMAT ").", err.msg, xt->uri, p->version),
				 errhint("Retry the transaction.")));
	if (rc == LT_EINVALID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("lt_fdw: %s", err.msg),
				 errdetail("Foreign table \"%s\".", xt->relname)));
	if (rc != LT_OK)
		lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", xt->uri, xt->relname));
	elog(DEBUG1, "lt_fdw: committed the primary key of %s as version " UINT64_FORMAT, xt->uri, res.version);
	xt->pending_key = NULL;
}

/* A key part of row r of column a (field f) as text, for messages. */
static void
append_key_part(StringInfo s, const lt_field *f, const lt_array *a, int64 r)
{
	switch (lt_key_kind_of(f))
	{
		case LT_KEY_STRING:
			appendBinaryStringInfo(s, (const char *) a->data + a->offsets[r], (int) (a->offsets[r + 1] - a->offsets[r]));
			break;
		case LT_KEY_BINARY:
			appendStringInfoString(s, "\\x");
			for (int64 i = a->offsets[r]; i < a->offsets[r + 1]; i++)
				appendStringInfo(s, "%02x", a->data[i]);
			break;
		case LT_KEY_INT64:
			appendStringInfo(s, INT64_FORMAT, f->type == LT_TYPE_INT32 ? (int64) ((int32 *) a->values)[r]
							 : ((int64 *) a->values)[r]);
			break;
		case LT_KEY_UINT64:
			appendStringInfo(s, UINT64_FORMAT, f->type == LT_TYPE_UINT32 ? (uint64) ((uint32 *) a->values)[r]
							 : ((uint64 *) a->values)[r]);
			break;
		default:
			appendStringInfoChar(s, '?');
	}
}

PG_FUNCTION_INFO_V1(lt_set_primary_key);

Datum
lt_set_primary_key(PG_FUNCTION_ARGS)
{
	Oid			relid;
	ArrayType  *arr;
	Datum	   *names;
	bool	   *nulls;
	int			n;
	char	   *relname;
	LtTableOptions opts;
	LtDatasetEntry *e;
	LtKeyCheck *kc;
	LtXactTable *xt;
	LtPendingKey *p;
	MemoryContext old;
	uint64		rows = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_set_primary_key needs a table and its key columns")));
	relid = PG_GETARG_OID(0);
	arr = PG_GETARG_ARRAYTYPE_P(1);
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &names, &nulls, &n);
	lt_check_lt_table(relid, "lt_set_primary_key");
	relname = get_rel_name(relid);
	lt_check_table_owner(relid);
	lt_get_table_options(relid, &opts);
	lt_check_not_branch(relname, &opts, "set a primary key on");
	if (opts.version || opts.tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: foreign table \"%s\" is read-only", relname),
				 errdetail("It is pinned to a version or tag of dataset %s.", opts.uri)));
	lt_check_read_privilege(GetUserId(), relname, opts.uri);
	lt_check_write_privilege(GetUserId(), relname, opts.uri);
	if (n < 1 || n > 64)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: a primary key has 1 to 64 columns, not %d", n)));
	xt = lt_xact_meta_table(relname, &opts, false);
	if (xt->pending_key)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("lt_fdw: this transaction already sets the primary key of dataset %s", opts.uri)));

	e = lt_dataset_acquire(relid, &opts, true);
	PG_TRY();
	{
		const lt_field **existing = NULL;
		int			n_existing = 0;
		lt_error	err;
		const lt_field **key = palloc(sizeof(lt_field *) * n);

		if (lt_schema_primary_key(e->ds->schema, &existing, &n_existing, &err) != LT_OK)
			lt_report(&err, opts.uri);
		lt_free(existing);
		if (n_existing > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("lt_fdw: foreign table \"%s\" already has a primary key", relname),
					 errdetail("Lance does not change the primary key of dataset %s once it is set.", opts.uri)));
		for (int i = 0; i < n; i++)
		{
			char	   *col;
			AttrNumber	att;
			const lt_field *f;

			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("lt_fdw: a primary key column name is NULL")));
			col = TextDatumGetCString(names[i]);
			att = get_attnum(relid, col);
			if (att == InvalidAttrNumber)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("lt_fdw: foreign table \"%s\" has no column \"%s\"", relname, col)));
			f = lt_schema_find_name(e->ds->schema, lt_column_field_name(relid, att, col));
			if (!f)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("lt_fdw: version " UINT64_FORMAT " of dataset %s has no field for column \"%s\"",
								e->version, opts.uri, col)));
			if (f->blob != LT_BLOB_NONE)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" cannot be a primary key column: it is a %s column",
								col, relname, lt_blob_form_name(f->blob))));
			if (lt_key_kind_of(f) == LT_KEY_UNSUPPORTED)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" cannot be a primary key column: its field has type %s",
								col, relname, f->logical_type),
						 errdetail("Lance hashes keys of types int32, int64, uint32, uint64, string and binary only.")));
			for (int j = 0; j < i; j++)
				if (key[j] == f)
					ereport(ERROR,
							(errcode(ERRCODE_DUPLICATE_COLUMN),
							 errmsg("lt_fdw: column \"%s\" appears twice in the primary key", col)));
			key[i] = f;
		}

		/* the key must hold at this version: every row's key present and unique */
		kc = palloc0(sizeof(LtKeyCheck));
		kc->relname = relname;
		kc->uri = opts.uri;
		kc->limit = (Size) work_mem * 1024;
		kc->table_rows = lt_dataset_count_rows(e->ds);
		grow_slots(kc, kc->table_rows + 16);
		for (size_t fi = 0; fi < e->ds->n_fragments; fi++)
		{
			lt_scan_options so = {0};
			lt_fragment_scanner *sc = NULL;
			lt_batch   *b;
			lt_code		rc;
			lt_key_buf	kb = {0};
			MemoryContext scan_cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw key scan", ALLOCSET_DEFAULT_SIZES);

			CHECK_FOR_INTERRUPTS();
			so.n_fields = n;
			so.fields = key;
			old = lt_alloc_target(scan_cxt);
			rc = lt_fragment_scanner_open(e->ds, e->ds->fragments[fi], &so, &sc, &err);
			while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b != NULL)
				for (int64 r = 0; r < b->length && rc == LT_OK; r++)
				{
					bool		is_null;

					rc = lt_key_from_row(&kb, key, n, b->columns, r, &is_null, &err);
					if (rc != LT_OK)
						break;
					rows++;
					if (is_null || lookup(kc, kb.data, kb.len, key_hash(kb.data, kb.len)))
					{
						StringInfoData ks;
						int			bad = -1;

						initStringInfo(&ks);
						for (int i = 0; i < n; i++)
						{
							if (!lt_array_is_valid(b->columns[i], r))
								bad = bad < 0 ? i : bad;
							appendStringInfoString(&ks, i ? ", " : "");
							if (lt_array_is_valid(b->columns[i], r))
								append_key_part(&ks, key[i], b->columns[i], r);
							else
								appendStringInfoString(&ks, "null");
						}
						lt_alloc_target(old);
						if (is_null)
							ereport(ERROR,
									(errcode(ERRCODE_NOT_NULL_VIOLATION),
									 errmsg("lt_fdw: column \"%s\" of foreign table \"%s\" contains null values",
											key[bad]->name, relname),
									 errdetail("Row " UINT64_FORMAT " (address " UINT64_FORMAT ") of dataset %s, version " UINT64_FORMAT ", has a NULL key.",
											   rows, b->row_addrs[r], opts.uri, e->version)));
						ereport(ERROR,
								(errcode(ERRCODE_UNIQUE_VIOLATION),
								 errmsg("lt_fdw: could not set the primary key of foreign table \"%s\"", relname),
								 errdetail("Key (%s)=(%s) is duplicated (dataset %s, version " UINT64_FORMAT ").",
										   psprintf("%s", key[0]->name), ks.data, opts.uri, e->version)));
					}
					insert(kc, kb.data, kb.len, key_hash(kb.data, kb.len), b->row_addrs[r]);
				}
			if (sc)
				lt_fragment_scanner_free(sc);
			lt_key_buf_free(&kb);
			lt_alloc_target(old);
			if (rc != LT_OK)
				lt_report(&err, opts.uri);
			MemoryContextDelete(scan_cxt);
		}

		/* Lance refuses a schema whose key fields are nullable, even without a NULL in them */
		for (int i = 0; i < n; i++)
			if (key[i]->nullable)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
						 errmsg("lt_fdw: field \"%s\" of foreign table \"%s\" cannot be a primary key column: it is nullable",
								key[i]->name, relname),
						 errdetail("Lance requires the primary key fields of dataset %s to be non-nullable.", opts.uri)));

		old = MemoryContextSwitchTo(xt->meta_cxt);
		p = palloc0(sizeof(LtPendingKey));
		p->version = e->version;
		p->n = n;
		p->field_ids = palloc(sizeof(int32_t) * n);
		for (int i = 0; i < n; i++)
			p->field_ids[i] = key[i]->id;
		p->subid = GetCurrentSubTransactionId();
		xt->pending_key = p;
		MemoryContextSwitchTo(old);
	}
	PG_FINALLY();
	{
		lt_dataset_unpin(e);
	}
	PG_END_TRY();
	PG_RETURN_INT64((int64) rows);
}

PG_FUNCTION_INFO_V1(lt_primary_key);

/* The dataset's primary key fields in key order (the version a query would read), NULL without one. */
Datum
lt_primary_key(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	LtTableOptions opts;
	LtDatasetEntry *e;
	const lt_field **key = NULL;
	int			n = 0;
	lt_error	err;
	lt_code		rc;
	Datum	   *names;
	MemoryContext old;

	lt_check_lt_table(relid, "lt_primary_key");
	lt_check_table_select(relid);
	lt_get_table_options(relid, &opts);
	lt_check_read_privilege(GetUserId(), get_rel_name(relid), opts.uri);
	e = lt_dataset_acquire(relid, &opts, false);
	old = lt_alloc_target(CurrentMemoryContext);
	rc = lt_schema_primary_key(e->ds->schema, &key, &n, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, opts.uri);
	if (n == 0)
		PG_RETURN_NULL();
	names = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		names[i] = CStringGetTextDatum(key[i]->name);
	PG_RETURN_ARRAYTYPE_P(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* EXPLAIN ANALYZE of a write to a keyed table: how its key was checked. */
void
lt_keys_explain(LtKeyCheck *kc, ExplainState *es)
{
	StringInfoData how;

	if (kc == NULL || !kc->loaded)
		return;
	initStringInfo(&how);
	if (kc->index)
		appendStringInfo(&how, "index \"%s\" (%s): " UINT64_FORMAT " lookups, " UINT64_FORMAT " found; ",
						 kc->index->name, lt_index_kind_name(kc->index->kind), kc->index_lookups, kc->index_hits);
	appendStringInfo(&how, UINT64_FORMAT " keys read from " UINT64_FORMAT " fragments", kc->rows_scanned,
					 kc->fragments_scanned);
	if (kc->skip_existing)
		appendStringInfo(&how, "; " UINT64_FORMAT " rows skipped", kc->skipped);
	ExplainPropertyText("Primary Key Check", how.data, es);
}
