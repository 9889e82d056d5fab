/* SPDX-License-Identifier: MIT */
/*
 * format_content.c - the content identity of an input file (SPEC §7.7).
 */
#define _DEFAULT_SOURCE /* mmap, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "format_content.h"

int fmt_fd_xxh3(int fd, uint64_t *size, uint64_t *hash)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size == 0) {
		*hash = XXH3_64bits(NULL, 0);
		if (size)
			*size = 0;
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*hash = XXH3_64bits(p, (size_t)st.st_size);
	munmap(p, (size_t)st.st_size);
	if (size)
		*size = (uint64_t)st.st_size;
	return 0;
}

int fmt_file_xxh3(const char *path, uint64_t *size, uint64_t *hash)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), rc;

	if (fd < 0)
		return -errno;
	rc = fmt_fd_xxh3(fd, size, hash);
	close(fd);
	return rc;
}
