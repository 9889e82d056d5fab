/* SPDX-License-Identifier: MIT */
/*
 * ix_macho.c - indexes Mach-O images: thin 32/64-bit files of either byte
 * order, universal files (FAT_MAGIC, FAT_MAGIC_64) slice by slice, and .dSYM
 * bundles (every file in Contents/Resources/DWARF/, opened by the builder).  Each slice becomes its
 * own index file keyed by its LC_UUID (SPEC §5, UUID_Kind 2).
 *
 * The symbol table is reduced the way llvm-symbolizer 14 reduces it, so that
 * `symdb query` answers as `llvm-symbolizer --obj` does:
 *   - sizes come from LLVM's computeSymbolSizes() for non-ELF objects: every
 *     nlist entry (stabs and undefined ones included) and a dummy entry at
 *     the end of every section are sorted by (n_sect − 1, address); a
 *     symbol's size is the distance to the next entry with a greater address;
 *   - only N_SECT, non-stab entries of an existing section are kept
 *     (SymbolizableObjectFile::addSymbol takes ST_Function and ST_Data);
 *   - one leading '_' is dropped from every name (the C symbol prefix).
 * Base_Address is the vmaddr of __TEXT; symbols below it are dropped and
 * counted in BUILD_INFO.
 *
 * DWARF lives in a dSYM's __DWARF segment.  Universal files are never copied:
 * each slice is a window into one read-only mapping, and its __debug_*
 * sections are served to the DWARF reader through an ix_sections filled here
 * (ix_dwarf_index_sections).  Given a binary, a companion "BINARY.dSYM"
 * bundle next to it supplies the DWARF of the slice with the same UUID, as
 * llvm-symbolizer does.
 */
#define _DEFAULT_SOURCE /* mmap */
#include "ix_macho.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt_macho.h"
#include "format_header.h"
#include "format_io.h"
#include "ix_dwarf_internal.h"

#include <xxhash.h>

#define MO_N_STAB 0xe0u
#define MO_N_TYPE 0x0eu
#define MO_N_SECT 0x0eu
#define MO_N_EXT 0x01u
#define MO_N_WEAK_DEF 0x80u
#define MO_S_ATTR_PURE_INSTRUCTIONS 0x80000000u
#define MO_SECTION_TYPE 0xffu
#define MO_S_ZEROFILL 0x1u
#define MO_S_GB_ZEROFILL 0xcu
#define MO_VM_PROT_READ 1u
#define MO_VM_PROT_WRITE 2u
#define MO_VM_PROT_EXECUTE 4u
#define MO_MAX_DSYM_FILES 16

/* A mapped input file. */
typedef struct macho_map {
	uint8_t *p;
	size_t n;
} macho_map;

typedef struct macho_section {
	char segname[17], sectname[17];
	uint64_t addr, size;
	uint32_t offset, flags;
} macho_section;

/* One parsed slice: pointers into the mapping, nothing copied. */
typedef struct macho_slice {
	const uint8_t *p;
	uint64_t n;
	fmt_mo_header h;
	ix_vec sects; /* macho_section, in load-command order (n_sect − 1 indexes it) */
	ix_vec segs;  /* ix_segment */
	uint32_t symoff, nsyms, stroff, strsize;
	int has_symtab, has_uuid, has_text, has_dwarf;
	uint8_t uuid[16];
	uint64_t text_vmaddr;
} macho_slice;

/* Map the file open at fd (the caller's descriptor, SPEC §12.5). */
static int macho_open(int fd, const char *path, macho_map *m, char *eb, size_t ebsz)
{
	struct stat st;
	int e;

	m->p = NULL;
	m->n = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 8)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not a regular Mach-O file", path);
	m->n = (size_t)st.st_size;
	m->p = mmap(NULL, m->n, PROT_READ, MAP_PRIVATE, fd, 0);
	e = errno;
	if (m->p == MAP_FAILED) {
		m->p = NULL;
		return fmt_err(eb, ebsz, -e, "%s: mmap: %s", path, strerror(e));
	}
	return 0;
}

static void macho_close(macho_map *m)
{
	if (m->p)
		munmap(m->p, m->n);
	m->p = NULL;
}

static void macho_slice_free(macho_slice *s)
{
	ix_vec_free(&s->sects);
	ix_vec_free(&s->segs);
}

/* ---- load commands -------------------------------------------------------- */

/* A 16-byte segment or section name.  Control bytes become '?': the name
 * may end up in an error message, which must stay one line; no real name
 * (__TEXT, __debug_info, ...) has any. */
static void macho_name16(char *dst, const uint8_t *src)
{
	memcpy(dst, src, 16);
	dst[16] = 0;
	for (char *p = dst; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static int macho_add_segment(macho_slice *s, const uint8_t *c, const char *path, char *eb,
                             size_t ebsz)
{
	const int w = s->h.is64, sw = s->h.swap;
	const uint32_t hdr = w ? 72 : 56, rec = w ? 80 : 68;
	uint32_t size = fmt_mo_u32(c + 4, sw), nsects, prot;
	char segname[17];
	ix_segment *g;

	if (size < hdr)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: Mach-O segment command too short",
		               path);
	macho_name16(segname, c + 8);
	nsects = fmt_mo_u32(c + (w ? 64 : 48), sw);
	if (nsects > (size - hdr) / rec)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: Mach-O segment %s: %u sections run past its cmdsize", path,
		               segname, nsects);
	prot = fmt_mo_u32(c + (w ? 60 : 44), sw);
	if (!(g = ix_vec_push(&s->segs)))
		return -ENOMEM;
	g->vaddr = w ? fmt_mo_u64(c + 24, sw) : fmt_mo_u32(c + 24, sw);
	g->memsz = w ? fmt_mo_u64(c + 32, sw) : fmt_mo_u32(c + 28, sw);
	g->fileoff = w ? fmt_mo_u64(c + 40, sw) : fmt_mo_u32(c + 32, sw);
	g->filesz = w ? fmt_mo_u64(c + 48, sw) : fmt_mo_u32(c + 36, sw);
	g->flags = (prot & MO_VM_PROT_READ ? FMT_SEGF_R : 0) |
	           (prot & MO_VM_PROT_WRITE ? FMT_SEGF_W : 0) |
	           (prot & MO_VM_PROT_EXECUTE ? FMT_SEGF_X : 0);
	if (!strcmp(segname, "__TEXT") && !s->has_text) {
		s->has_text = 1;
		s->text_vmaddr = g->vaddr;
	}
	for (uint32_t i = 0; i < nsects; i++) {
		const uint8_t *r = c + hdr + (uint64_t)i * rec;
		macho_section *x = ix_vec_push(&s->sects);
		if (!x)
			return -ENOMEM;
		macho_name16(x->sectname, r);
		macho_name16(x->segname, r + 16);
		x->addr = w ? fmt_mo_u64(r + 32, sw) : fmt_mo_u32(r + 32, sw);
		x->size = w ? fmt_mo_u64(r + 40, sw) : fmt_mo_u32(r + 36, sw);
		x->offset = fmt_mo_u32(r + (w ? 48 : 40), sw);
		x->flags = fmt_mo_u32(r + (w ? 64 : 56), sw);
		if (!strcmp(x->segname, "__DWARF") && !strcmp(x->sectname, "__debug_info"))
			s->has_dwarf = 1;
	}
	return 0;
}

static int macho_add_symtab(macho_slice *s, const uint8_t *c, const char *path, char *eb,
                            size_t ebsz)
{
	const int sw = s->h.swap;
	const uint64_t ent = s->h.is64 ? 16 : 12;

	if (fmt_mo_u32(c + 4, sw) < 24)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: LC_SYMTAB command too short", path);
	s->symoff = fmt_mo_u32(c + 8, sw);
	s->nsyms = fmt_mo_u32(c + 12, sw);
	s->stroff = fmt_mo_u32(c + 16, sw);
	s->strsize = fmt_mo_u32(c + 20, sw);
	s->has_symtab = 1;
	if (s->symoff > s->n || (uint64_t)s->nsyms * ent > s->n - s->symoff)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: LC_SYMTAB: %u symbols at offset %u lie outside the image "
		               "(%llu bytes)",
		               path, s->nsyms, s->symoff, (unsigned long long)s->n);
	if (s->stroff > s->n || s->strsize > s->n - s->stroff)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: LC_SYMTAB: string table (offset %u, %u bytes) lies outside the "
		               "image (%llu bytes)",
		               path, s->stroff, s->strsize, (unsigned long long)s->n);
	return 0;
}

/* Parses one thin slice of n bytes at p. */
static int macho_parse(macho_slice *s, const uint8_t *p, uint64_t n, const char *path, char *eb,
                       size_t ebsz)
{
	const uint8_t *c;
	uint32_t idx = 0;
	uint64_t off = 0;
	int rc;

	memset(s, 0, sizeof *s);
	ix_vec_init(&s->sects, sizeof(macho_section));
	ix_vec_init(&s->segs, sizeof(ix_segment));
	s->p = p;
	s->n = n;
	if (fmt_mo_header_read(p, n, &s->h, path, eb, ebsz))
		return SYMDB_E_BAD_OBJECT;
	if (s->h.filetype == FMT_MO_MH_OBJECT)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: Mach-O object file (MH_OBJECT): link it first", path);
	while ((c = fmt_mo_next_cmd(&s->h, p, &idx, &off)) != NULL) {
		uint32_t cmd = fmt_mo_u32(c, s->h.swap);
		rc = 0;
		if (cmd == FMT_MO_LC_SEGMENT || cmd == FMT_MO_LC_SEGMENT_64)
			rc = macho_add_segment(s, c, path, eb, ebsz);
		else if (cmd == 0x2u /* LC_SYMTAB */ && !s->has_symtab)
			rc = macho_add_symtab(s, c, path, eb, ebsz);
		if (rc == -ENOMEM)
			return fmt_err(eb, ebsz, rc, "%s: out of memory", path);
		if (rc)
			return rc;
	}
	s->has_uuid = fmt_mo_uuid(&s->h, p, s->uuid);
	if (!s->has_uuid)
		return fmt_err(eb, ebsz, SYMDB_E_NO_UUID, "%s: Mach-O image without LC_UUID", path);
	return 0;
}

/* ---- symbols (SPEC §7.2, Mach-O rules in the header comment) --------------- */

typedef struct macho_symbol {
	uint64_t addr;
	uint32_t key;  /* n_sect − 1 (wrapping), or the section index for a dummy */
	uint32_t sym;  /* nlist index, or UINT32_MAX for a section-end dummy */
	uint64_t size; /* computed */
} macho_symbol;

static int macho_symbol_cmp(const void *a, const void *b)
{
	const macho_symbol *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/* LLVM's computeSymbolSizes() for non-ELF objects (see the file comment),
 * including its quirk of looking for the next greater address across a
 * section boundary.  When that next entry lies lower (a symbol at the end of
 * its section, followed by a section at lower addresses), LLVM's size wraps
 * and its lookup then matches no address at all; size 1 is the nearest
 * representable answer (SPEC §7.2 has no "covers nothing"). */
static void macho_sizes(macho_symbol *e, size_t n)
{
	if (n > 1) /* qsort(NULL, 0, ...) is undefined (C11 7.22.5) */
		qsort(e, n, sizeof *e, macho_symbol_cmp);
	for (size_t i = 0; i + 1 < n; i++) {
		size_t j = i + 1;
		if (e[i].sym == UINT32_MAX)
			continue;
		while (j < n - 1 && e[j].addr == e[i].addr)
			j++;
		e[i].size = e[j].addr >= e[i].addr ? e[j].addr - e[i].addr : 1;
	}
}

static const uint8_t *macho_nlist(const macho_slice *s, uint32_t i)
{
	return s->p + s->symoff + (uint64_t)i * (s->h.is64 ? 16 : 12);
}

static uint64_t macho_nvalue(const macho_slice *s, const uint8_t *nl)
{
	return s->h.is64 ? fmt_mo_u64(nl + 8, s->h.swap) : fmt_mo_u32(nl + 8, s->h.swap);
}

static int macho_keep_symbol(ix_image *img, const macho_slice *s, const macho_symbol *e, char *eb,
                             size_t ebsz, const char *path)
{
	const uint8_t *nl = macho_nlist(s, e->sym);
	uint32_t strx = fmt_mo_u32(nl, s->h.swap);
	uint8_t type = nl[4], sect = nl[5];
	uint16_t desc;
	const char *name;
	size_t len;
	const macho_section *x;
	ix_symbol *y;

	if ((type & MO_N_STAB) || (type & MO_N_TYPE) != MO_N_SECT || sect == 0 ||
	    sect > s->sects.n)
		return 0;
	if (strx >= s->strsize)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: symbol %u: string index %u is past the string table (%u bytes)",
		               path, e->sym, strx, s->strsize);
	if (e->addr < img->base_address) {
		img->build_info[FMT_BI_SYMBOLS_DROPPED]++;
		return 0;
	}
	name = (const char *)s->p + s->stroff + strx;
	len = strnlen(name, s->strsize - strx);
	if (len && name[0] == '_') {
		name++;
		len--;
	}
	x = &IX_AT(&s->sects, macho_section, sect - 1);
	if (!(y = ix_vec_push(&img->symbols)))
		return -ENOMEM;
	y->addr = e->addr;
	y->size = e->size;
	y->order = e->sym;
	y->name = ix_str_add(img->strings, name, len);
	if (y->name == FMT_NONE)
		return -ENOMEM;
	y->flags = (x->flags & MO_S_ATTR_PURE_INSTRUCTIONS) ? FMT_SYMF_FUNC : FMT_SYMF_OBJECT;
	if (!(type & MO_N_EXT))
		y->flags |= FMT_SYMF_LOCAL;
	desc = s->h.swap ? (uint16_t)((nl[6] << 8) | nl[7]) : (uint16_t)(nl[6] | (nl[7] << 8));
	if (desc & MO_N_WEAK_DEF)
		y->flags |= FMT_SYMF_WEAK;
	return 0;
}

static int macho_symbols(ix_image *img, const macho_slice *s, const char *path, char *eb,
                         size_t ebsz)
{
	size_t n = (size_t)s->nsyms + s->sects.n, k = 0;
	macho_symbol *e;
	int rc = 0;

	img->build_info[FMT_BI_SYMBOLS_SEEN] = s->nsyms;
	img->build_info[FMT_BI_SYMBOL_SOURCE] = FMT_BI_SYMSRC_NLIST;
	if (!s->has_symtab || s->nsyms == 0)
		return 0;
	if (!(e = calloc(n, sizeof *e)))
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	for (uint32_t i = 0; i < s->nsyms; i++, k++) {
		const uint8_t *nl = macho_nlist(s, i);
		e[k] = (macho_symbol){ macho_nvalue(s, nl), (uint32_t)nl[5] - 1u, i, 0 };
	}
	for (size_t i = 0; i < s->sects.n; i++, k++) {
		const macho_section *x = &IX_AT(&s->sects, macho_section, i);
		e[k] = (macho_symbol){ x->addr + x->size, (uint32_t)i, UINT32_MAX, 0 };
	}
	macho_sizes(e, n);
	for (size_t i = 0; i < n && rc == 0; i++)
		if (e[i].sym != UINT32_MAX)
			rc = macho_keep_symbol(img, s, &e[i], eb, ebsz, path);
	free(e);
	if (rc == -ENOMEM)
		return fmt_err(eb, ebsz, rc, "%s: out of memory", path);
	return rc;
}

/* ---- the image ------------------------------------------------------------ */

static int macho_seg_cmp(const void *a, const void *b)
{
	const ix_segment *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static const char *macho_basename(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* Header fields, segments and symbols of one slice into img. */
static int macho_load(ix_image *img, const macho_slice *s, const char *path, char *eb, size_t ebsz)
{
	const uint16_t one = 1;
	const int host_little = *(const uint8_t *)&one == 1;

	img->object_format = FMT_OBJ_MACHO;
	img->object_class = s->h.is64 ? 64 : 32;
	img->object_endian = (host_little != s->h.swap) ? 1 : 2;
	img->object_type = (uint16_t)s->h.filetype;
	img->machine = s->h.cputype;
	img->machine_sub = s->h.cpusubtype;
	img->base_address = s->has_text ? s->text_vmaddr : 0;
	img->build_info[FMT_BI_SOURCE_SIZE] = s->n;
	img->build_info[FMT_BI_SOURCE_XXH3] = XXH3_64bits(s->p, (size_t)s->n);
	memset(&img->uuid, 0, sizeof img->uuid);
	memcpy(img->uuid.bytes, s->uuid, 16);
	img->uuid.len = 16;
	img->uuid.kind = FMT_UUID_MACHO;
	img->image_name = ix_str_addz(img->strings, macho_basename(path));
	if (img->image_name == FMT_NONE)
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	for (size_t i = 0; i < s->segs.n; i++) {
		const ix_segment *g = &IX_AT(&s->segs, ix_segment, i);
		ix_segment *d;
		if (g->memsz == 0 && g->filesz == 0)
			continue;
		if (!g->flags) /* __PAGEZERO: reserved, never mapped readable */
			continue;
		if (!(d = ix_vec_push(&img->segments)))
			return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
		*d = *g;
	}
	if (img->segments.n > 1) /* p is NULL when every segment was skipped */
		qsort(img->segments.p, img->segments.n, sizeof(ix_segment), macho_seg_cmp);
	return macho_symbols(img, s, path, eb, ebsz);
}

/* "__debug_str_offs" is "__debug_str_offsets" cut to Mach-O's 16 bytes. */
static void macho_dwarf_name(char *dst, size_t dsz, const char *sect)
{
	if (!strcmp(sect, "__debug_str_offs"))
		snprintf(dst, dsz, ".debug_str_offsets");
	else
		snprintf(dst, dsz, ".%s", sect + 2);
}

/* Serves the slice's __DWARF,__debug_* sections (mapped, never copied). */
static int macho_sections(ix_sections *d, const macho_slice *s, const char *path, char *eb,
                          size_t ebsz)
{
	memset(d, 0, sizeof *d);
	d->path = path;
	d->is64 = s->h.is64;
	d->little = s->h.swap ? 0 : 1;
	d->machine = (uint16_t)s->h.cputype;
	if (!(d->secs = calloc(s->sects.n + 1, sizeof *d->secs)))
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	for (size_t i = 0; i < s->sects.n; i++) {
		const macho_section *x = &IX_AT(&s->sects, macho_section, i);
		ix_debug_section *o;
		char name[48];
		if (strcmp(x->segname, "__DWARF") || strncmp(x->sectname, "__debug_", 8))
			continue;
		if ((x->flags & MO_SECTION_TYPE) == MO_S_ZEROFILL ||
		    (x->flags & MO_SECTION_TYPE) == MO_S_GB_ZEROFILL)
			continue;
		macho_dwarf_name(name, sizeof name, x->sectname);
		if (ix_sections_find(d, name))
			continue;
		if (x->offset > s->n || x->size > s->n - x->offset) {
			ix_sections_close(d);
			return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
			               "%s: section __DWARF,%s lies outside the image", path,
			               x->sectname);
		}
		o = &d->secs[d->nsecs++];
		snprintf(o->name, sizeof o->name, "%s", name);
		o->data = s->p + x->offset;
		o->size = x->size;
	}
	return 0;
}

/* ---- building and publishing ---------------------------------------------- */

/* One input: where staged images go (ix_stage.h). */
typedef struct macho_job {
	ix_stager *st;
	const ix_opts *o;
} macho_job;

static int macho_fill(ix_image *img, const macho_slice *s, const char *path, const macho_slice *dw,
                      const char *dw_path, const ix_opts *o)
{
	char *eb = o->errbuf;
	size_t ebsz = o->errbuf_sz;
	ix_sections d;
	int rc = macho_load(img, s, path, eb, ebsz);

	if (rc == 0 && dw && dw->has_dwarf && !(o->flags & SYMDB_INDEXER_NO_DWARF)) {
		if (dw != s) /* a companion dSYM's slice (§12.5: same-contents test) */
			img->build_info[FMT_BI_DEBUG_XXH3] = XXH3_64bits(dw->p, (size_t)dw->n);
		rc = macho_sections(&d, dw, dw_path, eb, ebsz);
		if (rc == 0) {
			rc = ix_dwarf_index_sections(img, &d, o->cpus, eb, ebsz);
			ix_sections_close(&d);
		}
	}
	/* An image with no symbol and no DWARF is indexed all the same, as
	 * an ELF one (ix_build.c). */
	return rc;
}

/* Index one slice s of path into a staged temp file; its DWARF comes from
 * dw (s itself, a companion dSYM's slice, or NULL).  Whether the image is
 * already indexed is decided by the builder when it publishes (libsymdb). */
static int macho_build_slice(macho_job *j, const macho_slice *s, const char *path,
                             const macho_slice *dw, const char *dw_path)
{
	const char *arch = fmt_mo_arch_name(s->h.cputype, s->h.cpusubtype);
	ix_output *out;
	ix_image img;
	int rc;

	out = calloc(1, sizeof *out);
	if (!out || ix_image_init(&img) < 0) {
		free(out);
		return fmt_err(j->o->errbuf, j->o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	}
	rc = macho_fill(&img, s, path, dw, dw_path, j->o);
	if (rc == 0)
		rc = ix_tables_build(&img, out, j->o->errbuf, j->o->errbuf_sz);
	if (rc == 0)
		rc = ix_stage_image(j->st, &img, out, arch ? arch : "unknown",
		                    dw && dw != s && (img.header_flags & FMT_FLAG_HAS_DWARF)
		                            ? dw_path
		                            : "",
		                    j->o->errbuf, j->o->errbuf_sz);
	ix_output_free(out);
	free(out);
	ix_image_free(&img);
	return rc;
}

/* Every slice of a mapped file, parsed (nothing is published until all
 * slices have parsed, so a bad slice leaves the database untouched). */
typedef struct macho_file {
	macho_map map;
	macho_slice s[FMT_MO_MAX_SLICES];
	int n;
} macho_file;

static void macho_file_free(macho_file *f)
{
	for (int i = 0; i < f->n; i++)
		macho_slice_free(&f->s[i]);
	macho_close(&f->map);
	f->n = 0;
}

static int macho_file_open(macho_file *f, int fd, const char *path, char *eb, size_t ebsz)
{
	fmt_mo_slice sl[FMT_MO_MAX_SLICES];
	int rc, n;

	memset(f, 0, sizeof *f);
	if ((rc = macho_open(fd, path, &f->map, eb, ebsz)) != 0)
		return rc;
	n = fmt_mo_slices(f->map.p, f->map.n, sl, FMT_MO_MAX_SLICES, path, eb, ebsz);
	if (n < 0) {
		macho_close(&f->map);
		return n;
	}
	for (int i = 0; i < n; i++) {
		const char *arch = fmt_mo_arch_name(sl[i].cputype, sl[i].cpusubtype);
		char label[4200];
		/* Errors in a universal file name the slice. */
		if (fmt_mo_kind(f->map.p, f->map.n) == 2)
			snprintf(label, sizeof label, "%s (slice %d, %s)", path, i,
			         arch ? arch : "unknown arch");
		else
			snprintf(label, sizeof label, "%s", path);
		rc = macho_parse(&f->s[i], f->map.p + sl[i].offset, sl[i].size, label, eb, ebsz);
		f->n = i + 1;
		if (rc == 0 && (f->s[i].h.cputype != sl[i].cputype))
			rc = fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
			             "%s: slice %d: universal header says cputype %u, image says %u",
			             path, i, sl[i].cputype, f->s[i].h.cputype);
		for (int k = 0; rc == 0 && k < i; k++)
			if (!memcmp(f->s[k].uuid, f->s[i].uuid, 16))
				rc = fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
				             "%s: slices %d and %d have the same LC_UUID", path, k, i);
		if (rc) {
			macho_file_free(f);
			return rc;
		}
	}
	return 0;
}

/* BINARY.dSYM/Contents/Resources/DWARF/BASENAME next to a binary, as
 * llvm-symbolizer looks for it: the builder found and opened it (SPEC
 * §12.5).  Used only if it parses. */
static int macho_companion(const ix_opts *o, macho_file *d, char *dpath, size_t dpath_sz)
{
	char why[256];

	if (o->companion.fd < 0)
		return 0;
	snprintf(dpath, dpath_sz, "%s", o->companion.name ? o->companion.name : "");
	return macho_file_open(d, o->companion.fd, dpath, why, sizeof why) == 0;
}

static const macho_slice *macho_find_uuid(const macho_file *d, const uint8_t *uuid)
{
	for (int i = 0; i < d->n; i++)
		if (!memcmp(d->s[i].uuid, uuid, 16))
			return &d->s[i];
	return NULL;
}

static int macho_add_file(macho_job *j, int fd, const char *path)
{
	char dpath[4096];
	macho_file *f, *d;
	int rc, have_d = 0;

	f = calloc(2, sizeof *f);
	if (!f)
		return fmt_err(j->o->errbuf, j->o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	d = f + 1;
	rc = macho_file_open(f, fd, path, j->o->errbuf, j->o->errbuf_sz);
	if (rc == 0 && f->n + j->st->n > IX_MAX_IMAGES)
		rc = fmt_err(j->o->errbuf, j->o->errbuf_sz, SYMDB_E_TOO_BIG,
		             "%s: more than %d images in one input", path, IX_MAX_IMAGES);
	if (rc == 0 && f->s[0].h.filetype != FMT_MO_MH_DSYM && !(j->o->flags & SYMDB_INDEXER_NO_DWARF))
		have_d = macho_companion(j->o, d, dpath, sizeof dpath);
	for (int i = 0; rc == 0 && i < f->n; i++) {
		const macho_slice *s = &f->s[i], *dw = s;
		const char *dw_path = path;
		if (!s->has_dwarf && have_d && (dw = macho_find_uuid(d, s->uuid)) != NULL)
			dw_path = dpath;
		rc = macho_build_slice(j, s, path, dw, dw_path);
	}
	if (have_d)
		macho_file_free(d);
	macho_file_free(f);
	free(f);
	return rc;
}

int ix_macho_stage_dsym(ix_stager *stg, const symdb_indexer_file *in, unsigned n,
                        const ix_opts *o)
{
	macho_job j = { stg, o };
	int rc = 0;

	if (n == 0 || n > MO_MAX_DSYM_FILES)
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL, "%u dSYM files given", n);
	for (unsigned i = 0; rc == 0 && i < n; i++)
		rc = macho_add_file(&j, in[i].fd, in[i].name ? in[i].name : "");
	return rc;
}

int ix_macho_stage(ix_stager *stg, int fd, const char *path, const ix_opts *o)
{
	macho_job j = { stg, o };
	uint8_t head[8];
	ssize_t got;

	got = fmt_pread_full(fd, head, sizeof head, 0);
	if (got != (ssize_t)sizeof head || !fmt_mo_kind(head, sizeof head))
		return 1;
	return macho_add_file(&j, fd, path);
}
