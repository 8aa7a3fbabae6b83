/*
 * lt_random.h — random bytes for file names and ids (UUIDs, deletion-file ids).
 *
 * From getrandom(2); collisions matter (two writers must never pick the same
 * file name), predictability does not.
 */
#ifndef LT_RANDOM_H
#define LT_RANDOM_H

#include <stddef.h>
#include <stdint.h>

void		lt_random_bytes(void *dst, size_t n);
uint64_t	lt_random_u64(void);
/* A version-4 UUID: its 16 bytes and, if text is not NULL, the hyphenated lowercase form (37 bytes with NUL). */
void		lt_uuid_v4(uint8_t bytes[16], char *text);

#endif
