/* SPDX-License-Identifier: MIT */
/*
 * ix_reloc.h - relocatable (ET_REL) inputs: the relocations applied to the
 * debug sections, and the sections llvm-symbolizer 14 attributes addresses
 * to (SPEC §7.8).
 *
 * In an object file every section starts at sh_addr 0, so addresses of
 * different sections coincide.  llvm-symbolizer answers an address from
 * the first executable section, in section-header order, whose
 * [sh_addr, sh_addr + sh_size) holds it (SymbolizableObjectFile::
 * getModuleSectionIndexForAddress) and reads only the line sequences whose
 * DW_LNE_set_address was relocated against that section (DWARFDebugLine::
 * LineTable::lookupAddress, falling back to sequences with no relocation).
 * Symbols, DIE ranges and unit ranges ignore sections there, so only the
 * line table needs to know them.
 */
#ifndef SYMDB_IX_RELOC_H
#define SYMDB_IX_RELOC_H

#include <stddef.h>
#include <stdint.h>

#include "indexer_internal.h"

/* LLVM's object::SectionedAddress::UndefSection, narrowed. */
#define IX_SEC_UNDEF UINT32_MAX

/* An address range claimed by one executable section: the part of it no
 * earlier executable section covers. */
typedef struct ix_sec_claim {
	uint64_t lo, hi;
	uint32_t sec;
} ix_sec_claim;

/* A relocated offset in .debug_line and the section of the relocation's
 * symbol (IX_SEC_UNDEF: no symbol, or one in no section). */
typedef struct ix_sec_at {
	uint64_t off;
	uint32_t sec;
	size_t order; /* position among the relocations, for ties */
} ix_sec_at;

typedef struct ix_reloc_info {
	ix_sec_claim *claims; /* disjoint, ascending; from the binary's sections */
	size_t nclaims;
	ix_sec_at *line_at;   /* ascending off, unique */
	size_t nline_at;
	uint64_t applied, skipped; /* relocations written / of unsupported types */
} ix_reloc_info;

struct ix_sections;
typedef struct Elf Elf;

/* For an ET_REL file whose debug sections s holds: applies every
 * relocation LLVM 14 applies to them (the x86_64, AArch64, i386, ARM,
 * PowerPC and RISC-V types its RelocationResolver supports, to the
 * sections DWARFObjInMemory relocates), records the .debug_line relocation targets and the claims
 * of its executable sections, and sets s->reloc.  Returns 0, or -1 with a
 * reason in why (out of memory, a relocation section that lies outside the
 * file). */
IX_HIDDEN int ix_reloc_apply(struct ix_sections *s, Elf *elf, char *why, size_t why_sz);

/* The debug file's DWARF answers for the binary's sections: use the
 * claims of `bin` (section indexes of a --only-keep-debug file are the
 * binary's).  Returns 0 or -1 without memory. */
IX_HIDDEN int ix_reloc_claims_from(struct ix_sections *dbg, const struct ix_sections *bin);

IX_HIDDEN void ix_reloc_free(ix_reloc_info *r);

/* The section of the relocation at .debug_line offset off, or IX_SEC_UNDEF. */
IX_HIDDEN uint32_t ix_reloc_line_sec(const ix_reloc_info *r, uint64_t off);

/* The executable section llvm-symbolizer picks for addr, or IX_SEC_UNDEF. */
IX_HIDDEN uint32_t ix_reloc_owner(const ix_reloc_info *r, uint64_t addr);

#endif /* SYMDB_IX_RELOC_H */
