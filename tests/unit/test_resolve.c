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
 * damaged address must come back SYMDB_E_CORRUPT, and only those).  The
 * model lives in rd_model.h (bench/bench_synth.c times the library on it;
 * tests never measure time).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rd_model.h"
#include "symdb.h"
#include "symdb_endian.h"

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

/* Resolve the batch with capacity `cap`, resuming until done. */
static void run_batch(const model *m, const symdb_image *img, const uint64_t *a, size_t n,
                      size_t cap)
{
	symdb_frame *frames = malloc(cap * sizeof *frames);
	symdb_result *res = malloc(n * sizeof *res);
	size_t done = 0, i;
	ptrdiff_t got;

	while (done < n) {
		got = symdb_resolve_batch(img, a + done, n - done, frames, cap, sizeof(symdb_frame),
		                          res + done, sizeof(symdb_result));
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
		CHECK(symdb_image_verify(img, NULL) == 0);
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
			CHECK(symdb_image_verify(img, EB_OPTS(eb, sizeof eb)) == SYMDB_E_CORRUPT);
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
		(void)symdb_image_verify(img, NULL);
		CHECK(symdb_resolve_batch(img, a, 2000, fr, cap, sizeof(symdb_frame),
		                          r, sizeof(symdb_result)) == 2000);
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
	CHECK(symdb_image_verify(img, NULL) == 0);
	a[0] = 0x10000 + 0x1005;          /* 3-frame chain */
	a[1] = 0x10000 + 0x100000000ull;  /* past "low" (size 0x10): nothing */
	a[2] = 0x10000 + 0x200001234ull;  /* "high", size 0: to the next */
	a[3] = 0x10000 + 0x300000020ull;  /* just past "top" */
	CHECK(symdb_resolve_batch(img, a, 4, fr, 8, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == 4);
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
	CHECK(symdb_resolve_batch(img, a, 4, fr, 2, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == SYMDB_E_INVAL);
	/* ...but the not-found address before it fits. */
	CHECK(symdb_resolve_batch(img, a + 1, 3, fr, 1, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == 3);
	a[0] = 0x10000 + 0x1000; /* one frame */
	a[1] = 0x10000 + 0x1005; /* three */
	CHECK(symdb_resolve_batch(img, a, 2, fr, 3, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == 1);
	CHECK(symdb_resolve_batch(img, a, 2, fr, 4, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == 2);
	a[0] = 5; a[1] = 3;
	CHECK(symdb_resolve_batch(img, a, 2, fr, 8, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == SYMDB_E_UNSORTED);
	CHECK(symdb_resolve_batch(img, a, 0, NULL, 0, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == 0);
	CHECK(symdb_resolve_batch(NULL, a, 1, fr, 8, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == SYMDB_E_INVAL);
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

int main(void)
{
	/* Every test on both majors a reader reads: format 1's records and
	 * format 2's packed tables (SPEC §7.9) must answer alike. */
	for (model_major = FMT_V1_MAJOR; model_major <= FMT_VERSION_MAJOR; model_major++) {
		test_fixed();
		test_translate();
		test_random(4, 0x400000, 0, 0x5eed0001);
		test_random(4, 0, 0, 0x5eed0002);
		test_random(8, 0x7f0000000000ull, 1, 0x5eed0003);
		test_random(8, 0, 1, 0x5eed0004);
		test_corrupt(0x5eed0100);
		test_flips(0x5eed0200);
	}
	return check_exit();
}
