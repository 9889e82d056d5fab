/* SPDX-License-Identifier: MIT */
/*
 * publish_build.c - the builder API of symdb_build.h: a builder is a
 * read-write catalog handle on one database directory, and
 * symdb_builder_add() runs the pipeline for one input:
 *
 *   the input opened once (build_inputs.c), its UUIDs from that descriptor
 *   (the code of symdb_file_uuid(s), which the reader keys lookups by)
 *   -> every image in the catalog, intact, from the same bytes?  skipped
 *   -> symdb-indexer stages the index files (build_spawn.c)
 *   -> each re-verified and published (publish_commit.c).
 *
 * The UUIDs are computed before anything heavy is parsed so that re-running
 * a build over a directory of already-indexed binaries costs one note lookup
 * per file.  A builder holds no per-build state: every add() stages into its
 * own temp files, and the catalog serialises commits (LMDB's writer lock,
 * across threads and processes), so add() is thread-safe.
 */
#define _POSIX_C_SOURCE 200809L
#include "publish_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt_macho.h"
#include "format_content.h"
#include "format_elf.h"
#include "format_io.h"
#include "db_dir.h"
#include "format_layout.h"
#include "rd_uuid.h"

#define PUB_BUILD_FLAGS_KNOWN (SYMDB_BUILD_FORCE | SYMDB_BUILD_NO_DWARF | SYMDB_BUILD_ISOLATE | \
                               SYMDB_BUILD_RECOVER | SYMDB_BUILD_NO_SOURCE_PATH)

struct symdb_builder {
	rd_catalog *cat;
};

/* Copy the caller's options (any struct size: a smaller, older struct reads
 * as zeros past its end; a larger one must have zeros there). */
static int build_opts(const symdb_build_opts *in, symdb_build_opts *o)
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
	if (o->flags & ~PUB_BUILD_FLAGS_KNOWN)
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL,
		               "unknown build flags 0x%x", o->flags & ~PUB_BUILD_FLAGS_KNOWN);
	return 0;
}

int symdb_builder_open(const char *dir, const symdb_build_opts *opts, symdb_builder **out)
{
	symdb_build_opts o;
	symdb_builder *b;
	int rc;

	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	rc = build_opts(opts, &o);
	if (rc)
		return rc;
	if (!dir) /* the caller resolves a default (symdb_default_dir) */
		return fmt_err(o.errbuf, o.errbuf_sz, -ENOENT, "no database directory: %s",
		               symdb_strerror(-ENOENT));
	b = calloc(1, sizeof *b);
	if (!b)
		return -ENOMEM;
	rc = rd_catalog_open(dir,
	                     RD_CAT_WRITE | RD_CAT_CREATE |
	                             (o.flags & SYMDB_BUILD_RECOVER ? RD_CAT_RECOVER : 0),
	                     &b->cat, o.errbuf, o.errbuf_sz);
	if (rc) {
		free(b);
		return rc;
	}
	*out = b;
	return 0;
}

/* For publish_import.c and publish_reindex.c, which work through the same
 * catalog and options. */
rd_catalog *publish_builder_catalog(symdb_builder *b)
{
	return b->cat;
}

int publish_builder_opts(const symdb_build_opts *in, symdb_build_opts *o)
{
	return build_opts(in, o);
}

void symdb_builder_close(symdb_builder *b)
{
	if (!b)
		return;
	rd_catalog_close(b->cat);
	free(b);
}

/* Is the open input a Mach-O file (thin or universal)? */
static int build_is_macho(int fd)
{
	uint8_t head[8];
	ptrdiff_t got = fmt_pread_full(fd, head, sizeof head, 0);

	return got == (ptrdiff_t)sizeof head && fmt_mo_kind(head, sizeof head);
}

/* Whether the candidate debug file open at fd (named name) brings DWARF
 * to image id: an ELF debug file with DWARF that carries its binary's
 * build-id note (rd_elf_dwarf_of), or a dSYM's DWARF file that carries
 * the binary's LC_UUID (one per slice).  A stale file left by an earlier
 * build of the program does not, nor one without DWARF, which a build would
 * take to no avail every time the image is opened. */
static int build_debug_is_of(int fd, const char *name, const symdb_uuid *id, int is_macho)
{
	symdb_file_image im[SYMDB_BUILD_MAX_IMAGES];
	char eb[256];
	int n;

	if (!is_macho)
		return rd_elf_dwarf_of(fd, id);
	n = rd_file_images_fd(fd, name, im, SYMDB_BUILD_MAX_IMAGES, eb, sizeof eb);
	for (int i = 0; i < n && i < SYMDB_BUILD_MAX_IMAGES; i++)
		if (im[i].uuid.len == id->len && memcmp(im[i].uuid.bytes, id->bytes, id->len) == 0)
			return 1;
	return 0;
}

int build_debug_found(const char *path, const symdb_uuid *id)
{
	publish_input in;
	char eb[256];
	int found = 0, is_macho;

	if (id->kind == SYMDB_UUID_FALLBACK || build_input_open(&in, path, eb, sizeof eb) != 0)
		return 0;
	if (in.in.fd >= 0) {
		SYMDB_OPTS(symdb_build_opts, o);
		is_macho = build_is_macho(in.in.fd);
		build_input_debug(&in, path, is_macho, &o);
		uint32_t crc;
		if (in.debug.fd >= 0)
			found = build_debug_is_of(in.debug.fd, in.debug.name, id, 0);
		/* a debuglink candidate the indexer would take: its CRC too (one
		 * whose CRC differs, e.g. recompressed since, it never takes) */
		for (unsigned i = 0; i < in.nlinks && !found; i++)
			found = build_debug_is_of(in.links[i].fd, in.links[i].name, id, 0) &&
			        fmt_fd_crc32(in.links[i].fd, &crc) == 0 && crc == in.link_crc;
		if (in.companion.fd >= 0 && !found)
			found = build_debug_is_of(in.companion.fd, in.companion.name, id, 1);
	}
	build_input_close(&in);
	return found;
}

/* Judge an ELF input by its first bytes before its UUID is computed, with
 * the indexer's words (format_elf.h): "PATH: reason".  in was fstat'ed as
 * a regular file when it was opened. */
static int build_elf_precheck(const publish_input *in, const char *path,
                              const symdb_build_opts *o)
{
	uint8_t id[FMT_ELF_IDENT_SIZE];
	char why[256] = "";
	ptrdiff_t r;
	int rc;

	if (in->size == 0) {
		rc = fmt_err(why, sizeof why, SYMDB_E_BAD_OBJECT, "empty file");
	} else {
		r = fmt_pread_full(in->in.fd, id, sizeof id, 0);
		rc = r < 0 ? (int)r : fmt_elf_ident(id, (size_t)r, why, sizeof why);
	}
	if (rc == 0)
		return 0;
	return fmt_err(o->errbuf, o->errbuf_sz, rc, "%s: %s", path,
	               why[0] ? why : symdb_strerror(rc));
}

/* Add the UUIDs of one open Mach-O file to ex (reader code, as
 * symdb_file_uuids computes them). */
static int build_expect_add(publish_expect *ex, const publish_fd *f, const symdb_build_opts *o)
{
	symdb_file_image fi[SYMDB_BUILD_MAX_IMAGES];
	int n = rd_file_images_fd(f->fd, f->name, fi, SYMDB_BUILD_MAX_IMAGES, o->errbuf,
	                          o->errbuf_sz);

	for (int i = 0; i < n && i < SYMDB_BUILD_MAX_IMAGES; i++)
		if (ex->n < SYMDB_BUILD_MAX_IMAGES) {
			memcpy(ex->arch[ex->n], fi[i].arch, sizeof ex->arch[0]);
			ex->uuid[ex->n++] = fi[i].uuid;
		}
	return n < 0 ? n : 0;
}

/* Every DWARF file of a .dSYM bundle, as build_input_open opened them.  A
 * bad file is reported by the indexer itself. */
static void build_expect_dsym(publish_expect *ex, const publish_input *in,
                              const symdb_build_opts *o)
{
	char keep[1]; /* the errbuf stays the caller's: nothing to report here */
	symdb_build_opts q = *o;

	q.errbuf = keep;
	q.errbuf_sz = sizeof keep;
	for (unsigned i = 0; i < in->nfiles; i++)
		if (build_is_macho(in->files[i].fd))
			(void)build_expect_add(ex, &in->files[i], &q);
}

/* Open path once (build_inputs.c) and compute the UUIDs of its images from
 * that descriptor with the reader's code (fuzzed), before any DWARF or
 * symbol table is parsed. */
static int build_expect_input(publish_expect *ex, publish_input *in, const char *path,
                              const symdb_build_opts *o)
{
	int rc;

	memset(ex, 0, sizeof *ex);
	rc = build_input_open(in, path, o->errbuf, o->errbuf_sz);
	if (rc)
		return rc;
	if (in->in.fd < 0) {
		ex->is_macho = ex->is_dsym = 1;
		build_expect_dsym(ex, in, o);
		return 0;
	}
	if (build_is_macho(in->in.fd)) {
		ex->is_macho = 1;
		return build_expect_add(ex, &in->in, o);
	}
	rc = build_elf_precheck(in, path, o);
	if (rc == 0)
		rc = rd_file_uuid_fd(in->in.fd, path, &ex->uuid[0], o->errbuf, o->errbuf_sz);
	if (rc == 0)
		ex->n = 1;
	return rc;
}

/* Hand a filled result to the caller's struct, sized by its sz (symdb.h:
 * sized output structs): min(caller's sz, ours) bytes, and sz becomes that. */
void publish_result_put(symdb_build_result *caller, const symdb_build_result *full)
{
	size_t n = caller->sz < sizeof *full ? caller->sz : sizeof *full;

	memcpy((char *)caller + sizeof caller->sz, (const char *)full + sizeof full->sz,
	       n - sizeof full->sz);
	caller->sz = n;
}

static int builder_add(symdb_builder *b, const char *path, const symdb_build_opts *opts,
                       const volatile sig_atomic_t *cancel, symdb_build_result *out);

/* The rest of an add once the input is open and its UUIDs known: the skip
 * rule, the debug files, the indexer and the commit. */
static int builder_stage(symdb_builder *b, const char *path, publish_input *in,
                         const publish_expect *ex, const symdb_build_opts *o,
                         const volatile sig_atomic_t *cancel, symdb_build_result *out)
{
	publish_stager *st;
	int rc;

	/* The debug files first: an unchanged input whose index lacks DWARF
	 * is built again when one is found now (installed since). */
	build_input_debug(in, path, ex->is_macho, o);
	if (!(o->flags & SYMDB_BUILD_FORCE) && publish_unchanged(b->cat, path, in, ex, out))
		return 0;
	st = calloc(1, sizeof *st);
	if (!st)
		return fmt_err(o->errbuf, o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	if (fmt_layout_dir(st->dir, sizeof st->dir, rd_catalog_dir(b->cat), FMT_LAYOUT_TMP)) {
		free(st);
		return fmt_err(o->errbuf, o->errbuf_sz, -ENAMETOOLONG, "%s: path too long",
		               rd_catalog_dir(b->cat));
	}
	/* DB/tmp is never written through (SPEC §12.1, db_dir.h): a symbolic
	 * link or a foreign directory there fails the build up front. */
	{
		rd_safedir td;
		rc = rd_safedir_open(&td, rd_catalog_dir(b->cat), FMT_LAYOUT_TMP, 0, o->errbuf,
		                     o->errbuf_sz);
		rd_safedir_close(&td);
		if (rc) {
			free(st);
			return rc;
		}
	}
	/* The indexer's output is untrusted: every checksum is verified before
	 * anything is published. */
	rc = build_spawn_run(st, path, in, ex, o, cancel);
	/* Also when the indexer failed: a file cut short under it crashes it
	 * (SIGBUS on its mapping), and that is the file's doing, not a bug.
	 * Not when it was interrupted: that is the whole answer. */
	int changed = rc == -EINTR ? 0 : build_input_unchanged(in, o->errbuf, o->errbuf_sz);
	if (changed)
		rc = changed;
	/* A flag set after the indexer ended still publishes nothing. */
	if (rc == 0 && cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED))
		rc = fmt_err(o->errbuf, o->errbuf_sz, -EINTR, "%s: interrupted", path);
	if (rc == 0)
		rc = publish_staged_images(b->cat, st, path, ex, o, out);
	else
		build_stage_discard(st);
	free(st);
	return rc;
}

int symdb_builder_add(symdb_builder *b, const char *path, const symdb_build_opts *opts,
                      symdb_build_result *out)
{
	return publish_builder_add(b, path, opts, NULL, out);
}

int publish_builder_add(symdb_builder *b, const char *path, const symdb_build_opts *opts,
                        const volatile sig_atomic_t *cancel, symdb_build_result *out)
{
	symdb_build_result *full;
	int rc;

	if (!out)
		return builder_add(b, path, opts, cancel, NULL);
	if (out->sz < sizeof out->sz)
		return SYMDB_E_INVAL;
	full = malloc(sizeof *full); /* ~12 KiB: not on a caller's thread stack */
	if (!full)
		return -ENOMEM;
	rc = builder_add(b, path, opts, cancel, full);
	publish_result_put(out, full);
	free(full);
	return rc;
}

static int builder_add(symdb_builder *b, const char *path, const symdb_build_opts *opts,
                       const volatile sig_atomic_t *cancel, symdb_build_result *out)
{
	symdb_build_opts o;
	symdb_build_result local;
	publish_expect ex;
	publish_input *in;
	int rc;

	rc = build_opts(opts, &o);
	if (rc)
		return rc;
	if (!b || !path)
		return fmt_err(o.errbuf, o.errbuf_sz, SYMDB_E_INVAL, "no builder or path");
	if (!out)
		out = &local;
	memset(out, 0, sizeof *out);
	out->sz = sizeof *out;
	in = malloc(sizeof *in);
	if (!in)
		return fmt_err(o.errbuf, o.errbuf_sz, -ENOMEM, "%s: out of memory", path);
	rc = build_expect_input(&ex, in, path, &o);
	if (rc == 0)
		rc = builder_stage(b, path, in, &ex, &o, cancel, out);
	build_input_close(in);
	free(in);
	return rc;
}
