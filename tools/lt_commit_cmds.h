/*
 * lt_commit_cmds.h — lt-inspect's committing commands (append, delete, update),
 * for tests of the write path before and besides the SQL one.
 */
#ifndef LT_COMMIT_CMDS_H
#define LT_COMMIT_CMDS_H

#include <stdbool.h>

/* True when cmd is one of them. */
bool		lt_is_commit_cmd(const char *cmd);
/* Run `lt-inspect <cmd> DIR ...` (argv[0] is the command, argv[1] DIR); returns the exit code. */
int			lt_commit_cmd(int argc, char **argv);

#endif
