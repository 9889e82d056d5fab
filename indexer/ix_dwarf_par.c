/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_par.c - runs the DWARF walk of one image on several threads and
 * merges the results so that the index is byte-identical to one thread's.
 *
 * What a walk adds to the image is order-dependent: strings get pool offsets,
 * FILES and nodes get indexes, in the order of their first use.  Shard 0
 * adds to the image itself; shard i > 0 to a private image.  Merging shard
 * i replays its private additions, in their own order, into the image:
 *
 *  - a single thread would have made exactly the additions of shard 0, then
 *    those of shard 1, ..., each minus the ones already present (the walk
 *    of a unit depends on nothing but the input and, through the FUNCTIONS
 *    and file-table caches, on whether something was added before; a cache
 *    hit only skips additions that are already present);
 *  - so replaying each shard's first-use sequence with deduplication gives
 *    the same pool, FILES and FUNCTIONS in the same order, and nodes (never
 *    shared) shifted by the count of the shards before.
 *
 * Memory: each extra thread holds its own copy of the strings, files and
 * functions its units use (at most the image's totals) until it is merged;
 * the sections are shared, read-only.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "ix_dwarf_par.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Below this much .debug_info a second thread costs more than it saves. */
#define IX_PAR_MIN_INFO ((uint64_t)1 << 20)

size_t ix_dwarf_shards(unsigned threads, size_t nunits, uint64_t info_bytes)
{
	size_t n = threads;
	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (size_t)c : 1;
		if (n > IX_MAX_THREADS)
			n = IX_MAX_THREADS;
		if (info_bytes < IX_PAR_MIN_INFO)
			n = 1;
	}
	if (n > 64)
		n = 64;
	if (n > nunits)
		n = nunits;
	return n ? n : 1;
}

static void *run_walk(void *arg)
{
	ix_dwarf_walk(arg);
	return NULL;
}

/* Local string reference -> global one (0, the empty string, is 0). */
static uint32_t sref(const ix_u64map *m, uint32_t r)
{
	return r ? ix_u64map_get(m, r) : 0;
}

static int merge_strings(ix_image *g, const ix_image *l, ix_u64map *smap)
{
	size_t len;
	const char *b = (const char *)ix_str_bytes(l->strings, &len);
	for (size_t p = 1; p < len;) { /* NUL-terminated, in insertion order */
		size_t k = strlen(b + p);
		uint32_t r = ix_str_add(g->strings, b + p, k);
		if (r == FMT_NONE || ix_u64map_put(smap, p, r))
			return -1;
		p += k + 1;
	}
	return 0;
}

static int merge_files(ix_wk *g, const ix_image *l, const ix_u64map *smap, uint32_t *fmap)
{
	for (size_t i = 0; i < l->files.n; i++) {
		const ix_file *f = &IX_AT(&l->files, ix_file, i);
		uint32_t path = sref(smap, f->path);
		uint32_t gi = ix_u64map_get(&g->files_idx, path);
		if (gi == FMT_NONE) {
			ix_file *nf = ix_vec_push(&g->img->files);
			if (!nf)
				return -1;
			nf->path = path;
			nf->relative = sref(smap, f->relative);
			nf->base = sref(smap, f->base);
			gi = (uint32_t)(g->img->files.n - 1);
			if (ix_u64map_put(&g->files_idx, path, gi))
				return -1;
		}
		fmap[i] = gi;
	}
	return 0;
}

static uint32_t remap(const uint32_t *map, uint32_t v)
{
	return v == FMT_NONE ? FMT_NONE : map[v];
}

static int merge_functions(ix_wk *g, const ix_image *l, const ix_u64map *smap,
			   const uint32_t *fmap, uint32_t *fnmap)
{
	for (size_t i = 0; i < l->functions.n; i++) {
		const ix_function *f = &IX_AT(&l->functions, ix_function, i);
		uint32_t gi = ix_u64map_get(&g->fn_idx, f->die_offset);
		if (gi == FMT_NONE) {
			ix_function *nf = ix_vec_push(&g->img->functions);
			if (!nf)
				return -1;
			nf->die_offset = f->die_offset;
			nf->linkage_name = sref(smap, f->linkage_name);
			nf->name = sref(smap, f->name);
			nf->decl_file = remap(fmap, f->decl_file);
			nf->decl_line = f->decl_line;
			gi = (uint32_t)(g->img->functions.n - 1);
			if (ix_u64map_put(&g->fn_idx, f->die_offset, gi))
				return -1;
		}
		fnmap[i] = gi;
	}
	return 0;
}

static int merge_nodes(ix_wk *g, const ix_wk *l, const uint32_t *fmap, const uint32_t *fnmap)
{
	uint32_t base = (uint32_t)g->img->nodes.n;
	for (size_t i = 0; i < l->img->nodes.n; i++) {
		ix_node *n = ix_vec_push(&g->img->nodes);
		if (!n)
			return -1;
		*n = IX_AT(&l->img->nodes, ix_node, i);
		n->parent = n->parent == FMT_NONE ? FMT_NONE : n->parent + base;
		n->function = remap(fnmap, n->function);
		n->call_file = remap(fmap, n->call_file);
	}
	for (size_t u = l->first; u < l->last; u++) {
		ix_vec *lines = &l->units[u].lines, *dies = &l->units[u].dies;
		for (size_t i = 0; i < lines->n; i++) {
			ix_piece *p = &IX_AT(lines, ix_piece, i);
			p->v[0] = remap(fmap, p->v[0]);
		}
		for (size_t i = 0; i < dies->n; i++) {
			ix_piece *p = &IX_AT(dies, ix_piece, i);
			p->v[0] = p->v[0] == FMT_NONE ? FMT_NONE : p->v[0] + base;
		}
	}
	return 0;
}

static int merge_ranges(ix_wk *g, const ix_wk *l)
{
	if (g->nur + l->nur > g->capur) {
		size_t cap = g->nur + l->nur;
		ix_urange *r = realloc(g->ur, (cap ? cap : 1) * sizeof(*r));
		if (!r)
			return -1;
		g->ur = r;
		g->capur = cap;
	}
	if (l->nur)
		memcpy(g->ur + g->nur, l->ur, l->nur * sizeof(*l->ur));
	g->nur += l->nur;
	g->indexed += l->indexed;
	g->skipped += l->skipped;
	return 0;
}

/* Replays shard l's additions into shard 0's image g (see the top). */
static int merge(ix_wk *g, ix_wk *l)
{
	ix_u64map smap = { 0 };
	uint32_t *fmap = malloc((l->img->files.n + 1) * sizeof(*fmap));
	uint32_t *fnmap = malloc((l->img->functions.n + 1) * sizeof(*fnmap));
	int rc = fmap && fnmap ? 0 : -1;
	if (!rc)
		rc = merge_strings(g->img, l->img, &smap);
	if (!rc)
		rc = merge_files(g, l->img, &smap, fmap);
	if (!rc)
		rc = merge_functions(g, l->img, &smap, fmap, fnmap);
	if (!rc)
		rc = merge_nodes(g, l, fmap, fnmap);
	if (!rc)
		rc = merge_ranges(g, l);
	ix_u64map_free(&smap);
	free(fmap);
	free(fnmap);
	return rc;
}

int ix_dwarf_par_run(ix_wk *w, size_t n)
{
	pthread_t *tid = calloc(n, sizeof(*tid));
	unsigned char *started = calloc(n, 1);
	int rc = tid && started ? 0 : -1;
	for (size_t i = 1; i < n; i++) {
		if (ix_image_init(&w[i].own)) {
			w[i].rc = rc = -1;
			continue;
		}
		w[i].img = &w[i].own;
	}
	/* A thread that cannot start runs its shard here, after shard 0. */
	for (size_t i = 1; i < n && !rc; i++)
		started[i] = pthread_create(&tid[i], NULL, run_walk, &w[i]) == 0;
	if (!rc)
		ix_dwarf_walk(&w[0]);
	for (size_t i = 1; i < n; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else if (!rc)
			ix_dwarf_walk(&w[i]);
	}
	for (size_t i = 0; i < n; i++)
		rc |= w[i].rc;
	for (size_t i = 1; i < n; i++) {
		if (!rc)
			rc = merge(&w[0], &w[i]);
		if (w[i].img == &w[i].own)
			ix_image_free(&w[i].own);
		w[i].img = NULL;
	}
	free(tid);
	free(started);
	return rc ? -1 : 0;
}
