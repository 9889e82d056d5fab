/* SPDX-License-Identifier: MIT */
/*
 * Output-time demangling for the CLI's printers.  The index stores linkage
 * names; they are demangled only when printed, by the library's
 * symdb_demangle() (llvm-symbolizer-14's demanglers and policy, or the C++
 * runtime's __cxa_demangle when libsymdb is built without libLLVMDemangle).
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
	size_t demangled; /* names the demangler changed so far (the name
	                     cache's tests count them) */
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

#endif /* SYMDB_CLI_DEMANGLE_H */
