/*
 * lt_writer.h — writing Lance data files (the contract; implemented in lt_writer*.c).
 *
 * A file writer takes batches of lt_arrays (one per top-level field, the same
 * shapes the readers produce) and streams a data file in one storage version
 * (2.0, 2.1, 2.2) to a store: pages are encoded and written as they fill, so
 * memory stays bounded by the page buffers whatever the file's length.  The
 * encodings are chosen per page from the values (bit-packing, dictionary,
 * FSST / general compression, full-zip for wide values), as the Lance writer
 * does, so that the files are no bigger than its own.
 *
 * The file lands at its final, unreferenced path; nothing refers to it until
 * a transaction (lt_txn.h) commits a fragment naming it.
 */
#ifndef LT_WRITER_H
#define LT_WRITER_H

#include <stdint.h>

#include "io/lt_store.h"
#include "types/lt_array.h"
#include "file/lt_file.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

/* Where a finished file's columns are: what a DataFile of the manifest records. */
typedef struct lt_written_file
{
	char	   *name;			/* file name relative to data/ ("<50 chars>.lance"), lt_malloc'd */
	int			n_fields;		/* fields / column_indices as DataFile stores them (pre-order) */
	int32_t    *field_ids;
	int32_t    *column_indices;
	uint32_t	major, minor;	/* as DataFile records it: 2.0 -> (2, 0) (footer 0.3), 2.1 -> (2, 1), 2.2 -> (2, 2) */
	uint64_t	size;			/* bytes */
	uint64_t	num_rows;
} lt_written_file;

void		lt_written_file_clear(lt_written_file *wf);

typedef struct lt_file_writer lt_file_writer;

/*
 * Start a new data file under `data_dir` ("<prefix>data/") of the store, named
 * like Lance names them (lt_data_file_name).  `fields` are top-level fields
 * of the dataset schema, in the order the batches give them; the file holds
 * them and their descendants.  version is LT_FILE_V2_0, LT_FILE_V2_1 or
 * LT_FILE_V2_2 (legacy files are LT_EUNSUPPORTED).
 */
lt_code		lt_file_writer_open(lt_store *store, const char *data_dir, int n_fields, const lt_field *const *fields,
								lt_file_version version, lt_file_writer **out, lt_error *err);
/* The same at an exact store path (index files: "_indices/<uuid>/page_data.lance"). */
lt_code		lt_file_writer_open_path(lt_store *store, const char *path, int n_fields, const lt_field *const *fields,
									 lt_file_version version, lt_file_writer **out, lt_error *err);
/* Schema metadata of the file (key, bytes), written with the descriptor at finish. */
lt_code		lt_file_writer_add_metadata(lt_file_writer *w, const char *key, const uint8_t *value, size_t len,
										lt_error *err);
/* The same for a text value (its bytes without the terminator). */
lt_code		lt_file_writer_add_metadata_text(lt_file_writer *w, const char *key, const char *value, lt_error *err);
/* A global buffer after the descriptor (buffer 0); *index gets its number (1, 2, ...). */
lt_code		lt_file_writer_add_global_buffer(lt_file_writer *w, const uint8_t *data, size_t len, uint32_t *index,
											 lt_error *err);
/* Append n rows: cols[i] is an array of fields[i]'s type with at least n slots (the first n are written). */
lt_code		lt_file_writer_write(lt_file_writer *w, lt_array *const *cols, int64_t n, lt_error *err);
/*
 * Appends without a copy: the writer's own buffer of each field (cols[i] an array of fields[i]'s
 * type), to append rows to directly; then lt_file_writer_advance with the number of rows
 * appended to every one of them since the last call, which encodes the pages that filled.
 * Use instead of lt_file_writer_write (the arrays are the writer's: valid until it is freed).
 */
lt_array  *const *lt_file_writer_buffers(lt_file_writer *w);
lt_code		lt_file_writer_advance(lt_file_writer *w, int64_t n, lt_error *err);
uint64_t	lt_file_writer_rows(const lt_file_writer *w);
/* Bytes written to the store so far plus bytes buffered: for rolling over to a new file. */
uint64_t	lt_file_writer_bytes(const lt_file_writer *w);
/* Flush the last pages, write the column metadata, descriptor and footer; describe the file in *out. */
lt_code		lt_file_writer_finish(lt_file_writer *w, lt_written_file *out, lt_error *err);
/* Free the writer; an unfinished file is removed (best effort). Safe after finish. */
void		lt_file_writer_free(lt_file_writer *w);

/* A fresh Lance-style file name: 24 binary digits + 26 hex digits of a random UUID, then ".lance". */
void		lt_data_file_name(char buf[64]);

/* Storage version string ("2.0", "2.1", "2.2") -> file version; LT_EUNSUPPORTED for "0.1" and unknown. */
lt_code		lt_file_version_for_storage(const char *storage_version, lt_file_version *out, lt_error *err);

#endif
