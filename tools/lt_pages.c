/*
 * lt_pages.c — page encoding report for lt-inspect.
 */
#include "lt_pages.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "proto/lt_enc20.pb-c.h"
#include "proto/lt_enc21.pb-c.h"
#include "file/lt_file.h"
#include "proto/lt_file2.pb-c.h"
#include "lt_json.h"
#include "proto/lt_table.pb-c.h"

/* A small sorted set of names. */
typedef struct names
{
	const char *v[48];
	int			n;
} names;

static void
add(names *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return;
	if (s->n < (int) (sizeof(s->v) / sizeof(s->v[0])))
		s->v[s->n++] = name;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static void
print_names(names *s)
{
	qsort(s->v, s->n, sizeof(s->v[0]), cmp_str);
	putchar('[');
	for (int i = 0; i < s->n; i++)
		printf("%s\"%s\"", i ? "," : "", s->v[i]);
	putchar(']');
}

/* --- 2.1+ ------------------------------------------------------------------ */

static const char *
ce_name(const Lt__Enc21__CompressiveEncoding *e)
{
	switch (e->compression_case)
	{
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT: return "flat";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE: return "variable";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_CONSTANT: return "constant";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_OUT_OF_LINE_BITPACKING: return "out_of_line_bitpacking";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_INLINE_BITPACKING: return "inline_bitpacking";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FSST: return "fsst";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_DICTIONARY: return "dictionary";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_RLE: return "rle";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_BYTE_STREAM_SPLIT: return "byte_stream_split";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL: return "general";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST: return "fixed_size_list";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_PACKED_STRUCT: return "packed_struct";
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT: return "variable_packed_struct";
		default: return "unknown";
	}
}

static void
add_scheme(names *s, const Lt__Enc21__BufferCompression *c)
{
	if (!c || !c->has_scheme)
		return;
	if (c->scheme == LT__ENC21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_LZ4)
		add(s, "lz4");
	else if (c->scheme == LT__ENC21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_ZSTD)
		add(s, "zstd");
}

static void
walk21(names *s, const Lt__Enc21__CompressiveEncoding *e, int depth)
{
	if (!e || depth > 32)
		return;
	add(s, ce_name(e));
	switch (e->compression_case)
	{
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FLAT:
			add_scheme(s, e->flat->data);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE:
			walk21(s, e->variable->offsets, depth + 1);
			add_scheme(s, e->variable->values);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_INLINE_BITPACKING:
			add_scheme(s, e->inline_bitpacking->values);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_OUT_OF_LINE_BITPACKING:
			walk21(s, e->out_of_line_bitpacking->values, depth + 1);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FSST:
			walk21(s, e->fsst->values, depth + 1);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_DICTIONARY:
			walk21(s, e->dictionary->indices, depth + 1);
			walk21(s, e->dictionary->items, depth + 1);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_RLE:
			walk21(s, e->rle->values, depth + 1);
			walk21(s, e->rle->run_lengths, depth + 1);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_BYTE_STREAM_SPLIT:
			walk21(s, e->byte_stream_split->values, depth + 1);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_GENERAL:
			walk21(s, e->general->values, depth + 1);
			add_scheme(s, e->general->compression);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_FIXED_SIZE_LIST:
			walk21(s, e->fixed_size_list->values, depth + 1);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_PACKED_STRUCT:
			walk21(s, e->packed_struct->values, depth + 1);
			break;
		case LT__ENC21__COMPRESSIVE_ENCODING__COMPRESSION_VARIABLE_PACKED_STRUCT:
			for (size_t i = 0; i < e->variable_packed_struct->n_fields; i++)
				walk21(s, e->variable_packed_struct->fields[i]->value, depth + 1);
			break;
		default:
			break;
	}
}

static const char *
layer_name(int l)
{
	static const char *n[] = {"unspecified", "all_valid_item", "all_valid_list", "nullable_item",
	"nullable_list", "emptyable_list", "null_and_empty_list"};

	return (l >= 0 && l <= 6) ? n[l] : "unknown";
}

static void
print_layers(size_t n, const Lt__Enc21__RepDefLayer *layers)
{
	putchar('[');
	for (size_t i = 0; i < n; i++)
		printf("%s\"%s\"", i ? "," : "", layer_name(layers[i]));
	putchar(']');
}

/* Print layout, compression, encodings, repdef and layers of a 2.1+ page layout. */
static void
describe21(const Lt__Enc21__PageLayout *pl, int depth)
{
	names		enc = {0}, rd = {0};

	if (!pl || depth > 4)
	{
		printf(",\"layout\":\"unknown\",\"compression\":null,\"encodings\":[],\"repdef\":[],\"layers\":[]");
		return;
	}
	switch (pl->layout_case)
	{
		case LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT:
			{
				const Lt__Enc21__MiniBlockLayout *mb = pl->mini_block_layout;

				walk21(&enc, mb->value_compression, 0);
				if (mb->dictionary)
				{
					walk21(&enc, mb->dictionary, 0);
					add(&enc, "dictionary");
				}
				walk21(&rd, mb->rep_compression, 0);
				walk21(&rd, mb->def_compression, 0);
				printf(",\"layout\":\"miniblock\",\"compression\":\"%s\"",
					   mb->dictionary ? "dictionary" : mb->value_compression ? ce_name(mb->value_compression) : "none");
				printf(",\"encodings\":");
				print_names(&enc);
				printf(",\"repdef\":");
				print_names(&rd);
				printf(",\"layers\":");
				print_layers(mb->n_layers, mb->layers);
				break;
			}
		case LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT:
			{
				const Lt__Enc21__FullZipLayout *fz = pl->full_zip_layout;

				walk21(&enc, fz->value_compression, 0);
				printf(",\"layout\":\"fullzip\",\"compression\":\"%s\"",
					   fz->value_compression ? ce_name(fz->value_compression) : "none");
				printf(",\"encodings\":");
				print_names(&enc);
				printf(",\"repdef\":[],\"layers\":");
				print_layers(fz->n_layers, fz->layers);
				break;
			}
		case LT__ENC21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT:
			{
				const Lt__Enc21__ConstantLayout *cl = pl->constant_layout;

				walk21(&rd, cl->rep_compression, 0);
				walk21(&rd, cl->def_compression, 0);
				printf(",\"layout\":\"constant\",\"compression\":\"%s\",\"encodings\":[],\"repdef\":",
					   cl->has_inline_value ? "inline_value" : "none");
				print_names(&rd);
				printf(",\"layers\":");
				print_layers(cl->n_layers, cl->layers);
				break;
			}
		case LT__ENC21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT:
			printf(",\"layout\":\"blob\"");
			/* the inner layout supplies the rest; its "layout" key is renamed compression */
			{
				const Lt__Enc21__PageLayout *in = pl->blob_layout->inner_layout;
				const char *inner = !in ? "none"
					: in->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT ? "miniblock"
					: in->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT ? "fullzip"
					: in->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT ? "constant" : "unknown";

				printf(",\"compression\":\"%s\"", inner);
				if (in && in->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT)
				{
					walk21(&enc, in->mini_block_layout->value_compression, 0);
					walk21(&rd, in->mini_block_layout->rep_compression, 0);
					walk21(&rd, in->mini_block_layout->def_compression, 0);
				}
				else if (in && in->layout_case == LT__ENC21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT)
					walk21(&enc, in->full_zip_layout->value_compression, 0);
				printf(",\"encodings\":");
				print_names(&enc);
				printf(",\"repdef\":");
				print_names(&rd);
				printf(",\"layers\":");
				print_layers(pl->blob_layout->n_layers, pl->blob_layout->layers);
			}
			break;
		default:
			printf(",\"layout\":\"unknown\",\"compression\":null,\"encodings\":[],\"repdef\":[],\"layers\":[]");
	}
}

/* --- 2.0 ------------------------------------------------------------------- */

static const char *
ae_name(const Lt__Enc20__ArrayEncoding *e)
{
	switch (e->array_encoding_case)
	{
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT: return "flat";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE: return "nullable";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST: return "fixed_size_list";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST: return "list";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_STRUCT: return "struct";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BINARY: return "binary";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY: return "dictionary";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FSST: return "fsst";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT: return "packed_struct";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED: return "bitpacked";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_BINARY: return "fixed_size_binary";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BITPACKED_FOR_NON_NEG: return "bitpacked_for_non_neg";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_CONSTANT: return "constant";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_INLINE_BITPACKING: return "inline_bitpacking";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_OUT_OF_LINE_BITPACKING: return "out_of_line_bitpacking";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_VARIABLE: return "variable";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT_FIXED_WIDTH_MINI_BLOCK: return "packed_struct_fixed_width_mini_block";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BLOCK: return "block";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_RLE: return "rle";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_GENERAL_MINI_BLOCK: return "general_mini_block";
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BYTE_STREAM_SPLIT: return "byte_stream_split";
		default: return "unknown";
	}
}

static void walk20(names *s, names *rd, const Lt__Enc20__ArrayEncoding *e, int depth);

/* The walk below a nullable: validity goes to repdef. */
static const Lt__Enc20__ArrayEncoding *
below_nullable(const Lt__Enc20__ArrayEncoding *e, names *rd, bool *all_null, int depth)
{
	while (e && e->array_encoding_case == LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_NULLABLE && depth++ < 32)
	{
		const Lt__Enc20__Nullable *n = e->nullable;

		if (n->nullability_case == LT__ENC20__NULLABLE__NULLABILITY_NO_NULLS)
			e = n->no_nulls->values;
		else if (n->nullability_case == LT__ENC20__NULLABLE__NULLABILITY_SOME_NULLS)
		{
			names		ignored = {0};

			walk20(rd, &ignored, n->some_nulls->validity, depth);
			e = n->some_nulls->values;
		}
		else
		{
			*all_null = true;
			return NULL;
		}
	}
	return e;
}

static void
walk20(names *s, names *rd, const Lt__Enc20__ArrayEncoding *e, int depth)
{
	bool		all_null = false;

	e = below_nullable(e, rd, &all_null, depth);
	if (!e || depth > 32)
		return;
	add(s, ae_name(e));
	switch (e->array_encoding_case)
	{
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FLAT:
			if (e->flat->compression && e->flat->compression->scheme && e->flat->compression->scheme[0])
				add(s, e->flat->compression->scheme);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_LIST:
			walk20(s, rd, e->fixed_size_list->items, depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_LIST:
			walk20(s, rd, e->list->offsets, depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BINARY:
			walk20(s, rd, e->binary->indices, depth + 1);
			walk20(s, rd, e->binary->bytes, depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_DICTIONARY:
			walk20(s, rd, e->dictionary->indices, depth + 1);
			walk20(s, rd, e->dictionary->items, depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FSST:
			walk20(s, rd, e->fsst->binary, depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT:
			for (size_t i = 0; i < e->packed_struct->n_inner; i++)
				walk20(s, rd, e->packed_struct->inner[i], depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_FIXED_SIZE_BINARY:
			walk20(s, rd, e->fixed_size_binary->bytes, depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_PACKED_STRUCT_FIXED_WIDTH_MINI_BLOCK:
			walk20(s, rd, e->packed_struct_fixed_width_mini_block->flat, depth + 1);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_GENERAL_MINI_BLOCK:
			walk20(s, rd, e->general_mini_block->inner, depth + 1);
			if (e->general_mini_block->compression && e->general_mini_block->compression->scheme &&
				e->general_mini_block->compression->scheme[0])
				add(s, e->general_mini_block->compression->scheme);
			break;
		case LT__ENC20__ARRAY_ENCODING__ARRAY_ENCODING_BLOCK:
			if (e->block->scheme && e->block->scheme[0])
				add(s, e->block->scheme);
			break;
		default:
			break;
	}
}

static void
describe20(const Lt__Enc20__ArrayEncoding *ae)
{
	names		enc = {0}, rd = {0};
	bool		all_null = false;
	const Lt__Enc20__ArrayEncoding *top = below_nullable(ae, &rd, &all_null, 0);

	rd.n = 0;					/* below_nullable filled rd; the walk below refills it */
	walk20(&enc, &rd, ae, 0);
	printf(",\"layout\":\"v2.0\",\"compression\":");
	if (all_null)
		printf("\"all_null\"");
	else if (top)
		printf("\"%s\"", ae_name(top));
	else
		printf("null");
	printf(",\"encodings\":");
	print_names(&enc);
	printf(",\"repdef\":");
	print_names(&rd);
	printf(",\"layers\":[]");
}

/* --- driver ---------------------------------------------------------------- */

/* "st.x": names from the top-level field down (empty when the id left the schema). */
static void
print_path(const lt_schema *s, int32_t id)
{
	const lt_field *chain[64];
	int			n = 0;
	const lt_field *f = lt_schema_find_id(s, id);

	for (; f && n < 64; f = f->parent)
		chain[n++] = f;
	putchar('"');
	for (int i = n - 1; i >= 0; i--)
	{
		char	   *buf = NULL;
		size_t		len = 0;
		FILE	   *mem = open_memstream(&buf, &len);

		json_string(mem, chain[i]->name, strlen(chain[i]->name));
		fclose(mem);
		/* strip the quotes json_string added */
		printf("%s%.*s", i == n - 1 ? "" : ".", (int) (len - 2), buf + 1);
		free(buf);
	}
	putchar('"');
}

static void
describe_page(const lt_file *f, const Lt__Pb__ColumnPage *pg)
{
	Lt__Pb__PbAny *any = NULL;

	if (pg->encoding && pg->encoding->location_case == LT__PB__ENCODING_REF__LOCATION_DIRECT &&
		pg->encoding->direct->has_encoding)
		any = lt__pb__pb_any__unpack(lt_protobuf_allocator(), pg->encoding->direct->encoding.len,
									 pg->encoding->direct->encoding.data);
	if (!any || !any->has_value)
		printf(",\"layout\":\"unknown\",\"compression\":null,\"encodings\":[],\"repdef\":[],\"layers\":[]");
	else if (f->version >= LT_FILE_V2_1)
	{
		Lt__Enc21__PageLayout *pl = lt__enc21__page_layout__unpack(lt_protobuf_allocator(), any->value.len,
																	any->value.data);

		describe21(pl, 0);
		if (pl)
			lt__enc21__page_layout__free_unpacked(pl, lt_protobuf_allocator());
	}
	else
	{
		Lt__Enc20__ArrayEncoding *ae = lt__enc20__array_encoding__unpack(lt_protobuf_allocator(), any->value.len,
																		  any->value.data);

		describe20(ae);
		if (ae)
			lt__enc20__array_encoding__free_unpacked(ae, lt_protobuf_allocator());
	}
	if (any)
		lt__pb__pb_any__free_unpacked(any, lt_protobuf_allocator());
}

int
inspect_pages(lt_dataset *ds)
{
	lt_error	err;

	for (size_t fi = 0; fi < ds->n_fragments; fi++)
	{
		const Lt__Pb__DataFragment *fr = ds->fragments[fi];

		for (size_t j = 0; j < fr->n_files; j++)
		{
			const Lt__Pb__DataFile *d = fr->files[j];
			char	   *rel = lt_asprintf("data/%s", d->path);
			char	   *path = rel ? lt_dataset_file_path(ds, d->has_base_id, d->base_id, rel) : NULL;
			lt_file    *f;
			lt_code		rc;

			lt_free(rel);
			rc = path ? lt_file_open(ds->store, path, &f, &err) : lt_nomem(&err);
			lt_free(path);
			if (rc != LT_OK)
			{
				fprintf(stderr, "lt-inspect: %s: %s\n", lt_code_name(err.code), err.msg);
				return 1;
			}
			for (uint32_t col = 0; f->version != LT_FILE_LEGACY && col < f->num_columns; col++)
			{
				Lt__Pb__ColumnMetadata *cm;
				int32_t		field_id = -1;
				bool		mapped = false;

				/* the first field whose column index is this column */
				for (size_t k = 0; k < d->n_fields && !mapped; k++)
				{
					int32_t		ci = d->n_column_indices ? d->column_indices[k] : (int32_t) k;

					if (ci >= 0 && (uint32_t) ci == col)
					{
						field_id = d->fields[k];
						mapped = true;
					}
				}
				if (lt_file_column(f, col, &cm, &err) != LT_OK)
				{
					fprintf(stderr, "lt-inspect: %s: %s\n", lt_code_name(err.code), err.msg);
					lt_file_close(f);
					return 1;
				}
				for (size_t p = 0; p < cm->n_pages; p++)
				{
					const Lt__Pb__ColumnPage *pg = cm->pages[p];

					printf("{\"fragment\":%" PRIu64 ",\"file\":", fr->id);
					json_string(stdout, d->path, strlen(d->path));
					if (mapped)
					{
						printf(",\"field_id\":%d,\"column\":", field_id);
						print_path(ds->schema, field_id);
					}
					else
						printf(",\"field_id\":null,\"column\":null");
					printf(",\"column_index\":%u,\"page\":%zu,\"rows\":%" PRIu64 ",\"file_version\":\"%u.%u\"",
						   col, p, pg->length, d->file_major_version, d->file_minor_version);
					describe_page(f, pg);
					printf(",\"buffers\":%zu}\n", pg->n_buffer_offsets);
				}
			}
			lt_file_close(f);
		}
	}
	return 0;
}
