/* SPDX-License-Identifier: MIT */
/*
 * format_lmdb.h - the two meta pages at the start of LMDB's data.mdb, read
 * without LMDB (SPEC §12.1, "Catalog file check").  The catalog is opened by
 * LMDB, which maps data.mdb and touches every page its current meta page
 * names: a file cut short of those pages kills the process with SIGBUS.
 * Reading the metas first lets symdb refuse such a file with a reason.
 *
 * The layout is LMDB's (liblmdb 0.9, data version 1), in the byte order and
 * word size of the machine that wrote it, which LMDB requires to be the
 * reader's: a page header (page number: one word; pad, flags: u16 each;
 * lower/upper: u16 each), then the meta record at the page header's end:
 *
 *   u32 magic 0xBEEFC0DE, u32 data version 1, word address, word map size,
 *   two database records (u32 pad, u16 flags, u16 depth, five words),
 *   word last used page number, word transaction id.
 *
 * The free-list database record's pad is the page size.  Page 0 holds one
 * meta, page 1 (at one page size) the other; the one with the higher
 * transaction id is current.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_LMDB_H
#define SYMDB_FORMAT_LMDB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FMT_HIDDEN __attribute__((visibility("hidden")))

#define FMT_LMDB_MAGIC        0xBEEFC0DEu
#define FMT_LMDB_DATA_VERSION 1u
#define FMT_LMDB_P_META       0x08u   /* page flag of a meta page */
#define FMT_LMDB_W            sizeof(size_t) /* LMDB's pgno_t, txnid_t, size_t */
/* Offsets within a meta page. */
#define FMT_LMDB_HDR          (FMT_LMDB_W + 8)             /* page header size */
#define FMT_LMDB_OFF_FLAGS    (FMT_LMDB_W + 2)
#define FMT_LMDB_OFF_MAGIC    FMT_LMDB_HDR
#define FMT_LMDB_OFF_VERSION  (FMT_LMDB_HDR + 4)
#define FMT_LMDB_OFF_DBS      (FMT_LMDB_HDR + 8 + 2 * FMT_LMDB_W)
#define FMT_LMDB_DB_SIZE      (8 + 5 * FMT_LMDB_W)
#define FMT_LMDB_OFF_PSIZE    FMT_LMDB_OFF_DBS              /* free DB's pad */
#define FMT_LMDB_OFF_LAST_PG  (FMT_LMDB_OFF_DBS + 2 * FMT_LMDB_DB_SIZE)
#define FMT_LMDB_OFF_TXNID    (FMT_LMDB_OFF_LAST_PG + FMT_LMDB_W)
#define FMT_LMDB_META_END     (FMT_LMDB_OFF_TXNID + FMT_LMDB_W)
/* LMDB's page sizes: the OS page size, at most 64 KiB. */
#define FMT_LMDB_PSIZE_MIN    512u
#define FMT_LMDB_PSIZE_MAX    65536u

/* LMDB writes its pages in the machine's own byte order and word size. */
static inline uint64_t fmt_lmdb_word(const uint8_t *p)
{
	size_t w;

	memcpy(&w, p, sizeof w);
	return (uint64_t)w;
}

static inline uint32_t fmt_lmdb_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint16_t fmt_lmdb_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

/* A page size LMDB can have: a power of two, 512 to 64 KiB. */
static inline int fmt_lmdb_psize_ok(uint32_t ps)
{
	return ps >= FMT_LMDB_PSIZE_MIN && ps <= FMT_LMDB_PSIZE_MAX && (ps & (ps - 1)) == 0;
}

typedef struct fmt_lmdb_meta {
	uint32_t psize;   /* page size (meaningful in page 0's meta) */
	uint64_t last_pg; /* last used page number */
	uint64_t txnid;   /* transaction that wrote this meta */
} fmt_lmdb_meta;

/* Decode the meta page in page[0 .. len).  Returns 0, or -1 with *why set
 * ("meta page is short", "not a meta page", "bad magic", "LMDB data version
 * N" is not worded here: *why is a static string). */
FMT_HIDDEN int fmt_lmdb_meta_decode(const uint8_t *page, size_t len, fmt_lmdb_meta *m,
                                    const char **why);

/* The verdict on one data.mdb. */
typedef struct fmt_lmdb_check {
	uint64_t size;     /* the file's size, from fstat after reading the metas */
	uint64_t need;     /* bytes its current meta needs: (last_pg + 1) * psize */
	uint32_t psize;
	const char *why;   /* on failure: what is wrong (static string) */
} fmt_lmdb_check;

/* Check the data.mdb open on fd against its meta pages.  The metas are read
 * before the size, so a file another process is growing (LMDB writes the
 * data pages of a commit before the meta that names them, and never
 * shrinks the file) always passes.  Returns 0; SYMDB-neutral codes: 1 when
 * the file is shorter than its meta needs (truncated: size and need set),
 * 2 when a meta page is not LMDB's (why set); -errno on a read error. */
FMT_HIDDEN int fmt_lmdb_check_fd(int fd, fmt_lmdb_check *out);

/* ---- the trees of one snapshot (format_lmdb_tree.c) ----------------------- */

typedef struct fmt_lmdb_tree_report {
	const char *why;  /* what is wrong (static string) */
	uint64_t page;    /* the page it is on (0: a meta's record) */
} fmt_lmdb_tree_report;

/* The meta of transaction txnid in data.mdb mapped at map (len bytes
 * readable): *m and *meta (its page) set, 0; -1 when neither meta page is
 * that transaction's with the page size of page 0 and its pages inside len
 * (a later commit rewrote it: take a newer snapshot).  The page is the
 * file's, which a writer rewrites two commits later: the caller copies it
 * (FMT_LMDB_META_END bytes) and checks the copy is still txnid's before
 * walking from it. */
FMT_HIDDEN int fmt_lmdb_tree_meta(const uint8_t *map, uint64_t len, uint64_t txnid,
                                  fmt_lmdb_meta *m, const uint8_t **meta);

/* Walk every page the snapshot of meta uses (the main database, each named
 * database in it, the free list), each at most once, checking what LMDB
 * would trust (format_lmdb_tree.c has the list).  map holds pages
 * [0, last_pg] of psize bytes; seen is the caller's zeroed bitmap of
 * last_pg + 1 bits.  0, or -1 with rep set.  Reads nothing outside those
 * pages whatever their bytes. */
FMT_HIDDEN int fmt_lmdb_check_tree(const uint8_t *map, uint32_t psize, uint64_t last_pg,
                                   const uint8_t *meta, uint8_t *seen,
                                   fmt_lmdb_tree_report *rep);

#endif /* SYMDB_FORMAT_LMDB_H */
