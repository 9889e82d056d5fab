/* SPDX-License-Identifier: MIT */
/*
 * cli_addr2line_elf.c - the two facts GNU addr2line reads from the file
 * itself rather than from its debug information: where a section named by
 * -j lies, and the value of a symbol named on an input line (binutils 2.39+
 * accept "main" or "main+0x10" as an address).  The index has neither (it
 * keeps no section names and looks symbols up by address only), so they
 * are read here from the ELF section headers and .symtab (else .dynsym),
 * with pread and bounds checks: the file may be anything.
 */
#define _POSIX_C_SOURCE 200809L
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_addr2line_elf.h"

struct elf_file {
	int fd;
	uint64_t size;
	int is64, swap; /* swap: big-endian fields */
	uint64_t shoff;
	unsigned shnum, shentsize, shstrndx;
};

/* A field of n bytes at p, in the file's byte order. */
static uint64_t field(const unsigned char *p, int n, int be)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

static int read_at(const struct elf_file *e, uint64_t off, void *buf, size_t n)
{
	if (off > e->size || n > e->size - off)
		return -1;
	return pread(e->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static int elf_open(const char *path, struct elf_file *e)
{
	unsigned char h[64];
	struct stat st;
	memset(e, 0, sizeof(*e));
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -1;
	if (fstat(e->fd, &st) < 0 || (e->size = (uint64_t)st.st_size, read_at(e, 0, h, 64)) < 0 ||
	    memcmp(h, ELFMAG, SELFMAG) != 0 || (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64))
		goto bad;
	e->is64 = h[EI_CLASS] == ELFCLASS64;
	e->swap = h[EI_DATA] == ELFDATA2MSB;
	e->shoff = e->is64 ? field(h + 40, 8, e->swap) : field(h + 32, 4, e->swap);
	e->shentsize = (unsigned)field(h + (e->is64 ? 58 : 46), 2, e->swap);
	e->shnum = (unsigned)field(h + (e->is64 ? 60 : 48), 2, e->swap);
	e->shstrndx = (unsigned)field(h + (e->is64 ? 62 : 50), 2, e->swap);
	if (e->shentsize < (e->is64 ? 64u : 40u) || e->shstrndx >= e->shnum)
		goto bad;
	return 0;
bad:
	close(e->fd);
	e->fd = -1;
	return -1;
}

struct shdr {
	uint32_t name, type, link;
	uint64_t addr, offset, size, entsize;
};

static int read_shdr(const struct elf_file *e, unsigned i, struct shdr *s)
{
	unsigned char b[64];
	if (read_at(e, e->shoff + (uint64_t)i * e->shentsize, b, e->is64 ? 64 : 40) < 0)
		return -1;
	int w = e->is64 ? 8 : 4;
	s->name = (uint32_t)field(b, 4, e->swap);
	s->type = (uint32_t)field(b + 4, 4, e->swap);
	s->addr = field(b + (e->is64 ? 16 : 12), w, e->swap);
	s->offset = field(b + (e->is64 ? 24 : 16), w, e->swap);
	s->size = field(b + (e->is64 ? 32 : 20), w, e->swap);
	s->link = (uint32_t)field(b + (e->is64 ? 40 : 24), 4, e->swap);
	s->entsize = field(b + (e->is64 ? 56 : 36), w, e->swap);
	return 0;
}

/* Whether the NUL-terminated string at strtab offset off equals name. */
static int name_is(const struct elf_file *e, const struct shdr *strtab, uint32_t off,
                   const char *name, size_t len)
{
	char buf[256];
	if (len + 1 > sizeof(buf) || off >= strtab->size || len + 1 > strtab->size - off)
		return 0;
	if (read_at(e, strtab->offset + off, buf, len + 1) < 0)
		return 0;
	return memcmp(buf, name, len) == 0 && buf[len] == '\0';
}

int cli_a2l_section(const char *path, const char *name, uint64_t *vma, uint64_t *size)
{
	struct elf_file e;
	struct shdr strtab, s;
	int rc = -ENOENT;
	if (elf_open(path, &e) < 0)
		return -ENOEXEC;
	if (read_shdr(&e, e.shstrndx, &strtab) == 0)
		for (unsigned i = 1; i < e.shnum; i++)
			if (read_shdr(&e, i, &s) == 0 &&
			    name_is(&e, &strtab, s.name, name, strlen(name))) {
				*vma = s.addr;
				*size = s.size;
				rc = 0;
				break;
			}
	close(e.fd);
	return rc;
}

/* The first symbol of table tab named name[0..len), as BFD's canonical
 * table lists them (in file order, without the null entry). */
static int find_in_table(const struct elf_file *e, const struct shdr *tab, const char *name,
                         size_t len, uint64_t *value)
{
	struct shdr strtab;
	size_t esz = e->is64 ? 24 : 16;
	unsigned char b[24];
	if (tab->entsize < esz || read_shdr(e, tab->link, &strtab) < 0)
		return -1;
	uint64_t n = tab->size / tab->entsize;
	for (uint64_t i = 1; i < n; i++) {
		if (read_at(e, tab->offset + i * tab->entsize, b, esz) < 0)
			return -1;
		uint32_t nm = (uint32_t)field(b, 4, e->swap);
		if (!name_is(e, &strtab, nm, name, len))
			continue;
		*value = e->is64 ? field(b + 8, 8, e->swap) : field(b + 4, 4, e->swap);
		return 0;
	}
	return -1;
}

int cli_a2l_symbol(const char *path, const char *name, size_t len, uint64_t *value)
{
	struct elf_file e;
	struct shdr s, dyn = { 0 };
	int rc = -ENOENT, have_dyn = 0, have_sym = 0;
	if (elf_open(path, &e) < 0)
		return -ENOEXEC;
	for (unsigned i = 1; i < e.shnum && !have_sym; i++) {
		if (read_shdr(&e, i, &s) < 0 || e.shnum <= 1)
			break;
		if (s.type == SHT_SYMTAB) {
			have_sym = 1;
			if (find_in_table(&e, &s, name, len, value) == 0)
				rc = 0;
		} else if (s.type == SHT_DYNSYM && !have_dyn) {
			have_dyn = 1;
			dyn = s;
		}
	}
	if (!have_sym && have_dyn && find_in_table(&e, &dyn, name, len, value) == 0)
		rc = 0;
	close(e.fd);
	return rc;
}
