/* SPDX-License-Identifier: MIT */
/*
 * live_kernel.h - what the files of the kernel source share:
 *   live_kernel.c       the handle, the kallsyms table and its lookup
 *   live_kernel_find.c  the notes' build-id, the vmlinux, modules and .ko files
 *   live_kernel_sym.c   batches: DWARF where an image is found, kallsyms otherwise
 */
#ifndef SYMDB_LIVE_KERNEL_H
#define SYMDB_LIVE_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "reader_internal.h"
#include "symdb.h"

/* One kallsyms symbol: 24 bytes, so the table of a distribution kernel
 * (~200,000 kept symbols) stays under 5 MB and a search touches few lines. */
struct lk_sym {
	uint64_t addr, end;   /* [addr, end): end inferred as perf does */
	uint32_t name;        /* offset into names */
	uint16_t mod;         /* 0 = the kernel image, else modules[mod - 1] */
	char type;            /* the kallsyms type letter */
	char pad_;
};

/* A module: /proc/modules, its .text from sysfs, its file when found. */
struct lk_module {
	char *name;           /* as kallsyms spells it, without brackets */
	uint64_t text, text_end; /* .text's load address; end = next section above
	                            it (UINT64_MAX when unknown); text 0 = unknown */
	char *file;           /* the .ko answering with DWARF, or NULL */
};

struct symdb_kernel {
	struct lk_sym *syms;
	size_t nsyms, skipped;
	char *names;          /* NUL-terminated names, back to back */
	size_t names_len;
	struct lk_module *mods; /* index = lk_sym.mod - 1 */
	size_t nmods, nmods_listed, nmod_files;
	char *vmlinux;        /* NULL = none */
	uint64_t kaslr;
	symdb_uuid build_id;
	char no_vmlinux[512];
	char *release;
	uint64_t k_stext, k_text; /* _stext and _text as kallsyms has them (0 = absent),
	                             whatever symbol the table keeps at their address */
	/* symdb_kernel_symbolize()'s buffers, reused between calls */
	symdb_request *req;
	symdb_symbolized *res;
	uint32_t *req_of;     /* address index -> request index, or UINT32_MAX */
	const struct lk_sym **found; /* address index -> its kallsyms symbol, or NULL */
	size_t cap;
};

#define RD_OPTS_LAST_symdb_kernel_opts debug_dirs

/* Options copied with their defaults applied (live_kernel.c). */
struct lk_opts {
	const char *kallsyms, *notes, *modules, *sysfs_module, *release, *root;
	const char *const *debug_dirs;
	unsigned flags;
	char *eb;
	size_t ebsz;
};

/* live_kernel.c: the module index (1-based) of name, added when new; 0 on OOM. */
RD_HIDDEN uint16_t lk_module_intern(symdb_kernel *k, const char *name, size_t len);
/* The symbol covering addr, or NULL. */
RD_HIDDEN const struct lk_sym *lk_find(const symdb_kernel *k, uint64_t addr);

/* live_kernel_find.c: the vmlinux and the modules; never fails for a missing
 * file (k->no_vmlinux says why there is none); -ENOMEM only. */
RD_HIDDEN int lk_find_vmlinux(symdb_kernel *k, const struct lk_opts *o);
RD_HIDDEN int lk_find_modules(symdb_kernel *k, const struct lk_opts *o);
/* Parse ELF notes (the bytes of /sys/kernel/notes) for the GNU build-id:
 * 0, or SYMDB_E_NOT_FOUND. */
RD_HIDDEN int lk_notes_build_id(const unsigned char *p, size_t n, symdb_uuid *out);

#endif /* SYMDB_LIVE_KERNEL_H */
