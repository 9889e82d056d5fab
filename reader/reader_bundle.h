/* SPDX-License-Identifier: MIT */
/*
 * reader_bundle.h - unpacking an export bundle into temporary files
 * (reader_bundle.c), the first half of symdb_import().  Internal; exposed
 * for the unit tests.
 */
#ifndef SYMDB_READER_BUNDLE_H
#define SYMDB_READER_BUNDLE_H

#include <stddef.h>

#include "symdb.h"

#define RD_HIDDEN __attribute__((visibility("hidden")))

typedef struct rd_bundle rd_bundle;

/* Reads a bundle from fd to its end and streams each image's index file
 * into a temporary file of its own in tmp_dir, which must be a database's
 * DB/tmp: the files are created and removed through its descriptor, never
 * following it (db_dir.h, SPEC §12.1).  Returns 0 with *out set, or
 * SYMDB_E_CORRUPT with a one-line reason in why when the bytes are not a
 * whole bundle (LZ4 checksums, a stream that ends early, bytes after it, a
 * bad magic, the limits of SPEC §12.7) or cannot be unpacked (a read error,
 * no room in tmp_dir): no file is left behind then.  The files are not
 * judged: the caller validates each before it publishes any. */
RD_HIDDEN int rd_bundle_unpack(int fd, const char *tmp_dir, rd_bundle **out, char *why,
                               size_t why_sz);
RD_HIDDEN size_t rd_bundle_count(const rd_bundle *b);
/* Image i: the UUID its record names and the file holding its bytes
 * (owned by b). */
RD_HIDDEN void rd_bundle_image(const rd_bundle *b, size_t i, symdb_uuid *uuid,
                               const char **path);
/* Removes b's files and frees it.  NULL-safe. */
RD_HIDDEN void rd_bundle_free(rd_bundle *b);

#endif /* SYMDB_READER_BUNDLE_H */
