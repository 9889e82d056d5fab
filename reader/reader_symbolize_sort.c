/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize_sort.c - the address sort of symdb_symbolize().
 *
 * Stable LSD radix sort of (addr, idx) by addr over the bits that differ
 * between keys (usually 20-odd low bits of a library's text), in as few
 * passes of at most RADIX_BITS bits as cover them: two passes for a 4 MiB
 * image instead of three bytes.  Ties keep input order.  Sorted input (a
 * common case) costs one scan.  When the differing bits fit in 32, the
 * passes move 8-byte entries (those bits, then idx) instead of 16-byte
 * ones: half the bytes scattered at random.
 */
#include <string.h>

#include "reader_symbolize.h"

#define RADIX_BITS 11

/* Bucket counts count[0..nb) -> each bucket's first position. */
static void counts_to_starts(size_t *count, size_t nb)
{
	size_t sum = 0;
	for (size_t b = 0; b < nb; b++) {
		size_t c = count[b];
		count[b] = sum;
		sum += c;
	}
}

/* One stable counting pass: src[0..n) into dst by bits [shift, shift + width). */
static void radix_pass_packed(const uint64_t *src, uint64_t *dst, size_t n, unsigned shift,
                              unsigned width)
{
	uint64_t mask = ((uint64_t)1 << width) - 1;
	size_t count[(size_t)1 << RADIX_BITS];
	memset(count, 0, (mask + 1) * sizeof(count[0]));
	for (size_t i = 0; i < n; i++)
		count[(src[i] >> shift) & mask]++;
	counts_to_starts(count, (size_t)mask + 1);
	for (size_t i = 0; i < n; i++)
		dst[count[(src[i] >> shift) & mask]++] = src[i];
}

/* The same pass over whole entries, by bits [shift, shift + width) of addr. */
static void radix_pass_ent(const struct rd_sort_ent *src, struct rd_sort_ent *dst, size_t n,
                           unsigned shift, unsigned width)
{
	uint64_t mask = ((uint64_t)1 << width) - 1;
	size_t count[(size_t)1 << RADIX_BITS];
	memset(count, 0, (mask + 1) * sizeof(count[0]));
	for (size_t i = 0; i < n; i++)
		count[(src[i].addr >> shift) & mask]++;
	counts_to_starts(count, (size_t)mask + 1);
	for (size_t i = 0; i < n; i++)
		dst[count[(src[i].addr >> shift) & mask]++] = src[i];
}

/* The sort when every key differs only in bits [lo, lo + 32): those bits
 * and idx packed into packed[0..n), sorted through packed[n..2n), and
 * unpacked with the bits all keys share (those of all). */
static void sort_packed(struct rd_sort_ent *a, uint64_t *packed, size_t n, uint64_t all,
                        unsigned lo, unsigned passes, unsigned width)
{
	const uint64_t window = (uint64_t)UINT32_MAX << lo;
	uint64_t *src = packed, *dst = packed + n;
	for (size_t i = 0; i < n; i++)
		src[i] = ((a[i].addr & window) >> lo) << 32 | a[i].idx;
	for (unsigned p = 0; p < passes; p++) {
		radix_pass_packed(src, dst, n, 32 + p * width, width);
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	const uint64_t same = all & ~window;
	for (size_t i = 0; i < n; i++) {
		a[i].addr = same | (src[i] >> 32) << lo;
		a[i].idx = (uint32_t)src[i];
	}
}

void rd_sort_by_addr(struct rd_sort_ent *a, struct rd_sort_ent *tmp, uint64_t *packed, size_t n)
{
	uint64_t any = 0, all = UINT64_MAX;
	int sorted = 1;
	for (size_t i = 0; i < n; i++) {
		any |= a[i].addr;
		all &= a[i].addr;
		if (i && a[i].addr < a[i - 1].addr)
			sorted = 0;
	}
	if (sorted)
		return;
	uint64_t differ = any ^ all; /* non-zero: the input is not sorted */
	unsigned lo = (unsigned)__builtin_ctzll(differ), hi = 64 - (unsigned)__builtin_clzll(differ);
	unsigned passes = (hi - lo + RADIX_BITS - 1) / RADIX_BITS;
	unsigned width = (hi - lo + passes - 1) / passes;
	if (hi - lo <= 32) {
		sort_packed(a, packed, n, all, lo, passes, width);
		return;
	}
	struct rd_sort_ent *src = a, *dst = tmp;
	for (unsigned p = 0; p < passes; p++) {
		radix_pass_ent(src, dst, n, lo + p * width, width);
		struct rd_sort_ent *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}
