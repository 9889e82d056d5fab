/* SPDX-License-Identifier: MIT */
/*
 * ix_macho.h - the Mach-O half of the indexer (ix_macho.c): thin and
 * universal Mach-O files and .dSYM bundles, each architecture slice indexed
 * as its own image keyed by its LC_UUID.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_IX_MACHO_H
#define SYMDB_IX_MACHO_H

#include "ix_emit.h"

/* Index every image of path when it is a Mach-O file (thin or universal) or
 * a .dSYM bundle directory, publishing each into cat.  Returns 1 when path
 * is neither (the caller goes on with ELF), else 0 or a negative code with
 * "PATH: reason" in o->errbuf.  res describes the first image and lists all
 * of them (res->nimages, res->images). */
IX_HIDDEN int ix_macho_add(rd_catalog *cat, const char *path, const symdb_build_opts *o,
                           symdb_build_result *res);

#endif /* SYMDB_IX_MACHO_H */
