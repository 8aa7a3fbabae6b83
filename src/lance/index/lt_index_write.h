/*
 * lt_index_write.h — building scalar indexes as Lance 8 writes them (the
 * contract; implemented in lt_index_write.c; txn/lt_txn_index.h commits them).
 *
 * A build reads the live rows of one top-level column of an opened dataset
 * version (deleted rows excluded) and writes the files of one index segment
 * to _indices/<uuid>/, unreferenced until a CreateIndex commit names them.
 * The files are Lance 2.1 files (what Lance 8 writes for indexes whatever the
 * dataset's storage version), with the schemas, schema metadata and global
 * buffers the reference writes:
 *
 *   btree       page_data.lance    values (the key type, sorted, nulls first; floats in IEEE total
 *                                  order), ids: uint64 not null; pages of 4096 rows
 *               page_lookup.lance  min, max (first and last value of each page), null_count,
 *                                  page_idx: uint32 not null; metadata batch_size = 4096,
 *                                  range_partitioned = false
 *   bitmap      bitmap_page_lookup.lance  keys (the key type, one row per distinct value, the NULL
 *                                  key first, then ascending), bitmaps: binary (a serialized
 *                                  RowAddrTreeMap each); metadata lance:index_stats
 *                                  {"num_bitmaps":N}
 *   label_list  the same over the list elements, plus global buffer 1: the RowAddrTreeMap of rows
 *               whose list is NULL, named by metadata lance:label_list_nulls = "1"; index_version 1
 *   zonemap     zonemap.lance      min, max (NULL when every value is NULL), null_count, nan_count:
 *                                  uint32, fragment_id, zone_start, zone_length: uint64, one row per
 *                                  zone of up to 8192 live rows of one fragment (zone_start: the
 *                                  first row's offset, zone_length: last - first + 1); metadata
 *                                  rows_per_zone = 8192
 *
 * Payload ids are row addresses, or row ids when the dataset has stable row
 * ids (btree, bitmap, label_list; zone maps of such datasets are refused).
 *
 * Memory: btree, bitmap and label_list sort every (value, id) pair of the
 * column: about (key bytes + 56) per row (per list element for label_list)
 * while in memory.  Past max_memory the sort is external: sorted runs of
 * max_memory each go to temporary files (opts->spill: the host's, NULL:
 * tmpfile(3)), merged at most max_memory / 80 kB at a time (in passes when
 * there are more), and the index files are the same bytes as an in-memory
 * build's.  Zone maps stream (one zone at a time).
 */
#ifndef LT_INDEX_WRITE_H
#define LT_INDEX_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file/lt_writer.h"
#include "table/lt_dataset.h"
#include "index/lt_index.h"
#include "util/lt_spill.h"
#include "util/lt_status.h"

struct Lt__Pb__DataFragment;

#define LT_BTREE_BATCH_SIZE		4096
#define LT_ZONEMAP_ROWS_PER_ZONE 8192

/* A build's steps, for progress reporting: reading the column, sorting (btree, bitmap, label_list), writing */
typedef enum lt_index_build_step
{
	LT_INDEX_BUILD_READ = 1,
	LT_INDEX_BUILD_SORT = 2,
	LT_INDEX_BUILD_WRITE = 3
} lt_index_build_step;

/* done / total rows of the read step (0, 0 for the others); called at each step and between batches */
typedef void (*lt_index_progress_fn) (void *arg, lt_index_build_step step, uint64_t done, uint64_t total);

typedef struct lt_index_build_options
{
	lt_index_kind kind;			/* btree, bitmap, label_list or zonemap */
	const char *name;			/* NULL: "<column>_idx", as Lance names it */
	uint64_t	max_memory;		/* bytes for the sort; 0 = 1 GiB; past it, sorted runs spill */
	const lt_spill_ops *spill;	/* the temporary files of spilled runs; NULL: tmpfile(3) */
	/* the fragments to read (ascending ids; they need not be ds's: a compaction's new ones); NULL = ds's */
	struct Lt__Pb__DataFragment *const *fragments;
	size_t		n_fragments;
	/*
	 * Lance's optimize: an index of this kind on the column whose entries the new segment takes over from
	 * its files (lt_index_read_entries) beside the rows of `fragments` (the unindexed ones); the segment
	 * covers its segments' fragments and those.  NULL: none.
	 */
	const lt_index *merge;
	lt_index_progress_fn progress;	/* NULL: none */
	void	   *progress_arg;
} lt_index_build_options;

/* One built index segment: what its IndexMetadata records. */
typedef struct lt_built_index
{
	uint8_t		uuid[16];
	char		uuid_text[37];
	char	   *name;
	int32_t		field_id;
	lt_index_kind kind;
	int32_t		index_version;
	uint64_t	dataset_version;	/* the version the rows were read from */
	uint32_t   *fragments;		/* every fragment of that version, ascending */
	size_t		n_fragments;
	size_t		n_files;
	char	  **files;			/* names inside _indices/<uuid>/, ascending */
	uint64_t   *file_sizes;
	uint64_t	rows;			/* live rows indexed (a merge: rows read and entries taken over; label_list: elements) */
	uint64_t	entries;		/* btree rows / bitmap keys / zones */
	uint64_t	bytes;			/* total file bytes */
	/* kinds this header does not know (vector indexes): the IndexMetadata's details as built */
	const char *type_url;		/* static; NULL: the kind's */
	uint8_t    *details;		/* the details message, details_len bytes */
	size_t		details_len;
} lt_built_index;

/*
 * Build an index of `kind` on top-level column `column` of ds.  A kind that
 * does not fit the column's type (label_list on a non-list, zonemap on a
 * list, ...) is LT_EUNSUPPORTED with a message naming the column and type.
 * On error the files written so far are removed (best effort).
 */
lt_code		lt_index_build(lt_dataset *ds, const lt_field *column, const lt_index_build_options *opts,
						   lt_built_index *out, lt_error *err);
void		lt_built_index_clear(lt_built_index *b);
/*
 * Start a segment on column of ds (any builder): a new uuid, the name (NULL: "<column>_idx"), the field,
 * the read version and its fragments in b; *dir gets the segment's directory "<prefix>_indices/<uuid>/"
 * (the caller frees it).
 */
lt_code		lt_built_index_begin(lt_dataset *ds, const lt_field *column, const char *name, lt_built_index *b,
								 char **dir, lt_error *err);
/* Record a file written to the index's directory (its name and size) in b. */
lt_code		lt_built_index_add_file(lt_built_index *b, const char *name, uint64_t size, lt_error *err);
/* Open a file `name` of the segment directory dir (lt_built_index_begin's) for writing, as Lance writes index files (2.1). */
lt_code		lt_built_index_open_file(lt_dataset *ds, const char *dir, const char *name, int n_fields,
									 const lt_field *const *fields, lt_file_writer **w, lt_error *err);
/* Finish w and record it in b (lt_built_index_add_file). */
lt_code		lt_built_index_finish_file(lt_built_index *b, lt_file_writer *w, const char *name, lt_error *err);
/* Remove a built index's files (an index that will not be committed). */
void		lt_built_index_remove(lt_dataset *ds, const lt_built_index *b);

/*
 * Where lt_index_read_entries hands an existing index's entries (ids are the payloads: row addresses, or
 * row ids on a stable-row-id dataset).
 */
typedef struct lt_index_entry_sink
{
	/* btree: values[0 .. n) with ids[0 .. n), one each */
	lt_code		(*pairs) (void *arg, const lt_array *values, int64_t n, const uint64_t *ids, lt_error *err);
	/* bitmap / label_list: the key values[row] with each of ids[0 .. n) */
	lt_code		(*key) (void *arg, const lt_array *values, int64_t row, const uint64_t *ids, int64_t n, lt_error *err);
	/* label_list: rows whose list is NULL */
	lt_code		(*null_lists) (void *arg, const uint64_t *ids, int64_t n, lt_error *err);
	/* zonemap: row `row` of the columns min, max, null_count, nan_count, fragment_id, zone_start, zone_length */
	lt_code		(*zone) (void *arg, const lt_array *const *cols, int64_t row, lt_error *err);
	void	   *arg;
} lt_index_entry_sink;

/*
 * Hand every entry of idx's segments over fragments ds still has (lt_index_merge.c) to sink.  Keys of
 * another layout than value_field (the column's, as the builder writes it) are LT_EUNSUPPORTED before any
 * entry of that segment is handed on: the caller then reads those fragments from the data instead.
 */
lt_code		lt_index_read_entries(lt_dataset *ds, const lt_index *idx, const lt_field *value_field,
								  const lt_index_entry_sink *sink, lt_error *err);

/* Whether kind can index column (NULL), else why not (a static message). */
const char *lt_index_kind_unfit(const lt_dataset *ds, lt_index_kind kind, const lt_field *column);
/* "btree" etc. -> kind; LT_INDEX_UNKNOWN for anything else. */
lt_index_kind lt_index_kind_from_name(const char *name);

#endif
