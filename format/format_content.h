/* SPDX-License-Identifier: MIT */
/*
 * format_content.h - the content identity of an input file: XXH3-64
 * (seed 0) of all its bytes, the Source_XXH3 / Debug_XXH3 of SPEC §7.7.
 * The indexer records it and the publisher compares it (the "unchanged"
 * fast path of SPEC §12.5), so both must compute it the same way.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_CONTENT_H
#define SYMDB_FORMAT_CONTENT_H

#include <stdint.h>

#define FMT_HIDDEN __attribute__((visibility("hidden")))

/* XXH3-64 of the regular file at path, read through a read-only mapping;
 * *size (if not NULL) gets its size.  Returns 0, -EINVAL for a file that
 * is not regular, or another -errno. */
FMT_HIDDEN int fmt_file_xxh3(const char *path, uint64_t *size, uint64_t *hash);

/* The same for an open descriptor (read through its own mapping; the
 * descriptor's offset is not used).  What a build uses: the bytes hashed
 * are the bytes of the file the caller opened, whatever its path names
 * meanwhile. */
FMT_HIDDEN int fmt_fd_xxh3(int fd, uint64_t *size, uint64_t *hash);

/* The zlib/IEEE CRC-32 of the whole file at fd (read with pread, whatever
 * the descriptor's offset): the GNU .gnu_debuglink checksum.  0 with *crc,
 * or -errno. */
FMT_HIDDEN int fmt_fd_crc32(int fd, uint32_t *crc);

#endif /* SYMDB_FORMAT_CONTENT_H */
