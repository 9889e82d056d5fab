/* SPDX-License-Identifier: MIT */
/*
 * ix_build.c - the public indexer API of symdb_build.h: a builder is a
 * read-write catalog handle on one database directory, and
 * symdb_builder_add() runs the pipeline for one input:
 *
 *   UUID (symdb_file_uuid, the same code the reader keys lookups by)
 *   -> already in the catalog and its file intact?  done, skipped = 1
 *   -> ix_elf_load -> ix_dwarf_attach -> ix_tables_build -> ix_publish.
 *
 * The UUID is computed before anything heavy is parsed so that re-running a
 * build over a directory of already-indexed binaries costs one note lookup
 * per file.  A builder holds no per-build state: every add() works on its own
 * ix_image, and the catalog serialises commits (LMDB's writer lock, across
 * threads and processes), so add() is thread-safe.
 */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "ix_cage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format_header.h"
#include "fmt_macho.h"
#include "ix_dwarf_par.h"
#include "ix_macho.h"

#define IX_BUILD_FLAGS_KNOWN (SYMDB_BUILD_FORCE | SYMDB_BUILD_NO_DWARF | SYMDB_BUILD_ISOLATE)

struct symdb_builder {
	rd_catalog *cat;
};

/* Copy the caller's options (any struct size: a smaller, older struct reads
 * as zeros past its end; a larger one must have zeros there). */
static int ix_opts(const symdb_build_opts *in, symdb_build_opts *o)
{
	const size_t min = offsetof(symdb_build_opts, flags) + sizeof in->flags;

	memset(o, 0, sizeof *o);
	o->sz = sizeof *o;
	if (!in)
		return 0;
	if (in->sz < min)
		return SYMDB_E_INVAL;
	memcpy(o, in, in->sz < sizeof *o ? in->sz : sizeof *o);
	o->sz = sizeof *o;
	for (size_t i = sizeof *o; i < in->sz; i++)
		if (((const unsigned char *)in)[i])
			return SYMDB_E_INVAL;
	if (!o->errbuf)
		o->errbuf_sz = 0;
	if (o->flags & ~IX_BUILD_FLAGS_KNOWN)
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL,
		               "unknown build flags 0x%x", o->flags & ~IX_BUILD_FLAGS_KNOWN);
	return 0;
}

int symdb_builder_open(const char *dir, const symdb_build_opts *opts, symdb_builder **out)
{
	symdb_build_opts o;
	char defdir[4096];
	symdb_builder *b;
	int rc;

	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	rc = ix_opts(opts, &o);
	if (rc)
		return rc;
	if (!dir) {
		rc = symdb_default_dir(defdir, sizeof defdir);
		if (rc)
			return fmt_err(o.errbuf, o.errbuf_sz, rc, "no database directory: %s",
			               symdb_strerror(rc));
		dir = defdir;
	}
	b = calloc(1, sizeof *b);
	if (!b)
		return -ENOMEM;
	rc = rd_catalog_open(dir, RD_CAT_WRITE | RD_CAT_CREATE, &b->cat, o.errbuf, o.errbuf_sz);
	if (rc) {
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

/* For ix_import.c, which publishes through the same catalog and options. */
rd_catalog *ix_builder_catalog(symdb_builder *b)
{
	return b->cat;
}

int ix_builder_opts(const symdb_build_opts *in, symdb_build_opts *o)
{
	return ix_opts(in, o);
}

void symdb_builder_close(symdb_builder *b)
{
	if (!b)
		return;
	rd_catalog_close(b->cat);
	free(b);
}

/* Work beside the parse of one ELF input: the Source_XXH3 of the whole file
 * (SPEC §7.7), then, once ix_elf_load has filled img->symbols, their
 * reduction (§7.2).  Neither feeds the DWARF walk, yet both sat on its
 * critical path (5-7 and 1.3 ms for libpython) while the second core idled
 * through the symbol load and the unit header pass: they run on a thread of
 * their own when the DWARF walk will be parallel anyway.  Otherwise they run
 * inline (the reduction then in ix_tables_build), because the first thread a
 * process creates makes every later malloc and free take the arena lock for
 * good (glibc): with --threads 1 that cost libpython's single-threaded walk
 * about 30 ms of CPU, more than the thread saved.  The parse does not touch
 * img->symbols until the join. */
typedef struct ix_side {
	const char *path;
	ix_image *img;
	uint64_t hash;
	int rc;
	int symbols; /* 0 not loaded yet; 1 loaded, reduce them; -1 leave them */
	int threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t tid;
} ix_side;

static void *ix_side_run(void *arg)
{
	ix_side *j = arg;
	int symbols;

	j->rc = ix_file_xxh3(j->path, NULL, &j->hash);
	pthread_mutex_lock(&j->mu);
	while (j->symbols == 0)
		pthread_cond_wait(&j->cv, &j->mu);
	symbols = j->symbols;
	pthread_mutex_unlock(&j->mu);
	if (symbols > 0)
		ix_symbols_reduce(j->img);
	return NULL;
}

/* Will the DWARF walk of path run on threads?  The file's size bounds its
 * .debug_info (a separate debug file is not looked at: no thread then). */
static int ix_side_wanted(const char *path, const symdb_build_opts *o)
{
	struct stat st;

	if ((o->flags & SYMDB_BUILD_NO_DWARF) || stat(path, &st) != 0)
		return 0;
	return ix_dwarf_shards(o->threads, SIZE_MAX, (uint64_t)st.st_size) > 1;
}

static void ix_side_start(ix_side *j, const char *path, ix_image *img, int threaded)
{
	j->path = path;
	j->img = img;
	j->hash = 0;
	j->rc = 0;
	j->symbols = 0;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	j->threaded = threaded && pthread_create(&j->tid, NULL, ix_side_run, j) == 0;
	if (!j->threaded)
		j->rc = ix_file_xxh3(path, NULL, &j->hash);
}

/* img->symbols are loaded (ok) or will not be used. */
static void ix_side_symbols(ix_side *j, int ok)
{
	pthread_mutex_lock(&j->mu);
	j->symbols = ok ? 1 : -1;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

static int ix_side_join(ix_side *j)
{
	if (j->threaded)
		pthread_join(j->tid, NULL);
	j->threaded = 0;
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	return j->rc;
}

/* Parse and build one ELF image whose UUID is known, and stage it. */
static int ix_elf_stage(ix_stager *st, const char *path, const symdb_build_opts *o)
{
	char debug_path[4096] = "";
	symdb_uuid id;
	ix_image img;
	ix_output *out;
	ix_side side;
	SYMDB_OPTS(symdb_open_opts, uo, .errbuf = o->errbuf, .errbuf_sz = o->errbuf_sz);
	int rc, loaded;

	rc = ix_elf_precheck(path, o->errbuf, o->errbuf_sz);
	if (rc == 0)
		rc = symdb_file_uuid(path, &uo, &id);
	if (rc)
		return rc;
	out = calloc(1, sizeof *out);
	if (!out || ix_image_init(&img) < 0) {
		free(out);
		return fmt_err(o->errbuf, o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	}
	ix_side_start(&side, path, &img, ix_side_wanted(path, o));
	rc = ix_elf_load(&img, path, o->errbuf, o->errbuf_sz);
	img.uuid = id;
	loaded = rc == 0;
	ix_side_symbols(&side, loaded);
	if (rc == 0 && !(o->flags & SYMDB_BUILD_NO_DWARF))
		rc = ix_dwarf_attach(&img, path, o, debug_path, sizeof debug_path, o->errbuf,
		                     o->errbuf_sz);
	/* The errors rank as when the hash ran between load and DWARF. */
	if (ix_side_join(&side) < 0 && loaded)
		rc = fmt_err(o->errbuf, o->errbuf_sz, -EIO, "%s: cannot read it again", path);
	img.build_info[FMT_BI_SOURCE_XXH3] = side.hash;
	/* Nothing to resolve: refuse rather than publish an empty index. */
	if (rc == 0 && img.symbols.n == 0 && !(img.header_flags & FMT_FLAG_HAS_DWARF))
		rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_BAD_OBJECT,
		             "%s: no symbols and no debug information to index", path);
	if (rc == 0)
		rc = ix_tables_build(&img, out, o->errbuf, o->errbuf_sz);
	if (rc == 0)
		rc = ix_stage_image(st, &img, out, "", debug_path, o->errbuf, o->errbuf_sz);
	ix_output_free(out);
	free(out);
	ix_image_free(&img);
	return rc;
}

int ix_stage_input(ix_stager *st, const char *path, const symdb_build_opts *o)
{
	/* Mach-O, universal files and .dSYM bundles: every slice is an image. */
	int rc = ix_macho_stage(st, path, o);

	return rc != 1 ? rc : ix_elf_stage(st, path, o);
}

/* Is path a Mach-O file or a .dSYM bundle (1), or anything else (0)? */
static int ix_is_macho(const char *path, int *is_dir)
{
	uint8_t head[8];
	struct stat st;
	ssize_t got;
	int fd;

	*is_dir = 0;
	if (stat(path, &st) != 0)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		char sub[4096];
		struct stat ds;
		*is_dir = 1;
		return (size_t)snprintf(sub, sizeof sub, "%s/Contents/Resources/DWARF", path) <
		               sizeof sub &&
		       stat(sub, &ds) == 0 && S_ISDIR(ds.st_mode);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	got = pread(fd, head, sizeof head, 0);
	close(fd);
	return got == (ssize_t)sizeof head && fmt_mo_kind(head, sizeof head);
}

/* Add the UUIDs of one Mach-O file to ex (reader code: symdb_file_uuids). */
static int ix_expect_add(ix_expect *ex, const char *path, const symdb_build_opts *o)
{
	symdb_file_image fi[SYMDB_BUILD_MAX_IMAGES];
	SYMDB_OPTS(symdb_open_opts, uo, .errbuf = o->errbuf, .errbuf_sz = o->errbuf_sz);
	int n = symdb_file_uuids(path, &uo, fi, SYMDB_BUILD_MAX_IMAGES);

	for (int i = 0; i < n && i < SYMDB_BUILD_MAX_IMAGES; i++)
		if (ex->n < SYMDB_BUILD_MAX_IMAGES) {
			memcpy(ex->arch[ex->n], fi[i].arch, sizeof ex->arch[0]);
			ex->uuid[ex->n++] = fi[i].uuid;
		}
	return n < 0 ? n : 0;
}

/* Every file of a .dSYM bundle's Contents/Resources/DWARF/. */
static int ix_expect_dsym(ix_expect *ex, const char *dir, const symdb_build_opts *o)
{
	char sub[4096], file[4096 + 260];
	struct dirent *de;
	DIR *dp;
	int rc = 0;

	if ((size_t)snprintf(sub, sizeof sub, "%s/Contents/Resources/DWARF", dir) >= sizeof sub)
		return fmt_err(o->errbuf, o->errbuf_sz, -ENAMETOOLONG, "%s: path too long", dir);
	dp = opendir(sub);
	while (dp && rc == 0 && (de = readdir(dp)) != NULL) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof file, "%s/%s", sub, de->d_name);
		if (stat(file, &st) == 0 && S_ISREG(st.st_mode))
			rc = ix_expect_add(ex, file, o);
	}
	if (dp)
		closedir(dp);
	(void)rc; /* a bad file is reported by the stage itself */
	return 0;
}

/* The UUIDs of path's images, computed by the parent with the reader's code
 * (fuzzed), before any DWARF or symbol table is parsed. */
static int ix_expect_input(ix_expect *ex, const char *path, const symdb_build_opts *o)
{
	SYMDB_OPTS(symdb_open_opts, uo, .errbuf = o->errbuf, .errbuf_sz = o->errbuf_sz);
	int is_dir, rc;

	memset(ex, 0, sizeof *ex);
	if (ix_is_macho(path, &is_dir)) {
		ex->is_macho = 1;
		ex->is_dsym = is_dir;
		return is_dir ? ix_expect_dsym(ex, path, o) : ix_expect_add(ex, path, o);
	}
	rc = ix_elf_precheck(path, o->errbuf, o->errbuf_sz);
	if (rc == 0)
		rc = symdb_file_uuid(path, &uo, &ex->uuid[0]);
	if (rc == 0)
		ex->n = 1;
	return rc;
}

int symdb_builder_add(symdb_builder *b, const char *path, const symdb_build_opts *opts,
                      symdb_build_result *out)
{
	symdb_build_opts o;
	symdb_build_result local;
	ix_expect ex;
	ix_stager *st;
	int rc;

	rc = ix_opts(opts, &o);
	if (rc)
		return rc;
	if (!b || !path)
		return fmt_err(o.errbuf, o.errbuf_sz, SYMDB_E_INVAL, "no builder or path");
	if (!out)
		out = &local;
	memset(out, 0, sizeof *out);
	rc = ix_expect_input(&ex, path, &o);
	if (rc)
		return rc;
	if (!(o.flags & SYMDB_BUILD_FORCE) && ix_stage_unchanged(b->cat, path, &ex, out))
		return 0;
	st = calloc(1, sizeof *st);
	if (!st)
		return fmt_err(o.errbuf, o.errbuf_sz, -ENOMEM, "%s: out of memory", path);
	st->fd = -1;
	if ((size_t)snprintf(st->dir, sizeof st->dir, "%s/tmp", rd_catalog_dir(b->cat)) >=
	    sizeof st->dir) {
		free(st);
		return fmt_err(o.errbuf, o.errbuf_sz, -ENAMETOOLONG, "%s: path too long",
		               rd_catalog_dir(b->cat));
	}
	/* The cage's output is untrusted: verify every checksum before publishing
	 * it.  In-process output comes from this very code, as before. */
	if (o.flags & SYMDB_BUILD_ISOLATE)
		rc = ix_cage_run(st, path, &o);
	else
		rc = ix_stage_input(st, path, &o);
	if (rc == 0)
		rc = ix_stage_commit(b->cat, st, path, &ex, &o, (o.flags & SYMDB_BUILD_ISOLATE) != 0,
		                     out);
	else
		ix_stage_discard(st);
	free(st);
	return rc;
}
