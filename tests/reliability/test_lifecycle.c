/* SPDX-License-Identifier: MIT */
/*
 * test_lifecycle.c - the C API of the database's life cycle (SPEC §12.6):
 * symdb_last_used()/symdb_mark_used() (only for indexed images, never back
 * in time, write handles only; the clock is the caller's, $SYMDB_NOW is the
 * CLI's and tested through it by gc.sh and compact.sh) and
 * symdb_remove() (entry, used record and file; write handles only), and
 * symdb_lookup_prefix() (unique prefixes, odd digit counts, the minimum
 * length).  The image indexed is this test executable itself.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "symdb.h"
#include "symdb_build.h"

static symdb *open_db(const char *dir, unsigned flags)
{
	SYMDB_OPTS(symdb_open_opts, o, .flags = flags);
	symdb *db = NULL;

	CHECK_RC(symdb_open(dir, &o, &db));
	return db;
}

static void build_self(const char *dir, symdb_uuid *id, char *index_path, size_t sz)
{
	SYMDB_OPTS(symdb_build_opts, o, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = SYMDB_BUILD_NO_DWARF);
	static symdb_build_result r;
	symdb_builder *b;

	CHECK_RC(symdb_builder_open(dir, &o, &b));
	r.sz = sizeof r;
	CHECK_RC(symdb_builder_add(b, "/proc/self/exe", &o, &r));
	*id = r.uuid;
	snprintf(index_path, sz, "%s", r.index_path);
	symdb_builder_close(b);
}

static void test_used(const char *dir, const symdb_uuid *id)
{
	symdb_uuid other = *id;
	uint64_t t = 0;
	symdb *db = open_db(dir, 0);

	CHECK(symdb_last_used(db, id, &t) == SYMDB_E_NOT_FOUND);
	CHECK(symdb_mark_used(db, id, 1000) == SYMDB_E_READONLY);
	CHECK(symdb_remove(db, id, NULL) == SYMDB_E_READONLY);
	symdb_close(db);

	db = open_db(dir, SYMDB_OPEN_WRITE);
	CHECK_RC(symdb_mark_used(db, id, 1000));
	CHECK(symdb_last_used(db, id, &t) == 0 && t == 1000);
	CHECK_RC(symdb_mark_used(db, id, 500)); /* never back in time */
	CHECK(symdb_last_used(db, id, &t) == 0 && t == 1000);
	CHECK_RC(symdb_mark_used(db, id, 2000));
	other.bytes[0] ^= 0xff;
	CHECK(symdb_mark_used(db, &other, 3000) == SYMDB_E_NOT_INDEXED);
	CHECK(symdb_last_used(db, &other, &t) == SYMDB_E_NOT_FOUND);
	symdb_close(db);

	db = open_db(dir, 0);
	CHECK(symdb_last_used(db, id, &t) == 0 && t == 2000);
	symdb_close(db);
}

static void test_remove(const char *dir, const symdb_uuid *id, const char *index_path)
{
	char names[1024], eb[256] = "";
	symdb_entry e;
	uint64_t t;
	symdb *db = open_db(dir, SYMDB_OPEN_WRITE);

	CHECK(access(index_path, F_OK) == 0);
	CHECK_RC(symdb_remove(db, id, EB_OPTS(eb, sizeof eb)));
	CHECK(access(index_path, F_OK) != 0);
	e.sz = sizeof e;
	CHECK(symdb_lookup(db, id, &e, names, sizeof names) == SYMDB_E_NOT_INDEXED);
	CHECK(symdb_last_used(db, id, &t) == SYMDB_E_NOT_FOUND); /* same transaction */
	CHECK(symdb_remove(db, id, EB_OPTS(eb, sizeof eb)) == SYMDB_E_NOT_INDEXED);
	CHECK(strstr(eb, dir) != NULL && !strchr(eb, '\n'));
	symdb_close(db);
}

static void test_prefix(const char *dir, const symdb_uuid *id)
{
	char hex[2 * SYMDB_UUID_MAX + 1], p[2 * SYMDB_UUID_MAX + 1];
	symdb_uuid out[2];
	symdb *db = open_db(dir, 0);

	symdb_uuid_format(id, hex);
	for (size_t n = SYMDB_UUID_PREFIX_MIN; n <= strlen(hex); n++) {
		memset(out, 0, sizeof out);
		snprintf(p, sizeof p, "%.*s", (int)n, hex);
		CHECK(symdb_lookup_prefix(db, p, out, 2) == 1);
		CHECK(out[0].len == id->len && memcmp(out[0].bytes, id->bytes, id->len) == 0);
		CHECK(out[0].kind == id->kind);
	}
	snprintf(p, sizeof p, "%.8s", hex);
	CHECK(symdb_lookup_prefix(db, p, NULL, 0) == 1); /* count only */
	p[7] = p[7] == '0' ? '1' : '0';                /* another last digit */
	CHECK(symdb_lookup_prefix(db, p, out, 2) == 0);
	CHECK(symdb_lookup_prefix(db, "0123456", out, 2) == SYMDB_E_INVAL);  /* 7 digits */
	CHECK(symdb_lookup_prefix(db, "0123456x", out, 2) == SYMDB_E_INVAL); /* not hex */
	CHECK(symdb_lookup_prefix(db, NULL, out, 2) == SYMDB_E_INVAL);
	CHECK(symdb_lookup_prefix(db, hex, NULL, 1) == SYMDB_E_INVAL);
	CHECK(symdb_lookup_prefix(NULL, hex, out, 2) == SYMDB_E_INVAL);
	symdb_close(db);
}

int main(void)
{
	char dir[] = "/tmp/symdb-lifecycle-XXXXXX", index_path[4096], cmd[128];
	symdb_uuid id;
	const char *tmp = getenv("TMPDIR");
	char tdir[4096];

	if (tmp && *tmp) {
		snprintf(tdir, sizeof tdir, "%s/symdb-lifecycle-XXXXXX", tmp);
		CHECK(mkdtemp(tdir) != NULL);
	} else {
		CHECK(mkdtemp(dir) != NULL);
		snprintf(tdir, sizeof tdir, "%s", dir);
	}
	build_self(tdir, &id, index_path, sizeof index_path);
	test_used(tdir, &id);
	test_prefix(tdir, &id);
	test_remove(tdir, &id, index_path);
	build_self(tdir, &id, index_path, sizeof index_path); /* again: no stale time */
	{
		uint64_t t;
		symdb *db = open_db(tdir, 0);
		CHECK(symdb_last_used(db, &id, &t) == SYMDB_E_NOT_FOUND);
		symdb_close(db);
	}
	if (strlen(tdir) < sizeof cmd - 16) {
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdir);
		CHECK(system(cmd) == 0);
	}
	return check_exit();
}
