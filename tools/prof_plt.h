/* SPDX-License-Identifier: MIT */
/*
 * prof_plt.h - PLT stub names ("puts@plt") of an x86-64 ELF file, as perf
 * names them, for `symdb perf` (prof_plt.c).  Internal to the CLI.
 */
#ifndef SYMDB_PROF_PLT_H
#define SYMDB_PROF_PLT_H

#include <stddef.h>
#include <stdint.h>

struct prof_plt {
	uint64_t start; /* vaddr of the first callable entry (16 bytes each) */
	char **names;   /* names[i]: entry i's "SYM@plt", or NULL */
	size_t n;
};

/* Reads path's .rela.plt and .plt/.plt.sec: 0, or -ENOENT (no PLT names:
 * not an x86-64 ELF file, no PLT) / -errno of open(2); p is then empty. */
int prof_plt_load(const char *path, struct prof_plt *p);
/* The stub at vaddr, or NULL. */
const char *prof_plt_name(const struct prof_plt *p, uint64_t vaddr);
void prof_plt_free(struct prof_plt *p); /* p stays usable (empty) */

#endif /* SYMDB_PROF_PLT_H */
