/* SPDX-License-Identifier: MIT */
/**
 * @file symdb.h
 * @brief symdb reader library: resolve batches of addresses against an
 *        mmap-indexed, on-disk symbol database.
 *
 * @mainpage symdb
 *
 * A symdb database is a directory holding an LMDB catalog and one immutable
 * index file per image UUID (ELF GNU build-id, Mach-O LC_UUID, or a fallback
 * hash).  `symdb build` (see symdb_build.h) reads a binary and its DWARF once
 * and writes big-endian sorted tables of symbol ranges, inline ranges and line
 * ranges plus a string pool (SPEC.md).  This library opens the catalog, maps
 * an image's file read-only, validates its header and directory against the
 * file size, and resolves *presorted* batches of addresses with searches over
 * the mapping.  Results point into the mapping: nothing is parsed, copied or
 * allocated per address.
 *
 * Typical use, a complete program (tests/cli/header_example.sh compiles this
 * block against the installed header and libsymdb, and runs it):
 * @code
 * #include <stdio.h>
 * #include <stdlib.h>
 * #include <symdb.h>
 *
 * static int cmp_u64(const void *a, const void *b)
 * {
 *         uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
 *         return x < y ? -1 : x > y;
 * }
 *
 * // example DBDIR BINARY HEXADDR...: function, file and line of each address
 * int main(int argc, char **argv)
 * {
 *         char err[256] = "";
 *         SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
 *         uint64_t addrs[64];
 *         symdb_frame frames[256];
 *         symdb_result res[64];
 *         symdb *db = NULL;
 *         symdb_image *img = NULL;
 *         symdb_uuid id;
 *         size_t n = 0, done = 0;
 *         int rc = argc > 2 ? 0 : SYMDB_E_INVAL;
 *
 *         for (int i = 3; i < argc && n < 64; i++)
 *                 addrs[n++] = strtoull(argv[i], NULL, 16);
 *         qsort(addrs, n, sizeof addrs[0], cmp_u64); // resolve wants them sorted
 *         // The library reads no environment: the caller names the directory
 *         // (symdb_default_dir() derives the conventional one).
 *         if (rc == 0)
 *                 rc = symdb_open(argv[1], &o, &db);
 *         if (rc == 0)
 *                 rc = symdb_file_uuid(argv[2], &o, &id); // the binary's build-id
 *         if (rc == 0)
 *                 rc = symdb_image_open_uuid(db, &id, &o, &img);
 *         while (rc == 0 && done < n) {
 *                 // Element sizes let a newer library fill an older caller's arrays.
 *                 ptrdiff_t k = symdb_resolve_batch(img, addrs + done, n - done, frames, 256,
 *                                                   sizeof frames[0], res + done,
 *                                                   sizeof res[0]);
 *                 if (k < 0) {
 *                         rc = (int)k;
 *                         break;
 *                 }
 *                 for (size_t i = done; i < done + (size_t)k; i++)
 *                         for (uint32_t f = res[i].first; f < res[i].first + res[i].count; f++)
 *                                 printf("0x%llx %s %s:%u\n", (unsigned long long)addrs[i],
 *                                        frames[f].name ? frames[f].name : "??",
 *                                        frames[f].file ? frames[f].file : "??",
 *                                        frames[f].line);
 *                 done += (size_t)k; // fewer than asked: frames ran out, go on
 *         }
 *         if (rc)
 *                 fprintf(stderr, "example: %s\n", err[0] ? err : symdb_strerror(rc));
 *         symdb_image_close(img);
 *         symdb_close(db);
 *         return rc ? 1 : 0;
 * }
 * @endcode
 *
 * Caveats:
 * - The catalog is LMDB: a database on NFS, SMB or CIFS is refused
 *   (SYMDB_E_NETFS), since LMDB's locking does not work there.
 * - Index files are mapped with mmap(2).  A file is validated against fstat at
 *   open, so a truncated file is rejected instead of raising SIGBUS; a file
 *   truncated *after* it was opened (by something other than symdb, which
 *   never modifies a published file) raises SIGBUS in whatever thread reads
 *   past its new end.  The library installs no signal handler: a
 *   long-running program that must survive this installs one that calls
 *   symdb_fault_recover() (its documentation has the handler); the image
 *   then reads as damaged and the others keep working.
 * - After fork(2), a child must open its own symdb handle (LMDB rule).
 * - Never delete DB/catalog/lock.mdb while a symdb process runs: writers
 *   would stop excluding each other.  A writer that notices refuses to
 *   commit (SYMDB_E_LOCK_REPLACED); readers cannot notice (SPEC §12.1).
 *   A truncated data.mdb is refused at open, never mapped (SPEC §12.1).
 *
 * Threads: a symdb handle and its images may be shared by any number of
 * threads; every call on them is thread-safe unless its note says otherwise
 * (symdb_close(), symbolizer contexts).  The library's own locking rules,
 * which keep callbacks free to call back in:
 * - callbacks (symdb_list()'s fn, on_decompress) run with no library lock
 *   held and no catalog transaction open: they may open and close images,
 *   mark them used or list again, on the same handle (symdb_catalog_check()'s
 *   fn is the exception: it runs inside the check's transaction and must
 *   not call into the handle);
 * - the handle's image cache is locked only to look up, link and count an
 *   image, never across a catalog transaction, a file open, mmap or a thaw:
 *   a cold image being decompressed (SPEC §12.8) blocks no open or close of
 *   any other image, and a second opener of the same image waits for the
 *   first (a flock on its directory) and maps its result;
 * - the catalog's map is grown or adopted (another process grew it) only by
 *   a thread holding no transaction, so growth never deadlocks a listing;
 * - every handle of the process on one catalog (symdb handles, builders,
 *   symbolizer contexts, fetches) shares one LMDB environment, counted:
 *   closing one never drops the locks the others hold (SPEC §12.4);
 * - every image holds a reference to the handle's cache: images may be
 *   closed after symdb_close(), in any thread, also images superseded by a
 *   re-index;
 * - an open that catches a re-index between its rename and its catalog
 *   commit waits for the commit and retries (a bounded number of times),
 *   so a legitimate `symdb build --force` never shows readers a "damaged"
 *   file; a file that really disagrees with the catalog is SYMDB_E_CORRUPT.
 *
 * Conventions: every fallible function returns 0 (or a count) on success and a
 * negative error code on failure: -errno for system errors, SYMDB_E_* for
 * symdb's own; no other positive values.  Handles are returned through
 * `T **out`.  A one-line reason goes to the optional errbuf of the options
 * struct every such function takes (never a loose buffer argument).
 * That text is always one line of valid UTF-8, whatever bytes the reason
 * names (a path the caller gave, names read from a hostile file, a message
 * of the sandboxed indexer or of an upstream store), escaped as the symdb
 * command prints names: a newline, tab and carriage return as \n \t \r,
 * every other byte below 0x20 and DEL as \xNN, a backslash as \\, a byte
 * that is not part of valid UTF-8 and the two bytes of a C1 control
 * (U+0080-U+009F) as \xNN.  A backslash that already starts one of these
 * escapes is kept, so a reason quoting another errbuf is not escaped twice
 * (a name holding such a sequence literally reads like its escaped form).
 * A reason longer than errbuf_sz is cut between two escapes; one that names
 * a path ("PATH: reason") keeps the whole reason and shortens the path in
 * the middle ("/a/b...y/z").
 * Options structs (SYMDB_OPTS) and caller-allocated outputs carry their
 * size, so both may grow at the end without breaking callers built against
 * an older header: options past a caller's sz read as zero, and the library
 * writes min(the caller's size, its own) bytes of each output (the sz field
 * of symdb_image_info, symdb_entry, symdb_compact_stats and
 * symdb_build_result; the frame_sz and result_sz of symdb_resolve_batch();
 * the elem_sz of symdb_file_uuids()).
 * The library reads no environment variables: defaults that come from the
 * environment are the caller's (symdb_default_dir()).
 */
#ifndef SYMDB_H
#define SYMDB_H

#include <stddef.h>
#include <stdint.h>

#include "symdb_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1.0.0: the API that can grow (sized outputs and options, errbuf only
 * through options, no environment reads); it breaks 0.1's ABI. */
#define SYMDB_VERSION_MAJOR 1 /* breaking API/ABI change */
#define SYMDB_VERSION_MINOR 0 /* additions */
#define SYMDB_VERSION_PATCH 0 /* fixes */
#define SYMDB_VERSION_NUMBER \
	(SYMDB_VERSION_MAJOR * 100 * 100 + SYMDB_VERSION_MINOR * 100 + SYMDB_VERSION_PATCH)

#ifndef SYMDB_API
#if defined(__GNUC__)
#define SYMDB_API __attribute__((visibility("default")))
#else
#define SYMDB_API
#endif
#endif

/* Error codes (SYMDB_E_*): symdb_errors.h, shared with the indexer. */

/**
 * @brief symdb_strerror() describes an error code.
 * @param err a value returned by any symdb function (SYMDB_E_* or -errno).
 * @return a static string, never NULL, starting with the code's name for
 *         symdb codes ("SYMDB_E_CORRUPT: ...") or strerror's text for -errno.
 * @note Thread-safe.
 */
SYMDB_API const char *symdb_strerror(int err);

/**
 * @brief symdb_version_number() tells which library is linked (it may be
 *        newer than the header a program was built with).
 * @return SYMDB_VERSION_NUMBER of the library actually linked.
 * @note Thread-safe.
 */
SYMDB_API unsigned symdb_version_number(void);
/**
 * @brief symdb_version_string() is symdb_version_number() for humans.
 * @return "MAJOR.MINOR.PATCH" of the library actually linked: a static
 *         string, never NULL.
 * @note Thread-safe.
 */
SYMDB_API const char *symdb_version_string(void);

typedef struct symdb symdb;             /**< a database: catalog + mapped images */
typedef struct symdb_image symdb_image; /**< one immutable, mapped index file */

/**
 * Called once per decompression of a cold image (SPEC §12.8), on the thread
 * that opened it: `file` is the cold file's name ("UUIDHEX.symdb.lz4", no
 * directory), `on_disk` 1 when it was thawed into place, 0 when it was
 * decompressed into memory only (a read-only database, SYMDB_OPEN_NO_THAW,
 * symdb_image_open_file() of a `.lz4`).  It runs after the decompression,
 * with no library lock held: it may call into symdb, and delays only the
 * open that triggered it.
 */
typedef void (*symdb_decompress_fn)(const char *file, int on_disk, void *arg);

/** Options for symdb_open(), symdb_image_open_*() and the other calls that
 *  take them (errbuf; flags that do not apply to a call must be 0). */
typedef struct symdb_open_opts {
	size_t sz;          /**< sizeof(symdb_open_opts): set by SYMDB_OPTS() */
	unsigned flags;     /**< SYMDB_OPEN_*; unknown bits give SYMDB_E_INVAL */
	char *errbuf;       /**< optional: receives a one-line reason on failure,
	                        escaped (symdb.h "Conventions") */
	size_t errbuf_sz;   /**< size of errbuf */
	/** optional, symdb_open() and symdb_image_open_*(): told of every
	 *  decompression of a cold image.  Given to symdb_open(), it applies to
	 *  every image opened on that handle whose own opts name none. */
	symdb_decompress_fn on_decompress;
	void *on_decompress_arg; /**< passed to on_decompress */
} symdb_open_opts;

/** Open the catalog read-write (needed by the indexer; readers don't). */
#define SYMDB_OPEN_WRITE            0x1u
/** Verify every table checksum when an image is opened (O(file size): every
 *  page is read and mapped).  Without it, open does the structural check of
 *  SPEC §9 (size, header, directory: a few pages) and a damaged table can
 *  give wrong or SYMDB_E_CORRUPT results but never an out-of-bounds read;
 *  symdb_image_verify() checks the rest. */
#define SYMDB_OPEN_VERIFY_CHECKSUMS 0x2u
/** Create the database directory if it does not exist (implies WRITE). */
#define SYMDB_OPEN_CREATE           0x4u
/** Never write a compacted image back to the database (SPEC §12.8):
 *  decompress it into private memory for this handle only (verify, export,
 *  info).  Without it, the first open of a cold image thaws it on disk. */
#define SYMDB_OPEN_NO_THAW          0x8u
/** symdb_image_open_*(): the image answers requests that name a file whose
 *  symbol table is a `.symtab` (NAMES_SYMTAB) or only a `.dynsym`
 *  (NAMES_DYNSYM), such as a separate debug file and the stripped binary of
 *  one build-id (SPEC §7.2.2): outermost names come from the stored table
 *  llvm-symbolizer-14 would read from that file.  Neither: the image's own
 *  table, as indexed.  symdb_image_open_binary() sets the one its file
 *  holds; symdb_file_symbol_table() tells it for a path. */
#define SYMDB_OPEN_NAMES_SYMTAB     0x10u
#define SYMDB_OPEN_NAMES_DYNSYM     0x20u

/**
 * Declare and initialise an options struct, or a sized output struct, with
 * its sz set: SYMDB_OPTS(symdb_open_opts, o, .flags = 0);
 *
 * Options structs grow only at the end.  A caller built against an older,
 * smaller struct passes a smaller sz: the fields it does not know read as
 * zero.  A caller built against a newer, larger struct may run with an older
 * library as long as every byte past the fields that library knows is zero
 * (the new fields are unused); otherwise the call fails with SYMDB_E_INVAL
 * and errbuf names the offset.
 */
#define SYMDB_OPTS(TYPE, NAME, ...) TYPE NAME = { .sz = sizeof(TYPE), __VA_ARGS__ }

/**
 * @brief symdb_default_dir() writes the conventional database directory
 *        into buf: symdb_dir, else xdg_cache_home/symdb, else
 *        home/.cache/symdb.  The library reads no environment: a caller
 *        that follows the convention passes the values of $SYMDB_DIR,
 *        $XDG_CACHE_HOME and $HOME, as the CLI does.
 * @param symdb_dir      NULL or the value of $SYMDB_DIR.
 * @param xdg_cache_home NULL or the value of $XDG_CACHE_HOME (used only
 *                       when absolute, per the XDG Base Directory rule).
 * @param home           NULL or the value of $HOME.
 * @param buf            receives the directory, NUL-terminated.
 * @param bufsz          size of buf.
 * @return 0; -ENAMETOOLONG if buf is too small; -ENOENT if none can be
 *         derived (empty values count as unset); SYMDB_E_INVAL for a NULL
 *         or empty buf.
 * @note Pure: no I/O, thread-safe.
 */
SYMDB_API int symdb_default_dir(const char *symdb_dir, const char *xdg_cache_home,
                                const char *home, char *buf, size_t bufsz);

/**
 * @brief symdb_open() opens a database directory.
 * @param dir  the database directory (symdb_default_dir() gives the
 *             conventional one); NULL fails with -ENOENT.
 * @param opts NULL or options (errbuf, SYMDB_OPEN_WRITE, SYMDB_OPEN_CREATE,
 *             and on_decompress for every image opened on the handle).
 * @param out  receives the handle, owned by the caller (symdb_close()).
 * @return 0; -ENOENT if the database does not exist (and CREATE was not
 *         given); -EACCES/-EROFS if it cannot be opened as asked;
 *         SYMDB_E_CATALOG if the catalog is damaged or of another schema;
 *         SYMDB_E_NETFS if the directory is on NFS, SMB or CIFS (LMDB's
 *         locking does not work there; SPEC §12.1).
 * @note A read-only open needs no write access to the directory.  The handle
 *       may be shared by threads; close it once, when no thread uses it.
 */
SYMDB_API int symdb_open(const char *dir, const symdb_open_opts *opts, symdb **out);

/**
 * @brief symdb_close() releases a database handle.
 * @param db NULL (nothing happens) or a handle from symdb_open().
 * @note Images still open stay valid (each keeps its own mapping and a
 *       reference to the handle's image cache) and are closed with
 *       symdb_image_close() as usual, before or after this, in any thread.
 *       Must not race with any other call on db itself.
 */
SYMDB_API void symdb_close(symdb *db);

/**
 * @brief symdb_dir() names the database directory of a handle.
 * @param db an open database.
 * @return the directory as given to symdb_open(): owned by db, valid until
 *         symdb_close(db).
 * @note Thread-safe.
 */
SYMDB_API const char *symdb_dir(const symdb *db);

/** UUID kinds (SPEC §5). */
enum symdb_uuid_kind {
	SYMDB_UUID_GNU_BUILD_ID = 1,
	SYMDB_UUID_MACHO = 2,
	SYMDB_UUID_FALLBACK = 3 /**< XXH3-128 of the loadable contents (SPEC §5.2) */
};

#define SYMDB_UUID_MAX 32

/** An image identity. */
typedef struct symdb_uuid {
	uint8_t bytes[SYMDB_UUID_MAX];
	uint8_t len;   /**< 1..32 */
	uint8_t kind;  /**< enum symdb_uuid_kind */
} symdb_uuid;

/**
 * @brief symdb_file_uuid() computes the identity symdb keys a binary by: the
 *        ELF GNU build-id note, else the fallback hash of SPEC §5.2.
 * @param path a binary (ELF executable, shared object or .debug file).
 * @param opts NULL or options (errbuf).
 * @param out  receives the UUID.
 * @return 0; -errno if the file cannot be read; SYMDB_E_BAD_OBJECT if it is not
 *         an object symdb understands.
 * @note Thread-safe.  Reads the file; does not touch any database.
 */
SYMDB_API int symdb_file_uuid(const char *path, const symdb_open_opts *opts, symdb_uuid *out);

/** One image inside a file: a universal Mach-O file holds one per
 *  architecture slice. */
typedef struct symdb_file_image {
	symdb_uuid uuid;
	uint32_t cputype, cpusubtype; /**< Mach-O; 0 for ELF */
	char arch[16];                /**< "arm64", "x86_64", ...; "" for ELF */
} symdb_file_image;

/**
 * @brief symdb_file_uuids() lists the images of a file: one for an ELF or
 *        thin Mach-O file, one per slice of a universal Mach-O file (in
 *        file order).  A .dSYM bundle directory is read through its first
 *        file in Contents/Resources/DWARF/.
 * @param path a binary, or a .dSYM bundle directory.
 * @param opts NULL or options (errbuf).
 * @param out  caller-owned array of max elements (may be NULL when max is 0,
 *             to count).
 * @param max  its capacity, in elements.
 * @param elem_sz sizeof(symdb_file_image) as the caller knows it: the array's
 *             stride.  The library writes min(elem_sz, its own size) bytes of
 *             each element, so a caller built against an older, smaller struct
 *             is never overrun and a newer, larger one keeps its unknown tail
 *             as it was.
 * @return the number of images (out receives at most max of them), or a
 *         negative code as symdb_file_uuid(); SYMDB_E_BAD_OBJECT for a
 *         universal file two of whose slices are of one architecture or
 *         carry one LC_UUID (which symdb_builder_add() refuses too); SYMDB_E_INVAL for a NULL path,
 *         a NULL out with max > 0, or a zero elem_sz.
 * @note Thread-safe.  Reads the file; does not touch any database.  Nothing
 *       is allocated for the caller; out stays the caller's.
 */
SYMDB_API int symdb_file_uuids(const char *path, const symdb_open_opts *opts,
                               symdb_file_image *out, size_t max, size_t elem_sz);

/**
 * @brief symdb_uuid_parse() parses a UUID written in hex.
 * @param hex an even number of hex digits, 2..64 of them; dashes are
 *            ignored (so "0123-4567-..." and Mach-O's form both work).
 * @param out receives the bytes and len; kind is 0 (unknown).
 * @return 0, or SYMDB_E_INVAL for a NULL argument, a non-hex character or a
 *         bad digit count (out is then unchanged).
 * @note Pure; thread-safe.
 */
SYMDB_API int symdb_uuid_parse(const char *hex, symdb_uuid *out);
/**
 * @brief symdb_uuid_format() writes a UUID as lowercase hex, no dashes.
 * @param id  the UUID (len bytes of bytes[]).
 * @param buf at least 2 * SYMDB_UUID_MAX + 1 = 65 bytes; receives the
 *            NUL-terminated text.
 * @note Pure; thread-safe.
 */
SYMDB_API void symdb_uuid_format(const symdb_uuid *id, char *buf);

/**
 * @brief symdb_image_open_uuid() maps the index file of one image.
 * @param db   an open database.
 * @param id   the image's UUID (kind is ignored: the bytes are the key).
 * @param opts NULL or options (errbuf, SYMDB_OPEN_VERIFY_CHECKSUMS).
 * @param out  receives the image.
 * @return 0; SYMDB_E_NOT_INDEXED if the catalog has no such image;
 *         SYMDB_E_FORMAT/_VERSION/_CORRUPT/_CHECKSUM if its file is damaged
 *         (errbuf names the field: "table 4 ends past EOF (0x1200 > 0x1000)").
 * @note Cold storage (SPEC §12.8): when the index file is missing and its
 *       LZ4 form `FILE.lz4` exists, the first open decompresses it once
 *       (serialized per image across threads and processes by a flock on
 *       its directory), verifies it (LZ4 content checksum, File_Size and
 *       Header_Checksum against the catalog, every table checksum), renames
 *       it into place and removes the `.lz4`; later opens map it as usual.
 *       A database this process cannot write, or SYMDB_OPEN_NO_THAW, gets
 *       the decompressed bytes in anonymous memory and nothing is written.
 *       A damaged `.lz4` gives SYMDB_E_CHECKSUM or SYMDB_E_CORRUPT with
 *       errbuf naming it, and is left in place.
 * @note The same image opened twice on one db shares one mapping (reference
 *       counted) as long as the catalog lists the same file; after a re-index
 *       the next open maps the new file while earlier handles keep the old
 *       one.  Opening is internally locked and may race with other opens.
 *       Work at open is one catalog read plus O(number of tables), unless
 *       VERIFY_CHECKSUMS.
 */
SYMDB_API int symdb_image_open_uuid(symdb *db, const symdb_uuid *id,
                                    const symdb_open_opts *opts, symdb_image **out);

/**
 * @brief symdb_image_open_binary() = symdb_file_uuid() of binary_path, then
 *        symdb_image_open_uuid() of that UUID with the SYMDB_OPEN_NAMES_*
 *        flag of binary_path (symdb_file_symbol_table()) unless opts has one.
 * @param db          an open database.
 * @param binary_path the binary whose index is wanted (read for its UUID).
 * @param opts        NULL or options, used by both steps.
 * @param out         receives the image.
 * @return as symdb_file_uuid() and symdb_image_open_uuid().
 * @note By identity alone: a binary without a build-id has a fallback UUID
 *       of its loaded bytes (SPEC §5.2), which another file may share, and
 *       the index returned may have been built from that file.  The
 *       symbolizer context (symdb_symbolizer_image() and path requests)
 *       checks that the index was built from this file's bytes.
 * @note Thread rules of symdb_image_open_uuid().
 */
SYMDB_API int symdb_image_open_binary(symdb *db, const char *binary_path,
                                      const symdb_open_opts *opts, symdb_image **out);

/**
 * @brief symdb_file_symbol_table() tells which symbol table
 *        llvm-symbolizer-14 reads from an ELF file (SPEC §7.2.2).
 * @param path the file a request names.
 * @return SYMDB_OPEN_NAMES_SYMTAB (a `.symtab` with an entry besides the null
 *         symbol), SYMDB_OPEN_NAMES_DYNSYM (only a `.dynsym`), or 0 (neither,
 *         not ELF, or unreadable): a flag for symdb_image_open_uuid().
 * @note Reads the ELF header and section headers only.  Thread-safe.
 */
SYMDB_API unsigned symdb_file_symbol_table(const char *path);

/**
 * @brief symdb_image_open_file() maps an index file directly, without a
 *        catalog (for tools, tests and `symdb info FILE.symdb`).  A path
 *        ending in `.lz4` is a cold file (SPEC §12.8): it is decompressed
 *        into memory (at most 16 GiB) and never written anywhere.
 * @param index_path the index file.
 * @param opts       NULL or options (errbuf, SYMDB_OPEN_VERIFY_CHECKSUMS,
 *                   on_decompress).
 * @param out        receives the image, not shared with any other open.
 * @return 0; -errno if the file cannot be read;
 *         SYMDB_E_FORMAT/_VERSION/_CORRUPT/_CHECKSUM if it is damaged
 *         (errbuf names the field); SYMDB_E_INVAL for bad arguments.
 * @note Thread-safe.  The image belongs to no database: close it with
 *       symdb_image_close().
 */
SYMDB_API int symdb_image_open_file(const char *index_path, const symdb_open_opts *opts,
                                    symdb_image **out);

/**
 * @brief symdb_image_close() drops a reference; the last one unmaps.
 * @param img NULL (nothing happens) or an image from symdb_image_open_*().
 * @note Every pointer into the image (names, files, symdb_image_data())
 *       stays valid until the last reference is dropped.  Must not race with
 *       other calls on the same handle; other handles of the same image
 *       are unaffected.
 */
SYMDB_API void symdb_image_close(symdb_image *img);

/**
 * @brief symdb_image_trim() takes the pages of img's index file out of this
 *        process's memory (its resident set), leaving them in the page cache.
 *
 * Every page a lookup reads stays mapped into the process until the image
 * is closed, and counts in its resident set size: a long run of lookups
 * spread over a large index ends up with all of it resident.  After a trim
 * the next read of a page maps it again from the page cache (a minor fault,
 * no I/O unless the system reclaimed it meanwhile), so a caller that must
 * keep its RSS bounded trims when it grows past its budget (`symdb query`
 * does, README "Memory").
 * @param img an open image.
 * @return 0; SYMDB_E_INVAL for NULL; -errno when the kernel refused.
 * @note Changes no answer and invalidates no pointer: names and frames
 *       pointing into the mapping stay valid (their pages are read back on
 *       use).  Thread-safe: may run while other threads resolve on img
 *       (their reads fault the pages back in).  An image held in memory
 *       (a compacted image opened without thawing) is left as it is: its
 *       memory is the only copy.  SPEC §9 "At open".
 */
SYMDB_API int symdb_image_trim(const symdb_image *img);

/**
 * @brief symdb_image_data() gives the bytes of the index file behind img.
 * @param img  an open image.
 * @param data receives a pointer to the first byte.
 * @param size receives the file's size in bytes.
 * @return 0, or SYMDB_E_INVAL for a NULL argument.
 * @note *data points into the image's read-only mapping (or its private
 *       decompressed copy) and is valid until the last symdb_image_close().
 */
SYMDB_API int symdb_image_data(const symdb_image *img, const void **data, size_t *size);

/** Facts about an image, from its header (SPEC §5). Strings point into the mapping.
 *  Caller-allocated and sized: set sz (SYMDB_OPTS(symdb_image_info, info))
 *  before the call; fields may be appended in later versions. */
typedef struct symdb_image_info {
	size_t sz;                /**< in: sizeof(symdb_image_info) as the caller knows it;
	                               out: the bytes the library filled */
	symdb_uuid uuid;
	unsigned format_major, format_minor;
	unsigned object_format;   /**< 1 ELF, 2 Mach-O */
	unsigned object_class;    /**< 32 or 64 */
	unsigned object_endian;   /**< 1 little, 2 big */
	unsigned object_type;     /**< ELF e_type / Mach-O filetype */
	uint32_t machine, machine_sub;
	uint32_t flags;           /**< SPEC §5.1 header flags */
	unsigned address_size;    /**< 4 or 8 */
	uint64_t base_address;
	uint64_t file_size;
	const char *image_name;   /**< basename of the indexed file */
	uint64_t nsymbols, nfunctions, ninline_nodes, nline_rows, nfiles, nsegments;
	uint64_t build_info[16];  /**< BUILD_INFO counters (SPEC §7.7), 0 if absent */
	unsigned nbuild_info;
	/** SPEC §7.2.2: 1 when this handle answers with the ALT_SYMBOL_* tables
	 *  (the pair's other file), 0 with the image's own. */
	unsigned alt_symbols;
	/** 1 when the handle was opened for a file whose kind of symbol table
	 *  (SYMDB_OPEN_NAMES_*) the index lacks: answers use the table it has,
	 *  and indexing that file (`symdb build FILE`) completes the index. */
	unsigned symbols_missing;
	/** 1 when the index answers nothing: no symbol, no function, no line
	 *  (SPEC §7.2: a file with no symbol table and no DWARF).  Its debug
	 *  information may exist elsewhere: a build, an import or a fetch of
	 *  the same image replaces it. */
	unsigned answers_nothing;
	/** Bytes of the table of each Kind (SPEC §6.1: 1 STRINGS ... 17
	 *  FILE_SOURCES), 0 when absent; what each part of the index costs. */
	uint64_t table_bytes[32];
} symdb_image_info;

/**
 * @brief symdb_image_get_info() describes an open image.
 * @param img an open image.
 * @param out caller-allocated; out->sz must be set (SYMDB_OPTS()).  The
 *            library writes min(out->sz, its sizeof(symdb_image_info))
 *            bytes and sets out->sz to that count, so a caller built against
 *            an older, smaller struct is never overrun and a newer, larger
 *            one learns which fields were filled.
 * @return 0; SYMDB_E_INVAL for a NULL argument or out->sz < sizeof(size_t).
 * @note image_name points into the image's mapping, valid until the last
 *       symdb_image_close() of img.  Thread-safe.
 */
SYMDB_API int symdb_image_get_info(const symdb_image *img, symdb_image_info *out);

/**
 * @brief symdb_image_file_source() finds the source text a DWARF 5 line
 *        table embeds for a file (clang -gembed-source; SPEC §7.3.1).
 * @param img   an open image.
 * @param file  a frame's file: symdb_frame.file of a frame resolved from img
 *              (a pointer into img's mapping; any other pointer finds nothing).
 * @param text  out: the text, NUL-terminated, pointing into img's mapping.
 * @param len   out (may be NULL): its length in bytes.
 * @return 1 when the file has embedded source (possibly empty: a line table
 *         that embeds sources gives "" for a file it has none for, and
 *         llvm-symbolizer then prints no context); 0 when it has none (read
 *         the file from disk); SYMDB_E_INVAL for a NULL argument.
 * @note llvm-symbolizer-14 uses embedded source for the line-table frame of
 *       an address (the innermost, or the only one with --no-inlines), not
 *       for the call sites of inlined frames.  *text is valid until the last
 *       symdb_image_close() of img.  Thread-safe; never allocates.
 */
SYMDB_API int symdb_image_file_source(const symdb_image *img, const char *file, const char **text,
                                      size_t *len);

/**
 * @brief symdb_image_verify() recomputes every table checksum and checks every
 *        table's sort order and references (what open skips for speed).
 * @param img  an open image.
 * @param opts NULL or options: errbuf; no flags apply (non-zero: SYMDB_E_INVAL).
 * @return 0, or SYMDB_E_CHECKSUM / SYMDB_E_CORRUPT with errbuf naming the table;
 *         SYMDB_E_INVAL for a NULL img or bad opts.
 * @note O(file size); reads only the mapping.  Thread-safe: may run on one
 *       image alongside symdb_resolve_batch() in other threads.
 */
SYMDB_API int symdb_image_verify(const symdb_image *img, const symdb_open_opts *opts);

/** How the caller's addresses are expressed (SPEC §10). */
enum symdb_addr_kind {
	SYMDB_ADDR_VADDR = 0,   /**< virtual address, as `llvm-symbolizer --obj` takes */
	SYMDB_ADDR_OFFSET = 1,  /**< offset from the image base (lowest PT_LOAD / __TEXT) */
	SYMDB_ADDR_FILEOFF = 2, /**< ELF file offset, mapped through the segments */
	SYMDB_ADDR_RUNTIME = 3  /**< runtime address; load_address = where the base was mapped */
};

/** Marks an address that could not be translated; it resolves to nothing. */
#define SYMDB_ADDR_INVALID UINT64_MAX

/**
 * @brief symdb_image_translate() converts addresses of one kind to virtual
 *        addresses (SYMDB_ADDR_VADDR), element-wise; in and out may alias.
 * @param img          an open image (its base address and segments).
 * @param kind         how `in` is expressed.
 * @param load_address only for SYMDB_ADDR_RUNTIME.
 * @param in           n addresses of that kind.
 * @param out          caller-owned, receives n virtual addresses.
 * @param n            number of addresses.
 * @return 0, or SYMDB_E_INVAL for an unknown kind.  Addresses that map nowhere
 *         (a file offset outside every segment, a runtime address below the
 *         load address) become SYMDB_ADDR_INVALID.
 * @note Order may change for FILEOFF: sort after translating.  No
 *       allocation; thread-safe on a shared image.
 */
SYMDB_API int symdb_image_translate(const symdb_image *img, enum symdb_addr_kind kind,
                                    uint64_t load_address, const uint64_t *in,
                                    uint64_t *out, size_t n);

/** Frame flags. */
#define SYMDB_FRAME_INLINED     0x01u /**< an inlined call (not the outermost frame) */
#define SYMDB_FRAME_FROM_SYMTAB 0x02u /**< name (and start) came from the symbol table */
#define SYMDB_FRAME_HAS_START   0x04u /**< start_addr is valid */
#define SYMDB_FRAME_HAS_LINE    0x08u /**< file/line/column/discriminator are valid */
/** dwarf_start_addr is valid: the frame's DIE has DW_AT_low_pc. */
#define SYMDB_FRAME_HAS_DWARF_START 0x10u
/** file and file_rel are the covering ELF local symbol's STT_FILE name (the
 *  outermost frame had no line info; SPEC §7.2.1, §11.6): llvm-symbolizer
 *  prints it verbatim, even with --basenames, and only with
 *  --functions=linkage (it comes with the symbol-table override). */
#define SYMDB_FRAME_FILE_FROM_SYMTAB 0x20u

/**
 * One frame of a resolved address.  All strings point into the image mapping.
 * The policy is llvm-symbolizer's (SPEC §11): frames from DWARF innermost
 * first; the innermost frame's file/line from the line table; each outer
 * frame's file/line from the call site of the frame inside it; and the
 * outermost frame's name and start taken from the symbol table when a symbol
 * covers the address (and its file, when it had none, from the symbol's
 * STT_FILE: SYMDB_FRAME_FILE_FROM_SYMTAB).
 */
typedef struct symdb_frame {
	const char *name;        /**< linkage name, else DW_AT_name, else symbol; NULL = unknown
	                              (an empty DWARF name also reads as unknown) */
	const char *short_name;  /**< DW_AT_name (llvm --functions=short); NULL = unknown.
	                              Never replaced by the symbol table: llvm-symbolizer
	                              overrides only linkage names (SPEC §11.6) */
	const char *file;        /**< full path; NULL = unknown.  On the outermost frame
	                              it may be an STT_FILE name (FILE_FROM_SYMTAB) */
	const char *file_rel;    /**< path relative to the compilation dir; NULL = unknown */
	const char *decl_file;   /**< full path of the function's DW_AT_decl_file; NULL */
	const char *decl_file_rel; /**< relative form of decl_file; NULL */
	uint64_t start_addr;     /**< vaddr of the function/symbol start (HAS_START) */
	uint32_t line, column, discriminator; /**< 0 = unknown */
	uint32_t decl_line;      /**< 0 = unknown */
	uint32_t flags;          /**< SYMDB_FRAME_* */
	uint32_t reserved_;
	/** DW_AT_low_pc of the frame's DIE as a vaddr (SYMDB_FRAME_HAS_DWARF_START).
	 *  Unlike start_addr it is never replaced by the symbol table: it is what
	 *  llvm-symbolizer prints as StartAddress with --functions=short/none
	 *  (empty when the flag is clear, e.g. a DIE with DW_AT_ranges or no DIE). */
	uint64_t dwarf_start_addr;
} symdb_frame;

/** Per-address result: frames[first .. first+count), innermost first.
 *  Equal results may share frames (the same first and count): ranges of
 *  different results are not necessarily disjoint, so the frames a batch
 *  used end at the largest first+count, not at the sum of counts. */
typedef struct symdb_result {
	uint32_t first, count;   /**< count == 0 when nothing is known */
	int status;              /**< 0, or SYMDB_E_NOT_FOUND (also for SYMDB_ADDR_INVALID),
	                              or SYMDB_E_CORRUPT (a damaged record, or a mapping
	                              that faulted: symdb_fault_recover(); count is 0) */
	uint32_t reserved_;
	const char *sym_name;    /**< symbol-table name covering the address, or NULL */
	uint64_t sym_addr;       /**< its start (vaddr) */
	uint64_t sym_size;       /**< its size; 0 = extends to the next symbol */
} symdb_result;

/**
 * @brief symdb_resolve_batch() resolves sorted virtual addresses.
 * @param img     an open image.
 * @param addrs   virtual addresses in ascending order (duplicates allowed).
 * @param naddrs  number of addresses.
 * @param frames  caller-owned array that receives frames.
 * @param frames_cap its capacity, in elements.
 * @param frame_sz sizeof(symdb_frame) as the caller knows it: the array's
 *                stride.  The library writes min(frame_sz, its own size)
 *                bytes of each frame, so a caller built against an older,
 *                smaller struct is never overrun and a newer, larger one keeps
 *                its unknown tail as it was.
 * @param results caller-owned array of naddrs results.
 * @param result_sz sizeof(symdb_result) as the caller knows it (the same
 *                rule as frame_sz).
 * @return the number of addresses fully resolved: naddrs, or fewer when
 *         frames_cap ran out (call again with addrs + ret and results + ret);
 *         SYMDB_E_UNSORTED if addrs is not ascending (frames and results
 *         are then unspecified); SYMDB_E_INVAL for a NULL argument, a zero
 *         frame_sz or result_sz, or a frames_cap too small for even one
 *         address.
 * @note An address equal to its predecessor in the same call gets a copy of
 *       the predecessor's result: same first and count, i.e. the same frames,
 *       not a copy of them.  So may a different address whose result would be
 *       identical (another instruction of the same line row, symbol and
 *       inline chain as the address resolved before it).  Never write through
 *       one result's frames when another result may share them.
 * @note No allocation, no locking, no copying: every string is a pointer into
 *       the mapping, valid until the last symdb_image_close() of img.  Index
 *       files are immutable and replaced only by rename, so a re-index never
 *       changes a live mapping.  Any number of threads may resolve on one image
 *       at once.  Never reads outside the mapping, even for a hostile file; a
 *       damaged record yields status SYMDB_E_CORRUPT for that address.
 * @note When img's mapping faulted (symdb_fault_recover()) before or during
 *       the call, every result of the call has status SYMDB_E_CORRUPT and
 *       count 0.  A fault while the caller reads the strings afterwards is
 *       seen by symdb_image_fault_check().
 */
SYMDB_API ptrdiff_t symdb_resolve_batch(const symdb_image *img, const uint64_t *addrs,
                                        size_t naddrs, symdb_frame *frames, size_t frames_cap,
                                        size_t frame_sz, symdb_result *results,
                                        size_t result_sz);

/* ---- faults: an index file truncated under a reader --------------------- */

/**
 * @brief symdb_fault_recover() turns a SIGBUS on one of db's index mappings
 *        into a damaged image, from the caller's signal handler.
 *
 * symdb never truncates or rewrites a published file (it replaces files by
 * rename), but an operator can truncate one that a process has mapped; a
 * read past its new end then raises SIGBUS.  The library installs no signal
 * handler and keeps no global state, so a program that must survive this
 * (a server, `symdb query` on a stream) installs one, with SA_SIGINFO, that
 * passes the faulting address to this function for each of its handles:
 * @code
 * #include <signal.h>
 * #include <stdatomic.h>
 *
 * static _Atomic(symdb *) fault_db; // set after symdb_open(), NULL before symdb_close()
 *
 * static void on_sigbus(int sig, siginfo_t *si, void *uc)
 * {
 *         (void)uc;
 *         if (symdb_fault_recover(atomic_load(&fault_db), si->si_addr) > 0)
 *                 return; // the read is retried and sees zeros; the image is damaged
 *         signal(sig, SIG_DFL); // not a symdb mapping: die as without the handler
 *         raise(sig);           // (delivered when the handler returns)
 * }
 *
 * // once, after symdb_open():
 * struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
 * sigemptyset(&sa.sa_mask);
 * atomic_store(&fault_db, db);
 * sigaction(SIGBUS, &sa, NULL);
 * @endcode
 * A program that already has a SIGBUS handler calls this first and goes on
 * to its own handling when it returns 0.  SA_ONSTACK is not needed (the
 * fault is a read, not a stack overflow) and does no harm.  Under
 * AddressSanitizer this works as is: sigaction() replaces ASan's own SIGBUS
 * handler, unless ASAN_OPTIONS has allow_user_segv_handler=0 or
 * handle_sigbus=2, which keep ASan's (and the fault fatal).
 *
 * When addr lies in an index mapping of an image opened on db, the pages
 * from addr's page to the end of that mapping are replaced by zero pages
 * (mmap MAP_FIXED|MAP_ANONYMOUS: past a truncation every one of them would
 * fault), the image is marked damaged, and 1 is returned: the handler
 * returns and the faulting load reads zeros, which no symdb function can be
 * led astray by (they bound every index they read).  From then on
 * symdb_resolve_batch() gives SYMDB_E_CORRUPT for every address of that
 * image, symdb_symbolize() SYMDB_SYM_DAMAGED, and symdb_image_fault_check()
 * SYMDB_E_CORRUPT; the next symdb_image_open_*() of the image maps the file
 * afresh (and so reports the truncation), while handles already open keep
 * the damaged mapping until their last close.  Other images are unaffected.
 *
 * @param db   NULL (0 is returned) or an open database.
 * @param addr the faulting address (siginfo_t.si_addr).
 * @return 1 when the fault was on one of db's mappings and was recovered;
 *         0 when addr is in none of them (or NULL), or when the zero pages
 *         could not be mapped (the caller then dies as without a handler).
 * @note Async-signal-safe: no lock, no allocation, one mmap(2); errno is
 *       preserved.  It may run on any thread, concurrently with any call on
 *       db except symdb_close(): clear the pointer the handler reads before
 *       symdb_close(db).  Images opened with symdb_image_open_file(), and
 *       images still open after symdb_close() of their db, are not covered.
 * @note A fault is recovered only on a mapping that the faulting thread is
 *       reading, which by the rule of symdb_image_close() cannot be unmapped
 *       meanwhile; a mapping being opened or closed is never touched.
 */
SYMDB_API int symdb_fault_recover(symdb *db, const void *addr);

/**
 * @brief symdb_image_fault_check() tells whether img's mapping faulted
 *        (symdb_fault_recover()), so that what was read from it may be zeros.
 * @param img an open image.
 * @return 0; SYMDB_E_CORRUPT once a fault on its mapping was recovered (for
 *         good: open the image again for a fresh mapping); SYMDB_E_INVAL
 *         for a NULL img.
 * @note For a caller that reads the strings of results itself (names,
 *       files): read them, then check; when it says SYMDB_E_CORRUPT, what was
 *       read since the previous check may be empty strings.  symdb_resolve_batch()
 *       and symdb_symbolize() check by themselves.  Thread-safe, lock-free.
 */
SYMDB_API int symdb_image_fault_check(const symdb_image *img);

/* ---- symbolize: unsorted batches over many images ---------------------- */

/**
 * A reusable symbolization context: the query pipeline of `symdb query` as a
 * library call.  It owns every buffer a batch needs (sort keys, frames,
 * demangled names) and the images its requests named, and keeps them between
 * calls, so a steady state of similar batches allocates nothing.
 * @note One context per thread: a context is not thread-safe.  Any number of
 *       contexts may share one db; images opened by several contexts on one
 *       db share one mapping (symdb_image_open_uuid()).
 */
typedef struct symdb_symbolizer symdb_symbolizer;

/**
 * Called once per context when an image must be indexed on first sight and
 * the database cannot take it (read-only, missing and uncreatable, full,
 * damaged catalog): `line` is one line without a newline, "symdb: warning:
 * DIR: REASON; indexing into a private temporary directory for this
 * process".  It runs on the thread that called symdb_symbolize() or
 * symdb_symbolizer_image(), with no library lock held; the line is valid
 * during the call only, and the callback must not call into the context.
 */
typedef void (*symdb_warning_fn)(const char *line, void *arg);

/** Options for symdb_symbolizer_create(): the leading fields are those of
 *  symdb_open_opts and mean the same. */
struct symdb_fetch_opts; /* symdb_fetch.h */

typedef struct symdb_symbolizer_opts {
	size_t sz;          /**< sizeof(symdb_symbolizer_opts): set by SYMDB_OPTS() */
	unsigned flags;     /**< SYMDB_OPEN_VERIFY_CHECKSUMS, SYMDB_OPEN_NO_THAW: how
	                         the context opens images; SYMDB_SYMBOLIZER_BUILD;
	                         other bits: SYMDB_E_INVAL */
	char *errbuf;       /**< optional: receives a one-line reason on failure,
	                        escaped (symdb.h "Conventions") */
	size_t errbuf_sz;   /**< size of errbuf */
	/** SYMDB_SYMBOLIZER_BUILD: the symdb-indexer executable to run, or NULL
	 *  for the installed one (symdb_build_opts.indexer_path).  Copied. */
	const char *indexer_path;
	/** SYMDB_SYMBOLIZER_BUILD: where a private index is made when the
	 *  database cannot be written; NULL = "/tmp".  Copied. */
	const char *tmp_dir;
	/** SYMDB_SYMBOLIZER_BUILD: told the one warning line; NULL = the line
	 *  and a newline are written to stderr (file descriptor 2). */
	symdb_warning_fn on_warning;
	void *on_warning_arg; /**< passed to on_warning */
	/** SYMDB_SYMBOLIZER_FETCH: where unknown images are fetched from and
	 *  with what limits (symdb_fetch.h); the struct and its strings are
	 *  copied.  NULL with the flag: SYMDB_E_INVAL. */
	const struct symdb_fetch_opts *fetch;
} symdb_symbolizer_opts;

/**
 * Index on first sight: an image named by path (SYMDB_IMAGE_PATH,
 * symdb_symbolizer_image()) that the database does not hold, or holds only
 * as a damaged file, is indexed when the context first meets it, by the
 * same sandboxed symdb-indexer and publishing as symdb_builder_add() (a
 * damaged file is replaced, as with SYMDB_BUILD_FORCE; separate debug files
 * are found as `symdb build` finds them), and then answered from the
 * published index; later runs find it there.  When the database cannot be
 * written (symdb_builder_open() or publishing fails for the database's sake:
 * read-only, full, damaged catalog) or the context has no database (db
 * NULL), the image is indexed into a private directory under tmp_dir,
 * mapped, and the directory removed at once: nothing of it outlives the
 * process.  The first such fallback is told through on_warning, once per
 * context.  An image indexed from the other file of a stripped-binary /
 * debug-file pair, without the named file's kind of symbol table
 * (symdb_image_info.symbols_missing), is completed the same way, once.  A
 * path's image is opened with the SYMDB_OPEN_NAMES_* flag of that file
 * (symdb_file_symbol_table()), so X and X.debug get their own handles.
 * An input the indexer rejects is SYMDB_E_BAD_OBJECT, and is not
 * indexed again by this context.  Images named by UUID or hex are never
 * built (there is no file to read).
 */
#define SYMDB_SYMBOLIZER_BUILD 0x100u

/**
 * Fetch on first sight: an image named by UUID or hex (SYMDB_IMAGE_UUID,
 * SYMDB_IMAGE_HEX) that the database does not hold is fetched with
 * symdb_fetch() (symdb_fetch.h: upstream index stores, then debuginfod),
 * published, and answered from the published index.  Each UUID is fetched
 * at most once per context: a failure (not found, the deadline, a damaged
 * download) leaves its requests SYMDB_SYM_NOT_INDEXED with error set to
 * the fetch's code (SYMDB_E_NOT_FOUND, -ETIMEDOUT, SYMDB_E_CHECKSUM ...).
 * The fetches of one symdb_symbolize() call share one deadline,
 * opts.fetch->timeout_ms, so a dead server costs a call at most that.
 * Needs a database that can be written (db opened by the caller; the
 * context opens its own builder on it).
 */
#define SYMDB_SYMBOLIZER_FETCH 0x200u

/**
 * @brief symdb_symbolizer_create() makes a context for symdb_symbolize().
 * @param db   an open database; it must outlive the context.  NULL only
 *             with SYMDB_SYMBOLIZER_BUILD: every image is then indexed
 *             privately (no database could be opened).
 * @param opts NULL or options (errbuf, image open flags, first sight).
 * @param out  receives the context (free it with symdb_symbolizer_free()).
 * @return 0; SYMDB_E_INVAL for a NULL argument or bad opts; -ENOMEM.
 * @note Thread-safe (each call makes its own context).  Opens nothing yet;
 *       the strings of opts are copied, the callback and its argument kept
 *       (they must stay valid for the context's life).
 */
SYMDB_API int symdb_symbolizer_create(symdb *db, const symdb_symbolizer_opts *opts,
                                      symdb_symbolizer **out);

/**
 * @brief symdb_symbolizer_free() closes the images the context opened and
 *        frees its buffers.  NULL-safe.
 * @param s NULL (nothing happens) or a context from
 *          symdb_symbolizer_create(); it is freed.
 * @note Every pointer a symdb_symbolize() call returned becomes invalid
 *       (frames, demangled names; names in an image's mapping stay valid
 *       while another handle keeps that image open).  Images passed with
 *       SYMDB_IMAGE_HANDLE stay the caller's and are not closed.
 * @note Call it on the thread that uses s, with no other call on s running;
 *       the db is not closed and may still be used by other contexts.
 */
SYMDB_API void symdb_symbolizer_free(symdb_symbolizer *s);

/** How a request names its image. */
enum symdb_image_ref {
	SYMDB_IMAGE_UUID = 0,   /**< image.uuid: the UUID bytes (kind ignored) */
	SYMDB_IMAGE_HEX = 1,    /**< image.hex: a build-id / UUID in hex (symdb_uuid_parse) */
	SYMDB_IMAGE_PATH = 2,   /**< image.path: a binary, identified by its build-id,
	                             LC_UUID or fallback id (symdb_file_uuids(): a file
	                             holding several images gives SYMDB_SYM_NO_IMAGE) */
	SYMDB_IMAGE_HANDLE = 3  /**< image.handle: an image the caller opened and keeps
	                             open during the call; NULL gives SYMDB_SYM_NO_IMAGE */
};

/** Request flags. */
#define SYMDB_REQ_DEMANGLE 0x1u /**< demangle this request's names (C++, Rust, D, MS) */

/** One address to symbolize.  Zero-initialise it: reserved fields must be 0. */
typedef struct symdb_request {
	uint8_t image_ref;  /**< enum symdb_image_ref */
	uint8_t addr_kind;  /**< enum symdb_addr_kind of addr */
	uint16_t flags;     /**< SYMDB_REQ_* */
	uint32_t reserved_;
	union {
		const symdb_uuid *uuid;
		const char *hex;
		const char *path;
		const symdb_image *handle;
	} image;            /**< the image, as image_ref says */
	uint64_t addr;      /**< the address, of kind addr_kind */
	uint64_t load_address; /**< SYMDB_ADDR_RUNTIME only: where the image base was mapped */
} symdb_request;

/** What became of a request. */
enum symdb_sym_status {
	SYMDB_SYM_OK = 0,           /**< resolved: frames and/or sym_name are known */
	SYMDB_SYM_NOT_INDEXED = 1,  /**< the image is not in the database */
	SYMDB_SYM_NO_SYMBOL = 2,    /**< the image is indexed; nothing covers the address */
	SYMDB_SYM_OUT_OF_RANGE = 3, /**< the address maps to no virtual address of the
	                                 image (a file offset outside every segment, a
	                                 runtime address below load_address, ...) */
	SYMDB_SYM_DAMAGED = 4,      /**< the index file, or the record the address
	                                 led to, is damaged (error says which), or its
	                                 mapping faulted (symdb_fault_recover(): a
	                                 later call of the context opens the image
	                                 afresh) */
	SYMDB_SYM_NO_IMAGE = 5      /**< the image reference is unusable: unreadable
	                                 path, bad hex, NULL handle */
};

/** The answer to one request.  Strings point into the image's mapping or
 *  into the context; frames into the context. */
typedef struct symdb_symbolized {
	int status;                /**< enum symdb_sym_status */
	int error;                 /**< 0, or the SYMDB_E_* / -errno behind status */
	uint32_t nframes;          /**< frames known, innermost first; 0 when none */
	uint32_t reserved_;
	const symdb_frame *frames; /**< nframes frames of frame_sz bytes each (the
	                                inline chain, as symdb_resolve_batch() gives
	                                it); equal requests may share them */
	const char *sym_name;      /**< the symbol-table name covering the address, or NULL */
	uint64_t sym_addr;         /**< its start (vaddr) */
	uint64_t sym_size;         /**< its size; 0 = extends to the next symbol */
	uint64_t vaddr;            /**< the address as a vaddr, or SYMDB_ADDR_INVALID */
	const symdb_image *image;  /**< the image resolved against, or NULL; owned by the
	                                context (or the caller for SYMDB_IMAGE_HANDLE) */
} symdb_symbolized;

/** Options for one symdb_symbolize() call. */
typedef struct symdb_symbolize_opts {
	size_t sz;          /**< sizeof(symdb_symbolize_opts): set by SYMDB_OPTS() */
	unsigned flags;     /**< SYMDB_SYMBOLIZE_*; unknown bits give SYMDB_E_INVAL */
	char *errbuf;       /**< optional: receives a one-line reason on failure,
	                        escaped (symdb.h "Conventions") */
	size_t errbuf_sz;   /**< size of errbuf */
	size_t req_sz;      /**< sizeof(symdb_request) the caller uses; 0 = this header's */
	size_t result_sz;   /**< sizeof(symdb_symbolized) the caller uses; 0 = this header's.
	                         A larger one's tail (fields of a newer header) is
	                         set to zero in every result, unlike the outputs
	                         of the rule above, which keep it */
	size_t frame_sz;    /**< sizeof(symdb_frame) the caller uses; 0 = this header's */
	/** Optional, with SYMDB_SYMBOLIZE_ORDER: called on the calling thread as
	 *  results become final, in order, so that a caller can consume them
	 *  while their frames are still in the cache: results[i] (of result_sz
	 *  bytes) answers request order[i], for i < count, and is the
	 *  (first + i)-th in resolution order.  With a results array, results
	 *  points into it; without one (results NULL, allowed with on_results)
	 *  into a buffer of the context reused for the next chunk.  The
	 *  callback must not call into the context. */
	void (*on_results)(void *arg, const symdb_symbolized *results, const uint32_t *order,
	                   size_t first, size_t count);
	void *on_results_arg; /**< its first argument */
} symdb_symbolize_opts;

/** Demangle the names of every request, as if each had SYMDB_REQ_DEMANGLE. */
#define SYMDB_SYMBOLIZE_DEMANGLE 0x1u
/** Write results in the order the requests were resolved in, not in input
 *  order: results[k] answers request symdb_symbolizer_order()[k]. */
#define SYMDB_SYMBOLIZE_ORDER 0x2u
/** With SYMDB_SYMBOLIZE_ORDER and on_results: a chunk's frames are valid
 *  only during its on_results call (the result's frames are NULL after it),
 *  so one chunk's worth of frame memory is reused for the whole batch: for
 *  callers that format or send each chunk as it comes.  Other pointers of a
 *  result (names) stay valid until the next call. */
#define SYMDB_SYMBOLIZE_STREAM 0x4u

/**
 * @brief symdb_symbolize() resolves a batch of requests in any order, over
 *        any number of images, into one result per request, in input order.
 *
 * Each request's image is looked up (and opened once per context), its
 * address translated to a virtual address (symdb_image_translate()), the
 * batch grouped by image and sorted, resolved with symdb_resolve_batch()
 * in as many passes as the frames need, and the results put back in input
 * order; with SYMDB_REQ_DEMANGLE (or SYMDB_SYMBOLIZE_DEMANGLE) the names of
 * the frames (name, short_name) and sym_name are demangled as
 * llvm-symbolizer-14 demangles them (symdb_demangle()).
 *
 * @param s       a context of this thread.
 * @param reqs    n requests of opts->req_sz bytes each.
 * @param n       number of requests (at most UINT32_MAX).
 * @param results receives n results of opts->result_sz bytes each, in
 *                input order (SYMDB_SYMBOLIZE_ORDER: in resolution order);
 *                each has a status: a request that cannot be answered is
 *                not an error of the call.  May be NULL when opts has
 *                on_results: results are then only handed to it.
 * @param opts    NULL or options (errbuf, element sizes, per-call demangling).
 * @return 0; SYMDB_E_INVAL for a NULL argument, bad opts or element sizes,
 *         an unknown image_ref, addr_kind or flag, or non-zero reserved
 *         fields; -ENOMEM (results are then unspecified).
 * @note Frames, demangled names and every other string that does not point
 *       into a mapping live in buffers of the context: valid until the next
 *       symdb_symbolize() or symdb_symbolizer_free() on it.  Images the
 *       context opened stay open until symdb_symbolizer_free().
 * @note Paths are cached by (device, inode, size, mtime): a rebuilt binary at
 *       the same path is identified again.  An image found not indexed
 *       (or damaged), named by path, UUID or hex, is looked up again by the
 *       next call once the catalog has changed, so one indexed or repaired
 *       meanwhile is seen; an unchanged catalog is not asked again (the
 *       check reads LMDB's meta page: no allocation).
 * @note Memory grows with the largest batch and is reused: once warm, a
 *       batch no larger and over the same images allocates nothing.
 * @note A vaddr of SYMDB_ADDR_INVALID (UINT64_MAX) is out of range.
 */
SYMDB_API int symdb_symbolize(symdb_symbolizer *s, const symdb_request *reqs, size_t n,
                              symdb_symbolized *results, const symdb_symbolize_opts *opts);

/**
 * @brief symdb_symbolizer_order() gives the order in which the last
 *        symdb_symbolize() call with SYMDB_SYMBOLIZE_ORDER resolved its
 *        requests, which is the order of its results: first the requests
 *        whose image was found, grouped by image and by ascending vaddr
 *        within an image (ties in input order), then the others in input
 *        order.
 * @param s the context.
 * @param n receives the number of indices: the call's n.
 * @return request indices (a permutation of 0..n-1), owned by s and valid
 *         until its next call; NULL (*n = 0) when the last call did not ask
 *         for them.
 * @note For callers that format many results: in this order the results,
 *       their frames and the mapping's strings are read sequentially, and
 *       results that share frames are neighbours.  Without the flag the
 *       same work lands in input order.
 * @note Not thread-safe, like the context: call it on the thread that uses
 *       s.  Allocates nothing; the caller frees nothing.
 */
SYMDB_API const uint32_t *symdb_symbolizer_order(const symdb_symbolizer *s, size_t *n);

/**
 * @brief symdb_symbolizer_image() gives the image the context answers a
 *        binary's SYMDB_IMAGE_PATH requests from: found by the file's
 *        build-id (symdb_file_uuid()), opened, or indexed on first sight
 *        (SYMDB_SYMBOLIZER_BUILD).
 * @param s    a context of this thread.
 * @param path the binary (an ELF file or a thin Mach-O file).
 * @param opts NULL or options: errbuf only (flags must be 0).
 * @param out  receives the image, owned by the context: valid until
 *             symdb_symbolizer_free(s).  Do not close it.
 * @return 0; -errno when the file cannot be read (-ENOENT, -EACCES,
 *         -EISDIR...); SYMDB_E_BAD_OBJECT when it is not an object file
 *         (or not a regular file: a FIFO is never opened for reading) or
 *         the indexer rejected it; SYMDB_E_NOT_INDEXED without
 *         SYMDB_SYMBOLIZER_BUILD; a damage code (SYMDB_E_CORRUPT...) for a
 *         damaged index without it; the builder's codes when indexing
 *         failed (errbuf says why, on the call that tried).
 * @note A binary without a build-id (a fallback UUID of its loaded bytes,
 *       SPEC §5.2) is answered only from an index built from its own
 *       bytes: another file's index of that UUID is replaced by indexing
 *       this one (SYMDB_BUILD_FORCE), or, without SYMDB_SYMBOLIZER_BUILD,
 *       the file is SYMDB_E_NOT_INDEXED.  Its whole file is hashed once
 *       per file identity.
 * @note Not thread-safe, like the context.  The answer is remembered per
 *       file identity, like SYMDB_IMAGE_PATH requests' (symdb_symbolize()).
 */
SYMDB_API int symdb_symbolizer_image(symdb_symbolizer *s, const char *path,
                                     const symdb_symbolize_opts *opts, const symdb_image **out);

/**
 * @brief symdb_demangle() demangles one linkage name exactly as
 *        llvm-symbolizer-14 does (LLVM's Itanium, Rust v0 and legacy, D and
 *        Microsoft demanglers) when the library was built with LLVM's
 *        demangler, else with the C++ runtime's __cxa_demangle (Itanium only).
 * @param name a NUL-terminated name.
 * @param buf  in/out: a malloc'd buffer or NULL; realloc'd as needed (the
 *             caller frees it).
 * @param cap  in/out: the size of *buf.
 * @return 1 with the demangled name in *buf; 0 when name is not a mangled
 *         name the demangler accepts (print it as it is); -ENOMEM;
 *         SYMDB_E_INVAL for a NULL argument.
 * @note Thread-safe: no state besides the caller's buffer.  *buf (NULL or
 *       a malloc'd buffer) is the caller's after every return, whatever the
 *       result: reuse it for the next name and free() it after the last.
 * @note Bounded (LLVM build): a name longer than 1 MiB (a '?' name
 *       4 KiB), a C++ name nesting deeper than 2048 parser calls or whose
 *       parse tree passes 32 MiB, or any name whose demangled form could
 *       pass 4 MiB, gives 0: a hostile name costs little stack, memory and
 *       time.
 */
SYMDB_API int symdb_demangle(const char *name, char **buf, size_t *cap);

/**
 * @brief symdb_demangler_kind() names the demangler symdb_demangle() uses,
 *        fixed when the library was built.
 * @return "llvm" or "cxxabi": a static string, never NULL, not to be freed.
 * @note Thread-safe: no state.
 */
SYMDB_API const char *symdb_demangler_kind(void);

/** One catalog entry, for symdb_list() and symdb_lookup(). Strings are valid
 *  only during the callback (symdb_list) or as long as namebuf (symdb_lookup).
 *  Sized like symdb_image_info: a caller of symdb_lookup() sets sz; the
 *  entries symdb_list() passes have sz = the library's sizeof. */
typedef struct symdb_entry {
	size_t sz;               /**< in (symdb_lookup): the caller's sizeof; out: bytes filled */
	symdb_uuid uuid;
	const char *image_name;  /**< basename of the indexed file */
	const char *file;        /**< index file path relative to the database dir */
	uint64_t file_size;
	uint64_t built_at;       /**< unix seconds */
	uint32_t flags;          /**< header flags */
	uint32_t machine, machine_sub;
	unsigned object_format;
	const char *source_path; /**< absolute path of the file indexed, as it was
	                              when built (SPEC §12.2 `paths`); NULL when not
	                              recorded (imported, reindexed, older symdb) */
} symdb_entry;

/**
 * @brief symdb_list() calls fn for every catalog entry, in UUID byte order.
 * @param db  an open database.
 * @param fn  called once per entry; a non-zero return stops the listing.
 *            The entry and its strings are valid only during the call.
 * @param arg passed to fn.
 * @return 0, the first non-zero value fn returned (the caller's own value,
 *         passed through), or a negative error;
 *         SYMDB_E_CATALOG after every readable entry was listed when some
 *         entry's value could not be decoded (symdb_catalog_check() names it).
 * @note fn runs outside any catalog transaction and lock: it may open and
 *       close images, call symdb_mark_used() or list again, on db.  Entries
 *       are read in batches (each a consistent snapshot): one added or
 *       removed while the listing runs may or may not be seen, every other
 *       entry is seen exactly once.  Thread-safe.
 */
SYMDB_API int symdb_list(symdb *db, int (*fn)(const symdb_entry *e, void *arg), void *arg);

/** What symdb_catalog_check() reports (SPEC §12.6). */
typedef enum symdb_catalog_problem {
	SYMDB_CAT_BAD_VALUE = 1,    /**< an `images` value that cannot be decoded */
	SYMDB_CAT_DANGLING_NAME,    /**< a `names` key without its image */
	SYMDB_CAT_MISSING_NAME,     /**< an image without its `names` key */
	SYMDB_CAT_BAD_USED          /**< a `used` record that is malformed or stale */
} symdb_catalog_problem;

/** Repair what symdb_catalog_check() finds. */
#define SYMDB_CHECK_REPAIR 0x1u

/**
 * @brief symdb_catalog_check() checks the catalog's own records: every
 *        `images` value decodes, `names` and `images` agree both ways, every
 *        `used` record is a u64 of an indexed image.  Index files are not
 *        opened (symdb verify does that per entry).
 * @param fn  NULL or called once per problem with its kind, the LMDB key
 *            (a UUID; for names problems the `names` key: name, 0x00, UUID)
 *            and a reason.
 * @param flags SYMDB_CHECK_REPAIR: delete undecodable entries (their index
 *            files become orphans), dangling names and stale use records, add
 *            missing names, all in one write transaction.
 * @param db  an open database (opened with SYMDB_OPEN_WRITE to repair).
 * @param arg passed to fn.
 * @return the number of problems found (0: consistent), SYMDB_E_READONLY for
 *         a repair without SYMDB_OPEN_WRITE, or another negative error.
 * @note key and why are valid only during the call to fn, which runs inside
 *       the check's catalog transaction: it must not call into db (a map
 *       resize would wait for it).  Thread-safe; a repair is one write
 *       transaction.
 */
SYMDB_API int symdb_catalog_check(symdb *db, unsigned flags,
                                  void (*fn)(symdb_catalog_problem kind, const uint8_t *key,
                                             size_t key_len, const char *why, void *arg),
                                  void *arg);

/**
 * @brief symdb_lookup() fetches the catalog entry of one UUID.
 * @param db         an open database.
 * @param id         the image.
 * @param out        caller-allocated; out->sz must be set (SYMDB_OPTS()).
 * @param namebuf    caller-owned buffer that receives the entry's strings.
 * @param namebuf_sz its size (two strings of up to 65535 bytes fit in
 *                   2 * 65536 bytes; source_path is filled only when it
 *                   fits after them, else NULL).
 * @return 0, SYMDB_E_NOT_INDEXED, -ENAMETOOLONG when namebuf is too small,
 *         SYMDB_E_INVAL (bad arguments, out->sz too small), or another
 *         negative error.  The entry's strings point into namebuf.
 * @note Thread-safe.
 */
SYMDB_API int symdb_lookup(symdb *db, const symdb_uuid *id, symdb_entry *out,
                           char *namebuf, size_t namebuf_sz);

/** The fewest hex digits symdb_lookup_prefix() accepts: 32 bits, so that
 *  a prefix typed from a list stays unique in any realistic database. */
#define SYMDB_UUID_PREFIX_MIN 8

/**
 * @brief symdb_lookup_prefix() finds the indexed images whose UUID begins
 *        with the given hex digits, as git finds an object by a short hash.
 * @param db  an open database.
 * @param hex SYMDB_UUID_PREFIX_MIN (8) to 64 hex digits, any case, an odd
 *            count allowed; dashes are ignored as in symdb_uuid_parse().  A
 *            UUID indexed exactly as written is the only match, even when a
 *            longer indexed UUID begins with it.
 * @param out caller-owned array of max UUIDs (NULL when max is 0, to count):
 *            receives the first min(count, max, 16) matches in UUID byte
 *            order, each with its kind (0 when its catalog value cannot be
 *            decoded).
 * @param max its capacity, in elements.
 * @return the number of matches (0: none, 1: unique, more: ambiguous), or
 *         SYMDB_E_INVAL for a NULL db or hex, a NULL out with max > 0, a
 *         character that is not a hex digit or dash, fewer than 8 or more
 *         than 64 digits; another negative error from the catalog.
 * @note One read transaction, a range scan over the matches only.  Nothing
 *       is allocated for the caller.  Thread-safe.
 */
SYMDB_API int symdb_lookup_prefix(symdb *db, const char *hex, symdb_uuid *out, size_t max);

/* ---- database life cycle (SPEC §12.6) ---------------------------------- */

/**
 * @brief symdb_last_used() reads when an image was last queried.
 * @param db  an open database.
 * @param id  the image.
 * @param out receives the time.
 * @return 0 with *out in unix seconds; SYMDB_E_NOT_FOUND when no query was
 *         ever recorded for it; another negative error.
 * @note Thread-safe.
 */
SYMDB_API int symdb_last_used(symdb *db, const symdb_uuid *id, uint64_t *out);

/**
 * @brief symdb_mark_used() records `when` as an image's last-query time (one
 *        catalog write transaction; a later time already stored is kept).
 * @param db   a database opened with SYMDB_OPEN_WRITE.
 * @param id   the image.
 * @param when unix seconds: the caller's clock (the library has none; the
 *             CLI uses $SYMDB_NOW when set, for tests and replays).
 * @return 0; SYMDB_E_READONLY unless db was opened with SYMDB_OPEN_WRITE;
 *         SYMDB_E_NOT_INDEXED when the catalog has no such image.
 * @note Callers batch: `symdb query` reads the stored time while it runs and
 *       writes once at exit, only for images whose stored day differs.
 *       Thread-safe.
 */
SYMDB_API int symdb_mark_used(symdb *db, const symdb_uuid *id, uint64_t when);

/**
 * @brief symdb_remove() deletes an image: its catalog entry first (so no
 *        entry ever names a missing file), then its index file.
 * @param db   a database opened with SYMDB_OPEN_WRITE.
 * @param id   the image.
 * @param opts NULL or options: errbuf; no flags apply (non-zero: SYMDB_E_INVAL).
 * @return 0; SYMDB_E_NOT_INDEXED; SYMDB_E_READONLY without SYMDB_OPEN_WRITE;
 *         -errno when the file could not be removed (the entry is gone).
 * @note Readers that mapped the file keep a valid mapping.  Thread-safe
 *       (one catalog write transaction; the file is removed under the
 *       directory lock of SPEC §12.8).
 */
SYMDB_API int symdb_remove(symdb *db, const symdb_uuid *id, const symdb_open_opts *opts);

/* ---- cold storage (SPEC §12.8) ------------------------------------------ */

/** What symdb_image_compact() did.  Caller-allocated and sized like
 *  symdb_image_info: set sz (SYMDB_OPTS(symdb_compact_stats, st)). */
typedef struct symdb_compact_stats {
	size_t sz;             /**< in: sizeof as the caller knows it; out: bytes filled */
	uint64_t bytes_before; /**< the index file's size (File_Size) */
	uint64_t bytes_after;  /**< its cold form's size on disk */
	int was_cold;          /**< 1: the image was already cold, nothing was done */
} symdb_compact_stats;

/**
 * @brief symdb_image_compact() replaces an image's index file by its LZ4
 *        form `FILE.lz4` (one LZ4 frame: Content_Size, content and block
 *        checksums).  The file is first checked (every table checksum, size
 *        and Header_Checksum against the catalog); the frame is written to
 *        DB/tmp, fsynced, decoded again and compared with the file, renamed
 *        into place (directory fsynced), and only then is the `.symdb`
 *        unlinked.  The catalog is not changed.
 * @param db   an open database.
 * @param id   the image.
 * @param opts NULL or options: errbuf; no flags apply (non-zero: SYMDB_E_INVAL).
 * @param st   NULL, or receives the sizes before and after, and was_cold = 1
 *             when the image was already cold (nothing was done).
 * @return 0 when compacted or already cold; SYMDB_E_NOT_INDEXED;
 *         SYMDB_E_CHECKSUM / SYMDB_E_CORRUPT when the file is damaged (not
 *         compacted); SYMDB_E_INVAL (NULL argument, st->sz too small, bad
 *         opts); -errno for I/O errors.
 * @note Serialized with thawing and removal of the same image by a flock on
 *       its directory.  Readers that mapped the file keep a valid mapping.
 *       Needs write access to the database directory, not to the catalog.
 */
SYMDB_API int symdb_image_compact(symdb *db, const symdb_uuid *id, const symdb_open_opts *opts,
                                  symdb_compact_stats *st);

/**
 * @brief symdb_cold_remove_redundant() removes a cold form that is redundant:
 *        DB/cold_rel ("images/XX/HEX.symdb.lz4", as a walk of DB/images
 *        finds it) only if its index file (the same path without ".lz4")
 *        exists.  Both are checked and the file removed under the directory
 *        lock of SPEC §12.8, so a compaction that just replaced one form by
 *        the other is never cut down to neither.
 * @param db       an open database whose directory this process may write
 *                 (the catalog is not touched).
 * @param cold_rel the cold form's path relative to the database directory.
 * @param opts     NULL or options: errbuf; no flags apply.
 * @param removed  NULL, or receives 1 when the cold form was removed (or
 *                 was already gone), 0 when it was kept because the index
 *                 file is not there: then it is the image's only form.
 * @return 0 either way; SYMDB_E_INVAL for a path not ending in ".lz4";
 *         -ENAMETOOLONG; -errno when the lock or the unlink fails.
 * @note Thread-safe; serialized with compaction and thawing of the image.
 */
SYMDB_API int symdb_cold_remove_redundant(symdb *db, const char *cold_rel,
                                          const symdb_open_opts *opts, int *removed);

/** Names of the database directory layout (SPEC §12.1), for symdb_layout_name(). */
enum symdb_layout_part {
	SYMDB_LAYOUT_IMAGES = 1, /**< "images": DB/images/XX/ holds the index files */
	SYMDB_LAYOUT_TMP,        /**< "tmp": DB/tmp/ holds temp files */
	SYMDB_LAYOUT_INDEX_EXT,  /**< ".symdb": the suffix of an index file */
	SYMDB_LAYOUT_COLD_EXT,   /**< ".lz4": appended to an index file's name for
	                              its cold form (SPEC §12.8) */
	SYMDB_LAYOUT_MISSES,     /**< "misses": DB/misses/HEX, symdb_fetch()'s
	                              negative answers (SPEC §12.9) */
};

/**
 * @brief symdb_layout_name() spells one name of the database directory
 *        layout, so that a caller walking DB/ (verify, gc) needs no copy of it.
 * @param part  one of enum symdb_layout_part.
 * @return a static string, or NULL for an unknown part.
 * @note Thread-safe; allocates nothing.
 */
SYMDB_API const char *symdb_layout_name(int part);

/* ---- export bundles (SPEC §12.7) ------------------------------------------ */

/** Options of symdb_export(). */
typedef struct symdb_export_opts {
	size_t sz;          /**< sizeof(symdb_export_opts): set by SYMDB_OPTS() */
	unsigned flags;     /**< none defined yet: must be 0 */
	char *errbuf;       /**< optional: receives a one-line reason on failure,
	                        escaped (symdb.h "Conventions") */
	size_t errbuf_sz;   /**< size of errbuf */
	uint64_t *written;  /**< optional: set to the bytes written to fd, also on failure */
} symdb_export_opts;

/**
 * @brief symdb_export() writes the index files of the images ids[0..n) of db
 *        to fd as one export bundle (SPEC §12.7): an LZ4 frame with block and
 *        content checksums holding a record per image, in the order given.
 * @param db    an open database (read access is enough).
 * @param ids   the images' UUIDs; n of them (n may be 0: an empty bundle).
 * @param n     how many.
 * @param fd    where the bundle goes, written from its current position.
 * @param opts  NULL or options; errbuf receives "UUID: reason" when an image
 *              is missing or damaged.
 * @return 0; SYMDB_E_NOT_INDEXED, SYMDB_E_CORRUPT, SYMDB_E_CHECKSUM... for an
 *         image (nothing was written: every image is opened with all its
 *         checksums verified before the first byte); -errno when writing to
 *         fd fails (opts->written then says how much of a bundle is there);
 *         SYMDB_E_INVAL for a bad argument or unknown options.
 * @note A compacted image is exported from its cold form decompressed in
 *       memory: exporting never thaws.  The same images give the same bytes.
 * @note Opens images on db as symdb_image_open_uuid() does: any thread, with
 *       the same rules.  fd is neither closed nor synced.
 */
SYMDB_API int symdb_export(symdb *db, const symdb_uuid *ids, size_t n, int fd,
                           const symdb_export_opts *opts);

/* symdb_import(), the other half, publishes and is in symdb_build.h. */

/* ---- the running kernel: kallsyms, vmlinux, modules (issue 15) ---------- */

/**
 * A snapshot of the running kernel's symbols, for kernel addresses as a
 * profiler samples them (runtime addresses, KASLR applied):
 * - /proc/kallsyms, read once into one sorted table.  Kept are the symbols
 *   perf keeps (types T, W, D, B in either case; ARM mapping symbols "$x"
 *   are not), with sizes inferred as perf infers them: a symbol ends where
 *   the next one starts; the last symbol of the kernel image or of a module
 *   ("[mod]" in kallsyms), and the last of all, end at the page boundary
 *   past the next page (roundup(addr + 4096, 4096)).  Of several symbols at
 *   one address the one answered is perf's choice: not weak before weak,
 *   then global before local, then fewer leading underscores, then the
 *   longer name.
 * - the running kernel's build-id (an ELF note in /sys/kernel/notes) picks a
 *   vmlinux with DWARF from the debug locations; it is indexed on first sight
 *   like any image and answers with inline chains and file:line at
 *   address - KASLR offset, the offset being _stext in kallsyms minus _stext
 *   in the vmlinux's symbol table (_text when there is no _stext).
 * - modules: /proc/modules names them and /sys/module/NAME/sections/.text
 *   says where .text was loaded; a module file NAME.ko (dashes and
 *   underscores equal) under the debug locations' lib/modules/RELEASE or
 *   under lib/modules/RELEASE answers addresses in .text with DWARF, at
 *   address - .text (SPEC §7.8: the .ko's sections are indexed at address 0,
 *   and .text is its first executable section).  Other sections
 *   (.init.text, .exit.text, .text.unlikely) and modules without a file are
 *   answered from kallsyms.
 * Modules loaded after symdb_kernel_open() are not seen: open a new handle.
 */
typedef struct symdb_kernel symdb_kernel;

/** Options of symdb_kernel_open(): every source can be named, so that a
 *  saved kernel (or a test fixture) is read instead of the running one. */
typedef struct symdb_kernel_opts {
	size_t sz;             /**< sizeof(symdb_kernel_opts): set by SYMDB_OPTS() */
	unsigned flags;        /**< SYMDB_KERNEL_*; other bits: SYMDB_E_INVAL */
	char *errbuf;          /**< optional: receives a one-line reason on failure,
	                           escaped (symdb.h "Conventions") */
	size_t errbuf_sz;      /**< size of errbuf */
	const char *kallsyms;  /**< NULL = "/proc/kallsyms" */
	const char *notes;     /**< NULL = "/sys/kernel/notes" */
	const char *modules;   /**< NULL = "/proc/modules"; a missing file = no modules */
	const char *sysfs_module; /**< NULL = "/sys/module" */
	const char *release;   /**< NULL = uname(2)'s release ("6.1.0-18-amd64") */
	/** NULL = "/": where the default locations are looked for:
	 *  ROOT/usr/lib/debug (a debug directory, below), ROOT/boot/vmlinux-RELEASE
	 *  and ROOT/boot/vmlinux-*, ROOT/lib/modules/RELEASE/build/vmlinux,
	 *  ROOT/lib/modules/RELEASE/vmlinux, and ROOT/lib/modules/RELEASE for
	 *  .ko files. */
	const char *root;
	/** NULL or a NULL-terminated list of debug directories searched before
	 *  ROOT/usr/lib/debug; in each DIR: DIR/.build-id/xx/rest.debug,
	 *  DIR/boot/vmlinux-RELEASE, DIR/lib/modules/RELEASE/vmlinux,
	 *  DIR/vmlinux-RELEASE, DIR/vmlinux, and .ko files under
	 *  DIR/lib/modules/RELEASE.  Copied. */
	const char *const *debug_dirs;
} symdb_kernel_opts;

/** Kallsyms only: look for no vmlinux and no module file. */
#define SYMDB_KERNEL_NO_DWARF 0x1u

/** What answered a kernel address. */
enum symdb_kernel_source {
	SYMDB_KERNEL_SRC_NONE = 0,     /**< nothing did (status says why) */
	SYMDB_KERNEL_SRC_KALLSYMS = 1, /**< the kallsyms table (name, start, size) */
	SYMDB_KERNEL_SRC_VMLINUX = 2,  /**< the vmlinux's index (frames) */
	SYMDB_KERNEL_SRC_MODULE = 3    /**< a module file's index (frames) */
};

/** The answer for one kernel address. */
typedef struct symdb_kernel_result {
	int status;            /**< enum symdb_sym_status: SYMDB_SYM_OK, or
	                            SYMDB_SYM_NO_SYMBOL (no symbol covers it) */
	int error;             /**< 0, or why DWARF was not used for this address
	                            (the image's error: SYMDB_E_BAD_OBJECT...) */
	uint32_t source;       /**< enum symdb_kernel_source */
	uint32_t nframes;      /**< DWARF frames, innermost first; 0 = none */
	const symdb_frame *frames; /**< nframes frames of sizeof(symdb_frame); their
	                            addresses are the image's (debug_addr's) */
	const char *sym_name;  /**< the kallsyms symbol covering the address, or NULL */
	uint64_t sym_addr;     /**< its runtime address */
	uint64_t sym_size;     /**< its inferred size (above) */
	const char *module;    /**< the module ("ext4"), or NULL for the kernel image */
	uint64_t debug_addr;   /**< the address asked of the image: the vmlinux
	                            vaddr, or the offset into the module's .text;
	                            SYMDB_ADDR_INVALID when no image was asked */
	const symdb_image *image; /**< the image that gave the frames, or NULL */
} symdb_kernel_result;

/** What symdb_kernel_open() found (symdb_kernel_get_info()). */
typedef struct symdb_kernel_info {
	size_t sz;               /**< sizeof(symdb_kernel_info), set by the caller */
	size_t nsyms;            /**< symbols in the table */
	size_t skipped_lines;    /**< kallsyms lines that were malformed */
	size_t nmodules;         /**< modules in /proc/modules */
	size_t nmodule_files;    /**< ... of which a .ko file was found */
	const char *vmlinux;     /**< the vmlinux used, or NULL */
	uint64_t kaslr_offset;   /**< runtime - vmlinux address (0 without a vmlinux) */
	symdb_uuid build_id;     /**< from the notes; len 0 when unknown */
	/** Why no vmlinux is used, one line (no build-id note, none of the
	 *  locations holds a file with that build-id, no _stext...); "" when one
	 *  is used. */
	const char *no_vmlinux;
} symdb_kernel_info;

/**
 * @brief symdb_kernel_open() reads kallsyms, the notes, the modules and
 *        their sections, and finds the vmlinux and the module files.
 * @param opts NULL or options: the sources, SYMDB_KERNEL_NO_DWARF.
 * @param out  receives the handle (free it with symdb_kernel_close()).
 * @return 0; -errno when kallsyms cannot be read; -EACCES when every
 *         address in it reads as 0 (kptr_restrict, or no CAP_SYSLOG):
 *         errbuf says so in one line, "PATH: every address reads as 0:
 *         the kernel hides them from this user (kptr_restrict=N,
 *         perf_event_paranoid=N; ...)"; SYMDB_E_BAD_OBJECT
 *         when it holds no symbol; SYMDB_E_INVAL; -ENOMEM.  A missing
 *         vmlinux, notes file, modules list or module file is not an
 *         error: those addresses are answered from kallsyms.
 * @note Reads files only (no database): the images are indexed and opened
 *       by the symbolizer that symdb_kernel_symbolize() is given.  Malformed
 *       kallsyms lines are skipped and counted (symdb_kernel_get_info()).
 *       Thread-safe (each call makes its own handle).
 */
SYMDB_API int symdb_kernel_open(const symdb_kernel_opts *opts, symdb_kernel **out);

/**
 * @brief symdb_kernel_close() frees a handle.  NULL-safe.
 * @param k NULL (nothing happens) or a handle from symdb_kernel_open().
 * @note Call it with no other call on k running.  Names returned by
 *       symdb_kernel_symbolize(), symdb_kernel_lookup() and
 *       symdb_kernel_get_info() (sym_name, module, vmlinux) become invalid.
 */
SYMDB_API void symdb_kernel_close(symdb_kernel *k);

/**
 * @brief symdb_kernel_get_info() says what the handle found.
 * @param k   an open handle.
 * @param out receives min(out->sz, sizeof(symdb_kernel_info)) bytes.
 * @return 0, or SYMDB_E_INVAL for a NULL argument or out->sz 0.
 * @note Strings belong to k.  Thread-safe.
 */
SYMDB_API int symdb_kernel_get_info(const symdb_kernel *k, symdb_kernel_info *out);

/**
 * @brief symdb_kernel_lookup() finds the kallsyms symbol covering one
 *        runtime address: a binary search, no allocation.
 * @param k    an open handle.
 * @param addr a kernel runtime address.
 * @param name receives the symbol's name (owned by k).
 * @param start receives its address; may be NULL.
 * @param size receives its inferred size; may be NULL.
 * @param module receives its module, or NULL for the kernel image; may be NULL.
 * @return 0, or SYMDB_E_NOT_FOUND when no symbol covers addr.
 * @note Thread-safe: the table is immutable after open.
 */
SYMDB_API int symdb_kernel_lookup(const symdb_kernel *k, uint64_t addr, const char **name,
                                  uint64_t *start, uint64_t *size, const char **module);

/**
 * @brief symdb_kernel_symbolize() answers a batch of kernel runtime
 *        addresses, in any order: from DWARF (the vmlinux, a module's file)
 *        where an image is found, and from kallsyms otherwise.
 * @param k       an open handle.
 * @param s       a symbolizer context that indexes on first sight
 *                (SYMDB_SYMBOLIZER_BUILD) and opens the images; NULL =
 *                kallsyms only.
 * @param addrs   n runtime addresses.
 * @param n       how many (at most UINT32_MAX).
 * @param results n results of result_sz bytes each, in input order.
 * @param result_sz sizeof(symdb_kernel_result) as the caller knows it.
 * @param opts    NULL or options for the symbolizer (flags
 *                SYMDB_SYMBOLIZE_DEMANGLE only, errbuf, frame_sz).
 * @return 0; SYMDB_E_INVAL; -ENOMEM; or symdb_symbolize()'s errors.  An
 *         image that cannot be indexed or opened is not an error of the
 *         call: its addresses are answered from kallsyms with `error` set.
 * @note Frames live in s (valid until its next call); names in k.  Uses k
 *       (its request buffers) and s: one thread at a time per handle.
 */
SYMDB_API int symdb_kernel_symbolize(symdb_kernel *k, symdb_symbolizer *s,
                                     const uint64_t *addrs, size_t n,
                                     symdb_kernel_result *results, size_t result_sz,
                                     const symdb_symbolize_opts *opts);

/* ---- live processes (runtime addresses of a pid) ------------------------- */

/**
 * A cache for symbolizing the runtime addresses of live processes, as a
 * profiler sees them (pid, address).  For each address it finds the mapping
 * that covers it (/proc/PID/maps, or mappings the caller recorded from mmap
 * events), the module mapped there, the address normalised to a file offset
 * and a virtual address of that module, and (optionally) its symbolization
 * through symdb_symbolize() on the cache's context, so a module the database
 * lacks is indexed on first sight (SYMDB_SYMBOLIZER_BUILD).
 *
 * Files are opened as the process maps them: /proc/PID/root/PATH when that
 * is the mapped inode (the process's mount namespace: containers), else
 * /proc/PID/map_files/START-END (a deleted or replaced file: needs
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE).  The vDSO is read from the
 * process (/proc/PID/mem) and indexed like any image, identified by its
 * build-id.  Anonymous executable mappings (JIT code) are passed to the
 * caller's jit_lookup (e.g. a perf-map reader).
 *
 * Caching: modules are identified by build-id (else symdb's fallback id),
 * never by path: one library mapped by a thousand processes is read,
 * indexed and opened once.  A module is remembered by the (device, inode,
 * size, mtime) of its file, so a second process mapping it costs no file
 * access.  A process's mapping table is kept by (pid, start time from
 * /proc/PID/stat), so a reused pid is never answered from its predecessor's
 * table, and read again at every call (a library dlopen'ed since, one
 * replaced by dlclose + dlopen at the same address, an execve, which keeps
 * the pid and its start time); an unchanged /proc/PID/maps costs one read
 * and one compare.
 *
 * @note A cache is not thread-safe (like its symbolizer context): one per
 *       thread.  Memory grows with the number of processes, modules and
 *       the largest batch, and is reused: a warm batch of the same size over
 *       known mappings allocates nothing and reads only /proc/PID/stat and
 *       /proc/PID/maps.
 */
typedef struct symdb_proc_cache symdb_proc_cache;

/** What a jit_lookup callback found for an address in anonymous code. */
typedef struct symdb_proc_jit {
	const char *name;  /**< the symbol's name; valid until the next call on the cache */
	uint64_t start;    /**< its start address (runtime) */
	uint64_t size;     /**< its size; 0 = unknown */
} symdb_proc_jit;

/** Asked for each address in an anonymous executable mapping: 1 when found
 *  (out filled), 0 when not, < 0 an error (the address's error).  Runs on
 *  the calling thread; it must not call into the cache. */
typedef int (*symdb_proc_jit_fn)(void *arg, int pid, uint64_t addr, symdb_proc_jit *out);

/** Options for symdb_proc_cache_create(). */
typedef struct symdb_proc_opts {
	size_t sz;          /**< sizeof(symdb_proc_opts): set by SYMDB_OPTS() */
	unsigned flags;     /**< none defined yet: must be 0 */
	char *errbuf;       /**< optional: receives a one-line reason on failure,
	                        escaped (symdb.h "Conventions") */
	size_t errbuf_sz;   /**< size of errbuf */
	/** The procfs root; NULL = "/proc".  Copied. */
	const char *proc_dir;
	/** Where the vDSO's bytes are written for the indexer (a private
	 *  directory, removed at once); NULL = "/tmp".  Copied. */
	const char *tmp_dir;
	symdb_proc_jit_fn jit_lookup; /**< optional: anonymous executable code */
	void *jit_arg;                /**< passed to jit_lookup */
} symdb_proc_opts;

/**
 * @brief symdb_proc_cache_create() makes a cache over a symbolizer context.
 * @param s    the context that opens (and, with SYMDB_SYMBOLIZER_BUILD,
 *             indexes) the modules; it must outlive the cache.
 * @param opts NULL or options.
 * @param out  receives the cache (symdb_proc_cache_free()).
 * @return 0; SYMDB_E_INVAL for a NULL argument or bad opts; -ENOMEM.
 * @note Opens nothing yet.  Thread-safe (each call makes its own cache).
 */
SYMDB_API int symdb_proc_cache_create(symdb_symbolizer *s, const symdb_proc_opts *opts,
                                      symdb_proc_cache **out);

/**
 * @brief symdb_proc_cache_free() frees the cache; its context's images stay
 *        open until symdb_symbolizer_free().  NULL-safe.
 * @param c NULL (nothing happens) or a cache from symdb_proc_cache_create().
 * @note Every string a symdb_proc_symbolize*() call returned becomes invalid.
 *       Call it on the thread that uses c, before freeing its context.
 */
SYMDB_API void symdb_proc_cache_free(symdb_proc_cache *c);

/**
 * @brief symdb_proc_forget() drops the cached mapping table of pid (a
 *        profiler saw it exit); the modules stay cached.
 * @param c   a cache of this thread.
 * @param pid the process.
 * @return 0; SYMDB_E_NOT_FOUND when none was cached; SYMDB_E_INVAL for a
 *         NULL c.
 * @note Not thread-safe, like the cache.  Tables are otherwise kept until
 *       symdb_proc_cache_free(): a long-running caller forgets the pids it
 *       sees exit, or its memory grows with every process it met.
 */
SYMDB_API int symdb_proc_forget(symdb_proc_cache *c, int pid);

/** One mapping, as a profiler records it from an mmap event or
 *  /proc/PID/maps.  Zero-initialise it. */
typedef struct symdb_mapping {
	uint64_t start, end;       /**< runtime range [start, end) */
	uint64_t file_offset;      /**< offset in the file of start (pgoff) */
	const char *path;          /**< the file as the process named it; NULL or "" =
	                                anonymous; "[vdso]" = the vDSO (read from pid) */
	const symdb_uuid *build_id; /**< NULL, or the build-id the profiler saw: a
	                                file found there with another identity (it
	                                was replaced) answers SYMDB_PROC_NO_MODULE
	                                with error -ESTALE, never another file's
	                                symbols */
	uint32_t prot;             /**< SYMDB_MAP_* */
	uint32_t reserved_;
} symdb_mapping;

#define SYMDB_MAP_READ  0x1u
#define SYMDB_MAP_WRITE 0x2u
#define SYMDB_MAP_EXEC  0x4u

/** What became of an address (symdb_proc_addr.status). */
enum symdb_proc_status {
	SYMDB_PROC_OK = 0,         /**< in a file's (or the vDSO's) mapping: module,
	                                offsets and image are known */
	SYMDB_PROC_NO_MAPPING = 1, /**< no mapping covers it (also after a re-read) */
	SYMDB_PROC_GONE = 2,       /**< the process exited (or its pid was reused)
	                                before this address could be answered */
	SYMDB_PROC_NO_ACCESS = 3,  /**< its mapped file or memory could not be read
	                                (permission: error is -EACCES or -EPERM) */
	SYMDB_PROC_NO_MODULE = 4,  /**< the mapped file could not be opened, indexed
	                                or understood (error says why); offsets known */
	SYMDB_PROC_JIT = 5,        /**< anonymous executable code named by jit_lookup */
	SYMDB_PROC_ANON = 6,       /**< anonymous memory nothing names */
	SYMDB_PROC_NO_SEGMENT = 7  /**< in a file's mapping, but past the end of
	                                every segment of the file (the padding of
	                                a page): file_offset known, no vaddr */
};

/** Where one runtime address lies.  Strings are owned by the cache and valid
 *  until the next call on it. */
typedef struct symdb_proc_addr {
	int status;                /**< enum symdb_proc_status */
	int error;                 /**< 0, or the -errno / SYMDB_E_* behind status */
	const char *module;        /**< the mapping's path as /proc/PID/maps shows it
	                                ("/usr/lib/libc.so.6", "/tmp/x.so (deleted)",
	                                "[vdso]"), or NULL */
	symdb_uuid id;             /**< the module's identity (len 0 when unknown) */
	uint64_t file_offset;      /**< the address as an offset in the module's file */
	uint64_t vaddr;            /**< ... as the module's virtual address (what
	                                `llvm-symbolizer --obj FILE` takes), or
	                                SYMDB_ADDR_INVALID */
	uint64_t map_start;        /**< the covering mapping's start */
	const symdb_image *image;  /**< the module's image (owned by the context), or NULL */
	symdb_proc_jit jit;        /**< SYMDB_PROC_JIT: what jit_lookup said */
} symdb_proc_addr;

/** Options for one symdb_proc_symbolize*() call. */
typedef struct symdb_proc_call_opts {
	size_t sz;          /**< sizeof(symdb_proc_call_opts): set by SYMDB_OPTS() */
	unsigned flags;     /**< SYMDB_SYMBOLIZE_DEMANGLE; others: SYMDB_E_INVAL */
	char *errbuf;       /**< optional: receives a one-line reason on failure,
	                        escaped (symdb.h "Conventions") */
	size_t errbuf_sz;   /**< size of errbuf */
	size_t where_sz;    /**< sizeof(symdb_proc_addr) the caller uses; 0 = this header's */
	size_t result_sz;   /**< sizeof(symdb_symbolized) the caller uses; 0 = this header's */
	size_t frame_sz;    /**< sizeof(symdb_frame) the caller uses; 0 = this header's */
} symdb_proc_call_opts;

/**
 * @brief symdb_proc_symbolize() answers a batch of runtime addresses of one
 *        live process: where each lies and, with results, its symbolization.
 * @param c       a cache of this thread.
 * @param pid     the process (its /proc directory under proc_dir).
 * @param addrs   n runtime addresses, in any order.
 * @param n       how many (at most UINT32_MAX).
 * @param where   receives n entries of opts->where_sz bytes, in input order.
 * @param results NULL (normalise only: images are still found, opened or
 *                indexed, so that where[i].image can be used) or n results
 *                of opts->result_sz bytes, in input order, as symdb_symbolize()
 *                gives them; an address that is not SYMDB_PROC_OK gets
 *                SYMDB_SYM_NO_IMAGE there (and frames NULL).
 * @param opts    NULL or options.
 * @return 0 (each address has its own status: a process that exits during
 *         the call gives SYMDB_PROC_GONE for what was not answered yet);
 *         -ESRCH when pid does not exist at the start of the call;
 *         -EACCES/-EPERM when its mappings cannot be read (ptrace access);
 *         SYMDB_E_INVAL for bad arguments; -ENOMEM.  errbuf says
 *         "/proc/PID/maps: reason".
 * @note Strings and frames live in the cache and its context: valid until
 *       the next call on either.  Not thread-safe, like the context.
 */
SYMDB_API int symdb_proc_symbolize(symdb_proc_cache *c, int pid, const uint64_t *addrs,
                                   size_t n, symdb_proc_addr *where, symdb_symbolized *results,
                                   const symdb_proc_call_opts *opts);

/**
 * @brief symdb_proc_symbolize_maps() is symdb_proc_symbolize() over mappings
 *        the caller recorded (a profiler's mmap events; a process that may be
 *        gone), instead of /proc/PID/maps.
 * @param c     a cache of this thread.
 * @param pid   the process the mappings belong to, or 0: files are then
 *              opened by their path as given, and "[vdso]" and
 *              anonymous mappings answer SYMDB_PROC_ANON.  With a pid, files
 *              are opened through /proc/PID/root first (falling back to the
 *              path) and the vDSO is read from the process.
 * @param maps  nmaps mappings, in any order, not overlapping.
 * @param nmaps how many.
 * @param addrs n runtime addresses, in any order.
 * @param n     how many.
 * @param where receives n entries, as for symdb_proc_symbolize().
 * @param results NULL or n results, as for symdb_proc_symbolize().
 * @param opts  NULL or options.
 * @return as symdb_proc_symbolize(), except that a missing process is not
 *         an error (its files are opened by path); SYMDB_E_INVAL also for a
 *         mapping whose end is not above its start.
 * @note The mappings are copied for the call only: nothing about them is
 *       cached except their modules (by file identity and build-id).  Not
 *       thread-safe, like the cache.
 */
SYMDB_API int symdb_proc_symbolize_maps(symdb_proc_cache *c, int pid, const symdb_mapping *maps,
                                        size_t nmaps, const uint64_t *addrs, size_t n,
                                        symdb_proc_addr *where, symdb_symbolized *results,
                                        const symdb_proc_call_opts *opts);


/* ======================================================================
 * Perf maps: symbols of JIT-compiled code (reader/live_perfmap.c)
 * ====================================================================== */

/**
 * A perf map, `/tmp/perf-PID.map`: the text file in which a JIT (V8 and Node
 * with --perf-basic-prof, the JVM's perf-map agents, Python 3.12 -X perf)
 * names the code it writes into anonymous executable memory, one
 * "START SIZE NAME" line per piece of code, START and SIZE in hex without
 * (or with) 0x, as perf(1) reads it.
 *
 * Lifetime.  A perf map belongs to one run of one process: it is not
 * keyed by build-id (the code has no file), it grows while the process
 * runs, and a JIT may rewrite it.  Its name holds only the pid, so a map
 * left behind by an earlier process with the same pid looks the same
 * (symdb_perfmap_open_pid() refuses one last written before the process
 * started): callers key their handles by (pid, process start time: field
 * 22 of /proc/PID/stat) and drop a handle when that pair changes.  Within a run,
 * symdb_perfmap_refresh() reads what was appended since the last read (a
 * profiler calls it when an address is not found), and rereads the file
 * whole when it was replaced, truncated or rewritten from its first bytes.
 *
 * Reading.  Lines are read as perf 6.1 reads them, except that lines perf
 * would misread are skipped and counted (symdb_perfmap_stats): no hex
 * numbers, numbers past 64 bits, a range past 2^64, a NUL byte, a name
 * shorter than 3 bytes (perf drops those too), a line longer than
 * max_line.  A last line without its newline is being written: it is read
 * by a later refresh, once complete.  A size of 0 answers its start address
 * only (as perf).  Where entries overlap, the latest line covering an
 * address answers it (the JIT wrote it last; perf's choice there depends
 * on the shape of its rb-tree); earlier entries keep answering the
 * addresses no later line covers.  Lookups are binary searches over a
 * sorted table of disjoint ranges built at each read that added lines.
 *
 * jitdump.  The same calls read perf's binary jit-PID.dump format (V8/Node
 * --perf-prof, the JVM's perf agent, Python 3.12 -X perf_jit), told apart
 * by its magic ("jItD", either byte order): each JIT_CODE_LOAD record is an
 * entry (code_addr, code_size, name), each JIT_CODE_MOVE the latest load
 * of its code_index at the new address; other records are passed over.
 * There "lines" are records: line numbers and counts are record numbers
 * and counts, long_lines counts names longer than max_line, and a record
 * whose name is not written yet waits like an unterminated line.  A
 * header that is not version 1, or a record shorter than its 16-byte
 * prefix, ends what can be read (one skipped record) until the file is
 * read whole again.
 */
typedef struct symdb_perfmap symdb_perfmap;

/** Options for symdb_perfmap_open*() and symdb_perfmap_refresh(); the
 *  first four fields are those of symdb_open_opts. */
typedef struct symdb_perfmap_opts {
	size_t sz;        /**< sizeof(symdb_perfmap_opts): set by SYMDB_OPTS() */
	unsigned flags;   /**< SYMDB_PERFMAP_*; unknown bits give SYMDB_E_INVAL */
	char *errbuf;     /**< optional: receives a one-line reason on failure,
	                      escaped (symdb.h "Conventions") */
	size_t errbuf_sz; /**< size of errbuf */
	/** symdb_perfmap_open_pid(): the directory holding perf-PID.map;
	 *  NULL is "/tmp" (the library reads no $TMPDIR: perf does not either). */
	const char *dir;
	/** lines longer than this many bytes (without the newline) are skipped
	 *  and counted; 0 is 4096 */
	size_t max_line;
} symdb_perfmap_opts;

/** symdb_perfmap_open_pid(): the map of a process in another mount and pid
 *  namespace (a container), as perf finds it: the file is
 *  /proc/PID/root/DIR/perf-NSPID.map, NSPID being the pid the process has
 *  in its own namespace (the last NSpid of /proc/PID/status). */
#define SYMDB_PERFMAP_IN_ROOT 0x1u

/**
 * @brief symdb_perfmap_open() reads a perf map file (or a jitdump file).
 * @param path the file.
 * @param opts NULL or options (errbuf, max_line; flags must be 0 or
 *             SYMDB_PERFMAP_IN_ROOT, which has no effect here).
 * @param out  receives the handle, owned by the caller (symdb_perfmap_close()).
 * @return 0; -ENOENT (no such file), -EACCES or another -errno of open(2);
 *         SYMDB_E_INVAL for a NULL/empty path or a path that is not a
 *         regular file; -ENOMEM.  Malformed lines are not errors: they are
 *         counted (symdb_perfmap_get_stats()).
 * @note Reads the file once, whole; never blocks on a writer.
 */
SYMDB_API int symdb_perfmap_open(const char *path, const symdb_perfmap_opts *opts,
                                 symdb_perfmap **out);

/**
 * @brief symdb_perfmap_open_pid() reads the perf map of process pid:
 *        DIR/perf-PID.map (DIR from opts, "/tmp" by default), or with
 *        SYMDB_PERFMAP_IN_ROOT the file in the process's own root.
 * @param pid  the process id (> 0).  The process need not be alive: a map
 *             outlives its process.
 * @param opts NULL or options (dir, flags, errbuf, max_line).
 * @param out  receives the handle, owned by the caller.
 * @return as symdb_perfmap_open(); -ENOENT when the process wrote no map
 *         (errbuf names the path); -ESTALE when pid is alive and the map
 *         was last written before it started (a map left by an earlier
 *         process with this pid: /proc/PID/stat's start time against the
 *         file's mtime); SYMDB_E_INVAL for pid <= 0; -ENAMETOOLONG for a
 *         too long dir.
 * @note Reads /proc/PID/stat and /proc/stat (the start time), and
 *       /proc/PID/status for SYMDB_PERFMAP_IN_ROOT.  Thread-safe (each
 *       handle is its own).
 */
SYMDB_API int symdb_perfmap_open_pid(int pid, const symdb_perfmap_opts *opts,
                                     symdb_perfmap **out);

/**
 * @brief symdb_perfmap_refresh() catches up with the file: reads the lines
 *        appended since the last read, or the whole file again when it was
 *        replaced (another inode), shrank or its first bytes changed.
 * @param m    a handle.
 * @param opts NULL or options (errbuf only; dir and max_line are those of
 *             the open).
 * @return 0 nothing new; 1 appended lines were read; 2 the file was read
 *         whole again; or an error as symdb_perfmap_open() (-ENOENT: the
 *         file was removed).  A file that cannot be opened leaves the table
 *         as it was (samples taken before still resolve); a read that
 *         fails part way empties it (SYMDB_E_NOT_FOUND for every address)
 *         until a refresh succeeds.
 * @note Invalidates the names of earlier lookups.  Must not race with any
 *       other call on m (the caller locks).
 */
SYMDB_API int symdb_perfmap_refresh(symdb_perfmap *m, const symdb_perfmap_opts *opts);

/** One perf map entry (a sized output: set sz, or use SYMDB_OPTS). */
typedef struct symdb_perfmap_sym {
	size_t sz;        /**< sizeof(symdb_perfmap_sym) */
	const char *name; /**< as written, NUL-terminated; owned by the handle */
	uint64_t start;   /**< START of its line */
	uint64_t size;    /**< SIZE of its line (0: it answers start only) */
	uint64_t line;    /**< its line number in the file, from 1 */
} symdb_perfmap_sym;

/**
 * @brief symdb_perfmap_lookup() finds the entry that answers addr.
 * @param m    a handle.
 * @param addr a runtime address of the process.
 * @param out  receives the entry (min(out->sz, its size) bytes).
 * @return 0; SYMDB_E_NOT_FOUND when no entry covers addr (a caller may
 *         refresh and try again); SYMDB_E_INVAL for NULL arguments.
 * @note name is valid until the next symdb_perfmap_refresh() or
 *       symdb_perfmap_close() of m.  Any number of threads may look up at
 *       once; none may while another refreshes or closes m.
 */
SYMDB_API int symdb_perfmap_lookup(const symdb_perfmap *m, uint64_t addr,
                                   symdb_perfmap_sym *out);

/** What reading a perf map found (counts since the file was last read
 *  whole; a sized output). */
typedef struct symdb_perfmap_stats {
	size_t sz;                   /**< sizeof(symdb_perfmap_stats) */
	uint64_t lines;              /**< complete lines read */
	uint64_t entries;            /**< lines taken as entries */
	uint64_t skipped;            /**< lines skipped as malformed (long ones included) */
	uint64_t long_lines;         /**< of those, lines longer than max_line */
	uint64_t first_skipped_line; /**< line number of the first skipped, 0: none */
	uint64_t zero_size;          /**< entries of size 0 */
	uint64_t shadowed;           /**< entries every address of which a later line covers */
	uint64_t bytes;              /**< bytes read (complete lines) */
	uint64_t pending;            /**< bytes of an unterminated last line, not read yet */
	uint64_t rereads;            /**< times the file was read whole again since open */
} symdb_perfmap_stats;

/**
 * @brief symdb_perfmap_get_stats() tells what the reads found.
 * @param m   a handle.
 * @param out receives the counts (min(out->sz, their size) bytes).
 * @return 0; SYMDB_E_INVAL for NULL arguments or a too small out->sz.
 * @note Same thread rule as symdb_perfmap_lookup().
 */
SYMDB_API int symdb_perfmap_get_stats(const symdb_perfmap *m, symdb_perfmap_stats *out);

/**
 * @brief symdb_perfmap_path() tells which file m reads.
 * @param m a handle, or NULL.
 * @return the path (owned by m, valid until symdb_perfmap_close()); NULL for NULL.
 * @note Same thread rule as symdb_perfmap_lookup().
 */
SYMDB_API const char *symdb_perfmap_path(const symdb_perfmap *m);

/**
 * @brief symdb_perfmap_close() frees a handle; the names of its lookups go with it.
 * @param m a handle, or NULL (nothing happens).
 * @note Must not race with any other call on m.
 */
SYMDB_API void symdb_perfmap_close(symdb_perfmap *m);

#ifdef __cplusplus
}
#endif
#endif /* SYMDB_H */
