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
#include "format_layout.h"
#include "symdb_endian.h"

struct pub {
	const char *dir;           /* database directory */
	char hex[2 * FMT_UUID_MAX + 1];
	char rel[128];             /* images/XX/HEX.symdb */
	char final[4096], subdir[4096], tmp[4096];
	int renamed;               /* final now holds our bytes */
	int lock;                  /* rd_images_dir_lock of subdir, or -1 */
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
	return 0;
}

static int pub_fsync_dir(struct pub *p, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return pub_fail(p, -errno, dir, "cannot open directory");
	if (fsync(fd) < 0 && errno != EINVAL) /* EINVAL: fs without dir fsync */
		rc = pub_fail(p, -errno, dir, "fsync");
	close(fd);
	return rc;
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
	int fd = open(p->tmp, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fsync(fd) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc) {
		unlink(p->tmp);
		return pub_fail(p, rc, p->tmp, "cannot write index file");
	}
	return 0;
}

/* Create DB/images/XX/ if needed (fsyncing DB/images/ then). */
static int pub_subdir(struct pub *p)
{
	char images[4096];
	int rc;

	if (mkdir(p->subdir, 0777) < 0) {
		if (errno == EEXIST)
			return 0;
		rc = -errno;
		unlink(p->tmp);
		return pub_fail(p, rc, p->subdir, "cannot create directory");
	}
	fmt_layout_dir(images, sizeof images, p->dir, FMT_LAYOUT_IMAGES); /* fits: subdir did */
	rc = pub_fsync_dir(p, images);
	if (rc)
		unlink(p->tmp);
	return rc;
}

/* Rename the temp file into DB/images/XX/ and make the rename durable. */
static int pub_rename(struct pub *p)
{
	int rc;

	if (rename(p->tmp, p->final) < 0) {
		rc = -errno;
		unlink(p->tmp);
		return pub_fail(p, rc, p->final, "cannot rename index file into place");
	}
	p->renamed = 1;
	return pub_fsync_dir(p, p->subdir);
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

		unlink(p->final);
		p->eb = NULL;
		pub_fsync_dir(p, p->subdir);
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
		rc = pub_subdir(p);
	if (rc)
		return rc;
	memset(&id, 0, sizeof id);
	id.len = e->uuid_len;
	memcpy(id.bytes, e->uuid, id.len);
	p->lock = rd_images_dir_lock(p->subdir);
	if (p->lock < 0) {
		unlink(p->tmp);
		return pub_fail(p, p->lock, p->subdir, "cannot lock directory");
	}
	if (only_if_absent && rd_catalog_get(cat, e->uuid, e->uuid_len, &cur, buf, sizeof buf) == 0) {
		*raced = 1; /* another builder committed first: its file stays */
		unlink(p->tmp);
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
	rd_images_dir_unlock(p->lock);
	p->lock = -1;
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
	p.lock = -1;
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
	if (rc) {
		unlink(tmp_path);
		return rc;
	}
	rc = pub_commit(&p, cat, e, only_if_absent, raced);
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
