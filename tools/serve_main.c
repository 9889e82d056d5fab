/* SPDX-License-Identifier: MIT */
/*
 * `symdb serve`: the command.  Parses the options into struct serve_limits
 * and the listener, opens the database once (shared by every thread),
 * starts the HTTP core (serve_http.c) and then waits for signals in the
 * main thread, which is the only thread that receives them (they are
 * blocked before any other thread starts):
 *   SIGTERM, SIGINT  graceful stop: no new connections, 503 for new
 *                    requests on open ones, the requests in flight finish
 *                    (for at most --deadline-ms; an upload being indexed
 *                    is waited for), exit 0; a second one during that
 *                    stop exits at once with status 1 (the requests still
 *                    in flight are abandoned, their indexers die with us)
 *   SIGHUP           reopens the --log FILE (for log rotation); nothing
 *                    else is re-read
 *   SIGPIPE          ignored (a client that hangs up is not fatal)
 *   SIGBUS           an index file truncated under the server (by another
 *                    process) damages that image only: cli_fault.c's
 *                    handler hands the fault to symdb_fault_recover(), the
 *                    request gets "damaged" for its addresses, and the
 *                    server keeps serving
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_fault.h"
#include "cli_fetch.h"
#include "cli_maint.h"
#include "cli_util.h"
#include "serve_batch.h"
#include "serve_cache.h"
#include "serve_core.h"
#include "symdb.h"
#include "symdb_build.h"
#include "symdb_fetch.h"

struct serve_cli {
	const char *listen;
	const char *log_path;        /* NULL or "-": stderr; "none": no log */
	const char *tmp_dir;
	const char *indexer;
	bool allow_paths;
	int verify; /* --verify 1, else 0: cli_verify_flag() */
	struct serve_limits lim;
	struct serve_http_opts http;
	struct cli_fetch fetch;       /* --upstream, --debuginfod, ... (cli_fetch.h) */
};

static void defaults(struct serve_cli *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	*o = (struct serve_cli){
		.listen = "127.0.0.1:8630",
		.lim = {
			.max_body = 64ull << 20,
			.max_upload = 2ull << 30,
			.max_modules = 1024,
			.max_addresses = 1000000,
			.max_stacks = 100000,
			.max_depth = 32,
			.deadline_ms = 30000,
			.max_concurrent = 64,
			.header_timeout_ms = 10000,
			.body_timeout_ms = 60000,
			.idle_timeout_s = 30,
			.max_indexers = 2,
			.threads = cpus < 2 ? 2 : cpus > 64 ? 64 : (uint32_t)cpus,
			.cache_bytes = 64ull << 20,
			.max_fetches = 4,
			.fetch_budget_ms = 2000,
			.max_fetch_waiters = 32,
		},
		.http = { .max_connections = 1024, .conn_memory = 32768 },
	};
	cli_fetch_init(&o->fetch);
}

enum kind { K_U32, K_SIZE, K_U64SIZE };

/* Options that set one number: name, where, its kind, its least value. */
struct numopt {
	const char *name;
	size_t off;
	enum kind kind;
	uint64_t min, max;
};

#define LIM(f) offsetof(struct serve_cli, lim.f)
static const struct numopt numopts[] = {
	{ "--max-body", LIM(max_body), K_U64SIZE, 1, UINT64_MAX },
	{ "--max-upload", LIM(max_upload), K_U64SIZE, 1, UINT64_MAX },
	{ "--max-modules", LIM(max_modules), K_U32, 1, UINT32_MAX },
	{ "--max-addresses", LIM(max_addresses), K_U32, 1, UINT32_MAX },
	{ "--max-stacks", LIM(max_stacks), K_U32, 1, UINT32_MAX },
	{ "--max-depth", LIM(max_depth), K_U32, 1, 10000 },
	{ "--deadline-ms", LIM(deadline_ms), K_U32, 1, 86400000 },
	{ "--max-concurrent", LIM(max_concurrent), K_U32, 1, 1000000 },
	{ "--header-timeout-ms", LIM(header_timeout_ms), K_U32, 1, 86400000 },
	{ "--body-timeout-ms", LIM(body_timeout_ms), K_U32, 1, 86400000 },
	{ "--idle-timeout", LIM(idle_timeout_s), K_U32, 1, 86400 },
	{ "--max-indexers", LIM(max_indexers), K_U32, 1, 1024 },
	{ "--threads", LIM(threads), K_U32, 1, 256 },
	{ "--cache-size", LIM(cache_bytes), K_U64SIZE, 0, UINT64_MAX },
	{ "--max-fetches", LIM(max_fetches), K_U32, 1, 256 },
	{ "--fetch-budget-ms", LIM(fetch_budget_ms), K_U32, 0, 86400000 },
	{ "--max-fetch-waiters", LIM(max_fetch_waiters), K_U32, 0, 100000 },
	{ "--max-connections", offsetof(struct serve_cli, http.max_connections), K_U32, 1, 1000000 },
	{ "--max-header-bytes", offsetof(struct serve_cli, http.conn_memory), K_SIZE, 4096, 1u << 24 },
};

/* 1 when argv[*i] was a numeric option (set), 0 when not one, -1 on error. */
static int number_option(struct serve_cli *o, int argc, char **argv, int *i)
{
	for (size_t k = 0; k < sizeof(numopts) / sizeof(numopts[0]); k++) {
		const struct numopt *n = &numopts[k];
		const char *v;
		int m = cli_opt_value(argc, argv, i, n->name, &v);
		if (m <= 0) {
			if (m < 0)
				return -1;
			continue;
		}
		uint64_t x;
		int bad = n->kind == K_U32 ? cli_parse_u64(v, strlen(v), &x) : cli_parse_size(v, &x);
		if (bad || x < n->min || x > n->max) {
			cli_err(NULL, "%s %s: expected a %s from %llu to %llu", n->name, v,
			        n->kind == K_U32 ? "number" : "size", (unsigned long long)n->min,
			        (unsigned long long)n->max);
			return -1;
		}
		char *p = (char *)o + n->off;
		if (n->kind == K_U64SIZE)
			memcpy(p, &x, sizeof(uint64_t));
		else {
			uint32_t y = (uint32_t)x;
			memcpy(p, &y, sizeof(y));
		}
		return 1;
	}
	return 0;
}

static int parse_args(struct cli_global *g, struct serve_cli *o, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int m = cli_opt_common(g, "serve", argc, argv, &i);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return CLI_EXIT_OK;
		if (m)
			continue;
		m = number_option(o, argc, argv, &i);
		if (!m)
			m = cli_fetch_arg(&o->fetch, argc, argv, &i);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m)
			continue;
		const char **str[] = { &o->listen, &o->log_path, &o->tmp_dir, &o->indexer };
		const char *names[] = { "--listen", "--log", "--tmp-dir", "--indexer" };
		for (size_t k = 0; !m && k < 4; k++) {
			m = cli_opt_value(argc, argv, &i, names[k], &v);
			if (m > 0)
				*str[k] = v;
		}
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m)
			continue;
		if (!strcmp(argv[i], "--allow-paths")) {
			o->allow_paths = true;
			continue;
		}
		if (!strcmp(argv[i], "--verify")) {
			o->verify = 1;
			continue;
		}
		cli_err(NULL, "unknown option or argument '%s' (see 'symdb help serve')", argv[i]);
		return CLI_EXIT_USAGE;
	}
	return -1;
}

static int open_log(const char *path)
{
	if (!path || !strcmp(path, "-"))
		return 2;
	if (!strcmp(path, "none"))
		return -1;
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
}

/* The other parts' state (cache, symbolizer pool, uploads): each part
 * creates its own here and frees it in stop_parts. */
static int start_parts(struct serve_server *srv)
{
	char err[600] = "";

	if (serve_metrics_create(&srv->metrics) < 0)
		return -ENOMEM;
	/* uploads: a builder on the database, and DB/tmp checked */
	if (serve_images_create(srv, &srv->images, err, sizeof err) < 0) {
		cli_err(NULL, "serve: uploads: %s", err);
		return -EIO;
	}
	if (srv->lim.cache_bytes &&
	    serve_cache_create(srv->lim.cache_bytes, 0, srv->metrics, &srv->cache) < 0)
		return -ENOMEM;
	if (serve_pool_create(srv, &srv->pool) < 0)
		return -ENOMEM;
	return 0;
}

/* The fetch workers, when a source is configured (options, else the
 * environment: cli_fetch.h). */
static int start_fetch(struct serve_server *srv, struct cli_fetch *fc)
{
	const symdb_fetch_opts *fo = cli_fetch_opts(fc, srv->indexer_path);
	if (!fo)
		return 0;
	char err[600] = "";
	if (serve_fetch_create(srv, fo, &srv->fetch, err, sizeof err) < 0) {
		cli_err(NULL, "serve: fetching: %s", err);
		return -EIO;
	}
	return 0;
}

static void stop_parts(struct serve_server *srv)
{
	serve_fetch_free(srv->fetch);
	serve_pool_free(srv->pool);
	serve_cache_free(srv->cache);
	serve_images_free(srv->images);
	serve_metrics_free(srv->metrics);
}

/* SIGHUP: the log file is reopened in place (dup2 over the descriptor every
 * thread writes to), so a rotated log is let go of. */
static void reopen_log(struct serve_server *srv, const char *path)
{
	if (srv->log_fd <= 2 || !path)
		return;
	int fd = open_log(path);
	if (fd < 0) {
		cli_err(path, "cannot reopen the log: %s (still writing the old one)", strerror(errno));
		return;
	}
	dup2(fd, srv->log_fd);
	/* dup2 clears close-on-exec: the indexer runs must not inherit it */
	fcntl(srv->log_fd, F_SETFD, FD_CLOEXEC);
	close(fd);
}

/* The signals the server handles itself: blocked in every thread, taken
 * by sigwait. */
static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
}

static int wait_for_stop(struct serve_server *srv, const char *log_path)
{
	sigset_t set;
	stop_signals(&set);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig))
			continue;
		if (sig == SIGHUP) {
			reopen_log(srv, log_path);
			continue;
		}
		return sig;
	}
}

/* The database, created (with its parents) when it does not exist yet, as
 * `symdb build` and `symdb query` create it; one that exists but cannot
 * be opened for writing keeps its error. */
static int open_db(const char *dir, symdb **db, char *eb, size_t ebsz)
{
	SYMDB_OPTS(symdb_open_opts, oo, .flags = SYMDB_OPEN_WRITE, .errbuf = eb, .errbuf_sz = ebsz);
	int rc = symdb_open(dir, &oo, db);
	if (rc != -ENOENT || !dir)
		return rc;
	symdb_builder *b = NULL;
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = eb, .errbuf_sz = ebsz);
	eb[0] = 0;
	rc = symdb_builder_open(dir, &bo, &b);
	symdb_builder_close(b);
	if (rc < 0)
		return rc;
	eb[0] = 0;
	return symdb_open(dir, &oo, db);
}

/* The thread that takes signals while the main thread stops the server:
 * a second SIGTERM or SIGINT exits now, with one line on stderr. */
static void *second_signal(void *arg)
{
	(void)arg;
	sigset_t set;
	stop_signals(&set);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) || sig == SIGHUP)
			continue;
		static const char msg[] =
			"symdb: serve: second signal: exiting now, abandoning the requests in flight\n";
		ssize_t w = write(2, msg, sizeof(msg) - 1);
		(void)w;
		_exit(CLI_EXIT_FAILED);
	}
	return NULL;
}

static int serve_run(struct serve_server *srv, struct serve_cli *o, struct serve_listener *l)
{
	char err[300];
	struct serve_http *h;
	if (serve_http_start(srv, l, &o->http, &h, err, sizeof(err)) < 0) {
		cli_err(l->name, "%s", err);
		return CLI_EXIT_FAILED;
	}
	cli_err(NULL, "serve: listening on %s (database %s, %u threads%s)", l->name, srv->db_dir,
	        srv->lim.threads, srv->allow_paths ? "" : ", \"path\" modules refused");
	int sig = wait_for_stop(srv, o->log_path);
	cli_err(NULL, "serve: %s: finishing the requests in flight, then stopping",
	        sig == SIGINT ? "SIGINT" : "SIGTERM");
	pthread_t t;
	if (pthread_create(&t, NULL, second_signal, NULL) == 0)
		pthread_detach(t);
	serve_http_stop(h, srv->lim.deadline_ms);
	return CLI_EXIT_OK;
}

int cli_cmd_serve(const struct cli_global *gin, int argc, char **argv)
{
	struct cli_global g = *gin;
	struct serve_cli o;
	defaults(&o);
	int rc = parse_args(&g, &o, argc, argv);
	if (rc >= 0) {
		cli_fetch_free(&o.fetch);
		return rc;
	}

	char err[300];
	struct serve_listener l;
	if (serve_listen_open(o.listen, &l, err, sizeof(err)) < 0) {
		cli_err(NULL, "--listen %s", err);
		cli_fetch_free(&o.fetch);
		return CLI_EXIT_FAILED;
	}
	const char *dir = cli_db_dir(g.db_dir);
	char eb[512] = "";
	symdb *db = NULL;
	rc = open_db(dir, &db, eb, sizeof(eb));
	if (rc < 0) {
		serve_listen_close(&l);
		cli_err_lib(dir ? dir : "database", rc, eb);
		cli_fetch_free(&o.fetch);
		return CLI_EXIT_DATABASE;
	}
	char tmp[4096];
	if (!o.tmp_dir) {
		snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
		o.tmp_dir = tmp;
	}
	struct serve_server srv = {
		.db = db, .db_dir = dir, .indexer_path = o.indexer, .tmp_dir = o.tmp_dir,
		.allow_paths = l.loopback || o.allow_paths, .lim = o.lim, .log_fd = open_log(o.log_path),
		.open_flags = cli_verify_flag(o.verify),
	};
	if (srv.log_fd < 0 && o.log_path && strcmp(o.log_path, "none")) {
		cli_err(o.log_path, "cannot open the log: %s", strerror(errno));
		rc = CLI_EXIT_FAILED;
	} else if ((rc = start_parts(&srv)) < 0 || (rc = start_fetch(&srv, &o.fetch)) < 0) {
		if (rc == -ENOMEM)
			cli_err(NULL, "serve: out of memory");
		rc = CLI_EXIT_FAILED;
	} else {
		/* Before any thread starts, so that only this one takes them. */
		sigset_t set;
		stop_signals(&set);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		signal(SIGPIPE, SIG_IGN);
		/* Every thread's reads of index mappings: a file truncated
		 * under the server damages that image, not the server. */
		cli_fault_guard(db);
		rc = serve_run(&srv, &o, &l);
		cli_fault_unguard();
	}
	stop_parts(&srv);
	serve_listen_close(&l);
	if (srv.log_fd > 2)
		close(srv.log_fd);
	symdb_close(db);
	cli_fetch_free(&o.fetch);
	return rc;
}
