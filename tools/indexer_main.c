/* SPDX-License-Identifier: MIT */
/*
 * indexer_main.c - the symdb-indexer executable (SPEC §12.5): the process
 * that parses one untrusted input for a builder and stages its index
 * files.  It sets its own limits before it reads anything, then runs
 * symdb_indexer_run(), which reports on the given descriptor.  Every file
 * comes as an open descriptor (SPEC §12.5): after this command line the
 * process opens, stats and resolves no path.
 *
 *   symdb-indexer --report-fd N [--parent PID] [--cpu-limit S]
 *                 [--memory-limit BYTES] [--uuid KIND:HEX] [--threads N]
 *                 [--cpus N] [--no-dwarf] [--dsym] --input FD:NAME ...
 *                 [--debug FD:PATH] [--debuglink FD:PATH ...]
 *                 [--companion FD:PATH] --output FD:UUIDHEX ...
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

/* IDX_ASAN: a sanitizer that reserves terabytes of address space
 * (AddressSanitizer, ThreadSanitizer). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IDX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define IDX_ASAN 1
#endif
#endif

#define IDX_MAX_FILES 64 /* of each kind: FMT_REPORT_MAX_IMAGES outputs */

struct idx_args {
	symdb_indexer_job job;
	symdb_indexer_file in[IDX_MAX_FILES], links[IDX_MAX_FILES];
	symdb_indexer_output out[IDX_MAX_FILES];
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

/* FD:NAME, a descriptor above stderr and the name it goes by (which may
 * hold any byte but NUL, ':' included). */
static int idx_fdname(const char *val, int *fd, const char **name)
{
	const char *colon = strchr(val, ':');
	char num[16];
	unsigned long long v;

	if (!colon || colon == val || (size_t)(colon - val) >= sizeof num)
		return idx_usage("expected FD:NAME", val);
	memcpy(num, val, (size_t)(colon - val));
	num[colon - val] = 0;
	if (idx_num(num, &v) < 0 || v < 3 || v > 1024)
		return idx_usage("bad descriptor", val);
	*fd = (int)v;
	*name = colon + 1;
	return 0;
}

/* One of the FD:NAME options; 1 when opt is none of them. */
static int idx_file_opt(struct idx_args *a, const char *opt, const char *val)
{
	symdb_indexer_job *j = &a->job;
	symdb_indexer_file *f;

	if (!strcmp(opt, "--input") && j->ninputs < IDX_MAX_FILES)
		f = &a->in[j->ninputs++];
	else if (!strcmp(opt, "--debuglink") && j->ndebuglinks < IDX_MAX_FILES)
		f = &a->links[j->ndebuglinks++];
	else if (!strcmp(opt, "--debug") && j->debug.fd < 0)
		f = &j->debug;
	else if (!strcmp(opt, "--companion") && j->companion.fd < 0)
		f = &j->companion;
	else if (!strcmp(opt, "--output") && j->noutputs < IDX_MAX_FILES) {
		symdb_indexer_output *o = &a->out[j->noutputs++];
		return idx_fdname(val, &o->fd, &o->uuid);
	} else if (!strcmp(opt, "--input") || !strcmp(opt, "--debuglink") ||
	           !strcmp(opt, "--debug") || !strcmp(opt, "--companion") ||
	           !strcmp(opt, "--output"))
		return idx_usage("too many", opt);
	else
		return 1;
	return idx_fdname(val, &f->fd, &f->name);
}

/* One option and its value; -1 for a bad one. */
static int idx_opt(struct idx_args *a, const char *opt, const char *val)
{
	unsigned long long v = 0;
	int rc;

	if (!strcmp(opt, "--uuid")) {
		a->job.uuid = val;
		return 0;
	}
	if ((rc = idx_file_opt(a, opt, val)) != 1)
		return rc;
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
	else if (!strcmp(opt, "--cpus") && v <= 4096)
		a->job.cpus = (unsigned)v;
	else
		return idx_usage("unknown option or value out of range", opt);
	return 0;
}

static int idx_parse(struct idx_args *a, int argc, char **argv)
{
	int i = 1;

	memset(a, 0, sizeof *a);
	a->job.report_fd = -1;
	a->job.debug.fd = -1;
	a->job.companion.fd = -1;
	a->job.inputs = a->in;
	a->job.debuglinks = a->links;
	a->job.outputs = a->out;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--no-dwarf")) {
			a->job.flags |= SYMDB_INDEXER_NO_DWARF;
			continue;
		}
		if (!strcmp(argv[i], "--dsym")) {
			a->job.flags |= SYMDB_INDEXER_DSYM;
			continue;
		}
		if (i + 1 >= argc)
			return idx_usage("option requires a value", argv[i]);
		if (idx_opt(a, argv[i], argv[i + 1]) < 0)
			return -1;
		i++;
	}
	if (i != argc)
		return idx_usage("unexpected argument", argv[i]);
	if (a->job.report_fd < 0)
		return idx_usage("--report-fd is required", NULL);
	if (a->job.ninputs == 0 || a->job.noutputs == 0)
		return idx_usage("--input and --output are required", NULL);
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
		/* AddressSanitizer and ThreadSanitizer reserve terabytes of
		 * address space. */
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
