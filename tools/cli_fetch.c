/* SPDX-License-Identifier: MIT */
/*
 * cli_fetch.c - the fetch options and environment of the CLI, mapped into
 * symdb_fetch_opts (cli_fetch.h).  Options win over the environment, as
 * with every other symdb setting; the environment variables are
 * libdebuginfod's own (DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH,
 * DEBUGINFOD_TIMEOUT), so a machine set up for gdb or eu-stack is set up
 * for symdb too, plus SYMDB_UPSTREAM for upstream index stores.  The
 * proxies are read as curl reads them (curl_proxy), so a machine set up
 * for curl or debuginfod-find behind a proxy is set up for symdb.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_fetch.h"
#include "symdb_url.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_fetch_init(struct cli_fetch *f)
{
	memset(f, 0, sizeof *f);
}

void cli_fetch_free(struct cli_fetch *f)
{
	free(f->upstreams);
	free(f->debuginfod);
	f->upstreams = f->debuginfod = NULL;
}

/* A usage error about url, its password masked (symdb_url.h). */
static int bad_url(const char *opt, const char *why, const char *url)
{
	char shown[1024];

	snprintf(shown, sizeof shown, "%s", url);
	symdb_url_mask(shown, sizeof shown);
	cli_err(NULL, "%s: %s: '%s'", opt, why, shown);
	return -1;
}

/* Append url to the space-separated list *list. */
static int add_url(char **list, const char *opt, const char *url)
{
	size_t old = *list ? strlen(*list) : 0, n = strlen(url);
	char *s;

	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return bad_url(opt, "not an http:// or https:// URL", url);
	if (strpbrk(url, " \t\n"))
		return bad_url(opt, "a URL has no spaces", url);
	/* The layout's path is added at the end (SPEC §12.9): after a query
	 * it would be part of the query, after a fragment never sent. */
	if (strpbrk(url, "?#"))
		return bad_url(opt, "a source URL has no ?query or #fragment", url);
	if (!(s = realloc(*list, old + n + 2))) {
		cli_err(NULL, "out of memory");
		return -1;
	}
	if (old)
		s[old++] = ' ';
	memcpy(s + old, url, n + 1);
	*list = s;
	return 0;
}

/* SEC: seconds, a decimal with up to three fractional digits, > 0. */
static int parse_seconds(const char *opt, const char *v, uint32_t max_s, uint32_t *ms)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno || !(d > 0) || d > (double)max_s) {
		cli_err(NULL, "%s: not a number of seconds between 0 and %u: '%s'", opt, max_s, v);
		return -1;
	}
	*ms = (uint32_t)(d * 1000 + 0.5);
	if (!*ms)
		*ms = 1;
	return 0;
}

int cli_fetch_set(struct cli_fetch *f, const char *opt, const char *v)
{
	uint32_t ms;
	int rc = 0;

	if (!strcmp(opt, "--no-fetch"))
		f->no_fetch = 1;
	else if (!strcmp(opt, "--upstream"))
		rc = add_url(&f->upstreams, opt, v);
	else if (!strcmp(opt, "--debuginfod"))
		rc = add_url(&f->debuginfod, opt, v);
	else if (!strcmp(opt, "--fetch-timeout"))
		rc = parse_seconds(opt, v, 86400, &f->timeout_ms);
	else if (!strcmp(opt, "--negative-ttl") && (rc = parse_seconds(opt, v, 30u * 86400, &ms)) == 0)
		f->ttl_s = (ms + 999) / 1000;
	if (rc)
		f->bad = 1;
	return rc;
}

int cli_fetch_arg(struct cli_fetch *f, int argc, char **argv, int *i)
{
	static const char *const valued[] = { "--upstream", "--debuginfod", "--fetch-timeout",
		                              "--negative-ttl" };
	const char *v;
	int m;

	if (!strcmp(argv[*i], "--no-fetch"))
		return cli_fetch_set(f, "--no-fetch", NULL) < 0 ? -1 : 1;
	for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
		if ((m = cli_opt_value(argc, argv, i, valued[k], &v)) != 0)
			return m < 0 || cli_fetch_set(f, valued[k], v) < 0 ? -1 : 1;
	return 0;
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);
	return v && v[strspn(v, " \t\n")] ? v : NULL;
}

/*
 * A proxy variable as libcurl reads it from its own environment: the
 * lowercase name, then the uppercase one, except for http_proxy, whose
 * uppercase HTTP_PROXY is never read (a CGI program's environment carries
 * the client's "Proxy:" header under that name, httpoxy).  NULL: not set.
 */
static const char *curl_proxy(const char *lower)
{
	char upper[32];
	const char *v = getenv(lower);
	size_t i;

	if (v && *v)
		return v;
	if (!strcmp(lower, "http_proxy"))
		return NULL;
	for (i = 0; lower[i] && i + 1 < sizeof upper; i++)
		upper[i] = (char)(lower[i] >= 'a' && lower[i] <= 'z' ? lower[i] - 'a' + 'A' : lower[i]);
	upper[i] = 0;
	v = getenv(upper);
	return v && *v ? v : NULL;
}

const symdb_fetch_opts *cli_fetch_opts(struct cli_fetch *f, const char *indexer)
{
	const char *up = f->upstreams ? f->upstreams : env_nonempty("SYMDB_UPSTREAM");
	const char *dbgd = f->debuginfod ? f->debuginfod : env_nonempty("DEBUGINFOD_URLS");
	const char *t = getenv("DEBUGINFOD_TIMEOUT");
	uint32_t timeout_ms = f->timeout_ms;

	if (f->no_fetch || (!up && !dbgd))
		return NULL;
	/* libdebuginfod's DEBUGINFOD_TIMEOUT is whole seconds. */
	if (!timeout_ms && t && *t) {
		char *end;
		unsigned long s = strtoul(t, &end, 10);
		if (!*end && s > 0 && s <= 86400)
			timeout_ms = (uint32_t)s * 1000;
	}
	memset(&f->build, 0, sizeof f->build);
	f->build.sz = sizeof f->build;
	if (indexer)
		snprintf(f->indexer, sizeof f->indexer, "%s", indexer);
	f->build.indexer_path = f->indexer[0] ? f->indexer : NULL;
	memset(&f->opts, 0, sizeof f->opts);
	f->opts.sz = sizeof f->opts;
	f->opts.flags = isatty(STDERR_FILENO) ? SYMDB_FETCH_PROGRESS : 0;
	f->opts.upstreams = up;
	f->opts.debuginfod_urls = dbgd;
	f->opts.debuginfod_cache = env_nonempty("DEBUGINFOD_CACHE_PATH");
	f->opts.timeout_ms = timeout_ms;
	f->opts.negative_ttl_s = f->ttl_s;
	f->opts.fetcher_path =
	        cli_helper_exe("SYMDB_FETCH", "symdb-fetch", f->fetcher, sizeof f->fetcher);
	f->opts.build = &f->build;
	f->opts.http_proxy = curl_proxy("http_proxy");
	f->opts.https_proxy = curl_proxy("https_proxy");
	f->opts.all_proxy = curl_proxy("all_proxy");
	f->opts.no_proxy = curl_proxy("no_proxy");
	return &f->opts;
}

void cli_fetch_report(const char *hex, int rc, const char *err)
{
	size_t hl = strlen(hex);

	/* The fetcher's progress line is left unfinished when it is killed at
	 * the deadline: the reason starts a line of its own. */
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);

	/* The library's reason starts with the build-id already. */
	if (err && err[0] && strncmp(err, hex, hl) == 0 && err[hl] == ':')
		fprintf(stderr, "symdb: %s\n", err);
	else
		fprintf(stderr, "symdb: %s: %s\n", hex, err && err[0] ? err : symdb_strerror(rc));
}

/* The signal that stops the fetch in progress (symdb_fetch_opts.cancel), 0
 * while none came. */
static volatile sig_atomic_t fetch_signal;

/* The first SIGINT or SIGTERM asks the fetch to stop; a second one ends
 * the process at once, as it would have ended without this handler (the
 * fetch's files are then `symdb gc`'s to remove). */
static void on_fetch_signal(int sig)
{
	if (fetch_signal) {
		signal(sig, SIG_DFL);
		raise(sig); /* delivered when this handler returns */
		return;
	}
	fetch_signal = sig;
}

int cli_fetch_run(symdb_builder *b, const symdb_uuid *id, symdb_fetch_opts *o,
                  symdb_fetch_result *res)
{
	static const int sigs[2] = { SIGINT, SIGTERM };
	struct sigaction sa, old[2];
	int caught[2];

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fetch_signal;
	sa.sa_flags = SA_RESTART; /* the library's reads and waits go on; its
	                           * waits for the fetcher and the indexer
	                           * look at the flag */
	sigemptyset(&sa.sa_mask);
	fetch_signal = 0;
	/* An ignored signal stays ignored (nohup, a script's background job). */
	for (int i = 0; i < 2; i++)
		caught[i] = sigaction(sigs[i], NULL, &old[i]) == 0 && old[i].sa_handler != SIG_IGN &&
		            sigaction(sigs[i], &sa, NULL) == 0;
	o->cancel = &fetch_signal;
	int rc = symdb_fetch(b, id, o, res);
	o->cancel = NULL;
	for (int i = 0; i < 2; i++)
		if (caught[i])
			sigaction(sigs[i], &old[i], NULL);
	if (fetch_signal) {
		/* The fetch has removed its files: say so in one line, then
		 * end by the signal, as the process would have. */
		if (rc == -EINTR) {
			char hex[2 * SYMDB_UUID_MAX + 1];
			symdb_uuid_format(id, hex);
			cli_fetch_report(hex, rc, o->errbuf_sz ? o->errbuf : NULL);
		}
		raise(fetch_signal);
	}
	return rc;
}
