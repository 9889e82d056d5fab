/* SPDX-License-Identifier: MIT */
/*
 * The program tests/profile/pprof.sh profiles with gperftools' CPU profiler
 * (libprofiler): a few functions of its own, inline ones among them, and a
 * call into a shared library built beside it (pprof_lib.c), so that the
 * profile has locations in three images: this executable, the library and
 * libc, each with inline frames or symbol-table-only frames.
 */
#include <gperftools/profiler.h>
#include <stdio.h>

unsigned lib_churn(unsigned n); /* pprof_lib.c */

static inline __attribute__((always_inline)) unsigned mix(unsigned x)
{
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

static inline __attribute__((always_inline)) unsigned twice(unsigned x)
{
	return mix(mix(x) + 1);
}

__attribute__((noinline)) unsigned leaf_a(unsigned n)
{
	unsigned s = 1;
	for (unsigned i = 0; i < n; i++)
		s = twice(s + i);
	return s;
}

__attribute__((noinline)) unsigned leaf_b(unsigned n)
{
	unsigned s = 7;
	for (unsigned i = 0; i < n; i++)
		s = mix(s) * 3 + i;
	return s;
}

__attribute__((noinline)) unsigned middle(unsigned n)
{
	return leaf_a(n) + leaf_b(n / 2) + lib_churn(n / 2);
}

int main(int argc, char **argv)
{
	volatile unsigned big = 200000, rounds = 0;
	unsigned s = 0;
	if (argc < 3 || sscanf(argv[2], "%u", (unsigned *)&rounds) != 1)
		return 2;
	ProfilerStart(argv[1]);
	for (unsigned r = 0; r < rounds; r++)
		s += middle(big) + leaf_b(big / 4);
	ProfilerStop();
	printf("%u\n", s);
	return 0;
}
