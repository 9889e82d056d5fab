/* SPDX-License-Identifier: MIT */
/**
 * @file symdb_build.h
 * @brief symdb builder: have a binary indexed once, publish its index file
 *        in the catalog (part of libsymdb).
 *
 * A builder owns a read-write handle on one database directory.  Each
 * symdb_builder_add() has one input (ELF executable, shared object,
 * separate .debug file, Mach-O file or .dSYM bundle) parsed by the
 * symdb-indexer executable, which writes one immutable index file per image
 * to a temporary file; the builder verifies it, fsyncs it, renames it into
 * DB/images/, fsyncs the directory, and only then commits the catalog entry
 * (SPEC §12.5).  A failure at any
 * point leaves the catalog and every published file as they were.
 *
 * Thread safety: one builder may be used from several threads at once;
 * catalog commits are serialised by LMDB's single-writer lock, which also
 * serialises builders in different processes.  Two builds of the same UUID
 * produce one file and one entry.
 */
#ifndef SYMDB_BUILD_H
#define SYMDB_BUILD_H

#include "symdb.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct symdb_builder symdb_builder;

/** Rebuild even if the UUID is already indexed. */
#define SYMDB_BUILD_FORCE    0x1u
/** Index symbol tables only; ignore DWARF. */
#define SYMDB_BUILD_NO_DWARF 0x2u
/**
 * Every input is parsed in a separate, resource-limited process: the
 * symdb-indexer executable (symdb_build_opts.indexer_path), started with
 * posix_spawn (SPEC §12.5); this flag is accepted and changes nothing.
 * The indexer parses the input, writes the index file(s) to DB/tmp and
 * reports them over a pipe; this library never runs the ELF, Mach-O or
 * DWARF parsers (it does not link libdwarf), verifies every checksum of
 * the indexer's files, and publishes them itself.  A crash, abort, hang or
 * memory exhaustion of the indexer becomes an error for that input only
 * ("PATH: indexer crashed: signal 11 (Segmentation fault)").
 *
 * What spawning means for the caller: symdb_builder_add() waits for that
 * child only (waitid/waitpid on its PID, never waitpid(-1)), so a SIGCHLD
 * handler of the application sees it; the child gets an empty
 * environment, the caller's ignored signals and stderr (stdin and stdout on
 * /dev/null), no other descriptor, a process group of its own (so a
 * terminal's Ctrl-C does not reach it; it dies with the *thread* that
 * started it, PR_SET_PDEATHSIG), and a seccomp sandbox: a forbidden system
 * call is "PATH: indexer violated its sandbox: NAME".  posix_spawn runs no code of this library between
 * fork and exec, so any thread may call this at any time.
 */
#define SYMDB_BUILD_ISOLATE  0x4u
/**
 * For symdb_builder_open() before symdb_builder_reindex(): a damaged
 * catalog (data.mdb truncated, missing or not LMDB's, SPEC §12.1) is not
 * opened but moved aside to DB/catalog.damaged-<UTC time> and replaced by
 * an empty one, which reindex then fills from the index files
 * (symdb_builder_recovered() says what was moved).  A catalog of another
 * schema, or one refused for a symbolic link or permissions, is not moved.
 */
#define SYMDB_BUILD_RECOVER  0x8u
/**
 * Record no source path for the images of this call (SPEC §12.2 `paths`):
 * for an input whose path means nothing once the call returns, such as a
 * temporary file (`symdb serve`'s uploads).  A path recorded by an earlier
 * build of the same UUID is left as it is, as for an import.
 */
#define SYMDB_BUILD_NO_SOURCE_PATH 0x10u

typedef struct symdb_build_opts {
	size_t sz;             /**< sizeof(symdb_build_opts) (SYMDB_OPTS) */
	unsigned flags;        /**< SYMDB_BUILD_*; unknown bits give SYMDB_E_INVAL */
	const char *debug_dir; /**< extra directory searched for separate debug files, or NULL */
	char *errbuf;          /**< optional one-line reason on failure */
	size_t errbuf_sz;
	/** The indexer's wall-clock limit per input in seconds (also its
	 *  CPU-time limit); 0 = 120 s plus 1 s per MiB of input. */
	unsigned timeout_s;
	/** The indexer's address-space limit (RLIMIT_AS,
	 *  also its output-file limit RLIMIT_FSIZE) in bytes; 0 = the larger of
	 *  8 GiB and 64 times the input size.  Not applied under
	 *  AddressSanitizer, which reserves terabytes of address space. */
	uint64_t memory_limit;
	/** Threads that read one input's DWARF: 0 = as many as there are online
	 *  CPUs (at most 8) when the input has enough DWARF to share, else this
	 *  many (at most one per unit).  The index is byte-identical whatever
	 *  the value. */
	unsigned threads;
	/** The symdb-indexer executable to run, or NULL for the installed one
	 *  (BINDIR/symdb-indexer). */
	const char *indexer_path;
} symdb_build_opts;

/** At most this many images are listed per input (FMT_MO_MAX_SLICES). */
#define SYMDB_BUILD_MAX_IMAGES 64

/** One image of a multi-image input: a slice of a universal Mach-O file, or
 *  one file of a .dSYM bundle. */
typedef struct symdb_build_image {
	symdb_uuid uuid;
	int skipped;  /**< 1: already indexed, nothing written; 2: already
	                   indexed from different contents, kept (the call
	                   returns SYMDB_E_EXISTS and says so in errbuf) */
	int replaced; /**< 1: replaced an index without DWARF; 2: one made from
	                   .dynsym only, with a full symbol table; 3: one without
	                   this file's kind of symbol table (SPEC §12.5, §7.2.2) */
	char arch[16]; /**< "arm64", "x86_64", ... */
} symdb_build_image;

/** What one symdb_builder_add() did.  Caller-allocated and sized: set sz
 *  (SYMDB_OPTS(symdb_build_result, r)) before the call; the library writes
 *  min(sz, its own size) bytes and sets sz to that count, so the struct may
 *  grow at the end. */
typedef struct symdb_build_result {
	size_t sz;              /**< in: sizeof as the caller knows it; out: bytes filled */
	symdb_uuid uuid;
	int skipped;            /**< 1: already indexed, nothing written */
	uint64_t file_size;     /**< bytes of the index file */
	uint64_t nsymbols;      /**< symbols stored */
	uint64_t nline_rows;    /**< line rows stored */
	uint64_t ninline_nodes; /**< inline nodes stored */
	char index_path[4096];  /**< the published file */
	char debug_path[4096];  /**< the separate debug file used, or "" */
	/** Mach-O inputs: every image handled, in file order (the fields above
	 *  describe images[0]); 0 for ELF. */
	unsigned nimages;
	symdb_build_image images[SYMDB_BUILD_MAX_IMAGES];
	/** Not 0: the UUID was indexed from an input carrying less, and this
	 *  one replaced that index (SPEC §12.5): 1 the old one had no DWARF and
	 *  this one has; 2 the old one had .dynsym only and this one a full
	 *  symbol table; 3 this one also stores a kind of symbol table the old
	 *  one lacked (a stripped binary after its .debug file, §7.2.2). */
	int replaced;
	/** Split DWARF: one line ("PATH: split DWARF file not found\n") per
	 *  .dwo file a skeleton unit names that could not be read; the index
	 *  then holds those units' skeleton line tables, as llvm-symbolizer 14
	 *  answers without the file.  "" when none.  PATH comes from the
	 *  input's DWARF: it is escaped as errbuf text is (symdb.h "Conventions"),
	 *  so each line holds no control byte. */
	char warnings[4096];
} symdb_build_result;

/**
 * @brief symdb_builder_open() opens (creating if needed) a database for writing.
 * @param dir  database directory (symdb_default_dir() gives the conventional
 *             one); NULL fails with -ENOENT.
 * @param opts NULL or options: errbuf, and SYMDB_BUILD_RECOVER (other flags
 *             are checked, not kept: each symdb_builder_add() takes its own
 *             options).
 * @param out  receives the builder, owned by the caller (symdb_builder_close()).
 * @return 0; -EACCES/-EROFS when the directory is not writable; -errno;
 *         SYMDB_E_CATALOG for a damaged catalog (errbuf: "DB/catalog/data.mdb:
 *         truncated: N bytes, the catalog needs M (run 'symdb reindex')"),
 *         unless SYMDB_BUILD_RECOVER moved it aside; -ELOOP when DB/catalog,
 *         data.mdb or lock.mdb is a symbolic link.
 * @note The builder may be shared by threads (see the file comment).
 */
SYMDB_API int symdb_builder_open(const char *dir, const symdb_build_opts *opts,
                                 symdb_builder **out);

/**
 * @brief symdb_builder_close() releases the builder.
 * @param b NULL (nothing happens) or a builder from symdb_builder_open(); it
 *          is freed, and every symdb_build_result it filled stays the
 *          caller's.
 * @note Must not race with other calls on b: call it once every thread
 *       that shares b is done with it.
 */
SYMDB_API void symdb_builder_close(symdb_builder *b);

/**
 * @brief symdb_builder_add() indexes one binary and publishes it.
 *
 * Same build-id, different contents (SPEC §12.5): an image already indexed
 * from the same bytes (the input itself or the separate debug file it was
 * indexed with) is skipped; from different bytes, the new input replaces the
 * index when it carries strictly more (DWARF over none, a full symbol table
 * over .dynsym only: out->replaced), is skipped when it carries less, and is
 * otherwise refused with SYMDB_E_EXISTS (the existing index is kept;
 * SYMDB_BUILD_FORCE replaces).
 * @param b    an open builder.
 * @param path the input binary.
 * @param opts NULL or options (flags, debug_dir, errbuf, limits, threads).
 * @param out  NULL, or caller-allocated with out->sz set (SYMDB_OPTS()):
 *             receives what was done (min(out->sz, its size) bytes).
 * @return 0 (out->skipped says whether anything was written); -errno for I/O
 *         errors (-ENOSPC: nothing was published); SYMDB_E_BAD_OBJECT for an
 *         input that is not a supported object, or whose isolated indexer
 *         crashed; -ETIMEDOUT / -ENOMEM when it ran out of time or memory;
 *         SYMDB_E_EXISTS for a same-build-id conflict; SYMDB_E_TOO_BIG past a
 *         format limit.  opts->errbuf names the file and the reason.
 * @note Thread-safe on one builder.
 */
SYMDB_API int symdb_builder_add(symdb_builder *b, const char *path,
                                const symdb_build_opts *opts, symdb_build_result *out);

/**
 * @brief symdb_builder_import_file() publishes an existing index file (one
 *        image of an export bundle, SPEC §12.7) as if it had been built here.
 *
 * The file is copied to a new temporary file in DB/tmp and fsynced; the copy
 * is opened with every table checksum verified and every invariant checked
 * (symdb_image_verify), its header UUID compared with *expect (when not
 * NULL); only then is it renamed into DB/images and committed (SPEC §12.5).
 * An image already indexed with its file intact is skipped (out->skipped = 1)
 * unless SYMDB_BUILD_FORCE.
 * @param b          an open builder.
 * @param index_path the index file to publish (it is copied, not moved).
 * @param expect     NULL, or the UUID the file must carry.
 * @param opts       NULL or options (SYMDB_BUILD_FORCE, errbuf).
 * @param out        caller-allocated with out->sz set (SYMDB_OPTS()).
 * @return 0; SYMDB_E_CHECKSUM/_CORRUPT/_FORMAT/_VERSION for a damaged file,
 *         SYMDB_E_INVAL when the UUID differs, -errno for I/O errors.  On
 *         error nothing is published.
 * @note Thread-safe on one builder.
 */
SYMDB_API int symdb_builder_import_file(symdb_builder *b, const char *index_path,
                                        const symdb_uuid *expect,
                                        const symdb_build_opts *opts,
                                        symdb_build_result *out);

/**
 * Called by symdb_import() once per image, in bundle order, after it was
 * published or skipped (rc 0, res set) or failed (rc < 0, res NULL, why a
 * one-line reason or "").
 * @param uuid the image's UUID (from its bundle record).
 * @param rc   0, or the image's negative error code.
 * @param res  what was published or skipped, or NULL when rc < 0.
 * @param why  a one-line reason when rc < 0, else "".
 * @param arg  symdb_import_opts.arg.
 * @note Runs on the thread that called symdb_import().  uuid, res and why
 *       are owned by symdb_import() and valid only during the call: copy
 *       what is needed.
 */
typedef void (*symdb_import_fn)(const symdb_uuid *uuid, int rc, const symdb_build_result *res,
                                const char *why, void *arg);

/** Options of symdb_import(). */
typedef struct symdb_import_opts {
	size_t sz;                /**< sizeof(symdb_import_opts): set by SYMDB_OPTS() */
	unsigned flags;           /**< SYMDB_BUILD_FORCE: replace images already indexed */
	char *errbuf;             /**< optional: receives a one-line reason on failure,
	                              escaped (symdb.h "Conventions") */
	size_t errbuf_sz;         /**< size of errbuf */
	symdb_import_fn on_image; /**< optional: told what happened to each image */
	void *arg;                /**< passed to on_image */
} symdb_import_opts;

/**
 * @brief symdb_import() reads an export bundle (SPEC §12.7, written by
 *        symdb_export()) from fd and publishes its images into b's database.
 *
 * The bundle is streamed into temporary files in DB/tmp (memory stays
 * bounded whatever it declares); the LZ4 frame's block and content
 * checksums, the record stream and its end, and every image (all table
 * checksums, symdb_image_verify(), the header UUID against the record's)
 * are checked before anything is published.  Then each image goes through
 * symdb_builder_import_file(); one that fails there is reported and the
 * others are still published.
 * @param b     an open builder.
 * @param fd    the bundle, read from its current position to end of file.
 * @param opts  NULL or options.
 * @return 0 when every image was published or skipped; when the bundle is
 *         rejected, nothing is imported and the code is SYMDB_E_CORRUPT (a
 *         damaged, truncated or lying bundle: errbuf has the reason) or the
 *         code of the first damaged image (SYMDB_E_CHECKSUM ...; errbuf:
 *         "image UUID: reason"); when publishing fails for some image, that
 *         image's code (on_image was told; errbuf names the first).
 * @note Thread-safe on one builder, as symdb_builder_import_file().  No
 *       temporary file is left behind.  fd stays the caller's: it is read
 *       but neither closed nor rewound.
 */
SYMDB_API int symdb_import(symdb_builder *b, int fd, const symdb_import_opts *opts);

/** Called by symdb_builder_reindex() for each index file it skips: path
 *  relative to the database directory, and a one-line reason.  For an
 *  unsafe entry (a symbolic link or a foreign-owned entry, never followed:
 *  SPEC §12.1) the reason ends in ", not followed"; for a damaged file it
 *  never does. */
typedef void (*symdb_reindex_fn)(const char *rel_path, const char *why, void *arg);

/**
 * @brief symdb_builder_reindex() rebuilds the catalog from the index files
 *        under DB/images (SPEC §12.6): each DB/images/XX/UUIDHEX.symdb is
 *        opened with every checksum verified and checked by
 *        symdb_image_verify(); a damaged file, or one not named for its
 *        header's UUID, is reported through skipped (may be NULL) and left
 *        alone.  The valid ones replace the catalog's entries in one write
 *        transaction; `used` times of images still present are kept.
 *        Built_At becomes each file's mtime.
 * @param b       an open builder.
 * @param skipped NULL, or told of each file left out (during the call only).
 * @param arg     passed to skipped.
 * @param opts    NULL or options: errbuf (flags are not used).
 * @return the number of images in the new catalog, or a negative error
 *         (errbuf names the directory) with the catalog unchanged.
 * @note Thread-safe: the catalog is replaced in one write transaction.
 */
SYMDB_API int symdb_builder_reindex(symdb_builder *b, symdb_reindex_fn skipped, void *arg,
                                    const symdb_build_opts *opts);

/**
 * @brief symdb_builder_recovered() tells whether symdb_builder_open() with
 *        SYMDB_BUILD_RECOVER moved a damaged catalog aside.
 * @param b an open builder, or NULL.
 * @return NULL when nothing was moved (or b is NULL); else one line: the
 *         damage and the directory the old catalog was moved to
 *         ("DB/catalog/data.mdb: truncated: ... (run 'symdb reindex');
 *         moved to DB/catalog.damaged-20260101T000000Z").
 * @note The string is owned by b and valid until symdb_builder_close(b).
 */
SYMDB_API const char *symdb_builder_recovered(const symdb_builder *b);

#ifdef __cplusplus
}
#endif
#endif /* SYMDB_BUILD_H */
