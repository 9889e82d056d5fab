/* SPDX-License-Identifier: MIT */
/*
 * catalog_lock.c - the lock of one DB/images/XX directory (SPEC §12.5, §12.8).
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t, mkdir, flock */
#include "catalog_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* ---- the per-directory lock of DB/images/XX (SPEC §12.5, §12.8) ---------- */

int rd_images_dir_lock(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	/* flock locks the open file description: a fresh open per call, so it
	 * also excludes other threads of this process. */
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			rc = -errno;
			close(fd);
			return rc;
		}
	}
	return fd;
}

void rd_images_dir_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}
