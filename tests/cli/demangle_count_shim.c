/* SPDX-License-Identifier: MIT */
/*
 * demangle_count_shim.c - an LD_PRELOAD library for
 * tests/cli/demangle_once.sh: it stands in front of libsymdb's
 * symdb_demangle() (called by the CLI and, through its PLT, by the library
 * itself), counts the calls on mangled names ("_Z...") and the distinct
 * such names, and at exit appends "CALLS DISTINCT" to the file
 * DEMANGLE_COUNT_LOG.  A name demangled once per run gives CALLS ==
 * DISTINCT.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*demangle_fn)(const char *, char **, size_t *);

#define SET_SLOTS (1u << 20) /* distinct names the set holds */

static char **set;
static unsigned long calls, distinct;

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static void remember(const char *name)
{
	if (!set && !(set = calloc(SET_SLOTS, sizeof(*set))))
		abort();
	size_t h = (size_t)str_hash(name) & (SET_SLOTS - 1);
	for (; set[h]; h = (h + 1) & (SET_SLOTS - 1))
		if (strcmp(set[h], name) == 0)
			return;
	if (distinct >= SET_SLOTS / 2 || !(set[h] = strdup(name)))
		abort();
	distinct++;
}

int symdb_demangle(const char *name, char **buf, size_t *cap)
{
	static demangle_fn real;
	if (!real && !(real = (demangle_fn)dlsym(RTLD_NEXT, "symdb_demangle")))
		abort();
	if (name && name[0] == '_' && name[1] == 'Z') {
		calls++;
		remember(name);
	}
	return real(name, buf, cap);
}

__attribute__((destructor)) static void report(void)
{
	const char *log = getenv("DEMANGLE_COUNT_LOG");
	FILE *f = log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "%lu %lu\n", calls, distinct);
		fclose(f);
	}
}
