/* SPDX-License-Identifier: MIT */
/*
 * test_line_order.c - ix_line_parse picks, for an address covered by
 * several line sequences of one table, the sequence LLVM 14 picks: the first
 * one above the address after std::sort by end address (not stable), as
 * this platform's C++ library sorts (line_order_ref.cpp).  Line programs
 * are synthesized (DWARF 4, one row per sequence, the row's line = the
 * sequence's position + 1), with many ties: random sizes from 1 to 3000
 * sequences, all tied, sorted and reversed inputs, and McIlroy's adversary,
 * which pushes the introsort into its heapsort fallback.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ix_dwarf_internal.h"

void line_order_ref(const uint64_t *hi, size_t n, size_t *idx);
void line_order_killer(size_t n, uint64_t *hi);

static uint64_t rng_state = 20261126;
static uint64_t rnd(uint64_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rng_state >> 33) % n;
}

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *src, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }

static void put_sleb(struct buf *b, int64_t v)
{
	for (;;) {
		uint8_t c = v & 0x7f;
		v >>= 7; /* arithmetic on the targets this runs on */
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			put8(b, c);
			return;
		}
		put8(b, (uint8_t)(c | 0x80));
	}
}

static void put_uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		put8(b, (uint8_t)(c | (v ? 0x80 : 0)));
	} while (v);
}

/* A DWARF 4 line table (32-bit, little-endian) with one sequence per
 * [lo[i], hi[i]): set_address, advance_line to i + 1, copy, advance_pc,
 * end_sequence. */
static struct buf line_table(const uint64_t *lo, const uint64_t *hi, size_t n)
{
	static const uint8_t std_lens[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	struct buf h = { 0 }, b = { 0 };
	uint32_t u32;
	uint16_t ver = 4;

	put8(&h, 1);  /* minimum_instruction_length */
	put8(&h, 1);  /* maximum_operations_per_instruction */
	put8(&h, 1);  /* default_is_stmt */
	put8(&h, (uint8_t)-5);
	put8(&h, 14); /* line_range */
	put8(&h, 13); /* opcode_base */
	put(&h, std_lens, sizeof std_lens);
	put8(&h, 0);  /* no include directories */
	put(&h, "a.c", 4);
	put8(&h, 0), put8(&h, 0), put8(&h, 0);
	put8(&h, 0);  /* end of file names */
	size_t hdr_len = h.n;
	for (size_t i = 0; i < n; i++) {
		put8(&h, 0), put8(&h, 9), put8(&h, 2);
		put(&h, &lo[i], 8);
		put8(&h, 3);
		put_sleb(&h, (int64_t)i);
		put8(&h, 1);
		put8(&h, 2);
		put_uleb(&h, hi[i] - lo[i]);
		put8(&h, 0), put8(&h, 1), put8(&h, 1);
	}
	u32 = (uint32_t)(2 + 4 + h.n);
	put(&b, &u32, 4);
	put(&b, &ver, 2);
	u32 = (uint32_t)hdr_len;
	put(&b, &u32, 4);
	put(&b, h.p, h.n);
	free(h.p);
	return b;
}

/* The line LLVM 14 gives address a (0: no row): std::sort by end, then the
 * first sequence whose end is above a, if it starts at or below a. */
static uint32_t want_line(const uint64_t *lo, const uint64_t *hi, const size_t *order, size_t n,
                          uint64_t a)
{
	size_t first = 0, len = n;
	while (len > 0) { /* std::upper_bound */
		size_t half = len / 2;
		if (a < hi[order[first + half]]) {
			len = half;
		} else {
			first += half + 1;
			len -= half + 1;
		}
	}
	if (first == n || lo[order[first]] > a)
		return 0;
	return (uint32_t)order[first] + 1;
}

static uint32_t got_line(const ix_line_table *t, uint64_t a)
{
	ptrdiff_t k = ix_piece_find(&t->pieces, a);
	const ix_piece *p;

	if (k < 0)
		return 0;
	p = (const ix_piece *)t->pieces.p + k;
	return p->v[0] == FMT_NONE ? 0 : p->v[1];
}

/* One table: every sequence's first, last and end address. */
static void check_case(const char *what, const uint64_t *lo, const uint64_t *hi, size_t n)
{
	struct buf b = line_table(lo, hi, n);
	ix_debug_section sec = { .data = b.p, .size = b.n };
	ix_u64map files = { 0 };
	ix_image img;
	ix_line_table t;
	char why[256] = "";
	size_t *order = malloc((n ? n : 1) * sizeof *order);
	int bad = 0;

	if (!order || ix_image_init(&img) < 0)
		abort();
	ix_line_ctx lc = { .line = &sec, .offset = 0, .addr_size = 8, .little = 1,
		           .comp_dir = "/t", .img = &img, .files_index = &files };
	CHECK(ix_line_parse(&lc, &t, why, sizeof why) == 0);
	line_order_ref(hi, n, order);
	for (size_t i = 0; i < n && bad < 5; i++) {
		const uint64_t probe[3] = { lo[i], hi[i] - 1, hi[i] };
		for (int k = 0; k < 3; k++) {
			uint32_t w = want_line(lo, hi, order, n, probe[k]);
			uint32_t g = got_line(&t, probe[k]);
			if (w != g && bad++ < 5)
				fprintf(stderr, "%s (n=%zu): 0x%llx: line %u, std::sort gives %u\n", what,
				        n, (unsigned long long)probe[k], g, w);
		}
	}
	CHECK(bad == 0);
	ix_line_free(&t);
	ix_u64map_free(&files);
	ix_image_free(&img);
	free(order);
	free(b.p);
}

int main(void)
{
	enum { MAXN = 3000 };
	static uint64_t lo[MAXN], hi[MAXN];
	static const size_t sizes[] = { 1, 2, 15, 16, 17, 18, 31, 33, 64, 100, 257, 1000, 3000 };

	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t n = sizes[s];
		for (int round = 0; round < 20; round++) {
			/* a few distinct ranges, many sequences each: ties */
			uint64_t pool = 1 + rnd(round % 2 ? 8 : n);
			for (size_t i = 0; i < n; i++) {
				uint64_t r = rnd(pool);
				lo[i] = 0x1000 + 64 * r + (round % 3 == 0 ? rnd(8) : 0);
				hi[i] = 0x1000 + 64 * r + 16 + rnd(round % 4 == 0 ? 40 : 1);
			}
			check_case("random", lo, hi, n);
		}
		for (size_t i = 0; i < n; i++) { /* all tied */
			lo[i] = 0x1000;
			hi[i] = 0x1010;
		}
		check_case("all tied", lo, hi, n);
		for (size_t i = 0; i < n; i++) { /* ascending pairs, descending pairs */
			lo[i] = 0x1000 + 32 * (i / 2);
			hi[i] = lo[i] + 16;
		}
		check_case("ascending", lo, hi, n);
		for (size_t i = 0; i < n; i++) {
			lo[i] = 0x1000 + 32 * ((n - i) / 2);
			hi[i] = lo[i] + 16;
		}
		check_case("descending", lo, hi, n);
		line_order_killer(n, hi); /* McIlroy: introsort's heapsort fallback */
		for (size_t i = 0; i < n; i++)
			lo[i] = hi[i] - 16;
		check_case("adversary", lo, hi, n);
	}
	return check_exit();
}
