/* SPDX-License-Identifier: MIT */
/*
 * test_catalog.c - unit tests of the catalog: the value codec of
 * format_catalog.c (SPEC §12.3) and the LMDB module reader/catalog_*.c (SPEC §12):
 * create/open modes, put/get/del/list, only_if_absent, the names index, map
 * growth (alone and under concurrent writers), damaged values and schemas.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "format_catalog.h"
#include "rd_catalog.h"
#include "symdb_endian.h"
#include "symdb_format.h"

static void make_entry(rd_cat_entry *e, unsigned id, const char *file, const char *name)
{
	memset(e, 0, sizeof *e);
	e->uuid_len = 20;
	for (unsigned i = 0; i < 20; i++)
		e->uuid[i] = (uint8_t)(id * 7 + i);
	e->uuid[0] = (uint8_t)(id >> 8);
	e->uuid[1] = (uint8_t)id;
	e->uuid_kind = FMT_UUID_GNU_BUILD_ID;
	e->object_format = FMT_OBJ_ELF;
	e->flags = FMT_FLAG_HAS_DWARF;
	e->machine = 62;
	e->file_size = 1000 + id;
	e->header_sum = 0x1122334455667788ull ^ id;
	e->built_at = 1700000000;
	e->file = file;
	e->image_name = name;
}

static void test_codec(void)
{
	fmt_cat_value v = { 0 }, d;
	uint8_t buf[256];
	const char *why = NULL;
	size_t n;

	v.uuid_kind = 1;
	v.object_format = 1;
	v.flags = 3;
	v.machine = 62;
	v.machine_sub = 9;
	v.file_size = 1ull << 40;
	v.header_sum = 0xdeadbeefcafef00dull;
	v.built_at = 12345;
	v.file = "images/ab/abcd.symdb";
	v.file_len = strlen(v.file);
	v.image_name = "libc.so.6";
	v.name_len = strlen(v.image_name);
	n = fmt_cat_value_encode(&v, buf, sizeof buf);
	CHECK(n == 40 + 2 + 20 + 2 + 9);
	CHECK(buf[0] == 1 && fmt_be64(buf + FMT_CV_FILE_SIZE) == 1ull << 40);
	CHECK(fmt_cat_value_decode(buf, n, &d, &why) == 0);
	CHECK(d.file_len == v.file_len && memcmp(d.file, v.file, d.file_len) == 0);
	CHECK(d.name_len == 9 && memcmp(d.image_name, "libc.so.6", 9) == 0);
	CHECK(d.header_sum == v.header_sum && d.machine_sub == 9 && d.built_at == 12345);
	CHECK(fmt_cat_value_encode(&v, buf, n - 1) == 0);
	/* every truncation and one extra byte are rejected */
	for (size_t i = 0; i < n; i++)
		CHECK(fmt_cat_value_decode(buf, i, &d, &why) < 0);
	CHECK(fmt_cat_value_decode(buf, n + 1, &d, &why) < 0);
	buf[0] = 2;
	CHECK(fmt_cat_value_decode(buf, n, &d, &why) < 0);
	buf[0] = 1;
	buf[FMT_CV_RESERVED] = 1;
	CHECK(fmt_cat_value_decode(buf, n, &d, &why) < 0);
	buf[FMT_CV_RESERVED] = 0;
	/* File must stay inside the database directory */
	static const char *const bad[] = { "/etc/passwd", "..", "../x", "a/../b", "a/..", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		v.file = bad[i];
		v.file_len = strlen(bad[i]);
		n = fmt_cat_value_encode(&v, buf, sizeof buf);
		CHECK(n > 0 && fmt_cat_value_decode(buf, n, &d, &why) < 0);
	}
	v.file = "images/..a/b..";
	v.file_len = strlen(v.file);
	n = fmt_cat_value_encode(&v, buf, sizeof buf);
	CHECK(fmt_cat_value_decode(buf, n, &d, &why) == 0);
	CHECK(fmt_cat_name_key("ab", 2, (const uint8_t *)"\1\2", 2, buf, sizeof buf) == 5);
	CHECK(memcmp(buf, "ab\0\1\2", 5) == 0);
}

static int count_cb(const rd_cat_entry *e, void *arg)
{
	uint8_t *prev = arg; /* 33 bytes: len + uuid of the previous entry */

	CHECK(prev[0] == 0 || memcmp(prev + 1, e->uuid, 32) < 0);
	prev[0]++;
	memcpy(prev + 1, e->uuid, 32);
	CHECK(e->file && e->image_name && strlen(e->image_name) > 0);
	return 0;
}

/* Number of keys in named database `name`, read straight through LMDB. */
static size_t raw_count(const char *dir, const char *name)
{
	char path[4096];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_stat st = { 0 };

	snprintf(path, sizeof path, "%s/catalog", dir);
	if (mdb_env_create(&env) || mdb_env_set_maxdbs(env, 4) ||
	    mdb_env_open(env, path, MDB_RDONLY, 0))
		return (size_t)-1;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0) {
		if (mdb_dbi_open(txn, name, 0, &dbi) == 0)
			mdb_stat(txn, dbi, &st);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	return st.ms_entries;
}

/* Store raw bytes under key in named database `name`. */
static int raw_put(const char *dir, const char *name, const void *k, size_t kn,
                   const void *v, size_t vn)
{
	char path[4096];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val key = { kn, (void *)k }, val = { vn, (void *)v };
	int rc;

	snprintf(path, sizeof path, "%s/catalog", dir);
	rc = mdb_env_create(&env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(env, 4);
	if (rc == 0)
		rc = mdb_env_open(env, path, 0, 0644);
	if (rc == 0)
		rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc == 0) {
		rc = mdb_dbi_open(txn, name, 0, &dbi);
		if (rc == 0)
			rc = mdb_put(txn, dbi, &key, &val, 0);
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	return rc;
}

static void test_basic(const char *dir)
{
	rd_catalog *c = NULL, *ro = NULL;
	rd_cat_entry e, g;
	char buf[256], err[512] = "", path[8192];
	struct stat st;
	uint8_t prev[33] = { 0 };

	CHECK(rd_catalog_open(dir, 0, &c, err, sizeof err) == -ENOENT);
	CHECK(strstr(err, dir) != NULL);
	CHECK(rd_catalog_open(dir, RD_CAT_WRITE, &c, err, sizeof err) == -ENOENT);
	CHECK_RC(rd_catalog_open(dir, RD_CAT_CREATE, &c, err, sizeof err));
	if (!c)
		return;
	snprintf(path, sizeof path, "%s/images", dir);
	CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
	snprintf(path, sizeof path, "%s/tmp", dir);
	CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK(strcmp(rd_catalog_dir(c), dir) == 0);

	make_entry(&e, 1, "images/01/x.symdb", "a.out");
	CHECK(rd_catalog_get(c, e.uuid, e.uuid_len, &g, buf, sizeof buf) == SYMDB_E_NOT_INDEXED);
	CHECK_RC(rd_catalog_put(c, &e, 1));
	CHECK(rd_catalog_put(c, &e, 1) == SYMDB_E_EXISTS);
	CHECK_RC(rd_catalog_get(c, e.uuid, e.uuid_len, &g, buf, sizeof buf));
	CHECK(g.uuid_len == 20 && memcmp(g.uuid, e.uuid, 20) == 0);
	CHECK(g.file_size == e.file_size && g.header_sum == e.header_sum);
	CHECK(g.flags == e.flags && g.machine == 62 && g.uuid_kind == 1);
	CHECK(strcmp(g.file, e.file) == 0 && strcmp(g.image_name, "a.out") == 0);
	CHECK(rd_catalog_get(c, e.uuid, e.uuid_len, &g, buf, 10) == -ENAMETOOLONG);
	CHECK(rd_catalog_get(c, e.uuid, 19, &g, buf, sizeof buf) == SYMDB_E_NOT_INDEXED);

	/* replacing under a new image name moves the names key */
	make_entry(&e, 1, "images/01/y.symdb", "b.out");
	CHECK_RC(rd_catalog_put(c, &e, 0));
	CHECK(raw_count(dir, "names") == 1 && raw_count(dir, "images") == 1);
	CHECK_RC(rd_catalog_get(c, e.uuid, e.uuid_len, &g, buf, sizeof buf));
	CHECK(strcmp(g.image_name, "b.out") == 0 && strcmp(g.file, "images/01/y.symdb") == 0);

	make_entry(&e, 3, "images/03/z.symdb", "c.out");
	CHECK_RC(rd_catalog_put(c, &e, 1));
	make_entry(&e, 2, "../escape", "c.out");
	CHECK(rd_catalog_put(c, &e, 1) == SYMDB_E_INVAL);
	make_entry(&e, 2, "images/02/z.symdb", "c.out");
	CHECK_RC(rd_catalog_put(c, &e, 1));
	CHECK(rd_catalog_list(c, count_cb, prev) == 0 && prev[0] == 3);

	/* a second, read-only handle sees the same entries and cannot write */
	CHECK_RC(rd_catalog_open(dir, 0, &ro, err, sizeof err));
	if (ro) {
		CHECK_RC(rd_catalog_get(ro, e.uuid, e.uuid_len, &g, buf, sizeof buf));
		CHECK(rd_catalog_put(ro, &e, 0) == SYMDB_E_READONLY);
		CHECK(rd_catalog_del(ro, e.uuid, e.uuid_len) == SYMDB_E_READONLY);
		rd_catalog_close(ro);
	}

	CHECK_RC(rd_catalog_del(c, e.uuid, e.uuid_len));
	CHECK(rd_catalog_del(c, e.uuid, e.uuid_len) == SYMDB_E_NOT_INDEXED);
	CHECK(rd_catalog_get(c, e.uuid, e.uuid_len, &g, buf, sizeof buf) == SYMDB_E_NOT_INDEXED);
	CHECK(raw_count(dir, "names") == 2 && raw_count(dir, "images") == 2);
	rd_catalog_close(c);

	/* reopen for writing keeps everything */
	CHECK_RC(rd_catalog_open(dir, RD_CAT_WRITE, &c, err, sizeof err));
	memset(prev, 0, sizeof prev);
	if (c)
		CHECK(rd_catalog_list(c, count_cb, prev) == 0 && prev[0] == 2);
	rd_catalog_close(c);
}

static void test_damage(const char *dir)
{
	rd_catalog *c = NULL;
	rd_cat_entry e, g;
	char buf[256], err[512] = "";
	uint8_t junk[8] = { 1, 2, 3 }, ver[4];

	make_entry(&e, 1, "", "");
	CHECK(raw_put(dir, "images", e.uuid, e.uuid_len, junk, sizeof junk) == 0);
	CHECK_RC(rd_catalog_open(dir, 0, &c, err, sizeof err));
	if (c) {
		CHECK(rd_catalog_get(c, e.uuid, e.uuid_len, &g, buf, sizeof buf) ==
		      SYMDB_E_CATALOG);
		rd_catalog_close(c);
	}
	fmt_put32(ver, 2);
	CHECK(raw_put(dir, "meta", "schema", 6, ver, 4) == 0);
	c = NULL;
	CHECK(rd_catalog_open(dir, 0, &c, err, sizeof err) == SYMDB_E_CATALOG);
	CHECK(strstr(err, "schema 2") != NULL);
	CHECK(rd_catalog_open(dir, RD_CAT_WRITE, &c, err, sizeof err) == SYMDB_E_CATALOG);
}

/* Values of ~40 KiB overflow a 1 MiB map after a couple of dozen puts. */
#define BIG_FILE 40000

static char *big_path(unsigned id)
{
	char *p = malloc(BIG_FILE + 1);

	if (!p)
		return NULL;
	memset(p, 'a' + id % 26, BIG_FILE);
	memcpy(p, "images/", 7);
	p[BIG_FILE] = 0;
	return p;
}

struct writer {
	rd_catalog *c;
	unsigned first, n;
	int failures;
};

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	rd_cat_entry e, g;
	char *buf = malloc(2 * BIG_FILE);

	for (unsigned i = w->first; buf && i < w->first + w->n; i++) {
		char *p = big_path(i);

		make_entry(&e, i, p, "big");
		if (!p || rd_catalog_put(w->c, &e, 1) != 0)
			w->failures++;
		else if (rd_catalog_get(w->c, e.uuid, e.uuid_len, &g, buf, 2 * BIG_FILE) != 0 ||
		         strcmp(g.file, p) != 0)
			w->failures++;
		free(p);
	}
	free(buf);
	return NULL;
}

static void test_growth(const char *dir)
{
	rd_catalog *c = NULL;
	char err[512] = "";
	pthread_t th[4];
	struct writer w[4];
	uint8_t prev[33] = { 0 };

	CHECK_RC(rd_catalog_open(dir, RD_CAT_CREATE, &c, err, sizeof err));
	if (!c)
		return;
	for (unsigned t = 0; t < 4; t++) {
		w[t] = (struct writer){ c, 100 + 30 * t, 30, 0 };
		CHECK(pthread_create(&th[t], NULL, writer_thread, &w[t]) == 0);
	}
	for (unsigned t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		CHECK(w[t].failures == 0);
	}
	CHECK(rd_catalog_list(c, count_cb, prev) == 0 && prev[0] == 120);
	rd_catalog_close(c);
	CHECK(raw_count(dir, "images") == 120 && raw_count(dir, "names") == 120);
}

static void permission_checks(const char *dir)
{
	rd_catalog *c = NULL;
	char err[512] = "", path[8192];

	CHECK_RC(rd_catalog_open(dir, RD_CAT_CREATE, &c, err, sizeof err));
	rd_catalog_close(c);
	snprintf(path, sizeof path, "%s/catalog", dir);
	chmod(path, 0555);
	snprintf(path, sizeof path, "%s/catalog/lock.mdb", dir);
	chmod(path, 0444);
	snprintf(path, sizeof path, "%s/catalog/data.mdb", dir);
	chmod(path, 0444);
	CHECK(rd_catalog_open(dir, RD_CAT_WRITE, &c, err, sizeof err) == -EACCES);
	CHECK(strstr(err, dir) != NULL);
	c = NULL;
	CHECK_RC(rd_catalog_open(dir, 0, &c, err, sizeof err)); /* no write access needed */
	rd_catalog_close(c);
	snprintf(path, sizeof path, "%s/catalog", dir);
	chmod(path, 0755);
}

/* Root ignores file modes, so as root the checks run in a child that drops
 * to nobody (65534) in a directory it owns; a test that cannot drop is
 * skipped, never passed. */
static void test_permissions(const char *dir)
{
	char parent[4096];
	char *slash;
	pid_t pid;
	int st = 0;

	if (geteuid() != 0) {
		permission_checks(dir);
		return;
	}
	snprintf(parent, sizeof parent, "%s", dir);
	slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	if (!slash || chown(parent, 65534, 65534) != 0 || (pid = fork()) < 0) {
		check_skip("permission checks: running as root and cannot hand a directory to nobody");
		return;
	}
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(77);
		permission_checks(dir);
		_exit(check_failures ? 1 : 0);
	}
	if (waitpid(pid, &st, 0) != pid)
		st = -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		check_skip("permission checks: running as root and cannot become nobody");
	else
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The network-filesystem refusal (SPEC §12.1), with injected statfs f_types:
 * no NFS mount is available to a test. */
static void test_netfs(const char *dir)
{
	char err[512] = "";
	rd_catalog *c = NULL;

	CHECK(rd_fs_is_network(0x6969L));              /* NFS */
	CHECK(rd_fs_is_network(0x517BL));              /* SMB */
	CHECK(rd_fs_is_network((long)0xFF534D42UL));   /* CIFS */
	CHECK(rd_fs_is_network((long)0xFE534D42UL));   /* SMB2 */
	CHECK(rd_fs_is_network((long)(int)0xFF534D42U)); /* sign-extended f_type */
	CHECK(!rd_fs_is_network(0xEF53L));             /* ext4 */
	CHECK(!rd_fs_is_network(0x01021994L));         /* tmpfs */
	CHECK(!rd_fs_is_network(0x9123683EL));         /* btrfs */
	CHECK(!rd_fs_is_network(0x65735546L));         /* fuse: not refused */
	CHECK(!rd_fs_is_network(0));
	/* A local directory, existing or not yet created, is accepted. */
	CHECK(rd_catalog_open(dir, RD_CAT_CREATE, &c, err, sizeof err) == 0);
	rd_catalog_close(c);
	CHECK(strcmp(symdb_strerror(SYMDB_E_NETFS),
	             "SYMDB_E_NETFS: database is on a network filesystem") == 0);
}

/* Whether another process finds LMDB's POSIX locks of this one on
 * dir/catalog/lock.mdb: the shared lock on byte 0 ("in use") and the one
 * on byte PID ("my reader slots are live").  A child asks (F_GETLK reports
 * only other processes' locks, and of several on one byte any one).  1
 * both held, 0 neither, -1 byte 0 only, 2 byte PID only. */
static int parent_locks(const char *dir)
{
	char path[4096];
	pid_t parent = getpid(), pid;
	int st;

	snprintf(path, sizeof path, "%s/catalog/lock.mdb", dir);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDONLY), held = 0;
		off_t at[2] = { 0, (off_t)parent };

		for (int i = 0; fd >= 0 && i < 2; i++) {
			struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			                    .l_start = at[i], .l_len = 1 };
			if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK &&
			    fl.l_pid == parent)
				held |= 1 << i;
		}
		_exit(fd < 0 ? 9 : held);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) > 3)
		return -2;
	static const int verdict[4] = { 0, -1, 2, 1 };
	return verdict[WEXITSTATUS(st)];
}

/* One LMDB environment per catalog per process (catalog_env.c): a second
 * handle on the same catalog, a builder's, closed while the first is
 * open, must leave the first one's locks in place.  Before, each handle
 * had its own environment, and closing one dropped every lock of the
 * process on lock.mdb: another process could then clear the first
 * handle's reader slots or reset the lock file under it. */
static void test_one_env(const char *dir)
{
	rd_catalog *c = NULL, *r = NULL, *w = NULL;
	rd_cat_entry e, g;
	char buf[256], err[512] = "";

	CHECK_RC(rd_catalog_open(dir, RD_CAT_CREATE, &c, err, sizeof err));
	make_entry(&e, 1, "images/01/one.symdb", "one");
	CHECK_RC(rd_catalog_put(c, &e, 0));
	rd_catalog_close(c);
	CHECK(parent_locks(dir) == 0);

	/* a reader, as a symdb handle or a server holds it, has read */
	CHECK_RC(rd_catalog_open(dir, 0, &r, err, sizeof err));
	if (!r)
		return;
	CHECK_RC(rd_catalog_get(r, e.uuid, e.uuid_len, &g, buf, sizeof buf));
	CHECK(parent_locks(dir) == 1);

	/* a builder of the same process writes and closes */
	CHECK_RC(rd_catalog_open(dir, RD_CAT_WRITE, &w, err, sizeof err));
	make_entry(&e, 2, "images/02/two.symdb", "two");
	if (w)
		CHECK_RC(rd_catalog_put(w, &e, 0));
	rd_catalog_close(w);
	CHECK(parent_locks(dir) == 1);

	/* a second reader, closed, too; the first still reads the new entry */
	CHECK_RC(rd_catalog_open(dir, 0, &c, err, sizeof err));
	rd_catalog_close(c);
	CHECK(parent_locks(dir) == 1);
	CHECK_RC(rd_catalog_get(r, e.uuid, e.uuid_len, &g, buf, sizeof buf));

	/* A child of fork opens its own handle (symdb.h: the LMDB rule): it
	 * must get an environment of its own, whose reader lock (byte PID) it
	 * holds once it has read.  With the parent's (inherited in the list)
	 * it held none.  (Byte 0 is the parent's too: F_GETLK may name
	 * either holder.) */
	pid_t pid = fork();
	if (pid == 0) {
		rd_catalog *own = NULL;
		int ok = rd_catalog_open(dir, 0, &own, err, sizeof err) == 0 &&
		         rd_catalog_get(own, e.uuid, e.uuid_len, &g, buf, sizeof buf) == 0 &&
		         (parent_locks(dir) & 2);
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(parent_locks(dir) == 1);

	/* the last close lets go of them */
	rd_catalog_close(r);
	CHECK(parent_locks(dir) == 0);
}

int main(void)
{
	char tmpl[] = "/tmp/symdb-test-catalog-XXXXXX", sub[4096], cmd[4200];

	if (!mkdtemp(tmpl))
		return 2;
	test_codec();
	snprintf(sub, sizeof sub, "%s/db1/nested", tmpl);
	test_basic(sub);
	test_damage(sub);
	snprintf(sub, sizeof sub, "%s/db2", tmpl);
	test_growth(sub);
	snprintf(sub, sizeof sub, "%s/db3", tmpl);
	test_permissions(sub);
	snprintf(sub, sizeof sub, "%s/db4/not/yet", tmpl);
	test_netfs(sub);
	snprintf(sub, sizeof sub, "%s/db5", tmpl);
	test_one_env(sub);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpl);
	return check_exit();
}
