/* SPDX-License-Identifier: MIT */
/*
 * format_io.c - whole reads and writes (format_io.h).  A short count is not
 * an error for read(2) and write(2), and a signal handler installed without
 * SA_RESTART turns any slow call into EINTR: each loop here absorbs both, so
 * that callers see only "done", "end of file" or a real errno.
 */
#define _POSIX_C_SOURCE 200809L /* pread */
#include <errno.h>
#include <unistd.h>

#include "format_io.h"
#include "symdb_errors.h"

/* Linux moves at most 0x7ffff000 bytes per call; stay well below. */
#define IO_CHUNK ((size_t)1 << 30)

ptrdiff_t fmt_read_full(int fd, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t done = 0;

	while (done < len) {
		size_t n = len - done < IO_CHUNK ? len - done : IO_CHUNK;
		ssize_t r = read(fd, b + done, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ptrdiff_t)done;
}

ptrdiff_t fmt_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *b = buf;
	size_t done = 0;

	while (done < len) {
		size_t n = len - done < IO_CHUNK ? len - done : IO_CHUNK;
		ssize_t r = pread(fd, b + done, n, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ptrdiff_t)done;
}

int fmt_write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	while (len > 0) {
		size_t n = len < IO_CHUNK ? len : IO_CHUNK;
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

int fmt_header_read(int fd, uint8_t h[FMT_HEADER_SIZE])
{
	ptrdiff_t n = fmt_pread_full(fd, h, FMT_HEADER_SIZE, 0);

	if (n < 0)
		return (int)n;
	return n == FMT_HEADER_SIZE ? 0 : SYMDB_E_CORRUPT;
}
