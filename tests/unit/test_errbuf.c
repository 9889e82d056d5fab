/* SPDX-License-Identifier: MIT */
/*
 * test_errbuf.c - the library's errbuf is one line of valid UTF-8 whatever
 * the bytes it names (symdb.h "Conventions"): public calls given a database
 * directory, an input and an indexer-rejected input whose names hold a
 * newline, ESC [31m, a backslash, DEL, a C1 control and a byte that is not
 * UTF-8 must each leave one line with no byte below 0x20 and no DEL, naming
 * the input escaped as the command line escapes it (README "Names in
 * output").  The expected escapes come from this file's own reading of that
 * rule (ref_escape), not from the library.  Then fmt_err itself: text that
 * is escaped already is left alone (reasons nest), and a cut, at every
 * buffer size, never splits an escape and keeps the "PATH: reason" shape.
 */
#define _POSIX_C_SOURCE 200809L
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "format_header.h"
#include "symdb_build.h"

static const char *self; /* this executable: an ELF with a build-id and DWARF */
static char tmpdir[64];

/* The hostile part of every name: a newline, ESC [31m, a backslash before
 * 'q' (no escape), DEL, U+009B (C1 CSI), a lone 0xff, then "é". */
#define EVIL "ev\nil\033[31m\\q\177\302\233\377\303\251"

/* README "Names in output", strict: \n \t \r \\ \xNN; valid UTF-8 but C1
 * is copied. */
static void ref_escape(char *out, size_t sz, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0;

	for (size_t i = 0; u[i] && o + 5 < sz;) {
		unsigned char c = u[i];
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			out[o++] = (char)c;
			i++;
		} else if (c == '\n' || c == '\t' || c == '\r' || c == '\\') {
			out[o++] = '\\';
			out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : '\\';
			i++;
		} else if (c >= 0xc3 && c <= 0xdf && u[i + 1] >= 0x80 && u[i + 1] <= 0xbf) {
			out[o++] = (char)c; /* two-byte characters above U+00BF: all this test uses */
			out[o++] = (char)u[i + 1];
			i += 2;
		} else {
			o += (size_t)snprintf(out + o, sz - o, "\\x%02x", c);
			i++;
		}
	}
	out[o] = '\0';
}

/* Every backslash in s starts one of the escapes (none was cut in half). */
static int escapes_whole(const char *s)
{
	for (const char *p = s; (p = strchr(p, '\\')) != NULL;) {
		if (p[1] == '\\' || p[1] == 'n' || p[1] == 't' || p[1] == 'r')
			p += 2;
		else if (p[1] == 'x' && strchr("0123456789abcdef", p[2]) && p[2] &&
		         strchr("0123456789abcdef", p[3]) && p[3])
			p += 4;
		else
			return 0;
	}
	return 1;
}

/* err is one line of valid UTF-8 without control bytes or DEL, and holds
 * the escaped form of name when name is not NULL. */
static int one_line(const char *what, const char *err, const char *name)
{
	const unsigned char *u = (const unsigned char *)err;
	char want[1024];
	int ok = 1;

	for (size_t i = 0; u[i]; i++) {
		if (u[i] < 0x20 || u[i] == 0x7f) {
			fprintf(stderr, "%s: byte 0x%02x at %zu in errbuf\n", what, u[i], i);
			ok = 0;
			break;
		}
		if (u[i] >= 0x80 && !(u[i] >= 0xc3 && u[i] <= 0xdf && u[i + 1] >= 0x80 &&
		                      u[i + 1] <= 0xbf)) {
			fprintf(stderr, "%s: byte 0x%02x at %zu is not this test's UTF-8\n", what, u[i],
			        i);
			ok = 0;
			break;
		}
		i += u[i] >= 0x80;
	}
	if (!escapes_whole(err)) {
		fprintf(stderr, "%s: an escape cut in half\n", what);
		ok = 0;
	}
	if (name) {
		ref_escape(want, sizeof want, name);
		if (!strstr(err, want)) {
			fprintf(stderr, "%s: errbuf does not name %s\n", what, want);
			ok = 0;
		}
	}
	if (!ok)
		fprintf(stderr, "%s: errbuf is \"%s\"\n", what, err);
	return ok;
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	int ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* A database directory that does not exist, named with EVIL. */
static void test_missing_db(void)
{
	char dir[256], err[512] = "";
	symdb *db = NULL;

	snprintf(dir, sizeof dir, "%s/db-" EVIL, tmpdir);
	int rc = symdb_open(dir, EB_OPTS(err, sizeof err), &db);
	CHECK(rc < 0 && db == NULL);
	CHECK(err[0] && one_line("symdb_open of a missing directory", err, dir));
	symdb_close(db);
}

/* A text file named with EVIL: the builder and symdb_image_open_binary. */
static void test_not_object(const char *dbdir)
{
	char path[256], err[512] = "";
	symdb_builder *b = NULL;
	symdb *db = NULL;
	symdb_image *img = NULL;
	SYMDB_OPTS(symdb_build_opts, bo, .indexer_path = SYMDB_TEST_INDEXER, .errbuf = err,
	           .errbuf_sz = sizeof err);
	SYMDB_OPTS(symdb_build_result, res);

	snprintf(path, sizeof path, "%s/" EVIL ".txt", tmpdir);
	CHECK(write_file(path, "not an object file\n", 19) == 0);
	CHECK_RC(symdb_builder_open(dbdir, &bo, &b));
	if (!b)
		return;
	int rc = symdb_builder_add(b, path, &bo, &res);
	CHECK(rc == SYMDB_E_BAD_OBJECT);
	CHECK(one_line("symdb_builder_add of a text file", err, path));
	symdb_builder_close(b);

	err[0] = 0;
	CHECK_RC(symdb_open(dbdir, EB_OPTS(err, sizeof err), &db));
	if (!db)
		return;
	rc = symdb_image_open_binary(db, path, EB_OPTS(err, sizeof err), &img);
	CHECK(rc < 0 && img == NULL);
	CHECK(one_line("symdb_image_open_binary of a text file", err, path));
	/* a missing file: the caller's path, ENOENT */
	snprintf(path, sizeof path, "%s/" EVIL ".missing", tmpdir);
	err[0] = 0;
	rc = symdb_image_open_binary(db, path, EB_OPTS(err, sizeof err), &img);
	CHECK(rc == -ENOENT);
	CHECK(one_line("symdb_image_open_binary of a missing file", err, path));
	symdb_image_close(img);
	symdb_close(db);
}

/*
 * A message relayed from the sandboxed indexer: a copy of this program
 * (build-id and DWARF: the builder's own checks pass) whose .debug_info
 * lies past the end of the file, named with EVIL.  Only the indexer reads
 * the sections, so the reason is the child's, naming the input.
 */
static void test_indexer_relay(const char *dbdir)
{
	char path[256], err[512] = "";
	FILE *f = fopen(self, "rb");
	unsigned char *buf = NULL;
	long n = -1;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = -1;
	if (f)
		fclose(f);
	CHECK(buf && n > (long)sizeof(Elf64_Ehdr));
	if (!buf || n <= (long)sizeof(Elf64_Ehdr)) {
		free(buf);
		return;
	}
	Elf64_Ehdr eh;
	memcpy(&eh, buf, sizeof eh);
	int patched = 0;
	if (eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) <= (uint64_t)n &&
	    eh.e_shstrndx < eh.e_shnum) {
		Elf64_Shdr str, sh;
		memcpy(&str, buf + eh.e_shoff + eh.e_shstrndx * sizeof sh, sizeof str);
		for (unsigned i = 1; i < eh.e_shnum; i++) {
			unsigned char *at = buf + eh.e_shoff + i * sizeof sh;
			memcpy(&sh, at, sizeof sh);
			if (str.sh_offset + sh.sh_name + 12 > (uint64_t)n ||
			    memcmp(buf + str.sh_offset + sh.sh_name, ".debug_info", 12) != 0)
				continue;
			sh.sh_offset = (uint64_t)n + 4096;
			memcpy(at, &sh, sizeof sh);
			patched = 1;
		}
	}
	if (!patched) {
		check_skip("this test program has no .debug_info to damage");
		free(buf);
		return;
	}
	snprintf(path, sizeof path, "%s/" EVIL ".bin", tmpdir);
	CHECK(write_file(path, buf, (size_t)n) == 0);
	free(buf);

	SYMDB_OPTS(symdb_build_opts, bo, .indexer_path = SYMDB_TEST_INDEXER, .errbuf = err,
	           .errbuf_sz = sizeof err);
	SYMDB_OPTS(symdb_build_result, res);
	symdb_builder *b = NULL;
	CHECK_RC(symdb_builder_open(dbdir, &bo, &b));
	if (!b)
		return;
	int rc = symdb_builder_add(b, path, &bo, &res);
	CHECK(rc < 0);
	CHECK(strstr(err, "outside the file") != NULL);
	CHECK(one_line("the indexer's message", err, path));
	symdb_builder_close(b);
}

/* fmt_err: an escaped reason nests unchanged; cuts fall between escapes
 * and keep "PATH: reason" (the reason whole, the path shortened). */
static void test_fmt_err(void)
{
	char inner[256], outer[512], want[512], path[1024], big[700], tmp[64];

	fmt_err(inner, sizeof inner, -1, "%s: not an ELF file", "a\\b" EVIL);
	CHECK(one_line("inner", inner, "a\\b" EVIL));
	fmt_err(outer, sizeof outer, -1, "%s: cannot read header: %s", "x\ty", inner);
	snprintf(want, sizeof want, "x\\ty: cannot read header: %s", inner);
	CHECK(strcmp(outer, want) == 0);
	fmt_err(want, sizeof want, -1, "%s", outer);
	CHECK(strcmp(outer, want) == 0); /* escaping escaped text changes nothing */

	/* a path of 40 EVILs: for every size, one whole line */
	path[0] = 0;
	for (int i = 0; i < 40; i++)
		strcat(path, EVIL);
	for (size_t sz = 1; sz < sizeof big; sz++) {
		memset(big, 'Z', sizeof big);
		fmt_err(big, sz, -1, "%s: a reason", path);
		snprintf(tmp, sizeof tmp, "size %zu", sz);
		CHECK(strlen(big) < sz);
		CHECK(one_line(tmp, big, NULL));
		if (sz > 30) { /* room for the reason and some path */
			size_t bl = strlen(big);
			CHECK(bl >= 12 && strcmp(big + bl - 10, ": a reason") == 0);
			CHECK(strncmp(big, "ev\\nil", 6) == 0);
			CHECK(strstr(big, "...") != NULL);
		}
	}
}

int main(int argc, char **argv)
{
	char db[128], cmd[200];

	(void)argc;
	self = argv[0];
	snprintf(tmpdir, sizeof tmpdir, "/tmp/symdb-test-errbuf-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 2;
	test_missing_db();
	snprintf(db, sizeof db, "%s/db", tmpdir);
	test_not_object(db);
	test_indexer_relay(db);
	test_fmt_err();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_exit();
}
