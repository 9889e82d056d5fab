/* SPDX-License-Identifier: MIT */
/*
 * format_catalog.c - the byte codec of the catalog's `images` values and
 * `names` keys (SPEC §12.2-§12.3).  Decoding treats the value as untrusted:
 * a catalog can be damaged or written by a newer symdb, and the File field
 * becomes a path the reader opens, so it is confined to the database
 * directory here, once, for every caller.
 */
#include "format_catalog.h"

#include <string.h>

#include "symdb_endian.h"
#include "symdb_format.h"

size_t fmt_cat_value_size(const fmt_cat_value *v)
{
	if (v->file_len > FMT_CV_STR_MAX || v->name_len > FMT_CV_STR_MAX)
		return 0;
	return FMT_CV_FIXED_SIZE + 2 + v->file_len + 2 + v->name_len;
}

size_t fmt_cat_value_encode(const fmt_cat_value *v, uint8_t *buf, size_t buf_sz)
{
	size_t need = fmt_cat_value_size(v);
	uint8_t *p;

	if (need == 0 || need > buf_sz)
		return 0;
	memset(buf, 0, FMT_CV_FIXED_SIZE);
	buf[FMT_CV_VERSION] = FMT_CV_VALUE_VERSION;
	buf[FMT_CV_UUID_KIND] = v->uuid_kind;
	buf[FMT_CV_OBJECT_FORMAT] = v->object_format;
	fmt_put32(buf + FMT_CV_FLAGS, v->flags);
	fmt_put32(buf + FMT_CV_MACHINE, v->machine);
	fmt_put32(buf + FMT_CV_MACHINE_SUB, v->machine_sub);
	fmt_put64(buf + FMT_CV_FILE_SIZE, v->file_size);
	fmt_put64(buf + FMT_CV_HEADER_SUM, v->header_sum);
	fmt_put64(buf + FMT_CV_BUILT_AT, v->built_at);
	p = buf + FMT_CV_FIXED_SIZE;
	fmt_put16(p, (uint16_t)v->file_len);
	if (v->file_len)
		memcpy(p + 2, v->file, v->file_len);
	p += 2 + v->file_len;
	fmt_put16(p, (uint16_t)v->name_len);
	if (v->name_len)
		memcpy(p + 2, v->image_name, v->name_len);
	return need;
}

static int cv_fail(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

/* The reader opens DB/File: refuse anything that could leave DB. */
static int cv_path_confined(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || s[0] == '/')
		return 0;
	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != '/')
			j++;
		if (j - i == 2 && s[i] == '.' && s[i + 1] == '.')
			return 0;
		i = j + 1;
	}
	return 1;
}

/* Read one u16-length-prefixed string at *off; advances *off. */
static int cv_string(const uint8_t *val, size_t n, size_t *off, const char **s, size_t *len)
{
	size_t l;

	if (n - *off < 2)
		return -1;
	l = fmt_be16(val + *off);
	if (n - *off - 2 < l)
		return -1;
	*s = (const char *)val + *off + 2;
	*len = l;
	*off += 2 + l;
	return memchr(*s, 0, l) ? -1 : 0;
}

static int cv_fixed(const uint8_t *val, fmt_cat_value *out, const char **why)
{
	if (val[FMT_CV_VERSION] != FMT_CV_VALUE_VERSION)
		return cv_fail(why, "unknown Value_Version");
	if (val[FMT_CV_RESERVED] != 0)
		return cv_fail(why, "reserved byte is not zero");
	out->uuid_kind = val[FMT_CV_UUID_KIND];
	out->object_format = val[FMT_CV_OBJECT_FORMAT];
	if (out->uuid_kind < FMT_UUID_GNU_BUILD_ID || out->uuid_kind > FMT_UUID_FALLBACK)
		return cv_fail(why, "unknown UUID_Kind");
	if (out->object_format != FMT_OBJ_ELF && out->object_format != FMT_OBJ_MACHO)
		return cv_fail(why, "unknown Object_Format");
	out->flags = fmt_be32(val + FMT_CV_FLAGS);
	if (out->flags & ~FMT_FLAGS_KNOWN)
		return cv_fail(why, "unknown flag bits");
	out->machine = fmt_be32(val + FMT_CV_MACHINE);
	out->machine_sub = fmt_be32(val + FMT_CV_MACHINE_SUB);
	out->file_size = fmt_be64(val + FMT_CV_FILE_SIZE);
	out->header_sum = fmt_be64(val + FMT_CV_HEADER_SUM);
	out->built_at = fmt_be64(val + FMT_CV_BUILT_AT);
	return 0;
}

int fmt_cat_value_decode(const uint8_t *val, size_t n, fmt_cat_value *out, const char **why)
{
	size_t off = FMT_CV_FIXED_SIZE;

	memset(out, 0, sizeof *out);
	if (n < FMT_CV_FIXED_SIZE)
		return cv_fail(why, "value shorter than 40 bytes");
	if (cv_fixed(val, out, why) < 0)
		return -1;
	if (cv_string(val, n, &off, &out->file, &out->file_len) < 0)
		return cv_fail(why, "bad File string");
	if (cv_string(val, n, &off, &out->image_name, &out->name_len) < 0)
		return cv_fail(why, "bad Image_Name string");
	if (off != n)
		return cv_fail(why, "trailing bytes after Image_Name");
	if (!cv_path_confined(out->file, out->file_len))
		return cv_fail(why, "File is empty, absolute or leaves the database");
	if (out->name_len == 0)
		return cv_fail(why, "empty Image_Name");
	return 0;
}

size_t fmt_cat_name_key(const char *name, size_t name_len, const uint8_t *uuid,
                        size_t uuid_len, uint8_t *buf, size_t buf_sz)
{
	size_t need = name_len + 1 + uuid_len;

	if (need > buf_sz)
		return 0;
	memcpy(buf, name, name_len);
	buf[name_len] = 0;
	memcpy(buf + name_len + 1, uuid, uuid_len);
	return need;
}

void fmt_cat_used_encode(uint64_t when, uint8_t buf[FMT_CAT_USED_SIZE])
{
	fmt_put64(buf, when);
}

int fmt_cat_used_decode(const void *val, size_t n, uint64_t *when)
{
	if (n != FMT_CAT_USED_SIZE)
		return -1;
	*when = fmt_be64(val);
	return 0;
}
