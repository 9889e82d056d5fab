/* SPDX-License-Identifier: MIT */
/*
 * ix_build.c - parse one ELF input and stage its index file (SPEC §12.5):
 * ix_elf_load -> ix_dwarf_attach -> ix_tables_build -> ix_stage_image, with
 * the input's hash and the symbol reduction on a side thread when the
 * DWARF walk runs on threads anyway.  The UUID is the one the builder
 * computed with the reader's code and passed on the command line, so both
 * sides agree on it by construction.
 */
#define _POSIX_C_SOURCE 200809L /* fstat */
#include "ix_stage.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format_header.h"
#include "ix_dwarf_par.h"
#include "ix_macho.h"

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
	int fd;
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

	j->rc = fmt_fd_xxh3(j->fd, NULL, &j->hash);
	pthread_mutex_lock(&j->mu);
	while (j->symbols == 0)
		pthread_cond_wait(&j->cv, &j->mu);
	symbols = j->symbols;
	pthread_mutex_unlock(&j->mu);
	if (symbols > 0)
		ix_symbols_reduce(j->img);
	return NULL;
}

/* Will the DWARF walk of the input run on threads?  The file's size bounds
 * its .debug_info (a separate debug file is not looked at: no thread then). */
static int ix_side_wanted(int fd, const ix_opts *o)
{
	struct stat st;

	if ((o->flags & SYMDB_INDEXER_NO_DWARF) || fstat(fd, &st) != 0)
		return 0;
	return ix_dwarf_shards(o->threads, o->cpus, SIZE_MAX, (uint64_t)st.st_size) > 1;
}

static void ix_side_start(ix_side *j, int fd, ix_image *img, int threaded)
{
	j->fd = fd;
	j->img = img;
	j->hash = 0;
	j->rc = 0;
	j->symbols = 0;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	j->threaded = threaded && pthread_create(&j->tid, NULL, ix_side_run, j) == 0;
	if (!j->threaded)
		j->rc = fmt_fd_xxh3(fd, NULL, &j->hash);
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

/* The options the DWARF reader gets for img.  LLVM 14 looks a build-id up
 * only in PT_NOTE segments (Symbolize.cpp getBuildID), and a relocatable
 * object has none, so llvm-symbolizer-14 never finds a kernel module's
 * debug file by build-id, only by .gnu_debuglink: neither does symdb (SPEC
 * §7.8), though the builder opened one. */
static const ix_opts *ix_debug_opts(const ix_image *img, const ix_opts *o, ix_opts *tmp)
{
	if (img->object_type != 1 /* ET_REL */ || o->debug.fd < 0)
		return o;
	*tmp = *o;
	tmp->debug.fd = -1;
	tmp->debug.name = NULL;
	return tmp;
}

/* Parse and build one ELF image whose UUID is known, and stage it. */
static int ix_elf_stage(ix_stager *st, int fd, const char *path, const ix_opts *o)
{
	char debug_path[4096] = "";
	const ix_uuid id = st->elf_uuid;
	ix_image img;
	ix_output *out;
	ix_side side;
	ix_opts rel_opts;
	int rc, loaded;

	rc = ix_elf_precheck(fd, path, o->errbuf, o->errbuf_sz);
	if (rc == 0 && id.len == 0)
		rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL,
		             "%s: no UUID given for an ELF input", path);
	if (rc)
		return rc;
	out = calloc(1, sizeof *out);
	if (!out || ix_image_init(&img) < 0) {
		free(out);
		return fmt_err(o->errbuf, o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	}
	ix_side_start(&side, fd, &img, ix_side_wanted(fd, o));
	rc = ix_elf_load(&img, fd, path, o->errbuf, o->errbuf_sz);
	img.uuid = id;
	loaded = rc == 0;
	ix_side_symbols(&side, loaded);
	if (rc == 0 && !(o->flags & SYMDB_INDEXER_NO_DWARF))
		rc = ix_dwarf_attach(&img, fd, path, ix_debug_opts(&img, o, &rel_opts), debug_path,
		                     sizeof debug_path, o->errbuf, o->errbuf_sz);
	/* The errors rank as when the hash ran between load and DWARF. */
	if (ix_side_join(&side) < 0 && loaded)
		rc = fmt_err(o->errbuf, o->errbuf_sz, -EIO, "%s: cannot read it again", path);
	img.build_info[FMT_BI_SOURCE_XXH3] = side.hash;
	/* Nothing to resolve (no symbol, no DWARF) is still indexed: every
	 * address answers "not found", as llvm-symbolizer answers for the
	 * file, and the catalog knows the image (SPEC §7.2). */
	if (rc == 0)
		rc = ix_tables_build(&img, out, o->errbuf, o->errbuf_sz);
	if (rc == 0)
		rc = ix_stage_image(st, &img, out, "", debug_path, o->errbuf, o->errbuf_sz);
	ix_output_free(out);
	free(out);
	ix_image_free(&img);
	return rc;
}

int ix_stage_input(ix_stager *st, const symdb_indexer_file *in, unsigned n, const ix_opts *o)
{
	const char *name;
	int rc;

	if (o->flags & SYMDB_INDEXER_DSYM)
		return ix_macho_stage_dsym(st, in, n, o);
	if (n != 1 || in[0].fd < 0)
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL, "expected one input");
	name = in[0].name ? in[0].name : "";
	/* Mach-O and universal files: every slice is an image. */
	rc = ix_macho_stage(st, in[0].fd, name, o);
	return rc != 1 ? rc : ix_elf_stage(st, in[0].fd, name, o);
}

