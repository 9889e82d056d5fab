/* SPDX-License-Identifier: MIT */
/*
 * format_catalog.h - encode and decode the catalog's LMDB keys and values
 * (SPEC §12.2, §12.3).  Like the rest of format/, this is the only place that
 * knows where a catalog byte lives; reader/catalog_*.c move the bytes in and
 * out of LMDB and never look inside them.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_CATALOG_H
#define SYMDB_FORMAT_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#define FMT_HIDDEN __attribute__((visibility("hidden")))

#define FMT_CV_VALUE_VERSION 1      /* SPEC §12.3 Value_Version */

/* The `meta` record holding the schema version, a u32 big-endian
 * (FMT_CAT_SCHEMA_VERSION), SPEC §12.2. */
#define FMT_CAT_SCHEMA_KEY   "schema"
#define FMT_CAT_SCHEMA_SIZE  4
/* The `used` database: UUID -> last-query time, unix seconds as a u64
 * big-endian (SPEC §12.6). */
#define FMT_CAT_DB_USED      "used"
#define FMT_CAT_USED_SIZE    8
#define FMT_CV_STR_MAX       65535u /* u16 length prefix */

/* One decoded `images` value.  The strings point into the value bytes and are
 * NOT NUL-terminated (use the lengths). */
typedef struct fmt_cat_value {
	uint8_t uuid_kind, object_format;
	uint32_t flags, machine, machine_sub;
	uint64_t file_size, header_sum, built_at;
	const char *file;
	size_t file_len;
	const char *image_name;
	size_t name_len;
} fmt_cat_value;

/* Bytes needed to encode v (0 if a string is longer than FMT_CV_STR_MAX). */
FMT_HIDDEN size_t fmt_cat_value_size(const fmt_cat_value *v);

/* Encode v into buf (fmt_cat_value_size(v) bytes).  Returns the size, or 0 if
 * buf_sz is too small or a string is too long. */
FMT_HIDDEN size_t fmt_cat_value_encode(const fmt_cat_value *v, uint8_t *buf, size_t buf_sz);

/* Decode and validate n bytes.  Returns 0, or -1 with *why set to a static
 * reason ("value shorter than 40 bytes").  Rejected: a short or over-long
 * value, a Value_Version other than 1, a non-zero reserved byte, an unknown
 * UUID_Kind or Object_Format, unknown flag bits, a string that contains NUL,
 * an empty image name, and a File that is empty, absolute or has a `..`
 * component (the reader opens DB/File, so it must stay inside DB). */
FMT_HIDDEN int fmt_cat_value_decode(const uint8_t *val, size_t n, fmt_cat_value *out,
                                    const char **why);

/* `names` key (SPEC §12.2): image name, 0x00, UUID bytes.  Returns the key
 * length, or 0 if buf_sz is too small. */
FMT_HIDDEN size_t fmt_cat_name_key(const char *name, size_t name_len, const uint8_t *uuid,
                                   size_t uuid_len, uint8_t *buf, size_t buf_sz);

/* A `used` value: encode when into buf; decode n bytes (0, or -1 unless
 * they are one u64). */
FMT_HIDDEN void fmt_cat_used_encode(uint64_t when, uint8_t buf[FMT_CAT_USED_SIZE]);
FMT_HIDDEN int fmt_cat_used_decode(const void *val, size_t n, uint64_t *when);

#endif /* SYMDB_FORMAT_CATALOG_H */
