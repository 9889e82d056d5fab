/* SPDX-License-Identifier: MIT */
/*
 * ix_stage.h - staging (SPEC §12.5): the indexer parses an input and writes
 * each image's index file to a temp file in the staging directory (the
 * database's tmp/), reporting each on its descriptor as the records of
 * format_report.h.  It touches no catalog; the builder in libsymdb checks
 * every staged file as untrusted and publishes it.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_IX_STAGE_H
#define SYMDB_IX_STAGE_H

#include "ix_emit.h"

/* One staged image: its index file in output `output`. */
typedef struct ix_staged {
	ix_uuid uuid;
	char arch[16];          /* Mach-O slice architecture; "" for ELF */
	unsigned output;        /* position in the job's outputs */
	char debug_path[4096];  /* separate debug file / companion dSYM used, or "" */
} ix_staged;

/* Where staged images go: the caller's output descriptors, one per UUID. */
typedef struct ix_stager {
	const symdb_indexer_output *outputs;
	unsigned noutputs;
	uint64_t used[(IX_MAX_IMAGES + 63) / 64]; /* outputs written */
	int fd;           /* the report descriptor */
	int (*test_hook)(char *, size_t); /* symdb_indexer_job.test_hook */
	ix_uuid elf_uuid; /* an ELF input's identity, computed by the builder */
	unsigned n;
	ix_staged img[IX_MAX_IMAGES];
} ix_stager;

/* ix_stage.c: write img's index file as a temp file, record it and report
 * it.  Returns 0 or a negative code with a reason in errbuf; on error
 * nothing of this image is left. */
IX_HIDDEN int ix_stage_image(ix_stager *st, const ix_image *img, const ix_output *out,
                             const char *arch, const char *debug_path, char *errbuf,
                             size_t errbuf_sz);

/* ix_build.c: parse the n open inputs (one ELF or Mach-O file, or with
 * SYMDB_INDEXER_DSYM a bundle's DWARF files) and stage every image. */
IX_HIDDEN int ix_stage_input(ix_stager *st, const symdb_indexer_file *in, unsigned n,
                             const ix_opts *o);

/* ix_elf.c: run libelf's one-time initialisation now. */
IX_HIDDEN void ix_elf_init(void);

#endif /* SYMDB_IX_STAGE_H */
