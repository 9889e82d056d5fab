/* SPDX-License-Identifier: MIT */
/*
 * format_layout.h - the database directory layout (SPEC §12.1), spelled in
 * one place:
 *
 *   DB/catalog/                      the LMDB environment
 *   DB/images/XX/UUIDHEX.symdb       an index file (XX: the first two hex digits)
 *   DB/images/XX/UUIDHEX.symdb.lz4   its cold form (§12.8)
 *   DB/tmp/                          temp files, renamed into images/ or removed
 *
 * Every builder returns 0, or -ENAMETOOLONG when the path does not fit
 * (buf then holds a cut string that must not be used).
 */
#ifndef SYMDB_FORMAT_LAYOUT_H
#define SYMDB_FORMAT_LAYOUT_H

#include <stddef.h>

#include "format_header.h"

#define FMT_LAYOUT_CATALOG "catalog"
#define FMT_LAYOUT_IMAGES "images"
#define FMT_LAYOUT_TMP "tmp"
#define FMT_LAYOUT_INDEX_EXT ".symdb"
#define FMT_LAYOUT_COLD_EXT ".lz4"
#define FMT_LAYOUT_MISSES "misses" /* DB/misses/HEX: fetch's negative cache */
/* mkstemp's suffix, on every temp file name */
#define FMT_LAYOUT_TMP_SUFFIX ".XXXXXX"

/* DB/SUB for SUB one of FMT_LAYOUT_CATALOG, _IMAGES, _TMP. */
FMT_HIDDEN int fmt_layout_dir(char *buf, size_t sz, const char *db, const char *sub);

/* images/XX/HEX.symdb, the File of a catalog entry (relative to DB). */
FMT_HIDDEN int fmt_layout_index_rel(char *buf, size_t sz, const char *hex);

/* DB/images/XX, the directory an index file and its lock live in. */
FMT_HIDDEN int fmt_layout_subdir(char *buf, size_t sz, const char *db, const char *hex);

/* DB/REL: a catalog entry's file. */
FMT_HIDDEN int fmt_layout_file(char *buf, size_t sz, const char *db, const char *rel);

/* PATH.lz4: the cold form of the index file at path. */
FMT_HIDDEN int fmt_layout_cold(char *buf, size_t sz, const char *index_path);

/* STAGING/HEX<tag>.XXXXXX: a staged index file, for mkstemp (staging is
 * DB/tmp; tag is "" or names the indexer that wrote it). */
FMT_HIDDEN int fmt_layout_staged(char *buf, size_t sz, const char *staging, const char *hex,
                                 const char *tag);

/* DB/tmp/NAME.XXXXXX: another temp file (an import, a bundle), for mkstemp. */
FMT_HIDDEN int fmt_layout_tmp(char *buf, size_t sz, const char *db, const char *name);

#endif /* SYMDB_FORMAT_LAYOUT_H */
