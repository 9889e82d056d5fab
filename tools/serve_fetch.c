/* SPDX-License-Identifier: MIT */
/*
 * serve_fetch.c - `symdb serve` fetching the images it does not hold
 * (serve.h, "fetching unknown images"): a request that names an unknown
 * build-id hands it to a fixed set of worker threads, which call
 * symdb_fetch() (upstream index stores, then debuginfod) and publish into
 * the server's database, and waits for it no longer than its budget.
 *
 * Why threads of our own rather than SYMDB_SYMBOLIZER_FETCH: a fetch may
 * take up to its timeout (seconds), and a request must not.  The request
 * waits for at most its budget and answers the modules still being fetched
 * "pending"; the fetch goes on, and a later request finds the image in the
 * catalog.  Three rules keep a fleet's upstream from a storm:
 *  - one fetch per id at a time: every request for an id that is queued or
 *    running joins it (an entry per id, under one mutex);
 *  - at most lim.max_fetches fetches at once (that many workers; the rest
 *    wait in a FIFO queue);
 *  - answers are remembered here too: "no source has it" for the negative
 *    TTL (as in DB/misses/, but without a file lookup per request), a
 *    failure (timeout, damaged download) for FAILED_KEEP_NS, so that a
 *    broken source is not asked again by every request, and a publication
 *    for PUBLISHED_KEEP_NS, so that a request that missed the image in the
 *    catalog just before it was published joins the finished fetch instead
 *    of starting another one.
 * Entries are forgotten lazily: a lookup drops the expired entries of its
 * hash chain that no request holds.
 */
#define _GNU_SOURCE /* PATH_MAX */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "symdb_url.h"
#include "serve_core.h"
#include "symdb_build.h"
#include "symdb_fetch.h"

#define FETCH_BUCKETS 4096u
/* Entries remembered at most; past it a new id is not fetched (FAILED,
 * -EAGAIN) until expired entries make room. */
#define FETCH_MAX_ENTRIES 65536u
#define PUBLISHED_KEEP_NS (60ull * 1000000000ull)
#define FAILED_KEEP_NS (2ull * 1000000000ull)

enum entry_state { E_QUEUED, E_RUNNING, E_DONE };

struct fetch_entry {
	struct fetch_entry *chain;        /* the hash bucket */
	struct fetch_entry *qnext;        /* the queue, while E_QUEUED */
	symdb_uuid id;
	enum entry_state state;
	enum serve_fetch_outcome outcome; /* E_DONE */
	int err;                          /* E_DONE: symdb_fetch()'s code */
	char why[SERVE_FETCH_WHY];        /* E_DONE, FAILED: its reason, passwords masked */
	uint64_t expires_ns;              /* E_DONE: forgotten after this */
	uint64_t checked_ns;              /* ABSENT: DB/misses/HEX last looked at */
	bool miss_file;                   /* ABSENT: DB/misses/HEX was there then (not
	                                     when it could not be written: ENOSPC, a
	                                     read-only database) */
	uint32_t refs;                    /* requests waiting on it: not freed */
};

struct serve_fetch {
	symdb_builder *b;
	symdb_fetch_opts opts;            /* strings below; errbuf per fetch */
	symdb_build_opts build;
	char *upstreams, *debuginfod_urls, *debuginfod_cache;
	char *proxy[4]; /* http, https, all, no (symdb_fetch_opts) */
	char fetcher[PATH_MAX];
	char indexer[PATH_MAX];
	struct serve_metrics *metrics;
	uint64_t negative_ttl_ns;
	char misses[PATH_MAX];            /* DB/misses */
	pthread_mutex_t mu;
	pthread_cond_t work;              /* the queue got an entry, or stop */
	pthread_cond_t done;              /* CLOCK_MONOTONIC: a fetch ended */
	struct fetch_entry *buckets[FETCH_BUCKETS];
	size_t nentries;
	struct fetch_entry *qhead, *qtail;
	bool stop;
	volatile sig_atomic_t cancel; /* the fetches in progress stop (opts.cancel) */
	pthread_t *threads;
	uint32_t nthreads;
};

/* ---- the table -------------------------------------------------------------- */

static size_t bucket_of(const symdb_uuid *id)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a: ids are already random bytes */
	for (uint8_t i = 0; i < id->len; i++)
		h = (h ^ id->bytes[i]) * 1099511628211ull;
	return (size_t)(h & (FETCH_BUCKETS - 1));
}

static bool same_id(const symdb_uuid *a, const symdb_uuid *b)
{
	return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

/* id's entry, or NULL; drops the chain's expired entries nobody holds.
 * Under f->mu. */
static struct fetch_entry *entry_find(struct serve_fetch *f, const symdb_uuid *id, uint64_t now)
{
	struct fetch_entry **pp = &f->buckets[bucket_of(id)], *found = NULL;
	while (*pp) {
		struct fetch_entry *e = *pp;
		if (e->state == E_DONE && !e->refs && now >= e->expires_ns) {
			*pp = e->chain;
			free(e);
			f->nentries--;
			continue;
		}
		if (same_id(&e->id, id))
			found = e;
		pp = &e->chain;
	}
	return found;
}

static void enqueue(struct serve_fetch *f, struct fetch_entry *e)
{
	e->state = E_QUEUED;
	e->qnext = NULL;
	if (f->qtail)
		f->qtail->qnext = e;
	else
		f->qhead = e;
	f->qtail = e;
	pthread_cond_signal(&f->work);
}

/* Whether DB/misses/HEX of id is there. */
static bool miss_file_there(const struct serve_fetch *f, const symdb_uuid *id)
{
	char hex[2 * SYMDB_UUID_MAX + 1], path[PATH_MAX + 2 * SYMDB_UUID_MAX + 2];
	struct stat st;

	if (!f->misses[0])
		return false;
	symdb_uuid_format(id, hex);
	snprintf(path, sizeof path, "%s/%s", f->misses, hex);
	return lstat(path, &st) == 0;
}

/* How often a remembered "no source has it" looks whether its
 * DB/misses/HEX is still there. */
#define MISS_CHECK_NS (1000000000ull)

/*
 * An ABSENT answer held in memory is forgotten once DB/misses/HEX is gone
 * (README: `rm DB/misses/HEX` forgets it, and `symdb gc` does; `symdb
 * query` on the same database then asks again at once): looked at once a
 * MISS_CHECK_NS per id at most, not per request.  Under f->mu.
 */
static void absent_recheck(struct serve_fetch *f, struct fetch_entry *e, uint64_t now)
{
	if (e->state != E_DONE || e->outcome != SERVE_FETCH_ABSENT || now >= e->expires_ns ||
	    now - e->checked_ns < MISS_CHECK_NS || !f->misses[0] || !e->miss_file)
		return;
	e->checked_ns = now;
	if (!miss_file_there(f, &e->id) && errno == ENOENT)
		e->expires_ns = now;
}

/* id's entry, a fetch queued for it unless one is queued, running or
 * answered recently.  NULL when the table is full or out of memory.
 * Under f->mu. */
static struct fetch_entry *entry_claim(struct serve_fetch *f, const symdb_uuid *id, uint64_t now)
{
	struct fetch_entry *e = entry_find(f, id, now);
	if (e) {
		absent_recheck(f, e, now);
		/* expired but held by a waiting request: fetch again */
		if (e->state == E_DONE && now >= e->expires_ns)
			enqueue(f, e);
		return e;
	}
	if (f->nentries >= FETCH_MAX_ENTRIES || !(e = calloc(1, sizeof(*e))))
		return NULL;
	e->id = *id;
	size_t h = bucket_of(id);
	e->chain = f->buckets[h];
	f->buckets[h] = e;
	f->nentries++;
	enqueue(f, e);
	return e;
}

/* ---- the workers -------------------------------------------------------------- */

/* One symdb_fetch() of id, outside the lock.  A failure other than "no
 * source has it" gets one line on stderr: the operator's only sign of a
 * broken source (the requests just say "unknown_image"). */
static int fetch_one(struct serve_fetch *f, const symdb_uuid *id, int *source, char *eb,
                     size_t ebsz)
{
	symdb_fetch_opts o = f->opts;
	o.errbuf = eb;
	o.errbuf_sz = ebsz;
	eb[0] = '\0';
	SYMDB_OPTS(symdb_fetch_result, res);
	int rc = symdb_fetch(f->b, id, &o, &res);
	*source = res.source;
	/* (the library masks the passwords of the URLs it names; its reason
	 * goes to clients: masked here again whoever wrote it) */
	symdb_url_mask(eb, ebsz);
	if (rc && rc != SYMDB_E_NOT_FOUND && rc != -EINTR) { /* (-EINTR: the server stops) */
		char hex[2 * SYMDB_UUID_MAX + 1];
		symdb_uuid_format(id, hex);
		cli_err(NULL, "serve: fetching %s: %s", hex, eb[0] ? eb : symdb_strerror(rc));
	}
	return rc;
}

static void entry_finish(struct serve_fetch *f, struct fetch_entry *e, int rc, const char *eb)
{
	uint64_t now = serve_now_ns();
	e->state = E_DONE;
	e->err = rc;
	e->why[0] = '\0';
	if (rc && rc != SYMDB_E_NOT_FOUND) { /* (masked by fetch_one; cut to fit) */
		size_t n = strnlen(eb, sizeof e->why - 1);
		memcpy(e->why, eb, n);
		e->why[n] = '\0';
	}
	if (rc == 0) {
		e->outcome = SERVE_FETCH_PUBLISHED;
		e->expires_ns = now + PUBLISHED_KEEP_NS;
	} else if (rc == SYMDB_E_NOT_FOUND) {
		e->outcome = SERVE_FETCH_ABSENT;
		e->expires_ns = now + f->negative_ttl_ns;
		e->checked_ns = now;
		e->miss_file = miss_file_there(f, &e->id);
	} else {
		e->outcome = SERVE_FETCH_FAILED;
		e->expires_ns = now + FAILED_KEEP_NS;
	}
}

static void *fetch_worker(void *arg)
{
	struct serve_fetch *f = arg;
	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (!f->stop && !f->qhead)
			pthread_cond_wait(&f->work, &f->mu);
		if (f->stop)
			break;
		struct fetch_entry *e = f->qhead;
		f->qhead = e->qnext;
		if (!f->qhead)
			f->qtail = NULL;
		e->state = E_RUNNING; /* never freed while running */
		symdb_uuid id = e->id;
		serve_metrics_fetch_running(f->metrics, 1);
		pthread_mutex_unlock(&f->mu);
		int source = 0;
		char eb[600];
		int rc = fetch_one(f, &id, &source, eb, sizeof eb);
		pthread_mutex_lock(&f->mu);
		/* A stopped server may have freed its metrics already (see
		 * serve_fetch_free): touch nothing but f. */
		if (f->stop)
			break;
		serve_metrics_fetch_running(f->metrics, -1);
		serve_metrics_fetch(f->metrics, source, rc);
		entry_finish(f, e, rc, eb);
		pthread_cond_broadcast(&f->done);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

/* ---- waiting ----------------------------------------------------------------- */

static bool all_done(struct fetch_entry *const *held, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (held[k] && held[k]->state != E_DONE)
			return false;
	return true;
}

static void wait_until(struct serve_fetch *f, uint64_t until_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ns / 1000000000u),
		               .tv_nsec = (long)(until_ns % 1000000000u) };
	pthread_cond_timedwait(&f->done, &f->mu, &ts);
}

void serve_fetch_wait(struct serve_fetch *f, const symdb_uuid *ids, size_t n, uint64_t until_ns,
                      enum serve_fetch_outcome *out, int *err, char (*why)[SERVE_FETCH_WHY])
{
	for (size_t k = 0; why && k < n; k++)
		why[k][0] = '\0';
	struct fetch_entry **held = calloc(n ? n : 1, sizeof(*held));
	if (!held) {
		for (size_t k = 0; k < n; k++) {
			out[k] = SERVE_FETCH_FAILED;
			err[k] = -ENOMEM;
		}
		return;
	}
	pthread_mutex_lock(&f->mu);
	uint64_t now = serve_now_ns();
	for (size_t k = 0; k < n; k++)
		if ((held[k] = entry_claim(f, &ids[k], now)))
			held[k]->refs++;
	while (!all_done(held, n) && serve_now_ns() < until_ns)
		wait_until(f, until_ns);
	for (size_t k = 0; k < n; k++) {
		struct fetch_entry *e = held[k];
		if (!e) {
			out[k] = SERVE_FETCH_FAILED;
			err[k] = -EAGAIN;
			continue;
		}
		out[k] = e->state == E_DONE ? e->outcome : SERVE_FETCH_PENDING;
		err[k] = e->state == E_DONE ? e->err : 0;
		if (why && out[k] == SERVE_FETCH_FAILED)
			snprintf(why[k], SERVE_FETCH_WHY, "%s", e->why);
		e->refs--;
	}
	pthread_mutex_unlock(&f->mu);
	free(held);
}

/* ---- create / free ------------------------------------------------------------- */

/* NAME beside this executable (a build tree runs its own helpers, as the
 * CLI does), or "" for the installed one. */
static void beside_self(const char *name, char *buf, size_t sz)
{
	ssize_t n = readlink("/proc/self/exe", buf, sz - 1);
	char *slash;
	buf[n > 0 && (size_t)n < sz - 1 ? n : 0] = 0;
	if (n <= 0 || (size_t)n >= sz - 1 || !(slash = strrchr(buf, '/')) ||
	    (size_t)(slash + 1 - buf) + strlen(name) + 1 > sz) {
		buf[0] = 0;
		return;
	}
	strcpy(slash + 1, name);
	if (access(buf, X_OK) != 0)
		buf[0] = 0;
}

static int dup_str(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	return (*out = strdup(s)) ? 0 : -ENOMEM;
}

/* f's copy of opts: every string its own, the helpers found. */
static int copy_opts(struct serve_fetch *f, const symdb_fetch_opts *opts)
{
	f->opts = *opts;
	f->opts.errbuf = NULL;
	f->opts.errbuf_sz = 0;
	if (dup_str(opts->upstreams, &f->upstreams) ||
	    dup_str(opts->debuginfod_urls, &f->debuginfod_urls) ||
	    dup_str(opts->debuginfod_cache, &f->debuginfod_cache))
		return -ENOMEM;
	const char *proxy[4] = { opts->http_proxy, opts->https_proxy, opts->all_proxy,
		                 opts->no_proxy };
	for (int i = 0; i < 4; i++)
		if (dup_str(proxy[i], &f->proxy[i]))
			return -ENOMEM;
	f->opts.upstreams = f->upstreams;
	f->opts.debuginfod_urls = f->debuginfod_urls;
	f->opts.debuginfod_cache = f->debuginfod_cache;
	f->opts.http_proxy = f->proxy[0];
	f->opts.https_proxy = f->proxy[1];
	f->opts.all_proxy = f->proxy[2];
	f->opts.no_proxy = f->proxy[3];
	f->opts.cancel = &f->cancel;
	if (opts->fetcher_path)
		snprintf(f->fetcher, sizeof(f->fetcher), "%s", opts->fetcher_path);
	else
		beside_self("symdb-fetch", f->fetcher, sizeof(f->fetcher));
	f->opts.fetcher_path = f->fetcher[0] ? f->fetcher : NULL;
	SYMDB_OPTS(symdb_build_opts, bo);
	f->build = opts->build ? *opts->build : bo;
	f->build.errbuf = NULL;
	f->build.errbuf_sz = 0;
	if (!f->build.indexer_path) {
		beside_self("symdb-indexer", f->indexer, sizeof(f->indexer));
		f->build.indexer_path = f->indexer[0] ? f->indexer : NULL;
	}
	f->opts.build = &f->build;
	uint32_t ttl = opts->negative_ttl_s ? opts->negative_ttl_s : 600;
	f->negative_ttl_ns = (uint64_t)ttl * 1000000000u;
	return 0;
}

static int init_sync(struct serve_fetch *f)
{
	pthread_condattr_t ca;
	if (pthread_mutex_init(&f->mu, NULL))
		return -ENOMEM;
	if (pthread_cond_init(&f->work, NULL) || pthread_condattr_init(&ca))
		return -ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(&f->done, &ca);
	pthread_condattr_destroy(&ca);
	return rc ? -ENOMEM : 0;
}

/* The workers, with every signal blocked: serve_main.c takes SIGTERM,
 * SIGINT and SIGHUP with sigwait in its own thread only. */
static int start_workers(struct serve_fetch *f, uint32_t n)
{
	if (!(f->threads = calloc(n, sizeof(*f->threads))))
		return -ENOMEM;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = 0;
	for (; f->nthreads < n; f->nthreads++)
		if ((rc = pthread_create(&f->threads[f->nthreads], NULL, fetch_worker, f)) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc ? -rc : 0;
}

int serve_fetch_create(const struct serve_server *srv, const symdb_fetch_opts *opts,
                       struct serve_fetch **out, char *errbuf, size_t errbuf_sz)
{
	struct serve_fetch *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->metrics = srv->metrics;
	if ((size_t)snprintf(f->misses, sizeof f->misses, "%s/misses", srv->db_dir) >=
	    sizeof f->misses)
		f->misses[0] = '\0'; /* (never looked at then) */
	int rc = init_sync(f);
	if (rc == 0)
		rc = copy_opts(f, opts);
	if (rc == 0) {
		SYMDB_OPTS(symdb_build_opts, bo, .errbuf = errbuf, .errbuf_sz = errbuf_sz);
		rc = symdb_builder_open(srv->db_dir, &bo, &f->b);
	}
	if (rc == 0)
		rc = start_workers(f, srv->lim.max_fetches ? srv->lim.max_fetches : 1);
	if (rc) {
		if (rc == -ENOMEM || !errbuf[0])
			snprintf(errbuf, errbuf_sz, "%s", symdb_strerror(rc));
		serve_fetch_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

/* A stopping server does not wait for a fetch in progress (up to its
 * timeout: 30 s by default): a worker still busy after STOP_WAIT_NS is left
 * running, and f with it, for the moment the process needs to exit. */
#define STOP_WAIT_NS (1000000000ull)

static bool join_workers(struct serve_fetch *f)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts); /* pthread_timedjoin_np's clock */
	uint64_t until = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + STOP_WAIT_NS;
	ts.tv_sec = (time_t)(until / 1000000000u);
	ts.tv_nsec = (long)(until % 1000000000u);
	bool all = true;
	for (uint32_t i = 0; i < f->nthreads; i++)
		if (pthread_timedjoin_np(f->threads[i], NULL, &ts) != 0) {
			pthread_detach(f->threads[i]);
			all = false;
		}
	return all;
}

void serve_fetch_free(struct serve_fetch *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->stop = true;
	pthread_cond_broadcast(&f->work);
	pthread_mutex_unlock(&f->mu);
	/* A fetch in progress stops within about 100 ms and removes what it
	 * wrote in DB/tmp, instead of leaving it to `symdb gc`. */
	__atomic_store_n(&f->cancel, 1, __ATOMIC_RELAXED);
	if (!join_workers(f))
		return;
	free(f->threads);
	for (size_t h = 0; h < FETCH_BUCKETS; h++)
		while (f->buckets[h]) {
			struct fetch_entry *e = f->buckets[h];
			f->buckets[h] = e->chain;
			free(e);
		}
	symdb_builder_close(f->b);
	free(f->upstreams);
	free(f->debuginfod_urls);
	free(f->debuginfod_cache);
	for (int i = 0; i < 4; i++)
		free(f->proxy[i]);
	pthread_cond_destroy(&f->done);
	pthread_cond_destroy(&f->work);
	pthread_mutex_destroy(&f->mu);
	free(f);
}
