/* SPDX-License-Identifier: MIT */
/*
 * catalog_files.c - the files of DB/catalog before and around LMDB (SPEC
 * §12.1, "Catalog files").
 *
 * LMDB opens DB/catalog/data.mdb and lock.mdb by path and maps data.mdb:
 * a file shorter than the pages its meta names kills the process with
 * SIGBUS on first touch, and a symbolic link there is followed.  So before
 * mdb_env_open every open checks, without following links, that DB/catalog
 * is a directory and its two files regular files, and that data.mdb is as
 * long as its current meta page says (format_lmdb.c); after the open, that
 * LMDB's data.mdb is the file checked.
 *
 * A catalog comes into being complete: created in DB/.catalog-new.PID.N
 * (every named database and the schema record committed) and renamed to
 * DB/catalog, so no reader ever sees a half-created one.  Recovery
 * (symdb reindex, verify --repair) never opens a damaged catalog: it moves
 * it aside to DB/catalog.damaged-<UTC time> and creates a fresh one the
 * same way, under a flock of DB so that two recoveries do not both move.
 */
#define _POSIX_C_SOURCE 200809L
#include "catalog_internal.h"
#include "format_header.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "format_lmdb.h"

#define CAT_HINT " (run 'symdb reindex')"
#define CAT_RECHECKS    3    /* a failed file check is repeated ... */
#define CAT_RECHECK_NS  5000000L /* ... 5 ms apart before it is believed */

static int cat_path(char *buf, size_t sz, const char *envdir, const char *name)
{
	return (size_t)snprintf(buf, sz, "%s/%s", envdir, name) < sz ? 0 : -ENAMETOOLONG;
}

/* lstat path: a symbolic link is refused, never followed; so is another
 * type than want (S_IFDIR or S_IFREG).  ENOENT is returned quietly. */
static int cat_lstat(const char *path, mode_t want, struct stat *st, char *eb, size_t ebsz)
{
	if (lstat(path, st) < 0) {
		int e = errno;

		if (e != ENOENT)
			cat_msg(eb, ebsz, path, "cannot open catalog", e);
		return -e;
	}
	if (S_ISLNK(st->st_mode)) {
		return fmt_err(eb, ebsz, -ELOOP, "%s: is a symbolic link; symdb does not follow "
		               "links inside a database", path);
	}
	if ((st->st_mode & S_IFMT) != want) {
		return fmt_err(eb, ebsz, want == S_IFDIR ? -ENOTDIR : SYMDB_E_CATALOG, "%s: not a %s",
		               path, want == S_IFDIR ? "directory" : "regular file");
	}
	return 0;
}

/* Damage that `symdb reindex` repairs: one line, SYMDB_E_CATALOG. */
static int cat_damaged(rd_catalog *c, char *eb, size_t ebsz, const char *path, const char *what)
{
	c->damaged = 1;
	return fmt_err(eb, ebsz, SYMDB_E_CATALOG, "%s: %s" CAT_HINT, path, what);
}

/* data.mdb against its metas, re-checked a few times on failure: none is
 * expected (see fmt_lmdb_check_fd), but a verdict that makes reindex move
 * the catalog aside had better be stable. */
static int cat_check_data(rd_catalog *c, const char *path, int fd, char *eb, size_t ebsz)
{
	struct timespec ts = { 0, CAT_RECHECK_NS };
	fmt_lmdb_check k;
	char what[256];
	int rc, i;

	for (i = 0;; i++) {
		rc = fmt_lmdb_check_fd(fd, &k);
		if (rc <= 0 || i == CAT_RECHECKS)
			break;
		nanosleep(&ts, NULL);
	}
	if (rc < 0) {
		cat_msg(eb, ebsz, path, "cannot read catalog", -rc);
		return rc;
	}
	if (rc == 0)
		return 0;
	if (rc == 2)
		snprintf(what, sizeof what, "%s", k.why);
	else if (k.need == 0)
		snprintf(what, sizeof what, "truncated: %" PRIu64 " bytes, shorter than LMDB's meta page",
		         k.size);
	else
		snprintf(what, sizeof what, "truncated: %" PRIu64 " bytes, the catalog needs %" PRIu64,
		         k.size, k.need);
	return cat_damaged(c, eb, ebsz, path, what);
}

int cat_files_check(rd_catalog *c, const char *envdir, struct stat *data, char *eb,
                    size_t ebsz)
{
	char path[4096];
	struct stat st;
	int fd, rc;

	c->damaged = 0;
	rc = cat_lstat(envdir, S_IFDIR, &st, eb, ebsz);
	if (rc == -ENOENT)
		cat_msg(eb, ebsz, envdir, "cannot open catalog", ENOENT);
	if (rc)
		return rc;
	if ((rc = cat_path(path, sizeof path, envdir, CAT_LOCK_FILE)) != 0)
		return rc;
	rc = cat_lstat(path, S_IFREG, &st, eb, ebsz);
	if (rc && rc != -ENOENT) /* LMDB creates a missing lock file */
		return rc;
	cat_path(path, sizeof path, envdir, CAT_DATA_FILE);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP)
			return cat_lstat(path, S_IFREG, &st, eb, ebsz);
		if (rc == -ENOENT) /* catalogs are created complete: lost */
			return cat_damaged(c, eb, ebsz, path, "missing");
		cat_msg(eb, ebsz, path, "cannot open catalog", -rc);
		return rc;
	}
	if (fstat(fd, data) < 0 || !S_ISREG(data->st_mode)) {
		close(fd);
		return fmt_err(eb, ebsz, SYMDB_E_CATALOG, "%s: not a regular file", path);
	}
	rc = cat_check_data(c, path, fd, eb, ebsz);
	close(fd);
	return rc;
}

int cat_files_opened(rd_catalog *c, const char *envdir, const struct stat *data, char *eb,
                     size_t ebsz)
{
	char path[4096];
	struct stat st;
	mdb_filehandle_t fd;
	unsigned fl = 0;
	struct cat_env *e = c->e;

	cat_path(path, sizeof path, envdir, CAT_DATA_FILE); /* fits: checked before */
	if (mdb_env_get_fd(e->env, &fd) != 0 || fstat(fd, &st) < 0 || st.st_dev != data->st_dev ||
	    st.st_ino != data->st_ino) {
		return fmt_err(eb, ebsz, SYMDB_E_CATALOG, "%s: replaced while being opened", path);
	}
	e->data_dev = st.st_dev;
	e->data_ino = st.st_ino;
	mdb_env_get_flags(e->env, &fl);
	if (fl & MDB_NOLOCK)
		return 0; /* no lock file in use */
	cat_path(path, sizeof path, envdir, CAT_LOCK_FILE);
	if (cat_lstat(path, S_IFREG, &st, eb, ebsz) != 0) {
		return fmt_err(eb, ebsz, SYMDB_E_CATALOG, "%s: replaced while being opened", path);
	}
	e->lock_dev = st.st_dev;
	e->lock_ino = st.st_ino;
	e->lock_known = 1;
	return 0;
}

/* LMDB 0.9's lock file for its default 126 readers: (126 - 1) reader
 * slots of 64 bytes and a 192-byte header.  An existing file keeps its
 * size: processes that have it mapped computed their reader count from
 * it. */
#define CAT_LOCK_BYTES 8192

int cat_lock_reserve(const char *envdir, char *errbuf, size_t errbuf_sz)
{
	char path[4096];
	struct stat st;
	int fd, rc = 0;

	if (cat_path(path, sizeof path, envdir, CAT_LOCK_FILE) != 0)
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
	if (fd < 0)
		return 0; /* read-only, a link...: LMDB's open and the checks say */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t len = st.st_size > 0 ? st.st_size : CAT_LOCK_BYTES;
		rc = posix_fallocate(fd, 0, len); /* returns the error */
		if (rc == EINVAL || rc == EOPNOTSUPP)
			rc = 0; /* no fallocate here: as LMDB alone */
	}
	close(fd);
	if (rc == ENOSPC || rc == EDQUOT) {
		cat_msg(errbuf, errbuf_sz, path, "cannot create the lock file", rc);
		return -rc;
	}
	return 0;
}

/* ---- creation ------------------------------------------------------------ */

static int cat_fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)
		rc = -errno;
	close(fd);
	return rc;
}

/* Remove a creation directory that lost or failed: only LMDB's two files. */
static void cat_remove_new(const char *tmp)
{
	char path[4096];

	if (cat_path(path, sizeof path, tmp, CAT_DATA_FILE) == 0)
		unlink(path);
	if (cat_path(path, sizeof path, tmp, CAT_LOCK_FILE) == 0)
		unlink(path);
	rmdir(tmp);
}

/* A fresh environment in tmp, filled by init in one committed write
 * transaction (LMDB fsyncs it), then closed.  Returns an LMDB code. */
static int cat_fill_new(const char *tmp, cat_write_fn init)
{
	rd_catalog *t = calloc(1, sizeof *t + 1);
	struct cat_env e = { 0 }; /* never listed: nobody else opens tmp */
	int rc;

	if (!t)
		return ENOMEM;
	t->flags = RD_CAT_WRITE;
	t->e = &e;
	pthread_rwlock_init(&t->swap, NULL);
	pthread_rwlock_init(&e.resize, NULL);
	rc = mdb_env_create(&e.env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(e.env, CAT_MAX_DBS);
	if (rc == 0)
		rc = mdb_env_set_mapsize(e.env, CAT_MAP_INITIAL);
	if (rc == 0 && cat_lock_reserve(tmp, NULL, 0) < 0)
		rc = ENOSPC;
	if (rc == 0)
		rc = mdb_env_open(e.env, tmp, MDB_NOTLS, 0666);
	if (rc == 0)
		rc = cat_write_raw(t, init, NULL);
	if (e.env)
		mdb_env_close(e.env);
	pthread_rwlock_destroy(&e.resize);
	pthread_rwlock_destroy(&t->swap);
	free(t);
	return rc;
}

/* mkdir DB/.catalog-new.PID.N with the mode mkdir gives DB/images (0777
 * less the umask; mkdtemp would give 0700). */
static int cat_mkdir_new(const rd_catalog *c, char *tmp, size_t sz)
{
	struct timespec now;
	unsigned n;

	clock_gettime(CLOCK_REALTIME, &now);
	for (n = 0; n < 100; n++) {
		if ((size_t)snprintf(tmp, sz, "%s/" CAT_NEW_PREFIX "%ld.%lx", c->dir, (long)getpid(),
		                     (unsigned long)now.tv_nsec + n) >= sz)
			return -ENAMETOOLONG;
		if (mkdir(tmp, 0777) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int cat_create_catalog(rd_catalog *c, const char *envdir, cat_write_fn init, char *eb,
                       size_t ebsz)
{
	char tmp[4096];
	struct stat st;
	int rc;

	if (lstat(envdir, &st) == 0 || errno != ENOENT)
		return 0; /* there (or unreadable): judged by cat_files_check */
	rc = cat_mkdir_new(c, tmp, sizeof tmp);
	if (rc) {
		cat_msg(eb, ebsz, c->dir, "cannot create catalog", -rc);
		return rc;
	}
	rc = cat_fill_new(tmp, init);
	if (rc == 0)
		rc = -cat_fsync_dir(tmp);
	if (rc) {
		cat_remove_new(tmp);
		cat_msg(eb, ebsz, envdir, "cannot create catalog", rc == EIO ? cat_commit_errno(c, rc) : rc);
		return rc > 0 ? -rc : SYMDB_E_CATALOG;
	}
	/* rename(2) onto a directory another creator put there first fails
	 * (not empty): theirs is as good as ours. */
	if (rename(tmp, envdir) < 0) {
		rc = errno;
		cat_remove_new(tmp);
		if (rc == EEXIST || rc == ENOTEMPTY)
			return 0;
		cat_msg(eb, ebsz, envdir, "cannot create catalog", rc);
		return -rc;
	}
	cat_fsync_dir(c->dir);
	return 0;
}

/* ---- recovery -------------------------------------------------------------- */

/* DB/catalog.damaged-YYYYMMDDTHHMMSSZ, or .2, .3 ... if taken. */
static int cat_aside_name(const rd_catalog *c, char *buf, size_t sz)
{
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];
	struct stat st;
	int n;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	for (n = 1; n < 1000; n++) {
		int len = n == 1 ? snprintf(buf, sz, "%s/" CAT_DAMAGED_NAME "%s", c->dir, stamp)
		                 : snprintf(buf, sz, "%s/" CAT_DAMAGED_NAME "%s.%d", c->dir, stamp, n);

		if (len < 0 || (size_t)len >= sz)
			return -ENAMETOOLONG;
		if (lstat(buf, &st) < 0 && errno == ENOENT)
			return 0;
	}
	return -EEXIST;
}

static int cat_recover_locked(rd_catalog *c, const char *envdir, const char *why,
                              cat_write_fn init, char *eb, size_t ebsz)
{
	char aside[4096], again[1024] = "";
	struct stat st;
	int rc = cat_files_check(c, envdir, &st, again, sizeof again);

	/* Judged again under the lock: another recovery may have been first.
	 * Files that pass may still hold a damaged tree: LMDB's open with the
	 * tree check says (it needs a pinned snapshot, so an environment). */
	if (rc == 0) {
		c->damaged = 0;
		cat_envs_lock();
		rc = cat_env_attach(c, envdir, &st, again, sizeof again);
		cat_envs_unlock();
		cat_env_detach(c);
	}
	if (rc == 0 || !c->damaged)
		return rc == 0 ? 0 : fmt_err(eb, ebsz, rc, "%s", again);
	rc = cat_aside_name(c, aside, sizeof aside);
	if (rc == 0 && rename(envdir, aside) < 0)
		rc = -errno;
	if (rc) {
		cat_msg(eb, ebsz, envdir, "cannot move the damaged catalog aside", -rc);
		return rc;
	}
	cat_fsync_dir(c->dir);
	size_t n = strlen(why) + strlen(aside) + 64, wl = strlen(why);
	const char *hint = strstr(why, CAT_HINT);

	if (hint && hint[sizeof CAT_HINT - 1] == 0)
		wl = (size_t)(hint - why); /* the hint is being followed */
	c->recovered = malloc(n);
	if (c->recovered)
		snprintf(c->recovered, n, "%.*s; moved to %s", (int)wl, why, aside);
	return cat_create_catalog(c, envdir, init, eb, ebsz);
}

int cat_recover(rd_catalog *c, const char *envdir, const char *why, cat_write_fn init,
                char *eb, size_t ebsz)
{
	int fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (fd < 0) {
		rc = errno;
		cat_msg(eb, ebsz, c->dir, "cannot open database", rc);
		return -rc;
	}
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			rc = errno;
			close(fd);
			cat_msg(eb, ebsz, c->dir, "cannot lock database", rc);
			return -rc;
		}
	rc = cat_recover_locked(c, envdir, why, init, eb, ebsz);
	close(fd); /* drops the flock */
	return rc;
}

/* ---- commit errors --------------------------------------------------------- */

/* LMDB reports a short pwrite(2) as EIO (its page flush treats any short
 * count alike), and a filesystem that fills mid-write gives exactly that.
 * When the catalog's filesystem has no room left for a page, say so. */
int cat_commit_errno(rd_catalog *c, int rc)
{
	char envdir[4096];
	struct statvfs sv;
	uint64_t left;

	if (rc != EIO || cat_path(envdir, sizeof envdir, c->dir, "catalog") != 0 ||
	    statvfs(envdir, &sv) < 0)
		return rc;
	left = (uint64_t)(geteuid() == 0 ? sv.f_bfree : sv.f_bavail) * sv.f_frsize;
	return left < FMT_LMDB_PSIZE_MAX ? ENOSPC : rc;
}
