/* SPDX-License-Identifier: MIT */
/*
 * The core of `symdb serve` between its own three files (serve_main.c,
 * serve_http.c, serve_metrics.c): the listener, the daemon's start and
 * stop, and the connection-level counters that only the core produces.
 * Endpoints never need this header: serve.h is their whole interface.
 */
#ifndef SYMDB_SERVE_CORE_H
#define SYMDB_SERVE_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve.h"

/* ---- the listener (serve_http.c) ----------------------------------------- */

struct serve_listener {
	int fd;                   /* bound and listening, O_CLOEXEC */
	bool loopback;            /* 127.0.0.0/8, ::1 or a unix socket */
	bool is_unix;
	char unix_path[108];      /* the socket file, unlinked at stop */
	uint64_t unix_dev, unix_ino; /* it, as bound: another one there is left alone */
	char name[160];           /* as the startup line prints it */
};

/* Parse ADDR ("HOST:PORT", "[V6]:PORT", "unix:/path"), then create, bind
 * and listen.  A unix: path that exists is replaced only when it is a
 * socket nobody listens on; the new socket file gets mode 0600.  Returns 0,
 * or -1 with a one-line reason in err. */
int serve_listen_open(const char *addr, struct serve_listener *out, char *err, size_t errsz);
void serve_listen_close(struct serve_listener *l);

/* ---- the daemon (serve_http.c) ------------------------------------------- */

struct serve_http;

struct serve_http_opts {
	uint32_t max_connections; /* open connections, idle ones included */
	uint32_t conn_memory;     /* libmicrohttpd's per-connection pool: bounds the headers */
};

/* Start libmicrohttpd's thread pool on l->fd (the daemon owns the fd from
 * then on, until serve_http_quiesce).  Returns 0 or -1 with err set. */
int serve_http_start(struct serve_server *srv, struct serve_listener *l,
                     const struct serve_http_opts *o, struct serve_http **out, char *err,
                     size_t errsz);
/* SIGTERM: stop accepting, answer 503 to requests that start from now on,
 * wait for the requests in flight (at most wait_ms), then stop. */
void serve_http_stop(struct serve_http *h, uint32_t wait_ms);

/* ---- metrics only the core produces (serve_metrics.c) --------------------- */

enum serve_cut_reason {
	SERVE_CUT_HEADER_TIMEOUT = 0, /* headers not complete by the header deadline */
	SERVE_CUT_BODY_TIMEOUT,       /* body not complete by the body deadline */
	SERVE_CUT_COUNT
};

void serve_metrics_conn(struct serve_metrics *m, int delta);     /* open connections */
void serve_metrics_inflight(struct serve_metrics *m, int delta); /* requests in flight */
void serve_metrics_cut(struct serve_metrics *m, enum serve_cut_reason r);
/* The fixed label of an HTTP status: "200"... or "other". */
const char *serve_metrics_status_label(unsigned status);

/* ---- time ---------------------------------------------------------------- */

uint64_t serve_now_ns(void); /* CLOCK_MONOTONIC */

#endif /* SYMDB_SERVE_CORE_H */
