/* SPDX-License-Identifier: MIT */
/*
 * test_resolve.c - unit tests of symdb_resolve_batch() (SPEC §11) and
 * symdb_image_translate() (SPEC §10).
 *
 * A random synthetic image (symbols with holes, nesting and unknown sizes;
 * files; functions; a forest of inline nodes; inline and line intervals) is
 * generated from a printed seed, written with rd_synth.h, and every result
 * of the library is compared with a naive implementation of SPEC §11 written
 * here: linear scans instead of searches, the model's arrays instead of the
 * file.  The same comparison runs with Address_Size 8 and symbols more than
 * 4 GiB apart, with tiny frames_cap values (the batch resumes where it
 * stopped), with duplicates, and on images whose records were damaged (each
 * damaged address must come back SYMDB_E_CORRUPT, and only those).  Finally a
 * 1M-address batch is timed on a larger image (reported, never asserted).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
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

/* The model as index file bytes (malloc'd). */
static uint8_t *model_bytes(const model *m, size_t *len)
{
	static const uint16_t rs[] = { 0, 0, 40, 0, 16, 12, 24, 0, 4, 40, 0, 16 };
	synth_buf b[FMT_T_LINE_ROWS + 1];
	synth_table t[FMT_T_LINE_ROWS];
	synth_hdr h;
	uint8_t *f;
	uint32_t k;

	memset(b, 0, sizeof b);
	enc_tables(m, b);
	b[FMT_T_STRINGS] = m->strs;
	for (k = FMT_T_STRINGS; k <= FMT_T_LINE_ROWS; k++) {
		uint16_t r = rs[k] ? rs[k] : (uint16_t)(k == FMT_T_STRINGS ? 0 : m->aw);
		t[k - 1] = (synth_table){ k, 0, r, b[k].p, b[k].n, r ? b[k].n / r : b[k].n };
	}
	memset(&h, 0, sizeof h);
	h.flags = FMT_FLAG_HAS_DWARF;
	h.address_size = (uint8_t)m->aw;
	h.uuid_len = 8;
	memset(h.uuid, 0x5a, 8);
	h.image_name = (uint32_t)(m->strs.n - sizeof "libsynth.so");
	h.base_address = m->base;
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

/* ---- the naive resolver: SPEC §11 by linear scans ----------------------- */

typedef struct want {
	int status;
	uint32_t count;
	symdb_frame f[64];
	const char *sym_name;
	uint64_t sym_addr, sym_size;
} want;

/* Reference 0 ("") -> NULL, like the library; -1 past the pool. */
static int m_str(const model *m, uint32_t ref, const char **out)
{
	if (ref >= m->strs.n)
		return -1;
	*out = ref ? (const char *)m->strs.p + ref : NULL;
	return 0;
}

static int m_filepath(const model *m, uint32_t idx, const char **path, const char **rel)
{
	*path = *rel = NULL;
	if (idx == FMT_NONE)
		return 0;
	if (idx >= m->nfile)
		return -1;
	return m_str(m, m->file[idx].path, path) || m_str(m, m->file[idx].rel, rel) ? -1 : 0;
}

static int64_t last_le(const m_ival *iv, uint32_t n, uint64_t o)
{
	int64_t k = -1;
	for (uint32_t i = 0; i < n && iv[i].addr <= o; i++)
		k = i;
	return k;
}

static int naive_frame(const model *m, uint32_t n, const m_node *inner, const m_ival *row,
                       symdb_frame *f)
{
	const m_node *nd = &m->node[n];

	memset(f, 0, sizeof *f);
	if (nd->flags & FMT_NODEF_INLINED)
		f->flags |= SYMDB_FRAME_INLINED;
	if (nd->flags & FMT_NODEF_HAS_LOW_PC) {
		f->start_addr = f->dwarf_start_addr = nd->low_pc + m->base;
		f->flags |= SYMDB_FRAME_HAS_START | SYMDB_FRAME_HAS_DWARF_START;
	}
	if (nd->function != FMT_NONE) {
		const m_fn *fn;
		if (nd->function >= m->nfn)
			return -1;
		fn = &m->fn[nd->function];
		if (m_str(m, fn->linkage, &f->name) || m_str(m, fn->name, &f->short_name) ||
		    m_filepath(m, fn->decl_file, &f->decl_file, &f->decl_file_rel))
			return -1;
		f->decl_line = fn->decl_line;
	}
	if (inner) {
		if (m_filepath(m, inner->call_file, &f->file, &f->file_rel))
			return -1;
		f->line = inner->call_line;
		f->column = inner->call_col;
		f->discriminator = inner->call_discr;
		if (inner->call_file != FMT_NONE)
			f->flags |= SYMDB_FRAME_HAS_LINE;
	} else if (row) {
		if (m_filepath(m, row->v, &f->file, &f->file_rel))
			return -1;
		f->line = row->line;
		f->column = row->col;
		f->discriminator = row->discr;
		f->flags |= SYMDB_FRAME_HAS_LINE;
	}
	return 0;
}

static void naive(const model *m, uint64_t a, want *w)
{
	int64_t sym = -1, j, k;
	const m_ival *row = NULL;
	uint32_t n = FMT_NONE, c = 0;
	const m_node *inner = NULL;

	memset(w, 0, sizeof *w);
	w->status = SYMDB_E_NOT_FOUND;
	if (a == SYMDB_ADDR_INVALID || a < m->base)
		return;
	uint64_t o = a - m->base;
	for (uint32_t i = 0; i < m->nsym && m->sym[i].addr <= o; i++)
		sym = i;
	if (sym >= 0 && m->sym[sym].size && o - m->sym[sym].addr >= m->sym[sym].size)
		sym = -1;
	j = last_le(m->imap, m->nimap, o);
	if (j >= 0)
		n = m->imap[j].v;
	k = last_le(m->row, m->nrow, o);
	if (k >= 0 && m->row[k].v != FMT_NONE)
		row = &m->row[k];
	if (sym < 0 && n == FMT_NONE && !row)
		return;
	w->status = SYMDB_E_CORRUPT;
	while (n != FMT_NONE) {
		if (n >= m->nnode || c >= 64 || naive_frame(m, n, inner, row, &w->f[c]))
			return;
		inner = &m->node[n];
		if (inner->parent != FMT_NONE && inner->parent >= n)
			return;
		n = inner->parent;
		c++;
	}
	if (c == 0) {
		memset(&w->f[0], 0, sizeof w->f[0]);
		if (row) {
			if (m_filepath(m, row->v, &w->f[0].file, &w->f[0].file_rel))
				return;
			w->f[0].line = row->line;
			w->f[0].column = row->col;
			w->f[0].discriminator = row->discr;
			w->f[0].flags |= SYMDB_FRAME_HAS_LINE;
		}
		c = 1;
	}
	if (sym >= 0) {
		if (m->sym[sym].name >= m->strs.n)
			return;
		w->sym_name = (const char *)m->strs.p + m->sym[sym].name;
		w->sym_addr = m->sym[sym].addr + m->base;
		w->sym_size = m->sym[sym].size;
		w->f[c - 1].name = w->sym_name;
		w->f[c - 1].start_addr = w->sym_addr;
		w->f[c - 1].flags |= SYMDB_FRAME_FROM_SYMTAB | SYMDB_FRAME_HAS_START;
	}
	w->status = 0;
	w->count = c;
}

/* ---- comparison --------------------------------------------------------- */

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_frame(const symdb_frame *a, const symdb_frame *b)
{
	return same_str(a->name, b->name) && same_str(a->short_name, b->short_name) &&
	       same_str(a->file, b->file) && same_str(a->file_rel, b->file_rel) &&
	       same_str(a->decl_file, b->decl_file) &&
	       same_str(a->decl_file_rel, b->decl_file_rel) && a->flags == b->flags &&
	       (!(a->flags & SYMDB_FRAME_HAS_START) || a->start_addr == b->start_addr) &&
	       (!(a->flags & SYMDB_FRAME_HAS_DWARF_START) ||
	        a->dwarf_start_addr == b->dwarf_start_addr) &&
	       a->line == b->line && a->column == b->column &&
	       a->discriminator == b->discriminator && a->decl_line == b->decl_line;
}

static int mismatches;

static void compare(const model *m, uint64_t a, const symdb_result *r, const symdb_frame *frames)
{
	want w;
	uint32_t i;
	int ok;

	naive(m, a, &w);
	ok = r->status == w.status && r->count == w.count && same_str(r->sym_name, w.sym_name) &&
	     (!w.sym_name || (r->sym_addr == w.sym_addr && r->sym_size == w.sym_size));
	for (i = 0; ok && i < w.count; i++)
		ok = same_frame(&frames[r->first + i], &w.f[i]);
	if (!ok && mismatches++ < 5)
		fprintf(stderr, "address 0x%llx: got status %d count %u, want status %d count %u\n",
		        (unsigned long long)a, r->status, r->count, w.status, w.count);
	CHECK(ok);
}

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

/* Resolve the batch with capacity `cap`, resuming until done. */
static void run_batch(const model *m, const symdb_image *img, const uint64_t *a, size_t n,
                      size_t cap)
{
	symdb_frame *frames = malloc(cap * sizeof *frames);
	symdb_result *res = malloc(n * sizeof *res);
	size_t done = 0, i;
	ptrdiff_t got;

	while (done < n) {
		got = symdb_resolve_batch(img, a + done, n - done, frames, cap, res + done);
		if (got <= 0) {
			CHECK(got > 0);
			break;
		}
		for (i = done; i < done + (size_t)got; i++)
			compare(m, a[i], &res[i], frames);
		done += (size_t)got;
	}
	free(frames);
	free(res);
}

static void test_random(unsigned aw, uint64_t base, int far, uint64_t seed)
{
	sizes sz = { 300, 6, 30, 60, 400, 500, far };
	model m;
	symdb_image *img;
	uint64_t *a;

	rng_state = seed;
	fprintf(stderr, "test_random aw=%u base=0x%llx far=%d seed=0x%llx\n", aw,
	        (unsigned long long)base, far, (unsigned long long)seed);
	gen_model(&m, &sz, aw, base);
	img = open_model(&m);
	if (img) {
		CHECK(symdb_image_verify(img, NULL, 0) == 0);
		a = gen_batch(&m, 5000);
		run_batch(&m, img, a, 5000, 5000 * 64);
		run_batch(&m, img, a, 5000, 40); /* resumes many times */
		free(a);
	}
	symdb_image_close(img);
	free_model(&m);
}

/* Damage records so that some lookups must come back CORRUPT. */
static void test_corrupt(uint64_t seed)
{
	sizes sz = { 300, 6, 30, 60, 400, 500, 0 };
	char eb[256];
	model m;
	symdb_image *img;
	uint64_t *a;
	int round;

	for (round = 0; round < 5; round++) {
		rng_state = seed + (uint64_t)round;
		gen_model(&m, &sz, 4, 0x400000);
		switch (round) {
		case 0: m.node[17].parent = 17; m.node[40].parent = 55; break; /* cycles */
		case 1: m.node[5].function = m.nfn; m.imap[7].v = m.nnode + 3; break;
		case 2: m.sym[9].name = (uint32_t)m.strs.n; m.sym[10].name = 0x7fffffff; break;
		case 3: m.row[11].v = m.nfile; m.fn[3].decl_file = m.nfile + 9; break;
		case 4: m.fn[4].name = (uint32_t)m.strs.n + 1; m.node[8].call_file = 77; break;
		}
		img = open_model(&m);
		if (img) {
			CHECK(symdb_image_verify(img, eb, sizeof eb) == SYMDB_E_CORRUPT);
			a = gen_batch(&m, 5000);
			run_batch(&m, img, a, 5000, 5000 * 64);
			free(a);
		}
		symdb_image_close(img);
		free_model(&m);
	}
}

/* Random byte damage anywhere past the header and directory: open may
 * accept the file (contents are checked lazily), and then resolving and
 * verifying must stay inside the mapping (ASan builds check) and every
 * result must be well formed. */
static void test_flips(uint64_t seed)
{
	sizes sz = { 200, 6, 30, 60, 300, 300, 0 };
	size_t len, i, first = FMT_HEADER_SIZE + 11 * FMT_DIR_ENTRY_SIZE, cap = 2000 * 64;
	symdb_frame *fr = malloc(cap * sizeof *fr);
	symdb_result *r = malloc(2000 * sizeof *r);
	unsigned round, opened = 0, corrupt = 0;
	model m;
	uint8_t *f, *g;
	uint64_t *a;

	rng_state = seed;
	gen_model(&m, &sz, 4, 0x400000);
	f = model_bytes(&m, &len);
	g = malloc(len);
	a = gen_batch(&m, 2000);
	for (round = 0; round < 300; round++) {
		symdb_image *img;
		unsigned k, nflip = 1 + (unsigned)rnd_below(4);
		memcpy(g, f, len);
		for (k = 0; k < nflip; k++)
			g[first + rnd_below(len - first)] ^= (uint8_t)(1 + rnd_below(255));
		img = open_bytes(g, len, 1);
		if (!img)
			continue;
		opened++;
		(void)symdb_image_verify(img, NULL, 0);
		CHECK(symdb_resolve_batch(img, a, 2000, fr, cap, r) == 2000);
		for (i = 0; i < 2000; i++) {
			CHECK(r[i].status == 0 || r[i].status == SYMDB_E_NOT_FOUND ||
			      r[i].status == SYMDB_E_CORRUPT);
			CHECK(r[i].first + r[i].count <= cap);
			corrupt += r[i].status == SYMDB_E_CORRUPT;
		}
		symdb_image_close(img);
	}
	fprintf(stderr, "test_flips: %u/300 damaged files opened, %u corrupt results\n", opened,
	        corrupt);
	free(a); free(f); free(g); free(fr); free(r);
	free_model(&m);
}

/* Hand-checked cases: 4 GiB gaps, frames_cap, unsorted input, chains. */
static void test_fixed(void)
{
	sizes sz = { 0, 2, 3, 3, 0, 0, 0 };
	model m;
	symdb_image *img;
	symdb_frame fr[8];
	symdb_result r[4];
	uint64_t a[4];

	rng_state = 42;
	gen_model(&m, &sz, 8, 0x10000);
	free(m.sym);
	free(m.imap);
	free(m.row);
	m.fn[0].linkage = synth_str(&m.strs, "_Z4fn0v");
	m.fn[1].linkage = synth_str(&m.strs, "_Z4fn1v");
	m.fn[2].linkage = synth_str(&m.strs, "_Z4fn2v");
	m.sym = calloc(3, sizeof *m.sym);
	m.nsym = 3;
	m.sym[0] = (m_sym){ 0x1000, 0x10, synth_str(&m.strs, "low") };
	m.sym[1] = (m_sym){ 0x200001000ull, 0, synth_str(&m.strs, "high") };
	m.sym[2] = (m_sym){ 0x300000000ull, 0x20, synth_str(&m.strs, "top") };
	/* node 0 = outer(fn0), node 1 = inlined fn1 into 0, node 2 = fn2 into 1 */
	m.node[0] = (m_node){ FMT_NONE, 0, FMT_NONE, 0, 0, 0, 0, FMT_NODEF_HAS_LOW_PC, 0x1002 };
	m.node[1] = (m_node){ 0, 1, 1, 11, 3, 0, 1, FMT_NODEF_INLINED, 0 };
	m.node[2] = (m_node){ 1, 2, 0, 22, 4, 1, 2, FMT_NODEF_INLINED, 0 };
	m.imap = calloc(2, sizeof *m.imap);
	m.nimap = 2;
	m.imap[0] = (m_ival){ 0x1004, 2, 0, 0, 0 };
	m.imap[1] = (m_ival){ 0x1008, FMT_NONE, 0, 0, 0 };
	m.row = calloc(2, sizeof *m.row);
	m.nrow = 2;
	m.row[0] = (m_ival){ 0x1000, 1, 99, 7, 0 };
	m.row[1] = (m_ival){ 0x1010, FMT_NONE, 0, 0, 0 };
	m.end = 0x300000100ull;
	img = open_model(&m);
	if (!img)
		return;
	CHECK(symdb_image_verify(img, NULL, 0) == 0);
	a[0] = 0x10000 + 0x1005;          /* 3-frame chain */
	a[1] = 0x10000 + 0x100000000ull;  /* past "low" (size 0x10): nothing */
	a[2] = 0x10000 + 0x200001234ull;  /* "high", size 0: to the next */
	a[3] = 0x10000 + 0x300000020ull;  /* just past "top" */
	CHECK(symdb_resolve_batch(img, a, 4, fr, 8, r) == 4);
	CHECK(r[0].status == 0 && r[0].count == 3);
	CHECK(fr[0].name && strcmp(fr[0].name, "_Z4fn2v") == 0 && fr[0].line == 99);
	CHECK(fr[0].file && strcmp(fr[0].file, "/src/dir/f1.c") == 0);
	CHECK(fr[1].line == 22 && fr[1].column == 4 && strcmp(fr[1].file, "/src/dir/f0.c") == 0);
	CHECK(fr[2].line == 11 && strcmp(fr[2].name, "low") == 0 &&
	      (fr[2].flags & SYMDB_FRAME_FROM_SYMTAB) && !(fr[2].flags & SYMDB_FRAME_INLINED));
	CHECK(fr[2].short_name && strcmp(fr[2].short_name, "fn0") == 0);
	CHECK(fr[2].start_addr == 0x11000 && (fr[0].flags & SYMDB_FRAME_INLINED));
	CHECK((fr[2].flags & SYMDB_FRAME_HAS_DWARF_START) && fr[2].dwarf_start_addr == 0x11002);
	CHECK(!(fr[0].flags & SYMDB_FRAME_HAS_DWARF_START));
	CHECK(r[1].status == SYMDB_E_NOT_FOUND && r[1].count == 0);
	CHECK(r[2].status == 0 && r[2].count == 1 && strcmp(r[2].sym_name, "high") == 0);
	CHECK(fr[r[2].first].name == r[2].sym_name && !(fr[r[2].first].flags & SYMDB_FRAME_HAS_LINE));
	CHECK(r[3].status == SYMDB_E_NOT_FOUND);
	/* frames_cap: 3 frames needed, 2 available -> nothing done -> INVAL. */
	CHECK(symdb_resolve_batch(img, a, 4, fr, 2, r) == SYMDB_E_INVAL);
	/* ...but the not-found address before it fits. */
	CHECK(symdb_resolve_batch(img, a + 1, 3, fr, 1, r) == 3);
	a[0] = 0x10000 + 0x1000; /* one frame */
	a[1] = 0x10000 + 0x1005; /* three */
	CHECK(symdb_resolve_batch(img, a, 2, fr, 3, r) == 1);
	CHECK(symdb_resolve_batch(img, a, 2, fr, 4, r) == 2);
	a[0] = 5; a[1] = 3;
	CHECK(symdb_resolve_batch(img, a, 2, fr, 8, r) == SYMDB_E_UNSORTED);
	CHECK(symdb_resolve_batch(img, a, 0, NULL, 0, r) == 0);
	CHECK(symdb_resolve_batch(NULL, a, 1, fr, 8, r) == SYMDB_E_INVAL);
	symdb_image_close(img);
	free_model(&m);
}

static void test_translate(void)
{
	sizes sz = { 10, 2, 3, 3, 10, 10, 0 };
	model m;
	symdb_image *img;
	uint64_t in[5], out[5];

	rng_state = 7;
	gen_model(&m, &sz, 4, 0x400000);
	img = open_model(&m);
	if (!img)
		return;
	in[0] = 0x10; in[1] = 0x1010; in[2] = 0x5000; in[3] = 0xfff; in[4] = SYMDB_ADDR_INVALID;
	CHECK(symdb_image_translate(img, SYMDB_ADDR_FILEOFF, 0, in, out, 5) == 0);
	CHECK(out[0] == 0x400010 && out[1] == 0x402010 && out[2] == SYMDB_ADDR_INVALID);
	CHECK(out[3] == 0x400fff && out[4] == SYMDB_ADDR_INVALID);
	CHECK(symdb_image_translate(img, SYMDB_ADDR_OFFSET, 0, in, out, 2) == 0);
	CHECK(out[0] == 0x400010 && out[1] == 0x401010);
	in[0] = 0x7f0000001234; in[1] = 0x10;
	CHECK(symdb_image_translate(img, SYMDB_ADDR_RUNTIME, 0x7f0000000000, in, in, 2) == 0);
	CHECK(in[0] == 0x401234 && in[1] == SYMDB_ADDR_INVALID);
	CHECK(symdb_image_translate(img, SYMDB_ADDR_VADDR, 0, in, out, 1) == 0 && out[0] == in[0]);
	CHECK(symdb_image_translate(img, (enum symdb_addr_kind)9, 0, in, out, 1) == SYMDB_E_INVAL);
	symdb_image_close(img);
	free_model(&m);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Throughput on a larger image, resolving 1M sorted addresses in chunks of
 * 64 Ki (as a profiler would).  Reported for information, never asserted. */
static void bench(void)
{
	sizes sz = { 100000, 500, 20000, 50000, 200000, 500000, 0 };
	size_t n = 1000000, chunk = 65536, cap = chunk * 8, done = 0, nframes = 0;
	model m;
	symdb_image *img;
	uint64_t *a;
	symdb_frame *fr;
	symdb_result *r;
	ptrdiff_t got;
	double t0, t1;

	rng_state = 0xbe4c4;
	gen_model(&m, &sz, 4, 0x400000);
	img = open_model(&m);
	a = gen_batch(&m, n);
	fr = malloc(cap * sizeof *fr);
	r = malloc(chunk * sizeof *r);
	if (img && fr && r) {
		t0 = now();
		while (done < n) {
			size_t k = n - done < chunk ? n - done : chunk;
			got = symdb_resolve_batch(img, a + done, k, fr, cap, r);
			if (got <= 0)
				break;
			nframes += r[got - 1].first + r[got - 1].count;
			done += (size_t)got;
		}
		t1 = now();
		CHECK(done == n);
		fprintf(stderr, "bench: %zu sorted addresses (%zu frames) over %u symbols / %u inline"
		        " / %u line intervals: %.1f ms, %.0f ns/address\n", n, nframes, m.nsym,
		        m.nimap, m.nrow, (t1 - t0) * 1e3, (t1 - t0) * 1e9 / (double)n);
	}
	free(a);
	free(fr);
	free(r);
	symdb_image_close(img);
	free_model(&m);
}

int main(void)
{
	test_fixed();
	test_translate();
	test_random(4, 0x400000, 0, 0x5eed0001);
	test_random(4, 0, 0, 0x5eed0002);
	test_random(8, 0x7f0000000000ull, 1, 0x5eed0003);
	test_random(8, 0, 1, 0x5eed0004);
	test_corrupt(0x5eed0100);
	test_flips(0x5eed0200);
	if (!getenv("SYMDB_NO_BENCH"))
		bench();
	return check_exit();
}
