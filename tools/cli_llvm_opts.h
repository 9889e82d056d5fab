/* SPDX-License-Identifier: MIT */
/*
 * cli_llvm_opts.h - a command line parsed the way LLVM 14's OptTable parses
 * llvm-symbolizer's (llvm/lib/Option/OptTable.cpp with grouped short options
 * on), so that every spelling llvm-symbolizer-14 accepts means the same here
 * and every one it rejects is rejected with the same words:
 *
 *   - an argument that is "-" or does not start with '-' is an input;
 *     an empty argument is dropped;
 *   - otherwise the options whose prefix+name begin the argument are tried,
 *     longest name first: a Flag must match the whole argument, a Joined
 *     option takes the rest as its value, a Separate one (exact match) takes
 *     the next argument, a JoinedOrSeparate one does either;
 *   - failing that, a one-letter flag ("-a" in "-aCp") is taken and the
 *     argument continues as "-Cp" (but "-a=x" is unknown whole: a flag
 *     given a value); an unknown letter is an unknown option
 *     "-X" and the argument continues too; an unknown "--name" is unknown
 *     as a whole;
 *   - a Separate option with no argument after it ends parsing ("missing
 *     argument").  There is no "--" terminator in LLVM 14.
 *
 * The caller's table says what each spelling does (an id, shared by
 * aliases); cli_opt_parse() returns the arguments in order, and the caller
 * applies them (last one wins, as getLastArg does).  Response files and the
 * environment are expanded before (cli_llvm_rsp.c).
 */
#ifndef SYMDB_CLI_LLVM_OPTS_H
#define SYMDB_CLI_LLVM_OPTS_H

#include <stddef.h>

#include "cli_util.h"

enum cli_optk {
	CLI_OPTK_FLAG,
	CLI_OPTK_JOINED,   /* name ends in '=': "--obj=" */
	CLI_OPTK_SEPARATE, /* "--obj FILE" */
	CLI_OPTK_JOINED_OR_SEPARATE /* "-eFILE", "-e FILE" */
};

/* ids every table shares; a table's own ids are >= CLI_OPT_FIRST */
enum { CLI_OPT_INPUT = 0, CLI_OPT_UNKNOWN = 1, CLI_OPT_FIRST = 2 };

struct cli_optdef {
	const char *prefix;  /* "--" or "-": each llvm-symbolizer-14 option has one */
	const char *name;    /* after the prefix */
	unsigned char kind;  /* enum cli_optk */
	unsigned char extra; /* symdb's own: llvm-symbolizer-14 has no such option,
	                        so it is never suggested in llvm-symbolizer's words */
	int id;              /* what it does: aliases share the id */
	const char *canon;   /* the spelling LLVM names the unaliased option by
	                        in messages ("--obj="); NULL: prefix + name */
};

struct cli_optval {
	int id;               /* a table id, CLI_OPT_INPUT or CLI_OPT_UNKNOWN */
	const char *value;    /* the value, the input, or the unknown spelling */
	const char *spelling; /* the canonical spelling (see cli_optdef.canon) */
};

struct cli_optlist {
	struct cli_optval *v;
	size_t n, cap;
	const char *missing; /* the option that lacks its argument, or NULL */
	char **owned;        /* strings made while parsing ("-Cp" from "-aCp") */
	size_t nowned, owned_cap;
};

/*
 * Parse argv[0..argc) (no program name) against defs[0..ndefs).  Values and
 * inputs point into argv or into strings out owns.  Returns 0, or -1 when
 * out of memory (a message is printed).
 */
CLI_HIDDEN int cli_opt_parse(const struct cli_optdef *defs, size_t ndefs, int argc, char **argv,
                             struct cli_optlist *out);
CLI_HIDDEN void cli_optlist_free(struct cli_optlist *l);

/*
 * OptTable::findNearest: the spelling within the smallest edit distance of
 * arg among defs (in LLVM's table order, first wins a tie), written to
 * buf.  Names shorter than 4 characters are no candidates, as there, and
 * defs marked extra are candidates only when with_extra.  Returns the
 * distance (LLVM suggests the spelling when it is at most 1).
 */
CLI_HIDDEN unsigned cli_opt_nearest(const struct cli_optdef *defs, size_t ndefs, const char *arg,
                                    int with_extra, char *buf, size_t bufsz);

#endif /* SYMDB_CLI_LLVM_OPTS_H */
