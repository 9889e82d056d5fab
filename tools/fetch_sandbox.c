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
 * - Landlock, by path: files may be read only under the system's trees
 *   (fsb_read_roots: libraries, NSS modules, certificates, resolver
 *   configuration, /proc, /dev), not in the user's home or elsewhere; they
 *   may be written, created, removed, renamed or truncated only under the
 *   debuginfod cache (nowhere in `url` mode); device ioctls are refused
 *   (ABI 5) and so are signals and abstract Unix sockets to anything
 *   outside the sandbox (ABI 6); no file may be executed.  And by port
 *   (ABI 4): TCP connections only to the ports the caller names (the
 *   sources' and proxies', fetch_main.c), so that a server's redirect or a
 *   hostile answer cannot make the fetcher talk to the other services of
 *   its host or network; no TCP port may be bound.  Descriptors
 *   opened before (the downloads' 3 and 4, stdout, stderr) are not
 *   affected: rights are checked when a file is opened.  Landlock does not
 *   cover chmod, chown, utimes or extended attributes.
 * - seccomp, by call: exec, new processes (clone without CLONE_THREAD,
 *   fork, vfork), ptrace and other processes' memory, namespaces, mounts,
 *   kernel modules, kexec, keys, BPF, perf events and the terminal ioctls
 *   that push input (TIOCSTI, TIOCLINUX) raise SIGSYS; the
 *   handler writes "error fetcher violated its sandbox: NAME" as the status
 *   line and lets the signal kill the process.  Everything else is allowed:
 *   a download needs most of the system's interface, which is why the
 *   filesystem is Landlock's part.  clone3, whose flags a filter cannot
 *   read, fails with ENOSYS, so glibc falls back to clone.
 *
 * A sanitizer build (SYMDB_SANITIZER_BUILD) allows ptrace and a clone
 * that shares the memory (CLONE_VM): LeakSanitizer's exit check stops the
 * threads from such a task, which ptraces them.  fork never shares the
 * memory and is still trapped, and Landlock still refuses to let the
 * fetcher ptrace anything outside its domain.  Its reports print frames
 * unsymbolized (sanitizer_defaults.c): symbolizing would run
 * llvm-symbolizer or read the binary, both refused here.
 *
 * The library also starts the fetcher in a session of its own
 * (fetch_spawn.c), so it has no controlling terminal to open.
 *
 * A kernel without Landlock (before 5.13, or not enabled) or without
 * seccomp filters runs the fetcher with what it has: 1, and why says what
 * is missing.  Any other failure to set a part up is an error: the
 * fetcher then fetches nothing.
 */
#define _GNU_SOURCE /* O_PATH, si_syscall */
#include "fetch_sandbox.h"
#include "sandbox_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
/* ABI 6's scopes (struct landlock_ruleset_attr.scoped, after
 * handled_access_net: newer than this system's header) */
#define FSB_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define FSB_SCOPE_SIGNAL (1ULL << 1)
/* ABI 4's network rights and rule (newer than this system's header) */
#define FSB_ACCESS_NET_BIND_TCP (1ULL << 0)
#define FSB_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define FSB_RULE_NET_PORT 2
struct fsb_net_port_attr {
	uint64_t allowed_access, port;
};
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp trap (asm-generic/siginfo.h) */
#endif

#define FSB_PREFIX "error fetcher violated its sandbox: "
#define FSB_NAME_SZ 32

/* The trees whose files may be read: what libc, libcurl, OpenSSL, GnuTLS
 * and libdebuginfod read (shared objects and NSS modules, /etc's resolver,
 * TLS and certificate files, /usr/share's certificates, /sys and the
 * process's own /proc entries, and the places a resolv.conf link leads
 * to in /run); not /home, /root, /tmp, /var, /srv, /mnt or /run/user,
 * where a user's secrets would be, nor other processes' /proc entries.
 * "/proc/self" is resolved when the rule is made: this process's own.  A
 * tree this system lacks is skipped. */
static const char *const fsb_read_roots[] = {
	"/etc", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/sys", "/proc/self", "/proc/sys",
	"/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager",
};
/* Device files that may be opened for reading, and no others: not a
 * terminal (keystrokes), not /dev/shm (other processes' memory). */
static const char *const fsb_read_devices[] = {
	"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom",
};

/* Trapped.  Names this architecture lacks are skipped. */
static const char *const fsb_deny[] = {
	"execve", "execveat", "fork", "vfork",
#ifndef SYMDB_SANITIZER_BUILD
	"ptrace",
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
 * handler may not allocate.  (+2: clone and ioctl, trapped with their
 * arguments.) */
static struct {
	int nr;
	char name[FSB_NAME_SZ];
} fsb_names[sizeof fsb_deny / sizeof fsb_deny[0] + 2];
static size_t fsb_nnames;
static atomic_flag fsb_once = ATOMIC_FLAG_INIT;

/* The SIGSYS handler: the status line, then death by SIGSYS.  One line
 * however many threads trap at once (the first writes it; libcurl's
 * resolver runs in threads).  Async-signal-safe: the stack, write(2),
 * sigaction, raise. */
static void fsb_sigsys(int sig, siginfo_t *si, void *uc)
{
	char line[sizeof FSB_PREFIX + FSB_NAME_SZ + 2];
	const char *name = "a forbidden system call";
	size_t k = sizeof FSB_PREFIX - 1;

	(void)uc;
	if (atomic_flag_test_and_set(&fsb_once))
		for (;;)
			pause(); /* another thread writes the line; its raise ends us */
	for (size_t i = 0; si->si_code == SYS_SECCOMP && i < fsb_nnames; i++)
		if (fsb_names[i].nr == si->si_syscall)
			name = fsb_names[i].name;
	memcpy(line, FSB_PREFIX, k);
	for (size_t i = 0; name[i] && k < sizeof line - 2; i++)
		line[k++] = name[i];
	line[k++] = '\n';
	sandbox_write_all(STDOUT_FILENO, line, k);
	sandbox_die_by(sig);
}

static void fsb_name(int nr, const char *name)
{
	fsb_names[fsb_nnames].nr = nr;
	snprintf(fsb_names[fsb_nnames].name, FSB_NAME_SZ, "%s", name);
	fsb_nnames++;
}

/* The rules, stopping at the first that fails: 0 or -errno. */
static int fsb_seccomp_rules(scmp_filter_ctx f)
{
	int rc;

	for (size_t i = 0; i < sizeof fsb_deny / sizeof fsb_deny[0]; i++) {
		int nr = seccomp_syscall_resolve_name(fsb_deny[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		fsb_name(nr, fsb_deny[i]);
		if ((rc = seccomp_rule_add(f, SCMP_ACT_TRAP, nr, 0)) < 0)
			return rc;
	}
	/* a thread of this process, never a process; a sanitizer build's
	 * leak checker clones a task sharing the memory (CLONE_VM), which
	 * fork never does */
#ifdef SYMDB_SANITIZER_BUILD
	const scmp_datum_t clone_mask = CLONE_THREAD | CLONE_VM;
#else
	const scmp_datum_t clone_mask = CLONE_THREAD;
#endif
	fsb_name(SCMP_SYS(clone), "clone");
	if ((rc = seccomp_rule_add(f, SCMP_ACT_TRAP, SCMP_SYS(clone), 1,
	                           SCMP_A0(SCMP_CMP_MASKED_EQ, clone_mask, 0))) < 0)
		return rc;
	/* pushing input into a terminal (the session's, had it one) */
	fsb_name(SCMP_SYS(ioctl), "ioctl TIOCSTI/TIOCLINUX");
	if ((rc = seccomp_rule_add(f, SCMP_ACT_TRAP, SCMP_SYS(ioctl), 1,
	                           SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI))) < 0 ||
	    (rc = seccomp_rule_add(f, SCMP_ACT_TRAP, SCMP_SYS(ioctl), 1,
	                           SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX))) < 0)
		return rc;
	if ((rc = seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
		return rc;
	/* NO_NEW_PRIVS is set already, by fetch_sandbox_enter */
	return seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 0);
}

/* 0, 1 when the kernel has no seccomp filters, or -errno. */
static int fsb_seccomp(char *why, size_t why_sz)
{
	struct sigaction sa;
	scmp_filter_ctx f;
	int rc;

	/* A kernel without filters is told apart before anything is built:
	 * any failure after this is an error, never "no filters".  Setting a
	 * NULL filter fails with EFAULT where filters exist, EINVAL where not
	 * (CONFIG_SECCOMP_FILTER off). */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) < 0 && errno == EINVAL) {
		snprintf(why, why_sz, "no seccomp filters in this kernel");
		return 1;
	}
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
	if (rc)
		snprintf(why, why_sz, "cannot build the seccomp filter: %s", strerror(-rc));
	else if ((rc = seccomp_load(f)) != 0)
		snprintf(why, why_sz, "cannot load the seccomp filter: %s", strerror(-rc));
	seccomp_release(f);
	return rc;
}

/* access to path (a directory, or a file when dir is 0) and below it. */
static int fsb_rule(int ruleset, const char *path, int dir, uint64_t access)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access };
	int rc = 0;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	if (pb.parent_fd < 0)
		return -errno;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
		rc = -errno;
	close(pb.parent_fd);
	return rc;
}

/* The ruleset's attributes as ABI 6 lays them out (this system's header
 * may know only the first field); the size given says which are read. */
struct fsb_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};

/* The read-only trees, then the cache: 0, or -errno naming the path in
 * why.  A read-only tree this system lacks is skipped. */
static int fsb_rules(int ruleset, const char *rw_dir, uint64_t handled, char *why,
                     size_t why_sz)
{
	const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	int rc;

	for (size_t i = 0; i < sizeof fsb_read_roots / sizeof fsb_read_roots[0]; i++) {
		rc = fsb_rule(ruleset, fsb_read_roots[i], 1, read);
		if (rc == -ENOENT || rc == -ENOTDIR)
			continue;
		if (rc) {
			snprintf(why, why_sz, "cannot confine the files: %s: %s", fsb_read_roots[i],
			         strerror(-rc));
			return rc;
		}
	}
	for (size_t i = 0; i < sizeof fsb_read_devices / sizeof fsb_read_devices[0]; i++) {
		rc = fsb_rule(ruleset, fsb_read_devices[i], 0, LANDLOCK_ACCESS_FS_READ_FILE);
		if (rc && rc != -ENOENT) {
			snprintf(why, why_sz, "cannot confine the files: %s: %s", fsb_read_devices[i],
			         strerror(-rc));
			return rc;
		}
	}
	if (rw_dir && (rc = fsb_rule(ruleset, rw_dir, 1,
	                             handled & ~(uint64_t)LANDLOCK_ACCESS_FS_EXECUTE)) != 0) {
		snprintf(why, why_sz, "cannot confine the files: %s: %s", rw_dir, strerror(-rc));
		return rc;
	}
	return 0;
}

/* TCP connect to each of ports[0..nports): 0, or -errno naming the port. */
static int fsb_net_rules(int ruleset, const uint16_t *ports, size_t nports, char *why,
                         size_t why_sz)
{
	for (size_t i = 0; i < nports; i++) {
		struct fsb_net_port_attr np = { FSB_ACCESS_NET_CONNECT_TCP, ports[i] };
		if (syscall(SYS_landlock_add_rule, ruleset, FSB_RULE_NET_PORT, &np, 0) != 0) {
			int e = errno;
			snprintf(why, why_sz, "cannot confine the network: port %u: %s", ports[i],
			         strerror(e));
			return -e;
		}
	}
	return 0;
}

/* 0, 1 when the kernel has no Landlock, or -errno. */
static int fsb_landlock(const char *rw_dir, const uint16_t *ports, size_t nports, char *why,
                        size_t why_sz)
{
	struct fsb_ruleset_attr ra = { .handled_access_fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1 };
	size_t ra_sz = sizeof ra.handled_access_fs; /* ABI 1: fs rights 0-12 */
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	int ruleset, rc;

	if (abi < 1) {
		snprintf(why, why_sz, "no Landlock in this kernel (%s)", strerror(errno));
		return 1;
	}
	if (abi >= 2)
		ra.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		ra.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 4) {
		ra.handled_access_net = FSB_ACCESS_NET_BIND_TCP | FSB_ACCESS_NET_CONNECT_TCP;
		ra_sz = offsetof(struct fsb_ruleset_attr, scoped);
	}
	if (abi >= 5)
		ra.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (abi >= 6) {
		ra.scoped = FSB_SCOPE_ABSTRACT_UNIX_SOCKET | FSB_SCOPE_SIGNAL;
		ra_sz = sizeof ra;
	}
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &ra, ra_sz, 0);
	if (ruleset < 0) {
		snprintf(why, why_sz, "cannot create the Landlock ruleset: %s", strerror(errno));
		return -errno;
	}
	rc = fsb_rules(ruleset, rw_dir, ra.handled_access_fs, why, why_sz);
	if (rc == 0 && ra.handled_access_net)
		rc = fsb_net_rules(ruleset, ports, nports, why, why_sz);
	if (rc == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
		rc = -errno;
		snprintf(why, why_sz, "cannot enter the Landlock domain: %s", strerror(-rc));
	}
	close(ruleset);
	return rc;
}

int fetch_sandbox_enter(const char *rw_dir, const uint16_t *ports, size_t nports, char *why,
                        size_t why_sz)
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
	if ((r1 = fsb_landlock(rw_dir, ports, nports, why, why_sz)) < 0)
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
