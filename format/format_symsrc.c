/* SPDX-License-Identifier: MIT */
/*
 * format_symsrc.c - the symbol table llvm-symbolizer-14 reads from an ELF
 * file (SPEC §7.2, §7.2.2), from its section headers.  `strip` leaves a
 * binary with .dynsym only, `objcopy --only-keep-debug` leaves its debug
 * file with the full .symtab (and an SHT_NOBITS .dynsym), so this one fact
 * tells which of a pair's stored tables answers for the file a request
 * names, with no path convention and no guess from the file's name.
 */
#include "format_symsrc.h"

#include <string.h>

#include "format_io.h"

#define ELF_SHT_SYMTAB 2u
#define ELF_SHT_DYNSYM 11u
#define SHDR_CHUNK     64u     /* headers read per pread */
#define MAX_SHDRS      65535u  /* walked at most */

static uint64_t rd16(const uint8_t *p, int le)
{
	return le ? (uint64_t)p[0] | (uint64_t)p[1] << 8 : (uint64_t)p[1] | (uint64_t)p[0] << 8;
}

static uint64_t rd32(const uint8_t *p, int le)
{
	return le ? rd16(p, 1) | rd16(p + 2, 1) << 16 : rd16(p + 2, 0) | rd16(p, 0) << 16;
}

static uint64_t rd64(const uint8_t *p, int le)
{
	return le ? rd32(p, 1) | rd32(p + 4, 1) << 32 : rd32(p + 4, 0) | rd32(p, 0) << 32;
}

/* Entries of the first section of each symbol-table type, as LLVM's
 * computeSymbolSizes sees them (sh_size / the ELF class's Sym size; a
 * SHT_NOBITS table is another type and has none). */
struct first_tables {
	int have_symtab, have_dynsym;
	uint64_t symtab_n, dynsym_n;
};

static void note_shdr(struct first_tables *t, const uint8_t *sh, int is64, int le)
{
	uint64_t type = rd32(sh + 4, le);
	uint64_t size = is64 ? rd64(sh + 32, le) : rd32(sh + 20, le);
	uint64_t n = size / (is64 ? 24u : 16u);

	if (type == ELF_SHT_SYMTAB && !t->have_symtab) {
		t->have_symtab = 1;
		t->symtab_n = n;
	} else if (type == ELF_SHT_DYNSYM && !t->have_dynsym) {
		t->have_dynsym = 1;
		t->dynsym_n = n;
	}
}

unsigned fmt_elf_symbol_source(int fd, uint64_t size)
{
	struct first_tables t = { 0, 0, 0, 0 };
	uint8_t eh[64];
	uint64_t shoff, shnum, entsz, i, j, k;
	int is64, le;

	if (size < 52 || fmt_pread_full(fd, eh, sizeof eh, 0) < 52 || memcmp(eh, "\177ELF", 4))
		return FMT_BI_SYMSRC_NONE;
	is64 = eh[4] == 2;
	le = eh[5] == 1;
	if ((eh[4] != 1 && !is64) || (eh[5] != 1 && eh[5] != 2) || (is64 && size < 64))
		return FMT_BI_SYMSRC_NONE;
	shoff = is64 ? rd64(eh + 0x28, le) : rd32(eh + 0x20, le);
	entsz = rd16(eh + (is64 ? 0x3A : 0x2E), le);
	shnum = rd16(eh + (is64 ? 0x3C : 0x30), le);
	if (shoff == 0 || shoff >= size || entsz != (is64 ? 64u : 40u))
		return FMT_BI_SYMSRC_NONE;
	if (shnum == 0) { /* extended numbering: section 0's sh_size (gABI) */
		uint8_t sz[8];
		ptrdiff_t w = is64 ? 8 : 4;
		if (fmt_pread_full(fd, sz, (size_t)w, shoff + (is64 ? 32 : 20)) != w)
			return FMT_BI_SYMSRC_NONE;
		shnum = is64 ? rd64(sz, le) : rd32(sz, le);
	}
	if (shnum > MAX_SHDRS)
		shnum = MAX_SHDRS;
	for (i = 1; i < shnum && !(t.have_symtab && t.have_dynsym); i += k) {
		uint8_t buf[SHDR_CHUNK * 64];
		k = shnum - i < SHDR_CHUNK ? shnum - i : SHDR_CHUNK;
		if (fmt_pread_full(fd, buf, (size_t)(k * entsz), shoff + i * entsz) !=
		    (ptrdiff_t)(k * entsz))
			return FMT_BI_SYMSRC_NONE;
		for (j = 0; j < k; j++)
			note_shdr(&t, buf + j * entsz, is64, le);
	}
	if (t.symtab_n > 1)
		return FMT_BI_SYMSRC_SYMTAB;
	return t.dynsym_n > 1 ? FMT_BI_SYMSRC_DYNSYM : FMT_BI_SYMSRC_NONE;
}
