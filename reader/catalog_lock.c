/* SPDX-License-Identifier: MIT */
/*
 * catalog_lock.c - the check that DB/catalog/lock.mdb is still the one LMDB
 * opened.  (The lock of one DB/images/XX directory is rd_safedir_lock,
 * db_dir.c.)
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t, mkdir, flock */
#include "catalog_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* ---- DB/catalog/lock.mdb (SPEC §12.1) ------------------------------------ */

/* LMDB's writers exclude each other through a mutex inside lock.mdb.  A
 * process that opens the catalog after lock.mdb was deleted creates a new
 * one, and from then on it and the processes still holding the old one
 * write at the same time, each committing over the other's entries.  That
 * cannot be prevented, but a writer can notice that the path no longer
 * names the file it opened, before it writes and before it commits, and
 * refuse; and after its commit, when a deletion raced it and a writer on
 * the new lock file may have overwritten it, report the commit as failed
 * rather than let an entry vanish silently.  Called inside a transaction
 * of c (its `swap` held: c->e is not swapped out and freed meanwhile).
 * Readers are not checked (their slots in the old file are
 * invisible to the new writers, which may then reuse pages under them: see
 * SPEC §12.1). */
int cat_lock_same(rd_catalog *c)
{
	char path[4096];
	struct stat st;

	const struct cat_env *e = c->e;

	if (!e->lock_known)
		return 0;
	if ((size_t)snprintf(path, sizeof path, "%s/catalog/" CAT_LOCK_FILE, c->dir) >= sizeof path)
		return ENAMETOOLONG;
	if (lstat(path, &st) < 0 || st.st_dev != e->lock_dev || st.st_ino != e->lock_ino)
		return SYMDB_E_LOCK_REPLACED;
	return 0;
}
