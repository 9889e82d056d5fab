/* SPDX-License-Identifier: MIT */
/*
 * test_cold.c - the C API of cold storage (SPEC §12.8) without the CLI:
 * symdb_image_compact() (sizes, "already cold", unknown UUID),
 * symdb_image_open_file() of a .lz4 and
 * SYMDB_OPEN_NO_THAW (the bytes in memory, the database untouched), 8
 * threads opening a cold image at once through one handle (every one gets
 * the original bytes, the .symdb is back, the .lz4 and DB/tmp are empty),
 * a flipped byte in the .lz4 (SYMDB_E_CHECKSUM/_CORRUPT naming it, nothing
 * published, the .lz4 unchanged) and symdb_remove() of a cold image.  The
 * original bytes are read from the index file before compaction, so every
 * comparison is with what the indexer wrote.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symdb.h"
#include "symdb_build.h"

static char *orig;
static size_t orig_len;

static int same_as_orig(const symdb_image *img)
{
	const void *p;
	size_t n;

	return symdb_image_data(img, &p, &n) == 0 && n == orig_len && memcmp(p, orig, n) == 0;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static size_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static int dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n == 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n)) && fread(p, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	if (f)
		fclose(f);
	return p;
}

/* symdb_open_opts.on_decompress: count decompressions of cold images. */
struct thaws {
	_Atomic unsigned on_disk, in_memory;
};

static void count_thaw(const char *file, int on_disk, void *arg)
{
	struct thaws *t = arg;

	CHECK(strstr(file, ".symdb.lz4") != NULL && !strchr(file, '/'));
	if (on_disk)
		t->on_disk++;
	else
		t->in_memory++;
}

struct racer {
	symdb *db;
	symdb_uuid id;
	pthread_barrier_t *start;
	int ok;
};

static void *race_open(void *arg)
{
	struct racer *r = arg;
	symdb_image *img = NULL;

	pthread_barrier_wait(r->start);
	r->ok = symdb_image_open_uuid(r->db, &r->id, NULL, &img) == 0 && same_as_orig(img);
	symdb_image_close(img);
	return NULL;
}

static void test_threads(symdb *db, const symdb_uuid *id)
{
	pthread_barrier_t start;
	pthread_t th[8];
	struct racer r[8];

	pthread_barrier_init(&start, NULL, 8);
	for (int i = 0; i < 8; i++) {
		r[i] = (struct racer){ db, *id, &start, 0 };
		CHECK(pthread_create(&th[i], NULL, race_open, &r[i]) == 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		CHECK(r[i].ok);
	}
	pthread_barrier_destroy(&start);
}

int main(void)
{
	char dir[4096], path[4096], lz[4200], tmpdir[4200], eb[512];
	const char *t = getenv("TMPDIR");
	SYMDB_OPTS(symdb_build_opts, bo, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = SYMDB_BUILD_NO_DWARF);
	SYMDB_OPTS(symdb_open_opts, nothaw, .flags = SYMDB_OPEN_NO_THAW, .errbuf = eb,
	           .errbuf_sz = sizeof eb);
	static symdb_build_result res;
	symdb_compact_stats st;
	symdb_builder *b;
	symdb_image *img;
	symdb_uuid other;
	symdb *db;

	snprintf(dir, sizeof dir, "%s/symdb-cold.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return 2;
	CHECK_RC(symdb_builder_open(dir, &bo, &b));
	res.sz = sizeof res;
	CHECK_RC(symdb_builder_add(b, "/proc/self/exe", &bo, &res));
	symdb_builder_close(b);
	snprintf(path, sizeof path, "%s", res.index_path);
	snprintf(lz, sizeof lz, "%s.lz4", path);
	snprintf(tmpdir, sizeof tmpdir, "%s/tmp", dir);
	orig = slurp(path, &orig_len);
	CHECK(orig != NULL);
	if (!orig)
		return check_exit();

	SYMDB_OPTS(symdb_open_opts, oo, .flags = SYMDB_OPEN_WRITE);
	CHECK_RC(symdb_open(dir, &oo, &db));
	CHECK(exists(path) && !exists(lz) && file_size(path) == orig_len);

	/* Compact: sizes, then "already cold". */
	st.sz = sizeof st;
	CHECK(symdb_image_compact(db, &res.uuid, EB_OPTS(eb, sizeof eb), &st) == 0);
	CHECK(st.sz == sizeof st && !st.was_cold);
	CHECK(st.bytes_before == orig_len && st.bytes_after == file_size(lz));
	CHECK(!exists(path) && exists(lz) && dir_empty(tmpdir));
	CHECK(!exists(path) && exists(lz));
	CHECK(symdb_image_compact(db, &res.uuid, EB_OPTS(eb, sizeof eb), &st) == 0 &&
	      st.was_cold == 1);
	other = res.uuid;
	other.bytes[0] ^= 0xff;
	CHECK(symdb_image_compact(db, &other, EB_OPTS(eb, sizeof eb), &st) == SYMDB_E_NOT_INDEXED);

	/* By file, and NO_THAW: the bytes, in memory; nothing on disk changes.
	 * symdb_image_trim() must not drop them: anonymous memory has no page
	 * cache to read them back from (MADV_DONTNEED would leave zeros). */
	CHECK(symdb_image_open_file(lz, &nothaw, &img) == 0 && same_as_orig(img));
	CHECK(symdb_image_trim(img) == 0 && same_as_orig(img));
	symdb_image_close(img);
	CHECK(symdb_image_open_uuid(db, &res.uuid, &nothaw, &img) == 0 && same_as_orig(img));
	symdb_image_close(img);
	CHECK(!exists(path) && exists(lz) && dir_empty(tmpdir));

	/* 8 threads at once: one thaw, everyone gets the original bytes. */
	symdb_close(db); /* drop the cached in-memory image */
	CHECK_RC(symdb_open(dir, &oo, &db));
	struct thaws th = { 0, 0 };
	{
		SYMDB_OPTS(symdb_open_opts, ho, .flags = SYMDB_OPEN_WRITE, .on_decompress = count_thaw,
		           .on_decompress_arg = &th);
		symdb_close(db);
		CHECK_RC(symdb_open(dir, &ho, &db));
	}
	test_threads(db, &res.uuid);
	CHECK(exists(path) && !exists(lz) && dir_empty(tmpdir));
	CHECK(th.on_disk == 1 && th.in_memory == 0); /* one thaw, told once */
	{
		size_t n = 0;
		char *again = slurp(path, &n);
		CHECK(again && n == orig_len && memcmp(again, orig, n) == 0);
		free(again);
	}

	/* A flipped byte: refused, named, nothing published, .lz4 unchanged. */
	CHECK(symdb_image_compact(db, &res.uuid, EB_OPTS(eb, sizeof eb), &st) == 0);
	symdb_close(db);
	{
		size_t n = 0, n2 = 0;
		char *bad = slurp(lz, &n), *after;
		FILE *f;
		CHECK(bad && n > 64);
		bad[n / 2] ^= 0x20;
		f = fopen(lz, "wb");
		CHECK(f && fwrite(bad, 1, n, f) == n);
		if (f)
			fclose(f);
		CHECK_RC(symdb_open(dir, &oo, &db));
		eb[0] = 0;
		SYMDB_OPTS(symdb_open_opts, eo, .errbuf = eb, .errbuf_sz = sizeof eb);
		int rc = symdb_image_open_uuid(db, &res.uuid, &eo, &img);
		CHECK(rc == SYMDB_E_CHECKSUM || rc == SYMDB_E_CORRUPT);
		CHECK(strstr(eb, ".symdb.lz4") != NULL);
		CHECK(!exists(path) && dir_empty(tmpdir));
		after = slurp(lz, &n2);
		CHECK(after && n2 == n && memcmp(after, bad, n) == 0);
		free(bad);
		free(after);
	}

	/* symdb_remove: both forms go. */
	CHECK_RC(symdb_remove(db, &res.uuid, EB_OPTS(eb, sizeof eb)));
	CHECK(!exists(path) && !exists(lz));
	symdb_close(db);
	free(orig);
	if (!check_failures) {
		char cmd[4300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	printf("cold storage API: %zu-byte index, compact, NO_THAW, 8 threads, damaged .lz4, remove\n",
	       orig_len);
	return check_exit();
}
