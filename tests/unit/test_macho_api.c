/* SPDX-License-Identifier: MIT */
/*
 * test_macho_api.c - the library side of Mach-O support, through public
 * headers only: symdb_file_uuids() on a universal dSYM, a thin dylib and a
 * .dSYM bundle directory (UUIDs passed in by the test driver from
 * llvm-dwarfdump-14), the count-only call (max 0), errors for non-objects;
 * then symdb_builder_add() on the universal file (nimages, per-slice arch,
 * skipped on the second run) and symdb_resolve_batch() on each slice.
 *
 * usage: test_macho_api DB FAT_DWARF FAT_DSYM_DIR THIN_DYLIB X86_UUID ARM_UUID
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "symdb.h"
#include "symdb_build.h"

static int has_uuid(const symdb_file_image *im, int n, const char *arch, const char *hex)
{
	for (int i = 0; i < n; i++) {
		char h[2 * SYMDB_UUID_MAX + 1];
		symdb_uuid_format(&im[i].uuid, h);
		if (!strcmp(im[i].arch, arch) && !strcmp(h, hex) &&
		    im[i].uuid.kind == SYMDB_UUID_MACHO && im[i].uuid.len == 16)
			return 1;
	}
	return 0;
}

static void test_uuids(char **argv)
{
	symdb_file_image im[8];
	char err[256] = "";
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	int n;

	n = symdb_file_uuids(argv[2], NULL, im, 8, sizeof im[0]);
	CHECK(n == 2);
	CHECK(has_uuid(im, n, "x86_64", argv[5]) && has_uuid(im, n, "arm64", argv[6]));
	CHECK(symdb_file_uuids(argv[2], NULL, NULL, 0, sizeof im[0]) == 2); /* count only */
	CHECK(symdb_file_uuids(argv[2], NULL, im, 1, sizeof im[0]) == 2); /* first one filled */
	n = symdb_file_uuids(argv[3], NULL, im, 8, sizeof im[0]); /* the bundle directory */
	CHECK(n == 2 && has_uuid(im, n, "arm64", argv[6]));
	n = symdb_file_uuids(argv[4], NULL, im, 8, sizeof im[0]); /* thin */
	CHECK(n == 1 && im[0].cputype == 0x0100000cu && !strcmp(im[0].arch, "arm64"));
	CHECK(symdb_file_uuids("/nonexistent/x", &o, im, 8, sizeof im[0]) < 0 &&
	      strstr(err, "/nonexistent/x"));
	CHECK(symdb_file_uuids("/tmp", &o, im, 8, sizeof im[0]) < 0); /* a directory but no dSYM */
	CHECK(symdb_file_uuids(NULL, NULL, im, 8, sizeof im[0]) == SYMDB_E_INVAL);
}

static void test_build_and_resolve(char **argv)
{
	symdb_builder *b = NULL;
	symdb_build_result *r = calloc(1, sizeof *r);
	symdb_file_image im[2];
	symdb *db = NULL;

	CHECK(r != NULL);
	if (!r)
		return;
	SYMDB_OPTS(symdb_build_opts, bo, .indexer_path = SYMDB_TEST_INDEXER);
	CHECK_RC(symdb_builder_open(argv[1], NULL, &b));
	r->sz = sizeof *r;
	CHECK_RC(symdb_builder_add(b, argv[2], &bo, r));
	CHECK(r->nimages == 2 && !strcmp(r->images[0].arch, "x86_64") &&
	      !strcmp(r->images[1].arch, "arm64") && !r->images[0].skipped);
	r->sz = sizeof *r;
	CHECK_RC(symdb_builder_add(b, argv[2], &bo, r));
	CHECK(r->nimages == 2 && r->images[0].skipped && r->images[1].skipped && r->skipped);
	symdb_builder_close(b);
	CHECK_RC(symdb_open(argv[1], NULL, &db));
	CHECK(symdb_file_uuids(argv[2], NULL, im, 2, sizeof im[0]) == 2);
	for (int i = 0; db && i < 2; i++) {
		symdb_image *img = NULL;
		uint64_t a[2] = { 0x100000000u, 0x100000800u };
		symdb_frame f[64];
		symdb_result res[2];
		symdb_image_info info;
		CHECK_RC(symdb_image_open_uuid(db, &im[i].uuid, NULL, &img));
		if (!img)
			continue;
		info.sz = sizeof info;
		symdb_image_get_info(img, &info);
		CHECK(info.object_format == 2 && info.base_address == 0x100000000u &&
		      info.machine == im[i].cputype);
		CHECK(symdb_resolve_batch(img, a, 2, f, 64, sizeof(symdb_frame), res,
		                          sizeof(symdb_result)) == 2);
		CHECK(res[1].count > 0 && res[1].sym_name != NULL);
		symdb_image_close(img);
	}
	symdb_close(db);
	free(r);
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: test_macho_api DB FAT_DWARF FAT_DSYM THIN X86_UUID ARM_UUID\n");
		return 2;
	}
	test_uuids(argv);
	test_build_and_resolve(argv);
	return check_exit();
}
