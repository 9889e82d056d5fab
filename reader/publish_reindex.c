/* SPDX-License-Identifier: MIT */
/*
 * publish_reindex.c - symdb_builder_reindex(): rebuild the catalog from the index
 * files under DB/images (SPEC §12.6, "Reindex").  The catalog is derived
 * data: every published file carries its UUID, image name, machine and flags
 * in its header, so a lost or damaged catalog can be rebuilt from the files.
 *
 * Each DB/images/XX/NAME.symdb, and each cold NAME.symdb.lz4 without its
 * .symdb (decompressed in memory, SPEC §12.8), is opened with every table checksum verified
 * and every invariant checked (symdb_image_verify), exactly as `symdb verify`
 * does; a file that fails, or whose name is not its header's UUID, is
 * skipped and reported, never removed.  The valid ones replace the whole
 * catalog in one write transaction, so readers see the old catalog or the
 * new one, nothing in between.  Built_At becomes the file's mtime (the
 * original time lived only in the lost catalog).
 *
 * A damaged catalog is never opened for this: symdb_builder_open() with
 * SYMDB_BUILD_RECOVER moves it aside and creates an empty one first
 * (catalog_files.c), so a truncated data.mdb cannot crash its own repair.
 */
#define _POSIX_C_SOURCE 200809L
#include "publish_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_dir.h"
#include "format_header.h"
#include "format_io.h"
#include "format_layout.h"
#include "reader_internal.h"
#include "symdb_endian.h"
#include "symdb_format.h"

struct rx_state {
	rd_catalog *cat;
	rd_cat_entry *e;
	size_t n, cap;
	symdb_reindex_fn skipped;
	void *arg;
	/* The DB/images/XX directories scanned, each still locked: a build
	 * publishes (renames its file, commits its entry) under that lock, and
	 * one that published after the scan of its directory but before the
	 * new catalog's commit would lose its entry to the replacement (seen:
	 * reliability.catalog_live, one image of 6,000).  Released after it. */
	rd_safedir held[256]; /* (2 KiB) */
	unsigned nheld;
};

static void rx_free(struct rx_state *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free((void *)s->e[i].file);
		free((void *)s->e[i].image_name);
	}
	free(s->e);
}

/* Header bytes the image info does not carry: UUID kind, object format and
 * the header checksum the catalog pins (SPEC §12.3). */
static int rx_header(const char *path, rd_cat_entry *e, struct stat *st)
{
	uint8_t h[FMT_HEADER_SIZE];
	int fd = rd_safe_open_path(path); /* never followed (db_dir.h) */
	int rc;

	if (fd < 0)
		return fd;
	rc = fmt_header_read(fd, h);
	if (fstat(fd, st) < 0)
		rc = -1;
	close(fd);
	if (rc)
		return SYMDB_E_CORRUPT; /* a read or fstat error included */
	e->uuid_kind = h[FMT_H_UUID_KIND];
	e->object_format = h[FMT_H_OBJECT_FORMAT];
	e->header_sum = fmt_be64(h + FMT_H_CHECKSUM);
	return 0;
}

/* The same from a cold file's decompressed bytes (SPEC §12.8); Built_At
 * then comes from the .lz4's mtime. */
static int rx_header_cold(const symdb_image *img, const char *lzpath, rd_cat_entry *e,
                          struct stat *st)
{
	const uint8_t *h;
	const void *data;
	size_t size;

	if (symdb_image_data(img, &data, &size) < 0 || size < FMT_HEADER_SIZE)
		return SYMDB_E_CORRUPT;
	if (lstat(lzpath, st) < 0 || !S_ISREG(st->st_mode))
		return SYMDB_E_CORRUPT;
	h = data;
	e->uuid_kind = h[FMT_H_UUID_KIND];
	e->object_format = h[FMT_H_OBJECT_FORMAT];
	e->header_sum = fmt_be64(h + FMT_H_CHECKSUM);
	return 0;
}

/* Validate one file; 0 fills e, else why says what is wrong with it. */
static int rx_check(const char *path, const char *rel, int cold, rd_cat_entry *e, char *why,
                    size_t why_sz)
{
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS, .errbuf = why,
	           .errbuf_sz = why_sz);
	symdb_image *img = NULL;
	symdb_image_info info;
	char hex[2 * SYMDB_UUID_MAX + 1], want[4096];
	struct stat st;
	/* As symdb_image_open_file, but never following anything (db_dir.h). */
	int rc = cold ? rd_cold_open_file(path, o.flags | RD_OPEN_IN_DB, NULL, &img, why, why_sz)
	              : rd_image_map(path, o.flags | RD_OPEN_IN_DB, &img, why, why_sz);

	if (rc == 0)
		rc = symdb_image_verify(img, PUBLISH_EB_OPTS(why, why_sz));
	if (rc)
		goto out;
	info.sz = sizeof info;
	symdb_image_get_info(img, &info);
	symdb_uuid_format(&info.uuid, hex);
	if (fmt_layout_index_rel(want, sizeof want, hex) != 0 || strcmp(want, rel) != 0) {
		snprintf(why, why_sz, "named for another UUID: its header says %s", hex);
		rc = SYMDB_E_CORRUPT;
		goto out;
	}
	memset(e, 0, sizeof *e);
	rc = cold ? rx_header_cold(img, path, e, &st) : rx_header(path, e, &st);
	if (rc || (!cold && (uint64_t)st.st_size != info.file_size)) {
		snprintf(why, why_sz, "changed while being read");
		rc = rc ? rc : SYMDB_E_CORRUPT;
		goto out;
	}
	memcpy(e->uuid, info.uuid.bytes, info.uuid.len);
	e->uuid_len = info.uuid.len;
	e->flags = info.flags;
	e->machine = info.machine;
	e->machine_sub = info.machine_sub;
	e->file_size = info.file_size;
	e->built_at = (uint64_t)st.st_mtime;
	e->file = strdup(rel);
	e->image_name = strdup(info.image_name ? info.image_name : "");
	if (!e->file || !e->image_name) {
		free((void *)e->file);
		free((void *)e->image_name);
		rc = -ENOMEM;
	}
out:
	symdb_image_close(img);
	return rc;
}

/* Report an unsafe entry (db_dir.h) as skipped: it is never followed. */
static void rx_unsafe(struct rx_state *s, const char *rel, int rc)
{
	if (s->skipped)
		s->skipped(rel, rd_safe_why(rc), s->arg);
}

static int rx_file(struct rx_state *s, const rd_safedir *xx, const char *sub, const char *name)
{
	char path[4096], rel[4096], shown[4096], why[512] = "";
	size_t len = strlen(name);
	int rc;

	const size_t ext = sizeof FMT_LAYOUT_INDEX_EXT - 1, cold_ext = sizeof FMT_LAYOUT_COLD_EXT - 1;
	int cold = len > ext + cold_ext &&
	           strcmp(name + len - ext - cold_ext, FMT_LAYOUT_INDEX_EXT FMT_LAYOUT_COLD_EXT) == 0;
	struct stat st;

	if (!cold && (len <= ext || strcmp(name + len - ext, FMT_LAYOUT_INDEX_EXT) != 0))
		return 0;
	if (snprintf(rel, sizeof rel, FMT_LAYOUT_IMAGES "/%s/%s", sub, name) >= (int)sizeof rel ||
	    fmt_layout_file(path, sizeof path, rd_catalog_dir(s->cat), rel))
		return -ENAMETOOLONG;
	rc = rd_safe_stat(xx, name, &st);
	if (rd_safe_why(rc)) {
		rx_unsafe(s, rel, rc);
		return 0;
	}
	if (cold) {
		/* The entry names the .symdb either way (SPEC §12.8); a cold
		 * form next to its .symdb is a leftover, not a second image. */
		snprintf(shown, sizeof shown, "%s", rel);
		rel[strlen(rel) - cold_ext] = 0;
		path[strlen(path) - cold_ext] = 0;
		if (fstatat(xx->fd, rel + strlen(rel) - (len - cold_ext), &st,
		            AT_SYMLINK_NOFOLLOW) == 0)
			return 0;
		strcat(path, FMT_LAYOUT_COLD_EXT);
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		rd_cat_entry *p = realloc(s->e, cap * sizeof *p);

		if (!p)
			return -ENOMEM;
		s->e = p;
		s->cap = cap;
	}
	rc = rx_check(path, rel, cold, &s->e[s->n], why, sizeof why);
	if (rc == -ENOMEM)
		return rc;
	if (rc == 0)
		s->n++;
	else if (s->skipped)
		s->skipped(cold ? shown : rel, why[0] ? why : symdb_strerror(rc), s->arg);
	return 0;
}

static int rx_subdir(struct rx_state *s, const char *sub)
{
	char rel[64];
	rd_safedir xx;
	struct dirent *d;
	DIR *dir;
	int rc, fd;

	snprintf(rel, sizeof rel, FMT_LAYOUT_IMAGES "/%s", sub);
	rc = rd_safedir_open(&xx, rd_catalog_dir(s->cat), rel, 0, NULL, 0);
	if (rd_safe_why(rc)) {
		rx_unsafe(s, rel, rc);
		return 0;
	}
	if (rc)
		return rc == -ENOTDIR ? 0 : rc;
	/* Under the directory's lock (SPEC §12.8): a compaction or thaw moving a
	 * file between readdir and the check would drop its image. */
	fd = dup(xx.fd); /* readdir's own descriptor; xx's keeps the lock */
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir || (rc = rd_safedir_lock(&xx)) != 0) {
		rc = rc ? rc : -errno;
		if (dir)
			closedir(dir);
		else if (fd >= 0)
			close(fd);
		rd_safedir_close(&xx);
		return rc;
	}
	while (rc == 0 && (d = readdir(dir)) != NULL)
		if (d->d_name[0] != '.')
			rc = rx_file(s, &xx, sub, d->d_name);
	closedir(dir);
	if (s->nheld < sizeof s->held / sizeof s->held[0])
		s->held[s->nheld++] = xx; /* kept locked until the commit */
	else
		rd_safedir_close(&xx); /* (two-character names: never more than 256) */
	return rc;
}

int symdb_builder_reindex(symdb_builder *b, symdb_reindex_fn skipped, void *arg,
                          const symdb_build_opts *opts)
{
	struct rx_state s = { 0 };
	symdb_build_opts o;
	rd_safedir imgs;
	char *errbuf;
	size_t errbuf_sz;
	struct dirent *d;
	DIR *dir;
	int rc;

	if ((rc = publish_builder_opts(opts, &o)) != 0)
		return rc;
	errbuf = o.errbuf;
	errbuf_sz = o.errbuf_sz;
	if (!b)
		return SYMDB_E_INVAL;
	s.cat = publish_builder_catalog(b);
	s.skipped = skipped;
	s.arg = arg;
	/* DB/images by its descriptor, never followed (db_dir.h). */
	rc = rd_safedir_open(&imgs, rd_catalog_dir(s.cat), FMT_LAYOUT_IMAGES, 0, errbuf, errbuf_sz);
	if (rc)
		return rc;
	dir = fdopendir(imgs.fd);
	if (!dir) {
		rc = -errno;
		rd_safedir_close(&imgs);
		return fmt_err(errbuf, errbuf_sz, rc, "%s/%s: %s", rd_catalog_dir(s.cat),
		               FMT_LAYOUT_IMAGES, symdb_strerror(rc));
	}
	while (rc == 0 && (d = readdir(dir)) != NULL)
		if (strlen(d->d_name) == 2 && d->d_name[0] != '.')
			rc = rx_subdir(&s, d->d_name);
	closedir(dir); /* closes imgs.fd */
	if (rc == 0)
		rc = rd_catalog_replace_all(s.cat, s.e, s.n);
	for (unsigned i = 0; i < s.nheld; i++)
		rd_safedir_close(&s.held[i]); /* drops the locks */
	if (rc)
		fmt_err(errbuf, errbuf_sz, rc, "%s: cannot rebuild the catalog: %s",
		        rd_catalog_dir(s.cat), symdb_strerror(rc));
	else
		rc = (int)s.n;
	rx_free(&s);
	return rc;
}

const char *symdb_builder_recovered(const symdb_builder *b)
{
	/* The catalog accessor takes a mutable builder; nothing is changed. */
	return b ? rd_catalog_recovered(publish_builder_catalog((symdb_builder *)b)) : NULL;
}
