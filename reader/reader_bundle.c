/* SPDX-License-Identifier: MIT */
/*
 * reader_bundle.c - export bundles (SPEC §12.7): symdb_export() writes the
 * index files of some images as one LZ4 frame; symdb_import() reads one back
 * into temporary files, validates every image and only then publishes each
 * through symdb_builder_import_file().  The records inside the frame are
 * format_bundle.c's; this file adds the LZ4 framing and the files.
 *
 * Export reads through the public API: every image is opened with every
 * checksum verified before a byte is written, so a damaged image is never
 * shipped; a compacted image is exported from its cold form decompressed
 * in memory (SYMDB_OPEN_NO_THAW: exporting never thaws).
 *
 * Unpacking streams each record's bytes into a file of its own in DB/tmp
 * (memory stays bounded whatever sizes the bundle declares) and requires the
 * frame's checksums and the end record.  A damaged or truncated bundle, or
 * one damaged image, publishes nothing.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <errno.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_dir.h"
#include "format_bundle.h"
#include "format_io.h"
#include "publish_internal.h"
#include "reader_bundle.h"
#include "reader_internal.h"

#define BUNDLE_CHUNK (64u * 1024u) /* compressor input and reads per call */

/* Copies the caller's options into *o (zeroed first): sz may be smaller than
 * ours (an older caller) but must reach errbuf_sz; bytes past ours must be
 * zero (a newer caller asking for something this library does not know). */
static int bundle_opts(const void *opts, size_t ours, size_t min, void *o)
{
	size_t sz = opts ? *(const size_t *)opts : 0;

	memset(o, 0, ours);
	if (!opts)
		return 0;
	if (sz < min)
		return SYMDB_E_INVAL;
	memcpy(o, opts, sz < ours ? sz : ours);
	for (size_t i = ours; i < sz; i++)
		if (((const unsigned char *)opts)[i])
			return SYMDB_E_INVAL;
	return 0;
}

/* The errbuf of options copied by bundle_opts, cleared. */
static char *opts_errbuf(char *eb, size_t *ebsz)
{
	if (!eb)
		*ebsz = 0;
	if (*ebsz)
		eb[0] = 0;
	return eb;
}

/* ---- export --------------------------------------------------------------- */

struct bundle_writer {
	LZ4F_cctx *cctx;
	char *out;
	size_t out_cap;
	int fd;
	uint64_t written;
};

static int writer_emit(struct bundle_writer *w, size_t r)
{
	int rc;

	if (LZ4F_isError(r))
		return -EIO;
	rc = fmt_write_full(w->fd, w->out, r);
	if (rc == 0)
		w->written += r;
	return rc;
}

/* Compresses n bytes (n <= BUNDLE_CHUNK) into the frame. */
static int writer_put(struct bundle_writer *w, const void *p, size_t n)
{
	return writer_emit(w, LZ4F_compressUpdate(w->cctx, w->out, w->out_cap, p, n, NULL));
}

/* "HEX: reason", the way the CLI names an image: a reason that already
 * starts with the name is kept as it is. */
static int image_err(char *eb, size_t ebsz, const symdb_uuid *id, int rc, const char *why)
{
	char hex[2 * SYMDB_UUID_MAX + 1];
	size_t hl;

	symdb_uuid_format(id, hex);
	hl = strlen(hex);
	if (!why[0])
		return fmt_err(eb, ebsz, rc, "%s: %s", hex, symdb_strerror(rc));
	if (strncmp(why, hex, hl) == 0 && (why[hl] == ':' || why[hl] == '/'))
		return fmt_err(eb, ebsz, rc, "%s", why);
	return fmt_err(eb, ebsz, rc, "%s: %s", hex, why);
}

/* One image's record, from the image as a reader maps it.  The record head
 * goes into the frame as three pieces (UUID_Length, UUID, File_Size), and
 * the file in BUNDLE_CHUNK pieces from its start: the compressor sees the
 * same calls for the same images, so a bundle is reproducible. */
static int put_image(struct bundle_writer *w, symdb *db, const symdb_uuid *id, char *eb,
                     size_t ebsz)
{
	char why[512] = "";
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_NO_THAW, .errbuf = why,
	           .errbuf_sz = sizeof why);
	uint8_t head[FMT_BUNDLE_RECORD_MAX];
	symdb_image *img;
	const void *data;
	size_t size, off;
	int rc = symdb_image_open_uuid(db, id, &o, &img);

	if (rc < 0)
		return image_err(eb, ebsz, id, rc, why);
	symdb_image_data(img, &data, &size);
	fmt_bundle_put_record(head, id->bytes, id->len, size);
	rc = writer_put(w, head, 1);
	if (rc == 0)
		rc = writer_put(w, head + 1, id->len);
	if (rc == 0)
		rc = writer_put(w, head + 1 + id->len, 8);
	for (off = 0; rc == 0 && off < size; off += BUNDLE_CHUNK)
		rc = writer_put(w, (const char *)data + off,
		                size - off < BUNDLE_CHUNK ? size - off : BUNDLE_CHUNK);
	/* Truncated while it was copied (symdb_fault_recover): the record may
	 * hold zeros; the bundle is left without its end record, so no
	 * import accepts it. */
	if (rc == 0 && symdb_image_fault_check(img) < 0) {
		snprintf(why, sizeof why, "index file changed while in use (truncated?)");
		rc = SYMDB_E_CORRUPT;
	}
	symdb_image_close(img);
	if (rc == SYMDB_E_CORRUPT)
		return image_err(eb, ebsz, id, rc, why);
	return rc;
}

/* Opens every image with all checksums verified before anything is written. */
static int check_images(symdb *db, const symdb_uuid *ids, size_t n, char *eb, size_t ebsz)
{
	for (size_t i = 0; i < n; i++) {
		char why[512] = "";
		SYMDB_OPTS(symdb_open_opts, o,
		           .flags = SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW,
		           .errbuf = why, .errbuf_sz = sizeof why);
		symdb_image *img;
		int rc = symdb_image_open_uuid(db, &ids[i], &o, &img);

		if (rc == 0) {
			rc = symdb_image_verify(img, PUBLISH_EB_OPTS(why, sizeof why));
			symdb_image_close(img);
		}
		if (rc < 0)
			return image_err(eb, ebsz, &ids[i], rc, why);
	}
	return 0;
}

static int write_bundle(symdb *db, const symdb_uuid *ids, size_t n, struct bundle_writer *w,
                        char *eb, size_t ebsz)
{
	LZ4F_preferences_t prefs;
	uint8_t fixed[FMT_BUNDLE_MAGIC_SIZE];
	int rc = 0;

	memset(&prefs, 0, sizeof prefs);
	prefs.frameInfo.blockSizeID = LZ4F_max256KB;
	prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	w->out_cap = LZ4F_compressBound(BUNDLE_CHUNK, &prefs) + LZ4F_HEADER_SIZE_MAX;
	w->out = malloc(w->out_cap);
	if (!w->out || LZ4F_isError(LZ4F_createCompressionContext(&w->cctx, LZ4F_VERSION)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = writer_emit(w, LZ4F_compressBegin(w->cctx, w->out, w->out_cap, &prefs));
	if (rc == 0)
		rc = writer_put(w, fixed, fmt_bundle_put_magic(fixed));
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = put_image(w, db, &ids[i], eb, ebsz);
	if (rc == 0)
		rc = writer_put(w, fixed, fmt_bundle_put_end(fixed));
	if (rc == 0)
		rc = writer_emit(w, LZ4F_compressEnd(w->cctx, w->out, w->out_cap, NULL));
	LZ4F_freeCompressionContext(w->cctx);
	free(w->out);
	return rc;
}

int symdb_export(symdb *db, const symdb_uuid *ids, size_t n, int fd,
                 const symdb_export_opts *opts)
{
	symdb_export_opts o;
	struct bundle_writer w = { .fd = fd };
	int rc = bundle_opts(opts, sizeof o, offsetof(symdb_export_opts, errbuf_sz) + sizeof(size_t),
	                     &o);
	char *eb = opts_errbuf(o.errbuf, &o.errbuf_sz);
	size_t ebsz = o.errbuf_sz;

	if (o.written)
		*o.written = 0;
	if (rc)
		return fmt_err(eb, ebsz, rc, "unknown options (a struct of %zu bytes)", opts->sz);
	if (o.flags)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "unknown option flags 0x%x", o.flags);
	if (!db || (n && !ids) || fd < 0)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "invalid database handle, UUID list or fd");
	for (size_t i = 0; i < n; i++)
		if (ids[i].len < 1 || ids[i].len > SYMDB_UUID_MAX)
			return fmt_err(eb, ebsz, SYMDB_E_INVAL, "UUID %zu has %u bytes", i,
			               (unsigned)ids[i].len);
	rc = check_images(db, ids, n, eb, ebsz);
	if (rc == 0)
		rc = write_bundle(db, ids, n, &w, eb, ebsz);
	if (o.written)
		*o.written = w.written;
	return rc;
}

/* ---- unpacking ------------------------------------------------------------ */

struct bundle_file {
	symdb_uuid uuid;
	char *path;
};

struct rd_bundle {
	struct bundle_file *img;
	size_t n, cap;
	int fd;             /* the file being written, or -1 */
	char tmpl[4096];    /* TMP_DIR/bundle.XXXXXX */
	char dbdir[4096];   /* TMP_DIR's database: DB for DB/tmp */
	char why[4400];
	int err;            /* -errno of a failed write (full disk): not damage */
	fmt_bundle_dec dec;
	uint8_t head[5];    /* the frame's magic and FLG byte */
	size_t nhead;
};

static int unpack_bad(rd_bundle *b, const char *why)
{
	snprintf(b->why, sizeof b->why, "%s", why);
	return -1;
}

/* Writing the image's temporary file failed with errno e: the database's
 * trouble (a full disk), said with the file and the reason. */
static int unpack_io(rd_bundle *b, const char *path, int e)
{
	b->err = -e;
	snprintf(b->why, sizeof b->why, "%s: cannot write: %s", path, symdb_strerror(-e));
	return -1;
}

/* A record head: a new temporary file for its bytes. */
static int unpack_begin(rd_bundle *b)
{
	struct bundle_file *f;

	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		f = realloc(b->img, cap * sizeof *f);
		if (!f)
			return unpack_bad(b, "out of memory");
		b->img = f;
		b->cap = cap;
	}
	f = &b->img[b->n];
	memset(f, 0, sizeof *f);
	f->uuid.len = (uint8_t)b->dec.uuid_len;
	memcpy(f->uuid.bytes, b->dec.uuid, b->dec.uuid_len);
	f->path = strdup(b->tmpl);
	if (!f->path)
		return unpack_bad(b, "out of memory");
	/* Through DB/tmp's descriptor, never following it (db_dir.h). */
	char m[sizeof b->why] = "";
	b->fd = rd_safe_tmp_create(b->dbdir, f->path, m, sizeof m);
	if (b->fd < 0) {
		free(f->path);
		/* "DB/tmp: symbolic link, not followed" says more than a code */
		return unpack_bad(b, rd_safe_why(b->fd) ? m
		                                        : "cannot create a temporary file in the database");
	}
	b->n++;
	return 0;
}

/* Decompressed bytes, in any split, through the record decoder. */
static int unpack_feed(rd_bundle *b, const uint8_t *p, size_t n)
{
	for (;;) {
		const uint8_t *data;
		size_t used, len;
		int ev = fmt_bundle_decode(&b->dec, p, n, &used, &data, &len);

		if (ev < 0)
			return unpack_bad(b, b->dec.why);
		p += used;
		n -= used;
		switch (ev) {
		case FMT_BUNDLE_MORE:
			return 0;
		case FMT_BUNDLE_IMAGE:
			if (unpack_begin(b) < 0)
				return -1;
			break;
		case FMT_BUNDLE_DATA: {
			int w = fmt_write_full(b->fd, data, len);
			if (w < 0)
				return unpack_io(b, b->img[b->n - 1].path, -w);
			break;
		}
		case FMT_BUNDLE_IMAGE_END: {
			int c = close(b->fd);
			int e = errno;
			b->fd = -1;
			if (c < 0)
				return unpack_io(b, b->img[b->n - 1].path, e);
			break;
		}
		case FMT_BUNDLE_END:
			break;
		}
	}
}

/* Decompresses the whole input through the decoder.  0, or -1 with b->why. */
static int unpack_read(rd_bundle *b, int in)
{
	LZ4F_dctx *d;
	uint8_t *ibuf = malloc(BUNDLE_CHUNK), *obuf = malloc(BUNDLE_CHUNK);
	size_t ret = 1; /* 0 once the frame is complete and its checksum matched */
	int rc = 0;

	if (!ibuf || !obuf || LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION))) {
		free(ibuf);
		free(obuf);
		return unpack_bad(b, "out of memory");
	}
	for (;;) {
		ptrdiff_t got = fmt_read_full(in, ibuf, BUNDLE_CHUNK);
		if (got < 0) {
			rc = unpack_bad(b, "read error");
			break;
		}
		if (got == 0)
			break;
		if (ret == 0) {
			rc = unpack_bad(b, "data after the end of the LZ4 frame");
			break;
		}
		for (size_t i = 0; b->nhead < sizeof b->head && i < (size_t)got; i++)
			b->head[b->nhead++] = ibuf[i];
		for (size_t off = 0; rc == 0 && off < (size_t)got;) {
			size_t isz = (size_t)got - off, osz = BUNDLE_CHUNK;
			ret = LZ4F_decompress(d, obuf, &osz, ibuf + off, &isz, NULL);
			if (LZ4F_isError(ret)) {
				snprintf(b->why, sizeof b->why, "LZ4 frame: %s", LZ4F_getErrorName(ret));
				rc = -1;
				break;
			}
			off += isz;
			rc = unpack_feed(b, obuf, osz);
			if (rc == 0 && ret == 0 && off < (size_t)got)
				rc = unpack_bad(b, "data after the end of the LZ4 frame");
			if (rc == 0 && isz == 0 && osz == 0 && ret != 0)
				rc = unpack_bad(b, "LZ4 frame: the decoder made no progress");
		}
		if (rc)
			break;
	}
	/* Drain output the decoder still holds. */
	while (rc == 0 && ret != 0 && !LZ4F_isError(ret)) {
		size_t isz = 0, osz = BUNDLE_CHUNK;
		ret = LZ4F_decompress(d, obuf, &osz, ibuf, &isz, NULL);
		if (osz == 0)
			break;
		rc = unpack_feed(b, obuf, osz);
	}
	if (rc == 0 && ret != 0)
		rc = unpack_bad(b, "truncated (the LZ4 frame does not end)");
	if (rc == 0 && fmt_bundle_finish(&b->dec) < 0)
		rc = unpack_bad(b, b->dec.why);
	if (rc == 0 && fmt_bundle_check_frame(b->head, b->nhead, b->why, sizeof b->why) < 0)
		rc = -1;
	LZ4F_freeDecompressionContext(d);
	free(ibuf);
	free(obuf);
	return rc;
}

void rd_bundle_free(rd_bundle *b)
{
	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	for (size_t i = 0; i < b->n; i++) {
		rd_safe_tmp_unlink(b->dbdir, b->img[i].path);
		free(b->img[i].path);
	}
	free(b->img);
	free(b);
}

int rd_bundle_unpack(int fd, const char *tmp_dir, rd_bundle **out, char *why, size_t why_sz)
{
	rd_bundle *b = calloc(1, sizeof *b);

	*out = NULL;
	if (!b)
		return fmt_err(why, why_sz, SYMDB_E_CORRUPT, "out of memory");
	b->fd = -1;
	fmt_bundle_dec_init(&b->dec);
	/* tmp_dir is DB/tmp (fmt_layout_dir): DB is what precedes "/tmp". */
	const char *slash = strrchr(tmp_dir, '/');
	snprintf(b->dbdir, sizeof b->dbdir, "%.*s", slash ? (int)(slash - tmp_dir) : 1,
	         slash ? tmp_dir : ".");
	if (!b->dbdir[0])
		snprintf(b->dbdir, sizeof b->dbdir, "/");
	if ((size_t)snprintf(b->tmpl, sizeof b->tmpl, "%s/bundle.XXXXXX", tmp_dir) >=
	    sizeof b->tmpl) {
		free(b);
		return fmt_err(why, why_sz, SYMDB_E_CORRUPT, "%s: path too long", tmp_dir);
	}
	if (unpack_read(b, fd) < 0) {
		int rc = b->err ? b->err : SYMDB_E_CORRUPT;
		fmt_err(why, why_sz, rc, "%s", b->why);
		rd_bundle_free(b);
		return rc;
	}
	*out = b;
	return 0;
}

size_t rd_bundle_count(const rd_bundle *b)
{
	return b ? b->n : 0;
}

void rd_bundle_image(const rd_bundle *b, size_t i, symdb_uuid *uuid, const char **path)
{
	*uuid = b->img[i].uuid;
	*path = b->img[i].path;
}

/* ---- import --------------------------------------------------------------- */

/* Every unpacked image must be a valid index file of the UUID its record
 * names (every table checksum, symdb_image_verify(), the header's UUID)
 * before any is published.  Fills eb with "image HEX: reason". */
static int validate_all(const rd_bundle *b, char *eb, size_t ebsz)
{
	for (size_t i = 0; i < b->n; i++) {
		char why[512] = "", hex[2 * SYMDB_UUID_MAX + 1];
		SYMDB_OPTS(symdb_open_opts, o,
		           .flags = SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW,
		           .errbuf = why, .errbuf_sz = sizeof why);
		const symdb_uuid *uuid = &b->img[i].uuid;
		symdb_image *img;
		symdb_image_info info;
		int rc = symdb_image_open_file(b->img[i].path, &o, &img);

		symdb_uuid_format(uuid, hex);
		if (rc == 0) {
			rc = symdb_image_verify(img, PUBLISH_EB_OPTS(why, sizeof why));
			info.sz = sizeof info;
			symdb_image_get_info(img, &info);
			if (rc == 0 && (info.uuid.len != uuid->len ||
			                memcmp(info.uuid.bytes, uuid->bytes, info.uuid.len)))
				rc = SYMDB_E_CORRUPT;
			if (rc == SYMDB_E_CORRUPT && !why[0])
				snprintf(why, sizeof why, "header UUID differs from the record's");
			symdb_image_close(img);
		}
		if (rc < 0)
			return fmt_err(eb, ebsz, rc, "image %s: %s", hex,
			               why[0] ? why : symdb_strerror(rc));
	}
	return 0;
}

int symdb_import(symdb_builder *b, int fd, const symdb_import_opts *opts)
{
	symdb_import_opts o;
	symdb_build_result *res = NULL;
	rd_bundle *bun = NULL;
	char tmp[4096];
	int rc = bundle_opts(opts, sizeof o, offsetof(symdb_import_opts, errbuf_sz) + sizeof(size_t),
	                     &o);
	char *eb = opts_errbuf(o.errbuf, &o.errbuf_sz);
	size_t ebsz = o.errbuf_sz;
	int failed = 0;

	if (rc)
		return fmt_err(eb, ebsz, rc, "unknown options (a struct of %zu bytes)", opts->sz);
	if (o.flags & ~SYMDB_BUILD_FORCE)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "unknown option flags 0x%x",
		               o.flags & ~SYMDB_BUILD_FORCE);
	if (!b || fd < 0)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "invalid builder or fd");
	if ((size_t)snprintf(tmp, sizeof tmp, "%.4000s/tmp",
	                     rd_catalog_dir(publish_builder_catalog(b))) >= sizeof tmp)
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "database path too long");
	rc = rd_bundle_unpack(fd, tmp, &bun, eb, ebsz);
	if (rc == 0)
		rc = validate_all(bun, eb, ebsz);
	if (rc == 0 && !(res = malloc(sizeof *res)))
		rc = fmt_err(eb, ebsz, -ENOMEM, "out of memory");
	/* Every image passed: publish them one by one; a failure is reported
	 * and the others still go in. */
	for (size_t i = 0; rc == 0 && i < bun->n; i++) {
		char why[512] = "";
		SYMDB_OPTS(symdb_build_opts, bo, .flags = o.flags, .errbuf = why,
		           .errbuf_sz = sizeof why);
		res->sz = sizeof *res;
		int r = symdb_builder_import_file(b, bun->img[i].path, &bun->img[i].uuid, &bo, res);

		if (o.on_image)
			o.on_image(&bun->img[i].uuid, r, r == 0 ? res : NULL, why, o.arg);
		if (r < 0 && !failed) {
			char hex[2 * SYMDB_UUID_MAX + 1];
			symdb_uuid_format(&bun->img[i].uuid, hex);
			fmt_err(eb, ebsz, r, "image %s: %s", hex, why[0] ? why : symdb_strerror(r));
			failed = r;
		}
	}
	free(res);
	rd_bundle_free(bun);
	return rc ? rc : failed;
}
