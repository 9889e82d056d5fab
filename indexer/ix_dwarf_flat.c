/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_flat.c - turns overlapping DWARF address ranges into the flat,
 * sorted pieces of SPEC §7.5 and §7.6, resolving overlaps exactly as
 * llvm-symbolizer 14 does.
 *
 * Two LLVM structures are reproduced:
 *  - DWARFUnit's AddrDieMap (updateAddressDieMap / getSubroutineForAddress):
 *    subroutine ranges inserted in DIE order into an ordered map, a range
 *    that starts inside an earlier one splitting it.  For well-nested DWARF
 *    this is "innermost DIE wins"; for odd DWARF it is whatever LLVM's map
 *    does, which is what we must print.
 *  - DWARFDebugAranges::construct(): unit ranges sorted by endpoint; where
 *    units overlap, the current range is extended while its unit still
 *    covers the address, else the unit with the lowest offset wins.
 * Both are then evaluated at every boundary, which yields piecewise-constant
 * pieces without any tree walk at query time.
 */
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_internal.h"

struct ix_diemap_entry {
	uint64_t key, end;
	uint32_t node;
};

/* ---- pieces ------------------------------------------------------------------ */

int ix_piece_push(ix_vec *v, uint64_t addr, const uint32_t val[4])
{
	ix_piece *last = v->n ? &IX_AT(v, ix_piece, v->n - 1) : NULL;
	if (last && last->addr == addr) {
		memcpy(last->v, val, sizeof(last->v));
		if (v->n >= 2 && memcmp(IX_AT(v, ix_piece, v->n - 2).v, val,
					sizeof(last->v)) == 0)
			v->n--;
		return 0;
	}
	if (last && memcmp(last->v, val, sizeof(last->v)) == 0)
		return 0;
	ix_piece *p = ix_vec_push(v);
	if (!p)
		return -1;
	p->addr = addr;
	memcpy(p->v, val, sizeof(p->v));
	return 0;
}

ptrdiff_t ix_piece_find(const ix_vec *v, uint64_t addr)
{
	size_t lo = 0, hi = v->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (IX_AT(v, ix_piece, mid).addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

/* ---- AddrDieMap ------------------------------------------------------------ */

#define IX_DIEMAP_BLOCK 256

struct ix_diemap_block {
	size_t n;
	struct ix_diemap_entry e[IX_DIEMAP_BLOCK];
};

/* A position: block and index inside it. */
typedef struct diemap_pos {
	size_t b, i;
} diemap_pos;

/* Does block h hold the place of key (its first key <= key < the next
 * block's first key)? */
static int diemap_in_block(const ix_diemap *m, size_t h, uint64_t key)
{
	return h < m->nb && m->b[h]->e[0].key <= key &&
	       (h + 1 == m->nb || m->b[h + 1]->e[0].key > key);
}

/* upper_bound(key): the first entry whose key is greater than key.  DIEs
 * come in address order more often than not, so the block of the last
 * search is tried first (a search over the blocks reads one block per
 * step, a cache miss each on a big unit). */
static diemap_pos diemap_upper(ix_diemap *m, uint64_t key)
{
	size_t lo = 0, hi = m->nb;
	if (diemap_in_block(m, m->hint, key)) {
		lo = m->hint + 1;
	} else {
		while (lo < hi) { /* first block whose first key > key */
			size_t mid = lo + (hi - lo) / 2;
			if (m->b[mid]->e[0].key <= key)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	if (lo == 0)
		return (diemap_pos){ 0, 0 };
	m->hint = lo - 1;
	const struct ix_diemap_block *blk = m->b[lo - 1];
	size_t a = 0, z = blk->n;
	while (a < z) {
		size_t mid = a + (z - a) / 2;
		if (blk->e[mid].key <= key)
			a = mid + 1;
		else
			z = mid;
	}
	return (diemap_pos){ lo - 1, a };
}

/* The entry just before position p, or NULL. */
static struct ix_diemap_entry *diemap_prev(const ix_diemap *m, diemap_pos p)
{
	if (p.i > 0)
		return &m->b[p.b]->e[p.i - 1];
	if (p.b > 0)
		return &m->b[p.b - 1]->e[m->b[p.b - 1]->n - 1];
	return NULL;
}

static int diemap_insert_at(ix_diemap *m, diemap_pos p, struct ix_diemap_entry v)
{
	if (m->nb == 0 || m->b[p.b]->n == IX_DIEMAP_BLOCK) {
		if (m->nb == m->capb) {
			size_t cap = m->capb ? 2 * m->capb : 16;
			struct ix_diemap_block **nb = realloc(m->b, cap * sizeof(*nb));
			if (!nb)
				return -1;
			m->b = nb;
			m->capb = cap;
		}
		struct ix_diemap_block *fresh = malloc(sizeof(*fresh));
		if (!fresh)
			return -1;
		fresh->n = 0;
		if (m->nb == 0) {
			m->b[m->nb++] = fresh;
		} else { /* split the full block in two halves */
			struct ix_diemap_block *full = m->b[p.b];
			size_t half = IX_DIEMAP_BLOCK / 2;
			memcpy(fresh->e, full->e + half, (IX_DIEMAP_BLOCK - half) * sizeof(*fresh->e));
			fresh->n = IX_DIEMAP_BLOCK - half;
			full->n = half;
			memmove(&m->b[p.b + 2], &m->b[p.b + 1], (m->nb - p.b - 1) * sizeof(*m->b));
			m->b[p.b + 1] = fresh;
			m->nb++;
			if (p.i > half) {
				p.b++;
				p.i -= half;
			}
		}
	}
	struct ix_diemap_block *blk = m->b[p.b];
	memmove(&blk->e[p.i + 1], &blk->e[p.i], (blk->n - p.i) * sizeof(*blk->e));
	blk->e[p.i] = v;
	blk->n++;
	return 0;
}

/* map[key] = (end, node) */
static int diemap_set(ix_diemap *m, uint64_t key, uint64_t end, uint32_t node)
{
	diemap_pos p = diemap_upper(m, key);
	struct ix_diemap_entry *prev = diemap_prev(m, p);
	if (prev && prev->key == key) {
		prev->end = end;
		prev->node = node;
		return 0;
	}
	if (m->nb && p.i == m->b[p.b]->n && p.b + 1 < m->nb) {
		/* past the end of a block: the start of the next is the same
		 * place, and keeps first keys valid for diemap_upper */
		p.b++;
		p.i = 0;
	}
	return diemap_insert_at(m, p, (struct ix_diemap_entry){ key, end, node });
}

int ix_diemap_add(ix_diemap *m, uint64_t lo, uint64_t hi, uint32_t node)
{
	if (lo == hi)
		return 0; /* LLVM ignores 0-sized ranges */
	struct ix_diemap_entry *b = diemap_prev(m, diemap_upper(m, lo));
	if (b && lo < b->end) {
		/* The range starts inside an earlier one: split it. */
		struct ix_diemap_entry old = *b;
		if (hi < old.end && diemap_set(m, hi, old.end, old.node))
			return -1;
		if (lo > old.key)
			diemap_prev(m, diemap_upper(m, old.key))->end = lo;
	}
	return diemap_set(m, lo, hi, node);
}

static uint32_t diemap_lookup(const struct ix_diemap_entry *e, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e[mid].key <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= e[lo - 1].end)
		return FMT_NONE;
	return e[lo - 1].node;
}

int ix_diemap_flatten(const ix_diemap *m, ix_vec *pieces)
{
	size_t n = 0;
	for (size_t i = 0; i < m->nb; i++)
		n += m->b[i]->n;
	struct ix_diemap_entry *e = malloc((n + 1) * sizeof(*e));
	uint64_t *pts = malloc((2 * n + 1) * sizeof(*pts));
	if (!e || !pts) {
		free(e);
		free(pts);
		return -1;
	}
	size_t k = 0, np = 0;
	for (size_t i = 0; i < m->nb; i++)
		for (size_t j = 0; j < m->b[i]->n; j++)
			e[k++] = m->b[i]->e[j];
	for (size_t i = 0; i < n; i++) {
		pts[np++] = e[i].key;
		pts[np++] = e[i].end;
	}
	int rc = ix_sort_u64(pts, np);
	for (size_t i = 0; i < np && !rc; i++) {
		if (i && pts[i] == pts[i - 1])
			continue;
		uint32_t v[4] = { diemap_lookup(e, n, pts[i]), 0, 0, 0 };
		rc = ix_piece_push(pieces, pts[i], v);
	}
	free(e);
	free(pts);
	return rc;
}

void ix_diemap_free(ix_diemap *m)
{
	for (size_t i = 0; i < m->nb; i++)
		free(m->b[i]);
	free(m->b);
	memset(m, 0, sizeof(*m));
}

/* ---- unit ranges (DWARFDebugAranges::construct) ----------------------------- */

typedef struct endpoint {
	uint64_t addr;
	uint32_t unit;
	int start;
} endpoint;

static int cmp_ep(const void *a, const void *b)
{
	const endpoint *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The multiset of units covering the sweep position; small in practice. */
typedef struct active {
	uint32_t *unit, *count;
	size_t n, cap;
} active;

static int active_add(active *s, uint32_t unit, int delta)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->unit[i] != unit)
			continue;
		s->count[i] += (uint32_t)delta;
		if (s->count[i] == 0) {
			s->unit[i] = s->unit[s->n - 1];
			s->count[i] = s->count[--s->n];
		}
		return 0;
	}
	if (delta < 0)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		uint32_t *u = realloc(s->unit, cap * sizeof(*u));
		if (!u)
			return -1;
		s->unit = u;
		uint32_t *c = realloc(s->count, cap * sizeof(*c));
		if (!c)
			return -1;
		s->count = c;
		s->cap = cap;
	}
	s->unit[s->n] = unit;
	s->count[s->n++] = 1;
	return 0;
}

static uint32_t active_min(const active *s, uint32_t prefer)
{
	uint32_t m = FMT_NONE;
	for (size_t i = 0; i < s->n; i++) {
		if (s->unit[i] == prefer)
			return prefer;
		if (s->unit[i] < m)
			m = s->unit[i];
	}
	return m;
}

int ix_units_flatten(ix_urange *r, size_t n, ix_vec *pieces)
{
	endpoint *ep = malloc((2 * n + 1) * sizeof(*ep));
	if (!ep)
		return -1;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].lo >= r[i].hi)
			continue;
		ep[m++] = (endpoint){ r[i].lo, r[i].unit, 1 };
		ep[m++] = (endpoint){ r[i].hi, r[i].unit, 0 };
	}
	qsort(ep, m, sizeof(*ep), cmp_ep);
	active s = { 0 };
	uint64_t prev = UINT64_MAX;
	uint32_t cur = FMT_NONE; /* unit of the range being extended */
	int rc = 0;
	for (size_t i = 0; i < m && !rc; i++) {
		if (prev < ep[i].addr && s.n) {
			/* Extend the current range while its unit still covers
			 * the address, else start one for the lowest unit. */
			uint32_t u = active_min(&s, cur);
			uint32_t v[4] = { u, 0, 0, 0 };
			rc = ix_piece_push(pieces, prev, v);
			cur = u;
		} else if (prev < ep[i].addr) {
			uint32_t v[4] = { FMT_NONE, 0, 0, 0 };
			rc = ix_piece_push(pieces, prev, v);
			cur = FMT_NONE;
		}
		if (!rc)
			rc = active_add(&s, ep[i].unit, ep[i].start ? 1 : -1);
		prev = ep[i].addr;
	}
	if (!rc && m) {
		uint32_t v[4] = { FMT_NONE, 0, 0, 0 };
		rc = ix_piece_push(pieces, prev, v);
	}
	free(ep);
	free(s.unit);
	free(s.count);
	return rc;
}

/* ---- u64 -> u32 map ---------------------------------------------------------- */

static size_t hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

uint32_t ix_u64map_get(const ix_u64map *m, uint64_t key)
{
	if (!m->cap)
		return FMT_NONE;
	for (size_t i = hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == FMT_NONE)
			return FMT_NONE;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

static int u64map_grow(ix_u64map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	uint64_t *k = malloc(cap * sizeof(*k));
	uint32_t *v = malloc(cap * sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	memset(v, 0xff, cap * sizeof(*v));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] == FMT_NONE)
			continue;
		size_t j = hash_u64(m->keys[i]) & (cap - 1);
		while (v[j] != FMT_NONE)
			j = (j + 1) & (cap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = cap;
	return 0;
}

int ix_u64map_put(ix_u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap && u64map_grow(m))
		return -1;
	size_t i = hash_u64(key) & (m->cap - 1);
	while (m->vals[i] != FMT_NONE && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (m->vals[i] == FMT_NONE)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

void ix_u64map_free(ix_u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
