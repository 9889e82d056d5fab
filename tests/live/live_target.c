/* SPDX-License-Identifier: MIT */
/*
 * live_target.c - the process tests/live resolves while it runs: a PIE
 * executable that dlopen()s a plugin, dlopen()s a copy of a second library
 * and deletes that copy, and starts a thread; it prints the runtime
 * addresses of its own functions, of return addresses taken inside each
 * module (so addresses in the middle of functions, some of them in inlined
 * code), of a libc function, and then waits until stdin closes.
 *
 * usage: live_target PLUGIN.so DELETED.so COPYDIR
 * Output: "NAME 0xADDR" lines, then "ready".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*probe_fn)(void *(*cb)(void));

static void print_addr(const char *name, const void *p)
{
	printf("%s %p\n", name, p);
}

__attribute__((noinline)) static void *ret_addr(void)
{
	return __builtin_return_address(0);
}

static inline void *inlined_caller(int depth)
{
	/* inlined into main_worker: the return address lies in inlined code */
	return depth > 0 ? ret_addr() : NULL;
}

__attribute__((noinline)) void *main_worker(int depth)
{
	void *r = inlined_caller(depth);
	__asm__ volatile("" ::: "memory");
	return r;
}

static void *thread_ret;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int thread_ready;

__attribute__((noinline)) static void *thread_main(void *arg)
{
	(void)arg;
	void *r = ret_addr();
	pthread_mutex_lock(&mu);
	thread_ret = r;
	thread_ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	for (;;)
		pause(); /* lives as long as the process */
	return NULL;
}

static void *load(const char *path, const char *sym, void **fn)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "live_target: %s\n", dlerror());
		exit(1);
	}
	*fn = dlsym(h, sym);
	if (!*fn) {
		fprintf(stderr, "live_target: %s: no %s\n", path, sym);
		exit(1);
	}
	return h;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: live_target PLUGIN.so DELETED.so COPYDIR\n");
		return 2;
	}
	void *plugin_probe, *deleted_probe;
	load(argv[1], "plugin_probe", &plugin_probe);

	/* the copy is loaded, then unlinked: maps shows "(deleted)" */
	char copy[4096], buf[65536];
	snprintf(copy, sizeof copy, "%s/libdeleted-copy.so", argv[3]);
	FILE *in = fopen(argv[2], "rb"), *out = fopen(copy, "wb");
	size_t n;
	if (!in || !out)
		return 1;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
	load(copy, "deleted_probe", &deleted_probe);
	unlink(copy);

	pthread_t th;
	pthread_create(&th, NULL, thread_main, NULL);
	pthread_mutex_lock(&mu);
	while (!thread_ready)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);

	print_addr("main", (void *)main);
	print_addr("main_worker", (void *)main_worker);
	print_addr("main_worker.ret", main_worker(1));
	print_addr("thread_main", (void *)thread_main);
	print_addr("thread_main.ret", thread_ret);
	print_addr("plugin_probe", plugin_probe);
	print_addr("plugin_probe.ret", ((probe_fn)plugin_probe)(ret_addr));
	print_addr("deleted_probe", deleted_probe);
	print_addr("deleted_probe.ret", ((probe_fn)deleted_probe)(ret_addr));
	print_addr("libc.getpid", (void *)getpid);
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof buf) > 0)
		;
	return 0;
}
