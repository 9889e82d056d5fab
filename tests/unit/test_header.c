/* SPDX-License-Identifier: MIT */
/*
 * test_header.c - unit tests of format_header.c (SPEC §5, §6, §8, §9): a
 * hand-built valid file is accepted; every validation rule rejects the
 * damage it is there for, with the right code and a reason naming the field;
 * every prefix of a valid file and every single-bit flip of its header and
 * directory is rejected cleanly (run under ASan, "cleanly" includes "without
 * reading outside the buffer"); table checksums and padding are caught on
 * demand; and symdb_image_open_file() reports the path with the reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "format_header.h"
#include "rd_synth.h"
#include "symdb.h"
#include "symdb_endian.h"

/* What the tests can leave out or damage while building the file. */
enum { OMIT_NONE = 0 };

typedef struct built {
	uint8_t *f;
	size_t len;
} built;

static synth_buf strs, segs, saddr, syms, files, fns, iaddr, imap, nodes, laddr, rows, binfo;

/* Fill the table buffers once: small but complete, every kind present. */
static void fill_tables(void)
{
	uint8_t *r;

	synth_str(&strs, "");
	uint32_t name = synth_str(&strs, "libx.so");
	uint32_t f1 = synth_str(&strs, "/src/a.c");
	r = synth_grow(&segs, FMT_SEG_SIZE);
	fmt_put64(r + FMT_SEG_VADDR, 0x1000);
	fmt_put64(r + FMT_SEG_MEMSZ, 0x100);
	fmt_put64(r + FMT_SEG_FILEOFF, 0);
	fmt_put64(r + FMT_SEG_FILESZ, 0x100);
	fmt_put32(r + FMT_SEG_FLAGS, FMT_SEGF_R | FMT_SEGF_X);
	for (int i = 0; i < 2; i++) {
		fmt_put32(synth_grow(&saddr, 4), 0x1000 + 0x10 * (uint32_t)i);
		r = synth_grow(&syms, FMT_SYM_SIZE);
		fmt_put64(r + FMT_SYM_LENGTH, 0x10);
		fmt_put32(r + FMT_SYM_NAME, name);
		fmt_put32(r + FMT_SYM_FLAGS, FMT_SYMF_FUNC);
	}
	r = synth_grow(&files, FMT_FILE_SIZE);
	fmt_put32(r + FMT_FILE_PATH, f1);
	fmt_put32(r + FMT_FILE_RELATIVE, f1 + 1);
	fmt_put32(r + FMT_FILE_BASE, f1 + 5);
	r = synth_grow(&fns, FMT_FN_SIZE);
	fmt_put64(r + FMT_FN_DIE_OFFSET, 0x20);
	fmt_put32(r + FMT_FN_LINKAGE_NAME, name);
	fmt_put32(r + FMT_FN_NAME, name);
	fmt_put32(r + FMT_FN_DECL_FILE, 0);
	r = synth_grow(&nodes, FMT_NODE_SIZE);
	fmt_put32(r + FMT_NODE_PARENT, FMT_NONE);
	fmt_put32(r + FMT_NODE_CALL_FILE, FMT_NONE);
	fmt_put32(synth_grow(&iaddr, 4), 0x1000);
	fmt_put32(synth_grow(&imap, 4), 0);
	fmt_put32(synth_grow(&iaddr, 4), 0x1020);
	fmt_put32(synth_grow(&imap, 4), FMT_NONE);
	fmt_put32(synth_grow(&laddr, 4), 0x1000);
	r = synth_grow(&rows, FMT_ROW_SIZE);
	fmt_put32(r + FMT_ROW_LINE, 3);
	fmt_put32(synth_grow(&laddr, 4), 0x1020);
	fmt_put32(synth_grow(&rows, FMT_ROW_SIZE), FMT_NONE);
	fmt_put64(synth_grow(&binfo, 8), 1234);
}

#define TBL(k, rs, b) { (k), 0, (rs), (b).p, (b).n, (rs) ? (b).n / (rs) : (b).n }

/* The valid table list; `omit` drops one kind, `nt` receives the count. */
static unsigned table_list(synth_table *t, uint32_t omit)
{
	synth_table all[] = {
		TBL(FMT_T_STRINGS, 0, strs),       TBL(FMT_T_SEGMENTS, 40, segs),
		TBL(FMT_T_SYMBOL_ADDRS, 4, saddr), TBL(FMT_T_SYMBOLS, 16, syms),
		TBL(FMT_T_FILES, 12, files),       TBL(FMT_T_FUNCTIONS, 24, fns),
		TBL(FMT_T_INLINE_ADDRS, 4, iaddr), TBL(FMT_T_INLINE_MAP, 4, imap),
		TBL(FMT_T_INLINE_NODES, 40, nodes), TBL(FMT_T_LINE_ADDRS, 4, laddr),
		TBL(FMT_T_LINE_ROWS, 16, rows),    TBL(FMT_T_BUILD_INFO, 8, binfo),
	};
	unsigned i, n = 0;

	for (i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i].kind != omit)
			t[n++] = all[i];
	t[n - 1].flags = t[n - 1].kind == FMT_T_BUILD_INFO ? FMT_TABLE_OPTIONAL : 0;
	return n;
}

static synth_hdr default_hdr(void)
{
	synth_hdr h;

	memset(&h, 0, sizeof h);
	h.flags = FMT_FLAG_HAS_DWARF;
	h.address_size = 4;
	h.uuid_len = 20;
	memset(h.uuid, 0xab, 20);
	h.image_name = 1;
	h.base_address = 0;
	return h;
}

static built build_omit(uint32_t omit)
{
	synth_table t[16];
	synth_hdr h = default_hdr();
	unsigned n = table_list(t, omit);
	built b;

	b.f = synth_file(&h, t, n, &b.len);
	return b;
}

/* Parse a copy in a buffer of exactly `len` bytes, so ASan sees any
 * over-read.  Returns the code; errbuf receives the reason. */
static int parse_exact(const uint8_t *f, size_t len, char *eb, size_t ebsz)
{
	uint8_t *copy = malloc(len ? len : 1);
	fmt_view v;
	int rc;

	memcpy(copy, f, len);
	eb[0] = 0;
	rc = fmt_view_parse(copy, len, &v, eb, ebsz);
	free(copy);
	return rc;
}

/* Damage one field via fn, reseal the header checksum, expect rc and a
 * reason containing `want`. */
static void expect(const char *what, built b, int want_rc, const char *want)
{
	char eb[256];
	int rc = parse_exact(b.f, b.len, eb, sizeof eb);

	if (rc != want_rc || (want && !strstr(eb, want))) {
		fprintf(stderr, "%s: rc %d (want %d), reason \"%s\" (want \"%s\")\n", what, rc,
		        want_rc, eb, want ? want : "");
		check_failures++;
	}
	free(b.f);
}

static uint8_t *dir_entry(built b, unsigned i)
{
	return b.f + fmt_be64(b.f + FMT_H_DIR_OFFSET) + (size_t)i * FMT_DIR_ENTRY_SIZE;
}

static void test_valid(void)
{
	built b = build_omit(OMIT_NONE);
	char eb[256];
	fmt_view v;

	CHECK(fmt_view_parse(b.f, b.len, &v, eb, sizeof eb) == 0);
	CHECK(v.has_dwarf && v.address_size == 4 && v.uuid_len == 20);
	CHECK(v.t[FMT_T_SYMBOLS].count == 2 && v.t[FMT_T_STRINGS].length == strs.n);
	CHECK(fmt_view_check_sums(&v, eb, sizeof eb) == 0);
	CHECK(fmt_view_check_padding(&v, eb, sizeof eb) == 0);
	CHECK(strcmp(fmt_table_name(FMT_T_LINE_ROWS), "LINE_ROWS") == 0);
	free(b.f);
	/* Without DWARF tables (all seven absent): valid, has_dwarf = 0. */
	{
		synth_table t[16], keep[16];
		synth_hdr h = default_hdr();
		unsigned n = table_list(t, 0), i, k = 0;
		for (i = 0; i < n; i++)
			if (t[i].kind < FMT_T_FILES || t[i].kind > FMT_T_LINE_ROWS)
				keep[k++] = t[i];
		h.flags = 0;
		b.f = synth_file(&h, keep, k, &b.len);
		CHECK(fmt_view_parse(b.f, b.len, &v, eb, sizeof eb) == 0 && !v.has_dwarf);
		free(b.f);
	}
}

static void test_header_rules(void)
{
	built b;

	b = build_omit(0); b.f[0] = 0x7f;
	expect("magic", b, SYMDB_E_FORMAT, "magic");
	b = build_omit(0); fmt_put16(b.f + FMT_H_VERSION_MAJOR, FMT_VERSION_MAJOR + 1);
	synth_reseal(b.f);
	expect("major", b, SYMDB_E_VERSION, "Version_Major");
	b = build_omit(0); fmt_put16(b.f + FMT_H_VERSION_MAJOR, 0); synth_reseal(b.f);
	expect("major 0", b, SYMDB_E_VERSION, "Version_Major");
	/* 1.x tables under a 2.x header: the packed kinds' Record_Size is 0 */
	b = build_omit(0); fmt_put16(b.f + FMT_H_VERSION_MAJOR, FMT_VERSION_MAJOR);
	synth_reseal(b.f);
	expect("1.x tables as 2.0", b, SYMDB_E_CORRUPT, "Record_Size");
	b = build_omit(0); fmt_put16(b.f + FMT_H_VERSION_MINOR, 7); synth_reseal(b.f);
	expect("minor", b, 0, NULL);
	b = build_omit(0); fmt_put32(b.f + FMT_H_HEADER_SIZE, 64); synth_reseal(b.f);
	expect("header_size small", b, SYMDB_E_CORRUPT, "Header_Size");
	b = build_omit(0); fmt_put32(b.f + FMT_H_HEADER_SIZE, 136); synth_reseal(b.f);
	expect("header_size over dir", b, SYMDB_E_CORRUPT, "Table_Directory_Offset");
	b = build_omit(0); fmt_put64(b.f + FMT_H_FILE_SIZE, b.len + 8); synth_reseal(b.f);
	expect("file_size", b, SYMDB_E_CORRUPT, "File_Size");
	b = build_omit(0); fmt_put32(b.f + FMT_H_FLAGS, 0x8 | FMT_FLAG_HAS_DWARF); synth_reseal(b.f);
	expect("flags", b, SYMDB_E_CORRUPT, "Flags");
	b = build_omit(0); b.f[FMT_H_OBJECT_FORMAT] = 9; synth_reseal(b.f);
	expect("object_format", b, SYMDB_E_CORRUPT, "Object_Format");
	b = build_omit(0); b.f[FMT_H_ADDRESS_SIZE] = 5; synth_reseal(b.f);
	expect("address_size", b, SYMDB_E_CORRUPT, "Address_Size");
	b = build_omit(0); b.f[FMT_H_UUID_KIND] = 0; synth_reseal(b.f);
	expect("uuid_kind", b, SYMDB_E_CORRUPT, "UUID_Kind");
	b = build_omit(0); b.f[FMT_H_UUID_LENGTH] = 0; synth_reseal(b.f);
	expect("uuid_len 0", b, SYMDB_E_CORRUPT, "UUID_Length");
	b = build_omit(0); b.f[FMT_H_UUID_LENGTH] = 33; synth_reseal(b.f);
	expect("uuid_len 33", b, SYMDB_E_CORRUPT, "UUID_Length");
	b = build_omit(0); b.f[FMT_H_UUID + 25] = 1; synth_reseal(b.f);
	expect("uuid padding", b, SYMDB_E_CORRUPT, "UUID byte 25");
	b = build_omit(0); b.f[FMT_H_RESERVED0 + 3] = 1; synth_reseal(b.f);
	expect("reserved0", b, SYMDB_E_CORRUPT, "Reserved_0");
	b = build_omit(0); b.f[FMT_H_RESERVED1 + 15] = 1; synth_reseal(b.f);
	expect("reserved1", b, SYMDB_E_CORRUPT, "Reserved_1");
	b = build_omit(0); fmt_put32(b.f + FMT_H_TABLE_COUNT, 65); /* checked before the checksum */
	expect("table_count", b, SYMDB_E_CORRUPT, "Table_Count");
	b = build_omit(0); fmt_put64(b.f + FMT_H_DIR_OFFSET, 132); /* checked before the checksum */
	expect("dir misaligned", b, SYMDB_E_CORRUPT, "Table_Directory_Offset");
	b = build_omit(0); fmt_put64(b.f + FMT_H_DIR_OFFSET, b.len - 8); /* checked before the checksum */
	expect("dir past EOF", b, SYMDB_E_CORRUPT, "Table_Directory_Offset");
	b = build_omit(0); fmt_put32(b.f + FMT_H_IMAGE_NAME, (uint32_t)strs.n); synth_reseal(b.f);
	expect("image_name", b, SYMDB_E_CORRUPT, "Image_Name");
	b = build_omit(0); b.f[FMT_H_CHECKSUM] ^= 1;
	expect("checksum", b, SYMDB_E_CHECKSUM, "Header_Checksum");
}

/* Directory entry i is the table of kind i + 1 in the default list. */
static void test_directory_rules(void)
{
	built b;
	uint8_t *e;

	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_LENGTH, b.len); synth_reseal(b.f);
	expect("past EOF", b, SYMDB_E_CORRUPT, "table 4 (SYMBOLS) ends past EOF");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_OFFSET, UINT64_MAX - 7); synth_reseal(b.f);
	expect("offset wraps", b, SYMDB_E_CORRUPT, "ends past EOF");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_OFFSET, fmt_be64(e + FMT_D_OFFSET) + 4); synth_reseal(b.f);
	expect("misaligned", b, SYMDB_E_CORRUPT, "not 8-aligned");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_OFFSET, 128); synth_reseal(b.f);
	expect("inside dir", b, SYMDB_E_CORRUPT, "inside the header or directory");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_OFFSET, fmt_be64(dir_entry(b, 2) + FMT_D_OFFSET)); synth_reseal(b.f);
	expect("overlap", b, SYMDB_E_CORRUPT, "overlaps");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put16(e + FMT_D_RECORD_SIZE, 12); synth_reseal(b.f);
	expect("record size", b, SYMDB_E_CORRUPT, "Record_Size 12, want 16");
	b = build_omit(0); e = dir_entry(b, 2);
	fmt_put16(e + FMT_D_RECORD_SIZE, 8); synth_reseal(b.f);
	expect("addr record size", b, SYMDB_E_CORRUPT, "Record_Size 8, want 4");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_COUNT, 3); synth_reseal(b.f);
	expect("length != count", b, SYMDB_E_CORRUPT, "Length");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_COUNT, (UINT64_MAX / 16) + 2); synth_reseal(b.f);
	expect("count overflow", b, SYMDB_E_CORRUPT, "Length");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put16(e + FMT_D_FLAGS, 2); synth_reseal(b.f);
	expect("table flags", b, SYMDB_E_CORRUPT, "Flags");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put32(e + FMT_D_KIND, 3); synth_reseal(b.f);
	expect("duplicate kind", b, SYMDB_E_CORRUPT, "Kind 3 not above");
	b = build_omit(0); e = dir_entry(b, 11);
	fmt_put32(e + FMT_D_KIND, 99); synth_reseal(b.f);
	expect("unknown optional kind", b, 0, NULL);
	b = build_omit(0); e = dir_entry(b, 11);
	fmt_put32(e + FMT_D_KIND, 99); fmt_put16(e + FMT_D_FLAGS, 0); synth_reseal(b.f);
	expect("unknown required kind", b, SYMDB_E_VERSION, "unknown required kind");
	b = build_omit(0); e = dir_entry(b, 3);
	fmt_put64(e + FMT_D_COUNT, 1); fmt_put64(e + FMT_D_LENGTH, 16); synth_reseal(b.f);
	expect("parallel", b, SYMDB_E_CORRUPT, "Count 2 != table 4 (SYMBOLS) Count 1");
	/* Strings: last byte not NUL (shrink by one so it ends inside "/src/a.c"). */
	b = build_omit(0); e = dir_entry(b, 0);
	fmt_put64(e + FMT_D_LENGTH, strs.n - 1); fmt_put64(e + FMT_D_COUNT, strs.n - 1);
	synth_reseal(b.f);
	expect("strings end", b, SYMDB_E_CORRUPT, "NUL");
	b = build_omit(0); e = dir_entry(b, 0);
	fmt_put64(e + FMT_D_LENGTH, 0); fmt_put64(e + FMT_D_COUNT, 0); synth_reseal(b.f);
	expect("strings empty", b, SYMDB_E_CORRUPT, "NUL");
	expect("missing SEGMENTS", build_omit(FMT_T_SEGMENTS), SYMDB_E_CORRUPT,
	       "required table 2 (SEGMENTS) missing");
	expect("missing STRINGS", build_omit(FMT_T_STRINGS), SYMDB_E_CORRUPT, "STRINGS");
	expect("partial DWARF", build_omit(FMT_T_FILES), SYMDB_E_CORRUPT, "only 6 of the 7");
	expect("no BUILD_INFO", build_omit(FMT_T_BUILD_INFO), 0, NULL);
}

/* Every prefix is rejected; every bit flip in header + directory too. */
static void test_sweeps(void)
{
	built b = build_omit(0);
	size_t dir_end = FMT_HEADER_SIZE + 12 * FMT_DIR_ENTRY_SIZE, i, bad = 0;
	char eb[256];
	int bit;

	for (i = 0; i < b.len; i++)
		if (parse_exact(b.f, i, eb, sizeof eb) == 0)
			bad++;
	CHECK(bad == 0);
	for (i = 0; i < dir_end; i++)
		for (bit = 0; bit < 8; bit++) {
			b.f[i] ^= (uint8_t)(1 << bit);
			if (parse_exact(b.f, b.len, eb, sizeof eb) == 0) {
				fprintf(stderr, "flip byte %zu bit %d accepted\n", i, bit);
				bad++;
			}
			b.f[i] ^= (uint8_t)(1 << bit);
		}
	CHECK(bad == 0);
	CHECK(parse_exact(b.f, b.len, eb, sizeof eb) == 0);
	free(b.f);
}

static void test_sums_and_padding(void)
{
	built b = build_omit(0);
	char eb[256];
	fmt_view v;
	uint64_t off;

	/* A flipped table byte passes open-time validation but not the sums. */
	off = fmt_be64(dir_entry(b, 3) + FMT_D_OFFSET);
	b.f[off + 3] ^= 0x40;
	CHECK(fmt_view_parse(b.f, b.len, &v, eb, sizeof eb) == 0);
	CHECK(fmt_view_check_sums(&v, eb, sizeof eb) == SYMDB_E_CHECKSUM);
	CHECK(strstr(eb, "table 4 (SYMBOLS) Checksum") != NULL);
	b.f[off + 3] ^= 0x40;
	/* Padding after the 12-byte SYMBOL_ADDRS... find a gap: FILES is 12
	 * bytes, so 4 bytes of padding follow it. */
	off = fmt_be64(dir_entry(b, 4) + FMT_D_OFFSET) + 12;
	b.f[off] = 1;
	CHECK(fmt_view_parse(b.f, b.len, &v, eb, sizeof eb) == 0);
	CHECK(fmt_view_check_padding(&v, eb, sizeof eb) == SYMDB_E_CORRUPT);
	CHECK(strstr(eb, "padding") != NULL);
	free(b.f);
}

/* symdb_image_open_file(): the reason names the path; VERIFY_CHECKSUMS. */
static void test_open_file(void)
{
	built b = build_omit(0);
	char path[512], eb[512];
	symdb_image *img = NULL;
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
	SYMDB_OPTS(symdb_open_opts, ov, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS, .errbuf = eb,
	           .errbuf_sz = sizeof eb);
	uint64_t off;

	CHECK(synth_write_tmp(b.f, b.len, path, sizeof path) == 0);
	CHECK(symdb_image_open_file(path, &ov, &img) == 0);
	if (img) {
		symdb_image_info info;
		info.sz = sizeof info;
		symdb_image_get_info(img, &info);
		CHECK(info.nsymbols == 2 && info.nfiles == 1 && info.nbuild_info == 1);
		CHECK(info.build_info[0] == 1234);
		CHECK(strcmp(info.image_name, "libx.so") == 0);
		CHECK(symdb_image_verify(img, EB_OPTS(eb, sizeof eb)) == 0);
	}
	symdb_image_close(img);
	unlink(path);
	/* Truncated by one byte. */
	CHECK(synth_write_tmp(b.f, b.len - 1, path, sizeof path) == 0);
	CHECK(symdb_image_open_file(path, &o, &img) == SYMDB_E_CORRUPT && !img);
	CHECK(strstr(eb, path) != NULL && strstr(eb, "File_Size") != NULL);
	unlink(path);
	/* Damaged table: accepted without VERIFY_CHECKSUMS, rejected with. */
	off = fmt_be64(dir_entry(b, 0) + FMT_D_OFFSET);
	b.f[off + 2] ^= 1;
	CHECK(synth_write_tmp(b.f, b.len, path, sizeof path) == 0);
	CHECK(symdb_image_open_file(path, &o, &img) == 0);
	if (img)
		CHECK(symdb_image_verify(img, EB_OPTS(eb, sizeof eb)) == SYMDB_E_CHECKSUM);
	symdb_image_close(img);
	CHECK(symdb_image_open_file(path, &ov, &img) == SYMDB_E_CHECKSUM);
	unlink(path);
	CHECK(symdb_image_open_file("/nonexistent/x.symdb", &o, &img) == -ENOENT);
	CHECK(strstr(eb, "/nonexistent/x.symdb") != NULL);
	free(b.f);
}

static void test_misc_api(void)
{
	symdb_uuid id;
	char hex[65];

	CHECK(strncmp(symdb_strerror(SYMDB_E_CORRUPT), "SYMDB_E_CORRUPT", 15) == 0);
	CHECK(strcmp(symdb_strerror(-ENOENT), "No such file or directory") == 0);
	CHECK(symdb_strerror(-3999) != NULL && symdb_strerror(12345) != NULL);
	/* Every errno the C library names is named alike (the C locale's
	 * strerror is the oracle): the fetcher's ECONNREFUSED, /proc's EPROTO
	 * ... were "Unknown system error". */
	for (int e = 1; e < 134; e++) {
		const char *want = strerror(e);
		if (strncmp(want, "Unknown error", 13) != 0 && strcmp(symdb_strerror(-e), want) != 0) {
			fprintf(stderr, "symdb_strerror(-%d) = \"%s\", strerror: \"%s\"\n", e,
			        symdb_strerror(-e), want);
			CHECK(0);
		}
	}
	CHECK(symdb_version_number() == SYMDB_VERSION_NUMBER);
	CHECK(symdb_uuid_parse("0A1b-2c3D", &id) == 0 && id.len == 4 && id.bytes[0] == 0x0a);
	symdb_uuid_format(&id, hex);
	CHECK(strcmp(hex, "0a1b2c3d") == 0);
	CHECK(symdb_uuid_parse("abc", &id) == SYMDB_E_INVAL);
	CHECK(symdb_uuid_parse("", &id) == SYMDB_E_INVAL);
	CHECK(symdb_uuid_parse("zz", &id) == SYMDB_E_INVAL);
}

/* fmt_err: ordinary paths give snprintf's text; a path near PATH_MAX,
 * given whole or in pieces ("%s/%.*s: "), is shortened in the middle and the
 * reason kept whole. */
static void test_fmt_err(void)
{
	static char d1[4001], d2[4001];
	char eb[256], want[256];

	memset(d1, 'a', sizeof d1 - 1);
	memset(d2, 'b', sizeof d2 - 1);
	d1[0] = '/', d2[sizeof d2 - 2] = 'Z';
	CHECK(fmt_err(eb, sizeof eb, -5, "%s: not a %s", "/db/x", "file") == -5);
	CHECK(strcmp(eb, "/db/x: not a file") == 0);
	fmt_err(eb, sizeof eb, 0, "%s/%.*s: %s %u", "/db", 3, "images/x", "why", 7u);
	snprintf(want, sizeof want, "%s/%.*s: %s %u", "/db", 3, "images/x", "why", 7u);
	CHECK(strcmp(eb, want) == 0);
	fmt_err(eb, sizeof eb, 0, "%s%s: cannot remove: %s", "/db/f", ".lz4", "gone");
	CHECK(strcmp(eb, "/db/f.lz4: cannot remove: gone") == 0);
	fmt_err(eb, sizeof eb, 0, "table %s: no data", "SYMBOLS");
	CHECK(strcmp(eb, "table SYMBOLS: no data") == 0);

	fmt_err(eb, sizeof eb, 0, "%s/catalog: %s", d1, "Permission denied");
	CHECK(strncmp(eb, "/aaa", 4) == 0 && strstr(eb, "...") != NULL);
	CHECK(strlen(eb) == sizeof eb - 1);
	CHECK(strstr(eb, "aaa/catalog: Permission denied") != NULL);
	fmt_err(eb, sizeof eb, 0, "%s/%s: path too long", d1, d2);
	CHECK(strstr(eb, "bbbZ: path too long") != NULL && strncmp(eb, "/aaa", 4) == 0);
	fmt_err(eb, sizeof eb, 0, "%s/%.*s: %s %u", d1, 2, "xyz", "why", 7u);
	CHECK(strstr(eb, "aaa/xy: why 7") != NULL);
}

int main(void)
{
	fill_tables();
	test_valid();
	test_header_rules();
	test_directory_rules();
	test_sweeps();
	test_sums_and_padding();
	test_open_file();
	test_misc_api();
	test_fmt_err();
	return check_exit();
}
