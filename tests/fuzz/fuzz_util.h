/* SPDX-License-Identifier: MIT */
/*
 * fuzz_util.h - what the fuzz targets share: the libFuzzer entry point
 * declarations, and turning the input bytes into a file path, since the
 * reader and the indexer take paths.  A memfd (no disk I/O, gone at close)
 * is opened again through /proc/self/fd/N.
 */
#ifndef SYMDB_FUZZ_UTIL_H
#define SYMDB_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Write data to a fresh memfd; path receives a name for it.  Returns the fd
 * (close it when done) or -1. */
static inline int fz_file(const uint8_t *data, size_t size, char *path, size_t path_sz)
{
	int fd = memfd_create("symdb-fuzz", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	snprintf(path, path_sz, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* SYMDB_FUZZ_UTIL_H */
