/* SPDX-License-Identifier: MIT */
/*
 * rel_bigindex.c - write one large synthetic index file (SPEC §4-§9) for
 * open_rss.sh: N symbols, each 0x40 bytes long at 0x1000 + 0x40 * i, named
 * "bigindex_function_NNNNNNNNNN", no DWARF, with the 20-byte build-id given.
 * The file is laid out by tests/unit/rd_synth.h, independent of the indexer,
 * so the expected answer for any address is known by construction: address
 * 0x1000 + 0x40 * i + k (k < 0x40) is in bigindex_function_i.
 *
 * With PARAMS (query_rss.sh), symbol i is instead the mangled C++ name of
 * bigindex_function_NNNNNNNNNN(ns::LLL...L, ...) taking PARAMS parameters of
 * one 100-letter type, all but the first a 3-byte substitution (S0_): some
 * 270 bytes in the index, over 5 KiB once demangled.
 *
 * Usage: rel_bigindex OUT N UUIDHEX40 [PARAMS]
 */
#define _GNU_SOURCE /* mkstemp in rd_synth.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rd_synth.h"

static int parse_uuid(const char *hex, uint8_t *out)
{
	if (strlen(hex) != 40)
		return -1;
	for (int i = 0; i < 20; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

int main(int argc, char **argv)
{
	synth_buf strs = { 0 }, segs = { 0 }, saddr = { 0 }, syms = { 0 };
	synth_table t[4];
	synth_hdr h;
	size_t len;
	char name[512];
	char ty[101];
	unsigned long params = 0;

	memset(&h, 0, sizeof h);
	if (argc < 4 || argc > 5 || parse_uuid(argv[3], h.uuid) ||
	    (argc == 5 && ((params = strtoul(argv[4], NULL, 0)) < 1 || params > 100))) {
		fprintf(stderr, "usage: rel_bigindex OUT N UUIDHEX40 [PARAMS (1-100)]\n");
		return 2;
	}
	memset(ty, 'L', 100);
	ty[100] = 0;
	unsigned long n = strtoul(argv[2], NULL, 0);
	synth_str(&strs, "");
	h.image_name = synth_str(&strs, "bigindex.so");
	synth_grow(&segs, FMT_SEG_SIZE); /* one segment: vaddr 0, everything */
	fmt_put64(segs.p + FMT_SEG_MEMSZ, 0x1000 + 0x40 * (uint64_t)n);
	for (unsigned long i = 0; i < n; i++) {
		uint8_t *r = synth_grow(&syms, FMT_SYM_SIZE);
		if (params) {
			int at = snprintf(name, sizeof name, "_Z28bigindex_function_%010luN2ns100%sE",
			                  i, ty);
			for (unsigned long p = 1; p < params; p++, at += 3)
				memcpy(name + at, "S0_", 4);
		} else {
			snprintf(name, sizeof name, "bigindex_function_%010lu", i);
		}
		fmt_put32(synth_grow(&saddr, 4), (uint32_t)(0x1000 + 0x40 * i));
		fmt_put64(r + FMT_SYM_LENGTH, 0x40);
		fmt_put32(r + FMT_SYM_NAME, synth_str(&strs, name));
	}
	t[0] = (synth_table){ FMT_T_STRINGS, 0, 0, strs.p, strs.n, strs.n };
	t[1] = (synth_table){ FMT_T_SEGMENTS, 0, FMT_SEG_SIZE, segs.p, segs.n, 1 };
	t[2] = (synth_table){ FMT_T_SYMBOL_ADDRS, 0, 4, saddr.p, saddr.n, n };
	t[3] = (synth_table){ FMT_T_SYMBOLS, 0, FMT_SYM_SIZE, syms.p, syms.n, n };
	h.address_size = 4;
	h.uuid_len = 20;
	uint8_t *f = synth_file(&h, t, 4, &len);
	FILE *fp = fopen(argv[1], "wb");
	if (!fp || fwrite(f, 1, len, fp) != len || fclose(fp) != 0) {
		perror(argv[1]);
		return 1;
	}
	free(f);
	free(strs.p);
	free(segs.p);
	free(saddr.p);
	free(syms.p);
	return 0;
}
