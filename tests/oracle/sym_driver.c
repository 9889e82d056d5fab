/* SPDX-License-Identifier: MIT */
/*
 * sym_driver DB [--no-demangle] [--order | --stream] < BATCH: one
 * symdb_symbolize() call over a batch read from stdin, printed in
 * llvm-symbolizer-14's default LLVM style (every inlined frame: name, then
 * file:line:column; a blank line after each request), in input order.
 * --order asks for the results in resolution order (SYMDB_SYMBOLIZE_ORDER)
 * and puts them back in input order with symdb_symbolizer_order();
 * --stream takes them chunk by chunk from on_results, without a results
 * array (SYMDB_SYMBOLIZE_STREAM), formats each there and prints the texts
 * in input order.  A request that llvm-symbolizer would
 * answer from the binary itself but symdb cannot (image not indexed, no
 * image, address out of range, damaged) prints its status name instead.
 *
 * Each input line is one request:
 *   path FILE KIND ADDR [LOAD]   the image of a binary
 *   hex HEXID KIND ADDR [LOAD]   the image of a build-id / UUID
 * KIND is vaddr, offset, fileoff or runtime (LOAD: its load address).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symdb.h"

static int kind_of(const char *s)
{
	static const char *names[] = { "vaddr", "offset", "fileoff", "runtime" };
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* The LLVM-style text of one result into a malloc'd string. */
static char *format_result(const symdb_symbolized *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	if (r->status != SYMDB_SYM_OK && r->status != SYMDB_SYM_NO_SYMBOL) {
		fprintf(f, "%s\n\n", r->status == SYMDB_SYM_NOT_INDEXED    ? "NOT_INDEXED"
		                      : r->status == SYMDB_SYM_OUT_OF_RANGE ? "OUT_OF_RANGE"
		                      : r->status == SYMDB_SYM_DAMAGED      ? "DAMAGED"
		                      : r->status == SYMDB_SYM_NO_IMAGE     ? "NO_IMAGE"
		                                                            : "?");
	} else {
		if (!r->nframes)
			fprintf(f, "??\n??:0:0\n");
		for (uint32_t i = 0; i < r->nframes; i++) {
			const symdb_frame *fr = &r->frames[i];
			fprintf(f, "%s\n%s:%u:%u\n", fr->name ? fr->name : "??",
			        fr->file ? fr->file : "??", fr->line, fr->column);
		}
		fprintf(f, "\n");
	}
	fclose(f);
	return text;
}

/* on_results of --stream: each result's text at its request's index. */
static void stream_results(void *arg, const symdb_symbolized *res, const uint32_t *order,
                           size_t first, size_t count)
{
	char **texts = arg;
	(void)first;
	for (size_t i = 0; i < count; i++)
		texts[order[i]] = format_result(&res[i]);
}

static const char *status_name(int st)
{
	switch (st) {
	case SYMDB_SYM_NOT_INDEXED: return "NOT_INDEXED";
	case SYMDB_SYM_OUT_OF_RANGE: return "OUT_OF_RANGE";
	case SYMDB_SYM_DAMAGED: return "DAMAGED";
	case SYMDB_SYM_NO_IMAGE: return "NO_IMAGE";
	default: return "?";
	}
}

/* The parsed batch: the requests and the image names they point into. */
static void free_requests(symdb_request *reqs, char **refs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(refs[i]);
	free(refs);
	free(reqs);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sym_driver DB [--no-demangle] < BATCH\n");
		return 2;
	}
	int demangle = 1, ordered = 0, stream = 0;
	for (int a = 2; a < argc; a++) {
		if (strcmp(argv[a], "--no-demangle") == 0)
			demangle = 0;
		else if (strcmp(argv[a], "--order") == 0)
			ordered = 1;
		else if (strcmp(argv[a], "--stream") == 0)
			stream = 1;
	}
	size_t n = 0, cap = 1024;
	symdb_request *reqs = calloc(cap, sizeof(*reqs));
	char **refs = calloc(cap, sizeof(*refs));
	char line[8192], ref[8], name[4096], kind[16];
	unsigned long long addr, load;
	while (fgets(line, sizeof line, stdin)) {
		load = 0;
		int got = sscanf(line, "%7s %4095s %15s %llx %llx", ref, name, kind, &addr, &load);
		if (got < 4 || kind_of(kind) < 0 ||
		    (strcmp(ref, "path") != 0 && strcmp(ref, "hex") != 0)) {
			fprintf(stderr, "sym_driver: bad line: %s", line);
			return 2;
		}
		if (n == cap) {
			cap *= 2;
			reqs = realloc(reqs, cap * sizeof(*reqs));
			refs = realloc(refs, cap * sizeof(*refs));
		}
		symdb_request *r = &reqs[n];
		memset(r, 0, sizeof(*r));
		refs[n] = strdup(name);
		r->image_ref = ref[0] == 'p' ? SYMDB_IMAGE_PATH : SYMDB_IMAGE_HEX;
		if (r->image_ref == SYMDB_IMAGE_PATH)
			r->image.path = refs[n];
		else
			r->image.hex = refs[n];
		r->addr_kind = (uint8_t)kind_of(kind);
		r->addr = addr;
		r->load_address = load;
		r->flags = demangle ? SYMDB_REQ_DEMANGLE : 0;
		n++;
	}
	symdb *db;
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, oo, .errbuf = err, .errbuf_sz = sizeof err);
	int rc = symdb_open(argv[1], &oo, &db);
	if (rc) {
		fprintf(stderr, "sym_driver: %s: %s\n", argv[1], err[0] ? err : symdb_strerror(rc));
		return 1;
	}
	symdb_symbolizer *s;
	SYMDB_OPTS(symdb_symbolizer_opts, so, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS,
	           .errbuf = err, .errbuf_sz = sizeof err);
	if ((rc = symdb_symbolizer_create(db, &so, &s)) != 0) {
		fprintf(stderr, "sym_driver: %s\n", err);
		return 1;
	}
	if (stream) {
		char **texts = calloc(n ? n : 1, sizeof(*texts));
		SYMDB_OPTS(symdb_symbolize_opts, so2,
		           .flags = SYMDB_SYMBOLIZE_ORDER | SYMDB_SYMBOLIZE_STREAM, .errbuf = err,
		           .errbuf_sz = sizeof err, .on_results = stream_results,
		           .on_results_arg = texts);
		if ((rc = symdb_symbolize(s, reqs, n, NULL, &so2)) != 0) {
			fprintf(stderr, "sym_driver: symdb_symbolize: %s\n", err);
			return 1;
		}
		for (size_t i = 0; i < n; i++) {
			if (!texts[i]) {
				fprintf(stderr, "sym_driver: request %zu got no result\n", i);
				return 1;
			}
			fputs(texts[i], stdout);
			free(texts[i]);
		}
		free(texts);
		symdb_symbolizer_free(s);
		symdb_close(db);
		free_requests(reqs, refs, n);
		return 0;
	}
	symdb_symbolized *res = calloc(n ? n : 1, sizeof(*res));
	size_t *at = calloc(n ? n : 1, sizeof(*at)); /* request -> its result */
	SYMDB_OPTS(symdb_symbolize_opts, o, .flags = ordered ? SYMDB_SYMBOLIZE_ORDER : 0,
	           .errbuf = err, .errbuf_sz = sizeof err);
	if ((rc = symdb_symbolize(s, reqs, n, res, &o)) != 0) {
		fprintf(stderr, "sym_driver: symdb_symbolize: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		at[i] = i;
	if (ordered) {
		size_t norder;
		const uint32_t *order = symdb_symbolizer_order(s, &norder);
		if (norder != n) {
			fprintf(stderr, "sym_driver: order has %zu entries for %zu\n", norder, n);
			return 1;
		}
		for (size_t k = 0; k < n; k++)
			at[order[k]] = k;
	}
	for (size_t i = 0; i < n; i++) {
		const symdb_symbolized *r = &res[at[i]];
		if (r->status != SYMDB_SYM_OK && r->status != SYMDB_SYM_NO_SYMBOL) {
			printf("%s\n\n", status_name(r->status));
			continue;
		}
		if (!r->nframes)
			printf("??\n??:0:0\n");
		for (uint32_t f = 0; f < r->nframes; f++) {
			const symdb_frame *fr = &r->frames[f];
			printf("%s\n%s:%u:%u\n", fr->name ? fr->name : "??", fr->file ? fr->file : "??",
			       fr->line, fr->column);
		}
		printf("\n");
	}
	free(res);
	free(at);
	symdb_symbolizer_free(s);
	symdb_close(db);
	free_requests(reqs, refs, n);
	return 0;
}
