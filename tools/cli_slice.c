/* SPDX-License-Identifier: MIT */
/*
 * cli_slice.c - pick one image of a universal Mach-O file or .dSYM bundle
 * by architecture name and open it by its LC_UUID (see cli_slice.h).
 * llvm-symbolizer spells the choice "--obj FILE:ARCH" (or --default-arch);
 * atos spells it "-arch ARCH".  Both are accepted.
 */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "cli_slice.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* "FILE:ARCH" when FILE exists and the whole string does not. */
static const char *split_arch(const char *obj, char *file, size_t file_sz)
{
	struct stat st;
	const char *colon = strrchr(obj, ':');

	if (!colon || stat(obj, &st) == 0 || (size_t)(colon - obj) >= file_sz)
		return NULL;
	memcpy(file, obj, (size_t)(colon - obj));
	file[colon - obj] = 0;
	return stat(file, &st) == 0 ? colon + 1 : NULL;
}

static void list_arches(const symdb_file_image *im, int n, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < n && len < sz; i++)
		len += (size_t)snprintf(buf + len, sz - len, "%s%s", i ? ", " : "", im[i].arch);
}

int cli_open_slice(symdb *db, const char *obj, const char *arch, const symdb_open_opts *o,
                   symdb_image **out)
{
	symdb_file_image im[64];
	char file[4096], names[512];
	const char *suffix = split_arch(obj, file, sizeof file);
	int n, pick = -1, rc;

	if (suffix) { /* FILE:ARCH wins over --default-arch, as in llvm-symbolizer */
		arch = suffix;
		obj = file;
	}
	n = symdb_file_uuids(obj, NULL, im, sizeof im / sizeof im[0], sizeof im[0]);
	/* ELF, or an error the caller's path reports.  An ELF file has one
	 * image: llvm-symbolizer ignores --default-arch for it, and the
	 * sanitizers always pass --default-arch=<host arch>. */
	if (n <= 0 || (n == 1 && !im[0].arch[0]))
		return 1;
	if (n > (int)(sizeof im / sizeof im[0]))
		n = (int)(sizeof im / sizeof im[0]);
	/* A thin file is its own only image whatever the arch asked for
	 * (llvm-symbolizer applies the arch to universal files only). */
	for (int i = 0; i < n; i++)
		if (n == 1 || (arch && !strcmp(im[i].arch, arch)))
			pick = i;
	list_arches(im, n, names, sizeof names);
	if (pick < 0 && arch) {
		cli_err(obj, "no %s image in this file (it has: %s)", arch, names);
		return -CLI_EXIT_USAGE;
	}
	if (pick < 0) {
		cli_err(obj, "universal file: choose one of %s with --arch or FILE:ARCH", names);
		return -CLI_EXIT_USAGE;
	}
	rc = symdb_image_open_uuid(db, &im[pick].uuid, o, out);
	if (rc == 0)
		return 0;
	if (rc == SYMDB_E_NOT_INDEXED) {
		char hex[2 * SYMDB_UUID_MAX + 1];
		symdb_uuid_format(&im[pick].uuid, hex);
		cli_err(obj, "%s image %s is not indexed; run 'symdb build %s' first",
		        im[pick].arch, hex, obj);
	} else {
		cli_err_lib(obj, rc, o->errbuf);
	}
	return -cli_exit_for(rc);
}
