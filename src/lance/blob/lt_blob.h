/*
 * lt_blob.h — blob columns: where a blob's bytes are, from the descriptor its column stores, and reading them.
 *
 * Lance keeps a blob column's bytes out of line and stores a descriptor per row (lt_field_storage gives its
 * struct).  Legacy blobs (storage 2.0/2.1) point into the row's own data file; blob v2 (2.2+) says by its kind
 * whether the bytes sit in the data file (inline), in a packed or dedicated sidecar file beside it
 * (data/<data file stem>/<blob id as 32 bits, least significant first>.blob), or behind an external URI.
 * Nothing here reads a descriptor's bytes before it is asked to, so a scan pays only for the rows it returns.
 */
#ifndef LT_BLOB_H
#define LT_BLOB_H

#include <stdbool.h>
#include <stdint.h>

#include "io/lt_store.h"
#include "types/lt_array.h"
#include "types/lt_schema.h"
#include "util/lt_status.h"

typedef struct lt_blob_loc
{
	bool		is_null;
	bool		external;		/* path is an external URI: lt_blob_external_path resolves it */
	uint32_t	base_id;		/* external: the base path it is relative to (0: an absolute URI) */
	char	   *path;			/* the file holding the bytes (relative to the dataset; owned, lt_free) */
	uint64_t	offset;
	uint64_t	length;
} lt_blob_loc;

/*
 * Where row i of a blob column's descriptor array `desc` (of form `form`) keeps its bytes; data_file is the
 * path of the row's data file relative to the dataset ("data/x.lance").  A NULL blob gives is_null and no path;
 * an external blob gives external and its URI as path.
 */
lt_code		lt_blob_locate(lt_blob_form form, const lt_array *desc, int64_t i, const char *data_file,
						   lt_blob_loc *out, lt_error *err);

/*
 * An external blob's URI as a path of the store rooted at store_root ("/srv/lake", "s3://bucket/prefix"): only
 * a URI under that root is read ("file:///srv/lake/..." or "/srv/lake/...", "s3://bucket/prefix/..."), never
 * another path or host, nor one with "." or ".." segments; anything else, and a URI relative to a base path of
 * the dataset (base_id other than 0), is LT_EUNSUPPORTED naming it.  *out is lt_malloc'd.
 */
lt_code		lt_blob_external_path(const char *store_root, const lt_blob_loc *loc, char **out, lt_error *err);

/* The blob's size without reading it (0 for NULL). */
lt_code		lt_blob_size(lt_blob_form form, const lt_array *desc, int64_t i, bool *is_null, uint64_t *size,
						 lt_error *err);

/*
 * Read the located bytes into dst (loc->length bytes) from `path` (the store path of loc->path), in pieces that
 * answer cancel; a file shorter than the descriptor says is corrupt data.
 */
lt_code		lt_blob_read(lt_store *store, const char *path, const lt_blob_loc *loc, uint8_t *dst, lt_error *err);

void		lt_blob_loc_clear(lt_blob_loc *loc);

#endif
