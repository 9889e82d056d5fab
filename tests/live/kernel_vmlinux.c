/* SPDX-License-Identifier: MIT */
/*
 * kernel_vmlinux.c - a vmlinux-shaped fixture for tests/live/kernel_dwarf.sh:
 * linked at the x86_64 kernel's base with -mcmodel=kernel, no libc, an
 * _stext symbol as the kernel has, and inline chains two deep.  OTHER
 * gives the same layout another build-id.
 */
__asm__(".text\n.globl _stext\n.type _stext,@function\n_stext:\n\tret\n");

volatile int sink;

static inline __attribute__((always_inline)) int leaf(int x)
{
	sink += x;
	return x * 3;
}

static inline __attribute__((always_inline)) int mid(int x)
{
	return leaf(x) + leaf(x + 1);
}

__attribute__((noinline)) int do_work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += mid(i);
	return s;
}

__attribute__((noinline)) static int helper(int n)
{
#ifdef OTHER
	sink++;
#endif
	return do_work(n) + mid(n);
}

int start_kernel(void)
{
	return helper(sink);
}
