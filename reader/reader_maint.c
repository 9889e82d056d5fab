/* SPDX-License-Identifier: MIT */
/*
 * reader_maint.c - the database's life cycle as the public API shows it
 * (SPEC §12.6): last-query times, and removing an image.  The clock is the
 * caller's: symdb_mark_used() takes the time, so tests and replays (the CLI
 * maps $SYMDB_NOW) need no sleeps.
 *
 * Removal order matters for crash safety: the catalog entry goes first, in
 * its own transaction, then the file.  A crash in between leaves an orphan
 * file (invisible to readers, removed by `symdb gc`), never an entry naming
 * a missing file.  Both forms of a compacted image (SPEC §12.8) go.
 */
#define _POSIX_C_SOURCE 200809L /* O_DIRECTORY, fsync */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format_layout.h"
#include "reader_internal.h"

static int id_ok(const symdb_uuid *id)
{
	return id && id->len >= 1 && id->len <= SYMDB_UUID_MAX;
}

int symdb_last_used(symdb *db, const symdb_uuid *id, uint64_t *out)
{
	int rc;

	if (!db || !id_ok(id) || !out)
		return SYMDB_E_INVAL;
	rc = rd_catalog_get_used(db->cat, id->bytes, id->len, out);
	return rc == SYMDB_E_NOT_INDEXED ? SYMDB_E_NOT_FOUND : rc;
}

int symdb_mark_used(symdb *db, const symdb_uuid *id, uint64_t when)
{
	if (!db || !id_ok(id))
		return SYMDB_E_INVAL;
	return rd_catalog_set_used(db->cat, id->bytes, id->len, when);
}

/* Unlink both forms of an index file (SPEC §12.8) under the directory lock,
 * so a thaw in progress finishes first instead of publishing afterwards. */
static int remove_forms(const char *path, char *errbuf, size_t errbuf_sz)
{
	char lz[4096 + 4];
	int lock, rc = 0;

	if (fmt_layout_cold(lz, sizeof lz, path))
		return -ENAMETOOLONG;
	lock = rd_dir_lock(path);
	if (unlink(path) < 0 && errno != ENOENT)
		rc = -errno;
	if (rc == 0 && unlink(lz) < 0 && errno != ENOENT) {
		rc = -errno;
		path = lz;
	}
	if (rc == 0) {
		rd_sync_parent(path);
	} else if (errbuf && errbuf_sz) {
		snprintf(errbuf, errbuf_sz, "%s: cannot remove: %s", path, symdb_strerror(rc));
	}
	rd_dir_unlock(lock);
	return rc;
}

int symdb_remove(symdb *db, const symdb_uuid *id, const symdb_open_opts *opts)
{
	const size_t names_sz = 2 * 65536 + 4; /* two u16-length strings */
	char *names, path[4096], *errbuf;
	size_t errbuf_sz;
	unsigned flags;
	rd_cat_entry e;
	int rc;

	if ((rc = rd_opts(opts, 0, &flags, &errbuf, &errbuf_sz)) != 0)
		return rc;
	if (!db || !id_ok(id))
		return SYMDB_E_INVAL;
	names = malloc(names_sz);
	if (!names)
		return -ENOMEM;
	rc = rd_catalog_get(db->cat, id->bytes, id->len, &e, names, names_sz);
	if (rc == 0 && (size_t)snprintf(path, sizeof path, "%s/%s", db->dir, e.file) >= sizeof path)
		rc = -ENAMETOOLONG;
	free(names);
	if (rc == 0)
		rc = rd_catalog_del(db->cat, id->bytes, id->len);
	if (rc) {
		if (errbuf && errbuf_sz)
			snprintf(errbuf, errbuf_sz, "%s/catalog: %s", db->dir, symdb_strerror(rc));
		return rc;
	}
	return remove_forms(path, errbuf, errbuf_sz);
}
