/* SPDX-License-Identifier: MIT */
/*
 * ix_debugfile.c - finds the separate debug file of a binary.
 *
 * The search follows llvm-symbolizer 14 (LLVMSymbolizer::lookUpBuildIDObject,
 * then lookUpDebuglinkObject), with symdb's --debug-dir tried before the
 * system directory:
 *   1. build-id: DIR/.build-id/xx/rest.debug for DIR = debug_dir, then
 *      /usr/lib/debug (GDB manual "Separate Debug Files");
 *   2. .gnu_debuglink NAME (only if its CRC32 matches the file): beside the
 *      binary, in .debug/ beside it, then DIR/absolute-binary-dir/NAME for
 *      DIR = debug_dir, then /usr/lib/debug.
 * A debuglink name containing '/' or ".." is never followed: it comes from
 * the binary and must not walk the filesystem.
 */
#define _DEFAULT_SOURCE /* realpath, PATH_MAX, O_CLOEXEC */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "format_io.h"
#include "ix_dwarf_internal.h"

static int is_regular(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int try_build_id(const ix_sections *bin, const char *dir, char *out, size_t out_sz)
{
	if (!dir || !*dir || bin->build_id_len < 2)
		return 0;
	char hex[2 * sizeof(bin->build_id) + 1];
	for (size_t i = 0; i < bin->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bin->build_id[i]);
	int n = snprintf(out, out_sz, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	return n > 0 && (size_t)n < out_sz && is_regular(out);
}

/* GNU debuglink CRC: the zlib/IEEE CRC-32 of the whole file. */
static int crc_matches(const char *path, uint32_t want)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ptrdiff_t r;
	while ((r = fmt_read_full(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)r);
	close(fd);
	return r == 0 && (uint32_t)crc == want;
}

static int try_link(const char *candidate, const ix_sections *bin, char *out, size_t out_sz)
{
	if (!is_regular(candidate) || !crc_matches(candidate, bin->debuglink_crc))
		return 0;
	snprintf(out, out_sz, "%s", candidate);
	return 1;
}

static int try_debuglink(const ix_sections *bin, const char *binary_path,
			 const char *debug_dir, char *out, size_t out_sz)
{
	const char *name = bin->debuglink;
	if (!*name || strchr(name, '/') || strstr(name, ".."))
		return 0;
	char dir[PATH_MAX], absdir[PATH_MAX], cand[PATH_MAX + 300];
	snprintf(dir, sizeof(dir), "%s", binary_path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		snprintf(dir, sizeof(dir), "./");
	snprintf(cand, sizeof(cand), "%s%s", dir, name);
	if (try_link(cand, bin, out, out_sz))
		return 1;
	snprintf(cand, sizeof(cand), "%s.debug/%s", dir, name);
	if (try_link(cand, bin, out, out_sz))
		return 1;
	if (!realpath(dir, absdir))
		return 0;
	const char *roots[2] = { debug_dir, "/usr/lib/debug" };
	for (int i = 0; i < 2; i++) {
		if (!roots[i] || !*roots[i])
			continue;
		snprintf(cand, sizeof(cand), "%s%s/%s", roots[i], absdir, name);
		if (try_link(cand, bin, out, out_sz))
			return 1;
	}
	return 0;
}

int ix_debugfile_find(const ix_sections *bin, const char *binary_path,
		      const char *debug_dir, char *out, size_t out_sz)
{
	if (try_build_id(bin, debug_dir, out, out_sz) ||
	    try_build_id(bin, "/usr/lib/debug", out, out_sz))
		return 1;
	if (try_debuglink(bin, binary_path, debug_dir, out, out_sz))
		return 1;
	if (out_sz)
		out[0] = 0;
	return 0;
}
