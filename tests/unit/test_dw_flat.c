/* SPDX-License-Identifier: MIT */
/*
 * test_dw_flat.c - checks ix_dwarf_flat.c against naive models, seeded:
 *  - the blocked AddrDieMap (ix_diemap_*) against a plain sorted-array
 *    model of LLVM's std::map AddrDieMap, on nested, random and hostile
 *    (descending) insertion orders, by looking up every boundary +-1;
 *  - ix_units_flatten against a direct per-address model of LLVM's
 *    DWARFDebugAranges::construct (lowest unit, extended while still
 *    valid);
 *  - inflation refusing a decompression bomb.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_internal.h"

static int failures;
#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, \
				__LINE__, #c);                                \
			failures++;                                           \
		}                                                             \
	} while (0)

static uint64_t rng_state = 20261122;
static uint64_t rnd(uint64_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (rng_state >> 33) % n;
}

/* ---- naive AddrDieMap: one sorted array, as std::map ---------------------- */

typedef struct nent {
	uint64_t key, end;
	uint32_t node;
} nent;

typedef struct nmap {
	nent e[20000];
	size_t n;
} nmap;

static size_t n_upper(const nmap *m, uint64_t k)
{
	size_t i = 0;
	while (i < m->n && m->e[i].key <= k)
		i++;
	return i;
}

static void n_set(nmap *m, uint64_t k, uint64_t end, uint32_t node)
{
	size_t i = n_upper(m, k);
	if (i && m->e[i - 1].key == k) {
		m->e[i - 1].end = end;
		m->e[i - 1].node = node;
		return;
	}
	memmove(&m->e[i + 1], &m->e[i], (m->n - i) * sizeof(nent));
	m->e[i] = (nent){ k, end, node };
	m->n++;
}

static void n_add(nmap *m, uint64_t lo, uint64_t hi, uint32_t node)
{
	if (lo == hi)
		return;
	size_t b = n_upper(m, lo);
	if (b && lo < m->e[b - 1].end) {
		nent old = m->e[b - 1];
		if (hi < old.end)
			n_set(m, hi, old.end, old.node);
		if (lo > old.key)
			m->e[n_upper(m, old.key) - 1].end = lo;
	}
	n_set(m, lo, hi, node);
}

static uint32_t n_lookup(const nmap *m, uint64_t a)
{
	size_t i = n_upper(m, a);
	return i == 0 || a >= m->e[i - 1].end ? FMT_NONE : m->e[i - 1].node;
}

static uint32_t piece_at(const ix_vec *v, uint64_t a)
{
	ptrdiff_t k = ix_piece_find(v, a);
	return k < 0 ? FMT_NONE : IX_AT(v, ix_piece, k).v[0];
}

static void check_diemap(int shape, size_t count)
{
	static nmap model;
	ix_diemap m = { 0 };
	ix_vec pieces;
	ix_vec_init(&pieces, sizeof(ix_piece));
	model.n = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t lo, hi;
		if (shape == 0) { /* nested: a parent, then children inside */
			lo = 1000 * (i / 8) + (i % 8) * 50;
			hi = lo + (i % 8 ? 40 : 1000);
		} else if (shape == 1) { /* random overlaps */
			lo = rnd(100000);
			hi = lo + rnd(5000);
		} else { /* descending: the worst case for a flat array */
			lo = 10 * (count - i);
			hi = lo + 5 + rnd(30);
		}
		CHECK(ix_diemap_add(&m, lo, hi, (uint32_t)i) == 0);
		n_add(&model, lo, hi, (uint32_t)i);
	}
	CHECK(ix_diemap_flatten(&m, &pieces) == 0);
	for (size_t i = 0; i < model.n; i++) {
		uint64_t pts[4] = { model.e[i].key, model.e[i].end, model.e[i].key + 1,
				    model.e[i].end - 1 };
		for (int k = 0; k < 4; k++)
			CHECK(piece_at(&pieces, pts[k]) == n_lookup(&model, pts[k]));
	}
	ix_vec_free(&pieces);
	ix_diemap_free(&m);
}

/* ---- units ------------------------------------------------------------------ */

static void check_units(void)
{
	ix_urange r[200];
	size_t n = 0;
	for (; n < 200; n++) {
		r[n].lo = rnd(5000);
		r[n].hi = r[n].lo + rnd(300);
		r[n].unit = (uint32_t)rnd(20);
	}
	ix_vec pieces;
	ix_vec_init(&pieces, sizeof(ix_piece));
	CHECK(ix_units_flatten(r, n, &pieces) == 0);
	/* Model: walk addresses; the unit of the previous address is kept
	 * while it still covers, else the lowest covering unit. */
	uint32_t prev = FMT_NONE;
	for (uint64_t a = 0; a < 5400; a++) {
		uint32_t best = FMT_NONE;
		int keep = 0;
		for (size_t i = 0; i < n; i++) {
			if (r[i].lo <= a && a < r[i].hi) {
				if (r[i].unit == prev)
					keep = 1;
				if (r[i].unit < best)
					best = r[i].unit;
			}
		}
		uint32_t want = keep ? prev : best;
		CHECK(piece_at(&pieces, a) == want);
		prev = want;
	}
	ix_vec_free(&pieces);
}

static void check_bomb(void)
{
	/* Elf64_Chdr: ELFCOMPRESS_ZLIB, size 1 TiB, then 8 bytes of "stream". */
	uint8_t buf[32] = { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 };
	uint8_t *out = NULL;
	uint64_t size = 0;
	char why[200] = "";
	CHECK(ix_inflate_chdr(buf, sizeof(buf), 1, 1, &out, &size, why, sizeof(why)) < 0);
	CHECK(strstr(why, "decompression bomb") != NULL);
	CHECK(out == NULL);
}

int main(void)
{
	for (int shape = 0; shape < 3; shape++)
		check_diemap(shape, shape == 1 ? 3000 : 8000);
	check_units();
	check_bomb();
	printf("test_dw_flat: %d failures\n", failures);
	return failures != 0;
}
