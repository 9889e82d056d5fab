/* SPDX-License-Identifier: MIT */
/*
 * The C side of output-time demangling (see cli_demangle.h): buffer
 * ownership, and the __cxa_demangle fallback used when symdb is built
 * without LLVM's demangler.
 */
#include "cli_demangle.h"

#include <stdlib.h>
#include <string.h>

#ifndef SYMDB_HAVE_LLVM_DEMANGLE
/* The Itanium C++ ABI's entry point (cxxabi.h), provided by libstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);
#endif

void cli_demangler_init(struct cli_demangler *d)
{
	d->cap = 256;
	d->buf = malloc(d->cap);
	if (!d->buf)
		d->cap = 0;
}

void cli_demangler_fini(struct cli_demangler *d)
{
	free(d->buf);
	d->buf = NULL;
	d->cap = 0;
}

const char *cli_demangler_kind(void)
{
#ifdef SYMDB_HAVE_LLVM_DEMANGLE
	return "llvm";
#else
	return "cxxabi";
#endif
}

#ifdef SYMDB_HAVE_LLVM_DEMANGLE
const char *cli_demangle(struct cli_demangler *d, const char *name)
{
	if (name[0] != '_' && name[0] != '?')
		return name; /* cheap exit for C names */
	return cli_llvm_demangle(name, &d->buf, &d->cap) ? d->buf : name;
}
#else
const char *cli_demangle(struct cli_demangler *d, const char *name)
{
	if (name[0] != '_' || name[1] != 'Z' || !d->buf)
		return name;
	/* __cxa_demangle reallocs buf when too small and stores its new size. */
	size_t n = d->cap;
	int status = 0;
	char *r = __cxa_demangle(name, d->buf, &n, &status);
	if (!r || status != 0)
		return name;
	d->buf = r;
	if (n > d->cap)
		d->cap = n;
	return r;
}
#endif
