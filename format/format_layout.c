/* SPDX-License-Identifier: MIT */
/*
 * format_layout.c - path builders for the database directory layout
 * (format_layout.h, SPEC §12.1).
 */
#include "format_layout.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static int lay_fmt(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int lay_fmt(char *buf, size_t sz, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sz, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= sz ? -ENAMETOOLONG : 0;
}

int fmt_layout_dir(char *buf, size_t sz, const char *db, const char *sub)
{
	return lay_fmt(buf, sz, "%s/%s", db, sub);
}

int fmt_layout_index_rel(char *buf, size_t sz, const char *hex)
{
	return lay_fmt(buf, sz, FMT_LAYOUT_IMAGES "/%.2s/%s" FMT_LAYOUT_INDEX_EXT, hex, hex);
}

int fmt_layout_subdir(char *buf, size_t sz, const char *db, const char *hex)
{
	return lay_fmt(buf, sz, "%s/" FMT_LAYOUT_IMAGES "/%.2s", db, hex);
}

int fmt_layout_file(char *buf, size_t sz, const char *db, const char *rel)
{
	return lay_fmt(buf, sz, "%s/%s", db, rel);
}

int fmt_layout_cold(char *buf, size_t sz, const char *index_path)
{
	return lay_fmt(buf, sz, "%s" FMT_LAYOUT_COLD_EXT, index_path);
}

int fmt_layout_staged(char *buf, size_t sz, const char *staging, const char *hex,
                      const char *tag)
{
	return lay_fmt(buf, sz, "%s/%s%s" FMT_LAYOUT_TMP_SUFFIX, staging, hex, tag);
}

int fmt_layout_tmp(char *buf, size_t sz, const char *db, const char *name)
{
	return lay_fmt(buf, sz, "%s/" FMT_LAYOUT_TMP "/%s" FMT_LAYOUT_TMP_SUFFIX, db, name);
}
