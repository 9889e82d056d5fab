/* SPDX-License-Identifier: MIT */
/*
 * reader_demangle.c - symdb_demangle(): LLVM's demanglers through
 * reader_demangle_llvm.cpp when the library is built with them
 * (SYMDB_LLVM_DEMANGLE, so output matches llvm-symbolizer-14 byte for byte),
 * else the C++ runtime's __cxa_demangle for "_Z" names; the latter differs
 * from LLVM's on lambdas and clone suffixes and knows no Rust.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader_demangle.h"
#include "symdb.h"

#ifndef SYMDB_HAVE_LLVM_DEMANGLE
/* The Itanium C++ ABI's entry point (cxxabi.h), provided by libstdc++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);
#endif

const char *symdb_demangler_kind(void)
{
#ifdef SYMDB_HAVE_LLVM_DEMANGLE
	return "llvm";
#else
	return "cxxabi";
#endif
}

int symdb_demangle(const char *name, char **buf, size_t *cap)
{
	if (!name || !buf || !cap)
		return SYMDB_E_INVAL;
	if (name[0] != '_' && name[0] != '?')
		return 0; /* cheap exit for C names */
	if (!*buf || *cap == 0) {
		char *nb = realloc(*buf, 256);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = 256;
	}
#ifdef SYMDB_HAVE_LLVM_DEMANGLE
	static const struct rd_demangle_limits limits = {
		.input_max = RD_DEMANGLE_INPUT_MAX,
		.ms_input_max = RD_DEMANGLE_MS_INPUT_MAX,
		.depth_max = RD_DEMANGLE_DEPTH_MAX,
		.arena_max = RD_DEMANGLE_ARENA_MAX,
		.output_max = RD_DEMANGLE_OUTPUT_MAX,
	};
	return rd_llvm_demangle(name, buf, cap, &limits);
#else
	if (name[1] != 'Z')
		return 0;
	/* __cxa_demangle reallocs buf when too small and stores its new size. */
	size_t n = *cap;
	int status = 0;
	char *r = __cxa_demangle(name, *buf, &n, &status);
	if (!r || status != 0)
		return 0;
	*buf = r;
	if (n > *cap)
		*cap = n;
	return 1;
#endif
}
