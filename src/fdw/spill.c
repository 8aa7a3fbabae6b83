/*
 * spill.c — lt_spill_ops over BufFile (spill.h).
 *
 * The library calls these from its own loops: an ERROR of the file layer (a full disk, temp_file_limit)
 * comes back as LT_EIO with its message, so that the library closes its runs and removes what it wrote
 * before the caller reports it.
 */
#include "postgres.h"

#include "storage/buffile.h"
#include "utils/memutils.h"

#include "spill.h"

/* Run stmt; an ERROR it raises becomes LT_EIO in err. */
#define SPILL_TRY(what, stmt) \
	do { \
		MemoryContext cxt_ = CurrentMemoryContext; \
		bool		failed_ = false; \
		PG_TRY(); \
		{ \
			stmt; \
		} \
		PG_CATCH(); \
		{ \
			ErrorData  *ed_; \
			MemoryContextSwitchTo(cxt_); \
			ed_ = CopyErrorData(); \
			FlushErrorState(); \
			lt_error_set(err, LT_EIO, "could not %s a temporary file: %s", what, ed_->message); \
			FreeErrorData(ed_); \
			failed_ = true; \
		} \
		PG_END_TRY(); \
		if (failed_) \
			return LT_EIO; \
	} while (0)

static lt_code
spill_create(void *arg, void **file, lt_error *err)
{
	BufFile    *f = NULL;

	SPILL_TRY("create", f = BufFileCreateTemp(false));
	*file = f;
	return LT_OK;
}

static lt_code
spill_write(void *file, const void *p, size_t n, lt_error *err)
{
	SPILL_TRY("write", BufFileWrite((BufFile *) file, unconstify(void *, p), n));
	return LT_OK;
}

static lt_code
spill_rewind(void *file, lt_error *err)
{
	int			rc = 0;

	SPILL_TRY("rewind", rc = BufFileSeek((BufFile *) file, 0, 0, SEEK_SET));
	if (rc != 0)
		return lt_error_set(err, LT_EIO, "could not rewind a temporary file");
	return LT_OK;
}

static lt_code
spill_read(void *file, void *p, size_t n, size_t *got, lt_error *err)
{
	size_t		k = 0;

	SPILL_TRY("read", k = BufFileRead((BufFile *) file, p, n));
	*got = k;
	return LT_OK;
}

static void
spill_close(void *file)
{
	BufFileClose((BufFile *) file);
}

static const lt_spill_ops ops = {NULL, spill_create, spill_write, spill_rewind, spill_read, spill_close};

const lt_spill_ops *
lt_fdw_spill_ops(void)
{
	return &ops;
}
