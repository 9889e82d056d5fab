/* SPDX-License-Identifier: MIT */
/*
 * reader_open.c - opening a database and mapping its index files.
 *
 * An image is opened with open(O_RDONLY|O_CLOEXEC), fstat, and one read-only
 * shared mapping of the whole file; format/ then validates the header and
 * directory against the fstat size (SPEC §5 File_Size: a truncated file is an
 * error, not a SIGBUS).  Through a database, the file must also match the
 * catalog's File_Size and Header_Checksum (SPEC §12.3), which catches a file
 * replaced behind the catalog's back.  When the file is missing, its cold
 * form (`.symdb.lz4`, SPEC §12.8) is thawed by reader_cold.c and mapped the
 * same way, so every caller, including open by binary path, gets it
 * transparently.  Each db keeps a cache of its mapped images (rd_cache), so
 * threads opening the same UUID share one reference-counted mapping;
 * resolving never takes a lock.
 *
 * Locking rules (symdb.h "Threads"):
 *  1. The cache's mutex is a leaf lock: held only to look an image up, link
 *     or unlink it, count its references and put its mapping in the fault
 *     table or take it out (reader_fault.c), never across a catalog
 *     transaction, a file open, mmap, validation or a thaw.  (A catalog
 *     transaction may wait for the catalog's resize lock after another
 *     process grew the map, and a symdb_list() callback may be waiting for
 *     this mutex: holding it there deadlocked; a thaw held it through LZ4
 *     decoding and fsync.)  An open is therefore: read the catalog entry,
 *     look in the cache (locked), map or thaw (unlocked), link (locked; if
 *     another thread linked the same file meanwhile, share theirs and unmap
 *     ours).
 *  2. Every image that came from a db holds a reference to the db's cache,
 *     and symdb_close() drops only the db's own: an image superseded by a
 *     re-index and closed after (or while) its db is closed still locks a
 *     live mutex.
 *  3. A file that disagrees with the entry read just before it may be a
 *     re-index caught between its rename and its catalog commit
 *     (publishers hold the flock of DB/images/XX/ across both, SPEC §12.5):
 *     wait for that flock, re-read the entry and retry, RD_OPEN_TRIES times
 *     in all; a file that still disagrees is SYMDB_E_CORRUPT.
 */
#define _GNU_SOURCE /* O_CLOEXEC, madvise, PATH_MAX */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_dir.h"
#include "format_layout.h"
#include "format_symsrc.h"
#include "reader_advise.h"
#include "reader_internal.h"
#include "symdb_endian.h"

/* Attempts at an image whose file disagrees with its catalog entry (rule 3):
 * one re-index caught mid-publish needs two; more allow for a few back to
 * back. */
#define RD_OPEN_TRIES 4

#define RD_OPEN_NAMES (SYMDB_OPEN_NAMES_SYMTAB | SYMDB_OPEN_NAMES_DYNSYM)
#define RD_OPEN_KNOWN \
	(SYMDB_OPEN_WRITE | SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_CREATE | SYMDB_OPEN_NO_THAW | \
	 RD_OPEN_NAMES)

/* Point the hoisted table fields at the view's tables. */
static void hoist_tables(symdb_image *img)
{
	const fmt_view *v = &img->v;

	img->aw = v->address_size;
	img->base = v->base_address;
	img->strs = v->t[FMT_T_STRINGS].p;
	img->nstrs = v->t[FMT_T_STRINGS].length;
	img->segs = v->t[FMT_T_SEGMENTS].p;
	img->nsegs = v->t[FMT_T_SEGMENTS].count;
	img->saddr = v->t[FMT_T_SYMBOL_ADDRS].p;
	img->syms = v->t[FMT_T_SYMBOLS].p;
	img->nsyms = v->t[FMT_T_SYMBOLS].count;
	img->files = v->t[FMT_T_FILES].p;
	img->nfiles = v->t[FMT_T_FILES].count;
	img->fns = v->t[FMT_T_FUNCTIONS].p;
	img->nfns = v->t[FMT_T_FUNCTIONS].count;
	img->iaddr = v->t[FMT_T_INLINE_ADDRS].p;
	img->imap = v->t[FMT_T_INLINE_MAP].p;
	img->nimap = v->t[FMT_T_INLINE_MAP].count;
	img->nodes = v->t[FMT_T_INLINE_NODES].p;
	img->nnodes = v->t[FMT_T_INLINE_NODES].count;
	img->laddr = v->t[FMT_T_LINE_ADDRS].p;
	img->rows = v->t[FMT_T_LINE_ROWS].p;
	img->nrows = v->t[FMT_T_LINE_ROWS].count;
	img->packed = v->packed;
	img->niblk = v->t[FMT_T_INLINE_ADDRS].count;
	img->imap_len = v->t[FMT_T_INLINE_MAP].length;
	img->nlblk = v->t[FMT_T_LINE_ADDRS].count;
	img->rows_len = v->t[FMT_T_LINE_ROWS].length;
	img->binfo = v->t[FMT_T_BUILD_INFO].p;
	img->nbinfo = v->t[FMT_T_BUILD_INFO].count;
	/* format_header.c checked its Count against SYMBOLS. */
	img->sfiles = v->t[FMT_T_SYMBOL_FILES].p;
	img->fsrcs = v->t[FMT_T_FILE_SOURCES].p;
	img->nfsrcs = v->t[FMT_T_FILE_SOURCES].count;
}

/* BUILD_INFO counter i, 0 when absent (§7.7). */
static uint64_t build_info(const symdb_image *img, unsigned i)
{
	return i < img->nbinfo ? fmt_be64(img->binfo + (uint64_t)i * FMT_BI_SIZE) : 0;
}

/*
 * SPEC §7.2.2: point the symbol columns at the stored table llvm-symbolizer
 * 14 would read from the file a request names.  `names` (SYMDB_OPEN_NAMES_*)
 * is that file's kind of table; the image's own table answers when it is
 * that kind, when the request names none, and for an index that does not
 * record its kind (1.0 files, Mach-O); else ALT_SYMBOL_* when they are that
 * kind; else the own table, noted as missing.
 */
static void pick_symbols(symdb_image *img, unsigned names)
{
	const fmt_view *v = &img->v;
	uint64_t want = (names & SYMDB_OPEN_NAMES_SYMTAB)   ? FMT_BI_SYMSRC_SYMTAB
	                : (names & SYMDB_OPEN_NAMES_DYNSYM) ? FMT_BI_SYMSRC_DYNSYM
	                                                    : 0;
	uint64_t own = build_info(img, FMT_BI_SYMBOL_SOURCE);

	img->names = names & RD_OPEN_NAMES;
	img->alt = img->names_missing = 0;
	if (!want || !own || own == FMT_BI_SYMSRC_NLIST || own == want)
		return;
	if (v->t[FMT_T_ALT_SYMBOLS].p && build_info(img, FMT_BI_ALT_SYMBOL_SOURCE) == want) {
		img->saddr = v->t[FMT_T_ALT_SYMBOL_ADDRS].p;
		img->syms = v->t[FMT_T_ALT_SYMBOLS].p;
		img->nsyms = v->t[FMT_T_ALT_SYMBOLS].count;
		img->sfiles = v->t[FMT_T_ALT_SYMBOL_FILES].p;
		img->alt = 1;
		return;
	}
	img->names_missing = 1;
}

static int map_fd(int fd, const char *path, void **map, size_t *len, char *eb, size_t ebsz)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return fmt_err(eb, ebsz, -errno, "%s: fstat: %s", path, symdb_strerror(-errno));
	if (!S_ISREG(st.st_mode))
		return fmt_err(eb, ebsz, SYMDB_E_FORMAT, "%s: not a regular file", path);
	if ((uint64_t)st.st_size < FMT_HEADER_SIZE)
		return fmt_err(eb, ebsz, st.st_size < FMT_MAGIC_LEN ? SYMDB_E_FORMAT : SYMDB_E_CORRUPT,
		               "%s: truncated: file is %lld bytes, header needs %d", path,
		               (long long)st.st_size, FMT_HEADER_SIZE);
	if ((uint64_t)st.st_size > SIZE_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_TOO_BIG, "%s: too big to map", path);
	*len = (size_t)st.st_size;
	*map = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED) {
		int rc = -errno;
		return fmt_err(eb, ebsz, rc, "%s: mmap: %s", path, symdb_strerror(rc));
	}
	rd_advise_map(*map, *len);
	return 0;
}

/* Every table checksum: a read through the whole file, with readahead
 * while it lasts (reader_advise.c). */
static int check_sums(const symdb_image *img, char *why, size_t whysz)
{
	int rc;

	rd_advise_scan(img);
	rc = fmt_view_check_sums(&img->v, why, whysz);
	rd_advise_lookup(img);
	return rc;
}

static int validate(symdb_image *img, const char *path, unsigned flags, char *eb, size_t ebsz)
{
	char why[256];
	int rc;

	why[0] = 0;
	rc = fmt_view_parse(img->map, img->map_len, &img->v, why, sizeof why);
	if (rc == 0 && (flags & SYMDB_OPEN_VERIFY_CHECKSUMS))
		rc = check_sums(img, why, sizeof why);
	if (rc)
		return fmt_err(eb, ebsz, rc, "%s: %s", path, why);
	return 0;
}

/* Put img's mapping in c's fault table, or take it out (before the munmap):
 * the table's writers hold the cache's lock (reader_fault.c). */
static void fault_track(rd_cache *c, symdb_image *img, int on)
{
	pthread_mutex_lock(&c->lock);
	if (on)
		rd_fault_register(&c->fault, img);
	else
		rd_fault_unregister(img);
	pthread_mutex_unlock(&c->lock);
}

/* rd_image_from_map(), with the mapping in the fault table of c (a db's
 * cache, or NULL) before validation reads it: a file truncated while its
 * checksums are verified is then an error, not a SIGBUS (reader_fault.c). */
static int image_from_map(void *map, size_t len, const char *path, unsigned flags, rd_cache *c,
                          symdb_image **out, char *eb, size_t ebsz)
{
	symdb_image *img = calloc(1, sizeof *img);
	int rc;

	*out = NULL;
	if (!img) {
		munmap(map, len);
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	}
	img->map = map;
	img->map_len = len;
	if (c)
		fault_track(c, img, 1);
	rc = validate(img, path, flags, eb, ebsz);
	if (rc == 0)
		rd_image_note_tail(img, RD_TAIL_PAGE);
	if (rd_image_damaged(img)) /* what validate read may be zeros */
		rc = fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "%s: truncated while being opened", path);
	if (rc && c)
		fault_track(c, img, 0);
	if (rc) {
		rd_image_free(img);
		return rc;
	}
	hoist_tables(img);
	img->refs = 1;
	*out = img;
	return 0;
}

int rd_image_from_map(void *map, size_t len, const char *path, unsigned flags,
                      symdb_image **out, char *eb, size_t ebsz)
{
	return image_from_map(map, len, path, flags, NULL, out, eb, ebsz);
}

/* rd_image_map() with the mapping in a fault table from the start. */
static int image_map(const char *path, unsigned flags, rd_cache *c, symdb_image **out,
                     char *eb, size_t ebsz)
{
	void *map = NULL;
	size_t len = 0;
	int fd, rc;

	*out = NULL;
	/* A file inside a database is reached without following anything
	 * (db_dir.h); a path the caller named is the caller's choice. */
	fd = (flags & RD_OPEN_IN_DB) ? rd_safe_open_path(path) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = (flags & RD_OPEN_IN_DB) ? fd : -errno;
		return fmt_err(eb, ebsz, rc, "%s: %s", path,
		               rd_safe_why(rc) ? rd_safe_why(rc) : symdb_strerror(rc));
	}
	rc = map_fd(fd, path, &map, &len, eb, ebsz);
	close(fd); /* the mapping keeps the file alive */
	if (rc)
		return rc;
	return image_from_map(map, len, path, flags, c, out, eb, ebsz);
}

int rd_image_map(const char *path, unsigned flags, symdb_image **out, char *eb, size_t ebsz)
{
	return image_map(path, flags, NULL, out, eb, ebsz);
}

int rd_image_map_in(const char *path, unsigned flags, rd_cache *c, symdb_image **out,
                    char *eb, size_t ebsz)
{
	return image_map(path, flags, c, out, eb, ebsz);
}

void rd_image_free_in(rd_cache *c, symdb_image *img)
{
	if (img && c)
		fault_track(c, img, 0); /* before the munmap */
	rd_image_free(img);
}

void rd_image_free(symdb_image *img)
{
	if (!img)
		return;
	assert(!img->fault_slot); /* taken out of its fault table under its lock */
	if (img->map && img->map != MAP_FAILED)
		munmap(img->map, img->map_len);
	free(img);
}

static int same_uuid(const symdb_image *img, const uint8_t *bytes, size_t len)
{
	return img->v.uuid_len == len && memcmp(img->v.uuid, bytes, len) == 0;
}

static int same_file(const symdb_image *img, uint64_t size, uint64_t header_sum)
{
	return img->v.size == size && img->v.header_checksum == header_sum;
}

/* A reference to the cached image of id that is the file entry e
 * describes, or NULL.  A mapping that faulted (symdb_fault_recover) is not
 * shared: the file is mapped and validated afresh, as after a re-index. */
static symdb_image *cache_get(rd_cache *c, const symdb_uuid *id, const rd_cat_entry *e,
                              unsigned names)
{
	symdb_image *img;

	pthread_mutex_lock(&c->lock);
	for (img = c->images; img; img = img->next)
		if (same_uuid(img, id->bytes, id->len) && same_file(img, e->file_size, e->header_sum) &&
		    img->names == names && !rd_image_damaged(img))
			break;
	if (img)
		img->refs++;
	pthread_mutex_unlock(&c->lock);
	return img;
}

/* Unlink img from the cache's list.  Called with the lock held. */
static void cache_unlink(rd_cache *c, symdb_image *img)
{
	symdb_image **pp;

	for (pp = &c->images; *pp; pp = &(*pp)->next)
		if (*pp == img) {
			*pp = img->next;
			break;
		}
	img->next = NULL;
	img->listed = 0;
}

/* Link a freshly mapped image (refs 1) and return the image to hand out:
 * img, or the same file another thread linked while we mapped it (img is
 * then freed).  Another file of the same UUID is unlinked: superseded by a
 * re-index, its holders keep it and nobody new finds it. */
static symdb_image *cache_put(rd_cache *c, symdb_image *img)
{
	symdb_image *old, *next, *keep = img;

	pthread_mutex_lock(&c->lock);
	for (old = c->images; old; old = next) {
		next = old->next;
		if (!same_uuid(old, img->v.uuid, img->v.uuid_len))
			continue;
		if (same_file(old, img->v.size, img->v.header_checksum) && old->names != img->names)
			continue; /* the same file for requests naming another table (§7.2.2) */
		if (same_file(old, img->v.size, img->v.header_checksum) && !rd_image_damaged(old)) {
			old->refs++;
			keep = old;
			break;
		}
		cache_unlink(c, old);
	}
	if (keep == img) {
		img->cache = c;
		c->owners++;
		img->listed = 1;
		img->next = c->images;
		c->images = img;
		if (!img->fault_slot) /* thawed (reader_cold.c): not yet */
			rd_fault_register(&c->fault, img);
	} else {
		rd_fault_unregister(img);
	}
	pthread_mutex_unlock(&c->lock);
	if (keep != img)
		rd_image_free(img);
	return keep;
}

static int cache_new(rd_cache **out)
{
	rd_cache *c = calloc(1, sizeof *c);
	int rc;

	if (!c)
		return -ENOMEM;
	rc = pthread_mutex_init(&c->lock, NULL);
	if (rc) {
		free(c);
		return -rc;
	}
	c->owners = 1;
	rd_fault_init(&c->fault);
	*out = c;
	return 0;
}

/* Drop one owner reference; the last frees the cache.  Nobody else can
 * reach it then: no db, no image points to it. */
static void cache_release(rd_cache *c)
{
	int last;

	pthread_mutex_lock(&c->lock);
	last = --c->owners == 0;
	pthread_mutex_unlock(&c->lock);
	if (last) {
		rd_fault_fini(&c->fault);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
}

int symdb_open(const char *dir, const symdb_open_opts *opts, symdb **out)
{
	symdb_open_opts o;
	char *eb;
	size_t ebsz, n;
	unsigned flags, cflags = 0;
	symdb *db;
	int rc;

	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	rc = rd_opts_get(opts, RD_OPEN_KNOWN, &o);
	if (rc)
		return rc;
	flags = o.flags;
	eb = o.errbuf;
	ebsz = o.errbuf_sz;
	/* The library reads no environment: the caller resolves a default
	 * (symdb_default_dir); the words are those the CLI has always shown. */
	if (!dir)
		return fmt_err(eb, ebsz, -ENOENT, "no database directory: set SYMDB_DIR or HOME");
	n = strlen(dir);
	db = calloc(1, sizeof *db + n + 1);
	if (!db)
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", dir);
	memcpy(db->dir, dir, n + 1);
	db->thaw.fn = o.on_decompress;
	db->thaw.arg = o.on_decompress_arg;
	if (flags & (SYMDB_OPEN_WRITE | SYMDB_OPEN_CREATE))
		cflags |= RD_CAT_WRITE;
	if (flags & SYMDB_OPEN_CREATE)
		cflags |= RD_CAT_CREATE;
	rc = rd_catalog_open(dir, cflags, &db->cat, eb, ebsz);
	if (rc == 0 && (rc = cache_new(&db->cache)) != 0) {
		rd_catalog_close(db->cat);
		fmt_err(eb, ebsz, rc, "%s: %s", dir, symdb_strerror(rc));
	}
	if (rc) {
		free(db);
		return rc;
	}
	*out = db;
	return 0;
}

void symdb_close(symdb *db)
{
	if (!db)
		return;
	/* Images still open keep the cache alive (rule 2): their last close
	 * frees it, without touching this handle. */
	cache_release(db->cache);
	rd_catalog_close(db->cat);
	free(db);
}

const char *symdb_dir(const symdb *db)
{
	return db ? db->dir : NULL;
}

/* The catalog promised this file (SPEC §12.3): it must still be the file the
 * catalog describes, and it must be the image asked for. */
static int match_catalog(const symdb_image *img, const rd_cat_entry *e, const symdb_uuid *id,
                         const char *path, char *eb, size_t ebsz)
{
	if (img->v.size != e->file_size || img->v.header_checksum != e->header_sum)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: File_Size/Header_Checksum (0x%llx/0x%016llx) differ from the "
		               "catalog's (0x%llx/0x%016llx): file replaced behind the catalog",
		               path, (unsigned long long)img->v.size,
		               (unsigned long long)img->v.header_checksum,
		               (unsigned long long)e->file_size, (unsigned long long)e->header_sum);
	if (img->v.uuid_len != id->len || memcmp(img->v.uuid, id->bytes, id->len) != 0)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "%s: header UUID differs from the catalog key",
		               path);
	return 0;
}

/* Fetch the catalog entry of id into *e (strings in strbuf) and build its
 * file's path (PATH_MAX bytes). */
static int fetch_entry(symdb *db, const symdb_uuid *id, rd_cat_entry *e, char *strbuf,
                       size_t strbuf_sz, char *path, char *eb, size_t ebsz)
{
	int rc, n;

	rc = rd_catalog_get(db->cat, id->bytes, id->len, e, strbuf, strbuf_sz);
	if (rc == SYMDB_E_NOT_INDEXED) {
		char hex[2 * SYMDB_UUID_MAX + 1];
		symdb_uuid_format(id, hex);
		return fmt_err(eb, ebsz, rc, "%s: image %s is not indexed", db->dir, hex);
	}
	if (rc == -ENAMETOOLONG)
		return rc; /* the caller retries with a bigger buffer */
	if (rc)
		return fmt_err(eb, ebsz, rc, "%s: catalog lookup: %s", db->dir, symdb_strerror(rc));
	n = snprintf(path, PATH_MAX, "%s/%s", db->dir, e->file);
	if (n < 0 || n >= PATH_MAX)
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s/%s: path too long", db->dir, e->file);
	return 0;
}

/* Share a cached image, checking its table checksums first if asked. */
static int share(symdb_image *img, unsigned flags, const char *path, symdb_image **out,
                 char *eb, size_t ebsz)
{
	if (flags & SYMDB_OPEN_VERIFY_CHECKSUMS) {
		char why[200] = "";
		int rc = check_sums(img, why, sizeof why);
		if (rc) {
			symdb_image_close(img);
			return fmt_err(eb, ebsz, rc, "%s: %s", path, why);
		}
	}
	*out = img;
	return 0;
}

/* Wait until no publisher is between its rename and its catalog commit in
 * path's directory: they hold its flock across both (SPEC §12.5). */
static void wait_for_publisher(const char *path)
{
	rd_dir_unlock(rd_dir_lock(path));
}

/* Open (or share) the image the catalog currently lists for id, holding no
 * lock but the cache's, and that only briefly (rules 1 and 3 above).  A
 * cached mapping is reused only while the catalog still describes the same
 * file: after a re-index (a new file renamed over the old, SPEC §12.5) the
 * next open maps the new file, and the old mapping stays valid for the
 * references that hold it. */
static int open_entry(symdb *db, const symdb_uuid *id, unsigned flags, const rd_thaw_hook *hook,
                      char *strbuf, size_t strbuf_sz, symdb_image **out, char *eb, size_t ebsz)
{
	char path[PATH_MAX];
	rd_cat_entry e = { .file_size = 0 };
	symdb_image *img;
	int rc, tries;

	for (tries = 1;; tries++) {
		rc = fetch_entry(db, id, &e, strbuf, strbuf_sz, path, eb, ebsz);
		if (rc)
			return rc;
		img = cache_get(db->cache, id, &e, flags & RD_OPEN_NAMES);
		if (img)
			return share(img, flags, path, out, eb, ebsz);
		/* RD_OPEN_IN_DB: nothing inside DB is followed (db_dir.h). */
		rc = image_map(path, flags | RD_OPEN_IN_DB, db->cache, &img, eb, ebsz);
		if (rc == -ENOENT) /* cold storage, SPEC §12.8 */
			rc = rd_cold_open(db->dir, path, e.file_size, e.header_sum,
			                  flags | RD_OPEN_IN_DB, hook, &img, eb, ebsz);
		if (rc)
			return rc;
		rc = match_catalog(img, &e, id, path, eb, ebsz);
		if (rc == 0) {
			pick_symbols(img, flags);
			*out = cache_put(db->cache, img);
			return 0;
		}
		fault_track(db->cache, img, 0);
		rd_image_free(img);
		if (tries == RD_OPEN_TRIES)
			return rc; /* really not the file the catalog describes */
		wait_for_publisher(path);
	}
}

int symdb_image_open_uuid(symdb *db, const symdb_uuid *id, const symdb_open_opts *opts,
                          symdb_image **out)
{
	/* Catalog strings: a relative path and an image name, u16-length each
	 * (SPEC §12.3).  The stack buffer fits any real entry; the heap one any
	 * possible entry (128 KiB is too much for a small thread stack). */
	enum { BIG = 2 * (65535 + 1) };
	char small[2048], *big;
	symdb_open_opts o;
	rd_thaw_hook hook;
	unsigned flags;
	char *eb;
	size_t ebsz;
	int rc;

	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	rc = rd_opts_get(opts, RD_OPEN_KNOWN, &o);
	if (rc)
		return rc;
	flags = o.flags;
	eb = o.errbuf;
	ebsz = o.errbuf_sz;
	if (!db || !id || id->len < 1 || id->len > SYMDB_UUID_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "invalid database handle or UUID");
	hook = o.on_decompress ? (rd_thaw_hook){ o.on_decompress, o.on_decompress_arg } : db->thaw;
	rc = open_entry(db, id, flags, &hook, small, sizeof small, out, eb, ebsz);
	if (rc == -ENAMETOOLONG) {
		big = malloc(BIG);
		rc = big ? open_entry(db, id, flags, &hook, big, BIG, out, eb, ebsz) : -ENOMEM;
		free(big);
		if (rc == -ENAMETOOLONG || rc == -ENOMEM)
			fmt_err(eb, ebsz, rc, "%s: catalog entry: %s", db->dir, symdb_strerror(rc));
	}
	return rc;
}

int symdb_image_open_binary(symdb *db, const char *binary_path, const symdb_open_opts *opts,
                            symdb_image **out)
{
	symdb_open_opts o;
	symdb_uuid id;
	int rc;

	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	rc = symdb_file_uuid(binary_path, opts, &id);
	if (rc)
		return rc;
	rc = rd_opts_get(opts, RD_OPEN_KNOWN, &o);
	if (rc)
		return rc;
	if (!(o.flags & RD_OPEN_NAMES))
		o.flags |= symdb_file_symbol_table(binary_path);
	return symdb_image_open_uuid(db, &id, &o, out);
}

unsigned symdb_file_symbol_table(const char *path)
{
	struct stat st;
	unsigned src = FMT_BI_SYMSRC_NONE;
	int fd;

	if (!path)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		src = fmt_elf_symbol_source(fd, (uint64_t)st.st_size);
	close(fd);
	return src == FMT_BI_SYMSRC_SYMTAB   ? SYMDB_OPEN_NAMES_SYMTAB
	       : src == FMT_BI_SYMSRC_DYNSYM ? SYMDB_OPEN_NAMES_DYNSYM
	                                     : 0;
}

int symdb_image_open_file(const char *index_path, const symdb_open_opts *opts, symdb_image **out)
{
	symdb_open_opts o;
	rd_thaw_hook hook;
	unsigned flags;
	char *eb;
	size_t ebsz, n;
	int rc;

	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	rc = rd_opts_get(opts, RD_OPEN_KNOWN, &o);
	if (rc)
		return rc;
	flags = o.flags;
	eb = o.errbuf;
	ebsz = o.errbuf_sz;
	hook = (rd_thaw_hook){ o.on_decompress, o.on_decompress_arg };
	if (!index_path)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "no index file path");
	n = strlen(index_path);
	if (n > sizeof FMT_LAYOUT_COLD_EXT - 1 &&
	    strcmp(index_path + n - (sizeof FMT_LAYOUT_COLD_EXT - 1), FMT_LAYOUT_COLD_EXT) == 0)
		return rd_cold_open_file(index_path, flags, &hook, out, eb, ebsz);
	return rd_image_map(index_path, flags, out, eb, ebsz);
}

int symdb_image_data(const symdb_image *img, const void **data, size_t *size)
{
	if (!img || !data || !size)
		return SYMDB_E_INVAL;
	*data = img->map;
	*size = img->map_len;
	return 0;
}

void symdb_image_close(symdb_image *img)
{
	rd_cache *c;
	int last;

	if (!img)
		return;
	c = img->cache;
	if (c) {
		/* c is alive: img holds one of its owner references (rule 2). */
		pthread_mutex_lock(&c->lock);
		last = --img->refs == 0;
		if (last && img->listed)
			cache_unlink(c, img);
		if (last)
			rd_fault_unregister(img); /* before the munmap */
		pthread_mutex_unlock(&c->lock);
		if (last) {
			rd_image_free(img);
			cache_release(c);
		}
		return;
	}
	/* Opened by file: never shared through a cache. */
	if (__atomic_sub_fetch(&img->refs, 1, __ATOMIC_ACQ_REL) == 0)
		rd_image_free(img);
}
