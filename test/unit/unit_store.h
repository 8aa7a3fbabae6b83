/*
 * unit_store.h — test datasets into an in-memory store: a directory of test/data copied object by object.
 * For the unit tests that commit on a dataset (test_txn, test_assignment); include after unit.h.
 */
#ifndef UNIT_STORE_H
#define UNIT_STORE_H

#include <dirent.h>
#include <sys/stat.h>

#include "io/lt_store.h"

/* Copy test/data/<rel> (recursively) into s under prefix ("t/" → t/_versions/..., t/data/...). */
static inline void
unit_load_tree(lt_store *s, const char *rel, const char *prefix)
{
	char		path[1024];
	DIR		   *d;
	struct dirent *e;
	lt_error	err;

	snprintf(path, sizeof(path), "%s/%s", unit_data_dir(), rel);
	if (!(d = opendir(path)))
	{
		fprintf(stderr, "cannot open %s\n", path);
		unit_failures++;
		return;
	}
	while ((e = readdir(d)))
	{
		char		sub[1024], dst[1024], full[1200];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name);
		snprintf(dst, sizeof(dst), "%s%s", prefix, e->d_name);
		snprintf(full, sizeof(full), "%s/%s", unit_data_dir(), sub);
		if (stat(full, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
		{
			char		p2[1100];

			snprintf(p2, sizeof(p2), "%s/", dst);
			unit_load_tree(s, sub, p2);
		}
		else
		{
			size_t		len;
			uint8_t    *buf = unit_read_file(sub, &len);

			CHECK_OK(lt_store_mem_put(s, dst, buf, len, &err), err);
			free(buf);
		}
	}
	closedir(d);
}

#endif
