/* SPDX-License-Identifier: MIT */
/*
 * The HTTP core of `symdb serve`, on libmicrohttpd (0.9.75, Debian 12):
 * the listener (TCP, [v6], unix:), the daemon's thread pool, routing by
 * serve_endpoints[], request bodies (buffered with a size limit decided
 * from Content-Length before a byte is read, or streamed to an endpoint's
 * on_body), the cap on requests in flight (503 + Retry-After), the header
 * and body deadlines, graceful shutdown and the access log.
 *
 * Deadlines.  libmicrohttpd's MHD_OPTION_CONNECTION_TIMEOUT is an
 * inactivity timeout: every byte that arrives restarts it, so a client that
 * sends its headers one byte a second holds a connection (and a slot of the
 * connection limit) for ever.  The header and body deadlines are therefore
 * kept here: every connection is tracked from MHD_CONNECTION_NOTIFY_STARTED
 * to MHD_CONNECTION_NOTIFY_CLOSED in a list with an absolute deadline, and a
 * reaper thread shutdown(2)s the socket of a connection past its deadline.
 * The daemon's thread then reads EOF and closes the connection the normal
 * way, with every callback; the reaper never close(2)s, which would race
 * with the daemon's own use of the descriptor.  Nor can the reaper hit a
 * reused descriptor number: libmicrohttpd calls NOTIFY_CLOSED before it
 * closes the socket (daemon.c, MHD_cleanup_connections and the failure path
 * of internal_add_connection: the notify, then MHD_socket_close_chk_), and
 * the callback unlinks the connection under the same mutex the reaper holds
 * while it calls shutdown, so the reaper only ever sees open descriptors.
 * (Seen under strace with Debian's 0.9.75: shutdown(13) from the reaper,
 * the callback's log write, close(13) from the daemon, then an accept4
 * that returns 13 again.)
 * A client that stops reading its answer makes no progress either: the
 * inactivity timeout (idle_timeout_s) closes it.
 *
 * Async endpoints (uploads: an indexer slot, then an indexer run that may
 * take minutes).  Run on a pool thread, two of them would stop the default
 * two threads from answering anyone.  So their handle runs on a thread of
 * its own while the connection is suspended (MHD_ALLOW_SUSPEND_RESUME;
 * a suspended connection neither times out nor is read, and libmicrohttpd
 * calls on_request again once it is resumed, where the answer is queued).
 * libmicrohttpd requires every suspended connection to be resumed before
 * MHD_stop_daemon, so serve_http_stop waits for these threads (each is
 * bounded by the request's deadline for a slot and by the indexer's own
 * time limit for its run).
 *
 * Handed-off requests (a symbolize request naming an image being fetched:
 * it may wait up to --fetch-budget-ms).  Most requests never wait, and
 * a thread per request would cost them, so such a handler runs on the pool
 * thread and, when it finds it would have to wait, gives up without an
 * answer (serve_reply.handoff).  It then runs again the async way, on a
 * thread of its own, allowed to wait.  At most lim.max_fetch_waiters
 * requests wait so; past that, handle runs again at once on the pool
 * thread, told not to wait (its images still being fetched are "pending"),
 * and so it does once the server is stopping.  serve_http_stop waits for
 * these threads too: each is bounded by the fetch budget.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "serve_core.h"

#define NS_PER_MS 1000000ull

uint64_t serve_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- replies ---------------------------------------------------------------- */

void serve_reply_error(struct serve_reply *out, unsigned status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	for (char *p = out->reason; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	free(out->body);
	out->body = NULL;
	out->len = 0;
	if (out->fd >= 0)
		close(out->fd);
	out->fd = -1;
	out->status = status;
	out->content_type = "application/json";
	/* A reason may quote the request: its UTF-8 goes out as is, stray
	 * bytes and control characters escaped (serve_buf_json_raw). */
	size_t rlen = strlen(out->reason);
	char *body = malloc(6 * rlen + 2 + 12);
	if (!body)
		return; /* the status alone still goes out */
	memcpy(body, "{\"error\":", 9);
	char *end = serve_buf_json_raw(body + 9, out->reason, rlen);
	memcpy(end, "}\n", 2);
	out->len = (size_t)(end + 2 - body);
	out->body = body;
}

int serve_hex_id_valid(const char *s, size_t len)
{
	if (len < 2 || len > 64 || len % 2)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* ---- state ------------------------------------------------------------------ */

/* One client connection, from NOTIFY_STARTED to NOTIFY_CLOSED. */
struct sconn {
	struct sconn *prev, *next;       /* in serve_http.conns, under mu */
	int fd;                          /* valid while linked (see the top) */
	_Atomic uint64_t deadline_ns;    /* 0 = none (a request is being answered) */
	_Atomic int deadline_kind;       /* enum serve_cut_reason */
	_Atomic int cut;                 /* 1 + the reason it was shut down; 0 = not */
	bool cut_logged;                 /* a request's log line told of the cut */
	char peer[64];
};

/* One request, from its request line to the end of its answer. */
struct sreq {
	struct serve_request rq;
	const struct serve_endpoint *ep;
	struct sconn *sc;
	char *raw_uri;                   /* as the client sent it, query included */
	char method[24];
	char ctype[96];
	char *buf;                       /* a buffered body */
	size_t cap;
	uint64_t limit, received;
	bool started, counted, replied, refused;
	bool body_pending;               /* the request announced a body */
	bool async_started;              /* an async handle runs or ran (under amu) */
	bool async_done;                 /* ... and finished: async_out is its answer */
	bool suspended;                  /* the connection is suspended for it */
	bool waiter;                     /* handed off: counted in fetch_waiters (under amu) */
	struct serve_reply async_out;
	struct MHD_Connection *conn;     /* for the async thread's resume */
	struct serve_http *h;
	struct serve_reply refusal;      /* refused: sent when the body ends */
	const char *allow;               /* a 405's Allow header (route()) */
	unsigned status;
	uint64_t addresses;
	char reason[200];
};

struct serve_http {
	struct serve_server *srv;
	struct MHD_Daemon *d;
	struct serve_listener *l;
	atomic_bool stopping;
	atomic_int inflight;
	pthread_mutex_t mu;              /* conns, reaper_stop */
	pthread_cond_t cv;
	struct sconn *conns;
	bool reaper_stop;
	pthread_t reaper;
	uint64_t tick_ns;
	pthread_mutex_t amu;             /* async_running, fetch_waiters, sreq async fields */
	pthread_cond_t acv;              /* async_running dropped */
	unsigned async_running;          /* async handle threads alive */
	unsigned fetch_waiters;          /* of them, handed-off requests not yet answered */
};

/* ---- the access log --------------------------------------------------------- */

/* Bytes outside printable ASCII, '"' and (unless space_ok) the space as
 * \xNN, a backslash as \\: a request can neither break the line nor forge
 * a field. */
static size_t log_escape(char *dst, size_t cap, const char *s, size_t n, size_t max_in,
                         bool space_ok)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i = 0;
	for (; i < n && i < max_in && o + 5 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\') {
			dst[o++] = '\\';
			dst[o++] = '\\';
		} else if (c < 0x20 || c >= 0x7f || c == '"' || (c == ' ' && !space_ok)) {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		} else {
			dst[o++] = (char)c;
		}
	}
	if (i < n && o + 4 < cap) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = 0;
	return o;
}

static void log_line(struct serve_http *h, const char *peer, const char *method, const char *uri,
                     const char *status, uint64_t addresses, uint64_t us, const char *reason)
{
	if (h->srv->log_fd < 0)
		return;
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	char m[100], u[4 * 2048 + 8], r[4 * 200 + 8], line[sizeof(u) + sizeof(r) + 400];
	log_escape(m, sizeof(m), method, strlen(method), 24, false);
	log_escape(u, sizeof(u), uri, strlen(uri), 2048, false);
	log_escape(r, sizeof(r), reason, strlen(reason), 200, true);
	int n = snprintf(line, sizeof(line),
	                 "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ peer=%s method=%s path=%s status=%s "
	                 "addresses=%llu us=%llu%s%s%s\n",
	                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	                 ts.tv_nsec / 1000, peer, m, u, status, (unsigned long long)addresses,
	                 (unsigned long long)us, *r ? " reason=\"" : "", r, *r ? "\"" : "");
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* One write per line on an O_APPEND descriptor: lines of concurrent
	 * requests never interleave. */
	ssize_t w = write(h->srv->log_fd, line, (size_t)n);
	(void)w;
}

/* ---- connections and the reaper ----------------------------------------------- */

static void format_peer(const struct sockaddr *sa, char *buf, size_t bufsz)
{
	char a[INET6_ADDRSTRLEN];
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, bufsz, "%s:%u", a, ntohs(s4->sin_port));
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, bufsz, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		snprintf(buf, bufsz, "unix");
	}
}

static void set_deadline(struct sconn *sc, uint64_t at, enum serve_cut_reason kind)
{
	if (!sc)
		return;
	atomic_store(&sc->deadline_kind, (int)kind);
	atomic_store(&sc->deadline_ns, at);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct serve_http *h = cls;
	struct sconn *sc = *socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		sc = calloc(1, sizeof(*sc));
		if (!sc) {
			/* Untracked, it would escape the deadlines: end it now. */
			if (fi)
				shutdown(fi->connect_fd, SHUT_RDWR);
			return;
		}
		sc->fd = fi ? fi->connect_fd : -1;
		format_peer(ai ? ai->client_addr : NULL, sc->peer, sizeof(sc->peer));
		set_deadline(sc, serve_now_ns() + h->srv->lim.header_timeout_ms * NS_PER_MS,
		             SERVE_CUT_HEADER_TIMEOUT);
		pthread_mutex_lock(&h->mu);
		sc->next = h->conns;
		if (h->conns)
			h->conns->prev = sc;
		h->conns = sc;
		pthread_mutex_unlock(&h->mu);
		*socket_context = sc;
		serve_metrics_conn(h->srv->metrics, 1);
		return;
	}
	if (!sc)
		return;
	pthread_mutex_lock(&h->mu);
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		h->conns = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	pthread_mutex_unlock(&h->mu);
	int cut = atomic_load(&sc->cut);
	/* A connection cut before it sent a whole request line has no request
	 * to log it; say what happened to it anyway. */
	if (cut && !sc->cut_logged)
		log_line(h, sc->peer, "-", "-", "-", 0, 0,
		         cut - 1 == SERVE_CUT_HEADER_TIMEOUT ? "header deadline passed"
		                                             : "body deadline passed");
	serve_metrics_conn(h->srv->metrics, -1);
	free(sc);
	*socket_context = NULL;
}

static void *reaper_main(void *arg)
{
	struct serve_http *h = arg;
	pthread_mutex_lock(&h->mu);
	while (!h->reaper_stop) {
		uint64_t now = serve_now_ns();
		for (struct sconn *sc = h->conns; sc; sc = sc->next) {
			uint64_t d = atomic_load(&sc->deadline_ns);
			if (!d || now < d || atomic_load(&sc->cut))
				continue;
			int kind = atomic_load(&sc->deadline_kind);
			atomic_store(&sc->cut, kind + 1);
			shutdown(sc->fd, SHUT_RDWR);
			serve_metrics_cut(h->srv->metrics, (enum serve_cut_reason)kind);
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + h->tick_ns;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&h->cv, &h->mu, &ts);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* ---- requests ----------------------------------------------------------------- */

static struct sconn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static struct sreq *sreq_new(struct serve_http *h, struct MHD_Connection *c, const char *uri)
{
	struct sreq *sr = calloc(1, sizeof(*sr));
	if (!sr)
		return NULL;
	sr->raw_uri = strdup(uri ? uri : "");
	char *q = sr->raw_uri ? strchr(sr->raw_uri, '?') : NULL;
	char *path = sr->raw_uri ? strndup(sr->raw_uri, q ? (size_t)(q - sr->raw_uri) : strlen(sr->raw_uri)) : NULL;
	if (!path) {
		free(sr->raw_uri);
		free(sr);
		return NULL;
	}
	sr->rq.raw_path = path;
	sr->rq.srv = h->srv;
	sr->rq.ep = SERVE_EP_OTHER;
	sr->sc = conn_of(c);
	return sr;
}

static void sreq_free(struct sreq *sr)
{
	if (sr->refused && !sr->replied)
		free(sr->refusal.body);
	if (sr->async_done && !sr->replied) { /* the client left meanwhile */
		free(sr->async_out.body);
		if (sr->async_out.fd >= 0)
			close(sr->async_out.fd);
	}
	free((char *)sr->rq.raw_path);
	free(sr->raw_uri);
	free(sr->buf);
	free(sr);
}

/* MHD_OPTION_URI_LOG_CALLBACK: the request line is in.  The URI as sent
 * (before percent-decoding) is kept for the %2e checks and the log. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	return sreq_new(cls, c, uri);
}

static void refuse(struct sreq *sr, struct serve_reply *err);

/* Hands r to libmicrohttpd (which frees the body and closes the fd). */
static enum MHD_Result send_reply(struct serve_http *h, struct MHD_Connection *c, struct sreq *sr,
                                  struct serve_reply *r, bool close_after)
{
	struct MHD_Response *resp;
	if (r->fd >= 0) {
		free(r->body);
		r->body = NULL;
		resp = MHD_create_response_from_fd64(r->fd_len, r->fd);
		if (!resp)
			close(r->fd);
	} else if (r->body) {
		resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
		if (!resp)
			free(r->body);
	} else {
		resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	}
	r->fd = -1;
	r->body = NULL;
	sr->replied = true;
	sr->status = r->status;
	sr->addresses = r->addresses;
	snprintf(sr->reason, sizeof(sr->reason), "%s", r->reason);
	if (!resp) {
		sr->status = 0;
		snprintf(sr->reason, sizeof(sr->reason), "out of memory for the answer");
		return MHD_NO;
	}
	if (r->content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
	if (r->allow)
		MHD_add_response_header(resp, "Allow", r->allow);
	if (r->retry_after) {
		char ra[16];
		snprintf(ra, sizeof(ra), "%u", r->retry_after);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	}
	if (close_after)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ok = MHD_queue_response(c, r->status, resp);
	MHD_destroy_response(resp);
	if (ok != MHD_YES) {
		sr->status = 0;
		snprintf(sr->reason, sizeof(sr->reason), "answer not sent: %.150s", r->reason);
	}
	(void)h;
	return ok;
}

static enum MHD_Result reply_error(struct serve_http *h, struct MHD_Connection *c, struct sreq *sr,
                                   unsigned status, unsigned retry_after, const char *fmt, ...)
	CLI_PRINTF(6, 7);
static enum MHD_Result reply_error(struct serve_http *h, struct MHD_Connection *c, struct sreq *sr,
                                   unsigned status, unsigned retry_after, const char *fmt, ...)
{
	struct serve_reply r = { .fd = -1 };
	char reason[sizeof(r.reason)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	serve_reply_error(&r, status, "%s", reason);
	r.retry_after = retry_after;
	r.allow = status == 405 ? sr->allow : NULL;
	/* With a body announced, the error goes out now, before a byte of the
	 * body is read, and the connection ends after it (the rest of the body
	 * is not worth reading).  Without one, it goes out on the call that
	 * ends the request: libmicrohttpd closes the connection after an
	 * answer queued while it still expects a body, and a client that gets
	 * a 404 or a 503 should keep its connection. */
	if (!sr->body_pending) {
		refuse(sr, &r);
		return MHD_YES;
	}
	return send_reply(h, c, sr, &r, true);
}

/* The endpoint for method and path, or NULL with the status to answer
 * (*allow: the methods the path takes, for a 405's Allow header).  HEAD is
 * a GET whose body libmicrohttpd does not send (RFC 9110 §9.3.2). */
static const struct serve_endpoint *route(const char *method, const char *path, const char *ctype,
                                          unsigned *status, const char **allow)
{
	bool path_hit = false, method_hit = false, get = false, post = false;
	bool head = !strcmp(method, "HEAD");
	for (const struct serve_endpoint *e = serve_endpoints; e->path; e++) {
		size_t n = strlen(e->path);
		bool match = e->path[n - 1] == '/' ? strncmp(path, e->path, n) == 0
		                                   : strcmp(path, e->path) == 0;
		if (!match)
			continue;
		path_hit = true;
		get |= !strcmp(e->method, "GET");
		post |= !strcmp(e->method, "POST");
		if (strcmp(method, e->method) && !(head && !strcmp(e->method, "GET")))
			continue;
		method_hit = true;
		if (!e->content_type || (ctype && !strcmp(ctype, e->content_type)))
			return e;
	}
	*status = method_hit ? 415 : path_hit ? 405 : 404;
	*allow = get && post ? "GET, HEAD, POST" : get ? "GET, HEAD" : post ? "POST" : NULL;
	return NULL;
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* The request's media type: Content-Type up to ';', trimmed, lower case. */
static const char *media_type(struct MHD_Connection *c, char *buf, size_t bufsz)
{
	const char *v = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!v)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = 0;
	for (; v[n] && v[n] != ';' && n + 1 < bufsz; n++)
		buf[n] = (char)(v[n] >= 'A' && v[n] <= 'Z' ? v[n] + 32 : v[n]);
	while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = 0;
	return buf;
}

/* The announced body length: 1 with *n, or 0 when there is none (no
 * header, or a chunked body). */
static int content_length(struct MHD_Connection *c, uint64_t *n)
{
	const char *te = header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	const char *cl = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
	*n = 0;
	if (te || !cl)
		return 0;
	/* libmicrohttpd has already refused a Content-Length that is not a
	 * number (400). */
	*n = strtoull(cl, NULL, 10);
	return 1;
}

/* Content-Length headers seen: how many, and whether they differ. */
struct lengths {
	unsigned n;
	const char *first;
	bool differ;
};

static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	struct lengths *l = cls;
	(void)kind;
	if (!key || strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		return MHD_YES;
	if (l->n++ == 0)
		l->first = value;
	else if (!value || !l->first || strcmp(value, l->first))
		l->differ = true;
	return MHD_YES;
}

/*
 * What RFC 9112 makes a client error, which libmicrohttpd lets through:
 * Content-Length headers that disagree (§6.3: a proxy in front may have
 * framed the body by another one, the start of request smuggling), and an
 * HTTP/1.1 request without a Host header (§3.2).  NULL, or the reason.
 */
static const char *framing_error(struct MHD_Connection *c, const char *version)
{
	struct lengths l = { 0, NULL, false };
	MHD_get_connection_values(c, MHD_HEADER_KIND, count_length, &l);
	if (l.differ)
		return "Content-Length headers that differ";
	if (version && !strcmp(version, MHD_HTTP_VERSION_1_1) && !header(c, MHD_HTTP_HEADER_HOST))
		return "an HTTP/1.1 request without a Host header";
	return NULL;
}

/* The headers are in: count the request, route it, refuse it early. */
static enum MHD_Result first_call(struct serve_http *h, struct MHD_Connection *c, struct sreq *sr,
                                  const char *url, const char *method, const char *version)
{
	const struct serve_limits *lim = &h->srv->lim;
	struct serve_request *rq = &sr->rq;
	sr->started = true;
	snprintf(sr->method, sizeof(sr->method), "%s", method);
	rq->method = method;
	rq->path = url;
	rq->content_type = media_type(c, sr->ctype, sizeof(sr->ctype));
	rq->has_length = content_length(c, &rq->content_length);
	sr->body_pending = header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	                   (rq->has_length && rq->content_length > 0);
	rq->start_ns = serve_now_ns();
	rq->deadline_ns = rq->start_ns + lim->deadline_ms * NS_PER_MS;
	set_deadline(sr->sc, rq->start_ns + lim->body_timeout_ms * NS_PER_MS, SERVE_CUT_BODY_TIMEOUT);

	if (atomic_load(&h->stopping))
		return reply_error(h, c, sr, 503, 1, "shutting down");
	const char *bad = framing_error(c, version);
	if (bad) { /* (the body's framing is in doubt: the connection ends) */
		sr->body_pending = true;
		return reply_error(h, c, sr, 400, 0, "%s", bad);
	}
	if ((unsigned)atomic_fetch_add(&h->inflight, 1) >= lim->max_concurrent) {
		atomic_fetch_sub(&h->inflight, 1);
		return reply_error(h, c, sr, 503, 1, "too many requests in flight (limit %u)",
		                   lim->max_concurrent);
	}
	sr->counted = true;
	serve_metrics_inflight(h->srv->metrics, 1);

	unsigned status = 0;
	sr->ep = route(method, url, rq->content_type, &status, &sr->allow);
	if (!sr->ep)
		return reply_error(h, c, sr, status,
		                   0, status == 404 ? "no such endpoint"
		                      : status == 405 ? "method not allowed here"
		                                      : "unsupported Content-Type");
	rq->ep = sr->ep->id;
	sr->limit = sr->ep->on_body ? lim->max_upload : lim->max_body;
	/* 413 before a byte of the body is read: libmicrohttpd sends the
	 * answer instead of "100 Continue" and then closes the connection. */
	if (rq->has_length && rq->content_length > sr->limit)
		return reply_error(h, c, sr, 413, 0, "body of %llu bytes is over the limit of %llu",
		                   (unsigned long long)rq->content_length,
		                   (unsigned long long)sr->limit);
	return MHD_YES;
}

/* Appends data to the buffered body (sr->received bytes so far). */
static int buffer_body(struct sreq *sr, const char *data, size_t n)
{
	uint64_t have = sr->received - n;
	if (sr->cap - have < n) {
		uint64_t want = sr->cap ? sr->cap : 65536;
		while (want - have < n)
			want *= 2;
		/* Never more than the announced length or the limit. */
		uint64_t most = sr->rq.has_length ? sr->rq.content_length : sr->limit;
		if (want > most)
			want = most;
		if (want < have + n)
			return -1;
		char *p = realloc(sr->buf, (size_t)want);
		if (!p)
			return -1;
		sr->buf = p;
		sr->cap = (size_t)want;
	}
	memcpy(sr->buf + have, data, n);
	return 0;
}

/* A refusal decided in the middle of a body: libmicrohttpd 0.9.75 accepts a
 * response only once the body is complete (MHD_queue_response fails in
 * between), so the rest is read and dropped and the refusal is sent at its
 * end.  A body that runs on past twice its limit is not worth draining:
 * the connection is closed without an answer.  The body deadline bounds
 * both. */
static void refuse(struct sreq *sr, struct serve_reply *err)
{
	sr->refusal = *err;
	sr->refused = true;
}

static enum MHD_Result on_data(struct serve_http *h, struct MHD_Connection *c, struct sreq *sr,
                               const char *data, size_t *size)
{
	size_t n = *size;
	*size = 0;
	(void)h;
	(void)c;
	sr->received += n;
	if (sr->refused) {
		if (sr->received / 2 > sr->limit) {
			snprintf(sr->reason, sizeof(sr->reason), "%.150s; closed after %llu bytes",
			         sr->refusal.reason, (unsigned long long)sr->received);
			free(sr->refusal.body);
			sr->refusal.body = NULL;
			return MHD_NO;
		}
		return MHD_YES;
	}
	struct serve_reply err = { .fd = -1 };
	if (sr->received > sr->limit) {
		serve_reply_error(&err, 413, "body is over the limit of %llu bytes",
		                  (unsigned long long)sr->limit);
		refuse(sr, &err);
	} else if (sr->ep->on_body) {
		if (sr->ep->on_body(&sr->rq, data, n, &err) < 0) {
			if (!err.status)
				serve_reply_error(&err, 400, "body refused");
			refuse(sr, &err);
		}
	} else if (buffer_body(sr, data, n) < 0) {
		serve_reply_error(&err, 500, "out of memory for the body");
		refuse(sr, &err);
	}
	return MHD_YES;
}

/* The thread of one async handle: it answers, then resumes the connection
 * (on_request is called again and sends the answer).  It touches sr only
 * before it resumes: the request may end and be freed right after. */
static void *async_main(void *arg)
{
	struct sreq *sr = arg;
	struct serve_http *h = sr->h;
	struct MHD_Connection *c = sr->conn;
	sr->ep->handle(&sr->rq, &sr->async_out);
	pthread_mutex_lock(&h->amu);
	if (sr->waiter)
		h->fetch_waiters--;
	sr->async_done = true;
	bool resume = sr->suspended;
	sr->suspended = false;
	pthread_mutex_unlock(&h->amu);
	/* Outside amu: no lock of ours is held across a libmicrohttpd call
	 * but the suspend in async_start. */
	if (resume)
		MHD_resume_connection(c);
	pthread_mutex_lock(&h->amu);
	h->async_running--; /* only now may serve_http_stop stop the daemon */
	pthread_cond_broadcast(&h->acv);
	pthread_mutex_unlock(&h->amu);
	return NULL;
}

/* Starts sr's handle on a thread of its own and suspends the connection:
 * 1 when started (the answer comes on a later call), 0 when no thread
 * could be had (the caller runs handle itself, as before).  waiter: a
 * handed-off request, one of at most lim.max_fetch_waiters. */
static int async_start(struct serve_http *h, struct MHD_Connection *c, struct sreq *sr,
                       bool waiter)
{
	pthread_attr_t a;
	pthread_t t;
	int rc = -1;
	sr->h = h;
	sr->conn = c;
	sr->async_out = (struct serve_reply){ .fd = -1 };
	if (pthread_attr_init(&a))
		return 0;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	/* Under amu the thread cannot reach its resume before the
	 * connection is suspended. */
	pthread_mutex_lock(&h->amu);
	enum serve_wait was = sr->rq.wait;
	sr->rq.wait = SERVE_WAIT_ALLOWED;
	/* A stopping server starts no thread, an upload's neither:
	 * serve_http_stop sets the flag, then waits under amu for the threads
	 * there are, and would miss one started after that (it would resume
	 * its connection on a stopped daemon).  The handle then runs here. */
	if (!atomic_load(&h->stopping) &&
	    (!waiter || h->fetch_waiters < h->srv->lim.max_fetch_waiters))
		rc = pthread_create(&t, &a, async_main, sr);
	if (rc) {
		sr->rq.wait = was;
	} else {
		h->async_running++;
		h->fetch_waiters += waiter;
		sr->waiter = waiter;
		sr->async_started = true;
		sr->suspended = true;
		MHD_suspend_connection(c);
	}
	pthread_mutex_unlock(&h->amu);
	pthread_attr_destroy(&a);
	return rc == 0;
}

static enum MHD_Result finish(struct serve_http *h, struct MHD_Connection *c, struct sreq *sr)
{
	if (sr->async_started) {
		pthread_mutex_lock(&h->amu);
		bool done = sr->async_done;
		pthread_mutex_unlock(&h->amu);
		if (!done)
			return MHD_YES; /* not resumed by it yet: nothing to send */
		if (!sr->async_out.status)
			serve_reply_error(&sr->async_out, 500, "the endpoint gave no answer");
		return send_reply(h, c, sr, &sr->async_out, atomic_load(&h->stopping));
	}
	set_deadline(sr->sc, 0, SERVE_CUT_BODY_TIMEOUT);
	if (sr->refused)
		return send_reply(h, c, sr, &sr->refusal,
		                  sr->body_pending || atomic_load(&h->stopping));
	struct serve_request *rq = &sr->rq;
	if (!sr->ep->on_body) {
		rq->body = sr->buf ? sr->buf : "";
		rq->body_len = (size_t)sr->received;
	}
	if (sr->ep->async && async_start(h, c, sr, false))
		return MHD_YES;
	struct serve_reply out = { .fd = -1 };
	sr->ep->handle(rq, &out);
	if (out.handoff) {
		/* It would wait: on a thread of its own, or here without
		 * waiting when lim.max_fetch_waiters requests wait already. */
		assert(!out.status && !out.body && out.fd < 0);
		if (async_start(h, c, sr, true))
			return MHD_YES;
		rq->wait = SERVE_WAIT_NONE;
		out = (struct serve_reply){ .fd = -1 };
		sr->ep->handle(rq, &out);
	}
	if (!out.status)
		serve_reply_error(&out, 500, "the endpoint gave no answer");
	return send_reply(h, c, sr, &out, atomic_load(&h->stopping));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
	struct serve_http *h = cls;
	struct sreq *sr = *con_cls;
	if (!sr) {
		sr = sreq_new(h, c, url);
		if (!sr)
			return MHD_NO;
		*con_cls = sr;
	}
	if (!sr->started)
		return first_call(h, c, sr, url, method, version);
	if (sr->replied) {
		*size = 0; /* an error is queued: the rest is dropped */
		return MHD_YES;
	}
	if (*size)
		return on_data(h, c, sr, data, size);
	return finish(h, c, sr);
}

static const char *termination_name(enum MHD_RequestTerminationCode toe)
{
	switch (toe) {
	case MHD_REQUEST_TERMINATED_COMPLETED_OK: return "";
	case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "idle timeout";
	case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "server stopped";
	case MHD_REQUEST_TERMINATED_READ_ERROR: return "connection lost while reading";
	case MHD_REQUEST_TERMINATED_CLIENT_ABORT: return "client closed the connection";
	default: return "connection error";
	}
}

/* MHD_OPTION_NOTIFY_COMPLETED: the end of every request that reached
 * on_uri, answered or not. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct serve_http *h = cls;
	struct sreq *sr = *con_cls;
	if (!sr)
		return;
	*con_cls = NULL;
	uint64_t now = serve_now_ns();
	if (sr->ep && sr->ep->cleanup)
		sr->ep->cleanup(&sr->rq);
	if (sr->counted) {
		atomic_fetch_sub(&h->inflight, 1);
		serve_metrics_inflight(h->srv->metrics, -1);
	}
	unsigned status = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? sr->status : 0;
	const char *reason = sr->reason;
	if (!sr->replied) {
		/* libmicrohttpd answered it itself (431: headers too large; 400:
		 * malformed) before any handler saw it. */
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
		if (ci && ci->http_status >= 400) {
			status = ci->http_status;
			reason = "refused by the HTTP parser";
			serve_metrics_request(h->srv->metrics, SERVE_EP_OTHER, status, 0, 0);
		}
	}
	struct sconn *sc = sr->sc;
	int cut = sc ? atomic_load(&sc->cut) : 0;
	if (cut) {
		reason = cut - 1 == SERVE_CUT_HEADER_TIMEOUT ? "header deadline passed"
		                                             : "body deadline passed";
		sc->cut_logged = true;
	}
	else if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !*reason)
		reason = termination_name(toe);
	uint64_t us = sr->started ? (now - sr->rq.start_ns) / 1000 : 0;
	if (sr->started)
		serve_metrics_request(h->srv->metrics, sr->rq.ep, status, sr->addresses,
		                      now - sr->rq.start_ns);
	char st[8];
	snprintf(st, sizeof(st), "%u", status);
	log_line(h, sc ? sc->peer : "-", sr->started ? sr->method : "-", sr->raw_uri ? sr->raw_uri : "-",
	         status ? st : "-", sr->addresses, us, reason);
	if (sc) {
		/* The next request on this connection: its headers are due
		 * within the idle time plus the header time. */
		set_deadline(sc,
		             now + (uint64_t)h->srv->lim.idle_timeout_s * 1000 * NS_PER_MS +
		                     h->srv->lim.header_timeout_ms * NS_PER_MS,
		             SERVE_CUT_HEADER_TIMEOUT);
	}
	sreq_free(sr);
}

/* ---- the daemon ----------------------------------------------------------------- */

int serve_http_start(struct serve_server *srv, struct serve_listener *l,
                     const struct serve_http_opts *o, struct serve_http **out, char *err,
                     size_t errsz)
{
	struct serve_http *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	h->srv = srv;
	h->l = l;
	uint32_t shortest = srv->lim.header_timeout_ms < srv->lim.body_timeout_ms
	                            ? srv->lim.header_timeout_ms
	                            : srv->lim.body_timeout_ms;
	/* A deadline is enforced within a tenth of itself (5 ms .. 250 ms). */
	uint64_t tick = shortest / 10;
	h->tick_ns = (tick < 5 ? 5 : tick > 250 ? 250 : tick) * NS_PER_MS;
	pthread_mutex_init(&h->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_cond_init(&h->acv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&h->amu, NULL);
	if (pthread_create(&h->reaper, NULL, reaper_main, h)) {
		snprintf(err, errsz, "cannot start a thread");
		free(h);
		return -1;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TURBO |
	                 MHD_ALLOW_SUSPEND_RESUME;
	h->d = MHD_start_daemon(
		flags, 0, NULL, NULL, &on_request, h,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)l->fd,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)srv->lim.threads,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->lim.idle_timeout_s,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)o->max_connections,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)o->conn_memory,
		MHD_OPTION_URI_LOG_CALLBACK, &on_uri, h,
		MHD_OPTION_NOTIFY_COMPLETED, &on_completed, h,
		MHD_OPTION_NOTIFY_CONNECTION, &on_connection, h,
		MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errsz, "libmicrohttpd did not start (threads %u, connections %u)",
		         srv->lim.threads, o->max_connections);
		pthread_mutex_lock(&h->mu);
		h->reaper_stop = true;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->reaper, NULL);
		free(h);
		return -1;
	}
	*out = h;
	return 0;
}

void serve_http_stop(struct serve_http *h, uint32_t wait_ms)
{
	atomic_store(&h->stopping, true);
	/* No new connections: the listening socket comes back to us. */
	MHD_socket fd = MHD_quiesce_daemon(h->d);
	if (fd == MHD_INVALID_SOCKET)
		h->l->fd = -1; /* the daemon keeps it and closes it at its stop */
	serve_listen_close(h->l);
	uint64_t end = serve_now_ns() + wait_ms * NS_PER_MS;
	/* Every suspended connection must be resumed before MHD_stop_daemon:
	 * the async handles are waited for (each is bounded, see the top),
	 * then their answers get a moment to go out. */
	pthread_mutex_lock(&h->amu);
	while (h->async_running)
		pthread_cond_wait(&h->acv, &h->amu);
	pthread_mutex_unlock(&h->amu);
	if (end < serve_now_ns() + 1000 * NS_PER_MS)
		end = serve_now_ns() + 1000 * NS_PER_MS;
	while (atomic_load(&h->inflight) > 0 && serve_now_ns() < end) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(h->d);
	pthread_mutex_lock(&h->mu);
	h->reaper_stop = true;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->reaper, NULL);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->amu);
	pthread_cond_destroy(&h->acv);
	free(h);
}

/* ---- listeners ---------------------------------------------------------------- */

static bool addr_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			return true;
		return !memcmp(s6->sin6_addr.s6_addr, v4mapped, 12) && s6->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

static int listen_unix(const char *path, struct serve_listener *l, char *err, size_t errsz)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (!*path || strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errsz, "unix:%s: the socket path must have 1 to %zu bytes", path,
		         sizeof(sun.sun_path) - 1);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errsz, "%s: exists and is not a socket (not replaced)", path);
			return -1;
		}
		/* A socket file: replaced only when nobody listens on it (a
		 * server that died), never taken from a running one. */
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int live = probe >= 0 && connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0;
		if (probe >= 0)
			close(probe);
		if (live) {
			snprintf(err, errsz, "%s: a server is listening on this socket", path);
			return -1;
		}
		if (unlink(path) < 0) {
			snprintf(err, errsz, "%s: cannot remove the stale socket: %s", path, strerror(errno));
			return -1;
		}
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errsz, "unix:%s: socket: %s", path, strerror(errno));
		return -1;
	}
	/* Mode 0600 from the start: no window in which others may connect. */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	int e = errno;
	umask(old);
	if (rc < 0 || listen(fd, 511) < 0) {
		snprintf(err, errsz, "%s: %s: %s", path, rc < 0 ? "bind" : "listen", strerror(rc < 0 ? e : errno));
		close(fd);
		return -1;
	}
	if (lstat(path, &st) == 0) {
		l->unix_dev = (uint64_t)st.st_dev;
		l->unix_ino = (uint64_t)st.st_ino;
	}
	l->fd = fd;
	l->is_unix = true;
	l->loopback = true;
	snprintf(l->unix_path, sizeof(l->unix_path), "%s", path);
	snprintf(l->name, sizeof(l->name), "unix:%s", path);
	return 0;
}

static int listen_inet(const char *addr, struct serve_listener *l, char *err, size_t errsz)
{
	char host[128];
	const char *colon = strrchr(addr, ':');
	const char *h = addr;
	size_t hn = colon ? (size_t)(colon - addr) : 0;
	if (*addr == '[') {
		const char *close_br = strchr(addr, ']');
		if (!close_br || close_br[1] != ':') {
			snprintf(err, errsz, "%s: expected [IPV6]:PORT", addr);
			return -1;
		}
		h = addr + 1;
		hn = (size_t)(close_br - h);
		colon = close_br + 1;
	}
	if (!colon || !hn || hn >= sizeof(host)) {
		snprintf(err, errsz, "%s: expected HOST:PORT, [IPV6]:PORT or unix:/path", addr);
		return -1;
	}
	memcpy(host, h, hn);
	host[hn] = 0;
	char *end;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535 || colon[1] == '-' || colon[1] == '+') {
		snprintf(err, errsz, "%s: the port must be a number from 0 to 65535", addr);
		return -1;
	}
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	                          .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	int gai = getaddrinfo(host, colon + 1, &hints, &ai);
	if (gai) {
		snprintf(err, errsz, "%s: %s", host, gai_strerror(gai));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 511) < 0) {
		snprintf(err, errsz, "%s: %s", addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	l->loopback = addr_loopback(ai->ai_addr);
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	format_peer((struct sockaddr *)&ss, l->name, sizeof(l->name));
	l->fd = fd;
	return 0;
}

int serve_listen_open(const char *addr, struct serve_listener *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (!strncmp(addr, "unix:", 5))
		return listen_unix(addr + 5, out, err, errsz);
	return listen_inet(addr, out, err, errsz);
}

void serve_listen_close(struct serve_listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	/* Only the socket this server bound: a later server may have replaced
	 * a stale one at the same path. */
	struct stat st;
	if (l->is_unix && l->unix_path[0] && lstat(l->unix_path, &st) == 0 &&
	    (uint64_t)st.st_dev == l->unix_dev && (uint64_t)st.st_ino == l->unix_ino)
		unlink(l->unix_path);
	l->unix_path[0] = 0;
}
