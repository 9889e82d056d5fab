/* SPDX-License-Identifier: MIT */
/*
 * catalog_internal.h - what the catalog's own files share: the handle, the
 * LMDB error mapping and the transactions with map growth.  The catalog is
 * compiled into libsymdb only (LMDB forbids opening one environment twice
 * in a process); the rest of libsymdb uses rd_catalog.h.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_CATALOG_INTERNAL_H
#define SYMDB_CATALOG_INTERNAL_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "format_catalog.h"
#include "rd_catalog.h"
#include "symdb.h"
#include "symdb_endian.h"
#include "symdb_format.h"

#define CAT_MAP_INITIAL  (1u << 20) /* 1 MiB: thousands of entries, grows on demand */
#define CAT_MAX_RETRIES  64         /* map doublings / resize adoptions per call */

/* statfs(2) f_type magics of network filesystems (linux/magic.h and the
 * kernel's fs/smb): LMDB's locks and shared mapping are not coherent across
 * clients there, so a catalog on one would corrupt silently. */
#define CAT_FS_NFS  0x6969L
#define CAT_FS_SMB  0x517BL
#define CAT_FS_CIFS 0xFF534D42L
#define CAT_FS_SMB2 0xFE534D42L

/* SPEC §12.2: the named database of source paths (added in catalog schema 1
 * without a version change: readers that do not know it never open it). */
#define CAT_DB_PATHS "paths"
/* LMDB 0.9's MDB_MAXKEYSIZE (mdb_env_get_maxkeysize) */
#define CAT_MAX_KEY 511u
/* meta, images, names, used, paths */
#define CAT_MAX_DBS 5

/* The files of DB/catalog (SPEC §12.1). */
#define CAT_DATA_FILE     "data.mdb"
#define CAT_LOCK_FILE     "lock.mdb"
#define CAT_NEW_PREFIX    ".catalog-new."    /* DB/.catalog-new.PID.N: being created */
#define CAT_DAMAGED_NAME  "catalog.damaged-" /* DB/catalog.damaged-<UTC time>[.N] */

/*
 * One LMDB environment of one catalog in this process (catalog_env.c).
 * LMDB allows a process one environment per lock file: its locks on
 * lock.mdb are POSIX record locks, which the process drops all at once
 * when it closes any descriptor of that file, so a second environment
 * closed (a builder, a fetch) took the first one's locks with it.  Every
 * rd_catalog of the same DB/catalog files therefore holds the same
 * cat_env, counted, and only the last close closes it.
 */
struct cat_env {
	MDB_env *env;
	pthread_rwlock_t resize; /* held shared by every txn on env, exclusive to resize */
	dev_t data_dev;          /* data.mdb as opened (cat_files_opened): another */
	ino_t data_ino;          /* file at its path is a replaced catalog */
	dev_t lock_dev;          /* lock.mdb as opened (lock_known): a write */
	ino_t lock_ino;          /* transaction refuses a replaced lock file */
	int lock_known;          /* 0 under MDB_NOLOCK: then never shared */
	int writable;            /* opened without MDB_RDONLY */
	pid_t pid;               /* the process that opened it: never shared after fork */
	pthread_mutex_t dbi;     /* mdb_dbi_open in one transaction at a time */
	unsigned refs;           /* handles holding it: under the list's lock */
	struct cat_env *next;    /* the list of shared environments */
};

struct rd_catalog {
	struct cat_env *e;
	MDB_dbi images, names, meta;
	MDB_dbi used;            /* last-query times (SPEC §12.6) */
	int has_used;            /* `used` exists (absent in catalogs never written since) */
	MDB_dbi paths;           /* source paths (SPEC §12.2) */
	int has_paths;           /* `paths` exists (absent in catalogs never written since) */
	unsigned flags;
	pthread_rwlock_t swap;   /* held shared by every txn, exclusive to the refresh's swap */
	int damaged;             /* the last open step failed on damage reindex repairs */
	_Atomic uint64_t recheck_ns; /* CLOCK_MONOTONIC: rd_catalog_refresh's next look */
	_Atomic uint64_t reopened;   /* replaced catalogs opened since: in the generation */
	pthread_mutex_t refresh;     /* one rd_catalog_refresh at a time */
	struct rd_catalog *next;     /* a replacement opened, not swapped in yet */
	char *recovered;         /* RD_CAT_RECOVER moved a damaged catalog: why, where */
	char dir[];
};

/* catalog_txn.c: an LMDB code (negative) or positive errno -> symdb code. */
RD_HIDDEN int cat_err(int rc);
/* catalog_txn.c: one line "PATH: WHAT: reason" for a raw LMDB code or a
 * positive errno. */
RD_HIDDEN void cat_msg(char *errbuf, size_t errbuf_sz, const char *path, const char *what,
                       int rc);
/* catalog_txn.c: transactions holding `resize` shared; LMDB codes. */
RD_HIDDEN int cat_txn_begin(rd_catalog *c, unsigned txn_flags, MDB_txn **txn);
RD_HIDDEN void cat_txn_abort(rd_catalog *c, MDB_txn *txn);
/* A read snapshot with a cursor on dbi, for a scan: 0, or a SYMDB_E_* code
 * with nothing left open.  cat_scan_end() closes the cursor, then the
 * snapshot (a read-only transaction's cursor is not freed with it). */
RD_HIDDEN int cat_scan_begin(rd_catalog *c, MDB_dbi dbi, MDB_txn **txn, MDB_cursor **cur);
RD_HIDDEN void cat_scan_end(rd_catalog *c, MDB_txn *txn, MDB_cursor *cur);
RD_HIDDEN int cat_txn_commit(rd_catalog *c, MDB_txn *txn);

/* catalog_txn.c: run fn in a write transaction and commit, doubling the map
 * and retrying on MDB_MAP_FULL.  cat_write_raw returns an LMDB code (or
 * fn's symdb code), cat_write a symdb code. */
typedef int (*cat_write_fn)(rd_catalog *c, MDB_txn *txn, void *arg);
RD_HIDDEN int cat_write_raw(rd_catalog *c, cat_write_fn fn, void *arg);
RD_HIDDEN int cat_write(rd_catalog *c, cat_write_fn fn, void *arg);

/* catalog_files.c: check DB/catalog before LMDB opens it: no symbolic
 * links, data.mdb as long as its meta pages need (SPEC §12.1).  Sets
 * c->damaged for damage reindex repairs.  *data gets data.mdb's identity. */
RD_HIDDEN int cat_files_check(rd_catalog *c, const char *envdir, struct stat *data,
                              char *errbuf, size_t errbuf_sz);
/* catalog_files.c: after mdb_env_open: LMDB opened the data.mdb we checked;
 * remember lock.mdb's identity for cat_lock_same. */
RD_HIDDEN int cat_files_opened(rd_catalog *c, const char *envdir, const struct stat *data,
                               char *errbuf, size_t errbuf_sz);
/* catalog_files.c: create DB/catalog complete (named databases and schema
 * record) in DB/.catalog-new.PID.N and rename it into place, unless it
 * exists.  init fills a fresh environment's write transaction. */
/* Give envdir/lock.mdb its disk blocks before LMDB maps it (creating it
 * with LMDB's size when missing): LMDB makes it a sparse file and writes
 * through a shared mapping, where a full disk is SIGBUS, not an error.
 * 0, or -ENOSPC (-EDQUOT) with errbuf set; other failures are left to
 * LMDB's open, which reports them. */
RD_HIDDEN int cat_lock_reserve(const char *envdir, char *errbuf, size_t errbuf_sz);
/* LMDB's open of envdir (lock file reserved), its stale readers cleared,
 * and the tree check of its snapshot (cat_tree_check): 0, or the error with
 * c->damaged set for damage, errbuf set.  Opens c->e->env (c->e is set
 * up by cat_env_attach), which stays open on success. */
RD_HIDDEN int cat_open_env(rd_catalog *c, const char *envdir, char *errbuf, size_t errbuf_sz);
/* catalog_open.c: every page of the snapshot c->e's environment now holds
 * checked (format_lmdb_tree.c): 0, or SYMDB_E_CATALOG with c->damaged set. */
RD_HIDDEN int cat_tree_check(rd_catalog *c, const char *envdir, char *errbuf,
                             size_t errbuf_sz);
/* catalog_env.c: give c the environment of envdir whose data.mdb is `data`
 * (as cat_files_check found it): the one this process already has open
 * on the same data.mdb and lock.mdb, counted once more, or a new one
 * (cat_open_env, cat_files_opened) that later opens share.  Called with
 * the list's lock held (cat_envs_lock), so two threads opening one
 * catalog share too.  0, or the error with errbuf set and c->e NULL. */
RD_HIDDEN int cat_env_attach(rd_catalog *c, const char *envdir, const struct stat *data,
                             char *errbuf, size_t errbuf_sz);
/* catalog_env.c: c lets go of its environment (NULL: nothing); the last
 * holder closes it.  c->e is NULL afterwards. */
RD_HIDDEN void cat_env_detach(rd_catalog *c);
/* catalog_env.c: the list of environments, locked.  Not held across a wait
 * for another process (cat_init's write waits for LMDB's writer lock: it
 * runs under the environment's `dbi` mutex instead). */
RD_HIDDEN void cat_envs_lock(void);
RD_HIDDEN void cat_envs_unlock(void);
RD_HIDDEN int cat_create_catalog(rd_catalog *c, const char *envdir, cat_write_fn init,
                                 char *errbuf, size_t errbuf_sz);
/* catalog_files.c: under a flock of DB, move a damaged DB/catalog aside to
 * DB/catalog.damaged-<UTC time> and create an empty one; c->recovered says
 * what was done.  0 also when another process repaired it first. */
RD_HIDDEN int cat_recover(rd_catalog *c, const char *envdir, const char *why,
                          cat_write_fn init, char *errbuf, size_t errbuf_sz);
/* catalog_files.c: an EIO from a commit on a full filesystem (LMDB's short
 * write) becomes ENOSPC.  rc is an LMDB code; returns one. */
RD_HIDDEN int cat_commit_errno(rd_catalog *c, int rc);
/* catalog_lock.c: SYMDB_E_LOCK_REPLACED when DB/catalog/lock.mdb is no
 * longer the file this handle opened (deleted or replaced: writers no longer
 * exclude each other), else 0. */
RD_HIDDEN int cat_lock_same(rd_catalog *c);
/* catalog_refresh.c: rd_catalog_refresh's first look one period after open
 * (a short-lived process never makes one). */
RD_HIDDEN void cat_refresh_arm(rd_catalog *c);

#endif /* SYMDB_CATALOG_INTERNAL_H */
