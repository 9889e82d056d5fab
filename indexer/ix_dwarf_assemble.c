/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_assemble.c - the unit of each address from .debug_aranges and the
 * units' own ranges (LLVM's DWARFDebugAranges), then every unit's line and
 * subroutine pieces cut to its ranges and emitted as ROWS, IMAP and
 * FUNCTIONS sorted by DIE offset (SPEC §7.4-§7.6).
 */
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_walk.h"

/* ---- .debug_aranges (DWARF 5 §6.1.2), read as LLVM does ------------------ */

static uint64_t read_uint(const uint8_t *p, unsigned n, int little)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (little ? i : n - 1 - i));
	return v;
}

/* Appends each set's tuples to *out and marks its unit as covered; stops at
 * the first malformed set, as DWARFDebugAranges::extract does. */
static int read_aranges(ix_shard *x, ix_u64map *by_off, uint8_t *covered, ix_urange **out,
			size_t *n, size_t *cap)
{
	const ix_debug_section *s = ix_sections_find(x->secs, ".debug_aranges");
	int little = x->secs->little;
	uint64_t pos = 0;
	while (s && pos + 4 <= s->size) {
		const uint8_t *p = s->data + pos;
		uint64_t len = read_uint(p, 4, little), hl = 4;
		unsigned osz = 4;
		if (len == 0xffffffffu) {
			if (pos + 12 > s->size)
				break;
			len = read_uint(p + 4, 8, little);
			hl = 12;
			osz = 8;
		}
		if (len > s->size - pos - hl || len < 2 + osz + 2)
			break;
		const uint8_t *q = p + hl + 2, *end = p + hl + len;
		uint64_t cu_off = read_uint(q, osz, little);
		unsigned asz = q[osz], seg = q[osz + 1];
		if ((asz != 4 && asz != 8) || seg != 0)
			break;
		uint64_t t = hl + 2 + osz + 2, tup = 2 * (uint64_t)asz;
		t = (t + tup - 1) / tup * tup; /* tuples are aligned to their size */
		uint32_t ui = ix_u64map_get(by_off, cu_off);
		for (const uint8_t *r = p + t; r + tup <= end; r += tup) {
			uint64_t lo = read_uint(r, asz, little), l = read_uint(r + asz, asz, little);
			if (ui == FMT_NONE || l == 0)
				continue;
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 256;
				ix_urange *nr = realloc(*out, *cap * sizeof(*nr));
				if (!nr)
					return -1;
				*out = nr;
			}
			(*out)[(*n)++] = (ix_urange){ lo, lo + l, ui };
		}
		if (ui != FMT_NONE)
			covered[ui] = 1;
		pos += hl + len;
	}
	return 0;
}

static int unit_pieces(ix_shard *x, ix_vec *pieces)
{
	ix_u64map by_off = { 0 };
	uint8_t *covered = calloc(x->nunits + 1, 1);
	ix_urange *r = NULL;
	size_t n = 0, cap = 0;
	int rc = covered ? 0 : -1;
	for (size_t i = 0; i < x->nunits && !rc; i++)
		rc = ix_u64map_put(&by_off, x->units[i].off, (uint32_t)i);
	if (!rc)
		rc = read_aranges(x, &by_off, covered, &r, &n, &cap);
	for (size_t i = 0; i < x->nur && !rc; i++) {
		if (covered[x->ur[i].unit])
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			ix_urange *nr = realloc(r, cap * sizeof(*nr));
			if (!nr) {
				rc = -1;
				break;
			}
			r = nr;
		}
		r[n++] = x->ur[i];
	}
	if (!rc)
		rc = ix_units_flatten(r, n, pieces);
	free(r);
	free(covered);
	ix_u64map_free(&by_off);
	return rc;
}

/* ---- assembling the image ------------------------------------------------- */

/* Copies src's pieces over [a, b) into dst. */
static int copy_span(const ix_vec *src, uint64_t a, uint64_t b, int last, ix_vec *dst)
{
	static const uint32_t none[4] = { FMT_NONE, 0, 0, 0 };
	ptrdiff_t k = ix_piece_find(src, a);
	int rc = ix_piece_push(dst, a, k >= 0 ? IX_AT(src, ix_piece, k).v : none);
	for (size_t j = (size_t)(k + 1); !rc && j < src->n; j++) {
		const ix_piece *p = &IX_AT(src, ix_piece, j);
		if (!last && p->addr >= b)
			break;
		rc = ix_piece_push(dst, p->addr, p->v);
	}
	return rc;
}

static int compose(ix_shard *x, const ix_vec *units, ix_vec *lines, ix_vec *dies)
{
	static const uint32_t none[4] = { FMT_NONE, 0, 0, 0 };
	int rc = 0;
	for (size_t i = 0; i < units->n && !rc; i++) {
		const ix_piece *p = &IX_AT(units, ix_piece, i);
		uint64_t b = i + 1 < units->n ? IX_AT(units, ix_piece, i + 1).addr : UINT64_MAX;
		uint32_t un = p->v[0];
		if (un == FMT_NONE) {
			rc = ix_piece_push(lines, p->addr, none);
			if (!rc)
				rc = ix_piece_push(dies, p->addr, none);
			continue;
		}
		rc = copy_span(&x->units[un].lines, p->addr, b, 0, lines);
		if (!rc)
			rc = copy_span(&x->units[un].dies, p->addr, b, 0, dies);
	}
	return rc;
}

/* Pieces at or above base, the one covering base moved to it, ending in
 * a FMT_NONE sentinel (SPEC §7.5, §7.6). */
static size_t clip_start(const ix_vec *v, uint64_t base)
{
	ptrdiff_t k = ix_piece_find(v, base);
	return k < 0 ? 0 : (size_t)k;
}

static int emit_rows(ix_image *img, const ix_vec *v)
{
	for (size_t i = clip_start(v, img->base_address); i < v->n; i++) {
		const ix_piece *p = &IX_AT(v, ix_piece, i);
		ix_row *r = ix_vec_push(&img->rows);
		if (!r)
			return -1;
		r->addr = p->addr < img->base_address ? img->base_address : p->addr;
		r->file = p->v[0];
		r->line = p->v[1];
		r->column = p->v[2];
		r->discr = p->v[3];
	}
	return 0;
}

static int emit_imap(ix_image *img, const ix_vec *v)
{
	for (size_t i = clip_start(v, img->base_address); i < v->n; i++) {
		const ix_piece *p = &IX_AT(v, ix_piece, i);
		ix_imap *m = ix_vec_push(&img->imap);
		if (!m)
			return -1;
		m->addr = p->addr < img->base_address ? img->base_address : p->addr;
		m->node = p->v[0];
	}
	return 0;
}

/* FUNCTIONS must be sorted by DIE offset (SPEC §7.4): sort (offset, old
 * index) pairs, then renumber the nodes' references. */
typedef struct function_key {
	uint64_t off;
	uint32_t idx;
} function_key;

static int cmp_function_key(const void *a, const void *b)
{
	const function_key *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int sort_functions(ix_image *img)
{
	size_t n = img->functions.n;
	ix_function *f = img->functions.p;
	if (n == 0)
		return 0;
	function_key *k = malloc((n + 1) * sizeof(*k));
	uint32_t *remap = malloc((n + 1) * sizeof(*remap));
	ix_function *tmp = malloc((n + 1) * sizeof(*tmp));
	int rc = k && remap && tmp ? 0 : -1;
	if (!rc) {
		memcpy(tmp, f, n * sizeof(*f));
		for (size_t i = 0; i < n; i++)
			k[i] = (function_key){ f[i].die_offset, (uint32_t)i };
		qsort(k, n, sizeof(*k), cmp_function_key);
		for (size_t i = 0; i < n; i++) {
			f[i] = tmp[k[i].idx];
			remap[k[i].idx] = (uint32_t)i;
		}
		for (size_t i = 0; i < img->nodes.n; i++) {
			ix_node *nd = &IX_AT(&img->nodes, ix_node, i);
			if (nd->function != FMT_NONE)
				nd->function = remap[nd->function];
		}
	}
	free(k);
	free(remap);
	free(tmp);
	return rc;
}

int ix_dwarf_assemble(ix_shard *x)
{
	ix_vec units, lines, dies;
	ix_vec_init(&units, sizeof(ix_piece));
	ix_vec_init(&lines, sizeof(ix_piece));
	ix_vec_init(&dies, sizeof(ix_piece));
	int rc = unit_pieces(x, &units);
	if (!rc)
		rc = compose(x, &units, &lines, &dies);
	if (!rc)
		rc = emit_rows(x->img, &lines);
	if (!rc)
		rc = emit_imap(x->img, &dies);
	if (!rc)
		rc = sort_functions(x->img);
	ix_vec_free(&units);
	ix_vec_free(&lines);
	ix_vec_free(&dies);
	return rc;
}
