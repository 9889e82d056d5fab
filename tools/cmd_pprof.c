/* SPDX-License-Identifier: MIT */
/*
 * `symdb pprof IN [-o OUT] [--force] [--svg FILE] [fetch options]`: symbolize a pprof
 * profile (prof_pprof.c reads and writes it, prof_pprof_sym.c adds the
 * Lines) and optionally draw it as a flame graph (prof_folded.c,
 * prof_svg.c).
 *
 * Nothing is written until the whole profile has been read, checked,
 * symbolized and packed; each output file is then written beside its
 * final name and renamed over it, so a bad input, a failure or a kill
 * never leaves a partial or stale-but-new-looking file.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_fetch.h"
#include "cli_fetch_id.h"
#include "cli_outfile.h"
#include "cli_query.h"
#include "cli_util.h"
#include "prof_pprof.h"
#include "profile.h"
#include "symdb.h"

struct pprof_args {
	const char *in, *out, *svg;
	int force, no_build;
	struct cli_fetch fetch; /* --upstream, --debuginfod... (cli_fetch.h) */
};

static int parse_args(struct cli_global *g, int argc, char **argv, struct pprof_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *v;
		int c = cli_opt_common(g, "pprof", argc, argv, &i);
		if (c < 0)
			return CLI_EXIT_USAGE;
		if (c == CLI_OPT_HELP)
			return -1;
		if (c == CLI_OPT_TAKEN)
			continue;
		if ((c = cli_opt_value(argc, argv, &i, "-o", &v)) != 0 ||
		    (c = cli_opt_value(argc, argv, &i, "--output", &v)) != 0) {
			if (c < 0)
				return CLI_EXIT_USAGE;
			a->out = strcmp(v, "-") ? v : NULL;
		} else if ((c = cli_opt_value(argc, argv, &i, "--svg", &v)) != 0) {
			if (c < 0)
				return CLI_EXIT_USAGE;
			a->svg = v;
		} else if (!strcmp(argv[i], "--force")) {
			a->force = 1;
		} else if (!strcmp(argv[i], "--no-build")) {
			a->no_build = 1;
		} else if ((c = cli_fetch_arg(&a->fetch, argc, argv, &i)) != 0) {
			if (c < 0)
				return CLI_EXIT_USAGE;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_err(NULL, "pprof: unknown option '%s' (see 'symdb help pprof')", argv[i]);
			return CLI_EXIT_USAGE;
		} else if (a->in) {
			cli_err(NULL, "pprof: one profile at a time ('%s' and '%s')", a->in, argv[i]);
			return CLI_EXIT_USAGE;
		} else {
			a->in = argv[i];
		}
	}
	if (!a->in) {
		cli_usage(stderr, "pprof");
		return CLI_EXIT_USAGE;
	}
	if (!a->out && isatty(STDOUT_FILENO)) {
		cli_err(NULL, "pprof: refusing to write a binary profile to a terminal (use -o FILE)");
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* ---- output ---------------------------------------------------------------- */

/* Open path (NULL: stdout) and write the n bytes of b to it: 0, or -1
 * after a one-line error (o then closed). */
static int stage(struct cli_outfile *o, const char *path, const unsigned char *b, size_t n)
{
	if (cli_outfile_open(o, path) < 0)
		return -1;
	if (n && fwrite(b, 1, n, o->f) != n) {
		cli_err(o->name, "%s", strerror(errno));
		cli_outfile_abort(o);
		return -1;
	}
	return 0;
}

/* The profile as a->out (or stdout) and the SVG as a->svg, published as
 * cli_outfile.h says only when both are written, so that a failure of
 * either (a bad --svg path, a full disk) publishes neither. */
static int publish(const struct pprof_args *a, const unsigned char *buf, size_t len,
                   const unsigned char *svg, size_t svglen)
{
	struct cli_outfile out, so = { 0 };
	if (stage(&out, a->out, buf, len) < 0)
		return CLI_EXIT_FAILED;
	if (a->svg && stage(&so, a->svg, svg, svglen) < 0) {
		cli_outfile_abort(&out);
		return CLI_EXIT_FAILED;
	}
	if (so.f && cli_outfile_commit(&so) < 0) {
		cli_outfile_abort(&out);
		return CLI_EXIT_FAILED;
	}
	return cli_outfile_commit(&out) < 0 ? CLI_EXIT_FAILED : 0;
}

/* The flame graph as a string in memory, published like the profile. */
static int render_svg(const prof_pprof *p, const struct pprof_args *a, unsigned char **buf,
                      size_t *len)
{
	prof_folded *f = prof_folded_new();
	const char *unit = NULL;
	char *mem = NULL;
	size_t memlen = 0;
	FILE *out = f ? open_memstream(&mem, &memlen) : NULL;
	int rc = out ? prof_pprof_fold(p, f, &unit) : -ENOMEM;
	if (rc == 0) {
		const char *slash = strrchr(a->in, '/');
		SYMDB_OPTS(prof_svg_opts, so, .title = slash ? slash + 1 : a->in, .unit = unit);
		rc = prof_svg_write(f, out, &so);
	}
	if (out && fclose(out) != 0 && rc == 0)
		rc = -ENOMEM;
	prof_folded_free(f);
	if (rc < 0) {
		free(mem);
		return rc;
	}
	*buf = (unsigned char *)mem;
	*len = memlen;
	return 0;
}

/* ---- progress on a terminal ------------------------------------------------- */

/* A line rewritten in place ("\r") at most four times a second, only when
 * stderr is a terminal, and cleared before the summary line: as `symdb
 * perf` does. */
struct progress {
	int on, shown;
	struct timespec last;
};

static void progress_show(void *arg, size_t done, size_t total)
{
	struct progress *pr = arg;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - pr->last.tv_sec) +
	            (double)(now.tv_nsec - pr->last.tv_nsec) / 1e9;
	if (pr->shown && dt < 0.25)
		return;
	pr->last = now;
	pr->shown = 1;
	fprintf(stderr, "\rsymdb pprof: symbolized %zu/%zu addresses   ", done, total);
}

static void progress_clear(const struct progress *pr)
{
	if (pr->shown)
		fprintf(stderr, "\r%70s\r", "");
}

/* ---- fetching unknown build-ids ---------------------------------------------- */

struct hook_state {
	struct progress pr;
	struct cli_fetch_run fetch;
};

static void fetch_line(void *arg)
{
	struct hook_state *h = arg;
	progress_clear(&h->pr);
	h->pr.shown = 0;
}

/* A mapping's build-id that no file and not the database has: fetched
 * from --upstream / --debuginfod (or the environment's) and published
 * (cli_fetch_id.c). */
static int fetch_hook(void *arg, const symdb_uuid *id)
{
	return cli_fetch_id(&((struct hook_state *)arg)->fetch, id);
}

static void progress_hook(void *arg, size_t done, size_t total)
{
	progress_show(&((struct hook_state *)arg)->pr, done, total);
}

/* ---- the command ------------------------------------------------------------ */

static void print_summary(const struct pprof_args *a, const prof_pprof_stats *st)
{
	double pct = st->weight ? 100.0 * (double)st->weight_located / (double)st->weight : 100.0;
	cli_err("pprof", "%s: %zu samples, %zu locations (%zu addresses resolved of %zu), "
	        "%.1f%% of sample weight fully symbolized, %zu unknown images%s%s", a->in,
	        st->samples, st->locations, st->resolved, st->addresses, pct, st->unknown_images,
	        st->unknown_images ? ": " : "", st->unknown_names);
}

static int symbolize(const struct cli_global *g, const struct pprof_args *a, prof_pprof *p)
{
	struct query q;
	memset(&q, 0, sizeof q);
	q.fetch = a->fetch; /* its strings stay a's: freed by cmd_pprof() */
	int rc = cli_query_open_db(g, a->no_build, &q.db);
	if (rc < 0)
		return -rc;
	if (cli_query_create_sym(&q, a->no_build) < 0) {
		symdb_close(q.db);
		return CLI_EXIT_FAILED;
	}
	char err[512] = "";
	prof_pprof_stats st;
	char ix[4096];
	struct hook_state h = { .pr.on = isatty(STDERR_FILENO),
		                .fetch = { .db = q.db, .before_line = fetch_line } };
	h.fetch.arg = &h;
	h.fetch.fo = q.db ? cli_fetch_opts(&q.fetch, cli_query_indexer(ix, sizeof ix)) : NULL;
	prof_pprof_hooks hooks = { .progress = h.pr.on ? progress_hook : NULL, .fetch = fetch_hook,
	                           .arg = &h };
	rc = prof_pprof_symbolize(p, q.db, q.sym, a->force, &hooks, &st, err, sizeof err);
	progress_clear(&h.pr);
	unsigned char *buf = NULL, *svg = NULL;
	size_t len = 0, svglen = 0;
	if (rc < 0)
		cli_err(a->in, "%s", err[0] ? err : symdb_strerror(rc));
	else if ((rc = prof_pprof_write(p, &buf, &len)) < 0 ||
	         (a->svg && (rc = render_svg(p, a, &svg, &svglen)) < 0))
		cli_err(a->in, "%s", rc == -EOVERFLOW ? "the sample values add up past 2^64-1 "
		                                        "(no flame graph)" : strerror(-rc));
	else
		rc = publish(a, buf, len, svg, svglen);
	if (rc == 0)
		print_summary(a, &st);
	free(buf);
	free(svg);
	/* Names in the profile point into the images: they close last. */
	symdb_symbolizer_free(q.sym);
	symdb_close(q.db);
	return rc < 0 ? CLI_EXIT_FAILED : rc;
}

int cmd_pprof(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct pprof_args a = { 0 };
	cli_fetch_init(&a.fetch);
	int rc = parse_args(&g, argc, argv, &a);
	if (rc) {
		cli_fetch_free(&a.fetch);
		return rc < 0 ? CLI_EXIT_OK : rc;
	}
	char err[512] = "";
	prof_pprof *p;
	if (prof_pprof_read(a.in, &p, err, sizeof err) < 0) {
		cli_err(strcmp(a.in, "-") ? a.in : "standard input", "%s", err);
		cli_fetch_free(&a.fetch);
		return CLI_EXIT_FAILED;
	}
	rc = symbolize(&g, &a, p);
	prof_pprof_free(p);
	cli_fetch_free(&a.fetch);
	return rc;
}
