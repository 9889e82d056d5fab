/* tests/golden/dwarf.c: the source of dwarf.elf (see README.md). */
int counter = 1;

static inline __attribute__((always_inline)) int scale(int x)
{
	return x * 3 + counter;
}

static __attribute__((noinline)) int twice(int x)
{
	return scale(x) * 2;
}

__attribute__((noinline)) int add(int a, int b)
{
	return twice(a) + scale(b);
}

void _start(void)
{
	counter = add(counter, 3);
	for (;;)
		;
}
