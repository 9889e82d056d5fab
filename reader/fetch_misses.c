/* SPDX-License-Identifier: MIT */
/*
 * fetch_misses.c - the negative cache of symdb_fetch() (SPEC §12.9):
 * DB/misses/HEX, an empty file whose mtime is when every configured source
 * last answered that it has no image HEX.
 *
 * A file per build-id and its mtime, rather than a catalog table, because
 * any process sharing the database reads and writes it without LMDB's
 * write lock, a stale entry costs one refetch, and `rm -r DB/misses` is a
 * valid way to forget everything.  The entries are reached through
 * db_dir.h's safe directories: a symbolic link or a foreign-owned entry is
 * never followed, written through or trusted (it reads as "no entry").
 */
#define _GNU_SOURCE /* utimensat's UTIME_NOW */
#include "fetch_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_dir.h"

int rd_fetch_miss_fresh(const char *dbdir, const char *hex, uint32_t ttl_s, uint32_t *age_s)
{
	struct stat st;
	rd_safedir d;
	time_t now = time(NULL);
	int rc;

	if (rd_safedir_open(&d, dbdir, RD_FETCH_MISSES, 0, NULL, 0) != 0)
		return 0;
	rc = rd_safe_stat(&d, hex, &st);
	rd_safedir_close(&d);
	/* A time in the future (a clock stepped back) is not trusted either. */
	if (rc != 0 || st.st_mtime > now || now - st.st_mtime >= (time_t)ttl_s)
		return 0;
	*age_s = (uint32_t)(now - st.st_mtime);
	return 1;
}

int rd_fetch_miss_put(const char *dbdir, const char *hex)
{
	rd_safedir d;
	int fd, rc;

	if ((rc = rd_safedir_open(&d, dbdir, RD_FETCH_MISSES, 1, NULL, 0)) != 0)
		return rc;
	/* rd_safe_openat's rules, with a mode for the new file. */
	fd = openat(d.fd, hex, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
	            0644);
	if (fd < 0)
		fd = -errno;
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) < 0 || rd_safe_judge(&d, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			rd_safedir_close(&d);
			return -EPERM;
		}
		/* An existing entry is renewed: its mtime is the answer's time. */
		rc = futimens(fd, NULL) < 0 ? -errno : 0;
		close(fd);
	} else {
		rc = fd;
	}
	rd_safedir_close(&d);
	return rc;
}

int rd_fetch_miss_drop(const char *dbdir, const char *hex)
{
	struct stat st;
	rd_safedir d;
	int rc;

	if ((rc = rd_safedir_open(&d, dbdir, RD_FETCH_MISSES, 0, NULL, 0)) != 0)
		return rc == -ENOENT ? 0 : rc;
	rc = rd_safe_stat(&d, hex, &st);
	if (rc == 0)
		rc = unlinkat(d.fd, hex, 0) < 0 ? -errno : 0;
	rd_safedir_close(&d);
	return rc == -ENOENT ? 0 : rc;
}
