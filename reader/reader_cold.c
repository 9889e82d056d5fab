/* SPDX-License-Identifier: MIT */
/*
 * reader_cold.c - cold storage (SPEC §12.8): compacting an index file into
 * its LZ4 form `images/XX/UUIDHEX.symdb.lz4`, and thawing it back when a
 * reader asks for the image.
 *
 * The catalog entry never changes: it keeps naming `…/UUIDHEX.symdb` with
 * the uncompressed File_Size and Header_Checksum, and an entry is present
 * when either form exists.  Both directions keep one valid form on disk at
 * every instant - the new form is written to DB/tmp, fsynced, checked and
 * renamed into place before the old one is unlinked - and both run under
 * one flock(2) on the image's directory DB/images/XX/, which never goes
 * away (unlike the files themselves), so a compaction, a thaw and a
 * removal of one image never interleave.  A thawer re-checks for the
 * `.symdb` after taking the lock: of 8 threads or processes asking at
 * once, the first decompresses and the others map its file.
 *
 * A database the process cannot write (no permission, read-only mount), or
 * an open with SYMDB_OPEN_NO_THAW (verify, export, info), decompresses into
 * anonymous memory instead and changes nothing on disk.
 *
 * Every decompression is reported to the caller's on_decompress hook
 * (symdb_open_opts), if any: tests count decompressions with it.
 *
 * Locking rule (symdb.h "Threads"): a thaw runs under the directory flock
 * only, never under the db's cache mutex (reader_open.c calls in here with
 * no lock held), so LZ4 decoding, fsync and verification of one image block
 * no open or close of any other image on the handle.  The flock is the
 * in-progress marker: a concurrent opener of the same image (thread or
 * process) waits for it and then maps the published file instead of
 * decoding again.  The on_decompress hook runs after the flock is released,
 * so a slow hook, or one that opens images itself, holds up nobody.
 */
#define _GNU_SOURCE /* O_CLOEXEC, O_DIRECTORY, mkstemp, PATH_MAX */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format_io.h"
#include "db_dir.h"
#include "format_layout.h"
#include "reader_advise.h"
#include "reader_internal.h"

/* ---- directory lock and durability ---------------------------------------- */

int rd_dir_lock(const char *path)
{
	const char *name;
	rd_safedir d;
	int rc = rd_safedir_lock_of(&d, path, &name);

	return rc ? rc : d.fd;
}

void rd_dir_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}

void rd_sync_parent(const char *path)
{
	const char *name;
	rd_safedir d;

	if (rd_safedir_of(&d, path, &name, 0, NULL, 0) == 0) {
		(void)rd_safedir_sync(&d);
		rd_safedir_close(&d);
	}
}

/* The last component of path. */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Tell the caller's hook of one decompression (symdb_open_opts.on_decompress). */
static void note_decompression(const rd_thaw_hook *hook, int on_disk, const char *path)
{
	const char *base = strrchr(path, '/');

	if (hook && hook->fn)
		hook->fn(base ? base + 1 : path, on_disk, hook->arg);
}

/* ---- decoding targets ----------------------------------------------------- */

struct target {
	int fd;            /* a temporary file, or -1: anonymous memory */
	char *mem;
	uint64_t size;     /* declared Content_Size */
	uint64_t expect;   /* the catalog's File_Size, 0 when there is no catalog */
	char why[160];
};

static int target_begin(void *arg, uint64_t size)
{
	struct target *t = arg;

	if (t->expect && size != t->expect) {
		snprintf(t->why, sizeof t->why,
		         "LZ4 frame declares %llu bytes, the catalog's File_Size is %llu",
		         (unsigned long long)size, (unsigned long long)t->expect);
		return SYMDB_E_CORRUPT;
	}
	if (size > SIZE_MAX) {
		snprintf(t->why, sizeof t->why, "too big to map");
		return SYMDB_E_TOO_BIG;
	}
	t->size = size;
	if (t->fd >= 0)
		return 0;
	t->mem = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	              -1, 0);
	if (t->mem == MAP_FAILED) {
		t->mem = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int target_sink(void *arg, const void *p, size_t n, uint64_t off)
{
	struct target *t = arg;

	if (t->fd >= 0)
		return fmt_write_full(t->fd, p, n);
	memcpy(t->mem + off, p, n); /* off + n <= size: rd_lz4_read_frame checks */
	return 0;
}

static int decode(int lzfd, struct target *t, const char *lz, char *eb, size_t ebsz)
{
	rd_lz4_reader r = { .max = t->expect ? t->expect : RD_COLD_MAX_FILE,
	                    .begin = target_begin, .sink = target_sink, .arg = t };
	int rc;

	t->why[0] = 0;
	rc = rd_lz4_read_frame(lzfd, &r, lz, eb, ebsz);
	if (rc && t->why[0])
		fmt_err(eb, ebsz, rc, "%s: %s", lz, t->why);
	return rc;
}

/* The thawed bytes must be the file the catalog describes (SPEC §12.3). */
static int match_expected(const symdb_image *img, uint64_t size, uint64_t hsum, const char *lz,
                          char *eb, size_t ebsz)
{
	if (img->v.size == size && img->v.header_checksum == hsum)
		return 0;
	return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
	               "%s: decompressed File_Size/Header_Checksum (0x%llx/0x%016llx) differ "
	               "from the catalog's (0x%llx/0x%016llx)",
	               lz, (unsigned long long)img->v.size,
	               (unsigned long long)img->v.header_checksum, (unsigned long long)size,
	               (unsigned long long)hsum);
}

/* Decompress into anonymous memory and validate: nothing touches the disk.
 * The caller reports the decompression (on_disk 0). */
static int thaw_memory(int lzfd, const char *lz, uint64_t size, uint64_t hsum, unsigned flags,
                       symdb_image **out, char *eb, size_t ebsz)
{
	struct target t = { .fd = -1, .expect = size };
	int rc = decode(lzfd, &t, lz, eb, ebsz);

	if (rc) {
		if (t.mem)
			munmap(t.mem, (size_t)t.size);
		return rc;
	}
	if (mprotect(t.mem, (size_t)t.size, PROT_READ) < 0) {
		rc = -errno;
		munmap(t.mem, (size_t)t.size);
		return fmt_err(eb, ebsz, rc, "%s: mprotect: %s", lz, symdb_strerror(rc));
	}
	rc = rd_image_from_map(t.mem, (size_t)t.size, lz, flags | SYMDB_OPEN_VERIFY_CHECKSUMS, out,
	                       eb, ebsz);
	if (rc == 0)
		(*out)->anon = 1; /* symdb_image_trim must not drop the only copy */
	if (rc == 0 && size && (rc = match_expected(*out, size, hsum, lz, eb, ebsz)) != 0) {
		rd_image_free(*out);
		*out = NULL;
	}
	return rc;
}

/* DB/tmp/UUIDHEX.<what>.XXXXXX for the index file path (PATH_MAX bytes). */
static int tmp_name(const char *dbdir, const char *path, const char *what, char *tmp)
{
	const char *base = strrchr(path, '/');
	char name[PATH_MAX];
	size_t n;

	base = base ? base + 1 : path;
	n = strcspn(base, ".");
	if ((size_t)snprintf(name, sizeof name, "%.*s.%s", (int)n, base, what) >= sizeof name)
		return -ENAMETOOLONG;
	return fmt_layout_tmp(tmp, PATH_MAX, dbdir, name);
}

/* Create the temp file tmp names (DB/tmp/NAME.XXXXXX, its X's replaced
 * here) through DB/tmp's descriptor, which td keeps for the rename
 * (db_dir.h: DB/tmp is never followed).  Returns the file's descriptor or
 * a negative code (td closed). */
static int tmp_create(const char *dbdir, char *tmp, rd_safedir *td)
{
	char *base = strrchr(tmp, '/') + 1, prefix[PATH_MAX], name[PATH_MAX];
	const size_t suffix = sizeof FMT_LAYOUT_TMP_SUFFIX - 1;
	int fd = rd_safedir_open(td, dbdir, FMT_LAYOUT_TMP, 0, NULL, 0);

	if (fd)
		return fd;
	snprintf(prefix, sizeof prefix, "%.*s", (int)(strlen(base) - suffix), base);
	fd = rd_safe_mktemp(td, prefix, name, sizeof name);
	if (fd < 0) {
		rd_safedir_close(td);
		return fd;
	}
	memcpy(base, name, strlen(name) + 1); /* same length: NAME + 7 */
	return fd;
}

/* Map the decoded temp file and check it as a reader would, every table
 * checksum included, before it may be renamed into DB/images. */
static int thaw_check(int tfd, const char *tmp, const char *lz, uint64_t size, uint64_t hsum,
                      unsigned flags, symdb_image **out, char *eb, size_t ebsz)
{
	void *map;
	int rc;

	if (fchmod(tfd, 0644) < 0 || fsync(tfd) < 0) { /* index files are public */
		rc = -errno;
		return fmt_err(eb, ebsz, rc, "%s: %s", tmp, symdb_strerror(rc));
	}
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, tfd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		return fmt_err(eb, ebsz, rc, "%s: mmap: %s", tmp, symdb_strerror(rc));
	}
	rc = rd_image_from_map(map, (size_t)size, lz, flags | SYMDB_OPEN_VERIFY_CHECKSUMS, out, eb,
	                       ebsz);
	if (rc == 0 && (rc = match_expected(*out, size, hsum, lz, eb, ebsz)) != 0) {
		rd_image_free(*out);
		*out = NULL;
	}
	return rc;
}

/* Rename (fd, from) to (tofd, to) unless to exists; link + unlink where the
 * filesystem has no RENAME_NOREPLACE.  -1 with errno (EEXIST: to exists). */
static int publish_noreplace(int fd, const char *from, int tofd, const char *to)
{
	if (renameat2(fd, from, tofd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (linkat(fd, from, tofd, to, 0) < 0)
		return -1;
	unlinkat(fd, from, 0);
	return 0;
}

/* Thaw into DB/tmp, then publish: rename over `path`, fsync, unlink the
 * .lz4, fsync (both forms exist in between, never neither).  dirfd is
 * path's directory, locked (rd_dir_lock).  Returns 1 without touching
 * anything when DB/tmp cannot be written.  *on_disk says whether the
 * thawed file was published (for the caller's report). */
static int thaw_publish(const char *dbdir, int dirfd, const char *path, const char *lz, int lzfd,
                        uint64_t size, uint64_t hsum, unsigned flags, int *on_disk,
                        symdb_image **out, char *eb, size_t ebsz)
{
	char tmp[PATH_MAX];
	struct target t = { .expect = size };
	rd_safedir td;
	int rc;

	if (tmp_name(dbdir, path, "thaw", tmp) != 0 || (t.fd = tmp_create(dbdir, tmp, &td)) < 0)
		return 1;
	rc = decode(lzfd, &t, lz, eb, ebsz);
	if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG || rc == -EIO) {
		/* DB/tmp cannot take the file (a full disk is a common reason to
		 * compact): answer from memory, as for a read-only database. */
		close(t.fd);
		unlinkat(td.fd, base_of(tmp), 0);
		rd_safedir_close(&td);
		if (eb && ebsz)
			eb[0] = 0;
		return lseek(lzfd, 0, SEEK_SET) == 0 ? 1 : rc;
	}
	if (rc == 0)
		rc = thaw_check(t.fd, tmp, lz, size, hsum, flags, out, eb, ebsz);
	close(t.fd); /* the mapping keeps the file alive */
	if (rc) {
		unlinkat(td.fd, base_of(tmp), 0);
		rd_safedir_close(&td);
		return rc;
	}
	/* NOREPLACE: a .symdb that appeared meanwhile is newer than ours. */
	if (publish_noreplace(td.fd, base_of(tmp), dirfd, base_of(path)) < 0) {
		/* Keep serving the mapping: it is valid, just not published; the
		 * .lz4 stays for the next open. */
		unlinkat(td.fd, base_of(tmp), 0);
		rd_safedir_close(&td);
		*on_disk = 0;
		return 0;
	}
	rd_safedir_close(&td);
	(void)fsync(dirfd);
	if (unlinkat(dirfd, base_of(lz), 0) == 0)
		(void)fsync(dirfd);
	*on_disk = 1;
	return 0;
}

int rd_cold_open(const char *dbdir, const char *path, uint64_t file_size, uint64_t header_sum,
                 unsigned flags, const rd_thaw_hook *hook, symdb_image **out, char *eb,
                 size_t ebsz)
{
	char lz[PATH_MAX];
	int lock, lzfd, rc, on_disk = 0;

	*out = NULL;
	if (fmt_layout_cold(lz, sizeof lz, path))
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s: path too long", path);
	lock = rd_dir_lock(path);
	if (lock == -ENOENT)
		return fmt_err(eb, ebsz, -ENOENT, "%s: %s", path, symdb_strerror(-ENOENT));
	/* Another thread or process may have thawed it while we waited. */
	rc = rd_image_map(path, flags, out, eb, ebsz);
	if (rc != -ENOENT) {
		rd_dir_unlock(lock);
		return rc;
	}
	lzfd = rd_safe_open_path(lz); /* inside DB: never followed (db_dir.h) */
	if (lzfd < 0) {
		rc = lzfd;
		rd_dir_unlock(lock);
		if (rc == -ENOENT) /* neither form: report the file the catalog names */
			return fmt_err(eb, ebsz, rc, "%s: %s", path, symdb_strerror(rc));
		return fmt_err(eb, ebsz, rc, "%s: %s", lz,
		               rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	}
	rc = 1;
	if (lock >= 0 && !(flags & SYMDB_OPEN_NO_THAW))
		rc = thaw_publish(dbdir, lock, path, lz, lzfd, file_size, header_sum, flags, &on_disk,
		                  out, eb, ebsz);
	if (rc == 1) /* read-only: the same bytes, in memory */
		rc = thaw_memory(lzfd, lz, file_size, header_sum, flags, out, eb, ebsz);
	close(lzfd);
	rd_dir_unlock(lock);
	if (rc == 0)
		note_decompression(hook, on_disk, lz);
	return rc;
}

int rd_cold_open_file(const char *lz, unsigned flags, const rd_thaw_hook *hook, symdb_image **out,
                      char *eb, size_t ebsz)
{
	/* A file inside a database is never followed (db_dir.h); one the
	 * caller named directly is the caller's choice. */
	int fd = (flags & RD_OPEN_IN_DB) ? rd_safe_open_path(lz) : open(lz, O_RDONLY | O_CLOEXEC);
	int rc = fd < 0 && !(flags & RD_OPEN_IN_DB) ? -errno : fd;

	*out = NULL;
	if (fd < 0)
		return fmt_err(eb, ebsz, rc, "%s: %s", lz,
		               rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	rc = thaw_memory(fd, lz, 0, 0, flags, out, eb, ebsz);
	close(fd);
	if (rc == 0)
		note_decompression(hook, 0, lz);
	return rc;
}

/* ---- compaction ----------------------------------------------------------- */

struct same_bytes {
	const uint8_t *orig;
	uint64_t len;
};

static int same_begin(void *arg, uint64_t size)
{
	const struct same_bytes *s = arg;

	return size == s->len ? 0 : SYMDB_E_CORRUPT;
}

static int same_sink(void *arg, const void *p, size_t n, uint64_t off)
{
	const struct same_bytes *s = arg;

	return memcmp(s->orig + off, p, n) == 0 ? 0 : SYMDB_E_CORRUPT;
}

/* Write the frame of img to a new temp file and read it back: the .symdb
 * is unlinked only after its cold form is known to decode to its bytes. */
static int compact_write(const char *dbdir, const char *path, const symdb_image *img,
                         char *tmp, rd_safedir *td, uint64_t *written, char *eb, size_t ebsz)
{
	struct same_bytes s = { img->map, img->map_len };
	rd_lz4_reader r = { .max = img->map_len, .begin = same_begin, .sink = same_sink,
	                    .arg = &s, .why = "the LZ4 frame does not decode to the index file" };
	int fd, rc;

	if ((rc = tmp_name(dbdir, path, "lz4", tmp)) != 0)
		return fmt_err(eb, ebsz, rc, "%s: path too long", dbdir);
	rd_advise_scan(img); /* compressed, then compared, front to back */
	fd = tmp_create(dbdir, tmp, td);
	if (fd < 0) {
		rc = fd;
		return fmt_err(eb, ebsz, rc, "%s: cannot create: %s", tmp,
		               rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	}
	rc = rd_lz4_write_frame(fd, img->map, img->map_len, written, tmp, eb, ebsz);
	if (rc == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || lseek(fd, 0, SEEK_SET) < 0))
		rc = fmt_err(eb, ebsz, -errno, "%s: %s", tmp, symdb_strerror(-errno));
	if (rc == 0)
		rc = rd_lz4_read_frame(fd, &r, tmp, eb, ebsz);
	/* Truncated under us (reader_fault.c): what was compressed may be
	 * zeros, and so was what it was compared with. */
	if (rc == 0 && rd_image_damaged(img))
		rc = fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		             "%s: index file changed while in use (truncated?): not compacted", path);
	close(fd);
	if (rc) {
		unlinkat(td->fd, base_of(tmp), 0);
		rd_safedir_close(td);
	}
	return rc;
}

/* Compact the file at path (entry e) under the directory lock; dirfd is
 * path's directory (rd_dir_lock: opened without following anything). */
static int compact_locked(symdb *db, int dirfd, const char *path, const rd_cat_entry *e,
                          symdb_compact_stats *st, char *eb, size_t ebsz)
{
	char lz[PATH_MAX], tmp[PATH_MAX];
	struct stat sb;
	symdb_image *img;
	rd_safedir td;
	int rc;

	if (fmt_layout_cold(lz, sizeof lz, path))
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s: path too long", path);
	/* In db's fault table: a truncation while it is read is an error. */
	rc = rd_image_map_in(path, SYMDB_OPEN_VERIFY_CHECKSUMS | RD_OPEN_IN_DB, db->cache, &img, eb,
	                     ebsz);
	if (rc == -ENOENT && fstatat(dirfd, base_of(lz), &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode)) {
		st->bytes_before = e->file_size;
		st->bytes_after = (uint64_t)sb.st_size;
		return 1; /* already cold */
	}
	if (rc)
		return rc;
	if (img->v.size != e->file_size || img->v.header_checksum != e->header_sum) {
		rd_image_free_in(db->cache, img);
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: File_Size/Header_Checksum differ from the catalog's: "
		               "not compacted (run 'symdb verify')", path);
	}
	rc = compact_write(db->dir, path, img, tmp, &td, &st->bytes_after, eb, ebsz);
	st->bytes_before = img->map_len;
	rd_image_free_in(db->cache, img);
	if (rc)
		return rc;
	if (renameat(td.fd, base_of(tmp), dirfd, base_of(lz)) < 0) {
		rc = -errno;
		unlinkat(td.fd, base_of(tmp), 0);
		rd_safedir_close(&td);
		return fmt_err(eb, ebsz, rc, "%s: rename: %s", lz, symdb_strerror(rc));
	}
	rd_safedir_close(&td);
	(void)fsync(dirfd);
	if (unlinkat(dirfd, base_of(path), 0) < 0) {
		rc = -errno;
		return fmt_err(eb, ebsz, rc, "%s: cannot remove: %s", path, symdb_strerror(rc));
	}
	(void)fsync(dirfd);
	return 0;
}

static int image_compact(symdb *db, const symdb_uuid *id, symdb_compact_stats *st, char *eb,
                         size_t ebsz);

int symdb_image_compact(symdb *db, const symdb_uuid *id, const symdb_open_opts *opts,
                        symdb_compact_stats *caller)
{
	symdb_compact_stats st;
	unsigned flags;
	size_t ebsz;
	char *eb;
	int rc;

	if ((rc = rd_opts(opts, 0, &flags, &eb, &ebsz)) != 0)
		return rc;
	if (caller && caller->sz < sizeof caller->sz)
		return SYMDB_E_INVAL;
	memset(&st, 0, sizeof st);
	st.sz = sizeof st;
	rc = image_compact(db, id, &st, eb, ebsz);
	if (rc == 1) { /* already cold */
		st.was_cold = 1;
		rc = 0;
	}
	if (caller)
		rd_out_put(caller, &st, sizeof st);
	return rc;
}

/* Returns 0 compacted, 1 already cold, or a negative error. */
static int image_compact(symdb *db, const symdb_uuid *id, symdb_compact_stats *st, char *eb,
                         size_t ebsz)
{
	const size_t names_sz = 2 * 65536 + 4; /* two u16-length strings */
	char *names, path[PATH_MAX];
	rd_cat_entry e;
	int rc, lock;

	if (!db || !id || id->len < 1 || id->len > SYMDB_UUID_MAX)
		return SYMDB_E_INVAL;
	names = malloc(names_sz);
	if (!names)
		return -ENOMEM;
	rc = rd_catalog_get(db->cat, id->bytes, id->len, &e, names, names_sz);
	if (rc == 0 && (size_t)snprintf(path, sizeof path, "%s/%s", db->dir, e.file) >= sizeof path)
		rc = -ENAMETOOLONG;
	if (rc) {
		free(names);
		if (rc == SYMDB_E_NOT_INDEXED)
			return rc;
		return fmt_err(eb, ebsz, rc, "%s/catalog: %s", db->dir, symdb_strerror(rc));
	}
	lock = rd_dir_lock(path);
	if (lock < 0)
		rc = fmt_err(eb, ebsz, lock, "%s: cannot lock its directory: %s", path,
		             rd_safe_why(lock) ? rd_safe_why(lock) : symdb_strerror(lock));
	/* Again under the lock: a build may have replaced the image meanwhile
	 * (publishers hold this lock from rename to commit, SPEC §12.5). */
	else if ((rc = rd_catalog_get(db->cat, id->bytes, id->len, &e, names, names_sz)) != 0)
		rc = rc == SYMDB_E_NOT_INDEXED
		             ? rc
		             : fmt_err(eb, ebsz, rc, "%s/catalog: %s", db->dir, symdb_strerror(rc));
	else
		rc = compact_locked(db, lock, path, &e, st, eb, ebsz);
	rd_dir_unlock(lock);
	free(names);
	return rc;
}

const char *symdb_layout_name(int part)
{
	switch (part) {
	case SYMDB_LAYOUT_IMAGES:
		return FMT_LAYOUT_IMAGES;
	case SYMDB_LAYOUT_TMP:
		return FMT_LAYOUT_TMP;
	case SYMDB_LAYOUT_INDEX_EXT:
		return FMT_LAYOUT_INDEX_EXT;
	case SYMDB_LAYOUT_COLD_EXT:
		return FMT_LAYOUT_COLD_EXT;
	case SYMDB_LAYOUT_MISSES:
		return FMT_LAYOUT_MISSES;
	}
	return NULL;
}

int symdb_cold_remove_redundant(symdb *db, const char *cold_rel, const symdb_open_opts *opts,
                                int *removed)
{
	const size_t ext = sizeof FMT_LAYOUT_COLD_EXT - 1;
	char lz[PATH_MAX], path[PATH_MAX], *eb;
	const char *name;
	unsigned flags;
	size_t n, ebsz;
	struct stat sb;
	rd_safedir d;
	int rc;

	if (removed)
		*removed = 0;
	if ((rc = rd_opts(opts, 0, &flags, &eb, &ebsz)) != 0)
		return rc;
	if (!db || !cold_rel || (n = strlen(cold_rel)) <= ext ||
	    strcmp(cold_rel + n - ext, FMT_LAYOUT_COLD_EXT) != 0)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "%s: not a cold form (*%s)",
		               cold_rel ? cold_rel : "(null)", FMT_LAYOUT_COLD_EXT);
	if (fmt_layout_file(lz, sizeof lz, db->dir, cold_rel))
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s/%s: path too long", db->dir, cold_rel);
	memcpy(path, lz, strlen(lz) - ext);
	path[strlen(lz) - ext] = 0;
	rc = rd_safedir_lock_of(&d, lz, &name);
	if (rc < 0)
		return fmt_err(eb, ebsz, rc, "%s: cannot lock its directory: %s", lz,
		               rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	/* Only a safe regular .lz4 next to a safe .symdb goes (db_dir.h). */
	if (rd_safe_stat(&d, base_of(path), &sb) < 0) {
		rc = 0; /* not redundant: the image's only form */
	} else if ((rc = rd_safe_stat(&d, name, &sb)) == 0) {
		if (unlinkat(d.fd, name, 0) < 0) {
			rc = -errno;
		} else {
			(void)rd_safedir_sync(&d);
			if (removed)
				*removed = 1;
		}
	}
	if (rc == -ENOENT)
		rc = 0; /* someone else removed it: not ours to count */
	else if (rc)
		fmt_err(eb, ebsz, rc, "%s: %s", lz,
		        rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	rd_safedir_close(&d); /* drops the lock */
	return rc;
}
