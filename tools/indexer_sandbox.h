/* SPDX-License-Identifier: MIT */
/*
 * indexer_sandbox.h - symdb-indexer's seccomp filter (SPEC §12.5): after
 * its limits and before it reads a byte of its input, the indexer allows
 * itself only the system calls that parsing and writing its staged output
 * need.  A forbidden call raises SIGSYS; the handler sends an end record
 * "indexer violated its sandbox: NAME" on the report descriptor and the
 * process dies by that signal.
 */
#ifndef SYMDB_INDEXER_SANDBOX_H
#define SYMDB_INDEXER_SANDBOX_H

#include <stddef.h>

/* Enter the sandbox: PR_SET_NO_NEW_PRIVS, then the filter.  Returns 0 with
 * the filter loaded; 1 when the kernel has no seccomp filters or no
 * NO_NEW_PRIVS (one warning on stderr: the limits still hold); or a
 * negative errno when the filter could not be built, with its reason in
 * why - the caller must then not parse anything. */
int idx_sandbox_enter(int report_fd, char *why, size_t why_sz);

#endif /* SYMDB_INDEXER_SANDBOX_H */
