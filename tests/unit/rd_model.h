/* SPDX-License-Identifier: MIT */
/*
 * rd_model.h - a random synthetic image for the reader: symbols with holes,
 * nesting and unknown sizes; files; functions; a forest of inline nodes;
 * inline and line intervals, generated from a seed, written as an index file
 * with rd_synth.h and opened through the public API; plus sorted address
 * batches over it.  test_resolve.c compares the library with a naive
 * resolver on it; bench/bench_synth.c times the library on a larger one.
 * Header-only; the includer defines _GNU_SOURCE (setenv) and includes
 * check.h first.
 */
#ifndef SYMDB_TESTS_RD_MODEL_H
#define SYMDB_TESTS_RD_MODEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format_pack.h"
#include "rd_synth.h"
#include "symdb.h"
#include "symdb_endian.h"

/* ---- deterministic randomness ------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: good enough for test data, and identical everywhere. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- the model ---------------------------------------------------------- */

typedef struct m_sym { uint64_t addr, size; uint32_t name; } m_sym;
typedef struct m_file { uint32_t path, rel; } m_file;
typedef struct m_fn { uint32_t linkage, name, decl_file, decl_line; } m_fn;
typedef struct m_node {
	uint32_t parent, function, call_file, call_line, call_col, call_discr;
	uint16_t depth, flags;
	uint64_t low_pc;
} m_node;
typedef struct m_ival { uint64_t addr; uint32_t v, line, col, discr; } m_ival;

typedef struct model {
	unsigned aw;
	uint64_t base, end; /* end: first offset past everything */
	synth_buf strs;
	m_sym *sym; uint32_t nsym;
	m_file *file; uint32_t nfile;
	m_fn *fn; uint32_t nfn;
	m_node *node; uint32_t nnode;
	m_ival *imap; uint32_t nimap; /* v = node */
	m_ival *row; uint32_t nrow;   /* v = file */
} model;

typedef struct sizes {
	uint32_t nsym, nfile, nfn, nnode, nimap, nrow;
	int far; /* spread symbols and intervals over more than 4 GiB */
} sizes;

static uint64_t gap(const sizes *sz, uint64_t unit)
{
	uint64_t g = 1 + rnd_below(unit);
	if (sz->far && rnd_below(16) == 0)
		g += (uint64_t)1 << (32 + rnd_below(2));
	return g;
}

static void gen_symbols(model *m, const sizes *sz)
{
	uint64_t at = 0x100;
	char name[64];
	uint32_t i;

	m->sym = calloc(sz->nsym, sizeof *m->sym);
	m->nsym = sz->nsym;
	for (i = 0; i < sz->nsym; i++) {
		uint64_t g = gap(sz, 0x200);
		m->sym[i].addr = at;
		switch (rnd_below(4)) {
		case 0: m->sym[i].size = 0; break;                /* up to the next */
		case 1: m->sym[i].size = g + rnd_below(0x400); break; /* covers later ones */
		default: m->sym[i].size = 1 + rnd_below(g); break;  /* may leave a hole */
		}
		snprintf(name, sizeof name, "sym_%u", i);
		m->sym[i].name = rnd_below(50) ? synth_str(&m->strs, name) : 0;
		at += g;
	}
	if (at > m->end)
		m->end = at;
}

static void gen_debug(model *m, const sizes *sz)
{
	char s[64];
	uint32_t i;

	m->file = calloc(sz->nfile + 1, sizeof *m->file);
	m->nfile = sz->nfile;
	for (i = 0; i < sz->nfile; i++) {
		snprintf(s, sizeof s, "/src/dir/f%u.c", i);
		m->file[i].path = synth_str(&m->strs, s);
		m->file[i].rel = m->file[i].path + 5; /* "dir/f%u.c", sharing bytes */
	}
	m->fn = calloc(sz->nfn + 1, sizeof *m->fn);
	m->nfn = sz->nfn;
	for (i = 0; i < sz->nfn; i++) {
		snprintf(s, sizeof s, "_Z4fn%uv", i);
		m->fn[i].linkage = rnd_below(10) ? synth_str(&m->strs, s) : 0;
		snprintf(s, sizeof s, "fn%u", i);
		m->fn[i].name = synth_str(&m->strs, s);
		m->fn[i].decl_file = rnd_below(5) ? (uint32_t)rnd_below(sz->nfile) : FMT_NONE;
		m->fn[i].decl_line = (uint32_t)rnd_below(1000);
	}
	m->node = calloc(sz->nnode + 1, sizeof *m->node);
	m->nnode = sz->nnode;
	for (i = 0; i < sz->nnode; i++) {
		m_node *n = &m->node[i];
		n->parent = i == 0 || rnd_below(3) == 0 ? FMT_NONE : (uint32_t)rnd_below(i);
		n->depth = n->parent == FMT_NONE ? 0 : (uint16_t)(m->node[n->parent].depth + 1);
		n->function = rnd_below(10) ? (uint32_t)rnd_below(sz->nfn) : FMT_NONE;
		n->call_file = rnd_below(8) ? (uint32_t)rnd_below(sz->nfile) : FMT_NONE;
		n->call_line = (uint32_t)rnd_below(500);
		n->call_col = (uint32_t)rnd_below(80);
		n->call_discr = (uint32_t)rnd_below(3);
		n->flags = n->parent != FMT_NONE ? FMT_NODEF_INLINED : 0;
		if (rnd_below(10) < 7) {
			n->flags |= FMT_NODEF_HAS_LOW_PC;
			n->low_pc = rnd_below(m->end + 1);
		}
	}
}

/* Strictly ascending intervals over [0x80, ~end), the last one NONE. */
static m_ival *gen_intervals(const sizes *sz, uint32_t n, uint32_t nvals, uint64_t unit,
                             unsigned none_pct)
{
	m_ival *iv = calloc(n + 1, sizeof *iv);
	uint64_t at = 0x80;
	uint32_t i;

	for (i = 0; i < n; i++) {
		iv[i].addr = at;
		iv[i].v = rnd_below(100) < none_pct ? FMT_NONE : (uint32_t)rnd_below(nvals);
		iv[i].line = (uint32_t)rnd_below(5000);
		iv[i].col = (uint32_t)rnd_below(100);
		iv[i].discr = (uint32_t)rnd_below(4);
		at += gap(sz, unit);
	}
	if (n)
		iv[n - 1].v = FMT_NONE;
	return iv;
}

static void gen_model(model *m, const sizes *sz, unsigned aw, uint64_t base)
{
	memset(m, 0, sizeof *m);
	m->aw = aw;
	m->base = base;
	synth_str(&m->strs, "");
	gen_symbols(m, sz);
	gen_debug(m, sz);
	m->imap = gen_intervals(sz, sz->nimap, sz->nnode, 0x180, 20);
	m->nimap = sz->nimap;
	m->row = gen_intervals(sz, sz->nrow, sz->nfile, 0x80, 15);
	m->nrow = sz->nrow;
	if (m->nimap && m->imap[m->nimap - 1].addr > m->end)
		m->end = m->imap[m->nimap - 1].addr;
	if (m->nrow && m->row[m->nrow - 1].addr > m->end)
		m->end = m->row[m->nrow - 1].addr;
	synth_str(&m->strs, "libsynth.so");
}

static void free_model(model *m)
{
	free(m->sym); free(m->file); free(m->fn); free(m->node); free(m->imap); free(m->row);
	free(m->strs.p);
}

/* ---- writing the model as an index file --------------------------------- */

static void enc_tables(const model *m, synth_buf *b)
{
	uint32_t i;
	uint8_t *r;

	r = synth_grow(&b[FMT_T_SEGMENTS], FMT_SEG_SIZE); /* [base, base+0x1000) at 0 */
	fmt_put64(r + FMT_SEG_VADDR, m->base);
	fmt_put64(r + FMT_SEG_MEMSZ, 0x1000);
	fmt_put64(r + FMT_SEG_FILESZ, 0x1000);
	r = synth_grow(&b[FMT_T_SEGMENTS], FMT_SEG_SIZE); /* [base+0x2000, +0x800) at 0x1000 */
	fmt_put64(r + FMT_SEG_VADDR, m->base + 0x2000);
	fmt_put64(r + FMT_SEG_MEMSZ, 0x900);
	fmt_put64(r + FMT_SEG_FILEOFF, 0x1000);
	fmt_put64(r + FMT_SEG_FILESZ, 0x800);
	for (i = 0; i < m->nsym; i++) {
		fmt_put_addr(synth_grow(&b[FMT_T_SYMBOL_ADDRS], m->aw), m->aw, 0, m->sym[i].addr);
		r = synth_grow(&b[FMT_T_SYMBOLS], FMT_SYM_SIZE);
		fmt_put64(r + FMT_SYM_LENGTH, m->sym[i].size);
		fmt_put32(r + FMT_SYM_NAME, m->sym[i].name);
		fmt_put32(r + FMT_SYM_FLAGS, FMT_SYMF_FUNC);
	}
	for (i = 0; i < m->nfile; i++) {
		r = synth_grow(&b[FMT_T_FILES], FMT_FILE_SIZE);
		fmt_put32(r + FMT_FILE_PATH, m->file[i].path);
		fmt_put32(r + FMT_FILE_RELATIVE, m->file[i].rel);
		fmt_put32(r + FMT_FILE_BASE, m->file[i].rel + 4);
	}
	for (i = 0; i < m->nfn; i++) {
		r = synth_grow(&b[FMT_T_FUNCTIONS], FMT_FN_SIZE);
		fmt_put64(r + FMT_FN_DIE_OFFSET, 0x10 + 0x20 * (uint64_t)i);
		fmt_put32(r + FMT_FN_LINKAGE_NAME, m->fn[i].linkage);
		fmt_put32(r + FMT_FN_NAME, m->fn[i].name);
		fmt_put32(r + FMT_FN_DECL_FILE, m->fn[i].decl_file);
		fmt_put32(r + FMT_FN_DECL_LINE, m->fn[i].decl_line);
	}
	for (i = 0; i < m->nnode; i++) {
		const m_node *n = &m->node[i];
		r = synth_grow(&b[FMT_T_INLINE_NODES], FMT_NODE_SIZE);
		fmt_put32(r + FMT_NODE_PARENT, n->parent);
		fmt_put32(r + FMT_NODE_FUNCTION, n->function);
		fmt_put32(r + FMT_NODE_CALL_FILE, n->call_file);
		fmt_put32(r + FMT_NODE_CALL_LINE, n->call_line);
		fmt_put32(r + FMT_NODE_CALL_COLUMN, n->call_col);
		fmt_put32(r + FMT_NODE_CALL_DISCR, n->call_discr);
		fmt_put16(r + FMT_NODE_DEPTH, n->depth);
		fmt_put16(r + FMT_NODE_FLAGS, n->flags);
		fmt_put64(r + FMT_NODE_LOW_PC, n->low_pc);
	}
	for (i = 0; i < m->nimap; i++) {
		fmt_put_addr(synth_grow(&b[FMT_T_INLINE_ADDRS], m->aw), m->aw, 0, m->imap[i].addr);
		fmt_put32(synth_grow(&b[FMT_T_INLINE_MAP], 4), m->imap[i].v);
	}
	for (i = 0; i < m->nrow; i++) {
		fmt_put_addr(synth_grow(&b[FMT_T_LINE_ADDRS], m->aw), m->aw, 0, m->row[i].addr);
		r = synth_grow(&b[FMT_T_LINE_ROWS], FMT_ROW_SIZE);
		fmt_put32(r + FMT_ROW_FILE, m->row[i].v);
		fmt_put32(r + FMT_ROW_LINE, m->row[i].line);
		fmt_put32(r + FMT_ROW_COLUMN, m->row[i].col);
		fmt_put32(r + FMT_ROW_DISCR, m->row[i].discr);
	}
}

/* The major model_bytes writes: 1 (SPEC §7.4-§7.6) or 2 (§7.9's packed
 * DWARF tables, through format_pack.h's encoders). */
static unsigned model_major = FMT_V1_MAJOR;

static void m_fn_fields(uint64_t i, uint64_t *v, void *arg)
{
	const m_fn *f = &((const model *)arg)->fn[i];

	v[FMT_PF_DIE_OFFSET] = 0x10 + 0x20 * i;
	v[FMT_PF_LINKAGE_NAME] = f->linkage;
	v[FMT_PF_NAME] = f->name;
	v[FMT_PF_DECL_FILE] = f->decl_file;
	v[FMT_PF_DECL_LINE] = f->decl_line;
}

static void m_node_fields(uint64_t i, uint64_t *v, void *arg)
{
	const m_node *n = &((const model *)arg)->node[i];

	/* A damaged Parent at or above i (test_corrupt's cycles) becomes a
	 * distance past i, the format's only way to say it: the reader rejects
	 * both alike. */
	v[FMT_PN_PARENT_DISTANCE] = n->parent == FMT_NONE ? 0
	                            : n->parent >= i      ? i + 1 + (n->parent - i)
	                                                  : i - n->parent;
	v[FMT_PN_FUNCTION] = n->function;
	v[FMT_PN_CALL_FILE] = n->call_file;
	v[FMT_PN_CALL_LINE] = n->call_line;
	v[FMT_PN_CALL_COLUMN] = n->call_col;
	v[FMT_PN_CALL_DISCR] = n->call_discr;
	v[FMT_PN_DEPTH] = n->depth;
	v[FMT_PN_FLAGS] = n->flags;
	v[FMT_PN_LOW_PC] = n->low_pc;
}

static void m_imap_row(uint64_t i, fmt_brow *r, void *arg)
{
	const m_ival *iv = &((const model *)arg)->imap[i];

	r->addr = iv->addr;
	r->index = iv->v;
}

static void m_line_row(uint64_t i, fmt_brow *r, void *arg)
{
	const m_ival *iv = &((const model *)arg)->row[i];

	r->addr = iv->addr;
	r->index = iv->v;
	r->line = iv->line;
	r->column = iv->col;
	r->discr = iv->discr;
}

/* Replace buffer b by n bytes at p (owned). */
static void m_adopt(synth_buf *b, uint8_t *p, uint64_t n)
{
	free(b->p);
	b->p = p;
	b->n = b->cap = (size_t)n;
}

/* Format 2: re-encode the six DWARF tables packed (SPEC §7.9); their
 * Counts go to cnt[]. */
static void enc_packed(const model *m, synth_buf *b, uint64_t *cnt)
{
	uint8_t *p, *q;
	uint64_t n;

	if (fmt_pack_records(FMT_PF_COUNT, FMT_PF_NULLABLE, m->nfn, m_fn_fields, (void *)m, &p, &n))
		abort();
	m_adopt(&b[FMT_T_FUNCTIONS], p, n);
	cnt[FMT_T_FUNCTIONS] = m->nfn;
	if (fmt_pack_records(FMT_PN_COUNT, FMT_PN_NULLABLE, m->nnode, m_node_fields, (void *)m,
	                     &p, &n))
		abort();
	m_adopt(&b[FMT_T_INLINE_NODES], p, n);
	cnt[FMT_T_INLINE_NODES] = m->nnode;
	if (fmt_pack_blocks(m->nimap, 0, m_imap_row, (void *)m, &p, &q, &n))
		abort();
	cnt[FMT_T_INLINE_ADDRS] = (m->nimap + FMT_BLK_ROWS - 1) / FMT_BLK_ROWS;
	m_adopt(&b[FMT_T_INLINE_ADDRS], p, cnt[FMT_T_INLINE_ADDRS] * FMT_BLK_SIZE);
	m_adopt(&b[FMT_T_INLINE_MAP], q, n);
	cnt[FMT_T_INLINE_MAP] = m->nimap;
	if (fmt_pack_blocks(m->nrow, 1, m_line_row, (void *)m, &p, &q, &n))
		abort();
	cnt[FMT_T_LINE_ADDRS] = (m->nrow + FMT_BLK_ROWS - 1) / FMT_BLK_ROWS;
	m_adopt(&b[FMT_T_LINE_ADDRS], p, cnt[FMT_T_LINE_ADDRS] * FMT_BLK_SIZE);
	m_adopt(&b[FMT_T_LINE_ROWS], q, n);
	cnt[FMT_T_LINE_ROWS] = m->nrow;
}

/* The model as index file bytes (malloc'd). */
static uint8_t *model_bytes(const model *m, size_t *len)
{
	uint64_t cnt[FMT_T_LINE_ROWS + 1] = { 0 };
	static const uint16_t rs[] = { 0, 0, 40, 0, 16, 12, 24, 0, 4, 40, 0, 16 };
	synth_buf b[FMT_T_LINE_ROWS + 1];
	synth_table t[FMT_T_LINE_ROWS];
	synth_hdr h;
	uint8_t *f;
	uint32_t k;

	memset(b, 0, sizeof b);
	enc_tables(m, b);
	if (model_major == FMT_VERSION_MAJOR)
		enc_packed(m, b, cnt);
	b[FMT_T_STRINGS] = m->strs;
	for (k = FMT_T_STRINGS; k <= FMT_T_LINE_ROWS; k++) {
		uint16_t r = rs[k] ? rs[k] : (uint16_t)(k == FMT_T_STRINGS ? 0 : m->aw);
		if (model_major == FMT_VERSION_MAJOR && k >= FMT_T_FUNCTIONS)
			r = (uint16_t)(k == FMT_T_INLINE_ADDRS || k == FMT_T_LINE_ADDRS ? FMT_BLK_SIZE : 0);
		t[k - 1] = (synth_table){ k, 0, r, b[k].p, b[k].n,
		                          cnt[k] ? cnt[k] : r ? b[k].n / r : b[k].n };
	}
	memset(&h, 0, sizeof h);
	h.flags = FMT_FLAG_HAS_DWARF;
	h.address_size = (uint8_t)m->aw;
	h.uuid_len = 8;
	memset(h.uuid, 0x5a, 8);
	h.image_name = (uint32_t)(m->strs.n - sizeof "libsynth.so");
	h.base_address = m->base;
	h.major = (uint16_t)model_major;
	f = synth_file(&h, t, FMT_T_LINE_ROWS, len);
	for (k = FMT_T_SEGMENTS; k <= FMT_T_LINE_ROWS; k++)
		free(b[k].p);
	return f;
}

/* Write bytes to a temporary file and open it; NULL on failure (counted
 * unless `quiet`). */
static symdb_image *open_bytes(const uint8_t *f, size_t len, int quiet)
{
	char path[512], eb[256];
	symdb_image *img = NULL;
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);

	if (synth_write_tmp(f, len, path, sizeof path) != 0 &&
	    (setenv("TMPDIR", "/tmp", 1), synth_write_tmp(f, len, path, sizeof path)) != 0) {
		CHECK(!"cannot write a temporary file");
		return NULL;
	}
	if (symdb_image_open_file(path, &o, &img) != 0 && !quiet) {
		fprintf(stderr, "open: %s\n", eb);
		CHECK(!"open_bytes");
	}
	unlink(path); /* the mapping keeps it */
	return img;
}

static symdb_image *open_model(const model *m)
{
	size_t len;
	uint8_t *f = model_bytes(m, &len);
	symdb_image *img = open_bytes(f, len, 0);

	free(f);
	return img;
}

/* ---- address batches ---------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* n sorted addresses over the model's range, with duplicates, a few below
 * the base and SYMDB_ADDR_INVALID at the end. */
static uint64_t *gen_batch(const model *m, size_t n)
{
	uint64_t *a = malloc(n * sizeof *a);
	size_t i;

	for (i = 0; i < n; i++) {
		if (i && rnd_below(5) == 0)
			a[i] = a[i - 1];
		else if (rnd_below(100) == 0)
			a[i] = rnd_below(m->base + 1) - 1; /* below base (or wraps to max) */
		else
			a[i] = m->base + rnd_below(m->end + 0x400);
	}
	qsort(a, n, sizeof *a, cmp_u64);
	if (n)
		a[n - 1] = SYMDB_ADDR_INVALID;
	return a;
}

#endif /* SYMDB_TESTS_RD_MODEL_H */
