/*
 * lt_file.h — one Lance data file: its container, and readers of its fields.
 *
 * lt_file_open() reads the footer and metadata of any data file version:
 * legacy v1 (footer 0.2, storage "0.1"), 2.0 (footer 0.3), 2.1, 2.2, 2.3.
 * A field reader then yields rows of one top-level field of the table schema
 * as an lt_array; the per-version readers live in lt_reader20.c,
 * lt_reader21.c and lt_reader_legacy.c.
 */
#ifndef LT_FILE_H
#define LT_FILE_H

#include <stdint.h>

#include "io/lt_store.h"
#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

struct Lt__Pb__ColumnMetadata;
struct Lt__Pb__FileDescriptor;

typedef enum lt_file_version
{
	LT_FILE_LEGACY = 1,			/* footer (0,2): v1 files of storage version 0.1 */
	LT_FILE_V2_0,				/* footer (0,3) */
	LT_FILE_V2_1,
	LT_FILE_V2_2,
	LT_FILE_V2_3
} lt_file_version;

typedef struct lt_file
{
	char	   *path;			/* store-relative, for messages */
	lt_rfile   *rf;
	uint64_t	size;
	uint16_t	major, minor;	/* as in the footer */
	lt_file_version version;
	uint64_t	num_rows;		/* from the descriptor (2.x) or the page table (legacy) */

	/* 2.x container */
	uint32_t	num_columns;
	uint32_t	num_global_buffers;
	uint64_t	column_meta_start;
	uint64_t	cmo_table_start;
	uint64_t	gbo_table_start;
	uint64_t   *gbo_pos;
	uint64_t   *gbo_len;
	uint64_t   *cmo_pos;
	uint64_t   *cmo_len;
	uint8_t    *tail;			/* file bytes [tail_start, size) */
	uint64_t	tail_start;
	struct Lt__Pb__ColumnMetadata **columns;	/* unpacked lazily by lt_file_column() */
	struct Lt__Pb__FileDescriptor *descriptor;	/* global buffer 0, may be NULL for legacy */
	lt_schema  *file_schema;	/* the file's own schema (2.x descriptor) */
	struct lt_bufpool *bufpool;	/* optional: page I/O buffers come from and go back to it */
	/*
	 * Optional: what the file learns as it is read and keeps until it is closed (column metadata,
	 * random-access tables of 2.1+ pages) is allocated with it, not with the caller's hooks of the
	 * moment: a file kept open by a cache (lt_file_cache.h) outlives the scans that fill it.
	 */
	const lt_allocator *owner;
	struct lt21_ra **ra21;		/* random access to 2.1+ pages, owned by lt_reader21.c */
	int			n_ra21,
				cap_ra21;

	/* legacy v1 container, owned by lt_reader_legacy.c */
	void	   *legacy;
} lt_file;

/* Open a data file at path (store-relative). Validates the footer and tables. */
lt_code		lt_file_open(lt_store *store, const char *path, lt_file **out, lt_error *err);
void		lt_file_close(lt_file *f);

/* Column metadata of column i (2.x), unpacked on first use. */
lt_code		lt_file_column(lt_file *f, uint32_t i, struct Lt__Pb__ColumnMetadata **out, lt_error *err);

/* Read byte ranges of the file (coalesced); dsts[i] must hold ranges[i].length bytes. */
lt_code		lt_file_read_ranges(lt_file *f, int n, const lt_range *ranges, uint8_t *const *dsts, lt_error *err);
/* lt_file_read_ranges with ranges closer than gap merged (lt_rfile_read_ranges_gap). */
lt_code		lt_file_read_ranges_gap(lt_file *f, int n, const lt_range *ranges, uint8_t *const *dsts, uint64_t gap,
									lt_error *err);

/*
 * Where a field's data lives in one file: the DataFile's parallel lists of
 * field ids and column indices (negative indices mean "no column").
 */
typedef struct lt_column_map
{
	int			n;
	const int32_t *field_ids;
	const int32_t *columns;
} lt_column_map;

/* Column index of field id, or -1. */
int32_t		lt_column_map_find(const lt_column_map *m, int32_t field_id);

typedef struct lt_field_reader lt_field_reader;

/* Rows [start, start + len) of a field. */
typedef struct lt_row_run
{
	uint64_t	start;
	uint64_t	len;
} lt_row_run;

typedef struct lt_field_reader_ops
{
	/* Append rows [start, start + n) of the field to dst (an array of the field's type). */
	lt_code		(*read) (lt_field_reader *r, uint64_t start, uint64_t n, lt_array *dst, lt_error *err);
	void		(*free) (lt_field_reader *r);
	/* The runs (ascending) the next reads ask for; NULL: nothing to prepare (lt_field_reader_will_read). */
	lt_code		(*will_read) (lt_field_reader *r, const lt_row_run *runs, size_t n, lt_error *err);
} lt_field_reader_ops;

struct lt_field_reader
{
	const lt_field_reader_ops *ops;
	lt_file    *file;
	const lt_field *field;		/* a top-level field of the table schema */
	uint64_t	num_rows;
	/*
	 * The caller will read rows spread over most of every page (a dense
	 * random sample): pages are read whole, not window by window first.
	 */
	bool		whole_pages;
	/*
	 * The caller reads a sample of rows about this many apart (0: ranges, or not known).  Where the
	 * bytes between two of them are many (vectors), each row is fetched alone (a window of its own),
	 * not by reading the page through, whatever whole_pages says.
	 */
	uint64_t	row_gap;
	/*
	 * Each read is a range of its own (index pages looked up one by one), not
	 * part of a stream: a read is windowed by its size alone, however many rows.
	 */
	bool		independent_reads;
	/* reads into an array with header room (lt_array.room) are honoured (the 2.1 reader's strings) */
	bool		room_ok;
	/* counters for benchmarks and EXPLAIN ANALYZE */
	uint64_t	pages_decoded;
};

/*
 * Open a reader for a top-level table field in file f.  Fields (or nested
 * children) that have no column in this file read as nulls.  Dispatches on
 * f->version to the per-version readers below.
 */
lt_code		lt_field_reader_open(lt_file *f, const lt_field *field, const lt_column_map *map,
								 lt_field_reader **out, lt_error *err);
lt_code		lt_field_reader_read(lt_field_reader *r, uint64_t start, uint64_t n, lt_array *dst, lt_error *err);
void		lt_field_reader_free(lt_field_reader *r);
/*
 * The runs of rows the next reads will ask for, in order (a batch of a sparse take): a reader may fetch
 * all their bytes at once, in as few requests as the store's take gap allows (lt_store_take_gap),
 * where reading them one by one costs a request each.  Only a hint: reads of other rows still work.
 */
lt_code		lt_field_reader_will_read(lt_field_reader *r, const lt_row_run *runs, size_t n, lt_error *err);

/* Per-version constructors (same contract as lt_field_reader_open). */
lt_code		lt_reader21_open(lt_file *f, const lt_field *field, const lt_column_map *map,
							 lt_field_reader **out, lt_error *err);
lt_code		lt_reader20_open(lt_file *f, const lt_field *field, const lt_column_map *map,
							 lt_field_reader **out, lt_error *err);
lt_code		lt_reader_legacy_open(lt_file *f, const lt_field *field, const lt_column_map *map,
								  lt_field_reader **out, lt_error *err);
/* Free what the 2.1+ reader kept with the file (called by lt_file_close). */
void		lt_reader21_file_free(lt_file *f);
/* Legacy container parse, called by lt_file_open for footer (0,2). */
lt_code		lt_legacy_file_init(lt_file *f, lt_error *err);
void		lt_legacy_file_free(lt_file *f);
/* A legacy file's embedded schema as f->file_schema (index files), and its schema metadata value or NULL. */
lt_code		lt_legacy_file_schema(lt_file *f, lt_error *err);
const uint8_t *lt_legacy_file_meta(const lt_file *f, const char *key, size_t *len);

/* A reader that yields n nulls (field absent from the file). */
lt_code		lt_null_reader_open(lt_file *f, const lt_field *field, lt_field_reader **out, lt_error *err);

#endif
