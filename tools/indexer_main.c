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
 *                 [--companion FD:PATH] [--dwp FD:PATH] [--dwo-pass]
 *                 [--dwo FD:PATH ...] --output FD:UUIDHEX ...
 *
 * Its confinement, before it reads its input: the limits (idx_confine),
 * then the seccomp filter (indexer_sandbox.c).  The test build
 * (symdb-indexer-test, SYMDB_INDEXER_TEST_HOOKS) also takes a leading
 * `--test-hook NAME` (indexer_hooks.c); this one carries no test hooks.
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
#include <sys/sysinfo.h>
#include <unistd.h>

#include "indexer_sandbox.h"
#include "symdb_indexer.h"
#ifdef SYMDB_INDEXER_TEST_HOOKS
#include "indexer_hooks.h"
#endif

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
/* The most DWARF walk threads (ix_dwarf_shards) and descriptors the
 * indexer may open itself (it is given every file it needs, so none): the
 * descriptors it was given stay usable whatever their numbers. */
#define IDX_MAX_THREADS 64
#define IDX_NOFILE 128

/* The most .dwo files of one job (FMT_REPORT_MAX_WANTS). */
#define IDX_MAX_DWOS 1000

struct idx_args {
	symdb_indexer_job job;
	symdb_indexer_file in[IDX_MAX_FILES], links[IDX_MAX_FILES], dwos[IDX_MAX_DWOS];
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
	if (idx_num(num, &v) < 0 || v < 3 || v > 65535)
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
	else if (!strcmp(opt, "--dwo") && j->ndwos < IDX_MAX_DWOS)
		f = &a->dwos[j->ndwos++];
	else if (!strcmp(opt, "--dwp") && j->dwp.fd < 0)
		f = &j->dwp;
	else if (!strcmp(opt, "--output") && j->noutputs < IDX_MAX_FILES) {
		symdb_indexer_output *o = &a->out[j->noutputs++];
		return idx_fdname(val, &o->fd, &o->uuid);
	} else if (!strcmp(opt, "--input") || !strcmp(opt, "--debuglink") ||
	           !strcmp(opt, "--debug") || !strcmp(opt, "--companion") ||
	           !strcmp(opt, "--output") || !strcmp(opt, "--dwo") || !strcmp(opt, "--dwp"))
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
	a->job.dwp.fd = -1;
	a->job.dwos = a->dwos;
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
		if (!strcmp(argv[i], "--dwo-pass")) {
			a->job.flags |= SYMDB_INDEXER_DWO_PASS;
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

/* Lower a limit, never raise it (an unprivileged raise fails anyway). */
static void idx_lower(int res, unsigned long long v)
{
	struct rlimit r;

	if (getrlimit(res, &r) == 0 && r.rlim_max != RLIM_INFINITY && r.rlim_max < v)
		v = r.rlim_max;
	idx_limit(res, v);
}

/*
 * RLIMIT_NPROC counts every task - thread or process - of the real user ID
 * on the machine, not this process's children, and root (or
 * CAP_SYS_RESOURCE) is not held to it at all.  A small number would stop the
 * DWARF walk's own threads whenever the user runs anything else (a thread
 * that cannot start only leaves its shards to the others, so the index is
 * the same, only slower), so the limit is the machine's task count now
 * (sysinfo: at least the user's) plus the walk's most threads plus a
 * margin for the builder's other indexers starting meanwhile: a fork bomb
 * where no seccomp filter stops it can at most double the machine's tasks.
 * The filter (indexer_sandbox.c) is what forbids new processes; this is
 * the backstop where the kernel has none, and does nothing for root.
 */
#define IDX_NPROC_MARGIN 256

static void idx_limit_nproc(void)
{
	struct sysinfo si;

	if (sysinfo(&si) == 0)
		idx_lower(RLIMIT_NPROC, (unsigned long long)si.procs + IDX_MAX_THREADS +
		                                IDX_NPROC_MARGIN);
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
	idx_limit_nproc();
	/* The descriptors it was given stay usable whatever their numbers;
	 * this bounds only what it opens itself. */
	idx_lower(RLIMIT_NOFILE, IDX_NOFILE);
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

/* The filter could not be built: say so in the end record and parse
 * nothing.  The exit status agrees with the record (SPEC §12.5). */
static void idx_refuse(int fd, int rc, const char *why)
{
	static unsigned char rec[16384];
	size_t n = symdb_indexer_end_record(rec, sizeof rec, rc, why);

	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, rec + off, n - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	_exit(rc <= -125 ? 125 : -rc);
}

/*
 * calloc over malloc + memset.  libdwarf 20210528 allocates every DIE,
 * attribute and list it hands out with calloc, and glibc 2.36's calloc
 * skips the per-thread cache that malloc and free use: each call takes
 * the arena lock and runs _int_malloc, and the chunks freed fill the cache
 * and then overflow into _int_free.  That was 16 % of a big C++ build's
 * CPU.  Defined in the executable, this calloc is the one every library
 * of the process binds to (ELF interposition); its memory is glibc's, so
 * glibc's free and realloc take it.  Large blocks keep glibc's calloc,
 * which knows that fresh mmap'ed pages are already zero (a sparse table
 * never touched stays out of RSS).  Left out under a sanitizer, which
 * intercepts calloc itself.
 */
#if defined(__GLIBC__) && !defined(IDX_ASAN)
#define IDX_CALLOC_SMALL (64 * 1024)
extern void *__libc_calloc(size_t n, size_t size);
__attribute__((visibility("default"))) void *calloc(size_t n, size_t size);
/* Called through a volatile pointer: GCC turns malloc + memset into a
 * call to calloc, which here would be this function calling itself. */
static void *(*volatile idx_malloc)(size_t) = malloc;

void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total) || total >= IDX_CALLOC_SMALL)
		return __libc_calloc(n, size);
	void *p = idx_malloc(total);
	if (p)
		memset(p, 0, total);
	return p;
}
#endif

int main(int argc, char **argv)
{
	struct idx_args a;
	char why[256] = "";
	int rc;
#ifdef SYMDB_INDEXER_TEST_HOOKS
	int (*hook)(char *, size_t) = NULL;
	int k = idx_test_hook_args(argc, argv, &hook);

	if (k < 0)
		return 2;
	argv[k] = argv[0];
	argv += k;
	argc -= k;
#endif
	if (idx_parse(&a, argc, argv) < 0)
		return 2;
	idx_confine(&a);
	/* What needs more of the system than the filter allows happens now. */
	symdb_indexer_prepare();
	rc = idx_sandbox_enter(a.job.report_fd, why, sizeof why);
	if (rc < 0)
		idx_refuse(a.job.report_fd, rc, why);
#ifdef SYMDB_INDEXER_TEST_HOOKS
	a.job.test_hook = hook;
#endif
	/* _exit: nothing to flush, and no exit-time work in the caged process. */
	_exit(symdb_indexer_run(&a.job));
}
