/* SPDX-License-Identifier: MIT */
/*
 * bench_serve_cache: the stack cache's hit path of `symdb serve`, in
 * process (bench/serve_load.sh runs it): what a front end does for a stack
 * the cache holds, i.e. serve_cache_stack_key() over the stack's frames,
 * serve_cache_get() (hash, shard lock, whole-key comparison, LRU move, the
 * copy of the cached answer into the response buffer) and the key's
 * release.  HTTP and parsing are not in it: serve_load.sh measures the
 * whole request separately.
 *
 *   bench_serve_cache [--frames 64] [--value-bytes N] [--iters N] [--runs N]
 *                     [--threads T] [--same-key]
 *
 * The stack is FRAMES frames of one module (a 20-byte build-id) at
 * distinct addresses; the value is N bytes (serve_load.sh passes the size
 * of the server's real answer for such a stack).  T threads look up at
 * once: each its own stack (different shards, as for different hot stacks)
 * or, with --same-key, all the same one (one shard's lock: the worst case).
 * Prints per run "run threads=T ns_per_hit_cpu=... ns_per_hit_wall=..."
 * (CPU = the thread's CLOCK_THREAD_CPUTIME_ID, averaged over threads) and a
 * last line with medians and min-max.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve.h"
#include "serve_batch.h"
#include "serve_cache.h"

/* The calls the cache makes into the server: the counters as
 * serve_metrics.c keeps them (relaxed atomic adds) and the buffer append. */
static atomic_ullong hits, misses, frames;

void serve_metrics_cache(struct serve_metrics *m, uint64_t h, uint64_t mi)
{
	(void)m;
	atomic_fetch_add_explicit(&hits, h, memory_order_relaxed);
	atomic_fetch_add_explicit(&misses, mi, memory_order_relaxed);
}

void serve_metrics_stack_frames(struct serve_metrics *m, uint64_t resolved, uint64_t cached,
                                uint64_t earlier, uint64_t deadline)
{
	(void)m;
	atomic_fetch_add_explicit(&frames, resolved + cached + earlier + deadline,
	                          memory_order_relaxed);
}

void serve_buf_put(struct serve_buf *b, const void *data, size_t n)
{
	if (b->oom)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap - b->len < n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

struct worker {
	pthread_t t;
	struct serve_batch b;
	struct serve_module mod;
	struct serve_stack_frame *frames;
	struct serve_stack stack;
	long iters;
	double cpu_ns, wall_ns;
};

static struct serve_cache *cache;
static pthread_barrier_t start;

static double clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct serve_buf out = { 0 };
	double c0, t0;
	long bad = 0;

	pthread_barrier_wait(&start);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	t0 = clock_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < w->iters; i++) {
		struct serve_cache_key k;

		out.len = 0;
		serve_cache_stack_key(&k, &w->b, &w->stack, SERVE_CACHE_JSON);
		bad += !serve_cache_get(cache, &k, &out);
		serve_cache_key_release(&k);
	}
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	w->wall_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	if (bad)
		fprintf(stderr, "bench_serve_cache: %ld misses in the hit loop\n", bad);
	free(out.p);
	return NULL;
}

static void make_stack(struct worker *w, unsigned index, unsigned nframes)
{
	memset(&w->mod, 0, sizeof w->mod);
	w->mod.ref = SERVE_REF_BUILD_ID;
	w->mod.id = "bench";
	w->mod.addr_kind = SYMDB_ADDR_VADDR;
	w->mod.status = SERVE_OK;
	for (int i = 0; i < 20; i++)
		w->mod.uuid.bytes[i] = (uint8_t)(0xa0 + i);
	w->mod.uuid.len = 20;
	w->mod.uuid.kind = SYMDB_UUID_GNU_BUILD_ID;
	w->frames = calloc(nframes, sizeof *w->frames);
	for (unsigned i = 0; i < nframes; i++)
		w->frames[i].addr = 0x100000 + (uint64_t)index * 0x10000 + i * 0x37;
	w->stack = (struct serve_stack){ 0, nframes, false };
	w->b = (struct serve_batch){ .modules = &w->mod, .nmodules = 1, .frames = w->frames,
	                             .nframes = nframes, .stacks = &w->stack, .nstacks = 1,
	                             .opt = { .demangle = true, .inlines = true } };
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned nframes = 64, nthreads = 1, runs = 5;
	size_t value_bytes = 8192;
	long iters = 200000;
	int same = 0;
	struct worker *w;
	double *cpu, *wall;
	char *value;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--frames") && i + 1 < argc)
			nframes = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--value-bytes") && i + 1 < argc)
			value_bytes = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atol(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--same-key"))
			same = 1;
		else {
			fprintf(stderr, "bench_serve_cache: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (serve_cache_create(64u << 20, 0, (struct serve_metrics *)&hits, &cache) < 0)
		return 1;
	w = calloc(nthreads, sizeof *w);
	cpu = calloc(runs, sizeof *cpu);
	wall = calloc(runs, sizeof *wall);
	value = malloc(value_bytes);
	memset(value, 'x', value_bytes);
	for (unsigned t = 0; t < nthreads; t++) {
		struct serve_cache_key k;

		make_stack(&w[t], same ? 0 : t, nframes);
		w[t].iters = iters;
		serve_cache_stack_key(&k, &w[t].b, &w[t].stack, SERVE_CACHE_JSON);
		serve_cache_put(cache, &k, value, value_bytes);
		serve_cache_key_release(&k);
	}
	pthread_barrier_init(&start, NULL, nthreads);
	for (unsigned r = 0; r <= runs; r++) { /* run 0: the warm-up */
		double c = 0, wl = 0;

		for (unsigned t = 0; t < nthreads; t++)
			pthread_create(&w[t].t, NULL, worker_main, &w[t]);
		for (unsigned t = 0; t < nthreads; t++) {
			pthread_join(w[t].t, NULL);
			c += w[t].cpu_ns / (double)iters;
			wl += w[t].wall_ns / (double)iters;
		}
		if (!r)
			continue;
		cpu[r - 1] = c / nthreads;
		wall[r - 1] = wl / nthreads;
		printf("run threads=%u frames=%u value_bytes=%zu same_key=%d ns_per_hit_cpu=%.1f "
		       "ns_per_hit_wall=%.1f\n", nthreads, nframes, value_bytes, same, cpu[r - 1],
		       wall[r - 1]);
	}
	qsort(cpu, runs, sizeof *cpu, cmp_double);
	qsort(wall, runs, sizeof *wall, cmp_double);
	printf("median threads=%u frames=%u value_bytes=%zu same_key=%d runs=%u "
	       "ns_per_hit_cpu=%.1f cpu_min=%.1f cpu_max=%.1f ns_per_hit_wall=%.1f wall_min=%.1f "
	       "wall_max=%.1f\n", nthreads, nframes, value_bytes, same, runs, cpu[runs / 2], cpu[0],
	       cpu[runs - 1], wall[runs / 2], wall[0], wall[runs - 1]);
	serve_cache_free(cache);
	return 0;
}
