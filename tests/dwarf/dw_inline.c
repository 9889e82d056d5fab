/* SPDX-License-Identifier: MIT */
/*
 * dw_inline.c - C fixture for the DWARF oracle tests: static inline and
 * always_inline chains three and more deep, a function used both inlined and
 * out of line, a loop with discriminators, a cold path, and code in a second
 * section, so that inline ranges split into several pieces.
 */
#include <stdio.h>
#include <stdlib.h>

static inline int leaf(int x)
{
	return x * x + 1;
}

static inline __attribute__((always_inline)) int mid3(int x)
{
	return leaf(x) + leaf(x + 1);
}

static inline __attribute__((always_inline)) int mid2(int x)
{
	int s = 0;
	for (int i = 0; i < x; i++)
		s += mid3(i) ^ i;
	return s;
}

static inline __attribute__((always_inline)) int mid1(int x)
{
	if (__builtin_expect(x < 0, 0)) {
		fprintf(stderr, "negative %d\n", x);
		abort();
	}
	return mid2(x) * 3;
}

__attribute__((noinline)) int top(int x)
{
	return mid1(x) + mid1(x / 2);
}

__attribute__((noinline, section(".text.other"))) int other(int x)
{
	return mid3(x) - leaf(x);
}

int shared_fn(int x)
{
	return x > 3 ? shared_fn(x - 3) + 1 : x;
}

int main(int argc, char **argv)
{
	int v = argc > 1 ? atoi(argv[1]) : 5;
	printf("%d %d %d\n", top(v), other(v), shared_fn(v));
	return 0;
}
