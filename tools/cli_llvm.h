/* SPDX-License-Identifier: MIT */
/*
 * cli_llvm.h - the llvm-symbolizer personality: symdb run under the name
 * llvm-symbolizer (a link, e.g. libexec/symdb/llvm-symbolizer) is `symdb
 * query` on the default database, with llvm-symbolizer-14's command line:
 * $LLVM_SYMBOLIZER_OPTS and @FILE response files (cli_llvm_rsp.c), its
 * option set and error words (cli_query_opts.c on cli_llvm_opts.c), and
 * its --help and --version (cli_llvm_help.c).
 */
#ifndef SYMDB_CLI_LLVM_H
#define SYMDB_CLI_LLVM_H

#include <stdio.h>

#include "cli_util.h"

/* The environment variable llvm-symbolizer-14 reads options from. */
#define CLI_LLVM_ENV "LLVM_SYMBOLIZER_OPTS"

/*
 * The arguments llvm-symbolizer-14 parses: the words of env_value (may be
 * NULL), then argv[0..argc) (no program name), with every @FILE expanded.
 * *out is a new array of argc' new strings (cli_llvm_args_free).  Returns 0,
 * or -1 when out of memory (a message is printed).
 */
CLI_HIDDEN int cli_llvm_expand_args(const char *env_value, int argc, char **argv, char ***out,
                                    int *outc);
CLI_HIDDEN void cli_llvm_args_free(char **args, int n);

/* llvm-symbolizer-14's --help, with symdb's own options after it. */
CLI_HIDDEN void cli_llvm_help(FILE *f);
/* --version: llvm-symbolizer-14's shape, naming symdb (see the comment). */
CLI_HIDDEN void cli_llvm_version(FILE *f);

#endif /* SYMDB_CLI_LLVM_H */
