/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize_build.c - index on first sight (SYMDB_SYMBOLIZER_BUILD):
 * a binary a symbolizer context meets that its database lacks is indexed
 * by the builder of symdb_build.h (the sandboxed symdb-indexer, then the
 * publishing of SPEC §12.5), exactly as `symdb build` would, and opened.
 *
 * A database that cannot take the index must not cost the answer: the
 * input is then indexed into a private directory made with mkdtemp under
 * tmp_dir, its one index file mapped (symdb_image_open_file) and the whole
 * directory removed at once.  The mapping outlives the unlinked file, so
 * nothing is left behind even when the process is killed later; only the
 * seconds of the build itself leave a window.  From the first such fallback
 * on, the context builds privately without trying the database again, and
 * says so once (on_warning).
 */
#define _GNU_SOURCE /* mkdtemp, nftw's FTW_DEPTH and FTW_PHYS */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader_symbolize.h"
#include "symdb_build.h"

/* Whether a build failed for the database's sake rather than the input's:
 * the input was read (its UUID computed) before, so a denied or failed
 * write is the database's.  Input faults (not an object, too big, the
 * indexer's time or memory limit) fail the same way anywhere. */
static int db_fault(int rc)
{
	switch (rc) {
	case -ENOSPC: case -EDQUOT: case -EROFS: case -EACCES: case -EPERM: case -EIO:
	case -ELOOP: case -ENOTDIR: case -EEXIST: case -EFBIG: case -ENAMETOOLONG:
	case -EMLINK:
	case SYMDB_E_CATALOG: case SYMDB_E_LOCK_REPLACED: case SYMDB_E_NETFS:
	case SYMDB_E_READONLY:
		return 1;
	default:
		return 0;
	}
}

static void warn_private(symdb_symbolizer *s, const char *dir, const char *why)
{
	char line[1400];
	int n = snprintf(line, sizeof line,
	                 "symdb: warning: database %s cannot be written (%s); indexing into a "
	                 "private temporary directory for this process",
	                 dir, why);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = (int)sizeof line - 1;
	if (s->on_warning) {
		s->on_warning(line, s->on_warning_arg);
		return;
	}
	line[n] = '\n'; /* one write: lines of other processes do not cut into it */
	if (write(STDERR_FILENO, line, (size_t)n + 1) < 0) { /* nowhere to report */
	}
}

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	if (type == FTW_DP)
		(void)rmdir(p);
	else
		(void)unlink(p);
	return 0;
}

/* Build path into a fresh private database and map its index file. */
static int build_private(symdb_symbolizer *s, const char *path, unsigned names,
                         symdb_image **img)
{
	char dir[4096];
	const char *tmp = s->tmp_dir ? s->tmp_dir : "/tmp";
	symdb_builder *b = NULL;
	symdb_build_result *res;
	int rc;

	if ((size_t)snprintf(dir, sizeof dir, "%s/symdb-private-XXXXXX", tmp) >= sizeof dir)
		return fmt_err(s->build_err, sizeof s->build_err, -ENAMETOOLONG,
		               "%s: path too long", tmp);
	if (!mkdtemp(dir)) {
		rc = -errno;
		return fmt_err(s->build_err, sizeof s->build_err, rc, "%s: %s", tmp,
		               symdb_strerror(rc));
	}
	res = malloc(sizeof *res); /* ~12 KiB: not on the caller's stack */
	if (!res) {
		(void)rmdir(dir);
		return -ENOMEM;
	}
	res->sz = sizeof *res;
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = s->build_err, .errbuf_sz = sizeof s->build_err,
	           .indexer_path = s->indexer_path);
	rc = symdb_builder_open(dir, &bo, &b);
	if (rc == 0)
		rc = symdb_builder_add(b, path, &bo, res);
	symdb_builder_close(b);
	if (rc == 0) {
		SYMDB_OPTS(symdb_open_opts, oo,
		           .flags = (s->open_flags & SYMDB_OPEN_VERIFY_CHECKSUMS) | names,
		           .errbuf = s->build_err, .errbuf_sz = sizeof s->build_err);
		rc = symdb_image_open_file(res->index_path, &oo, img);
	}
	free(res);
	(void)nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}

/* Publish path into the context's database (opening its builder on first
 * use) and open the image from there: 0, or the error.  Another process
 * may remove the image between the commit and the open (symdb rm, gc:
 * the entry gone, or its file unlinked first):
 * the add is made again, up to BUILD_SHARED_TRIES times, and then the
 * caller indexes it privately (SYMDB_E_NOT_INDEXED is not the answer to a
 * file that was just indexed). */
#define BUILD_SHARED_TRIES 3

static int build_shared(symdb_symbolizer *s, const char *path, const symdb_uuid *id,
                        unsigned names, int damaged, symdb_image **img)
{
	int rc;

	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = s->build_err, .errbuf_sz = sizeof s->build_err,
	           .indexer_path = s->indexer_path, .flags = damaged ? SYMDB_BUILD_FORCE : 0u);
	/* Any failure to open the database for writing is the database's. */
	if (!s->builder && (rc = symdb_builder_open(symdb_dir(s->db), &bo, &s->builder)) != 0)
		return rc == -ENOMEM ? rc : SYMDB_E_READONLY;
	SYMDB_OPTS(symdb_open_opts, oo, .flags = s->open_flags | names, .errbuf = s->build_err,
	           .errbuf_sz = sizeof s->build_err);
	for (int i = 0; i < BUILD_SHARED_TRIES; i++) {
		if ((rc = symdb_builder_add(s->builder, path, &bo, NULL)) != 0)
			return rc;
		rc = symdb_image_open_uuid(s->db, id, &oo, img);
		if (rc != SYMDB_E_NOT_INDEXED && rc != -ENOENT) /* -ENOENT: its file
		                                                  * unlinked by an rm */
			return rc;
	}
	s->build_err[0] = '\0';
	return build_private(s, path, names, img);
}

int rd_sym_first_sight(symdb_symbolizer *s, const char *path, const symdb_uuid *id,
                       unsigned names, int damaged, symdb_image **img)
{
	int rc;

	*img = NULL;
	s->build_err[0] = '\0'; /* the open's reason: the build's replaces it */
	if (s->db && !s->private_only) {
		rc = build_shared(s, path, id, names, damaged, img);
		if (rc == 0 || !db_fault(rc))
			return rc;
		warn_private(s, symdb_dir(s->db),
		             s->build_err[0] ? s->build_err : symdb_strerror(rc));
		s->private_only = 1;
		symdb_builder_close(s->builder);
		s->builder = NULL;
		s->build_err[0] = '\0';
	}
	return build_private(s, path, names, img);
}

int rd_sym_private(symdb_symbolizer *s, const char *path, unsigned names, symdb_image **img)
{
	*img = NULL;
	s->build_err[0] = '\0';
	return build_private(s, path, names, img);
}

void rd_sym_build_fini(symdb_symbolizer *s)
{
	symdb_builder_close(s->builder);
	free(s->indexer_path);
	free(s->tmp_dir);
}
