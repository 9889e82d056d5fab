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

/*
 * Opens the image of obj selected by arch (NULL: the only image, or an error
 * naming the choices).  obj may end in ":ARCH" when no file has that name.
 * Returns 1 when obj is a single ELF image and no arch was asked for (the
 * caller opens it as before), 0 with *out set, or minus a CLI exit code
 * after reporting the reason on stderr.
 */
CLI_HIDDEN int cli_open_slice(symdb *db, const char *obj, const char *arch,
                              const symdb_open_opts *o, symdb_image **out);

#endif /* SYMDB_CLI_SLICE_H */
