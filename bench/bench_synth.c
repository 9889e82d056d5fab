/* SPDX-License-Identifier: MIT */
/*
 * bench_synth.c - symdb_resolve_batch() throughput on a large synthetic
 * image (tests/unit/rd_model.h: 100 000 symbols, 50 000 inline nodes over
 * 200 000 inline intervals, 500 000 line intervals), 1M sorted addresses
 * resolved in chunks of 64 Ki as a profiler would.  No files and no binaries needed, so it runs
 * anywhere; bench_resolve measures real binaries.  Reports, never asserts.
 * This loop used to run at the end of unit.resolve; tests never measure time.
 * The image is written in the current format (2.x, SPEC §7.9's packed
 * tables), as `symdb build` writes it; --v1 writes the 1.x layout that a
 * 2.x reader still opens, to compare the two.
 *
 *   bench_synth [--v1] [RUNS]   (default 5; prints each run and the median)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "rd_model.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	sizes sz = { 100000, 500, 20000, 50000, 200000, 500000, 0 };
	size_t n = 1000000, chunk = 65536, cap = chunk * 8;
	int v1 = argc > 1 && strcmp(argv[1], "--v1") == 0;
	int runs = argc > 1 + v1 ? atoi(argv[1 + v1]) : 5;
	double t[101];
	model m;
	symdb_image *img;
	uint64_t *a;
	symdb_frame *fr;
	symdb_result *r;

	if (runs < 1 || runs > 101) {
		fprintf(stderr, "usage: bench_synth [--v1] [RUNS 1..101]\n");
		return 2;
	}
	model_major = v1 ? FMT_V1_MAJOR : FMT_VERSION_MAJOR;
	rng_state = 0xbe4c4;
	gen_model(&m, &sz, 4, 0x400000);
	img = open_model(&m);
	a = gen_batch(&m, n);
	fr = malloc(cap * sizeof *fr);
	r = malloc(chunk * sizeof *r);
	if (!img || !a || !fr || !r) {
		fprintf(stderr, "bench_synth: cannot set up the image\n");
		return 1;
	}
	for (int run = 0; run < runs; run++) {
		size_t done = 0, nframes = 0;
		double t0 = now();

		while (done < n) {
			size_t k = n - done < chunk ? n - done : chunk;
			ptrdiff_t got = symdb_resolve_batch(img, a + done, k, fr, cap, sizeof *fr, r,
			                                    sizeof *r);

			if (got <= 0) {
				fprintf(stderr, "bench_synth: symdb_resolve_batch: %s\n",
				        got < 0 ? symdb_strerror((int)got) : "no progress");
				return 1;
			}
			nframes += r[got - 1].first + r[got - 1].count;
			done += (size_t)got;
		}
		t[run] = now() - t0;
		printf("synth format=%u run=%d addresses=%zu frames=%zu symbols=%u inline_intervals=%u line_intervals=%u "
		       "seconds=%.6f ns_per_address=%.1f\n", model_major, run, n, nframes, m.nsym, m.nimap,
		       m.nrow, t[run], t[run] * 1e9 / (double)n);
	}
	qsort(t, (size_t)runs, sizeof *t, cmp_double);
	printf("synth median_seconds=%.6f ns_per_address=%.1f\n", t[runs / 2],
	       t[runs / 2] * 1e9 / (double)n);
	free(a);
	free(fr);
	free(r);
	symdb_image_close(img);
	free_model(&m);
	return check_exit();
}
