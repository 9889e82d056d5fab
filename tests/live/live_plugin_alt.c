/* SPDX-License-Identifier: MIT */
/* live_plugin_alt.c - another build of live_plugin.c's library: the same
 * plugin_probe behind a padding function, so an address of one build is
 * different code in the other.  live_ns.py maps one and leaves the other at
 * the same path (another mount namespace, or renamed over it), and checks
 * that `symdb query --pid` answers from the mapped one. */
void *plugin_alt_padding(void *(*cb)(void));

__attribute__((noinline)) void *plugin_alt_padding(void *(*cb)(void))
{
	/* 512 bytes of nops: moves plugin_probe well past its other address */
	__asm__ volatile(".fill 512,1,0x90" ::: "memory");
	return cb();
}

#include "live_plugin.c"
