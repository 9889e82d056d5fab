/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize.h - what the files of symdb_symbolize() share: the
 * address sort (reader_symbolize_sort.c) and the name cache
 * (reader_symbolize_names.c).  Internal, not installed.
 */
#ifndef SYMDB_READER_SYMBOLIZE_H
#define SYMDB_READER_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "reader_internal.h"

/* A sort key: an address and the request it came from. */
struct rd_sort_ent {
	uint64_t addr;
	uint32_t idx;
};

/*
 * Stable radix sort of a[0..n) by addr; ties keep their order.  tmp holds n
 * entries, packed 2 * n words.  Sorted input costs one scan.
 */
RD_HIDDEN void rd_sort_by_addr(struct rd_sort_ent *a, struct rd_sort_ent *tmp,
                               uint64_t *packed, size_t n);

/*
 * Demangled names by name pointer (names that point into mappings the
 * context keeps open): one demangling per distinct name.  Results live in
 * blocks that never move while a call runs; rd_names_begin() starts over
 * when the cache grew past its bounds, so memory stays bounded.
 */
struct rd_name_slot {
	const char *key;   /* NULL = empty */
	const char *value; /* the demangled name, or key itself */
};

struct rd_name_block {
	char *p;
	size_t cap;
};

struct rd_names {
	struct rd_name_slot *slot; /* RD_NAME_SLOTS, NULL until first used */
	size_t used;
	struct rd_name_block *blk;
	size_t nblk, blk_cap;
	size_t cur, off;           /* the block being filled, and its fill */
	size_t bytes;              /* arena bytes handed out since the last clear */
	char *dm;                  /* symdb_demangle()'s buffer */
	size_t dm_cap;
};

/* At the start of a call: clear the cache when it is over its bounds. */
RD_HIDDEN void rd_names_begin(struct rd_names *c);
/* The demangled form of name (name itself when it does not demangle), or
 * NULL without memory.  Valid until the next rd_names_begin(). */
RD_HIDDEN const char *rd_names_demangle(struct rd_names *c, const char *name);
RD_HIDDEN void rd_names_fini(struct rd_names *c);

#endif /* SYMDB_READER_SYMBOLIZE_H */
