/* SPDX-License-Identifier: MIT */
/*
 * indexer_sandbox.c - symdb-indexer's seccomp filter (SPEC §12.5).
 *
 * The indexer parses hostile bytes with libelf, libdwarf and our own
 * parsers; whatever a bug there lets an attacker run, it runs with this
 * filter.  The allow-list is what parsing and writing the staged output
 * were measured to need (strace -f over real inputs: libpython, glibc's and
 * libstdc++'s separate debug files, Mach-O, compressed DWARF, the
 * multi-threaded walk; README "The sandbox"): reading and writing
 * descriptors it already holds, memory, threads, signals to itself, the
 * clock.  Not allowed: opening or naming a path, sockets, exec, ptrace,
 * new processes, changing credentials.  clone is allowed only with
 * CLONE_THREAD (the walk's threads); clone3, whose flags sit in memory a
 * filter cannot read, fails with ENOSYS so that glibc falls back to clone.
 *
 * A forbidden call is SECCOMP_RET_TRAP: the kernel raises SIGSYS instead
 * of running it.  The handler writes the end record "indexer violated its
 * sandbox: NAME" on the report descriptor - from a table of names made
 * before the filter was loaded, into a static buffer: no allocation, no
 * stdio - and then lets SIGSYS kill the process.  The builder reports
 * "PATH: indexer violated its sandbox: NAME" and publishes nothing.
 *
 * A kernel without NO_NEW_PRIVS or seccomp filters gets one warning and
 * the resource limits only.
 */
#define _GNU_SOURCE /* O_TMPFILE, si_syscall */
#include "indexer_sandbox.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox_signal.h"
#include "symdb_indexer.h"

/* Syscall numbers named in the table; past it a violation says "syscall N". */
#define SBX_NAMES 1024
#define SBX_NAME_SZ 32
#define SBX_PREFIX "indexer violated its sandbox: "
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp trap (asm-generic/siginfo.h) */
#endif

/* Always allowed: descriptors it holds, memory, threads' housekeeping,
 * signals' plumbing, the clock. */
static const char *const sbx_allow[] = {
	"read", "readv", "pread64", "preadv", "preadv2",
	"write", "writev", "pwrite64", "pwritev", "pwritev2",
	"lseek", "fstat", "close", "ftruncate", "fallocate", "fsync", "fdatasync",
	"sync_file_range",
	"mmap", "munmap", "mprotect", "mremap", "madvise", "brk",
	"futex", "set_robust_list", "rseq", "sched_yield", "sched_getaffinity",
	"exit", "exit_group", "restart_syscall",
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
	"getpid", "gettid", "clock_gettime", "clock_getres", "gettimeofday",
	"getrandom",
	"sysinfo", /* glibc's qsort sizes its buffer by the physical memory */
};

static char sbx_names[SBX_NAMES][SBX_NAME_SZ];
static int sbx_report_fd = -1;
static unsigned char sbx_record[16384];
static atomic_flag sbx_once = ATOMIC_FLAG_INIT;
static atomic_int sbx_sent;

/* "syscall N" for a number without a name, into dst (>= 24 bytes). */
static void sbx_number(char *dst, long nr)
{
	char digits[24];
	size_t n = 0, k = sizeof "syscall " - 1;
	unsigned long v = nr < 0 ? 0ul - (unsigned long)nr : (unsigned long)nr;

	memcpy(dst, "syscall ", k);
	if (nr < 0)
		dst[k++] = '-';
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		dst[k++] = digits[--n];
	dst[k] = 0;
}

/* The SIGSYS handler: one end record naming the call, then die by SIGSYS.
 * Async-signal-safe: static buffers, write(2), sigaction, raise. */
static void sbx_sigsys(int sig, siginfo_t *si, void *uc)
{
	static char msg[sizeof SBX_PREFIX + SBX_NAME_SZ + 24];

	(void)uc;
	if (!atomic_flag_test_and_set(&sbx_once)) {
		long nr = si->si_code == SYS_SECCOMP ? si->si_syscall : -1;
		const char *name = nr >= 0 && nr < SBX_NAMES ? sbx_names[nr] : "";
		size_t k = sizeof SBX_PREFIX - 1;

		memcpy(msg, SBX_PREFIX, k);
		if (name[0])
			memcpy(msg + k, name, strlen(name) + 1);
		else
			sbx_number(msg + k, nr);
		size_t n = symdb_indexer_end_record(sbx_record, sizeof sbx_record, -EPERM, msg);
		if (sbx_report_fd >= 0 && n)
			sandbox_write_all(sbx_report_fd, sbx_record, n);
		atomic_store(&sbx_sent, 1);
	} else {
		/* Another thread is writing the record: let it finish. */
		for (int i = 0; i < 100000 && !atomic_load(&sbx_sent); i++)
			sched_yield();
	}
	sandbox_die_by(sig);
}

/* The name of every syscall number, now: the handler may not allocate. */
static void sbx_name_table(void)
{
	const uint32_t arch = seccomp_arch_native();

	for (int nr = 0; nr < SBX_NAMES; nr++) {
		char *n = seccomp_syscall_resolve_num_arch(arch, nr);
		if (n) {
			snprintf(sbx_names[nr], SBX_NAME_SZ, "%s", n);
			free(n);
		}
	}
}

/* glibc's malloc opens /proc/sys/vm/overcommit_memory the first time a
 * thread's arena gives memory back (check_may_shrink_heap, read once per
 * process), which the DWARF walk's threads do on large inputs - under the
 * filter that open would kill the indexer.  So a thread frees enough
 * below-mmap-threshold blocks into its arena's top here, before the filter,
 * for glibc to read it now.  About 0.1 ms; other allocators ignore it. */
static void *sbx_warm_thread(void *arg)
{
	enum { N = 16 };
	void *p[N];

	(void)arg;
	for (int i = 0; i < N; i++)
		p[i] = malloc(64u << 10);
	for (int i = N; i--;)
		free(p[i]);
	return NULL;
}

static void sbx_warm_malloc(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, sbx_warm_thread, NULL) == 0)
		pthread_join(t, NULL);
}

static int sbx_allow_names(scmp_filter_ctx f, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not a call of this architecture */
		int rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The calls allowed only with some arguments. */
static int sbx_allow_args(scmp_filter_ctx f)
{
	int rc = 0;

	/* a thread of this process, never a process */
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	                       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* fstat(2) is newfstatat(fd, "", st, AT_EMPTY_PATH) in glibc: a
	 * descriptor, no path */
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
	                       SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(statx), 1,
	                       SCMP_A2(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
	/* a descriptor's flags (libelf asks), never a change */
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
	                       SCMP_A1(SCMP_CMP_EQ, F_GETFD));
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
	                       SCMP_A1(SCMP_CMP_EQ, F_GETFL));
	/* signals to itself only: raise() and abort() */
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
	                       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
	                       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	return rc;
}

#ifdef SYMDB_SANITIZER_BUILD
/*
 * Sanitizer builds only (-DSYMDB_SANITIZE): when AddressSanitizer or UBSan
 * finds a bug, its runtime writes the report from inside this process.  Its
 * in-process symbolizer would open the executable, every library and their
 * debug files with glibc's openat(2) - the very call the sandbox must trap
 * - so symbolization is off (sanitizer_defaults.c: frames print as
 * "(module+0xOFFSET)", which llvm-symbolizer resolves afterwards; there is
 * no PATH to find an external symbolizer anyway).  What the report still
 * needs: reading /proc/self/maps (and cmdline, environ) with the raw
 * open(2) - never openat(2) - and marking that descriptor close-on-exec
 * (fcntl F_SETFD), resolving the modules' names with readlink(2), probing
 * memory through a pipe2(2), and asking whether stderr is a terminal
 * (ioctl TCGETS).  Trapped, those calls would replace the report with
 * "violated its sandbox: open", so this build also allows them.  openat and
 * everything the sandbox tests try (openat, socket, execve, clone, ptrace)
 * stay exactly as in the release filter, so those tests run unchanged under
 * the sanitizers.
 */
static int sbx_allow_sanitizer(scmp_filter_ctx f)
{
	const scmp_datum_t mask = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND |
	                          (O_TMPFILE & ~O_DIRECTORY);
	int rc = 0;

	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
	                       SCMP_A1(SCMP_CMP_MASKED_EQ, mask, O_RDONLY));
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
	                       SCMP_A1(SCMP_CMP_EQ, F_SETFD));
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(readlink), 0);
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(pipe2), 0);
	rc |= seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
	                       SCMP_A1(SCMP_CMP_EQ, TCGETS));
	return rc;
}
#endif

static int sbx_build(scmp_filter_ctx f)
{
	int rc = sbx_allow_names(f, sbx_allow, sizeof sbx_allow / sizeof sbx_allow[0]);

	if (rc == 0)
		rc = sbx_allow_args(f);
#ifdef SYMDB_SANITIZER_BUILD
	if (rc == 0)
		rc = sbx_allow_sanitizer(f);
#endif
	/* NO_NEW_PRIVS is already set, by idx_sandbox_enter, which can tell a
	 * kernel without it from one without filters. */
	if (rc == 0)
		rc = seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 0);
	return rc < 0 ? rc : rc ? -EINVAL : 0;
}

static void sbx_warn(const char *what, int err)
{
	fprintf(stderr,
	        "symdb-indexer: warning: no seccomp sandbox (%s: %s); the resource limits "
	        "still apply\n",
	        what, strerror(err));
}

int idx_sandbox_enter(int report_fd, char *why, size_t why_sz)
{
	struct sigaction sa;
	scmp_filter_ctx f;
	int rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		sbx_warn("PR_SET_NO_NEW_PRIVS", errno);
		return 1;
	}
	sbx_name_table();
	sbx_warm_malloc();
	sbx_report_fd = report_fd;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sbx_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0) {
		snprintf(why, why_sz, "cannot install the SIGSYS handler: %s", strerror(errno));
		return -errno;
	}
	f = seccomp_init(SCMP_ACT_TRAP);
	if (!f) {
		snprintf(why, why_sz, "cannot build the seccomp filter: out of memory");
		return -ENOMEM;
	}
	rc = sbx_build(f);
	if (rc) {
		seccomp_release(f);
		snprintf(why, why_sz, "cannot build the seccomp filter: %s", strerror(-rc));
		return rc;
	}
	rc = seccomp_load(f);
	seccomp_release(f);
	if (rc == -EINVAL || rc == -ENOSYS) {
		sbx_warn("seccomp filters", -rc);
		return 1;
	}
	if (rc) {
		snprintf(why, why_sz, "cannot load the seccomp filter: %s", strerror(-rc));
		return rc;
	}
	return 0;
}
