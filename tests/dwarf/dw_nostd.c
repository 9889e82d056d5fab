/* SPDX-License-Identifier: MIT */
/* dw_nostd.c - libc-free fixture for cross targets (ppc64/ppc32 big-endian,
 * i386, aarch64): an always_inline chain in a loop, linked with ld.lld. */
static inline __attribute__((always_inline)) int l3(int x) { return x * 7 + 1; }
static inline __attribute__((always_inline)) int l2(int x) { return l3(x) ^ l3(x + 2); }
__attribute__((noinline)) int l1(int x) { int s = 0; for (int i = 0; i < x; i++) s += l2(i); return s; }
int v;
void _start(void) { v = l1(v); for (;;) ; }
