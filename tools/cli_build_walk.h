/* SPDX-License-Identifier: MIT */
/*
 * cli_build_walk.h - the inputs of `symdb build` before any is indexed:
 * directories walked with -r (object files kept, everything else noted and
 * skipped), a directory without -r and files of /proc (/proc/kallsyms)
 * refused with a reason.  Nothing here opens a file that is not a regular
 * file, and nothing opens one in blocking mode.
 */
#ifndef SYMDB_CLI_BUILD_WALK_H
#define SYMDB_CLI_BUILD_WALK_H

#include <stddef.h>

#include "cli_util.h"

struct cli_inputs {
	char **files;    /* the inputs to index, in order (malloc'd strings) */
	size_t n, cap;
	size_t skipped;  /* files under a walked directory that are not object
	                    files (or are special files, dangling links...) */
	size_t refused;  /* arguments refused before indexing (an error line each) */
	int walked;      /* some directory was walked: print the summary line */
	int quiet;       /* in: no "ignored" lines (build -q) */
};

/* Expand the command line's FILE arguments into in.  Each skipped file
 * gets one line on stdout, "ignored PATH (why)" (unless in->quiet); each
 * refused argument one error line on stderr.  Returns 0, or -ENOMEM. */
CLI_HIDDEN int cli_inputs_expand(struct cli_inputs *in, char **args, size_t nargs,
                                 int recursive);
CLI_HIDDEN void cli_inputs_free(struct cli_inputs *in);

#endif /* SYMDB_CLI_BUILD_WALK_H */
