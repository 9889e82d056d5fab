/* SPDX-License-Identifier: MIT */
/*
 * reader_internal.h - what the reader's modules share: the database handle
 * (catalog + cache of mapped images), the image handle (a mapping plus its
 * validated view, with each table's base and count hoisted out for the
 * resolve loop) and a few helpers.  Internal, not installed; the indexer
 * never includes it.
 */
#ifndef SYMDB_READER_INTERNAL_H
#define SYMDB_READER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "format_header.h"
#include "rd_catalog.h"
#include "symdb.h"

struct symdb {
	rd_catalog *cat;
	pthread_mutex_t lock;  /* guards `images`, every image's refs, and catalog reads */
	symdb_image *images;   /* open images, a singly linked list */
	char dir[];            /* the database directory */
};

/* One mapped, validated index file.  Immutable after open except for `refs`
 * and `next`, which belong to the owning db's lock. */
struct symdb_image {
	fmt_view v;
	void *map;
	size_t map_len;
	symdb *db;            /* owner of the cache entry, or NULL (open_file) */
	symdb_image *next;
	unsigned refs;

	/* Hoisted table bases and counts (0 / NULL when absent). */
	unsigned aw;                          /* Address_Size */
	uint64_t base;                        /* Base_Address */
	const uint8_t *strs;   uint64_t nstrs;
	const uint8_t *segs;   uint64_t nsegs;
	const uint8_t *saddr;  const uint8_t *syms;  uint64_t nsyms;
	const uint8_t *files;  uint64_t nfiles;
	const uint8_t *fns;    uint64_t nfns;
	const uint8_t *iaddr;  const uint8_t *imap;  uint64_t nimap;
	const uint8_t *nodes;  uint64_t nnodes;
	const uint8_t *laddr;  const uint8_t *rows;  uint64_t nrows;
	const uint8_t *binfo;  uint64_t nbinfo;
	const uint8_t *sfiles;                /* SYMBOL_FILES, parallel to syms, or NULL */
};

/* Map and validate an index file; `path` is only for messages.  The image
 * returned has refs = 1 and no db. */
RD_HIDDEN int rd_image_map(const char *path, unsigned flags, symdb_image **out,
                           char *errbuf, size_t errbuf_sz);
/* Unmap and free (no reference counting). */
RD_HIDDEN void rd_image_free(symdb_image *img);

/* Validate an options struct: sz sane, no unknown flag bits.  Returns 0 or
 * SYMDB_E_INVAL.  *flags, *errbuf, *errbuf_sz are filled either way. */
RD_HIDDEN int rd_opts(const symdb_open_opts *o, unsigned known, unsigned *flags,
                      char **errbuf, size_t *errbuf_sz);

/* The string at reference r, or NULL when r is past the pool. */
static inline const char *rd_str(const symdb_image *img, uint64_t r)
{
	return r < img->nstrs ? (const char *)img->strs + r : NULL;
}

#endif /* SYMDB_READER_INTERNAL_H */
