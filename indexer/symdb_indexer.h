/* SPDX-License-Identifier: MIT */
/**
 * @file symdb_indexer.h
 * @brief The indexer's one entry point: parse one input (ELF, Mach-O or a
 *        .dSYM bundle) and stage an index file per image (SPEC §12.5).
 *
 * This is what the `symdb-indexer` executable runs; the builder of
 * symdb_build.h starts that executable and publishes what it staged.  The
 * indexer writes temp files only - nothing here knows about catalogs or
 * publishing - and reports each one on a descriptor as the fixed records
 * of SPEC §12.5.
 */
#ifndef SYMDB_INDEXER_H
#define SYMDB_INDEXER_H

#ifdef __cplusplus
extern "C" {
#endif

/** Index symbol tables only; ignore DWARF. */
#define SYMDB_INDEXER_NO_DWARF 0x1u

/** One input to stage. */
typedef struct symdb_indexer_job {
	const char *input;       /**< the binary, Mach-O file or .dSYM bundle */
	const char *staging_dir; /**< where temp files go: the database's tmp/ */
	/** Names this job's temp files, STAGING/UUIDHEX<tag>.XXXXXX, so the
	 *  parent can remove what a crash leaves; at most 31 bytes. */
	const char *tag;
	unsigned flags;          /**< SYMDB_INDEXER_* */
	unsigned threads;        /**< DWARF walk threads; 0 = automatic */
	const char *debug_dir;   /**< extra directory for separate debug files, or NULL */
	/** An ELF input's UUID as the caller computed it (SPEC §5.2), as
	 *  "KIND:HEX" (kind in decimal, lowercase hex bytes); NULL for Mach-O,
	 *  whose UUIDs are in its load commands. */
	const char *uuid;
	int report_fd;           /**< receives the records (SPEC §12.5) */
	/** Test-only failure after the first temp file is written: "segv",
	 *  "abort", "hang" or "oom"; NULL in normal use. */
	const char *test_hook;
} symdb_indexer_job;

/**
 * @brief symdb_indexer_run() stages every image of job->input and reports
 *        each on job->report_fd, then sends the end record with the status
 *        and its one-line reason.
 * @return the process exit status to use: 0 when every image was staged,
 *         else the error code's magnitude (1..125; 125 when it does not fit).
 * @note Call once per process: it is made for the indexer executable.
 */
int symdb_indexer_run(const symdb_indexer_job *job);

#ifdef __cplusplus
}
#endif
#endif /* SYMDB_INDEXER_H */
