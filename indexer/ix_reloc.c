/* SPDX-License-Identifier: MIT */
/*
 * ix_reloc.c - relocations of an ET_REL file's debug sections, and the
 * executable sections llvm-symbolizer 14 attributes addresses to
 * (ix_reloc.h, SPEC §7.8).
 *
 * libdwarf 20210528 applies relocations only when it reads the ELF file
 * itself (its elf reader's relocate method, for a few x86_64, i386 and
 * AArch64 types); symdb serves it already-inflated sections through
 * dwarf_object_init_b with no relocate method, and parses line tables and
 * range lists itself, so nothing would be applied.  This file applies what
 * LLVM 14's DWARFObjInMemory applies, with the values its
 * RelocationResolver computes:
 *  - to .debug_info, .debug_line, .debug_ranges, .debug_rnglists,
 *    .debug_addr and .debug_str_offsets (never .debug_aranges, .debug_str
 *    or .debug_abbrev: LLVM keeps those as plain bytes, so an object's
 *    .debug_aranges says address 0 and unit offset 0 there too);
 *  - S + A for absolute types, S + A - P for PC-relative ones, RISC-V's
 *    ADD/SUB pairs on the field as the previous relocation left it, where
 *    S is the symbol's st_value plus its section's sh_addr (0 for an
 *    undefined or absent symbol) and A is r_addend (SHT_RELA) or the bytes
 *    in place (SHT_REL);
 *  - types LLVM cannot resolve are left alone (it warns and reads the raw
 *    bytes).
 * Relocations are written into a private copy of each section; the file is
 * never changed.  Everything read from the file is bounds-checked: a
 * relocation whose offset, symbol or field lies outside its section is
 * skipped like an unsupported type.
 */
#include "ix_reloc.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_internal.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#ifndef R_AARCH64_ABS64
#define R_AARCH64_ABS64 257
#define R_AARCH64_ABS32 258
#define R_AARCH64_PREL64 260
#define R_AARCH64_PREL32 261
#endif

/* The sections LLVM 14 relocates (DWARFObjInMemory: mapNameToDWARFSection
 * plus debug_info) that symdb loads. */
static int relocated(const char *name)
{
	static const char *const names[] = {
		".debug_info", ".debug_line", ".debug_ranges", ".debug_rnglists",
		".debug_addr", ".debug_str_offsets",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

/* What a relocation computes from S (symbol), A (addend), P (offset) and
 * L (the field as it stands: RISC-V pairs two relocations on one field). */
enum rop {
	OP_ABS,   /* S + A */
	OP_PCREL, /* S + A - P */
	OP_ADD,   /* L + (S + A) */
	OP_SUB,   /* L - (S + A) */
	OP_SET6,  /* low 6 bits of S + A, L's top 2 */
	OP_SUB6,  /* low 6 bits of L - (S + A), L's top 2 */
};

/* How one relocation type is resolved: field width (0 = unsupported). */
typedef struct rtype {
	unsigned width;
	enum rop op;
} rtype;

/* RISC-V (LLVM 14 resolveRISCV): linker relaxation leaves ADD/SUB pairs
 * on one field wherever DWARF holds a difference of two code addresses. */
static rtype resolve_riscv(uint32_t type)
{
	switch (type) {
	case R_RISCV_32: return (rtype){ 4, OP_ABS };
	case R_RISCV_64: return (rtype){ 8, OP_ABS };
	case R_RISCV_32_PCREL: return (rtype){ 4, OP_PCREL };
	case R_RISCV_SET6: return (rtype){ 1, OP_SET6 };
	case R_RISCV_SUB6: return (rtype){ 1, OP_SUB6 };
	case R_RISCV_ADD8: return (rtype){ 1, OP_ADD };
	case R_RISCV_SUB8: return (rtype){ 1, OP_SUB };
	case R_RISCV_ADD16: return (rtype){ 2, OP_ADD };
	case R_RISCV_SUB16: return (rtype){ 2, OP_SUB };
	case R_RISCV_ADD32: return (rtype){ 4, OP_ADD };
	case R_RISCV_SUB32: return (rtype){ 4, OP_SUB };
	case R_RISCV_ADD64: return (rtype){ 8, OP_ADD };
	case R_RISCV_SUB64: return (rtype){ 8, OP_SUB };
	}
	return (rtype){ 0, OP_ABS };
}

static rtype resolve_type(uint16_t machine, uint32_t type)
{
	switch (machine) {
	case EM_X86_64:
		switch (type) {
		case R_X86_64_64: case R_X86_64_DTPOFF64: return (rtype){ 8, OP_ABS };
		case R_X86_64_32: case R_X86_64_32S: case R_X86_64_DTPOFF32: return (rtype){ 4, OP_ABS };
		case R_X86_64_PC32: return (rtype){ 4, OP_PCREL };
		case R_X86_64_PC64: return (rtype){ 8, OP_PCREL };
		}
		break;
	case EM_AARCH64:
		switch (type) {
		case R_AARCH64_ABS64: return (rtype){ 8, OP_ABS };
		case R_AARCH64_ABS32: return (rtype){ 4, OP_ABS };
		case R_AARCH64_PREL64: return (rtype){ 8, OP_PCREL };
		case R_AARCH64_PREL32: return (rtype){ 4, OP_PCREL };
		}
		break;
	case EM_386:
		switch (type) {
		case R_386_32: return (rtype){ 4, OP_ABS };
		case R_386_PC32: return (rtype){ 4, OP_PCREL };
		}
		break;
	case EM_PPC64:
		switch (type) {
		case R_PPC64_ADDR64: return (rtype){ 8, OP_ABS };
		case R_PPC64_ADDR32: return (rtype){ 4, OP_ABS };
		case R_PPC64_REL64: return (rtype){ 8, OP_PCREL };
		case R_PPC64_REL32: return (rtype){ 4, OP_PCREL };
		}
		break;
	case EM_PPC:
		switch (type) {
		case R_PPC_ADDR32: return (rtype){ 4, OP_ABS };
		case R_PPC_REL32: return (rtype){ 4, OP_PCREL };
		}
		break;
	case EM_ARM:
		switch (type) {
		case R_ARM_ABS32: return (rtype){ 4, OP_ABS };
		case R_ARM_REL32: return (rtype){ 4, OP_PCREL };
		}
		break;
	case EM_RISCV:
		return resolve_riscv(type);
	}
	return (rtype){ 0, OP_ABS };
}

static uint64_t get_n(const uint8_t *p, unsigned n, int little)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (little ? i : n - 1 - i));
	return v;
}

static void put_n(uint8_t *p, unsigned n, int little, uint64_t v)
{
	for (unsigned i = 0; i < n; i++)
		p[little ? i : n - 1 - i] = (uint8_t)(v >> (8 * i));
}

static uint64_t compute(enum rop op, uint64_t S, uint64_t A, uint64_t P, uint64_t L)
{
	switch (op) {
	case OP_ABS: return S + A;
	case OP_PCREL: return S + A - P;
	case OP_ADD: return L + (S + A);
	case OP_SUB: return L - (S + A);
	case OP_SET6: return (L & 0xC0) | ((S + A) & 0x3F);
	case OP_SUB6: return (L & 0xC0) | ((L - (S + A)) & 0x3F);
	}
	return L;
}

/* The symbol table relocations refer to, checked against the file. */
typedef struct symtab {
	Elf_Data *syms, *shndx;
	size_t n;
} symtab;

typedef struct rel_ctx {
	ix_sections *s;
	Elf *elf;
	size_t shnum;
	symtab st;
	ix_reloc_info *r;
	size_t cap_line_at;
} rel_ctx;

/* S and the symbol's section (LLVM's getSymbolInfo for an ELF object). */
static void symbol_value(const rel_ctx *x, size_t idx, uint64_t *value, uint32_t *sec)
{
	GElf_Sym sym;
	Elf32_Word xi = 0;
	*value = 0;
	*sec = IX_SEC_UNDEF;
	if (idx == 0 || idx >= x->st.n || !gelf_getsymshndx(x->st.syms, x->st.shndx, (int)idx, &sym, &xi))
		return;
	*value = sym.st_value;
	/* getSymbolValue: the Thumb / microMIPS bit of a function is not
	 * part of its address */
	if ((x->s->machine == EM_ARM || x->s->machine == EM_MIPS) &&
	    GELF_ST_TYPE(sym.st_info) == STT_FUNC)
		*value &= ~(uint64_t)1;
	size_t shndx = sym.st_shndx == SHN_XINDEX ? xi : sym.st_shndx;
	if (sym.st_shndx == SHN_UNDEF || (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
		return;
	if (shndx >= x->shnum)
		return;
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(x->elf, shndx);
	if (scn && gelf_getshdr(scn, &sh))
		*value += sh.sh_addr;
	*sec = (uint32_t)shndx;
}

static int note_line_at(rel_ctx *x, uint64_t off, uint32_t sec)
{
	ix_reloc_info *r = x->r;
	if (r->nline_at == x->cap_line_at) {
		size_t cap = x->cap_line_at ? 2 * x->cap_line_at : 64;
		ix_sec_at *n = realloc(r->line_at, cap * sizeof(*n));
		if (!n)
			return -1;
		r->line_at = n;
		x->cap_line_at = cap;
	}
	r->line_at[r->nline_at] = (ix_sec_at){ off, sec, r->nline_at };
	r->nline_at++;
	return 0;
}

/* Applies one relocation section to the debug section d. */
static int apply_section(rel_ctx *x, Elf_Scn *rscn, const GElf_Shdr *rsh, ix_debug_section *d,
			 int is_line)
{
	Elf_Data *data = elf_getdata(rscn, NULL);
	int rela = rsh->sh_type == SHT_RELA;
	size_t ent = gelf_fsize(x->elf, rela ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
	if (!data || ent == 0)
		return 0;
	size_t n = data->d_size / ent;
	uint8_t *bytes = d->owned;
	for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
		GElf_Rela ra;
		GElf_Rel rl;
		if (rela) {
			if (!gelf_getrela(data, (int)i, &ra))
				break;
		} else {
			if (!gelf_getrel(data, (int)i, &rl))
				break;
			ra.r_offset = rl.r_offset;
			ra.r_info = rl.r_info;
			ra.r_addend = 0;
		}
		/* gelf gives ELF32 r_info in the ELF64 layout */
		uint32_t type = (uint32_t)GELF_R_TYPE(ra.r_info);
		size_t symi = (size_t)GELF_R_SYM(ra.r_info);
		rtype t = resolve_type(x->s->machine, type);
		if (t.width == 0 || ra.r_offset > d->size || d->size - ra.r_offset < t.width) {
			x->r->skipped++;
			continue;
		}
		uint64_t S;
		uint32_t sec;
		symbol_value(x, symi, &S, &sec);
		uint64_t L = get_n(bytes + ra.r_offset, t.width, x->s->little);
		uint64_t A = rela ? (uint64_t)ra.r_addend : L;
		put_n(bytes + ra.r_offset, t.width, x->s->little, compute(t.op, S, A, ra.r_offset, L));
		x->r->applied++;
		if (is_line && note_line_at(x, ra.r_offset, sec))
			return -1;
	}
	return 0;
}

/* The debug section a relocation section applies to, made writable, or
 * NULL when it is not one LLVM relocates.  The first section of a name is
 * the one scan_sections kept. */
static ix_debug_section *target_of(rel_ctx *x, size_t target, size_t shstrndx, int *is_line)
{
	GElf_Shdr sh;
	Elf_Scn *scn = target < x->shnum ? elf_getscn(x->elf, target) : NULL;
	if (!scn || !gelf_getshdr(scn, &sh))
		return NULL;
	const char *name = elf_strptr(x->elf, shstrndx, sh.sh_name);
	if (!name)
		return NULL;
	char norm[64];
	if (strncmp(name, ".zdebug_", 8) == 0)
		snprintf(norm, sizeof(norm), ".debug_%s", name + 8);
	else
		snprintf(norm, sizeof(norm), "%s", name);
	if (!relocated(norm))
		return NULL;
	/* only the first section of this name was loaded */
	for (size_t i = 1; i < target; i++) {
		GElf_Shdr o;
		Elf_Scn *os = elf_getscn(x->elf, i);
		const char *on = os && gelf_getshdr(os, &o) ? elf_strptr(x->elf, shstrndx, o.sh_name)
							    : NULL;
		if (on && strcmp(on, name) == 0)
			return NULL;
	}
	ix_debug_section *d = (ix_debug_section *)ix_sections_find(x->s, norm);
	if (!d)
		return NULL;
	if (!d->owned) {
		d->owned = malloc(d->size ? d->size : 1);
		if (!d->owned)
			return (ix_debug_section *)(uintptr_t)1; /* out of memory */
		memcpy(d->owned, d->data, d->size);
		d->data = d->owned;
	}
	*is_line = strcmp(norm, ".debug_line") == 0;
	return d;
}

static int find_symtab(rel_ctx *x)
{
	Elf_Scn *scn = NULL;
	size_t ent = gelf_fsize(x->elf, ELF_T_SYM, 1, EV_CURRENT);
	memset(&x->st, 0, sizeof(x->st));
	while ((scn = elf_nextscn(x->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		if (sh.sh_offset > x->s->map_size || sh.sh_size > x->s->map_size - sh.sh_offset ||
		    ent == 0)
			return 0;
		x->st.syms = elf_getdata(scn, NULL);
		x->st.n = x->st.syms ? x->st.syms->d_size / ent : 0;
		Elf_Scn *o = NULL;
		while ((o = elf_nextscn(x->elf, o)) != NULL) {
			GElf_Shdr xs;
			if (gelf_getshdr(o, &xs) && xs.sh_type == SHT_SYMTAB_SHNDX &&
			    xs.sh_link == elf_ndxscn(scn))
				x->st.shndx = elf_getdata(o, NULL);
		}
		return 0;
	}
	return 0;
}

static int cmp_at(const void *a, const void *b)
{
	const ix_sec_at *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Sorted by offset, the first relocation of an offset kept (LLVM's
 * RelocAddrEntry keeps the first one's section; a second one only changes
 * the value). */
static void sort_line_at(ix_reloc_info *r)
{
	size_t k = 1;
	while (k < r->nline_at && r->line_at[k - 1].off < r->line_at[k].off)
		k++;
	if (k >= r->nline_at)
		return; /* the usual case: already ascending, no duplicates */
	qsort(r->line_at, r->nline_at, sizeof(*r->line_at), cmp_at);
	size_t o = 1;
	for (size_t i = 1; i < r->nline_at; i++)
		if (r->line_at[i].off != r->line_at[o - 1].off)
			r->line_at[o++] = r->line_at[i];
	r->nline_at = o;
}

/* ---- executable sections ------------------------------------------------ */

/* An endpoint of an executable section's range, for the sweep below. */
typedef struct sec_edge {
	uint64_t addr;
	uint32_t sec;
	int start;
} sec_edge;

static int cmp_edge(const void *a, const void *b)
{
	const sec_edge *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return x->start - y->start;
}

/* A min-heap of section indexes (the sections covering the sweep point;
 * ended ones are dropped lazily, when they reach the top). */
typedef struct sec_heap {
	uint32_t *v;
	size_t n;
} sec_heap;

static void heap_push(sec_heap *h, uint32_t sec)
{
	size_t i = h->n++;
	while (i > 0 && h->v[(i - 1) / 2] > sec) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = sec;
}

static void heap_pop(sec_heap *h)
{
	uint32_t last = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= last)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
}

static int push_claim(ix_reloc_info *r, size_t *cap, uint64_t lo, uint64_t hi, uint32_t sec)
{
	if (r->nclaims && r->claims[r->nclaims - 1].sec == sec && r->claims[r->nclaims - 1].hi == lo) {
		r->claims[r->nclaims - 1].hi = hi;
		return 0;
	}
	if (r->nclaims == *cap) {
		size_t nc = *cap ? 2 * *cap : 16;
		ix_sec_claim *n = realloc(r->claims, nc * sizeof(*n));
		if (!n)
			return -1;
		r->claims = n;
		*cap = nc;
	}
	r->claims[r->nclaims++] = (ix_sec_claim){ lo, hi, sec };
	return 0;
}

/* The claims: between consecutive endpoints, the lowest-numbered section
 * covering the interval (a sweep with a min-heap, O(n log n) however the
 * sections overlap).  ended[sec] marks sections whose end was passed. */
static int sweep(ix_reloc_info *r, sec_edge *e, size_t ne, size_t nsec)
{
	sec_heap h = { malloc((ne / 2 + 1) * sizeof(uint32_t)), 0 };
	uint8_t *ended = calloc(nsec + 1, 1);
	size_t cap = 0;
	int rc = h.v && ended ? 0 : -1;
	qsort(e, ne, sizeof(*e), cmp_edge);
	for (size_t i = 0; i < ne && !rc; i++) {
		if (e[i].start)
			heap_push(&h, e[i].sec);
		else
			ended[e[i].sec] = 1;
		while (h.n && ended[h.v[0]])
			heap_pop(&h);
		if (h.n && i + 1 < ne && e[i + 1].addr > e[i].addr)
			rc = push_claim(r, &cap, e[i].addr, e[i + 1].addr, h.v[0]);
	}
	free(h.v);
	free(ended);
	return rc;
}

/* LLVM's isText() && !isVirtual(): SHF_EXECINSTR and not SHT_NOBITS. */
static int claim_text(rel_ctx *x)
{
	sec_edge *e = malloc((2 * x->shnum + 1) * sizeof(*e));
	size_t ne = 0;
	if (!e)
		return -1;
	for (size_t i = 1; i < x->shnum; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(x->elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		if (!(sh.sh_flags & SHF_EXECINSTR) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		uint64_t hi = sh.sh_addr + sh.sh_size < sh.sh_addr ? UINT64_MAX : sh.sh_addr + sh.sh_size;
		e[ne++] = (sec_edge){ sh.sh_addr, (uint32_t)i, 1 };
		e[ne++] = (sec_edge){ hi, (uint32_t)i, 0 };
	}
	int rc = sweep(x->r, e, ne, x->shnum);
	free(e);
	return rc;
}

/* ---- entry points ------------------------------------------------------- */

int ix_reloc_apply(ix_sections *s, Elf *elf, char *why, size_t why_sz)
{
	rel_ctx x = { .s = s, .elf = elf };
	size_t shstrndx;
	if (elf_getshdrnum(elf, &x.shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	x.r = calloc(1, sizeof(*x.r));
	if (!x.r)
		goto oom;
	s->reloc = x.r;
	if (claim_text(&x) || find_symtab(&x))
		goto oom;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
			continue;
		if (sh.sh_offset > s->map_size || sh.sh_size > s->map_size - sh.sh_offset) {
			snprintf(why, why_sz, "relocation section %zu lies outside the file",
				 elf_ndxscn(scn));
			return -1;
		}
		int is_line = 0;
		ix_debug_section *d = target_of(&x, sh.sh_info, shstrndx, &is_line);
		if (d == (ix_debug_section *)(uintptr_t)1)
			goto oom;
		if (d && apply_section(&x, scn, &sh, d, is_line))
			goto oom;
	}
	sort_line_at(x.r);
	return 0;
oom:
	snprintf(why, why_sz, "out of memory applying relocations");
	return -1;
}

int ix_reloc_claims_from(ix_sections *dbg, const ix_sections *bin)
{
	if (!dbg->reloc || !bin->reloc)
		return 0;
	ix_reloc_info *r = dbg->reloc;
	const ix_reloc_info *b = bin->reloc;
	ix_sec_claim *c = malloc((b->nclaims ? b->nclaims : 1) * sizeof(*c));
	if (!c)
		return -1;
	memcpy(c, b->claims, b->nclaims * sizeof(*c));
	free(r->claims);
	r->claims = c;
	r->nclaims = b->nclaims;
	return 0;
}

void ix_reloc_free(ix_reloc_info *r)
{
	if (!r)
		return;
	free(r->claims);
	free(r->line_at);
	free(r);
}

uint32_t ix_reloc_line_sec(const ix_reloc_info *r, uint64_t off)
{
	size_t lo = 0, hi = r ? r->nline_at : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->line_at[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r && lo < r->nline_at && r->line_at[lo].off == off ? r->line_at[lo].sec
								   : IX_SEC_UNDEF;
}

uint32_t ix_reloc_owner(const ix_reloc_info *r, uint64_t addr)
{
	size_t lo = 0, hi = r ? r->nclaims : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->claims[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r && lo < r->nclaims && r->claims[lo].lo <= addr ? r->claims[lo].sec : IX_SEC_UNDEF;
}
