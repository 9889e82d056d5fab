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

/*
 * What demangling one name may cost.  A name past any of these is not
 * demangled (symdb_demangle() returns 0) and callers print it as it is: a
 * hostile symbol table must not crash a query or eat the machine, and
 * llvm-symbolizer-14 itself has none of these bounds (it overflows its stack
 * or grows without end on such names).
 */
struct rd_demangle_limits {
	size_t input_max;    /* bytes of a mangled name */
	size_t ms_input_max; /* bytes of a Microsoft ("?") name */
	unsigned depth_max;  /* nested parser calls; levels of the printed tree */
	size_t arena_max;    /* bytes of parse tree */
	size_t output_max;   /* bytes of demangled name (an upper bound before printing) */
};

/* The numbers symdb_demangle() uses, and why:
 * - input 1 MiB: the longest names real C++ and Rust code produce are tens
 *   or hundreds of KiB (libstdc++'s are under 1 KiB; the tests demangle one
 *   of 300 KB as llvm-symbolizer does); the other bounds hold whatever it is,
 *   this one caps the work spent reading a name before they apply.
 * - Microsoft 4 KiB: MSVC and clang-cl replace a longer name by "??@" and its
 *   MD5, so no genuine one is longer; LLVM's Microsoft demangler has no depth
 *   limit, and 4 KiB of nesting takes under 512 KiB of stack (measured).
 * - depth 2048: about 400 levels of template nesting (a level costs four or
 *   five parser calls) where real names nest a few dozen; measured, 2048
 *   calls plus printing the tree they built take under 320 KiB of stack in
 *   a release build, well within a default thread stack.
 * - parse tree 32 MiB and output 4 MiB: a name that demangles to more is
 *   not readable anyway, and together with the output buffer's doubling
 *   this keeps one demangling well under 64 MiB.
 */
#define RD_DEMANGLE_INPUT_MAX ((size_t)1 << 20)
#define RD_DEMANGLE_MS_INPUT_MAX ((size_t)4096)
#define RD_DEMANGLE_DEPTH_MAX 2048u
#define RD_DEMANGLE_ARENA_MAX ((size_t)32 << 20)
#define RD_DEMANGLE_OUTPUT_MAX ((size_t)4 << 20)

/* reader_demangle_rust.c: 1 when LLVM's Rust demangler, given the "_R"
 * name of len bytes, prints at most lim->output_max bytes (it grows its
 * output without bound on back references that double it), else 0. */
RD_HIDDEN int rd_rust_demangle_fits(const char *name, size_t len,
                                    const struct rd_demangle_limits *lim);

#ifdef SYMDB_HAVE_LLVM_DEMANGLE
/* reader_demangle_llvm.cpp: symdb_demangle() under limits lim.  Returns 1
 * and the result in *buf (realloc'd, *cap its size) when name demangles
 * within them, else 0.  Thread-safe; *buf must be a malloc'd buffer. */
RD_HIDDEN int rd_llvm_demangle(const char *name, char **buf, size_t *cap,
                               const struct rd_demangle_limits *lim);

/* reader_demangle_itanium.cpp: an Itanium name of len bytes ("_Z...",
 * "___Z..."), as llvm::itaniumDemangle() would demangle it, within lim. */
RD_HIDDEN int rd_itanium_demangle(const char *name, size_t len, char **buf, size_t *cap,
                                  const struct rd_demangle_limits *lim);

/* reader_demangle_itanium.cpp: 1 when the pairs "Tt"/"Tp" in s[0..len)
 * are more than max: an upper bound of the levels of
 * parseTemplateParamDecl's own recursion, which no depth counter sees. */
RD_HIDDEN int rd_itanium_param_decls_over(const char *s, size_t len, size_t max);

/* reader_demangle_ms.cpp: a Microsoft name ("?...") of len bytes, as
 * llvm-symbolizer-14 demangles it (microsoftDemangle() with access
 * specifiers, calling conventions, member and return types left out),
 * within lim. */
RD_HIDDEN int rd_ms_demangle(const char *name, size_t len, char **buf, size_t *cap,
                             const struct rd_demangle_limits *lim);
#endif

#ifdef __cplusplus
}
#endif

#endif /* SYMDB_READER_DEMANGLE_H */
