/* SPDX-License-Identifier: MIT */
/*
 * publish_internal.h - the builder's side of a build (SPEC §12.5), inside
 * libsymdb: start the symdb-indexer executable on an input
 * (build_spawn.c), re-verify what it staged and apply the same-build-id
 * policy (publish_commit.c), rename and commit (publish_file.c), and the
 * builder API around them (publish_build.c, publish_import.c,
 * publish_reindex.c).  No parser runs in this process.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_PUBLISH_INTERNAL_H
#define SYMDB_PUBLISH_INTERNAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "format_header.h"
#include "format_report.h"
#include "rd_catalog.h"
#include "symdb_build.h"

_Static_assert(SYMDB_BUILD_MAX_IMAGES == FMT_REPORT_MAX_IMAGES, "one report, one result");

/* One image the indexer staged: its index file at tmp, which this process
 * created and holds open as fd (SPEC §12.5: it is read back only through
 * fd, never reopened by name). */
typedef struct publish_staged {
	symdb_uuid uuid;
	char arch[16];          /* Mach-O slice architecture; "" for ELF */
	char tmp[4096];         /* DB/tmp/UUIDHEX<tag>.XXXXXX, "" once renamed or removed */
	char debug_path[4096];  /* separate debug file / companion dSYM used, or "" */
	int fd;                 /* read-write, or -1 */
	int reported;           /* the indexer sent its record */
} publish_staged;

/* What one indexer staged for one input. */
typedef struct publish_stager {
	char dir[4096]; /* the staging directory: DB/tmp */
	char tag[32];   /* ".cage-PID-N" while the indexer runs, then "" */
	unsigned n;
	publish_staged img[SYMDB_BUILD_MAX_IMAGES];
	/* One line per split DWARF file a skeleton names and the builder
	 * could not open (symdb_build_result.warnings). */
	char warnings[4096];
} publish_stager;

/* One file of a build, opened once (build_inputs.c), and its name. */
typedef struct publish_fd {
	int fd; /* -1: none */
	char name[4096];
	/* fstat when opened, before a byte was read: a file written in place
	 * while it is indexed changes one of them (build_input_unchanged). */
	int signed_;
	uint64_t size;
	int64_t mtime_ns;
} publish_fd;

#define PUBLISH_MAX_DSYM_FILES 16 /* as the indexer has always read a bundle */
#define PUBLISH_MAX_LINKS 4       /* .gnu_debuglink candidates (SPEC §12.5) */

/* Every file of one input, each opened exactly once by the builder with
 * O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK and fstat'ed as a regular file
 * (SPEC §12.5); the UUIDs, the content hash and the indexer all use these
 * descriptors, so a path renamed meanwhile changes nothing.  Heap-sized
 * (~100 KiB). */
typedef struct publish_input {
	publish_fd in;  /* the input file; fd -1 for a .dSYM bundle */
	unsigned nfiles;
	publish_fd files[PUBLISH_MAX_DSYM_FILES]; /* a bundle's DWARF files, by name */
	uint64_t size;  /* bytes: the file, or every file of the bundle */
	uint64_t dev, ino; /* the input file's identity */
	publish_fd debug;  /* ELF: build-id debug file */
	unsigned nlinks;
	uint32_t link_crc;       /* the input's .gnu_debuglink CRC-32 (nlinks > 0) */
	publish_fd links[PUBLISH_MAX_LINKS]; /* ELF: .gnu_debuglink candidates */
	publish_fd companion; /* Mach-O: BINARY.dSYM/Contents/Resources/DWARF/BINARY */
	publish_fd dwp;       /* ELF: BINARY.dwp, the split DWARF package */
} publish_input;

/* The most .dwo files passed to one indexer run (each is a descriptor in
 * this process and in the indexer's); more are left missing, with a
 * warning that says so.  A program built from more units ships a .dwp. */
#define PUBLISH_MAX_DWOS 256

/* build_inputs.c: open path (a file, or a .dSYM bundle directory and its
 * DWARF files) into in.  Not a regular file: "PATH: not a regular file
 * (fifo)" at once, nothing read.  Returns 0 or a negative code with one
 * line in eb. */
/* Whether the index file at index_path answers nothing (no symbol, no
 * function, no line: SPEC §7.2's empty index), which a build, an import or
 * a fetch of the same image replaces; 0 when it cannot be read as one. */
RD_HIDDEN int rd_index_answers_nothing(const char *index_path);
RD_HIDDEN int build_input_open(publish_input *in, const char *path, char *eb, size_t ebsz);

/* build_inputs.c: find and open the separate debug file candidates of an
 * ELF input (is_macho 0) or the companion dSYM file of a Mach-O file, in
 * the indexer's order and policy (SPEC §12.5); a candidate that is not a
 * regular file, or is the input itself, is skipped.  Never fails. */
RD_HIDDEN void build_input_debug(publish_input *in, const char *path, int is_macho,
                                 const symdb_build_opts *o);

/* publish_build.c: whether the binary at path, of image id (a build-id or
 * LC_UUID; never a fallback identity), has a separate debug file of that
 * image where a build would look for one (build_input_debug: a build-id
 * file, a .gnu_debuglink candidate, a companion dSYM), whose own build-id
 * or LC_UUID is id.  For a first-sight context whose image of path was
 * indexed without DWARF: installed since, the debug file is worth a build
 * (reader_symbolize.c).  0 when none is, or path cannot be read. */
RD_HIDDEN int build_debug_found(const char *path, const symdb_uuid *id);

/* build_inputs.c: open the split DWARF file a skeleton unit names, as the
 * indexer asked for it (want records, SPEC §12.5): a regular file that
 * starts like an ELF file (the name comes from the untrusted input, and
 * what the indexer reads may end up in the index).  Returns 1 with f
 * holding it, 0 when it is missing or refused (why says which). */
RD_HIDDEN int build_input_dwo(const publish_input *in, publish_fd *f, const char *path,
                              const char **why);

/* build_inputs.c: close every descriptor of in. */
RD_HIDDEN void build_input_close(publish_input *in);

/* build_inputs.c: 0 when every file of in (the input, its debug files, a
 * bundle's files) is as fstat found it when opened (size, mtime),
 * else -EAGAIN with "NAME: changed while it was indexed ..." in eb.  The
 * parent reads an input's identity (build-id, LC_UUID) and the indexer its
 * contents from one descriptor; a file written in place between the two
 * (cp or cat over it: the same inode) would otherwise publish one
 * program's index under another's build-id. */
RD_HIDDEN int build_input_unchanged(const publish_input *in, char *eb, size_t ebsz);

/* The UUIDs the builder computed itself for an input; a staged image must
 * carry one of them. */
typedef struct publish_expect {
	unsigned n;
	symdb_uuid uuid[SYMDB_BUILD_MAX_IMAGES];
	char arch[SYMDB_BUILD_MAX_IMAGES][16]; /* Mach-O: from the load commands */
	int is_macho, is_dsym;
} publish_expect;

/* build_spawn.c: stage path in the symdb-indexer executable under the
 * limits of o (SPEC §12.5), handing it in's descriptors and one output file
 * per UUID of ex, created here in st->dir.  On return the indexer is gone
 * and st lists the output files it reported, open.  Returns 0 or a
 * negative code with one line in o->errbuf ("PATH: indexer crashed:
 * signal 11 (Segmentation fault)"); on error every temp file it wrote is
 * removed.  cancel (NULL: never) is a fetch's symdb_fetch_opts.cancel:
 * once it is set the indexer and its process group are killed within
 * about 100 ms, as at the timeout, and -EINTR is returned ("PATH:
 * interrupted"). */
RD_HIDDEN int build_spawn_run(publish_stager *st, const char *path, const publish_input *in,
                              const publish_expect *ex, const symdb_build_opts *o,
                              const volatile sig_atomic_t *cancel);

/* publish_build.c: symdb_builder_add() that cancel (NULL: never) stops as
 * it stops build_spawn_run: -EINTR, nothing published, no temp file left.
 * For symdb_fetch(), whose cancel flag covers the indexing of a
 * debuginfod download too. */
RD_HIDDEN int publish_builder_add(symdb_builder *b, const char *path,
                                  const symdb_build_opts *opts,
                                  const volatile sig_atomic_t *cancel, symdb_build_result *out);

/* build_spawn.c: remove and close every temp file st lists (and, with a
 * tag, every DB/tmp file carrying it). */
RD_HIDDEN void build_stage_discard(publish_stager *st);

/* publish_commit.c: verify every staged image (every checksum and
 * invariant) and publish it into cat under the same-build-id policy (SPEC
 * §12.5), filling res.  Every temp file of st is gone on return.  Returns
 * 0, SYMDB_E_EXISTS for a same-build-id conflict (the other images are
 * still published), or another negative code (nothing published). */
RD_HIDDEN int publish_staged_images(rd_catalog *cat, publish_stager *st, const char *path,
                                    const publish_expect *ex, const symdb_build_opts *o,
                                    symdb_build_result *res);

/* publish_commit.c: 1 when every expected image is indexed, intact, and
 * built from the same contents as in (nothing to do; res is filled as a
 * skip), else 0. */
RD_HIDDEN int publish_unchanged(rd_catalog *cat, const char *path, const publish_input *in,
                                const publish_expect *ex, symdb_build_result *res);

/* publish_file.c: steps 2-5 of SPEC §12.5 for a validated index file at
 * tmp_path in DB/tmp: fsync, rename to DB/images/XX/UUIDHEX.symdb, fsync
 * the directory, commit the entry, holding the directory's lock from
 * before the rename to after the commit.  With only_if_absent a publisher
 * that committed first wins: our entry is not written and *raced is set.
 * Sets e->file; index_path receives the published path.  The temp file is
 * gone on return, renamed or removed. */
RD_HIDDEN int publish_tmp(rd_catalog *cat, rd_cat_entry *e, const char *tmp_path,
                          int only_if_absent, int *raced, char *index_path,
                          size_t index_path_sz, char *errbuf, size_t errbuf_sz);

/* publish_file.c: start writing fd's dirty pages without waiting for them
 * (sync_file_range), so that publish_tmp's fsync finds the work under way. */
RD_HIDDEN void publish_writeback_start(int fd);

/* publish_file.c: the catalog entry of a validated index file at tmp
 * (header facts from info plus the header checksum read from the file). */
RD_HIDDEN int publish_entry_from_file(const char *tmp, const symdb_image_info *info,
                                      rd_cat_entry *e);

/* publish_file.c: the same from a descriptor of the file. */
RD_HIDDEN int publish_entry_from_fd(int fd, const symdb_image_info *info, rd_cat_entry *e);

/* publish_cold.c: 1 when index_path's cold form (index_path + ".lz4", SPEC
 * §12.8) exists and its LZ4 frame declares file_size bytes, else 0. */
RD_HIDDEN int publish_cold_indexed(const char *index_path, uint64_t file_size);

/* publish_build.c: the builder's catalog, and option checking, for
 * publish_import.c and publish_reindex.c. */
RD_HIDDEN rd_catalog *publish_builder_catalog(symdb_builder *b);
RD_HIDDEN int publish_builder_opts(const symdb_build_opts *in, symdb_build_opts *o);

/* Reader options that carry only an errbuf (symdb_image_verify). */
#define PUBLISH_EB_OPTS(buf, size) \
	(&(symdb_open_opts){ .sz = sizeof(symdb_open_opts), .errbuf = (buf), .errbuf_sz = (size) })

/* Copy a filled result into the caller's sized struct (caller->sz >= sizeof(size_t)). */
RD_HIDDEN void publish_result_put(symdb_build_result *caller, const symdb_build_result *full);
#endif /* SYMDB_PUBLISH_INTERNAL_H */
