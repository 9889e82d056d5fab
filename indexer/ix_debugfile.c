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

#include "format_content.h"
#include "ix_dwarf_internal.h"

const symdb_indexer_file *ix_debugfile_find(const ix_sections *bin, const ix_opts *opts)
{
	uint32_t crc;

	if (!opts)
		return NULL;
	if (opts->debug.fd >= 0)
		return &opts->debug;
	if (!bin->debuglink[0])
		return NULL;
	for (unsigned i = 0; i < opts->ndebuglinks; i++)
		if (opts->debuglinks[i].fd >= 0 &&
		    fmt_fd_crc32(opts->debuglinks[i].fd, &crc) == 0 && crc == bin->debuglink_crc)
			return &opts->debuglinks[i];
	return NULL;
}
