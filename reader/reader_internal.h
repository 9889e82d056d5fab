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
/* Validate a mapping of len bytes (read-only, owned: unmapped on failure)
 * and wrap it in an image, as rd_image_map does after mmap. */
RD_HIDDEN int rd_image_from_map(void *map, size_t len, const char *path, unsigned flags,
                                symdb_image **out, char *errbuf, size_t errbuf_sz);
/* Unmap and free (no reference counting). */
RD_HIDDEN void rd_image_free(symdb_image *img);

/* ---- cold storage (SPEC §12.8; reader_cold.c, reader_lz4.c) ---- */

/* LZ4HC level of compacted files: cold files are written once and read
 * rarely, so ratio wins over compression speed. */
#define RD_LZ4_LEVEL 9
/* A cold file opened without a catalog (symdb_image_open_file, reindex)
 * may declare at most this much (the import bundle's limit, SPEC §12.7). */
#define RD_COLD_MAX_FILE (16ull << 30)

/* A streaming LZ4 frame reader: begin() gets the declared Content_Size
 * before any data, sink() every decoded chunk at its offset.  Either may set
 * `why` before returning an error. */
typedef struct rd_lz4_reader {
	uint64_t max;      /* a frame declaring more is refused unread */
	uint64_t declared; /* out: the frame's Content_Size */
	int (*begin)(void *arg, uint64_t size);
	int (*sink)(void *arg, const void *p, size_t n, uint64_t off);
	void *arg;
	const char *why;
} rd_lz4_reader;

/* Write [p, p+n) to fd as one LZ4 frame with Content_Size, content and block
 * checksums; *written gets the frame's size.  path is for messages. */
RD_HIDDEN int rd_lz4_write_frame(int fd, const void *p, size_t n, uint64_t *written,
                                 const char *path, char *errbuf, size_t errbuf_sz);
/* Decode the LZ4 frame that fd holds from its offset to EOF.  Refuses a
 * frame without both checksums or Content_Size, one declaring more than
 * r->max, a bad checksum, a short or long content, and bytes after it. */
RD_HIDDEN int rd_lz4_read_frame(int fd, rd_lz4_reader *r, const char *path, char *errbuf,
                                size_t errbuf_sz);

/* Open the cold form `path`.lz4 of the index file `path` that the catalog
 * describes (file_size, header_sum): thaw it into `path` once, under the
 * directory lock, or decompress it into memory when the database cannot be
 * written or flags has SYMDB_OPEN_NO_THAW.  Returns -ENOENT when neither form
 * exists (errbuf names path). */
RD_HIDDEN int rd_cold_open(const char *dbdir, const char *path, uint64_t file_size,
                           uint64_t header_sum, unsigned flags, symdb_image **out,
                           char *errbuf, size_t errbuf_sz);
/* Decompress a cold file named directly (no catalog) into memory. */
RD_HIDDEN int rd_cold_open_file(const char *lz4path, unsigned flags, symdb_image **out,
                                char *errbuf, size_t errbuf_sz);
/* Take the per-directory lock that serializes compaction, thawing and
 * removal of the images in DB/images/XX/ (the directory of path): returns an
 * fd to close, or -errno. */
RD_HIDDEN int rd_dir_lock(const char *path);
RD_HIDDEN void rd_dir_unlock(int fd);
/* fsync the directory holding path (after a rename or unlink in it). */
RD_HIDDEN void rd_sync_parent(const char *path);

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
