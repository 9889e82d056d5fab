/* SPDX-License-Identifier: MIT */
/*
 * truncate_shim.c - an LD_PRELOAD library for tests/cli/truncate_cmds.sh:
 * the first time the process maps the file TRUNCATE_ON_MAP (an absolute,
 * symlink-free path), the file is truncated to three quarters of its size
 * (down to a 4 KiB page) right after
 * mmap(2) returns, before the caller reads a byte of it.  That is an
 * operator's truncation landing while a command has the index file mapped,
 * at the same instant on every run: the next read past the new end raises
 * SIGBUS, which the command must turn into "that image is damaged".
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static int done;

static void truncate_after(int fd)
{
	const char *want = getenv("TRUNCATE_ON_MAP");
	char link[64], path[4096];
	struct stat st;
	ssize_t n;

	if (done || !want || fd < 0)
		return;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	if (strcmp(path, want) != 0 || fstat(fd, &st) < 0)
		return;
	done = 1;
	/* The descriptor is read-only: truncate by name, as the operator does.
	 * Three quarters, down to a 4 KiB page, keep the header, the directory
	 * and the string pool (what open reads: the pool is most of a format-2
	 * file) and cut whole pages off the tables that only the full check
	 * reads (a partial page would read as zeros, not fault). */
	if (truncate(path, st.st_size * 3 / 4 / 4096 * 4096) < 0)
		perror("truncate_shim: truncate");
}

static void *shim(const char *name, void *addr, size_t len, int prot, int flags, int fd,
                  off_t off)
{
	mmap_fn real = (mmap_fn)dlsym(RTLD_NEXT, name);
	void *p = real ? real(addr, len, prot, flags, fd, off) : MAP_FAILED;

	if (p != MAP_FAILED)
		truncate_after(fd);
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return shim("mmap", addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return shim("mmap64", addr, len, prot, flags, fd, off);
}
