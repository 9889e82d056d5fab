/* SPDX-License-Identifier: MIT */
/*
 * fuzz_image_open.c - libFuzzer target for the index-file validator and the
 * resolver: arbitrary bytes are opened with symdb_image_open_file(), checked
 * with symdb_image_verify(), and resolved at addresses spread over the
 * image, in every address kind.  Every string a result returns is read, so
 * ASan sees any pointer outside the mapping (SPEC §11: a reader must never
 * read outside the file).
 *
 * Random bytes almost never carry a valid XXH3 header checksum, which open
 * always verifies; so the target first recomputes the header checksum and
 * every in-bounds table checksum of its copy (SPEC §5, §6), letting
 * mutations reach the directory checks, the table invariants and the
 * resolver.  Bit 0 of the last input byte turns this off, so the checksum
 * paths stay covered too.
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "fuzz_util.h"
#include "symdb.h"
#include "symdb_endian.h"
#include "symdb_format.h"

#define NADDR 48
#define NFRAMES 512

static void fix_checksums(uint8_t *p, size_t n)
{
	uint64_t dir, cnt, i;
	XXH3_state_t *st;

	if (n < FMT_HEADER_SIZE)
		return;
	dir = fmt_be64(p + FMT_H_DIR_OFFSET);
	cnt = fmt_be32(p + FMT_H_TABLE_COUNT);
	if (cnt > FMT_MAX_TABLES || dir > n || cnt * FMT_DIR_ENTRY_SIZE > n - dir)
		return;
	for (i = 0; i < cnt; i++) {
		uint8_t *d = p + dir + i * FMT_DIR_ENTRY_SIZE;
		uint64_t off = fmt_be64(d + FMT_D_OFFSET), len = fmt_be64(d + FMT_D_LENGTH);
		if (off <= n && len <= n - off)
			fmt_put64(d + FMT_D_CHECKSUM, XXH3_64bits(p + off, (size_t)len));
	}
	st = XXH3_createState();
	if (!st)
		return;
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, p, FMT_H_CHECKSUM);
	XXH3_64bits_update(st, p + dir, (size_t)(cnt * FMT_DIR_ENTRY_SIZE));
	fmt_put64(p + FMT_H_CHECKSUM, XXH3_64bits_digest(st));
	XXH3_freeState(st);
}

/* Read every string of every frame: an out-of-mapping pointer faults here. */
static size_t touch(const symdb_frame *f, const symdb_result *r)
{
	size_t s = r->sym_name ? strlen(r->sym_name) : 0;

	for (uint32_t i = 0; i < r->count; i++) {
		const symdb_frame *x = &f[r->first + i];
		s += x->name ? strlen(x->name) : 0;
		s += x->short_name ? strlen(x->short_name) : 0;
		s += x->file ? strlen(x->file) : 0;
		s += x->file_rel ? strlen(x->file_rel) : 0;
		s += x->decl_file ? strlen(x->decl_file) : 0;
		s += x->decl_file_rel ? strlen(x->decl_file_rel) : 0;
	}
	return s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Resolve all addrs (sorted), resuming when the frame buffer fills. */
static void resolve_all(const symdb_image *img, const uint64_t *addrs, size_t n)
{
	static __thread symdb_frame frames[NFRAMES];
	static __thread symdb_result res[NADDR];
	size_t done = 0;
	volatile size_t sink = 0;

	while (done < n) {
		ptrdiff_t k = symdb_resolve_batch(img, addrs + done, n - done, frames, NFRAMES,
		                                  sizeof(symdb_frame), res, sizeof(symdb_result));
		if (k <= 0)
			break;
		for (ptrdiff_t i = 0; i < k; i++)
			sink += touch(frames, &res[i]);
		done += (size_t)k;
	}
	(void)sink;
}

static void exercise(const symdb_image *img, const uint8_t *data, size_t size)
{
	symdb_image_info info;
	uint64_t addrs[NADDR], span;
	size_t i;
	char eb[256];

	info.sz = sizeof info;
	symdb_image_get_info(img, &info);
	(void)symdb_image_verify(img, EB_OPTS(eb, sizeof eb));
	/* Addresses: the base, the ends, and points spread over a span taken
	 * from the input, so the fuzzer can steer them. */
	span = size >= 8 ? fmt_be64(data + size - 8) : 0x10000;
	for (i = 0; i < NADDR - 3; i++)
		addrs[i] = info.base_address + (span / (NADDR - 3)) * i + (i & 3);
	addrs[NADDR - 3] = 0;
	addrs[NADDR - 2] = info.base_address - 1;
	addrs[NADDR - 1] = UINT64_MAX;
	qsort(addrs, NADDR, sizeof addrs[0], cmp_u64);
	resolve_all(img, addrs, NADDR);
	for (int kind = SYMDB_ADDR_OFFSET; kind <= SYMDB_ADDR_RUNTIME; kind++) {
		uint64_t t[NADDR];
		if (symdb_image_translate(img, (enum symdb_addr_kind)kind, 0x1000, addrs, t,
		                          NADDR) == 0) {
			qsort(t, NADDR, sizeof t[0], cmp_u64);
			resolve_all(img, t, NADDR);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = NULL);
	uint8_t *copy = malloc(size ? size : 1);
	symdb_image *img;
	char path[64], eb[256];
	int fd;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!size || !(data[size - 1] & 1))
		fix_checksums(copy, size);
	fd = fz_file(copy, size, path, sizeof path);
	free(copy);
	if (fd < 0)
		return 0;
	o.errbuf = eb;
	o.errbuf_sz = sizeof eb;
	if (symdb_image_open_file(path, &o, &img) == 0) {
		exercise(img, data, size);
		symdb_image_close(img);
	}
	close(fd);
	return 0;
}
