/* SPDX-License-Identifier: MIT */
/*
 * catalog_entries.c - the `images` and `names` records (SPEC §12.2, §12.3): get,
 * put, delete, replace all, list.
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
