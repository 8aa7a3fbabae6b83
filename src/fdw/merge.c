/*
 * merge.c — lt_merge_insert(): Lance's merge-insert (upsert) from SQL, and TRUNCATE.
 *
 * Merge-insert. The source query's rows are matched with the target's rows on the key columns
 * (given, or the dataset's primary key) and each pair or lone row gets Lance's action:
 *
 *   matched           when_matched 'update_all' (the target row is replaced by the source row),
 *                     'do_nothing', or 'fail' (ERROR 23505)
 *   source only       when_not_matched 'insert_all' or 'do_nothing'
 *   target only       deleted when delete_not_matched_by_source
 *
 * A source with some of the table's columns updates only those (a matched row keeps its other
 * columns and, for tracked fields, their assignment; a new row has them NULL). On _rowid the
 * source names rows a scan read (the backfill's write-back): matched rows only, and a NOTICE
 * counts the source rows whose row is gone.
 *
 * with Lance 8's semantics: a NULL key never matches (such a source row is a new row, such a
 * target row is never matched), two source rows matching one target row are an error (21000)
 * unless matched rows are left alone, and the commit is one Lance Update (the replaced and deleted
 * rows' deletion vectors, the new rows in new fragments, moved rows keeping their stable row ids).
 *
 * The match, two ways (rows of the source that match nothing are the same either way):
 *
 *   one integer key   lt_fdw's own hash join (run_fast): the source rows, cast to the target's
 *                     types, go to a tuplestore and their keys into a hash table; the target's key
 *                     column is read by the format library a batch at a time and each value probed
 *                     (no executor row per target row). With few source keys and a btree / bitmap
 *                     index on the key, the index names the fragments and rows to read. When the
 *                     keys' table would outgrow work_mem × hash_mem_multiplier, the join below
 *                     reads the source again.
 *   anything else     a PostgreSQL join (run_join), one SPI cursor over
 *
 *   SELECT <source row as the target's columns>, <marker>, t.ctid
 *     FROM (SELECT CAST(q.c AS <type of target column c>) AS c, ..., true AS <marker>
 *             FROM (<query>) q) s
 *     LEFT | FULL | INNER JOIN ONLY <target> t ON s.k1 = t.k1 AND ...
 *
 *                     so the planner picks a hash join (spilling to batches on disk beyond
 *                     work_mem), a merge join, or a parameterized index scan of the target (the
 *                     FDW's paths over its btree / bitmap indexes); the scan of the target reads only
 *                     the key columns and fills ctid with each row's identity in the version the
 *                     transaction reads (as for UPDATE: modify.c decodes it).
 *
 * The source query runs exactly once (twice when the fast path gives up). Rows are written by
 * modify.c's writer (the INSERT path: convert_write.c, data files, a keyed table's key check) and
 * the deletes go to the transaction (xact.c): the merge is part of the Postgres transaction, seen
 * by its later statements, undone by ROLLBACK / ROLLBACK TO, committed at COMMIT with the
 * transaction's other changes to the dataset as one version.
 *
 * TRUNCATE is one Lance Overwrite with the transaction that keeps the schema and the index
 * definitions (ltExecForeignTruncate).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parser.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "dataset.h"
#include "index.h"
#include "merge.h"
#include "modify.h"
#include "option.h"
#include "overwrite.h"
#include "xact.h"
#include "util/lt_alloc.h"
#include "index/lt_index_plan.h"
#include "txn/lt_keys.h"
#include "table/lt_scan.h"
#include "proto/lt_table.pb-c.h"

#define MERGE_FETCH_ROWS	1000

/* lt_fdw.merge_insert_fast_path: off matches every key with a PostgreSQL join */
static bool lt_merge_fast = true;

typedef enum WhenMatched
{
	WM_UPDATE_ALL,
	WM_DO_NOTHING,
	WM_FAIL
} WhenMatched;

/* One merge-insert in progress. */
typedef struct Merge
{
	Relation	rel;
	const char *relname;
	LtTableOptions opts;
	WhenMatched when_matched;
	bool		insert_not_matched;
	bool		delete_not_matched;

	/* the target's columns the source fills, in attnum order (the cursor's first n_cols columns) */
	int			n_cols;
	AttrNumber *cols;
	int			n_src;			/* n_cols and the key columns read but not written (_rowid) */
	int			n_keys;
	AttrNumber *keys;			/* key columns ... */
	int		   *key_col;		/* ... and their positions in the cursor's row */
	bool		on_key;			/* they are the dataset's primary key: a matched row keeps its key */
	bool		on_row_id;		/* matched on _rowid: the target's row ids, nothing to insert */
	/* a partial source: the target's columns it does not give, read from the matched row */
	int			n_kept;
	AttrNumber *kept;

	LtXactTable *xt;
	LtDatasetEntry *entry;		/* the version the target's scan reads (decodes ctid) */
	LtRowWriter *inserts;
	LtRowWriter *updates;		/* == inserts unless the dataset has stable row ids */
	uint8	  **matched;		/* per fragment of entry: a bit per physical row matched (21000) */
	TupleTableSlot *slot;

	int64		rows_inserted;
	int64		rows_updated;
	int64		rows_deleted;
	int64		rows_unmatched;	/* on_row_id: source rows whose row no longer exists */
} Merge;

static void
merge_error_callback(void *arg)
{
	Merge	   *m = arg;

	errcontext("lt_merge_insert into foreign table \"%s\"", m->relname);
}

/* ---- arguments -------------------------------------------------------------------------------- */

static WhenMatched
parse_when_matched(const char *s)
{
	if (strcmp(s, "update_all") == 0)
		return WM_UPDATE_ALL;
	if (strcmp(s, "do_nothing") == 0)
		return WM_DO_NOTHING;
	if (strcmp(s, "fail") == 0)
		return WM_FAIL;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("lt_merge_insert: invalid when_matched \"%s\"", s),
			 errhint("Valid values are update_all, do_nothing and fail.")));
	return WM_DO_NOTHING;
}

static bool
parse_when_not_matched(const char *s)
{
	if (strcmp(s, "insert_all") == 0)
		return true;
	if (strcmp(s, "do_nothing") == 0)
		return false;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("lt_merge_insert: invalid when_not_matched \"%s\"", s),
			 errhint("Valid values are insert_all and do_nothing.")));
	return false;
}

/* Columns filled by scans (_rowid / _rowaddr without a dataset field of that name, is_assigned columns): not written. */
static bool
scan_filled(Merge *m, AttrNumber attnum)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(m->rel), attnum - 1);
	char	   *field = lt_column_field_name(RelationGetRelid(m->rel), attnum, NameStr(att->attname));

	if (lt_column_assigned_field(RelationGetRelid(m->rel), attnum) != NULL)
		return true;			/* is_assigned(field): the writes decide it (assign.c) */
	return lt_is_row_identity_name(field) &&
		lt_schema_find_name(m->xt->base->ds->schema, field) == NULL;
}

static AttrNumber
target_attnum(Merge *m, const char *name)
{
	TupleDesc	td = RelationGetDescr(m->rel);

	for (int i = 0; i < td->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(td, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return i + 1;
	}
	return InvalidAttrNumber;
}

/* The table's columns of the dataset's primary key, in key order (*n = 0: it has none). */
static AttrNumber *
primary_key_columns(Merge *m, int *n)
{
	TupleDesc	td = RelationGetDescr(m->rel);
	const lt_field **pk = NULL;
	AttrNumber *cols;
	lt_error	err;
	MemoryContext old = lt_alloc_target(CurrentMemoryContext);
	lt_code		rc = lt_schema_primary_key(m->xt->base->ds->schema, &pk, n, &err);

	lt_alloc_target(old);
	if (rc != LT_OK)
		lt_report(&err, psprintf("dataset %s (foreign table \"%s\")", m->opts.uri, m->relname));
	cols = palloc0(sizeof(AttrNumber) * Max(*n, 1));
	for (int k = 0; k < *n; k++)
	{
		for (int a = 1; a <= td->natts && cols[k] == InvalidAttrNumber; a++)
		{
			Form_pg_attribute att = TupleDescAttr(td, a - 1);

			if (!att->attisdropped &&
				strcmp(lt_column_field_name(RelationGetRelid(m->rel), a, NameStr(att->attname)), pk[k]->name) == 0)
				cols[k] = a;
		}
		if (cols[k] == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_merge_insert: foreign table \"%s\" has no column for field \"%s\" of the primary key of dataset %s",
							m->relname, pk[k]->name, m->opts.uri),
					 errhint("Add the column, or name the key columns in on_columns.")));
	}
	return cols;
}

/* The key columns named by on_columns. */
static void
bind_on_columns(Merge *m, ArrayType *on_columns)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(on_columns, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_merge_insert: on_columns is empty"),
				 errhint("Name at least one column to match rows on, or pass NULL for the primary key.")));
	m->n_keys = n;
	m->keys = palloc(sizeof(AttrNumber) * n);
	for (int i = 0; i < n; i++)
	{
		char	   *name;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lt_merge_insert: on_columns contains a NULL")));
		name = TextDatumGetCString(elems[i]);
		m->keys[i] = target_attnum(m, name);
		if (m->keys[i] == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_merge_insert: column \"%s\" of on_columns does not exist in foreign table \"%s\"",
							name, m->relname)));
		if (scan_filled(m, m->keys[i]) &&
			strcmp(lt_column_field_name(RelationGetRelid(m->rel), m->keys[i], name), "_rowid") == 0 &&
			lt_column_assigned_field(RelationGetRelid(m->rel), m->keys[i]) == NULL)
			m->on_row_id = true;	/* the backfill's write-back: the rows a scan named */
		else if (scan_filled(m, m->keys[i]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("lt_merge_insert: cannot match rows on column \"%s\" of foreign table \"%s\"",
							name, m->relname),
					 errdetail("It holds the row's %s, which scans fill in and new rows do not have.",
							   lt_column_field_name(RelationGetRelid(m->rel), m->keys[i], name))));
		{
			const lt_field *f = lt_schema_find_name(m->xt->base->ds->schema,
													lt_column_field_name(RelationGetRelid(m->rel), m->keys[i], name));

			/* the stored column holds descriptors of bytes kept elsewhere, not values to match */
			if (f && f->blob != LT_BLOB_NONE)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("lt_merge_insert: cannot match rows on column \"%s\" of foreign table \"%s\"",
								name, m->relname),
						 errdetail("It is a %s column.", lt_blob_form_name(f->blob))));
		}
		for (int j = 0; j < i; j++)
			if (m->keys[j] == m->keys[i])
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("lt_merge_insert: column \"%s\" appears twice in on_columns", name)));
	}
}

/* The key columns: on_columns, or the dataset's primary key. */
static void
bind_keys(Merge *m, ArrayType *on_columns)
{
	int			n_pk;
	AttrNumber *pk = primary_key_columns(m, &n_pk);

	if (on_columns != NULL)
		bind_on_columns(m, on_columns);
	else if (n_pk > 0)
	{
		m->n_keys = n_pk;
		m->keys = pk;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("lt_merge_insert: foreign table \"%s\" has no primary key to match rows on",
						m->relname),
				 errdetail("Dataset %s marks no field as its primary key.", m->opts.uri),
				 errhint("Name the key columns in on_columns.")));
	if (m->on_row_id && m->insert_not_matched)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lt_merge_insert: a merge-insert matched on _rowid cannot insert rows"),
				 errdetail("A source row that matches no row of foreign table \"%s\" has no row id to keep.", m->relname),
				 errhint("Pass when_not_matched => 'do_nothing'.")));
	m->key_col = palloc(sizeof(int) * m->n_keys);
	/* matched on the primary key (in any order): a replaced row keeps its key, nothing to check */
	m->on_key = n_pk > 0 && n_pk == m->n_keys;
	for (int k = 0; k < n_pk && m->on_key; k++)
	{
		bool		found = false;

		for (int i = 0; i < m->n_keys; i++)
			found |= m->keys[i] == pk[k];
		m->on_key = found;
	}
}

/*
 * The source's columns, by name: columns of the target and nothing else, with every key column.
 * A partial source (some of the target's columns) updates only its columns: a matched row keeps
 * the others, as Lance's merge-insert with a subset of the schema does; a new row has them NULL.
 */
static void
bind_source(Merge *m, TupleDesc src)
{
	TupleDesc	td = RelationGetDescr(m->rel);

	m->cols = palloc(sizeof(AttrNumber) * Max(td->natts + m->n_keys, 1));
	m->kept = palloc(sizeof(AttrNumber) * Max(td->natts, 1));
	m->n_cols = 0;
	m->n_kept = 0;
	for (int i = 0; i < src->natts; i++)
	{
		Form_pg_attribute sa = TupleDescAttr(src, i);
		AttrNumber	a = target_attnum(m, NameStr(sa->attname));

		if (sa->attisdropped)
			continue;
		for (int j = 0; j < i; j++)
			if (strcmp(NameStr(TupleDescAttr(src, j)->attname), NameStr(sa->attname)) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("lt_merge_insert: the source query has two columns named \"%s\"",
								NameStr(sa->attname))));
		if (a == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_merge_insert: column \"%s\" of the source query is not a column of foreign table \"%s\"",
							NameStr(sa->attname), m->relname),
					 errhint("Source columns are matched to the table's columns by name.")));
	}
	for (int a = 1; a <= td->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(td, a - 1);
		bool		found = false;

		if (att->attisdropped || scan_filled(m, a))
			continue;
		for (int i = 0; i < src->natts && !found; i++)
			found = strcmp(NameStr(TupleDescAttr(src, i)->attname), NameStr(att->attname)) == 0;
		if (found)
			m->cols[m->n_cols++] = a;
		else
			m->kept[m->n_kept++] = a;
	}
	m->n_src = m->n_cols;
	for (int k = 0; k < m->n_keys; k++)
	{
		Form_pg_attribute att = TupleDescAttr(td, m->keys[k] - 1);
		bool		found = false;

		m->key_col[k] = -1;
		for (int c = 0; c < m->n_cols; c++)
			if (m->cols[c] == m->keys[k])
				m->key_col[k] = c;
		for (int i = 0; i < src->natts && !found; i++)
			found = strcmp(NameStr(TupleDescAttr(src, i)->attname), NameStr(att->attname)) == 0;
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("lt_merge_insert: the source query has no column \"%s\" to match rows on",
							NameStr(att->attname)),
					 errhint("The source gives the key columns, by name.")));
		if (m->key_col[k] < 0)
		{
			/* a key the scan fills (_rowid): read from the source, never written */
			m->key_col[k] = m->n_src;
			m->cols[m->n_src++] = m->keys[k];
		}
	}
	if (m->n_cols == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_merge_insert: the source query gives no column of foreign table \"%s\" to write",
						m->relname)));
}

/* ---- the join --------------------------------------------------------------------------------- */

/* A name for the source-row marker that no column of the target has. */
static char *
marker_name(Merge *m)
{
	char	   *name = pstrdup("lt_merge_source");

	for (int i = 2; target_attnum(m, name) != InvalidAttrNumber; i++)
		name = psprintf("lt_merge_source%d", i);
	return name;
}

/* The source's rows as the target's columns (m->cols order), cast to their types; marker: a last column "true AS marker". */
static char *
source_sql(Merge *m, const char *query, const char *marker)
{
	TupleDesc	td = RelationGetDescr(m->rel);
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	for (int c = 0; c < m->n_src; c++)
	{
		Form_pg_attribute att = TupleDescAttr(td, m->cols[c] - 1);
		const char *col = quote_identifier(NameStr(att->attname));

		appendStringInfo(&sql, "%sCAST(q.%s AS %s) AS %s", c ? ", " : "", col,
						 format_type_with_typemod(att->atttypid, att->atttypmod), col);
	}
	if (marker)
		appendStringInfo(&sql, ", true AS %s", marker);
	appendStringInfo(&sql, " FROM (%s\n) q", query);
	return sql.data;
}

static char *
join_sql(Merge *m, const char *query)
{
	TupleDesc	td = RelationGetDescr(m->rel);
	const char *marker = quote_identifier(marker_name(m));
	StringInfoData outer,
				on;
	const char *join;

	initStringInfo(&outer);
	initStringInfo(&on);
	for (int c = 0; c < m->n_src; c++)
		appendStringInfo(&outer, "s.%s, ", quote_identifier(NameStr(TupleDescAttr(td, m->cols[c] - 1)->attname)));
	for (int c = 0; c < m->n_kept; c++)
		appendStringInfo(&outer, "t.%s, ", quote_identifier(NameStr(TupleDescAttr(td, m->kept[c] - 1)->attname)));
	for (int k = 0; k < m->n_keys; k++)
	{
		const char *col = quote_identifier(NameStr(TupleDescAttr(td, m->keys[k] - 1)->attname));

		appendStringInfo(&on, "%ss.%s = t.%s", k ? " AND " : "", col, col);
	}
	if (m->delete_not_matched)
		join = "FULL";			/* target rows without a source row, too */
	else if (m->insert_not_matched || m->on_row_id)
		join = "LEFT";			/* on_row_id: to count the source rows whose row is gone */
	else
		join = "INNER";			/* only matched rows change */
	return psprintf("SELECT %ss.%s, t.ctid FROM (%s) s %s JOIN ONLY %s t ON %s",
					outer.data, marker, source_sql(m, query, marker), join,
					quote_qualified_identifier(get_namespace_name(RelationGetNamespace(m->rel)), m->relname),
					on.data);
}

static void report_matched_fail(Merge *m, const char *key) pg_attribute_noreturn();
static void report_matched_twice(Merge *m, const char *key) pg_attribute_noreturn();

/* when_matched 'fail' met a match; key: "(k1, k2)=(v1, v2)" as a unique violation names it */
static void
report_matched_fail(Merge *m, const char *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("lt_merge_insert: a source row matches a row of foreign table \"%s\"", m->relname),
			 errdetail("Key %s already exists, and when_matched is fail.", key)));
}

/* A second source row matched one target row (Lance: "Ambiguous merge inserts are prohibited"). */
static void
report_matched_twice(Merge *m, const char *key)
{
	ereport(ERROR,
			(errcode(ERRCODE_CARDINALITY_VIOLATION),
			 errmsg("lt_merge_insert: more than one source row matches the same row of foreign table \"%s\"",
					m->relname),
			 errdetail("Key %s is in the source more than once.", key),
			 errhint("Each row of the table may be matched by at most one source row: remove the duplicates from the source.")));
}

/* "(k1, k2)=(v1, v2)" of the key columns of a source row, as a unique violation names a key. */
static char *
key_text(Merge *m, const Datum *values, const bool *nulls)
{
	TupleDesc	td = RelationGetDescr(m->rel);
	StringInfoData names,
				vals;

	initStringInfo(&names);
	initStringInfo(&vals);
	for (int k = 0; k < m->n_keys; k++)
	{
		Form_pg_attribute att = TupleDescAttr(td, m->keys[k] - 1);
		int			c = m->key_col[k];

		appendStringInfo(&names, "%s%s", k ? ", " : "", NameStr(att->attname));
		if (nulls[c])
			appendStringInfo(&vals, "%snull", k ? ", " : "");
		else
		{
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(att->atttypid, &out, &varlena);
			appendStringInfo(&vals, "%s%s", k ? ", " : "", OidOutputFunctionCall(out, values[c]));
		}
	}
	return psprintf("(%s)=(%s)", names.data, vals.data);
}

/*
 * The source row (the cursor's first n_cols values) into the target's slot, with the columns a
 * partial source does not give from the matched row (the n_kept values after the n_src source
 * ones: NULL for a new row).
 */
static TupleTableSlot *
source_slot(Merge *m, const Datum *values, const bool *nulls)
{
	TupleTableSlot *slot = m->slot;

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int c = 0; c < m->n_cols; c++)
	{
		slot->tts_values[m->cols[c] - 1] = values[c];
		slot->tts_isnull[m->cols[c] - 1] = nulls[c];
	}
	for (int c = 0; c < m->n_kept; c++)
	{
		slot->tts_values[m->kept[c] - 1] = values[m->n_src + c];
		slot->tts_isnull[m->kept[c] - 1] = nulls[m->n_src + c];
	}
	return ExecStoreVirtualTuple(slot);
}

/* Mark the target row of tid matched; false when a source row matched it before. */
static bool
mark_matched(Merge *m, ItemPointer tid)
{
	const lt_dataset *ds = m->entry->ds;
	OffsetNumber idx = ItemPointerGetOffsetNumberNoCheck(tid);
	BlockNumber off = ItemPointerGetBlockNumberNoCheck(tid);
	uint64		rows;
	uint8	   *bits;

	Assert(idx >= 1 && idx <= ds->n_fragments);
	rows = ds->fragments[idx - 1]->physical_rows;
	if (off >= rows)
		elog(ERROR, "lt_fdw: row identity (%u,%u) is past the end of its fragment", off, idx);
	if (m->matched[idx - 1] == NULL)
		m->matched[idx - 1] = MemoryContextAllocZero(GetMemoryChunkContext(m), (rows + 7) / 8);
	bits = m->matched[idx - 1];
	if (bits[off / 8] & (1 << (off % 8)))
		return false;
	bits[off / 8] |= 1 << (off % 8);
	return true;
}

static void
merge_row(Merge *m, const Datum *values, const bool *nulls, int marker_col)
{
	bool		from_source = !nulls[marker_col];
	bool		matched = !nulls[marker_col + 1];
	ItemPointer tid = matched ? (ItemPointer) DatumGetPointer(values[marker_col + 1]) : NULL;
	uint64		addr = 0;

	if (matched)
		addr = lt_row_identity_address(m->entry, tid, m->opts.uri);
	if (from_source && matched)
	{
		switch (m->when_matched)
		{
			case WM_DO_NOTHING:
				return;
			case WM_FAIL:
				report_matched_fail(m, key_text(m, values, nulls));
				return;
			case WM_UPDATE_ALL:
				if (!mark_matched(m, tid))
					report_matched_twice(m, key_text(m, values, nulls));
				lt_row_writer_append(m->updates, source_slot(m, values, nulls), addr, !m->on_key);
				lt_xact_delete(m->xt, &addr, 1);
				m->rows_updated++;
				return;
		}
	}
	else if (from_source)
	{
		if (m->insert_not_matched)
		{
			lt_row_writer_append(m->inserts, source_slot(m, values, nulls), UINT64_MAX, true);
			m->rows_inserted++;
		}
		else if (m->on_row_id)
			m->rows_unmatched++;
	}
	else if (matched)
	{
		/* a target row no source row matched (FULL JOIN): delete_not_matched_by_source */
		lt_xact_delete(m->xt, &addr, 1);
		m->rows_deleted++;
	}
}

/* The match by a PostgreSQL join (any key), one cursor over join_sql. */
static void
run_join(Merge *m, const char *query)
{
	SPIPlanPtr	plan;
	char	   *sql;
	Portal		portal;
	Datum	   *values;
	bool	   *nulls;

	m->matched = palloc0(sizeof(uint8 *) * Max(m->entry->ds->n_fragments, 1));
	sql = join_sql(m, query);
	elog(DEBUG1, "lt_merge_insert: %s", sql);
	plan = SPI_prepare_cursor(sql, 0, NULL, CURSOR_OPT_NO_SCROLL);
	if (plan == NULL)
		elog(ERROR, "lt_merge_insert: SPI_prepare_cursor failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	values = palloc(sizeof(Datum) * (m->n_src + m->n_kept + 2));
	nulls = palloc(sizeof(bool) * (m->n_src + m->n_kept + 2));
	for (;;)
	{
		SPI_cursor_fetch(portal, true, MERGE_FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			CHECK_FOR_INTERRUPTS();
			heap_deform_tuple(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, values, nulls);
			merge_row(m, values, nulls, m->n_src + m->n_kept);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_freeplan(plan);
}

/* ---- lt_fdw's own hash join: one integer key ---------------------------------------------------- */

/*
 * For the common upsert — one key column of an integer type — the match is made here instead of
 * by a PostgreSQL join: the source rows go to a tuplestore (in memory up to work_mem, then a
 * temporary file) and their keys into a hash table; the target's key column is read by the format
 * library a batch at a time and probed value by value (no executor row per target row); where a
 * btree or bitmap index covers the key and the source has few keys, the index names the fragments
 * and rows to read (fragments it proves hold none of the keys are not opened). Then the source rows
 * are written in their order with what matched them. When the keys' table would need more than
 * work_mem × hash_mem_multiplier, the source is read again by the PostgreSQL join (run_join).
 */
#define SLOT_EMPTY		(-1)
#define PROBE_AHEAD		16		/* target rows between a slot's prefetch and its probe */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p)		__builtin_prefetch(p)
#else
#define PREFETCH(p)		((void) 0)
#endif

typedef struct KeySlot
{
	int64		key;
	int32		head;			/* the first source row with this key (SLOT_EMPTY: free slot) */
	int32		tail;			/* the last one (rows with one key are chained in source order) */
} KeySlot;

typedef struct Match
{
	int32		src;			/* source row */
	uint64		addr;			/* the target row it matched */
} Match;

typedef struct FastJoin
{
	const lt_field *field;		/* the key's field */
	Tuplestorestate *rows;		/* the source rows (the target's columns, as the cursor gives them) */
	TupleDesc	desc;
	int32		n_src;
	int32	   *next;			/* per source row: the next one with the same key, or -1 */
	int32		cap_src;
	KeySlot    *slots;
	uint64		mask;			/* slots - 1 (a power of two) */
	int64		n_keys;
	Match	   *matches;
	int64		n_matches,
				cap_matches;
	Size		budget;			/* bytes the keys' table may take */
} FastJoin;

static inline uint64
hash_int64(int64 v)
{
	uint64		x = (uint64) v;

	/* a 64-bit finalizer (splitmix64's): every input bit moves every output bit */
	x ^= x >> 30;
	x *= UINT64CONST(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64CONST(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* The slot of key, or the free slot where it would go; probing starts at slot i (its hash's). */
static inline KeySlot *
fj_find_from(FastJoin *fj, int64 key, uint64 i)
{
	for (;;)
	{
		KeySlot    *s = &fj->slots[i];

		if (s->head == SLOT_EMPTY || s->key == key)
			return s;
		i = (i + 1) & fj->mask;
	}
}

static inline KeySlot *
fj_find(FastJoin *fj, int64 key)
{
	return fj_find_from(fj, key, hash_int64(key) & fj->mask);
}

static void
fj_grow(FastJoin *fj)
{
	KeySlot    *old = fj->slots;
	uint64		n_old = fj->slots ? fj->mask + 1 : 0;
	uint64		n = Max(1024, n_old * 2);

	fj->slots = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(KeySlot) * n);
	for (uint64 i = 0; i < n; i++)
		fj->slots[i].head = SLOT_EMPTY;
	fj->mask = n - 1;
	for (uint64 i = 0; i < n_old; i++)
		if (old[i].head != SLOT_EMPTY)
			*fj_find(fj, old[i].key) = old[i];
	if (old)
		pfree(old);
}

/* Is the key one this path takes: one column of an integer type, a field of an integer type? */
static const lt_field *
fast_key_field(Merge *m)
{
	Form_pg_attribute att;
	const lt_field *f;

	if (m->n_keys != 1)
		return NULL;
	att = TupleDescAttr(RelationGetDescr(m->rel), m->keys[0] - 1);
	if (att->atttypid != INT2OID && att->atttypid != INT4OID && att->atttypid != INT8OID)
		return NULL;
	f = lt_schema_find_name(m->xt->base->ds->schema,
							lt_column_field_name(RelationGetRelid(m->rel), m->keys[0], NameStr(att->attname)));
	return f && lt_type_is_int64_exact(f->type) ? f : NULL;
}

static int64
datum_int(Datum d, Oid typid)
{
	return typid == INT8OID ? DatumGetInt64(d) : typid == INT4OID ? DatumGetInt32(d) : DatumGetInt16(d);
}

/*
 * Read the source into fj; false (nothing kept) when its keys outgrow the budget. `sql` selects the
 * source rows as the target's columns (m->cols order).
 */
static bool
fast_read_source(Merge *m, FastJoin *fj, const char *sql)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, 0, NULL, CURSOR_OPT_NO_SCROLL);
	Portal		portal;
	int			kc = m->key_col[0];
	Oid			ktype = TupleDescAttr(RelationGetDescr(m->rel), m->keys[0] - 1)->atttypid;
	bool		within = true;

	if (plan == NULL)
		elog(ERROR, "lt_merge_insert: SPI_prepare_cursor failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	fj->rows = tuplestore_begin_heap(false, false, work_mem);
	fj_grow(fj);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, MERGE_FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		if (fj->desc == NULL)
			fj->desc = CreateTupleDescCopy(SPI_tuptable->tupdesc);
		for (uint64 i = 0; i < SPI_processed && within; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			bool		isnull;
			Datum		d = heap_getattr(tup, kc + 1, SPI_tuptable->tupdesc, &isnull);
			int32		r = fj->n_src;

			CHECK_FOR_INTERRUPTS();
			if (fj->n_src == fj->cap_src)
			{
				fj->cap_src = Max(1024, fj->cap_src * 2);
				fj->next = fj->next ? repalloc_huge(fj->next, sizeof(int32) * fj->cap_src)
					: MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int32) * fj->cap_src);
			}
			fj->next[r] = -1;
			if (!isnull)
			{
				int64		key = datum_int(d, ktype);
				KeySlot    *s = fj_find(fj, key);

				if (s->head == SLOT_EMPTY)
				{
					s->key = key;
					s->head = s->tail = r;
					if (++fj->n_keys * 2 > (int64) (fj->mask + 1))
						fj_grow(fj);
				}
				else
				{
					fj->next[s->tail] = r;
					s->tail = r;
				}
			}
			tuplestore_puttuple(fj->rows, tup);
			fj->n_src++;
			if ((Size) (fj->mask + 1) * sizeof(KeySlot) + (Size) fj->cap_src * sizeof(int32) > fj->budget ||
				fj->n_src == PG_INT32_MAX)
				within = false;
		}
		SPI_freetuptable(SPI_tuptable);
		if (!within)
			break;
	}
	SPI_cursor_close(portal);
	SPI_freeplan(plan);
	return within;
}

static void
fj_add_match(FastJoin *fj, int32 src, uint64 addr)
{
	if (fj->n_matches == fj->cap_matches)
	{
		fj->cap_matches = Max(1024, fj->cap_matches * 2);
		fj->matches = fj->matches ? repalloc_huge(fj->matches, sizeof(Match) * fj->cap_matches)
			: MemoryContextAllocHuge(CurrentMemoryContext, sizeof(Match) * fj->cap_matches);
	}
	fj->matches[fj->n_matches].src = src;
	fj->matches[fj->n_matches].addr = addr;
	fj->n_matches++;
}

static int
match_cmp(const void *a, const void *b)
{
	const Match *x = a,
			   *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr ? 1 : 0;
}

/*
 * The index's verdict on each fragment for "key IN (the source's keys)", or NULL when no index
 * narrows anything (then every fragment is read). Only without delete_not_matched_by_source (every
 * target row is needed then) and for few keys: a key lookup in the btree costs about as much as
 * reading a few thousand key values (bench/merge.sh: ~0.1 ms a key against ~50 ns a row).
 */
static lt_index_plan *
fast_index_plan(Merge *m, FastJoin *fj, MemoryContext cxt, lt_index_planner **own)
{
	lt_dataset *ds = m->entry->ds;
	lt_filter  *f = NULL;
	lt_expr    *x,
			   *in;
	lt_value   *vals;
	lt_index_plan *plan = NULL;
	lt_index_planner *planner;
	lt_error	err;
	lt_code		rc;
	int64		k = 0;
	MemoryContext old;

	*own = NULL;
	if (m->delete_not_matched || !lt_enable_index_scan || fj->n_keys == 0 || fj->n_keys > PG_INT32_MAX ||
		(double) fj->n_keys * 4096 > (double) m->entry->live_rows)
		return NULL;
	/* lt_value holds a 128-bit integer: 16-byte aligned, as the library allocates (palloc gives 8) */
	old = lt_alloc_target(cxt);
	vals = lt_malloc(sizeof(lt_value) * fj->n_keys);
	lt_alloc_target(old);
	if (vals == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	for (uint64 i = 0; i <= fj->mask; i++)
		if (fj->slots[i].head != SLOT_EMPTY)
		{
			memset(&vals[k], 0, sizeof(lt_value));
			vals[k].kind = fj->field->type == LT_TYPE_UINT32 || fj->field->type == LT_TYPE_UINT16 ||
				fj->field->type == LT_TYPE_UINT8 ? LT_VALUE_UINT : LT_VALUE_INT;
			if (vals[k].kind == LT_VALUE_UINT && fj->slots[i].key < 0)
				continue;		/* a negative key matches no unsigned value */
			if (vals[k].kind == LT_VALUE_UINT)
				vals[k].v.u = (uint64) fj->slots[i].key;
			else
				vals[k].v.i = fj->slots[i].key;
			k++;
		}
	if (k == 0)
		return NULL;
	old = lt_alloc_target(cxt);
	rc = lt_filter_new(1, &fj->field, &f, &err);
	if (rc == LT_OK && ((x = lt_expr_column(f, 0, &err)) == NULL ||
						(in = lt_expr_in_param(f, x, 0, vals[0].kind, &err)) == NULL))
		rc = err.code;
	if (rc == LT_OK)
		rc = lt_filter_set_root(f, in, &err);
	if (rc == LT_OK)
		rc = lt_filter_set_param_array(f, 0, (int) k, vals, &err);
	if (rc == LT_OK && !lt_xact_is_view(m->entry))
	{
		/* a committed version keeps its planner (its index readers) for later statements, as scans do */
		lt_alloc_target(m->entry->cxt);
		if (m->entry->planner == NULL)
			rc = lt_index_planner_open(ds, &m->entry->planner, &err);
		planner = m->entry->planner;
		lt_alloc_target(cxt);
	}
	else if (rc == LT_OK)
	{
		rc = lt_index_planner_open(ds, own, &err);
		planner = *own;
	}
	if (rc == LT_OK)
		rc = lt_index_plan_build(planner, f, 0, NULL, &plan, &err);
	lt_alloc_target(old);
	if (rc != LT_OK)
	{
		elog(DEBUG1, "lt_merge_insert: the key's index is not used: %s", err.msg);
		return NULL;
	}
	if (plan->n_used == 0)
		return NULL;
	elog(DEBUG1, "lt_merge_insert: index %s answers %lld keys: %llu fragments pruned, %llu rows selected",
		 plan->used[0].index->name, (long long) k, (unsigned long long) plan->n_pruned,
		 (unsigned long long) plan->rows_selected);
	return plan;
}

/* "(k)=(v)" of the one integer key, as key_text. */
static char *
fast_key_text(Merge *m, int64 key)
{
	return psprintf("(%s)=(" INT64_FORMAT ")", NameStr(TupleDescAttr(RelationGetDescr(m->rel), m->keys[0] - 1)->attname),
					key);
}

/* One target row with key value key (or a NULL key) at addr; its probe starts at slot `first`. */
static inline void
fast_probe(Merge *m, FastJoin *fj, bool isnull, int64 key, uint64 first, uint64 addr)
{
	KeySlot    *s = isnull ? NULL : fj_find_from(fj, key, first);

	if (s == NULL || s->head == SLOT_EMPTY)
	{
		if (m->delete_not_matched)
		{
			lt_xact_delete(m->xt, &addr, 1);
			m->rows_deleted++;
		}
		return;
	}
	if (m->when_matched == WM_FAIL)
		report_matched_fail(m, fast_key_text(m, key));
	if (m->when_matched == WM_UPDATE_ALL && fj->next[s->head] >= 0)
		report_matched_twice(m, fast_key_text(m, key));
	/* do_nothing: every source row of the key is matched (none is inserted) */
	for (int32 r = s->head; r >= 0; r = fj->next[r])
		fj_add_match(fj, r, addr);
}

/* Read the target's key column (where the index allows: only the rows it names) and probe each value. */
static void
fast_scan_target(Merge *m, FastJoin *fj)
{
	lt_dataset *ds = m->entry->ds;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "lt_merge_insert scan", ALLOCSET_DEFAULT_SIZES);
	MemoryContext icxt = AllocSetContextCreate(CurrentMemoryContext, "lt_merge_insert index", ALLOCSET_DEFAULT_SIZES);
	lt_index_planner *own = NULL;
	lt_index_plan *ip = fast_index_plan(m, fj, icxt, &own);
	const char *what = psprintf("dataset %s (foreign table \"%s\")", m->opts.uri, m->relname);
	int64	   *keys = NULL;		/* a batch's key values ... */
	uint64	   *first = NULL;		/* ... and the slots their probes start at */
	int64		cap_keys = 0;

	for (size_t i = 0; i < ds->n_fragments; i++)
	{
		const Lt__Pb__DataFragment *frag = ds->fragments[i];
		lt_frag_plan *fp = ip ? &ip->fragments[i] : NULL;
		lt_scan_options so = {0};
		lt_fragment_scanner *sc = NULL;
		lt_batch   *b;
		lt_error	err;
		lt_code		rc;
		MemoryContext old;

		if (fp && fp->verdict == LT_FRAG_PRUNED)
			continue;
		if (fp && (fp->verdict == LT_FRAG_ROWS || fp->verdict == LT_FRAG_CANDIDATES))
		{
			if (fp->n_offsets == 0)
				continue;
			so.offsets = fp->offsets;
			so.n_offsets = fp->n_offsets;
		}
		so.n_fields = 1;
		so.fields = &fj->field;
		old = lt_alloc_target(cxt);
		rc = lt_fragment_scanner_open(ds, frag, &so, &sc, &err);
		while (rc == LT_OK && (rc = lt_fragment_scanner_next(sc, &b, &err)) == LT_OK && b != NULL)
		{
			const lt_array *a = b->columns[0];

			CHECK_FOR_INTERRUPTS();
			if (b->length > cap_keys)
			{
				cap_keys = Max(b->length, 2 * cap_keys);
				keys = keys ? repalloc_huge(keys, sizeof(int64) * cap_keys)
					: MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * cap_keys);
				first = first ? repalloc_huge(first, sizeof(uint64) * cap_keys)
					: MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint64) * cap_keys);
			}
			lt_array_int64s(a, b->length, keys);
			for (int64 r = 0; r < b->length; r++)
				first[r] = hash_int64(keys[r]) & fj->mask;
			/*
			 * A table of many keys is bigger than the caches, and a probe of a random slot waits for
			 * memory: the slot PROBE_AHEAD rows on is fetched while this row's is looked at.
			 */
			for (int64 r = 0; r < b->length; r++)
			{
				if (r + PROBE_AHEAD < b->length)
					PREFETCH(&fj->slots[first[r + PROBE_AHEAD]]);
				fast_probe(m, fj, !lt_array_is_valid(a, r), keys[r], first[r], b->row_addrs[r]);
			}
		}
		if (sc)
			lt_fragment_scanner_free(sc);
		lt_alloc_target(old);
		MemoryContextReset(cxt);
		if (rc != LT_OK)
			lt_report(&err, what);
	}
	{
		MemoryContext old = lt_alloc_target(icxt);

		if (ip)
			lt_index_plan_free(ip);
		if (own)
			lt_index_planner_free(own);
		lt_alloc_target(old);
	}
	MemoryContextDelete(icxt);
	MemoryContextDelete(cxt);
	if (keys)
	{
		pfree(keys);
		pfree(first);
	}
}

/* The source rows in order, with what matched them: updates, inserts. */
static void
fast_write(Merge *m, FastJoin *fj)
{
	TupleTableSlot *src = MakeSingleTupleTableSlot(fj->desc, &TTSOpsMinimalTuple);
	int64		k = 0;

	if (fj->n_matches > 1)
		qsort(fj->matches, fj->n_matches, sizeof(Match), match_cmp);
	tuplestore_rescan(fj->rows);
	for (int32 r = 0; r < fj->n_src; r++)
	{
		bool		matched = k < fj->n_matches && fj->matches[k].src == r;

		CHECK_FOR_INTERRUPTS();
		if (!tuplestore_gettupleslot(fj->rows, true, false, src))
			elog(ERROR, "lt_merge_insert: source row %d is missing from its store", r);
		slot_getallattrs(src);
		for (; k < fj->n_matches && fj->matches[k].src == r; k++)
		{
			uint64		addr = fj->matches[k].addr;

			if (m->when_matched != WM_UPDATE_ALL)
				continue;
			lt_row_writer_append(m->updates, source_slot(m, src->tts_values, src->tts_isnull), addr, !m->on_key);
			lt_xact_delete(m->xt, &addr, 1);
			m->rows_updated++;
		}
		if (!matched && m->insert_not_matched)
		{
			lt_row_writer_append(m->inserts, source_slot(m, src->tts_values, src->tts_isnull), UINT64_MAX, true);
			m->rows_inserted++;
		}
	}
	ExecDropSingleTupleTableSlot(src);
	tuplestore_end(fj->rows);
}

/* The fast path when the key allows it and its keys fit the budget; false: nothing done, join instead. */
static bool
run_fast(Merge *m, const char *query)
{
	FastJoin	fj = {0};
	const char *sql;

	fj.field = fast_key_field(m);
	if (fj.field == NULL || m->n_kept > 0)
		return false;			/* a partial source reads the matched rows' other columns: the join */
	fj.budget = get_hash_memory_limit();
	sql = source_sql(m, query, NULL);
	elog(DEBUG1, "lt_merge_insert: %s; matched on %s by lt_fdw's hash join", sql,
		 NameStr(TupleDescAttr(RelationGetDescr(m->rel), m->keys[0] - 1)->attname));
	if (!fast_read_source(m, &fj, sql))
	{
		tuplestore_end(fj.rows);
		elog(DEBUG1, "lt_merge_insert: the source's keys need more than work_mem * hash_mem_multiplier: a PostgreSQL join reads it again");
		return false;
	}
	fast_scan_target(m, &fj);
	fast_write(m, &fj);
	return true;
}

static void
run_merge(Merge *m, const char *query)
{
	SPIPlanPtr	plan;
	List	   *sources;
	TupleDesc	srcdesc;
	uint64		rows,
				files;

	/* the source's columns, from its plan */
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "lt_merge_insert: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1 || ((CachedPlanSource *) linitial(sources))->resultDesc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("lt_merge_insert: the query must be one SELECT or VALUES statement")));
	srcdesc = ((CachedPlanSource *) linitial(sources))->resultDesc;
	bind_source(m, srcdesc);
	SPI_freeplan(plan);

	/*
	 * From here on the target reads the transaction's view of the dataset (its own writes): the
	 * join's scan and the ctid it fills, and the fast path's row addresses, refer to m->entry.
	 */
	m->entry = lt_xact_view(m->opts.dataset_dir, false);
	m->slot = MakeSingleTupleTableSlot(RelationGetDescr(m->rel), &TTSOpsVirtual);
	/* one writer, but with stable row ids moved rows keep theirs and new ones get new ids: two files */
	{
		/* every row written supplies the source's columns: tracked fields among them are assigned */
		Bitmapset  *supplied = NULL;

		for (int c = 0; c < m->n_cols; c++)
			supplied = bms_add_member(supplied, m->cols[c] - FirstLowInvalidHeapAttributeNumber);
		m->inserts = lt_row_writer_begin(m->rel, GetUserId(), NULL, NULL, supplied);
		/* a partial source: a replaced row carries the assignment of the fields it does not give */
		m->updates = m->entry->ds->stable_row_ids || m->n_kept > 0
			? lt_row_writer_begin(m->rel, GetUserId(), m->entry, m->inserts, supplied) : m->inserts;
	}

	if (!lt_merge_fast || !run_fast(m, query))
		run_join(m, query);

	if (m->updates != m->inserts)
		lt_row_writer_end(m->updates, &rows, &files);	/* first: it shares the inserts' key set */
	lt_row_writer_end(m->inserts, &rows, &files);
	ExecDropSingleTupleTableSlot(m->slot);
}

void
lt_merge_init(void)
{
	DefineCustomBoolVariable("lt_fdw.merge_insert_fast_path",
							 "Lets lt_merge_insert match a single integer key by its own hash join over the key column.",
							 "Off: every merge-insert matches through a PostgreSQL join.",
							 &lt_merge_fast, true, PGC_USERSET, 0, NULL, NULL, NULL);
}

PG_FUNCTION_INFO_V1(lt_merge_insert);

Datum
lt_merge_insert(PG_FUNCTION_ARGS)
{
	Merge	   *m = palloc0(sizeof(Merge));
	Oid			relid;
	char	   *query;
	ArrayType  *on_columns;
	TupleDesc	td;
	Datum		values[3];
	bool		nulls[3] = {0};
	AclMode		need = 0;
	AclResult	acl;
	ErrorContextCallback errcb;
	int			rc;

	for (int i = 0; i < 6; i++)
		if (i != 2 && PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("lt_merge_insert: %s must not be NULL",
							(const char *[]) {"target", "query", "", "when_matched", "when_not_matched",
											  "delete_not_matched_by_source"}[i])));
	relid = PG_GETARG_OID(0);
	query = lt_check_select_query(text_to_cstring(PG_GETARG_TEXT_PP(1)), "lt_merge_insert");
	on_columns = PG_ARGISNULL(2) ? NULL : PG_GETARG_ARRAYTYPE_P(2);
	m->when_matched = parse_when_matched(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	m->insert_not_matched = parse_when_not_matched(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	m->delete_not_matched = PG_GETARG_BOOL(5);
	if (m->when_matched == WM_DO_NOTHING && !m->insert_not_matched && !m->delete_not_matched)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lt_merge_insert: this merge-insert would change nothing"),
				 errdetail("when_matched and when_not_matched are do_nothing and delete_not_matched_by_source is false.")));
	if (get_call_result_type(fcinfo, NULL, &td) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "lt_merge_insert: return type must be a row type");

	lt_check_lt_table(relid, "lt_merge_insert");
	if (lt_overwrite_active())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lt_merge_insert: lt_fdw.overwrite_where is set"),
				 errdetail("A merge-insert does not replace rows by a predicate."),
				 errhint("RESET lt_fdw.overwrite_where first.")));

	/* the privileges of the commands it stands for, as MERGE asks them */
	if (m->insert_not_matched)
		need |= ACL_INSERT;
	if (m->when_matched == WM_UPDATE_ALL)
		need |= ACL_UPDATE;
	if (m->delete_not_matched)
		need |= ACL_DELETE;
	for (AclMode bit = ACL_INSERT; bit <= ACL_DELETE; bit <<= 1)
	{
		/* one at a time: a check of several bits passes when any of them is granted */
		if ((need & bit) && (acl = pg_class_aclcheck(relid, GetUserId(), bit)) != ACLCHECK_OK)
			aclcheck_error(acl, OBJECT_FOREIGN_TABLE, get_rel_name(relid));
	}

	m->rel = table_open(relid, RowExclusiveLock);
	m->relname = RelationGetRelationName(m->rel);
	lt_get_table_options(relid, &m->opts);
	lt_check_writable(m->rel, &m->opts);
	errcb.callback = merge_error_callback;
	errcb.arg = m;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;

	/* the transaction's state for the dataset (the location's write privilege: the writer checks it, modify.c) */
	m->xt = lt_write_xact_table(m->rel, &m->opts, "write");
	lt_check_blob_writable(m->relname, m->opts.uri, m->xt->base->ds, "merge into");
	bind_keys(m, on_columns);
	/* the match reads the key columns (MERGE asks SELECT on the columns of its join condition) */
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		for (int k = 0; k < m->n_keys; k++)
			if (pg_attribute_aclcheck(relid, m->keys[k], GetUserId(), ACL_SELECT) != ACLCHECK_OK)
				aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_FOREIGN_TABLE, m->relname);

	if ((rc = SPI_connect()) != SPI_OK_CONNECT)
		elog(ERROR, "lt_merge_insert: SPI_connect failed: %s", SPI_result_code_string(rc));
	run_merge(m, query);
	SPI_finish();
	if (m->rows_unmatched > 0)
		ereport(NOTICE,
				(errmsg_plural("lt_merge_insert: %lld source row matches no row of foreign table \"%s\"",
							   "lt_merge_insert: %lld source rows match no row of foreign table \"%s\"",
							   m->rows_unmatched, (long long) m->rows_unmatched, m->relname),
				 errdetail("Their _rowid names no row of the version the transaction reads (deleted or replaced since).")));

	error_context_stack = errcb.previous;
	table_close(m->rel, NoLock);
	values[0] = Int64GetDatum(m->rows_inserted);
	values[1] = Int64GetDatum(m->rows_updated);
	values[2] = Int64GetDatum(m->rows_deleted);
	td = BlessTupleDesc(td);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(td, values, nulls)));
}

/* ---- TRUNCATE ----------------------------------------------------------------------------------- */

/*
 * TRUNCATE of lt_fdw foreign tables (PostgreSQL calls this once per server with its tables; it
 * checked the TRUNCATE privilege). Each dataset loses every row of the version the transaction
 * reads and every row the transaction wrote before (lt_txn_replace_all); rows written after it in
 * the same transaction stay. It commits with the transaction as one Lance Overwrite, as Lance
 * writes a truncate: the read version's schema and config, the fragments added after the
 * TRUNCATE (none, or the transaction's later INSERTs), and — unlike Lance 8's own Overwrite, which
 * drops every index — the definition of every index, with a fragment bitmap covering nothing (new
 * fragments are unindexed, for lt_fdw and the engine alike). Until then later statements see the
 * table empty; ROLLBACK / ROLLBACK TO undo it. An Overwrite replaces everything, so any concurrent
 * commit but a ReserveFragments conflicts with it, in both orders (40001; docs/conflicts.md).
 *
 * RESTART IDENTITY and CASCADE change nothing in a dataset (Lance has no sequences and no foreign
 * keys); PostgreSQL restarts the sequences it owns itself.
 */
void
ltExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs)
{
	ListCell   *lc;

	foreach(lc, rels)
	{
		Relation	rel = lfirst(lc);
		LtTableOptions opts;

		/* as UPDATE and DELETE: only an INSERT replaces, a TRUNCATE would ignore the predicate */
		if (lt_overwrite_active())
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("lt_fdw: lt_fdw.overwrite_where is set, but TRUNCATE of foreign table \"%s\" cannot replace rows",
							RelationGetRelationName(rel)),
					 errdetail("Only an INSERT replaces the rows matching the predicate \"%s\".", lt_overwrite_where),
					 errhint("RESET lt_fdw.overwrite_where first.")));
		lt_get_table_options(RelationGetRelid(rel), &opts);
		lt_check_writable(rel, &opts);
		lt_check_write_privilege(GetUserId(), RelationGetRelationName(rel), opts.uri);
		{
			LtXactTable *xt = lt_write_xact_table(rel, &opts, "truncate");

			lt_check_blob_writable(RelationGetRelationName(rel), opts.uri, xt->base->ds, "truncate");
			lt_xact_replace_all(xt, true);
		}
		elog(DEBUG1, "lt_fdw: TRUNCATE of foreign table \"%s\" (dataset %s)", RelationGetRelationName(rel), opts.uri);
	}
}
