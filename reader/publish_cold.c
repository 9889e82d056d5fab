/* SPDX-License-Identifier: MIT */
/*
 * publish_cold.c - what the build path needs to know about cold storage (SPEC
 * §12.8): a compacted image is indexed.  Its catalog entry still names
 * `…/UUIDHEX.symdb`, which is gone; the image lives on as
 * `…/UUIDHEX.symdb.lz4`, and the reader thaws it on the first query.  A
 * build must skip it, not rebuild it, so "already indexed?" accepts a cold
 * form whose LZ4 frame header declares the entry's File_Size.  Only the
 * frame header is read: full checks are the reader's and verify's job.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <lz4frame.h>
#include <stdio.h>
#include <unistd.h>

#include "db_dir.h"
#include "format_io.h"
#include "format_layout.h"
#include "publish_internal.h"

int publish_cold_indexed(const char *index_path, uint64_t file_size)
{
	char lz[4096 + 8];
	unsigned char h[LZ4F_HEADER_SIZE_MAX];
	LZ4F_dctx *d = NULL;
	LZ4F_frameInfo_t fi;
	size_t hsz;
	ptrdiff_t n;
	int fd, ok = 0;

	if (fmt_layout_cold(lz, sizeof lz, index_path))
		return 0;
	fd = rd_safe_open_path(lz); /* never followed (db_dir.h) */
	if (fd < 0)
		return 0;
	n = fmt_pread_full(fd, h, sizeof h, 0);
	close(fd);
	if (n <= 0 || LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
		return 0;
	hsz = (size_t)n;
	if (!LZ4F_isError(LZ4F_getFrameInfo(d, &fi, h, &hsz)))
		ok = fi.contentSize == file_size && file_size != 0;
	LZ4F_freeDecompressionContext(d);
	return ok;
}
