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

/*
 * The common case, an Itanium name starting with "_Z", goes straight to
 * itaniumDemangle with the reusable buffer: it is the call nonMicrosoftDemangle
 * makes for such names, minus its malloc + std::string copy.  itaniumDemangle
 * reallocs buf when it must grow, and then reports the length used, which is
 * a safe lower bound for the capacity.
 */
static int demangle_itanium(const char *name, char **buf, size_t *cap)
{
	size_t n = *cap;
	int status = 0;
	char *r = llvm::itaniumDemangle(name, *buf, &n, &status);
	if (!r || status != llvm::demangle_success)
		return 0;
	if (r != *buf) {
		*buf = r;
		*cap = n;
	}
	return 1;
}

extern "C" int rd_llvm_demangle(const char *name, char **buf, size_t *cap)
{
	if (!*buf)
		return 0;
	if (name[0] == '_' && name[1] == 'Z')
		return demangle_itanium(name, buf, cap);
	std::string out;
	if (llvm::nonMicrosoftDemangle(name, out))
		return store(out.c_str(), buf, cap);
	if (name[0] != '?')
		return 0;
	int status = 0;
	char *r = llvm::microsoftDemangle(
		name, nullptr, nullptr, nullptr, &status,
		llvm::MSDemangleFlags(llvm::MSDF_NoAccessSpecifier | llvm::MSDF_NoCallingConvention |
				      llvm::MSDF_NoMemberType | llvm::MSDF_NoReturnType));
	if (!r || status != 0) {
		std::free(r);
		return 0;
	}
	int ok = store(r, buf, cap);
	std::free(r);
	return ok;
}
