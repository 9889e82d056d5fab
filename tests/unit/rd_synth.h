/* SPDX-License-Identifier: MIT */
/*
 * rd_synth.h - a tiny, independent writer of synthetic index files for the
 * reader's unit tests (test_header.c, test_resolve.c).  It lays out exactly
 * what SPEC §4-§6 describe (header, directory right after it, 8-aligned
 * tables in the given order, checksums) without going through the indexer,
 * so the reader is tested against the specification rather than against the
 * writer it will meet in production.  Header-only; test code only.
 */
#ifndef SYMDB_TESTS_RD_SYNTH_H
#define SYMDB_TESTS_RD_SYNTH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "symdb_endian.h"
#include "symdb_format.h"

/* A growable byte buffer: tables and the string pool are built in these. */
typedef struct synth_buf {
	uint8_t *p;
	size_t n, cap;
} synth_buf;

static inline uint8_t *synth_grow(synth_buf *b, size_t add)
{
	if (b->n + add > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->n + add)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	memset(b->p + b->n, 0, add);
	b->n += add;
	return b->p + b->n - add;
}

/* Append a NUL-terminated string; returns its reference.  The first call
 * should add "" so that reference 0 is the empty string (SPEC §8). */
static inline uint32_t synth_str(synth_buf *pool, const char *s)
{
	size_t len = strlen(s) + 1, at = pool->n;
	memcpy(synth_grow(pool, len), s, len);
	return (uint32_t)at;
}

typedef struct synth_table {
	uint32_t kind;
	uint16_t flags, record_size;
	const uint8_t *data;
	uint64_t length, count;
} synth_table;

typedef struct synth_hdr {
	uint32_t flags;
	uint8_t address_size, uuid_len;
	uint8_t uuid[32];
	uint32_t image_name;
	uint64_t base_address;
	uint16_t major;       /* Version_Major; 0: 1 (the tables synthesized here are 1.x's) */
} synth_hdr;

/* Recompute the Header_Checksum after a test has edited header/directory. */
static inline void synth_reseal(uint8_t *f)
{
	uint32_t n = fmt_be32(f + FMT_H_TABLE_COUNT);
	uint64_t dir = fmt_be64(f + FMT_H_DIR_OFFSET);
	size_t dlen = (size_t)(n > 64 ? 64 : n) * FMT_DIR_ENTRY_SIZE;
	uint8_t tmp[120 + 64 * 40];

	memcpy(tmp, f, 120);
	memcpy(tmp + 120, f + dir, dlen);
	fmt_put64(f + FMT_H_CHECKSUM, XXH3_64bits(tmp, 120 + dlen));
}

/* Lay the file out in malloc'd memory; *len receives its size. */
static inline uint8_t *synth_file(const synth_hdr *h, const synth_table *t, unsigned nt,
                                  size_t *len)
{
	size_t dir = FMT_HEADER_SIZE, off = dir + (size_t)nt * FMT_DIR_ENTRY_SIZE, size;
	uint64_t offs[64];
	uint8_t *f;
	unsigned i;

	for (i = 0; i < nt; i++) {
		off = (off + 7) & ~(size_t)7;
		offs[i] = off;
		off += t[i].length;
	}
	size = off;
	f = calloc(1, size);
	if (!f)
		abort();
	memcpy(f, FMT_MAGIC, FMT_MAGIC_LEN);
	fmt_put16(f + FMT_H_VERSION_MAJOR, h->major ? h->major : FMT_V1_MAJOR);
	fmt_put16(f + FMT_H_VERSION_MINOR, h->major == FMT_VERSION_MAJOR ? FMT_VERSION_MINOR
	                                                                 : FMT_V1_MINOR);
	fmt_put32(f + FMT_H_HEADER_SIZE, FMT_HEADER_SIZE);
	fmt_put64(f + FMT_H_FILE_SIZE, size);
	fmt_put32(f + FMT_H_FLAGS, h->flags);
	f[FMT_H_OBJECT_FORMAT] = FMT_OBJ_ELF;
	f[FMT_H_ADDRESS_SIZE] = h->address_size;
	f[FMT_H_UUID_KIND] = FMT_UUID_GNU_BUILD_ID;
	f[FMT_H_UUID_LENGTH] = h->uuid_len;
	memcpy(f + FMT_H_UUID, h->uuid, h->uuid_len);
	fmt_put32(f + FMT_H_MACHINE, 62);
	f[FMT_H_OBJECT_CLASS] = 64;
	f[FMT_H_OBJECT_ENDIAN] = 1;
	fmt_put16(f + FMT_H_OBJECT_TYPE, 3);
	fmt_put32(f + FMT_H_IMAGE_NAME, h->image_name);
	fmt_put64(f + FMT_H_BASE_ADDRESS, h->base_address);
	fmt_put32(f + FMT_H_TABLE_COUNT, nt);
	fmt_put64(f + FMT_H_DIR_OFFSET, dir);
	for (i = 0; i < nt; i++) {
		uint8_t *e = f + dir + (size_t)i * FMT_DIR_ENTRY_SIZE;
		fmt_put32(e + FMT_D_KIND, t[i].kind);
		fmt_put16(e + FMT_D_FLAGS, t[i].flags);
		fmt_put16(e + FMT_D_RECORD_SIZE, t[i].record_size);
		fmt_put64(e + FMT_D_OFFSET, offs[i]);
		fmt_put64(e + FMT_D_LENGTH, t[i].length);
		fmt_put64(e + FMT_D_COUNT, t[i].count);
		if (t[i].length)
			memcpy(f + offs[i], t[i].data, t[i].length);
		fmt_put64(e + FMT_D_CHECKSUM, XXH3_64bits(f + offs[i], t[i].length));
	}
	synth_reseal(f);
	*len = size;
	return f;
}

/* Write bytes to a fresh temporary file; returns its path in buf. */
static inline int synth_write_tmp(const uint8_t *f, size_t len, char *buf, size_t bufsz)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(buf, bufsz, "%s/rd_synth_XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(buf);
	if (fd < 0)
		return -1;
	if (write(fd, f, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Put bytes at path the way the publisher does: written aside as
 * path.tmp, then renamed over, so a mapping of the old file keeps its
 * bytes.  Returns 0 or -1. */
static inline int synth_replace_file(const char *path, const uint8_t *f, size_t len)
{
	char tmp[4200];
	FILE *fp;
	int ok;

	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
		return -1;
	fp = fopen(tmp, "wb");
	if (!fp)
		return -1;
	ok = fwrite(f, 1, len, fp) == len;
	ok = fclose(fp) == 0 && ok;
	return ok && rename(tmp, path) == 0 ? 0 : -1;
}

/* A minimal valid image file for the 20-byte `uuid`: one symbol `sym` at
 * base + 0x1000 (size 0x40), image name "prog", no DWARF; malloc'ed. */
static inline uint8_t *synth_minimal_image(const uint8_t *uuid, const char *sym, size_t *len)
{
	synth_buf strs = { 0 }, segs = { 0 }, saddr = { 0 }, syms = { 0 };
	synth_table t[4];
	synth_hdr h;
	uint8_t *r, *f;
	uint32_t name;

	synth_str(&strs, "");
	name = synth_str(&strs, sym);
	synth_str(&strs, "prog");
	synth_grow(&segs, FMT_SEG_SIZE);
	fmt_put32(synth_grow(&saddr, 4), 0x1000);
	r = synth_grow(&syms, FMT_SYM_SIZE);
	fmt_put64(r + FMT_SYM_LENGTH, 0x40);
	fmt_put32(r + FMT_SYM_NAME, name);
	t[0] = (synth_table){ FMT_T_STRINGS, 0, 0, strs.p, strs.n, strs.n };
	t[1] = (synth_table){ FMT_T_SEGMENTS, 0, 40, segs.p, segs.n, 1 };
	t[2] = (synth_table){ FMT_T_SYMBOL_ADDRS, 0, 4, saddr.p, saddr.n, 1 };
	t[3] = (synth_table){ FMT_T_SYMBOLS, 0, 16, syms.p, syms.n, 1 };
	memset(&h, 0, sizeof h);
	h.address_size = 4;
	h.uuid_len = 20;
	memcpy(h.uuid, uuid, 20);
	h.image_name = (uint32_t)(strs.n - sizeof "prog");
	h.base_address = 0x400000;
	f = synth_file(&h, t, 4, len);
	free(strs.p); free(segs.p); free(saddr.p); free(syms.p);
	return f;
}

#endif /* SYMDB_TESTS_RD_SYNTH_H */
