/*
 * lt_store.h — the object-store interface: where a dataset's bytes live.
 *
 * Paths are '/'-separated and relative to the store's root.  A backend
 * implements lt_store_ops; the local-file backend is lt_store_local.c, and an
 * S3 backend plugs in the same way.  Reads go through lt_rfile handles so a
 * backend can keep a descriptor (or a connection) per file.
 */
#ifndef LT_STORE_H
#define LT_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/lt_bytes.h"
#include "util/lt_status.h"

typedef struct lt_store lt_store;
typedef struct lt_rfile lt_rfile;
typedef struct lt_wfile lt_wfile;

typedef struct lt_range
{
	uint64_t	offset;
	uint64_t	length;
} lt_range;

/* One directory entry; `size` is 0 for directories. */
typedef struct lt_dirent
{
	const char *name;
	bool		is_dir;
	uint64_t	size;
	int64_t		mtime_ms;		/* last modified, ms since the epoch; 0 = unknown (treated as new) */
	bool		special;		/* neither a file nor a directory (a FIFO, socket or device): never opened */
} lt_dirent;

/* Return non-zero to stop listing early. */
typedef int (*lt_list_cb) (const lt_dirent *ent, void *arg);

/* How to list (lt_store_list_opts); all zero (or NULL) is a plain listing of every entry. */
typedef struct lt_list_opts
{
	const char *start_after;	/* only names that sort bytewise after this one; NULL: all */
	int			page_size;		/* names per request a remote store asks for; 0: its default */
	bool		names_only;		/* size and mtime are not needed (local: no stat per entry; they read 0) */
} lt_list_opts;

/* What lt_store_stat tells of one path. */
typedef struct lt_stat
{
	uint64_t	size;			/* 0 for directories */
	bool		is_dir;
	int64_t		change_ns;		/* last change of the entry (for a directory: of its names); 0 = unknown */
	bool		special;		/* neither a file nor a directory (a FIFO, socket or device) */
} lt_stat;

/* Some bytes of a file written in parts. */
typedef struct lt_part
{
	const uint8_t *data;
	uint64_t	len;
} lt_part;

typedef struct lt_store_ops
{
	lt_code		(*open) (lt_store *s, const char *path, lt_rfile **out, lt_error *err);
	lt_code		(*read) (lt_rfile *f, uint64_t offset, uint64_t length, uint8_t *dst, lt_error *err);
	void		(*close) (lt_rfile *f);
	lt_code		(*list) (lt_store *s, const char *dir, const lt_list_opts *opts, lt_list_cb cb, void *arg,
						 lt_error *err);
	lt_code		(*put) (lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err);
	/* Create path only if absent: LT_ECONFLICT when it exists. Atomic for readers. */
	lt_code		(*put_if_absent) (lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err);
	lt_code		(*remove) (lt_store *s, const char *path, lt_error *err);
	void		(*destroy) (lt_store *s);
	/* Streaming writes (lt_store_create_file); NULL in a backend that cannot. */
	lt_code		(*create) (lt_store *s, const char *path, lt_wfile **out, lt_error *err);
	lt_code		(*write) (lt_wfile *f, const uint8_t *data, uint64_t len, lt_error *err);
	lt_code		(*finish) (lt_wfile *f, lt_error *err);
	void		(*abort) (lt_wfile *f);
	/* put, without waiting for the bytes to be durable (lt_store_put_unsynced); NULL: put */
	lt_code		(*put_unsynced) (lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err);
	/* Several disjoint reads of one file at once (a remote store runs them in parallel); NULL: one by one. */
	lt_code		(*read_many) (lt_rfile *f, int n, const lt_range *ranges, uint8_t *const *dsts, lt_error *err);
	/* Metadata of one path, LT_ENOTFOUND when absent; NULL: open and close the file. */
	lt_code		(*stat) (lt_store *s, const char *path, lt_stat *st, lt_error *err);
	/* Get ready to open these files soon (a remote store fetches their tails at once); NULL: nothing to do. */
	lt_code		(*prefetch) (lt_store *s, int n, const char *const *paths, lt_error *err);
	/* put_if_absent of the bytes of n parts one after another (no joined copy made); NULL: joined first. */
	lt_code		(*put_if_absent_parts) (lt_store *s, const char *path, const struct lt_part *parts, int n,
										lt_error *err);
} lt_store_ops;

struct lt_store
{
	const lt_store_ops *ops;
	char	   *root;			/* for messages: "/srv/lake", "s3://bucket/prefix" */
	uint64_t	coalesce_gap;	/* ranges closer than this are fetched in one read */
	/*
	 * A sparse take (a few rows of each page, far apart: a prefilter's 1% of a vector column) merges the
	 * rows of one batch closer than this into one request: what a request costs, in bytes read.  0: a
	 * quarter of coalesce_gap (what the reader's choice of a take row by row assumes).
	 */
	uint64_t	take_gap;
	bool		list_ordered;	/* listings come in bytewise order of names (S3), and start_after is cheap */
	/*
	 * Skip the fsyncs that make writes survive an operating-system crash (the local backend; a remote store
	 * is durable when it answers).  For a server running with fsync off, as PostgreSQL itself then does;
	 * the order of writes, and so what a killed process leaves, does not change.
	 */
	bool		no_fsync;
	/*
	 * A catalog that publishes this dataset's versions (a Lance namespace that manages them): a commit writes
	 * its manifest to staged_path (relative to the store's root, a name no reader takes for a version) and calls
	 * this, which puts it in place as final_path, or answers LT_ECONFLICT when that version exists (the commit
	 * then rebases, as after a lost race).  NULL: the commit creates final_path itself, put-if-absent.
	 */
	lt_code		(*publish_manifest) (void *arg, uint64_t version, const char *staged_path, const char *final_path,
									 lt_error *err);
	void	   *publish_arg;
	uint64_t	bytes_read;		/* counters for EXPLAIN ANALYZE and benchmarks */
	uint64_t	read_requests;
};

struct lt_rfile
{
	lt_store   *store;
	char	   *path;
	uint64_t	size;
};

/*
 * A new object written in pieces: nothing is visible at `path` until
 * lt_wfile_finish succeeds (local: a temp file, fsync'd, then link()ed into
 * place; S3: a multipart upload completed at finish).  The handle is freed
 * by finish (success or not) and by abort, which discards what was written.
 */
struct lt_wfile
{
	lt_store   *store;
	char	   *path;
	uint64_t	written;		/* bytes accepted so far */
};

/* Local directory backend. root must exist. */
lt_code		lt_store_local_open(const char *root, lt_store **out, lt_error *err);
void		lt_store_close(lt_store *s);
/* In-memory backend (tests, fuzzing); lt_store_mem_put adds or replaces an object. */
lt_code		lt_store_mem_open(lt_store **out, lt_error *err);
lt_code		lt_store_mem_put(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err);

lt_code		lt_store_open_file(lt_store *s, const char *path, lt_rfile **out, lt_error *err);
void		lt_rfile_close(lt_rfile *f);

/*
 * The descriptors open read files of the local store hold, counted by the host (the FDW: PostgreSQL's
 * AcquireExternalFD / ReserveExternalFD / ReleaseExternalFD, so that they count against
 * max_files_per_process).  When acquire says the budget is spent, the reclaim hook (the file caches,
 * lt_file_cache.c) closes an idle file kept open and acquire is asked again; when nothing is idle, reserve
 * takes the descriptor anyway (every open file is in use).  Without hooks nothing is counted.
 */
typedef struct lt_fd_hooks
{
	bool		(*acquire) (void);	/* false: the budget is spent */
	void		(*reserve) (void);	/* count one past the budget */
	void		(*release) (void);
} lt_fd_hooks;

void		lt_set_fd_hooks(const lt_fd_hooks *hooks);
/* reclaim: close one idle descriptor, false when there is none */
void		lt_set_fd_reclaim(bool (*reclaim) (void));
/* For stores: count one descriptor about to be opened / one closed. */
void		lt_fd_acquire(void);
void		lt_fd_release(void);
/* Close one idle descriptor through the reclaim hook; false when there is none. */
bool		lt_fd_reclaim(void);
/* Read exactly [offset, offset+length); a short file is LT_ECORRUPT naming the path. */
lt_code		lt_rfile_read(lt_rfile *f, uint64_t offset, uint64_t length, uint8_t *dst, lt_error *err);
/*
 * Read several ranges into dsts[i] (each ranges[i].length bytes), merging ranges closer than the
 * store's coalesce_gap into one request; the merged requests go to the backend in one call.
 */
lt_code		lt_rfile_read_ranges(lt_rfile *f, int n, const lt_range *ranges, uint8_t *const *dsts, lt_error *err);
/* lt_rfile_read_ranges with ranges closer than gap merged (not the store's coalesce_gap). */
lt_code		lt_rfile_read_ranges_gap(lt_rfile *f, int n, const lt_range *ranges, uint8_t *const *dsts, uint64_t gap,
									 lt_error *err);
/* The store's gap of a sparse take (lt_store.take_gap, or its default). */
uint64_t	lt_store_take_gap(const lt_store *s);
/* Read a whole small file into a fresh lt_malloc'd buffer (capped at max_len). */
lt_code		lt_store_read_all(lt_store *s, const char *path, uint64_t max_len, uint8_t **out, uint64_t *out_len, lt_error *err);

lt_code		lt_store_list(lt_store *s, const char *dir, lt_list_cb cb, void *arg, lt_error *err);
lt_code		lt_store_list_opts(lt_store *s, const char *dir, const lt_list_opts *opts, lt_list_cb cb, void *arg,
							   lt_error *err);
/*
 * Files about to be opened (and their footers read): a remote store fetches what an open needs of all
 * of them at once, where one by one would cost a round trip each.  Best effort: only a cancel fails.
 */
lt_code		lt_store_prefetch(lt_store *s, int n, const char *const *paths, lt_error *err);
/* Size, kind and change time of path; LT_ENOTFOUND when it does not exist. */
lt_code		lt_store_stat(lt_store *s, const char *path, lt_stat *st, lt_error *err);
lt_code		lt_store_put(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err);
lt_code		lt_store_put_if_absent(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err);
/* lt_store_put_if_absent of the parts' bytes, in order, without joining them first where the store can. */
lt_code		lt_store_put_if_absent_parts(lt_store *s, const char *path, const lt_part *parts, int n, lt_error *err);
/*
 * A put (atomic for readers) of an object nothing needs after a crash: a hint, or a copy of what a
 * durable object also holds (the transaction file, which the manifest carries inline).  The local
 * backend skips its fsyncs; others put as usual.
 */
lt_code		lt_store_put_unsynced(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err);
lt_code		lt_store_remove(lt_store *s, const char *path, lt_error *err);

/* Create path for streaming writes; LT_ECONFLICT at finish if it appeared meanwhile. */
lt_code		lt_store_create_file(lt_store *s, const char *path, lt_wfile **out, lt_error *err);
lt_code		lt_wfile_write(lt_wfile *f, const uint8_t *data, uint64_t len, lt_error *err);
/* Make the object durable and visible; frees f. */
lt_code		lt_wfile_finish(lt_wfile *f, lt_error *err);
/* Discard an unfinished object; frees f (NULL is fine). */
void		lt_wfile_abort(lt_wfile *f);

#endif
