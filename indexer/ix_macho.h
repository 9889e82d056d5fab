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

/* Index every image of the file open at fd (named path) when it is a Mach-O
 * file (thin or universal), staging each into st (ix_stage.h), with the
 * DWARF of o->companion (its BINARY.dSYM file) for slices that have none.
 * Returns 1 when it is not Mach-O (the caller goes on with ELF), else 0 or a
 * negative code with "PATH: reason" in o->errbuf.  Touches no catalog. */
IX_HIDDEN int ix_macho_stage(ix_stager *st, int fd, const char *path, const ix_opts *o);

/* Index every file of a .dSYM bundle: the n DWARF files the builder opened
 * in Contents/Resources/DWARF/, in name order. */
IX_HIDDEN int ix_macho_stage_dsym(ix_stager *st, const symdb_indexer_file *in, unsigned n,
                                  const ix_opts *o);

#endif /* SYMDB_IX_MACHO_H */
