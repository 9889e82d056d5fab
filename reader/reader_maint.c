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

#include <sys/stat.h>

#include "db_dir.h"
#include "format_header.h"
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

/* Unlink one form, NAME in d, unless it is unsafe (db_dir.h): 0 (also
 * when it is absent), or a negative code with the reason in errbuf. */
static int remove_form(const rd_safedir *d, const char *name, const char *path, char *errbuf,
                       size_t errbuf_sz)
{
	struct stat st;
	int rc = rd_safe_stat(d, name, &st);

	if (rc == 0 || rc == -EINVAL) /* -EINVAL: a directory's unlink fails below */
		rc = unlinkat(d->fd, name, 0) < 0 ? -errno : 0;
	if (rc == -ENOENT)
		return 0;
	if (rc)
		fmt_err(errbuf, errbuf_sz, rc, "%s: cannot remove: %s", path,
		        rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	return rc;
}

/* Refuse, before anything changes, to remove an image whose directory or
 * file is unsafe (db_dir.h): 0, or -ELOOP / -EPERM with errbuf set.  The
 * check is made again, on the descriptors, by remove_forms. */
static int remove_check(const char *path, char *errbuf, size_t errbuf_sz)
{
	char lz[4096 + 4];
	const char *name, *what = path;
	struct stat st;
	rd_safedir d;
	int rc = rd_safedir_of(&d, path, &name, 0, errbuf, errbuf_sz);

	if (rc) {
		if (rd_safe_why(rc))
			return rc; /* errbuf names the directory */
		if (errbuf && errbuf_sz)
			errbuf[0] = 0;
		return 0; /* missing: nothing to remove there */
	}
	rc = rd_safe_stat(&d, name, &st);
	if (!rd_safe_why(rc) && fmt_layout_cold(lz, sizeof lz, name) == 0) {
		rc = rd_safe_stat(&d, lz, &st);
		what = lz;
	}
	rd_safedir_close(&d);
	if (!rd_safe_why(rc))
		return 0;
	if (what == lz)
		return fmt_err(errbuf, errbuf_sz, rc, "%s%s: cannot remove: %s", path,
		               FMT_LAYOUT_COLD_EXT, rd_safe_why(rc));
	return fmt_err(errbuf, errbuf_sz, rc, "%s: cannot remove: %s", path, rd_safe_why(rc));
}

/* Unlink both forms of an index file (SPEC §12.8) under the directory lock,
 * so a thaw in progress finishes first instead of publishing afterwards.
 * The directory is opened and the files judged without following
 * anything (db_dir.h): an unsafe one stays, and the removal fails. */
static int remove_forms(const char *path, char *errbuf, size_t errbuf_sz)
{
	char lz[4096 + 4];
	const char *name;
	rd_safedir d;
	int rc;

	if (fmt_layout_cold(lz, sizeof lz, path))
		return -ENAMETOOLONG;
	rc = rd_safedir_lock_of(&d, path, &name);
	if (rc == -ENOENT)
		return 0; /* no directory, no file */
	if (rc)
		return fmt_err(errbuf, errbuf_sz, rc, "%s: cannot remove: %s", path,
		               rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	rc = remove_form(&d, name, path, errbuf, errbuf_sz);
	if (rc == 0)
		rc = remove_form(&d, strrchr(lz, '/') + 1, lz, errbuf, errbuf_sz);
	if (rc == 0)
		(void)rd_safedir_sync(&d);
	rd_safedir_close(&d); /* drops the lock */
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
	if (rc == 0 && (rc = remove_check(path, errbuf, errbuf_sz)) != 0)
		return rc; /* nothing changed */
	if (rc == 0)
		rc = rd_catalog_del(db->cat, id->bytes, id->len);
	if (rc)
		return fmt_err(errbuf, errbuf_sz, rc, "%s/catalog: %s", db->dir, symdb_strerror(rc));
	return remove_forms(path, errbuf, errbuf_sz);
}
