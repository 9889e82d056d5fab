/* SPDX-License-Identifier: MIT */
/*
 * format_elf.h - the first bytes of an ELF input, judged before anything
 * is parsed: the builder does it before it computes the UUID, the indexer
 * before it hands the file to libelf, and both must say the same.
 */
#ifndef SYMDB_FORMAT_ELF_H
#define SYMDB_FORMAT_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "format_header.h"

/* Bytes fmt_elf_ident reads: e_ident and e_type. */
#define FMT_ELF_IDENT_SIZE 18

/* Judge id[0..n), the first n bytes of a non-empty file: the ELF magic,
 * EI_CLASS, EI_DATA and e_type (ET_EXEC, ET_DYN or ET_REL).  Returns 0 or
 * SYMDB_E_BAD_OBJECT with the reason ("not an ELF file") in why. */
FMT_HIDDEN int fmt_elf_ident(const uint8_t *id, size_t n, char *why, size_t why_sz);

#endif /* SYMDB_FORMAT_ELF_H */
