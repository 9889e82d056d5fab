/* SPDX-License-Identifier: MIT */
/*
 * check.h: the unit tests' assertion macros.  CHECK() prints file:line and the
 * failing expression and counts the failure instead of aborting (LMDB's E()
 * shape), so one run reports every broken check; check_exit() turns the count
 * into main()'s return value.  Header-only, one counter per test program.
 * A part that cannot run (a missing tool) calls check_skip(): then, if
 * nothing failed, check_exit() returns 77, which CTest reports as skipped
 * (SKIP_RETURN_CODE 77), never as a pass.
 */
#ifndef SYMDB_TESTS_CHECK_H
#define SYMDB_TESTS_CHECK_H

#include <dirent.h>
#include <stdio.h>
#include "symdb.h"

static int check_failures;
static int check_skips;

/* Part of the test could not run: say why; the test ends as skipped. */
#define check_skip(why) do { check_skips++; \
	fprintf(stderr, "%s:%d: SKIP: %s\n", __FILE__, __LINE__, (why)); } while (0)

/* Options that carry only an errbuf. */
#ifndef EB_OPTS
#define EB_OPTS(buf, size) \
	(&(symdb_open_opts){ .sz = sizeof(symdb_open_opts), .errbuf = (buf), .errbuf_sz = (size) })
#endif

#define CHECK(expr) do { if (!(expr)) { check_failures++; \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #expr); } } while (0)

/* rc must be >= 0; otherwise print the code and its symdb_strerror() text. */
#define CHECK_RC(rc) do { long long check_rc_ = (long long)(rc); if (check_rc_ < 0) { \
	check_failures++; fprintf(stderr, "%s:%d: %s = %lld (%s)\n", __FILE__, __LINE__, \
	#rc, check_rc_, symdb_strerror((int)check_rc_)); } } while (0)

static inline int check_exit(void)
{
	if (check_failures)
		fprintf(stderr, "%d check(s) failed\n", check_failures);
	else if (check_skips)
		fprintf(stderr, "%d part(s) skipped: reported as skipped (exit 77)\n", check_skips);
	return check_failures ? 1 : check_skips ? 77 : 0;
}

/* Entries of a directory other than dot files (e.g. DB/tmp left behind), or
 * -1 when it cannot be opened. */
static inline int check_dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

#endif /* SYMDB_TESTS_CHECK_H */
