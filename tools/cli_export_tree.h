/* SPDX-License-Identifier: MIT */
/*
 * cli_export_tree.h - writing index files into an upstream store tree
 * (SPEC §12.9) for `symdb export --tree DIR` (cmd_export.c).
 */
#ifndef SYMDB_CLI_EXPORT_TREE_H
#define SYMDB_CLI_EXPORT_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "cli_util.h"
#include "symdb.h"

/* Open DIR/symdb/v1, creating what is missing (0755): a directory fd, or
 * -errno with "PATH: reason" in err. */
CLI_HIDDEN int cli_tree_open(const char *tree, char *err, size_t errsz);

/* What cli_tree_put() did with one image. */
struct cli_tree_put {
	char rel[2 * SYMDB_UUID_MAX + 32]; /* "symdb/v1/XX/HEX.symdb" */
	uint64_t bytes;                    /* the index file's size */
	int write_error;                   /* the failure was the tree's, not the image's */
	char why[600];                     /* the reason of a failure */
};

/* Verify image id of db completely and write it as v1fd/XX/HEX.symdb
 * atomically.  1 when written, 0 when the same file was already there, or
 * a negative code (an image error: SYMDB_E_*, why from the library; a
 * write error: -errno, write_error set). */
CLI_HIDDEN int cli_tree_put(symdb *db, int v1fd, const symdb_uuid *id, struct cli_tree_put *out);

#endif /* SYMDB_CLI_EXPORT_TREE_H */
