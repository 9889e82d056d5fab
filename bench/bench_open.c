/* SPDX-License-Identifier: MIT */
/*
 * bench_open.c - the cost of a first answer (issue 18, item 2): open the
 * database, open one image by UUID and resolve one address, in process,
 * through the public API as a user would.  Prints one line:
 *
 *   verify=0 open_db_ms=… open_image_ms=… resolve_ms=… total_ms=…
 *   cpu_ms=… majflt=… rss_kib=+… (db +…, image +…, resolve +…) name=…
 *
 * wall time from CLOCK_MONOTONIC around each step, CPU and major faults from
 * getrusage deltas, RSS from /proc/self/status (VmRSS) before and after.
 * --verify opens with SYMDB_OPEN_VERIFY_CHECKSUMS (the old default of the
 * CLI).  The page cache is the caller's business: for a cold run, drop the
 * index file's and catalog/data.mdb's pages first (posix_fadvise
 * POSIX_FADV_DONTNEED on each, or `echo 3 > /proc/sys/vm/drop_caches`).
 *
 * Usage: bench_open [--verify] DB UUIDHEX ADDR
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "symdb.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(long *majflt)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*majflt = ru.ru_majflt;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
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

int main(int argc, char **argv)
{
	int verify = argc > 1 && !strcmp(argv[1], "--verify");
	char err[512] = "";
	symdb *db = NULL;
	symdb_image *img = NULL;
	symdb_uuid id;
	symdb_frame fr[64];
	symdb_result res;
	long f0, f1;

	if (argc != 4 + verify || symdb_uuid_parse(argv[2 + verify], &id) != 0) {
		fprintf(stderr, "usage: bench_open [--verify] DB UUIDHEX ADDR\n");
		return 2;
	}
	uint64_t addr = strtoull(argv[3 + verify], NULL, 0);
	long r0 = rss_kib();
	double c0 = cpu_ms(&f0), t0 = now_ms();
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	if (symdb_open(argv[1 + verify], &o, &db) != 0) {
		fprintf(stderr, "bench_open: %s\n", err);
		return 1;
	}
	double t1 = now_ms();
	long r_db = rss_kib();
	o.flags = verify ? SYMDB_OPEN_VERIFY_CHECKSUMS : 0;
	if (symdb_image_open_uuid(db, &id, &o, &img) != 0) {
		fprintf(stderr, "bench_open: %s\n", err);
		return 1;
	}
	double t2 = now_ms();
	long r_img = rss_kib();
	ptrdiff_t n = symdb_resolve_batch(img, &addr, 1, fr, 64, sizeof fr[0], &res, sizeof res);
	double t3 = now_ms(), c1 = cpu_ms(&f1);
	long r1 = rss_kib();
	printf("verify=%d open_db_ms=%.3f open_image_ms=%.3f resolve_ms=%.3f total_ms=%.3f "
	       "cpu_ms=%.3f majflt=%ld rss_kib=+%ld (db +%ld, image +%ld, resolve +%ld) name=%s\n",
	       verify, t1 - t0, t2 - t1, t3 - t2, t3 - t0, c1 - c0, f1 - f0, r1 - r0, r_db - r0, r_img - r_db, r1 - r_img,
	       n == 1 && res.sym_name ? res.sym_name : "(none)");
	symdb_image_close(img);
	symdb_close(db);
	return 0;
}
