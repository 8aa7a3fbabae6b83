/*
 * lt_rq_remap.h — a compaction's remap of an IVF_RQ segment (implemented in lt_rq_remap.c), as the engine's
 * RabitQuantizationStorage::remap does: every stored row kept in its partition with its code and factors,
 * its row id replaced by map's answer (false: the row is gone and dropped), the codes packed again
 * per partition (lt_rq_pack), the centroids, rotation and every other column and the storage metadata
 * kept; index.idx (the flat sub-index: no rows) copied.  Same contract as lt_ivf_remap (lt_ivf_build.h):
 * LT_EUNSUPPORTED for a segment that is not IVF_RQ in the form lt_rq.h reads, files removed on error.
 */
#ifndef LT_RQ_REMAP_H
#define LT_RQ_REMAP_H

#include "vector/lt_ivf_build.h"

lt_code		lt_rq_remap(lt_dataset *ds, const lt_field *column, const char *name, const char *old_dir,
						lt_ivf_remap_fn map, void *arg, lt_built_index *out, lt_error *err);

#endif
