/* SPDX-License-Identifier: MIT */
/*
 * cli_addr2line_elf.h - section and symbol look-ups by name in an ELF file,
 * for addr2line's -j and symbol-name addresses (cli_addr2line_elf.c).
 */
#ifndef SYMDB_CLI_ADDR2LINE_ELF_H
#define SYMDB_CLI_ADDR2LINE_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "cli_util.h"

/* The section called name: 0 with its address and size, -ENOENT when
 * there is none, -ENOEXEC when path is not a readable ELF file. */
CLI_HIDDEN int cli_a2l_section(const char *path, const char *name, uint64_t *vma,
                               uint64_t *size);

/* The value of the first symbol called name[0..len) in .symtab (in .dynsym
 * when there is no .symtab): 0, -ENOENT, or -ENOEXEC as above. */
CLI_HIDDEN int cli_a2l_symbol(const char *path, const char *name, size_t len, uint64_t *value);

#endif /* SYMDB_CLI_ADDR2LINE_ELF_H */
