/* SPDX-License-Identifier: MIT */
/*
 * fuzz_elf.c - libFuzzer target for the ELF half of the indexer on
 * arbitrary bytes: symdb_file_uuid() (build-id note or the fallback hash of
 * SPEC §5.2), then ix_elf_precheck() and ix_elf_load() (segments, symbol
 * tables, SPEC §7.1-7.2) and ix_tables_build().  The contract checked: a
 * rejection carries a one-line reason, and an accepted input becomes an
 * index file that the reader opens with every checksum verified and that
 * symdb_image_verify() accepts.  Anything else aborts, so the fuzzer
 * reports it.  The DWARF reader is not run here (libdwarf 20210528 aborts
 * on some hostile input by design; see README).
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "ix_emit.h"
#include "symdb.h"

static void check_reason(const char *eb)
{
	if (!eb[0] || strchr(eb, '\n')) {
		fprintf(stderr, "fuzz_elf: rejection without a one-line reason: '%s'\n", eb);
		abort();
	}
}

/* The built plan must come back as a valid index. */
static void check_output(const ix_output *out)
{
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS);
	char path[64], eb[512] = "";
	symdb_image *img;
	int fd = memfd_create("symdb-fuzz-out", MFD_CLOEXEC);

	if (fd < 0)
		return;
	o.errbuf = eb;
	o.errbuf_sz = sizeof eb;
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (fmt_wplan_write(&out->plan, fd) != 0 || symdb_image_open_file(path, &o, &img) != 0) {
		fprintf(stderr, "fuzz_elf: accepted input gave an unreadable index: %s\n", eb);
		abort();
	}
	if (symdb_image_verify(img, EB_OPTS(eb, sizeof eb)) != 0) {
		fprintf(stderr, "fuzz_elf: accepted input gave an invalid index: %s\n", eb);
		abort();
	}
	symdb_image_close(img);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = NULL);
	char path[64], eb[512] = "";
	symdb_uuid id;
	ix_image img;
	ix_output *out;
	int fd = fz_file(data, size, path, sizeof path), rc;

	if (fd < 0)
		return 0;
	o.errbuf = eb;
	o.errbuf_sz = sizeof eb;
	if (symdb_file_uuid(path, &o, &id) < 0)
		check_reason(eb);
	eb[0] = 0;
	rc = ix_elf_precheck(fd, path, eb, sizeof eb);
	if (rc < 0) {
		check_reason(eb);
		close(fd);
		return 0;
	}
	if (ix_image_init(&img) < 0) {
		close(fd);
		return 0;
	}
	rc = ix_elf_load(&img, fd, path, eb, sizeof eb);
	out = calloc(1, sizeof *out);
	if (rc < 0) {
		check_reason(eb);
	} else if (out) {
		img.uuid.len = 1; /* set by the builder from symdb_file_uuid */
		img.uuid.kind = SYMDB_UUID_GNU_BUILD_ID;
		if (ix_tables_build(&img, out, eb, sizeof eb) == 0)
			check_output(out);
		ix_output_free(out);
	}
	free(out);
	ix_image_free(&img);
	close(fd);
	return 0;
}
