/* SPDX-License-Identifier: MIT */
/*
 * test_cold_open.c - opening an index file that is not in the page cache
 * reads a few pages, whatever the file's size, and one answer a few dozen
 * (SPEC §9 "At open"; reader/reader_advise.c).
 *
 * A synthetic image of about 40 MB (tests/unit/rd_model.h) is written,
 * synced and dropped from the page cache (posix_fadvise DONTNEED); then it
 * is opened, and one address resolved, and how much of the file is in the
 * page cache after each step is counted with mincore() on a mapping of the
 * test's own (the page cache is per file).  Pages, never time.  Open may
 * read at most OPEN_PAGES pages and open plus one answer at most
 * ANSWER_PAGES: the lookup touches about 20 pages per address column and a
 * few records, each read on its own.  Reading around each fault (the
 * device's readahead, 128 KiB to 8 MiB), or asking at open for whole
 * address columns (4 + 4 + 0.8 MB here) as symdb did before, reads
 * hundreds to thousands.
 *
 * Skipped (77) where the page cache cannot be dropped for the file (tmpfs:
 * the cache is the file).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "rd_model.h"
#include "symdb.h"

#define OPEN_PAGES 16
#define ANSWER_PAGES 256

/* Pages of path in the page cache, or -1. */
static long resident(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	long pg = sysconf(_SC_PAGESIZE), n = 0;
	off_t len = fd < 0 ? 0 : lseek(fd, 0, SEEK_END);
	unsigned char *vec = NULL;
	void *m = MAP_FAILED;

	if (fd >= 0 && len > 0 && pg > 0) {
		vec = malloc((size_t)(len + pg - 1) / (size_t)pg);
		m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
	}
	if (!vec || m == MAP_FAILED || mincore(m, (size_t)len, vec) != 0)
		n = -1;
	for (size_t i = 0; n >= 0 && i < (size_t)(len + pg - 1) / (size_t)pg; i++)
		n += vec[i] & 1;
	if (m != MAP_FAILED)
		munmap(m, (size_t)len);
	free(vec);
	if (fd >= 0)
		close(fd);
	return n;
}

/* Write the file and take it out of the page cache: 0, or 77 to skip. */
static int write_cold(const uint8_t *f, size_t len, char *path, size_t pathsz)
{
	int fd;

	if (synth_write_tmp(f, len, path, pathsz) != 0) {
		CHECK(!"cannot write a temporary file");
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
		printf("SKIP: %s: cannot sync and drop it from the page cache\n", path);
		if (fd >= 0)
			close(fd);
		return 77;
	}
	close(fd);
	if (resident(path) > 0) {
		printf("SKIP: %s: still in the page cache after POSIX_FADV_DONTNEED (tmpfs?): %ld pages\n",
		       path, resident(path));
		return 77;
	}
	return 0;
}

int main(void)
{
	/* symbols, files, functions, nodes, inline intervals, line rows */
	sizes sz = { 200000, 500, 20000, 200000, 1000000, 1000000, 0 };
	char path[512], eb[256];
	symdb_image *img = NULL;
	symdb_frame fr[64];
	symdb_result res;
	model m;
	size_t len;
	long after_open, after_answer;
	int rc;

	(void)open_model; /* rd_model.h's helpers this test has no use for */
	(void)gen_batch;
	rng_state = 18; /* fixed: the same file every run */
	gen_model(&m, &sz, 4, 0x400000);
	uint8_t *f = model_bytes(&m, &len);
	printf("synthetic index: %zu bytes\n", len);
	CHECK(len > (size_t)32 << 20);
	rc = write_cold(f, len, path, sizeof path);
	free(f);
	if (rc) {
		if (rc == 77)
			unlink(path);
		free_model(&m);
		return rc == 77 ? 77 : check_exit();
	}

	SYMDB_OPTS(symdb_open_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
	rc = symdb_image_open_file(path, &o, &img);
	if (rc)
		fprintf(stderr, "open: %s\n", eb);
	CHECK(rc == 0);
	after_open = resident(path);
	uint64_t addr = m.base + m.end / 2;
	ptrdiff_t n = img ? symdb_resolve_batch(img, &addr, 1, fr, 64, sizeof fr[0], &res, sizeof res)
	                  : -1;
	after_answer = resident(path);
	printf("pages in the page cache: after open %ld (at most %d), after one answer %ld (at most "
	       "%d), of %zu\n",
	       after_open, OPEN_PAGES, after_answer, ANSWER_PAGES, len / 4096);
	CHECK(n == 1);
	CHECK(after_open >= 1 && after_open <= OPEN_PAGES);
	CHECK(after_answer >= after_open && after_answer <= ANSWER_PAGES);

	symdb_image_close(img);
	unlink(path);
	free_model(&m);
	return check_exit();
}
