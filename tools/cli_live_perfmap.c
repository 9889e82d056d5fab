/* SPDX-License-Identifier: MIT */
/*
 * cli_live_perfmap.c - `symdb query --perf-map FILE [ADDR...]`: runtime
 * addresses of JIT-compiled code answered from a perf map or a jitdump
 * (symdb_perfmap_*), printed in the query's output styles (LLVM, GNU,
 * JSON) as llvm-symbolizer prints a function without line information.
 *
 * No database is opened: a perf map is its own index.  Requests are read
 * as `symdb query` reads them (CODE/DATA/FRAME prefixes, llvm's radix
 * rules, unparsable lines echoed).  From stdin, each read(2) is a batch,
 * so a profiler can keep one process running and feed it addresses; when a
 * batch has an address the map does not cover, the map is refreshed once
 * (the JIT may have written that code since) and the misses are looked up
 * again.  Malformed lines of the map are counted and reported in one line
 * on stderr, once per read that skipped new ones.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_query.h"

struct pm_req {
	const char *text;
	size_t len;
	uint64_t addr;
	int kind;     /* REQ_* */
	int found;
	symdb_perfmap_sym sym;
};

struct pm_run {
	struct query *q;
	symdb_perfmap *map;   /* NULL: the map could not be read */
	char *error;          /* why (JSON Error.Message) */
	uint64_t skipped_told;
	struct pm_req *req;
	size_t nreq, cap;
};

/* One request, as cli_query_input.c's parse_request reads it. */
static void parse(struct pm_req *r, const char *s, size_t n)
{
	memset(r, 0, sizeof *r);
	r->text = s;
	r->len = n;
	r->kind = cli_query_req_kind(&s, &n);
	if (cli_query_req_addr(s, n, &r->addr) != 0)
		r->kind = REQ_INVALID;
}

static void add(struct pm_run *run, const char *s, size_t n)
{
	run->req = cli_query_grow(run->req, &run->cap, run->nreq + 1, sizeof *run->req);
	parse(&run->req[run->nreq++], s, n);
}

/* One line on stderr when reads skipped lines not reported yet. */
static void tell_skipped(struct pm_run *run)
{
	SYMDB_OPTS(symdb_perfmap_stats, st);
	if (!run->map || symdb_perfmap_get_stats(run->map, &st) < 0 ||
	    st.skipped == run->skipped_told)
		return;
	char longs[64] = "";
	if (st.long_lines)
		snprintf(longs, sizeof longs, "; %llu too long", (unsigned long long)st.long_lines);
	cli_err(symdb_perfmap_path(run->map), "%llu malformed line%s skipped (first: line %llu%s)",
	        (unsigned long long)st.skipped, st.skipped == 1 ? "" : "s",
	        (unsigned long long)st.first_skipped_line, longs);
	run->skipped_told = st.skipped;
}

static int lookup_all(struct pm_run *run)
{
	int misses = 0;
	for (size_t i = 0; i < run->nreq; i++) {
		struct pm_req *r = &run->req[i];
		if ((r->kind != REQ_CODE && r->kind != REQ_DATA) || r->found)
			continue;
		r->sym.sz = sizeof r->sym;
		r->found = run->map && symdb_perfmap_lookup(run->map, r->addr, &r->sym) == 0;
		misses += !r->found;
	}
	return misses;
}

static void print_one(struct pm_run *run, const struct pm_req *r)
{
	struct cli_printer *p = &run->q->pr;
	const char *name = r->found ? r->sym.name : NULL;
	switch (r->kind) {
	case REQ_INVALID:
		cli_print_invalid(p, r->text, r->len);
		break;
	case REQ_FRAME:
		cli_print_frame_cmd(p, r->addr);
		break;
	case REQ_DATA:
		cli_print_data(p, r->addr, name, r->found ? r->sym.start : 0,
		               r->found ? r->sym.size : 0);
		break;
	default:
		if (!run->map && p->style == CLI_STYLE_JSON) {
			cli_print_error(p, r->addr, run->error);
			break;
		}
		struct cli_line_info li;
		memset(&li, 0, sizeof li);
		if (name && p->fn_kind != CLI_FN_NONE) {
			li.name = name;
			li.start = r->sym.start;
			li.has_start = 1;
		}
		cli_print_code(p, r->addr, &li, 1);
	}
}

/* Answer the requests read so far: look up, refresh once if some address
 * is not covered, look up the misses again, print in input order. */
static void run_batch(struct pm_run *run)
{
	if (lookup_all(run) && run->map) {
		char eb[512] = "";
		SYMDB_OPTS(symdb_perfmap_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
		int rc = symdb_perfmap_refresh(run->map, &o);
		if (rc < 0)
			cli_err_lib(symdb_perfmap_path(run->map), rc, eb);
		else if (rc > 0) {
			/* Names of earlier lookups went with the old table. */
			for (size_t i = 0; i < run->nreq; i++)
				run->req[i].found = 0;
			lookup_all(run);
		}
	}
	tell_skipped(run);
	for (size_t i = 0; i < run->nreq; i++)
		print_one(run, &run->req[i]);
	run->nreq = 0;
}

/* cli_query_stdin_loop's take: the complete lines of buf[0..len) are
 * this read's batch, answered here (q->nreq stays 0: the loop only
 * flushes). */
static ptrdiff_t take_lines(void *arg, char *buf, size_t len, int eof)
{
	struct pm_run *run = arg;
	size_t off = 0;
	for (;;) {
		size_t take = cli_llvm_piece_len(buf + off, len - off, eof);
		if (!take)
			break;
		size_t w = take;
		while (w && (buf[off + w - 1] == '\n' || buf[off + w - 1] == '\r'))
			w--;
		add(run, buf + off, w);
		off += take;
	}
	if (run->nreq)
		run_batch(run);
	return (ptrdiff_t)off;
}

int cli_live_perfmap_execute(struct query *q, char **addrs, int naddr)
{
	if (q->pr.style == CLI_STYLE_ATOS || q->obj || q->uuid_hex || q->build_id_hex) {
		cli_err(NULL, "query: --perf-map takes no --obj, --uuid, --build-id or "
		              "--output-style=atos");
		return CLI_EXIT_USAGE;
	}
	struct pm_run run = { .q = q };
	char eb[1024] = "";
	SYMDB_OPTS(symdb_perfmap_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
	int rc = symdb_perfmap_open(q->perf_map, &o, &run.map);
	int ex = CLI_EXIT_OK;
	if (rc < 0) {
		/* Every address still gets its answer ("??"), as for an --obj
		 * that cannot be read; the exit status says it failed. */
		cli_err_lib(q->perf_map, rc, eb);
		run.error = strdup(eb[0] ? eb : symdb_strerror(rc));
		ex = CLI_EXIT_FAILED;
	}
	q->pr.module = q->perf_map;
	q->pr.json_list = naddr > 0;
	cli_print_begin(&q->pr);
	if (naddr > 0) {
		for (int i = 0; i < naddr; i++)
			add(&run, addrs[i], strlen(addrs[i]));
		run_batch(&run);
		rc = 0;
	} else {
		rc = cli_query_stdin_loop(q, take_lines, &run);
	}
	cli_print_end(&q->pr);
	if (rc < 0 && ex == CLI_EXIT_OK)
		ex = cli_exit_for(rc);
	symdb_perfmap_close(run.map);
	free(run.error);
	free(run.req);
	return ex;
}
