/* SPDX-License-Identifier: MIT */
/*
 * sanitizer_defaults.c - linked into the sandboxed executables
 * (symdb-indexer, symdb-fetch and their -test twins) of a sanitizer build
 * only (-DSYMDB_SANITIZE).  When a sanitizer finds a bug, its runtime
 * writes the report from inside the process, and would symbolize it by
 * running llvm-symbolizer or reading the executable and its libraries:
 * calls the sandboxes trap (indexer_sandbox.c, fetch_sandbox.c), which
 * would replace the report with "violated its sandbox: ...".  So frames
 * print as (module+0xOFFSET), which llvm-symbolizer resolves afterwards.
 */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__tsan_default_options(void);

const char *__asan_default_options(void)
{
	return "symbolize=0";
}

const char *__ubsan_default_options(void)
{
	return "symbolize=0";
}

const char *__tsan_default_options(void)
{
	return "symbolize=0";
}
