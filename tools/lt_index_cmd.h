/*
 * lt_index_cmd.h — lt-inspect's index commands (lt_index_cmd.c).
 */
#ifndef LT_INDEX_CMD_H
#define LT_INDEX_CMD_H

#include <stdbool.h>

#include "table/lt_dataset.h"

int			cmd_index(lt_dataset *ds);
int			cmd_index_query(lt_dataset *ds, const char *index_name, const char *where, bool use_index,
							bool stats);

int			cmd_index_file(const char *path, bool bits);
int			cmd_create_index(int argc, char **argv);

#endif
