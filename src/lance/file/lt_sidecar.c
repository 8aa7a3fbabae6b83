/*
 * lt_sidecar.c — blob v2 sidecars (lt_sidecar.h), and the data-file writer's side of them: where a blob v2
 * value goes by its size, and the packed and dedicated sidecar files it writes (lt_writer_int.h).
 */
#include "file/lt_sidecar.h"

#include <string.h>

#include "file/lt_writer_int.h"

#define BLOB_ID_BITS 32
#define BLOB_ALIGN 64				/* inline blobs start on 64 bytes, as Lance's writer puts them */
#define BLOB_WRITE_PIECE (8u << 20)	/* a large blob goes in pieces, each one answering cancel */

char *
lt_blob_sidecar_path(const char *data_file, uint32_t blob_id)
{
	size_t		n = strlen(data_file);
	char		bits[BLOB_ID_BITS + 1];

	if (n > 6 && strcmp(data_file + n - 6, ".lance") == 0)
		n -= 6;
	for (int b = 0; b < BLOB_ID_BITS; b++)
		bits[b] = (blob_id >> b) & 1 ? '1' : '0';
	bits[BLOB_ID_BITS] = '\0';
	return lt_asprintf("%.*s/%s.blob", (int) n, data_file, bits);
}

bool
lt_blob_sidecar_id(const char *name, uint32_t *blob_id)
{
	uint32_t	id = 0;

	if (strlen(name) != BLOB_ID_BITS + 5 || strcmp(name + BLOB_ID_BITS, ".blob") != 0)
		return false;
	for (int b = 0; b < BLOB_ID_BITS; b++)
	{
		if (name[b] != '0' && name[b] != '1')
			return false;
		id |= (uint32_t) (name[b] == '1') << b;
	}
	*blob_id = id;
	return true;
}

static lt_code
put_pieces(lt_wfile *f, const uint8_t *p, uint64_t len, lt_error *err)
{
	for (uint64_t done = 0; done < len; done += BLOB_WRITE_PIECE)
	{
		LT_TRY(lt_check_interrupt(err, "writing a blob"));
		LT_TRY(lt_wfile_write(f, p + done, len - done < BLOB_WRITE_PIECE ? len - done : BLOB_WRITE_PIECE, err));
	}
	return LT_OK;
}

/* A new sidecar of the data file: the next blob id (ids start at 1, packed and dedicated share them). */
static lt_code
sidecar_create(lt_file_writer *w, uint32_t *id, lt_wfile **out, lt_error *err)
{
	char	   *path;
	lt_code		rc;

	if (w->blob_last_id == UINT32_MAX)
		return lt_error_set(err, LT_EUNSUPPORTED, "%s: more than %u blob sidecars for one data file", w->path,
							UINT32_MAX);
	*id = ++w->blob_last_id;
	if (!(path = lt_blob_sidecar_path(w->path, *id)))
		return lt_nomem(err);
	rc = lt_store_create_file(w->store, path, out, err);
	lt_free(path);
	return rc;
}

lt_code
lt_writer_pack_close(lt_file_writer *w, lt_error *err)
{
	lt_wfile   *f = w->blob_pack;

	w->blob_pack = NULL;
	return f ? lt_wfile_finish(f, err) : LT_OK;
}

lt_code
lt_writer_place_blob(lt_file_writer *w, const lt_blob_thresholds *t, const uint8_t *p, uint64_t len,
					 lt_blob_place *out, lt_error *err)
{
	static const uint8_t pad[BLOB_ALIGN] = {[0 ... BLOB_ALIGN - 1] = 0x48};
	lt_wfile   *f;
	lt_code		rc;

	memset(out, 0, sizeof(*out));
	out->size = len;
	if (t->bad)
		return lt_error_set(err, LT_EUNSUPPORTED, "blob field metadata %s is not a size in bytes", t->bad);
	if (len <= t->inline_max)
	{
		uint64_t	r;

		/* in the data file itself; an empty blob points where the next would go */
		out->kind = LT_BLOB_KIND_INLINE;
		out->position = w->wf->written;
		if (len == 0)
			return LT_OK;
		LT_TRY(put_pieces(w->wf, p, len, err));
		r = w->wf->written % BLOB_ALIGN;
		return r ? lt_wfile_write(w->wf, pad, BLOB_ALIGN - r, err) : LT_OK;
	}
	if (len <= t->dedicated_after)
	{
		/* appended to the open pack, or a new one when this blob would take it past its limit */
		if (w->blob_pack && w->blob_pack->written + len > t->pack_max)
			LT_TRY(lt_writer_pack_close(w, err));
		if (!w->blob_pack)
			LT_TRY(sidecar_create(w, &w->blob_pack_id, &w->blob_pack, err));
		out->kind = LT_BLOB_KIND_PACKED;
		out->blob_id = w->blob_pack_id;
		out->position = w->blob_pack->written;
		return put_pieces(w->blob_pack, p, len, err);
	}
	out->kind = LT_BLOB_KIND_DEDICATED;
	LT_TRY(sidecar_create(w, &out->blob_id, &f, err));
	rc = put_pieces(f, p, len, err);
	if (rc != LT_OK)
	{
		lt_wfile_abort(f);
		return rc;
	}
	return lt_wfile_finish(f, err);
}
