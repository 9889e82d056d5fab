/* SPDX-License-Identifier: MIT */
/* The shared library of tests/profile/pprof_work.c: an inline function of
 * its own, so that a library mapping has inline frames too. */
static inline __attribute__((always_inline)) unsigned lib_step(unsigned x, unsigned i)
{
	x = x * 2654435761u + i;
	return x ^ (x >> 15);
}

__attribute__((noinline)) unsigned lib_churn(unsigned n)
{
	unsigned s = 3;
	for (unsigned i = 0; i < n; i++)
		s = lib_step(s, i);
	return s;
}
