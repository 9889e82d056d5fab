/* SPDX-License-Identifier: MIT */
/*
 * test_bundle.c - unit tests of format_bundle.c (SPEC §12.7): records
 * encoded and decoded back at every split of the input; every prefix of a
 * bundle rejected as truncated; lying bundles (bad magic, a UUID longer than
 * 32 bytes, a File_Size above 16 GiB, more than 65536 images, bytes after
 * the end record, an LZ4 frame without checksums) rejected with a one-line
 * reason; rd_bundle_unpack() on bytes that are no LZ4 frame, leaving no file
 * behind; the options of symdb_export() and symdb_import() checked both ways.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "format_bundle.h"
#include "reader_bundle.h"
#include "symdb_build.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* A bundle of three images: sizes 0, 5 and 300; UUIDs of 16, 20, 32 bytes. */
static void sample(struct buf *b)
{
	static const size_t ulen[3] = { 16, 20, 32 }, size[3] = { 0, 5, 300 };
	uint8_t tmp[FMT_BUNDLE_RECORD_MAX], u[32], data[300];

	put(b, tmp, fmt_bundle_put_magic(tmp));
	for (int i = 0; i < 3; i++) {
		for (size_t k = 0; k < sizeof u; k++)
			u[k] = (uint8_t)(i * 40 + k);
		for (size_t k = 0; k < sizeof data; k++)
			data[k] = (uint8_t)(k * 7 + (size_t)i);
		size_t n = fmt_bundle_put_record(tmp, u, ulen[i], size[i]);
		CHECK(n == 1 + ulen[i] + 8);
		put(b, tmp, n);
		put(b, data, size[i]);
	}
	put(b, tmp, fmt_bundle_put_end(tmp));
}

/* Decodes p[0..n) in pieces of `step` bytes; re-encodes what it sees into
 * out.  Returns 0, or the error of the decoder (reason in d->why). */
static int decode_all(const uint8_t *p, size_t n, size_t step, struct buf *out,
                      fmt_bundle_dec *d)
{
	uint8_t tmp[FMT_BUNDLE_RECORD_MAX];
	size_t off = 0;

	fmt_bundle_dec_init(d);
	put(out, tmp, fmt_bundle_put_magic(tmp));
	while (off <= n) {
		size_t k = n - off < step ? n - off : step;
		const uint8_t *q = p + off;
		off += k;
		for (;;) {
			const uint8_t *data;
			size_t used, len;
			int ev = fmt_bundle_decode(d, q, k, &used, &data, &len);
			if (ev < 0)
				return ev;
			q += used;
			k -= used;
			if (ev == FMT_BUNDLE_MORE)
				break;
			if (ev == FMT_BUNDLE_IMAGE)
				put(out, tmp, fmt_bundle_put_record(tmp, d->uuid, d->uuid_len,
				                                    d->file_size));
			else if (ev == FMT_BUNDLE_DATA)
				put(out, data, len);
			else if (ev == FMT_BUNDLE_END)
				put(out, tmp, fmt_bundle_put_end(tmp));
		}
		if (off == n)
			break;
	}
	return fmt_bundle_finish(d);
}

static int one_line(const char *why)
{
	return why[0] && !strchr(why, '\n');
}

static void test_roundtrip(void)
{
	struct buf b = { 0 };
	fmt_bundle_dec d;

	sample(&b);
	CHECK(memcmp(b.p, "SYMDBBN1", 8) == 0);
	CHECK(b.p[8] == 16 && b.p[b.n - 1] == 0);
	for (size_t step = 1; step <= b.n; step++) {
		struct buf o = { 0 };
		int rc = decode_all(b.p, b.n, step, &o, &d);
		CHECK(rc == 0);
		CHECK(o.n == b.n && memcmp(o.p, b.p, b.n) == 0);
		CHECK(d.nimages == 3);
		free(o.p);
	}
	/* Every strict prefix is a truncated bundle, never an accepted one. */
	for (size_t n = 0; n < b.n; n++) {
		struct buf o = { 0 };
		int rc = decode_all(b.p, n, 7, &o, &d);
		CHECK(rc == SYMDB_E_CORRUPT);
		CHECK(n < 8 || strcmp(d.why, "truncated (no end record)") == 0);
		free(o.p);
	}
	CHECK(fmt_bundle_put_record((uint8_t[64]){ 0 }, (const uint8_t *)"x", 0, 1) == 0);
	CHECK(fmt_bundle_put_record((uint8_t[64]){ 0 }, b.p, 33, 1) == 0);
	free(b.p);
}

/* Decodes a hand-made bundle; expects rejection with `why`. */
static void expect_reject(const uint8_t *p, size_t n, const char *why)
{
	struct buf o = { 0 };
	fmt_bundle_dec d;
	int rc = decode_all(p, n, n ? n : 1, &o, &d);

	CHECK(rc == SYMDB_E_CORRUPT);
	CHECK(one_line(d.why));
	if (strcmp(d.why, why) != 0) {
		fprintf(stderr, "expected '%s', got '%s'\n", why, d.why);
		CHECK(!"reason");
	}
	free(o.p);
}

static void test_lies(void)
{
	uint8_t b[64], u[40] = { 0 };
	size_t n;

	memcpy(b, "SYMDBBN2", 8);
	b[8] = 0;
	expect_reject(b, 9, "not a symdb bundle (bad magic)");

	n = fmt_bundle_put_magic(b);
	b[n++] = 33; /* UUID_Length past 32 */
	memset(b + n, 1, 33 + 8);
	expect_reject(b, n + 33 + 8 + 1, "UUID longer than 32 bytes");

	n = fmt_bundle_put_magic(b);
	n += fmt_bundle_put_record(b + n, u, 16, (16ull << 30) + 1);
	expect_reject(b, n, "an image declares more than 16 GiB");
	n = fmt_bundle_put_magic(b);
	n += fmt_bundle_put_record(b + n, u, 16, UINT64_MAX);
	expect_reject(b, n, "an image declares more than 16 GiB");

	n = fmt_bundle_put_magic(b);
	n += fmt_bundle_put_end(b + n);
	b[n++] = 0; /* a second end record */
	expect_reject(b, n, "data after the end record");

	/* A record that declares more bytes than follow. */
	n = fmt_bundle_put_magic(b);
	n += fmt_bundle_put_record(b + n, u, 16, 1000);
	memset(b + n, 7, 10);
	expect_reject(b, n + 10, "truncated (no end record)");

	/* 65536 images are allowed, one more is not. */
	struct buf big = { 0 };
	uint8_t tmp[FMT_BUNDLE_RECORD_MAX];
	put(&big, tmp, fmt_bundle_put_magic(tmp));
	for (unsigned i = 0; i < FMT_BUNDLE_MAX_IMAGES; i++)
		put(&big, tmp, fmt_bundle_put_record(tmp, u, 1, 0));
	size_t at = big.n;
	put(&big, tmp, fmt_bundle_put_end(tmp));
	struct buf o = { 0 };
	fmt_bundle_dec d;
	CHECK(decode_all(big.p, big.n, big.n, &o, &d) == 0 && d.nimages == FMT_BUNDLE_MAX_IMAGES);
	free(o.p);
	big.n = at;
	put(&big, tmp, fmt_bundle_put_record(tmp, u, 1, 0));
	put(&big, tmp, fmt_bundle_put_end(tmp));
	expect_reject(big.p, big.n, "more than 65536 images");
	free(big.p);

	/* The LZ4 frame's FLG byte must set both checksums. */
	char why[128] = "";
	uint8_t frame[7] = { 0x04, 0x22, 0x4d, 0x18, 0x64 | 0x10, 0x70, 0 };
	CHECK(fmt_bundle_check_frame(frame, sizeof frame, why, sizeof why) == 0);
	frame[4] = 0x64; /* content checksum only */
	CHECK(fmt_bundle_check_frame(frame, sizeof frame, why, sizeof why) == SYMDB_E_CORRUPT);
	CHECK(one_line(why));
	frame[4] = 0x50; /* block checksum only */
	CHECK(fmt_bundle_check_frame(frame, sizeof frame, why, sizeof why) == SYMDB_E_CORRUPT);
	CHECK(fmt_bundle_check_frame(frame, 4, why, sizeof why) == SYMDB_E_CORRUPT);
}

/* rd_bundle_unpack() on a pipe holding `bytes`: the return code, the
 * reason in why; no file may be left in dir. */
static int unpack_bytes(const char *bytes, size_t n, const char *dir, char *why, size_t why_sz)
{
	int p[2];
	rd_bundle *b = NULL;

	CHECK(pipe(p) == 0);
	CHECK(write(p[1], bytes, n) == (ssize_t)n);
	close(p[1]);
	int rc = rd_bundle_unpack(p[0], dir, &b, why, why_sz);
	close(p[0]);
	CHECK(rc < 0 ? b == NULL : b != NULL);
	CHECK(rc < 0 || rd_bundle_count(b) == 0);
	rd_bundle_free(b);
	CHECK(check_dir_entries(dir) == 0);
	return rc;
}

static void test_unpack(void)
{
	const char *t = getenv("TMPDIR");
	char dir[4096], why[256];

	snprintf(dir, sizeof dir, "%s/symdb-bundle-XXXXXX", t && *t ? t : "/tmp");
	CHECK(mkdtemp(dir) != NULL);
	CHECK(unpack_bytes("", 0, dir, why, sizeof why) == SYMDB_E_CORRUPT);
	CHECK(strcmp(why, "truncated (the LZ4 frame does not end)") == 0);
	CHECK(unpack_bytes("SYMDBBN1", 8, dir, why, sizeof why) == SYMDB_E_CORRUPT);
	CHECK(one_line(why) && strncmp(why, "LZ4 frame: ", 11) == 0);
	CHECK(rd_bundle_count(NULL) == 0);
	rmdir(dir);
}

/* The public calls' options: a smaller struct is accepted, unknown
 * non-zero bytes or flags are not (checked before anything else). */
static void test_opts(void)
{
	struct { symdb_export_opts o; uint64_t extra; } big;
	char why[256] = "";

	memset(&big, 0, sizeof big);
	big.o.sz = sizeof big;
	big.extra = 1;
	CHECK(symdb_export(NULL, NULL, 0, 1, &big.o) == SYMDB_E_INVAL);
	big.extra = 0;
	big.o.flags = 1;
	big.o.errbuf = why;
	big.o.errbuf_sz = sizeof why;
	CHECK(symdb_export(NULL, NULL, 0, 1, &big.o) == SYMDB_E_INVAL);
	CHECK(one_line(why) && strstr(why, "flags"));
	symdb_export_opts small = { .sz = offsetof(symdb_export_opts, errbuf_sz) + sizeof(size_t),
	                            .errbuf = why, .errbuf_sz = sizeof why };
	CHECK(symdb_export(NULL, NULL, 0, 1, &small) == SYMDB_E_INVAL);
	CHECK(strstr(why, "invalid database handle") != NULL);
	small.sz = 1;
	CHECK(symdb_export(NULL, NULL, 0, 1, &small) == SYMDB_E_INVAL);

	SYMDB_OPTS(symdb_import_opts, io, .flags = 0x100, .errbuf = why, .errbuf_sz = sizeof why);
	CHECK(symdb_import(NULL, 0, &io) == SYMDB_E_INVAL && strstr(why, "flags"));
	io.flags = SYMDB_BUILD_FORCE;
	CHECK(symdb_import(NULL, 0, &io) == SYMDB_E_INVAL && strstr(why, "invalid builder"));
}

int main(void)
{
	test_roundtrip();
	test_lies();
	test_unpack();
	test_opts();
	return check_exit();
}
