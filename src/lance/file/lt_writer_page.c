/*
 * lt_writer_page.c — what the per-version page encoders (lt_writer20.c,
 * lt_writer21.c) call back into the writer: streaming one page's buffers
 * (64-byte aligned) to the file and recording the page for the column
 * metadata, and the writer's path, version and column row counts.
 */
#include "file/lt_writer_int.h"

#include "proto/lt_common.pb-c.h"

#define PAGE_ALIGN 64
#define PAD_BYTE 0x48

const char *
lt_writer_path(const lt_file_writer *w)
{
	return w->path;
}

uint64_t
lt_writer_column_rows(const lt_file_writer *w, int col)
{
	return w->cols[col].rows;
}

lt_file_version
lt_writer_version(const lt_file_writer *w)
{
	return w->version;
}

void
lt_writer_mark_blob_column(lt_file_writer *w, int col)
{
	w->cols[col].blob20 = true;
}

lt_code
lt_writer_write_padded(lt_file_writer *w, const uint8_t *p, uint64_t len, lt_error *err)
{
	static const uint8_t pad[PAGE_ALIGN] = {[0 ... PAGE_ALIGN - 1] = PAD_BYTE};
	uint64_t	r;

	LT_TRY(lt_wfile_write(w->wf, p, len, err));
	r = w->wf->written % PAGE_ALIGN;
	return r ? lt_wfile_write(w->wf, pad, PAGE_ALIGN - r, err) : LT_OK;
}

/* A large blob goes in pieces of this size, each one answering cancel. */
#define BLOB_WRITE_PIECE (8u << 20)

lt_code
lt_writer_write_blob(lt_file_writer *w, const uint8_t *p, uint64_t len, uint64_t *pos, lt_error *err)
{
	*pos = w->wf->written;
	for (uint64_t done = 0; done < len; done += BLOB_WRITE_PIECE)
	{
		LT_TRY(lt_check_interrupt(err, "writing a blob"));
		LT_TRY(lt_wfile_write(w->wf, p + done, len - done < BLOB_WRITE_PIECE ? len - done : BLOB_WRITE_PIECE, err));
	}
	return LT_OK;
}

lt_code
lt_writer_page(lt_file_writer *w, int col, int nbuf, const uint8_t *const *bufs, const uint64_t *lens,
			   const char *type_url, const uint8_t *enc, size_t enc_len, uint64_t rows, uint64_t priority,
			   lt_error *err)
{
	w_column   *c = &w->cols[col];
	w_page	   *pg;
	Lt__Pb__PbAny any = LT__PB__PB_ANY__INIT;

	if (c->n == c->cap)
	{
		size_t		cap = c->cap ? c->cap * 2 : 4;
		w_page	   *p = lt_realloc(c->pages, cap * sizeof(w_page));

		if (!p)
			return lt_nomem(err);
		c->pages = p;
		c->cap = cap;
	}
	pg = &c->pages[c->n];
	memset(pg, 0, sizeof(*pg));
	pg->offs = lt_calloc(nbuf ? nbuf : 1, sizeof(uint64_t));
	pg->lens = lt_calloc(nbuf ? nbuf : 1, sizeof(uint64_t));
	any.type_url = (char *) type_url;
	any.has_value = true;
	any.value.data = (uint8_t *) enc;
	any.value.len = enc_len;
	pg->enc_len = lt__pb__pb_any__get_packed_size(&any);
	pg->enc = lt_malloc(pg->enc_len ? pg->enc_len : 1);
	if (!pg->offs || !pg->lens || !pg->enc)
	{
		lt_free(pg->offs);
		lt_free(pg->lens);
		lt_free(pg->enc);
		return lt_nomem(err);
	}
	lt__pb__pb_any__pack(&any, pg->enc);
	pg->nbuf = (size_t) nbuf;
	pg->rows = rows;
	c->rows += rows;
	pg->priority = priority;
	c->n++;
	for (int i = 0; i < nbuf; i++)
	{
		pg->offs[i] = w->wf->written;
		pg->lens[i] = lens[i];
		if (lt_writer_write_padded(w, bufs[i], lens[i], err) != LT_OK)
			return lt_error_prefix(err, "%s: column %d", w->path, col);
	}
	return LT_OK;
}
