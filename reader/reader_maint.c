/* SPDX-License-Identifier: MIT */
/*
 * reader_maint.c - the database's life cycle as the public API shows it
 * (SPEC §12.6): the clock (symdb_now, overridable by $SYMDB_NOW so tests and
 * replays need no sleeps), last-query times, and removing an image.
 *
 * Removal order matters for crash safety: the catalog entry goes first, in
 * its own transaction, then the file.  A crash in between leaves an orphan
 * file (invisible to readers, removed by `symdb gc`), never an entry naming
 * a missing file.
 */
#define _POSIX_C_SOURCE 200809L /* O_DIRECTORY, fsync */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reader_internal.h"

uint64_t symdb_now(void)
{
	const char *s = getenv("SYMDB_NOW");
	char *end;

	if (s && *s) {
		unsigned long long v = strtoull(s, &end, 10);

		if (*end == 0)
			return (uint64_t)v;
	}
	return (uint64_t)time(NULL);
}

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

/* fsync the directory holding `path`, so the unlink survives a crash. */
static void sync_parent(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash || (size_t)(slash - path) >= sizeof dir)
		return;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int symdb_remove(symdb *db, const symdb_uuid *id, char *errbuf, size_t errbuf_sz)
{
	const size_t names_sz = 2 * 65536 + 4; /* two u16-length strings */
	char *names, path[4096];
	rd_cat_entry e;
	int rc;

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
	if (unlink(path) < 0 && errno != ENOENT) {
		rc = -errno;
		if (errbuf && errbuf_sz)
			snprintf(errbuf, errbuf_sz, "%s: cannot remove: %s", path, symdb_strerror(rc));
		return rc;
	}
	sync_parent(path);
	return 0;
}
