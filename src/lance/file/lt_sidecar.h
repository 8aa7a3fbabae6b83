/*
 * lt_sidecar.h — blob v2 sidecar files: where Lance keeps a data file's packed and dedicated blobs.
 *
 * A data file "data/<stem>.lance" keeps them beside it in the folder "data/<stem>/", one file per blob id,
 * named by the id's 32 bits written least significant first ("10000000000000000000000000000000.blob" is id 1),
 * raw bytes without header or footer: the descriptors give every position and size.
 */
#ifndef LT_SIDECAR_H
#define LT_SIDECAR_H

#include <stdbool.h>
#include <stdint.h>

/* "data/x.lance" (any prefix) -> "data/x/<id bits>.blob", lt_malloc'd (NULL: out of memory). */
char	   *lt_blob_sidecar_path(const char *data_file, uint32_t blob_id);

/* A sidecar's file name ("<32 binary digits>.blob") to its blob id; false for any other name. */
bool		lt_blob_sidecar_id(const char *name, uint32_t *blob_id);

#endif
