/*
 * lt_bytes.h — bounds-checked little-endian reads from untrusted buffers.
 */
#ifndef LT_BYTES_H
#define LT_BYTES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t lt_le16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t lt_le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t lt_le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void lt_put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void lt_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void lt_put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/*
 * How many leading bytes a and b (n each) share: memcmp over large blocks, then halving the block that
 * differs, so that long equal runs cost what memcmp costs (not a loop per byte).
 */
static inline uint64_t
lt_common_prefix(const uint8_t *a, const uint8_t *b, uint64_t n)
{
	uint64_t	at = 0,
				step = 16384;

	while (n - at >= step && memcmp(a + at, b + at, step) == 0)
		at += step;
	if (n - at < step)
		step = n - at;
	while (step > 32)
	{
		uint64_t	half = step / 2;

		if (memcmp(a + at, b + at, half) == 0)
		{
			at += half;
			step -= half;
		}
		else
			step = half;
	}
	for (uint64_t end = at + step; at < end && a[at] == b[at];)
		at++;
	return at;
}

/* A read cursor; every take fails (returns false) instead of running past len. */
typedef struct lt_cursor
{
	const uint8_t *p;
	size_t		len;
	size_t		pos;
} lt_cursor;

static inline lt_cursor lt_cursor_make(const uint8_t *p, size_t len) { lt_cursor c = {p, len, 0}; return c; }
static inline size_t lt_cursor_left(const lt_cursor *c) { return c->len - c->pos; }

static inline bool
lt_cursor_take(lt_cursor *c, size_t n, const uint8_t **out)
{
	if (n > c->len - c->pos)
		return false;
	*out = c->p + c->pos;
	c->pos += n;
	return true;
}

static inline bool lt_cursor_u16(lt_cursor *c, uint16_t *v) { const uint8_t *p; if (!lt_cursor_take(c, 2, &p)) return false; *v = lt_le16(p); return true; }
static inline bool lt_cursor_u32(lt_cursor *c, uint32_t *v) { const uint8_t *p; if (!lt_cursor_take(c, 4, &p)) return false; *v = lt_le32(p); return true; }
static inline bool lt_cursor_u64(lt_cursor *c, uint64_t *v) { const uint8_t *p; if (!lt_cursor_take(c, 8, &p)) return false; *v = lt_le64(p); return true; }

/* Skip to the next multiple of `align` (a power of two) from the buffer start. */
static inline bool
lt_cursor_align(lt_cursor *c, size_t align)
{
	size_t		next = (c->pos + align - 1) & ~(align - 1);

	if (next > c->len)
		return false;
	c->pos = next;
	return true;
}

/* a + b and a * b without wrapping; false on overflow. */
static inline bool lt_add_ok(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool lt_mul_ok(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_mul_overflow(a, b, r); }

#endif
