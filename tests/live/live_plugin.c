/* SPDX-License-Identifier: MIT */
/* live_plugin.c - dlopen()ed by live_target: its probe calls back, so the
 * callback's return address lies inside this library (in inlined code). */
static inline void *plugin_inline(void *(*cb)(void), int n)
{
	return n ? cb() : 0;
}

__attribute__((noinline)) void *plugin_probe(void *(*cb)(void))
{
	void *r = plugin_inline(cb, 1);
	__asm__ volatile("" ::: "memory");
	return r;
}
