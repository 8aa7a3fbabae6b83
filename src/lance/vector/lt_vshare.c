/*
 * lt_vshare.c — vector index cache entries as files mapped by every process (see lt_vshare.h).
 *
 * A file: the 64-byte header below, the key's bytes, zeros up to a multiple of 64, the entry.  Its
 * name is a hash of (build, key, part); the header says which key and part it holds, so two keys of
 * one hash only miss each other.  Renames make a file appear whole; the checksum catches what a crash
 * of the machine (a renamed file whose pages never reached the disk) or a damaged disk leaves.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "vector/lt_vshare.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/lt_alloc.h"

#define MAGIC "LTVCACHE"
#define SUFFIX ".ltvc"
#define TMP_PREFIX ".tmp-"
#define TMP_STALE_SECONDS 600	/* a temporary file this old was left by a writer that died */

typedef struct file_hdr
{
	char		magic[8];
	uint32_t	format;
	uint32_t	key_len;
	uint64_t	build;
	int64_t		part;
	uint64_t	data_off;
	uint64_t	data_len;
	uint64_t	data_sum;
	uint64_t	head_sum;		/* of this header (with head_sum 0, data_sum set) and the key */
} file_hdr;

_Static_assert(sizeof(file_hdr) == 64, "the file header is 64 bytes");

static struct
{
	char		dir[1024];
	bool		on;
	uint64_t	max_bytes;
	uint64_t	build;
	int64_t		est;			/* the directory's bytes as this process last knew them; -1 unknown */
	uint64_t	tmp_seq;
} vs = {.est = -1};

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL

static inline uint64_t
rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t
mix(uint64_t acc, uint64_t in)
{
	acc += in * P2;
	return rotl(acc, 31) * P1;
}

static inline uint64_t
load64(const unsigned char *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return v;
}

/* Four independent lanes over 32-byte blocks (so the loop runs at memory speed), then the tail. */
uint64_t
lt_vshare_sum(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data,
			   *end = p + len;
	uint64_t	h;

	if (len >= 32)
	{
		uint64_t	v0 = seed + P1 + P2,
					v1 = seed + P2,
					v2 = seed,
					v3 = seed - P1;

		for (; end - p >= 32; p += 32)
		{
			v0 = mix(v0, load64(p));
			v1 = mix(v1, load64(p + 8));
			v2 = mix(v2, load64(p + 16));
			v3 = mix(v3, load64(p + 24));
		}
		h = rotl(v0, 1) + rotl(v1, 7) + rotl(v2, 12) + rotl(v3, 18);
		h = (h ^ mix(0, v0)) * P1 + P4;
		h = (h ^ mix(0, v1)) * P1 + P4;
		h = (h ^ mix(0, v2)) * P1 + P4;
		h = (h ^ mix(0, v3)) * P1 + P4;
	}
	else
		h = seed + P3;
	h += (uint64_t) len;
	for (; end - p >= 8; p += 8)
		h = rotl(h ^ mix(0, load64(p)), 27) * P1 + P4;
	for (; p < end; p++)
		h = rotl(h ^ (*p * P3), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	return h ^ (h >> 32);
}

bool
lt_vshare_configure(const char *dir, uint64_t max_bytes, uint64_t build)
{
	size_t		n = dir ? strlen(dir) : 0;

	vs.on = false;
	vs.est = -1;
	vs.dir[0] = '\0';
	if (n == 0 || max_bytes == 0)
		return true;
	if (n + 64 >= sizeof(vs.dir))
		return false;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return false;
	memcpy(vs.dir, dir, n + 1);
	vs.max_bytes = max_bytes;
	vs.build = build;
	vs.on = true;
	return true;
}

bool
lt_vshare_enabled(void)
{
	return vs.on;
}

static void
file_name(const char *key, int64_t part, char *out, size_t cap)
{
	uint64_t	h = lt_vshare_sum(key, strlen(key), vs.build ^ (uint64_t) part);

	snprintf(out, cap, "%s/%016llx" SUFFIX, vs.dir, (unsigned long long) h);
}

static uint64_t
head_sum(const file_hdr *hd, const char *key)
{
	file_hdr	c = *hd;

	c.head_sum = 0;
	return lt_vshare_sum(key, hd->key_len, lt_vshare_sum(&c, sizeof(c), 0));
}

static uint64_t
data_off_for(size_t key_len)
{
	return (sizeof(file_hdr) + key_len + 63) & ~(uint64_t) 63;
}

lt_vshare_found
lt_vshare_open(const char *key, int64_t part, lt_vshare_map *out)
{
	char		path[1024 + 32];
	struct stat st;
	size_t		key_len = strlen(key);
	unsigned char *m;
	file_hdr	hd;
	int			fd;

	memset(out, 0, sizeof(*out));
	if (!vs.on)
		return LT_VSHARE_MISS;
	file_name(key, part, path, sizeof(path));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return LT_VSHARE_MISS;
	/* only a regular file of this user, as our writers leave them, is ever read */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
	{
		close(fd);
		return LT_VSHARE_BAD;
	}
	if ((uint64_t) st.st_size < sizeof(file_hdr) ||
		(m = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED)
	{
		close(fd);
		if ((uint64_t) st.st_size < sizeof(file_hdr))
		{
			unlink(path);
			return LT_VSHARE_BAD;
		}
		return LT_VSHARE_MISS;
	}
	memcpy(&hd, m, sizeof(hd));
	if (memcmp(hd.magic, MAGIC, 8) != 0 || hd.format != LT_VSHARE_FORMAT || hd.build != vs.build ||
		hd.key_len > (uint64_t) st.st_size - sizeof(file_hdr) || hd.data_off != data_off_for(hd.key_len) ||
		hd.data_off > (uint64_t) st.st_size || hd.data_len != (uint64_t) st.st_size - hd.data_off ||
		hd.head_sum != head_sum(&hd, (const char *) m + sizeof(hd)))
	{
		munmap(m, (size_t) st.st_size);
		close(fd);
		unlink(path);
		return LT_VSHARE_BAD;
	}
	if (hd.key_len != key_len || hd.part != part || memcmp(m + sizeof(hd), key, key_len) != 0)
	{
		/* another entry of the same hash: not ours to remove */
		munmap(m, (size_t) st.st_size);
		close(fd);
		return LT_VSHARE_MISS;
	}
	if (lt_vshare_sum(m + hd.data_off, hd.data_len, hd.build ^ (uint64_t) part) != hd.data_sum)
	{
		munmap(m, (size_t) st.st_size);
		close(fd);
		unlink(path);
		return LT_VSHARE_BAD;
	}
	futimens(fd, NULL);			/* used now: the last to be evicted */
	close(fd);
	out->base = m;
	out->map_len = (size_t) st.st_size;
	out->data = m + hd.data_off;
	out->len = hd.data_len;
	return LT_VSHARE_HIT;
}

void
lt_vshare_close(lt_vshare_map *m)
{
	if (m->base)
		munmap(m->base, m->map_len);
	memset(m, 0, sizeof(*m));
}

static bool
write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len > 0)
	{
		ssize_t		w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		len -= (size_t) w;
	}
	return true;
}

bool
lt_vshare_write(const char *key, int64_t part, const void *data, size_t len, lt_vshare_map *out)
{
	static const unsigned char zeros[64];
	char		path[1024 + 32],
				tmp[1024 + 64];
	size_t		key_len = strlen(key);
	file_hdr	hd;
	uint64_t	total;
	int			fd;
	bool		ok;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!vs.on)
		return false;
	memset(&hd, 0, sizeof(hd));
	memcpy(hd.magic, MAGIC, 8);
	hd.format = LT_VSHARE_FORMAT;
	hd.key_len = (uint32_t) key_len;
	hd.build = vs.build;
	hd.part = part;
	hd.data_off = data_off_for(key_len);
	hd.data_len = len;
	total = hd.data_off + len;
	if (key_len > UINT32_MAX || total > vs.max_bytes)
		return false;
	hd.data_sum = lt_vshare_sum(data, len, hd.build ^ (uint64_t) part);
	hd.head_sum = head_sum(&hd, key);

	file_name(key, part, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s/" TMP_PREFIX "%d-%llu", vs.dir, (int) getpid(),
			 (unsigned long long) ++vs.tmp_seq);
	if ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)	/* read too: mapped after */
		return false;
	ok = write_all(fd, &hd, sizeof(hd)) && write_all(fd, key, key_len) &&
		write_all(fd, zeros, hd.data_off - sizeof(hd) - key_len) && write_all(fd, data, len);
	/* the writer maps what it wrote without checking it again */
	if (ok && out && (out->base = mmap(NULL, (size_t) total, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED)
		out->base = NULL;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0)
	{
		if (out)
			lt_vshare_close(out);
		unlink(tmp);
		return false;
	}
	if (out && out->base)
	{
		out->map_len = (size_t) total;
		out->data = (const unsigned char *) out->base + hd.data_off;
		out->len = len;
	}
	if (vs.est >= 0)
		vs.est += (int64_t) total;
	/* a scan of the directory only when this process's count says it may be over (and once at first) */
	if (vs.est < 0 || (uint64_t) vs.est > vs.max_bytes)
		lt_vshare_evict(vs.max_bytes - vs.max_bytes / 10);
	return true;
}

typedef struct file_ent
{
	char	   *name;
	uint64_t	bytes;
	struct timespec used;
} file_ent;

static int
ent_cmp(const void *a, const void *b)
{
	const file_ent *x = a,
			   *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

uint64_t
lt_vshare_evict(uint64_t max_bytes)
{
	DIR		   *d;
	struct dirent *de;
	file_ent   *ents = NULL;
	size_t		n = 0,
				cap = 0;
	uint64_t	total = 0;
	time_t		now = time(NULL);

	if (!vs.on || (d = opendir(vs.dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
	{
		struct stat st;
		size_t		nl = strlen(de->d_name);

		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0)
		{
			if (now - st.st_mtime > TMP_STALE_SECONDS)
				unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (nl < strlen(SUFFIX) || strcmp(de->d_name + nl - strlen(SUFFIX), SUFFIX) != 0)
			continue;
		if (n == cap)
		{
			file_ent   *g = lt_realloc(ents, sizeof(file_ent) * (cap = cap ? cap * 2 : 64));

			if (g == NULL)
				break;
			ents = g;
		}
		if ((ents[n].name = lt_strdup(de->d_name)) == NULL)
			break;
		ents[n].bytes = (uint64_t) st.st_size;
		ents[n].used = st.st_mtim;
		total += ents[n].bytes;
		n++;
	}
	if (total > max_bytes)
	{
		qsort(ents, n, sizeof(file_ent), ent_cmp);
		for (size_t i = 0; i < n && total > max_bytes; i++)
			if (unlinkat(dirfd(d), ents[i].name, 0) == 0)
				total -= ents[i].bytes;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		lt_free(ents[i].name);
	lt_free(ents);
	vs.est = (int64_t) total;
	return total;
}
