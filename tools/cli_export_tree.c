/* SPDX-License-Identifier: MIT */
/*
 * cli_export_tree.c - `symdb export --tree DIR`: index files written into an
 * upstream store tree (SPEC §12.9), DIR/symdb/v1/XX/HEX.symdb, the layout
 * other nodes fetch from on a miss (--upstream URL) through any static
 * HTTP server whose document root is DIR.
 *
 * A store is read by machines that trust what they fetch only after
 * verifying it, but a store that serves half a file or a damaged one costs
 * every node a failed fetch, so each image is verified here first (every
 * checksum, every table's order and references) and written to a temporary
 * file beside its final name, fsynced, renamed over it, and its directory
 * fsynced: a server never sees a partial file, and an interrupted export
 * leaves only a ".HEX.symdb.XXXXXX" file no client asks for.  A file that
 * is already there with the same size and the same first bytes (header and
 * table directory, which hold every table's checksum) is left alone, so a
 * re-run adds only what is missing and rewrites what was re-indexed.
 *
 * Files are 0644 and directories 0755 whatever the umask: the tree exists
 * to be read by a web server running as another user.  DIR itself may be a
 * symbolic link (the user named it); nothing below it is followed.
 */
#define _GNU_SOURCE
#include "cli_export_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define TREE_HEAD_CMP 4096u      /* bytes compared to recognise a file already there */

/* Open (creating, 0755) the directory name under dfd, never through a
 * symbolic link; *made is set when it was created.  An fd or -errno. */
static int open_subdir(int dfd, const char *name, int *made)
{
	int fd;

	*made = mkdirat(dfd, name, 0755) == 0;
	if (!*made && errno != EEXIST)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR || errno == ELOOP ? -ELOOP : -errno;
	if (*made && fchmod(fd, 0755) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int cli_tree_open(const char *tree, char *err, size_t errsz)
{
	static const char *const parts[] = { "symdb", "v1" };
	int dfd, made;

	if (mkdir(tree, 0755) == 0)
		chmod(tree, 0755);
	else if (errno != EEXIST)
		return snprintf(err, errsz, "%s: %s", tree, strerror(errno)), -errno;
	dfd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return snprintf(err, errsz, "%s: %s", tree, strerror(errno)), -errno;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		int fd = open_subdir(dfd, parts[i], &made);
		if (fd < 0) {
			snprintf(err, errsz, "%s/%s%s: %s", tree, i ? "symdb/" : "", parts[i],
			         fd == -ELOOP ? "symbolic link, not followed" : strerror(-fd));
			close(dfd);
			return fd;
		}
		if (made)
			fsync(dfd);
		close(dfd);
		dfd = fd;
	}
	return dfd;
}

/* 1 when dfd/name is a regular file of size bytes starting like data. */
static int tree_has(int dfd, const char *name, const void *data, size_t size)
{
	unsigned char head[TREE_HEAD_CMP];
	size_t n = size < sizeof head ? size : sizeof head;
	struct stat st;
	int fd, same;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != (uint64_t)size)
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	same = pread(fd, head, n, 0) == (ssize_t)n && memcmp(head, data, n) == 0;
	close(fd);
	return same;
}

/* A new temporary file ".NAME.XXXXXX" in dfd, 0644; its name in tmp. */
static int tree_tmp(int dfd, const char *name, char *tmp, size_t tmpsz)
{
	for (int tries = 0; tries < 16; tries++) {
		unsigned char r[6];
		int fd;
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
			return -EIO;
		snprintf(tmp, tmpsz, ".%s.%02x%02x%02x%02x%02x%02x", name, r[0], r[1], r[2], r[3],
		         r[4], r[5]);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 && fchmod(fd, 0644) < 0) {
			int e = -errno;
			close(fd);
			unlinkat(dfd, tmp, 0);
			return e;
		}
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* Write data as dfd/name: temp, fsync, check the mapping did not fault
 * while it was copied, rename, fsync the directory. */
static int tree_write(int dfd, const char *name, const symdb_image *img, const void *data,
                      size_t size, char *why, size_t whysz)
{
	char tmp[256];
	int fd = tree_tmp(dfd, name, tmp, sizeof tmp), rc;

	if (fd < 0)
		return snprintf(why, whysz, "%s", strerror(-fd)), fd;
	rc = cli_write_all(fd, data, size);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc < 0)
		snprintf(why, whysz, "%s", strerror(-rc));
	if (rc == 0 && symdb_image_fault_check(img) < 0) {
		snprintf(why, whysz, "index file changed while in use (truncated?)");
		rc = SYMDB_E_CORRUPT;
	}
	if (rc == 0 && renameat(dfd, tmp, dfd, name) < 0) {
		rc = -errno;
		snprintf(why, whysz, "%s", strerror(errno));
	}
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	else if (fsync(dfd) < 0)
		return snprintf(why, whysz, "%s", strerror(errno)), -errno;
	return rc;
}

/* Open id with every checksum and invariant verified (never thawed). */
static int open_verified(symdb *db, const symdb_uuid *id, symdb_image **img, char *why,
                         size_t whysz)
{
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW,
	           .errbuf = why, .errbuf_sz = whysz);
	int rc = symdb_image_open_uuid(db, id, &o, img);

	if (rc == 0) {
		SYMDB_OPTS(symdb_open_opts, v, .errbuf = why, .errbuf_sz = whysz);
		rc = symdb_image_verify(*img, &v);
		if (rc < 0)
			symdb_image_close(*img);
	}
	return rc;
}

int cli_tree_put(symdb *db, int v1fd, const symdb_uuid *id, struct cli_tree_put *out)
{
	char hex[2 * SYMDB_UUID_MAX + 1], xx[3], name[2 * SYMDB_UUID_MAX + 8];
	symdb_image *img;
	const void *data;
	size_t size;
	int rc, made, dfd;

	out->why[0] = 0;
	out->write_error = 0;
	symdb_uuid_format(id, hex);
	snprintf(xx, sizeof xx, "%.2s", hex);
	snprintf(name, sizeof name, "%s.symdb", hex);
	snprintf(out->rel, sizeof out->rel, "symdb/v1/%s/%s", xx, name);
	rc = open_verified(db, id, &img, out->why, sizeof out->why);
	if (rc < 0)
		return rc;
	symdb_image_data(img, &data, &size);
	out->bytes = size;
	dfd = open_subdir(v1fd, xx, &made);
	if (dfd < 0) {
		snprintf(out->why, sizeof out->why, "%s",
		         dfd == -ELOOP ? "symbolic link, not followed" : strerror(-dfd));
		out->write_error = 1;
		symdb_image_close(img);
		return dfd;
	}
	if (made)
		fsync(v1fd);
	if (tree_has(dfd, name, data, size)) {
		rc = 0;
	} else {
		rc = tree_write(dfd, name, img, data, size, out->why, sizeof out->why);
		out->write_error = rc < 0 && rc != SYMDB_E_CORRUPT;
		rc = rc < 0 ? rc : 1;
	}
	close(dfd);
	symdb_image_close(img);
	return rc;
}
