/*
 * Fuzz target: one Lance 2.0 page through the page decoder (lt_enc20).
 *
 * Input: byte 0 picks the target type, byte 1 the row range, bytes 2-3 the
 * length L of a serialized ArrayEncoding that follows; the rest is split
 * into up to three page buffers, each preceded by a u16 length.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "util/lt_bytes.h"
#include "encoding/lt_enc20.h"
#include "proto/lt_enc20.pb-c.h"
#include "proto/lt_file.pb-c.h"
#include "types/lt_schema.h"

static const char *const types[] = {
	"int32", "int64", "bool", "string", "large_binary", "fixed_size_list:int16:3",
	"fixed_size_list:float:2", "dict:string:int8:false", "decimal:128:10:2", "uint8",
	"list", "struct", "fixed_size_binary:4", "double"
};
#define N_TYPES (sizeof(types) / sizeof(types[0]))

static lt_schema *schemas[N_TYPES];

/* A one-field schema for each type (lists hold int32, structs int32 + string). */
static lt_schema *
schema_for(unsigned k)
{
	Lt__Pb__Field f[3];
	Lt__Pb__Field *p[3];
	lt_error	err;
	int			n = 1;

	if (schemas[k])
		return schemas[k];
	for (int i = 0; i < 3; i++)
	{
		Lt__Pb__Field x = LT__PB__FIELD__INIT;

		x.has_id = x.has_parent_id = x.has_nullable = true;
		x.id = i;
		x.parent_id = i == 0 ? -1 : 0;
		x.nullable = true;
		x.name = (char *) (i == 0 ? "f" : i == 1 ? "a" : "b");
		f[i] = x;
		p[i] = &f[i];
	}
	f[0].logical_type = (char *) types[k];
	if (strcmp(types[k], "list") == 0)
	{
		f[1].logical_type = (char *) "int32";
		n = 2;
	}
	else if (strcmp(types[k], "struct") == 0)
	{
		f[1].logical_type = (char *) "int32";
		f[2].logical_type = (char *) "string";
		n = 3;
	}
	if (lt_schema_from_pb(p, (size_t) n, &schemas[k], &err) != LT_OK)
		schemas[k] = NULL;
	return schemas[k];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_cursor	c = lt_cursor_make(data, size);
	const uint8_t *hdr,
			   *encb,
			   *bufs[3];
	uint64_t	lens[3];
	uint16_t	elen;
	Lt__Enc20__ArrayEncoding *enc;
	lt_schema  *s;
	const lt_field *field;
	lt_enc20_page pg;
	lt_array   *a;
	lt_error	err;
	uint32_t	nb = 0;
	uint64_t	rows,
				skip,
				n;

	if (!lt_cursor_take(&c, 2, &hdr) || !lt_cursor_u16(&c, &elen) || !lt_cursor_take(&c, elen, &encb))
		return 0;
	while (nb < 3)
	{
		uint16_t	bl;

		if (!lt_cursor_u16(&c, &bl) || !lt_cursor_take(&c, bl, &bufs[nb]))
			break;
		lens[nb++] = bl;
	}
	s = schema_for(hdr[0] % N_TYPES);
	if (!s)
		return 0;
	field = s->fields[0];
	enc = lt__enc20__array_encoding__unpack(lt_protobuf_allocator(), elen, encb);
	if (!enc)
		return 0;
	rows = 1 + (hdr[1] & 0x3f) * 17;
	skip = (hdr[1] >> 6) * (rows / 4);
	n = rows - skip;
	memset(&pg, 0, sizeof(pg));
	pg.path = "fuzz.lance";
	pg.n_bufs = nb;
	pg.bufs = bufs;
	pg.lens = lens;
	pg.num_rows = rows;
	if (lt_array_new(field, &a, &err) == LT_OK)
	{
		if (field->type == LT_TYPE_LIST)
		{
			if (enc->array_encoding_case == LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST)
			{
				uint64_t	lo,
							hi;

				lt_enc20_list_offsets(&pg, enc->list, skip, n, a, &lo, &hi, &err);
			}
		}
		else
		{
			/* twice: the second call reuses cached dictionaries and buffers */
			if (lt_enc20_decode(&pg, enc, field, skip, n, a, &err) == LT_OK)
				lt_enc20_decode(&pg, enc, field, 0, rows, a, &err);
		}
		lt_array_free(a);
	}
	lt_enc20_page_reset(&pg);
	lt__enc20__array_encoding__free_unpacked(enc, lt_protobuf_allocator());
	return 0;
}
