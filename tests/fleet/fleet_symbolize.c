/* SPDX-License-Identifier: MIT */
/*
 * fleet_symbolize.c - drives symdb_symbolize() with SYMDB_SYMBOLIZER_FETCH
 * for tests/fleet/symbolize.sh: every request names its image by hex only,
 * so an image the database lacks is fetched on first sight.
 *
 *   fleet_symbolize DB FETCHER INDEXER TIMEOUT_MS UPSTREAMS DEBUGINFOD HEX:ADDR...
 *
 * UPSTREAMS / DEBUGINFOD: URLs separated by spaces, or "".  One call for
 * all requests; then, per request in order, "HEX ADDR ok" (ADDR as given) and the frames
 * innermost first as llvm-symbolizer prints them ("NAME" and
 * "FILE:LINE:COL"), or "HEX ADDR not_indexed ERROR-NAME".
 */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symdb_fetch.h"

static void print_frame(const symdb_frame *f)
{
	printf("%s\n", f->name ? f->name : "??");
	if (!f->file)
		printf("??:0:0\n");
	else
		printf("%s:%u:%u\n", f->file, f->line, f->column);
}

int main(int argc, char **argv)
{
	symdb *db = NULL;
	symdb_symbolizer *s = NULL;
	char err[1024] = "";
	int n = argc - 7, rc;

	if (argc < 8) {
		fprintf(stderr, "usage: fleet_symbolize DB FETCHER INDEXER TIMEOUT_MS UPSTREAMS "
		                "DEBUGINFOD HEX:ADDR...\n");
		return 2;
	}
	symdb_request *rq = calloc((size_t)n, sizeof *rq);
	symdb_symbolized *res = calloc((size_t)n, sizeof *res);
	char **hex = calloc((size_t)n, sizeof *hex);
	SYMDB_OPTS(symdb_build_opts, bo, .indexer_path = argv[3]);
	SYMDB_OPTS(symdb_fetch_opts, fo, .fetcher_path = argv[2], .timeout_ms = (uint32_t)atoi(argv[4]),
	           .upstreams = argv[5], .debuginfod_urls = argv[6], .build = &bo);
	SYMDB_OPTS(symdb_symbolizer_opts, so, .flags = SYMDB_SYMBOLIZER_FETCH, .fetch = &fo,
	           .errbuf = err, .errbuf_sz = sizeof err);
	SYMDB_OPTS(symdb_open_opts, oo, .errbuf = err, .errbuf_sz = sizeof err);
	if (!rq || !res || !hex)
		return 1;
	if ((rc = symdb_open(argv[1], &oo, &db)) != 0 ||
	    (rc = symdb_symbolizer_create(db, &so, &s)) != 0) {
		fprintf(stderr, "fleet_symbolize: %s\n", err[0] ? err : symdb_strerror(rc));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char *colon = strchr(argv[7 + i], ':');
		if (!colon)
			return 2;
		hex[i] = strndup(argv[7 + i], (size_t)(colon - argv[7 + i]));
		rq[i].image_ref = SYMDB_IMAGE_HEX;
		rq[i].image.hex = hex[i];
		rq[i].addr_kind = SYMDB_ADDR_VADDR;
		rq[i].addr = strtoull(colon + 1, NULL, 0);
	}
	SYMDB_OPTS(symdb_symbolize_opts, sy, .errbuf = err, .errbuf_sz = sizeof err);
	if ((rc = symdb_symbolize(s, rq, (size_t)n, res, &sy)) != 0) {
		fprintf(stderr, "fleet_symbolize: symdb_symbolize: %s\n",
		        err[0] ? err : symdb_strerror(rc));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (res[i].status != SYMDB_SYM_OK) {
			printf("%s %s status %d %s\n", hex[i], strchr(argv[7 + i], ':') + 1,
			       res[i].status, symdb_strerror(res[i].error));
			continue;
		}
		printf("%s %s ok\n", hex[i], strchr(argv[7 + i], ':') + 1);
		for (uint32_t k = 0; k < res[i].nframes; k++)
			print_frame(&res[i].frames[k]);
		if (!res[i].nframes)
			printf("%s\n??:0:0\n", res[i].sym_name ? res[i].sym_name : "??");
	}
	symdb_symbolizer_free(s);
	symdb_close(db);
	for (int i = 0; i < n; i++)
		free(hex[i]);
	free(hex);
	free(rq);
	free(res);
	return 0;
}
