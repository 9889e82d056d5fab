/* SPDX-License-Identifier: MIT */
/*
 * format_symsrc.h - which symbol table llvm-symbolizer-14 reads from an ELF
 * file (SPEC §7.2 "Which symbols": the first SHT_SYMTAB with an entry
 * besides the null symbol, else the first such SHT_DYNSYM), judged from
 * the section headers alone.  A stripped binary and its separate debug file
 * share one build-id and so one index; the indexer stores the table of each
 * (SPEC §7.2.2), and the reader judges the file a request names to pick the
 * one llvm-symbolizer-14 would read from that file.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_SYMSRC_H
#define SYMDB_FORMAT_SYMSRC_H

#include <stdint.h>

#include "format_header.h"

/* FMT_BI_SYMSRC_SYMTAB, FMT_BI_SYMSRC_DYNSYM, or FMT_BI_SYMSRC_NONE (no
 * symbol table, not ELF, or unreadable) for the ELF file open on fd (size
 * bytes), read with pread (the file offset does not move).  Never fails. */
FMT_HIDDEN unsigned fmt_elf_symbol_source(int fd, uint64_t size);

#endif /* SYMDB_FORMAT_SYMSRC_H */
