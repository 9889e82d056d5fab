/* SPDX-License-Identifier: MIT */
/*
 * rel_patch.c - damage an index file in one precise way, for the `symdb
 * verify` tests (tests/reliability/verify.sh).
 *
 *   rel_patch FILE kinds            print the table kinds present, one a line
 *   rel_patch FILE flip KIND        flip one byte in the middle of table KIND
 *                                   (checksums left alone: a checksum error)
 *   rel_patch FILE unsort KIND      swap the first two records of address
 *                                   table KIND, then fix its checksum and the
 *                                   header checksum (only sortedness is wrong);
 *                                   a format-2 block column: Deltas 1 and 2
 *                                   of block 0 swapped in its rows table
 *   rel_patch FILE reseal KIND      flip one byte in table KIND and fix the
 *                                   checksums (BUILD_INFO: a valid, different file)
 *   rel_patch FILE badstr           point SYMBOLS[0].Name past the string
 *                                   pool, checksums fixed (only a bound is wrong)
 *   rel_patch DB catput NAME KEY VAL   raw LMDB put into named database NAME of
 *   rel_patch DB catdel NAME KEY       DB's catalog (KEY, VAL in hex; "" empty),
 *                                   or delete KEY: damage the catalog's own
 *                                   records (SPEC §12.2) behind symdb's back
 *
 * With $REL_PATCH_DB set to the database directory, unsort and badstr also
 * store the new Header_Checksum in the file's catalog entry (SPEC §12.3), so
 * that only the invariant is broken, not the catalog's fingerprint.
 *
 * Knows the layout through format/symdb_format.h only (SPEC §5, §6).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lmdb.h>
#include <xxhash.h>

#include "symdb_endian.h"
#include "symdb_format.h"

struct table {
	uint8_t *dirent;
	uint64_t off, len, count;
	unsigned rsize;
};

static uint8_t *base;
static size_t size;

static int find(uint32_t kind, struct table *t)
{
	uint32_t n = fmt_be32(base + FMT_H_TABLE_COUNT);
	uint64_t dir = fmt_be64(base + FMT_H_DIR_OFFSET);

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *d = base + dir + (uint64_t)i * FMT_DIR_ENTRY_SIZE;
		if (fmt_be32(d + FMT_D_KIND) != kind)
			continue;
		t->dirent = d;
		t->off = fmt_be64(d + FMT_D_OFFSET);
		t->len = fmt_be64(d + FMT_D_LENGTH);
		t->count = fmt_be64(d + FMT_D_COUNT);
		t->rsize = fmt_be16(d + FMT_D_RECORD_SIZE);
		return 0;
	}
	fprintf(stderr, "rel_patch: no table of kind %u\n", (unsigned)kind);
	return -1;
}

/* Table checksum, then the header checksum over [0,120) + directory. */
static void fix_sums(const struct table *t)
{
	uint32_t n = fmt_be32(base + FMT_H_TABLE_COUNT);
	uint64_t dir = fmt_be64(base + FMT_H_DIR_OFFSET);
	XXH3_state_t *st = XXH3_createState();

	fmt_put64(t->dirent + FMT_D_CHECKSUM, XXH3_64bits(base + t->off, (size_t)t->len));
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, base, FMT_H_CHECKSUM);
	XXH3_64bits_update(st, base + dir, (size_t)n * FMT_DIR_ENTRY_SIZE);
	fmt_put64(base + FMT_H_CHECKSUM, XXH3_64bits_digest(st));
	XXH3_freeState(st);
}

/* Rewrite Header_Checksum (value offset 24) of this file's catalog entry. */
static int recatalog(void)
{
	const char *db = getenv("REL_PATCH_DB");
	char env_dir[4096];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { base[FMT_H_UUID_LENGTH], base + FMT_H_UUID }, v;
	uint8_t val[1024];
	int rc;

	if (!db)
		return 0;
	snprintf(env_dir, sizeof env_dir, "%s/catalog", db);
	rc = mdb_env_create(&env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(env, 8);
	if (rc == 0)
		rc = mdb_env_open(env, env_dir, 0, 0644);
	if (rc == 0)
		rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc == 0 && (rc = mdb_dbi_open(txn, "images", 0, &dbi)) == 0 &&
	    (rc = mdb_get(txn, dbi, &k, &v)) == 0 && v.mv_size <= sizeof val) {
		memcpy(val, v.mv_data, v.mv_size);
		memcpy(val + 24, base + FMT_H_CHECKSUM, 8);
		v.mv_data = val;
		rc = mdb_put(txn, dbi, &k, &v, 0);
	}
	if (rc == 0)
		rc = mdb_txn_commit(txn);
	mdb_env_close(env);
	if (rc)
		fprintf(stderr, "rel_patch: %s: %s\n", env_dir, mdb_strerror(rc));
	return rc ? 1 : 0;
}

/* Bit i of the MSB-first bit string at p (SPEC §7.9). */
static unsigned bit_get(const uint8_t *p, uint64_t i)
{
	return p[i / 8] >> (7 - i % 8) & 1;
}

static void bit_put(uint8_t *p, uint64_t i, unsigned v)
{
	uint8_t m = (uint8_t)(1u << (7 - i % 8));
	p[i / 8] = (uint8_t)(v ? p[i / 8] | m : p[i / 8] & ~m);
}

/* Format 2 block column (SPEC §7.9.2): swap Deltas 1 and 2 of block 0 in
 * the rows table (kind + 1), so that the interval starts no longer
 * ascend although every block stays well formed. */
static int unsort_block(uint32_t kind, const struct table *blocks)
{
	struct table rows;
	const uint8_t *b = base + blocks->off;
	unsigned w = b[FMT_BLK_WIDTHS];
	uint64_t n = blocks->count > 1 ? FMT_BLK_ROWS : 0;

	if (find(kind + 1, &rows) < 0)
		return 1;
	if (!n)
		n = rows.count;
	if (n < 3 || w == 0) {
		fprintf(stderr, "rel_patch: table %u: block 0 has %llu rows of %u-bit Deltas\n",
		        (unsigned)kind, (unsigned long long)n, w);
		return 1;
	}
	uint8_t *bits = base + rows.off + fmt_be32(b + FMT_BLK_ROWS_OFFSET);
	for (unsigned j = 0; j < w; j++) {
		unsigned x = bit_get(bits, w + j), y = bit_get(bits, 2 * w + j);
		bit_put(bits, w + j, y);
		bit_put(bits, 2 * w + j, x);
	}
	fix_sums(&rows);
	return recatalog();
}

static int do_unsort(uint32_t kind)
{
	struct table t;
	uint8_t tmp[8];

	if (find(kind, &t) < 0)
		return 1;
	if (kind != FMT_T_SYMBOL_ADDRS && t.rsize == FMT_BLK_SIZE)
		return unsort_block(kind, &t);
	if (t.count < 2 || t.rsize > sizeof tmp) {
		fprintf(stderr, "rel_patch: table %u has %llu records of %u bytes\n",
		        (unsigned)kind, (unsigned long long)t.count, t.rsize);
		return 1;
	}
	memcpy(tmp, base + t.off, t.rsize);
	memcpy(base + t.off, base + t.off + t.rsize, t.rsize);
	memcpy(base + t.off + t.rsize, tmp, t.rsize);
	fix_sums(&t);
	return recatalog();
}

static int do_badstr(void)
{
	struct table syms, strs;

	if (find(FMT_T_SYMBOLS, &syms) < 0 || find(FMT_T_STRINGS, &strs) < 0 || !syms.count)
		return 1;
	fmt_put32(base + syms.off + FMT_SYM_NAME, (uint32_t)strs.len + 100);
	fix_sums(&syms);
	return recatalog();
}

static int unhex(const char *s, uint8_t *out, size_t cap, size_t *n)
{
	size_t len = strlen(s);

	if (len % 2 || len / 2 > cap)
		return -1;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned b;
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (uint8_t)b;
	}
	*n = len / 2;
	return 0;
}

/* catput / catdel: one raw write to the catalog, as a damaged or foreign
 * writer would leave it. */
static int do_catalog(int argc, char **argv)
{
	uint8_t key[512], val[4096];
	size_t klen, vlen = 0;
	char env_dir[4096];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int put = !strcmp(argv[2], "catput"), rc;

	if (argc != (put ? 6 : 5) || unhex(argv[4], key, sizeof key, &klen) < 0 ||
	    (put && unhex(argv[5], val, sizeof val, &vlen) < 0)) {
		fprintf(stderr, "usage: rel_patch DB catput NAME KEYHEX VALHEX | catdel NAME KEYHEX\n");
		return 2;
	}
	MDB_val k = { klen, key }, v = { vlen, val };
	snprintf(env_dir, sizeof env_dir, "%s/catalog", argv[1]);
	rc = mdb_env_create(&env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(env, 8);
	if (rc == 0)
		rc = mdb_env_open(env, env_dir, 0, 0644);
	if (rc == 0)
		rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc == 0 && (rc = mdb_dbi_open(txn, argv[3], 0, &dbi)) == 0)
		rc = put ? mdb_put(txn, dbi, &k, &v, 0) : mdb_del(txn, dbi, &k, NULL);
	if (rc == 0)
		rc = mdb_txn_commit(txn);
	mdb_env_close(env);
	if (rc)
		fprintf(stderr, "rel_patch: %s: %s\n", env_dir, mdb_strerror(rc));
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct stat st;
	struct table t;
	int fd, rc = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: rel_patch FILE kinds|flip KIND|unsort KIND|badstr\n");
		return 2;
	}
	if (!strcmp(argv[2], "catput") || !strcmp(argv[2], "catdel"))
		return do_catalog(argc, argv);
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < FMT_HEADER_SIZE) {
		perror(argv[1]);
		return 1;
	}
	size = (size_t)st.st_size;
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return 1;
	if (!strcmp(argv[2], "kinds")) {
		uint32_t n = fmt_be32(base + FMT_H_TABLE_COUNT);
		uint64_t dir = fmt_be64(base + FMT_H_DIR_OFFSET);
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *d = base + dir + (uint64_t)i * FMT_DIR_ENTRY_SIZE;
			if (fmt_be64(d + FMT_D_LENGTH))
				printf("%u\n", (unsigned)fmt_be32(d + FMT_D_KIND));
		}
		rc = 0;
	} else if (!strcmp(argv[2], "flip") && argc == 4) {
		if (find((uint32_t)atoi(argv[3]), &t) == 0 && t.len) {
			base[t.off + t.len / 2] ^= 0x5a;
			rc = 0;
		}
	} else if (!strcmp(argv[2], "unsort") && argc == 4) {
		rc = do_unsort((uint32_t)atoi(argv[3]));
	} else if (!strcmp(argv[2], "reseal") && argc == 4) {
		if (find((uint32_t)atoi(argv[3]), &t) == 0 && t.len) {
			base[t.off + t.len / 2] ^= 0x5a;
			fix_sums(&t);
			rc = 0;
		}
	} else if (!strcmp(argv[2], "badstr")) {
		rc = do_badstr();
	}
	munmap(base, size);
	close(fd);
	return rc;
}
