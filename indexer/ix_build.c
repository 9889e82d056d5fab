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
#include "ix_emit.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format_header.h"
#include "ix_macho.h"

#define IX_BUILD_FLAGS_KNOWN (SYMDB_BUILD_FORCE | SYMDB_BUILD_NO_DWARF)

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

/* Is the UUID in the catalog?  0: no; 1: yes and the file it names is there
 * with the recorded size; 2: yes, but the file is missing or replaced, so it
 * must be rebuilt and the entry replaced. */
static int ix_is_indexed(symdb_builder *b, const symdb_uuid *id, symdb_build_result *res)
{
	rd_cat_entry e;
	char buf[1024];
	struct stat st;

	if (rd_catalog_get(b->cat, id->bytes, id->len, &e, buf, sizeof buf) != 0)
		return 0;
	snprintf(res->index_path, sizeof res->index_path, "%s/%s", rd_catalog_dir(b->cat),
	         e.file);
	if ((stat(res->index_path, &st) < 0 || (uint64_t)st.st_size != e.file_size) &&
	    !ix_cold_indexed(res->index_path, e.file_size)) { /* compacted: §12.8 */
		res->index_path[0] = 0;
		return 2;
	}
	res->file_size = e.file_size;
	return 1;
}

/* Parse, build and publish one image whose UUID is known. */
static int ix_build_one(symdb_builder *b, const char *path, const symdb_build_opts *o,
                        int replace, symdb_build_result *res)
{
	ix_image img;
	ix_output *out;
	int rc, raced = 0;

	out = calloc(1, sizeof *out);
	if (!out || ix_image_init(&img) < 0) {
		free(out);
		return fmt_err(o->errbuf, o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	}
	rc = ix_elf_load(&img, path, o->errbuf, o->errbuf_sz);
	img.uuid = res->uuid;
	if (rc == 0 && !(o->flags & SYMDB_BUILD_NO_DWARF))
		rc = ix_dwarf_attach(&img, path, o, res->debug_path, sizeof res->debug_path,
		                     o->errbuf, o->errbuf_sz);
	/* Nothing to resolve: refuse rather than publish an empty index. */
	if (rc == 0 && img.symbols.n == 0 && !(img.header_flags & FMT_FLAG_HAS_DWARF))
		rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_BAD_OBJECT,
		             "%s: no symbols and no debug information to index", path);
	if (rc == 0)
		rc = ix_tables_build(&img, out, o->errbuf, o->errbuf_sz);
	if (rc == 0)
		rc = ix_publish(b->cat, &img, out, !replace, &raced,
		                res->index_path, sizeof res->index_path, o->errbuf, o->errbuf_sz);
	if (rc == 0) {
		res->skipped = raced;
		res->file_size = out->plan.file_size;
		res->nsymbols = out->nsymbols;
		res->nline_rows = out->nline_rows;
		res->ninline_nodes = out->ninline_nodes;
	}
	ix_output_free(out);
	free(out);
	ix_image_free(&img);
	return rc;
}

int symdb_builder_add(symdb_builder *b, const char *path, const symdb_build_opts *opts,
                      symdb_build_result *out)
{
	symdb_build_opts o;
	symdb_build_result local;
	SYMDB_OPTS(symdb_open_opts, uo, .flags = 0);
	int rc, state;

	rc = ix_opts(opts, &o);
	if (rc)
		return rc;
	if (!b || !path)
		return fmt_err(o.errbuf, o.errbuf_sz, SYMDB_E_INVAL, "no builder or path");
	if (!out)
		out = &local;
	memset(out, 0, sizeof *out);
	/* Mach-O, universal files and .dSYM bundles: every slice is an image. */
	rc = ix_macho_add(b->cat, path, &o, out);
	if (rc != 1)
		return rc;
	rc = ix_elf_precheck(path, o.errbuf, o.errbuf_sz);
	if (rc)
		return rc;
	uo.errbuf = o.errbuf;
	uo.errbuf_sz = o.errbuf_sz;
	rc = symdb_file_uuid(path, &uo, &out->uuid);
	if (rc)
		return rc;
	state = (o.flags & SYMDB_BUILD_FORCE) ? 2 : ix_is_indexed(b, &out->uuid, out);
	if (state == 1) {
		out->skipped = 1;
		return 0;
	}
	return ix_build_one(b, path, &o, state == 2, out);
}
