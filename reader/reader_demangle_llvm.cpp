/* SPDX-License-Identifier: MIT */
/*
 * C shim over LLVM's demangler library (libLLVMDemangle from llvm-14-dev), so
 * that symdb_demangle() and symdb_symbolize() demangle exactly like
 * llvm-symbolizer-14, whose LLVMSymbolizer::DemangleName tries llvm::nonMicrosoftDemangle (Itanium
 * "_Z"/"___Z", Rust "_R", D "_D") and then, for names starting with '?', the
 * Microsoft demangler with access specifiers, calling conventions, member
 * types and return types left out.  Only compiled with SYMDB_LLVM_DEMANGLE.
 */
#include <cstdlib>
#include <cstring>
#include <string>

#include <llvm/Demangle/Demangle.h>

#include "reader_demangle.h"

/* Copy s into the caller's buffer, growing it. */
static int store(const char *s, char **buf, size_t *cap)
{
	size_t n = std::strlen(s) + 1;
	if (n > *cap) {
		char *nb = static_cast<char *>(std::realloc(*buf, n));
		if (!nb)
			return 0;
		*buf = nb;
		*cap = n;
	}
	std::memcpy(*buf, s, n);
	return 1;
}

/* An Itanium name, as llvm::nonMicrosoftDemangle() recognises one. */
static bool is_itanium(const char *name)
{
	return std::strncmp(name, "_Z", 2) == 0 || std::strncmp(name, "___Z", 4) == 0;
}

/*
 * nonMicrosoftDemangle's dispatch (Itanium, Rust, D by prefix; no second
 * try when the chosen one fails), then llvm-symbolizer's Microsoft call for
 * '?' names, each within lim.  Itanium and Microsoft names go to bounded
 * copies of LLVM's drivers around its own parsers and printers
 * (reader_demangle_itanium.cpp, reader_demangle_ms.cpp); a Rust name to
 * LLVM's rustDemangle() once rd_rust_demangle_fits() has measured what it
 * prints (its recursion LLVM limits itself); D's demangler is one loop over
 * its input, bounded by the input's length.
 */
extern "C" int rd_llvm_demangle(const char *name, char **buf, size_t *cap,
				const struct rd_demangle_limits *lim)
{
	if (!*buf)
		return 0;
	size_t max = name[0] == '?' ? lim->ms_input_max : lim->input_max;
	size_t len = strnlen(name, max + 1);
	if (len > max)
		return 0;
	if (is_itanium(name))
		return rd_itanium_demangle(name, len, buf, cap, lim);
	if (name[0] == '?')
		return rd_ms_demangle(name, len, buf, cap, lim);
	if (name[0] == '_' && name[1] == 'R' && !rd_rust_demangle_fits(name, len, lim))
		return 0;
	/* D's output is linear in its input; checked after the fact only so
	 * that every demangler keeps to output_max. */
	std::string out;
	if (llvm::nonMicrosoftDemangle(name, out) && out.size() <= lim->output_max)
		return store(out.c_str(), buf, cap);
	return 0;
}
