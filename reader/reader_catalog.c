/* SPDX-License-Identifier: MIT */
/*
 * reader_catalog.c - symdb_list(), symdb_lookup() and symdb_lookup_prefix():
 * the catalog as the
 * public API shows it, converted from rd_catalog's entries (SPEC §12.3).
 *
 * Locking rule (symdb.h "Threads"): nothing here holds a lock while calling
 * the caller back; the catalog calls take and release their own.
 */
#include <string.h>

#include "reader_internal.h"

static void to_entry(const rd_cat_entry *c, symdb_entry *e)
{
	memset(e, 0, sizeof *e);
	e->sz = sizeof *e;
	memcpy(e->uuid.bytes, c->uuid, c->uuid_len <= SYMDB_UUID_MAX ? c->uuid_len : SYMDB_UUID_MAX);
	e->uuid.len = c->uuid_len;
	e->uuid.kind = c->uuid_kind;
	e->image_name = c->image_name;
	e->file = c->file;
	e->file_size = c->file_size;
	e->built_at = c->built_at;
	e->flags = c->flags;
	e->machine = c->machine;
	e->machine_sub = c->machine_sub;
	e->object_format = c->object_format;
	e->source_path = c->source_path;
}

struct list_ctx {
	int (*fn)(const symdb_entry *e, void *arg);
	void *arg;
};

static int list_one(const rd_cat_entry *c, void *arg)
{
	const struct list_ctx *ctx = arg;
	symdb_entry e;

	to_entry(c, &e);
	return ctx->fn(&e, ctx->arg);
}

/* Locking rule: fn runs with no library lock held and no catalog
 * transaction open (rd_catalog_list copies each batch out first), so it may
 * open and close images, mark them used, or write the catalog, even while
 * other threads do and other processes grow the catalog's map. */
int symdb_list(symdb *db, int (*fn)(const symdb_entry *e, void *arg), void *arg)
{
	struct list_ctx ctx = { fn, arg };

	if (!db || !fn)
		return SYMDB_E_INVAL;
	return rd_catalog_list(db->cat, list_one, &ctx);
}

_Static_assert((int)RD_CHK_BAD_VALUE == (int)SYMDB_CAT_BAD_VALUE &&
                       (int)RD_CHK_DANGLING_NAME == (int)SYMDB_CAT_DANGLING_NAME &&
                       (int)RD_CHK_MISSING_NAME == (int)SYMDB_CAT_MISSING_NAME &&
                       (int)RD_CHK_BAD_USED == (int)SYMDB_CAT_BAD_USED,
               "rd_catalog.h and symdb.h agree on problem kinds");

struct check_ctx {
	void (*fn)(symdb_catalog_problem, const uint8_t *, size_t, const char *, void *);
	void *arg;
};

static void check_one(int kind, const uint8_t *key, size_t key_len, const char *why, void *arg)
{
	const struct check_ctx *ctx = arg;

	ctx->fn((symdb_catalog_problem)kind, key, key_len, why, ctx->arg);
}

int symdb_catalog_check(symdb *db, unsigned flags,
                        void (*fn)(symdb_catalog_problem kind, const uint8_t *key,
                                   size_t key_len, const char *why, void *arg),
                        void *arg)
{
	struct check_ctx ctx = { fn, arg };

	if (!db || (flags & ~SYMDB_CHECK_REPAIR))
		return SYMDB_E_INVAL;
	return rd_catalog_check(db->cat, (flags & SYMDB_CHECK_REPAIR) != 0,
	                        fn ? check_one : NULL, &ctx);
}

int symdb_lookup(symdb *db, const symdb_uuid *id, symdb_entry *out, char *namebuf,
                 size_t namebuf_sz)
{
	symdb_entry full;
	rd_cat_entry c;
	int rc;

	if (!db || !id || !out || out->sz < sizeof out->sz || id->len < 1 ||
	    id->len > SYMDB_UUID_MAX)
		return SYMDB_E_INVAL;
	rc = rd_catalog_get(db->cat, id->bytes, id->len, &c, namebuf, namebuf_sz);
	if (rc == 0) {
		to_entry(&c, &full);
		rc = rd_out_put(out, &full, sizeof full);
	}
	return rc;
}

/* Hex digits of a UUID prefix into bytes (dashes ignored, as in
 * symdb_uuid_parse); returns the digit count, or -1. */
static int prefix_digits(const char *hex, uint8_t *bytes)
{
	int nd = 0, v;

	memset(bytes, 0, SYMDB_UUID_MAX);
	for (; *hex; hex++) {
		char ch = *hex;
		if (ch == '-')
			continue;
		v = ch >= '0' && ch <= '9'   ? ch - '0'
		    : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
		    : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
		                             : -1;
		if (v < 0 || nd >= 2 * SYMDB_UUID_MAX)
			return -1;
		bytes[nd / 2] |= (uint8_t)(nd % 2 ? v : v << 4);
		nd++;
	}
	return nd;
}

int symdb_lookup_prefix(symdb *db, const char *hex, symdb_uuid *out, size_t max)
{
	uint8_t pfx[SYMDB_UUID_MAX];
	rd_cat_entry ce[16];
	int nd, n;

	if (!db || !hex || (max && !out))
		return SYMDB_E_INVAL;
	nd = prefix_digits(hex, pfx);
	if (nd < SYMDB_UUID_PREFIX_MIN)
		return SYMDB_E_INVAL;
	/* Matches beyond ce's capacity are counted, not copied: ask again with
	 * a longer prefix rather than for a longer list. */
	n = rd_catalog_prefix(db->cat, pfx, (size_t)nd, ce, sizeof ce / sizeof ce[0]);
	for (int i = 0; i < n && (size_t)i < max && i < (int)(sizeof ce / sizeof ce[0]); i++) {
		memset(&out[i], 0, sizeof out[i]);
		memcpy(out[i].bytes, ce[i].uuid, ce[i].uuid_len);
		out[i].len = ce[i].uuid_len;
		out[i].kind = ce[i].uuid_kind;
	}
	return n;
}
