/* SPDX-License-Identifier: MIT */
/*
 * reader_advise.c - what the reader tells the kernel about how it will read
 * an index file's mapping, so that a file that is not in the page cache
 * costs the I/O its answers need and not much more (SPEC §9 "At open").
 *
 * Why: by default a fault on a file mapping reads around the faulting page,
 * as much as the device's readahead (read_ahead_kb: 128 KiB by default,
 * 8 MiB on some virtual disks); and one answer touches some 40 pages
 * scattered over the whole file (three searches of about 20 pages each, then
 * a record or two of SYMBOLS, INLINE_MAP, INLINE_NODES, FUNCTIONS, LINE_ROWS,
 * FILES and the strings).  On a 147 MB index with 8 MiB of readahead, open
 * plus one answer read 48 MB from disk; with one page per fault, 192 KiB.
 * So:
 *
 *  - lookup: from mmap on, MADV_RANDOM on the whole mapping: every fault
 *    reads its own page.  The structural check of open (SPEC §9) reads the
 *    header and directory page and two or three pages of the string pool.
 *  - batch: a sorted batch of n addresses faults in about one page of each
 *    table per address, so once n * RD_ADVISE_PAGES_PER_ADDR reaches a
 *    table's size in pages, the whole table is asked for at once
 *    (MADV_WILLNEED: one sequential read, submitted asynchronously, in
 *    parallel with the searches that need it): on SSDs and virtual disks a
 *    page read in sequence costs 1/16 to 1/60 of a random 4 KiB read.  A
 *    single address thus gets the tables of up to 32 pages (the symbol
 *    addresses of a typical library, FILES), a 64k-address window of
 *    `symdb query` every table.  Each table at most once per image.  Only
 *    the tables the lookup reads (read_by_lookup): of the two symbol tables
 *    the one in use, never FILE_SOURCES or BUILD_INFO.
 *  - scan: the kernel's default (MADV_NORMAL: read-around, then readahead
 *    as the reads turn out sequential) while the reader reads the file
 *    through (checksums, symdb_image_verify, compaction), then back to
 *    lookup.  MADV_SEQUENTIAL measured no faster for a checksum pass over
 *    a cold 147 MB file, and sometimes slower.
 *
 * The hints change what the kernel reads, never what an answer is; a
 * failing madvise is ignored.  Thread rules: madvise on a live mapping is
 * safe from any thread; the batch state (io_next, io_done) is updated with
 * atomics, and a race costs at most a repeated hint.
 */
#define _GNU_SOURCE /* madvise */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader_advise.h"
#include "symdb_format.h"

/* Random 4 KiB reads vs the same pages in one sequential read: the ratio
 * where reading a table whole starts to pay (see above). */
#define RD_ADVISE_PAGES_PER_ADDR 32

/* MADV_WILLNEED reads at most the file's readahead window per call
 * (force_page_cache_ra: max(read_ahead_kb, max_sectors_kb)), and the
 * rest of the range is silently left out: ask in pieces no larger than the
 * smallest window, the default read_ahead_kb of 128 KiB.  The pieces are
 * submitted one after the other and read in parallel. */
#define RD_ADVISE_WILLNEED_PIECE (128u << 10)

static void advise_range(const void *p, size_t len, int advice)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a;

	if (pg <= 0 || !p || !len)
		return;
	a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
	(void)madvise((void *)a, (uintptr_t)p + len - a, advice);
}

/* Pages of a table probed with mincore() before it is asked for. */
#define RD_ADVISE_PROBES 16

/* Whether the table at [a, a + pages * pg) (page-aligned) looks cached:
 * RD_ADVISE_PROBES pages spread over it all are.  A WILLNEED of cached
 * pages still walks them, a few microseconds per piece (2.6 to 9.6 ms for
 * the 1,150 pieces of a warm 147 MB index), and a mincore() of a whole
 * table costs more still (23 ms), so a few probes decide.  A table partly
 * cached is asked for whole; one that is cached except where no probe
 * looked is left to faults.  (mincore reports the page cache only for
 * files the caller owns or may write; for others it sees fewer pages, and
 * more is asked for: no worse than asking for all.) */
static int looks_cached(uintptr_t a, uint64_t pages, long pg)
{
	unsigned char v;
	unsigned i;

	for (i = 0; i < RD_ADVISE_PROBES; i++) {
		uint64_t at = pages <= 1 ? 0 : pages - 1 - (pages - 1) * i / (RD_ADVISE_PROBES - 1);
		if (mincore((void *)(a + at * (uint64_t)pg), (size_t)pg, &v) != 0 || !(v & 1))
			return 0;
	}
	return 1;
}

/* Ask for all of [p, p + len) to be read into the page cache, unless it
 * looks cached already. */
static void willneed(const uint8_t *p, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t a, e, off, n;

	if (pg <= 0 || !p || !len)
		return;
	a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
	e = (uintptr_t)p + len;
	if (looks_cached(a, (e - a + pg - 1) / pg, pg))
		return;
	for (off = 0; a + off < e; off += n) {
		n = e - a - off < RD_ADVISE_WILLNEED_PIECE ? e - a - off : RD_ADVISE_WILLNEED_PIECE;
		(void)madvise((void *)(a + off), n, MADV_WILLNEED);
	}
}

void rd_advise_map(void *map, size_t len)
{
	advise_range(map, len, MADV_RANDOM);
}

void rd_advise_scan(const symdb_image *img)
{
	advise_range(img->map, img->map_len, MADV_NORMAL);
}

void rd_advise_lookup(const symdb_image *img)
{
	advise_range(img->map, img->map_len, MADV_RANDOM);
}

/* Whether symdb_resolve_batch() reads table kind k of img (SPEC §11): the
 * symbol table pick_symbols chose (§7.2.2), not the other; not BUILD_INFO,
 * SEGMENTS (address translation reads those once) or FILE_SOURCES; every
 * other kind, including kinds a later layout adds. */
static int read_by_lookup(const symdb_image *img, unsigned k)
{
	switch (k) {
	case FMT_T_SYMBOL_ADDRS:
	case FMT_T_SYMBOLS:
	case FMT_T_SYMBOL_FILES:
		return !img->alt;
	case FMT_T_ALT_SYMBOL_ADDRS:
	case FMT_T_ALT_SYMBOLS:
	case FMT_T_ALT_SYMBOL_FILES:
		return img->alt;
	case FMT_T_SEGMENTS:
	case FMT_T_BUILD_INFO:
	case FMT_T_FILE_SOURCES:
		return 0;
	default:
		return 1;
	}
}

/* The smallest batch that makes table k worth one whole read. */
static uint64_t due_at(const symdb_image *img, unsigned k, uint64_t pg)
{
	const fmt_table *t = &img->v.t[k];
	uint64_t pages = (t->length + pg - 1) / pg + 1; /* + 1: it may straddle */

	return (pages + RD_ADVISE_PAGES_PER_ADDR - 1) / RD_ADVISE_PAGES_PER_ADDR;
}

void rd_advise_batch_slow(const symdb_image *img, size_t n)
{
	/* io_next and io_done are the image's only state written after open
	 * (besides the cache's fields): atomics, so const is cast away. */
	symdb_image *m = (symdb_image *)img;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t want = 0, done, next = UINT64_MAX;
	unsigned k;

	if (pg <= 0)
		return;
	_Static_assert(FMT_T_KIND_MAX < 64, "io_done has a bit per table kind");
	for (k = 1; k <= FMT_T_KIND_MAX; k++)
		if (img->v.t[k].p && img->v.t[k].length && read_by_lookup(img, k) &&
		    due_at(img, k, (uint64_t)pg) <= n)
			want |= 1ull << k;
	done = __atomic_fetch_or(&m->io_done, want, __ATOMIC_RELAXED);
	for (k = 1; k <= FMT_T_KIND_MAX; k++) {
		const fmt_table *t = &img->v.t[k];
		if ((want & ~done) >> k & 1)
			willneed(t->p, t->length);
		else if (t->p && t->length && read_by_lookup(img, k) && !((want | done) >> k & 1) &&
		         due_at(img, k, (uint64_t)pg) < next)
			next = due_at(img, k, (uint64_t)pg);
	}
	__atomic_store_n(&m->io_next, next, __ATOMIC_RELAXED);
}

/*
 * symdb_image_trim: MADV_DONTNEED on a shared read-only file mapping only
 * unmaps the process's page table entries; the pages stay in the page cache
 * and the next read maps them back.  (A range that symdb_fault_recover
 * replaced by anonymous zero pages reads back as zeros all the same.)  An
 * image decompressed into anonymous memory (a compacted image in a
 * read-only database, or with DB/tmp full) is the only copy of its bytes:
 * MADV_DONTNEED would leave zeros, so it is left alone.
 */
int symdb_image_trim(const symdb_image *img)
{
	if (!img)
		return SYMDB_E_INVAL;
	if (img->anon)
		return 0;
	if (madvise(img->map, img->map_len, MADV_DONTNEED) != 0)
		return -errno;
	return 0;
}
