/*
 * index_build.c — lt_create_index(target, column_name, kind, name [, options]): a scalar index, or an
 * IVF_FLAT / IVF_PQ / IVF_SQ / IVF_HNSW_SQ / IVF_HNSW_PQ / IVF_RQ vector index (kind ivf_flat / ivf_pq / ivf_sq /
 * ivf_hnsw_sq / ivf_hnsw_pq / ivf_rq, options "num_partitions=N, metric=l2|cosine|dot|hamming, sample_rate=R,
 * max_iters=I"; float16 / float64 vectors: all kinds but ivf_rq; uint8 ones: ivf_flat, metric hamming; what a
 * column's type does not take is 22023 for a metric, 0A000 for a kind), ivf_pq also
 * "num_sub_vectors=M, num_bits=8|4", ivf_hnsw_sq also "m=M, ef_construction=E", ivf_hnsw_pq "num_sub_vectors=M, num_bits=8|4, m=M,
 * ef_construction=E"), built from SQL and
 * committed with the Postgres transaction.
 *
 * The call builds the index at once, on the version the statement reads (the snapshot rules of
 * dataset.c; a later index of the same table in the transaction on the version of the first), and
 * writes its files to _indices/<uuid>/ of the dataset, where nothing refers to them yet. The commit is one Lance CreateIndex per dataset at XACT_EVENT_PRE_COMMIT (every index the
 * transaction built on that dataset), rebased over concurrent commits as lt_commit_create_index
 * decides; a conflict is ERROR 40001. Abort (and ROLLBACK TO a savepoint before the call) removes
 * the files. An index and INSERT/UPDATE/DELETE of the same table in one transaction would be two
 * Lance versions: refused (0A000), in either order. PREPARE TRANSACTION with a pending index is
 * refused. The pending indexes wait in xact.c's state of the dataset, which does the bookkeeping
 * of savepoints, the refusals and the order of the commits.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_class.h"
#include "commands/progress.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "dataset.h"
#include "index_build.h"
#include "option.h"
#include "progress.h"
#include "spill.h"
#include "store.h"
#include "xact.h"
#include "index/lt_index_write.h"
#include "txn/lt_txn_index.h"
#include "vector/lt_ivf_build.h"

PG_FUNCTION_INFO_V1(lt_create_index);

void
lt_index_build_discard(LtXactTable *xt, LtPendingIndex *p)
{
	lt_store   *store;
	lt_dataset *ds;
	lt_version_spec spec = {0};
	lt_error	err;
	MemoryContext old = lt_alloc_target(xt->meta_cxt);

	/* best effort: whatever is left is an orphan for lt_cleanup */
	spec.version = p->version;
	if (lt_open_store(xt->s3, xt->dir, &store, &err) == LT_OK)
	{
		if (lt_dataset_open(store, "", &spec, &ds, &err) == LT_OK)
		{
			lt_built_index_remove(ds, p->built);
			lt_dataset_close(ds);
		}
		lt_store_close(store);
	}
	lt_alloc_target(old);
}

typedef struct IndexCommit
{
	int			n;
	const lt_built_index **built;
	lt_commit_result res;
} IndexCommit;

static lt_code
index_commit(lt_dataset *ds, void *arg, lt_error *err)
{
	IndexCommit *ic = arg;

	return lt_commit_create_index(ds, ic->n, ic->built, NULL, &ic->res, err);
}

void
lt_index_build_commit(LtXactTable *xt)
{
	LtPendingIndex *first = linitial(xt->pending_indexes);
	const lt_built_index **built = palloc(sizeof(lt_built_index *) * list_length(xt->pending_indexes));
	int			n = 0;
	ListCell   *lc;
	IndexCommit ic;
	lt_commit_result res;
	lt_error	err;
	lt_code		rc;
	MemoryContext old;

	foreach(lc, xt->pending_indexes)
		built[n++] = ((LtPendingIndex *) lfirst(lc))->built;
	ic.n = n;
	ic.built = built;
	old = lt_alloc_target(xt->meta_cxt);
	rc = lt_xact_commit_on_version(xt, first->version, index_commit, &ic, &err);
	res = ic.res;
	lt_alloc_target(old);
	if (rc == LT_ECONFLICT)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("lt_fdw: could not commit the index \"%s\" of foreign table \"%s\": a concurrent transaction conflicts",
						first->built->name, xt->relname),
				 errdetail("%s (dataset %s, built on version " UINT64_FORMAT ").", err.msg, xt->uri,
						   first->version),
				 errhint("Retry the transaction.")));
	if (rc == LT_EINVALID)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("lt_fdw: %s", err.msg),
				 errdetail("Foreign table \"%s\", dataset %s.", xt->relname, xt->uri)));
	if (rc != LT_OK)
		lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", xt->uri, xt->relname));
	elog(DEBUG1, "lt_fdw: committed %d index(es) of %s as version " UINT64_FORMAT, n, xt->uri, res.version);
	pfree(built);
	/* committed: these files are referenced now */
	xt->pending_indexes = NIL;
}

/* ---- lt_create_index() -------------------------------------------------------------------- */

static const char *
ivf_kind_name(lt_ivf_build_kind kind)
{
	return kind == LT_IVF_BUILD_PQ ? "ivf_pq" : kind == LT_IVF_BUILD_SQ ? "ivf_sq" :
		kind == LT_IVF_BUILD_HNSW_SQ ? "ivf_hnsw_sq" : kind == LT_IVF_BUILD_HNSW_PQ ? "ivf_hnsw_pq" :
		kind == LT_IVF_BUILD_RQ ? "ivf_rq" : "ivf_flat";
}

static uint32
ivf_option_uint(const lt_ivf_build_options *vo, const char *key, const char *value, uint32 min, uint32 max)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = strtoll(value, &end, 10);
	if (errno || end == value || *end || v < min || v > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: option \"%s\" of an %s index must be an integer from %u to %u, not \"%s\"",
						key, ivf_kind_name(vo->kind), min, max, value)));
	return (uint32) v;
}

/*
 * An ivf_flat build's progress in pg_stat_progress_create_index: phase "building index", tuples_done /
 * tuples_total of the current step (reading, assigning, writing vectors; k-means iterations while
 * training), and the step (1 read, 2 train, 3 assign, 4 write) in partitions_done of 4; ivf_hnsw_sq has
 * a fifth, the graphs (vectors placed in them).  arg: the build's options.
 */
static void
ivf_progress(void *arg, lt_ivf_build_phase phase, uint64_t done, uint64_t total)
{
	const lt_ivf_build_options *vo = arg;
	const int	index[] = {PROGRESS_CREATEIDX_PARTITIONS_TOTAL, PROGRESS_CREATEIDX_PARTITIONS_DONE,
		PROGRESS_CREATEIDX_TUPLES_TOTAL, PROGRESS_CREATEIDX_TUPLES_DONE};
	const int64 value[] = {vo->kind == LT_IVF_BUILD_HNSW_SQ || vo->kind == LT_IVF_BUILD_HNSW_PQ ? 5 : 4, (int64) phase, (int64) total, (int64) done};

	pgstat_progress_update_multi_param(4, index, value);
	lt_progress_test_pause();
}

/*
 * A scalar build's progress, the same way: tuples_done / tuples_total of the rows read, and the step
 * (1 read, 2 sort, 3 write; a zonemap reads and writes in step 1) in partitions_done of 3.
 */
static void
scalar_progress(void *arg, lt_index_build_step step, uint64_t done, uint64_t total)
{
	const int	index[] = {PROGRESS_CREATEIDX_PARTITIONS_TOTAL, PROGRESS_CREATEIDX_PARTITIONS_DONE,
		PROGRESS_CREATEIDX_TUPLES_TOTAL, PROGRESS_CREATEIDX_TUPLES_DONE};
	int64		value[] = {3, (int64) step, (int64) total, (int64) done};

	if (step != LT_INDEX_BUILD_READ)
	{
		/* the later steps keep the rows read */
		pgstat_progress_update_multi_param(2, index, value);
		return;
	}
	pgstat_progress_update_multi_param(4, index, value);
	if (done > 0)
		lt_progress_test_pause();
}

/* lt_optimize_indexes builds through lt_create_index: its builds merge the old index and say REINDEX */
static bool building_for_optimize = false;

void
lt_index_build_for_optimize(bool on)
{
	building_for_optimize = on;
}

/*
 * The options of an ivf_flat, ivf_pq or ivf_sq index: "key=value" pairs separated by commas or spaces
 * (num_partitions, metric, sample_rate, max_iters; ivf_pq: num_sub_vectors, num_bits).
 */
static void
parse_ivf_options(char *text, lt_ivf_build_options *vo)
{
	char	   *save = NULL;

	for (char *tok = strtok_r(text, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save))
	{
		char	   *eq = strchr(tok, '=');
		char	   *key = tok;

		if (!eq || eq == tok || eq[1] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lt_fdw: index option \"%s\" is not key=value", tok),
					 errhint("The options of ivf_flat, ivf_sq and ivf_rq are num_partitions, metric, sample_rate and max_iters; ivf_pq also takes num_sub_vectors and num_bits, ivf_hnsw_sq m and ef_construction, ivf_hnsw_pq num_sub_vectors, num_bits, m and ef_construction.")));
		*eq = '\0';
		for (char *c = key; *c; c++)
			*c = pg_tolower((unsigned char) *c);
		if (strcmp(key, "num_partitions") == 0)
			vo->num_partitions = ivf_option_uint(vo, key, eq + 1, 1, 1000000);
		else if (strcmp(key, "sample_rate") == 0)
			vo->sample_rate = ivf_option_uint(vo, key, eq + 1, 1, 1000000);
		else if (strcmp(key, "max_iters") == 0)
			vo->max_iters = ivf_option_uint(vo, key, eq + 1, 1, 1000000);
		else if ((vo->kind == LT_IVF_BUILD_PQ || vo->kind == LT_IVF_BUILD_HNSW_PQ) && strcmp(key, "num_sub_vectors") == 0)
			vo->num_sub_vectors = ivf_option_uint(vo, key, eq + 1, 1, 1000000);
		else if ((vo->kind == LT_IVF_BUILD_PQ || vo->kind == LT_IVF_BUILD_HNSW_PQ) && strcmp(key, "num_bits") == 0)
			vo->num_bits = ivf_option_uint(vo, key, eq + 1, 1, 1000000);
		/* m: a node's edges are held per level (Lance's m is tens); ef_construction: the build's beam */
		else if ((vo->kind == LT_IVF_BUILD_HNSW_SQ || vo->kind == LT_IVF_BUILD_HNSW_PQ) && strcmp(key, "m") == 0)
			vo->hnsw_m = ivf_option_uint(vo, key, eq + 1, 2, 256);
		else if ((vo->kind == LT_IVF_BUILD_HNSW_SQ || vo->kind == LT_IVF_BUILD_HNSW_PQ) && strcmp(key, "ef_construction") == 0)
			vo->hnsw_ef_construction = ivf_option_uint(vo, key, eq + 1, 1, 100000);
		else if (strcmp(key, "metric") == 0 || strcmp(key, "distance_type") == 0)
		{
			char	   *m = eq + 1;

			for (char *c = m; *c; c++)
				*c = pg_tolower((unsigned char) *c);
			if (strcmp(m, "l2") != 0 && strcmp(m, "cosine") != 0 && strcmp(m, "dot") != 0 && strcmp(m, "hamming") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("lt_fdw: unknown metric \"%s\" for an %s index", m,
								ivf_kind_name(vo->kind)),
						 errhint("The metrics are l2, cosine and dot (float vectors), and hamming (uint8 vectors, ivf_flat).")));
			vo->metric = m;
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lt_fdw: unknown option \"%s\" of an %s index", key,
							ivf_kind_name(vo->kind)),
					 errhint("The options of ivf_flat, ivf_sq and ivf_rq are num_partitions, metric, sample_rate and max_iters; ivf_pq also takes num_sub_vectors and num_bits, ivf_hnsw_sq m and ef_construction, ivf_hnsw_pq num_sub_vectors, num_bits, m and ef_construction.")));
	}
}

Datum
lt_create_index(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname,
			   *kindname,
			   *name = NULL;
	char	   *relname;
	LtTableOptions opts;
	AttrNumber	attnum;
	char	   *fieldname;
	lt_index_kind kind;
	LtDatasetEntry *e;
	const lt_field *field;
	const char *why;
	lt_index_build_options bo = {0};
	lt_ivf_build_options vo = {0};
	bool		ivf;
	char	   *options = NULL;
	LtXactTable *xt;
	LtPendingIndex *p;
	lt_index_list *l = NULL;	/* the dataset's indexes, kept through the build (an optimize merges one) */
	const lt_index *same = NULL;
	MemoryContext old,
				oldtarget;
	lt_error	err;
	lt_code		rc;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {0};

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lt_fdw: lt_create_index needs a table, a column and a kind")));
	relid = PG_GETARG_OID(0);
	colname = text_to_cstring(PG_GETARG_TEXT_PP(1));
	kindname = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (!PG_ARGISNULL(3))
		name = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (PG_NARGS() > 4 && !PG_ARGISNULL(4))
		options = text_to_cstring(PG_GETARG_TEXT_PP(4));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "lt_create_index must return a record");

	lt_check_lt_table(relid, "lt_create_index");
	relname = get_rel_name(relid);
	lt_check_table_owner(relid);	/* as CREATE INDEX */
	lt_get_table_options(relid, &opts);
	lt_check_not_branch(relname, &opts, "create an index on");
	if (opts.version || opts.tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_fdw: foreign table \"%s\" is read-only", relname),
				 opts.version ?
				 errdetail("It is pinned to version " UINT64_FORMAT " of dataset %s by its option \"version\".",
						   opts.version, opts.uri) :
				 errdetail("It is pinned to tag \"%s\" of dataset %s by its option \"tag\".", opts.tag, opts.uri),
				 errhint("Create the index through a foreign table of the dataset without \"version\" or \"tag\".")));
	lt_check_read_privilege(GetUserId(), relname, opts.uri);
	lt_check_write_privilege(GetUserId(), relname, opts.uri);

	/* kinds are names, as in CREATE INDEX ... USING: case does not matter */
	for (char *c = kindname; *c; c++)
		*c = pg_tolower((unsigned char) *c);
	kind = lt_index_kind_from_name(kindname);
	ivf = strcmp(kindname, "ivf_flat") == 0 || strcmp(kindname, "ivf_pq") == 0 || strcmp(kindname, "ivf_sq") == 0 ||
		strcmp(kindname, "ivf_hnsw_sq") == 0 || strcmp(kindname, "ivf_hnsw_pq") == 0 || strcmp(kindname, "ivf_rq") == 0;
	vo.kind = strcmp(kindname, "ivf_rq") == 0 ? LT_IVF_BUILD_RQ : strcmp(kindname, "ivf_pq") == 0 ? LT_IVF_BUILD_PQ :
		strcmp(kindname, "ivf_sq") == 0 ? LT_IVF_BUILD_SQ :
		strcmp(kindname, "ivf_hnsw_sq") == 0 ? LT_IVF_BUILD_HNSW_SQ :
		strcmp(kindname, "ivf_hnsw_pq") == 0 ? LT_IVF_BUILD_HNSW_PQ : LT_IVF_BUILD_FLAT;
	if (kind == LT_INDEX_UNKNOWN && !ivf)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: unknown index kind \"%s\"", kindname),
				 errhint("The kinds are btree, bitmap, label_list, zonemap, ivf_flat, ivf_pq, ivf_sq, ivf_hnsw_sq, ivf_hnsw_pq and ivf_rq.")));
	if (options && !ivf)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_fdw: a %s index takes no options", kindname),
				 errhint("Options are for vector indexes (ivf_flat, ivf_pq, ivf_sq, ivf_hnsw_sq, ivf_hnsw_pq, ivf_rq).")));
	if (options)
		parse_ivf_options(options, &vo);
	if (name != NULL && (name[0] == '\0' || strlen(name) > 1024))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("lt_fdw: an index name must be 1 to 1024 bytes long")));
	attnum = get_attnum(relid, colname);
	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("lt_fdw: foreign table \"%s\" has no column \"%s\"", relname, colname)));
	fieldname = lt_column_field_name(relid, attnum, colname);
	xt = lt_xact_meta_table(relname, &opts, true);

	/*
	 * One CreateIndex holds the transaction's indexes of a dataset, and Lance builds them all on its
	 * read version: a later one is built on the version of the first, even where a READ COMMITTED
	 * statement would read a newer one (what came since is left unindexed, as for any append).
	 */
	if (xt->pending_indexes != NIL)
		e = lt_dataset_acquire_version(relid, &opts, ((LtPendingIndex *) linitial(xt->pending_indexes))->version);
	else
		e = lt_dataset_acquire(relid, &opts, true);
	PG_TRY();
	{
		field = lt_schema_find_name(e->ds->schema, fieldname);
		if (!field)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_fdw: version " UINT64_FORMAT " of dataset %s has no column \"%s\"", e->version,
							opts.uri, fieldname),
					 errdetail("Column \"%s\" of foreign table \"%s\".", colname, relname)));
		if (field->blob != LT_BLOB_NONE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: cannot create an index on column \"%s\" of foreign table \"%s\": it is a %s column",
							colname, relname, lt_blob_form_name(field->blob)),
					 errdetail("Dataset %s stores \"%s\" out of line; nothing was written.", opts.uri, fieldname)));
		if ((why = ivf ? lt_ivf_build_unfit(field) : lt_index_kind_unfit(e->ds, kind, field)))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("lt_fdw: cannot create %s %s index on column \"%s\" of foreign table \"%s\": %s",
							ivf ? "an" : "a", kindname, colname, relname, why),
					 errdetail("Dataset %s, version " UINT64_FORMAT ", field \"%s\" of type %s.", opts.uri,
							   e->version, fieldname, field->logical_type)));
		if (!name)
			name = psprintf("%s_idx", field->name);
		{
			bool		other_column;

			oldtarget = lt_alloc_target(CurrentMemoryContext);
			rc = lt_dataset_indexes(e->ds, &l, &err);
			lt_alloc_target(oldtarget);
			if (rc != LT_OK)
				lt_report(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, relname));
			same = lt_index_list_find(l, name);
			other_column = same && !(same->n_fields == 1 && same->field_ids[0] == field->id);
			if (other_column)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_OBJECT),
						 errmsg("lt_fdw: foreign table \"%s\" already has an index \"%s\" on another column", relname,
								name),
						 errdetail("Dataset %s, version " UINT64_FORMAT ".", opts.uri, e->version),
						 errhint("Choose another name; building an index under the name of one on the same column replaces it.")));
		}
		{
			ListCell   *lc;

			foreach(lc, xt->pending_indexes)
			{
				LtPendingIndex *q = lfirst(lc);

				if (strcmp(q->built->name, name) == 0)
					ereport(ERROR,
							(errcode(ERRCODE_DUPLICATE_OBJECT),
							 errmsg("lt_fdw: this transaction already creates an index \"%s\" on foreign table \"%s\"",
									name, relname)));
			}
		}
		old = MemoryContextSwitchTo(xt->meta_cxt);
		p = palloc0(sizeof(LtPendingIndex));
		p->built = palloc0(sizeof(lt_built_index));
		p->version = e->version;
		p->subid = GetCurrentSubTransactionId();
		MemoryContextSwitchTo(old);

		bo.kind = kind;
		bo.name = name;
		if (building_for_optimize && !ivf && same && same->kind == kind && !same->unusable && same->n_unindexed > 0)
		{
			/*
			 * lt_optimize_indexes: Lance's optimize of a scalar index, one new segment holding the old
			 * segments' entries (read from their files) and the unindexed fragments' rows
			 */
			struct Lt__Pb__DataFragment **frags = palloc(sizeof(struct Lt__Pb__DataFragment *) * same->n_unindexed);

			for (size_t i = 0; i < same->n_unindexed; i++)
				frags[i] = (struct Lt__Pb__DataFragment *) lt_dataset_fragment(e->ds, same->unindexed[i]);
			bo.merge = same;
			bo.fragments = frags;
			bo.n_fragments = same->n_unindexed;
		}
		bo.max_memory = (uint64) maintenance_work_mem * 1024;
		bo.spill = lt_fdw_spill_ops();	/* past it, sorted runs go to temporary files */
		vo.name = name;
		vo.max_memory = bo.max_memory;
		vo.progress = ivf_progress;
		vo.progress_arg = &vo;
		bo.progress = scalar_progress;
		pgstat_progress_start_command(PROGRESS_COMMAND_CREATE_INDEX, relid);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_COMMAND, building_for_optimize ?
									 PROGRESS_CREATEIDX_COMMAND_REINDEX : PROGRESS_CREATEIDX_COMMAND_CREATE);
		pgstat_progress_update_param(PROGRESS_CREATEIDX_PHASE, PROGRESS_CREATEIDX_PHASE_BUILD);
		oldtarget = lt_alloc_target(xt->meta_cxt);
		rc = ivf ? lt_ivf_build(e->ds, field, &vo, p->built, &err) : lt_index_build(e->ds, field, &bo, p->built, &err);
		lt_alloc_target(oldtarget);
		oldtarget = lt_alloc_target(CurrentMemoryContext);
		lt_index_list_free(l);
		lt_alloc_target(oldtarget);
		l = NULL;
		same = NULL;
		pgstat_progress_end_command();
		CHECK_FOR_INTERRUPTS();
		if (rc == LT_ENOMEM)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("lt_fdw: %s", err.msg),
					 errdetail("Foreign table \"%s\", dataset %s, version " UINT64_FORMAT ".", relname, opts.uri,
							   e->version),
					 ivf ? errhint("An IVF build holds every vector, bounded by maintenance_work_mem (%d kB); raise it.",
								   maintenance_work_mem) : 0));
		if (rc == LT_EINVALID && ivf)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lt_fdw: %s", err.msg),
					 errdetail("Foreign table \"%s\", dataset %s, version " UINT64_FORMAT ".", relname, opts.uri,
							   e->version)));
		/* a kind not built for the column's element type (uint8 but IVF_FLAT) */
		if (rc == LT_EUNSUPPORTED && ivf)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_fdw: %s", err.msg),
					 errdetail("Foreign table \"%s\", column \"%s\", dataset %s, version " UINT64_FORMAT ".", relname,
							   colname, opts.uri, e->version)));
		if (rc != LT_OK)
			lt_report_write(&err, psprintf("dataset %s (foreign table \"%s\")", opts.uri, relname));
		old = MemoryContextSwitchTo(xt->meta_cxt);
		xt->pending_indexes = lappend(xt->pending_indexes, p);
		MemoryContextSwitchTo(old);
	}
	PG_FINALLY();
	{
		lt_dataset_unpin(e);
	}
	PG_END_TRY();

	values[0] = CStringGetTextDatum(p->built->name);
	values[1] = CStringGetTextDatum(ivf ? kindname : lt_index_kind_name(kind));
	values[2] = Int64GetDatum((int64) p->version);
	values[3] = Int64GetDatum((int64) p->built->rows);
	values[4] = Int64GetDatum((int64) p->built->bytes);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
