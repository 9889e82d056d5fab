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
 * Memory: a shard > 0 holds its own copy of the strings, files and
 * functions its units use (at most the image's totals) from its walk until
 * it is merged, which the calling thread does as soon as the shards before
 * it are merged; the sections are shared, read-only.
 */
#define _POSIX_C_SOURCE 200809L
#include "ix_dwarf_par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Below this much .debug_info a second thread costs more than it saves. */
#define IX_PAR_MIN_INFO ((uint64_t)1 << 20)

size_t ix_dwarf_shards(unsigned threads, unsigned cpus, size_t nunits, uint64_t info_bytes)
{
	size_t n = threads;
	if (!n) {
		n = cpus ? cpus : 1;
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

static int merge_files(ix_shard *g, const ix_image *l, const ix_u64map *smap, uint32_t *fmap)
{
	for (size_t i = 0; i < l->files.n; i++) {
		const ix_file *f = &IX_AT(&l->files, ix_file, i);
		uint32_t path = sref(smap, f->path);
		uint32_t rel = sref(smap, f->relative);
		uint64_t key = (uint64_t)path | (uint64_t)rel << 32; /* as files_lookup's */
		uint32_t gi = ix_u64map_get(&g->files_idx, key);
		if (gi == FMT_NONE) {
			ix_file *nf = ix_vec_push(&g->img->files);
			if (!nf)
				return -1;
			nf->path = path;
			nf->relative = rel;
			nf->base = sref(smap, f->base);
			nf->source = FMT_NONE;
			gi = (uint32_t)(g->img->files.n - 1);
			if (ix_u64map_put(&g->files_idx, key, gi))
				return -1;
		}
		/* the first unit, in unit order, that embeds the file's source */
		ix_file *gf = &IX_AT(&g->img->files, ix_file, gi);
		if (gf->source == FMT_NONE && f->source != FMT_NONE)
			gf->source = sref(smap, f->source);
		fmap[i] = gi;
	}
	return 0;
}

static uint32_t remap(const uint32_t *map, uint32_t v)
{
	return v == FMT_NONE ? FMT_NONE : map[v];
}

static int merge_functions(ix_shard *g, const ix_image *l, const ix_u64map *smap,
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

static int merge_nodes(ix_shard *g, const ix_shard *l, const uint32_t *fmap, const uint32_t *fnmap)
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

static int merge_ranges(ix_shard *g, const ix_shard *l)
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
static int merge(ix_shard *g, ix_shard *l)
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

/*
 * The shared state of a run.  Free threads take order[next++]: normally
 * the shards by decreasing size, so that the last ones taken are small and
 * the threads end together (the largest unit of libpython, 10 % of
 * .debug_info, is among its last four).  done[s] publishes a walked shard
 * to the merging thread (release/acquire: its private image and unit
 * pieces are complete).
 */
typedef struct par_run {
	ix_shard *w;
	size_t nw;
	const size_t *order;
	atomic_size_t next;
	atomic_uchar *done;
} par_run;

/* A walking thread: its libdwarf handle and header cursor. */
typedef struct par_thread {
	par_run *p;
	void *dbg;
	size_t cursor;
} par_thread;

static void walk_shard(par_run *p, size_t s, par_thread *t)
{
	ix_shard *w = &p->w[s];
	if (s > 0) {
		if (ix_image_init(&w->own)) {
			w->rc = -1;
			goto out;
		}
		w->img = &w->own;
	}
	w->dbg = t->dbg;
	w->cursor = &t->cursor;
	ix_dwarf_walk(w);
	w->dbg = NULL;
	w->cursor = NULL;
out:
	atomic_store_explicit(&p->done[s], 1, memory_order_release);
}

/* Takes and walks one shard; 0 when none is left. */
static int take_shard(par_run *p, par_thread *t)
{
	size_t k = atomic_fetch_add(&p->next, 1);
	if (k >= p->nw)
		return 0;
	walk_shard(p, p->order[k], t);
	return 1;
}

static void *run_walker(void *arg)
{
	par_thread *t = arg;
	while (take_shard(t->p, t))
		;
	return NULL;
}

static int is_done(par_run *p, size_t s)
{
	return atomic_load_explicit(&p->done[s], memory_order_acquire);
}

/* Merges shard s into shard 0 (or notes its failure) and frees its image. */
static int merge_one(par_run *p, size_t s, int rc)
{
	ix_shard *l = &p->w[s];
	if (!rc)
		rc = l->rc ? -1 : merge(&p->w[0], l);
	if (l->img == &l->own)
		ix_image_free(&l->own);
	l->img = NULL;
	return rc;
}

/* Merges the walked shards from *m on, in order, up to the first one not
 * walked yet; nothing before shard 0 is walked (it holds the image). */
static int merge_ready(par_run *p, size_t *m, int rc)
{
	if (!is_done(p, 0))
		return rc;
	while (*m < p->nw && is_done(p, *m))
		rc = merge_one(p, (*m)++, rc);
	return rc;
}

/* The order threads take shards in: by decreasing number of .debug_info
 * bytes (index order among equals), or index order. */
static size_t *take_order(const ix_shard *w, size_t nw, int by_size)
{
	size_t *o = malloc(nw * sizeof(*o));
	if (!o)
		return NULL;
	for (size_t i = 0; i < nw; i++) {
		size_t j = i;
		uint64_t sz = w[i].bytes;
		for (; by_size && j > 0 && w[o[j - 1]].bytes < sz; j--)
			o[j] = o[j - 1];
		o[j] = i;
	}
	return o;
}

/*
 * The calling thread merges what is ready before taking each next shard,
 * so that merging overlaps the other threads' walks; a private image lives
 * from its shard's walk to its merge.
 */
int ix_dwarf_par_run(ix_shard *w, size_t nw, void **dbg, size_t nt, int by_size)
{
	par_run p = { .w = w, .nw = nw, .order = take_order(w, nw, by_size) };
	atomic_init(&p.next, 0);
	pthread_t *tid = calloc(nt, sizeof(*tid));
	par_thread *t = calloc(nt, sizeof(*t));
	unsigned char *started = calloc(nt, 1);
	p.done = calloc(nw, sizeof(*p.done));
	int rc = p.order && tid && t && started && p.done ? 0 : -1;
	for (size_t i = 0; !rc && i < nw; i++)
		atomic_init(&p.done[i], 0);
	for (size_t i = 0; !rc && i < nt; i++)
		t[i] = (par_thread){ &p, dbg[i], 0 };
	/* A thread that cannot start leaves its shards to the others. */
	for (size_t i = 1; !rc && i < nt; i++)
		started[i] = pthread_create(&tid[i], NULL, run_walker, &t[i]) == 0;
	size_t m = 1;
	while (!rc && take_shard(&p, &t[0]))
		rc = merge_ready(&p, &m, rc);
	for (size_t i = 1; i < nt; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	if (!rc && w[0].rc)
		rc = -1;
	/* Every shard is walked now, unless rc is set: merge_one then only
	 * frees the private images. */
	while (m < nw)
		rc = merge_one(&p, m++, rc);
	free((void *)p.order);
	free(tid);
	free(t);
	free(started);
	free(p.done);
	return rc;
}

/* Enough shards that a thread which finishes early finds more work (unit
 * sizes and costs vary by orders of magnitude), few enough that merging
 * the strings and files several shards share stays small. */
#define IX_SHARDS_PER_THREAD 16

size_t ix_dwarf_nshards(size_t nt, size_t nunits)
{
	size_t n = nt > 1 ? nt * IX_SHARDS_PER_THREAD : 1;
	if (n > nunits)
		n = nunits;
	return n ? n : 1;
}
