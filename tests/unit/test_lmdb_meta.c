/* SPDX-License-Identifier: MIT */
/*
 * test_lmdb_meta.c: format_lmdb.c's reading of LMDB's meta pages against
 * LMDB itself.  An environment grows over 300 write transactions (some
 * values big enough for overflow pages); after each, the size
 * fmt_lmdb_check_fd() says the file needs must be (me_last_pgno + 1) *
 * ms_psize as mdb_env_info()/mdb_env_stat() report them, the file must
 * pass, and a copy cut one page short (and to every 4 KiB below, for the
 * last state) must be called truncated.  Also: a 0-byte file, a file of
 * zeros (no meta page), a meta page of another data version.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "format_lmdb.h"

static int check_path(const char *path, fmt_lmdb_check *k)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fmt_lmdb_check_fd(fd, k);
	close(fd);
	return rc;
}

/* A copy of src's first size bytes. */
static int check_cut(const char *src, const char *dst, off_t size, fmt_lmdb_check *k)
{
	static char buf[1 << 16];
	int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	off_t done = 0;
	ssize_t n = 1;

	while (in >= 0 && out >= 0 && done < size && n > 0) {
		size_t want = (size_t)(size - done) < sizeof buf ? (size_t)(size - done) : sizeof buf;

		n = read(in, buf, want);
		if (n > 0 && write(out, buf, (size_t)n) != n)
			n = -1;
		done += n > 0 ? n : 0;
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (in < 0 || out < 0 || done != size)
		return -1;
	return check_path(dst, k);
}

static void put_txn(MDB_env *env, MDB_dbi dbi, unsigned i)
{
	static char big[20000];
	char key[32];
	MDB_val k, v;
	MDB_txn *txn;

	snprintf(key, sizeof key, "key%08u", i * 2654435761u);
	k.mv_data = key;
	k.mv_size = strlen(key);
	v.mv_data = big;
	v.mv_size = i % 17 == 0 ? sizeof big : 200 + i % 300; /* some overflow pages */
	memset(big, (int)i, v.mv_size);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_put(txn, dbi, &k, &v, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], data[4200], cut[4200];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_envinfo info;
	MDB_stat st;
	fmt_lmdb_check k;
	struct stat sb;
	unsigned i;
	int mismatches = 0;

	snprintf(dir, sizeof dir, "%s/test_lmdb_meta.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	snprintf(data, sizeof data, "%s/data.mdb", dir);
	snprintf(cut, sizeof cut, "%s/cut.mdb", dir);
	CHECK(mdb_env_create(&env) == 0);
	CHECK(mdb_env_set_mapsize(env, 64u << 20) == 0);
	CHECK(mdb_env_open(env, dir, 0, 0644) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, NULL, 0, &dbi) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	for (i = 1; i <= 300; i++) {
		put_txn(env, dbi, i);
		CHECK(mdb_env_info(env, &info) == 0);
		CHECK(mdb_env_stat(env, &st) == 0);
		CHECK(check_path(data, &k) == 0);
		if (k.need != ((uint64_t)info.me_last_pgno + 1) * st.ms_psize || k.psize != st.ms_psize)
			mismatches++;
		if (i % 50 == 0)
			CHECK(check_cut(data, cut, (off_t)k.need - st.ms_psize, &k) == 1);
	}
	CHECK(mismatches == 0);
	CHECK(stat(data, &sb) == 0);
	CHECK(check_path(data, &k) == 0);
	printf("%u transactions: need %llu bytes = LMDB's (last_pgno + 1) * psize each time; "
	       "file %lld bytes\n", i - 1, (unsigned long long)k.need, (long long)sb.st_size);
	for (off_t size = 0; size < (off_t)k.need; size += 4096) {
		fmt_lmdb_check c;

		CHECK(check_cut(data, cut, size, &c) == 1);
		CHECK(c.size == (uint64_t)size);
	}
	mdb_env_close(env);

	/* garbage: not a meta page; another data version */
	CHECK(check_cut(data, cut, (off_t)k.need, &k) == 0);
	{
		int fd = open(cut, O_RDWR);
		uint32_t v = 2;

		CHECK(fd >= 0 && pwrite(fd, &v, 4, FMT_LMDB_OFF_VERSION) == 4);
		close(fd);
		CHECK(check_path(cut, &k) == 2 && strstr(k.why, "version"));
	}
	{
		char g[4200];
		uint8_t z[8192] = { 0 };
		int fd;

		snprintf(g, sizeof g, "%s/zero.mdb", dir);
		fd = open(g, O_RDWR | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0 && write(fd, z, sizeof z) == (ssize_t)sizeof z);
		close(fd);
		CHECK(check_path(g, &k) == 2);
		CHECK(truncate(g, 0) == 0);
		CHECK(check_path(g, &k) == 1 && k.size == 0 && k.need == 0);
		unlink(g);
	}
	unlink(cut);
	unlink(data);
	snprintf(cut, sizeof cut, "%s/lock.mdb", dir);
	unlink(cut);
	rmdir(dir);
	return check_exit();
}
