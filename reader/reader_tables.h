/* SPDX-License-Identifier: MIT */
/*
 * reader_tables.h - one record of FUNCTIONS, INLINE_NODES, INLINE_MAP or
 * LINE_ROWS, decoded the same way whatever the file's major: fixed-offset
 * records in format 1 (SPEC §7.4-§7.6), bit-packed fields in format 2
 * (§7.9).  The resolve loop reads the DWARF tables through these alone, so
 * it has one code path above them.  Each accessor is a bounded number of
 * fixed-width loads; none allocates.
 *
 * FUNCTIONS and INLINE_NODES are read through an rd_tab, made per call of
 * the lookup or verifier: in format 2 it holds their packed headers, parsed
 * and checked there (SPEC §7.9.1), not at open, so that open reads no table
 * page.  Indexes passed in must be below the rd_tab's counts (the callers
 * check: they come from the file).  Values read out are untrusted: the caller
 * bounds-checks every index before use, as for format 1.
 */
#ifndef SYMDB_READER_TABLES_H
#define SYMDB_READER_TABLES_H

#include "format_pack.h"
#include "reader_internal.h"
#include "symdb_endian.h"

/* An INLINE_NODES record in two parts: what its own frame needs, and its
 * call site, which the frame outside it needs (SPEC §11.5).  Depth is for
 * the verifier only (rd_node_depth). */
typedef struct rd_node {
	uint32_t parent;   /* node index or FMT_NONE; == own index if damaged */
	uint32_t function;
	uint16_t flags;
	uint64_t low_pc;   /* offset from Base_Address, with HAS_LOW_PC */
} rd_node;

typedef struct rd_call {
	uint32_t file, line, column, discr;
} rd_call;

/* FILES records a lookup decoded lately, by index (file_paths in
 * reader_resolve.c): direct-mapped, an entry valid when its idx matches. */
#define RD_FCACHE_SIZE 64
typedef struct rd_fcache {
	uint32_t idx[RD_FCACHE_SIZE];      /* FMT_NONE: empty */
	const char *path[RD_FCACHE_SIZE], *rel[RD_FCACHE_SIZE];
} rd_fcache;

/* FUNCTIONS and INLINE_NODES as one lookup reads them. */
typedef struct rd_tab {
	const symdb_image *img;
	uint64_t nfns, nnodes; /* 0 when a format-2 header is damaged */
	fmt_packed fns, nodes; /* format 2 */
	rd_fcache *fc;         /* the lookup's FILES cache; NULL: none */
} rd_tab;

/* Fill *t for img: O(fields), the two packed headers.  A damaged header
 * makes its table empty, so every reference to it is out of range
 * (SYMDB_E_CORRUPT for the address); *why (optional) says which. */
static inline void rd_tab_init(rd_tab *t, const symdb_image *img, const char **why)
{
	const fmt_table *f = &img->v.t[FMT_T_FUNCTIONS], *n = &img->v.t[FMT_T_INLINE_NODES];
	const char *w = NULL;

	t->img = img;
	t->fc = NULL;
	t->nfns = img->nfns;
	t->nnodes = img->nnodes;
	if (!img->packed || !img->v.has_dwarf)
		return;
	if (fmt_packed_parse(f->p, f->length, f->count, FMT_PF_COUNT, FMT_PF_WIDE, &t->fns, &w))
		t->nfns = 0;
	if (fmt_packed_parse(n->p, n->length, n->count, FMT_PN_COUNT, FMT_PN_WIDE, &t->nodes, &w))
		t->nnodes = 0;
	if (why)
		*why = w;
}

typedef struct rd_fn {
	uint32_t linkage, name, decl_file, decl_line;
} rd_fn;

typedef struct rd_row {
	uint32_t file, line, column, discr;
} rd_row;

/* INLINE_NODES[n]'s own part, n < tb->nnodes. */
static inline void rd_node_get(const rd_tab *tb, uint32_t n, rd_node *o)
{
	const symdb_image *img = tb->img;

	if (img->packed) {
		const fmt_packed *t = &tb->nodes;
		uint32_t d = fmt_packed_get32(t, n, FMT_PN_PARENT_DISTANCE);
		/* A distance past the first node is damage: the parent is
		 * then the node itself, which the chain walk rejects. */
		o->parent = d == 0 ? FMT_NONE : d > n ? n : n - d;
		o->function = fmt_packed_index(t, n, FMT_PN_FUNCTION);
		o->flags = (uint16_t)fmt_packed_get32(t, n, FMT_PN_FLAGS);
		o->low_pc = o->flags & FMT_NODEF_HAS_LOW_PC ? fmt_packed_get(t, n, FMT_PN_LOW_PC) : 0;
		return;
	}
	const uint8_t *r = img->nodes + (uint64_t)n * FMT_NODE_SIZE;
	o->parent = fmt_be32(r + FMT_NODE_PARENT);
	o->function = fmt_be32(r + FMT_NODE_FUNCTION);
	o->flags = fmt_be16(r + FMT_NODE_FLAGS);
	o->low_pc = fmt_be64(r + FMT_NODE_LOW_PC);
}

/* Start loading the line at p: a prefetch that GCC 12 keeps (at -O3 it
 * deleted __builtin_prefetch from the lookup, whose insn has no output;
 * a volatile asm stays). */
static inline void rd_prefetch(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p);
#endif
}

/* Start loading INLINE_NODES[n]'s record, n < tb->nnodes, where the
 * lookup learns n before it decodes the record (the node an inline search
 * found, a Parent): in a large C++ image the records of a chain are far
 * apart, each a cache miss that would otherwise start only when the walk
 * reaches it. */
static inline void rd_node_prefetch(const rd_tab *tb, uint32_t n)
{
	const symdb_image *img = tb->img;

	if (img->packed)
		rd_prefetch(tb->nodes.rec + (((uint64_t)n * tb->nodes.bits) >> 3));
	else
		rd_prefetch(img->nodes + (uint64_t)n * FMT_NODE_SIZE);
}

/* INLINE_NODES[n]'s call site, n < tb->nnodes. */
static inline void rd_node_call(const rd_tab *tb, uint32_t n, rd_call *o)
{
	const symdb_image *img = tb->img;

	if (img->packed) {
		const fmt_packed *t = &tb->nodes;
		o->file = fmt_packed_index(t, n, FMT_PN_CALL_FILE);
		o->line = fmt_packed_get32(t, n, FMT_PN_CALL_LINE);
		o->column = fmt_packed_get32(t, n, FMT_PN_CALL_COLUMN);
		o->discr = fmt_packed_get32(t, n, FMT_PN_CALL_DISCR);
		return;
	}
	const uint8_t *r = img->nodes + (uint64_t)n * FMT_NODE_SIZE;
	o->file = fmt_be32(r + FMT_NODE_CALL_FILE);
	o->line = fmt_be32(r + FMT_NODE_CALL_LINE);
	o->column = fmt_be32(r + FMT_NODE_CALL_COLUMN);
	o->discr = fmt_be32(r + FMT_NODE_CALL_DISCR);
}

/* INLINE_NODES[n]'s Depth, n < tb->nnodes. */
static inline unsigned rd_node_depth(const rd_tab *tb, uint32_t n)
{
	if (tb->img->packed)
		return (uint16_t)fmt_packed_get32(&tb->nodes, n, FMT_PN_DEPTH);
	return fmt_be16(tb->img->nodes + (uint64_t)n * FMT_NODE_SIZE + FMT_NODE_DEPTH);
}

/* FUNCTIONS[i], i < tb->nfns (the Die_Offset is not needed to answer). */
static inline void rd_fn_get(const rd_tab *tb, uint32_t i, rd_fn *o)
{
	const symdb_image *img = tb->img;

	if (img->packed) {
		const fmt_packed *t = &tb->fns;
		o->linkage = fmt_packed_get32(t, i, FMT_PF_LINKAGE_NAME);
		o->name = fmt_packed_get32(t, i, FMT_PF_NAME);
		o->decl_file = fmt_packed_index(t, i, FMT_PF_DECL_FILE);
		o->decl_line = fmt_packed_get32(t, i, FMT_PF_DECL_LINE);
		return;
	}
	const uint8_t *r = img->fns + (uint64_t)i * FMT_FN_SIZE;
	o->linkage = fmt_be32(r + FMT_FN_LINKAGE_NAME);
	o->name = fmt_be32(r + FMT_FN_NAME);
	o->decl_file = fmt_be32(r + FMT_FN_DECL_FILE);
	o->decl_line = fmt_be32(r + FMT_FN_DECL_LINE);
}

/* Block k of the inline (lines = 0) or line interval table, validated. */
static inline int rd_block(const symdb_image *img, int lines, uint64_t k, fmt_block *b)
{
	return lines ? fmt_block_get(img->laddr, img->rows, img->rows_len, img->nrows, k, b)
	             : fmt_block_get(img->iaddr, img->imap, img->imap_len, img->nimap, k, b);
}

/* Row r of a valid line block as a LINE_ROWS record. */
static inline void rd_block_row(const fmt_block *b, unsigned r, rd_row *o)
{
	o->file = fmt_nullable(b->base_index, fmt_block_raw(b, FMT_BC_INDEX, r));
	o->line = (uint32_t)(b->base_line + fmt_block_raw(b, FMT_BC_LINE, r));
	o->column = (uint32_t)(b->base_column + fmt_block_raw(b, FMT_BC_COLUMN, r));
	o->discr = (uint32_t)fmt_block_raw(b, FMT_BC_DISCR, r);
}

/* LINE_ROWS[k], k < img->nrows.  Returns 0, or -1 when its block is
 * damaged. */
static inline int rd_row_get(const symdb_image *img, uint64_t k, rd_row *o)
{
	if (img->packed) {
		fmt_block b;
		if (rd_block(img, 1, k / FMT_BLK_ROWS, &b))
			return -1;
		rd_block_row(&b, (unsigned)(k % FMT_BLK_ROWS), o);
		return 0;
	}
	const uint8_t *r = img->rows + k * FMT_ROW_SIZE;
	o->file = fmt_be32(r + FMT_ROW_FILE);
	o->line = fmt_be32(r + FMT_ROW_LINE);
	o->column = fmt_be32(r + FMT_ROW_COLUMN);
	o->discr = fmt_be32(r + FMT_ROW_DISCR);
	return 0;
}

/* INLINE_MAP[j], j < img->nimap: a node index or FMT_NONE; -1 when its
 * block is damaged. */
static inline int rd_imap_get(const symdb_image *img, uint64_t j, uint32_t *node)
{
	if (img->packed) {
		fmt_block b;
		if (rd_block(img, 0, j / FMT_BLK_ROWS, &b))
			return -1;
		*node = fmt_nullable(b.base_index, fmt_block_raw(&b, FMT_BC_INDEX,
		                                                 (unsigned)(j % FMT_BLK_ROWS)));
		return 0;
	}
	*node = fmt_be32(img->imap + j * FMT_IMAP_SIZE);
	return 0;
}

/* The start of interval j (offset from Base_Address) of the inline (lines
 * = 0) or line table; -1 when its block is damaged. */
static inline int rd_interval_start(const symdb_image *img, int lines, uint64_t j, uint64_t *a)
{
	if (img->packed) {
		fmt_block b;
		if (rd_block(img, lines, j / FMT_BLK_ROWS, &b))
			return -1;
		*a = b.first + fmt_block_raw(&b, FMT_BC_DELTA, (unsigned)(j % FMT_BLK_ROWS));
		return 0;
	}
	*a = fmt_be_addr(lines ? img->laddr : img->iaddr, img->aw, j);
	return 0;
}

#endif /* SYMDB_READER_TABLES_H */
