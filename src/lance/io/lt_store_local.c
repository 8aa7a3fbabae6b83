/*
 * lt_store_local.c — the object store on a local directory.
 *
 * put_if_absent writes a temporary file next to the target and link()s it
 * into place: readers never see a partial file, and EEXIST is a lost race.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* sync_file_range */
#endif
#include "io/lt_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/lt_alloc.h"

typedef struct local_file
{
	lt_rfile	base;
	int			fd;
} local_file;

static char *
full_path(lt_store *s, const char *path)
{
	if (path[0] == '/')
		return lt_strdup(path);
	if (!path[0])
		return lt_strdup(s->root);
	return lt_asprintf("%s/%s", s->root, path);
}

/* What a non-regular file is, for messages. */
static const char *
lt_file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return S_ISREG(mode) ? "a regular file" : "not a file";
}

/* The name of the OS user this process runs as (the server's, in a backend), for messages. */
static const char *
os_user_name(char *buf, size_t len)
{
	struct passwd pw,
			   *res = NULL;
	char		tmp[1024];

	if (getpwuid_r(geteuid(), &pw, tmp, sizeof(tmp), &res) == 0 && res && res->pw_name)
		snprintf(buf, len, "%s", res->pw_name);
	else
		snprintf(buf, len, "uid %d", (int) geteuid());
	return buf;
}

static lt_code
errno_error(lt_error *err, const char *op, const char *path)
{
	int			e = errno;

	if (e == ENOENT || e == ENOTDIR)
		return lt_error_set(err, LT_ENOTFOUND, "%s: %s: %s", path, op, strerror(e));
	if (e == ENOMEM)
		return lt_nomem(err);
	if (e == EACCES || e == EPERM || e == EROFS)
	{
		/* say who is refused and what it needs: the server's OS user, not the database role */
		bool		reading = strcmp(op, "open") == 0 || strcmp(op, "read") == 0 || strcmp(op, "list") == 0 ||
			strcmp(op, "stat") == 0;
		char		user[256];

		return lt_error_set(err, LT_EACCESS, "%s: %s: %s (the server runs as OS user \"%s\", which needs %s)",
							path, op, strerror(e), os_user_name(user, sizeof(user)),
							e == EROFS ? "a writable file system there" :
							reading ? "read access to it and search (x) access to every directory above it" :
							"write and create access to its directory (w and x) and search (x) access to every directory above it");
	}
	return lt_error_set(err, LT_EIO, "%s: %s: %s", path, op, strerror(e));
}

static lt_code
local_open(lt_store *s, const char *path, lt_rfile **out, lt_error *err)
{
	char	   *full = full_path(s, path);
	local_file *f;
	struct stat st;
	int			fd;

	if (!full)
		return lt_nomem(err);
	/*
	 * O_NONBLOCK: a FIFO (or a device) planted in a dataset must not block the open (a reader-less
	 * FIFO would wait for a writer forever, deaf to cancel); the check below then refuses it.  For a
	 * regular file the flag changes nothing.
	 */
	lt_fd_acquire();			/* counted until local_close */
	/* out of descriptors all the same (another library's, a low ulimit): close idle cached files first */
	while ((fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0 && (errno == EMFILE || errno == ENFILE) &&
		   lt_fd_reclaim())
		;
	if (fd < 0 || fstat(fd, &st) != 0)
	{
		lt_code		rc = errno_error(err, "open", full);

		if (fd >= 0)
			close(fd);
		lt_fd_release();
		lt_free(full);
		return rc;
	}
	if (!S_ISREG(st.st_mode))
	{
		close(fd);
		lt_fd_release();
		lt_error_set(err, LT_EIO, "%s: not a regular file (%s)", full, lt_file_kind(st.st_mode));
		lt_free(full);
		return LT_EIO;
	}
	f = lt_calloc(1, sizeof(local_file));
	if (!f)
	{
		close(fd);
		lt_fd_release();
		lt_free(full);
		return lt_nomem(err);
	}
	f->base.store = s;
	f->base.path = full;
	f->base.size = (uint64_t) st.st_size;
	f->fd = fd;
	*out = &f->base;
	return LT_OK;
}

static lt_code
local_read(lt_rfile *rf, uint64_t offset, uint64_t length, uint8_t *dst, lt_error *err)
{
	local_file *f = (local_file *) rf;

	while (length > 0)
	{
		ssize_t		n = pread(f->fd, dst, length > (1u << 30) ? (1u << 30) : length, (off_t) offset);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return errno_error(err, "read", rf->path);
		}
		if (n == 0)
			return lt_corrupt(err, "%s: unexpected end of file at offset %llu", rf->path,
							  (unsigned long long) offset);
		dst += n;
		offset += (uint64_t) n;
		length -= (uint64_t) n;
	}
	return LT_OK;
}

static void
local_close(lt_rfile *rf)
{
	local_file *f = (local_file *) rf;

	close(f->fd);
	lt_fd_release();
	lt_free(rf->path);
	lt_free(f);
}

static lt_code
local_list(lt_store *s, const char *dir, const lt_list_opts *opts, lt_list_cb cb, void *arg, lt_error *err)
{
	char	   *full = full_path(s, dir);
	DIR		   *d;
	struct dirent *de;
	lt_code		rc = LT_OK;
	bool		names_only = opts && opts->names_only;
	const char *after = opts ? opts->start_after : NULL;

	if (!full)
		return lt_nomem(err);
	d = opendir(full);
	if (!d)
	{
		rc = errno_error(err, "list", full);
		lt_free(full);
		return rc;
	}
	while ((de = readdir(d)) != NULL)
	{
		lt_dirent	ent = {de->d_name, false, 0, 0, false};
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (after && strcmp(de->d_name, after) <= 0)
			continue;
		/* the names alone need no stat per entry (a directory of thousands of manifests) */
		if (names_only && de->d_type != DT_UNKNOWN && de->d_type != DT_LNK)
		{
			ent.is_dir = de->d_type == DT_DIR;
			ent.special = de->d_type != DT_DIR && de->d_type != DT_REG;
		}
		else
		{
			if (fstatat(dirfd(d), de->d_name, &st, 0) != 0)
				continue;		/* vanished meanwhile */
			ent.is_dir = S_ISDIR(st.st_mode);
			ent.special = !ent.is_dir && !S_ISREG(st.st_mode);
			ent.size = ent.is_dir ? 0 : (uint64_t) st.st_size;
			ent.mtime_ms = (int64_t) st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
		}
		if (cb(&ent, arg))
			break;
	}
	closedir(d);
	lt_free(full);
	return rc;
}

static lt_code
local_stat(lt_store *s, const char *path, lt_stat *out, lt_error *err)
{
	char	   *full = full_path(s, path);
	struct stat st;
	lt_code		rc = LT_OK;

	if (!full)
		return lt_nomem(err);
	if (stat(full, &st) != 0)
		rc = errno_error(err, "stat", full);
	else
	{
		out->is_dir = S_ISDIR(st.st_mode);
		out->special = !out->is_dir && !S_ISREG(st.st_mode);
		out->size = out->is_dir ? 0 : (uint64_t) st.st_size;
		/* ctime: a rename into place and every name added to or removed from a directory move it */
		out->change_ns = (int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	}
	lt_free(full);
	return rc;
}

/* Create the parent directories of full (which is a file path). */
static lt_code
make_parents(char *full, lt_error *err)
{
	char	   *p;

	for (p = full + 1; *p; p++)
	{
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(full, 0777) != 0 && errno != EEXIST)
		{
			lt_code		rc = errno_error(err, "mkdir", full);

			*p = '/';
			return rc;
		}
		*p = '/';
	}
	return LT_OK;
}

/*
 * Create full (a new file, O_EXCL) for writing into *fd; its parent directories are made only when the
 * create reports them missing, so a put into an existing directory costs no mkdir of every ancestor.
 */
static lt_code
create_file(char *full, int *fd, lt_error *err)
{
	*fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (*fd < 0 && errno == ENOENT)
	{
		LT_TRY(make_parents(full, err));
		*fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	}
	return *fd < 0 ? errno_error(err, "create", full) : LT_OK;
}

/* fsync the directory holding full (a new name in it becomes durable); best effort. */
static void
sync_parent(char *full)
{
	char	   *slash = strrchr(full, '/');
	int			dfd;

	if (!slash || slash == full)
		return;
	*slash = '\0';
	dfd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
	{
		(void) fsync(dfd);
		close(dfd);
	}
	*slash = '/';
}

/* A new file of the parts' bytes, one after another. */
static lt_code
write_file(char *full, const lt_part *parts, int n_parts, bool sync, lt_error *err)
{
	int			fd;

	LT_TRY(create_file(full, &fd, err));
	for (int i = 0; i < n_parts; i++)
	{
		const uint8_t *data = parts[i].data;
		uint64_t	len = parts[i].len;

		while (len > 0)
		{
			ssize_t		n = write(fd, data, len > (1u << 30) ? (1u << 30) : len);

			if (n < 0)
			{
				if (errno == EINTR)
					continue;
				lt_code		rc = errno_error(err, "write", full);

				close(fd);
				unlink(full);
				return rc;
			}
			data += n;
			len -= (uint64_t) n;
		}
	}
	if ((sync && fsync(fd) != 0) || close(fd) != 0)
	{
		lt_code		rc = errno_error(err, sync ? "fsync" : "close", full);

		unlink(full);
		return rc;
	}
	return LT_OK;
}

/*
 * Write a temp file and move it into place: link() when exclusive (never replaces), else rename().
 * sync: the bytes are fsync'd first and the directory after the move (the new name is durable too:
 * a manifest's name is the commit itself, a deletion file's what the manifest points to).
 */
static lt_code
put_via_temp(lt_store *s, const char *path, const lt_part *parts, int n_parts, bool exclusive, bool sync,
			 lt_error *err)
{
	char	   *full = full_path(s, path);
	char	   *tmp;
	lt_code		rc;
	static unsigned counter;

	if (!full)
		return lt_nomem(err);
	tmp = lt_asprintf("%s.tmp-%d-%u", full, (int) getpid(), counter++);
	if (!tmp)
	{
		lt_free(full);
		return lt_nomem(err);
	}
	rc = write_file(tmp, parts, n_parts, sync, err);
	if (rc == LT_OK)
	{
		if (exclusive)
		{
			if (link(tmp, full) != 0)
				rc = errno == EEXIST
					? lt_error_set(err, LT_ECONFLICT, "%s already exists", full)
					: errno_error(err, "link", full);
			unlink(tmp);
			if (rc == LT_OK && sync)
				sync_parent(full);
		}
		else if (rename(tmp, full) != 0)
		{
			rc = errno_error(err, "rename", full);
			unlink(tmp);
		}
		else if (sync)
			sync_parent(full);
	}
	lt_free(tmp);
	lt_free(full);
	return rc;
}

static lt_code
local_put(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	lt_part		part = {data, len};

	return put_via_temp(s, path, &part, 1, false, !s->no_fsync, err);
}

static lt_code
local_put_unsynced(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	lt_part		part = {data, len};

	return put_via_temp(s, path, &part, 1, false, false, err);
}

static lt_code
local_put_if_absent(lt_store *s, const char *path, const uint8_t *data, uint64_t len, lt_error *err)
{
	lt_part		part = {data, len};

	return put_via_temp(s, path, &part, 1, true, !s->no_fsync, err);
}

static lt_code
local_put_if_absent_parts(lt_store *s, const char *path, const lt_part *parts, int n, lt_error *err)
{
	return put_via_temp(s, path, parts, n, true, !s->no_fsync, err);
}

static lt_code
local_remove(lt_store *s, const char *path, lt_error *err)
{
	char	   *full = full_path(s, path);
	lt_code		rc = LT_OK;

	if (!full)
		return lt_nomem(err);
	if (unlink(full) != 0)
		rc = errno_error(err, "remove", full);
	lt_free(full);
	return rc;
}

static void
local_destroy(lt_store *s)
{
	lt_free(s->root);
	lt_free(s);
}

/* ---- streaming writes: a temp file next to the target, linked into place at finish ---- */

typedef struct local_wfile
{
	lt_wfile	base;
	int			fd;
	char	   *full;
	char	   *tmp;
	uint64_t	off;			/* bytes written */
	uint64_t	flushed;		/* bytes whose writeback was started */
	uint8_t    *buf;			/* small writes gather here: a data file's pages and metadata */
	size_t		buffered;		/* come in ~30 writes of tens of bytes, one syscall each otherwise */
} local_wfile;

/* below glibc's mmap threshold, so that a commit's buffer is no mmap/munmap pair */
#define WRITE_BUFFER ((size_t) 64 << 10)

/*
 * A big file's bytes start going to disk while it is still being written (as PostgreSQL's
 * *_flush_after settings do), so that the fsync at finish has little left to wait for.
 */
#define WRITEBACK_AFTER ((uint64_t) 4 << 20)

static void
local_wfile_free(local_wfile *f)
{
	lt_free(f->buf);
	lt_free(f->full);
	lt_free(f->tmp);
	lt_free(f->base.path);
	lt_free(f);
}

static lt_code
local_create(lt_store *s, const char *path, lt_wfile **out, lt_error *err)
{
	static unsigned counter;
	local_wfile *f = lt_calloc(1, sizeof(local_wfile));
	lt_code		rc;

	if (!f)
		return lt_nomem(err);
	f->fd = -1;
	f->base.store = s;
	f->base.path = lt_strdup(path);
	f->full = full_path(s, path);
	f->buf = lt_malloc(WRITE_BUFFER);
	if (!f->base.path || !f->full || !f->buf ||
		!(f->tmp = lt_asprintf("%s.tmp-%d-%u", f->full, (int) getpid(), counter++)))
	{
		local_wfile_free(f);
		return lt_nomem(err);
	}
	if ((rc = create_file(f->tmp, &f->fd, err)) != LT_OK)
	{
		local_wfile_free(f);
		return rc;
	}
	*out = &f->base;
	return LT_OK;
}

/* write(2) all of data, looping over short writes */
static lt_code
write_all(local_wfile *f, const uint8_t *data, uint64_t len, lt_error *err)
{
	while (len > 0)
	{
		ssize_t		n = write(f->fd, data, len > (1u << 30) ? (1u << 30) : len);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return errno_error(err, "write", f->tmp);
		}
		data += n;
		len -= (uint64_t) n;
	}
	return LT_OK;
}

/* write out what the buffer holds */
static lt_code
local_flush(local_wfile *f, lt_error *err)
{
	size_t		n = f->buffered;

	f->buffered = 0;
	return n ? write_all(f, f->buf, n, err) : LT_OK;
}

static lt_code
local_write(lt_wfile *wf, const uint8_t *data, uint64_t len, lt_error *err)
{
	local_wfile *f = (local_wfile *) wf;
	lt_code		rc;
	uint64_t	written;

	f->off += len;
	if (f->buffered + len <= WRITE_BUFFER)
	{
		memcpy(f->buf + f->buffered, data, len);
		f->buffered += len;
		return LT_OK;
	}
	if ((rc = local_flush(f, err)) != LT_OK)
		return rc;
	if (len < WRITE_BUFFER)
	{
		memcpy(f->buf, data, len);
		f->buffered = len;
	}
	else if ((rc = write_all(f, data, len, err)) != LT_OK)
		return rc;
	written = f->off - f->buffered;
#ifdef SYNC_FILE_RANGE_WRITE
	if (written - f->flushed >= WRITEBACK_AFTER && !wf->store->no_fsync)
	{
		/* a hint: errors show at the fsync */
		(void) sync_file_range(f->fd, (off_t) f->flushed, (off_t) (written - f->flushed), SYNC_FILE_RANGE_WRITE);
		f->flushed = written;
	}
#endif
	(void) written;
	return LT_OK;
}

static void
local_abort(lt_wfile *wf)
{
	local_wfile *f = (local_wfile *) wf;

	if (f->fd >= 0)
		close(f->fd);
	unlink(f->tmp);
	local_wfile_free(f);
}

static lt_code
local_finish(lt_wfile *wf, lt_error *err)
{
	local_wfile *f = (local_wfile *) wf;
	lt_code		rc = LT_OK;
	int			fd = f->fd;

	rc = local_flush(f, err);
	f->fd = -1;
	if (rc == LT_OK && !wf->store->no_fsync && fsync(fd) != 0)
		rc = errno_error(err, "fsync", f->tmp);
	if (close(fd) != 0 && rc == LT_OK)
		rc = errno_error(err, "close", f->tmp);
	/* link, not rename: never replace an object that appeared meanwhile */
	if (rc == LT_OK && link(f->tmp, f->full) != 0)
		rc = errno == EEXIST ? lt_error_set(err, LT_ECONFLICT, "%s already exists", f->full)
			: errno_error(err, "link", f->full);
	unlink(f->tmp);
	if (rc == LT_OK && !wf->store->no_fsync)
		sync_parent(f->full);	/* make the new name durable too */
	local_wfile_free(f);
	return rc;
}

static const lt_store_ops local_ops = {
	.open = local_open, .read = local_read, .close = local_close, .list = local_list, .put = local_put,
	.put_if_absent = local_put_if_absent, .put_if_absent_parts = local_put_if_absent_parts, .remove = local_remove, .destroy = local_destroy,
	.create = local_create, .write = local_write, .finish = local_finish, .abort = local_abort,
	.put_unsynced = local_put_unsynced, .stat = local_stat
};

lt_code
lt_store_local_open(const char *root, lt_store **out, lt_error *err)
{
	lt_store   *s;
	struct stat st;
	size_t		n;

	*out = NULL;
	if (strncmp(root, "file://", 7) == 0)
		root += 7;
	if (stat(root, &st) != 0)
		return errno_error(err, "open", root);
	if (!S_ISDIR(st.st_mode))
		return lt_error_set(err, LT_ENOTFOUND, "%s: not a directory", root);
	s = lt_calloc(1, sizeof(lt_store));
	if (!s)
		return lt_nomem(err);
	s->ops = &local_ops;
	s->root = lt_strdup(root);
	if (!s->root)
	{
		lt_free(s);
		return lt_nomem(err);
	}
	n = strlen(s->root);
	while (n > 1 && s->root[n - 1] == '/')
		s->root[--n] = '\0';
	s->coalesce_gap = 64 * 1024;	/* local reads: merge ranges closer than 64 KiB */
	*out = s;
	return LT_OK;
}
