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

/* The section called name, as BFD sees the file: 0 with *out set,
 * -ENOENT when there is none (or it is one BFD makes no section of: the
 * symbol table, its string tables), -ENOEXEC when path is not a readable
 * ELF file. */
struct cli_a2l_section {
	uint64_t addr, size;
	int alloc;       /* SHF_ALLOC: GNU addr2line looks nothing up in others */
	int relocatable; /* the file is ET_REL */
};
CLI_HIDDEN int cli_a2l_section(const char *path, const char *name, struct cli_a2l_section *out);

/* The allocated sections (SHF_ALLOC, non-empty) of path, where GNU
 * addr2line looks for an address: *out (malloc'd, free it) and *n; 0, or
 * -ENOEXEC / -ENOMEM. */
struct cli_a2l_range {
	uint64_t start, size;
};
CLI_HIDDEN int cli_a2l_alloc_sections(const char *path, struct cli_a2l_range **out, size_t *n);

/* A symbol table read into memory: .symtab, else .dynsym (as BFD's
 * canonical table, in file order without the null entry). */
struct cli_a2l_syms {
	char *syms, *strs;
	uint64_t nsyms, entsize, strs_size;
	int is64, be;
};

/* Load path's table: 0, or -ENOEXEC (not a readable ELF file) / -ENOENT
 * (no symbol table); t is then empty, and cli_a2l_symbol finds nothing. */
CLI_HIDDEN int cli_a2l_syms_load(const char *path, struct cli_a2l_syms *t);
/* The value of the first symbol called name[0..len): 0, or -ENOENT. */
CLI_HIDDEN int cli_a2l_symbol(const struct cli_a2l_syms *t, const char *name, size_t len,
                              uint64_t *value);
CLI_HIDDEN void cli_a2l_syms_free(struct cli_a2l_syms *t); /* NULL-safe contents */

#endif /* SYMDB_CLI_ADDR2LINE_ELF_H */
