/* SPDX-License-Identifier: MIT */
/*
 * catalog_open.c - open the catalog of a database directory (SPEC §12.1): create
 * its directories and named databases when writing, check the schema, refuse
 * network filesystems.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t, mkdir, flock */
#include "catalog_internal.h"
#include "format_header.h"
#include "format_layout.h"
#include "format_lmdb.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

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
	/* Not DB/catalog: cat_create_catalog makes it whole. */
	static const char *const sub[] = { NULL, FMT_LAYOUT_IMAGES, FMT_LAYOUT_TMP };
	char path[4096];
	size_t i;
	int rc;

	for (i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		if (sub[i])
			rc = fmt_layout_dir(path, sizeof path, dir, sub[i]);
		else /* the database directory itself */
			rc = (size_t)snprintf(path, sizeof path, "%s", dir) < sizeof path ? 0
			                                                           : -ENAMETOOLONG;
		if (rc)
			return rc;
		rc = cat_mkdirs(path);
		if (rc < 0) {
			cat_msg(errbuf, errbuf_sz, path, "cannot create directory", -rc);
			return rc;
		}
	}
	return 0;
}

/* Whether name is an index file's (XX/HEX.symdb, or .symdb.lz4 cold). */
static int is_index_name(const char *name)
{
	size_t n = strlen(name), e = sizeof FMT_LAYOUT_INDEX_EXT - 1,
	       c = sizeof FMT_LAYOUT_INDEX_EXT FMT_LAYOUT_COLD_EXT - 1;
	return name[0] != '.' &&
	       ((n > e && !strcmp(name + n - e, FMT_LAYOUT_INDEX_EXT)) ||
	        (n > c && !strcmp(name + n - c, FMT_LAYOUT_INDEX_EXT FMT_LAYOUT_COLD_EXT)));
}

/* Whether DB/images holds an index file (looked for at the first one). */
static int images_held(const char *dir)
{
	char path[4096];
	struct dirent *de, *fe;
	int found = 0;
	DIR *d, *sub;

	if (fmt_layout_dir(path, sizeof path, dir, FMT_LAYOUT_IMAGES) || !(d = opendir(path)))
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		int fd = de->d_name[0] == '.' ? -1
		                               : openat(dirfd(d), de->d_name,
		                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || !(sub = fdopendir(fd))) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		while (!found && (fe = readdir(sub)) != NULL)
			found = is_index_name(fe->d_name);
		closedir(sub);
	}
	closedir(d);
	return found;
}

/*
 * A catalog to be created where DB/images already holds index files: the
 * catalog was deleted (or lost), and a new empty one would leave every
 * index file an orphan that `symdb gc` then deletes, although `symdb
 * reindex` could restore them all.  Refused, naming the way out; reindex
 * (RD_CAT_RECOVER) creates it and fills it from the files.
 */
static int cat_refuse_orphaning(const char *dir, const char *envdir, char *eb, size_t ebsz)
{
	struct stat st;

	if (lstat(envdir, &st) == 0 || errno != ENOENT || !images_held(dir))
		return 0;
	return fmt_err(eb, ebsz, SYMDB_E_CATALOG,
	               "%s: missing, while %s/" FMT_LAYOUT_IMAGES " holds index files: run 'symdb "
	               "reindex' to rebuild the catalog from them",
	               envdir, dir);
}

/* LMDB's verdicts on a damaged environment (as opposed to access or
 * resource errors): what `symdb reindex` repairs. */
static int cat_lmdb_damage(int rc)
{
	return rc == MDB_INVALID || rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
	       rc == MDB_VERSION_MISMATCH || rc == MDB_INCOMPATIBLE || rc == MDB_NOTFOUND;
}

/* Whether this process may write to the catalog in envdir (its directory
 * and data.mdb): then even a reader opens the environment read-write, so
 * that a builder of the same process can share it (catalog_env.c). */
static int cat_may_write(const char *envdir)
{
	char path[4096];

	return access(envdir, W_OK) == 0 &&
	       (size_t)snprintf(path, sizeof path, "%s/" CAT_DATA_FILE, envdir) < sizeof path &&
	       access(path, W_OK) == 0;
}

static int cat_env_create(struct cat_env *e)
{
	int rc = mdb_env_create(&e->env);

	if (rc == 0)
		rc = mdb_env_set_maxdbs(e->env, CAT_MAX_DBS);
	if (rc == 0)
		rc = mdb_env_set_mapsize(e->env, CAT_MAP_INITIAL);
	return rc;
}

/* Open the environment.  A reader opens it read-write when it may write
 * (cat_may_write), else read-only.  A read-only open that cannot open
 * lock.mdb (a directory we may not write), or whose lock file has no disk
 * blocks to take (nolock: a full disk), falls back to MDB_NOLOCK: no reader
 * table, which is safe as long as no writer runs at the same time, the
 * usual case for a database shipped read-only (and no writer can commit on
 * a full disk).  Each failed open is closed before the next: LMDB does not
 * open an environment twice. */
static int cat_env_open(rd_catalog *c, const char *envdir, int nolock)
{
	struct cat_env *e = c->e;
	unsigned fl = MDB_NOTLS;
	int rc;

	if (!(c->flags & RD_CAT_WRITE) && (nolock || !cat_may_write(envdir)))
		fl |= MDB_RDONLY | (nolock ? MDB_NOLOCK : 0u);
	for (;;) {
		rc = mdb_env_open(e->env, envdir, fl, 0666);
		if ((rc != EACCES && rc != EROFS && rc != EPERM) || (c->flags & RD_CAT_WRITE) ||
		    (fl & MDB_NOLOCK))
			break;
		/* read-write, then read-only, then without the lock file */
		fl |= (fl & MDB_RDONLY) ? MDB_NOLOCK : MDB_RDONLY;
		mdb_env_close(e->env);
		e->env = NULL;
		rc = cat_env_create(e);
		if (rc)
			break;
	}
	e->writable = rc == 0 && !(fl & MDB_RDONLY);
	return rc;
}

/* Write side: create the named databases and the schema record. */
static int cat_init_write(rd_catalog *c, MDB_txn *txn, void *arg)
{
	uint8_t ver[4];
	MDB_val k = { sizeof FMT_CAT_SCHEMA_KEY - 1, (void *)FMT_CAT_SCHEMA_KEY }, v;
	int rc;

	(void)arg;
	rc = mdb_dbi_open(txn, FMT_CAT_DB_META, MDB_CREATE, &c->meta);
	if (rc == 0)
		rc = mdb_dbi_open(txn, FMT_CAT_DB_IMAGES, MDB_CREATE, &c->images);
	if (rc == 0)
		rc = mdb_dbi_open(txn, FMT_CAT_DB_NAMES, MDB_CREATE, &c->names);
	if (rc == 0)
		rc = mdb_dbi_open(txn, FMT_CAT_DB_USED, MDB_CREATE, &c->used);
	if (rc == 0)
		rc = mdb_dbi_open(txn, CAT_DB_PATHS, MDB_CREATE, &c->paths);
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
	MDB_val k = { sizeof FMT_CAT_SCHEMA_KEY - 1, (void *)FMT_CAT_SCHEMA_KEY }, v;
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
		c->damaged = cat_lmdb_damage(rc);
		cat_msg(errbuf, errbuf_sz, envdir, "not a symdb catalog", rc);
		return rc > 0 ? -rc : SYMDB_E_CATALOG;
	}
	schema = v.mv_size == 4 ? fmt_be32(v.mv_data) : 0;
	/* Last: a catalog no writer opened since `used` was added lacks it, and
	 * a failed mdb_dbi_open leaves the transaction usable. */
	c->has_used = mdb_dbi_open(txn, FMT_CAT_DB_USED, 0, &c->used) == 0;
	c->has_paths = mdb_dbi_open(txn, CAT_DB_PATHS, 0, &c->paths) == 0;
	/* Committing a read txn keeps the dbi handles open for the env's life. */
	rc = cat_txn_commit(c, txn);
	if (rc == 0 && schema != FMT_CAT_SCHEMA_VERSION) {
		return fmt_err(errbuf, errbuf_sz, SYMDB_E_CATALOG, "%s: catalog schema %u, expected %u",
		               envdir, (unsigned)schema, FMT_CAT_SCHEMA_VERSION);
	}
	return cat_err(rc);
}

/* DB/catalog and its files as they must be before LMDB opens them
 * (catalog_files.c), and writable when writing. */
static int cat_check_dir(rd_catalog *c, const char *envdir, struct stat *data, char *errbuf,
                         size_t errbuf_sz)
{
	int rc = cat_files_check(c, envdir, data, errbuf, errbuf_sz);

	if (rc == 0 && (c->flags & RD_CAT_WRITE) && access(envdir, W_OK) < 0) {
		int e = errno;

		cat_msg(errbuf, errbuf_sz, envdir, "catalog is not writable", e);
		return -e;
	}
	return rc;
}

/* Whether the database record rec (a copy of a meta's) is the one the
 * transaction sees for dbi: depth, page counts, entries (mdb_stat). */
static int cat_rec_is(MDB_txn *txn, MDB_dbi dbi, const uint8_t *rec)
{
	MDB_stat st;

	return mdb_stat(txn, dbi, &st) == 0 && st.ms_depth == fmt_lmdb_u16(rec + 6) &&
	       st.ms_branch_pages == fmt_lmdb_word(rec + 8) &&
	       st.ms_leaf_pages == fmt_lmdb_word(rec + 8 + FMT_LMDB_W) &&
	       st.ms_overflow_pages == fmt_lmdb_word(rec + 8 + 2 * FMT_LMDB_W) &&
	       st.ms_entries == fmt_lmdb_word(rec + 8 + 3 * FMT_LMDB_W);
}

/* One check of the snapshot txn pins, through a read-only mapping of
 * data.mdb of len bytes.  The meta page of that transaction is copied
 * first: a writer rewrites the slot two commits later, and its pages are
 * the pinned snapshot's only as long as the copy's records are the
 * transaction's own (its txnid read again after the copy, its records
 * equal to what mdb_stat sees).  1: no such meta now (retry), 0: sound,
 * -1: damaged (rep set), -ENOMEM. */
static int cat_tree_once(MDB_txn *txn, const uint8_t *map, size_t len,
                         fmt_lmdb_tree_report *rep)
{
	uint64_t txnid = mdb_txn_id(txn);
	fmt_lmdb_meta m;
	const uint8_t *live;
	uint8_t meta[FMT_LMDB_META_END];

	if (fmt_lmdb_tree_meta(map, len, txnid, &m, &live) != 0)
		return 1;
	memcpy(meta, live, sizeof meta);
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy before the second look */
	if (fmt_lmdb_word(meta + FMT_LMDB_OFF_TXNID) != txnid ||
	    fmt_lmdb_word(live + FMT_LMDB_OFF_TXNID) != txnid ||
	    !cat_rec_is(txn, 0, meta + FMT_LMDB_OFF_DBS) ||
	    !cat_rec_is(txn, 1, meta + FMT_LMDB_OFF_DBS + FMT_LMDB_DB_SIZE))
		return 1;
	uint64_t last = fmt_lmdb_word(meta + FMT_LMDB_OFF_LAST_PG);
	if (last != m.last_pg) /* rewritten between the two reads */
		return 1;
	uint8_t *seen = calloc((size_t)(last / 8 + 1), 1);
	if (!seen)
		return -ENOMEM;
	int rc = fmt_lmdb_check_tree(map, m.psize, last, meta, seen, rep);
	free(seen);
	return rc;
}

/* The snapshot a read transaction pins, every page of it checked
 * (format_lmdb_tree.c) through a mapping of our own: a page LMDB would
 * fault or loop on is damage (exit 3, what reindex repairs), found before
 * LMDB reads it.  Pinned, the snapshot's pages are not reused by a
 * concurrent writer while they are read (an MDB_NOLOCK reader pins
 * nothing: a writer of another process, still able to reuse freed pages
 * on a full disk, may change them under it).  A verdict of damage is
 * believed when a second snapshot gets it too.  0, or SYMDB_E_CATALOG with
 * c->damaged set. */
int cat_tree_check(rd_catalog *c, const char *envdir, char *errbuf, size_t errbuf_sz)
{
	mdb_filehandle_t fd;
	fmt_lmdb_tree_report rep = { NULL, 0 };
	int fails = 0;

	if (mdb_env_get_fd(c->e->env, &fd) != 0)
		return 0; /* LMDB's own calls report it */
	for (int tries = 0; tries < 8 && fails < 2; tries++) {
		struct stat st;
		MDB_txn *txn;
		/* Not a catalog_txn.c transaction: this runs before the handle
		 * is complete; `resize` still keeps a map resize out. */
		pthread_rwlock_rdlock(&c->e->resize);
		if (mdb_txn_begin(c->e->env, NULL, MDB_RDONLY, &txn) != 0) {
			pthread_rwlock_unlock(&c->e->resize);
			return 0;
		}
		uint8_t *map = MAP_FAILED;
		size_t len = 0;
		if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= FMT_LMDB_META_END) {
			len = (size_t)st.st_size;
			map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		}
		int rc = map == MAP_FAILED ? 0 : cat_tree_once(txn, map, len, &rep);
		if (map != MAP_FAILED)
			munmap(map, len);
		mdb_txn_abort(txn);
		pthread_rwlock_unlock(&c->e->resize);
		if (map == MAP_FAILED)
			return 0;
		if (rc == -ENOMEM)
			return cat_err(ENOMEM);
		if (rc == 0)
			return 0;
		fails += rc < 0;
	}
	if (fails < 2)
		return 0; /* no snapshot could be pinned and read: LMDB's reads say */
	c->damaged = 1;
	return fmt_err(errbuf, errbuf_sz, SYMDB_E_CATALOG,
	               "%s/" CAT_DATA_FILE ": page %llu: %s (run 'symdb reindex')", envdir,
	               (unsigned long long)rep.page, rep.why);
}

int cat_open_env(rd_catalog *c, const char *envdir, char *errbuf, size_t errbuf_sz)
{
	int rc = cat_env_create(c->e);
	int nolock = 0;

	if (rc == 0 && (rc = cat_lock_reserve(envdir, errbuf, errbuf_sz)) < 0) {
		if (c->flags & RD_CAT_WRITE)
			return rc;
		nolock = 1;
		rc = 0;
		if (errbuf && errbuf_sz)
			errbuf[0] = '\0'; /* opened all the same */
	}
	if (rc == 0)
		rc = cat_env_open(c, envdir, nolock);
	if (rc) {
		c->damaged = cat_lmdb_damage(rc);
		cat_msg(errbuf, errbuf_sz, envdir, "cannot open catalog", rc);
		return rc > 0 ? -rc : SYMDB_E_CATALOG;
	}
	/* CAT_MAX_KEY is what puts check against (catalog_entries.c). */
	if (mdb_env_get_maxkeysize(c->e->env) < (int)CAT_MAX_KEY)
		return fmt_err(errbuf, errbuf_sz, SYMDB_E_CATALOG,
		               "%s: this LMDB's key limit (%d bytes) is below %u", envdir,
		               mdb_env_get_maxkeysize(c->e->env), CAT_MAX_KEY);
	/* Clear reader slots left by crashed processes, so they pin no pages
	 * (a no-op under the MDB_NOLOCK fallback). */
	mdb_reader_check(c->e->env, NULL);
	return cat_tree_check(c, envdir, errbuf, errbuf_sz);
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
	return fmt_err(errbuf, errbuf_sz, SYMDB_E_NETFS,
	               "%s: database is on a network filesystem (f_type 0x%lx); LMDB needs a local one",
	               dir, (unsigned long)sf.f_type & 0xFFFFFFFFUL);
}

/* Everything from the file checks to the schema, on an existing catalog:
 * the environment taken or opened under the list's lock, then the named
 * databases opened under the environment's `dbi` mutex (mdb_dbi_open runs
 * in one transaction of an environment at a time; a writer's waits for
 * LMDB's writer lock, which must not stall every other open). */
static int cat_open_checked(rd_catalog *c, const char *envdir, char *errbuf, size_t errbuf_sz)
{
	struct stat data;
	int rc = cat_check_dir(c, envdir, &data, errbuf, errbuf_sz);

	if (rc)
		return rc;
	cat_envs_lock();
	rc = cat_env_attach(c, envdir, &data, errbuf, errbuf_sz);
	cat_envs_unlock();
	if (rc)
		return rc;
	pthread_mutex_lock(&c->e->dbi);
	rc = cat_init(c, envdir, errbuf, errbuf_sz);
	pthread_mutex_unlock(&c->e->dbi);
	if (rc)
		cat_env_detach(c);
	return rc;
}

int rd_catalog_open(const char *dir, unsigned flags, rd_catalog **out, char *errbuf,
                    size_t errbuf_sz)
{
	char envdir[4096];
	rd_catalog *c;
	size_t len;
	int rc;

	*out = NULL;
	if (!dir || !*dir || (flags & ~(RD_CAT_WRITE | RD_CAT_CREATE | RD_CAT_RECOVER)))
		return SYMDB_E_INVAL;
	if (flags & (RD_CAT_CREATE | RD_CAT_RECOVER))
		flags |= RD_CAT_WRITE;
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len + sizeof "/" FMT_LAYOUT_CATALOG > sizeof envdir)
		return -ENAMETOOLONG;
	c = calloc(1, sizeof *c + len + 1);
	if (!c)
		return -ENOMEM;
	memcpy(c->dir, dir, len);
	c->flags = flags;
	pthread_rwlock_init(&c->swap, NULL);
	pthread_mutex_init(&c->refresh, NULL);
	fmt_layout_dir(envdir, sizeof envdir, c->dir, FMT_LAYOUT_CATALOG); /* fits: checked */

	rc = cat_check_fs(c->dir, errbuf, errbuf_sz);
	if (rc == 0 && (flags & RD_CAT_CREATE) && !(flags & RD_CAT_RECOVER))
		rc = cat_refuse_orphaning(c->dir, envdir, errbuf, errbuf_sz);
	if (rc == 0 && (flags & RD_CAT_CREATE))
		rc = cat_create_dirs(c->dir, errbuf, errbuf_sz);
	if (rc == 0 && (flags & RD_CAT_CREATE))
		rc = cat_create_catalog(c, envdir, cat_init_write, errbuf, errbuf_sz);
	if (rc == 0)
		rc = cat_open_checked(c, envdir, errbuf, errbuf_sz);
	if (rc && c->damaged && (flags & RD_CAT_RECOVER)) {
		char why[1024];

		fmt_err(why, sizeof why, rc, "%s", errbuf && errbuf_sz ? errbuf : "damaged");
		rc = cat_recover(c, envdir, why, cat_init_write, errbuf, errbuf_sz);
		if (rc == 0)
			rc = cat_open_checked(c, envdir, errbuf, errbuf_sz);
	}
	if (rc) {
		rd_catalog_close(c);
		return rc;
	}
	cat_refresh_arm(c);
	*out = c;
	return 0;
}

void rd_catalog_close(rd_catalog *c)
{
	if (!c)
		return;
	cat_env_detach(c);
	rd_catalog_close(c->next);
	pthread_rwlock_destroy(&c->swap);
	pthread_mutex_destroy(&c->refresh);
	free(c->recovered);
	free(c);
}

const char *rd_catalog_recovered(const rd_catalog *c)
{
	return c->recovered;
}

const char *rd_catalog_dir(const rd_catalog *c)
{
	return c->dir;
}
