/* SPDX-License-Identifier: MIT */
/*
 * fmt_macho.c - Mach-O containers: universal headers, thin headers, load
 * command walks, LC_UUID and architecture names (see fmt_macho.h).
 *
 * The universal header (<mach-o/fat.h>) is always big-endian: fat_header
 * {magic, nfat_arch} then nfat_arch fat_arch records of 20 bytes (cputype,
 * cpusubtype, u32 offset, u32 size, align) or, with FAT_MAGIC_64, 32-byte
 * fat_arch_64 records (u64 offset and size, align, reserved).  A thin image
 * (<mach-o/loader.h>) is in its own byte order, told by the magic.  Offsets
 * inside a slice (sections, LC_SYMTAB) are relative to the slice's start.
 */
#include "fmt_macho.h"

#include <string.h>

#include "format_header.h"
#include "symdb_errors.h"
#include "symdb_endian.h"

int fmt_mo_kind(const uint8_t *p, size_t n)
{
	uint32_t m;

	if (n < 8)
		return 0;
	m = fmt_be32(p);
	if (m == FMT_MO_FAT || m == FMT_MO_FAT_64)
		return 2;
	if (m == FMT_MO_MAGIC || m == FMT_MO_MAGIC_64 ||
	    m == __builtin_bswap32(FMT_MO_MAGIC) || m == __builtin_bswap32(FMT_MO_MAGIC_64))
		return 1;
	return 0;
}

const char *fmt_mo_misfit(const uint8_t *p, size_t n)
{
	uint32_t m;

	if (n < 4)
		return NULL;
	m = fmt_be32(p);
	/* <mach-o/fat.h>: "always in big-endian"; a little-endian one is
	 * written by no tool and read by none (lipo rejects it too) */
	if (m == __builtin_bswap32(FMT_MO_FAT) || m == __builtin_bswap32(FMT_MO_FAT_64))
		return "byte-swapped Mach-O universal header (FAT_CIGAM): universal headers are "
		       "big-endian, this one is not supported";
	if (n < 8 && (m == FMT_MO_FAT || m == FMT_MO_FAT_64))
		return "Mach-O universal header is truncated (no slice count)";
	if (n < 8 && (m == FMT_MO_MAGIC || m == FMT_MO_MAGIC_64 ||
	              m == __builtin_bswap32(FMT_MO_MAGIC) || m == __builtin_bswap32(FMT_MO_MAGIC_64)))
		return "Mach-O header is truncated";
	return NULL;
}

/* Slice i's record against the file: the reason it is unusable, in the
 * words of what is wrong (an offset inside the header is not "outside the
 * file"), or 0. */
static int mo_check_slice(const fmt_mo_slice *s, uint32_t i, uint64_t hdr_end, uint64_t n,
                          const char *path, char *eb, size_t ebsz)
{
	if (s->offset < hdr_end)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: universal header: slice %u at offset %llu overlaps the header "
		               "(%llu bytes)",
		               path, i, (unsigned long long)s->offset, (unsigned long long)hdr_end);
	if (s->size == 0)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: universal header: slice %u is empty (size 0)", path, i);
	if (s->offset > n || s->size > n - s->offset)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: universal header: slice %u (offset %llu, size %llu) lies "
		               "outside the file (%llu bytes)",
		               path, i, (unsigned long long)s->offset, (unsigned long long)s->size,
		               (unsigned long long)n);
	if (s->size < 28)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: universal header: slice %u (%llu bytes) is too small for a "
		               "Mach-O header",
		               path, i, (unsigned long long)s->size);
	return 0;
}

/* At most FMT_MO_MAX_SLICES slices: comparing every pair is cheap. */
static int mo_check_overlap(const fmt_mo_slice *s, size_t n, const char *path, char *eb,
                            size_t ebsz)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const fmt_mo_slice *a = &s[i], *b = &s[j];
			if (a->offset < b->offset + b->size && b->offset < a->offset + a->size)
				return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
				               "%s: universal header: slices %zu and %zu overlap", path,
				               i, j);
		}
	return 0;
}

/* Two slices of one architecture (cputype, and cpusubtype without its
 * capability bits, CPU_SUBTYPE_MASK): lipo makes no such file and llvm's
 * MachOUniversalBinary refuses one ("contains two of the same
 * architecture"), and which slice FILE:ARCH names would be a guess. */
static int mo_check_arches(const fmt_mo_slice *s, size_t n, const char *path, char *eb,
                           size_t ebsz)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (s[i].cputype == s[j].cputype &&
			    (s[i].cpusubtype & 0x00ffffffu) == (s[j].cpusubtype & 0x00ffffffu))
				return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
				               "%s: universal header: slices %zu and %zu are of one "
				               "architecture (cputype %u, cpusubtype %u)",
				               path, i, j, s[i].cputype, s[i].cpusubtype & 0x00ffffffu);
	return 0;
}

int fmt_mo_slices(const uint8_t *p, uint64_t n, fmt_mo_slice *out, size_t max,
                  const char *path, char *eb, size_t ebsz)
{
	uint32_t magic, count, rec;
	uint64_t hdr_end;

	if (fmt_mo_kind(p, (size_t)(n < 8 ? n : 8)) == 1) {
		fmt_mo_header h;
		if (max < 1 || fmt_mo_header_read(p, n, &h, path, eb, ebsz))
			return max < 1 ? SYMDB_E_INVAL : SYMDB_E_BAD_OBJECT;
		out[0] = (fmt_mo_slice){ 0, n, h.cputype, h.cpusubtype };
		return 1;
	}
	if (n < 8 || fmt_mo_kind(p, 8) != 2)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not a Mach-O file", path);
	magic = fmt_be32(p);
	count = fmt_be32(p + 4);
	rec = magic == FMT_MO_FAT_64 ? 32 : 20;
	if (count == 0 || count > FMT_MO_MAX_SLICES || count > max)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: universal header declares %u slices (1 to %u supported)", path,
		               count, (unsigned)(max < FMT_MO_MAX_SLICES ? max : FMT_MO_MAX_SLICES));
	hdr_end = 8 + (uint64_t)count * rec;
	if (hdr_end > n)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: universal header: %u slice records run past the end of the file",
		               path, count);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *r = p + 8 + (uint64_t)i * rec;
		fmt_mo_slice *s = &out[i];
		s->cputype = fmt_be32(r);
		s->cpusubtype = fmt_be32(r + 4);
		s->offset = rec == 32 ? fmt_be64(r + 8) : fmt_be32(r + 8);
		s->size = rec == 32 ? fmt_be64(r + 16) : fmt_be32(r + 12);
		if (mo_check_slice(s, i, hdr_end, n, path, eb, ebsz))
			return SYMDB_E_BAD_OBJECT;
	}
	if (mo_check_overlap(out, count, path, eb, ebsz) ||
	    mo_check_arches(out, count, path, eb, ebsz))
		return SYMDB_E_BAD_OBJECT;
	return (int)count;
}

int fmt_mo_header_read(const uint8_t *p, uint64_t n, fmt_mo_header *h, const char *path,
                       char *eb, size_t ebsz)
{
	uint32_t m;
	uint64_t off = 0;

	memset(h, 0, sizeof *h);
	if (n < 28)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: Mach-O header is truncated", path);
	memcpy(&m, p, 4);
	h->swap = m == __builtin_bswap32(FMT_MO_MAGIC) || m == __builtin_bswap32(FMT_MO_MAGIC_64);
	m = fmt_mo_u32(p, h->swap);
	if (m != FMT_MO_MAGIC && m != FMT_MO_MAGIC_64)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not a thin Mach-O image", path);
	h->is64 = m == FMT_MO_MAGIC_64;
	h->hdr_size = h->is64 ? 32 : 28;
	h->cputype = fmt_mo_u32(p + 4, h->swap);
	h->cpusubtype = fmt_mo_u32(p + 8, h->swap);
	h->filetype = fmt_mo_u32(p + 12, h->swap);
	h->ncmds = fmt_mo_u32(p + 16, h->swap);
	h->sizeofcmds = fmt_mo_u32(p + 20, h->swap);
	h->flags = fmt_mo_u32(p + 24, h->swap);
	if (h->sizeofcmds > n - h->hdr_size || n < h->hdr_size)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: Mach-O sizeofcmds %u runs past the end of the image", path,
		               h->sizeofcmds);
	/* Every command: at least 8 bytes, inside sizeofcmds (<mach-o/loader.h>). */
	for (uint32_t i = 0; i < h->ncmds; i++) {
		uint32_t size;
		if (off + 8 > h->sizeofcmds)
			return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
			               "%s: Mach-O load command %u starts past sizeofcmds (%u)", path, i,
			               h->sizeofcmds);
		size = fmt_mo_u32(p + h->hdr_size + off + 4, h->swap);
		if (size < 8 || size > h->sizeofcmds - off)
			return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
			               "%s: Mach-O load command %u: cmdsize %u runs past sizeofcmds (%u)",
			               path, i, size, h->sizeofcmds);
		off += size;
	}
	return 0;
}

const uint8_t *fmt_mo_next_cmd(const fmt_mo_header *h, const uint8_t *p, uint32_t *idx,
                               uint64_t *off)
{
	const uint8_t *c;

	if (*idx >= h->ncmds)
		return NULL;
	c = p + h->hdr_size + *off;
	*off += fmt_mo_u32(c + 4, h->swap);
	(*idx)++;
	return c;
}

int fmt_mo_uuid(const fmt_mo_header *h, const uint8_t *p, uint8_t uuid[16])
{
	uint32_t i = 0;
	uint64_t off = 0;
	const uint8_t *c;

	while ((c = fmt_mo_next_cmd(h, p, &i, &off)) != NULL)
		if (fmt_mo_u32(c, h->swap) == FMT_MO_LC_UUID && fmt_mo_u32(c + 4, h->swap) >= 24) {
			memcpy(uuid, c + 8, 16);
			return 1;
		}
	return 0;
}

/* <mach/machine.h> values; names as lipo, dwarfdump and atos print them. */
static const char *mo_arm_name(uint32_t sub)
{
	switch (sub) {
	case 5: return "armv4t";
	case 6: return "armv6";
	case 7: return "armv5";
	case 9: return "armv7";
	case 10: return "armv7f";
	case 11: return "armv7s";
	case 12: return "armv7k";
	case 14: return "armv6m";
	case 15: return "armv7m";
	case 16: return "armv7em";
	default: return "arm";
	}
}

const char *fmt_mo_arch_name(uint32_t cputype, uint32_t cpusubtype)
{
	uint32_t sub = cpusubtype & ~FMT_MO_CPU_SUBTYPE_MASK;

	switch (cputype) {
	case 7: return "i386";
	case 7 | FMT_MO_CPU_ARCH_ABI64: return sub == 8 ? "x86_64h" : "x86_64";
	case 12: return mo_arm_name(sub);
	case 12 | FMT_MO_CPU_ARCH_ABI64: return sub == 2 ? "arm64e" : "arm64";
	case 12 | FMT_MO_CPU_ARCH_ABI64_32: return "arm64_32";
	case 18: return "ppc";
	case 18 | FMT_MO_CPU_ARCH_ABI64: return "ppc64";
	default: return NULL;
	}
}
