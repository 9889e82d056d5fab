/* SPDX-License-Identifier: MIT */
/*
 * db_dir.c - entries inside a database directory, reached only through
 * directory descriptors (db_dir.h, SPEC §12.1 "Entries inside DB").
 *
 * Why: a database may be writable by more than one user (a shared cache).
 * Resolving DB/images/XX/NAME as a path lets anyone who can write DB/images
 * replace XX with a symbolic link to a directory of their choice between
 * our check and our unlink; root's gc then deletes that user's pick.  Here
 * every component is opened relative to its parent's descriptor with
 * O_NOFOLLOW, judged on the descriptor's own fstat, and every later rename
 * or unlink is made relative to that descriptor, so what was judged is what
 * is changed.
 */
#define _GNU_SOURCE /* O_DIRECTORY, O_NOFOLLOW, getrandom */
#include "db_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "format_header.h"
#include "format_layout.h"
#include "symdb.h"

#define SAFE_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

const char *rd_safe_why(int rc)
{
	if (rc == -ELOOP)
		return "symbolic link, not followed";
	if (rc == -EPERM)
		return "owned by another user, not followed";
	return NULL;
}

int rd_safe_judge(const rd_safedir *d, const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return -ELOOP;
	if (st->st_uid != d->owner && st->st_uid != geteuid())
		return -EPERM;
	return 0;
}

/* Open the directory `name` in d, judged; -ELOOP for a symbolic link. */
static int sub_open(const rd_safedir *d, const char *name, int create)
{
	struct stat st;
	int fd, rc;

	fd = openat(d->fd, name, SAFE_DIR_FLAGS);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(d->fd, name, 0777) == 0)
			(void)rd_safedir_sync(d); /* the new name is durable */
		else if (errno != EEXIST)
			return -errno;
		fd = openat(d->fd, name, SAFE_DIR_FLAGS);
	}
	if (fd < 0) {
		rc = -errno;
		/* O_NOFOLLOW|O_DIRECTORY: ELOOP or ENOTDIR for a link. */
		if ((rc == -ELOOP || rc == -ENOTDIR) &&
		    fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			rc = -ELOOP;
		return rc;
	}
	rc = fstat(fd, &st) < 0 ? -errno : rd_safe_judge(d, &st);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int rd_safedir_open(rd_safedir *d, const char *dbdir, const char *rel, int create, char *eb,
                    size_t ebsz)
{
	char comp[256];
	struct stat st;
	size_t at = 0;

	d->fd = open(dbdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* DB: the caller's choice */
	if (d->fd < 0 || fstat(d->fd, &st) < 0) {
		int rc = -errno;
		rd_safedir_close(d);
		return fmt_err(eb, ebsz, rc, "%s: %s", dbdir, symdb_strerror(rc));
	}
	d->owner = st.st_uid;
	while (rel[at]) {
		size_t n = strcspn(rel + at, "/");
		int fd;

		if (n == 0 || n >= sizeof comp) {
			rd_safedir_close(d);
			return fmt_err(eb, ebsz, -EINVAL, "%s/%s: not a database path", dbdir, rel);
		}
		memcpy(comp, rel + at, n);
		comp[n] = 0;
		fd = sub_open(d, comp, create);
		if (fd < 0) {
			const char *why = rd_safe_why(fd);
			rd_safedir_close(d);
			return fmt_err(eb, ebsz, fd, "%s/%.*s: %s", dbdir, (int)(at + n), rel,
			               why ? why : symdb_strerror(fd));
		}
		close(d->fd);
		d->fd = fd;
		at += n;
		if (rel[at] == '/')
			at++;
	}
	return 0;
}

int rd_safedir_images(rd_safedir *d, const char *dbdir, const char *hex, int create, char *eb,
                      size_t ebsz)
{
	char rel[64];

	if (strlen(hex) < 2 || strchr(hex, '/') || hex[0] == '.')
		return fmt_err(eb, ebsz, -EINVAL, "%s: not a UUID", hex);
	snprintf(rel, sizeof rel, FMT_LAYOUT_IMAGES "/%.2s", hex);
	return rd_safedir_open(d, dbdir, rel, create, eb, ebsz);
}

/* Is c[0..n) a name one may open in a directory ("." and ".." are not)? */
static int plain_name(const char *c, size_t n)
{
	return n > 0 && !(n == 1 && c[0] == '.') && !(n == 2 && c[0] == '.' && c[1] == '.');
}

int rd_safedir_of(rd_safedir *d, const char *path, const char **name, int create, char *eb,
                  size_t ebsz)
{
	const size_t ilen = sizeof FMT_LAYOUT_IMAGES - 1;
	const char *s3 = strrchr(path, '/'), *s2 = NULL, *s1 = NULL, *p;
	char db[4096], rel[64];
	size_t dblen;

	d->fd = -1;
	/* path = DB/images/XX/NAME: s1, s2, s3 are the last three slashes. */
	for (p = s3; p && p > path && !s1; p--)
		if (p[-1] == '/') {
			if (!s2)
				s2 = p - 1;
			else
				s1 = p - 1;
		}
	if (!s3 || !s2 || !plain_name(s3 + 1, strlen(s3 + 1)) ||
	    !plain_name(s2 + 1, (size_t)(s3 - s2 - 1)) || (size_t)(s3 - s2 - 1) >= 32)
		return fmt_err(eb, ebsz, -EINVAL, "%s: not a file inside a database", path);
	/* s1 may be missing: "images/XX/NAME" relative to the current directory. */
	p = s1 ? s1 + 1 : path;
	if ((size_t)(s2 - p) != ilen || memcmp(p, FMT_LAYOUT_IMAGES, ilen) != 0)
		return fmt_err(eb, ebsz, -EINVAL, "%s: not a file inside a database", path);
	dblen = s1 ? (size_t)(s1 - path) : 0;
	if (dblen + 2 > sizeof db)
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s: path too long", path);
	if (!s1)
		snprintf(db, sizeof db, ".");
	else if (dblen == 0)
		snprintf(db, sizeof db, "/");
	else
		snprintf(db, sizeof db, "%.*s", (int)dblen, path);
	snprintf(rel, sizeof rel, "%.*s", (int)(s3 - p), p);
	*name = s3 + 1;
	return rd_safedir_open(d, db, rel, create, eb, ebsz);
}

int rd_safedir_lock_of(rd_safedir *d, const char *path, const char **name)
{
	int rc = rd_safedir_of(d, path, name, 0, NULL, 0);

	if (rc == 0 && (rc = rd_safedir_lock(d)) != 0)
		rd_safedir_close(d);
	return rc;
}

void rd_safedir_close(rd_safedir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int rd_safedir_lock(rd_safedir *d)
{
	while (flock(d->fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int rd_safedir_sync(const rd_safedir *d)
{
	if (fsync(d->fd) < 0 && errno != EINVAL) /* EINVAL: fs without dir fsync */
		return -errno;
	return 0;
}

int rd_safe_stat(const rd_safedir *d, const char *name, struct stat *st)
{
	int rc;

	if (fstatat(d->fd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if ((rc = rd_safe_judge(d, st)) != 0)
		return rc;
	return S_ISREG(st->st_mode) ? 0 : -EINVAL;
}

int rd_safe_openat(const rd_safedir *d, const char *name, int flags)
{
	/* O_NONBLOCK: a FIFO planted here must not hang the open. */
	int fd = openat(d->fd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), rc;
	struct stat st;

	if (fd < 0)
		return -errno; /* -ELOOP for a symbolic link */
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if ((rc = rd_safe_judge(d, &st)) == 0 && !S_ISREG(st.st_mode))
		rc = -EINVAL;
	if (rc == 0 && (flags & O_ACCMODE) == O_RDONLY &&
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int rd_safe_open_path(const char *path)
{
	rd_safedir d;
	const char *name;
	int rc = rd_safedir_of(&d, path, &name, 0, NULL, 0);

	if (rc)
		return rc;
	rc = rd_safe_openat(&d, name, O_RDONLY);
	rd_safedir_close(&d);
	return rc;
}

int rd_safe_mktemp(const rd_safedir *d, const char *prefix, char *name, size_t namesz)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	const size_t plen = strlen(prefix);

	if (plen + 8 > namesz)
		return -ENAMETOOLONG;
	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		int fd;

		if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
			/* No entropy yet (early boot): unique enough with O_EXCL. */
			unsigned long x = (unsigned long)getpid() * 2654435761u ^
			                  (unsigned long)clock() ^ (unsigned long)tries * 40503u;
			for (size_t i = 0; i < sizeof r; i++, x >>= 5)
				r[i] = (unsigned char)x;
		}
		memcpy(name, prefix, plen);
		name[plen] = '.';
		for (size_t i = 0; i < sizeof r; i++)
			name[plen + 1 + i] = set[r[i] % (sizeof set - 1)];
		name[plen + 7] = 0;
		fd = openat(d->fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int rd_safe_tmp_create(const char *dbdir, char *tmp, char *eb, size_t ebsz)
{
	const size_t suffix = sizeof FMT_LAYOUT_TMP_SUFFIX - 1;
	char *base = strrchr(tmp, '/'), prefix[4096], name[4096];
	rd_safedir d;
	int fd;

	base = base ? base + 1 : tmp;
	if (strlen(base) <= suffix || strlen(base) >= sizeof prefix)
		return fmt_err(eb, ebsz, -EINVAL, "%s: not a temporary file name", tmp);
	fd = rd_safedir_open(&d, dbdir, FMT_LAYOUT_TMP, 0, eb, ebsz);
	if (fd)
		return fd;
	snprintf(prefix, sizeof prefix, "%.*s", (int)(strlen(base) - suffix), base);
	fd = rd_safe_mktemp(&d, prefix, name, sizeof name);
	rd_safedir_close(&d);
	if (fd < 0)
		return fmt_err(eb, ebsz, fd, "%s: cannot create temporary file: %s", tmp,
		               symdb_strerror(fd));
	memcpy(base, name, strlen(name) + 1); /* the same length */
	return fd;
}

void rd_safe_tmp_unlink(const char *dbdir, const char *tmp)
{
	const char *base = strrchr(tmp, '/');
	rd_safedir d;

	if (rd_safedir_open(&d, dbdir, FMT_LAYOUT_TMP, 0, NULL, 0) == 0) {
		unlinkat(d.fd, base ? base + 1 : tmp, 0);
		rd_safedir_close(&d);
	}
}
