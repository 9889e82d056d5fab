/* SPDX-License-Identifier: MIT */
/*
 * The server's counters and their two readers, GET /metrics (Prometheus
 * text format 0.0.4) and GET /healthz.  Every counter is a relaxed atomic:
 * a request thread adds to it without a lock, and /metrics reads each one
 * on its own (a scrape is not a snapshot; Prometheus does not need one).
 * Every label value comes from a fixed table in this file (endpoint names
 * from enum serve_endpoint_id, HTTP status from status_codes[], histogram
 * bounds, cut reasons), never from request data: an attacker can neither
 * inject text into the exposition nor grow the number of series.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "serve_core.h"
#include "symdb_fetch.h"

/* The statuses the server sends; anything else counts as "other", and a
 * request that got no answer (the client went away) as "none". */
static const unsigned status_codes[] = { 200, 201, 400, 404, 405, 408, 411, 413, 415,
                                         422, 429, 431, 500, 503, 504 };
static const char *const status_names[] = { "200", "201", "400", "404", "405", "408", "411", "413",
                                            "415", "422", "429", "431", "500", "503", "504" };
#define NSTATUS (sizeof(status_codes) / sizeof(status_codes[0]))
_Static_assert(sizeof(status_names) / sizeof(status_names[0]) == NSTATUS, "one name per status");
#define ST_OTHER NSTATUS
#define ST_NONE (NSTATUS + 1)
#define NSTATUS_ALL (NSTATUS + 2)

static const char *const endpoint_names[SERVE_EP_COUNT] = {
	[SERVE_EP_SYMBOLIZE_JSON] = "symbolize_json", [SERVE_EP_SYMBOLIZE_BINARY] = "symbolize_binary",
	[SERVE_EP_IMAGES_UPLOAD] = "images_upload",   [SERVE_EP_IMAGES_GET] = "images_get",
	[SERVE_EP_IMAGES_INDEX] = "images_index",     [SERVE_EP_HEALTHZ] = "healthz",
	[SERVE_EP_METRICS] = "metrics",               [SERVE_EP_OTHER] = "other",
};

static const char *const cut_names[SERVE_CUT_COUNT] = {
	[SERVE_CUT_HEADER_TIMEOUT] = "header_timeout",
	[SERVE_CUT_BODY_TIMEOUT] = "body_timeout",
};

/* symdb_serve_fetches_total{source,result}: where a fetch's answer came
 * from (enum symdb_fetch_source) and what it was. */
static const char *const fetch_sources[] = { "none", "upstream", "debuginfod", "negative_cache" };
#define NFETCH_SOURCE (sizeof(fetch_sources) / sizeof(fetch_sources[0]))
enum { FR_OK, FR_NOT_FOUND, FR_TIMEOUT, FR_DAMAGED, FR_ERROR, NFETCH_RESULT };
static const char *const fetch_results[NFETCH_RESULT] = {
	[FR_OK] = "ok", [FR_NOT_FOUND] = "not_found", [FR_TIMEOUT] = "timeout",
	[FR_DAMAGED] = "damaged", [FR_ERROR] = "error",
};

/* Latency buckets' upper bounds, in microseconds and as printed. */
static const uint64_t bucket_us[] = { 100,    250,    500,     1000,    2500,    5000,
                                      10000,  25000,  50000,   100000,  250000,  500000,
                                      1000000, 2500000, 5000000, 10000000, 30000000 };
static const char *const bucket_le[] = { "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005",
                                         "0.01",   "0.025",   "0.05",   "0.1",   "0.25",   "0.5",
                                         "1",      "2.5",     "5",      "10",    "30" };
#define NBUCKET (sizeof(bucket_us) / sizeof(bucket_us[0]))

struct serve_metrics {
	_Atomic uint64_t requests[SERVE_EP_COUNT][NSTATUS_ALL];
	_Atomic uint64_t addresses[SERVE_EP_COUNT];
	_Atomic uint64_t latency[SERVE_EP_COUNT][NBUCKET + 1]; /* last: +Inf only */
	_Atomic uint64_t latency_sum_ns[SERVE_EP_COUNT];
	_Atomic uint64_t cache_hits, cache_misses;
	_Atomic uint64_t stack_frames[4];    /* frame_sources order */
	_Atomic uint64_t indexer_runs, indexer_failures;
	_Atomic int64_t connections, inflight;
	_Atomic uint64_t cut[SERVE_CUT_COUNT];
	_Atomic uint64_t fetches[NFETCH_SOURCE][NFETCH_RESULT];
	_Atomic int64_t fetches_running;
	_Atomic uint64_t pending_modules;
};

#define RELAXED memory_order_relaxed

int serve_metrics_create(struct serve_metrics **out)
{
	struct serve_metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return -1;
	*out = m;
	return 0;
}

void serve_metrics_free(struct serve_metrics *m)
{
	free(m);
}

static size_t status_index(unsigned status)
{
	if (status == 0)
		return ST_NONE;
	for (size_t i = 0; i < NSTATUS; i++)
		if (status_codes[i] == status)
			return i;
	return ST_OTHER;
}

const char *serve_metrics_status_label(unsigned status)
{
	size_t i = status_index(status);
	if (i == ST_NONE)
		return "none";
	if (i == ST_OTHER)
		return "other";
	return status_names[i];
}

void serve_metrics_request(struct serve_metrics *m, enum serve_endpoint_id ep, unsigned status,
                           uint64_t addresses, uint64_t latency_ns)
{
	if ((unsigned)ep >= SERVE_EP_COUNT)
		ep = SERVE_EP_OTHER;
	atomic_fetch_add_explicit(&m->requests[ep][status_index(status)], 1, RELAXED);
	atomic_fetch_add_explicit(&m->addresses[ep], addresses, RELAXED);
	uint64_t us = latency_ns / 1000;
	size_t b = 0;
	while (b < NBUCKET && us > bucket_us[b])
		b++;
	atomic_fetch_add_explicit(&m->latency[ep][b], 1, RELAXED);
	atomic_fetch_add_explicit(&m->latency_sum_ns[ep], latency_ns, RELAXED);
}

void serve_metrics_cache(struct serve_metrics *m, uint64_t hits, uint64_t misses)
{
	atomic_fetch_add_explicit(&m->cache_hits, hits, RELAXED);
	atomic_fetch_add_explicit(&m->cache_misses, misses, RELAXED);
}

/* The label values of symdb_serve_stack_frames_total{source}. */
static const char *const frame_sources[4] = { "resolved", "cache", "earlier_stack", "deadline" };

void serve_metrics_stack_frames(struct serve_metrics *m, uint64_t resolved, uint64_t cached,
                                uint64_t earlier, uint64_t deadline)
{
	atomic_fetch_add_explicit(&m->stack_frames[0], resolved, RELAXED);
	atomic_fetch_add_explicit(&m->stack_frames[1], cached, RELAXED);
	atomic_fetch_add_explicit(&m->stack_frames[2], earlier, RELAXED);
	atomic_fetch_add_explicit(&m->stack_frames[3], deadline, RELAXED);
}

void serve_metrics_indexer(struct serve_metrics *m, bool ok)
{
	atomic_fetch_add_explicit(&m->indexer_runs, 1, RELAXED);
	if (!ok)
		atomic_fetch_add_explicit(&m->indexer_failures, 1, RELAXED);
}

static size_t fetch_result_of(int rc)
{
	switch (rc) {
	case 0: return FR_OK;
	case SYMDB_E_NOT_FOUND: return FR_NOT_FOUND;
	case -ETIMEDOUT: return FR_TIMEOUT;
	case SYMDB_E_CHECKSUM:
	case SYMDB_E_CORRUPT:
	case SYMDB_E_FORMAT:
	case SYMDB_E_VERSION:
	case SYMDB_E_BAD_OBJECT: return FR_DAMAGED;
	default: return FR_ERROR;
	}
}

void serve_metrics_fetch(struct serve_metrics *m, int source, int rc)
{
	size_t s = source >= 0 && (size_t)source < NFETCH_SOURCE ? (size_t)source : 0;
	atomic_fetch_add_explicit(&m->fetches[s][fetch_result_of(rc)], 1, RELAXED);
}

void serve_metrics_fetch_running(struct serve_metrics *m, int delta)
{
	atomic_fetch_add_explicit(&m->fetches_running, delta, RELAXED);
}

void serve_metrics_pending(struct serve_metrics *m, uint64_t modules)
{
	atomic_fetch_add_explicit(&m->pending_modules, modules, RELAXED);
}

void serve_metrics_conn(struct serve_metrics *m, int delta)
{
	atomic_fetch_add_explicit(&m->connections, delta, RELAXED);
}

void serve_metrics_inflight(struct serve_metrics *m, int delta)
{
	atomic_fetch_add_explicit(&m->inflight, delta, RELAXED);
}

void serve_metrics_cut(struct serve_metrics *m, enum serve_cut_reason r)
{
	atomic_fetch_add_explicit(&m->cut[r], 1, RELAXED);
}

/* ---- the exposition -------------------------------------------------------- */

/* A growing text buffer; on allocation failure it sets oom and stops. */
struct text {
	char *p;
	size_t len, cap;
	int oom;
};

static void text_printf(struct text *t, const char *fmt, ...) CLI_PRINTF(2, 3);
static void text_printf(struct text *t, const char *fmt, ...)
{
	for (int pass = 0; pass < 2 && !t->oom; pass++) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->p ? t->p + t->len : NULL, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = 1;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap : 4096;
		while (cap - t->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(t->p, cap);
		if (!p) {
			t->oom = 1;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
}

static uint64_t load(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, RELAXED);
}

static void head(struct text *t, const char *name, const char *type, const char *help)
{
	text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_requests(struct text *t, struct serve_metrics *m)
{
	head(t, "symdb_serve_requests_total", "counter",
	     "Requests by endpoint and HTTP status (none: the client left before the answer).");
	for (size_t e = 0; e < SERVE_EP_COUNT; e++)
		for (size_t s = 0; s < NSTATUS_ALL; s++) {
			uint64_t v = load(&m->requests[e][s]);
			if (!v)
				continue;
			const char *label = s == ST_NONE    ? "none"
			                    : s == ST_OTHER ? "other"
			                                    : status_names[s];
			text_printf(t, "symdb_serve_requests_total{endpoint=\"%s\",status=\"%s\"} %llu\n",
			            endpoint_names[e], label, (unsigned long long)v);
		}
	head(t, "symdb_serve_addresses_total", "counter", "Addresses answered, by endpoint.");
	for (size_t e = 0; e < SERVE_EP_COUNT; e++)
		text_printf(t, "symdb_serve_addresses_total{endpoint=\"%s\"} %llu\n", endpoint_names[e],
		            (unsigned long long)load(&m->addresses[e]));
}

static void put_latency(struct text *t, struct serve_metrics *m)
{
	const char *n = "symdb_serve_request_duration_seconds";
	head(t, n, "histogram", "Time from the end of a request's headers to its answer.");
	for (size_t e = 0; e < SERVE_EP_COUNT; e++) {
		uint64_t cum = 0;
		for (size_t b = 0; b <= NBUCKET; b++) {
			cum += load(&m->latency[e][b]);
			text_printf(t, "%s_bucket{endpoint=\"%s\",le=\"%s\"} %llu\n", n, endpoint_names[e],
			            b < NBUCKET ? bucket_le[b] : "+Inf", (unsigned long long)cum);
		}
		uint64_t sum = load(&m->latency_sum_ns[e]);
		text_printf(t, "%s_sum{endpoint=\"%s\"} %llu.%09llu\n", n, endpoint_names[e],
		            (unsigned long long)(sum / 1000000000u), (unsigned long long)(sum % 1000000000u));
		text_printf(t, "%s_count{endpoint=\"%s\"} %llu\n", n, endpoint_names[e],
		            (unsigned long long)cum);
	}
}

static void put_one(struct text *t, const char *name, const char *type, const char *help,
                    long long v)
{
	head(t, name, type, help);
	text_printf(t, "%s %lld\n", name, v);
}

static void put_rest(struct text *t, struct serve_metrics *m)
{
	put_one(t, "symdb_serve_stack_cache_hits_total", "counter", "Stacks answered from the cache.",
	        (long long)load(&m->cache_hits));
	put_one(t, "symdb_serve_stack_cache_misses_total", "counter",
	        "Stacks resolved and offered to the cache.", (long long)load(&m->cache_misses));
	head(t, "symdb_serve_stack_frames_total", "counter",
	     "Stack frames by where their answer came from: resolved, the stack cache, an "
	     "equal earlier stack of the same request, or none (the request's deadline passed "
	     "first).");
	for (size_t i = 0; i < 4; i++)
		text_printf(t, "symdb_serve_stack_frames_total{source=\"%s\"} %llu\n", frame_sources[i],
		            (unsigned long long)load(&m->stack_frames[i]));
	put_one(t, "symdb_serve_indexer_runs_total", "counter", "symdb-indexer runs for uploads.",
	        (long long)load(&m->indexer_runs));
	put_one(t, "symdb_serve_indexer_failures_total", "counter",
	        "symdb-indexer runs that published nothing.", (long long)load(&m->indexer_failures));
	put_one(t, "symdb_serve_connections", "gauge", "Open client connections.",
	        (long long)atomic_load_explicit(&m->connections, RELAXED));
	put_one(t, "symdb_serve_requests_in_flight", "gauge",
	        "Requests between the end of their headers and their answer.",
	        (long long)atomic_load_explicit(&m->inflight, RELAXED));
	head(t, "symdb_serve_connections_cut_total", "counter",
	     "Connections shut down by a deadline, by which one.");
	for (size_t r = 0; r < SERVE_CUT_COUNT; r++)
		text_printf(t, "symdb_serve_connections_cut_total{reason=\"%s\"} %llu\n", cut_names[r],
		            (unsigned long long)load(&m->cut[r]));
}

/* Every (source, result) pair, zeros included: a fixed set of series. */
static void put_fetches(struct text *t, struct serve_metrics *m)
{
	head(t, "symdb_serve_fetches_total", "counter",
	     "Fetches of unknown images (--upstream, --debuginfod) by where the answer came from "
	     "and what it was.");
	for (size_t s = 0; s < NFETCH_SOURCE; s++)
		for (size_t r = 0; r < NFETCH_RESULT; r++)
			text_printf(t, "symdb_serve_fetches_total{source=\"%s\",result=\"%s\"} %llu\n",
			            fetch_sources[s], fetch_results[r],
			            (unsigned long long)load(&m->fetches[s][r]));
	put_one(t, "symdb_serve_fetches_running", "gauge", "Fetches in progress.",
	        (long long)atomic_load_explicit(&m->fetches_running, RELAXED));
	put_one(t, "symdb_serve_modules_pending_total", "counter",
	        "Modules answered \"pending\": still being fetched when their request's fetch "
	        "budget ran out.",
	        (long long)load(&m->pending_modules));
}

/* Index files of the database mapped by this process, counted from
 * /proc/self/maps (distinct inodes under DB/images/): whatever part of the
 * server opened them, and without a counter to keep in step. */
static long images_mapped(const char *db_dir)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	char prefix[4200];
	int pn = snprintf(prefix, sizeof(prefix), "%s/images/", db_dir);
	unsigned long long seen[512];
	size_t nseen = 0;
	long count = 0;
	char line[4600];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ino = 0;
		int path_at = 0;
		if (sscanf(line, "%*s %*s %*s %*s %llu %n", &ino, &path_at) < 1 || !path_at)
			continue;
		if (pn <= 0 || (size_t)pn >= sizeof(prefix) || strncmp(line + path_at, prefix, (size_t)pn))
			continue;
		size_t i = 0;
		while (i < nseen && seen[i] != ino)
			i++;
		if (i < nseen)
			continue;
		if (nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = ino;
		count++;
	}
	fclose(f);
	return count;
}

/* The server's CPU time from getrusage(2) (microseconds, all threads):
 * what a benchmark reads before and after a run to get the server's CPU
 * without a 10 ms clock, and what an operator graphs. */
static void put_cpu(struct text *t)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return;
	head(t, "symdb_serve_cpu_seconds_total", "counter",
	     "CPU time of the server process (getrusage), by mode.");
	text_printf(t, "symdb_serve_cpu_seconds_total{mode=\"user\"} %lld.%06ld\n",
	            (long long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
	text_printf(t, "symdb_serve_cpu_seconds_total{mode=\"system\"} %lld.%06ld\n",
	            (long long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
}

void serve_metrics_handle(struct serve_request *rq, struct serve_reply *out)
{
	struct serve_metrics *m = rq->srv->metrics;
	struct text t = { 0 };
	put_requests(&t, m);
	put_latency(&t, m);
	put_rest(&t, m);
	put_fetches(&t, m);
	put_cpu(&t);
	long mapped = images_mapped(rq->srv->db_dir);
	if (mapped >= 0)
		put_one(&t, "symdb_serve_images_mapped", "gauge",
		        "Index files of the database mapped by the server.", mapped);
	if (t.oom) {
		free(t.p);
		serve_reply_error(out, 500, "out of memory");
		return;
	}
	out->status = 200;
	out->content_type = "text/plain; version=0.0.4; charset=utf-8";
	out->body = t.p;
	out->len = t.len;
}

void serve_healthz_handle(struct serve_request *rq, struct serve_reply *out)
{
	(void)rq;
	static const char ok[] = "ok\n";
	out->body = malloc(sizeof(ok) - 1);
	if (!out->body) {
		serve_reply_error(out, 500, "out of memory");
		return;
	}
	memcpy(out->body, ok, sizeof(ok) - 1);
	out->len = sizeof(ok) - 1;
	out->status = 200;
	out->content_type = "text/plain; charset=utf-8";
}
