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

#include "ix_stage.h"

/* Index every image of path when it is a Mach-O file (thin or universal) or
 * a .dSYM bundle directory, staging each into st (ix_stage.h).  Returns 1
 * when path is neither (the caller goes on with ELF), else 0 or a negative
 * code with "PATH: reason" in o->errbuf.  Touches no catalog. */
IX_HIDDEN int ix_macho_stage(ix_stager *st, const char *path, const ix_opts *o);

#endif /* SYMDB_IX_MACHO_H */
