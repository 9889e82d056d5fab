/* SPDX-License-Identifier: MIT */
/*
 * rd_catalog.h - the LMDB catalog of a database directory (SPEC §12).
 *
 * Internal, not installed.  Implemented by reader/catalog_*.c, compiled into
 * libsymdb only, and used by the reader (lookups, listing) and the builder
 * (publishing).  LMDB errors are mapped to symdb codes there and never leave
 * the catalog raw.
 */
#ifndef SYMDB_RD_CATALOG_H
#define SYMDB_RD_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#define RD_HIDDEN __attribute__((visibility("hidden")))

typedef struct rd_catalog rd_catalog;

#define RD_CAT_WRITE  0x1u /* open read-write (the builder) */
#define RD_CAT_CREATE 0x2u /* create DB/, DB/catalog/, DB/images/, DB/tmp/ if missing */
#define RD_CAT_RECOVER 0x4u /* a damaged catalog is moved aside and replaced by an empty one */

/* A decoded `images` value (SPEC §12.3).  Strings are NUL-terminated copies in
 * caller storage (see rd_catalog_get) or, in rd_catalog_list callbacks,
 * scratch valid only during the callback. */
typedef struct rd_cat_entry {
	uint8_t uuid[32];
	uint8_t uuid_len, uuid_kind, object_format;
	uint32_t flags, machine, machine_sub;
	uint64_t file_size, header_sum, built_at;
	const char *file;       /* relative to the database directory */
	const char *image_name;
	const char *source_path; /* the `paths` record: absolute path of the file
	                            indexed, or NULL (SPEC §12.2) */
} rd_cat_entry;

/* Open the catalog of database directory `dir`.  Returns 0, -ENOENT (no
 * database and no CREATE), -EACCES/-EROFS, SYMDB_E_CATALOG (damaged or
 * other schema), or SYMDB_E_NETFS (on a network filesystem).  errbuf gets a one-line reason naming the path. */
RD_HIDDEN int rd_catalog_open(const char *dir, unsigned flags, rd_catalog **out,
                              char *errbuf, size_t errbuf_sz);
RD_HIDDEN void rd_catalog_close(rd_catalog *c);
/* After an RD_CAT_RECOVER open that moved a damaged catalog aside: one line,
 * the damage and where the old catalog went; else NULL.  Owned by c. */
RD_HIDDEN const char *rd_catalog_recovered(const rd_catalog *c);
/* Whether a statfs(2) f_type is a network filesystem (NFS, SMB, CIFS, SMB2)
 * on which rd_catalog_open refuses a database (SYMDB_E_NETFS, SPEC §12.1). */
RD_HIDDEN int rd_fs_is_network(long f_type);
RD_HIDDEN const char *rd_catalog_dir(const rd_catalog *c);
/* The id of the catalog's last committed transaction (LMDB's meta page,
 * read without a transaction: no allocation), 0 when it cannot be read.
 * Unchanged since a lookup, the catalog answers that lookup the same. */
RD_HIDDEN uint64_t rd_catalog_generation(rd_catalog *c);
/* A catalog replaced under a long-lived handle (catalog_refresh.c, SPEC
 * §12.1): when DB/catalog/data.mdb is another file than the one opened,
 * open it and use it from now on.  Looks at most once a second unless `now`
 * (then waits for a refresh in progress).  1 when the handle now reads a
 * new catalog, else 0 (nothing replaced, not time yet, or the new one did
 * not open: the old one stays).  Call with no transaction and no other
 * library lock held.  Thread-safe. */
RD_HIDDEN int rd_catalog_refresh(rd_catalog *c, int now);

/* Look one UUID up.  Returns 0, SYMDB_E_NOT_INDEXED, or an error.  The
 * strings are copied into buf (buf_sz bytes); -ENAMETOOLONG if they don't fit. */
RD_HIDDEN int rd_catalog_get(rd_catalog *c, const uint8_t *uuid, size_t uuid_len,
                             rd_cat_entry *out, char *buf, size_t buf_sz);

/* The entries whose UUID starts with the first ndigits hex digits of pfx
 * (ndigits / 2 bytes, then the high nibble of the next when ndigits is odd),
 * in UUID order; an entry whose UUID is exactly those digits is the only
 * match.  out[0 .. min(n, max)) receives them without strings (file and
 * image_name NULL).  Returns the number n of matches, or an error. */
RD_HIDDEN int rd_catalog_prefix(rd_catalog *c, const uint8_t *pfx, size_t ndigits,
                                rd_cat_entry *out, size_t max);

/* Insert or replace one entry, `images` and `names` in one write transaction.
 * With `only_if_absent`, returns SYMDB_E_EXISTS (and changes nothing) when
 * the UUID is already present.  Grows the LMDB map as needed. */
RD_HIDDEN int rd_catalog_put(rd_catalog *c, const rd_cat_entry *e, int only_if_absent);

/* Remove one entry (images + names).  Returns 0 or SYMDB_E_NOT_INDEXED. */
RD_HIDDEN int rd_catalog_del(rd_catalog *c, const uint8_t *uuid, size_t uuid_len);
/* Replace the whole catalog by entries e[0..n) in one write transaction:
 * `images` and `names` hold exactly those afterwards (a repeated UUID keeps
 * the last), `used` keeps the records of UUIDs still present (symdb
 * reindex, SPEC §12.7). */
RD_HIDDEN int rd_catalog_replace_all(rd_catalog *c, const rd_cat_entry *e, size_t n);

/* Call fn for every entry in UUID byte order; stops at the first non-zero
 * return and returns it. */
/* rd_catalog_check(): the catalog's own consistency (SPEC §12.6): every
 * `images` value decodes, every `names` key belongs to a valid image of that
 * name and every valid image has one, every `used` record is a u64 of an
 * image.  fn (may be NULL) gets each problem once: its kind, the LMDB key and
 * a reason.  With repair, one write transaction deletes undecodable entries,
 * dangling names and stale use records and adds missing names.  Returns the
 * number of problems found, or a negative error. */
enum { RD_CHK_BAD_VALUE = 1, RD_CHK_DANGLING_NAME, RD_CHK_MISSING_NAME, RD_CHK_BAD_USED };
typedef void (*rd_check_fn)(int kind, const uint8_t *key, size_t key_len, const char *why,
                            void *arg);
RD_HIDDEN int rd_catalog_check(rd_catalog *c, int repair, rd_check_fn fn, void *arg);
RD_HIDDEN int rd_catalog_list(rd_catalog *c, int (*fn)(const rd_cat_entry *e, void *arg),
                              void *arg);

/* Last-query time of one UUID (SPEC §12.6), unix seconds.  Returns 0,
 * SYMDB_E_NOT_INDEXED when none is recorded, or an error. */
RD_HIDDEN int rd_catalog_get_used(rd_catalog *c, const uint8_t *uuid, size_t uuid_len,
                                  uint64_t *out);
/* Record `when` as the last-query time of an indexed UUID (one write
 * transaction; a later time already stored is kept).  SYMDB_E_NOT_INDEXED
 * when the catalog has no such image. */
RD_HIDDEN int rd_catalog_set_used(rd_catalog *c, const uint8_t *uuid, size_t uuid_len,
                                  uint64_t when);

#endif /* SYMDB_RD_CATALOG_H */
