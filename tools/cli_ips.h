/* SPDX-License-Identifier: MIT */
/*
 * cli_ips.h - `symdb symbolicate` for Apple's JSON crash reports (.ips):
 * an optional one-line JSON header, then one JSON object with usedImages[]
 * (uuid, base, name) and threads[].frames[] (imageIndex, imageOffset).
 */
#ifndef SYMDB_CLI_IPS_H
#define SYMDB_CLI_IPS_H

#include <stddef.h>

#include "cli_crash.h"
#include "cli_util.h"
#include "symdb.h"

/* Parses buf, resolves every frame and writes the report to o with
 * "symbol", "symbolLocation", "sourceFile" and "sourceLine" added to each
 * symbolicated frame; every other byte is copied.  Returns 0, or -1 after
 * reporting "WHAT: line N: reason". */
CLI_HIDDEN int cli_ips_run(struct crash *c, symdb *db, const char *buf, size_t n,
                           struct cli_out *o, const char *what);

#endif /* SYMDB_CLI_IPS_H */
