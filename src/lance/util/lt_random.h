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
/*
 * splitmix64: the next value of a small seedable generator whose state is *state (for work that must
 * repeat itself given its seed: the vector index builds).
 */
uint64_t	lt_splitmix64(uint64_t *state);
/*
 * A uniform sample of m of 0..n-1 without repetition (m <= n): the first m entries of idx (n entries) after the
 * first m steps of a Fisher-Yates shuffle drawn from lt_splitmix64(state).
 */
void		lt_sample_indices(int64_t *idx, int64_t n, int64_t m, uint64_t *state);
/* A version-4 UUID: its 16 bytes and, if text is not NULL, the hyphenated lowercase form (37 bytes with NUL). */
void		lt_uuid_v4(uint8_t bytes[16], char *text);

#endif
