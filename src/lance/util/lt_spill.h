/*
 * lt_spill.h — temporary files for work that outgrows its memory (the sorted runs of an external merge).
 *
 * The host gives the files (lt_spill_ops): PostgreSQL's BufFile in the FDW, counted among the backend's
 * files and removed at abort; NULL is the library's own, tmpfile(3) (removed when closed, or when the
 * process ends).  lt_spill_file buffers the small writes and reads of records on top of them.
 */
#ifndef LT_SPILL_H
#define LT_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/lt_status.h"

typedef struct lt_spill_ops
{
	void	   *arg;
	lt_code		(*create) (void *arg, void **file, lt_error *err);
	lt_code		(*write) (void *file, const void *p, size_t n, lt_error *err);
	/* done writing: reads start at the beginning */
	lt_code		(*rewind) (void *file, lt_error *err);
	/* up to n bytes into p; *got < n only at the end of the file */
	lt_code		(*read) (void *file, void *p, size_t n, size_t *got, lt_error *err);
	/* close and remove */
	void		(*close) (void *file);
} lt_spill_ops;

typedef struct lt_spill_file lt_spill_file;

/* A new empty file of ops (NULL: tmpfile), buffered by bufsize bytes, open for writing. */
lt_code		lt_spill_open(const lt_spill_ops *ops, size_t bufsize, lt_spill_file **out, lt_error *err);
lt_code		lt_spill_write(lt_spill_file *f, const void *p, size_t n, lt_error *err);
/* End writing; reading starts at the beginning. */
lt_code		lt_spill_rewind(lt_spill_file *f, lt_error *err);
/* Exactly n bytes (a short file is an error). */
lt_code		lt_spill_read(lt_spill_file *f, void *p, size_t n, lt_error *err);
/* Whether every byte has been read. */
lt_code		lt_spill_at_end(lt_spill_file *f, bool *end, lt_error *err);
/* Bytes written. */
uint64_t	lt_spill_size(const lt_spill_file *f);
/* Close and remove (NULL is fine). */
void		lt_spill_close(lt_spill_file *f);

#endif
