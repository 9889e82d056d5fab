/* SPDX-License-Identifier: MIT */
/*
 * test_symbolize_build.c - index on first sight in the library
 * (SYMDB_SYMBOLIZER_BUILD, reader_symbolize_build.c): symdb_symbolize() on
 * a SYMDB_IMAGE_PATH request for this test program, never indexed,
 *   - answers it and publishes the index (a later open finds it, and a
 *     context whose indexer cannot run still answers);
 *   - without the flag: SYMDB_SYM_NOT_INDEXED, nothing published;
 *   - with no database (db NULL): answers from a private index, no warning,
 *     nothing left in tmp_dir;
 *   - with a database that cannot take the index (its DB/tmp a symbolic
 *     link, refused even for root): answers, ONE warning through
 *     on_warning naming the database, the database unchanged;
 * and symdb_symbolizer_image() says what llvm-symbolizer-14 would about
 * a missing path, a directory and /dev/null; a path found not indexed is
 * looked up again by the next call; NULL references beside others.
 */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symdb_build.h"

static const char *self;
static char tmpdir[64];
static uint64_t main_addr, main_base;
static int nwarn;
static char last_warning[2048];

static void on_warning(const char *line, void *arg)
{
	(void)arg;
	nwarn++;
	snprintf(last_warning, sizeof last_warning, "%s", line);
}

static int dir_empty(const char *p)
{
	DIR *d = opendir(p);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 1;
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n == 0;
}

/* Symbolize main's address in self through s: its status, and whether the
 * answer names main. */
static int ask(symdb_symbolizer *s, int *names_main)
{
	symdb_request rq = { .image_ref = SYMDB_IMAGE_PATH, .image.path = self,
		             .addr_kind = SYMDB_ADDR_RUNTIME, .addr = main_addr,
		             .load_address = main_base };
	symdb_symbolized r;
	int rc = symdb_symbolize(s, &rq, 1, &r, NULL);

	CHECK_RC(rc);
	*names_main = rc == 0 && r.sym_name && strcmp(r.sym_name, "main") == 0;
	return rc == 0 ? r.status : -1;
}

static symdb_symbolizer *make(symdb *db, unsigned flags, const char *indexer, const char *tmp)
{
	symdb_symbolizer *s = NULL;
	char err[512] = "";
	SYMDB_OPTS(symdb_symbolizer_opts, o, .flags = flags, .errbuf = err,
	           .errbuf_sz = sizeof err, .indexer_path = indexer, .tmp_dir = tmp,
	           .on_warning = on_warning);
	int rc = symdb_symbolizer_create(db, &o, &s);

	if (rc)
		fprintf(stderr, "symdb_symbolizer_create: %s\n", err);
	CHECK_RC(rc);
	return s;
}

static symdb *open_db(const char *dir)
{
	symdb_builder *b = NULL;
	symdb *db = NULL;

	CHECK_RC(symdb_builder_open(dir, NULL, &b)); /* creates it */
	symdb_builder_close(b);
	CHECK_RC(symdb_open(dir, NULL, &db));
	return db;
}

static void test_publish(void)
{
	char dir[128], tmp[128];
	symdb_image *img = NULL;
	int named = 0;

	snprintf(dir, sizeof dir, "%s/db", tmpdir);
	snprintf(tmp, sizeof tmp, "%s/tmp", tmpdir);
	CHECK(mkdir(tmp, 0700) == 0);
	symdb *db = open_db(dir);
	symdb_symbolizer *s = make(db, 0, NULL, NULL);
	CHECK(ask(s, &named) == SYMDB_SYM_NOT_INDEXED);
	symdb_symbolizer_free(s);
	CHECK(symdb_image_open_binary(db, self, NULL, &img) == SYMDB_E_NOT_INDEXED);

	s = make(db, SYMDB_SYMBOLIZER_BUILD, SYMDB_TEST_INDEXER, tmp);
	CHECK(ask(s, &named) == SYMDB_SYM_OK && named);
	symdb_symbolizer_free(s);
	CHECK(nwarn == 0);
	CHECK(dir_empty(tmp));
	CHECK_RC(symdb_image_open_binary(db, self, NULL, &img));
	symdb_image_close(img);

	/* Published: a context whose indexer cannot start needs none. */
	s = make(db, SYMDB_SYMBOLIZER_BUILD, "/nonexistent/symdb-indexer", tmp);
	CHECK(ask(s, &named) == SYMDB_SYM_OK && named);
	symdb_symbolizer_free(s);
	symdb_close(db);
}

/*
 * A context that found self not indexed, by path, looks it up again at its
 * next call (symdb.h: "An image found not indexed is looked up again by
 * the next call"): self indexed meanwhile is answered.  Before, an image
 * named by path kept its first failure for the context's life, while the
 * same image named by hex was found.  And a NULL path next to a request of
 * the same kind is NO_IMAGE, not a crash (the neighbours' references were
 * compared with strcmp before either was judged).
 */
static void test_relookup(void)
{
	char dir[128];
	int named = 0;
	symdb_builder *b = NULL;

	snprintf(dir, sizeof dir, "%s/db-relookup", tmpdir);
	symdb *db = open_db(dir);
	symdb_symbolizer *s = make(db, 0, NULL, NULL);
	CHECK(ask(s, &named) == SYMDB_SYM_NOT_INDEXED);
	SYMDB_OPTS(symdb_build_opts, bo, .indexer_path = SYMDB_TEST_INDEXER);
	CHECK_RC(symdb_builder_open(dir, &bo, &b));
	CHECK_RC(symdb_builder_add(b, self, &bo, NULL));
	symdb_builder_close(b);
	CHECK(ask(s, &named) == SYMDB_SYM_OK && named);

	symdb_request rq[2] = {
		{ .image_ref = SYMDB_IMAGE_PATH, .image.path = self, .addr_kind = SYMDB_ADDR_RUNTIME,
		  .addr = main_addr, .load_address = main_base },
		{ .image_ref = SYMDB_IMAGE_PATH, .image.path = NULL, .addr = 0x1000 },
	};
	symdb_symbolized r[2];
	CHECK_RC(symdb_symbolize(s, rq, 2, r, NULL));
	CHECK(r[0].status == SYMDB_SYM_OK && r[1].status == SYMDB_SYM_NO_IMAGE);
	rq[1].image_ref = rq[0].image_ref = SYMDB_IMAGE_HEX;
	rq[0].image.hex = "00";
	rq[1].image.hex = NULL;
	CHECK_RC(symdb_symbolize(s, rq, 2, r, NULL));
	CHECK(r[1].status == SYMDB_SYM_NO_IMAGE);
	rq[1].image_ref = rq[0].image_ref = SYMDB_IMAGE_UUID;
	symdb_uuid u = { .len = 1 };
	rq[0].image.uuid = &u;
	rq[1].image.uuid = NULL;
	CHECK_RC(symdb_symbolize(s, rq, 2, r, NULL));
	CHECK(r[1].status == SYMDB_SYM_NO_IMAGE);
	symdb_symbolizer_free(s);
	symdb_close(db);
}

static void test_private(void)
{
	char tmp[128];
	int named = 0;

	snprintf(tmp, sizeof tmp, "%s/tmp", tmpdir);
	symdb_symbolizer *s = make(NULL, SYMDB_SYMBOLIZER_BUILD, SYMDB_TEST_INDEXER, tmp);
	CHECK(ask(s, &named) == SYMDB_SYM_OK && named);
	CHECK(dir_empty(tmp)); /* mapped, and already removed */
	CHECK(ask(s, &named) == SYMDB_SYM_OK && named);
	symdb_symbolizer_free(s);
	CHECK(nwarn == 0);
	/* db NULL needs the flag. */
	symdb_symbolizer *t = NULL;
	CHECK(symdb_symbolizer_create(NULL, NULL, &t) == SYMDB_E_INVAL);
}

static void test_unwritable(void)
{
	char dir[128], tmp[128], link[160];
	symdb_image *img = NULL;
	int named = 0;

	snprintf(dir, sizeof dir, "%s/db-unwritable", tmpdir);
	snprintf(tmp, sizeof tmp, "%s/tmp", tmpdir);
	symdb *db = open_db(dir);
	/* DB/tmp a symbolic link: never written through (SPEC §12.1). */
	snprintf(link, sizeof link, "%s/tmp", dir);
	CHECK(rmdir(link) == 0 && symlink("/tmp", link) == 0);
	nwarn = 0;
	symdb_symbolizer *s = make(db, SYMDB_SYMBOLIZER_BUILD, SYMDB_TEST_INDEXER, tmp);
	CHECK(ask(s, &named) == SYMDB_SYM_OK && named);
	CHECK(ask(s, &named) == SYMDB_SYM_OK && named);
	symdb_symbolizer_free(s);
	CHECK(nwarn == 1);
	CHECK(strstr(last_warning, dir) != NULL);
	CHECK(strncmp(last_warning, "symdb: warning: database ", 25) == 0);
	CHECK(dir_empty(tmp));
	CHECK(symdb_image_open_binary(db, self, NULL, &img) == SYMDB_E_NOT_INDEXED);
	symdb_close(db);
}

static void test_unreadable(void)
{
	symdb_symbolizer *s = make(NULL, SYMDB_SYMBOLIZER_BUILD, SYMDB_TEST_INDEXER, tmpdir);
	const symdb_image *img;
	char err[256];
	SYMDB_OPTS(symdb_symbolize_opts, o, .errbuf = err, .errbuf_sz = sizeof err);

	CHECK(symdb_symbolizer_image(s, "/nonexistent/file", &o, &img) == -ENOENT);
	CHECK(symdb_symbolizer_image(s, tmpdir, &o, &img) == -EISDIR);
	CHECK(symdb_symbolizer_image(s, "/dev/null", &o, &img) == SYMDB_E_BAD_OBJECT);
	CHECK_RC(symdb_symbolizer_image(s, self, &o, &img));
	symdb_symbolizer_free(s);
}

int main(int argc, char **argv)
{
	Dl_info di;
	char cmd[200];

	(void)argc;
	self = argv[0];
	if (!SYMDB_TEST_INDEXER) {
		check_skip("no symdb-indexer in this build");
		return check_exit();
	}
	CHECK(dladdr((void *)main, &di) != 0);
	main_addr = (uint64_t)(uintptr_t)main;
	main_base = (uint64_t)(uintptr_t)di.dli_fbase;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/symdb-test-sbuild-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 2;
	test_publish();
	test_relookup();
	test_private();
	test_unwritable();
	test_unreadable();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_exit();
}
