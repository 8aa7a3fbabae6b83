/*
 * lt_blob.c — blob descriptors to byte locations, and the ranged reads of those bytes (lt_blob.h).
 */
#include <string.h>

#include "blob/lt_blob.h"
#include "file/lt_sidecar.h"
#include "util/lt_alloc.h"
#include "util/lt_bytes.h"

/* A read of a large blob goes in pieces of this size, each one answering cancel. */
#define BLOB_READ_PIECE (8u << 20)

static uint64_t
u64_at(const lt_array *a, int64_t i)
{
	return lt_le64(a->values + (size_t) i * 8);
}

/* The descriptor's children by name order (lt_schema.c's blob_descriptor). */
static lt_code
check_desc(lt_blob_form form, const lt_array *d, int64_t i, lt_error *err)
{
	int			want = form == LT_BLOB_V2 ? 5 : 2;

	if (!d || !d->field || d->field->blob == LT_BLOB_NONE || d->n_children != want || i < 0 || i >= d->length)
		return lt_error_set(err, LT_EINVALID, "not a blob descriptor array (or row %lld out of range)",
							(long long) i);
	for (int k = 0; k < want; k++)
		if (!d->children[k] || d->children[k]->length != d->length)
			return lt_error_set(err, LT_EINVALID, "blob descriptor child %d is incomplete", k);
	return LT_OK;
}

lt_code
lt_blob_size(lt_blob_form form, const lt_array *desc, int64_t i, bool *is_null, uint64_t *size, lt_error *err)
{
	uint64_t	pos,
				len;

	LT_TRY(check_desc(form, desc, i, err));
	*size = 0;
	*is_null = !lt_array_is_valid(desc, i);
	if (*is_null)
		return LT_OK;
	pos = u64_at(desc->children[form == LT_BLOB_V2 ? 1 : 0], i);
	len = u64_at(desc->children[form == LT_BLOB_V2 ? 2 : 1], i);
	/* legacy: size 0 with a position other than 0 is a NULL (2.0 writes position 1; 2.1 the def level << 16) */
	if (form == LT_BLOB_LEGACY && len == 0 && pos != 0)
	{
		*is_null = true;
		return LT_OK;
	}
	*size = len;
	return LT_OK;
}

lt_code
lt_blob_locate(lt_blob_form form, const lt_array *desc, int64_t i, const char *data_file, lt_blob_loc *out,
			   lt_error *err)
{
	uint8_t		kind = LT_BLOB_KIND_INLINE;

	memset(out, 0, sizeof(*out));
	LT_TRY(lt_blob_size(form, desc, i, &out->is_null, &out->length, err));
	if (out->is_null)
		return LT_OK;
	out->offset = u64_at(desc->children[form == LT_BLOB_V2 ? 1 : 0], i);
	if (form == LT_BLOB_V2)
		kind = desc->children[0]->values[i];
	if (out->length == 0)
		return LT_OK;			/* an empty blob reads nothing, wherever it points */
	switch (kind)
	{
		case LT_BLOB_KIND_INLINE:
			out->path = lt_strdup(data_file);
			break;
		case LT_BLOB_KIND_PACKED:
		case LT_BLOB_KIND_DEDICATED:
			{
				const uint8_t *idv = desc->children[3]->values;

				out->path = lt_blob_sidecar_path(data_file, (uint32_t) lt_le32(idv + (size_t) i * 4));
				break;
			}
		case LT_BLOB_KIND_EXTERNAL:
			{
				const lt_array *u = desc->children[4];

				if (!u->offsets || !lt_array_is_valid(u, i) || u->offsets[i + 1] <= u->offsets[i])
					return lt_corrupt(err, "blob descriptor of row %lld is external without a URI", (long long) i);
				out->external = true;
				out->base_id = (uint32_t) lt_le32(desc->children[3]->values + (size_t) i * 4);
				out->path = lt_strndup((const char *) u->data + u->offsets[i], (size_t) (u->offsets[i + 1] - u->offsets[i]));
				break;
			}
		default:
			return lt_corrupt(err, "blob descriptor of row %lld has unknown kind %u", (long long) i, kind);
	}
	if (!out->path)
		return lt_nomem(err);
	if (out->offset + out->length < out->offset)
		return lt_corrupt(err, "blob descriptor of row %lld: position %llu + size %llu overflows", (long long) i,
						  (unsigned long long) out->offset, (unsigned long long) out->length);
	return LT_OK;
}

lt_code
lt_blob_read(lt_store *store, const char *path, const lt_blob_loc *loc, uint8_t *dst, lt_error *err)
{
	lt_rfile   *rf;
	lt_code		rc;
	uint64_t	done = 0;

	if (loc->is_null || loc->length == 0)
		return LT_OK;
	LT_TRY(lt_store_open_file(store, path, &rf, err));
	if (loc->offset > rf->size || loc->length > rf->size - loc->offset)
		rc = lt_corrupt(err, "%s: a blob of %llu bytes at %llu runs past the file's end (%llu bytes)", path,
						(unsigned long long) loc->length, (unsigned long long) loc->offset,
						(unsigned long long) rf->size);
	else
		rc = LT_OK;
	while (rc == LT_OK && done < loc->length)
	{
		uint64_t	n = loc->length - done < BLOB_READ_PIECE ? loc->length - done : BLOB_READ_PIECE;

		rc = lt_check_interrupt(err, "reading a blob");
		if (rc == LT_OK)
			rc = lt_rfile_read(rf, loc->offset + done, n, dst + done, err);
		done += n;
	}
	lt_rfile_close(rf);
	return rc;
}

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

lt_code
lt_blob_external_path(const char *store_root, const lt_blob_loc *loc, char **out, lt_error *err)
{
	const char *uri = loc->path ? loc->path : "";
	const char *rest;
	size_t		n;
	char	   *p,
			   *w;
	bool		nul = false;

	*out = NULL;
	if (loc->base_id != 0)
		return lt_error_set(err, LT_EUNSUPPORTED,
							"external blob URI \"%s\" is relative to base path %u of the dataset, which lt_fdw does not read",
							uri, loc->base_id);
	if (!store_root || !store_root[0])
		return lt_error_set(err, LT_EUNSUPPORTED, "external blob URI \"%s\": the store has no root to read it under", uri);
	rest = uri;
	if (store_root[0] == '/' && strncmp(rest, "file://", 7) == 0)
		rest += 7;
	n = strlen(store_root);
	while (n > 1 && store_root[n - 1] == '/')
		n--;
	if (strncmp(rest, store_root, n) != 0 || rest[n] != '/')
		return lt_error_set(err, LT_EUNSUPPORTED,
							"external blob URI \"%s\" lies outside the server's root %s: lt_fdw reads external blobs only there",
							uri, store_root);
	/* the path under the root, percent-decoded, then checked segment by segment */
	if (!(p = lt_strdup(rest + n + 1)))
		return lt_nomem(err);
	w = p;
	for (const char *r = p; *r; r++)
	{
		if (*r == '%' && hexval(r[1]) >= 0 && hexval(r[2]) >= 0)
		{
			*w = (char) (hexval(r[1]) * 16 + hexval(r[2]));
			nul |= *w == '\0';
			w++;
			r += 2;
		}
		else
			*w++ = *r;
	}
	*w = '\0';
	for (const char *seg = p;;)
	{
		const char *end = strchr(seg, '/');
		size_t		len = end ? (size_t) (end - seg) : strlen(seg);

		if (nul || len == 0 || (len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
		{
			lt_free(p);
			return lt_error_set(err, LT_EUNSUPPORTED,
								"external blob URI \"%s\" has an empty, \".\" or \"..\" segment (or a NUL): not read", uri);
		}
		if (!end)
			break;
		seg = end + 1;
	}
	*out = p;
	return LT_OK;
}

void
lt_blob_loc_clear(lt_blob_loc *loc)
{
	lt_free(loc->path);
	memset(loc, 0, sizeof(*loc));
}
