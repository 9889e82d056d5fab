/* SPDX-License-Identifier: MIT */
/*
 * cli_slice.h - choosing one image of a multi-image input for `symdb query`
 * and `symdb symbolicate`: a universal Mach-O file (one image per
 * architecture), a .dSYM bundle, or llvm-symbolizer's "FILE:ARCH" syntax.
 */
#ifndef SYMDB_CLI_SLICE_H
#define SYMDB_CLI_SLICE_H

#include <stddef.h>

#include "cli_util.h"
#include "symdb.h"
#include "symdb_build.h"

#define CLI_SLICE_UNCHOSEN 2

/*
 * llvm-symbolizer's "FILE:ARCH" (Symbolize.cpp): when what follows obj's
 * last ':' is an architecture name llvm::Triple knows, FILE is copied into
 * file (file_sz bytes) and ARCH returned (a pointer into obj), whatever
 * kind of file FILE is; else NULL (obj is the path).  It wins over
 * --default-arch.
 */
CLI_HIDDEN const char *cli_split_arch(const char *obj, char *file, size_t file_sz);

/*
 * Opens the image of obj selected by arch (NULL: the only image of a thin
 * file or bundle); obj is a path (FILE:ARCH split by the caller: above).
 * Returns 1 when obj is
 * a single ELF image (the caller opens it as before), 0 with *out set, or
 * minus a CLI exit code after reporting the reason on stderr (a universal
 * file the library refuses: its reason, also in llvm_msg).  A universal
 * file whose slice cannot be chosen (no arch, or one it lacks): with
 * llvm_msg, CLI_SLICE_UNCHOSEN and llvm-symbolizer-14's reason there,
 * nothing printed (the caller answers "??" as llvm does); without, symdb's
 * reason naming the choices and -CLI_EXIT_USAGE.
 * first_sight (NULL: the database is only read): a thin Mach-O file is then
 * the caller's too (1: its symbolizer context indexes it on first sight),
 * and a universal file or a .dSYM bundle whose chosen slice is not indexed
 * is built into db with these options (indexer_path, flags), every slice,
 * then opened; so is a universal file whose slice was indexed without
 * DWARF when a dSYM carrying that slice's LC_UUID is beside it now.
 */
CLI_HIDDEN int cli_open_slice(symdb *db, const char *obj, const char *arch,
                              const symdb_open_opts *o, const symdb_build_opts *first_sight,
                              symdb_image **out, char *llvm_msg, size_t llvm_msz);

#endif /* SYMDB_CLI_SLICE_H */
