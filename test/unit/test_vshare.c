/*
 * test_vshare.c — the shared vector index cache's files (vector/lt_vshare.h) and lt_vcache over them:
 * written and mapped back byte for byte, damaged / truncated / foreign files refused (and removed),
 * the directory kept under its bound least recently used first, and lt_vcache mapping a published
 * entry in a "process" that does not hold it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "vector/lt_vcache.h"
#include "vector/lt_vshare.h"

static char dir_buf[] = "/tmp/lt_vshare_unit.XXXXXX";
static const char *dir;

/* The one .ltvc file in dir (the test writes one at a time where it damages them). */
static bool
only_file(char *out, size_t cap)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	int			n = 0;

	while (d && (de = readdir(d)) != NULL)
		if (strstr(de->d_name, ".ltvc"))
		{
			snprintf(out, cap, "%s/%s", dir, de->d_name);
			n++;
		}
	if (d)
		closedir(d);
	return n == 1;
}

static uint64_t
dir_bytes(int *files)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	uint64_t	b = 0;

	*files = 0;
	while (d && (de = readdir(d)) != NULL)
	{
		char		p[512];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (strstr(de->d_name, ".ltvc") && stat(p, &st) == 0)
		{
			b += (uint64_t) st.st_size;
			(*files)++;
		}
	}
	if (d)
		closedir(d);
	return b;
}

static void
clear_dir(void)
{
	char		cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -f %s/*.ltvc %s/.tmp-*", dir, dir);
	CHECK(system(cmd) == 0);
}

static void
fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char) (i * 31 + seed);
}

TEST(sum)
{
	unsigned char a[1000];

	fill(a, sizeof(a), 1);
	CHECK(lt_vshare_sum(a, sizeof(a), 0) == lt_vshare_sum(a, sizeof(a), 0));
	CHECK(lt_vshare_sum(a, sizeof(a), 0) != lt_vshare_sum(a, sizeof(a), 1));
	/* every single byte (in the blocks and in the tail) and the length count */
	for (size_t i = 0; i < sizeof(a); i += 37)
	{
		uint64_t	h0 = lt_vshare_sum(a, sizeof(a), 0);

		a[i] ^= 1;
		CHECK(lt_vshare_sum(a, sizeof(a), 0) != h0);
		a[i] ^= 1;
	}
	CHECK(lt_vshare_sum(a, 999, 0) != lt_vshare_sum(a, 1000, 0));
	CHECK(lt_vshare_sum(a, 0, 0) != lt_vshare_sum(a, 0, 1));
}

TEST(write_map)
{
	unsigned char data[5000];
	lt_vshare_map m;

	CHECK(!lt_vshare_enabled());
	CHECK(!lt_vshare_write("k", 1, data, sizeof(data), NULL));	/* no directory: nothing written */
	CHECK(lt_vshare_open("k", 1, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_configure(dir, 1 << 20, 7));
	CHECK(lt_vshare_enabled());
	fill(data, sizeof(data), 3);
	CHECK(lt_vshare_open("root\x1f_indices/u/\x1f" "3", 1, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_write("root\x1f_indices/u/\x1f" "3", 1, data, sizeof(data), NULL));
	CHECK(lt_vshare_open("root\x1f_indices/u/\x1f" "3", 1, &m) == LT_VSHARE_HIT);
	CHECK(m.len == sizeof(data) && memcmp(m.data, data, sizeof(data)) == 0);
	CHECK(((uintptr_t) m.data % 64) == 0);
	lt_vshare_close(&m);
	CHECK(m.base == NULL);
	/* the writer may map what it wrote at once */
	fill(data, sizeof(data), 4);
	CHECK(lt_vshare_write("root\x1f_indices/u/\x1f" "3", 1, data, sizeof(data), &m));
	CHECK(m.base != NULL && m.len == sizeof(data) && memcmp(m.data, data, sizeof(data)) == 0);
	lt_vshare_close(&m);
	CHECK(lt_vshare_open("root\x1f_indices/u/\x1f" "3", 1, &m) == LT_VSHARE_HIT);	/* replaced whole */
	CHECK(m.len == sizeof(data) && memcmp(m.data, data, sizeof(data)) == 0);
	lt_vshare_close(&m);
	/* another part, another key, another build: not that file */
	CHECK(lt_vshare_open("root\x1f_indices/u/\x1f" "3", 2, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_open("root\x1f_indices/v/\x1f" "3", 1, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_configure(dir, 1 << 20, 8));
	CHECK(lt_vshare_open("root\x1f_indices/u/\x1f" "3", 1, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_configure(dir, 1 << 20, 7));
	/* an empty entry, and one larger than the bound (not written) */
	CHECK(lt_vshare_write("empty", 0, data, 0, NULL));
	CHECK(lt_vshare_open("empty", 0, &m) == LT_VSHARE_HIT && m.len == 0);
	lt_vshare_close(&m);
	CHECK(lt_vshare_configure(dir, 4096, 7));
	CHECK(!lt_vshare_write("big", 0, data, sizeof(data), NULL));
	CHECK(lt_vshare_open("big", 0, &m) == LT_VSHARE_MISS);
	/* a directory that cannot be made: refused */
	CHECK(!lt_vshare_configure("/proc/lt_vshare_no/such", 1 << 20, 7));
	CHECK(!lt_vshare_enabled());
	CHECK(lt_vshare_configure(NULL, 0, 0));
	clear_dir();
}

/* Damage the one file in dir with f, then check it is refused and removed, and a write puts it back. */
static void
damaged(const char *what, void (*f)(int fd, off_t size))
{
	unsigned char data[3000];
	char		path[512];
	lt_vshare_map m;
	struct stat st;
	int			fd;

	fill(data, sizeof(data), 5);
	CHECK(lt_vshare_write("key", 4, data, sizeof(data), NULL));
	CHECK(only_file(path, sizeof(path)));
	CHECK((fd = open(path, O_RDWR)) >= 0);
	CHECK(fstat(fd, &st) == 0);
	f(fd, st.st_size);
	close(fd);
	if (lt_vshare_open("key", 4, &m) != LT_VSHARE_BAD)
	{
		fprintf(stderr, "FAIL %s: a file %s was not refused\n", unit_current, what);
		unit_failures++;
		lt_vshare_close(&m);
	}
	CHECK(access(path, F_OK) != 0);	/* removed */
	CHECK(lt_vshare_open("key", 4, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_write("key", 4, data, sizeof(data), NULL));
	CHECK(lt_vshare_open("key", 4, &m) == LT_VSHARE_HIT && m.len == sizeof(data) && memcmp(m.data, data, sizeof(data)) == 0);
	lt_vshare_close(&m);
	clear_dir();
}

static void
flip_at(int fd, off_t at)
{
	unsigned char c;

	CHECK(pread(fd, &c, 1, at) == 1);
	c ^= 0x10;
	CHECK(pwrite(fd, &c, 1, at) == 1);
}

static void
flip_data_first(int fd, off_t size)
{
	flip_at(fd, size - 3000);
}

static void
flip_data_last(int fd, off_t size)
{
	flip_at(fd, size - 1);
}

static void
flip_magic(int fd, off_t size)
{
	flip_at(fd, 0);
}

static void
flip_length(int fd, off_t size)
{
	flip_at(fd, 40);			/* data_len */
}

static void
flip_key(int fd, off_t size)
{
	flip_at(fd, 64);			/* the key's first byte: the header's checksum */
}

static void
truncate_data(int fd, off_t size)
{
	CHECK(ftruncate(fd, size - 1) == 0);
}

static void
truncate_header(int fd, off_t size)
{
	CHECK(ftruncate(fd, 10) == 0);
}

static void
extend(int fd, off_t size)
{
	CHECK(pwrite(fd, "x", 1, size) == 1);
}

TEST(reject)
{
	CHECK(lt_vshare_configure(dir, 1 << 20, 7));
	damaged("with its first data byte changed", flip_data_first);
	damaged("with its last data byte changed", flip_data_last);
	damaged("with its magic changed", flip_magic);
	damaged("with its length changed", flip_length);
	damaged("with its key changed", flip_key);
	damaged("truncated by a byte", truncate_data);
	damaged("truncated inside the header", truncate_header);
	damaged("a byte longer", extend);
	CHECK(lt_vshare_configure(NULL, 0, 0));
}

/* Set a file's last use (its modification time) to t seconds ago. */
static void
age(const char *key, int64_t part, int seconds)
{
	lt_vshare_map m;

	/* the file's name is not public: find it as the one opened, through its mapping's inode */
	CHECK(lt_vshare_open(key, part, &m) == LT_VSHARE_HIT);
	{
		DIR		   *d = opendir(dir);
		struct dirent *de;
		struct stat mst;
		int			fd;
		char		p[512];

		/* the mapping's file: the only one whose contents start with this key at byte 64 */
		while (d && (de = readdir(d)) != NULL)
		{
			char		k[64] = {0};

			if (!strstr(de->d_name, ".ltvc"))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			if ((fd = open(p, O_RDONLY)) < 0)
				continue;
			if (pread(fd, k, strlen(key), 64) == (ssize_t) strlen(key) && memcmp(k, key, strlen(key)) == 0 &&
				fstat(fd, &mst) == 0)
			{
				struct timespec ts[2];

				clock_gettime(CLOCK_REALTIME, &ts[0]);
				ts[0].tv_sec -= seconds;
				ts[1] = ts[0];
				CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
			}
			close(fd);
		}
		if (d)
			closedir(d);
	}
	lt_vshare_close(&m);
}

TEST(evict)
{
	unsigned char data[1000];
	lt_vshare_map m;
	int			files;
	uint64_t	b;

	/* each file: 64 + a key of 2 (padded to 128) + 1000 bytes */
	CHECK(lt_vshare_configure(dir, 6 * 1128, 7));
	fill(data, sizeof(data), 9);
	for (int i = 0; i < 5; i++)
	{
		char		k[8];

		snprintf(k, sizeof(k), "k%d", i);
		CHECK(lt_vshare_write(k, 0, data, sizeof(data), NULL));
		age(k, 0, 100 - i);		/* k0 the least recently used */
	}
	CHECK(dir_bytes(&files) == 5 * 1128 && files == 5);
	/* k0 used now: k1 is the oldest */
	CHECK(lt_vshare_open("k0", 0, &m) == LT_VSHARE_HIT);
	lt_vshare_close(&m);
	b = lt_vshare_evict(3 * 1128);
	CHECK_EQ_INT(b, 3 * 1128);
	CHECK(lt_vshare_open("k1", 0, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_open("k2", 0, &m) == LT_VSHARE_MISS);
	CHECK(lt_vshare_open("k0", 0, &m) == LT_VSHARE_HIT);
	lt_vshare_close(&m);
	CHECK(lt_vshare_open("k4", 0, &m) == LT_VSHARE_HIT);
	lt_vshare_close(&m);
	/* writes past the bound evict by themselves: the directory never holds more than it */
	for (int i = 10; i < 30; i++)
	{
		char		k[8];

		snprintf(k, sizeof(k), "k%d", i);
		CHECK(lt_vshare_write(k, 0, data, sizeof(data), NULL));
		CHECK(dir_bytes(&files) <= 6 * 1128 + 1128);
	}
	CHECK(dir_bytes(&files) <= 6 * 1128);
	CHECK(lt_vshare_open("k29", 0, &m) == LT_VSHARE_HIT);	/* the newest stays */
	lt_vshare_close(&m);
	/* a mapped file that is evicted stays readable through its mapping */
	CHECK(lt_vshare_open("k29", 0, &m) == LT_VSHARE_HIT);
	lt_vshare_evict(0);
	CHECK(dir_bytes(&files) == 0 && files == 0);
	CHECK(m.len == sizeof(data) && memcmp(m.data, data, sizeof(data)) == 0);
	lt_vshare_close(&m);
	/* a temporary file left by a writer that died long ago is removed; a fresh one is not */
	{
		char		p[512];
		struct timespec ts[2] = {{0, 0}, {0, 0}};
		int			fd;

		snprintf(p, sizeof(p), "%s/.tmp-1-1", dir);
		CHECK((fd = open(p, O_CREAT | O_WRONLY, 0600)) >= 0);
		close(fd);
		CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
		snprintf(p, sizeof(p), "%s/.tmp-1-2", dir);
		CHECK((fd = open(p, O_CREAT | O_WRONLY, 0600)) >= 0);
		close(fd);
		lt_vshare_evict(0);
		CHECK(access(p, F_OK) == 0);
		snprintf(p, sizeof(p), "%s/.tmp-1-1", dir);
		CHECK(access(p, F_OK) != 0);
	}
	CHECK(lt_vshare_configure(NULL, 0, 0));
	clear_dir();
}

/* lt_vcache over the directory: a published entry is mapped by a process that does not hold it */
TEST(vcache_shared)
{
	lt_vcache_stats st0,
				st;
	unsigned char *a,
			   *b;
	size_t		len = 0;

	lt_vcache_configure(NULL, 1 << 16);
	CHECK(lt_vcache_configure_shared(dir, 1 << 20, 11));
	lt_vcache_stats_get(&st0);
	CHECK((a = lt_vcache_put("seg", 3, 2000, false)) != NULL);
	fill(a, 2000, 13);
	lt_vcache_publish(a);
	CHECK((b = lt_vcache_put("seg", LT_VCACHE_MODEL, 100, true)) != NULL);	/* not published */
	fill(b, 100, 1);
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.shared_writes - st0.shared_writes, 1);
	/* the published entry (unpinned) moved to the file's pages; the pinned one stays the process's */
	CHECK_EQ_INT(st.mapped_entries, 1);
	CHECK_EQ_INT(st.entries, 1);
	CHECK_EQ_INT(st.shared_hits - st0.shared_hits, 0);
	a = lt_vcache_get("seg", 3, &len, false);
	CHECK(a != NULL && len == 2000);
	if (a)
	{
		unsigned char want[2000];

		fill(want, 2000, 13);
		CHECK(memcmp(a, want, 2000) == 0);
	}
	/* a pinned entry published stays the process's (its holder uses it), and is written once */
	{
		unsigned char *c = lt_vcache_put("seg2", 0, 300, true);

		CHECK(c != NULL);
		if (c)
		{
			fill(c, 300, 2);
			lt_vcache_stats_get(&st0);
			lt_vcache_publish(c);
			lt_vcache_publish(c);
			lt_vcache_stats_get(&st);
			CHECK_EQ_INT(st.shared_writes - st0.shared_writes, 1);
			CHECK_EQ_INT(st.mapped_entries, 1);
			CHECK(lt_vcache_get("seg2", 0, NULL, false) == c);
			lt_vcache_unpin(c);
			/* its last pin dropped: it gives way to the file's pages too */
			lt_vcache_stats_get(&st);
			CHECK_EQ_INT(st.mapped_entries, 2);
			CHECK_EQ_INT(st.entries, 1);
			c = lt_vcache_get("seg2", 0, &len, false);
			CHECK(c != NULL && len == 300);
			if (c)
			{
				unsigned char want[300];

				fill(want, 300, 2);
				CHECK(memcmp(c, want, 300) == 0);
			}
		}
	}
	lt_vcache_unpin(b);
	lt_vcache_configure_shared(NULL, 0, 0);	/* another process maps nothing at first */
	CHECK(lt_vcache_configure_shared(dir, 1 << 20, 11));

	/* another process: its own cache empty */
	lt_vcache_configure(NULL, 0);
	lt_vcache_configure(NULL, 1 << 16);
	lt_vcache_stats_get(&st0);
	CHECK(lt_vcache_get("seg", LT_VCACHE_MODEL, NULL, false) == NULL);	/* never published */
	a = lt_vcache_get("seg", 3, &len, true);
	CHECK(a != NULL && len == 2000);
	if (a)
	{
		unsigned char want[2000];

		fill(want, 2000, 13);
		CHECK(memcmp(a, want, 2000) == 0);
		CHECK(((uintptr_t) a % 16) == 0);
	}
	CHECK(lt_vcache_get("seg", 3, NULL, false) == a);	/* mapped once */
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.shared_hits - st0.shared_hits, 1);
	CHECK_EQ_INT(st.hits - st0.hits, 1);
	CHECK_EQ_INT(st.misses - st0.misses, 1);
	CHECK_EQ_INT(st.entries, 0);	/* none of its own memory */
	CHECK_EQ_INT(st.mapped_entries, 1);
	CHECK(st.mapped_bytes == 2000);
	/* pinned: the mapping outlives a change of the bound; unpinned, it goes */
	lt_vcache_configure_shared(NULL, 0, 0);
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.mapped_entries, 1);
	lt_vcache_unpin(a);
	CHECK(lt_vcache_configure_shared(dir, 1 << 20, 11));
	CHECK(lt_vcache_configure_shared(dir, 1, 11));	/* a bound of one byte: nothing mapped stays */
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.mapped_entries, 0);
	/* with no memory of its own (budget 0), the process still reads what others shared */
	CHECK(lt_vcache_configure_shared(dir, 1 << 20, 11));
	lt_vcache_configure(NULL, 0);
	CHECK(lt_vcache_get("seg", 3, NULL, false) != NULL);
	/* a put over a mapped entry replaces it with the process's own */
	lt_vcache_configure(NULL, 1 << 16);
	CHECK((a = lt_vcache_put("seg", 3, 10, false)) != NULL);
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.mapped_entries, 0);
	CHECK(lt_vcache_get("seg", 3, &len, false) == a && len == 10);
	lt_vcache_configure(NULL, 0);
	lt_vcache_configure_shared(NULL, 0, 0);
	lt_vcache_stats_get(&st);
	CHECK_EQ_INT(st.entries + st.mapped_entries, 0);
	clear_dir();
}

int
main(void)
{
	if ((dir = mkdtemp(dir_buf)) == NULL)
	{
		perror("mkdtemp");
		return 1;
	}
	RUN(sum);
	RUN(write_map);
	RUN(reject);
	RUN(evict);
	RUN(vcache_shared);
	rmdir(dir);
	return unit_report("vshare");
}
