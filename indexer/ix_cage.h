/* SPDX-License-Identifier: MIT */
/*
 * ix_cage.h - staging and the cage (SPEC §12.5).
 *
 * An input is indexed in two halves.  The first half parses it and writes
 * each image's index file to a temp file in DB/tmp ("staging"); it touches no
 * catalog, so it can run in a separate, resource-limited process (the
 * symdb-indexer executable, SYMDB_BUILD_ISOLATE) that reports what it staged
 * over a pipe as the fixed records of format_report.h.  The second half runs in the caller's process: it
 * checks every staged file as untrusted (checksums, invariants, the UUID the
 * parent computed itself), applies the same-build-id policy, and publishes
 * through ix_publish_tmp.  Without isolation both halves run in-process, on
 * the same code, so both paths write byte-identical index files.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_IX_CAGE_H
#define SYMDB_IX_CAGE_H

#include "ix_emit.h"

/* One staged image: its index file at tmp (fsynced when published). */
typedef struct ix_staged {
	symdb_uuid uuid;
	char arch[16];          /* Mach-O slice architecture; "" for ELF */
	char tmp[4096];         /* DB/tmp/UUIDHEX<tag>.XXXXXX */
	char debug_path[4096];  /* separate debug file / companion dSYM used, or "" */
} ix_staged;

/* Where staged images go. */
typedef struct ix_stager {
	char dir[4096];   /* the staging directory: DB/tmp */
	char tag[32];     /* "" in-process; ".cage-PID-N" for symdb-indexer */
	int fd;           /* symdb-indexer's report descriptor, or -1 */
	const char *test_hook; /* symdb_indexer_job.test_hook, else NULL */
	unsigned n;
	ix_staged img[SYMDB_BUILD_MAX_IMAGES];
} ix_stager;

/* ix_stage.c: write img's index file as a temp file and record it (and, in
 * symdb-indexer, report it to the parent).  Returns 0 or a negative code
 * with a reason in errbuf; on error nothing of this image is left. */
IX_HIDDEN int ix_stage_image(ix_stager *st, const ix_image *img, const ix_output *out,
                             const char *arch, const char *debug_path, char *errbuf,
                             size_t errbuf_sz);

/* ix_build.c: parse path (ELF or Mach-O / dSYM) and stage every image. */
IX_HIDDEN int ix_stage_input(ix_stager *st, const char *path, const symdb_build_opts *o);

/* ix_elf.c: run libelf's one-time initialisation now. */
IX_HIDDEN void ix_elf_init(void);

/* ix_cage.c: stage path in the symdb-indexer executable under the limits
 * of o (SPEC §12.5).  On return the child is gone and st lists the temp files it
 * reported.  Returns 0 or a negative code with one line in o->errbuf
 * ("PATH: indexer crashed: signal 11 (Segmentation fault)"); on error
 * every temp file the child wrote is removed. */
IX_HIDDEN int ix_cage_run(ix_stager *st, const char *path, const symdb_build_opts *o);

/* ix_cage.c: remove every temp file st lists (and, with a tag, every
 * DB/tmp file carrying it). */
IX_HIDDEN void ix_stage_discard(ix_stager *st);

/* The UUIDs the parent computed itself for an input; a staged image must
 * carry one of them. */
typedef struct ix_expect {
	unsigned n;
	symdb_uuid uuid[SYMDB_BUILD_MAX_IMAGES];
	char arch[SYMDB_BUILD_MAX_IMAGES][16]; /* Mach-O: from the load commands */
	int is_macho, is_dsym;
} ix_expect;

/* ix_cage.c: verify (when verify is set: every checksum and invariant) and
 * publish every staged image into cat under the same-build-id policy
 * (SPEC §12.5), filling res.  Every temp file of st is gone on return.
 * Returns 0, SYMDB_E_EXISTS for a same-build-id conflict (the other images
 * are still published), or another negative code (nothing published). */
IX_HIDDEN int ix_stage_commit(rd_catalog *cat, ix_stager *st, const char *path,
                              const ix_expect *ex, const symdb_build_opts *o, int verify,
                              symdb_build_result *res);

/* ix_cage.c: 1 when every expected image is indexed, intact, and built from
 * the same contents as path (so there is nothing to do; res is filled as a
 * skip), else 0. */
IX_HIDDEN int ix_stage_unchanged(rd_catalog *cat, const char *path, const ix_expect *ex,
                                 symdb_build_result *res);

#endif /* SYMDB_IX_CAGE_H */
