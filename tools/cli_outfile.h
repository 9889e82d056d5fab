/* SPDX-License-Identifier: MIT */
/*
 * The -o / --svg output files of `symdb flame`, `symdb perf` and
 * `symdb pprof`: one rule for all of them.
 *
 * A regular file (or a name that does not exist yet) is written to a
 * temporary file beside it, fsync'd, and renamed over it only when the
 * command succeeded: a failure leaves the old file, or none, never half a
 * profile.  A symbolic link to a regular file keeps the link: the temporary
 * file goes beside the link's target and replaces the target.
 *
 * Anything else -- /dev/null, /dev/stdout, a FIFO, a process substitution,
 * a terminal -- is written in place, as a shell redirection would write it.
 * Renaming over such a name would replace the device node or pipe with a
 * regular file (as root, /dev/null itself), and it cannot be made atomic
 * anyway.
 *
 * One struct per output; not thread-safe (one thread owns each).
 */
#ifndef SYMDB_CLI_OUTFILE_H
#define SYMDB_CLI_OUTFILE_H

#include <stdio.h>

#include "cli_util.h"

struct cli_outfile {
	FILE *f;          /* where to write; stdout for NULL or "-" */
	const char *name; /* the name given, for messages ("<stdout>" for stdout) */
	char *dest;       /* the file the temporary replaces (owned), or NULL */
	char *tmp;        /* the temporary file (owned), or NULL when in place */
};

/* Open the output named path (NULL or "-": stdout).  0, or -1 after a
 * one-line error naming path.  On failure *o needs no cli_outfile_abort. */
CLI_HIDDEN int cli_outfile_open(struct cli_outfile *o, const char *path);
/* Flush and close o, and publish it (fsync + rename) when it went to a
 * temporary file.  0, or -1 after a one-line error naming the output (the
 * temporary file removed).  o is closed either way. */
CLI_HIDDEN int cli_outfile_commit(struct cli_outfile *o);
/* Close o without publishing: the temporary file is removed and the old
 * output left as it was.  Safe on a zeroed or already closed struct. */
CLI_HIDDEN void cli_outfile_abort(struct cli_outfile *o);

#endif
