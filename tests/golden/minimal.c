/* tests/golden/minimal.c: the source of minimal.elf (see README.md). */
int counter = 1;

static __attribute__((noinline)) int twice(int x)
{
	return x * 2 + counter;
}

__attribute__((noinline)) int add(int a, int b)
{
	return twice(a) + b;
}

void _start(void)
{
	counter = add(counter, 3);
	for (;;)
		;
}
