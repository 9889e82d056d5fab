/* SPDX-License-Identifier: MIT */
/*
 * cli_build_walk.c - expand `symdb build`'s arguments (cli_build_walk.h).
 *
 * A directory is walked only with -r, like grep -r: symbolic links met
 * inside it are followed to files but never to directories, so a link loop
 * or a link to an ancestor cannot make the walk circle (a depth limit
 * guards against bind-mount cycles).  Every entry is classified by lstat/stat
 * first; only a regular file is ever opened, with O_NONBLOCK (a FIFO
 * swapped in after the stat cannot block the open), and only to read its
 * magic: ELF, Mach-O or universal Mach-O files are indexed, everything else
 * is noted and skipped, so that walking a build tree or /usr/lib is not a
 * failure because of a README.  A file reached twice (a link beside its
 * target, libfoo.so -> libfoo.so.1) is indexed once.  Entries are visited
 * in name order, so the output does not depend on the filesystem.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_build_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define WALK_MAX_DEPTH 256
#define PROC_FS_MAGIC 0x9fa0     /* statfs f_type of /proc */
#define SYS_FS_MAGIC 0x62656572  /* of /sys */

struct walk_item {
	char *path;
	dev_t dev;
	ino_t ino;
	size_t order;
	int via_link; /* reached through a symbolic link */
};

struct walk {
	struct walk_item *it;
	size_t n, cap;
	struct cli_inputs *in;
};

static int push_input(struct cli_inputs *in, const char *path)
{
	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 64;
		char **f = realloc(in->files, cap * sizeof *f);
		if (!f)
			return -ENOMEM;
		in->files = f;
		in->cap = cap;
	}
	if (!(in->files[in->n] = strdup(path)))
		return -ENOMEM;
	in->n++;
	return 0;
}

static void skip_note(struct walk *w, const char *path, const char *why)
{
	if (!w->in->quiet)
		cli_print_line("ignored %s (%s)\n", path, why);
	w->in->skipped++;
}

static const char *special_kind(mode_t m)
{
	return S_ISFIFO(m) ? "fifo" : S_ISSOCK(m) ? "socket" : S_ISCHR(m) ? "character device"
	       : S_ISBLK(m) ? "block device" : "not a regular file";
}

/* Universal Mach-O and Java class files share the magic CAFEBABE; a class
 * file's next word is its version (45 and up), a universal file's is its
 * slice count (a handful).  file(1) draws the line the same way. */
static int is_object_magic(const unsigned char *b, size_t n)
{
	static const unsigned char elf[4] = { 0x7f, 'E', 'L', 'F' };
	uint32_t be, le;
	if (n >= 4 && memcmp(b, elf, 4) == 0)
		return 1;
	if (n < 4)
		return 0;
	be = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	le = (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
	if (le == 0xfeedfaceu || le == 0xfeedfacfu || be == 0xfeedfaceu || be == 0xfeedfacfu)
		return 1;
	if ((be == 0xcafebabeu || le == 0xcafebabeu) && n >= 8) {
		uint32_t nfat = be == 0xcafebabeu
		                        ? (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7]
		                        : (uint32_t)b[7] << 24 | (uint32_t)b[6] << 16 | (uint32_t)b[5] << 8 | b[4];
		return nfat > 0 && nfat < 45;
	}
	return 0;
}

/* 1: an object file; 0: not (why set); -1: unreadable here (the builder
 * opens it again and reports the reason as a failure). */
static int probe_file(const char *path, const char **why)
{
	unsigned char b[8];
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*why = "not a regular file";
		return 0;
	}
	n = read(fd, b, sizeof b);
	close(fd);
	if (n < 0)
		return -1;
	*why = n == 0 ? "empty file" : "not an object file";
	return is_object_magic(b, (size_t)n);
}

static int add_item(struct walk *w, const char *path, const struct stat *st, int via_link)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct walk_item *it = realloc(w->it, cap * sizeof *it);
		if (!it)
			return -ENOMEM;
		w->it = it;
		w->cap = cap;
	}
	struct walk_item *x = &w->it[w->n];
	if (!(x->path = strdup(path)))
		return -ENOMEM;
	x->dev = st->st_dev;
	x->ino = st->st_ino;
	x->order = w->n;
	x->via_link = via_link;
	w->n++;
	return 0;
}

static int is_dsym_bundle(const char *dir)
{
	char p[4096];
	struct stat st;
	return snprintf(p, sizeof p, "%s/Contents/Resources/DWARF", dir) < (int)sizeof p &&
	       stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int walk_dir(struct walk *w, const char *dir, int depth);

/* One entry of a walked directory, classified by lstat (then stat for a
 * link: files are followed, directories never). */
static int walk_entry(struct walk *w, const char *path, int depth)
{
	struct stat ls, st;
	const char *why = NULL;
	int via_link = 0;

	if (lstat(path, &ls) != 0)
		return 0; /* removed meanwhile */
	st = ls;
	if (S_ISLNK(ls.st_mode)) {
		if (stat(path, &st) != 0) {
			skip_note(w, path, errno == ELOOP ? "symbolic link loop"
			                                  : "dangling symbolic link");
			return 0;
		}
		if (S_ISDIR(st.st_mode)) {
			skip_note(w, path, "symbolic link to a directory, not followed");
			return 0;
		}
		via_link = 1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (is_dsym_bundle(path))
			return add_item(w, path, &st, 0);
		if (depth >= WALK_MAX_DEPTH) {
			skip_note(w, path, "directory nested too deep");
			return 0;
		}
		return walk_dir(w, path, depth + 1);
	}
	if (!S_ISREG(st.st_mode)) {
		skip_note(w, path, special_kind(st.st_mode));
		return 0;
	}
	int r = probe_file(path, &why);
	if (r == 0) {
		skip_note(w, path, why);
		return 0;
	}
	return add_item(w, path, &st, via_link);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_dir(struct walk *w, const char *dir, int depth)
{
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	DIR *d = opendir(dir); /* O_DIRECTORY: never a FIFO swapped in */

	if (!d) {
		cli_err(dir, "cannot read directory: %s", strerror(errno));
		w->in->refused++;
		return 0;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 32) * sizeof *nn);
			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name)))
			rc = -ENOMEM;
		else
			n++;
	}
	closedir(d);
	if (rc == 0 && n)
		qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; i < n; i++) {
		int len = snprintf(path, sizeof path, "%s%s%s", dir,
		                   dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
		if (rc == 0 && len >= (int)sizeof path)
			skip_note(w, names[i], "path too long");
		else if (rc == 0)
			rc = walk_entry(w, path, depth);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Same file (device, inode): the one not reached through a link first,
 * then walk order. */
static int cmp_identity(const void *a, const void *b)
{
	const struct walk_item *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->via_link != y->via_link)
		return x->via_link - y->via_link;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_order(const void *a, const void *b)
{
	const struct walk_item *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Walk one directory argument and append its object files, each once. */
static int walk_arg(struct cli_inputs *in, const char *dir)
{
	struct walk w = { NULL, 0, 0, in };
	int rc = walk_dir(&w, dir, 0);
	size_t keep = 0;

	if (w.n)
		qsort(w.it, w.n, sizeof *w.it, cmp_identity);
	for (size_t i = 0; i < w.n; i++) {
		if (keep && w.it[keep - 1].dev == w.it[i].dev && w.it[keep - 1].ino == w.it[i].ino) {
			free(w.it[i].path);
			continue;
		}
		w.it[keep++] = w.it[i];
	}
	if (keep)
		qsort(w.it, keep, sizeof *w.it, cmp_order);
	for (size_t i = 0; i < keep; i++) {
		if (rc == 0)
			rc = push_input(in, w.it[i].path);
		free(w.it[i].path);
	}
	free(w.it);
	in->walked = 1;
	return rc;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* An argument refused before indexing: a directory without -r, or a file
 * of /proc or /sys (their sizes read as 0, and none is an object file;
 * /proc/kallsyms is the running kernel's symbol list). */
static int refuse_arg(const char *arg, const struct stat *st, int recursive)
{
	struct statfs sf;

	if (S_ISDIR(st->st_mode) && !recursive && !is_dsym_bundle(arg)) {
		cli_err(arg, "is a directory (use -r to index the object files under it)");
		return 1;
	}
	if (!S_ISREG(st->st_mode) || statfs(arg, &sf) != 0)
		return 0;
	if ((long)sf.f_type == PROC_FS_MAGIC && !strcmp(base_name(arg), "kallsyms")) {
		cli_err(arg, "not an object file: the running kernel's symbol list "
		             "(use 'symdb query --kernel' for kernel addresses)");
		return 1;
	}
	if ((long)sf.f_type == PROC_FS_MAGIC || (long)sf.f_type == SYS_FS_MAGIC) {
		cli_err(arg, "not an object file (a file of %s)",
		        (long)sf.f_type == PROC_FS_MAGIC ? "/proc" : "/sys");
		return 1;
	}
	return 0;
}

int cli_inputs_expand(struct cli_inputs *in, char **args, size_t nargs, int recursive)
{
	int rc = 0;

	for (size_t i = 0; i < nargs && rc == 0; i++) {
		struct stat st;
		/* A missing path, a FIFO...: the builder reports them as before. */
		if (stat(args[i], &st) != 0) {
			rc = push_input(in, args[i]);
		} else if (refuse_arg(args[i], &st, recursive)) {
			in->refused++;
		} else if (S_ISDIR(st.st_mode) && !is_dsym_bundle(args[i])) {
			rc = walk_arg(in, args[i]);
		} else {
			rc = push_input(in, args[i]);
		}
	}
	return rc;
}

void cli_inputs_free(struct cli_inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->files[i]);
	free(in->files);
	memset(in, 0, sizeof *in);
}
