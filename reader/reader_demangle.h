/* SPDX-License-Identifier: MIT */
/*
 * reader_demangle.h - the reader's demangler (reader_demangle.c, and
 * reader_demangle_llvm.cpp when built with LLVM's demangler): one function
 * for symdb_demangle() and for the name cache of symdb_symbolize().
 * Internal, not installed.
 */
#ifndef SYMDB_READER_DEMANGLE_H
#define SYMDB_READER_DEMANGLE_H

#include <stddef.h>

#ifndef RD_HIDDEN
#define RD_HIDDEN __attribute__((visibility("hidden")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifdef SYMDB_HAVE_LLVM_DEMANGLE
/* reader_demangle_llvm.cpp.  Returns 1 and the result in *buf (realloc'd,
 * *cap a lower bound of its size) when name demangles, else 0. */
RD_HIDDEN int rd_llvm_demangle(const char *name, char **buf, size_t *cap);
#endif

#ifdef __cplusplus
}
#endif

#endif /* SYMDB_READER_DEMANGLE_H */
