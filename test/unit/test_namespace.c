/*
 * test_namespace.c — the directory namespace (namespace/lt_ns_dir.c) on the __manifest the Lance 12 engine wrote.
 *
 * test/data/namespace/__manifest was written by @lancedb/lancedb 0.39.0 (Lance 12) through
 * test/interop/namespace/engine.mjs make: namespaces sales and sales$eu, tables sales$orders,
 * sales$eu$orders, sales$eu$customers, and the root table mtop (created with the listing disabled).  The
 * V1 side is made here in a temporary root beside a symlink to it: top.lance and events.lance (datasets
 * by their _versions/), gone.lance (marked .lance-deregistered), stray (no ".lance" suffix), and a file.
 */
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "namespace/lt_namespace.h"
#include "util/lt_alloc.h"

static char root[] = "/tmp/lt_ns_unitXXXXXX";

static void
touch(const char *rel)
{
	char		path[PATH_MAX];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

static void
mkdirs(const char *rel)
{
	char		path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

static lt_store *
open_root(void)
{
	lt_store   *s = NULL;
	lt_error	err;

	CHECK_OK(lt_store_local_open(root, &s, &err), err);
	return s;
}

/* The names of a listing joined by ',' ("ERR:<code>" when it fails). */
static void
list(lt_store *s, const char *ns, bool manifest, bool listing, bool migration, char *out, size_t outlen)
{
	lt_ns_dir_opts o = {manifest, listing, migration};
	lt_ns_table *t = NULL;
	size_t		n = 0;
	lt_error	err;
	lt_code		rc = lt_ns_dir_list_tables(s, ns, &o, &t, &n, &err);

	out[0] = '\0';
	if (rc != LT_OK)
	{
		snprintf(out, outlen, "ERR:%s", lt_code_name(rc));
		return;
	}
	for (size_t i = 0; i < n; i++)
	{
		strncat(out, i ? "," : "", outlen - strlen(out) - 1);
		strncat(out, t[i].name, outlen - strlen(out) - 1);
	}
	lt_ns_tables_free(t, n);
}

TEST(identifiers)
{
	CHECK(lt_ns_id_valid(""));
	CHECK(lt_ns_id_valid("t"));
	CHECK(lt_ns_id_valid("sales$eu$orders"));
	CHECK(!lt_ns_id_valid("$t"));
	CHECK(!lt_ns_id_valid("t$"));
	CHECK(!lt_ns_id_valid("a$$b"));
	CHECK(!lt_ns_id_valid("a/b"));
	CHECK(!lt_ns_id_valid("a$.."));
	CHECK(!lt_ns_id_valid("."));
	CHECK(!lt_ns_id_valid("a\\b"));
}

TEST(listing_modes)
{
	lt_store   *s = open_root();
	char		got[512];

	/* Lance 12's defaults: the root is the listing alone, children the manifest's */
	list(s, "", true, true, false, got, sizeof(got));
	CHECK(strcmp(got, "events,top") == 0);
	list(s, "sales", true, true, false, got, sizeof(got));
	CHECK(strcmp(got, "orders") == 0);
	list(s, "sales$eu", true, true, false, got, sizeof(got));
	CHECK(strcmp(got, "customers,orders") == 0);
	/* migration: the root merges both */
	list(s, "", true, true, true, got, sizeof(got));
	CHECK(strcmp(got, "events,mtop,top") == 0);
	/* manifest only */
	list(s, "", true, false, false, got, sizeof(got));
	CHECK(strcmp(got, "mtop") == 0);
	/* listing only: no child namespaces */
	list(s, "", false, true, false, got, sizeof(got));
	CHECK(strcmp(got, "events,top") == 0);
	list(s, "sales", false, true, false, got, sizeof(got));
	CHECK(strcmp(got, "ERR:LT_EUNSUPPORTED") == 0 || strncmp(got, "ERR:", 4) == 0);
	/* unknown and malformed namespaces; a table is not a namespace */
	list(s, "nope", true, true, false, got, sizeof(got));
	CHECK(strncmp(got, "ERR:", 4) == 0);
	list(s, "sales$orders", true, true, false, got, sizeof(got));
	CHECK(strncmp(got, "ERR:", 4) == 0);
	list(s, "a$$b", true, true, false, got, sizeof(got));
	CHECK(strncmp(got, "ERR:", 4) == 0);
	lt_store_close(s);
}

static lt_code
describe(lt_store *s, const char *id, bool manifest, bool listing, bool migration, char **loc)
{
	lt_ns_dir_opts o = {manifest, listing, migration};
	lt_error	err;

	*loc = NULL;
	return lt_ns_dir_describe_table(s, id, &o, loc, &err);
}

TEST(describe)
{
	lt_store   *s = open_root();
	char	   *loc;

	CHECK_CODE(describe(s, "sales$eu$orders", true, true, false, &loc), LT_OK);
	CHECK(loc && strlen(loc) > 9 && strcmp(loc + strlen(loc) - 16, "_sales$eu$orders") == 0);
	lt_free(loc);
	CHECK_CODE(describe(s, "top", true, true, false, &loc), LT_OK);
	CHECK(loc && strcmp(loc, "top.lance") == 0);
	lt_free(loc);
	/* mtop: only the manifest has it, which the defaults do not read at the root */
	CHECK_CODE(describe(s, "mtop", true, true, false, &loc), LT_ENOTFOUND);
	CHECK_CODE(describe(s, "mtop", true, true, true, &loc), LT_OK);
	CHECK(loc && strcmp(loc + strlen(loc) - 5, "_mtop") == 0);
	lt_free(loc);
	CHECK_CODE(describe(s, "mtop", true, false, false, &loc), LT_OK);
	lt_free(loc);
	/* top without the listing: not in the manifest */
	CHECK_CODE(describe(s, "top", true, false, false, &loc), LT_ENOTFOUND);
	CHECK_CODE(describe(s, "gone", true, true, false, &loc), LT_ENOTFOUND);
	CHECK_CODE(describe(s, "stray", true, true, false, &loc), LT_ENOTFOUND);
	CHECK_CODE(describe(s, "sales$nope", true, true, false, &loc), LT_ENOTFOUND);
	CHECK_CODE(describe(s, "sales", true, true, false, &loc), LT_ENOTFOUND);	/* a namespace, not a table */
	CHECK_CODE(describe(s, "sales$orders", false, true, false, &loc), LT_EUNSUPPORTED);
	CHECK_CODE(describe(s, "a$..", true, true, false, &loc), LT_EINVALID);
	CHECK_CODE(describe(s, "", true, true, false, &loc), LT_EINVALID);
	lt_store_close(s);
}

TEST(no_manifest)
{
	char		other[] = "/tmp/lt_ns_unit2XXXXXX";
	char		path[PATH_MAX];
	lt_store   *s = NULL;
	lt_error	err;
	lt_ns_dir_opts o = {true, true, false};
	lt_ns_table *t = NULL;
	size_t		n = 9;

	CHECK(mkdtemp(other) != NULL);
	CHECK_OK(lt_store_local_open(other, &s, &err), err);
	/* no __manifest and no table: an empty root namespace, not an error */
	CHECK_OK(lt_ns_dir_list_tables(s, "", &o, &t, &n, &err), err);
	CHECK_EQ_INT(n, 0);
	lt_ns_tables_free(t, n);
	CHECK_CODE(lt_ns_dir_list_tables(s, "sales", &o, &t, &n, &err), LT_ENOTFOUND);
	lt_store_close(s);
	snprintf(path, sizeof(path), "rmdir %s", other);
	CHECK(system(path) == 0);
}

int
main(void)
{
	char		manifest[PATH_MAX];
	char		link_path[PATH_MAX];
	char		cmd[PATH_MAX + 16];
	int			rc;

	if (!mkdtemp(root) || !realpath(unit_data_dir(), manifest))
	{
		perror("setup");
		return 1;
	}
	strncat(manifest, "/namespace/__manifest", sizeof(manifest) - strlen(manifest) - 1);
	snprintf(link_path, sizeof(link_path), "%s/__manifest", root);
	if (symlink(manifest, link_path) != 0)
	{
		perror("symlink");
		return 1;
	}
	mkdirs("top.lance");
	mkdirs("top.lance/_versions");
	touch("top.lance/_versions/1.manifest");
	mkdirs("events.lance");
	mkdirs("events.lance/_versions");
	touch("events.lance/_versions/1.manifest");
	mkdirs("gone.lance");
	mkdirs("gone.lance/_versions");
	touch("gone.lance/_versions/1.manifest");
	touch("gone.lance/.lance-deregistered");
	mkdirs("stray");
	mkdirs("stray/_versions");
	touch("stray/_versions/1.manifest");
	touch("file.lance");

	RUN(identifiers);
	RUN(listing_modes);
	RUN(describe);
	RUN(no_manifest);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	rc = unit_report("namespace");
	return rc;
}
