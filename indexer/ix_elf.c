/* SPDX-License-Identifier: MIT */
/*
 * ix_elf.c - read an ELF executable, shared object, relocatable object or
 * separate debug file into an ix_image: header facts, Base_Address, the
 * PT_LOAD segments (SPEC §7.1) and the symbol table reduced the way
 * llvm-symbolizer 14 reduces it (SPEC §7.2).  DWARF is ix_dwarf*.c's
 * business.  A relocatable object has no segments; its symbols keep their
 * section-relative values plus sh_addr (0 in practice), so symbols of
 * different sections share addresses, as llvm-symbolizer sees them (SPEC
 * §7.8).
 *
 * The input is untrusted.  libelf is only asked for data after this file has
 * checked that the program and section header tables and every section it
 * reads (symbol tables, their string tables, SHT_SYMTAB_SHNDX, .opd, the
 * section name table) lie inside the file, that sh_link indexes are in range
 * and that entry sizes are what the class says.  Symbol names are bounded by
 * their string table.
 *
 * Symbol selection follows LLVM 14 (ObjectFile/SymbolSize.cpp
 * computeSymbolSizes and DebugInfo/Symbolize/SymbolizableObjectFile.cpp
 * addSymbol): .symtab if it has an entry past the null symbol, else .dynsym;
 * symbols in a real section (not UNDEF, ABS, COMMON or another reserved
 * index); types FUNC, OBJECT, GNU_IFUNC and NOTYPE; ARM and MIPS clear bit 0
 * of STT_FUNC values (Thumb / microMIPS); big-endian PowerPC64 ELFv1 symbols
 * that point into .opd are moved to the code address in their descriptor.
 * Each STB_LOCAL symbol also records the STT_FILE name in force before it
 * (SPEC §7.2.1), which llvm-symbolizer prints when DWARF gives no file.
 * Sorting and alias resolution happen in ix_tables.c.
 */
#define _POSIX_C_SOURCE 200809L /* pread, fstat */
#include "ix_stage.h"
#include "format_header.h"
#include "format_elf.h"
#include "format_io.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif
#ifndef EM_RISCV
#define EM_RISCV 243
#endif

struct elf_input {
	const char *path;
	int fd;
	uint64_t size;
	Elf *elf;
	GElf_Ehdr eh;
	size_t shnum;
	char *eb;
	size_t ebsz;
	/* Where kept symbols and the BUILD_INFO counters go: the image's own
	 * table, or the pair's other table (SPEC §7.2.2). */
	ix_vec *syms;
	uint64_t *bi;
};

/* Big-endian PowerPC64 ELFv1 function descriptors (LLVM's OpdExtractor). */
struct opd_table {
	const uint8_t *data; /* file bytes of .opd, or NULL */
	uint64_t addr, size;
};

static int input_fail(struct elf_input *x, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int input_fail(struct elf_input *x, int rc, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	/* the reason first: fmt_err shortens a long path, never the reason */
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return fmt_err(x->eb, x->ebsz, rc, "%s: %s", x->path, why);
}

static pthread_once_t input_once = PTHREAD_ONCE_INIT;

static void input_libelf_init(void)
{
	elf_version(EV_CURRENT);
}

void ix_elf_init(void)
{
	pthread_once(&input_once, input_libelf_init);
}

/* ---- the file and its headers ------------------------------------------ */

/* Judge the open file by its first bytes: magic, class, data encoding and
 * e_type (ET_EXEC, ET_DYN or ET_REL), before any parsing.  The descriptor is
 * the caller's (SPEC §12.5: the indexer opens nothing). */
static int input_open(struct elf_input *x)
{
	struct stat st;
	uint8_t id[FMT_ELF_IDENT_SIZE];
	char why[256];
	ssize_t r;

	if (x->fd < 0)
		return input_fail(x, -EBADF, "%s", strerror(EBADF));
	if (fstat(x->fd, &st) < 0)
		return input_fail(x, -errno, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return input_fail(x, -EISDIR, "is a directory");
	if (!S_ISREG(st.st_mode))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "not a regular file");
	x->size = (uint64_t)st.st_size;
	if (x->size == 0)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "empty file");
	r = fmt_pread_full(x->fd, id, sizeof id, 0);
	if (r < 0)
		return input_fail(x, (int)r, "%s", strerror(-(int)r));
	if (fmt_elf_ident(id, (size_t)r, why, sizeof why) != 0)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "%s", why);
	return 0;
}

/* Check that a table of n entries of entsize bytes at off lies in the file. */
static int input_table_fits(const struct elf_input *x, uint64_t off, uint64_t n, uint64_t entsize)
{
	if (n == 0)
		return 1;
	if (entsize == 0 || n > UINT64_MAX / entsize)
		return 0;
	return off <= x->size && x->size - off >= n * entsize;
}

static int input_headers(struct elf_input *x)
{
	size_t phnum;
	int cls;

	x->elf = elf_begin(x->fd, ELF_C_READ_MMAP, NULL);
	if (!x->elf || elf_kind(x->elf) != ELF_K_ELF)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "not a readable ELF file (%s)",
				  elf_errmsg(-1));
	cls = gelf_getclass(x->elf);
	if ((cls != ELFCLASS32 && cls != ELFCLASS64) || !gelf_getehdr(x->elf, &x->eh))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "bad ELF header (%s)", elf_errmsg(-1));
	/* libelf quietly reports no sections when the table lies past EOF:
	 * check the raw fields first (with extended numbering e_shnum is 0 and
	 * section 0 holds the count, so at least one entry must fit). */
	if (x->eh.e_shoff &&
	    (x->eh.e_shentsize != gelf_fsize(x->elf, ELF_T_SHDR, 1, EV_CURRENT) ||
	     !input_table_fits(x, x->eh.e_shoff, x->eh.e_shnum ? x->eh.e_shnum : 1,
			       x->eh.e_shentsize)))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "section headers lie outside the file");
	if (x->eh.e_phnum && !input_table_fits(x, x->eh.e_phoff, x->eh.e_phnum == PN_XNUM ? 1 :
					       x->eh.e_phnum, x->eh.e_phentsize))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "program headers lie outside the file");
	if (elf_getphdrnum(x->elf, &phnum) < 0 || elf_getshdrnum(x->elf, &x->shnum) < 0)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "bad header counts (%s)", elf_errmsg(-1));
	if (x->shnum && !x->eh.e_shoff)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "section headers lie outside the file");
	if (phnum && (x->eh.e_phentsize != gelf_fsize(x->elf, ELF_T_PHDR, 1, EV_CURRENT) ||
	              !input_table_fits(x, x->eh.e_phoff, phnum, x->eh.e_phentsize)))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "program headers lie outside the file");
	if (x->shnum && (x->eh.e_shentsize != gelf_fsize(x->elf, ELF_T_SHDR, 1, EV_CURRENT) ||
	                 !input_table_fits(x, x->eh.e_shoff, x->shnum, x->eh.e_shentsize)))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "section headers lie outside the file");
	return 0;
}

static void input_header_fields(const struct elf_input *x, ix_image *img)
{
	img->object_format = FMT_OBJ_ELF;
	img->object_class = x->eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32;
	img->object_endian = x->eh.e_ident[EI_DATA] == ELFDATA2MSB ? 2 : 1;
	img->object_type = x->eh.e_type;
	img->machine = x->eh.e_machine;
	img->machine_sub = 0;
}

/* ---- segments ----------------------------------------------------------- */

/* A total order on segment contents, so that qsort's instability cannot
 * show in the output (equal records are indistinguishable). */
static int cmp_seg(const void *a, const void *b)
{
	const ix_segment *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->fileoff != y->fileoff)
		return x->fileoff < y->fileoff ? -1 : 1;
	if (x->filesz != y->filesz)
		return x->filesz < y->filesz ? -1 : 1;
	if (x->memsz != y->memsz)
		return x->memsz < y->memsz ? -1 : 1;
	return x->flags < y->flags ? -1 : x->flags > y->flags;
}

/* PT_LOAD segments sorted by vaddr (SPEC §7.1); Base_Address is the lowest
 * p_vaddr, or 0 without any PT_LOAD. */
static int input_segments(struct elf_input *x, ix_image *img)
{
	size_t i, n;
	GElf_Phdr ph;
	ix_segment *s;

	if (elf_getphdrnum(x->elf, &n) < 0)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "bad program headers");
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(x->elf, (int)i, &ph))
			return input_fail(x, SYMDB_E_BAD_OBJECT, "bad program header %zu", i);
		if (ph.p_type != PT_LOAD)
			continue;
		/* Separate debug files keep PT_LOAD with p_filesz 0, so a segment
		 * whose bytes are missing means a truncated file. */
		if (ph.p_offset > x->size || x->size - ph.p_offset < ph.p_filesz)
			return input_fail(x, SYMDB_E_BAD_OBJECT,
					  "PT_LOAD %zu lies past the end of the file (truncated?)", i);
		s = ix_vec_push(&img->segments);
		if (!s)
			return input_fail(x, -ENOMEM, "out of memory");
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->fileoff = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->flags = (ph.p_flags & PF_X ? FMT_SEGF_X : 0) | (ph.p_flags & PF_W ? FMT_SEGF_W : 0) |
		           (ph.p_flags & PF_R ? FMT_SEGF_R : 0);
	}
	s = img->segments.p;
	if (img->segments.n > 1)
		qsort(s, img->segments.n, sizeof *s, cmp_seg);
	img->base_address = img->segments.n ? s[0].vaddr : 0;
	return 0;
}

/* ---- sections ----------------------------------------------------------- */

/* Section idx with its header, if its file bytes (unless NOBITS) lie in the
 * file and it is not compressed.  Returns NULL otherwise. */
static Elf_Scn *input_section(struct elf_input *x, size_t idx, GElf_Shdr *sh)
{
	Elf_Scn *scn;

	if (idx == 0 || idx >= x->shnum)
		return NULL;
	scn = elf_getscn(x->elf, idx);
	if (!scn || !gelf_getshdr(scn, sh))
		return NULL;
	if (sh->sh_type == SHT_NOBITS)
		return scn;
	if (sh->sh_flags & SHF_COMPRESSED)
		return NULL;
	if (sh->sh_offset > x->size || x->size - sh->sh_offset < sh->sh_size)
		return NULL;
	return scn;
}

/* The raw (untranslated) bytes of a validated section. */
static const uint8_t *input_bytes(Elf_Scn *scn, uint64_t *size)
{
	Elf_Data *d = elf_rawdata(scn, NULL);

	if (!d || (d->d_size && !d->d_buf))
		return NULL;
	*size = d->d_size;
	return d->d_buf;
}

/* Big-endian PowerPC64 only (LLVM's Triple::ppc64): find .opd. */
static void input_find_opd(struct elf_input *x, struct opd_table *o)
{
	size_t shstrndx, i;
	GElf_Shdr sh, strsh;
	Elf_Scn *scn;
	const char *name;

	memset(o, 0, sizeof *o);
	if (x->eh.e_machine != EM_PPC64 || x->eh.e_ident[EI_DATA] != ELFDATA2MSB)
		return;
	if (elf_getshdrstrndx(x->elf, &shstrndx) < 0 || !input_section(x, shstrndx, &strsh) ||
	    strsh.sh_type != SHT_STRTAB)
		return;
	for (i = 1; i < x->shnum; i++) {
		scn = input_section(x, i, &sh);
		if (!scn || sh.sh_name >= strsh.sh_size)
			continue;
		name = elf_strptr(x->elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".opd") != 0)
			continue;
		if (sh.sh_type != SHT_NOBITS)
			o->data = input_bytes(scn, &o->size);
		o->addr = sh.sh_addr;
		return;
	}
}

static uint64_t opd_translate(const struct opd_table *o, uint64_t addr)
{
	uint64_t off = addr - o->addr, v = 0;
	int i;

	if (!o->data || addr < o->addr || off > o->size || o->size - off < 8)
		return addr;
	for (i = 0; i < 8; i++)
		v = v << 8 | o->data[off + (uint64_t)i];
	return v;
}

/* ---- symbols ------------------------------------------------------------ */

struct symtab {
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data, *shndx;     /* translated symbols, SHT_SYMTAB_SHNDX or NULL */
	const char *strs;           /* linked string table */
	uint64_t strs_size;
	uint64_t n;                 /* entries, including the null symbol */
	int dynsym;
};

/* The first section of `type` (LLVM keeps the first of each). */
static Elf_Scn *input_find_type(struct elf_input *x, uint32_t type, GElf_Shdr *sh)
{
	size_t i;
	Elf_Scn *scn;

	for (i = 1; i < x->shnum; i++) {
		scn = elf_getscn(x->elf, i);
		if (scn && gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	}
	return NULL;
}

/* Entries of a symbol table section, 0 if it has no file bytes. */
static uint64_t input_nsyms(struct elf_input *x, const GElf_Shdr *sh)
{
	size_t ent = gelf_fsize(x->elf, ELF_T_SYM, 1, EV_CURRENT);

	if (sh->sh_type == SHT_NOBITS || ent == 0)
		return 0;
	return sh->sh_size / ent;
}

static int input_symtab_open(struct elf_input *x, Elf_Scn *scn, struct symtab *t)
{
	GElf_Shdr ssh;
	Elf_Scn *sscn, *xscn;
	uint64_t sz;
	size_t ent = gelf_fsize(x->elf, ELF_T_SYM, 1, EV_CURRENT), i;

	if (!input_section(x, elf_ndxscn(scn), &t->sh) || t->sh.sh_entsize != ent)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "symbol table section %zu is malformed",
				  elf_ndxscn(scn));
	t->scn = scn;
	t->n = t->sh.sh_size / ent;
	if (t->n > INT32_MAX) /* libelf indexes symbols with an int */
		return input_fail(x, SYMDB_E_TOO_BIG, "symbol table has %llu entries",
				  (unsigned long long)t->n);
	t->data = elf_getdata(scn, NULL);
	if (!t->data || t->data->d_size / ent < t->n)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "cannot read symbol table (%s)",
				  elf_errmsg(-1));
	sscn = input_section(x, t->sh.sh_link, &ssh);
	if (!sscn || ssh.sh_type != SHT_STRTAB)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "symbol table %zu links to a bad string table",
				  elf_ndxscn(scn));
	t->strs = (const char *)input_bytes(sscn, &sz);
	t->strs_size = t->strs ? sz : 0;
	/* SHN_XINDEX needs the SHT_SYMTAB_SHNDX section linked to this table. */
	for (i = 1; i < x->shnum; i++) {
		GElf_Shdr xsh;

		xscn = input_section(x, i, &xsh);
		if (xscn && xsh.sh_type == SHT_SYMTAB_SHNDX && xsh.sh_link == elf_ndxscn(scn)) {
			t->shndx = elf_getdata(xscn, NULL);
			break;
		}
	}
	return 0;
}

/* The section index of a symbol, or 0 when it is in no real section
 * (UNDEF, ABS, COMMON, other reserved indexes, or out of range): LLVM's
 * getSection() then yields section_end() and addSymbol() skips it. */
static size_t input_sym_section(const struct elf_input *x, const struct symtab *t,
                                const GElf_Sym *s, uint64_t i)
{
	Elf32_Word xi = 0;
	GElf_Sym tmp;

	if (s->st_shndx == SHN_XINDEX) {
		if (!t->shndx || !gelf_getsymshndx(t->data, t->shndx, (int)i, &tmp, &xi))
			return 0;
		return xi < x->shnum ? xi : 0;
	}
	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return 0;
	return s->st_shndx < x->shnum ? s->st_shndx : 0;
}

/* LLVM's ELFObjectFile::getSymbolAddress adds the section's sh_addr to a
 * symbol of a relocatable object (0 elsewhere). */
static uint64_t input_section_addr(struct elf_input *x, size_t idx)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (x->eh.e_type != ET_REL || idx == 0)
		return 0;
	scn = elf_getscn(x->elf, idx);
	return scn && gelf_getshdr(scn, &sh) ? sh.sh_addr : 0;
}

/*
 * Symbols LLVM 14 marks SF_FormatSpecific by machine (ELFObjectFile::
 * getSymbolFlags) and addSymbol() therefore skips, whatever their type:
 * AArch64 names starting "$d" or "$x"; ARM empty names and names starting
 * "$d", "$t" or "$a"; RISC-V empty names (the assembler's labels for
 * relaxable differences, which lld keeps and which would otherwise cut a
 * function into nameless pieces).  Prefixes, not whole names: "$d.1" and
 * "$dfoo" alike.
 */
static int input_is_format_specific(const struct elf_input *x, const char *name)
{
	switch (x->eh.e_machine) {
	case EM_AARCH64:
		return name[0] == '$' && (name[1] == 'd' || name[1] == 'x');
	case EM_ARM:
		return name[0] == 0 ||
		       (name[0] == '$' && (name[1] == 'd' || name[1] == 't' || name[1] == 'a'));
	case EM_RISCV:
		return name[0] == 0;
	default:
		return 0;
	}
}

static uint32_t input_sym_flags(const GElf_Sym *s, int dynsym)
{
	uint32_t f = 0;

	switch (GELF_ST_TYPE(s->st_info)) {
	case STT_FUNC: f = FMT_SYMF_FUNC; break;
	case STT_OBJECT: f = FMT_SYMF_OBJECT; break;
	case STT_GNU_IFUNC: f = FMT_SYMF_IFUNC; break;
	default: f = FMT_SYMF_NOTYPE; break;
	}
	if (GELF_ST_BIND(s->st_info) == STB_LOCAL)
		f |= FMT_SYMF_LOCAL;
	else if (GELF_ST_BIND(s->st_info) == STB_WEAK)
		f |= FMT_SYMF_WEAK;
	return f | (dynsym ? FMT_SYMF_DYNSYM : 0);
}

/*
 * The STT_FILE symbol in force while walking a symbol table (SPEC §7.2.1).
 * LLVM 14's SymbolizableObjectFile::addSymbol remembers every section-less
 * STT_FILE entry by symbol index, and getNameFromSymbolTable gives an
 * STB_LOCAL symbol the name of the one with the greatest index below its own
 * (gABI: "if present, it precedes the other STB_LOCAL symbols for the file"),
 * used only when that name is not empty.  The name enters the string pool
 * only once a local symbol takes it.
 */
struct stt_file {
	const char *name; /* NULL or "" = none */
	uint32_t ref;     /* its string ref once interned, else 0 */
};

/* A section-less STT_FILE entry: it becomes the file in force.  A name that
 * lies outside the string table ends the previous file's reach. */
static void input_file_symbol(struct stt_file *f, const struct symtab *t, const GElf_Sym *s)
{
	const char *name = NULL;

	if (s->st_name < t->strs_size && memchr(t->strs + s->st_name, 0, t->strs_size - s->st_name))
		name = t->strs + s->st_name;
	f->name = name;
	f->ref = 0;
}

/* The file string ref for a kept symbol: 0 unless it is local and a
 * non-empty STT_FILE name is in force.  FMT_NONE when the pool is full. */
static uint32_t input_symbol_file(ix_image *img, struct stt_file *f, const GElf_Sym *s)
{
	if (GELF_ST_BIND(s->st_info) != STB_LOCAL || !f->name || !f->name[0])
		return 0;
	if (f->ref == 0)
		f->ref = ix_str_addz(img->strings, f->name);
	return f->ref;
}

/* One symbol-table entry: keep it (push), note it as the file in force, skip
 * it, or fail. */
static int input_symbol(struct elf_input *x, ix_image *img, const struct symtab *t,
                        const struct opd_table *o, struct stt_file *f, uint64_t i)
{
	GElf_Sym s;
	const char *name;
	unsigned type;
	uint64_t addr;
	ix_symbol *out;

	if (!gelf_getsym(t->data, (int)i, &s))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "cannot read symbol %llu",
				  (unsigned long long)i);
	type = GELF_ST_TYPE(s.st_info);
	if (type == STT_FILE && input_sym_section(x, t, &s, i) == 0)
		input_file_symbol(f, t, &s);
	if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return 0;
	if (input_sym_section(x, t, &s, i) == 0)
		return 0;
	if (s.st_name >= t->strs_size)
		return input_fail(x, SYMDB_E_BAD_OBJECT, "symbol %llu: name offset %u past its string table",
				  (unsigned long long)i, (unsigned)s.st_name);
	name = t->strs + s.st_name;
	if (!memchr(name, 0, t->strs_size - s.st_name))
		return input_fail(x, SYMDB_E_BAD_OBJECT, "symbol %llu: unterminated name",
				  (unsigned long long)i);
	if (input_is_format_specific(x, name))
		return 0;
	addr = s.st_value + input_section_addr(x, input_sym_section(x, t, &s, i));
	if ((x->eh.e_machine == EM_ARM || x->eh.e_machine == EM_MIPS) && type == STT_FUNC)
		addr &= ~(uint64_t)1;
	addr = opd_translate(o, addr);
	if (addr < img->base_address) {
		x->bi[FMT_BI_SYMBOLS_DROPPED]++;
		return 0;
	}
	out = ix_vec_push(x->syms);
	if (!out)
		return input_fail(x, -ENOMEM, "out of memory");
	out->addr = addr;
	out->size = s.st_size;
	out->flags = input_sym_flags(&s, t->dynsym);
	out->order = i;
	out->name = ix_str_addz(img->strings, name);
	out->file = input_symbol_file(img, f, &s);
	if (out->name == FMT_NONE || out->file == FMT_NONE)
		return input_fail(x, SYMDB_E_TOO_BIG, "string pool full or out of memory");
	return 0;
}

static int input_symbols(struct elf_input *x, ix_image *img)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	struct symtab t;
	struct opd_table o;
	struct stt_file f = { NULL, 0 };
	uint64_t i;
	int rc;

	memset(&t, 0, sizeof t);
	/* LLVM computeSymbolSizes: .symtab unless it is empty past the null
	 * symbol, then .dynsym. */
	scn = input_find_type(x, SHT_SYMTAB, &sh);
	if (!scn || input_nsyms(x, &sh) <= 1) {
		scn = input_find_type(x, SHT_DYNSYM, &sh);
		t.dynsym = 1;
		if (!scn || input_nsyms(x, &sh) <= 1)
			return 0;
	}
	rc = input_symtab_open(x, scn, &t);
	if (rc)
		return rc;
	input_find_opd(x, &o);
	x->bi[FMT_BI_SYMBOLS_SEEN] = t.n - 1;
	x->bi[FMT_BI_SYMBOL_SOURCE] = t.dynsym ? FMT_BI_SYMSRC_DYNSYM : FMT_BI_SYMSRC_SYMTAB;
	for (i = 1; i < t.n; i++) {
		rc = input_symbol(x, img, &t, &o, &f, i);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- entry point -------------------------------------------------------- */

static void input_image_name(ix_image *img, const char *path)
{
	const char *b = strrchr(path, '/');

	img->image_name = ix_str_addz(img->strings, b ? b + 1 : path);
}

static void input_init(struct elf_input *x, int fd, const char *path, char *errbuf,
                       size_t errbuf_sz)
{
	memset(x, 0, sizeof *x);
	x->path = path;
	x->fd = fd;
	x->eb = errbuf;
	x->ebsz = errbuf_sz;
}

int ix_elf_precheck(int fd, const char *path, char *errbuf, size_t errbuf_sz)
{
	struct elf_input x;

	input_init(&x, fd, path, errbuf, errbuf_sz);
	return input_open(&x);
}

int ix_elf_load(ix_image *img, int fd, const char *path, char *errbuf, size_t errbuf_sz)
{
	struct elf_input x;
	int rc;

	input_init(&x, fd, path, errbuf, errbuf_sz);
	x.syms = &img->symbols;
	x.bi = img->build_info;
	pthread_once(&input_once, input_libelf_init);
	rc = input_open(&x);
	if (rc == 0)
		rc = input_headers(&x);
	if (rc == 0) {
		input_header_fields(&x, img);
		img->build_info[FMT_BI_SOURCE_SIZE] = x.size;
		rc = input_segments(&x, img);
	}
	if (rc == 0)
		rc = input_symbols(&x, img);
	if (rc == 0) {
		input_image_name(img, path);
		if (img->image_name == FMT_NONE)
			rc = input_fail(&x, -ENOMEM, "out of memory");
	}
	if (x.elf)
		elf_end(x.elf);
	return rc;
}

void ix_elf_load_alt(ix_image *img, int fd, const char *path)
{
	uint64_t bi[FMT_BI_COUNT] = { 0 };
	struct elf_input x;
	char why[256];

	input_init(&x, fd, path, why, sizeof why);
	x.syms = &img->alt_symbols;
	x.bi = bi;
	pthread_once(&input_once, input_libelf_init);
	if (input_open(&x) == 0 && input_headers(&x) == 0 && input_symbols(&x, img) == 0 &&
	    img->alt_symbols.n && bi[FMT_BI_SYMBOL_SOURCE] != img->build_info[FMT_BI_SYMBOL_SOURCE])
		img->build_info[FMT_BI_ALT_SYMBOL_SOURCE] = bi[FMT_BI_SYMBOL_SOURCE];
	else
		img->alt_symbols.n = 0; /* all or nothing; the same kind of table adds nothing */
	if (x.elf)
		elf_end(x.elf);
}
