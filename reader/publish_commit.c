/* SPDX-License-Identifier: MIT */
/*
 * publish_commit.c - the commit of staged images (SPEC §12.5): every file
 * the indexer staged is re-verified as untrusted input (checksums,
 * invariants, the UUIDs this process computed), the same-build-id policy
 * decides what each image does to the catalog, and publish_tmp() makes it
 * visible.  Also the fast path: an input whose every image is already
 * indexed from the same bytes is skipped before anything is parsed.
 */
#define _GNU_SOURCE
#include "publish_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "db_dir.h"
#include "fmt_macho.h"
#include "format_content.h"
#include "format_header.h"
#include "format_layout.h"
#include "reader_internal.h"

/* ---- commit: verification and the same-build-id policy ------------------- */

/* The existing index of id: 0 absent; 2 entry whose file is missing or of
 * another size (rebuild, replace); 1 intact, *oi filled (*oimg open). */
static int stage_existing_forms(const rd_cat_entry *e, const rd_safedir *xx, const char *name,
                                symdb_image **oimg, symdb_image_info *oi, const char *ipath);

static int stage_existing(rd_catalog *cat, const symdb_uuid *id, symdb_image **oimg,
                          symdb_image_info *oi, char *ipath, size_t ipath_sz)
{
	rd_cat_entry e;
	rd_safedir xx;
	const char *name;
	char buf[1024];
	int rc;

	*oimg = NULL;
	ipath[0] = 0;
	if (rd_catalog_get(cat, id->bytes, id->len, &e, buf, sizeof buf) != 0)
		return 0;
	if (fmt_layout_file(ipath, ipath_sz, rd_catalog_dir(cat), e.file) ||
	    rd_safedir_of(&xx, ipath, &name, 0, NULL, 0) != 0) {
		/* No such file can be there, or not safely (db_dir.h): rebuild,
		 * and publish_tmp says why if the directory is unsafe. */
		ipath[0] = 0;
		return 2;
	}
	/* Under the directory lock (SPEC §12.8): a compaction or thaw between
	 * looking for one form and the other must not read as "missing",
	 * which would replace an intact index unconditionally. */
	rc = rd_safedir_lock(&xx) == 0 ? stage_existing_forms(&e, &xx, name, oimg, oi, ipath) : 2;
	rd_safedir_close(&xx);
	if (rc == 2)
		ipath[0] = 0;
	return rc;
}

/* stage_existing's look at both forms of e's file (ipath, NAME in xx). */
static int stage_existing_forms(const rd_cat_entry *e, const rd_safedir *xx, const char *name,
                                symdb_image **oimg, symdb_image_info *oi, const char *ipath)
{
	struct stat st;

	if (rd_safe_stat(xx, name, &st) == 0 && (uint64_t)st.st_size == e->file_size) {
		if (rd_image_map(ipath, RD_OPEN_IN_DB, oimg, NULL, 0) == 0) {
			oi->sz = sizeof *oi;
			symdb_image_get_info(*oimg, oi);
			return 1;
		}
	} else if (publish_cold_indexed(ipath, e->file_size)) {
		/* Compacted (§12.8): its facts come from the cold form,
		 * decompressed in memory; nothing is thawed on disk. */
		char lz[4096 + 8];
		if (fmt_layout_cold(lz, sizeof lz, ipath) == 0 &&
		    rd_cold_open_file(lz, RD_OPEN_IN_DB, NULL, oimg, NULL, 0) == 0) {
			oi->sz = sizeof *oi;
			symdb_image_get_info(*oimg, oi);
			return 1;
		}
	}
	return 2;
}

/* Was the existing index built from these bytes?  An input is identified by
 * Source_XXH3 and, when a separate debug file was used, Debug_XXH3 (§7.7):
 * a stripped binary and its .debug file share a build-id, and an index of
 * either, built with the other, is the same image.  An index without
 * Source_XXH3 (an older writer) is taken as the same, as before. */
static int stage_same(const symdb_image_info *oi, uint64_t src, uint64_t dbg)
{
	uint64_t os, od;

	if (oi->nbuild_info <= FMT_BI_SOURCE_XXH3 || !oi->build_info[FMT_BI_SOURCE_XXH3])
		return 1;
	os = oi->build_info[FMT_BI_SOURCE_XXH3];
	od = oi->nbuild_info > FMT_BI_DEBUG_XXH3 ? oi->build_info[FMT_BI_DEBUG_XXH3] : 0;
	return src == os || (od && src == od) || (dbg && (dbg == os || dbg == od));
}

/* Map and check one staged file as untrusted input, through this process's
 * own descriptor of it (SPEC §12.5: never reopened by name, so what is
 * checked is what is renamed).  symdb_image_verify checks every table
 * checksum before anything else, so the open is not asked to (it would hash
 * the whole file a second time); it already validates every offset and
 * length, as for any reader. */
static int stage_verify(const publish_staged *r, const publish_expect *ex, const char *path,
                        symdb_image **img, symdb_image_info *info, char *eb, size_t ebsz)
{
	char why[512] = "";
	struct stat st;
	void *map;
	unsigned k;
	int rc;

	*img = NULL;
	if (r->fd < 0 || fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: indexer output rejected: %s is not a plain file", path, r->tmp);
	if (st.st_size < FMT_HEADER_SIZE)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: indexer output rejected: %s: truncated: file is %lld bytes",
		               path, r->tmp, (long long)st.st_size);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, r->fd, 0);
	if (map == MAP_FAILED)
		return fmt_err(eb, ebsz, -errno, "%s: indexer output rejected: %s: mmap: %s", path,
		               r->tmp, strerror(errno));
	rc = rd_image_from_map(map, (size_t)st.st_size, r->tmp, 0, img, why, sizeof why);
	if (rc == 0)
		rc = symdb_image_verify(*img, PUBLISH_EB_OPTS(why, sizeof why));
	if (rc)
		return fmt_err(eb, ebsz, rc, "%s: indexer output rejected: %s", path,
		               why[0] ? why : symdb_strerror(rc));
	info->sz = sizeof *info;
	symdb_image_get_info(*img, info);
	for (k = 0; k < ex->n; k++)
		if (ex->uuid[k].len == info->uuid.len &&
		    !memcmp(ex->uuid[k].bytes, info->uuid.bytes, info->uuid.len))
			break;
	if (info->file_size != (uint64_t)st.st_size || k == ex->n ||
	    info->uuid.len != r->uuid.len || memcmp(info->uuid.bytes, r->uuid.bytes, r->uuid.len))
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: indexer output rejected: %s", path,
		               k == ex->n ? "UUID is not one of the input's"
		                          : "size or UUID differs from its report");
	return 0;
}

enum stage_action { ST_PUBLISH, ST_REPLACE, ST_UPGRADE, ST_SAME, ST_RICHER, ST_CONFLICT };

/* How much an image carries (§12.5): 2 DWARF; 1 a full symbol table; 0 only
 * .dynsym (a fully stripped file).  An index of an earlier writer (no
 * Symbol_Source) without DWARF counts as 1. */
static int stage_rank(const symdb_image_info *i)
{
	if (i->flags & FMT_FLAG_HAS_DWARF)
		return 2;
	if (i->nbuild_info > FMT_BI_SYMBOL_SOURCE &&
	    i->build_info[FMT_BI_SYMBOL_SOURCE] == FMT_BI_SYMSRC_DYNSYM)
		return 0;
	return 1;
}

/* The kinds of ELF symbol table an image stores (§7.2.2), as bits 1 << SYMSRC:
 * its own (Symbol_Source) and ALT_SYMBOLS's (Alt_Symbol_Source). */
static unsigned stage_tables(const symdb_image_info *i)
{
	unsigned m = 0;

	if (i->nbuild_info > FMT_BI_SYMBOL_SOURCE && i->build_info[FMT_BI_SYMBOL_SOURCE] < 8)
		m |= 1u << i->build_info[FMT_BI_SYMBOL_SOURCE];
	if (i->nbuild_info > FMT_BI_ALT_SYMBOL_SOURCE && i->build_info[FMT_BI_ALT_SYMBOL_SOURCE] < 8)
		m |= 1u << i->build_info[FMT_BI_ALT_SYMBOL_SOURCE];
	return m & ~1u; /* SYMSRC_NONE is no table */
}

/* §12.5 rule 2, §7.2.2: the new index stores every kind of symbol table the
 * old one does and one more, and carries no less: a stripped binary built
 * after its own .debug file (which holds only the .debug's .symtab) brings
 * its .dynsym, for requests that name it. */
static int stage_more_tables(const symdb_image_info *ni, const symdb_image_info *oi)
{
	unsigned n = stage_tables(ni), o = stage_tables(oi);

	return (n & o) == o && n != o && stage_rank(ni) >= stage_rank(oi);
}

static enum stage_action stage_decide(rd_catalog *cat, const symdb_image_info *ni,
                                      const symdb_build_opts *o, char *ipath, size_t ipath_sz,
                                      symdb_image_info *oi)
{
	symdb_image *oimg = NULL;
	enum stage_action a;
	int state = stage_existing(cat, &ni->uuid, &oimg, oi, ipath, ipath_sz);
	const int nr = stage_rank(ni);

	if (state != 1)
		a = state == 0 ? ST_PUBLISH : ST_REPLACE;
	else if (o->flags & SYMDB_BUILD_FORCE)
		a = ST_REPLACE;
	else if (oi->answers_nothing && !ni->answers_nothing)
		a = ST_UPGRADE; /* its debug file may have been installed since (§7.2) */
	else if (ni->answers_nothing && !oi->answers_nothing)
		a = ST_RICHER; /* nothing never replaces something (a .dynsym) */
	else if (stage_more_tables(ni, oi))
		a = ST_UPGRADE;
	else if (nr > stage_rank(oi))
		a = ST_UPGRADE; /* strictly more: DWARF (a debug file found since the
		                 * same source was indexed), or a full symbol table */
	else if (stage_same(oi, ni->build_info[FMT_BI_SOURCE_XXH3],
	                    ni->build_info[FMT_BI_DEBUG_XXH3]))
		a = ST_SAME;
	else if (nr < stage_rank(oi))
		a = ST_RICHER;  /* the index already carries more */
	else
		a = ST_CONFLICT;
	symdb_image_close(oimg); /* oi's numbers stay; its strings are not used */
	return a;
}

static void stage_fill(symdb_build_result *res, unsigned i, const publish_staged *r,
                       const symdb_image_info *info, int skipped, int replaced,
                       const char *ipath, const symdb_image_info *oi, int is_macho)
{
	if (is_macho) {
		symdb_build_image *bi = &res->images[i];
		bi->uuid = info->uuid;
		bi->skipped = skipped;
		bi->replaced = replaced;
		snprintf(bi->arch, sizeof bi->arch, "%s", r->arch);
		res->nimages = i + 1;
	}
	if (i)
		return;
	res->uuid = info->uuid;
	res->skipped = skipped;
	res->replaced = replaced;
	snprintf(res->index_path, sizeof res->index_path, "%s", ipath);
	if (skipped) {
		res->file_size = oi->file_size;
		return;
	}
	res->file_size = info->file_size;
	res->nsymbols = info->nsymbols;
	res->nline_rows = info->nline_rows;
	res->ninline_nodes = info->ninline_nodes;
	snprintf(res->debug_path, sizeof res->debug_path, "%s", r->debug_path);
}

/* Apply the policy to one verified image and publish it. */
static int stage_publish_one(rd_catalog *cat, publish_staged *r, symdb_image *img,
                             const symdb_image_info *info, unsigned i, const char *path,
                             const publish_expect *ex, const symdb_build_opts *o,
                             symdb_build_result *res)
{
	char ipath[4096], hex[2 * SYMDB_UUID_MAX + 1];
	symdb_image_info oi;
	rd_cat_entry e;
	int rc, raced = 0;
	enum stage_action a;

	memset(&oi, 0, sizeof oi);
	a = stage_decide(cat, info, o, ipath, sizeof ipath, &oi);
	(void)img;
	if (a == ST_SAME || a == ST_RICHER || a == ST_CONFLICT) {
		rd_safe_tmp_unlink(rd_catalog_dir(cat), r->tmp);
		r->tmp[0] = 0;
		stage_fill(res, i, r, info, 1, 0, ipath, &oi, ex->is_macho);
		if (a != ST_CONFLICT)
			return 0;
		if (ex->is_macho)
			res->images[i].skipped = 2; /* kept, but not "the same" */
		symdb_uuid_format(&info->uuid, hex);
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_EXISTS,
		               "%s: %s %s is already indexed from different contents "
		               "(%llu bytes, xxh3 %016llx); kept the existing index "
		               "(use --force to replace)",
		               path, ex->is_macho ? "UUID" : "build-id", hex,
		               (unsigned long long)oi.build_info[FMT_BI_SOURCE_SIZE],
		               (unsigned long long)oi.build_info[FMT_BI_SOURCE_XXH3]);
	}
	/* Step 2 of §12.5 on our own descriptor; publish_tmp's rename is of
	 * the name we created. */
	rc = fsync(r->fd) < 0 ? -errno : publish_entry_from_fd(r->fd, info, &e);
	/* The input's absolute path, for `symdb list` (SPEC §12.2 `paths`),
	 * unless the caller says it is a temporary name. */
	char *abs = rc == 0 && !(o->flags & SYMDB_BUILD_NO_SOURCE_PATH) ? realpath(path, NULL) : NULL;
	e.source_path = abs;
	if (rc) {
		rd_safe_tmp_unlink(rd_catalog_dir(cat), r->tmp);
		r->tmp[0] = 0;
		return fmt_err(o->errbuf, o->errbuf_sz, rc, "%s: cannot read header: %s", path,
		               symdb_strerror(rc));
	}
	rc = publish_tmp(cat, &e, r->tmp, a == ST_PUBLISH, &raced, ipath, sizeof ipath,
	                    o->errbuf, o->errbuf_sz);
	free(abs);
	r->tmp[0] = 0; /* renamed or removed */
	if (rc == 0)
		stage_fill(res, i, r, info, raced,
		           a != ST_UPGRADE                                        ? 0
		           : stage_rank(&oi) == stage_rank(info)                  ? 3
		           : stage_rank(&oi) == 0 && stage_rank(info) == 1        ? 2
		                                                                  : 1,
		           ipath, &oi, ex->is_macho);
	return rc;
}

int publish_staged_images(rd_catalog *cat, publish_stager *st, const char *path,
                          const publish_expect *ex, const symdb_build_opts *o,
                          symdb_build_result *res)
{
	symdb_image *img[SYMDB_BUILD_MAX_IMAGES] = { 0 };
	symdb_image_info *info = calloc(SYMDB_BUILD_MAX_IMAGES, sizeof *info);
	int rc = 0, first = 0;
	unsigned i, k;

	if (!info)
		rc = fmt_err(o->errbuf, o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	else if (st->n == 0)
		rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_BAD_OBJECT,
		             "%s: indexer produced no image", path);
	else if (!ex->is_macho && st->n != 1)
		rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_CORRUPT,
		             "%s: indexer output rejected: %u images for one ELF file", path, st->n);
	/* All or nothing: every image is checked before any is published. */
	for (i = 0; rc == 0 && i < st->n; i++) {
		rc = stage_verify(&st->img[i], ex, path, &img[i], &info[i], o->errbuf, o->errbuf_sz);
		for (k = 0; rc == 0 && k < i; k++)
			if (info[k].uuid.len == info[i].uuid.len &&
			    !memcmp(info[k].uuid.bytes, info[i].uuid.bytes, info[i].uuid.len))
				rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_CORRUPT,
				             "%s: indexer output rejected: one UUID twice", path);
	}
	/* A conflict keeps that image's index and goes on with the others; the
	 * first conflict's message is the one reported. */
	for (i = 0; rc == 0 && i < st->n; i++) {
		char keep[1024] = "";
		int r1;
		if (first && o->errbuf_sz)
			fmt_escape(keep, sizeof keep, o->errbuf, strlen(o->errbuf));
		r1 = stage_publish_one(cat, &st->img[i], img[i], &info[i], i, path, ex, o, res);
		if (r1 == SYMDB_E_EXISTS) {
			if (first && o->errbuf_sz)
				fmt_escape(o->errbuf, o->errbuf_sz, keep, strlen(keep));
			first = 1;
		} else if (r1) {
			rc = r1;
		}
	}
	for (i = 0; i < SYMDB_BUILD_MAX_IMAGES; i++)
		symdb_image_close(img[i]);
	free(info);
	if (res)
		snprintf(res->warnings, sizeof res->warnings, "%s", st->warnings);
	build_stage_discard(st);
	return rc ? rc : first ? SYMDB_E_EXISTS : 0;
}

/* ---- the fast path ----------------------------------------------------------- */

/* XXH3 of each image's bytes: the file for ELF, each slice for Mach-O (the
 * same bytes a thin file extracted from a universal one has), from the
 * input's one descriptor. */
static int stage_hashes(const char *path, const publish_input *in, const publish_expect *ex,
                        uint64_t *h)
{
	fmt_mo_slice sl[FMT_MO_MAX_SLICES];
	struct stat st;
	uint8_t *p;
	int fd = in->in.fd, n, rc = 0;

	if (ex->is_dsym || fd < 0)
		return 0;
	if (!ex->is_macho)
		return fmt_fd_xxh3(fd, NULL, &h[0]) == 0 && ex->n == 1;
	if (fstat(fd, &st) < 0 || st.st_size < 8)
		return 0;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 0;
	n = fmt_mo_slices(p, (uint64_t)st.st_size, sl, FMT_MO_MAX_SLICES, path, NULL, 0);
	if (n > 0 && (unsigned)n == ex->n) {
		for (int i = 0; i < n; i++)
			h[i] = XXH3_64bits(p + sl[i].offset, (size_t)sl[i].size);
		rc = 1;
	}
	munmap(p, (size_t)st.st_size);
	return rc;
}

int publish_unchanged(rd_catalog *cat, const char *path, const publish_input *in,
                      const publish_expect *ex, symdb_build_result *res)
{
	uint64_t h[SYMDB_BUILD_MAX_IMAGES];
	char ipath[4096], buf[1024];
	symdb_image_info oi;
	symdb_image *oimg;
	rd_cat_entry e;
	unsigned i;

	if (ex->n == 0)
		return 0;
	/* Hashing is a pass over the whole input (7 ms for 23 MB): a first
	 * build, which has no entry to compare with, skips it. */
	for (i = 0; i < ex->n; i++)
		if (rd_catalog_get(cat, ex->uuid[i].bytes, ex->uuid[i].len, &e, buf, sizeof buf) != 0)
			return 0;
	if (!stage_hashes(path, in, ex, h))
		return 0;
	/* A debug file found now (a BINARY.dSYM, a build-id or debuglink
	 * file installed since the index was built) may bring DWARF the index
	 * lacks: not unchanged then. */
	int debug = in->debug.fd >= 0 || in->nlinks || in->companion.fd >= 0 || in->dwp.fd >= 0;
	for (i = 0; i < ex->n; i++) {
		int state = stage_existing(cat, &ex->uuid[i], &oimg, &oi, ipath, sizeof ipath);
		int same = state == 1 && stage_same(&oi, h[i], 0) && !oi.answers_nothing &&
		           !(debug && !(oi.flags & FMT_FLAG_HAS_DWARF));
		symdb_image_close(oimg);
		if (!same)
			return 0;
		if (ex->is_macho) {
			res->images[i].uuid = ex->uuid[i];
			res->images[i].skipped = 1;
			memcpy(res->images[i].arch, ex->arch[i], sizeof res->images[i].arch);
			res->images[i].arch[sizeof res->images[i].arch - 1] = 0;
			res->nimages = i + 1;
		}
		if (i == 0) {
			res->uuid = ex->uuid[0];
			res->skipped = 1;
			res->file_size = oi.file_size;
			snprintf(res->index_path, sizeof res->index_path, "%s", ipath);
		}
	}
	return 1;
}
