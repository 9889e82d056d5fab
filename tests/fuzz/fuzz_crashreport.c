/* SPDX-License-Identifier: MIT */
/*
 * fuzz_crashreport.c - libFuzzer target for `symdb symbolicate`: arbitrary
 * bytes as a crash report (classic .crash text, JSON .ips) and as --stack
 * input, symbolicated against a scratch database that holds the two
 * synthetic Mach-O seeds (UUIDs 0102…10 armv7, 1112…20 ppc), so that image
 * lookups succeed and frames get resolved.  Runs the real subcommand,
 * cli_cmd_symbolicate(), with the CLI sources linked in; the report goes to
 * /dev/null.  Contract: no crash, no sanitizer report, whatever the input.
 */
#define _GNU_SOURCE /* memfd_create, nftw */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "fuzz_util.h"
#include "symdb.h"
#include "symdb_build.h"

#ifndef FUZZ_MACHO_SEEDS
#error "FUZZ_MACHO_SEEDS (tests/fuzz/corpus/macho) must be defined"
#endif

static char scratch[4096];

/* symdb_main.c owns the help texts; the fuzzer never asks for them. */
void cli_usage(FILE *f, const char *cmd)
{
	(void)f, (void)cmd;
}

static void cleanup(void)
{
	fz_rmtree(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const seeds[] = { FUZZ_MACHO_SEEDS "/armv7_le",
	                                     FUZZ_MACHO_SEEDS "/ppc_be" };
	SYMDB_OPTS(symdb_build_opts, o, .indexer_path = SYMDB_TEST_INDEXER,
	           .flags = SYMDB_BUILD_NO_DWARF);
	static symdb_build_result r;
	const char *tmp = getenv("TMPDIR");
	symdb_builder *b;

	(void)argc, (void)argv;
	snprintf(scratch, sizeof scratch, "%s/symdb-fuzz-crash-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch) || symdb_builder_open(scratch, &o, &b) < 0) {
		fprintf(stderr, "fuzz_crashreport: cannot create a scratch database\n");
		exit(1);
	}
	atexit(cleanup);
	r.sz = sizeof r;
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
		if (symdb_builder_add(b, seeds[i], &o, &r) < 0)
			fprintf(stderr, "fuzz_crashreport: cannot index %s\n", seeds[i]);
	symdb_builder_close(b);
	if (!freopen("/dev/null", "w", stdout))
		exit(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cli_global g = { .db_dir = NULL };
	char path[64], db_opt[] = "--db", stack[] = "--stack", inl[] = "-i", cmd[] = "symbolicate";
	int fd;

	if (!scratch[0])
		LLVMFuzzerInitialize(NULL, NULL);
	fd = fz_file(data, size, path, sizeof path);
	if (fd < 0)
		return 0;
	char *report[] = { cmd, db_opt, scratch, path, NULL };
	cli_cmd_symbolicate(&g, 4, report);
	char *stack_args[] = { cmd, db_opt, scratch, stack, inl, path, NULL };
	cli_cmd_symbolicate(&g, 6, stack_args);
	fflush(stdout);
	close(fd);
	return 0;
}
