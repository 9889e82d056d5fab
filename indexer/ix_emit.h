/* SPDX-License-Identifier: MIT */
/*
 * ix_emit.h - the back half of the indexer: ix_tables.c turns a filled
 * ix_image into encoded tables and a file plan (format_writer.h), and
 * ix_publish.c writes that plan to DB/tmp, renames it into DB/images and
 * commits the catalog entry (SPEC §12.5).
 *
 * Internal: not installed.
 */
#ifndef SYMDB_IX_EMIT_H
#define SYMDB_IX_EMIT_H

#include "format_writer.h"
#include "indexer_internal.h"
#include "rd_catalog.h"

/* ix_elf.c: judge path by its first bytes (a regular, non-empty ELF file of
 * type ET_EXEC or ET_DYN) before its UUID is computed.  Returns 0, -errno or
 * SYMDB_E_BAD_OBJECT with "PATH: reason" in errbuf. */
IX_HIDDEN int ix_elf_precheck(const char *path, char *errbuf, size_t errbuf_sz);

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

/* Publish one built image into the database at cat (SPEC §12.5): temp file in
 * DB/tmp, fsync, rename to DB/images/XX/UUIDHEX.symdb, fsync the directory,
 * then one catalog transaction.  With only_if_absent a concurrent publisher
 * that committed first wins: our entry is not written and *raced is set
 * (the renamed file is byte-identical, both builds being deterministic).
 * index_path receives the published path.  Returns 0 or a negative code;
 * on error no temp file is left and the catalog is unchanged. */
IX_HIDDEN int ix_publish(rd_catalog *cat, const ix_image *img, const ix_output *out,
                         int only_if_absent, int *raced, char *index_path,
                         size_t index_path_sz, char *errbuf, size_t errbuf_sz);

/* The same, steps 2-5 only (fsync, rename, commit), for a validated index
 * file already written at tmp_path in DB/tmp (ix_import.c, ix_cage.c); sets
 * e->file. */
IX_HIDDEN int ix_publish_tmp(rd_catalog *cat, rd_cat_entry *e, const char *tmp_path,
                             int only_if_absent, int *raced, char *index_path,
                             size_t index_path_sz, char *errbuf, size_t errbuf_sz);

/* Step 1 only: write the index file as STAGING/UUIDHEX<tag>.XXXXXX
 * (staging is DB/tmp) and start its writeback; ix_publish_tmp fsyncs it.
 * tmp receives the name.  On error no temp file is left. */
IX_HIDDEN int ix_write_tmp(const char *staging, const symdb_uuid *id, const char *tag,
                           const ix_output *out, char *tmp, size_t tmp_sz, char *errbuf,
                           size_t errbuf_sz);

/* Start writing fd's dirty pages to the device without waiting for them
 * (sync_file_range), so that the fsync before the rename finds the work
 * done or under way. */
IX_HIDDEN void ix_writeback_start(int fd);

/* ix_import.c: the catalog entry of a validated index file at tmp (header
 * facts from info plus the header checksum read from the file). */
IX_HIDDEN int ix_entry_from_file(const char *tmp, const symdb_image_info *info,
                                 rd_cat_entry *e);

/* ix_build.c, for ix_import.c: the builder's catalog; option checking. */
IX_HIDDEN rd_catalog *ix_builder_catalog(symdb_builder *b);
IX_HIDDEN int ix_builder_opts(const symdb_build_opts *in, symdb_build_opts *o);
/* ix_cold.c: 1 when index_path's cold form (index_path + ".lz4", SPEC
 * §12.8) exists and its LZ4 frame declares file_size bytes, else 0. */
IX_HIDDEN int ix_cold_indexed(const char *index_path, uint64_t file_size);

#endif /* SYMDB_IX_EMIT_H */
