/* SPDX-License-Identifier: MIT */
/*
 * fuzz_macho.c - libFuzzer target for the Mach-O half of the indexer:
 * symdb_file_uuids() (the load-command walk of fmt_macho.c, universal
 * headers, LC_UUID) and symdb_builder_add() with --force and --no-dwarf
 * into a scratch database (thin and universal files, LC_SYMTAB, the symbol
 * rules of SPEC §7.2, publishing).  Inputs that do not start with a Mach-O
 * or universal magic are skipped: the ELF path has fuzz_elf.  A failure
 * must carry a one-line reason; an indexed image must open with every
 * checksum verified and pass symdb_image_verify().
 *
 * The scratch database lives in $TMPDIR (default /tmp) and is removed at
 * exit; use a tmpfs for long runs, since each accepted input is published
 * (with fsync).
 */
#define _GNU_SOURCE /* memfd_create, nftw */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "symdb.h"
#include "symdb_build.h"

static char scratch[4096];
static symdb_builder *builder;

static void cleanup(void)
{
	symdb_builder_close(builder);
	builder = NULL;
	fz_rmtree(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc, (void)argv;
	snprintf(scratch, sizeof scratch, "%s/symdb-fuzz-macho-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch) || symdb_builder_open(scratch, NULL, &builder) < 0) {
		fprintf(stderr, "fuzz_macho: cannot create a scratch database in %s\n", scratch);
		exit(1);
	}
	atexit(cleanup);
	return 0;
}

static int is_macho(const uint8_t *d, size_t n)
{
	static const uint32_t magics[] = { 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe,
	                                   0xcafebabe, 0xcafebabf };
	uint32_t m;

	if (n < 4)
		return 0;
	m = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
	for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++)
		if (m == magics[i])
			return 1;
	return 0;
}

static void check_reason(const char *what, const char *eb)
{
	if (!eb[0] || strchr(eb, '\n')) {
		fprintf(stderr, "fuzz_macho: %s failed without a one-line reason: '%s'\n", what, eb);
		abort();
	}
}

/* Every image the builder reported must open verified.  Opened by path
 * (SPEC §12.1 layout), not through a second catalog handle: LMDB forbids
 * two environments on one catalog in a process. */
static void check_published(const symdb_build_result *r)
{
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS);
	char eb[512] = "", hex[2 * SYMDB_UUID_MAX + 1], path[4200];
	symdb_image *img;

	o.errbuf = eb;
	o.errbuf_sz = sizeof eb;
	for (unsigned i = 0; i < r->nimages && i < SYMDB_BUILD_MAX_IMAGES; i++) {
		if (r->images[i].skipped)
			continue;
		symdb_uuid_format(&r->images[i].uuid, hex);
		snprintf(path, sizeof path, "%s/images/%.2s/%s.symdb", scratch, hex, hex);
		if (symdb_image_open_file(path, &o, &img) < 0 ||
		    symdb_image_verify(img, EB_OPTS(eb, sizeof eb)) < 0) {
			fprintf(stderr, "fuzz_macho: published image %u is invalid: %s\n", i, eb);
			abort();
		}
		symdb_image_close(img);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = NULL);
	SYMDB_OPTS(symdb_build_opts, bo, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = SYMDB_BUILD_FORCE | SYMDB_BUILD_NO_DWARF);
	static __thread symdb_build_result res;
	symdb_file_image ims[8];
	char path[64], eb[512] = "";
	int fd;

	if (!builder)
		LLVMFuzzerInitialize(NULL, NULL);
	if (!is_macho(data, size) || (fd = fz_file(data, size, path, sizeof path)) < 0)
		return 0;
	o.errbuf = eb;
	o.errbuf_sz = sizeof eb;
	if (symdb_file_uuids(path, &o, ims, 8, sizeof ims[0]) < 0)
		check_reason("symdb_file_uuids", eb);
	eb[0] = 0;
	bo.errbuf = eb;
	bo.errbuf_sz = sizeof eb;
	res.sz = sizeof res;
	if (symdb_builder_add(builder, path, &bo, &res) < 0)
		check_reason("symdb_builder_add", eb);
	else
		check_published(&res);
	close(fd);
	return 0;
}
