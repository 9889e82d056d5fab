/* SPDX-License-Identifier: MIT */
/*
 * build_inputs.c - every file of one build, opened exactly once (SPEC
 * §12.5): the input (or a .dSYM bundle's DWARF files), then the separate
 * debug file candidates of an ELF input or the companion dSYM file of a
 * Mach-O one.
 *
 * Why once: a path is a name, not a file.  When the builder hashed one
 * file, computed the UUID of another and the indexer parsed a third (a
 * rename over the path in between), it published an index of one program
 * under another's build-id.  Everything - UUIDs, content hash, the limits,
 * the indexer's parse - now reads the descriptors opened here, and the
 * indexer opens no path at all.
 *
 * Why O_NONBLOCK: opening a FIFO for reading blocks until a writer comes,
 * so one planted FIFO hung the whole command.  With O_NONBLOCK the open
 * returns at once and fstat says what it is; only regular files are read.
 *
 * The debug file search follows the indexer's former one (llvm-symbolizer
 * 14's order, with --debug-dir before the system directory), so that the
 * same file is chosen and the output stays identical to llvm-symbolizer's:
 *   1. build-id: DIR/.build-id/xx/rest.debug for DIR = debug_dir, then
 *      /usr/lib/debug; the first that opens as a regular file is it (and
 *      when that is the input itself, there is no debug file);
 *   2. .gnu_debuglink NAME: beside the binary, in .debug/ beside it, then
 *      DIR/absolute-binary-dir/NAME for DIR = debug_dir, then
 *      /usr/lib/debug; every regular candidate is passed, and the indexer
 *      takes the first whose CRC-32 matches (that needs its bytes).
 * A debuglink name containing '/' or ".." is never followed: it comes from
 * the binary and must not walk the filesystem.
 */
#define _GNU_SOURCE /* O_DIRECTORY, realpath, openat */
#include "publish_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format_header.h"
#include "rd_uuid.h"

#define BI_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
#define BI_SYSTEM_DEBUG_DIR "/usr/lib/debug"

/* What a non-regular file is, for the one-line error. */
static void bi_fd_none(publish_fd *f)
{
	f->fd = -1;
	f->name[0] = 0;
	f->signed_ = 0;
}

static int64_t bi_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Record what fstat says of f, opened and not yet read. */
static void bi_fd_sign(publish_fd *f, const struct stat *st)
{
	f->signed_ = 1;
	f->size = (uint64_t)st->st_size;
	f->mtime_ns = bi_ns(st->st_mtim);
}

/* 0, or -EAGAIN with the reason in eb when f changed since bi_fd_sign.
 * Every write moves mtime; since Linux 6.13 a write after an fstat always
 * gets a later one (multigrain timestamps), before that only a later clock
 * tick does (a few ms).  Not ctime: a hard link made or removed moves it
 * too, and files renamed over an input path by way of links (the usual
 * atomic install) must not fail a build that read one whole file. */
static int bi_fd_same(const publish_fd *f, char *eb, size_t ebsz)
{
	struct stat st;

	if (f->fd < 0 || !f->signed_)
		return 0;
	if (fstat(f->fd, &st) == 0 && (uint64_t)st.st_size == f->size &&
	    bi_ns(st.st_mtim) == f->mtime_ns)
		return 0;
	return fmt_err(eb, ebsz, -EAGAIN,
	               "%s: changed while it was indexed (written in place); nothing published",
	               f->name);
}

int build_input_unchanged(const publish_input *in, char *eb, size_t ebsz)
{
	int rc = bi_fd_same(&in->in, eb, ebsz);

	for (unsigned i = 0; rc == 0 && i < in->nfiles; i++)
		rc = bi_fd_same(&in->files[i], eb, ebsz);
	if (rc == 0)
		rc = bi_fd_same(&in->debug, eb, ebsz);
	for (unsigned i = 0; rc == 0 && i < in->nlinks; i++)
		rc = bi_fd_same(&in->links[i], eb, ebsz);
	if (rc == 0)
		rc = bi_fd_same(&in->companion, eb, ebsz);
	if (rc == 0)
		rc = bi_fd_same(&in->dwp, eb, ebsz);
	return rc;
}

static void bi_fd_close(publish_fd *f)
{
	if (f->fd >= 0)
		close(f->fd);
	bi_fd_none(f);
}

void build_input_close(publish_input *in)
{
	bi_fd_close(&in->in);
	for (unsigned i = 0; i < in->nfiles; i++)
		bi_fd_close(&in->files[i]);
	bi_fd_close(&in->debug);
	for (unsigned i = 0; i < in->nlinks; i++)
		bi_fd_close(&in->links[i]);
	bi_fd_close(&in->companion);
	bi_fd_close(&in->dwp);
	in->nfiles = in->nlinks = 0;
}

static int bi_name_cmp(const void *a, const void *b)
{
	return strcmp(((const publish_fd *)a)->name, ((const publish_fd *)b)->name);
}

/* A .dSYM bundle: at most PUBLISH_MAX_DSYM_FILES regular files of
 * Contents/Resources/DWARF/ (in directory order, as the indexer always
 * read them), each opened once relative to the directory, then sorted by
 * name; name becomes the full path for messages. */
static int bi_open_dsym(publish_input *in, int dwarf, const char *path, char *eb, size_t ebsz)
{
	char sub[4096];
	struct dirent *de;
	DIR *dp = fdopendir(dwarf);

	if (!dp) {
		int rc = -errno;
		close(dwarf);
		return fmt_err(eb, ebsz, rc, "%s: %s", path, symdb_strerror(rc));
	}
	while ((de = readdir(dp)) != NULL && in->nfiles < PUBLISH_MAX_DSYM_FILES) {
		publish_fd *f = &in->files[in->nfiles];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		f->fd = openat(dirfd(dp), de->d_name, BI_FLAGS);
		if (f->fd >= 0 && fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    (size_t)snprintf(f->name, sizeof f->name, "%s", de->d_name) < sizeof f->name) {
			bi_fd_sign(f, &st);
			in->size += (uint64_t)st.st_size;
			in->nfiles++;
		} else {
			bi_fd_close(f);
		}
	}
	closedir(dp);
	if (in->nfiles == 0)
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: dSYM bundle has no DWARF file in Contents/Resources/DWARF", path);
	qsort(in->files, in->nfiles, sizeof in->files[0], bi_name_cmp);
	for (unsigned i = 0; i < in->nfiles; i++) {
		snprintf(sub, sizeof sub, "%s", in->files[i].name);
		if ((size_t)snprintf(in->files[i].name, sizeof in->files[i].name,
		                     "%s/Contents/Resources/DWARF/%s", path, sub) >=
		    sizeof in->files[i].name)
			return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s: path too long", path);
	}
	return 0;
}

/* A directory input is a .dSYM bundle when it has Contents/Resources/DWARF/
 * (SPEC §12.5), else "is a directory". */
static int bi_open_dir(publish_input *in, int dirfd_, const char *path, char *eb, size_t ebsz)
{
	int dwarf = openat(dirfd_, "Contents/Resources/DWARF",
	                   O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	close(dirfd_);
	if (dwarf < 0)
		return fmt_err(eb, ebsz, -EISDIR, "%s: is a directory", path);
	return bi_open_dsym(in, dwarf, path, eb, ebsz);
}

int build_input_open(publish_input *in, const char *path, char *eb, size_t ebsz)
{
	struct stat st;
	int fd, rc;

	memset(in, 0, sizeof *in);
	bi_fd_none(&in->in);
	bi_fd_none(&in->debug);
	bi_fd_none(&in->companion);
	bi_fd_none(&in->dwp);
	fd = open(path, BI_FLAGS);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		/* a socket cannot be opened (ENXIO): say what it is, as for a FIFO */
		if (rc == -ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
		    !S_ISDIR(st.st_mode))
			return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not a regular file (%s)",
			               path, rd_mode_name(st.st_mode));
		return fmt_err(eb, ebsz, rc, "%s: %s", path, symdb_strerror(rc));
	}
	if (S_ISDIR(st.st_mode))
		return bi_open_dir(in, fd, path, eb, ebsz);
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fmt_err(eb, ebsz, SYMDB_E_BAD_OBJECT, "%s: not a regular file (%s)", path,
		               rd_mode_name(st.st_mode));
	}
	in->in.fd = fd;
	snprintf(in->in.name, sizeof in->in.name, "%s", path);
	bi_fd_sign(&in->in, &st);
	in->size = (uint64_t)st.st_size;
	in->dev = (uint64_t)st.st_dev;
	in->ino = (uint64_t)st.st_ino;
	return 0;
}

/* Open one candidate: 1 when it is a regular file other than the input
 * (then f holds it), 0 when it is missing or not regular (skipped, nothing
 * read: a FIFO opens at once with O_NONBLOCK), 2 when it is the input. */
static int bi_candidate(const publish_input *in, publish_fd *f, const char *cand)
{
	struct stat st;
	int fd;

	if (strlen(cand) >= sizeof f->name)
		return 0;
	fd = open(cand, BI_FLAGS);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	if ((uint64_t)st.st_dev == in->dev && (uint64_t)st.st_ino == in->ino) {
		close(fd);
		return 2;
	}
	f->fd = fd;
	snprintf(f->name, sizeof f->name, "%s", cand);
	bi_fd_sign(f, &st);
	return 1;
}

/* Step 1: the build-id hit.  1 when the search is over (a debug file, or
 * the input itself), 0 to go on with the debuglink. */
static int bi_build_id(publish_input *in, const uint8_t *id, size_t len, const char *dir)
{
	char hex[2 * RD_DEBUG_ID_MAX + 1], cand[PATH_MAX];
	int n;

	if (!dir || !*dir || len < 2)
		return 0;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	n = snprintf(cand, sizeof cand, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	if (n <= 0 || (size_t)n >= sizeof cand)
		return 0;
	return bi_candidate(in, &in->debug, cand) != 0;
}

static void bi_link(publish_input *in, const char *cand)
{
	if (in->nlinks < PUBLISH_MAX_LINKS && bi_candidate(in, &in->links[in->nlinks], cand) == 1)
		in->nlinks++;
}

/* Step 2: every .gnu_debuglink candidate that is a regular file. */
static void bi_debuglink(publish_input *in, const char *name, const char *binary_path,
                         const char *debug_dir)
{
	char dir[PATH_MAX], absdir[PATH_MAX], cand[PATH_MAX + 300];
	const char *roots[2] = { debug_dir, BI_SYSTEM_DEBUG_DIR };
	char *slash;

	if (!*name || strchr(name, '/') || strstr(name, ".."))
		return;
	snprintf(dir, sizeof dir, "%s", binary_path);
	slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		snprintf(dir, sizeof dir, "./");
	snprintf(cand, sizeof cand, "%s%s", dir, name);
	bi_link(in, cand);
	snprintf(cand, sizeof cand, "%s.debug/%s", dir, name);
	bi_link(in, cand);
	if (!realpath(dir, absdir))
		return;
	for (int i = 0; i < 2; i++) {
		if (!roots[i] || !*roots[i])
			continue;
		snprintf(cand, sizeof cand, "%s%s/%s", roots[i], absdir, name);
		bi_link(in, cand);
	}
}

/* BINARY.dSYM/Contents/Resources/DWARF/BASENAME beside a Mach-O file, as
 * llvm-symbolizer looks for it. */
static void bi_companion(publish_input *in, const char *path)
{
	char cand[4096];
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if ((size_t)snprintf(cand, sizeof cand, "%s.dSYM/Contents/Resources/DWARF/%s", path,
	                     base) < sizeof cand)
		(void)bi_candidate(in, &in->companion, cand);
}

/* BINARY.dwp, named as llvm-symbolizer 14 names it: the path it was given
 * plus ".dwp" (DWARFContext::getDWOContext). */
static void bi_dwp(publish_input *in, const char *path)
{
	char cand[4096];

	if ((size_t)snprintf(cand, sizeof cand, "%s.dwp", path) < sizeof cand)
		(void)bi_candidate(in, &in->dwp, cand);
}

void build_input_debug(publish_input *in, const char *path, int is_macho,
                       const symdb_build_opts *o)
{
	uint8_t id[RD_DEBUG_ID_MAX];
	char link[256];
	size_t len;

	if (in->in.fd < 0 || (o->flags & SYMDB_BUILD_NO_DWARF))
		return;
	if (is_macho) {
		bi_companion(in, path);
		return;
	}
	/* BINARY.dwp, named as llvm-symbolizer 14 names it (the path it was
	 * given plus ".dwp", DWARFContext::getDWOContext). */
	bi_dwp(in, path);
	rd_elf_debug_refs(in->in.fd, id, &len, link, sizeof link, &in->link_crc);
	if (bi_build_id(in, id, len, o->debug_dir) ||
	    bi_build_id(in, id, len, BI_SYSTEM_DEBUG_DIR))
		return;
	bi_debuglink(in, link, path, o->debug_dir);
}

int build_input_dwo(const publish_input *in, publish_fd *f, const char *path, const char **why)
{
	unsigned char magic[4];
	int r;

	f->fd = -1;
	r = bi_candidate(in, f, path);
	if (r != 1) {
		*why = r == 2 ? "is the input itself" : "not found";
		return 0;
	}
	if (pread(f->fd, magic, 4, 0) != 4 || memcmp(magic, "\177ELF", 4) != 0) {
		bi_fd_close(f);
		*why = "not an ELF file";
		return 0;
	}
	return 1;
}
