/* SPDX-License-Identifier: MIT */
/*
 * `symdb build`: index many files with one symdb_builder shared by N worker
 * threads.  Workers take the next file from an atomic counter; results are
 * printed in argument order (a file's line waits for the ones before it), so
 * the output does not depend on -j.  A progress line is drawn on stderr only
 * when stderr is a terminal.  A failing file is reported and skipped; the
 * others are still indexed.  Directories are walked with -r
 * (cli_build_walk.c); a run that walked one ends with a summary line.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_build_walk.h"
#include "cli_fetch.h"
#include "cli_util.h"
#include "symdb_build.h"

struct file_state {
	int finished;
	int rc;
	char *out_line; /* for stdout, or NULL */
	char *err_line; /* for stderr, or NULL */
};

struct build_run {
	symdb_builder *b;
	char **files;
	size_t nfiles;
	unsigned flags;
	const char *debug_dir;
	unsigned timeout_s;    /* --timeout; 0 = the library's scaled default */
	uint64_t memory_limit; /* --memory-limit; 0 = the library's default */
	unsigned threads; /* per input's DWARF, 0 = the indexer's default */
	const char *indexer; /* symdb-indexer beside this executable, or NULL */
	int quiet, tty, recursive;
	atomic_size_t next;
	pthread_mutex_t lock; /* guards everything below */
	struct file_state *st;
	size_t printed, finished;
	size_t n_indexed, n_already, n_failed; /* files, for the summary line */
	int exit_code;
	const char **ids;   /* --build-id HEX: fetched, not read from a file */
	size_t nids;
	struct cli_fetch fetch;
};

static char *dup_printf(const char *fmt, ...) CLI_PRINTF(1, 2);

static char *dup_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* The library's reason usually starts with the path already. */
static char *error_line(const char *path, int rc, const char *err)
{
	const char *reason = cli_reason_for(err, path);
	if (!err[0])
		return cli_line_dup("symdb: %s: %s\n", path, symdb_strerror(rc));
	if (cli_errbuf_names(err, path, ":"))
		return cli_lib_line_dup("symdb: %s\n", err);
	return cli_lib_line_dup("symdb: %s: %s\n", path, reason ? reason : err);
}

static void draw_progress(struct build_run *r)
{
	if (!r->tty)
		return;
	fprintf(stderr, "\r\033[K[%zu/%zu] indexing...", r->finished, r->nfiles);
	fflush(stderr);
}

/* With the lock held: print every finished file not yet printed, in order. */
static void flush_ready(struct build_run *r)
{
	int cleared = 0;
	while (r->printed < r->nfiles && r->st[r->printed].finished) {
		struct file_state *s = &r->st[r->printed++];
		if (r->tty && !cleared) {
			fputs("\r\033[K", stderr);
			cleared = 1;
		}
		if (s->out_line && !r->quiet)
			fputs(s->out_line, stdout);
		if (s->err_line) {
			fflush(stdout);
			fputs(s->err_line, stderr);
		}
		free(s->out_line);
		free(s->err_line);
		s->out_line = s->err_line = NULL;
	}
	fflush(stdout);
	if (r->printed < r->nfiles)
		draw_progress(r);
}

/* Mach-O inputs (universal files, dSYM bundles): one line per image,
 * "indexed UUID FILE (ARCH)". */
static char *macho_lines(const char *path, const symdb_build_result *res)
{
	char *acc = NULL;
	for (unsigned k = 0; k < res->nimages; k++) {
		const symdb_build_image *im = &res->images[k];
		char hex[2 * SYMDB_UUID_MAX + 1];
		char *line, *next;
		if (im->skipped == 2)
			continue; /* the conflict's own line on stderr says it */
		symdb_uuid_format(&im->uuid, hex);
		line = cli_line_dup("%s %s %s (%s%s)\n", im->skipped ? "skipped" : "indexed", hex,
		                    path, im->arch,
		                    im->skipped    ? ", already indexed"
		                    : im->replaced ? ", replaced an index without DWARF"
		                                   : "");
		next = dup_printf("%s%s", acc ? acc : "", line);
		free(line);
		free(acc);
		acc = next;
	}
	return acc;
}

/* "symdb: warning: LINE" for each line of a build's warnings (split DWARF
 * files not found, symdb_build_result.warnings). */
static char *warning_lines(const char *w)
{
	char *acc = NULL;
	while (*w) {
		const char *nl = strchr(w, '\n');
		int len = nl ? (int)(nl - w) : (int)strlen(w);
		char *next = dup_printf("%ssymdb: warning: %.*s\n", acc ? acc : "", len, w);
		free(acc);
		acc = next;
		if (!acc || !nl)
			break;
		w = nl + 1;
	}
	return acc;
}

static void index_one(struct build_run *r, size_t i, symdb_build_result *res)
{
	const char *path = r->files[i];
	char err[1024] = "";
	SYMDB_OPTS(symdb_build_opts, o, .flags = r->flags, .debug_dir = r->debug_dir,
	           .errbuf = err, .errbuf_sz = sizeof(err), .timeout_s = r->timeout_s,
	           .memory_limit = r->memory_limit, .threads = r->threads,
	           .indexer_path = r->indexer);
	memset(res, 0, sizeof(*res));
	res->sz = sizeof *res;
	int rc = symdb_builder_add(r->b, path, &o, res);
	char hex[2 * SYMDB_UUID_MAX + 1];
	char *out = NULL, *errl = NULL;
	if ((rc == 0 || rc == SYMDB_E_EXISTS) && res->nimages > 0)
		out = macho_lines(path, res); /* a conflict still lists the other images */
	if (out) {
		if (rc)
			errl = error_line(path, rc, err);
	} else if (rc == 0) {
		symdb_uuid_format(&res->uuid, hex);
		if (res->skipped)
			out = cli_line_dup("skipped %s %s (already indexed)\n", hex, path);
		else if (res->replaced)
			out = cli_line_dup("indexed %s %s (replaced an index %s)\n", hex, path,
			                   res->replaced == 3   ? "without this file's symbol table"
			                   : res->replaced == 2 ? "made from .dynsym only"
			                                        : "without DWARF");
		else if (res->debug_path[0])
			out = cli_line_dup("indexed %s %s (debug file %s)\n", hex, path,
			                   res->debug_path);
		else if (!res->nsymbols && !res->nline_rows && !res->ninline_nodes)
			out = cli_line_dup("indexed %s %s (no symbols and no debug information: "
			                   "every address answers ?\?)\n",
			                   hex, path);
		else
			out = cli_line_dup("indexed %s %s\n", hex, path);
	} else {
		errl = error_line(path, rc, err);
	}
	if (rc == 0 && res->warnings[0])
		errl = warning_lines(res->warnings);
	pthread_mutex_lock(&r->lock);
	r->st[i].rc = rc;
	r->st[i].out_line = out;
	r->st[i].err_line = errl;
	r->st[i].finished = 1;
	r->finished++;
	if (rc < 0)
		r->n_failed++;
	else if (res->skipped)
		r->n_already++;
	else
		r->n_indexed++;
	if (rc < 0) {
		int ex = cli_exit_for(rc);
		if (ex == CLI_EXIT_DAMAGED || ex == CLI_EXIT_USAGE)
			ex = CLI_EXIT_FAILED; /* a bad input, not a bad index */
		if (ex > r->exit_code)
			r->exit_code = ex;
	}
	flush_ready(r);
	pthread_mutex_unlock(&r->lock);
}

static void *worker(void *arg)
{
	struct build_run *r = arg;
	/* symdb_build_result holds two PATH_MAX buffers: keep it off the stack
	 * of small thread stacks. */
	symdb_build_result *res = malloc(sizeof(*res));
	if (!res)
		return NULL;
	for (;;) {
		size_t i = atomic_fetch_add(&r->next, 1);
		if (i >= r->nfiles)
			break;
		index_one(r, i, res);
	}
	free(res);
	return NULL;
}

/* --timeout SECONDS: 1 .. 1 day. */
static int parse_timeout(const char *v, unsigned *out)
{
	uint64_t n;
	if (cli_parse_u64(v, strlen(v), &n) < 0 || n == 0 || n > 86400) {
		cli_err(NULL, "build: invalid timeout '%s' (seconds, 1 to 86400)", v);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

/* --memory-limit SIZE: bytes, or with a K/M/G/T suffix (powers of 1024);
 * at least 64M, so that the indexer itself can start. */
static int parse_memory(const char *v, uint64_t *out)
{
	size_t n = strlen(v);
	unsigned shift = 0;
	uint64_t x;
	if (n > 1) {
		switch (v[n - 1]) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 't': case 'T': shift = 40; break;
		default: break;
		}
	}
	if (cli_parse_u64(v, shift ? n - 1 : n, &x) < 0 || (shift && x > (UINT64_MAX >> shift)) ||
	    (x << shift) < (64ull << 20) || (x << shift) > (1ull << 50)) {
		cli_err(NULL, "build: invalid memory limit '%s' (e.g. 2G; at least 64M)", v);
		return -1;
	}
	*out = x << shift;
	return 0;
}

static int parse_jobs(const char *v, unsigned *jobs)
{
	uint64_t n;
	if (cli_parse_u64(v, strlen(v), &n) < 0 || n > 1024) {
		cli_err(NULL, "build: invalid job count '%s'", v);
		return -1;
	}
	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (uint64_t)c : 1;
	}
	*jobs = (unsigned)n;
	return 0;
}

/* Parse options; files are gathered at the front of argv.  Returns the
 * number of files, or minus an exit code. */
static int parse_build_args(struct build_run *r, struct cli_global *g, unsigned *jobs, int argc,
                            char **argv)
{
	int nf = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int m;
		if (!strcmp(a, "--")) {
			while (++i < argc)
				argv[nf++] = argv[i];
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			argv[nf++] = argv[i];
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_usage(stdout, "build");
			return -1000;
		} else if (!strcmp(a, "-r") || !strcmp(a, "--recursive")) {
			r->recursive = 1;
		} else if (!strcmp(a, "--force") || !strcmp(a, "-f")) {
			r->flags |= SYMDB_BUILD_FORCE;
		} else if (!strcmp(a, "--no-dwarf")) {
			r->flags |= SYMDB_BUILD_NO_DWARF;
		} else if (!strcmp(a, "--no-isolate")) {
			r->flags &= ~SYMDB_BUILD_ISOLATE;
		} else if ((m = cli_opt_value(argc, argv, &i, "--timeout", &v)) != 0) {
			if (m < 0 || parse_timeout(v, &r->timeout_s) < 0)
				return -CLI_EXIT_USAGE;
		} else if ((m = cli_opt_value(argc, argv, &i, "--memory-limit", &v)) != 0) {
			if (m < 0 || parse_memory(v, &r->memory_limit) < 0)
				return -CLI_EXIT_USAGE;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			r->quiet = 1;
		} else if ((m = cli_opt_value(argc, argv, &i, "--db", &v)) != 0) {
			if (m < 0)
				return -CLI_EXIT_USAGE;
			g->db_dir = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--debug-dir", &v)) != 0) {
			if (m < 0)
				return -CLI_EXIT_USAGE;
			r->debug_dir = v;
		} else if ((m = cli_opt_value(argc, argv, &i, "--jobs", &v)) != 0 ||
		           (m = cli_opt_value(argc, argv, &i, "-j", &v)) != 0) {
			if (m < 0 || parse_jobs(v, jobs) < 0)
				return -CLI_EXIT_USAGE;
		} else if ((m = cli_opt_value(argc, argv, &i, "--threads", &v)) != 0) {
			if (m < 0 || parse_jobs(v, &r->threads) < 0)
				return -CLI_EXIT_USAGE;
		} else if ((m = cli_opt_value(argc, argv, &i, "--build-id", &v)) != 0) {
			if (m < 0)
				return -CLI_EXIT_USAGE;
			r->ids[r->nids++] = v;
		} else if ((m = cli_fetch_arg(&r->fetch, argc, argv, &i)) != 0) {
			if (m < 0)
				return -CLI_EXIT_USAGE;
		} else {
			cli_err(NULL, "build: unknown option '%s' (see 'symdb help build')", a);
			return -CLI_EXIT_USAGE;
		}
	}
	if (nf == 0 && r->nids == 0) {
		cli_err(NULL, "build: no input files (see 'symdb help build')");
		return -CLI_EXIT_USAGE;
	}
	return nf;
}

static int open_builder(struct build_run *r, const struct cli_global *g)
{
	char err[1024] = "";
	SYMDB_OPTS(symdb_build_opts, o, .flags = r->flags, .debug_dir = r->debug_dir,
	           .errbuf = err, .errbuf_sz = sizeof(err));
	int rc = symdb_builder_open(cli_db_dir(g->db_dir), &o, &r->b);
	if (rc == 0)
		return 0;
	char dir[4096];
	if (g->db_dir)
		snprintf(dir, sizeof(dir), "%s", g->db_dir);
	else if (cli_default_dir(dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "(default database)");
	cli_err_lib(dir, rc, err);
	return -CLI_EXIT_DATABASE;
}

static int run_workers(struct build_run *r, unsigned jobs)
{
	if (jobs > r->nfiles)
		jobs = (unsigned)r->nfiles;
	pthread_t *tids = calloc(jobs, sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	unsigned started = 0;
	for (; started + 1 < jobs; started++)
		if (pthread_create(&tids[started], NULL, worker, r) != 0)
			break;
	worker(r); /* the main thread works too */
	for (unsigned t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(tids);
	return 0;
}

/* After a walk: what became of every file, skipped ones included. */
static void print_summary(const struct build_run *r, const struct cli_inputs *in)
{
	if (!in->walked || r->quiet)
		return;
	printf("summary: %zu indexed, %zu already indexed, %zu failed, %zu skipped "
	       "(not object files)\n",
	       r->n_indexed, r->n_already, r->n_failed + in->refused, in->skipped);
}

/* --build-id HEX: fetched from the configured sources (cli_fetch.h) and
 * published, one line each in argument order:
 *   imported HEX (upstream URL) | indexed HEX (debuginfod URL) |
 *   skipped HEX (already indexed); failures "symdb: HEX: reason". */
static void fetch_ids(struct build_run *r, const symdb_fetch_opts *fo)
{
	symdb_fetch_result *res = malloc(sizeof *res);
	char err[1024];

	for (size_t i = 0; res && i < r->nids; i++) {
		symdb_uuid id;
		const char *hex = r->ids[i];
		int rc = symdb_uuid_parse(hex, &id);
		if (rc < 0) {
			cli_err(hex, "not a build-id (hex digits)");
			r->exit_code = CLI_EXIT_USAGE;
			continue;
		}
		symdb_fetch_opts o = *fo;
		err[0] = 0;
		o.errbuf = err;
		o.errbuf_sz = sizeof err;
		memset(res, 0, sizeof *res);
		res->sz = sizeof *res;
		rc = cli_fetch_run(r->b, &id, &o, res);
		char h[2 * SYMDB_UUID_MAX + 1];
		symdb_uuid_format(&id, h);
		if (rc < 0) {
			cli_fetch_report(h, rc, err);
			if (r->exit_code < CLI_EXIT_FAILED)
				r->exit_code = CLI_EXIT_FAILED;
		} else if (!r->quiet) {
			if (res->source == SYMDB_FETCH_NONE || res->build.skipped)
				printf("skipped %s (already indexed)\n", h);
			else
				printf("%s %s (%s %s)\n",
				       res->source == SYMDB_FETCH_UPSTREAM ? "imported" : "indexed", h,
				       res->source == SYMDB_FETCH_UPSTREAM ? "upstream" : "debuginfod",
				       res->url);
			fflush(stdout);
		}
	}
	if (!res)
		r->exit_code = CLI_EXIT_FAILED;
	free(res);
}

int cli_cmd_build(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct build_run r;
	struct cli_inputs in = { 0 };
	memset(&r, 0, sizeof(r));
	static char indexer[4096];
	r.flags = SYMDB_BUILD_ISOLATE; /* the CLI parses untrusted inputs in the cage */
	r.indexer = cli_helper_exe("SYMDB_INDEXER", "symdb-indexer", indexer, sizeof(indexer));
	unsigned jobs = 1;
	cli_fetch_init(&r.fetch);
	r.ids = calloc((size_t)argc + 1, sizeof *r.ids);
	int nf = r.ids ? parse_build_args(&r, &g, &jobs, argc, argv) : -CLI_EXIT_FAILED;
	const symdb_fetch_opts *fo = nf >= 0 ? cli_fetch_opts(&r.fetch, r.indexer) : NULL;
	if (nf >= 0 && r.nids && !fo) {
		cli_err(NULL, "build: --build-id needs a source: --upstream URL or --debuginfod URL "
		              "(or SYMDB_UPSTREAM, DEBUGINFOD_URLS)");
		nf = -CLI_EXIT_USAGE;
	}
	/* --force fetches and publishes anew what the database holds (a
	 * damaged or stale index), as it rebuilds a FILE. */
	if (fo)
		r.fetch.build.flags |= r.flags & SYMDB_BUILD_FORCE;
	if (nf < 0) {
		free(r.ids);
		cli_fetch_free(&r.fetch);
		return nf == -1000 ? CLI_EXIT_OK : -nf;
	}
	in.quiet = r.quiet;
	if (cli_inputs_expand(&in, argv, (size_t)nf, r.recursive) < 0) {
		cli_inputs_free(&in);
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAILED;
	}
	r.files = in.files;
	r.nfiles = in.n;
	if (in.refused)
		r.exit_code = CLI_EXIT_FAILED;
	/* -j files at once share the CPUs: without --threads, each gets its
	 * part of them for its DWARF (never oversubscribed, at least 1). */
	if (!r.threads && jobs > 1) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned par = jobs < r.nfiles ? jobs : (unsigned)r.nfiles;
		r.threads = c > (long)par && par ? (unsigned)(c / par) : 1;
	}
	r.tty = isatty(STDERR_FILENO);
	atomic_init(&r.next, 0);
	r.st = calloc(r.nfiles ? r.nfiles : 1, sizeof(*r.st));
	if (!r.st || pthread_mutex_init(&r.lock, NULL) != 0) {
		free(r.st);
		cli_inputs_free(&in);
		cli_err(NULL, "out of memory");
		return CLI_EXIT_FAILED;
	}
	/* Nothing to index (every argument refused, or a walk found no object
	 * file): the database is not even opened. */
	int rc = r.nfiles || r.nids ? open_builder(&r, &g) : 0;
	if (rc == 0 && r.nfiles) {
		draw_progress(&r);
		if (run_workers(&r, jobs) < 0) {
			cli_err(NULL, "out of memory");
			r.exit_code = CLI_EXIT_FAILED;
		}
		if (r.tty)
			fputs("\r\033[K", stderr);
		/* Files never processed (a worker failed to start) count as failed. */
		if (r.printed < r.nfiles)
			r.exit_code = CLI_EXIT_FAILED;
	}
	if (rc == 0)
		print_summary(&r, &in);
	if (rc == 0 && r.nids)
		fetch_ids(&r, fo);
	symdb_builder_close(r.b);
	free(r.ids);
	cli_fetch_free(&r.fetch);
	pthread_mutex_destroy(&r.lock);
	free(r.st);
	cli_inputs_free(&in);
	if (fflush(stdout) != 0 && r.exit_code == 0)
		r.exit_code = CLI_EXIT_FAILED;
	return rc < 0 ? -rc : r.exit_code;
}
