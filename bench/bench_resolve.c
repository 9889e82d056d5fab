/* SPDX-License-Identifier: MIT */
/*
 * bench_resolve.c - measures the symdb reader library through its public API
 * (symdb.h) only: what a profiler backend that links libsymdb would see.
 *
 *   bench_resolve MODE --db DIR --obj BINARY [--runs N] [--threads LIST] ADDRFILE
 *
 * MODE is one of
 *   resolve   symdb_resolve_batch() over every address of ADDRFILE, full
 *             inline chain + file:line, names as pointers (no demangling, no
 *             printing).  Calls of CHUNK_ADDRS addresses through a fixed
 *             frames buffer, each consumed right after it, as a streaming
 *             caller would; the consume step (sum of line,
 *             name and file pointers of every frame) is inside the timing,
 *             and gsym_lookup.cpp does the same to its LookupResult.  An
 *             unsorted file is radix-sorted (address, index) first, and that
 *             sort is timed and reported separately and in the total.
 *   floor     the machine's limit for any resolver with this interface: read
 *             each input address and write one symdb_result record.
 *   floor-consume   diagnostic: what resolve's timed loop costs with no
 *             lookup at all: per CHUNK_ADDRS addresses, the floor's stores
 *             (plain ones, as symdb_resolve_batch makes for a call this
 *             size), then the consume step over them, every result sharing
 *             one frame (consume's cheapest case).  The part of resolve's
 *             time that no lookup can remove.
 *   first     time from symdb_open() to the first resolved address (the
 *             file's first line), database and image opened afresh each run:
 *             by UUID (what a profiler that has the build-id does) and by
 *             binary path (symdb_image_open_binary computes the UUID).
 *   rss       VmRSS/VmHWM/RssAnon/RssFile before opening and after one
 *             resolve of the whole file (the caller's buffers are touched
 *             before the baseline, so the delta is the reader's).
 *   mt        THREADS threads (default "1,2") each resolve the whole file on
 *             ONE shared image; reports aggregate addresses/s.
 *   cg-resolve, cg-floor   one pass of the loop only, in the functions
 *             bench_loop_resolve / bench_loop_floor, for
 *             `valgrind --tool=callgrind --toggle-collect=bench_loop_*`.
 *
 * Output: one line per measurement, "mode key=value ...", times in seconds,
 * medians (and min) over --runs runs after one untimed warm-up run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symdb.h"


#define FRAMES_CAP (1u << 18) /* frames per resolve call: 20 MiB, reused */
#define MAX_RUNS 101
/* Addresses per symdb_resolve_batch() call: a streaming caller consumes
 * each call's results and frames while they are still in the core's cache
 * (16 Ki addresses: 640 KiB of results).  Resolving all n first and then
 * reading 40 MB of results and the frames back from memory was a second
 * pass over DRAM that neither GSYM's loop (each result consumed at once)
 * nor the floor (no read-back) makes: in callgrind's cache model (48 KiB
 * D1, 2 MiB LL) it was 200k of the 279k LL read misses of 200k ceph-osd
 * addresses.  Every address is still resolved and its result written to
 * the n-element array, as the floor writes it. */
#define CHUNK_ADDRS ((size_t)1 << 14)

typedef struct bench_opts {
	const char *mode, *db, *obj, *file, *threads;
	int runs;
} bench_opts;

/* The input, sorted, plus where each sorted slot came from (NULL if the file
 * was sorted already). */
typedef struct addr_set {
	uint64_t *addrs;  /* as read */
	size_t n;
	int sorted;
} addr_set;

typedef struct work_buf {
	uint64_t *keys;   /* sorted addresses */
	uint32_t *perm;   /* keys[i] came from input line perm[i] */
	uint64_t *tmpk;
	uint32_t *tmpp;
	symdb_frame *frames;
	symdb_result *results;
} work_buf;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_resolve: %s: %s\n", what, err ? symdb_strerror(err) : "failed");
	exit(1);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p)
		die("calloc", -ENOMEM);
	return p;
}

/* Reads one address per line ("0x..." or decimal); blank lines skipped. */
static addr_set read_addrs(const char *path)
{
	addr_set s = {0};
	size_t cap = 1024;
	char line[128];
	FILE *f = fopen(path, "r");

	if (!f)
		die(path, -errno);
	s.addrs = xcalloc(cap, sizeof *s.addrs);
	while (fgets(line, sizeof line, f)) {
		char *end;
		uint64_t a = strtoull(line, &end, 0);

		if (end == line)
			continue;
		if (s.n == cap) {
			cap *= 2;
			s.addrs = realloc(s.addrs, cap * sizeof *s.addrs);
			if (!s.addrs)
				die("realloc", -ENOMEM);
		}
		s.addrs[s.n++] = a;
	}
	fclose(f);
	s.sorted = 1;
	for (size_t i = 1; i < s.n; i++)
		if (s.addrs[i] < s.addrs[i - 1])
			s.sorted = 0;
	return s;
}

static work_buf work_alloc(size_t n)
{
	work_buf w;

	w.keys = xcalloc(n, sizeof *w.keys);
	w.perm = xcalloc(n, sizeof *w.perm);
	w.tmpk = xcalloc(n, sizeof *w.tmpk);
	w.tmpp = xcalloc(n, sizeof *w.tmpp);
	w.frames = xcalloc(FRAMES_CAP, sizeof *w.frames);
	w.results = xcalloc(n, sizeof *w.results);
	return w;
}

static void work_free(work_buf *w)
{
	free(w->keys);
	free(w->perm);
	free(w->tmpk);
	free(w->tmpp);
	free(w->frames);
	free(w->results);
}

/* LSD radix sort of (address, input index) pairs, one byte per pass, passes
 * over bytes that are equal in every key skipped: what a caller with an
 * unsorted batch would do before symdb_resolve_batch(). */
static void radix_sort(const uint64_t *in, size_t n, work_buf *w)
{
	uint64_t diff = 0;

	for (size_t i = 0; i < n; i++) {
		w->keys[i] = in[i];
		w->perm[i] = (uint32_t)i;
		diff |= in[i] ^ in[0];
	}
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[257] = {0};

		if (!((diff >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[((w->keys[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++) {
			size_t d = count[(w->keys[i] >> shift) & 0xff]++;
			w->tmpk[d] = w->keys[i];
			w->tmpp[d] = w->perm[i];
		}
		uint64_t *k = w->keys; w->keys = w->tmpk; w->tmpk = k;
		uint32_t *p = w->perm; w->perm = w->tmpp; w->tmpp = p;
	}
}

/* What a caller does with each result: touch every frame's line, name and
 * file (pointers, not bytes). */
static uint64_t consume(const symdb_result *r, size_t n, const symdb_frame *fr)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		const symdb_frame *f = fr + r[i].first;

		sum += r[i].count;
		for (uint32_t j = 0; j < r[i].count; j++)
			sum += f[j].line ^ (uintptr_t)f[j].name ^ (uintptr_t)f[j].file;
	}
	return sum;
}

/* The measured loop: resolve keys[0..n) through a fixed frames buffer. */
__attribute__((noinline)) uint64_t bench_loop_resolve(const symdb_image *img,
                                                      const uint64_t *keys, size_t n,
                                                      symdb_frame *frames,
                                                      symdb_result *results);
__attribute__((noinline)) uint64_t bench_loop_resolve(const symdb_image *img,
                                                      const uint64_t *keys, size_t n,
                                                      symdb_frame *frames,
                                                      symdb_result *results)
{
	uint64_t sum = 0;
	size_t done = 0;

	while (done < n) {
		size_t k = n - done < CHUNK_ADDRS ? n - done : CHUNK_ADDRS;
		ptrdiff_t r = symdb_resolve_batch(img, keys + done, k, frames, FRAMES_CAP,
		                                  sizeof(symdb_frame), results + done,
		                                  sizeof(symdb_result));
		if (r <= 0)
			die("symdb_resolve_batch", (int)r);
		sum += consume(results + done, (size_t)r, frames);
		done += (size_t)r;
	}
	return sum;
}

/* The floor: read each address, write one result record. */
__attribute__((noinline)) uint64_t bench_loop_floor(const uint64_t *keys, size_t n,
                                                    symdb_result *results);
__attribute__((noinline)) uint64_t bench_loop_floor(const uint64_t *keys, size_t n,
                                                    symdb_result *results)
{
	for (size_t i = 0; i < n; i++) {
		results[i].first = (uint32_t)i;
		results[i].count = 1;
		results[i].status = 0;
		results[i].sym_name = NULL;
		results[i].sym_addr = keys[i];
		results[i].sym_size = 0;
	}
	return results[n ? n - 1 : 0].sym_addr;
}

/* floor-consume's loop: chunk by chunk, results as the floor writes them
 * (but every one pointing at frame 0, as repeats share frames), then
 * consume() of the chunk. */
__attribute__((noinline)) uint64_t bench_loop_floor_consume(const uint64_t *keys, size_t n,
                                                            symdb_frame *frames,
                                                            symdb_result *results);
__attribute__((noinline)) uint64_t bench_loop_floor_consume(const uint64_t *keys, size_t n,
                                                            symdb_frame *frames,
                                                            symdb_result *results)
{
	uint64_t sum = 0;

	for (size_t done = 0; done < n;) {
		size_t k = n - done < CHUNK_ADDRS ? n - done : CHUNK_ADDRS;

		for (size_t i = done; i < done + k; i++) {
			results[i].first = 0;
			results[i].count = 1;
			results[i].status = 0;
			results[i].sym_name = NULL;
			results[i].sym_addr = keys[i];
			results[i].sym_size = 0;
		}
		sum += consume(results + done, k, frames);
		done += k;
	}
	return sum;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct db_img {
	symdb *db;
	symdb_image *img;
} db_img;

static db_img open_image(const bench_opts *o)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, so, .errbuf = err, .errbuf_sz = sizeof err);
	db_img d;
	int rc = symdb_open(o->db, &so, &d.db);

	if (rc < 0)
		die(err[0] ? err : o->db, rc);
	rc = symdb_image_open_binary(d.db, o->obj, &so, &d.img);
	if (rc < 0)
		die(err[0] ? err : o->obj, rc);
	return d;
}

static void close_image(db_img *d)
{
	symdb_image_close(d->img);
	symdb_close(d->db);
}

/* Sorts if needed (timed into *sort_s), then resolves (timed into *res_s). */
static uint64_t one_resolve(const symdb_image *img, const addr_set *s, work_buf *w,
                            double *sort_s, double *res_s)
{
	const uint64_t *keys = s->addrs;
	double t0 = now_s(), t1;
	uint64_t sum;

	if (!s->sorted) {
		radix_sort(s->addrs, s->n, w);
		keys = w->keys;
	}
	t1 = now_s();
	sum = bench_loop_resolve(img, keys, s->n, w->frames, w->results);
	*sort_s = t1 - t0;
	*res_s = now_s() - t1;
	return sum;
}

static void print_stats(const char *mode, const bench_opts *o, const addr_set *s,
                        double *tot, double *cpu, double *aux, const char *auxname,
                        uint64_t sum)
{
	double mn = tot[0];

	for (int i = 1; i < o->runs; i++)
		mn = tot[i] < mn ? tot[i] : mn;
	double med = median(tot, o->runs);
	printf("%s file=%s n=%zu sorted=%d runs=%d median_s=%.6f min_s=%.6f "
	       "addr_per_s=%.0f ns_per_addr=%.2f",
	       mode, o->file, s->n, s->sorted, o->runs, med, mn, (double)s->n / med,
	       med * 1e9 / (double)s->n);
	printf(" cpu_median_s=%.6f", median(cpu, o->runs));
	if (aux)
		printf(" %s_median_s=%.6f", auxname, median(aux, o->runs));
	printf(" checksum=%llx\n", (unsigned long long)sum);
}

static void run_resolve(const bench_opts *o, const addr_set *s)
{
	db_img d = open_image(o);
	work_buf w = work_alloc(s->n);
	double tot[MAX_RUNS], cpu[MAX_RUNS], sorts[MAX_RUNS], sort_s, res_s;
	uint64_t sum = one_resolve(d.img, s, &w, &sort_s, &res_s); /* warm-up */
	size_t frames = 0;

	for (size_t i = 0; i < s->n; i++)
		frames += w.results[i].count;
	for (int i = 0; i < o->runs; i++) {
		double c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);

		sum += one_resolve(d.img, s, &w, &sort_s, &res_s);
		cpu[i] = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		tot[i] = sort_s + res_s;
		sorts[i] = sort_s;
	}
	printf("frames_per_addr=%.3f ", (double)frames / (double)s->n);
	print_stats("resolve", o, s, tot, cpu, s->sorted ? NULL : sorts, "sort", sum);
	work_free(&w);
	close_image(&d);
}

static void run_floor(const bench_opts *o, const addr_set *s)
{
	work_buf w = work_alloc(s->n);
	double tot[MAX_RUNS], cpu[MAX_RUNS];
	uint64_t sum = bench_loop_floor(s->addrs, s->n, w.results);

	for (int i = 0; i < o->runs; i++) {
		double t0 = now_s(), c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);

		sum += bench_loop_floor(s->addrs, s->n, w.results);
		cpu[i] = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		tot[i] = now_s() - t0;
	}
	print_stats("floor", o, s, tot, cpu, NULL, NULL, sum);
	work_free(&w);
}

static void run_floor_consume(const bench_opts *o, const addr_set *s)
{
	work_buf w = work_alloc(s->n);
	double tot[MAX_RUNS], cpu[MAX_RUNS];
	uint64_t sum = bench_loop_floor_consume(s->addrs, s->n, w.frames, w.results);

	for (int i = 0; i < o->runs; i++) {
		double t0 = now_s(), c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);

		sum += bench_loop_floor_consume(s->addrs, s->n, w.frames, w.results);
		cpu[i] = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		tot[i] = now_s() - t0;
	}
	print_stats("floor-consume", o, s, tot, cpu, NULL, NULL, sum);
	work_free(&w);
}

/* One fresh open -> first result; by_uuid selects the open call. */
static double first_once(const bench_opts *o, const symdb_uuid *id, int by_uuid, uint64_t addr)
{
	symdb_frame frames[256];
	symdb_result res;
	double t0 = now_s(), t;
	db_img d;
	int rc = symdb_open(o->db, NULL, &d.db);

	if (rc < 0)
		die(o->db, rc);
	rc = by_uuid ? symdb_image_open_uuid(d.db, id, NULL, &d.img)
	             : symdb_image_open_binary(d.db, o->obj, NULL, &d.img);
	if (rc < 0)
		die(o->obj, rc);
	if (symdb_resolve_batch(d.img, &addr, 1, frames, 256, sizeof(symdb_frame),
	                        &res, sizeof(symdb_result)) != 1)
		die("first resolve", 0);
	t = now_s() - t0;
	close_image(&d);
	return t;
}

static void run_first(const bench_opts *o, const addr_set *s)
{
	symdb_uuid id;
	double t[MAX_RUNS];
	int rc = symdb_file_uuid(o->obj, NULL, &id);

	if (rc < 0 || s->n == 0)
		die(o->obj, rc);
	for (int by_uuid = 1; by_uuid >= 0; by_uuid--) {
		double first = first_once(o, &id, by_uuid, s->addrs[0]), mx = 0;

		for (int i = 0; i < o->runs; i++) {
			t[i] = first_once(o, &id, by_uuid, s->addrs[0]);
			mx = t[i] > mx ? t[i] : mx;
		}
		printf("first open=%s runs=%d first_run_ms=%.4f median_ms=%.4f max_ms=%.4f\n",
		       by_uuid ? "uuid" : "binary", o->runs, first * 1e3,
		       median(t, o->runs) * 1e3, mx * 1e3);
	}
}

/* kB value of one /proc/self/status field, -1 if absent. */
static long status_kb(const char *field)
{
	char line[256];
	size_t fl = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, fl) && line[fl] == ':')
			v = strtol(line + fl + 1, NULL, 10);
	fclose(f);
	return v;
}

static void print_rss(const char *when)
{
	printf("rss when=%s VmRSS_kB=%ld VmHWM_kB=%ld RssAnon_kB=%ld RssFile_kB=%ld\n", when,
	       status_kb("VmRSS"), status_kb("VmHWM"), status_kb("RssAnon"),
	       status_kb("RssFile"));
}

static void run_rss(const bench_opts *o, const addr_set *s)
{
	work_buf w = work_alloc(s->n);
	double sort_s, res_s;

	/* Touch the caller's buffers so the baseline includes them. */
	radix_sort(s->addrs, s->n, &w);
	memset(w.frames, 0, FRAMES_CAP * sizeof *w.frames);
	memset(w.results, 0, s->n * sizeof *w.results);
	print_rss("before_open");
	db_img d = open_image(o);
	print_rss("after_open");
	uint64_t sum = one_resolve(d.img, s, &w, &sort_s, &res_s);
	print_rss("after_batch");
	printf("rss n=%zu caller_buffers_kB=%zu checksum=%llx\n", s->n,
	       (s->n * (2 * sizeof(uint64_t) + 2 * sizeof(uint32_t) + sizeof(symdb_result)) +
	        FRAMES_CAP * sizeof(symdb_frame)) / 1024,
	       (unsigned long long)sum);
	close_image(&d);
	work_free(&w);
}

typedef struct mt_arg {
	const symdb_image *img;
	const addr_set *s;
	pthread_barrier_t *bar;
	work_buf w;
	uint64_t sum;
	double cpu;       /* this thread's CPU seconds for its pass */
} mt_arg;

static void *mt_main(void *p)
{
	mt_arg *a = p;

	pthread_barrier_wait(a->bar);
	double c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	a->sum = bench_loop_resolve(a->img, a->s->addrs, a->s->n, a->w.frames, a->w.results);
	a->cpu = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

static double mt_once(const symdb_image *img, const addr_set *s, mt_arg *args, int nt)
{
	pthread_t th[64];
	pthread_barrier_t bar;
	double t0;

	pthread_barrier_init(&bar, NULL, (unsigned)nt + 1);
	for (int i = 0; i < nt; i++) {
		args[i].img = img;
		args[i].s = s;
		args[i].bar = &bar;
		if (pthread_create(&th[i], NULL, mt_main, &args[i]))
			die("pthread_create", -EAGAIN);
	}
	t0 = now_s();
	pthread_barrier_wait(&bar);
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	return now_s() - t0;
}

static void run_mt(const bench_opts *o, const addr_set *s)
{
	db_img d = open_image(o);
	const char *p = o->threads ? o->threads : "1,2";
	mt_arg args[64];

	if (!s->sorted)
		die("mt needs a sorted address file", SYMDB_E_UNSORTED);
	while (*p) {
		int nt = atoi(p);
		double t[MAX_RUNS], c[MAX_RUNS];

		if (nt < 1 || nt > 64)
			die("--threads", SYMDB_E_INVAL);
		for (int i = 0; i < nt; i++)
			args[i].w = work_alloc(s->n);
		mt_once(d.img, s, args, nt); /* warm-up */
		for (int i = 0; i < o->runs; i++) {
			t[i] = mt_once(d.img, s, args, nt);
			c[i] = 0;
			for (int j = 0; j < nt; j++)
				c[i] += args[j].cpu / nt;
		}
		double med = median(t, o->runs);
		/* Per-thread CPU time separates scaling from a busy machine: if
		 * it stays flat as threads are added, only the cores were
		 * missing. */
		printf("mt threads=%d file=%s n=%zu runs=%d median_s=%.6f "
		       "aggregate_addr_per_s=%.0f thread_cpu_median_s=%.6f\n",
		       nt, o->file, s->n, o->runs, med, (double)nt * (double)s->n / med,
		       median(c, o->runs));
		for (int i = 0; i < nt; i++)
			work_free(&args[i].w);
		p = strchr(p, ',');
		p = p ? p + 1 : "";
	}
	close_image(&d);
}

/* One pass of a loop, for callgrind --toggle-collect. */
static void run_cg(const bench_opts *o, const addr_set *s, int floor_only)
{
	work_buf w = work_alloc(s->n);
	uint64_t sum;

	if (!s->sorted)
		die("cg modes need a sorted address file", SYMDB_E_UNSORTED);
	if (floor_only) {
		sum = bench_loop_floor(s->addrs, s->n, w.results);
	} else {
		db_img d = open_image(o);

		sum = bench_loop_resolve(d.img, s->addrs, s->n, w.frames, w.results);
		close_image(&d);
	}
	printf("%s n=%zu checksum=%llx\n", o->mode, s->n, (unsigned long long)sum);
	work_free(&w);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_resolve resolve|floor|floor-consume|first|rss|mt|cg-resolve|cg-floor "
	                "--db DIR --obj BINARY [--runs N] [--threads 1,2] ADDRFILE\n");
	exit(2);
}

static bench_opts parse_args(int argc, char **argv)
{
	bench_opts o = {.runs = 5};

	if (argc < 2)
		usage();
	o.mode = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--db") && v)
			o.db = argv[++i];
		else if (!strcmp(a, "--obj") && v)
			o.obj = argv[++i];
		else if (!strcmp(a, "--runs") && v)
			o.runs = atoi(argv[++i]);
		else if (!strcmp(a, "--threads") && v)
			o.threads = argv[++i];
		else if (a[0] != '-' && !o.file)
			o.file = a;
		else
			usage();
	}
	if (!o.file || o.runs < 1 || o.runs > MAX_RUNS ||
	    (strcmp(o.mode, "floor") && strcmp(o.mode, "cg-floor") && strcmp(o.mode, "floor-consume") &&
	     (!o.db || !o.obj)))
		usage();
	return o;
}

int main(int argc, char **argv)
{
	bench_opts o = parse_args(argc, argv);
	addr_set s = read_addrs(o.file);

	if (!strcmp(o.mode, "resolve"))
		run_resolve(&o, &s);
	else if (!strcmp(o.mode, "floor"))
		run_floor(&o, &s);
	else if (!strcmp(o.mode, "floor-consume"))
		run_floor_consume(&o, &s);
	else if (!strcmp(o.mode, "first"))
		run_first(&o, &s);
	else if (!strcmp(o.mode, "rss"))
		run_rss(&o, &s);
	else if (!strcmp(o.mode, "mt"))
		run_mt(&o, &s);
	else if (!strcmp(o.mode, "cg-resolve") || !strcmp(o.mode, "cg-floor"))
		run_cg(&o, &s, !strcmp(o.mode, "cg-floor"));
	else
		usage();
	free(s.addrs);
	return 0;
}
