/* SPDX-License-Identifier: MIT */
/*
 * publish_import.c - symdb_builder_import_file(): publish an index file that was
 * built elsewhere (one image of an export bundle, SPEC §12.7).
 *
 * An imported file is untrusted input, so it is never published as given:
 * it is copied into a fresh temporary file in DB/tmp, and the
 * copy - the bytes that will actually be renamed into DB/images - is opened
 * with every table checksum verified (§9) and every table's order and
 * references checked, and its header UUID compared with the one the caller
 * expects.  Only then does it take the same fsync + rename + directory
 * fsync + catalog commit path as a build (publish_tmp, §12.5), so a reader can
 * never tell an imported image from a locally built one.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include "publish_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_dir.h"
#include "format_header.h"
#include "format_io.h"
#include "format_layout.h"

#define IMP_COPY_BUF (256u * 1024u)

/* Copy src into the open temp file and start its writeback (publish_tmp
 * fsyncs it, after the copy is verified). */
static int imp_copy(int in, int out, uint64_t *size)
{
	char *buf = malloc(IMP_COPY_BUF);
	ptrdiff_t n = 0;

	if (!buf)
		return -ENOMEM;
	*size = 0;
	while ((n = fmt_read_full(in, buf, IMP_COPY_BUF)) > 0) {
		int rc = fmt_write_full(out, buf, (size_t)n);

		if (rc) {
			free(buf);
			return rc;
		}
		*size += (uint64_t)n;
	}
	free(buf);
	if (n < 0)
		return (int)n;
	if (fchmod(out, 0644) < 0) /* index files are public */
		return -errno;
	publish_writeback_start(out);
	return 0;
}

/* Copy index_path to a new DB/tmp/import.XXXXXX (path in tmp). */
static int imp_stage(rd_catalog *cat, const char *index_path, char *tmp, size_t tmpsz,
                     uint64_t *size, const symdb_build_opts *o)
{
	int in, out, rc;

	if (fmt_layout_tmp(tmp, tmpsz, rd_catalog_dir(cat), "import"))
		return fmt_err(o->errbuf, o->errbuf_sz, -ENAMETOOLONG, "%s: path too long",
		               rd_catalog_dir(cat));
	in = open(index_path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return fmt_err(o->errbuf, o->errbuf_sz, -errno, "%s: cannot open: %s", index_path,
		               symdb_strerror(-errno));
	out = rd_safe_tmp_create(rd_catalog_dir(cat), tmp, o->errbuf, o->errbuf_sz);
	if (out < 0) {
		close(in);
		return out;
	}
	rc = imp_copy(in, out, size);
	close(in);
	if (close(out) < 0 && rc == 0)
		rc = -errno;
	if (rc) {
		rd_safe_tmp_unlink(rd_catalog_dir(cat), tmp);
		return fmt_err(o->errbuf, o->errbuf_sz, rc, "%s: cannot copy %s: %s", tmp, index_path,
		               symdb_strerror(rc));
	}
	return 0;
}

/* Open the staged copy as a reader would, everything verified. */
static int imp_validate(const char *tmp, const char *src, const symdb_uuid *expect,
                        symdb_image **img, symdb_image_info *info, const symdb_build_opts *o)
{
	SYMDB_OPTS(symdb_open_opts, oo, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS,
	           .errbuf = o->errbuf, .errbuf_sz = o->errbuf_sz);
	char why[256] = "";
	int rc = symdb_image_open_file(tmp, &oo, img);

	if (rc == 0)
		rc = symdb_image_verify(*img, PUBLISH_EB_OPTS(why, sizeof why));
	else
		fmt_err(why, sizeof why, rc, "%s", o->errbuf_sz ? o->errbuf : symdb_strerror(rc));
	if (rc)
		return fmt_err(o->errbuf, o->errbuf_sz, rc, "%s: invalid index file: %s", src, why);
	info->sz = sizeof *info;
	symdb_image_get_info(*img, info);
	if (expect && (expect->len != info->uuid.len ||
	               memcmp(expect->bytes, info->uuid.bytes, expect->len) != 0))
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL,
		               "%s: header UUID differs from the expected one", src);
	return 0;
}

/* 1: the catalog has this UUID and its file is there with the recorded size. */
static int imp_is_indexed(rd_catalog *cat, const symdb_uuid *id, symdb_build_result *res)
{
	rd_cat_entry e;
	char buf[1024];
	struct stat st;
	rd_safedir d;
	const char *name;
	int ok;

	if (rd_catalog_get(cat, id->bytes, id->len, &e, buf, sizeof buf) != 0)
		return 0;
	if (fmt_layout_file(res->index_path, sizeof res->index_path, rd_catalog_dir(cat), e.file) ||
	    rd_safedir_of(&d, res->index_path, &name, 0, NULL, 0) != 0) {
		res->index_path[0] = 0;
		return 0;
	}
	/* Judged without following anything (db_dir.h): an unsafe file is
	 * not "indexed", and publishing then says why. */
	ok = rd_safe_stat(&d, name, &st) == 0 && (uint64_t)st.st_size == e.file_size;
	rd_safedir_close(&d);
	if (!ok)
		res->index_path[0] = 0;
	return ok;
}

int rd_index_answers_nothing(const char *index_path)
{
	symdb_image *img = NULL;
	symdb_image_info info;
	int empty = 0;

	memset(&info, 0, sizeof info);
	info.sz = sizeof info;
	if (index_path[0] && symdb_image_open_file(index_path, NULL, &img) == 0 &&
	    symdb_image_get_info(img, &info) == 0)
		empty = info.answers_nothing != 0;
	symdb_image_close(img);
	return empty;
}

static void imp_result(const symdb_image_info *info, symdb_build_result *out)
{
	out->uuid = info->uuid;
	out->file_size = info->file_size;
	out->nsymbols = info->nsymbols;
	out->nline_rows = info->nline_rows;
	out->ninline_nodes = info->ninline_nodes;
}

static int import_file(symdb_builder *b, const char *index_path, const symdb_uuid *expect,
                       const symdb_build_opts *opts, symdb_build_result *out);

int symdb_builder_import_file(symdb_builder *b, const char *index_path,
                              const symdb_uuid *expect, const symdb_build_opts *opts,
                              symdb_build_result *out)
{
	symdb_build_result *full;
	int rc;

	if (!out || out->sz < sizeof out->sz)
		return SYMDB_E_INVAL;
	full = malloc(sizeof *full); /* ~12 KiB: not on a caller's thread stack */
	if (!full)
		return -ENOMEM;
	rc = import_file(b, index_path, expect, opts, full);
	publish_result_put(out, full);
	free(full);
	return rc;
}

static int import_file(symdb_builder *b, const char *index_path, const symdb_uuid *expect,
                       const symdb_build_opts *opts, symdb_build_result *out)
{
	symdb_build_opts o;
	symdb_image *img = NULL;
	symdb_image_info info;
	rd_cat_entry e;
	rd_catalog *cat;
	char tmp[4096];
	uint64_t size = 0;
	int rc, raced = 0;

	if (!b || !index_path || !out)
		return SYMDB_E_INVAL;
	rc = publish_builder_opts(opts, &o);
	if (rc)
		return rc;
	memset(out, 0, sizeof *out);
	out->sz = sizeof *out;
	cat = publish_builder_catalog(b);
	rc = imp_stage(cat, index_path, tmp, sizeof tmp, &size, &o);
	if (rc)
		return rc;
	rc = imp_validate(tmp, index_path, expect, &img, &info, &o);
	if (rc == 0 && info.file_size != size)
		rc = fmt_err(o.errbuf, o.errbuf_sz, SYMDB_E_CORRUPT,
		             "%s: %llu bytes, the header says %llu", index_path,
		             (unsigned long long)size, (unsigned long long)info.file_size);
	if (rc == 0)
		imp_result(&info, out);
	/* An index that answers nothing is replaced by one that answers
	 * something, as a build replaces it (publish_commit.c stage_decide). */
	int replace = 0;
	if (rc == 0 && !(o.flags & SYMDB_BUILD_FORCE) && imp_is_indexed(cat, &info.uuid, out)) {
		replace = !info.answers_nothing && rd_index_answers_nothing(out->index_path);
		if (!replace) {
			out->skipped = 1;
			symdb_image_close(img);
			rd_safe_tmp_unlink(rd_catalog_dir(cat), tmp);
			return 0;
		}
	}
	if (rc == 0 && (rc = publish_entry_from_file(tmp, &info, &e)) != 0)
		rc = fmt_err(o.errbuf, o.errbuf_sz, rc, "%s: cannot read header: %s", tmp,
		             symdb_strerror(rc));
	if (rc) {
		symdb_image_close(img);
		rd_safe_tmp_unlink(rd_catalog_dir(cat), tmp);
		return rc;
	}
	/* publish_tmp renames or removes tmp; img's mapping survives either. */
	rc = publish_tmp(cat, &e, tmp, !(o.flags & SYMDB_BUILD_FORCE) && !replace, &raced,
	                    out->index_path, sizeof out->index_path, o.errbuf, o.errbuf_sz);
	symdb_image_close(img);
	out->skipped = raced;
	return rc;
}
