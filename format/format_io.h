/* SPDX-License-Identifier: MIT */
/*
 * format_io.h - whole reads and writes on a file descriptor, for every
 * part of symdb: read(2), pread(2) and write(2) may stop early (a signal,
 * a pipe, a 2 GiB per-call limit); these loop until the count is done.
 * Also the one reader of an index file's fixed header (SPEC §5).
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_IO_H
#define SYMDB_FORMAT_IO_H

#include <stddef.h>
#include <stdint.h>

#include "symdb_format.h"

#define FMT_HIDDEN __attribute__((visibility("hidden")))

/* Reads len bytes from fd's current position, across EINTR and short
 * reads.  Returns the count read (less than len only at end of file), or
 * -errno. */
FMT_HIDDEN ptrdiff_t fmt_read_full(int fd, void *buf, size_t len);

/* The same at file offset off, leaving the position alone. */
FMT_HIDDEN ptrdiff_t fmt_pread_full(int fd, void *buf, size_t len, uint64_t off);

/* Writes all len bytes at fd's current position, across EINTR and short
 * writes, in calls below Linux's 2 GiB limit.  Returns 0 or -errno (-EIO
 * when write(2) makes no progress). */
FMT_HIDDEN int fmt_write_full(int fd, const void *buf, size_t len);

/* Reads the FMT_HEADER_SIZE bytes of an index file's header (SPEC §5) from
 * offset 0 of fd into h; nothing is checked.  Returns 0, -errno, or
 * SYMDB_E_CORRUPT when the file is shorter than a header. */
FMT_HIDDEN int fmt_header_read(int fd, uint8_t h[FMT_HEADER_SIZE]);

#endif /* SYMDB_FORMAT_IO_H */
