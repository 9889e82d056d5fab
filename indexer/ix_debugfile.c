/* SPDX-License-Identifier: MIT */
/*
 * ix_debugfile.c - chooses the separate debug file of a binary among the
 * candidates the builder opened for it (SPEC §12.5).
 *
 * The search itself - llvm-symbolizer 14's LLVMSymbolizer::lookUpBuildIDObject
 * then lookUpDebuglinkObject, with symdb's --debug-dir tried before the
 * system directory - runs in the builder (reader/build_spawn.c), which opens
 * each existing candidate once and passes the descriptors: the indexer opens
 * no path.  What is left here is what needs the file's bytes: a
 * .gnu_debuglink candidate is used only if the zlib/IEEE CRC-32 of the whole
 * file equals the one the binary records.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "format_io.h"
#include "ix_dwarf_internal.h"

/* GNU debuglink CRC: the zlib/IEEE CRC-32 of the whole file, read with
 * pread so the descriptor's offset does not matter. */
static int crc_matches(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	ptrdiff_t r;

	while ((r = fmt_pread_full(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)r);
		off += (uint64_t)r;
		if ((size_t)r < sizeof(buf))
			break;
	}
	return r >= 0 && (uint32_t)crc == want;
}

const symdb_indexer_file *ix_debugfile_find(const ix_sections *bin, const ix_opts *opts)
{
	if (!opts)
		return NULL;
	if (opts->debug.fd >= 0)
		return &opts->debug;
	if (!bin->debuglink[0])
		return NULL;
	for (unsigned i = 0; i < opts->ndebuglinks; i++)
		if (opts->debuglinks[i].fd >= 0 &&
		    crc_matches(opts->debuglinks[i].fd, bin->debuglink_crc))
			return &opts->debuglinks[i];
	return NULL;
}
