/* SPDX-License-Identifier: MIT */
/*
 * indexer_internal.h - the in-memory model of one image while it is indexed.
 *
 * The object readers (ix_elf.c, later ix_macho.c) and the DWARF reader
 * (ix_dwarf.c) fill an ix_image; ix_tables.c sorts, deduplicates and emits it
 * through format/ as SPEC.md lays it out; ix_stage.c writes the bytes to a
 * temp file in the staging directory for the builder to publish.
 *
 * All addresses here are absolute virtual addresses (as in the object file);
 * ix_tables.c subtracts Base_Address when it emits them.
 */
#ifndef SYMDB_INDEXER_INTERNAL_H
#define SYMDB_INDEXER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "format_report.h"
#include "symdb_errors.h"
#include "symdb_format.h"
#include "format_content.h"
#include "symdb_indexer.h"

#define IX_HIDDEN __attribute__((visibility("hidden")))

/* An image's identity (SPEC §5.2), as its header and the catalog key hold
 * it. */
typedef struct ix_uuid {
	uint8_t bytes[FMT_UUID_MAX];
	uint8_t len;  /* 1..32 */
	uint8_t kind; /* FMT_UUID_* */
} ix_uuid;

/* At most this many images per input: a universal file's slices, a
 * .dSYM's files (the records of one report). */
#define IX_MAX_IMAGES FMT_REPORT_MAX_IMAGES

/* What a job asks of the parsers (symdb_indexer_job), plus where the
 * one-line reason of a failure goes.  Every file comes open: the parsers
 * read through descriptors and never open a path (SPEC §12.5). */
typedef struct ix_opts {
	unsigned flags;        /* SYMDB_INDEXER_* */
	unsigned threads;      /* DWARF walk threads; 0 = automatic */
	unsigned cpus;         /* what "automatic" may use */
	symdb_indexer_file debug;       /* build-id debug file, or fd -1 */
	const symdb_indexer_file *debuglinks; /* candidates, CRC checked here */
	unsigned ndebuglinks;
	symdb_indexer_file companion;   /* Mach-O BINARY.dSYM file, or fd -1 */
	/* Split DWARF: the .dwo files opened for the skeletons' paths, the
	 * BINARY.dwp package (fd -1: none), and where the paths of the .dwo
	 * files still missing are reported (-1: nowhere). */
	const symdb_indexer_file *dwos;
	unsigned ndwos;
	symdb_indexer_file dwp;
	int want_fd;
	char *errbuf;
	size_t errbuf_sz;
} ix_opts;

/* A growable array.  IX_PUSH returns a pointer to the new zeroed slot, or NULL
 * when memory runs out. */
typedef struct ix_vec {
	void *p;
	size_t n, cap, elem;
} ix_vec;

IX_HIDDEN void ix_vec_init(ix_vec *v, size_t elem);
IX_HIDDEN void *ix_vec_push(ix_vec *v);
IX_HIDDEN void ix_vec_free(ix_vec *v);

/* Sorts a[0..n) ascending; 0, or -1 without memory (a is then unchanged). */
IX_HIDDEN int ix_sort_u64(uint64_t *a, size_t n);
#define IX_AT(v, T, i) (((T *)(v)->p)[i])

/* The string pool: deduplicated by XXH3-64 + exact compare.  Reference 0 is
 * the empty string (SPEC §8).  ix_str_add() returns the reference, or
 * FMT_NONE on allocation failure or when the pool would pass 4 GiB. */
typedef struct ix_strtab ix_strtab;
IX_HIDDEN ix_strtab *ix_str_new(void);
IX_HIDDEN void ix_str_free(ix_strtab *t);
IX_HIDDEN uint32_t ix_str_add(ix_strtab *t, const char *s, size_t len);
IX_HIDDEN uint32_t ix_str_addz(ix_strtab *t, const char *s);
IX_HIDDEN const uint8_t *ix_str_bytes(const ix_strtab *t, size_t *len);

typedef struct ix_segment {
	uint64_t vaddr, memsz, fileoff, filesz;
	uint32_t flags; /* FMT_SEGF_* */
} ix_segment;

typedef struct ix_symbol {
	uint64_t addr, size;
	uint32_t name;  /* string ref */
	uint32_t flags; /* FMT_SYMF_* */
	uint64_t order; /* position in the symbol table, for llvm's stable tie-break */
	uint32_t file;  /* string ref of the preceding STT_FILE name (ELF locals), 0 = none */
} ix_symbol;

typedef struct ix_file {
	uint32_t path, relative, base; /* string refs (SPEC §7.3) */
	uint32_t source; /* embedded source text (SPEC §7.3.1), FMT_NONE if none */
} ix_file;

typedef struct ix_function {
	uint64_t die_offset;
	uint32_t linkage_name, name; /* string refs */
	uint32_t decl_file;          /* files index or FMT_NONE */
	uint32_t decl_line;
} ix_function;

typedef struct ix_node {
	uint32_t parent;   /* nodes index (< own index) or FMT_NONE */
	uint32_t function; /* functions index or FMT_NONE */
	uint32_t call_file, call_line, call_column, call_discr;
	uint16_t depth, flags; /* FMT_NODEF_* */
	uint64_t low_pc;       /* absolute, valid with FMT_NODEF_HAS_LOW_PC */
} ix_node;

/* One elementary interval [addr, next addr) of the inline map or the line
 * table; the last interval of each table is a FMT_NONE sentinel. */
typedef struct ix_imap {
	uint64_t addr;
	uint32_t node; /* FMT_NONE = no DIE covers it */
} ix_imap;

typedef struct ix_row {
	uint64_t addr;
	uint32_t file; /* FMT_NONE = no line information */
	uint32_t line, column, discr;
} ix_row;

/* One image being indexed. */
typedef struct ix_image {
	/* header (SPEC §5) */
	ix_uuid uuid;
	uint32_t header_flags; /* FMT_FLAG_* */
	uint8_t object_format, object_class, object_endian;
	uint16_t object_type;
	uint32_t machine, machine_sub;
	uint64_t base_address;
	uint32_t image_name; /* string ref */

	ix_strtab *strings;
	ix_vec segments;  /* ix_segment, sorted by vaddr */
	ix_vec symbols;   /* ix_symbol, any order: ix_tables sorts and dedups */
	int symbols_reduced; /* symbols already sorted and deduplicated (SPEC §7.2) */
	/* SPEC §7.2.2: the symbol table of the pair's other file (the debug
	 * file a stripped binary found), ix_symbol, any order; written as
	 * ALT_SYMBOL_* when non-empty.  BUILD_INFO Symbol_Source and
	 * Alt_Symbol_Source say which table each is. */
	ix_vec alt_symbols;
	ix_vec files;     /* ix_file; indexes are referenced by functions/nodes/rows */
	ix_vec functions; /* ix_function, sorted by die_offset, unique */
	ix_vec nodes;     /* ix_node, parents first */
	ix_vec imap;      /* ix_imap, strictly ascending addr, final */
	ix_vec rows;      /* ix_row, strictly ascending addr, final */
	uint64_t build_info[FMT_BI_COUNT];
} ix_image;

/* ---- stages ------------------------------------------------------------ */

/* ix_util.c: zero an image (all vectors empty, a fresh string pool) and free
 * everything it owns.  ix_image_init returns 0 or -ENOMEM. */
IX_HIDDEN int ix_image_init(ix_image *img);
IX_HIDDEN void ix_image_free(ix_image *img);

/* ix_elf.c: read the ELF file open at fd (named path: messages and
 * Image_Name) into img: header fields, Base_Address, segments, symbols
 * (SPEC §7.1, §7.2), Image_Name and BUILD_INFO counters.  Does not set the
 * UUID.  Returns 0, -errno, or SYMDB_E_BAD_OBJECT with "PATH: reason" in
 * errbuf. */
IX_HIDDEN int ix_elf_load(ix_image *img, int fd, const char *path, char *errbuf,
                          size_t errbuf_sz);

/* ix_elf.c: SPEC §7.2.2.  Read the symbol table of the pair's other file
 * (the separate debug file open at fd, named path) into img->alt_symbols by
 * the rules of §7.2 when it is another kind of table than the image's own
 * (.symtab against .dynsym) and keeps a symbol; sets Alt_Symbol_Source.  A
 * file that cannot be read adds nothing: its DWARF decides the build.
 * Interns names into img->strings, so it must not run concurrently with
 * other writers of the pool. */
IX_HIDDEN void ix_elf_load_alt(ix_image *img, int fd, const char *path);

/* ix_dwarf*.c: fill img->files/functions/nodes/imap/rows from the DWARF of
 * the binary open at fd (named binary_path) or of its separate debug file
 * (opts->debug, else the first opts->debuglinks candidate whose CRC
 * matches; its name goes to debug_path_out, "" if none), final and sorted per SPEC §7.3-7.6, and set
 * FMT_FLAG_HAS_DWARF when it did.  Returns 0 (also when there is no DWARF) or
 * a negative code with a reason in errbuf.  ix_build.c has a weak fallback
 * that does nothing, so the tree links without the DWARF reader. */
IX_HIDDEN int ix_dwarf_attach(ix_image *img, int fd, const char *binary_path,
                              const ix_opts *opts, char *debug_path_out,
                              size_t debug_path_sz, char *errbuf, size_t errbuf_sz);

#endif /* SYMDB_INDEXER_INTERNAL_H */
