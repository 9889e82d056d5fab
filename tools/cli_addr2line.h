/* SPDX-License-Identifier: MIT */
/*
 * cli_addr2line.h - `symdb addr2line`, and symdb run under the name
 * addr2line: GNU addr2line's command line over symdb query's machinery.
 */
#ifndef SYMDB_CLI_ADDR2LINE_H
#define SYMDB_CLI_ADDR2LINE_H

#include "cli_util.h"

/* argv[0] is the name messages go under ("addr2line"); the exit status is
 * GNU addr2line's (0, or 1 for any failure) except that symdb's database
 * errors keep their own codes (symdb --help). */
CLI_HIDDEN int cli_cmd_addr2line(const struct cli_global *g, int argc, char **argv);

/* Whether a program name (argv[0], any directory) asks for this front end:
 * "addr2line" or a cross prefix's "TRIPLE-addr2line", not llvm-addr2line. */
CLI_HIDDEN int cli_called_as_addr2line(const char *argv0);

#endif /* SYMDB_CLI_ADDR2LINE_H */
