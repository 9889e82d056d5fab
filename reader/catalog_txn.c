/* SPDX-License-Identifier: MIT */
/*
 * catalog_txn.c - the LMDB catalog of a database directory (SPEC §12): the
 * environment at DB/catalog/, named databases `meta`, `images` and `names`.
 *
 * The reader uses it read-only (MDB_RDONLY: no write access needed, falling
 * back to MDB_NOLOCK when even the lock file cannot be opened); the builder
 * uses it read-write to publish.  LMDB error codes are mapped to symdb codes
 * here and never leave the catalog's files.
 *
 * Map size.  The map starts small and doubles whenever a write transaction
 * hits MDB_MAP_FULL.  mdb_env_set_mapsize() may only be called while this
 * process has no transaction open on the environment, so every transaction
 * holds the environment's `resize` for reading and a resize takes it for
 * writing: one lock for every handle sharing the environment (catalog_env.c).  Another process may grow the
 * map too; LMDB then reports MDB_MAP_RESIZED at txn begin, and we adopt the
 * new size (mdb_env_set_mapsize(env, 0)) and retry.
 *
 * The catalog's files: catalog_txn.c (this), catalog_open.c, catalog_env.c,
 * catalog_lock.c, catalog_entries.c, catalog_check.c, catalog_used.c.
 *
 * The environment is opened with MDB_NOTLS, so read transactions are not tied
 * to a thread and any number of threads may share one handle.
 *
 * Locking rule (symdb.h "Threads"): `resize` is taken exclusively, by
 * cat_txn_begin after MDB_MAP_RESIZED or by cat_grow after MDB_MAP_FULL, only
 * by a thread holding no transaction and no other library lock, and a
 * transaction never runs caller code.  Hence nobody waits for `resize`
 * while holding something its holders may wait for: the reader's cache
 * mutex is never held across a catalog call (reader_open.c), and listing
 * calls back outside its read transactions (catalog_entries.c).  Breaking
 * either deadlocked: an opener holding the cache mutex waited here for a
 * lister's read lock while the lister's callback waited for the mutex, and
 * a listing callback writing to a full map waited here for its own thread.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t, mkdir, flock */
#include "catalog_internal.h"
#include "format_header.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* ---- error mapping ------------------------------------------------------ */

/* LMDB mixes errno values (positive) with its own codes (negative, from
 * MDB_KEYEXIST = -30799 up); map both to symdb's convention. */
int cat_err(int rc)
{
	if (rc == 0)
		return 0;
	if (rc > 0)
		return -rc;
	if (rc <= SYMDB_E_FORMAT && rc > SYMDB_E_LAST_)
		return rc; /* already ours (cat_lock_same) */
	switch (rc) {
	case MDB_NOTFOUND:
		return SYMDB_E_NOT_INDEXED;
	case MDB_KEYEXIST:
		return SYMDB_E_EXISTS;
	case MDB_BAD_VALSIZE:
		return -ENAMETOOLONG;
	default:
		return SYMDB_E_CATALOG;
	}
}

/* One line naming the path; rc is a raw LMDB code or a positive errno
 * (worded by symdb_strerror: mdb_strerror would call the non-thread-safe
 * strerror(3)). */
void cat_msg(char *errbuf, size_t errbuf_sz, const char *path, const char *what,
                    int rc)
{
	fmt_err(errbuf, errbuf_sz, rc, "%s: %s: %s", path, what,
	        rc > 0 ? symdb_strerror(-rc)
	        : rc <= SYMDB_E_FORMAT && rc > SYMDB_E_LAST_ ? symdb_strerror(rc)
	                                                     : mdb_strerror(rc));
}

/* ---- transactions with map growth --------------------------------------- */

/* Begin a transaction holding the handle's `swap` and its environment's
 * `resize` shared.  Adopts a map grown by another process
 * (MDB_MAP_RESIZED).  Returns an LMDB code. */
int cat_txn_begin(rd_catalog *c, unsigned txn_flags, MDB_txn **txn)
{
	struct cat_env *e;
	int rc, tries;

	pthread_rwlock_rdlock(&c->swap);
	e = c->e; /* fixed while `swap` is held */
	for (tries = 0; tries < CAT_MAX_RETRIES; tries++) {
		pthread_rwlock_rdlock(&e->resize);
		rc = mdb_txn_begin(e->env, NULL, txn_flags, txn);
		if (rc != MDB_MAP_RESIZED)
			break;
		pthread_rwlock_unlock(&e->resize);
		pthread_rwlock_wrlock(&e->resize);
		rc = mdb_env_set_mapsize(e->env, 0);
		pthread_rwlock_unlock(&e->resize);
		if (rc) {
			pthread_rwlock_unlock(&c->swap);
			return rc;
		}
	}
	if (rc) {
		pthread_rwlock_unlock(&e->resize);
		pthread_rwlock_unlock(&c->swap);
	}
	return rc;
}

/* The locks cat_txn_begin took, in the other order. */
static void cat_txn_unlock(rd_catalog *c)
{
	pthread_rwlock_unlock(&c->e->resize);
	pthread_rwlock_unlock(&c->swap);
}

void cat_txn_abort(rd_catalog *c, MDB_txn *txn)
{
	mdb_txn_abort(txn);
	cat_txn_unlock(c);
}

int cat_scan_begin(rd_catalog *c, MDB_dbi dbi, MDB_txn **txn, MDB_cursor **cur)
{
	int rc = cat_txn_begin(c, MDB_RDONLY, txn);

	if (rc)
		return cat_err(rc);
	rc = mdb_cursor_open(*txn, dbi, cur);
	if (rc) {
		cat_txn_abort(c, *txn);
		return cat_err(rc);
	}
	return 0;
}

void cat_scan_end(rd_catalog *c, MDB_txn *txn, MDB_cursor *cur)
{
	mdb_cursor_close(cur);
	cat_txn_abort(c, txn);
}

int cat_txn_commit(rd_catalog *c, MDB_txn *txn)
{
	int rc = mdb_txn_commit(txn);

	cat_txn_unlock(c);
	return rc;
}

/* A replaced catalog opened since (rd_catalog_refresh) counts in the high
 * bits: its transaction ids start again near 0. */
uint64_t rd_catalog_generation(rd_catalog *c)
{
	MDB_envinfo info;
	uint64_t reopened;
	int rc;

	rd_catalog_refresh(c, 0);
	pthread_rwlock_rdlock(&c->swap);
	pthread_rwlock_rdlock(&c->e->resize); /* (not while cat_grow remaps) */
	rc = mdb_env_info(c->e->env, &info);
	reopened = atomic_load(&c->reopened);
	cat_txn_unlock(c);
	return rc == 0 ? (uint64_t)info.me_last_txnid + (reopened << 48) : 0;
}

/* Double the map.  Called with no transaction of ours open. */
static int cat_grow(rd_catalog *c)
{
	MDB_envinfo info;
	int rc;

	pthread_rwlock_rdlock(&c->swap);
	pthread_rwlock_wrlock(&c->e->resize); /* every handle's transactions out */
	rc = mdb_env_info(c->e->env, &info);
	if (rc == 0)
		rc = mdb_env_set_mapsize(c->e->env, info.me_mapsize * 2);
	cat_txn_unlock(c);
	return rc;
}

/* Run fn in a write transaction, growing the map and retrying on
 * MDB_MAP_FULL (from a put or from the commit).  fn returns an LMDB code, or
 * a symdb code to abort with; so does this function (raw, unmapped). */

static int cat_is_symdb_code(int rc)
{
	return rc <= SYMDB_E_FORMAT && rc > SYMDB_E_LAST_;
}

int cat_write_raw(rd_catalog *c, cat_write_fn fn, void *arg)
{
	MDB_txn *txn;
	int rc, tries;

	for (tries = 0; tries < CAT_MAX_RETRIES; tries++) {
		rc = cat_txn_begin(c, 0, &txn);
		if (rc)
			return rc;
		rc = cat_lock_same(c); /* catalog_lock.c: lock.mdb not replaced */
		if (rc == 0)
			rc = fn(c, txn, arg);
		if (rc == 0)
			rc = cat_lock_same(c);
		if (rc) {
			cat_txn_abort(c, txn);
		} else {
			rc = cat_commit_errno(c, mdb_txn_commit(txn)); /* EIO on a full disk */
			/* Replaced during the commit: it may be lost.  Asked before
			 * `swap` is let go of: a refresh may swap c's environment
			 * out and free it as soon as it is. */
			if (rc == 0)
				rc = cat_lock_same(c);
			cat_txn_unlock(c);
		}
		if (rc != MDB_MAP_FULL)
			return rc;
		rc = cat_grow(c);
		if (rc)
			return rc;
	}
	return MDB_MAP_FULL;
}

int cat_write(rd_catalog *c, cat_write_fn fn, void *arg)
{
	uint64_t seen = atomic_load(&c->reopened);
	int rc;

	if (!(c->flags & RD_CAT_WRITE))
		return SYMDB_E_READONLY;
	rc = cat_write_raw(c, fn, arg);
	/* A catalog replaced under the handle (reindex made a new one): the
	 * write goes to the new one, once (catalog_refresh.c). */
	if (rc == SYMDB_E_LOCK_REPLACED &&
	    (rd_catalog_refresh(c, 1) || atomic_load(&c->reopened) != seen))
		rc = cat_write_raw(c, fn, arg);
	return cat_is_symdb_code(rc) ? rc : cat_err(rc);
}
