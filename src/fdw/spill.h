/*
 * spill.h — the library's temporary files (lt_spill.h) as PostgreSQL's BufFiles: under temp_tablespaces,
 * counted by temp_file_limit and log_temp_files, removed at abort by the resource owner.
 */
#ifndef LT_FDW_SPILL_H
#define LT_FDW_SPILL_H

#include "util/lt_spill.h"

const lt_spill_ops *lt_fdw_spill_ops(void);

#endif
