/*
 * fuzz_page21.c — libFuzzer target for the Lance 2.1+ page decoder.
 *
 * Input: u8 field kind (low 7 bits; the high bit asks for lazy decoding),
 * u16 LE layout length, a serialized PageLayout protobuf, u16 LE row count,
 * u8 buffer count (<= 4), then for each buffer a u32 LE length and its bytes
 * (cut short at the end of the input).  The page is decoded as a leaf of the
 * chosen kind, then read back in two slices; then the window of one row
 * is planned from the page's index bytes and decoded from a copy of its bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "types/lt_array.h"
#include "util/lt_bytes.h"
#include "encoding/lt_enc21.h"
#include "proto/lt_enc21.pb-c.h"

static lt_field f_i32 = {.id = 1, .name = "i32", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
static lt_field f_u64 = {.id = 1, .name = "u64", .type = LT_TYPE_UINT64, .byte_width = 8, .nullable = true};
static lt_field f_bool = {.id = 1, .name = "b", .type = LT_TYPE_BOOL, .byte_width = 1, .nullable = true};
static lt_field f_str = {.id = 1, .name = "s", .type = LT_TYPE_UTF8, .nullable = true};
static lt_field f_lbin = {.id = 1, .name = "lb", .type = LT_TYPE_LARGE_BINARY, .nullable = true};
static lt_field f_item = {.id = -1, .name = "item", .type = LT_TYPE_FLOAT32, .byte_width = 4, .nullable = true};
static lt_field *fsl_children[] = {&f_item};
static lt_field f_fsl = {.id = 1, .name = "vec", .type = LT_TYPE_FIXED_LIST, .fixed_size = 2,
	.n_children = 1, .children = fsl_children, .nullable = true};
static lt_field f_li = {.id = 2, .name = "item", .type = LT_TYPE_INT64, .byte_width = 8, .nullable = true};
static lt_field *list_children[] = {&f_li};
static lt_field f_list = {.id = 1, .name = "l", .type = LT_TYPE_LIST, .n_children = 1,
	.children = list_children, .nullable = true};
static lt_field f_ls = {.id = 3, .name = "item", .type = LT_TYPE_UTF8, .nullable = true};
static lt_field *inner_children[] = {&f_ls};
static lt_field f_inner = {.id = 2, .name = "item", .type = LT_TYPE_LIST, .n_children = 1,
	.children = inner_children, .nullable = true};
static lt_field *outer_children[] = {&f_inner};
static lt_field f_outer = {.id = 1, .name = "ll", .type = LT_TYPE_LIST, .n_children = 1,
	.children = outer_children, .nullable = true};
static lt_field f_sx = {.id = 2, .name = "x", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
static lt_field *struct_children[] = {&f_sx};
static lt_field f_struct = {.id = 1, .name = "st", .type = LT_TYPE_STRUCT, .n_children = 1,
	.children = struct_children, .nullable = true};
/* packed struct<a: int32, s: utf8, v: fsl<float32, 2>, b: int64> and a list of it */
static lt_field f_pa = {.id = 2, .name = "a", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
static lt_field f_ps = {.id = 3, .name = "s", .type = LT_TYPE_UTF8, .nullable = true};
static lt_field f_pb = {.id = 4, .name = "b", .type = LT_TYPE_INT64, .byte_width = 8, .nullable = true};
static lt_field *packed_children[] = {&f_pa, &f_ps, &f_fsl, &f_pb};
static lt_field f_packed = {.id = 1, .name = "p", .type = LT_TYPE_STRUCT, .n_children = 4,
	.children = packed_children, .nullable = true};
static lt_field *fixed_packed_children[] = {&f_pa, &f_pb};
static lt_field f_fpacked = {.id = 5, .name = "item", .type = LT_TYPE_STRUCT, .n_children = 2,
	.children = fixed_packed_children, .nullable = true};
static lt_field *plist_children[] = {&f_fpacked};
static lt_field f_plist = {.id = 6, .name = "pl", .type = LT_TYPE_LIST, .n_children = 1,
	.children = plist_children, .nullable = true};
/* fixed_size_list<struct<x: int32>, 3> and map<utf8, int32> (2.2+) */
static lt_field *fs_struct_children[] = {&f_struct};
static lt_field f_fsstruct = {.id = 7, .name = "fs", .type = LT_TYPE_FIXED_LIST, .fixed_size = 3, .n_children = 1,
	.children = fs_struct_children, .nullable = true};
static lt_field f_mkey = {.id = 9, .name = "key", .type = LT_TYPE_UTF8};
static lt_field f_mval = {.id = 10, .name = "value", .type = LT_TYPE_INT32, .byte_width = 4, .nullable = true};
static lt_field *entries_children[] = {&f_mkey, &f_mval};
static lt_field f_entries = {.id = 8, .name = "entries", .type = LT_TYPE_STRUCT, .n_children = 2,
	.children = entries_children};
static lt_field *map_children[] = {&f_entries};
static lt_field f_map = {.id = 7, .name = "m", .type = LT_TYPE_MAP, .n_children = 1, .children = map_children,
	.nullable = true};

/* top-level field and its leaf, by kind */
static const struct
{
	lt_field   *top;
	lt_field   *leaf;
}			kinds[] = {
	{&f_i32, &f_i32}, {&f_u64, &f_u64}, {&f_bool, &f_bool}, {&f_str, &f_str}, {&f_lbin, &f_lbin},
	{&f_fsl, &f_fsl}, {&f_list, &f_li}, {&f_outer, &f_ls}, {&f_struct, &f_sx},
	{&f_packed, &f_packed}, {&f_fpacked, &f_fpacked}, {&f_plist, &f_fpacked},
	{&f_fsstruct, &f_sx}, {&f_map, &f_mkey},
};

static void
read_back(lt21_page *pg, const lt_field *top, const lt_field *leaf)
{
	lt_array   *a = NULL;
	lt_array   *nodes[8];
	int			depth = 1;
	lt21_where	w = {"fuzz", 0, 0};
	lt_error	err;
	uint64_t	half = pg->num_rows / 2;

	if (lt_array_new(top, &a, &err) != LT_OK)
		return;
	nodes[0] = a;
	while (nodes[depth - 1]->field != leaf && nodes[depth - 1]->n_children > 0 && depth < 8)
	{
		nodes[depth] = nodes[depth - 1]->children[0];
		depth++;
	}
	if (lt21_page_append(&w, pg, nodes, depth, 0, half, pg->num_rows - half, &err) == LT_OK)
		(void) lt21_page_append(&w, pg, nodes, depth, 0, 0, half, &err);
	lt_array_free(a);
}


/* Random access: plan the window of one row from the page's index bytes and decode it from copies of its bytes. */
static void
window(const Lt__Enc21__PageLayout *layout, const lt_field *top, const lt_field *leaf, uint64_t rows, int nb,
	   const uint8_t *const *bp, const uint64_t *bl)
{
	lt21_where	w = {"fuzz", 0, 0};
	lt_error	err;
	lt21_window win;
	const uint8_t *p[4];
	uint64_t	len[4];
	lt21_bufs	b = {0, p, len, true};
	uint8_t    *copy = NULL;
	lt21_page  *pg = NULL;
	uint64_t	r0 = rows / 3;

	if (layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT && nb >= 2)
	{
		lt21_chunks ck = {0};
		bool		usable = false;
		int			dict_buf,
					index_buf;

		lt21_mb_buffers(layout->mini_block_layout, nb, &dict_buf, &index_buf);
		if (index_buf >= 0 && bl[index_buf] < (bl[0] / 2) * 16)
			return;				/* the caller reads whole buffers: a short one is cut input */
		if (lt21_mb_chunks(&w, layout->mini_block_layout, rows, nb, bl, bp[0], index_buf >= 0 ? bp[index_buf] : NULL,
						   &ck, &usable, &err) != LT_OK || !usable || ck.n == 0)
		{
			lt21_chunks_free(&ck);
			return;
		}
		lt21_mb_window(&ck, r0, r0 + 1, &win);
		lt21_chunks_free(&ck);
		copy = lt_malloc(win.len + 1);
		if (!copy)
			return;
		memcpy(copy, bp[1] + win.off, win.len);
		p[0] = bp[0];
		len[0] = bl[0];
		p[1] = copy;
		len[1] = win.len;
		b.n = 2;
		if (dict_buf >= 0)
		{
			p[2] = bp[dict_buf];
			len[2] = bl[dict_buf];
			b.n = 3;
		}
	}
	else if (layout->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT && nb >= 1)
	{
		if (lt21_fz_window(&w, layout->full_zip_layout, rows, nb, bl, NULL, r0, r0 + 1, &win, &err) != LT_OK)
			return;
		if (win.need_index &&
			lt21_fz_window(&w, layout->full_zip_layout, rows, nb, bl, bp[1] + win.off, r0, r0 + 1, &win, &err) != LT_OK)
			return;
		if (win.buf != 0)
			return;
		copy = lt_malloc(win.len + 1);
		if (!copy)
			return;
		memcpy(copy, bp[0] + win.off, win.len);
		p[0] = copy;
		len[0] = win.len;
		b.n = 1;
	}
	else
		return;
	if (lt21_page_decode_window(&w, leaf, layout, &win, &b, &pg, &err) == LT_OK)
	{
		read_back(pg, top, leaf);
		lt21_page_free(pg);
	}
	lt_free(copy);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lt_cursor	c = lt_cursor_make(data, size);
	const uint8_t *kind_p,
			   *layout_p;
	uint16_t	layout_len,
				rows;
	const uint8_t *nb_p;
	const uint8_t *bp[4];
	uint64_t	bl[4];
	int			nb;
	Lt__Enc21__PageLayout *layout;
	lt21_bufs	bufs;
	lt21_page  *pg = NULL;
	lt21_where	w = {"fuzz", 0, 0};
	lt_error	err;
	int			k;

	if (!lt_cursor_take(&c, 1, &kind_p) || !lt_cursor_u16(&c, &layout_len) ||
		!lt_cursor_take(&c, layout_len, &layout_p) || !lt_cursor_u16(&c, &rows) ||
		!lt_cursor_take(&c, 1, &nb_p))
		return 0;
	k = (kind_p[0] & 0x7f) % (int) (sizeof(kinds) / sizeof(kinds[0]));
	nb = nb_p[0] % 5;
	for (int i = 0; i < nb; i++)
	{
		uint32_t	len = 0;
		size_t		left;

		if (!lt_cursor_u32(&c, &len))
			len = 0;
		left = lt_cursor_left(&c);
		if (len > left)
			len = (uint32_t) left;
		(void) lt_cursor_take(&c, len, &bp[i]);
		bl[i] = len;
	}
	layout = lt__enc21__page_layout__unpack(lt_protobuf_allocator(), layout_len, layout_p);
	if (!layout)
		return 0;
	bufs.n = nb;
	bufs.p = bp;
	bufs.len = bl;
	bufs.stable = (kind_p[0] & 0x80) != 0;
	if (lt21_page_decode(&w, kinds[k].leaf, layout, rows, &bufs, &pg, &err) == LT_OK)
	{
		read_back(pg, kinds[k].top, kinds[k].leaf);
		lt21_page_free(pg);
		pg = NULL;
	}
	if (rows > 0)
		window(layout, kinds[k].top, kinds[k].leaf, rows, nb, bp, bl);
	lt__enc21__page_layout__free_unpacked(layout, lt_protobuf_allocator());
	return 0;
}
