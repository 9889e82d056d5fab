/* SPDX-License-Identifier: MIT */
/*
 * indexer_hooks.h - the test build of symdb-indexer only
 * (SYMDB_INDEXER_TEST_HOOKS): failures on purpose, chosen with a leading
 * `--test-hook NAME`, that fire after the first temp file is written and
 * before it is reported (symdb_indexer_job.test_hook).  The installed
 * symdb-indexer is built without this file.
 */
#ifndef SYMDB_INDEXER_HOOKS_H
#define SYMDB_INDEXER_HOOKS_H

#include <stddef.h>

/* If argv[1] is --test-hook NAME, set *hook to that failure and return 2
 * (the arguments it took); else 0.  -1 for an unknown NAME (a message on
 * stderr). */
int idx_test_hook_args(int argc, char **argv, int (**hook)(char *, size_t));

#endif /* SYMDB_INDEXER_HOOKS_H */
