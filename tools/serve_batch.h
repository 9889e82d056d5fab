/* SPDX-License-Identifier: MIT */
/*
 * The batch model of POST /v1/symbolize, shared by its two front ends (JSON:
 * serve_json.c; binary: serve_binary.c) and the stack cache (serve_cache.c).
 * A front end parses a request into a struct serve_batch (modules, each with
 * a range of one address array; optional stacks of (module, address)
 * frames; options), then runs it:
 *
 *   serve_batch_open()     check out a symbolizer context from the pool and
 *                          find each module's image (module status, uuid)
 *   (the stack cache)      mark the stacks it already holds as cached
 *   serve_batch_resolve()  resolve every address and every frame of the
 *                          stacks not cached, in chunks, in input order,
 *                          handing each chunk's results to a callback
 *   serve_batch_close()    return the context to the pool
 *
 * serve_batch_run() does the three for a caller without a cache.
 * Results are handed over per chunk because a chunk's frames live in the
 * context's buffers only until the next chunk: the front end formats them
 * as they come (which is also what keeps a response's memory one chunk's
 * frames plus its text).  The deadline is checked between chunks; the items
 * not reached get SERVE_DEADLINE, never an error of the whole request.
 * deadline_ns is CLOCK_MONOTONIC nanoseconds (struct serve_request's
 * deadline_ns); 0 = no deadline.
 *
 * Statuses are part of the API: their numbers (binary format) and names
 * (JSON) are pinned and only ever appended (README "symdb serve").
 */
#ifndef SYMDB_SERVE_BATCH_H
#define SYMDB_SERVE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve.h"
#include "symdb.h"

/* X(enum name, value, JSON name, meaning).  Pinned: append only. */
#define SERVE_STATUS_LIST(X)                                                                    \
	X(SERVE_OK, 0, "ok", "resolved: the frames are known (module: the image was found)")   \
	X(SERVE_UNKNOWN_IMAGE, 1, "unknown_image", "the database does not hold the image")      \
	X(SERVE_NO_SYMBOL, 2, "no_symbol", "the image is known; nothing covers the address")   \
	X(SERVE_OUT_OF_RANGE, 3, "out_of_range",                                                \
	  "the address maps to no virtual address of the image")                                \
	X(SERVE_DAMAGED, 4, "damaged", "the image's index file, or the record the address led " \
	                               "to, is damaged")                                        \
	X(SERVE_BAD_IMAGE, 5, "bad_image",                                                      \
	  "a path module: the file cannot be read, is not an object file, holds no slice of "   \
	  "the asked arch, or the indexer rejected it")                                         \
	X(SERVE_DEADLINE, 6, "deadline", "not reached before the request's deadline")      \
	X(SERVE_PENDING, 7, "pending",                                                          \
	  "the image is being fetched (--upstream, --debuginfod) and was not there within the " \
	  "request's fetch budget: ask again later")

enum serve_status {
#define SERVE_X_ENUM(e, v, name, what) e = v,
	SERVE_STATUS_LIST(SERVE_X_ENUM)
#undef SERVE_X_ENUM
	SERVE_STATUS_COUNT
};

/* The JSON name of a status ("ok", ...); "?" for an unknown value.  Static. */
const char *serve_status_name(enum serve_status st);

/* How a module names its image. */
enum serve_ref {
	SERVE_REF_BUILD_ID = 0, /* id: a GNU build-id (or symdb fallback id) in hex */
	SERVE_REF_UUID = 1,     /* id: a Mach-O LC_UUID in hex (dashes already removed) */
	SERVE_REF_PATH = 2      /* id: a file on the server (only when srv->allow_paths) */
};

struct serve_module {
	/* in: set by the front end; the strings are the front end's memory */
	enum serve_ref ref;
	const char *id;                /* NUL-terminated; hex ids passed serve_hex_id_valid() */
	const char *arch;              /* NULL = any; "x86_64", "arm64", ...: the slice of a
	                                  universal Mach-O path (ignored for hex ids, which
	                                  name one slice already) */
	enum symdb_addr_kind addr_kind;
	uint64_t load_address;         /* SYMDB_ADDR_RUNTIME only */
	uint32_t first, count;         /* its addresses: batch addrs[first .. first + count) */
	/* out: set by serve_batch_open() */
	enum serve_status status;      /* SERVE_OK, UNKNOWN_IMAGE, DAMAGED, BAD_IMAGE, DEADLINE,
	                                  PENDING */
	const symdb_image *image;      /* SERVE_OK: owned by the checked-out context */
	symdb_uuid uuid;               /* SERVE_OK: the image's identity */
	/* SERVE_OK: what the stack cache keys an image by: its UUID's bytes and
	 * 8 bytes telling this index of it from another (a richer upload, a
	 * build --force) whose answers may differ: serve_batch.c, index_version */
	uint8_t key_id[SYMDB_UUID_MAX + 8];
	uint8_t key_len;
	int error;                     /* not SERVE_OK: the SYMDB_E_* / -errno behind the
	                                  status (symdb_strerror()), or 0 */
	const char *reason;            /* UNKNOWN_IMAGE after a failed fetch: its reason
	                                  (the run's memory, until serve_batch_close) */
};

/* The reason behind a module's status other than SERVE_OK, one line
 * (static, or the run's until serve_batch_close), or NULL when there is none.  The JSON "error" and the binary
 * Error string of the module. */
const char *serve_module_error(const struct serve_module *m);

/* One frame of a stack: an address of a module, of that module's addr_kind. */
struct serve_stack_frame {
	uint32_t module;               /* index into modules */
	uint32_t reserved_;
	uint64_t addr;
};

struct serve_stack {
	uint32_t first, count;         /* its frames: batch frames[first .. first + count) */
	bool cached;                   /* in: the cache answered it; its frames are skipped */
};

/* Which name a frame shows: llvm-symbolizer's --functions. */
enum serve_functions { SERVE_FN_LINKAGE = 0, SERVE_FN_SHORT = 1, SERVE_FN_NONE = 2 };

struct serve_options {
	bool demangle;                 /* default true */
	bool inlines;                  /* default true: the whole inline chain */
	enum serve_functions functions; /* default SERVE_FN_LINKAGE */
};

struct serve_batch {
	struct serve_module *modules;
	uint32_t nmodules;
	const uint64_t *addrs;         /* every module's addresses, module after module:
	                                  modules[0].first is 0 and each next module's
	                                  first is the previous first + count; the last
	                                  ends at naddrs */
	uint32_t naddrs;
	const struct serve_stack_frame *frames;
	uint32_t nframes;
	struct serve_stack *stacks;
	uint32_t nstacks;
	struct serve_options opt;
};

/*
 * The answer for one item.  Items are numbered addresses first
 * (0 .. naddrs-1, addrs[i]) and stack frames after them (naddrs + j for
 * frames[j]).  Pointers are valid during the chunk callback only.
 */
struct serve_result {
	enum serve_status status;
	uint32_t nframes;              /* library frames, innermost first (symdb_symbolized) */
	const symdb_frame *frames;
	const char *sym_name;          /* the symbol covering the address, or NULL */
	uint64_t sym_addr, sym_size;   /* its start (vaddr) and size (0 = to the next) */
	uint64_t vaddr;                /* the address as a vaddr; SYMDB_ADDR_INVALID if none */
	const symdb_image *image;      /* NULL unless the module's image was found */
	bool top;                      /* a vaddr of 2^64-1, asked as 2^64-2 (serve_batch.c):
	                                  vaddr is one less than the address asked */
};

/* A frame as the response shows it (the choice of serve_result_frames()). */
struct serve_frame {
	const char *function;          /* NULL = unknown, or functions = none */
	const char *file;              /* full path; NULL = unknown */
	const char *start_file;        /* the function's declaration file; NULL = unknown */
	uint32_t line, column, discriminator, start_line; /* 0 = unknown */
	bool has_start;
	bool inlined;                  /* an inlined call: not the outermost frame */
	uint64_t start;                /* the function's start (vaddr) when has_start */
};

/*
 * The frames of one result the response shows, llvm-symbolizer-14's choice
 * for the options (as `symdb query` makes it): every frame with inlines,
 * else one frame (the innermost line, with the symbol-table name and start
 * when functions is linkage).  out has room for max(r->nframes, 1) frames.
 * Returns the number written: 0 when the status is not SERVE_OK or nothing
 * is known (also a lone frame that shows nothing: a symbol-table-only
 * frame without linkage names, llvm-symbolizer's empty answer), else >= 1.
 * Pure; thread-safe.
 */
size_t serve_result_frames(const struct serve_options *opt, const struct serve_result *r,
                           struct serve_frame *out);

/*
 * Called per chunk, in item order: res[k] answers item first + k.  The
 * results (and their strings) are valid during the call only.  Return 0 to
 * go on, or -1 to stop the run (the front end's output failed: out of
 * memory, over its limit); serve_batch_resolve() then returns -ECANCELED.
 */
typedef int (*serve_chunk_fn)(void *arg, const struct serve_batch *b, uint32_t first,
                              uint32_t count, const struct serve_result *res);

/* One request's checked-out context.  Opaque. */
struct serve_run;

/*
 * Checks out a symbolizer context (created on demand: one per request being
 * handled; the pool keeps lim.threads of them idle) and finds every module's image: hex
 * ids in the catalog, paths through the context (indexed on first sight).
 * Sets each module's status, image and uuid; modules not reached by
 * deadline_ns get SERVE_DEADLINE.  With srv->fetch, the unknown modules
 * named by id are fetched (serve_fetch_wait()): the call waits for them
 * until lim.fetch_budget_ms has passed, and never for more than half of
 * the time left before deadline_ns (the rest of the request is answered
 * in the other half); the modules still being fetched then get
 * SERVE_PENDING, those no source has SERVE_UNKNOWN_IMAGE.  It waits only
 * when wait is SERVE_WAIT_ALLOWED: with SERVE_WAIT_NONE the modules whose
 * fetch has not ended are SERVE_PENDING at once, and with
 * SERVE_WAIT_HANDOFF (a pool thread) the call returns -EWOULDBLOCK instead
 * of waiting (the fetches started or joined, nothing checked out or
 * counted: call it again where it may wait).  A module with ref
 * SERVE_REF_PATH when !srv->allow_paths is the front end's 400, never
 * passed here (-EPERM).
 * @return 0 with *out; -ENOMEM; -EPERM (a path module, paths not allowed);
 *         -EINVAL for a malformed batch (a range past its array, a stack
 *         frame's module out of range): err says which, one line;
 *         -EWOULDBLOCK (SERVE_WAIT_HANDOFF only): it would have to wait.
 * @note Thread-safe; *out belongs to the calling thread until
 *       serve_batch_close().
 */
int serve_batch_open(struct serve_server *srv, struct serve_batch *b, uint64_t deadline_ns,
                     enum serve_wait wait, struct serve_run **out, char *err, size_t errsz);

/*
 * Resolves every item (addresses, then the frames of the stacks not
 * cached) in chunks through symdb_symbolize(), calling fn once per chunk
 * in item order; items of a module that is not SERVE_OK get its status,
 * items not reached by deadline_ns SERVE_DEADLINE (still handed to fn).
 * Frames of cached stacks are handed over with status SERVE_OK and no
 * frames: the front end takes their text from the cache.
 * @return 0; -ECANCELED when fn stopped it; -ENOMEM.
 */
int serve_batch_resolve(struct serve_run *run, const struct serve_batch *b, uint64_t deadline_ns,
                        serve_chunk_fn fn, void *arg);

/* Returns the context to the pool.  NULL-safe.  The modules' image
 * pointers become invalid. */
void serve_batch_close(struct serve_run *run);

/* serve_batch_open + serve_batch_resolve + serve_batch_close. */
int serve_batch_run(struct serve_server *srv, struct serve_batch *b, uint64_t deadline_ns,
                    enum serve_wait wait, serve_chunk_fn fn, void *arg, char *err, size_t errsz);

/* ---- writers ------------------------------------------------------------- */

/* ---- the JSON front end (the routing table names it) ---------------------- */

/* POST /v1/symbolize with Content-Type application/json (serve_json.c): the
 * request and response formats are README's "symdb serve" API reference. */
void serve_json_handle(struct serve_request *rq, struct serve_reply *out);

/* POST /v1/symbolize with Content-Type application/x-symdb-batch
 * (serve_binary.c): the messages of SPEC §16, the same answers. */
void serve_binary_handle(struct serve_request *rq, struct serve_reply *out);

/* ---- the pool (serve_main.c creates it into srv->pool) ------------------- */

/*
 * Creates the pool of symbolizer contexts for srv: a context is made when
 * a run finds none idle, so there are as many as requests run at once
 * (srv->lim.threads on libmicrohttpd's pool, plus the requests waiting for
 * fetches on threads of their own); at most srv->lim.threads are kept idle
 * for reuse, the others freed when their run ends.  With
 * srv->allow_paths they index on first sight (SYMDB_SYMBOLIZER_BUILD,
 * srv->indexer_path, srv->tmp_dir).  srv must outlive the pool.
 * @return 0; -ENOMEM.
 */
int serve_pool_create(struct serve_server *srv, struct serve_pool **out);
/* Frees every context.  NULL-safe; no run may be checked out. */
void serve_pool_free(struct serve_pool *pool);

#endif /* SYMDB_SERVE_BATCH_H */
