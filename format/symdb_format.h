/* SPDX-License-Identifier: MIT */
/*
 * symdb_format.h - the byte layout of a symdb index file and of the catalog
 * values, as constants.  This header (with symdb_endian.h and the format_*.c
 * files) is the only code in symdb that knows where a byte lives; the indexer
 * writes and the reader reads through it.  Every constant cites the SPEC.md
 * section that defines it; if the two ever disagree, SPEC.md is right and this
 * file has a bug.
 *
 * Internal: not installed, not part of the public API.
 */
#ifndef SYMDB_FORMAT_H
#define SYMDB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- SPEC §5 Header ---------------------------------------------------- */

/* "\x89SYMDB\r\n": a non-ASCII first byte (not text), CR LF to detect
 * line-ending conversion, as PNG does. */
#define FMT_MAGIC            "\x89SYMDB\r\n"
#define FMT_MAGIC_LEN        8
#define FMT_VERSION_MAJOR    2   /* what the writer writes (SPEC §7.9, §15) */
#define FMT_VERSION_MINOR    0
/* The other major a reader reads: 1.0-1.2, the unpacked DWARF tables of
 * SPEC §7.4-§7.6.  1.1 added SYMBOL_FILES (kind 13), 1.2 the other file's
 * symbol table (kinds 14-16) and embedded sources (17); major 2 keeps all. */
#define FMT_V1_MAJOR         1
#define FMT_V1_MINOR         2   /* the last minor of major 1 */
#define FMT_HEADER_SIZE      128

/* Field offsets inside the header (SPEC §5). */
#define FMT_H_MAGIC          0   /* 8 bytes */
#define FMT_H_VERSION_MAJOR  8   /* u16 */
#define FMT_H_VERSION_MINOR  10  /* u16 */
#define FMT_H_HEADER_SIZE    12  /* u32 */
#define FMT_H_FILE_SIZE      16  /* u64 */
#define FMT_H_FLAGS          24  /* u32 */
#define FMT_H_OBJECT_FORMAT  28  /* u8 */
#define FMT_H_ADDRESS_SIZE   29  /* u8: 4 or 8 */
#define FMT_H_UUID_KIND      30  /* u8 */
#define FMT_H_UUID_LENGTH    31  /* u8: 1..32 */
#define FMT_H_UUID           32  /* 32 bytes, zero padded */
#define FMT_H_MACHINE        64  /* u32 */
#define FMT_H_MACHINE_SUB    68  /* u32 */
#define FMT_H_OBJECT_CLASS   72  /* u8: 32 or 64 */
#define FMT_H_OBJECT_ENDIAN  73  /* u8: 1 little, 2 big */
#define FMT_H_OBJECT_TYPE    74  /* u16 */
#define FMT_H_IMAGE_NAME     76  /* u32 string reference */
#define FMT_H_BASE_ADDRESS   80  /* u64 */
#define FMT_H_TABLE_COUNT    88  /* u32 */
#define FMT_H_RESERVED0      92  /* u32, must be 0 */
#define FMT_H_DIR_OFFSET     96  /* u64 */
#define FMT_H_RESERVED1      104 /* 16 bytes, must be 0 */
#define FMT_H_CHECKSUM       120 /* u64: XXH3-64 of [0,120) then the directory */

#define FMT_UUID_MAX         32

/* Header flags (SPEC §5.1).  Unknown bits must be zero. */
#define FMT_FLAG_UUID_FALLBACK  0x1u  /* UUID computed by symdb, not read from the image */
#define FMT_FLAG_HAS_DWARF      0x2u  /* the DWARF tables were filled from debug info */
#define FMT_FLAG_PARTIAL        0x4u  /* some DWARF units were skipped (see BUILD_INFO) */
#define FMT_FLAGS_KNOWN         0x7u

/* Object_Format (SPEC §5). */
#define FMT_OBJ_ELF          1
#define FMT_OBJ_MACHO        2

/* UUID_Kind (SPEC §5). */
#define FMT_UUID_GNU_BUILD_ID  1
#define FMT_UUID_MACHO         2
#define FMT_UUID_FALLBACK      3   /* XXH3-128 of the loadable contents, SPEC §5.2 */

/* ---- SPEC §6 Table directory -------------------------------------------- */

#define FMT_DIR_ENTRY_SIZE   40
#define FMT_D_KIND           0   /* u32 */
#define FMT_D_FLAGS          4   /* u16 */
#define FMT_D_RECORD_SIZE    6   /* u16; 0 for byte tables */
#define FMT_D_OFFSET         8   /* u64, multiple of 8 */
#define FMT_D_LENGTH         16  /* u64 */
#define FMT_D_COUNT          24  /* u64 */
#define FMT_D_CHECKSUM       32  /* u64: XXH3-64 (seed 0) of the table bytes */

#define FMT_TABLE_OPTIONAL   0x1u /* a reader that does not know the kind skips it */
#define FMT_TABLE_FLAGS_KNOWN 0x1u
#define FMT_TABLE_ALIGN      8
#define FMT_MAX_TABLES       64

/* Table kinds (SPEC §6.1).  Values are pinned; new kinds are appended. */
enum fmt_table_kind {
	FMT_T_STRINGS       = 1,  /* §8   string pool, bytes */
	FMT_T_SEGMENTS      = 2,  /* §7.1 loadable segments */
	FMT_T_SYMBOL_ADDRS  = 3,  /* §7.2 symbol starts, Address_Size each */
	FMT_T_SYMBOLS       = 4,  /* §7.2 symbol size, name, flags */
	FMT_T_FILES         = 5,  /* §7.3 source files */
	FMT_T_FUNCTIONS     = 6,  /* §7.4 abstract subprograms: DIE offset -> names */
	FMT_T_INLINE_ADDRS  = 7,  /* §7.5 inline interval starts */
	FMT_T_INLINE_MAP    = 8,  /* §7.5 interval -> innermost node */
	FMT_T_INLINE_NODES  = 9,  /* §7.5 subprogram / inlined-subroutine nodes */
	FMT_T_LINE_ADDRS    = 10, /* §7.6 line interval starts */
	FMT_T_LINE_ROWS     = 11, /* §7.6 interval -> file, line, column */
	FMT_T_BUILD_INFO    = 12, /* §7.7 counters about the build, optional */
	FMT_T_SYMBOL_FILES  = 13, /* §7.2.1 STT_FILE name per symbol, optional (1.1) */
	FMT_T_ALT_SYMBOL_ADDRS = 14, /* §7.2.2 the pair's other symbol table: starts (1.2) */
	FMT_T_ALT_SYMBOLS   = 15, /* §7.2.2 its SYMBOLS records (1.2) */
	FMT_T_ALT_SYMBOL_FILES = 16, /* §7.2.2 its SYMBOL_FILES records (1.2) */
	FMT_T_FILE_SOURCES  = 17, /* §7.3.1 embedded source per file, optional (1.2) */
	FMT_T_KIND_MAX      = 17  /* kinds up to here have a slot in fmt_view.t;
	                             one this reader does not know has Record_Size -1 */
};

/* "No entry" in any u32 index column. */
#define FMT_NONE             0xFFFFFFFFu

/* §7.1 SEGMENTS record. */
#define FMT_SEG_SIZE         40
#define FMT_SEG_VADDR        0   /* u64 absolute virtual address */
#define FMT_SEG_MEMSZ        8   /* u64 */
#define FMT_SEG_FILEOFF      16  /* u64 */
#define FMT_SEG_FILESZ       24  /* u64 */
#define FMT_SEG_FLAGS        32  /* u32: bit0 X, bit1 W, bit2 R */
#define FMT_SEG_RESERVED     36  /* u32, 0 */
#define FMT_SEGF_X 0x1u
#define FMT_SEGF_W 0x2u
#define FMT_SEGF_R 0x4u

/* §7.2 SYMBOLS record (parallel to SYMBOL_ADDRS). */
#define FMT_SYM_SIZE         16
#define FMT_SYM_LENGTH       0   /* u64 symbol size, 0 = up to the next symbol */
#define FMT_SYM_NAME         8   /* u32 string reference */
#define FMT_SYM_FLAGS        12  /* u32 */
#define FMT_SYMF_FUNC        0x01u /* STT_FUNC / N_SECT in a code section */
#define FMT_SYMF_OBJECT      0x02u /* STT_OBJECT */
#define FMT_SYMF_NOTYPE      0x04u /* STT_NOTYPE */
#define FMT_SYMF_IFUNC       0x08u /* STT_GNU_IFUNC */
#define FMT_SYMF_LOCAL       0x10u /* STB_LOCAL */
#define FMT_SYMF_WEAK        0x20u /* STB_WEAK */
#define FMT_SYMF_DYNSYM      0x40u /* taken from .dynsym */
#define FMT_SYMF_KNOWN       0x7Fu

/* §7.2.1 SYMBOL_FILES record (parallel to SYMBOLS): u32 string reference of
 * the STT_FILE symbol preceding an ELF local symbol, 0 = none. */
#define FMT_SYMFILE_SIZE     4

/* §7.3 FILES record. */
#define FMT_FILE_SIZE        12
#define FMT_FILE_PATH        0   /* u32: full path as llvm-symbolizer prints it */
#define FMT_FILE_RELATIVE    4   /* u32: path without the compilation dir */
#define FMT_FILE_BASE        8   /* u32: last path component */

/* §7.3.1 FILE_SOURCES record, sorted by Path, unique: the source text a
 * line table embeds for the FILES record whose Path it is (DWARF 5
 * DW_LNCT_LLVM_source). */
#define FMT_FSRC_SIZE        8
#define FMT_FSRC_PATH        0   /* u32: a FILES record's Path string reference */
#define FMT_FSRC_SOURCE      4   /* u32: string reference of the text (may be "") */

/* §7.4 FUNCTIONS record, sorted by Die_Offset. */
#define FMT_FN_SIZE          24
#define FMT_FN_DIE_OFFSET    0   /* u64 offset of the DIE in .debug_info */
#define FMT_FN_LINKAGE_NAME  8   /* u32 string ref: DW_AT_linkage_name, else DW_AT_name */
#define FMT_FN_NAME          12  /* u32 string ref: DW_AT_name */
#define FMT_FN_DECL_FILE     16  /* u32 FILES index or FMT_NONE */
#define FMT_FN_DECL_LINE     20  /* u32, 0 = unknown */

/* §7.5 INLINE_MAP record: u32 INLINE_NODES index or FMT_NONE. */
#define FMT_IMAP_SIZE        4

/* §7.5 INLINE_NODES record.  Parent < own index, always. */
#define FMT_NODE_SIZE        40
#define FMT_NODE_PARENT      0   /* u32 node index or FMT_NONE */
#define FMT_NODE_FUNCTION    4   /* u32 FUNCTIONS index or FMT_NONE */
#define FMT_NODE_CALL_FILE   8   /* u32 FILES index or FMT_NONE */
#define FMT_NODE_CALL_LINE   12  /* u32 */
#define FMT_NODE_CALL_COLUMN 16  /* u32 */
#define FMT_NODE_CALL_DISCR  20  /* u32 */
#define FMT_NODE_DEPTH       24  /* u16: 0 for the outermost subprogram */
#define FMT_NODE_FLAGS       26  /* u16 */
#define FMT_NODE_RESERVED    28  /* u32, 0 */
#define FMT_NODE_LOW_PC      32  /* u64 offset from Base_Address (valid if HAS_LOW_PC) */
#define FMT_NODEF_INLINED    0x1u /* DW_TAG_inlined_subroutine */
#define FMT_NODEF_HAS_LOW_PC 0x2u /* the DIE has DW_AT_low_pc */
#define FMT_NODEF_KNOWN      0x3u

/* §7.6 LINE_ROWS record (parallel to LINE_ADDRS). */
#define FMT_ROW_SIZE         16
#define FMT_ROW_FILE         0   /* u32 FILES index, FMT_NONE = no line info here */
#define FMT_ROW_LINE         4   /* u32 */
#define FMT_ROW_COLUMN       8   /* u32 */
#define FMT_ROW_DISCR        12  /* u32 */

/* §7.7 BUILD_INFO: an array of u64 counters, by index. */
#define FMT_BI_SIZE                 8
#define FMT_BI_SOURCE_SIZE          0  /* bytes of the input file */
#define FMT_BI_SYMBOLS_SEEN         1  /* symbol-table entries read */
#define FMT_BI_SYMBOLS_DROPPED      2  /* below Base_Address or otherwise unusable */
#define FMT_BI_UNITS                3  /* DWARF units indexed */
#define FMT_BI_UNITS_SKIPPED        4  /* DWARF units skipped as malformed */
#define FMT_BI_DWARF_VERSIONS       5  /* bit N set: a unit of DWARF version N was seen */
#define FMT_BI_SOURCE_XXH3          6  /* XXH3-64 (seed 0) of the input's bytes (§12.5) */
#define FMT_BI_DEBUG_XXH3           7  /* XXH3-64 of the separate debug file used, 0 = none */
#define FMT_BI_SYMBOL_SOURCE        8  /* FMT_BI_SYMSRC_*: the symbol table indexed */
#define FMT_BI_ALT_SYMBOL_SOURCE    9  /* FMT_BI_SYMSRC_* of ALT_SYMBOLS, 0 = none (1.2) */
#define FMT_BI_COUNT                10

/* §7.7 BUILD_INFO indexes 8 and 9 (SYMTAB and DYNSYM also name the table a
 * request's file holds, §7.2.2). */
#define FMT_BI_SYMSRC_NONE   0u /* no symbol table */
#define FMT_BI_SYMSRC_SYMTAB 1u /* ELF .symtab */
#define FMT_BI_SYMSRC_DYNSYM 2u /* ELF .dynsym only (a fully stripped file) */
#define FMT_BI_SYMSRC_NLIST  3u /* Mach-O LC_SYMTAB */


/* ---- SPEC §7.9 Format 2: packed DWARF tables ----------------------------
 * Kinds 6 and 9 are packed record tables (§7.9.1), kinds 7/8 and 10/11
 * block interval tables (§7.9.2); format_pack.h reads and writes them. */

/* §7.9.1 packed record table header. */
#define FMT_PK_FIELD_COUNT   0   /* u32 */
#define FMT_PK_RECORD_BITS   4   /* u32: sum of the widths */
#define FMT_PK_FIELDS        8   /* Field_Count x 16 bytes: */
#define FMT_PK_FIELD_SIZE    16
#define FMT_PK_F_WIDTH       0   /*   u8, <= 64, then 7 zero bytes */
#define FMT_PK_F_BASE        8   /*   u64 */
#define FMT_PK_TAIL          8   /* zero bytes after every bit string */
#define FMT_PK_MAX_WIDTH     64
#define FMT_PK_MAX_FIELDS    9

/* FUNCTIONS fields, in record order. */
enum { FMT_PF_DIE_OFFSET, FMT_PF_LINKAGE_NAME, FMT_PF_NAME, FMT_PF_DECL_FILE, FMT_PF_DECL_LINE,
       FMT_PF_COUNT };
#define FMT_PF_NULLABLE      (1u << FMT_PF_DECL_FILE)
#define FMT_PF_WIDE          (1u << FMT_PF_DIE_OFFSET) /* may be wider than 32 bits */

/* INLINE_NODES fields, in record order. */
enum { FMT_PN_PARENT_DISTANCE, FMT_PN_FUNCTION, FMT_PN_CALL_FILE, FMT_PN_CALL_LINE,
       FMT_PN_CALL_COLUMN, FMT_PN_CALL_DISCR, FMT_PN_DEPTH, FMT_PN_FLAGS, FMT_PN_LOW_PC,
       FMT_PN_COUNT };
#define FMT_PN_NULLABLE      ((1u << FMT_PN_FUNCTION) | (1u << FMT_PN_CALL_FILE))
#define FMT_PN_WIDE          (1u << FMT_PN_LOW_PC)      /* may be wider than 32 bits */

/* §7.9.2 block record (kinds 7 and 10 in format 2). */
#define FMT_BLK_ROWS         64  /* intervals per block */
#define FMT_BLK_SIZE         32
#define FMT_BLK_FIRST        0   /* u64 offset from Base_Address */
#define FMT_BLK_ROWS_OFFSET  8   /* u32 byte offset in the rows table */
#define FMT_BLK_BASE_INDEX   12  /* u32 */
#define FMT_BLK_BASE_LINE    16  /* u32 */
#define FMT_BLK_BASE_COLUMN  20  /* u32 */
#define FMT_BLK_WIDTHS       24  /* 5 x u8, in column order */
#define FMT_BLK_RESERVED     29  /* 3 bytes, 0 */
/* A block's columns, in bit-string order; an inline block has the first two. */
enum { FMT_BC_DELTA, FMT_BC_INDEX, FMT_BC_LINE, FMT_BC_COLUMN, FMT_BC_DISCR, FMT_BC_COUNT };

/* ---- SPEC §12 Catalog --------------------------------------------------- */

#define FMT_CAT_SCHEMA_VERSION  1
#define FMT_CAT_DB_IMAGES       "images"
#define FMT_CAT_DB_NAMES        "names"
#define FMT_CAT_DB_META         "meta"

/* images value (SPEC §12.3), fixed part then two length-prefixed strings. */
#define FMT_CV_VERSION       0   /* u8 = 1 */
#define FMT_CV_UUID_KIND     1   /* u8 */
#define FMT_CV_OBJECT_FORMAT 2   /* u8 */
#define FMT_CV_RESERVED      3   /* u8, 0 */
#define FMT_CV_FLAGS         4   /* u32, header flags */
#define FMT_CV_MACHINE       8   /* u32 */
#define FMT_CV_MACHINE_SUB   12  /* u32 */
#define FMT_CV_FILE_SIZE     16  /* u64 */
#define FMT_CV_HEADER_SUM    24  /* u64 header checksum of the file */
#define FMT_CV_BUILT_AT      32  /* u64 unix seconds */
#define FMT_CV_FIXED_SIZE    40  /* then u16 len + file name, u16 len + image name */

#ifdef __cplusplus
}
#endif
#endif /* SYMDB_FORMAT_H */
