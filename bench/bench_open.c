/* SPDX-License-Identifier: MIT */
/*
 * bench_open.c - the cost of a first answer (issue 18): open the database,
 * open one image by UUID and resolve one address, in process, through the
 * public API as a user would, RUNS times.  Each run prints one line:
 *
 *   run=… db_ms=… image_ms=… resolve_ms=… total_ms=… cpu_ms=… majflt=…
 *   majflt_steps=a/b/c read_kib=… read_kib_steps=a/b/c resident_kib=…
 *   rss_kib=+… load=… name=…
 *
 * and the last line gives the median, min and max of total_ms.  Wall time
 * from CLOCK_MONOTONIC around each step; CPU and major faults from
 * getrusage deltas; read_kib from /proc/self/io read_bytes (what this
 * process made the kernel fetch from storage, readahead included); the
 * _steps keys split a figure by step (db/image/resolve); resident_kib is how much of the index file is in the
 * page cache after the answer (mincore on a mapping of our own), i.e. what
 * a cold first answer read; load is the 1-minute load average just before
 * the run.
 *
 * --cold drops the index file's and the catalog's pages (DB/catalog/data.mdb,
 * SPEC §12.1) before every run with posix_fadvise(POSIX_FADV_DONTNEED): the
 * state after `echo 3 > /proc/sys/vm/drop_caches` for these two files,
 * without evicting the rest of a shared machine's cache.  The benchmark's
 * own binary and libsymdb stay resident, as in a long-lived symbolizer.
 * --verify opens with SYMDB_OPEN_VERIFY_CHECKSUMS.  --addrs FILE resolves
 * the addresses of FILE (one per line, hex or decimal; sorted here, before
 * the timing) instead of ADDR, in calls of up to 65,536 addresses as
 * `symdb query` does: the cost of a cold batch.
 *
 * Usage: bench_open [--verify] [--cold] [--runs N] [--addrs FILE] DB UUIDHEX ADDR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symdb.h"

#define MAX_RUNS 1000
#define CHUNK 65536 /* addresses per resolve call */
#define FRAMES (CHUNK * 8)

static uint64_t *batch; /* --addrs, sorted */
static size_t nbatch;
static symdb_frame frames[FRAMES];
static symdb_result results[CHUNK];

typedef struct sample {
	double ms, cpu;
	long majflt;
	long long rd; /* bytes */
} sample;

static sample now(void)
{
	struct timespec ts;
	struct rusage ru;
	sample s = { 0 };
	char line[128];
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s.ms = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	getrusage(RUSAGE_SELF, &ru);
	s.majflt = ru.ru_majflt;
	s.cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	        (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	f = fopen("/proc/self/io", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "read_bytes: %lld", &s.rd) == 1)
			break;
	if (f)
		fclose(f);
	return s;
}

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* Drop path's pages from the page cache (or, with resident, count them in
 * KiB instead).  Returns -1 when the file cannot be read. */
static long cache_op(const char *path, int resident)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	long kib = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!resident) {
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	} else if (st.st_size > 0) {
		long pg = sysconf(_SC_PAGESIZE);
		size_t n = ((size_t)st.st_size + pg - 1) / pg, i;
		unsigned char *vec = malloc(n);
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (vec && m != MAP_FAILED && mincore(m, (size_t)st.st_size, vec) == 0)
			for (i = 0; i < n; i++)
				kib += (vec[i] & 1) * (pg / 1024);
		if (m != MAP_FAILED)
			munmap(m, (size_t)st.st_size);
		free(vec);
	}
	close(fd);
	return kib;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int read_batch(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[128];
	size_t cap = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		if (nbatch == cap) {
			cap = cap ? 2 * cap : 4096;
			batch = realloc(batch, cap * sizeof *batch);
			if (!batch)
				return -1;
		}
		batch[nbatch++] = strtoull(line, NULL, 0);
	}
	fclose(f);
	qsort(batch, nbatch, sizeof *batch, cmp_u64);
	return nbatch ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One open + answer; prints its line and returns total wall ms, or < 0. */
static double run_once(int i, const char *dir, const symdb_uuid *id, uint64_t addr, int verify,
                       const char *index_path)
{
	char err[512] = "";
	symdb *db = NULL;
	symdb_image *img = NULL;
	symdb_frame fr[64];
	symdb_result res;
	double load = load1();
	long r0 = rss_kib();
	sample s0 = now(), s1, s2, s3;

	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	if (symdb_open(dir, &o, &db) != 0) {
		fprintf(stderr, "bench_open: %s\n", err);
		return -1;
	}
	s1 = now();
	o.flags = verify ? SYMDB_OPEN_VERIFY_CHECKSUMS : 0;
	if (symdb_image_open_uuid(db, id, &o, &img) != 0) {
		fprintf(stderr, "bench_open: %s\n", err);
		symdb_close(db);
		return -1;
	}
	s2 = now();
	ptrdiff_t n = symdb_resolve_batch(img, &addr, 1, fr, 64, sizeof fr[0], &res, sizeof res);
	for (size_t at = 0; batch && at < nbatch && n >= 0; at += (size_t)n) {
		size_t m = nbatch - at < CHUNK ? nbatch - at : CHUNK;
		n = symdb_resolve_batch(img, batch + at, m, frames, FRAMES, sizeof frames[0], results,
		                        sizeof results[0]);
		if (n <= 0) {
			fprintf(stderr, "bench_open: resolve: %s\n", symdb_strerror((int)n));
			break;
		}
	}
	if (batch)
		n = 1, res = results[0];
	s3 = now();
	long r1 = rss_kib();
	printf("run=%d db_ms=%.3f image_ms=%.3f resolve_ms=%.3f total_ms=%.3f cpu_ms=%.3f "
	       "majflt=%ld majflt_steps=%ld/%ld/%ld read_kib=%lld read_kib_steps=%lld/%lld/%lld "
	       "resident_kib=%ld rss_kib=+%ld load=%.2f name=%s\n",
	       i, s1.ms - s0.ms, s2.ms - s1.ms, s3.ms - s2.ms, s3.ms - s0.ms, s3.cpu - s0.cpu,
	       s3.majflt - s0.majflt, s1.majflt - s0.majflt, s2.majflt - s1.majflt,
	       s3.majflt - s2.majflt, (s3.rd - s0.rd) / 1024, (s1.rd - s0.rd) / 1024,
	       (s2.rd - s1.rd) / 1024, (s3.rd - s2.rd) / 1024,
	       cache_op(index_path, 1), r1 - r0, load,
	       n == 1 && res.sym_name ? res.sym_name : "(none)");
	symdb_image_close(img);
	symdb_close(db);
	return s3.ms - s0.ms;
}

/* The index file of id, from the catalog (an absolute path in buf). */
static int index_path_of(const char *dir, const symdb_uuid *id, char *buf, size_t bufsz)
{
	static char names[2 * 65536 + 4096];
	symdb *db = NULL;
	symdb_entry e = { .sz = sizeof e };
	int rc = symdb_open(dir, NULL, &db);

	if (rc == 0)
		rc = symdb_lookup(db, id, &e, names, sizeof names);
	if (rc == 0 && snprintf(buf, bufsz, "%s/%s", dir, e.file) >= (int)bufsz)
		rc = -1;
	symdb_close(db);
	return rc;
}

int main(int argc, char **argv)
{
	int verify = 0, cold = 0, runs = 1, a = 1, i, k = 0;
	static double tot[MAX_RUNS];
	char ipath[8192], cpath[8192];
	symdb_uuid id;

	for (; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a++)
		if (!strcmp(argv[a], "--verify"))
			verify = 1;
		else if (!strcmp(argv[a], "--cold"))
			cold = 1;
		else if (!strcmp(argv[a], "--runs") && a + 1 < argc)
			runs = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--addrs") && a + 1 < argc) {
			if (read_batch(argv[++a]) != 0) {
				fprintf(stderr, "bench_open: %s: no addresses\n", argv[a]);
				return 1;
			}
		}
		else
			break;
	if (argc - a != 3 || runs < 1 || runs > MAX_RUNS || symdb_uuid_parse(argv[a + 1], &id) != 0) {
		fprintf(stderr, "usage: bench_open [--verify] [--cold] [--runs N] [--addrs FILE] DB UUIDHEX ADDR\n");
		return 2;
	}
	const char *dir = argv[a];
	uint64_t addr = strtoull(argv[a + 2], NULL, 0);
	if (index_path_of(dir, &id, ipath, sizeof ipath) != 0) {
		fprintf(stderr, "bench_open: %s: cannot look the image up\n", dir);
		return 1;
	}
	snprintf(cpath, sizeof cpath, "%s/catalog/data.mdb", dir);
	for (i = 0; i < runs; i++) {
		if (cold && (cache_op(ipath, 0) < 0 || cache_op(cpath, 0) < 0)) {
			fprintf(stderr, "bench_open: cannot drop %s or %s from the cache\n", ipath, cpath);
			return 1;
		}
		double t = run_once(i, dir, &id, addr, verify, ipath);
		if (t < 0)
			return 1;
		tot[k++] = t;
	}
	qsort(tot, (size_t)k, sizeof tot[0], cmp_double);
	printf("summary verify=%d cold=%d batch=%zu runs=%d total_ms median=%.3f min=%.3f max=%.3f\n", verify,
	       cold, nbatch, k, k % 2 ? tot[k / 2] : (tot[k / 2 - 1] + tot[k / 2]) / 2, tot[0], tot[k - 1]);
	return 0;
}
