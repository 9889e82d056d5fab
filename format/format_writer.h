/* SPDX-License-Identifier: MIT */
/*
 * format_writer.h - the writer side of the index file format (SPEC §5-§9):
 * record encoders for every table kind, and a plan that lays out the header,
 * the table directory and the tables, computes every checksum, and writes the
 * result to a file descriptor.
 *
 * The indexer fills big-endian table buffers with the fmt_enc_* encoders,
 * hands them to fmt_wplan_build(), and writes with fmt_wplan_write().  Nothing
 * outside format/ needs to know an offset inside a record.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_WRITER_H
#define SYMDB_FORMAT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "symdb_endian.h"
#include "symdb_format.h"

#define FMT_HIDDEN __attribute__((visibility("hidden")))

/* The header fields a writer chooses (SPEC §5); the rest (magic, versions,
 * sizes, table count, directory offset, checksum) are derived. */
typedef struct fmt_whdr {
	uint32_t flags;          /* FMT_FLAG_* */
	uint8_t object_format;   /* FMT_OBJ_* */
	uint8_t address_size;    /* 4 or 8 */
	uint8_t uuid_kind;       /* FMT_UUID_* */
	uint8_t uuid_len;        /* 1..32 */
	uint8_t uuid[FMT_UUID_MAX];
	uint32_t machine, machine_sub;
	uint8_t object_class;    /* 32 or 64 */
	uint8_t object_endian;   /* 1 little, 2 big */
	uint16_t object_type;
	uint32_t image_name;     /* string reference */
	uint64_t base_address;
} fmt_whdr;

/* One table to write: `length` big-endian bytes holding `count` records. */
typedef struct fmt_wtable {
	uint32_t kind;           /* enum fmt_table_kind */
	uint16_t flags;          /* FMT_TABLE_OPTIONAL or 0 */
	const uint8_t *data;
	uint64_t length, count;
} fmt_wtable;

/* A laid-out file: header + directory bytes, and the tables in kind order at
 * their offsets.  About 6 KiB: allocate it, or keep it off hot stacks. */
typedef struct fmt_wplan {
	uint8_t head[FMT_HEADER_SIZE + FMT_MAX_TABLES * FMT_DIR_ENTRY_SIZE];
	uint64_t head_len;
	uint64_t file_size;
	uint64_t header_checksum;
	unsigned ntables;
	fmt_wtable t[FMT_MAX_TABLES];
	uint64_t offset[FMT_MAX_TABLES];
} fmt_wplan;

/* Lay out a file.  Tables may come in any order; they are written sorted by
 * kind, each 8-aligned, right after the directory.  Checks what a reader
 * would reject: kind repeated or > 64 tables, a Record_Size/Length/Count that
 * disagree (SPEC §6.1), a string pool that does not start and end with NUL
 * (§8), a bad Address_Size or UUID_Length.  Returns 0 or SYMDB_E_INVAL /
 * SYMDB_E_TOO_BIG with a reason in errbuf. */
FMT_HIDDEN int fmt_wplan_build(fmt_wplan *p, const fmt_whdr *h, const fmt_wtable *t,
                               unsigned n, char *errbuf, size_t errbuf_sz);

/* Write the planned file to fd from its current position: header, directory,
 * zero padding, tables.  Returns 0 or -errno (-ENOSPC, -EIO ...). */
FMT_HIDDEN int fmt_wplan_write(const fmt_wplan *p, int fd);

/* ---- record encoders (one per table kind, SPEC §7) ---------------------- */

static inline void fmt_enc_segment(uint8_t *r, uint64_t vaddr, uint64_t memsz,
                                   uint64_t fileoff, uint64_t filesz, uint32_t flags)
{
	fmt_put64(r + FMT_SEG_VADDR, vaddr);
	fmt_put64(r + FMT_SEG_MEMSZ, memsz);
	fmt_put64(r + FMT_SEG_FILEOFF, fileoff);
	fmt_put64(r + FMT_SEG_FILESZ, filesz);
	fmt_put32(r + FMT_SEG_FLAGS, flags);
	fmt_put32(r + FMT_SEG_RESERVED, 0);
}

static inline void fmt_enc_symbol(uint8_t *r, uint64_t size, uint32_t name, uint32_t flags)
{
	fmt_put64(r + FMT_SYM_LENGTH, size);
	fmt_put32(r + FMT_SYM_NAME, name);
	fmt_put32(r + FMT_SYM_FLAGS, flags);
}

/* §7.2.1: one SYMBOL_FILES record, the STT_FILE name of symbol i (0 = none). */
static inline void fmt_enc_symbol_file(uint8_t *r, uint32_t file)
{
	fmt_put32(r, file);
}

static inline void fmt_enc_file(uint8_t *r, uint32_t path, uint32_t relative, uint32_t base)
{
	fmt_put32(r + FMT_FILE_PATH, path);
	fmt_put32(r + FMT_FILE_RELATIVE, relative);
	fmt_put32(r + FMT_FILE_BASE, base);
}

/* §7.3.1: one FILE_SOURCES record. */
static inline void fmt_enc_file_source(uint8_t *r, uint32_t path, uint32_t source)
{
	fmt_put32(r + FMT_FSRC_PATH, path);
	fmt_put32(r + FMT_FSRC_SOURCE, source);
}

static inline void fmt_enc_function(uint8_t *r, uint64_t die_offset, uint32_t linkage_name,
                                    uint32_t name, uint32_t decl_file, uint32_t decl_line)
{
	fmt_put64(r + FMT_FN_DIE_OFFSET, die_offset);
	fmt_put32(r + FMT_FN_LINKAGE_NAME, linkage_name);
	fmt_put32(r + FMT_FN_NAME, name);
	fmt_put32(r + FMT_FN_DECL_FILE, decl_file);
	fmt_put32(r + FMT_FN_DECL_LINE, decl_line);
}

/* INLINE_NODES record (§7.5); low_pc is already an offset from Base_Address. */
static inline void fmt_enc_node(uint8_t *r, uint32_t parent, uint32_t function,
                                uint32_t call_file, uint32_t call_line, uint32_t call_column,
                                uint32_t call_discr, uint16_t depth, uint16_t flags,
                                uint64_t low_pc)
{
	fmt_put32(r + FMT_NODE_PARENT, parent);
	fmt_put32(r + FMT_NODE_FUNCTION, function);
	fmt_put32(r + FMT_NODE_CALL_FILE, call_file);
	fmt_put32(r + FMT_NODE_CALL_LINE, call_line);
	fmt_put32(r + FMT_NODE_CALL_COLUMN, call_column);
	fmt_put32(r + FMT_NODE_CALL_DISCR, call_discr);
	fmt_put16(r + FMT_NODE_DEPTH, depth);
	fmt_put16(r + FMT_NODE_FLAGS, flags);
	fmt_put32(r + FMT_NODE_RESERVED, 0);
	fmt_put64(r + FMT_NODE_LOW_PC, low_pc);
}

static inline void fmt_enc_row(uint8_t *r, uint32_t file, uint32_t line, uint32_t column,
                               uint32_t discr)
{
	fmt_put32(r + FMT_ROW_FILE, file);
	fmt_put32(r + FMT_ROW_LINE, line);
	fmt_put32(r + FMT_ROW_COLUMN, column);
	fmt_put32(r + FMT_ROW_DISCR, discr);
}

#endif /* SYMDB_FORMAT_WRITER_H */
