/*
 * dataset.c — the format library inside a backend: its allocations in memory contexts, its errors
 * as ereports with SQLSTATEs, which version a statement reads, and a per-backend cache of opened
 * datasets.
 *
 * Memory. The library allocates through hooks (lt_set_allocator). They allocate in the context
 * named by lt_alloc_target(), with MCXT_ALLOC_NO_OOM: the library sees NULL (LT_ENOMEM) rather
 * than a longjmp through its frames, and reports it on the way out. Library objects that hold
 * resources Postgres does not track (file descriptors, CRoaring's malloc'd bitmaps) are released
 * from a MemoryContextCallback of the context they live in, so an ERROR mid-scan leaks nothing.
 *
 * Snapshots. A table pinned by `version` or `tag` reads that version. Otherwise READ COMMITTED
 * resolves the latest version once per statement and REPEATABLE READ / SERIALIZABLE once per
 * transaction; the choice is remembered per table for as long as it holds, so every scan of the
 * table in that statement (or transaction) reads the same version. Parallel workers read the
 * leader's choices: the leader publishes them in a GUC of the transaction (lt_fdw.leader_versions),
 * which every worker receives with the leader's settings, so that a scan running in a worker (a
 * pushed aggregate or a whole plan under a Gather) reads what the leader would.
 *
 * Own writes. A table whose dataset this transaction modified reads the transaction's view of it
 * (xact.c): the read version with the pending changes applied.
 *
 * Cache. Opened datasets are kept per backend, keyed by (dataset directory, version): a new
 * version is a new key, so nothing is ever stale. At most LT_CACHE_SIZE entries are kept; the
 * least recently used unpinned entry goes first. A later version of a dataset the cache holds is read by
 * advancing the held one in place (cache_advance): fragments encoded alike in both manifests are not parsed
 * again, so the statement after a single-row commit does not re-parse the manifest it wrote.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/backendid.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "io/lt_store.h"
#include "file/lt_file_cache.h"
#include "util/lt_alloc.h"
#include "dataset.h"
#include "option.h"
#include "store.h"
#include "index/lt_index_plan.h"

/* ---- allocation hooks ----------------------------------------------------------------------- */

/*
 * Each chunk remembers its size (so that realloc can copy into a new chunk of the same context)
 * and the palloc'd block it lives in. Payloads are 16-byte aligned, as malloc's are: the library
 * has __int128 members (lt_value), which the compiler copies with aligned vector moves.
 */
typedef struct LtChunkHeader
{
	void	   *chunk;			/* what palloc returned */
	Size		size;
} LtChunkHeader;

#define LT_ALIGN	16
#define LT_HDR(ptr)	((LtChunkHeader *) ((char *) (ptr) - sizeof(LtChunkHeader)))

static MemoryContext alloc_target = NULL;
static MemoryContext alloc_fallback = NULL;
/* the arena small allocations of alloc_target go to, when its owner named one (lt_alloc_target_arena) */
static LtAllocArena *alloc_arena = NULL;

/*
 * An arena chunk's header holds its arena with the low bit set instead of a palloc'd chunk: lt_pg_free
 * leaves it (the arena goes whole with its context's reset), lt_pg_realloc copies it.
 */
#define LT_ARENA_TAG(a)		((void *) ((uintptr_t) (a) | 1))
#define LT_IS_ARENA(chunk)	(((uintptr_t) (chunk) & 1) != 0)
#define LT_ARENA_OF(chunk)	((LtAllocArena *) ((uintptr_t) (chunk) & ~(uintptr_t) 1))
/* larger requests, and any once the arena holds this much, are palloc'd as before: its waste stays bounded */
#define LT_ARENA_MAX_CHUNK	4096
#define LT_ARENA_BUDGET		((Size) 256 * 1024)
#define LT_ARENA_BLOCK		((Size) 16 * 1024)

MemoryContext
lt_alloc_target(MemoryContext cxt)
{
	MemoryContext old = alloc_target;

	alloc_target = cxt;
	alloc_arena = NULL;
	return old;
}

MemoryContext
lt_alloc_target_arena(LtAllocArena *arena)
{
	MemoryContext old = lt_alloc_target(arena->cxt);

	alloc_arena = arena;
	return old;
}

void
lt_alloc_arena_init(LtAllocArena *arena, MemoryContext home, MemoryContext cxt)
{
	memset(arena, 0, sizeof(*arena));
	arena->home = home;
	arena->cxt = cxt;
}

void
lt_alloc_arena_reset(LtAllocArena *arena)
{
	/* the first block stays (it lives in the owner's memory, not in cxt); later ones went with cxt */
	arena->cur = arena->first;
	arena->end = arena->first ? arena->first + LT_ARENA_BLOCK : NULL;
	arena->used = 0;
}

void
lt_alloc_arena_forget(LtAllocArena *arena)
{
	if (alloc_arena == arena)
		alloc_arena = NULL;
}

/* A chunk of the arena, or NULL when the request is to be palloc'd (too big, budget spent, no memory). */
static void *
arena_alloc(LtAllocArena *a, size_t size)
{
	Size		need = sizeof(LtChunkHeader) + 2 * LT_ALIGN + size;	/* header, its alignment, the size rounded up */
	char	   *p;

	if (size > LT_ARENA_MAX_CHUNK)
		return NULL;
	if (a->cur == NULL || (Size) (a->end - a->cur) < need)
	{
		if (a->used >= LT_ARENA_BUDGET)
			return NULL;
		if (a->first == NULL)
		{
			/* in the memory of the arena's owner: kept across resets of cxt */
			a->first = MemoryContextAllocExtended(a->home, LT_ARENA_BLOCK, MCXT_ALLOC_NO_OOM);
			a->cur = a->first;
		}
		else
			a->cur = MemoryContextAllocExtended(a->cxt, LT_ARENA_BLOCK, MCXT_ALLOC_NO_OOM);
		if (a->cur == NULL)
		{
			a->end = NULL;
			return NULL;
		}
		a->end = a->cur + LT_ARENA_BLOCK;
		a->used += LT_ARENA_BLOCK;
	}
	p = (char *) TYPEALIGN(LT_ALIGN, a->cur + sizeof(LtChunkHeader));
	LT_HDR(p)->chunk = LT_ARENA_TAG(a);
	LT_HDR(p)->size = size;
	a->cur = p + TYPEALIGN(LT_ALIGN, size);
	return p;
}

static void *
lt_pg_alloc_in(MemoryContext cxt, size_t size)
{
	char	   *raw;
	char	   *p;

	if (size > MaxAllocHugeSize - sizeof(LtChunkHeader) - LT_ALIGN)
		return NULL;
	raw = MemoryContextAllocExtended(cxt, sizeof(LtChunkHeader) + LT_ALIGN + size,
									 MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (raw == NULL)
		return NULL;
	p = (char *) TYPEALIGN(LT_ALIGN, raw + sizeof(LtChunkHeader));
	LT_HDR(p)->chunk = raw;
	LT_HDR(p)->size = size;
	return p;
}

static void *
lt_pg_malloc(size_t size, void *ctx)
{
	if (alloc_arena)
	{
		void	   *p = arena_alloc(alloc_arena, size);

		if (p)
			return p;
	}
	return lt_pg_alloc_in(alloc_target ? alloc_target : alloc_fallback, size);
}

static void *
lt_pg_realloc(void *ptr, size_t size, void *ctx)
{
	LtChunkHeader *h = LT_HDR(ptr);
	void	   *n;

	if (size <= h->size)
	{
		/* shrinking: keep the chunk (the library never relies on the memory being returned) */
		h->size = size;
		return ptr;
	}
	if (LT_IS_ARENA(h->chunk))
	{
		LtAllocArena *a = LT_ARENA_OF(h->chunk);

		/* growing an arena chunk: into the arena again, or its context */
		n = arena_alloc(a, size);
		if (n == NULL)
			n = lt_pg_alloc_in(a->cxt, size);
		if (n != NULL)
			memcpy(n, ptr, h->size);
		return n;
	}
	n = lt_pg_alloc_in(GetMemoryChunkContext(h->chunk), size);
	if (n == NULL)
		return NULL;
	memcpy(n, ptr, h->size);
	pfree(h->chunk);
	return n;
}

static void
lt_pg_free(void *ptr, void *ctx)
{
	void	   *chunk = LT_HDR(ptr)->chunk;

	if (!LT_IS_ARENA(chunk))
		pfree(chunk);
}

static void *
lt_pg_malloc_in(size_t size, void *ctx)
{
	return lt_pg_alloc_in((MemoryContext) ctx, size);
}

void
lt_allocator_in(MemoryContext cxt, lt_allocator *out)
{
	out->malloc_fn = lt_pg_malloc_in;
	out->realloc_fn = lt_pg_realloc;
	out->free_fn = lt_pg_free;
	out->ctx = cxt;
}

void
lt_alloc_init(void)
{
	static const lt_allocator hooks = {lt_pg_malloc, lt_pg_realloc, lt_pg_free, NULL};

	if (alloc_fallback == NULL)
		alloc_fallback = AllocSetContextCreate(TopMemoryContext, "lt_fdw library",
											   ALLOCSET_DEFAULT_SIZES);
	lt_set_allocator(&hooks);
}

/* ---- errors --------------------------------------------------------------------------------- */

/* Is this ": "-separated segment of a library message the path of a file inside a dataset? */
static bool
is_file_path(const char *seg, size_t len)
{
	static const char *const dirs[] = {"data/", "_deletions/", "_versions/", "_indices/", "_transactions/"};
	static const char *const exts[] = {".lance", ".manifest", ".arrow", ".bin", ".txn", ".idx"};
	char	   *s = pnstrdup(seg, len);
	bool		dir = false,
				ext = false;

	if (strchr(s, ' ') == NULL)
	{
		const char *base = strrchr(s, '/');

		/* relative to the dataset, or a full path whose parent is one of its directories and whose name is
		 * a generated one (a dataset directory of its own, /srv/data/x.lance, stays in the message) */
		for (int i = 0; i < lengthof(dirs); i++)
			dir |= strncmp(s, dirs[i], strlen(dirs[i])) == 0 ||
				(base && base - s >= (ptrdiff_t) strlen(dirs[i]) &&
				 strncmp(base + 1 - strlen(dirs[i]), dirs[i], strlen(dirs[i])) == 0 &&
				 base[-(ptrdiff_t) strlen(dirs[i])] == '/' && strlen(base + 1) >= 24);
		for (int i = 0; i < lengthof(exts); i++)
			ext |= len > strlen(exts[i]) && strcmp(s + len - strlen(exts[i]), exts[i]) == 0;
	}
	pfree(s);
	return dir && ext;
}

/*
 * The library's message made fit for errmsg: a leading file path goes to *file (for the detail:
 * data-file names are long and vary), and a prefix the message repeats ("field "st": field "st": ...",
 * context added twice on the way up) is said once.
 */
static char *
tidy_message(const char *msg, char **file)
{
	StringInfoData out;
	const char *p = msg;
	const char *prev = NULL;
	size_t		prev_len = 0;

	*file = NULL;
	initStringInfo(&out);
	for (;;)
	{
		const char *sep = strstr(p, ": ");
		size_t		len = sep ? (size_t) (sep - p) : strlen(p);

		if (sep == NULL)
		{
			appendStringInfoString(&out, p);
			break;
		}
		if (out.len == 0 && *file == NULL && is_file_path(p, len))
			*file = pnstrdup(p, len);
		else if (!(prev && prev_len == len && strncmp(prev, p, len) == 0))
			appendBinaryStringInfo(&out, p, len + 2);
		prev = p;
		prev_len = len;
		p = sep + 2;
	}
	return out.data;
}

static pg_attribute_noreturn() void
report(const lt_error *err, const char *what, const char *verb)
{
	int			sqlstate;
	char	   *file;
	char	   *msg = tidy_message(err->msg, &file);

	switch (err->code)
	{
		case LT_ENOTFOUND:
			sqlstate = ERRCODE_UNDEFINED_FILE;
			break;
		case LT_ECORRUPT:
			sqlstate = ERRCODE_DATA_CORRUPTED;
			break;
		case LT_EUNSUPPORTED:
			sqlstate = ERRCODE_FEATURE_NOT_SUPPORTED;
			break;
		case LT_EIO:
			sqlstate = ERRCODE_IO_ERROR;
			break;
		case LT_ENOMEM:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("lt_fdw: %s: %s", what, err->msg)));
			pg_unreachable();
		case LT_ECONFLICT:
			sqlstate = ERRCODE_T_R_SERIALIZATION_FAILURE;
			break;
		case LT_EACCESS:
			sqlstate = ERRCODE_INSUFFICIENT_PRIVILEGE;
			break;
		case LT_ECANCELED:
			/* the S3 backend stopped because an interrupt is pending: raise it */
			CHECK_FOR_INTERRUPTS();
			sqlstate = ERRCODE_QUERY_CANCELED;
			break;
		default:
			sqlstate = ERRCODE_FDW_ERROR;
			break;
	}
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("lt_fdw: %s", msg),
			 file ? errdetail("The file is %s.", file) : 0,
			 errcontext("%s %s", verb, what)));
	pg_unreachable();
}

void
lt_report(const lt_error *err, const char *what)
{
	report(err, what, "reading");
}

void
lt_report_write(const lt_error *err, const char *what)
{
	report(err, what, "writing");
}

/*
 * The first blob column a statement could not write: lt_fdw writes legacy blobs in storage 2.0 and 2.1 and
 * blob v2 in storage 2.2 (lt_writer21.c, lt_sidecar.c), from rows SQL gives and, in lt_compact, from the bytes
 * the old descriptors point at (lt_compact.c).
 */
static const lt_field *
blob_not_written(const lt_dataset *ds)
{
	bool		legacy_ok = ds->storage_version && (strcmp(ds->storage_version, "2.1") == 0 ||
													strcmp(ds->storage_version, "2.0") == 0);
	bool		v2_ok = ds->storage_version && strcmp(ds->storage_version, "2.2") == 0;

	for (int i = 0; ds->schema && i < ds->schema->n_fields; i++)
	{
		const lt_field *f = ds->schema->fields[i];

		if (f->blob == LT_BLOB_NONE)
			continue;
		if (legacy_ok && f->blob == LT_BLOB_LEGACY && f->type == LT_TYPE_LARGE_BINARY)
			continue;
		if (v2_ok && f->blob == LT_BLOB_V2 && f->type == LT_TYPE_STRUCT && f->n_children == 2 && !f->blob_sizes.bad)
			continue;
		return f;
	}
	return NULL;
}

void
lt_check_blob_writable(const char *relname, const char *uri, const lt_dataset *ds, const char *doing)
{
	const lt_field *f = blob_not_written(ds);

	/* writing would store the blob as an ordinary column, which the Lance engine can no longer scan */
	if (f)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_fdw: cannot %s foreign table \"%s\": column \"%s\" is a %s column, which lt_fdw does not write",
						doing, relname, f->name, lt_blob_form_name(f->blob)),
				 errdetail("Dataset %s (storage version %s) stores \"%s\" out of line; nothing was written.",
						   uri, ds->storage_version, f->name),
				 errhint("lt_fdw writes legacy blob columns in storage 2.0 and 2.1 and blob v2 columns in storage 2.2; write this dataset with a Lance engine. DELETE and reads work through lt_fdw.")));
}

/* ---- the cache ------------------------------------------------------------------------------ */

#define LT_CACHE_SIZE 16

/* Data files an entry keeps open: each holds a descriptor outside PostgreSQL's count */
#define LT_FILE_CACHE_FILES 32

static MemoryContext cache_cxt = NULL;
static LtDatasetEntry *cache[LT_CACHE_SIZE];
static int	cache_n = 0;
static uint64 cache_clock = 0;
static uint64 entry_serials = 0;	/* LtDatasetEntry.serial */

static void
entry_free(LtDatasetEntry *e)
{
	MemoryContext old = lt_alloc_target(e->cxt);

	if (e->planner)
		lt_index_planner_free(e->planner);	/* closes the index files */
	if (e->files)
		lt_file_cache_free(e->files);	/* closes the data files */
	if (e->ds)
		lt_dataset_close(e->ds);
	if (e->store)
		lt_store_close(e->store);
	lt_alloc_target(old);
	MemoryContextDelete(e->cxt);	/* the entry itself lives there too */
}

/* The identity of a location's credentials ("" for local directories): part of the key. */
static const char *
store_identity(const LtS3Location *s3)
{
	return s3 ? s3->identity : "";
}

static LtDatasetEntry *
cache_lookup(const LtS3Location *s3, const char *dir, const char *branch, uint64 version)
{
	for (int i = 0; i < cache_n; i++)
		if (cache[i]->version == version && strcmp(cache[i]->dir, dir) == 0 &&
			strcmp(cache[i]->branch, branch ? branch : "") == 0 &&
			strcmp(cache[i]->identity, store_identity(s3)) == 0)
			return cache[i];
	return NULL;
}

/* Make room for one more entry: drop the least recently used unpinned one. */
static void
cache_make_room(void)
{
	int			victim = -1;

	if (cache_n < LT_CACHE_SIZE)
		return;
	for (int i = 0; i < cache_n; i++)
		if (cache[i]->pins == 0 && (victim < 0 || cache[i]->last_used < cache[victim]->last_used))
			victim = i;
	if (victim < 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("lt_fdw: more than %d datasets are in use by one query", LT_CACHE_SIZE)));
	entry_free(cache[victim]);
	cache[victim] = cache[--cache_n];
}

/*
 * A later version of a dataset the cache holds an earlier version of: that entry advanced in place
 * (lt_dataset_advance), so that the fragments both manifests encode alike are not parsed again. What a
 * single-row commit of this backend wrote is the next statement's version: without this it would parse the
 * whole manifest it has just written. Only an entry no scan pins and no statement of this transaction
 * looked up (none can hold it); main only. NULL when there is none or it does not advance (then the
 * entry is dropped, and the caller opens the version as usual, reporting what is wrong with it).
 */
static LtDatasetEntry *
cache_advance(const LtS3Location *s3, const char *dir, const char *branch, uint64 version)
{
	LtDatasetEntry *e = NULL;
	MemoryContext old;
	lt_error	err;
	lt_code		rc;
	int			at = -1;

	if (branch && branch[0])
		return NULL;
	for (int i = 0; i < cache_n; i++)
	{
		LtDatasetEntry *c = cache[i];

		if (c->pins == 0 && c->last_lxid != MyProc->lxid && c->version < version && c->branch[0] == '\0' &&
			c->ds->manifest_msg && strcmp(c->dir, dir) == 0 && strcmp(c->identity, store_identity(s3)) == 0 &&
			(e == NULL || c->version > e->version))
		{
			e = c;
			at = i;
		}
	}
	if (e == NULL)
		return NULL;
	old = lt_alloc_target(e->cxt);
	if (e->planner)
		lt_index_planner_free(e->planner);	/* of the old version's indexes */
	e->planner = NULL;
	rc = LT_OK;
	if (e->adopt && e->adopt->from_version == e->ds->version && e->adopt->version <= version)
		rc = lt_dataset_adopt(e->ds, e->adopt, &err);
	if (e->adopt)
	{
		pfree(e->adopt);
		e->adopt = NULL;
	}
	if (rc == LT_OK && e->ds->version < version)
		rc = lt_dataset_advance(e->ds, version, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
	{
		cache[at] = cache[--cache_n];
		entry_free(e);
		return NULL;
	}
	e->version = version;
	e->serial = ++entry_serials;
	e->live_rows = e->ds->live_rows;	/* kept by open and advance */
	return e;
}

void
lt_dataset_offer_adoption(LtDatasetEntry *e, const lt_adoption *a)
{
	if (e->adopt)
		pfree(e->adopt);
	e->adopt = NULL;
	if (a->from_version != e->version || e->branch[0] != '\0')
		return;
	e->adopt = MemoryContextAlloc(e->cxt, lt_adoption_size(a));
	memcpy(e->adopt, a, lt_adoption_size(a));
}

/*
 * What an error names: the dataset and its foreign table, written only when an error needs it (a statement
 * that finds its version cached reports nothing; building the text was a syscache lookup and a psprintf each).
 */
typedef struct LtWhat
{
	const char *text;			/* given whole, or NULL: built from relid and opts */
	Oid			relid;
	const LtTableOptions *opts;
	bool		with_branch;
} LtWhat;

static const char *
what_text(const LtWhat *w)
{
	if (w->text)
		return w->text;
	if (w->with_branch && w->opts->branch)
		return psprintf("branch \"%s\" of dataset %s (foreign table \"%s\")", w->opts->branch, w->opts->uri,
						get_rel_name(w->relid));
	return psprintf("dataset %s (foreign table \"%s\")", w->opts->uri, get_rel_name(w->relid));
}

static LtDatasetEntry *
cache_open(const LtS3Location *s3, const char *dir, const char *branch, uint64 version, const LtWhat *what)
{
	LtDatasetEntry *e = cache_lookup(s3, dir, branch, version);
	MemoryContext cxt;
	MemoryContext old;
	lt_version_spec spec = {0};
	lt_error	err;
	lt_code		rc;

	if (e == NULL)
		e = cache_advance(s3, dir, branch, version);
	if (e)
	{
		e->last_used = ++cache_clock;
		e->last_lxid = MyProc->lxid;
		e->store->no_fsync = !enableFsync;	/* fsync may have changed at a reload */
		return e;
	}
	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(CacheMemoryContext, "lt_fdw dataset cache",
										  ALLOCSET_SMALL_SIZES);
	cache_make_room();

	cxt = AllocSetContextCreate(cache_cxt, "lt_fdw dataset", ALLOCSET_DEFAULT_SIZES);
	e = MemoryContextAllocZero(cxt, sizeof(LtDatasetEntry));
	e->cxt = cxt;
	e->serial = ++entry_serials;
	e->dir = MemoryContextStrdup(cxt, dir);
	e->identity = MemoryContextStrdup(cxt, store_identity(s3));
	e->version = version;
	e->branch = MemoryContextStrdup(cxt, branch ? branch : "");

	spec.version = version;
	spec.branch = branch;
	old = lt_alloc_target(cxt);
	rc = lt_open_store(s3, dir, &e->store, &err);
	if (rc == LT_OK)
		rc = lt_dataset_open(e->store, "", &spec, &e->ds, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
	{
		entry_free(e);
		lt_report(&err, what_text(what));
	}
	e->live_rows = e->ds->live_rows;	/* kept by open and advance */
	e->last_used = ++cache_clock;
	e->last_lxid = MyProc->lxid;
	cache[cache_n++] = e;
	return e;
}

/* ---- version resolution --------------------------------------------------------------------- */

/* Remembered choices for the current snapshot epoch (statement or transaction). */
typedef struct LtPinnedVersion
{
	Oid			relid;
	uint64		version;
} LtPinnedVersion;

static LocalTransactionId pin_lxid = InvalidLocalTransactionId;
static TimestampTz pin_stmt = 0;
static List *pins = NIL;		/* of LtPinnedVersion, in TopTransactionContext */

/* The epoch of the choices: the statement (READ COMMITTED) or the transaction (0). */
static TimestampTz
pin_epoch(void)
{
	return IsolationUsesXactSnapshot() ? 0 : GetCurrentStatementStartTimestamp();
}

/*
 * Whether this epoch's choices are published for parallel workers: only once a plan that may start
 * workers asked (lt_dataset_publish_pins). Setting the GUC costs a point lookup about 4% of its
 * instructions, and as much again to undo it at the end of the transaction.
 */
static bool pins_wanted = false;

/* Start a new epoch when the statement (READ COMMITTED) or the transaction changed. */
static void
pin_epoch_roll(void)
{
	TimestampTz stmt = pin_epoch();

	if (MyProc->lxid != pin_lxid || stmt != pin_stmt)
	{
		/* a new epoch: the old list went away with its transaction, or is dropped now */
		if (MyProc->lxid == pin_lxid)
			list_free_deep(pins);
		pins = NIL;
		pin_lxid = MyProc->lxid;
		pin_stmt = stmt;
		pins_wanted = false;
	}
}

static LtPinnedVersion *
pin_lookup(Oid relid)
{
	ListCell   *lc;

	pin_epoch_roll();
	foreach(lc, pins)
	{
		LtPinnedVersion *p = lfirst(lc);

		if (p->relid == relid)
			return p;
	}
	return NULL;
}

/* The leader's choices, for its parallel workers: "backend xact_start epoch relid=version ..." */
static char *leader_versions = NULL;

/* Publish the choices of this epoch (not from a worker, nor in parallel mode, where GUCs are fixed). */
static void
pins_publish(void)
{
	StringInfoData buf;
	ListCell   *lc;

	if (IsParallelWorker() || IsInParallelMode())
		return;
	initStringInfo(&buf);
	appendStringInfo(&buf, "%d " INT64_FORMAT " " INT64_FORMAT, MyBackendId,
					 (int64) GetCurrentTransactionStartTimestamp(), (int64) pin_stmt);
	foreach(lc, pins)
	{
		LtPinnedVersion *p = lfirst(lc);

		appendStringInfo(&buf, " %u=" UINT64_FORMAT, p->relid, p->version);
	}
	(void) set_config_option("lt_fdw.leader_versions", buf.data, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	pfree(buf.data);
}

/* In a parallel worker: the version the leader chose for relid in this epoch, if it did. */
static bool
leader_version(Oid relid, uint64 *version)
{
	const char *s = leader_versions;
	int			backend;
	int64		xact_ts,
				epoch;
	int			used;

	if (!IsParallelWorker() || s == NULL ||
		sscanf(s, "%d " INT64_FORMAT " " INT64_FORMAT "%n", &backend, &xact_ts, &epoch, &used) != 3)
		return false;
	if (backend != ParallelLeaderBackendId || xact_ts != (int64) GetCurrentTransactionStartTimestamp() ||
		epoch != (int64) pin_epoch())
		return false;
	for (s += used; *s == ' '; )
	{
		unsigned int r;
		unsigned long long v;

		if (sscanf(s, " %u=%llu%n", &r, &v, &used) != 2)
			return false;
		if (r == relid)
		{
			*version = (uint64) v;
			return true;
		}
		s += used;
	}
	return false;
}

static void
pin_remember(Oid relid, uint64 version)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	LtPinnedVersion *p = palloc(sizeof(LtPinnedVersion));

	p->relid = relid;
	p->version = version;
	pins = lappend(pins, p);
	MemoryContextSwitchTo(old);
	if (pins_wanted)
		pins_publish();
}

void
lt_dataset_publish_pins(void)
{
	if (IsParallelWorker() || IsInParallelMode())
		return;
	pin_epoch_roll();
	pins_wanted = true;
	pins_publish();
}

void
lt_dataset_init(void)
{
	DefineCustomStringVariable("lt_fdw.leader_versions",
							   "Internal: the dataset versions a leader's statement reads, for its parallel workers.",
							   NULL, &leader_versions, "", PGC_USERSET,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE | GUC_NO_RESET_ALL,
							   NULL, NULL, NULL);
}

/*
 * The version a tag names; on the table's branch when it has one, else on the tag's own line (as Lance opens a
 * tag), which must then be main: a table without the branch option reads main.
 */
static lt_code
tag_version(lt_store *store, const LtTableOptions *opts, uint64_t *version, lt_error *err)
{
	char	   *branch = NULL;
	lt_code		rc = lt_dataset_tag_ref(store, "", opts->tag, version, &branch, err);

	if (rc == LT_OK && (branch != NULL) != (opts->branch != NULL))
		rc = lt_error_set(err, LT_ENOTFOUND, "tag \"%s\" names version %llu of %s%s%s, not of %s%s%s",
						  opts->tag, (unsigned long long) *version, branch ? "branch \"" : "main",
						  branch ? branch : "", branch ? "\"" : "", opts->branch ? "branch \"" : "main",
						  opts->branch ? opts->branch : "", opts->branch ? "\"" : "");
	else if (rc == LT_OK && branch && strcmp(branch, opts->branch) != 0)
		rc = lt_error_set(err, LT_ENOTFOUND, "tag \"%s\" names version %llu of branch \"%s\", not of branch \"%s\"",
						  opts->tag, (unsigned long long) *version, branch, opts->branch);
	lt_free(branch);
	return rc;
}

static uint64
resolve_version(Oid relid, const LtTableOptions *opts, const LtWhat *what)
{
	LtPinnedVersion *p;
	MemoryContext tmp;
	MemoryContext old;
	lt_store   *store = NULL;
	lt_error	err;
	lt_code		rc;
	uint64_t	version = 0;
	lt_naming	naming;

	if (opts->version)
		return opts->version;
	p = pin_lookup(relid);
	if (p)
		return p->version;
	if (leader_version(relid, &version))
	{
		pin_remember(relid, version);
		return version;
	}

	tmp = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw resolve", ALLOCSET_SMALL_SIZES);
	old = lt_alloc_target(tmp);
	rc = lt_open_store(opts->s3, opts->dataset_dir, &store, &err);
	if (rc == LT_OK && opts->tag)
		rc = tag_version(store, opts, &version, &err);
	else if (rc == LT_OK && opts->branch)
	{
		char	   *prefix = NULL;

		rc = lt_dataset_branch_prefix(store, "", opts->branch, &prefix, &err);
		if (rc == LT_OK)
			rc = lt_dataset_latest_version(store, prefix, &version, &naming, &err);
	}
	else if (rc == LT_OK)
		rc = lt_dataset_latest_version(store, "", &version, &naming, &err);
	if (store)
		lt_store_close(store);
	lt_alloc_target(old);
	MemoryContextDelete(tmp);
	if (rc != LT_OK)
		lt_report(&err, what_text(what));
	pin_remember(relid, version);
	return version;
}

/* The transaction's own-writes views (xact.c's lt_xact_view, installed by lt_fdw.c at load). */
static LtDatasetViewHook view_hook = NULL;

void
lt_dataset_set_view_hook(LtDatasetViewHook hook)
{
	view_hook = hook;
}

LtDatasetEntry *
lt_dataset_acquire(Oid relid, const LtTableOptions *opts, bool pin)
{
	LtWhat		what = {NULL, relid, opts, true};
	uint64		version;
	LtDatasetEntry *e;

	/* a dataset this transaction modified: its own writes (xact.c), unless the table is pinned */
	Assert(view_hook != NULL);
	if (opts->version == 0 && opts->tag == NULL && opts->branch == NULL &&
		(e = view_hook(opts->dataset_dir, pin)) != NULL)
		return e;
	version = resolve_version(relid, opts, &what);
	e = cache_open(opts->s3, opts->dataset_dir, opts->branch, version, &what);

	if (pin)
		e->pins++;
	return e;
}

LtDatasetEntry *
lt_dataset_acquire_version(Oid relid, const LtTableOptions *opts, uint64 version)
{
	LtWhat		what = {NULL, relid, opts, false};
	LtDatasetEntry *e = cache_open(opts->s3, opts->dataset_dir, opts->branch, version, &what);

	e->pins++;
	return e;
}

void
lt_dataset_unpin(LtDatasetEntry *entry)
{
	Assert(entry->pins > 0);
	entry->pins--;
}

/* The latest version of the dataset in dir (for IMPORT FOREIGN SCHEMA); NULL when dir is no dataset. */
struct lt_file_cache *
lt_dataset_file_cache(LtDatasetEntry *entry)
{
	if (entry->files == NULL)
	{
		lt_allocator a;
		lt_error	err;

		lt_allocator_in(entry->cxt, &a);
		if (lt_file_cache_create(&a, LT_FILE_CACHE_FILES, &entry->files, &err) != LT_OK)
			lt_report(&err, entry->dir);
	}
	return entry->files;
}

LtDatasetEntry *
lt_dataset_open_latest(const LtS3Location *s3, const char *dir, const char *what)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "lt_fdw resolve", ALLOCSET_SMALL_SIZES);
	MemoryContext old = lt_alloc_target(tmp);
	lt_store   *store = NULL;
	lt_error	err;
	lt_code		rc;
	uint64_t	version = 0;
	lt_naming	naming;

	rc = lt_open_store(s3, dir, &store, &err);
	if (rc == LT_OK)
		rc = lt_dataset_latest_version(store, "", &version, &naming, &err);
	if (store)
		lt_store_close(store);
	lt_alloc_target(old);
	MemoryContextDelete(tmp);
	if (rc == LT_ENOTFOUND)
		return NULL;
	if (rc != LT_OK)
		lt_report(&err, what);
	{
		LtWhat		w = {what};

		return cache_open(s3, dir, NULL, version, &w);
	}
}
