/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_internal.h - internal interfaces of the DWARF half of the indexer.
 *
 * ix_sections.c maps an ELF file and hands out its debug sections already
 * inflated (SHF_COMPRESSED zlib/zstd, legacy .zdebug_*); ix_debugfile.c finds
 * a separate debug file (build-id, .gnu_debuglink); ix_dwarf_line.c runs line
 * programs and flattens them the way llvm-symbolizer looks rows up;
 * ix_dwarf_ranges.c reads DW_AT_ranges lists (.debug_ranges, .debug_rnglists);
 * ix_dwarf_flat.c flattens unit ranges and subroutine ranges; ix_dwarf.c and
 * the files of ix_dwarf_walk.h walk the DIEs with libdwarf and drive the rest
 * (ix_dwarf_attach()).
 *
 * Nothing here is part of any public API.
 */
#ifndef SYMDB_IX_DWARF_INTERNAL_H
#define SYMDB_IX_DWARF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "indexer_internal.h"

/* Refuse to inflate a section to more than this, or to more than
 * IX_MAX_RATIO times its compressed size (decompression bombs). */
#define IX_MAX_SECTION_SIZE ((uint64_t)4 << 30)
#define IX_MAX_RATIO 64u

/* One debug section, uncompressed.  `name` always uses the ".debug_" form
 * even when the file said ".zdebug_". */
typedef struct ix_debug_section {
	char name[48];
	const uint8_t *data;
	uint64_t size;
	uint8_t *owned; /* malloc'ed inflated copy, or NULL when data is mapped */
} ix_debug_section;

/* An opened ELF file with its debug sections. */
typedef struct ix_sections {
	const char *path;
	void *map;
	size_t map_size;
	int is64, little;
	uint16_t machine;
	ix_debug_section *secs;
	size_t nsecs;
	uint8_t build_id[64];
	size_t build_id_len;
	char debuglink[256]; /* "" when there is no .gnu_debuglink */
	uint32_t debuglink_crc;
	struct ix_reloc_info *reloc; /* ET_REL only (ix_reloc.h), else NULL */
} ix_sections;

/* Maps the ELF file open at fd (named path in messages; the descriptor
 * stays the caller's) and loads every .debug_* / .zdebug_* section.
 * Returns 0 or a negative code with a one-line reason in errbuf. */
IX_HIDDEN int ix_sections_open(ix_sections *s, int fd, const char *path, char *errbuf,
			       size_t errbuf_sz);
IX_HIDDEN void ix_sections_close(ix_sections *s);
/* Frees the inflated copies of every section but the one called `keep`,
 * which are empty afterwards (a mapped section keeps its bytes). */
IX_HIDDEN void ix_sections_release(ix_sections *s, const char *keep);
/* The section called `name` (".debug_info"), or NULL. */
IX_HIDDEN const ix_debug_section *ix_sections_find(const ix_sections *s, const char *name);

/* Inflates one SHF_COMPRESSED payload (Chdr included); exposed for tests. */
IX_HIDDEN int ix_inflate_chdr(const uint8_t *p, uint64_t n, int is64, int little,
			      uint8_t **out, uint64_t *out_size, char *why,
			      size_t why_sz);

/* Chooses the separate debug file of `bin` among the candidates the builder
 * opened (SPEC §12.5): its build-id hit, else the first .gnu_debuglink
 * candidate whose CRC-32 matches.  Returns the chosen file, or NULL. */
IX_HIDDEN const symdb_indexer_file *ix_debugfile_find(const ix_sections *bin,
                                                      const ix_opts *opts);

/* Indexes the DWARF of an ix_sections filled by someone else (ix_macho.c
 * for a Mach-O slice): as ix_dwarf_attach without the file lookups.  No
 * .debug_info: returns 0 and leaves img as it was. */
IX_HIDDEN int ix_dwarf_index_sections(ix_image *img, const ix_sections *s, unsigned cpus,
				      char *errbuf,
				      size_t errbuf_sz);

/* ---- line programs (ix_dwarf_line.c) ------------------------------------ */

/* One piece of a flattened mapping: value holds from addr to the next
 * piece's addr.  For line pieces v[0..3] = file, line, column,
 * discriminator (file FMT_NONE = no row); for inline pieces v[0] = node;
 * for unit pieces v[0] = unit index. */
typedef struct ix_piece {
	uint64_t addr;
	uint32_t v[4];
} ix_piece;

/* What a line table needs from its unit. */
typedef struct ix_line_ctx {
	const ix_debug_section *line, *str, *line_str;
	uint64_t offset;     /* DW_AT_stmt_list */
	uint8_t addr_size;   /* of the unit */
	int little;
	const char *comp_dir; /* DW_AT_comp_dir or NULL */
	ix_image *img;        /* strings and FILES are added here */
	void *files_index;    /* ix_dwarf's path -> FILES index map */
	const struct ix_reloc_info *reloc; /* ET_REL: sections of sequences */
} ix_line_ctx;

/* A parsed line table: the FILES index of each file entry, and the flat
 * pieces of its rows. */
typedef struct ix_line_table {
	uint16_t version;
	uint32_t *file_map; /* by file index; FMT_NONE = invalid entry */
	size_t nfiles;
	ix_vec pieces; /* ix_piece, ascending */
} ix_line_table;

IX_HIDDEN int ix_line_parse(const ix_line_ctx *c, ix_line_table *t, char *why,
			    size_t why_sz);
IX_HIDDEN void ix_line_free(ix_line_table *t);
/* The FILES index of file entry `idx` by llvm's validity rules, or FMT_NONE. */
IX_HIDDEN uint32_t ix_line_file(const ix_line_table *t, uint64_t idx);
/* Adds (or finds) the FILES record of a path built from comp_dir, include
 * directory and name the way LLVM 14's getFileNameByIndex does. */
IX_HIDDEN uint32_t ix_file_intern(ix_image *img, void *files_index,
				  const char *comp_dir, const char *dir,
				  int dir_is_compdir, const char *name);
/* Record src as file f's embedded source unless it has one (first wins,
 * in unit order).  0, or -1 when out of memory. */
IX_HIDDEN int ix_file_embed_source(ix_image *img, uint32_t f, const char *src);

/* ---- range lists (ix_dwarf_ranges.c) ------------------------------------ */

/* What a DW_AT_ranges value needs from its unit. */
typedef struct ix_ranges_ctx {
	const ix_debug_section *ranges, *rnglists, *addr;
	int little;
	uint8_t addr_size, offset_size;
	uint16_t version;
	uint64_t base;          /* the unit's DW_AT_low_pc, valid with has_base */
	uint64_t rnglists_base; /* DW_AT_rnglists_base */
	uint64_t addr_base;     /* DW_AT_addr_base */
	uint64_t ranges_base;   /* a split DWARF 4 unit: its skeleton's
	                         * DW_AT_GNU_ranges_base, added to offsets */
	int has_base, has_rnglists_base, has_addr_base;
} ix_ranges_ctx;

typedef int (*ix_range_cb)(void *arg, uint64_t lo, uint64_t hi);

/* Calls add(lo, hi) for each range of the list DW_AT_ranges names
 * (`rnglistx`: the value is a DW_FORM_rnglistx index).  Returns 0, or -1
 * for a malformed list (ranges before the damage were delivered). */
IX_HIDDEN int ix_ranges_read(const ix_ranges_ctx *c, uint64_t value, int rnglistx,
			     ix_range_cb add, void *arg);
/* Entry `idx` of the unit's .debug_addr contribution.  Returns 1, or 0
 * when there is none (LLVM's LookupPooledAddress failing). */
IX_HIDDEN int ix_addr_entry(const ix_ranges_ctx *c, uint64_t idx, uint64_t *v);

/* ---- flattening (ix_dwarf_flat.c) --------------------------------------- */

/* LLVM's per-unit AddrDieMap, fed ranges in DIE order. */
/* An ordered map kept as a list of sorted blocks of at most IX_DIEMAP_BLOCK
 * entries, so that an insertion moves at most one block: DIE order is not
 * address order (cold partitions, hostile files), and one flat sorted
 * array would make that quadratic. */
typedef struct ix_diemap {
	struct ix_diemap_block **b;
	size_t nb, capb;
	size_t hint; /* the block the last search ended in */
} ix_diemap;

IX_HIDDEN int ix_diemap_add(ix_diemap *m, uint64_t lo, uint64_t hi, uint32_t node);
IX_HIDDEN int ix_diemap_flatten(const ix_diemap *m, ix_vec *pieces);
IX_HIDDEN void ix_diemap_free(ix_diemap *m);

/* Unit ranges: (lo, hi, unit) triples -> pieces with LLVM's
 * DWARFDebugAranges::construct() resolution of overlaps. */
typedef struct ix_urange {
	uint64_t lo, hi;
	uint32_t unit;
} ix_urange;
IX_HIDDEN int ix_units_flatten(ix_urange *r, size_t n, ix_vec *pieces);

/* Pushes a piece, merging it into the previous one when values are equal. */
IX_HIDDEN int ix_piece_push(ix_vec *v, uint64_t addr, const uint32_t val[4]);
/* Index of the piece covering addr (last with piece.addr <= addr) or -1. */
IX_HIDDEN ptrdiff_t ix_piece_find(const ix_vec *v, uint64_t addr);

/* Small open-addressing u64 -> u32 map. */
typedef struct ix_u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t n, cap;
} ix_u64map;
IX_HIDDEN uint32_t ix_u64map_get(const ix_u64map *m, uint64_t key); /* FMT_NONE if absent */
IX_HIDDEN int ix_u64map_put(ix_u64map *m, uint64_t key, uint32_t val);
IX_HIDDEN void ix_u64map_free(ix_u64map *m);

#endif /* SYMDB_IX_DWARF_INTERNAL_H */
