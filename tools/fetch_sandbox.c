/* SPDX-License-Identifier: MIT */
/*
 * fetch_sandbox.c - symdb-fetch's sandbox (fetch_sandbox.h).
 *
 * The fetcher parses what servers send - HTTP, TLS, redirects, libcurl's
 * and libdebuginfod's handling of them - so a bug there is run by whoever
 * controls a server or the path to it.  It cannot be caged like the
 * indexer (an allow-list of calls on descriptors it already holds): it must
 * resolve names, open sockets, read CA certificates and NSS modules, and
 * libdebuginfod keeps a cache of files.  So it gets two layers:
 *
 * - Landlock, by path: every file may be read, but written, created,
 *   removed, renamed or truncated only under the debuginfod cache (nowhere
 *   in `url` mode), and no file executed.  Descriptors opened before (the
 *   downloads' 3 and 4, stdout) are not affected: rights are checked when
 *   a file is opened.
 * - seccomp, by call: exec, new processes (clone without CLONE_THREAD,
 *   fork, vfork), ptrace and other processes' memory, namespaces, mounts,
 *   kernel modules, kexec, keys, BPF and perf events raise SIGSYS; the
 *   handler writes "error fetcher violated its sandbox: NAME" as the status
 *   line and lets the signal kill the process.  Everything else is allowed:
 *   a download needs most of the system's interface, which is why the
 *   filesystem is Landlock's part.  clone3, whose flags a filter cannot
 *   read, fails with ENOSYS, so glibc falls back to clone.
 *
 * A sanitizer build (SYMDB_SANITIZER_BUILD) leaves clone and ptrace out of
 * the filter: LeakSanitizer's exit check stops the threads from a cloned
 * task that ptraces them.  Landlock still refuses to let the fetcher
 * ptrace anything outside its domain.
 *
 * A kernel without Landlock (before 5.13, or not enabled) or without
 * seccomp filters runs the fetcher with what it has: 1, and why says what
 * is missing.
 */
#define _GNU_SOURCE /* O_PATH, si_syscall */
#include "fetch_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13) /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp trap (asm-generic/siginfo.h) */
#endif

#define FSB_PREFIX "error fetcher violated its sandbox: "
#define FSB_NAME_SZ 32

/* Trapped.  Names this architecture lacks are skipped. */
static const char *const fsb_deny[] = {
	"execve", "execveat",
#ifndef SYMDB_SANITIZER_BUILD
	"fork", "vfork", "ptrace",
#endif
	"process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount",
	"open_tree", "fsopen", "fsmount", "fsconfig", "mount_setattr",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
	"personality", "reboot", "swapon", "swapoff", "acct", "quotactl",
	"iopl", "ioperm",
};

/* The names of the trapped calls by number, made before the filter: the
 * handler may not allocate. */
static struct {
	int nr;
	char name[FSB_NAME_SZ];
} fsb_names[sizeof fsb_deny / sizeof fsb_deny[0] + 1];
static size_t fsb_nnames;

static void fsb_write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* The SIGSYS handler: the status line, then death by SIGSYS.
 * Async-signal-safe: a static buffer, write(2), sigaction, raise. */
static void fsb_sigsys(int sig, siginfo_t *si, void *uc)
{
	static char line[sizeof FSB_PREFIX + FSB_NAME_SZ + 2];
	const char *name = "a forbidden system call";
	struct sigaction dfl;
	size_t k = sizeof FSB_PREFIX - 1;

	(void)uc;
	for (size_t i = 0; si->si_code == SYS_SECCOMP && i < fsb_nnames; i++)
		if (fsb_names[i].nr == si->si_syscall)
			name = fsb_names[i].name;
	memcpy(line, FSB_PREFIX, k);
	for (size_t i = 0; name[i] && k < sizeof line - 2; i++)
		line[k++] = name[i];
	line[k++] = '\n';
	fsb_write_all(line, k);
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	raise(sig); /* pending until the handler returns */
}

static int fsb_seccomp_rules(scmp_filter_ctx f)
{
	int rc = 0;

	for (size_t i = 0; i < sizeof fsb_deny / sizeof fsb_deny[0]; i++) {
		int nr = seccomp_syscall_resolve_name(fsb_deny[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		fsb_names[fsb_nnames].nr = nr;
		snprintf(fsb_names[fsb_nnames].name, FSB_NAME_SZ, "%s", fsb_deny[i]);
		fsb_nnames++;
		rc |= seccomp_rule_add(f, SCMP_ACT_TRAP, nr, 0);
	}
#ifndef SYMDB_SANITIZER_BUILD
	/* a thread of this process, never a process */
	rc |= seccomp_rule_add(f, SCMP_ACT_TRAP, SCMP_SYS(clone), 1,
	                       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
	fsb_names[fsb_nnames].nr = SCMP_SYS(clone);
	snprintf(fsb_names[fsb_nnames].name, FSB_NAME_SZ, "clone");
	fsb_nnames++;
#endif
	rc |= seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* NO_NEW_PRIVS is set already, by fetch_sandbox_enter */
	rc |= seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 0);
	return rc < 0 ? rc : rc ? -EINVAL : 0;
}

/* 0, 1 when the kernel has no seccomp filters, or -errno. */
static int fsb_seccomp(char *why, size_t why_sz)
{
	struct sigaction sa;
	scmp_filter_ctx f;
	int rc;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fsb_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0) {
		snprintf(why, why_sz, "cannot install the SIGSYS handler: %s", strerror(errno));
		return -errno;
	}
	if (!(f = seccomp_init(SCMP_ACT_ALLOW))) {
		snprintf(why, why_sz, "cannot build the seccomp filter: out of memory");
		return -ENOMEM;
	}
	rc = fsb_seccomp_rules(f);
	if (rc == 0)
		rc = seccomp_load(f);
	seccomp_release(f);
	if (rc == -EINVAL || rc == -ENOSYS) {
		snprintf(why, why_sz, "no seccomp filters in this kernel");
		return 1;
	}
	if (rc)
		snprintf(why, why_sz, "cannot load the seccomp filter: %s", strerror(-rc));
	return rc;
}

static int fsb_rule(int ruleset, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access };
	int rc = 0;

	pb.parent_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return -errno;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
		rc = -errno;
	close(pb.parent_fd);
	return rc;
}

/* 0, 1 when the kernel has no Landlock, or -errno. */
static int fsb_landlock(const char *rw_dir, char *why, size_t why_sz)
{
	const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	uint64_t handled = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0-12 */
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	int ruleset, rc;

	if (abi < 1) {
		snprintf(why, why_sz, "no Landlock in this kernel (%s)", strerror(errno));
		return 1;
	}
	if (abi >= 2)
		handled |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
	struct landlock_ruleset_attr ra = { .handled_access_fs = handled };
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
	if (ruleset < 0) {
		snprintf(why, why_sz, "cannot create the Landlock ruleset: %s", strerror(errno));
		return -errno;
	}
	rc = fsb_rule(ruleset, "/", read);
	if (rc == 0 && rw_dir)
		rc = fsb_rule(ruleset, rw_dir, handled & ~(uint64_t)LANDLOCK_ACCESS_FS_EXECUTE);
	if (rc == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
		rc = -errno;
	if (rc)
		snprintf(why, why_sz, "cannot confine the files: %s: %s", rw_dir ? rw_dir : "/",
		         strerror(-rc));
	close(ruleset);
	return rc;
}

int fetch_sandbox_enter(const char *rw_dir, char *why, size_t why_sz)
{
	char why2[256] = "";
	int r1, r2;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(why, why_sz, "no PR_SET_NO_NEW_PRIVS (%s)", strerror(errno));
		return 1;
	}
	if (rw_dir && mkdir(rw_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(why, why_sz, "%s: %s", rw_dir, strerror(errno));
		return -errno;
	}
	if ((r1 = fsb_landlock(rw_dir, why, why_sz)) < 0)
		return r1;
	if ((r2 = fsb_seccomp(r1 ? why2 : why, r1 ? sizeof why2 : why_sz)) < 0) {
		if (r1)
			snprintf(why, why_sz, "%s", why2);
		return r2;
	}
	if (r1 && r2)
		snprintf(why + strlen(why), why_sz - strlen(why), "; %s", why2);
	return r1 || r2;
}
