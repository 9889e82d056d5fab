/* SPDX-License-Identifier: MIT */
/*
 * cli_live_pid.c - `symdb query --pid PID`: the requests are runtime
 * addresses of a live process.  Each batch is placed by the library
 * (symdb_proc_symbolize() without results: the mapping, the module mapped
 * there, opened or indexed on first sight, and the address normalised to
 * the module's vaddr); each request then names that module, as if the
 * input had been "FILE VADDR" lines, and goes through the ordinary batch
 * (one symdb_symbolize() call, printing in every style).  The module's
 * name is the mapping's path as /proc/PID/maps shows it (JSON ModuleName).
 *
 * An address the library could not place (no mapping, the process gone,
 * no access, a file that cannot be indexed, anonymous memory) belongs to a
 * module that "could not be opened": it prints as llvm-symbolizer prints
 * an unreadable file ("??"; JSON: its Error), its reason is said once on
 * stderr, and the exit status is 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_query.h"

struct cli_live {
	symdb_proc_cache *cache;
	uint64_t *addrs;
	symdb_proc_addr *where;
	size_t cap;
	uint32_t none_mod; /* no_module()'s index + 1, 0 until made */
	void *jit;         /* cli_live_jit.c's state */
};

static const char *status_text(const symdb_proc_addr *w, char *buf, size_t sz)
{
	switch (w->status) {
	case SYMDB_PROC_NO_MAPPING: return "no mapping at this address";
	case SYMDB_PROC_GONE: return "the process exited";
	case SYMDB_PROC_ANON: return "anonymous memory: no file to symbolize from";
	case SYMDB_PROC_NO_SEGMENT: return "in the file's mapping but in none of its segments";
	case SYMDB_PROC_JIT: return "JIT code: not printed by this command";
	default: break;
	}
	snprintf(buf, sz, "%s", symdb_strerror(w->error ? w->error : SYMDB_E_NOT_FOUND));
	return buf;
}

/* The module for a placed address: the mapping's path with its image, or a
 * failed module named by path (or "") and reason.  Found again by name,
 * image and reason, so one reason is reported once. */
static uint32_t module_for(struct query *q, const symdb_proc_addr *w)
{
	char buf[256];
	const char *name = w->module ? w->module : "";
	int ok = w->status == SYMDB_PROC_OK && w->image;
	const char *why = ok ? NULL : status_text(w, buf, sizeof buf);
	for (size_t i = q->nmods; i-- > 0;) {
		struct module *m = &q->mods[i];
		if (strcmp(m->name, name) != 0 || i + 1 == q->live->none_mod)
			continue;
		if (ok ? m->img == w->image : (m->state < 0 && strcmp(m->error, why) == 0))
			return (uint32_t)i;
	}
	q->mods = cli_query_grow(q->mods, &q->mods_cap, q->nmods + 1, sizeof(*q->mods));
	struct module *m = &q->mods[q->nmods];
	memset(m, 0, sizeof(*m));
	m->name = strdup(name);
	m->len = strlen(name);
	m->ctx_img = 1; /* the symbolizer context's: never closed here */
	m->img = ok ? (symdb_image *)w->image : NULL;
	m->state = ok ? 1 : -CLI_EXIT_FAILED;
	m->error = why ? strdup(why) : NULL;
	if (!m->name || (why && !m->error)) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	if (!ok) {
		char what[64];
		snprintf(what, sizeof what, "pid %d", q->pid);
		if (name[0])
			cli_err(what, "%s: %s", name, why);
		else
			cli_err(what, "%s", why);
		if (q->module_failed < CLI_EXIT_FAILED)
			q->module_failed = CLI_EXIT_FAILED;
	}
	return (uint32_t)q->nmods++;
}

/* The module of requests that are not placed: no image, no error. */
static uint32_t no_module(struct query *q)
{
	struct cli_live *l = q->live;
	if (l->none_mod)
		return l->none_mod - 1;
	q->mods = cli_query_grow(q->mods, &q->mods_cap, q->nmods + 1, sizeof(*q->mods));
	struct module *m = &q->mods[q->nmods];
	memset(m, 0, sizeof(*m));
	m->name = strdup("");
	m->state = 1;
	m->ctx_img = 1;
	if (!m->name) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	l->none_mod = (uint32_t)++q->nmods;
	return l->none_mod - 1;
}

static int live_open(struct query *q)
{
	char err[512] = "";
	const char *tmp = getenv("TMPDIR");
	q->live = calloc(1, sizeof *q->live);
	if (!q->live)
		return -ENOMEM;
	symdb_proc_jit_fn jit = cli_live_jit_fn(&q->live->jit);
	SYMDB_OPTS(symdb_proc_opts, po, .errbuf = err, .errbuf_sz = sizeof err,
	           .tmp_dir = tmp && tmp[0] == '/' ? tmp : NULL, .jit_lookup = jit,
	           .jit_arg = q->live->jit);
	int rc = symdb_proc_cache_create(q->sym, &po, &q->live->cache);
	if (rc < 0)
		cli_err_lib("query", rc, err);
	return rc;
}

int cli_live_prepare(struct query *q)
{
	if (!q->live && live_open(q) < 0)
		return -ENOMEM;
	struct cli_live *l = q->live;
	if (q->nreq > l->cap) {
		size_t cap = l->cap;
		l->addrs = cli_query_grow(l->addrs, &cap, q->nreq, sizeof(*l->addrs));
		cap = l->cap;
		l->where = cli_query_grow(l->where, &cap, q->nreq, sizeof(*l->where));
		l->cap = cap;
	}
	q->xaddr = cli_query_grow(q->xaddr, &q->xaddr_cap, q->nreq, sizeof(*q->xaddr));
	size_t m = 0;
	for (size_t i = 0; i < q->nreq; i++)
		if (q->req[i].kind == REQ_CODE || q->req[i].kind == REQ_DATA)
			l->addrs[m++] = q->req[i].addr - q->adjust_vma;
	char err[512] = "";
	cli_live_jit_batch(l->jit);
	SYMDB_OPTS(symdb_proc_call_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	int rc = m ? symdb_proc_symbolize(l->cache, q->pid, l->addrs, m, l->where, NULL, &o) : 0;
	if (rc < 0) {
		/* errbuf is "/proc/PID/...: reason" */
		char what[64];
		snprintf(what, sizeof what, "pid %d", q->pid);
		if (err[0])
			cli_err(NULL, "%s", err);
		else
			cli_err(what, "%s", symdb_strerror(rc));
		return rc;
	}
	m = 0;
	for (size_t i = 0; i < q->nreq; i++) {
		struct request *rq = &q->req[i];
		rq->jit_name = NULL;
		if (rq->kind != REQ_CODE && rq->kind != REQ_DATA) {
			rq->mod = no_module(q); /* echoed, or FRAME: nothing to place */
			continue;
		}
		const symdb_proc_addr *w = &l->where[m++];
		if (w->status == SYMDB_PROC_JIT && w->jit.name) {
			/* named by the perf map, printed as such */
			rq->jit_name = w->jit.name;
			rq->jit_start = w->jit.start;
			rq->jit_size = w->jit.size;
			rq->mod = no_module(q);
			q->xaddr[i] = SYMDB_ADDR_INVALID;
			continue;
		}
		rq->mod = module_for(q, w);
		q->xaddr[i] = w->vaddr;
	}
	return 0;
}

void cli_live_free(struct query *q)
{
	if (!q->live)
		return;
	symdb_proc_cache_free(q->live->cache);
	cli_live_jit_free(q->live->jit);
	free(q->live->addrs);
	free(q->live->where);
	free(q->live);
	q->live = NULL;
	free(q->xaddr);
}
