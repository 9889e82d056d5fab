/* SPDX-License-Identifier: MIT */
/*
 * cli_slice.c - pick one image of a universal Mach-O file or .dSYM bundle
 * by architecture name and open it by its LC_UUID (see cli_slice.h).
 * llvm-symbolizer spells the choice "--obj FILE:ARCH" (or --default-arch);
 * atos spells it "-arch ARCH".  Both are accepted.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_slice.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symdb_build.h"

/* Architecture names llvm::Triple parses (Triple::parseArch), the ones a
 * "FILE:ARCH" module name may end in: llvm-symbolizer splits off a suffix
 * only when it is one of them, so "x.bin:foo" is a file name. */
static const char *const arch_names[] = {
	"aarch64", "aarch64_be", "aarch64_32", "amd64", "arm", "arm64", "arm64e", "arm64_32", "armeb",
	"armv4t", "armv5te", "armv6", "armv6m", "armv7", "armv7a", "armv7em", "armv7k", "armv7m",
	"armv7s", "armv8", "i386", "i486", "i586", "i686", "mips", "mips64", "mips64el", "mipsel",
	"powerpc", "powerpc64", "powerpc64le", "ppc", "ppc64", "ppc64le", "riscv32", "riscv64",
	"s390x", "sparc", "sparcv9", "thumb", "thumbeb", "wasm32", "wasm64", "x86", "x86_64",
	"x86_64h",
};

static int is_arch_name(const char *s)
{
	for (size_t i = 0; i < sizeof arch_names / sizeof arch_names[0]; i++)
		if (!strcmp(s, arch_names[i]))
			return 1;
	return 0;
}

const char *cli_split_arch(const char *obj, char *file, size_t file_sz)
{
	const char *colon = strrchr(obj, ':');

	if (!colon || !is_arch_name(colon + 1) || (size_t)(colon - obj) >= file_sz)
		return NULL;
	memcpy(file, obj, (size_t)(colon - obj));
	file[colon - obj] = 0;
	return colon + 1;
}

/* Whether path is a universal (fat) Mach-O file: its magic, big-endian. */
static int is_universal(const char *path)
{
	unsigned char m[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), r = 0;

	if (fd < 0)
		return 0;
	if (read(fd, m, 4) == 4)
		r = m[0] == 0xca && m[1] == 0xfe && m[2] == 0xba && (m[3] == 0xbe || m[3] == 0xbf);
	close(fd);
	return r;
}

static void list_arches(const symdb_file_image *im, int n, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < n && len < sz; i++)
		len += (size_t)snprintf(buf + len, sz - len, "%s%s", i ? ", " : "", im[i].arch);
}

/* Whether path is a regular file (a thin or universal Mach-O file, not a
 * .dSYM bundle directory). */
static int is_regular(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether path is a directory: one whose images symdb_file_uuids read is
 * a .dSYM bundle. */
static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* obj indexed into db (every slice, as `symdb build FILE` does), then its
 * slice id opened into *out: 0, or the error with the build's reason in
 * err. */
static int index_and_open(symdb *db, const char *obj, const symdb_uuid *id,
                          const symdb_build_opts *first_sight, const symdb_open_opts *o,
                          char *err, size_t errsz, symdb_image **out)
{
	symdb_build_opts bo = *first_sight;
	symdb_builder *b = NULL;
	int rc;

	bo.errbuf = err;
	bo.errbuf_sz = errsz;
	rc = symdb_builder_open(symdb_dir(db), &bo, &b);
	if (rc == 0)
		rc = symdb_builder_add(b, obj, &bo, NULL);
	symdb_builder_close(b);
	if (rc == 0)
		rc = symdb_image_open_uuid(db, id, o, out);
	return rc;
}

/* First sight of a universal file or a .dSYM bundle whose chosen slice db
 * lacks: the whole input is indexed into db, then the slice opened.  0,
 * or minus an exit code with the reason on stderr. */
static int build_then_open(symdb *db, const char *obj, const symdb_uuid *id,
                           const symdb_build_opts *first_sight, const symdb_open_opts *o,
                           symdb_image **out)
{
	char err[1024] = "";
	int rc = index_and_open(db, obj, id, first_sight, o, err, sizeof err, out);
	if (rc == 0)
		return 0;
	cli_err_lib(obj, rc, rc == SYMDB_E_NOT_INDEXED ? o->errbuf : err);
	return -cli_exit_for(rc);
}

/* SPEC §5.1: header Flags bit 1, HAS_DWARF (DWARF was indexed). */
#define CLI_IMAGE_HAS_DWARF 0x2u

/* Whether img, the image of universal file obj's slice id indexed without
 * DWARF, now has DWARF beside obj: a dSYM that carries id in the file the
 * builder takes (BINARY.dSYM/Contents/Resources/DWARF/BASENAME), made by
 * dsymutil since.  Building obj again then replaces the index (SPEC
 * §12.5), as the symbolizer context does for a thin file; a stale dSYM of
 * another build starts no build. */
static int dsym_made_since(const symdb_image *img, const char *obj, const symdb_uuid *id)
{
	SYMDB_OPTS(symdb_image_info, info);
	symdb_file_image im[64];
	const char *base = strrchr(obj, '/');
	char dwarf[4096];
	int n;

	if (symdb_image_get_info(img, &info) != 0 || (info.flags & CLI_IMAGE_HAS_DWARF))
		return 0;
	base = base ? base + 1 : obj;
	n = snprintf(dwarf, sizeof dwarf, "%s.dSYM/Contents/Resources/DWARF/%s", obj, base);
	if (n < 0 || (size_t)n >= sizeof dwarf || !is_regular(dwarf))
		return 0;
	n = symdb_file_uuids(dwarf, NULL, im, sizeof im / sizeof im[0], sizeof im[0]);
	for (int i = 0; i < n && i < (int)(sizeof im / sizeof im[0]); i++)
		if (im[i].uuid.len == id->len && !memcmp(im[i].uuid.bytes, id->bytes, id->len))
			return 1;
	return 0;
}

/* obj built again for its dSYM (dsym_made_since), and *img, its slice id's
 * old image, swapped for the new one.  A build that fails (or adds
 * nothing) leaves the answers to the index *img has, unreported. */
static void rebuild_for_dsym(symdb *db, const char *obj, const symdb_uuid *id,
                             const symdb_build_opts *first_sight, const symdb_open_opts *o,
                             symdb_image **img)
{
	symdb_image *fresh = NULL;
	char err[1];

	if (index_and_open(db, obj, id, first_sight, o, err, sizeof err, &fresh) == 0) {
		symdb_image_close(*img);
		*img = fresh;
	}
}

int cli_open_slice(symdb *db, const char *obj, const char *arch, const symdb_open_opts *o,
                   const symdb_build_opts *first_sight, symdb_image **out, char *llvm_msg,
                   size_t llvm_msz)
{
	symdb_file_image im[64];
	char names[512], why[1024] = "";
	int n, pick = -1, rc;
	SYMDB_OPTS(symdb_open_opts, uo, .errbuf = why, .errbuf_sz = sizeof why);

	n = symdb_file_uuids(obj, &uo, im, sizeof im / sizeof im[0], sizeof im[0]);
	/* A universal file the library refuses (slices that overlap, two
	 * slices with one LC_UUID): the reason `symdb build` gives (not
	 * advice to build it, nor a generic "not an object file").  A
	 * first-sight query answers as llvm-symbolizer-14, which refuses such
	 * files too: its "error reading file" line with that reason, "??"
	 * answers, exit 0; --no-build and `info` report it symdb's way. */
	if (n < 0 && n != -ENOMEM && is_universal(obj)) {
		if (first_sight && llvm_msg) {
			snprintf(llvm_msg, llvm_msz, "%s", why[0] ? why : symdb_strerror(n));
			return CLI_SLICE_UNCHOSEN;
		}
		cli_err_lib(obj, n, why);
		return -cli_exit_for(n);
	}
	/* ELF, or an error the caller's path reports.  An ELF file has one
	 * image: llvm-symbolizer ignores --default-arch for it, and the
	 * sanitizers always pass --default-arch=<host arch>. */
	if (n <= 0 || (n == 1 && !im[0].arch[0]))
		return 1;
	if (n > (int)(sizeof im / sizeof im[0]))
		n = (int)(sizeof im / sizeof im[0]);
	/* A thin file (or a bundle) is its own only image whatever the arch
	 * asked for: llvm-symbolizer applies the arch to universal files only,
	 * even to one with a single slice. */
	int fat = is_universal(obj);
	/* A thin file is the caller's, whose symbolizer context indexes it on
	 * first sight (and again when its dSYM is made later), as an ELF file. */
	if (first_sight && n == 1 && !fat && is_regular(obj))
		return 1;
	for (int i = 0; i < n; i++)
		if ((n == 1 && !fat) || (arch && !strcmp(im[i].arch, arch)))
			pick = i;
	list_arches(im, n, names, sizeof names);
	if (pick < 0 && llvm_msg) { /* llvm-symbolizer's words; "??" answers */
		if (arch)
			snprintf(llvm_msg, llvm_msz, "fat file does not contain %s", arch);
		else
			snprintf(llvm_msg, llvm_msz, "Unknown architecture named: ");
		return CLI_SLICE_UNCHOSEN;
	}
	if (pick < 0 && arch) {
		cli_err(obj, "no %s image in this file (it has: %s)", arch, names);
		return -CLI_EXIT_USAGE;
	}
	if (pick < 0) {
		cli_err(obj, "universal file: choose one of %s with --arch or FILE:ARCH", names);
		return -CLI_EXIT_USAGE;
	}
	rc = symdb_image_open_uuid(db, &im[pick].uuid, o, out);
	if (rc == 0 && first_sight && fat && is_regular(obj) &&
	    dsym_made_since(*out, obj, &im[pick].uuid))
		rebuild_for_dsym(db, obj, &im[pick].uuid, first_sight, o, out);
	if (rc == 0)
		return 0;
	if (rc == SYMDB_E_NOT_INDEXED && first_sight && (is_regular(obj) || is_dir(obj)))
		return build_then_open(db, obj, &im[pick].uuid, first_sight, o, out);
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
