/* SPDX-License-Identifier: MIT */
/*
 * ix_sections.c - maps an ELF file and hands out its debug sections,
 * inflated once.
 *
 * libelf 0.188 and libdwarf 20210528 cannot inflate zstd (ELFCOMPRESS_ZSTD),
 * so symdb does all decompression itself here: SHF_COMPRESSED sections
 * (gABI "Section Compression": an Elf32_Chdr/Elf64_Chdr, then the stream)
 * with libdeflate (zlib streams) or libzstd, and the legacy GNU ".zdebug_*"
 * form ("ZLIB", 8-byte big-endian size, zlib stream).  Declared sizes are bounded (IX_MAX_SECTION_SIZE and
 * IX_MAX_RATIO times the compressed size) so a hostile file cannot make us
 * allocate gigabytes for a few bytes.  ix_dwarf.c serves the results to
 * libdwarf through its object-access interface.
 *
 * The sections are inflated on up to IX_INFLATE_THREADS threads at once,
 * largest first (each zlib or zstd stream is serial: a big C++ image's
 * .debug_info alone is 70 % of its inflation, so the others go beside it).
 *
 * The same pass records the GNU build-id note and .gnu_debuglink, which
 * ix_debugfile.c needs to find a separate debug file.
 */
#define _DEFAULT_SOURCE /* mmap, O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>

#include "ix_dwarf_internal.h"
#include "ix_reloc.h"
#include "format_header.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2 /* gABI 2022; not in elfutils 0.188's elf.h */
#endif

static uint64_t read_uint(const uint8_t *p, int n, int little)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (little ? i : n - 1 - i));
	return v;
}

static int check_bomb(uint64_t declared, uint64_t packed, char *why, size_t why_sz)
{
	if (declared > IX_MAX_SECTION_SIZE ||
	    declared / IX_MAX_RATIO > packed + 4096) {
		snprintf(why, why_sz,
			 "compressed section declares %llu bytes from %llu (refused: decompression bomb)",
			 (unsigned long long)declared, (unsigned long long)packed);
		return -1;
	}
	return 0;
}

/*
 * A zlib stream (RFC 1950) whose inflated size the header declares, into
 * dst: whole-buffer inflation with libdeflate, about twice as fast as zlib's
 * streaming inflate() on these sections (the libc6-dbg file: 8.6 MB of
 * sections).  As with zlib, bytes after the end of the stream are ignored.
 */
static int inflate_zlib(const uint8_t *src, uint64_t n, uint8_t *dst, uint64_t size,
			char *why, size_t why_sz)
{
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (!d) {
		snprintf(why, why_sz, "out of memory for the zlib decompressor");
		return -1;
	}
	size_t in_used = 0, got = 0;
	enum libdeflate_result r = libdeflate_zlib_decompress_ex(d, src, (size_t)n, dst,
								 (size_t)size, &in_used, &got);
	libdeflate_free_decompressor(d);
	if (r != LIBDEFLATE_SUCCESS || got != size) {
		snprintf(why, why_sz, "zlib stream is corrupt or shorter than declared (%llu of %llu bytes)",
			 (unsigned long long)(r == LIBDEFLATE_SUCCESS ? got : 0),
			 (unsigned long long)size);
		return -1;
	}
	return 0;
}

static int inflate_zstd(const uint8_t *src, uint64_t n, uint8_t *dst, uint64_t size,
			char *why, size_t why_sz)
{
	size_t r = ZSTD_decompress(dst, (size_t)size, src, (size_t)n);
	if (ZSTD_isError(r) || r != size) {
		snprintf(why, why_sz, "zstd stream is corrupt or shorter than declared (%s)",
			 ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short");
		return -1;
	}
	return 0;
}

int ix_inflate_chdr(const uint8_t *p, uint64_t n, int is64, int little,
		    uint8_t **out, uint64_t *out_size, char *why, size_t why_sz)
{
	/* Elf64_Chdr: u32 type, u32 reserved, u64 size, u64 align (24 bytes);
	 * Elf32_Chdr: u32 type, u32 size, u32 align (12 bytes). */
	uint64_t hdr = is64 ? 24 : 12;
	if (n < hdr) {
		snprintf(why, why_sz, "compressed section shorter than its header");
		return -1;
	}
	uint32_t type = (uint32_t)read_uint(p, 4, little);
	uint64_t size = is64 ? read_uint(p + 8, 8, little) : read_uint(p + 4, 4, little);
	if (type != ELFCOMPRESS_ZLIB && type != ELFCOMPRESS_ZSTD) {
		snprintf(why, why_sz, "unknown compression type %u", type);
		return -1;
	}
	if (check_bomb(size, n - hdr, why, why_sz))
		return -1;
	uint8_t *dst = malloc(size ? size : 1);
	if (!dst) {
		snprintf(why, why_sz, "out of memory inflating %llu bytes", (unsigned long long)size);
		return -1;
	}
	int rc = type == ELFCOMPRESS_ZLIB
			 ? inflate_zlib(p + hdr, n - hdr, dst, size, why, why_sz)
			 : inflate_zstd(p + hdr, n - hdr, dst, size, why, why_sz);
	if (rc) {
		free(dst);
		return -1;
	}
	*out = dst;
	*out_size = size;
	return 0;
}

/* Legacy GNU .zdebug_*: "ZLIB", u64 big-endian size, zlib stream. */
static int inflate_zdebug(const uint8_t *p, uint64_t n, uint8_t **out,
			  uint64_t *out_size, char *why, size_t why_sz)
{
	if (n < 12 || memcmp(p, "ZLIB", 4) != 0) {
		snprintf(why, why_sz, ".zdebug section without a ZLIB header");
		return -1;
	}
	uint64_t size = read_uint(p + 4, 8, 0);
	if (check_bomb(size, n - 12, why, why_sz))
		return -1;
	uint8_t *dst = malloc(size ? size : 1);
	if (!dst) {
		snprintf(why, why_sz, "out of memory inflating %llu bytes", (unsigned long long)size);
		return -1;
	}
	if (inflate_zlib(p + 12, n - 12, dst, size, why, why_sz)) {
		free(dst);
		return -1;
	}
	*out = dst;
	*out_size = size;
	return 0;
}

/* Records NT_GNU_BUILD_ID from one SHT_NOTE section. */
static void scan_notes(ix_sections *s, Elf_Scn *scn)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;
	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= sizeof(s->build_id) && !s->build_id_len) {
			memcpy(s->build_id, (const uint8_t *)d->d_buf + desc_off, nh.n_descsz);
			s->build_id_len = nh.n_descsz;
		}
		off = next;
	}
}

/* .gnu_debuglink: NUL-terminated name, padding to 4, CRC32 in file order. */
static void read_debuglink(ix_sections *s, const uint8_t *p, uint64_t n)
{
	size_t len = strnlen((const char *)p, (size_t)n);
	uint64_t crc_off = (len + 4) & ~(uint64_t)3;
	if (len == 0 || len >= sizeof(s->debuglink) || crc_off + 4 > n)
		return;
	memcpy(s->debuglink, p, len);
	s->debuglink[len] = 0;
	s->debuglink_crc = (uint32_t)read_uint(p + crc_off, 4, s->little);
}

/* A compressed section waiting for inflate_all. */
typedef struct pending {
	size_t sec; /* index in s->secs */
	const uint8_t *raw;
	uint64_t n;
	int zdebug, rc;
	char name[48]; /* as the file names it, for messages */
	char why[192];
} pending;

typedef struct pending_list {
	pending *p;
	size_t n, cap;
} pending_list;

static int add_section(ix_sections *s, pending_list *pl, const char *name, const GElf_Shdr *sh,
		       char *why, size_t why_sz)
{
	int z = strncmp(name, ".zdebug_", 8) == 0;
	if (strlen(name) + 1 - z > sizeof(s->secs[0].name))
		return 0;
	if (sh->sh_offset > s->map_size || sh->sh_size > s->map_size - sh->sh_offset) {
		snprintf(why, why_sz, "section %s lies outside the file", name);
		return -1;
	}
	ix_debug_section *ns = realloc(s->secs, (s->nsecs + 1) * sizeof(*ns));
	if (!ns) {
		snprintf(why, why_sz, "out of memory");
		return -1;
	}
	s->secs = ns;
	ix_debug_section *d = &s->secs[s->nsecs];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), ".%s", name + 1 + z);
	const uint8_t *raw = (const uint8_t *)s->map + sh->sh_offset;
	if ((sh->sh_flags & SHF_COMPRESSED) || z) {
		if (pl->n == pl->cap) {
			size_t cap = pl->cap ? 2 * pl->cap : 16;
			pending *np = realloc(pl->p, cap * sizeof(*np));
			if (!np) {
				snprintf(why, why_sz, "out of memory");
				return -1;
			}
			pl->p = np;
			pl->cap = cap;
		}
		pending *q = &pl->p[pl->n++];
		*q = (pending){ .sec = s->nsecs, .raw = raw, .n = sh->sh_size, .zdebug = z };
		snprintf(q->name, sizeof(q->name), "%s", name);
	} else {
		d->data = raw;
		d->size = sh->sh_size;
	}
	s->nsecs++;
	return 0;
}

/* ---- inflating the compressed sections, in parallel ---------------------- */

#define IX_INFLATE_THREADS 4

typedef struct inflate_run {
	ix_sections *s;
	pending_list *pl;
	size_t *order; /* pl indexes, largest compressed size first */
	atomic_size_t next;
} inflate_run;

static void inflate_one(ix_sections *s, pending *q)
{
	ix_debug_section *d = &s->secs[q->sec];
	q->rc = q->zdebug ? inflate_zdebug(q->raw, q->n, &d->owned, &d->size, q->why,
					   sizeof(q->why))
			  : ix_inflate_chdr(q->raw, q->n, s->is64, s->little, &d->owned,
					    &d->size, q->why, sizeof(q->why));
	d->data = d->owned;
}

static void *inflate_worker(void *arg)
{
	inflate_run *r = arg;
	for (;;) {
		size_t k = atomic_fetch_add(&r->next, 1);
		if (k >= r->pl->n)
			return NULL;
		inflate_one(r->s, &r->pl->p[r->order[k]]);
	}
}

/* Inflates every pending section; the first failure in section order
 * becomes the message (as when they were inflated one by one).  A thread
 * that cannot start leaves its share to the others. */
static int inflate_all(ix_sections *s, pending_list *pl, char *why, size_t why_sz)
{
	inflate_run r = { .s = s, .pl = pl, .order = malloc((pl->n + 1) * sizeof(size_t)) };
	if (!r.order) {
		snprintf(why, why_sz, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < pl->n; i++) { /* insertion sort: a dozen sections */
		size_t j = i;
		for (; j > 0 && pl->p[r.order[j - 1]].n < pl->p[i].n; j--)
			r.order[j] = r.order[j - 1];
		r.order[j] = i;
	}
	atomic_init(&r.next, 0);
	pthread_t tid[IX_INFLATE_THREADS];
	int started[IX_INFLATE_THREADS] = { 0 };
	size_t nt = pl->n < IX_INFLATE_THREADS ? pl->n : IX_INFLATE_THREADS;
	for (size_t i = 1; i < nt; i++)
		started[i] = pthread_create(&tid[i], NULL, inflate_worker, &r) == 0;
	inflate_worker(&r);
	for (size_t i = 1; i < nt; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	free(r.order);
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->p[i].rc) {
			snprintf(why, why_sz, "section %s: %s", pl->p[i].name, pl->p[i].why);
			return -1;
		}
	}
	return 0;
}

/* The debug sections the indexer reads (itself or through libdwarf).  The
 * others (.debug_loclists, .debug_loc, .debug_macro, .debug_frame, name
 * indexes...) are neither mapped nor inflated: in libc6-dbg's .debug file
 * .debug_loclists alone is a sixth of the compressed DWARF. */
static int wanted(const char *name)
{
	static const char *const keep[] = {
		"info", "abbrev", "str", "line_str", "str_offsets", "addr", "line",
		"aranges", "ranges", "rnglists", "cu_index",
	};
	const char *n = name + (name[1] == 'z' ? 8 : 7);
	/* A split DWARF file's sections (.debug_info.dwo) are read too. */
	size_t len = strlen(n);
	if (len > 4 && strcmp(n + len - 4, ".dwo") == 0)
		len -= 4;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (strlen(keep[i]) == len && strncmp(n, keep[i], len) == 0)
			return 1;
	return 0;
}

/* Whether the units of a .debug_info(.dwo) section include one that is not
 * a type unit: DWARF 5's DW_UT_type (2) and DW_UT_split_type (6); before
 * version 5 type units are in .debug_types, so any unit is one.  Reads the
 * unit headers only, at most 4096 of them. */
static int holds_compile_unit(const uint8_t *p, uint64_t n, int little)
{
	uint64_t off = 0;

	for (int k = 0; k < 4096 && n - off >= 11; k++) {
		uint64_t len = read_uint(p + off, 4, little);
		unsigned hdr = 4;
		if (len == 0xffffffffu) {
			if (n - off < 23)
				return 0;
			len = read_uint(p + off + 4, 8, little);
			hdr = 12;
		} else if (len >= 0xfffffff0u) {
			return 0;
		}
		uint64_t version = read_uint(p + off + hdr, 2, little);
		uint8_t type = p[off + hdr + 2];
		if (version < 5 || (type != 2 && type != 6))
			return 1;
		if (len > n - off - hdr)
			return 0;
		off += hdr + len;
	}
	return 0;
}

/* A second section of an existing name.  gcc 12's -gsplit-dwarf
 * -fdebug-types-section writes two .debug_info.dwo into a .dwo, the type
 * units' first (libdwarf refuses duplicated names: one is kept): the one
 * holding the compile unit is the one to read, as LLVM reads them all.
 * Otherwise the first wins.  A relocatable object's .debug_info is not
 * swapped: its sections are relocated by index (a .dwo, ET_REL too, has
 * no relocations). */
static void duplicate_section(ix_sections *s, const char *name, const GElf_Shdr *sh, int rel)
{
	ix_debug_section *d = NULL;
	for (size_t i = 0; i < s->nsecs; i++)
		if (strcmp(s->secs[i].name, name) == 0)
			d = &s->secs[i];
	int dwo = strcmp(name, ".debug_info.dwo") == 0; /* never relocated */
	if (!d || (rel && !dwo) || !d->data || (sh->sh_flags & SHF_COMPRESSED) ||
	    (!dwo && strcmp(name, ".debug_info") != 0) ||
	    sh->sh_offset > s->map_size || sh->sh_size > s->map_size - sh->sh_offset)
		return;
	const uint8_t *raw = (const uint8_t *)s->map + sh->sh_offset;
	if (!holds_compile_unit(d->data, d->size, s->little) &&
	    holds_compile_unit(raw, sh->sh_size, s->little)) {
		d->data = raw;
		d->size = sh->sh_size;
	}
}

static int scan_sections(ix_sections *s, Elf *elf, pending_list *pl, int rel, char *why,
                         size_t why_sz)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0; /* no section headers: no debug info, not an error */
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_NOTE) {
			scan_notes(s, scn);
			continue;
		}
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (strcmp(name, ".gnu_debuglink") == 0 && sh.sh_offset <= s->map_size &&
		    sh.sh_size <= s->map_size - sh.sh_offset) {
			read_debuglink(s, (const uint8_t *)s->map + sh.sh_offset, sh.sh_size);
			continue;
		}
		if (strncmp(name, ".debug_", 7) != 0 && strncmp(name, ".zdebug_", 8) != 0)
			continue;
		if (!wanted(name))
			continue;
		if (ix_sections_find(s, name[1] == 'z' ? name + 1 : name)) {
			if (name[1] != 'z')
				duplicate_section(s, name, &sh, rel);
			continue;
		}
		if (add_section(s, pl, name, &sh, why, why_sz))
			return -1;
	}
	return 0;
}

int ix_sections_open(ix_sections *s, int fd, const char *path, char *errbuf, size_t errbuf_sz)
{
	char why[256] = "";
	memset(s, 0, sizeof(*s));
	s->path = path;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 16) {
		return fmt_err(errbuf, errbuf_sz, SYMDB_E_BAD_OBJECT, "%s: not a regular ELF file",
		               path);
	}
	s->map_size = (size_t)st.st_size;
	/* Private writable mapping: libelf wants a non-const buffer; nothing is
	 * written, so no page is ever copied. */
	s->map = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (s->map == MAP_FAILED) {
		int e = errno;
		s->map = NULL;
		return fmt_err(errbuf, errbuf_sz, -e, "%s: mmap: %s", path, strerror(e));
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory(s->map, s->map_size);
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		ix_sections_close(s);
		return fmt_err(errbuf, errbuf_sz, SYMDB_E_BAD_OBJECT, "%s: not an ELF file", path);
	}
	s->is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	s->little = eh.e_ident[EI_DATA] != ELFDATA2MSB;
	s->machine = eh.e_machine;
	pending_list pl = { 0 };
	int rc = scan_sections(s, elf, &pl, eh.e_type == ET_REL, why, sizeof(why));
	/* Also when the scan failed: a compressed section before the one it
	 * refused may be corrupt too, and is then the one reported (as when
	 * each section was inflated as it was met). */
	if (pl.n && inflate_all(s, &pl, why, sizeof(why)))
		rc = -1;
	free(pl.p);
	/* an object file's debug sections are relocated (SPEC §7.8) */
	if (rc == 0 && eh.e_type == ET_REL)
		rc = ix_reloc_apply(s, elf, why, sizeof(why));
	elf_end(elf);
	if (rc) {
		ix_sections_close(s);
		return fmt_err(errbuf, errbuf_sz, SYMDB_E_DWARF, "%s: %s", path, why);
	}
	return 0;
}

void ix_sections_close(ix_sections *s)
{
	for (size_t i = 0; i < s->nsecs; i++)
		free(s->secs[i].owned);
	free(s->secs);
	ix_reloc_free(s->reloc);
	if (s->map)
		munmap(s->map, s->map_size);
	memset(s, 0, sizeof(*s));
}

void ix_sections_release(ix_sections *s, const char *keep)
{
	for (size_t i = 0; i < s->nsecs; i++) {
		ix_debug_section *d = &s->secs[i];
		if (!d->owned || strcmp(d->name, keep) == 0)
			continue;
		free(d->owned);
		d->owned = NULL;
		d->data = NULL;
		d->size = 0;
	}
}

const ix_debug_section *ix_sections_find(const ix_sections *s, const char *name)
{
	for (size_t i = 0; i < s->nsecs; i++)
		if (strcmp(s->secs[i].name, name) == 0)
			return &s->secs[i];
	return NULL;
}
