/* SPDX-License-Identifier: MIT */
/*
 * catalog_env.c - one LMDB environment per catalog per process (SPEC §12.1,
 * "One environment per process").
 *
 * Why: LMDB's locks on DB/catalog/lock.mdb are POSIX record locks: a shared
 * lock on its first byte says "this process uses the environment", one on
 * byte PID says "this process's reader slots are live".  POSIX drops every
 * such lock a process holds on a file when the process closes any
 * descriptor of it.  A process that held two environments of one catalog
 * (a symdb handle and a builder; a server and each fetch it publishes)
 * lost both kinds of lock whenever it closed one: another process could then
 * clear its reader slots as stale (mdb_reader_check), so that a writer
 * reused pages it was reading, or take itself for the only user and reset
 * the lock file under it.
 *
 * So the environments of this process are kept in one list, and an open of
 * a catalog whose data.mdb and lock.mdb are the files an environment in the
 * list has open takes that environment, counted; the last close closes it.
 * This list is the library's only process-wide state: the rule it follows
 * is LMDB's, and LMDB's is per process.  Environments opened without a
 * lock file (MDB_NOLOCK, the read-only fallback) hold no locks and are not
 * listed: each such handle has its own.
 *
 * A child of fork(2) shares none of its parent's environments (below).
 *
 * An environment is opened read-write whenever the catalog is writable,
 * even for a reader, so that a builder opened later in the process can
 * share it; a read-only one cannot take a writer, which is then refused.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "format_header.h"

static pthread_mutex_t cat_envs_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct cat_env *cat_envs; /* under cat_envs_mutex */
static pthread_once_t cat_envs_once = PTHREAD_ONCE_INIT;

/*
 * fork(2): LMDB forbids a child to use its parent's environments, and the
 * child holds none of the parent's POSIX locks, so a child's open must not
 * find them.  The list is emptied in the child (the environments it
 * inherited stay with the handles it inherited, whose close frees them as
 * before), and the list's lock is held across the fork so that the child
 * does not inherit it locked by a thread that no longer exists there.
 */
static void cat_envs_prepare(void)
{
	pthread_mutex_lock(&cat_envs_mutex);
}

static void cat_envs_parent(void)
{
	pthread_mutex_unlock(&cat_envs_mutex);
}

static void cat_envs_child(void)
{
	cat_envs = NULL;
	pthread_mutex_unlock(&cat_envs_mutex);
}

static void cat_envs_atfork(void)
{
	pthread_atfork(cat_envs_prepare, cat_envs_parent, cat_envs_child);
}

void cat_envs_lock(void)
{
	pthread_once(&cat_envs_once, cat_envs_atfork);
	pthread_mutex_lock(&cat_envs_mutex);
}

void cat_envs_unlock(void)
{
	pthread_mutex_unlock(&cat_envs_mutex);
}

/* The listed environment of envdir's lock.mdb and data.mdb, or NULL. */
static struct cat_env *cat_env_find(const char *envdir, const struct stat *data)
{
	char path[4096];
	struct stat lk;

	if ((size_t)snprintf(path, sizeof path, "%s/" CAT_LOCK_FILE, envdir) >= sizeof path ||
	    lstat(path, &lk) < 0)
		return NULL; /* no lock file: nobody here has it open */
	pid_t self = getpid(); /* (a child made without fork handlers: clone) */
	for (struct cat_env *e = cat_envs; e; e = e->next)
		if (e->pid == self && e->data_dev == data->st_dev && e->data_ino == data->st_ino &&
		    e->lock_dev == lk.st_dev && e->lock_ino == lk.st_ino)
			return e;
	return NULL;
}

static void cat_env_free(struct cat_env *e)
{
	if (e->env)
		mdb_env_close(e->env);
	pthread_rwlock_destroy(&e->resize);
	pthread_mutex_destroy(&e->dbi);
	free(e);
}

int cat_env_attach(rd_catalog *c, const char *envdir, const struct stat *data, char *errbuf,
                   size_t errbuf_sz)
{
	struct cat_env *e = cat_env_find(envdir, data);
	int rc;

	if (e) {
		if ((c->flags & RD_CAT_WRITE) && !e->writable)
			return fmt_err(errbuf, errbuf_sz, -EROFS,
			               "%s: opened read-only by this process; cannot write to it",
			               envdir);
		e->refs++;
		c->e = e;
		/* The tree as it is now, as a first open would check it. */
		rc = cat_tree_check(c, envdir, errbuf, errbuf_sz);
		if (rc) {
			e->refs--;
			c->e = NULL;
		}
		return rc;
	}
	e = calloc(1, sizeof *e);
	if (!e)
		return -ENOMEM;
	pthread_rwlock_init(&e->resize, NULL);
	pthread_mutex_init(&e->dbi, NULL);
	e->pid = getpid();
	e->refs = 1;
	c->e = e;
	rc = cat_open_env(c, envdir, errbuf, errbuf_sz);
	if (rc == 0)
		rc = cat_files_opened(c, envdir, data, errbuf, errbuf_sz);
	if (rc) {
		c->e = NULL;
		cat_env_free(e);
		return rc;
	}
	if (e->lock_known) {
		e->next = cat_envs;
		cat_envs = e;
	}
	return 0;
}

void cat_env_detach(rd_catalog *c)
{
	struct cat_env *e = c->e, **p;

	if (!e)
		return;
	c->e = NULL;
	cat_envs_lock();
	if (--e->refs > 0) {
		cat_envs_unlock();
		return;
	}
	for (p = &cat_envs; *p; p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			break;
		}
	/* Under the lock: an open of the same files waits, and opens its own
	 * environment after this one's descriptors are closed. */
	cat_env_free(e);
	cat_envs_unlock();
}
