/* SPDX-License-Identifier: MIT */
/*
 * serve_images.c - the image endpoints of `symdb serve`:
 *
 *   POST /v1/images              an object file as the body, indexed by the
 *                                sandboxed symdb-indexer and published
 *   GET  /v1/images/{id}         its catalog entry as JSON
 *   GET  /v1/images/{id}/index   the index file itself, for another symdb
 *                                to import (`symdb import`)
 *   GET  /symdb/v1/XX/{id}.symdb the same, in the upstream store layout
 *                                (SPEC §12.9) that `symdb export --tree`
 *                                writes for static servers
 *
 * An upload is streamed into a file of the server's own naming in the
 * database's tmp directory (O_EXCL, 0600), never a name the client chose,
 * limited to lim.max_upload bytes, fsynced, and handed to the builder of
 * symdb_build.h, which parses it only inside symdb-indexer and publishes
 * nothing unless the whole pipeline succeeds.  The file is removed in the
 * endpoint's cleanup, which runs for every request, aborted ones included,
 * so a client that disconnects midway leaves neither a file nor an image.
 *
 * Two pieces of shared state, one mutex: the indexer slots (at most
 * lim.max_indexers builder runs at once) and the set of UUIDs claimed by an
 * upload in progress.  An upload claims all the UUIDs of its file at once
 * (all or none, so two uploads cannot deadlock) before it takes a slot, so
 * identical uploads wait for the first one without holding a slot, and then
 * find their image already indexed (the builder skips an image indexed
 * from the same bytes without running the indexer).  Waits end at the
 * request's deadline with 503 + Retry-After.
 */
#define _GNU_SOURCE
#include "serve.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symdb_build.h"

#define UPLOAD_PREFIX "upload."   /* the temp file while the body streams in */
#define UPLOAD_NAMED "upload-"    /* then upload-UUIDHEX: the image's name */
#define RETRY_AFTER_S 2
#define NAMEBUF_SZ (2 * 65536 + 4096) /* symdb_lookup: two names and a path */

struct images_claim {
	symdb_uuid id;
	struct images_claim *next;
};

struct serve_images {
	symdb_builder *b;
	char tmp_dir[PATH_MAX];
	char indexer[PATH_MAX];       /* "" = the builder's default */
	uint32_t max_indexers;
	pthread_mutex_t mu;
	pthread_cond_t cv;            /* on CLOCK_MONOTONIC: slot or claim freed */
	uint32_t running;             /* builder runs in progress */
	struct images_claim *claims;  /* UUIDs of uploads in progress */
};

/* One upload, from its first body byte to its cleanup. */
struct upload {
	int fd;
	char path[PATH_MAX];          /* "" once removed */
	uint64_t got;
};

/* ---- create / free ----------------------------------------------------- */

/* The symdb-indexer beside this executable, as the CLI finds it. */
static void indexer_beside_self(char *buf, size_t sz)
{
	ssize_t n = readlink("/proc/self/exe", buf, sz - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= sz - 1) {
		buf[0] = 0;
		return;
	}
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + sizeof "/symdb-indexer" > sz) {
		buf[0] = 0;
		return;
	}
	memcpy(slash, "/symdb-indexer", sizeof "/symdb-indexer");
	if (access(buf, X_OK) != 0)
		buf[0] = 0;
}

static int images_init_sync(struct serve_images *im)
{
	pthread_condattr_t ca;
	int rc;

	if (pthread_mutex_init(&im->mu, NULL))
		return -ENOMEM;
	if (pthread_condattr_init(&ca)) {
		pthread_mutex_destroy(&im->mu);
		return -ENOMEM;
	}
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&im->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (rc) {
		pthread_mutex_destroy(&im->mu);
		return -ENOMEM;
	}
	return 0;
}

/* DB/tmp (or srv->tmp_dir) must exist and be a real directory: an upload
 * is never written through a symbolic link. */
static int images_tmp_dir(struct serve_images *im, const struct serve_server *srv, char *errbuf,
                          size_t errbuf_sz)
{
	struct stat st;
	int n = srv->tmp_dir ? snprintf(im->tmp_dir, sizeof im->tmp_dir, "%s", srv->tmp_dir)
	                     : snprintf(im->tmp_dir, sizeof im->tmp_dir, "%s/%s", srv->db_dir,
	                                symdb_layout_name(SYMDB_LAYOUT_TMP));

	if (n < 0 || (size_t)n >= sizeof im->tmp_dir)
		return snprintf(errbuf, errbuf_sz, "upload directory: path too long"), -ENAMETOOLONG;
	if (mkdir(im->tmp_dir, 0700) < 0 && errno != EEXIST)
		return snprintf(errbuf, errbuf_sz, "%s: %s", im->tmp_dir, strerror(errno)), -errno;
	if (lstat(im->tmp_dir, &st) < 0)
		return snprintf(errbuf, errbuf_sz, "%s: %s", im->tmp_dir, strerror(errno)), -errno;
	if (!S_ISDIR(st.st_mode)) {
		snprintf(errbuf, errbuf_sz, "%s: %s", im->tmp_dir,
		         S_ISLNK(st.st_mode) ? "symbolic link, not followed" : "not a directory");
		return -ENOTDIR;
	}
	return 0;
}

int serve_images_create(const struct serve_server *srv, struct serve_images **out, char *errbuf,
                        size_t errbuf_sz)
{
	struct serve_images *im;
	int rc;

	*out = NULL;
	im = calloc(1, sizeof *im);
	if (!im)
		return -ENOMEM;
	im->max_indexers = srv->lim.max_indexers ? srv->lim.max_indexers : 1;
	if (srv->indexer_path)
		snprintf(im->indexer, sizeof im->indexer, "%s", srv->indexer_path);
	else
		indexer_beside_self(im->indexer, sizeof im->indexer);
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = errbuf, .errbuf_sz = errbuf_sz);
	rc = symdb_builder_open(srv->db_dir, &bo, &im->b);
	if (rc == 0)
		rc = images_tmp_dir(im, srv, errbuf, errbuf_sz);
	if (rc == 0 && (rc = images_init_sync(im)) != 0)
		snprintf(errbuf, errbuf_sz, "images: %s", symdb_strerror(rc));
	if (rc) {
		symdb_builder_close(im->b);
		free(im);
		return rc;
	}
	*out = im;
	return 0;
}

void serve_images_free(struct serve_images *im)
{
	if (!im)
		return;
	while (im->claims) { /* none once every request is done; freed anyway */
		struct images_claim *c = im->claims;
		im->claims = c->next;
		free(c);
	}
	pthread_cond_destroy(&im->cv);
	pthread_mutex_destroy(&im->mu);
	symdb_builder_close(im->b);
	free(im);
}

/* ---- slots and claims -------------------------------------------------- */

static void deadline_ts(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

static int claimed(const struct serve_images *im, const symdb_uuid *id)
{
	for (const struct images_claim *c = im->claims; c; c = c->next)
		if (c->id.len == id->len && memcmp(c->id.bytes, id->bytes, id->len) == 0)
			return 1;
	return 0;
}

static int any_claimed(const struct serve_images *im, const symdb_file_image *fi, int n)
{
	for (int i = 0; i < n; i++)
		if (claimed(im, &fi[i].uuid))
			return 1;
	return 0;
}

/* Wait until none of fi[0..n) is claimed, then claim them all.  0, or
 * -ETIMEDOUT at deadline_ns (CLOCK_MONOTONIC), or -ENOMEM. */
static int claim_take(struct serve_images *im, const symdb_file_image *fi, int n,
                      uint64_t deadline_ns)
{
	struct images_claim *mine[SYMDB_BUILD_MAX_IMAGES] = { 0 };
	struct timespec ts;
	int rc = 0;

	for (int i = 0; i < n; i++)
		if (!(mine[i] = calloc(1, sizeof *mine[i]))) {
			while (i--)
				free(mine[i]);
			return -ENOMEM;
		}
	deadline_ts(deadline_ns, &ts);
	pthread_mutex_lock(&im->mu);
	while (rc == 0 && any_claimed(im, fi, n))
		rc = pthread_cond_timedwait(&im->cv, &im->mu, &ts) == ETIMEDOUT ? -ETIMEDOUT : 0;
	for (int i = 0; i < n; i++) {
		if (rc) {
			free(mine[i]);
			continue;
		}
		mine[i]->id = fi[i].uuid;
		mine[i]->next = im->claims;
		im->claims = mine[i];
	}
	pthread_mutex_unlock(&im->mu);
	return rc;
}

static void claim_give(struct serve_images *im, const symdb_file_image *fi, int n)
{
	pthread_mutex_lock(&im->mu);
	for (int i = 0; i < n; i++) {
		for (struct images_claim **pp = &im->claims; *pp; pp = &(*pp)->next) {
			struct images_claim *c = *pp;
			if (c->id.len == fi[i].uuid.len &&
			    memcmp(c->id.bytes, fi[i].uuid.bytes, c->id.len) == 0) {
				*pp = c->next;
				free(c);
				break;
			}
		}
	}
	pthread_cond_broadcast(&im->cv);
	pthread_mutex_unlock(&im->mu);
}

static int slot_take(struct serve_images *im, uint64_t deadline_ns)
{
	struct timespec ts;
	int rc = 0;

	deadline_ts(deadline_ns, &ts);
	pthread_mutex_lock(&im->mu);
	while (rc == 0 && im->running >= im->max_indexers)
		rc = pthread_cond_timedwait(&im->cv, &im->mu, &ts) == ETIMEDOUT ? -ETIMEDOUT : 0;
	if (rc == 0)
		im->running++;
	pthread_mutex_unlock(&im->mu);
	return rc;
}

static void slot_give(struct serve_images *im)
{
	pthread_mutex_lock(&im->mu);
	im->running--;
	pthread_cond_broadcast(&im->cv);
	pthread_mutex_unlock(&im->mu);
}

/* ---- the body ---------------------------------------------------------- */

/* What the headers alone decide: the type and the declared size. */
static int upload_check_headers(const struct serve_request *rq, struct serve_reply *err)
{
	const struct serve_limits *lim = &rq->srv->lim;

	if (rq->content_type && strcmp(rq->content_type, "application/octet-stream") != 0) {
		serve_reply_error(err, 415,
		                  "upload: Content-Type must be application/octet-stream (the object file's bytes)");
		return -1;
	}
	if (rq->has_length && rq->content_length > lim->max_upload) {
		serve_reply_error(err, 413, "upload: %" PRIu64 " bytes, more than the limit of %" PRIu64,
		                  rq->content_length, lim->max_upload);
		return -1;
	}
	return 0;
}

/* A new file in the upload directory, named by the server: O_EXCL, so an
 * existing file (or a symbolic link planted there) is never written. */
static int upload_create(struct serve_images *im, struct upload *up)
{
	for (int tries = 0; tries < 8; tries++) {
		uint64_t r;
		if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
			return -EIO;
		if ((size_t)snprintf(up->path, sizeof up->path, "%s/" UPLOAD_PREFIX "%016" PRIx64,
		                     im->tmp_dir, r) >= sizeof up->path)
			return -ENAMETOOLONG;
		up->fd = open(up->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (up->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	up->path[0] = 0;
	return -errno;
}

static int upload_start(struct serve_request *rq, struct serve_reply *err)
{
	struct upload *up;
	int rc;

	if (upload_check_headers(rq, err))
		return -1;
	up = calloc(1, sizeof *up);
	if (!up) {
		serve_reply_error(err, 500, "upload: out of memory");
		return -1;
	}
	up->fd = -1;
	rc = upload_create(rq->srv->images, up);
	if (rc) {
		serve_reply_error(err, rc == -ENOSPC ? 507 : 500, "upload: cannot create its file: %s",
		                  strerror(-rc));
		free(up);
		return -1;
	}
	rq->state = up;
	return 0;
}

int serve_images_upload_body(struct serve_request *rq, const char *data, size_t len,
                             struct serve_reply *err)
{
	const uint64_t max = rq->srv->lim.max_upload;
	struct upload *up;
	int rc;

	if (!rq->state && upload_start(rq, err))
		return -1;
	up = rq->state;
	/* A chunked body declares no length: the limit holds as it streams. */
	if (len > max - up->got) {
		serve_reply_error(err, 413, "upload: more than the limit of %" PRIu64 " bytes", max);
		return -1;
	}
	rc = cli_write_all(up->fd, data, len);
	if (rc) {
		serve_reply_error(err, rc == -ENOSPC ? 507 : 500, "upload: writing the upload: %s",
		                  strerror(-rc));
		return -1;
	}
	up->got += len;
	return 0;
}

/* Removes the upload's file, once: path is "" afterwards. */
static void upload_unlink(struct upload *up)
{
	if (up->path[0])
		unlink(up->path);
	up->path[0] = 0;
}

void serve_images_upload_cleanup(struct serve_request *rq)
{
	struct upload *up = rq->state;

	if (!up)
		return;
	if (up->fd >= 0)
		close(up->fd);
	upload_unlink(up);
	free(up);
	rq->state = NULL;
}

/* ---- what an upload is ------------------------------------------------- */

static uint64_t elf_get(const unsigned char *p, int n, int be)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[be ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

/* An ELF file whose executable sections all lost their bytes (SHT_NOBITS:
 * objcopy --only-keep-debug, dh_strip) is a separate debug file.  Reads
 * the section headers only, each bounds-checked against the file. */
static int elf_is_debug_file(int fd)
{
	unsigned char eh[64], sh[64];
	struct stat st;
	uint64_t shoff, shentsize, shnum;
	int is64, be, exec_nobits = 0;

	if (fstat(fd, &st) < 0 || pread(fd, eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh, ELFMAG, SELFMAG) != 0)
		return 0;
	is64 = eh[EI_CLASS] == ELFCLASS64;
	be = eh[EI_DATA] == ELFDATA2MSB;
	shoff = elf_get(eh + (is64 ? 0x28 : 0x20), is64 ? 8 : 4, be);
	shentsize = elf_get(eh + (is64 ? 0x3a : 0x2e), 2, be);
	shnum = elf_get(eh + (is64 ? 0x3c : 0x30), 2, be);
	if (shentsize < (is64 ? 64u : 40u) || shentsize > sizeof sh || shoff > (uint64_t)st.st_size ||
	    shnum > ((uint64_t)st.st_size - shoff) / shentsize)
		return 0;
	for (uint64_t i = 0; i < shnum; i++) {
		uint64_t type, flags, size;
		if (pread(fd, sh, shentsize, (off_t)(shoff + i * shentsize)) != (ssize_t)shentsize)
			return 0;
		type = elf_get(sh + 4, 4, be);
		flags = elf_get(sh + 8, is64 ? 8 : 4, be);
		size = elf_get(sh + (is64 ? 32 : 20), is64 ? 8 : 4, be);
		if (!(flags & SHF_EXECINSTR) || size == 0)
			continue;
		if (type != SHT_NOBITS)
			return 0;
		exec_nobits = 1;
	}
	return exec_nobits;
}

/* "binary", "debug_file" or "relocatable", from the index's header (ELF
 * e_type, Mach-O filetype) and, for ELF, the upload's section headers. */
static const char *image_kind(const symdb_image_info *in, const char *path)
{
	int fd, dbg;

	if (in->object_format == 2)
		return in->object_type == 10 /* MH_DSYM */ ? "debug_file" : "binary";
	if (in->object_type == ET_REL)
		return "relocatable";
	if (!path)
		return "binary";
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return "binary";
	dbg = elf_is_debug_file(fd);
	close(fd);
	return dbg ? "debug_file" : "binary";
}

static const char *uuid_kind_name(unsigned kind)
{
	switch (kind) {
	case SYMDB_UUID_GNU_BUILD_ID: return "gnu_build_id";
	case SYMDB_UUID_MACHO: return "macho_uuid";
	case SYMDB_UUID_FALLBACK: return "fallback";
	default: return "unknown";
	}
}

/* The reason of a library error without the "PATH: " of our own file,
 * which means nothing to the client. */
static const char *reason_of(const char *errbuf, const char *path, int rc)
{
	size_t n = strlen(path);

	if (!errbuf[0])
		return symdb_strerror(rc);
	if (n && strncmp(errbuf, path, n) == 0 && errbuf[n] == ':' && errbuf[n + 1] == ' ')
		return errbuf + n + 2;
	return errbuf;
}

/* HTTP status of a failed build (symdb_builder_add's codes). */
static unsigned build_status(int rc)
{
	switch (rc) {
	case SYMDB_E_BAD_OBJECT:
	case SYMDB_E_DWARF:
	case SYMDB_E_NO_UUID:
	case SYMDB_E_TOO_BIG:
	case -ETIMEDOUT: /* the indexer's own time limit */
	case -ENOMEM:    /* ... and its memory limit */
		return 422;
	case SYMDB_E_EXISTS:
		return 409;
	case -ENOSPC:
	case -EDQUOT:
		return 507;
	default:
		return 500;
	}
}

/* ---- POST /v1/images: the answer --------------------------------------- */

struct upload_ctx {
	struct serve_request *rq;
	struct upload *up;
	symdb_file_image fi[SYMDB_BUILD_MAX_IMAGES];
	int n;                       /* images in the upload */
	symdb_build_result *res;
	char err[1024];
};

/* What the build did to image i: skipped (already indexed) and replaced. */
static void image_outcome(const struct upload_ctx *u, int i, int *skipped, int *replaced)
{
	const symdb_build_result *r = u->res;

	*skipped = r->skipped;
	*replaced = r->replaced;
	for (unsigned k = 0; k < r->nimages; k++)
		if (r->images[k].uuid.len == u->fi[i].uuid.len &&
		    memcmp(r->images[k].uuid.bytes, u->fi[i].uuid.bytes, r->images[k].uuid.len) == 0) {
			*skipped = r->images[k].skipped;
			*replaced = r->images[k].replaced;
		}
}

static const char *replaced_name(int replaced)
{
	static const char *const names[] = { NULL, "index_without_dwarf", "index_from_dynsym",
		                             "index_without_this_symbol_table" };
	return replaced > 0 && replaced < 4 ? names[replaced] : NULL;
}

/* The index's facts (its header, SPEC §5), read without thawing a cold
 * image: an already indexed image may be compacted. */
static void put_index_facts(struct serve_buf *b, symdb *db, const symdb_uuid *id, const char *path)
{
	SYMDB_OPTS(symdb_open_opts, oo, .flags = SYMDB_OPEN_NO_THAW);
	SYMDB_OPTS(symdb_image_info, in);
	symdb_image *img = NULL;

	if (symdb_image_open_uuid(db, id, &oo, &img) != 0 || symdb_image_get_info(img, &in) != 0) {
		symdb_image_close(img);
		return;
	}
	serve_buf_str(b, ",\"name\":");
	serve_buf_json_str(b, in.image_name ? in.image_name : "", in.image_name ? strlen(in.image_name) : 0);
	serve_buf_printf(b, ",\"format\":\"%s\",\"kind\":\"%s\"", in.object_format == 2 ? "macho" : "elf",
	                 image_kind(&in, path));
	serve_buf_printf(b,
	                 ",\"symbols\":%" PRIu64 ",\"functions\":%" PRIu64 ",\"line_rows\":%" PRIu64
	                 ",\"inline_nodes\":%" PRIu64 ",\"files\":%" PRIu64
	                 ",\"dwarf\":%s,\"partial\":%s,\"index_size\":%" PRIu64,
	                 in.nsymbols, in.nfunctions, in.nline_rows, in.ninline_nodes, in.nfiles,
	                 in.flags & 0x2u ? "true" : "false", in.flags & 0x4u ? "true" : "false",
	                 in.file_size);
	symdb_image_close(img);
}

static void put_image(struct serve_buf *b, const struct upload_ctx *u, int i)
{
	char hex[2 * SYMDB_UUID_MAX + 1];
	int skipped, replaced;

	image_outcome(u, i, &skipped, &replaced);
	symdb_uuid_format(&u->fi[i].uuid, hex);
	serve_buf_printf(b, "%s{\"build_id\":\"%s\",\"id_kind\":\"%s\",\"status\":\"%s\"", i ? "," : "",
	                 hex, uuid_kind_name(u->fi[i].uuid.kind),
	                 skipped ? "already_indexed" : "indexed");
	if (!skipped && replaced_name(replaced))
		serve_buf_printf(b, ",\"replaced\":\"%s\"", replaced_name(replaced));
	if (u->fi[i].arch[0]) {
		serve_buf_str(b, ",\"arch\":");
		serve_buf_json_str(b, u->fi[i].arch, strnlen(u->fi[i].arch, sizeof u->fi[i].arch));
	}
	put_index_facts(b, u->rq->srv->db, &u->fi[i].uuid, u->up->path);
	serve_buf_str(b, "}");
}

static void upload_answer(const struct upload_ctx *u, struct serve_reply *out)
{
	struct serve_buf b = { 0 };
	int any_indexed = 0;

	for (int i = 0; i < u->n; i++) {
		int skipped, replaced;
		image_outcome(u, i, &skipped, &replaced);
		any_indexed |= !skipped;
	}
	serve_buf_printf(&b, "{\"status\":\"%s\",\"images\":[",
	                 any_indexed ? "indexed" : "already_indexed");
	for (int i = 0; i < u->n; i++)
		put_image(&b, u, i);
	serve_buf_str(&b, "]}\n");
	if (b.oom) {
		serve_buf_free(&b);
		serve_reply_error(out, 500, "upload: out of memory");
		return;
	}
	out->status = any_indexed ? 201 : 200;
	out->content_type = "application/json";
	out->body = serve_buf_take(&b, &out->len);
}

/* ---- POST /v1/images: the build ---------------------------------------- */

/* The upload's images, from its bytes (reader code, as the builder keys
 * them); 422 for a file that is no object symdb reads. */
static int upload_identify(struct upload_ctx *u, struct serve_reply *out)
{
	SYMDB_OPTS(symdb_open_opts, oo, .errbuf = u->err, .errbuf_sz = sizeof u->err);

	u->n = symdb_file_uuids(u->up->path, &oo, u->fi, SYMDB_BUILD_MAX_IMAGES, sizeof u->fi[0]);
	if (u->n > SYMDB_BUILD_MAX_IMAGES)
		u->n = SYMDB_BUILD_MAX_IMAGES;
	if (u->n > 0)
		return 0;
	if (u->n < 0 && u->n != SYMDB_E_BAD_OBJECT && u->n != SYMDB_E_NO_UUID) {
		serve_reply_error(out, 500, "upload: %s", reason_of(u->err, u->up->path, u->n));
		return -1;
	}
	serve_reply_error(out, 422, "%s",
	                  u->n ? reason_of(u->err, u->up->path, u->n) : "not an object file");
	return -1;
}

/* From upload.RANDOM to upload-UUIDHEX, the name the catalog will show
 * (the index keeps its input's base name).  Only while the UUIDs are
 * claimed: no other upload of this server uses the name meanwhile. */
static int upload_rename(struct upload_ctx *u)
{
	char hex[2 * SYMDB_UUID_MAX + 1], to[PATH_MAX];

	symdb_uuid_format(&u->fi[0].uuid, hex);
	if ((size_t)snprintf(to, sizeof to, "%s/" UPLOAD_NAMED "%s", u->rq->srv->images->tmp_dir, hex) >=
	    sizeof to)
		return -ENAMETOOLONG;
	if (rename(u->up->path, to) < 0)
		return -errno;
	memcpy(u->up->path, to, sizeof to);
	return 0;
}

static int upload_build(struct upload_ctx *u)
{
	struct serve_images *im = u->rq->srv->images;
	/* The upload's file is removed when the request ends: its path is
	 * not recorded as the image's source. */
	SYMDB_OPTS(symdb_build_opts, bo, .flags = SYMDB_BUILD_NO_SOURCE_PATH, .errbuf = u->err,
	           .errbuf_sz = sizeof u->err, .indexer_path = im->indexer[0] ? im->indexer : NULL);
	int rc;
	u->err[0] = 0;
	u->res->sz = sizeof *u->res;
	int ran;

	rc = symdb_builder_add(im->b, u->up->path, &bo, u->res);
	/* A run is counted when the indexer had work: not when every image
	 * was skipped as already indexed from the same bytes. */
	ran = rc != 0;
	for (int i = 0; i < u->n && !ran; i++) {
		int skipped, replaced;
		image_outcome(u, i, &skipped, &replaced);
		ran = !skipped;
	}
	if (ran && u->rq->srv->metrics)
		serve_metrics_indexer(u->rq->srv->metrics, rc == 0);
	return rc;
}

/* Claimed and holding a slot: rename, build, answer. */
static void upload_claimed(struct upload_ctx *u, struct serve_reply *out)
{
	struct serve_images *im = u->rq->srv->images;
	int rc = upload_rename(u);

	if (rc) {
		serve_reply_error(out, 500, "upload: renaming the upload: %s", strerror(-rc));
		return;
	}
	if (slot_take(im, u->rq->deadline_ns)) {
		serve_reply_error(out, 503, "upload: every indexer slot is busy (%" PRIu32 " running)",
		                  im->max_indexers);
		out->retry_after = RETRY_AFTER_S;
		return;
	}
	rc = upload_build(u);
	slot_give(im);
	if (rc) {
		serve_reply_error(out, build_status(rc), "%s", reason_of(u->err, u->up->path, rc));
		return;
	}
	upload_answer(u, out);
}

static void upload_index(struct serve_request *rq, struct upload *up, struct serve_reply *out)
{
	struct upload_ctx *u;

	close(up->fd);
	up->fd = -1;
	u = calloc(1, sizeof *u);
	if (u)
		u->res = malloc(sizeof *u->res);
	if (!u || !u->res) {
		free(u);
		serve_reply_error(out, 500, "upload: out of memory");
		return;
	}
	u->rq = rq;
	u->up = up;
	if (upload_identify(u, out) == 0) {
		int rc = claim_take(rq->srv->images, u->fi, u->n, rq->deadline_ns);
		if (rc == 0) {
			upload_claimed(u, out);
			/* upload-UUIDHEX is ours only while claimed: the next
			 * identical upload renames its own file to that name as
			 * soon as it has the claim, and an unlink after the give
			 * would remove that file under its build. */
			upload_unlink(up);
			claim_give(rq->srv->images, u->fi, u->n);
		} else if (rc == -ENOMEM) {
			serve_reply_error(out, 500, "upload: out of memory");
		} else {
			serve_reply_error(out, 503, "upload: the same image is being indexed by another request");
			out->retry_after = RETRY_AFTER_S;
		}
	}
	free(u->res);
	free(u);
}

/* The upload's file is gone before the answer is sent (cleanup, which
 * libmicrohttpd runs after it, would be late for a client that looks). */
void serve_images_upload_handle(struct serve_request *rq, struct serve_reply *out)
{
	struct upload *up;

	if (!rq->state && serve_images_upload_body(rq, "", 0, out))
		return;
	up = rq->state;
	if (up->got == 0)
		serve_reply_error(out, 422, "empty file");
	else if (fsync(up->fd) < 0)
		serve_reply_error(out, errno == ENOSPC ? 507 : 500, "upload: fsync: %s", strerror(errno));
	else
		upload_index(rq, up, out);
	serve_images_upload_cleanup(rq);
}

/* ---- GET /v1/images/{id}[/index] --------------------------------------- */

#define IMAGES_PATH "/v1/images/"

/* Split PATH ("/v1/images/ID" or "/v1/images/ID/index", a query string
 * ignored) into the id and whether the index is wanted.  400 for an id
 * that is not 2..64 lowercase hex digits (checked first, so that a name
 * like "../../x" never goes further); 404 for anything after it but
 * "/index". */
static unsigned split_image_path(const char *path, const char **id, size_t *id_len, int *index)
{
	const char *p, *end, *slash;

	if (!path || strncmp(path, IMAGES_PATH, sizeof IMAGES_PATH - 1) != 0)
		return 404;
	p = path + sizeof IMAGES_PATH - 1;
	end = p + strcspn(p, "?");
	slash = memchr(p, '/', (size_t)(end - p));
	*id = p;
	*id_len = (size_t)((slash ? slash : end) - p);
	if (!serve_hex_id_valid(p, *id_len))
		return 400;
	*index = slash != NULL;
	if (slash && ((size_t)(end - slash) != sizeof "/index" - 1 ||
	              memcmp(slash, "/index", sizeof "/index" - 1) != 0))
		return 404;
	return 0;
}

/* Splits a request path into its image id (and *index: whether it names
 * the index file): 0, 400 for an id that is not one, 404 for the rest. */
typedef unsigned id_splitter(const char *path, const char **id, size_t *id_len, int *index);

/* Both the decoded and the raw path must name a valid id, the same one:
 * "%2e%2e%2f" decodes to "../" and "%61b" to "ab", and neither passes.
 * Every route that names an image by id goes through here (with its own
 * split), so that they all refuse the same spellings with the same replies. */
static int id_request(struct serve_request *rq, id_splitter *split, struct serve_reply *out,
                      symdb_uuid *id, int *index)
{
	const char *a, *b = NULL;
	size_t alen, blen = 0;
	int bindex = 0;
	unsigned st = split(rq->path, &a, &alen, index);
	unsigned raw = rq->raw_path ? split(rq->raw_path, &b, &blen, &bindex) : st;
	char hex[2 * SYMDB_UUID_MAX + 1];

	if (st == 400 || raw == 400)
		st = 400;
	else if (st == 0 && raw == 0 && rq->raw_path &&
	         (blen != alen || memcmp(a, b, alen) != 0 || bindex != *index))
		st = 400;
	else if (st == 0)
		st = raw;
	if (st == 400) {
		serve_reply_error(out, 400,
		                  "image id: 2 to 64 lowercase hex digits, an even number of them, unencoded");
		return -1;
	}
	if (st) {
		serve_reply_error(out, 404, "no such endpoint");
		return -1;
	}
	memcpy(hex, a, alen);
	hex[alen] = 0;
	if (symdb_uuid_parse(hex, id) != 0) {
		serve_reply_error(out, 400, "image id: not a UUID");
		return -1;
	}
	return 0;
}

/* Open DB/rel (rel from the catalog: "images/XX/HEX.symdb") one component
 * at a time, no symbolic link followed (SPEC §12.1); the last must be a
 * regular file owned by the database's owner or by us.  An fd or -errno
 * (-ELOOP for a link, -EPERM for a foreign file). */
static int open_in_db(const char *db_dir, const char *rel)
{
	char comp[256];
	struct stat dbst, st;
	int dfd = open(db_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1, rc = 0;

	if (dfd < 0 || fstat(dfd, &dbst) < 0)
		rc = -errno;
	while (rc == 0 && *rel) {
		size_t n = strcspn(rel, "/");
		int last = rel[n] == 0, next;
		if (n == 0 || n >= sizeof comp || (n == 1 && rel[0] == '.') ||
		    (n == 2 && rel[0] == '.' && rel[1] == '.')) {
			rc = -EINVAL;
			break;
		}
		memcpy(comp, rel, n);
		comp[n] = 0;
		next = openat(dfd, comp,
		              O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY));
		if (next < 0) {
			rc = errno == ENOTDIR && !last ? -ELOOP : -errno;
			break;
		}
		close(dfd);
		dfd = -1;
		if (last)
			fd = next;
		else
			dfd = next;
		rel += n + !last;
	}
	if (dfd >= 0)
		close(dfd);
	if (rc == 0 && fd < 0)
		rc = -EINVAL;
	if (rc == 0 && fstat(fd, &st) < 0)
		rc = -errno;
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = -EINVAL;
	if (rc == 0 && st.st_uid != dbst.st_uid && st.st_uid != geteuid())
		rc = -EPERM;
	if (rc && fd >= 0)
		close(fd);
	return rc ? rc : fd;
}

static int is_cold(const char *db_dir, const char *rel)
{
	char cold[4200];
	int fd;

	if ((size_t)snprintf(cold, sizeof cold, "%s%s", rel, symdb_layout_name(SYMDB_LAYOUT_COLD_EXT)) >=
	    sizeof cold)
		return 0;
	fd = open_in_db(db_dir, cold);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void entry_answer(struct serve_request *rq, const symdb_entry *e, struct serve_reply *out)
{
	struct serve_buf b = { 0 };
	char hex[2 * SYMDB_UUID_MAX + 1];
	int fd = open_in_db(rq->srv->db_dir, e->file), cold = 0;

	if (fd >= 0)
		close(fd);
	else if (fd == -ENOENT)
		cold = is_cold(rq->srv->db_dir, e->file);
	symdb_uuid_format(&e->uuid, hex);
	serve_buf_printf(&b, "{\"build_id\":\"%s\",\"id_kind\":\"%s\",\"name\":", hex,
	                 uuid_kind_name(e->uuid.kind));
	serve_buf_json_str(&b, e->image_name ? e->image_name : "", e->image_name ? strlen(e->image_name) : 0);
	serve_buf_printf(&b,
	                 ",\"format\":\"%s\",\"machine\":%" PRIu32 ",\"machine_sub\":%" PRIu32
	                 ",\"dwarf\":%s,\"partial\":%s,\"index_size\":%" PRIu64
	                 ",\"built_at\":%" PRIu64 ",\"cold\":%s,\"index\":\"" IMAGES_PATH "%s/index\"}\n",
	                 e->object_format == 2 ? "macho" : "elf", e->machine, e->machine_sub,
	                 e->flags & 0x2u ? "true" : "false", e->flags & 0x4u ? "true" : "false",
	                 e->file_size, e->built_at, cold ? "true" : "false", hex);
	if (b.oom) {
		serve_buf_free(&b);
		serve_reply_error(out, 500, "image: out of memory");
		return;
	}
	out->status = 200;
	out->content_type = "application/json";
	out->body = serve_buf_take(&b, &out->len);
}

/* A cold image (SPEC §12.8) is sent decompressed, as it was before it was
 * compacted: opening it thaws it, as a query would; a database this server
 * cannot write gets the bytes from memory. */
static void index_from_image(struct serve_request *rq, const symdb_entry *e, struct serve_reply *out)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, oo, .errbuf = err, .errbuf_sz = sizeof err);
	symdb_image *img = NULL;
	const void *data;
	size_t size;
	int rc = symdb_image_open_uuid(rq->srv->db, &e->uuid, &oo, &img), fd;

	if (rc) {
		serve_reply_error(out, rc == SYMDB_E_NOT_INDEXED ? 404 : 500, "image: %s",
		                  err[0] ? err : symdb_strerror(rc));
		return;
	}
	fd = open_in_db(rq->srv->db_dir, e->file);
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && (uint64_t)st.st_size == e->file_size) {
			out->fd = fd;
			out->fd_len = (uint64_t)st.st_size;
		} else {
			close(fd);
			serve_reply_error(out, 500, "image: index file differs from its catalog entry");
		}
	} else if (fd != -ENOENT) {
		serve_reply_error(out, 500, "image: index file: %s", strerror(-fd));
	} else if (symdb_image_data(img, &data, &size) == 0 && (out->body = malloc(size ? size : 1))) {
		memcpy(out->body, data, size); /* not thawed: a read-only database */
		out->len = size;
	} else {
		serve_reply_error(out, 500, "image: out of memory");
	}
	symdb_image_close(img);
	if (out->status < 400) {
		out->status = 200;
		out->content_type = "application/octet-stream";
	}
}

static void index_answer(struct serve_request *rq, const symdb_entry *e, struct serve_reply *out)
{
	struct stat st;
	int fd = open_in_db(rq->srv->db_dir, e->file);

	if (fd == -ENOENT) {
		index_from_image(rq, e, out);
		return;
	}
	if (fd < 0) {
		serve_reply_error(out, 500, "image: index file: %s",
		                  fd == -ELOOP ? "symbolic link, not followed"
		                  : fd == -EPERM ? "owned by another user, not followed"
		                                 : strerror(-fd));
		return;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != e->file_size) {
		close(fd);
		serve_reply_error(out, 500, "image: index file differs from its catalog entry");
		return;
	}
	out->status = 200;
	out->content_type = "application/octet-stream";
	out->fd = fd;
	out->fd_len = (uint64_t)st.st_size;
}

/* The catalog entry of id, then its JSON (index 0) or its index file. */
static void image_get(struct serve_request *rq, const symdb_uuid *id, int index,
                      struct serve_reply *out)
{
	SYMDB_OPTS(symdb_entry, e);
	char *names;
	int rc;

	if (index)
		rq->ep = SERVE_EP_IMAGES_INDEX;
	names = malloc(NAMEBUF_SZ);
	if (!names) {
		serve_reply_error(out, 500, "image: out of memory");
		return;
	}
	rc = symdb_lookup(rq->srv->db, id, &e, names, NAMEBUF_SZ);
	if (rc == SYMDB_E_NOT_INDEXED)
		serve_reply_error(out, 404, "image: not in the database");
	else if (rc)
		serve_reply_error(out, 500, "image: catalog: %s", symdb_strerror(rc));
	else if (index)
		index_answer(rq, &e, out);
	else
		entry_answer(rq, &e, out);
	free(names);
}

void serve_images_get_handle(struct serve_request *rq, struct serve_reply *out)
{
	symdb_uuid id;
	int index = 0;

	if (id_request(rq, split_image_path, out, &id, &index) == 0)
		image_get(rq, &id, index, out);
}

/* ---- GET /symdb/v1/XX/HEX.symdb ---------------------------------------- */

#define STORE_PATH "/symdb/v1/"
#define STORE_EXT ".symdb"

/* Split PATH in the upstream store layout (SPEC §12.9), a query string
 * ignored: 400 for a HEX that is not an image id (so "../x" never goes
 * further), 404 when the rest does not fit the layout (XX must be HEX's
 * first two digits, the name must end in ".symdb"). */
static unsigned split_store_path(const char *path, const char **id, size_t *id_len, int *index)
{
	const char *p, *end;

	if (!path || strncmp(path, STORE_PATH, sizeof STORE_PATH - 1) != 0)
		return 404;
	p = path + sizeof STORE_PATH - 1;
	end = p + strcspn(p, "?");
	if (end - p < 3 || p[2] != '/')
		return 404;
	*id = p + 3;
	if ((size_t)(end - *id) < sizeof STORE_EXT - 1 ||
	    memcmp(end - (sizeof STORE_EXT - 1), STORE_EXT, sizeof STORE_EXT - 1) != 0)
		return 404;
	*id_len = (size_t)(end - *id) - (sizeof STORE_EXT - 1);
	if (!serve_hex_id_valid(*id, *id_len))
		return 400;
	*index = 1; /* the store holds index files only */
	return memcmp(p, *id, 2) == 0 ? 0 : 404;
}

void serve_images_store_handle(struct serve_request *rq, struct serve_reply *out)
{
	symdb_uuid id;
	int index = 0;

	if (id_request(rq, split_store_path, out, &id, &index) == 0)
		image_get(rq, &id, index, out);
}
