/*
 * lt_deletion.h — deletion vectors: which physical rows of a fragment are gone.
 *
 * A fragment's DeletionFile points at _deletions/{frag}-{read_version}-{id}.{ext}:
 *   .arrow  an Arrow IPC file with one record batch of `row_id: uint32 not
 *           null` (unsorted; body buffers optionally ZSTD-compressed), written
 *           by Lance for up to 5000 deleted rows;
 *   .bin    a 32-bit Roaring bitmap in the portable format.
 * Each file holds every deleted offset of the fragment, not just new ones.
 * Both parsers treat the bytes as untrusted: errors are LT_ECORRUPT naming the
 * path and the offset.
 */
#ifndef LT_DELETION_H
#define LT_DELETION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/lt_status.h"
#include "io/lt_store.h"

/* Same values as DeletionFile.FileType in the manifest. */
typedef enum lt_deletion_type
{
	LT_DELETION_ARROW = 0,
	LT_DELETION_BITMAP = 1
} lt_deletion_type;

/* The manifest's DeletionFile, minus base_id: the caller picks the store. */
typedef struct lt_deletion_file
{
	lt_deletion_type type;
	uint64_t	read_version;
	uint64_t	id;
	uint64_t	num_deleted_rows;	/* 0 = unknown (older writers leave it unset) */
} lt_deletion_file;

typedef struct lt_deletion_vector
{
	uint64_t	count;			/* distinct deleted offsets */
	uint32_t   *offsets;		/* ascending, no duplicates; NULL when count is 0 */
} lt_deletion_vector;

/* Largest deletion file read whole (a full 2^32-row roaring is ~512 MiB). */
#define LT_DELETION_MAX_FILE	((uint64_t) 600 << 20)

/* "_deletions/{frag}-{read_version}-{id}.{arrow|bin}", lt_malloc'd; NULL on ENOMEM. */
char	   *lt_deletion_path(uint64_t fragment_id, uint64_t read_version, uint64_t id,
							 lt_deletion_type type);

/*
 * Read and parse a fragment's deletion file from store (relative to its root).
 * physical_rows, when non-zero, bounds every offset (an offset past the end is
 * LT_ECORRUPT).  A non-zero num_deleted_rows must equal the distinct offsets
 * in the file.
 */
lt_code		lt_deletion_read(lt_store *store, uint64_t fragment_id, const lt_deletion_file *df,
							 uint64_t physical_rows, lt_deletion_vector **out, lt_error *err);

/*
 * Parse deletion-file bytes already in memory; path is only used in messages.
 * Same checks as lt_deletion_read.  Without physical_rows or num_deleted_rows
 * at most LT_DELETION_MAX_UNBOUNDED offsets are accepted.
 */
#define LT_DELETION_MAX_UNBOUNDED ((uint64_t) 1 << 28)
lt_code		lt_deletion_parse(const uint8_t *buf, size_t len, lt_deletion_type type,
							  uint64_t num_deleted_rows, uint64_t physical_rows, const char *path,
							  lt_deletion_vector **out, lt_error *err);

/*
 * The values of a `.arrow` deletion file as stored (unsorted, duplicates kept),
 * lt_malloc'd.  max_values bounds the row count.
 */
lt_code		lt_deletion_arrow_values(const uint8_t *buf, size_t len, const char *path, uint64_t max_values,
									 uint32_t **values, uint64_t *n, lt_error *err);

bool		lt_deletion_contains(const lt_deletion_vector *dv, uint64_t offset);

/* Deleted offsets below offset: the index of the first one >= offset in dv->offsets. */
uint64_t	lt_deletion_rank(const lt_deletion_vector *dv, uint64_t offset);

/*
 * Live rows among physical rows [start, start + n): writes their positions
 * relative to start, ascending, into sel (room for n) and returns the count.
 * dv may be NULL (nothing deleted).
 */
uint32_t	lt_deletion_select(const lt_deletion_vector *dv, uint64_t start, uint32_t n, uint32_t *sel);

void		lt_deletion_free(lt_deletion_vector *dv);

/*
 * Deletion files (lt_deletion_write.c): write the full set of deleted offsets of a fragment
 * as Lance does: `.arrow` (Arrow IPC file, one `row_id: uint32 not null` batch) up to 5000
 * offsets, `.bin` (portable 32-bit roaring) above, at _deletions/{frag}-{read_version}-{random}.
 * offsets ascending, no duplicates.  Fills *df.
 */
lt_code		lt_deletion_write(lt_store *store, const char *prefix, uint64_t fragment_id, uint64_t read_version,
							  const uint32_t *offsets, uint64_t n, lt_deletion_file *df, lt_error *err);

#endif
