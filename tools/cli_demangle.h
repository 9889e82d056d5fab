/* SPDX-License-Identifier: MIT */
/*
 * Output-time demangling for `symdb query`.  The index stores linkage names;
 * they are demangled only when printed, with the same demangler and the same
 * policy as llvm-symbolizer-14 (LLVM's own Itanium/Rust/D demanglers, then
 * Microsoft names starting with '?'), so that output is byte-identical.  When
 * symdb is built without libLLVMDemangle (SYMDB_LLVM_DEMANGLE=OFF), the C++
 * runtime's __cxa_demangle is used for "_Z" names instead; it differs from
 * LLVM's on lambdas and clone suffixes, see /work/shared/README.md.
 *
 * One demangler owns one reusable output buffer, so demangling a stream of
 * names does not allocate per name (beyond what the demangler itself does).
 * A demangler is not thread-safe; use one per thread.
 */
#ifndef SYMDB_CLI_DEMANGLE_H
#define SYMDB_CLI_DEMANGLE_H

#include <stddef.h>

#include "cli_util.h"

struct cli_demangler {
	char *buf;  /* malloc'd; realloc'd by the demanglers */
	size_t cap; /* a lower bound of buf's size */
};

CLI_HIDDEN void cli_demangler_init(struct cli_demangler *d);
CLI_HIDDEN void cli_demangler_fini(struct cli_demangler *d);

/*
 * Demangle one linkage name.  Returns the demangled name (valid until the
 * next call on d) or `name` itself when it is not a mangled name the
 * demangler accepts — exactly llvm-symbolizer's fallback.
 */
CLI_HIDDEN const char *cli_demangle(struct cli_demangler *d, const char *name);

/* Which demangler was compiled in: "llvm" or "cxxabi" (for --version). */
CLI_HIDDEN const char *cli_demangler_kind(void);

#ifdef SYMDB_HAVE_LLVM_DEMANGLE
/* tools/cli_demangle_llvm.cpp.  Returns 1 and the result in *buf (realloc'd,
 * *cap a lower bound of its size) when name demangles, else 0. */
#ifdef __cplusplus
extern "C" {
#endif
CLI_HIDDEN int cli_llvm_demangle(const char *name, char **buf, size_t *cap);
#ifdef __cplusplus
}
#endif
#endif

#endif /* SYMDB_CLI_DEMANGLE_H */
