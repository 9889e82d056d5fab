/* SPDX-License-Identifier: MIT */
/**
 * @file symdb_fetch.h
 * @brief symdb fetch: find an image the database does not hold elsewhere --
 *        upstream index stores, then debuginfod servers -- and publish it
 *        (part of libsymdb).
 *
 * Two kinds of source, tried in the order given, upstreams first:
 * - An *upstream index store* holds prebuilt index files under one URL
 *   layout (SPEC §12.9): BASE/symdb/v1/XX/HEX.symdb, XX the first two hex
 *   digits of the image's UUID HEX.  `symdb serve` answers that URL, and so
 *   does any static HTTP server (nginx, a CDN, an object store) serving a
 *   tree written by `symdb export --tree DIR`.  A downloaded file is
 *   hostile input: it is published through symdb_builder_import_file()
 *   (every checksum, symdb_image_verify(), its header UUID against the one
 *   asked for); a damaged file publishes nothing.
 * - A *debuginfod server* (elfutils' protocol, through libdebuginfod):
 *   the executable and/or the debuginfo file of a build-id are downloaded
 *   and indexed by the sandboxed symdb-indexer, exactly like
 *   symdb_builder_add() on local files (the executable's symbol tables and
 *   the debuginfo's DWARF make one index), then published.
 *
 * The network is never touched by this library's process: each fetch runs
 * the symdb-fetch executable (fetcher_path), which links libcurl and
 * libdebuginfod, with an environment made from these options only (the
 * library reads no environment variable), writing what it downloads into a
 * file under DB/tmp that the library created and passed as a descriptor.
 * The fetcher is killed when the fetch's deadline passes, so a server that
 * accepts the connection and never answers costs at most timeout_ms.
 *
 * Negative answers -- no source has the build-id -- are remembered in the
 * database for negative_ttl_s seconds (SPEC §12.9, DB/misses/): a fetch of
 * the same build-id inside that time returns SYMDB_E_NOT_FOUND at once,
 * from any process sharing the database, without reaching any server.  A
 * timeout, a damaged download or a failed indexer run is not a negative
 * answer and is not remembered.
 *
 * Thread safety: symdb_fetch() may be called from several threads (and
 * processes) at once; two fetches of one build-id may both download, and
 * publish one file and one entry (the builder's same-build-id rules).
 */
#ifndef SYMDB_FETCH_H
#define SYMDB_FETCH_H

#include <signal.h>

#include "symdb_build.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Do not consult or write the negative cache (DB/misses/). */
#define SYMDB_FETCH_NO_NEGATIVE_CACHE 0x1u
/** Progress of large downloads on stderr when it is a terminal (the
 *  fetcher's own line, libdebuginfod's progress function). */
#define SYMDB_FETCH_PROGRESS 0x2u

typedef struct symdb_fetch_opts {
	size_t sz;          /**< sizeof(symdb_fetch_opts): set by SYMDB_OPTS() */
	unsigned flags;     /**< SYMDB_FETCH_*; unknown bits give SYMDB_E_INVAL */
	char *errbuf;       /**< optional: receives a one-line reason on failure,
	                        escaped (symdb.h "Conventions") */
	size_t errbuf_sz;   /**< size of errbuf */
	/** Upstream index stores, tried in order: URLs separated by spaces
	 *  (http:// or https://; the base under which /symdb/v1/... lives).
	 *  NULL or "" = none.  Copied where kept. */
	const char *upstreams;
	/** debuginfod servers, separated by spaces, as DEBUGINFOD_URLS (the
	 *  CLI maps that variable here), at most 4095 bytes (longer:
	 *  SYMDB_E_INVAL).  NULL or "" = none. */
	const char *debuginfod_urls;
	/** libdebuginfod's download cache (DEBUGINFOD_CACHE_PATH); NULL = a
	 *  directory of the database (DB/debuginfod-cache). */
	const char *debuginfod_cache;
	/** The whole fetch's deadline, every source included, in milliseconds;
	 *  0 = 30000.  The fetcher is killed when it passes: -ETIMEDOUT. */
	uint32_t timeout_ms;
	/** How long a negative answer is remembered, in seconds; 0 = 600. */
	uint32_t negative_ttl_s;
	/** Largest download accepted, bytes; 0 = 4 GiB.  Past it the download
	 *  is cut and the source counts as failed (not as a negative answer). */
	uint64_t max_bytes;
	/** The symdb-fetch executable, or NULL for the installed one
	 *  (BINDIR/symdb-fetch). */
	const char *fetcher_path;
	/** Options for indexing a debuginfod download (indexer_path, timeout_s,
	 *  memory_limit, threads, debug_dir ignored); NULL = defaults.  Its
	 *  SYMDB_BUILD_FORCE fetches even an image the database holds, or one
	 *  the negative cache says no source has, and replaces it. */
	const symdb_build_opts *build;
	/** Proxies for the fetcher's requests, upstreams and debuginfod alike,
	 *  handed to it as the environment variables libcurl reads:
	 *  http_proxy (http:// URLs), https_proxy (https:// URLs), all_proxy
	 *  (either, when the scheme's own is not set), and no_proxy (hosts,
	 *  domains and addresses that go direct, separated by commas; "*" for
	 *  all).  Values as libcurl takes them ("http://[user:pass@]host:port",
	 *  socks5h://...), at most 4095 bytes each (longer: SYMDB_E_INVAL).
	 *  NULL or "" = not set: with none set every request goes direct.  The
	 *  CLI maps the caller's variables of those names here. */
	const char *http_proxy;
	const char *https_proxy;
	const char *all_proxy;
	const char *no_proxy;
	/** NULL, or a flag that stops the fetch once it is non-zero, set by the
	 *  caller's SIGINT handler, or by another thread with an atomic store
	 *  (__atomic_store_n; the library loads it atomically): within about 100 ms
	 *  the fetcher is killed, what the fetch wrote in DB/tmp is removed,
	 *  nothing is published or remembered, and -EINTR is returned
	 *  ("ID: URL: interrupted").  So is a debuginfod download being
	 *  indexed: the indexer and its process group are killed and its
	 *  staged files removed ("ID: URL: executable: interrupted", or
	 *  "debuginfo:" when only that was downloaded).  Nothing of this
	 *  fetch's interrupted source is published; what an earlier source
	 *  of the same fetch already published (a store's empty index, kept
	 *  before debuginfod is asked) stays.  The index's checksum pass
	 *  before a publish is not interrupted. */
	const volatile sig_atomic_t *cancel;
} symdb_fetch_opts;

/** Where a fetched image came from (symdb_fetch_result.source). */
enum symdb_fetch_source {
	SYMDB_FETCH_NONE = 0,       /**< nothing was fetched */
	SYMDB_FETCH_UPSTREAM = 1,   /**< an upstream index store's index file */
	SYMDB_FETCH_DEBUGINFOD = 2, /**< files from a debuginfod server, indexed here */
	SYMDB_FETCH_CACHED_MISS = 3 /**< answered by the negative cache: nothing asked */
};

/** What one symdb_fetch() did.  Caller-allocated and sized like
 *  symdb_build_result (set sz with SYMDB_OPTS()). */
typedef struct symdb_fetch_result {
	size_t sz;               /**< in: sizeof as the caller knows it; out: bytes filled */
	int source;              /**< enum symdb_fetch_source */
	char url[1024];          /**< the URL the image came from, or "" */
	uint64_t bytes;          /**< bytes downloaded */
	uint32_t elapsed_ms;     /**< wall time of the fetch */
	symdb_build_result build; /**< what was published (source 1 or 2) */
} symdb_fetch_result;

/**
 * @brief symdb_fetch() fetches the image *id from the configured sources and
 *        publishes it into b's database.
 * @param b    an open builder (the database the image is published to).
 * @param id   the image's UUID (a GNU build-id, or a Mach-O LC_UUID for
 *             upstream stores; debuginfod knows build-ids only).
 * @param opts the sources and limits (NULL: no source: SYMDB_E_NOT_FOUND).
 * @param out  NULL, or caller-allocated with out->sz set.
 * @return 0 when the image is published (or was already indexed: out->build.skipped,
 *         also when its index answers nothing and no source has more);
 *         SYMDB_E_NOT_FOUND when every source answered that it has no such
 *         image (remembered, unless more than one debuginfod server was
 *         asked: libdebuginfod folds their answers), or the negative
 *         cache says so (source
 *         SYMDB_FETCH_CACHED_MISS); -ETIMEDOUT when the deadline passed;
 *         SYMDB_E_CHECKSUM/_CORRUPT/_FORMAT/_VERSION for a damaged index
 *         file from a store, SYMDB_E_BAD_OBJECT for a download the indexer
 *         rejects, -EINTR when opts->cancel was set,
 *         -EIO/-ECONNREFUSED... when no source could be reached
 *         (the last source's error; errbuf: "ID: URL: reason").  On error
 *         nothing is published (except a store's index that answers
 *         nothing, when a later source failed: kept, not remembered) and
 *         no temporary file is left.
 * @note Thread-safe (see the file comment).  Blocks the calling thread for
 *       at most opts->timeout_ms plus the indexer's run on a debuginfod
 *       download, or about 100 ms after opts->cancel is set.
 */
SYMDB_API int symdb_fetch(symdb_builder *b, const symdb_uuid *id, const symdb_fetch_opts *opts,
                          symdb_fetch_result *out);

/**
 * @brief symdb_fetch_forget() removes id's negative-cache entry, if any.
 * @return 0 (also when there was none), or -errno.
 * @note Thread-safe.
 */
SYMDB_API int symdb_fetch_forget(symdb_builder *b, const symdb_uuid *id);

#ifdef __cplusplus
}
#endif
#endif /* SYMDB_FETCH_H */
