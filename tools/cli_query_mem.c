/* SPDX-License-Identifier: MIT */
/*
 * cli_query_mem.c - `symdb query`'s memory (README "Memory"): the bound on
 * the index pages it keeps mapped across windows, and (at the end) when its
 * caches' tables move to huge pages.
 *
 * Every page of an index a lookup reads stays in the process's resident
 * set until the image is closed (and the kernel maps the 64 KiB around each
 * faulting page that the page cache holds): a long run spread over a large
 * index, or over many images, ends with all of them resident.  Those pages
 * are clean and stay in the page cache, so dropping them from this process
 * (symdb_image_trim) costs only the minor faults that map them back when
 * they are read again.  So the process's file-backed resident set is read
 * from /proc/self/statm (one pread) after each window, and when it has
 * grown more than QUERY_MAP_BUDGET past what it was before the first lookup
 * (the executable and its libraries), every open image is trimmed.
 *
 * The pages are thus at most the budget between windows, and the budget
 * plus what one window maps during it.  A window that by itself maps far
 * more than the budget (uniform addresses over a large index: 256 of them
 * map 40 MiB of a 68 MB one, a window of 2,048 57 MiB) would map it all
 * again after each trim, for hardly a lower peak and a minor fault per
 * 64 KiB: once a window after a trim has mapped more than twice the budget
 * on its own, trimming stops for the run.  Without /proc nothing is
 * trimmed.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli_query.h"

/* The third field of /proc/self/statm: resident file-backed (and shared
 * memory) pages; -1 when it cannot be read. */
static long file_pages(int fd)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	unsigned long size, rss, shared;
	if (sscanf(buf, "%lu %lu %lu", &size, &rss, &shared) != 3)
		return -1;
	return (long)shared;
}

static void stop(struct query *q)
{
	if (q->statm_fd >= 0)
		close(q->statm_fd);
	q->statm_fd = -1;
}

void cli_query_mem_init(struct query *q)
{
	long pg = sysconf(_SC_PAGESIZE);
	q->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	q->map_base = q->statm_fd >= 0 ? file_pages(q->statm_fd) : -1;
	q->map_budget = pg > 0 ? (long)(QUERY_MAP_BUDGET / (size_t)pg) : 0;
	q->map_after = -1;
	if (q->map_base < 0 || q->map_budget <= 0)
		stop(q);
}

void cli_query_mem_fini(struct query *q)
{
	stop(q);
}

void cli_query_mem_check(struct query *q)
{
	if (q->statm_fd < 0)
		return;
	long n = file_pages(q->statm_fd);
	if (n < 0 || n - q->map_base <= q->map_budget)
		return;
	if (q->map_after >= 0 && n - q->map_after > 2 * q->map_budget) {
		stop(q); /* a window maps more than twice the budget by itself */
		return;
	}
	for (size_t i = 0; i < q->nmods; i++) /* once an image, not once a path */
		if (q->mods[i].state > 0 && q->mods[i].img && cli_query_owns_image(q, i))
			symdb_image_trim(q->mods[i].img);
	q->map_after = file_pages(q->statm_fd);
	q->map_trims++;
}

/*
 * The body cache's and the name cache's tables are hash tables of 2 MiB
 * (and the names' arena up to 24 MiB), allocated in 4 KiB pages so that a
 * short run (one address) maps only the pages it touches.  A long run
 * touches all of them, at a page fault each 4 KiB (~16 us on a virtual
 * machine: 512 faults for each table): so once a batch is this long the
 * tables move to huge pages, a copy of 2 MiB each, and the names' arena
 * is moved as far as it is used.
 */
#define QUERY_LONG_BATCH 16384u

void cli_query_mem_batch(struct query *q, size_t n)
{
	struct body_cache *c = &q->cache;
	if (n >= QUERY_LONG_BATCH)
		q->long_run = 1;
	if (!q->long_run)
		return;
	if (c->slot && !c->huge) {
		/* an empty table is not copied: its pages were never touched,
		 * and reading them would map each one */
		const size_t b = CACHE_SLOTS * sizeof(*c->slot);
		struct cache_slot *old = c->slot;
		struct cache_slot *s = c->used ? cli_big_realloc(old, b, b) : cli_big_zalloc(b);
		if (s && !c->used)
			free(old);
		if (s) /* (without memory it stays where it is) */
			c->slot = s;
		c->huge = 1;
	}
	cli_printer_names_to_huge(&q->pr); /* (tables made since, at a later batch) */
}
