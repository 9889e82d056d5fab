/* SPDX-License-Identifier: MIT */
/*
 * fuzz_util.h - what the fuzz targets share: the libFuzzer entry point
 * declarations, turning the input bytes into a file path (the reader and
 * the indexer take paths), and removing a scratch database.  A memfd (no disk I/O, gone at close)
 * is opened again through /proc/self/fd/N.
 */
#ifndef SYMDB_FUZZ_UTIL_H
#define SYMDB_FUZZ_UTIL_H

#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symdb.h"

/* Options that carry only an errbuf. */
#ifndef EB_OPTS
#define EB_OPTS(buf, size) \
	(&(symdb_open_opts){ .sz = sizeof(symdb_open_opts), .errbuf = (buf), .errbuf_sz = (size) })
#endif

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

static inline int fz_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

/* rm -rf dir: the scratch databases of the targets that publish. */
static inline void fz_rmtree(const char *dir)
{
	if (dir && dir[0])
		nftw(dir, fz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* SYMDB_FUZZ_UTIL_H */
