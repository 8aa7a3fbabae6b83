/*
 * lt_fdw.h — declarations shared by the files of the Postgres glue (src/fdw/).
 *
 *   lt_fdw.c    the handler (entry point) and module initialisation
 *   option.c    the option table, the validator, option lookup, the local-file privilege rule
 *   dataset.c   library allocations in memory contexts, lt_code -> SQLSTATE, version resolution
 *               (snapshots), the per-backend cache of opened datasets
 *   convert.c   the type mapping: checks of declared columns against fields, lt_array slot -> Datum
 *   scan.c      planning and executing a foreign scan
 *   explain.c   EXPLAIN output
 *   import.c    IMPORT FOREIGN SCHEMA
 */
#ifndef LT_FDW_H
#define LT_FDW_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "commands/explain.h"
#include "fmgr.h"
#include "foreign/fdwapi.h"
#include "nodes/pg_list.h"
#include "utils/rel.h"

#include "lt_array.h"
#include "lt_dataset.h"
#include "lt_schema.h"
#include "lt_status.h"

/* ---- option.c ------------------------------------------------------------------------------- */

/* The options of one foreign table, merged with its server's. */
typedef struct LtTableOptions
{
	char	   *server_name;
	char	   *root;			/* server root as a local directory (file:// stripped), or NULL */
	char	   *path;			/* table path option as given, or NULL */
	char	   *dataset_dir;	/* the resolved local directory of the dataset */
	char	   *uri;			/* file:// URI for messages and EXPLAIN */
	uint64		version;		/* 0 = not pinned */
	char	   *tag;			/* NULL = not pinned */
} LtTableOptions;

extern void lt_get_table_options(Oid relid, LtTableOptions *opts);
/* The dataset field name of a column: its column_name option, else its attname. */
extern char *lt_column_field_name(Oid relid, AttrNumber attnum, const char *attname);
/* The local-file privilege rule: superuser or pg_read_server_files, for userid. */
extern void lt_check_read_privilege(Oid userid, const char *relname, const char *uri);
/* "file:///x" or "/x" -> "/x"; errors for s3:// (not supported yet) and other schemes. */
extern char *lt_local_path_from_uri(const char *value, const char *option);

/* ---- dataset.c ------------------------------------------------------------------------------ */

/* Route library allocations: returns the previous target. */
extern MemoryContext lt_alloc_target(MemoryContext cxt);
extern void lt_alloc_init(void);

/* ereport(ERROR) for a failed library call; `what` names the dataset/table. */
extern void lt_report(const lt_error *err, const char *what) pg_attribute_noreturn();

/* An opened dataset at one version, held by the per-backend cache. */
typedef struct LtDatasetEntry
{
	char	   *dir;			/* key: dataset directory ... */
	uint64		version;		/* ... and version */
	MemoryContext cxt;			/* every library allocation of store + dataset */
	lt_store   *store;
	lt_dataset *ds;
	int			pins;			/* scans using it now; pinned entries are never evicted */
	uint64		last_used;
	uint64		live_rows;
} LtDatasetEntry;

/*
 * Resolve the version a statement reads (snapshot rules: pinned by option, per transaction in
 * REPEATABLE READ/SERIALIZABLE, per statement in READ COMMITTED) and return the cached dataset,
 * pinned when `pin` (release with lt_dataset_unpin).
 */
extern LtDatasetEntry *lt_dataset_acquire(Oid relid, const LtTableOptions *opts, bool pin);
extern void lt_dataset_unpin(LtDatasetEntry *entry);
extern LtDatasetEntry *lt_dataset_open_latest(const char *dir, const char *what);

/* ---- convert.c ------------------------------------------------------------------------------ */

typedef enum LtConvKind
{
	LT_CONV_SCALAR,				/* the natural mapping of a scalar field */
	LT_CONV_TEXT,				/* any scalar into text, through the natural type's output */
	LT_CONV_ARRAY,				/* list / large_list / fixed_size_list of a scalar -> T[] */
	LT_CONV_COMPOSITE,			/* struct -> composite */
	LT_CONV_JSONB				/* anything -> jsonb */
} LtConvKind;

typedef struct LtConv
{
	LtConvKind	kind;
	const lt_field *field;
	Oid			typid;			/* the declared (target) type */
	int32		typmod;
	Oid			natural;		/* LT_CONV_TEXT: the natural type of the field */
	FmgrInfo	outfn;			/* LT_CONV_TEXT: its output function */
	/* LT_CONV_ARRAY */
	struct LtConv *elem;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	/* LT_CONV_COMPOSITE */
	TupleDesc	tupdesc;
	int		   *child_index;	/* per attribute: struct child index, -1 for a dropped attribute */
	struct LtConv **children;
} LtConv;

/* Build the conversion of `field` into a column of type typid/typmod; NULL (with *why) if impossible. */
extern LtConv *lt_conv_build(const lt_field *field, Oid typid, int32 typmod, char **why);
extern Datum lt_conv_datum(const LtConv *conv, const lt_array *a, int64 i, bool *isnull);
/* The Postgres type a field maps to by default (InvalidOid when none); *typmod gets its typmod. */
extern Oid	lt_natural_type(const lt_field *field, int32 *typmod);
/* SQL text of the type for IMPORT (composite types need their name); NULL when unsupported. */
extern char *lt_type_sql(const lt_field *field);

/* ---- scan.c / explain.c / import.c ---------------------------------------------------------- */

extern void ltGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern void ltGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid);
extern ForeignScan *ltGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
									 ForeignPath *best_path, List *tlist, List *scan_clauses,
									 Plan *outer_plan);
extern void ltBeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *ltIterateForeignScan(ForeignScanState *node);
extern void ltReScanForeignScan(ForeignScanState *node);
extern void ltEndForeignScan(ForeignScanState *node);
extern void ltExplainForeignScan(ForeignScanState *node, ExplainState *es);
extern List *ltImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid);

/* The executor state of a scan, shared by scan.c and explain.c. */
typedef enum LtColumnKind
{
	LT_COL_FIELD,
	LT_COL_ROWID,
	LT_COL_ROWADDR
} LtColumnKind;

typedef struct LtScanColumn
{
	AttrNumber	attnum;
	LtColumnKind kind;
	int			proj;			/* LT_COL_FIELD: index into the projection */
	LtConv	   *conv;
	const char *attname;
} LtScanColumn;

typedef struct LtScanState
{
	Relation	rel;
	LtTableOptions opts;
	LtDatasetEntry *entry;
	int			n_columns;
	LtScanColumn *columns;
	int			n_proj;
	const lt_field **proj;
	bool		want_row_ids;

	/* iteration */
	size_t		next_fragment;
	struct lt_fragment_scanner *scanner;
	struct lt_batch *batch;
	int64		batch_row;
	MemoryContext lib_cxt;		/* the scanner's library allocations */
	MemoryContext row_cxt;		/* Datums of the current row */
	const LtScanColumn *converting;	/* for the error context */
	uint64		converting_addr;

	/* statistics (EXPLAIN) */
	uint64		fragments_scanned;
	uint64		rows_deleted;
	uint64		bytes_read;
	uint64		read_requests;
} LtScanState;

#endif
