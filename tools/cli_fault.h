/* SPDX-License-Identifier: MIT */
/*
 * cli_fault.h - the CLI's SIGBUS handler (symdb_fault_recover, symdb.h):
 * every command that reads index mappings through a database handle (query,
 * symbolicate, verify, export, info, compact) guards it, so that an index
 * file truncated under it damages that image only.  (gc, rm, list and
 * reindex read no mapping of a db's images; reindex maps each file on its
 * own, outside any handle, and is not covered.)
 */
#ifndef SYMDB_CLI_FAULT_H
#define SYMDB_CLI_FAULT_H

#include "cli_util.h"
#include "symdb.h"

/* Install the handler (once per process) and point it at db. */
CLI_HIDDEN void cli_fault_guard(symdb *db);
/* Point it at nothing: call before symdb_close() of the guarded handle. */
CLI_HIDDEN void cli_fault_unguard(void);
/* How many faults the handler recovered so far, in any thread: a reader
 * that formatted strings from index mappings compares it before and after
 * (a fault meanwhile may have turned some of them into zeros). */
CLI_HIDDEN unsigned long cli_fault_count(void);

#endif /* SYMDB_CLI_FAULT_H */
