/* SPDX-License-Identifier: MIT */
/*
 * test_build.c - unit tests of ix_elf.c and the builder API (publish_build.c,
 * publish_file.c, with symdb-indexer): the ELF model of this test program itself, rejection of
 * bad inputs with one-line reasons naming the file, determinism, the
 * already-indexed fast path, --force, a missing index file being rebuilt,
 * and concurrency: threads sharing one builder and processes sharing one
 * database must leave one catalog entry and one file per UUID and an empty
 * DB/tmp.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ix_emit.h"
#include "rd_catalog.h"
#include "symdb_build.h"

static const char *self;     /* this executable: a PIE with symbols */
static char tmpdir[64];

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

static void test_elf_model(void)
{
	ix_image img;
	char err[512] = "";
	const char *strs;
	size_t len, i;
	int found = 0;

	CHECK(ix_image_init(&img) == 0);
	{
		int sfd = open(self, O_RDONLY | O_CLOEXEC);
		CHECK(sfd >= 0);
		CHECK_RC(ix_elf_load(&img, sfd, self, err, sizeof err));
		close(sfd);
	}
	strs = (const char *)ix_str_bytes(img.strings, &len);
	CHECK(img.object_format == FMT_OBJ_ELF && img.object_class == 64);
	CHECK(img.object_type == 3 || img.object_type == 2);
	CHECK(img.segments.n >= 2);
	CHECK(img.base_address == IX_AT(&img.segments, ix_segment, 0).vaddr);
	CHECK(strcmp(strs + img.image_name, "test_build") == 0);
	for (i = 0; i < img.symbols.n; i++) {
		const ix_symbol *s = &IX_AT(&img.symbols, ix_symbol, i);

		if (strcmp(strs + s->name, "main") == 0)
			found = (s->flags & FMT_SYMF_FUNC) && !(s->flags & FMT_SYMF_LOCAL) && s->size;
	}
	CHECK(found);
	CHECK(img.build_info[FMT_BI_SYMBOLS_SEEN] >= img.symbols.n);
	ix_image_free(&img);
}

static int build(const char *db, const char *path, unsigned flags, symdb_build_result *r,
                 char *err, size_t errsz)
{
	SYMDB_OPTS(symdb_build_opts, o, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = flags, .errbuf = err, .errbuf_sz = errsz);
	symdb_builder *b;
	int rc = symdb_builder_open(db, &o, &b);

	if (rc)
		return rc;
	r->sz = sizeof *r;
	rc = symdb_builder_add(b, path, &o, r);
	symdb_builder_close(b);
	return rc;
}

static void test_bad_inputs(const char *db)
{
	static const char *const cases[] = { "empty", "text", "trunc", "dir" };
	unsigned char ehdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	char path[256], err[512];
	symdb_build_result r;
	size_t i;
	int rc;

	snprintf(path, sizeof path, "%s/empty", tmpdir);
	write_file(path, "", 0);
	snprintf(path, sizeof path, "%s/text", tmpdir);
	write_file(path, "hello, world\n", 13);
	ehdr[16] = 1; /* ET_REL */
	snprintf(path, sizeof path, "%s/etrel", tmpdir);
	write_file(path, ehdr, sizeof ehdr);
	snprintf(path, sizeof path, "%s/trunc", tmpdir);
	write_file(path, ehdr, 10);
	snprintf(path, sizeof path, "%s/dir", tmpdir);
	mkdir(path, 0755);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, cases[i]);
		err[0] = 0;
		rc = build(db, path, 0, &r, err, sizeof err);
		CHECK(rc == SYMDB_E_BAD_OBJECT || rc == -EISDIR);
		CHECK(strstr(err, path) != NULL && strchr(err, '\n') == NULL);
	}
	/* An ELF header of an object with no section at all: a valid object
	 * that knows no address, indexed as such (SPEC §7.2). */
	snprintf(path, sizeof path, "%s/etrel", tmpdir);
	rc = build(db, path, 0, &r, err, sizeof err);
	CHECK(rc == 0 && r.nsymbols == 0 && r.nline_rows == 0);
	rc = build(db, "/no/such/file", 0, &r, err, sizeof err);
	CHECK(rc == -ENOENT && strstr(err, "/no/such/file") != NULL);
	rc = build(db, self, 0x80, &r, err, sizeof err);
	CHECK(rc == SYMDB_E_INVAL);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long sz;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)sz + 1);
	if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*n = (size_t)sz;
	return p;
}

static void test_rebuilds(const char *db)
{
	symdb_build_result r1, r2, r3;
	char err[512] = "", tmp[300];
	uint8_t *a, *b;
	size_t na = 0, nb = 0;

	CHECK_RC(build(db, self, 0, &r1, err, sizeof err));
	CHECK(r1.skipped == 0 && r1.nsymbols > 10 && r1.file_size > 0);
	a = slurp(r1.index_path, &na);
	CHECK_RC(build(db, self, 0, &r2, err, sizeof err));
	CHECK(r2.skipped == 1 && strcmp(r2.index_path, r1.index_path) == 0);
	CHECK(r2.uuid.len == r1.uuid.len && memcmp(r2.uuid.bytes, r1.uuid.bytes, r1.uuid.len) == 0);
	/* --force writes the same bytes again (determinism) */
	CHECK_RC(build(db, self, SYMDB_BUILD_FORCE, &r3, err, sizeof err));
	CHECK(r3.skipped == 0);
	b = slurp(r3.index_path, &nb);
	CHECK(a && b && na == nb && memcmp(a, b, na) == 0);
	free(b);
	/* a deleted index file is rebuilt, not skipped */
	unlink(r1.index_path);
	CHECK_RC(build(db, self, 0, &r3, err, sizeof err));
	CHECK(r3.skipped == 0);
	b = slurp(r3.index_path, &nb);
	CHECK(a && b && na == nb && memcmp(a, b, na) == 0);
	free(b);
	/* symbols only: a different file, no DWARF tables */
	CHECK_RC(build(db, self, SYMDB_BUILD_FORCE | SYMDB_BUILD_NO_DWARF, &r3, err, sizeof err));
	b = slurp(r3.index_path, &nb);
	CHECK(b && nb <= na && (fmt_be32(b + FMT_H_FLAGS) & FMT_FLAG_HAS_DWARF) == 0);
	free(a);
	free(b);
	snprintf(tmp, sizeof tmp, "%s/tmp", db);
	CHECK(check_dir_entries(tmp) == 0);
}

struct job {
	symdb_builder *b;
	const char *path;
	unsigned flags;
	int rc;
	char err[512];
};

static void *job_run(void *arg)
{
	struct job *j = arg;
	SYMDB_OPTS(symdb_build_opts, o, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = j->flags, .errbuf = j->err,
	           .errbuf_sz = sizeof j->err);
	symdb_build_result r;

	r.sz = sizeof r;
	j->rc = symdb_builder_add(j->b, j->path, &o, &r);
	return NULL;
}

static int count_entry(const rd_cat_entry *e, void *arg)
{
	(void)e;
	++*(int *)arg;
	return 0;
}

static int catalog_entries(const char *db)
{
	rd_catalog *c;
	int n = 0;

	if (rd_catalog_open(db, 0, &c, NULL, 0))
		return -1;
	rd_catalog_list(c, count_entry, &n);
	rd_catalog_close(c);
	return n;
}

/* 8 threads on one builder: the same file (half of them forcing) and
 * a few system libraries. */
static void test_threads(const char *db)
{
	static const char *const libs[] = { "/lib/x86_64-linux-gnu/libc.so.6",
		                            "/usr/lib/x86_64-linux-gnu/liblmdb.so.0",
		                            "/usr/lib/x86_64-linux-gnu/libz.so.1" };
	struct job jobs[8];
	pthread_t th[8];
	symdb_builder *b;
	char path[300];
	int i, expect = 1;

	CHECK_RC(symdb_builder_open(db, NULL, &b));
	if (!b)
		return;
	for (i = 0; i < 3; i++)
		expect += access(libs[i], R_OK) == 0;
	for (i = 0; i < 8; i++) {
		memset(&jobs[i], 0, sizeof jobs[i]);
		jobs[i].b = b;
		jobs[i].path = i < 5 ? self : libs[(i - 5) % 3];
		jobs[i].flags = i % 2 ? SYMDB_BUILD_FORCE : 0;
		if (access(jobs[i].path, R_OK) != 0)
			jobs[i].path = self;
		pthread_create(&th[i], NULL, job_run, &jobs[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		CHECK(jobs[i].rc == 0);
		if (jobs[i].rc)
			fprintf(stderr, "job %d: %s\n", i, jobs[i].err);
	}
	symdb_builder_close(b);
	CHECK(catalog_entries(db) == expect);
	snprintf(path, sizeof path, "%s/tmp", db);
	CHECK(check_dir_entries(path) == 0);
}

/* Two processes building the same file into one fresh database. */
static void test_processes(const char *db)
{
	pid_t pid[2];
	int i, st, ok = 1;
	char path[300];

	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			symdb_build_result r;
			char err[512];

			_exit(build(db, self, 0, &r, err, sizeof err) == 0 ? 0 : 1);
		}
	}
	for (i = 0; i < 2; i++)
		ok &= pid[i] > 0 && waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0;
	CHECK(ok);
	CHECK(catalog_entries(db) == 1);
	snprintf(path, sizeof path, "%s/tmp", db);
	CHECK(check_dir_entries(path) == 0);
}

int main(int argc, char **argv)
{
	char db[128], cmd[200];

	(void)argc;
	self = argv[0];
	snprintf(tmpdir, sizeof tmpdir, "/tmp/symdb-test-build-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 2;
	test_elf_model();
	snprintf(db, sizeof db, "%s/db1", tmpdir);
	test_bad_inputs(db);
	test_rebuilds(db);
	snprintf(db, sizeof db, "%s/db2", tmpdir);
	test_threads(db);
	snprintf(db, sizeof db, "%s/db3", tmpdir);
	test_processes(db);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_exit();
}
