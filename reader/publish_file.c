/* SPDX-License-Identifier: MIT */
/*
 * publish_file.c - make one index file visible, atomically and durably
 * (SPEC §12.5): the file was written to a temporary file in DB/tmp (by the
 * indexer, or by an import); fsync it, rename it to
 * DB/images/XX/UUIDHEX.symdb, fsync that directory, and only then commit the
 * catalog entry in one LMDB transaction.
 *
 * The fsync comes last before the rename (pub_fsync_tmp), not right after
 * the write, so the device writes while this process verifies the file.
 *
 * A crash or error before the rename leaves at most a temp file (removed on
 * every error path we see); between the rename and the commit it leaves an
 * unreferenced file that the next build of that UUID overwrites.  When the
 * catalog commit fails for a UUID the catalog does not know, the renamed file
 * is removed again, so a failed build publishes nothing.  DB/tmp and
 * DB/images are on the same filesystem, so rename(2) is atomic, and a reader
 * that mapped an older file under the same name keeps a valid mapping.
 */
#define _GNU_SOURCE /* mkstemp, fsync, O_DIRECTORY, sync_file_range */
#include "publish_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format_header.h"
#include "format_io.h"
#include "db_dir.h"
#include "format_layout.h"
#include "symdb_endian.h"

struct pub {
	const char *dir;           /* database directory */
	char hex[2 * FMT_UUID_MAX + 1];
	char rel[128];             /* images/XX/HEX.symdb */
	const char *name;          /* HEX.symdb: rel's last component */
	char final[4096], subdir[4096], tmp[4096];
	const char *tmpname;       /* tmp's last component, in DB/tmp */
	rd_safedir tmpd;           /* DB/tmp (db_dir.h), or fd -1 */
	rd_safedir xx;             /* DB/images/XX, locked while fd >= 0 */
	int renamed;               /* final now holds our bytes */
	char *eb;
	size_t ebsz;
};

static int pub_fail(struct pub *p, int rc, const char *path, const char *what)
{
	return fmt_err(p->eb, p->ebsz, rc, "%s: %s: %s", path, what, symdb_strerror(rc));
}

static int pub_paths(struct pub *p, const symdb_uuid *id)
{
	if (id->len == 0 || id->len > FMT_UUID_MAX)
		return fmt_err(p->eb, p->ebsz, SYMDB_E_INVAL, "image has no UUID");
	symdb_uuid_format(id, p->hex); /* SPEC §12.1: lowercase hex */
	if (fmt_layout_index_rel(p->rel, sizeof p->rel, p->hex) ||
	    fmt_layout_subdir(p->subdir, sizeof p->subdir, p->dir, p->hex) ||
	    fmt_layout_file(p->final, sizeof p->final, p->dir, p->rel))
		return fmt_err(p->eb, p->ebsz, -ENAMETOOLONG, "%s: path too long", p->dir);
	p->name = strrchr(p->rel, '/') + 1;
	return 0;
}

/* Remove the temp file (an error path: it is not published). */
static void pub_drop_tmp(struct pub *p)
{
	if (p->tmpd.fd >= 0)
		unlinkat(p->tmpd.fd, p->tmpname, 0);
}

static int pub_fsync_dir(struct pub *p, const rd_safedir *d, const char *dir)
{
	int rc = rd_safedir_sync(d);

	return rc ? pub_fail(p, rc, dir, "fsync") : 0;
}

void publish_writeback_start(int fd)
{
	/* Advisory: a filesystem without it still gets the fsync. */
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

/* Step 2 of SPEC §12.5: the temp file's bytes are on disk before the rename
 * can make them visible.  Done here, just before the rename, rather than
 * where the file was written, so that the device works while the writer
 * frees its memory and the cage's parent verifies the file (the writers
 * only start the writeback).  On error the temp file is gone. */
static int pub_fsync_tmp(struct pub *p)
{
	int fd = rd_safe_openat(&p->tmpd, p->tmpname, O_RDONLY), rc = 0;

	if (fd < 0)
		rc = fd;
	else if (fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc) {
		const char *why = rd_safe_why(rc);
		pub_drop_tmp(p);
		if (why)
			return fmt_err(p->eb, p->ebsz, rc, "%s: %s", p->tmp, why);
		return pub_fail(p, rc, p->tmp, "cannot write index file");
	}
	return 0;
}

/* Open (creating it and DB/images if needed) and lock DB/images/XX/, by
 * directory descriptors only (db_dir.h): a symbolic link or a foreign
 * directory there is an error for this image, and nothing is published.
 * An unsafe entry already at the final name is refused too: a rename would
 * delete it. */
static int pub_subdir(struct pub *p)
{
	struct stat st;
	int rc = rd_safedir_images(&p->xx, p->dir, p->hex, 1, p->eb, p->ebsz);

	if (rc == 0 && (rc = rd_safedir_lock(&p->xx)) != 0)
		pub_fail(p, rc, p->subdir, "cannot lock directory");
	if (rc == 0) {
		rc = rd_safe_stat(&p->xx, p->name, &st);
		if (rd_safe_why(rc))
			fmt_err(p->eb, p->ebsz, rc, "%s: %s", p->final, rd_safe_why(rc));
		else
			rc = 0;
	}
	if (rc) {
		rd_safedir_close(&p->xx);
		pub_drop_tmp(p);
	}
	return rc;
}

/* Rename the temp file into DB/images/XX/ and make the rename durable. */
static int pub_rename(struct pub *p)
{
	int rc;

	if (renameat(p->tmpd.fd, p->tmpname, p->xx.fd, p->name) < 0) {
		rc = -errno;
		pub_drop_tmp(p);
		return pub_fail(p, rc, p->final, "cannot rename index file into place");
	}
	p->renamed = 1;
	return pub_fsync_dir(p, &p->xx, p->subdir);
}

/* The catalog commit failed: if no entry refers to our file, unlink it so that
 * the failed build leaves nothing behind. */
static void pub_unpublish(struct pub *p, rd_catalog *cat, const symdb_uuid *id)
{
	rd_cat_entry e;
	char buf[512];

	if (rd_catalog_get(cat, id->bytes, id->len, &e, buf, sizeof buf) ==
	    SYMDB_E_NOT_INDEXED) {
		char *eb = p->eb; /* keep the caller's reason for the first failure */

		unlinkat(p->xx.fd, p->name, 0);
		p->eb = NULL;
		pub_fsync_dir(p, &p->xx, p->subdir);
		p->eb = eb;
	}
}

/* Steps 2-5 of SPEC §12.5 for p->tmp: the fsync first, then 3-5 holding the
 * lock of DB/images/XX/ from before the rename to after the commit.  The
 * lock makes "is the UUID still absent? rename, commit" one step against
 * every other publisher, compaction, thaw and removal in that directory
 * (SPEC §12.8): without it a racing builder of the same UUID with other
 * contents could rename its file over ours after our commit, or a thaw
 * could move old bytes over new ones.
 * e->file is set here.  The temp file is gone on return. */
static int pub_commit(struct pub *p, rd_catalog *cat, rd_cat_entry *e, int only_if_absent,
                      int *raced)
{
	symdb_uuid id;
	rd_cat_entry cur;
	char buf[1024];
	int rc = pub_fsync_tmp(p);

	if (rc == 0)
		rc = pub_subdir(p); /* locked from here */
	if (rc)
		return rc;
	memset(&id, 0, sizeof id);
	id.len = e->uuid_len;
	memcpy(id.bytes, e->uuid, id.len);
	if (only_if_absent && rd_catalog_get(cat, e->uuid, e->uuid_len, &cur, buf, sizeof buf) == 0) {
		*raced = 1; /* another builder committed first: its file stays */
		pub_drop_tmp(p);
		rc = 0;
	} else {
		e->file = p->rel;
		rc = pub_rename(p); /* its own message on failure */
		if (rc == 0) {
			rc = rd_catalog_put(cat, e, only_if_absent);
			if (rc == SYMDB_E_EXISTS && only_if_absent) {
				*raced = 1; /* a writer that does not lock; same UUID */
				rc = 0;
			} else if (rc) {
				rc = fmt_err(p->eb, p->ebsz, rc,
				             "%s/catalog: cannot commit entry for %s: %s", p->dir,
				             p->rel, symdb_strerror(rc));
			}
		}
		if (rc && p->renamed)
			pub_unpublish(p, cat, &id);
	}
	rd_safedir_close(&p->xx); /* drops the lock */
	return rc;
}

/* Steps 2-5 of SPEC §12.5 for a file someone else wrote into DB/tmp
 * (publish_import.c: an imported index file, already validated; the
 * indexer's staged files, verified by publish_commit.c).  e->file is filled
 * in here; the temp file is gone on return, renamed or removed. */
int publish_tmp(rd_catalog *cat, rd_cat_entry *e, const char *tmp_path, int only_if_absent,
                int *raced, char *index_path, size_t index_path_sz, char *eb, size_t ebsz)
{
	struct pub p;
	symdb_uuid id;
	int rc;

	memset(&p, 0, sizeof p);
	p.tmpd.fd = p.xx.fd = -1;
	p.dir = rd_catalog_dir(cat);
	p.eb = eb;
	p.ebsz = ebsz;
	*raced = 0;
	memset(&id, 0, sizeof id);
	id.len = e->uuid_len <= sizeof id.bytes ? e->uuid_len : 0;
	memcpy(id.bytes, e->uuid, id.len);
	rc = pub_paths(&p, &id);
	if (rc == 0 && (size_t)snprintf(p.tmp, sizeof p.tmp, "%s", tmp_path) >= sizeof p.tmp)
		rc = fmt_err(eb, ebsz, -ENAMETOOLONG, "%s: path too long", tmp_path);
	/* The temp file is reached through DB/tmp's descriptor, never its path. */
	p.tmpname = strrchr(p.tmp, '/') ? strrchr(p.tmp, '/') + 1 : p.tmp;
	if (rc == 0)
		rc = rd_safedir_open(&p.tmpd, p.dir, FMT_LAYOUT_TMP, 0, eb, ebsz);
	if (rc) {
		pub_drop_tmp(&p);
		return rc;
	}
	rc = pub_commit(&p, cat, e, only_if_absent, raced);
	rd_safedir_close(&p.tmpd);
	if (rc == 0 && index_path && index_path_sz)
		snprintf(index_path, index_path_sz, "%s", p.final);
	return rc;
}

/* The catalog entry of a validated file: header facts plus its checksum. */
int publish_entry_from_file(const char *tmp, const symdb_image_info *info, rd_cat_entry *e)
{
	int fd = open(tmp, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = publish_entry_from_fd(fd, info, e);
	close(fd);
	return rc;
}

int publish_entry_from_fd(int fd, const symdb_image_info *info, rd_cat_entry *e)
{
	uint8_t h[FMT_HEADER_SIZE];
	int rc = fmt_header_read(fd, h);

	if (rc)
		return SYMDB_E_CORRUPT; /* a read error included */
	memset(e, 0, sizeof *e);
	memcpy(e->uuid, info->uuid.bytes, info->uuid.len);
	e->uuid_len = info->uuid.len;
	e->uuid_kind = h[FMT_H_UUID_KIND];
	e->object_format = h[FMT_H_OBJECT_FORMAT];
	e->flags = info->flags;
	e->machine = info->machine;
	e->machine_sub = info->machine_sub;
	e->file_size = info->file_size;
	e->header_sum = fmt_be64(h + FMT_H_CHECKSUM);
	e->built_at = (uint64_t)time(NULL);
	e->image_name = info->image_name;
	return 0;
}
