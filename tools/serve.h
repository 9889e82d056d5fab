/* SPDX-License-Identifier: MIT */
/*
 * `symdb serve`: a long-running batch symbolization service.  This header is
 * how its parts meet; each part is one file:
 *
 *   serve_main.c     the `symdb serve` command: options, limits, signals
 *   serve_http.c     the libmicrohttpd daemon: listening (TCP, [v6], unix:),
 *                    routing, body limits, header/body deadlines, the cap on
 *                    concurrent requests (503), graceful shutdown, access log
 *   serve_routes.c   the table of endpoints
 *   serve_metrics.c  counters, the latency histogram, GET /metrics, /healthz
 *   serve_buf.c      the growable output buffer and JSON string escaping
 *   serve_batch.c    the batch model and its execution through
 *                    symdb_symbolize() on a pooled context
 *   serve_json.c     POST /v1/symbolize, application/json (json-c)
 *   serve_binary.c   POST /v1/symbolize, application/x-symdb-batch
 *                    (the codec is symdb_batch.h, in format/)
 *   serve_cache.c    the stack cache
 *   serve_images.c   POST /v1/images, GET /v1/images/{id}[/index]
 *   serve_fetch.c    fetching unknown build-ids in background threads
 *                    (upstream index stores, debuginfod: symdb_fetch.h)
 *
 * Threads: libmicrohttpd runs every handler on one of its pool threads; a
 * request is handled start to finish on one thread (an async endpoint's
 * handle, and a handle that has to wait for a fetch, on a thread of its
 * own, the only one touching that request then).  struct serve_server is
 * shared by all threads and is read-only after start, except through the
 * thread-safe objects it points to (metrics, cache, pool, images).
 * The server uses only the public headers (symdb.h, symdb_build.h,
 * the headers in format/include), like the rest of tools/.
 */
#ifndef SYMDB_SERVE_H
#define SYMDB_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli_util.h"
#include "symdb.h"

/* ---- limits (serve_main.c fills them from options; README lists them) ---- */

struct serve_limits {
	uint64_t max_body;          /* bytes of a /v1/symbolize body */
	uint64_t max_upload;        /* bytes of a /v1/images body */
	uint32_t max_modules;       /* modules per request */
	uint32_t max_addresses;     /* addresses per request, stack frames included */
	uint32_t max_stacks;        /* stacks per request */
	uint32_t max_depth;         /* JSON nesting depth */
	uint32_t deadline_ms;       /* per request, from its headers to its answer */
	uint32_t max_concurrent;    /* requests in flight; beyond it 503 + Retry-After */
	uint32_t header_timeout_ms; /* from accept to the end of the headers */
	uint32_t body_timeout_ms;   /* from the end of the headers to the end of the body */
	uint32_t idle_timeout_s;    /* keep-alive idle, or a client that stops reading */
	uint32_t max_indexers;      /* concurrent symdb-indexer runs */
	uint32_t threads;           /* libmicrohttpd pool threads */
	uint64_t cache_bytes;       /* the stack cache's memory bound; 0 = no cache */
	uint32_t max_fetches;       /* concurrent fetches of unknown images (threads) */
	uint32_t fetch_budget_ms;   /* how long a request waits for its fetches */
	uint32_t max_fetch_waiters; /* requests waiting for fetches (threads of their own) */
};

/* ---- the server: shared by every thread ---------------------------------- */

struct serve_metrics;
struct serve_cache;
struct serve_pool;
struct serve_images;
struct serve_fetch;

struct serve_server {
	symdb *db;                    /* opened once; catalog with MDB_NOTLS */
	const char *db_dir;           /* the database directory */
	const char *indexer_path;     /* NULL = the symdb-indexer beside symdb */
	const char *tmp_dir;          /* uploads are streamed here (default: db_dir/tmp) */
	bool allow_paths;             /* "path" modules accepted (loopback/unix listeners) */
	unsigned open_flags;          /* SYMDB_OPEN_VERIFY_CHECKSUMS with --verify (SPEC §9) */
	struct serve_limits lim;
	struct serve_metrics *metrics;
	struct serve_cache *cache;    /* NULL when cache_bytes is 0 */
	struct serve_pool *pool;      /* symbolizer contexts, one per busy thread */
	struct serve_images *images;  /* upload state: indexer slots, per-id locks */
	struct serve_fetch *fetch;    /* NULL when no fetch source is configured */
	int log_fd;                   /* access log (2 = stderr); -1 = none */
};

/* ---- endpoints ----------------------------------------------------------- */

/* The fixed set of metric labels for endpoints: never request data. */
enum serve_endpoint_id {
	SERVE_EP_SYMBOLIZE_JSON = 0,
	SERVE_EP_SYMBOLIZE_BINARY,
	SERVE_EP_IMAGES_UPLOAD,
	SERVE_EP_IMAGES_GET,
	SERVE_EP_IMAGES_INDEX,
	SERVE_EP_HEALTHZ,
	SERVE_EP_METRICS,
	SERVE_EP_OTHER,             /* 404, 405 and requests refused before routing */
	SERVE_EP_COUNT
};

/*
 * Whether a handler may wait for long (for an image being fetched): never
 * on a pool thread, where every other request would wait behind it.
 */
enum serve_wait {
	SERVE_WAIT_HANDOFF = 0, /* a pool thread: a handler that would wait gives up
	                           without an answer and says so (reply.handoff) */
	SERVE_WAIT_ALLOWED,     /* a thread of its own: it may wait */
	SERVE_WAIT_NONE         /* no thread of its own could be had
	                           (lim.max_fetch_waiters): answer without waiting */
};

/* One request, as a handler sees it.  Owned by serve_http.c. */
struct serve_request {
	struct serve_server *srv;
	const char *method;           /* "GET", "POST", ... */
	const char *path;             /* the URL path, percent-decoded by libmicrohttpd */
	const char *raw_path;         /* the path as the client sent it (for %2e checks) */
	const char *content_type;     /* the header up to ';', or NULL */
	bool has_length;              /* a Content-Length header (and no chunking) */
	uint64_t content_length;      /* its value (2^64-1 is a value too), else 0 */
	uint64_t start_ns;            /* CLOCK_MONOTONIC when the headers were complete */
	uint64_t deadline_ns;         /* start_ns + lim.deadline_ms */
	enum serve_endpoint_id ep;    /* for metrics; a handler may refine it */
	enum serve_wait wait;         /* where handle runs: may it wait? */
	const char *body;             /* buffered endpoints: the whole body */
	size_t body_len;
	void *state;                  /* streaming endpoints: their own state */
};

/* A handler's answer.  The core sends it, frees body, closes fd. */
struct serve_reply {
	unsigned status;              /* HTTP status */
	const char *content_type;     /* a static string */
	char *body;                   /* malloc'd (or NULL); the core frees it */
	size_t len;
	int fd;                       /* >= 0: send fd_len bytes of this file instead */
	uint64_t fd_len;
	unsigned retry_after;         /* seconds; 0 = no Retry-After header */
	const char *allow;            /* a static string: the Allow header (405), or NULL */
	uint64_t addresses;           /* addresses answered, for the log and metrics */
	char reason[200];             /* one line for the access log when status >= 400 */
	/* No answer (status 0, no body, no fd): handle would have to wait and
	 * rq->wait was SERVE_WAIT_HANDOFF.  The core calls handle again, on a
	 * thread of its own (SERVE_WAIT_ALLOWED) or, when lim.max_fetch_waiters
	 * requests wait already, where it is (SERVE_WAIT_NONE); the body is
	 * still there. */
	bool handoff;
};

struct serve_endpoint {
	const char *method;
	const char *path;             /* exact, or a prefix when it ends with '/' */
	const char *content_type;     /* NULL = any; else the request's must match */
	enum serve_endpoint_id id;
	/* Streaming body (uploads): called per chunk; return 0, or fill err and
	 * return -1 to refuse the request.  NULL = the core buffers the body, up
	 * to lim.max_body (413 from Content-Length before anything is read). */
	int (*on_body)(struct serve_request *rq, const char *data, size_t len, struct serve_reply *err);
	/* The whole request is in: answer it. */
	void (*handle)(struct serve_request *rq, struct serve_reply *out);
	/* Frees rq->state; called once per request, also for aborted ones. */
	void (*cleanup)(struct serve_request *rq);
	/* handle may wait for long (an upload waits for an indexer slot and
	 * its indexer run): it runs on a thread of its own while the
	 * connection is suspended, so the pool thread serves other requests.
	 * (A handler that only sometimes waits runs on the pool thread and
	 * hands itself off: serve_reply.handoff.) */
	bool async;
};

/* The routing table (serve_routes.c), ended by an entry with a NULL path. */
extern const struct serve_endpoint serve_endpoints[];

/* ---- images (serve_images.c) -------------------------------------------- */

/* The upload state of a server: a builder on srv->db_dir, the indexer slots
 * (lim.max_indexers) and the build-ids being indexed.  Called once at
 * start, before the listener; errbuf gets one line on failure. */
int serve_images_create(const struct serve_server *srv, struct serve_images **out, char *errbuf,
                        size_t errbuf_sz);
void serve_images_free(struct serve_images *im);
/* POST /v1/images: on_body, handle and cleanup of a streaming endpoint.
 * The first on_body call (len may be 0: the core may call it when the
 * headers are complete) refuses a Content-Length over lim.max_upload with
 * 413 before anything is written. */
int serve_images_upload_body(struct serve_request *rq, const char *data, size_t len,
                             struct serve_reply *err);
void serve_images_upload_handle(struct serve_request *rq, struct serve_reply *out);
void serve_images_upload_cleanup(struct serve_request *rq);
/* GET /v1/images/{id} and GET /v1/images/{id}/index (route "/v1/images/"
 * as a prefix); it sets rq->ep to SERVE_EP_IMAGES_INDEX for the latter. */
void serve_images_get_handle(struct serve_request *rq, struct serve_reply *out);
/* GET /symdb/v1/XX/HEX.symdb (route "/symdb/v1/" as a prefix): the upstream
 * store layout of SPEC §12.9, so that a symdb serve can be another node's
 * upstream exactly like a static server over an exported tree; the same
 * answer as GET /v1/images/HEX/index (rq->ep SERVE_EP_IMAGES_INDEX). */
void serve_images_store_handle(struct serve_request *rq, struct serve_reply *out);

/* ---- fetching unknown images (serve_fetch.c) ----------------------------- */

struct symdb_fetch_opts;

/*
 * The fetch state of a server: a builder on srv->db_dir, lim.max_fetches
 * worker threads and the build-ids being fetched or recently answered.
 * opts (and its strings) are copied.  Called once at start; errbuf gets
 * one line on failure.
 */
int serve_fetch_create(const struct serve_server *srv, const struct symdb_fetch_opts *opts,
                       struct serve_fetch **out, char *errbuf, size_t errbuf_sz);
/* Stops the workers and frees everything.  A fetch in progress is waited
 * for at most 1 s; past that its worker (and f) is left to the process's
 * exit.  NULL-safe; only when the server stops. */
void serve_fetch_free(struct serve_fetch *f);

/* What became of one id's fetch, as a request sees it. */
enum serve_fetch_outcome {
	SERVE_FETCH_PUBLISHED = 0, /* the image is in the database now: look again */
	SERVE_FETCH_ABSENT,        /* no source has it (remembered for the TTL) */
	SERVE_FETCH_FAILED,        /* a source failed (timeout, damaged download) */
	SERVE_FETCH_PENDING        /* still queued or running at until_ns */
};

/*
 * Starts the fetch of each ids[k] that is not being fetched already (one
 * fetch per id at a time: later requests join it) and waits until every
 * one has ended, or until until_ns (CLOCK_MONOTONIC), whichever is first.
 * An until_ns already past (0) waits for nothing: the fetches are started
 * or joined, and those not ended are PENDING (a request on a pool thread
 * looks so before it hands itself off, then calls again to wait).
 * out[k] and err[k] (the SYMDB_E_* / -errno of a failure, or 0) say what
 * became of ids[k]; why (NULL, or n buffers) gets a FAILED fetch's reason,
 * one line with any password in a URL masked, else "".  An id answered
 * absent within the TTL is ABSENT at once, without a fetch.
 * @note Thread-safe: any number of request threads.
 */
#define SERVE_FETCH_WHY 256
void serve_fetch_wait(struct serve_fetch *f, const symdb_uuid *ids, size_t n, uint64_t until_ns,
                      enum serve_fetch_outcome *out, int *err, char (*why)[SERVE_FETCH_WHY]);

/* ---- replies (serve_http.c) ---------------------------------------------- */

/* A JSON error reply: {"error": "REASON"} with the status; the reason (one
 * line, escaped) also goes to the access log. */
void serve_reply_error(struct serve_reply *out, unsigned status, const char *fmt, ...)
	CLI_PRINTF(3, 4);

/* 1 when s is 2..64 lowercase hex digits, an even number of them (a
 * build-id, LC_UUID or symdb fallback id as symdb prints it); else 0.
 * Checked before a name touches the catalog or the filesystem. */
int serve_hex_id_valid(const char *s, size_t len);

/* ---- the output buffer (serve_buf.c) ------------------------------------- */

/* Grows by doubling; on allocation failure it sets oom and drops further
 * output, so writers check once at the end. */
struct serve_buf {
	char *p;
	size_t len, cap;
	bool oom;
	uint64_t limit;               /* 0 = none; beyond it oom is set */
};

void serve_buf_put(struct serve_buf *b, const void *data, size_t n);
void serve_buf_str(struct serve_buf *b, const char *s);
void serve_buf_printf(struct serve_buf *b, const char *fmt, ...) CLI_PRINTF(2, 3);
/* s as a JSON string with its quotes: ", \ and control characters escaped
 * (\uXXXX), invalid UTF-8 bytes as \u00XX of the byte (so any name a binary
 * holds comes out as valid JSON). */
void serve_buf_json_str(struct serve_buf *b, const char *s, size_t n);
/* Hands the bytes to the caller (who frees them) and resets b. */
char *serve_buf_take(struct serve_buf *b, size_t *len);
/* serve_buf_json_str()'s escaping into raw memory, for a writer that
 * reserved the room itself: s (n bytes) as a JSON string with its quotes,
 * written at d, which has room for 6 * n + 2 bytes.  Returns the end.
 * Pure; thread-safe (serve_buf.c). */
char *serve_buf_json_raw(char *d, const char *s, size_t n);
void serve_buf_free(struct serve_buf *b);

/* ---- metrics (serve_metrics.c): thread-safe, lock-free counters ----------- */

int serve_metrics_create(struct serve_metrics **out);
void serve_metrics_free(struct serve_metrics *m);
/* One finished request: its endpoint, HTTP status, addresses, latency. */
void serve_metrics_request(struct serve_metrics *m, enum serve_endpoint_id ep, unsigned status,
                           uint64_t addresses, uint64_t latency_ns);
void serve_metrics_cache(struct serve_metrics *m, uint64_t hits, uint64_t misses);
/* Stack frames of one request, by where their answer came from: the
 * resolver, the stack cache, an equal earlier stack of the request, or
 * none, the request's deadline having passed before they were resolved
 * (answered "deadline").  Each call adds to the four counters. */
void serve_metrics_stack_frames(struct serve_metrics *m, uint64_t resolved, uint64_t cached,
                                uint64_t earlier, uint64_t deadline);
void serve_metrics_indexer(struct serve_metrics *m, bool ok);
/* One symdb_fetch() ended: its source (enum symdb_fetch_source) and return
 * code.  _running: +1 when a fetch starts, -1 when it ends (a gauge). */
void serve_metrics_fetch(struct serve_metrics *m, int source, int rc);
void serve_metrics_fetch_running(struct serve_metrics *m, int delta);
/* Modules of a request answered "pending". */
void serve_metrics_pending(struct serve_metrics *m, uint64_t modules);
/* GET /metrics (Prometheus text 0.0.4) and GET /healthz. */
void serve_metrics_handle(struct serve_request *rq, struct serve_reply *out);
void serve_healthz_handle(struct serve_request *rq, struct serve_reply *out);

#endif /* SYMDB_SERVE_H */
