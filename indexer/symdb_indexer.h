/* SPDX-License-Identifier: MIT */
/**
 * @file symdb_indexer.h
 * @brief The indexer's one entry point: parse one input (ELF, Mach-O or a
 *        .dSYM bundle) and stage an index file per image (SPEC §12.5).
 *
 * This is what the `symdb-indexer` executable runs; the builder of
 * symdb_build.h starts that executable and publishes what it staged.  The
 * indexer writes temp files only - nothing here knows about catalogs or
 * publishing - into descriptors the caller opened, and reports each one
 * on a descriptor as the fixed records of SPEC §12.5.
 */
#ifndef SYMDB_INDEXER_H
#define SYMDB_INDEXER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Index symbol tables only; ignore DWARF. */
#define SYMDB_INDEXER_NO_DWARF 0x1u
/** The inputs are the DWARF files of one .dSYM bundle (all Mach-O). */
#define SYMDB_INDEXER_DSYM 0x2u
/** The builder already opened every split DWARF file it could (dwos): the
 *  indexer reports no missing one (SPEC §12.5). */
#define SYMDB_INDEXER_DWO_PASS 0x4u

/** An open file and the name it goes by in messages and in the index
 *  (Image_Name is the base name of an input's name; a debug file's name is
 *  what the report records).  The indexer only reads through fd (pread,
 *  fstat, mmap): it never opens the name.  fd -1: none. */
typedef struct symdb_indexer_file {
	int fd;
	const char *name;
} symdb_indexer_file;

/** Where the index file of the image with this UUID goes: an open,
 *  writable regular file, truncated and written by the indexer. */
typedef struct symdb_indexer_output {
	int fd;
	const char *uuid; /**< lowercase hex, as SPEC §12.1 spells it */
} symdb_indexer_output;

/** One input to stage: every file comes open (SPEC §12.5), so the indexer
 *  opens, stats and resolves no path at all. */
typedef struct symdb_indexer_job {
	/** The input file, or (SYMDB_INDEXER_DSYM) a .dSYM bundle's DWARF
	 *  files in name order. */
	const symdb_indexer_file *inputs;
	unsigned ninputs;
	/** ELF: the separate debug file found by build-id, or fd -1. */
	symdb_indexer_file debug;
	/** ELF: .gnu_debuglink candidates in search order; the first whose
	 *  CRC-32 matches is used (when debug is none). */
	const symdb_indexer_file *debuglinks;
	unsigned ndebuglinks;
	/** Mach-O: the companion BINARY.dSYM DWARF file, or fd -1. */
	symdb_indexer_file companion;
	/** ELF split DWARF: the .dwo files the builder opened, each named by
	 *  the path a skeleton unit gives (comp_dir + dwo_name, as LLVM 14
	 *  joins them); the indexer matches names exactly. */
	const symdb_indexer_file *dwos;
	unsigned ndwos;
	/** ELF split DWARF: BINARY.dwp, or fd -1 (a zeroed job: none). */
	symdb_indexer_file dwp;
	/** One per image the caller expects. */
	const symdb_indexer_output *outputs;
	unsigned noutputs;
	unsigned flags;          /**< SYMDB_INDEXER_* */
	unsigned threads;        /**< DWARF walk threads; 0 = automatic */
	unsigned cpus;           /**< CPUs the automatic count may use (0 = 1) */
	/** An ELF input's UUID as the caller computed it (SPEC §5.2), as
	 *  "KIND:HEX" (kind in decimal, lowercase hex bytes); NULL for Mach-O,
	 *  whose UUIDs are in its load commands. */
	const char *uuid;
	int report_fd;           /**< receives the records (SPEC §12.5) */
	/** Called after each temp file is written and before it is reported;
	 *  a non-zero return (a negative code, its reason in errbuf) fails the
	 *  job.  The test build of symdb-indexer fails here on purpose (crash,
	 *  hang, sandbox violation); NULL in normal use. */
	int (*test_hook)(char *errbuf, size_t errbuf_sz);
} symdb_indexer_job;

/**
 * @brief symdb_indexer_prepare() does now what the indexer would otherwise
 *        do on first use: libelf's initialisation.
 * @note Call before the process confines itself (a seccomp filter that
 *       allows no open); calling it later, or never, is also correct.
 */
void symdb_indexer_prepare(void);

/**
 * @brief symdb_indexer_end_record() encodes an end record (SPEC §12.5) with
 *        status and the one-line reason msg into buf.
 * @return the record's size in bytes, or 0 when sz is too small (16 KiB
 *         is always enough).
 * @note Allocates nothing and takes no lock, so a signal handler may call
 *       it (to say why the process dies); not reentrant: one caller at a
 *       time.
 */
size_t symdb_indexer_end_record(unsigned char *buf, size_t sz, int status, const char *msg);

/**
 * @brief symdb_indexer_run() stages every image of job->inputs and reports
 *        each on job->report_fd, then sends the end record with the status
 *        and its one-line reason.
 * @return the process exit status to use: 0 when every image was staged,
 *         else the error code's magnitude (1..125; 125 when it does not fit).
 * @note Call once per process: it is made for the indexer executable.
 *       The descriptors stay open and owned by the caller.
 */
int symdb_indexer_run(const symdb_indexer_job *job);

#ifdef __cplusplus
}
#endif
#endif /* SYMDB_INDEXER_H */
