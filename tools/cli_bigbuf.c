/* SPDX-License-Identifier: MIT */
/*
 * cli_bigbuf.c - cli_big_realloc(): large working buffers in huge pages.
 *
 * symdb query's batch buffers (requests, positions, results, the bodies'
 * text) are written from start to end once per batch and grow to tens of
 * MiB on a long input.  In 4 KiB pages the first pass over them costs a
 * page fault each 4 KiB, and a fault costs ~16 us on the virtual machines
 * the benchmarks run on: 26 MiB touched once took 110 ms, against 2-26 ms
 * in 2 MiB pages.  So a buffer growing past CLI_BIG_MIN moves to a 2 MiB
 * aligned block that asks for transparent huge pages (the kernel's
 * "madvise" mode grants them only to such ranges).  It stays a malloc
 * block, so free() releases it and nothing else changes for its owner.
 *
 * Growing frees the old block where realloc would have moved it with
 * mremap, and glibc raises its mmap threshold to the size of each mmapped
 * block freed (up to 32 MiB): the process's later large allocations would
 * then come from the heap and stay resident after free.  So the program
 * fixes the threshold at start (cli_big_init), which stops that.
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli_util.h"

#define CLI_BIG_ALIGN ((size_t)2 << 20)
#define CLI_BIG_MIN CLI_BIG_ALIGN

void cli_big_init(void)
{
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* glibc's default, now fixed */
}

void *cli_big_realloc(void *p, size_t old_bytes, size_t new_bytes)
{
	if (new_bytes < CLI_BIG_MIN)
		return realloc(p, new_bytes);
	if (new_bytes > SIZE_MAX - (CLI_BIG_ALIGN - 1))
		return NULL; /* (the rounding below would wrap) */
	size_t n = (new_bytes + CLI_BIG_ALIGN - 1) & ~(CLI_BIG_ALIGN - 1);
	void *np = aligned_alloc(CLI_BIG_ALIGN, n);
	if (!np)
		return NULL;
	(void)madvise(np, n, MADV_HUGEPAGE); /* a hint: failure changes nothing */
	if (p) {
		memcpy(np, p, old_bytes < new_bytes ? old_bytes : new_bytes);
		free(p);
	}
	return np;
}

void *cli_big_zalloc(size_t bytes)
{
	void *p = cli_big_realloc(NULL, 0, bytes);
	if (p)
		memset(p, 0, bytes); /* (the block may be reused heap, not fresh pages) */
	return p;
}
