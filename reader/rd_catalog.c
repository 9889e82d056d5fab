/* SPDX-License-Identifier: MIT */
/*
 * rd_catalog.c - the LMDB catalog of a database directory (SPEC §12): the
 * environment at DB/catalog/, named databases `meta`, `images` and `names`.
 *
 * The reader uses it read-only (MDB_RDONLY: no write access needed, falling
 * back to MDB_NOLOCK when even the lock file cannot be opened); the indexer
 * uses it read-write to publish.  LMDB error codes are mapped to symdb codes
 * here and never leave this file.
 *
 * Map size.  The map starts small and doubles whenever a write transaction
 * hits MDB_MAP_FULL.  mdb_env_set_mapsize() may only be called while this
 * process has no transaction open, so every transaction holds `resize` for
 * reading and a resize takes it for writing.  Another process may grow the
 * map too; LMDB then reports MDB_MAP_RESIZED at txn begin, and we adopt the
 * new size (mdb_env_set_mapsize(env, 0)) and retry.
 *
 * The environment is opened with MDB_NOTLS, so read transactions are not tied
 * to a thread and any number of threads may share one handle.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t, mkdir, access */
#include "rd_catalog.h"

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

#include "format_catalog.h"
#include "symdb.h"
#include "symdb_endian.h"
#include "symdb_format.h"

#define CAT_MAP_INITIAL  (1u << 20) /* 1 MiB: thousands of entries, grows on demand */
#define CAT_SCHEMA_KEY   "schema"
#define CAT_MAX_RETRIES  64         /* map doublings / resize adoptions per call */
#define CAT_DB_USED      "used"     /* UUID -> u64 last-query time (SPEC §12.6) */

/* statfs(2) f_type magics of network filesystems (linux/magic.h and the
 * kernel's fs/smb): LMDB's locks and shared mapping are not coherent across
 * clients there, so a catalog on one would corrupt silently. */
#define CAT_FS_NFS  0x6969L
#define CAT_FS_SMB  0x517BL
#define CAT_FS_CIFS 0xFF534D42L
#define CAT_FS_SMB2 0xFE534D42L

struct rd_catalog {
	MDB_env *env;
	MDB_dbi images, names, meta;
	MDB_dbi used;            /* last-query times (SPEC §12.6) */
	int has_used;            /* `used` exists (absent in catalogs never written since) */
	unsigned flags;
	pthread_rwlock_t resize; /* held shared by every txn, exclusive to resize */
	char dir[];
};

/* ---- error mapping ------------------------------------------------------ */

/* LMDB mixes errno values (positive) with its own codes (negative, from
 * MDB_KEYEXIST = -30799 up); map both to symdb's convention. */
static int cat_err(int rc)
{
	if (rc == 0)
		return 0;
	if (rc > 0)
		return -rc;
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
static void cat_msg(char *errbuf, size_t errbuf_sz, const char *path, const char *what,
                    int rc)
{
	if (errbuf && errbuf_sz)
		snprintf(errbuf, errbuf_sz, "%s: %s: %s", path, what,
		         rc > 0 ? symdb_strerror(-rc) : mdb_strerror(rc));
}

/* ---- transactions with map growth --------------------------------------- */

/* Begin a transaction holding `resize` shared.  Adopts a map grown by another
 * process (MDB_MAP_RESIZED).  Returns an LMDB code. */
static int cat_txn_begin(rd_catalog *c, unsigned txn_flags, MDB_txn **txn)
{
	int rc, tries;

	for (tries = 0; tries < CAT_MAX_RETRIES; tries++) {
		pthread_rwlock_rdlock(&c->resize);
		rc = mdb_txn_begin(c->env, NULL, txn_flags, txn);
		if (rc != MDB_MAP_RESIZED)
			break;
		pthread_rwlock_unlock(&c->resize);
		pthread_rwlock_wrlock(&c->resize);
		rc = mdb_env_set_mapsize(c->env, 0);
		pthread_rwlock_unlock(&c->resize);
		if (rc)
			return rc;
	}
	if (rc)
		pthread_rwlock_unlock(&c->resize);
	return rc;
}

static void cat_txn_abort(rd_catalog *c, MDB_txn *txn)
{
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&c->resize);
}

static int cat_txn_commit(rd_catalog *c, MDB_txn *txn)
{
	int rc = mdb_txn_commit(txn);

	pthread_rwlock_unlock(&c->resize);
	return rc;
}

/* Double the map.  Called with no transaction of ours open. */
static int cat_grow(rd_catalog *c)
{
	MDB_envinfo info;
	int rc;

	pthread_rwlock_wrlock(&c->resize);
	rc = mdb_env_info(c->env, &info);
	if (rc == 0)
		rc = mdb_env_set_mapsize(c->env, info.me_mapsize * 2);
	pthread_rwlock_unlock(&c->resize);
	return rc;
}

/* Run fn in a write transaction, growing the map and retrying on
 * MDB_MAP_FULL (from a put or from the commit).  fn returns an LMDB code, or
 * a symdb code to abort with; so does this function (raw, unmapped). */
typedef int (*cat_write_fn)(rd_catalog *c, MDB_txn *txn, void *arg);

static int cat_is_symdb_code(int rc)
{
	return rc <= SYMDB_E_FORMAT && rc > SYMDB_E_LAST_;
}

static int cat_write_raw(rd_catalog *c, cat_write_fn fn, void *arg)
{
	MDB_txn *txn;
	int rc, tries;

	for (tries = 0; tries < CAT_MAX_RETRIES; tries++) {
		rc = cat_txn_begin(c, 0, &txn);
		if (rc)
			return rc;
		rc = fn(c, txn, arg);
		if (rc)
			cat_txn_abort(c, txn);
		else
			rc = cat_txn_commit(c, txn);
		if (rc != MDB_MAP_FULL)
			return rc;
		rc = cat_grow(c);
		if (rc)
			return rc;
	}
	return MDB_MAP_FULL;
}

static int cat_write(rd_catalog *c, cat_write_fn fn, void *arg)
{
	int rc;

	if (!(c->flags & RD_CAT_WRITE))
		return SYMDB_E_READONLY;
	rc = cat_write_raw(c, fn, arg);
	return cat_is_symdb_code(rc) ? rc : cat_err(rc);
}

/* ---- open --------------------------------------------------------------- */

/* mkdir -p, for DB itself (whose parents, e.g. ~/.cache, may be missing). */
static int cat_mkdirs(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0777) < 0 && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0777) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int cat_create_dirs(const char *dir, char *errbuf, size_t errbuf_sz)
{
	static const char *const sub[] = { "", "/catalog", "/images", "/tmp" };
	char path[4096];
	size_t i;
	int rc;

	for (i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		if ((size_t)snprintf(path, sizeof path, "%s%s", dir, sub[i]) >= sizeof path)
			return -ENAMETOOLONG;
		rc = cat_mkdirs(path);
		if (rc < 0) {
			cat_msg(errbuf, errbuf_sz, path, "cannot create directory", -rc);
			return rc;
		}
	}
	return 0;
}

/* Open the environment.  A read-only open that cannot open lock.mdb (a
 * directory we may not write) falls back to MDB_NOLOCK: no reader table, which
 * is safe as long as no writer runs at the same time, the usual case for a
 * database shipped read-only. */
static int cat_env_open(rd_catalog *c, const char *envdir)
{
	unsigned fl = MDB_NOTLS;
	int rc;

	if (!(c->flags & RD_CAT_WRITE))
		fl |= MDB_RDONLY;
	rc = mdb_env_open(c->env, envdir, fl, 0666);
	if ((rc == EACCES || rc == EROFS || rc == EPERM) && (fl & MDB_RDONLY)) {
		mdb_env_close(c->env);
		c->env = NULL;
		rc = mdb_env_create(&c->env);
		if (rc == 0)
			rc = mdb_env_set_maxdbs(c->env, 4);
		if (rc == 0)
			rc = mdb_env_open(c->env, envdir, fl | MDB_NOLOCK, 0666);
	}
	return rc;
}

/* Write side: create the named databases and the schema record. */
static int cat_init_write(rd_catalog *c, MDB_txn *txn, void *arg)
{
	uint8_t ver[4];
	MDB_val k = { sizeof CAT_SCHEMA_KEY - 1, (void *)CAT_SCHEMA_KEY }, v;
	int rc;

	(void)arg;
	rc = mdb_dbi_open(txn, FMT_CAT_DB_META, MDB_CREATE, &c->meta);
	if (rc == 0)
		rc = mdb_dbi_open(txn, FMT_CAT_DB_IMAGES, MDB_CREATE, &c->images);
	if (rc == 0)
		rc = mdb_dbi_open(txn, FMT_CAT_DB_NAMES, MDB_CREATE, &c->names);
	if (rc == 0)
		rc = mdb_dbi_open(txn, CAT_DB_USED, MDB_CREATE, &c->used);
	if (rc)
		return rc;
	rc = mdb_get(txn, c->meta, &k, &v);
	if (rc != MDB_NOTFOUND)
		return rc;
	fmt_put32(ver, FMT_CAT_SCHEMA_VERSION);
	v.mv_size = sizeof ver;
	v.mv_data = ver;
	return mdb_put(txn, c->meta, &k, &v, 0);
}

/* Open the named databases (creating them when writing) and check the schema. */
static int cat_init(rd_catalog *c, const char *envdir, char *errbuf, size_t errbuf_sz)
{
	MDB_val k = { sizeof CAT_SCHEMA_KEY - 1, (void *)CAT_SCHEMA_KEY }, v;
	MDB_txn *txn = NULL;
	uint32_t schema;
	int rc;

	if (c->flags & RD_CAT_WRITE) {
		rc = cat_write_raw(c, cat_init_write, NULL);
		if (rc) {
			cat_msg(errbuf, errbuf_sz, envdir, "cannot initialise catalog", rc);
			return cat_err(rc);
		}
	}
	rc = cat_txn_begin(c, MDB_RDONLY, &txn);
	if (rc) {
		cat_msg(errbuf, errbuf_sz, envdir, "cannot read catalog", rc);
		return cat_err(rc);
	}
	rc = mdb_dbi_open(txn, FMT_CAT_DB_META, 0, &c->meta);
	if (rc == 0)
		rc = mdb_dbi_open(txn, FMT_CAT_DB_IMAGES, 0, &c->images);
	if (rc == 0)
		rc = mdb_dbi_open(txn, FMT_CAT_DB_NAMES, 0, &c->names);
	if (rc == 0)
		rc = mdb_get(txn, c->meta, &k, &v);
	if (rc) {
		cat_txn_abort(c, txn);
		cat_msg(errbuf, errbuf_sz, envdir, "not a symdb catalog", rc);
		return rc > 0 ? -rc : SYMDB_E_CATALOG;
	}
	schema = v.mv_size == 4 ? fmt_be32(v.mv_data) : 0;
	/* Last: a catalog no writer opened since `used` was added lacks it, and
	 * a failed mdb_dbi_open leaves the transaction usable. */
	c->has_used = mdb_dbi_open(txn, CAT_DB_USED, 0, &c->used) == 0;
	/* Committing a read txn keeps the dbi handles open for the env's life. */
	rc = cat_txn_commit(c, txn);
	if (rc == 0 && schema != FMT_CAT_SCHEMA_VERSION) {
		if (errbuf && errbuf_sz)
			snprintf(errbuf, errbuf_sz, "%s: catalog schema %u, expected %u", envdir,
			         (unsigned)schema, FMT_CAT_SCHEMA_VERSION);
		return SYMDB_E_CATALOG;
	}
	return cat_err(rc);
}

static int cat_check_dir(const char *envdir, unsigned flags, char *errbuf, size_t errbuf_sz)
{
	struct stat st;

	if (stat(envdir, &st) < 0) {
		int e = errno;

		cat_msg(errbuf, errbuf_sz, envdir, "cannot open catalog", e);
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		cat_msg(errbuf, errbuf_sz, envdir, "cannot open catalog", ENOTDIR);
		return -ENOTDIR;
	}
	if ((flags & RD_CAT_WRITE) && access(envdir, W_OK) < 0) {
		int e = errno;

		cat_msg(errbuf, errbuf_sz, envdir, "catalog is not writable", e);
		return -e;
	}
	return 0;
}

static int cat_open_env(rd_catalog *c, const char *envdir, char *errbuf, size_t errbuf_sz)
{
	int rc = mdb_env_create(&c->env);

	if (rc == 0)
		rc = mdb_env_set_maxdbs(c->env, 4);
	if (rc == 0)
		rc = mdb_env_set_mapsize(c->env, CAT_MAP_INITIAL);
	if (rc == 0)
		rc = cat_env_open(c, envdir);
	if (rc) {
		cat_msg(errbuf, errbuf_sz, envdir, "cannot open catalog", rc);
		return rc > 0 ? -rc : SYMDB_E_CATALOG;
	}
	/* Clear reader slots left by crashed processes, so they pin no pages
	 * (a no-op under the MDB_NOLOCK fallback). */
	mdb_reader_check(c->env, NULL);
	return 0;
}

int rd_fs_is_network(long f_type)
{
	/* f_type is a signed word on some ABIs: compare the low 32 bits. */
	switch ((unsigned long)f_type & 0xFFFFFFFFUL) {
	case CAT_FS_NFS:
	case CAT_FS_SMB:
	case CAT_FS_CIFS:
	case CAT_FS_SMB2:
		return 1;
	default:
		return 0;
	}
}

/* Refuse a database on a network filesystem (SPEC §12.1).  A directory that
 * does not exist yet (CREATE) is judged by its nearest existing ancestor, so
 * nothing is created there either.  statfs failures are left to the open. */
static int cat_check_fs(const char *dir, char *errbuf, size_t errbuf_sz)
{
	char path[4096];
	struct statfs sf;
	size_t len = strlen(dir);

	if (len >= sizeof path)
		return 0;
	memcpy(path, dir, len + 1);
	while (statfs(path, &sf) < 0) {
		char *slash = strrchr(path, '/');

		if (errno != ENOENT || !slash)
			return 0;
		if (slash == path)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (!rd_fs_is_network((long)sf.f_type))
		return 0;
	if (errbuf && errbuf_sz)
		snprintf(errbuf, errbuf_sz,
		         "%s: database is on a network filesystem (f_type 0x%lx); LMDB needs a local one",
		         dir, (unsigned long)sf.f_type & 0xFFFFFFFFUL);
	return SYMDB_E_NETFS;
}

int rd_catalog_open(const char *dir, unsigned flags, rd_catalog **out, char *errbuf,
                    size_t errbuf_sz)
{
	char envdir[4096];
	rd_catalog *c;
	size_t len;
	int rc;

	*out = NULL;
	if (!dir || !*dir || (flags & ~(RD_CAT_WRITE | RD_CAT_CREATE)))
		return SYMDB_E_INVAL;
	if (flags & RD_CAT_CREATE)
		flags |= RD_CAT_WRITE;
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len + sizeof "/catalog" > sizeof envdir)
		return -ENAMETOOLONG;
	c = calloc(1, sizeof *c + len + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c->dir, dir, len);
	c->flags = flags;
	pthread_rwlock_init(&c->resize, NULL);
	snprintf(envdir, sizeof envdir, "%s/catalog", c->dir);

	rc = cat_check_fs(c->dir, errbuf, errbuf_sz);
	if (rc == 0 && (flags & RD_CAT_CREATE))
		rc = cat_create_dirs(c->dir, errbuf, errbuf_sz);
	if (rc == 0)
		rc = cat_check_dir(envdir, flags, errbuf, errbuf_sz);
	if (rc == 0)
		rc = cat_open_env(c, envdir, errbuf, errbuf_sz);
	if (rc == 0)
		rc = cat_init(c, envdir, errbuf, errbuf_sz);
	if (rc) {
		rd_catalog_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void rd_catalog_close(rd_catalog *c)
{
	if (!c)
		return;
	if (c->env)
		mdb_env_close(c->env);
	pthread_rwlock_destroy(&c->resize);
	free(c);
}

const char *rd_catalog_dir(const rd_catalog *c)
{
	return c->dir;
}

/* ---- the per-directory lock of DB/images/XX (SPEC §12.5, §12.8) ---------- */

int rd_images_dir_lock(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	/* flock locks the open file description: a fresh open per call, so it
	 * also excludes other threads of this process. */
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			rc = -errno;
			close(fd);
			return rc;
		}
	}
	return fd;
}

void rd_images_dir_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}

/* ---- entries ------------------------------------------------------------ */

static int cat_decode(const MDB_val *key, const MDB_val *val, rd_cat_entry *e,
                      fmt_cat_value *v)
{
	const char *why;

	if (key->mv_size == 0 || key->mv_size > FMT_UUID_MAX)
		return SYMDB_E_CATALOG;
	if (fmt_cat_value_decode(val->mv_data, val->mv_size, v, &why) < 0)
		return SYMDB_E_CATALOG;
	memset(e, 0, sizeof *e);
	memcpy(e->uuid, key->mv_data, key->mv_size);
	e->uuid_len = (uint8_t)key->mv_size;
	e->uuid_kind = v->uuid_kind;
	e->object_format = v->object_format;
	e->flags = v->flags;
	e->machine = v->machine;
	e->machine_sub = v->machine_sub;
	e->file_size = v->file_size;
	e->header_sum = v->header_sum;
	e->built_at = v->built_at;
	return 0;
}

/* Copy both strings of v into buf as NUL-terminated strings. */
static int cat_strings(const fmt_cat_value *v, rd_cat_entry *e, char *buf, size_t buf_sz)
{
	if (v->file_len + 1 + v->name_len + 1 > buf_sz)
		return -ENAMETOOLONG;
	memcpy(buf, v->file, v->file_len);
	buf[v->file_len] = 0;
	memcpy(buf + v->file_len + 1, v->image_name, v->name_len);
	buf[v->file_len + 1 + v->name_len] = 0;
	e->file = buf;
	e->image_name = buf + v->file_len + 1;
	return 0;
}

int rd_catalog_get(rd_catalog *c, const uint8_t *uuid, size_t uuid_len, rd_cat_entry *out,
                   char *buf, size_t buf_sz)
{
	MDB_val k = { uuid_len, (void *)uuid }, v;
	fmt_cat_value cv;
	MDB_txn *txn;
	int rc;

	if (!c || !uuid || uuid_len == 0 || uuid_len > FMT_UUID_MAX || !out || !buf)
		return SYMDB_E_INVAL;
	rc = cat_txn_begin(c, MDB_RDONLY, &txn);
	if (rc)
		return cat_err(rc);
	rc = cat_err(mdb_get(txn, c->images, &k, &v));
	if (rc == 0)
		rc = cat_decode(&k, &v, out, &cv);
	if (rc == 0)
		rc = cat_strings(&cv, out, buf, buf_sz);
	cat_txn_abort(c, txn);
	return rc;
}

struct cat_put_arg {
	const rd_cat_entry *e;
	int only_if_absent;
	const uint8_t *val;
	size_t val_len;
};

/* Delete the `names` key of the entry stored under key k, if any. */
static int cat_del_name(rd_catalog *c, MDB_txn *txn, const MDB_val *k, const MDB_val *old)
{
	uint8_t nk[512];
	fmt_cat_value cv;
	const char *why;
	MDB_val key;
	int rc;

	if (fmt_cat_value_decode(old->mv_data, old->mv_size, &cv, &why) < 0)
		return 0; /* a damaged old value: nothing reliable to remove */
	key.mv_size = fmt_cat_name_key(cv.image_name, cv.name_len, k->mv_data, k->mv_size, nk,
	                               sizeof nk);
	key.mv_data = nk;
	if (key.mv_size == 0)
		return 0;
	rc = mdb_del(txn, c->names, &key, NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int cat_put_txn(rd_catalog *c, MDB_txn *txn, void *argp)
{
	struct cat_put_arg *a = argp;
	MDB_val k = { a->e->uuid_len, (void *)a->e->uuid }, v, nkv, empty = { 0, NULL };
	uint8_t nk[512];
	int rc;

	rc = mdb_get(txn, c->images, &k, &v);
	if (rc == 0 && a->only_if_absent)
		return SYMDB_E_EXISTS;
	if (rc == 0)
		rc = cat_del_name(c, txn, &k, &v);
	else if (rc == MDB_NOTFOUND)
		rc = 0;
	if (rc)
		return rc;
	v.mv_size = a->val_len;
	v.mv_data = (void *)a->val;
	rc = mdb_put(txn, c->images, &k, &v, 0);
	if (rc)
		return rc;
	nkv.mv_size = fmt_cat_name_key(a->e->image_name, strlen(a->e->image_name), a->e->uuid,
	                               a->e->uuid_len, nk, sizeof nk);
	nkv.mv_data = nk;
	return mdb_put(txn, c->names, &nkv, &empty, 0);
}

/* Encode e as an `images` value into a->val (malloc'd; the caller frees),
 * refusing what a reader would reject. */
static int cat_encode(rd_catalog *c, const rd_cat_entry *e, struct cat_put_arg *a)
{
	fmt_cat_value cv;
	uint8_t *val;
	const char *why;

	if (!c || !e || !e->file || !e->image_name || e->uuid_len == 0 ||
	    e->uuid_len > FMT_UUID_MAX)
		return SYMDB_E_INVAL;
	memset(&cv, 0, sizeof cv);
	cv.uuid_kind = e->uuid_kind;
	cv.object_format = e->object_format;
	cv.flags = e->flags;
	cv.machine = e->machine;
	cv.machine_sub = e->machine_sub;
	cv.file_size = e->file_size;
	cv.header_sum = e->header_sum;
	cv.built_at = e->built_at;
	cv.file = e->file;
	cv.file_len = strlen(e->file);
	cv.image_name = e->image_name;
	cv.name_len = strlen(e->image_name);
	/* LMDB's key limit (511 bytes) bounds the names key. */
	if (cv.name_len + 1 + e->uuid_len > (size_t)mdb_env_get_maxkeysize(c->env) ||
	    cv.file_len > FMT_CV_STR_MAX)
		return -ENAMETOOLONG;
	a->e = e;
	a->val_len = fmt_cat_value_size(&cv);
	val = malloc(a->val_len);
	if (!val)
		return -ENOMEM;
	fmt_cat_value_encode(&cv, val, a->val_len);
	a->val = val;
	/* Never store what a reader would reject. */
	return fmt_cat_value_decode(val, a->val_len, &cv, &why) < 0 ? SYMDB_E_INVAL : 0;
}

int rd_catalog_put(rd_catalog *c, const rd_cat_entry *e, int only_if_absent)
{
	struct cat_put_arg a = { e, only_if_absent, NULL, 0 };
	int rc = cat_encode(c, e, &a);

	if (rc == 0)
		rc = cat_write(c, cat_put_txn, &a);
	free((void *)a.val);
	return rc;
}

struct cat_replace_arg {
	struct cat_put_arg *puts;
	size_t n;
};

/* Drop `used` records of UUIDs that `images` no longer has. */
static int cat_prune_used(rd_catalog *c, MDB_txn *txn)
{
	MDB_cursor *cur;
	MDB_val k, v, iv;
	int rc;

	if (!c->has_used)
		return 0;
	rc = mdb_cursor_open(txn, c->used, &cur);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (mdb_get(txn, c->images, &k, &iv) == MDB_NOTFOUND)
			rc = mdb_cursor_del(cur, 0);
		if (rc)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int cat_replace_txn(rd_catalog *c, MDB_txn *txn, void *argp)
{
	struct cat_replace_arg *a = argp;
	int rc = mdb_drop(txn, c->images, 0);

	if (rc == 0)
		rc = mdb_drop(txn, c->names, 0);
	for (size_t i = 0; i < a->n && rc == 0; i++)
		rc = cat_put_txn(c, txn, &a->puts[i]);
	return rc ? rc : cat_prune_used(c, txn);
}

int rd_catalog_replace_all(rd_catalog *c, const rd_cat_entry *e, size_t n)
{
	struct cat_replace_arg a = { calloc(n ? n : 1, sizeof *a.puts), n };
	int rc = a.puts ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = cat_encode(c, &e[i], &a.puts[i]);
	if (rc == 0)
		rc = cat_write(c, cat_replace_txn, &a);
	for (size_t i = 0; a.puts && i < n; i++)
		free((void *)a.puts[i].val);
	free(a.puts);
	return rc;
}

struct cat_del_arg {
	const uint8_t *uuid;
	size_t uuid_len;
};

static int cat_del_txn(rd_catalog *c, MDB_txn *txn, void *argp)
{
	struct cat_del_arg *a = argp;
	MDB_val k = { a->uuid_len, (void *)a->uuid }, v;
	int rc;

	rc = mdb_get(txn, c->images, &k, &v);
	if (rc == MDB_NOTFOUND)
		return SYMDB_E_NOT_INDEXED;
	if (rc == 0)
		rc = cat_del_name(c, txn, &k, &v);
	if (rc == 0)
		rc = mdb_del(txn, c->images, &k, NULL);
	if (rc == 0 && c->has_used) {
		rc = mdb_del(txn, c->used, &k, NULL);
		if (rc == MDB_NOTFOUND)
			rc = 0;
	}
	return rc;
}

int rd_catalog_del(rd_catalog *c, const uint8_t *uuid, size_t uuid_len)
{
	struct cat_del_arg a = { uuid, uuid_len };

	if (!c || !uuid || uuid_len == 0 || uuid_len > FMT_UUID_MAX)
		return SYMDB_E_INVAL;
	return cat_write(c, cat_del_txn, &a);
}

/* Strings of a listed entry go to a scratch buffer big enough for any value
 * (two u16-length strings), allocated once per call.  fn runs inside a read
 * transaction that holds `resize` shared, so it must not write through the
 * same handle: a map resize would wait for the listing forever. */
#define CAT_SCRATCH (2 * (FMT_CV_STR_MAX + 1))

static int cat_list_cursor(rd_catalog *c, MDB_txn *txn, char *scratch,
                           int (*fn)(const rd_cat_entry *e, void *arg), void *arg)
{
	MDB_cursor *cur;
	MDB_val k, v;
	rd_cat_entry e;
	fmt_cat_value cv;
	int rc, op = MDB_FIRST, damaged = 0;

	rc = mdb_cursor_open(txn, c->images, &cur);
	if (rc)
		return cat_err(rc);
	while ((rc = mdb_cursor_get(cur, &k, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		/* An undecodable value is skipped, not fatal: every readable entry
		 * is still listed, and the damage is reported at the end. */
		if (cat_decode(&k, &v, &e, &cv) != 0 ||
		    cat_strings(&cv, &e, scratch, CAT_SCRATCH) != 0) {
			damaged = 1;
			continue;
		}
		rc = fn(&e, arg);
		if (rc)
			break;
	}
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		rc = damaged ? SYMDB_E_CATALOG : 0;
	return rc;
}

int rd_catalog_list(rd_catalog *c, int (*fn)(const rd_cat_entry *e, void *arg), void *arg)
{
	MDB_txn *txn;
	char *scratch;
	int rc;

	if (!c || !fn)
		return SYMDB_E_INVAL;
	scratch = malloc(CAT_SCRATCH);
	if (!scratch)
		return -ENOMEM;
	rc = cat_txn_begin(c, MDB_RDONLY, &txn);
	if (rc == 0) {
		rc = cat_list_cursor(c, txn, scratch, fn, arg);
		cat_txn_abort(c, txn);
	} else {
		rc = cat_err(rc);
	}
	free(scratch);
	return rc;
}

/* ---- consistency of the catalog itself (SPEC §12.6, verify) ------------- */

struct cat_check {
	rd_check_fn fn; /* NULL in the repair pass */
	void *arg;
	int found;
};

static void chk_report(struct cat_check *k, int kind, const MDB_val *key, const char *why)
{
	k->found++;
	if (k->fn)
		k->fn(kind, key->mv_data, key->mv_size, why, k->arg);
}

/* `images`: every value must decode (SPEC §12.3); the repair pass deletes
 * those that do not, with their `used` record. */
static int chk_images(rd_catalog *c, MDB_txn *txn, struct cat_check *k)
{
	MDB_cursor *cur = NULL;
	MDB_val key, v;
	fmt_cat_value cv;
	const char *why;
	int rc, op = MDB_FIRST;

	rc = mdb_cursor_open(txn, c->images, &cur);
	while (rc == 0 && (rc = mdb_cursor_get(cur, &key, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		why = NULL;
		if (key.mv_size == 0 || key.mv_size > FMT_UUID_MAX)
			why = "key is not a UUID of 1 to 32 bytes";
		else if (fmt_cat_value_decode(v.mv_data, v.mv_size, &cv, &why) == 0)
			continue;
		chk_report(k, RD_CHK_BAD_VALUE, &key, why ? why : "undecodable value");
		if (!k->fn) {
			if (c->has_used && key.mv_size)
				mdb_del(txn, c->used, &key, NULL); /* NOTFOUND is fine */
			rc = mdb_cursor_del(cur, 0);
		}
	}
	if (cur)
		mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Is the `names` key (name, 0x00, UUID) backed by an `images` entry of that
 * UUID and that image name? */
static const char *chk_name_key(rd_catalog *c, MDB_txn *txn, const MDB_val *key)
{
	const uint8_t *p = key->mv_data, *nul = memchr(p, 0, key->mv_size);
	MDB_val id, v;
	fmt_cat_value cv;
	const char *why;
	size_t nlen;

	if (!nul || nul == p)
		return "malformed key";
	nlen = (size_t)(nul - p);
	if (key->mv_size - nlen - 1 < 1 || key->mv_size - nlen - 1 > FMT_UUID_MAX)
		return "malformed key";
	id.mv_data = (void *)(nul + 1);
	id.mv_size = key->mv_size - nlen - 1;
	if (mdb_get(txn, c->images, &id, &v) != 0)
		return "no image with this UUID";
	if (fmt_cat_value_decode(v.mv_data, v.mv_size, &cv, &why) < 0)
		return "its image entry is damaged";
	if (cv.name_len != nlen || memcmp(cv.image_name, p, nlen) != 0)
		return "the image has another name";
	return NULL;
}

/* `names`: every key must belong to a valid image of that name. */
static int chk_names_dangling(rd_catalog *c, MDB_txn *txn, struct cat_check *k)
{
	MDB_cursor *cur = NULL;
	MDB_val key, v;
	const char *why;
	int rc, op = MDB_FIRST;

	rc = mdb_cursor_open(txn, c->names, &cur);
	while (rc == 0 && (rc = mdb_cursor_get(cur, &key, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		why = chk_name_key(c, txn, &key);
		if (!why)
			continue;
		chk_report(k, RD_CHK_DANGLING_NAME, &key, why);
		if (!k->fn)
			rc = mdb_cursor_del(cur, 0);
	}
	if (cur)
		mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* ... and every valid image must have its `names` key. */
static int chk_names_missing(rd_catalog *c, MDB_txn *txn, struct cat_check *k)
{
	MDB_cursor *cur = NULL;
	MDB_val key, v, nk, empty = { 0, NULL };
	fmt_cat_value cv;
	const char *why;
	uint8_t buf[512];
	int rc, op = MDB_FIRST;

	rc = mdb_cursor_open(txn, c->images, &cur);
	while (rc == 0 && (rc = mdb_cursor_get(cur, &key, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		if (key.mv_size == 0 || key.mv_size > FMT_UUID_MAX ||
		    fmt_cat_value_decode(v.mv_data, v.mv_size, &cv, &why) < 0)
			continue; /* reported by chk_images */
		nk.mv_size = fmt_cat_name_key(cv.image_name, cv.name_len, key.mv_data,
		                              key.mv_size, buf, sizeof buf);
		nk.mv_data = buf;
		if (nk.mv_size == 0 || mdb_get(txn, c->names, &nk, &v) == 0)
			continue;
		chk_report(k, RD_CHK_MISSING_NAME, &nk, "no names record");
		if (!k->fn)
			rc = mdb_put(txn, c->names, &nk, &empty, 0);
	}
	if (cur)
		mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* `used`: a u64 per UUID that `images` has. */
static int chk_used(rd_catalog *c, MDB_txn *txn, struct cat_check *k)
{
	MDB_cursor *cur = NULL;
	MDB_val key, v, iv;
	int rc, op = MDB_FIRST;

	if (!c->has_used)
		return 0;
	rc = mdb_cursor_open(txn, c->used, &cur);
	while (rc == 0 && (rc = mdb_cursor_get(cur, &key, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		if (v.mv_size != 8)
			chk_report(k, RD_CHK_BAD_USED, &key, "value is not a u64");
		else if (mdb_get(txn, c->images, &key, &iv) != 0)
			chk_report(k, RD_CHK_BAD_USED, &key, "no image with this UUID");
		else
			continue;
		if (!k->fn)
			rc = mdb_cursor_del(cur, 0);
	}
	if (cur)
		mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int chk_all(rd_catalog *c, MDB_txn *txn, void *argp)
{
	struct cat_check *k = argp;
	int rc;

	k->found = 0;
	rc = chk_images(c, txn, k);
	if (rc == 0)
		rc = chk_names_dangling(c, txn, k);
	if (rc == 0)
		rc = chk_names_missing(c, txn, k);
	if (rc == 0)
		rc = chk_used(c, txn, k);
	return rc;
}

int rd_catalog_check(rd_catalog *c, int repair, rd_check_fn fn, void *arg)
{
	struct cat_check k = { fn, arg, 0 };
	MDB_txn *txn;
	int rc, found;

	if (!c)
		return SYMDB_E_INVAL;
	/* Report from a read snapshot (a write transaction may be retried after
	 * a map resize, which would report twice), then fix in one write
	 * transaction that re-finds the same problems itself. */
	rc = cat_txn_begin(c, MDB_RDONLY, &txn);
	if (rc)
		return cat_err(rc);
	rc = chk_all(c, txn, &k);
	cat_txn_abort(c, txn);
	if (rc)
		return cat_err(rc);
	found = k.found;
	if (!repair || found == 0)
		return found;
	k.fn = NULL;
	rc = cat_write(c, chk_all, &k);
	return rc ? rc : found;
}

/* ---- last-query times (SPEC §12.6) --------------------------------------- */

int rd_catalog_get_used(rd_catalog *c, const uint8_t *uuid, size_t uuid_len, uint64_t *out)
{
	MDB_val k = { uuid_len, (void *)uuid }, v;
	MDB_txn *txn;
	int rc;

	if (!c || !uuid || uuid_len == 0 || uuid_len > FMT_UUID_MAX || !out)
		return SYMDB_E_INVAL;
	if (!c->has_used)
		return SYMDB_E_NOT_INDEXED;
	rc = cat_txn_begin(c, MDB_RDONLY, &txn);
	if (rc)
		return cat_err(rc);
	rc = cat_err(mdb_get(txn, c->used, &k, &v));
	if (rc == 0 && v.mv_size != 8)
		rc = SYMDB_E_CATALOG;
	if (rc == 0)
		*out = fmt_be64(v.mv_data);
	cat_txn_abort(c, txn);
	return rc;
}

struct cat_used_arg {
	const uint8_t *uuid;
	size_t uuid_len;
	uint64_t when;
};

/* Record only for an image the catalog has, and never move a time back
 * (two query runs may commit out of order). */
static int cat_used_txn(rd_catalog *c, MDB_txn *txn, void *argp)
{
	struct cat_used_arg *a = argp;
	MDB_val k = { a->uuid_len, (void *)a->uuid }, v;
	uint8_t buf[8];
	int rc;

	rc = mdb_get(txn, c->images, &k, &v);
	if (rc == MDB_NOTFOUND)
		return SYMDB_E_NOT_INDEXED;
	if (rc == 0)
		rc = mdb_get(txn, c->used, &k, &v);
	if (rc == 0 && v.mv_size == 8 && fmt_be64(v.mv_data) >= a->when)
		return 0;
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	fmt_put64(buf, a->when);
	v.mv_size = sizeof buf;
	v.mv_data = buf;
	return mdb_put(txn, c->used, &k, &v, 0);
}

int rd_catalog_set_used(rd_catalog *c, const uint8_t *uuid, size_t uuid_len, uint64_t when)
{
	struct cat_used_arg a = { uuid, uuid_len, when };

	if (!c || !uuid || uuid_len == 0 || uuid_len > FMT_UUID_MAX)
		return SYMDB_E_INVAL;
	if (!c->has_used && (c->flags & RD_CAT_WRITE))
		return SYMDB_E_CATALOG; /* a writer's open always creates it */
	return cat_write(c, cat_used_txn, &a);
}
