/* SPDX-License-Identifier: MIT */
/*
 * durable_shim.c - an LD_PRELOAD library for tests/reliability/durable.sh:
 * it records, in the order they happen, every fsync/fdatasync (by the
 * device and inode of the descriptor, so it does not matter which
 * descriptor or path was used), every rename (the inode moved and the
 * absolute destination), every mkdir, and every LMDB commit (the catalog's
 * only way to change), one line each to the file named by $DURABLE_LOG:
 *   PID F DEV:INO
 *   PID R DEV:INO /abs/destination
 *   PID M /abs/directory
 *   PID B          (an LMDB commit begins)
 *   PID C TXNID    (and it wrote transaction TXNID)
 * durable_check.py then decides whether the publishing order of SPEC §12.5
 * held.  Inodes and absolute paths are resolved here and by the checker, so
 * the record is the same whether the library renames by path or between
 * directory descriptors, and whoever created the temp file.
 */
#define _GNU_SOURCE /* RTLD_NEXT, renameat2 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

static int log_fd = -1;

/* Opened before main, so a sandboxed process (no open(2) later) logs too. */
__attribute__((constructor)) static void shim_init(void)
{
	const char *p = getenv("DURABLE_LOG");

	if (p && *p)
		log_fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

/* One write(2) per line on an O_APPEND descriptor: lines never mix. */
static void shim_log(const char *fmt, ...)
{
	char line[PATH_MAX + 128];
	int n = snprintf(line, sizeof line, "%ld ", (long)getpid());
	va_list ap;

	if (log_fd < 0)
		return;
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof line - 1) {
		line[n++] = '\n';
		if (write(log_fd, line, (size_t)n) < 0) { /* nothing to do */
		}
	}
}

/* dirfd + path as an absolute path (not normalised: the checker stats it). */
static void shim_abs(int dirfd, const char *path, char *out, size_t sz)
{
	char dir[PATH_MAX] = "";

	if (path[0] == '/') {
		snprintf(out, sz, "%s", path);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(dir, sizeof dir))
			dir[0] = 0;
	} else {
		char link[64];
		snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
		ssize_t n = readlink(link, dir, sizeof dir - 1);
		dir[n > 0 ? n : 0] = 0;
	}
	snprintf(out, sz, "%s/%s", dir, path);
}

static void shim_synced(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0)
		shim_log("F %llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
}

int fsync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	int rc = real(fd);

	if (rc == 0)
		shim_synced(fd);
	return rc;
}

int fdatasync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	int rc = real(fd);

	if (rc == 0)
		shim_synced(fd);
	return rc;
}

/* The inode at (dirfd, from) before it moves, and where it went. */
static void shim_renamed(int fromfd, const char *from, const struct stat *st, int tofd,
                         const char *to)
{
	char dst[PATH_MAX];

	(void)fromfd;
	(void)from;
	shim_abs(tofd, to, dst, sizeof dst);
	shim_log("R %llu:%llu %s", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
	         dst);
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
	int (*real)(int, const char *, int, const char *, unsigned) =
		(int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
	struct stat st;
	int have = fstatat(fromfd, from, &st, AT_SYMLINK_NOFOLLOW) == 0;
	int rc = real(fromfd, from, tofd, to, flags);

	if (rc == 0 && have)
		shim_renamed(fromfd, from, &st, tofd, to);
	return rc;
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
	int (*real)(int, const char *, int, const char *) =
		(int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	struct stat st;
	int have = fstatat(fromfd, from, &st, AT_SYMLINK_NOFOLLOW) == 0;
	int rc = real(fromfd, from, tofd, to);

	if (rc == 0 && have)
		shim_renamed(fromfd, from, &st, tofd, to);
	return rc;
}

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) =
		(int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	struct stat st;
	int have = lstat(from, &st) == 0;
	int rc = real(from, to);

	if (rc == 0 && have)
		shim_renamed(AT_FDCWD, from, &st, AT_FDCWD, to);
	return rc;
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
	int (*real)(int, const char *, mode_t) =
		(int (*)(int, const char *, mode_t))dlsym(RTLD_NEXT, "mkdirat");
	int rc = real(dirfd, path, mode);
	char abs[PATH_MAX];

	if (rc == 0) {
		shim_abs(dirfd, path, abs, sizeof abs);
		shim_log("M %s", abs);
	}
	return rc;
}

int mkdir(const char *path, mode_t mode)
{
	int (*real)(const char *, mode_t) = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
	int rc = real(path, mode);
	char abs[PATH_MAX];

	if (rc == 0) {
		shim_abs(AT_FDCWD, path, abs, sizeof abs);
		shim_log("M %s", abs);
	}
	return rc;
}

/* LMDB's commit, the only way the catalog changes (liblmdb is a shared
 * library the CLI reaches through libsymdb).  B before it starts; C once it
 * returned, and only when it wrote a transaction (the environment's last transaction id
 * moved): committing a read-only transaction changes nothing.  The
 * LMDB functions are looked up, not linked, so that the shim loads into
 * processes without LMDB too. */
int mdb_txn_commit(MDB_txn *txn)
{
	int (*real)(MDB_txn *) = (int (*)(MDB_txn *))dlsym(RTLD_NEXT, "mdb_txn_commit");
	MDB_env *(*env_of)(MDB_txn *) = (MDB_env * (*)(MDB_txn *)) dlsym(RTLD_DEFAULT, "mdb_txn_env");
	int (*info)(MDB_env *, MDB_envinfo *) =
		(int (*)(MDB_env *, MDB_envinfo *))dlsym(RTLD_DEFAULT, "mdb_env_info");
	MDB_env *env = env_of(txn);
	MDB_envinfo before, after;
	int have = info(env, &before) == 0;

	shim_log("B");
	int rc = real(txn);

	if (rc == 0 && have && info(env, &after) == 0 && after.me_last_txnid != before.me_last_txnid)
		shim_log("C %zu", (size_t)after.me_last_txnid);
	return rc;
}
