/* SPDX-License-Identifier: MIT */
/*
 * ix_emit.h - the back half of the indexer: ix_tables.c turns a filled
 * ix_image into encoded tables and a file plan (format_writer.h), and
 * ix_stage.c writes that plan to a temp file in the staging directory
 * (SPEC §12.5); publishing it is the builder's job, in libsymdb.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_IX_EMIT_H
#define SYMDB_IX_EMIT_H

#include "format_writer.h"
#include "indexer_internal.h"

/* ix_elf.c: judge the file open at fd (named path) by its first bytes (a
 * regular, non-empty ELF file of type ET_EXEC or ET_DYN) before its UUID is
 * computed.  Returns 0, -errno or SYMDB_E_BAD_OBJECT with "PATH: reason" in
 * errbuf. */
IX_HIDDEN int ix_elf_precheck(int fd, const char *path, char *errbuf, size_t errbuf_sz);

/* The encoded file of one image.  Allocate with calloc (the plan is about 6 KiB);
 * release with ix_output_free. */
typedef struct ix_output {
	fmt_wplan plan;
	uint8_t *buf[FMT_T_KIND_MAX + 1]; /* encoded tables, by kind (owned) */
	uint64_t nsymbols, nline_rows, ninline_nodes;
	unsigned address_size;
} ix_output;

/* Sort img->symbols and keep the last symbol of each address (SPEC §7.2);
 * sets img->symbols_reduced.  Touches nothing else of img, so it may run
 * on another thread while the DWARF reader fills the rest. */
IX_HIDDEN void ix_symbols_reduce(ix_image *img);

/* Sort and reduce img->symbols (SPEC §7.2) in place unless that was done,
 * check the DWARF tables' cross references, choose Address_Size, encode
 * every table and lay out the file.  Returns 0, -ENOMEM,
 * SYMDB_E_TOO_BIG or SYMDB_E_INVAL (inconsistent DWARF model), with a
 * reason in errbuf. */
IX_HIDDEN int ix_tables_build(ix_image *img, ix_output *out, char *errbuf, size_t errbuf_sz);
IX_HIDDEN void ix_output_free(ix_output *out);

/* ix_stage.c: step 5 of SPEC §12.5: write the index file into fd, an
 * output the caller created (truncated first), and start its writeback;
 * the builder fsyncs it before the rename.  Returns 0 or a negative code
 * with a reason in errbuf. */
IX_HIDDEN int ix_write_fd(int fd, const ix_output *out, char *errbuf, size_t errbuf_sz);

#endif /* SYMDB_IX_EMIT_H */
