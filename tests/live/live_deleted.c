/* SPDX-License-Identifier: MIT */
/* live_deleted.c - a copy of it is dlopen()ed by live_target and then
 * deleted: only /proc/PID/map_files still reaches the mapped file. */
static int counter;

__attribute__((noinline)) static void *deleted_inner(void *(*cb)(void))
{
	counter++;
	void *r = cb();
	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) void *deleted_probe(void *(*cb)(void))
{
	void *r = deleted_inner(cb);
	__asm__ volatile("" ::: "memory");
	return r;
}
