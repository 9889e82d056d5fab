/* SPDX-License-Identifier: MIT */
/*
 * A C program with Rust linkage names (given with __asm__), so symdb's
 * demangling of Rust symbols is tested without a Rust compiler: a v0 name
 * (_R...) and a legacy one (_ZN...17h<hash>E), each a real function with
 * DWARF, plus one called from main through an inlined helper.
 */
#include <stdio.h>

int rust_v0(int x) __asm__("_RNvCs1234_7mycrate7compute");
int rust_v0_generic(int x) __asm__("_RINvNtCs1234_7mycrate5inner3mapmEB4_");
int rust_legacy(int x) __asm__("_ZN7mycrate5inner6legacy17h0123456789abcdefE");

__attribute__((noinline)) int rust_v0(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int rust_v0_generic(int x)
{
	return x ^ 0x55;
}

__attribute__((noinline)) int rust_legacy(int x)
{
	return rust_v0(x) + rust_v0_generic(x);
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", rust_legacy(argc));
	return 0;
}
