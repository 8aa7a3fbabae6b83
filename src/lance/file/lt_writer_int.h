/*
 * lt_writer_int.h — internals shared by the data-file writer's parts.
 *
 *   lt_writer.c    the container: column metadata, descriptor, footer;
 *                  buffering of rows per field; file naming
 *   lt_writer_page.c  page buffers: what the page encoders call back
 *   lt_writer21.c  2.1 / 2.2 pages: rep/def shredding, mini-block, full-zip,
 *                  constant layouts and their compressions
 *   lt_writer20.c  2.0 pages: one column per field, ArrayEncoding trees
 *   lt_sidecar.c   blob v2 values: inline in the file, or in packed / dedicated sidecar files
 *   lt_wbuf.h      a growable byte buffer
 */
#ifndef LT_WRITER_INT_H
#define LT_WRITER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "util/lt_alloc.h"
#include "file/lt_writer.h"

/* The writer (lt_writer.c opens and finishes it; lt_writer_page.c adds pages). */
typedef struct w_page
{
	uint64_t   *offs;
	uint64_t   *lens;
	size_t		nbuf;
	uint64_t	rows;
	uint64_t	priority;
	uint8_t    *enc;			/* serialized Any */
	size_t		enc_len;
} w_page;

typedef struct w_column
{
	w_page	   *pages;
	size_t		n, cap;
	uint64_t	rows;			/* slots in the pages so far */
	bool		blob20;			/* a 2.0 legacy blob column: its column encoding says Blob */
} w_column;

struct lt_file_writer
{
	lt_store   *store;
	lt_wfile   *wf;
	char	   *name;
	char	   *path;
	lt_file_version version;
	int			n_fields;
	const lt_field **fields;
	lt_array  **pending;		/* buffered rows per field */
	uint64_t   *flushed;		/* rows of each field already encoded */
	int		   *first_col;		/* first column of each field */
	int			n_columns;
	int32_t    *col_field;		/* field id owning each column */
	w_column   *cols;
	uint64_t	rows;
	bool		finished;
	/* index files: schema metadata and global buffers after the descriptor (buffer 0) */
	int			n_meta;
	char	  **meta_keys;
	uint8_t   **meta_values;
	size_t	   *meta_lens;
	int			n_gbufs;
	uint8_t   **gbufs;
	size_t	   *gbuf_lens;
	/* blob v2 sidecars (lt_sidecar.c): the last blob id given, and the packed sidecar being filled */
	uint32_t	blob_last_id;
	uint32_t	blob_pack_id;
	lt_wfile   *blob_pack;
};

/* Where lt_writer_place_blob put a blob v2 value: its descriptor but for the URI. */
typedef struct lt_blob_place
{
	uint8_t		kind;			/* LT_BLOB_KIND_INLINE / _PACKED / _DEDICATED */
	uint64_t	position;
	uint64_t	size;
	uint32_t	blob_id;		/* 0 inline */
} lt_blob_place;

/*
 * Store one blob v2 value of len bytes where Lance 12 would by its size (thresholds t): inline in the data
 * file (64-byte aligned), appended to the packed sidecar, or a dedicated sidecar of its own.
 */
lt_code		lt_writer_place_blob(lt_file_writer *w, const lt_blob_thresholds *t, const uint8_t *p, uint64_t len,
								 lt_blob_place *out, lt_error *err);
/* Make the packed sidecar being filled durable (finish does, before the data file). */
lt_code		lt_writer_pack_close(lt_file_writer *w, lt_error *err);

/* A growable byte buffer. */
typedef struct lt_wbuf
{
	uint8_t    *p;
	uint64_t	len;
	uint64_t	cap;
} lt_wbuf;

static inline lt_code
lt_wbuf_reserve(lt_wbuf *b, uint64_t extra, lt_error *err)
{
	if (b->len + extra > b->cap || !b->p)
	{
		uint64_t	cap = b->cap ? b->cap : 256;
		uint8_t    *p;

		while (cap < b->len + extra)
			cap *= 2;
		if (!(p = lt_realloc(b->p, cap)))
			return lt_nomem(err);
		b->p = p;
		b->cap = cap;
	}
	return LT_OK;
}

static inline lt_code
lt_wbuf_put(lt_wbuf *b, const void *data, uint64_t n, lt_error *err)
{
	LT_TRY(lt_wbuf_reserve(b, n, err));
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	return LT_OK;
}

static inline lt_code
lt_wbuf_fill(lt_wbuf *b, uint8_t byte, uint64_t n, lt_error *err)
{
	LT_TRY(lt_wbuf_reserve(b, n, err));
	memset(b->p + b->len, byte, n);
	b->len += n;
	return LT_OK;
}

/* Pad to a multiple of align with `byte`. */
static inline lt_code
lt_wbuf_pad(lt_wbuf *b, uint64_t align, uint8_t byte, lt_error *err)
{
	uint64_t	r = b->len % align;

	return r ? lt_wbuf_fill(b, byte, align - r, err) : LT_OK;
}

static inline lt_code lt_wbuf_u16(lt_wbuf *b, uint16_t v, lt_error *err) { return lt_wbuf_put(b, &v, 2, err); }
static inline lt_code lt_wbuf_u32(lt_wbuf *b, uint32_t v, lt_error *err) { return lt_wbuf_put(b, &v, 4, err); }
static inline lt_code lt_wbuf_u64(lt_wbuf *b, uint64_t v, lt_error *err) { return lt_wbuf_put(b, &v, 8, err); }
static inline void lt_wbuf_free(lt_wbuf *b) { lt_free(b->p); b->p = NULL; b->len = b->cap = 0; }

/* Protobuf nodes of a page's encoding live in an arena freed with the page. */
typedef struct lt_arena
{
	void	  **p;
	size_t		n, cap;
	bool		oom;			/* an allocation failed: the encoding is incomplete */
} lt_arena;

static inline void *
lt_arena_alloc(lt_arena *a, size_t size)
{
	void	   *p;

	if (a->n == a->cap)
	{
		size_t		cap = a->cap ? a->cap * 2 : 32;
		void	  **q = lt_realloc(a->p, cap * sizeof(void *));

		if (!q)
		{
			a->oom = true;
			return NULL;
		}
		a->p = q;
		a->cap = cap;
	}
	if (!(p = lt_calloc(1, size)))
	{
		a->oom = true;
		return NULL;
	}
	a->p[a->n++] = p;
	return p;
}

static inline void
lt_arena_free(lt_arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		lt_free(a->p[i]);
	lt_free(a->p);
	memset(a, 0, sizeof(*a));
}

/*
 * Write one page of column `col`: its buffers (each 64-byte aligned in the
 * file), its encoding (a serialized protobuf of type `type_url`, wrapped in
 * an Any), `rows` top-level rows starting at row `priority`.
 */
lt_code		lt_writer_page(lt_file_writer *w, int col, int nbuf, const uint8_t *const *bufs, const uint64_t *lens,
						   const char *type_url, const uint8_t *enc, size_t enc_len, uint64_t rows, uint64_t priority,
						   lt_error *err);

/* Write len bytes at the end of the file, then pad it to a multiple of 64 bytes (page alignment). */
lt_code		lt_writer_write_padded(lt_file_writer *w, const uint8_t *p, uint64_t len, lt_error *err);

/* A 2.0 column of legacy blob descriptors (put_column writes its column encoding as Blob). */
void		lt_writer_mark_blob_column(lt_file_writer *w, int col);

/* Append len bytes where they fall (a blob's bytes, out of line), giving their offset in the file. */
lt_code		lt_writer_write_blob(lt_file_writer *w, const uint8_t *p, uint64_t len, uint64_t *pos, lt_error *err);

/* Rows (slots) of column col in the pages written so far: the next page's priority in 2.0. */
uint64_t	lt_writer_column_rows(const lt_file_writer *w, int col);

/* The store path of the file being written (for messages). */
const char *lt_writer_path(const lt_file_writer *w);
lt_file_version lt_writer_version(const lt_file_writer *w);

/* Columns a top-level field takes in a file version, and the field ids owning them (pre-order). */
int			lt_w21_columns(const lt_field *f, int32_t *ids, int cap);
int			lt_w20_columns(const lt_field *f, int32_t *ids, int cap);

/* Encode rows [0, a->length) of top-level field f (an array of its type) as pages from column `col`. */
lt_code		lt_w21_encode(lt_file_writer *w, const lt_field *f, const lt_array *a, int col, uint64_t row0,
						  lt_error *err);
lt_code		lt_w20_encode(lt_file_writer *w, const lt_field *f, const lt_array *a, int col, uint64_t row0,
						  lt_error *err);

/* Check that a field's type can be written in the version (LT_EUNSUPPORTED naming it otherwise). */
lt_code		lt_w21_check(const lt_field *f, lt_file_version v, lt_error *err);
lt_code		lt_w20_check(const lt_field *f, lt_error *err);

#endif
