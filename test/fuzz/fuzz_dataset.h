/*
 * fuzz_dataset.h — what the fuzz targets over a whole dataset share (fuzz_index.c, fuzz_ivf.c).
 *
 * A dataset directory of test/data is read into memory once (fz_load); each input then replaces one
 * of its files in a fresh in-memory store (fz_store_with), so the library meets the damaged file in
 * a dataset that is otherwise intact.
 */
#ifndef FUZZ_DATASET_H
#define FUZZ_DATASET_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/lt_store.h"

#define FZ_MAX_FILES 64

typedef struct fz_file
{
	char	   *path;			/* relative to the dataset's root */
	uint8_t    *data;
	size_t		len;
} fz_file;

static fz_file fz_files[FZ_MAX_FILES];
static int	fz_n_files;

/* Read every file under root/rel (recursively) into fz_files. */
static void
fz_load(const char *root, const char *rel)
{
	char		path[2048];
	DIR		   *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)) && fz_n_files < FZ_MAX_FILES)
	{
		char		r2[1024];
		struct stat st;
		FILE	   *f;
		fz_file    *x;

		if (e->d_name[0] == '.')
			continue;
		snprintf(r2, sizeof(r2), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", root, r2);
		if (stat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
		{
			fz_load(root, r2);
			continue;
		}
		if (!(f = fopen(path, "rb")))
			continue;
		x = &fz_files[fz_n_files++];
		x->len = (size_t) st.st_size;
		x->data = malloc(x->len ? x->len : 1);
		if (fread(x->data, 1, x->len, f) != x->len)
			x->len = 0;
		fclose(f);
		x->path = strdup(r2);
	}
	closedir(d);
}

/* A fresh in-memory store holding the loaded dataset, with target's bytes replaced by data (target NULL: none). */
static lt_code
fz_store_with(const char *target, const uint8_t *data, size_t size, lt_store **out, lt_error *err)
{
	lt_code		rc = lt_store_mem_open(out, err);

	for (int i = 0; rc == LT_OK && i < fz_n_files; i++)
		if (target && strcmp(fz_files[i].path, target) == 0)
			rc = lt_store_mem_put(*out, target, data, size, err);
		else
			rc = lt_store_mem_put(*out, fz_files[i].path, fz_files[i].data, fz_files[i].len, err);
	return rc;
}

#endif
