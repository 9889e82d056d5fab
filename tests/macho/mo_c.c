/* SPDX-License-Identifier: MIT */
/* Mach-O fixture (C): out-of-line and inlined functions, statics, data. */
static int table[64];
int counter = 3;

static inline __attribute__((always_inline)) int mix(int a, int b)
{
	return (a * 31) ^ (b + counter);
}

static __attribute__((noinline)) int fill(int n)
{
	for (int i = 0; i < n && i < 64; i++)
		table[i] = mix(i, n);
	return table[n & 63];
}

__attribute__((noinline)) int compute(int a)
{
	int s = 0;
	for (int i = 0; i < a; i++)
		s += mix(s, i) + fill(i);
	return s;
}

__attribute__((noinline)) long accumulate(const int *v, int n)
{
	long t = 0;
	for (int i = 0; i < n; i++)
		t += v[i] * (long)mix(i, v[i]);
	return t;
}

int main(int argc, char **argv)
{
	(void)argv;
	return compute(argc) + (int)accumulate(table, argc) + fill(argc);
}
