/*
 * lt_array.h — typed column vectors with validity, nested like Arrow.
 *
 * One lt_array holds `length` slots of its field's type:
 *   fixed width      values: length * byte_width bytes (bool: one byte 0/1)
 *   utf8/binary      offsets[length + 1] (int64) into data
 *   list/large_list  offsets[length + 1] into children[0]
 *   fixed-size list  children[0] holds length * fixed_size items
 *   map              like a list of its entries struct (children[0])
 *   struct           children[i] has `length` slots each
 * validity is one byte per slot (1 = valid), or NULL when every slot is valid.
 * Null slots of fixed-width types hold zero bytes; null strings/lists are empty.
 *
 * Header room (a utf8/binary array with room = LT_ARRAY_ROOM, only where a reader
 * was asked for it: lt_scan_options.room): each value is preceded by room for a
 * caller's 4-byte header at 4-byte alignment, so that the caller can turn it into
 * its own string in place.  Value i is data[lt_array_room_start(offsets[i]),
 * offsets[i + 1]); an empty slot may instead have no room (offsets[i + 1] ==
 * offsets[i]).  A null slot is not emptied: it may keep room and bytes.  The room and
 * padding bytes are LT_ARRAY_ROOM_FILL.
 *
 * Decoders build arrays by appending; readers copy slices between them.
 */
#ifndef LT_ARRAY_H
#define LT_ARRAY_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "types/lt_schema.h"
#include "util/lt_status.h"

typedef struct lt_array lt_array;

struct lt_array
{
	const lt_field *field;
	int64_t		length;
	int64_t		null_count;
	uint8_t    *validity;
	uint8_t    *values;
	int64_t    *offsets;
	uint8_t    *data;
	int64_t		data_len;
	int			n_children;
	lt_array  **children;		/* a child may be NULL while a struct is partially built */
	/* capacities (in slots / bytes) */
	int64_t		cap;
	int64_t		data_cap;
	uint8_t		room;			/* 0, or LT_ARRAY_ROOM: header room before each string (above) */
	/*
	 * With room: the values (not the room) in data[ascii_start, ascii_end) are known to be plain
	 * ASCII without NUL, as a decoder that knew it said (FSST with an ASCII table); so a caller
	 * need not check them again.  An append that knows its values are such extends the span when it
	 * starts at ascii_end, else makes its own bytes the span; others leave it.  Empty when cleared.
	 */
	int64_t		ascii_start;
	int64_t		ascii_end;
};

#define LT_ARRAY_ROOM 4
/* not NUL, not high-bit: a check of a whole data span for plain ASCII passes over the room */
#define LT_ARRAY_ROOM_FILL 0x01
/* The most bytes of room (padding included) before one value. */
#define LT_ARRAY_ROOM_MAX (LT_ARRAY_ROOM + 3)

/* Where the value after one ending at `end` starts in an array with room. */
static inline int64_t
lt_array_room_start(int64_t end)
{
	return ((end + 3) & ~(int64_t) 3) + LT_ARRAY_ROOM;
}

/*
 * Open the room for the next value at p (data + its offset, 8 bytes of slack past the room
 * reserved): the room and padding are filled, and the value's start returned (aligned by its
 * offset, as lt_array_room_start: the data buffer's own alignment does not matter).
 */
static inline uint8_t *
lt_array_room_open(uint8_t *data, uint8_t *p)
{
	static const uint64_t fill = 0x0101010101010101ull * LT_ARRAY_ROOM_FILL;

	memcpy(p, &fill, 8);
	return data + lt_array_room_start(p - data);
}

/* An empty array of field's type, with its children (recursively). */
lt_code		lt_array_new(const lt_field *field, lt_array **out, lt_error *err);
/*
 * An empty array of the field's own type even for a blob field (whose stored form, and lt_array_new's array,
 * is its descriptor): the bytes a writer is given and stores out of line.
 */
lt_code		lt_array_new_values(const lt_field *field, lt_array **out, lt_error *err);
/* Like lt_array_new but without children; callers attach them. */
lt_code		lt_array_new_shallow(const lt_field *field, lt_array **out, lt_error *err);
void		lt_array_free(lt_array *a);
/* Drop contents (and the header room), keep allocations (children too). */
void		lt_array_clear(lt_array *a);

/* Make room for `extra` more slots (and for var-width, `extra_bytes`). */
lt_code		lt_array_reserve(lt_array *a, int64_t extra, lt_error *err);
lt_code		lt_array_reserve_data(lt_array *a, int64_t extra_bytes, lt_error *err);
/* Materialize the validity bytes (all 1 so far) so that nulls can be set. */
lt_code		lt_array_ensure_validity(lt_array *a, lt_error *err);

/* Append slots [start, start+len) of src (same type) to dst, recursively. */
lt_code		lt_array_append_slice(lt_array *dst, const lt_array *src, int64_t start, int64_t len, lt_error *err);
/* Append the slots src[idx[0]], src[idx[1]], ... (idx ascending or not). */
lt_code		lt_array_append_take(lt_array *dst, const lt_array *src, const int64_t *idx, int64_t n, lt_error *err);
/* Append `n` null slots (recursively consistent: empty lists, zero values). */
lt_code		lt_array_append_nulls(lt_array *dst, int64_t n, lt_error *err);

/* Slot helpers. */
static inline bool lt_array_is_valid(const lt_array *a, int64_t i) { return !a->validity || a->validity[i]; }

/* An integer type every value of which is an int64: int8..int64 and uint8..uint32 (not uint64, bool or dates). */
static inline bool
lt_type_is_int64_exact(lt_type_id t)
{
	switch (t)
	{
		case LT_TYPE_INT8:
		case LT_TYPE_INT16:
		case LT_TYPE_INT32:
		case LT_TYPE_INT64:
		case LT_TYPE_UINT8:
		case LT_TYPE_UINT16:
		case LT_TYPE_UINT32:
			return true;
		default:
			return false;
	}
}

/*
 * Slot i of a fixed-width integer array widened to int64: the types above, and the 32- and 64-bit
 * integers of dates and times (date32, time32 as int32; anything else as 8 bytes).
 */
static inline int64_t
lt_array_int64(const lt_array *a, int64_t i)
{
	const uint8_t *v = a->values;

	switch (a->field->type)
	{
		case LT_TYPE_INT8:
			return ((const int8_t *) v)[i];
		case LT_TYPE_UINT8:
			return v[i];
		case LT_TYPE_INT16:
			{
				int16_t		x;

				memcpy(&x, v + i * 2, 2);
				return x;
			}
		case LT_TYPE_UINT16:
			{
				uint16_t	x;

				memcpy(&x, v + i * 2, 2);
				return x;
			}
		case LT_TYPE_INT32:
		case LT_TYPE_DATE32:
		case LT_TYPE_TIME32:
			{
				int32_t		x;

				memcpy(&x, v + i * 4, 4);
				return x;
			}
		case LT_TYPE_UINT32:
			{
				uint32_t	x;

				memcpy(&x, v + i * 4, 4);
				return x;
			}
		default:
			{
				int64_t		x;

				memcpy(&x, v + i * 8, 8);
				return x;
			}
	}
}

/* Slots [0, n) of such an array into out, as lt_array_int64 (one type dispatch for the batch). */
void		lt_array_int64s(const lt_array *a, int64_t n, int64_t *out);

/* Deep structural comparison; for tests. */
bool		lt_array_equal(const lt_array *a, const lt_array *b);

#endif
