/*
 * lt_vector_cmd.h — lt-inspect's vector search (lt_vector_cmd.c).
 */
#ifndef LT_VECTOR_CMD_H
#define LT_VECTOR_CMD_H

int			cmd_vector_search(int argc, char **argv);

#endif
