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

/* Copy both strings of v into buf as NUL-terminated strings, then the
 * source path p (SPEC §12.2) when there is one and room for it: a caller's
 * buffer sized for the two strings of §12.3 never fails because of it. */
static int cat_strings(const fmt_cat_value *v, const MDB_val *p, rd_cat_entry *e, char *buf,
                       size_t buf_sz)
{
	size_t used = v->file_len + 1 + v->name_len + 1;

	if (used > buf_sz)
		return -ENAMETOOLONG;
	memcpy(buf, v->file, v->file_len);
	buf[v->file_len] = 0;
	memcpy(buf + v->file_len + 1, v->image_name, v->name_len);
	buf[v->file_len + 1 + v->name_len] = 0;
	e->file = buf;
	e->image_name = buf + v->file_len + 1;
	e->source_path = NULL;
	if (p && p->mv_size && p->mv_size < buf_sz - used && !memchr(p->mv_data, 0, p->mv_size)) {
		memcpy(buf + used, p->mv_data, p->mv_size);
		buf[used + p->mv_size] = 0;
		e->source_path = buf + used;
	}
	return 0;
}

/* The `paths` record of key k, or an empty value. */
static MDB_val cat_path_get(rd_catalog *c, MDB_txn *txn, MDB_val *k)
{
	MDB_val p = { 0, NULL };

	if (!c->has_paths || mdb_get(txn, c->paths, k, &p) != 0)
		p.mv_size = 0;
	return p;
}

static int cat_get_once(rd_catalog *c, const uint8_t *uuid, size_t uuid_len, rd_cat_entry *out,
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
	if (rc == 0) {
		MDB_val p = cat_path_get(c, txn, &k);
		rc = cat_strings(&cv, &p, out, buf, buf_sz);
	}
	cat_txn_abort(c, txn);
	return rc;
}

int rd_catalog_get(rd_catalog *c, const uint8_t *uuid, size_t uuid_len, rd_cat_entry *out,
                   char *buf, size_t buf_sz)
{
	if (c)
		rd_catalog_refresh(c, 0); /* replaced under a long-lived handle? */
	return cat_get_once(c, uuid, uuid_len, out, buf, buf_sz);
}

/* Does key k start with the first ndigits hex digits of pfx (ndigits / 2
 * whole bytes, then the high nibble of the next byte when ndigits is odd)? */
static int prefix_match(const MDB_val *k, const uint8_t *pfx, size_t ndigits)
{
	const uint8_t *key = k->mv_data;
	size_t whole = ndigits / 2;

	if (k->mv_size * 2 < ndigits || memcmp(key, pfx, whole) != 0)
		return 0;
	return !(ndigits & 1) || ((key[whole] ^ pfx[whole]) & 0xf0) == 0;
}

/* Keys sort as bytes (LMDB's default order), so every key starting with the
 * prefix lies in one run that MDB_SET_RANGE on the prefix bytes reaches
 * first: a range scan, never the whole catalog.  An exact key sorts first
 * in that run and is then the only match, so a full UUID is never ambiguous
 * with a longer one it happens to begin. */
int rd_catalog_prefix(rd_catalog *c, const uint8_t *pfx, size_t ndigits, rd_cat_entry *out,
                      size_t max)
{
	uint8_t start[FMT_UUID_MAX];
	MDB_val k = { (ndigits + 1) / 2, start }, v;
	fmt_cat_value cv;
	MDB_cursor *cur;
	MDB_txn *txn;
	int rc, n = 0;

	if (!c || !pfx || ndigits == 0 || ndigits > 2 * FMT_UUID_MAX || (max && !out))
		return SYMDB_E_INVAL;
	memcpy(start, pfx, k.mv_size);
	if (ndigits & 1)
		start[ndigits / 2] &= 0xf0;
	rc = cat_scan_begin(c, c->images, &txn, &cur);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	     rc == 0 && prefix_match(&k, start, ndigits) && n < INT32_MAX;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if ((size_t)n < max) {
			/* An undecodable value still names its UUID (rm removes it);
			 * it only lacks the kind. */
			if (cat_decode(&k, &v, &out[n], &cv) != 0) {
				memset(&out[n], 0, sizeof out[n]);
				memcpy(out[n].uuid, k.mv_data, k.mv_size);
				out[n].uuid_len = (uint8_t)k.mv_size;
			}
		}
		n++;
		if (n == 1 && k.mv_size * 2 == ndigits)
			break; /* the exact key */
	}
	cat_scan_end(c, txn, cur);
	if (rc != 0 && rc != MDB_NOTFOUND)
		return cat_err(rc);
	return n;
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
	rc = mdb_put(txn, c->names, &nkv, &empty, 0);
	/* No path (an import, a reindex): a recorded one stays, since it
	 * still names a file with this build-id as far as anyone knows. */
	if (rc == 0 && c->has_paths && a->e->source_path && a->e->source_path[0]) {
		MDB_val p = { strlen(a->e->source_path), (void *)a->e->source_path };
		rc = mdb_put(txn, c->paths, &k, &p, 0);
	}
	return rc;
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
	/* LMDB's key limit bounds the names key: a constant (MDB_MAXKEYSIZE,
	 * 511 in every LMDB 0.9 build), so no environment is read here, outside
	 * the transaction that holds `resize` (catalog_refresh.c swaps it). */
	if (cv.name_len + 1 + e->uuid_len > CAT_MAX_KEY ||
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

/* Drop the `used` (or `paths`) records of UUIDs that `images` no longer has. */
static int cat_prune(rd_catalog *c, MDB_txn *txn, int has, MDB_dbi dbi)
{
	MDB_cursor *cur;
	MDB_val k, v, iv;
	int rc;

	if (!has)
		return 0;
	rc = mdb_cursor_open(txn, dbi, &cur);
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
	if (rc == 0)
		rc = cat_prune(c, txn, c->has_used, c->used);
	return rc ? rc : cat_prune(c, txn, c->has_paths, c->paths);
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
	if (rc == 0 && c->has_paths) {
		rc = mdb_del(txn, c->paths, &k, NULL);
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

/* Listing.  fn never runs inside a transaction: a read transaction holds
 * `resize` shared (catalog_txn.c), and fn may open images, mark them used
 * or write the catalog, any of which may need `resize` exclusively (another
 * process grew the map, or this one must grow it) - it would wait for the
 * listing forever.  So entries are copied out of one short read transaction
 * a batch at a time (raw key and value bytes), the transaction ends, and fn
 * sees the batch; the next batch starts after the last key seen.  Each
 * batch is a consistent snapshot; an entry added or removed during the
 * listing may or may not be listed, every other entry is listed once. */
#define CAT_SCRATCH (2 * (FMT_CV_STR_MAX + 1) + CAT_PATH_MAX + 1)
#define CAT_PATH_MAX 4096 /* a longer `paths` record is not listed */
#define CAT_BATCH_ENTRIES 64
#define CAT_BATCH_BYTES   (256u << 10) /* soft: one entry may exceed it */

struct cat_batch {
	uint8_t *buf;                 /* per entry: u32 key, value and path lengths, bytes */
	size_t len, cap, n;
	uint8_t last[512];            /* the last key copied (LMDB keys are <= 511 bytes) */
	size_t last_len;              /* 0 before the first batch */
	int done;                     /* the cursor reached the end */
};

static int batch_add(struct cat_batch *b, const MDB_val *k, const MDB_val *v,
                     const MDB_val *path)
{
	size_t need = 12 + k->mv_size + v->mv_size + path->mv_size;
	uint32_t kl = (uint32_t)k->mv_size, vl = (uint32_t)v->mv_size, pl = (uint32_t)path->mv_size;

	if (k->mv_size > sizeof b->last || v->mv_size > UINT32_MAX || path->mv_size > CAT_PATH_MAX)
		return SYMDB_E_CATALOG;
	if (b->len + need > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;
		while (cap < b->len + need)
			cap *= 2;
		if (!(p = realloc(b->buf, cap)))
			return -ENOMEM;
		b->buf = p;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, &kl, 4);
	memcpy(b->buf + b->len + 4, &vl, 4);
	memcpy(b->buf + b->len + 8, &pl, 4);
	memcpy(b->buf + b->len + 12, k->mv_data, k->mv_size);
	memcpy(b->buf + b->len + 12 + k->mv_size, v->mv_data, v->mv_size);
	if (pl)
		memcpy(b->buf + b->len + 12 + k->mv_size + vl, path->mv_data, pl);
	b->len += need;
	b->n++;
	memcpy(b->last, k->mv_data, k->mv_size);
	b->last_len = k->mv_size;
	return 0;
}

/* Copy the next batch of `images` entries into b, in one read transaction. */
static int batch_read(rd_catalog *c, struct cat_batch *b)
{
	MDB_cursor *cur;
	MDB_txn *txn;
	MDB_val k, v;
	int rc, err = 0;

	b->len = b->n = 0;
	rc = cat_scan_begin(c, c->images, &txn, &cur);
	if (rc)
		return rc;
	if (b->last_len == 0) {
		rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	} else {
		k.mv_size = b->last_len;
		k.mv_data = b->last;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc == 0 && k.mv_size == b->last_len && memcmp(k.mv_data, b->last, b->last_len) == 0)
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	while (rc == 0) {
		MDB_val p = cat_path_get(c, txn, &k);
		if (p.mv_size > CAT_PATH_MAX)
			p.mv_size = 0; /* not a path symdb wrote: listed without it */
		err = batch_add(b, &k, &v, &p);
		if (err || b->n == CAT_BATCH_ENTRIES || b->len >= CAT_BATCH_BYTES)
			break;
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	cat_scan_end(c, txn, cur);
	if (err)
		return err;
	if (rc == MDB_NOTFOUND) {
		b->done = 1;
		return 0;
	}
	return cat_err(rc);
}

/* Decode the batch and call fn for each entry: no transaction is open.
 * Undecodable values are skipped and counted in *damaged. */
static int batch_call(const struct cat_batch *b, char *scratch, int *damaged,
                      int (*fn)(const rd_cat_entry *e, void *arg), void *arg)
{
	fmt_cat_value cv;
	rd_cat_entry e;
	size_t off = 0, i;
	uint32_t kl, vl, pl;
	MDB_val k, v, p;
	int rc;

	for (i = 0; i < b->n; i++) {
		memcpy(&kl, b->buf + off, 4);
		memcpy(&vl, b->buf + off + 4, 4);
		memcpy(&pl, b->buf + off + 8, 4);
		k.mv_size = kl;
		k.mv_data = b->buf + off + 12;
		v.mv_size = vl;
		v.mv_data = b->buf + off + 12 + kl;
		p.mv_size = pl;
		p.mv_data = b->buf + off + 12 + kl + vl;
		off += 12 + (size_t)kl + vl + pl;
		/* An undecodable value is skipped, not fatal: every readable entry
		 * is still listed, and the damage is reported at the end. */
		if (cat_decode(&k, &v, &e, &cv) != 0 ||
		    cat_strings(&cv, &p, &e, scratch, CAT_SCRATCH) != 0) {
			*damaged = 1;
			continue;
		}
		rc = fn(&e, arg);
		if (rc)
			return rc;
	}
	return 0;
}

int rd_catalog_list(rd_catalog *c, int (*fn)(const rd_cat_entry *e, void *arg), void *arg)
{
	struct cat_batch b;
	char *scratch;
	int rc, damaged = 0;

	if (!c || !fn)
		return SYMDB_E_INVAL;
	scratch = malloc(CAT_SCRATCH);
	if (!scratch)
		return -ENOMEM;
	memset(&b, 0, sizeof b);
	do {
		rc = batch_read(c, &b);
		if (rc == 0)
			rc = batch_call(&b, scratch, &damaged, fn, arg);
	} while (rc == 0 && !b.done);
	free(b.buf);
	free(scratch);
	return rc == 0 && damaged ? SYMDB_E_CATALOG : rc;
}
