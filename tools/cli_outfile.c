/* SPDX-License-Identifier: MIT */
/*
 * cli_outfile.c - the rule of cli_outfile.h: regular files replaced
 * atomically, everything else written in place.
 */
#define _XOPEN_SOURCE 700 /* mkstemp, fdopen, realpath */
#include "cli_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where the temporary file goes and what it replaces: path itself, or the
 * target of a symbolic link to a regular file (so the link survives).
 * Malloc'd, or NULL with errno. */
static char *replace_target(const char *path)
{
	struct stat ls;
	if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode)) {
		char *real = realpath(path, NULL);
		if (real)
			return real;
		/* A dangling link: the new file replaces the link itself. */
	}
	return strdup(path);
}

/* "DIR/.NAME.XXXXXX" beside dest, with the mode creat() would give (mkstemp
 * makes 0600).  fd or -1 with errno; *tmp malloc'd on success. */
static int temp_beside(const char *dest, char **tmp)
{
	const char *slash = strrchr(dest, '/');
	size_t dl = slash ? (size_t)(slash - dest) + 1 : 0, n = strlen(dest) + 16;
	if (!(*tmp = malloc(n)))
		return -1;
	snprintf(*tmp, n, "%.*s.%s.XXXXXX", (int)dl, dest, dest + dl);
	int fd = mkstemp(*tmp);
	if (fd >= 0) {
		mode_t mask = umask(0);
		umask(mask);
		if (fchmod(fd, 0666 & ~mask) == 0)
			return fd;
		int e = errno;
		close(fd);
		unlink(*tmp);
		errno = e;
	}
	free(*tmp);
	*tmp = NULL;
	return -1;
}

/* Open o->name in place (it exists and is not a regular file). */
static int open_in_place(struct cli_outfile *o)
{
	int fd = open(o->name, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return 0;
}

static int open_replacing(struct cli_outfile *o)
{
	if (!(o->dest = replace_target(o->name)))
		return -1;
	int fd = temp_beside(o->dest, &o->tmp);
	if (fd >= 0 && (o->f = fdopen(fd, "w")))
		return 0;
	int e = errno;
	if (fd >= 0) {
		close(fd);
		unlink(o->tmp);
	}
	free(o->tmp);
	free(o->dest);
	o->tmp = o->dest = NULL;
	errno = e;
	return -1;
}

int cli_outfile_open(struct cli_outfile *o, const char *path)
{
	struct stat st;
	memset(o, 0, sizeof *o);
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		o->name = "<stdout>";
		return 0;
	}
	o->name = path;
	/* stat follows links: a link to /dev/null is written in place too. */
	int in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	if ((in_place ? open_in_place(o) : open_replacing(o)) == 0)
		return 0;
	cli_err(path, "%s", strerror(errno));
	return -1;
}

/* Flush and close o->f: 0 or an errno value. */
static int close_stream(struct cli_outfile *o)
{
	int e = 0;
	if (fflush(o->f) != 0)
		e = errno;
	if (!e && o->tmp && fsync(fileno(o->f)) != 0)
		e = errno;
	if (o->f != stdout && fclose(o->f) != 0 && !e)
		e = errno;
	o->f = NULL;
	return e;
}

int cli_outfile_commit(struct cli_outfile *o)
{
	if (!o->f)
		return -1;
	int e = close_stream(o);
	if (!e && o->tmp && rename(o->tmp, o->dest) != 0)
		e = errno;
	if (e) {
		cli_err(o->name, "%s", strerror(e));
		cli_outfile_abort(o);
		return -1;
	}
	free(o->tmp);
	free(o->dest);
	o->tmp = o->dest = NULL;
	return 0;
}

void cli_outfile_abort(struct cli_outfile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	else if (o->f)
		fflush(o->f);
	o->f = NULL;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->dest);
	o->tmp = o->dest = NULL;
}
