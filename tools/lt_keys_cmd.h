/*
 * lt_keys_cmd.h — lt-inspect's key-filter command (lt_keys_cmd.c).
 */
#ifndef LT_KEYS_CMD_H
#define LT_KEYS_CMD_H

int			cmd_key_filter(int argc, char **argv);

#endif
