/* SPDX-License-Identifier: MIT */
/*
 * cli_atos.h - the `--output-style=atos` printer of `symdb query` and the
 * frame printer of `symdb symbolicate`: one line per address as Apple's
 * `atos -o DWARF_FILE -arch ARCH -l LOAD ADDR` prints it.
 */
#ifndef SYMDB_CLI_ATOS_H
#define SYMDB_CLI_ATOS_H

#include <stddef.h>
#include <stdint.h>

#include "cli_demangle.h"
#include "cli_util.h"
#include "symdb.h"

/*
 * Writes what atos prints for one address into o:
 *   "func (in image) (file:line)"  when the line table knows the address;
 *   "func (in image) + offset"     from the symbol table (decimal offset);
 *   "0xADDR"                       (the address as given) when nothing is known.
 * func drops one leading '_' (already done by the indexer for Mach-O symbol
 * names) and is demangled.  Without inlines only the outermost frame is
 * printed, at its own location (the call site of the first inlined call);
 * with inlines (atos -i) every frame, innermost first, one per line.
 * given is the address as the user wrote it, vaddr the file address.
 */
CLI_HIDDEN void cli_atos_print(struct cli_out *o, struct cli_demangler *dm, const char *image,
                               uint64_t given, uint64_t vaddr, const symdb_result *r,
                               const symdb_frame *frames, int inlines);

/* The text of one frame without the newline (for symbolicate's columns):
 * "func (in image) (file:line)" or "func (in image) + off"; 0 when unknown. */
CLI_HIDDEN int cli_atos_frame(struct cli_out *o, struct cli_demangler *dm, const char *image,
                              uint64_t vaddr, const symdb_result *r, const symdb_frame *f,
                              size_t i);

#endif /* SYMDB_CLI_ATOS_H */
