/* SPDX-License-Identifier: MIT */
/*
 * reader_fault.h - the table of a database handle's index mappings that
 * symdb_fault_recover() searches from a signal handler (reader_fault.c).
 * Internal, not installed.
 */
#ifndef SYMDB_READER_FAULT_H
#define SYMDB_READER_FAULT_H

#include <stddef.h>
#include <stdint.h>

#ifndef RD_HIDDEN
#define RD_HIDDEN __attribute__((visibility("hidden")))
#endif

struct symdb_image;

/* One registered mapping.  Written only under the db cache's lock, read
 * by a signal handler at any instant: seq is odd while the other fields
 * change (a seqlock), so the handler never acts on a half-written slot. */
struct rd_fault_slot {
	unsigned seq;
	uintptr_t start;          /* 0: free */
	size_t len;
	struct symdb_image *img;  /* whose `damaged` flag a recovery sets */
};

#define RD_FAULT_BLOCK 64

/* Slots come in blocks that are linked at the head and never freed before
 * the table: a handler walking them never meets freed memory. */
struct rd_fault_block {
	struct rd_fault_slot slot[RD_FAULT_BLOCK];
	struct rd_fault_block *next;
};

struct rd_fault_table {
	struct rd_fault_block *head; /* read with acquire loads */
	uintptr_t page;              /* the page size, read once at open */
};

/* Set up an empty table (no allocation). */
RD_HIDDEN void rd_fault_init(struct rd_fault_table *t);
/* Free every block.  Nothing may search the table meanwhile. */
RD_HIDDEN void rd_fault_fini(struct rd_fault_table *t);
/* Register img's mapping (caller holds the cache lock).  Best effort: without
 * memory for a new block the image is simply not covered. */
RD_HIDDEN void rd_fault_register(struct rd_fault_table *t, struct symdb_image *img);
/* Clear img's slot (caller holds the cache lock), before its munmap. */
RD_HIDDEN void rd_fault_unregister(struct symdb_image *img);
/* Whether a fault on img's mapping was recovered. */
RD_HIDDEN int rd_image_damaged(const struct symdb_image *img);
/* At open: note img's last non-zero byte within its last page bytes of
 * mapping, which rd_image_damaged() then checks (a cut inside that page). */
RD_HIDDEN void rd_image_note_tail(struct symdb_image *img, size_t page);
/* How far back from the end the open looks for that byte: any cut before
 * it reads zero there (or faults).  With pages larger than 4 KiB, a file
 * whose last 4 KiB are zeros has no such byte, and a cut inside its last
 * page is not seen. */
#define RD_TAIL_PAGE 4096u

#endif /* SYMDB_READER_FAULT_H */
