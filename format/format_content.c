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

int fmt_file_xxh3(const char *path, uint64_t *size, uint64_t *hash)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return -errno;
	e = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (e) {
		close(fd);
		return e;
	}
	if (st.st_size == 0) {
		close(fd);
		*hash = XXH3_64bits(NULL, 0);
		if (size)
			*size = 0;
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return -e;
	*hash = XXH3_64bits(p, (size_t)st.st_size);
	munmap(p, (size_t)st.st_size);
	if (size)
		*size = (uint64_t)st.st_size;
	return 0;
}
