/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize_fetch.c - fetch on first sight (SYMDB_SYMBOLIZER_FETCH):
 * an image a symbolizer context is asked about by UUID alone, that its
 * database lacks, is fetched with symdb_fetch() (upstream index stores,
 * then debuginfod), published through the context's builder, and opened.
 *
 * The fetches of one symdb_symbolize() call share one deadline: a batch
 * naming fifty unknown images from a dead server costs the batch at most
 * timeout_ms, not fifty times that.  Once it has passed, the remaining
 * images of the call fail at once with -ETIMEDOUT.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fetch_internal.h"
#include "reader_symbolize.h"

static char *dup_or_null(const char *s, int *nomem)
{
	char *d = s ? strdup(s) : NULL;
	if (s && !d)
		*nomem = 1;
	return d;
}

int rd_sym_fetch_init(symdb_symbolizer *s, const struct symdb_fetch_opts *f)
{
	symdb_fetch_opts *o;
	symdb_build_opts *bo;
	int nomem = 0;

	if (f->sz < sizeof f->sz)
		return SYMDB_E_INVAL;
	o = calloc(1, sizeof *o);
	bo = calloc(1, sizeof *bo);
	if (!o || !bo) {
		free(o);
		free(bo);
		return -ENOMEM;
	}
	memcpy(o, f, f->sz < sizeof *o ? f->sz : sizeof *o);
	o->sz = sizeof *o;
	o->errbuf = NULL; /* each fetch gets the context's own */
	o->errbuf_sz = 0;
	o->upstreams = dup_or_null(o->upstreams, &nomem);
	o->debuginfod_urls = dup_or_null(o->debuginfod_urls, &nomem);
	o->debuginfod_cache = dup_or_null(o->debuginfod_cache, &nomem);
	o->fetcher_path = dup_or_null(o->fetcher_path, &nomem);
	o->http_proxy = dup_or_null(o->http_proxy, &nomem);
	o->https_proxy = dup_or_null(o->https_proxy, &nomem);
	o->all_proxy = dup_or_null(o->all_proxy, &nomem);
	o->no_proxy = dup_or_null(o->no_proxy, &nomem);
	if (o->build)
		memcpy(bo, o->build, o->build->sz < sizeof *bo ? o->build->sz : sizeof *bo);
	bo->sz = sizeof *bo;
	bo->errbuf = NULL;
	bo->errbuf_sz = 0;
	bo->debug_dir = NULL;
	/* The indexer of a debuginfod download: the caller's, else the one
	 * first sight runs. */
	bo->indexer_path = dup_or_null(bo->indexer_path ? bo->indexer_path : s->indexer_path,
	                               &nomem);
	o->build = bo;
	s->fetch = o;
	return nomem ? -ENOMEM : 0;
}

void rd_sym_fetch_fini(symdb_symbolizer *s)
{
	symdb_fetch_opts *o = s->fetch;

	if (!o)
		return;
	free((char *)o->upstreams);
	free((char *)o->debuginfod_urls);
	free((char *)o->debuginfod_cache);
	free((char *)o->fetcher_path);
	free((char *)o->http_proxy);
	free((char *)o->https_proxy);
	free((char *)o->all_proxy);
	free((char *)o->no_proxy);
	if (o->build)
		free((char *)o->build->indexer_path);
	free((void *)o->build);
	free(o);
	s->fetch = NULL;
}

int rd_sym_fetch(symdb_symbolizer *s, const symdb_uuid *id, unsigned names, symdb_image **img)
{
	uint32_t budget = s->fetch->timeout_ms ? s->fetch->timeout_ms : 30000u;
	int64_t now = rd_fetch_now_ms(), left;
	int rc;

	*img = NULL;
	s->build_err[0] = '\0';
	if (s->fetch_call != s->call) {
		s->fetch_call = s->call;
		s->fetch_deadline = now + budget;
	}
	left = s->fetch_deadline - now;
	if (left <= 0)
		return fmt_err(s->build_err, sizeof s->build_err, -ETIMEDOUT,
		               "fetch: this call's deadline (%u ms) has passed", budget);
	if (!s->builder) {
		SYMDB_OPTS(symdb_build_opts, bo, .errbuf = s->build_err,
		           .errbuf_sz = sizeof s->build_err);
		if ((rc = symdb_builder_open(symdb_dir(s->db), &bo, &s->builder)) != 0)
			return rc;
	}
	symdb_fetch_opts o = *s->fetch;
	o.timeout_ms = (uint32_t)left;
	o.errbuf = s->build_err;
	o.errbuf_sz = sizeof s->build_err;
	rc = symdb_fetch(s->builder, id, &o, NULL);
	if (rc)
		return rc;
	SYMDB_OPTS(symdb_open_opts, oo, .flags = s->open_flags | names, .errbuf = s->build_err,
	           .errbuf_sz = sizeof s->build_err);
	return symdb_image_open_uuid(s->db, id, &oo, img);
}
