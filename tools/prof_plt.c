/* SPDX-License-Identifier: MIT */
/*
 * prof_plt.c - names of PLT stubs, "puts@plt", as perf synthesizes them
 * (perf's dso__synthesize_plt_symbols) for `symdb perf`.  A sample in a
 * PLT stub is a call on its way to another module; no symbol table names
 * the stub (symdb, like llvm-symbolizer, answers with the symbol before it,
 * often _init), so perf's convention is followed: entry i of .plt.sec, or
 * of .plt after its 16-byte header, calls the function of .rela.plt entry
 * i.  x86-64 ELF only (the other machines' PLT layouts differ); any other
 * file has no PLT names.
 */
#define _POSIX_C_SOURCE 200809L
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_plt.h"

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/* A section's bytes (malloc'd), bounded so that a hostile header costs little. */
static void *read_section(int fd, const Elf64_Shdr *s, size_t max)
{
	if (s->sh_type == SHT_NOBITS || s->sh_size == 0 || s->sh_size > max)
		return NULL;
	void *p = malloc(s->sh_size);
	if (p && read_at(fd, p, s->sh_size, s->sh_offset) < 0) {
		free(p);
		p = NULL;
	}
	return p;
}

static int load_names(struct prof_plt *p, int fd, const Elf64_Shdr *sh, size_t nsh,
                      const Elf64_Shdr *rela)
{
	if (rela->sh_link >= nsh || rela->sh_entsize != sizeof(Elf64_Rela))
		return -1;
	const Elf64_Shdr *dynsym = &sh[rela->sh_link];
	if (dynsym->sh_link >= nsh || dynsym->sh_entsize != sizeof(Elf64_Sym))
		return -1;
	Elf64_Rela *r = read_section(fd, rela, 64u << 20);
	Elf64_Sym *sym = read_section(fd, dynsym, 64u << 20);
	char *str = read_section(fd, &sh[dynsym->sh_link], 64u << 20);
	size_t nr = rela->sh_size / sizeof *r, nsym = dynsym->sh_size / sizeof *sym;
	size_t strsz = sh[dynsym->sh_link].sh_size;
	p->names = r && sym && str ? calloc(nr, sizeof *p->names) : NULL;
	for (size_t i = 0; p->names && i < nr; i++) {
		size_t k = ELF64_R_SYM(r[i].r_info);
		uint32_t off = k && k < nsym ? sym[k].st_name : 0;
		if (!off || off >= strsz || !memchr(str + off, 0, strsz - off))
			continue;
		size_t len = strlen(str + off);
		if ((p->names[i] = malloc(len + sizeof "@plt")) != NULL) {
			memcpy(p->names[i], str + off, len);
			memcpy(p->names[i] + len, "@plt", sizeof "@plt");
		}
	}
	if (p->names)
		p->n = nr;
	free(r);
	free(sym);
	free(str);
	return p->names ? 0 : -1;
}

static int load_sections(struct prof_plt *p, int fd, const Elf64_Ehdr *eh)
{
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 || eh->e_shnum > 4096 ||
	    eh->e_shstrndx >= eh->e_shnum)
		return -1;
	Elf64_Shdr *sh = malloc(eh->e_shnum * sizeof *sh);
	if (!sh || read_at(fd, sh, eh->e_shnum * sizeof *sh, eh->e_shoff) < 0) {
		free(sh);
		return -1;
	}
	char *names = read_section(fd, &sh[eh->e_shstrndx], 1u << 20);
	size_t nsz = sh[eh->e_shstrndx].sh_size;
	const Elf64_Shdr *plt = NULL, *plt_sec = NULL, *rela = NULL;
	for (size_t i = 0; names && i < eh->e_shnum; i++) {
		const char *n = sh[i].sh_name < nsz ? names + sh[i].sh_name : "";
		if (!memchr(n, 0, nsz - (size_t)(n - names)))
			continue;
		if (!strcmp(n, ".plt"))
			plt = &sh[i];
		else if (!strcmp(n, ".plt.sec"))
			plt_sec = &sh[i];
		else if (!strcmp(n, ".rela.plt"))
			rela = &sh[i];
	}
	int rc = -1;
	if (rela && (plt_sec || plt) && load_names(p, fd, sh, eh->e_shnum, rela) == 0) {
		/* With IBT the callable entries are in .plt.sec, without a header. */
		p->start = plt_sec ? plt_sec->sh_addr : plt->sh_addr + 16;
		rc = 0;
	}
	free(names);
	free(sh);
	return rc;
}

int prof_plt_load(const char *path, struct prof_plt *p)
{
	memset(p, 0, sizeof *p);
	/* The path comes from the profile: O_NONBLOCK so that a FIFO there
	 * opens at once instead of waiting for a writer, and only a regular
	 * file is read (a device such as /dev/zero never ends). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	Elf64_Ehdr eh;
	int rc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read_at(fd, &eh, sizeof eh, 0) == 0 && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	                 eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_ident[EI_DATA] == ELFDATA2LSB &&
	                 eh.e_machine == EM_X86_64
	                 ? load_sections(p, fd, &eh)
	                 : -1;
	close(fd);
	if (rc < 0)
		prof_plt_free(p);
	return rc < 0 ? -ENOENT : 0;
}

const char *prof_plt_name(const struct prof_plt *p, uint64_t vaddr)
{
	if (vaddr < p->start || (vaddr - p->start) / 16 >= p->n)
		return NULL;
	return p->names[(vaddr - p->start) / 16];
}

void prof_plt_free(struct prof_plt *p)
{
	for (size_t i = 0; p->names && i < p->n; i++)
		free(p->names[i]);
	free(p->names);
	memset(p, 0, sizeof *p);
}
