/* SPDX-License-Identifier: MIT */
/*
 * reader_lz4.c - the LZ4 frames of cold storage (SPEC §12.8): one writer and
 * one streaming reader, shared by compaction, thawing, verification and
 * export of cold images.
 *
 * The frame always carries Content_Size, the content checksum and the block
 * checksums, so a reader can refuse a frame before decoding it (a declared
 * size above the caller's limit) and notices any flipped or missing byte.
 * Decoding streams: the caller's sink receives bounded chunks, so memory is
 * a few hundred KiB whatever the frame declares (LZ4F's own buffers are at
 * most one 4 MiB block).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format_io.h"
#include "reader_internal.h"

#define LZ_IN_CHUNK  (1u << 20)   /* compressor input per call */
#define LZ_RD_CHUNK  (64u << 10)  /* bytes read from the frame per call */
#define LZ_OUT_CHUNK (256u << 10) /* decoded bytes handed to the sink per call */

/* Write the r bytes LZ4F produced (or report its error). */
static int lz_emit(int fd, const char *out, size_t r, uint64_t *written, const char *path,
                   char *eb, size_t ebsz)
{
	int rc;

	if (LZ4F_isError(r))
		return fmt_err(eb, ebsz, -EIO, "%s: LZ4 compression: %s", path,
		               LZ4F_getErrorName(r));
	if ((rc = fmt_write_full(fd, out, r)) != 0)
		return fmt_err(eb, ebsz, rc, "%s: write: %s", path, symdb_strerror(rc));
	*written += r;
	return 0;
}

int rd_lz4_write_frame(int fd, const void *p, size_t n, uint64_t *written, const char *path,
                       char *eb, size_t ebsz)
{
	LZ4F_preferences_t prefs;
	LZ4F_cctx *cctx = NULL;
	size_t cap, off, len;
	char *out;
	int rc;

	memset(&prefs, 0, sizeof prefs);
	prefs.frameInfo.blockSizeID = LZ4F_max256KB;
	prefs.frameInfo.blockMode = LZ4F_blockLinked;
	prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
	prefs.frameInfo.contentSize = n;
	prefs.compressionLevel = RD_LZ4_LEVEL;
	cap = LZ4F_compressBound(LZ_IN_CHUNK, &prefs) + LZ4F_HEADER_SIZE_MAX;
	out = malloc(cap);
	if (!out || LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION))) {
		free(out);
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	}
	*written = 0;
	rc = lz_emit(fd, out, LZ4F_compressBegin(cctx, out, cap, &prefs), written, path, eb, ebsz);
	for (off = 0; rc == 0 && off < n; off += len) {
		len = n - off < LZ_IN_CHUNK ? n - off : LZ_IN_CHUNK;
		rc = lz_emit(fd, out,
		             LZ4F_compressUpdate(cctx, out, cap, (const char *)p + off, len, NULL),
		             written, path, eb, ebsz);
	}
	if (rc == 0)
		rc = lz_emit(fd, out, LZ4F_compressEnd(cctx, out, cap, NULL), written, path, eb,
		             ebsz);
	LZ4F_freeCompressionContext(cctx);
	free(out);
	return rc;
}

/* Frame header checks: what a cold frame must declare (SPEC §12.8). */
static int lz_check_info(const LZ4F_frameInfo_t *fi, uint64_t max, const char *path,
                         char *eb, size_t ebsz)
{
	if (fi->contentChecksumFlag != LZ4F_contentChecksumEnabled ||
	    fi->blockChecksumFlag != LZ4F_blockChecksumEnabled)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: LZ4 frame without content and block checksums", path);
	if (fi->contentSize == 0)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "%s: LZ4 frame without a content size",
		               path);
	if (fi->contentSize > max)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: LZ4 frame declares %llu bytes, more than the %llu expected",
		               path, (unsigned long long)fi->contentSize, (unsigned long long)max);
	return 0;
}

struct lz_dec {
	LZ4F_dctx *d;
	char *in, *out;
	size_t in_len, in_pos;
	uint64_t total;
};

/* Decode everything in the input buffer; *done when the frame ended. */
static int lz_pump(struct lz_dec *z, const rd_lz4_reader *r, const char *path, int *done,
                   char *eb, size_t ebsz)
{
	while (z->in_pos < z->in_len && !*done) {
		size_t outsz = LZ_OUT_CHUNK, insz = z->in_len - z->in_pos;
		size_t h = LZ4F_decompress(z->d, z->out, &outsz, z->in + z->in_pos, &insz, NULL);
		int rc;

		if (LZ4F_isError(h))
			return fmt_err(eb, ebsz, strstr(LZ4F_getErrorName(h), "hecksum")
			                             ? SYMDB_E_CHECKSUM : SYMDB_E_CORRUPT,
			               "%s: LZ4 frame: %s", path, LZ4F_getErrorName(h));
		z->in_pos += insz;
		if (outsz && z->total + outsz > r->declared)
			return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
			               "%s: LZ4 frame holds more than its declared %llu bytes", path,
			               (unsigned long long)r->declared);
		if (outsz && (rc = r->sink(r->arg, z->out, outsz, z->total)) != 0)
			return fmt_err(eb, ebsz, rc, "%s: %s", path,
			               r->why ? r->why : symdb_strerror(rc));
		z->total += outsz;
		*done = h == 0;
		if (!insz && !outsz && !*done)
			return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "%s: LZ4 decoder stalled", path);
	}
	return 0;
}

int rd_lz4_read_frame(int fd, rd_lz4_reader *r, const char *path, char *eb, size_t ebsz)
{
	struct lz_dec z = { 0 };
	LZ4F_frameInfo_t fi;
	int rc = 0, done = 0;
	ssize_t n;

	z.in = malloc(LZ_RD_CHUNK);
	z.out = malloc(LZ_OUT_CHUNK);
	if (!z.in || !z.out || LZ4F_isError(LZ4F_createDecompressionContext(&z.d, LZ4F_VERSION))) {
		rc = fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	n = fmt_read_full(fd, z.in, LZ_RD_CHUNK);
	if (n < 0) {
		rc = fmt_err(eb, ebsz, (int)n, "%s: read: %s", path, symdb_strerror((int)n));
		goto out;
	}
	z.in_len = (size_t)n;
	size_t hsz = z.in_len, h = LZ4F_getFrameInfo(z.d, &fi, z.in, &hsz);
	if (LZ4F_isError(h)) {
		rc = fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "%s: not an LZ4 frame: %s", path,
		             n == 0 ? "empty file" : LZ4F_getErrorName(h));
		goto out;
	}
	z.in_pos = hsz;
	if ((rc = lz_check_info(&fi, r->max, path, eb, ebsz)) != 0)
		goto out;
	r->declared = fi.contentSize;
	if (r->begin && (rc = r->begin(r->arg, r->declared)) != 0) {
		fmt_err(eb, ebsz, rc, "%s: %s", path, r->why ? r->why : symdb_strerror(rc));
		goto out;
	}
	for (;;) {
		if ((rc = lz_pump(&z, r, path, &done, eb, ebsz)) != 0)
			goto out;
		if (done && z.in_pos < z.in_len)
			break;
		n = fmt_read_full(fd, z.in, LZ_RD_CHUNK);
		if (n < 0) {
			rc = fmt_err(eb, ebsz, (int)n, "%s: read: %s", path, symdb_strerror((int)n));
			goto out;
		}
		if (n == 0)
			break;
		if (done)
			break;
		z.in_len = (size_t)n;
		z.in_pos = 0;
	}
	if (!done)
		rc = fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "%s: truncated (the LZ4 frame does not end)",
		             path);
	else if (z.in_pos < z.in_len || n > 0)
		rc = fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "%s: data after the end of the LZ4 frame",
		             path);
	else if (z.total != r->declared)
		rc = fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		             "%s: LZ4 frame holds %llu bytes, its header declares %llu", path,
		             (unsigned long long)z.total, (unsigned long long)r->declared);
out:
	LZ4F_freeDecompressionContext(z.d);
	free(z.in);
	free(z.out);
	return rc;
}
