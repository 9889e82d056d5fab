/* SPDX-License-Identifier: MIT */
/*
 * catalog_check.c - the consistency of the catalog itself (SPEC §12.6, verify).
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
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

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
	uint64_t when;
	int rc, op = MDB_FIRST;

	if (!c->has_used)
		return 0;
	rc = mdb_cursor_open(txn, c->used, &cur);
	while (rc == 0 && (rc = mdb_cursor_get(cur, &key, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		if (fmt_cat_used_decode(v.mv_data, v.mv_size, &when) != 0)
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
