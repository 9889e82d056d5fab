/* SPDX-License-Identifier: MIT */
/*
 * test_import.c: symdb_builder_import_file() on its own, without the CLI's
 * bundle checks in front of it (SPEC §12.7): an index file built in one
 * database imports into another byte for byte; a second import skips and
 * --force replaces; a wrong expected UUID, a damaged copy and a truncated
 * copy are refused with nothing published and nothing left in DB/tmp.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "symdb.h"
#include "symdb_build.h"

static symdb_build_result res; /* ~8 KiB: not on the stack */

static long file_bytes(const char *path, char *buf, long max)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -1;
	n = (long)fread(buf, 1, (size_t)max, f);
	fclose(f);
	return n;
}

static void write_bytes(const char *path, const char *buf, long n)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	if (f) {
		CHECK(fwrite(buf, 1, (size_t)n, f) == (size_t)n);
		fclose(f);
	}
}

/* Importing path with expect must fail with rc and leave dst as it was. */
static void refused(symdb_builder *b, const char *dst, const char *path,
                    const symdb_uuid *expect, int want)
{
	char err[512] = "", tmp[4096];
	SYMDB_OPTS(symdb_build_opts, o, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = SYMDB_BUILD_FORCE, .errbuf = err,
	           .errbuf_sz = sizeof err);
	res.sz = sizeof res;
	int rc = symdb_builder_import_file(b, path, expect, &o, &res);

	CHECK(want == 1 ? rc < 0 : rc == want);
	CHECK(err[0] && !strchr(err, '\n'));
	snprintf(tmp, sizeof tmp, "%s/tmp", dst);
	CHECK(check_dir_entries(tmp) == 0);
	printf("refused (%d): %s\n", rc, err);
}

int main(void)
{
	static char a[8 << 20], c[8 << 20];
	char base[] = "/tmp/symdb-import-XXXXXX", src[4096], dst[4096], bad[4096], path[4096];
	const char *tmpdir = getenv("TMPDIR");
	SYMDB_OPTS(symdb_build_opts, o, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = SYMDB_BUILD_NO_DWARF);
	symdb_builder *bs, *bd;
	symdb_uuid id, other;
	long n;

	if (tmpdir && *tmpdir && strlen(tmpdir) < 4000) {
		snprintf(src, sizeof src, "%s/symdb-import-XXXXXX", tmpdir);
		CHECK(mkdtemp(src) != NULL);
	} else {
		CHECK(mkdtemp(base) != NULL);
		snprintf(src, sizeof src, "%s", base);
	}
	snprintf(dst, sizeof dst, "%.4000s/dst", src);
	snprintf(bad, sizeof bad, "%.4000s/bad.symdb", src);
	CHECK_RC(symdb_builder_open(src, &o, &bs));
	res.sz = sizeof res;
	CHECK_RC(symdb_builder_add(bs, "/proc/self/exe", &o, &res));
	id = res.uuid;
	snprintf(path, sizeof path, "%s", res.index_path);
	n = file_bytes(path, a, sizeof a);
	CHECK(n > 128 && n < (long)sizeof a);

	CHECK_RC(symdb_builder_open(dst, &o, &bd));
	res.sz = sizeof res;
	CHECK_RC(symdb_builder_import_file(bd, path, &id, &o, &res));
	CHECK(!res.skipped && res.uuid.len == id.len && res.file_size == (uint64_t)n);
	CHECK(file_bytes(res.index_path, c, sizeof c) == n && !memcmp(a, c, (size_t)n));
	res.sz = sizeof res;
	CHECK_RC(symdb_builder_import_file(bd, path, NULL, &o, &res));
	CHECK(res.skipped == 1);

	other = id;
	other.bytes[0] ^= 1;
	write_bytes(bad, a, n);
	refused(bd, dst, bad, &other, SYMDB_E_INVAL);
	a[n - 1] ^= 0x40;
	write_bytes(bad, a, n);
	refused(bd, dst, bad, &id, SYMDB_E_CHECKSUM);
	a[n - 1] ^= 0x40;
	write_bytes(bad, a, n - 1);
	refused(bd, dst, bad, &id, 1); /* File_Size differs: any error */
	/* After all that, the published file is still the good one. */
	{
		symdb *db;
		symdb_image *img;
		SYMDB_OPTS(symdb_open_opts, oo, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS);
		CHECK_RC(symdb_open(dst, NULL, &db));
		CHECK_RC(symdb_image_open_uuid(db, &id, &oo, &img));
		symdb_image_close(img);
		symdb_close(db);
	}
	symdb_builder_close(bs);
	symdb_builder_close(bd);
	if (!check_failures && strlen(src) < 4000) {
		char cmd[4096 + 16];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", src);
		CHECK(system(cmd) == 0);
	}
	return check_exit();
}
