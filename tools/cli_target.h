/* SPDX-License-Identifier: MIT */
/*
 * cli_target.h - how a command-line argument names an indexed image: a UUID
 * in hex, a unique prefix of one (at least SYMDB_UUID_PREFIX_MIN digits, as
 * git takes a short hash), or the path of a binary, identified by its
 * build-id (or LC_UUID, or fallback hash) as `symdb build` identifies it.
 * Used by info, rm, export and query --uuid.
 */
#ifndef SYMDB_CLI_TARGET_H
#define SYMDB_CLI_TARGET_H

#include <stddef.h>

#include "cli_util.h"
#include "symdb.h"

/* Whether arg is spelled as a UUID: hex digits and dashes only.  Anything
 * else names a file; so does a UUID-like name of an existing file. */
CLI_HIDDEN int cli_is_uuid_arg(const char *arg);

/* Resolve a UUID or unique prefix typed by a user against db's catalog.
 * Returns 0 with *out set, or minus a CLI exit code after one line on
 * stderr: "UUID prefix too short: give at least 8 hex digits" (usage),
 * "not a UUID (8 to 64 hex digits)" (usage), "not in the database",
 * "ambiguous UUID prefix: N images match: UUID (NAME), ..." (failed). */
CLI_HIDDEN int cli_uuid_resolve(symdb *db, const char *arg, symdb_uuid *out);

/* The images arg names: a UUID or prefix (cli_uuid_resolve: one), or a
 * binary path (every image of the file: one for ELF, one per slice of a
 * universal Mach-O file).  A path's images need not be indexed.  Returns
 * their number (>= 1, at most max) in out, or minus a CLI exit code after
 * one line on stderr ("no such file, and not a UUID": usage). */
CLI_HIDDEN int cli_target_uuids(symdb *db, const char *arg, symdb_uuid *out, size_t max);

#endif /* SYMDB_CLI_TARGET_H */
