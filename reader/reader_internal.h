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
#include "reader_fault.h"
#include "rd_catalog.h"
#include "symdb.h"

/* Who is told of decompressions of cold images (symdb_open_opts). */
typedef struct rd_thaw_hook {
	symdb_decompress_fn fn; /* NULL: nobody */
	void *arg;
} rd_thaw_hook;

/* The images a db shares between its openers (reader_open.c).  Its own
 * object, not part of struct symdb: every image handed out holds a
 * reference to it, so an image closed after symdb_close() (or racing it)
 * still locks a live mutex.  `lock` is a leaf: nothing else is taken or
 * waited for while it is held (no catalog access, no I/O). */
typedef struct rd_cache {
	pthread_mutex_t lock;  /* guards everything below and the refs of every image */
	symdb_image *images;   /* shareable images: each the current file of its UUID */
	unsigned owners;       /* 1 while the db is open + 1 per image pointing here */
	struct rd_fault_table fault; /* the mappings of its images, for
	                              * symdb_fault_recover(); freed with the cache */
} rd_cache;

struct symdb {
	rd_catalog *cat;
	rd_thaw_hook thaw;     /* from symdb_open()'s opts */
	rd_cache *cache;       /* mapped images, shared with the images themselves */
	char dir[];            /* the database directory */
};

/* One mapped, validated index file.  Immutable after open except for `refs`,
 * `next`, `listed` and `fault_slot`, which belong to cache->lock, and
 * `damaged`, which only ever goes from 0 to 1. */
struct symdb_image {
	fmt_view v;
	void *map;
	size_t map_len;
	rd_cache *cache;      /* the db's cache (a reference), or NULL (open_file) */
	symdb_image *next;
	unsigned refs;
	int listed;           /* on cache->images: new opens may share it */
	int damaged;          /* set (atomically) by symdb_fault_recover(), or by
	                       * rd_image_damaged() when the tail byte changed */
	size_t tail_off;      /* the file's last non-zero byte (in its last page), */
	uint8_t tail_val;     /* and its value; 0: none (reader_fault.c) */
	int anon;             /* map is anonymous memory (decompressed, not thawed to a
	                       * file): no page cache behind it, never trimmed */
	struct rd_fault_slot *fault_slot; /* in cache->fault, or NULL; cache->lock */

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
	/* Format 2 (SPEC §7.9; reader_tables.h reads both majors): iaddr and
	 * laddr are block columns of niblk / nlblk records, imap and rows the
	 * packed rows of imap_len / rows_len bytes (nimap / nrows intervals),
	 * FUNCTIONS and INLINE_NODES are v.fns and v.nodes. */
	int packed;
	uint64_t niblk, imap_len, nlblk, rows_len;
	const uint8_t *binfo;  uint64_t nbinfo;
	const uint8_t *sfiles;                /* SYMBOL_FILES, parallel to syms, or NULL */
	const uint8_t *fsrcs;  uint64_t nfsrcs; /* FILE_SOURCES (SPEC §7.3.1), or NULL */

	/* SPEC §7.2.2: the table a request's file holds (SYMDB_OPEN_NAMES_*
	 * of the open; part of the cache key), whether saddr/syms/sfiles are the
	 * ALT_SYMBOL_* tables, and whether the index lacks that table. */
	unsigned names;
	int alt, names_missing;

	/* Page-cache hints for batches (reader_advise.c): the smallest batch
	 * that makes another table worth reading whole, and the table kinds
	 * already asked for (bit per kind).  Written atomically by resolve. */
	uint64_t io_next, io_done;
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
/* rd_image_map() with the mapping in c's fault table (c a db's cache) from
 * before validation until rd_image_free_in(): a file truncated under it is
 * a damaged image (rd_image_damaged), not a SIGBUS, in a process whose
 * handler calls symdb_fault_recover() (reader_fault.c). */
RD_HIDDEN int rd_image_map_in(const char *path, unsigned flags, rd_cache *c, symdb_image **out,
                              char *eb, size_t ebsz);
RD_HIDDEN void rd_image_free_in(rd_cache *c, symdb_image *img);

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
                           uint64_t header_sum, unsigned flags, const rd_thaw_hook *hook,
                           symdb_image **out, char *errbuf, size_t errbuf_sz);
/* Decompress a cold file named directly (no catalog) into memory. */
RD_HIDDEN int rd_cold_open_file(const char *lz4path, unsigned flags, const rd_thaw_hook *hook,
                                symdb_image **out, char *errbuf, size_t errbuf_sz);
/* Take the per-directory lock that serializes compaction, thawing and
 * removal of the images in DB/images/XX/ (the directory of path): returns an
 * fd to close, or -errno. */
RD_HIDDEN int rd_dir_lock(const char *path);
RD_HIDDEN void rd_dir_unlock(int fd);
/* fsync the directory holding path (after a rename or unlink in it). */
RD_HIDDEN void rd_sync_parent(const char *path);

/* The end of the last field of an options struct: the bytes a caller's
 * struct must hold zeros past (trailing padding is not a field). */
#define RD_OPTS_END(TYPE) \
	(offsetof(TYPE, RD_OPTS_LAST_##TYPE) + sizeof(((TYPE *)0)->RD_OPTS_LAST_##TYPE))
#define RD_OPTS_LAST_symdb_open_opts on_decompress_arg

/* Options structs grow at the end (SYMDB_OPTS).  A caller's struct of sz
 * bytes that is larger than the `known` bytes of this library's must hold
 * only zeros past them (a newer caller asking for nothing new): 0, or
 * SYMDB_E_INVAL with the offending offset in errbuf. */
RD_HIDDEN int rd_opts_tail(const void *in, size_t sz, size_t known, char *errbuf,
                           size_t errbuf_sz);
/* Validate the caller's options (NULL = defaults) into *o, a full struct:
 * fields past a smaller, older caller's sz read as zero; non-zero bytes past
 * this library's struct and flag bits outside `known` give SYMDB_E_INVAL.
 * o->errbuf and o->errbuf_sz are usable either way (errbuf_sz 0 without a
 * buffer). */
RD_HIDDEN int rd_opts_get(const symdb_open_opts *in, unsigned known, symdb_open_opts *o);
/* The same rules for any options struct that starts like symdb_open_opts
 * (sz, flags, errbuf, errbuf_sz) and whose fields end at known_end
 * (RD_OPTS_END): the flags and the errbuf, the rest is the caller's. */
RD_HIDDEN int rd_opts_prefix(const void *in, size_t known_end, unsigned known, unsigned *flags,
                             char **errbuf, size_t *errbuf_sz);
#define RD_OPTS_LAST_symdb_symbolizer_opts fetch
#define RD_OPTS_LAST_symdb_symbolize_opts on_results_arg
/* rd_opts_get() for callers that need only the flags and the errbuf. */
RD_HIDDEN int rd_opts(const symdb_open_opts *o, unsigned known, unsigned *flags,
                      char **errbuf, size_t *errbuf_sz);
/* Copy a filled output struct (full_sz bytes, first field `size_t sz`) to
 * the caller's struct `out`, whose sz says how large the caller's struct is:
 * min(out->sz, full_sz) bytes are written, and out->sz becomes that count.
 * Returns 0, or SYMDB_E_INVAL for a NULL out or an sz too small to hold sz. */
RD_HIDDEN int rd_out_put(void *out, const void *full, size_t full_sz);

/* The string at reference r, or NULL when r is past the pool. */
static inline const char *rd_str(const symdb_image *img, uint64_t r)
{
	return r < img->nstrs ? (const char *)img->strs + r : NULL;
}

#endif /* SYMDB_READER_INTERNAL_H */
