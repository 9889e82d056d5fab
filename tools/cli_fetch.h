/* SPDX-License-Identifier: MIT */
/*
 * cli_fetch.h - the fetch options every command that meets unknown images
 * shares (`symdb build --build-id`, `symdb query`, `symdb serve`): the
 * command line and the environment mapped into one symdb_fetch_opts
 * (symdb_fetch.h).  The library reads no environment; this file does.
 *
 *   --upstream URL      an upstream index store (repeatable, tried in order;
 *                       else $SYMDB_UPSTREAM, URLs separated by spaces)
 *   --debuginfod URL    a debuginfod server (repeatable; else $DEBUGINFOD_URLS)
 *   --fetch-timeout S   the whole fetch's deadline in seconds (else
 *                       $DEBUGINFOD_TIMEOUT, else 30)
 *   --negative-ttl S    how long "nobody has it" is remembered (600)
 *   --no-fetch          fetch nothing, whatever the environment says
 *   $DEBUGINFOD_CACHE_PATH  libdebuginfod's download cache (else DB/debuginfod-cache)
 *   $SYMDB_FETCH        the symdb-fetch executable (else the one beside symdb)
 *   $http_proxy, $https_proxy, $all_proxy, $no_proxy (or uppercase, but
 *                       never HTTP_PROXY)  proxies, as curl reads them
 */
#ifndef SYMDB_CLI_FETCH_H
#define SYMDB_CLI_FETCH_H

#include <stdint.h>

#include "cli_util.h"
#include "symdb_fetch.h"

struct cli_fetch {
	char *upstreams;       /* --upstream URLs joined by spaces, or NULL */
	char *debuginfod;      /* --debuginfod URLs joined by spaces, or NULL */
	uint32_t timeout_ms;   /* --fetch-timeout, 0 = not given */
	uint32_t ttl_s;        /* --negative-ttl, 0 = not given */
	int no_fetch;          /* --no-fetch */
	int bad;               /* an option had a bad value (reported) */
	char fetcher[4096];    /* the symdb-fetch beside this executable */
	char indexer[4096];    /* cli_fetch_opts()'s indexer, copied */
	symdb_build_opts build;
	symdb_fetch_opts opts; /* cli_fetch_opts() fills it */
};

/* Zero f. */
CLI_HIDDEN void cli_fetch_init(struct cli_fetch *f);

/* Set option opt ("--upstream", ..., "--no-fetch" with v NULL) to v:
 * 0, or -1 for a bad value (reported on stderr, f->bad set). */
CLI_HIDDEN int cli_fetch_set(struct cli_fetch *f, const char *opt, const char *v);

/* If argv[*i] is a fetch option, take it (and its value, advancing *i):
 * 1 taken, 0 not a fetch option, -1 a bad value (reported on stderr). */
CLI_HIDDEN int cli_fetch_arg(struct cli_fetch *f, int argc, char **argv, int *i);

/* The options with the environment applied, or NULL when there is nothing
 * to fetch from (no source, or --no-fetch).  indexer: symdb-indexer for a
 * debuginfod download, or NULL (copied).  The result points into f. */
CLI_HIDDEN const symdb_fetch_opts *cli_fetch_opts(struct cli_fetch *f, const char *indexer);

/* Free what f holds. */
CLI_HIDDEN void cli_fetch_free(struct cli_fetch *f);

/* "symdb: ERR" for a failed symdb_fetch(): one line on stderr. */
CLI_HIDDEN void cli_fetch_report(const char *hex, int rc, const char *err);

/* symdb_fetch(b, id, o, res) with SIGINT and SIGTERM caught while it runs
 * (unless ignored): a signal stops the fetch, which kills the fetcher and
 * removes its files in DB/tmp (o->cancel); the fetch's one line is
 * reported, and the process then ends by that signal, as it did without
 * the handler.  A second signal ends it at once.  Returns symdb_fetch()'s
 * code when no signal came. */
CLI_HIDDEN int cli_fetch_run(symdb_builder *b, const symdb_uuid *id, symdb_fetch_opts *o,
                             symdb_fetch_result *res);

#endif /* SYMDB_CLI_FETCH_H */
