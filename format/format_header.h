/* SPDX-License-Identifier: MIT */
/*
 * format_header.h - parse and validate the header and table directory of an
 * index file held in memory (SPEC §5, §6), producing a view: every header
 * field decoded once, and one slot per known table kind pointing at its bytes.
 *
 * fmt_view_parse() is O(Table_Count): it checks everything that can be
 * checked without touching table contents, so that after it succeeds every
 * table slot lies inside the buffer and any record index below its Count can
 * be read without further bounds checks.  Table checksums (O(file size)) are
 * checked on demand by fmt_view_check_sums().  Shared by the reader, the
 * indexer (to validate what it wrote) and the tests.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_HEADER_H
#define SYMDB_FORMAT_HEADER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "format_pack.h"
#include "symdb_format.h"

#define FMT_HIDDEN __attribute__((visibility("hidden")))

/* One directory entry (SPEC §6).  `p` is NULL when the kind is absent. */
typedef struct fmt_table {
	const uint8_t *p;
	uint64_t offset, length, count, checksum;
	uint32_t kind;
	uint16_t flags, record_size;
	uint32_t dir_index; /* position in the directory, for error messages */
} fmt_table;

/* A validated file.  Pointers refer to the caller's buffer. */
typedef struct fmt_view {
	const uint8_t *base;
	uint64_t size;
	unsigned version_major, version_minor;
	uint32_t header_size;
	uint32_t flags;                 /* FMT_FLAG_* */
	uint8_t object_format, address_size, uuid_kind, uuid_len;
	uint8_t uuid[FMT_UUID_MAX];
	uint32_t machine, machine_sub;
	uint8_t object_class, object_endian;
	uint16_t object_type;
	uint32_t image_name;            /* string reference, < strings length */
	uint64_t base_address;
	uint32_t table_count;
	uint64_t dir_offset;
	uint64_t header_checksum;
	int has_dwarf;                  /* the DWARF tables (5..11) are present */
	int packed;                     /* format 2: kinds 6-11 as SPEC §7.9 */
	fmt_table t[FMT_T_KIND_MAX + 1]; /* by kind; t[0] unused */
} fmt_view;

/* The name of a table kind ("SYMBOLS"), or "unknown". */
FMT_HIDDEN const char *fmt_table_name(uint32_t kind);

/* The Record_Size SPEC §6.1 gives `kind` in a file of this Address_Size
 * written by the current format (FMT_VERSION_MAJOR); -1 for a kind this
 * version does not know. */
FMT_HIDDEN int fmt_record_size(uint32_t kind, unsigned address_size);
/* The same for a file of Version_Major `major` (1 or 2). */
FMT_HIDDEN int fmt_record_size_v(uint32_t kind, unsigned address_size, unsigned major);
/* Is `kind` a packed table (SPEC §7.9: Record_Size 0, Count of records or
 * rows, Length not Count x Record_Size) in a file of that major? */
FMT_HIDDEN int fmt_table_packed(uint32_t kind, unsigned major);

/* XXH3-64 of the header's first 120 bytes followed by `table_count`
 * directory entries at `dir` (SPEC §5 Header_Checksum). */
FMT_HIDDEN uint64_t fmt_header_checksum(const uint8_t *header, const uint8_t *dir,
                                        uint32_t table_count);

/*
 * Validate `size` bytes at `buf` as an index file whose File_Size must equal
 * `size` (the caller passes the fstat size), and fill *v.  Returns 0, or
 * SYMDB_E_FORMAT (bad magic / too short to be one), SYMDB_E_VERSION,
 * SYMDB_E_CHECKSUM (Header_Checksum) or SYMDB_E_CORRUPT, with a one-line
 * reason naming the field in errbuf (e.g. "table 4 (SYMBOLS) ends past EOF
 * (0x1200 > 0x1000)").  The buffer must be 8-byte aligned only for speed.
 */
FMT_HIDDEN int fmt_view_parse(const void *buf, uint64_t size, fmt_view *v,
                              char *errbuf, size_t errbuf_sz);

/* Recompute every table's XXH3-64 (SPEC §9).  Returns 0 or SYMDB_E_CHECKSUM
 * naming the first bad table. */
FMT_HIDDEN int fmt_view_check_sums(const fmt_view *v, char *errbuf, size_t errbuf_sz);

/* Check that every byte outside the header, directory and tables is zero
 * (SPEC §4 padding).  Returns 0 or SYMDB_E_CORRUPT. */
FMT_HIDDEN int fmt_view_check_padding(const fmt_view *v, char *errbuf, size_t errbuf_sz);

/* snprintf into errbuf (NULL-safe) and return rc; for one-line reasons.
 * The text is escaped as fmt_escape() does, so errbuf is always one line of
 * valid UTF-8 whatever the arguments hold (a reason from another errbuf
 * stays as it is).  A format starting "%s: " or "%s" + literal + ": "
 * ("%s/catalog: ", a path then the reason) keeps the whole reason when the
 * text does not fit: the path is shortened in the middle ("..."), between
 * two escapes. */
FMT_HIDDEN int fmt_err(char *errbuf, size_t errbuf_sz, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* fmt_err with a va_list, for callers' own printf-like wrappers. */
FMT_HIDDEN int fmt_verr(char *errbuf, size_t errbuf_sz, int rc, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* Copy the n bytes at s into dst as one line of valid UTF-8, the command
 * line's escapes (README "Names in output"): \n \t \r, \xNN for the other
 * bytes below 0x20 and DEL, for bytes that are not valid UTF-8 and for C1
 * controls, \\ for a backslash - except one that starts such an escape
 * already, so that escaping escaped text changes nothing.  Cut between two
 * escapes to fit dst_sz (NUL included); returns the length written. */
FMT_HIDDEN size_t fmt_escape(char *dst, size_t dst_sz, const char *s, size_t n);

#endif /* SYMDB_FORMAT_HEADER_H */
