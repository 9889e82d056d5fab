/* SPDX-License-Identifier: MIT */
/*
 * fmt_macho.h - the Mach-O container layer shared by the reader (which keys
 * lookups by LC_UUID, symdb_file_uuids) and the indexer (ix_macho.c): the
 * universal ("fat") header, the thin mach_header, a bounds-checked walk of
 * the load commands, LC_UUID, and architecture names as Apple's tools spell
 * them.
 *
 * Layouts are those of <mach-o/fat.h> and <mach-o/loader.h>; nothing here
 * includes them (they do not exist on Linux).  Every offset read from a file
 * is checked against the caller's byte count before it is used: inputs are
 * untrusted.  Internal: not installed.
 */
#ifndef SYMDB_FMT_MACHO_H
#define SYMDB_FMT_MACHO_H

#include <stddef.h>
#include <stdint.h>

#define FMT_MO_HIDDEN __attribute__((visibility("hidden")))

#define FMT_MO_MAGIC      0xfeedfaceu
#define FMT_MO_MAGIC_64   0xfeedfacfu
#define FMT_MO_FAT        0xcafebabeu
#define FMT_MO_FAT_64     0xcafebabfu
#define FMT_MO_MAX_SLICES 64 /* real universal files hold 2 to 4 */

#define FMT_MO_LC_SEGMENT    0x01u
#define FMT_MO_LC_SYMTAB     0x02u
#define FMT_MO_LC_SEGMENT_64 0x19u
#define FMT_MO_LC_UUID       0x1bu

#define FMT_MO_MH_OBJECT  0x1u
#define FMT_MO_MH_EXECUTE 0x2u
#define FMT_MO_MH_DSYM    0xau

#define FMT_MO_CPU_ARCH_ABI64    0x01000000u
#define FMT_MO_CPU_ARCH_ABI64_32 0x02000000u
#define FMT_MO_CPU_SUBTYPE_MASK  0xff000000u /* capability bits (arm64e ptrauth) */

/* One architecture slice of a file (the whole file when thin). */
typedef struct fmt_mo_slice {
	uint64_t offset, size;
	uint32_t cputype, cpusubtype;
} fmt_mo_slice;

/* A validated thin header: every load command lies inside sizeofcmds and
 * inside the slice, each at least 8 bytes. */
typedef struct fmt_mo_header {
	int is64, swap; /* swap: the image's byte order is not the host's */
	uint32_t cputype, cpusubtype, filetype, ncmds, sizeofcmds, flags;
	uint32_t hdr_size; /* 28 or 32 */
} fmt_mo_header;

static inline uint32_t fmt_mo_u32(const uint8_t *p, int swap)
{
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t fmt_mo_u64(const uint8_t *p, int swap)
{
	uint64_t v;
	__builtin_memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

/* 0: not Mach-O; 1: thin (either byte order); 2: universal. */
FMT_MO_HIDDEN int fmt_mo_kind(const uint8_t *p, size_t n);

/* For the first n bytes of a file that fmt_mo_kind() rejects: the reason
 * when they look like a Mach-O container symdb cannot read (a byte-swapped
 * universal header, FAT_CIGAM; a universal or thin header cut short), so
 * that such a file is not called "not an ELF file"; else NULL.  A static
 * string. */
FMT_MO_HIDDEN const char *fmt_mo_misfit(const uint8_t *p, size_t n);

/* The slices of a file of n bytes (a thin file is one slice).  Universal
 * headers are checked: slice count at most FMT_MO_MAX_SLICES, every slice
 * inside the file, after the header, and no two overlapping.  Returns the
 * count (<= max) or SYMDB_E_BAD_OBJECT with "PATH: reason" in eb. */
FMT_MO_HIDDEN int fmt_mo_slices(const uint8_t *p, uint64_t n, fmt_mo_slice *out, size_t max,
                                const char *path, char *eb, size_t ebsz);

/* Reads and validates the thin header at p (n bytes of slice).  Returns 0 or
 * SYMDB_E_BAD_OBJECT with a reason. */
FMT_MO_HIDDEN int fmt_mo_header_read(const uint8_t *p, uint64_t n, fmt_mo_header *h,
                                     const char *path, char *eb, size_t ebsz);

/* Load command iteration over a validated header: *off starts at 0; returns
 * a pointer to the next command (cmd and cmdsize readable with fmt_mo_u32)
 * or NULL at the end. */
FMT_MO_HIDDEN const uint8_t *fmt_mo_next_cmd(const fmt_mo_header *h, const uint8_t *p,
                                             uint32_t *idx, uint64_t *off);

/* The 16 LC_UUID bytes of a validated slice: 1 found, 0 none. */
FMT_MO_HIDDEN int fmt_mo_uuid(const fmt_mo_header *h, const uint8_t *p, uint8_t uuid[16]);

/* "arm64", "x86_64", "armv7", ... or NULL for an unknown cputype. */
FMT_MO_HIDDEN const char *fmt_mo_arch_name(uint32_t cputype, uint32_t cpusubtype);

#endif /* SYMDB_FMT_MACHO_H */
