/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_par.h - the per-thread state of the DWARF walk
 * (ix_dwarf_units.c) and the parallel driver that runs shards of units and
 * merges their results (ix_dwarf_par.c).  Internal.
 */
#ifndef SYMDB_IX_DWARF_PAR_H
#define SYMDB_IX_DWARF_PAR_H

#include "ix_dwarf_internal.h"

/* One unit's flattened pieces. */
typedef struct ix_unit {
	uint64_t off; /* unit header offset in .debug_info */
	ix_vec lines; /* ix_piece: v[0] FILES index */
	ix_vec dies;  /* ix_piece: v[0] node index */
} ix_unit;

/* One shard: the units [first, last) of the shared array `units`, and
 * everything they add.  Shard 0 adds to the image being built; a later
 * shard to a private image that ix_dwarf_par_run merges. */
typedef struct ix_shard {
	ix_image *img;
	const ix_sections *secs;
	void *dbg;            /* the walking thread's Dwarf_Debug (one is not
	                       * thread-safe), while it walks the shard */
	size_t *cursor;       /* ... and how many unit headers that handle has
	                       * read since it last started over (ix_dwarf_units.c) */
	ix_unit *units;
	size_t nunits;        /* of the image */
	size_t first, last;
	uint64_t bytes;       /* .debug_info bytes of those units */
	ix_u64map files_idx;  /* (path, relative) string refs -> FILES index */
	ix_u64map fn_idx;     /* DIE offset -> FUNCTIONS index */
	ix_u64map lt_idx;     /* CU DIE offset -> foreign[] slot */
	ix_u64map ab_code;    /* .debug_abbrev offset of an abbreviation -> its
	                       * AB_* bits (ix_dwarf_dies.c) */
	ix_line_table *foreign; /* file tables of units met through references */
	size_t nforeign, capforeign;
	ix_urange *ur;        /* DIE ranges of unit DIEs, in unit order */
	size_t nur, capur;
	uint64_t indexed, skipped;
	int rc;               /* 0, or -1: out of memory */
	struct ix_split *split; /* split DWARF files (ix_dwarf_split.h), or NULL */
	uint64_t unit_sig;    /* the current unit header's DWO id (DWARF 5) */
	uint64_t unit_end;    /* ... the offset where its unit ends */
	uint16_t unit_type;   /* ... and its DW_UT_* */
	/* While a split unit is walked: its skeleton's .debug_addr, which
	 * DW_FORM_addrx and DW_FORM_GNU_addr_index values index; else NULL. */
	const ix_ranges_ctx *addrx;
	ix_image own;         /* the private image of a shard > 0 */
} ix_shard;

/* ix_dwarf_units.c: walks the shard's units with w->dbg; sets w->rc. */
IX_HIDDEN void ix_dwarf_walk(ix_shard *w);
IX_HIDDEN void ix_shard_free(ix_shard *w);

/* Walks the shards w[0..nw) on nt threads, the Dwarf_Debug dbg[i] for
 * thread i (the calling thread is thread 0), each with its header cursor at
 * unit 0: a free thread takes the largest shard left (by_size) or the next
 * in unit order; w[0] adds to its image, the others to private ones, which
 * are merged into w[0] in shard order as they complete.  Returns 0 or -1
 * (out of memory). */
IX_HIDDEN int ix_dwarf_par_run(ix_shard *w, size_t nw, void **dbg, size_t nt, int by_size);

/* The number of walking threads for a build: `threads` if the caller chose
 * it, else `cpus` (the builder's online CPUs: the indexer reads nothing of
 * /sys; at most IX_MAX_THREADS) when there is enough DWARF to share; never
 * more than units. */
#define IX_MAX_THREADS 8
IX_HIDDEN size_t ix_dwarf_shards(unsigned threads, unsigned cpus, size_t nunits,
                                 uint64_t info_bytes);

/* How many shards nt threads cut nunits units into. */
IX_HIDDEN size_t ix_dwarf_nshards(size_t nt, size_t nunits);

#endif /* SYMDB_IX_DWARF_PAR_H */
