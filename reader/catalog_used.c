/* SPDX-License-Identifier: MIT */
/*
 * catalog_used.c - last-query times, the `used` database (SPEC §12.6).
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
	if (rc == 0 && fmt_cat_used_decode(v.mv_data, v.mv_size, out) != 0)
		rc = SYMDB_E_CATALOG;
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
	uint8_t buf[FMT_CAT_USED_SIZE];
	uint64_t stored;
	int rc;

	rc = mdb_get(txn, c->images, &k, &v);
	if (rc == MDB_NOTFOUND)
		return SYMDB_E_NOT_INDEXED;
	if (rc == 0)
		rc = mdb_get(txn, c->used, &k, &v);
	if (rc == 0 && fmt_cat_used_decode(v.mv_data, v.mv_size, &stored) == 0 &&
	    stored >= a->when)
		return 0;
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	fmt_cat_used_encode(a->when, buf);
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
