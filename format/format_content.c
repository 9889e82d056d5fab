/* SPDX-License-Identifier: MIT */
/*
 * format_content.c - the content identity of an input file (SPEC §7.7).
 */
#define _DEFAULT_SOURCE /* pread, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>
#include <zlib.h>

#include "format_content.h"

/*
 * Read with pread(2) in chunks, not through a mapping: a file truncated or
 * rewritten in place while it is hashed gives a short read and -EIO (the
 * bytes hashed are then not the file's), where a mapping gave SIGBUS.
 */
#define CONTENT_CHUNK ((size_t)1 << 20)

int fmt_fd_xxh3(int fd, uint64_t *size, uint64_t *hash)
{
	struct stat st;
	XXH3_state_t *xs;
	uint8_t *buf;
	uint64_t off = 0, n;
	int rc = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	n = (uint64_t)st.st_size;
	xs = XXH3_createState();
	buf = malloc(CONTENT_CHUNK);
	if (!xs || !buf || XXH3_64bits_reset(xs) != XXH_OK)
		rc = -ENOMEM;
	while (rc == 0 && off < n) {
		size_t want = n - off < CONTENT_CHUNK ? (size_t)(n - off) : CONTENT_CHUNK;
		ssize_t got = pread(fd, buf, want, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			rc = got < 0 ? -errno : -EIO; /* (shorter than fstat said) */
		else if (XXH3_64bits_update(xs, buf, (size_t)got) != XXH_OK)
			rc = -ENOMEM;
		else
			off += (uint64_t)got;
	}
	if (rc == 0) {
		*hash = XXH3_64bits_digest(xs);
		if (size)
			*size = n;
	}
	free(buf);
	XXH3_freeState(xs);
	return rc;
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

int fmt_fd_crc32(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	ssize_t r;

	for (;;) {
		r = pread(fd, buf, sizeof buf, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		c = crc32(c, buf, (uInt)r);
		off += (uint64_t)r;
	}
	if (r < 0)
		return -errno;
	*crc = (uint32_t)c;
	return 0;
}
