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
	uint32_t name, type, link, info;
	uint64_t flags, addr, offset, size, entsize;
};

static int read_shdr(const struct elf_file *e, unsigned i, struct shdr *s)
{
	unsigned char b[64];
	if (read_at(e, e->shoff + (uint64_t)i * e->shentsize, b, e->is64 ? 64 : 40) < 0)
		return -1;
	int w = e->is64 ? 8 : 4;
	s->name = (uint32_t)field(b, 4, e->swap);
	s->type = (uint32_t)field(b + 4, 4, e->swap);
	s->flags = field(b + 8, w, e->swap);
	s->addr = field(b + (e->is64 ? 16 : 12), w, e->swap);
	s->offset = field(b + (e->is64 ? 24 : 16), w, e->swap);
	s->size = field(b + (e->is64 ? 32 : 20), w, e->swap);
	s->link = (uint32_t)field(b + (e->is64 ? 40 : 24), 4, e->swap);
	s->info = (uint32_t)field(b + (e->is64 ? 44 : 28), 4, e->swap);
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

/* Whether BFD makes a section of header i: not of the symbol table, its
 * index and string tables, the section names' table, nor of a relocation
 * section of the main symbol table that applies to another section
 * (ld --emit-relocs' .rela.text; .rela.dyn and .rela.plt, of .dynsym, are
 * sections): binutils' "cannot find section .symtab". */
static int bfd_section(const struct elf_file *e, unsigned i, const struct shdr *s)
{
	struct shdr o;
	if (s->type == SHT_SYMTAB || s->type == SHT_SYMTAB_SHNDX || i == e->shstrndx)
		return 0;
	if (s->type != SHT_STRTAB && s->type != SHT_REL && s->type != SHT_RELA)
		return 1;
	if ((s->type == SHT_REL || s->type == SHT_RELA) && s->info == 0)
		return 1;
	for (unsigned k = 1; k < e->shnum; k++)
		if (read_shdr(e, k, &o) == 0 && o.type == SHT_SYMTAB && (s->type == SHT_STRTAB ? o.link == i : s->link == k))
			return 0;
	return 1;
}

int cli_a2l_section(const char *path, const char *name, struct cli_a2l_section *out)
{
	struct elf_file e;
	struct shdr strtab, s;
	unsigned char h[18];
	int rc = -ENOENT;
	if (elf_open(path, &e) < 0)
		return -ENOEXEC;
	memset(out, 0, sizeof(*out));
	if (read_at(&e, 0, h, sizeof h) == 0)
		out->relocatable = field(h + 16, 2, e.swap) == ET_REL;
	if (read_shdr(&e, e.shstrndx, &strtab) == 0)
		for (unsigned i = 1; i < e.shnum; i++)
			if (read_shdr(&e, i, &s) == 0 &&
			    name_is(&e, &strtab, s.name, name, strlen(name))) {
				if (!bfd_section(&e, i, &s))
					break;
				out->addr = s.addr;
				out->size = s.size;
				out->alloc = (s.flags & SHF_ALLOC) != 0;
				rc = 0;
				break;
			}
	close(e.fd);
	return rc;
}

int cli_a2l_alloc_sections(const char *path, struct cli_a2l_range **out, size_t *n)
{
	struct elf_file e;
	struct shdr s;
	*out = NULL;
	*n = 0;
	if (elf_open(path, &e) < 0)
		return -ENOEXEC;
	struct cli_a2l_range *r = calloc(e.shnum ? e.shnum : 1, sizeof(*r));
	if (!r) {
		close(e.fd);
		return -ENOMEM;
	}
	size_t k = 0;
	for (unsigned i = 1; i < e.shnum; i++) {
		if (read_shdr(&e, i, &s) < 0)
			break;
		uint64_t flags = s.flags;
		if ((flags & SHF_ALLOC) && s.size) {
			r[k].start = s.addr;
			r[k].size = s.size;
			k++;
		}
	}
	close(e.fd);
	*out = r;
	*n = k;
	return 0;
}

/* Read a section's bytes into a new buffer (NULL on failure). */
static char *read_section(const struct elf_file *e, const struct shdr *s)
{
	if (s->size > e->size || s->size == 0)
		return NULL;
	char *p = malloc(s->size + 1);
	if (p && read_at(e, s->offset, p, s->size) < 0) {
		free(p);
		return NULL;
	}
	if (p)
		p[s->size] = '\0'; /* a last name without its NUL still ends */
	return p;
}

static int load_table(const struct elf_file *e, const struct shdr *tab, struct cli_a2l_syms *t)
{
	struct shdr strtab;
	size_t esz = e->is64 ? 24 : 16;
	if (tab->entsize < esz || read_shdr(e, tab->link, &strtab) < 0)
		return -1;
	t->syms = read_section(e, tab);
	t->strs = read_section(e, &strtab);
	if (!t->syms || !t->strs)
		return -1;
	t->nsyms = tab->size / tab->entsize;
	t->entsize = tab->entsize;
	t->strs_size = strtab.size;
	t->is64 = e->is64;
	t->be = e->swap;
	return 0;
}

int cli_a2l_syms_load(const char *path, struct cli_a2l_syms *t)
{
	struct elf_file e;
	struct shdr s, dyn = { 0 };
	int have_dyn = 0, rc = -ENOENT;
	memset(t, 0, sizeof(*t));
	if (elf_open(path, &e) < 0)
		return -ENOEXEC;
	for (unsigned i = 1; i < e.shnum; i++) {
		if (read_shdr(&e, i, &s) < 0)
			break;
		if (s.type == SHT_SYMTAB) {
			rc = load_table(&e, &s, t);
			break;
		}
		if (s.type == SHT_DYNSYM && !have_dyn) {
			have_dyn = 1;
			dyn = s;
		}
	}
	if (rc == -ENOENT && have_dyn)
		rc = load_table(&e, &dyn, t);
	close(e.fd);
	if (rc < 0)
		cli_a2l_syms_free(t);
	return rc < 0 ? -ENOENT : 0;
}

int cli_a2l_symbol(const struct cli_a2l_syms *t, const char *name, size_t len, uint64_t *value)
{
	const unsigned char *p = (const unsigned char *)t->syms;
	for (uint64_t i = 1; i < t->nsyms; i++) {
		const unsigned char *sym = p + i * t->entsize;
		uint64_t nm = field(sym, 4, t->be);
		if (nm >= t->strs_size || t->strs_size - nm < len + 1 ||
		    memcmp(t->strs + nm, name, len) != 0 || t->strs[nm + len] != '\0')
			continue;
		*value = t->is64 ? field(sym + 8, 8, t->be) : field(sym + 4, 4, t->be);
		return 0;
	}
	return -ENOENT;
}

void cli_a2l_syms_free(struct cli_a2l_syms *t)
{
	free(t->syms);
	free(t->strs);
	memset(t, 0, sizeof(*t));
}
