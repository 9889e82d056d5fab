/* SPDX-License-Identifier: MIT */
/*
 * format_header.c - validation of an index file's header and table directory
 * (SPEC §5, §6, §8, §9).  The checks run cheapest and most fundamental first:
 * magic, version and sizes decide whether anything else may be read at all;
 * the Header_Checksum then vouches for every header and directory byte; only
 * then are individual fields and tables judged.  Every rejection names the
 * field, because "index file is damaged" alone helps nobody repair a database.
 */
#include "format_header.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include "symdb_errors.h"
#include "symdb_endian.h"

/*
 * Error text is one line of valid UTF-8 (symdb.h "Conventions"): it often holds
 * bytes from outside - a caller's path, names from a hostile object file, a
 * sandboxed child's message, an upstream store's reason - and a library
 * user writes it to a log or a terminal as it is.  The escapes are the
 * command line's (README "Names in output"): \n \t \r, \xNN for the other
 * bytes below 0x20 and DEL, \\ for a backslash, \xNN for a byte that is not
 * part of valid UTF-8 and for both bytes of a C1 control (U+0080-U+009F;
 * some terminals take U+009B as CSI).
 *
 * Escaping is idempotent, because reasons nest ("PATH: cannot read header:
 * " + another call's errbuf) and a relayed child's message comes escaped
 * already: a backslash that starts one of these escapes is kept as it is.
 * The price is that a name holding such a sequence literally reads the same
 * as its escaped form; what matters, one line and no control byte, holds.
 */

/* Bytes of a valid UTF-8 sequence at s (not C1, not overlong or a
 * surrogate), or 0. */
static size_t esc_utf8(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		lo = c == 0xc2 ? 0xa0 : lo; /* C2 80-C2 9F: a C1 control */
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		lo = c == 0xe0 ? 0xa0 : lo;
		hi = c == 0xed ? 0x9f : hi;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		lo = c == 0xf0 ? 0x90 : lo;
		hi = c == 0xf4 ? 0x8f : hi;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

static int esc_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* One unit of s: the bytes it takes (at least 1), its escaped form in e
 * (at most 4 bytes) and that form's length in *el.  An escape already there
 * is one unit, so that a cut never splits it. */
static size_t esc_unit(const unsigned char *s, size_t n, char e[4], size_t *el)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = s[0];
	size_t k;

	if (c == '\\' && n >= 2 && (s[1] == '\\' || s[1] == 'n' || s[1] == 't' || s[1] == 'r')) {
		k = 2;
	} else if (c == '\\' && n >= 4 && s[1] == 'x' && esc_hex(s[2]) && esc_hex(s[3])) {
		k = 4;
	} else if (c >= 0x20 && c < 0x7f && c != '\\') {
		k = 1;
	} else if (c >= 0x80 && (k = esc_utf8(s, n)) != 0) {
		;
	} else {
		char named = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\\' ? '\\' : 0;
		e[0] = '\\';
		e[1] = named ? named : 'x';
		e[2] = hex[c >> 4];
		e[3] = hex[c & 15];
		*el = named ? 2 : 4;
		return 1;
	}
	memcpy(e, s, k);
	*el = k;
	return k;
}

/* Length of s (n bytes) escaped. */
static size_t esc_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = 0, el;
	char e[4];

	for (size_t i = 0; i < n; len += el)
		i += esc_unit(u + i, n - i, e, &el);
	return len;
}

/* Append s (n bytes) escaped at dst, whole units only, at most room bytes;
 * returns the bytes written.  With skip, the first units are left out until
 * what remains fits room (the tail of s). */
static size_t esc_put(char *dst, size_t room, const char *s, size_t n, int skip)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = 0, el, i = 0;
	char e[4];

	if (skip)
		for (size_t left = esc_len(s, n); left > room; left -= el)
			i += esc_unit(u + i, n - i, e, &el);
	while (i < n) {
		size_t k = esc_unit(u + i, n - i, e, &el);
		if (len + el > room)
			break;
		memcpy(dst + len, e, el);
		len += el;
		i += k;
	}
	return len;
}

size_t fmt_escape(char *dst, size_t dst_sz, const char *s, size_t n)
{
	if (!dst_sz)
		return 0;
	size_t len = esc_put(dst, dst_sz - 1, s, n, 0);
	dst[len] = '\0';
	return len;
}

/*
 * errbuf holds "PATH: " + the reason of length rl at its start: put PATH in
 * front, escaped, shortened in the middle ("/a/b...y/z") when the whole does
 * not fit, because the reason is what the reader needs and a path near
 * PATH_MAX is longer than most callers' buffers.  The cut falls between
 * escapes, never inside one.
 */
static void put_path_first(char *errbuf, size_t errbuf_sz, const char *path, size_t rl)
{
	size_t pl = strlen(path), el = esc_len(path, pl);
	size_t room = errbuf_sz - 1 - rl - 2; /* for the path; caller: rl + 2 < errbuf_sz */

	if (el <= room) {
		memmove(errbuf + el + 2, errbuf, rl + 1);
		esc_put(errbuf, el, path, pl, 0);
		memcpy(errbuf + el, ": ", 2);
		return;
	}
	/* head and tail may come out a few bytes short of their room (a unit
	 * that does not fit): the reason moves to where they end */
	char *reason = errbuf + room + 2;
	memmove(reason, errbuf, rl + 1);
	size_t head = esc_put(errbuf, (room - 3) / 2, path, pl, 0);
	memcpy(errbuf + head, "...", 3);
	size_t tail = esc_put(errbuf + head + 3, room - 3 - (room - 3) / 2, path, pl, 1);
	char *end = errbuf + head + 3 + tail;
	memcpy(end, ": ", 2);
	memmove(end + 2, reason, rl + 1);
}

/* Length of the path part of fmt, up to its first ": ", or -1 when fmt does
 * not start "%s" or the path part holds another conversion than %s and %.*s
 * ("%s/catalog: ", "%s/%.*s: ": the path may come in pieces). */
static int path_part_len(const char *fmt)
{
	const char *c = fmt;

	if (strncmp(fmt, "%s", 2) != 0)
		return -1;
	while (*c && !(c[0] == ':' && c[1] == ' ')) {
		if (strncmp(c, "%s", 2) == 0)
			c += 2;
		else if (strncmp(c, "%.*s", 4) == 0)
			c += 4;
		else if (*c == '%')
			return -1;
		else
			c++;
	}
	return *c ? (int)(c - fmt) : -1;
}

/* Print the n-byte path part of fmt into buf (cut at sz), taking all of its
 * arguments off ap whatever fits. */
static void put_path_part(char *buf, size_t sz, const char *fmt, int n, va_list *ap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (const char *c = fmt; c < fmt + n;) {
		if (c[0] != '%') {
			if (len + 1 < sz) {
				buf[len++] = *c;
				buf[len] = '\0';
			}
			c++;
			continue;
		}
		int prec = c[1] == '.' ? va_arg(*ap, int) : -1; /* "%.*s" */
		const char *s = va_arg(*ap, const char *);
		c += c[1] == '.' ? 4 : 2;
		snprintf(buf + len, sz - len, "%.*s", prec < 0 ? (int)sz : prec, s ? s : "");
		len += strlen(buf + len);
	}
}

int fmt_verr(char *errbuf, size_t errbuf_sz, int rc, const char *fmt, va_list ap)
{
	/* The text before escaping, which never shortens it: what does not
	 * fit errbuf raw would not fit escaped either. */
	char raw[4096];
	size_t raw_sz;
	int pn;

	if (!errbuf || !errbuf_sz)
		return rc;
	raw_sz = errbuf_sz < sizeof raw ? errbuf_sz : sizeof raw;
	if ((pn = path_part_len(fmt)) >= 0) {
		/* "PATH: reason": the reason first, then as much path as fits.
		 * Room for two PATH_MAX (4096) pieces: "path too long" must
		 * keep the path's end too. */
		char path[2 * 4096 + 64];
		va_list aq;
		va_copy(aq, ap);
		put_path_part(path, sizeof path, fmt, pn, &aq);
		vsnprintf(raw, raw_sz, fmt + pn + 2, aq);
		va_end(aq);
		size_t rl = fmt_escape(errbuf, errbuf_sz, raw, strlen(raw));
		if (rl + 2 + 8 < errbuf_sz)
			put_path_first(errbuf, errbuf_sz, path, rl);
	} else {
		vsnprintf(raw, raw_sz, fmt, ap);
		fmt_escape(errbuf, errbuf_sz, raw, strlen(raw));
	}
	return rc;
}

int fmt_err(char *errbuf, size_t errbuf_sz, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rc = fmt_verr(errbuf, errbuf_sz, rc, fmt, ap);
	va_end(ap);
	return rc;
}

const char *fmt_table_name(uint32_t kind)
{
	static const char *const names[FMT_T_KIND_MAX + 1] = {
		[FMT_T_STRINGS] = "STRINGS",           [FMT_T_SEGMENTS] = "SEGMENTS",
		[FMT_T_SYMBOL_ADDRS] = "SYMBOL_ADDRS", [FMT_T_SYMBOLS] = "SYMBOLS",
		[FMT_T_FILES] = "FILES",               [FMT_T_FUNCTIONS] = "FUNCTIONS",
		[FMT_T_INLINE_ADDRS] = "INLINE_ADDRS", [FMT_T_INLINE_MAP] = "INLINE_MAP",
		[FMT_T_INLINE_NODES] = "INLINE_NODES", [FMT_T_LINE_ADDRS] = "LINE_ADDRS",
		[FMT_T_LINE_ROWS] = "LINE_ROWS",       [FMT_T_BUILD_INFO] = "BUILD_INFO",
		[FMT_T_SYMBOL_FILES] = "SYMBOL_FILES",
		[FMT_T_ALT_SYMBOL_ADDRS] = "ALT_SYMBOL_ADDRS",
		[FMT_T_ALT_SYMBOLS] = "ALT_SYMBOLS",
		[FMT_T_ALT_SYMBOL_FILES] = "ALT_SYMBOL_FILES",
		[FMT_T_FILE_SOURCES] = "FILE_SOURCES",
	};

	if (kind == 0 || kind > FMT_T_KIND_MAX || !names[kind])
		return "unknown";
	return names[kind];
}

int fmt_table_packed(uint32_t kind, unsigned major)
{
	return major >= 2 && (kind == FMT_T_FUNCTIONS || kind == FMT_T_INLINE_MAP ||
	                      kind == FMT_T_INLINE_NODES || kind == FMT_T_LINE_ROWS);
}

int fmt_record_size(uint32_t kind, unsigned address_size)
{
	return fmt_record_size_v(kind, address_size, FMT_VERSION_MAJOR);
}

int fmt_record_size_v(uint32_t kind, unsigned address_size, unsigned major)
{
	if (fmt_table_packed(kind, major))
		return 0;
	if (major >= 2 && (kind == FMT_T_INLINE_ADDRS || kind == FMT_T_LINE_ADDRS))
		return FMT_BLK_SIZE;
	switch (kind) {
	case FMT_T_STRINGS: return 0;
	case FMT_T_SEGMENTS: return FMT_SEG_SIZE;
	case FMT_T_SYMBOL_ADDRS:
	case FMT_T_ALT_SYMBOL_ADDRS:
	case FMT_T_INLINE_ADDRS:
	case FMT_T_LINE_ADDRS: return (int)address_size;
	case FMT_T_SYMBOLS:
	case FMT_T_ALT_SYMBOLS: return FMT_SYM_SIZE;
	case FMT_T_FILES: return FMT_FILE_SIZE;
	case FMT_T_FUNCTIONS: return FMT_FN_SIZE;
	case FMT_T_INLINE_MAP: return FMT_IMAP_SIZE;
	case FMT_T_INLINE_NODES: return FMT_NODE_SIZE;
	case FMT_T_LINE_ROWS: return FMT_ROW_SIZE;
	case FMT_T_BUILD_INFO: return FMT_BI_SIZE;
	case FMT_T_SYMBOL_FILES:
	case FMT_T_ALT_SYMBOL_FILES: return FMT_SYMFILE_SIZE;
	case FMT_T_FILE_SOURCES: return FMT_FSRC_SIZE;
	default: return -1;
	}
}

uint64_t fmt_header_checksum(const uint8_t *header, const uint8_t *dir, uint32_t table_count)
{
	/* One hash over two ranges.  The directory is at most 64 entries, so
	 * gathering both into a stack buffer is cheaper than a streaming state
	 * (whose layout libxxhash only exposes to static linkers). */
	uint8_t tmp[FMT_H_CHECKSUM + FMT_MAX_TABLES * FMT_DIR_ENTRY_SIZE];
	size_t dlen = (size_t)(table_count > FMT_MAX_TABLES ? FMT_MAX_TABLES : table_count) *
	              FMT_DIR_ENTRY_SIZE;

	memcpy(tmp, header, FMT_H_CHECKSUM);
	memcpy(tmp + FMT_H_CHECKSUM, dir, dlen);
	return XXH3_64bits(tmp, FMT_H_CHECKSUM + dlen);
}

/* Magic, version, sizes and directory bounds: what must hold before the
 * checksum can even be computed. */
static int check_frame(const uint8_t *b, uint64_t size, fmt_view *v, char *eb, size_t ebsz)
{
	uint64_t file_size;

	if (size < FMT_MAGIC_LEN || memcmp(b, FMT_MAGIC, FMT_MAGIC_LEN) != 0)
		return fmt_err(eb, ebsz, SYMDB_E_FORMAT, "bad magic: not a symdb index file");
	if (size < FMT_HEADER_SIZE)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "truncated: file is %llu bytes, header needs %d",
		               (unsigned long long)size, FMT_HEADER_SIZE);
	v->version_major = fmt_be16(b + FMT_H_VERSION_MAJOR);
	v->version_minor = fmt_be16(b + FMT_H_VERSION_MINOR);
	if (v->version_major != FMT_VERSION_MAJOR && v->version_major != FMT_V1_MAJOR)
		return fmt_err(eb, ebsz, SYMDB_E_VERSION,
		               "Version_Major %u not supported (want %d or %d)", v->version_major,
		               FMT_V1_MAJOR, FMT_VERSION_MAJOR);
	v->packed = v->version_major >= 2;
	v->header_size = fmt_be32(b + FMT_H_HEADER_SIZE);
	if (v->header_size < FMT_HEADER_SIZE || v->header_size > size)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Header_Size %u out of range [%d, %llu]",
		               v->header_size, FMT_HEADER_SIZE, (unsigned long long)size);
	file_size = fmt_be64(b + FMT_H_FILE_SIZE);
	if (file_size != size)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "File_Size 0x%llx differs from the actual size 0x%llx (truncated?)",
		               (unsigned long long)file_size, (unsigned long long)size);
	v->table_count = fmt_be32(b + FMT_H_TABLE_COUNT);
	if (v->table_count > FMT_MAX_TABLES)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Table_Count %u exceeds %d",
		               v->table_count, FMT_MAX_TABLES);
	v->dir_offset = fmt_be64(b + FMT_H_DIR_OFFSET);
	if (v->dir_offset % FMT_TABLE_ALIGN || v->dir_offset < v->header_size ||
	    v->dir_offset > size ||
	    size - v->dir_offset < (uint64_t)v->table_count * FMT_DIR_ENTRY_SIZE)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "Table_Directory_Offset 0x%llx (%u entries) misaligned or outside the file",
		               (unsigned long long)v->dir_offset, v->table_count);
	return 0;
}

/* The fixed header fields (SPEC §5), after the checksum vouched for them. */
static int check_fields(const uint8_t *b, fmt_view *v, char *eb, size_t ebsz)
{
	unsigned i;

	v->flags = fmt_be32(b + FMT_H_FLAGS);
	if (v->flags & ~FMT_FLAGS_KNOWN)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Flags 0x%x has unknown bits", v->flags);
	v->object_format = b[FMT_H_OBJECT_FORMAT];
	if (v->object_format != FMT_OBJ_ELF && v->object_format != FMT_OBJ_MACHO)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Object_Format %u unknown", v->object_format);
	v->address_size = b[FMT_H_ADDRESS_SIZE];
	if (v->address_size != 4 && v->address_size != 8)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Address_Size %u is not 4 or 8",
		               v->address_size);
	v->uuid_kind = b[FMT_H_UUID_KIND];
	if (v->uuid_kind < FMT_UUID_GNU_BUILD_ID || v->uuid_kind > FMT_UUID_FALLBACK)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "UUID_Kind %u unknown", v->uuid_kind);
	v->uuid_len = b[FMT_H_UUID_LENGTH];
	if (v->uuid_len < 1 || v->uuid_len > FMT_UUID_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "UUID_Length %u out of range [1, 32]",
		               v->uuid_len);
	memcpy(v->uuid, b + FMT_H_UUID, FMT_UUID_MAX);
	for (i = v->uuid_len; i < FMT_UUID_MAX; i++)
		if (v->uuid[i])
			return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "UUID byte %u past UUID_Length is not zero", i);
	if (fmt_be32(b + FMT_H_RESERVED0))
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Reserved_0 is not zero");
	for (i = 0; i < 16; i++)
		if (b[FMT_H_RESERVED1 + i])
			return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Reserved_1 is not zero");
	v->machine = fmt_be32(b + FMT_H_MACHINE);
	v->machine_sub = fmt_be32(b + FMT_H_MACHINE_SUB);
	v->object_class = b[FMT_H_OBJECT_CLASS];
	v->object_endian = b[FMT_H_OBJECT_ENDIAN];
	v->object_type = fmt_be16(b + FMT_H_OBJECT_TYPE);
	v->image_name = fmt_be32(b + FMT_H_IMAGE_NAME);
	v->base_address = fmt_be64(b + FMT_H_BASE_ADDRESS);
	return 0;
}

/* One directory entry: bounds, alignment and shape (SPEC §6). */
static int check_entry(const fmt_view *v, const fmt_table *t, char *eb, size_t ebsz)
{
	uint64_t lo = v->dir_offset + (uint64_t)v->table_count * FMT_DIR_ENTRY_SIZE;
	const char *nm = fmt_table_name(t->kind);
	int rs = fmt_record_size_v(t->kind, v->address_size, v->version_major);

	if (t->flags & ~FMT_TABLE_FLAGS_KNOWN)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "table %u (%s) Flags 0x%x has unknown bits",
		               t->kind, nm, t->flags);
	if (t->offset % FMT_TABLE_ALIGN)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "table %u (%s) Offset 0x%llx not 8-aligned",
		               t->kind, nm, (unsigned long long)t->offset);
	if (t->offset < lo)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "table %u (%s) starts inside the header or directory (0x%llx < 0x%llx)",
		               t->kind, nm, (unsigned long long)t->offset, (unsigned long long)lo);
	if (t->offset > v->size || t->length > v->size - t->offset)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "table %u (%s) ends past EOF (0x%llx > 0x%llx)",
		               t->kind, nm, (unsigned long long)(t->offset + t->length),
		               (unsigned long long)v->size);
	if (rs < 0) /* unknown OPTIONAL kind: bounds only */
		return 0;
	if (fmt_table_packed(t->kind, v->version_major))
		return t->record_size ? fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		                                "table %u (%s) Record_Size %u, want 0", t->kind, nm,
		                                t->record_size)
		                      : 0; /* Length and Count: check_packed */
	if (t->record_size != rs)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "table %u (%s) Record_Size %u, want %d",
		               t->kind, nm, t->record_size, rs);
	if (rs == 0 ? t->length != t->count
	            : t->count > t->length / (uint64_t)rs || t->count * (uint64_t)rs != t->length)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "table %u (%s) Length 0x%llx != Count %llu x Record_Size %d",
		               t->kind, nm, (unsigned long long)t->length,
		               (unsigned long long)t->count, rs ? rs : 1);
	return 0;
}

static void read_entry(const uint8_t *e, uint32_t idx, fmt_table *t)
{
	t->kind = fmt_be32(e + FMT_D_KIND);
	t->flags = fmt_be16(e + FMT_D_FLAGS);
	t->record_size = fmt_be16(e + FMT_D_RECORD_SIZE);
	t->offset = fmt_be64(e + FMT_D_OFFSET);
	t->length = fmt_be64(e + FMT_D_LENGTH);
	t->count = fmt_be64(e + FMT_D_COUNT);
	t->checksum = fmt_be64(e + FMT_D_CHECKSUM);
	t->dir_index = idx;
	t->p = NULL;
}

/* Tables must not overlap one another (SPEC §4).  At most 64 entries, so
 * the pairwise check costs nothing worth sorting for.  Empty tables occupy
 * no bytes and cannot overlap. */
static int check_overlap(const fmt_table *all, uint32_t n, char *eb, size_t ebsz)
{
	uint32_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			const fmt_table *a = &all[i], *c = &all[j];
			if (!a->length || !c->length)
				continue;
			if (a->offset < c->offset + c->length && c->offset < a->offset + a->length)
				return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
				               "table %u (%s) overlaps table %u (%s)", a->kind,
				               fmt_table_name(a->kind), c->kind, fmt_table_name(c->kind));
		}
	return 0;
}

static int check_directory(fmt_view *v, char *eb, size_t ebsz)
{
	fmt_table all[FMT_MAX_TABLES];
	const uint8_t *dir = v->base + v->dir_offset;
	uint32_t i, prev = 0;
	int rc;

	for (i = 0; i < v->table_count; i++) {
		fmt_table *t = &all[i];
		read_entry(dir + (size_t)i * FMT_DIR_ENTRY_SIZE, i, t);
		if (t->kind <= prev)
			return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
			               "directory entry %u: Kind %u not above the previous %u", i,
			               t->kind, prev);
		prev = t->kind;
		if (fmt_record_size_v(t->kind, v->address_size, v->version_major) < 0 &&
		    !(t->flags & FMT_TABLE_OPTIONAL))
			return fmt_err(eb, ebsz, SYMDB_E_VERSION,
			               "table %u is of an unknown required kind", t->kind);
		rc = check_entry(v, t, eb, ebsz);
		if (rc)
			return rc;
		t->p = v->base + t->offset;
		if (t->kind <= FMT_T_KIND_MAX)
			v->t[t->kind] = *t;
	}
	return check_overlap(all, v->table_count, eb, ebsz);
}

static int check_parallel(const fmt_view *v, uint32_t ka, uint32_t kb, char *eb, size_t ebsz)
{
	if (v->t[ka].count == v->t[kb].count)
		return 0;
	return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "table %u (%s) Count %llu != table %u (%s) Count %llu",
	               ka, fmt_table_name(ka), (unsigned long long)v->t[ka].count, kb,
	               fmt_table_name(kb), (unsigned long long)v->t[kb].count);
}

/* Format 2 (SPEC §7.9): a block column of ceil(rows / 64) records. */
static int check_blocks(const fmt_view *v, uint32_t kb, uint32_t kr, char *eb, size_t ebsz)
{
	uint64_t rows = v->t[kr].count;

	if (v->t[kb].count == rows / FMT_BLK_ROWS + (rows % FMT_BLK_ROWS != 0))
		return 0;
	return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
	               "table %u (%s) Count %llu is not ceil(table %u (%s) Count %llu / %d)", kb,
	               fmt_table_name(kb), (unsigned long long)v->t[kb].count, kr,
	               fmt_table_name(kr), (unsigned long long)rows, FMT_BLK_ROWS);
}

/* The packed DWARF tables' shapes (SPEC §7.9) from the directory alone:
 * the lookup checks a packed record table's header (rd_tab_init) and a
 * block (fmt_block_get) before it reads them, so open touches no table
 * page. */
static int check_packed(fmt_view *v, char *eb, size_t ebsz)
{
	int rc;

	if ((rc = check_blocks(v, FMT_T_INLINE_ADDRS, FMT_T_INLINE_MAP, eb, ebsz)) ||
	    (rc = check_blocks(v, FMT_T_LINE_ADDRS, FMT_T_LINE_ROWS, eb, ebsz)))
		return rc;
	if (v->t[FMT_T_INLINE_MAP].length > (uint64_t)UINT32_MAX + 1 ||
	    v->t[FMT_T_LINE_ROWS].length > (uint64_t)UINT32_MAX + 1)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "a rows table is over 4 GiB");
	return 0;
}

/* Which kinds must be present, which go together (SPEC §6.1), and the
 * string pool's NUL bounds (SPEC §8). */
static int check_kinds(fmt_view *v, char *eb, size_t ebsz)
{
	static const uint32_t required[] = { FMT_T_STRINGS, FMT_T_SEGMENTS, FMT_T_SYMBOL_ADDRS,
	                                     FMT_T_SYMBOLS };
	const fmt_table *s = &v->t[FMT_T_STRINGS];
	unsigned i, ndwarf = 0;
	int rc;

	for (i = 0; i < sizeof required / sizeof required[0]; i++)
		if (!v->t[required[i]].p)
			return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "required table %u (%s) missing",
			               required[i], fmt_table_name(required[i]));
	for (i = FMT_T_FILES; i <= FMT_T_LINE_ROWS; i++)
		ndwarf += v->t[i].p != NULL;
	if (ndwarf && ndwarf != FMT_T_LINE_ROWS - FMT_T_FILES + 1)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "only %u of the 7 DWARF tables (5..11) present", ndwarf);
	v->has_dwarf = ndwarf != 0;
	if (v->has_dwarf && v->packed)
		rc = check_packed(v, eb, ebsz);
	else if ((rc = check_parallel(v, FMT_T_INLINE_ADDRS, FMT_T_INLINE_MAP, eb, ebsz)) == 0)
		rc = check_parallel(v, FMT_T_LINE_ADDRS, FMT_T_LINE_ROWS, eb, ebsz);
	if (rc || (rc = check_parallel(v, FMT_T_SYMBOL_ADDRS, FMT_T_SYMBOLS, eb, ebsz)) ||
	    (v->t[FMT_T_SYMBOL_FILES].p &&
	     (rc = check_parallel(v, FMT_T_SYMBOLS, FMT_T_SYMBOL_FILES, eb, ebsz))))
		return rc;
	/* §7.2.2: the other file's table, all three or its first two only. */
	if (!v->t[FMT_T_ALT_SYMBOL_ADDRS].p != !v->t[FMT_T_ALT_SYMBOLS].p ||
	    (v->t[FMT_T_ALT_SYMBOL_FILES].p && !v->t[FMT_T_ALT_SYMBOLS].p))
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "tables 14-16 (ALT_SYMBOL_*) present without one another");
	if ((v->t[FMT_T_ALT_SYMBOLS].p &&
	     (rc = check_parallel(v, FMT_T_ALT_SYMBOL_ADDRS, FMT_T_ALT_SYMBOLS, eb, ebsz))) ||
	    (v->t[FMT_T_ALT_SYMBOL_FILES].p &&
	     (rc = check_parallel(v, FMT_T_ALT_SYMBOLS, FMT_T_ALT_SYMBOL_FILES, eb, ebsz))))
		return rc;
	if (s->length == 0 || s->p[0] != 0 || s->p[s->length - 1] != 0)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "table 1 (STRINGS) must start and end with a NUL byte");
	if (v->image_name >= s->length)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT, "Image_Name 0x%x past the string pool (0x%llx)",
		               v->image_name, (unsigned long long)s->length);
	return 0;
}

int fmt_view_parse(const void *buf, uint64_t size, fmt_view *v, char *eb, size_t ebsz)
{
	const uint8_t *b = buf;
	uint64_t sum;
	int rc;

	memset(v, 0, sizeof *v);
	v->base = b;
	v->size = size;
	rc = check_frame(b, size, v, eb, ebsz);
	if (rc)
		return rc;
	v->header_checksum = fmt_be64(b + FMT_H_CHECKSUM);
	sum = fmt_header_checksum(b, b + v->dir_offset, v->table_count);
	if (sum != v->header_checksum)
		return fmt_err(eb, ebsz, SYMDB_E_CHECKSUM,
		               "Header_Checksum 0x%016llx, computed 0x%016llx",
		               (unsigned long long)v->header_checksum, (unsigned long long)sum);
	if ((rc = check_fields(b, v, eb, ebsz)) || (rc = check_directory(v, eb, ebsz)))
		return rc;
	return check_kinds(v, eb, ebsz);
}

int fmt_view_check_sums(const fmt_view *v, char *eb, size_t ebsz)
{
	const uint8_t *dir = v->base + v->dir_offset;
	uint32_t i;

	/* Walk the directory, not v->t[], so unknown OPTIONAL tables count too. */
	for (i = 0; i < v->table_count; i++) {
		fmt_table t;
		uint64_t sum;
		read_entry(dir + (size_t)i * FMT_DIR_ENTRY_SIZE, i, &t);
		sum = XXH3_64bits(v->base + t.offset, (size_t)t.length);
		if (sum != t.checksum)
			return fmt_err(eb, ebsz, SYMDB_E_CHECKSUM,
			               "table %u (%s) Checksum 0x%016llx, computed 0x%016llx", t.kind,
			               fmt_table_name(t.kind), (unsigned long long)t.checksum,
			               (unsigned long long)sum);
	}
	return 0;
}

/* Is [from, to) all zero? */
static int zero_range(const uint8_t *b, uint64_t from, uint64_t to, uint64_t *bad)
{
	for (; from < to; from++)
		if (b[from]) {
			*bad = from;
			return 0;
		}
	return 1;
}

int fmt_view_check_padding(const fmt_view *v, char *eb, size_t ebsz)
{
	const uint8_t *dir = v->base + v->dir_offset;
	uint64_t pos = v->dir_offset + (uint64_t)v->table_count * FMT_DIR_ENTRY_SIZE, bad = 0;

	/* The directory is sorted by Kind, not by Offset: visit tables in
	 * offset order by repeatedly taking the next one past `pos`. */
	for (;;) {
		uint64_t next = v->size, next_end = v->size;
		uint32_t i;
		for (i = 0; i < v->table_count; i++) {
			fmt_table t;
			read_entry(dir + (size_t)i * FMT_DIR_ENTRY_SIZE, i, &t);
			if (t.length && t.offset >= pos && t.offset < next) {
				next = t.offset;
				next_end = t.offset + t.length;
			}
		}
		if (!zero_range(v->base, pos, next, &bad))
			return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
			               "padding byte at 0x%llx is not zero", (unsigned long long)bad);
		if (next >= v->size)
			return 0;
		pos = next_end;
	}
}
