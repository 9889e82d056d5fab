/* SPDX-License-Identifier: MIT */
/*
 * prof_pprof_name.c - the short C++ name pprof stores in Function.name.
 *
 * pprof's own symbolization keeps the linkage name in system_name and
 * demangles it for name without parameters, template arguments, return
 * type, method qualifiers or clone suffixes ("ns::Box::get" for
 * "_ZNK2ns3BoxIiE3getEv").  Its views show name, so a profile symbolized
 * by symdb reads the same only if it stores the same short form.  It is
 * derived here from the full demangled form (symdb_demangle(), as
 * llvm-symbolizer prints it) by removing those parts; a form this does not
 * understand (special names such as "vtable for X", unbalanced brackets,
 * lambdas and unnamed types, whose LLVM spelling is not pprof's) is
 * refused, and the caller then stores the linkage name, which pprof
 * demangles itself when it reads the profile (it demangles every Function
 * whose name equals its system_name).
 */
#include <string.h>

#include "prof_pprof.h"

/* Full forms that are not a function or variable name: left to pprof. */
static int special_name(const char *s)
{
	static const char *const pre[] = {
		"vtable for ", "VTT for ", "typeinfo ", "construction vtable for ",
		"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
		"guard variable for ", "reference temporary ", "transaction clone for ",
		"TLS init function for ", "TLS wrapper function for ", "thunk to ",
		"initializer for module ", "template parameter object for ",
	};
	for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
		if (!strncmp(s, pre[i], strlen(pre[i])))
			return 1;
	return 0;
}

static int ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && !memcmp(s + n - k, suf, k);
}

/* Drop clone suffixes (" (.isra.0)" as LLVM prints them, " [clone
 * .isra.0]" as GNU does), then the method's qualifiers, then the parameter
 * list: the new length, or 0 when the brackets do not balance. */
static size_t strip_tail(const char *s, size_t n)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
	while (n > 4 && s[n - 1] == ')') {
		size_t i = n - 1;
		while (i > 0 && s[i] != '(' && s[i] != ' ')
			i--;
		if (i < 2 || s[i] != '(' || s[i + 1] != '.' || s[i - 1] != ' ')
			break;
		n = i - 1;
	}
	for (;;) {
		const char *c = n && s[n - 1] == ']' ? strstr(s, " [clone ") : NULL;
		if (!c || (size_t)(c - s) >= n)
			break;
		const char *next;
		while ((next = strstr(c + 1, " [clone ")) && (size_t)(next - s) < n)
			c = next;
		n = (size_t)(c - s);
	}
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof quals / sizeof quals[0]; i++)
			if (ends_with(s, n, quals[i]) && n > strlen(quals[i])) {
				n -= strlen(quals[i]);
				again = 1;
			}
	}
	if (!n || s[n - 1] != ')')
		return n; /* a variable: no parameters */
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		depth += s[i] == ')' ? 1 : s[i] == '(' ? -1 : 0;
		if (depth == 0)
			return i;
	}
	return 0;
}

/* Whether the angle brackets of s[0..n) balance (template argument lists). */
static int angles_balance(const char *s, size_t n)
{
	int depth = 0;
	for (size_t i = 0; i < n && depth >= 0; i++)
		depth += s[i] == '<' ? 1 : s[i] == '>' ? -1 : 0;
	return depth == 0;
}

/* The length of the operator token at s (after "operator"; s[0..n) is the
 * rest of the name), 0 if none: its '<' and '>' are not template
 * brackets.  LLVM prints a template operator's arguments right after it,
 * "operator<<int, int>" for operator< <int, int>: of the tokens that
 * match, the longest after which the brackets still balance. */
static size_t operator_token(const char *s, size_t n)
{
	static const char *const tok[] = {
		"<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "==", "!=",
		"&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
		"<", ">", "!", "+", "-", "*", "/", "%", "^", "&", "|", "~", "=", ",",
	};
	for (size_t i = 0; i < sizeof tok / sizeof tok[0]; i++) {
		size_t k = strlen(tok[i]);
		if (k <= n && !strncmp(s, tok[i], k) && angles_balance(s + k, n - k))
			return k;
	}
	return 0;
}

static int word_start(const char *s, size_t i)
{
	return i == 0 || s[i - 1] == ':' || s[i - 1] == ' ' || s[i - 1] == '~';
}

/* s[0..n) without template argument lists, into out: its length, or
 * SIZE_MAX when the brackets do not balance. */
static size_t drop_templates(const char *s, size_t n, char *out)
{
	size_t o = 0;
	int depth = 0;
	for (size_t i = 0; i < n;) {
		if (depth == 0 && n - i >= 8 && !strncmp(s + i, "operator", 8) && word_start(s, i)) {
			size_t t = 8 + operator_token(s + i + 8, n - i - 8);
			memcpy(out + o, s + i, t);
			o += t;
			i += t;
			continue;
		}
		if (s[i] == '<')
			depth++;
		else if (s[i] == '>' && depth == 0)
			return SIZE_MAX; /* a '>' that closes nothing: not understood */
		else if (s[i] == '>')
			depth--;
		else if (depth == 0)
			out[o++] = s[i];
		i++;
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return depth ? SIZE_MAX : o;
}

/* Where the name starts once the return type is skipped: after the last
 * space outside brackets before the final component's "operator" (or the
 * end): "int ns::add" -> "ns::add", "bool operator<" -> "operator<". */
static size_t name_start(const char *s)
{
	size_t n = strlen(s), last_colon = 0, limit = n, sp = 0;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		depth += strchr("({[", s[i]) ? 1 : strchr(")}]", s[i]) ? -1 : 0;
		if (depth == 0 && s[i] == ':' && s[i + 1] == ':')
			last_colon = i + 2;
	}
	const char *op = strstr(s + last_colon, "operator");
	if (op && word_start(s, (size_t)(op - s)))
		limit = (size_t)(op - s);
	depth = 0;
	for (size_t i = 0; i < limit; i++) {
		depth += strchr("({[", s[i]) ? 1 : strchr(")}]", s[i]) ? -1 : 0;
		if (depth == 0 && s[i] == ' ')
			sp = i + 1;
	}
	return sp;
}

int prof_pprof_short_name(const char *full, char *out)
{
	/* A closure or an unnamed type: LLVM prints 'lambda'(int), 'lambda0'(T)
	 * with a generic lambda's parameter substituted, and 'unnamed'; pprof's
	 * demangler {lambda(int)#1}, {lambda(auto:1)#2}, {unnamed type#1},
	 * which the LLVM form cannot always give back: left to pprof. */
	if (special_name(full) || strstr(full, "'lambda") || strstr(full, "'unnamed") ||
	    strstr(full, "'block-literal"))
		return -1;
	size_t n = strip_tail(full, strlen(full));
	if (n == 0)
		return -1;
	size_t len = drop_templates(full, n, out);
	if (len == SIZE_MAX || len == 0)
		return -1;
	size_t at = name_start(out);
	memmove(out, out + at, len - at + 1);
	return out[0] ? 0 : -1;
}
