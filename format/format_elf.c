/* SPDX-License-Identifier: MIT */
/*
 * format_elf.c - judge an input by its first ELF bytes (format_elf.h).
 * The constants are the ELF specification's, spelled here so that format/
 * needs no <elf.h> of a particular libc.
 */
#include "format_elf.h"

#include <stdio.h>
#include <string.h>

#include "fmt_macho.h"
#include "symdb_errors.h"

#define ELF_EI_CLASS 4
#define ELF_EI_DATA 5
#define ELF_CLASS32 1
#define ELF_CLASS64 2
#define ELF_DATA2LSB 1
#define ELF_DATA2MSB 2
#define ELF_ET_REL 1
#define ELF_ET_EXEC 2
#define ELF_ET_DYN 3
#define ELF_ET_CORE 4

static const char *elf_type_name(unsigned t)
{
	switch (t) {
	case 0: return "ET_NONE";
	case ELF_ET_CORE: return "ET_CORE (core dump)";
	default: return "unknown e_type";
	}
}

int fmt_elf_ident(const uint8_t *id, size_t n, char *why, size_t why_sz)
{
	unsigned type;

	if (n < 4 || memcmp(id, "\177ELF", 4) != 0) {
		const char *mo = fmt_mo_misfit(id, n);
		return fmt_err(why, why_sz, SYMDB_E_BAD_OBJECT, "%s", mo ? mo : "not an ELF file");
	}
	if (n < FMT_ELF_IDENT_SIZE)
		return fmt_err(why, why_sz, SYMDB_E_BAD_OBJECT, "truncated ELF header");
	if (id[ELF_EI_CLASS] != ELF_CLASS32 && id[ELF_EI_CLASS] != ELF_CLASS64)
		return fmt_err(why, why_sz, SYMDB_E_BAD_OBJECT, "bad EI_CLASS %u",
		               (unsigned)id[ELF_EI_CLASS]);
	if (id[ELF_EI_DATA] != ELF_DATA2LSB && id[ELF_EI_DATA] != ELF_DATA2MSB)
		return fmt_err(why, why_sz, SYMDB_E_BAD_OBJECT, "bad EI_DATA %u",
		               (unsigned)id[ELF_EI_DATA]);
	type = id[ELF_EI_DATA] == ELF_DATA2LSB ? (unsigned)(id[16] | id[17] << 8)
	                                       : (unsigned)(id[16] << 8 | id[17]);
	if (type != ELF_ET_EXEC && type != ELF_ET_DYN && type != ELF_ET_REL)
		return fmt_err(why, why_sz, SYMDB_E_BAD_OBJECT,
		               "%s is not supported, only ET_EXEC, ET_DYN and ET_REL",
		               elf_type_name(type));
	return 0;
}
