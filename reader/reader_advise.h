/* SPDX-License-Identifier: MIT */
/*
 * reader_advise.h - how the reader reads an index file's mapping, told to
 * the kernel (reader_advise.c): one page per fault for lookups, whole tables
 * for big batches, readahead for scans.  Hints only: an answer never
 * depends on them, and a failed madvise changes nothing but speed.
 */
#ifndef SYMDB_READER_ADVISE_H
#define SYMDB_READER_ADVISE_H

#include <stddef.h>
#include <stdint.h>

#include "reader_internal.h"

/* A fresh mapping of an index file (before anything reads it): every fault
 * reads only its own page.  Open then reads a few pages, whatever the
 * file's size (SPEC §9 "At open"). */
RD_HIDDEN void rd_advise_map(void *map, size_t len);

/* img is about to be read through in file order (checksums, symdb verify,
 * compaction): the kernel's default readahead, until rd_advise_lookup(). */
RD_HIDDEN void rd_advise_scan(const symdb_image *img);
/* Back to lookups after a scan: one page per fault again. */
RD_HIDDEN void rd_advise_lookup(const symdb_image *img);

RD_HIDDEN void rd_advise_batch_slow(const symdb_image *img, size_t n);

/* symdb_resolve_batch() is about to look up n addresses in img: ask for
 * every table that so many lookups would fault through anyway in one read
 * (reader_advise.c says when).  One relaxed load unless a table is due;
 * safe from any number of threads. */
static inline void rd_advise_batch(const symdb_image *img, size_t n)
{
	if ((uint64_t)n >= __atomic_load_n(&img->io_next, __ATOMIC_RELAXED))
		rd_advise_batch_slow(img, n);
}

#endif
