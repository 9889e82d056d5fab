/* SPDX-License-Identifier: MIT */
/*
 * indexer_main.c - the symdb-indexer executable (SPEC §12.5): the process
 * that parses one untrusted input for a builder and stages its index
 * files.  It sets its own limits before it reads anything, then runs
 * symdb_indexer_run(), which reports on the given descriptor.
 *
 *   symdb-indexer --report-fd N [--tag TAG] [--parent PID] [--cpu-limit S]
 *                 [--memory-limit BYTES] [--uuid KIND:HEX] [--threads N]
 *                 [--no-dwarf] [--debug-dir DIR] [--] INPUT STAGING_DIR
 *
 * Exit status: 0, or the staging error's magnitude (the end record says
 * which); 2 for a bad command line; 127 when the parent is already gone.
 */
#define _GNU_SOURCE /* prctl */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "symdb_indexer.h"

#if defined(__SANITIZE_ADDRESS__)
#define IDX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IDX_ASAN 1
#endif
#endif

struct idx_args {
	symdb_indexer_job job;
	long long parent;  /* 0: not checked */
	unsigned long long cpu, memory; /* 0: no limit */
};

static int idx_usage(const char *why, const char *arg)
{
	fprintf(stderr, "symdb-indexer: %s%s%s\n", why, arg ? ": " : "", arg ? arg : "");
	return -1;
}

/* A decimal number that fills its whole argument. */
static int idx_num(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && !*end && errno == 0 ? 0 : -1;
}

/* One option and its value; -1 for a bad one. */
static int idx_opt(struct idx_args *a, const char *opt, const char *val)
{
	unsigned long long v = 0;

	if (!strcmp(opt, "--tag")) {
		a->job.tag = val;
		return 0;
	}
	if (!strcmp(opt, "--debug-dir")) {
		a->job.debug_dir = val;
		return 0;
	}
	if (!strcmp(opt, "--uuid")) {
		a->job.uuid = val;
		return 0;
	}
	if (idx_num(val, &v) < 0)
		return idx_usage("not a number", val);
	if (!strcmp(opt, "--report-fd") && v <= 1024)
		a->job.report_fd = (int)v;
	else if (!strcmp(opt, "--parent"))
		a->parent = (long long)v;
	else if (!strcmp(opt, "--cpu-limit"))
		a->cpu = v;
	else if (!strcmp(opt, "--memory-limit"))
		a->memory = v;
	else if (!strcmp(opt, "--threads") && v <= 4096)
		a->job.threads = (unsigned)v;
	else
		return idx_usage("unknown option or value out of range", opt);
	return 0;
}

static int idx_parse(struct idx_args *a, int argc, char **argv)
{
	int i = 1;

	memset(a, 0, sizeof *a);
	a->job.report_fd = -1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--no-dwarf")) {
			a->job.flags |= SYMDB_INDEXER_NO_DWARF;
			continue;
		}
		if (i + 1 >= argc)
			return idx_usage("option requires a value", argv[i]);
		if (idx_opt(a, argv[i], argv[i + 1]) < 0)
			return -1;
		i++;
	}
	if (argc - i != 2)
		return idx_usage("expected INPUT STAGING_DIR", NULL);
	if (a->job.report_fd < 0)
		return idx_usage("--report-fd is required", NULL);
	a->job.input = argv[i];
	a->job.staging_dir = argv[i + 1];
	return 0;
}

static void idx_limit(int res, unsigned long long v)
{
	struct rlimit r = { (rlim_t)v, (rlim_t)v };

	setrlimit(res, &r);
}

/* Limits first, before a byte of the input is read (SPEC §12.5). */
static void idx_confine(const struct idx_args *a)
{
	/* Die with the builder's thread; a parent gone before the prctl
	 * already reparented us. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (a->parent && getppid() != (pid_t)a->parent)
		_exit(127);
	idx_limit(RLIMIT_CORE, 0);
	if (a->cpu)
		idx_limit(RLIMIT_CPU, a->cpu);
	if (a->memory) {
#ifndef IDX_ASAN
		/* AddressSanitizer reserves terabytes of address space. */
		idx_limit(RLIMIT_AS, a->memory);
#endif
		/* The index is built in memory before it is written, so the
		 * address-space limit bounds the output too. */
		idx_limit(RLIMIT_FSIZE, a->memory);
	}
	signal(SIGXFSZ, SIG_IGN); /* write() fails with EFBIG instead */
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	struct idx_args a;

	if (idx_parse(&a, argc, argv) < 0)
		return 2;
	idx_confine(&a);
	/* Test-only crash hook (README "Tests"); read here, never by a library. */
	a.job.test_hook = getenv("SYMDB_TEST_CAGE_CRASH");
	/* _exit: nothing to flush, and no exit-time work in the caged process. */
	_exit(symdb_indexer_run(&a.job));
}
